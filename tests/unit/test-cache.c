/* test-cache.c - the memory-hierarchy part apart from its knee finder: matching the
 * measured levels to the claimed ones (in order, a missing one, an invented one, a
 * 480 MB claim against 8 MiB seen), the TLB levels with the caches' share removed,
 * the options tacho_cache_measure refuses, a small live measurement through the
 * accessors, the caches CPUID gives each CPU of an asymmetric part, and the size parser
 * behind --min and --max. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "cache/cache.h"
#include "util/util.h"

#define KIB 1024ull
#define MIB (1024ull * 1024)

/* A sharp curve with the given level sizes and latencies, then memory at 100 ns. */
static struct tacho_cache_result *curve_of(const uint64_t *size, const double *ns, size_t n,
					   uint64_t max)
{
	struct tacho_cache_result *r = tc_cache_result_new();
	struct tacho_cache_point pts[128];
	size_t np = 0;

	assert_non_null(r);
	for (unsigned k = 0; np < 128; k++) {
		uint64_t ws = (uint64_t)(4096 * exp2(k / 4.0) + 0.5) & ~(uint64_t)63;
		size_t lv = 0;
		double y;

		if (ws > max)
			break;
		while (lv < n && ws > size[lv])
			lv++;
		y = lv < n ? ns[lv] : 100;
		pts[np++] = (struct tacho_cache_point){ .bytes = ws, .ns = y, .ns_p25 = y, .ns_p75 = y,
							.ns_min = y, .ns_max = y, .samples = 5 };
	}
	assert_int_equal(tc_cache_curve_set(r, TACHO_CACHE_CURVE_LATENCY, pts, np), 0);
	r->about.points_per_octave = 4;
	r->about.tsc_hz = 1e9;
	return r;
}

static void claim(struct tacho_cache_result *r, unsigned level, uint64_t cpuid, uint64_t sysfs)
{
	r->claims[r->nclaims++] = (struct tc_cache_claim){
		level, level == 1 ? TACHO_CACHE_DATA : TACHO_CACHE_UNIFIED, cpuid, sysfs, 0 };
}

