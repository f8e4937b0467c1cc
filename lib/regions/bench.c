/* bench.c - the microbenchmark harness: warm-up, trials timed with the TSC and counted
 * with the events, the measuring cost subtracted (or cancelled by the difference
 * method), outliers culled by a stated rule, statistics, and a check of the machine. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "regions/bench.h"
#include "regions/measure-set.h"
#include "output/output.h"
#include "tsc/tsc.h"
#include "tacho/bench.h"
#include "tacho/errors.h"
#include "tacho/events.h"
#include "tacho/output.h"
#include "tacho/tsc.h"

/* --- the environment --- */

static void warn(struct tacho_bench_env *e, const char *fmt, ...) TC_PRINTF(2, 3);
static void warn(struct tacho_bench_env *e, const char *fmt, ...)
{
	va_list ap;

	if (e->nwarnings == TACHO_BENCH_WARN_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(e->warnings[e->nwarnings++], sizeof(e->warnings[0]), fmt, ap);
	va_end(ap);
}

void tc_bench_env_eval(struct tacho_bench_env *e)
{
	e->nwarnings = 0;
	if (e->governor[0] && strcmp(e->governor, "performance"))
		warn(e, "the cpufreq governor is '%s': the clock may change during the run "
		     "(set 'performance')", e->governor);
	if (e->vm)
		warn(e, "running in a virtual machine: the hypervisor can take the CPU away "
		     "(see steal time in /proc/stat)");
	if (!e->tsc_invariant)
		warn(e, "the TSC is not invariant: its rate may follow the core clock, so ticks "
		     "are not time");
	if (e->ncpus > 0 && e->runnable >= e->ncpus)
		warn(e, "%d other runnable task%s on %d CPU%s: this benchmark shares the CPU",
		     e->runnable, e->runnable == 1 ? "" : "s", e->ncpus, e->ncpus == 1 ? "" : "s");
	else if (e->ncpus > 0 && e->loadavg1 >= 0.5 * e->ncpus)
		warn(e, "load average %.2f on %d CPU%s: other work competes for the CPU",
		     e->loadavg1, e->ncpus, e->ncpus == 1 ? "" : "s");
}

/* The first version of struct tacho_bench_env ends at warnings. */
#define ENV_SZ_V1 tc_offsetofend(struct tacho_bench_env, warnings)

/* Fills the library's struct. */
static void env_read(struct tacho_bench_env *out)
{
	const struct tacho_tsc_info *ti = tc_tsc_info();
	char line[256];

	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	if (tc_read_line_file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
			      out->governor, sizeof(out->governor)))
		out->governor[0] = 0;
	out->vm = ti->hypervisor;
	out->tsc_invariant = ti->invariant;
	out->ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (tc_read_line_file("/proc/loadavg", line, sizeof(line)) == 0) {
		int run = 0, all = 0;
		/* "0.05 0.10 0.08 2/123 4567": the fourth field counts runnable entities,
		 * this thread included */
		if (sscanf(line, "%lf %*f %*f %d/%d", &out->loadavg1, &run, &all) == 3)
			out->runnable = run > 0 ? run - 1 : 0;
	}
	tc_bench_env_eval(out);
}

int tacho_bench_env_check(struct tacho_bench_env *out)
{
	struct tacho_bench_env e;

	if (!out || out->sz < ENV_SZ_V1)
		return -EINVAL;
	env_read(&e);
	tc_sized_put_sz(out, &e, sizeof(e));
	return 0;
}

/* --- statistics --- */

int tc_bench_stats(double *v, size_t n, double mode_bin, struct tacho_bench_stats *out)
{
	struct tc_stats s;
	int err;

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n) {
		out->min = out->median = out->mode = out->mean = out->stddev = out->max = NAN;
		out->p10 = out->p25 = out->p75 = out->p90 = out->p99 = NAN;
		return 0;
	}
	err = tc_stats_compute(v, n, &s);
	if (err)
		return err;
	tc_stats_sort(v, n);
	out->min = s.min;
	out->max = s.max;
	out->mean = s.mean;
	out->stddev = s.stddev;
	out->median = s.median;
	out->mode = tc_stats_mode_sorted(v, n, mode_bin);
	out->p10 = tc_stats_percentile_sorted(v, n, 10);
	out->p25 = tc_stats_percentile_sorted(v, n, 25);
	out->p75 = tc_stats_percentile_sorted(v, n, 75);
	out->p90 = tc_stats_percentile_sorted(v, n, 90);
	out->p99 = tc_stats_percentile_sorted(v, n, 99);
	return 0;
}

