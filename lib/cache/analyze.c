/* analyze.c - from curves to levels: the knee finder on the latency curve, each
 * measured level matched to the level CPUID and sysfs claim and held against it, main
 * memory, and the TLB levels from the page chase with the caches' share taken out.
 * Pure apart from the result it fills, so that tests can feed it any curve. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

#define MAX_PLATEAUS 24
/* Matching measured levels to claimed ones: a match costs the distance in octaves, a
 * level left alone on either side costs SKIP; farther than FAR octaves never match. */
#define MATCH_SKIP 2.5
#define MATCH_FAR 4.0

bool tc_cache_agrees(uint64_t m, uint64_t c, double step)
{
	if (!m || !c || !(step > 1))
		return false;
	/* a hair of slack: the sweep's sizes are rounded to whole lines */
	return fabs(log2((double)c / (double)m)) <= log2(step) * 1.02;
}

static double to_ticks(double ns, double hz)
{
	return hz > 0 && isfinite(ns) ? ns * hz / 1e9 : NAN;
}

static void bw_unknown(struct tacho_cache_bandwidth *bw)
{
	memset(bw, 0, sizeof(*bw));
	bw->read = bw->write = bw->copy = NAN;
	bw->read_all = bw->write_all = bw->copy_all = NAN;
}

static size_t curve_pts(const struct tacho_cache_result *r, enum tacho_cache_curve c,
			struct tc_curve_pt **out)
{
	size_t n = r->ncurve[c];
	struct tc_curve_pt *p;

	*out = NULL;
	if (!n)
		return 0;
	p = malloc(n * sizeof(*p));
	if (!p)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct tacho_cache_point *q = &r->curve[c][i];
		p[i] = (struct tc_curve_pt){ q->pages ? (double)q->pages : (double)q->bytes, q->ns,
					     q->ns_p25, q->ns_p75 };
	}
	*out = p;
	return n;
}

static uint64_t claim_size(const struct tc_cache_claim *c)
{
	return c->sysfs_bytes ? c->sysfs_bytes : c->cpuid_bytes;
}

/* --- matching: an order-keeping alignment of measured and claimed sizes (as an edit
 * distance): the cheapest way to pair them, leaving some alone --- */

enum { STEP_MATCH = 1, STEP_MEASURED, STEP_CLAIM };

static double match_cost(uint64_t m, uint64_t c)
{
	double d;

	if (!m || !c)
		return INFINITY;
	d = fabs(log2((double)m / (double)c));
	return d <= MATCH_FAR ? d : INFINITY;
}

/* Fills steps[] (the alignment, in order) and returns its length. */
static size_t align(const uint64_t *m, size_t nm, const uint64_t *c, size_t nc, int *steps)
{
	double cost[TC_CACHE_MAX_LEVELS + 1][TC_CACHE_MAX_CLAIMS + 1];
	int how[TC_CACHE_MAX_LEVELS + 1][TC_CACHE_MAX_CLAIMS + 1];
	size_t i = nm, k = nc, n = 0;
	int rev[TC_CACHE_MAX_LEVELS + TC_CACHE_MAX_CLAIMS];

	for (size_t a = 0; a <= nm; a++) {
		for (size_t b = 0; b <= nc; b++) {
			double best = a == 0 && b == 0 ? 0 : INFINITY;
			int h = 0;

			if (a && b && cost[a - 1][b - 1] + match_cost(m[a - 1], c[b - 1]) < best) {
				best = cost[a - 1][b - 1] + match_cost(m[a - 1], c[b - 1]);
				h = STEP_MATCH;
			}
			if (a && cost[a - 1][b] + MATCH_SKIP < best) {
				best = cost[a - 1][b] + MATCH_SKIP;
				h = STEP_MEASURED;
			}
			if (b && cost[a][b - 1] + MATCH_SKIP < best) {
				best = cost[a][b - 1] + MATCH_SKIP;
				h = STEP_CLAIM;
			}
			cost[a][b] = best;
			how[a][b] = h;
		}
	}
	while (i || k) {
		int h = how[i][k];

		rev[n++] = h;
		if (h == STEP_MATCH) {
			i--;
			k--;
		} else if (h == STEP_MEASURED) {
			i--;
		} else {
			k--;
		}
	}
	for (size_t s = 0; s < n; s++)
		steps[s] = rev[n - 1 - s];
	return n;
}

