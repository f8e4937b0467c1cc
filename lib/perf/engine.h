/* engine.h - the perf_event engine (docs/architecture.md, "One engine"). An event owns
 * its file descriptors over a grid of CPUs x threads, its place in a group, the ids the
 * kernel gave its descriptors, its mmap pages, its ioctls and its read, with the choice
 * between the RDPMC fast path and read(2) inside it. A list holds such events: it opens
 * them over one grid, group by group, enables and reads them all with a status per
 * value, maps one ring per CPU and polls and drains them, and reads a one-thread group
 * on the hot path of regions. Learnt from libperf's perf_evsel and perf_evlist.
 *
 * Counting (tacho_counters), the measurement set of regions and the harness, sampling
 * (tacho_record), the TSC's look at the kernel's conversion page, the doctor's probes
 * and tacho list's probe all stand on this. Nothing here hands a caller a descriptor:
 * callers get values, statuses, records and poll readiness.
 *
 * Objects are not thread-safe: one thread at a time per object. */
#ifndef TACHO_PERF_ENGINE_H
#define TACHO_PERF_ENGINE_H

#include <linux/perf_event.h>
#include <sys/types.h>

#include "perf/perf.h"
#include "perf/ring.h"
#include "tacho/counters.h"

/* --- the grid: where an event is opened ---
 * ncpus x nthreads cells; cell (c, t) is c * nthreads + t. A CPU of -1 is "whichever
 * CPU the thread runs on", a thread of -1 "every task on that CPU", a thread of 0 the
 * calling thread. */
struct tc_perf_grid {
	int *cpus;
	size_t ncpus;
	pid_t *threads;
	size_t nthreads;
};

/* Copies the arrays: NULL (or n 0) cpus means { -1 }, NULL threads { -1 }. A CPU
 * below -1, a thread below -1, or -1 on both sides (the kernel has no "every task on
 * every CPU") is -EINVAL. 0, -EINVAL, -ENOMEM. */
int tc_perf_grid_init(struct tc_perf_grid *g, const int *cpus, size_t ncpus,
		      const pid_t *threads, size_t nthreads);
void tc_perf_grid_exit(struct tc_perf_grid *g);   /* NULL-safe, idempotent */

/* --- how an event is opened ---
 * The engine owns these fields of every attr it opens: read_format (TOTAL_TIME_ENABLED
 * | TOTAL_TIME_RUNNING | ID, and GROUP with TC_PERF_GROUP_READ), disabled (set on the
 * descriptor that leads its group on a cell, clear on members, so that enabling the
 * leader starts the group at once), enable_on_exec (leaders, with the flag), inherit
 * (the flag) and size. */
#define TC_PERF_INHERIT        0x1u  /* follow the threads and processes the targets
					create after the open */
#define TC_PERF_ENABLE_ON_EXEC 0x2u  /* leaders start when the target calls exec: not
					one instruction of the launcher is counted */
#define TC_PERF_GROUP_READ     0x4u  /* one read(2) gives a whole group
					(PERF_FORMAT_GROUP) */
#define TC_PERF_SKIP_GONE      0x8u  /* a thread that ended since it was listed (ESRCH)
					leaves its cells closed, without an error */
#define TC_PERF_CGROUP        0x10u  /* perf's cgroup mode (PERF_FLAG_PID_CGROUP): the
					grid's threads are descriptors of cgroup
					directories of the perf_event hierarchy (the
					caller's: the kernel takes its own reference at the
					open, so they may be closed after it), each cell
					counts that cgroup's tasks on its CPU; every CPU of
					the grid must be >= 0; not with INHERIT or
					ENABLE_ON_EXEC */

/* One event summed over the cells where it is open, under the one rule (perf.h). */
struct tc_perf_count {
	uint64_t raw;                    /* the kernel's counts, summed */
	uint64_t enabled, running;       /* nanoseconds, summed */
	double value;                    /* COUNTED: raw; MULTIPLEXED: each cell's count
					    scaled by its own times, summed; else NAN */
	double coverage;                 /* running / enabled; 1 counted, 0 without value */
	enum tacho_count_status status;  /* NOT_SUPPORTED: open nowhere; NOT_COUNTED:
					    time running 0, or eof, or a silent source */
	bool eof;                        /* a cell read end-of-file: a pinned event in error
					    state (it counted nothing there) */
	int err;                         /* -TACHO_ESILENT: the event's source is proven not
					    to count on this machine (verify.c); else 0 */
	const char *why;                 /* then: the proof's sentence (static); else NULL */
};

