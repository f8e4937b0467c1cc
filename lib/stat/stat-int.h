/* stat-int.h - what the files of a stat session share (stat.c: the session, its
 * runs, validation and aggregation; stat-interval.c: intervals; stat-breakdown.c:
 * breakdowns by CPU, thread or cgroup; stat-sim.c: simulated runs). Private to
 * lib/stat. */
#ifndef TACHO_STAT_STAT_INT_H
#define TACHO_STAT_STAT_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>

#include "stat/stat.h"
#include "tacho/counters.h"
#include "tacho/sim.h"
#include "tacho/stat.h"


struct ev_res {
	struct tacho_stat_event pub;
	struct tacho_stat_summary stats; /* pub.stats points here */
	char *name, *unit, *why;
	enum tacho_hint hint;            /* where why sends its reader */
	double scale;
	struct perf_event_attr attr;
	double *values;                  /* per repetition, scaled to unit; NAN: none */
	double *coverage;
	double *enabled;                 /* per repetition: time enabled, ns */
	enum tacho_count_status *status; /* per repetition */
	bool *seen;                      /* the repetition's run for this event happened */
	int err;
};

/* A unit of a breakdown: its description, and every event's result in it. */
struct stat_unit {
	struct tacho_stat_unit pub;
	char label[96];
	char comm[16];
	char *cgroup;           /* CGROUP: as asked */
	char *dir;              /* CGROUP: its directory; "" for every task */
	struct ev_res *ev;      /* [nev] */
	bool *asked;            /* [nev]: false where cgroup_pairs counts the event elsewhere */
};

/* Where a breakdown opens its counters: a CPU, a thread or a cgroup, and the unit that
 * its counts add to. */
struct stat_cell {
	int cpu;
	pid_t tid;
	size_t unit;
};

struct stat_region {
	struct tacho_stat_region pub;
	char *name;
	double *vals;           /* [2 * nev]: inclusive, then exclusive */
};

struct tacho_stat {
	size_t nev;
	struct ev_res *ev;
	unsigned repeat;        /* asked */
	unsigned done;          /* repetitions with at least one run */
	struct tc_schedule *sched;
	double *wall_ns;        /* per repetition: the wall time of the run with the clocks */
	double *window_ns;      /* per repetition, when switched: the wall time the counters
				   were on in that run (the control's on_ns) */
	double *user_ns, *sys_ns; /* per repetition: the program's CPU time (its last run);
				   NAN where none ran */
	bool interrupted;       /* tacho was signalled (or *stop): counting was cut short */
	bool switched;          /* counters switched on for part of the run (-D, regions,
				   --control): metrics are of the time counted */
	bool cut;               /* the repetitions end here: interrupted, or the program
				   died of a signal (which is its ending, not an
				   interruption) */
	bool have_exit;
	struct tacho_exit exit;
	struct tacho_metric *metrics;
	size_t nmetrics;
	struct stat_region *regions;   /* under simulation: of the last repetition */
	size_t nregions;
	struct tacho_sim_result *sim_last; /* the last repetition's simulation */
	bool simulated;         /* opts.sim: machine holds the simulated machine */
	struct tacho_sim_machine machine;
	char *machine_source, *machine_note, *machine_mcpu_source;
	enum tacho_stat_aggr aggr;
	struct stat_unit *units;
	size_t nunits;
	struct stat_cell *cells;
	size_t ncells;
	int *cg_cpus;           /* CGROUP: the CPUs each cgroup is counted on */
	size_t ncg_cpus;
};

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The options' first version (TC_OPTS_VALID) ends at stop; a caller built against an
 * older tacho.h may lack the fields after it (TC_OPTS_HAS, TC_OPTS_GET). */
#define TC_OPTS_V1_tacho_stat_opts tc_offsetofend(struct tacho_stat_opts, stop)

/* Why a cell of a thread that ended before it was opened has no counts: one string,
 * compared by address (stat-breakdown.c sets it, stat-interval.c tells it apart). */
extern const char tc_stat_cell_ended_why[];

