/* stat.c - a stat session: run a program (or watch a process, a thread, CPUs) as many
 * times as the schedule and the repetitions ask, count each run's share of the events,
 * and aggregate per event (mean, stddev, min, median, max, spread) with a status that
 * never turns "not counted" into zero. P5Stat's procedure (seed 000) with perf's
 * targets and intervals. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf/perf.h"
#include "stat/metrics.h"
#include "stat/schedule.h"
#include "stat/stat.h"
#include "events/user-only.h"
#include "util/util.h"
#include "tacho/counters.h"
#include "tacho/events.h"
#include "tacho/run.h"
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
	struct tacho_schedule *sched;
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

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* --- intervals: a helper thread reads the counters every interval_ms --- */

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

static int cell_read(const struct tacho_stat *s, void *obj, struct tacho_count *out, size_t n);

/* Adds one cell's count k into sum (first: the first cell that holds it): raw and
 * clocks add up; a value the first cell cannot count is not supported in any (they
 * count the same events). */
static void cell_add(struct tacho_count *sum, const struct tacho_count *k, bool first)
{
	if (first) {
		*sum = *k;
		return;
	}
	if (sum->status == TACHO_COUNT_NOT_SUPPORTED || k->status == TACHO_COUNT_NOT_SUPPORTED)
		return;
	sum->raw += k->raw;
	sum->enabled_ns += k->enabled_ns;
	sum->running_ns += k->running_ns;
}

/* The run's counts so far: of its counters, or added up over its cells, into the
 * total and, with a breakdown, into each cell's unit. */
static int ticker_read(struct ticker *t)
{
	size_t nu = t->units ? t->s->nunits : 0;

	if (!t->cells)
		return tacho_counters_read(t->c, t->cur, t->n, sizeof(*t->cur));
	/* none added yet: have[i] for the total, have[n + u * n + i] for the units */
	memset(t->have, 0, (t->n + nu * t->n) * sizeof(*t->have));
	for (size_t c = 0; c < t->ncells; c++) {
		size_t u = t->units ? t->s->cells[c].unit : 0, k = 0;
		int err = cell_read(t->s, t->cells[c], t->tmp, t->n);

		if (err)
			return err;
		/* back from the cell's own order to the run's */
		for (size_t i = 0; i < t->n; i++) {
			if (t->asked && !t->asked[c * t->n + i])
				continue;
			t->cell[i] = t->tmp[k++];
			cell_add(&t->cur[i], &t->cell[i], !t->have[i]);
			t->have[i] = true;
			if (t->units) {
				size_t ui = u * t->n + i;

				cell_add(&t->ucur[ui], &t->cell[i], !t->have[t->n + ui]);
				t->have[t->n + ui] = true;
			}
		}
	}
	return 0;
}

/* An event's count with no value yet in an interval: not counted in this run. */
static void iv_none(const struct ev_res *r, struct tacho_count *o)
{
	memset(o, 0, sizeof(*o));
	o->name = r->name;
	o->status = TACHO_COUNT_NOT_COUNTED;
	o->value = NAN;
	o->why = r->pub.why ? r->pub.why : "not counted in this run of the program";
	o->hint = r->pub.why ? r->pub.hint : TACHO_HINT_NONE;
}

/* Why a cell of a thread that ended before it was opened has no counts. */
static const char cell_ended_why[] = "the thread ended before its counters could open";

/* The one rule of an interval: o is what c counted since p (deltas; a multiplexed
 * delta scaled by its own enabled/running times). enabled: tacho enabled the counters
 * itself before the first interval began (cells), so a clock that never moved is a
 * task (or cgroup) that did not run, not a counter still waiting for its exec. */
static void iv_delta(const struct ev_res *r, const struct tacho_count *c,
		     const struct tacho_count *p, struct tacho_count *o, bool enabled, bool whole)
{
	uint64_t d_raw, d_ena, d_run;

	o->err = c->err;
	o->why = c->why;
	o->hint = c->hint;
	/* not supported, or a source that never counts here: no interval of it has a
	 * number either */
	if (c->status == TACHO_COUNT_NOT_SUPPORTED || c->err == -TACHO_ESILENT) {
		o->status = c->status;
		o->value = NAN;
		return;
	}
	d_raw = c->raw - p->raw;
	d_ena = c->enabled_ns - p->enabled_ns;
	d_run = c->running_ns - p->running_ns;
	o->raw = d_raw;
	o->enabled_ns = d_ena;
	o->running_ns = d_run;
	o->why = NULL;
	o->hint = TACHO_HINT_NONE;
	if (d_run == 0 && d_ena == 0 &&
	    (c->enabled_ns > 0 || (enabled && c->why != cell_ended_why))) {
		/* A task-bound event's clocks stand still while its task is off the
		 * CPU: the program slept through the interval, so nothing of it can
		 * have been counted and the exact answer is 0 (d_raw is then 0). Not
		 * "not counted": the event was on its counter whenever it could be. */
		o->status = TACHO_COUNT_COUNTED;
		o->value = tc_apply_scale((double)d_raw, r->scale);
		o->coverage = 1.0;
		return;
	}
	if (d_run == 0) {
		o->status = TACHO_COUNT_NOT_COUNTED;
		o->why = d_ena ? "no counter during this interval"
			       : "not enabled during this interval";
		return;
	}
	/* whole: no event of the run can lose its counter (software, tracepoints,
	 * breakpoints, probes: tc_perf_ev_never_rotates), so that time running short
	 * of time enabled is the kernel's bookkeeping of threads that ended or were
	 * swapped (stat-units.c, count_of, says how), not multiplexing: the raw delta
	 * is exact */
	if (d_run >= d_ena || whole) {
		o->status = TACHO_COUNT_COUNTED;
		o->value = tc_apply_scale((double)d_raw, r->scale);
		o->coverage = 1.0;
	} else {
		o->status = TACHO_COUNT_MULTIPLEXED;
		o->value = tc_apply_scale(tc_count_scale(d_raw, d_ena, d_run), r->scale);
		o->coverage = (double)d_run / (double)d_ena;
	}
}

/* Whether every event of s is of a PMU whose events never lose their counter. */
static bool never_multiplexed(const struct tacho_stat *s)
{
	for (size_t e = 0; e < s->nev; e++)
		if (!tc_perf_type_never_rotates(s->ev[e].attr.type))
			return false;
	return true;
}

static void emit_interval(struct ticker *t, double now)
{
	struct tacho_stat_interval iv = { 0 };
	size_t nu = t->units ? t->s->nunits : 0;
	int err = ticker_read(t);

	if (err) {
		/* a missing line must not pass for a quiet interval; prev and last stay,
		 * so the next interval covers this one too */
		tc_log(TACHO_LOG_WARN, "the interval ending at %.3f s is not reported: cannot "
		       "read the counters: %s", (now - t->t0) * 1e-9, tacho_strerror(err));
		return;
	}
	for (size_t e = 0; e < t->nev; e++) {
		iv_none(&t->s->ev[e], &t->out[e]);
		for (size_t u = 0; u < nu; u++)
			iv_none(&t->s->ev[e], &t->uout[u * t->nev + e]);
	}
	for (size_t i = 0; i < t->n; i++) {
		size_t e = t->spec_ev[i];

		iv_delta(&t->s->ev[e], &t->cur[i], &t->prev[i], &t->out[e], t->cells != NULL,
			 t->whole);
		for (size_t u = 0; u < nu; u++)
			if (t->uasked[u * t->n + i])
				iv_delta(&t->s->ev[e], &t->ucur[u * t->n + i],
					 &t->uprev[u * t->n + i], &t->uout[u * t->nev + e],
					 t->cells != NULL, t->whole);
	}
	iv.t_s = (now - t->t0) * 1e-9;
	iv.len_s = (now - t->last) * 1e-9;
	iv.run = t->rep;
	iv.n = t->nev;
	iv.counts = t->outp;
	if (nu) {
		iv.nunits = nu;
		iv.units = t->unitp;
		iv.unit_counts = t->uoutp;
	}
	t->o->on_interval(t->o->interval_arg, &iv);
	t->last = now;
	memcpy(t->prev, t->cur, t->n * sizeof(*t->cur));
	if (nu)
		memcpy(t->uprev, t->ucur, nu * t->n * sizeof(*t->ucur));
}

