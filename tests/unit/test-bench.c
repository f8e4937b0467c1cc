/* test-bench.c - the microbenchmark harness: exact per-call counts (page faults, a
 * syscall tracepoint where tracefs allows, breakpoints where they fire) with the
 * subtraction and with the difference method, the culling rule, the statistics and the
 * noise on data, the writers of a result below the noise, a live tiny body that must
 * never come out below 0, the environment check on data, bad input. No timing
 * thresholds. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "json-check.h"
#include "pages.h"
#include "regions/bench.h"

static volatile uint64_t watched __attribute__((aligned(8)));

static void store37(void *arg)
{
	(void)arg;
	for (int i = 0; i < 37; i++)
		watched = (uint64_t)i;
}

/* Two fresh pages and three getppid calls per call: exactly two page faults and three
 * syscalls:sys_enter_getppid, sources that count on every machine perf runs on (no PMU,
 * no breakpoint). syscall(2) itself, so that no C library can answer from a cache. */
static void fault2_getppid3(void *arg)
{
	(void)arg;
	if (th_fault_pages(2))
		abort();
	for (int i = 0; i < 3; i++)
		syscall(SYS_getppid);
}

/* The per-call statistics of an exact count: every kept trial the same. */
static void assert_exact(const struct tacho_bench_result *r, size_t q, double want)
{
	const struct tacho_bench_stats *s = r->events[q];

	if (!(s->n == r->kept && s->min == want && s->max == want && s->median == want &&
	      s->mode == want && s->mean == want && s->stddev == 0 && !r->event_noise[q]))
		fail_msg("%s: n %zu (kept %u) min %g median %g mode %g mean %g max %g stddev "
			 "%g, want all %g", r->event_names[q], s->n, r->kept, s->min, s->median,
			 s->mode, s->mean, s->max, s->stddev, want);
}

/* The subtraction (or the difference) of exact software counts: per call exactly what
 * the body does, in every kept trial. false, with why, where perf counts nothing. */
static bool run_exact(bool difference, char *why, size_t size)
{
	struct tacho_bench_result *r = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_bench_opts o = { .sz = sizeof(o), .trials = 31, .warmup = 3, .reps = 3,
				      .difference = difference,
				      .events = "page-faults,syscalls:sys_enter_getppid" };
	const char *proof;

	if (!th_source_exact(TACHO_SOURCE_PAGE_FAULTS, &proof)) {
		snprintf(why, size, "page-faults cannot be counted exactly here: %s", proof);
		return false;
	}
	assert_int_equal(tacho_bench_run(fault2_getppid3, NULL, &o, &r, &d), 0);
	if (r->event_why[0]) {
		snprintf(why, size, "page-faults: %s", r->event_why[0]);
		tacho_bench_result_free(r);
		return false;
	}
	assert_int_equal(r->nevents, 2);
	assert_int_equal(r->trials, 31);
	assert_int_equal(r->reps, 3);
	assert_int_equal(r->kept + r->culled, 31);
	assert_exact(r, 0, 2);
	if (r->event_why[1])
		print_message("note: syscalls:sys_enter_getppid not counted here (%s): only the "
			      "page faults were checked\n", r->event_why[1]);
	else
		assert_exact(r, 1, 3);
	tacho_bench_result_free(r);
	return true;
}

static void test_exact_subtracted(void **state)
{
	char why[320];
	(void)state;

	if (!run_exact(false, why, sizeof(why)))
		TEST_SKIP("%s", why);
}

static void test_exact_difference(void **state)
{
	char why[320];
	(void)state;

	if (!run_exact(true, why, sizeof(why)))
		TEST_SKIP("%s", why);
}

/* A data breakpoint on watched: 37 stores per call, no page faults. false, with why,
 * where this machine cannot show it. */
