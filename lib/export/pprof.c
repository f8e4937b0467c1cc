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

/* A mapping as the process had it: one executable segment of a binary (its start,
 * end and file offset from the recording's MMAP records), or the kernel's text. */
struct pmap {
	uint64_t start, end, pgoff;
	uint32_t name;                 /* pool id of the file */
	uint32_t dsoi;                 /* index into dsos (for the build-id), or NONE */
	bool lines, fns;
};

struct pprof {
	struct tacho_profile *p;
	struct tc_strpool strs;        /* the string table: id = index */
	struct tc_strpool stacks;      /* "pid tid leaf-loc caller-loc ...": one sample each */
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
	uint32_t *fn_line;             /* the line of the function's first instruction */
	size_t nfn;
	struct pmap *maps;             /* by mapping id - 1 */
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
		tc_sb_addf(&sb, "%x %x", tc_smp_pid(p, s), tc_smp_tid(p, s));
		for (size_t k = 0; k < nf; k++) {
			const struct loc *l = &p->locs[frames[k]];
			/* a caller that no recorded mapping covers is no code the process
			 * ran: a frame-pointer walk past the outermost frame reads the words
			 * above it (0, or stack garbage). The sampled IP itself stays. */
			if (k && !l->kernel && !l->mapped)
				continue;
			tc_sb_addf(&sb, " %x", frames[k]);
			/* its inlined functions, the lines of its Location (pprof's own form
			 * of inlining), made now: number_locations sizes its arrays by the
			 * locations there are */
			uint32_t first;
			size_t ni;
			err = tc_profile_inlines(p, frames[k], &first, &ni);
			if (err)
				break;
		}
		if (err)
			break;
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

/* pprof's Function.start_line: the line the function is declared on (as Go writes
 * its functions' "func" line), 0 when unknown. */
static uint32_t start_line(struct tacho_profile *p, const struct loc *l)
{
	struct tc_symdso *sd;

	if (l->kernel || l->dsoi == NONE || l->dsoi >= p->ndsos)
		return 0;
	sd = tc_profile_dso_open(p, &p->dsos[l->dsoi]);
	return sd ? (uint32_t)tc_symdso_decl_line(sd, l->addr) : 0;
}

/* The kernel's text, as one mapping: the upper half of the x86-64 address space,
 * where is_kernel_ip places kernel addresses (file offset 0: kallsyms names its
 * addresses, no file is read). */
#define KERNEL_START 0xffff800000000000ull

/* The mapping id of location l into *id (0: no recorded mapping covers it, as
 * profile.proto allows): one mapping per distinct segment, whichever processes
 * mapped it there. */
static int map_location(struct pprof *x, const struct loc *l, uint32_t *id)
{
	struct tacho_profile *p = x->p;
	struct pmap m = { .dsoi = NONE };
	uint64_t key;
	size_t pos = 0;
	uint32_t v;

	*id = 0;
	if (l->kernel) {
		m.start = KERNEL_START;
		m.end = UINT64_MAX;
		m.name = p->kernel_id;
	} else if (l->mapped) {
		m.start = l->map.start;
		m.end = l->map.end;
		m.pgoff = l->map.pgoff;
		m.dsoi = l->map.dso;
		m.name = l->map.dso < p->ndsos ? p->dsos[l->map.dso].name : p->unknown_id;
	} else {
		return 0;
	}
	key = tc_hash_u64(m.start ^ tc_hash_u64(m.end ^ tc_hash_u64(m.pgoff)) ^ m.dsoi);
	while (tc_hmap_next(&x->map_idx, key, &pos, &v)) {
		const struct pmap *o = &x->maps[v];
		if (o->start == m.start && o->end == m.end && o->pgoff == m.pgoff &&
		    o->dsoi == m.dsoi && o->name == m.name)
			goto found;
	}
	if (x->nmap % 64 == 0) {
		struct pmap *nm = realloc(x->maps, (x->nmap + 64) * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		x->maps = nm;
	}
	if (tc_hmap_add(&x->map_idx, key, (uint32_t)x->nmap))
		return -ENOMEM;
	v = (uint32_t)x->nmap++;
	x->maps[v] = m;
found:
	x->maps[v].fns |= l->sym != NONE;
	x->maps[v].lines |= l->src_line > 0;
	*id = v + 1;
	return 0;
}

/* The address of location l as the process saw it, pprof's Location.address: inside
 * [memory_start, memory_limit) of its mapping. Moved as the lookup was: a return
 * address one byte back into its call, a trap's IP to the instruction that trapped. */
static uint64_t runtime_address(const struct loc *l)
{
	if (!l->kernel && l->dsoi != NONE)
		return l->ip - (l->rel - l->addr);   /* rel: l->ip's ELF address */
	return l->ip - (l->kind != K_EXACT && l->ip);
}

/* The Function of location li (one per name and binary), made when new: x->fn_of[li].
 * An inlined function's is named without report's " (inlined)": pprof tells inlining
 * by the lines of a Location, and the same function out of line is the same Function.
 * 0 or -ENOMEM. */
static int function_of(struct pprof *x, uint32_t li)
{
	struct tacho_profile *p = x->p;
	const struct loc *l = &p->locs[li];
	uint32_t sym = l->sym, v;
	uint64_t key;
	size_t pos = 0;
	bool found = false;

	if (sym == NONE)
		return 0;
	if (l->role == LOC_INLINED) {
		const char *s = pool_str(p, sym);
		size_t len = strlen(s), cut = sizeof(" (inlined)") - 1;
		char *plain = len >= cut ? strndup(s, len - cut) : NULL;
		int err = plain ? tc_strpool_intern(&p->pool, plain, &sym) : -ENOMEM;
		free(plain);
		if (err)
			return err;
	}
	key = tc_hash_u64(((uint64_t)sym << 32) | l->dso);
	while (!found && tc_hmap_next(&x->fn_idx, key, &pos, &v))
		found = x->fn_sym[v] == sym && x->fn_dso[v] == l->dso;
	if (!found) {
		v = (uint32_t)x->nfn;
		if (grow_u32(&x->fn_sym, x->nfn + 1) || grow_u32(&x->fn_raw, x->nfn + 1) ||
		    grow_u32(&x->fn_file, x->nfn + 1) || grow_u32(&x->fn_dso, x->nfn + 1) ||
		    grow_u32(&x->fn_line, x->nfn + 1) || tc_hmap_add(&x->fn_idx, key, v))
			return -ENOMEM;
		x->fn_sym[v] = sym;
		x->fn_raw[v] = l->raw;
		x->fn_file[v] = l->src_file;
		x->fn_dso[v] = l->dso;
		/* the declaration's line is the outermost function's: none for an
		 * inlined one */
		x->fn_line[v] = l->role == LOC_INLINED ? 0 : start_line(p, l);
		x->nfn++;
	} else if (x->fn_file[v] == NONE) {
		x->fn_file[v] = l->src_file;
	}
	x->fn_of[li] = v + 1;
	return 0;
}

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
		strtoul(end, &end, 16);   /* the tid */
		for (c = end; *c && !err; c = end) {
			uint32_t li = (uint32_t)strtoul(c, &end, 16);
			const struct loc *l;

			if (end == c || li >= x->nloc)
				break;
			if (x->loc_id[li])
				continue;
			x->loc_id[li] = next_loc++;
			l = &p->locs[li];
			err = function_of(x, li);
			/* the functions of its inline chain, each a line of it */
			uint32_t first;
			size_t ni = 0;
			if (!err)
				err = tc_profile_inlines(p, li, &first, &ni);
			for (size_t k = 0; k < ni && !err; k++)
				err = function_of(x, first + (uint32_t)k);
			if (err)
				break;
			err = map_location(x, l, &x->map_of[li]);
		}
	}
	if (!err)
		err = order_mappings(x);
	return err;
}