static void *ticker_main(void *arg)
{
	struct ticker *t = arg;
	struct timespec next;
	double period = (double)t->o->interval_ms * 1e6;
	double due = t->t0 + period;

	pthread_mutex_lock(&t->lock);
	while (!t->done) {
		next.tv_sec = (time_t)(due / 1e9);
		next.tv_nsec = (long)(due - (double)next.tv_sec * 1e9);
		if (pthread_cond_timedwait(&t->cond, &t->lock, &next) == ETIMEDOUT && !t->done) {
			pthread_mutex_unlock(&t->lock);
			emit_interval(t, now_ns());
			pthread_mutex_lock(&t->lock);
			due += period;
			/* a late wake-up (a loaded machine) skips ticks rather than
			 * printing a burst of empty intervals */
			while (due < now_ns())
				due += period;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

static int ticker_start(struct ticker *t)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	size_t nu = t->units ? t->s->nunits : 0, un = nu * t->n + 1, ue = nu * t->nev + 1;

	t->prev = calloc(t->n ? t->n : 1, sizeof(*t->prev));
	t->cur = calloc(t->n ? t->n : 1, sizeof(*t->cur));
	t->tmp = calloc(t->n ? t->n : 1, sizeof(*t->tmp));
	t->cell = calloc(t->n ? t->n : 1, sizeof(*t->cell));
	t->out = calloc(t->nev ? t->nev : 1, sizeof(*t->out));
	t->outp = calloc(t->nev ? t->nev : 1, sizeof(*t->outp));
	t->have = calloc(t->n + un, sizeof(*t->have));
	t->uprev = calloc(un, sizeof(*t->uprev));
	t->ucur = calloc(un, sizeof(*t->ucur));
	t->uasked = calloc(un, sizeof(*t->uasked));
	t->uout = calloc(ue, sizeof(*t->uout));
	t->uoutp = calloc(ue, sizeof(*t->uoutp));
	t->unitp = calloc(nu + 1, sizeof(*t->unitp));
	if (!t->prev || !t->cur || !t->tmp || !t->cell || !t->out || !t->outp || !t->have ||
	    !t->uprev || !t->ucur || !t->uasked || !t->uout || !t->uoutp || !t->unitp)
		return -ENOMEM;
	for (size_t e = 0; e < t->nev; e++)
		t->outp[e] = &t->out[e];
	for (size_t c = 0; c < t->ncells && nu; c++)
		for (size_t i = 0; i < t->n; i++)
			if (!t->asked || t->asked[c * t->n + i])
				t->uasked[t->s->cells[c].unit * t->n + i] = true;
	for (size_t u = 0; u < nu; u++) {
		t->unitp[u] = &t->s->units[u].pub;
		for (size_t i = 0; i < t->n; i++)
			if (t->uasked[u * t->n + i])
				t->uoutp[u * t->nev + t->spec_ev[i]] =
					&t->uout[u * t->nev + t->spec_ev[i]];
	}
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &ca);
	pthread_condattr_destroy(&ca);
	t->t0 = t->last = now_ns();
	/* the helper takes no signals: Ctrl-C and SIGCHLD belong to the waiting thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&t->thread, NULL, ticker_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	t->started = err == 0;
	return err;
}

/* Stops the helper; with final, the last (partial) interval is emitted too, so that
 * the intervals add up to the whole. */
static void ticker_stop(struct ticker *t, bool final)
{
	if (t->started) {
		pthread_mutex_lock(&t->lock);
		t->done = true;
		pthread_cond_signal(&t->cond);
		pthread_mutex_unlock(&t->lock);
		pthread_join(t->thread, NULL);
		pthread_cond_destroy(&t->cond);
		pthread_mutex_destroy(&t->lock);
		if (final)
			emit_interval(t, now_ns());
	}
	free(t->prev);
	free(t->cur);
	free(t->tmp);
	free(t->cell);
	free(t->out);
	free(t->outp);
	free(t->have);
	free(t->uprev);
	free(t->ucur);
	free(t->uasked);
	free(t->uout);
	free(t->uoutp);
	free(t->unitp);
	t->prev = t->cur = t->tmp = t->cell = t->out = t->uprev = t->ucur = t->uout = NULL;
	t->outp = t->uoutp = NULL;
	t->have = t->uasked = NULL;
	t->unitp = NULL;
	t->started = false;
}

/* --- waiting for a process that is not our child --- */

static bool stop_requested(const struct tacho_stat_opts *o)
{
	return o->stop && *o->stop;
}

/* Sleeps until *stop, or the process or thread pid is gone (pid 0: only *stop). */
static void wait_target(const struct tacho_stat_opts *o, pid_t pid)
{
	int pidfd = -1;

#ifdef SYS_pidfd_open
	if (pid > 0)
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	while (!stop_requested(o)) {
		if (pidfd >= 0) {
			struct pollfd p = { .fd = pidfd, .events = POLLIN };
			if (poll(&p, 1, 100) > 0)
				break;
		} else {
			/* a thread (pidfd wants a process) or an old kernel: look every
			 * 100 ms; a zombie counts as gone */
			char path[64], st[512];
			struct timespec ts = { 0, 100 * 1000 * 1000 };
			if (pid > 0) {
				snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
				if (kill(pid, 0) < 0 && errno == ESRCH)
					break;
				if (tc_read_line_file(path, st, sizeof(st)) == 0) {
					const char *p = strrchr(st, ')');
					if (p && (p[2] == 'Z' || p[2] == 'X'))
						break;
				}
			}
			nanosleep(&ts, NULL);
		}
	}
	if (pidfd >= 0)
		close(pidfd);
}

/* --- one run of the program (or one watch of a target) --- */

/* The fields of the options that a caller built against an older tacho.h may lack. */
#define STAT_OPTS_HAS(o, field)                                                         \
	((o)->sz >= offsetof(struct tacho_stat_opts, field) + sizeof((o)->field))

/* The processes or threads of a task target: the list (-p PID1,PID2), else pid. */
static size_t task_count(const struct tacho_stat_opts *o)
{
	return STAT_OPTS_HAS(o, npids) && o->npids && o->pids ? o->npids : 1;
}

static pid_t task_at(const struct tacho_stat_opts *o, size_t i)
{
	return STAT_OPTS_HAS(o, npids) && o->npids && o->pids ? o->pids[i] : o->pid;
}

/* Several tasks are counted as cells, a thread each, added up. */
static bool task_list(const struct tacho_stat_opts *o)
{
	return (o->target == TACHO_TARGET_PROCESS || o->target == TACHO_TARGET_THREAD) &&
	       task_count(o) > 1;
}

static void set_exec_diag(const struct tacho_stat_opts *o, struct tacho_diag *diag,
			  int exec_err)
{
	char buf[256];

	tacho_exec_strerror(o->argv[0], exec_err, buf, sizeof(buf));
	tc_diag_set(diag, o->argv[0], 0, 0, -TACHO_ENOSTART, "%s", buf);
	if (STAT_OPTS_HAS(o, exec_err) && o->exec_err)
		*o->exec_err = exec_err;
}

/* Runs the program once without counting per task (a warm-up, or the program of a
 * CPU-wide count, whose counters are the CPUs'). */
static int run_uncounted(const struct tacho_stat_opts *o, struct tacho_stat *s,
			 struct tacho_diag *diag)
{
	struct tacho_child_opts co = { .sz = sizeof(co), .forward_signals = true,
					.stop = o->stop };
	struct tacho_child *ch;
	int err, exec_err = 0;

	err = tacho_child_start(o->argv, &co, &ch);
	if (err)
		return err;
	err = tacho_child_exec(ch, &exec_err);
	if (err == -TACHO_ENOSTART)
		set_exec_diag(o, diag, exec_err);
	if (!err)
		err = tacho_child_wait(ch, &s->exit);
	if (!err) {
		s->have_exit = true;
		/* a signal to us the program survived still ends the repetitions */
		if (tacho_child_signals(ch))
			s->interrupted = true;
		if (s->exit.signal || tacho_child_signals(ch))
			s->cut = true;
	}
	tacho_child_free(ch);
	return err;
}

/* Whether the counters are switched on and off while the program runs (regions,
 * --control, -D) rather than by its exec. */
static bool switched(const struct tacho_stat_opts *o)
{
	return STAT_OPTS_HAS(o, delay_ms) &&
	       (o->regions_only || o->control || o->delay_ms != 0);
}

/* One repetition's count of an event into its result. */
static void record(struct ev_res *r, const struct tacho_count *k, unsigned rep)
{
	r->seen[rep] = true;
	r->status[rep] = k->status;
	r->coverage[rep] = k->coverage;
	r->enabled[rep] = (double)k->enabled_ns;
	r->values[rep] = (k->status == TACHO_COUNT_COUNTED ||
			  k->status == TACHO_COUNT_MULTIPLEXED) && isfinite(k->value)
				 ? tc_apply_scale(k->value, r->scale)
				 : NAN;
	if (k->why && !r->why) {
		r->why = tc_strdup(k->why);
		r->hint = k->hint;
	}
	if (k->err && !r->err)
		r->err = k->err;
}

static int count_once(const struct tacho_stat_opts *o, struct tacho_stat *s, unsigned run,
		      unsigned rep, struct tacho_diag *diag)
{
	struct tacho_counters_opts co = { .sz = sizeof(co) };
	struct tacho_child_opts cho = { .sz = sizeof(cho), .forward_signals = true,
					 .stop = o->stop };
	struct tacho_counter_spec *specs = NULL;
	struct tacho_count *counts = NULL;
	struct tacho_counters *c = NULL;
	struct tacho_child *ch = NULL;
	struct ticker t = { 0 };
	struct tc_stat_control sw;
	unsigned *spec_ev = NULL;
	size_t n = 0;
	double t0, t1;
	int err = 0, exec_err = 0;
	bool ctl = switched(o);

	tc_stat_control_init(&sw);

	/* the specs of this run, group by group, and which event each one is */
	for (unsigned g = 0; g < tc_schedule_ngroups(s->sched, run); g++) {
		unsigned k;
		tc_schedule_group(s->sched, run, g, &k);
		n += k;
	}
	specs = calloc(n ? n : 1, sizeof(*specs));
	spec_ev = calloc(n ? n : 1, sizeof(*spec_ev));
	counts = calloc(n ? n : 1, sizeof(*counts));
	if (!specs || !spec_ev || !counts) {
		err = -ENOMEM;
		goto out;
	}
	n = 0;
	for (unsigned g = 0; g < tc_schedule_ngroups(s->sched, run); g++) {
		unsigned k;
		const unsigned *ev = tc_schedule_group(s->sched, run, g, &k);
		for (unsigned i = 0; i < k; i++) {
			struct ev_res *r = &s->ev[ev[i]];
			specs[n].name = r->name;
			specs[n].attr = &r->attr;
			specs[n].group = k > 1 ? (int)g : TACHO_GROUP_NONE;
			spec_ev[n] = ev[i];
			n++;
		}
	}

	co.target = o->target;
	co.pid = o->pid;
	co.cpus = o->cpus;
	co.ncpus = o->ncpus;
	co.no_inherit = STAT_OPTS_HAS(o, no_inherit) && o->no_inherit;
	if (ctl) {
		err = tc_stat_control_prepare(&sw, o->regions_only,
					      o->control ? o->control_fd : -1,
					      o->control ? o->control_ack_fd : -1, o->delay_ms);
		if (err)
			goto out;
		if (o->regions_only)
			cho.env = sw.envp;
	}
	if (o->target == TACHO_TARGET_CHILD) {
		err = tacho_child_start(o->argv, &cho, &ch);
		if (err)
			goto out;
		co.pid = tacho_child_pid(ch);
		/* switched on and off by tacho, not by the exec: the program's task and
		 * what it creates, disabled until enabled */
		if (ctl)
			co.target = TACHO_TARGET_THREAD;
		tc_stat_control_forked(&sw);
	}
	err = tacho_counters_open(&co, specs, n, sizeof(*specs), &c);
	if (err) {
		if (err == -ESRCH)
			tc_diag_set(diag, "", 0, 0, err, "no process or thread %d", (int)o->pid);
		goto out;
	}
	/* the wall time of a CPU target spans the counters' whole enabled time, so that
	 * a clock's count per CPU never exceeds it ("CPUs utilized" at most the CPUs
	 * counted); a child's starts at its exec, when its counters start */
	t0 = now_ns();
	if (o->target != TACHO_TARGET_CHILD) {
		err = tacho_counters_enable(c);
		if (err)
			goto out;
	}
	if (o->target == TACHO_TARGET_CPUS && o->argv && o->argv[0]) {
		err = tacho_child_start(o->argv, &cho, &ch);
		if (err)
			goto out;
	}
	if (o->interval_ms && o->on_interval) {
		t.c = c;
		t.n = n;
		t.spec_ev = spec_ev;
		t.nev = s->nev;
		t.o = o;
		t.s = s;
		t.whole = never_multiplexed(s);
		t.rep = rep;
	}
	/* Intervals start once the program runs: a launched program's events are
	 * enabled by its exec, so a tick before tacho_child_exec returns would report
	 * an interval in which nothing could be enabled (on a loaded machine the exec
	 * can take longer than an interval). */
	if (!ch && t.o) {
		err = ticker_start(&t);
		if (err) {
			ticker_stop(&t, false);
			goto out;
		}
	}
	if (o->target == TACHO_TARGET_CHILD)
		t0 = now_ns();
	if (ch) {
		err = tacho_child_exec(ch, &exec_err);
		if (err == -TACHO_ENOSTART) {
			set_exec_diag(o, diag, exec_err);
			goto out;
		}
		if (!err && t.o)
			err = ticker_start(&t);
		if (!err && ctl)
			err = tc_stat_control_start(&sw, c);
		if (!err)
			err = tacho_child_wait(ch, &s->exit);
		/* no command after the program's end: the counts stand still */
		tc_stat_control_exit(&sw);
		if (ctl && run == 0)
			s->window_ns[rep] = (double)sw.on_ns;
		if (!err) {
			s->have_exit = true;
			/* a signal to us the program survived still ends the repetitions:
			 * this one is complete, the next does not start */
			if (tacho_child_signals(ch))
				s->interrupted = true;
			if (s->exit.signal || tacho_child_signals(ch))
				s->cut = true;
		}
	} else {
		wait_target(o, o->target == TACHO_TARGET_CPUS ? 0 : o->pid);
		if (stop_requested(o))
			s->interrupted = s->cut = true;
	}
	if (o->target != TACHO_TARGET_CHILD)
		tacho_counters_disable(c);
	t1 = now_ns();
	ticker_stop(&t, err == 0);
	if (err)
		goto out;
	err = tacho_counters_read(c, counts, n, sizeof(*counts));
	if (err)
		goto out;
	/* the clocks count in the first run: its wall time goes with them */
	if (run == 0)
		s->wall_ns[rep] = t1 - t0;
	for (size_t i = 0; i < n; i++)
		record(&s->ev[spec_ev[i]], &counts[i], rep);
out:
	tc_stat_control_exit(&sw);
	tacho_counters_free(c);
	tacho_child_free(ch);
	free(specs);
	free(spec_ev);
	free(counts);
	return err;
}

static void regions_free(struct tacho_stat *s)
{
	for (size_t i = 0; i < s->nregions; i++) {
		free(s->regions[i].name);
		free(s->regions[i].vals);
	}
	free(s->regions);
	s->regions = NULL;
	s->nregions = 0;
}

/* The regions of a simulated run, with the value of every event of the session. */
static int take_regions(struct tacho_stat *s, const struct tacho_sim_result *res)
{
	size_t n = tacho_sim_result_nregions(res);

	regions_free(s);
	if (!n)
		return 0;
	s->regions = calloc(n, sizeof(*s->regions));
	if (!s->regions)
		return -ENOMEM;
	s->nregions = n;
	for (size_t i = 0; i < n; i++) {
		const struct tacho_sim_region *g = tacho_sim_result_region(res, i);
		struct stat_region *r = &s->regions[i];

		r->name = tc_strdup(g->name);
		r->vals = malloc(2 * (s->nev ? s->nev : 1) * sizeof(*r->vals));
		if (!r->name || !r->vals)
			return -ENOMEM;
		r->pub.name = r->name;
		r->pub.calls = g->calls;
		r->pub.unbalanced = g->unbalanced;
		r->pub.inclusive = r->vals;
		r->pub.exclusive = r->vals + s->nev;
		for (size_t e = 0; e < s->nev; e++)
			for (int x = 0; x < 2; x++) {
				uint64_t v;
				r->vals[x * s->nev + e] =
					tacho_sim_region_value(res, i, &s->ev[e].attr, x, &v,
							       NULL) == 0
						? (double)v * s->ev[e].scale
						: NAN;
			}
	}
	return 0;
}

/* One repetition under the simulator: the program runs once under valgrind, and every
 * event takes its simulated value or says why it has none. */
static int simulate_once(const struct tacho_stat_opts *o, struct tacho_stat *s, unsigned rep,
			 struct tacho_diag *diag)
{
	struct tacho_sim_result *res = NULL;
	int err, exec_err = 0;
	double t0 = now_ns();

	err = tacho_sim_run(o->sim, o->argv, &res, &exec_err, diag);
	if (err) {
		if (err == -TACHO_ENOSTART && exec_err && STAT_OPTS_HAS(o, exec_err) && o->exec_err)
			*o->exec_err = exec_err;
		return err;
	}
	s->wall_ns[rep] = now_ns() - t0;
	s->exit = *tacho_sim_result_exit(res);
	s->have_exit = true;
	if (s->exit.signal)
		s->cut = true;
	for (size_t e = 0; e < s->nev; e++) {
		struct ev_res *r = &s->ev[e];
		const char *why = NULL;
		uint64_t v;

		r->seen[rep] = true;
		if (tacho_sim_result_value(res, &r->attr, &v, &why) == 0) {
			r->status[rep] = TACHO_COUNT_SIMULATED;
			r->coverage[rep] = 1.0;
			r->values[rep] = tc_apply_scale((double)v, r->scale);
			continue;
		}
		r->status[rep] = TACHO_COUNT_NOT_SUPPORTED;
		r->values[rep] = NAN;
		if (!r->why) {
			r->why = tc_strdup(why);
			r->hint = TACHO_HINT_NONE;
		}
		if (!r->err)
			r->err = -TACHO_ENOVALUE;
	}
	err = take_regions(s, res);
	tacho_sim_result_free(s->sim_last);
	s->sim_last = res;
	return err;
}

/* --- aggregation --- */

/* The statistics and status of one event's result over the repetitions; vals is
 * scratch room for s->repeat values. */
static int aggregate_event(struct tacho_stat *s, struct ev_res *r, double *vals)
{
	struct tacho_stat_event *p = &r->pub;
	struct tc_stats st;
	unsigned nv = 0, whole = 0, nsim = 0, nseen = 0;
	double cov = 0, ena = 0;
	enum tacho_count_status first_bad = TACHO_COUNT_NOT_COUNTED;
	bool have_bad = false;
	int err;

	for (unsigned k = 0; k < s->done; k++) {
		nseen += r->seen[k];
		if (isfinite(r->values[k])) {
			vals[nv++] = r->values[k];
			cov += r->coverage[k];
			ena += r->enabled[k];
			if (r->status[k] == TACHO_COUNT_COUNTED)
				whole++;
			else if (r->status[k] == TACHO_COUNT_SIMULATED)
				nsim++;
		} else if (!have_bad && r->seen[k]) {
			first_bad = r->status[k];
			have_bad = true;
		}
	}
	p->values = r->values;
	p->nvalues = nv;
	p->enabled_ns = nv ? ena / nv : 0;
	p->err = r->err;
	/* over the repetitions whose run for this event happened: a session cut
	 * short by a signal leaves later runs out, which is no multiplexing */
	p->coverage = nseen ? cov / nseen : 0;
	err = tc_stats_compute(vals, nv, &st);
	if (err)
		return err;
	r->stats.mean = st.mean;
	r->stats.stddev = st.stddev;
	r->stats.min = st.min;
	r->stats.max = st.max;
	r->stats.median = st.median;
	r->stats.spread_pct = st.spread_pct;
	r->stats.rsd_pct = st.rsd_pct;
	p->stats = &r->stats;
	p->value = st.mean;
	if (nv == 0) {
		p->status = have_bad ? first_bad : TACHO_COUNT_NOT_COUNTED;
		if (p->status == TACHO_COUNT_COUNTED || p->status == TACHO_COUNT_MULTIPLEXED ||
		    p->status == TACHO_COUNT_SIMULATED)
			p->status = TACHO_COUNT_NOT_COUNTED;
		if (!r->why) {
			r->why = tc_strdup(p->run >= 0 && s->cut
				? "the session ended before this event's run of the program"
				: "no value was read");
		}
		p->coverage = 0;
	} else if (whole == nseen) {
		p->status = TACHO_COUNT_COUNTED;
		p->coverage = 1.0;
	} else if (nsim == nseen) {
		p->status = TACHO_COUNT_SIMULATED;
		p->coverage = 1.0;
	} else {
		p->status = TACHO_COUNT_MULTIPLEXED;
	}
	p->why = p->status == TACHO_COUNT_COUNTED || p->status == TACHO_COUNT_SIMULATED
			 ? NULL : r->why;
	p->hint = p->why ? r->hint : TACHO_HINT_NONE;
	if (p->status == TACHO_COUNT_MULTIPLEXED && !p->why)
		p->why = "counted part of the time; the value is scaled";
	return 0;
}

static int aggregate(struct tacho_stat *s)
{
	struct tacho_metric_input *in;
	double *vals;
	struct tc_welford wall;
	int err = 0;

	vals = malloc((s->repeat ? s->repeat : 1) * sizeof(*vals));
	in = calloc(s->nev ? s->nev : 1, sizeof(*in));
	if (!vals || !in) {
		free(vals);
		free(in);
		return -ENOMEM;
	}
	for (size_t e = 0; e < s->nev; e++) {
		struct ev_res *r = &s->ev[e];

		err = aggregate_event(s, r, vals);
		if (err)
			break;
		in[e].name = r->name;
		in[e].attr = &r->attr;
		in[e].has_value = r->pub.nvalues > 0 && r->scale != 0;
		in[e].value = in[e].has_value ? r->pub.value / r->scale : 0;
	}
	for (size_t u = 0; u < s->nunits && !err; u++)
		for (size_t e = 0; e < s->nev && !err; e++)
			if (s->units[u].asked[e])
				err = aggregate_event(s, &s->units[u].ev[e], vals);
	tc_welford_init(&wall);
	for (unsigned k = 0; k < s->done; k++) {
		/* counters switched on for part of the run (-D, regions, --control): the
		 * metrics are of the wall time they were on, not of the whole run (an
		 * event's time enabled would not do: it runs only while a thread runs, and
		 * adds up over the threads) */
		double w = s->switched ? s->window_ns[k] : s->wall_ns[k];
		if (w > 0)
			tc_welford_add(&wall, w);
	}
	/* a simulation's wall time is valgrind's, dozens of times the program's: no rate
	 * per second of it would mean anything */
	if (!err)
		err = tc_metrics_compute(in, s->nev,
					 wall.n && !s->simulated ? tc_welford_mean(&wall) : 0,
					 s->switched ? "time counted" : NULL, &s->metrics,
					 &s->nmetrics);
	free(vals);
	free(in);
	return err;
}

static void ev_res_exit(struct ev_res *r)
{
	free(r->name);
	free(r->unit);
	free(r->why);
	free(r->values);
	free(r->coverage);
	free(r->enabled);
	free(r->status);
	free(r->seen);
}

/* An event's result with room for repeat repetitions and no value yet. */
static int ev_res_init(struct ev_res *r, unsigned repeat, const char *name, const char *unit,
		       double scale)
{
	r->name = tc_strdup(name);
	r->unit = tc_strdup(unit ? unit : "");
	r->scale = scale;
	r->values = malloc(repeat * sizeof(*r->values));
	r->coverage = calloc(repeat, sizeof(*r->coverage));
	r->enabled = calloc(repeat, sizeof(*r->enabled));
	r->status = calloc(repeat, sizeof(*r->status));
	r->seen = calloc(repeat, sizeof(*r->seen));
	if (!r->name || !r->unit || !r->values || !r->coverage || !r->enabled || !r->status ||
	    !r->seen)
		return -ENOMEM;
	for (unsigned k = 0; k < repeat; k++)
		r->values[k] = NAN;
	r->pub.name = r->name;
	r->pub.unit = r->unit;
	r->pub.value = NAN;
	return 0;
}

static void units_free(struct tacho_stat *s)
{
	for (size_t u = 0; u < s->nunits; u++) {
		struct stat_unit *su = &s->units[u];
		for (size_t e = 0; su->ev && e < s->nev; e++)
			ev_res_exit(&su->ev[e]);
		free(su->ev);
		free(su->asked);
		free(su->cgroup);
		free(su->dir);
	}
	free(s->units);
	s->units = NULL;
	s->nunits = 0;
}

void tacho_stat_free(struct tacho_stat *s)
{
	if (!s)
		return;
	for (size_t e = 0; e < s->nev; e++)
		ev_res_exit(&s->ev[e]);
	units_free(s);
	free(s->cells);
	free(s->cg_cpus);
	free(s->ev);
	free(s->wall_ns);
	free(s->window_ns);
	free(s->user_ns);
	free(s->sys_ns);
	free(s->metrics);
	free(s->machine_source);
	free(s->machine_note);
	free(s->machine_mcpu_source);
	regions_free(s);
	tacho_sim_result_free(s->sim_last);
	tacho_schedule_free(s->sched);
	free(s);
}

static int stat_new(const struct tacho_stat_opts *o, unsigned repeat, struct tacho_stat **out)
{
	struct tacho_stat *s = calloc(1, sizeof(*s));
	size_t n = tacho_evlist_count(o->events);

	if (!s)
		return -ENOMEM;
	s->repeat = repeat;
	s->nev = n;
	s->ev = calloc(n ? n : 1, sizeof(*s->ev));
	s->wall_ns = calloc(repeat, sizeof(*s->wall_ns));
	s->window_ns = calloc(repeat, sizeof(*s->window_ns));
	s->user_ns = malloc(repeat * sizeof(*s->user_ns));
	s->sys_ns = malloc(repeat * sizeof(*s->sys_ns));
	if (!s->ev || !s->wall_ns || !s->window_ns || !s->user_ns || !s->sys_ns)
		goto out_oom;
	for (unsigned k = 0; k < repeat; k++)
		s->user_ns[k] = s->sys_ns[k] = NAN;
	for (size_t e = 0; e < n; e++) {
		struct ev_res *r = &s->ev[e];
		double scale = tacho_evlist_scale(o->events, e);

		if (!(scale > 0) || !isfinite(scale))
			scale = 1.0;
		if (ev_res_init(r, repeat, tacho_evlist_name(o->events, e),
				tacho_evlist_unit(o->events, e), scale))
			goto out_oom;
		if (tacho_evlist_attr(o->events, e, &r->attr) != 0)
			goto out_oom;
	}
	*out = s;
	return 0;
out_oom:
	tacho_stat_free(s);
	return -ENOMEM;
}

/* --- breakdowns: units, the cells their counters open on, and counting them --- */

const char *tacho_stat_aggr_name(enum tacho_stat_aggr a)
{
	static const char *const names[] = {
		[TACHO_STAT_AGGR_GLOBAL] = "global", [TACHO_STAT_AGGR_CPU] = "cpu",
		[TACHO_STAT_AGGR_CORE] = "core",     [TACHO_STAT_AGGR_DIE] = "die",
		[TACHO_STAT_AGGR_SOCKET] = "socket", [TACHO_STAT_AGGR_NODE] = "node",
		[TACHO_STAT_AGGR_THREAD] = "thread", [TACHO_STAT_AGGR_CGROUP] = "cgroup",
	};

	return (unsigned)a < ARRAY_SIZE(names) ? names[a] : "unknown";
}

static bool aggr_by_cpu(enum tacho_stat_aggr a)
{
	return a >= TACHO_STAT_AGGR_CPU && a <= TACHO_STAT_AGGR_NODE;
}

/* A new unit with every event of the session asked and no value yet; its strings are
 * pointed at by units_finish, once the array stops moving. */
static struct stat_unit *unit_add(struct tacho_stat *s)
{
	struct stat_unit *u = realloc(s->units, (s->nunits + 1) * sizeof(*u));

	if (!u)
		return NULL;
	s->units = u;
	u = &s->units[s->nunits++];
	memset(u, 0, sizeof(*u));
	u->pub.aggr = s->aggr;
	u->pub.cpu = u->pub.socket = u->pub.die = u->pub.core = u->pub.node = -1;
	u->pub.tid = u->pub.pid = -1;
	u->ev = calloc(s->nev ? s->nev : 1, sizeof(*u->ev));
	u->asked = calloc(s->nev ? s->nev : 1, sizeof(*u->asked));
	if (!u->ev || !u->asked)
		return NULL;
	for (size_t e = 0; e < s->nev; e++) {
		const struct ev_res *t = &s->ev[e];
		if (ev_res_init(&u->ev[e], s->repeat, t->name, t->unit, t->scale))
			return NULL;
		u->ev[e].attr = t->attr;
		u->ev[e].pub.run = t->pub.run;
		u->asked[e] = true;
	}
	return u;
}

static void units_finish(struct tacho_stat *s)
{
	for (size_t u = 0; u < s->nunits; u++) {
		struct stat_unit *su = &s->units[u];
		su->pub.label = su->label;
		su->pub.comm = s->aggr == TACHO_STAT_AGGR_THREAD ? su->comm : NULL;
		su->pub.cgroup = su->cgroup;
	}
}

/* The key of a CPU's unit in mode a: CPUs with equal keys add up. */
static void place_key(enum tacho_stat_aggr a, const struct tc_stat_cpu_place *p, int k[4])
{
	k[0] = k[1] = k[2] = k[3] = -1;
	switch (a) {
	case TACHO_STAT_AGGR_CPU:
		k[3] = p->cpu;
		break;
	case TACHO_STAT_AGGR_CORE:
		k[2] = p->core;
		/* fall through */
	case TACHO_STAT_AGGR_DIE:
		k[1] = p->die;
		/* fall through */
	case TACHO_STAT_AGGR_SOCKET:
		k[0] = p->socket;
		break;
	case TACHO_STAT_AGGR_NODE:
		k[0] = p->node;
		break;
	default:
		break;
	}
}

static int place_order(const void *a, const void *b, void *arg)
{
	const struct tc_stat_cpu_place *x = a, *y = b;
	const enum tacho_stat_aggr *mode = arg;
	int kx[4], ky[4];

	place_key(*mode, x, kx);
	place_key(*mode, y, ky);
	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* The target's CPUs (the caller's list, or every online one), malloc'd. */
static int target_cpus(const struct tacho_stat_opts *o, int **out, size_t *n)
{
	if (!o->ncpus)
		return tc_online_cpus(out, n);
	if (!o->cpus)
		return -EINVAL;
	*out = malloc(o->ncpus * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	memcpy(*out, o->cpus, o->ncpus * sizeof(**out));
	*n = o->ncpus;
	return 0;
}

/* Per CPU, core, die, package or node: one cell per CPU, each adding to its unit. */
static int units_cpus(const struct tacho_stat_opts *o, struct tacho_stat *s)
{
	struct tc_stat_cpu_place *pl = NULL;
	int *cpus = NULL, prev[4] = { 0 };
	size_t n = 0;
	int err = target_cpus(o, &cpus, &n);

	if (err)
		return err;
	pl = calloc(n ? n : 1, sizeof(*pl));
	s->cells = calloc(n ? n : 1, sizeof(*s->cells));
	if (!pl || !s->cells) {
		err = -ENOMEM;
		goto out;
	}
	tc_stat_cpu_places(cpus, n, pl);
	qsort_r(pl, n, sizeof(*pl), place_order, &s->aggr);
	for (size_t i = 0; i < n; i++) {
		struct stat_unit *u;
		int k[4];

		place_key(s->aggr, &pl[i], k);
		if (i == 0 || memcmp(k, prev, sizeof(k))) {
			u = unit_add(s);
			if (!u) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(prev, k, sizeof(k));
			u->pub.socket = k[0];
			u->pub.die = k[1];
			u->pub.core = k[2];
			switch (s->aggr) {
			case TACHO_STAT_AGGR_CPU:
				u->pub.cpu = pl[i].cpu;
				u->pub.socket = pl[i].socket;
				u->pub.die = pl[i].die;
				u->pub.core = pl[i].core;
				u->pub.node = pl[i].node;
				snprintf(u->label, sizeof(u->label), "CPU%d", pl[i].cpu);
				break;
			case TACHO_STAT_AGGR_CORE:
				snprintf(u->label, sizeof(u->label), "S%d-D%d-C%d", k[0], k[1], k[2]);
				break;
			case TACHO_STAT_AGGR_DIE:
				snprintf(u->label, sizeof(u->label), "S%d-D%d", k[0], k[1]);
				break;
			case TACHO_STAT_AGGR_SOCKET:
				snprintf(u->label, sizeof(u->label), "S%d", k[0]);
				break;
			default:
				u->pub.socket = -1;
				u->pub.node = k[0];
				snprintf(u->label, sizeof(u->label), "N%d", k[0]);
				break;
			}
		}
		s->units[s->nunits - 1].pub.ncpus++;
		s->cells[s->ncells++] = (struct stat_cell){ .cpu = pl[i].cpu, .tid = -1,
							    .unit = s->nunits - 1 };
	}
out:
	free(pl);
	free(cpus);
	return err;
}

/* The threads of one task of the target, a cell each: a process's threads listed now
 * (a thread it creates later is counted with the thread that created it), or the one
 * thread. Per thread a unit of its own; counted together (a list without a breakdown)
 * every cell goes to unit 0. */
static int units_task(const struct tacho_stat_opts *o, struct tacho_stat *s, pid_t pid,
		      struct tacho_diag *diag)
{
	pid_t *tids = NULL;
	size_t n = 1;
	int err = 0;
	struct stat_cell *cells;

	if (o->target == TACHO_TARGET_PROCESS) {
		err = tc_proc_threads(pid, &tids, &n);
		if (err == -ESRCH)
			return tc_diag_set(diag, "", 0, 0, err, "no process or thread %d",
					   (int)pid);
		if (err)
			return err;
	}
	cells = realloc(s->cells, (s->ncells + n) * sizeof(*cells));
	if (!cells) {
		err = -ENOMEM;
		goto out;
	}
	s->cells = cells;
	for (size_t i = 0; i < n; i++) {
		pid_t tid = tids ? tids[i] : pid;
		struct stat_unit *u;
		char path[64];

		if (s->aggr != TACHO_STAT_AGGR_THREAD) {
			s->cells[s->ncells++] = (struct stat_cell){ .cpu = -1, .tid = tid, .unit = 0 };
			continue;
		}
		u = unit_add(s);
		if (!u) {
			err = -ENOMEM;
			goto out;
		}
		u->pub.tid = tid;
		u->pub.pid = o->target == TACHO_TARGET_PROCESS ? pid : -1;
		if (o->target == TACHO_TARGET_PROCESS)
			snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		else
			snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
		if (tc_read_line_file(path, u->comm, sizeof(u->comm)))
			u->comm[0] = '\0';
		snprintf(u->label, sizeof(u->label), "%s-%d", u->comm, (int)tid);
		s->cells[s->ncells++] = (struct stat_cell){ .cpu = -1, .tid = tid,
							    .unit = s->nunits - 1 };
	}
out:
	free(tids);
	return err;
}

/* Per thread of the target's processes or threads, or every thread of a list of them
 * counted together in one unit. */
static int units_tasks(const struct tacho_stat_opts *o, struct tacho_stat *s,
		       struct tacho_diag *diag)
{
	int err = 0;

	if (s->aggr != TACHO_STAT_AGGR_THREAD && !unit_add(s))
		return -ENOMEM;
	for (size_t i = 0; i < task_count(o) && !err; i++)
		err = units_task(o, s, task_at(o, i), diag);
	return err;
}

/* The cgroup event e is counted in. */
static const char *cgroup_of(const struct tacho_stat_opts *o, size_t e)
{
	if (!o->cgroup_pairs)
		return NULL;
	if (o->ncgroups == 1)
		return o->cgroups[0];
	return e < o->ncgroups ? o->cgroups[e] : "";
}

static int cgroup_unit(const struct tacho_stat_opts *o, struct tacho_stat *s, const char *cg,
		       struct tacho_diag *diag)
{
	struct stat_unit *u;
	char dir[4096] = "";
	int err;

	for (size_t i = 0; i < s->nunits; i++)
		if (!strcmp(s->units[i].cgroup, cg))
			return 0;
	if (*cg) {
		err = tc_stat_cgroup_dir(cg, dir, sizeof(dir));
		if (err == -ENOENT)
			return tc_diag_set(diag, cg, 0, 0, err, "no cgroup '%s' in the perf_event "
					   "hierarchy (cgroup v1's perf_event controller, else "
					   "cgroup v2)", cg);
		if (err)
			return tc_diag_set(diag, cg, 0, 0, err, "bad cgroup '%s': %s", cg,
					   tacho_strerror(err));
	}
	u = unit_add(s);
	if (!u)
		return -ENOMEM;
	u->cgroup = tc_strdup(cg);
	u->dir = tc_strdup(dir);
	if (!u->cgroup || !u->dir)
		return -ENOMEM;
	u->pub.ncpus = (unsigned)s->ncg_cpus;
	snprintf(u->label, sizeof(u->label), "%s", *cg ? cg : "(every task)");
	for (size_t e = 0; e < s->nev; e++) {
		const char *mine = cgroup_of(o, e);
		u->asked[e] = !mine || !strcmp(mine, cg);
	}
	return 0;
}

/* Per cgroup: one cell per cgroup, each over the target's CPUs. */
static int units_cgroups(const struct tacho_stat_opts *o, struct tacho_stat *s,
			 struct tacho_diag *diag)
{
	int err = target_cpus(o, &s->cg_cpus, &s->ncg_cpus);

	for (size_t i = 0; !err && i < o->ncgroups; i++)
		err = cgroup_unit(o, s, o->cgroups[i] ? o->cgroups[i] : "", diag);
	if (!err && o->cgroup_pairs && o->ncgroups > 1 && s->nev > o->ncgroups)
		err = cgroup_unit(o, s, "", diag);
	if (err)
		return err;
	s->cells = calloc(s->nunits ? s->nunits : 1, sizeof(*s->cells));
	if (!s->cells)
		return -ENOMEM;
	for (size_t u = 0; u < s->nunits; u++)
		s->cells[s->ncells++] = (struct stat_cell){ .cpu = -1, .tid = -1, .unit = u };
	return 0;
}

static int units_setup(const struct tacho_stat_opts *o, struct tacho_stat *s,
		       struct tacho_diag *diag)
{
	int err = 0;

	if (aggr_by_cpu(s->aggr))
		err = units_cpus(o, s);
	else if (s->aggr == TACHO_STAT_AGGR_CGROUP)
		err = units_cgroups(o, s, diag);
	else if ((s->aggr == TACHO_STAT_AGGR_THREAD && o->target != TACHO_TARGET_CHILD) ||
		 task_list(o))
		err = units_tasks(o, s, diag);
	/* a program's threads are known once it has run */
	units_finish(s);
	return err;
}

/* Counts added over cells, under the one rule: a value where any cell has one (scaled
 * cells make it multiplexed), else the first cell's reason. */
struct count_acc {
	uint64_t raw, enabled, running;
	double value;
	unsigned nval, nmux;
	bool have_bad;
	struct tacho_count bad;
};

static void acc_add(struct count_acc *a, const struct tacho_count *k)
{
	if ((k->status == TACHO_COUNT_COUNTED || k->status == TACHO_COUNT_MULTIPLEXED) &&
	    isfinite(k->value)) {
		a->raw += k->raw;
		a->enabled += k->enabled_ns;
		a->running += k->running_ns;
		a->value += k->value;
		a->nval++;
		a->nmux += k->status == TACHO_COUNT_MULTIPLEXED;
	} else if (!a->have_bad || (a->bad.status == TACHO_COUNT_NOT_SUPPORTED &&
				    k->status == TACHO_COUNT_NOT_COUNTED)) {
		a->bad = *k;
		a->have_bad = true;
	}
}

static void acc_get(const struct count_acc *a, struct tacho_count *out)
{
	if (!a->nval) {
		if (a->have_bad) {
			*out = a->bad;
			return;
		}
		memset(out, 0, sizeof(*out));
		out->status = TACHO_COUNT_NOT_COUNTED;
		out->value = NAN;
		out->why = "nothing was counted here";
		return;
	}
	memset(out, 0, sizeof(*out));
	out->status = a->nmux ? TACHO_COUNT_MULTIPLEXED : TACHO_COUNT_COUNTED;
	out->raw = a->raw;
	out->enabled_ns = a->enabled;
	out->running_ns = a->running;
	out->value = a->value;
	out->coverage = a->nmux && a->enabled ? (double)a->running / (double)a->enabled : 1.0;
}

/* The specs of run, group by group, and which event each one is. */
static int build_specs(struct tacho_stat *s, unsigned run, struct tacho_counter_spec **specs,
		       unsigned **spec_ev, size_t *nspecs)
{
	size_t n = 0;

	for (unsigned g = 0; g < tc_schedule_ngroups(s->sched, run); g++) {
		unsigned k;
		tc_schedule_group(s->sched, run, g, &k);
		n += k;
	}
	*specs = calloc(n ? n : 1, sizeof(**specs));
	*spec_ev = calloc(n ? n : 1, sizeof(**spec_ev));
	if (!*specs || !*spec_ev)
		return -ENOMEM;
	n = 0;
	for (unsigned g = 0; g < tc_schedule_ngroups(s->sched, run); g++) {
		unsigned k;
		const unsigned *ev = tc_schedule_group(s->sched, run, g, &k);
		for (unsigned i = 0; i < k; i++) {
			struct ev_res *r = &s->ev[ev[i]];
			(*specs)[n].name = r->name;
			(*specs)[n].attr = &r->attr;
			(*specs)[n].group = k > 1 ? (int)g : TACHO_GROUP_NONE;
			(*spec_ev)[n] = ev[i];
			n++;
		}
	}
	*nspecs = n;
	return 0;
}

/* Runs the program of a CPU target (started after the counters, as count_once does)
 * or waits for the end of the target. */
static int run_or_wait(const struct tacho_stat_opts *o, struct tacho_stat *s,
		       struct tacho_diag *diag)
{
	if (!(o->target == TACHO_TARGET_CPUS && o->argv && o->argv[0])) {
		/* a list ends when its last task has: each waited for in turn */
		if (o->target == TACHO_TARGET_CPUS)
			wait_target(o, 0);
		for (size_t i = 0; o->target != TACHO_TARGET_CPUS && i < task_count(o); i++)
			wait_target(o, task_at(o, i));
		if (stop_requested(o))
			s->interrupted = s->cut = true;
		return 0;
	}
	/* the counters are the CPUs': the program runs as a warm-up runs */
	return run_uncounted(o, s, diag);
}

/* Opens the counters of one cell: a CPU or a thread through the counting API, a cgroup
 * through the engine's cgroup mode (the specs its unit asks for: sub, nsub). */
static int cell_open(struct tacho_stat *s, const struct stat_cell *cl,
		     const struct tacho_counter_spec *sub, size_t nsub, void **obj)
{
	struct tacho_counters_opts co = { .sz = sizeof(co) };
	int err;

	*obj = NULL;
	if (s->aggr == TACHO_STAT_AGGR_CGROUP) {
		const struct stat_unit *u = &s->units[cl->unit];
		struct tc_perf_grid g = { 0 };
		int fd = -1;

		if (u->dir[0]) {
			fd = open(u->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return -errno;
		}
		err = tc_perf_grid_init(&g, s->cg_cpus, s->ncg_cpus, fd >= 0 ? &fd : NULL,
					fd >= 0 ? 1 : 0);
		if (!err)
			err = tc_stat_cells_open(sub, nsub, &g, TC_PERF_GROUP_READ |
						 (fd >= 0 ? TC_PERF_CGROUP : 0), false,
						 (struct tc_stat_cells **)obj);
		/* the kernel holds its own reference to the cgroup from the open on */
		if (fd >= 0)
			close(fd);
		tc_perf_grid_exit(&g);
		return err;
	}
	if (cl->tid >= 0) {
		co.target = TACHO_TARGET_THREAD;
		co.pid = cl->tid;
	} else {
		co.target = TACHO_TARGET_CPUS;
		co.cpus = &cl->cpu;
		co.ncpus = 1;
	}
	err = tacho_counters_open(&co, sub, nsub, sizeof(*sub), (struct tacho_counters **)obj);
	/* a thread that ended since it was listed counted nothing: its unit says so */
	return cl->tid >= 0 && err == -ESRCH ? 0 : err;
}

static void cell_close(const struct tacho_stat *s, void *obj)
{
	if (s->aggr == TACHO_STAT_AGGR_CGROUP)
		tc_stat_cells_free(obj);
	else
		tacho_counters_free(obj);
}

static int cell_enable(const struct tacho_stat *s, void *obj, bool on)
{
	if (!obj)
		return 0;
	if (s->aggr == TACHO_STAT_AGGR_CGROUP)
		return on ? tc_stat_cells_enable(obj) : tc_stat_cells_disable(obj);
	return on ? tacho_counters_enable(obj) : tacho_counters_disable(obj);
}

static int cell_read(const struct tacho_stat *s, void *obj, struct tacho_count *out, size_t n)
{
	if (!obj) {
		for (size_t i = 0; i < n; i++) {
			memset(&out[i], 0, sizeof(out[i]));
			out[i].status = TACHO_COUNT_NOT_COUNTED;
			out[i].value = NAN;
			out[i].why = cell_ended_why;
		}
		return 0;
	}
	if (s->aggr == TACHO_STAT_AGGR_CGROUP)
		return tc_stat_cells_read(obj, out);
	return tacho_counters_read(obj, out, n, sizeof(*out));
}

/* One run of a breakdown over fixed cells (CPUs, threads of a process, cgroups): every
 * cell's counters opened, enabled together, read, and added into its unit and into
 * the event's total. */
static int count_units_once(const struct tacho_stat_opts *o, struct tacho_stat *s,
			    unsigned run, unsigned rep, struct tacho_diag *diag)
{
	struct tacho_counter_spec *specs = NULL, *sub = NULL;
	struct tacho_count *counts = NULL, *tmp = NULL;
	unsigned *spec_ev = NULL;
	size_t n = 0, *subidx = NULL, nc = s->ncells;
	struct ticker t = { 0 };
	bool *asked = NULL;
	void **obj = NULL;
	double t0, t1;
	int err;

	err = build_specs(s, run, &specs, &spec_ev, &n);
	if (err)
		goto out;
	obj = calloc(nc ? nc : 1, sizeof(*obj));
	counts = calloc((nc ? nc : 1) * (n ? n : 1), sizeof(*counts));
	asked = calloc((nc ? nc : 1) * (n ? n : 1), sizeof(*asked));
	sub = calloc(n ? n : 1, sizeof(*sub));
	subidx = calloc(n ? n : 1, sizeof(*subidx));
	tmp = calloc(n ? n : 1, sizeof(*tmp));
	if (!obj || !counts || !asked || !sub || !subidx || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t c = 0; c < nc; c++) {
		const struct stat_unit *u = &s->units[s->cells[c].unit];
		size_t nsub = 0;

		for (size_t i = 0; i < n; i++) {
			if (!u->asked[spec_ev[i]])
				continue;
			asked[c * n + i] = true;
			subidx[nsub] = i;
			sub[nsub++] = specs[i];
		}
		err = nsub ? cell_open(s, &s->cells[c], sub, nsub, &obj[c]) : 0;
		if (err) {
			if (err == -ESRCH)
				tc_diag_set(diag, "", 0, 0, err, "no process or thread %d",
					    (int)(s->cells[c].tid > 0 ? s->cells[c].tid : o->pid));
			goto out;
		}
	}
	t0 = now_ns();
	for (size_t c = 0; c < nc && !err; c++)
		err = cell_enable(s, obj[c], true);
	/* intervals over a list of tasks (every cell holds every event: one unit), or over
	 * a breakdown's cells, each added into its unit too */
	if (!err && o->interval_ms && o->on_interval &&
	    (task_list(o) || s->aggr != TACHO_STAT_AGGR_GLOBAL)) {
		t.cells = obj;
		t.ncells = nc;
		t.asked = asked;
		t.units = s->aggr != TACHO_STAT_AGGR_GLOBAL;
		t.n = n;
		t.spec_ev = spec_ev;
		t.nev = s->nev;
		t.o = o;
		t.s = s;
		t.whole = never_multiplexed(s);
		t.rep = rep;
		err = ticker_start(&t);
	}
	if (!err)
		err = run_or_wait(o, s, diag);
	for (size_t c = 0; c < nc; c++)
		cell_enable(s, obj[c], false);
	t1 = now_ns();
	ticker_stop(&t, err == 0);
	if (err)
		goto out;
	for (size_t c = 0; c < nc && !err; c++) {
		size_t k = 0;

		err = cell_read(s, obj[c], tmp, n);
		/* back from the cell's own order to the run's */
		for (size_t i = 0; !err && i < n; i++)
			if (asked[c * n + i])
				counts[c * n + i] = tmp[k++];
	}
	if (err)
		goto out;
	if (run == 0)
		s->wall_ns[rep] = t1 - t0;
	for (size_t i = 0; i < n; i++) {
		struct count_acc total = { 0 };
		struct tacho_count k;

		for (size_t u = 0; u < s->nunits; u++) {
			struct count_acc ua = { 0 };
			bool any = false;

			for (size_t c = 0; c < nc; c++) {
				if (s->cells[c].unit != u || !asked[c * n + i])
					continue;
				acc_add(&ua, &counts[c * n + i]);
				acc_add(&total, &counts[c * n + i]);
				any = true;
			}
			if (!any)
				continue;
			acc_get(&ua, &k);
			record(&s->units[u].ev[spec_ev[i]], &k, rep);
		}
		acc_get(&total, &k);
		record(&s->ev[spec_ev[i]], &k, rep);
	}
out:
	for (size_t c = 0; obj && c < nc; c++)
		cell_close(s, obj[c]);
	free(obj);
	free(counts);
	free(asked);
	free(sub);
	free(subidx);
	free(tmp);
	free(specs);
	free(spec_ev);
	return err;
}

/* The name a program's first thread has until it names itself: its file's base name,
 * as the kernel cuts it (15 bytes). */
static void base_comm(const char *path, char *buf, size_t size)
{
	const char *b = strrchr(path, '/');

	snprintf(buf, size, "%.15s", b ? b + 1 : path);
}

/* One run of a program with a unit per thread: every inherited copy of the events
 * reports its thread's counts when the thread ends, into one ring that is read when
 * the program has ended; the first thread holds the rest of the total. */
static int count_threads_once(const struct tacho_stat_opts *o, struct tacho_stat *s,
			      unsigned run, unsigned rep, struct tacho_diag *diag)
{
	struct tacho_child_opts cho = { .sz = sizeof(cho), .forward_signals = true,
					 .stop = o->stop };
	struct tacho_counter_spec *specs = NULL;
	struct tacho_count *counts = NULL;
	struct tc_stat_thread *th = NULL;
	struct tc_stat_cells *cells = NULL;
	struct tacho_child *ch = NULL;
	struct tc_perf_grid g = { 0 };
	unsigned *spec_ev = NULL;
	size_t n = 0, nth = 0, ncpus = 0;
	uint64_t lost = 0;
	int *cpus = NULL;
	char comm[16];
	double t0, t1;
	pid_t pid;
	int err, exec_err = 0;

	err = build_specs(s, run, &specs, &spec_ev, &n);
	if (err)
		goto out;
	counts = calloc(n ? n : 1, sizeof(*counts));
	if (!counts) {
		err = -ENOMEM;
		goto out;
	}
	err = tacho_child_start(o->argv, &cho, &ch);
	if (err)
		goto out;
	pid = tacho_child_pid(ch);
	/* on every CPU: the kernel maps no ring of an inherited event that follows its
	 * task from CPU to CPU (all its copies would write into one) */
	err = tc_online_cpus(&cpus, &ncpus);
	if (!err)
		err = tc_perf_grid_init(&g, cpus, ncpus, &pid, 1);
	if (!err)
		err = tc_stat_cells_open(specs, n, &g, TC_PERF_INHERIT | TC_PERF_ENABLE_ON_EXEC,
					 true, &cells);
	if (err)
		goto out;
	t0 = now_ns();
	err = tacho_child_exec(ch, &exec_err);
	if (err == -TACHO_ENOSTART) {
		set_exec_diag(o, diag, exec_err);
		goto out;
	}
	if (!err)
		err = tacho_child_wait(ch, &s->exit);
	t1 = now_ns();
	if (err)
		goto out;
	s->have_exit = true;
	if (tacho_child_signals(ch))
		s->interrupted = true;
	if (s->exit.signal || tacho_child_signals(ch))
		s->cut = true;
	err = tc_stat_cells_read(cells, counts);
	if (err)
		goto out;
	base_comm(o->argv[0], comm, sizeof(comm));
	err = tc_stat_cells_threads(cells, counts, pid, comm, &th, &nth, &lost);
	if (err)
		goto out;
	if (lost)
		tc_log(TACHO_LOG_WARN, "%llu reports of ending threads were lost (more threads "
		       "than the ring holds): what they counted is in the first thread's "
		       "counts", (unsigned long long)lost);
	if (run == 0)
		s->wall_ns[rep] = t1 - t0;
	for (size_t i = 0; i < n; i++)
		record(&s->ev[spec_ev[i]], &counts[i], rep);
	for (size_t t = 0; t < nth; t++) {
		struct stat_unit *u = NULL;

		for (size_t k = 0; k < s->nunits && !u; k++)
			if (s->units[k].pub.tid == th[t].tid)
				u = &s->units[k];
		if (!u)
			u = unit_add(s);
		if (!u) {
			err = -ENOMEM;
			goto out;
		}
		u->pub.tid = th[t].tid;
		u->pub.pid = th[t].pid;
		snprintf(u->comm, sizeof(u->comm), "%s", th[t].comm);
		if (th[t].tid < 0)
			snprintf(u->label, sizeof(u->label), "(threads without a report)");
		else
			snprintf(u->label, sizeof(u->label), "%s-%d", th[t].comm, (int)th[t].tid);
		for (size_t i = 0; i < n; i++)
			record(&u->ev[spec_ev[i]], &th[t].counts[i], rep);
	}
out:
	units_finish(s);
	tc_stat_threads_free(th, nth);
	tc_stat_cells_free(cells);
	tc_perf_grid_exit(&g);
	tacho_child_free(ch);
	free(cpus);
	free(counts);
	free(specs);
	free(spec_ev);
	return err;
}

/* A breakdown the target and the other options allow, or -EINVAL with why. */
static int aggr_check(const struct tacho_stat_opts *o, enum tacho_stat_aggr a, bool sim,
		      unsigned repeat, size_t nev, struct tacho_diag *diag)
{
	const char *name = tacho_stat_aggr_name(a);

	if ((unsigned)a >= TACHO_STAT_AGGR_COUNT)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "unknown breakdown %d", (int)a);
	if (a == TACHO_STAT_AGGR_GLOBAL)
		return 0;
	if (sim)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "counts per %s are not "
				   "simulated", name);
	if (a == TACHO_STAT_AGGR_THREAD && o->target == TACHO_TARGET_CHILD && o->interval_ms)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "counts per thread of a program "
				   "come when each thread ends: not with intervals (count the "
				   "running process's threads instead)");
	if ((aggr_by_cpu(a) || a == TACHO_STAT_AGGR_CGROUP) && o->target != TACHO_TARGET_CPUS)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "counts per %s need CPUs to count "
				   "on (all of them, or a list)", name);
	if (a == TACHO_STAT_AGGR_THREAD && o->target == TACHO_TARGET_CPUS)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "counts per thread are of a "
				   "program, a process or a thread, not of CPUs");
	if (a == TACHO_STAT_AGGR_THREAD && o->target == TACHO_TARGET_CHILD && repeat > 1)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "counts per thread of a program "
				   "come from one run (its threads are new on every run): no "
				   "repetitions");
	if (a == TACHO_STAT_AGGR_CGROUP) {
		if (!STAT_OPTS_HAS(o, cgroup_pairs) || !o->ncgroups || !o->cgroups)
			return tc_diag_set(diag, "", 0, 0, -EINVAL, "no cgroup to count in");
		if (o->cgroup_pairs && o->ncgroups > 1 && o->ncgroups > nev)
			return tc_diag_set(diag, "", 0, 0, -EINVAL, "%zu cgroups for %zu "
					   "events: each cgroup goes with the event in its "
					   "place", o->ncgroups, nev);
	}
	return 0;
}

