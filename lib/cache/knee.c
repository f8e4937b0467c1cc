/* knee.c - the knee finder: cuts a latency curve into plateaus (the levels) and the
 * transitions between them. A pure function of the points; docs/cache.md states the
 * rules and tests/unit/test-cache-knee.c holds them to synthetic curves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

static bool usable(const struct tc_curve_pt *p)
{
	return isfinite(p->y) && p->y > 0 && isfinite(p->x);
}

/* The median of the medians of points [first, last] (usable ones only). */
static double median_y(const struct tc_curve_pt *p, size_t first, size_t last,
		       double *ymin, double *ymax)
{
	double buf[64], *v = buf;
	size_t n = 0, cap = last - first + 1;
	double m;

	if (cap > ARRAY_SIZE(buf)) {
		v = malloc(cap * sizeof(*v));
		if (!v)
			return NAN;
	}
	for (size_t i = first; i <= last; i++)
		if (usable(&p[i]))
			v[n++] = p[i].y;
	tc_stats_sort(v, n);
	m = n ? tc_stats_percentile_sorted(v, n, 50) : NAN;
	if (ymin)
		*ymin = n ? v[0] : NAN;
	if (ymax)
		*ymax = n ? v[n - 1] : NAN;
	if (v != buf)
		free(v);
	return m;
}

/* Half the quartile range of a point relative to its median: how much its samples
 * scatter. 0 when its quartiles are unknown. */
static double half_iqr(const struct tc_curve_pt *p)
{
	double h = (p->y_p75 - p->y_p25) / (2 * p->y);

	return isfinite(h) && h > 0 ? h : 0;
}

/* The typical scatter of points [first, last]: the median of their half quartile
 * ranges. */
static double median_noise(const struct tc_curve_pt *p, size_t first, size_t last)
{
	double v[64];
	size_t n = 0;

	/* the last 64 points are plenty to say how a plateau scatters */
	if (last - first + 1 > ARRAY_SIZE(v))
		first = last + 1 - ARRAY_SIZE(v);
	for (size_t i = first; i <= last; i++)
		if (usable(&p[i]))
			v[n++] = half_iqr(&p[i]);
	tc_stats_sort(v, n);
	return n ? tc_stats_percentile_sorted(v, n, 50) : 0;
}

/* Does point b stay on a plateau whose median is ref and whose points scatter by
 * noise? Its median may be anything lower, and higher by the larger of TC_KNEE_RISE
 * and TC_KNEE_NOISE times the scatter. */
static bool on_plateau(const struct tc_curve_pt *b, double ref, double noise)
{
	double tol = fmax(TC_KNEE_RISE, TC_KNEE_NOISE * noise);

	return b->y <= ref * (1 + tol);
}

/* Can a plateau start at a: is the next usable point on a plateau of a's height?
 * (and not far below it, which would make a the top of a dip) */
static bool starts_plateau(const struct tc_curve_pt *a, const struct tc_curve_pt *b)
{
	return on_plateau(b, a->y, half_iqr(a)) && b->y * (1 + TC_KNEE_RISE) >= a->y;
}

static size_t next_usable(const struct tc_curve_pt *p, size_t n, size_t i)
{
	while (i < n && !usable(&p[i]))
		i++;
	return i;
}

/* The first pass: plateaus as they come, before neighbours are merged. */
static size_t raw_plateaus(const struct tc_curve_pt *p, size_t n, struct tc_plateau *out,
			   size_t max)
{
	size_t i = next_usable(p, n, 0), count = 0;

	while (i < n) {
		size_t s = i, j, last, nxt;
		double ref, noise;

		/* skip the transition: the first point from which the curve is flat */
		for (;;) {
			nxt = next_usable(p, n, s + 1);
			if (nxt >= n || starts_plateau(&p[s], &p[nxt]))
				break;
			s = nxt;
		}
		if (nxt >= n) {
			/* the curve ends on a lone point: an open plateau of one */
			if (count < max)
				out[count] = (struct tc_plateau){ s, s, p[s].y, p[s].y, p[s].y, true };
			return count + 1;
		}
		last = s;
		ref = p[s].y;
		noise = half_iqr(&p[s]);
		for (j = nxt; j < n; j = next_usable(p, n, j + 1)) {
			size_t after;

			if (on_plateau(&p[j], ref, noise)) {
				last = j;
				ref = median_y(p, s, last, NULL, NULL);
				noise = median_noise(p, s, last);
				continue;
			}
			/* a lone point above, with the next one back on the plateau: a spike
			 * (a sample run disturbed throughout), not the end of the level */
			after = next_usable(p, n, j + 1);
			if (after < n && on_plateau(&p[after], ref, noise))
				continue;
			break;
		}
		if (count < max) {
			struct tc_plateau *pl = &out[count];

			pl->first = s;
			pl->last = last;
			pl->y = median_y(p, s, last, &pl->y_min, &pl->y_max);
			pl->open = next_usable(p, n, last + 1) >= n;
		}
		count++;
		i = next_usable(p, n, last + 1);
		/* the points after a plateau's last member up to j were spikes or the start
		 * of the transition: the next search starts right after the plateau */
	}
	return count;
}

