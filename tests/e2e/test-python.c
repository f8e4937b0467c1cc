/* test-python.c - the Python binding (python/tacho, ctypes over libtacho.so): runs its
 * pytest tests (python/tests) with Debian's python3 against this build tree's
 * libtacho.so.0 (TACHO_LIBRARY), its tacho and its helper programs. Skips, saying why,
 * where python3 or pytest is missing, or where the tree's library is sanitized (an
 * unsanitized python3 cannot load it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const char *python3(void)
{
	/* Debian's, where its python3-pytest is, before any other on PATH */
	return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

static void test_pytest(void **state)
{
	struct th_run r;
	char lib[4200], cmd[4300], tests[4096], pypath[4096];
	(void)state;

	char build[4096];  /* PATH_MAX */

	if (!realpath(th_build_dir(), build))
		fail_msg("no build tree %s", th_build_dir());
	snprintf(lib, sizeof(lib), "%s/libtacho.so.0", build);
	if (access(lib, R_OK) != 0)
		TEST_SKIP("%s is not built", lib);
	snprintf(cmd, sizeof(cmd), "readelf -d '%s' | grep -q 'libasan\\|libtsan'", lib);
	if (system(cmd) == 0)
		TEST_SKIP("this tree's libtacho.so is sanitized: python3 cannot load it");
	char *probe[] = { (char *)python3(), (char *)"-c", (char *)"import pytest", NULL };
	th_runv(&r, NULL, probe);
	if (r.status != 0) {
		th_run_free(&r);
		TEST_SKIP("python3 with pytest is missing (Debian: python3-pytest; scripts/deps.sh test)");
	}
	th_run_free(&r);

	snprintf(tests, sizeof(tests), "%s", th_path("python/tests"));
	snprintf(pypath, sizeof(pypath), "%s", th_path("python"));
	setenv("TACHO_LIBRARY", lib, 1);
	setenv("TACHO_BUILD", build, 1);
	setenv("PYTHONPATH", pypath, 1);
	setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
	setenv("TACHO_OUTPUT", "/dev/null", 1);   /* the regions' report at exit */
	char *argv[] = { (char *)python3(), (char *)"-m", (char *)"pytest", (char *)"-q",
			 (char *)"-rs", (char *)"-p", (char *)"no:cacheprovider", tests, NULL };
	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("pytest exited %d:\n%s%s", r.status, r.out, r.err);
	assert_contains(r.out, " passed");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pytest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
