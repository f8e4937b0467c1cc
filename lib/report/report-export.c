/* report-export.c - the profile in the formats of others' tools: folded stacks
 * (FlameGraph, speedscope, inferno), perf script's text (Firefox Profiler) and the same
 * samples as JSON with their tracepoint payloads' fields. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "output/output.h"
#include "record/payload.h"
#include "report/report-int.h"
#include "tacho/report.h"

static const char *frame_name(const struct tacho_profile *p, const struct loc *l)
{
	return l->sym == NONE ? "[unknown]" : pool_str(p, l->sym);
}

static const char *comm_of(struct tacho_profile *p, uint32_t pid)
{
	struct proc *pr = tc_profile_proc(p, pid, false);

	return pr && pr->comm != NONE ? pool_str(p, pr->comm) : "[unknown]";
}

/* The length of " (inlined)", which ends the name of an inlined function's frame. */
#define INLINED_LEN (sizeof(" (inlined)") - 1)

/* One frame of a folded stack: shown, never acted upon (control bytes as \xHH), and
 * without the ';' that separates frames or the space that ends the stack. */
static void add_folded(struct tc_sb *sb, const char *name)
{
	size_t from = sb->len;

	tc_sb_add_printable(sb, name);
	for (size_t i = from; i < sb->len && !sb->oom; i++)
		if (sb->buf[i] == ';' || sb->buf[i] == ' ')
			sb->buf[i] = '_';
}

/* The distinct stacks met so far, by what makes their text: the process's name and
 * the frames (each { comm, n, frames... } in v from an offset); text: the stack's id in
 * the pool of texts. */
struct seen_stacks {
	uint32_t *v;
	size_t n, cap;
	struct tc_hmap idx;            /* hash -> entry */
	struct { size_t off; uint32_t text; } *e;
	size_t ne, ecap;
};

static uint64_t stack_hash(uint32_t comm, const uint32_t *frames, size_t nf)
{
	return tc_hash_bytes(frames, nf * sizeof(*frames)) ^ tc_hash_u64(((uint64_t)comm << 32) | nf);
}

/* The text id of the stack (comm, frames) when it was met before: true and *text. */
static bool seen_find(const struct seen_stacks *ss, uint64_t h, uint32_t comm,
		      const uint32_t *frames, size_t nf, uint32_t *text)
{
	size_t pos = 0;
	uint32_t i;

	while (tc_hmap_next(&ss->idx, h, &pos, &i)) {
		const uint32_t *w = ss->v + ss->e[i].off;
		if (w[0] == comm && w[1] == nf && !memcmp(w + 2, frames, nf * sizeof(*frames))) {
			*text = ss->e[i].text;
			return true;
		}
	}
	return false;
}

static int seen_add(struct seen_stacks *ss, uint64_t h, uint32_t comm, const uint32_t *frames,
		    size_t nf, uint32_t text)
{
	if (ss->n + nf + 2 > ss->cap) {
		size_t nc = ss->cap ? ss->cap : 4096;
		uint32_t *nv;
		while (nc < ss->n + nf + 2)
			nc *= 2;
		if (!(nv = realloc(ss->v, nc * sizeof(*nv))))
			return -ENOMEM;
		ss->v = nv;
		ss->cap = nc;
	}
	if (ss->ne == ss->ecap) {
		size_t nc = ss->ecap ? ss->ecap * 2 : 256;
		void *ne = realloc(ss->e, nc * sizeof(*ss->e));
		if (!ne)
			return -ENOMEM;
		ss->e = ne;
		ss->ecap = nc;
	}
	if (ss->ne >= UINT32_MAX || tc_hmap_add(&ss->idx, h, (uint32_t)ss->ne))
		return -ENOMEM;
	ss->e[ss->ne].off = ss->n;
	ss->e[ss->ne++].text = text;
	ss->v[ss->n++] = comm;
	ss->v[ss->n++] = (uint32_t)nf;
	memcpy(ss->v + ss->n, frames, nf * sizeof(*frames));
	ss->n += nf;
	return 0;
}

