/* test-cli.c - the command frame: --version, help, unknown commands and options. */
#include <string.h>

#include "harness.h"
#include "tacho.h"

static void test_version(void **state)
{
	struct th_run r;
	char want[64];
	(void)state;

	th_tacho(&r, "--version", NULL);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "tacho %s\n", tacho_version());
	assert_string_equal(r.out, want);
	th_run_free(&r);
}

static void test_help(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "help", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho");
	assert_contains(r.out, "commands:");
	th_run_free(&r);
}

static void test_no_command(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "usage: tacho");
	assert_string_equal(r.out, "");
	th_run_free(&r);
}

static void test_unknown_command(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "frobnicate", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho: 'frobnicate' is not a tacho command");
	assert_contains(r.err, "usage: tacho");
	th_run_free(&r);

	th_tacho(&r, "help", "frobnicate", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "no such command 'frobnicate'");
	th_run_free(&r);
}

static void test_unknown_global_option(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "--frob", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown option '--frob'");
	th_run_free(&r);
}

static void test_stdout_write_error(void **state)
{
	struct th_run r;
	char *argv[] = { (char *)"sh", (char *)"-c", NULL, NULL };
	char cmd[4200];
	(void)state;

	/* /dev/full fails every write: tacho must notice and say so, not exit 0 */
	snprintf(cmd, sizeof(cmd), "'%s' --version >/dev/full", th_tacho_bin());
	argv[2] = cmd;
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "write error on standard output");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),         cmocka_unit_test(test_help),
		cmocka_unit_test(test_no_command),      cmocka_unit_test(test_unknown_command),
		cmocka_unit_test(test_unknown_global_option),
		cmocka_unit_test(test_stdout_write_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
