/* test-diff-recordings.c - tacho diff of two recordings beyond the rows by symbol
 * (test-cmd-diff.c has those): each row's interval of the change of its share of
 * samples is exactly Newcombe's score interval of its sample counts (recomputed here
 * from the JSON's counts with the library's tc_two_prop_interval, to 1e-9), and a hot
 * function that moved from old_hot to new_hot is beyond noise; the keys line, comm and
 * dso,sym; and a binary rebuilt at the same path between two recordings (two builds of
 * tests/progs/diff-hot.c, cc -DREBUILT making different bytes and so a different
 * build-id) still lines up by name, each of its rows marked rebuilt, where two
 * recordings of one build mark none. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json-check.h"
#include "util/util.h"

/* Records tests/progs/diff-hot (or prog) in mode into file. */
static void record(const char *prog, const char *mode, const char *file)
{
	struct th_run r;

	th_tacho(&r, "record", "-q", "-e", "cpu-clock", "-o", file, "--", prog, mode, "200", NULL);
	if (r.status != 0) {
		if (strstr(r.err, "cannot sample"))
			TEST_SKIP("cpu-clock cannot be sampled here");
		fail_msg("record exited %d: %s", r.status, r.err);
	}
	th_run_free(&r);
}

/* `tacho diff --format json ARGS... before after`, parsed. */
static struct th_json *diff_json(const char *key, const char *conf, const char *a, const char *b)
{
	struct th_run r;
	struct th_json *j;

	if (conf)
		th_tacho(&r, "diff", "--format", "json", "--sort", key, "--confidence", conf, a, b,
			 NULL);
	else
		th_tacho(&r, "diff", "--format", "json", "--sort", key, a, b, NULL);
	if (r.status != 0)
		fail_msg("diff --sort %s exited %d: %s", key, r.status, r.err);
	j = assert_json(r.out);
	th_run_free(&r);
	return j;
}

/* Every row's interval is tc_two_prop_interval of its counts at confidence conf. */
static void check_intervals(const struct th_json *j, double conf)
{
	const struct th_json *rows = th_json_get(j, "rows");
	uint64_t nb = (uint64_t)json_num(j, "before_samples");
	uint64_t na = (uint64_t)json_num(j, "after_samples");

	assert_non_null(rows);
	assert_true(rows->n > 0);
	assert_true(fabs(json_num(j, "confidence") - conf * 100) < 1e-9);
	for (size_t i = 0; i < rows->n; i++) {
		const struct th_json *r = rows->items[i];
		struct tc_two_prop t;
		uint64_t xb = (uint64_t)json_num(r, "before_samples");
		uint64_t xa = (uint64_t)json_num(r, "after_samples");
		const struct th_json *beyond = th_json_get(r, "beyond_noise");

		assert_int_equal(tc_two_prop_interval(xb, nb, xa, na, conf, &t), 0);
		if (fabs(json_num(r, "interval_lo_pct") - 100 * t.lo) > 1e-9 ||
		    fabs(json_num(r, "interval_hi_pct") - 100 * t.hi) > 1e-9)
			fail_msg("row %zu (%s): [%g, %g], want [%g, %g]", i, json_str(r, "symbol"),
				 json_num(r, "interval_lo_pct"), json_num(r, "interval_hi_pct"),
				 100 * t.lo, 100 * t.hi);
		assert_non_null(beyond);
		assert_int_equal(beyond->boolean, t.lo > 0 || t.hi < 0);
	}
}