int tacho_profile_write_folded(struct tacho_profile *p, FILE *f)
{
	struct tc_strpool stacks = TC_STRPOOL_INIT;
	struct seen_stacks seen = { 0 };
	uint64_t *counts = NULL;
	size_t cap = 0, nstacks;
	uint32_t frames[MAX_FRAMES], *order = NULL;
	struct tc_sb sb = TC_SB_INIT;
	int err = 0;

	tc_sb_init(&sb);
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		size_t nf;
		uint32_t id, comm;
		uint64_t h;
		struct proc *pr;
		int keep = tc_profile_keep(p, &p->smps[i]);   /* the event and the filter */

		if (keep <= 0) {
			err = keep;
			continue;
		}
		err = tc_profile_chain(p, &p->smps[i], frames, MAX_FRAMES, &nf);
		if (err)
			break;
		/* the text of a stack is made once: a sample of a stack met before (the
		 * same process name and frames) adds to its count */
		pr = tc_profile_proc(p, tc_smp_pid(p, &p->smps[i]), false);
		comm = pr ? pr->comm : NONE;
		h = stack_hash(comm, frames, nf);
		if (!seen_find(&seen, h, comm, frames, nf, &id)) {
			tc_sb_reset(&sb);
			add_folded(&sb, comm != NONE ? pool_str(p, comm) : "[unknown]");
			for (size_t k = nf; k-- > 0;) {
				const struct loc *l = &p->locs[frames[k]];
				tc_sb_addc(&sb, ';');
				add_folded(&sb, frame_name(p, l));
				if (l->role == LOC_INLINED && sb.len >= INLINED_LEN && !sb.oom) {
					/* stackcollapse-perf.pl --inline's mark, which
					 * flamegraph.pl colours as inlined: "NAME_[i]" for
					 * "NAME (inlined)" */
					sb.len -= INLINED_LEN;
					sb.buf[sb.len] = '\0';
					tc_sb_add(&sb, "_[i]", 4);
				}
			}
			if (sb.oom || tc_strpool_intern(&stacks, sb.buf, &id) ||
			    seen_add(&seen, h, comm, frames, nf, id)) {
				err = -ENOMEM;
				break;
			}
		}
		if (id >= cap) {
			size_t nc = cap ? cap * 2 : 256;
			uint64_t *ncnt = realloc(counts, nc * sizeof(*ncnt));
			if (!ncnt) {
				err = -ENOMEM;
				break;
			}
			memset(ncnt + cap, 0, (nc - cap) * sizeof(*ncnt));
			counts = ncnt;
			cap = nc;
		}
		/* weighted by the period each sample was taken with, so that the stacks add
		 * up to the event's count when calibration changed the period (the sums
		 * were checked not to wrap when the file was loaded) */
		counts[id] += tc_smp_period(p, &p->smps[i]);
	}
	free(seen.v);
	free(seen.e);
	tc_hmap_exit(&seen.idx);
	tc_sb_exit(&sb);
	nstacks = tc_strpool_count(&stacks);
	if (!err) {
		/* sorted by stack, so that equal profiles give equal files */
		order = malloc((nstacks ? nstacks : 1) * sizeof(*order));
		if (!order)
			err = -ENOMEM;
	}
	if (!err) {
		for (size_t i = 0; i < nstacks; i++)
			order[i] = (uint32_t)i;
		for (size_t i = 1; i < nstacks; i++) {   /* insertion sort on small sets */
			uint32_t v = order[i];
			size_t j = i;
			if (nstacks > 4096)
				break;
			while (j && strcmp(tc_strpool_str(&stacks, order[j - 1]),
					   tc_strpool_str(&stacks, v)) > 0) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = v;
		}
		for (size_t i = 0; i < nstacks; i++)
			fprintf(f, "%s %" PRIu64 "\n", tc_strpool_str(&stacks, order[i]),
				counts[order[i]]);
		if (ferror(f))
			err = -EIO;
	}
	free(order);
	free(counts);
	tc_strpool_exit(&stacks);
	return err;
}

