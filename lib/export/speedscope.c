/* speedscope.c - `report --format speedscope`: the selected event's samples in
 * speedscope's file format (www.speedscope.app/file-format-schema.json), a sampled
 * profile per process with every sample in time order, so that its time-order view is
 * the recording's timeline and its left-heavy view the flame graph. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "report/report-int.h"
#include "util/util.h"
#include "tacho/report.h"

static int by_pid_time(const void *a, const void *b, void *arg)
{
	const struct smp *const *x = a, *const *y = b;
	const struct tacho_profile *p = arg;
	uint32_t px = tc_smp_pid(p, *x), py = tc_smp_pid(p, *y);

	if (px != py)
		return px < py ? -1 : 1;
	if ((*x)->time != (*y)->time)
		return (*x)->time < (*y)->time ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

struct frames {
	uint32_t *sym, *dso, *file;    /* by frame index */
	size_t n, cap;
	struct tc_hmap idx;            /* (sym, dso) -> frame index */
	uint32_t *of_loc;              /* frame index + 1 of each loc, 0: not yet */
	size_t nloc;
};

/* The frame index of loc li: one frame per function and binary (unknown code: one per
 * binary). 0 and *out, -ENOMEM. */
static int frame_of(struct tacho_profile *p, struct frames *fr, uint32_t li, uint32_t *out)
{
	const struct loc *l = &p->locs[li];
	uint64_t key;
	size_t pos = 0;
	uint32_t v;

	if (li >= fr->nloc) {
		size_t nn = p->nlocs;
		uint32_t *no = realloc(fr->of_loc, (nn ? nn : 1) * sizeof(*no));
		if (!no)
			return -ENOMEM;
		memset(no + fr->nloc, 0, (nn - fr->nloc) * sizeof(*no));
		fr->of_loc = no;
		fr->nloc = nn;
	}
	if (fr->of_loc[li]) {
		*out = fr->of_loc[li] - 1;
		return 0;
	}
	key = tc_hash_u64(((uint64_t)l->sym << 32) | l->dso);
	while (tc_hmap_next(&fr->idx, key, &pos, &v))
		if (fr->sym[v] == l->sym && fr->dso[v] == l->dso)
			goto found;
	if (fr->n == fr->cap) {
		size_t nc = fr->cap ? fr->cap * 2 : 256;
		uint32_t *a = realloc(fr->sym, nc * sizeof(*a));
		if (a)
			fr->sym = a;
		uint32_t *b = a ? realloc(fr->dso, nc * sizeof(*b)) : NULL;
		if (b)
			fr->dso = b;
		uint32_t *c = b ? realloc(fr->file, nc * sizeof(*c)) : NULL;
		if (!c)
			return -ENOMEM;
		fr->file = c;
		fr->cap = nc;
	}
	v = (uint32_t)fr->n;
	if (tc_hmap_add(&fr->idx, key, v))
		return -ENOMEM;
	fr->sym[v] = l->sym;
	fr->dso[v] = l->dso;
	fr->file[v] = l->src_file;
	fr->n++;
found:
	if (fr->file[v] == NONE)
		fr->file[v] = l->src_file;
	fr->of_loc[li] = v + 1;
	*out = v;
	return 0;
}

