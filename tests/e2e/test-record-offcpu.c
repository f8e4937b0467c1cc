/* test-record-offcpu.c - record --off-cpu end to end: tests/progs/offcpu-sleep sleeps
 * 200 ms in f and 100 ms in g; the folded stacks of "offcpu-time" weigh f and g by the
 * nanoseconds they waited. A sleep never ends early, so each weighs at least its sleep
 * and at most what the call took by the program's own clock; f:g is the calls' own
 * ratio within 10 % (2:1 on a quiet machine; on a loaded one the wait for a CPU after
 * each wake-up is off-CPU time too, as perf counts it). Also the event beside
 * cpu-clock, the header, SVG and pprof labels, and the usage error with --sim. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static bool recorded;
static long long took_f, took_g;   /* each call as the program timed it, ns */

/* Whether this user may read sched_switch's payload: root, or paranoid -1. */
static bool may_off_cpu(void)
{
	long paranoid = 2;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

	if (f) {
		if (fscanf(f, "%ld", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	return geteuid() == 0 || paranoid == -1;
}

static bool have_sched_switch(void)
{
	return access("/sys/kernel/tracing/events/sched/sched_switch/id", R_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/events/sched/sched_switch/id", R_OK) == 0;
}

/* Records offcpu-sleep once into the test's folder (oc.rec). False with *why when it
 * cannot be recorded here. */
static bool record_once(const char **why)
{
	struct th_run r;

	if (!may_off_cpu()) {
		*why = "reading sched_switch's payload needs root or perf_event_paranoid -1";
		return false;
	}
	if (!have_sched_switch()) {
		*why = "tracefs has no sched:sched_switch";
		return false;
	}
	/* offcpu-time samples sched:sched_switch: a tracepoint that must fire */
	if (!th_source_exact(TACHO_SOURCE_TRACEPOINT, why))
		return false;
	if (recorded)
		return true;
	th_tacho(&r, "record", "-q", "--off-cpu", "-o", th_tmp("oc.rec"), "--",
		 th_prog("offcpu-sleep"), NULL);
	if (r.status)
		fail_msg("record --off-cpu failed (%d): %s", r.status, r.err);
	{
		const char *t = strstr(r.err, "offcpu-sleep: f ");
		if (!t || sscanf(t, "offcpu-sleep: f %lld g %lld", &took_f, &took_g) != 2)
			fail_msg("offcpu-sleep did not say how long f and g took:\n%s", r.err);
	}
	th_run_free(&r);
	recorded = true;
	return true;
}

/* The sum of the weights of the folded lines with a frame named fn. */
static uint64_t folded_weight(const char *folded, const char *fn)
{
	uint64_t sum = 0;
	size_t n = strlen(fn);

	for (const char *l = folded; *l; ) {
		const char *end = strchr(l, '\n'), *sp;
		size_t len = end ? (size_t)(end - l) : strlen(l);

		sp = memrchr(l, ' ', len);
		if (sp) {
			for (const char *q = l; q < sp; ) {
				const char *semi = memchr(q, ';', (size_t)(sp - q));
				const char *fe = semi ? semi : sp;
				if ((size_t)(fe - q) == n && !memcmp(q, fn, n)) {
					sum += strtoull(sp + 1, NULL, 10);
					break;
				}
				q = fe + 1;
			}
		}
		l += len + (end ? 1 : 0);
	}
	return sum;
}

static void test_offcpu_f_g(void **state)
{
	const char *why;
	struct th_run r;
	uint64_t f, g;
	double ratio;

	(void)state;
	if (!record_once(&why))
		TEST_SKIP("%s", why);
	th_tacho(&r, "report", "-i", th_tmp("oc.rec"), "--event", "offcpu-time", "--format",
		 "folded", NULL);
	assert_int_equal(r.status, 0);
	f = folded_weight(r.out, "f");
	g = folded_weight(r.out, "g");
	print_message("offcpu-sleep: f %" PRIu64 " ns, g %" PRIu64 " ns (the calls took %lld and %lld "
		      "ns)\n", f, g, took_f, took_g);
	if (f < 200000000u || g < 100000000u)
		fail_msg("f weighs %" PRIu64 " ns (slept 200 ms), g %" PRIu64 " ns (slept "
			 "100 ms):\n%s", f, g, r.out);
	/* off-CPU time is a part of the call's time as the thread's clock saw it (the
	 * sleep, and on a loaded machine the wait for a CPU after it) */
	if ((long long)f > took_f || (long long)g > took_g)
		fail_msg("f weighs %" PRIu64 " ns, g %" PRIu64 " ns: more than the calls took by "
			 "the program's clock (%lld and %lld ns)", f, g, took_f, took_g);
	/* f:g as the program saw them, 2:1 on a quiet machine; tacho within 10 % of it */
	ratio = ((double)f / (double)g) / ((double)took_f / (double)took_g);
	if (ratio < 0.9 || ratio > 1.1)
		fail_msg("f:g is %.3f, the calls' own %.3f (%lld and %lld ns): not within 10 %%:\n%s",
			 (double)f / (double)g, (double)took_f / (double)took_g, took_f, took_g,
			 r.out);
	/* the stacks are the sleeper's, through f and g to the kernel's schedule */
	assert_contains(r.out, ";sleeper;f;");
	assert_contains(r.out, ";sleeper;g;");
	assert_contains(r.out, ";schedule;");
	th_run_free(&r);
}

/* The file holds both events; the views say the unit of offcpu-time. */
static void test_offcpu_views(void **state)
{
	const char *why;
	struct th_run r;

	(void)state;
	if (!record_once(&why))
		TEST_SKIP("%s", why);
	th_tacho(&r, "report", "-i", th_tmp("oc.rec"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "holds 2 events: reporting cpu-clock");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", th_tmp("oc.rec"), "--event", "offcpu-time", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, " samples of offcpu-time (blocked stacks weighed by the time "
			       "they waited: ");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", th_tmp("oc.rec"), "--event", "offcpu-time", "--format",
		 "svg", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "Flame graph: offcpu-time, ");
	assert_contains(r.out, " ns blocked in ");
	assert_contains(r.out, "<title>f (");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", th_tmp("oc.rec"), "--event", "offcpu-time", "--format",
		 "pprof", "-o", th_tmp("oc.pb.gz"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	if (access("/usr/bin/go", X_OK) && access("/usr/lib/go/bin/go", X_OK))
		TEST_SKIP("go is not installed (scripts/deps.sh test: golang-go): the pprof "
			  "file is written, not read back");
	{
		char *argv[] = { (char *)"go", (char *)"tool", (char *)"pprof", (char *)"-raw",
				 (char *)th_tmp("oc.pb.gz"), NULL };
		th_go_runv(&r, argv);
		if (r.status)
			fail_msg("go tool pprof -raw failed (%d): %s", r.status, r.err);
		assert_contains(r.out, "PeriodType: offcpu nanoseconds");
		assert_contains(r.out, "samples/count offcpu/nanoseconds");
		th_run_free(&r);
	}
}

static void test_offcpu_not_with_sim(void **state)
{
	struct th_run r;

	(void)state;
	th_tacho(&r, "record", "--sim", "--off-cpu", "-o", th_tmp("sim.rec"), "--",
		 th_prog("offcpu-sleep"), NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--off-cpu samples this machine's scheduler: not with --sim");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offcpu_f_g),
		cmocka_unit_test(test_offcpu_views),
		cmocka_unit_test(test_offcpu_not_with_sim),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
