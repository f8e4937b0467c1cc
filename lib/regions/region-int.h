/* region-int.h - the state behind regions, shared by region.c (the hot path and set-up)
 * and region-report.c (merging and writing). */
#ifndef TACHO_REGIONS_REGION_INT_H
#define TACHO_REGIONS_REGION_INT_H

#include <pthread.h>
#include <stdarg.h>

#include "regions/region.h"

#define TC_REGION_MAXDEPTH 64
#define TC_REGION_NAME_SLOTS 64   /* the pointer table's first size */

/* One region on one thread: calls and one accumulator per quantity (q[0]: TSC ticks,
 * q[1 + i]: event i). */
struct tc_region_record {
	const char *name;         /* in the thread's names */
	uint64_t calls;
	struct tc_region_accumulator q[];
};

/* A block of records (the thread's slabs). */
struct tc_region_slab {
	struct tc_region_slab *next;
	size_t n;                 /* records it holds */
	_Alignas(16) char mem[];
};

/* An open region: its record, how many region pairs ran nested inside it (their whole
 * cost is subtracted), the name pointer its begin was given (a fixed one lets the end
 * match it by the pointer alone), and (in fvals) the values at begin and the sum of the
 * corrected inclusive values of its direct children. */
struct tc_region_frame {
	struct tc_region_record *rec;   /* stable: records are allocated one by one */
	uint32_t desc;
	const char *fixed_name;   /* begin's pointer where it is fixed, else NULL */
};

/* The pointer table: name pointer -> record, open addressing. A fixed pointer lies in
 * a read-only segment of a loaded object (a string literal): its contents cannot
 * change, so the pointer alone names the record. Any other (a buffer) is confirmed
 * with a string compare, as it may be reused with new contents. */
struct tc_region_name_slot {
	const char *name;         /* NULL: empty */
	uint32_t rec;
	bool fixed;
};

/* The figures of threads that ended, merged by name when each ended (a region of a
 * process that starts many short threads costs one of these, not one per thread):
 * calls and the accumulator of each quantity (a thread without counters adds its calls
 * to the time only). */
struct tc_region_retired {
	const char *name;         /* in tc_regions.retired_names */
	uint64_t calls;
	unsigned threads;         /* threads that entered it */
	struct {
		uint64_t calls;
		struct tc_region_accumulator a;
	} q[];
};

/* A thread's state. Its owner writes its figures without a lock; the report reads them
 * under tc_regions.lock, a record's fields with TC_READ_ONCE inside the seqlock seq
 * (odd while end() updates a record), so that a snapshot holds whole calls. What may
 * move or grow (recs, nrec, names) changes only under tc_regions.lock. */
struct tc_region_thread {
	struct tc_region_thread *next;
	pid_t tid;
	unsigned seq;             /* even when no record is being updated */
	bool in_setup;            /* the thread holds tc_regions.lock (set-up, calibration) */
	size_t nq;                /* 1 + events */
	size_t nq_read;           /* nq, or 1 when this thread's counters failed */
	struct tc_measure_set m;
	int set_err;
	struct tc_region_record **recs;
	size_t nrec, arec;
	/* the records' storage: blocks of records, twice as many each time (to 4,096),
	 * newest first; a record's address never changes. One calloc per record made a
	 * name's first use spend most of its time in malloc. */
	struct tc_region_slab *slabs;
	char *slab_next;          /* the next free record in slabs */
	size_t slab_left;         /* records free there */
	struct tc_strpool names;  /* name id i is record i's name */
	struct tc_region_name_slot *pc;   /* [pc_mask + 1], grown with the records */
	size_t pc_mask, pc_used;
	unsigned depth;
	struct tc_region_frame frames[TC_REGION_MAXDEPTH];
	/* frames[depth - 1].rec while a region is open (set with depth, set_depth): the
	 * short end reaches the record in one load from the thread, not two */
	struct tc_region_record *top_rec;
	int64_t *fvals;           /* [MAXDEPTH][2][nq]: start values, children's sums */
	int64_t *snap, *snap2;    /* [nq] scratch for end and the guarded lookup */
	int64_t *cal_out;         /* calibration: where end() puts the raw deltas */
	unsigned long errors, unbalanced;
	unsigned long pc_misses;  /* lookups the pointer cache did not answer */
	unsigned long full_calls; /* begins and ends the fast path left to region_*_full */
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
	/* the kernel's set-up of each kind of event held for the process (engine.h), so
	 * that a thread's open and close of its counters find it in place: a program of
	 * many short threads made the kernel patch its static keys twice a thread */
	struct tc_perf_hold *hold;
	bool hold_tried;
	struct tc_sb notes;
	struct tc_region_thread *threads;   /* the threads alive */
	unsigned nthreads;        /* threads that ever entered a region */
	unsigned nstates;         /* states in threads */
	/* what the threads that ended leave */
	struct tc_region_retired **retired;
	size_t nretired, aretired;
	struct tc_strpool retired_names;   /* name id i is retired[i]'s name */
	unsigned long retired_errors, retired_unbalanced;
	bool retired_multiplexed, retired_ran;
};

extern struct tc_regions tc_regions;

/* --- region-control.c: counting only inside regions (tacho stat --regions) ---
 * tc_region_ctl_on is set once the process found tacho stat's control socket (env, the
 * value of TACHO_STAT_CONTROL, "FD:PID" with PID tacho's, read once at set-up). enter
 * and leave are called at a thread's outermost begin and end (not while a thread
 * calibrates); the first enter of the process asks tacho to enable its counters, the
 * last leave to disable them, each waiting for tacho's "ack". */
extern bool tc_region_ctl_on;
void tc_region_control_setup(const char *env);
void tc_region_control_enter(void);
void tc_region_control_leave(void);

/* --- region-sim.c: regions under the simulator ---
 * Whether regions mark themselves for callgrind instead of measuring: TACHO_SIM set (not
 * "0") and the process on valgrind. Decided on the first call. */
bool tc_region_sim_on(void);
/* Marks the begin ('b') or end ('e') of region name on the calling thread: a callgrind
 * dump named "tacho:b:TID:NAME" (TC_VG_REGION_MARK). */
void tc_region_sim_mark(char kind, const char *name);

#endif
