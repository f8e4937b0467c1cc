/* test-cpu-decode.c - tacho_cpu_decode on synthetic dumps built leaf by leaf, each with
 * exact expectations: display family and model, vendor and brand, leaf 2 (0xFF, 0x40,
 * 0x49, bit 31, unknown bytes), leaf 4 and instance counts, AMD's legacy associativity
 * codes, maximum leaves, topology and hybrid kinds, leaf 0xA, AMD counters, the TSC
 * frequency and its source, the hypervisor, feature names; and that the decoder's
 * files call one way, down a tree. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "cpu/cpuid.h"
#include "util/util.h"

#define ALL -1
struct leaf {
	int cpu;                 /* ALL: every CPU of the dump */
	uint32_t leaf, sub, a, b, c, d;
};

/* "GenuineIntel" and "AuthenticAMD" in leaf 0's EBX, ECX, EDX */
#define INTEL(max) { ALL, 0, 0, max, 0x756e6547, 0x6c65746e, 0x49656e69 }
#define AMD(max)   { ALL, 0, 0, max, 0x68747541, 0x444d4163, 0x69746e65 }

static struct tacho_cpuid_dump *build(unsigned ncpus, const struct leaf *l, size_t n)
{
	struct tacho_cpuid_dump *d = tc_cpuid_dump_new();

	assert_non_null(d);
	for (unsigned c = 0; c < ncpus; c++) {
		assert_int_equal(tc_cpuid_dump_add_cpu(d, (int)c), (int)c);
		for (size_t i = 0; i < n; i++) {
			struct tacho_cpuid_regs r = { l[i].a, l[i].b, l[i].c, l[i].d };
			if (l[i].cpu == ALL || l[i].cpu == (int)c)
				assert_int_equal(tc_cpuid_dump_set(d, c, l[i].leaf, l[i].sub, &r), 0);
		}
	}
	assert_int_equal(tc_cpuid_dump_finish(d), 0);
	return d;
}

static void decode(const struct leaf *l, size_t n, unsigned ncpus, struct tacho_cpu_info *info)
{
	struct tacho_cpuid_dump *d = build(ncpus, l, n);
	assert_int_equal(tacho_cpu_decode(d, info), 0);
	tacho_cpuid_dump_free(d);
}
#define DECODE(arr, ncpus, info) decode(arr, ARRAY_SIZE(arr), ncpus, info)

static bool has_note(const struct tacho_cpu_info *info, const char *needle)
{
	for (unsigned i = 0; i < info->nnotes; i++)
		if (strstr(info->notes[i], needle))
			return true;
	return false;
}

static void print_notes(const struct tacho_cpu_info *info)
{
	for (unsigned i = 0; i < info->nnotes; i++)
		printf("  note: %s\n", info->notes[i]);
}

static const struct tacho_cpu_cache *cache(const struct tacho_cpu_core_type *ct, unsigned level,
					   enum tacho_cache_type type)
{
	for (unsigned i = 0; i < ct->ncaches; i++)
		if (ct->caches[i].level == level && ct->caches[i].type == type)
			return &ct->caches[i];
	return NULL;
}

/* The cache, failing the test when there is none (never NULL). */
static const struct tacho_cpu_cache *need_(const struct tacho_cpu_core_type *ct, unsigned level,
					   enum tacho_cache_type type, int line)
{
	static const struct tacho_cpu_cache none;
	const struct tacho_cpu_cache *c = cache(ct, level, type);

	if (!c) {
		fail_msg("line %d: no L%u %s cache", line, level, tacho_cache_type_name(type));
		return &none;
	}
	return c;
}
#define need(ct, level, type) need_(ct, level, type, __LINE__)

/* --- family, model, stepping --- */

static const struct {
	bool amd;
	uint32_t eax;
	unsigned family, model, stepping, base_family, ext_family, base_model, ext_model;
} sigs[] = {
	/* Intel: the extended model counts for base family 6 and 0Fh */
	{ false, 0x00090672, 6, 0x97, 2, 6, 0, 7, 9 },         /* Alder Lake */
	{ false, 0x000206a7, 6, 0x2a, 7, 6, 0, 0xa, 2 },       /* Sandy Bridge */
	{ false, 0x00000f29, 0xf, 2, 9, 0xf, 0, 2, 0 },         /* Northwood */
	{ false, 0x00010f43, 0xf, 0x14, 3, 0xf, 0, 4, 1 },      /* family 0Fh: ext model counts */
	{ false, 0x00300f10, 18, 1, 0, 0xf, 3, 1, 0 },          /* family 18: 0Fh + 3 */
	{ false, 0x00410f21, 19, 0x12, 1, 0xf, 4, 2, 1 },       /* family 19 */
	{ false, 0x00010542, 5, 4, 2, 5, 0, 4, 1 },             /* family 5: ext model ignored */
	/* AMD: the extended model counts only with base family 0Fh */
	{ true, 0x00a60f12, 0x19, 0x61, 2, 0xf, 0xa, 1, 6 },     /* Zen 4 */
	{ true, 0x00020f32, 0xf, 0x23, 2, 0xf, 0, 3, 2 },        /* K8 */
	{ true, 0x000106a0, 6, 0xa, 0, 6, 0, 0xa, 1 },           /* family 6: ext model ignored */
	{ true, 0x00b40f40, 0x1a, 0x44, 0, 0xf, 0xb, 4, 4 },     /* Zen 5 */
};

static void test_signature(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++) {
		struct leaf l[] = {
			INTEL(1), { ALL, 1, 0, sigs[i].eax, 0, 0, 0 },
		};
		struct tacho_cpu_info info = { .sz = sizeof(info) };
		if (sigs[i].amd)
			l[0] = (struct leaf)AMD(1);
		DECODE(l, 1, &info);
		if (info.family != sigs[i].family || info.model != sigs[i].model ||
		    info.stepping != sigs[i].stepping || info.base_family != sigs[i].base_family ||
		    info.ext_family != sigs[i].ext_family || info.base_model != sigs[i].base_model ||
		    info.ext_model != sigs[i].ext_model || info.signature != sigs[i].eax)
			fail_msg("case %zu (%08x): got family %#x model %#x stepping %u", i,
				 sigs[i].eax, info.family, info.model, info.stepping);
		tacho_cpu_info_exit(&info);
	}
}

/* --- vendor, brand, hypervisor --- */

