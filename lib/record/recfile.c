/* recfile.c - writing and reading the record file (docs/record-format.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/recfile.h"
#include "tacho/errors.h"

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

/* --- writing --- */

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* the file header: magic, version, header size, 8 reserved bytes, CRC of the 24 bytes
 * before it */
static void file_header(unsigned char hdr[TC_REC_FILE_HDR])
{
	memset(hdr, 0, TC_REC_FILE_HDR);
	memcpy(hdr, TC_REC_MAGIC, 8);
	put_u32(hdr + 8, TC_REC_VERSION);
	put_u32(hdr + 12, TC_REC_FILE_HDR);
	put_u32(hdr + 24, tc_crc32(0, hdr, 24));
}

static void writer_init(struct tc_record_writer *w)
{
	const char *e = getenv("TACHO_REC_INLINE_CHAINS");

	memset(w, 0, sizeof(*w));
	tc_sb_init(&w->buf);
	tc_sb_init(&w->chain_copies);
	tc_hmap_init(&w->chain_index);
	w->inline_chains = e && !strcmp(e, "1");
}

/* Forgets the chains written: later samples write theirs in full again */
static void chains_reset(struct tc_record_writer *w)
{
	tc_hmap_exit(&w->chain_index);
	tc_sb_reset(&w->chain_copies);
	w->nchains = 0;
}

static void writer_free(struct tc_record_writer *w)
{
	tc_sb_exit(&w->buf);
	tc_hmap_exit(&w->chain_index);
	tc_sb_exit(&w->chain_copies);
	free(w->chains);
	w->chains = NULL;
	w->nchains = w->chains_cap = 0;
}

int tc_record_writer_open_fd(struct tc_record_writer *w, int fd)
{
	unsigned char hdr[TC_REC_FILE_HDR];

	writer_init(w);
	w->fd = fd;
	w->out.fd = -1;
	file_header(hdr);
	w->err = write_all(fd, hdr, sizeof(hdr));
	if (!w->err)
		w->written = sizeof(hdr);
	return w->err;
}

int tc_record_writer_open_sink(struct tc_record_writer *w,
			       int (*sink)(void *arg, const void *data, size_t len), void *arg)
{
	unsigned char hdr[TC_REC_FILE_HDR];

	writer_init(w);
	w->fd = -1;
	w->out.fd = -1;
	w->sink = sink;
	w->sink_arg = arg;
	file_header(hdr);
	w->err = sink(arg, hdr, sizeof(hdr));
	if (!w->err)
		w->written = sizeof(hdr);
	return w->err;
}

int tc_record_writer_open(struct tc_record_writer *w, const char *path)
{
	struct tc_outfile out;
	int err;

	err = tc_outfile_open(&out, path, TC_OUTFILE_KEEP_OLD);
	if (err) {
		memset(w, 0, sizeof(*w));
		w->fd = -1;
		w->out.fd = -1;
		return err;
	}
	err = tc_record_writer_open_fd(w, out.fd);
	w->out = out;
	if (err) {
		tc_outfile_abort(&w->out);
		w->fd = -1;
		writer_free(w);
	}
	return err;
}

/* --- the SAMPLES block --- */

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

/* The writer forgets its chains when their copies take more than this (a long recording
 * of ever new chains): they are written in full again */
#define CHAIN_COPIES_MAX (64u << 20)

/* The mark flags: which fields follow the time, TSC and value deltas */
#define MF_TASK    0x01u   /* pid, tid */
#define MF_CHANNEL 0x02u
#define MF_KIND    0x04u
#define MF_ALL     0x07u

static const unsigned char zeros8[8];

/* LEB128 (7 bits a byte, low first), at most 10 bytes */
static size_t put_varint(unsigned char *p, uint64_t v)
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
static uint64_t zigzag(uint64_t d)
{
	return (d << 1) ^ (0 - (d >> 63));
}

static uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static void block_close(struct tc_record_writer *w)
{
	unsigned char *b;
	size_t size;

	if (!w->block_open)
		return;
	w->block_open = false;
	/* the buffer holds whole records before the block: its length's alignment is
	 * the file's */
	if (w->buf.len & 7)
		tc_sb_add(&w->buf, zeros8, 8 - (w->buf.len & 7));
	if (w->buf.oom) {
		w->err = w->err ? w->err : -ENOMEM;
		return;
	}
	size = w->buf.len - w->block_start;
	b = (unsigned char *)w->buf.buf + w->block_start;
	put_u32(b + 4, (uint32_t)size);
	put_u32(b + 8, w->block_type);
	put_u32(b + TC_REC_HDR, w->block_count);
	put_u32(b, tc_crc32(0, b + 4, size - 4));
}

static void block_open(struct tc_record_writer *w, uint16_t type)
{
	unsigned char hdr[TC_REC_HDR + sizeof(struct p_samples)] = { 0 };

	w->block_start = w->buf.len;
	tc_sb_add(&w->buf, hdr, sizeof(hdr));
	w->block_open = true;
	w->block_type = type;
	w->block_count = 0;
	memset(&w->prev, 0, sizeof(w->prev));
	memset(&w->mprev, 0, sizeof(w->mprev));
}

/* Appends a record made of up to three pieces, each padded to 8 bytes when pad is set
 * on it; the header (CRC over everything after the CRC field) is filled in last. */
struct piece {
	const void *p;
	size_t len;
};

