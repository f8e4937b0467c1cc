/* test-cpu-corpus.c - tacho_cpu_decode against libcpuid's test corpus: every x86 dump in
 * shared/data/libcpuid (.test and .test.xz), cut before the first line of 80 dashes as
 * a user would have it, decoded, and compared with libcpuid's expected blocks (one per
 * core kind or per package): display family and model, stepping, cores and logical
 * CPUs, and each cache's size, ways, line size and instances. A disagreement must be
 * in the table of known differences below, with the reason tacho is right. */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "cpu/cpuid.h"
#include "util/util.h"

#define CORPUS "shared/data/libcpuid"

/* The fields compared, in the order of the expected block's lines. */
enum field {
	F_FAMILY, F_MODEL, F_STEPPING, F_CORES, F_LOGICAL,
	F_L1D, F_L1I, F_L2, F_L3, F_L4,
	F_L1D_WAYS, F_L1I_WAYS, F_L2_WAYS, F_L3_WAYS, F_L4_WAYS,
	F_L1D_LINE, F_L1I_LINE, F_L2_LINE, F_L3_LINE, F_L4_LINE,
	F_L1D_INST, F_L1I_INST, F_L2_INST, F_L3_INST, F_L4_INST,
	F_COUNT
};

static const char *const field_names[F_COUNT] = {
	"family", "model", "stepping", "cores", "logical",
	"l1d-size", "l1i-size", "l2-size", "l3-size", "l4-size",
	"l1d-ways", "l1i-ways", "l2-ways", "l3-ways", "l4-ways",
	"l1d-line", "l1i-line", "l2-line", "l3-line", "l4-line",
	"l1d-instances", "l1i-instances", "l2-instances", "l3-instances", "l4-instances",
};

/* Line numbers (0-based) in the 34-line block: extfamily 6, extmodel 7, stepping 5,
 * cores 8, logical 9, sizes 10-14, ways 15-19, lines 20-24, instances 25-29. */
static const int field_line[F_COUNT] = {
	6, 7, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
	25, 26, 27, 28, 29,
};

/* Where tacho and libcpuid disagree and tacho is right. `block` is the 0-based expected
 * block; an entry holds both values, so that a change on either side is noticed. */
struct known {
	const char *file;     /* path under the corpus */
	int block;
	enum field field;
	long tacho, libcpuid;
	const char *reason;
};

#define R_PACKAGES                                                                     \
	"the dump holds several packages and libcpuid adds up their logical CPUs; the "  \
	"APIC IDs split them into packages, and the count per package is what CPUID "    \
	"says (0x80000008 ECX[7:0], leaf 0xB, or leaves 1 and 4)"
#define R_SMT_AS_CORES                                                                 \
	"libcpuid counts hyper-threads as cores: leaf 0xB's SMT level says 2 threads per " \
	"core and the dump's APIC IDs pair up, so cores = logical CPUs / 2"
#define R_ONE_CPU_0B                                                                   \
	"libcpuid says 1 core from this one-CPU dump; leaf 0xB's core level gives the "   \
	"logical processors per package and its SMT level 1 per core (SDM, CPUID 0Bh), "  \
	"so there is one L1 per core"
#define R_MISSED_CPUS                                                                  \
	"libcpuid says 1 core and 1 logical CPU, but the dump holds more CPUs with "      \
	"distinct APIC IDs in one package, as leaf 0xB describes"
#define R_PARTIAL_8570                                                                 \
	"the dump holds 56 of the 112 logical CPUs that leaf 0x1F gives per package (2 "  \
	"per core); libcpuid counted the 56 present as 32 cores. The Xeon Platinum 8570 " \
	"has 56 cores and 112 threads, one L1 and one L2 per core (leaf 4 sharing 2)"
#define R_HTT_ONE_CORE                                                                 \
	"the Atom Z2460 is one core with Hyper-Threading: HTT (1:EDX[28]) is set, "       \
	"1:EBX[23:16] gives 2 logical processors and leaf 4 EAX[31:26] one core"
