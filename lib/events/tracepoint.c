/* tracepoint.c - kernel tracepoints by name: their ids from tracefs.
 *
 * A tracepoint SUBSYS:NAME is PERF_TYPE_TRACEPOINT with config = the number in
 * TRACEFS/events/SUBSYS/NAME/id. tracefs lives at /sys/kernel/tracing (or under
 * debugfs at /sys/kernel/debug/tracing on older set-ups); the library never mounts
 * it, it only says where it looked. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "events/events.h"
#include "tacho/errors.h"

static const char *const tracefs_places[] = {
	"/sys/kernel/tracing",
	"/sys/kernel/debug/tracing",
};

static bool has_events(const char *root)
{
	char path[1024];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", root);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *tc_tracefs_root(const struct tc_events_ctx *ctx)
{
	if (ctx && ctx->tracefs_root)
		return has_events(ctx->tracefs_root) ? ctx->tracefs_root : NULL;
	for (size_t i = 0; i < ARRAY_SIZE(tracefs_places); i++)
		if (has_events(tracefs_places[i]))
			return tracefs_places[i];
	return NULL;
}

int tc_tracepoint_id(const struct tc_events_ctx *ctx, const char *sys, size_t syslen,
		     const char *name, size_t namelen, uint64_t *id)
{
	const char *root = tc_tracefs_root(ctx);
	char path[1024];
	long long v;
	int r;

	if (!root)
		return -ENODEV;
	if (!tc_events_safe_component(sys, syslen) || !tc_events_safe_component(name, namelen))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/events/%.*s/%.*s/id", root, (int)syslen, sys,
		 (int)namelen, name);
	r = tc_read_int_file(path, &v);
	if (r == -ENOTDIR)
		r = -ENOENT;
	if (r)
		return r;
	if (v < 0)
		return -TACHO_EPARSE;
	*id = (uint64_t)v;
	return 0;
}

void tc_tracefs_why(const struct tc_events_ctx *ctx, char *buf, size_t size)
{
	char path[1024];
	struct stat st;

	if (ctx && ctx->tracefs_root) {
		snprintf(buf, size, "%s/events is not there", ctx->tracefs_root);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(tracefs_places); i++) {
		snprintf(path, sizeof(path), "%s/events", tracefs_places[i]);
		if (stat(path, &st) != 0 && errno == EACCES) {
			snprintf(buf, size, "%s is not readable by this user (tracefs is usually "
				 "root's only: run as root, or remount it with mode=755)", path);
			return;
		}
	}
	snprintf(buf, size, "looked in /sys/kernel/tracing and /sys/kernel/debug/tracing; "
		 "as root: mount -t tracefs nodev /sys/kernel/tracing");
}
