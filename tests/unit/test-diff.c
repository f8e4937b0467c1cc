/* test-diff.c - the comparison of two stat documents (lib/diff): exact changes where
 * the runs agree, Welch's interval on known samples, unknown verdicts and why, limits,
 * and every kind of bad document refused with its file and line. Documents are built
 * inline; each case of a table names its line on failure. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tacho/diff.h"
#include "util/util.h"

/* A stat document of one or two events, each "NAME;UNIT;STATUS;V1,V2,..." (UNIT "_" for
 * none, a run "-" for null; VALUES "=X" for a single "value" X and no list). */
static char *doc(const char *ev1, const char *ev2)
{
	static char bufs[4][2048];
	static int next;
	char *b = bufs[next++ % 4];
	const char *evs[2] = { ev1, ev2 };
	size_t o = (size_t)snprintf(b, 2048, "{\"version\": 1, \"runs\": 3, \"events\": [");

	for (int i = 0; i < 2 && evs[i]; i++) {
		char name[64], unit[16], status[32], vals[256], list[512] = "";
		size_t lo = 0;

		sscanf(evs[i], "%63[^;];%15[^;];%31[^;];%255s", name, unit, status, vals);
		if (!strcmp(unit, "_"))
			unit[0] = '\0';
		if (vals[0] == '=') {
			o += (size_t)snprintf(b + o, 2048 - o, "%s{\"name\": \"%s\", \"unit\": \"%s\", "
					      "\"status\": \"%s\", \"value\": %s}", i ? ", " : "",
					      name, unit, status, vals + 1);
			continue;
		}
		for (char *t = strtok(vals, ","); t; t = strtok(NULL, ","))
			lo += (size_t)snprintf(list + lo, sizeof(list) - lo, "%s%s", lo ? ", " : "",
					       !strcmp(t, "-") ? "null" : t);
		o += (size_t)snprintf(b + o, 2048 - o, "%s{\"name\": \"%s\", \"unit\": \"%s\", "
				      "\"status\": \"%s\", \"values\": [%s]}", i ? ", " : "", name,
				      unit, status, list);
	}
	snprintf(b + o, 2048 - o, "]}");
	return b;
}

static struct tacho_diff *compare_ok(const char *a, const char *b, double confidence)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_diff_opts o = { .sz = sizeof(o), .confidence = confidence };
	struct tacho_diff *diff;

	if (tacho_diff_stat(a, strlen(a), "a", b, strlen(b), "b", &o, &diff, &d))
		fail_msg("%s:%u:%u: %s\n%s\n%s", d.source, d.line, d.column, d.message, a, b);
	return diff;
}

static struct tacho_diff_row row_of(const struct tacho_diff *diff, size_t i)
{
	struct tacho_diff_row r = { .sz = sizeof(r) };

	assert_int_equal(tacho_diff_row(diff, i, &r), 0);
	return r;
}

#define NEAR(a, b) (fabs((a) - (double)(b)) <= 1e-9 * (1.0 + fabs((double)(b))))

static void test_exact(void **state)
{
	struct tacho_diff *diff;
	struct tacho_diff_row r;
	(void)state;

	/* 5 writes against 12, on every run: +7 exactly, however few the runs */
	diff = compare_ok(doc("w;_;counted;5,5,5", NULL), doc("w;_;counted;12,12", NULL), 0);
	r = row_of(diff, 0);
	assert_true(r.exact && r.verdict == TACHO_DIFF_CHANGED);
	assert_true(r.change == 7 && r.lo == 7 && r.hi == 7 && isnan(r.df));
	assert_true(r.n_before == 3 && r.n_after == 2);
	assert_true(NEAR(r.change_pct, 140));
	assert_null(r.note);
	tacho_diff_free(diff);
	/* the same on both sides: no change, exactly */
	diff = compare_ok(doc("w;_;counted;5,5,5", NULL), doc("w;_;counted;5,5,5", NULL), 0);
	r = row_of(diff, 0);
	assert_true(r.exact && r.verdict == TACHO_DIFF_NO_CHANGE && r.change == 0 &&
		    r.change_pct == 0);
	tacho_diff_free(diff);
	/* simulated values are exact from one run; growth from 0 is an infinite percentage */
	diff = compare_ok(doc("i;_;simulated;=0", NULL), doc("i;_;simulated;=40", NULL), 0);
	r = row_of(diff, 0);
	assert_true(r.exact && r.verdict == TACHO_DIFF_CHANGED && r.change == 40);
	assert_true(isinf(r.change_pct) && r.change_pct > 0);
	assert_int_equal(tacho_diff_set_limit(diff, NULL, 1e9), 0);
	assert_int_equal(tacho_diff_exceeded(diff), 1);
	tacho_diff_free(diff);
}