static bool run_breakpoint(bool difference, char *why, size_t size)
{
	char spec[96];
	struct tacho_bench_result *r = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };

	const char *proof;

	/* where breakpoints never fire the harness says "not counted" (its event_why),
	 * which the check below turns into the skip; the proof says it first, and why */
	if (!th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, &proof) ||
	    !th_source_exact(TACHO_SOURCE_PAGE_FAULTS, &proof)) {
		snprintf(why, size, "a source cannot be counted exactly here: %s", proof);
		return false;
	}
	snprintf(spec, sizeof(spec), "mem:%p/8:w,page-faults", (void *)&watched);
	struct tacho_bench_opts o = { .sz = sizeof(o), .trials = 31, .warmup = 3, .reps = 3,
				      .difference = difference, .events = spec };
	assert_int_equal(tacho_bench_run(store37, NULL, &o, &r, &d), 0);
	if (r->event_why[0]) {
		snprintf(why, size, "breakpoint %s: %s", r->event_names[0], r->event_why[0]);
		tacho_bench_result_free(r);
		return false;
	}
	assert_int_equal(r->nevents, 2);
	assert_string_equal(r->event_names[1], "page-faults");
	assert_int_equal(r->trials, 31);
	assert_int_equal(r->kept + r->culled, 31);
	/* every kept trial: exactly 37 stores per call, no page faults */
	assert_exact(r, 0, 37);
	assert_exact(r, 1, 0);
	tacho_bench_result_free(r);
	return true;
}

static void test_breakpoint_subtracted(void **state)
{
	char why[320];
	(void)state;

	if (!run_breakpoint(false, why, sizeof(why)))
		TEST_SKIP("%s", why);
}

static void test_breakpoint_difference(void **state)
{
	char why[320];
	(void)state;

	if (!run_breakpoint(true, why, sizeof(why)))
		TEST_SKIP("%s", why);
}

static void test_time_only(void **state)
{
	struct tacho_bench_result *r = NULL;
	char *buf = NULL;
	size_t len = 0;
	(void)state;

	assert_int_equal(tacho_bench_run(store37, NULL, NULL, &r, NULL), 0);
	assert_int_equal(r->trials, 101);
	assert_int_equal(r->reps, 1);
	assert_int_equal(r->nevents, 0);
	assert_int_equal(r->kept + r->culled, 101);
	assert_int_equal(r->ticks->n, r->kept);
	assert_string_equal(r->cull_rule, "trials farther than 10 x max(MAD, 1 tick) from the "
			    "median of ticks per call culled, on both sides");
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tacho_bench_result_write(r, f, TACHO_FORMAT_JSON, NULL), 0);
	fclose(f);
	/* valid JSON, the counts exact by path */
	struct th_json *doc = assert_json(buf);
	assert_json_int(doc, "version", 1);
	assert_json_int(doc, "trials", 101);
	assert_json_int(doc, "reps", 1);
	assert_json_int(doc, "kept", r->kept);
	assert_json_int(doc, "culled", r->culled);
	assert_json_int(doc, "ticks.n", r->kept);
	assert_json_int(doc, "ns.n", r->kept);
	/* 37 stores may or may not rise above this machine's noise: either way, say so */
	assert_json_type(doc, "below_noise", TH_JSON_BOOL);
	assert_int_equal(th_json_get(doc, "below_noise")->boolean, r->below_noise);
	assert_json_type(doc, "ticks.mode", r->below_noise ? TH_JSON_NULL : TH_JSON_NUMBER);
	assert_json_type(doc, "ticks.noise", r->below_noise ? TH_JSON_STRING : TH_JSON_NULL);
	assert_json_str(doc, "cull_rule", r->cull_rule);
	assert_json_type(doc, "events", TH_JSON_OBJECT);
	assert_int_equal(th_json_get(doc, "events")->n, 0);
	th_json_free(doc);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tacho_bench_result_write(r, f, TACHO_FORMAT_TABLE, NULL), 0);
	fclose(f);
	assert_contains(buf, "101 trials of 1 call");
	assert_contains(buf, "median");
	free(buf);
	tacho_bench_result_free(r);
}

static void test_bad_input(void **state)
{
	struct tacho_bench_result *r = (struct tacho_bench_result *)1;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	assert_int_equal(tacho_bench_run(NULL, NULL, NULL, &r, NULL), -EINVAL);
	assert_null(r);
	struct tacho_bench_opts o = { .sz = sizeof(o), .events = "page-faults,{oops" };
	int err = tacho_bench_run(store37, NULL, &o, &r, &d);
	assert_true(err == -TACHO_EPARSE || err == -TACHO_ENOEVENT);
	assert_null(r);
	assert_true(d.message[0] != 0);
	tacho_bench_result_free(NULL);
}

