/* test-commit-msg.c - scripts/commit-msg, the hook that holds a commit message to
 * git's shape (a subject of at most 72 characters, "area: what changed", a blank line,
 * the body): a table of messages, each with the exit status and the complaint it must
 * give. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_messages(void **state)
{
	static const struct {
		const char *msg;
		int status;
		const char *says;    /* in stderr, or NULL for nothing said */
	} cases[] = {
		{ "stat: a short subject\n\nthe why, and the figures\n", 0, NULL },
		{ "stat: a subject alone\n", 0, NULL },
		/* git's comment lines are not the message */
		{ "# a comment git strips\nengine: open cell by cell\n\nbody\n", 0, NULL },
		/* exactly 72 characters, and 73 */
		{ "report: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", 0,
		  NULL },
		{ "report: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", 1,
		  "the subject is 73 characters, at most 72" },
		{ "no area in this subject\n\nbody\n", 1, "the subject has no area" },
		{ "stat: the body starts at once\nbody\n", 1, "the second line must be blank" },
		{ "\n\nbody only\n", 1, "the subject (first line) is empty" },
		{ "Merge branch 'x'\n", 0, NULL },
		/* characters, not bytes: 72 of them with a multi-byte one is fine */
		{ "docs: \xc3\xa9xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n",
		  0, NULL },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *argv[] = { (char *)"sh", (char *)th_path("scripts/commit-msg"),
				 (char *)th_tmp("msg"), NULL };
		FILE *f = fopen(th_tmp("msg"), "w");
		struct th_run r;

		assert_non_null(f);
		fputs(cases[i].msg, f);
		assert_int_equal(fclose(f), 0);
		setenv("LC_ALL", "C.UTF-8", 1);
		th_runv(&r, NULL, argv);
		if (r.status != cases[i].status)
			fail_msg("case %zu: exit %d, want %d: %s", i, r.status, cases[i].status,
				 r.err);
		if (cases[i].says)
			assert_contains(r.err, cases[i].says);
		else
			assert_string_equal(r.err, "");
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_messages, th_tmpdir_setup, th_tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
