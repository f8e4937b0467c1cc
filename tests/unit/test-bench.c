/* test-bench.c - the microbenchmark harness: exact per-call counts (page faults, a
 * syscall tracepoint where tracefs allows, breakpoints where they fire) with the
 * subtraction and with the difference method, the culling rule and the statistics on
 * data, the environment check on data, bad input. No timing thresholds. */
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
#include "measure/bench.h"

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
	      s->mode == want && s->mean == want && s->stddev == 0))
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

	snprintf(spec, sizeof(spec), "mem:%p/8:w,page-faults", (void *)&watched);
	struct tacho_bench_opts o = { .sz = sizeof(o), .trials = 31, .warmup = 3, .reps = 3,
				      .difference = difference, .events = spec };
	assert_int_equal(tacho_bench_run(store37, NULL, &o, &r, &d), 0);
	if (r->event_why[0]) {
		snprintf(why, size, "breakpoint %s: %s", r->event_names[0], r->event_why[0]);
		tacho_bench_result_free(r);
		return false;
	}
	/* source check: breakpoint-data */
	if (r->events[0]->n && r->events[0]->min == 0 && r->events[0]->max == 0) {
		snprintf(why, size, "the data breakpoint %s opened but counted 0 per call in "
			 "all %zu kept trials, where the body stored to it 37 times per call: "
			 "breakpoints do not fire on this machine", r->event_names[0],
			 r->events[0]->n);
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
	assert_json_type(doc, "ticks.mode", TH_JSON_NUMBER);
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
		cmocka_unit_test(test_cull),             cmocka_unit_test(test_stats),
		cmocka_unit_test(test_env_eval),         cmocka_unit_test(test_env_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