/* pprof takes the first mapping for the program's: the program's binary (the first
 * file the first process mapped: exec maps it before the loader maps libraries) goes
 * first, the kernel's and the vDSO's last, the others in the order first seen. A
 * stable reordering of x->maps, the locations' mapping ids following. */
static int order_mappings(struct pprof *x)
{
	uint32_t main_name = NONE;
	uint32_t *newid = malloc((x->nmap ? x->nmap : 1) * sizeof(*newid));
	struct pmap *m = malloc((x->nmap ? x->nmap : 1) * sizeof(*m));
	size_t k = 0;

	if (!newid || !m) {
		free(newid);
		free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < x->p->nprocs && main_name == NONE; i++)
		if (x->p->procs[i].nmaps && x->p->procs[i].maps[0].dso < x->p->ndsos)
			main_name = x->p->dsos[x->p->procs[i].maps[0].dso].name;
	for (int rank = 0; rank < 3; rank++)
		for (size_t i = 0; i < x->nmap; i++) {
			const char *name = pool_str(x->p, x->maps[i].name);
			int r = x->maps[i].name == main_name ? 0 :
				x->maps[i].name == x->p->kernel_id ||
				(name && !strcmp(name, "[vdso]")) ? 2 : 1;
			if (r != rank)
				continue;
			newid[i] = (uint32_t)k;
			m[k++] = x->maps[i];
		}
	for (size_t li = 0; li < x->nloc; li++)
		if (x->map_of[li])
			x->map_of[li] = newid[x->map_of[li] - 1] + 1;
	free(x->maps);
	x->maps = m;
	free(newid);
	return 0;
}

