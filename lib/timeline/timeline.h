/* timeline.h - the inside of tacho trace shared by its recording, its loader and its
 * writers: the clock conversion, a loaded trace, the delta statistics. */
#ifndef TACHO_TIMELINE_INT_H
#define TACHO_TIMELINE_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/payload.h"
#include "util/util.h"
#include "tacho/timeline.h"

/* TSC ticks to the samples' clock: exact, with the kernel's time_zero, time_mult and
 * time_shift (the samples then carry perf's own clock), or, where the kernel offers no
 * conversion (a KVM guest whose sched_clock is kvm-clock), CLOCK_MONOTONIC_RAW for
 * the samples (use_clockid) and a line through two (TSC, CLOCK_MONOTONIC_RAW) anchors
 * read back to back: the first at the start, the second at each drain, so that every
 * mark converted lies between them. */
struct tc_trace_clock {
	bool exact;
	uint32_t mult;
	uint16_t shift;
	uint64_t zero;
	uint64_t tsc0, ns0;            /* the anchors of the line */
	double ns_per_tick;
	uint64_t bracket_ns;           /* the widest bracket of an anchor (its uncertainty) */
};
/* Takes a (TSC, CLOCK_MONOTONIC_RAW) anchor: the tightest of a few brackets. Returns the
 * bracket's width in ns. */
uint64_t tc_trace_clock_anchor(uint64_t *tsc, uint64_t *ns);
uint64_t tc_trace_clock_ns(const struct tc_trace_clock *c, uint64_t tsc);

enum tc_tl_kind {
	TC_TL_MARK = 1,     /* the values of enum tc_trace_kind */
	TC_TL_BEGIN = 2,
	TC_TL_END = 3,
	TC_TL_COUNTER = 4,
	TC_TL_EVENT = 5,    /* an event of -e */
};

struct tc_tl_item {
	uint64_t time;      /* ns, perf's clock */
	uint64_t value;
	uint32_t pid, tid, cpu;
	uint32_t chan;      /* index into channels */
	uint32_t kind;      /* enum tc_tl_kind */
	uint32_t event;     /* an event's index in the file (its payload's decoder) */
	uint64_t raw_off;   /* its payload: raw_size bytes at payloads.buf + raw_off */
	uint32_t raw_size;  /* 0: none */
};

struct tc_tl_channel {
	const char *name;   /* in names */
	uint32_t kind;      /* the kind of its first item (TC_TL_BEGIN for regions) */
	uint64_t count;     /* items, span ends not counted */
};

struct tc_tl_thread {
	uint32_t pid, tid;
	char comm[32];
};

struct tacho_timeline {
	struct tc_tl_item *items;      /* sorted by time (stable) once loaded */
	size_t n, a;
	struct tc_strpool names;       /* channel i is name id i */
	struct tc_tl_channel *ch;
	size_t nch, ach;
	uint32_t *area_chan;           /* the file's channel index -> channel */
	size_t narea;
	uint32_t *event_chan;          /* the file's event index -> channel */
	size_t nevent;
	struct tc_tl_thread *threads;
	size_t nthreads, athreads;
	uint64_t ring_full, no_ring, no_channel, lost;
	/* the producers' waits for room (tacho trace --ring-full wait: its META
	 * trace-ring-full says "wait") and the nanoseconds they took */
	bool wait_full;
	uint64_t waits, waited_ns;
	/* lost by channel: the kernel's ring of each CPU (its LOST records' CPU), and
	 * those no record told (due by the count, never arrived: TC_LOST_NO_CPU); they
	 * sum to lost */
	uint64_t *lost_cpu;
	size_t nlost_cpu;
	uint64_t lost_nocpu;
	/* the damage tacho found in the area (the program wrote over it): entries and
	 * names refused, rings given up, the header overwritten */
	uint64_t damaged_entries, damaged_rings, damaged_header;
	bool truncated, finished, clock_known;
	bool traced;              /* written by tacho trace (its trace-clock META) */
	struct tc_sb notes;
	struct tc_payload *payload;    /* the tracepoints' decoders (NULL: no format) */
	struct tc_sb payloads;         /* the payloads' bytes, each 8-aligned */
	bool after_sample;             /* the record just read was an event's sample */
	uint32_t sched_switch, sched_wakeup;   /* the file's events, UINT32_MAX: none */
	uint32_t sched_wakeup_new;
	/* the recording as a profile, for the string constants behind system calls' string
	 * arguments (NULL: no payloads, or loaded from memory) */
	struct tacho_profile *prof;
};