static int time_cmp(const void *a, const void *b)
{
	const struct smp *const *x = a, *const *y = b;

	if ((*x)->time != (*y)->time)
		return (*x)->time < (*y)->time ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

/* A read-only constant wins over anything else: exact, since nothing can change it;
 * the most recent mapping wins (an exec replaces the image). */
int tc_profile_open(const char *path, struct tacho_profile **out)
{
	struct tacho_diag d = { .sz = sizeof(d) };

	return tacho_profile_load(path, out, &d);
}

void tc_profile_close(struct tacho_profile *p)
{
	tacho_profile_free(p);
}

int tc_profile_const_str(struct tacho_profile *p, uint32_t pid, uint64_t time, uint64_t addr,
			 char *buf, size_t max)
{
	struct proc *pr = tc_profile_proc(p, pid, false);
	const struct map *best = NULL;

	/* buf changes only when a read succeeds: it ends with the best one's string */
	for (size_t i = 0; pr && i < pr->nmaps; i++) {
		const struct map *m = &pr->maps[i];
		struct tc_symdso *sd;
		uint64_t va;

		if (m->time > time || (best && m->time < best->time) || m->dso >= p->ndsos)
			continue;
		sd = tc_profile_dso_open(p, &p->dsos[m->dso]);
		if (!sd || tc_symdso_file_to_addr(sd, m->pgoff, &va) || m->start < va ||
		    addr < m->start - va ||
		    tc_symdso_read_const_str(sd, addr - (m->start - va), buf, max) < 0)
			continue;
		best = m;
	}
	return best ? 0 : -ENOENT;
}

struct str_args {
	struct tacho_profile *p;
	const struct smp *s;
	FILE *f;
};

/* A string argument of a system call ("const char *" fields) that a constant holds:
 * after the payload, ` [filename: "/etc/hostname"]`. */
static int write_const_arg(void *arg, const struct tc_payload_field *fld)
{
	struct str_args *a = arg;
	char buf[4096];

	if (!fld->is_pointer || strcmp(fld->type, "const char *") ||
	    tc_profile_const_str(a->p, tc_smp_pid(a->p, a->s), a->s->time, fld->num, buf, sizeof(buf)))
		return 0;
	fprintf(a->f, " [%s: \"", fld->name);
	tc_fputs_printable(buf, a->f);
	fputs("\"]", a->f);
	return 0;
}

/* A tracepoint's payload as perf script shows it after the event's name: its print
 * format's text ("dfd: 0xffffff9c, filename: 0x..."), or what stood in the way; then
 * the strings that constants hold behind its string arguments. */
static void write_payload(struct tacho_profile *p, const struct smp *s, FILE *f)
{
	const unsigned char *raw;
	struct tc_sb sb = TC_SB_INIT;
	uint32_t size;
	int err;

	if (tc_profile_raw(p, s, &raw, &size))
		return;
	tc_sb_init(&sb);
	err = tc_payload_print(p->payload, tc_smp_event(p, s), raw, size, &sb);
	fputc(' ', f);
	if (!err) {
		struct str_args a = { p, s, f };
		tc_fputs_printable(sb.buf ? sb.buf : "", f);
		tc_payload_fields(p->payload, tc_smp_event(p, s), raw, size, write_const_arg, &a);
	}
	else if (err == -ENOENT)
		fprintf(f, "[payload of %u bytes: no format to decode it]", size);
	else
		fprintf(f, "[payload of %u bytes: %s]", size, tacho_strerror(err));
	tc_sb_exit(&sb);
}

/* The runtime address of frame k (l) of sample s, as perf prints it: the leaf's is the
 * sample's IP; for callers, the chain's return address. */
static uint64_t frame_ip(const struct tacho_profile *p, const struct smp *s, size_t k,
			const struct loc *l)
{
	size_t real = 0;

	if (k == 0)
		return s->ip;
	for (uint32_t c = 0; c < s->nr; c++) {
		uint64_t v;
		memcpy(&v, &tc_smp_chain(p, s)[c], 8);
		if (v >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		if (real++ == k)
			return v;
	}
	return l->addr;
}

int tacho_profile_write_script(struct tacho_profile *p, FILE *f)
{
	const struct smp **order = malloc((p->nsmps ? p->nsmps : 1) * sizeof(*order));
	uint32_t frames[MAX_FRAMES];
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsmps; i++)
		order[i] = &p->smps[i];
	/* the rings of several CPUs interleave in the file: the text is in time order */
	qsort(order, p->nsmps, sizeof(*order), time_cmp);
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		const struct smp *s = order[i];
		size_t nf;
		const char *ev = tc_smp_event(p, s) < p->nev ? pool_str(p, p->evs[tc_smp_event(p, s)].name) : "[unknown]";
		int keep = tc_profile_keep(p, s);   /* the event and the filter */

		if (keep <= 0) {
			err = keep;
			continue;
		}
		err = tc_profile_frames(p, s, frames, MAX_FRAMES, &nf);
		if (err)
			break;
		/* names from the file are shown, never acted upon by the terminal */
		tc_fputs_printable(comm_of(p, tc_smp_pid(p, s)), f);
		fprintf(f, " %u/%u ", tc_smp_pid(p, s), tc_smp_tid(p, s));
		/* no CPU where the file has none, as perf script leaves it out */
		if (tc_smp_cpu(p, s) != TC_CPU_UNKNOWN)
			fprintf(f, "[%03u] ", tc_smp_cpu(p, s));
		fprintf(f, "%" PRIu64 ".%06" PRIu64 ": %" PRIu64 " ", s->time / 1000000000u,
			(s->time % 1000000000u) / 1000u, tc_smp_period(p, s));
		tc_fputs_printable(ev, f);
		fputc(':', f);
		/* the data address, where the event has one, as `perf script -F ...,addr`
		 * prints it: after the event name */
		if (tc_smp_event(p, s) < p->nev && (p->evs[tc_smp_event(p, s)].flags & TC_EVF_ADDR))
			fprintf(f, " %16" PRIx64, tc_smp_addr(p, s));
		write_payload(p, s, f);
		fputc('\n', f);
		for (size_t k = 0; k < nf; k++) {
			const struct loc *l = &p->locs[frames[k]];
			const char *dso = pool_str(p, l->dso) ? pool_str(p, l->dso) : "[unknown]";

			fprintf(f, "\t%16" PRIx64 " ", frame_ip(p, s, k, l));
			if (l->sym != NONE) {
				tc_fputs_printable(pool_str(p, l->sym), f);
				fprintf(f, "+0x%" PRIx64, l->addr - l->sym_start);
			} else {
				fputs("[unknown]", f);
			}
			fputs(" (", f);
			tc_fputs_printable(dso, f);
			fputs(")\n", f);
		}
		fputc('\n', f);
		if (ferror(f))
			err = -EIO;
	}
	free(order);
	return err;
}

