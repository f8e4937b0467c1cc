/* test-cache-knee.c - the knee finder of the memory-hierarchy part, on synthetic
 * curves (sharp steps, soft steps, noise and spikes, a missing level, a sloping level,
 * a TLB step inside a level, four levels, sweeps that stop early) and on two curves
 * measured on the project's KVM guest: each row names itself and its line on failure,
 * and must give exactly its levels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "cache/cache.h"

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)
#define STEP 1.189207115002721   /* 2^(1/4): the sweep's step, four points per octave */
#define MAXPTS 128

/* --- making curves --- */

enum shape {
	SHARP,   /* LRU: the latency jumps right after a level's size */
	SOFT,    /* random replacement: a level keeps size/ws of a larger working set */
};

struct lvl {
	double bytes, ns;
};

struct row {
	const char *name;
	int line;
	enum shape shape;
	struct lvl lv[6];          /* the caches, ascending; ns 0 ends */
	double mem_ns;
	double max_bytes;
	double slope;              /* the last cache's latency grows by this factor over its
				      plateau (a cache shared with other tenants); 0: flat */
	double tlb_at, tlb_step;   /* from tlb_at bytes on, latency x tlb_step (0: none) */
	double jitter;             /* each point's median scattered by up to +-jitter */
	int spikes[4];             /* points (1-based) three times too slow; 0 ends */
	/* what the finder must give */
	struct lvl want[6];        /* the knees and latencies of the closed plateaus */
	double want_mem;           /* the open plateau's latency; 0: it has none */
	bool exact;                /* knees exactly the sizes, else within one step */
};

/* deterministic scatter in [-1, 1] */
static double scatter(unsigned i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (double)(x % 2001) / 1000.0 - 1.0;
}

static double model(const struct row *r, double ws)
{
	size_t n = 0;
	double lat;

	while (n < 6 && r->lv[n].ns > 0)
		n++;
	if (r->shape == SHARP) {
		size_t k = 0;
		while (k < n && ws > r->lv[k].bytes)
			k++;
		lat = k < n ? r->lv[k].ns : r->mem_ns;
		if (k == n - 1 && r->slope > 0) {
			/* from the level below's size to this one's, a log-linear slope */
			double lo = n > 1 ? r->lv[n - 2].bytes : 4096, hi = r->lv[n - 1].bytes;
			lat *= pow(r->slope, log(ws / lo) / log(hi / lo));
		}
	} else {
		/* nested: a fraction min(1, size/ws) of the loads hits each level */
		lat = r->mem_ns;
		for (size_t k = n; k-- > 0;) {
			double h = fmin(1, r->lv[k].bytes / ws);
			lat = h * r->lv[k].ns + (1 - h) * lat;
		}
	}
	if (r->tlb_at > 0 && ws >= r->tlb_at && ws <= r->lv[n - 1].bytes)
		lat *= r->tlb_step;
	return lat;
}

/* The sweep tacho makes: 4 KiB x 2^(k/4), whole lines. */
static size_t make_curve(const struct row *r, struct tc_curve_pt *p)
{
	size_t n = 0;

	for (unsigned k = 0; n < MAXPTS; k++) {
		double ws = (double)((uint64_t)(4096 * exp2(k / 4.0) + 0.5) & ~(uint64_t)63);
		if (ws > r->max_bytes)
			break;
		p[n].x = ws;
		p[n].y = model(r, ws) * (1 + r->jitter * scatter(k));
		for (unsigned s = 0; s < 4 && r->spikes[s]; s++)
			if ((unsigned)r->spikes[s] == n + 1)
				p[n].y *= 3;
		p[n].y_p25 = p[n].y * (1 - r->jitter / 2);
		p[n].y_p75 = p[n].y * (1 + r->jitter / 2);
		n++;
	}
	return n;
}

