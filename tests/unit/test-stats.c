/* test-stats.c - descriptive statistics: known values, edge cases (n = 0, 1, mean 0),
 * the one percentile (double and u64, NaN), numerical stability, u64 inputs beyond
 * 2^32. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/util.h"

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * (1.0 + fabs(b)))

static const double data1[] = { 2, 4, 4, 4, 5, 5, 7, 9 };

static void test_known_values(void **state)
{
	struct tc_stats s;
	(void)state;

	assert_int_equal(tc_stats_compute(data1, ARRAY_SIZE(data1), &s), 0);
	assert_int_equal(s.n, 8);
	assert_true(s.min == 2 && s.max == 9);
	assert_true(NEAR(s.mean, 5.0));
	/* sum of squared deviations 32; sample variance 32/7 */
	assert_true(NEAR(s.stddev, sqrt(32.0 / 7.0)));
	assert_true(NEAR(s.median, 4.5));
	/* |x - 4.5| = 2.5 .5 .5 .5 .5 .5 2.5 4.5 -> sorted .5 x5, 2.5, 2.5, 4.5: median .5 */
	assert_true(NEAR(s.mad, 0.5));
	assert_true(NEAR(s.spread_pct, 100.0 * 7.0 / 5.0));
	assert_true(NEAR(s.rsd_pct, 100.0 * sqrt(32.0 / 7.0) / 5.0));
}

static const struct {
	double p, want;
} pct_cases[] = {
	/* data 1..5 sorted: h = 4p/100 */
	{ 0, 1 }, { 100, 5 }, { 50, 3 }, { 25, 2 }, { 10, 1.4 }, { 90, 4.6 },
	{ -5, 1 }, { 150, 5 }, { 62.5, 3.5 },
};

static void test_percentile(void **state)
{
	const double v[] = { 5, 1, 4, 2, 3 };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(pct_cases); i++) {
		double got = tc_stats_percentile(v, 5, pct_cases[i].p);
		if (!NEAR(got, pct_cases[i].want))
			fail_msg("percentile case %zu (p=%g): got %g want %g", i, pct_cases[i].p,
				 got, pct_cases[i].want);
	}
	assert_true(isnan(tc_stats_percentile(v, 0, 50)));
	assert_true(isnan(tc_stats_percentile(v, 5, NAN)));
	assert_true(tc_stats_percentile(v, 1, 73) == 5);
	/* even count: median is the mean of the middle two */
	assert_true(NEAR(tc_stats_percentile(v, 4, 50), 3.0));   /* 1 2 4 5 */
}

/* The edges every caller of the one percentile meets: no values, one, an even count,
 * NaN in the data (the result is NaN, wherever the NaN was), NaN as p. */
static void test_percentile_edges(void **state)
{
	const double one = 7, pair[] = { 10, 20 }, four[] = { 4, 1, 3, 2 };
	const double nan_first[] = { NAN, 1, 2 }, nan_mid[] = { 3, NAN, 1, 2 };
	double sorted[4];
	(void)state;

	assert_true(isnan(tc_stats_percentile(NULL, 0, 50)));
	assert_true(isnan(tc_stats_percentile_sorted(NULL, 0, 0)));
	for (double p = 0; p <= 100; p += 12.5)
		assert_true(tc_stats_percentile(&one, 1, p) == 7);
	assert_true(tc_stats_percentile(pair, 2, 50) == 15);
	assert_true(tc_stats_percentile(pair, 2, 25) == 12.5);
	assert_true(tc_stats_percentile(four, 4, 50) == 2.5);   /* mean of the middle two */
	assert_true(isnan(tc_stats_percentile(four, 4, NAN)));
	assert_true(isnan(tc_stats_percentile(nan_first, 3, 0)));
	assert_true(isnan(tc_stats_percentile(nan_mid, 4, 50)));
	assert_true(isnan(tc_stats_percentile(nan_mid, 4, 100)));
	assert_true(isnan(tc_stats_mode(nan_mid, 4, 0)));
	/* the sort orders NaN last, numbers ascending before it */
	memcpy(sorted, nan_mid, sizeof(sorted));
	tc_stats_sort(sorted, 4);
	assert_true(sorted[0] == 1 && sorted[1] == 2 && sorted[2] == 3 && isnan(sorted[3]));
	/* the caller's array is left as it was */
	assert_true(four[0] == 4 && four[3] == 2);
}

/* The u64 variant: the same definition, exact for ticks and counts beyond 2^32, and
 * two neighbours beyond 2^53 keep their distance (their integer difference). */