static void record_writer_addv(struct tc_record_writer *w, enum tc_rec_type type,
			       const struct piece *pc, unsigned n)
{
	static const unsigned char zeros[8];
	size_t start, size;
	unsigned char hdr[TC_REC_HDR] = { 0 };

	block_close(w);   /* a record after samples ends their block: order is kept */
	start = w->buf.len;
	tc_sb_add(&w->buf, hdr, sizeof(hdr));
	for (unsigned i = 0; i < n; i++) {
		if (!pc[i].len)
			continue;   /* an empty piece may come with a NULL pointer */
		tc_sb_add(&w->buf, pc[i].p, pc[i].len);
		if (pc[i].len & 7)
			tc_sb_add(&w->buf, zeros, 8 - (pc[i].len & 7));
	}
	if (w->buf.oom) {
		w->err = w->err ? w->err : -ENOMEM;
		return;
	}
	size = w->buf.len - start;
	if (size > TC_REC_MAX) {
		w->buf.len = start;
		w->err = w->err ? w->err : -E2BIG;
		return;
	}
	/* crc u32 | size u32 | type u16 | flags u16 | reserved u32 */
	put_u32((unsigned char *)w->buf.buf + start + 4, (uint32_t)size);
	put_u32((unsigned char *)w->buf.buf + start + 8, (uint32_t)type);
	put_u32((unsigned char *)w->buf.buf + start,
		tc_crc32(0, w->buf.buf + start + 4, size - 4));
}

void tc_record_writer_add(struct tc_record_writer *w, enum tc_rec_type type,
			  const void *payload, size_t len)
{
	struct piece pc = { payload, len };

	record_writer_addv(w, type, &pc, 1);
}

void tc_record_writer_meta(struct tc_record_writer *w, const char *key, const char *value)
{
	struct piece pc[2] = { { key, strlen(key) + 1 }, { value, strlen(value) + 1 } };
	struct tc_sb sb = TC_SB_INIT;

	/* one pair per record keeps the builder simple; the reader takes any number */
	tc_sb_init(&sb);
	tc_sb_add(&sb, pc[0].p, pc[0].len);
	tc_sb_add(&sb, pc[1].p, pc[1].len);
	if (sb.oom)
		w->err = w->err ? w->err : -ENOMEM;
	else
		tc_record_writer_add(w, TC_REC_META, sb.buf, sb.len);
	tc_sb_exit(&sb);
}

void tc_record_writer_event(struct tc_record_writer *w, uint32_t index, uint32_t type,
			    uint64_t config, uint64_t sample_type, uint64_t period,
			    uint32_t flags, const char *name)
{
	struct p_event e = { .index = index, .type = type, .config = config,
			     .sample_type = sample_type, .period = period, .flags = flags };
	struct piece pc[2] = { { &e, sizeof(e) }, { name, strlen(name) + 1 } };

	record_writer_addv(w, TC_REC_EVENT, pc, 2);
}

void tc_record_writer_period(struct tc_record_writer *w, uint32_t event, uint64_t period,
			     uint64_t time)
{
	struct p_period p = { .event = event, .period = period, .time = time };

	tc_record_writer_add(w, TC_REC_PERIOD, &p, sizeof(p));
}

void tc_record_writer_mmap(struct tc_record_writer *w, uint32_t pid, uint32_t tid,
			   uint64_t start, uint64_t len, uint64_t pgoff, uint32_t prot,
			   uint64_t time, const uint8_t *build_id, unsigned build_id_size,
			   const char *filename)
{
	struct p_mmap m = { .pid = pid, .tid = tid, .start = start, .len = len, .pgoff = pgoff,
			    .time = time, .prot = prot };
	struct piece pc[2] = { { &m, sizeof(m) }, { filename, strlen(filename) + 1 } };

	if (build_id && build_id_size <= TC_BUILD_ID_MAX) {
		m.build_id_size = (uint8_t)build_id_size;
		memcpy(m.build_id, build_id, build_id_size);
	}
	record_writer_addv(w, TC_REC_MMAP, pc, 2);
}

void tc_record_writer_comm(struct tc_record_writer *w, uint32_t pid, uint32_t tid, bool exec,
			   uint64_t time, const char *comm)
{
	struct p_comm c = { .pid = pid, .tid = tid, .time = time, .exec = exec };
	struct piece pc[2] = { { &c, sizeof(c) }, { comm, strlen(comm) + 1 } };

	record_writer_addv(w, TC_REC_COMM, pc, 2);
}

void tc_record_writer_cgroup(struct tc_record_writer *w, uint32_t pid, uint64_t time,
			     const char *path)
{
	struct p_cgroup c = { .pid = pid, .time = time };
	struct piece pc[2] = { { &c, sizeof(c) }, { path, strlen(path) + 1 } };

	record_writer_addv(w, TC_REC_CGROUP, pc, 2);
}

void tc_record_writer_task(struct tc_record_writer *w, uint32_t kind, uint32_t pid,
			   uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time)
{
	struct p_task t = { .kind = kind, .pid = pid, .ppid = ppid, .tid = tid, .ptid = ptid,
			    .time = time };

	tc_record_writer_add(w, TC_REC_TASK, &t, sizeof(t));
}

/* The chain of nr entries among those written, or NULL; *hash its hash either way */
static const struct tc_rec_chain *chain_find(struct tc_record_writer *w, const uint64_t *chain,
					     uint32_t nr, uint64_t *hash)
{
	size_t pos = 0;
	uint32_t i;

	*hash = tc_hash_bytes(chain, (size_t)nr * 8);
	while (tc_hmap_next(&w->chain_index, *hash, &pos, &i)) {
		const struct tc_rec_chain *c = &w->chains[i];

		if (c->nr == nr &&
		    !memcmp(w->chain_copies.buf + c->copy, chain, (size_t)nr * 8))
			return c;
	}
	return NULL;
}

/* Remembers a chain written in full at file offset off. Failing memory only costs
 * references: the chain is then written in full again next time. */
static void chain_keep(struct tc_record_writer *w, const uint64_t *chain, uint32_t nr,
		       uint64_t hash, uint64_t off)
{
	size_t copy;

	if (w->chain_copies.len + (size_t)nr * 8 > CHAIN_COPIES_MAX)
		chains_reset(w);
	if (w->nchains >= UINT32_MAX - 1)
		return;
	if (w->nchains == w->chains_cap) {
		size_t cap = w->chains_cap ? w->chains_cap * 2 : 256;
		struct tc_rec_chain *n = realloc(w->chains, cap * sizeof(*n));

		if (!n)
			return;
		w->chains = n;
		w->chains_cap = cap;
	}
	copy = w->chain_copies.len;
	tc_sb_add(&w->chain_copies, chain, (size_t)nr * 8);
	if (w->chain_copies.oom) {
		chains_reset(w);
		w->chain_copies.oom = false;
		return;
	}
	if (tc_hmap_add(&w->chain_index, hash, (uint32_t)w->nchains))
		return;
	w->chains[w->nchains++] = (struct tc_rec_chain){ .off = off, .copy = copy, .nr = nr };
}