/* Both tails, not only the slow one. With the difference method a trial's value is
 * T(2k) - T(k), and an interrupt in the k-call run makes it as much too small as one in
 * the 2k-call run makes it too large: a rule that culled only slow trials kept every
 * fast outlier, so that the mean fell below the median and the minimum went negative
 * (-1,232 to -8,242 ticks per call in four runs of four on a bhyve guest). A robust
 * estimator alone (the median) would have left the mean, the stddev and the extremes,
 * which the result also reports, over the outliers; a symmetric rule around the median
 * keeps every figure over the same clean trials. With the subtraction a trial faster
 * than the median by k MADs is not the body either (the empty trials' median is
 * subtracted from it; nothing makes code faster than itself), and culling it costs
 * nothing. */
size_t tc_bench_cull(double *v, size_t n, double k, double floor, double **aux, size_t n_aux)
{
	struct tc_stats s;
	size_t kept = 0;

	if (k < 0 || n < 3 || tc_stats_compute(v, n, &s))
		return n;
	double limit = k * (s.mad > floor ? s.mad : floor);
	for (size_t i = 0; i < n; i++) {
		if (fabs(v[i] - s.median) > limit)
			continue;
		v[kept] = v[i];
		for (size_t a = 0; a < n_aux; a++)
			aux[a][kept] = aux[a][i];
		kept++;
	}
	return kept;
}

/* The rule is the kept trials' range, not an interval around the median: the result
 * reports the minimum and the low percentiles as times too, so every kept trial has to
 * be a possible one. A trial's per-call time of 0 or less means the body's calls left
 * no trace in it (2k calls no longer than k; a trial no longer than the median empty
 * one): the noise of one trial is as large as the body, and no figure of the
 * distribution is the body's time. A count of 0 per call is a count (no page fault),
 * only one below 0 is impossible. */
bool tc_bench_noise(struct tacho_bench_stats *s, bool time, bool difference, const char *unit,
		    char *why, size_t size)
{
	why[0] = '\0';
	if (!s->n || (time ? s->min > 0 : s->min >= 0))
		return false;
	if (time)
		snprintf(why, size, "kept trials measured %.6g to %.6g %s per call, not all "
			 "above 0 (%s): below the noise; more reps per trial lift it above",
			 s->min, s->max, unit,
			 difference ? "2k calls took no longer than k" :
				      "a trial took no longer than the median empty one");
	else
		snprintf(why, size, "kept trials counted %.6g to %.6g per call, some below 0 "
			 "(%s): below the noise", s->min, s->max,
			 difference ? "2k calls counted fewer than k" :
				      "a trial counted fewer than the median empty one");
	s->min = s->median = s->mode = s->mean = s->stddev = s->max = NAN;
	s->p10 = s->p25 = s->p75 = s->p90 = s->p99 = NAN;
	return true;
}

/* --- the run --- */

struct trial_ctx {
	tacho_bench_fn *fn;
	void *arg;
	struct tc_measure_set *m;
	size_t nev;
	uint64_t *c0, *c1;
};

/* One trial of reps calls: counters first and the TSC last at the start, the other
 * way round at the end, as regions do. Deltas go to *ticks and ev[0..nev-1]. */
static int trial(struct trial_ctx *t, unsigned reps, int64_t *ticks, int64_t *ev)
{
	uint64_t a, b;
	int err;

	if (t->nev && (err = tc_measure_set_read(t->m, t->c0)))
		return err;
	a = tacho_tsc_begin();
	for (unsigned r = 0; r < reps; r++)
		t->fn(t->arg);
	b = tacho_tsc_end();
	if (t->nev && (err = tc_measure_set_read(t->m, t->c1)))
		return err;
	*ticks = (int64_t)(b - a);
	for (size_t i = 0; i < t->nev; i++)
		ev[i] = (int64_t)(t->c1[i] - t->c0[i]);
	return 0;
}

static void nop(void *arg)
{
	(void)arg;
}

/* A result as the library allocates it: the public struct and what it points to. */
struct bench_result {
	struct tacho_bench_result pub;
	struct tacho_bench_stats ticks, ns;
	struct tacho_bench_stats *events;         /* [nevents] */
	const struct tacho_bench_stats **eventp;  /* [nevents] &events[i]: pub.events */
	struct tacho_bench_env env;
};