static const struct row rows[] = {
	{ "sharp steps, three levels", __LINE__, SHARP,
	  { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 }, { 32 * MIB, 14.0 } }, 100, 256 * MIB,
	  .want = { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 }, { 32 * MIB, 14.0 } }, .want_mem = 100,
	  .exact = true },
	{ "sharp steps, odd sizes (48 KiB, 1.25 MiB, 36 MiB)", __LINE__, SHARP,
	  { { 48 * KIB, 1.2 }, { 1.25 * MIB, 4.5 }, { 36 * MIB, 16.0 } }, 90, 256 * MIB,
	  .want = { { 48 * KIB, 1.2 }, { 1.25 * MIB, 4.5 }, { 36 * MIB, 16.0 } }, .want_mem = 90 },
	{ "soft steps (random replacement)", __LINE__, SOFT,
	  { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 }, { 32 * MIB, 14.0 } }, 100, 1024 * MIB,
	  .want = { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 }, { 32 * MIB, 14.0 } }, .want_mem = 100 },
	{ "noisy steps: +-6 % scatter and three spikes", __LINE__, SHARP,
	  { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 }, { 32 * MIB, 14.0 } }, 100, 256 * MIB,
	  .jitter = 0.06, .spikes = { 6, 20, 40 },
	  .want = { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 }, { 32 * MIB, 14.0 } }, .want_mem = 100 },
	{ "a missing level: L1 and L2, then memory", __LINE__, SHARP,
	  { { 64 * KIB, 1.3 }, { 2 * MIB, 5.0 } }, 80, 64 * MIB,
	  .want = { { 64 * KIB, 1.3 }, { 2 * MIB, 5.0 } }, .want_mem = 80, .exact = true },
	{ "VM-shaped: the last level slopes 1.8x and ends early", __LINE__, SHARP,
	  { { 32 * KIB, 1.08 }, { 1 * MIB, 3.8 }, { 8 * MIB, 11.0 } }, 130, 128 * MIB,
	  .slope = 1.8, .jitter = 0.04,
	  .want = { { 32 * KIB, 1.08 }, { 1 * MIB, 3.8 }, { 8 * MIB, 14.5 } }, .want_mem = 130 },
	{ "a TLB step of +30 % inside the last level is not a level", __LINE__, SHARP,
	  { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 }, { 32 * MIB, 14.0 } }, 100, 256 * MIB,
	  .tlb_at = 12 * MIB, .tlb_step = 1.3,
	  .want = { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 }, { 32 * MIB, 14.0 } }, .want_mem = 100 },
	{ "four levels (an eDRAM L4)", __LINE__, SHARP,
	  { { 32 * KIB, 1.1 }, { 256 * KIB, 3.5 }, { 8 * MIB, 12.0 }, { 128 * MIB, 35.0 } }, 90,
	  1024 * MIB,
	  .want = { { 32 * KIB, 1.1 }, { 256 * KIB, 3.5 }, { 8 * MIB, 12.0 }, { 128 * MIB, 35.0 } },
	  .want_mem = 90, .exact = true },
	{ "a sweep that ends inside L2: one level, and L2 open", __LINE__, SHARP,
	  { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 } }, 100, 512 * KIB,
	  .want = { { 32 * KIB, 1.0 } }, .want_mem = 4.0, .exact = true },
	{ "a sweep that stops one point past L2: memory is that lone point", __LINE__, SHARP,
	  { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 } }, 100, 1.19 * MIB,
	  .want = { { 32 * KIB, 1.0 }, { 1 * MIB, 4.0 } }, .want_mem = 100, .exact = true },
};

static size_t nwant(const struct row *r)
{
	size_t n = 0;

	while (n < 6 && r->want[n].ns > 0)
		n++;
	return n;
}