static void fmt_size(uint64_t b, char *buf, size_t size)
{
	tc_cache_fmt_bytes(b, buf, size);
}

/* The note of a level that has both a measurement and a claim. */
static void hold_against(struct tacho_cache_level *lv, double step)
{
	char m[32], c1[32], c2[32];
	bool ok_cpuid = !lv->cpuid_bytes || tc_cache_agrees(lv->bytes, lv->cpuid_bytes, step);
	bool ok_sysfs = !lv->sysfs_bytes || tc_cache_agrees(lv->bytes, lv->sysfs_bytes, step);
	uint64_t claim = lv->sysfs_bytes ? lv->sysfs_bytes : lv->cpuid_bytes;
	double ratio;

	lv->agrees = ok_cpuid && ok_sysfs;
	if (lv->agrees)
		return;
	fmt_size(lv->bytes, m, sizeof(m));
	fmt_size(lv->cpuid_bytes, c1, sizeof(c1));
	fmt_size(lv->sysfs_bytes, c2, sizeof(c2));
	ratio = (double)claim / (double)lv->bytes;
	if (lv->cpuid_bytes && lv->sysfs_bytes && lv->cpuid_bytes != lv->sysfs_bytes)
		snprintf(lv->note, sizeof(lv->note), "CPUID claims %s, sysfs %s; the latency leaves "
			 "this level's plateau past %s", c1, c2, m);
	else
		snprintf(lv->note, sizeof(lv->note), "%s %s; the latency leaves this level's "
			 "plateau past %s (%.2gx %s)",
			 lv->cpuid_bytes && lv->sysfs_bytes ? "CPUID and sysfs claim" :
			 lv->cpuid_bytes ? "CPUID claims" : "sysfs claims", lv->cpuid_bytes ? c1 : c2, m,
			 ratio >= 1 ? ratio : 1 / ratio, ratio >= 1 ? "less than claimed" :
			 "more than claimed");
}