void tc_record_writer_sample(struct tc_record_writer *w, uint64_t time, uint64_t ip,
			     uint64_t addr, uint64_t period, uint32_t pid, uint32_t tid,
			     uint32_t cpu, uint16_t event, uint16_t misc, uint32_t nr,
			     const uint64_t *chain)
{
	struct tc_rec_sample_prev *pv = &w->prev;
	unsigned char t[80];     /* flags and at most 10 varints: 1 + 4 * 10 (time, ip,
				  * period, addr) + 4 * 5 (pid, tid, cpu, nr) + 2 * 3
				  * (event, misc) = 67 */
	size_t n = 1, chain_bytes = (size_t)nr * 8;
	uint64_t hash = 0;
	unsigned f = 0;

	if (chain_bytes > TC_REC_MAX - TC_REC_HDR - sizeof(struct p_samples) - sizeof(t) - 8) {
		w->err = w->err ? w->err : -E2BIG;
		return;
	}
	if (w->block_open && (w->block_type != TC_REC_SAMPLES ||
			      w->buf.len - w->block_start + sizeof(t) + 8 + chain_bytes > BLOCK_SOFT))
		block_close(w);
	if (!w->block_open)
		block_open(w, TC_REC_SAMPLES);
	cpu += 1;   /* TC_CPU_UNKNOWN becomes 0, the block's starting value */
	n += put_varint(t + n, zigzag(time - pv->time));
	n += put_varint(t + n, zigzag(ip - pv->ip));
	if (pid != pv->pid || tid != pv->tid) {
		f |= SF_TASK;
		n += put_varint(t + n, pid);
		n += put_varint(t + n, tid);
	}
	if (cpu != pv->cpu) {
		f |= SF_CPU;
		n += put_varint(t + n, cpu);
	}
	if (event != pv->event) {
		f |= SF_EVENT;
		n += put_varint(t + n, event);
	}
	if (period != pv->period) {
		f |= SF_PERIOD;
		n += put_varint(t + n, period);
	}
	if (misc != pv->misc) {
		f |= SF_MISC;
		n += put_varint(t + n, misc);
	}
	if (addr != pv->addr) {
		f |= SF_ADDR;
		n += put_varint(t + n, zigzag(addr - pv->addr));
	}
	if (nr) {
		uint64_t here = w->written + w->buf.len;   /* the file offset of t[0] */
		const struct tc_rec_chain *c = w->inline_chains ? NULL :
					       chain_find(w, chain, nr, &hash);

		n += put_varint(t + n, nr);
		if (c) {
			f |= SF_CHAIN_REF;
			n += put_varint(t + n, ((here & ~(uint64_t)7) - c->off) / 8);
		} else {
			f |= SF_CHAIN;
		}
	}
	t[0] = (unsigned char)f;
	tc_sb_add(&w->buf, t, n);
	if (f & SF_CHAIN) {
		/* the chain stays 8-byte aligned in the file, so that a reader points
		 * into it as into a version 1 sample */
		if (w->buf.len & 7)
			tc_sb_add(&w->buf, zeros8, 8 - (w->buf.len & 7));
		if (!w->inline_chains)
			chain_keep(w, chain, nr, hash, w->written + w->buf.len);
		tc_sb_add(&w->buf, chain, chain_bytes);
	}
	*pv = (struct tc_rec_sample_prev){ .time = time, .ip = ip, .addr = addr,
					   .period = period, .pid = pid, .tid = tid,
					   .cpu = cpu, .event = event, .misc = misc };
	w->block_count++;
}

void tc_record_writer_ustack(struct tc_record_writer *w, uint64_t abi, uint64_t mask,
			     uint32_t nregs, const uint64_t *regs, const void *stack,
			     uint32_t stack_len)
{
	struct p_ustack u = { .abi = abi, .mask = mask, .nregs = nregs, .stack_len = stack_len };
	struct piece pc[3] = { { &u, sizeof(u) }, { regs, (size_t)nregs * 8 },
			       { stack, stack_len } };

	record_writer_addv(w, TC_REC_USTACK, pc, 3);
}

void tc_record_writer_branch(struct tc_record_writer *w, uint32_t nr, const uint64_t *entries)
{
	struct p_branch b = { .nr = nr };
	struct piece pc[2] = { { &b, sizeof(b) }, { entries, (size_t)nr * 24 } };

	record_writer_addv(w, TC_REC_BRANCH, pc, 2);
}

void tc_record_writer_lost(struct tc_record_writer *w, uint64_t lost, uint64_t time,
			   uint32_t cpu)
{
	struct p_lost l = { .lost = lost, .time = time, .cpu = cpu };

	tc_record_writer_add(w, TC_REC_LOST, &l, sizeof(l));
}

void tc_record_writer_throttle(struct tc_record_writer *w, uint64_t time, uint32_t cpu,
			       bool throttled)
{
	struct p_throttle t = { .time = time, .cpu = cpu, .throttled = throttled };

	tc_record_writer_add(w, TC_REC_THROTTLE, &t, sizeof(t));
}

void tc_record_writer_image(struct tc_record_writer *w, const uint8_t *build_id,
			    unsigned build_id_size, const char *name, const void *data,
			    size_t len)
{
	struct p_image im = { .name_len = (uint32_t)strlen(name) + 1, .data_len = len };
	struct piece pc[3] = { { &im, sizeof(im) }, { name, strlen(name) + 1 }, { data, len } };

	if (build_id && build_id_size <= TC_BUILD_ID_MAX) {
		im.build_id_size = (uint8_t)build_id_size;
		memcpy(im.build_id, build_id, build_id_size);
	}
	record_writer_addv(w, TC_REC_IMAGE, pc, 3);
}

