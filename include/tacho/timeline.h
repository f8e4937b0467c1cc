/* tacho/timeline.h - libtacho's public interface: tracing a program (its marks, regions
 * and events of the grammar on one clock) and the views of a trace: a text timeline
 * with a delta table, Chrome Trace Event JSON, an SVG picture.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_TIMELINE_H
#define TACHO_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 9. Timelines: tacho trace
 * ================================================================================== */
/* A trace is a record file (docs/record-format.md) holding, besides the recording's
 * side-band, every event of -e (period 1: each occurrence a record, stamped by perf's
 * clock) and every mark, counter and region edge the program wrote (tacho/trace.h),
 * stamped with the TSC and converted to perf's clock exactly with the kernel's own
 * conversion (time_zero, time_mult and time_shift of the perf mmap page). docs/trace.md
 * tells how. */

/* Options (docs/architecture.md, "An API that can grow"): sz first. */
struct tacho_timeline_opts {
	size_t sz;                  /* sizeof(struct tacho_timeline_opts) */
	const char *events;         /* events of the grammar, each recorded at every
				       occurrence; NULL or "": marks and regions only */
	const char *output;         /* the trace file; NULL: "tacho.trace" */
	char *const *argv;          /* the program, NULL-terminated */
	unsigned flush_ms;          /* the longest time between writes to the file; 0: 100 */
	unsigned ring_entries;      /* entries of each thread's mark ring (a power of two);
				       0: 65536 */
	volatile int *stop;         /* as tacho_record_opts.stop */
	/* added after the first version (read only when sz covers them): */
	const pid_t *pids;          /* without argv: these running processes (every thread),
				       until all have ended or *stop */
	size_t npids;
	bool system_wide;           /* every CPU: the events of every task (with argv: while
				       the program runs, and its marks; without: until
				       *stop) */
	unsigned mmap_pages;        /* data pages of each kernel ring (a power of two), as
				       tacho_record_opts.mmap_pages; 0: its default */
	bool wait_full;             /* a thread whose mark ring is full waits for room
				       instead of dropping the mark (docs/trace.md, "A full
				       ring"): no mark lost, the program slowed by the
				       waits (counted in the result and the file) */
};

#define TACHO_TIMELINE_LOST_CPUS 256

/* What a trace recorded. Sized (docs/architecture.md, "An API that can grow"): the
 * caller sets sz (`struct tacho_timeline_result res = { .sz = sizeof(res) };`) and gets
 * the fields it covers. */
struct tacho_timeline_result {
	size_t sz;                  /* sizeof(struct tacho_timeline_result) */
	uint64_t marks;             /* marks, counters and region edges written */
	uint64_t events;            /* events of -e written */
	uint64_t dropped;           /* marks the program dropped (full ring, no ring or
				       channel left) */
	uint64_t events_lost;       /* events the kernel lost (its ring full) */
	uint64_t bytes;             /* size of the file */
	bool ran;
	struct tacho_exit exit;
	int exec_err;
	/* the damage tacho found in the program's trace area (the program wrote over it:
	 * a stray pointer), each refused and counted, never followed; all 0 in a trace of
	 * a program that did not (docs/trace.md, "A program that writes over its area") */
	uint64_t damaged_entries;   /* entries and channel names refused */
	uint64_t damaged_rings;     /* rings given up: their indexes could not be */
	uint64_t damaged_header;    /* 1: the area's header was overwritten */
	/* events_lost by channel: the kernel's ring of each CPU (events_lost_cpu[i] for
	 * CPU i, events_lost_cpu_more for CPUs TACHO_TIMELINE_LOST_CPUS and above), and
	 * those no LOST record told (the count says they were due: a ring still full at
	 * the end); they sum to events_lost */
	uint64_t events_lost_cpu[TACHO_TIMELINE_LOST_CPUS];
	uint64_t events_lost_cpu_more;
	uint64_t events_lost_unattributed;
	/* with wait_full: the times the program's threads waited for room in their rings,
	 * and the nanoseconds those waits took in all (the program ran that much longer) */
	uint64_t waits;
	uint64_t waited_ns;
};

/* Starts argv with a fresh shared-memory area (an anonymous memfd the program inherits,
 * TACHO_TRACE naming its descriptor: docs/trace.md), records its marks and the events
 * until it ends, and writes the trace file as it goes (a trace killed half-way reads up
 * to its last flush). What the program writes over its area is refused and counted in
 * the result's damaged_* fields, never followed. With pids instead of argv, the events of those
 * processes (they have no area: no marks); with system_wide, the events of every CPU.
 * Tracepoints carry their payloads (the format of each is kept in the file). 0;
 * -EINVAL (bad options: nothing to trace, argv with pids, an sz below the first
 * version); -TACHO_EVERSION (opts set a field past the struct this library knows: a
 * program built against a newer tacho.h; *diag says so); -TACHO_EPARSE and
 * the other errors of the grammar with *diag (its caret: tacho_diag_caret); -errno of
 * the file, the area or perf_event_open with *diag; -TACHO_ENOSTART with exec_err.
 * The result is written whatever happened. Not thread-safe against another trace. */
