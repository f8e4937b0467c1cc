/* report-export.c - the profile in the formats of others' tools: folded stacks
 * (FlameGraph, speedscope, inferno) and perf script's text (Firefox Profiler). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "sample/payload.h"
#include "sample/report-int.h"
#include "tacho/sample.h"

static const char *frame_name(const struct tacho_profile *p, const struct loc *l)
{
	return l->sym == NONE ? "[unknown]" : pool_str(p, l->sym);
}

static const char *comm_of(struct tacho_profile *p, uint32_t pid)
{
	struct proc *pr = tc_profile_proc(p, pid, false);

	return pr && pr->comm != NONE ? pool_str(p, pr->comm) : "[unknown]";
}

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

int tacho_profile_write_folded(struct tacho_profile *p, FILE *f)
{
	struct tc_strpool stacks = TC_STRPOOL_INIT;
	uint64_t *counts = NULL;
	size_t cap = 0, nstacks;
	uint32_t frames[MAX_FRAMES], *order = NULL;
	struct tc_sb sb = TC_SB_INIT;
	int err = 0;

	tc_sb_init(&sb);
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		size_t nf;
		uint32_t id;
		int keep = tc_profile_keep(p, &p->smps[i]);   /* the event and the filter */

		if (keep <= 0) {
			err = keep;
			continue;
		}
		err = tc_profile_frames(p, &p->smps[i], frames, MAX_FRAMES, &nf);
		if (err)
			break;
		tc_sb_reset(&sb);
		add_folded(&sb, comm_of(p, p->smps[i].pid));
		for (size_t k = nf; k-- > 0;) {
			tc_sb_addc(&sb, ';');
			add_folded(&sb, frame_name(p, &p->locs[frames[k]]));
		}
		if (sb.oom || tc_strpool_intern(&stacks, sb.buf, &id)) {
			err = -ENOMEM;
			break;
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
		counts[id] += p->smps[i].period;
	}
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

/* The string at address addr of process pid, where it lies in a read-only section of a
 * binary the process had mapped by then (a string constant: exact, since nothing can
 * change it); the most recent such mapping wins (an exec replaces the image). 0 and
 * buf, or -ENOENT. */
static int const_string(struct tacho_profile *p, uint32_t pid, uint64_t time, uint64_t addr,
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
	    const_string(a->p, a->s->pid, a->s->time, fld->num, buf, sizeof(buf)))
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
	err = tc_payload_print(p->payload, s->event, raw, size, &sb);
	fputc(' ', f);
	if (!err) {
		struct str_args a = { p, s, f };
		tc_fputs_printable(sb.buf ? sb.buf : "", f);
		tc_payload_fields(p->payload, s->event, raw, size, write_const_arg, &a);
	}
	else if (err == -ENOENT)
		fprintf(f, "[payload of %u bytes: no format to decode it]", size);
	else
		fprintf(f, "[payload of %u bytes: %s]", size, tacho_strerror(err));
	tc_sb_exit(&sb);
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
		const char *ev = s->event < p->nev ? pool_str(p, p->evs[s->event].name) : "[unknown]";
		int keep = tc_profile_keep(p, s);   /* the event and the filter */

		if (keep <= 0) {
			err = keep;
			continue;
		}
		err = tc_profile_frames(p, s, frames, MAX_FRAMES, &nf);
		if (err)
			break;
		/* names from the file are shown, never acted upon by the terminal */
		tc_fputs_printable(comm_of(p, s->pid), f);
		fprintf(f, " %u/%u [%03u] %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " ", s->pid, s->tid,
			s->cpu, s->time / 1000000000u, (s->time % 1000000000u) / 1000u, s->period);
		tc_fputs_printable(ev, f);
		fputc(':', f);
		/* the data address, where the event has one, as `perf script -F ...,addr`
		 * prints it: after the event name */
		if (s->event < p->nev && (p->evs[s->event].flags & TC_EVF_ADDR))
			fprintf(f, " %16" PRIx64, s->addr);
		write_payload(p, s, f);
		fputc('\n', f);
		for (size_t k = 0; k < nf; k++) {
			const struct loc *l = &p->locs[frames[k]];
			const char *dso = pool_str(p, l->dso) ? pool_str(p, l->dso) : "[unknown]";
			uint64_t ip = k == 0 ? s->ip : l->addr;
			/* the runtime address, as perf prints it: the leaf's is the sample's IP;
			 * for callers, the chain's return address */
			if (k > 0 && s->nr) {
				size_t real = 0;
				for (uint32_t c = 0; c < s->nr; c++) {
					uint64_t v;
					memcpy(&v, &s->chain[c], 8);
					if (v >= (uint64_t)PERF_CONTEXT_MAX)
						continue;
					if (real++ == k) {
						ip = v;
						break;
					}
				}
			}
			fprintf(f, "\t%16" PRIx64 " ", ip);
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