void tc_record_writer_finish(struct tc_record_writer *w, uint64_t samples, uint64_t lost,
			     uint64_t time, int32_t status)
{
	struct p_finish f = { .samples = samples, .lost = lost, .time = time, .status = status };

	tc_record_writer_add(w, TC_REC_FINISH, &f, sizeof(f));
}

void tc_record_writer_channel(struct tc_record_writer *w, uint32_t index, const char *name)
{
	struct p_channel c = { .index = index, .name_len = (uint32_t)strlen(name) + 1 };
	struct piece pc[2] = { { &c, sizeof(c) }, { name, strlen(name) + 1 } };

	record_writer_addv(w, TC_REC_CHANNEL, pc, 2);
}

void tc_record_writer_mark(struct tc_record_writer *w, uint64_t time, uint64_t tsc,
			   uint64_t value, uint32_t pid, uint32_t tid, uint32_t channel,
			   uint32_t kind)
{
	struct tc_rec_mark_prev *pv = &w->mprev;
	unsigned char tmp[64], *t;   /* flags, 3 varints of 64 bits and 4 of 32: 1 + 30 + 20 */
	size_t n = 1;
	unsigned f = 0;
	bool direct;

	if (w->block_open && (w->block_type != TC_REC_MARKS ||
			      w->buf.len - w->block_start + sizeof(tmp) + 8 > BLOCK_SOFT))
		block_close(w);
	if (!w->block_open)
		block_open(w, TC_REC_MARKS);
	/* encoded in place where the buffer has the room (nearly always: it grows to a
	 * drain's worth once and keeps it), which saves a quarter of a mark's cost to the
	 * consumer at millions a second (a copy and a call) */
	direct = !w->buf.oom && w->buf.alloc - w->buf.len > sizeof(tmp);
	t = direct ? (unsigned char *)w->buf.buf + w->buf.len : tmp;
	n += put_varint(t + n, zigzag(time - pv->time));
	n += put_varint(t + n, zigzag(tsc - pv->tsc));
	n += put_varint(t + n, zigzag(value - pv->value));
	if (pid != pv->pid || tid != pv->tid) {
		f |= MF_TASK;
		n += put_varint(t + n, pid);
		n += put_varint(t + n, tid);
	}
	if (channel != pv->channel) {
		f |= MF_CHANNEL;
		n += put_varint(t + n, channel);
	}
	if (kind != pv->kind) {
		f |= MF_KIND;
		n += put_varint(t + n, kind);
	}
	t[0] = (unsigned char)f;
	if (direct) {
		w->buf.len += n;
		w->buf.buf[w->buf.len] = '\0';   /* the buffer's own rule: always ended */
	} else {
		tc_sb_add(&w->buf, t, n);
	}
	*pv = (struct tc_rec_mark_prev){ .time = time, .tsc = tsc, .value = value, .pid = pid,
					 .tid = tid, .channel = channel, .kind = kind };
	w->block_count++;
}

void tc_record_writer_tpformat(struct tc_record_writer *w, uint32_t event, const char *text,
			       size_t len)
{
	struct p_blob b = { .event = event, .len = (uint32_t)len };
	struct piece pc[2] = { { &b, sizeof(b) }, { text, len } };

	record_writer_addv(w, TC_REC_TPFORMAT, pc, 2);
}

void tc_record_writer_raw(struct tc_record_writer *w, uint32_t event, const void *data,
			  uint32_t size)
{
	struct p_blob b = { .event = event, .len = size };
	struct piece pc[2] = { { &b, sizeof(b) }, { data, size } };

	record_writer_addv(w, TC_REC_RAW, pc, 2);
}

void tc_record_writer_mark_drops(struct tc_record_writer *w, const struct tc_mark_drops *m)
{
	struct p_mark_drops d = { .ring_full = m->ring_full, .no_ring = m->no_ring,
				  .no_channel = m->no_channel, .time = m->time,
				  .damaged_entries = m->damaged_entries,
				  .damaged_rings = m->damaged_rings,
				  .damaged_header = m->damaged_header };

	tc_record_writer_add(w, TC_REC_MARK_DROPS, &d, sizeof(d));
}

int tc_record_writer_flush(struct tc_record_writer *w)
{
	int err;

	block_close(w);
	if (w->err)
		return w->err;
	if (!w->buf.len)
		return 0;
	/* one write per flush: a reader (or a kill) sees whole records up to here, plus
	 * at most one partial write the reader detects as truncation */
	err = w->sink ? w->sink(w->sink_arg, w->buf.buf, w->buf.len)
		      : write_all(w->fd, w->buf.buf, w->buf.len);
	if (err) {
		w->err = err;
		return err;
	}
	w->written += w->buf.len;
	tc_sb_reset(&w->buf);
	/* a sink's reader sees one flush at a time: no reference reaches back past it */
	if (w->sink)
		chains_reset(w);
	return 0;
}

int tc_record_writer_close(struct tc_record_writer *w)
{
	int err = tc_record_writer_flush(w);

	if (w->out.path) {
		/* opened by path: the file takes its name only when whole */
		if (err)
			tc_outfile_abort(&w->out);
		else
			err = tc_outfile_commit(&w->out);
	} else if (w->fd >= 0 && close(w->fd) != 0 && !err) {
		err = -errno;
	}
	w->fd = -1;
	writer_free(w);
	return err;
}

void tc_record_writer_discard(struct tc_record_writer *w)
{
	if (w->out.path)
		tc_outfile_abort(&w->out);
	else if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	writer_free(w);
}

/* --- reading --- */