#define R_P3                                                                           \
	"a Pentium III has one logical CPU per package and no APIC ID in leaf 1: the "    \
	"dump's two CPUs are two packages of one"
#define R_NANO                                                                         \
	"HTT (1:EDX[28]) is clear, so 1:EBX[23:16] means nothing (SDM) and each CPU is " \
	"its own package; the APIC IDs (0 and 2) do not join them either. CPUID cannot " \
	"say that the two are cores of one package"
#define R_5800X3D                                                                      \
	"libcpuid says 48 logical CPUs: the dump holds 16 and leaf 0xB gives 16 per "     \
	"package, 2 per core"
#define R_E7450                                                                        \
	"the Xeon E7450 has 6 cores: leaf 0xB gives 6 logical processors per package, 1 " \
	"per core, and the dump's 24 CPUs form 4 packages of 6 by their APIC IDs"
#define R_TRACE                                                                        \
	"the Pentium 4 has a trace cache of 12 K micro-ops (leaf 2 descriptor 0x70), not " \
	"an L1 instruction cache of 12 KiB: the SDM gives its size in micro-ops, so "     \
	"tacho lists no L1i (and says so in a note)"
#define R_L3_DIES                                                                      \
	"0x8000001D describes the L3 of each of the package's two dies (6 MiB, 48-way, "  \
	"shared by 8 cores, 2 per package); libcpuid reads 0x80000006 EDX, which lumps "  \
	"both dies together as one 12 MiB \"128-way\" cache that does not exist"

