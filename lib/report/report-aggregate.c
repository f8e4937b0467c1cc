/* report-aggregate.c - aggregating the samples of the selected event into rows (by any
 * tuple of comm, pid, tid, cpu, event, binary, symbol, line and address; self or with
 * children; with caller or callee trees below) and the annotated view of one function,
 * instruction by instruction. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-int.h"
#include "tacho/report.h"

struct agg {
	uint32_t sym, dso, file;
	int line;
	uint64_t addr;
	uint64_t samples, self;
	uint64_t events;               /* sum of the periods of its samples */
	uint64_t self_events;          /* of those in the function itself */
	/* the dimensions of tacho_profile_report_rows (0 where the sort has none) */
	uint32_t comm, event, pid, tid, cpu;
};

struct aggtab {
	struct agg *v;
	size_t n, cap;
	struct tc_hmap idx;
};

/* Adds to the row of key k (made when new); *at: its index. */
static int agg_add_at(struct aggtab *t, const struct agg *k, uint64_t incl, uint64_t self,
		      uint64_t events, uint32_t *at)
{
	uint64_t key = tc_hash_u64(k->sym ^ ((uint64_t)k->dso << 32)) ^
		       tc_hash_u64(k->file ^ ((uint64_t)(uint32_t)k->line << 32)) ^
		       tc_hash_u64(k->addr + 0x9e3779b97f4a7c15ull) ^
		       tc_hash_u64(((uint64_t)k->comm << 32 | k->event) + 1) ^
		       tc_hash_u64(((uint64_t)k->pid << 32 | k->tid) + ((uint64_t)k->cpu << 7) + 3);
	uint32_t i;
	size_t pos = 0;

	/* probe by hash, then confirm the whole key (two keys may share a hash) */
	while (tc_hmap_next(&t->idx, key, &pos, &i)) {
		if (t->v[i].sym == k->sym && t->v[i].dso == k->dso && t->v[i].file == k->file &&
		    t->v[i].line == k->line && t->v[i].addr == k->addr && t->v[i].comm == k->comm &&
		    t->v[i].event == k->event && t->v[i].pid == k->pid && t->v[i].tid == k->tid &&
		    t->v[i].cpu == k->cpu) {
			t->v[i].samples += incl;
			t->v[i].self += self;
			t->v[i].events += events;
			t->v[i].self_events += self ? events : 0;
			*at = i;
			return 0;
		}
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		struct agg *nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = nc;
	}
	t->v[t->n] = *k;
	t->v[t->n].samples = incl;
	t->v[t->n].self = self;
	t->v[t->n].events = events;
	t->v[t->n].self_events = self ? events : 0;
	if (tc_hmap_add(&t->idx, key, (uint32_t)t->n))
		return -ENOMEM;
	*at = (uint32_t)t->n++;
	return 0;
}

static int agg_add(struct aggtab *t, const struct agg *k, uint64_t incl, uint64_t self,
		   uint64_t events)
{
	uint32_t at;

	return agg_add_at(t, k, incl, self, events, &at);
}

static void key_of(const struct tacho_profile *p, const struct loc *l, enum tacho_sort sort,
		   struct agg *k)
{
	memset(k, 0, sizeof(*k));
	k->sym = NONE;
	k->file = NONE;
	switch (sort) {
	case TACHO_SORT_DSO:
		k->dso = l->dso;
		break;
	case TACHO_SORT_LINE:
		k->sym = l->sym;
		k->dso = l->dso;
		k->file = l->src_file;
		k->line = l->src_line;
		/* without a line, keep instructions apart only by function */
		break;
	case TACHO_SORT_ADDRESS:
		k->sym = l->sym;
		k->dso = l->dso;
		k->file = l->src_file;
		k->line = l->src_line;
		k->addr = l->addr;
		break;
	case TACHO_SORT_SYMBOL:
	default:
		k->sym = l->sym;
		k->dso = l->dso;
		break;
	}
	(void)p;
}

