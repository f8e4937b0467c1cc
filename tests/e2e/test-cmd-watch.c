/* test-cmd-watch.c - `tacho watch` on helper programs with known behaviour: --cap 25
 * brings a program's own progress rate to 25 % +- 7 points of its uncapped rate while
 * the rule holds (the uncapped and capped rates measured close together, the program
 * pinned to one CPU: a ratio, robust on a busy machine), and its cgroup's limit is gone
 * when the rule lifts; --exec runs exactly once per crossing (a rate alternating across
 * the threshold inside the hysteresis band fires once, a rate switched on and off twice
 * fires twice); --signal delivers; with no cgroup mounted --cap says so and --duty
 * works (at most a quarter of a CPU, stopped much of the time); SIGTERM lifts every cap
 * and continues a stopped program, and so does tacho's keeper after a SIGKILL; bad
 * input. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"

/* The helper's progress counter (live-helper progress FILE CPU). */
static volatile uint64_t *map_progress(const char *path)
{
	double end = th_now() + 10;
	void *p;
	int fd;

	while ((fd = open(path, O_RDONLY)) < 0 && th_now() < end)
		usleep(10000);
	assert_true(fd >= 0);
	while (lseek(fd, 0, SEEK_END) < 4096 && th_now() < end)
		usleep(10000);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

/* Units of work per second over s seconds. */
static double progress_rate(volatile uint64_t *count, double s)
{
	uint64_t a = *count;
	double t0 = th_now(), t1;

	usleep((useconds_t)(s * 1e6));
	t1 = th_now();
	return (double)(*count - a) / (t1 - t0);
}

static int last_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (int)n - 1 : 0;
}

static void start_progress(struct th_proc *p, const char *file)
{
	char cpu[16];
	char *argv[] = { (char *)th_prog("live-helper"), (char *)"progress", (char *)file, cpu,
			 NULL };

	snprintf(cpu, sizeof(cpu), "%d", last_cpu());
	th_spawn(p, "progress", argv);
}

/* utime + stime of a process, in clock ticks. */
static double proc_ticks(pid_t pid)
{
	char path[64], *st, *c;
	unsigned long long ut = 0, sys = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	st = th_slurp(path);
	c = strrchr(st, ')');
	assert_non_null(c);
	/* after the name: state, then fields 4 to 13, then utime and stime */
	assert_int_equal(sscanf(c + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
				&ut, &sys), 2);
	free(st);
	return (double)(ut + sys);
}

/* Whether tacho watch ended at once saying it cannot cap (no writable controller). */
static bool cannot_cap(struct th_proc *w)
{
	char *err;
	bool no;

	if (!th_proc_wait(w, 0.5))
		return false;
	err = th_slurp(w->err);
	no = strstr(err, "cannot cap") != NULL;
	if (no)
		print_message("%s", err);
	free(err);
	return no;
}