void tacho_bench_result_free(struct tacho_bench_result *r)
{
	struct bench_result *br = (struct bench_result *)r;

	if (!r)
		return;
	for (size_t i = 0; i < r->nevents; i++) {
		free(r->event_names ? r->event_names[i] : NULL);
		free(r->event_why ? r->event_why[i] : NULL);
		free(r->event_noise ? r->event_noise[i] : NULL);
	}
	free(r->event_names);
	free(r->event_why);
	free(r->event_noise);
	free(br->events);
	free(br->eventp);
	free(br);
}

struct tacho_bench_result *tc_bench_result_new(size_t nev)
{
	struct bench_result *br = calloc(1, sizeof(*br));
	struct tacho_bench_result *r;

	if (!br)
		return NULL;
	r = &br->pub;
	r->ticks = &br->ticks;
	r->ns = &br->ns;
	r->env = &br->env;
	r->nevents = nev;
	r->event_names = calloc(nev + 1, sizeof(char *));
	r->event_why = calloc(nev + 1, sizeof(char *));
	r->event_noise = calloc(nev + 1, sizeof(char *));
	br->events = calloc(nev + 1, sizeof(*br->events));
	br->eventp = calloc(nev + 1, sizeof(*br->eventp));
	r->events = br->eventp;
	if (!r->event_names || !r->event_why || !r->event_noise || !br->events || !br->eventp) {
		tacho_bench_result_free(r);
		return NULL;
	}
	for (size_t i = 0; i < nev; i++)
		br->eventp[i] = &br->events[i];
	return r;
}

int tc_bench_result_finish(struct tacho_bench_result *r, double *tv, double **evv,
			   unsigned trials, double cull_k, double mode_bin)
{
	struct bench_result *br = (struct bench_result *)r;
	double bin = mode_bin > 0 ? mode_bin : 1.0;
	char why[sizeof(r->noise)];
	double *nsv;
	int err;

	r->trials = trials;
	if (cull_k < 0)
		snprintf(r->cull_rule, sizeof(r->cull_rule), "none: every trial kept");
	else
		snprintf(r->cull_rule, sizeof(r->cull_rule),
			 "trials farther than %g x max(MAD, 1 tick) from the median of ticks per "
			 "call culled, on both sides", cull_k);
	r->kept = (unsigned)tc_bench_cull(tv, trials, cull_k, 1.0, evv, r->nevents);
	r->culled = r->trials - r->kept;

	/* ns from ticks, per trial, before tv is sorted by the statistics */
	nsv = calloc(r->kept ? r->kept : 1, sizeof(double));
	if (!nsv)
		return -ENOMEM;
	for (unsigned i = 0; i < r->kept; i++)
		nsv[i] = r->tsc_hz > 0 ? tv[i] * 1e9 / r->tsc_hz : NAN;
	err = tc_bench_stats(tv, r->kept, bin, &br->ticks);
	if (!err)
		err = r->tsc_hz > 0 ? tc_bench_stats(nsv, r->kept, bin * 1e9 / r->tsc_hz, &br->ns)
				    : tc_bench_stats(nsv, 0, 1, &br->ns);
	free(nsv);
	if (err)
		return err;
	/* ticks decide; ns are the same trials in another unit, so they follow */
	r->below_noise = tc_bench_noise(&br->ticks, true, r->difference, "ticks", r->noise,
					sizeof(r->noise));
	if (r->below_noise)
		tc_bench_noise(&br->ns, true, r->difference, "ns", why, sizeof(why));
	for (size_t q = 0; q < r->nevents; q++) {
		err = tc_bench_stats(evv[q], r->event_why[q] ? 0 : r->kept, bin, &br->events[q]);
		if (err)
			return err;
		if (tc_bench_noise(&br->events[q], false, r->difference, NULL, why, sizeof(why)) &&
		    !(r->event_noise[q] = tc_strdup(why)))
			return -ENOMEM;
	}
	return 0;
}

/* The options' first version (TC_OPTS_VALID) ends at difference. */
#define TC_OPTS_V1_tacho_bench_opts tc_offsetofend(struct tacho_bench_opts, difference)

/* The cost of measuring: trials empty trials (fn a no-op, no repetition) of t, each
 * trial's ticks and t->nev events into cal (trials rows of nev + 1), and each column's
 * median into ovh[0] (ticks) and ovh[1..nev]. 0, -ENOMEM, or a trial's error. */