static const struct known known[] = {
	{ "amd/k10/quad-core-amd-opteron-processor-2378-dual.test", 0, F_LOGICAL, 4, 8, R_PACKAGES },
	{ "amd/k10/quad-core-amd-opteron-processor-2344-he.test", 0, F_LOGICAL, 4, 8, R_PACKAGES },
	{ "amd/k10/six-core-amd-opteron-processor-2431-dual.test", 0, F_LOGICAL, 6, 12, R_PACKAGES },
	{ "amd/k10/quad-core-amd-opteron-processor-2347-he-dual.test", 0, F_LOGICAL, 4, 8, R_PACKAGES },
	{ "amd/k10/amd-opteron-processor-4176-he-dual.test", 0, F_LOGICAL, 6, 12, R_PACKAGES },
	{ "amd/zen5/amd-epyc-9965-192-core-processor-dual.test.xz", 0, F_LOGICAL, 192, 384, R_PACKAGES },
	{ "amd/zen3/amd-ryzen-7-5800x3d-8-core-processor.test", 0, F_LOGICAL, 16, 48, R_5800X3D },
	{ "amd/k8/amd-opteron-processor-240-he-dual.test", 0, F_LOGICAL, 1, 2, R_PACKAGES },
	{ "amd/k8/dual-core-amd-opteron-processor-2210-he-quad.test", 0, F_LOGICAL, 2, 4, R_PACKAGES },
	{ "amd/k8/dual-core-amd-opteron-processor-8220-se-octo.test", 0, F_LOGICAL, 2, 16, R_PACKAGES },
	{ "amd/bulldozer/amd-opteron-processor-6376-quad.test.xz", 0, F_LOGICAL, 16, 64, R_PACKAGES },
	{ "amd/bulldozer/amd-opteron-processor-6274-dual.test", 0, F_LOGICAL, 16, 32, R_PACKAGES },
	{ "amd/bulldozer/amd-opteron-processor-6274-dual.test", 0, F_L3, 6144, 12288, R_L3_DIES },
	{ "amd/bulldozer/amd-opteron-processor-6274-dual.test", 0, F_L3_WAYS, 48, 128, R_L3_DIES },
	{ "amd/bulldozer/amd-opteron-processor-6344-dual.test", 0, F_LOGICAL, 12, 24, R_PACKAGES },
	{ "amd/bulldozer/amd-opteron-processor-6238-dual.test", 0, F_LOGICAL, 12, 24, R_PACKAGES },
	{ "intel/x86-atom/silvermont/genuine-intel-cpu-4000.test", 0, F_CORES, 4, 1, R_ONE_CPU_0B },
	{ "intel/x86-atom/silvermont/genuine-intel-cpu-4000.test", 0, F_LOGICAL, 4, 1, R_ONE_CPU_0B },
	{ "intel/x86-atom/silvermont/genuine-intel-cpu-4000.test", 0, F_L1D_INST, 4, 1, R_ONE_CPU_0B },
	{ "intel/x86-atom/silvermont/genuine-intel-cpu-4000.test", 0, F_L1I_INST, 4, 1, R_ONE_CPU_0B },
	{ "intel/x86-atom/airmont/spreadtrum-sc9853i-ia.test", 0, F_CORES, 8, 1, R_ONE_CPU_0B },
	{ "intel/x86-atom/airmont/spreadtrum-sc9853i-ia.test", 0, F_LOGICAL, 8, 1, R_ONE_CPU_0B },
	{ "intel/x86-atom/airmont/spreadtrum-sc9853i-ia.test", 0, F_L1D_INST, 8, 1, R_ONE_CPU_0B },
	{ "intel/x86-atom/airmont/spreadtrum-sc9853i-ia.test", 0, F_L1I_INST, 8, 1, R_ONE_CPU_0B },
	{ "intel/x86-atom/saltwell/intel-atom-cpu-z2460.test", 0, F_LOGICAL, 2, 1, R_HTT_ONE_CORE },
	{ "intel/ia-32/p6/intel-pentium-iii-cpu-family-1266mhz.test", 0, F_LOGICAL, 1, 2, R_P3 },
	{ "intel/ia-32/p6/intel-pentium-iii-katmai-dual.test", 0, F_LOGICAL, 1, 2, R_P3 },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-2.80ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-2.80ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-celeron-cpu-1.80ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-celeron-cpu-1.80ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-1.60ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-1.60ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-2.66ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-2.66ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-1700mhz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-1700mhz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-2.40ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-pentium-4-cpu-2.40ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-xeon-cpu-2.40ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-xeon-cpu-2.40ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-celeron-cpu-2.00ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-celeron-cpu-2.00ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/mobile-intel-pentium-4-m-cpu.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/mobile-intel-pentium-4-m-cpu.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-celeron-cpu-1.70ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-celeron-cpu-1.70ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/ia-32/netburst/intel-celeron-cpu-2.50ghz.test", 0, F_L1I, -1, 12, R_TRACE },
	{ "intel/ia-32/netburst/intel-celeron-cpu-2.50ghz.test", 0, F_L1I_WAYS, -1, 8, R_TRACE },
	{ "intel/x86-64/haswell/intel-xeon-cpu-e3-1245-v3.test.xz", 0, F_CORES, 4, 8, R_SMT_AS_CORES },
	{ "intel/x86-64/haswell/intel-core-i7-4500u-cpu.test", 0, F_CORES, 2, 4, R_SMT_AS_CORES },
	{ "intel/x86-64/raptor-cove/intel-xeon-platinum-8570.test.xz", 0, F_CORES, 56, 32, R_PARTIAL_8570 },
	{ "intel/x86-64/raptor-cove/intel-xeon-platinum-8570.test.xz", 0, F_LOGICAL, 112, 56, R_PARTIAL_8570 },
	{ "intel/x86-64/raptor-cove/intel-xeon-platinum-8570.test.xz", 0, F_L1D_INST, 56, 32, R_PARTIAL_8570 },
	{ "intel/x86-64/raptor-cove/intel-xeon-platinum-8570.test.xz", 0, F_L1I_INST, 56, 32, R_PARTIAL_8570 },
	{ "intel/x86-64/raptor-cove/intel-xeon-platinum-8570.test.xz", 0, F_L2_INST, 56, 32, R_PARTIAL_8570 },
	{ "intel/x86-64/nehalem/intel-core-i5-cpu-650.test", 0, F_CORES, 2, 4, R_SMT_AS_CORES },
	{ "intel/x86-64/nehalem/intel-core-i7-cpu-q-720.test", 0, F_CORES, 4, 8, R_SMT_AS_CORES },
	{ "intel/x86-64/nehalem/intel-core-i7-cpu-x-990.test", 0, F_CORES, 6, 12, R_SMT_AS_CORES },
	{ "intel/x86-64/nehalem/intel-xeon-cpu-x5667.test", 0, F_CORES, 4, 16, R_SMT_AS_CORES },
	{ "intel/x86-64/nehalem/intel-xeon-cpu-x5667.test", 0, F_LOGICAL, 8, 16, R_PACKAGES },
	{ "intel/x86-64/nehalem/intel-xeon-cpu-x5667.test.xz", 0, F_CORES, 4, 16, R_SMT_AS_CORES },
	{ "intel/x86-64/nehalem/intel-xeon-cpu-x5667.test.xz", 0, F_LOGICAL, 8, 16, R_PACKAGES },
	{ "intel/x86-64/nehalem/intel-core-cpu-q-820.test", 0, F_CORES, 4, 8, R_SMT_AS_CORES },
	{ "intel/x86-64/sandy-bridge/intel-celeron-cpu-g1610.test", 0, F_CORES, 2, 1, R_MISSED_CPUS },
	{ "intel/x86-64/sandy-bridge/intel-celeron-cpu-g1610.test", 0, F_LOGICAL, 2, 1, R_MISSED_CPUS },
	{ "intel/x86-64/sandy-bridge/intel-xeon-cpu-e3-1230-v2.test.xz", 0, F_CORES, 4, 1, R_MISSED_CPUS },
	{ "intel/x86-64/sandy-bridge/intel-xeon-cpu-e3-1230-v2.test.xz", 0, F_LOGICAL, 8, 1, R_MISSED_CPUS },
	{ "intel/x86-64/sandy-bridge/intel-core-i7-2600-cpu.test", 0, F_CORES, 4, 8, R_SMT_AS_CORES },
	{ "intel/x86-64/sandy-bridge/intel-core-i7-3960x-cpu.test", 0, F_CORES, 6, 12, R_SMT_AS_CORES },
	{ "intel/x86-64/sandy-bridge/intel-core-i7-3770k-cpu.test", 0, F_CORES, 4, 8, R_SMT_AS_CORES },
	{ "intel/x86-64/netburst/intel-xeon-cpu-2.80ghz-nocona-dual.test", 0, F_LOGICAL, 2, 4, R_PACKAGES },
	{ "intel/x86-64/netburst/intel-xeon-7020-quad.test", 0, F_LOGICAL, 4, 16, R_PACKAGES },
	{ "intel/x86-64/netburst/intel-xeon-cpu-3.40ghz-cranford-dual.test", 0, F_LOGICAL, 2, 4, R_PACKAGES },
	{ "intel/x86-64/netburst/intel-xeon-cpu-3.00ghz-tulsa-dual.test", 0, F_LOGICAL, 4, 8, R_PACKAGES },
	{ "intel/x86-64/netburst/intel-xeon-7140m-dual.test", 0, F_LOGICAL, 4, 8, R_PACKAGES },
	{ "intel/x86-64/netburst/intel-xeon-cpu-3.40ghz-irwindale-dual.test", 0, F_LOGICAL, 2, 4, R_PACKAGES },
	{ "intel/x86-64/core/intel-xeon-cpu-e7450-quad.test", 0, F_CORES, 6, 8, R_E7450 },
	{ "intel/x86-64/core/intel-xeon-cpu-e7450-quad.test", 0, F_LOGICAL, 6, 24, R_PACKAGES },
	{ "intel/x86-64/core/intel-xeon-cpu-l5320.test", 0, F_LOGICAL, 4, 8, R_PACKAGES },
	{ "intel/x86-64/core/intel-xeon-cpu-e5462-dual.test", 0, F_LOGICAL, 4, 8, R_PACKAGES },
	{ "via/isaiah/via-nano-processor.test", 0, F_CORES, 1, 2, R_NANO },
	{ "via/isaiah/via-nano-processor.test", 0, F_LOGICAL, 1, 2, R_NANO },
};

