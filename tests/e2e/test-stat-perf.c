/* test-stat-perf.c - perf stat's remaining options in `tacho stat`, end to end: perf's
 * own -x columns (--perf-layout) held against perf 6.1's output of the same program,
 * -i/--no-inherit, -n/--null, -q, --log-fd, and the seconds user / seconds sys lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "spawn.h"
#include "util/util.h"

#define WRITE_EVENT "syscalls:sys_enter_write"

/* Splits a CSV line in place; returns the number of fields (at most max). */
static size_t split(char *line, char **f, size_t max)
{
	size_t n = 0;

	for (char *p = line; n < max;) {
		f[n++] = p;
		p = strchr(p, ',');
		if (!p)
			break;
		*p++ = '\0';
	}
	return n;
}

/* The line of out whose third field is ev, copied into buf; NULL when none. */
static char *line_of(const char *out, const char *ev, char *buf, size_t size)
{
	for (const char *p = out; p && *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char tmp[512], *f[10];

		snprintf(tmp, sizeof(tmp), "%.*s", (int)len, p);
		snprintf(buf, size, "%s", tmp);
		if (split(tmp, f, 10) >= 3 && !strcmp(f[2], ev))
			return buf;
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

/* tacho's -x --perf-layout and perf 6.1's -x, on the same program: the same columns,
 * the same units and names, the same exact count of writes, 100 % running. */
static void test_perf_layout(void **state)
{
	char *perf_argv[] = { (char *)"perf", (char *)"stat", (char *)"-x,", (char *)"-e",
			      (char *)WRITE_EVENT ",page-faults", (char *)"--",
			      (char *)th_prog("stat-helper"), (char *)"writes", (char *)"7",
			      NULL };
	struct th_run r, p;
	char a[512], b[512], *fa[10], *fb[10];
	size_t na, nb;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	th_tacho(&r, "stat", "-x,", "--perf-layout", "-e", WRITE_EVENT ",page-faults", "--",
		 th_prog("stat-helper"), "writes", "7", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(line_of(r.err, WRITE_EVENT, a, sizeof(a)));
	na = split(a, fa, 10);
	/* value, unit, event, run time, percentage running, metric value, metric unit */
	assert_int_equal(na, 7);
	assert_string_equal(fa[0], "7");
	assert_string_equal(fa[1], "");
	assert_true(atoll(fa[3]) > 0);
	assert_string_equal(fa[4], "100.00");
	/* no header: the first line is an event's */
	assert_int_equal(strncmp(r.err, "kind,", 5) != 0, 1);

	th_runv(&p, NULL, perf_argv);
	if (p.status == 127 || (p.status && strstr(p.err, "not found")))
		TEST_SKIP("perf cannot run here (status %d)", p.status);
	if (!line_of(p.err, WRITE_EVENT, b, sizeof(b)))
		TEST_SKIP("perf could not count %s: %s", WRITE_EVENT, p.err);
	nb = split(b, fb, 10);
	assert_int_equal(na, nb);
	assert_string_equal(fa[0], fb[0]);
	assert_string_equal(fa[1], fb[1]);
	assert_string_equal(fa[2], fb[2]);
	assert_string_equal(fa[4], fb[4]);
	assert_string_equal(fa[5], fb[5]);
	assert_string_equal(fa[6], fb[6]);
	/* page-faults: the same columns; its count is the program's start-up, which
	 * differs between the two launchers */
	assert_non_null(line_of(r.err, "page-faults", a, sizeof(a)));
	assert_non_null(line_of(p.err, "page-faults", b, sizeof(b)));
	assert_int_equal(split(a, fa, 10), split(b, fb, 10));
	th_run_free(&p);
	th_run_free(&r);

	/* with -r: perf's variance column after the name */
	th_tacho(&r, "stat", "-x,", "--perf-layout", "-r", "3", "-e", WRITE_EVENT, "--",
		 th_prog("stat-helper"), "writes", "7", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(line_of(r.err, WRITE_EVENT, a, sizeof(a)));
	assert_int_equal(split(a, fa, 10), 8);
	assert_string_equal(fa[0], "7");
	assert_string_equal(fa[3], "0.00%");
	th_run_free(&r);
}

/* The lines of out, each split in place (out is modified): at most max, n set. */
static size_t lines_of(char *out, char **line, size_t max)
{
	size_t n = 0;

	for (char *l = strtok(out, "\n"); l && n < max; l = strtok(NULL, "\n"))
		if (*l)
			line[n++] = l;
	return n;
}

/* -x, --perf-layout -I with -A and --per-core, and perf 6.1's -x, -I with the same: as
 * many lines, in the same order, each with perf's columns (time, the CPU or core and
 * its CPUs, value, unit, event, run time, percentage running, two metric fields) and
 * the same labels, units and names; the time in perf's "%6u.%09u". */
static void test_perf_layout_interval(void **state)
{
	static const char *const modes[] = { "-A", "--per-core" };
	(void)state;

	if (geteuid() != 0)
		TEST_SKIP("counting CPUs needs root");
	for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
		char *perf_argv[] = { (char *)"perf", (char *)"stat", (char *)"-x,", (char *)"-I",
				      (char *)"100", (char *)"--interval-count", (char *)"2",
				      (char *)modes[m], (char *)"-a", (char *)"-e",
				      (char *)"context-switches,task-clock", (char *)"--",
				      (char *)"sleep", (char *)"5", NULL };
		char *la[256], *lb[256], *fa[12], *fb[12];
		struct th_run r, p;
		size_t na, nb;

		th_tacho(&r, "stat", "-x,", "--perf-layout", "-I", "100", "--interval-count", "2",
			 modes[m], "-a", "-e", "context-switches,task-clock", "--", "sleep", "5",
			 NULL);
		assert_int_equal(r.status, 143);
		th_runv(&p, NULL, perf_argv);
		if (p.status == 127 || !strstr(p.err, "context-switches"))
			TEST_SKIP("perf cannot count CPUs here (status %d): %s", p.status, p.err);
		na = lines_of(r.err, la, ARRAY_SIZE(la));
		nb = lines_of(p.err, lb, ARRAY_SIZE(lb));
		assert_true(na >= 4);
		assert_int_equal(na, nb);
		for (size_t i = 0; i < na; i++) {
			size_t ka = split(la[i], fa, 12), kb = split(lb[i], fb, 12), o = m ? 1 : 0;

			assert_int_equal(ka, kb);
			assert_int_equal(ka, 9 + o);
			assert_int_equal(strlen(fa[0]), strlen(fb[0]));
			assert_int_equal(fa[0][6], '.');
			assert_string_equal(fa[1], fb[1]);
			if (o)
				assert_string_equal(fa[2], fb[2]);
			assert_string_equal(fa[3 + o], fb[3 + o]);
			assert_string_equal(fa[4 + o], fb[4 + o]);
			assert_string_equal(fa[6 + o], "100.00");
		}
		th_run_free(&p);
		th_run_free(&r);
	}
}

/* -i counts the program's own task: the writes of its threads are not in it. */
static void test_no_inherit(void **state)
{
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	th_tacho(&r, "stat", "-x,", "-i", "-e", WRITE_EVENT, "--", th_prog("stat-threads"),
		 "threads", "5", "7", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "\nevent," WRITE_EVENT ",counted,0,");
	th_run_free(&r);
	th_tacho(&r, "stat", "-x,", "-e", WRITE_EVENT, "--", th_prog("stat-threads"), "threads",
		 "5", "7", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "\nevent," WRITE_EVENT ",counted,12,");
	th_run_free(&r);
}

/* The first number after each of keys in text has at most max decimals (a value in
 * whole units of its precision, no float noise). */
static void check_decimals(const char *text, const char *const *keys, size_t n, int max)
{
	for (size_t k = 0; k < n; k++) {
		const char *at = strstr(text, keys[k]), *dot, *end;

		assert_non_null(at);
		at += strlen(keys[k]);
		end = at + strcspn(at, ",\n}");
		dot = memchr(at, '.', (size_t)(end - at));
		if (dot && end - dot - 1 > max)
			fail_msg("%s with more than %d decimals: '%.*s'", keys[k], max,
				 (int)(end - at), at);
	}
}

/* -n: no events, the times alone; the table's user and sys lines. */
static void test_null_and_times(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	th_tacho(&r, "stat", "--json", "-n", "--", th_prog("stat-helper"), "spin", "30", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.err);
	assert_int_equal(th_json_get(j, "events")->n, 0);
	/* the spin's own clock says 30 ms passed while it ran */
	assert_true(json_num(j, "wall_s") >= 0.03);
	/* CPU times are the kernel's accounting of a loaded machine: present and not
	 * negative, no figure asserted */
	assert_true(json_num(j, "user_s") >= 0);
	assert_true(json_num(j, "sys_s") >= 0);
	assert_int_equal((long long)json_num(j, "program_runs_per_repetition"), 1);
	th_json_free(j);
	/* seconds in whole nanoseconds: at most 9 decimals, no float noise */
	{
		static const char *const keys[] = { "\"wall_s\": ", "\"user_s\": ",
						    "\"sys_s\": " };
		check_decimals(r.err, keys, ARRAY_SIZE(keys), 9);
	}
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", "page-faults", "--", th_prog("stat-helper"), "spin", "10",
		 NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, " seconds wall time\n");
	assert_contains(r.err, " seconds user\n");
	assert_contains(r.err, " seconds sys\n");
	th_run_free(&r);
}

/* -q: nothing printed, the program's status; --log-fd: the counts on that descriptor. */
static void test_quiet_and_log_fd(void **state)
{
	char cmd[4096], *text = NULL;
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	struct th_run r;
	size_t len;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	th_tacho(&r, "stat", "-q", "-e", "page-faults", "--", th_prog("stat-helper"), "exit", "3",
		 NULL);
	assert_int_equal(r.status, 3);
	assert_string_equal(r.err, "");
	assert_string_equal(r.out, "");
	th_run_free(&r);

	snprintf(cmd, sizeof(cmd), "'%s' stat -x, --log-fd 7 -e " WRITE_EVENT " -- '%s' writes 4 "
		 "7>'%s'", th_tacho_bin(), th_prog("stat-helper"), th_tmp("log.csv"));
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_int_equal(tc_read_file(th_tmp("log.csv"), &text, &len, 1 << 20), 0);
	assert_contains(text, "\nevent," WRITE_EVENT ",counted,4,");
	free(text);
	th_run_free(&r);
}

/* -I with -r: every interval line says its repetition, JSON its unit and its time and
 * msec in whole nanoseconds; a value that does not exist has an empty coverage in CSV, as JSON
 * has null. */
static void test_interval_runs(void **state)
{
	struct th_run r;
	bool run0 = false, run1 = false;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	th_tacho(&r, "stat", "--json", "-I", "20", "-r", "2", "-e", "task-clock", "--",
		 th_prog("stat-helper"), "spin", "50", NULL);
	assert_int_equal(r.status, 0);
	for (const char *p = r.err; p && *p;) {
		const char *eol = strchr(p, '\n');
		char line[1024];
		struct th_json *j;

		snprintf(line, sizeof(line), "%.*s", (int)(eol ? eol - p : (long)strlen(p)), p);
		p = eol ? eol + 1 : NULL;
		if (!line[0])
			continue;
		j = assert_json(line);
		assert_string_equal(json_str(j, "unit"), "msec");
		/* the time and task-clock's msec in whole nanoseconds: at most 9 and 6
		 * decimals, no float noise */
		assert_true(tc_starts_with(line, "{\"time\":"));
		{
			const char *dot = strchr(line, '.'), *end = strchr(line, ',');
			const char *val = strstr(line, "\"value\":");

			if (dot && dot < end && end - dot - 1 > 9)
				fail_msg("time with more than 9 decimals in '%s'", line);
			dot = val ? strchr(val, '.') : NULL;
			end = val ? strchr(val, ',') : NULL;
			if (dot && end && dot < end && end - dot - 1 > 6)
				fail_msg("msec with more than 6 decimals in '%s'", line);
		}
		if (json_num(j, "run") == 0)
			run0 = true;
		else if (json_num(j, "run") == 1)
			run1 = true;
		else
			fail_msg("run %g in '%s'", json_num(j, "run"), line);
		th_json_free(j);
	}
	assert_true(run0 && run1);
	th_run_free(&r);

	/* the session's task-clock figures too (the first of each key: the event's) */
	th_tacho(&r, "stat", "--json", "-r", "3", "-e", "task-clock", "--", "true", NULL);
	assert_int_equal(r.status, 0);
	{
		static const char *const keys[] = { "\"value\": ", "\"mean\": ",
						    "\"stddev\": ", "\"min\": ",
						    "\"median\": ", "\"max\": " };
		check_decimals(r.err, keys, ARRAY_SIZE(keys), 6);
	}
	th_run_free(&r);

	th_tacho(&r, "stat", "--csv", "-I", "20", "-r", "2", "-e", "page-faults", "--",
		 th_prog("stat-helper"), "spin", "50", NULL);
	assert_int_equal(r.status, 0);
	assert_true(tc_starts_with(r.err, "time,name,status,value,unit,coverage,explanation,run\n"));
	assert_contains(r.err, ",page-faults,counted,");
	assert_contains(r.err, ",,1\n");
	th_run_free(&r);

	th_tacho(&r, "stat", "--csv", "-e", "cycles,page-faults", "--", "true", NULL);
	assert_int_equal(r.status, 0);
	if (!strstr(r.err, "\nevent,cycles,not supported,"))
		TEST_SKIP("cycles is counted here: no event without a value to show");
	/* value and coverage both empty, then runs 0 */
	assert_contains(r.err, "\nevent,cycles,not supported,,,,0,");
	th_run_free(&r);
}

/* `tacho stat -p PID --timeout MS -e page-faults` of argv started in the background
 * (th_spawn: its pid given once it has exec'd), which is then killed and reaped. */
/* Whether process pid is blocked in nanosleep or clock_nanosleep now. */
static bool in_sleep(pid_t pid)
{
	long nr = th_proc_syscall(pid);

	return nr == 35 || nr == 230;
}

/* tacho stat -p on the process argv, for ms; sleeping: once it sleeps, so that its
 * start-up (the loader's page faults after the exec) is over before the count. */
static void stat_pid_for(struct th_run *r, const char *tag, char *const argv[], const char *ms,
			 bool sleeping)
{
	struct th_proc p;
	char pid[16];

	th_spawn(&p, tag, argv);
	for (int i = 0; sleeping && !in_sleep(p.pid); i++) {
		if (i == 10000)
			fail_msg("%s (pid %d) did not reach its sleep in 10 s", tag, (int)p.pid);
		usleep(1000);
	}
	snprintf(pid, sizeof(pid), "%d", (int)p.pid);
	th_tacho(r, "stat", "-p", pid, "--timeout", ms, "-e", "page-faults", NULL);
	th_proc_end(&p);
}

/* --timeout: the program gets SIGTERM, its counts are printed, tacho exits as it did;
 * --interval-count: exactly that many intervals. The program would spin ten minutes. */
static void test_timeout_and_interval_count(void **state)
{
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	th_tacho(&r, "stat", "--timeout", "100", "-e", "page-faults", "--",
		 th_prog("stat-helper"), "spin", "600000", NULL);
	assert_int_equal(r.status, 128 + 15);
	assert_contains(r.err, "page-faults");
	assert_contains(r.err, "the program: killed by signal 15 (SIGTERM)");
	th_run_free(&r);

	/* a running process counted until the timeout: tacho says it stopped it so, not
	 * that a signal did */
	char *spinner[] = { (char *)th_prog("stat-helper"), (char *)"spin", (char *)"600000",
			    NULL };
	stat_pid_for(&r, "spinner", spinner, "100", false);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "stopped after --timeout 100 ms");
	assert_null(strstr(r.err, "stopped by a signal"));
	th_run_free(&r);

	/* a process that slept through the count: its event opened and never ran, which
	 * is no failure (exit 0, "not counted"), unlike an event that cannot open */
	char *sleeper[] = { (char *)"sleep", (char *)"600", NULL };
	stat_pid_for(&r, "sleeper", sleeper, "50", true);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "<not counted>");
	assert_null(strstr(r.err, "counted nothing"));
	th_run_free(&r);

	th_tacho(&r, "stat", "--json", "-I", "20", "--interval-count", "3", "-e", "page-faults",
		 "--", th_prog("stat-helper"), "spin", "600000", NULL);
	assert_int_equal(r.status, 128 + 15);
	assert_int_equal(th_count_lines(r.err), 3);
	th_run_free(&r);
}

