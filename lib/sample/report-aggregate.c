/* report-aggregate.c - aggregating the samples of the selected event into rows (by
 * symbol, line, address or binary; self or with children) and the annotated view of one
 * function, instruction by instruction. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sample/report-int.h"
#include "tacho/sample.h"

struct agg {
	uint32_t sym, dso, file;
	int line;
	uint64_t addr;
	uint64_t samples, self;
	uint64_t events;               /* sum of the periods of its samples */
};

struct aggtab {
	struct agg *v;
	size_t n, cap;
	struct tc_hmap idx;
};

static int agg_add(struct aggtab *t, const struct agg *k, uint64_t incl, uint64_t self,
		   uint64_t events)
{
	uint64_t key = tc_hash_u64(k->sym ^ ((uint64_t)k->dso << 32)) ^
		       tc_hash_u64(k->file ^ ((uint64_t)(uint32_t)k->line << 32)) ^
		       tc_hash_u64(k->addr + 0x9e3779b97f4a7c15ull);
	uint32_t i;
	size_t pos = 0;

	/* probe by hash, then confirm the whole key (two keys may share a hash) */
	while (tc_hmap_next(&t->idx, key, &pos, &i)) {
		if (t->v[i].sym == k->sym && t->v[i].dso == k->dso && t->v[i].file == k->file &&
		    t->v[i].line == k->line && t->v[i].addr == k->addr) {
			t->v[i].samples += incl;
			t->v[i].self += self;
			t->v[i].events += events;
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
	if (tc_hmap_add(&t->idx, key, (uint32_t)t->n))
		return -ENOMEM;
	t->n++;
	return 0;
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
		k->file = l->file;
		k->line = l->line;
		/* without a line, keep instructions apart only by function */
		break;
	case TACHO_SORT_ADDRESS:
		k->sym = l->sym;
		k->dso = l->dso;
		k->file = l->file;
		k->line = l->line;
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
		/* like perf's "Overhead": each sample weighs the events it stands for, so that
		 * samples taken with a smaller period (calibration, frequency mode) count less */
		r[i].percent = total ? 100.0 * (double)a->events / (double)total : 0;
	}
	qsort(r, t->n, sizeof(*r), row_cmp);
	*rows = r;
	*n = t->n;
	return 0;
}

int tc_profile_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
		    struct tacho_profile_row **rows, size_t *n)
{
	struct aggtab t = { 0 };
	uint32_t frames[MAX_FRAMES];
	struct agg keys[MAX_FRAMES];
	int err = 0;

	*rows = NULL;
	*n = 0;
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		size_t nf, nk = 0;
		struct agg k;
		uint64_t w = p->smps[i].period;

		if (p->smps[i].event != p->sel)
			continue;
		if (!children) {
			/* self only: the leaf; no need to resolve the rest of the chain */
			err = tc_profile_frames(p, &p->smps[i], frames, 1, &nf);
			if (err)
				break;
			key_of(p, &p->locs[frames[0]], sort, &k);
			err = agg_add(&t, &k, 1, 1, w);
			continue;
		}
		err = tc_profile_frames(p, &p->smps[i], frames, MAX_FRAMES, &nf);
		if (err)
			break;
		for (size_t f = 0; f < nf; f++) {
			bool dup = false;
			key_of(p, &p->locs[frames[f]], sort, &k);
			for (size_t j = 0; j < nk && !dup; j++)
				dup = !memcmp(&keys[j], &k, sizeof(k));
			if (dup)
				continue;   /* recursion: count a function once per sample */
			keys[nk++] = k;
			err = agg_add(&t, &k, 1, f == 0, w);
			if (err)
				break;
		}
	}
	if (!err)
		err = to_rows(p, &t, p->sel_events, rows, n);
	free(t.v);
	tc_hmap_exit(&t.idx);
	return err;
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
	uint64_t sym_start = 0, hits = 0;
	int err = 0;

	*rows = NULL;
	*n = 0;
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		size_t nf;
		const struct loc *l;
		struct agg k;

		if (p->smps[i].event != p->sel)
			continue;
		err = tc_profile_frames(p, &p->smps[i], &frame, 1, &nf);
		if (err || !nf)
			break;
		l = &p->locs[frame];
		/* by the name shown or by the mangled one */
		if (l->sym == NONE ||
		    (strcmp(pool_str(p, l->sym), symbol) && strcmp(pool_str(p, l->raw), symbol)))
			continue;
		if (sym_id == NONE) {
			sym_id = l->sym;
			raw_id = l->raw;
			dso_name = l->dso;
			sym_start = l->sym_start;
		}
		key_of(p, l, TACHO_SORT_ADDRESS, &k);
		err = agg_add(&t, &k, 1, 1, p->smps[i].period);
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
		err = to_rows(p, &t, p->sel_events, rows, n);
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
