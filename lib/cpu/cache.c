/* cache.c - caches from CPUID: Intel leaf 4 (deterministic cache parameters), AMD
 * 0x8000_001D (the same layout), AMD's legacy 0x8000_0005/0x8000_0006, and leaf 2
 * descriptors (leaf2.c) where nothing better exists; then the instance counts once
 * the topology is known. Intel SDM Vol. 2A, CPUID leaf 04h; AMD APM Vol. 3, E.4.5,
 * E.4.6 and E.4.15. */
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"

static int cmp_cache(const struct tacho_cpu_cache *a, const struct tacho_cpu_cache *b)
{
	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return (int)a->type - (int)b->type;
}

static void sort_caches(struct tacho_cpu_core_type *ct)
{
	for (unsigned i = 1; i < ct->ncaches; i++) {
		struct tacho_cpu_cache c = ct->caches[i];
		unsigned j = i;
		while (j > 0 && cmp_cache(&ct->caches[j - 1], &c) > 0) {
			ct->caches[j] = ct->caches[j - 1];
			j--;
		}
		ct->caches[j] = c;
	}
}

static struct tacho_cpu_cache *new_cache(struct tacho_cpu_core_type *ct)
{
	struct tacho_cpu_cache *c;

	if (ct->ncaches == TACHO_CPU_MAX_CACHES)
		return NULL;
	c = &ct->caches[ct->ncaches++];
	memset(c, 0, sizeof(*c));
	c->instances = -1;
	c->inclusive = -1;
	return c;
}

/* Leaf 4 and 0x8000_001D share one layout: EAX[4:0] type, [7:5] level, [9] fully
 * associative, [25:14] logical CPUs sharing - 1; EBX[11:0] line - 1, [21:12]
 * partitions - 1, [31:22] ways - 1; ECX sets - 1; EDX[1] inclusive. Returns the
 * number of caches found. */
static unsigned deterministic(const struct tacho_cpuid_dump *d, unsigned cpu, uint32_t leaf,
			      enum tacho_cpu_source src, struct tacho_cpu_info *info,
			      struct tacho_cpu_core_type *ct, bool *ended)
{
	struct tacho_cpuid_regs r;
	unsigned n = 0;

	/* The list ends with a subleaf of type 0; a dump that stops before it (older
	 * libcpuid dumps keep subleaf 0 only) is incomplete: *ended says which. */
	*ended = false;
	for (uint32_t sub = 0; sub < 64; sub++) {
		struct tacho_cpu_cache *c;
		unsigned type;

		if (!tc_query_leaf(d, cpu, leaf, sub, &r))
			break;
		type = tc_bits(r.eax, 4, 0);
		if (type == 0) {
			*ended = true;
			break;
		}
		if (type > 3) {
			tc_cpu_note(info, "%s subleaf %u has cache type %u, which is reserved",
				    tacho_cpu_source_name(src), sub, type);
			continue;
		}
		c = new_cache(ct);
		if (!c)
			break;
		c->level = tc_bits(r.eax, 7, 5);
		c->type = (enum tacho_cache_type)type;
		c->fully_assoc = tc_bits(r.eax, 9, 9);
		c->sharing = tc_bits(r.eax, 25, 14) + 1;
		c->line_size = tc_bits(r.ebx, 11, 0) + 1;
		c->partitions = tc_bits(r.ebx, 21, 12) + 1;
		c->ways = tc_bits(r.ebx, 31, 22) + 1;
		c->sets = r.ecx + 1;
		c->size = (uint64_t)c->ways * c->partitions * c->line_size * c->sets;
		if (c->fully_assoc) {
			/* a fully associative cache is one set of `ways` lines */
			if (c->sets != 1)
				tc_cpu_note(info, "%s: L%u says fully associative but has %u sets",
					    tacho_cpu_source_name(src), c->level, c->sets);
		}
		c->inclusive = tc_bits(r.edx, 1, 1);
		c->source = src;
		n++;
	}
	return n;
}

/* Intel's reading of the same field in 0x8000_0006 ECX (SDM Vol. 2A, CPUID 80000006H):
 * 3, 5 and 9 are reserved and 7 means "see leaf 4" (all unknown here: 0). */
