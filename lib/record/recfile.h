/* recfile.h - the record file of `tacho record` (docs/record-format.md): a header, then
 * self-delimiting, checksummed records, written as the recording goes; samples packed
 * many to a checksummed block, each with only what changed since the one before. */
#ifndef TACHO_RECORD_RECFILE_H
#define TACHO_RECORD_RECFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/symbols.h"   /* TC_BUILD_ID_MAX */
#include "util/util.h"

#define TC_REC_MAGIC "TACHOREC"
#define TC_REC_VERSION 5           /* written; 1 to 5 are read */
#define TC_REC_FILE_HDR 32          /* bytes of the file header */
#define TC_REC_HDR 16               /* bytes of a record header */
#define TC_REC_MAX (16u << 20)      /* no record is larger */
#define TC_RECORD_MAX_EVENTS 65536u /* a sample's event index is below 2^16 */
/* A sample's cpu where the recording has none (a perf.data recorded per thread) */
#define TC_CPU_UNKNOWN UINT32_MAX

enum tc_rec_type {
	TC_REC_META = 1,       /* key/value strings: command, host, kernel, start time */
	TC_REC_EVENT = 2,      /* one recorded event: encoding, sample_type, period */
	TC_REC_PERIOD = 3,     /* the period an event was switched to (calibration) */
	TC_REC_MMAP = 4,       /* an executable mapping of a process, with its build-id */
	TC_REC_COMM = 5,       /* a thread's name (and exec) */
	TC_REC_TASK = 6,       /* fork or exit of a thread */
	TC_REC_SAMPLE = 7,
	TC_REC_LOST = 8,       /* samples the kernel dropped (ring full) */
	TC_REC_THROTTLE = 9,   /* the kernel throttled (1) or unthrottled (0) an event */
	TC_REC_IMAGE = 10,     /* a copy of an in-memory binary (the vDSO) */
	TC_REC_FINISH = 11,    /* the recording ended cleanly: totals and exit status */
	TC_REC_CHANNEL = 12,   /* a trace channel's index and name (tacho trace) */
	TC_REC_MARK = 13,      /* a mark, counter or span edge a traced program wrote */
	TC_REC_MARK_DROPS = 14, /* the marks dropped so far (totals: the last one holds) */
	TC_REC_USTACK = 15,    /* the user registers and stack of the SAMPLE just before */
	TC_REC_BRANCH = 16,    /* the branch stack (LBR call stack) of the SAMPLE before */
	/* 20-24: tracepoint payloads (tacho trace) */
	TC_REC_TPFORMAT = 20,  /* a tracepoint event's format text, to decode its payloads */
	TC_REC_RAW = 21,       /* the raw payload (PERF_SAMPLE_RAW) of the SAMPLE just before */
	TC_REC_SAMPLES = 22,   /* version 2: samples packed (read as one TC_REC_SAMPLE each) */
	TC_REC_MARKS = 23,     /* version 3: marks packed (read as one TC_REC_MARK each) */
	TC_REC_CGROUP = 24,    /* the cgroup a process was in (its v2 path) when seen */
	TC_REC_ZSTACK = 25,    /* version 5: a USTACK compressed (read as a TC_REC_USTACK) */
	TC_REC_TYPE_MAX = 25,
};

/* event flags */
#define TC_EVF_FREQ      0x1u   /* period is a frequency in Hz */
#define TC_EVF_TRAP      0x2u   /* trap-type: the IP is the instruction AFTER the cause */
#define TC_EVF_ADDR      0x4u   /* samples carry a data address */
#define TC_EVF_CALLCHAIN 0x8u
#define TC_EVF_USTACK    0x10u  /* samples are followed by USTACK records (dwarf) */
#define TC_EVF_BRANCH    0x20u  /* samples are followed by BRANCH records (lbr) */
#define TC_EVF_RAW       0x100u /* a tracepoint: each sample is followed by a RAW record */
#define TC_EVF_SIM       0x1000u /* simulated (record --sim): each sample's period is the
				   exact simulated count at its instruction */
#define TC_EVF_OFFCPU    0x2000u /* off-CPU time (record --off-cpu): each sample is a
				   stack where a thread blocked, its period the
				   nanoseconds it waited before it ran again */