struct tally {
	unsigned agree[F_COUNT], total[F_COUNT];
	unsigned files, blocks, known_used, failures;
	bool known_hit[ARRAY_SIZE(known)];
	double decode_s, parse_s;
	struct tc_sb report;
};

static struct tally T;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const struct known *find_known(const char *rel, int block, enum field f, long got,
				      long want)
{
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (strcmp(known[i].file, rel) == 0 && known[i].block == block &&
		    known[i].field == f && known[i].tacho == got && known[i].libcpuid == want)
			return &known[i];
	return NULL;
}

static const struct tacho_cpu_cache *find_cache(const struct tacho_cpu_core_type *ct,
						unsigned level, int type)
{
	for (unsigned i = 0; i < ct->ncaches; i++) {
		const struct tacho_cpu_cache *c = &ct->caches[i];
		if (c->level != level)
			continue;
		if (type == 0 ? c->type != TACHO_CACHE_INSTRUCTION : (int)c->type == type)
			return c;
	}
	return NULL;
}

/* tacho's value of field f for core type ct; -2 when tacho does not know. */
static long ours(const struct tacho_cpu_info *info, const struct tacho_cpu_core_type *ct,
		 enum field f)
{
	static const struct { unsigned level; int type; } which[5] = {
		{ 1, TACHO_CACHE_DATA }, { 1, TACHO_CACHE_INSTRUCTION }, { 2, 0 }, { 3, 0 }, { 4, 0 },
	};
	const struct tacho_cpu_cache *c;
	int k;