/* A task target whose user may count user space only: each event the kernel refuses
 * because it includes the kernel is counted user-only and named EVENT:u, said once.
 * CPU targets need more than ':u' gives (perf_event_paranoid <= 0): the explainer says
 * so when they fail. */
static int stat_user_only(const struct tacho_stat_opts *o, struct tacho_stat *s)
{
	struct tc_sb names = TC_SB_INIT;
	struct tc_perf_env env;
	int err = 0;

	if (o->target == TACHO_TARGET_CPUS)
		return 0;
	tc_perf_env_probe(&env);
	if (!tc_user_only_needed(&env))
		return 0;
	tc_sb_init(&names);
	for (size_t e = 0; e < s->nev; e++) {
		struct ev_res *r = &s->ev[e];
		char *name;

		if (!tc_user_only_fallback(&r->attr))
			continue;
		name = tc_user_only_name(r->name);
		if (!name) {
			err = -ENOMEM;
			goto out;
		}
		free(r->name);
		r->name = name;
		r->pub.name = name;
		tc_sb_addf(&names, "%s%s", names.len ? ", " : "", name);
	}
	if (names.oom)
		err = -ENOMEM;
	else if (names.len)
		err = tc_user_only_warn(&env, names.buf);
out:
	tc_sb_exit(&names);
	return err;
}