static void test_welch(void **state)
{
	struct tacho_diff *diff;
	struct tacho_diff_row r;
	(void)state;

	/* variances 2/3 and 2/3, n 4: se = sqrt(1/3), df = 6, t(0.975; 6) = 2.44691185114497 */
	diff = compare_ok(doc("c;msec;counted;100,101,99,100", NULL),
			  doc("c;msec;counted;200,201,199,200", NULL), 0);
	r = row_of(diff, 0);
	assert_false(r.exact);
	assert_int_equal(r.verdict, TACHO_DIFF_CHANGED);
	assert_string_equal(r.unit, "msec");
	assert_true(NEAR(r.df, 6));
	assert_true(NEAR(r.lo, 100 - 2.44691185114497 * sqrt(1.0 / 3.0)));
	assert_true(NEAR(r.hi, 100 + 2.44691185114497 * sqrt(1.0 / 3.0)));
	assert_true(NEAR(r.lo_pct, r.lo) && NEAR(r.hi_pct, r.hi));   /* before is 100 */
	tacho_diff_free(diff);
	/* 1,2,3 against 2,2,3: the interval holds 0 */
	diff = compare_ok(doc("c;_;counted;1,2,3", NULL), doc("c;_;counted;2,2,3", NULL), 0);
	r = row_of(diff, 0);
	assert_int_equal(r.verdict, TACHO_DIFF_NO_CHANGE);
	assert_true(r.lo < 0 && r.hi > 0);
	assert_int_equal(tacho_diff_set_limit(diff, NULL, 0), 0);
	assert_int_equal(tacho_diff_exceeded(diff), 0);   /* noise never fails the gate */
	tacho_diff_free(diff);
	/* a null run is left out: n says so */
	diff = compare_ok(doc("c;_;counted;1,-,3", NULL), doc("c;_;counted;2,2,-", NULL), 0);
	r = row_of(diff, 0);
	assert_true(r.n_before == 2 && r.n_after == 2 && r.exact == false);
	tacho_diff_free(diff);
	/* the confidence widens the interval: at 50 % t(0.75; 6) = 0.717558196 */
	diff = compare_ok(doc("c;_;counted;100,101,99,100", NULL),
			  doc("c;_;counted;200,201,199,200", NULL), 0.5);
	r = row_of(diff, 0);
	assert_true(NEAR(r.hi - r.change, 0.717558196 * sqrt(1.0 / 3.0)));
	tacho_diff_free(diff);
}

static void test_unknown(void **state)
{
	struct tacho_diff *diff;
	struct tacho_diff_row r;
	(void)state;

	diff = compare_ok(doc("a;_;counted;=5", "b;_;not counted;-,-"),
			  doc("a;_;counted;=6", "b;_;counted;1,1"), 0);
	r = row_of(diff, 0);
	assert_int_equal(r.verdict, TACHO_DIFF_UNKNOWN);
	assert_true(r.change == 1 && isnan(r.lo) && !r.exact);
	assert_non_null(strstr(r.note, "single run"));
	r = row_of(diff, 1);
	assert_int_equal(r.verdict, TACHO_DIFF_UNKNOWN);
	assert_string_equal(r.note, "no value before");
	assert_true(isnan(r.before));
	assert_int_equal(tacho_diff_set_limit(diff, NULL, -100), 0);
	assert_int_equal(tacho_diff_exceeded(diff), 0);
	tacho_diff_free(diff);
}

