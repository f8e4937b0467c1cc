/* test-stat-events.c - the event forms of issue 11 through `tacho stat`, exact where the
 * kernel is: terms on a named event (page-faults/period=10/ counts what page-faults
 * counts), cgroup-switches, perf 6.1's modifiers (e applied; S, W, P, b refused with
 * why). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "util/util.h"

/* docs/events.md's example: 100 fresh pages counted three ways in one run, the same
 * count each time; the name= term names the event in the output. */
static void test_named_terms(void **state)
{
	struct th_run r;
	struct th_json *j;
	double plain;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	j = th_stat_json(&r, "-e", "page-faults,page-faults/period=10/,page-faults/name=pf/u", "--",
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

/* A derived metric's name is never cut: an event named with 115 characters has a rate
 * metric of 120, whole in the JSON and the CSV, and unlike the event's own name (which
 * a cut at 63 bytes once made them share). */
static void test_long_metric_name(void **state)
{
	char ev[116], spec[260], metric[200], expr[240];
	const struct th_json *m;
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	memset(ev, 'e', 115);
	memcpy(ev, "faults-", 7);
	ev[115] = '\0';
	snprintf(spec, sizeof(spec), "page-faults/name=%s/", ev);
	snprintf(metric, sizeof(metric), "%s rate", ev);
	snprintf(expr, sizeof(expr), "%s / wall time", ev);
	assert_int_equal(strlen(metric), 120);

	j = th_stat_json(&r, "-e", spec, "--", th_prog("stat-helper"), "pages", "10", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].name"), ev);
	m = assert_json_named(j, "metrics", metric);
	assert_json_str(m, "expr", expr);
	assert_json_str(m, "unit", "/sec");
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "stat", "-x,", "-e", spec, "--", th_prog("stat-helper"), "pages", "10",
		 NULL);
	assert_int_equal(r.status, 0);
	snprintf(spec, sizeof(spec), "\nmetric,%s,derived,", metric);
	assert_contains(r.err, spec);
	snprintf(spec, sizeof(spec), ",%s\n", expr);
	assert_contains(r.err, spec);
	th_run_free(&r);
}

/* cgroup-switches is known and counts (Linux 5.13 and later); exclusive (:e) counts as
 * the plain event does. */
static void test_software_and_e(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	j = th_stat_json(&r, "-e", "cgroup-switches,page-faults,page-faults:e", "--",
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

static bool have_uprobe_pmu(void)
{
	return access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0;
}

/* An SDT probe fired K times counts K; a probe guarded by its semaphore fires only
 * because tacho had the kernel raise it (the program prints how often its guarded site
 * ran: K under tacho, 0 without). */
static void test_sdt(void **state)
{
	char prog[PATH_MAX], tick[PATH_MAX + 64], guarded[PATH_MAX + 64], spec[2 * PATH_MAX + 200];
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);

	if (!have_uprobe_pmu())
		TEST_SKIP("no uprobe PMU in /sys/bus/event_source/devices (the kernel lacks "
			  "CONFIG_UPROBE_EVENTS)");
	assert_non_null(realpath(th_prog("sdt-probes"), prog));
	snprintf(tick, sizeof(tick), "sdt:%s:tacho_test:tick", prog);
	snprintf(guarded, sizeof(guarded), "sdt:%s:tacho_test:guarded", prog);
	snprintf(spec, sizeof(spec), "%s,%s", tick, guarded);
	j = th_stat_json(&r, "-e", spec, "--", prog, "1234", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_int_equal((long long)json_num(j, "events[0].value"), 1234);
	assert_int_equal((long long)json_num(j, "events[1].value"), 1234);
	assert_string_equal(r.out, "1234\n");
	th_json_free(j);
	th_run_free(&r);

	/* docs/events.md's example, in the table; the unguarded probe alone leaves the
	 * semaphore of the other at 0 */
	th_tacho(&r, "stat", "-e", tick, "--", prog, "77", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "  77    sdt:");
	assert_string_equal(r.out, "0\n");
	th_run_free(&r);

	/* a misspelt probe: the nearest one of the file */
	snprintf(spec, sizeof(spec), "sdt:%s:tacho_test:tock", prog);
	th_tacho(&r, "stat", "-e", spec, "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "no SDT probe 'tacho_test:tock'");
	assert_contains(r.err, "did you mean 'tacho_test:tick'?");
	th_run_free(&r);
	th_tacho(&r, "stat", "-e", "sdt:/etc/passwd:a:b", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "is not an ELF file");
	th_run_free(&r);
	snprintf(spec, sizeof(spec), "sdt:%s:tacho_test", prog);
	th_tacho(&r, "stat", "-e", spec, "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "expected sdt:PATH:PROVIDER:NAME");
	th_run_free(&r);
}

/* tacho list sdt FILE: the sites, their offsets and semaphores, as a table and JSON. */
static void test_list_sdt(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	th_tacho(&r, "list", "sdt", th_prog("sdt-probes"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "tacho_test:tick");
	assert_contains(r.out, "tacho_test:guarded");
	th_run_free(&r);
	th_tacho(&r, "list", "sdt", th_prog("sdt-probes"), "--json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_int_equal(th_json_get(j, "probes")->n, 2);
	assert_string_equal(json_str(j, "probes[0].provider"), "tacho_test");
	assert_string_equal(json_str(j, "probes[0].name"), "tick");
	assert_true(json_num(j, "probes[0].semaphore_offset") > 0);
	assert_string_equal(json_str(j, "probes[1].args"), "-8@%rdx");
	th_json_free(j);
	th_run_free(&r);
	/* a file without notes: none, and 0 */
	th_tacho(&r, "list", "sdt", th_prog("stat-helper"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "(none: the file has no .note.stapsdt)");
	th_run_free(&r);
	th_tacho(&r, "list", "sdt", "/nonexistent", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot list the SDT probes of '/nonexistent'");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_terms),
		cmocka_unit_test(test_long_metric_name),
		cmocka_unit_test(test_software_and_e),
		cmocka_unit_test(test_refused_modifiers),
		cmocka_unit_test(test_sdt),
		cmocka_unit_test(test_list_sdt),
	};

	/* the helper's start-up faults the same pages every run (test-cmd-stat.c) */
	personality(ADDR_NO_RANDOMIZE);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