/* The fields of --fields, in the order of the enum (knowledge as a table). */
enum field { F_COMM, F_PID, F_TID, F_TIME, F_CPU, F_EVENT, F_PERIOD, F_IP, F_SYM, F_SYMOFF,
	     F_DSO, F_ADDR, F_COUNT };
static const char *const field_names[F_COUNT] = {
	[F_COMM] = "comm", [F_PID] = "pid", [F_TID] = "tid", [F_TIME] = "time",
	[F_CPU] = "cpu", [F_EVENT] = "event", [F_PERIOD] = "period", [F_IP] = "ip",
	[F_SYM] = "sym", [F_SYMOFF] = "symoff", [F_DSO] = "dso", [F_ADDR] = "addr",
};
#define MAX_FIELDS TC_PROFILE_MAX_FIELDS

/* "comm,tid,time" into fields: their number, or the error (diag says which word). */
static int parse_fields(const char *list, enum field *fields, struct tacho_diag *diag)
{
	int n = 0;

	for (const char *w = list;; n++) {
		size_t len = strcspn(w, ",");
		int f = 0;

		while (f < F_COUNT && !(strlen(field_names[f]) == len &&
					!strncmp(field_names[f], w, len)))
			f++;
		if (f == F_COUNT)
			return tc_diag_set(diag, list, 0, (unsigned)(w - list) + 1, -TACHO_EPARSE,
					   "'%.*s' is no field (comm, pid, tid, time, cpu, event, "
					   "period, ip, sym, symoff, dso, addr)", (int)len, w);
		if (n == MAX_FIELDS)
			return tc_diag_set(diag, list, 0, 0, -TACHO_EPARSE,
					   "more than %d fields", MAX_FIELDS);
		fields[n] = (enum field)f;
		w += len;
		if (!*w++)
			return n + 1;
	}
}

int tc_profile_parse_fields(const char *list, unsigned char *out, struct tacho_diag *diag)
{
	enum field fields[MAX_FIELDS];
	int n = parse_fields(list, fields, diag);

	for (int i = 0; i < n; i++)
		out[i] = (unsigned char)fields[i];
	return n;
}

/* One field of sample s, its leaf at l (NULL: none). */
static void write_field(struct tacho_profile *p, const struct smp *s, const struct loc *l,
			enum field f, FILE *out)
{
	uint32_t ev = tc_smp_event(p, s);

