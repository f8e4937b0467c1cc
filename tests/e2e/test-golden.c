/* test-golden.c - the outputs of stat, cpu, list, report and regions on fixed inputs stay
 * what they were: tests/golden/capture.sh produces them (measured fields masked) and
 * every file must equal its copy in tests/golden/expected/. A change of output that is
 * meant is made by running the test with TACHO_GOLDEN_UPDATE=1, which rewrites the
 * expected files, and committing them with the change that explains why.
 *
 * The cases are exact on any x86-64 Linux with tracefs (breakpoints, page faults of a
 * static non-PIE helper with ASLR off, tracepoints, CPUID dumps from files), so the
 * comparison can fail on a single byte. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static void test_outputs_unchanged(void **state)
{
	char tmp[] = "/tmp/tacho-golden-XXXXXX";
	char *expected, *cmd;
	const char *update = getenv("TACHO_GOLDEN_UPDATE");
	struct th_run r;
	(void)state;

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there (the stat cases "
			  "count it)");
	assert_non_null(mkdtemp(tmp));
	expected = strdup(th_path("tests/golden/expected"));
	assert_non_null(expected);
	{
		char *argv[] = { (char *)th_path("tests/golden/capture.sh"), tmp, NULL };
		th_runv(&r, NULL, argv);
	}
	assert_int_equal(r.status, 0);
	th_run_free(&r);

	if (update && !strcmp(update, "1")) {
		assert_true(asprintf(&cmd, "rm -rf '%s' && mkdir -p '%s' && cp '%s'/* '%s'/",
				     expected, expected, tmp, expected) > 0);
		assert_int_equal(system(cmd), 0);
		free(cmd);
	}
	/* diff -r names a file that only one side has, and shows every changed line */
	{
		char *argv[] = { (char *)"diff", (char *)"-ru", expected, tmp, NULL };
		th_runv(&r, NULL, argv);
	}
	assert_true(asprintf(&cmd, "rm -rf '%s'", tmp) > 0);
	if (system(cmd) != 0)
		print_error("could not remove %s\n", tmp);
	free(cmd);
	free(expected);
	if (r.status != 0)
		fail_msg("golden outputs changed (TACHO_GOLDEN_UPDATE=1 rewrites them when the "
			 "change is meant):\n%s%s", r.out, r.err);
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outputs_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