static void check(const char *name, int line, const struct tc_curve_pt *p, size_t n,
		  const struct lvl *want, size_t nw, double want_mem, bool exact)
{
	struct tc_plateau pl[16];
	size_t np = tc_cache_plateaus(p, n, pl, 16), closed = 0;
	char got[1024] = "";

	for (size_t k = 0; k < np && k < 16; k++) {
		size_t o = strlen(got);
		snprintf(got + o, sizeof(got) - o, " [%.4g KiB, %.3g ns%s]", p[pl[k].last].x / KIB,
			 pl[k].y, pl[k].open ? ", open" : "");
		closed += !pl[k].open;
	}
	if (closed != nw || np != nw + (want_mem > 0))
		fail_msg("line %d, %s: %zu levels (%zu plateaus) where %zu were due:%s", line, name,
			 closed, np, nw, got);
	for (size_t k = 0; k < nw; k++) {
		double knee = p[pl[k].last].x, r = knee / want[k].bytes;

		/* one step, with the slack of whole lines (tc_cache_agrees's) */
		if (exact ? knee != want[k].bytes : (r < pow(STEP, -1.02) || r > pow(STEP, 1.02)))
			fail_msg("line %d, %s: level %zu ends at %.4g KiB, not %s %.4g KiB:%s", line,
				 name, k + 1, knee / KIB, exact ? "exactly" : "within a step of",
				 want[k].bytes / KIB, got);
		if (fabs(pl[k].y / want[k].ns - 1) > 0.12)
			fail_msg("line %d, %s: level %zu at %.3g ns, not about %.3g:%s", line, name,
				 k + 1, pl[k].y, want[k].ns, got);
		assert_true(pl[k].y_min <= pl[k].y && pl[k].y <= pl[k].y_max);
	}
	if (want_mem > 0 && (!pl[nw].open || fabs(pl[nw].y / want_mem - 1) > 0.12))
		fail_msg("line %d, %s: memory at %.3g ns%s, not about %.3g:%s", line, name, pl[nw].y,
			 pl[nw].open ? "" : " (closed)", want_mem, got);
}

static void test_rows(void **state)
{
	struct tc_curve_pt p[MAXPTS];
	(void)state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		size_t n = make_curve(r, p);

		check(r->name, r->line, p, n, r->want, nwant(r), r->want_mem, r->exact);
	}
}

/* --- curves measured on the project's machine: an AMD EPYC (Zen 4) KVM guest whose
 * CPUID and sysfs claim L1d 32 KiB, L2 1 MiB, L3 32 MiB. x, median, quartiles. --- */

/* A default run: L2 shared with another hardware thread, so its latency rises from
 * 861 KiB; the L3 this guest gets ends near 10 MiB and slopes; memory ~133 ns. */
static const struct tc_curve_pt vm_curve[] = {
	{ 4096, 1.08, 1.08, 1.08 },	{ 4864, 1.08, 1.08, 1.08 },
	{ 5760, 1.08, 1.08, 1.08 },	{ 6848, 1.08, 1.08, 1.08 },
	{ 8192, 1.08, 1.08, 1.08 },	{ 9728, 1.08, 1.08, 1.08 },
	{ 11584, 1.08, 1.08, 1.08 },	{ 13760, 1.08, 1.08, 1.08 },
	{ 16384, 1.08, 1.08, 1.08 },	{ 19456, 1.08, 1.08, 1.08 },
	{ 23168, 1.08, 1.08, 1.08 },	{ 27520, 1.08, 1.08, 1.09 },
	{ 32768, 1.20, 1.19, 1.20 },	{ 38912, 3.78, 3.78, 3.78 },
	{ 46336, 3.78, 3.78, 3.78 },	{ 55104, 3.79, 3.79, 3.79 },
	{ 65536, 3.80, 3.80, 3.80 },	{ 77888, 3.69, 3.69, 3.69 },
	{ 92672, 3.66, 3.66, 3.66 },	{ 110208, 3.78, 3.78, 3.78 },
	{ 131072, 3.79, 3.79, 3.79 },	{ 155840, 3.71, 3.71, 3.71 },
	{ 185344, 3.79, 3.79, 3.79 },	{ 220416, 3.74, 3.74, 3.74 },
	{ 262144, 3.79, 3.79, 3.79 },	{ 311744, 3.81, 3.81, 3.81 },
	{ 370688, 3.82, 3.81, 3.82 },	{ 440832, 3.83, 3.83, 3.83 },
	{ 524288, 3.84, 3.84, 3.84 },	{ 623424, 3.85, 3.85, 3.85 },
	{ 741440, 3.85, 3.85, 3.85 },	{ 881728, 5.28, 5.25, 5.33 },
	{ 1048576, 6.83, 6.81, 7.12 },	{ 1246912, 8.98, 8.68, 9.33 },
	{ 1482880, 10.87, 10.61, 11.06 },	{ 1763456, 11.86, 11.25, 11.90 },
	{ 2097152, 13.43, 11.90, 13.80 },	{ 2493888, 14.09, 13.82, 14.68 },
	{ 2965760, 15.68, 14.29, 17.03 },	{ 3526912, 22.05, 20.99, 24.97 },
	{ 4194304, 17.41, 15.67, 18.57 },	{ 4987840, 16.25, 15.77, 17.83 },
	{ 5931584, 15.54, 15.28, 16.94 },	{ 7053888, 16.93, 16.36, 17.63 },
	{ 8388608, 17.13, 16.51, 20.14 },	{ 9975744, 16.79, 16.25, 18.94 },
	{ 11863232, 30.06, 28.10, 33.64 },	{ 14107840, 33.70, 30.11, 34.36 },
	{ 16777216, 51.40, 43.82, 56.89 },	{ 19951552, 66.80, 65.06, 70.12 },
	{ 23726528, 87.00, 78.83, 88.66 },	{ 28215744, 111.84, 98.70, 119.35 },
	{ 33554432, 122.23, 120.74, 128.11 },	{ 39903168, 129.02, 127.22, 131.69 },
	{ 47453120, 127.92, 118.31, 128.99 },	{ 56431552, 133.68, 132.79, 134.00 },
	{ 67108864, 132.90, 130.63, 135.91 },	{ 79806336, 133.06, 132.14, 133.23 },
	{ 94906240, 133.12, 132.04, 133.54 },	{ 112863168, 136.01, 133.79, 138.00 },
	{ 134217728, 136.90, 134.77, 142.62 },};

