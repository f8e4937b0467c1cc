/* leaf2.c - CPUID leaf 2: the descriptor bytes of Intel's older cache and TLB report.
 * The table is the Intel SDM Vol. 2A, CPUID, Table 3-12 "Encoding of CPUID Leaf 2
 * Descriptors", plus the descriptors that earlier editions listed and later ones
 * dropped (0x39-0x3F, 0x73: Pentium 4 and Celeron parts that still report them). */
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"

#define D  TACHO_CACHE_DATA
#define I  TACHO_CACHE_INSTRUCTION
#define U  TACHO_CACHE_UNIFIED
#define FULL TC_WAYS_FULL
#define P4K TACHO_PAGE_4K
#define P2M TACHO_PAGE_2M
#define P4M TACHO_PAGE_4M
#define P1G TACHO_PAGE_1G

#define CACHE(lvl, t, kib, w, ln, sec, txt) \
	{ .kind = TC_LEAF2_CACHE, .level = lvl, .type = t, .size_kib = kib, .ways = w, \
	  .line = ln, .sectors = sec, .text = txt }
#define TLB(lvl, t, pg, n, w, txt) \
	{ .kind = TC_LEAF2_TLB, .level = lvl, .type = t, .pages = pg, .entries = n, .ways = w, \
	  .text = txt }
#define TRACE(kuops, w, txt) \
	{ .kind = TC_LEAF2_TRACE, .size_kib = kuops, .ways = w, .text = txt }

