/* test-util.c - the error model, number parsing, hex digits, size formatting, the JSON
 * and table writers, output files (tc_outfile). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "output/output.h"
#include "util/util.h"
#include "tacho/cpu.h"
#include "tacho/events.h"

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(tacho_strerror(-TACHO_EPARSE), "malformed input");
	assert_string_equal(tacho_strerror(TACHO_EPARSE), "malformed input");
	assert_string_equal(tacho_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(tacho_err_name(-TACHO_ENOPMU), "TACHO_ENOPMU");
	assert_string_equal(tacho_err_name(-EACCES), "EACCES");
	assert_null(tacho_err_name(-99999));
	assert_string_equal(tacho_strerror(-99999), "unknown error -99999");
	assert_string_equal(tacho_err_name(-TACHO_EOUTOFRANGE), "TACHO_EOUTOFRANGE");
	assert_string_equal(tacho_err_name(-TACHO_ENOSTART), "TACHO_ENOSTART");
	assert_string_equal(tacho_err_name(-TACHO_ENOVALUE), "TACHO_ENOVALUE");
	assert_string_equal(tacho_err_name(-ERANGE), "ERANGE");
	/* -INT_MIN does not fit an int: UBSan (which aborts the asan build) watches */
	assert_string_equal(tacho_strerror(INT_MIN), "unknown error -2147483648");
	assert_null(tacho_err_name(INT_MIN));
	assert_string_equal(tacho_strerror(INT_MAX), "unknown error 2147483647");
}

/* No code of tacho's is named like an errno with another number (TACHO_ERANGE was
 * 10008 while ERANGE is 34): a reader of "TACHO_EX" must never take it for EX. */
static void test_err_names_are_not_errnos(void **state)
{
	static const struct {
		const char *name;
	} codes[] = {
#define NAME_(name, num, text) { #name },
		TACHO_ERRNO_MAP(NAME_)
#undef NAME_
	};
	(void)state;

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		for (int e = 1; e < 4096; e++) {
			const char *os = strerrorname_np(e);

			if (os && !strcmp(os, codes[i].name))
				fail_msg("TACHO_%s reuses the name of errno %d", codes[i].name, e);
		}
}

static void test_diag(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	char buf[512];
	(void)state;

	assert_int_equal(tc_diag_set(&d, "dump.txt", 12, 0, -TACHO_EPARSE, "bad %s", "leaf"),
			 -TACHO_EPARSE);
	tacho_diag_format(&d, buf, sizeof(buf));
	assert_string_equal(buf, "dump.txt:12: bad leaf");
	tc_diag_set(&d, "cycles:q", 0, 8, -TACHO_EPARSE, "unknown modifier 'q'");
	tacho_diag_format(&d, buf, sizeof(buf));
	assert_string_equal(buf, "cycles:q:8: unknown modifier 'q'");
	assert_int_equal(tc_diag_set(NULL, "x", 1, 1, -EINVAL, "ignored"), -EINVAL);
}

/* A diag is sized: one whose sz is below the first version is refused by every function
 * that takes it, with nothing written, and is never formatted. */
