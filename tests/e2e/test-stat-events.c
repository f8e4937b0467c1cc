/* test-stat-events.c - the event forms of issue 11 through `tacho stat`, exact where the
 * kernel is: terms on a named event (page-faults/period=10/ counts what page-faults
 * counts), cgroup-switches, perf 6.1's modifiers (e applied; S, W, P, b refused with
 * why). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>

#include "harness.h"
#include "json-check.h"
#include "util/util.h"

static struct th_json *stat_json(struct th_run *r, const char *first, ...)
{
	const char *argv[64];
	size_t n = 0;
	va_list ap;

	argv[n++] = th_tacho_bin();
	argv[n++] = "stat";
	argv[n++] = "--json";
	argv[n++] = first;
	va_start(ap, first);
	while (n < 63 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	th_runv(r, NULL, (char *const *)argv);
	return assert_json(r->err);
}

/* docs/events.md's example: 100 fresh pages counted three ways in one run, the same
 * count each time; the name= term names the event in the output. */
static void test_named_terms(void **state)
{
	struct th_run r;
	struct th_json *j;
	double plain;
	(void)state;

	j = stat_json(&r, "-e", "page-faults,page-faults/period=10/,page-faults/name=pf/u", "--",
		      th_prog("stat-helper"), "pages", "100", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[1].name"), "page-faults/period=10/");
	assert_string_equal(json_str(j, "events[2].name"), "pf");
	plain = json_num(j, "events[0].value");
	assert_true(plain >= 100);
	assert_true(json_num(j, "events[1].value") == plain);
	/* user-only: the helper's faults are all its own user-space touches and
	 * start-up, none in the kernel's own accesses of its memory */
	assert_true(json_num(j, "events[2].value") <= plain);
	assert_true(json_num(j, "events[2].value") >= 100);
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", "page-faults/bogus=1/", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "'bogus' is no term of a named event (period, freq or name)");
	th_run_free(&r);
}

/* cgroup-switches is known and counts (Linux 5.13 and later); exclusive (:e) counts as
 * the plain event does. */
static void test_software_and_e(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	j = stat_json(&r, "-e", "cgroup-switches,page-faults,page-faults:e", "--",
		      th_prog("stat-helper"), "pages", "50", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].name"), "cgroup-switches");
	if (strcmp(json_str(j, "events[0].status"), "counted"))
		TEST_SKIP("cgroup-switches: %s (a kernel before 5.13?)",
			  json_str(j, "events[0].explanation"));
	assert_true(json_num(j, "events[0].value") >= 0);
	assert_string_equal(json_str(j, "events[2].status"), "counted");
	assert_true(json_num(j, "events[2].value") == json_num(j, "events[1].value"));
	th_json_free(j);
	th_run_free(&r);
}

/* perf 6.1's other modifiers: refused with why, and the caret under the letter. */
static void test_refused_modifiers(void **state)
{
	static const struct { const char *spec, *why; } cases[] = {
		{ "task-clock:S", "'S' (perf record's sample read of a group" },
		{ "cycles:W", "'W' (perf's weak group" },
		{ "instructions:P", "'P' (the highest precise level" },
		{ "page-faults:b", "'b' (perf's BPF counters)" },
	};
	struct th_run r;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		th_tacho(&r, "stat", "-e", cases[i].spec, "--", "true", NULL);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, cases[i].why);
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_terms),
		cmocka_unit_test(test_software_and_e),
		cmocka_unit_test(test_refused_modifiers),
	};

	/* the helper's start-up faults the same pages every run (test-cmd-stat.c) */
	personality(ADDR_NO_RANDOMIZE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
