/* listing.h - the event listing behind `tacho list`, shared by its builder (listing.c)
 * and its writers (listing-write.c). */
#ifndef TACHO_EVENTS_LISTING_H
#define TACHO_EVENTS_LISTING_H

#include <stdbool.h>
#include <stddef.h>

#include "tacho/events.h"
#include "tacho/errors.h"

/* One event the walk gave, and what probing it found. */
struct tc_listing_row {
	enum tacho_event_source src;
	char *name, *aliases, *desc, *pmu;
	char *spec;       /* the probe spec (every row is probed after the walk) */
	bool probed;      /* a probe spec existed and was tried */
	int err;          /* 0 when it opened, else -errno (or a parse error) */
	int why;          /* index into the explanations, -1 when none */
	char *msg;        /* why its spec did not parse, when it did not */
	int err_u;        /* after EACCES: 0 if it opens with ':u', -errno if not, 1 untried */
};

/* Why events of a source could not be opened: the engine's explanation of one error,
 * shared by every row of that source with that error. */
struct tc_listing_expl {
	enum tacho_event_source src;
	int err;
	char text[512];
	enum tacho_hint hint;     /* where to look next, worded by the writer */
};

struct tacho_event_listing {
	char *pattern;            /* NULL: every event */
	bool grouped;             /* tracepoints one line per subsystem (no pattern, and
				     not the tracepoint source alone) */
	bool tp_wanted;           /* the tracepoint source was asked for */
	bool tracefs;             /* a readable tracefs was found */
	struct tc_listing_row *rows;
	size_t n, alloc;
	struct tc_listing_expl *ex;
	size_t nex, allocex;
	size_t tp_rep;            /* the tracepoint probed for all, or SIZE_MAX */
};

/* Closing a tracepoint event costs the kernel an RCU grace period (about 40 ms on
 * this machine: 2,323 tracepoints took 93 s), and the kernel checks the same rules
 * for every tracepoint; so the listing opens each tracepoint only when a pattern
 * selects at most this many, and otherwise one, whose result it reports for all. */
#define TC_LISTING_TP_PROBE_EACH 10

#endif