/* Every event of a run holds a file descriptor (one per CPU counted), so the
 * descriptor limit bounds a run: the events one run may open, for the scheduler to
 * spread the rest over more runs of the program instead of losing them to EMFILE
 * (a few descriptors stay for the run itself: the child's pipes, the output). 0 when
 * there is no limit to speak of. */
static unsigned events_per_run(const struct tacho_stat_opts *o)
{
	enum { RESERVE = 16 };
	struct rlimit rl;
	unsigned long open_fds = 0, per = 1, avail;
	DIR *d;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	while (readdir(d))
		open_fds++;
	closedir(d);
	open_fds = open_fds > 3 ? open_fds - 3 : 0;   /* ".", "..", the listing's own */
	if (o->target == TACHO_TARGET_CPUS) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		per = o->ncpus ? o->ncpus : online > 0 ? (unsigned long)online : 1;
	}
	/* --for-each-cgroup opens every event in every cgroup (-G's pairs: one each) */
	if (STAT_OPTS_HAS(o, cgroup_pairs) && o->aggr == TACHO_STAT_AGGR_CGROUP &&
	    !o->cgroup_pairs && o->ncgroups > 1)
		per *= o->ncgroups;
	if (rl.rlim_cur <= open_fds + RESERVE)
		return 1;
	avail = (unsigned long)(rl.rlim_cur - open_fds - RESERVE) / per;
	return avail == 0 ? 1 : avail > UINT_MAX ? 0 : (unsigned)avail;
}

