/* test-stat-faults.c - `tacho stat` under faults, as real faults: signals to tacho at several
 * moments (while the program runs, between repetitions, twice, SIGKILL), a program that
 * survives the signal, stops itself, forks 200 children, starts 500 threads, execs,
 * crashes. Each test states what must survive: the exit status, the counts where the
 * kernel is exact (tracepoint hits), one line of explanation, nothing left running.
 *
 * The helpers (tests/progs/fault-helper.c, sample-stubborn.c) give up by themselves
 * after 60 s, and every wait here is bounded, so that a broken tacho fails a test
 * instead of hanging the suite. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

/* tacho running in the background with its stderr on a pipe */
struct bg {
	pid_t pid;
	int err_fd;
};

/* Starts tacho with its stderr on a pipe and, when resource >= 0, that limit set (as
 * `ulimit` would) in the child before the exec. */
static void bg_start_limited(struct bg *b, const char *const argv[], int resource, rlim_t lim)
{
	int pe[2];

	assert_int_equal(pipe(pe), 0);
	b->pid = fork();
	assert_true(b->pid >= 0);
	if (b->pid == 0) {
		struct rlimit rl = { lim, lim };
		dup2(pe[1], 2);
		close(pe[0]);
		close(pe[1]);
		/* no descriptor of the test's but the three standard ones */
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		if (resource >= 0 && setrlimit(resource, &rl) < 0)
			_exit(126);
		execv(th_tacho_bin(), (char *const *)argv);
		_exit(127);
	}
	close(pe[1]);
	b->err_fd = pe[0];
}

static void bg_start(struct bg *b, const char *const argv[])
{
	bg_start_limited(b, argv, -1, 0);
}

