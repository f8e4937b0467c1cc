/* test-cli.c - the command frame: --version, help, unknown commands and options, and the
 * negation every option without a value has (--no-X, or X for an option no-X). */
#include <stdlib.h>
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

/* The last of --json and --no-json wins, in either order and after repeats. */
static void test_negation_last_wins(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "cpu", "--no-crosscheck", "--json", "--no-json", NULL);
	assert_int_equal(r.status, 0);
	assert_true(r.out[0] != '{');
	assert_contains(r.out, "vendor");
	th_run_free(&r);
	th_tacho(&r, "cpu", "--no-crosscheck", "--no-json", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_true(r.out[0] == '{');
	th_run_free(&r);
	th_tacho(&r, "cpu", "--no-crosscheck", "--json", "--no-json", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_true(r.out[0] == '{');
	th_run_free(&r);
	/* an option named no-X is undone by X: --crosscheck after --no-crosscheck
	 * brings the cross-check's section back */
	th_tacho(&r, "cpu", "--json", "--no-crosscheck", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\"crosscheck\": null");
	th_run_free(&r);
	th_tacho(&r, "cpu", "--json", "--no-crosscheck", "--crosscheck", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\"crosscheck\": {\n");
	th_run_free(&r);
	/* the global -v: --no-verbose sets it back to none; stat's -v: undone by its
	 * --no-verbose, and one -v after it stands (its "N events in" line) */
	th_tacho(&r, "-v", "stat", "-e", "page-faults", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "tacho: 1 events in 1 run");
	th_run_free(&r);
	th_tacho(&r, "-v", "--no-verbose", "stat", "-e", "page-faults", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_not_contains(r.err, "events in");
	th_run_free(&r);
	th_tacho(&r, "stat", "-v", "--no-verbose", "-e", "page-faults", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_not_contains(r.err, "events in");
	th_run_free(&r);
	th_tacho(&r, "stat", "-v", "--no-verbose", "-v", "-e", "page-faults", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "tacho: 1 events in 1 run");
	th_run_free(&r);
}

/* --no-X of an option with a value is told as such, not offered X (its opposite); a
 * misspelt negation is offered the negation. */
static void test_negation_errors(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "report", "--no-sort", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho report: unknown option '--no-sort': --sort takes a value "
			"and has no negation\n");
	th_run_free(&r);
	th_tacho(&r, "report", "--no-childen", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "did you mean '--no-children'?");
	th_run_free(&r);
	th_tacho(&r, "cpu", "--no-help", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
}

/* Every negation the manual lists (tacho --dump-cli options, the rows the tables make)
 * is accepted by its command's parser: `tacho CMD [SUB] --no-X --help` prints the
 * help. */
static void test_negation_every_command(void **state)
{
	struct th_run r;
	char *list, *line, *save = NULL;
	size_t n = 0;
	(void)state;

	th_tacho(&r, "--dump-cli", "options", NULL);
	assert_int_equal(r.status, 0);
	list = strdup(r.out);
	th_run_free(&r);
	for (line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[64], *tab = strchr(line, '\t'), *lng, *slash;
		char *argv[8];
		int k = 0;

		assert_non_null(tab);
		lng = strrchr(line, '\t') + 1;
		if (strncmp(lng, "--no-", 5))
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(tab - line), line);
		if (!strcmp(key, "tacho"))
			continue;   /* the global ones: test_negation_last_wins */
		argv[k++] = (char *)th_tacho_bin();
		slash = strchr(key, '/');
		if (slash)
			*slash = '\0';
		argv[k++] = key;
		if (slash)
			argv[k++] = slash + 1;
		argv[k++] = lng;
		argv[k++] = (char *)"--help";
		argv[k] = NULL;
		th_runv(&r, NULL, argv);
		if (r.status != 0)
			fail_msg("%s %s %s --help: exit %d: %s", key, slash ? slash + 1 : "", lng,
				 r.status, r.err);
		assert_contains(r.out, "usage: tacho");
		th_run_free(&r);
		n++;
	}
	free(list);
	/* report's --no-children, stat's --no-per-thread, ... : dozens of them */
	assert_true(n > 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),         cmocka_unit_test(test_help),
		cmocka_unit_test(test_no_command),      cmocka_unit_test(test_unknown_command),
		cmocka_unit_test(test_unknown_global_option),
		cmocka_unit_test(test_stdout_write_error),
		cmocka_unit_test(test_negation_last_wins),
		cmocka_unit_test(test_negation_errors),
		cmocka_unit_test(test_negation_every_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