#define TC_USTACK_MAX    65528u /* the most stack bytes a sample copies (kernel limit) */

#define TC_TASK_FORK 1u
#define TC_TASK_EXIT 2u

/* A decoded record. Pointers point into the file's bytes (valid while they are), or, for
 * a version 5 sample's call chain and a ZSTACK's registers and stack, into memory the
 * reader built (valid until tc_record_reader_exit, or, once taken with
 * tc_record_reader_take_mem, until tc_rec_mem_free). */
/* MARK_DROPS: what the producers of a trace dropped (totals so far), and the damage the
 * consumer found in their area (the traced program wrote over it; 0 in a file written
 * before tacho counted it). */
struct tc_mark_drops {
	uint64_t ring_full, no_ring, no_channel, time;
	uint64_t damaged_entries, damaged_rings, damaged_header;
};

struct tc_rec {
	enum tc_rec_type type;
	uint64_t offset;                    /* where it starts in the file */
	union {
		struct { const char *data; size_t len; } meta;   /* "k\0v\0k\0v\0" */
		struct {
			uint32_t index, type, flags;
			uint64_t config, sample_type, period;
			const char *name;
		} event;
		struct { uint32_t event; uint64_t period, time; } period;
		struct {
			uint32_t pid, tid, prot, flags;
			uint64_t start, len, pgoff, time;
			uint8_t build_id_size;
			uint8_t build_id[TC_BUILD_ID_MAX];
			const char *filename;
		} mmap;
		struct { uint32_t pid, tid, exec; uint64_t time; const char *comm; } comm;
		struct { uint32_t kind, pid, ppid, tid, ptid; uint64_t time; } task;
		struct { uint32_t pid; uint64_t time; const char *path; } cgroup;
		struct {
			uint64_t time, ip, addr, period;
			uint32_t pid, tid, cpu;
			uint16_t event, misc;
			uint32_t nr;
			const uint64_t *chain;       /* may be unaligned-free: file data is 8-aligned */
		} sample;
		struct { uint64_t lost, time; uint32_t cpu; } lost;
		struct { uint64_t time; uint32_t cpu, throttled; } throttle;
		struct {
			uint8_t build_id_size;
			uint8_t build_id[TC_BUILD_ID_MAX];
			const char *name;
			const unsigned char *data;
			size_t len;
		} image;
		struct { uint64_t samples, lost, time; int32_t status; } finish;
		struct { uint32_t index; const char *name; } channel;
		struct {
			uint64_t time, tsc, value;
			uint32_t pid, tid, channel, kind;
		} mark;
		struct tc_mark_drops mark_drops;
		struct { uint32_t event; const char *text; size_t len; } tpformat;
		struct { uint32_t event; const unsigned char *data; size_t size; } raw;
		struct {
			uint64_t abi, mask;          /* PERF_SAMPLE_REGS_ABI_*, the regs' mask */
			uint32_t nregs, stack_len;   /* nregs = popcount(mask) */
			const uint64_t *regs;        /* in mask bit order (asm/perf_regs.h) */
			const unsigned char *stack;  /* stack_len bytes from the user SP up */
		} ustack;
		struct {
			uint32_t nr;
			const uint64_t *entries;     /* nr x (from, to, flags), newest first */
		} branch;
	} u;
};

/* --- writing --- */
/* What a sample block's next sample is encoded against: the sample before it in the
 * block (all 0 at its start). */
struct tc_rec_sample_prev {
	uint64_t time, ip, addr, period;
	uint32_t pid, tid, cpu, event, misc;
	uint32_t node;         /* version 5: the node of the sample's call chain, 0 none */
};

/* The same of a marks block's next mark. */
struct tc_rec_mark_prev {
	uint64_t time, tsc, value;
	uint32_t pid, tid, channel, kind;
};

/* A call chain the writer has put in the file (version 4), for later samples with the
 * same chain to refer to: where it is and a copy to compare against. */
struct tc_rec_chain {
	uint64_t off;          /* file offset of its first entry (8-aligned) */
	size_t copy;           /* its entries in chain_copies, from this byte */
	uint32_t nr;
};

