/* recfile-read.c - reading the record file (docs/record-format.md): the file header,
 * then one record at a time through a table of decoders, one per record type; sample
 * and mark blocks yield one sample or mark at a time. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/recfile-int.h"
#include "record/reczstd.h"
#include "tacho/errors.h"


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
	r->mem_max = len > (UINT64_MAX - MEM_FLOOR) / MEM_RATIO ? UINT64_MAX :
		     MEM_FLOOR + (uint64_t)len * MEM_RATIO;
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

/* --- memory the reader builds (version 5) --- */

void tc_rec_mem_free(struct tc_rec_mem *m)
{
	while (m) {
		struct tc_rec_mem *n = m->next;
		free(m);
		m = n;
	}
}

/* Counts n bytes more against the reader's bound: 0, or -1 past it */
static int mem_charge(struct tc_record_reader *r, size_t n)
{
	if (n > r->mem_max - r->mem_bytes)
		return -1;
	r->mem_bytes += n;
	return 0;
}

/* n bytes, 8-byte aligned, in the reader's memory (counted against its bound): NULL
 * when past the bound (*over set) or out of memory */
static void *mem_alloc(struct tc_record_reader *r, size_t n, bool *over)
{
	struct tc_rec_mem *m = r->mem;
	size_t words = (n + 7) / 8;

	*over = false;
	if (mem_charge(r, words * 8)) {
		*over = true;
		return NULL;
	}
	if (!m || m->cap - m->used < words) {
		size_t cap = words > 8192 ? words : 8192;   /* 64 KiB chunks */

		m = malloc(sizeof(*m) + cap * 8);
		if (!m)
			return NULL;
		m->next = r->mem;
		m->used = 0;
		m->cap = cap;
		r->mem = m;
	}
	m->used += words;
	return m->data + m->used - words;
}

struct tc_rec_mem *tc_record_reader_take_mem(struct tc_record_reader *r)
{
	struct tc_rec_mem *m = r->mem;

	r->mem = NULL;
	return m;
}

void tc_record_reader_exit(struct tc_record_reader *r)
{
	tc_rec_mem_free(r->mem);
	r->mem = NULL;
	free(r->nodes);
	r->nodes = NULL;
	r->nnodes = r->nodes_cap = 0;
	tc_zs_dstream_free(r->zds);
	r->zds = NULL;
	r->zds_started = false;
}

/* --- sample and mark blocks --- */

/* What an item decoder says: 0 decoded, BAD_FIELD a field runs past the block or out
 * of its range (the block's kind says it in words), or a negative code with *diag */
#define BAD_FIELD 1

/* Where one decoder of a block's items is: the reader, the block's bytes and the
 * position of the item (advanced past it), for the diagnostics the name and diag. */
struct item_in {
	struct tc_record_reader *r;
	const unsigned char *d;
	size_t pos, end, start;
	const char *name;
	struct tacho_diag *diag;
};

/* Version 1-4: the chain in full (kept 8-byte aligned) or a reference to its bytes */
static int chain_v4(struct item_in *it, unsigned f, struct tc_rec *out)
{
	const unsigned char *d = it->d;
	uint64_t v, nr;

	if (get_field(d, &it->pos, it->end, UINT32_MAX, &nr) || nr == 0)
		return BAD_FIELD;
	if (f & SF_CHAIN) {
		for (; it->pos & 7; it->pos++)
			if (it->pos >= it->end || d[it->pos])
				return corrupt(it->diag, it->name, it->start,
					       "bad padding before a call chain");
		if (nr > (it->end - it->pos) / 8)
			return corrupt(it->diag, it->name, it->start,
				       "call chain longer than its block");
		/* the data is 8-byte aligned (a map of the file) and so is pos */
		out->u.sample.chain = (const uint64_t *)(const void *)(d + it->pos);
		it->pos += (size_t)nr * 8;
	} else {
		size_t base = it->start & ~(size_t)7, first = it->r->data_start;

		if (get_varint(d, &it->pos, it->end, &v))
			return BAD_FIELD;
		/* an earlier chain: in the bytes already read (and checked), between the
		 * file header and this sample */
		if (v > (base - first) / 8 || nr > (it->start - (base - v * 8)) / 8)
			return corrupt(it->diag, it->name, it->start,
				       "call chain reference outside the bytes before it");
		out->u.sample.chain = (const uint64_t *)(const void *)(d + base - v * 8);
	}
	out->u.sample.nr = (uint32_t)nr;
	return 0;
}

