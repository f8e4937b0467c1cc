/* test-report-linecache.c - by-line reports (report --sort line) are the same bytes
 * without the line cache (a cache folder that cannot be made: libdw answers), cold (the
 * cache built and written by that report) and warm (answered from the cache), on
 * tests/progs/inline-hot (built with DWARF) and on python3 where its library has line
 * tables (pyenv's build does; Debian's needs libpython3-dbg, skipped otherwise). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* Records argv (after "--") into rec with cpu-clock; false when sampling is refused. */
static bool record(const char *rec, const char *const *argv)
{
	const char *args[32] = { th_tacho_bin(), "record", "-q", "-e", "cpu-clock", "-o", rec,
				 "--" };
	size_t n = 8;
	struct th_run r;

	for (size_t i = 0; argv[i] && n < 31; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	th_runv(&r, NULL, (char *const *)args);
	if (r.status != 0) {
		bool refused = strstr(r.err, "cannot sample") != NULL;
		th_run_free(&r);
		if (refused)
			return false;
		fail_msg("record failed (%d)", r.status);
	}
	th_run_free(&r);
	return true;
}

/* report --sort line of rec with XDG_CACHE_HOME at cache: its output (the caller
 * frees). */
static char *report(const char *rec, const char *cache)
{
	struct th_run r;
	char *out;

	assert_int_equal(setenv("XDG_CACHE_HOME", cache, 1), 0);
	th_tacho(&r, "report", "-i", rec, "--sort", "line", NULL);
	if (r.status != 0)
		fail_msg("report failed (%d): %s", r.status, r.err);
	out = strdup(r.out);
	th_run_free(&r);
	return out;
}

/* The number of line caches under the cache folder dir. */
static int caches(const char *dir)
{
	char cmd[4200];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "find '%s/tacho/.build-id' -name lines -type f 2>/dev/null | wc -l", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fscanf(p, "%d", &n) != 1)
		n = -1;
	pclose(p);
	return n;
}

/* The three reports of rec, compared byte for byte; the output (the caller frees). */
static char *same_three(const char *rec, const char *name)
{
	char cache[4096];
	char *none, *cold, *warm;

	snprintf(cache, sizeof(cache), "%s", th_tmp(name));
	assert_int_equal(mkdir(cache, 0700), 0);
	none = report(rec, "/proc/no-such-folder");
	assert_int_equal(caches(cache), 0);
	cold = report(rec, cache);
	assert_true(caches(cache) >= 1);
	warm = report(rec, cache);
	assert_string_equal(cold, none);
	assert_string_equal(warm, none);
	free(cold);
	free(warm);
	return none;
}

static void test_inline_hot(void **state)
{
	const char *argv[] = { th_prog("inline-hot"), "200", NULL };
	const char *rec = th_tmp("ih.tacho");
	char *out;
	(void)state;

	if (!record(rec, argv))
		TEST_SKIP("cpu-clock cannot be sampled here");
	out = same_three(rec, "cache-ih");
	/* the lines are there to compare: the hot loop's file */
	assert_contains(out, "inline-hot.c:");
	free(out);
}

static void test_python3(void **state)
{
	const char *argv[] = { "python3", "-c",
			       "s=0\nfor i in range(1000000): s+=len(str(i))\n", NULL };
	const char *rec = th_tmp("py.tacho");
	char *out;
	(void)state;

	if (access("/usr/bin/python3", X_OK) != 0 && system("command -v python3 >/dev/null"))
		TEST_SKIP("python3 is not installed");
	if (!record(rec, argv))
		TEST_SKIP("cpu-clock cannot be sampled here");
	out = same_three(rec, "cache-py");
	/* CPython's own sources, where its library has line tables */
	if (!strstr(out, "Objects/") && !strstr(out, "Python/")) {
		free(out);
		TEST_SKIP("python3's library has no line tables here (libpython3-dbg)");
	}
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_hot),
		cmocka_unit_test(test_python3),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