static void test_matching(void **state)
{
	static const uint64_t three[] = { 32 * KIB, 1 * MIB, 8 * MIB };
	static const uint64_t two[] = { 32 * KIB, 8 * MIB };
	static const double ns3[] = { 1, 4, 14 }, ns2[] = { 1, 14 };
	struct tacho_cache_result *r;
	(void)state;

	/* one to one, in order; L3 is a quarter of its claim: flagged, with the figures */
	r = curve_of(three, ns3, 3, 128 * MIB);
	claim(r, 1, 32 * KIB, 32 * KIB);
	claim(r, 2, 1 * MIB, 1 * MIB);
	claim(r, 3, 32 * MIB, 32 * MIB);
	assert_int_equal(tc_cache_analyze(r), 0);
	assert_int_equal(r->nlevels, 3);
	assert_int_equal(r->levels[0].agrees, 1);
	assert_int_equal(r->levels[1].agrees, 1);
	assert_int_equal(r->levels[2].agrees, 0);
	assert_int_equal(r->levels[2].level, 3);
	assert_string_equal(r->levels[2].note, "CPUID and sysfs claim 32 MiB; the latency leaves "
			    "this level's plateau past 8 MiB (4x less than claimed)");
	assert_true(fabs(r->levels[1].ticks - 4.0) < 1e-9);   /* 1 GHz: a tick a ns */
	assert_true(isnan(r->levels[1].cycles));               /* no core clock measured */
	assert_true(r->mem.seen && r->mem.flat);
	assert_true(fabs(r->mem.ns - 100) < 1e-9);
	tacho_cache_result_free(r);

	/* no L2 on the curve: L1 and L3 match their claims, L2 is "not seen" */
	r = curve_of(two, ns2, 2, 128 * MIB);
	claim(r, 1, 32 * KIB, 0);
	claim(r, 2, 0, 1 * MIB);
	claim(r, 3, 8 * MIB, 8 * MIB);
	assert_int_equal(tc_cache_analyze(r), 0);
	assert_int_equal(r->nlevels, 3);
	assert_int_equal(r->levels[0].agrees, 1);
	assert_int_equal(r->levels[1].bytes, 0);
	assert_int_equal(r->levels[1].level, 2);
	assert_int_equal(r->levels[1].agrees, 0);
	assert_string_equal(r->levels[1].note, "not seen: the curve shows no plateau ending near "
			    "the claimed 1 MiB");
	assert_int_equal(r->levels[2].bytes, 8 * MIB);
	assert_int_equal(r->levels[2].agrees, 1);
	tacho_cache_result_free(r);

	/* a hypervisor's 480 MB L3 against 8 MiB seen: too far to be the same level, so
	 * the claim is not seen and the level is nobody's */
	r = curve_of(three, ns3, 3, 256 * MIB);
	claim(r, 1, 32 * KIB, 32 * KIB);
	claim(r, 2, 1 * MIB, 1 * MIB);
	claim(r, 3, 480 * MIB, 0);
	assert_int_equal(tc_cache_analyze(r), 0);
	assert_int_equal(r->nlevels, 4);
	assert_int_equal(r->levels[2].bytes, 8 * MIB);
	assert_int_equal(r->levels[2].agrees, -1);
	assert_int_equal(r->levels[2].cpuid_bytes, 0);
	assert_int_equal(r->levels[3].bytes, 0);
	assert_int_equal(r->levels[3].cpuid_bytes, 480 * MIB);
	assert_int_equal(r->levels[3].agrees, 0);
	/* the sweep stopped below twice the largest claim: said */
	assert_int_equal(r->nwarnings, 1);
	assert_non_null(strstr(r->warnings[0], "the sweep stopped at 256 MiB, less than twice the "
				  "largest cache claimed (480 MiB)"));
	tacho_cache_result_free(r);

	/* nothing claimed at all (a CPU that describes no caches) */
	r = curve_of(three, ns3, 3, 128 * MIB);
	assert_int_equal(tc_cache_analyze(r), 0);
	assert_int_equal(r->nlevels, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(r->levels[i].agrees, -1);
	assert_int_equal(r->levels[0].type, TACHO_CACHE_DATA);
	assert_int_equal(r->levels[1].type, TACHO_CACHE_UNIFIED);
	tacho_cache_result_free(r);

	/* a sweep that ends on the rise into memory: a lower bound, said */
	r = curve_of(three, ns3, 3, 8 * MIB + 2 * MIB);
	assert_int_equal(tc_cache_analyze(r), 0);
	assert_true(r->mem.seen && !r->mem.flat);
	assert_int_equal(r->nwarnings, 1);
	assert_non_null(strstr(r->warnings[0], "still rising at the largest working set"));
	tacho_cache_result_free(r);
}

/* The page chase: its lines also sit in the caches; the latency curve says how much
 * of each load that is, and the rest is the TLBs'. */
static void test_tlb_levels(void **state)
{
	static const uint64_t three[] = { 32 * KIB, 1 * MIB, 8 * MIB };
	static const double ns3[] = { 1, 4, 14 };
	struct tacho_cache_result *r = curve_of(three, ns3, 3, 128 * MIB);
	struct tacho_cache_point pts[64];
	size_t n = 0;
	(void)state;

	for (unsigned k = 0; n < 64; k++) {
		uint64_t pages = (uint64_t)(8 * exp2(k / 4.0) + 0.5), foot = pages * 64;
		double cache = foot <= 32 * KIB ? 1 : foot <= 1 * MIB ? 4 : 14;
		double tlb = pages <= 64 ? 0 : pages <= 1536 ? 2 : 25;
		double y = cache + tlb;

		if (pages > 16384)
			break;
		pts[n++] = (struct tacho_cache_point){ .bytes = pages * 4096, .pages = pages, .ns = y,
						       .ns_p25 = y, .ns_p75 = y, .samples = 5 };
	}
	assert_int_equal(tc_cache_curve_set(r, TACHO_CACHE_CURVE_PAGES, pts, n), 0);
	/* in huge pages, the TLB is out of it */
	for (size_t i = 0; i < n; i++) {
		uint64_t foot = pts[i].pages * 64;
		pts[i].ns = pts[i].ns_p25 = pts[i].ns_p75 = foot <= 32 * KIB ? 1 : foot <= MIB ? 4 : 14;
	}
	assert_int_equal(tc_cache_curve_set(r, TACHO_CACHE_CURVE_PAGES_HUGE, pts, n), 0);
	r->cpuid_tlb[1] = 64;
	r->cpuid_tlb[2] = 2048;
	assert_int_equal(tc_cache_analyze(r), 0);
	assert_int_equal(r->ntlbs, 2);
	assert_int_equal(r->tlbs[0].entries, 64);
	assert_int_equal(r->tlbs[0].agrees, 1);
	assert_true(fabs(r->tlbs[0].ns - 1) < 1e-9);
	assert_true(fabs(r->tlbs[0].miss_ns - 2) < 1e-9);
	/* 1536 is the last point below 2048 entries' worth: one step off at most */
	assert_true(r->tlbs[1].entries >= 1448 && r->tlbs[1].entries <= 1722);
	assert_int_equal(r->tlbs[1].reach_bytes, (uint64_t)r->tlbs[1].entries * 4096);
	assert_int_equal(r->tlbs[1].agrees, 0);
	assert_true(fabs(r->tlbs[1].miss_ns - 23) < 1e-9);
	assert_int_equal(r->nnotes, 1);
	assert_non_null(strstr(r->notes[0], "huge pages remove the TLB's cost"));
	tacho_cache_result_free(r);
}

static void test_bad_opts(void **state)
{
	struct tacho_cache_result *r = (void *)1;
	struct tacho_cache_opts o = { .sz = sizeof(o) };
	cpu_set_t set;
	int other = -1;
	(void)state;

	assert_int_equal(tacho_cache_measure(&o, NULL), -EINVAL);
	o.sz = 2;
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	assert_null(r);
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .what = 1u << 7 };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .points_per_octave = 17 };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .samples = 256 };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .rounds = 16 };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .min_bytes = 1024 };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .max_bytes = 2048ull << 20 };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .min_bytes = 1 << 20, .max_bytes = 64 << 10 };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .pin_cpu = true, .cpu = -1 };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	/* a CPU this thread may not run on */
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE - 1 && other < 0; c++)
		if (!CPU_ISSET(c, &set))
			other = c;
	o = (struct tacho_cache_opts){ .sz = sizeof(o), .pin_cpu = true, .cpu = other };
	assert_int_equal(tacho_cache_measure(&o, &r), -EINVAL);
	assert_null(r);
	tacho_cache_result_free(NULL);
	/* the accessors take NULL and out-of-range indices */
	assert_int_equal(tacho_cache_result_nlevels(NULL), 0);
	assert_null(tacho_cache_result_about(NULL));
	assert_null(tacho_cache_result_point(NULL, TACHO_CACHE_CURVE_LATENCY, 0));
	assert_int_equal(tacho_cache_result_npoints(NULL, TACHO_CACHE_CURVE_COUNT), 0);
	assert_null(tacho_cache_result_warning(NULL, 0));
}

