/* test-json-read.c - the strict JSON reader (lib/output/json-read.c) that `tacho diff`
 * reads stat documents with: every kind of value, escapes and UTF-8, the line and column
 * of values, and every malformation refused with its place and a message. Each case of
 * a table names its line on failure. */
#include <string.h>

#include "harness.h"
#include "output/json-read.h"
#include "util/util.h"

static void test_read_values(void **state)
{
	static const char text[] = " {\"a\": [1, -0.5e+3, 2E2, 0], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\\\"\","
		" \"t\": true, \"f\": false, \"z\": null, \"o\": {}, \"nul\": \"a\\u0000b\"} ";
	struct tacho_diag d = { .sz = sizeof(d) };
	const struct tc_jv *a, *s;
	struct tc_jv *v;
	(void)state;

	assert_int_equal(tc_json_read(text, strlen(text), "t", &v, &d), 0);
	assert_int_equal(v->type, TC_JV_OBJECT);
	assert_int_equal(v->n, 7);
	a = tc_jv_get(v, "a");
	assert_int_equal(a->n, 4);
	assert_true(a->items[0].integer && a->items[0].number == 1);
	assert_true(!a->items[1].integer && a->items[1].number == -500);
	assert_true(!a->items[2].integer && a->items[2].number == 200);
	s = tc_jv_get(v, "s");
	/* é is C3 A9, U+1F600 is F0 9F 98 80 */
	assert_int_equal(s->len, 9);
	assert_memory_equal(s->str, "x\xc3\xa9\xf0\x9f\x98\x80\n\"", 9);
	assert_true(tc_jv_get(v, "t")->boolean && !tc_jv_get(v, "f")->boolean);
	assert_int_equal(tc_jv_get(v, "z")->type, TC_JV_NULL);
	assert_int_equal(tc_jv_get(v, "nul")->len, 3);
	assert_null(tc_jv_get(v, "missing"));
	assert_null(tc_jv_get(a, "a"));   /* not an object */
	assert_int_equal(a->line, 1);
	assert_int_equal(a->column, 8);   /* " {\"a\": [" */
	tc_jv_free(v);
}

static void test_read_errors(void **state)
{
	static const struct {
		int line;
		const char *text;
		unsigned at_line, at_col;
		const char *message;
	} c[] = {
		{ __LINE__, "", 1, 1, "the text ends where a value should be" },
		{ __LINE__, "{\n  \"a\": 1,\n}", 3, 1, "expected a member's name in quotes" },
		{ __LINE__, "{\"a\": 1, \"a\": 2}", 1, 10, "a member's name appears twice in an object" },
		{ __LINE__, "[1, 2", 1, 6, "expected ',' or ']' in an array" },
		{ __LINE__, "[1 2]", 1, 4, "expected ',' or ']' in an array" },
		{ __LINE__, "01", 1, 2, "more text after the JSON value" },
		{ __LINE__, "[-]", 1, 2, "a number needs a digit" },
		{ __LINE__, "1.", 1, 3, "a digit must follow the decimal point" },
		{ __LINE__, "1e+", 1, 4, "an exponent needs a digit" },
		{ __LINE__, "1e999", 1, 1, "a number too large for a double" },
		{ __LINE__, "\"abc", 1, 1, "a string does not end" },
		{ __LINE__, "\"a\tb\"", 1, 3, "a control character inside a string (escape it)" },
		{ __LINE__, "\"\\x\"", 1, 2, "a bad escape in a string" },
		{ __LINE__, "\"\\ud800\"", 1, 2, "a bad escape in a string" },
		{ __LINE__, "\"\\udc00\"", 1, 2, "a bad escape in a string" },
		{ __LINE__, "\"\\u12\"", 1, 2, "a bad escape in a string" },
		{ __LINE__, "\"\xff\"", 1, 2, "a string holds bytes that are not UTF-8" },
		{ __LINE__, "\"\xc0\xaf\"", 1, 2, "a string holds bytes that are not UTF-8" },
		{ __LINE__, "\"\xed\xa0\x80\"", 1, 2, "a string holds bytes that are not UTF-8" },
		{ __LINE__, "{\"a\\u0000\": 1}", 1, 2, "a member's name holds \\u0000" },
		{ __LINE__, "tru", 1, 1, "not a JSON value" },
		{ __LINE__, "[1,]", 1, 4, "not a JSON value" },
		{ __LINE__, "+1", 1, 1, "not a JSON value" },
		{ __LINE__, "{\"a\" 1}", 1, 6, "expected ':' after a member's name" },
		{ __LINE__, "{\"a\": 1 \"b\": 2}", 1, 9, "expected ',' or '}' in an object" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		struct tc_jv *v = (struct tc_jv *)&d;
		int err = tc_json_read(c[i].text, strlen(c[i].text), "doc", &v, &d);

		if (err != -TACHO_EPARSE || v || d.line != c[i].at_line || d.column != c[i].at_col ||
		    strcmp(d.message, c[i].message) || strcmp(d.source, "doc"))
			fail_msg("line %d: %d at %u:%u '%s', want %u:%u '%s'", c[i].line, err, d.line,
				 d.column, d.message, c[i].at_line, c[i].at_col, c[i].message);
	}
}

/* 128 levels are read, 129 are refused (the recursion is bounded). */
static void test_read_depth(void **state)
{
	char text[2 * 130 + 1];
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_jv *v;
	(void)state;

	for (int deep = 129; deep <= 130; deep++) {
		memset(text, '[', (size_t)deep);
		memset(text + deep, ']', (size_t)deep);
		text[2 * deep] = '\0';
		int err = tc_json_read(text, strlen(text), "deep", &v, &d);
		if (deep == 129) {
			assert_int_equal(err, 0);
			tc_jv_free(v);
		} else {
			assert_int_equal(err, -TACHO_EPARSE);
			assert_string_equal(d.message, "nested more than 128 levels deep");
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_values),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_read_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
