/* tpformat.h - a tracepoint's format text from tracefs, found by the event's name and
 * checked against its id: what a recording keeps to decode the payloads offline. */
#ifndef TACHO_EVENTS_TPFORMAT_H
#define TACHO_EVENTS_TPFORMAT_H

#include <stddef.h>
#include <stdint.h>

/* The text of TRACEFS/events/SYS/NAME/format for the tracepoint event named name
 * ("SYS:NAME", modifiers after a further ':' ignored) whose perf config is id. 0 and
 * *text (malloc'd, NUL-terminated, *len bytes; free it), -ENODEV (no tracefs), -ENOENT
 * (no such tracepoint, or its ID line is not id: tracefs changed since the name was
 * resolved), -ENOMEM, or the read's -errno. */
int tc_tracepoint_format(const char *name, uint64_t id, char **text, size_t *len);

#endif