/* Reads tacho's stderr to its end and reaps it: its status as a shell says it. */
static int bg_finish(struct bg *b, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int st;

	char sink[4096];

	/* all of it, keeping what fits: a pipe left full would stop tacho */
	while ((n = len < size - 1 ? read(b->err_fd, buf + len, size - 1 - len)
				   : read(b->err_fd, sink, sizeof(sink))) > 0 ||
	       (n < 0 && errno == EINTR))
		if (n > 0 && len < size - 1)
			len += (size_t)n;
	buf[len] = '\0';
	close(b->err_fd);
	assert_int_equal(waitpid(b->pid, &st, 0), b->pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* Waits (at most 30 s: then the test fails) for a file the helper creates. */
static void wait_for_file(const char *path)
{
	for (int i = 0; i < 30000; i++) {
		if (access(path, F_OK) == 0)
			return;
		nap_ms(1);
	}
	fail_msg("%s never appeared", path);
}

/* SIGTERM (then SIGINT) to `stat -r 5` while the program runs: the program takes the
 * signal and ends normally; tacho finishes this repetition, starts no other, says so
 * and exits as the program did. Before: all 5 ran (each waiting for a signal). */
static void test_signal_stops_repetitions(void **state)
{
	static const int sigs[] = { SIGTERM, SIGINT };
	char buf[16384];
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++) {
		const char *ready = th_tmp(i ? "ready-int" : "ready-term");
		const char *argv[] = { th_tacho_bin(), "stat", "-r", "5", "-e", "page-faults", "--",
				       th_prog("fault-helper"), "survive", ready, NULL };
		struct bg b;

		bg_start(&b, argv);
		wait_for_file(ready);
		assert_int_equal(kill(b.pid, sigs[i]), 0);
		assert_int_equal(bg_finish(&b, buf, sizeof(buf)), 0);
		assert_contains(buf, "stopped early: 1 of 5 repetitions");
		assert_contains(buf, "page-faults");
		assert_not_contains(buf, "<not counted>");
	}
}

/* Between repetitions (the signal lands while no program runs: tacho's own handler)
 * the next repetition does not start either. The program here ends by itself quickly,
 * so the signal lands at any moment: before, during or between runs; whichever, tacho
 * stops early and prints the counts it has. */
static void test_signal_at_any_moment(void **state)
{
	char buf[16384];
	(void)state;

	for (long delay = 0; delay <= 40; delay += 20) {
		const char *argv[] = { th_tacho_bin(), "stat", "-r", "100000", "-e", "page-faults",
				       "--", th_prog("stat-helper"), "exit", "0", NULL };
		struct bg b;
		int st;

		bg_start(&b, argv);
		nap_ms(50 + delay);
		assert_int_equal(kill(b.pid, SIGINT), 0);
		st = bg_finish(&b, buf, sizeof(buf));
		/* so early that tacho had not caught the signal yet (a slow start, as under
		 * ASan): it died of it, before any program ran, and said nothing */
		if (st == 128 + SIGINT && !buf[0])
			continue;
		/* the program was between runs (0) or killed by the forwarded SIGINT (130) */
		assert_true(st == 0 || st == 130);
		assert_contains(buf, "stopped early: ");
		assert_contains(buf, " of 100000 repetitions");
		assert_contains(buf, "page-faults");
	}
}

/* A second signal kills a program that ignores the first: SIGKILL, and tacho says how
 * the program ended (128 + 9). Before: it ran on until it gave up (exit 3, 60 s). */
static void test_second_signal_kills(void **state)
{
	const char *ready = th_tmp("stubborn-ready"), *noted = th_tmp("stubborn-noted");
	const char *argv[] = { th_tacho_bin(), "stat", "-e", "page-faults", "--",
			       th_prog("sample-stubborn"), ready, noted, NULL };
	char buf[16384];
	struct bg b;
	(void)state;

	bg_start(&b, argv);
	wait_for_file(ready);
	assert_int_equal(kill(b.pid, SIGTERM), 0);
	wait_for_file(noted);
	assert_int_equal(kill(b.pid, SIGTERM), 0);
	assert_int_equal(bg_finish(&b, buf, sizeof(buf)), 137);
	assert_contains(buf, "killed by signal 9 (SIGKILL)");
	assert_contains(buf, "page-faults");
}

/* SIGKILL to tacho leaves nothing running: the program dies with it (PR_SET_PDEATHSIG).
 * This test is the programs' subreaper, so the orphan comes to it and its end is seen
 * exactly. Before: the program slept on (until it gave up, 60 s). */
static void test_sigkill_leaves_nothing(void **state)
{
	const char *pidfile = th_tmp("pid");
	const char *argv[] = { th_tacho_bin(), "stat", "-e", "page-faults", "--",
			       th_prog("fault-helper"), "pid", pidfile, NULL };
	char buf[64] = "", out[4096];
	struct bg b;
	pid_t prog;
	int st = 0, r = 0;
	FILE *f;
	(void)state;

	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	bg_start(&b, argv);
	wait_for_file(pidfile);
	/* the file exists before the pid is in it */
	for (int i = 0; i < 30000 && !strchr(buf, '\n'); i++) {
		f = fopen(pidfile, "r");
		if (f) {
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = '\0';
			fclose(f);
		}
		nap_ms(1);
	}
	prog = (pid_t)atoi(buf);
	assert_true(prog > 0);
	assert_int_equal(kill(b.pid, SIGKILL), 0);
	assert_int_equal(bg_finish(&b, out, sizeof(out)), 128 + SIGKILL);
	/* the program is ours now: it must end (by SIGKILL) without anyone asking it */
	for (int i = 0; i < 10000 && (r = waitpid(prog, &st, WNOHANG)) == 0; i++)
		nap_ms(1);
	if (r == 0) {
		kill(prog, SIGKILL);
		waitpid(prog, NULL, 0);
		fail_msg("the program outlived tacho killed with SIGKILL");
	}
	assert_int_equal(r, prog);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGKILL);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* A program that stops itself is continued, with a word, and counted to its end.
 * Before: tacho waited forever (here: until timeout killed it). */
static void test_program_stops_itself(void **state)
{
	struct th_run r;
	const char *argv[] = { "timeout", "-s", "KILL", "30", th_tacho_bin(), "stat", "-e",
			       "page-faults", "--", th_prog("fault-helper"), "stop", NULL };
	(void)state;

	th_runv(&r, NULL, (char *const *)argv);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "stopped itself (SIGSTOP): continuing it (SIGCONT)");
	assert_int_equal(th_count_lines(strstr(r.err, "stopped itself")) >= 1, 1);
	assert_contains(r.err, "page-faults");
	th_run_free(&r);
}

/* Counts that follow the program everywhere it goes are exact: one write(2) in each of
 * 200 children, of 500 threads, and 77 after an exec. */