static void test_diag_sized(void **state)
{
	struct tacho_diag small = { .sz = sizeof(small) };
	struct tacho_evlist *l = (struct tacho_evlist *)&small;
	struct tacho_cpuid_dump *dump = (struct tacho_cpuid_dump *)&small;
	char buf[64];
	(void)state;

	memset(&small, 0x5a, sizeof(small));
	small.sz = offsetof(struct tacho_diag, hint);   /* one field short */
	assert_int_equal(tc_diag_check(&small), -EINVAL);
	assert_int_equal(tc_diag_check(NULL), 0);
	assert_int_equal(tacho_diag_format(&small, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tacho_diag_format(NULL, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tacho_diag_caret(&small, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tacho_evlist_parse("no-such-event", &l, &small), -EINVAL);
	assert_null(l);
	assert_int_equal(tacho_cpuid_dump_parse("junk", 4, "x", &dump, &small), -EINVAL);
	assert_null(dump);
	for (size_t i = sizeof(small.sz); i < sizeof(small); i++)
		assert_int_equal(((unsigned char *)&small)[i], 0x5a);
	assert_int_equal(tc_diag_set(&small, "x", 1, 1, -TACHO_EPARSE, "not written"),
			 -TACHO_EPARSE);
	assert_int_equal(small.source[0], 0x5a);

	/* the first version exactly (a caller built before any later field) is enough */
	small.sz = offsetof(struct tacho_diag, hint) + sizeof(small.hint);
	assert_int_equal(tacho_evlist_parse("cycles:q", &l, &small), -TACHO_EPARSE);
	assert_null(l);
	assert_int_equal(small.column, 8);
}

/* An options struct as the library knows it (its first version ended at a), and a newer
 * caller's version of it with a field more: TC_OPTS_VALID and its readers. */
struct tc_test_opts {
	size_t sz;
	int a;
	int b;
};
#define TC_OPTS_V1_tc_test_opts tc_offsetofend(struct tc_test_opts, a)
struct tc_test_opts_newer {
	size_t sz;
	int a;
	int b;
	long c;
	char d;
};

static int opts_take(const struct tc_test_opts *o, int *a, int *b, struct tacho_diag *d)
{
	int err = TC_OPTS_VALID_DIAG(o, tc_test_opts, d);

	if (err)
		return err;
	*a = TC_OPTS_GET(o, tc_test_opts, a, -1);
	*b = TC_OPTS_GET(o, tc_test_opts, b, -2);
	return 0;
}

static void test_opts(void **state)
{
	struct tc_test_opts o = { .sz = sizeof(o), .a = 1, .b = 2 }, mine;
	struct tc_test_opts_newer n;
	struct tacho_diag d = { .sz = sizeof(d) };
	int a = 0, b = 0;
	(void)state;

	/* NULL: every default */
	assert_int_equal(TC_OPTS_VALID((const struct tc_test_opts *)NULL, tc_test_opts), 0);
	assert_int_equal(opts_take(NULL, &a, &b, NULL), 0);
	assert_int_equal(a, -1);
	assert_int_equal(b, -2);
	TC_OPTS_COPY(&mine, (const struct tc_test_opts *)NULL);
	assert_int_equal(mine.sz, sizeof(mine));
	assert_int_equal(mine.a, 0);

	/* this library's version, and the first one (b then reads as its default) */
	assert_int_equal(opts_take(&o, &a, &b, NULL), 0);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	o.sz = TC_OPTS_V1_tc_test_opts;
	assert_int_equal(opts_take(&o, &a, &b, NULL), 0);
	assert_int_equal(a, 1);
	assert_int_equal(b, -2);
	TC_OPTS_COPY(&mine, &o);
	assert_int_equal(mine.sz, sizeof(mine));
	assert_int_equal(mine.a, 1);
	assert_int_equal(mine.b, 0);

	/* below the first version: -EINVAL, sz 0 included */
	o.sz = TC_OPTS_V1_tc_test_opts - 1;
	assert_int_equal(opts_take(&o, &a, &b, NULL), -EINVAL);
	o.sz = 0;
	assert_int_equal(TC_OPTS_VALID(&o, tc_test_opts), -EINVAL);

	/* a newer caller's struct: accepted while what this library lacks is zero (the
	 * padding too), refused when any byte of it is set */
	memset(&n, 0, sizeof(n));
	n.sz = sizeof(n);
	n.a = 3;
	n.b = 4;
	assert_int_equal(opts_take((const struct tc_test_opts *)&n, &a, &b, &d), 0);
	assert_int_equal(a, 3);
	assert_int_equal(b, 4);
	TC_OPTS_COPY(&mine, (const struct tc_test_opts *)&n);
	assert_int_equal(mine.sz, sizeof(mine));
	assert_int_equal(mine.b, 4);
	n.d = 1;
	assert_int_equal(opts_take((const struct tc_test_opts *)&n, &a, &b, &d),
			 -TACHO_EVERSION);
	assert_non_null(strstr(d.message, "struct tc_test_opts"));
	assert_non_null(strstr(d.message, "newer tacho.h"));
	n.d = 0;
	n.c = 1L << 40;
	assert_int_equal(TC_OPTS_VALID((const struct tc_test_opts *)&n, tc_test_opts),
			 -TACHO_EVERSION);
	/* a caller that says its struct is smaller never has its later bytes read */
	n.sz = sizeof(o);
	assert_int_equal(TC_OPTS_VALID((const struct tc_test_opts *)&n, tc_test_opts), 0);
}

static const struct {
	const char *in;
	int err;
	uint64_t v;
} u64_cases[] = {
	{ "0", 0, 0 },
	{ "42", 0, 42 },
	{ "0x2a", 0, 42 },
	{ "0X2A", 0, 42 },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "18446744073709551616", -TACHO_EOUTOFRANGE, 0 },
	{ "0xffffffffffffffff", 0, UINT64_MAX },
	{ "0x0000ffffffffffffffff", 0, UINT64_MAX },
	{ "0x1ffffffffffffffff", -TACHO_EOUTOFRANGE, 0 },
	{ "", -TACHO_EPARSE, 0 },
	{ "0x", -TACHO_EPARSE, 0 },
	{ "12a", -TACHO_EPARSE, 0 },
	{ "-1", -TACHO_EPARSE, 0 },
	{ " 1", -TACHO_EPARSE, 0 },
	{ "010", 0, 10 },
};

static void test_parse_u64(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(u64_cases); i++) {
		uint64_t v = 0;
		int err = tc_parse_u64(u64_cases[i].in, &v);
		if (err != u64_cases[i].err || (!err && v != u64_cases[i].v))
			fail_msg("case %zu \"%s\": got err %d value %llu", i, u64_cases[i].in, err,
				 (unsigned long long)v);
	}
}

static void test_parse_i64(void **state)
{
	int64_t v;
	(void)state;
	assert_int_equal(tc_parse_i64("-9223372036854775808", &v), 0);
	assert_true(v == INT64_MIN);
	assert_int_equal(tc_parse_i64("9223372036854775808", &v), -TACHO_EOUTOFRANGE);
	assert_int_equal(tc_parse_i64("+7", &v), 0);
	assert_int_equal(v, 7);
}

static const struct {
	uint64_t bytes;
	const char *text;
} size_cases[] = {
	{ 0, "0 B" },
	{ 512, "512 B" },
	{ 1024, "1 KiB" },
	{ 48 * 1024, "48 KiB" },
	{ 2u << 20, "2 MiB" },
	{ 1536u << 10, "1.5 MiB" },
	{ (uint64_t)22528 << 10, "22 MiB" },
	{ (uint64_t)23040 << 10, "22.5 MiB" },
	{ (uint64_t)480 << 20, "480 MiB" },
	{ 1000, "1000 B" },
	{ 1100, "1.07 KiB" },
};

/* Every byte value: the sixteen digits in both cases, nothing else (high bytes too,
 * which a signed char passes as negative). */
static void test_hex_digits(void **state)
{
	(void)state;
	for (int c = -128; c < 256; c++) {
		int want = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			   c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (tc_hex_value(c) != want || tc_is_hex_digit(c) != (want >= 0))
			fail_msg("character %d: value %d, want %d", c, tc_hex_value(c), want);
	}
	assert_int_equal(tc_hex_value((char)0xe9), -1);   /* a Latin-1 letter, signed */
}

static void test_hex_encode(void **state)
{
	const uint8_t bid[] = { 0x00, 0x0f, 0xa5, 0xff, 0x10 };
	char buf[16];
	(void)state;

	assert_string_equal(tc_hex_encode(bid, sizeof(bid), buf, sizeof(buf)), "000fa5ff10");
	assert_string_equal(tc_hex_encode(bid, 0, buf, sizeof(buf)), "");
	/* short buffers keep whole bytes and stay terminated */
	assert_string_equal(tc_hex_encode(bid, sizeof(bid), buf, 6), "000f");
	assert_string_equal(tc_hex_encode(bid, sizeof(bid), buf, 5), "000f");
	assert_string_equal(tc_hex_encode(bid, sizeof(bid), buf, 2), "");
	buf[0] = 'x';
	tc_hex_encode(bid, sizeof(bid), buf, 0);
	assert_int_equal(buf[0], 'x');
	/* what the hex parser reads back */
	uint64_t v;
	assert_int_equal(tc_parse_hex_u64("000fa5ff10", 10, &v), 0);
	assert_true(v == 0x000fa5ff10ull);
	assert_int_equal(tc_parse_hex_u64("0FA5", 4, &v), 0);
	assert_true(v == 0xfa5);
	assert_int_equal(tc_parse_hex_u64("0fg5", 4, &v), -TACHO_EPARSE);
}

static void test_fmt_size(void **state)
{
	char buf[32];
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(size_cases); i++) {
		tc_fmt_size(size_cases[i].bytes, buf, sizeof(buf));
		if (strcmp(buf, size_cases[i].text))
			fail_msg("case %zu: %llu bytes gave \"%s\", want \"%s\"", i,
				 (unsigned long long)size_cases[i].bytes, buf, size_cases[i].text);
	}
	assert_string_equal(tc_fmt_grouped(1234567, buf, sizeof(buf)), "1,234,567");
	assert_string_equal(tc_fmt_grouped(999, buf, sizeof(buf)), "999");
}

