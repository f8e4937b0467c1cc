/* listing.c - the event listing behind `tacho list`: the events of a walk that match a
 * pattern, each tried (opened counting, then closed) so that the listing says whether
 * this process may count it here, with the engine's explanation when not. Uprobes and
 * tracepoints are tried dry (events.h): the kernel's checks of the caller, without
 * arming anything whose removal waits for grace periods. */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"
#include "events/listing.h"
#include "util/util.h"
#include "tacho/counters.h"
#include "tacho/events.h"

/* How the walk's visitor sees the listing being built. */
struct build {
	struct tacho_event_listing *l;
	const struct tacho_event_opts *events;
	bool glob;
	bool probe;
	bool oom;
};

static bool matches(const struct build *b, const char *s)
{
	const char *pattern = b->l->pattern;

	if (!pattern)
		return true;
	if (b->glob)
		return fnmatch(pattern, s, 0) == 0;
	return strcasestr(s, pattern) != NULL;
}

static bool row_matches(const struct build *b, const struct tacho_event_info *ev)
{
	char buf[512];
	const char *a = ev->aliases;

	if (matches(b, ev->name))
		return true;
	while (a && *a) {
		const char *comma = strchr(a, ',');
		size_t n = comma ? (size_t)(comma - a) : strlen(a);
		snprintf(buf, sizeof(buf), "%.*s", (int)n, a);
		if (matches(b, buf))
			return true;
		a = comma ? comma + 1 : NULL;
	}
	return false;
}

/* Finds or adds the explanation of (source, err); the explainer reads the machine's
 * state, so it runs once per distinct pair, not once per event. */
static int explanation(struct build *b, enum tacho_event_source src, int err,
		       const struct perf_event_attr *attr)
{
	struct tacho_event_listing *l = b->l;

	for (size_t i = 0; i < l->nex; i++)
		if (l->ex[i].src == src && l->ex[i].err == err)
			return (int)i;
	if (l->nex == l->allocex) {
		size_t na = l->allocex ? 2 * l->allocex : 8;
		struct tc_listing_expl *ne = realloc(l->ex, na * sizeof(*ne));
		if (!ne) {
			b->oom = true;
			return -1;
		}
		l->ex = ne;
		l->allocex = na;
	}
	l->ex[l->nex].src = src;
	l->ex[l->nex].err = err;
	tacho_perf_strerror(err, attr, l->ex[l->nex].text, sizeof(l->ex[l->nex].text),
			    &l->ex[l->nex].hint);
	return (int)l->nex++;
}

/* A tracepoint the kernel asks of what it asks of every other: all but ftrace's own. */
static bool shared_rules(const struct tc_listing_row *r)
{
	return r->src == TACHO_EVENT_SRC_TRACEPOINT && strncmp(r->name, "ftrace:", 7);
}

/* Opens event 0 of l as a probe: dry for the PMUs whose real open arms something the
 * kernel takes tens of milliseconds to disarm at the close. */
static int probe_open(const struct tc_listing_row *r, const struct tacho_evlist *l)
{
	/* ftrace's own events (ftrace:function) have a check of the caller of their own
	 * after the one the dry probe stops at (perf_trace_event_perm): opened for real */
	if (shared_rules(r))
		return tc_evlist_probe_tracepoint_dry(l, 0);
	if (!strcmp(r->pmu, "uprobe"))
		return tc_evlist_probe_uprobe_dry(l, 0);
	return tacho_evlist_probe(l, 0);
}

static int probe_user_only(const struct build *b, const struct tc_listing_row *r)
{
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	char buf[700];
	int err;

	snprintf(buf, sizeof(buf), "%s:u", r->spec);
	err = tacho_evlist_parse_opts(buf, b->events, &l, &d);
	if (err)
		return err;
	err = probe_open(r, l);
	tacho_evlist_free(l);
	return err;
}

/* The probe's first part, on the caller's thread (the parser is not known to be
 * thread-safe: libpfm4): the row's spec parsed, or NULL with the row's error set. */
static struct tacho_evlist *probe_parse(struct build *b, struct tc_listing_row *r)
{
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };

	r->probed = true;
	r->err = tacho_evlist_parse_opts(r->spec, b->events, &l, &d);
	if (r->err) {
		r->msg = tc_strdup(d.message);
		if (!r->msg)
			b->oom = true;
		return NULL;
	}
	return l;
}

/* The probe's last part, on the caller's thread, once r->err holds the open's answer:
 * the explanation, and the ':u' form after EACCES. Frees l. */
static void probe_finish(struct build *b, struct tc_listing_row *r, struct tacho_evlist *l)
{
	struct perf_event_attr attr;

	if (r->err && tacho_evlist_attr(l, 0, &attr) == 0) {
		r->why = explanation(b, r->src, r->err, &attr);
		/* a user who may count user space only: does the ':u' form open? */
		if (r->err == -EACCES && !attr.exclude_kernel)
			r->err_u = probe_user_only(b, r);
	}
	tacho_evlist_free(l);
}

