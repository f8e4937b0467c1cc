/* tacho/trace.h - libtacho's public interface: marks, the events a program writes on
 * named channels for `tacho trace` (the seeds' Soft Logic Analyzer).
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_TRACE_H
#define TACHO_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "tacho/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 8. Marks
 * ================================================================================== */
/* A mark is an instant on a channel, with a 64-bit value, stamped with the TSC:
 *
 *	tacho_mark("enqueue", item->id);
 *	...
 *	tacho_mark("dequeue", item->id);
 *
 *	$ tacho trace -o run.trace -- ./prog
 *	$ tacho trace report -i run.trace          # timeline and delta table
 *
 * A program is traced when it runs under `tacho trace` (which puts the name of a
 * shared-memory area into TACHO_TRACE); otherwise a mark returns at once, after one
 * test of a flag (docs/performance.md has the cost). Traced, each thread writes into a
 * ring of its own in that area, without a lock or a system call: the thread's first
 * mark claims a ring, a channel's first use on a thread looks its name up (and, the
 * first time in the process, publishes it); later marks cost a TSC read, a pointer
 * compare and a 24-byte store. A ring that fills to a quarter wakes tacho's drain (one
 * system call per rise to that mark, not per mark). When a ring is full all the same,
 * the new entry is dropped and counted, and the trace reports how many
 * (docs/trace.md). While traced, regions
 * (tacho_region_begin/end) are written into the same ring as spans.
 *
 * Channel names are any string; they are compared as strings (the pointer is
 * remembered to make the common case fast) and kept to their first 255 bytes. */

/* Writes a mark on channel with value on the calling thread. Returns 0 (also when not
 * traced: then nothing is looked at); -EINVAL for a NULL channel; -ENOBUFS when the
 * mark was dropped (the thread's ring full, no ring or channel left: counted in the
 * trace); -ENOMEM.
 * Thread-safe and async-signal-safe once the thread has marked on that channel
 * before. */
TACHO_API int tacho_mark(const char *channel, uint64_t value);

/* Writes a counter: the channel's level is value from now until its next counter
 * (drawn as a level, Chrome's counter track). Same returns as tacho_mark. */
TACHO_API int tacho_mark_counter(const char *channel, uint64_t value);

/* Whether this process is being traced (TACHO_TRACE names an area it could map).
 * Thread-safe. */
TACHO_API bool tacho_trace_active(void);

/* With -DTACHO_DISABLE (tacho/regions.h) marks are inline no-ops returning 0 and
 * tacho_trace_active() is false: the program needs no libtacho for them. */
#ifdef TACHO_DISABLE
static inline int tacho_off_mark_(const char *channel, uint64_t value)
{ (void)channel; (void)value; return 0; }
static inline bool tacho_off_trace_active_(void) { return false; }
#define tacho_mark(channel, value) tacho_off_mark_(channel, value)
#define tacho_mark_counter(channel, value) tacho_off_mark_(channel, value)
#define tacho_trace_active() tacho_off_trace_active_()
#endif /* TACHO_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* TACHO_TRACE_H */