static void test_cap_ratio(void **state)
{
	struct th_proc prog, w;
	char pid[32];
	volatile uint64_t *count;
	double r0, rc, ra, ratio, t0;
	char dir[4096], file[64];
	uint64_t c0;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	start_progress(&prog, th_tmp("count"));
	count = map_progress(th_tmp("count"));
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	{
		/* one write per unit of work until SIGUSR1: thousands a second uncapped,
		 * still far above 50 capped, none after */
		char *argv[] = { (char *)th_tacho_bin(), (char *)"watch", (char *)"-d", (char *)"0.25",
				 (char *)"-e", (char *)"syscalls:sys_enter_write", (char *)"--above",
				 (char *)"50", (char *)"--for", (char *)"1.5", (char *)"--cap",
				 (char *)"25", (char *)"-p", pid, NULL };
		th_spawn(&w, "watch", argv);
	}
	/* uncapped: over the rule's own window, from the start of counting (watch says
	 * its rule then) to the firing, as watch sees it */
	if (!th_wait_for(w.err, "tacho watch: process", 1, 10)) {
		if (cannot_cap(&w)) {
			th_proc_end(&prog);
			TEST_SKIP("no cgroup CPU controller this user can write");
		}
		fail_msg("watch did not start: %s", th_slurp(w.err));
	}
	c0 = *count;
	t0 = th_now();
	for (;;) {
		char *log = th_slurp(w.out);
		bool fired = strstr(log, " fired ") != NULL;
		free(log);
		if (fired)
			break;
		if (th_now() - t0 > 15)
			fail_msg("the rule never fired: %s", th_slurp(w.err));
		usleep(5000);
	}
	r0 = (double)(*count - c0) / (th_now() - t0);
	usleep(1200000);                    /* a few intervals: the quota as measured */
	rc = progress_rate(count, 2.0);
	ratio = rc / r0;
	print_message("uncapped %.0f units/s, capped %.0f units/s: %.1f %%\n", r0, rc, 100 * ratio);
	{
		/* "capped to X CPU by cgroup vN DIR (FILE)": where the limit is */
		char *log = th_slurp(w.out), *by = strstr(log, " by cgroup v");
		assert_non_null(by);
		assert_int_equal(sscanf(by, " by cgroup v%*d %4095s (%63[^)])", dir, file), 2);
		free(log);
	}
	if (fabs(ratio - 0.25) > 0.07)
		fail_msg("capped at %.1f %% of the uncapped rate, not 25 +- 7", 100 * ratio);
	/* the writes stop: the rule lifts after 1.5 s below 45/s, and the rate comes back */
	kill(prog.pid, SIGUSR1);
	if (!th_wait_for(w.out, " lifted ", 1, 15))
		fail_msg("the rule never lifted: %s", th_slurp(w.out));
	/* the limit is gone, exactly (the process is still in tacho's cgroup: it goes
	 * back when tacho ends), and the program runs: its rate against the uncapped one
	 * is printed, not asserted, since the machine's load can change in 10 s */
	{
		char path[PATH_MAX + 80], *q;

		snprintf(path, sizeof(path), "%s/%s", dir, file);
		q = th_slurp(path);
		if (strcmp(q, "-1\n") && strncmp(q, "max ", 4))
			fail_msg("%s reads '%s' after the lift", path, q);
		free(q);
	}
	ra = 0;
	for (double end = th_now() + 10; ra <= 0 && th_now() < end;)
		ra = progress_rate(count, 1.0);
	print_message("after the lift %.0f units/s: %.1f %%\n", ra, 100 * ra / r0);
	assert_true(ra > 0);
	th_proc_kill(&w, SIGTERM);
	assert_true(th_proc_wait(&w, 10));
	assert_int_equal(w.status, 0);
	th_proc_end(&prog);
	munmap((void *)count, 4096);
}

/* A rate crossing the threshold twice: two firings, two liftings, each command once,
 * with the rule, rate and target in its environment. */
