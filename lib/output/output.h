/* output.h - the JSON, CSV and table writers every command shares.
 *
 * One writer per format, so that no command formats JSON or CSV by hand. All of them
 * write to a FILE the caller owns and report write errors through tc_*_error(). */
#ifndef TACHO_OUTPUT_H
#define TACHO_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* --- JSON (json.c) ---
 * A streaming writer: open objects and arrays, write members. Inside an object every
 * call takes a key; inside an array pass key NULL. NaN and infinities become null.
 * pretty: two-space indentation, else one line (for JSON-lines output). */
#define TC_JSON_MAX_DEPTH 32
struct tc_json {
	FILE *f;
	bool pretty;
	int depth;
	bool first[TC_JSON_MAX_DEPTH];
	bool bad;    /* nesting misuse; the output is then not valid JSON */
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
/* Ends the document with a newline (pretty) or nothing; returns 0 or -EIO/-TACHO_EPARSE. */
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

#endif
