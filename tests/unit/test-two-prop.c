/* test-two-prop.c - the interval of the change of a share between two binomial samples
 * (tc_two_prop_interval, lib/util/welch.c: what tacho diff gives each row of two
 * recordings), held to the published figures of Newcombe 1998 (Stat. Med. 17:873,
 * Table II, method 10: the hybrid score interval) to four decimals, eight cases from
 * shares in the middle to shares of 0 and 1; its symmetry, its narrowing with more
 * samples, and its refusals. */
#include <errno.h>
#include <math.h>

#include "harness.h"
#include "util/util.h"

static const struct {
	int line;
	/* Newcombe's p1 = x1/n1 and p2 = x2/n2, for p1 - p2: here "after" and "before" */
	uint64_t x1, n1, x2, n2;
	double lo, hi;
} newcombe[] = {
	{ __LINE__, 56, 70, 48, 80, 0.0524, 0.3339 },   /* (a) */
	{ __LINE__, 9, 10, 3, 10, 0.1705, 0.8090 },     /* (b) */
	{ __LINE__, 5, 56, 0, 29, -0.0381, 0.1926 },    /* (d) */
	{ __LINE__, 0, 10, 0, 20, -0.1611, 0.2775 },    /* (e) */
	{ __LINE__, 0, 10, 0, 10, -0.2775, 0.2775 },    /* (f) */
	{ __LINE__, 10, 10, 0, 20, 0.6791, 1.0000 },    /* (g) */
	{ __LINE__, 10, 10, 0, 10, 0.6075, 1.0000 },    /* (h) */
};

static void test_newcombe_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(newcombe) / sizeof(newcombe[0]); i++) {
		struct tc_two_prop t;
		double change = (double)newcombe[i].x1 / (double)newcombe[i].n1 -
				(double)newcombe[i].x2 / (double)newcombe[i].n2;

		if (tc_two_prop_interval(newcombe[i].x2, newcombe[i].n2, newcombe[i].x1,
					 newcombe[i].n1, 0.95, &t))
			fail_msg("line %d: refused", newcombe[i].line);
		if (fabs(t.change - change) > 1e-12 || fabs(t.lo - newcombe[i].lo) > 5e-5 ||
		    fabs(t.hi - newcombe[i].hi) > 5e-5)
			fail_msg("line %d: %.6f [%.6f, %.6f], want [%.4f, %.4f]", newcombe[i].line,
				 t.change, t.lo, t.hi, newcombe[i].lo, newcombe[i].hi);
		if (fabs(t.z - 1.959964) > 1e-6)
			fail_msg("line %d: z %.8f", newcombe[i].line, t.z);
	}
}

static void test_shape(void **state)
{
	struct tc_two_prop a, b, c;
	(void)state;

	/* swapping the sides mirrors the interval */
	assert_int_equal(tc_two_prop_interval(48, 80, 56, 70, 0.95, &a), 0);
	assert_int_equal(tc_two_prop_interval(56, 70, 48, 80, 0.95, &b), 0);
	assert_true(fabs(a.lo + b.hi) < 1e-12 && fabs(a.hi + b.lo) < 1e-12);
	/* the same shares from a hundred times the samples: a narrower interval */
	assert_int_equal(tc_two_prop_interval(4800, 8000, 5600, 7000, 0.95, &c), 0);
	assert_true(c.hi - c.lo < (a.hi - a.lo) / 5);
	assert_true(c.lo > a.lo && c.hi < a.hi);
	/* a higher confidence: a wider one */
	assert_int_equal(tc_two_prop_interval(48, 80, 56, 70, 0.99, &c), 0);
	assert_true(c.lo < a.lo && c.hi > a.hi);
	assert_true(fabs(c.z - 2.575829) < 1e-6);
	/* equal shares: an interval around 0 */
	assert_int_equal(tc_two_prop_interval(100, 1000, 100, 1000, 0.95, &c), 0);
	assert_true(c.change == 0 && c.lo < 0 && c.hi > 0);
}

static void test_refusals(void **state)
{
	struct tc_two_prop t;
	(void)state;

	assert_int_equal(tc_two_prop_interval(0, 0, 1, 10, 0.95, &t), -EINVAL);
	assert_int_equal(tc_two_prop_interval(1, 10, 0, 0, 0.95, &t), -EINVAL);
	assert_int_equal(tc_two_prop_interval(11, 10, 1, 10, 0.95, &t), -EINVAL);
	assert_int_equal(tc_two_prop_interval(1, 10, 1, 10, 1.0, &t), -EINVAL);
	assert_int_equal(tc_two_prop_interval(1, 10, 1, 10, 0.0, &t), -EINVAL);
	assert_int_equal(tc_two_prop_interval(1, 10, 1, 10, NAN, &t), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_newcombe_table),
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