static void test_exec_per_crossing(void **state)
{
	char *toggle[] = { (char *)th_prog("live-helper"), (char *)"toggle", (char *)"2000", NULL };
	char fired[256], lifted[256], pid[32], *runs, *log;
	struct th_proc prog, w;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	th_spawn(&prog, "toggle", toggle);
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(fired, sizeof(fired), "echo \"$TACHO_STATE $TACHO_INPUT $TACHO_PID "
		 "$TACHO_THRESHOLD $TACHO_RATE\" >>%s", th_tmp("runs"));
	snprintf(lifted, sizeof(lifted), "echo \"$TACHO_STATE\" >>%s", th_tmp("runs"));
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"watch", (char *)"-d", (char *)"0.2",
				 (char *)"-e", (char *)"syscalls:sys_enter_write", (char *)"--above",
				 (char *)"500", (char *)"--exec", fired, (char *)"--exec-lift", lifted,
				 (char *)"-p", pid, NULL };
		th_spawn(&w, "watch", argv);
	}
	/* on, off, on, off: each change waits for watch to see the one before */
	if (!th_wait_for(w.out, " fired ", 1, 10) ||
	    (kill(prog.pid, SIGUSR1), !th_wait_for(w.out, " lifted ", 1, 10)) ||
	    (kill(prog.pid, SIGUSR1), !th_wait_for(w.out, " fired ", 2, 10)) ||
	    (kill(prog.pid, SIGUSR1), !th_wait_for(w.out, " lifted ", 2, 10)))
		fail_msg("watch did not see every crossing:\n%s%s", th_slurp(w.out),
			 th_slurp(w.err));
	usleep(1000000);                      /* nothing more happens */
	th_proc_kill(&w, SIGTERM);
	assert_true(th_proc_wait(&w, 10));
	assert_int_equal(w.status, 0);
	log = th_slurp(w.out);
	assert_int_equal(th_count(log, " fired "), 2);
	assert_int_equal(th_count(log, " lifted "), 2);
	assert_contains(log, "syscalls:sys_enter_write above 500/s (lifts below 450/s) at ");
	free(log);
	runs = th_slurp(th_tmp("runs"));
	assert_int_equal(th_count(runs, "fired syscalls:sys_enter_write "), 2);
	assert_int_equal(th_count(runs, "lifted\n"), 2);
	{
		char want[128];
		snprintf(want, sizeof(want), "fired syscalls:sys_enter_write %s 500 ", pid);
		assert_contains(runs, want);
	}
	free(runs);
	th_proc_end(&prog);
}

/* A rate that swings between 2000/s and 1000/s every 0.4 s around a threshold of
 * 1500/s: with a hysteresis of 90 % (lifts below 150/s) the rule fires once and holds;
 * without it, it would fire at every swing. (The margin is wide on purpose: on a
 * machine loaded past its cores the helper's low phase was seen below 750/s, which
 * lifted a 50 % hysteresis.) */
static void test_hysteresis(void **state)
{
	char *wave[] = { (char *)th_prog("live-helper"), (char *)"wave", (char *)"2000",
			 (char *)"1000", (char *)"400", NULL };
	char cmd[256], pid[32], *runs, *log;
	struct th_proc prog, w;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	th_spawn(&prog, "wave", wave);
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(cmd, sizeof(cmd), "echo $TACHO_STATE >>%s", th_tmp("wave-runs"));
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"watch", (char *)"-d", (char *)"0.2",
				 (char *)"-e", (char *)"syscalls:sys_enter_write", (char *)"--above",
				 (char *)"1500", (char *)"--hysteresis", (char *)"90", (char *)"--exec",
				 cmd, (char *)"-p", pid, NULL };
		th_spawn(&w, "wave-watch", argv);
	}
	assert_true(th_wait_for(w.out, " fired ", 1, 10));
	usleep(3000000);                      /* several swings */
	th_proc_kill(&w, SIGTERM);
	assert_true(th_proc_wait(&w, 10));
	log = th_slurp(w.out);
	assert_int_equal(th_count(log, " fired "), 1);
	assert_int_equal(th_count(log, " lifted "), 0);
	free(log);
	runs = th_slurp(th_tmp("wave-runs"));
	assert_string_equal(runs, "fired\n");
	free(runs);
	th_proc_end(&prog);
}

/* --signal TERM: the program dies of it, and watch ends with it. */
static void test_signal(void **state)
{
	char *paced[] = { (char *)th_prog("live-helper"), (char *)"toggle", (char *)"1000", NULL };
	struct th_proc prog, w;
	char pid[32], *log;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	th_spawn(&prog, "sig", paced);
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"watch", (char *)"-d", (char *)"0.2",
				 (char *)"-e", (char *)"syscalls:sys_enter_write", (char *)"--above",
				 (char *)"100", (char *)"--signal", (char *)"TERM", (char *)"-p", pid,
				 NULL };
		th_spawn(&w, "sig-watch", argv);
	}
	assert_true(th_proc_wait(&prog, 15));
	assert_int_equal(prog.status, 128 + SIGTERM);
	assert_true(th_proc_wait(&w, 10));
	assert_int_equal(w.status, 0);
	log = th_slurp(w.out);
	assert_contains(log, "signal 15 sent");
	free(log);
}