	switch (f) {
	case F_COMM:
		tc_fputs_printable(comm_of(p, tc_smp_pid(p, s)), out);
		break;
	case F_PID:
		fprintf(out, "%u", tc_smp_pid(p, s));
		break;
	case F_TID:
		fprintf(out, "%u", tc_smp_tid(p, s));
		break;
	case F_TIME:
		fprintf(out, "%" PRIu64 ".%06" PRIu64, s->time / 1000000000u,
			(s->time % 1000000000u) / 1000u);
		break;
	case F_CPU:
		/* a file without CPUs has none to show: "-", never a made-up 0 */
		if (tc_smp_cpu(p, s) != TC_CPU_UNKNOWN)
			fprintf(out, "%u", tc_smp_cpu(p, s));
		else
			fputc('-', out);
		break;
	case F_EVENT:
		tc_fputs_printable(ev < p->nev ? pool_str(p, p->evs[ev].name) : "[unknown]", out);
		break;
	case F_PERIOD:
		fprintf(out, "%" PRIu64, tc_smp_period(p, s));
		break;
	case F_IP:
		fprintf(out, "%" PRIx64, s->ip);
		break;
	case F_SYM:
	case F_SYMOFF:
		if (l && l->sym != NONE) {
			tc_fputs_printable(pool_str(p, l->sym), out);
			if (f == F_SYMOFF)
				fprintf(out, "+0x%" PRIx64, l->addr - l->sym_start);
		} else {
			fputs("[unknown]", out);
		}
		break;
	case F_DSO:
		tc_fputs_printable(l && pool_str(p, l->dso) ? pool_str(p, l->dso) : "[unknown]",
				   out);
		break;
	case F_ADDR:
		/* only events that record one (page faults, breakpoints) */
		if (ev < p->nev && (p->evs[ev].flags & TC_EVF_ADDR))
			fprintf(out, "%" PRIx64, tc_smp_addr(p, s));
		else
			fputc('-', out);
		break;
	case F_COUNT:
		break;
	}
}

int tacho_profile_write_fields(struct tacho_profile *p, const char *fields, FILE *f,
			       struct tacho_diag *diag)
{
	enum field want[MAX_FIELDS];
	const struct smp **order;
	uint32_t frame;
	int n, err = 0;

	if (!p || !fields || !f)
		return -EINVAL;
	n = parse_fields(fields, want, diag);
	if (n < 0)
		return n;
	order = malloc((p->nsmps ? p->nsmps : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsmps; i++)
		order[i] = &p->smps[i];
	qsort(order, p->nsmps, sizeof(*order), time_cmp);
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		const struct smp *s = order[i];
		int keep = tc_profile_keep(p, s);
		size_t nf = 0;

		if (keep <= 0) {
			err = keep;
			continue;
		}
		err = tc_profile_frames(p, s, &frame, 1, &nf);
		for (int k = 0; k < n && !err; k++) {
			if (k)
				fputc(' ', f);
			write_field(p, s, nf ? &p->locs[frame] : NULL, want[k], f);
		}
		fputc('\n', f);
		if (ferror(f))
			err = -EIO;
	}
	free(order);
	return err;
}

struct json_args {
	struct tacho_profile *p;
	const struct smp *s;
	struct tc_json *j;
};

/* A payload's field as a member of "fields": numbers as numbers (signed ones with their
 * sign), addresses as hex strings (JSON's numbers hold 53 bits), strings as strings. */
static int json_field(void *arg, const struct tc_payload_field *fld)
{
	struct json_args *a = arg;
	char hex[24];

	if (fld->is_string) {
		tc_json_strn(a->j, fld->name, fld->str, fld->len);
	} else if (fld->is_pointer) {
		snprintf(hex, sizeof(hex), "0x%" PRIx64, fld->num);
		tc_json_str(a->j, fld->name, hex);
	} else if (fld->is_signed) {
		tc_json_int(a->j, fld->name, (int64_t)fld->num);
	} else {
		tc_json_uint(a->j, fld->name, fld->num);
	}
	return 0;
}

/* A string argument that a constant of a binary holds, as a member of "strings" (the
 * perf-script export's [filename: "..."]). */
static int json_const_arg(void *arg, const struct tc_payload_field *fld)
{
	struct json_args *a = arg;
	char buf[4096];

	if (fld->is_pointer && !strcmp(fld->type, "const char *") &&
	    !tc_profile_const_str(a->p, tc_smp_pid(a->p, a->s), a->s->time, fld->num, buf, sizeof(buf)))
		tc_json_str(a->j, fld->name, buf);
	return 0;
}

/* The payload members of one sample: "payload" (the print format's text, as perf
 * script), "payload_error", "fields" and "strings". */
static void json_sample_payload(struct tacho_profile *p, const struct smp *s,
				struct tc_json *j)
{
	struct json_args a = { p, s, j };
	const unsigned char *raw;
	struct tc_sb sb = TC_SB_INIT;
	uint32_t size;
	int err = -ENODATA;

