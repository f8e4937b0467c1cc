/* recfile-write.c - writing the record file (docs/record-format.md): records buffered
 * and written whole at each flush, samples and marks packed into blocks. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/recfile-int.h"
#include "record/reczstd.h"
#include "tacho/errors.h"

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
static void file_header(unsigned char hdr[TC_REC_FILE_HDR], uint32_t version)
{
	memset(hdr, 0, TC_REC_FILE_HDR);
	memcpy(hdr, TC_REC_MAGIC, 8);
	put_u32(hdr + 8, version);
	put_u32(hdr + 12, TC_REC_FILE_HDR);
	put_u32(hdr + 24, tc_crc32(0, hdr, 24));
}

/* The tests' switches: TACHO_REC_FORMAT=4 writes version 4 (chains referred to by
 * their bytes, stacks raw), TACHO_REC_INLINE_CHAINS=1 the same with every chain in full,
 * as version 3 did: the same samples three ways give the same report */
static void writer_init(struct tc_record_writer *w)
{
	const char *e = tc_env_trusted("TACHO_REC_INLINE_CHAINS", NULL);
	const char *v = tc_env_trusted("TACHO_REC_FORMAT", NULL);

	memset(w, 0, sizeof(*w));
	tc_sb_init(&w->buf);
	tc_sb_init(&w->chain_copies);
	tc_hmap_init(&w->chain_index);
	tc_hmap_init(&w->node_index);
	w->inline_chains = e && !strcmp(e, "1");
	w->format = w->inline_chains || (v && !strcmp(v, "4")) ? 4 : TC_REC_VERSION;
	w->nwnodes = 1;   /* node 0, the root, is always there */
}

/* Forgets the tree of call-chain nodes: the next chain says so and starts it again */
static void tree_reset(struct tc_record_writer *w)
{
	tc_hmap_exit(&w->node_index);
	w->nwnodes = 1;
	w->tree_reset = true;
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
	tc_hmap_exit(&w->node_index);
	free(w->wnodes);
	w->wnodes = NULL;
	w->nwnodes = w->wnodes_cap = 0;
	tc_zs_cstream_free(w->zcs);
	w->zcs = NULL;
	free(w->zbuf);
	w->zbuf = NULL;
	w->zbuf_cap = 0;
}

