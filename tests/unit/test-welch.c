/* test-welch.c - the statistics of `tacho diff` (lib/util/welch.c) against known
 * values: the incomplete beta function's closed forms, Student's t quantiles of the
 * printed tables (to 15 digits), the closed forms for 1 and 2 degrees of freedom,
 * round trips of the CDF and the quantile at fractional df, and Welch's interval on
 * samples whose degrees of freedom come out whole. Each table row names its line on
 * failure. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "harness.h"
#include "util/util.h"

#define NEAR(a, b, tol) (fabs((a) - (double)(b)) <= (tol) * (1.0 + fabs((double)(b))))

/* Closed forms: I_x(1,1) = x, I_x(a,1) = x^a, I_x(1,b) = 1 - (1-x)^b, I_x(a,a) at 1/2
 * is 1/2, I_x(1/2,1/2) = (2/pi) asin(sqrt x). */
static void test_beta_inc(void **state)
{
	static const struct {
		int line;
		double a, b, x, want;
	} c[] = {
		{ __LINE__, 1, 1, 0.3, 0.3 },
		{ __LINE__, 3, 1, 0.5, 0.125 },
		{ __LINE__, 1, 4, 0.5, 1 - 0.0625 },
		{ __LINE__, 7.5, 7.5, 0.5, 0.5 },
		{ __LINE__, 200, 200, 0.5, 0.5 },
		{ __LINE__, 0.5, 0.5, 0.25, 1.0 / 3.0 },   /* (2/pi) asin(1/2) = 1/3 */
		{ __LINE__, 0.5, 0.5, 0.75, 2.0 / 3.0 },
		{ __LINE__, 2, 3, 0, 0 },
		{ __LINE__, 2, 3, 1, 1 },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		double got = tc_beta_inc(c[i].a, c[i].b, c[i].x);
		if (!NEAR(got, c[i].want, 1e-12))
			fail_msg("line %d: I_%g(%g, %g) = %.17g, want %.17g", c[i].line, c[i].x,
				 c[i].a, c[i].b, got, c[i].want);
	}
	assert_true(isnan(tc_beta_inc(0, 1, 0.5)));
	assert_true(isnan(tc_beta_inc(1, -1, 0.5)));
	assert_true(isnan(tc_beta_inc(1, 1, NAN)));
}

/* Quantiles as printed tables give them to 3 or 4 decimals, here to 15 digits from an
 * independent computation (mpmath 1.3: findroot on betainc at 30 digits). */
static void test_t_table(void **state)
{
	static const struct {
		int line;
		double p, df, want;
	} c[] = {
		{ __LINE__, 0.975, 1, 12.7062047361747 },
		{ __LINE__, 0.975, 2, 4.30265272974946 },
		{ __LINE__, 0.975, 4, 2.77644510519779 },
		{ __LINE__, 0.975, 5, 2.57058183563632 },
		{ __LINE__, 0.975, 9, 2.26215716279821 },
		{ __LINE__, 0.975, 10, 2.22813885198627 },
		{ __LINE__, 0.975, 18, 2.10092204024104 },
		{ __LINE__, 0.975, 30, 2.04227245630124 },
		{ __LINE__, 0.975, 120, 1.97993040508244 },
		{ __LINE__, 0.975, INFINITY, 1.95996398454 },
		{ __LINE__, 0.95, 3, 2.35336343480182 },
		{ __LINE__, 0.95, 10, 1.81246112281168 },
		{ __LINE__, 0.995, 5, 4.03214298355523 },
		{ __LINE__, 0.995, 20, 2.84533970978611 },
		{ __LINE__, 0.9995, 10, 4.58689385870264 },
		{ __LINE__, 0.9, 1, 3.07768353717525 },
		{ __LINE__, 0.025, 10, -2.22813885198627 },
		{ __LINE__, 0.5, 7, 0 },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		double got = tc_student_t_quantile(c[i].p, c[i].df);
		if (!NEAR(got, c[i].want, 1e-10))
			fail_msg("line %d: t(%g; df %g) = %.12g, want %.12g", c[i].line, c[i].p,
				 c[i].df, got, c[i].want);
	}
}

/* df 1 is Cauchy's distribution, t = tan(pi (p - 1/2)); df 2 has
 * t = (2p - 1) / sqrt(2 p (1 - p)): exact at every p, far into the tails. */
static void test_t_closed_forms(void **state)
{
	static const double ps[] = { 0.001, 0.01, 0.1, 0.3, 0.6, 0.9, 0.99, 0.999, 0.99999 };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(ps); i++) {
		double p = ps[i];
		double t1 = tan(M_PI * (p - 0.5)), t2 = (2 * p - 1) / sqrt(2 * p * (1 - p));

		if (!NEAR(tc_student_t_quantile(p, 1), t1, 1e-9))
			fail_msg("df 1, p %g: %.12g, want %.12g", p, tc_student_t_quantile(p, 1), t1);
		if (!NEAR(tc_student_t_quantile(p, 2), t2, 1e-9))
			fail_msg("df 2, p %g: %.12g, want %.12g", p, tc_student_t_quantile(p, 2), t2);
		if (!NEAR(tc_student_t_cdf(t1, 1), p, 1e-12))
			fail_msg("cdf df 1 at %g: %.15g, want %g", t1, tc_student_t_cdf(t1, 1), p);
	}
}