static void test_cull(void **state)
{
	double v[101], a[101], *aux[1] = { a };
	(void)state;

	for (int i = 0; i < 99; i++) {
		v[i] = 10;
		a[i] = i;
	}
	v[99] = 1000;
	a[99] = 99;
	v[100] = 21;   /* beyond 10 + 10 x max(MAD 0, 1) */
	a[100] = 100;
	assert_int_equal(tc_bench_cull(v, 101, 10, 1, aux, 1), 99);
	for (int i = 0; i < 99; i++)
		assert_true(v[i] == 10 && a[i] == i);

	/* with spread: median 50, MAD 25 for 0..100; limit 50 + 2 x 25 = 100 keeps all */
	for (int i = 0; i < 101; i++)
		v[i] = i;
	assert_int_equal(tc_bench_cull(v, 101, 2, 1, NULL, 0), 101);
	v[100] = 101;
	assert_int_equal(tc_bench_cull(v, 101, 2, 1, NULL, 0), 100);
	/* negative k: no culling */
	v[100] = 1e9;
	assert_int_equal(tc_bench_cull(v, 101, -1, 1, NULL, 0), 101);

	/* fast outliers go as slow ones do: 10 +- 10 x max(MAD 0, 1) keeps 0..20 */
	for (int i = 0; i < 101; i++) {
		v[i] = 10;
		a[i] = i;
	}
	v[3] = -1000;  /* a difference whose k-call run was interrupted */
	v[4] = -1;     /* 11 below */
	v[5] = 0;      /* 10 below: kept */
	v[6] = 20;     /* 10 above: kept */
	v[7] = 21;     /* 11 above */
	assert_int_equal(tc_bench_cull(v, 101, 10, 1, aux, 1), 98);
	/* the kept ones in their order, with their rows */
	for (int i = 0, want = 0; i < 98; i++, want++) {
		if (want == 3)
			want = 5;
		if (want == 7)
			want = 8;
		if (a[i] != want || v[i] != (want == 5 ? 0 : want == 6 ? 20 : 10))
			fail_msg("kept %d: trial %g of value %g, want trial %d", i, a[i], v[i], want);
	}
	/* n < 3: nothing to hold a trial against */
	v[0] = -1e9;
	v[1] = 10;
	assert_int_equal(tc_bench_cull(v, 2, 10, 1, NULL, 0), 2);
}

static void test_stats(void **state)
{
	double v[101];
	struct tacho_bench_stats s;
	(void)state;

	for (int i = 0; i < 101; i++)
		v[i] = 100 - i;   /* 0..100, reversed */
	assert_int_equal(tc_bench_stats(v, 101, 1, &s), 0);
	assert_int_equal(s.n, 101);
	assert_true(s.min == 0 && s.max == 100 && s.median == 50 && s.mean == 50);
	assert_true(s.p10 == 10 && s.p25 == 25 && s.p75 == 75 && s.p90 == 90 && s.p99 == 99);

	/* the mode of code that should take constant time */
	double w[9] = { 40, 41, 40, 40, 90, 40, 41, 40, 300 };
	assert_int_equal(tc_bench_stats(w, 9, 1, &s), 0);
	assert_true(s.mode == 40 && s.median == 40);

	assert_int_equal(tc_bench_stats(w, 0, 1, &s), 0);
	assert_int_equal(s.n, 0);
	assert_true(isnan(s.median) && isnan(s.mode));
}

/* --- the end of a run on data: culling, statistics, the noise --- */

static const char *const fin_names[] = { "exact", "noisy", "zero", "gone" };

/* A result of 101 trials as a run would leave it, with tv per call from fill and
 * four events: "exact" counts 2 per call, "noisy" -1, 0, 1 by turns, "zero" 0 but 1 in
 * trial 5, "gone" was not counted. */
