/* test-examples.c - the example programs, run as a user would run them: the array walk
 * (page faults counted exactly inside its regions, alone and under `tacho stat`) and the
 * word count (the same counts as wc(1), and a cost per byte). */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "tacho.h"

static char json[256], bin_walk[512], bin_wc[512];

static char *slurp(const char *path)
{
	char *buf = NULL;
	size_t len;

	return th_read_data(path, &buf, &len) ? NULL : buf;
}

static void set_env(const char *events, const char *output)
{
	if (events)
		setenv("TACHO_EVENTS", events, 1);
	else
		unsetenv("TACHO_EVENTS");
	if (output)
		setenv("TACHO_OUTPUT", output, 1);
	else
		unsetenv("TACHO_OUTPUT");
}

/* 1,000,000 ints are 4,000,000 bytes: 977 pages of 4 KiB. The whole document must be
 * valid JSON (no duplicate keys), in the summary and in the detail alike. */
static void check_walk_json(const char *doc)
{
	struct th_json *j = assert_json(doc);
	long psz = sysconf(_SC_PAGESIZE);
	const struct th_json *pre = assert_json_named(j, "regions", "pretouch");
	const struct th_json *walk = assert_json_named(j, "regions", "walk");

	assert_json_int(j, "version", 1);
	assert_json_int(pre, "calls", 1);
	assert_json_int(pre, "events.page-faults", (4000000 + psz - 1) / psz);
	assert_json_int(walk, "calls", 1);
	assert_json_int(walk, "events.page-faults", 0);
	th_json_free(j);
}

static void test_array_walk_default(void **state)
{
	struct th_run r;
	char *argv[] = { bin_walk, (char *)"1000000", NULL };
	(void)state;

	set_env(NULL, NULL);
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "array-walk: 1000000 ints");
	assert_contains(r.out, "walk");
	/* the report at exit, on stderr */
	assert_contains(r.err, "tacho regions");
	assert_contains(r.err, "pretouch");
	th_run_free(&r);
}

static void test_array_walk_exact(void **state)
{
	struct th_run r;
	char *argv[] = { bin_walk, (char *)"1000000", NULL };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	set_env("page-faults", json);
	unlink(json);
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	char *doc = slurp(json);
	assert_non_null(doc);
	check_walk_json(doc);
	assert_string_equal(r.err, "");
	free(doc);
	th_run_free(&r);
	unlink(json);
}

/* Under tacho stat, which counts the whole program with its own (inherited) counters:
 * the regions' counts stay exact. */
static void test_array_walk_under_stat(void **state)
{
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	set_env("page-faults", json);
	unlink(json);
	th_tacho(&r, "stat", "-e", "page-faults", "--", bin_walk, "1000000", NULL);
	if (r.status != 0)
		fail_msg("tacho stat failed (%d):\n%s", r.status, r.err);
	assert_contains(r.err, "page-faults");
	char *doc = slurp(json);
	assert_non_null(doc);
	check_walk_json(doc);
	free(doc);
	th_run_free(&r);
	unlink(json);
}

static void test_array_walk_usage(void **state)
{
	struct th_run r;
	char *argv[] = { bin_walk, (char *)"lots", NULL };
	(void)state;

	set_env(NULL, NULL);
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "usage: array-walk");
	th_run_free(&r);
}

/* TACHO_OUTPUT=none: the program runs and measures, and nothing is written, anywhere
 * (no file called "none" either). */
static void test_output_none(void **state)
{
	struct th_run r;
	char *argv[] = { bin_walk, (char *)"100000", NULL };
	char dir[] = "/tmp/tacho-test-none-XXXXXX", none[300];
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	assert_non_null(mkdtemp(dir));
	snprintf(none, sizeof(none), "%s/none", dir);
	set_env("page-faults", "none");
	th_runv(&r, NULL, argv);   /* the test's folder is the cwd: check there and in dir */
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "array-walk: 100000 ints");
	assert_string_equal(r.err, "");
	assert_int_equal(access("none", F_OK), -1);
	th_run_free(&r);
	rmdir(dir);
}