static const unsigned intel_assoc[16] = {
	[0x1] = 1, [0x2] = 2, [0x4] = 4, [0x6] = 8, [0x8] = 16, [0xa] = 32, [0xb] = 48,
	[0xc] = 64, [0xd] = 96, [0xe] = 128,
};

static void legacy_one(struct tacho_cpu_info *info, struct tacho_cpu_core_type *ct,
		       unsigned level, enum tacho_cache_type type, uint64_t size,
		       unsigned assoc_code, bool amd_code, unsigned line,
		       enum tacho_cpu_source src)
{
	struct tacho_cpu_cache *c;

	if (size == 0)
		return;
	if (amd_code && assoc_code == 0)
		return;   /* "disabled" */
	/* code 9 ("see 0x8000001D") leaves the ways unknown (0): tc_cpu_caches goes
	 * there first, and comes here only when that leaf lists nothing */
	c = new_cache(ct);
	if (!c)
		return;
	c->level = level;
	c->type = type;
	c->size = size;
	c->line_size = line;
	if (amd_code) {
		c->fully_assoc = assoc_code == 0xf;
		c->ways = info->vendor == TACHO_VENDOR_INTEL ? intel_assoc[assoc_code & 0xf]
							     : tc_amd_ways(assoc_code & 0xf);
		if (assoc_code == 7)
			tc_cpu_note(info, "%s: L%u associativity code 7 is reserved",
				    tacho_cpu_source_name(src), level);
	} else {
		/* L1 fields of 0x8000_0005 hold the way count itself; 0xFF = fully assoc. */
		c->fully_assoc = assoc_code == 0xff;
		c->ways = c->fully_assoc ? 0 : assoc_code;
	}
	if (c->ways && c->line_size && c->size % ((uint64_t)c->ways * c->line_size) == 0)
		c->sets = (unsigned)(c->size / ((uint64_t)c->ways * c->line_size));
	if (c->fully_assoc)
		c->sets = 1;
	c->source = src;
}

static void amd_legacy(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		       struct tacho_cpu_core_type *ct, bool l1, bool l2l3)
{
	struct tacho_cpuid_regs r;

	if (l1 && tc_query_leaf(d, cpu, 0x80000005u, 0, &r)) {
		legacy_one(info, ct, 1, TACHO_CACHE_DATA, (uint64_t)tc_bits(r.ecx, 31, 24) * 1024,
			   tc_bits(r.ecx, 23, 16), false, tc_bits(r.ecx, 7, 0), TACHO_SRC_AMD_80000005);
		legacy_one(info, ct, 1, TACHO_CACHE_INSTRUCTION,
			   (uint64_t)tc_bits(r.edx, 31, 24) * 1024, tc_bits(r.edx, 23, 16), false,
			   tc_bits(r.edx, 7, 0), TACHO_SRC_AMD_80000005);
	}
	if (l2l3 && tc_query_leaf(d, cpu, 0x80000006u, 0, &r)) {
		uint64_t l2 = (uint64_t)tc_bits(r.ecx, 31, 16) * 1024;
		/* VIA C3 "Samuel 2"/"Ezra" (family 6, models 7 and 8) put the L2 size in
		 * ECX[31:24] (Linux's cpu_detect_cache_sizes, "VIA C3 CPUs need further
		 * shifting"). */
		if (info->vendor == TACHO_VENDOR_VIA && info->family == 6 &&
		    (info->model == 7 || info->model == 8))
			l2 = (uint64_t)tc_bits(r.ecx, 31, 24) * 1024;
		legacy_one(info, ct, 2, TACHO_CACHE_UNIFIED, l2, tc_bits(r.ecx, 15, 12), true,
			   tc_bits(r.ecx, 7, 0), TACHO_SRC_AMD_80000006);
		/* Only AMD-style parts define EDX (L3); Intel says it is reserved. */
		if (info->vendor != TACHO_VENDOR_INTEL)
			legacy_one(info, ct, 3, TACHO_CACHE_UNIFIED,
				   (uint64_t)tc_bits(r.edx, 31, 18) * 512 * 1024,
				   tc_bits(r.edx, 15, 12), true, tc_bits(r.edx, 7, 0),
				   TACHO_SRC_AMD_80000006);
	}
}

