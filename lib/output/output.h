/* output.h - the JSON, CSV and table primitives every writer of the library shares.
 *
 * One primitive per format, so that no writer formats JSON or CSV by hand. All of them
 * write to a FILE the caller owns; the result writers (stat, cpu, report, list, doctor,
 * regions, bench) stand on them, and the command line never calls them (the layer
 * table of docs/architecture.md denies cli/ every tc_json_* and tc_csv_*). */
#ifndef TC_OUTPUT_H
#define TC_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tacho/output.h"
#include "tacho/errors.h"

/* --- JSON (json.c) ---
 * A streaming writer: open objects and arrays, write members. Inside an object every
 * call takes a key; inside an array pass key NULL. NaN and infinities become null.
 * pretty: two-space indentation, else one line (for JSON-lines output). */
/* deep enough for a report's call-graph tree: an object and its "children" array per
 * frame, up to the 512 frames of a chain that a report resolves */
#define TC_JSON_MAX_DEPTH 1040
struct tc_json {
	FILE *f;
	bool pretty;
	int depth;
	bool first[TC_JSON_MAX_DEPTH];
	bool bad;    /* nesting misuse; the output is then not valid JSON */
	char *hold;  /* tc_json_hold's buffer (malloc'd), or NULL: each call writes */
	size_t held; /* its bytes not yet handed to stdio */
};
void tc_json_init(struct tc_json *j, FILE *f, bool pretty);
void tc_json_obj_begin(struct tc_json *j, const char *key);
void tc_json_obj_end(struct tc_json *j);
void tc_json_arr_begin(struct tc_json *j, const char *key);
void tc_json_arr_end(struct tc_json *j);
void tc_json_str(struct tc_json *j, const char *key, const char *val); /* NULL -> null */
void tc_json_strn(struct tc_json *j, const char *key, const char *val, size_t len);
void tc_json_int(struct tc_json *j, const char *key, int64_t val);
void tc_json_uint(struct tc_json *j, const char *key, uint64_t val);
void tc_json_double(struct tc_json *j, const char *key, double val);
void tc_json_bool(struct tc_json *j, const char *key, bool val);
void tc_json_null(struct tc_json *j, const char *key);
/* From here to tc_json_finish the text is held in a 64 KiB buffer and handed to stdio
 * when full, not at every call: for large documents (a fifth of an 80,000-region report
 * was fwrite's per-call cost). The caller then writes nothing else to the FILE until
 * tc_json_finish, which it must call (it hands the rest over and frees the buffer).
 * Without memory for the buffer, every call writes as before. */
void tc_json_hold(struct tc_json *j);
/* Hands any held text to stdio, then ends the document with a newline (pretty) or
 * nothing; returns 0 or -EIO/-TACHO_EPARSE. */
int tc_json_finish(struct tc_json *j);
/* Writes s as a JSON string literal, quotes included. */
void tc_json_escape(FILE *f, const char *s, size_t len);

/* --- CSV (csv.c) ---
 * RFC 4180 quoting; sep is ',' by default (perf's -x lets the user choose). */
void tc_csv_field(FILE *f, char sep, bool first, const char *val);
void tc_csv_end(FILE *f);

/* --- aligned text tables (table.c) ---
 * Collect rows of strings, then print them with each column as wide as its widest
 * cell. Columns whose alignment is right (numbers) are padded on the left. */
