/* rdpmc.h - reading a counter from user space through its perf mmap page: the seqlock,
 * RDPMC, sign extension and the time scaling the kernel documents for
 * struct perf_event_mmap_page (include/uapi/linux/perf_event.h). */
#ifndef TACHO_PERF_RDPMC_H
#define TACHO_PERF_RDPMC_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

/* One read of a counter through its page. */
struct tc_pmc_value {
	uint64_t count;     /* raw count (offset + sign-extended PMC), not scaled: the
			       engine's one rule (tc_count_status) makes it a value */
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

#endif