static void test_vendor_brand_hypervisor(void **state)
{
	/* "  Intel(R) Xeon  " padded with spaces on both sides, then NULs */
	static const struct leaf l[] = {
		INTEL(1),
		{ ALL, 1, 0, 0x000306a9, 0, 0x80000000u, 0 },        /* ECX[31]: a guest */
		{ ALL, 0x40000000, 0, 0x40000010, 0x4b4d564b, 0x564b4d56, 0x0000004d }, /* KVM */
		{ ALL, 0x40000010, 0, 2100000, 0, 0, 0 },             /* 2.1 GHz TSC, in kHz */
		{ ALL, 0x80000000, 0, 0x80000004, 0, 0, 0 },
		{ ALL, 0x80000002, 0, 0x6e492020, 0x286c6574, 0x58202952, 0x206e6f65 },
		{ ALL, 0x80000003, 0, 0x00002020, 0, 0, 0 },
		{ ALL, 0x80000004, 0, 0, 0, 0, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	(void)state;

	DECODE(l, 1, &info);
	assert_int_equal(info.vendor, TACHO_VENDOR_INTEL);
	assert_string_equal(info.vendor_string, "GenuineIntel");
	assert_string_equal(tacho_cpu_vendor_name(info.vendor), "Intel");
	assert_string_equal(info.brand, "Intel(R) Xeon");
	assert_true(info.hypervisor_bit);
	assert_int_equal(info.hypervisor, TACHO_HV_KVM);
	assert_string_equal(tacho_hypervisor_name(info.hypervisor), "KVM");
	assert_int_equal(info.hv_max_leaf, 0x40000010);
	assert_int_equal(info.tsc.source, TACHO_TSC_FREQ_HYPERVISOR);
	assert_true(info.tsc.hz == 2100000000ull);
	assert_true(has_note(&info, "hypervisor"));
	tacho_cpu_info_exit(&info);
	tacho_cpu_info_exit(&info);   /* twice is fine: _exit zeroes */
	tacho_cpu_info_exit(NULL);
}

/* The description is sized: a newer caller's larger struct is decoded as far as this
 * library knows and its own fields are left alone, by the decoder and by _exit; one
 * below the first version is refused untouched, and so is the cross-check's. */
static void test_sized(void **state)
{
	static const struct leaf l[] = {
		{ ALL, 0, 0, 0xd, 0x756e6547, 0x6c65746e, 0x49656e69 },   /* GenuineIntel */
		{ ALL, 1, 0, 0x000906ea, 0, 0x80000000, 0 },
	};
	struct tacho_cpuid_dump *d = build(2, l, ARRAY_SIZE(l));
	struct {
		struct tacho_cpu_info info;
		uint64_t future;
	} newer = { .info.sz = sizeof(newer), .future = 0xfade };
	struct tacho_cpu_info small = { .sz = offsetof(struct tacho_cpu_info, notes_dropped),
					.family = 77 };
	struct tacho_cpu_crosscheck x = { .sz = offsetof(struct tacho_cpu_crosscheck, items) };
	struct tacho_cpu_sysfs *sys = NULL;
	(void)state;

	assert_int_equal(tacho_cpu_decode(d, &newer.info), 0);
	assert_int_equal(newer.info.sz, sizeof(newer));
	assert_int_equal(newer.info.vendor, TACHO_VENDOR_INTEL);
	assert_int_equal(newer.info.ncpus, 2);
	assert_non_null(newer.info.cpus);
	assert_int_equal(newer.future, 0xfade);
	assert_true(tacho_cpu_has(&newer.info, "hypervisor"));
	assert_false(tacho_cpu_has(&small, "hypervisor"));

	assert_int_equal(tacho_cpu_decode(d, &small), -EINVAL);
	assert_int_equal(small.family, 77);
	tacho_cpu_info_exit(&small);           /* nothing decoded, nothing done */
	assert_int_equal(small.family, 77);

	assert_int_equal(tacho_cpu_sysfs_read(NULL, &sys), 0);
	assert_int_equal(tacho_cpu_crosscheck(&newer.info, sys, &x), -EINVAL);
	assert_null(x.items);
	assert_int_equal(tacho_cpu_crosscheck(&small, sys, &x), -EINVAL);
	tacho_cpu_sysfs_free(sys);

	tacho_cpu_info_exit(&newer.info);
	assert_int_equal(newer.info.sz, sizeof(newer));
	assert_null(newer.info.cpus);
	assert_int_equal(newer.info.ncpus, 0);
	assert_int_equal(newer.future, 0xfade);
	tacho_cpuid_dump_free(d);
}

static void test_unknown_vendor_and_empty(void **state)
{
	static const struct leaf l[] = {
		{ ALL, 0, 0, 1, 0x41414141, 0x41414141, 0x41414141 },
		{ ALL, 1, 0, 0x00000f00, 0, 0, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	struct tacho_cpuid_dump *d;
	struct tacho_cpuid_regs r = { 0x80000000, 0, 0, 0 };
	(void)state;

	DECODE(l, 1, &info);
	assert_int_equal(info.vendor, TACHO_VENDOR_UNKNOWN);
	assert_string_equal(info.vendor_string, "AAAAAAAAAAAA");
	assert_true(has_note(&info, "vendor string"));
	assert_true(has_note(&info, "no brand string"));
	tacho_cpu_info_exit(&info);

	/* no leaf 0 at all */
	d = tc_cpuid_dump_new();
	tc_cpuid_dump_add_cpu(d, 0);
	tc_cpuid_dump_set(d, 0, 0x80000000, 0, &r);
	assert_int_equal(tc_cpuid_dump_finish(d), 0);
	assert_int_equal(tacho_cpu_decode(d, &info), -TACHO_ENOVALUE);
	tacho_cpuid_dump_free(d);
	assert_int_equal(tacho_cpu_decode(NULL, &info), -TACHO_ENOVALUE);
}

/* --- leaf 2 --- */

static void test_leaf2(void **state)
{
	/* Pentium 4 (family 0Fh model 2): AL = 1; 0x66 L1d 8K, 0x5b DTLB, 0x50 ITLB;
	 * EDX: 0x7c L2 1M sectored, 0x70 trace cache, 0x40 (no L3 beside a valid L2);
	 * ECX has bit 31 set: its bytes (0x0c would be an L1d) must be ignored; 0x22 is
	 * an unknown-here... no: 0x22 is an L3, but in the invalid register. */
	static const struct leaf l[] = {
		INTEL(2),
		{ ALL, 1, 0, 0x00000f27, 0, 0, 0 },
		{ ALL, 2, 0, 0x665b5001, 0x00000000, 0x8000220c, 0x007c7040 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	const struct tacho_cpu_core_type *ct;
	const struct tacho_cpu_cache *c;
	(void)state;

	DECODE(l, 1, &info);
	ct = &info.core_types[0];
	assert_int_equal(info.ncore_types, 1);
	assert_int_equal(ct->ncaches, 2);
	c = need(ct, 1, TACHO_CACHE_DATA);
	assert_true(c->size == 8 * 1024);
	assert_int_equal(c->ways, 4);
	assert_int_equal(c->line_size, 64);
	assert_int_equal(c->sets, 32);
	assert_int_equal(c->source, TACHO_SRC_LEAF_2);
	assert_int_equal(c->descriptor, 0x66);
	c = need(ct, 2, TACHO_CACHE_UNIFIED);
	assert_true(c->size == 1024 * 1024);
	assert_int_equal(c->ways, 8);
	assert_null(cache(ct, 3, TACHO_CACHE_UNIFIED));       /* 0x22 is in the invalid ECX */
	assert_null(cache(ct, 1, TACHO_CACHE_INSTRUCTION));   /* a trace cache is not one */
	assert_true(has_note(&info, "trace cache: 12 K-uops"));
	assert_int_equal(ct->ntlbs, 2);
	assert_int_equal(ct->tlbs[0].type, TACHO_TLB_INSTRUCTION);  /* 0x50 */
	assert_int_equal(ct->tlbs[0].entries, 64);
	assert_int_equal(ct->tlbs[0].page_sizes, TACHO_PAGE_4K | TACHO_PAGE_2M | TACHO_PAGE_4M);
	assert_int_equal(ct->tlbs[1].type, TACHO_TLB_DATA);         /* 0x5b */
	assert_int_equal(ct->tlbs[1].entries, 64);
	tacho_cpu_info_exit(&info);
}

static void test_leaf2_0x49(void **state)
{
	/* 0x49 is an L3 on the Xeon MP of family 0Fh model 06h, an L2 elsewhere */
	static const struct leaf xeon[] = {
		INTEL(2), { ALL, 1, 0, 0x00000f68, 0, 0, 0 },
		{ ALL, 2, 0, 0x00004901, 0, 0, 0 },
	};
	static const struct leaf core2[] = {
		INTEL(2), { ALL, 1, 0, 0x000006f6, 0, 0, 0 },
		{ ALL, 2, 0, 0x00004901, 0, 0, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	(void)state;

	DECODE(xeon, 1, &info);
	assert_int_equal(info.family, 0xf);
	assert_int_equal(info.model, 6);
	assert_non_null(cache(&info.core_types[0], 3, TACHO_CACHE_UNIFIED));
	assert_null(cache(&info.core_types[0], 2, TACHO_CACHE_UNIFIED));
	assert_true(need(&info.core_types[0], 3, TACHO_CACHE_UNIFIED)->size == 4u << 20);
	assert_int_equal(need(&info.core_types[0], 3, TACHO_CACHE_UNIFIED)->ways, 16);
	tacho_cpu_info_exit(&info);

	DECODE(core2, 1, &info);
	assert_non_null(cache(&info.core_types[0], 2, TACHO_CACHE_UNIFIED));
	assert_null(cache(&info.core_types[0], 3, TACHO_CACHE_UNIFIED));
	tacho_cpu_info_exit(&info);
}

static void test_leaf2_ff_40_and_odd(void **state)
{
	/* 0xFF without leaf 4; AL = 2 (two executions needed); 0x99 is no descriptor */
	static const struct leaf ff[] = {
		INTEL(2), { ALL, 1, 0, 0x000006f6, 0, 0, 0 },
		{ ALL, 2, 0, 0x00ff9902, 0, 0, 0 },
	};
	/* 0x40 and no L2 descriptor: no L2, even though 0x8000_0006 would give one */
	static const struct leaf forty[] = {
		INTEL(2), { ALL, 1, 0, 0x00000695, 0, 0, 0 },
		{ ALL, 2, 0, 0x02b3b001, 0, 0, 0x2c043040 },
		{ ALL, 0x80000000, 0, 0x80000006, 0, 0, 0 },
		{ ALL, 0x80000006, 0, 0, 0, 0x02008040, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	(void)state;

	DECODE(ff, 1, &info);
	assert_int_equal(info.core_types[0].ncaches, 0);
	assert_true(has_note(&info, "use leaf 4"));
	assert_true(has_note(&info, "executed 2 times"));
	assert_true(has_note(&info, "0x99 is not in the SDM's table"));
	tacho_cpu_info_exit(&info);

	DECODE(forty, 1, &info);
	assert_int_equal(info.core_types[0].ncaches, 2);          /* 0x2c L1d, 0x30 L1i */
	assert_non_null(cache(&info.core_types[0], 1, TACHO_CACHE_DATA));
	assert_non_null(cache(&info.core_types[0], 1, TACHO_CACHE_INSTRUCTION));
	assert_null(cache(&info.core_types[0], 2, TACHO_CACHE_UNIFIED));
	tacho_cpu_info_exit(&info);
}

/* --- leaf 4, instances, maximum leaf --- */

/* A 4-core, 8-thread part: leaf 4 L1d (2 threads share), L2 (2), L3 (16 addressable),
 * leaf 0xB: SMT shift 1, 2 per core; core level shift 4, 8 logical. */
static const struct leaf quad_ht[] = {
	INTEL(0xb),
	{ ALL, 1, 0, 0x000906ea, 0x00100800, 0, 0x10000000 },
	{ ALL, 4, 0, 0x1c004121, 0x01c0003f, 0x0000003f, 0 },   /* L1d 32K 8-way */
	{ ALL, 4, 1, 0x1c004122, 0x01c0003f, 0x0000003f, 0 },   /* L1i 32K 8-way */
	{ ALL, 4, 2, 0x1c004143, 0x00c0003f, 0x000003ff, 0 },   /* L2 256K 4-way */
	{ ALL, 4, 3, 0x1c03c163, 0x03c0003f, 0x00001fff, 6 },   /* L3 8M 16-way, inclusive */
	{ ALL, 4, 4, 0, 0, 0, 0 },
	{ 0, 0xb, 0, 1, 2, 0x100, 0 }, { 0, 0xb, 1, 4, 8, 0x201, 0 },
	{ 1, 0xb, 0, 1, 2, 0x100, 1 }, { 1, 0xb, 1, 4, 8, 0x201, 1 },
	{ 2, 0xb, 0, 1, 2, 0x100, 2 }, { 2, 0xb, 1, 4, 8, 0x201, 2 },
	{ 3, 0xb, 0, 1, 2, 0x100, 3 }, { 3, 0xb, 1, 4, 8, 0x201, 3 },
	{ 4, 0xb, 0, 1, 2, 0x100, 4 }, { 4, 0xb, 1, 4, 8, 0x201, 4 },
	{ 5, 0xb, 0, 1, 2, 0x100, 5 }, { 5, 0xb, 1, 4, 8, 0x201, 5 },
	{ 6, 0xb, 0, 1, 2, 0x100, 6 }, { 6, 0xb, 1, 4, 8, 0x201, 6 },
	{ 7, 0xb, 0, 1, 2, 0x100, 7 }, { 7, 0xb, 1, 4, 8, 0x201, 7 },
};

static void test_leaf4_topology(void **state)
{
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	const struct tacho_cpu_core_type *ct;
	const struct tacho_cpu_cache *c;
	(void)state;

	/* all 8 CPUs: counted from the APIC IDs */
	DECODE(quad_ht, 8, &info);
	ct = &info.core_types[0];
	assert_int_equal(info.topo.source, TACHO_SRC_LEAF_B);
	assert_true(info.topo.complete);
	assert_int_equal(info.topo.packages, 1);
	assert_int_equal(info.topo.cores_per_package, 4);
	assert_int_equal(info.topo.threads_per_core, 2);
	assert_int_equal(info.topo.logical_per_package, 8);
	assert_int_equal(ct->kind, TACHO_CORE_GENERAL);
	assert_int_equal(ct->cores, 4);
	assert_int_equal(ct->threads, 8);
	assert_int_equal(ct->ncaches, 4);
	c = need(ct, 1, TACHO_CACHE_DATA);
	assert_true(c->size == 32 * 1024);
	assert_int_equal(c->ways, 8);
	assert_int_equal(c->sets, 64);
	assert_int_equal(c->sharing, 2);
	assert_int_equal(c->instances, 4);
	assert_int_equal(c->source, TACHO_SRC_LEAF_4);
	c = need(ct, 3, TACHO_CACHE_UNIFIED);
	assert_true(c->size == 8u << 20);
	assert_int_equal(c->ways, 16);
	assert_int_equal(c->instances, 1);
	assert_int_equal(c->inclusive, 1);
	assert_int_equal(info.cpus[5].core, 2);
	assert_int_equal(info.cpus[5].thread, 1);
	tacho_cpu_info_exit(&info);

	/* one CPU only: the leaf fields, and instances by division */
	DECODE(quad_ht, 1, &info);
	ct = &info.core_types[0];
	assert_false(info.topo.complete);
	assert_int_equal(ct->cores, 4);
	assert_int_equal(ct->threads, 8);
	assert_int_equal(need(ct, 2, TACHO_CACHE_UNIFIED)->instances, 4);
	assert_int_equal(need(ct, 3, TACHO_CACHE_UNIFIED)->instances, 1);
	tacho_cpu_info_exit(&info);
}

static void test_max_leaf(void **state)
{
	/* CPUID.0:EAX = 2: the leaf 4 and 0xB values in the dump are another leaf's data
	 * (a real CPU answers with the highest basic leaf) and must be ignored */
	static const struct leaf l[] = {
		INTEL(2),
		{ ALL, 1, 0, 0x000006f6, 0, 0, 0 },
		{ ALL, 2, 0, 0x05b0b101, 0x005657f0, 0, 0x2cb43049 },   /* Core 2: 0x49 L2 4M */
		{ ALL, 4, 0, 0x1c004121, 0x01c0003f, 0x0000003f, 0 },
		{ ALL, 0xb, 0, 1, 2, 0x100, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	const struct tacho_cpu_core_type *ct;
	(void)state;

	DECODE(l, 1, &info);
	ct = &info.core_types[0];
	assert_int_equal(info.max_leaf, 2);
	for (unsigned i = 0; i < ct->ncaches; i++)
		assert_int_equal(ct->caches[i].source, TACHO_SRC_LEAF_2);
	assert_non_null(cache(ct, 2, TACHO_CACHE_UNIFIED));
	assert_true(need(ct, 2, TACHO_CACHE_UNIFIED)->size == 4u << 20);
	assert_int_equal(info.topo.source, TACHO_SRC_LEGACY);
	tacho_cpu_info_exit(&info);
}

/* --- AMD --- */

static void test_amd_legacy(void **state)
{
	/* K10-like: 0x8000_0005 L1d 64K 2-way 64B, L1i 64K 2-way; 0x8000_0006 L2 512K
	 * code 0x8 = 16 ways, L3 6M (12 x 512K) code 0xA = 32 ways... then variants */
	static const struct {
		unsigned code, ways;
		bool full, present;
	} codes[] = {
		{ 0x0, 0, false, false }, { 0x1, 1, false, true }, { 0x2, 2, false, true },
		{ 0x4, 4, false, true }, { 0x5, 6, false, true }, { 0x6, 8, false, true },
		{ 0x8, 16, false, true }, { 0xa, 32, false, true }, { 0xb, 48, false, true },
		{ 0xc, 64, false, true }, { 0xd, 96, false, true }, { 0xe, 128, false, true },
		{ 0xf, 0, true, true },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		struct leaf l[] = {
			AMD(1),
			{ ALL, 1, 0, 0x00100f42, 0x00040800, 0, 0x10000000 },
			{ ALL, 0x80000000, 0, 0x80000008, 0, 0, 0 },
			{ ALL, 0x80000005, 0, 0, 0, 0x40020140, 0x40020140 },
			{ ALL, 0x80000006, 0, 0, 0, 0x02000040 | codes[i].code << 12,
			  0x00300040 | codes[i].code << 12 },
			{ ALL, 0x80000008, 0, 0x3030, 0, 0x3003, 0 },
		};
		struct tacho_cpu_info info = { .sz = sizeof(info) };
		const struct tacho_cpu_core_type *ct;
		const struct tacho_cpu_cache *c;

		DECODE(l, 1, &info);
		ct = &info.core_types[0];
		c = need(ct, 1, TACHO_CACHE_DATA);
		assert_true(c->size == 64 * 1024);
		assert_int_equal(c->ways, 2);
		assert_int_equal(c->source, TACHO_SRC_AMD_80000005);
		assert_int_equal(c->instances, 4);              /* NC + 1 = 4 cores */
		c = cache(ct, 2, TACHO_CACHE_UNIFIED);
		if (!codes[i].present) {
			if (c)
				fail_msg("code %#x: an L2 that says \"disabled\"", codes[i].code);
			tacho_cpu_info_exit(&info);
			continue;
		}
		if (!c || c->size != 512 * 1024 || c->ways != codes[i].ways ||
		    c->fully_assoc != codes[i].full || c->line_size != 64)
			fail_msg("code %#x: L2 %p ways %u full %d", codes[i].code, (void *)c,
				 c ? c->ways : 0, c ? c->fully_assoc : 0);
		c = cache(ct, 3, TACHO_CACHE_UNIFIED);
		if (!c || c->size != 6u << 20 || c->ways != codes[i].ways || c->instances != 1)
			fail_msg("code %#x: L3 %p size %llu ways %u instances %d", codes[i].code,
				 (void *)c, c ? (unsigned long long)c->size : 0ull, c ? c->ways : 0,
				 c ? c->instances : 0);
		assert_int_equal(info.topo.cores_per_package, 4);
		tacho_cpu_info_exit(&info);
	}
}

/* 0x8000_001D is reserved without TopologyExtensions (0x8000_0001 ECX[22]), yet a
 * hypervisor fills it with the flag clear and firmware clears the flag of family 15h
 * parts that answer it; 0x8000_0006's associativity code 9 sends the reader there. A
 * list of defined caches is followed (and said so), anything else is not. The leaves
 * are those of the Zen 5 guest under bhyve (shared/data/machines/amd-zen5-bhyve); each
 * case changes one. */
static void test_amd_001d_unflagged(void **state)
{
	enum { FILLED, EMPTY, RESERVED_TYPE, LEVEL_0 };
	static const struct {
		int line;
		uint32_t max_ext;   /* CPUID.8000_0000h:EAX */
		bool topoext;
		uint32_t l3_edx;    /* 0x8000_0006 EDX: 32 MiB, code 9 or 8 (16 ways) */
		int list;
		enum tacho_cpu_source src;
		unsigned l2_ways, l3_ways;
		const char *note;   /* a note that must be there; NULL: none about 0x8000001d */
	} cases[] = {
		{ __LINE__, 0x80000021, false, 0x01009140, FILLED, TACHO_SRC_AMD_8000001D, 16, 16,
		  "0x80000006 gives the L3's associativity as code 9, \"see 0x8000001d\", and "
		  "0x8000001d lists 4 caches although TopologyExtensions (0x80000001 ECX[22]) "
		  "is clear: the caches come from 0x8000001d" },
		{ __LINE__, 0x80000021, false, 0x01008140, FILLED, TACHO_SRC_AMD_8000001D, 16, 16,
		  "0x8000001d lists 4 caches although TopologyExtensions (0x80000001 ECX[22]) is "
		  "clear: the caches come from 0x8000001d (firmware may clear the flag, and "
		  "Linux sets it again on family 15h; a hypervisor may never set it)" },
		{ __LINE__, 0x80000021, true, 0x01009140, FILLED, TACHO_SRC_AMD_8000001D, 16, 16,
		  NULL },
		{ __LINE__, 0x80000021, false, 0x01009140, EMPTY, TACHO_SRC_AMD_80000006, 8, 0,
		  "0x80000006 gives the L3's associativity as code 9, \"see 0x8000001d\", but "
		  "0x8000001d lists no caches: the ways are unknown" },
		/* beyond the maximum extended leaf the values are another leaf's */
		{ __LINE__, 0x8000001c, false, 0x01009140, FILLED, TACHO_SRC_AMD_80000006, 8, 0,
		  "but 0x8000001d lists no caches" },
		{ __LINE__, 0x80000021, false, 0x01009140, RESERVED_TYPE, TACHO_SRC_AMD_80000006,
		  8, 0, "but 0x8000001d lists no caches" },
		{ __LINE__, 0x80000021, false, 0x01009140, LEVEL_0, TACHO_SRC_AMD_80000006, 8, 0,
		  "but 0x8000001d lists no caches" },
		{ __LINE__, 0x80000021, false, 0x01008140, EMPTY, TACHO_SRC_AMD_80000006, 8, 16,
		  NULL },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct leaf l[] = {
			AMD(0xd), { ALL, 1, 0, 0x00b00f21, 0x00020800, 0, 0x178bfbff },
			{ ALL, 0x80000000, 0, cases[i].max_ext, 0, 0, 0 },
			{ ALL, 0x80000001, 0, 0, 0, cases[i].topoext ? 1u << 22 : 0, 0 },
			{ ALL, 0x80000005, 0, 0, 0, 0x300c0140, 0x20080140 },
			{ ALL, 0x80000006, 0, 0, 0, 0x04006140, cases[i].l3_edx },
			{ ALL, 0x80000008, 0, 0x3030, 0, 0x1001, 0 },
			{ ALL, 0x8000001d, 0, 0x00004121, 0x02c0003f, 0x0000003f, 0 },
			{ ALL, 0x8000001d, 1, 0x00004122, 0x01c0003f, 0x0000003f, 0 },
			{ ALL, 0x8000001d, 2, 0x00004143, 0x03c0003f, 0x000003ff, 2 },
			{ ALL, 0x8000001d, 3, 0x003f4163, 0x03c0003f, 0x00007fff, 1 },
			{ ALL, 0x8000001d, 4, 0, 0, 0, 0 },
		};
		struct tacho_cpu_info info = { .sz = sizeof(info) };
		const struct tacho_cpu_core_type *ct;
		const struct tacho_cpu_cache *l2, *l3;
		bool about_001d = false;

		if (cases[i].list == EMPTY)
			for (size_t k = 0; k < ARRAY_SIZE(l); k++)
				if (l[k].leaf == 0x8000001d)
					l[k].a = l[k].b = l[k].c = l[k].d = 0;
		if (cases[i].list == RESERVED_TYPE)
			l[8].a = (l[8].a & ~0x1fu) | 5;
		if (cases[i].list == LEVEL_0)
			l[9].a &= ~0xe0u;
		DECODE(l, 1, &info);
		ct = &info.core_types[0];
		l2 = need(ct, 2, TACHO_CACHE_UNIFIED);
		l3 = need(ct, 3, TACHO_CACHE_UNIFIED);
		for (unsigned k = 0; k < info.nnotes; k++)
			about_001d |= strstr(info.notes[k], "0x8000001d lists") != NULL;
		if (l2->source != cases[i].src || l3->source != cases[i].src ||
		    l2->ways != cases[i].l2_ways || l3->ways != cases[i].l3_ways ||
		    l3->size != 32u << 20 || (cases[i].note && !has_note(&info, cases[i].note)) ||
		    (!cases[i].note && about_001d)) {
			print_notes(&info);
			fail_msg("line %d: L2 from %s, %u ways; L3 from %s, %u ways", cases[i].line,
				 tacho_cpu_source_name(l2->source), l2->ways,
				 tacho_cpu_source_name(l3->source), l3->ways);
		}
		/* followed, 0x8000_0006's other view of the L2 stays in a note */
		if (cases[i].src == TACHO_SRC_AMD_8000001D &&
		    !has_note(&info, "0x80000006 gives the L2 8 ways, 0x8000001d 16: tacho "
				     "follows 0x8000001d"))
			fail_msg("line %d: no note of the L2's 8 ways in 0x80000006", cases[i].line);
		tacho_cpu_info_exit(&info);
	}
}

/* 0x8000_0008 ECX of zero (NC 0, ApicIdSize 0: one thread per package) beside leaf 1's
 * 254 logical processors (HTT) is the register a hypervisor did not fill: leaf 1's width
 * places the CPUs. Without HTT, or with NC filled, 0x8000_0008 rules as before. */
static void test_amd_empty_80000008(void **state)
{
	static const struct {
		int line;
		uint32_t edx1, ecx8;
		unsigned packages, cores, logical;
		enum tacho_cpu_source src;
		bool note;
	} cases[] = {
		{ __LINE__, 0x178bfbff, 0x0000, 1, 2, 2, TACHO_SRC_LEGACY, true },
		/* no HTT: leaf 1's count means nothing, every CPU is a package of one */
		{ __LINE__, 0x078bfbff, 0x0000, 2, 1, 1, TACHO_SRC_AMD_80000008, false },
		/* NC filled: 0x8000_0008 says a package of 2 threads (shift 1): 16 and 86
		 * are two packages */
		{ __LINE__, 0x178bfbff, 0x0001, 2, 1, 1, TACHO_SRC_AMD_80000008, false },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		/* the APIC IDs of the bhyve dump: 16 and 86 */
		struct leaf l[] = {
			AMD(0xd),
			{ 0, 1, 0, 0x00b00f21, 0x10fe0800, 0, cases[i].edx1 },
			{ 1, 1, 0, 0x00b00f21, 0x56fe0800, 0, cases[i].edx1 },
			{ ALL, 0x80000000, 0, 0x80000021, 0, 0, 0 },
			{ ALL, 0x80000008, 0, 0x3030, 0, cases[i].ecx8, 0 },
		};
		struct tacho_cpu_info info = { .sz = sizeof(info) };
		const struct tacho_cpu_topology *t = &info.topo;
		bool noted;

		DECODE(l, 2, &info);
		noted = has_note(&info, "0x80000008 ECX says a package holds 1 thread (NC and "
					"ApicIdSize 0) while leaf 1 counts 254 logical processors "
					"per package (HTT set): tacho takes leaf 1's count");
		if (t->packages != cases[i].packages || t->cores_per_package != cases[i].cores ||
		    t->logical_per_package != cases[i].logical || t->source != cases[i].src ||
		    !t->complete || t->threads_per_core != 1 || noted != cases[i].note) {
			print_notes(&info);
			fail_msg("line %d: %u packages of %u cores, %u threads (%s)%s", cases[i].line,
				 t->packages, t->cores_per_package, t->logical_per_package,
				 tacho_cpu_source_name(t->source), noted ? ", noted" : "");
		}
		tacho_cpu_info_exit(&info);
	}
}

/* The whole dump of a Zen 5 guest under bhyve (tests/data/cpuid/bhyve-zen5-2cpu.cpuid-r,
 * `cpuid -r` on the machine of shared/data/machines/amd-zen5-bhyve): what the kernel
 * there says (lscpu.txt, sysfs-cache.txt), every value exact. */
static void test_bhyve_zen5_dump(void **state)
{
	static const struct {
		unsigned level;
		enum tacho_cache_type type;
		uint64_t size;
		unsigned ways, line, sets, sharing;
		int instances;
	} want[] = {
		{ 1, TACHO_CACHE_DATA, 48u << 10, 12, 64, 64, 2, 2 },
		{ 1, TACHO_CACHE_INSTRUCTION, 32u << 10, 8, 64, 64, 2, 2 },
		{ 2, TACHO_CACHE_UNIFIED, 1u << 20, 16, 64, 1024, 2, 2 },
		{ 3, TACHO_CACHE_UNIFIED, 32u << 20, 16, 64, 32768, 254, 1 },
	};
	static const char *const notes[] = {
		"0x80000008 ECX says a package holds 1 thread (NC and ApicIdSize 0) while leaf 1 "
		"counts 254 logical processors per package (HTT set): tacho takes leaf 1's count",
		"the dump holds 2 logical CPUs per package; leaves 1 and 4 says 254 (the count as "
		"shipped): using the CPUs present",
		"0x80000006 gives the L3's associativity as code 9, \"see 0x8000001d\", and "
		"0x8000001d lists 4 caches although TopologyExtensions (0x80000001 ECX[22]) is "
		"clear: the caches come from 0x8000001d",
		"0x80000006 gives the L2 8 ways, 0x8000001d 16: tacho follows 0x8000001d",
	};
	struct tacho_cpuid_dump *d;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	const struct tacho_cpu_core_type *ct;
	(void)state;

	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid/bhyve-zen5-2cpu.cpuid-r"),
					       &d, &diag), 0);
	assert_int_equal(tacho_cpu_decode(d, &info), 0);
	tacho_cpuid_dump_free(d);
	assert_string_equal(info.brand, "Oxide Virtual Turin-like Processor");
	assert_int_equal(info.hypervisor, TACHO_HV_BHYVE);
	assert_int_equal(info.family, 0x1a);
	assert_int_equal(info.model, 2);
	assert_false(tacho_cpu_has(&info, "topoext"));
	/* lscpu: Socket(s) 1, Core(s) per socket 2, Thread(s) per core 1 */
	assert_int_equal(info.topo.packages, 1);
	assert_int_equal(info.topo.cores_per_package, 2);
	assert_int_equal(info.topo.logical_per_package, 2);
	assert_int_equal(info.topo.threads_per_core, 1);
	assert_int_equal(info.topo.dies_per_package, 1);
	assert_true(info.topo.complete);
	assert_int_equal(info.topo.source, TACHO_SRC_LEGACY);
	assert_int_equal(info.topo.core_shift, 8);
	assert_int_equal(info.topo.smt_shift, 0);
	assert_int_equal(info.ncpus, 2);
	assert_int_equal(info.cpus[0].apic_id, 16);
	assert_int_equal(info.cpus[1].apic_id, 86);
	assert_int_equal(info.cpus[0].package, 0);
	assert_int_equal(info.cpus[1].package, 0);
	assert_int_equal(info.cpus[0].core, 16);
	assert_int_equal(info.cpus[1].core, 86);
	/* sysfs-cache.txt: index0-3, and lscpu's instances */
	assert_int_equal(info.ncore_types, 1);
	ct = &info.core_types[0];
	assert_int_equal(ct->cores, 2);
	assert_int_equal(ct->threads, 2);
	assert_int_equal(ct->ncaches, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const struct tacho_cpu_cache *c = need(ct, want[i].level, want[i].type);
		if (c->size != want[i].size || c->ways != want[i].ways ||
		    c->line_size != want[i].line || c->sets != want[i].sets ||
		    c->sharing != want[i].sharing || c->instances != want[i].instances ||
		    c->fully_assoc || c->partitions != 1 || c->source != TACHO_SRC_AMD_8000001D)
			fail_msg("L%u %s: %llu bytes, %u ways, %u-byte lines, %u sets, shared by %u, "
				 "%d instances, from %s", c->level, tacho_cache_type_name(c->type),
				 (unsigned long long)c->size, c->ways, c->line_size, c->sets,
				 c->sharing, c->instances, tacho_cpu_source_name(c->source));
	}
	assert_int_equal(need(ct, 2, TACHO_CACHE_UNIFIED)->inclusive, 1);
	assert_int_equal(need(ct, 3, TACHO_CACHE_UNIFIED)->inclusive, 0);
	assert_int_equal(info.ncache_groups, 0);
	for (size_t i = 0; i < ARRAY_SIZE(notes); i++)
		if (!has_note(&info, notes[i])) {
			print_notes(&info);
			fail_msg("no note \"%s\"", notes[i]);
		}
	tacho_cpu_info_exit(&info);
}

static void test_amd_pmu(void **state)
{
	static const struct leaf old[] = {          /* family 15h: PerfCtrExtCore */
		AMD(0xd), { ALL, 1, 0, 0x00600f12, 0, 0, 0 },
		{ ALL, 0x80000000, 0, 0x8000001e, 0, 0, 0 },
		{ ALL, 0x80000001, 0, 0, 0, 1u << 23, 0 },
	};
	static const struct leaf k8[] = {
		AMD(1), { ALL, 1, 0, 0x00020f32, 0, 0, 0 },
		{ ALL, 0x80000000, 0, 0x80000018, 0, 0, 0 },
		{ ALL, 0x80000001, 0, 0, 0, 0, 0 },
	};
	static const struct leaf zen4[] = {          /* PerfMonV2: 6 core, 16 DF, 4 UMC */
		AMD(0x10), { ALL, 1, 0, 0x00a60f12, 0, 0, 0 },
		{ ALL, 0x80000000, 0, 0x80000028, 0, 0, 0 },
		{ ALL, 0x80000001, 0, 0, 0, 1u << 23, 0 },
		{ ALL, 0x80000022, 0, 0x7, 0x00044106 | (16u << 10), 0, 0 },
		/* a leaf 0xA must not be read on AMD (reserved there) */
		{ ALL, 0xa, 0, 0x07300402, 0, 0, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	(void)state;

	DECODE(old, 1, &info);
	assert_int_equal(info.pmu.gp_counters, 6);
	assert_int_equal(info.pmu.gp_width, 48);
	assert_false(info.pmu.amd_perfmon_v2);
	tacho_cpu_info_exit(&info);
	DECODE(k8, 1, &info);
	assert_int_equal(info.pmu.gp_counters, 4);
	tacho_cpu_info_exit(&info);
	DECODE(zen4, 1, &info);
	assert_true(info.pmu.amd_perfmon_v2);
	assert_true(info.pmu.amd_lbr_v2);
	assert_int_equal(info.pmu.gp_counters, 6);
	assert_int_equal(info.pmu.amd_lbr_stack, 16);
	assert_int_equal(info.pmu.amd_nb_counters, 16);
	assert_int_equal(info.pmu.amd_umc_counters, 4);
	assert_int_equal(info.pmu.version, 0);
	tacho_cpu_info_exit(&info);
}

/* --- leaf 0xA --- */

static void test_leaf_a(void **state)
{
	/* version 4, 4 counters x 48 bits, 7 architectural events of which EBX marks
	 * event 2 (reference cycles) and event 5 (LLC misses) as NOT available; 3 fixed
	 * counters x 48 bits, AnyThread deprecated */
	static const struct leaf v4[] = {
		INTEL(0xa), { ALL, 1, 0, 0x000906ea, 0, 0, 0 },
		{ ALL, 0xa, 0, 0x07300404, 0x00000024, 0, 0x00008603 },
	};
	/* version 5: ECX bitmap adds fixed counter 5 to EDX's 3; a VM that reports
	 * nothing: version 0 */
	static const struct leaf v5[] = {
		INTEL(0xa), { ALL, 1, 0, 0x000906ea, 0, 0, 0 },
		{ ALL, 0xa, 0, 0x08300805, 0x00000000, 0x00000027, 0x00008603 },
	};
	static const struct leaf v0[] = {
		INTEL(0xa), { ALL, 1, 0, 0x000906ea, 0, 0, 0 },
		{ ALL, 0xa, 0, 0, 0, 0, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	(void)state;

	DECODE(v4, 1, &info);
	assert_int_equal(info.pmu.version, 4);
	assert_int_equal(info.pmu.gp_counters, 4);
	assert_int_equal(info.pmu.gp_width, 48);
	assert_int_equal(info.pmu.arch_events_len, 7);
	assert_int_equal(info.pmu.arch_events, 0x5b);   /* 0b1011011: events 2 and 5 absent */
	assert_int_equal(info.pmu.fixed_counters, 3);
	assert_int_equal(info.pmu.fixed_width, 48);
	assert_int_equal(info.pmu.fixed_mask, 0x7);
	assert_true(info.pmu.any_thread_deprecated);
	tacho_cpu_info_exit(&info);

	DECODE(v5, 1, &info);
	assert_int_equal(info.pmu.version, 5);
	assert_int_equal(info.pmu.gp_counters, 8);
	assert_int_equal(info.pmu.arch_events, 0xff);
	assert_int_equal(info.pmu.fixed_mask, 0x27);
	tacho_cpu_info_exit(&info);

	DECODE(v0, 1, &info);
	assert_int_equal(info.pmu.version, 0);
	assert_int_equal(info.pmu.gp_counters, 0);
	assert_int_equal(info.pmu.arch_events, 0);
	tacho_cpu_info_exit(&info);
}

/* --- the TSC --- */

static const struct {
	const char *what;
	uint32_t sig, max;
	uint32_t a15, b15, c15, a16;
	uint64_t hz;
	enum tacho_tsc_source src;
	uint64_t crystal;
} tscs[] = {
	{ "crystal in ECX", 0x000906ea, 0x16, 2, 200, 24000000, 2400, 2400000000ull,
	  TACHO_TSC_FREQ_CPUID_15, 24000000 },
	{ "Skylake-SP, crystal from the SDM table", 0x00050654, 0x16, 2, 168, 0, 2100,
	  2100000000ull, TACHO_TSC_FREQ_CPUID_15_TABLE, 25000000 },
	{ "Goldmont, 19.2 MHz", 0x000506c9, 0x15, 1, 83, 0, 0, 1593600000ull,
	  TACHO_TSC_FREQ_CPUID_15_TABLE, 19200000 },
	{ "unknown model, crystal from leaf 0x16", 0x000a0671, 0x16, 2, 300, 0, 3600,
	  3600000000ull, TACHO_TSC_FREQ_CPUID_15_16, 24000000 },
	{ "leaf 0x16 only", 0x000306c3, 0x16, 0, 0, 0, 3400, 3400000000ull,
	  TACHO_TSC_FREQ_CPUID_16, 0 },
	{ "nothing", 0x000306c3, 0xd, 0, 0, 0, 0, 0, TACHO_TSC_FREQ_UNKNOWN, 0 },
};

static void test_tsc(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(tscs); i++) {
		struct leaf l[] = {
			INTEL(tscs[i].max),
			{ ALL, 1, 0, tscs[i].sig, 0, 0, 1u << 4 },
			{ ALL, 0x15, 0, tscs[i].a15, tscs[i].b15, tscs[i].c15, 0 },
			{ ALL, 0x16, 0, tscs[i].a16, tscs[i].a16 + 1000, 100, 0 },
			{ ALL, 0x80000000, 0, 0x80000007, 0, 0, 0 },
			{ ALL, 0x80000007, 0, 0, 0, 0, 1u << 8 },
		};
		struct tacho_cpu_info info = { .sz = sizeof(info) };

		DECODE(l, 1, &info);
		if (info.tsc.hz != tscs[i].hz || info.tsc.source != tscs[i].src ||
		    info.tsc.crystal_hz != tscs[i].crystal || !info.tsc.present ||
		    !info.tsc.invariant) {
			print_notes(&info);
			fail_msg("%s: got %llu Hz from %s (crystal %llu)", tscs[i].what,
				 (unsigned long long)info.tsc.hz,
				 tacho_tsc_source_name(info.tsc.source),
				 (unsigned long long)info.tsc.crystal_hz);
		}
		if (tscs[i].src == TACHO_TSC_FREQ_UNKNOWN)
			assert_true(has_note(&info, "does not give the TSC frequency"));
		tacho_cpu_info_exit(&info);
	}
}

/* --- TLBs --- */

static void test_tlbs(void **state)
{
	/* leaf 0x18: subleaf 0 (max subleaf 2) an ITLB 4K, 8-way x 32 sets; subleaf 1 a
	 * null entry; subleaf 2 a fully associative store-only TLB for all page sizes */
	static const struct leaf intel[] = {
		INTEL(0x18), { ALL, 1, 0, 0x000906ea, 0, 0, 0 },
		{ ALL, 2, 0, 0x00feff01, 0, 0, 0 },
		{ ALL, 0x18, 0, 2, 0x00080001, 32, 0x00000022 },
		{ ALL, 0x18, 1, 0, 0, 0, 0 },
		{ ALL, 0x18, 2, 0, 0x0010000f, 1, 0x00004125 },
	};
	/* AMD: L1 2M/4M DTLB 64 entries fully associative (0xFF), L2 4K DTLB 2048
	 * entries with code 6 (8 ways), 1 GiB L1 DTLB 64 entries fully (code 0xF) */
	static const struct leaf amd[] = {
		AMD(1), { ALL, 1, 0, 0x00a20f10, 0, 0, 0 },
		{ ALL, 0x80000000, 0, 0x80000019, 0, 0, 0 },
		{ ALL, 0x80000005, 0, 0xff400000, 0, 0, 0 },
		{ ALL, 0x80000006, 0, 0, 0x68000000, 0, 0 },
		{ ALL, 0x80000019, 0, 0xf0400000, 0, 0, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	const struct tacho_cpu_core_type *ct;
	(void)state;

	DECODE(intel, 1, &info);
	ct = &info.core_types[0];
	assert_int_equal(ct->ntlbs, 2);
	assert_int_equal(ct->tlbs[0].type, TACHO_TLB_INSTRUCTION);
	assert_int_equal(ct->tlbs[0].level, 1);
	assert_int_equal(ct->tlbs[0].page_sizes, TACHO_PAGE_4K);
	assert_int_equal(ct->tlbs[0].ways, 8);
	assert_int_equal(ct->tlbs[0].entries, 256);
	assert_int_equal(ct->tlbs[0].source, TACHO_SRC_LEAF_18);
	assert_int_equal(ct->tlbs[1].type, TACHO_TLB_STORE);
	assert_true(ct->tlbs[1].fully_assoc);
	assert_int_equal(ct->tlbs[1].entries, 16);
	assert_int_equal(ct->tlbs[1].sharing, 2);
	assert_int_equal(ct->tlbs[1].page_sizes, 0xf);
	tacho_cpu_info_exit(&info);

	DECODE(amd, 1, &info);
	ct = &info.core_types[0];
	assert_int_equal(ct->ntlbs, 3);
	assert_int_equal(ct->tlbs[0].type, TACHO_TLB_DATA);
	assert_int_equal(ct->tlbs[0].page_sizes, TACHO_PAGE_2M | TACHO_PAGE_4M);
	assert_int_equal(ct->tlbs[0].entries, 64);
	assert_true(ct->tlbs[0].fully_assoc);
	assert_int_equal(ct->tlbs[1].level, 2);
	assert_int_equal(ct->tlbs[1].entries, 2048);
	assert_int_equal(ct->tlbs[1].ways, 8);
	assert_int_equal(ct->tlbs[1].page_sizes, TACHO_PAGE_4K);
	assert_int_equal(ct->tlbs[2].page_sizes, TACHO_PAGE_1G);
	assert_true(ct->tlbs[2].fully_assoc);
	assert_int_equal(ct->tlbs[2].source, TACHO_SRC_AMD_80000019);
	tacho_cpu_info_exit(&info);
}

/* Intel's 0x8000_0006 ECX code 7 is "see leaf 4", AMD's 7 is reserved and 5 is 6 ways
 * for AMD but reserved for Intel: both unknown (0 ways), the size still stands. */
static void test_intel_80000006(void **state)
{
	static const struct leaf l[] = {
		INTEL(2), { ALL, 1, 0, 0x000006f6, 0, 0, 0 },
		{ ALL, 2, 0, 0x00002c01, 0, 0, 0 },                  /* L1d only */
		{ ALL, 0x80000000, 0, 0x80000006, 0, 0, 0 },
		{ ALL, 0x80000006, 0, 0, 0, 0x10005040, 0 },          /* 4 MiB, code 5 */
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	const struct tacho_cpu_cache *c;
	(void)state;

	DECODE(l, 1, &info);
	c = need(&info.core_types[0], 2, TACHO_CACHE_UNIFIED);
	assert_true(c->size == 4u << 20);
	assert_int_equal(c->ways, 0);
	assert_int_equal(c->line_size, 64);
	assert_int_equal(c->source, TACHO_SRC_AMD_80000006);
	tacho_cpu_info_exit(&info);
}

/* --- hybrid --- */

static void test_hybrid(void **state)
{
	/* 1 P-core with 2 threads (APIC 0, 1), 2 E-cores with L3 (APIC 8, 10) and 1
	 * low-power E-core without L3 (APIC 64); leaf 0x1F: SMT shift 1, package shift 7.
	 * Later records of a (cpu, leaf, subleaf) replace the ALL ones. */
	static const struct leaf l[] = {
		INTEL(0x1f),
		{ ALL, 1, 0, 0x000a06a4, 0, 0, 0 },
		{ ALL, 7, 0, 0, 0, 0, 1u << 15 },                          /* hybrid */
		{ ALL, 4, 0, 0x00000121, 0x01c0003f, 0x3f, 0 },            /* L1d 32K, 1 thread */
		{ 0, 4, 0, 0x00004121, 0x01c0003f, 0x3f, 0 },              /* P: 2 threads */
		{ 1, 4, 0, 0x00004121, 0x01c0003f, 0x3f, 0 },
		{ ALL, 4, 1, 0, 0, 0, 0 },                                 /* LP: end */
		{ 0, 4, 1, 0x00000163, 0x02c0003f, 0x7ff, 0 },             /* P: L3 */
		{ 1, 4, 1, 0x00000163, 0x02c0003f, 0x7ff, 0 },
		{ 2, 4, 1, 0x00000163, 0x02c0003f, 0x7ff, 0 },
		{ 3, 4, 1, 0x00000163, 0x02c0003f, 0x7ff, 0 },
		{ 0, 4, 2, 0, 0, 0, 0 }, { 1, 4, 2, 0, 0, 0, 0 }, { 2, 4, 2, 0, 0, 0, 0 },
		{ 3, 4, 2, 0, 0, 0, 0 },
		{ 0, 0x1a, 0, 0x40000001, 0, 0, 0 }, { 1, 0x1a, 0, 0x40000001, 0, 0, 0 },
		{ 2, 0x1a, 0, 0x20000002, 0, 0, 0 }, { 3, 0x1a, 0, 0x20000002, 0, 0, 0 },
		{ 4, 0x1a, 0, 0x20000002, 0, 0, 0 },
		{ 0, 0x1f, 0, 1, 2, 0x100, 0 }, { 0, 0x1f, 1, 7, 6, 0x201, 0 },
		{ 1, 0x1f, 0, 1, 2, 0x100, 1 }, { 1, 0x1f, 1, 7, 6, 0x201, 1 },
		{ 2, 0x1f, 0, 1, 1, 0x100, 8 }, { 2, 0x1f, 1, 7, 6, 0x201, 8 },
		{ 3, 0x1f, 0, 1, 1, 0x100, 10 }, { 3, 0x1f, 1, 7, 6, 0x201, 10 },
		{ 4, 0x1f, 0, 1, 1, 0x100, 64 }, { 4, 0x1f, 1, 7, 6, 0x201, 64 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	(void)state;

	DECODE(l, 5, &info);
	assert_int_equal(info.ncore_types, 3);
	assert_int_equal(info.core_types[0].kind, TACHO_CORE_PERFORMANCE);
	assert_int_equal(info.core_types[0].cores, 1);
	assert_int_equal(info.core_types[0].threads, 2);
	assert_string_equal(info.core_types[0].uarch, "Redwood Cove");
	assert_int_equal(info.core_types[1].kind, TACHO_CORE_EFFICIENCY);
	assert_int_equal(info.core_types[1].cores, 2);
	assert_int_equal(info.core_types[1].threads, 2);
	assert_string_equal(info.core_types[1].uarch, "Crestmont");
	assert_int_equal(info.core_types[2].kind, TACHO_CORE_LP_EFFICIENCY);
	assert_int_equal(info.core_types[2].cores, 1);
	assert_string_equal(tacho_core_kind_name(info.core_types[2].kind), "low-power efficiency");
	assert_null(cache(&info.core_types[2], 3, TACHO_CACHE_UNIFIED));
	assert_non_null(cache(&info.core_types[1], 3, TACHO_CACHE_UNIFIED));
	assert_int_equal(need(&info.core_types[0], 1, TACHO_CACHE_DATA)->instances, 1);
	assert_int_equal(need(&info.core_types[1], 1, TACHO_CACHE_DATA)->instances, 2);
	assert_int_equal(info.topo.cores_per_package, 4);
	assert_int_equal(info.topo.logical_per_package, 5);
	assert_int_equal(info.cpus[4].core_type, 2);
	assert_string_equal(info.uarch, "Redwood Cove + Crestmont (Meteor Lake)");
	tacho_cpu_info_exit(&info);
}

/* AMD: CoreType of 0x8000_0026 counts only with HeterogeneousCores (0x8000_0021
 * EAX[30]); a Zen 4 desktop part reports CoreType 0 (performance) and is "general". */
static void test_amd_kinds(void **state)
{
	static const struct leaf strix[] = {
		AMD(0x10), { ALL, 1, 0, 0x00b20f40, 0, 0, 0 },
		{ ALL, 0x80000000, 0, 0x80000026, 0, 0, 0 },
		{ ALL, 0x80000021, 0, 1u << 30, 0, 0, 0 },
		{ 0, 0x80000026, 0, 0, 0x00000002, 0x00000100, 0 },          /* Zen 5 */
		{ 1, 0x80000026, 0, 0, 0x10000002, 0x00000100, 0 },          /* Zen 5c */
		{ 2, 0x80000026, 0, 0, 0x10000002, 0x00000100, 0 },
		{ 0, 0xb, 0, 0, 1, 0x100, 0 }, { 0, 0xb, 1, 4, 3, 0x201, 0 },
		{ 1, 0xb, 0, 0, 1, 0x100, 8 }, { 1, 0xb, 1, 4, 3, 0x201, 8 },
		{ 2, 0xb, 0, 0, 1, 0x100, 9 }, { 2, 0xb, 1, 4, 3, 0x201, 9 },
	};
	static const struct leaf raphael[] = {
		AMD(0x10), { ALL, 1, 0, 0x00a60f12, 0, 0, 0 },
		{ ALL, 0x80000000, 0, 0x80000026, 0, 0, 0 },
		{ ALL, 0x80000021, 0, 0x00062fcf, 0, 0, 0 },
		{ ALL, 0x80000026, 0, 0, 0x00000002, 0x00000100, 0 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	(void)state;

	DECODE(strix, 3, &info);
	assert_int_equal(info.ncore_types, 2);
	assert_int_equal(info.core_types[0].kind, TACHO_CORE_PERFORMANCE);
	assert_int_equal(info.core_types[0].cores, 1);
	assert_string_equal(info.core_types[0].uarch, "Zen 5");
	assert_int_equal(info.core_types[1].kind, TACHO_CORE_EFFICIENCY);
	assert_int_equal(info.core_types[1].cores, 2);
	assert_string_equal(info.core_types[1].uarch, "Zen 5c");
	assert_true(tacho_cpu_has(&info, "amd_heterogeneous_cores"));
	tacho_cpu_info_exit(&info);

	DECODE(raphael, 1, &info);
	assert_int_equal(info.ncore_types, 1);
	assert_int_equal(info.core_types[0].kind, TACHO_CORE_GENERAL);
	assert_string_equal(info.uarch, "Zen 4");
	tacho_cpu_info_exit(&info);
}

/* --- feature names --- */

static void test_features(void **state)
{
	static const struct leaf l[] = {
		INTEL(7), { ALL, 1, 0, 0x000906ea, 0, (1u << 28) | (1u << 0), (1u << 25) },
		{ ALL, 7, 0, 0, 1u << 5, 0, 0 },
		{ ALL, 7, 1, 1u << 4, 0, 0, 0 },
		{ ALL, 0x80000000, 0, 0x80000001, 0, 0, 0 },
		{ ALL, 0x80000001, 0, 0, 0, 1u << 5, 1u << 29 },
	};
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	uint32_t leaf, sub;
	unsigned bit;
	char reg;
	int i;
	(void)state;

	DECODE(l, 1, &info);
	assert_true(tacho_cpu_has(&info, "avx"));
	assert_true(tacho_cpu_has(&info, "pni"));
	assert_true(tacho_cpu_has(&info, "sse"));
	assert_true(tacho_cpu_has(&info, "avx2"));
	assert_true(tacho_cpu_has(&info, "avx_vnni"));
	assert_true(tacho_cpu_has(&info, "abm"));
	assert_true(tacho_cpu_has(&info, "lm"));
	assert_false(tacho_cpu_has(&info, "avx512f"));
	assert_false(tacho_cpu_has(&info, "sse2"));
	assert_false(tacho_cpu_has(&info, "no-such-flag"));
	tacho_cpu_info_exit(&info);

	i = tacho_cpu_feature_index("avx512f");
	assert_true(i >= 0);
	assert_int_equal(tacho_cpu_feature_where((unsigned)i, &leaf, &sub, &reg, &bit), 0);
	assert_int_equal(leaf, 7);
	assert_int_equal(sub, 0);
	assert_int_equal(reg, 'b');
	assert_int_equal(bit, 16);
	assert_string_equal(tacho_cpu_feature_name((unsigned)i), "avx512f");
	assert_null(tacho_cpu_feature_name(tacho_cpu_feature_count()));
	assert_int_equal(tacho_cpu_feature_where(tacho_cpu_feature_count(), NULL, NULL, NULL,
						 NULL), -TACHO_EOUTOFRANGE);
	assert_int_equal(tacho_cpu_feature_index("nonsense"), -ENOENT);
	/* every name is unique, and every (leaf, subleaf, register, bit) too */
	for (unsigned a = 0; a < tacho_cpu_feature_count(); a++)
		for (unsigned b = a + 1; b < tacho_cpu_feature_count(); b++) {
			uint32_t l1, s1, l2, s2;
			unsigned b1, b2;
			char r1, r2;
			if (strcmp(tacho_cpu_feature_name(a), tacho_cpu_feature_name(b)) == 0)
				fail_msg("flag %s twice", tacho_cpu_feature_name(a));
			tacho_cpu_feature_where(a, &l1, &s1, &r1, &b1);
			tacho_cpu_feature_where(b, &l2, &s2, &r2, &b2);
			if (l1 == l2 && s1 == s2 && r1 == r2 && b1 == b2)
				fail_msg("%s and %s name the same bit", tacho_cpu_feature_name(a),
					 tacho_cpu_feature_name(b));
		}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(tacho_cache_type_name(TACHO_CACHE_DATA), "data");
	assert_string_equal(tacho_cache_type_name(TACHO_CACHE_INSTRUCTION), "instruction");
	assert_string_equal(tacho_cache_type_name(TACHO_CACHE_UNIFIED), "unified");
	assert_string_equal(tacho_cache_type_name((enum tacho_cache_type)9), "unknown");
	assert_string_equal(tacho_core_kind_name(TACHO_CORE_GENERAL), "general");
	assert_string_equal(tacho_core_kind_name(TACHO_CORE_PERFORMANCE), "performance");
	assert_string_equal(tacho_core_kind_name(TACHO_CORE_EFFICIENCY), "efficiency");
	assert_string_equal(tacho_core_kind_name((enum tacho_core_kind)77), "unknown");
	assert_string_equal(tacho_cpu_source_name(TACHO_SRC_LEAF_4), "leaf 4");
	assert_string_equal(tacho_tlb_type_name(TACHO_TLB_LOAD), "load");
	assert_string_equal(tacho_tsc_source_name(TACHO_TSC_FREQ_CPUID_15_TABLE), "cpuid-15h+sdm-table");
	assert_string_equal(tacho_cpu_vendor_name((enum tacho_cpu_vendor)-1), "unknown");
}

/* The decoder's files call down a tree: decode.o drives the leaf decoders, which may
 * call leaf2.o and info.o; nothing calls back up into decode.o, and the calls between
 * the objects have no cycle. Read from the objects' symbols (nm), as the layering
 * check reads the parts. */
static const char *const decoder_objs[] = { "decode", "cache", "tlb", "topology", "leaf2",
					    "features", "uarch", "pmu", "tsc", "info" };
#define NOBJ (sizeof(decoder_objs) / sizeof(decoder_objs[0]))

/* The global symbols of an object, defined (want_defined) or undefined, as one string
 * of "\nNAME\n" lines. */
static char *object_symbols(const char *obj, bool want_defined)
{
	char path[1024];
	char *argv[] = { (char *)"nm", (char *)(want_defined ? "--defined-only" : "-u"),
			 (char *)"-g", (char *)"-P", path, NULL };
	struct th_run r;
	struct tc_sb sb = TC_SB_INIT;

	snprintf(path, sizeof(path), "%s/lib/cpu/%s.o", th_build_dir(), obj);
	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("nm %s: exit %d: %s", path, r.status, r.err);
	tc_sb_init(&sb);
	tc_sb_addc(&sb, '\n');
	for (char *line = r.out; line && *line;) {
		char *eol = strchr(line, '\n');
		size_t n = strcspn(line, " \n");
		tc_sb_add(&sb, line, n);
		tc_sb_addc(&sb, '\n');
		line = eol ? eol + 1 : NULL;
	}
	th_run_free(&r);
	assert_false(sb.oom);
	return tc_sb_detach(&sb);
}

static bool uses(bool edge[NOBJ][NOBJ], size_t from, size_t to, bool *seen)
{
	if (from == to)
		return true;
	if (seen[from])
		return false;
	seen[from] = true;
	for (size_t k = 0; k < NOBJ; k++)
		if (edge[from][k] && uses(edge, k, to, seen))
			return true;
	return false;
}

static void test_decoder_is_a_tree(void **state)
{
	char *def[NOBJ], *und[NOBJ];
	bool edge[NOBJ][NOBJ] = { { false } };
	struct th_run r;
	char *argv[] = { (char *)"nm", (char *)"--version", NULL };
	(void)state;

	th_runv(&r, NULL, argv);
	if (r.status != 0) {
		th_run_free(&r);
		TEST_SKIP("no nm (binutils) to read the objects with");
	}
	th_run_free(&r);
	for (size_t i = 0; i < NOBJ; i++) {
		def[i] = object_symbols(decoder_objs[i], true);
		und[i] = object_symbols(decoder_objs[i], false);
	}
	/* an edge i -> k for each symbol i uses that k defines */
	for (size_t i = 0; i < NOBJ; i++) {
		for (char *s = und[i] + 1; *s; s = strchr(s, '\n') + 1) {
			size_t n = strcspn(s, "\n");
			char want[256];
			snprintf(want, sizeof(want), "\n%.*s\n", (int)n, s);
			for (size_t k = 0; k < NOBJ; k++) {
				if (k == i || !strstr(def[k], want))
					continue;
				if (k == 0)
					fail_msg("%s.o uses %.*s of decode.o: the leaf decoders must not "
						 "call back into their driver", decoder_objs[i], (int)n, s);
				edge[i][k] = true;
			}
		}
	}
	/* decode.o drives them all, and no two call each other round in a circle */
	for (size_t i = 1; i < NOBJ; i++)
		for (size_t k = 1; k < NOBJ; k++) {
			bool seen[NOBJ] = { false };
			if (edge[i][k] && uses(edge, k, i, seen))
				fail_msg("%s.o and %s.o call each other (a cycle)", decoder_objs[i],
					 decoder_objs[k]);
		}
	for (size_t k = 0; k < NOBJ; k++)
		if (strcmp(decoder_objs[k], "info") == 0)
			for (size_t j = 0; j < NOBJ; j++)
				if (edge[k][j])
					fail_msg("info.o calls %s.o: it must stay below all", decoder_objs[j]);
	assert_true(edge[0][1] && edge[0][2] && edge[0][3]);   /* decode -> cache, tlb, topology */
	for (size_t i = 0; i < NOBJ; i++) {
		free(def[i]);
		free(und[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signature),
		cmocka_unit_test(test_vendor_brand_hypervisor),
		cmocka_unit_test(test_unknown_vendor_and_empty),
		cmocka_unit_test(test_leaf2),
		cmocka_unit_test(test_leaf2_0x49),
		cmocka_unit_test(test_leaf2_ff_40_and_odd),
		cmocka_unit_test(test_leaf4_topology),
		cmocka_unit_test(test_max_leaf),
		cmocka_unit_test(test_amd_legacy),
		cmocka_unit_test(test_amd_001d_unflagged),
		cmocka_unit_test(test_amd_empty_80000008),
		cmocka_unit_test(test_bhyve_zen5_dump),
		cmocka_unit_test(test_amd_pmu),
		cmocka_unit_test(test_leaf_a),
		cmocka_unit_test(test_tsc),
		cmocka_unit_test(test_tlbs),
		cmocka_unit_test(test_intel_80000006),
		cmocka_unit_test(test_hybrid),
		cmocka_unit_test(test_amd_kinds),
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_sized),
		cmocka_unit_test(test_decoder_is_a_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
