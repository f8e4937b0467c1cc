/* suggest.c - "did you mean" for an event name that names nothing: the nearest of the
 * names and aliases tacho list knows (generic, cache, software, libpfm4, sysfs PMUs,
 * tracepoints). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "events/events.h"
#include "tacho/events.h"

static int offer(void *arg, const struct tacho_event_info *ev)
{
	struct tc_nearest *n = arg;
	const char *a = ev->aliases;

	/* the syntax rows (rNNNN, mem:ADDR..., uprobe:...) are no names */
	if (ev->source == TACHO_EVENT_SRC_RAW || ev->source == TACHO_EVENT_SRC_BREAKPOINT)
		return 0;
	tc_nearest_add(n, ev->name, strlen(ev->name));
	while (a && *a) {
		size_t len = strcspn(a, ",");

		tc_nearest_add(n, a, len);
		a += len;
		a += *a == ',';
	}
	return n->oom ? -ENOMEM : 0;
}

int tc_events_suggest(const struct tc_events_ctx *ctx, const char *word, size_t len,
		      char *buf, size_t size)
{
	struct tacho_event_opts o = { .sz = sizeof(o) };
	struct tc_nearest n;
	int err;

	if (ctx) {
		o.sysfs_pmu_root = ctx->sysfs_root;
		o.tracefs_root = ctx->tracefs_root;
	}
	tc_nearest_init(&n, word, len);
	err = tacho_events_foreach(&o, 0, offer, &n);
	if (!err && tc_nearest_get(&n))
		snprintf(buf, size, "%s", tc_nearest_get(&n));
	else if (!err)
		err = -ENOENT;
	tc_nearest_exit(&n);
	return err;
}