static void progress(void *arg, const char *phase, double done)
{
	double *last = arg;

	assert_non_null(phase);
	assert_true(done >= *last - 1e-12 && done <= 1 + 1e-12);
	*last = done;
}

/* A small measurement through the library: its shape, not its figures. */
static void test_small_live(void **state)
{
	double last = 0;
	struct tacho_cache_opts o = {
		.sz = offsetof(struct tacho_cache_opts, progress_arg) + sizeof(void *),
		.what = TACHO_CACHE_LATENCY | TACHO_CACHE_BANDWIDTH, .max_bytes = 256 << 10,
		.points_per_octave = 2, .samples = 3, .rounds = 1, .progress = progress,
		.progress_arg = &last,
	};
	struct tacho_cache_result *r;
	const struct tacho_cache_about *a;
	size_t n;
	int err;
	(void)state;

#if !defined(__x86_64__) && !defined(__i386__)
	TEST_SKIP("the chase is timed with the TSC: x86 only");
#endif
	err = tacho_cache_measure(&o, &r);
	if (err)
		fail_msg("tacho_cache_measure: %s", tacho_strerror(err));
	a = tacho_cache_result_about(r);
	assert_int_equal(a->points_per_octave, 2);
	assert_int_equal(a->samples, 3);
	assert_int_equal(a->rounds, 1);
	assert_int_equal(a->min_bytes, 4096);
	assert_int_equal(a->max_bytes, 256 << 10);
	assert_true(a->tsc_hz > 0);
	assert_true(a->seconds > 0);
	assert_non_null(a->kernel);
	assert_true(last == 1);
	/* 4 KiB to 256 KiB, two points an octave: 13 points, all sampled */
	n = tacho_cache_result_npoints(r, TACHO_CACHE_CURVE_LATENCY);
	assert_int_equal(n, 13);
	for (size_t i = 0; i < n; i++) {
		const struct tacho_cache_point *p = tacho_cache_result_point(r, TACHO_CACHE_CURVE_LATENCY, i);
		assert_int_equal(p->samples, 3);
		assert_true(p->ns > 0 && p->ns_p25 <= p->ns && p->ns <= p->ns_p75);
		assert_true(p->ns_min <= p->ns_p25 && p->ns_p75 <= p->ns_max);
	}
	assert_null(tacho_cache_result_point(r, TACHO_CACHE_CURVE_LATENCY, n));
	/* no TLB chase asked for */
	assert_int_equal(tacho_cache_result_npoints(r, TACHO_CACHE_CURVE_PAGES), 0);
	assert_int_equal(tacho_cache_result_ntlbs(r), 0);
	/* at least the level the sweep ends in was found, and bandwidth measured there */
	assert_true(tacho_cache_result_nlevels(r) >= 1 || tacho_cache_result_memory(r)->seen);
	for (size_t i = 0; i < tacho_cache_result_nlevels(r); i++) {
		const struct tacho_cache_level *l = tacho_cache_result_level(r, i);
		if (l->bytes)
			assert_true(l->bw.bytes > 0 && l->bw.read > 0 && l->bw.threads >= 1);
	}
	tacho_cache_result_free(r);
}

