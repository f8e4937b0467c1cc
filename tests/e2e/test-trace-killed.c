/* test-trace-killed.c - tacho trace report -i FILE where FILE was never written because
 * tacho trace was killed (SIGKILL) half-way: one line says the trace was not finished,
 * names the FILE.tmp-XXXXXX that holds it and whether it reads (with its items); a
 * temporary file that does not read is named as such; a missing FILE with no temporary
 * file is the plain error it was. */
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "tacho/timeline.h"

/* The temporary file of a trace to k.trace, once it holds at least min bytes. */
static bool tmp_file(char *path, size_t size, off_t min)
{
	bool found = false;
	struct dirent *d;
	DIR *dir = opendir(th_tmpdir());

	if (!dir)
		return false;
	while (!found && (d = readdir(dir))) {
		struct stat sb;

		if (strncmp(d->d_name, "k.trace.tmp-", 12))
			continue;
		snprintf(path, size, "%s", th_tmp(d->d_name));
		found = stat(path, &sb) == 0 && sb.st_size >= min;
	}
	closedir(dir);
	return found;
}

/* The items the temporary file of k.trace reads with (0: none yet, or no file). */
static size_t tmp_items(char *path, size_t size)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_timeline *t;
	size_t n;

	if (!tmp_file(path, size, 1) || tacho_timeline_load(path, &t, &d))
		return 0;
	n = tacho_timeline_items(t);
	tacho_timeline_free(t);
	return n;
}

static void test_killed_trace_named(void **state)
{
	char tmp[4096], want[8400];
	struct th_run r;
	pid_t pid;
	int st;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(th_tacho_bin(), "tacho", "trace", "-q", "-o", th_tmp("k.trace"), "--",
		      th_prog("trace-marks"), "slow", (char *)NULL);
		_exit(127);
	}
	/* until the trace ends it is k.trace.tmp-XXXXXX; once it holds marks, kill */
	for (int i = 0; i < 200 && tmp_items(tmp, sizeof(tmp)) == 0; i++)
		usleep(50000);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	size_t items = tmp_items(tmp, sizeof(tmp));
	assert_true(items > 0);

	th_tacho(&r, "trace", "report", "-i", th_tmp("k.trace"), NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_int_equal(th_count_lines(r.err), 1);
	snprintf(want, sizeof(want), "tacho: the trace '%s' was not finished (tacho trace was "
		 "killed, or still runs): ", th_tmp("k.trace"));
	assert_contains(r.err, want);
	snprintf(want, sizeof(want), "what it wrote is in '%s', which reads up to its last "
		 "flush (%zu items): tacho trace report -i '%s'", tmp, items, tmp);
	assert_contains(r.err, want);
	th_run_free(&r);
	/* and it does read so */
	th_tacho(&r, "trace", "report", "-i", tmp, NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "the trace ends early");
	th_run_free(&r);
	unlink(tmp);
}

static void test_unreadable_tmp(void **state)
{
	struct th_run r;
	char want[4200];
	FILE *f = fopen(th_tmp("z.trace.tmp-Ab12Cd"), "w");

	assert_non_null(f);
	fputs("not a trace\n", f);
	fclose(f);
	th_tacho(&r, "trace", "report", "-i", th_tmp("z.trace"), NULL);
	assert_int_equal(r.status, 1);
	assert_int_equal(th_count_lines(r.err), 1);
	snprintf(want, sizeof(want), "what it wrote is in '%s', which cannot be read: ",
		 th_tmp("z.trace.tmp-Ab12Cd"));
	assert_contains(r.err, want);
	th_run_free(&r);
	unlink(th_tmp("z.trace.tmp-Ab12Cd"));
}

static void test_missing_no_tmp(void **state)
{
	struct th_run r;

	/* z.trace.tmp (no six characters) and z.tracex.tmp-Ab12Cd are no temporary files
	 * of z.trace */
	fclose(fopen(th_tmp("m.trace.tmp"), "w"));
	fclose(fopen(th_tmp("m.tracex.tmp-Ab12Cd"), "w"));
	th_tacho(&r, "trace", "report", "-i", th_tmp("m.trace"), NULL);
	assert_int_equal(r.status, 1);
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "cannot read the trace");
	assert_not_contains(r.err, "not finished");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_killed_trace_named),
		cmocka_unit_test(test_unreadable_tmp),
		cmocka_unit_test(test_missing_no_tmp),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