/* The payload of item it: 0 and its bytes, -ENOENT when it has none. */
static inline int tc_tl_raw(const struct tacho_timeline *t, const struct tc_tl_item *it,
			    const void **raw, size_t *size)
{
	if (!it->raw_size)
		return -ENOENT;
	*raw = t->payloads.buf + it->raw_off;
	*size = it->raw_size;
	return 0;
}

/* Scheduling as thread states, from sched_switch (the previous task leaves the CPU in
 * prev_state, the next one runs) and sched_wakeup/sched_wakeup_new (a task becomes
 * runnable). A state of a traced thread from begin to end (timeline-sched.c). */
enum tc_tl_state {
	TC_TL_RUNNING = 1,
	TC_TL_RUNNABLE,     /* woken, or preempted (prev_state R): waiting for a CPU */
	TC_TL_SLEEPING,     /* S: waiting for an event */
	TC_TL_BLOCKED,      /* D: uninterruptible (usually I/O) */
	TC_TL_OTHER,        /* stopped, traced, dead, idle, parked: letter says which */
};
struct tc_tl_slice {
	uint32_t pid, tid;
	enum tc_tl_state state;
	char letter;        /* the kernel's letter for prev_state: R S D T t X Z P I */
	uint64_t begin, end;
};
/* The thread states of t's threads (those the trace names), ordered by their begin; a
 * state is known from a thread's first switch or wake-up on, and its last one lasts to
 * the end of the trace (but a dead thread's, X or Z, is not given). 0 and *out (free it; NULL with *n 0 when the trace has no sched_switch
 * payloads), -ENOMEM. */
int tc_timeline_states(const struct tacho_timeline *t, struct tc_tl_slice **out, size_t *n);
/* The name of a state ("running", "runnable", "sleeping", "blocked (D)", ...). */
const char *tc_tl_state_name(enum tc_tl_state s, char letter, char *buf, size_t size);

/* An arrow between two items (timeline-flow.c), for the views that draw them. */
enum tc_tl_flow_kind {
	TC_TL_FLOW_WAKEUP = 1,   /* a sched_wakeup(_new) to the sched_switch that runs it */
	TC_TL_FLOW_HANDOFF,      /* a mark to another thread's next mark of its value */
};
struct tc_tl_flow {
	size_t from, to;         /* items of t */
	enum tc_tl_flow_kind kind;
};
/* The arrows of t in the order of their kinds, then of their starts: each thread's
 * first wake-up since it last left a CPU to the next switch to it (with sched_switch
 * and sched_wakeup payloads), and, among the first 12 mark channels, for each ordered
 * pair A, B that no thread marks both of (a producer's and a consumer's: enqueue and
 * dequeue), each A to the next B of its value. An item
 * starts at most one arrow and ends at most one, never both. 0 and *out (free it; NULL
 * with *n 0 when there are none), -ENOMEM, -TACHO_EOUTOFRANGE (2^32 items or more). */
int tc_timeline_flows(const struct tacho_timeline *t, struct tc_tl_flow **out, size_t *n);

/* Loads a trace from len bytes at data (a fuzz target's seam; not copied). */
int tc_timeline_load_mem(const void *data, size_t len, const char *name,
			 struct tacho_timeline **out, struct tacho_diag *diag);

/* The statistics of a list of time differences in ns. */
struct tc_tl_delta {
	uint32_t from, to;             /* channels; from == to: within a channel */
	bool by_value;                 /* to the next B with the same value as the A (an
					  item's id: how long that item took from A to B) */
	uint64_t count;
	uint64_t min, max;
	double median, mean, p99;
};
/* Every delta row of t: each channel with two items or more, then, among the first 12
 * channels that are not spans, each ordered pair with at least one A followed by a B,
 * and, for pairs of mark channels, the same to the next B of the same value.
 * 0 and *out (free it), -ENOMEM. */
int tc_timeline_deltas(const struct tacho_timeline *t, struct tc_tl_delta **out, size_t *n);

/* --- the summary: system calls and scheduling latency (timeline-summary.c) --- */

/* One completed system call: a sys_enter and the sys_exit that followed it on its
 * thread (raw_syscalls:sys_enter/sys_exit, or syscalls:sys_enter_X/sys_exit_X). */