int tc_record_reader_init(struct tc_record_reader *r, const void *data, size_t len,
			  const char *name, struct tacho_diag *diag)
{
	const unsigned char *p = data;
	uint32_t version, hsize, crc;

	memset(r, 0, sizeof(*r));
	r->data = data;
	r->len = len;
	if (len == 0)
		return tc_diag_set(diag, name, 0, 0, -TACHO_EEMPTY,
				   "the file is empty (the recording wrote nothing)");
	if (len < 8 || memcmp(p, TC_REC_MAGIC, 8) != 0) {
		if (len < 8 && memcmp(p, TC_REC_MAGIC, len) == 0)
			return tc_diag_set(diag, name, 0, 0, -TACHO_ETRUNC,
					   "the file ends inside its header (%zu bytes)", len);
		return tc_diag_set(diag, name, 0, 0, -TACHO_ECORRUPT,
				   "not a tacho recording (no TACHOREC magic)");
	}
	if (len < TC_REC_FILE_HDR)
		return tc_diag_set(diag, name, 0, 0, -TACHO_ETRUNC,
				   "the file ends inside its header (%zu bytes)", len);
	memcpy(&version, p + 8, 4);
	memcpy(&hsize, p + 12, 4);
	memcpy(&crc, p + 24, 4);
	if (crc != tc_crc32(0, p, 24))
		return tc_diag_set(diag, name, 0, 1, -TACHO_ECORRUPT,
				   "the file header's checksum does not match");
	if (version < 1 || version > TC_REC_VERSION)
		return tc_diag_set(diag, name, 0, 9, -TACHO_EVERSION,
				   "format version %u, this tacho reads versions 1 to %u",
				   version, TC_REC_VERSION);
	if (hsize < TC_REC_FILE_HDR || hsize > len || hsize % 8)
		return tc_diag_set(diag, name, 0, 13, -TACHO_ECORRUPT,
				   "bad header size %u", hsize);
	r->version = version;
	r->data_start = hsize;
	r->off = hsize;
	r->good_end = hsize;
	return 0;
}

static int corrupt(struct tacho_diag *diag, const char *name, uint64_t off, const char *what)
{
	return tc_diag_set(diag, name, 0, 0, -TACHO_ECORRUPT, "corrupt record at byte %llu: %s",
			   (unsigned long long)off, what);
}