static int cache_levels(struct tacho_cache_result *r)
{
	struct tc_curve_pt *p;
	struct tc_plateau pl[MAX_PLATEAUS];
	uint64_t meas[TC_CACHE_MAX_LEVELS], claimed[TC_CACHE_MAX_CLAIMS];
	size_t n = curve_pts(r, TACHO_CACHE_CURVE_LATENCY, &p), np, nm = 0, nsteps, im = 0, ic = 0;
	int steps[TC_CACHE_MAX_LEVELS + TC_CACHE_MAX_CLAIMS];
	const struct tc_plateau *memp = NULL;
	double step = r->about.step;
	uint64_t biggest = 0;

	if (r->ncurve[TACHO_CACHE_CURVE_LATENCY] && !p)
		return -ENOMEM;
	np = tc_cache_plateaus(p, n, pl, MAX_PLATEAUS);
	if (np > MAX_PLATEAUS) {
		tc_cache_warn(r, "the latency curve has %zu plateaus; only the first %d are read",
			      np, MAX_PLATEAUS);
		np = MAX_PLATEAUS;
	}
	for (size_t k = 0; k < np; k++) {
		if (pl[k].open) {
			memp = &pl[k];
			break;
		}
		if (nm < TC_CACHE_MAX_LEVELS)
			meas[nm++] = (uint64_t)p[pl[k].last].x;
	}
	for (size_t k = 0; k < r->nclaims; k++) {
		claimed[k] = claim_size(&r->claims[k]);
		if (claimed[k] > biggest)
			biggest = claimed[k];
	}
	nsteps = align(meas, nm, claimed, r->nclaims, steps);

	r->nlevels = 0;
	for (size_t s = 0; s < nsteps && r->nlevels < TC_CACHE_MAX_LEVELS; s++) {
		struct tacho_cache_level *lv = &r->levels[r->nlevels++];
		const struct tc_cache_claim *c = steps[s] != STEP_MEASURED ? &r->claims[ic] : NULL;

		memset(lv, 0, sizeof(*lv));
		lv->ns = lv->ns_min = lv->ns_max = lv->ticks = lv->cycles = NAN;
		lv->agrees = -1;
		lv->type = TACHO_CACHE_DATA;
		bw_unknown(&lv->bw);
		if (steps[s] != STEP_CLAIM) {
			const struct tc_plateau *q = &pl[im];

			/* a level nobody claims: its place on the curve; a load curve cannot
			 * tell data from unified beyond the first level */
			lv->level = (unsigned)im + 1;
			lv->type = im ? TACHO_CACHE_UNIFIED : TACHO_CACHE_DATA;
			lv->bytes = (uint64_t)p[q->last].x;
			lv->first_bytes = (uint64_t)p[q->first].x;
			lv->ns = q->y;
			lv->ns_min = q->y_min;
			lv->ns_max = q->y_max;
			lv->ticks = to_ticks(q->y, r->about.tsc_hz);
			lv->cycles = to_ticks(q->y, r->about.core_hz);
			im++;
		}
		if (c) {
			lv->level = c->level;
			lv->type = c->type;
			lv->cpuid_bytes = c->cpuid_bytes;
			lv->sysfs_bytes = c->sysfs_bytes;
			lv->sysfs_shared = c->sysfs_shared;
			ic++;
		}
		if (steps[s] == STEP_MATCH) {
			hold_against(lv, step);
		} else if (steps[s] == STEP_CLAIM) {
			char b[32];

			lv->agrees = 0;
			fmt_size(claim_size(c), b, sizeof(b));
			snprintf(lv->note, sizeof(lv->note), "not seen: the curve shows no plateau "
				 "ending near the claimed %s", b);
		} else {
			snprintf(lv->note, sizeof(lv->note), "neither CPUID nor sysfs claims a "
				 "cache of this size");
		}
	}

	/* the alignment leaves a level nobody claims and a claim nobody saw in either
	 * order: rows go by size (measured, else claimed); insertion keeps the others */
	for (size_t a = 1; a < r->nlevels; a++) {
		struct tacho_cache_level t = r->levels[a];
		uint64_t key = t.bytes ? t.bytes : (t.sysfs_bytes ? t.sysfs_bytes : t.cpuid_bytes);
		size_t b = a;

		for (; b > 0; b--) {
			const struct tacho_cache_level *q = &r->levels[b - 1];
			uint64_t kq = q->bytes ? q->bytes : (q->sysfs_bytes ? q->sysfs_bytes : q->cpuid_bytes);

			if (kq <= key)
				break;
			r->levels[b] = *q;
		}
		r->levels[b] = t;
	}

	/* main memory: the open plateau at the end, or what follows the last level */
	if (memp && memp->last > memp->first) {
		r->mem.seen = r->mem.flat = true;
		r->mem.first_bytes = (uint64_t)p[memp->first].x;
		r->mem.ns = memp->y;
		r->mem.ns_min = memp->y_min;
		r->mem.ns_max = memp->y_max;
	} else if (n && (nm == 0 || (uint64_t)p[n - 1].x > meas[nm - 1])) {
		size_t first = memp ? memp->first : n - 1;

		r->mem.seen = true;
		r->mem.flat = false;
		r->mem.first_bytes = (uint64_t)p[first].x;
		r->mem.ns = r->mem.ns_min = r->mem.ns_max = p[n - 1].y;
		tc_cache_warn(r, "the latency was still rising at the largest working set: main "
			      "memory's latency is at least the figure given (a larger --max "
			      "shows more)");
	}
	r->mem.ticks = to_ticks(r->mem.ns, r->about.tsc_hz);
	r->mem.cycles = to_ticks(r->mem.ns, r->about.core_hz);
	if (n && biggest && (uint64_t)p[n - 1].x < 2 * biggest) {
		char a[32], b[32];

		fmt_size((uint64_t)p[n - 1].x, a, sizeof(a));
		fmt_size(biggest, b, sizeof(b));
		tc_cache_warn(r, "the sweep stopped at %s, less than twice the largest cache "
			      "claimed (%s): its last plateau may be a cache rather than memory",
			      a, b);
	}
	free(p);
	return 0;
}

/* The latency curve at footprint `bytes`, interpolated in log size. */
static double latency_at(const struct tacho_cache_result *r, double bytes)
{
	const struct tacho_cache_point *c = r->curve[TACHO_CACHE_CURVE_LATENCY];
	size_t n = r->ncurve[TACHO_CACHE_CURVE_LATENCY];

	if (!n)
		return NAN;
	if (bytes <= (double)c[0].bytes)
		return c[0].ns;
	for (size_t i = 0; i + 1 < n; i++) {
		double a = (double)c[i].bytes, b = (double)c[i + 1].bytes;

		if (bytes <= b) {
			double t = log2(bytes / a) / log2(b / a);
			return c[i].ns + t * (c[i + 1].ns - c[i].ns);
		}
	}
	return c[n - 1].ns;
}

