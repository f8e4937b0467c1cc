/* evlist.c - the event list object (struct tacho_evlist): its storage, what it was
 * made with (sysfs and tracefs roots, no-files), adding a spec through the grammar,
 * and the accessors of its events. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "events/parse.h"
#include "tacho/errors.h"
#include "tacho/events.h"

struct tacho_evlist {
	struct tc_event *ev;
	size_t n, alloc;
	struct tc_events_ctx ctx;
	char *sysfs_root;      /* owned copies of ctx's strings */
	char *tracefs_root;
};

int tacho_evlist_new(const struct tacho_event_opts *opts, struct tacho_evlist **out)
{
	struct tacho_evlist *l;
	int err;

	*out = NULL;
	err = TC_OPTS_VALID(opts, tacho_event_opts);
	if (err)
		return err;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (opts) {
		l->sysfs_root = tc_strdup(opts->sysfs_pmu_root);
		l->tracefs_root = tc_strdup(opts->tracefs_root);
		if ((opts->sysfs_pmu_root && !l->sysfs_root) ||
		    (opts->tracefs_root && !l->tracefs_root)) {
			tacho_evlist_free(l);
			return -ENOMEM;
		}
	}
	l->ctx.sysfs_root = l->sysfs_root ? l->sysfs_root : TC_SYSFS_PMU_ROOT;
	l->ctx.tracefs_root = l->tracefs_root;
	l->ctx.no_files = TC_OPTS_GET(opts, tacho_event_opts, flags, 0) & TACHO_EVENT_NO_FILES;
	*out = l;
	return 0;
}

int tacho_evlist_add(struct tacho_evlist *list, const char *spec, struct tacho_diag *diag)
{
	struct tc_parser p = { .src = spec, .ctx = &list->ctx, .diag = diag };
	int r;

	if (tc_diag_check(diag))
		return -EINVAL;
	if (!list || !spec)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no event list given");
	p.len = strlen(spec);
	r = tc_parse_spec(&p, list->n);
	if (r == 0 && list->n + p.n > list->alloc) {
		size_t na = list->n + p.n + 8;
		struct tc_event *ne = realloc(list->ev, na * sizeof(*ne));
		if (!ne)
			r = tc_perr(&p, 0, -ENOMEM, "out of memory");
		else {
			list->ev = ne;
			list->alloc = na;
		}
	}
	if (r == 0) {
		memcpy(list->ev + list->n, p.ev, p.n * sizeof(*p.ev));
		list->n += p.n;
	} else {
		for (size_t i = 0; i < p.n; i++)
			tc_event_exit(&p.ev[i]);
	}
	free(p.ev);
	return r;
}

int tacho_evlist_parse_opts(const char *spec, const struct tacho_event_opts *opts,
			    struct tacho_evlist **out, struct tacho_diag *diag)
{
	struct tacho_evlist *l;
	int r;

	*out = NULL;
	if (tc_diag_check(diag))
		return -EINVAL;
	r = tacho_evlist_new(opts, &l);
	if (r)
		return tc_diag_set(diag, spec, 0, 0, r, "%s", tacho_strerror(r));
	r = tacho_evlist_add(l, spec, diag);
	if (r) {
		tacho_evlist_free(l);
		return r;
	}
	*out = l;
	return 0;
}

int tacho_evlist_parse(const char *spec, struct tacho_evlist **out, struct tacho_diag *diag)
{
	return tacho_evlist_parse_opts(spec, NULL, out, diag);
}

void tacho_evlist_free(struct tacho_evlist *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		tc_event_exit(&list->ev[i]);
	free(list->ev);
	free(list->sysfs_root);
	free(list->tracefs_root);
	free(list);
}

size_t tacho_evlist_count(const struct tacho_evlist *list)
{
	return list ? list->n : 0;
}

const struct tc_event *tc_evlist_get(const struct tacho_evlist *list, size_t i)
{
	return list && i < list->n ? &list->ev[i] : NULL;
}

const char *tacho_evlist_name(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->name : NULL;
}

int tacho_evlist_attr(const struct tacho_evlist *list, size_t i, struct perf_event_attr *out)
{
	const struct tc_event *ev = tc_evlist_get(list, i);

	if (!ev || !out)
		return -EINVAL;
	*out = ev->attr;
	out->size = sizeof(*out);
	return 0;
}

enum tacho_event_source tacho_evlist_source(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? (enum tacho_event_source)ev->source : TACHO_EVENT_SRC_COUNT;
}

const char *tacho_evlist_pmu(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->pmu : NULL;
}

const char *tacho_evlist_unit(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->unit : NULL;
}

double tc_evlist_scale(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->scale : 1.0;
}

int tc_evlist_group_leader(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->group_leader : -1;
}

const char *tacho_event_source_name(enum tacho_event_source src)
{
	static const char *const names[] = {
		[TACHO_EVENT_SRC_HARDWARE] = "hardware",
		[TACHO_EVENT_SRC_CACHE] = "cache",
		[TACHO_EVENT_SRC_SOFTWARE] = "software",
		[TACHO_EVENT_SRC_PFM] = "pfm",
		[TACHO_EVENT_SRC_RAW] = "raw",
		[TACHO_EVENT_SRC_PMU] = "pmu",
		[TACHO_EVENT_SRC_TRACEPOINT] = "tracepoint",
		[TACHO_EVENT_SRC_BREAKPOINT] = "breakpoint",
	};
	return (unsigned)src < ARRAY_SIZE(names) ? names[src] : "unknown";
}