int tacho_stat_run(const struct tacho_stat_opts *o, struct tacho_stat **out,
		   struct tacho_diag *diag)
{
	struct tacho_pmu_counters pmu = { .sz = sizeof(pmu) };
	const struct tacho_sim *sim = NULL;
	struct tacho_stat *s = NULL;
	struct tc_perf_hold *hold = NULL;
	unsigned repeat, nruns, total, progress = 0, sched_flags;
	enum tacho_stat_aggr aggr;
	bool program;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	if (!o || !out || !STAT_OPTS_HAS(o, stop) || !o->events)
		return -EINVAL;
	*out = NULL;
	program = o->argv && o->argv[0];
	sched_flags = o->sched_flags;
	if (STAT_OPTS_HAS(o, sim))
		sim = o->sim;
	if (tacho_evlist_count(o->events) == 0 && !(STAT_OPTS_HAS(o, null_run) && o->null_run))
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no events to count");
	if (o->target == TACHO_TARGET_CHILD && !program)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no program to run");
	if ((o->target == TACHO_TARGET_PROCESS || o->target == TACHO_TARGET_THREAD) && program)
		return tc_diag_set(diag, "", 0, 0, -EINVAL,
				   "a process or thread target runs no program");
	for (size_t i = 0; task_list(o) && i < task_count(o); i++)
		if (task_at(o, i) <= 0)
			return tc_diag_set(diag, "", 0, 0, -EINVAL, "bad process or thread id "
					   "%d in the list", (int)task_at(o, i));
	repeat = o->repeat ? o->repeat : 1;
	if (repeat > 1000000)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "too many repetitions (%u)", repeat);
	if ((repeat > 1 || o->warmup) && !program)
		return tc_diag_set(diag, "", 0, 0, -EINVAL,
				   "repetitions and warm-up runs need a program to run");
	if (sim && (o->target != TACHO_TARGET_CHILD || o->interval_ms))
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "a simulation runs a program of its "
				   "own, and has no intervals");
	if (switched(o)) {
		if (o->target != TACHO_TARGET_CHILD || o->interval_ms || sim ||
		    o->aggr != TACHO_STAT_AGGR_GLOBAL)
			return tc_diag_set(diag, "", 0, 0, -EINVAL, "counting switched on and "
					   "off (regions, a control, a delay) is for a program "
					   "tacho runs, without intervals, breakdowns or "
					   "simulation");
		if (o->delay_ms < -1)
			return tc_diag_set(diag, "", 0, 0, -EINVAL, "bad delay %d ms (-1: only "
					   "a command enables)", o->delay_ms);
		if (o->delay_ms == -1 && !o->control && !o->regions_only)
			return tc_diag_set(diag, "", 0, 0, -EINVAL, "a delay of -1 waits for a "
					   "command, and nothing would send one (a control, or "
					   "regions)");
		if (o->control && o->control_fd < 0)
			return tc_diag_set(diag, "", 0, 0, -EINVAL, "no control descriptor");
	}
	aggr = STAT_OPTS_HAS(o, cgroup_pairs) ? o->aggr : TACHO_STAT_AGGR_GLOBAL;
	err = aggr_check(o, aggr, sim != NULL, repeat, tacho_evlist_count(o->events), diag);
	if (err)
		return err;
	if (sim) {
		/* no counters: every event goes into the one run, where the simulator
		 * gives it a value or says why not */
		pmu.known = false;
		sched_flags = TACHO_SCHED_MULTIPLEX;
	} else if (o->pmu) {
		if (o->pmu->sz < TC_PMU_COUNTERS_SZ_V1)
			return -EINVAL;
		tc_sized_get(&pmu, sizeof(pmu), o->pmu, o->pmu->sz);
		pmu.sz = sizeof(pmu);
	} else {
		err = tacho_pmu_counters_detect(&pmu);
		if (err)
			return err;
	}
	err = stat_new(o, repeat, &s);
	if (err)
		return err;
	s->aggr = aggr;
	s->switched = !sim && switched(o);
	if (sim) {
		const struct tacho_sim_machine *m = tacho_sim_machine(sim);
		s->simulated = true;
		s->machine = *m;
		s->machine_source = tc_strdup(m->source ? m->source : "");
		s->machine_note = tc_strdup(m->note ? m->note : "");
		s->machine_mcpu_source = tc_strdup(m->mcpu_source ? m->mcpu_source : "");
		if (!s->machine_source || !s->machine_note || !s->machine_mcpu_source) {
			err = -ENOMEM;
			goto out_free;
		}
		s->machine.source = s->machine_source;
		s->machine.note = s->machine_note;
		s->machine.mcpu_source = s->machine_mcpu_source;
	}
	if (!sim) {
		err = stat_user_only(o, s);
		if (err)
			goto out_free;
	}
	if (!sim && !(sched_flags & TACHO_SCHED_MULTIPLEX) && !o->interval_ms &&
	    (o->target == TACHO_TARGET_CHILD || (o->target == TACHO_TARGET_CPUS && program)) &&
	    !pmu.max_events)
		pmu.max_events = events_per_run(o);
	err = tacho_schedule_new(o->events, &pmu, sched_flags, &s->sched);
	if (err)
		goto out_free;
	nruns = tacho_schedule_nruns(s->sched);
	/* perf's -n: no events, and still one run of the program for its times */
	if (!nruns && !s->nev)
		nruns = 1;
	for (size_t e = 0; e < s->nev; e++) {
		const struct tc_sched_slot *sl = tc_schedule_slot(s->sched, (unsigned)e);
		s->ev[e].pub.run = sl->run;
		if (sl->why) {
			s->ev[e].why = tc_strdup(sl->why);
			s->ev[e].pub.status = TACHO_COUNT_NOT_COUNTED;
		}
	}
	if (nruns > 1 && !(o->target == TACHO_TARGET_CHILD ||
			   (o->target == TACHO_TARGET_CPUS && program))) {
		const char *what = o->target == TACHO_TARGET_CPUS ? "a count of CPUs with no "
				   "program" : "a running process";
		unsigned bps = 0;
		for (size_t e = 0; e < s->nev; e++)
			bps += s->ev[e].attr.type == PERF_TYPE_BREAKPOINT;
		/* breakpoints never share a debug register, multiplexed or not */
		if (pmu.breakpoints && bps > pmu.breakpoints)
			err = tc_diag_set(diag, "", 0, 0, -EINVAL,
					  "%u breakpoints asked, and at most %u count at once "
					  "(the CPU's debug registers, even with --multiplex): the "
					  "others need another run, and %s cannot be run again "
					  "(ask for at most %u)", bps, pmu.breakpoints, what,
					  pmu.breakpoints);
		else
			err = tc_diag_set(diag, "", 0, 0, -EINVAL,
					  "these events need %u runs to fit the counters, by %s, and "
					  "%s cannot be run again (%sfewer events)", nruns,
					  pmu.source, what, sched_flags & TACHO_SCHED_MULTIPLEX ?
					  "" : "use --multiplex, or ");
		goto out_free;
	}
	if (nruns > 1 && aggr == TACHO_STAT_AGGR_THREAD && o->target == TACHO_TARGET_CHILD) {
		err = tc_diag_set(diag, "", 0, 0, -EINVAL,
				  "these events need %u runs of the program to fit the counters "
				  "(%s); counts per thread need them counted in one run (use "
				  "--multiplex, or fewer events)", nruns, pmu.source);
		goto out_free;
	}
	err = units_setup(o, s, diag);
	if (err)
		goto out_free;
	if (nruns > 1 && o->interval_ms) {
		err = tc_diag_set(diag, "", 0, 0, -EINVAL,
				  "these events need %u runs of the program to fit the counters "
				  "(%s); intervals need them counted in one run (use --multiplex, "
				  "or fewer events)", nruns, pmu.source);
		goto out_free;
	}
	total = o->warmup + repeat * (nruns ? nruns : 1);
	/* more than one run of the program: the kernel's set-up of each kind of event
	 * (a software event's static key, a tracepoint's probe) held for the whole
	 * session, so that each run's opens and closes find it in place (engine.h) */
	if (!sim && total > 1 && s->nev) {
		const struct perf_event_attr **attrs = calloc(s->nev, sizeof(*attrs));
		if (!attrs) {
			err = -ENOMEM;
			goto out_free;
		}
		for (size_t e = 0; e < s->nev; e++)
			attrs[e] = &s->ev[e].attr;
		err = tc_perf_hold_open(attrs, s->nev, &hold);
		free(attrs);
		if (err < 0)
			goto out_free;
		err = 0;
	}
	for (unsigned w = 0; w < o->warmup && !s->cut && !stop_requested(o); w++) {
		if (o->on_progress)
			o->on_progress(o->progress_arg, progress, total);
		progress++;
		if (sim) {
			/* a warm-up under the simulator warms nothing: its caches start
			 * cold on every run */
			continue;
		}
		err = run_uncounted(o, s, diag);
		if (err)
			goto out_free;
	}
	for (unsigned k = 0; k < repeat && !s->cut && !stop_requested(o); k++) {
		s->done = k + 1;
		for (unsigned r = 0; r < nruns && !s->cut; r++) {
			if (r > 0 && stop_requested(o)) {
				s->interrupted = s->cut = true;
				break;
			}
			if (o->on_progress)
				o->on_progress(o->progress_arg, progress, total);
			progress++;
			/* a stop the callback asked for (a --pre command that failed)
			 * comes before the run, not after it */
			if (stop_requested(o)) {
				s->interrupted = s->cut = true;
				if (r == 0)
					s->done = k;
				break;
			}
			s->have_exit = false;
			if (sim)
				err = simulate_once(o, s, k, diag);
			else if (aggr == TACHO_STAT_AGGR_THREAD && o->target == TACHO_TARGET_CHILD)
				err = count_threads_once(o, s, r, k, diag);
			else if (aggr != TACHO_STAT_AGGR_GLOBAL || task_list(o))
				err = count_units_once(o, s, r, k, diag);
			else
				err = count_once(o, s, r, k, diag);
			if (err)
				goto out_free;
			/* the program's CPU time: of each repetition's first run, as the
			 * wall time is */
			if (s->have_exit && r == 0) {
				s->user_ns[k] = (double)s->exit.user_ns;
				s->sys_ns[k] = (double)s->exit.sys_ns;
			}
		}
	}
	tc_perf_hold_close(hold);
	hold = NULL;
	if (stop_requested(o))
		s->interrupted = s->cut = true;
	if (o->on_progress)
		o->on_progress(o->progress_arg, total, total);
	err = aggregate(s);
	if (err)
		goto out_free;
	*out = s;
	return 0;
