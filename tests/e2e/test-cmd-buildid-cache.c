/* test-cmd-buildid-cache.c - the build-id cache end to end: record copies the program it
 * ran (and its libraries) into $XDG_CACHE_HOME/tacho; after a rebuild with a change the
 * report still names the program's function from the copy (and annotate shows the
 * copy's instructions), and does not without it (--no-buildid-cache, or the copy
 * removed); tacho buildid-cache lists, removes, purges and prunes, and refuses bad
 * usage. The program is compiled by the test. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

static void build(bool changed)
{
	char src[4096], exe[4096];
	char *argv[] = { (char *)"cc", (char *)"-O1", (char *)"-g", (char *)"-o", exe, src,
			 changed ? (char *)"-DCHANGED" : NULL, NULL };
	struct th_run r;

	snprintf(src, sizeof(src), "%s", th_path("tests/data/buildid/hot.c"));
	snprintf(exe, sizeof(exe), "%s", th_tmp("hot"));
	unlink(exe);   /* a new file, as a rebuild makes */
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
}

static void record(const char *file, bool cache)
{
	struct th_run r;
	char exe[4096];
	char *argv[10];
	int n = 0;

	snprintf(exe, sizeof(exe), "%s", th_tmp("hot"));
	argv[n++] = (char *)th_tacho_bin();
	argv[n++] = (char *)"record";
	argv[n++] = (char *)"-e";
	argv[n++] = (char *)"cpu-clock";
	argv[n++] = (char *)"-o";
	argv[n++] = (char *)file;
	if (!cache)
		argv[n++] = (char *)"--no-buildid-cache";
	argv[n++] = (char *)"--";
	argv[n++] = exe;
	argv[n] = NULL;
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	if (!cache)
		assert_not_contains(r.err, "build-id cache");
	th_run_free(&r);
}

/* The report's table of file: true when hotfn has a row. */
static bool names_hotfn(const char *file, char *err, size_t errlen)
{
	struct th_run r;
	bool named;

	th_tacho(&r, "report", "-i", file, NULL);
	assert_int_equal(r.status, 0);
	named = strstr(r.out, "hotfn") != NULL;
	snprintf(err, errlen, "%s", r.err);
	th_run_free(&r);
	return named;
}

static int setup(void **state)
{
	int err = th_tmpdir_setup(state);

	/* the cache goes into the test's folder, not the user's */
	if (!err)
		err = setenv("XDG_CACHE_HOME", th_tmpdir(), 1);
	return err;
}

static void test_rebuilt_program_named(void **state)
{
	char err[4096];
	struct th_run r;
	struct th_json *j;
	const struct th_json *e;
	char *before;

	build(false);
	record(th_tmp("a.rec"), true);
	/* the cache holds the program under its path */
	th_tacho(&r, "buildid-cache", "--json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	e = th_json_find(j, "entries", "path", th_tmp("hot"));
	assert_non_null(e);
	th_json_free(j);
	th_run_free(&r);
	/* a recording without the cache; hotfn's instructions before the rebuild */
	record(th_tmp("b.rec"), false);
	th_tacho(&r, "report", "-i", th_tmp("a.rec"), "--annotate", "hotfn", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\"mnemonic\"");
	before = strdup(r.out);
	assert_non_null(before);
	th_run_free(&r);
	build(true);
	assert_true(names_hotfn(th_tmp("a.rec"), err, sizeof(err)));
	assert_not_contains(err, "changed since the recording");
	/* annotate disassembles the copy, not the rebuilt file (whose hotfn differs) */
	th_tacho(&r, "report", "-i", th_tmp("a.rec"), "--annotate", "hotfn", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, before);
	free(before);
	th_run_free(&r);
	/* the control: the same program recorded but not cached is not named... */
	th_tacho(&r, "buildid-cache", "--remove", th_tmp("hot"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "removed 1 entry");
	th_run_free(&r);
	assert_false(names_hotfn(th_tmp("b.rec"), err, sizeof(err)));
	assert_contains(err, "changed since the recording (build-id differs) and no copy is in "
			"the build-id cache");
	/* ...nor, now, the first one */
	assert_false(names_hotfn(th_tmp("a.rec"), err, sizeof(err)));
}

static void test_list_prune_purge(void **state)
{
	struct th_run r;

	build(false);
	record(th_tmp("c.rec"), true);
	th_tacho(&r, "buildid-cache", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "binaries, ");
	assert_contains(r.out, th_tmp("hot"));
	th_run_free(&r);
	/* the next recording finds its binaries there and copies nothing */
	record(th_tmp("d.rec"), true);
	th_tacho(&r, "buildid-cache", "--max-size", "1G", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "removed 0 entries (0 B)");
	th_run_free(&r);
	/* a copy of the kernel's symbols, as report keeps one: --max-size leaves it... */
	{
		char k[4096];
		FILE *f;

		snprintf(k, sizeof(k), "%s/tacho/kallsyms-0f0f7a8a-276c-49bd-ad67-b153ef2b3935",
			 th_tmpdir());
		f = fopen(k, "w");
		assert_non_null(f);
		fclose(f);
		th_tacho(&r, "buildid-cache", "--max-size", "1G", NULL);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
		assert_int_equal(access(k, F_OK), 0);
		/* ...--purge empties the cache, that copy too */
		th_tacho(&r, "buildid-cache", "--purge", NULL);
		assert_int_equal(r.status, 0);
		assert_not_contains(r.out, "removed 0 entries");
		th_run_free(&r);
		assert_int_equal(access(k, F_OK), -1);
	}
	th_tacho(&r, "buildid-cache", "-l", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "# 0 binaries, 0 B in ");
	th_run_free(&r);
	th_tacho(&r, "buildid-cache", "--remove", th_tmp("hot"), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot remove");
	th_run_free(&r);
}

static void test_bad_usage(void **state)
{
	static const char *const bad[][3] = {
		{ "--max-size", "lots", NULL },
		{ "--purge", "--list", NULL },
		{ "--remove", "xyz", NULL },
		{ "extra", NULL, NULL },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct th_run r;
		th_tacho(&r, "buildid-cache", bad[i][0], bad[i][1], bad[i][2], NULL);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, "usage: tacho buildid-cache");
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rebuilt_program_named),
		cmocka_unit_test(test_list_prune_purge),
		cmocka_unit_test(test_bad_usage),
	};
	return cmocka_run_group_tests(tests, setup, th_tmpdir_teardown);
}
