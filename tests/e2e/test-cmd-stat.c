/* test-cmd-stat.c - `tacho stat` end to end, with exact answers where this machine gives
 * them (DESIGN.md 4): page faults, tracepoint hits, breakpoint hits of a helper program
 * with known behaviour (tests/progs/stat-helper.c); statuses that are never zeros; exit
 * statuses; CSV, JSON and intervals; usage errors.
 *
 * The helper is static and not PIE, and the tests run with address-space randomization
 * off for their children (personality(ADDR_NO_RANDOMIZE), inherited): the start-up of
 * the helper then faults in the same pages on every run, so whole-program page-fault
 * counts are exact, not just close. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "spawn.h"
#include "util/util.h"

static char helper[4096];
static char target_addr[32];

static const char *help(void)
{
	return helper;
}

static void bp_spec(char *buf, size_t size, unsigned copies);

/* The fewest page faults of the helper touching `pages` pages over 7 runs (-r 7). The
 * N fresh pages fault exactly N times, but the program's start-up varies by a fault or
 * two between processes (25 to 27 here, more under load: pages the kernel maps ahead
 * or finds already present); its floor, reached in some run, is what the minimum
 * gives, so the difference of minima is exact. */
static double page_faults_min(const char *pages)
{
	struct th_run r;
	struct th_json *j = th_stat_json(&r, "-r", "7", "-e", "page-faults", "--", help(), "pages",
				      pages, NULL);
	double v;

	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	v = json_num(j, "events[0].min");
	th_json_free(j);
	th_run_free(&r);
	return v;
}

static void bp_spec(char *buf, size_t size, unsigned copies)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < copies; i++)
		len += (size_t)snprintf(buf + len, size - len, "%smem:%s:w:u", i ? "," : "",
					target_addr);
}

/* An exact event and the helper's mode that makes a given number of it: the watched
 * variable's stores where this machine's breakpoints fire, else write(2) calls through
 * their tracepoint. False with *why when neither counts exactly here. */
static bool exact_workload(char *spec, size_t size, const char **mode, const char **why)
{
	if (th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, why)) {
		bp_spec(spec, size, 1);
		*mode = "stores";
		return true;
	}
	if (th_have_write_tracepoint() && th_source_exact(TACHO_SOURCE_TRACEPOINT, why)) {
		snprintf(spec, size, "syscalls:sys_enter_write");
		*mode = "writes";
		return true;
	}
	return false;
}

/* Touching N fresh pages adds exactly N page faults to the program's count. */
static void test_page_faults_exact(void **state)
{
	double base, a, b;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	base = page_faults_min("0");
	a = page_faults_min("1000");
	b = page_faults_min("3000");
	if (a - base != 1000 || b - base != 3000)
		fail_msg("page faults: %g at 0 pages, %g at 1000, %g at 3000", base, a, b);
	assert_true(base > 0);
}

/* -r 5 on a program whose page faults are the same every run: stddev 0 and every
 * statistic equal to the value. */
static void test_repeat_statistics(void **state)
{
	struct th_run r;
	struct th_json *j;
	char spec[128];
	(void)state;

	const char *mode, *why;

	/* every store to the watched variable (or write(2) call) is counted, whatever the
	 * start-up does: the five values are exactly known, so every statistic is */
	if (!exact_workload(spec, sizeof(spec), &mode, &why))
		TEST_SKIP("no exact event here: %s", why);
	j = th_stat_json(&r, "-r", "5", "-e", spec, "--", help(), mode, "500", NULL);
	assert_int_equal(r.status, 0);
	assert_json_int(j, "version", 1);
	assert_json_int(j, "runs", 5);
	assert_json_int(j, "events[0].n", 5);
	assert_int_equal(th_json_get(j, "events[0].values")->n, 5);
	for (int i = 0; i < 5; i++) {
		char p[64];
		snprintf(p, sizeof(p), "events[0].values[%d]", i);
		assert_true(json_num(j, p) == 500);
	}
	assert_true(json_num(j, "events[0].value") == 500);
	assert_true(json_num(j, "events[0].mean") == 500);
	assert_true(json_num(j, "events[0].min") == 500);
	assert_true(json_num(j, "events[0].median") == 500);
	assert_true(json_num(j, "events[0].max") == 500);
	assert_true(json_num(j, "events[0].stddev") == 0);
	assert_true(json_num(j, "events[0].spread_pct") == 0);
	th_json_free(j);
	th_run_free(&r);

	/* the table shows the same */
	th_tacho(&r, "stat", "-r", "3", "-e", "page-faults", "--", help(), "pages", "10", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "3 repetitions");
	assert_contains(r.err, "stddev");
	assert_contains(r.err, "0.00%");
	th_run_free(&r);
}