/* The shortest digits that read back: the 0.50066092100000004 is 0.500660921,
 * a value with 17 significant digits keeps them, and every double of a spread over
 * the exponents reads back exactly. */
static void test_fmt_shortest(void **state)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.50066092100000004, "0.500660921" }, { 0.1, "0.1" },
		{ 0.1 + 0.2, "0.30000000000000004" }, { 1.0 / 3, "0.3333333333333333" },
		{ 2.5, "2.5" }, { -0.125, "-0.125" }, { 1e-300, "1e-300" },
		{ 123456789.123, "123456789.123" }, { 1e21, "1e+21" },
		{ 5e-324, "5e-324" }, { 1e-310, "1e-310" }, { 0.0, "0" }, { -0.0, "-0" },
		{ 2.2250738585072014e-308, "2.2250738585072014e-308" },
		{ 1.7976931348623157e308, "1.7976931348623157e+308" },
		{ 9007199254740993.0, "9007199254740992" }, { 1e15 + 0.5, "1000000000000000.5" },
	};
	char buf[32];
	double v = 1e-10;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (strcmp(tc_fmt_shortest(cases[i].v, buf, sizeof(buf)), cases[i].text))
			fail_msg("case %zu gave \"%s\", want \"%s\"", i, buf, cases[i].text);
	for (int i = 0; i < 2000; i++, v = v * 1.0371 + 1e-12) {
		char want[32];
		int p = 1;

		if (strtod(tc_fmt_shortest(v, buf, sizeof(buf)), NULL) != v)
			fail_msg("%.17g gave \"%s\", which reads back otherwise", v, buf);
		/* and no shorter: the first precision that reads back, tried one by one */
		for (; p < 17; p++) {
			snprintf(want, sizeof(want), "%.*g", p, v);
			if (strtod(want, NULL) == v)
				break;
		}
		snprintf(want, sizeof(want), "%.*g", p, v);
		if (strcmp(buf, want))
			fail_msg("%.17g gave \"%s\", the shortest is \"%s\"", v, buf, want);
	}
}

