/* tpformat.c - a tracepoint's format text read from tracefs for a recording, which
 * keeps it so that a report decodes the payloads without the machine (record/payload.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"
#include "events/tpformat.h"

#define MAX_FORMAT (1u << 20)

int tc_tracepoint_format(const char *name, uint64_t id, char **text, size_t *len)
{
	const char *root = tc_tracefs_root(NULL), *colon, *end, *line;
	char path[1024];
	size_t syslen, namelen;
	int err;

	*text = NULL;
	if (!root)
		return -ENODEV;
	colon = strchr(name, ':');
	if (!colon)
		return -ENOENT;
	syslen = (size_t)(colon - name);
	end = strchr(colon + 1, ':');
	namelen = end ? (size_t)(end - colon - 1) : strlen(colon + 1);
	if (!tc_events_safe_component(name, syslen) ||
	    !tc_events_safe_component(colon + 1, namelen))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/events/%.*s/%.*s/format", root, (int)syslen, name,
		 (int)namelen, colon + 1);
	err = tc_read_file(path, text, len, MAX_FORMAT);
	if (err)
		return err == -ENOTDIR ? -ENOENT : err;
	/* the name was resolved to id earlier: the same tracepoint, or nothing */
	line = strstr(*text, "\nID: ");
	if (!line || strtoull(line + 5, NULL, 10) != id) {
		free(*text);
		*text = NULL;
		return -ENOENT;
	}
	return 0;
}
