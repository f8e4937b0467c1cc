/* test-stat-regions.c - `tacho stat` counting only part of a program's run, end to end
 * and exact: only inside the program's regions (--regions: tests/progs/lib-stat-regions.c
 * makes 1,000 writes outside and 300 inside), only while perf's --control says so,
 * only after perf's -D delay. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "util/util.h"

#define WRITE_EVENT "syscalls:sys_enter_write"

static void need_tracepoint(const struct th_json *j)
{
	const struct th_json *st = th_json_get(j, "events[0].status");

	if (st && st->string && !strcmp(st->string, "not supported"))
		TEST_SKIP("%s cannot be counted here (%s)", WRITE_EVENT,
			  json_str(j, "events[0].explanation"));
}

/* 1,000 writes outside regions and 300 inside (one region, one nested in another, one
 * on a second thread while the first is inside): 300. Without --regions: 1,300. */
static void test_regions_only(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	j = th_stat_json(&r, "--regions", "-e", WRITE_EVENT, "--", th_prog("lib-stat-regions"),
		      "1000", "300", NULL);
	assert_int_equal(r.status, 0);
	need_tracepoint(j);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_int_equal((long long)json_num(j, "events[0].value"), 300);
	th_json_free(j);
	th_run_free(&r);

	/* docs/stat.md's example, in the table */
	th_tacho(&r, "stat", "--regions", "-e", WRITE_EVENT, "--", th_prog("lib-stat-regions"),
		 "1000", "300", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "  300    " WRITE_EVENT);
	th_run_free(&r);

	j = th_stat_json(&r, "-e", WRITE_EVENT, "--", th_prog("lib-stat-regions"), "1000", "300",
		      NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal((long long)json_num(j, "events[0].value"), 1300);
	th_json_free(j);
	th_run_free(&r);

	/* repetitions: each run switched on and off the same way */
	j = th_stat_json(&r, "--regions", "-r", "3", "-e", WRITE_EVENT, "--",
		      th_prog("lib-stat-regions"), "10", "30", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal((long long)json_num(j, "events[0].min"), 30);
	assert_int_equal((long long)json_num(j, "events[0].max"), 30);
	th_json_free(j);
	th_run_free(&r);
}

/* The regions' report at exit is made in memory and written at once: the program's
 * writes, counted by the sys_enter_write tracepoint, are its own 1,300 and one for the
 * report (it was 23 more, a line at a time through the unbuffered stderr, in the
 * program's own traces). */
static void test_report_one_write(void **state)
{
	const char *json = th_tmp("one-write.json");
	struct th_run r;
	struct th_json *j;
	char *text;
	size_t len;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	th_tacho(&r, "stat", "--json", "-o", json, "-e", WRITE_EVENT, "--",
		 th_prog("lib-stat-regions"), "1000", "300", "report", NULL);
	assert_int_equal(r.status, 0);
	/* the report is there, on the program's stderr */
	assert_contains(r.err, "tacho regions");
	assert_contains(r.err, "second");
	th_run_free(&r);
	assert_int_equal(th_read_data(json, &text, &len), 0);
	j = th_json_parse_or_fail(text, __FILE__, __LINE__);
	free(text);
	need_tracepoint(j);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_int_equal((long long)json_num(j, "events[0].value"), 1300 + 1);
	th_json_free(j);
}

/* A program without regions never switches the counters on: not counted, with why;
 * never a 0 that would read as "no writes". */
static void test_regions_none(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	j = th_stat_json(&r, "--regions", "-e", WRITE_EVENT, "--", th_prog("stat-threads"),
		      "threads", "5", NULL);
	assert_int_equal(r.status, 0);
	need_tracepoint(j);
	assert_string_equal(json_str(j, "events[0].status"), "not counted");
	assert_json_type(j, "events[0].value", TH_JSON_NULL);
	assert_contains(json_str(j, "events[0].explanation"), "never enabled");
	th_json_free(j);
	th_run_free(&r);
}

/* perf's --control with -D -1: nothing counts until "enable" comes; "ping" is
 * acknowledged too. The program's thread writes 7 times once a byte reaches the
 * program, and its first thread writes that byte on to it: 8. */
static void test_control(void **state)
{
	int ctl[2], ackp[2], in[2], out[2], status;
	char buf[64] = "", ack[5];
	struct th_json *j;
	pid_t tacho;
	char *text = NULL;
	size_t len;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	assert_int_equal(pipe(ctl), 0);
	assert_int_equal(pipe(ackp), 0);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	tacho = fork();
	assert_true(tacho >= 0);
	if (tacho == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(ctl[0], 3);
		dup2(ackp[1], 4);
		execl(th_tacho_bin(), th_tacho_bin(), "stat", "--json", "-o", th_tmp("ctl.json"),
		      "--control", "fd:3,4", "-D", "-1", "-e", WRITE_EVENT, "--",
		      th_prog("stat-threads"), "wait", "7", (char *)NULL);
		_exit(127);
	}
	close(ctl[0]);
	close(ackp[1]);
	close(in[0]);
	close(out[1]);
	/* "ready" was written while counting was off */
	assert_true(read(out[0], buf, sizeof(buf) - 1) > 0);
	assert_contains(buf, "ready");
	assert_int_equal(write(ctl[1], "ping\n", 5), 5);
	assert_int_equal(read(ackp[0], ack, sizeof(ack)), 5);
	assert_memory_equal(ack, "ack\n", 5);
	assert_int_equal(write(ctl[1], "enable\n", 7), 7);
	assert_int_equal(read(ackp[0], ack, sizeof(ack)), 5);
	assert_memory_equal(ack, "ack\n", 5);
	assert_int_equal(write(in[1], "g", 1), 1);
	close(in[1]);
	assert_int_equal(waitpid(tacho, &status, 0), tacho);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(ctl[1]);
	close(ackp[0]);
	close(out[0]);
	assert_int_equal(tc_read_file(th_tmp("ctl.json"), &text, &len, 1 << 20), 0);
	j = assert_json(text);
	need_tracepoint(j);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_int_equal((long long)json_num(j, "events[0].value"), 8);
	th_json_free(j);
	free(text);
}

/* -D: a delay longer than the program never starts counting. */
static void test_delay(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	j = th_stat_json(&r, "-D", "100000", "-e", WRITE_EVENT, "--", th_prog("stat-threads"),
		      "threads", "5", NULL);
	assert_int_equal(r.status, 0);
	need_tracepoint(j);
	assert_string_equal(json_str(j, "events[0].status"), "not counted");
	th_json_free(j);
	th_run_free(&r);
	/* -D 0 is counting from the exec, as without it */
	j = th_stat_json(&r, "-D", "0", "-e", WRITE_EVENT, "--", th_prog("stat-threads"), "threads",
		      "5", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal((long long)json_num(j, "events[0].value"), 5);
	th_json_free(j);
	th_run_free(&r);
	/* a delay that ends inside the run: the metrics are of the time counted, not of
	 * the whole run with the delay in it (which showed a busy program at 0.63 CPUs) */
	j = th_stat_json(&r, "-D", "20", "-e", "task-clock", "--", th_prog("stat-helper"),
			 "spin", "60", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	const struct th_json *m = th_json_find(j, "metrics", "name", "CPUs utilized");
	assert_non_null(m);
	assert_string_equal(json_str(m, "expr"), "task-clock / time counted");
	/* one thread runs at most the time it is counted */
	assert_true(json_num(m, "value") > 0 && json_num(m, "value") <= 1.0 + 1e-9);
	th_json_free(j);
	th_run_free(&r);
	/* the time counted is wall time, within the run's: four threads spinning on the
	 * CPUs there are (an event's time enabled, which runs only while a thread runs and
	 * adds up over threads, gave some twice the wall time here) */
	j = th_stat_json(&r, "-D", "1", "-e", "task-clock", "--", th_prog("stat-threads"),
			 "spin", "80", "4", NULL);
	assert_int_equal(r.status, 0);
	m = th_json_find(j, "metrics", "name", "CPUs utilized");
	assert_non_null(m);
	double counted_s = json_num(j, "events[0].value") / 1e3 / json_num(m, "value");
	if (!(counted_s <= json_num(j, "wall_s") * (1 + 1e-9)))
		fail_msg("time counted %g s, wall %g s", counted_s, json_num(j, "wall_s"));
	th_json_free(j);
	th_run_free(&r);
}

/* A program given a TACHO_STAT_CONTROL that is not its parent's socket ignores it. */
static void test_foreign_control(void **state)
{
	char env1[] = "TACHO_STAT_CONTROL=junk", env2[64];
	char *argv[] = { (char *)th_prog("lib-stat-regions"), (char *)"4", (char *)"6", NULL };
	struct th_run r;
	(void)state;

	assert_int_equal(putenv(env1), 0);
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	/* a descriptor that is open, but not from this program's parent */
	snprintf(env2, sizeof(env2), "TACHO_STAT_CONTROL=2:%d", 1);
	assert_int_equal(putenv(env2), 0);
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	unsetenv("TACHO_STAT_CONTROL");
}

/* A warning while counting, with the JSON document on standard error: the document
 * carries it ("warnings") and stays one document; with -o it is a line on standard
 * error, as always. The program sends an unknown control command and waits for its
 * acknowledgement, which comes after the warning was logged. */
static void test_json_carries_warnings(void **state)
{
	static const char *const warning = "control: unknown command 'bogus'";
	char ctl[256], ack[256], script[640], spec[600];
	struct th_run r;
	struct th_json *j;
	char *text = NULL;
	size_t len;
	(void)state;

	snprintf(ctl, sizeof(ctl), "%s", th_tmp("warn-ctl"));
	snprintf(ack, sizeof(ack), "%s", th_tmp("warn-ack"));
	assert_int_equal(mkfifo(ctl, 0600), 0);
	assert_int_equal(mkfifo(ack, 0600), 0);
	snprintf(spec, sizeof(spec), "fifo:%s,%s", ctl, ack);
	snprintf(script, sizeof(script), "printf 'bogus\\n' > '%s'; head -c 4 < '%s' > /dev/null",
		 ctl, ack);

	j = th_stat_json(&r, "--control", spec, "-e", "task-clock", "--", "sh", "-c", script,
			 NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(th_json_get(j, "warnings")->n, 1);
	assert_contains(json_str(j, "warnings[0]"), warning);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "stat", "--json", "-o", th_tmp("warn.json"), "--control", spec, "-e",
		 "task-clock", "--", "sh", "-c", script, NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "tacho: warning: control: unknown command 'bogus'");
	assert_int_equal(tc_read_file(th_tmp("warn.json"), &text, &len, 1 << 20), 0);
	j = assert_json(text);
	assert_null(th_json_get(j, "warnings"));
	th_json_free(j);
	free(text);
	th_run_free(&r);
}

static void test_usage(void **state)
{
	static const char *const cases[][6] = {
		{ "--regions", "-p", "1" },
		{ "-D", "-1", "--", "true" },
		{ "-D", "soon", "--", "true" },
		{ "--control", "pipe:3", "--", "true" },
		{ "--control", "fd:987", "--", "true" },
		{ "--regions", "-A", "-a", "--", "true" },
		{ "--regions", "-I", "100", "--", "true" },
	};
	struct th_run r;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *argv[10] = { th_tacho_bin(), "stat" };
		size_t n = 2;

		for (size_t k = 0; k < 6 && cases[i][k]; k++)
			argv[n++] = cases[i][k];
		th_runv(&r, NULL, (char *const *)argv);
		if (r.status != 2)
			fprintf(stderr, "case %zu: status %d\n%s", i, r.status, r.err);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, "usage: tacho stat");
		th_run_free(&r);
	}
	th_tacho(&r, "stat", "--control", "fifo:/nonexistent/ctl", "--", "true", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot open the control fifo '/nonexistent/ctl'");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regions_only),
		cmocka_unit_test(test_report_one_write),
		cmocka_unit_test(test_regions_none),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_foreign_control),
		cmocka_unit_test(test_json_carries_warnings),
		cmocka_unit_test(test_usage),
	};

	/* a write to a pipe whose reader is gone must fail, not kill the test */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