/* A run's intervals: the helper thread and what it reads (stat-interval.c). */
struct ticker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done, started;
	struct tacho_counters *c;
	size_t n;                       /* specs of this run */
	const unsigned *spec_ev;        /* spec -> event index */
	size_t nev;
	const struct tacho_stat_opts *o;
	struct tacho_stat *s;
	void *const *cells;             /* instead of c: ncells cells of a list of tasks,
					   every spec in each, added up */
	size_t ncells;
	const bool *asked;              /* [ncells * n] with cells: the specs each cell
					   holds, in order (NULL: every spec) */
	bool units;                     /* a breakdown: every cell adds to its unit too */
	bool whole;                     /* no event of the run can be multiplexed */
	struct tacho_count *prev, *cur, *out;  /* out: per event of the list */
	struct tacho_count *tmp, *cell; /* one cell's counts: as read, per spec */
	const struct tacho_count **outp;       /* the interval's counts: &out[e] */
	struct tacho_count *uprev, *ucur, *uout; /* units: [nunits * n], [nunits * nev] */
	bool *uasked;                   /* [nunits * n]: some cell of the unit holds it */
	bool *have;                     /* [n + nunits * n]: a cell was added (ticker_read) */
	const struct tacho_count **uoutp;      /* [nunits * nev]: NULL where not asked */
	const struct tacho_stat_unit **unitp;  /* [nunits] */
	double t0, last;
	unsigned rep;                   /* the repetition counted */
};

/* --- stat.c --- */
/* An event's result with room for repeat repetitions and no value yet. */
int tc_stat_ev_res_init(struct ev_res *r, unsigned repeat, const char *name, const char *unit,
		        double scale);
/* One repetition's count of an event into its result. */
void tc_stat_record(struct ev_res *r, const struct tacho_count *k, unsigned rep);
/* Runs the program once without counting per task (a warm-up, or the program of a
 * CPU-wide count, whose counters are the CPUs'). */
int tc_stat_run_uncounted(const struct tacho_stat_opts *o, struct tacho_stat *s,
			  struct tacho_diag *diag);
void tc_stat_set_exec_diag(const struct tacho_stat_opts *o, struct tacho_diag *diag,
			   int exec_err);
bool tc_stat_stop_requested(const struct tacho_stat_opts *o);
pid_t tc_stat_task_at(const struct tacho_stat_opts *o, size_t i);
/* The processes or threads of a task target: the list (-p PID1,PID2), else pid. */
size_t tc_stat_task_count(const struct tacho_stat_opts *o);
/* Several tasks are counted as cells, a thread each, added up. */
bool tc_stat_task_list(const struct tacho_stat_opts *o);
/* Sleeps until *stop, or the process or thread pid is gone (pid 0: only *stop). */
void tc_stat_wait_target(const struct tacho_stat_opts *o, pid_t pid);

/* --- stat-interval.c --- */
/* Whether every event of s is of a PMU whose events never lose their counter. */
bool tc_stat_never_multiplexed(const struct tacho_stat *s);
int tc_stat_ticker_start(struct ticker *t);
/* Stops the helper; with final, the last (partial) interval is emitted too, so that
 * the intervals add up to the whole. */
void tc_stat_ticker_stop(struct ticker *t, bool final);

/* --- stat-breakdown.c --- */
bool tc_stat_aggr_by_cpu(enum tacho_stat_aggr a);
/* One run of a program with a unit per thread: every inherited copy of the events
 * reports its thread's counts when the thread ends, into one ring that is read when
 * the program has ended; the first thread holds the rest of the total. */
int tc_stat_count_threads_once(const struct tacho_stat_opts *o, struct tacho_stat *s,
			       unsigned run, unsigned rep, struct tacho_diag *diag);
/* One run of a breakdown over fixed cells (CPUs, threads of a process, cgroups): every
 * cell's counters opened, enabled together, read, and added into its unit and into
 * the event's total. */
int tc_stat_count_units_once(const struct tacho_stat_opts *o, struct tacho_stat *s,
			     unsigned run, unsigned rep, struct tacho_diag *diag);
int tc_stat_units_setup(const struct tacho_stat_opts *o, struct tacho_stat *s,
		        struct tacho_diag *diag);
int tc_stat_cell_read(const struct tacho_stat *s, void *obj, struct tacho_count *out, size_t n);

/* --- stat-sim.c --- */
void tc_stat_regions_free(struct tacho_stat *s);
/* One repetition under the simulator: the program runs once under valgrind, and every
 * event takes its simulated value or says why it has none. */
int tc_stat_simulate_once(const struct tacho_stat_opts *o, struct tacho_stat *s, unsigned rep,
			  struct tacho_diag *diag);

#endif