TACHO_API int tacho_timeline_record(const struct tacho_timeline_opts *opts,
				    struct tacho_timeline_result *res,
				    struct tacho_diag *diag);

/* A loaded trace: threads, channels and every item in time order. Handed out (opaque,
 * read through the functions below). */
struct tacho_timeline;

/* Loads the trace file at path. A file that ends early (a killed trace) loads up to its
 * last complete record and says so in its notes. With tracepoints that have string
 * arguments (a system call's file name), it also reads the recorded mappings, so that
 * the views show the strings that binaries' constants hold behind them (the binaries
 * are opened as the views need them). 0 and *out (tacho_timeline_free);
 * -errno of the file, -TACHO_ECORRUPT, -TACHO_EVERSION, -TACHO_ETRUNC with *diag;
 * -ENOMEM. */
TACHO_API int tacho_timeline_load(const char *path, struct tacho_timeline **out,
				  struct tacho_diag *diag);
TACHO_API void tacho_timeline_free(struct tacho_timeline *t);

/* Counts of a loaded trace: items on the channel called name (marks, counters, span
 * begins, events), over all threads, or only on thread tid (tid > 0). */
TACHO_API uint64_t tacho_timeline_count(const struct tacho_timeline *t, const char *name,
					int tid);

/* The items of a loaded trace (marks, counters, span edges, events); 0 for NULL. */
TACHO_API size_t tacho_timeline_items(const struct tacho_timeline *t);

/* Writes the text view (TACHO_FORMAT_TABLE: the timeline with time ticks, one row per
 * thread and channel, then the delta table), the delta table as CSV (from, to, by,
 * count, min_ns, median_ns, mean_ns, p99_ns, max_ns; from == to: within a channel,
 * else from each event of from to the next event of to (by "next") or to the next one
 * with the same value (by "value", for two mark channels: an item's id)) or JSON
 * (docs/schemas.md). 0, -EINVAL,
 * -EIO. Thread-safe on a trace nobody frees meanwhile. */
TACHO_API int tacho_timeline_write(const struct tacho_timeline *t, FILE *f,
				   enum tacho_format fmt, const struct tacho_write_opts *opts);

/* Writes Chrome's Trace Event Format (JSON object form; opens in Perfetto's UI and
 * chrome://tracing): one track per thread, regions as B/E spans, marks as instants with
 * their value in args, counters as C events, events of -e as instants, and each
 * sys_enter_X followed on its thread by sys_exit_X as one X span; tracepoint payloads'
 * fields in args; process_name and thread_name metadata; arrows (bind_id with flow_out
 * and flow_in, on X events of no duration) from a wake-up to the switch that runs the
 * thread and from a mark to another thread's next mark of its value (docs/trace.md).
 * ts in microseconds from the trace's first item. 0, -ENOMEM, -EIO. */
TACHO_API int tacho_timeline_write_chrome(const struct tacho_timeline *t, FILE *f);

/* Writes the summary in words: each thread's system calls from their sys_enter/sys_exit
 * pairs (raw_syscalls:sys_enter/sys_exit, or syscalls:sys_enter_X/sys_exit_X: calls,
 * errors by errno name, total, min, mean, p50, p99, max latency) and, with sched_switch
 * and sched_wakeup(_new) payloads, each thread's scheduling latency (wake-ups followed by
 * a switch to it, mean and max delay, when the max ended); one line when the trace has
 * neither (docs/trace.md, "Summary"). The JSON view (tacho_timeline_write) has the same
 * as "syscalls" and "sched_latency". 0, -EINVAL, -ENOMEM, -EIO. */
TACHO_API int tacho_timeline_write_summary(const struct tacho_timeline *t, FILE *f);

/* Writes the timeline as an SVG picture: a row per thread and channel, spans as bars,
 * marks and events as ticks, a time axis. 0, -EIO. */
TACHO_API int tacho_timeline_write_svg(const struct tacho_timeline *t, FILE *f);

/* Writes the timeline as one HTML page that needs nothing else (no network): the items
 * embedded as JSON and drawn on a canvas, a row per thread and channel, that zooms
 * (wheel, + and -), pans (drag, arrow keys) and tells the item under the pointer;
 * the page opens at #zoom=START,END (ns from the trace's first item) where the
 * address says so (docs/trace.md, "HTML"). 0, -EINVAL, -ENOMEM, -EIO. */
TACHO_API int tacho_timeline_write_html(const struct tacho_timeline *t, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_TIMELINE_H */
