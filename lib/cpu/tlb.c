/* tlb.c - TLBs from CPUID: Intel leaf 0x18 (deterministic address translation), leaf
 * 2 descriptors (leaf2.c), AMD 0x8000_0005 (L1), 0x8000_0006 (L2) and 0x8000_0019
 * (1 GiB pages). SDM Vol. 2A CPUID 18h; APM Vol. 3 E.4.5, E.4.6, E.4.13. */
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"

static void leaf18(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		   struct tacho_cpu_core_type *ct)
{
	struct tacho_cpuid_regs r;
	uint32_t max;

	if (!tc_query_leaf(d, cpu, 0x18, 0, &r))
		return;
	max = r.eax;
	if (max > 63) {
		tc_cpu_note(info, "leaf 0x18 claims %u subleaves; reading 64", max + 1);
		max = 63;
	}
	for (uint32_t sub = 0; sub <= max; sub++) {
		struct tacho_cpu_tlb t = { .source = TACHO_SRC_LEAF_18 };
		unsigned type;

		if (sub && !tc_query_leaf(d, cpu, 0x18, sub, &r))
			break;
		type = tc_bits(r.edx, 4, 0);
		if (type == 0)
			continue;   /* "null": this subleaf is not a valid TLB */
		if (type > 5) {
			tc_cpu_note(info, "leaf 0x18 subleaf %u has reserved type %u", sub, type);
			continue;
		}
		t.type = (enum tacho_tlb_type)type;
		t.level = tc_bits(r.edx, 7, 5);
		t.fully_assoc = tc_bits(r.edx, 8, 8);
		t.sharing = tc_bits(r.edx, 25, 14) + 1;
		t.page_sizes = tc_bits(r.ebx, 3, 0);
		t.ways = tc_bits(r.ebx, 31, 16);
		t.entries = t.ways * r.ecx;
		if (t.fully_assoc)
			t.ways = 0;
		tc_tlb_add(info, ct, &t);
	}
}

/* One AMD TLB field pair: entries and associativity (L1 fields hold the way count,
 * 0xFF = fully associative; L2 fields hold the code of 0x8000_0006's table). */
static void amd_tlb(struct tacho_cpu_info *info, struct tacho_cpu_core_type *ct, unsigned level,
		    enum tacho_tlb_type type, unsigned pages, unsigned entries, unsigned assoc,
		    bool l2code, enum tacho_cpu_source src)
{
	struct tacho_cpu_tlb t = { .level = level, .type = type, .page_sizes = pages,
				   .entries = entries, .source = src };

	if (entries == 0 || assoc == 0)
		return;
	if (l2code) {
		t.fully_assoc = assoc == 0xf;
		t.ways = tc_amd_ways(assoc);
	} else {
		t.fully_assoc = assoc == 0xff;
		t.ways = t.fully_assoc ? 0 : assoc;
	}
	tc_tlb_add(info, ct, &t);
}

/* One register of 0x8000_0005/6/19: the data TLB in its upper half, the instruction TLB
 * in its lower half; each half is entries then associativity, 8 + 8 bits for L1 way
 * counts, 12 + 4 bits for L2 associativity codes. */
static void amd_tlb_reg(struct tacho_cpu_info *info, struct tacho_cpu_core_type *ct,
			unsigned level, unsigned pages, uint32_t reg, bool l2code,
			enum tacho_cpu_source src)
{
	unsigned ebits = l2code ? 12 : 8;

	for (int half = 1; half >= 0; half--) {
		uint32_t f = reg >> (16 * half) & 0xffff;

		amd_tlb(info, ct, level, half ? TACHO_TLB_DATA : TACHO_TLB_INSTRUCTION, pages,
			f & ((1u << ebits) - 1), f >> ebits, l2code, src);
	}
}

static void amd_tlbs(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		     struct tacho_cpu_core_type *ct)
{
	struct tacho_cpuid_regs r;
	const unsigned big = TACHO_PAGE_2M | TACHO_PAGE_4M;

	if (tc_query_leaf(d, cpu, 0x80000005u, 0, &r)) {
		amd_tlb_reg(info, ct, 1, big, r.eax, false, TACHO_SRC_AMD_80000005);
		amd_tlb_reg(info, ct, 1, TACHO_PAGE_4K, r.ebx, false, TACHO_SRC_AMD_80000005);
	}
	if (tc_query_leaf(d, cpu, 0x80000006u, 0, &r)) {
		amd_tlb_reg(info, ct, 2, big, r.eax, true, TACHO_SRC_AMD_80000006);
		amd_tlb_reg(info, ct, 2, TACHO_PAGE_4K, r.ebx, true, TACHO_SRC_AMD_80000006);
	}
	if (tc_query_leaf(d, cpu, 0x80000019u, 0, &r)) {
		amd_tlb_reg(info, ct, 1, TACHO_PAGE_1G, r.eax, true, TACHO_SRC_AMD_80000019);
		amd_tlb_reg(info, ct, 2, TACHO_PAGE_1G, r.ebx, true, TACHO_SRC_AMD_80000019);
	}
}

void tc_cpu_tlbs(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		 struct tacho_cpu_core_type *ct)
{
	struct tacho_cpuid_regs r;

	ct->ntlbs = 0;
	if (info->vendor == TACHO_VENDOR_AMD || info->vendor == TACHO_VENDOR_HYGON) {
		amd_tlbs(d, cpu, info, ct);
		return;
	}
	if (info->max_leaf >= 0x18 && tc_query_leaf(d, cpu, 0x18, 0, &r)) {
		leaf18(d, cpu, info, ct);
		if (ct->ntlbs)
			return;
	}
	if (info->vendor == TACHO_VENDOR_INTEL && info->max_leaf >= 2) {
		(void)tc_leaf2_decode(d, cpu, info, ct, false);
		return;
	}
	/* Centaur/VIA, Transmeta and others describe TLBs AMD's way. */
	amd_tlbs(d, cpu, info, ct);
}
