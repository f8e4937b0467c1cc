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
#include "events/metrics.h"
#include "stat/schedule.h"
#include "stat/stat.h"
#include "stat/stat-int.h"
#include "events/events.h"
#include "events/user-only.h"
#include "util/util.h"
#include "tacho/counters.h"
#include "tacho/events.h"
#include "tacho/run.h"
#include "tacho/sim.h"
#include "tacho/stat.h"
/* --- waiting for a process that is not our child --- */

bool tc_stat_stop_requested(const struct tacho_stat_opts *o)
{
	return o->stop && *o->stop;
}

/* Sleeps until *stop, or the process or thread pid is gone (pid 0: only *stop). */
void tc_stat_wait_target(const struct tacho_stat_opts *o, pid_t pid)
{
	int pidfd = -1;

#ifdef SYS_pidfd_open
	if (pid > 0)
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	while (!tc_stat_stop_requested(o)) {
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

/* The processes or threads of a task target: the list (-p PID1,PID2), else pid. */
size_t tc_stat_task_count(const struct tacho_stat_opts *o)
{
	return TC_OPTS_HAS(o, tacho_stat_opts, npids) && o->npids && o->pids ? o->npids : 1;
}

pid_t tc_stat_task_at(const struct tacho_stat_opts *o, size_t i)
{
	return TC_OPTS_HAS(o, tacho_stat_opts, npids) && o->npids && o->pids ? o->pids[i] : o->pid;
}

/* Several tasks are counted as cells, a thread each, added up. */
bool tc_stat_task_list(const struct tacho_stat_opts *o)
{
	return (o->target == TACHO_TARGET_PROCESS || o->target == TACHO_TARGET_THREAD) &&
	       tc_stat_task_count(o) > 1;
}

void tc_stat_set_exec_diag(const struct tacho_stat_opts *o, struct tacho_diag *diag,
			   int exec_err)
{
	char buf[256];

	tacho_exec_strerror(o->argv[0], exec_err, buf, sizeof(buf));
	tc_diag_set(diag, o->argv[0], 0, 0, -TACHO_ENOSTART, "%s", buf);
	if (TC_OPTS_GET(o, tacho_stat_opts, exec_err, NULL))
		*o->exec_err = exec_err;
}

/* Runs the program once without counting per task (a warm-up, or the program of a
 * CPU-wide count, whose counters are the CPUs'). */
int tc_stat_run_uncounted(const struct tacho_stat_opts *o, struct tacho_stat *s,
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
		tc_stat_set_exec_diag(o, diag, exec_err);
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
	return TC_OPTS_HAS(o, tacho_stat_opts, delay_ms) &&
	       (o->regions_only || o->control || o->delay_ms != 0);
}

/* One repetition's count of an event into its result. */
void tc_stat_record(struct ev_res *r, const struct tacho_count *k, unsigned rep)
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

/* The specs of run `run`, group by group, which event each one is (*spec_ev), and room
 * for their counts: *n of each (free() them, even on an error). */
static int run_specs(const struct tacho_stat *s, unsigned run,
		     struct tacho_counter_spec **specs, unsigned **spec_ev,
		     struct tacho_count **counts, size_t *np)
{
	size_t n = 0;

	for (unsigned g = 0; g < tc_schedule_ngroups(s->sched, run); g++) {
		unsigned k;
		tc_schedule_group(s->sched, run, g, &k);
		n += k;
	}
	*specs = calloc(n ? n : 1, sizeof(**specs));
	*spec_ev = calloc(n ? n : 1, sizeof(**spec_ev));
	*counts = calloc(n ? n : 1, sizeof(**counts));
	if (!*specs || !*spec_ev || !*counts)
		return -ENOMEM;
	n = 0;
	for (unsigned g = 0; g < tc_schedule_ngroups(s->sched, run); g++) {
		unsigned k;
		const unsigned *ev = tc_schedule_group(s->sched, run, g, &k);
		for (unsigned i = 0; i < k; i++) {
			const struct ev_res *r = &s->ev[ev[i]];
			(*specs)[n].name = r->name;
			(*specs)[n].attr = &r->attr;
			(*specs)[n].group = k > 1 ? (int)g : TACHO_GROUP_NONE;
			(*spec_ev)[n] = ev[i];
			n++;
		}
	}
	*np = n;
	return 0;
}

/* The counters of a run's n specs over the target (*c), and the program started (not
 * yet exec'd: *ch) when tacho runs it; with ctl, sw made ready to switch them on and
 * off, and the regions' environment in cho. */
static int run_open(const struct tacho_stat_opts *o, const struct tacho_counter_spec *specs,
		    size_t n, bool ctl, struct tc_stat_control *sw,
		    struct tacho_child_opts *cho, struct tacho_child **ch,
		    struct tacho_counters **c, struct tacho_diag *diag)
{
	struct tacho_counters_opts co = { .sz = sizeof(co) };
	int err;

	co.target = o->target;
	co.pid = o->pid;
	co.cpus = o->cpus;
	co.ncpus = o->ncpus;
	co.no_inherit = TC_OPTS_GET(o, tacho_stat_opts, no_inherit, false);
	if (ctl) {
		err = tc_stat_control_prepare(sw, o->regions_only,
					      o->control ? o->control_fd : -1,
					      o->control ? o->control_ack_fd : -1, o->delay_ms);
		if (err)
			return err;
		if (o->regions_only)
			cho->env = sw->envp;
	}
	if (o->target == TACHO_TARGET_CHILD) {
		err = tacho_child_start(o->argv, cho, ch);
		if (err)
			return err;
		co.pid = tacho_child_pid(*ch);
		/* switched on and off by tacho, not by the exec: the program's task and
		 * what it creates, disabled until enabled */
		if (ctl)
			co.target = TACHO_TARGET_THREAD;
		tc_stat_control_forked(sw);
	}
	err = tacho_counters_open(&co, specs, n, sizeof(*specs), c);
	if (err == -ESRCH)
		tc_diag_set(diag, "", 0, 0, err, "no process or thread %d", (int)o->pid);
	return err;
}

/* The launched program's run once its exec returned err: the intervals and the
 * switching from then on, and its end. */
static int run_child(const struct tacho_stat_opts *o, struct tacho_stat *s,
		     struct tacho_child *ch, struct tacho_counters *c, struct ticker *t,
		     struct tc_stat_control *sw, unsigned run, unsigned rep, int err)
{
	bool ctl = switched(o);

	if (!err && t->o)
		err = tc_stat_ticker_start(t);
	if (!err && ctl)
		err = tc_stat_control_start(sw, c);
	if (!err)
		err = tacho_child_wait(ch, &s->exit);
	/* no command after the program's end: the counts stand still */
	tc_stat_control_exit(sw);
	if (ctl && run == 0)
		s->window_ns[rep] = (double)sw->on_ns;
	if (!err) {
		s->have_exit = true;
		/* a signal to us the program survived still ends the repetitions:
		 * this one is complete, the next does not start */
		if (tacho_child_signals(ch))
			s->interrupted = true;
		if (s->exit.signal || tacho_child_signals(ch))
			s->cut = true;
	}
	return err;
}

static int count_once(const struct tacho_stat_opts *o, struct tacho_stat *s, unsigned run,
		      unsigned rep, struct tacho_diag *diag)
{
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

	tc_stat_control_init(&sw);
	err = run_specs(s, run, &specs, &spec_ev, &counts, &n);
	if (!err)
		err = run_open(o, specs, n, switched(o), &sw, &cho, &ch, &c, diag);
	if (err)
		goto out;
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
		t.whole = tc_stat_never_multiplexed(s);
		t.rep = rep;
	}
	/* Intervals start once the program runs: a launched program's events are
	 * enabled by its exec, so a tick before tacho_child_exec returns would report
	 * an interval in which nothing could be enabled (on a loaded machine the exec
	 * can take longer than an interval). */
	if (!ch && t.o) {
		err = tc_stat_ticker_start(&t);
		if (err) {
			tc_stat_ticker_stop(&t, false);
			goto out;
		}
	}
	if (o->target == TACHO_TARGET_CHILD)
		t0 = now_ns();
	if (ch) {
		err = tacho_child_exec(ch, &exec_err);
		if (err == -TACHO_ENOSTART) {
			tc_stat_set_exec_diag(o, diag, exec_err);
			goto out;
		}
		err = run_child(o, s, ch, c, &t, &sw, run, rep, err);
	} else {
		tc_stat_wait_target(o, o->target == TACHO_TARGET_CPUS ? 0 : o->pid);
		if (tc_stat_stop_requested(o))
			s->interrupted = s->cut = true;
	}
	if (o->target != TACHO_TARGET_CHILD)
		tacho_counters_disable(c);
	t1 = now_ns();
	tc_stat_ticker_stop(&t, err == 0);
	if (err)
		goto out;
	err = tacho_counters_read(c, counts, n, sizeof(*counts));
	if (err)
		goto out;
	/* the clocks count in the first run: its wall time goes with them */
	if (run == 0)
		s->wall_ns[rep] = t1 - t0;
	for (size_t i = 0; i < n; i++)
		tc_stat_record(&s->ev[spec_ev[i]], &counts[i], rep);
out:
	tc_stat_control_exit(&sw);
	tacho_counters_free(c);
	tacho_child_free(ch);
	free(specs);
	free(spec_ev);
	free(counts);
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
int tc_stat_ev_res_init(struct ev_res *r, unsigned repeat, const char *name, const char *unit,
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
	tc_stat_regions_free(s);
	tacho_sim_result_free(s->sim_last);
	tc_schedule_free(s->sched);
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
		double scale = tc_evlist_scale(o->events, e);

		if (!(scale > 0) || !isfinite(scale))
			scale = 1.0;
		if (tc_stat_ev_res_init(r, repeat, tacho_evlist_name(o->events, e),
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
	if ((tc_stat_aggr_by_cpu(a) || a == TACHO_STAT_AGGR_CGROUP) && o->target != TACHO_TARGET_CPUS)
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
		if (!TC_OPTS_HAS(o, tacho_stat_opts, cgroup_pairs) || !o->ncgroups || !o->cgroups)
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
	if (TC_OPTS_HAS(o, tacho_stat_opts, cgroup_pairs) && o->aggr == TACHO_STAT_AGGR_CGROUP &&
	    !o->cgroup_pairs && o->ncgroups > 1)
		per *= o->ncgroups;
	if (rl.rlim_cur <= open_fds + RESERVE)
		return 1;
	avail = (unsigned long)(rl.rlim_cur - open_fds - RESERVE) / per;
	return avail == 0 ? 1 : avail > UINT_MAX ? 0 : (unsigned)avail;
}

/* The options' checks that need no counter and no session: -EINVAL with why. */
static int stat_check(const struct tacho_stat_opts *o, bool sim, bool program,
		      unsigned repeat, enum tacho_stat_aggr aggr, struct tacho_diag *diag)
{
	if (tacho_evlist_count(o->events) == 0 &&
	    !TC_OPTS_GET(o, tacho_stat_opts, null_run, false))
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no events to count");
	if (o->target == TACHO_TARGET_CHILD && !program)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no program to run");
	if ((o->target == TACHO_TARGET_PROCESS || o->target == TACHO_TARGET_THREAD) && program)
		return tc_diag_set(diag, "", 0, 0, -EINVAL,
				   "a process or thread target runs no program");
	for (size_t i = 0; tc_stat_task_list(o) && i < tc_stat_task_count(o); i++)
		if (tc_stat_task_at(o, i) <= 0)
			return tc_diag_set(diag, "", 0, 0, -EINVAL, "bad process or thread id "
					   "%d in the list", (int)tc_stat_task_at(o, i));
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
	return aggr_check(o, aggr, sim, repeat, tacho_evlist_count(o->events), diag);
}

/* The counters the schedule fits the events into: the caller's, the detected ones, or,
 * for a simulation, none (every event in one run: *sched_flags multiplexes). */
static int stat_pmu(const struct tacho_stat_opts *o, bool sim,
		    struct tacho_pmu_counters *pmu, unsigned *sched_flags)
{
	if (sim) {
		/* no counters: every event goes into the one run, where the simulator
		 * gives it a value or says why not */
		pmu->known = false;
		*sched_flags = TACHO_SCHED_MULTIPLEX;
	} else if (o->pmu) {
		if (o->pmu->sz < TC_PMU_COUNTERS_SZ_V1)
			return -EINVAL;
		tc_sized_get(pmu, sizeof(*pmu), o->pmu, o->pmu->sz);
		pmu->sz = sizeof(*pmu);
	} else {
		return tacho_pmu_counters_detect(pmu);
	}
	return 0;
}

/* The simulated machine, its strings the session's own. */
static int stat_sim_machine(struct tacho_stat *s, const struct tacho_sim *sim)
{
	const struct tacho_sim_machine *m = tacho_sim_machine(sim);

	s->simulated = true;
	s->machine = *m;
	s->machine_source = tc_strdup(m->source ? m->source : "");
	s->machine_note = tc_strdup(m->note ? m->note : "");
	s->machine_mcpu_source = tc_strdup(m->mcpu_source ? m->mcpu_source : "");
	if (!s->machine_source || !s->machine_note || !s->machine_mcpu_source)
		return -ENOMEM;
	s->machine.source = s->machine_source;
	s->machine.note = s->machine_note;
	s->machine.mcpu_source = s->machine_mcpu_source;
	return 0;
}

/* The runs a schedule over nruns runs allows: only a program can be run again, and
 * counts per thread of a program need one run. -EINVAL with why. */
static int runs_check(const struct tacho_stat_opts *o, const struct tacho_stat *s,
		      const struct tacho_pmu_counters *pmu, unsigned nruns,
		      unsigned sched_flags, bool program, struct tacho_diag *diag)
{
	if (nruns > 1 && !(o->target == TACHO_TARGET_CHILD ||
			   (o->target == TACHO_TARGET_CPUS && program))) {
		const char *what = o->target == TACHO_TARGET_CPUS ? "a count of CPUs with no "
				   "program" : "a running process";
		unsigned bps = 0;
		for (size_t e = 0; e < s->nev; e++)
			bps += s->ev[e].attr.type == PERF_TYPE_BREAKPOINT;
		/* breakpoints never share a debug register, multiplexed or not */
		if (pmu->breakpoints && bps > pmu->breakpoints)
			return tc_diag_set(diag, "", 0, 0, -EINVAL,
					  "%u breakpoints asked, and at most %u count at once "
					  "(the CPU's debug registers, even with --multiplex): the "
					  "others need another run, and %s cannot be run again "
					  "(ask for at most %u)", bps, pmu->breakpoints, what,
					  pmu->breakpoints);
		return tc_diag_set(diag, "", 0, 0, -EINVAL,
				  "these events need %u runs to fit the counters, by %s, and "
				  "%s cannot be run again (%sfewer events)", nruns,
				  pmu->source, what, sched_flags & TACHO_SCHED_MULTIPLEX ?
				  "" : "use --multiplex, or ");
	}
	if (nruns > 1 && s->aggr == TACHO_STAT_AGGR_THREAD && o->target == TACHO_TARGET_CHILD)
		return tc_diag_set(diag, "", 0, 0, -EINVAL,
				  "these events need %u runs of the program to fit the counters "
				  "(%s); counts per thread need them counted in one run (use "
				  "--multiplex, or fewer events)", nruns, pmu->source);
	return 0;
}

/* The session's schedule: the events spread over *nruns runs of the program (the
 * descriptors one run may hold bounding them), each event's run or why it has none,
 * and a breakdown's units. */
static int stat_schedule(const struct tacho_stat_opts *o, struct tacho_stat *s, bool sim,
			 struct tacho_pmu_counters *pmu, unsigned sched_flags, bool program,
			 unsigned *nruns, struct tacho_diag *diag)
{
	int err;

	if (!sim && !(sched_flags & TACHO_SCHED_MULTIPLEX) && !o->interval_ms &&
	    (o->target == TACHO_TARGET_CHILD || (o->target == TACHO_TARGET_CPUS && program)) &&
	    !pmu->max_events)
		pmu->max_events = events_per_run(o);
	err = tc_schedule_new(o->events, pmu, sched_flags, &s->sched);
	if (err)
		return err;
	*nruns = tc_schedule_nruns(s->sched);
	/* perf's -n: no events, and still one run of the program for its times */
	if (!*nruns && !s->nev)
		*nruns = 1;
	for (size_t e = 0; e < s->nev; e++) {
		const struct tc_sched_slot *sl = tc_schedule_slot(s->sched, (unsigned)e);
		s->ev[e].pub.run = sl->run;
		if (sl->why) {
			s->ev[e].why = tc_strdup(sl->why);
			s->ev[e].pub.status = TACHO_COUNT_NOT_COUNTED;
		}
	}
	err = runs_check(o, s, pmu, *nruns, sched_flags, program, diag);
	if (!err)
		err = tc_stat_units_setup(o, s, diag);
	if (err)
		return err;
	if (*nruns > 1 && o->interval_ms)
		return tc_diag_set(diag, "", 0, 0, -EINVAL,
				  "these events need %u runs of the program to fit the counters "
				  "(%s); intervals need them counted in one run (use --multiplex, "
				  "or fewer events)", *nruns, pmu->source);
	return 0;
}

/* More than one run of the program: the kernel's set-up of each kind of event (a
 * software event's static key, a tracepoint's probe) held for the whole session, so
 * that each run's opens and closes find it in place (engine.h). */
static int stat_hold(const struct tacho_stat *s, struct tc_perf_hold **hold)
{
	const struct perf_event_attr **attrs = calloc(s->nev, sizeof(*attrs));
	int err;

	if (!attrs)
		return -ENOMEM;
	for (size_t e = 0; e < s->nev; e++)
		attrs[e] = &s->ev[e].attr;
	err = tc_perf_hold_open(attrs, s->nev, hold);
	free(attrs);
	return err < 0 ? err : 0;
}

/* One run r of repetition k: simulated, or counted the way the target and the
 * breakdown need. */
static int stat_run_once(const struct tacho_stat_opts *o, struct tacho_stat *s, bool sim,
			 unsigned r, unsigned k, struct tacho_diag *diag)
{
	s->have_exit = false;
	if (sim)
		return tc_stat_simulate_once(o, s, k, diag);
	if (s->aggr == TACHO_STAT_AGGR_THREAD && o->target == TACHO_TARGET_CHILD)
		return tc_stat_count_threads_once(o, s, r, k, diag);
	if (s->aggr != TACHO_STAT_AGGR_GLOBAL || tc_stat_task_list(o))
		return tc_stat_count_units_once(o, s, r, k, diag);
	return count_once(o, s, r, k, diag);
}

/* The warm-up runs, then the repetitions, each of nruns runs, until done, cut short
 * or asked to stop; the progress told along the way, of total runs. */
static int stat_repeat(const struct tacho_stat_opts *o, struct tacho_stat *s, bool sim,
		       unsigned repeat, unsigned nruns, unsigned total,
		       struct tacho_diag *diag)
{
	unsigned progress = 0;
	int err;

	for (unsigned w = 0; w < o->warmup && !s->cut && !tc_stat_stop_requested(o); w++) {
		if (o->on_progress)
			o->on_progress(o->progress_arg, progress, total);
		progress++;
		if (sim) {
			/* a warm-up under the simulator warms nothing: its caches start
			 * cold on every run */
			continue;
		}
		err = tc_stat_run_uncounted(o, s, diag);
		if (err)
			return err;
	}
	for (unsigned k = 0; k < repeat && !s->cut && !tc_stat_stop_requested(o); k++) {
		s->done = k + 1;
		for (unsigned r = 0; r < nruns && !s->cut; r++) {
			if (r > 0 && tc_stat_stop_requested(o)) {
				s->interrupted = s->cut = true;
				break;
			}
			if (o->on_progress)
				o->on_progress(o->progress_arg, progress, total);
			progress++;
			/* a stop the callback asked for (a --pre command that failed)
			 * comes before the run, not after it */
			if (tc_stat_stop_requested(o)) {
				s->interrupted = s->cut = true;
				if (r == 0)
					s->done = k;
				break;
			}
			err = stat_run_once(o, s, sim, r, k, diag);
			if (err)
				return err;
			/* the program's CPU time: of each repetition's first run, as the
			 * wall time is */
			if (s->have_exit && r == 0) {
				s->user_ns[k] = (double)s->exit.user_ns;
				s->sys_ns[k] = (double)s->exit.sys_ns;
			}
		}
	}
	return 0;
}

int tacho_stat_run(const struct tacho_stat_opts *o, struct tacho_stat **out,
		   struct tacho_diag *diag)
{
	struct tacho_pmu_counters pmu = { .sz = sizeof(pmu) };
	const struct tacho_sim *sim = NULL;
	struct tacho_stat *s = NULL;
	struct tc_perf_hold *hold = NULL;
	unsigned repeat, nruns, total, sched_flags;
	enum tacho_stat_aggr aggr;
	bool program;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	if (!o || !out)
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(o, tacho_stat_opts, diag);
	if (err)
		return err;
	if (!o->events)
		return -EINVAL;
	*out = NULL;
	program = o->argv && o->argv[0];
	sched_flags = o->sched_flags;
	sim = TC_OPTS_GET(o, tacho_stat_opts, sim, NULL);
	repeat = o->repeat ? o->repeat : 1;
	aggr = TC_OPTS_HAS(o, tacho_stat_opts, cgroup_pairs) ? o->aggr : TACHO_STAT_AGGR_GLOBAL;
	err = stat_check(o, sim != NULL, program, repeat, aggr, diag);
	if (!err)
		err = stat_pmu(o, sim != NULL, &pmu, &sched_flags);
	if (!err)
		err = stat_new(o, repeat, &s);
	if (err)
		return err;
	s->aggr = aggr;
	s->switched = !sim && switched(o);
	err = sim ? stat_sim_machine(s, sim) : stat_user_only(o, s);
	if (!err)
		err = stat_schedule(o, s, sim != NULL, &pmu, sched_flags, program, &nruns, diag);
	if (err)
		goto out_free;
	total = o->warmup + repeat * (nruns ? nruns : 1);
	if (!sim && total > 1 && s->nev) {
		err = stat_hold(s, &hold);
		if (err)
			goto out_free;
	}
	err = stat_repeat(o, s, sim != NULL, repeat, nruns, total, diag);
	if (err)
		goto out_free;
	tc_perf_hold_close(hold);
	hold = NULL;
	if (tc_stat_stop_requested(o))
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
	unsigned n = s ? tc_schedule_nruns(s->sched) : 0;

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

const struct tacho_exit *tacho_stat_exit_status(const struct tacho_stat *s)
{
	return s && s->have_exit ? &s->exit : NULL;
}

const struct tc_schedule *tc_stat_schedule(const struct tacho_stat *s)
{
	return s ? s->sched : NULL;
}

const struct tacho_pmu_counters *tacho_stat_pmu_counters(const struct tacho_stat *s)
{
	return s && s->sched ? tc_schedule_counters(s->sched) : NULL;
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
