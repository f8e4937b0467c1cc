/* frame.c - the live sampler's frames: immutable snapshots of every row's values and
 * history, shared between threads by reference counting, and their accessors. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "live/live-int.h"

static const char *const view_names[] = {
	[TACHO_LIVE_MACHINE] = "machine",
	[TACHO_LIVE_CPU] = "cpu",
	[TACHO_LIVE_PROCESS] = "process",
	[TACHO_LIVE_THREAD] = "thread",
	[TACHO_LIVE_CGROUP] = "cgroup",
};

const char *tacho_live_view_name(enum tacho_live_view v)
{
	return (unsigned)v < ARRAY_SIZE(view_names) ? view_names[v] : "unknown";
}

int tacho_live_view_parse(const char *s, enum tacho_live_view *out)
{
	for (size_t i = 0; s && i < ARRAY_SIZE(view_names); i++)
		if (!strcmp(s, view_names[i])) {
			*out = (enum tacho_live_view)i;
			return 0;
		}
	return -EINVAL;
}

struct tacho_live_frame *tc_frame_new(size_t nev, const char *const *events,
				      const char *const *units, size_t nrows, size_t nhist)
{
	struct tacho_live_frame *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	atomic_init(&f->refs, 1);
	f->nev = nev;
	f->nrows = nrows;
	f->events = calloc(nev ? nev : 1, sizeof(*f->events));
	f->units = calloc(nev ? nev : 1, sizeof(*f->units));
	f->rows = calloc(nrows ? nrows : 1, sizeof(*f->rows));
	f->vals = calloc(nrows * nev + 1, sizeof(*f->vals));
	f->hist = malloc((nrows * nev * nhist + 1) * sizeof(*f->hist));
	if (!f->events || !f->units || !f->rows || !f->vals || !f->hist)
		goto out_free;
	for (size_t i = 0; i < nev; i++) {
		f->events[i] = tc_strdup(events[i]);
		f->units[i] = tc_strdup(units[i] ? units[i] : "");
		if (!f->events[i] || !f->units[i])
			goto out_free;
	}
	return f;

out_free:
	tacho_live_frame_put(f);
	return NULL;
}

const char *tc_frame_str(struct tacho_live_frame *f, const char *s)
{
	char *c;

	if (f->nstrs == f->astrs) {
		size_t n = f->astrs ? 2 * f->astrs : 64;
		char **p = realloc(f->strs, n * sizeof(*p));
		if (!p)
			return NULL;
		f->strs = p;
		f->astrs = n;
	}
	c = tc_strdup(s ? s : "");
	if (c)
		f->strs[f->nstrs++] = c;
	return c;
}

struct tacho_live_frame *tacho_live_frame_get(struct tacho_live_frame *f)
{
	if (f)
		atomic_fetch_add(&f->refs, 1);
	return f;
}

void tacho_live_frame_put(struct tacho_live_frame *f)
{
	if (!f || atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	for (size_t i = 0; f->events && i < f->nev; i++)
		free(f->events[i]);
	for (size_t i = 0; f->units && i < f->nev; i++)
		free(f->units[i]);
	for (size_t i = 0; i < f->nstrs; i++)
		free(f->strs[i]);
	free(f->events);
	free(f->units);
	free(f->strs);
	free(f->rows);
	free(f->vals);
	free(f->hist);
	free(f);
}

enum tacho_live_view tacho_live_frame_view(const struct tacho_live_frame *f)
{
	return f->view;
}

double tacho_live_frame_time(const struct tacho_live_frame *f)
{
	return f ? f->time : NAN;
}

double tacho_live_frame_interval(const struct tacho_live_frame *f)
{
	return f ? f->interval : NAN;
}

double tacho_live_frame_wall(const struct tacho_live_frame *f)
{
	return f ? f->wall : NAN;
}

size_t tacho_live_frame_nevents(const struct tacho_live_frame *f)
{
	return f ? f->nev : 0;
}

const char *tacho_live_frame_event(const struct tacho_live_frame *f, size_t i)
{
	return f && i < f->nev ? f->events[i] : NULL;
}

const char *tacho_live_frame_unit(const struct tacho_live_frame *f, size_t i)
{
	return f && i < f->nev ? f->units[i] : NULL;
}

int tacho_live_frame_event_index(const struct tacho_live_frame *f, const char *name)
{
	for (size_t i = 0; f && name && i < f->nev; i++)
		if (!strcmp(f->events[i], name))
			return (int)i;
	return -1;
}

size_t tacho_live_frame_nrows(const struct tacho_live_frame *f)
{
	return f ? f->nrows : 0;
}

const struct tacho_live_row *tacho_live_frame_row(const struct tacho_live_frame *f, size_t i)
{
	return f && i < f->nrows ? &f->rows[i] : NULL;
}

const struct tacho_live_health *tacho_live_frame_health(const struct tacho_live_frame *f)
{
	return f ? &f->health : NULL;
}