static struct tacho_bench_result *finish(double (*fill)(int i), bool difference, double cull_k,
					 double *tv, double **evv)
{
	struct tacho_bench_result *r = tc_bench_result_new(4);

	assert_non_null(r);
	for (int i = 0; i < 101; i++) {
		tv[i] = fill(i);
		evv[0][i] = 2;
		evv[1][i] = i % 3 - 1;
		evv[2][i] = i == 5;
		evv[3][i] = 0;
	}
	for (size_t q = 0; q < 4; q++)
		r->event_names[q] = strdup(fin_names[q]);
	r->event_why[3] = strdup("not on this machine");
	r->reps = 1;
	r->difference = difference;
	r->tsc_hz = 2e9;
	assert_int_equal(tc_bench_result_finish(r, tv, evv, 101, cull_k, 0), 0);
	assert_int_equal(r->trials, 101);
	assert_int_equal(r->kept + r->culled, 101);
	assert_int_equal(r->events[3]->n, 0);
	assert_null(r->event_noise[3]);
	return r;
}

static bool all_nan(const struct tacho_bench_stats *s)
{
	const double v[] = { s->min, s->median, s->mode, s->mean, s->stddev, s->max,
			     s->p10, s->p25, s->p75, s->p90, s->p99 };

	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		if (!isnan(v[i]))
			return false;
	return true;
}

/* A tiny body's differences on this machine (a TSC that steps by 21 ticks): mostly 0,
 * one step either way, two k-call runs interrupted (the fast outliers of four runs of
 * the old harness) and one 2k-call run. */
static double tiny_diff(int i)
{
	return i < 80 ? 0 : i < 88 ? 21 : i < 98 ? -21 : i == 98 ? -8242 : i == 99 ? -1232 : 5000;
}

static void test_finish_tiny(void **state)
{
	double tv[101], ev[4][101], *evv[4] = { ev[0], ev[1], ev[2], ev[3] };
	(void)state;

	struct tacho_bench_result *r = finish(tiny_diff, true, 10, tv, evv);
	assert_string_equal(r->cull_rule, "trials farther than 10 x max(MAD, 1 tick) from the "
			    "median of ticks per call culled, on both sides");
	/* median 0, MAD 0: only the 80 zeros are within 10 ticks (a rule for the slow
	 * side alone kept 92, the minimum -8242) */
	assert_int_equal(r->kept, 80);
	assert_int_equal(r->culled, 21);
	/* 2k calls no longer than k in every kept trial: no time, and why */
	assert_true(r->below_noise);
	assert_string_equal(r->noise, "kept trials measured 0 to 0 ticks per call, not all above "
			    "0 (2k calls took no longer than k): below the noise; more reps per "
			    "trial lift it above");
	assert_int_equal(r->ticks->n, 80);
	assert_int_equal(r->ns->n, 80);
	assert_true(all_nan(r->ticks) && all_nan(r->ns));
	/* the events of the kept trials (0..79): an exact count stays exact */
	assert_true(r->events[0]->n == 80 && r->events[0]->min == 2 && r->events[0]->max == 2 &&
		    r->events[0]->mean == 2 && r->events[0]->stddev == 0);
	assert_null(r->event_noise[0]);
	assert_true(all_nan(r->events[1]));
	assert_int_equal(r->events[1]->n, 80);
	assert_string_equal(r->event_noise[1], "kept trials counted -1 to 1 per call, some below "
			    "0 (2k calls counted fewer than k): below the noise");
	/* 0 per call is a count, not noise */
	assert_null(r->event_noise[2]);
	assert_true(r->events[2]->min == 0 && r->events[2]->max == 1 &&
		    r->events[2]->median == 0);
	tacho_bench_result_free(r);
}

/* A difference whose true value is 0, spread -3..3 with no outlier. */
static double zero_diff(int i)
{
	return i % 7 - 3;
}

/* A body of 100 ticks with a spread of +-3 (14 of each over 98 trials, so the mean is
 * exactly 100), two fast outliers and a slow one. */
static double body100(int i)
{
	return i < 98 ? 100 + i % 7 - 3 : i == 98 ? 0 : i == 99 ? -500 : 900;
}

