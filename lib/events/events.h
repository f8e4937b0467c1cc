/* events.h - internal view of a parsed event: what the event grammar produces and the
 * engine, regions and sampling consume. The public side is tacho.h section 3. */
#ifndef TACHO_EVENTS_EVENTS_H
#define TACHO_EVENTS_EVENTS_H

#include <linux/perf_event.h>

#include "util/util.h"

/* Where an event comes from; decides how `tacho list` groups it, how the scheduler
 * places it (hardware events compete for counters, the rest do not) and how a
 * failure to open it is explained. */
enum tc_event_source {
	TC_EV_HARDWARE,     /* generic hardware (cycles, instructions, ...) */
	TC_EV_CACHE,        /* generic cache events (L1-dcache-load-misses, ...) */
	TC_EV_SOFTWARE,     /* kernel software events (task-clock, page-faults, ...) */
	TC_EV_PFM,          /* CPU-specific, through libpfm4 */
	TC_EV_RAW,          /* rNNNN */
	TC_EV_PMU,          /* pmu/term=value,.../ through sysfs formats, or pmu/alias/ */
	TC_EV_TRACEPOINT,   /* subsystem:name */
	TC_EV_BREAKPOINT,   /* mem:ADDR[/LEN][:rwx] */
};

struct tc_event {
	char *name;                  /* as the user wrote it, modifiers included */
	enum tc_event_source source;
	struct perf_event_attr attr; /* complete but for the engine's own fields
					(read_format, disabled, inherit, sample_*) */
	char *pmu;                   /* the PMU's sysfs name ("cpu", "software", "msr", ...) */
	const char *unit;            /* "" or a unit ("msec" for the clocks, "Joules", ...) */
	double scale;                /* multiply counts by this for the unit (1.0 usually) */
	bool uses_counter;           /* needs a general-purpose hardware counter */
	bool fixed_counter;          /* may live on a fixed counter instead (cycles, ...) */
};

#endif