static void test_tracepoint_writes(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	j = th_stat_json(&r, "-e", "syscalls:sys_enter_write", "--", help(), "writes", "77", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_true(json_num(j, "events[0].value") == 77);
	th_json_free(j);
	th_run_free(&r);

	j = th_stat_json(&r, "-e", "syscalls:sys_enter_write", "--", help(), "writes", "0", NULL);
	assert_true(json_num(j, "events[0].value") == 0);    /* counted, and really zero */
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	th_json_free(j);
	th_run_free(&r);
}

/* Every store exactly where breakpoints fire; where they never do (a hypervisor that
 * does not deliver them), not counted with the reason, never a 0. The same with the
 * test switch on every machine, in JSON, CSV and the table. */
static void test_breakpoint_stores(void **state)
{
	struct th_run r;
	struct th_json *j;
	char spec[128];
	const char *why;
	bool fires = th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, &why);
	(void)state;

	bp_spec(spec, sizeof(spec), 1);
	j = th_stat_json(&r, "-e", spec, "--", help(), "stores", "12345", NULL);
	assert_int_equal(r.status, 0);
	if (fires) {
		assert_string_equal(json_str(j, "events[0].status"), "counted");
		assert_true(json_num(j, "events[0].value") == 12345);
	} else {
		assert_string_equal(json_str(j, "events[0].status"), "not counted");
		assert_json_type(j, "events[0].value", TH_JSON_NULL);
		/* the proof's sentence (the command's hint folded into it) */
		assert_true(strncmp(json_str(j, "events[0].explanation"), why, 40) == 0);
	}
	th_json_free(j);
	th_run_free(&r);

	th_not_firing("breakpoint-data");
	j = th_stat_json(&r, "-e", spec, "--", help(), "stores", "12345", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].status"), "not counted");
	assert_json_type(j, "events[0].value", TH_JSON_NULL);
	assert_json_type(j, "events[0].coverage", TH_JSON_NULL);
	assert_contains(json_str(j, "events[0].explanation"), "TACHO_TEST_NOT_FIRING");
	th_json_free(j);
	th_run_free(&r);
	th_tacho(&r, "stat", "--csv", "-e", spec, "--", help(), "stores", "5", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, ",not counted,,"));
	th_run_free(&r);
	/* every interval of it: not counted, never a number */
	th_tacho(&r, "stat", "--json", "-I", "20", "-e", spec, "--", help(), "sleep", "100", NULL);
	assert_int_equal(r.status, 0);
	{
		size_t lines = 0;
		char *save = NULL;
		for (char *l = strtok_r(r.err, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			struct th_json *iv = assert_json(l);
			assert_json_str(iv, "status", "not counted");
			assert_json_type(iv, "value", TH_JSON_NULL);
			th_json_free(iv);
			lines++;
		}
		assert_true(lines >= 2);
	}
	th_run_free(&r);
	th_tacho(&r, "stat", "-e", spec, "--", help(), "stores", "5", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "<not counted>");
	assert_contains(r.err, "not counted: made not to fire by TACHO_TEST_NOT_FIRING");
	/* no count of it anywhere in the table: the stores are not "0" */
	assert_null(strstr(r.err, " 0    mem:"));
	th_run_free(&r);
	th_not_firing_end();
}

/* Five breakpoints need two runs of the program (four debug registers): every one of
 * them still counts every store, in its run; with -r 3 that is six runs. */
static void test_breakpoints_over_two_runs(void **state)
{
	struct th_run r;
	struct th_json *j;
	char spec[512];
	(void)state;

	const char *why;
	bool fires = th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, &why);

	bp_spec(spec, sizeof(spec), 5);
	j = th_stat_json(&r, "-r", "3", "-e", spec, "--", help(), "stores", "1000", NULL);
	assert_int_equal(r.status, 0);
	assert_json_int(j, "program_runs_per_repetition", 2);
	assert_json_int(j, "runs", 3);
	for (int i = 0; i < 5; i++) {
		char p[64];
		snprintf(p, sizeof(p), "events[%d].program_run", i);
		assert_true(json_num(j, p) == (i < 4 ? 0 : 1));
		snprintf(p, sizeof(p), "events[%d].value", i);
		if (!fires) {
			/* the schedule stands; no store is shown as counted */
			assert_json_type(j, p, TH_JSON_NULL);
			continue;
		}
		if (json_num(j, p) != 1000)
			fail_msg("breakpoint %d counted %g stores, want 1000", i, json_num(j, p));
		snprintf(p, sizeof(p), "events[%d].stddev", i);
		assert_true(json_num(j, p) == 0);
	}
	th_json_free(j);
	th_run_free(&r);

	/* intervals need one run: refused with the reason, and so is a process target */
	th_tacho(&r, "stat", "-I", "100", "-e", spec, "--", help(), "stores", "1", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "intervals need them counted in one run");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
	th_tacho(&r, "stat", "-e", spec, "-p", "1", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot be run again");
	/* the debug registers are the reason, whatever --multiplex says */
	assert_contains(r.err, "breakpoints asked, and at most 4 count at once");
	th_run_free(&r);
	th_tacho(&r, "stat", "--multiplex", "-e", spec, "-p", "1", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "even with --multiplex");
	assert_null(strstr(r.err, "use --multiplex"));
	th_run_free(&r);
}

