/* test-cmd-doctor.c - `tacho doctor`: every check present, limitations that say what to
 * do, values that agree with /proc and sysfs, the JSON contract, the clocks, bad usage. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "harness.h"
#include "json-check.h"
#include "tacho.h"
#include "util/util.h"

static const char *const keys[] = {
	"pmu", "counters", "vm", "paranoid", "caps", "software", "breakpoints", "tracefs",
	"rdpmc", "msr", "nmi_watchdog", "mlock", "sample_rate", "tsc", "clocksource",
};

static const char *const clock_names[] = {
	"tsc", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_MONOTONIC_COARSE",
	"CLOCK_REALTIME", "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID",
};

/* The check whose "key" is key, or NULL. */
static const struct th_json *check_of(const struct th_json *j, const char *key)
{
	return th_json_find(j, "checks", "key", key);
}

static void test_json(void **state)
{
	struct th_run r;
	struct th_json *j;
	const struct th_json *c, *clocks;
	long long paranoid;
	char want[32];
	struct stat st;
	bool pmu_dir;
	(void)state;

	th_tacho(&r, "doctor", "--json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_json_int(j, "version", 1);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		c = check_of(j, keys[i]);
		if (!c)
			fail_msg("no check '%s' in %s", keys[i], r.out);
		const char *st_name = json_str(c, "state");
		const char *text = json_str(c, "text");
		json_str(c, "title");
		json_str(c, "value");
		assert_true(strlen(text) > 10);
		if (!strcmp(st_name, "limited")) {
			/* every limitation ends with what to do */
			if (text[strlen(text) - 1] != ')')
				fail_msg("limited '%s' does not end with a hint: %s", keys[i], text);
		} else if (strcmp(st_name, "ok") && strcmp(st_name, "info")) {
			fail_msg("check '%s': state '%s'", keys[i], st_name);
		}
	}

	/* values agree with the machine */
	assert_int_equal(tc_read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid), 0);
	snprintf(want, sizeof(want), "%lld", paranoid);
	assert_string_equal(json_str(check_of(j, "paranoid"), "value"), want);
	pmu_dir = stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
		  stat("/sys/bus/event_source/devices/cpu_core", &st) == 0;
	if (!pmu_dir) {
		assert_string_equal(json_str(check_of(j, "pmu"), "state"), "limited");
		assert_string_equal(json_str(check_of(j, "pmu"), "value"), "none");
		assert_contains(json_str(check_of(j, "pmu"), "text"), "no hardware PMU");
	}
	/* software events and breakpoints open on every machine DESIGN.md targets */
	assert_string_equal(json_str(check_of(j, "software"), "state"), "ok");
	if (stat("/dev/cpu/0/msr", &st) != 0)
		assert_string_equal(json_str(check_of(j, "msr"), "value"), "absent");

	clocks = th_json_get(j, "clocks");
	assert_non_null(clocks);
	assert_int_equal(clocks->n, ARRAY_SIZE(clock_names));
	for (size_t i = 0; i < ARRAY_SIZE(clock_names); i++) {
		assert_string_equal(json_str(clocks->items[i], "name"), clock_names[i]);
		const struct th_json *e = th_json_get(clocks->items[i], "error");
		assert_non_null(e);
		if (e->type != TH_JSON_NULL)
			continue;
		assert_json_type(clocks->items[i], "read_ns", TH_JSON_NUMBER);
		assert_true(th_json_get(clocks->items[i], "read_ns")->number > 0);
	}
	/* the resolution is clock_getres's, exactly */
	{
		struct timespec ts;
		clock_getres(CLOCK_MONOTONIC_COARSE, &ts);
		assert_true(th_json_get(clocks->items[3], "resolution_ns")->number ==
			    (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec);
	}
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "doctor", "--json", "--no-clocks", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_int_equal(th_json_get(j, "clocks")->n, 0);
	th_json_free(j);
	th_run_free(&r);
}