/* A tiny body by the subtraction: the median empty trial or one TSC step more. */
static double tiny_sub(int i)
{
	return i < 60 ? 0 : 21;
}

static void test_finish_noise(void **state)
{
	double tv[101], ev[4][101], *evv[4] = { ev[0], ev[1], ev[2], ev[3] };
	(void)state;

	/* median 0, MAD 2: all kept, and -3 is no time */
	struct tacho_bench_result *r = finish(zero_diff, true, 10, tv, evv);
	assert_int_equal(r->kept, 101);
	assert_true(r->below_noise);
	assert_string_equal(r->noise, "kept trials measured -3 to 3 ticks per call, not all above "
			    "0 (2k calls took no longer than k): below the noise; more reps per "
			    "trial lift it above");
	assert_true(all_nan(r->ticks) && all_nan(r->ns));
	tacho_bench_result_free(r);

	/* above the noise: median 100, MAD 2, the three outliers culled, both fast ones
	 * included (kept by the old rule, they made the minimum -500) */
	r = finish(body100, true, 10, tv, evv);
	assert_int_equal(r->kept, 98);
	assert_int_equal(r->culled, 3);
	assert_false(r->below_noise);
	assert_string_equal(r->noise, "");
	assert_true(r->ticks->n == 98 && r->ticks->min == 97 && r->ticks->median == 100 &&
		    r->ticks->mean == 100 && r->ticks->max == 103);
	/* 2 GHz: half a nanosecond per tick */
	assert_true(r->ns->n == 98 && r->ns->min == 48.5 && r->ns->median == 50 &&
		    r->ns->max == 51.5);
	assert_true(r->events[0]->n == 98 && r->events[0]->min == 2 && r->events[0]->max == 2);
	assert_non_null(r->event_noise[1]);
	tacho_bench_result_free(r);

	/* the subtraction, no culling: a trial no slower than the median empty one */
	r = finish(tiny_sub, false, -1, tv, evv);
	assert_string_equal(r->cull_rule, "none: every trial kept");
	assert_int_equal(r->kept, 101);
	assert_true(r->below_noise);
	assert_string_equal(r->noise, "kept trials measured 0 to 21 ticks per call, not all above "
			    "0 (a trial took no longer than the median empty one): below the "
			    "noise; more reps per trial lift it above");
	assert_string_equal(r->event_noise[1], "kept trials counted -1 to 1 per call, some below "
			    "0 (a trial counted fewer than the median empty one): below the noise");
	tacho_bench_result_free(r);
}