struct tc_table;
struct tc_table *tc_table_new(unsigned ncols);
void tc_table_free(struct tc_table *t);
void tc_table_align_right(struct tc_table *t, unsigned col, bool right);
/* Adds one row; cells is ncols strings (NULL prints empty). Copies them. 0 or -ENOMEM. */
int tc_table_add(struct tc_table *t, const char *const *cells);
/* Adds one row from printf-style cells separated by '\t'. */
int tc_table_addf(struct tc_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints every row, each prefixed by indent spaces, columns separated by gap spaces. */
void tc_table_print(const struct tc_table *t, FILE *f, unsigned indent, unsigned gap);

/* --- what every result writer shares (write.c) --- */

/* The caller's options with the defaults filled in and only the fields its sz covers
 * read: o may be NULL. */
struct tc_write_settings {
	char sep;                   /* CSV separator, ',' by default */
	bool header;                /* CSV header row */
	bool compact;               /* JSON on one line */
	tacho_hint_words_fn *hint_words;
	void *hint_arg;
};
/* 0, or -EINVAL for a format out of range or an sz too small to hold sz itself. */
int tc_write_settings_get(const struct tacho_write_opts *o, enum tacho_format fmt,
			  struct tc_write_settings *out);

/* The caller's words for a hint, or NULL (no callback, TACHO_HINT_NONE, or the callback
 * left it out). */
const char *tc_hint_words(const struct tc_write_settings *w, enum tacho_hint hint);

/* A library sentence with the caller's words for its hint: inside the sentence's closing
 * parenthesis when it ends with one ("(count software events instead; see 'tacho
 * doctor')": the hint is one more thing to do), else in parentheses of its own. Written
 * into buf and returned; the sentence itself when there are no words for the hint, NULL
 * when sentence is NULL. One rule for every writer and for the tacho command. */
const char *tc_hinted(const char *sentence, const char *words, char *buf, size_t size);
/* The same with the words of w's callback. */
const char *tc_hinted_w(const struct tc_write_settings *w, const char *sentence,
			enum tacho_hint hint, char *buf, size_t size);

/* A JSON document of a result writer: indented, or on one line for json_compact and
 * TACHO_FORMAT_JSON_LINES; tc_json_doc_end ends either with a newline and returns what
 * tc_json_finish does. */
void tc_json_doc_begin(struct tc_json *j, FILE *f, enum tacho_format fmt,
		       const struct tc_write_settings *w);
int tc_json_doc_end(struct tc_json *j);

/* Writes one CSV row of n fields with the separator of w. */
void tc_csv_row(FILE *f, const struct tc_write_settings *w, const char *const *fields,
		size_t n);

/* The format a file name asks for: .json, .csv, else a table (regions' TACHO_OUTPUT). */
enum tacho_format tc_format_of_path(const char *path);

/* --- metrics expositions (metrics.c) ---
 * The Prometheus text format 0.0.4 and OpenMetrics 1.0, as tacho serve's /metrics and
 * tacho stat --push write them (docs/serve.md names the families). */
/* An event's name as a metric name's part: [a-z0-9_] only, no "__", no '_' at either
 * end ("syscalls:sys_enter_write" -> "syscalls_sys_enter_write"); "event" if nothing
 * is left. */
void tc_metric_part(const char *s, char *buf, size_t size);
/* The family of an event of unit ("" for counts, "msec" for the clocks): its name
 * (tacho_PART, tacho_PART_seconds for the clocks, whose values go from msec to
 * seconds by *factor), and its OpenMetrics unit ("seconds", "", or NULL for a unit
 * OpenMetrics has no name for). */
void tc_metric_family(const char *event, const char *unit, char *name, size_t size,
		      const char **om_unit, double *factor);
/* A label value in double quotes: backslash, double quote and newline escaped. */
void tc_metric_label_value(FILE *out, const char *s);
/* " VALUE\n": integers exactly, others with 15 significant digits. */
void tc_metric_value(FILE *out, double v);
/* # HELP, # TYPE, # UNIT of a family (OpenMetrics names the family; the Prometheus
 * text format names a counter's sample, with _total). */
void tc_metric_head(FILE *out, bool om, const char *name, const char *type, const char *unit,
		    const char *help);
/* A gauge family of one sample without labels. */
void tc_metric_gauge(FILE *out, bool om, const char *name, const char *unit, const char *help,
		     double v);

/* 0, or -EIO when f has seen a write error. */
int tc_write_status(FILE *f);

#endif
