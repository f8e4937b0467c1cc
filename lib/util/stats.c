/* stats.c - descriptive statistics over arrays of doubles: the numbers `tacho stat -r`,
 * regions and the benchmark harness print (P5Stat's repeated runs, PmonStat's
 * "most common" count and its culling of outliers).
 *
 * Every function is defined for every n: nothing divides by zero, nothing overflows
 * (counts arrive as u64 and are converted to double once; sums are never formed in
 * integers). Definitions are written at the declarations in util.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

void tc_welford_init(struct tc_welford *w)
{
	memset(w, 0, sizeof(*w));
	w->min = INFINITY;
	w->max = -INFINITY;
}

void tc_welford_add(struct tc_welford *w, double x)
{
	/* Welford's update (Knuth TAOCP vol. 2, 4.2.2): no catastrophic cancellation when
	 * the values are large and close together, as counter values are. */
	double d = x - w->mean;

	w->n++;
	w->mean += d / (double)w->n;
	w->m2 += d * (x - w->mean);
	if (x < w->min)
		w->min = x;
	if (x > w->max)
		w->max = x;
}

double tc_welford_mean(const struct tc_welford *w)
{
	return w->n ? w->mean : NAN;
}

double tc_welford_stddev(const struct tc_welford *w)
{
	if (w->n == 0)
		return NAN;
	if (w->n == 1)
		return 0.0;
	return sqrt(w->m2 > 0 ? w->m2 / (double)(w->n - 1) : 0.0);
}

/* A total order: NaN after every number (and equal to NaN), so that qsort gets a
 * consistent comparison and a NaN anywhere in the data ends up last, where the
 * percentile functions look for it. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	return (x > y) - (x < y);
}

void tc_stats_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_double);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

void tc_stats_sort_u64(uint64_t *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_u64);
}

uint64_t tc_stats_select_u64(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	if (!n || k >= n)
		return 0;   /* no such rank (the contract asks k < n) */

	/* Hoare's selection: partition around the middle value, keep the side holding
	 * rank k, until it is the only one left */
	while (lo < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2], t;
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;   /* between j and i: all equal to the pivot */
	}
	return v[k];
}

/* Hyndman & Fan type 7: h = (n-1)p/100, interpolate between the ranks around it. The
 * rank below h and the fraction, or false when p clamps to an end (*lo is that end). */
static bool type7_rank(size_t n, double p, size_t *lo, double *frac)
{
	double h;

	*frac = 0;
	if (p <= 0) {
		*lo = 0;
		return false;
	}
	*lo = n - 1;
	if (p >= 100)
		return false;
	h = (double)(n - 1) * p / 100.0;
	if ((size_t)h >= n - 1)
		return false;
	*lo = (size_t)h;
	*frac = h - (double)*lo;
	return true;
}

double tc_stats_percentile_sorted(const double *sorted, size_t n, double p)
{
	double frac;
	size_t lo;

	if (n == 0 || isnan(p) || isnan(sorted[n - 1]))
		return NAN;
	if (!type7_rank(n, p, &lo, &frac))
		return sorted[lo];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double tc_stats_percentile_sorted_u64(const uint64_t *sorted, size_t n, double p)
{
	double frac;
	size_t lo;

	if (n == 0 || isnan(p))
		return NAN;
	if (!type7_rank(n, p, &lo, &frac))
		return (double)sorted[lo];
	/* the difference in integers (sorted: never negative), so that two large close
	 * values keep their distance */
	return (double)sorted[lo] + frac * (double)(sorted[lo + 1] - sorted[lo]);
}

static double *sorted_copy(const double *v, size_t n)
{
	double *c = malloc((n ? n : 1) * sizeof(*c));

	if (!c)
		return NULL;
	if (n)
		memcpy(c, v, n * sizeof(*c));
	tc_stats_sort(c, n);
	return c;
}

double tc_stats_percentile(const double *v, size_t n, double p)
{
	double *c, r;

	if (n == 0)
		return NAN;
	c = sorted_copy(v, n);
	if (!c)
		return NAN;
	r = tc_stats_percentile_sorted(c, n, p);
	free(c);
	return r;
}

double tc_stats_mode_sorted(const double *sorted, size_t n, double width)
{
	size_t i = 0, best_start = 0, best_len = 0;

	if (n == 0 || isnan(sorted[n - 1]))
		return NAN;
	while (i < n) {
		size_t j = i + 1;
		if (width > 0) {
			double bin = floor(sorted[i] / width);
			while (j < n && floor(sorted[j] / width) == bin)
				j++;
		} else {
			while (j < n && sorted[j] == sorted[i])
				j++;
		}
		/* strictly greater: on a tie the lower bin wins (the undisturbed value,
		 * when the data are timings) */
		if (j - i > best_len) {
			best_len = j - i;
			best_start = i;
		}
		i = j;
	}
	if (width <= 0)
		return sorted[best_start];
	/* the mean of the values in the winning bin, not its centre: with integer data
	 * and width 1 the mode is then the integer itself */
	{
		struct tc_welford w;
		tc_welford_init(&w);
		for (size_t k = best_start; k < best_start + best_len; k++)
			tc_welford_add(&w, sorted[k]);
		return tc_welford_mean(&w);
	}
}

double tc_stats_percentile_u64(const uint64_t *v, size_t n, double p)
{
	uint64_t *c;
	double r;

	if (n == 0)
		return NAN;
	c = malloc(n * sizeof(*c));
	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof(*c));
	tc_stats_sort_u64(c, n);
	r = tc_stats_percentile_sorted_u64(c, n, p);
	free(c);
	return r;
}