static int measure_overhead(const struct trial_ctx *t, unsigned trials, int64_t *cal,
			    double *ovh)
{
	struct trial_ctx e = *t;
	size_t nev = t->nev;
	double *col;
	int err;

	e.fn = nop;
	for (unsigned i = 0; i < trials; i++) {
		err = trial(&e, 0, &cal[(size_t)i * (nev + 1)], &cal[(size_t)i * (nev + 1) + 1]);
		if (err)
			return err;
	}
	col = calloc(trials, sizeof(*col));
	if (!col)
		return -ENOMEM;
	for (size_t q = 0; q < nev + 1; q++) {
		for (unsigned i = 0; i < trials; i++)
			col[i] = (double)cal[(size_t)i * (nev + 1) + q];
		tc_stats_sort(col, trials);
		/* the median: the middle value, or the mean of the two middle ones */
		ovh[q] = tc_stats_percentile_sorted(col, trials, 50);
	}
	free(col);
	return 0;
}

int tacho_bench_run(tacho_bench_fn *fn, void *arg, const struct tacho_bench_opts *opts,
		    struct tacho_bench_result **out, struct tacho_diag *diag)
{
	struct tacho_bench_opts o;
	struct tacho_evlist *list = NULL;
	struct tc_event_set evs = { 0 };
	struct tc_measure_set m = { 0 };
	struct tacho_bench_result *r = NULL;
	int64_t *ev_a = NULL, *ev_b = NULL, *cal = NULL;
	double *tv = NULL, **evv = NULL, *ovh = NULL;
	struct trial_ctx t = { 0 };
	size_t nev = 0;
	int err;

	*out = NULL;
	if (tc_diag_check(diag))
		return -EINVAL;
	if (!fn)
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(opts, tacho_bench_opts, diag);
	if (err)
		return err;
	TC_OPTS_COPY(&o, opts);
	o.warmup = o.warmup ? o.warmup : 10;
	o.trials = o.trials ? o.trials : 101;
	o.reps = o.reps ? o.reps : 1;
	o.cull_k = o.cull_k ? o.cull_k : 10;
	if (o.difference && o.reps > UINT32_MAX / 2)
		return -EINVAL;

	if (o.events && *o.events) {
		err = tacho_evlist_parse(o.events, &list, diag);
		if (err)
			return err;
		err = tc_event_set_from_list(&evs, list);
		tacho_evlist_free(list);
		if (err)
			return err;
		nev = evs.n;
	}
	r = tc_bench_result_new(nev);
	tv = calloc(o.trials, sizeof(*tv));
	evv = calloc(nev + 1, sizeof(*evv));
	ovh = calloc(nev + 1, sizeof(*ovh));
	ev_a = calloc(nev + 1, sizeof(*ev_a));
	ev_b = calloc(nev + 1, sizeof(*ev_b));
	cal = calloc((size_t)o.trials * (nev + 1), sizeof(*cal));
	t.c0 = calloc(nev + 1, sizeof(uint64_t));
	t.c1 = calloc(nev + 1, sizeof(uint64_t));
	if (!r || !tv || !evv || !ovh || !ev_a || !ev_b || !cal || !t.c0 || !t.c1) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nev; i++) {
		evv[i] = calloc(o.trials, sizeof(double));
		r->event_names[i] = tc_strdup(evs.names[i]);
		if (!evv[i] || !r->event_names[i]) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (nev) {
		err = tc_measure_set_open(&m, &evs);
		if (err)
			goto out;
		for (size_t i = 0; i < nev; i++)
			if (!tc_measure_set_is_open(&m, i))
				r->event_why[i] = tc_strdup(m.why[i] ? m.why[i] :
							    tacho_strerror(m.err[i]));
	}
	t.fn = fn;
	t.arg = arg;
	t.m = &m;
	t.nev = nev;
	env_read(&((struct bench_result *)r)->env);   /* the library's own, in the result */
	r->tsc_hz = tc_tsc_info()->hz;

	/* warm-up: caches, branch predictors, page faults of fn's data, the counters */
	for (unsigned i = 0; i < o.warmup; i++) {
		int64_t ticks;
		err = trial(&t, o.reps, &ticks, ev_a);
		if (err)
			goto out;
	}

	/* the cost of measuring: as many empty trials, their medians */
	if (!o.difference) {
		err = measure_overhead(&t, o.trials, cal, ovh);
		if (err)
			goto out;
	}

	for (unsigned i = 0; i < o.trials; i++) {
		int64_t ta, tb;
		err = trial(&t, o.reps, &ta, ev_a);
		if (err)
			goto out;
		if (o.difference) {
			err = trial(&t, 2 * o.reps, &tb, ev_b);
			if (err)
				goto out;
			tv[i] = (double)(tb - ta) / o.reps;
			for (size_t q = 0; q < nev; q++)
				evv[q][i] = (double)(ev_b[q] - ev_a[q]) / o.reps;
		} else {
			tv[i] = ((double)ta - ovh[0]) / o.reps;
			for (size_t q = 0; q < nev; q++)
				evv[q][i] = ((double)ev_a[q] - ovh[q + 1]) / o.reps;
		}
	}

	/* a group the PMU never scheduled reads 0: say so rather than print the zeros */
	for (size_t q = 0; nev && !tc_measure_set_ran(&m) && q < nev; q++)
		if (!r->event_why[q]) {
			r->event_why[q] = tc_strdup("opened, but never on a counter (more hardware "
						    "events than the PMU counts at once? try fewer)");
			if (!r->event_why[q]) {
				err = -ENOMEM;
				goto out;
			}
		}
	r->reps = o.reps;
	r->difference = o.difference;
	r->overhead_ticks = o.difference ? 0 : ovh[0];
	err = tc_bench_result_finish(r, tv, evv, o.trials, o.cull_k, o.mode_bin);
	if (err)
		goto out;
	*out = r;
	r = NULL;
out:
	tc_measure_set_close(&m);
	tc_event_set_exit(&evs);
	for (size_t i = 0; evv && i < nev; i++)
		free(evv[i]);
	free(evv);
	free(tv);
	free(ovh);
	free(ev_a);
	free(ev_b);
	free(cal);
	free(t.c0);
	free(t.c1);
	tacho_bench_result_free(r);
	return err;
}