static void test_percentile_u64(void **state)
{
	uint64_t v[] = { 9, 1, 5, 3, 7 };
	const uint64_t even[] = { 6, 2, 4, 8 };
	const uint64_t big[] = { (1ull << 60) + 2, 1ull << 60 };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(pct_cases); i++) {
		/* pct_cases are for 1..5; scale to 1,3,5,7,9 */
		double got = tc_stats_percentile_u64(v, 5, pct_cases[i].p);
		if (!NEAR(got, 2 * pct_cases[i].want - 1))
			fail_msg("u64 case %zu (p=%g): got %g", i, pct_cases[i].p, got);
	}
	assert_true(v[0] == 9);   /* a copy was sorted */
	assert_true(tc_stats_percentile_u64(even, 4, 50) == 5);
	assert_true(isnan(tc_stats_percentile_u64(NULL, 0, 50)));
	assert_true(isnan(tc_stats_percentile_u64(even, 4, NAN)));
	assert_true(tc_stats_percentile_u64(even, 1, 50) == 6);
	assert_true(tc_stats_percentile_u64(big, 2, 50) == (double)(1ull << 60) + 1);
	tc_stats_sort_u64(v, 5);
	assert_true(v[0] == 1 && v[1] == 3 && v[2] == 5 && v[3] == 7 && v[4] == 9);
	assert_true(tc_stats_percentile_sorted_u64(v, 5, 50) == 5);
	assert_true(tc_stats_percentile_sorted_u64(v, 5, 100) == 9);
	assert_true(tc_stats_percentile_sorted_u64(v, 5, -1) == 1);
}

static void test_mode(void **state)
{
	const double exact[] = { 100, 101, 100, 250, 101, 100, 99 };
	const double near[] = { 1000.2, 1000.7, 1003.1, 1000.4, 1003.9, 990 };
	const double tie[] = { 7, 3, 7, 3 };
	(void)state;

	assert_true(tc_stats_mode(exact, ARRAY_SIZE(exact), 0) == 100);
	/* width 1: bins [1000,1001) holds three values: their mean */
	assert_true(NEAR(tc_stats_mode(near, ARRAY_SIZE(near), 1), (1000.2 + 1000.7 + 1000.4) / 3));
	/* width 10: [1000,1010) holds five */
	assert_true(NEAR(tc_stats_mode(near, ARRAY_SIZE(near), 10),
			 (1000.2 + 1000.7 + 1003.1 + 1000.4 + 1003.9) / 5));
	assert_true(tc_stats_mode(tie, ARRAY_SIZE(tie), 0) == 3);   /* the lower wins a tie */
	assert_true(tc_stats_mode(tie, 1, 0) == 7);
	assert_true(isnan(tc_stats_mode(tie, 0, 1)));
}

static void test_edge_counts(void **state)
{
	struct tc_stats s;
	const double one = 42, zeros[] = { 0, 0, 0 }, sym[] = { -1, 1 };
	(void)state;

	assert_int_equal(tc_stats_compute(NULL, 0, &s), 0);
	assert_int_equal(s.n, 0);
	assert_true(isnan(s.mean) && isnan(s.stddev) && isnan(s.min) && isnan(s.median));
	assert_true(isnan(s.spread_pct) && isnan(s.rsd_pct));

	assert_int_equal(tc_stats_compute(&one, 1, &s), 0);
	assert_true(s.mean == 42 && s.stddev == 0 && s.min == 42 && s.max == 42 && s.median == 42);
	assert_true(s.mad == 0 && s.spread_pct == 0 && s.rsd_pct == 0);

	/* mean 0, no spread: 0 %, not a division by zero */
	assert_int_equal(tc_stats_compute(zeros, 3, &s), 0);
	assert_true(s.spread_pct == 0 && s.rsd_pct == 0 && s.stddev == 0);
	/* mean 0 with spread: relative spread undefined */
	assert_int_equal(tc_stats_compute(sym, 2, &s), 0);
	assert_true(s.mean == 0 && isnan(s.spread_pct) && isnan(s.rsd_pct));
	assert_true(NEAR(s.stddev, sqrt(2.0)));
}

static void test_bad_values(void **state)
{
	struct tc_stats s;
	const double bad[] = { 1, NAN, 3 }, inf[] = { INFINITY };
	(void)state;

	assert_int_equal(tc_stats_compute(bad, 3, &s), -EINVAL);
	assert_int_equal(tc_stats_compute(inf, 1, &s), -EINVAL);
}

/* Values near 1e12 that differ by a few units: the naive sum-of-squares formula loses
 * everything here; Welford keeps it. */