/* Progress of -r on a terminal (script(1) gives tacho one) once the runs have taken a
 * second: four runs that spin 400 ms each by their own clock reach it by the fourth;
 * nothing when standard error is a pipe. */
static void test_progress(void **state)
{
	char cmd[4096];
	char *argv[] = { (char *)"script", (char *)"-qfec", cmd, (char *)"/dev/null", NULL };
	struct th_run r;
	(void)state;

	if (access("/usr/bin/script", X_OK))
		TEST_SKIP("no script(1) to give tacho a terminal");
	snprintf(cmd, sizeof(cmd), "'%s' stat -r 4 -e page-faults -- '%s' spin 400",
		 th_tacho_bin(), th_prog("stat-helper"));
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\rtacho stat: run 4 of 4");
	/* cleared before the counts */
	assert_contains(r.out, "\r\033[K");
	th_run_free(&r);

	th_tacho(&r, "stat", "-r", "4", "-e", "page-faults", "--", th_prog("stat-helper"),
		 "spin", "400", NULL);
	assert_int_equal(r.status, 0);
	assert_not_contains(r.err, "tacho stat: run ");
	th_run_free(&r);
}

/* --pre and --post around each run, through the shell; a --pre that fails stops tacho
 * before the run (exit 1). --append adds to the file of -o. */
