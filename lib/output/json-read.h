/* json-read.h - a strict JSON reader (RFC 8259) for the documents tacho reads back:
 * its own outputs, compared by `tacho diff`. The tree is the whole document in memory;
 * the writers beside it (output.h) never use it. */
#ifndef TC_JSON_READ_H
#define TC_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "tacho/errors.h"

enum tc_jv_type {
	TC_JV_NULL, TC_JV_BOOL, TC_JV_NUMBER, TC_JV_STRING, TC_JV_ARRAY, TC_JV_OBJECT,
};

/* One value. An array's or object's elements are items[0..n) in document order; an
 * object's members carry their names in key. Strings are decoded (escapes resolved,
 * \u0000 kept: len counts every byte) and NUL-terminated. */
struct tc_jv {
	enum tc_jv_type type;
	bool boolean;
	bool integer;        /* a number written without fraction or exponent */
	double number;       /* as strtod reads it; a number too large for a double is an
				error, not infinity */
	char *str;           /* a string's bytes */
	size_t len;
	char *key;           /* the member's name when the parent is an object, else NULL */
	size_t n;
	struct tc_jv *items;
	unsigned line, column;   /* where the value starts (1-based), for messages */
};

/* Reads text[0..len) as one JSON value with only whitespace around it; nesting deeper
 * than 128 levels, duplicate member names (RFC 8259 4: their meaning is unpredictable),
 * bytes that are not UTF-8 inside strings and lone surrogate escapes are errors. On
 * success *out is the tree (tc_jv_free) and 0 is returned; else -TACHO_EPARSE (or
 * -ENOMEM) with diag (when non-NULL) saying what, at which line and column of source
 * (the name the message gives the text). Thread-safe. */
int tc_json_read(const char *text, size_t len, const char *source, struct tc_jv **out,
		 struct tacho_diag *diag);
void tc_jv_free(struct tc_jv *v);   /* NULL is fine */

/* An object's member of that name, or NULL (also when obj is no object). */
const struct tc_jv *tc_jv_get(const struct tc_jv *obj, const char *key);

#endif