/* A group wider than the debug registers is never opened, and says why; the value is
 * null in JSON, empty in CSV, "<not counted>" in the table: never 0. */
static void test_never_zero(void **state)
{
	struct th_run r;
	struct th_json *j;
	char spec[512], group[600];
	const char *csv_line;
	(void)state;

	/* beside them an event no proof is asked for: it counts wherever tacho runs */
	bp_spec(spec, sizeof(spec), 5);
	snprintf(group, sizeof(group), "{%s},task-clock", spec);
	j = th_stat_json(&r, "-e", group, "--", help(), "stores", "5", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].status"), "not counted");
	assert_json_type(j, "events[0].value", TH_JSON_NULL);
	assert_contains(json_str(j, "events[0].explanation"), "breakpoint registers");
	assert_string_equal(json_str(j, "events[5].status"), "counted");
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "stat", "--csv", "-e", group, "--", help(), "stores", "5", NULL);
	assert_int_equal(r.status, 0);
	csv_line = strstr(r.err, "\nevent,mem:");
	assert_non_null(csv_line);
	/* kind,name,status,value,... : the value field is empty */
	assert_true(strncmp(strstr(csv_line + 1, ",not counted,"), ",not counted,,", 14) == 0);
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", group, "--", help(), "stores", "5", NULL);
	assert_contains(r.err, "<not counted>");
	assert_contains(r.err, "needs 5 breakpoint registers");
	th_run_free(&r);

	/* hardware events on a machine without a PMU: not supported, with the reason */
	if (access("/sys/bus/event_source/devices/cpu", F_OK) == 0)
		return;
	j = th_stat_json(&r, "-e", "cycles,page-faults", "--", help(), "pages", "1", NULL);
	assert_string_equal(json_str(j, "events[0].status"), "not supported");
	assert_json_type(j, "events[0].value", TH_JSON_NULL);
	assert_contains(json_str(j, "events[0].explanation"), "PMU");
	th_json_free(j);
	th_run_free(&r);
}

static void test_context_switches(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	j = th_stat_json(&r, "-e", "context-switches,task-clock", "--", help(), "sleep", "20", NULL);
	assert_int_equal(r.status, 0);
	/* every sleep gives the CPU away at least once */
	assert_true(json_num(j, "events[0].value") >= 20);
	assert_string_equal(json_str(j, "events[1].unit"), "msec");
	assert_true(json_num(j, "events[1].value") > 0);
	th_json_free(j);
	th_run_free(&r);
}

static void test_exit_status(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	j = th_stat_json(&r, "-e", "page-faults", "--", help(), "exit", "3", NULL);
	assert_int_equal(r.status, 3);
	assert_json_int(j, "exit_status", 3);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	th_json_free(j);
	th_run_free(&r);

	/* killed by SIGSEGV: 128 + 11, and the counts are still there */
	j = th_stat_json(&r, "-e", "page-faults", "--", help(), "segv", NULL);
	assert_int_equal(r.status, 139);
	assert_json_int(j, "exit_status", 139);
	assert_json_int(j, "signal", 11);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_true(json_num(j, "events[0].value") > 0);
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", "page-faults", "--", help(), "segv", NULL);
	assert_int_equal(r.status, 139);
	assert_contains(r.err, "page-faults");
	assert_contains(r.err, "killed by signal 11");
	th_run_free(&r);
}

static void test_no_such_program(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stat", "-e", "page-faults", "--", "/nonexistent/tacho-test-prog", NULL);
	assert_int_equal(r.status, 127);
	assert_string_equal(r.err, "tacho: cannot run '/nonexistent/tacho-test-prog': no such "
				   "file\n");
	th_run_free(&r);
	th_tacho(&r, "stat", "-e", "page-faults", "--", "tacho-no-such-program-anywhere", NULL);
	assert_int_equal(r.status, 127);
	assert_contains(r.err, "no such program in PATH");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
	/* a file that is not executable: 126, as a shell says */
	th_tacho(&r, "stat", "-e", "page-faults", "--", th_path("tests/progs/stat-helper.c"), NULL);
	assert_int_equal(r.status, 126);
	assert_contains(r.err, "permission denied");
	th_run_free(&r);
}