/* A NUL-terminated string that starts at p and ends before end, or NULL. */
static const char *str_in(const unsigned char *p, const unsigned char *end)
{
	return p < end && memchr(p, 0, (size_t)(end - p)) ? (const char *)p : NULL;
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* One LEB128 number at *pos, before end: 0, or -1 when it runs past end or 64 bits */
static int get_varint(const unsigned char *d, size_t *pos, size_t end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned sh = 0; sh < 64; sh += 7) {
		unsigned char b;

		if (*pos >= end)
			return -1;
		b = d[(*pos)++];
		if (sh == 63 && b > 1)
			return -1;
		x |= (uint64_t)(b & 0x7f) << sh;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

static int get_field(const unsigned char *d, size_t *pos, size_t end, uint64_t max,
		     uint64_t *v)
{
	return get_varint(d, pos, end, v) || *v > max ? -1 : 0;
}

/* The next sample of the SAMPLES block being read */
static int next_in_block(struct tc_record_reader *r, struct tc_rec *out, const char *name,
			 struct tacho_diag *diag)
{
	struct tc_rec_sample_prev *pv = &r->prev;
	const unsigned char *d = r->data;
	size_t pos = r->block_pos, end = r->block_end, start = pos;
	uint64_t v, nr = 0;
	unsigned f;

	if (pos >= end)
		return corrupt(diag, name, start, "sample block ends before its last sample");
	f = d[pos++];
	if (f & ~(r->version >= 4 ? SF_ALL : SF_ALL_V3) ||
	    (f & (SF_CHAIN | SF_CHAIN_REF)) == (SF_CHAIN | SF_CHAIN_REF))
		return corrupt(diag, name, start, "unknown sample flags");
	if (get_varint(d, &pos, end, &v))
		goto bad;
	pv->time += unzigzag(v);
	if (get_varint(d, &pos, end, &v))
		goto bad;
	pv->ip += unzigzag(v);
	if (f & SF_TASK) {
		if (get_field(d, &pos, end, UINT32_MAX, &v))
			goto bad;
		pv->pid = (uint32_t)v;
		if (get_field(d, &pos, end, UINT32_MAX, &v))
			goto bad;
		pv->tid = (uint32_t)v;
	}
	if (f & SF_CPU) {
		if (get_field(d, &pos, end, UINT32_MAX, &v))
			goto bad;
		pv->cpu = (uint32_t)v;
	}
	if (f & SF_EVENT) {
		if (get_field(d, &pos, end, UINT16_MAX, &v))
			goto bad;
		pv->event = (uint32_t)v;
	}
	if ((f & SF_PERIOD) && get_varint(d, &pos, end, &pv->period))
		goto bad;
	if (f & SF_MISC) {
		if (get_field(d, &pos, end, UINT16_MAX, &v))
			goto bad;
		pv->misc = (uint32_t)v;
	}
	if (f & SF_ADDR) {
		if (get_varint(d, &pos, end, &v))
			goto bad;
		pv->addr += unzigzag(v);
	}
	memset(out, 0, sizeof(*out));
	if (f & SF_CHAIN) {
		if (get_field(d, &pos, end, UINT32_MAX, &nr) || nr == 0)
			goto bad;
		for (; pos & 7; pos++)
			if (pos >= end || d[pos])
				return corrupt(diag, name, start, "bad padding before a call chain");
		if (nr > (end - pos) / 8)
			return corrupt(diag, name, start, "call chain longer than its block");
		/* the data is 8-byte aligned (a map of the file) and so is pos */
		out->u.sample.chain = (const uint64_t *)(const void *)(d + pos);
		pos += (size_t)nr * 8;
	} else if (f & SF_CHAIN_REF) {
		size_t base = start & ~(size_t)7, first = r->data_start;

		if (get_field(d, &pos, end, UINT32_MAX, &nr) || nr == 0 ||
		    get_varint(d, &pos, end, &v))
			goto bad;
		/* an earlier chain: in the bytes already read (and checked), between the
		 * file header and this sample */
		if (v > (base - first) / 8 || nr > (start - (base - v * 8)) / 8)
			return corrupt(diag, name, start,
				       "call chain reference outside the bytes before it");
		out->u.sample.chain = (const uint64_t *)(const void *)(d + base - v * 8);
	}
	out->type = TC_REC_SAMPLE;
	out->offset = start;
	out->u.sample.time = pv->time;
	out->u.sample.ip = pv->ip;
	out->u.sample.addr = pv->addr;
	out->u.sample.period = pv->period;
	out->u.sample.pid = pv->pid;
	out->u.sample.tid = pv->tid;
	out->u.sample.cpu = pv->cpu - 1;
	out->u.sample.event = (uint16_t)pv->event;
	out->u.sample.misc = (uint16_t)pv->misc;
	out->u.sample.nr = (uint32_t)nr;
	r->block_pos = pos;
	if (--r->block_left == 0) {
		/* the block ends with its last sample and up to 7 zeros */
		if (end - pos >= 8 || memcmp(d + pos, zeros8, end - pos))
			return corrupt(diag, name, pos, "bytes after a sample block's last sample");
	}
	return 1;
bad:
	return corrupt(diag, name, start, "a sample's field runs past its block or out of range");
}

/* The end of a block after its last sample or mark: up to 7 zeros */
static int block_end_ok(struct tc_record_reader *r, size_t pos)
{
	size_t end = r->block_end;

	return end - pos < 8 && !memcmp(r->data + pos, zeros8, end - pos);
}

/* The next mark of the MARKS block being read */
static int next_mark_in_block(struct tc_record_reader *r, struct tc_rec *out, const char *name,
			      struct tacho_diag *diag)
{
	struct tc_rec_mark_prev *pv = &r->mprev;
	const unsigned char *d = r->data;
	size_t pos = r->block_pos, end = r->block_end, start = pos;
	uint64_t v;
	unsigned f;

	if (pos >= end)
		return corrupt(diag, name, start, "mark block ends before its last mark");
	f = d[pos++];
	if (f & ~MF_ALL)
		return corrupt(diag, name, start, "unknown mark flags");
	if (get_varint(d, &pos, end, &v))
		goto bad;
	pv->time += unzigzag(v);
	if (get_varint(d, &pos, end, &v))
		goto bad;
	pv->tsc += unzigzag(v);
	if (get_varint(d, &pos, end, &v))
		goto bad;
	pv->value += unzigzag(v);
	if (f & MF_TASK) {
		if (get_field(d, &pos, end, UINT32_MAX, &v))
			goto bad;
		pv->pid = (uint32_t)v;
		if (get_field(d, &pos, end, UINT32_MAX, &v))
			goto bad;
		pv->tid = (uint32_t)v;
	}
	if (f & MF_CHANNEL) {
		if (get_field(d, &pos, end, UINT32_MAX, &v))
			goto bad;
		pv->channel = (uint32_t)v;
	}
	if (f & MF_KIND) {
		if (get_field(d, &pos, end, UINT32_MAX, &v))
			goto bad;
		pv->kind = (uint32_t)v;
	}
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_MARK;
	out->offset = start;
	out->u.mark.time = pv->time;
	out->u.mark.tsc = pv->tsc;
	out->u.mark.value = pv->value;
	out->u.mark.pid = pv->pid;
	out->u.mark.tid = pv->tid;
	out->u.mark.channel = pv->channel;
	out->u.mark.kind = pv->kind;
	r->block_pos = pos;
	if (--r->block_left == 0 && !block_end_ok(r, pos))
		return corrupt(diag, name, pos, "bytes after a mark block's last mark");
	return 1;
bad:
	return corrupt(diag, name, start, "a mark's field runs past its block or out of range");
}

/* One record read from the file, handed to its type's decoder: the payload after the
 * header, and what a decoder needs to say that the record is corrupt. */
struct rec_in {
	const unsigned char *pl, *end;  /* the payload and the record's end */
	size_t plen;                    /* bytes of payload */
	uint32_t size;                  /* bytes of the record, header included */
	uint32_t type;                  /* as written (the low 16 bits select the decoder) */
	const char *name;
	struct tacho_diag *diag;
};

/* The decoders, one per record type: each fills out (type and offset already set, the
 * rest zeroed) from the payload and returns 1, or a negative code with *diag (corrupt).
 * TC_REC_SAMPLES returns the block's first sample. */
typedef int (*rec_decoder)(struct tc_record_reader *r, const struct rec_in *in,
			   struct tc_rec *out);

static int bad(const struct rec_in *in, const struct tc_rec *out, const char *what)
{
	return corrupt(in->diag, in->name, out->offset, what);
}

/* Declares var of the fixed fields T and copies them in; a shorter record is corrupt. */
#define NEED(T, var)                                                                    \
	T var;                                                                          \
	if (in->plen < sizeof(T))                                                       \
		return bad(in, out, "record shorter than its fields");                  \
	memcpy(&var, in->pl, sizeof(T))

static int dec_meta(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	if (in->plen && in->pl[in->plen - 1] != 0 && !memchr(in->pl, 0, in->plen))
		return bad(in, out, "unterminated string");
	out->u.meta.data = (const char *)in->pl;
	out->u.meta.len = in->plen;
	return 1;
}

static int dec_event(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_event, e);
	out->u.event.index = e.index;
	out->u.event.type = e.type;
	out->u.event.flags = e.flags;
	out->u.event.config = e.config;
	out->u.event.sample_type = e.sample_type;
	out->u.event.period = e.period;
	out->u.event.name = str_in(in->pl + sizeof(e), in->end);
	if (!out->u.event.name)
		return bad(in, out, "event without a name");
	return 1;
}

static int dec_period(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_period, q);
	out->u.period.event = q.event;
	out->u.period.period = q.period;
	out->u.period.time = q.time;
	return 1;
}

static int dec_mmap(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_mmap, m);
	if (m.build_id_size > TC_BUILD_ID_MAX)
		return bad(in, out, "build-id too long");
	out->u.mmap.pid = m.pid;
	out->u.mmap.tid = m.tid;
	out->u.mmap.prot = m.prot;
	out->u.mmap.flags = m.flags;
	out->u.mmap.start = m.start;
	out->u.mmap.len = m.len;
	out->u.mmap.pgoff = m.pgoff;
	out->u.mmap.time = m.time;
	out->u.mmap.build_id_size = m.build_id_size;
	memcpy(out->u.mmap.build_id, m.build_id, TC_BUILD_ID_MAX);
	out->u.mmap.filename = str_in(in->pl + sizeof(m), in->end);
	if (!out->u.mmap.filename)
		return bad(in, out, "mapping without a file name");
	return 1;
}