/* The writers say "below the noise" where the figures would be, and why. */
static void test_write_noise(void **state)
{
	double tv[101], ev[4][101], *evv[4] = { ev[0], ev[1], ev[2], ev[3] };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	struct tacho_bench_result *r = finish(tiny_diff, true, 10, tv, evv);
	f = open_memstream(&buf, &len);
	assert_int_equal(tacho_bench_result_write(r, f, TACHO_FORMAT_TABLE, NULL), 0);
	fclose(f);
	assert_contains(buf, "101 trials of 1 call and of twice that (difference method); 80 "
			"kept, 21 culled (trials farther than 10 x max(MAD, 1 tick)");
	assert_contains(buf, "\n  ticks     below the noise\n");
	assert_contains(buf, "\n  ns        below the noise\n");
	assert_contains(buf, "\n  noisy     below the noise\n");
	assert_contains(buf, "\n  gone          not counted\n");
	assert_contains(buf, "\nnote: time per call below the noise: kept trials measured 0 to "
			"0 ticks per call");
	assert_contains(buf, "\nnote: event 'noisy' below the noise: kept trials counted -1 to 1");
	assert_true(strstr(buf, "nan") == NULL);
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tacho_bench_result_write(r, f, TACHO_FORMAT_CSV, NULL), 0);
	fclose(f);
	assert_contains(buf, "\nticks,below noise,80,,,,,,,,,,,,\"kept trials measured 0 to 0 "
			"ticks per call, not all above 0 (2k calls took no longer than k): below "
			"the noise; more reps per trial lift it above\"\n");
	assert_contains(buf, "\nns,below noise,80,,,,,,,,,,,,\"kept trials measured 0 to 0 ticks");
	assert_contains(buf, "\nexact,counted,80,2,2,2,2,0,2,2,2,2,2,2,\n");
	assert_contains(buf, "\nnoisy,below noise,80,,,,,,,,,,,,\"kept trials counted -1 to 1");
	assert_contains(buf, "\ngone,not counted,0,,,,,,,,,,,,not on this machine\n");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tacho_bench_result_write(r, f, TACHO_FORMAT_JSON, NULL), 0);
	fclose(f);
	struct th_json *doc = assert_json(buf);
	assert_json_type(doc, "below_noise", TH_JSON_BOOL);
	assert_true(th_json_get(doc, "below_noise")->boolean);
	assert_json_int(doc, "ticks.n", 80);
	assert_json_str(doc, "ticks.noise", r->noise);
	assert_json_str(doc, "ns.noise", r->noise);
	assert_json_type(doc, "ticks.min", TH_JSON_NULL);
	assert_json_type(doc, "ns.median", TH_JSON_NULL);
	assert_json_type(doc, "events.exact.noise", TH_JSON_NULL);
	assert_true(json_num(doc, "events.exact.min") == 2);
	assert_json_str(doc, "events.noisy.noise", r->event_noise[1]);
	assert_json_type(doc, "events.noisy.mean", TH_JSON_NULL);
	assert_json_type(doc, "events.gone", TH_JSON_NULL);
	th_json_free(doc);
	free(buf);
	tacho_bench_result_free(r);
}

/* --- the difference method live, on a body far below the TSC's resolution --- */

static volatile unsigned sink;

static void tiny(void *arg)
{
	(void)arg;
	sink++;
}

/* No figure below 0, and the flag, the sentence and the figures agree. */
static void assert_possible(const struct tacho_bench_result *r, const struct tacho_bench_stats *s,
			    const char *what)
{
	const double v[] = { s->min, s->median, s->mode, s->mean, s->max,
			     s->p10, s->p25, s->p75, s->p90, s->p99 };

	assert_int_equal(s->n, r->kept);
	if (r->below_noise != (r->noise[0] != 0))
		fail_msg("%s: below_noise %d with noise '%s'", what, r->below_noise, r->noise);
	if (r->below_noise && !all_nan(s))
		fail_msg("%s: below the noise, yet a median of %g", what, s->median);
	if (!r->below_noise && !(s->min > 0))
		fail_msg("%s: above the noise, yet a minimum of %g", what, s->min);
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		if (v[i] < 0)
			fail_msg("%s: figure %zu is %g per call", what, i, v[i]);
}

static void test_difference_tiny(void **state)
{
	(void)state;
	for (int difference = 1; difference >= 0; difference--) {
		struct tacho_bench_opts o = { .sz = sizeof(o), .difference = difference,
					      .events = "page-faults" };
		struct tacho_bench_result *r = NULL;
		char *buf = NULL;
		size_t len = 0;

		assert_int_equal(tacho_bench_run(tiny, NULL, &o, &r, NULL), 0);
		assert_int_equal(r->kept + r->culled, 101);
		assert_possible(r, r->ticks, difference ? "difference, ticks" : "subtraction, ticks");
		if (r->tsc_hz > 0)
			assert_possible(r, r->ns, difference ? "difference, ns" : "subtraction, ns");
		/* no page fault in a warm body: a count of 0 is no noise */
		if (!r->event_why[0]) {
			assert_true(r->events[0]->min == 0 && r->events[0]->max == 0);
			assert_null(r->event_noise[0]);
		}
		FILE *f = open_memstream(&buf, &len);
		assert_int_equal(tacho_bench_result_write(r, f, TACHO_FORMAT_JSON, NULL), 0);
		fclose(f);
		struct th_json *doc = assert_json(buf);
		assert_int_equal(th_json_get(doc, "below_noise")->boolean, r->below_noise);
		assert_json_type(doc, "ticks.min", r->below_noise ? TH_JSON_NULL : TH_JSON_NUMBER);
		th_json_free(doc);
		free(buf);
		print_message("%s: %u kept, %s (min %g, median %g ticks per call)\n",
			      difference ? "difference" : "subtraction", r->kept,
			      r->below_noise ? "below the noise" : "above the noise",
			      r->ticks->min, r->ticks->median);
		tacho_bench_result_free(r);
	}
}