static int row_cmp(const void *a, const void *b)
{
	const struct tacho_profile_row *x = a, *y = b;
	int c;

	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if ((c = strcmp(x->symbol, y->symbol)))
		return c;
	if ((c = strcmp(x->dso, y->dso)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

static int to_rows(struct tacho_profile *p, struct aggtab *t, uint64_t total,
		   struct tacho_profile_row **rows, size_t *n)
{
	struct tacho_profile_row *r = calloc(t->n ? t->n : 1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct agg *a = &t->v[i];
		r[i].symbol = a->sym == NONE ? "[unknown]" : pool_str(p, a->sym);
		r[i].dso = pool_str(p, a->dso) ? pool_str(p, a->dso) : "[unknown]";
		r[i].file = pool_str(p, a->file);
		r[i].line = a->line;
		r[i].address = a->addr;
		r[i].samples = a->samples;
		r[i].self = a->self;
		r[i].events = a->events;
		r[i].self_events = a->self_events;
		/* like perf's "Overhead": each sample weighs the events it stands for, so that
		 * samples taken with a smaller period (calibration, frequency mode) count less */
		r[i].percent = total ? 100.0 * (double)a->events / (double)total : 0;
		r[i].pid = r[i].tid = r[i].cpu = -1;
	}
	qsort(r, t->n, sizeof(*r), row_cmp);
	*rows = r;
	*n = t->n;
	return 0;
}

int tc_profile_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
		    struct tacho_profile_row **rows, size_t *n)
{
	struct tacho_report_opts o = { .sz = sizeof(o), .sort = &sort, .nsort = 1,
				       .children = children };

	return tc_profile_report_rows(p, &o, rows, n);
}

static int addr_cmp(const void *a, const void *b)
{
	const struct tacho_profile_row *x = a, *y = b;

	return x->address < y->address ? -1 : x->address > y->address;
}

int tc_profile_annotate(struct tacho_profile *p, const char *symbol,
			struct tacho_profile_row **rows, size_t *n)
{
	struct aggtab t = { 0 };
	uint32_t frame, sym_id = NONE, raw_id = NONE, dso_name = NONE;
	uint64_t sym_start = 0, hits = 0, total = 0;
	int err = tc_profile_want_lines(p);   /* the rows are by address, with lines */

	*rows = NULL;
	*n = 0;
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		size_t nf;
		const struct loc *l;
		struct agg k;
		int keep = tc_profile_keep(p, &p->smps[i]);

		if (keep <= 0) {
			err = keep;
			continue;
		}
		total += tc_smp_period(p, &p->smps[i]);   /* the share is of the samples kept */
		err = tc_profile_frames(p, &p->smps[i], &frame, 1, &nf);
		if (err || !nf)
			break;
		l = &p->locs[frame];
		/* by the name shown or by the mangled one */
		if (l->sym == NONE ||
		    (!tc_sym_name_match(pool_str(p, l->sym), symbol) &&
		     !tc_sym_name_match(pool_str(p, l->raw), symbol)))
			continue;
		if (sym_id == NONE) {
			sym_id = l->sym;
			raw_id = l->raw;
			dso_name = l->dso;
			sym_start = l->sym_start;
		}
		key_of(p, l, TACHO_SORT_ADDRESS, &k);
		err = agg_add(&t, &k, 1, 1, tc_smp_period(p, &p->smps[i]));
		hits++;
	}
	if (err || !hits) {
		free(t.v);
		tc_hmap_exit(&t.idx);
		return err ? err : -ENOENT;
	}
	/* every instruction of the function, sampled or not, when its bytes can be read
	 * and decoded: the view then reads like a listing */
	for (size_t i = 0; i < p->ndsos && !err; i++) {
		struct dso *d = &p->dsos[i];
		struct tc_symdso *sd;
		uint64_t start, size;
		uint8_t code[65536];
		size_t got, off = 0;

		if (d->name != dso_name || !(sd = tc_profile_dso_open(p, d)))
			continue;
		if (tc_symdso_find(sd, pool_str(p, raw_id), &start, &size) || start != sym_start ||
		    !size || size > sizeof(code))
			break;
		got = tc_symdso_read(sd, start, code, (size_t)size);
		while (off < got && !err) {
			unsigned len = tc_x86_insn_len(code + off, got - off);
			struct tc_symloc sl;
			struct agg k = { .sym = sym_id, .dso = dso_name, .file = NONE, .addr = start + off };
			if (!len)
				break;
			tc_symdso_lookup(sd, start + off, &sl);
			if (sl.file && tc_strpool_intern(&p->pool, sl.file, &k.file))
				err = -ENOMEM;
			k.line = sl.line;
			if (!err)
				err = agg_add(&t, &k, 0, 0, 0);
			off += len;
		}
		break;
	}
	if (!err)
		err = to_rows(p, &t, total, rows, n);
	if (!err) {
		/* the same address may come twice if a line table disagreed: keep the one
		 * with samples (agg_add merged equal keys already) */
		qsort(*rows, *n, sizeof(**rows), addr_cmp);
		size_t w = 0;
		for (size_t i = 0; i < *n; i++) {
			if (w && (*rows)[w - 1].address == (*rows)[i].address) {
				if ((*rows)[i].samples > (*rows)[w - 1].samples)
					(*rows)[w - 1] = (*rows)[i];
				continue;
			}
			(*rows)[w++] = (*rows)[i];
		}
		*n = w;
	}
	free(t.v);
	tc_hmap_exit(&t.idx);
	return err;
}

/* --- dimensions and trees (tacho_profile_report_rows) --- */

enum {
	D_COMM = 1 << 0, D_PID = 1 << 1, D_TID = 1 << 2, D_CPU = 1 << 3, D_EVENT = 1 << 4,
	D_DSO = 1 << 5, D_SYM = 1 << 6, D_LINE = 1 << 7, D_ADDR = 1 << 8,
};

/* What a key aggregates by: the location keys nest (a function is named with its
 * binary, a line with its function, an instruction with its line). */
static unsigned dims_of(enum tacho_sort s)
{
	switch (s) {
	case TACHO_SORT_SYMBOL:
		return D_SYM | D_DSO;
	case TACHO_SORT_DSO:
		return D_DSO;
	case TACHO_SORT_LINE:
		return D_LINE | D_SYM | D_DSO;
	case TACHO_SORT_ADDRESS:
		return D_ADDR | D_LINE | D_SYM | D_DSO;
	case TACHO_SORT_COMM:
		return D_COMM;
	case TACHO_SORT_PID:
		return D_PID;
	case TACHO_SORT_TID:
		return D_TID;
	case TACHO_SORT_CPU:
		return D_CPU;
	case TACHO_SORT_EVENT:
		return D_EVENT;
	}
	return 0;
}

/* The name of an address no function covers, "[unknown] 0x...": the address within its
 * binary (its ELF address, or the file offset where the binary could not be read; the
 * address itself in the kernel or outside any mapping), so that each is a row of its
 * own, as perf lists them, instead of one "[unknown]" that looks like a hot function. */
static int unknown_name(struct tacho_profile *p, const struct loc *l, uint32_t *id)
{
	uint32_t at = (uint32_t)(l - p->locs);
	char buf[48];

	/* made once per location: a stripped binary's samples (a shell's) each asked
	 * for one, and formatting and interning it was a fifth of such a report */
	if (tc_hmap_get(&p->unk_idx, at, id))
		return 0;
	snprintf(buf, sizeof(buf), "[unknown] %#" PRIx64, l->dso == p->unknown_id ? l->ip : l->addr);
	if (tc_strpool_intern(&p->pool, buf, id) || tc_hmap_put(&p->unk_idx, at, *id))
		return -ENOMEM;
	return 0;
}

static uint32_t comm_id(struct tacho_profile *p, uint32_t pid)
{
	struct proc *pr = tc_profile_proc(p, pid, false);

	return pr ? pr->comm : NONE;
}

static int key_dims(struct tacho_profile *p, const struct smp *s, const struct loc *l,
		    unsigned m, struct agg *k)
{
	memset(k, 0, sizeof(*k));
	k->sym = NONE;
	k->dso = NONE;
	k->file = NONE;
	if (m & D_COMM)
		k->comm = comm_id(p, tc_smp_pid(p, s));
	if (m & D_PID)
		k->pid = tc_smp_pid(p, s);
	if (m & D_TID)
		k->tid = tc_smp_tid(p, s);
	if (m & D_CPU)
		k->cpu = tc_smp_cpu(p, s);
	if (m & D_EVENT)
		k->event = tc_smp_event(p, s);
	if (m & D_DSO)
		k->dso = l->dso;
	if (m & D_SYM) {
		k->sym = l->sym;
		if (l->sym == NONE && unknown_name(p, l, &k->sym))
			return -ENOMEM;
	}
	if (m & D_LINE) {
		k->file = l->src_file;
		k->line = l->src_line;
	}
	if (m & D_ADDR)
		k->addr = l->addr;
	return 0;
}

/* A node of a call-graph tree: a function below its parent (an entry, or NODE | node). */
#define NODE (1ull << 63)

struct tnode {
	uint64_t parent;
	uint32_t sym, dso;
	uint64_t samples, events;
};

struct tree {
	struct tnode *v;
	size_t n, cap;
	struct tc_hmap idx;            /* hash of (parent, sym, dso) -> v */
};

/* The child (sym, dso) of parent, made when new, weighed with one more sample; *out:
 * its id as a parent. */
static int tree_step(struct tree *t, uint64_t parent, uint32_t sym, uint32_t dso, uint64_t w,
		     uint64_t *out)
{
	uint64_t key = tc_hash_u64(parent) ^ tc_hash_u64(((uint64_t)sym << 32 | dso) + 1);
	size_t pos = 0;
	uint32_t i;

	while (tc_hmap_next(&t->idx, key, &pos, &i))
		if (t->v[i].parent == parent && t->v[i].sym == sym && t->v[i].dso == dso)
			goto found;
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		struct tnode *nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = nc;
	}
	i = (uint32_t)t->n;
	t->v[t->n++] = (struct tnode){ .parent = parent, .sym = sym, .dso = dso };
	if (tc_hmap_add(&t->idx, key, i))
		return -ENOMEM;
found:
	t->v[i].samples++;
	t->v[i].events += w;
	*out = NODE | i;
	return 0;
}