/* --- output --- */

/* The figures, or with noise (why they are NaN) null figures and the reason. */
static void json_stats(struct tc_json *j, const char *key, const struct tacho_bench_stats *s,
		       const char *noise)
{
	tc_json_obj_begin(j, key);
	tc_json_uint(j, "n", s->n);
	tc_json_str(j, "noise", noise && *noise ? noise : NULL);
	tc_json_double(j, "min", s->min);
	tc_json_double(j, "median", s->median);
	tc_json_double(j, "mode", s->mode);
	tc_json_double(j, "mean", s->mean);
	tc_json_double(j, "stddev", s->stddev);
	tc_json_double(j, "max", s->max);
	tc_json_double(j, "p10", s->p10);
	tc_json_double(j, "p25", s->p25);
	tc_json_double(j, "p75", s->p75);
	tc_json_double(j, "p90", s->p90);
	tc_json_double(j, "p99", s->p99);
	tc_json_obj_end(j);
}

static void row(struct tc_table *t, const char *name, const struct tacho_bench_stats *s,
		const char *noise)
{
	if (noise && *noise)
		tc_table_addf(t, "%s\tbelow the noise", name);
	else
		tc_table_addf(t, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f", name,
			      s->min, s->median, s->mode, s->mean, s->stddev, s->p90, s->p99, s->max);
}

static int write_json(const struct tacho_bench_result *r, FILE *f, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "trials", r->trials);
	tc_json_uint(&j, "kept", r->kept);
	tc_json_uint(&j, "culled", r->culled);
	tc_json_uint(&j, "reps", r->reps);
	tc_json_bool(&j, "difference", r->difference);
	tc_json_str(&j, "cull_rule", r->cull_rule);
	tc_json_double(&j, "overhead_ticks", r->overhead_ticks);
	tc_json_double(&j, "tsc_hz", r->tsc_hz);
	tc_json_bool(&j, "below_noise", r->below_noise);
	json_stats(&j, "ticks", r->ticks, r->noise);
	json_stats(&j, "ns", r->ns, r->noise);
	tc_json_obj_begin(&j, "events");
	for (size_t i = 0; i < r->nevents; i++) {
		if (r->event_why[i])
			tc_json_null(&j, r->event_names[i]);
		else
			json_stats(&j, r->event_names[i], r->events[i], r->event_noise[i]);
	}
	tc_json_obj_end(&j);
	tc_json_arr_begin(&j, "warnings");
	for (unsigned i = 0; i < r->env->nwarnings; i++)
		tc_json_str(&j, NULL, r->env->warnings[i]);
	for (size_t i = 0; i < r->nevents; i++)
		if (r->event_why[i]) {
			char buf[600];
			snprintf(buf, sizeof(buf), "event '%s' not counted: %s",
				 r->event_names[i], r->event_why[i]);
			tc_json_str(&j, NULL, buf);
		}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* One row per quantity; the figures of an event not counted, or of a quantity below
 * the noise, are empty, never 0. */