/* The build-id of binary dsoi in hex, or "": the one recorded, else (a recording
 * without it: perf's of a file it did not list, tacho's of the vDSO) the one of the
 * file the symbols were read from, which for the vDSO is the recording's copy. */
static void build_id_hex(struct tacho_profile *p, uint32_t dsoi, char *hex, size_t size)
{
	struct dso *d = dsoi < p->ndsos ? &p->dsos[dsoi] : NULL;
	struct tc_symdso *sd;
	const uint8_t *b;
	size_t len;

	hex[0] = 0;
	if (!d)
		return;
	if (d->bidlen) {
		tc_hex_encode(d->bid, d->bidlen, hex, size);
		return;
	}
	sd = tc_profile_dso_open(p, d);
	b = sd ? tc_symdso_build_id(sd, &len) : NULL;
	if (b && len)
		tc_hex_encode(b, len, hex, size);
}

/* Whether ev counts time: cpu-clock and task-clock, with any modifiers perf writes
 * after a colon ("cpu-clock:ppp"). Their periods are nanoseconds. */
static bool is_clock(const char *ev)
{
	size_t n = strcspn(ev, ":");

	return (n == 9 && !strncmp(ev, "cpu-clock", 9)) || (n == 10 && !strncmp(ev, "task-clock", 10));
}

/* The profile's period: the event's fixed period; with a frequency, a clock's is the
 * nanoseconds between samples at that rate (what the kernel aims each period at), a
 * counted event's the mean of its samples' periods (it has no single one). 0 when
 * nothing says. */
static uint64_t profile_period(const struct tacho_profile *p, bool clock)
{
	const struct ev *e;

	if (p->sel >= p->nev)
		return 0;
	e = &p->evs[p->sel];
	if (!(e->flags & TC_EVF_FREQ))
		return e->period;
	if (clock)
		return e->period ? (1000000000ull + e->period / 2) / e->period : 0;
	return p->sel_samples ? (p->sel_events + p->sel_samples / 2) / p->sel_samples : 0;
}

/* The samples: one per distinct stack of a thread, its location ids leaf first, its
 * count and events, its labels (pid, tid, comm, cgroup, container_id). sub and sub2 are
 * scratch for the nested messages. */