/* A closed plateau must span three quarters of an octave (four points at four per octave): fewer
 * points that happen to lie close together on a rise are part of the rise. */
static bool wide_enough(const struct tc_curve_pt *p, const struct tc_plateau *pl)
{
	return pl->open || (pl->last > pl->first &&
			    log2(p[pl->last].x / p[pl->first].x) >= TC_MIN_OCTAVES - 1e-9);
}

/* Where plateau k really ends: the last point before the curve has climbed a third of
 * the way (on a log scale) to the next plateau, but at least to 1.6 times the
 * plateau's latency and at most to twice it (and never past halfway). A cache that
 * loses lines gradually (random replacement, a set-indexed cache over scattered
 * physical pages, another hardware thread sharing it) starts to rise before its size;
 * an LRU-like one jumps right after it; a third of the step finds both within a step
 * of the sweep. The bounds keep a small step (a level the finder split) from ending
 * a level too early, and a huge one (a level it missed, so that the next plateau is
 * memory) from carrying it far into the level it missed. */
static size_t knee_of(const struct tc_curve_pt *p, size_t n, const struct tc_plateau *pl,
		      const struct tc_plateau *next)
{
	double ratio = next->y / pl->y;
	double noise = median_noise(p, pl->first, pl->last);
	double t = fmin(fmax(cbrt(ratio), TC_KNEE_END_MIN), TC_KNEE_END_MAX);
	size_t last = pl->first;

	t = pl->y * fmin(fmax(t, 1 + TC_KNEE_NOISE * noise), sqrt(ratio));
	for (size_t j = next_usable(p, n, pl->first + 1); j < next->first && j < n;
	     j = next_usable(p, n, j + 1)) {
		size_t after;

		if (p[j].y <= t) {
			last = j;
			continue;
		}
		after = next_usable(p, n, j + 1);
		if (after < next->first && p[after].y <= t)
			continue;   /* a spike */
		break;
	}
	return last;
}

/* Merges neighbours whose heights are closer than TC_LEVEL_RATIO, the closest pair
 * first: a sloping plateau (a cache shared with other tenants), a TLB step inside a
 * level or a noisy stretch cut a level in pieces; real levels differ by 2x or more
 * (L1 ~4-5 cycles, L2 ~12-16, L3 ~40-70, memory hundreds). Returns the new count. */
static size_t merge_close(const struct tc_curve_pt *pts, struct tc_plateau *pl, size_t count)
{
	while (count > 1) {
		size_t best = 0;
		double best_r = INFINITY;

		for (size_t k = 0; k + 1 < count; k++) {
			double r = pl[k + 1].y / pl[k].y;
			if (r < 1)
				r = 1 / r;
			if (r < best_r) {
				best_r = r;
				best = k;
			}
		}
		if (best_r >= TC_LEVEL_RATIO)
			break;
		pl[best].last = pl[best + 1].last;
		pl[best].open = pl[best + 1].open;
		pl[best].y = median_y(pts, pl[best].first, pl[best].last, &pl[best].y_min,
				      &pl[best].y_max);
		memmove(&pl[best + 1], &pl[best + 2], (count - best - 2) * sizeof(*pl));
		count--;
	}
	return count;
}

size_t tc_cache_plateaus(const struct tc_curve_pt *pts, size_t n, struct tc_plateau *out,
			 size_t max)
{
	struct tc_plateau buf[64], *pl = buf;
	size_t count, cap = ARRAY_SIZE(buf), kept = 0;

	if (!pts || !n)
		return 0;
	count = raw_plateaus(pts, n, pl, cap);
	if (count > cap) {
		pl = malloc(count * sizeof(*pl));
		if (!pl)
			return 0;
		cap = count;
		count = raw_plateaus(pts, n, pl, cap);
	}
	/* Merge close neighbours, then drop what is still too narrow to be a level (a
	 * shoulder of a transition), then merge again what the dropping made
	 * neighbours. */
	count = merge_close(pts, pl, count);
	for (size_t k = 0; k < count; k++)
		if (wide_enough(pts, &pl[k]))
			pl[kept++] = pl[k];
	count = merge_close(pts, pl, kept);
	/* each level's end, by the third of the step to the next */
	for (size_t k = 0; k + 1 < count; k++) {
		pl[k].last = knee_of(pts, n, &pl[k], &pl[k + 1]);
		pl[k].y = median_y(pts, pl[k].first, pl[k].last, &pl[k].y_min, &pl[k].y_max);
	}
	memcpy(out, pl, (count < max ? count : max) * sizeof(*pl));
	if (pl != buf)
		free(pl);
	return count;
}
