/* region-int.h - the state behind regions, shared by region.c (the hot path and set-up)
 * and region-report.c (merging and writing). */
#ifndef TACHO_MEASURE_REGION_INT_H
#define TACHO_MEASURE_REGION_INT_H

#include <pthread.h>
#include <stdarg.h>

#include "measure/region.h"

#define TC_REGION_MAXDEPTH 64
#define TC_REGION_NAME_SLOTS 64

/* One region on one thread: calls and one accumulator per quantity (q[0]: TSC ticks,
 * q[1 + i]: event i). */
struct tc_region_record {
	const char *name;         /* in the thread's names */
	uint64_t calls;
	struct tc_region_accumulator q[];
};

/* An open region: its record, how many region pairs ran nested inside it (their whole
 * cost is subtracted), and (in fvals) the values at begin and the sum of the
 * corrected inclusive values of its direct children. */
struct tc_region_frame {
	uint32_t rec;
	uint32_t desc;
};

/* The pointer cache: name pointer -> record. */
struct tc_region_name_slot {
	const char *name;
	uint32_t rec;
};

struct tc_region_thread {
	struct tc_region_thread *next;
	pid_t tid;
	size_t nq;                /* 1 + events */
	size_t nq_read;           /* nq, or 1 when this thread's counters failed */
	struct tc_measure_set m;
	int set_err;
	struct tc_region_record **recs;
	size_t nrec, arec;
	struct tc_strpool names;  /* name id i is record i's name */
	struct tc_region_name_slot pc[TC_REGION_NAME_SLOTS];
	unsigned depth;
	struct tc_region_frame frames[TC_REGION_MAXDEPTH];
	int64_t *fvals;           /* [MAXDEPTH][2][nq]: start values, children's sums */
	int64_t *snap, *snap2;    /* [nq] scratch for end and the guarded lookup */
	int64_t *cal_out;         /* calibration: where end() puts the raw deltas */
	unsigned long errors, unbalanced;
	unsigned long pc_misses;  /* lookups the pointer cache did not answer */
	bool gone;                /* the thread ended; its counters are closed */
	bool multiplexed, ran;    /* kept from the counters when they close */
};

struct tc_regions {
	pthread_mutex_t lock;
	bool ready;
	pid_t pid;
	bool report_at_exit;
	char *spec, *output;
	struct tc_event_set ev;
	size_t nq;
	int64_t *o_in;            /* [nq] cost a region sees of its own begin/end */
	int64_t *o_nested;        /* [nq] cost an enclosing region sees of a nested pair */
	bool calibrated, calibrated_counters;
	const char *read_path;
	int *ev_err;              /* [nq] (index 1 + i) why event i never opened, or 0 */
	char **ev_why;
	bool *ev_opened;          /* [nq] opened on at least one thread */
	bool open_failed_noted;
	struct tc_sb notes;
	struct tc_region_thread *threads;
	unsigned nthreads;
};

extern struct tc_regions tc_regions;

#endif