int tacho_profile_write_speedscope(struct tacho_profile *p, FILE *f)
{
	const struct smp **order = NULL;
	struct frames fr = { 0 };
	uint32_t frames[MAX_FRAMES];
	uint32_t *stack = NULL;        /* frame indices of every sample, root first */
	size_t *at = NULL, n = 0, nstack = 0, cap = 0;
	struct tc_write_settings w;
	struct tc_json j;
	const char *ev, *unit;
	char name[600];
	int err = 0;

	if (!p || !f)
		return -EINVAL;
	/* speedscope's frames have files */
	if (tc_profile_want_lines(p))
		return -ENOMEM;
	order = malloc((p->nsmps ? p->nsmps : 1) * sizeof(*order));
	at = malloc((p->nsmps + 1) * sizeof(*at));
	if (!order || !at) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		int keep = tc_profile_keep(p, &p->smps[i]);   /* the event and the filter */

		if (keep < 0)
			err = keep;
		else if (keep)
			order[n++] = &p->smps[i];
	}
	if (err)
		goto out;
	qsort_r(order, n, sizeof(*order), by_pid_time, p);
	/* every stack resolved first: the locations array grows while frames resolve */
	for (size_t i = 0; i < n && !err; i++) {
		size_t nf;
		err = tc_profile_chain(p, order[i], frames, MAX_FRAMES, &nf);
		if (!err && nstack + nf > cap) {
			size_t nc = cap ? cap * 2 : 4096;
			while (nc < nstack + nf)
				nc *= 2;
			uint32_t *ns = realloc(stack, nc * sizeof(*ns));
			if (!ns)
				err = -ENOMEM;
			else
				stack = ns;
			cap = nc;
		}
		at[i] = nstack;
		for (size_t k = nf; k-- > 0 && !err;)
			err = frame_of(p, &fr, frames[k], &stack[nstack++]);
	}
	at[n] = nstack;
	if (err)
		goto out;

	ev = p->sel < p->nev ? pool_str(p, p->evs[p->sel].name) : "events";
	unit = !strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock") || tc_profile_offcpu(p) ?
	       "nanoseconds" : "none";
	tc_write_settings_get(NULL, TACHO_FORMAT_JSON_LINES, &w);
	tc_json_doc_begin(&j, f, TACHO_FORMAT_JSON_LINES, &w);
	tc_json_obj_begin(&j, NULL);
	tc_json_str(&j, "$schema", "https://www.speedscope.app/file-format-schema.json");
	tc_json_str(&j, "exporter", "tacho");
	snprintf(name, sizeof(name), "%s%s: %s", ev,
		 tc_profile_simulated(p) ? ", simulated" : "", p->command ? p->command : "?");
	tc_json_str(&j, "name", name);
	tc_json_int(&j, "activeProfileIndex", 0);
	tc_json_obj_begin(&j, "shared");
	tc_json_arr_begin(&j, "frames");
	for (size_t i = 0; i < fr.n; i++) {
		const char *dso = pool_str(p, fr.dso[i]);
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", fr.sym[i] != NONE ? pool_str(p, fr.sym[i]) : "[unknown]");
		/* the source file where the line table gives one, else the binary */
		tc_json_str(&j, "file", fr.file[i] != NONE ? pool_str(p, fr.file[i])
							    : dso ? dso : "[unknown]");
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	tc_json_arr_begin(&j, "profiles");
	for (size_t i = 0; i < n;) {
		size_t end = i;
		uint64_t total = 0;
		uint32_t pid = tc_smp_pid(p, order[i]);
		struct proc *pr = tc_profile_proc(p, pid, false);

		while (end < n && tc_smp_pid(p, order[end]) == pid)
			total += tc_smp_period(p, order[end++]);
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "type", "sampled");
		snprintf(name, sizeof(name), "%s (pid %u)",
			 pr && pr->comm != NONE ? pool_str(p, pr->comm) : "[unknown]", pid);
		tc_json_str(&j, "name", name);
		tc_json_str(&j, "unit", unit);
		tc_json_uint(&j, "startValue", 0);
		tc_json_uint(&j, "endValue", total);
		tc_json_arr_begin(&j, "samples");
		for (size_t s = i; s < end; s++) {
			tc_json_arr_begin(&j, NULL);
			for (size_t k = at[s]; k < at[s + 1]; k++)
				tc_json_uint(&j, NULL, stack[k]);
			tc_json_arr_end(&j);
		}
		tc_json_arr_end(&j);
		tc_json_arr_begin(&j, "weights");
		for (size_t s = i; s < end; s++)
			tc_json_uint(&j, NULL, tc_smp_period(p, order[s]));
		tc_json_arr_end(&j);
		tc_json_obj_end(&j);
		i = end;
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	err = tc_json_doc_end(&j);
out:
	free(order);
	free(at);
	free(stack);
	free(fr.sym);
	free(fr.dso);
	free(fr.file);
	free(fr.of_loc);
	tc_hmap_exit(&fr.idx);
	return err;
}