static void test_stability(void **state)
{
	double v[1000];
	struct tc_stats s;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		v[i] = 1e12 + (double)(i % 2);   /* 1e12, 1e12+1, ... */
	assert_int_equal(tc_stats_compute(v, ARRAY_SIZE(v), &s), 0);
	assert_true(NEAR(s.mean, 1e12 + 0.5));
	/* population variance 0.25; sample: 0.25 * 1000/999 */
	assert_true(fabs(s.stddev - sqrt(0.25 * 1000.0 / 999.0)) < 1e-6);
}

static void test_u64(void **state)
{
	const uint64_t big[] = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	const uint64_t faults[] = { 1000, 1000, 1000, 1000, 1000 };
	const uint64_t mixed[] = { 5000000000ull, 5000000002ull, 5000000004ull };
	struct tc_stats s;
	(void)state;

	/* the integer sum would wrap; the mean must be UINT64_MAX as a double */
	assert_int_equal(tc_stats_compute_u64(big, 3, &s), 0);
	assert_true(s.mean == (double)UINT64_MAX && s.stddev == 0);

	assert_int_equal(tc_stats_compute_u64(faults, 5, &s), 0);
	assert_true(s.mean == 1000 && s.stddev == 0 && s.min == 1000 && s.max == 1000 &&
		    s.median == 1000 && s.spread_pct == 0);

	assert_int_equal(tc_stats_compute_u64(mixed, 3, &s), 0);
	assert_true(s.mean == 5000000002.0 && s.median == 5000000002.0);
	assert_true(NEAR(s.stddev, 2.0));
	assert_int_equal(tc_stats_compute_u64(NULL, 0, &s), 0);
	assert_true(isnan(s.mean));
}

static void test_welford(void **state)
{
	struct tc_welford w;
	(void)state;

	tc_welford_init(&w);
	assert_true(isnan(tc_welford_mean(&w)) && isnan(tc_welford_stddev(&w)));
	tc_welford_add(&w, 3);
	assert_true(tc_welford_mean(&w) == 3 && tc_welford_stddev(&w) == 0);
	for (size_t i = 0; i < ARRAY_SIZE(data1); i++)
		tc_welford_add(&w, data1[i]);
	/* 3,2,4,4,4,5,5,7,9: mean 43/9 */
	assert_true(NEAR(tc_welford_mean(&w), 43.0 / 9.0));
	assert_true(w.min == 2 && w.max == 9 && w.n == 9);
}

/* Selection gives, for every rank, what a sort puts there: random values, many
 * duplicates, all equal, sorted both ways, one element. */
static void test_select_u64(void **state)
{
	enum { N = 301 };
	uint64_t v[N], sorted[N], work[N], x = 88172645463325252ull;
	(void)state;

	for (int shape = 0; shape < 5; shape++) {
		for (size_t i = 0; i < N; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v[i] = shape == 0 ? x : shape == 1 ? x % 4 : shape == 2 ? 7
			     : shape == 3 ? i : N - i;
		}
		memcpy(sorted, v, sizeof(v));
		tc_stats_sort_u64(sorted, N);
		for (size_t k = 0; k < N; k++) {
			memcpy(work, v, sizeof(v));
			if (tc_stats_select_u64(work, N, k) != sorted[k])
				fail_msg("shape %d rank %zu", shape, k);
		}
	}
	v[0] = 42;
	assert_int_equal(tc_stats_select_u64(v, 1, 0), 42);
}

/* A scale of 10^-k divides by the exact power of ten: one rounding, so that the value
 * prints as its decimal (the product with an inexact 1e-6 does not); any other scale
 * multiplies. */
static void test_apply_scale(void **state)
{
	char buf[64];
	(void)state;

	assert_true(tc_apply_scale(510947, 1e-6) == 0.510947);
	assert_true(510947 * 1e-6 != 0.510947);   /* what the product gave */
	snprintf(buf, sizeof(buf), "%.17g", tc_apply_scale(510947, 1e-6));
	assert_string_equal(buf, "0.51094700000000004");   /* the double nearest 0.510947 */
	assert_true(tc_apply_scale(123456789, 1e-9) == 0.123456789);
	assert_true(tc_apply_scale(1234, 1e-3) == 1.234);
	assert_true(tc_apply_scale(7, 1) == 7);
	assert_true(tc_apply_scale(7, 0.5) == 3.5);
	assert_true(tc_apply_scale(7, 2.5) == 17.5);
	assert_true(tc_apply_scale(3, 0.3) == 3 * 0.3);
	assert_true(isnan(tc_apply_scale(NAN, 1e-6)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_values),
		cmocka_unit_test(test_apply_scale),
		cmocka_unit_test(test_percentile),
		cmocka_unit_test(test_percentile_edges),
		cmocka_unit_test(test_select_u64),
		cmocka_unit_test(test_percentile_u64),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_edge_counts),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_stability),
		cmocka_unit_test(test_u64),
		cmocka_unit_test(test_welford),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