/* --- an event --- */
struct tc_perf_ev;

/* A closed event for a copy of attr (the caller's attr is full-size: public entry
 * points copy theirs with tc_perf_attr_copy first); name (copied, may be NULL) is for
 * messages. 0, -ENOMEM. Free with tc_perf_ev_free, which closes it. */
int tc_perf_ev_new(const struct perf_event_attr *attr, const char *name, struct tc_perf_ev **out);
void tc_perf_ev_free(struct tc_perf_ev *e);

/* Puts e in leader's group, after the members it already has; both closed, leader not
 * itself a member. On every cell e is opened into the first descriptor of the group
 * that is open there: a leader that could not open leaves the next member leading the
 * rest (reported, never dropped). 0 or -EINVAL. */
int tc_perf_ev_set_leader(struct tc_perf_ev *e, struct tc_perf_ev *leader);

const char *tc_perf_ev_name(const struct tc_perf_ev *e);   /* "" when none */
/* The attr as given (after fallbacks the engine took, such as dropping build_id). */
const struct perf_event_attr *tc_perf_ev_attr(const struct tc_perf_ev *e);

/* Opens e on every cell of g (copied) with flags TC_PERF_*; a member opens after its
 * leader, on the same grid (-EINVAL for TC_PERF_CGROUP with a CPU of -1, INHERIT or
 * ENABLE_ON_EXEC). A cell where the kernel refuses stays closed and the first
 * refusal is kept (tc_perf_ev_error): the call itself fails only for bad arguments or
 * memory. Kernel differences it absorbs: build_id side-band records (Linux 5.12) are
 * dropped where refused. Returns 0; 1 when the kernel refuses group reads of inherited
 * events (before Linux 5.13): e is then closed, and the caller opens everything again
 * without TC_PERF_GROUP_READ; -EINVAL, -ENOMEM. */
int tc_perf_ev_open(struct tc_perf_ev *e, const struct tc_perf_grid *g, unsigned flags);
/* Closes every descriptor and unmaps its pages; the error is forgotten. NULL-safe. */
void tc_perf_ev_close(struct tc_perf_ev *e);

/* Cells where e is open. */
size_t tc_perf_ev_nopen(const struct tc_perf_ev *e);
/* Why e's source is proven not to count on this machine (asked when e was opened,
 * tc_source_silent), or NULL: e then reads NOT_COUNTED whatever the kernel says, and
 * its samples, if it samples, are none. */
const char *tc_perf_ev_silent(const struct tc_perf_ev *e);
/* Whether e's group can never lose its place on the PMU: every member's PMU is one of
 * the kernel's software-context PMUs (software, tracepoint, breakpoint, kprobe,
 * uprobe), whose add never fails, so that the group counts whenever its task or CPU
 * runs and its raw count is whole whatever its times say. A group with any other
 * member is scheduled with the hardware PMU's and may be multiplexed. */
bool tc_perf_ev_never_rotates(const struct tc_perf_ev *e);
/* Whether an event of PMU type (attr.type) is of one of those PMUs. A dynamic PMU's
 * name is looked up in sysfs: ask once per event, not per read. */
bool tc_perf_type_never_rotates(uint32_t type);
/* The first refusal of the open (negative errno), or 0; with *flags (TC_EXPLAIN_*)
 * and *attr, the attributes as they were sent (either may be NULL): what the explainer
 * needs. */
int tc_perf_ev_error(const struct tc_perf_ev *e, unsigned *flags, struct perf_event_attr *attr);

/* Enable, disable, zero: for a group's leader, the whole group on every cell (one ioctl
 * with PERF_IOC_FLAG_GROUP where the group is open); for a member, itself. 0 or the
 * first -errno (the other cells are still done). */
int tc_perf_ev_enable(struct tc_perf_ev *e);
int tc_perf_ev_disable(struct tc_perf_ev *e);
int tc_perf_ev_reset(struct tc_perf_ev *e);
/* A new sampling period on every cell (PERF_EVENT_IOC_PERIOD). 0 or the first -errno. */
int tc_perf_ev_set_period(struct tc_perf_ev *e, uint64_t period);

/* Maps the first page (struct perf_event_mmap_page) of every open cell. Mapping it is
 * also what lets the kernel allow RDPMC for this process on x86. 0 or the first -errno
 * (cells whose page cannot be mapped are read with read(2)). */