out_free:
	tc_perf_hold_close(hold);
	tacho_stat_free(s);
	return err;
}

size_t tacho_stat_nevents(const struct tacho_stat *s)
{
	return s ? s->nev : 0;
}

const struct tacho_stat_event *tacho_stat_event(const struct tacho_stat *s, size_t i)
{
	return s && i < s->nev ? &s->ev[i].pub : NULL;
}

size_t tacho_stat_nmetrics(const struct tacho_stat *s)
{
	return s ? s->nmetrics : 0;
}

const struct tacho_metric *tacho_stat_metric(const struct tacho_stat *s, size_t i)
{
	return s && i < s->nmetrics ? &s->metrics[i] : NULL;
}

unsigned tacho_stat_repeats(const struct tacho_stat *s)
{
	return s ? s->done : 0;
}

unsigned tacho_stat_runs(const struct tacho_stat *s)
{
	unsigned n = s ? tacho_schedule_nruns(s->sched) : 0;

	/* a null run (no events) still ran the program once per repetition */
	return s && !n && !s->nev ? 1 : n;
}

double tacho_stat_wall_s(const struct tacho_stat *s)
{
	struct tc_welford w;

	if (!s)
		return NAN;
	tc_welford_init(&w);
	for (unsigned k = 0; k < s->done; k++)
		if (s->wall_ns[k] > 0)
			tc_welford_add(&w, s->wall_ns[k] * 1e-9);
	return tc_welford_mean(&w);
}

