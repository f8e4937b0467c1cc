/* test-did-you-mean.c - the tacho command suggests the nearest name for a misspelt
 * event (over the names tacho list knows), option or command, in its one-line usage
 * error (exit 2), and suggests nothing when nothing is near. */
#include <string.h>

#include "harness.h"

static void test_events(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stat", "-e", "page-fault", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho: bad event list: unknown event 'page-fault': did you "
			       "mean 'page-faults'? (not a generic, cache, software, raw, "
			       "tracepoint or libpfm4 name; see 'tacho list')\n");
	th_run_free(&r);
	th_tacho(&r, "stat", "-e", "cycles,task-clok:u", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	/* a name with modifiers could be a tracepoint: both are said */
	assert_contains(r.err, "no tracepoint subsystem 'task-clok' in ");
	assert_contains(r.err, "/events: did you mean 'task-clock'?\n");
	/* the caret still points at the event */
	assert_contains(r.err, "\ncycles,task-clok:u\n       ^\n");
	th_run_free(&r);
	th_tacho(&r, "stat", "-e", "xyzzy", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown event 'xyzzy' (not a generic");
	assert_not_contains(r.err, "did you mean");
	th_run_free(&r);
}

static void test_options(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stat", "--repat", "3", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho stat: unknown option '--repat': did you mean '--repeat'?\n"
			       "usage: tacho stat");
	th_run_free(&r);
	th_tacho(&r, "record", "--outptu=x.rec", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown option '--outptu=x.rec': did you mean '--output'?\n");
	th_run_free(&r);
	/* a missing value is no misspelling */
	th_tacho(&r, "stat", "--repeat", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown option or missing value: '--repeat'\n");
	assert_not_contains(r.err, "did you mean");
	th_run_free(&r);
	th_tacho(&r, "stat", "--xyzzy", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown option or missing value: '--xyzzy'\n");
	th_run_free(&r);
}

static void test_commands(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stta", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho: 'stta' is not a tacho command: did you mean 'stat'? "
			       "(see 'tacho help')\n");
	th_run_free(&r);
	th_tacho(&r, "frobnicate", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho: 'frobnicate' is not a tacho command (see 'tacho help')\n");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_commands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
