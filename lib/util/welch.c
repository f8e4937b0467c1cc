/* welch.c - comparing the means of two samples: Student's t distribution (its CDF
 * through the regularized incomplete beta function, its quantile by inverting that) and
 * Welch's interval for the difference of two means with unequal variances, the
 * statistics of `tacho diff`. Definitions are written at the declarations in util.h. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "util/util.h"

/* The continued fraction of I_x(a, b) (Abramowitz & Stegun 26.5.8), evaluated by the
 * modified Lentz method: terms d_{2m+1} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and
 * d_{2m} = m(b-m)x / ((a+2m-1)(a+2m)). It converges fast for x < (a+1)/(a+b+2); the
 * caller uses the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) elsewhere. */
static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300;
	double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1.0 / d;
	h = d;
	for (int m = 1; m <= 1000; m++) {
		double m2 = 2.0 * m, num, delta;

		/* the even step */
		num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
		d = 1.0 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1.0 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1.0 / d;
		h *= d * c;
		/* the odd step */
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
		d = 1.0 + num * d;
		d = fabs(d) < tiny ? tiny : d;
		c = 1.0 + num / c;
		c = fabs(c) < tiny ? tiny : c;
		d = 1.0 / d;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1.0) < 4.0 * DBL_EPSILON)
			break;
	}
	return h;
}

double tc_beta_inc(double a, double b, double x)
{
	double front;

	if (!(a > 0) || !(b > 0) || isnan(x) || isinf(a) || isinf(b))
		return NAN;
	if (x <= 0)
		return 0.0;
	if (x >= 1)
		return 1.0;
	/* x^a (1-x)^b / (a B(a,b)), in logarithms: the powers underflow for large a, b */
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1.0) / (a + b + 2.0))
		return front * beta_cf(a, b, x) / a;
	return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double tc_student_t_cdf(double t, double df)
{
	double tail;

	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1.0 : 0.0;
	if (isinf(df))
		return 0.5 * erfc(-t / sqrt(2.0));
	/* P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2) */
	tail = 0.5 * tc_beta_inc(0.5 * df, 0.5, df / (df + t * t));
	return t >= 0 ? 1.0 - tail : tail;
}

double tc_student_t_quantile(double p, double df)
{
	double lo = 0.0, hi = 1.0;

	if (isnan(p) || !(df > 0) || p < 0 || p > 1)
		return NAN;
	if (p == 0 || p == 1)
		return p == 1 ? INFINITY : -INFINITY;
	if (p < 0.5)
		return -tc_student_t_quantile(1.0 - p, df);
	if (p == 0.5)
		return 0.0;
	/* The CDF is increasing: widen [0, hi] until it holds the quantile, then halve it.
	 * Bisection is slower than Newton's steps but cannot leave the bracket, whatever
	 * the degrees of freedom (df 1 has tails like 1/t); 200 halvings take the bracket
	 * below a double's resolution of any t up to 2^1000. */
	while (tc_student_t_cdf(hi, df) < p) {
		lo = hi;
		hi *= 2.0;
		if (isinf(hi))
			return INFINITY;
	}
	for (int i = 0; i < 200 && hi - lo > 4.0 * DBL_EPSILON * hi; i++) {
		double mid = lo + 0.5 * (hi - lo);

		if (tc_student_t_cdf(mid, df) < p)
			lo = mid;
		else
			hi = mid;
	}
	return lo + 0.5 * (hi - lo);
}

int tc_welch_interval(const struct tc_welford *before, const struct tc_welford *after,
		      double confidence, struct tc_welch *out)
{
	double va, vb, qa, qb;

	memset(out, 0, sizeof(*out));
	if (!(confidence > 0 && confidence < 1) || before->n < 2 || after->n < 2)
		return -EINVAL;
	out->change = tc_welford_mean(after) - tc_welford_mean(before);
	va = tc_welford_stddev(before);
	vb = tc_welford_stddev(after);
	va *= va;
	vb *= vb;
	/* each mean's variance: s^2 / n */
	qa = va / (double)before->n;
	qb = vb / (double)after->n;
	out->se = sqrt(qa + qb);
	if (out->se == 0) {
		/* no run differed from another: the change is what it is, exactly */
		out->df = INFINITY;
		out->t = 0.0;
		out->lo = out->hi = out->change;
		return 0;
	}
	/* Welch-Satterthwaite: (qa + qb)^2 / (qa^2/(na-1) + qb^2/(nb-1)); a side without
	 * variance adds nothing to either sum */
	out->df = (qa + qb) * (qa + qb) /
		  (qa * qa / (double)(before->n - 1) + qb * qb / (double)(after->n - 1));
	out->t = tc_student_t_quantile(0.5 + 0.5 * confidence, out->df);
	out->lo = out->change - out->t * out->se;
	out->hi = out->change + out->t * out->se;
	return 0;
}

/* Wilson's score interval of x successes in n trials at quantile z. */
static void wilson(uint64_t x, uint64_t n, double z, double *lo, double *hi)
{
	double p = (double)x / (double)n, nn = (double)n, z2 = z * z;
	double d = 1.0 + z2 / nn;
	double c = (p + z2 / (2.0 * nn)) / d;
	double h = z / d * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn));

	*lo = fmax(0.0, c - h);
	*hi = fmin(1.0, c + h);
}

int tc_two_prop_interval(uint64_t x_b, uint64_t n_b, uint64_t x_a, uint64_t n_a,
			 double confidence, struct tc_two_prop *out)
{
	double pb, pa, lb, ub, la, ua;

	if (!n_b || !n_a || x_b > n_b || x_a > n_a || !(confidence > 0 && confidence < 1))
		return -EINVAL;
	out->z = tc_student_t_quantile((1.0 + confidence) / 2.0, INFINITY);
	pb = (double)x_b / (double)n_b;
	pa = (double)x_a / (double)n_a;
	wilson(x_b, n_b, out->z, &lb, &ub);
	wilson(x_a, n_a, out->z, &la, &ua);
	out->change = pa - pb;
	/* each end takes the distance to the far end of each side's own interval */
	out->lo = out->change - sqrt((pa - la) * (pa - la) + (ub - pb) * (ub - pb));
	out->hi = out->change + sqrt((ua - pa) * (ua - pa) + (pb - lb) * (pb - lb));
	return 0;
}
