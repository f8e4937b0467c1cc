/* schedule.h - internal side of the counter scheduler (schedule.c): which events share
 * a run of the program and which share a perf group, given the counters the CPU has.
 * The public side is tacho.h section 4 ("4s. Scheduling"). */
#ifndef TACHO_PERF_SCHEDULE_H
#define TACHO_PERF_SCHEDULE_H

#include <linux/perf_event.h>

#include "util/util.h"

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

/* Builds a schedule from items directly (the tests' entry point; tacho_schedule_new
 * classifies an event list and calls this). 0, -ENOMEM or -EINVAL. */
int tc_schedule_build(const struct tc_sched_item *items, size_t n,
		      const struct tacho_pmu_counters *pmu, unsigned flags,
		      struct tacho_schedule **out);

/* libpfm4's count of the active core PMU's counters (schedule-pfm.c): 0 and the
 * numbers with libpfm4's PMU name, or -1 when libpfm4 knows no active core PMU. */
int tc_pfm_core_counters(unsigned *gp, unsigned *fixed, char *name, size_t size);

/* The kernel's core PMU in sysfs ("cpu", "cpu_core"/"cpu_atom" on hybrid parts):
 * true if root (NULL: /sys/bus/event_source/devices) has one. */
bool tc_sysfs_has_core_pmu(const char *root);

#endif