static void test_noise_intervals(void **state)
{
	struct th_json *j;
	const struct th_json *row;
	const char *a = th_tmp("old.rec"), *b = th_tmp("new.rec");
	(void)state;

	record(th_prog("diff-hot"), "old", a);
	record(th_prog("diff-hot"), "new", b);
	j = diff_json("symbol", NULL, a, b);
	check_intervals(j, 0.95);
	/* 200 ms in the one, then in the other: far beyond noise, each way */
	row = th_json_find(j, "rows", "symbol", "old_hot");
	assert_non_null(row);
	assert_true(th_json_get(row, "beyond_noise")->boolean);
	assert_true(json_num(row, "interval_hi_pct") < 0);
	row = th_json_find(j, "rows", "symbol", "new_hot");
	assert_non_null(row);
	assert_true(th_json_get(row, "beyond_noise")->boolean);
	assert_true(json_num(row, "interval_lo_pct") > 0);
	assert_false(th_json_get(row, "rebuilt")->boolean);
	th_json_free(j);
	/* another confidence: the intervals follow it */
	j = diff_json("symbol", "99", a, b);
	check_intervals(j, 0.99);
	th_json_free(j);

	/* by line: the two loops' lines, one vanished and one appeared */
	j = diff_json("line", NULL, a, b);
	check_intervals(j, 0.95);
	{
		/* each function's body: its loop's lines, a few below its first */
		int old_fn = th_source_line("tests/progs/diff-hot.c", "static void old_hot");
		int new_fn = th_source_line("tests/progs/diff-hot.c", "static void new_hot");
		bool seen_old = false, seen_new = false;
		const struct th_json *rows = th_json_get(j, "rows");

		for (size_t i = 0; i < rows->n; i++) {
			const struct th_json *r = rows->items[i];
			const struct th_json *file = th_json_get(r, "file");
			int line = (int)json_num(r, "line");
			if (!file || file->type != TH_JSON_STRING || !strstr(file->string, "diff-hot.c"))
				continue;
			if (line > old_fn && line < old_fn + 5) {
				seen_old = true;
				assert_string_equal(json_str(r, "status"), "vanished");
			}
			if (line > new_fn && line < new_fn + 5) {
				seen_new = true;
				assert_string_equal(json_str(r, "status"), "appeared");
			}
		}
		assert_true(seen_old && seen_new);
	}
	th_json_free(j);

	/* by comm: one program, every sample: 100 % on both sides, no change */
	j = diff_json("comm", NULL, a, b);
	check_intervals(j, 0.95);
	row = th_json_find(j, "rows", "comm", "diff-hot");
	assert_non_null(row);
	assert_true(json_num(row, "before_pct") == 100.0 && json_num(row, "after_pct") == 100.0);
	assert_false(th_json_get(row, "beyond_noise")->boolean);
	th_json_free(j);

	/* dso,sym: the same rows as by symbol */
	j = diff_json("dso,sym", NULL, a, b);
	assert_non_null(th_json_find(j, "rows", "symbol", "old_hot"));
	assert_non_null(th_json_find(j, "rows", "symbol", "new_hot"));
	th_json_free(j);
}

/* Compiles tests/progs/diff-hot.c into path (with -DREBUILT when rebuilt). */
static void build_hot(const char *path, bool rebuilt)
{
	char src[4096];
	char *argv[] = { (char *)"cc", (char *)"-O1", (char *)"-g", (char *)"-static",
			 (char *)(rebuilt ? "-DREBUILT=1" : "-DFIRST=1"), (char *)"-o",
			 (char *)path, src, NULL };

	snprintf(src, sizeof(src), "%s", th_path("tests/progs/diff-hot.c"));
	th_run_ok(argv);
}

static void test_rebuilt(void **state)
{
	const char *exe = th_tmp("hot");
	char a[4096], b[4096], c[4096];
	struct th_json *j;
	const struct th_json *rows, *row;
	struct th_run r;
	(void)state;

	snprintf(a, sizeof(a), "%s", th_tmp("first.rec"));
	snprintf(b, sizeof(b), "%s", th_tmp("again.rec"));
	snprintf(c, sizeof(c), "%s", th_tmp("rebuilt.rec"));
	build_hot(exe, false);
	record(exe, "old", a);
	record(exe, "old", b);
	build_hot(exe, true);   /* the same path, another build-id */
	record(exe, "old", c);

	/* one build twice: nothing rebuilt */
	j = diff_json("symbol", NULL, a, b);
	rows = th_json_get(j, "rows");
	for (size_t i = 0; i < rows->n; i++)
		assert_false(th_json_get(rows->items[i], "rebuilt")->boolean);
	th_json_free(j);

	/* rebuilt: old_hot still one row of both recordings, marked; the kernel's not */
	j = diff_json("symbol", NULL, a, c);
	row = th_json_find(j, "rows", "symbol", "old_hot");
	assert_non_null(row);
	assert_string_equal(json_str(row, "status"), "both");
	assert_string_equal(json_str(row, "dso"), "hot");
	assert_true(th_json_get(row, "rebuilt")->boolean);
	rows = th_json_get(j, "rows");
	for (size_t i = 0; i < rows->n; i++) {
		const struct th_json *x = rows->items[i];
		bool is_hot = !strcmp(json_str(x, "dso"), "hot");
		if (!strcmp(json_str(x, "status"), "both"))
			assert_int_equal(th_json_get(x, "rebuilt")->boolean, is_hot);
	}
	th_json_free(j);

	/* the table says it once, in a note line, and on the row */
	th_tacho(&r, "diff", a, c, NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "# hot was rebuilt (its build-id differs): its rows are matched "
			       "by name\n");
	assert_contains(r.out, "rebuilt\n");
	th_run_free(&r);
	th_tacho(&r, "diff", a, b, NULL);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "rebuilt"));
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_noise_intervals),
		cmocka_unit_test(test_rebuilt),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
