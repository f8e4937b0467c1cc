/* recfile-int.h - what the record file's writer (recfile-write.c) and reader
 * (recfile-read.c) share: the payload layouts, the flags of packed samples and marks,
 * and the varint and zigzag codings (docs/record-format.md). */
#ifndef TACHO_RECORD_RECFILE_INT_H
#define TACHO_RECORD_RECFILE_INT_H

#include <string.h>

#include "record/recfile.h"


/* Payload layouts. Every field is naturally aligned and every struct a multiple of 8
 * bytes, so the layout is the same for every x86-64 compiler; the file is little-endian
 * (the byte order of the machines that write it; the magic catches a big-endian reader). */
struct p_event {
	uint32_t index, type;
	uint64_t config, sample_type, period;
	uint32_t flags, pad;
};
struct p_period {
	uint32_t event, pad;
	uint64_t period, time;
};
struct p_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff, time;
	uint32_t prot, flags;
	uint8_t build_id_size, pad[3];
	uint8_t build_id[TC_BUILD_ID_MAX];
};
struct p_comm {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t exec, pad;
};
struct p_cgroup {
	uint32_t pid, pad;
	uint64_t time;
};
struct p_task {
	uint32_t kind, pid, ppid, tid, ptid, pad;
	uint64_t time;
};
struct p_sample {
	uint64_t time, ip, addr, period;
	uint32_t pid, tid, cpu;
	uint16_t event, misc;
	uint32_t nr, pad;
};
struct p_ustack {
	uint64_t abi, mask;
	uint32_t nregs, stack_len;
};
struct p_branch {
	uint32_t nr, pad;
};
struct p_lost {
	uint64_t lost, time;
	uint32_t cpu, pad;
};
struct p_throttle {
	uint64_t time;
	uint32_t cpu, throttled;
};
struct p_image {
	uint8_t build_id_size, pad[3];
	uint8_t build_id[TC_BUILD_ID_MAX];
	uint32_t name_len, pad2;
	uint64_t data_len;
};
struct p_finish {
	uint64_t samples, lost, time;
	int32_t status;
	uint32_t pad;
};

struct p_channel {
	uint32_t index, name_len;
};

struct p_mark {
	uint64_t time, tsc, value;
	uint32_t pid, tid, channel, kind;
};

struct p_mark_drops {
	uint64_t ring_full, no_ring, no_channel, time;
	/* since the damage was counted: a shorter record is read with these 0 */
	uint64_t damaged_entries, damaged_rings, damaged_header;
};
#define MARK_DROPS_V1 tc_offsetofend(struct p_mark_drops, time)

/* TPFORMAT and RAW: the event's index and the length of the bytes that follow */
struct p_blob {
	uint32_t event, len;
};

/* SAMPLES: how many samples follow (each encoded as docs/record-format.md says) */
struct p_samples {
	uint32_t count, pad;
};

_Static_assert(sizeof(struct p_event) == 40, "p_event layout");
_Static_assert(sizeof(struct p_mmap) == 72, "p_mmap layout");
_Static_assert(sizeof(struct p_sample) == 56, "p_sample layout");
_Static_assert(sizeof(struct p_ustack) == 24, "p_ustack layout");
_Static_assert(sizeof(struct p_branch) == 8, "p_branch layout");
_Static_assert(sizeof(struct p_image) == 40, "p_image layout");
_Static_assert(sizeof(struct p_finish) == 32, "p_finish layout");


/* A block is closed before a sample that could take it past this: the reader checks a
 * block's CRC before its first sample, and a cut file loses at most its last block */
#define BLOCK_SOFT (256u << 10)

/* The sample flags: which fields follow the time and IP deltas */
#define SF_TASK   0x01u   /* pid, tid */
#define SF_CPU    0x02u   /* cpu + 1 (0: unknown) */
#define SF_EVENT  0x04u
#define SF_PERIOD 0x08u
#define SF_MISC   0x10u
#define SF_ADDR   0x20u   /* the data address's delta */
#define SF_CHAIN  0x40u   /* nr, zeros to 8-byte alignment, nr u64 */
#define SF_CHAIN_REF 0x80u /* version 4: nr, and where an earlier chain is (8-byte words
			    * back from this sample's first byte rounded down to 8) */
#define SF_ALL_V3 0x7fu
#define SF_ALL    0xffu
/* Version 5 gives the two top bits other meanings (its writer writes no chain in full
 * and no reference to a chain's bytes): */
#define SF_NODE   0x40u   /* the chain in the tree: zigzag(base - previous node), the
			   * count of new nodes under base, a frame delta for each */
#define SF_TREE_RESET 0x80u /* the tree is forgotten before this sample's chain */

/* What a version 5 sample's IP is written against: the first entry of its chain that is
 * no PERF_CONTEXT_* marker (the kernel puts the IP there: the IP then takes a byte),
 * else the previous sample's IP */
static inline uint64_t ip_base(const uint64_t *chain, uint32_t nr, uint64_t prev)
{
	for (uint32_t i = 0; i < nr; i++)
		if (chain[i] < (uint64_t)-4095)   /* PERF_CONTEXT_MAX */
			return chain[i];
	return prev;
}

/* The writer forgets its tree when it holds more nodes than this (16 bytes each, and a
 * map entry) */
#define NODES_MAX (4u << 20)

/* What a reader builds (chains, unpacked stacks, its tree) may not pass this many times
 * the file's bytes plus MEM_FLOOR: a file that would is corrupt (a bomb), not a reason
 * to fill the memory */
#define MEM_RATIO 128u
#define MEM_FLOOR (128ull << 20)

/* ZSTACK: the USTACK fields, the compressed bytes' length, and whether the record
 * starts the stream (1) or goes on with the one before (0) */
struct p_zstack {
	uint64_t abi, mask;
	uint32_t nregs, stack_len;
	uint32_t zlen, first;
};
_Static_assert(sizeof(struct p_zstack) == 32, "p_zstack layout");

/* The writer forgets its chains when their copies take more than this (a long recording
 * of ever new chains): they are written in full again */
#define CHAIN_COPIES_MAX (64u << 20)

/* The mark flags: which fields follow the time, TSC and value deltas */
#define MF_TASK    0x01u   /* pid, tid */
#define MF_CHANNEL 0x02u
#define MF_KIND    0x04u
#define MF_ALL     0x07u

static const unsigned char zeros8[8] __attribute__((unused));

/* LEB128 (7 bits a byte, low first), at most 10 bytes */
static inline size_t put_varint(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* A difference (mod 2^64) as a small number whether it is up or down */
static inline uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (0 - (d >> 63));
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static inline void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

#endif
