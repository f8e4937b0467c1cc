/* info.c - what every file of the CPUID decoder shares, below all of them: the words
 * for its enums (vendors, hypervisors, sources, core kinds, cache and TLB types), the
 * notes a decoder leaves in struct tacho_cpu_info, adding a TLB, AMD's associativity
 * codes and the ID-shift arithmetic. It calls none of them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"

/* --- words --- */

static const char *const vendor_names[TACHO_VENDOR_COUNT] = {
	[TACHO_VENDOR_UNKNOWN] = "unknown", [TACHO_VENDOR_INTEL] = "Intel",
	[TACHO_VENDOR_AMD] = "AMD", [TACHO_VENDOR_HYGON] = "Hygon",
	[TACHO_VENDOR_VIA] = "VIA/Centaur", [TACHO_VENDOR_ZHAOXIN] = "Zhaoxin",
	[TACHO_VENDOR_CYRIX] = "Cyrix", [TACHO_VENDOR_TRANSMETA] = "Transmeta",
	[TACHO_VENDOR_NSC] = "NSC", [TACHO_VENDOR_RISE] = "Rise", [TACHO_VENDOR_SIS] = "SiS",
	[TACHO_VENDOR_UMC] = "UMC", [TACHO_VENDOR_NEXGEN] = "NexGen",
	[TACHO_VENDOR_VORTEX] = "Vortex86",
};

static const char *const hv_names[TACHO_HV_COUNT] = {
	[TACHO_HV_NONE] = "none", [TACHO_HV_UNKNOWN] = "unknown", [TACHO_HV_KVM] = "KVM",
	[TACHO_HV_HYPERV] = "Microsoft Hyper-V", [TACHO_HV_VMWARE] = "VMware",
	[TACHO_HV_XEN] = "Xen", [TACHO_HV_BHYVE] = "bhyve", [TACHO_HV_QEMU_TCG] = "QEMU (TCG)",
	[TACHO_HV_PARALLELS] = "Parallels", [TACHO_HV_VIRTUALBOX] = "VirtualBox",
	[TACHO_HV_ACRN] = "ACRN", [TACHO_HV_QNX] = "QNX", [TACHO_HV_APPLE] = "Apple",
};

static const char *const source_names[TACHO_SRC_COUNT] = {
	[TACHO_SRC_NONE] = "none", [TACHO_SRC_LEAF_2] = "leaf 2",
	[TACHO_SRC_LEAF_4] = "leaf 4", [TACHO_SRC_LEAF_18] = "leaf 0x18",
	[TACHO_SRC_AMD_8000001D] = "leaf 0x8000001d", [TACHO_SRC_AMD_80000005] = "leaf 0x80000005",
	[TACHO_SRC_AMD_80000006] = "leaf 0x80000006", [TACHO_SRC_AMD_80000019] = "leaf 0x80000019",
	[TACHO_SRC_LEAF_1F] = "leaf 0x1f", [TACHO_SRC_LEAF_B] = "leaf 0xb",
	[TACHO_SRC_AMD_80000008] = "leaf 0x80000008", [TACHO_SRC_AMD_8000001E] = "leaf 0x8000001e",
	[TACHO_SRC_LEGACY] = "leaves 1 and 4", [TACHO_SRC_APIC_IDS] = "APIC IDs",
};

static const char *const kind_names[TACHO_CORE_KIND_COUNT] = {
	[TACHO_CORE_GENERAL] = "general", [TACHO_CORE_PERFORMANCE] = "performance",
	[TACHO_CORE_EFFICIENCY] = "efficiency", [TACHO_CORE_LP_EFFICIENCY] = "low-power efficiency",
};

#define NAME_OF(tab, i) ((unsigned)(i) < ARRAY_SIZE(tab) && (tab)[i] ? (tab)[i] : "unknown")

const char *tacho_cpu_vendor_name(enum tacho_cpu_vendor v) { return NAME_OF(vendor_names, v); }
const char *tacho_hypervisor_name(enum tacho_hypervisor hv) { return NAME_OF(hv_names, hv); }
const char *tacho_cpu_source_name(enum tacho_cpu_source s) { return NAME_OF(source_names, s); }
const char *tacho_core_kind_name(enum tacho_core_kind k) { return NAME_OF(kind_names, k); }

const char *tacho_cache_type_name(enum tacho_cache_type t)
{
	switch (t) {
	case TACHO_CACHE_DATA: return "data";
	case TACHO_CACHE_INSTRUCTION: return "instruction";
	case TACHO_CACHE_UNIFIED: return "unified";
	}
	return "unknown";
}

const char *tacho_tlb_type_name(enum tacho_tlb_type t)
{
	switch (t) {
	case TACHO_TLB_DATA: return "data";
	case TACHO_TLB_INSTRUCTION: return "instruction";
	case TACHO_TLB_UNIFIED: return "unified";
	case TACHO_TLB_LOAD: return "load";
	case TACHO_TLB_STORE: return "store";
	}
	return "unknown";
}

/* --- notes --- */

void tc_cpu_note(struct tacho_cpu_info *info, const char *fmt, ...)
{
	char buf[512], **p, *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* The same remark from several CPUs is said once. */
	for (unsigned i = 0; i < info->nnotes; i++)
		if (strcmp(info->notes[i], buf) == 0)
			return;
	s = strdup(buf);
	p = s ? realloc(info->notes, (info->nnotes + 1) * sizeof(*p)) : NULL;
	if (!p) {
		free(s);
		info->notes_dropped++;
		return;
	}
	info->notes = p;
	info->notes[info->nnotes++] = s;
}

/* --- small helpers of the leaf decoders --- */

void tc_tlb_add(struct tacho_cpu_info *info, struct tacho_cpu_core_type *ct,
		const struct tacho_cpu_tlb *t)
{
	(void)info;
	if (ct->ntlbs < TACHO_CPU_MAX_TLBS)
		ct->tlbs[ct->ntlbs++] = *t;
}

/* AMD's associativity code for L2 and L3 in 0x8000_0006 (APM Vol. 3, Fn8000_0006,
 * "L2/L3 cache and TLB associativity field encoding"). 0 = disabled, 9 = "see
 * 0x8000_001D", 0xF = fully associative. */
static const unsigned amd_assoc[16] = {
	[0x0] = 0, [0x1] = 1, [0x2] = 2, [0x3] = 3, [0x4] = 4, [0x5] = 6, [0x6] = 8, [0x7] = 0,
	[0x8] = 16, [0x9] = 0, [0xa] = 32, [0xb] = 48, [0xc] = 64, [0xd] = 96, [0xe] = 128,
	[0xf] = 0,
};

unsigned tc_amd_ways(unsigned code)
{
	return code < 16 ? amd_assoc[code] : 0;
}

unsigned tc_ceil_log2(unsigned v)
{
	unsigned s = 0;

	while (s < 32 && (1ull << s) < v)
		s++;
	return s;
}