/* A node of the call-chain tree the writer has written (version 5): its frame and the
 * node above it (0: the root). */
struct tc_rec_wnode {
	uint64_t frame;
	uint32_t parent;
};

struct tc_record_writer {
	int fd;
	uint32_t format;       /* the format version written: 5, or 4 (TACHO_REC_FORMAT=4,
				* TACHO_REC_INLINE_CHAINS=1) */
	struct tc_outfile out; /* when opened by path: the temporary file and its name */
	struct tc_sb buf;      /* records not yet written */
	uint64_t written;      /* bytes in the file */
	int err;               /* first write error, sticky */
	bool block_open;       /* buf ends with a block record still being filled */
	uint16_t block_type;   /* TC_REC_SAMPLES or TC_REC_MARKS */
	size_t block_start;    /* its offset in buf */
	uint32_t block_count;  /* the samples or marks in it */
	struct tc_rec_sample_prev prev;
	struct tc_rec_mark_prev mprev;
	/* tc_record_writer_open_sink: whole records go to sink instead of fd */
	int (*sink)(void *arg, const void *data, size_t len);
	void *sink_arg;
	/* the chains written so far (version 4: a sample whose chain is among them refers
	 * back to it); with a sink, only those of the records not yet handed out */
	bool inline_chains;        /* every chain written in full, as version 3 did: set
				    * from TACHO_REC_INLINE_CHAINS=1 at open, for tests */
	struct tc_hmap chain_index; /* tc_hash_bytes of the entries -> index in chains */
	struct tc_rec_chain *chains;
	size_t nchains, chains_cap;
	struct tc_sb chain_copies;
	/* version 5: the tree of call-chain nodes written, node i at wnodes[i] (0 is the
	 * root), found by (parent, frame); forgotten at every write to a sink and when it
	 * grows past a bound, which the next sample with a chain says (a tree reset) */
	struct tc_hmap node_index;
	struct tc_rec_wnode *wnodes;
	size_t nwnodes, wnodes_cap;
	bool tree_reset;           /* the next chain starts the tree again */
	/* version 5: the zstd stream of the ZSTACK records (NULL: none yet, or none to be
	 * had: USTACK records are written raw then, said once) */
	void *zcs;
	bool zcs_failed;           /* no libzstd (said), or its stream failed: raw */
	bool zcs_first;            /* the next ZSTACK starts the stream */
	unsigned char *zbuf;       /* its compressed bytes, reused */
	size_t zbuf_cap;
};

/* Creates the file for path (tc_outfile: a temporary file beside it, mode 0600; a link
 * at path is refused with -ELOOP) and writes the file header. 0 or -errno. */
int tc_record_writer_open(struct tc_record_writer *w, const char *path);
/* Uses an open fd, which the writer then owns: tc_record_writer_close closes it. */
int tc_record_writer_open_fd(struct tc_record_writer *w, int fd);
/* No file: the header, then at each flush the whole records buffered, are handed to
 * sink(arg, data, len), which returns 0 or -errno (sticky, as a failed write). The
 * always-on sampler (record/sampler.c) reads them as they come. 0 or sink's error. */
int tc_record_writer_open_sink(struct tc_record_writer *w,
			       int (*sink)(void *arg, const void *data, size_t len), void *arg);
/* Appends one record to the buffer; the payload is copied and padded to 8 bytes. */
void tc_record_writer_add(struct tc_record_writer *w, enum tc_rec_type type,
			  const void *payload, size_t len);
/* Record builders, one per type. Strings are copied NUL-terminated. */
void tc_record_writer_meta(struct tc_record_writer *w, const char *key, const char *value);
void tc_record_writer_event(struct tc_record_writer *w, uint32_t index, uint32_t type,
			    uint64_t config, uint64_t sample_type, uint64_t period,
			    uint32_t flags, const char *name);
void tc_record_writer_period(struct tc_record_writer *w, uint32_t event, uint64_t period,
			     uint64_t time);