static bool in_namespace_works(void)
{
	struct th_run r;
	char *argv[] = { (char *)"unshare", (char *)"-m", (char *)"true", NULL };
	bool ok;

	th_runv(&r, NULL, argv);
	ok = r.status == 0;
	th_run_free(&r);
	return ok;
}

/* With no cgroup mounted (a mount namespace where /sys/fs/cgroup is an empty tmpfs):
 * --cap says so and stops, --duty stops and continues the program instead. */
static void test_no_cgroup_duty(void **state)
{
	char cmd[4096], pid[32], *err;
	volatile uint64_t *count;
	struct th_proc prog, w;
	struct th_run r;
	double r0, rd;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	if (!in_namespace_works())
		TEST_SKIP("no mount namespace (unshare -m) here");
	start_progress(&prog, th_tmp("count2"));
	count = map_progress(th_tmp("count2"));
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(cmd, sizeof(cmd), "mount -t tmpfs none /sys/fs/cgroup && exec %s watch -e "
		 "syscalls:sys_enter_write --above 50 --cap 25 -p %s", th_tacho_bin(), pid);
	{
		char *argv[] = { (char *)"unshare", (char *)"-m", (char *)"sh", (char *)"-c", cmd,
				 NULL };
		th_runv(&r, NULL, argv);
	}
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot cap process");
	assert_contains(r.err, "no cgroup CPU controller this user can write");
	assert_contains(r.err, "--duty");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);

	snprintf(cmd, sizeof(cmd), "mount -t tmpfs none /sys/fs/cgroup && exec %s watch -d 0.25 "
		 "-e syscalls:sys_enter_write --above 50 --for 1 --duty 25 -p %s", th_tacho_bin(),
		 pid);
	{
		char *argv[] = { (char *)"unshare", (char *)"-m", (char *)"sh", (char *)"-c", cmd,
				 NULL };
		th_spawn(&w, "duty", argv);
	}
	usleep(200000);
	r0 = progress_rate(count, 0.7);
	assert_true(th_wait_for(w.out, " fired ", 1, 15));
	usleep(200000);
	/* it may run a quarter of each 100 ms: its CPU time over 2 s is at most a quarter
	 * of a CPU (7 points for the scheduler tick and the wake-ups; a busy machine only
	 * gives it less), it is seen stopped much of the time, and it runs in between. Not
	 * its progress against its free rate: on a busy machine a program continued after
	 * a stop gets the CPU at once, on its sleeper's credit, so its rate falls by less
	 * than the time it may run; nor exactly 75 % of its states read 'T', since a
	 * program waiting for the CPU reads 'R' until it takes the SIGSTOP */
	{
		char path[64];
		unsigned stopped = 0, n = 0;
		uint64_t c0 = *count;
		double t0 = th_now(), ticks0 = proc_ticks(prog.pid), used;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)prog.pid);
		for (double end = t0 + 2; th_now() < end; n++, usleep(2000)) {
			char *st = th_slurp(path), *c = strrchr(st, ')');
			assert_non_null(c);
			stopped += c[2] == 'T';
			free(st);
		}
		used = (proc_ticks(prog.pid) - ticks0) / (double)sysconf(_SC_CLK_TCK) /
		       (th_now() - t0);
		rd = (double)(*count - c0) / (th_now() - t0);
		print_message("duty 25 %%: %.1f %% of a CPU, stopped in %u of %u samples "
			      "(%.1f %%); %.0f -> %.0f units/s\n", 100 * used, stopped, n,
			      100.0 * stopped / n, r0, rd);
		if (used > 0.32)
			fail_msg("it used %.1f %% of a CPU under --duty 25", 100 * used);
		if ((double)stopped / n < 0.4)
			fail_msg("stopped in %.1f %% of the samples only", 100.0 * stopped / n);
		assert_true(rd > 0);
	}
	th_proc_kill(&w, SIGTERM);
	assert_true(th_proc_wait(&w, 10));
	assert_int_equal(w.status, 0);
	err = th_slurp(w.out);
	assert_contains(err, "runs 25% of each 100 ms by SIGSTOP/SIGCONT");
	assert_contains(err, "continuing process");
	free(err);
	/* not left stopped */
	usleep(100000);
	r0 = progress_rate(count, 0.5);
	assert_true(r0 > 0);
	th_proc_end(&prog);
	munmap((void *)count, 4096);
}

