/* topology.c - packages, dies, cores and threads from CPUID, and the kinds of core on
 * hybrid parts. Sources, best first: leaf 0x1F (V2 extended topology) and 0xB (SDM
 * Vol. 2A, CPUID 0Bh/1Fh; SDM Vol. 3A 10.9 "Topology identification"); AMD
 * 0x8000_0008 ECX (core count, APIC ID size) and 0x8000_001E (APM Vol. 3 E.4.14);
 * the legacy leaf 1 EBX[23:16] / leaf 4 EAX[31:26] rule (SDM Vol. 3A 10.9.4 legacy
 * algorithm). Core kinds: Intel leaf 0x1A EAX[31:24], AMD 0x8000_0026 EBX[31:28].
 * Where the dump holds every logical CPU, counts come from the APIC IDs themselves. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"

/* Leaf 0xB/0x1F level types (ECX[15:8]). */
enum { LVL_INVALID = 0, LVL_SMT = 1, LVL_CORE = 2, LVL_MODULE = 3, LVL_TILE = 4, LVL_DIE = 5,
       LVL_DIEGRP = 6 };

struct levels {
	bool valid;
	enum tacho_cpu_source src;
	unsigned smt_shift, pkg_shift, die_low_shift, die_shift;
	unsigned threads_per_core;   /* EBX of the SMT level, "as shipped" */
	unsigned logical_per_pkg;    /* EBX of the last level */
	unsigned logical_per_die;    /* EBX of the level just below the die; 0 none */
};

static bool ext_levels(const struct tacho_cpuid_dump *d, unsigned cpu, uint32_t leaf,
		       struct levels *lv, uint32_t *x2apic)
{
	struct tacho_cpuid_regs r;
	unsigned prev_shift = 0, prev_count = 0;
	bool any = false;

	memset(lv, 0, sizeof(*lv));
	lv->threads_per_core = 1;
	for (uint32_t sub = 0; sub < 16; sub++) {
		unsigned type, shift, count;
		if (!tc_query_leaf(d, cpu, leaf, sub, &r))
			break;
		type = tc_bits(r.ecx, 15, 8);
		/* SDM: a level with EBX[15:0] = 0 or type 0 ends the enumeration. */
		if (type == LVL_INVALID || tc_bits(r.ebx, 15, 0) == 0)
			break;
		shift = tc_bits(r.eax, 4, 0);
		count = tc_bits(r.ebx, 15, 0);
		*x2apic = r.edx;
		any = true;
		if (type == LVL_SMT) {
			lv->smt_shift = shift;
			lv->threads_per_core = count;
		}
		if (type == LVL_DIE) {
			lv->die_low_shift = prev_shift;
			lv->die_shift = shift;
			lv->logical_per_die = prev_count;
		}
		prev_shift = shift;
		prev_count = count;
	}
	if (!any)
		return false;
	lv->pkg_shift = prev_shift;
	lv->logical_per_pkg = prev_count;
	lv->valid = true;
	lv->src = leaf == 0x1f ? TACHO_SRC_LEAF_1F : TACHO_SRC_LEAF_B;
	return true;
}

/* Without 0xB/0x1F: AMD's 0x8000_0008/0x8000_001E, else the legacy rule. */
static void old_levels(const struct tacho_cpuid_dump *d, unsigned cpu,
		       struct tacho_cpu_info *info, struct levels *lv)
{
	struct tacho_cpuid_regs r1, r, r4;
	bool amd = info->vendor == TACHO_VENDOR_AMD || info->vendor == TACHO_VENDOR_HYGON;
	unsigned logical = 1, cores = 1;