static void test_limits(void **state)
{
	struct tacho_diff *diff;
	(void)state;

	/* a +10 % and a -10 % change, both exact */
	diff = compare_ok(doc("up;_;counted;100,100", "down;_;counted;100,100"),
			  doc("down;_;counted;90,90", "up;_;counted;110,110"), 0);
	assert_int_equal(tacho_diff_exceeded(diff), 0);   /* no limit yet */
	assert_int_equal(tacho_diff_set_limit(diff, NULL, 10), 0);
	assert_int_equal(tacho_diff_exceeded(diff), 0);   /* above, not at */
	assert_int_equal(tacho_diff_set_limit(diff, NULL, 9.99), 0);
	assert_int_equal(tacho_diff_exceeded(diff), 1);
	assert_true(row_of(diff, 0).exceeds && !row_of(diff, 1).exceeds);
	assert_int_equal(tacho_diff_set_limit(diff, "up", 50), 0);   /* its own wins */
	assert_int_equal(tacho_diff_exceeded(diff), 0);
	assert_true(row_of(diff, 0).limit_pct == 50 && NEAR(row_of(diff, 1).limit_pct, 9.99));
	assert_int_equal(tacho_diff_set_limit(diff, "down", -20), 0);   /* fell only 10 % */
	assert_int_equal(tacho_diff_exceeded(diff), 1);
	assert_int_equal(tacho_diff_set_limit(diff, "nope", 1), -TACHO_ENOEVENT);
	assert_int_equal(tacho_diff_set_limit(diff, NULL, NAN), -EINVAL);
	tacho_diff_free(diff);
}

/* Totals are compared where a breakdown wrote them. */
static void test_totals(void **state)
{
	static const char a[] = "{\"version\": 1, \"aggregation\": \"cpu\", \"events\": "
		"[{\"name\": \"x\", \"cpu\": 0, \"values\": [1, 1]}, {\"name\": \"x\", \"cpu\": 1, "
		"\"values\": [2, 2]}], \"totals\": [{\"name\": \"x\", \"values\": [3, 3]}]}";
	static const char b[] = "{\"version\": 1, \"events\": [{\"name\": \"x\", \"values\": [4, 4]}]}";
	struct tacho_diff *diff = compare_ok(a, b, 0);
	(void)state;

	assert_int_equal(tacho_diff_count(diff), 1);
	assert_true(row_of(diff, 0).change == 1);
	tacho_diff_free(diff);
}