static void test_text(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "doctor", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "hardware PMU");
	assert_contains(r.out, "perf_event_paranoid");
	assert_contains(r.out, "hardware breakpoints");
	assert_contains(r.out, "CLOCK_MONOTONIC_RAW");
	assert_contains(r.out, "CLOCK_THREAD_CPUTIME_ID");
	/* one line per check, the two headings; the sources' heading, their header and
	 * the eight sources; the clock header and seven clocks */
	assert_contains(r.out, "\n  source           verdict ");
	assert_int_equal(th_count_lines(r.out), 2 + ARRAY_SIZE(keys) + 3 + 1 + 8 + 3 + 1 + 7);
	assert_string_equal(r.err, "");
	th_run_free(&r);
}

static void test_usage(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "doctor", "--bogus", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho doctor: unknown option or missing value: '--bogus'");
	assert_contains(r.err, "usage: tacho doctor");
	assert_int_equal(th_count_lines(r.err), 2);
	assert_string_equal(r.out, "");
	th_run_free(&r);

	th_tacho(&r, "doctor", "extra", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unexpected argument 'extra'");
	th_run_free(&r);

	th_tacho(&r, "doctor", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tc_starts_with(r.out, "usage: tacho doctor"));
	th_run_free(&r);

	th_tacho(&r, "help", "doctor", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tc_starts_with(r.out, "usage: tacho doctor"));
	th_run_free(&r);
}

/* The library call behind it: the count, short buffers, bad arguments. */
/* Every source with its proof, in the order of enum tacho_source; the test switch makes
 * each silent, and --require turns a verdict into the exit status. */
static void test_sources(void **state)
{
	static const char *const names[] = { "breakpoint-data", "breakpoint-exec", "page-faults",
					     "tracepoint", "uprobe", "kprobe", "instructions",
					     "branches" };
	struct th_run r;
	struct th_json *j;
	const char *why;
	(void)state;

	th_tacho(&r, "doctor", "--json", "--no-clocks", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_int_equal(th_json_get(j, "sources")->n, ARRAY_SIZE(names));
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char path[64];
		const char *v;

		snprintf(path, sizeof(path), "sources[%zu].source", i);
		assert_string_equal(json_str(j, path), names[i]);
		snprintf(path, sizeof(path), "sources[%zu].verdict", i);
		v = json_str(j, path);
		if (strcmp(v, "exact") && strcmp(v, "silent") && strcmp(v, "wrong") &&
		    strcmp(v, "not open") && strcmp(v, "unknown"))
			fail_msg("source %s: verdict '%s'", names[i], v);
		/* the process's own verdict and tacho's agree: one machine */
		if (th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA + (int)i, &why) !=
		    !strcmp(v, "exact"))
			fail_msg("source %s: tacho says %s, this test's proof %s", names[i], v,
				 why[0] ? why : "exact");
	}
	assert_null(th_json_get(j, "verify"));    /* only with --verify */
	th_json_free(j);
	th_run_free(&r);

	/* the switch: every source silent, said to be forced */
	th_not_firing("all");
	th_tacho(&r, "doctor", "--json", "--no-clocks", NULL);
	th_not_firing_end();
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char path[64];
		snprintf(path, sizeof(path), "sources[%zu].verdict", i);
		assert_string_equal(json_str(j, path), "silent");
		snprintf(path, sizeof(path), "sources[%zu].forced", i);
		assert_true(th_json_get(j, path)->boolean);
	}
	th_json_free(j);
	th_run_free(&r);

	/* --require: exit 1 and one line per source that is not exact */
	th_not_firing("uprobe,kprobe");
	th_tacho(&r, "doctor", "--no-clocks", "--require", "uprobe,kprobe", NULL);
	th_not_firing_end();
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: uprobe is required to count exactly, and is silent here: "
			       "made not to fire by TACHO_TEST_NOT_FIRING");
	assert_contains(r.err, "tacho: kprobe is required");
	assert_int_equal(th_count_lines(r.err), 2);
	th_run_free(&r);
	if (th_source_exact(TACHO_SOURCE_PAGE_FAULTS, &why)) {
		th_tacho(&r, "doctor", "--no-clocks", "--require", "page-faults", NULL);
		assert_int_equal(r.status, 0);
		assert_string_equal(r.err, "");
		th_run_free(&r);
	}
	th_tacho(&r, "doctor", "--require", "page-fault", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--require: no source 'page-fault'");
	th_run_free(&r);

	/* the breakpoints check follows its source's proof */
	th_not_firing("breakpoint-data");
	th_tacho(&r, "doctor", "--json", "--no-clocks", NULL);
	th_not_firing_end();
	j = assert_json(r.out);
	if (strcmp(json_str(check_of(j, "breakpoints"), "value"), "no")) {
		assert_string_equal(json_str(check_of(j, "breakpoints"), "value"),
				    "opens, never fires");
		assert_string_equal(json_str(check_of(j, "breakpoints"), "state"), "limited");
	}
	th_json_free(j);
	th_run_free(&r);
}