/* The TLB levels: the page chase visits one line per page, so its n lines also live
 * in some cache level; the latency curve at a footprint of n lines says what the
 * caches alone cost, and what is left above the first level is the TLBs'. */
static int tlb_levels(struct tacho_cache_result *r)
{
	struct tc_curve_pt *p;
	struct tc_plateau pl[MAX_PLATEAUS];
	size_t n = curve_pts(r, TACHO_CACHE_CURVE_PAGES, &p), np;
	double base;

	r->ntlbs = 0;
	if (!n)
		return r->ncurve[TACHO_CACHE_CURVE_PAGES] ? -ENOMEM : 0;
	base = latency_at(r, 0);
	if (isfinite(base)) {
		for (size_t i = 0; i < n; i++) {
			double share = latency_at(r, p[i].x * TC_CACHE_LINE) - base;
			double floor = base * 0.5;

			if (!(share > 0))
				continue;
			p[i].y = fmax(p[i].y - share, floor);
			p[i].y_p25 = fmax(p[i].y_p25 - share, floor);
			p[i].y_p75 = fmax(p[i].y_p75 - share, floor);
		}
	}
	np = tc_cache_plateaus(p, n, pl, MAX_PLATEAUS);
	if (np > MAX_PLATEAUS)
		np = MAX_PLATEAUS;
	for (size_t k = 0; k < np && r->ntlbs < TC_CACHE_MAX_TLBS; k++) {
		struct tacho_cache_tlb *t;

		if (pl[k].open)
			break;
		t = &r->tlbs[r->ntlbs++];
		memset(t, 0, sizeof(*t));
		t->level = (unsigned)r->ntlbs;
		t->entries = (unsigned)p[pl[k].last].x;
		t->reach_bytes = (uint64_t)t->entries * TC_CACHE_PAGE;
		t->ns = pl[k].y;
		t->miss_ns = k + 1 < np ? pl[k + 1].y - pl[k].y : NAN;
		t->cpuid_entries = t->level < ARRAY_SIZE(r->cpuid_tlb) ? r->cpuid_tlb[t->level] : 0;
		t->agrees = t->cpuid_entries ?
			tc_cache_agrees(t->entries, t->cpuid_entries, r->about.step) : -1;
	}
	if (!r->ntlbs)
		tc_cache_note(r, "the page chase shows no TLB step up to %.0f pages (%.0f MiB)",
			      p[n - 1].x, p[n - 1].x * TC_CACHE_PAGE / 1048576.0);
	/* Did huge pages take the TLB out of it? At the largest count, compare what each
	 * adds to the caches' share. */
	if (r->ntlbs && r->ncurve[TACHO_CACHE_CURVE_PAGES_HUGE]) {
		const struct tacho_cache_point *s = &r->curve[TACHO_CACHE_CURVE_PAGES][n - 1];
		const struct tacho_cache_point *h = NULL;
		double cache = latency_at(r, (double)s->pages * TC_CACHE_LINE);

		for (size_t i = 0; i < r->ncurve[TACHO_CACHE_CURVE_PAGES_HUGE]; i++)
			if (r->curve[TACHO_CACHE_CURVE_PAGES_HUGE][i].pages == s->pages)
				h = &r->curve[TACHO_CACHE_CURVE_PAGES_HUGE][i];
		if (h && isfinite(cache) && s->ns > cache) {
			double small = s->ns - cache, huge = fmax(0, h->ns - cache);
			const char *verdict = huge < 0.25 * small ? "remove" :
					      huge < 0.75 * small ? "only reduce" : "do not remove";

			tc_cache_note(r, "huge pages %s the TLB's cost: a load over %" PRIu64 " pages "
				      "takes %.3g ns in small pages and %.3g ns in huge ones, where the "
				      "caches alone take %.3g ns%s", verdict, s->pages, s->ns, h->ns, cache,
				      huge >= 0.25 * small && r->about.hypervisor ?
				      " (a hypervisor that backs this guest's memory with small pages "
				      "keeps the misses of its own translation)" : "");
		}
	}
	free(p);
	return 0;
}

int tc_cache_analyze(struct tacho_cache_result *r)
{
	int err;

	if (!(r->about.step > 1) && r->about.points_per_octave)
		r->about.step = exp2(1.0 / r->about.points_per_octave);
	err = cache_levels(r);
	if (!err)
		err = tlb_levels(r);
	return err;
}