static int dec_comm(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_comm, c);
	out->u.comm.pid = c.pid;
	out->u.comm.tid = c.tid;
	out->u.comm.exec = c.exec;
	out->u.comm.time = c.time;
	out->u.comm.comm = str_in(in->pl + sizeof(c), in->end);
	if (!out->u.comm.comm)
		return bad(in, out, "unterminated thread name");
	return 1;
}

static int dec_cgroup(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_cgroup, c);
	out->u.cgroup.pid = c.pid;
	out->u.cgroup.time = c.time;
	out->u.cgroup.path = str_in(in->pl + sizeof(c), in->end);
	if (!out->u.cgroup.path)
		return bad(in, out, "unterminated cgroup path");
	return 1;
}

static int dec_task(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_task, t);
	if (t.kind != TC_TASK_FORK && t.kind != TC_TASK_EXIT)
		return bad(in, out, "unknown task event");
	out->u.task.kind = t.kind;
	out->u.task.pid = t.pid;
	out->u.task.ppid = t.ppid;
	out->u.task.tid = t.tid;
	out->u.task.ptid = t.ptid;
	out->u.task.time = t.time;
	return 1;
}

static int dec_sample(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_sample, s);
	if (s.nr > (in->plen - sizeof(s)) / 8)
		return bad(in, out, "call chain longer than its record");
	out->u.sample.time = s.time;
	out->u.sample.ip = s.ip;
	out->u.sample.addr = s.addr;
	out->u.sample.period = s.period;
	out->u.sample.pid = s.pid;
	out->u.sample.tid = s.tid;
	out->u.sample.cpu = s.cpu;
	out->u.sample.event = s.event;
	out->u.sample.misc = s.misc;
	out->u.sample.nr = s.nr;
	/* the file's records are 8-byte aligned and so is the map of the file */
	out->u.sample.chain = (const uint64_t *)(const void *)(in->pl + sizeof(s));
	return 1;
}

static int dec_lost(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_lost, l);
	out->u.lost.lost = l.lost;
	out->u.lost.time = l.time;
	out->u.lost.cpu = l.cpu;
	return 1;
}

static int dec_throttle(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_throttle, t);
	out->u.throttle.time = t.time;
	out->u.throttle.cpu = t.cpu;
	out->u.throttle.throttled = t.throttled;
	return 1;
}

static int dec_image(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_image, im);
	size_t need = sizeof(im) + pad8(im.name_len);
	if (im.build_id_size > TC_BUILD_ID_MAX || im.name_len == 0 ||
	    im.name_len > in->plen || need > in->plen || im.data_len > in->plen - need)
		return bad(in, out, "bad image sizes");
	out->u.image.name = (const char *)in->pl + sizeof(im);
	if (out->u.image.name[im.name_len - 1] != 0)
		return bad(in, out, "unterminated image name");
	out->u.image.build_id_size = im.build_id_size;
	memcpy(out->u.image.build_id, im.build_id, TC_BUILD_ID_MAX);
	out->u.image.data = in->pl + need;
	out->u.image.len = (size_t)im.data_len;
	return 1;
}

static int dec_finish(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_finish, f);
	out->u.finish.samples = f.samples;
	out->u.finish.lost = f.lost;
	out->u.finish.time = f.time;
	out->u.finish.status = f.status;
	r->finished = true;
	return 1;
}

static int dec_channel(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_channel, c);
	if (c.name_len == 0 || c.name_len > in->plen - sizeof(c))
		return bad(in, out, "bad channel name size");
	out->u.channel.index = c.index;
	out->u.channel.name = (const char *)in->pl + sizeof(c);
	if (out->u.channel.name[c.name_len - 1] != 0)
		return bad(in, out, "unterminated channel name");
	return 1;
}

static int dec_mark(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_mark, m);
	out->u.mark.time = m.time;
	out->u.mark.tsc = m.tsc;
	out->u.mark.value = m.value;
	out->u.mark.pid = m.pid;
	out->u.mark.tid = m.tid;
	out->u.mark.channel = m.channel;
	out->u.mark.kind = m.kind;
	return 1;
}

static int dec_mark_drops(struct tc_record_reader *r, const struct rec_in *in,
			  struct tc_rec *out)
{
	struct p_mark_drops d = { 0 };

	/* grown since its first version: the fields a shorter record lacks read 0 */
	if (in->plen < MARK_DROPS_V1)
		return bad(in, out, "record shorter than its fields");
	memcpy(&d, in->pl, in->plen < sizeof(d) ? in->plen : sizeof(d));
	out->u.mark_drops.ring_full = d.ring_full;
	out->u.mark_drops.no_ring = d.no_ring;
	out->u.mark_drops.no_channel = d.no_channel;
	out->u.mark_drops.time = d.time;
	out->u.mark_drops.damaged_entries = d.damaged_entries;
	out->u.mark_drops.damaged_rings = d.damaged_rings;
	out->u.mark_drops.damaged_header = d.damaged_header;
	return 1;
}

static int dec_ustack(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_ustack, u);
	if (u.nregs > 64 || u.nregs != (uint32_t)__builtin_popcountll(u.mask) ||
	    u.stack_len > TC_USTACK_MAX ||
	    (size_t)u.nregs * 8 + u.stack_len > in->plen - sizeof(u))
		return bad(in, out, "bad user stack sizes");
	out->u.ustack.abi = u.abi;
	out->u.ustack.mask = u.mask;
	out->u.ustack.nregs = u.nregs;
	out->u.ustack.stack_len = u.stack_len;
	out->u.ustack.regs = (const uint64_t *)(const void *)(in->pl + sizeof(u));
	out->u.ustack.stack = in->pl + sizeof(u) + (size_t)u.nregs * 8;
	return 1;
}