static const struct tc_leaf2_desc descs[256] = {
	[0x00] = { .kind = TC_LEAF2_NONE, .text = "null descriptor" },
	[0x01] = TLB(1, TACHO_TLB_INSTRUCTION, P4K, 32, 4, "ITLB: 4 KiB pages, 4-way, 32 entries"),
	[0x02] = TLB(1, TACHO_TLB_INSTRUCTION, P4M, 2, FULL, "ITLB: 4 MiB pages, fully associative, 2 entries"),
	[0x03] = TLB(1, TACHO_TLB_DATA, P4K, 64, 4, "DTLB: 4 KiB pages, 4-way, 64 entries"),
	[0x04] = TLB(1, TACHO_TLB_DATA, P4M, 8, 4, "DTLB: 4 MiB pages, 4-way, 8 entries"),
	[0x05] = TLB(1, TACHO_TLB_DATA, P4M, 32, 4, "DTLB1: 4 MiB pages, 4-way, 32 entries"),
	[0x06] = CACHE(1, I, 8, 4, 32, 0, "L1i: 8 KiB, 4-way, 32-byte lines"),
	[0x08] = CACHE(1, I, 16, 4, 32, 0, "L1i: 16 KiB, 4-way, 32-byte lines"),
	[0x09] = CACHE(1, I, 32, 4, 64, 0, "L1i: 32 KiB, 4-way, 64-byte lines"),
	[0x0a] = CACHE(1, D, 8, 2, 32, 0, "L1d: 8 KiB, 2-way, 32-byte lines"),
	[0x0b] = TLB(1, TACHO_TLB_INSTRUCTION, P4M, 4, 4, "ITLB: 4 MiB pages, 4-way, 4 entries"),
	[0x0c] = CACHE(1, D, 16, 4, 32, 0, "L1d: 16 KiB, 4-way, 32-byte lines"),
	[0x0d] = CACHE(1, D, 16, 4, 64, 0, "L1d: 16 KiB, 4-way, 64-byte lines (ECC)"),
	[0x0e] = CACHE(1, D, 24, 6, 64, 0, "L1d: 24 KiB, 6-way, 64-byte lines"),
	[0x1d] = CACHE(2, U, 128, 2, 64, 0, "L2: 128 KiB, 2-way, 64-byte lines"),
	[0x21] = CACHE(2, U, 256, 8, 64, 0, "L2: 256 KiB, 8-way, 64-byte lines"),
	[0x22] = CACHE(3, U, 512, 4, 64, 2, "L3: 512 KiB, 4-way, 64-byte lines, 2 lines per sector"),
	[0x23] = CACHE(3, U, 1024, 8, 64, 2, "L3: 1 MiB, 8-way, 64-byte lines, 2 lines per sector"),
	[0x24] = CACHE(2, U, 1024, 16, 64, 0, "L2: 1 MiB, 16-way, 64-byte lines"),
	[0x25] = CACHE(3, U, 2048, 8, 64, 2, "L3: 2 MiB, 8-way, 64-byte lines, 2 lines per sector"),
	[0x29] = CACHE(3, U, 4096, 8, 64, 2, "L3: 4 MiB, 8-way, 64-byte lines, 2 lines per sector"),
	[0x2c] = CACHE(1, D, 32, 8, 64, 0, "L1d: 32 KiB, 8-way, 64-byte lines"),
	[0x30] = CACHE(1, I, 32, 8, 64, 0, "L1i: 32 KiB, 8-way, 64-byte lines"),
	/* 0x39-0x3F: earlier SDM editions (sectored L2 of Celeron and Pentium 4 parts) */
	[0x39] = CACHE(2, U, 128, 4, 64, 2, "L2: 128 KiB, 4-way, 64-byte lines, sectored"),
	[0x3a] = CACHE(2, U, 192, 6, 64, 2, "L2: 192 KiB, 6-way, 64-byte lines, sectored"),
	[0x3b] = CACHE(2, U, 128, 2, 64, 2, "L2: 128 KiB, 2-way, 64-byte lines, sectored"),
	[0x3c] = CACHE(2, U, 256, 4, 64, 2, "L2: 256 KiB, 4-way, 64-byte lines, sectored"),
	[0x3d] = CACHE(2, U, 384, 6, 64, 2, "L2: 384 KiB, 6-way, 64-byte lines, sectored"),
	[0x3e] = CACHE(2, U, 512, 4, 64, 2, "L2: 512 KiB, 4-way, 64-byte lines, sectored"),
	[0x3f] = CACHE(2, U, 256, 2, 64, 0, "L2: 256 KiB, 2-way, 64-byte lines"),
	[0x40] = { .kind = TC_LEAF2_NO_L2_L3,
		   .text = "no L2 cache, or, when a valid L2 is reported, no L3 cache" },
	[0x41] = CACHE(2, U, 128, 4, 32, 0, "L2: 128 KiB, 4-way, 32-byte lines"),
	[0x42] = CACHE(2, U, 256, 4, 32, 0, "L2: 256 KiB, 4-way, 32-byte lines"),
	[0x43] = CACHE(2, U, 512, 4, 32, 0, "L2: 512 KiB, 4-way, 32-byte lines"),
	[0x44] = CACHE(2, U, 1024, 4, 32, 0, "L2: 1 MiB, 4-way, 32-byte lines"),
	[0x45] = CACHE(2, U, 2048, 4, 32, 0, "L2: 2 MiB, 4-way, 32-byte lines"),
	[0x46] = CACHE(3, U, 4096, 4, 64, 0, "L3: 4 MiB, 4-way, 64-byte lines"),
	[0x47] = CACHE(3, U, 8192, 8, 64, 0, "L3: 8 MiB, 8-way, 64-byte lines"),
	[0x48] = CACHE(2, U, 3072, 12, 64, 0, "L2: 3 MiB, 12-way, 64-byte lines"),
	/* 0x49: the level depends on the part; tc_leaf2_decode fixes it (see there) */
	[0x49] = CACHE(2, U, 4096, 16, 64, 0,
		       "L2: 4 MiB, 16-way, 64-byte lines (L3 on Xeon MP family 0Fh model 06h)"),
	[0x4a] = CACHE(3, U, 6144, 12, 64, 0, "L3: 6 MiB, 12-way, 64-byte lines"),
	[0x4b] = CACHE(3, U, 8192, 16, 64, 0, "L3: 8 MiB, 16-way, 64-byte lines"),
	[0x4c] = CACHE(3, U, 12288, 12, 64, 0, "L3: 12 MiB, 12-way, 64-byte lines"),
	[0x4d] = CACHE(3, U, 16384, 16, 64, 0, "L3: 16 MiB, 16-way, 64-byte lines"),
	[0x4e] = CACHE(2, U, 6144, 24, 64, 0, "L2: 6 MiB, 24-way, 64-byte lines"),
	[0x4f] = TLB(1, TACHO_TLB_INSTRUCTION, P4K, 32, 0, "ITLB: 4 KiB pages, 32 entries"),
	[0x50] = TLB(1, TACHO_TLB_INSTRUCTION, P4K | P2M | P4M, 64, 0,
		     "ITLB: 4 KiB and 2/4 MiB pages, 64 entries"),
	[0x51] = TLB(1, TACHO_TLB_INSTRUCTION, P4K | P2M | P4M, 128, 0,
		     "ITLB: 4 KiB and 2/4 MiB pages, 128 entries"),
	[0x52] = TLB(1, TACHO_TLB_INSTRUCTION, P4K | P2M | P4M, 256, 0,
		     "ITLB: 4 KiB and 2/4 MiB pages, 256 entries"),
	[0x55] = TLB(1, TACHO_TLB_INSTRUCTION, P2M | P4M, 7, FULL,
		     "ITLB: 2/4 MiB pages, fully associative, 7 entries"),
	[0x56] = TLB(1, TACHO_TLB_DATA, P4M, 16, 4, "DTLB0: 4 MiB pages, 4-way, 16 entries"),
	[0x57] = TLB(1, TACHO_TLB_DATA, P4K, 16, 4, "DTLB0: 4 KiB pages, 4-way, 16 entries"),
	[0x59] = TLB(1, TACHO_TLB_DATA, P4K, 16, FULL, "DTLB0: 4 KiB pages, fully associative, 16 entries"),
	[0x5a] = TLB(1, TACHO_TLB_DATA, P2M | P4M, 32, 4, "DTLB0: 2/4 MiB pages, 4-way, 32 entries"),
	[0x5b] = TLB(1, TACHO_TLB_DATA, P4K | P4M, 64, 0, "DTLB: 4 KiB and 4 MiB pages, 64 entries"),
	[0x5c] = TLB(1, TACHO_TLB_DATA, P4K | P4M, 128, 0, "DTLB: 4 KiB and 4 MiB pages, 128 entries"),
	[0x5d] = TLB(1, TACHO_TLB_DATA, P4K | P4M, 256, 0, "DTLB: 4 KiB and 4 MiB pages, 256 entries"),
	[0x60] = CACHE(1, D, 16, 8, 64, 0, "L1d: 16 KiB, 8-way, 64-byte lines"),
	[0x61] = TLB(1, TACHO_TLB_INSTRUCTION, P4K, 48, FULL, "ITLB: 4 KiB pages, fully associative, 48 entries"),
	/* 0x63 has a second array (1 GiB pages, 4-way, 4 entries): see tc_leaf2_decode */
	[0x63] = TLB(1, TACHO_TLB_DATA, P2M | P4M, 32, 4,
		     "DTLB: 2/4 MiB pages, 4-way, 32 entries, and 1 GiB pages, 4-way, 4 entries"),
	[0x64] = TLB(1, TACHO_TLB_DATA, P4K, 512, 4, "DTLB: 4 KiB pages, 4-way, 512 entries"),
	[0x66] = CACHE(1, D, 8, 4, 64, 0, "L1d: 8 KiB, 4-way, 64-byte lines"),
	[0x67] = CACHE(1, D, 16, 4, 64, 0, "L1d: 16 KiB, 4-way, 64-byte lines"),
	[0x68] = CACHE(1, D, 32, 4, 64, 0, "L1d: 32 KiB, 4-way, 64-byte lines"),
	/* 0x6A-0x6D are TLBs although the SDM's table files them under "Cache" */
	[0x6a] = TLB(1, TACHO_TLB_DATA, P4K, 64, 8, "uTLB: 4 KiB pages, 8-way, 64 entries"),
	[0x6b] = TLB(1, TACHO_TLB_DATA, P4K, 256, 8, "DTLB: 4 KiB pages, 8-way, 256 entries"),
	[0x6c] = TLB(1, TACHO_TLB_DATA, P2M | P4M, 128, 8, "DTLB: 2/4 MiB pages, 8-way, 128 entries"),
	[0x6d] = TLB(1, TACHO_TLB_DATA, P1G, 16, FULL, "DTLB: 1 GiB pages, fully associative, 16 entries"),
	[0x70] = TRACE(12, 8, "trace cache: 12 K-uops, 8-way"),
	[0x71] = TRACE(16, 8, "trace cache: 16 K-uops, 8-way"),
	[0x72] = TRACE(32, 8, "trace cache: 32 K-uops, 8-way"),
	[0x73] = TRACE(64, 8, "trace cache: 64 K-uops, 8-way"),
	[0x76] = TLB(1, TACHO_TLB_INSTRUCTION, P2M | P4M, 8, FULL,
		     "ITLB: 2/4 MiB pages, fully associative, 8 entries"),
	[0x78] = CACHE(2, U, 1024, 4, 64, 0, "L2: 1 MiB, 4-way, 64-byte lines"),
	[0x79] = CACHE(2, U, 128, 8, 64, 2, "L2: 128 KiB, 8-way, 64-byte lines, 2 lines per sector"),
	[0x7a] = CACHE(2, U, 256, 8, 64, 2, "L2: 256 KiB, 8-way, 64-byte lines, 2 lines per sector"),
	[0x7b] = CACHE(2, U, 512, 8, 64, 2, "L2: 512 KiB, 8-way, 64-byte lines, 2 lines per sector"),
	[0x7c] = CACHE(2, U, 1024, 8, 64, 2, "L2: 1 MiB, 8-way, 64-byte lines, 2 lines per sector"),
	[0x7d] = CACHE(2, U, 2048, 8, 64, 0, "L2: 2 MiB, 8-way, 64-byte lines"),
	[0x7f] = CACHE(2, U, 512, 2, 64, 0, "L2: 512 KiB, 2-way, 64-byte lines"),
	[0x80] = CACHE(2, U, 512, 8, 64, 0, "L2: 512 KiB, 8-way, 64-byte lines"),
	[0x82] = CACHE(2, U, 256, 8, 32, 0, "L2: 256 KiB, 8-way, 32-byte lines"),
	[0x83] = CACHE(2, U, 512, 8, 32, 0, "L2: 512 KiB, 8-way, 32-byte lines"),
	[0x84] = CACHE(2, U, 1024, 8, 32, 0, "L2: 1 MiB, 8-way, 32-byte lines"),
	[0x85] = CACHE(2, U, 2048, 8, 32, 0, "L2: 2 MiB, 8-way, 32-byte lines"),
	[0x86] = CACHE(2, U, 512, 4, 64, 0, "L2: 512 KiB, 4-way, 64-byte lines"),
	[0x87] = CACHE(2, U, 1024, 8, 64, 0, "L2: 1 MiB, 8-way, 64-byte lines"),
	[0xa0] = TLB(1, TACHO_TLB_DATA, P4K, 32, FULL, "DTLB: 4 KiB pages, fully associative, 32 entries"),
	[0xb0] = TLB(1, TACHO_TLB_INSTRUCTION, P4K, 128, 4, "ITLB: 4 KiB pages, 4-way, 128 entries"),
	/* 0xB1: 8 entries for 2 MiB pages, or 4 for 4 MiB pages (one array, two modes) */
	[0xb1] = TLB(1, TACHO_TLB_INSTRUCTION, P2M, 8, 4,
		     "ITLB: 2 MiB pages, 4-way, 8 entries, or 4 MiB pages, 4-way, 4 entries"),
	[0xb2] = TLB(1, TACHO_TLB_INSTRUCTION, P4K, 64, 4, "ITLB: 4 KiB pages, 4-way, 64 entries"),
	[0xb3] = TLB(1, TACHO_TLB_DATA, P4K, 128, 4, "DTLB: 4 KiB pages, 4-way, 128 entries"),
	[0xb4] = TLB(1, TACHO_TLB_DATA, P4K, 256, 4, "DTLB1: 4 KiB pages, 4-way, 256 entries"),
	[0xb5] = TLB(1, TACHO_TLB_INSTRUCTION, P4K, 64, 8, "ITLB: 4 KiB pages, 8-way, 64 entries"),
	[0xb6] = TLB(1, TACHO_TLB_INSTRUCTION, P4K, 128, 8, "ITLB: 4 KiB pages, 8-way, 128 entries"),
	[0xba] = TLB(1, TACHO_TLB_DATA, P4K, 64, 4, "DTLB1: 4 KiB pages, 4-way, 64 entries"),
	[0xc0] = TLB(1, TACHO_TLB_DATA, P4K | P4M, 8, 4, "DTLB: 4 KiB and 4 MiB pages, 4-way, 8 entries"),
	[0xc1] = TLB(2, TACHO_TLB_UNIFIED, P4K | P2M, 1024, 8,
		     "STLB: 4 KiB and 2 MiB pages, 8-way, 1024 entries"),
	[0xc2] = TLB(1, TACHO_TLB_DATA, P4K | P2M, 16, 4, "DTLB: 4 KiB and 2 MiB pages, 4-way, 16 entries"),
	/* 0xC3 also has 1 GiB pages, 4-way, 16 entries: see tc_leaf2_decode */
	[0xc3] = TLB(2, TACHO_TLB_UNIFIED, P4K | P2M, 1536, 6,
		     "STLB: 4 KiB and 2 MiB pages, 6-way, 1536 entries, and 1 GiB pages, 4-way, 16 entries"),
	[0xc4] = TLB(1, TACHO_TLB_DATA, P2M | P4M, 32, 4, "DTLB: 2/4 MiB pages, 4-way, 32 entries"),
	[0xca] = TLB(2, TACHO_TLB_UNIFIED, P4K, 512, 4, "STLB: 4 KiB pages, 4-way, 512 entries"),
	[0xd0] = CACHE(3, U, 512, 4, 64, 0, "L3: 512 KiB, 4-way, 64-byte lines"),
	[0xd1] = CACHE(3, U, 1024, 4, 64, 0, "L3: 1 MiB, 4-way, 64-byte lines"),
	[0xd2] = CACHE(3, U, 2048, 4, 64, 0, "L3: 2 MiB, 4-way, 64-byte lines"),
	[0xd6] = CACHE(3, U, 1024, 8, 64, 0, "L3: 1 MiB, 8-way, 64-byte lines"),
	[0xd7] = CACHE(3, U, 2048, 8, 64, 0, "L3: 2 MiB, 8-way, 64-byte lines"),
	[0xd8] = CACHE(3, U, 4096, 8, 64, 0, "L3: 4 MiB, 8-way, 64-byte lines"),
	[0xdc] = CACHE(3, U, 1536, 12, 64, 0, "L3: 1.5 MiB, 12-way, 64-byte lines"),
	[0xdd] = CACHE(3, U, 3072, 12, 64, 0, "L3: 3 MiB, 12-way, 64-byte lines"),
	[0xde] = CACHE(3, U, 6144, 12, 64, 0, "L3: 6 MiB, 12-way, 64-byte lines"),
	[0xe2] = CACHE(3, U, 2048, 16, 64, 0, "L3: 2 MiB, 16-way, 64-byte lines"),
	[0xe3] = CACHE(3, U, 4096, 16, 64, 0, "L3: 4 MiB, 16-way, 64-byte lines"),
	[0xe4] = CACHE(3, U, 8192, 16, 64, 0, "L3: 8 MiB, 16-way, 64-byte lines"),
	[0xea] = CACHE(3, U, 12288, 24, 64, 0, "L3: 12 MiB, 24-way, 64-byte lines"),
	[0xeb] = CACHE(3, U, 18432, 24, 64, 0, "L3: 18 MiB, 24-way, 64-byte lines"),
	[0xec] = CACHE(3, U, 24576, 24, 64, 0, "L3: 24 MiB, 24-way, 64-byte lines"),
	[0xf0] = { .kind = TC_LEAF2_PREFETCH, .line = 64, .text = "64-byte prefetching" },
	[0xf1] = { .kind = TC_LEAF2_PREFETCH, .line = 128, .text = "128-byte prefetching" },
	[0xfe] = { .kind = TC_LEAF2_NO_TLB_INFO,
		   .text = "no TLB descriptors in leaf 2: use leaf 0x18" },
	[0xff] = { .kind = TC_LEAF2_USE_LEAF4,
		   .text = "no cache descriptors in leaf 2: use leaf 4" },
};