/* Caches grouped by the CPUs that report them, on libcpuid's dumps of asymmetric parts
 * (the X3D Ryzens: one CCD under the stacked cache) and a symmetric one: exact sizes and
 * instances per group, the kind's own list, and tacho_cpu_caches_of per CPU, which is
 * what the measurement holds its levels against. */
static void test_cache_groups(void **state)
{
	static const struct {
		const char *file;
		unsigned ncpus, split;        /* split: the first CPU of the second group; 0 none */
		uint64_t l3_first, l3_second;
	} cases[] = {
		{ "amd/zen4/amd-ryzen-9-7950x3d-16-core-processor.test.xz", 32, 16, 96 * MIB, 32 * MIB },
		{ "amd/zen4/amd-ryzen-9-7900x3d-12-core-processor.test", 24, 12, 96 * MIB, 32 * MIB },
		{ "amd/zen5/amd-ryzen-9-9950x3d-16-core-processor.test.xz", 32, 16, 96 * MIB, 32 * MIB },
		{ "amd/zen4/amd-ryzen-7-7800x3d-8-core-processor.test", 16, 0, 96 * MIB, 96 * MIB },
	};
	char root[4096];
	struct stat st;
	(void)state;

	snprintf(root, sizeof(root), "%s", th_path("shared/data/libcpuid"));
	if (stat(root, &st) != 0)
		TEST_SKIP("the libcpuid corpus is not at %s", root);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tacho_diag diag = { .sz = sizeof(diag) };
		struct tacho_cpu_info info = { .sz = sizeof(info) };
		struct tacho_cpuid_dump *d = NULL;
		const struct tacho_cpu_cache *c;
		char path[8192], *buf;
		unsigned n, split = cases[i].split;
		size_t len;

		snprintf(path, sizeof(path), "%s/%s", root, cases[i].file);
		if (th_read_data(path, &buf, &len))
			fail_msg("%s: cannot read", cases[i].file);
		len = th_corpus_dump_len(buf, len);
		if (tacho_cpuid_dump_parse(buf, len, cases[i].file, &d, &diag))
			fail_msg("%s: %s", cases[i].file, diag.message);
		assert_int_equal(tacho_cpu_decode(d, &info), 0);
		if (info.ncpus != cases[i].ncpus || info.ncore_types != 1)
			fail_msg("%s: %u CPUs, %u kinds", cases[i].file, info.ncpus, info.ncore_types);
		if (info.ncache_groups != (split ? 2u : 0u))
			fail_msg("%s: %u cache groups", cases[i].file, info.ncache_groups);
		if (split) {
			const struct tacho_cpu_cache_group *g = info.cache_groups;

			if (g[0].first_cpu != 0 || g[0].ncpus != split || g[1].first_cpu != split ||
			    g[1].ncpus != info.ncpus - split || g[0].cpus[0] != (1ull << split) - 1 ||
			    g[1].cpus[0] != ((1ull << info.ncpus) - 1) - ((1ull << split) - 1))
				fail_msg("%s: groups from %u (%u CPUs) and %u (%u CPUs)", cases[i].file,
					 g[0].first_cpu, g[0].ncpus, g[1].first_cpu, g[1].ncpus);
			for (unsigned k = 0; k < 2; k++) {
				const struct tacho_cpu_cache *l3 = &g[k].caches[g[k].ncaches - 1];
				uint64_t want = k ? cases[i].l3_second : cases[i].l3_first;

				/* each CCD: its own L3, once; an L1d per core of the CCD */
				if (l3->level != 3 || l3->size != want || l3->instances != 1 ||
				    g[k].caches[0].instances != (int)g[k].ncpus / 2)
					fail_msg("%s: group %u: L%u of %llu bytes, %d instances, L1d %d",
						 cases[i].file, k, l3->level, (unsigned long long)l3->size,
						 l3->instances, g[k].caches[0].instances);
			}
		}
		/* the kind's list is CPU 0's: its L3 once, the L1d of every core */
		c = &info.core_types[0].caches[info.core_types[0].ncaches - 1];
		if (c->size != cases[i].l3_first || c->instances != 1 ||
		    info.core_types[0].caches[0].instances != (int)info.ncpus / 2)
			fail_msg("%s: the kind's L3 %llu bytes, %d instances", cases[i].file,
				 (unsigned long long)c->size, c->instances);
		c = tacho_cpu_caches_of(&info, 0, &n);
		assert_non_null(c);
		if (c[n - 1].size != cases[i].l3_first)
			fail_msg("%s: CPU 0 reports an L3 of %llu bytes", cases[i].file,
				 (unsigned long long)c[n - 1].size);
		c = tacho_cpu_caches_of(&info, info.ncpus - 1, &n);
		assert_non_null(c);
		if (c[n - 1].size != cases[i].l3_second)
			fail_msg("%s: CPU %u reports an L3 of %llu bytes", cases[i].file,
				 info.ncpus - 1, (unsigned long long)c[n - 1].size);
		/* no such CPU; a description too short to have groups is read as none */
		assert_null(tacho_cpu_caches_of(&info, info.ncpus, &n));
		assert_int_equal(n, 0);
		assert_null(tacho_cpu_caches_of(NULL, 0, &n));
		tacho_cpu_info_exit(&info);
		tacho_cpuid_dump_free(d);
		free(buf);
	}
}

