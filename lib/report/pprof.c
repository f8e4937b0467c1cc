/* pprof.c - `report --format pprof`: the selected event's samples as pprof's
 * profile.proto (github.com/google/pprof, proto/profile.proto), gzipped, for go tool
 * pprof, Pyroscope, Parca and Grafana. The protobuf encoding is written here (varints
 * and length-delimited fields are all profile.proto needs); zlib does the gzip. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report/report-int.h"
#include "util/util.h"
#include "tacho/report.h"

/* --- protobuf: a growing byte buffer and the two wire types used --- */

struct pb {
	uint8_t *b;
	size_t n, cap;
	bool oom;
};

enum { PB_VARINT = 0, PB_LEN = 2 };

static void pb_raw(struct pb *p, const void *d, size_t n)
{
	if (p->oom)
		return;
	if (p->n + n > p->cap) {
		size_t nc = p->cap ? p->cap : 256;
		uint8_t *nb;
		while (nc < p->n + n)
			nc *= 2;
		nb = realloc(p->b, nc);
		if (!nb) {
			p->oom = true;
			return;
		}
		p->b = nb;
		p->cap = nc;
	}
	memcpy(p->b + p->n, d, n);
	p->n += n;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	pb_raw(p, buf, n);
}

static void pb_key(struct pb *p, unsigned field, unsigned wire)
{
	pb_varint(p, (uint64_t)field << 3 | wire);
}

/* An integer field (uint64, or int64 as its two's complement); 0 is the default and
 * is left out, as protobuf encoders do. */
static void pb_uint(struct pb *p, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(p, field, PB_VARINT);
	pb_varint(p, v);
}

static void pb_bytes(struct pb *p, unsigned field, const void *d, size_t n)
{
	pb_key(p, field, PB_LEN);
	pb_varint(p, n);
	pb_raw(p, d, n);
}

/* A sub-message: its encoding in sub, which is emptied for the next one. */
static void pb_msg(struct pb *p, unsigned field, struct pb *sub)
{
	if (sub->oom)
		p->oom = true;
	pb_bytes(p, field, sub->b, sub->n);
	sub->n = 0;
	sub->oom = false;
}

/* --- the profile --- */

/* profile.proto's field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE, PROFILE_MAPPING, PROFILE_LOCATION,
	PROFILE_FUNCTION, PROFILE_STRING_TABLE, PROFILE_DURATION = 10, PROFILE_PERIOD_TYPE,
	PROFILE_PERIOD, PROFILE_COMMENT, PROFILE_DEFAULT_SAMPLE_TYPE,
};

struct pprof {
	struct tacho_profile *p;
	struct tc_strpool strs;        /* the string table: id = index */
	struct tc_strpool stacks;      /* "pid leaf-loc caller-loc ...": one sample each */
	uint64_t *counts, *events;     /* by stack id */
	size_t cap;
	uint32_t *loc_id;              /* location id of each loc index, 0: not used */
	uint32_t *fn_of;               /* function id of each loc index, 0: none */
	uint32_t *map_of;              /* mapping id of each loc index, 0: none */
	size_t nloc;
	struct tc_hmap fn_idx;         /* (sym, dso) -> function id - 1 */
	struct tc_hmap map_idx;        /* dso name -> mapping id - 1 */
	uint32_t *fn_sym, *fn_raw, *fn_file;   /* by function id - 1 */
	uint32_t *fn_dso;
	size_t nfn;
	uint32_t *map_dso;             /* by mapping id - 1 */
	uint64_t *map_lo, *map_hi;
	bool *map_lines, *map_fns;
	size_t nmap;
	bool oom;                      /* a string could not be added to the table */
};

static uint64_t str_id(struct pprof *x, const char *s)
{
	uint32_t id = 0;

	if (tc_strpool_intern(&x->strs, s ? s : "", &id))
		x->oom = true;   /* found by encode's last check */
	return id;
}

