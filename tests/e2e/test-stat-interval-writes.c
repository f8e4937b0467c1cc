/* test-stat-interval-writes.c - `tacho stat -I` writes each line of its intervals to
 * stderr in one write(2) (stderr is unbuffered: a JSON line printed piece by piece was
 * 38 calls), in the three formats; strace counts the calls. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "util/util.h"

/* Runs tacho stat -I 50 with the format option fmt (NULL: the table; "-x" takes ",")
 * under strace and checks that the writes to fd 2 are exactly the lines of stderr, that
 * there were some, and that stderr begins with first. */
static void check_format(const char *fmt, const char *first)
{
	const char *log = th_tmp("strace.log");
	const char *argv[24], *asan = getenv("ASAN_OPTIONS");
	char env[512];
	struct th_run r;
	char *text = NULL, *p;
	size_t n = 0, len, writes = 0, lines = 0;
	static const char *const head[] = { "strace", "-f", "-qq", "-e", "trace=write", "-e",
					    "signal=none" };

	for (size_t i = 0; i < ARRAY_SIZE(head); i++)
		argv[n++] = head[i];
	/* LeakSanitizer stops the process with ptrace at exit, which a traced process
	 * cannot: no leak check in these runs of a sanitized tree */
	snprintf(env, sizeof(env), "ASAN_OPTIONS=%s%sdetect_leaks=0", asan ? asan : "",
		 asan && *asan ? ":" : "");
	argv[n++] = "-E";
	argv[n++] = env;
	argv[n++] = "-o";
	argv[n++] = log;
	argv[n++] = th_tacho_bin();
	argv[n++] = "stat";
	argv[n++] = "-I";
	argv[n++] = "50";
	argv[n++] = "-e";
	argv[n++] = "task-clock,page-faults";
	if (fmt)
		argv[n++] = fmt;
	if (fmt && !strcmp(fmt, "-x"))
		argv[n++] = ",";
	argv[n++] = "--";
	argv[n++] = "sleep";
	argv[n++] = "0.3";
	argv[n] = NULL;
	th_runv(&r, NULL, (char *const *)argv);
	assert_int_equal(r.status, 0);
	assert_int_equal(th_read_data(log, &text, &len), 0);
	for (p = text; (p = strstr(p, "write(2, ")); p++)
		writes++;
	for (p = r.err; *p; p++)
		lines += *p == '\n';
	/* 50 ms intervals of 300 ms: several lines, however loaded the machine */
	assert_true(lines >= 2);
	assert_int_equal(writes, lines);
	assert_true(!strncmp(r.err, first, strlen(first)));
	free(text);
	th_run_free(&r);
}

static void test_one_write_per_line(void **state)
{
	(void)state;
	if (access("/usr/bin/strace", X_OK) != 0)
		TEST_SKIP("strace is not installed (scripts/deps.sh test)");
	check_format("--json", "{\"time\":");
	check_format("-x", "time,name,status");
	check_format(NULL, "      ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_one_write_per_line, th_tmpdir_setup,
						th_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