double tc_stats_mode(const double *v, size_t n, double width)
{
	double *c, r;

	if (n == 0)
		return NAN;
	c = sorted_copy(v, n);
	if (!c)
		return NAN;
	r = tc_stats_mode_sorted(c, n, width);
	free(c);
	return r;
}

static double spread_of(double min, double max, double mean)
{
	if (max == min)
		return 0.0;
	if (mean == 0 || !isfinite(mean))
		return NAN;
	return 100.0 * (max - min) / fabs(mean);
}

static double rsd_of(double stddev, double mean)
{
	if (stddev == 0)
		return 0.0;
	if (mean == 0 || !isfinite(mean) || isnan(stddev))
		return NAN;
	return 100.0 * stddev / fabs(mean);
}

/* With the whole array at hand: the corrected two-pass algorithm (Chan, Golub & LeVeque
 * 1983) over values shifted by the median, so that 1e12 + small differences keep their
 * small differences (a Welford mean drifts by an ulp of 1e12 per step). */
static void mean_stddev(const double *sorted, size_t n, double *mean, double *stddev)
{
	double k = sorted[n / 2], s1 = 0, s2 = 0, sd = 0;

	for (size_t i = 0; i < n; i++)
		s1 += sorted[i] - k;
	*mean = k + s1 / (double)n;
	if (n == 1) {
		*stddev = 0.0;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		double d = sorted[i] - *mean;
		s2 += d * d;
		sd += d;
	}
	s2 -= sd * sd / (double)n;
	*stddev = sqrt(s2 > 0 ? s2 / (double)(n - 1) : 0.0);
	/* the mean of equal values is that value, whatever rounding did */
	if (sorted[0] == sorted[n - 1]) {
		*mean = sorted[0];
		*stddev = 0.0;
	}
}

int tc_stats_compute(const double *v, size_t n, struct tc_stats *out)
{
	double *c, *dev;

	memset(out, 0, sizeof(*out));
	out->min = out->max = out->mean = out->stddev = out->median = out->mad = NAN;
	out->spread_pct = out->rsd_pct = NAN;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return -EINVAL;
	c = sorted_copy(v, n);
	dev = malloc(n * sizeof(*dev));
	if (!c || !dev) {
		free(c);
		free(dev);
		return -ENOMEM;
	}
	out->n = n;
	out->min = c[0];
	out->max = c[n - 1];
	mean_stddev(c, n, &out->mean, &out->stddev);
	out->median = tc_stats_percentile_sorted(c, n, 50);
	for (size_t i = 0; i < n; i++)
		dev[i] = fabs(c[i] - out->median);
	tc_stats_sort(dev, n);
	out->mad = tc_stats_percentile_sorted(dev, n, 50);
	out->spread_pct = spread_of(out->min, out->max, out->mean);
	out->rsd_pct = rsd_of(out->stddev, out->mean);
	free(c);
	free(dev);
	return 0;
}

int tc_stats_compute_u64(const uint64_t *v, size_t n, struct tc_stats *out)
{
	double *d;
	int err;

	if (n == 0)
		return tc_stats_compute(NULL, 0, out);
	d = malloc(n * sizeof(*d));
	if (!d) {
		memset(out, 0, sizeof(*out));
		return -ENOMEM;
	}
	/* exact up to 2^53; beyond, the nearest double: never a wrapped sum */
	for (size_t i = 0; i < n; i++)
		d[i] = (double)v[i];
	err = tc_stats_compute(d, n, out);
	free(d);
	return err;
}

double tc_apply_scale(double v, double scale)
{
	if (scale > 0 && scale < 1) {
		double inv = nearbyint(1 / scale), p = 10;

		while (p < inv && p < 1e18)
			p *= 10;
		if (p == inv && fabs(inv * scale - 1) < 1e-12)
			return v / inv;
	}
	return v * scale;
}