static int grow_u32(uint32_t **v, size_t n)
{
	uint32_t *nv = realloc(*v, n * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	return 0;
}

/* The selected event's samples grouped by (process, stack). */
static int collect_stacks(struct pprof *x)
{
	struct tacho_profile *p = x->p;
	uint32_t frames[MAX_FRAMES];
	struct tc_sb sb = TC_SB_INIT;
	int err = 0;

	tc_sb_init(&sb);
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		const struct smp *s = &p->smps[i];
		size_t nf;
		uint32_t id;
		int keep = tc_profile_keep(p, s);   /* the event and the filter */

		if (keep < 0) {
			err = keep;
			break;
		}
		if (!keep)
			continue;
		err = tc_profile_frames(p, s, frames, MAX_FRAMES, &nf);
		if (err)
			break;
		tc_sb_reset(&sb);
		tc_sb_addf(&sb, "%x", tc_smp_pid(p, s));
		for (size_t k = 0; k < nf; k++)
			tc_sb_addf(&sb, " %x", frames[k]);
		if (sb.oom || tc_strpool_intern(&x->stacks, sb.buf, &id)) {
			err = -ENOMEM;
			break;
		}
		if (id >= x->cap) {
			size_t nc = x->cap ? x->cap * 2 : 256;
			uint64_t *nc1 = realloc(x->counts, nc * sizeof(*nc1));
			if (nc1)
				x->counts = nc1;
			uint64_t *nc2 = nc1 ? realloc(x->events, nc * sizeof(*nc2)) : NULL;
			if (!nc2) {
				err = -ENOMEM;
				break;
			}
			x->events = nc2;
			memset(x->counts + x->cap, 0, (nc - x->cap) * sizeof(*x->counts));
			memset(x->events + x->cap, 0, (nc - x->cap) * sizeof(*x->events));
			x->cap = nc;
		}
		x->counts[id]++;
		x->events[id] += tc_smp_period(p, s);
	}
	tc_sb_exit(&sb);
	return err;
}

static int order_mappings(struct pprof *x);

/* Functions (one per name and binary), mappings (one per binary) and locations (one
 * per resolved address) of the locs the stacks use. */
static int number_locations(struct pprof *x)
{
	struct tacho_profile *p = x->p;
	uint32_t next_loc = 1;
	int err = 0;

	x->nloc = p->nlocs;
	x->loc_id = calloc(x->nloc ? x->nloc : 1, sizeof(*x->loc_id));
	x->fn_of = calloc(x->nloc ? x->nloc : 1, sizeof(*x->fn_of));
	x->map_of = calloc(x->nloc ? x->nloc : 1, sizeof(*x->map_of));
	if (!x->loc_id || !x->fn_of || !x->map_of)
		return -ENOMEM;
	for (size_t s = 0; s < tc_strpool_count(&x->stacks) && !err; s++) {
		const char *c = tc_strpool_str(&x->stacks, (uint32_t)s);
		char *end;

		strtoul(c, &end, 16);   /* the pid */
		for (c = end; *c && !err; c = end) {
			uint32_t li = (uint32_t)strtoul(c, &end, 16), v;
			const struct loc *l;

			if (end == c || li >= x->nloc)
				break;
			if (x->loc_id[li])
				continue;
			x->loc_id[li] = next_loc++;
			l = &p->locs[li];
			if (l->sym != NONE) {
				uint64_t key = tc_hash_u64(((uint64_t)l->sym << 32) | l->dso);
				size_t pos = 0;
				bool found = false;
				while (!found && tc_hmap_next(&x->fn_idx, key, &pos, &v))
					found = x->fn_sym[v] == l->sym && x->fn_dso[v] == l->dso;
				if (!found) {
					v = (uint32_t)x->nfn;
					if (grow_u32(&x->fn_sym, x->nfn + 1) ||
					    grow_u32(&x->fn_raw, x->nfn + 1) ||
					    grow_u32(&x->fn_file, x->nfn + 1) ||
					    grow_u32(&x->fn_dso, x->nfn + 1) ||
					    tc_hmap_add(&x->fn_idx, key, v)) {
						err = -ENOMEM;
						break;
					}
					x->fn_sym[v] = l->sym;
					x->fn_raw[v] = l->raw;
					x->fn_file[v] = l->src_file;
					x->fn_dso[v] = l->dso;
					x->nfn++;
				} else if (x->fn_file[v] == NONE) {
					x->fn_file[v] = l->src_file;
				}
				x->fn_of[li] = v + 1;
			}
			if (l->dso != NONE && l->dso != p->unknown_id) {
				if (!tc_hmap_get(&x->map_idx, l->dso, &v)) {
					size_t n = x->nmap + 1;
					uint64_t *lo = realloc(x->map_lo, n * sizeof(*lo));
					if (lo)
						x->map_lo = lo;
					uint64_t *hi = lo ? realloc(x->map_hi, n * sizeof(*hi)) : NULL;
					if (hi)
						x->map_hi = hi;
					bool *ml = hi ? realloc(x->map_lines, n * sizeof(*ml)) : NULL;
					if (ml)
						x->map_lines = ml;
					bool *mf = ml ? realloc(x->map_fns, n * sizeof(*mf)) : NULL;
					if (mf)
						x->map_fns = mf;
					if (!mf || grow_u32(&x->map_dso, n) ||
					    tc_hmap_put(&x->map_idx, l->dso, (uint32_t)x->nmap)) {
						err = -ENOMEM;
						break;
					}
					v = (uint32_t)x->nmap++;
					x->map_dso[v] = l->dso;
					x->map_lo[v] = l->addr;
					x->map_hi[v] = l->addr + 1;
					x->map_lines[v] = x->map_fns[v] = false;
				}
				if (l->addr < x->map_lo[v])
					x->map_lo[v] = l->addr;
				if (l->addr >= x->map_hi[v])
					x->map_hi[v] = l->addr + 1;
				x->map_fns[v] |= l->sym != NONE;
				x->map_lines[v] |= l->src_line > 0;
				x->map_of[li] = v + 1;
			}
		}
	}
	if (!err)
		err = order_mappings(x);
	return err;
}