/* SIGTERM while a cap and a duty cycle hold: no cgroup of tacho's is left, the program
 * is back in its own cgroup, and it runs. */
static void test_sigterm_lifts(void **state)
{
	char *waiter[] = { (char *)th_prog("live-helper"), (char *)"toggle", (char *)"1000", NULL };
	char pid[32], path[128], *before, *after, *log;
	struct th_proc prog, w;
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	th_spawn(&prog, "held", waiter);
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)prog.pid);
	before = th_slurp(path);
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"watch", (char *)"-d", (char *)"0.2",
				 (char *)"-e", (char *)"syscalls:sys_enter_write", (char *)"--above",
				 (char *)"10", (char *)"--cap", (char *)"10", (char *)"-p", pid, NULL };
		th_spawn(&w, "capped", argv);
	}
	if (cannot_cap(&w)) {
		free(before);
		th_proc_end(&prog);
		TEST_SKIP("no cgroup CPU controller this user can write");
	}
	assert_true(th_wait_for(w.out, " fired ", 1, 10));
	after = th_slurp(path);
	assert_string_not_equal(after, before);       /* it is in tacho's cgroup now */
	free(after);
	th_proc_kill(&w, SIGTERM);
	assert_true(th_proc_wait(&w, 10));
	assert_int_equal(w.status, 0);
	log = th_slurp(w.out);
	assert_contains(log, "lifting the cap of process");
	free(log);
	after = th_slurp(path);
	assert_string_equal(after, before);
	free(after);
	free(before);
	{
		char *argv[] = { (char *)"sh", (char *)"-c",
				 (char *)"ls -d /sys/fs/cgroup/*/tacho-* /sys/fs/cgroup/tacho-* "
					 "2>/dev/null", NULL };
		char want[64];
		th_runv(&r, NULL, argv);
		snprintf(want, sizeof(want), "tacho-%s", pid);
		assert_not_contains(r.out, want);
		th_run_free(&r);
	}

	/* a duty cycle: SIGINT, and the program is not left stopped */
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"watch", (char *)"-d", (char *)"0.2",
				 (char *)"-e", (char *)"syscalls:sys_enter_write", (char *)"--above",
				 (char *)"10", (char *)"--duty", (char *)"5", (char *)"-p", pid, NULL };
		th_spawn(&w, "duty2", argv);
	}
	assert_true(th_wait_for(w.out, " fired ", 1, 10));
	usleep(300000);
	th_proc_kill(&w, SIGINT);
	assert_true(th_proc_wait(&w, 10));
	assert_int_equal(w.status, 0);
	usleep(100000);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)prog.pid);
	for (int i = 0; i < 10; i++, usleep(20000)) {
		char *st = th_slurp(path), *c = strrchr(st, ')');
		assert_non_null(c);
		assert_int_not_equal(c[2], 'T');
		free(st);
	}
	th_proc_end(&prog);
}

/* The state letter of a process (R, S, T, ...). */
static char state_of(pid_t pid)
{
	char path[64], *st, *c, s;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	st = th_slurp(path);
	c = strrchr(st, ')');
	s = c && c[1] && c[2] ? c[2] : '?';
	free(st);
	return s;
}