static void test_csv(void **state)
{
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	th_tacho(&r, "stat", "--csv", "-e", "page-faults,task-clock", "--", help(), "pages", "1",
		 NULL);
	assert_int_equal(r.status, 0);
	assert_true(strncmp(r.err, "kind,name,status,value,unit,coverage,runs,mean,stddev,min,"
				   "median,max,spread_pct,explanation\n", 84) == 0);
	assert_contains(r.err, "\nevent,page-faults,counted,");
	assert_contains(r.err, "\nevent,task-clock,counted,");
	assert_contains(r.err, ",msec,");
	th_run_free(&r);

	th_tacho(&r, "stat", "-x", ";", "-e", "page-faults", "--", help(), "pages", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_true(strncmp(r.err, "kind;name;status;value;", 23) == 0);
	assert_contains(r.err, "\nevent;page-faults;counted;");
	th_run_free(&r);
}

static void test_json_contract(void **state)
{
	struct th_run r;
	struct th_json *j;
	const struct th_json *ev;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	j = th_stat_json(&r, "-e", "page-faults,context-switches", "--", help(), "pages", "3", NULL);
	assert_int_equal(r.status, 0);
	assert_json_int(j, "version", 1);
	assert_json_int(j, "runs", 1);
	assert_json_int(j, "exit_status", 0);
	ev = th_json_get(j, "events");
	assert_non_null(ev);
	assert_int_equal(ev->type, TH_JSON_ARRAY);
	assert_int_equal(ev->n, 2);
	for (size_t i = 0; i < ev->n; i++) {
		char p[64];
		snprintf(p, sizeof(p), "events[%zu].name", i);
		assert_json_type(j, p, TH_JSON_STRING);
		snprintf(p, sizeof(p), "events[%zu].status", i);
		assert_json_type(j, p, TH_JSON_STRING);
		snprintf(p, sizeof(p), "events[%zu].value", i);
		assert_json_type(j, p, TH_JSON_NUMBER);
		snprintf(p, sizeof(p), "events[%zu].unit", i);
		assert_json_type(j, p, TH_JSON_STRING);
	}
	/* no -r: no statistics keys */
	assert_null(th_json_get(j, "events[0].stddev"));
	assert_json_str(j, "events[0].name", "page-faults");
	th_json_free(j);
	th_run_free(&r);
}

/* -o FILE gets the results; the program's own output is untouched on stdout and
 * tacho says nothing on stderr. */
static void test_output_file(void **state)
{
	struct th_run r;
	char path[] = "/tmp/tacho-stat-test-XXXXXX";
	char *text = NULL;
	size_t len;
	struct th_json *j;
	int fd;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	th_tacho(&r, "stat", "--json", "-o", path, "-e", "page-faults", "--", help(), "out",
		 "hello from the program\n", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "hello from the program\n");
	assert_string_equal(r.err, "");
	th_run_free(&r);
	assert_int_equal(tc_read_file(path, &text, &len, 0), 0);
	assert_true(len > 0);
	j = assert_json(text);
	assert_json_str(j, "events[0].status", "counted");
	th_json_free(j);
	free(text);
	unlink(path);

	/* an output file that cannot be written: one line, exit 1 */
	th_tacho(&r, "stat", "-o", "/nonexistent/dir/out", "-e", "page-faults", "--", help(),
		 "exit", "0", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot write '/nonexistent/dir/out'");
	th_run_free(&r);
}

/* JSON lines per interval and event; the intervals add up to the whole run exactly. */
static void test_intervals(void **state)
{
	struct th_run r;
	double base, sum = 0;
	size_t lines = 0;
	char *save = NULL, *line;
	char spec[128];
	(void)state;

	const char *mode, *why;

	/* the intervals of one run add up to exactly the stores (or writes) the program
	 * made */
	if (!exact_workload(spec, sizeof(spec), &mode, &why))
		TEST_SKIP("no exact event here: %s", why);
	base = 200000;
	th_tacho(&r, "stat", "--json", "-I", "5", "-e", spec, "--", help(), mode, "200000",
		 NULL);
	assert_int_equal(r.status, 0);
	for (line = strtok_r(r.err, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct th_json *j = assert_json(line);
		assert_json_str(j, "name", spec);
		assert_json_type(j, "time", TH_JSON_NUMBER);
		if (th_json_get(j, "value")->type == TH_JSON_NUMBER)
			sum += json_num(j, "value");
		th_json_free(j);
		lines++;
	}
	assert_true(lines >= 1);
	if (sum != base)
		fail_msg("intervals add up to %g %s, the program made %g", sum, mode, base);
	th_run_free(&r);

	/* a program that sleeps ~60 ms with -I 10: several intervals, CSV with a header */
	th_tacho(&r, "stat", "--csv", "-I", "10", "-e", "context-switches", "--", help(),
		 "sleep", "60", NULL);
	assert_int_equal(r.status, 0);
	assert_true(strncmp(r.err, "time,name,status,value,unit,coverage,explanation,run\n",
			    53) == 0);
	assert_true(th_count_lines(r.err) >= 3);
	th_run_free(&r);

	/* intervals the sleeping program spends off the CPU: its task-bound events could
	 * count nothing, so each such interval is a counted 0, never "not counted" */
	th_tacho(&r, "stat", "--json", "-I", "20", "-e", "page-faults", "--", "sleep", "0.2",
		 NULL);
	assert_int_equal(r.status, 0);
	lines = 0;
	save = NULL;
	for (line = strtok_r(r.err, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct th_json *j = assert_json(line);
		assert_json_str(j, "status", "counted");
		assert_json_type(j, "value", TH_JSON_NUMBER);
		th_json_free(j);
		lines++;
	}
	assert_true(lines >= 3);
	th_run_free(&r);
}

/* -p PID counts a running process until it ends. */
/* -p and -t attach to a process already running, so the test must not guess how long
 * tacho takes to start (on a loaded machine, under ASan, it can take longer than any
 * fixed spin): the helper spins until killed, tacho runs beside it, and the helper is
 * killed only once tacho has shown progress: with -I, `lines` lines of output; without,
 * a perf event open in tacho and CPU time the helper spent after that. */
static unsigned long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long utime = 0, stime = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
		       &utime, &stime);
	fclose(f);
	return utime + stime;
}

static bool has_perf_fd(pid_t pid)
{
	char dir[64], link[384], target[128];
	struct dirent *d;
	bool found = false;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	dp = opendir(dir);
	if (!dp)
		return false;
	while (!found && (d = readdir(dp))) {
		ssize_t n;

		snprintf(link, sizeof(link), "%s/%s", dir, d->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			found = strstr(target, "perf_event") != NULL;
		}
	}
	closedir(dp);
	return found;
}

static void stat_spinner(struct th_run *r, const char *flag, const char *interval,
			 unsigned lines)
{
	char pidbuf[32], outpath[] = "/tmp/test-cmd-stat-XXXXXX";
	const char *argv[12];
	unsigned long ticks0 = 0;
	size_t na = 0;
	pid_t spin, tacho;
	int fd, st, polls = 0;

	fd = mkstemp(outpath);
	assert_true(fd >= 0);
	spin = fork();
	assert_true(spin >= 0);
	if (spin == 0) {
		execl(helper, helper, "spin", "600000", (char *)NULL);
		_exit(127);
	}
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)spin);
	argv[na++] = th_tacho_bin();
	argv[na++] = "stat";
	argv[na++] = "--json";
	if (interval) {
		argv[na++] = "-I";
		argv[na++] = interval;
	}
	argv[na++] = "-e";
	argv[na++] = "task-clock";
	argv[na++] = flag;
	argv[na++] = pidbuf;
	argv[na] = NULL;
	tacho = fork();
	assert_true(tacho >= 0);
	if (tacho == 0) {
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	/* progress, not time: 6000 polls of 10 ms only bound a test that would hang */
	for (;; polls++) {
		if (polls > 6000 || waitpid(tacho, &st, WNOHANG) == tacho)
			break;
		if (interval) {
			char buf[65536];
			ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

			buf[n > 0 ? n : 0] = 0;
			if (n > 0 && th_count_lines(buf) >= lines)
				break;
		} else if (!ticks0) {
			if (has_perf_fd(tacho))
				ticks0 = cpu_ticks(spin) + 1;
		} else if (cpu_ticks(spin) > ticks0) {
			break;
		}
		usleep(10000);
	}
	kill(spin, SIGKILL);
	waitpid(spin, NULL, 0);
	if (polls <= 6000 && waitpid(tacho, &st, 0) != tacho)
		st = -1;
	memset(r, 0, sizeof(*r));
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	{
		struct stat sb;

		assert_int_equal(fstat(fd, &sb), 0);
		r->err = calloc(1, (size_t)sb.st_size + 1);
		assert_non_null(r->err);
		assert_int_equal(pread(fd, r->err, (size_t)sb.st_size, 0), sb.st_size);
		r->err_len = (size_t)sb.st_size;
	}
	close(fd);
	unlink(outpath);
	if (polls > 6000)
		fail_msg("tacho stat %s made no progress in 60 s: %s", flag, r->err);
}

static void test_pid_target(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	stat_spinner(&r, "-p", NULL, 0);
	assert_int_equal(r.status, 0);
	j = assert_json(r.err);
	assert_json_type(j, "exit_status", TH_JSON_NULL);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_true(json_num(j, "events[0].value") > 0);
	th_json_free(j);
	th_run_free(&r);

	/* -p with -I: JSON lines while it runs, ending when it ends */
	stat_spinner(&r, "-p", "50", 3);
	assert_int_equal(r.status, 0);
	assert_true(th_count_lines(r.err) >= 3);
	{
		char *save = NULL;
		for (char *line = strtok_r(r.err, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			struct th_json *lj = assert_json(line);
			assert_json_str(lj, "name", "task-clock");
			th_json_free(lj);
		}
	}
	th_run_free(&r);

	/* -t: the main thread of a process (its tid is its pid) */
	stat_spinner(&r, "-t", NULL, 0);
	assert_int_equal(r.status, 0);
	j = assert_json(r.err);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_true(json_num(j, "events[0].value") > 0);
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", "task-clock", "-p", "2147483646", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "2147483646");
	th_run_free(&r);
}

/* A SIGINT sent to tacho (as `kill -INT` does) reaches the program; tacho still prints
 * what it counted and exits as the program did: 128 + 2. */
/* Whether a child of process pid is running the helper program (has exec'd it). */
static bool runs_helper(pid_t pid)
{
	char path[96], kids[4096], cmd[4096];
	char *save = NULL;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(kids, sizeof(kids), f))
		kids[0] = 0;
	fclose(f);
	for (char *k = strtok_r(kids, " \n", &save); k && !found;
	     k = strtok_r(NULL, " \n", &save)) {
		size_t n;

		snprintf(path, sizeof(path), "/proc/%s/cmdline", k);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(cmd, 1, sizeof(cmd) - 1, f);
		fclose(f);
		cmd[n] = 0;
		found = n > 0 && !strcmp(cmd, helper);
	}
	return found;
}

static void test_interrupt(void **state)
{
	int pe[2], st;
	char buf[8192];
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	assert_int_equal(pipe(pe), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pe[1], 2);
		close(pe[0]);
		execl(th_tacho_bin(), th_tacho_bin(), "stat", "-e", "page-faults", "--", helper,
		      "sleep", "10000", (char *)NULL);
		_exit(127);
	}
	close(pe[1]);
	/* the signal goes once tacho runs the program (its child has exec'd the helper),
	 * not after a guessed time: a loaded machine may take longer to get there */
	for (int polls = 0; !runs_helper(pid); polls++) {
		if (polls > 6000)
			fail_msg("tacho did not start the program in 60 s");
		usleep(10000);
	}
	assert_int_equal(kill(pid, SIGINT), 0);
	while ((n = read(pe[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(pe[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 130);
	assert_contains(buf, "page-faults");
	assert_contains(buf, "killed by signal 2");
	assert_not_contains(buf, "<not counted>");
}

/* A SIGINT right after tacho starts, 30 times, a millisecond later each time (before
 * its handlers, while it sets up, while the program is held before its exec, once it
 * runs): every run ends as the signal ends it, 128 + 2. A signal taken by tacho's
 * handler before the forwarding to the program began was lost (the program ran its
 * whole 3 s, exit 0), and one forwarded to the program held before its exec ran
 * tacho's handler copied into it. */
static void test_interrupt_early(void **state)
{
	(void)state;

	for (int i = 0; i < 30; i++) {
		int st = 0, null = open("/dev/null", O_WRONLY);
		pid_t pid, w = 0;
		double end;

		assert_true(null >= 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			dup2(null, 1);
			dup2(null, 2);
			execl(th_tacho_bin(), th_tacho_bin(), "stat", "-e", "page-faults", "--",
			      helper, "sleep", "3000", (char *)NULL);
			_exit(127);
		}
		close(null);
		usleep((useconds_t)i * 1000);
		assert_int_equal(kill(pid, SIGINT), 0);
		/* a deadline for ending at all, not a measure of how fast */
		for (end = th_now() + 30; w == 0 && th_now() < end; usleep(5000))
			w = waitpid(pid, &st, WNOHANG);
		if (w == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			fail_msg("try %d (SIGINT %d ms after the start): tacho did not end", i, i);
		}
		assert_int_equal(w, pid);
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 130) &&
		    !(WIFSIGNALED(st) && WTERMSIG(st) == SIGINT))
			fail_msg("try %d (SIGINT %d ms after the start): %s %d, not the signal's "
				 "status", i, i, WIFEXITED(st) ? "exit" : "signal",
				 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
}

/* -C: everything on CPU 0 while the program runs (needs privilege at paranoid > 0). */
static void test_cpu_target(void **state)
{
	struct th_run r;
	struct th_json *j;
	long long paranoid;
	(void)state;

	if (tc_read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) != 0)
		paranoid = 2;     /* the default: a CPU needs privilege */
	if (geteuid() != 0 && paranoid > 0)
		TEST_SKIP("counting a CPU needs root or perf_event_paranoid <= 0 (it is %lld)",
			  paranoid);
	j = th_stat_json(&r, "-C", "0", "-e", "cpu-clock", "--", help(), "sleep", "20", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	/* the CPU's clock runs all the time the program does, busy or idle: at least
	 * the 20 ms it slept */
	assert_true(json_num(j, "events[0].value") >= 20.0);
	assert_json_int(j, "exit_status", 0);
	th_json_free(j);
	th_run_free(&r);
}

/* -C with a CPU that is not online: a usage error that names the online CPUs (it was
 * counted as "not supported ... the kernel rejected an option", exit 0). */
static void test_cpu_not_online(void **state)
{
	struct th_run r;
	char online[256] = "", arg[32];
	int *on = NULL;
	size_t n = 0;
	(void)state;

	assert_int_equal(tc_online_cpus(&on, &n), 0);
	assert_true(n > 0);
	assert_int_equal(tc_read_line_file("/sys/devices/system/cpu/online", online,
					   sizeof(online)), 0);
	/* one past the last online CPU is not online, and neither is 4095 here */
	snprintf(arg, sizeof(arg), "%d", on[n - 1] + 1);
	free(on);
	th_tacho(&r, "stat", "-C", arg, "--", help(), "exit", "0", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "is not online (online: ");
	assert_contains(r.err, online);
	assert_not_contains(r.err, "not supported");
	th_run_free(&r);
	th_tacho(&r, "stat", "-C", "0,4095", "--", help(), "exit", "0", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "CPU 4095 is not online");
	th_run_free(&r);
}

/* "CPUs utilized" never exceeds the CPUs counted: the wall time of a CPU target spans
 * the counters' enabled time (it began at the program's exec: 30.9 CPUs for -C 1). */
static void test_cpus_utilized_bounded(void **state)
{
	static const struct {
		const char *cpus;
		double max;
	} cases[] = { { "0", 1 }, { "0-1", 2 } };
	struct th_run r;
	struct th_json *j;
	long long paranoid;
	int *on = NULL;
	size_t n = 0;
	(void)state;

	if (tc_read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) != 0)
		paranoid = 2;
	if (geteuid() != 0 && paranoid > 0)
		TEST_SKIP("counting a CPU needs root or perf_event_paranoid <= 0 (it is %lld)",
			  paranoid);
	assert_int_equal(tc_online_cpus(&on, &n), 0);
	free(on);
	for (size_t i = 0; i < ARRAY_SIZE(cases) && cases[i].max <= (double)n; i++) {
		/* a program that ends at once: the counters' set-up is most of the time */
		j = th_stat_json(&r, "-C", cases[i].cpus, "-e", "task-clock", "--", help(), "exit",
			      "0", NULL);
		assert_int_equal(r.status, 0);
		assert_string_equal(json_str(j, "metrics[0].name"), "CPUs utilized");
		assert_true(json_num(j, "metrics[0].value") > 0);
		assert_true(json_num(j, "metrics[0].value") <= cases[i].max);
		th_json_free(j);
		th_run_free(&r);
	}
}

/* Bytes from outside: a program argument "\xff\xfe" leaves the JSON valid UTF-8 (as
 * \ufffd); an escape sequence in an argument or an event spec reaches the terminal
 * as \xHH, never raw (it could set the window title). */
static void test_outside_bytes(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	j = th_stat_json(&r, "-e", "page-faults", "--", help(), "out", "\xff\xfe", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "command[2]"), "\xef\xbf\xbd\xef\xbf\xbd");
	assert_contains(r.err, "\"\\ufffd\\ufffd\"");
	assert_null(strchr(r.err, '\xff'));
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", "page-faults", "--", help(), "out", "\x1b]0;pwned\x07", NULL);
	assert_int_equal(r.status, 0);
	assert_null(strchr(r.err, '\x1b'));
	assert_null(strchr(r.err, '\x07'));
	assert_contains(r.err, "\\x1b]0;pwned\\x07");
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", "page\x1b[2J", "--", help(), "exit", "0", NULL);
	assert_int_equal(r.status, 2);
	assert_null(strchr(r.err, '\x1b'));
	th_run_free(&r);
	th_tacho(&r, "stat", "-e", "page-faults", "--", "/nonexistent/\x1b[2J", NULL);
	assert_int_equal(r.status, 127);
	assert_null(strchr(r.err, '\x1b'));
	assert_contains(r.err, "\\x1b[2J");
	th_run_free(&r);
}

static void test_default_and_all(void **state)
{
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	th_tacho(&r, "stat", "--", help(), "pages", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "page-faults");
	assert_contains(r.err, "task-clock");
	if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0) {
		assert_contains(r.err, "tacho: no hardware PMU on this machine (");
		assert_contains(r.err, "counting software events; see 'tacho doctor'");
		assert_not_contains(r.err, "cycles");
	}
	th_run_free(&r);

	/* with --json on stderr, the reason travels inside the JSON, which stays valid */
	if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0) {
		struct th_json *j = th_stat_json(&r, "--", help(), "pages", "1", NULL);
		assert_int_equal(r.status, 0);
		assert_contains(json_str(j, "note"), "no hardware PMU on this machine");
		th_json_free(j);
		th_run_free(&r);
	}

	/* --all: every software event at least; no progress line when stderr is a pipe */
	th_tacho(&r, "stat", "--all", "--csv", "--", help(), "pages", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "\nevent,page-faults,counted,");
	assert_contains(r.err, "\nevent,context-switches,counted,");
	assert_contains(r.err, "\nevent,cpu-clock,counted,");
	assert_not_contains(r.err, "\r");
	th_run_free(&r);
}

static const struct {
	const char *args[8];
	const char *msg;
} usage_cases[] = {
	{ { "-r", "0", "--", "true" }, "-r must be at least 1" },
	{ { "-r", "x", "--", "true" }, "bad value for -r" },
	{ { "-x", "ab", "--", "true" }, "-x takes one character" },
	{ { "--json", "--csv", "--", "true" }, "choose one output format" },
	{ { "-p", "abc" }, "bad pid 'abc'" },
	{ { "-e", "page-faults" }, "no program to run" },
	{ { "-p", "1", "--", "true" }, "no program to run ('true')" },
	{ { "-p", "1", "-a" }, "one target at most" },
	{ { "-C", "3-1" }, "bad CPU list '3-1'" },
	{ { "-r", "2", "-p", "1" }, "-r and --warmup need a program" },
	{ { "--bogus", "--", "true" }, "unknown option" },
	{ { "-e", "page-faults:q", "--", "true" }, "bad event list" },
	{ { "--all", "-e", "cycles", "--", "true" }, "--all and -e" },
	{ { "-I", "0", "--", "true" }, "-I must be at least 1 ms" },
};

static void test_usage_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(usage_cases); i++) {
		const char *argv[16] = { th_tacho_bin(), "stat" };
		struct th_run r;
		size_t n = 2;
		for (size_t k = 0; usage_cases[i].args[k]; k++)
			argv[n++] = usage_cases[i].args[k];
		th_runv(&r, NULL, (char *const *)argv);
		if (r.status != 2 || !strstr(r.err, usage_cases[i].msg))
			fail_msg("usage case %zu (%s ...): exit %d, stderr: %s", i,
				 usage_cases[i].args[0], r.status, r.err);
		/* one line of error, then the usage lines; for a bad event, the event list
		 * with a caret under the fault instead */
		if (strstr(usage_cases[i].msg, "bad event list")) {
			if (!strstr(r.err, "\npage-faults:q\n            ^\n"))
				fail_msg("usage case %zu: no caret: %s", i, r.err);
		} else if (strncmp(r.err, "tacho", 5) != 0 ||
			   !strstr(r.err, "\nusage: tacho stat"))
			fail_msg("usage case %zu: stderr does not start with the error and go on "
				 "with the usage: %s", i, r.err);
		th_run_free(&r);
	}
}