/* pprof takes the first mapping for the program's: the program's binary (the first
 * file the first process mapped: exec maps it before the loader maps libraries) goes
 * first, the kernel's and the vDSO's last, the others in the order first seen. */
static int order_mappings(struct pprof *x)
{
	uint32_t main_name = NONE;
	uint32_t *newid = malloc((x->nmap ? x->nmap : 1) * sizeof(*newid));
	uint32_t *dso = malloc((x->nmap ? x->nmap : 1) * sizeof(*dso));
	uint64_t *lo = malloc((x->nmap ? x->nmap : 1) * sizeof(*lo));
	uint64_t *hi = malloc((x->nmap ? x->nmap : 1) * sizeof(*hi));
	bool *ml = malloc((x->nmap ? x->nmap : 1) * sizeof(*ml));
	bool *mf = malloc((x->nmap ? x->nmap : 1) * sizeof(*mf));
	size_t k = 0;
	int err = 0;

	if (!newid || !dso || !lo || !hi || !ml || !mf) {
		err = -ENOMEM;
		goto out;
	}
	/* no mapping (samples outside any, as a perf.data without MMAP records has):
	 * nothing to order, and the arrays are NULL (memcpy must not see them) */
	if (!x->nmap)
		goto out;
	for (size_t i = 0; i < x->p->nprocs && main_name == NONE; i++)
		if (x->p->procs[i].nmaps && x->p->procs[i].maps[0].dso < x->p->ndsos)
			main_name = x->p->dsos[x->p->procs[i].maps[0].dso].name;
	for (int rank = 0; rank < 3; rank++)
		for (size_t m = 0; m < x->nmap; m++) {
			const char *name = pool_str(x->p, x->map_dso[m]);
			int r = x->map_dso[m] == main_name ? 0 :
				x->map_dso[m] == x->p->kernel_id || (name && !strcmp(name, "[vdso]")) ?
				2 : 1;
			if (r != rank)
				continue;
			newid[m] = (uint32_t)k;
			dso[k] = x->map_dso[m];
			lo[k] = x->map_lo[m];
			hi[k] = x->map_hi[m];
			ml[k] = x->map_lines[m];
			mf[k] = x->map_fns[m];
			k++;
		}
	for (size_t li = 0; li < x->nloc; li++)
		if (x->map_of[li])
			x->map_of[li] = newid[x->map_of[li] - 1] + 1;
	memcpy(x->map_dso, dso, x->nmap * sizeof(*dso));
	memcpy(x->map_lo, lo, x->nmap * sizeof(*lo));
	memcpy(x->map_hi, hi, x->nmap * sizeof(*hi));
	memcpy(x->map_lines, ml, x->nmap * sizeof(*ml));
	memcpy(x->map_fns, mf, x->nmap * sizeof(*mf));
out:
	free(newid);
	free(dso);
	free(lo);
	free(hi);
	free(ml);
	free(mf);
	return err;
}