static bool has_level(const struct tacho_cpu_core_type *ct, unsigned level)
{
	for (unsigned i = 0; i < ct->ncaches; i++)
		if (ct->caches[i].level == level)
			return true;
	return false;
}

/* Adds the caches of `from` whose level and type ct lacks (filling the gaps of an
 * incomplete deterministic leaf with an older source). */
static unsigned merge_missing(struct tacho_cpu_core_type *ct, const struct tacho_cpu_core_type *from)
{
	unsigned added = 0;

	for (unsigned i = 0; i < from->ncaches; i++) {
		const struct tacho_cpu_cache *f = &from->caches[i];
		bool have = false;
		for (unsigned j = 0; j < ct->ncaches; j++)
			if (ct->caches[j].level == f->level && ct->caches[j].type == f->type)
				have = true;
		if (!have && ct->ncaches < TACHO_CPU_MAX_CACHES) {
			ct->caches[ct->ncaches++] = *f;
			added++;
		}
	}
	return added;
}

/* 0x8000_0006 gives L2 and L3 in its own terms too. Where 0x8000_001D, which tacho
 * follows, says otherwise, a note keeps the other claim visible: on parts with an L3
 * per die or per CCX, 0x8000_0006 EDX is the package's total; a hypervisor may fill the
 * two leaves from different sources (bhyve: an 8-way L2 in 0x8000_0006 ECX[15:12], a
 * 16-way one in 0x8000_001D). Associativity codes 0, 9 and 0xF give no way count to
 * compare (tc_amd_ways). One note per level. */
static void note_legacy_differs(const struct tacho_cpuid_dump *d, unsigned cpu,
				struct tacho_cpu_info *info, const struct tacho_cpu_core_type *ct)
{
	struct tacho_cpuid_regs r6;

	if (!tc_query_leaf(d, cpu, 0x80000006u, 0, &r6))
		return;
	for (unsigned i = 0; i < ct->ncaches; i++) {
		const struct tacho_cpu_cache *c = &ct->caches[i];
		uint64_t size;
		unsigned ways;

		if (c->level == 2) {
			size = (uint64_t)tc_bits(r6.ecx, 31, 16) * 1024;
			ways = tc_amd_ways(tc_bits(r6.ecx, 15, 12));
		} else if (c->level == 3) {
			size = (uint64_t)tc_bits(r6.edx, 31, 18) * 512 * 1024;
			ways = tc_amd_ways(tc_bits(r6.edx, 15, 12));
		} else {
			continue;
		}
		if (!size)
			continue;
		/* where the sizes differ that note says it all: a package's total L3
		 * has the ways of its instances added up */
		if (size != c->size && c->level == 3)
			tc_cpu_note(info, "0x80000006 gives an L3 of %llu KiB, 0x8000001d "
				    "one of %llu KiB shared by %u threads: tacho follows "
				    "0x8000001d, which describes each instance",
				    (unsigned long long)(size / 1024),
				    (unsigned long long)(c->size / 1024), c->sharing);
		else if (size != c->size)
			tc_cpu_note(info, "0x80000006 gives an L%u of %llu KiB, 0x8000001d one "
				    "of %llu KiB: tacho follows 0x8000001d", c->level,
				    (unsigned long long)(size / 1024),
				    (unsigned long long)(c->size / 1024));
		else if (ways && !c->fully_assoc && ways != c->ways)
			tc_cpu_note(info, "0x80000006 gives the L%u %u ways, 0x8000001d %u: tacho "
				    "follows 0x8000001d", c->level, ways, c->ways);
	}
}

/* The levels whose associativity 0x8000_0006 gives as code 9, "see 0x8000_001D" (APM
 * Vol. 3, Fn8000_0006, L2/L3 associativity encoding): bit 2 for the L2 (ECX[15:12]),
 * bit 3 for the L3 (EDX[15:12]). */
