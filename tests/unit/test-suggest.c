/* test-suggest.c - "did you mean": the edit distance (insertions, deletions,
 * substitutions, swaps of neighbours), the nearest-name rule and its limits, and the
 * event names suggested from what tacho list knows. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "harness.h"
#include "events/events.h"
#include "util/util.h"

static unsigned dist(const char *a, const char *b)
{
	return tc_edit_distance(a, strlen(a), b, strlen(b));
}

static void test_distance(void **state)
{
	char big[80];
	(void)state;

	assert_int_equal(dist("", ""), 0);
	assert_int_equal(dist("", "abc"), 3);
	assert_int_equal(dist("abc", ""), 3);
	assert_int_equal(dist("page-fault", "page-faults"), 1);     /* insertion */
	assert_int_equal(dist("cycless", "cycles"), 1);             /* deletion */
	assert_int_equal(dist("task-clokc", "task-clock"), 1);      /* a swap */
	assert_int_equal(dist("cicles", "cycles"), 1);              /* substitution */
	assert_int_equal(dist("CYCLES", "cycles"), 0);              /* letter case */
	assert_int_equal(dist("kitten", "sitting"), 3);
	assert_int_equal(dist("ca", "abc"), 3);   /* optimal string alignment, not Damerau */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(dist(big, "a"), UINT_MAX);
}

static const char *nearest(struct tc_nearest *n, const char *word, const char *const *cands)
{
	tc_nearest_init(n, word, strlen(word));
	for (size_t i = 0; cands[i]; i++)
		tc_nearest_add(n, cands[i], strlen(cands[i]));
	return tc_nearest_get(n);
}

static void test_nearest(void **state)
{
	static const char *const names[] = { "page-faults", "major-faults", "minor-faults",
					     "task-clock", "cpu-clock", "cycles", "repeat",
					     "record", NULL };
	struct tc_nearest n;
	(void)state;

	assert_string_equal(nearest(&n, "page-fault", names), "page-faults");
	tc_nearest_exit(&n);
	assert_string_equal(nearest(&n, "task-clok", names), "task-clock");
	tc_nearest_exit(&n);
	assert_string_equal(nearest(&n, "Cycles", names), "cycles");
	tc_nearest_exit(&n);
	assert_string_equal(nearest(&n, "repat", names), "repeat");
	tc_nearest_exit(&n);
	/* too far for a word that short: a third of its length, at least 1 */
	assert_null(nearest(&n, "xyz", names));
	tc_nearest_exit(&n);
	assert_null(nearest(&n, "pages", names));
	tc_nearest_exit(&n);
	/* the word itself is no suggestion */
	assert_null(nearest(&n, "cycles", names));
	tc_nearest_exit(&n);
	/* a tie keeps the first offered */
	static const char *const tie[] = { "stat-x", "stat-y", NULL };
	const char *got = nearest(&n, "stat-z", tie);
	assert_non_null(got);
	assert_string_equal(got, "stat-x");
	tc_nearest_exit(&n);
}

/* Over the fake machine of tests/data/sysfs-pmu: generic and software names, and a
 * sysfs PMU's named event. */
static void test_events(void **state)
{
	struct tc_events_ctx ctx = { .sysfs_root = "tests/data/sysfs-pmu/devices",
				     .tracefs_root = "tests/data/sysfs-pmu/tracing" };
	char buf[128];
	(void)state;

	assert_int_equal(tc_events_suggest(&ctx, "page-fault", 10, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "page-faults");
	assert_int_equal(tc_events_suggest(&ctx, "task-clok", 9, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "task-clock");
	assert_int_equal(tc_events_suggest(&ctx, "contex-switches", 15, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "context-switches");
	/* the length given, not the string's: "cycle" of "cycle:u" */
	assert_int_equal(tc_events_suggest(&ctx, "cycle:u", 5, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "cycles");
	assert_int_equal(tc_events_suggest(&ctx, "xyzzy", 5, buf, sizeof(buf)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
