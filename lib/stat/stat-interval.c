/* stat-interval.c - a stat session's intervals (-I): a helper thread reads the
 * counters every interval_ms while a run goes on, and hands each interval's counts,
 * the whole session's and each unit's of a breakdown, to the caller's callback. */
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
#include "events/user-only.h"
#include "util/util.h"
#include "tacho/counters.h"
#include "tacho/events.h"
#include "tacho/run.h"
#include "tacho/sim.h"
#include "tacho/stat.h"
#include "stat/stat-int.h"

/* --- intervals: a helper thread reads the counters every interval_ms --- */


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
		int err = tc_stat_cell_read(t->s, t->cells[c], t->tmp, t->n);

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
	    (c->enabled_ns > 0 || (enabled && c->why != tc_stat_cell_ended_why))) {
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
bool tc_stat_never_multiplexed(const struct tacho_stat *s)
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

int tc_stat_ticker_start(struct ticker *t)
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
void tc_stat_ticker_stop(struct ticker *t, bool final)
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