static unsigned legacy_sends_to_001d(const struct tacho_cpuid_dump *d, unsigned cpu)
{
	struct tacho_cpuid_regs r6;
	unsigned levels = 0;

	if (!tc_query_leaf(d, cpu, 0x80000006u, 0, &r6))
		return 0;
	if (tc_bits(r6.ecx, 31, 16) && tc_bits(r6.ecx, 15, 12) == 9)
		levels |= 1u << 2;
	if (tc_bits(r6.edx, 31, 18) && tc_bits(r6.edx, 15, 12) == 9)
		levels |= 1u << 3;
	return levels;
}

static const char *levels_text(unsigned levels)
{
	switch (levels) {
	case 1u << 2: return "L2's";
	case 1u << 3: return "L3's";
	default: return "L2's and L3's";
	}
}

/* Whether 0x8000_001D holds a list of caches though TopologyExtensions (0x8000_0001
 * ECX[22]) is clear. The APM makes the leaf reserved then, but the flag is not always
 * what the CPU has: firmware clears it on family 15h parts that answer the leaf (the
 * corpus's A12-9700P; Linux sets the flag again through MSR C001_1005[54]), and a
 * hypervisor may fill the leaf and leave the flag clear (bhyve). Filled: within the
 * maximum extended leaf (tc_query_leaf), subleaf 0 a cache, and every subleaf up to
 * the null one (or the end of a dump that stops early) of a defined type (1 data,
 * 2 instruction, 3 unified) at level 1 to 3 (APM Vol. 3, Fn8000_001D_EAX). */
static bool amd_001d_filled(const struct tacho_cpuid_dump *d, unsigned cpu)
{
	struct tacho_cpuid_regs r;

	for (uint32_t sub = 0; sub < 64; sub++) {
		unsigned type, level;

		if (!tc_query_leaf(d, cpu, 0x8000001du, sub, &r))
			return sub > 0;
		type = tc_bits(r.eax, 4, 0);
		level = tc_bits(r.eax, 7, 5);
		if (type == 0)
			return sub > 0;
		if (type > 3 || level < 1 || level > 3)
			return false;
	}
	return false;
}

void tc_cpu_caches(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		   struct tacho_cpu_core_type *ct)
{
	struct tacho_cpuid_regs r;
	bool amd = info->vendor == TACHO_VENDOR_AMD || info->vendor == TACHO_VENDOR_HYGON;
	bool topoext = tc_query_leaf(d, cpu, 0x80000001u, 0, &r) && tc_bits(r.ecx, 22, 22);
	unsigned see_001d = amd ? legacy_sends_to_001d(d, cpu) : 0;
	bool unflagged = amd && !topoext && amd_001d_filled(d, cpu);
	bool ended = true;
	unsigned n;
	struct tacho_cpu_core_type tmp, *old = &tmp;   /* ~3 KiB */

	memset(&tmp, 0, sizeof(tmp));
	ct->ncaches = 0;
	/* AMD reserves leaf 4 (it returns zeros there); everyone else may have it. */
	if (!amd && (n = deterministic(d, cpu, 4, TACHO_SRC_LEAF_4, info, ct, &ended)) > 0) {
		/* leaf 4 is authoritative; leaf 2 may still carry TLBs (tlb.c) */
		if (!ended && info->vendor == TACHO_VENDOR_INTEL) {
			(void)tc_leaf2_decode(d, cpu, info, old, true);
			if (merge_missing(ct, old))
				tc_cpu_note(info, "the dump stops after %u subleaves of leaf 4 "
					    "without its terminating null subleaf: caches it does "
					    "not list come from leaf 2", n);
		}
	} else if (amd && (topoext || unflagged) &&
		   (n = deterministic(d, cpu, 0x8000001du, TACHO_SRC_AMD_8000001D, info, ct,
				      &ended)) > 0) {
		/* AMD's own deterministic leaf, also where only the hypervisor's filling
		 * of it (and 0x8000_0006's code 9 pointing at it) says it is there:
		 * Linux reads it only with the flag, and falls back to 0x8000_0006,
		 * which then has no ways for the L3. */
		if (unflagged && see_001d)
			tc_cpu_note(info, "0x80000006 gives the %s associativity as code 9, \"see "
				    "0x8000001d\", and 0x8000001d lists %u caches although "
				    "TopologyExtensions (0x80000001 ECX[22]) is clear: the caches "
				    "come from 0x8000001d", levels_text(see_001d), n);
		else if (unflagged)
			tc_cpu_note(info, "0x8000001d lists %u caches although TopologyExtensions "
				    "(0x80000001 ECX[22]) is clear: the caches come from 0x8000001d "
				    "(firmware may clear the flag, and Linux sets it again on "
				    "family 15h; a hypervisor may never set it)", n);
		note_legacy_differs(d, cpu, info, ct);
		if (!ended) {
			amd_legacy(d, cpu, info, old, true, true);
			if (merge_missing(ct, old))
				tc_cpu_note(info, "the dump stops after %u subleaves of leaf "
					    "0x8000001d without its terminating null subleaf: caches "
					    "it does not list come from 0x80000005/6", n);
		}
	} else if (info->vendor == TACHO_VENDOR_INTEL && info->max_leaf >= 2) {
		unsigned fl = tc_leaf2_decode(d, cpu, info, ct, true);
		if (fl & TC_L2F_LEAF4)
			tc_cpu_note(info, "leaf 2 says \"use leaf 4\" (descriptor 0xff) but leaf 4 "
				    "is absent or empty");
		/* Leaf 2 may say nothing of L2 while 0x8000_0006 does (Intel documents
		 * ECX there: L2 size, associativity code, line size); but 0x40 without an
		 * L2 descriptor says there is none. */
		if (!has_level(ct, 2) && !(fl & TC_L2F_NO_L2L3))
			amd_legacy(d, cpu, info, ct, false, true);
	} else {
		if (amd && topoext)
			tc_cpu_note(info, "TopologyExtensions is set but leaf 0x8000001d is empty: "
				    "caches from 0x80000005/6");
		if (see_001d)
			tc_cpu_note(info, "0x80000006 gives the %s associativity as code 9, \"see "
				    "0x8000001d\", but 0x8000001d lists no caches: the ways are "
				    "unknown", levels_text(see_001d));
		amd_legacy(d, cpu, info, ct, true, true);
	}
	if (ct->ncaches == 0)
		tc_cpu_note(info, "no cache information in any CPUID leaf");
	sort_caches(ct);
}