const struct tc_leaf2_desc *tc_leaf2_lookup(uint8_t desc)
{
	const struct tc_leaf2_desc *e = &descs[desc];

	/* A zero entry other than 0x00 is a byte the SDM does not define. */
	if (desc != 0 && e->kind == TC_LEAF2_NONE)
		return NULL;
	return e;
}

static void add_cache(struct tacho_cpu_info *info, struct tacho_cpu_core_type *ct,
		      const struct tc_leaf2_desc *e, unsigned level, uint8_t b)
{
	struct tacho_cpu_cache *c;

	for (unsigned i = 0; i < ct->ncaches; i++)
		if (ct->caches[i].level == level && ct->caches[i].type == e->type) {
			tc_cpu_note(info, "leaf 2 reports two L%u %s caches (descriptors %#04x "
				    "and %#04x); keeping the first", level,
				    tacho_cache_type_name(e->type), ct->caches[i].descriptor, b);
			return;
		}
	if (ct->ncaches == TACHO_CPU_MAX_CACHES)
		return;
	c = &ct->caches[ct->ncaches++];
	memset(c, 0, sizeof(*c));
	c->level = level;
	c->type = e->type;
	c->size = (uint64_t)e->size_kib * 1024;
	c->fully_assoc = e->ways == FULL;
	c->ways = c->fully_assoc ? 0 : e->ways;
	c->line_size = e->line;
	if (c->ways && c->line_size)
		c->sets = (unsigned)(c->size / ((uint64_t)c->ways * c->line_size));
	c->instances = -1;
	c->inclusive = -1;
	c->source = TACHO_SRC_LEAF_2;
	c->descriptor = b;
}