	memset(lv, 0, sizeof(*lv));
	tc_query_leaf(d, cpu, 1, 0, &r1);
	/* HTT (1:EDX[28]) makes EBX[23:16] the number of addressable logical IDs. */
	if (tc_bits(r1.edx, 28, 28) && tc_bits(r1.ebx, 23, 16))
		logical = tc_bits(r1.ebx, 23, 16);
	/* 0x8000_0008 ECX all zero below bit 16 says a package of one thread (NC 0, and
	 * ApicIdSize 0: "use NC"), yet leaf 1 with HTT set counts the logical processors
	 * of the package too (APM Vol. 3, CPUID Fn0000_0001_EBX LogicalProcessorCount,
	 * Fn8000_0008_ECX NC). When leaf 1 counts more, the empty register is the one a
	 * hypervisor did not fill (bhyve: NC 0 beside 254 logical processors, which its
	 * 0x8000_001D L3 is shared by too), and taking it would put every APIC ID in a
	 * package of its own: the legacy rule below takes leaf 1's width instead. (Linux
	 * lets 0x8000_0008 win, and would count two packages in that dump; the kernel of
	 * that guest reads other leaves, docs/lib-cpuid.md.) */
	if (amd && tc_query_leaf(d, cpu, 0x80000008u, 0, &r) && tc_bits(r.ecx, 15, 0) == 0 &&
	    logical > 1) {
		tc_cpu_note(info, "0x80000008 ECX says a package holds 1 thread (NC and "
			    "ApicIdSize 0) while leaf 1 counts %u logical processors per "
			    "package (HTT set): tacho takes leaf 1's count", logical);
	} else if (amd && tc_query_leaf(d, cpu, 0x80000008u, 0, &r)) {
		unsigned nc = tc_bits(r.ecx, 7, 0) + 1;
		unsigned idsize = tc_bits(r.ecx, 15, 12);
		unsigned tpc = 1;
		struct tacho_cpuid_regs re, rx;
		/* Family 17h on: NC counts threads and 0x8000_001E EBX[15:8] gives threads
		 * per core. Before, NC counts cores and there is no SMT (family 15h's
		 * "compute units" pair cores, which Linux and the APM still call cores). */
		if (info->family >= 0x17 && tc_query_leaf(d, cpu, 0x80000001u, 0, &rx) &&
		    tc_bits(rx.ecx, 22, 22) && tc_query_leaf(d, cpu, 0x8000001eu, 0, &re))
			tpc = tc_bits(re.ebx, 15, 8) + 1;
		lv->src = TACHO_SRC_AMD_80000008;
		lv->logical_per_pkg = nc;
		lv->threads_per_core = tpc;
		lv->pkg_shift = idsize ? idsize : tc_ceil_log2(nc);
		lv->smt_shift = tc_ceil_log2(tpc);
		if (tpc > 1)
			lv->src = TACHO_SRC_AMD_8000001E;
		lv->valid = true;
		return;
	}
	if (info->max_leaf >= 4 && tc_query_leaf(d, cpu, 4, 0, &r4) && tc_bits(r4.eax, 4, 0))
		cores = tc_bits(r4.eax, 31, 26) + 1;
	/* AMD reserves leaf 4, and no leaf below 0x8000_001E says how many threads a
	 * core has: as Linux's AMD parser does, take one thread per core. */
	else if (amd)
		cores = logical;
	if (logical < cores)
		logical = cores;
	lv->src = TACHO_SRC_LEGACY;
	lv->logical_per_pkg = logical;
	lv->threads_per_core = logical / cores ? logical / cores : 1;
	lv->pkg_shift = tc_ceil_log2(logical);
	lv->smt_shift = tc_ceil_log2(lv->threads_per_core);
	lv->valid = true;
}

static enum tacho_core_kind kind_of(const struct tacho_cpuid_dump *d, unsigned cpu,
				    const struct tacho_cpu_info *info, uint32_t *native)
{
	struct tacho_cpuid_regs r;

	*native = 0;
	if (info->vendor == TACHO_VENDOR_INTEL) {
		/* Leaf 0x1A is meaningful on hybrid parts (7.0:EDX[15]). */
		if (!tc_query_leaf(d, cpu, 7, 0, &r) || !tc_bits(r.edx, 15, 15))
			return TACHO_CORE_GENERAL;
		if (!tc_query_leaf(d, cpu, 0x1a, 0, &r))
			return TACHO_CORE_GENERAL;
		*native = tc_bits(r.eax, 23, 0);
		switch (tc_bits(r.eax, 31, 24)) {
		case 0x20: return TACHO_CORE_EFFICIENCY;   /* Intel Atom */
		case 0x40: return TACHO_CORE_PERFORMANCE;  /* Intel Core */
		default: return TACHO_CORE_GENERAL;
		}
	}
	/* AMD: HeterogeneousCores (0x8000_0021 EAX[30]) says the part mixes core types;
	 * then 0x8000_0026 EBX[31:28] CoreType gives 0 performance, 1 efficiency and
	 * [27:24] NativeModeID. Other parts report CoreType 0 too: they are "general". */
	if (info->vendor == TACHO_VENDOR_AMD && tc_query_leaf(d, cpu, 0x80000021u, 0, &r) &&
	    tc_bits(r.eax, 30, 30) && tc_query_leaf(d, cpu, 0x80000026u, 0, &r) &&
	    tc_bits(r.ecx, 15, 8) != 0) {
		*native = tc_bits(r.ebx, 27, 24);
		return tc_bits(r.ebx, 31, 28) == 1 ? TACHO_CORE_EFFICIENCY
						   : TACHO_CORE_PERFORMANCE;
	}
	return TACHO_CORE_GENERAL;
}

static bool has_l3(const struct tacho_cpuid_dump *d, unsigned cpu)
{
	struct tacho_cpuid_regs r;

	for (uint32_t sub = 0; sub < 16; sub++) {
		if (!tc_query_leaf(d, cpu, 4, sub, &r) || tc_bits(r.eax, 4, 0) == 0)
			return false;
		if (tc_bits(r.eax, 7, 5) == 3)
			return true;
	}
	return false;
}