static void encode_samples(struct pprof *x, struct pb *out, struct pb *sub, struct pb *sub2)
{
	struct tacho_profile *p = x->p;

	for (size_t s = 0; s < tc_strpool_count(&x->stacks); s++) {
		const char *c = tc_strpool_str(&x->stacks, (uint32_t)s);
		uint32_t pid, tid;
		char *end;
		struct proc *pr;

		pid = (uint32_t)strtoul(c, &end, 16);
		tid = (uint32_t)strtoul(end, &end, 16);
		/* location ids, leaf first, packed */
		for (c = end; *c; c = end) {
			uint32_t li = (uint32_t)strtoul(c, &end, 16);
			if (end == c || li >= x->nloc)
				break;
			pb_varint(sub2, x->loc_id[li]);
		}
		pb_msg(sub, 1, sub2);
		pb_varint(sub2, x->counts[s]);
		pb_varint(sub2, x->events[s]);
		pb_msg(sub, 2, sub2);
		/* labels: the process, by number and name */
		pb_uint(sub2, 1, str_id(x, "pid"));
		pb_uint(sub2, 3, pid);
		pb_msg(sub, 3, sub2);
		pb_uint(sub2, 1, str_id(x, "tid"));
		pb_uint(sub2, 3, tid);
		pb_msg(sub, 3, sub2);
		pr = tc_profile_proc(p, pid, false);
		if (pr && pr->comm != NONE) {
			pb_uint(sub2, 1, str_id(x, "comm"));
			pb_uint(sub2, 2, str_id(x, pool_str(p, pr->comm)));
			pb_msg(sub, 3, sub2);
		}
		/* where it ran: its cgroup, and the container that cgroup names */
		if (pr && pr->cgroup != NONE) {
			char id[65];

			pb_uint(sub2, 1, str_id(x, "cgroup"));
			pb_uint(sub2, 2, str_id(x, pool_str(p, pr->cgroup)));
			pb_msg(sub, 3, sub2);
			if (tc_cgroup_container_id(pool_str(p, pr->cgroup), id)) {
				pb_uint(sub2, 1, str_id(x, "container_id"));
				pb_uint(sub2, 2, str_id(x, id));
				pb_msg(sub, 3, sub2);
			}
		}
		pb_msg(out, PROFILE_SAMPLE, sub);
	}
}

/* The mappings: one per segment the processes mapped, one for the kernel. */
static void encode_mappings(struct pprof *x, struct pb *out, struct pb *sub)
{
	struct tacho_profile *p = x->p;
	char line[512];

	for (size_t m = 0; m < x->nmap; m++) {
		const struct pmap *pm = &x->maps[m];
		build_id_hex(p, pm->dsoi, line, sizeof(line));
		pb_uint(sub, 1, m + 1);
		pb_uint(sub, 2, pm->start);
		pb_uint(sub, 3, pm->end);
		pb_uint(sub, 4, pm->pgoff);
		pb_uint(sub, 5, str_id(x, pm->name == p->kernel_id ? "[kernel.kallsyms]"
								   : pool_str(p, pm->name)));
		pb_uint(sub, 6, str_id(x, line));
		pb_uint(sub, 7, pm->fns);
		pb_uint(sub, 8, pm->lines);
		pb_uint(sub, 9, pm->lines);
		pb_msg(out, PROFILE_MAPPING, sub);
	}
}

/* The locations: each address a kept stack holds, with its line (inlined functions'
 * lines innermost first). */
static void encode_locations(struct pprof *x, struct pb *out, struct pb *sub, struct pb *sub2)
{
	struct tacho_profile *p = x->p;

	for (size_t li = 0; li < x->nloc; li++) {
		const struct loc *l = &p->locs[li];
		if (!x->loc_id[li])
			continue;
		pb_uint(sub, 1, x->loc_id[li]);
		pb_uint(sub, 2, x->map_of[li]);
		pb_uint(sub, 3, runtime_address(l));
		uint32_t chain = 0;
		size_t ni = 0;
		/* made by collect_stacks: no allocation, no error here */
		tc_profile_inlines(p, (uint32_t)li, &chain, &ni);
		if (ni) {
			/* pprof's inlining: the inlined functions' lines innermost first,
			 * the last the function they were inlined into */
			for (size_t k = 0; k < ni; k++) {
				const struct loc *c = &p->locs[chain + k];
				if (!x->fn_of[chain + k])
					continue;
				pb_uint(sub2, 1, x->fn_of[chain + k]);
				pb_uint(sub2, 2, c->src_line > 0 ? (uint64_t)c->src_line : 0);
				pb_msg(sub, 4, sub2);
			}
		} else if (x->fn_of[li]) {
			pb_uint(sub2, 1, x->fn_of[li]);
			pb_uint(sub2, 2, l->src_line > 0 ? (uint64_t)l->src_line : 0);
			pb_msg(sub, 4, sub2);
		}
		pb_msg(out, PROFILE_LOCATION, sub);
	}
}