int tc_record_writer_open_fd(struct tc_record_writer *w, int fd)
{
	unsigned char hdr[TC_REC_FILE_HDR];

	writer_init(w);
	w->fd = fd;
	w->out.fd = -1;
	file_header(hdr, w->format);
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
	file_header(hdr, w->format);
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

/* Room for n nodes: 0 or -ENOMEM */
static int wnodes_room(struct tc_record_writer *w, size_t n)
{
	size_t cap = w->wnodes_cap ? w->wnodes_cap : 1024;
	struct tc_rec_wnode *nw;

	if (n <= w->wnodes_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	nw = realloc(w->wnodes, cap * sizeof(*nw));
	if (!nw)
		return -ENOMEM;
	w->wnodes = nw;
	w->wnodes_cap = cap;
	return 0;
}

/* The child of node parent with this frame, or 0 */
static uint32_t wnode_find(const struct tc_record_writer *w, uint32_t parent, uint64_t frame,
			   uint64_t *key)
{
	size_t pos = 0;
	uint32_t i;

	*key = tc_hash_u64(frame ^ tc_hash_u64(parent));
	while (tc_hmap_next(&w->node_index, *key, &pos, &i))
		if (w->wnodes[i].parent == parent && w->wnodes[i].frame == frame)
			return i;
	return 0;
}

/* Version 5: the sample's chain as a path in the tree (docs/record-format.md, "The
 * call-chain tree"): the deepest node that already holds the chain's part from the
 * root (base), then the frames under it, each a new node. Header fields go to t at *n,
 * the frames straight to the buffer after them; *leaf is the chain's node. */
static void chain_tree(struct tc_record_writer *w, const uint64_t *chain, uint32_t nr,
		       unsigned char *t, size_t *n, unsigned *f, uint32_t *leaf)
{
	uint32_t node = 0, i = nr;
	uint64_t key, pframe = 0;

	if (w->nwnodes + nr > NODES_MAX)
		tree_reset(w);
	if (w->tree_reset) {
		*f |= SF_TREE_RESET;
		w->tree_reset = false;
	}
	for (uint32_t c; i > 0 && (c = wnode_find(w, node, chain[i - 1], &key)); i--)
		node = c;
	if (wnodes_room(w, w->nwnodes + i)) {
		w->err = w->err ? w->err : -ENOMEM;
		return;
	}
	*f |= SF_NODE;
	*n += put_varint(t + *n, zigzag((uint64_t)node - w->prev.node));
	*n += put_varint(t + *n, i);
	tc_sb_add(&w->buf, t, *n);
	*n = 0;
	if (node)
		pframe = w->wnodes[node].frame;
	for (; i > 0; i--) {
		unsigned char v[10];
		uint64_t frame = chain[i - 1];
		uint32_t id = (uint32_t)w->nwnodes;

		tc_sb_add(&w->buf, v, put_varint(v, zigzag(frame - pframe)));
		key = tc_hash_u64(frame ^ tc_hash_u64(node));
		w->wnodes[w->nwnodes++] = (struct tc_rec_wnode){ .frame = frame, .parent = node };
		if (tc_hmap_add(&w->node_index, key, id))
			w->err = w->err ? w->err : -ENOMEM;
		node = id;
		pframe = frame;
	}
	*leaf = node;
}

/* Version 4: the chain in full the first time, then a reference to that copy */
static void chain_v4(struct tc_record_writer *w, const uint64_t *chain, uint32_t nr,
		     unsigned char *t, size_t *n, unsigned *f)
{
	uint64_t here = w->written + w->buf.len;   /* the file offset of t[0] */
	uint64_t hash = 0;
	const struct tc_rec_chain *c = w->inline_chains ? NULL : chain_find(w, chain, nr, &hash);

	*n += put_varint(t + *n, nr);
	if (c) {
		*f |= SF_CHAIN_REF;
		*n += put_varint(t + *n, ((here & ~(uint64_t)7) - c->off) / 8);
	} else {
		*f |= SF_CHAIN;
	}
	t[0] = (unsigned char)*f;
	tc_sb_add(&w->buf, t, *n);
	*n = 0;
	if (*f & SF_CHAIN) {
		/* the chain stays 8-byte aligned in the file, so that a reader points
		 * into it as into a version 1 sample */
		if (w->buf.len & 7)
			tc_sb_add(&w->buf, zeros8, 8 - (w->buf.len & 7));
		if (!w->inline_chains)
			chain_keep(w, chain, nr, hash, w->written + w->buf.len);
		tc_sb_add(&w->buf, chain, (size_t)nr * 8);
	}
}

void tc_record_writer_sample(struct tc_record_writer *w, uint64_t time, uint64_t ip,
			     uint64_t addr, uint64_t period, uint32_t pid, uint32_t tid,
			     uint32_t cpu, uint16_t event, uint16_t misc, uint32_t nr,
			     const uint64_t *chain)
{
	struct tc_rec_sample_prev *pv = &w->prev;
	unsigned char t[80];     /* flags and at most 10 varints: 1 + 4 * 10 (time, ip,
				  * period, addr) + 4 * 5 (pid, tid, cpu, nr) + 2 * 3
				  * (event, misc) = 67; version 5: node and count instead
				  * of nr and a reference, 1 + 5 * 10 + 3 * 5 + 2 * 3 = 72 */
	size_t n = 1, start, chain_bytes = (size_t)nr * 10;   /* a frame's varint at most */
	uint32_t leaf = 0;
	unsigned f = 0;

	t[0] = 0;
	if (chain_bytes > TC_REC_MAX - TC_REC_HDR - sizeof(struct p_samples) - sizeof(t) - 8) {
		w->err = w->err ? w->err : -E2BIG;
		return;
	}
	if (w->block_open && (w->block_type != TC_REC_SAMPLES ||
			      w->buf.len - w->block_start + sizeof(t) + 8 + chain_bytes > BLOCK_SOFT))
		block_close(w);
	if (!w->block_open)
		block_open(w, TC_REC_SAMPLES);
	start = w->buf.len;
	cpu += 1;   /* TC_CPU_UNKNOWN becomes 0, the block's starting value */
	n += put_varint(t + n, zigzag(time - pv->time));
	/* version 5: the IP against its chain's first frame, the period against the one
	 * before (a frequency's periods move a little) */
	n += put_varint(t + n, zigzag(ip - (w->format >= 5 ? ip_base(chain, nr, pv->ip) :
					    pv->ip)));
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
		n += put_varint(t + n, w->format >= 5 ? zigzag(period - pv->period) : period);
	}
	if (misc != pv->misc) {
		f |= SF_MISC;
		n += put_varint(t + n, misc);
	}
	if (addr != pv->addr) {
		f |= SF_ADDR;
		n += put_varint(t + n, zigzag(addr - pv->addr));
	}
	if (nr && w->format >= 5)
		chain_tree(w, chain, nr, t, &n, &f, &leaf);
	else if (nr)
		chain_v4(w, chain, nr, t, &n, &f);
	if (n)
		tc_sb_add(&w->buf, t, n);
	if (!w->buf.oom)
		w->buf.buf[start] = (char)f;   /* the flags, known once the chain is placed */
	*pv = (struct tc_rec_sample_prev){ .time = time, .ip = ip, .addr = addr,
					   .period = period, .pid = pid, .tid = tid,
					   .cpu = cpu, .event = event, .misc = misc,
					   .node = nr ? leaf : pv->node };
	w->block_count++;
}

/* The level of the ZSTACK stream: docs/performance.md, "Issue 32: files near their
 * entropy", weighs it */
#define ZSTACK_LEVEL 6

/* Version 5: a sample's registers and stack as the next piece of the file's zstd stream
 * (flushed: the piece is whole in this record). 0, or -1 when it is to be written raw
 * (no libzstd: said once; a sink's reader sees one write at a time; zstd failed). */
static int ustack_z(struct tc_record_writer *w, uint64_t abi, uint64_t mask, uint32_t nregs,
		    const uint64_t *regs, const void *stack, uint32_t stack_len)
{
	struct p_zstack z = { .abi = abi, .mask = mask, .nregs = nregs,
			      .stack_len = stack_len };
	struct tc_zbuf out = { w->zbuf, 0, w->zbuf_cap };
	const char *why;
	int err;

	if (w->format < 5 || w->sink || w->zcs_failed)
		return -1;
	if (!w->zcs) {
		if (!tc_zs_available(&why)) {
			tc_log(TACHO_LOG_WARN, "%s: the user stacks are written uncompressed "
			       "(Debian: apt-get install libzstd1)", why);
			w->zcs_failed = true;
			return -1;
		}
		w->zcs = tc_zs_cstream_new(ZSTACK_LEVEL);
		if (!w->zcs) {
			w->zcs_failed = true;
			return -1;
		}
		w->zcs_first = true;
	}
	err = tc_zs_compress(w->zcs, regs, (size_t)nregs * 8, false, &out);
	if (!err)
		err = tc_zs_compress(w->zcs, stack, stack_len, true, &out);
	w->zbuf = out.buf;
	w->zbuf_cap = out.cap;
	if (err || out.len > TC_REC_MAX / 2) {
		/* the stream is in an unknown state: a new one starts at the next stack */
		tc_zs_cstream_free(w->zcs);
		w->zcs = NULL;
		return -1;
	}
	z.zlen = (uint32_t)out.len;
	z.first = w->zcs_first;
	w->zcs_first = false;
	record_writer_addv(w, TC_REC_ZSTACK, (struct piece[2]){ { &z, sizeof(z) },
								{ out.buf, out.len } }, 2);
	return 0;
}

void tc_record_writer_ustack(struct tc_record_writer *w, uint64_t abi, uint64_t mask,
			     uint32_t nregs, const uint64_t *regs, const void *stack,
			     uint32_t stack_len)
{
	struct p_ustack u = { .abi = abi, .mask = mask, .nregs = nregs, .stack_len = stack_len };
	struct piece pc[3] = { { &u, sizeof(u) }, { regs, (size_t)nregs * 8 },
			       { stack, stack_len } };

	if (ustack_z(w, abi, mask, nregs, regs, stack, stack_len) == 0)
		return;
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
	if (w->sink) {
		chains_reset(w);
		if (w->nwnodes > 1)
			tree_reset(w);
	}
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

