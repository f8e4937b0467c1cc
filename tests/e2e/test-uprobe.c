/* test-uprobe.c - uprobe and uretprobe events end to end through the tacho binary:
 * `tacho stat` counts the calls of a function of tests/progs/uprobe-calls exactly
 * (work() N times, leaf() 2N times), a misspelt function gets a one-line error with a
 * caret and a suggestion, and `tacho list` shows the syntax as usable here. Skips,
 * saying why, where the kernel has no uprobe PMU. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

static char prog[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	if (!realpath(th_prog("uprobe-calls"), prog))
		snprintf(prog, sizeof(prog), "%s", th_prog("uprobe-calls"));
	return 0;
}

static bool have_uprobe_pmu(void)
{
	return access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0;
}
#define NEED_UPROBES()                                                                  \
	do {                                                                            \
		if (!have_uprobe_pmu())                                                 \
			TEST_SKIP("no uprobe PMU in /sys/bus/event_source/devices (the "   \
				  "kernel lacks CONFIG_UPROBE_EVENTS)");                \
	} while (0)

/* The issue's own example: 1234 calls count 1234, in the text output. */
static void test_stat_text(void **state)
{
	char ev[PATH_MAX + 32];
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);

	NEED_UPROBES();
	snprintf(ev, sizeof(ev), "uprobe:%s:work", prog);
	th_tacho(&r, "stat", "-e", ev, "--", prog, "1234", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "1,234");
	assert_contains(r.err, ev);
	th_run_free(&r);
}

/* Entries, returns and a callee, for several N, from the JSON; and over -r runs. */
static void test_stat_exact(void **state)
{
	static const char *const ns[] = { "0", "1", "1234", "54321" };
	char ev[3 * PATH_MAX + 64];
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);

	NEED_UPROBES();
	snprintf(ev, sizeof(ev), "uprobe:%s:work,uretprobe:%s:work,uprobe:%s:leaf:u", prog, prog,
		 prog);
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		double n = strtod(ns[k], NULL);
		struct th_run r;
		struct th_json *j;

		th_tacho(&r, "stat", "--json", "-e", ev, "--", prog, ns[k], NULL);
		assert_int_equal(r.status, 0);
		j = assert_json(r.err);
		assert_json_str(j, "events[0].status", "counted");
		assert_json_str(j, "events[1].status", "counted");
		assert_json_str(j, "events[2].status", "counted");
		if (json_num(j, "events[0].value") != n || json_num(j, "events[1].value") != n ||
		    json_num(j, "events[2].value") != 2 * n)
			fail_msg("N=%s: work %g, returns %g, leaf %g", ns[k],
				 json_num(j, "events[0].value"), json_num(j, "events[1].value"),
				 json_num(j, "events[2].value"));
		th_json_free(j);
		th_run_free(&r);
	}
}

static void test_stat_repeat(void **state)
{
	char ev[PATH_MAX + 32];
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);

	NEED_UPROBES();
	snprintf(ev, sizeof(ev), "uprobe:%s:work", prog);
	th_tacho(&r, "stat", "--json", "-r", "3", "-e", ev, "--", prog, "777", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.err);
	for (int i = 0; i < 3; i++) {
		char p[64];
		snprintf(p, sizeof(p), "events[0].values[%d]", i);
		assert_true(json_num(j, p) == 777);
	}
	th_json_free(j);
	th_run_free(&r);
}

/* A misspelt function: exit 2, the spec with a caret under the name, a suggestion. */
static void test_stat_bad_symbol(void **state)
{
	char ev[PATH_MAX + 32], caret[PATH_MAX + 32];
	struct th_run r;
	(void)state;

	NEED_UPROBES();
	snprintf(ev, sizeof(ev), "uprobe:%s:wrk", prog);
	th_tacho(&r, "stat", "-e", ev, "--", prog, "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "no function 'wrk'");
	assert_contains(r.err, "did you mean 'work'?");
	memset(caret, ' ', strlen("uprobe:") + strlen(prog) + 1);
	snprintf(caret + strlen("uprobe:") + strlen(prog) + 1, 3, "^\n");
	assert_contains(r.err, caret);
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", "uprobe:/nonexistent/prog:main", "--", prog, "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "cannot find '/nonexistent/prog'");
	th_run_free(&r);
}

/* tacho record samples a uprobe too: with period 1, N calls are exactly N samples, all
 * in work(). (record copies the attrs and frees the list before it opens them.) */
static void test_record(void **state)
{
	char ev[PATH_MAX + 32], file[] = "/tmp/tacho-uprobe-XXXXXX";
	struct th_run r;
	int fd;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);

	NEED_UPROBES();
	fd = mkstemp(file);
	assert_true(fd >= 0);
	close(fd);
	snprintf(ev, sizeof(ev), "uprobe:%s:work", prog);
	th_tacho(&r, "record", "--no-buildid-cache", "-o", file, "-e", ev, "-c", "1", "--", prog,
		 "500", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "500 samples, 0 lost");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", file, NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "# 500 samples of");
	/* the function last, after its binary (report's columns since the dimensions) */
	assert_contains(r.out, "    500  100.00%  uprobe-calls  work\n");
	th_run_free(&r);
	unlink(file);
}

/* tacho list: the syntax row, opened for real here ("yes"). */
static void test_list(void **state)
{
	struct th_run r;
	const char *row;
	(void)state;

	th_tacho(&r, "list", NULL);
	assert_int_equal(r.status, 0);
	row = strstr(r.out, "uprobe:PATH:SYMBOL[+OFF]|0xOFFSET");
	assert_non_null(row);
	if (have_uprobe_pmu()) {
		char line[400];
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(row, "\n"), row);
		assert_contains(line, " yes ");
		assert_contains(line, "uprobe PMU");
	}
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_text),
		cmocka_unit_test(test_stat_exact),
		cmocka_unit_test(test_stat_repeat),
		cmocka_unit_test(test_stat_bad_symbol),
		cmocka_unit_test(test_record),
		cmocka_unit_test(test_list),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