static void test_help(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stat", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho stat");
	assert_contains(r.out, "--multiplex");
	th_run_free(&r);
	th_tacho(&r, "help", "stat", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho stat");
	th_run_free(&r);
}

static int setup(void **state)
{
	struct th_run r;
	char addr_arg[] = "addr";
	char *const argv[] = { helper, addr_arg, NULL };
	struct stat st;
	(void)state;

	/* absolute: -p runs it directly */
	snprintf(helper, sizeof(helper), "%s", th_prog("stat-helper"));
	if (stat(helper, &st) != 0) {
		fprintf(stderr, "the helper %s is missing (make tests builds it)\n", helper);
		return -1;
	}
	th_runv(&r, NULL, argv);
	snprintf(target_addr, sizeof(target_addr), "%s", r.out);
	target_addr[strcspn(target_addr, "\n")] = '\0';
	th_run_free(&r);
	return strncmp(target_addr, "0x", 2) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_faults_exact),
		cmocka_unit_test(test_repeat_statistics),
		cmocka_unit_test(test_tracepoint_writes),
		cmocka_unit_test(test_breakpoint_stores),
		cmocka_unit_test(test_breakpoints_over_two_runs),
		cmocka_unit_test(test_never_zero),
		cmocka_unit_test(test_context_switches),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_no_such_program),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_json_contract),
		cmocka_unit_test(test_output_file),
		cmocka_unit_test(test_intervals),
		cmocka_unit_test(test_pid_target),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_interrupt_early),
		cmocka_unit_test(test_cpu_target),
		cmocka_unit_test(test_cpu_not_online),
		cmocka_unit_test(test_cpus_utilized_bounded),
		cmocka_unit_test(test_outside_bytes),
		cmocka_unit_test(test_default_and_all),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_help),
	};

	/* the children (tacho, and through it the helper) run without address-space
	 * randomization: see the top of this file */
	personality(ADDR_NO_RANDOMIZE);
	return cmocka_run_group_tests(tests, setup, NULL);
}