/* The build-id of the binary named name, in hex, or "". */
static void build_id_of(const struct tacho_profile *p, uint32_t name, char *hex, size_t size)
{
	hex[0] = 0;
	for (size_t i = 0; i < p->ndsos; i++)
		if (p->dsos[i].name == name && p->dsos[i].bidlen) {
			tc_hex_encode(p->dsos[i].bid, p->dsos[i].bidlen, hex, size);
			return;
		}
}

static bool is_clock(const char *ev)
{
	return !strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock");
}

static int encode(struct pprof *x, struct pb *out)
{
	struct tacho_profile *p = x->p;
	const char *ev = p->sel < p->nev ? pool_str(p, p->evs[p->sel].name) : "events";
	const char *unit = is_clock(ev) ? "nanoseconds" : "count";
	struct pb sub = { 0 }, sub2 = { 0 };
	uint64_t first = UINT64_MAX, last = 0;
	uint64_t ev_str;
	char line[512];

	str_id(x, "");   /* string_table[0] is "" */
	/* sample_type: how many samples, and the events they stand for (their periods) */
	pb_uint(&sub, 1, str_id(x, "samples"));
	pb_uint(&sub, 2, str_id(x, "count"));
	pb_msg(out, PROFILE_SAMPLE_TYPE, &sub);
	ev_str = str_id(x, ev);
	pb_uint(&sub, 1, ev_str);
	pb_uint(&sub, 2, str_id(x, unit));
	pb_msg(out, PROFILE_SAMPLE_TYPE, &sub);

	for (size_t s = 0; s < tc_strpool_count(&x->stacks); s++) {
		const char *c = tc_strpool_str(&x->stacks, (uint32_t)s);
		uint32_t pid;
		char *end;
		struct proc *pr;

		pid = (uint32_t)strtoul(c, &end, 16);
		/* location ids, leaf first, packed */
		for (c = end; *c; c = end) {
			uint32_t li = (uint32_t)strtoul(c, &end, 16);
			if (end == c || li >= x->nloc)
				break;
			pb_varint(&sub2, x->loc_id[li]);
		}
		pb_msg(&sub, 1, &sub2);
		pb_varint(&sub2, x->counts[s]);
		pb_varint(&sub2, x->events[s]);
		pb_msg(&sub, 2, &sub2);
		/* labels: the process, by number and name */
		pb_uint(&sub2, 1, str_id(x, "pid"));
		pb_uint(&sub2, 3, pid);
		pb_msg(&sub, 3, &sub2);
		pr = tc_profile_proc(p, pid, false);
		if (pr && pr->comm != NONE) {
			pb_uint(&sub2, 1, str_id(x, "comm"));
			pb_uint(&sub2, 2, str_id(x, pool_str(p, pr->comm)));
			pb_msg(&sub, 3, &sub2);
		}
		pb_msg(out, PROFILE_SAMPLE, &sub);
	}

	for (size_t m = 0; m < x->nmap; m++) {
		build_id_of(p, x->map_dso[m], line, sizeof(line));
		pb_uint(&sub, 1, m + 1);
		pb_uint(&sub, 2, x->map_lo[m]);
		pb_uint(&sub, 3, x->map_hi[m]);
		pb_uint(&sub, 5, str_id(x, pool_str(p, x->map_dso[m])));
		pb_uint(&sub, 6, str_id(x, line));
		pb_uint(&sub, 7, x->map_fns[m]);
		pb_uint(&sub, 8, x->map_lines[m]);
		pb_uint(&sub, 9, x->map_lines[m]);
		pb_msg(out, PROFILE_MAPPING, &sub);
	}

	for (size_t li = 0; li < x->nloc; li++) {
		const struct loc *l = &p->locs[li];
		if (!x->loc_id[li])
			continue;
		pb_uint(&sub, 1, x->loc_id[li]);
		pb_uint(&sub, 2, x->map_of[li]);
		pb_uint(&sub, 3, l->addr);
		if (x->fn_of[li]) {
			pb_uint(&sub2, 1, x->fn_of[li]);
			pb_uint(&sub2, 2, l->src_line > 0 ? (uint64_t)l->src_line : 0);
			pb_msg(&sub, 4, &sub2);
		}
		pb_msg(out, PROFILE_LOCATION, &sub);
	}

	for (size_t f = 0; f < x->nfn; f++) {
		pb_uint(&sub, 1, f + 1);
		pb_uint(&sub, 2, str_id(x, pool_str(p, x->fn_sym[f])));
		pb_uint(&sub, 3, str_id(x, pool_str(p, x->fn_raw[f] != NONE ? x->fn_raw[f]
									: x->fn_sym[f])));
		pb_uint(&sub, 4, str_id(x, x->fn_file[f] != NONE ? pool_str(p, x->fn_file[f]) : ""));
		pb_msg(out, PROFILE_FUNCTION, &sub);
	}

	for (size_t i = 0; i < p->nsmps; i++)
		if (tc_smp_event(p, &p->smps[i]) == p->sel) {
			if (p->smps[i].time < first)
				first = p->smps[i].time;
			if (p->smps[i].time > last)
				last = p->smps[i].time;
		}
	pb_uint(out, PROFILE_DURATION, first <= last ? last - first : 0);
	pb_uint(&sub, 1, ev_str);
	pb_uint(&sub, 2, str_id(x, unit));
	pb_msg(out, PROFILE_PERIOD_TYPE, &sub);
	pb_uint(out, PROFILE_PERIOD, p->sel < p->nev ? p->evs[p->sel].period : 0);
	snprintf(line, sizeof(line), "tacho record: %s", p->command ? p->command : "?");
	pb_uint(out, PROFILE_COMMENT, str_id(x, line));
	if (tc_profile_simulated(p))
		snprintf(line, sizeof(line), "simulated by valgrind: every instruction counted, "
			 "no sampling (a sample is one instruction of one process)");
	else
		snprintf(line, sizeof(line), "%" PRIu64 " samples lost while recording", p->lost);
	pb_uint(out, PROFILE_COMMENT, str_id(x, line));
	/* what pprof shows first: the events, as tacho report's percentages weigh them */
	pb_uint(out, PROFILE_DEFAULT_SAMPLE_TYPE, ev_str);

	/* the string table last: every string has been numbered by now */
	for (size_t i = 0; i < tc_strpool_count(&x->strs); i++) {
		const char *s = tc_strpool_str(&x->strs, (uint32_t)i);
		pb_bytes(out, PROFILE_STRING_TABLE, s, strlen(s));
	}
	free(sub.b);
	free(sub2.b);
	return out->oom || x->oom ? -ENOMEM : 0;
}

