/* json-check.h - a strict RFC 8259 reader for tests: checks that a command's --json
 * output is valid JSON and lets a test look values up by path, without python. */
#ifndef TACHO_TEST_JSON_CHECK_H
#define TACHO_TEST_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

enum th_json_type {
	TH_JSON_NULL, TH_JSON_BOOL, TH_JSON_NUMBER, TH_JSON_STRING, TH_JSON_ARRAY, TH_JSON_OBJECT,
};

struct th_json {
	enum th_json_type type;
	bool boolean;
	double number;
	bool integer;            /* the number was written without fraction or exponent */
	char *string;            /* decoded (escapes resolved), NUL-terminated */
	char *key;               /* the member's name when the parent is an object */
	size_t n;                /* members or elements */
	struct th_json **items;
};

/* Parses the whole text (one value, surrounded by whitespace only). Returns the tree,
 * or NULL with a message "line L, column C: what" in err. Duplicate keys are an error
 * (RFC 8259 says they make the object's meaning unpredictable). */
struct th_json *th_json_parse(const char *text, char *err, size_t errsize);
void th_json_free(struct th_json *j);

/* Looks up a path of member names and [index] steps: "core_types[0].caches[2].ways".
 * NULL when any step is missing. */
const struct th_json *th_json_get(const struct th_json *j, const char *path);

/* Parses text or fails the current test, printing the error and the text. */
struct th_json *th_json_parse_or_fail(const char *text, const char *file, int line);
#define assert_json(text) th_json_parse_or_fail((text), __FILE__, __LINE__)

struct th_run;
/* Runs `tacho stat --json FIRST ARGS...` (NULL-terminated, 60 at most) into *r and
 * returns its document (stderr), parsed; fails the test where it is not JSON. */
struct th_json *th_stat_json_at(const char *file, int line, struct th_run *r,
				const char *first, ...);
#define th_stat_json(r, ...) th_stat_json_at(__FILE__, __LINE__, (r), __VA_ARGS__)

/* Fails the test unless path exists and has the type (and, for the _int form, the
 * integer value). */
void th_json_expect_type(const struct th_json *j, const char *path, enum th_json_type t,
			 const char *file, int line);
void th_json_expect_int(const struct th_json *j, const char *path, long long v,
			const char *file, int line);
void th_json_expect_str(const struct th_json *j, const char *path, const char *v,
			const char *file, int line);
#define assert_json_type(j, path, t) th_json_expect_type((j), (path), (t), __FILE__, __LINE__)
#define assert_json_int(j, path, v) th_json_expect_int((j), (path), (v), __FILE__, __LINE__)
#define assert_json_str(j, path, v) th_json_expect_str((j), (path), (v), __FILE__, __LINE__)

/* The number, or the string, at path; fails the test when it is missing or of another
 * type. The string belongs to j. */
double th_json_num_or_fail(const struct th_json *j, const char *path, const char *file,
			   int line);
const char *th_json_str_or_fail(const struct th_json *j, const char *path, const char *file,
				int line);
#define json_num(j, path) th_json_num_or_fail((j), (path), __FILE__, __LINE__)
#define json_str(j, path) th_json_str_or_fail((j), (path), __FILE__, __LINE__)

/* The first element of the array at path whose member `member` is the string value: a
 * region of a regions report by its "name", a row of a report by its "symbol", a
 * doctor's check by its "key". NULL when there is none, or path is not an array. */
const struct th_json *th_json_find(const struct th_json *j, const char *path,
				   const char *member, const char *value);
/* The same for member "name", failing the test (naming path and name) when there is
 * none: the entries of a regions report, "regions" or "detail". */
const struct th_json *th_json_named_or_fail(const struct th_json *j, const char *path,
					    const char *name, const char *file, int line);
#define assert_json_named(j, path, name)                                                \
	th_json_named_or_fail((j), (path), (name), __FILE__, __LINE__)

#endif