int tc_perf_ev_map_pages(struct tc_perf_ev *e);

/* Reads e on every open cell and sums under the one rule. A cell whose page is mapped
 * and allows it is read with RDPMC (times brought up to now); otherwise read(2). 0 or
 * -errno of read(2) (-EIO for a short read). */
int tc_perf_ev_read(struct tc_perf_ev *e, struct tc_perf_count *out);

/* --- a list of events over one grid --- */
struct tc_perf_list;

/* 0 and an empty list, or -ENOMEM. Free with tc_perf_list_free (closes everything). */
int tc_perf_list_new(struct tc_perf_list **out);
void tc_perf_list_free(struct tc_perf_list *l);

/* Adds an event (attr copied, name copied). group >= 0: one perf group with the
 * earlier events of the same number, the first of them leading; TACHO_GROUP_NONE:
 * alone. Returns the event's index, or -EINVAL (after the open), -ENOMEM. */
int tc_perf_list_add(struct tc_perf_list *l, const struct perf_event_attr *attr,
		     const char *name, int group);
size_t tc_perf_list_count(const struct tc_perf_list *l);
/* The event at index i (owned by the list), NULL out of range. */
struct tc_perf_ev *tc_perf_list_event(const struct tc_perf_list *l, size_t i);

/* Opens every event over g (copied), group by group, as tc_perf_ev_open does. Where the
 * kernel refuses group reads of inherited events it opens everything again without
 * TC_PERF_GROUP_READ, and says so at level info. 0 (events that the kernel refused
 * keep their error), -EINVAL, -ENOMEM. */
int tc_perf_list_open(struct tc_perf_list *l, const struct tc_perf_grid *g, unsigned flags);
/* The flags in force after the open (TC_PERF_GROUP_READ gone after that fallback). */
unsigned tc_perf_list_flags(const struct tc_perf_list *l);
/* The grid it was opened on; NULL before. */
const struct tc_perf_grid *tc_perf_list_grid(const struct tc_perf_list *l);

/* Every group (one ioctl per group and cell, PERF_IOC_FLAG_GROUP). 0 or the first
 * -errno. */
int tc_perf_list_enable(struct tc_perf_list *l);
int tc_perf_list_disable(struct tc_perf_list *l);
int tc_perf_list_reset(struct tc_perf_list *l);

/* Reads every event into out[0 .. count-1], each summed over its cells under the one
 * rule: a group with one read(2) per cell where opened with TC_PERF_GROUP_READ, its
 * values mapped back to the members by id (whatever order the kernel lists them in).
 * An event open nowhere reads NOT_SUPPORTED. No allocation. 0 or -errno of read(2). */
int tc_perf_list_read(struct tc_perf_list *l, struct tc_perf_count *out);

/* The index of the event that owns the kernel id (the id field of a sample), or -1. */
int tc_perf_list_event_of_id(const struct tc_perf_list *l, uint64_t id);

/* Rings: one per CPU of the grid (data_pages, a power of two, of data each). The first
 * descriptor open on a CPU owns its ring; every other one on that CPU writes into it
 * (PERF_EVENT_IOC_SET_OUTPUT), whatever the number of events and threads. 0, or -errno
 * with *bad (may be NULL) the event whose descriptor could not be mapped (*sharing
 * false) or redirected (*sharing true); -EINVAL for a data_pages that is not a power
 * of two. */
int tc_perf_list_mmap(struct tc_perf_list *l, unsigned data_pages, size_t *bad, bool *sharing);
size_t tc_perf_list_nrings(const struct tc_perf_list *l);
/* Waits up to timeout_ms (-1: no limit) for records in any ring, or for one of the
 * caller's nextra descriptors extra[] (at most TC_PERF_POLL_EXTRA; -1 for none) to be
 * readable; revents[i] gets extra[i]'s revents. A ring whose events are all gone
 * (POLLHUP, POLLERR) is not polled again. Returns poll(2)'s count (0 on timeout), or
 * -errno (-EINTR included; -EINVAL for too many extras). */
#define TC_PERF_POLL_EXTRA 2
int tc_perf_list_poll(struct tc_perf_list *l, int timeout_ms, const int *extra, short *revents,
		      size_t nextra);
/* Delivers every record waiting in every ring to fn (tc_ring_drain). A ring found
 * inconsistent is reported at level warn and its unread records dropped; the others
 * are still drained. 0, or fn's first nonzero return. */