/* A sweep during which the core's other hardware thread was busy: L1 and L2 both look
 * smaller (L1 rises from 8 KiB). Still exactly three levels and memory. */
static const struct tc_curve_pt vm_contended[] = {
	{ 4096, 1.17, 1.15, 1.17 },	{ 4864, 1.18, 1.17, 1.18 },
	{ 5760, 1.18, 1.18, 1.19 },	{ 6848, 1.18, 1.18, 1.19 },
	{ 8192, 1.19, 1.18, 1.20 },	{ 9728, 1.24, 1.20, 1.25 },
	{ 11584, 1.26, 1.25, 1.28 },	{ 13760, 1.40, 1.40, 1.45 },
	{ 16384, 1.65, 1.59, 1.68 },	{ 19456, 2.18, 1.89, 2.25 },
	{ 23168, 2.89, 2.87, 2.98 },	{ 27520, 3.50, 3.36, 3.52 },
	{ 32768, 3.80, 3.71, 3.84 },	{ 38912, 3.82, 3.82, 3.85 },
	{ 46336, 3.82, 3.82, 3.82 },	{ 55104, 3.83, 3.83, 3.83 },
	{ 65536, 3.83, 3.83, 3.84 },	{ 77888, 3.73, 3.73, 3.73 },
	{ 92672, 3.80, 3.80, 3.80 },	{ 110208, 3.83, 3.83, 3.84 },
	{ 131072, 3.84, 3.84, 3.84 },	{ 155840, 3.79, 3.79, 3.79 },
	{ 185344, 3.93, 3.87, 3.99 },	{ 220416, 4.31, 4.28, 4.31 },
	{ 262144, 4.32, 4.29, 4.37 },	{ 311744, 4.35, 4.31, 4.43 },
	{ 370688, 4.35, 4.32, 4.39 },	{ 440832, 4.83, 4.66, 4.99 },
	{ 524288, 5.11, 4.89, 5.55 },	{ 623424, 7.54, 7.42, 7.72 },
	{ 741440, 11.04, 9.70, 11.53 },	{ 881728, 12.61, 12.22, 13.17 },
	{ 1048576, 14.03, 13.50, 15.44 },	{ 1246912, 14.12, 13.73, 14.69 },
	{ 1482880, 17.13, 16.62, 20.54 },	{ 1763456, 21.32, 19.06, 24.22 },
	{ 2097152, 18.51, 14.09, 19.19 },	{ 2493888, 19.15, 18.46, 19.86 },
	{ 2965760, 15.30, 14.88, 15.50 },	{ 3526912, 14.99, 14.56, 15.06 },
	{ 4194304, 15.48, 15.07, 16.27 },	{ 4987840, 15.12, 14.99, 15.92 },
	{ 5931584, 17.02, 15.90, 17.19 },	{ 7053888, 16.96, 16.17, 17.87 },
	{ 8388608, 21.48, 20.23, 22.77 },	{ 9975744, 23.81, 22.43, 26.44 },
	{ 11863232, 26.94, 24.23, 29.44 },	{ 14107840, 27.36, 26.41, 29.70 },
	{ 16777216, 46.14, 40.29, 48.84 },	{ 19951552, 71.32, 57.40, 73.63 },
	{ 23726528, 90.84, 72.64, 92.26 },	{ 28215744, 112.53, 105.21, 117.86 },
	{ 33554432, 124.65, 123.04, 126.23 },	{ 39903168, 129.13, 126.99, 129.37 },
	{ 47453120, 132.35, 130.68, 132.70 },	{ 56431552, 127.49, 127.25, 128.77 },
	{ 67108864, 130.79, 129.39, 133.16 },	{ 79806336, 132.06, 127.72, 132.95 },
	{ 94906240, 131.54, 130.27, 133.52 },	{ 112863168, 135.80, 134.17, 138.85 },
	{ 134217728, 133.70, 131.42, 134.02 },};