	switch (f) {
	case F_FAMILY: return info->family;
	case F_MODEL: return info->model;
	case F_STEPPING: return info->stepping;
	case F_CORES: return ct->cores ? (long)ct->cores : -2;
	case F_LOGICAL: return ct->threads ? (long)ct->threads : -2;
	default: break;
	}
	k = (f - F_L1D) % 5;
	c = find_cache(ct, which[k].level, which[k].type);
	if (f >= F_L1D_INST)
		return c ? c->instances : 0;
	if (!c)
		return -1;
	if (f < F_L1D_WAYS)
		return (long)(c->size / 1024);
	if (f < F_L1D_LINE)
		return c->fully_assoc ? 0xff : (long)c->ways;
	return c->line_size;
}

static void check_block(const char *rel, int bi, char **lines, const struct tacho_cpu_info *info)
{
	const struct tacho_cpu_core_type *ct = &info->core_types[0];
	const char *purpose = lines[2];

	/* one block per kind of core: match the kind; otherwise (several packages, or
	 * a part libcpuid calls "performance" that is not hybrid) the only kind */
	for (unsigned k = 0; k < info->ncore_types; k++)
		if (strcmp(tacho_core_kind_name(info->core_types[k].kind), purpose) == 0)
			ct = &info->core_types[k];
	for (int f = 0; f < F_COUNT; f++) {
		long want = strtol(lines[field_line[f]], NULL, 10);
		long got = ours(info, ct, (enum field)f);
		const struct known *kn;

		if (want == -1 && f != F_L1D && f < F_L1D_INST)
			continue;
		if (want == -1)
			continue;
		T.total[f]++;
		/* libcpuid writes 0 for the size of a cache that does not exist */
		if (f >= F_L1D && f <= F_L4 && want == 0 && got == -1)
			got = 0;
		if (got == want) {
			T.agree[f]++;
			continue;
		}
		kn = find_known(rel, bi, (enum field)f, got, want);
		if (kn) {
			T.known_used++;
			T.known_hit[kn - known] = true;
			continue;
		}
		T.failures++;
		tc_sb_addf(&T.report, "%s [block %d, %s]: %s: tacho %ld, libcpuid %ld\n", rel, bi,
			   purpose, field_names[f], got, want);
	}
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	const char *root = th_path(CORPUS);
	const char *rel = path + strlen(root) + 1;
	char *buf = NULL, *p, *cut = NULL;
	size_t len, dump_len;
	struct tacho_cpuid_dump *d = NULL;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	double t0;
	int err, bi = 0;
	(void)st;

	if (flag == FTW_D && strcmp(base, "arm") == 0)
		return FTW_SKIP_SUBTREE;
	if (flag != FTW_F)
		return FTW_CONTINUE;
	if (!strstr(base, ".test"))
		return FTW_CONTINUE;   /* README.md, SOURCE.md, COPYING */
	err = th_read_data(path, &buf, &len);
	if (err) {
		tc_sb_addf(&T.report, "%s: cannot read: %s\n", rel, tacho_strerror(err));
		T.failures++;
		return FTW_CONTINUE;
	}
	if ((dump_len = th_corpus_dump_len(buf, len)) < len)
		cut = buf + dump_len;
	if (!cut) {
		tc_sb_addf(&T.report, "%s: no expected block\n", rel);
		T.failures++;
		free(buf);
		return FTW_CONTINUE;
	}
	t0 = now();
	err = tacho_cpuid_dump_parse(buf, (size_t)(cut - buf), rel, &d, &diag);
	T.parse_s += now() - t0;
	if (err) {
		tc_sb_addf(&T.report, "%s: parse: %s (%s:%u: %s)\n", rel, tacho_strerror(err),
			   diag.source, diag.line, diag.message);
		T.failures++;
		free(buf);
		return FTW_CONTINUE;
	}
	t0 = now();
	err = tacho_cpu_decode(d, &info);
	T.decode_s += now() - t0;
	if (err) {
		tc_sb_addf(&T.report, "%s: decode: %s\n", rel, tacho_strerror(err));
		T.failures++;
		tacho_cpuid_dump_free(d);
		free(buf);
		return FTW_CONTINUE;
	}
	T.files++;
	/* the blocks: a dash line, then 34 lines */
	for (p = cut; p && p < buf + len; bi++) {
		char *lines[34];
		int n = 0;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
		while (n < 34 && p && p < buf + len) {
			char *nl = strchr(p, '\n');
			lines[n++] = p;
			if (nl)
				*nl = '\0';
			p = nl ? nl + 1 : NULL;
		}
		if (n < 34) {
			tc_sb_addf(&T.report, "%s: block %d has %d lines\n", rel, bi, n);
			T.failures++;
			break;
		}
		if (strcmp(lines[0], "x86") != 0)
			continue;
		T.blocks++;
		check_block(rel, bi, lines, &info);
	}
	tacho_cpu_info_exit(&info);
	tacho_cpuid_dump_free(d);
	free(buf);
	return FTW_CONTINUE;
}

