/* tacho/output.h - libtacho's public interface: how results are written: the formats
 * every writer knows and the options they share.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_OUTPUT_H
#define TACHO_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 1b. Writing results
 * ================================================================================== */
/* Every result of the library has its writers beside it, in its own area: stat
 * sessions (tacho_stat_write), CPU descriptions (tacho_cpu_write), reports of a
 * recording (tacho_profile_write_rows), the event listing (tacho_event_listing_write),
 * the machine checks (tacho_machine_write), regions and the benchmark harness. They all
 * take a FILE the caller owns, one of the formats below and the options below, so that
 * a program linking libtacho writes the same documents as the tacho command. Every JSON
 * document carries "version" and is a contract: docs/schemas.md lists them. */

enum tacho_format {
	TACHO_FORMAT_TABLE = 0,     /* aligned text for people */
	TACHO_FORMAT_CSV,           /* RFC 4180, a header row first (csv_sep below) */
	TACHO_FORMAT_JSON,          /* one JSON document (RFC 8259), indented unless
				       json_compact */
	TACHO_FORMAT_JSON_LINES,    /* one JSON object per line, for streams (the records
				       of intervals); a writer of one document writes it
				       on one line */
	TACHO_FORMAT_COUNT
};

/* The exposition formats of the metrics writers (tacho_live_frame_write_metrics,
 * tacho_stat_write_metrics). */
enum tacho_metrics_format {
	TACHO_METRICS_PROMETHEUS = 0,   /* Prometheus text format 0.0.4 (text/plain) */
	TACHO_METRICS_OPENMETRICS,      /* OpenMetrics 1.0 (application/openmetrics-text):
					   # UNIT lines, "# EOF" at the end */
};

/* The words a program gives a hint (enum tacho_hint, tacho/errors.h): a short clause
 * the writers append to a sentence that would send its reader elsewhere ("see 'tacho
 * doctor'"), or NULL to leave the hint out. Called while writing, on the writer's
 * thread; the string must live until the writer returns. */
typedef const char *tacho_hint_words_fn(void *arg, enum tacho_hint hint);

/* What the writers may be told besides the format. Zero (or NULL for the whole struct)
 * means the default everywhere. sz first, so that fields can be added (libbpf's
 * opts): a caller built against an older header passes a smaller sz and gets the
 * defaults for the fields it does not know; one built against a newer header that sets
 * a field this library lacks is refused by every writer with -TACHO_EVERSION (an sz of
 * 0 with -EINVAL). */
struct tacho_write_opts {
	size_t sz;                  /* sizeof(struct tacho_write_opts) */
	char csv_sep;               /* CSV field separator; 0: ',' */
	bool csv_no_header;         /* CSV: no header row (a stream's later parts) */
	bool json_compact;          /* JSON on one line, no indentation, ending with a
				       newline (the same as TACHO_FORMAT_JSON_LINES) */
	tacho_hint_words_fn *hint_words;  /* NULL: hints are left out of the text; the
				       library's sentences never name a command */
	void *hint_arg;
};

#ifdef __cplusplus
}
#endif

#endif /* TACHO_OUTPUT_H */