/* SIGKILL of tacho while a cap holds, then while a duty cycle has the program stopped:
 * nothing tacho changed outlives it. Its keeper moves the program back to its own
 * cgroup and removes tacho's, and continues it, within a second of tacho's death. */
static void test_sigkill_undone(void **state)
{
	char *waiter[] = { (char *)th_prog("live-helper"), (char *)"toggle", (char *)"1000", NULL };
	char pid[32], path[128], dir[4096] = "", *before, *now, *log, *p;
	struct th_proc prog, w;
	double end;
	bool home = false;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	th_spawn(&prog, "killed-target", waiter);
	snprintf(pid, sizeof(pid), "%d", (int)prog.pid);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)prog.pid);
	before = th_slurp(path);
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"watch", (char *)"-d", (char *)"0.2",
				 (char *)"-e", (char *)"syscalls:sys_enter_write", (char *)"--above",
				 (char *)"10", (char *)"--cap", (char *)"25", (char *)"-p", pid, NULL };
		th_spawn(&w, "killed-cap", argv);
	}
	if (cannot_cap(&w)) {
		free(before);
		th_proc_end(&prog);
		TEST_SKIP("no cgroup CPU controller this user can write");
	}
	assert_true(th_wait_for(w.out, " fired ", 1, 10));
	/* "... by cgroup vN DIR (FILE)" */
	log = th_slurp(w.out);
	p = strstr(log, " by cgroup v");
	assert_non_null(p);
	assert_int_equal(sscanf(p, " by cgroup v%*d %4095s", dir), 1);
	free(log);
	now = th_slurp(path);
	assert_string_not_equal(now, before);          /* in tacho's cgroup */
	free(now);
	assert_int_equal(access(dir, F_OK), 0);
	th_proc_kill(&w, SIGKILL);
	assert_true(th_proc_wait(&w, 10));
	end = th_now() + 1;
	while (!home && th_now() < end) {
		now = th_slurp(path);
		home = !strcmp(now, before) && access(dir, F_OK) != 0;
		free(now);
		if (!home)
			usleep(10000);
	}
	if (!home) {
		now = th_slurp(path);
		fail_msg("a second after tacho's SIGKILL, %s %s, and the program's cgroups are\n%s"
			 "(they were\n%s)", dir, access(dir, F_OK) ? "is gone" : "is still there",
			 now, before);
	}
	free(before);

	/* a duty cycle: killed while the program is stopped */
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"watch", (char *)"-d", (char *)"0.2",
				 (char *)"-e", (char *)"syscalls:sys_enter_write", (char *)"--above",
				 (char *)"10", (char *)"--duty", (char *)"25", (char *)"-p", pid, NULL };
		th_spawn(&w, "killed-duty", argv);
	}
	assert_true(th_wait_for(w.out, " fired ", 1, 10));
	end = th_now() + 10;
	while (state_of(prog.pid) != 'T' && th_now() < end)
		usleep(1000);
	assert_int_equal(state_of(prog.pid), 'T');
	th_proc_kill(&w, SIGKILL);
	assert_true(th_proc_wait(&w, 10));
	end = th_now() + 1;
	while (state_of(prog.pid) == 'T' && th_now() < end)
		usleep(10000);
	if (state_of(prog.pid) == 'T')
		fail_msg("a second after tacho's SIGKILL, the program is still stopped");
	/* and nobody stops it again */
	for (int i = 0; i < 20; i++, usleep(10000))
		assert_int_not_equal(state_of(prog.pid), 'T');
	th_proc_end(&prog);
}

/* watch -- PROGRAM: tacho ends with the program, with its status. */
static void test_program(void **state)
{
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	th_tacho(&r, "watch", "-d", "0.1", "-e", "page-faults", "--above", "1G", "--",
		 th_prog("live-helper"), "spin", "300", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "live-helper': page-faults above 1 G/s (lifts below 900 M/s)");
	th_run_free(&r);
}

