/* stat.c - a stat session: run a program (or watch a process, a thread, CPUs) as many
 * times as the schedule and the repetitions ask, count each run's share of the events,
 * and aggregate per event (mean, stddev, min, median, max, spread) with a status that
 * never turns "not counted" into zero. P5Stat's procedure (seed 000) with perf's
 * targets and intervals. */
#include <dirent.h>
#include <errno.h>
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
#include "measure/metrics.h"
#include "measure/schedule.h"
#include "measure/stat.h"
#include "measure/user-only.h"
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
	enum tacho_count_status *status; /* per repetition */
	bool *seen;                      /* the repetition's run for this event happened */
	int err;
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
	bool interrupted;
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
	struct tacho_count *prev, *cur, *out;  /* out: per event of the list */
	const struct tacho_count **outp;       /* the interval's counts: &out[e] */
	double t0, last;
};

static void emit_interval(struct ticker *t, double now)
{
	struct tacho_stat_interval iv;
	int err = tacho_counters_read(t->c, t->cur, t->n, sizeof(*t->cur));

	if (err) {
		/* a missing line must not pass for a quiet interval; prev and last stay,
		 * so the next interval covers this one too */
		tc_log(TACHO_LOG_WARN, "the interval ending at %.3f s is not reported: cannot "
		       "read the counters: %s", (now - t->t0) * 1e-9, tacho_strerror(err));
		return;
	}
	for (size_t e = 0; e < t->nev; e++) {
		memset(&t->out[e], 0, sizeof(t->out[e]));
		t->out[e].name = t->s->ev[e].name;
		t->out[e].status = TACHO_COUNT_NOT_COUNTED;
		t->out[e].value = NAN;
		t->out[e].why = t->s->ev[e].pub.why ? t->s->ev[e].pub.why
						    : "not counted in this run of the program";
		t->out[e].hint = t->s->ev[e].pub.why ? t->s->ev[e].pub.hint : TACHO_HINT_NONE;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct tacho_count *c = &t->cur[i], *p = &t->prev[i];
		struct tacho_count *o = &t->out[t->spec_ev[i]];
		const struct ev_res *r = &t->s->ev[t->spec_ev[i]];
		uint64_t d_raw, d_ena, d_run;

		o->err = c->err;
		o->why = c->why;
		o->hint = c->hint;
		if (c->status == TACHO_COUNT_NOT_SUPPORTED) {
			o->status = c->status;
			continue;
		}
		d_raw = c->raw - p->raw;
		d_ena = c->enabled_ns - p->enabled_ns;
		d_run = c->running_ns - p->running_ns;
		o->raw = d_raw;
		o->enabled_ns = d_ena;
		o->running_ns = d_run;
		o->why = NULL;
		o->hint = TACHO_HINT_NONE;
		if (d_run == 0 && d_ena == 0 && c->enabled_ns > 0) {
			/* A task-bound event's clocks stand still while its task is off the
			 * CPU: the program slept through the interval, so nothing of it can
			 * have been counted and the exact answer is 0 (d_raw is then 0). Not
			 * "not counted": the event was on its counter whenever it could be. */
			o->status = TACHO_COUNT_COUNTED;
			o->value = (double)d_raw * r->scale;
			o->coverage = 1.0;
			continue;
		}
		if (d_run == 0) {
			o->status = TACHO_COUNT_NOT_COUNTED;
			o->why = d_ena ? "no counter during this interval"
				       : "not enabled during this interval";
			continue;
		}
		if (d_run >= d_ena) {
			o->status = TACHO_COUNT_COUNTED;
			o->value = (double)d_raw * r->scale;
			o->coverage = 1.0;
		} else {
			o->status = TACHO_COUNT_MULTIPLEXED;
			o->value = tc_count_scale(d_raw, d_ena, d_run) * r->scale;
			o->coverage = (double)d_run / (double)d_ena;
		}
	}
	iv.t_s = (now - t->t0) * 1e-9;
	iv.len_s = (now - t->last) * 1e-9;
	iv.n = t->nev;
	iv.counts = t->outp;
	t->o->on_interval(t->o->interval_arg, &iv);
	t->last = now;
	memcpy(t->prev, t->cur, t->n * sizeof(*t->cur));
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

	t->prev = calloc(t->n ? t->n : 1, sizeof(*t->prev));
	t->cur = calloc(t->n ? t->n : 1, sizeof(*t->cur));
	t->out = calloc(t->nev ? t->nev : 1, sizeof(*t->out));
	t->outp = calloc(t->nev ? t->nev : 1, sizeof(*t->outp));
	if (!t->prev || !t->cur || !t->out || !t->outp)
		return -ENOMEM;
	for (size_t e = 0; e < t->nev; e++)
		t->outp[e] = &t->out[e];
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
	free(t->out);
	free(t->outp);
	t->prev = t->cur = t->out = NULL;
	t->outp = NULL;
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

static void set_exec_diag(const struct tacho_stat_opts *o, struct tacho_diag *diag,
			  int exec_err)
{
	char buf[256];

	tacho_exec_strerror(o->argv[0], exec_err, buf, sizeof(buf));
	tc_diag_set(diag, o->argv[0], 0, 0, -TACHO_ENOSTART, "%s", buf);
	if (STAT_OPTS_HAS(o, exec_err) && o->exec_err)
		*o->exec_err = exec_err;
}

/* Runs the program once without counting (a warm-up). */
static int run_uncounted(const struct tacho_stat_opts *o, struct tacho_stat *s,
			 struct tacho_diag *diag)
{
	struct tacho_child_opts co = { .sz = sizeof(co), .forward_signals = true };
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
		if (s->exit.signal || tacho_child_signals(ch))
			s->interrupted = true;
	}
	tacho_child_free(ch);
	return err;
}

