/* test-offcpu-pairing.c - record --off-cpu's pairing of switches (tc_offcpu_pair) on
 * data: each switch out with its thread's next switch in, whatever order the rings
 * were read in; preempted threads' ins, lost ins and unended waits. */
#include <string.h>

#include "harness.h"
#include "record/offcpu.h"

struct got {
	int paired[8];          /* by out idx: 0 not named, 1 paired, 2 dropped */
	uint64_t waited[8];
};

static void each(void *arg, size_t out, bool paired, uint64_t waited)
{
	struct got *g = arg;

	assert_true(out < 8);
	assert_int_equal(g->paired[out], 0);   /* named once */
	g->paired[out] = paired ? 1 : 2;
	g->waited[out] = waited;
}

/* Two threads; the rings read CPU 1 first: each in comes before its out in the array. */
static void test_pair_any_order(void **state)
{
	struct tc_offcpu_switch sw[] = {
		{ 1300, 7, false, 0 },  /* tid 7 back in */
		{ 1500, 8, false, 1 },  /* tid 8 back in */
		{ 1000, 7, true, 0 },   /* tid 7 blocked */
		{ 1100, 8, true, 1 },   /* tid 8 blocked */
		{ 1050, 8, false, 2 },  /* tid 8 back in after a preemption, before it blocked */
	};
	struct got g = { 0 };

	(void)state;
	tc_offcpu_pair(sw, ARRAY_SIZE(sw), false, each, &g);
	assert_int_equal(g.paired[0], 1);
	assert_int_equal(g.waited[0], 300);
	assert_int_equal(g.paired[1], 1);
	assert_int_equal(g.waited[1], 400);
}

/* An out not yet followed waits (not named) unless final; an out followed by another
 * out lost its in: dropped. */
static void test_pair_pending_and_lost(void **state)
{
	struct tc_offcpu_switch sw[] = {
		{ 100, 5, true, 0 },
		{ 200, 5, true, 1 },    /* the in of 0 was lost */
		{ 250, 5, false, 0 },
		{ 300, 5, true, 2 },    /* still waiting */
	};
	struct tc_offcpu_switch again[ARRAY_SIZE(sw)];
	struct got g = { 0 }, f = { 0 };

	(void)state;
	memcpy(again, sw, sizeof(sw));
	tc_offcpu_pair(sw, ARRAY_SIZE(sw), false, each, &g);
	assert_int_equal(g.paired[0], 2);
	assert_int_equal(g.paired[1], 1);
	assert_int_equal(g.waited[1], 50);
	assert_int_equal(g.paired[2], 0);
	tc_offcpu_pair(again, ARRAY_SIZE(again), true, each, &f);
	assert_int_equal(f.paired[2], 2);
	assert_int_equal(f.waited[2], 0);
}

/* An out and an in of the same time: the out first (a zero wait), never an in paired
 * with the out after it. */
static void test_pair_same_time(void **state)
{
	struct tc_offcpu_switch sw[] = {
		{ 400, 9, false, 0 },
		{ 400, 9, true, 0 },
	};
	struct got g = { 0 };

	(void)state;
	tc_offcpu_pair(sw, ARRAY_SIZE(sw), false, each, &g);
	assert_int_equal(g.paired[0], 1);
	assert_int_equal(g.waited[0], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pair_any_order),
		cmocka_unit_test(test_pair_pending_and_lost),
		cmocka_unit_test(test_pair_same_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
