/* rdpmc.h - reading a counter from user space through its perf mmap page: the seqlock,
 * RDPMC, sign extension and the time scaling the kernel documents for
 * struct perf_event_mmap_page (include/uapi/linux/perf_event.h). */
#ifndef TACHO_PERF_RDPMC_H
#define TACHO_PERF_RDPMC_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

/* Maps the first page of a perf event (its struct perf_event_mmap_page, no ring
 * buffer), read-only. Mapping it is also what lets the kernel allow RDPMC for this
 * process on x86 (/sys/bus/event_source/devices/cpu/rdpmc = 1). 0 or -errno. */
int tc_perf_mmap_page(int fd, struct perf_event_mmap_page **out);
void tc_perf_munmap_page(struct perf_event_mmap_page *pg);

/* One read of a counter through its page. */
struct tc_pmc_value {
	uint64_t count;     /* raw count (offset + sign-extended PMC), not scaled */
	uint64_t scaled;    /* count * enabled / running when the event was multiplexed,
			       else count */
	uint64_t enabled;   /* time_enabled, brought up to now when the page allows */
	uint64_t running;   /* time_running, likewise */
	unsigned retries;   /* times the seqlock changed under the read */
	bool now;           /* enabled/running were brought up to now (cap_user_time) */
};

/* The reads that the arithmetic needs, as callbacks so that tests can drive it on a
 * synthetic page: rdpmc(counter) and rdtsc(). */
struct tc_pmc_ops {
	uint64_t (*rdpmc)(void *arg, uint32_t counter);
	/* NULL: enabled/running are the page's as the kernel last wrote them (now is
	 * false) and no clock is read. While the event is on its counter the kernel
	 * would add the same time to both, so running < enabled reads the same. */
	uint64_t (*rdtsc)(void *arg);
	/* called after each pass of the seqlock loop, before lock is read again; tests
	 * change the page here to force a retry. May be NULL. */
	void (*after_pass)(void *arg, unsigned pass);
	void *arg;
};

/* The user-space read the kernel documents for perf_event_mmap_page. Returns 0 with
 * *out; -EAGAIN when the page does not allow it (cap_user_rdpmc clear, or index 0: the
 * event is not on a counter now), and the caller must read() the fd; -EBUSY if the
 * seqlock kept changing for 1000 passes. Pure but for ops. */
int tc_pmc_read_page(const volatile struct perf_event_mmap_page *pg, const struct tc_pmc_ops *ops,
		     struct tc_pmc_value *out);

/* The real instructions, for tc_pmc_ops; _count without rdtsc, for hot paths that
 * need the count only (one RDPMC per read, no RDTSC). */
extern const struct tc_pmc_ops tc_pmc_ops_cpu;
extern const struct tc_pmc_ops tc_pmc_ops_cpu_count;

/* True if the page says RDPMC works for this event now. */
bool tc_pmc_page_rdpmc(const volatile struct perf_event_mmap_page *pg);

/* A counter read either way: through the page when it allows, else read(fd) with
 * read_format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING (no group). 0 or -errno;
 * *via_rdpmc says which path was taken. */
int tc_pmc_read(int fd, const volatile struct perf_event_mmap_page *pg, struct tc_pmc_value *out,
		bool *via_rdpmc);

#endif