static void test_corpus(void **state)
{
	unsigned agree = 0, total = 0;
	struct stat st;
	(void)state;

	if (stat(th_path(CORPUS), &st) != 0)
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	memset(&T, 0, sizeof(T));
	tc_sb_init(&T.report);
	{
		char root[4096];
		snprintf(root, sizeof(root), "%s", th_path(CORPUS));
		assert_int_equal(nftw(root, visit, 16, FTW_PHYS | FTW_ACTIONRETVAL), 0);
	}
	printf("corpus: %u files decoded, %u expected blocks\n", T.files, T.blocks);
	for (int f = 0; f < F_COUNT; f++) {
		printf("  %-14s %4u of %4u\n", field_names[f], T.agree[f], T.total[f]);
		agree += T.agree[f];
		total += T.total[f];
	}
	printf("agreement: %u of %u fields (%.2f%%); %u more explained by known differences\n",
	       agree, total, total ? 100.0 * agree / total : 0.0, T.known_used);
	printf("time: parse %.1f ms, decode %.1f ms for the whole corpus\n", T.parse_s * 1e3,
	       T.decode_s * 1e3);
	/* A known difference that no longer occurs is stale: the table must say the truth. */
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!T.known_hit[i]) {
			tc_sb_addf(&T.report, "stale known difference: %s [block %d]: %s\n",
				   known[i].file, known[i].block, field_names[known[i].field]);
			T.failures++;
		}
	if (T.failures) {
		fputs(T.report.buf, stdout);
		fflush(stdout);
		fail_msg("%u disagreements with libcpuid that the known-differences table does "
			 "not explain", T.failures);
	}
	tc_sb_exit(&T.report);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