static void test_hooks_and_append(void **state)
{
	char pre[512], post[512], *text = NULL;
	struct th_run r;
	size_t len;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	snprintf(pre, sizeof(pre), "echo pre >> '%s'", th_tmp("hooks"));
	snprintf(post, sizeof(post), "echo post >> '%s'", th_tmp("hooks"));
	th_tacho(&r, "stat", "-r", "3", "--pre", pre, "--post", post, "-e", "page-faults", "--",
		 th_prog("stat-helper"), "writes", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(tc_read_file(th_tmp("hooks"), &text, &len, 1 << 20), 0);
	assert_string_equal(text, "pre\npost\npre\npost\npre\npost\n");
	free(text);
	th_run_free(&r);

	th_tacho(&r, "stat", "--pre", "exit 3", "-e", WRITE_EVENT, "--", th_prog("stat-helper"),
		 "writes", "1", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: --pre 'exit 3' failed (exit status 3)");
	/* the run never started */
	assert_not_contains(r.err, "counted    " WRITE_EVENT);
	th_run_free(&r);

	th_tacho(&r, "stat", "-x,", "-o", th_tmp("app.csv"), "-e", WRITE_EVENT, "--",
		 th_prog("stat-helper"), "writes", "2", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "stat", "-x,", "-o", th_tmp("app.csv"), "--append", "-e", WRITE_EVENT, "--",
		 th_prog("stat-helper"), "writes", "3", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	assert_int_equal(tc_read_file(th_tmp("app.csv"), &text, &len, 1 << 20), 0);
	assert_contains(text, "\nevent," WRITE_EVENT ",counted,2,");
	assert_contains(text, "\nevent," WRITE_EVENT ",counted,3,");
	free(text);
}

static void test_usage(void **state)
{
	static const char *const cases[][6] = {
		{ "--perf-layout", "--", "true" },
		{ "-n", "-e", "page-faults", "--", "true" },
		{ "-n", "-a" },
		{ "--log-fd", "987", "--", "true" },
		{ "--log-fd", "2", "-o", "x", "--", "true" },
		{ "-x,", "--perf-layout", "-A", "-a", "--", "true" },
		{ "--timeout", "5", "--", "true" },
		{ "--interval-count", "2", "--", "true" },
		{ "--timeout", "100", "-I", "10", "--", "true" },
		{ "--append", "--", "true" },
		{ "--pre", "true", "-a" },
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_layout),
		cmocka_unit_test(test_perf_layout_interval),
		cmocka_unit_test(test_no_inherit),
		cmocka_unit_test(test_null_and_times),
		cmocka_unit_test(test_quiet_and_log_fd),
		cmocka_unit_test(test_interval_runs),
		cmocka_unit_test_teardown(test_timeout_and_interval_count, th_procs_teardown),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_hooks_and_append),
		cmocka_unit_test(test_usage),
	};

	personality(ADDR_NO_RANDOMIZE);
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