static void test_json(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct tc_json j;
	(void)state;

	tc_json_init(&j, f, false);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_str(&j, "s", "a\"b\\c\n\x01");
	tc_json_null(&j, "n");
	tc_json_double(&j, "d", 0.0 / 0.0);
	tc_json_double(&j, "e", 2.0);
	tc_json_double(&j, "f", 0.50066092100000004);
	tc_json_arr_begin(&j, "a");
	tc_json_uint(&j, NULL, 18446744073709551615ull);
	tc_json_bool(&j, NULL, true);
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "empty");
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	assert_int_equal(tc_json_finish(&j), 0);
	fclose(f);
	assert_string_equal(text, "{\"version\":1,\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"n\":null,"
				  "\"d\":null,\"e\":2.0,\"f\":0.500660921,\"a\":[18446744073709551615,true],\"empty\":[]}");
	free(text);
}

/* One document of many small values, one string larger than the hold buffer, and
 * values that end at every offset across the buffer's edge, written with pretty
 * printing; held, into a memory stream. */
static char *json_doc(bool hold, bool pretty, size_t *stdio_before_finish)
{
	static char big[70 * 1024 + 3];
	char *text = NULL, key[32];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct tc_json j;

	assert_non_null(f);
	memset(big, 'x', sizeof(big) - 1);
	tc_json_init(&j, f, pretty);
	if (hold)
		tc_json_hold(&j);
	tc_json_obj_begin(&j, NULL);
	tc_json_arr_begin(&j, "many");
	for (unsigned i = 0; i < 5000; i++) {
		tc_json_obj_begin(&j, NULL);
		snprintf(key, sizeof(key), "k%u", i % 97);
		tc_json_uint(&j, key, i);
		tc_json_double(&j, "d", i / 7.0);
		tc_json_str(&j, "s", "\"é\n" + (i % 3));
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_str(&j, "big", big);
	tc_json_strn(&j, "small", big, 7);
	tc_json_obj_end(&j);
	fflush(f);
	*stdio_before_finish = len;
	assert_int_equal(tc_json_finish(&j), 0);
	assert_null(j.hold);
	fclose(f);
	return text;
}

/* tc_json_hold: the same bytes as the writer without it, pretty or not, handed over in
 * 64 KiB pieces (the held text has not all reached stdio before tc_json_finish). */
static void test_json_hold(void **state)
{
	(void)state;

	for (int pretty = 0; pretty < 2; pretty++) {
		size_t plain_before, held_before;
		char *plain = json_doc(false, pretty, &plain_before);
		char *held = json_doc(true, pretty, &held_before);
		size_t n = strlen(plain);

		assert_true(n > 2 * 64 * 1024);
		assert_int_equal(strlen(held), n);
		assert_memory_equal(held, plain, n);
		/* without the hold every call has reached stdio by the last value (all
		 * but finish's newline); with it, the last piece waits for finish */
		assert_int_equal(plain_before, n - (size_t)pretty);
		assert_true(held_before < plain_before);
		free(plain);
		free(held);
	}
}

/* One number through the writer ('i' int, 'u' uint, 'd' double), compared with want. */
static void check_json_number(char kind, int64_t i, uint64_t u, double d, const char *want)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct tc_json j;

	assert_non_null(f);
	tc_json_init(&j, f, false);
	if (kind == 'i')
		tc_json_int(&j, NULL, i);
	else if (kind == 'u')
		tc_json_uint(&j, NULL, u);
	else
		tc_json_double(&j, NULL, d);
	assert_int_equal(tc_json_finish(&j), 0);
	fclose(f);
	if (strcmp(text, want))
		fail_msg("'%c' %lld %llu %.17g gave \"%s\", want \"%s\"", kind, (long long)i,
			 (unsigned long long)u, d, text, want);
	free(text);
}