/* Writes buf gzipped (RFC 1952, through zlib's deflate with the gzip wrapper). */
static int gzip_to(FILE *f, const uint8_t *buf, size_t len)
{
	z_stream z;
	uint8_t out[65536];
	int zr, err = 0;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: the largest window, with a gzip header and trailer */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)(uintptr_t)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(out, 1, sizeof(out) - z.avail_out, f) != sizeof(out) - z.avail_out) {
			err = -EIO;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&z);
	return err;
}

int tacho_profile_write_pprof(struct tacho_profile *p, FILE *f)
{
	struct pprof x = { .p = p };
	struct pb out = { 0 };
	int err;

	if (!p || !f)
		return -EINVAL;
	/* pprof's functions have files and its lines numbers */
	err = tc_profile_want_lines(p);
	if (!err)
		err = collect_stacks(&x);
	if (!err)
		err = number_locations(&x);
	if (!err)
		err = encode(&x, &out);
	/* one buffer deflated at once: zlib's input length is 32 bits */
	if (!err && out.n > UINT32_MAX)
		err = -EFBIG;
	if (!err)
		err = gzip_to(f, out.b, out.n);
	if (!err && ferror(f))
		err = -EIO;
	free(out.b);
	free(x.counts);
	free(x.events);
	free(x.loc_id);
	free(x.fn_of);
	free(x.map_of);
	free(x.fn_sym);
	free(x.fn_raw);
	free(x.fn_file);
	free(x.fn_dso);
	free(x.map_dso);
	free(x.map_lo);
	free(x.map_hi);
	free(x.map_lines);
	free(x.map_fns);
	tc_hmap_exit(&x.fn_idx);
	tc_hmap_exit(&x.map_idx);
	tc_strpool_exit(&x.strs);
	tc_strpool_exit(&x.stacks);
	return err;
}