void tc_record_writer_mmap(struct tc_record_writer *w, uint32_t pid, uint32_t tid,
			   uint64_t start, uint64_t len, uint64_t pgoff, uint32_t prot,
			   uint64_t time, const uint8_t *build_id, unsigned build_id_size,
			   const char *filename);
void tc_record_writer_comm(struct tc_record_writer *w, uint32_t pid, uint32_t tid, bool exec,
			   uint64_t time, const char *comm);
/* The cgroup process pid was in at time (0: before the recording), as its path in the
 * cgroup v2 hierarchy ("/system.slice/cron.service"). */
void tc_record_writer_cgroup(struct tc_record_writer *w, uint32_t pid, uint64_t time,
			     const char *path);
void tc_record_writer_task(struct tc_record_writer *w, uint32_t kind, uint32_t pid,
			   uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time);
/* A sample goes into the SAMPLES block at the end of the buffer (a new one when another
 * record came after it, or it is full): some 8 bytes without a call chain. A chain the
 * file already holds is written as a reference back to it (some 4 bytes). */
void tc_record_writer_sample(struct tc_record_writer *w, uint64_t time, uint64_t ip,
			     uint64_t addr, uint64_t period, uint32_t pid, uint32_t tid,
			     uint32_t cpu, uint16_t event, uint16_t misc, uint32_t nr,
			     const uint64_t *chain);
/* The user registers (nregs values in mask bit order, ABI abi) and the stack_len bytes of
 * user stack (the part the kernel says is valid) of the sample just written. */
void tc_record_writer_ustack(struct tc_record_writer *w, uint64_t abi, uint64_t mask,
			     uint32_t nregs, const uint64_t *regs, const void *stack,
			     uint32_t stack_len);
/* The nr branch entries (from, to, flags each) of the sample just written. */
void tc_record_writer_branch(struct tc_record_writer *w, uint32_t nr, const uint64_t *entries);
/* A LOST record's cpu where no CPU is known (losses counted, not reported by a ring). */
#define TC_LOST_NO_CPU UINT32_MAX
void tc_record_writer_lost(struct tc_record_writer *w, uint64_t lost, uint64_t time,
			   uint32_t cpu);
void tc_record_writer_throttle(struct tc_record_writer *w, uint64_t time, uint32_t cpu,
			       bool throttled);
void tc_record_writer_image(struct tc_record_writer *w, const uint8_t *build_id,
			    unsigned build_id_size, const char *name, const void *data,
			    size_t len);
void tc_record_writer_finish(struct tc_record_writer *w, uint64_t samples, uint64_t lost,
			     uint64_t time, int32_t status);
void tc_record_writer_channel(struct tc_record_writer *w, uint32_t index, const char *name);
/* A mark goes into the MARKS block at the end of the buffer, as a sample into its
 * SAMPLES block: some 5 bytes for a mark on the same thread and channel as the one
 * before. */
void tc_record_writer_mark(struct tc_record_writer *w, uint64_t time, uint64_t tsc,
			   uint64_t value, uint32_t pid, uint32_t tid, uint32_t channel,
			   uint32_t kind);
void tc_record_writer_mark_drops(struct tc_record_writer *w, const struct tc_mark_drops *d);
/* The format text of tracepoint event `event` (tracefs's events/SYS/NAME/format), len
 * bytes, stored once so that a report decodes the payloads without the machine. */
void tc_record_writer_tpformat(struct tc_record_writer *w, uint32_t event, const char *text,
			       size_t len);
/* The raw payload of the sample written just before (size bytes of the kernel's
 * PERF_SAMPLE_RAW data, its u32 size and padding left out). */
void tc_record_writer_raw(struct tc_record_writer *w, uint32_t event, const void *data,
			  uint32_t size);
/* Writes what is buffered to the file (whole records only). 0 or the sticky -errno. */
int tc_record_writer_flush(struct tc_record_writer *w);
/* Flushes, closes the file and frees the buffer; a file opened by path then takes its
 * name (the previous file there becomes path.old). 0 or -errno (then path and path.old
 * stay as they were). */
int tc_record_writer_close(struct tc_record_writer *w);
/* Closes and removes a file opened by path without putting it in place (a recording
 * that failed): path stays as it was. Frees the buffer. */