static void csv_stats(FILE *f, const struct tc_write_settings *w, const char *name,
		      const char *why, const char *noise, const struct tacho_bench_stats *s)
{
	const double v[] = { s->min, s->median, s->mode, s->mean, s->stddev, s->p10, s->p25,
			     s->p75, s->p90, s->p99, s->max };
	char buf[ARRAY_SIZE(v) + 1][40];
	const char *fields[ARRAY_SIZE(v) + 4];

	if (noise && !*noise)
		noise = NULL;
	fields[0] = name;
	fields[1] = why ? "not counted" : noise ? "below noise" : "counted";
	snprintf(buf[0], sizeof(buf[0]), "%zu", why ? (size_t)0 : s->n);
	fields[2] = buf[0];
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		if (why || !isfinite(v[i]))
			buf[i + 1][0] = '\0';
		else
			snprintf(buf[i + 1], sizeof(buf[i + 1]), "%.17g", v[i]);
		fields[3 + i] = buf[i + 1];
	}
	fields[3 + ARRAY_SIZE(v)] = why ? why : noise ? noise : "";
	tc_csv_row(f, w, fields, ARRAY_SIZE(fields));
}

static int write_csv(const struct tacho_bench_result *r, FILE *f,
		     const struct tc_write_settings *w)
{
	static const char *const head[] = { "quantity", "status", "n", "min", "median", "mode",
					    "mean", "stddev", "p10", "p25", "p75", "p90", "p99",
					    "max", "explanation" };

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	csv_stats(f, w, "ticks", NULL, r->noise, r->ticks);
	csv_stats(f, w, "ns", NULL, r->noise, r->ns);
	for (size_t i = 0; i < r->nevents; i++)
		csv_stats(f, w, r->event_names[i], r->event_why[i], r->event_noise[i],
			  r->events[i]);
	return tc_write_status(f);
}

static int write_table(const struct tacho_bench_result *r, FILE *f)
{
	struct tc_table *t = tc_table_new(9);

	if (!t)
		return -ENOMEM;
	for (unsigned c = 1; c < 9; c++)
		tc_table_align_right(t, c, true);
	tc_table_addf(t, "per call\tmin\tmedian\tmode\tmean\tstddev\tp90\tp99\tmax");
	row(t, "ticks", r->ticks, r->noise);
	row(t, "ns", r->ns, r->noise);
	for (size_t i = 0; i < r->nevents; i++) {
		if (r->event_why[i])
			tc_table_addf(t, "%s\tnot counted", r->event_names[i]);
		else
			row(t, r->event_names[i], r->events[i], r->event_noise[i]);
	}
	fprintf(f, "%u trials of %u call%s%s; %u kept, %u culled (%s)\n", r->trials, r->reps,
		r->reps == 1 ? "" : "s", r->difference ? " and of twice that (difference method)" : "",
		r->kept, r->culled, r->cull_rule);
	if (!r->difference)
		fprintf(f, "subtracted per trial: %.1f ticks (the median of as many empty trials)\n",
			r->overhead_ticks);
	tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	if (r->below_noise)
		fprintf(f, "note: time per call below the noise: %s\n", r->noise);
	for (size_t i = 0; i < r->nevents; i++)
		if (r->event_why[i])
			fprintf(f, "note: event '%s' not counted: %s\n", r->event_names[i],
				r->event_why[i]);
		else if (r->event_noise[i])
			fprintf(f, "note: event '%s' below the noise: %s\n", r->event_names[i],
				r->event_noise[i]);
	for (unsigned i = 0; i < r->env->nwarnings; i++)
		fprintf(f, "warning: %s\n", r->env->warnings[i]);
	return tc_write_status(f);
}

int tacho_bench_result_write(const struct tacho_bench_result *r, FILE *f,
			     enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int err;

	if (!r || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(r, f, fmt, &w);
	case TACHO_FORMAT_CSV:
		return write_csv(r, f, &w);
	default:
		return write_table(r, f);
	}
}