static int count_once(const struct tacho_stat_opts *o, struct tacho_stat *s, unsigned run,
		      unsigned rep, struct tacho_diag *diag)
{
	struct tacho_counters_opts co = { .sz = sizeof(co) };
	struct tacho_child_opts cho = { .sz = sizeof(cho), .forward_signals = true };
	struct tacho_counter_spec *specs = NULL;
	struct tacho_count *counts = NULL;
	struct tacho_counters *c = NULL;
	struct tacho_child *ch = NULL;
	struct ticker t = { 0 };
	unsigned *spec_ev = NULL;
	size_t n = 0;
	double t0, t1;
	int err = 0, exec_err = 0;

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
	if (o->target == TACHO_TARGET_CHILD) {
		err = tacho_child_start(o->argv, &cho, &ch);
		if (err)
			goto out;
		co.pid = tacho_child_pid(ch);
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
		if (!err)
			err = tacho_child_wait(ch, &s->exit);
		if (!err) {
			s->have_exit = true;
			/* a signal to us the program survived still ends the repetitions:
			 * this one is complete, the next does not start */
			if (s->exit.signal || tacho_child_signals(ch))
				s->interrupted = true;
		}
	} else {
		wait_target(o, o->target == TACHO_TARGET_CPUS ? 0 : o->pid);
		if (stop_requested(o))
			s->interrupted = true;
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
	for (size_t i = 0; i < n; i++) {
		struct ev_res *r = &s->ev[spec_ev[i]];
		const struct tacho_count *k = &counts[i];

		r->seen[rep] = true;
		r->status[rep] = k->status;
		r->coverage[rep] = k->coverage;
		r->values[rep] = (k->status == TACHO_COUNT_COUNTED ||
				  k->status == TACHO_COUNT_MULTIPLEXED) && isfinite(k->value)
					 ? k->value * r->scale
					 : NAN;
		if (k->why && !r->why) {
			r->why = tc_strdup(k->why);
			r->hint = k->hint;
		}
		if (k->err && !r->err)
			r->err = k->err;
	}
out:
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
		s->interrupted = true;
	for (size_t e = 0; e < s->nev; e++) {
		struct ev_res *r = &s->ev[e];
		const char *why = NULL;
		uint64_t v;

		r->seen[rep] = true;
		if (tacho_sim_result_value(res, &r->attr, &v, &why) == 0) {
			r->status[rep] = TACHO_COUNT_SIMULATED;
			r->coverage[rep] = 1.0;
			r->values[rep] = (double)v * r->scale;
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
		struct tacho_stat_event *p = &r->pub;
		struct tc_stats st;
		unsigned nv = 0, whole = 0, nsim = 0, nseen = 0;
		double cov = 0;
		enum tacho_count_status first_bad = TACHO_COUNT_NOT_COUNTED;
		bool have_bad = false;

		for (unsigned k = 0; k < s->done; k++) {
			nseen += r->seen[k];
			if (isfinite(r->values[k])) {
				vals[nv++] = r->values[k];
				cov += r->coverage[k];
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
		p->err = r->err;
		/* over the repetitions whose run for this event happened: a session cut
		 * short by a signal leaves later runs out, which is no multiplexing */
		p->coverage = nseen ? cov / nseen : 0;
		err = tc_stats_compute(vals, nv, &st);
		if (err)
			break;
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
				r->why = tc_strdup(p->run >= 0 && s->interrupted
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
		in[e].name = r->name;
		in[e].attr = &r->attr;
		in[e].has_value = nv > 0 && r->scale != 0;
		in[e].value = in[e].has_value ? st.mean / r->scale : 0;
	}
	tc_welford_init(&wall);
	for (unsigned k = 0; k < s->done; k++)
		if (s->wall_ns[k] > 0)
			tc_welford_add(&wall, s->wall_ns[k]);
	/* a simulation's wall time is valgrind's, dozens of times the program's: no rate
	 * per second of it would mean anything */
	if (!err)
		err = tc_metrics_compute(in, s->nev,
					 wall.n && !s->simulated ? tc_welford_mean(&wall) : 0,
					 &s->metrics, &s->nmetrics);
	free(vals);
	free(in);
	return err;
}

void tacho_stat_free(struct tacho_stat *s)
{
	if (!s)
		return;
	for (size_t e = 0; e < s->nev; e++) {
		struct ev_res *r = &s->ev[e];
		free(r->name);
		free(r->unit);
		free(r->why);
		free(r->values);
		free(r->coverage);
		free(r->status);
		free(r->seen);
	}
	free(s->ev);
	free(s->wall_ns);
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
	if (!s->ev || !s->wall_ns)
		goto out_oom;
	for (size_t e = 0; e < n; e++) {
		struct ev_res *r = &s->ev[e];
		const char *unit = tacho_evlist_unit(o->events, e);

		r->name = tc_strdup(tacho_evlist_name(o->events, e));
		r->unit = tc_strdup(unit ? unit : "");
		r->scale = tacho_evlist_scale(o->events, e);
		if (!(r->scale > 0) || !isfinite(r->scale))
			r->scale = 1.0;
		r->values = malloc(repeat * sizeof(*r->values));
		r->coverage = calloc(repeat, sizeof(*r->coverage));
		r->status = calloc(repeat, sizeof(*r->status));
		r->seen = calloc(repeat, sizeof(*r->seen));
		if (!r->name || !r->unit || !r->values || !r->coverage || !r->status || !r->seen)
			goto out_oom;
		for (unsigned k = 0; k < repeat; k++)
			r->values[k] = NAN;
		if (tacho_evlist_attr(o->events, e, &r->attr) != 0)
			goto out_oom;
		r->pub.name = r->name;
		r->pub.unit = r->unit;
		r->pub.value = NAN;
	}
	*out = s;
	return 0;
out_oom:
	tacho_stat_free(s);
	return -ENOMEM;
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
	unsigned repeat, nruns, total, progress = 0, sched_flags;
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
	if (tacho_evlist_count(o->events) == 0)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no events to count");
	if (o->target == TACHO_TARGET_CHILD && !program)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no program to run");
	if ((o->target == TACHO_TARGET_PROCESS || o->target == TACHO_TARGET_THREAD) && program)
		return tc_diag_set(diag, "", 0, 0, -EINVAL,
				   "a process or thread target runs no program");
	repeat = o->repeat ? o->repeat : 1;
	if (repeat > 1000000)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "too many repetitions (%u)", repeat);
	if ((repeat > 1 || o->warmup) && !program)
		return tc_diag_set(diag, "", 0, 0, -EINVAL,
				   "repetitions and warm-up runs need a program to run");
	if (sim && (o->target != TACHO_TARGET_CHILD || o->interval_ms))
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "a simulation runs a program of its "
				   "own, and has no intervals");
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
		err = tc_diag_set(diag, "", 0, 0, -EINVAL,
				  "these events need %u runs to fit the counters (%s), and a "
				  "running process cannot be run again (use --multiplex, or fewer "
				  "events)", nruns, pmu.source);
		goto out_free;
	}
	if (nruns > 1 && o->interval_ms) {
		err = tc_diag_set(diag, "", 0, 0, -EINVAL,
				  "these events need %u runs of the program to fit the counters "
				  "(%s); intervals need them counted in one run (use --multiplex, "
				  "or fewer events)", nruns, pmu.source);
		goto out_free;
	}
	total = o->warmup + repeat * (nruns ? nruns : 1);
	for (unsigned w = 0; w < o->warmup && !s->interrupted && !stop_requested(o); w++) {
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
	for (unsigned k = 0; k < repeat && !s->interrupted && !stop_requested(o); k++) {
		s->done = k + 1;
		for (unsigned r = 0; r < nruns && !s->interrupted; r++) {
			if (r > 0 && stop_requested(o)) {
				s->interrupted = true;
				break;
			}
			if (o->on_progress)
				o->on_progress(o->progress_arg, progress, total);
			progress++;
			err = sim ? simulate_once(o, s, k, diag) : count_once(o, s, r, k, diag);
			if (err)
				goto out_free;
		}
	}
	if (stop_requested(o))
		s->interrupted = true;
	if (o->on_progress)
		o->on_progress(o->progress_arg, total, total);
	err = aggregate(s);
	if (err)
		goto out_free;
	*out = s;
	return 0;
out_free:
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
	return s ? tacho_schedule_nruns(s->sched) : 0;
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