/* The writer's own number formatting gives printf's text ("%lld", "%llu", "%.1f" of a
 * whole number, otherwise the shortest "%.Ng" that reads back) at every edge, and pretty output indents by two
 * spaces a level also past the 64 spaces it writes in one call. */
static void test_json_numbers(void **state)
{
	static const int64_t ints[] = { 0, 1, -1, 9, 10, -10, 99, 100, 1234567890,
					INT64_MAX, INT64_MIN, INT64_MIN + 1 };
	static const uint64_t uints[] = { 0, 1, 9, 10, 4294967295u, 4294967296u,
					  10000000000000000000u, UINT64_MAX };
	static const double dbls[] = { 0.0, -0.0, 1.0, -1.0, 2.0, 1e15, -1e15,
				       9007199254740991.0, -9007199254740991.0,
				       9007199254740992.0, 1e300, 0.5, -0.5, 80.119087854252825,
				       2596135397.5769095, 1e-300, 4.9e-324 };
	enum { DEPTH = 40 };
	struct tc_sb want;
	char buf[64], *text = NULL;
	size_t len = 0;
	FILE *f;
	struct tc_json j;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(ints); i++) {
		snprintf(buf, sizeof(buf), "%lld", (long long)ints[i]);
		check_json_number('i', ints[i], 0, 0, buf);
	}
	for (size_t i = 0; i < ARRAY_SIZE(uints); i++) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)uints[i]);
		check_json_number('u', 0, uints[i], 0, buf);
	}
	for (size_t i = 0; i < ARRAY_SIZE(dbls); i++) {
		double v = dbls[i];

		if (v == floor(v) && fabs(v) < 9.007199254740992e15) {
			snprintf(buf, sizeof(buf), "%.1f", v);
		} else {
			/* the fewest digits that read back, found one by one */
			for (int p = 1; p <= 17; p++) {
				snprintf(buf, sizeof(buf), "%.*g", p, v);
				if (strtod(buf, NULL) == v)
					break;
			}
		}
		check_json_number('d', 0, 0, v, buf);
	}
	check_json_number('d', 0, 0, -0.0, "-0.0");
	check_json_number('d', 0, 0, 9007199254740991.0, "9007199254740991.0");

	f = open_memstream(&text, &len);
	assert_non_null(f);
	tc_json_init(&j, f, true);
	for (int d = 0; d < DEPTH; d++)
		tc_json_arr_begin(&j, NULL);
	tc_json_str(&j, NULL, "x");
	for (int d = 0; d < DEPTH; d++)
		tc_json_arr_end(&j);
	assert_int_equal(tc_json_finish(&j), 0);
	fclose(f);
	tc_sb_init(&want);
	tc_sb_adds(&want, "[");
	for (int d = 1; d <= DEPTH; d++)
		tc_sb_addf(&want, "\n%*s%s", 2 * d, "", d < DEPTH ? "[" : "\"x\"");
	for (int d = DEPTH - 1; d >= 0; d--)
		tc_sb_addf(&want, "\n%*s]", 2 * d, "");
	tc_sb_adds(&want, "\n");
	assert_false(want.oom);
	assert_string_equal(text, want.buf);
	tc_sb_exit(&want);
	free(text);
}

/* JSON is always UTF-8: a byte that is not (a program argument "\xff\xfe") becomes
 * \ufffd; well-formed UTF-8 passes as it is; overlong forms and surrogates do not. */