/* The table groups thousands like stat, and says the clocks' unit. */
static void test_table_units(void **state)
{
	struct th_run r;
	char *argv[] = { bin_walk, (char *)"3000000", NULL };
	long psz = sysconf(_SC_PAGESIZE);
	char want[64], grouped[32];
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	set_env("page-faults,task-clock", NULL);
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "page-faults");
	assert_contains(r.err, "task-clock ns");
	long pages = (12000000 + psz - 1) / psz;   /* 2,930 of 4 KiB */
	if (pages >= 1000)
		snprintf(grouped, sizeof(grouped), "%ld,%03ld", pages / 1000, pages % 1000);
	else
		snprintf(grouped, sizeof(grouped), "%ld", pages);
	snprintf(want, sizeof(want), " %s", grouped);
	assert_contains(r.err, want);
	th_run_free(&r);
}

/* -DTACHO_DISABLE: the regions and marks compile to no-ops and the program links no
 * libtacho (the Makefile builds it without one; no tacho symbol is undefined or
 * defined outside the inline stand-ins), and it writes no report. */
static void test_compiled_out(void **state)
{
	struct th_run r, n;
	char bin[512];
	(void)state;

	snprintf(bin, sizeof(bin), "%s/tests/progs/off-regions", th_build_dir());
	set_env("page-faults", json);
	unlink(json);
	char *argv[] = { bin, NULL };
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "init=0 begin=0 end=0 sum=45 mark=0 traced=0 report=-38 null=1");
	assert_contains(r.out, "find=1 nevents=0 event=1 status=1 why=regions are compiled out");
	assert_string_equal(r.err, "");
	assert_int_equal(access(json, F_OK), -1);
	char *nm[] = { (char *)"nm", bin, NULL };
	th_runv(&n, NULL, nm);
	assert_int_equal(n.status, 0);
	for (char *p = strstr(n.out, " tacho"); p; p = strstr(p + 1, " tacho"))
		if (strncmp(p, " tacho_off_", 11))
			fail_msg("off-regions refers to libtacho: %.60s", p);
	assert_contains(n.out, " t tacho_off_region_");   /* the stand-in, local */
	th_run_free(&r);
	th_run_free(&n);
}

static void test_wc_matches_coreutils(void **state)
{
	struct th_run r, w, c;
	char path[256];
	(void)state;

	set_env(NULL, "/dev/null");
	char *gen[] = { bin_wc, (char *)"--generate", (char *)"200000", (char *)"--emit", NULL };
	th_runv(&r, NULL, gen);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.out_len, 200000);
	snprintf(path, sizeof(path), "/tmp/tacho-test-wc-%d.txt", (int)getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(r.out, 1, r.out_len, f), r.out_len);
	fclose(f);

	char *core[] = { (char *)"wc", path, NULL };
	th_runv(&w, NULL, core);
	assert_int_equal(w.status, 0);
	unsigned long l1, w1, b1, l2, w2, b2;
	assert_int_equal(sscanf(w.out, "%lu %lu %lu", &l1, &w1, &b1), 3);

	char *ours[] = { bin_wc, path, NULL };
	th_runv(&c, NULL, ours);
	assert_int_equal(c.status, 0);
	assert_int_equal(sscanf(c.out, "%lu %lu %lu", &l2, &w2, &b2), 3);
	assert_int_equal(l1, l2);
	assert_int_equal(w1, w2);
	assert_int_equal(b1, b2);
	assert_int_equal(b2, 200000);
	assert_contains(c.out, "TSC ticks per byte");
	assert_contains(c.out, "core cycles per byte");

	/* stdin gives the same counts */
	char *stdin_argv[] = { bin_wc, NULL };
	struct th_run s;
	th_runv(&s, r.out, stdin_argv);
	assert_int_equal(s.status, 0);
	unsigned long l3, w3, b3;
	assert_int_equal(sscanf(s.out, "%lu %lu %lu", &l3, &w3, &b3), 3);
	assert_true(l3 == l1 && w3 == w1 && b3 == b1);
	th_run_free(&s);

	unlink(path);
	th_run_free(&r);
	th_run_free(&w);
	th_run_free(&c);
}

int main(void)
{
	snprintf(json, sizeof(json), "/tmp/tacho-test-examples-%d.json", (int)getpid());
	snprintf(bin_walk, sizeof(bin_walk), "%s/examples/array-walk", th_build_dir());
	snprintf(bin_wc, sizeof(bin_wc), "%s/examples/wc", th_build_dir());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_array_walk_default),
		cmocka_unit_test(test_array_walk_exact),
		cmocka_unit_test(test_array_walk_under_stat),
		cmocka_unit_test(test_array_walk_usage),
		cmocka_unit_test(test_output_none),
		cmocka_unit_test(test_table_units),
		cmocka_unit_test(test_compiled_out),
		cmocka_unit_test(test_wc_matches_coreutils),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