static void add_tlb(struct tacho_cpu_info *info, struct tacho_cpu_core_type *ct, unsigned level,
		    unsigned type, unsigned pages, unsigned entries, unsigned ways, uint8_t b)
{
	struct tacho_cpu_tlb t = {
		.level = level, .type = type, .page_sizes = pages, .entries = entries,
		.fully_assoc = ways == FULL, .ways = ways == FULL ? 0 : ways,
		.source = TACHO_SRC_LEAF_2, .descriptor = b,
	};
	tc_tlb_add(info, ct, &t);
}

unsigned tc_leaf2_decode(const struct tacho_cpuid_dump *d, unsigned cpu, struct tacho_cpu_info *info,
		     struct tacho_cpu_core_type *ct, bool caches)
{
	struct tacho_cpuid_regs r;
	uint32_t regs[4];
	unsigned flags = 0;

	if (!tc_query_leaf(d, cpu, 2, 0, &r))
		return 0;
	/* AL is how many times leaf 2 must be executed to see every descriptor; every
	 * processor since the Pentium 4 says 1. A dump keeps one answer only. */
	if ((r.eax & 0xff) > 1)
		tc_cpu_note(info, "leaf 2 asks to be executed %u times; the dump holds one answer, "
			    "so some descriptors may be missing", r.eax & 0xff);
	regs[0] = r.eax & ~0xffu;
	regs[1] = r.ebx;
	regs[2] = r.ecx;
	regs[3] = r.edx;
	for (unsigned k = 0; k < 4; k++) {
		/* Bit 31 set: this register holds no valid descriptors (SDM, leaf 2). */
		if (regs[k] & 0x80000000u)
			continue;
		for (unsigned byte = 0; byte < 4; byte++) {
			uint8_t b = (uint8_t)(regs[k] >> (8 * byte));
			const struct tc_leaf2_desc *e;

			if (b == 0)
				continue;
			e = tc_leaf2_lookup(b);
			if (!e) {
				tc_cpu_note(info, "leaf 2 descriptor %#04x is not in the SDM's table",
					    b);
				continue;
			}
			switch (e->kind) {
			case TC_LEAF2_CACHE: {
				unsigned level = e->level;
				/* 0x49 is an L3 on the Xeon MP of family 0Fh model 06h and an
				 * L2 everywhere else (SDM Table 3-12). */
				if (b == 0x49 && info->vendor == TACHO_VENDOR_INTEL &&
				    info->family == 0xf && info->model == 6)
					level = 3;
				if (caches)
					add_cache(info, ct, e, level, b);
				break;
			}
			case TC_LEAF2_TLB:
				add_tlb(info, ct, e->level, e->type, e->pages, e->entries, e->ways, b);
				if (b == 0x63)
					add_tlb(info, ct, 1, TACHO_TLB_DATA, P1G, 4, 4, b);
				else if (b == 0xc3)
					add_tlb(info, ct, 2, TACHO_TLB_UNIFIED, P1G, 16, 4, b);
				break;
			case TC_LEAF2_TRACE:
				if (caches)
					tc_cpu_note(info, "leaf 2 descriptor %#04x: %s", b, e->text);
				break;
			case TC_LEAF2_USE_LEAF4:
				flags |= TC_L2F_LEAF4;
				break;
			case TC_LEAF2_NO_L2_L3:
				flags |= TC_L2F_NO_L2L3;
				break;
			case TC_LEAF2_NO_TLB_INFO:
			case TC_LEAF2_PREFETCH:
			case TC_LEAF2_NONE:
				break;
			}
		}
	}
	return flags;
}