static void test_parse_size(void **state)
{
	static const struct {
		const char *s;
		int err;
		uint64_t v;
		unsigned column;
	} cases[] = {
		{ "4096", 0, 4096, 0 }, { "4K", 0, 4096, 0 }, { "4k", 0, 4096, 0 },
		{ "64KiB", 0, 65536, 0 }, { "1M", 0, 1 << 20, 0 }, { "1mib", 0, 1 << 20, 0 },
		{ "2G", 0, 2ull << 30, 0 }, { "3GiB", 0, 3ull << 30, 0 }, { "512B", 0, 512, 0 },
		{ "0", 0, 0, 0 }, { "", -TACHO_EPARSE, 0, 1 }, { "K", -TACHO_EPARSE, 0, 1 },
		{ "-4K", -TACHO_EPARSE, 0, 1 }, { "4 K", -TACHO_EPARSE, 0, 2 },
		{ "4KB", -TACHO_EPARSE, 0, 2 }, { "4T", -TACHO_EPARSE, 0, 2 },
		{ "1.5M", -TACHO_EPARSE, 0, 2 }, { "12Q", -TACHO_EPARSE, 0, 3 },
		{ "18446744073709551615", 0, UINT64_MAX, 0 },
		{ "18446744073709551616", -TACHO_EOUTOFRANGE, 0, 1 },
		{ "17179869184G", -TACHO_EOUTOFRANGE, 0, 1 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tacho_diag d = { .sz = sizeof(d), .column = 99 };
		uint64_t v = 7;
		int err = tc_parse_size(cases[i].s, &v, &d);

		if (err != cases[i].err || (!err && v != cases[i].v) ||
		    (err && d.column != cases[i].column))
			fail_msg("'%s': %d %llu column %u, wanted %d %llu column %u", cases[i].s, err,
				 (unsigned long long)v, d.column, cases[i].err,
				 (unsigned long long)cases[i].v, cases[i].column);
	}
	assert_int_equal(tc_parse_size(NULL, NULL, NULL), -TACHO_EPARSE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matching),
		cmocka_unit_test(test_tlb_levels),
		cmocka_unit_test(test_bad_opts),
		cmocka_unit_test(test_small_live),
		cmocka_unit_test(test_cache_groups),
		cmocka_unit_test(test_parse_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