static double mean_s(const struct tacho_stat *s, const double *ns)
{
	struct tc_welford w;

	if (!s)
		return NAN;
	tc_welford_init(&w);
	for (unsigned k = 0; k < s->done; k++)
		if (isfinite(ns[k]))
			tc_welford_add(&w, ns[k] * 1e-9);
	return w.n ? tc_welford_mean(&w) : NAN;
}

double tacho_stat_user_s(const struct tacho_stat *s)
{
	return s ? mean_s(s, s->user_ns) : NAN;
}

double tacho_stat_sys_s(const struct tacho_stat *s)
{
	return s ? mean_s(s, s->sys_ns) : NAN;
}

bool tacho_stat_interrupted(const struct tacho_stat *s)
{
	return s && s->interrupted;
}

const struct tacho_exit *tacho_stat_exit(const struct tacho_stat *s)
{
	return s && s->have_exit ? &s->exit : NULL;
}

const struct tacho_schedule *tacho_stat_schedule(const struct tacho_stat *s)
{
	return s ? s->sched : NULL;
}

const struct tacho_sim_machine *tacho_stat_sim_machine(const struct tacho_stat *s)
{
	return s && s->simulated ? &s->machine : NULL;
}

const struct perf_event_attr *tc_stat_event_attr(const struct tacho_stat *s, size_t i)
{
	return &s->ev[i].attr;
}