int tc_perf_list_drain(struct tc_perf_list *l, tc_ring_fn *fn, void *arg);

/* The hot path: a list of one group opened on one cell (the calling thread), read as
 * fast as this machine allows. hot_init maps every event's page and learns where each
 * one sits in the group's read. read_hot then takes, with no allocation and no lock,
 * one RDPMC per event when every open event's page allows it now, else one read(2)
 * of the group, else (events outside one group) one read(2) per event; v[i] is event
 * i's raw count, 0 where it is not open. 0, -EINVAL (not one cell), -ENOMEM; read_hot:
 * 0 or -errno of read(2). */
int tc_perf_list_hot_init(struct tc_perf_list *l);
int tc_perf_list_read_hot(struct tc_perf_list *l, uint64_t *v);

enum tc_perf_hot_path {
	TC_PERF_HOT_NONE = 0,      /* nothing open */
	TC_PERF_HOT_RDPMC,         /* every page allows RDPMC (read(2) when an event is
				      off its counter at that moment) */
	TC_PERF_HOT_GROUP_READ,    /* one read(2) of the group */
	TC_PERF_HOT_EVENT_READS,   /* one read(2) per event */
};
struct tc_perf_hot_state {
	enum tc_perf_hot_path path;
	bool multiplexed;          /* a read saw time_running < time_enabled */
	bool ran;                  /* a read saw time_running > 0: the events were on
				      their counters at some point (a group too big for the
				      PMU never is, and reads 0) */
	unsigned long reads_rdpmc, reads_syscall;
};
void tc_perf_list_hot_state(const struct tc_perf_list *l, struct tc_perf_hot_state *out);

/* --- a probe: one event opened, looked at, closed --- */

/* The fields of an event's first page that callers outside the engine need. */
struct tc_perf_page_info {
	bool cap_user_rdpmc;       /* RDPMC allowed for the event */
	uint32_t index;            /* its counter + 1; 0 when not on one now */
	uint16_t pmc_width;
	bool cap_user_time;        /* time_mult / time_shift convert TSC ticks to ns */
	uint32_t time_mult;
	uint16_t time_shift;
	bool cap_user_time_zero;   /* time_zero is valid */
	uint64_t time_zero;
};

/* Opens attr as given (size set) on the calling thread, any CPU; with page non-NULL,
 * maps its first page and copies the fields above under the page's seqlock; closes.
 * 0, or -errno of the open (or of the mapping). */
int tc_perf_probe(const struct perf_event_attr *attr, struct tc_perf_page_info *page);

/* Whether this kernel opens an inherited event with PERF_SAMPLE_READ (and _TID) in its
 * sample_type: Linux 6.12 and later do, and then never swap the contexts of two
 * threads of a process at a switch between them (kernel/events/core.c,
 * nr_no_switch_fast), which keeps each thread's counts on its own events; earlier
 * kernels refuse the open (EINVAL). Probed once per process with a disabled dummy
 * event; false when the probe cannot open at all. */
bool tc_perf_inherit_sample_read(void);

/* --- a hold: the kernel's set-up of an event kept across many opens and closes --- */

/* The first event of a kind makes the kernel set something up that the last one's
 * close takes down again: a software event's static key (the kernel patches its text,
 * tens of microseconds a key), a tracepoint's probe (its close waits for an RCU grace
 * period), the hardware PMU's reservation (on x86 the debug store's buffers of every
 * CPU). A session that opens and closes the same events once per run of a program
 * (stat -r N) paid that on every run: 0.5 ms a repetition for stat's six default
 * software events here. A hold opens one copy of each such event, disabled, on the
 * calling thread (it never counts, never takes a counter and never fires); while it
 * is open, every other open and close of that kind finds the set-up in place.
 *
 * Held: software events but cpu-clock and task-clock (timers, no static key),
 * tracepoints, and hardware, cache and raw events. Not held: breakpoints (each open
 * takes one of four debug registers), kprobes and uprobes (a new probe per event) and
 * the other PMUs. Each (type, config) is held once. Best effort: an event the kernel
 * refuses is simply not held. tc_perf_hold_open returns the number of events held
 * (0 too for n = 0 or none to hold), or -ENOMEM; *out is NULL when none is held. */
struct tc_perf_hold;
int tc_perf_hold_open(const struct perf_event_attr *const *attrs, size_t n,
		      struct tc_perf_hold **out);
void tc_perf_hold_close(struct tc_perf_hold *h);   /* NULL-safe */

#endif