static const struct {
	int line;
	const char *governor;
	bool vm, invariant;
	double load;
	int runnable, ncpus;
	unsigned nwarn;
	const char *first;
} env_cases[] = {
	{ __LINE__, "performance", false, true, 0.1, 0, 8, 0, NULL },
	{ __LINE__, "", false, true, 0.1, 0, 8, 0, NULL },   /* no cpufreq: nothing to say */
	{ __LINE__, "powersave", false, true, 0.1, 0, 8, 1, "governor is 'powersave'" },
	{ __LINE__, "schedutil", true, true, 0.1, 0, 8, 2, "governor is 'schedutil'" },
	{ __LINE__, "", true, true, 0.1, 0, 2, 1, "virtual machine" },
	{ __LINE__, "", false, false, 0.1, 0, 2, 1, "not invariant" },
	{ __LINE__, "", false, true, 0.5, 2, 2, 1, "2 other runnable tasks on 2 CPUs" },
	{ __LINE__, "", false, true, 0.5, 1, 1, 1, "1 other runnable task on 1 CPU" },
	{ __LINE__, "", false, true, 3.0, 0, 4, 1, "load average 3.00 on 4 CPUs" },
	{ __LINE__, "", false, true, 1.9, 1, 4, 0, NULL },
};

static void test_env_eval(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(env_cases); i++) {
		struct tacho_bench_env e;
		memset(&e, 0, sizeof(e));
		snprintf(e.governor, sizeof(e.governor), "%s", env_cases[i].governor);
		e.vm = env_cases[i].vm;
		e.tsc_invariant = env_cases[i].invariant;
		e.loadavg1 = env_cases[i].load;
		e.runnable = env_cases[i].runnable;
		e.ncpus = env_cases[i].ncpus;
		tc_bench_env_eval(&e);
		if (e.nwarnings != env_cases[i].nwarn)
			fail_msg("case at line %d: %u warnings, want %u (%s)", env_cases[i].line,
				 e.nwarnings, env_cases[i].nwarn, e.nwarnings ? e.warnings[0] : "");
		if (env_cases[i].first && !strstr(e.warnings[0], env_cases[i].first))
			fail_msg("case at line %d: '%s' lacks '%s'", env_cases[i].line,
				 e.warnings[0], env_cases[i].first);
	}
}

static void test_env_live(void **state)
{
	struct tacho_bench_env e = { .sz = sizeof(e) };
	struct tacho_bench_env small = { .sz = offsetof(struct tacho_bench_env, warnings) };
	struct tacho_tsc_info ti = { .sz = sizeof(ti) };
	(void)state;

	assert_int_equal(tacho_bench_env_check(&small), -EINVAL);
	assert_int_equal(small.ncpus, 0);
	assert_int_equal(tacho_bench_env_check(&e), 0);
	assert_int_equal(e.sz, sizeof(e));
	tacho_tsc_info(&ti);
	assert_int_equal(e.vm, ti.hypervisor);
	assert_true(e.ncpus >= 1);
	assert_true(e.nwarnings <= TACHO_BENCH_WARN_MAX);
	/* this machine is a KVM guest: it must say so */
	if (ti.hypervisor)
		assert_true(e.nwarnings >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_subtracted),      cmocka_unit_test(test_exact_difference),
		cmocka_unit_test(test_breakpoint_subtracted), cmocka_unit_test(test_breakpoint_difference),
		cmocka_unit_test(test_time_only),             cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_cull),                  cmocka_unit_test(test_stats),
		cmocka_unit_test(test_finish_tiny),           cmocka_unit_test(test_finish_noise),
		cmocka_unit_test(test_write_noise),           cmocka_unit_test(test_difference_tiny),
		cmocka_unit_test(test_env_eval),              cmocka_unit_test(test_env_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
