/* schedule.h - internal side of the counter scheduler (schedule.c): which events share
 * a run of the program and which share a perf group, given the counters the CPU has.
 * Private since issue 28: the library plans, callers see the plan through a stat
 * session (tacho_stat_runs, tacho_stat_pmu_counters, each event's run and why). */
#ifndef TACHO_STAT_SCHEDULE_H
#define TACHO_STAT_SCHEDULE_H

#include <linux/perf_event.h>

#include "cpu/pmu-counters.h"
#include "util/util.h"
#include "tacho/events.h"
#include "tacho/stat.h"
#include "tacho/cpu.h"

/* A plan: nruns runs of the program, each with perf groups of event indices. */
struct tc_schedule;

/* Plans how to count every event of list with the counters pmu describes. Without
 * TACHO_SCHED_MULTIPLEX: first fit, in list order (cycles and instructions, and the
 * groups holding them, before the rest, so that they share the first run with the
 * clocks), into as few runs as keep every run within the counters, so nothing is
 * multiplexed; a {group} of the user stays one perf
 * group; the counter events of a run form one perf group (one read). An event or
 * group that can never fit (wider than the counters, a fixed-only event without its
 * fixed counter) is planned in no run, with a reason, and is never opened. With no
 * hardware PMU (pmu->none) or unknown counters, counter events are planned alone in
 * the first run, so that the kernel's refusal (explained by the engine) or its
 * multiplexing (with coverage) is what the user sees. 0 and *out (free it with
 * tc_schedule_free), -EINVAL or -ENOMEM. Thread-safe. */
int tc_schedule_new(const struct tacho_evlist *list,
		       const struct tacho_pmu_counters *pmu, unsigned flags,
		       struct tc_schedule **out);
void tc_schedule_free(struct tc_schedule *s);

/* What a plan amounts to (0 / NULL for NULL): its runs of the program, its events, and
 * the counters it was planned for (lives as long as s). Where each event goes is in the
 * stat session's results (tacho_stat_event's run and why). */
unsigned tc_schedule_nruns(const struct tc_schedule *s);
unsigned tc_schedule_nevents(const struct tc_schedule *s);
const struct tacho_pmu_counters *tc_schedule_counters(const struct tc_schedule *s);

/* The plan a stat session executed (stat.c); NULL for NULL. */
const struct tc_schedule *tc_stat_schedule(const struct tacho_stat *s);

/* What the scheduler needs of one event. */
enum tc_sched_kind {
	TC_SCHED_FREE = 0,     /* needs no counter of the core PMU: software, tracepoint,
	                        * msr, uprobe, uncore/other PMUs (they bring their own) */
	TC_SCHED_GP,           /* a general-purpose counter of the core PMU */
	TC_SCHED_FIXED_OR_GP,  /* fixed counter fixed_idx when it exists and is free, else
	                        * a general one (Intel: instructions 0, cycles 1, ref-cycles 2) */
	TC_SCHED_FIXED_ONLY,   /* fixed counter fixed_idx or nothing (ref-cycles: no
	                        * general-counter encoding on Intel; SDM 19.2.2 / 20.2.2) */
	TC_SCHED_BREAKPOINT,   /* one of the debug address registers DR0-DR3 */
};

struct tc_sched_item {
	enum tc_sched_kind kind;
	int fixed_idx;         /* for the FIXED kinds; else -1 */
	unsigned group;        /* user group number (1, 2, ...) whose members must share a
	                        * perf group; 0: not grouped by the user */
	bool first;            /* cycles or instructions: planned before the rest, so that
	                        * they share the first run with the clocks (IPC, GHz from
	                        * one execution) */
};

/* Classifies an event (its attr, where it comes from, its PMU's name) for the counters
 * described by pmu: which counter it needs (fixed counters only on a CPU whose fixed
 * counters have Intel's meaning). Pure. */
struct tc_sched_item tc_sched_classify(const struct perf_event_attr *attr,
				       enum tacho_event_source src, const char *pmu_name,
				       const struct tacho_pmu_counters *pmu);

/* Builds a schedule from items directly (the tests' entry point; tc_schedule_new
 * classifies an event list and calls this). 0, -ENOMEM or -EINVAL. */
int tc_schedule_build(const struct tc_sched_item *items, size_t n,
		      const struct tacho_pmu_counters *pmu, unsigned flags,
		      struct tc_schedule **out);

/* Where one event of the list goes. */
struct tc_sched_slot {
	int run;                 /* 0-based run of the program; -1: never scheduled */
	int group;               /* 0-based perf group within the run; -1 when unscheduled */
	bool fixed;              /* planned on a fixed counter */
	const char *why;         /* NULL when scheduled; else why it can never be counted
				    here (it is never opened), owned by the schedule */
};

/* Reading a plan's groups and slots (0 / NULL for out-of-range arguments): what
 * tacho_stat executes. Pointers live as long as s. */
unsigned tc_schedule_ngroups(const struct tc_schedule *s, unsigned run);
/* The event indices of one group, leader first; *n their number. */
const unsigned *tc_schedule_group(const struct tc_schedule *s, unsigned run, unsigned group,
				  unsigned *n);
const struct tc_sched_slot *tc_schedule_slot(const struct tc_schedule *s, unsigned ev);
/* Whether the descriptor limit (pmu.max_events) took part in spreading events over
 * runs (the counters may have too). */
bool tc_schedule_descriptor_bound(const struct tc_schedule *s);

#endif