/* Welch's degrees of freedom are fractional: the quantile there lies between its
 * whole neighbours' and the CDF takes it back to p. */
static void test_t_fractional(void **state)
{
	static const double dfs[] = { 0.5, 1.5, 2.7, 5.8823529, 13.2, 99.9, 1e6 };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(dfs); i++) {
		double t = tc_student_t_quantile(0.975, dfs[i]);
		double lo = tc_student_t_quantile(0.975, ceil(dfs[i]));
		double hi = tc_student_t_quantile(0.975, floor(dfs[i]) > 0 ? floor(dfs[i]) : 0.25);

		if (!(t >= lo && t <= hi))
			fail_msg("df %g: %g not within [%g, %g]", dfs[i], t, lo, hi);
		if (!NEAR(tc_student_t_cdf(t, dfs[i]), 0.975, 1e-12))
			fail_msg("df %g: cdf(%g) = %.15g", dfs[i], t, tc_student_t_cdf(t, dfs[i]));
	}
	assert_true(isnan(tc_student_t_quantile(0.5, 0)));
	assert_true(isnan(tc_student_t_quantile(1.5, 3)));
	assert_true(tc_student_t_quantile(1, 3) == INFINITY);
	assert_true(tc_student_t_quantile(0, 3) == -INFINITY);
}

static void add_all(struct tc_welford *w, const double *v, size_t n)
{
	tc_welford_init(w);
	for (size_t i = 0; i < n; i++)
		tc_welford_add(w, v[i]);
}

static void test_welch(void **state)
{
	static const double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	static const double c[] = { 1, 2, 3, 4, 5 }, d[] = { 2, 4, 6, 8, 10 };
	static const double e[] = { 7, 7, 7, 7 }, f[] = { 12, 12, 12 };
	struct tc_welford wa, wb;
	struct tc_welch w;
	(void)state;

	/* equal n and variances (1): se = sqrt(2/3), df = 2 (n - 1) = 4, t 2.776445105 */
	add_all(&wa, a, 3);
	add_all(&wb, b, 3);
	assert_int_equal(tc_welch_interval(&wa, &wb, 0.95, &w), 0);
	assert_true(NEAR(w.change, 3, 1e-15));
	assert_true(NEAR(w.se, sqrt(2.0 / 3.0), 1e-15));
	assert_true(NEAR(w.df, 4, 1e-12));
	assert_true(NEAR(w.t, 2.77644510519779, 1e-10));
	assert_true(NEAR(w.lo, 3 - 2.77644510519779 * sqrt(2.0 / 3.0), 1e-10));
	assert_true(NEAR(w.hi, 3 + 2.77644510519779 * sqrt(2.0 / 3.0), 1e-10));

	/* unequal variances 2.5 and 10, n 5: se^2 = 0.5 + 2 = 2.5,
	 * df = 2.5^2 / (0.5^2/4 + 2^2/4) = 6.25 / 1.0625 = 5.882352941 */
	add_all(&wa, c, 5);
	add_all(&wb, d, 5);
	assert_int_equal(tc_welch_interval(&wa, &wb, 0.95, &w), 0);
	assert_true(NEAR(w.se, sqrt(2.5), 1e-15));
	assert_true(NEAR(w.df, 6.25 / 1.0625, 1e-12));
	assert_true(w.lo < 0 && w.hi > 0);   /* t = 1.897, not significant at 95 % */
	assert_true(NEAR(tc_student_t_cdf((w.hi - w.change) / w.se, w.df), 0.975, 1e-12));
	/* at 80 %, t(0.9; 5.88) is about 1.44: the interval leaves 0 out */
	assert_int_equal(tc_welch_interval(&wa, &wb, 0.80, &w), 0);
	assert_true(w.lo > 0);

	/* no variance on either side: the change exactly, whatever the confidence */
	add_all(&wa, e, 4);
	add_all(&wb, f, 3);
	assert_int_equal(tc_welch_interval(&wa, &wb, 0.99, &w), 0);
	assert_true(w.change == 5 && w.lo == 5 && w.hi == 5 && w.se == 0 && isinf(w.df));

	/* too few values, or a confidence outside (0, 1) */
	add_all(&wb, f, 1);
	assert_int_equal(tc_welch_interval(&wa, &wb, 0.95, &w), -EINVAL);
	add_all(&wb, f, 3);
	assert_int_equal(tc_welch_interval(&wa, &wb, 1.0, &w), -EINVAL);
	assert_int_equal(tc_welch_interval(&wa, &wb, 0, &w), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_beta_inc),
		cmocka_unit_test(test_t_table),
		cmocka_unit_test(test_t_closed_forms),
		cmocka_unit_test(test_t_fractional),
		cmocka_unit_test(test_welch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