static void test_json_utf8(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "\xff\xfe", "\"\\ufffd\\ufffd\"" },
		{ "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"" },
		{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },              /* overlong '/' */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },     /* a surrogate */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* past U+10FFFF */
		{ "a\xe2\x82", "\"a\\ufffd\\ufffd\"" },             /* cut short */
		{ "\x1b]0;t\x07", "\"\\u001b]0;t\\u0007\"" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		tc_json_escape(f, cases[i].in, strlen(cases[i].in));
		fclose(f);
		if (strcmp(text, cases[i].want))
			fail_msg("case %zu: %s, want %s", i, text, cases[i].want);
		free(text);
	}
}

/* Text for a terminal: control bytes, C1 controls and bytes that are not UTF-8 are
 * shown as \xHH (no escape sequence passes); UTF-8 text is kept. */
static void test_printable(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "plain ascii", "plain ascii" },
		{ "\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07" },
		{ "a\nb\tc\x7f", "a\\x0ab\\x09c\\x7f" },
		{ "\xff\xfe", "\\xff\\xfe" },
		{ "\xc2\x9b" "31m", "\\xc2\\x9b" "31m" },   /* C1 CSI */
		{ "\xc2\xb5s caf\xc3\xa9", "\xc2\xb5s caf\xc3\xa9" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tc_sb sb = TC_SB_INIT;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		tc_sb_init(&sb);
		tc_sb_add_printable(&sb, cases[i].in);
		assert_string_equal(sb.buf, cases[i].want);
		tc_sb_exit(&sb);
		tc_fputs_printable(cases[i].in, f);
		fclose(f);
		assert_string_equal(text, cases[i].want);
		free(text);
	}
	assert_int_equal(tc_utf8_seq((const unsigned char *)"\xe2\x82\xac", 3), 3);
	assert_int_equal(tc_utf8_seq((const unsigned char *)"\xe2\x82\xac", 2), 0);
	assert_int_equal(tc_utf8_seq((const unsigned char *)"\x80", 1), 0);
}

static void test_table(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct tc_table *t = tc_table_new(3);
	(void)state;

	tc_table_align_right(t, 1, true);
	assert_int_equal(tc_table_addf(t, "L1d\t48 KiB\t12-way"), 0);
	assert_int_equal(tc_table_addf(t, "L2\t2 MiB\t"), 0);
	tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	fclose(f);
	assert_string_equal(text, "  L1d  48 KiB  12-way\n  L2    2 MiB\n");
	free(text);
}

static void test_strbuf(void **state)
{
	struct tc_sb sb = TC_SB_INIT;
	char *s;
	(void)state;

	tc_sb_init(&sb);
	assert_string_equal(sb.buf, "");
	for (int i = 0; i < 1000; i++)
		tc_sb_addf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_true(tc_starts_with(sb.buf, "0,1,2,"));
	s = tc_sb_detach(&sb);
	assert_non_null(s);
	assert_string_equal(sb.buf, "");
	free(s);
	tc_sb_exit(&sb);
}

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len;

	return tc_read_file(path, &text, &len, 0) ? NULL : text;
}

/* tc_outfile: a new file of mode 0600 renamed into place at commit; a link refused and
 * its target untouched; an abort or a failed commit leaves the name as it was; KEEP_OLD
 * moves the previous file to NAME.old; a device written in place; a FIFO without a
 * reader refused instead of waited on; a directory refused. */
