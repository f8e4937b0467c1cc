/* test-cli-docs.c - the manual pages and the bash and zsh completions written from the
 * option tables (cli/doc.c): runs scripts/check-cli-docs.sh on this test's build tree
 * (every option in its page and its completions, the pages without a lint warning, the
 * bash completion driven through COMP_WORDS, an install found by man and bash). The
 * build tree is only read. */
#include <string.h>

#include "harness.h"

static void test_cli_docs(void **state)
{
	struct th_run r;
	char script[4096];
	(void)state;

	snprintf(script, sizeof(script), "%s", th_path("scripts/check-cli-docs.sh"));
	char *argv[] = { script, (char *)th_build_dir(), NULL };
	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("check-cli-docs.sh exited %d:\n%s%s", r.status, r.out, r.err);
	assert_contains(r.out, "check-cli-docs: ok");
	assert_string_equal(r.err, "");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_docs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