static unsigned count_distinct(const uint32_t *v, unsigned n)
{
	unsigned k = 0;

	for (unsigned i = 0; i < n; i++) {
		bool seen = false;
		for (unsigned j = 0; j < i && !seen; j++)
			seen = v[j] == v[i];
		k += !seen;
	}
	return k;
}

/* Places the CPUs of the dump in packages (from their APIC IDs) and, when the dump is
 * complete, counts cores and threads from them instead of trusting the leaves' shipped
 * counts. *pkg0_count: the CPUs of the first package. 0 or -ENOMEM. */
static int place_cpus(struct tacho_cpu_info *info, struct tacho_cpu_topology *t, unsigned n,
		      unsigned smt_shift, unsigned *pkg0_count)
{
	uint32_t *pk = calloc(n, sizeof(*pk));
	uint32_t *ids = calloc(n, sizeof(*ids));
	unsigned npk, m = 0, pkg0 = info->cpus[0].package;

	if (!pk || !ids) {
		free(pk);
		free(ids);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		pk[i] = info->cpus[i].apic_id;
	if (count_distinct(pk, n) != n) {
		/* Before the Pentium 4, leaf 1 EBX[31:24] holds no APIC ID; a VM may
		 * repeat one too. Then the CPUs cannot be placed: take the dump's CPUs
		 * as whole packages of the size the leaves give. */
		tc_cpu_note(info, "the CPUs of the dump share APIC IDs: they cannot be "
			    "placed in packages and cores from CPUID; taking %u CPUs as %u "
			    "package(s)", n,
			    n / t->logical_per_package ? n / t->logical_per_package : 1);
		t->packages = n / t->logical_per_package ? n / t->logical_per_package : 1;
		*pkg0_count = n / t->packages;
		free(pk);
		free(ids);
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		pk[i] = info->cpus[i].package;
	npk = count_distinct(pk, n);
	t->packages = npk;
	for (unsigned i = 0; i < n; i++)
		if (info->cpus[i].package == pkg0)
			ids[m++] = info->cpus[i].apic_id;
	*pkg0_count = m;
	/* Complete: every package in the dump has as many CPUs as the first, and
	 * no APIC ID repeats. (A dump of a part with disabled cores is complete
	 * even though it holds fewer CPUs than leaf 0xB's shipped count.) */
	t->complete = count_distinct(ids, m) == m && n == m * npk &&
		      (m >= t->logical_per_package || n > 1);
	if (n == 1 && t->logical_per_package > 1)
		t->complete = false;
	if (t->complete) {
		unsigned ncores, maxt = 1;
		for (unsigned i = 0; i < m; i++)
			ids[i] >>= smt_shift;
		ncores = count_distinct(ids, m);
		for (unsigned i = 0; i < m; i++) {
			unsigned c = 0;
			for (unsigned j = 0; j < m; j++)
				c += ids[j] == ids[i];
			if (c > maxt)
				maxt = c;
		}
		if (m != t->logical_per_package)
			tc_cpu_note(info, "the dump holds %u logical CPUs per package; %s says "
				    "%u (the count as shipped): using the CPUs present", m,
				    tacho_cpu_source_name(t->source), t->logical_per_package);
		t->logical_per_package = m;
		t->cores_per_package = ncores;
		t->threads_per_core = maxt;
	}
	free(pk);
	free(ids);
	return 0;
}

int tc_cpu_topology(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info)
{
	unsigned n = tacho_cpuid_dump_ncpus(d);
	struct levels lv0;
	struct tacho_cpu_topology *t = &info->topo;
	enum tacho_core_kind *kinds;
	uint32_t *tmp;
	bool hybrid = false, some_l3 = false;
	unsigned pkg0_count = 0;

	info->cpus = calloc(n, sizeof(*info->cpus));
	kinds = calloc(n, sizeof(*kinds));
	tmp = calloc(n, sizeof(*tmp));
	if (!info->cpus || !kinds || !tmp) {
		free(kinds);
		free(tmp);
		return -ENOMEM;
	}
	info->ncpus = n;
	memset(&lv0, 0, sizeof(lv0));
	for (unsigned i = 0; i < n; i++) {
		struct tacho_cpu_logical *l = &info->cpus[i];
		struct tacho_cpuid_regs r1;
		struct levels lv;
		uint32_t x2 = 0, native;

		tc_query_leaf(d, i, 1, 0, &r1);
		l->os_cpu = tacho_cpuid_dump_os_cpu(d, i);
		l->apic_id = tc_bits(r1.ebx, 31, 24);
		if ((info->vendor == TACHO_VENDOR_INTEL && ext_levels(d, i, 0x1f, &lv, &x2)) ||
		    ext_levels(d, i, 0xb, &lv, &x2))
			l->apic_id = x2;
		else
			old_levels(d, i, info, &lv);
		if (i == 0)
			lv0 = lv;
		l->package = l->apic_id >> lv.pkg_shift;
		l->core = (l->apic_id & ((1u << lv.pkg_shift) - 1)) >> lv.smt_shift;
		l->thread = l->apic_id & ((1u << lv.smt_shift) - 1);
		if (lv.die_shift > lv.die_low_shift)
			l->die = (l->apic_id & ((1u << lv.die_shift) - 1)) >> lv.die_low_shift;
		kinds[i] = kind_of(d, i, info, &native);
		if (kinds[i] != TACHO_CORE_GENERAL)
			hybrid = true;
		if (has_l3(d, i))
			some_l3 = true;
		tmp[i] = native;
	}

	/* The fields of leaf 0xB/0x1F and the legacy leaves say how the part was
	 * shipped; the APIC IDs of a complete dump say what is there. */
	t->source = lv0.src;
	t->smt_shift = lv0.smt_shift;
	t->core_shift = lv0.pkg_shift;
	t->logical_per_package = lv0.logical_per_pkg ? lv0.logical_per_pkg : 1;
	t->threads_per_core = lv0.threads_per_core ? lv0.threads_per_core : 1;
	t->cores_per_package = t->logical_per_package / t->threads_per_core;
	if (!t->cores_per_package)
		t->cores_per_package = 1;
	t->dies_per_package = lv0.logical_per_die ? t->logical_per_package / lv0.logical_per_die : 1;
	if (!t->dies_per_package)
		t->dies_per_package = 1;
	if (place_cpus(info, t, n, lv0.smt_shift, &pkg0_count)) {
		free(kinds);
		free(tmp);
		return -ENOMEM;
	}
	if (!t->complete && n > 1 && pkg0_count < t->logical_per_package)
		tc_cpu_note(info, "the dump holds %u of the %u logical CPUs of a package: counts "
			    "are the fields of %s, not counted", pkg0_count, t->logical_per_package,
			    tacho_cpu_source_name(t->source));

	/* Kinds of core. A hybrid Intel part whose Atom cores cannot reach the L3 (the
	 * SoC-tile cores of Meteor Lake, Lunar Lake's E-cores) has low-power E-cores. */
	if (hybrid) {
		for (unsigned i = 0; i < n; i++)
			if (info->vendor == TACHO_VENDOR_INTEL && kinds[i] == TACHO_CORE_EFFICIENCY &&
			    some_l3 && !has_l3(d, i))
				kinds[i] = TACHO_CORE_LP_EFFICIENCY;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned k;
		for (k = 0; k < info->ncore_types; k++)
			if (info->core_types[k].kind == kinds[i])
				break;
		if (k == info->ncore_types) {
			if (k == TACHO_CPU_MAX_CORE_TYPES)
				k = 0;
			else {
				info->ncore_types++;
				memset(&info->core_types[k], 0, sizeof(info->core_types[k]));
				info->core_types[k].kind = kinds[i];
				info->core_types[k].native_model_id = tmp[i];
				info->core_types[k].first_cpu = i;
			}
		}
		info->cpus[i].core_type = k;
	}
	/* Order: performance, efficiency, low-power efficiency (general alone). */
	for (unsigned a = 0; a < info->ncore_types; a++)
		for (unsigned b = a + 1; b < info->ncore_types; b++)
			if (info->core_types[b].kind < info->core_types[a].kind) {
				struct tacho_cpu_core_type x = info->core_types[a];
				info->core_types[a] = info->core_types[b];
				info->core_types[b] = x;
				for (unsigned i = 0; i < n; i++) {
					if (info->cpus[i].core_type == a)
						info->cpus[i].core_type = b;
					else if (info->cpus[i].core_type == b)
						info->cpus[i].core_type = a;
				}
			}
	if (info->ncore_types == 1) {
		info->core_types[0].cores = t->cores_per_package;
		info->core_types[0].threads = t->logical_per_package;
	} else if (t->complete) {
		for (unsigned k = 0; k < info->ncore_types; k++) {
			struct tacho_cpu_core_type *ct = &info->core_types[k];
			unsigned m = 0;
			for (unsigned i = 0; i < n; i++)
				if (info->cpus[i].core_type == k &&
				    info->cpus[i].package == info->cpus[0].package)
					tmp[m++] = info->cpus[i].apic_id >> lv0.smt_shift;
			ct->threads = m;
			ct->cores = count_distinct(tmp, m);
		}
	} else {
		tc_cpu_note(info, "a hybrid part, but the dump does not hold every logical CPU: "
			    "the cores and threads of each kind are unknown");
	}
	free(kinds);
	free(tmp);
	return 0;
}