static void test_children_threads_exec(void **state)
{
	static const struct {
		const char *mode, *n;
		double writes;
	} cases[] = {
		{ "forks", "200", 200 },
		{ "threads", "500", 500 },
	};
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		th_tacho(&r, "stat", "--json", "-e", "syscalls:sys_enter_write", "--",
			 th_prog("fault-helper"), cases[i].mode, cases[i].n, NULL);
		assert_int_equal(r.status, 0);
		j = assert_json(r.err);
		assert_string_equal(json_str(j, "events[0].status"), "counted");
		assert_true(json_num(j, "events[0].value") == cases[i].writes);
		th_json_free(j);
		th_run_free(&r);
	}
	th_tacho(&r, "stat", "--json", "-e", "syscalls:sys_enter_write", "--",
		 th_prog("fault-helper"), "exec", th_prog("stat-helper"), "writes", "77", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.err);
	assert_true(json_num(j, "events[0].value") == 77);
	th_json_free(j);
	th_run_free(&r);
}

/* A program that crashes: its counts, its ending in words, 128 + 11. */
static void test_program_crashes(void **state)
{
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	th_tacho(&r, "stat", "-e", "page-faults", "--", th_prog("fault-helper"), "crash", NULL);
	assert_int_equal(r.status, 128 + SIGSEGV);
	assert_contains(r.err, "killed by signal 11 (SIGSEGV)");
	assert_contains(r.err, "page-faults");
	assert_not_contains(r.err, "<not counted>");
	th_run_free(&r);
}

/* Out of file descriptors (ulimit -n 32 .. 34; 12 groups of 3 page-fault events).
 * Where the program can run again, the events are spread over more runs, each within
 * the descriptor limit: everything is counted, every group whole (minor + major =
 * page faults, exactly, as one run counts them), exit 0. With --multiplex (one run), a
 * group is counted whole or not at all, what was not counted says why (too many open
 * files), one line says how many were left out, and the exit status is 1. Three limits:
 * whatever tacho holds open itself, two of them fall inside a group. Before: a group
 * was opened in part, the rest "not supported", exit 0. */