static void test_outfile(void **state)
{
	const char *path = th_tmp("out.txt"), *link = th_tmp("link"), *fifo = th_tmp("fifo");
	struct tc_outfile o;
	struct stat st;
	char old[600], *text;
	(void)state;

	assert_int_equal(tc_outfile_open(&o, path, 0), 0);
	assert_non_null(o.tmp);
	fputs("one\n", tc_outfile_stream(&o));
	assert_int_not_equal(stat(path, &st), 0);   /* nothing under the name yet */
	assert_int_equal(tc_outfile_commit(&o), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	text = slurp(path);
	assert_string_equal(text, "one\n");
	free(text);

	/* abort: the name keeps "one" */
	assert_int_equal(tc_outfile_open(&o, path, 0), 0);
	assert_int_equal(write(o.fd, "two\n", 4), 4);
	tc_outfile_abort(&o);
	text = slurp(path);
	assert_string_equal(text, "one\n");
	free(text);

	/* KEEP_OLD */
	assert_int_equal(tc_outfile_open(&o, path, TC_OUTFILE_KEEP_OLD), 0);
	assert_int_equal(write(o.fd, "three\n", 6), 6);
	assert_int_equal(tc_outfile_commit(&o), 0);
	snprintf(old, sizeof(old), "%s.old", path);
	text = slurp(old);
	assert_string_equal(text, "one\n");
	free(text);
	text = slurp(path);
	assert_string_equal(text, "three\n");
	free(text);

	/* a link is refused, its target untouched */
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(tc_outfile_open(&o, link, 0), -ELOOP);
	assert_int_equal(o.fd, -1);
	text = slurp(path);
	assert_string_equal(text, "three\n");
	free(text);

	/* a link to a pipe, a terminal or /dev/null (as /dev/stdout) is written in place;
	 * a link to another device is refused like a link to a file */
	const char *null_link = th_tmp("null-link"), *full_link = th_tmp("full-link");
	assert_int_equal(symlink("/dev/null", null_link), 0);
	assert_int_equal(tc_outfile_open(&o, null_link, 0), 0);
	assert_null(o.tmp);
	assert_int_equal(tc_outfile_commit(&o), 0);
	assert_int_equal(lstat(null_link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(symlink("/dev/full", full_link), 0);
	assert_int_equal(tc_outfile_open(&o, full_link, 0), -ELOOP);

	/* a device in place; a write error shows at commit */
	assert_int_equal(tc_outfile_open(&o, "/dev/null", 0), 0);
	assert_null(o.tmp);
	fputs("x", tc_outfile_stream(&o));
	assert_int_equal(tc_outfile_commit(&o), 0);
	assert_int_equal(tc_outfile_open(&o, "/dev/full", 0), 0);
	fputs("x", tc_outfile_stream(&o));
	assert_int_equal(tc_outfile_commit(&o), -ENOSPC);

	/* a FIFO nobody reads, a directory */
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(tc_outfile_open(&o, fifo, 0), -ENXIO);
	assert_int_equal(tc_outfile_open(&o, th_tmpdir(), 0), -EISDIR);
}

/* The PATH lookup of the simulator's helpers, as execvp finds a program; the octal
 * escapes of the mount table. */
static void test_path_and_mounts(void **state)
{
	char *path = NULL, buf[64];
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	(void)state;

	assert_int_equal(setenv("PATH", "/nonexistent::/bin", 1), 0);
	assert_int_equal(tc_path_lookup("sh", &path), 0);
	assert_string_equal(path, "/bin/sh");
	free(path);
	assert_int_equal(tc_path_lookup("no-such-program-here", &path), -ENOENT);
	assert_int_equal(tc_path_lookup("/etc/passwd", &path), -EACCES);
	assert_int_equal(tc_path_lookup("/etc/passwd/x", &path), -ENOTDIR);
	assert_int_equal(tc_path_lookup("/bin/sh", &path), 0);
	assert_string_equal(path, "/bin/sh");
	free(path);
	if (saved) {
		setenv("PATH", saved, 1);
		free(saved);
	} else {
		unsetenv("PATH");
	}

	tc_unescape_octal("/a\\040b\\011c\\", 13, buf, sizeof(buf));
	assert_string_equal(buf, "/a b\tc\\");
	tc_unescape_octal("\\040\\040", 8, buf, 2);
	assert_string_equal(buf, " ");
	tc_unescape_octal("\\08", 3, buf, sizeof(buf));
	assert_string_equal(buf, "\\08");
}

/* Every variable the library reads goes through tc_env_trusted: as it is in a process
 * with its caller's privileges, unset in a secure one (forced here through the seam;
 * tests/e2e/test-faults.c runs a real setuid program), and the caller told that a value
 * was ignored. PATH's search falls back to the default there. */
static void test_env_trusted(void **state)
{
	bool ignored = true;
	char *found = NULL, *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

	assert_int_equal(setenv("TACHO_TEST_VAR", "/tmp/x", 1), 0);
	assert_false(tc_env_secure());   /* the suite does not run setuid */
	assert_string_equal(tc_env_trusted("TACHO_TEST_VAR", &ignored), "/tmp/x");
	assert_false(ignored);
	assert_null(tc_env_trusted("TACHO_TEST_UNSET", &ignored));
	assert_false(ignored);
	tc_env_force_secure(1);
	assert_true(tc_env_secure());
	assert_null(tc_env_trusted("TACHO_TEST_VAR", &ignored));
	assert_true(ignored);
	assert_null(tc_env_trusted("TACHO_TEST_UNSET", &ignored));
	assert_false(ignored);
	assert_null(tc_env_trusted("TACHO_TEST_VAR", NULL));
	/* a PATH of the caller's is not searched: only /usr/bin:/bin */
	assert_int_equal(setenv("PATH", th_tmpdir(), 1), 0);
	FILE *f = fopen(th_tmp("tacho-env-prog"), "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(th_tmp("tacho-env-prog"), 0755), 0);
	assert_int_equal(tc_path_lookup("tacho-env-prog", &found), -ENOENT);
	tc_env_force_secure(0);
	assert_int_equal(tc_path_lookup("tacho-env-prog", &found), 0);
	assert_string_equal(found, th_tmp("tacho-env-prog"));
	free(found);
	tc_env_force_secure(-1);
	if (path)
		assert_int_equal(setenv("PATH", path, 1), 0);
	free(path);
	assert_int_equal(unsetenv("TACHO_TEST_VAR"), 0);
}

/* The container a cgroup path names, as docker, containerd, CRI-O, podman and the
 * kubelet name their cgroups; and none where no component is an id. */
static void test_container_id(void **state)
{
	static const struct {
		const char *path, *id;
	} cases[] = {
		{ "/system.slice/docker-ID1.scope", "ID1" },
		{ "/docker/ID1", "ID1" },
		{ "/kubepods/burstable/pod5f6e7d8c-1a2b-4c3d-9e8f-0a1b2c3d4e5f/ID1", "ID1" },
		{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/"
		  "cri-containerd-ID1.scope", "ID1" },
		{ "/kubepods.slice/kubepods-pod1.slice/crio-ID2.scope", "ID2" },
		{ "/machine.slice/libpod-ID2.scope/container", "ID2" },
		{ "/docker/ID1/system.slice/docker-ID2.scope", "ID2" },
		{ "/system.slice/cron.service", NULL },
		{ "/", NULL },
		{ "", NULL },
		{ "/docker/ID1x", NULL },
		{ "/docker-ID1.scopes", NULL },
		{ "/user.slice/user-0.slice/session-1.scope", NULL },
	};
	char id[65];
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char path[512], want[65] = "";
		const char *p = cases[i].path;
		size_t n = 0;

		/* ID1 and ID2 stand for two ids of 64 hex digits */
		while (*p && n + 65 < sizeof(path)) {
			if (!strncmp(p, "ID1", 3) || !strncmp(p, "ID2", 3)) {
				memcpy(path + n, p[2] == '1' ? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" : "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210", 64);
				n += 64;
				p += 3;
			} else {
				path[n++] = *p++;
			}
		}
		path[n] = '\0';
		if (cases[i].id)
			memcpy(want, cases[i].id[2] == '1' ? "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" : "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210", 65);
		if (tc_cgroup_container_id(path, id) != (cases[i].id != NULL))
			fail_msg("%s: %s", path, cases[i].id ? "no id found" : "an id found");
		if (cases[i].id)
			assert_string_equal(id, want);
	}
}

/* tc_proc_cgroup of this process agrees with its /proc/self/cgroup's v2 line. */
static void test_proc_cgroup_self(void **state)
{
	char path[4096], *text = NULL;
	size_t len;
	int err;
	(void)state;

	err = tc_proc_cgroup(getpid(), path, sizeof(path));
	if (err == -ENOENT)
		TEST_SKIP("this machine has no cgroup v2 line in /proc/self/cgroup");
	assert_int_equal(err, 0);
	assert_int_equal(tc_read_file("/proc/self/cgroup", &text, &len, 1 << 16), 0);
	assert_non_null(strstr(text, path));
	assert_true(path[0] == '/');
	free(text);
	assert_int_equal(tc_proc_cgroup(-1, path, sizeof(path)), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror),   cmocka_unit_test(test_diag),
		cmocka_unit_test(test_err_names_are_not_errnos),
		cmocka_unit_test(test_diag_sized), cmocka_unit_test(test_opts),
		cmocka_unit_test(test_outfile),
		cmocka_unit_test(test_env_trusted),
		cmocka_unit_test(test_parse_u64),  cmocka_unit_test(test_parse_i64),
		cmocka_unit_test(test_fmt_size),   cmocka_unit_test(test_fmt_shortest),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_table),      cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_json_utf8), cmocka_unit_test(test_json_hold),
		cmocka_unit_test(test_json_numbers), cmocka_unit_test(test_printable),
		cmocka_unit_test(test_hex_digits), cmocka_unit_test(test_hex_encode),
		cmocka_unit_test(test_path_and_mounts),
		cmocka_unit_test(test_container_id), cmocka_unit_test(test_proc_cgroup_self),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