static void probe_row(struct build *b, struct tc_listing_row *r)
{
	struct tacho_evlist *l;

	if (!r->spec || !b->probe)
		return;
	l = probe_parse(b, r);
	if (!l)
		return;
	r->err = probe_open(r, l);
	probe_finish(b, r, l);
}

static void row_exit(struct tc_listing_row *r)
{
	free(r->name);
	free(r->aliases);
	free(r->desc);
	free(r->pmu);
	free(r->spec);
	free(r->msg);
}

static int collect(void *arg, const struct tacho_event_info *ev)
{
	struct build *b = arg;
	struct tacho_event_listing *l = b->l;
	struct tc_listing_row *r;

	if (!row_matches(b, ev))
		return 0;
	if (l->n == l->alloc) {
		size_t na = l->alloc ? 2 * l->alloc : 256;
		struct tc_listing_row *nr = realloc(l->rows, na * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		l->rows = nr;
		l->alloc = na;
	}
	r = &l->rows[l->n];
	memset(r, 0, sizeof(*r));
	r->src = ev->source;
	r->name = tc_strdup(ev->name);
	r->aliases = tc_strdup(ev->aliases);
	r->desc = tc_strdup(ev->desc);
	r->pmu = tc_strdup(ev->pmu);
	r->spec = tc_strdup(ev->probe);
	r->why = -1;
	r->err_u = 1;
	if (!r->name || !r->aliases || !r->desc || !r->pmu || (ev->probe && !r->spec)) {
		row_exit(r);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

/* Probes the rows after the walk (the table no longer moves). Tracepoints: each when
 * at most TC_LISTING_TP_PROBE_EACH are listed, else one for all (sched:sched_switch
 * where listed, never one of ftrace's own): their answers differ only in what a dry
 * probe does not ask. */
static void probe_rows(struct build *b)
{
	struct tacho_event_listing *l = b->l;
	size_t ntp = 0, rep = SIZE_MAX;

	if (!b->probe)
		return;
	for (size_t i = 0; i < l->n; i++) {
		if (l->rows[i].src != TACHO_EVENT_SRC_TRACEPOINT)
			continue;
		ntp++;
		if (shared_rules(&l->rows[i]) &&
		    (rep == SIZE_MAX || !strcmp(l->rows[i].name, "sched:sched_switch")))
			rep = i;
	}
	if (ntp > TC_LISTING_TP_PROBE_EACH)
		l->tp_rep = rep;
	for (size_t i = 0; i < l->n; i++) {
		if (l->rows[i].src == TACHO_EVENT_SRC_TRACEPOINT &&
		    ntp > TC_LISTING_TP_PROBE_EACH && i != rep)
			continue;
		probe_row(b, &l->rows[i]);
	}
}

/* Every field of the options is optional: the first version is sz alone. */
#define TC_OPTS_V1_tacho_event_listing_opts tc_offsetofend(struct tacho_event_listing_opts, sz)

int tacho_event_listing_new(const struct tacho_event_listing_opts *opts,
			    struct tacho_event_listing **out)
{
	struct tacho_event_listing *l;
	struct build b = { .probe = true };
	const char *pattern = NULL;
	unsigned mask = 0;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	err = TC_OPTS_VALID(opts, tacho_event_listing_opts);
	if (err)
		return err;
	b.events = TC_OPTS_GET(opts, tacho_event_listing_opts, events, NULL);
	mask = TC_OPTS_GET(opts, tacho_event_listing_opts, sources, 0);
	pattern = TC_OPTS_GET(opts, tacho_event_listing_opts, pattern, NULL);
	if (pattern && !*pattern)
		pattern = NULL;
	b.probe = !TC_OPTS_GET(opts, tacho_event_listing_opts, no_probe, false);
	err = TC_OPTS_VALID(b.events, tacho_event_opts);
	if (err)
		return err;
	if (mask >> TACHO_EVENT_SRC_COUNT)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	b.l = l;
	l->tp_rep = SIZE_MAX;
	l->pattern = tc_strdup(pattern);
	if (pattern && !l->pattern) {
		err = -ENOMEM;
		goto out_free;
	}
	b.glob = pattern && strpbrk(pattern, "*?[") != NULL;
	l->grouped = !pattern && mask != 1u << TACHO_EVENT_SRC_TRACEPOINT;
	l->tp_wanted = !mask || (mask & (1u << TACHO_EVENT_SRC_TRACEPOINT));
	{
		struct tc_events_ctx ctx = {
			.tracefs_root = TC_OPTS_GET(b.events, tacho_event_opts, tracefs_root,
						    NULL),
		};

		l->tracefs = tc_tracefs_root(&ctx) != NULL;
	}
	err = tacho_events_foreach(b.events, mask, collect, &b);
	if (!err)
		probe_rows(&b);
	if (!err && b.oom)
		err = -ENOMEM;
	if (err)
		goto out_free;
	*out = l;
	return 0;
out_free:
	tacho_event_listing_free(l);
	return err;
}

void tacho_event_listing_free(struct tacho_event_listing *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		row_exit(&l->rows[i]);
	free(l->rows);
	free(l->ex);
	free(l->pattern);
	free(l);
}

size_t tacho_event_listing_count(const struct tacho_event_listing *l)
{
	return l ? l->n : 0;
}