/* Instances per package: with every CPU of the package in the dump, count the
 * distinct cache IDs (APIC ID >> ceil(log2(sharing)), SDM leaf 4 note on EAX[25:14])
 * among the CPUs of each kind; otherwise divide the logical CPUs of that kind by the
 * sharing count. Legacy sources do not say who shares: L1 and L2 are per core on
 * every part they describe except the ones noted, L3 is one per package. */
void tc_cpu_cache_instances(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info)
{
	(void)d;
	for (unsigned k = 0; k < info->ncore_types; k++) {
		struct tacho_cpu_core_type *ct = &info->core_types[k];
		for (unsigned i = 0; i < ct->ncaches; i++) {
			struct tacho_cpu_cache *c = &ct->caches[i];

			if (c->sharing && info->topo.complete) {
				unsigned shift = tc_ceil_log2(c->sharing);
				uint32_t ids[1024];
				unsigned nids = 0;
				unsigned pkg = 0;
				bool first = true;

				for (unsigned j = 0; j < info->ncpus; j++) {
					const struct tacho_cpu_logical *l = &info->cpus[j];
					uint32_t id;
					bool seen = false;
					if (l->core_type != k)
						continue;
					if (first) {
						pkg = l->package;
						first = false;
					}
					if (l->package != pkg)
						continue;
					id = l->apic_id >> shift;
					for (unsigned m = 0; m < nids; m++)
						if (ids[m] == id)
							seen = true;
					if (!seen && nids < ARRAY_SIZE(ids))
						ids[nids++] = id;
				}
				c->instances = (int)nids;
			} else if (c->sharing && ct->threads) {
				unsigned share = c->sharing < ct->threads ? c->sharing : ct->threads;
				/* a cache shared by the threads of a core is per core */
				if (share < info->topo.threads_per_core)
					share = 1;
				c->instances = (int)((ct->threads + share - 1) / share);
			} else if (ct->cores) {
				c->instances = c->level >= 3 ? 1 : (int)ct->cores;
			}
		}
	}
}