static void test_out_of_descriptors(void **state)
{
	char spec[1024] = "", buf[65536];
	size_t len = 0;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	for (int g = 0; g < 12; g++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s{minor-faults,"
					"major-faults,page-faults}", g ? "," : "");
	for (rlim_t lim = 32; lim <= 34; lim++) {
		const char *argv[] = { th_tacho_bin(), "stat", "--json", "-e", spec, "--",
				       th_prog("stat-helper"), "exit", "0", NULL };
		struct th_json *j;
		struct bg b;
		char path[64];
		int maxrun = 0;

		bg_start_limited(&b, argv, RLIMIT_NOFILE, lim);
		assert_int_equal(bg_finish(&b, buf, sizeof(buf)), 0);
		j = assert_json(buf);
		for (int g = 0; g < 12; g++) {
			double v[3];
			int run0 = -1;
			for (int k = 0; k < 3; k++) {
				snprintf(path, sizeof(path), "events[%d].status", 3 * g + k);
				assert_string_equal(json_str(j, path), "counted");
				snprintf(path, sizeof(path), "events[%d].value", 3 * g + k);
				v[k] = json_num(j, path);
				snprintf(path, sizeof(path), "events[%d].program_run", 3 * g + k);
				if (run0 < 0)
					run0 = (int)json_num(j, path);
				if ((int)json_num(j, path) != run0)
					fail_msg("limit %llu: group %d split over runs",
						 (unsigned long long)lim, g);
			}
			if (v[0] + v[1] != v[2] || v[2] <= 0)
				fail_msg("limit %llu: group %d: %g minor + %g major != %g",
					 (unsigned long long)lim, g, v[0], v[1], v[2]);
			if (run0 > maxrun)
				maxrun = run0;
		}
		/* 36 events do not fit 32..34 descriptors in one run */
		assert_true(maxrun >= 1);
		th_json_free(j);
	}
	for (rlim_t lim = 32; lim <= 34; lim++) {
		const char *argv[] = { th_tacho_bin(), "stat", "--multiplex", "--json", "-e", spec,
				       "--", th_prog("stat-helper"), "exit", "0", NULL };
		struct th_json *j;
		struct bg b;
		size_t counted = 0, not_counted = 0;
		char path[64], *nl;

		bg_start_limited(&b, argv, RLIMIT_NOFILE, lim);
		assert_int_equal(bg_finish(&b, buf, sizeof(buf)), 1);
		/* the JSON, then the line that says it */
		nl = strstr(buf, "\n}\n");
		assert_non_null(nl);
		assert_contains(nl, "tacho: cannot count ");
		assert_contains(nl, " of 36 events: out of file descriptors");
		assert_int_equal(th_count_lines(nl + 3), 1);
		nl[2] = '\0';
		j = assert_json(buf);
		for (int g = 0; g < 12; g++) {
			const char *first = NULL;
			for (int k = 0; k < 3; k++) {
				const char *st;
				snprintf(path, sizeof(path), "events[%d].status", 3 * g + k);
				st = json_str(j, path);
				if (!first)
					first = st;
				if (strcmp(st, first))
					fail_msg("limit %llu: group %d counted in part (%s, %s)",
						 (unsigned long long)lim, g, first, st);
				if (!strcmp(st, "counted")) {
					counted++;
				} else {
					assert_string_equal(st, "not counted");
					snprintf(path, sizeof(path), "events[%d].explanation", 3 * g + k);
					assert_contains(json_str(j, path), "too many open files");
					not_counted++;
				}
			}
		}
		assert_true(counted > 0 && not_counted > 0);
		th_json_free(j);
	}
}

/* The table says why the program ran more than once. */
static void test_descriptor_runs_said(void **state)
{
	const char *argv[] = { th_tacho_bin(), "stat", "-e",
			       "page-faults,page-faults,page-faults,page-faults,page-faults,"
			       "page-faults,page-faults,page-faults,page-faults,page-faults,"
			       "page-faults,page-faults,page-faults,page-faults,page-faults,"
			       "page-faults,page-faults,page-faults,page-faults,page-faults",
			       "--", th_prog("stat-helper"), "exit", "0", NULL };
	char buf[65536];
	struct bg b;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	bg_start_limited(&b, argv, RLIMIT_NOFILE, 24);
	assert_int_equal(bg_finish(&b, buf, sizeof(buf)), 0);
	assert_contains(buf, "runs of the program each to fit the descriptor limit");
	assert_not_contains(buf, "not counted");
}

/* A small address space (ulimit -v): tacho counts, or says in one line that it ran out
 * of memory and exits 1; it never dies of a signal. 3,000 events need more than the
 * smaller limits give. */
static void test_small_address_space(void **state)
{
	static const rlim_t kib[] = { 10000, 12000, 14000, 16000, 64000 };
	char *spec = NULL, buf[65536];
	size_t len = 0, size = 3000 * sizeof("page-faults,");
	bool failed = false, counted = false;
	(void)state;

	if (strstr(th_build_dir(), "asan"))
		TEST_SKIP("AddressSanitizer reserves terabytes of address space: no ulimit -v");
	spec = malloc(size);
	if (!spec)
		fail_msg("out of memory");
	for (int i = 0; i < 3000; i++)
		len += (size_t)snprintf(spec + len, size - len, "%spage-faults", i ? "," : "");
	for (size_t i = 0; i < ARRAY_SIZE(kib); i++) {
		const char *argv[] = { th_tacho_bin(), "stat", "-e", spec, "--",
				       th_prog("stat-helper"), "exit", "0", NULL };
		struct bg b;
		int st;

		bg_start_limited(&b, argv, RLIMIT_AS, kib[i] * 1024);
		st = bg_finish(&b, buf, sizeof(buf));
		if (st == 127 && strstr(buf, "error while loading shared libraries"))
			continue;   /* too small for tacho to start at all: nothing of ours */
		if (st == 0) {
			counted = true;
			assert_contains(buf, "page-faults");
			continue;
		}
		if (st != 1)
			fail_msg("ulimit -v %llu: status %d: %s", (unsigned long long)kib[i], st, buf);
		/* "out of memory" or strerror's "Cannot allocate memory" */
		assert_int_equal(th_count_lines(buf), 1);
		assert_contains(buf, "memory");
		failed = true;
	}
	free(spec);
	/* the limits span both outcomes here; where they do not, say which was seen */
	if (!failed || !counted)
		printf("# ulimit -v: %s only\n", failed ? "out of memory" : "counted");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signal_stops_repetitions),
		cmocka_unit_test(test_signal_at_any_moment),
		cmocka_unit_test(test_second_signal_kills),
		cmocka_unit_test(test_sigkill_leaves_nothing),
		cmocka_unit_test(test_program_stops_itself),
		cmocka_unit_test(test_children_threads_exec),
		cmocka_unit_test(test_program_crashes),
		cmocka_unit_test(test_out_of_descriptors),
		cmocka_unit_test(test_descriptor_runs_said),
		cmocka_unit_test(test_small_address_space),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