static void test_measured(void **state)
{
	static const struct lvl vm_want[] = { { 32 * KIB, 1.08 }, { 1 * MIB, 3.8 }, { 10 * MIB, 16.0 } };
	static const struct lvl contended_want[] = { { 16 * KIB, 1.18 }, { 512 * KIB, 3.83 },
						     { 14 * MIB, 16.0 } };
	(void)state;

	check("a default run on the KVM guest", __LINE__, vm_curve, ARRAY_SIZE(vm_curve), vm_want,
	      3, 133, false);
	check("a run with the core's other thread busy", __LINE__, vm_contended,
	      ARRAY_SIZE(vm_contended), contended_want, 3, 131, false);
}

/* --- edges --- */

static void test_edges(void **state)
{
	struct tc_curve_pt p[8] = {
		{ 4096, 1, 1, 1 }, { 8192, NAN, 0, 0 }, { 16384, 1, 1, 1 }, { 32768, 1, 1, 1 },
		{ 65536, 4, 4, 4 }, { 131072, -1, 0, 0 }, { 262144, 4, 4, 4 }, { 524288, 4, 4, 4 },
	};
	struct tc_plateau pl[4];
	(void)state;

	assert_int_equal(tc_cache_plateaus(NULL, 3, pl, 4), 0);
	assert_int_equal(tc_cache_plateaus(p, 0, pl, 4), 0);
	/* one point: one open plateau */
	assert_int_equal(tc_cache_plateaus(p, 1, pl, 4), 1);
	assert_true(pl[0].open && pl[0].first == 0 && pl[0].last == 0);
	/* NaN and negative points are not there: 32 KiB, then 4 ns open */
	assert_int_equal(tc_cache_plateaus(p, 8, pl, 4), 2);
	assert_int_equal(pl[0].last, 3);
	assert_true(!pl[0].open && pl[1].open && pl[1].first == 4 && pl[1].last == 7);
	/* room for one: the count is still two, one is written */
	memset(pl, 0, sizeof(pl));
	assert_int_equal(tc_cache_plateaus(p, 8, pl, 1), 2);
	assert_int_equal(pl[0].last, 3);
	assert_int_equal(pl[1].last, 0);
	/* agreement is one step either way, and never for an unknown size */
	assert_true(tc_cache_agrees(32768, 32768, STEP));
	assert_true(tc_cache_agrees(881728, 1048576, STEP));
	assert_true(tc_cache_agrees(1246912, 1048576, STEP));
	assert_false(tc_cache_agrees(741440, 1048576, STEP));
	assert_false(tc_cache_agrees(10 * 1048576, 32 * 1048576, STEP));
	assert_false(tc_cache_agrees(0, 32768, STEP));
	assert_false(tc_cache_agrees(32768, 0, STEP));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_measured),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
