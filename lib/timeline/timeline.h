/* timeline.h - the inside of tacho trace shared by its recording, its loader and its
 * writers: the clock conversion, a loaded trace, the delta statistics. */
#ifndef TACHO_TIMELINE_INT_H
#define TACHO_TIMELINE_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