static void test_bad_documents(void **state)
{
	static const struct {
		int line;
		const char *a, *b;
		int err;
		const char *source;
		unsigned at_line;
		const char *message;
	} c[] = {
		{ __LINE__, "[]", "{}", -TACHO_EPARSE, "a", 1, "not a stat document: not a JSON object" },
		{ __LINE__, "{\"version\": 1}", "{}", -TACHO_EPARSE, "a", 1,
		  "not a stat document: no \"events\" array (is it stat's --json?)" },
		{ __LINE__, "{\"version\": 1, \"regions\": []}", "{}", -TACHO_EPARSE, "a", 1,
		  "not a stat document: no \"events\" array (is it stat's --json?)" },
		{ __LINE__, "{\"events\": []}", "{}", -TACHO_EPARSE, "a", 1,
		  "not a stat document: no \"version\"" },
		{ __LINE__, "{\"version\": 2, \"events\": []}", "{}", -TACHO_EVERSION, "a", 1,
		  "a stat document of version 2 (this tacho reads version 1)" },
		{ __LINE__, "{\"version\": 1, \"events\": []}", "{}", -TACHO_EPARSE, "a", 1,
		  "not a stat document: no events" },
		{ __LINE__, "{\"version\": 1, \"events\": [{\"value\": 1}]}", "{}", -TACHO_EPARSE, "a",
		  1, "not a stat document: an event without a \"name\" string" },
		{ __LINE__, "{\"version\": 1, \"events\": [{\"name\": \"x\"}]}", "{}", -TACHO_EPARSE,
		  "a", 1, "not a stat document: an event without a \"value\"" },
		{ __LINE__, "{\"version\": 1, \"events\": [{\"name\": \"x\", \"values\": [\"1\"]}]}",
		  "{}", -TACHO_EPARSE, "a", 1,
		  "not a stat document: a run's value is neither a number nor null" },
		{ __LINE__, "{\"version\": 1, \"events\": [{\"name\": \"x\", \"value\": 1}]}",
		  "{\"version\": 1,\n\"events\": [{\"name\": \"y\", \"value\": 1}]}", -TACHO_ENOEVENT,
		  "a", 1, "event 'x' is not in b (compare documents of the same events)" },
		{ __LINE__, "{\"version\": 1, \"events\": [{\"name\": \"x\", \"value\": 1}]}",
		  "{\"version\": 1, \"events\": [{\"name\": \"x\", \"value\": 1},\n{\"name\": \"y\", "
		  "\"value\": 1}]}", -TACHO_ENOEVENT, "b", 2,
		  "event 'y' is not in a (compare documents of the same events)" },
		{ __LINE__, "{\"version\": 1, \"events\": [{\"name\": \"x\", \"unit\": \"msec\", "
		  "\"value\": 1}]}", "{\"version\": 1, \"events\": [{\"name\": \"x\", \"value\": 1}]}",
		  -TACHO_ENOEVENT, "b", 1, "'x' is in '' here and in 'msec' in a" },
		{ __LINE__, "{\"version\": 1, \"events\": [{\"name\": \"x\", \"value\": 1}]}", "{",
		  -TACHO_EPARSE, "b", 1, "expected a member's name in quotes" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		struct tacho_diff *diff = (struct tacho_diff *)&d;
		int err = tacho_diff_stat(c[i].a, strlen(c[i].a), "a", c[i].b, strlen(c[i].b), "b",
					  NULL, &diff, &d);

		if (err != c[i].err || diff || strcmp(d.source, c[i].source) ||
		    d.line != c[i].at_line || strcmp(d.message, c[i].message))
			fail_msg("line %d: %d %s:%u '%s', want %d %s:%u '%s'", c[i].line, err, d.source,
				 d.line, d.message, c[i].err, c[i].source, c[i].at_line, c[i].message);
	}
}

static void test_bad_calls(void **state)
{
	static const char a[] = "{\"version\": 1, \"events\": [{\"name\": \"x\", \"value\": 1}]}";
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_diff_opts o = { .sz = sizeof(o), .confidence = 1.5 };
	struct tacho_diff_row r = { .sz = 8 };
	struct tacho_diff *diff;
	(void)state;

	assert_int_equal(tacho_diff_stat(a, strlen(a), "a", a, strlen(a), "b", &o, &diff, &d),
			 -EINVAL);
	o.sz = 0;
	assert_int_equal(tacho_diff_stat(a, strlen(a), "a", a, strlen(a), "b", &o, &diff, &d),
			 -EINVAL);
	assert_int_equal(tacho_diff_stat(NULL, 0, "a", a, strlen(a), "b", NULL, &diff, &d), -EINVAL);
	assert_int_equal(tacho_diff_stat_files("/nonexistent/a", "/nonexistent/b", NULL, &diff, &d),
			 -ENOENT);
	assert_string_equal(d.source, "/nonexistent/a");
	diff = compare_ok(a, a, 0);
	assert_int_equal(tacho_diff_row(diff, 0, &r), -EINVAL);   /* sz too small */
	r.sz = sizeof(r);
	assert_int_equal(tacho_diff_row(diff, 1, &r), -EINVAL);
	assert_int_equal(tacho_diff_write(diff, stdout, TACHO_FORMAT_COUNT, NULL), -EINVAL);
	tacho_diff_free(diff);
	tacho_diff_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_bad_documents),
		cmocka_unit_test(test_bad_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