void tc_record_writer_discard(struct tc_record_writer *w);

/* --- reading --- */
/* Memory a reader built for the records it hands out (a version 5 file's call chains
 * and unpacked user stacks): chunks, each freed with the list. */
struct tc_rec_mem {
	struct tc_rec_mem *next;
	size_t used, cap;
	uint64_t data[];       /* 8-byte aligned */
};
void tc_rec_mem_free(struct tc_rec_mem *m);

/* A node of a version 5 file's call-chain tree as read: node 0 is the root */
struct tc_rec_node {
	uint64_t frame;
	uint32_t parent, depth;    /* depth: the chain's length from here to the root */
	const uint64_t *chain;     /* built at its first sample (in mem), else NULL */
};

struct tc_record_reader {
	const unsigned char *data;
	size_t len, off;
	size_t data_start;      /* the first record's offset (after the file header) */
	uint32_t version;
	bool finished;          /* a FINISH record was read */
	bool truncated;         /* the bytes end inside a record (or before FINISH) */
	uint64_t good_end;      /* offset just past the last complete record */
	uint64_t skipped;       /* records of a type this reader does not know, stepped over */
	/* the SAMPLES or MARKS block being read: its next byte, its end, the samples or
	 * marks left */
	size_t block_pos, block_end;
	uint32_t block_left;
	uint16_t block_type;
	uint64_t block_offset;  /* where the block's record starts */
	struct tc_rec_sample_prev prev;
	struct tc_rec_mark_prev mprev;
	/* version 5: the call-chain tree read so far, and the memory of what was built */
	struct tc_rec_node *nodes;
	size_t nnodes, nodes_cap;
	struct tc_rec_mem *mem;
	uint64_t mem_bytes, mem_max;   /* built so far; the bound (a bomb is corrupt) */
	void *zds;                     /* the ZSTACK records' zstd stream */
	bool zds_started;
};

/* Checks the file header of len bytes at data (not copied; keep it alive). 0, or
 * -TACHO_ECORRUPT (not a tacho recording), -TACHO_EVERSION, -TACHO_ETRUNC (shorter than the
 * header) with *diag saying what and where (source = name). */
int tc_record_reader_init(struct tc_record_reader *r, const void *data, size_t len,
			  const char *name, struct tacho_diag *diag);
/* Decodes the next record: 1 and *out, 0 at the end (r->truncated says whether the data
 * ended inside a record), or -TACHO_ECORRUPT with *diag naming the byte offset. Records
 * of an unknown type are stepped over and counted in r->skipped. A SAMPLES block of
 * version 2 is never returned as such: each of its samples comes as a TC_REC_SAMPLE
 * whose offset is the sample's first byte, and whose chain points into the data (the
 * block keeps chains 8-byte aligned), as a version 1 sample's does; in version 4 a chain
 * the file held already is pointed to where it was first written; in version 5 the chain
 * is built from the file's tree of nodes in memory the reader owns (tc_record_reader_exit,
 * tc_record_reader_take_mem), once for each node. A MARKS block of version 3 is read the
 * same way: a TC_REC_MARK for each of its marks. A ZSTACK record (version 5) comes
 * unpacked as a TC_REC_USTACK, its registers and stack in the reader's memory; where
 * libzstd cannot be loaded it is refused (-TACHO_EVERSION, *diag saying so). */
int tc_record_reader_next(struct tc_record_reader *r, struct tc_rec *out, const char *name,
			  struct tacho_diag *diag);

/* Frees what the reader built (unless taken), its tree and its zstd stream; r is then
 * as after a failed init. Safe on a zeroed reader and after any return of init. */
void tc_record_reader_exit(struct tc_record_reader *r);
/* Hands the memory that the records read so far point into to the caller, who frees it
 * with tc_rec_mem_free when done with them (a profile keeps it as long as its samples);
 * the reader goes on with memory of its own. NULL when it built none. */
struct tc_rec_mem *tc_record_reader_take_mem(struct tc_record_reader *r);

/* Iterates the key/value pairs of a META record: returns false at the end. */
bool tc_rec_meta_next(const struct tc_rec *rec, size_t *pos, const char **key, const char **value);


#endif