/* A rule over an event that cannot be counted here would never fire: refused before the
 * program runs, in one line naming the event and why. The switch makes the PMU's
 * instructions and data breakpoints not fire on every machine (on one without a PMU
 * instructions do not open at all: the same refusal). */
static void test_never_fires(void **state)
{
	char marker[64], touch[96], addr[64];
	char *const addr_argv[] = { (char *)th_prog("stat-helper"), (char *)"addr", NULL };
	struct th_run r;
	(void)state;

	snprintf(marker, sizeof(marker), "/tmp/tacho-watch-ran-%d", (int)getpid());
	snprintf(touch, sizeof(touch), "touch %s", marker);
	th_runv(&r, NULL, addr_argv);
	snprintf(addr, sizeof(addr), "mem:%.*s:w", (int)strcspn(r.out, "\n"), r.out);
	th_run_free(&r);
	th_not_firing("instructions,breakpoint-data");
	th_tacho(&r, "watch", "-e", "instructions", "--above", "1", "--exec", "echo FIRED", "--",
		 "sh", "-c", touch, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot watch instructions above 1/s");
	assert_contains(r.err, "'instructions' cannot be counted here: ");
	assert_int_equal(th_count_lines(r.err), 1);
	assert_not_contains(r.out, "FIRED");
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", "cache-misses/instructions", "--above", "0.01", "--cap", "25",
		 "--", "sh", "-c", touch, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot be counted here");
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", addr, "--above", "1", "--", "sh", "-c", touch, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot be counted here: made not to fire by TACHO_TEST_NOT_FIRING");
	th_run_free(&r);
	th_not_firing_end();
	/* the program never ran */
	assert_int_equal(access(marker, F_OK), -1);
}

static void test_bad_input(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "watch", "-e", "page-faultz", "--above", "1", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho: bad rule");
	assert_contains(r.err, "^");
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", "page-faults", "--above", "10x", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad rate for --above");
	assert_contains(r.err, "10x\n  ^");
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", "page-faults", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "needs --above or --below");
	th_run_free(&r);
	th_tacho(&r, "watch", "--above", "1", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "a rule starts with -e");
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", "page-faults", "--above", "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "nothing to watch");
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", "page-faults", "--above", "1", "--cap", "0", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", "page-faults", "--above", "1", "--duty", "100", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--duty must be below 100");
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", "page-faults", "--above", "1", "--signal", "BOGUS", "-p", "1",
		 NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad signal 'BOGUS'");
	th_run_free(&r);
	/* the target's errors, with an event no proof is asked for (task-clock) */
	th_tacho(&r, "watch", "-e", "task-clock", "--above", "1", "-G", "tacho-no-such-cgroup",
		 NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "no cgroup 'tacho-no-such-cgroup'");
	th_run_free(&r);
	th_tacho(&r, "watch", "-e", "task-clock", "--above", "1", "-p", "2147483600", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "no process 2147483600");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cap_ratio, th_procs_teardown),
		cmocka_unit_test_teardown(test_exec_per_crossing, th_procs_teardown),
		cmocka_unit_test_teardown(test_hysteresis, th_procs_teardown),
		cmocka_unit_test_teardown(test_signal, th_procs_teardown),
		cmocka_unit_test_teardown(test_no_cgroup_duty, th_procs_teardown),
		cmocka_unit_test_teardown(test_sigterm_lifts, th_procs_teardown),
		cmocka_unit_test_teardown(test_sigkill_undone, th_procs_teardown),
		cmocka_unit_test_teardown(test_program, th_procs_teardown),
		cmocka_unit_test_teardown(test_never_fires, th_procs_teardown),
		cmocka_unit_test_teardown(test_bad_input, th_procs_teardown),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