/* --verify: the sources proven now, and the hardware counters' checks, which say why
 * they were skipped where there is no PMU. */
static void test_verify(void **state)
{
	struct th_run r;
	struct th_json *j;
	const struct th_json *v;
	(void)state;

	th_tacho(&r, "doctor", "--verify", "--json", "--no-clocks", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	v = th_json_get(j, "verify");
	assert_non_null(v);
	assert_int_equal(v->n, 4);
	assert_json_str(j, "verify[0].key", "rdpmc");
	assert_json_str(j, "verify[3].key", "lbr");
	/* proven now, not read from this boot's cache */
	for (size_t i = 0; i < th_json_get(j, "sources")->n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "sources[%zu].cached", i);
		assert_false(th_json_get(j, path)->boolean);
	}
	th_json_free(j);
	th_run_free(&r);
	th_tacho(&r, "doctor", "--verify", "--no-clocks", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\nwhat each source counts, proven by counting known events");
	assert_contains(r.out, "\nthe hardware counters, checked:\n");
	th_run_free(&r);
}

static void test_library(void **state)
{
	struct tacho_check c[40], one;
	struct {
		struct tacho_check c;
		int future;
	} newer[2] = { [0].future = 1, [1].future = 2 };
	int n, m;
	(void)state;

	n = tacho_machine_check(c, ARRAY_SIZE(c), sizeof(c[0]));
	assert_int_equal(n, ARRAY_SIZE(keys));
	m = tacho_machine_check(&one, 1, sizeof(one));
	assert_int_equal(m, n);                /* says how many there are */
	assert_string_equal(one.key, "pmu");
	assert_int_equal(tacho_machine_check(NULL, 0, sizeof(one)), n);
	assert_int_equal(tacho_machine_check(NULL, 3, sizeof(one)), -EINVAL);
	/* the caller's element size: a newer header's larger checks, at their stride */
	assert_int_equal(tacho_machine_check(&newer[0].c, 2, sizeof(newer[0])), n);
	assert_string_equal(newer[0].c.key, keys[0]);
	assert_string_equal(newer[1].c.key, keys[1]);
	assert_int_equal(newer[0].future, 1);
	assert_int_equal(newer[1].future, 2);
	assert_int_equal(tacho_machine_check(c, 2, offsetof(struct tacho_check, hint)), -EINVAL);
	/* allocated by the library, at the caller's size: every check, in order, once */
	{
		struct tacho_check *all = NULL;

		assert_int_equal(tacho_machine_check_alloc(&all, sizeof(*all)), n);
		assert_non_null(all);
		for (int i = 0; i < n; i++)
			assert_string_equal(all[i].key, keys[i]);
		free(all);
		assert_int_equal(tacho_machine_check_alloc(NULL, sizeof(*all)), -EINVAL);
		assert_int_equal(tacho_machine_check_alloc(&all, offsetof(struct tacho_check, hint)),
				 -EINVAL);
		assert_null(all);
	}
	assert_string_equal(tacho_check_state_name(TACHO_CHECK_LIMIT), "limited");
	assert_string_equal(tacho_check_state_name((enum tacho_check_state)9), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
