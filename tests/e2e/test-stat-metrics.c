/* test-stat-metrics.c - perf's metric options of tacho stat: -M served where its
 * events count here (utilization: task-clock, a timer) and refused in one line that
 * names the missing events where they need a hardware PMU this machine lacks (-M ipc,
 * -d); --metric-only's table; --topdown refused. The served path of the hardware
 * groups is tested on data (tests/unit/test-metrics.c). */
#include <string.h>

#include "harness.h"
#include "tacho.h"

/* Whether this machine is known to have no hardware PMU (stat's own test). */
static bool no_pmu(void)
{
	struct tacho_pmu_counters pc = { .sz = sizeof(pc) };

	return tacho_pmu_counters_detect(&pc) == 0 && pc.known && pc.none;
}

static size_t occurrences(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_served_here(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stat", "-M", "utilization", "--", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "msec  task-clock");
	assert_contains(r.err, "CPUs utilized");
	assert_contains(r.err, "(task-clock / wall time)");
	/* -M alone counts the group's events, not the default set */
	assert_not_contains(r.err, "page-faults");
	th_run_free(&r);
	/* the metric's name finds its group; an event given twice is counted once */
	th_tacho(&r, "stat", "-e", "task-clock", "-M", "cpus utilized", "--", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(occurrences(r.err, "msec  task-clock"), 1);
	th_run_free(&r);
}

static void test_refused_without_pmu(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stat", "-M", "ipc,frequency", "--", "true", NULL);
	if (!no_pmu()) {
		/* where counters exist the group is served */
		assert_int_equal(r.status, 0);
		assert_contains(r.err, "IPC");
		th_run_free(&r);
		TEST_SKIP("this machine has a hardware PMU: -M ipc was served, not refused");
	}
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "tacho: cannot count -M ipc,frequency: IPC, CPI, GHz need "
			"instructions, cycles from the CPU's counters, and this machine has no "
			"hardware PMU (");
	assert_contains(r.err, "where one exists tacho counts them and prints IPC, CPI, GHz");
	th_run_free(&r);

	th_tacho(&r, "stat", "-d", "--", "true", NULL);
	assert_int_equal(r.status, 1);
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "tacho: cannot count -d: L1-dcache load-miss ratio, LLC "
			"load-miss ratio need L1-dcache-loads, L1-dcache-load-misses, LLC-loads, "
			"LLC-load-misses from the CPU's counters");
	th_run_free(&r);
	/* a group of timers beside a refused one: the whole line is refused */
	th_tacho(&r, "stat", "-M", "utilization,branches", "--", "true", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot count -M branches: branch-miss ratio needs "
			"branch-instructions, branch-misses");
	th_run_free(&r);
}

static void test_metric_only(void **state)
{
	struct th_run r;
	(void)state;

	/* context-switches: a software event that counts on every machine, switch or not */
	th_tacho(&r, "stat", "--metric-only", "-e", "task-clock,context-switches", "--",
		 "true", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "CPUs utilized");
	assert_contains(r.err, "context-switches rate");
	/* no line per event */
	assert_not_contains(r.err, "msec  task-clock");
	assert_not_contains(r.err, "  context-switches  ");
	assert_not_contains(r.err, "not counted");
	th_run_free(&r);
	/* an event not counted: its metric is missing, and the note says why */
	th_not_firing("page-faults");
	th_tacho(&r, "stat", "--metric-only", "-e", "task-clock,page-faults", "--", "true",
		 NULL);
	th_not_firing_end();
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "CPUs utilized");
	assert_not_contains(r.err, "page-faults rate");
	assert_not_contains(r.err, "<not counted>");
	assert_contains(r.err, "  page-faults: not counted: made not to fire by "
			"TACHO_TEST_NOT_FIRING");
	th_run_free(&r);
	/* no metric at all: said, not an empty table */
	th_tacho(&r, "stat", "--metric-only", "-n", "--", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "no metric: none has all its events counted");
	th_run_free(&r);
	th_tacho(&r, "stat", "--metric-only", "--json", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--metric-only shapes the table");
	th_run_free(&r);
}

static void test_bad(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stat", "--topdown", "--", "true", NULL);
	assert_int_equal(r.status, 1);
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "tacho: cannot count --topdown: tacho's metric table has no "
			"top-down metrics");
	th_run_free(&r);
	th_tacho(&r, "stat", "-M", "ipcc", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "-M: no metric group or metric 'ipcc' in tacho's table");
	th_run_free(&r);
	th_tacho(&r, "stat", "-M", "ipc,", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	th_tacho(&r, "stat", "-M", "utilization", "--all", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_served_here),
		cmocka_unit_test(test_refused_without_pmu),
		cmocka_unit_test(test_metric_only),
		cmocka_unit_test(test_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