	if (!tc_profile_raw(p, s, &raw, &size)) {
		tc_sb_init(&sb);
		err = tc_payload_print(p->payload, tc_smp_event(p, s), raw, size, &sb);
	}
	if (!err)
		tc_json_str(j, "payload", sb.buf ? sb.buf : "");
	else
		tc_json_null(j, "payload");
	if (err == -ENOENT)
		tc_json_str(j, "payload_error", "no format to decode it");
	else if (err && err != -ENODATA)
		tc_json_str(j, "payload_error", tacho_strerror(err));
	else
		tc_json_null(j, "payload_error");
	tc_json_obj_begin(j, "fields");
	if (!err)
		tc_payload_fields(p->payload, tc_smp_event(p, s), raw, size, json_field, &a);
	tc_json_obj_end(j);
	tc_json_obj_begin(j, "strings");
	if (!err)
		tc_payload_fields(p->payload, tc_smp_event(p, s), raw, size, json_const_arg, &a);
	tc_json_obj_end(j);
	tc_sb_exit(&sb);
}

int tacho_profile_write_script_json(struct tacho_profile *p, FILE *f)
{
	const struct smp **order;
	uint32_t frames[MAX_FRAMES];
	struct tc_write_settings w;
	struct tc_json j;
	char hex[24];
	size_t n = 0;
	int err = 0;

	if (!p || !f)
		return -EINVAL;
	order = malloc((p->nsmps ? p->nsmps : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		int keep = tc_profile_keep(p, &p->smps[i]);   /* the event and the filter */

		if (keep < 0)
			err = keep;
		else if (keep)
			order[n++] = &p->smps[i];
	}
	if (err)
		goto out;
	/* the rings of several CPUs interleave in the file: the samples in time order */
	qsort(order, n, sizeof(*order), time_cmp);
	tc_write_settings_get(NULL, TACHO_FORMAT_JSON, &w);
	tc_json_doc_begin(&j, f, TACHO_FORMAT_JSON, &w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_str(&j, "event", p->sel < p->nev ? pool_str(p, p->evs[p->sel].name) : "");
	tc_json_arr_begin(&j, "samples");
	for (size_t i = 0; i < n && !err; i++) {
		const struct smp *s = order[i];
		size_t nf;

		err = tc_profile_frames(p, s, frames, MAX_FRAMES, &nf);
		if (err)
			break;
		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "time_ns", s->time);
		tc_json_uint(&j, "pid", tc_smp_pid(p, s));
		tc_json_uint(&j, "tid", tc_smp_tid(p, s));
		tc_json_uint(&j, "cpu", tc_smp_cpu(p, s));
		tc_json_str(&j, "comm", comm_of(p, tc_smp_pid(p, s)));
		tc_json_str(&j, "event", tc_smp_event(p, s) < p->nev ? pool_str(p, p->evs[tc_smp_event(p, s)].name)
							    : "[unknown]");
		tc_json_uint(&j, "period", tc_smp_period(p, s));
		snprintf(hex, sizeof(hex), "0x%" PRIx64, s->ip);
		tc_json_str(&j, "ip", hex);
		/* the data address of page faults and breakpoints, as perf script's addr */
		snprintf(hex, sizeof(hex), "0x%" PRIx64, tc_smp_addr(p, s));
		tc_json_str(&j, "addr", tc_smp_event(p, s) < p->nev && (p->evs[tc_smp_event(p, s)].flags & TC_EVF_ADDR)
					? hex : NULL);
		json_sample_payload(p, s, &j);
		tc_json_arr_begin(&j, "frames");
		for (size_t k = 0; k < nf; k++) {
			const struct loc *l = &p->locs[frames[k]];

			tc_json_obj_begin(&j, NULL);
			snprintf(hex, sizeof(hex), "0x%" PRIx64, frame_ip(p, s, k, l));
			tc_json_str(&j, "ip", hex);
			tc_json_str(&j, "symbol", l->sym != NONE ? pool_str(p, l->sym) : NULL);
			if (l->sym != NONE)
				tc_json_uint(&j, "offset", l->addr - l->sym_start);
			else
				tc_json_null(&j, "offset");
			tc_json_str(&j, "dso", pool_str(p, l->dso) ? pool_str(p, l->dso)
								   : "[unknown]");
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	/* a failed stack leaves the document unfinished: the error is what counts */
	if (err)
		goto out;
	err = tc_json_doc_end(&j);
out:
	free(order);
	return err;
}