/* The functions: the name shown, the name as spelled, the source file, the line declared
 * on. */
static void encode_functions(struct pprof *x, struct pb *out, struct pb *sub)
{
	struct tacho_profile *p = x->p;

	for (size_t f = 0; f < x->nfn; f++) {
		pb_uint(sub, 1, f + 1);
		pb_uint(sub, 2, str_id(x, pool_str(p, x->fn_sym[f])));
		pb_uint(sub, 3, str_id(x, pool_str(p, x->fn_raw[f] != NONE ? x->fn_raw[f]
									: x->fn_sym[f])));
		pb_uint(sub, 4, str_id(x, x->fn_file[f] != NONE ? pool_str(p, x->fn_file[f]) : ""));
		pb_uint(sub, 5, x->fn_line[f]);
		pb_msg(out, PROFILE_FUNCTION, sub);
	}
}

/* The whole profile.proto message into out, its string table last. 0, -ENOMEM. */
static int encode(struct pprof *x, struct pb *out)
{
	struct tacho_profile *p = x->p;
	const char *ev = p->sel < p->nev ? pool_str(p, p->evs[p->sel].name) : "events";
	bool clock = is_clock(ev), offcpu = tc_profile_offcpu(p);
	const char *unit = clock || offcpu ? "nanoseconds" : "count";
	struct pb sub = { 0 }, sub2 = { 0 };
	uint64_t first = UINT64_MAX, last = 0;
	uint64_t ev_str;
	char line[512];

	str_id(x, "");   /* string_table[0] is "" */
	/* sample_type: how many samples, and the events they stand for (their periods) */
	pb_uint(&sub, 1, str_id(x, "samples"));
	pb_uint(&sub, 2, str_id(x, "count"));
	pb_msg(out, PROFILE_SAMPLE_TYPE, &sub);
	/* a clock's samples are CPU time, named as Go's CPU profiles name it ("cpu",
	 * "nanoseconds"), which back ends know as CPU time; the event is in a comment */
	/* off-CPU time as perf's and Pyroscope's off-CPU profiles name it */
	ev_str = str_id(x, clock ? "cpu" : offcpu ? "offcpu" : ev);
	pb_uint(&sub, 1, ev_str);
	pb_uint(&sub, 2, str_id(x, unit));
	pb_msg(out, PROFILE_SAMPLE_TYPE, &sub);

	encode_samples(x, out, &sub, &sub2);
	encode_mappings(x, out, &sub);
	encode_locations(x, out, &sub, &sub2);
	encode_functions(x, out, &sub);

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
	pb_uint(out, PROFILE_PERIOD, profile_period(p, clock));
	snprintf(line, sizeof(line), "tacho record: %s", p->command ? p->command : "?");
	pb_uint(out, PROFILE_COMMENT, str_id(x, line));
	if (p->sel < p->nev) {
		const struct ev *e = &p->evs[p->sel];
		if (offcpu)
			snprintf(line, sizeof(line), "event: %s, each sample the nanoseconds a "
				 "blocked stack waited", ev);
		else
			snprintf(line, sizeof(line), "event: %s, %s %" PRIu64, ev,
				 e->flags & TC_EVF_FREQ ? "frequency (Hz)" : "period", e->period);
		pb_uint(out, PROFILE_COMMENT, str_id(x, line));
	}
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
	free(x.maps);
	free(x.fn_sym);
	free(x.fn_raw);
	free(x.fn_file);
	free(x.fn_dso);
	free(x.fn_line);
	tc_hmap_exit(&x.fn_idx);
	tc_hmap_exit(&x.map_idx);
	tc_strpool_exit(&x.strs);
	tc_strpool_exit(&x.stacks);
	return err;
}