struct tc_tl_call {
	uint32_t pid, tid;
	char name[32];      /* "write"; "syscall_N" where the number has no name here */
	uint64_t ns;        /* exit's time less enter's */
	int64_t ret;        /* the exit's ret: -4095..-1 is an error, -errno */
};
struct tc_tl_errno {
	int err;            /* positive: ENOENT's number */
	uint64_t count;
};
/* A thread's calls of one system call. */
struct tc_tl_syscall {
	uint32_t pid, tid;
	char name[32];
	uint64_t count, errors;
	struct tc_tl_errno *errnos;    /* the errors by errno, the most frequent first */
	size_t nerrnos;
	uint64_t total, min, max;      /* ns */
	double mean, p50, p99;
	uint64_t thread_calls;         /* all calls of its thread (the rows' order) */
};
struct tc_tl_syscalls {
	struct tc_tl_syscall *rows;    /* by thread (the busiest first), then by total */
	size_t n;
	uint64_t unpaired;             /* enters and exits without their pair */
};
/* Groups calls (reordered in place) per thread and system call with their statistics.
 * 0 and *out (tc_tl_syscalls_exit), -ENOMEM. */
int tc_tl_syscalls_of(struct tc_tl_call *calls, size_t n, struct tc_tl_syscalls *out);
/* The system calls of t: its sys_enter/sys_exit pairs, grouped so. 0 and *out (all 0
 * without such events), -ENOMEM. */
int tc_timeline_syscalls(const struct tacho_timeline *t, struct tc_tl_syscalls *out);
void tc_tl_syscalls_exit(struct tc_tl_syscalls *s);
/* The name of system call nr on x86-64 (NULL: none known). */
const char *tc_syscall_name(uint64_t nr);

/* A scheduling event, as the latency walk reads it. */
enum tc_tl_sched_kind { TC_TL_SWITCH = 1, TC_TL_WAKEUP, TC_TL_WAKEUP_NEW };
struct tc_tl_sched_ev {
	uint64_t time;
	enum tc_tl_sched_kind kind;
	uint32_t tid;       /* the wakee; a switch's previous task */
	uint32_t next;      /* a switch's next task */
	uint64_t prev_state;        /* a switch's: 0 (R) or 0x100 (R+) preempted, still
				       runnable; S, D... (timeline-sched.c's bits) left */
};
/* A thread's delays from being woken to running. */
struct tc_tl_sched_lat {
	uint32_t pid, tid;
	uint64_t count;     /* wake-ups followed by the switch to the thread */
	uint64_t total, max, max_at;   /* ns; max_at: the time of the switch that ended it */
	double mean;
};
/* Walks n scheduling events in time order: a wake-up of a thread that left its CPU to
 * sleep (a switch away in a state other than R) or of a new one (wakeup_new) opens a
 * delay, the next switch to it closes it. A wake-up of a thread not yet seen to leave
 * its CPU opens none (it may be running). Rows by tid, pid 0; 0 and *out (free it),
 * -ENOMEM. */
int tc_tl_sched_latency_of(const struct tc_tl_sched_ev *ev, size_t n,
			   struct tc_tl_sched_lat **out, size_t *nout);
/* The latencies of t's threads from its sched_switch and sched_wakeup(_new) payloads,
 * the largest max first. 0 and *out (free it; NULL with *n 0 without them), -ENOMEM. */
int tc_timeline_sched_latency(const struct tacho_timeline *t, struct tc_tl_sched_lat **out,
			      size_t *n);

/* The summary's views (summary-write.c): the system calls and the scheduling latency
 * as text sections (with only: "nothing to summarize" when the trace has neither), and
 * as the members "syscalls", "syscalls_unpaired" and "sched_latency" of the trace's
 * JSON object. 0, -ENOMEM. */
struct tc_tl_summary {
	struct tc_tl_syscalls calls;
	struct tc_tl_sched_lat *lat;
	size_t nlat;
};
/* 0 and *s (tc_tl_summary_exit), -ENOMEM. */
int tc_tl_summary_get(const struct tacho_timeline *t, struct tc_tl_summary *s);
void tc_tl_summary_exit(struct tc_tl_summary *s);
struct tc_json;
int tc_tl_text_summary(const struct tacho_timeline *t, FILE *f, bool only);
void tc_tl_json_summary(const struct tacho_timeline *t, const struct tc_tl_summary *s,
			struct tc_json *j);
/* The events lost, by channel, in words: "cpu0 12, cpu1 3, 4 on no known CPU" (empty
 * when none were). */
const char *tc_tl_lost_words(const struct tacho_timeline *t, char *buf, size_t size);
/* For the writers (timeline-write.c): a thread's name ("?" unknown), "1.234 ms". */
const char *tc_tl_comm(const struct tacho_timeline *t, uint32_t tid);
const char *tc_tl_fmt_ns(double ns, char *buf, size_t size);

#endif