/* The path of one sample below entry e (which is frames[f]): callee, its callers up to
 * the root; caller, from the root down to the entry's caller, or, with children, from
 * the entry down to the leaf. When the entry is no function (--sort comm), the path
 * holds frame f itself too. */
static int tree_path(struct tacho_profile *p, struct tree *t, uint32_t e, const uint32_t *frames,
		     size_t nf, size_t f, const struct tacho_report_opts *o, bool with_f,
		     uint64_t w)
{
	/* the frames of the path, in order: from..to stepping by dir */
	long from, to, dir;
	uint64_t at = e;
	int err = 0;

	if (o->graph == TACHO_GRAPH_CALLEE) {
		from = (long)f + !with_f;
		to = (long)nf - 1;
		dir = 1;
	} else if (!o->children) {
		from = (long)nf - 1;
		to = (long)f + !with_f;
		dir = -1;
	} else {
		from = (long)f - !with_f;
		to = 0;
		dir = -1;
	}
	for (long j = from; !err && (dir > 0 ? j <= to : j >= to); j += dir) {
		const struct loc *l = &p->locs[frames[j]];
		uint32_t sym = l->sym;

		if (sym == NONE && (err = unknown_name(p, l, &sym)))
			break;
		err = tree_step(t, at, sym, l->dso, w, &at);
	}
	return err;
}

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* Most events first, then samples, then the keys, so that equal reports are equal. */
static int dim_row_cmp(const struct tacho_profile_row *x, const struct tacho_profile_row *y)
{
	int c;

	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if ((c = str_cmp(x->comm, y->comm)) || (c = str_cmp(x->event, y->event)))
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if ((c = str_cmp(x->dso, y->dso)) || (c = str_cmp(x->symbol, y->symbol)) ||
	    (c = str_cmp(x->file, y->file)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

struct ranked {
	struct tacho_profile_row r;
	uint64_t slot;                 /* the entry, or NODE | node, whose tree follows */
};

static int ranked_cmp(const void *a, const void *b)
{
	return dim_row_cmp(&((const struct ranked *)a)->r, &((const struct ranked *)b)->r);
}

/* What the rows are made from. */
struct build {
	struct tacho_profile *p;
	const struct tacho_report_opts *o;
	unsigned m;
	struct aggtab t;
	struct tree tree;
	uint64_t total, *ev_total;     /* ev_total: per event, with the event key */
	uint64_t kept;                 /* samples the filter kept */
	size_t *first, *kids;          /* the tree's children of each slot (entries, then
					  nodes), as offsets into kids */
	struct tacho_profile_row *out;
	size_t nout, cap;
};

/* Like perf's "Overhead": each sample weighs the events it stands for (its period), so
 * that samples taken with a smaller period (calibration, frequency mode) count less; a
 * share of the samples the filter kept (with the event key, of its own event's). */
static double share(const struct build *b, uint64_t events, uint32_t event)
{
	uint64_t total = b->ev_total ? b->ev_total[event] : b->total;

	return total ? 100.0 * (double)events / (double)total : 0;
}

static int emit(struct build *b, const struct tacho_profile_row *r)
{
	if (b->nout == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 64;
		struct tacho_profile_row *nv = realloc(b->out, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		b->out = nv;
		b->cap = nc;
	}
	b->out[b->nout++] = *r;
	return 0;
}

/* The rows below slot (of the children of slot), most events first, depth first. */
static int emit_tree(struct build *b, size_t slot, unsigned depth, uint32_t event)
{
	size_t ne = b->t.n, from = b->first[slot], to = b->first[slot + 1];
	struct ranked *kids;
	int err = 0;

	if (from == to)
		return 0;
	kids = calloc(to - from, sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	for (size_t i = from; i < to; i++) {
		const struct tnode *nd = &b->tree.v[b->kids[i]];
		struct tacho_profile_row *r = &kids[i - from].r;
		r->symbol = pool_str(b->p, nd->sym);
		r->dso = pool_str(b->p, nd->dso) ? pool_str(b->p, nd->dso) : "[unknown]";
		r->samples = nd->samples;
		r->events = nd->events;
		r->percent = share(b, nd->events, event);
		r->pid = r->tid = r->cpu = -1;
		r->depth = depth;
		kids[i - from].slot = ne + b->kids[i];
	}
	qsort(kids, to - from, sizeof(*kids), ranked_cmp);
	for (size_t i = 0; i < to - from && !err; i++) {
		if (kids[i].r.percent < b->o->percent_limit)
			continue;
		err = emit(b, &kids[i].r);
		if (!err)
			err = emit_tree(b, (size_t)kids[i].slot, depth + 1, event);
	}
	free(kids);
	return err;
}

/* The children lists of every slot, counted then placed (the nodes are in the order
 * they were made, which puts each after its parent). */
static int tree_index(struct build *b)
{
	size_t ne = b->t.n, nn = b->tree.n, *fill;

	b->first = calloc(ne + nn + 2, sizeof(*b->first));
	b->kids = malloc((nn ? nn : 1) * sizeof(*b->kids));
	fill = calloc(ne + nn + 1, sizeof(*fill));
	if (!b->first || !b->kids || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nn; i++) {
		uint64_t par = b->tree.v[i].parent;
		b->first[(par & NODE ? ne + (par & ~NODE) : par) + 1]++;
	}
	for (size_t s = 0; s < ne + nn; s++)
		b->first[s + 1] += b->first[s];
	for (size_t i = 0; i < nn; i++) {
		uint64_t par = b->tree.v[i].parent;
		size_t s = par & NODE ? ne + (par & ~NODE) : par;
		b->kids[b->first[s] + fill[s]++] = i;
	}
	free(fill);
	return 0;
}

static int make_rows(struct build *b)
{
	struct tacho_profile *p = b->p;
	size_t ne = b->t.n;
	struct ranked *r = calloc(ne ? ne : 1, sizeof(*r));
	int err = 0;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < ne; i++) {
		const struct agg *a = &b->t.v[i];
		struct tacho_profile_row *w = &r[i].r;
		w->symbol = a->sym == NONE ? "[unknown]" : pool_str(p, a->sym);
		w->dso = pool_str(p, a->dso) ? pool_str(p, a->dso) : "[unknown]";
		w->file = pool_str(p, a->file);
		w->line = a->line;
		w->address = a->addr;
		w->samples = a->samples;
		w->self = a->self;
		w->events = a->events;
		w->self_events = a->self_events;
		w->percent = share(b, a->events, a->event);
		w->comm = b->m & D_COMM ? (a->comm == NONE ? "[unknown]" : pool_str(p, a->comm)) : NULL;
		w->pid = b->m & D_PID ? (int)a->pid : -1;
		w->tid = b->m & D_TID ? (int)a->tid : -1;
		w->cpu = b->m & D_CPU ? (int)a->cpu : -1;
		w->event = b->m & D_EVENT && a->event < p->nev ? pool_str(p, p->evs[a->event].name) :
		     NULL;
		r[i].slot = i;
	}
	qsort(r, ne, sizeof(*r), ranked_cmp);
	if (b->o->graph)
		err = tree_index(b);
	for (size_t i = 0; i < ne && !err; i++) {
		if (r[i].r.percent < b->o->percent_limit)
			continue;
		err = emit(b, &r[i].r);
		if (!err && b->o->graph)
			err = emit_tree(b, (size_t)r[i].slot, 1, b->t.v[r[i].slot].event);
	}
	free(r);
	return err;
}

static int add_sample(struct build *b, const struct smp *s)
{
	struct tacho_profile *p = b->p;
	const struct tacho_report_opts *o = b->o;
	uint32_t frames[MAX_FRAMES], at;
	struct agg keys[MAX_FRAMES];
	size_t nf, nk = 0;
	int err;

	/* a call graph's frames are the chain, inlined functions included; a row of the
	 * sampled function alone is the function the symbol table names */
	err = o->children || o->graph ? tc_profile_chain(p, s, frames, MAX_FRAMES, &nf) :
					tc_profile_frames(p, s, frames, 1, &nf);
	if (err || !nf)
		return err;
	for (size_t f = 0; f < (o->children ? nf : 1) && !err; f++) {
		struct agg k;
		bool dup = false;
		err = key_dims(p, s, &p->locs[frames[f]], b->m, &k);
		for (size_t j = 0; j < nk && !dup && !err; j++)
			dup = !memcmp(&keys[j], &k, sizeof(k));
		if (err || dup)
			continue;   /* recursion: count a function once per sample */
		keys[nk++] = k;
		err = agg_add_at(&b->t, &k, 1, f == 0, tc_smp_period(p, s), &at);
		if (!err && o->graph)
			err = tree_path(p, &b->tree, at, frames, nf, f, o, !(b->m & D_SYM),
					tc_smp_period(p, s));
	}
	return err;
}

int tc_profile_report_rows(struct tacho_profile *p, const struct tacho_report_opts *o,
			   struct tacho_profile_row **rows, size_t *n)
{
	struct build b = { .p = p, .o = o };
	int err = 0;

	*rows = NULL;
	*n = 0;
	for (size_t i = 0; i < o->nsort; i++)
		b.m |= dims_of(o->sort[i]);
	if (!o->nsort)
		b.m = dims_of(TACHO_SORT_SYMBOL);
	if ((b.m & D_LINE) && tc_profile_want_lines(p))
		return -ENOMEM;
	/* with the event key, every event of the file, each row a share of its own */
	if ((b.m & D_EVENT) && !(b.ev_total = calloc(p->nev + 1, sizeof(*b.ev_total))))
		return -ENOMEM;
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		const struct smp *s = &p->smps[i];
		int keep = b.ev_total ? tc_profile_keep_any(p, s) : tc_profile_keep(p, s);

		if (keep <= 0) {
			err = keep;
			continue;
		}
		b.total += tc_smp_period(p, s);
		b.kept++;
		if (b.ev_total && tc_smp_event(p, s) < p->nev)
			b.ev_total[tc_smp_event(p, s)] += tc_smp_period(p, s);
		err = add_sample(&b, s);
	}
	if (!err)
		err = make_rows(&b);
	p->kept_samples = b.kept;
	p->kept_events = b.total;
	if (!err) {
		*rows = b.out ? b.out : calloc(1, sizeof(**rows));
		*n = b.nout;
		if (!*rows)
			err = -ENOMEM;
	} else {
		free(b.out);
	}
	free(b.t.v);
	tc_hmap_exit(&b.t.idx);
	free(b.tree.v);
	tc_hmap_exit(&b.tree.idx);
	free(b.first);
	free(b.kids);
	free(b.ev_total);
	return err;
}

/* --- the rows as the caller knows them --- */

/* The first version of struct tacho_profile_row ends at percent. */
#define ROW_SZ_V1 tc_offsetofend(struct tacho_profile_row, percent)

/* Lays the library's rows out at the caller's element size (when it is the library's
 * own, they are handed over as they are). Frees lib. 0 or -ENOMEM. */
static int at_caller_size(struct tacho_profile_row *lib, size_t n, size_t row_sz,
			  struct tacho_profile_row **rows)
{
	char *laid;

	if (row_sz == sizeof(*lib) || !n) {
		*rows = lib;
		return 0;
	}
	laid = calloc(n, row_sz);
	if (!laid) {
		free(lib);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		tc_sized_put(TC_ELEM(laid, i, row_sz), row_sz, &lib[i], sizeof(lib[i]));
	free(lib);
	*rows = (struct tacho_profile_row *)(void *)laid;
	return 0;
}

int tacho_profile_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
		       struct tacho_profile_row **rows, size_t *n, size_t row_sz)
{
	struct tacho_profile_row *lib;
	size_t nl;
	int err;

	if (rows)
		*rows = NULL;
	if (n)
		*n = 0;
	if (!p || !rows || !n || row_sz < ROW_SZ_V1)
		return -EINVAL;
	err = tc_profile_rows(p, sort, children, &lib, &nl);
	if (!err)
		err = at_caller_size(lib, nl, row_sz, rows);
	if (!err)
		*n = nl;
	return err;
}

/* The first version of struct tacho_report_opts (TC_OPTS_VALID) ends at percent_limit. */
#define TC_OPTS_V1_tacho_report_opts tc_offsetofend(struct tacho_report_opts, percent_limit)

int tacho_profile_report_rows(struct tacho_profile *p, const struct tacho_report_opts *opts,
			      struct tacho_profile_row **rows, size_t *n, size_t row_sz)
{
	struct tacho_report_opts o = { .sz = sizeof(o) };
	struct tacho_profile_row *lib;
	size_t nl;
	int err;

	if (rows)
		*rows = NULL;
	if (n)
		*n = 0;
	if (!p || !opts || !rows || !n || row_sz < ROW_SZ_V1)
		return -EINVAL;
	err = tc_report_opts_get(opts, &o);
	if (!err)
		err = tc_profile_report_rows(p, &o, &lib, &nl);
	if (!err)
		err = at_caller_size(lib, nl, row_sz, rows);
	if (!err)
		*n = nl;
	return err;
}

int tc_report_opts_get(const struct tacho_report_opts *in, struct tacho_report_opts *o)
{
	int err = TC_OPTS_VALID(in, tacho_report_opts);

	if (err)
		return err;
	TC_OPTS_COPY(o, in);
	if ((o->nsort && !o->sort) || (unsigned)o->graph > TACHO_GRAPH_CALLEE ||
	    !(o->percent_limit >= 0 && o->percent_limit <= 100))
		return -EINVAL;
	for (size_t i = 0; i < o->nsort; i++)
		if ((unsigned)o->sort[i] > TACHO_SORT_EVENT)
			return -EINVAL;
	return 0;
}

int tacho_profile_annotate(struct tacho_profile *p, const char *symbol,
			   struct tacho_profile_row **rows, size_t *n, size_t row_sz)
{
	struct tacho_profile_row *lib;
	size_t nl;
	int err;

	if (rows)
		*rows = NULL;
	if (n)
		*n = 0;
	if (!p || !symbol || !rows || !n || row_sz < ROW_SZ_V1)
		return -EINVAL;
	err = tc_profile_annotate(p, symbol, &lib, &nl);
	if (!err)
		err = at_caller_size(lib, nl, row_sz, rows);
	if (!err)
		*n = nl;
	return err;
}