static int dec_branch(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_branch, b);
	if (b.nr > (in->plen - sizeof(b)) / 24)
		return bad(in, out, "branch stack longer than its record");
	out->u.branch.nr = b.nr;
	out->u.branch.entries = (const uint64_t *)(const void *)(in->pl + sizeof(b));
	return 1;
}

/* TC_REC_TPFORMAT and TC_REC_RAW: a length and the bytes */
static int dec_blob(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_blob, b);
	if (b.len > in->plen - sizeof(b))
		return bad(in, out, "payload longer than its record");
	if (in->type == TC_REC_TPFORMAT) {
		out->u.tpformat.event = b.event;
		out->u.tpformat.text = (const char *)in->pl + sizeof(b);
		out->u.tpformat.len = b.len;
	} else {
		out->u.raw.event = b.event;
		out->u.raw.data = in->pl + sizeof(b);
		out->u.raw.size = b.len;
	}
	return 1;
}

/* A block of packed samples: the reader steps into it and returns its first sample. */
static int dec_samples(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_samples, b);
	if (b.count == 0 || b.pad)
		return bad(in, out, "bad sample block header");
	r->block_pos = (size_t)out->offset + TC_REC_HDR + sizeof(b);
	r->block_end = (size_t)out->offset + in->size;
	r->block_left = b.count;
	r->block_type = TC_REC_SAMPLES;
	r->block_offset = out->offset;
	memset(&r->prev, 0, sizeof(r->prev));
	return next_in_block(r, out, in->name, in->diag);
}

/* A block of packed marks: the same, its first mark. */
static int dec_marks(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_samples, b);
	if (b.count == 0 || b.pad)
		return bad(in, out, "bad mark block header");
	r->block_pos = (size_t)out->offset + TC_REC_HDR + sizeof(b);
	r->block_end = (size_t)out->offset + in->size;
	r->block_left = b.count;
	r->block_type = TC_REC_MARKS;
	r->block_offset = out->offset;
	memset(&r->mprev, 0, sizeof(r->mprev));
	return next_mark_in_block(r, out, in->name, in->diag);
}
#undef NEED

static const rec_decoder decoders[TC_REC_TYPE_MAX + 1] = {
	[TC_REC_META] = dec_meta,
	[TC_REC_EVENT] = dec_event,
	[TC_REC_PERIOD] = dec_period,
	[TC_REC_MMAP] = dec_mmap,
	[TC_REC_COMM] = dec_comm,
	[TC_REC_TASK] = dec_task,
	[TC_REC_CGROUP] = dec_cgroup,
	[TC_REC_SAMPLE] = dec_sample,
	[TC_REC_LOST] = dec_lost,
	[TC_REC_THROTTLE] = dec_throttle,
	[TC_REC_IMAGE] = dec_image,
	[TC_REC_FINISH] = dec_finish,
	[TC_REC_CHANNEL] = dec_channel,
	[TC_REC_MARK] = dec_mark,
	[TC_REC_MARK_DROPS] = dec_mark_drops,
	[TC_REC_USTACK] = dec_ustack,
	[TC_REC_BRANCH] = dec_branch,
	[TC_REC_TPFORMAT] = dec_blob,
	[TC_REC_RAW] = dec_blob,
	[TC_REC_SAMPLES] = dec_samples,
	[TC_REC_MARKS] = dec_marks,
};

int tc_record_reader_next(struct tc_record_reader *r, struct tc_rec *out, const char *name,
			  struct tacho_diag *diag)
{
	if (r->block_left)
		return r->block_type == TC_REC_MARKS ? next_mark_in_block(r, out, name, diag) :
		       next_in_block(r, out, name, diag);
	for (;;) {
		const unsigned char *p = r->data + r->off;
		size_t left = r->len - r->off;
		uint32_t crc, size, type;
		struct rec_in in;
		rec_decoder dec;

		if (left == 0) {
			if (!r->finished)
				r->truncated = true;
			return 0;
		}
		if (left < TC_REC_HDR) {
			r->truncated = true;
			return 0;
		}
		memcpy(&crc, p, 4);
		memcpy(&size, p + 4, 4);
		memcpy(&type, p + 8, 4);
		if (size < TC_REC_HDR || size % 8 || size > TC_REC_MAX)
			return corrupt(diag, name, r->off, "impossible record size");
		if (size > left) {
			/* the file ends inside this record: what came before is good */
			r->truncated = true;
			return 0;
		}
		if (crc != tc_crc32(0, p + 4, size - 4))
			return corrupt(diag, name, r->off, "checksum mismatch");
		memset(out, 0, sizeof(*out));
		out->type = (enum tc_rec_type)(type & 0xffff);
		out->offset = r->off;
		r->off += size;
		r->good_end = r->off;
		dec = (type & 0xffff) <= TC_REC_TYPE_MAX ? decoders[type & 0xffff] : NULL;
		if (!dec) {
			/* A later writer's record type: self-delimiting and checksummed, so it
			 * can be stepped over (docs/record-format.md, "compatibility"); counted,
			 * so that the caller can say what it did not read. */
			r->skipped++;
			continue;
		}
		in = (struct rec_in){ .pl = p + TC_REC_HDR, .end = p + size,
				      .plen = size - TC_REC_HDR, .size = size,
				      .type = type, .name = name, .diag = diag };
		return dec(r, &in, out);
	}
}

bool tc_rec_meta_next(const struct tc_rec *rec, size_t *pos, const char **key, const char **value)
{
	const char *d = rec->u.meta.data;
	size_t len = rec->u.meta.len, p = *pos, kl, vl;

	if (p >= len || d[p] == 0)
		return false;
	kl = strnlen(d + p, len - p);
	if (p + kl + 1 >= len)
		return false;
	vl = strnlen(d + p + kl + 1, len - p - kl - 1);
	if (p + kl + 1 + vl >= len)
		return false;
	*key = d + p;
	*value = d + p + kl + 1;
	*pos = p + kl + 1 + vl + 1;
	return true;
}
