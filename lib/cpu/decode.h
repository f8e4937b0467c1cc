/* decode.h - what the files of the CPUID decoder share. decode.c drives the leaf
 * decoders; they may call leaf2.c and info.c, and info.c calls none of them, so the
 * calls form a tree (no leaf decoder uses a symbol of decode.o). */
#ifndef TACHO_CPU_DECODE_H
#define TACHO_CPU_DECODE_H

#include "cpu/cpuid.h"
#include "tacho/cpu.h"

/* A CPUID query that honours maximum leaves; false when the leaf is absent. */
static inline bool tc_query_leaf(const struct tacho_cpuid_dump *d, unsigned cpu, uint32_t leaf,
				 uint32_t sub, struct tacho_cpuid_regs *r)
{
	if (tacho_cpuid_query(d, cpu, leaf, sub, r) == 0)
		return true;
	*r = (struct tacho_cpuid_regs){ 0, 0, 0, 0 };
	return false;
}

static inline uint32_t tc_bits(uint32_t v, unsigned hi, unsigned lo)
{
	return (v >> lo) & (uint32_t)((2ull << (hi - lo)) - 1);
}

/* Appends a note to info (info.c); the same note twice is kept once. Out of memory
 * counts it in info->notes_dropped. */
void tc_cpu_note(struct tacho_cpu_info *info, const char *fmt, ...) TC_PRINTF(2, 3);

/* Sets the feature bits of one CPU (features.c). */
void tc_cpu_features(const struct tacho_cpuid_dump *d, unsigned cpu, uint64_t *bits);

/* Leaf 2 (leaf2.c). One descriptor's meaning. */
enum tc_leaf2_kind {
	TC_LEAF2_NONE = 0,       /* null descriptor */
	TC_LEAF2_CACHE,
	TC_LEAF2_TLB,
	TC_LEAF2_TRACE,          /* trace cache, size in K-uops */
	TC_LEAF2_PREFETCH,       /* prefetch size in bytes (in line) */
	TC_LEAF2_NO_L2_L3,       /* 0x40: no L2, or no L3 if an L2 is present */
	TC_LEAF2_USE_LEAF4,      /* 0xFF */
	TC_LEAF2_NO_TLB_INFO,    /* 0xF0-ish "no TLB information in leaf 2, use 0x18" (0xFE) */
};
struct tc_leaf2_desc {
	enum tc_leaf2_kind kind;
	unsigned level;        /* cache level; for TLBs 1 or 2 (shared second level) */
	unsigned type;         /* enum tacho_cache_type or enum tacho_tlb_type */
	unsigned size_kib;     /* caches; trace: K-uops */
	unsigned ways;         /* 0xff = fully associative */
	unsigned line;         /* line size, or prefetch bytes */
	unsigned sectors;      /* lines per sector (informational) */
	unsigned pages;        /* TLB: TACHO_PAGE_* */
	unsigned entries;      /* TLB */
	const char *text;      /* the SDM's words, shortened */
};
#define TC_WAYS_FULL 0xffu
const struct tc_leaf2_desc *tc_leaf2_lookup(uint8_t desc);
/* Decodes leaf 2 of one CPU into caches and TLBs of ct. Returns TC_L2F_* flags. */
#define TC_L2F_LEAF4   1u   /* a 0xFF descriptor: "use leaf 4" */
#define TC_L2F_NO_L2L3 2u   /* a 0x40 descriptor: no L2 (or no L3 beside a valid L2) */
unsigned tc_leaf2_decode(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		     struct tacho_cpu_core_type *ct, bool caches);

/* Caches (cache.c): fills ct->caches for CPU cpu. */
void tc_cpu_caches(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		   struct tacho_cpu_core_type *ct);
/* Fixes instance counts once the topology is known. */
void tc_cpu_cache_instances(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info);
/* Ways for AMD's L2/L3/TLB associativity code (0 = disabled, reserved or full; info.c). */
unsigned tc_amd_ways(unsigned code);
/* The cache-ID shift of a leaf-4 style sharing count (info.c). */
unsigned tc_ceil_log2(unsigned v);

/* TLBs (tlb.c); adding one to a core type, up to TACHO_CPU_MAX_TLBS (info.c). */
void tc_cpu_tlbs(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		 struct tacho_cpu_core_type *ct);
void tc_tlb_add(struct tacho_cpu_info *info, struct tacho_cpu_core_type *ct, const struct tacho_cpu_tlb *t);

/* Topology and core types (topology.c). Allocates info->cpus; -ENOMEM. */
int tc_cpu_topology(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info);

/* Microarchitecture names (uarch.c). */
void tc_cpu_uarch(struct tacho_cpu_info *info);
const char *tc_uarch_of_core(const struct tacho_cpu_info *info, enum tacho_core_kind kind,
			     uint32_t native_model);

/* PMU (pmu.c) and TSC (tsc.c). */
void tc_cpu_pmu(const struct tacho_cpuid_dump *d, unsigned cpu, const struct tacho_cpu_info *info,
		struct tacho_cpu_pmu *pmu);
void tc_cpu_tsc(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info);

#endif