/* Room for n nodes in the reader's tree (counted against its bound) */
static int nodes_room(struct item_in *it, size_t n)
{
	struct tc_record_reader *r = it->r;
	size_t cap = r->nodes_cap ? r->nodes_cap : 1024;
	struct tc_rec_node *nn;

	if (n <= r->nodes_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	if (mem_charge(it->r, (cap - r->nodes_cap) * sizeof(*nn)))
		return corrupt(it->diag, it->name, it->start, "call-chain tree larger than "
			       "its bound (128 times the file, and 128 MiB)");
	nn = realloc(r->nodes, cap * sizeof(*nn));
	if (!nn)
		return -ENOMEM;
	r->nodes = nn;
	r->nodes_cap = cap;
	return 0;
}

/* The chain of node i, built leaf first (chain[0] is node i's frame, the last the one
 * under the root) the first time a sample asks */
static int node_chain(struct item_in *it, uint32_t i, const uint64_t **chain)
{
	struct tc_rec_node *nodes = it->r->nodes;
	uint64_t *c;
	bool over;

	if (!nodes[i].chain) {
		c = mem_alloc(it->r, (size_t)nodes[i].depth * 8, &over);
		if (!c)
			return over ? corrupt(it->diag, it->name, it->start, "call chains that "
					      "unfold past their bound (128 times the file, "
					      "and 128 MiB)") : -ENOMEM;
		/* parents come before their children: the walk ends at the root */
		for (uint32_t k = 0, j = i; j; j = nodes[j].parent)
			c[k++] = nodes[j].frame;
		nodes[i].chain = c;
	}
	*chain = nodes[i].chain;
	return 0;
}

/* Version 5: the chain as a path in the tree: a base node (a delta from the previous
 * sample's), then new nodes under it, each a frame delta from its parent's frame. A
 * parent is always an earlier node, so no path can loop. */
static int chain_tree(struct item_in *it, unsigned f, struct tc_rec *out)
{
	struct tc_record_reader *r = it->r;
	uint64_t v, k, base;
	int err;

	if (f & SF_TREE_RESET)
		r->nnodes = 0;
	if (!(f & SF_NODE))
		return 0;
	if (!r->nnodes) {
		if ((err = nodes_room(it, 1)))
			return err;
		r->nodes[0] = (struct tc_rec_node){ 0 };   /* the root */
		r->nnodes = 1;
	}
	if (get_varint(it->d, &it->pos, it->end, &v) ||
	    get_field(it->d, &it->pos, it->end, UINT32_MAX, &k))
		return BAD_FIELD;
	base = (uint32_t)(r->prev.node + unzigzag(v));
	if (base >= r->nnodes)
		return corrupt(it->diag, it->name, it->start,
			       "call chain under a node the tree does not hold");
	/* each new node takes a byte of the block at least */
	if (k > it->end - it->pos || (base == 0 && k == 0) ||
	    k > (uint64_t)UINT32_MAX - 1 - r->nnodes)
		return BAD_FIELD;
	if ((err = nodes_room(it, r->nnodes + (size_t)k)))
		return err;
	for (uint32_t parent = (uint32_t)base; k > 0; k--) {
		struct tc_rec_node *p = &r->nodes[parent];

		if (get_varint(it->d, &it->pos, it->end, &v))
			return BAD_FIELD;
		if (p->depth >= TC_REC_MAX / 8)
			return corrupt(it->diag, it->name, it->start,
				       "call chain deeper than a record could hold");
		r->nodes[r->nnodes] = (struct tc_rec_node){ .frame = p->frame + unzigzag(v),
							    .parent = parent,
							    .depth = p->depth + 1 };
		parent = base = (uint32_t)r->nnodes++;
	}
	r->prev.node = (uint32_t)base;
	out->u.sample.nr = r->nodes[base].depth;
	return node_chain(it, (uint32_t)base, &out->u.sample.chain);
}

/* One sample of a SAMPLES block, against the one before it */
static int item_sample(struct item_in *it, struct tc_rec *out)
{
	struct tc_rec_sample_prev *pv = &it->r->prev;
	const unsigned char *d = it->d;
	size_t end = it->end;
	uint64_t v, ipd;
	bool v5 = it->r->version >= 5;
	unsigned f = d[it->pos++];
	int err;

	/* version 5 gives every bit a meaning; version 4 never both chain bits, 3 no
	 * reference */
	if (it->r->version < 5 &&
	    ((f & ~(it->r->version >= 4 ? SF_ALL : SF_ALL_V3)) ||
	     (f & (SF_CHAIN | SF_CHAIN_REF)) == (SF_CHAIN | SF_CHAIN_REF)))
		return corrupt(it->diag, it->name, it->start, "unknown sample flags");
	if (get_varint(d, &it->pos, end, &v))
		return BAD_FIELD;
	pv->time += unzigzag(v);
	/* version 5: against the chain's first frame, known once the chain is read */
	if (get_varint(d, &it->pos, end, &ipd))
		return BAD_FIELD;
	if (f & SF_TASK) {
		if (get_field(d, &it->pos, end, UINT32_MAX, &v))
			return BAD_FIELD;
		pv->pid = (uint32_t)v;
		if (get_field(d, &it->pos, end, UINT32_MAX, &v))
			return BAD_FIELD;
		pv->tid = (uint32_t)v;
	}
	if (f & SF_CPU) {
		if (get_field(d, &it->pos, end, UINT32_MAX, &v))
			return BAD_FIELD;
		pv->cpu = (uint32_t)v;
	}
	if (f & SF_EVENT) {
		if (get_field(d, &it->pos, end, UINT16_MAX, &v))
			return BAD_FIELD;
		pv->event = (uint32_t)v;
	}
	if (f & SF_PERIOD) {
		if (get_varint(d, &it->pos, end, &v))
			return BAD_FIELD;
		pv->period = v5 ? pv->period + unzigzag(v) : v;   /* a change, or the value */
	}
	if (f & SF_MISC) {
		if (get_field(d, &it->pos, end, UINT16_MAX, &v))
			return BAD_FIELD;
		pv->misc = (uint32_t)v;
	}
	if (f & SF_ADDR) {
		if (get_varint(d, &it->pos, end, &v))
			return BAD_FIELD;
		pv->addr += unzigzag(v);
	}
	if (v5)
		err = chain_tree(it, f, out);
	else
		err = f & (SF_CHAIN | SF_CHAIN_REF) ? chain_v4(it, f, out) : 0;
	if (err)
		return err;
	pv->ip = (v5 ? ip_base(out->u.sample.chain, out->u.sample.nr, pv->ip) : pv->ip) +
		 unzigzag(ipd);
	out->type = TC_REC_SAMPLE;
	out->u.sample.time = pv->time;
	out->u.sample.ip = pv->ip;
	out->u.sample.addr = pv->addr;
	out->u.sample.period = pv->period;
	out->u.sample.pid = pv->pid;
	out->u.sample.tid = pv->tid;
	out->u.sample.cpu = pv->cpu - 1;
	out->u.sample.event = (uint16_t)pv->event;
	out->u.sample.misc = (uint16_t)pv->misc;
	return 0;
}

/* One mark of a MARKS block, against the one before it */
static int item_mark(struct item_in *it, struct tc_rec *out)
{
	struct tc_rec_mark_prev *pv = &it->r->mprev;
	const unsigned char *d = it->d;
	size_t end = it->end;
	uint64_t v;
	unsigned f = d[it->pos++];

	if (f & ~MF_ALL)
		return corrupt(it->diag, it->name, it->start, "unknown mark flags");
	if (get_varint(d, &it->pos, end, &v))
		return BAD_FIELD;
	pv->time += unzigzag(v);
	if (get_varint(d, &it->pos, end, &v))
		return BAD_FIELD;
	pv->tsc += unzigzag(v);
	if (get_varint(d, &it->pos, end, &v))
		return BAD_FIELD;
	pv->value += unzigzag(v);
	if (f & MF_TASK) {
		if (get_field(d, &it->pos, end, UINT32_MAX, &v))
			return BAD_FIELD;
		pv->pid = (uint32_t)v;
		if (get_field(d, &it->pos, end, UINT32_MAX, &v))
			return BAD_FIELD;
		pv->tid = (uint32_t)v;
	}
	if (f & MF_CHANNEL) {
		if (get_field(d, &it->pos, end, UINT32_MAX, &v))
			return BAD_FIELD;
		pv->channel = (uint32_t)v;
	}
	if (f & MF_KIND) {
		if (get_field(d, &it->pos, end, UINT32_MAX, &v))
			return BAD_FIELD;
		pv->kind = (uint32_t)v;
	}
	out->type = TC_REC_MARK;
	out->u.mark = (typeof(out->u.mark)){ .time = pv->time, .tsc = pv->tsc,
					      .value = pv->value, .pid = pv->pid,
					      .tid = pv->tid, .channel = pv->channel,
					      .kind = pv->kind };
	return 0;
}

/* The kinds of block, one decoder of an item each, and their words for what is wrong */
struct block_kind {
	uint16_t type;
	int (*item)(struct item_in *it, struct tc_rec *out);
	const char *bad_header, *ends_early, *bad_field, *trailing;
};

static const struct block_kind block_kinds[] = {
	{ TC_REC_SAMPLES, item_sample, "bad sample block header",
	  "sample block ends before its last sample",
	  "a sample's field runs past its block or out of range",
	  "bytes after a sample block's last sample" },
	{ TC_REC_MARKS, item_mark, "bad mark block header",
	  "mark block ends before its last mark",
	  "a mark's field runs past its block or out of range",
	  "bytes after a mark block's last mark" },
};

static const struct block_kind *block_kind(uint16_t type)
{
	return &block_kinds[type == TC_REC_MARKS];
}

/* The next sample or mark of the block being read */
static int next_in_block(struct tc_record_reader *r, struct tc_rec *out, const char *name,
			 struct tacho_diag *diag)
{
	const struct block_kind *k = block_kind(r->block_type);
	struct item_in it = { .r = r, .d = r->data, .pos = r->block_pos, .end = r->block_end,
			      .start = r->block_pos, .name = name, .diag = diag };
	int err;

	if (it.pos >= it.end)
		return corrupt(diag, name, it.start, k->ends_early);
	memset(out, 0, sizeof(*out));
	err = k->item(&it, out);
	if (err == BAD_FIELD)
		return corrupt(diag, name, it.start, k->bad_field);
	if (err)
		return err;
	out->offset = it.start;
	r->block_pos = it.pos;
	/* the block ends with its last item and up to 7 zeros */
	if (--r->block_left == 0 &&
	    (it.end - it.pos >= 8 || memcmp(it.d + it.pos, zeros8, it.end - it.pos)))
		return corrupt(diag, name, it.pos, k->trailing);
	return 1;
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

/* A block of packed samples or marks: the reader steps into it and returns its first. */
static int dec_block(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_samples, b);
	if (b.count == 0 || b.pad)
		return bad(in, out, block_kind((uint16_t)in->type)->bad_header);
	r->block_pos = (size_t)out->offset + TC_REC_HDR + sizeof(b);
	r->block_end = (size_t)out->offset + in->size;
	r->block_left = b.count;
	r->block_type = (uint16_t)in->type;
	r->block_offset = out->offset;
	memset(&r->prev, 0, sizeof(r->prev));
	memset(&r->mprev, 0, sizeof(r->mprev));
	return next_in_block(r, out, in->name, in->diag);
}

/* Version 5: a user stack, the next piece of the file's zstd stream, unpacked into the
 * reader's memory (exactly the size the record says, else corrupt) */
static int dec_zstack(struct tc_record_reader *r, const struct rec_in *in, struct tc_rec *out)
{
	NEED(struct p_zstack, z);
	const char *why, *zerr = "";
	size_t want = (size_t)z.nregs * 8 + z.stack_len;
	unsigned char *dst;
	bool over;
	int ret;

	if (z.nregs > 64 || z.nregs != (uint32_t)__builtin_popcountll(z.mask) ||
	    z.stack_len > TC_USTACK_MAX || z.first > 1 || z.zlen > in->plen - sizeof(z))
		return bad(in, out, "bad compressed user stack sizes");
	if (!tc_zs_available(&why))
		return tc_diag_set(in->diag, in->name, 0, 0, -TACHO_EVERSION, "the user stack "
				   "at byte %" PRIu64 " is compressed and needs libzstd: %s "
				   "(Debian: apt-get install libzstd1)", out->offset, why);
	if (!z.first && !r->zds_started)
		return bad(in, out, "a compressed user stack without the start of its stream");
	if (!r->zds && !(r->zds = tc_zs_dstream_new()))
		return -ENOMEM;
	if (z.first)
		tc_zs_dstream_reset(r->zds);
	r->zds_started = true;
	/* a byte more than the record says, to see a piece that gives more */
	dst = mem_alloc(r, want + 1, &over);
	if (!dst)
		return over ? bad(in, out, "user stacks that unpack past their bound (128 "
				  "times the file, and 128 MiB)") : -ENOMEM;
	ret = tc_zs_decompress(r->zds, in->pl + sizeof(z), z.zlen, dst, want, want + 1, &zerr);
	if (ret) {
		char what[160];

		r->zds_started = false;   /* the stream cannot go on */
		snprintf(what, sizeof(what), "a compressed user stack that %s",
			 ret == 1 ? "unpacks to fewer bytes than it says" :
			 ret == 2 ? "unpacks to more bytes than it says" : "zstd cannot read");
		if (ret < 0)
			snprintf(what + strlen(what), sizeof(what) - strlen(what), " (%s)", zerr);
		return bad(in, out, what);
	}
	out->type = TC_REC_USTACK;
	out->u.ustack.abi = z.abi;
	out->u.ustack.mask = z.mask;
	out->u.ustack.nregs = z.nregs;
	out->u.ustack.stack_len = z.stack_len;
	out->u.ustack.regs = (const uint64_t *)(const void *)dst;
	out->u.ustack.stack = dst + (size_t)z.nregs * 8;
	return 1;
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
	[TC_REC_SAMPLES] = dec_block,
	[TC_REC_MARKS] = dec_block,
	[TC_REC_ZSTACK] = dec_zstack,
};

int tc_record_reader_next(struct tc_record_reader *r, struct tc_rec *out, const char *name,
			  struct tacho_diag *diag)
{
	if (r->block_left)
		return next_in_block(r, out, name, diag);
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
