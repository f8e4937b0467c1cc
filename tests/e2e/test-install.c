/* test-install.c - `make install` serves a program outside the project: runs
 * scripts/check-install.sh on this test's build tree (a temporary DESTDIR and PREFIX;
 * examples/cpu-info.c built with pkg-config against the installed header, statically
 * and dynamically, and run). The build tree is only read. */
#include <string.h>

#include "harness.h"

static void test_install(void **state)
{
	struct th_run r;
	char script[4096];
	(void)state;

	snprintf(script, sizeof(script), "%s", th_path("scripts/check-install.sh"));
	char *argv[] = { script, (char *)th_build_dir(), NULL };
	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("check-install.sh exited %d:\n%s%s", r.status, r.out, r.err);
	assert_contains(r.out, "check-install: ok");
	assert_string_equal(r.err, "");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_install),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
