/* record-int.h - what the files of a recording session share: record.c runs it (the
 * file's start, the loop, the end), record-open.c sets it up (the events, how each
 * samples, the target, the open on the engine), record-drain.c writes what the rings
 * hold into the file and calibrates the periods. Private to lib/record; the contract
 * is tacho/record.h and record/record.h. */
#ifndef TACHO_RECORD_RECORD_INT_H
#define TACHO_RECORD_RECORD_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "record/recfile.h"
#include "record/record.h"
#include "record/sideband.h"
#include "tacho/events.h"
#include "tacho/record.h"
#include "tacho/run.h"
#include "util/util.h"

struct count_slot;
struct tc_offcpu;
struct tc_perf_sample;
struct tc_payload;
struct tc_bidcache;
struct tc_perf_list;

#define DEFAULT_FLUSH_MS 200
#define DEFAULT_CALIBRATE_MS 100
#define DEFAULT_RATE 1000
#define DEFAULT_STACK 8192       /* bytes of user stack per DWARF sample, as perf's */

/* An event as the session samples it. */
struct rec_event {
	char *name;
	struct perf_event_attr attr;
	enum tacho_event_source source;
	uint32_t flags;                 /* TC_EVF_* */
	bool calibrate;                 /* period to be chosen from the first window */
	uint64_t period;                /* fixed period, or frequency with TC_EVF_FREQ */
	uint64_t samples;               /* samples of this event written */
	char *format;                   /* TC_EVF_RAW: the tracepoint's format text */
	size_t format_len;
};

/* A recording session: its options and result, events, rings, file and target. */
struct session {
	const struct tacho_record_opts *o;
	struct tacho_record_result *res;
	struct rec_event *ev;
	size_t nev;
	struct tc_perf_list *list;      /* the engine's events, one ring per CPU */
	unsigned ring_pages;            /* data pages of each ring (ring_pages) */
	uint64_t sample_type;
	enum tacho_call_graph cg;       /* the call graph mode in effect */
	uint64_t regs_mask;             /* sample_regs_user (DWARF) */
	struct tc_record_writer w;
	struct tc_sideband side;
	struct tc_bidcache *seen;       /* mapped files, for the build-id cache */
	uint64_t kernel_samples;        /* samples taken in the kernel */
	struct tacho_child *child;
	bool child_mode;
	int pidfd;
	const struct tc_record_hooks *hooks;
	uint64_t unparsed;              /* sample records too short for their fields */
	struct tc_offcpu *offcpu;       /* --off-cpu: switches out held for their in */
	struct tc_payload *payload;     /* --off-cpu: sched_switch's format, for prev_state */
	size_t offcpu_ev;               /* --off-cpu: the index of "offcpu-time" */
	struct count_slot *counts;      /* PERF_SAMPLE_READ: last count per counter */
	size_t ncounts, counts_cap;     /* entries, slots (a power of two, or 0) */
	char msg[256];
};

/* --- record.c --- */
/* Says msg (the notify callback, else the log at info) and keeps it in s->msg. */
void tc_record_notify(struct session *s, const char *fmt, ...) TC_PRINTF(2, 3);

/* --- record-open.c --- */
/* The call graph mode and its parameters, checked. 0 or -EINVAL / -EOPNOTSUPP. */
int tc_record_setup_call_graph(struct session *s, struct tacho_diag *diag);
/* Phase 1: the events and how each one samples. 0 or -errno with *diag. */
int tc_record_setup_events(struct session *s, struct tacho_diag *diag);
/* Phase 2: every event on every cell of the grid, one ring per CPU. */
int tc_record_open_events(struct session *s, struct tacho_diag *diag);
/* The running processes recorded: opts.pid, or the hooks' list (tacho trace -p). */
size_t tc_record_target_pids(const struct session *s, const pid_t **pids);
/* Says the period each event samples with (or how it is chosen); the last line is the
 * result's choice. */
void tc_record_describe_choice(struct session *s);

/* --- record-drain.c --- */
/* Every ring's records into the file, then the hooks' drain. Nonzero when a write
 * failed. */
int tc_record_drain_all(struct session *s, bool final);
/* Sets the periods to calibrate from the counts so far (final: the last step, said). */
void tc_record_calibrate(struct session *s, bool final);
/* The losses no LOST record told, counted from the events' counts at period 1. */
void tc_record_account_unreported_lost(struct session *s);

/* --- record-offcpu.c --- */
/* A sample of "offcpu-time" (sched_switch, its raw payload and chain): held when
 * prev_state says the thread blocked, dropped when it was still runnable. */
void tc_record_offcpu_sample(struct session *s, uint32_t ev, const struct tc_perf_sample *smp);
/* A thread's switch back in (PERF_RECORD_SWITCH without SWITCH_OUT). */
void tc_record_offcpu_in(struct session *s, uint32_t tid, uint64_t time);
/* After a drain of every ring: each switch in with the thread's latest switch out
 * before it, written as a sample of event ev weighing the nanoseconds between them;
 * final: what is left unpaired is dropped and counted. */
void tc_record_offcpu_resolve(struct session *s, uint32_t ev, bool final);
/* Switches out dropped without a switch in. */
uint64_t tc_record_offcpu_unmatched(const struct session *s);
void tc_record_offcpu_free(struct session *s);

#endif