const struct tacho_sim_result *tacho_stat_sim_result(const struct tacho_stat *s)
{
	return s ? s->sim_last : NULL;
}

size_t tacho_stat_nregions(const struct tacho_stat *s)
{
	return s ? s->nregions : 0;
}

const struct tacho_stat_region *tacho_stat_region(const struct tacho_stat *s, size_t i)
{
	return s && i < s->nregions ? &s->regions[i].pub : NULL;
}

enum tacho_stat_aggr tacho_stat_aggr(const struct tacho_stat *s)
{
	return s ? s->aggr : TACHO_STAT_AGGR_GLOBAL;
}

/* The units a breakdown shows: none without one (a list of tasks counted together
 * has one unit of its own inside). */
static size_t shown_units(const struct tacho_stat *s)
{
	return s && s->aggr != TACHO_STAT_AGGR_GLOBAL ? s->nunits : 0;
}

size_t tacho_stat_nunits(const struct tacho_stat *s)
{
	return shown_units(s);
}

const struct tacho_stat_unit *tacho_stat_unit(const struct tacho_stat *s, size_t u)
{
	return u < shown_units(s) ? &s->units[u].pub : NULL;
}

const struct tacho_stat_event *tacho_stat_unit_event(const struct tacho_stat *s, size_t u,
						     size_t i)
{
	if (u >= shown_units(s) || i >= s->nev || !s->units[u].asked[i])
		return NULL;
	return &s->units[u].ev[i].pub;
}
