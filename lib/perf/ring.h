/* ring.h - the mmap ring buffer of a sampling perf event, and the parsing of the records
 * the kernel writes into it (perf_event_open(2), "MMAP layout" and "Overflow handling"). */
#ifndef TACHO_PERF_RING_H
#define TACHO_PERF_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* One ring: the metadata page (struct perf_event_mmap_page) followed by 2^n data pages.
 * The kernel advances data_head; we read records from data_tail to data_head and then
 * store data_tail so the kernel may reuse the space. */
struct tc_ring {
	void *base;                         /* start of the mapping (the metadata page) */
	size_t map_len;                     /* bytes mapped; 0 when base is caller memory */
	struct perf_event_mmap_page *meta;
	unsigned char *data;                /* the data area */
	uint64_t size;                      /* bytes in the data area, a power of two */
	unsigned char *tmp;                 /* copy of a record that wraps around the end */
	uint64_t records;                   /* records delivered so far */
	uint64_t wraps;                     /* of which straddled the end of the buffer */
};

/* Maps the ring of a sampling event: 1 + data_pages pages, data_pages a power of two.
 * 0 or -errno (-EINVAL when data_pages is not a power of two; -EPERM past
 * perf_event_mlock_kb for an unprivileged user). */
int tc_ring_mmap(struct tc_ring *r, int fd, unsigned data_pages);
/* Uses caller memory laid out like a mapping (a metadata area of meta_len bytes, then
 * data_size bytes, data_size a power of two): tests build synthetic rings with it.
 * The caller keeps ownership of mem. 0 or -EINVAL / -ENOMEM. */
int tc_ring_init_mem(struct tc_ring *r, void *mem, size_t meta_len, size_t data_size);
/* Unmaps (or forgets caller memory) and frees the copy buffer. NULL-safe, idempotent. */
void tc_ring_exit(struct tc_ring *r);

/* Called with one complete, contiguous record (in the ring or in r->tmp): valid only
 * during the call. A nonzero return stops the drain and is returned by it. */
typedef int tc_ring_fn(void *arg, const struct perf_event_header *rec);

/* Delivers every record between data_tail and data_head to fn, then releases the space.
 * data_head is read with acquire semantics (the kernel's records are visible once the
 * head is), data_tail written with release (we are done reading before the kernel may
 * overwrite). A record whose size is smaller than its header or larger than the buffer
 * means the ring is broken: the rest is dropped and -TACHO_ECORRUPT returned.
 * Returns the number of records (>= 0) or fn's nonzero value. Not thread-safe per ring. */
int tc_ring_drain(struct tc_ring *r, tc_ring_fn *fn, void *arg);

/* True when records wait (data_head != data_tail). */
bool tc_ring_pending(const struct tc_ring *r);

/* The fields of a PERF_RECORD_SAMPLE for the sample_type bits tacho uses: IDENTIFIER,
 * IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, READ, CALLCHAIN, BRANCH_STACK
 * (without PERF_SAMPLE_BRANCH_HW_INDEX), REGS_USER, STACK_USER (others make it fail).
 * READ is read in the engine's own read_format for an event outside a group: value,
 * time_enabled, time_running, id (engine-int.h's TC_PERF_READ_FORMAT). */
struct tc_perf_sample {
	uint64_t id, ip, time, addr, period;
	uint64_t value;                      /* READ: the event's count at the sample */
	uint32_t pid, tid, cpu;
	uint16_t misc;                       /* header.misc: PERF_RECORD_MISC_USER, ... */
	uint64_t nr;                         /* call chain length */
	const uint64_t *chain;               /* points into the record */
	uint32_t raw_size;                   /* PERF_SAMPLE_RAW: bytes at raw (tracepoints) */
	const void *raw;                     /* points into the record */
	uint64_t bnr;                        /* branch entries */
	const uint64_t *branches;            /* bnr x (from, to, flags), into the record */
	uint64_t regs_abi;                   /* PERF_SAMPLE_REGS_ABI_NONE: no registers */
	uint32_t nregs;                      /* with an ABI: popcount(regs_user mask) */
	const uint64_t *regs;                /* into the record */
	uint64_t stack_size;                 /* bytes the kernel reserved for the stack */
	uint64_t stack_dyn;                  /* of which it filled (0 without a stack) */
	const unsigned char *stack;          /* into the record */
};

/* Parses a PERF_RECORD_SAMPLE written with this sample_type. 0, or -TACHO_ECORRUPT when
 * the record is shorter than its fields, -EINVAL for a sample_type bit it cannot read. */
int tc_perf_parse_sample(uint64_t sample_type, const struct perf_event_header *rec,
			 struct tc_perf_sample *out);
/* The same for an event with attr.sample_regs_user = regs_mask (the number of registers
 * a sample carries follows from it). */
int tc_perf_parse_sample_regs(uint64_t sample_type, uint64_t regs_mask,
			      const struct perf_event_header *rec, struct tc_perf_sample *out);

/* With attr.sample_id_all, every other record ends with these fields (the sample_type
 * bits TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER, in that order). Fills what is there.
 * 0 or -TACHO_ECORRUPT. */
struct tc_perf_sample_id {
	uint32_t pid, tid, cpu;
	uint64_t time, id;
};
int tc_perf_parse_sample_id(uint64_t sample_type, const struct perf_event_header *rec,
			    struct tc_perf_sample_id *out);

#endif
