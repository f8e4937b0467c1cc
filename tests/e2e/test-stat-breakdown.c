/* test-stat-breakdown.c - `tacho stat` broken down per thread, per CPU (core, die,
 * package, node) and per cgroup, end to end, exact where the kernel is: a helper's
 * threads and cgroup members make known numbers of write(2) calls
 * (tests/progs/stat-threads.c), counted by the syscalls:sys_enter_write tracepoint. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "perf/engine.h"
#include "stat/stat.h"
#include "util/util.h"

#define WRITE_EVENT "syscalls:sys_enter_write"

static const char *threads_prog(void)
{
	return th_prog("stat-threads");
}

/* The entry of events[] whose name is ev and whose key (an integer) is v, or NULL. */
static const struct th_json *entry_with(const struct th_json *j, const char *ev,
					const char *key, long long v)
{
	const struct th_json *evs = th_json_get(j, "events");

	for (size_t i = 0; evs && i < evs->n; i++) {
		const struct th_json *e = evs->items[i];
		const struct th_json *name = th_json_get(e, "name"), *k = th_json_get(e, key);
		if (name && name->string && !strcmp(name->string, ev) && k &&
		    k->type == TH_JSON_NUMBER && (long long)k->number == v)
			return e;
	}
	return NULL;
}

/* Skips the test when tracepoints cannot be counted here (no tracefs). */
static void need_tracepoint(const struct th_json *j)
{
	const struct th_json *st = th_json_get(j, "totals[0].status");

	if (st && st->string && strcmp(st->string, "counted"))
		TEST_SKIP("%s cannot be counted here (%s)", WRITE_EVENT,
			  json_str(j, "totals[0].explanation"));
}

/* Four threads making 11, 22, 33 and 44 writes, and the first none: each thread's
 * count exact, by thread id, with its name; the totals add up. */
static void test_per_thread_program(void **state)
{
	static const long w[] = { 11, 22, 33, 44 };
	struct th_run r;
	struct th_json *j;
	const struct th_json *evs;
	long long first_tid = -1;
	size_t writers = 0;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	j = th_stat_json(&r, "--per-thread", "-e", WRITE_EVENT, "--", threads_prog(), "threads",
		      "11", "22", "33", "44", NULL);
	assert_int_equal(r.status, 0);
	need_tracepoint(j);
	assert_string_equal(json_str(j, "aggregation"), "thread");
	evs = th_json_get(j, "events");
	assert_non_null(evs);
	/* the first thread and the four writers: five units, one event each */
	assert_int_equal(evs->n, 5);
	for (size_t i = 0; i < evs->n; i++) {
		const struct th_json *e = evs->items[i];
		const char *comm = json_str(e, "comm");
		long long tid = (long long)json_num(e, "tid");

		assert_string_equal(json_str(e, "status"), "counted");
		assert_true(json_num(e, "pid") > 0);
		if (!strncmp(comm, "writer-", 7)) {
			int k = atoi(comm + 7);
			assert_true(k >= 1 && k <= 4);
			assert_int_equal((long long)json_num(e, "value"), w[k - 1]);
			assert_true(tid != (long long)json_num(e, "pid"));
			writers++;
		} else {
			assert_string_equal(comm, "stat-threads");
			assert_int_equal((long long)json_num(e, "value"), 0);
			first_tid = tid;
		}
	}
	assert_int_equal(writers, 4);
	assert_int_equal(first_tid, (long long)json_num(j, "events[0].pid"));
	assert_int_equal((long long)json_num(j, "totals[0].value"), 11 + 22 + 33 + 44);
	th_json_free(j);
	th_run_free(&r);

	/* the table: a row per thread, labelled NAME-TID */
	th_tacho(&r, "stat", "--per-thread", "-e", WRITE_EVENT, "--", threads_prog(), "threads",
		 "5", "7", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "writer-1-");
	assert_contains(r.err, "writer-2-");
	th_run_free(&r);

	/* CSV: the unit's columns after the common ones, the totals as kind "total" */
	th_tacho(&r, "stat", "--csv", "--per-thread", "-e", WRITE_EVENT, "--", threads_prog(),
		 "threads", "5", "7", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "spread_pct,explanation,pid,tid,comm\n");
	assert_contains(r.err, "\ntotal," WRITE_EVENT ",counted,12,");
	assert_contains(r.err, ",writer-2\n");
	th_run_free(&r);
}

/* Two exact events and a third of another PMU, over threads that switch to one another
 * all the time: each thread's reads and writes exact and each event's threads adding up
 * to its total, in 100 runs of 100. The kernel swaps the counts of two threads' events
 * at such a switch, pairing them by position in its lists: opened in an order other
 * than the one it inherits them in, reads were counted as writes (and page faults as
 * writes), a different split each run (engine-list.c's open_all). Opened in that order,
 * 2 runs of 1,500 under load still had one thread's counts reported under another's
 * (the kernel had swapped their contexts without pairing the counts): where the kernel
 * allows it, tacho keeps it from swapping (tc_perf_inherit_sample_read). Even so, on
 * Linux 6.18, 1 run of 1,500 under load had two threads report nothing and their counts
 * under the first: tacho then says so and shows no thread's count. */
static void test_per_thread_events_keep_their_counts(void **state)
{
	static const long rw[][2] = { { 30, 20 }, { 10, 40 }, { 25, 25 } };
	const char *ev = "syscalls:sys_enter_read,page-faults," WRITE_EVENT;
	unsigned mixed = 0;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);
	if (!tc_perf_inherit_sample_read())
		TEST_SKIP("this kernel refuses PERF_SAMPLE_READ on inherited events (Linux "
			  "before 6.12), so tacho cannot keep it from swapping two threads' "
			  "contexts: a thread's counts are then now and then reported under "
			  "another's, with a warning");

	for (int run = 0; run < 100; run++) {
		struct th_run r;
		struct th_json *j = th_stat_json(&r, "--per-thread", "-e", ev, "--",
						 threads_prog(), "rw", "30", "20", "10", "40",
						 "25", "25", NULL);
		const struct th_json *evs = th_json_get(j, "events");
		bool moved = strstr(r.err, "moved counts between") != NULL;
		double sum[3] = { 0 };
		size_t seen = 0;

		assert_int_equal(r.status, 0);
		need_tracepoint(j);
		assert_non_null(evs);
		mixed += moved;
		for (size_t i = 0; i < evs->n; i++) {
			const struct th_json *e = evs->items[i];
			const char *name = json_str(e, "name"), *comm = json_str(e, "comm");
			const char *status = json_str(e, "status");
			int k = !strcmp(name, "syscalls:sys_enter_read") ? 0 :
				!strcmp(name, "page-faults") ? 1 : 2;

			if (moved) {
				/* the kernel moved counts between threads, and said so:
				 * no thread's row may show a number */
				if (strcmp(status, "not counted"))
					fail_msg("run %d: counts moved between threads, yet thread "
						 "%s shows %s %s:\n%s", run, comm, name, status,
						 r.err);
				continue;
			}
			if (strcmp(status, "counted"))
				fail_msg("run %d: thread %s (tid %.0f): %s %s (%s):\n%s", run,
					 comm, json_num(e, "tid"), name, status,
					 json_str(e, "explanation") ? json_str(e, "explanation") :
								      "no reason",
					 r.err);
			sum[k] += json_num(e, "value");
			if (k == 1)
				continue;
			if (!strncmp(comm, "rw-", 3)) {
				int t = atoi(comm + 3);
				assert_true(t >= 1 && t <= 3);
				if ((long)json_num(e, "value") != rw[t - 1][k / 2])
					fail_msg("run %d: thread %s counted %.0f of %s, made %ld",
						 run, comm, json_num(e, "value"), name,
						 rw[t - 1][k / 2]);
				seen++;
			}
		}
		/* the totals in the order of -e (read, page-faults, write): exact always,
		 * the threads' rows adding up to them where they show numbers */
		assert_int_equal((long)json_num(j, "totals[0].value"), 30 + 10 + 25);
		assert_int_equal((long)json_num(j, "totals[2].value"), 20 + 40 + 25);
		if (!moved && seen != 6)
			fail_msg("run %d: %zu of the 6 reads and writes of threads rw-1 to rw-3 "
				 "were reported under their names:\n%s", run, seen, r.err);
		for (int k = 0; k < 3 && !moved; k++) {
			char value[32], name[32];

			snprintf(value, sizeof(value), "totals[%d].value", k);
			snprintf(name, sizeof(name), "totals[%d].name", k);
			if (sum[k] != json_num(j, value))
				fail_msg("run %d: the threads' %s add up to %.0f, the total is %.0f",
					 run, json_str(j, name), sum[k], json_num(j, value));
		}
		th_json_free(j);
		th_run_free(&r);
	}
	/* a move is rare (1 run in 1,500 under load on Linux 6.18): most runs must show
	 * each thread its own counts, or the per-thread view is of no use */
	if (mixed > 10)
		fail_msg("in %u runs of 100 the kernel moved counts between threads", mixed);
}

/* -p with --per-thread: the threads a running process has, each its own count. The
 * helper's threads wait for a byte on its standard input; the byte goes once tacho has
 * opened an event for each of them (it holds that many perf descriptors). */
static size_t perf_fds(pid_t pid)
{
	char dir[64], path[320], link[64];
	size_t n = 0;

	for (int fd = 0; fd < 256; fd++) {
		ssize_t len;
		snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
		snprintf(path, sizeof(path), "%s/%d", dir, fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		n += strstr(link, "perf_event") != NULL;
	}
	return n;
}

/* Whether tacho (pid) waits in poll or ppoll, as it does once its events are open and
 * enabled: their count alone came before the enable, and a thread's first write could
 * go uncounted (seen under the sanitizers). */
static bool in_poll(pid_t pid)
{
	long nr = th_proc_syscall(pid);

	return nr == 7 || nr == 271;
}

/* Returns once tacho holds n perf descriptors and waits for the count's end. */
static void wait_counting(pid_t tacho, size_t n)
{
	for (int polls = 0; perf_fds(tacho) < n || !in_poll(tacho); polls++) {
		if (polls == 3000)
			fail_msg("tacho (pid %d) did not open %zu events and wait in 30 s",
				 (int)tacho, n);
		usleep(10000);
	}
}

static void test_per_thread_pid(void **state)
{
	int in[2], out[2], status;
	char pidarg[32], line[64] = "";
	pid_t helper, tacho;
	char *text = NULL;
	size_t len;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	helper = fork();
	assert_true(helper >= 0);
	if (helper == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(threads_prog(), threads_prog(), "wait", "3", "5", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/* "ready": its threads exist */
	assert_true(read(out[0], line, sizeof(line) - 1) > 0);
	assert_contains(line, "ready");
	snprintf(pidarg, sizeof(pidarg), "%d", (int)helper);
	tacho = fork();
	assert_true(tacho >= 0);
	if (tacho == 0) {
		execl(th_tacho_bin(), th_tacho_bin(), "stat", "--json", "-o", th_tmp("pid.json"),
		      "--per-thread", "-p", pidarg, "-e", WRITE_EVENT, (char *)NULL);
		_exit(127);
	}
	/* three threads, one event each */
	wait_counting(tacho, 3);
	assert_int_equal(write(in[1], "g", 1), 1);
	close(in[1]);
	assert_int_equal(waitpid(helper, &status, 0), helper);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(tacho, &status, 0), tacho);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(out[0]);
	assert_int_equal(tc_read_file(th_tmp("pid.json"), &text, &len, 1 << 20), 0);
	j = assert_json(text);
	need_tracepoint(j);
	assert_string_equal(json_str(j, "aggregation"), "thread");
	assert_int_equal(th_json_get(j, "events")->n, 3);
	/* the first thread wrote "ready" before tacho came, then a byte to each thread */
	assert_non_null(entry_with(j, WRITE_EVENT, "tid", helper));
	assert_int_equal((long long)json_num(entry_with(j, WRITE_EVENT, "tid", helper), "value"),
			 2);
	assert_int_equal((long long)json_num(j, "totals[0].value"), 2 + 3 + 5);
	for (size_t i = 0; i < 3; i++) {
		const struct th_json *e = th_json_get(j, "events")->items[i];
		long long v = (long long)json_num(e, "value");
		assert_true(v == 2 || v == 3 || v == 5);
		assert_int_equal((long long)json_num(e, "pid"), helper);
	}
	th_json_free(j);
	free(text);
}

/* A stat-threads helper waiting with threads writing each count (NULL-terminated), its
 * standard input and output on pipes: returns once it says "ready". */
static pid_t start_waiting(int *in_w, int *out_r, const char *first, ...)
{
	const char *argv[16] = { threads_prog(), "wait", first };
	int in[2], out[2];
	char line[64] = "";
	size_t n = 3;
	va_list ap;
	pid_t pid;

	va_start(ap, first);
	while (n < 15 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	assert_true(read(out[0], line, sizeof(line) - 1) > 0);
	assert_contains(line, "ready");
	*in_w = in[1];
	*out_r = out[0];
	return pid;
}

/* perf's -p PID1,PID2: two running processes counted together, their writes added up
 * exactly (once tacho is there each helper's first thread writes a byte to each of its
 * other threads, and they their counts); with --per-thread, an entry per thread of
 * both, each with its process; with -I, intervals whose counts add up to the same. */
static void test_pid_list(void **state)
{
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	/* 0: the sum, 1: per thread, 2: intervals (JSON lines) adding up to the sum */
	for (int mode = 0; mode < 3; mode++) {
		int in1, out1, in2, out2, status;
		pid_t h1, h2, tacho;
		char pids[48], *text = NULL;
		struct th_json *j;
		size_t len;

		h1 = start_waiting(&in1, &out1, "3", NULL);
		h2 = start_waiting(&in2, &out2, "4", "5", NULL);
		snprintf(pids, sizeof(pids), "%d,%d", (int)h1, (int)h2);
		tacho = fork();
		assert_true(tacho >= 0);
		if (tacho == 0) {
			const char *argv[] = { th_tacho_bin(), "stat", "--json", "-o",
					       th_tmp("pids.json"), "-p", pids, "-e",
					       WRITE_EVENT, mode == 1 ? "--per-thread" : "-I",
					       "20", NULL };

			if (mode == 0)
				argv[9] = NULL;
			else if (mode == 1)
				argv[10] = NULL;

			execv(argv[0], (char *const *)argv);
			_exit(127);
		}
		/* five threads, one event each */
		wait_counting(tacho, 5);
		assert_int_equal(write(in1, "g", 1), 1);
		assert_int_equal(write(in2, "g", 1), 1);
		close(in1);
		close(in2);
		assert_int_equal(waitpid(h1, &status, 0), h1);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(waitpid(h2, &status, 0), h2);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(waitpid(tacho, &status, 0), tacho);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		close(out1);
		close(out2);
		assert_int_equal(tc_read_file(th_tmp("pids.json"), &text, &len, 1 << 20), 0);
		if (mode == 2) {
			long long sum = 0;
			size_t lines = 0;

			for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
				j = assert_json(line);
				need_tracepoint(j);
				if (!strcmp(json_str(j, "status"), "counted"))
					sum += (long long)json_num(j, "value");
				th_json_free(j);
				lines++;
			}
			assert_true(lines >= 1);
			assert_int_equal(sum, (1 + 3) + (2 + 4 + 5));
			free(text);
			continue;
		}
		j = assert_json(text);
		need_tracepoint(j);
		if (mode == 0) {
			assert_null(th_json_get(j, "aggregation"));
			assert_int_equal(th_json_get(j, "events")->n, 1);
			assert_int_equal((long long)json_num(j, "events[0].value"),
					 (1 + 3) + (2 + 4 + 5));
		} else {
			assert_string_equal(json_str(j, "aggregation"), "thread");
			assert_int_equal(th_json_get(j, "events")->n, 5);
			assert_int_equal((long long)json_num(entry_with(j, WRITE_EVENT, "tid",
									h1), "value"), 1);
			assert_int_equal((long long)json_num(entry_with(j, WRITE_EVENT, "tid",
									h2), "pid"), h2);
			assert_int_equal((long long)json_num(j, "totals[0].value"), 15);
		}
		th_json_free(j);
		free(text);
	}
	/* a bad id anywhere in the list: one line with it, and the usage */
	th_tacho(&r, "stat", "-p", "1,x", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho stat: bad pid 'x' (a process or thread id)\nusage:");
	th_run_free(&r);
	th_tacho(&r, "stat", "-t", "1,,2", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho stat: bad tid '' (a process or thread id)\nusage:");
	th_run_free(&r);
	/* a process of the list that is not there */
	th_tacho(&r, "stat", "-p", "1,2147483647", "-e", "page-faults", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot count: no process or thread 2147483647");
	th_run_free(&r);
}

static bool can_count_cpus(void)
{
	long long paranoid;

	if (tc_read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) != 0)
		paranoid = 2;
	return geteuid() == 0 || paranoid <= 0;
}

/* -A -a: one entry per online CPU, each with its number; the per-CPU values add up to
 * the total. Then core, die, package and node: their CPUs add up to the online ones. */
static void test_per_cpu(void **state)
{
	static const char *const modes[] = { "--per-core", "--per-die", "--per-socket",
					     "--per-node" };
	struct th_run r;
	struct th_json *j;
	int *on = NULL;
	size_t n = 0;
	double sum = 0;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	if (!can_count_cpus())
		TEST_SKIP("counting CPUs needs root or perf_event_paranoid <= 0");
	assert_int_equal(tc_online_cpus(&on, &n), 0);
	/* docs/stat.md's example */
	j = th_stat_json(&r, "-A", "-a", "-e", "cpu-clock,page-faults", "--", threads_prog(),
		      "threads", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(json_str(j, "aggregation"), "cpu");
	assert_int_equal(th_json_get(j, "events")->n, 2 * n);
	for (size_t i = 0; i < n; i++) {
		const struct th_json *e = entry_with(j, "cpu-clock", "cpu", on[i]);
		assert_non_null(e);
		assert_string_equal(json_str(e, "status"), "counted");
		sum += json_num(e, "value");
	}
	assert_true(fabs(sum - json_num(j, "totals[0].value")) < 1e-6 * sum + 1e-9);
	th_json_free(j);
	th_run_free(&r);

	for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
		const struct th_json *evs;
		double ncpus = 0;

		j = th_stat_json(&r, modes[m], "-a", "-e", "cpu-clock", "--", threads_prog(),
			      "threads", "1", NULL);
		assert_int_equal(r.status, 0);
		evs = th_json_get(j, "events");
		assert_true(evs->n >= 1 && evs->n <= n);
		for (size_t i = 0; i < evs->n; i++)
			ncpus += json_num(evs->items[i], "ncpus");
		assert_int_equal((long long)ncpus, (long long)n);
		th_json_free(j);
		th_run_free(&r);
	}
	free(on);
}

/* The JSON lines of an interval run (text, one object per line), each checked and
 * handed to fn; returns how many there were. */
static size_t iv_lines(char *text, void (*fn)(const struct th_json *, void *), void *arg)
{
	size_t n = 0;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		struct th_json *j = assert_json(line);

		fn(j, arg);
		th_json_free(j);
		n++;
	}
	return n;
}

struct cg_sum {
	const char *name;
	long long sum;
};

static void add_cg(const struct th_json *j, void *arg)
{
	struct cg_sum *c = arg;

	need_tracepoint(j);
	assert_string_equal(json_str(j, "cgroup"), c->name);
	assert_string_equal(json_str(j, "status"), "counted");
	c->sum += (long long)json_num(j, "value");
}

/* -G and --for-each-cgroup on a cgroup the test makes: a child that joins it makes N
 * writes, its parent outside makes M: exactly N inside. */
static void test_cgroup(void **state)
{
	char *mounts = NULL, root[4096], dir[4200], dir2[4210], name[64], pair[160];
	struct th_run r;
	struct th_json *j;
	size_t len, n = 0;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (geteuid() != 0)
		TEST_SKIP("making a cgroup needs root");
	if (tc_read_file("/proc/self/mounts", &mounts, &len, 16 << 20) ||
	    tc_stat_cgroup_root_parse(mounts, root, sizeof(root))) {
		free(mounts);
		TEST_SKIP("no cgroup hierarchy with perf_event (v1 controller or v2) is mounted");
	}
	free(mounts);
	snprintf(name, sizeof(name), "tacho-test-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	if (mkdir(dir, 0755))
		TEST_SKIP("cannot make a cgroup in %s: %s", root, strerror(errno));

	j = th_stat_json(&r, "-a", "-G", name, "-e", WRITE_EVENT, "--", threads_prog(), "cgroup",
		      dir, "123", "456", NULL);
	assert_int_equal(r.status, 0);
	need_tracepoint(j);
	assert_string_equal(json_str(j, "aggregation"), "cgroup");
	assert_string_equal(json_str(j, "events[0].cgroup"), name);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	assert_int_equal((long long)json_num(j, "events[0].value"), 123);
	th_json_free(j);
	th_run_free(&r);

	/* -G with -I: every line the cgroup's, the intervals adding up to its writes */
	th_tacho(&r, "stat", "--json", "-a", "-G", name, "-I", "20", "-e", WRITE_EVENT, "--",
		 threads_prog(), "cgroup", dir, "123", "456", NULL);
	assert_int_equal(r.status, 0);
	{
		struct cg_sum cs = { .name = name };

		assert_true(iv_lines(r.err, add_cg, &cs) >= 1);
		assert_int_equal(cs.sum, 123);
	}
	th_run_free(&r);

	/* every event in every cgroup; the absolute path names the same cgroup */
	j = th_stat_json(&r, "-a", "--for-each-cgroup", dir, "-e", WRITE_EVENT ",page-faults",
		      "--", threads_prog(), "cgroup", dir, "77", "5", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(th_json_get(j, "events")->n, 2);
	assert_int_equal((long long)json_num(j, "events[0].value"), 77);
	assert_string_equal(json_str(j, "events[1].name"), "page-faults");
	th_json_free(j);
	th_run_free(&r);

	/* -G pairs: the write event in the cgroup, page-faults everywhere ("") */
	snprintf(pair, sizeof(pair), "%s,", name);
	j = th_stat_json(&r, "-a", "-G", pair, "-e", WRITE_EVENT ",page-faults", "--",
		      threads_prog(), "cgroup", dir, "9", "1", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(th_json_get(j, "events")->n, 2);
	assert_string_equal(json_str(j, "events[0].name"), WRITE_EVENT);
	assert_int_equal((long long)json_num(j, "events[0].value"), 9);
	assert_string_equal(json_str(j, "events[1].name"), "page-faults");
	assert_string_equal(json_str(j, "events[1].cgroup"), "");
	th_json_free(j);
	th_run_free(&r);

	/* under ulimit -n 40, 12 events in each of two cgroups on every CPU take more
	 * descriptors than one run has: the program runs several times, every event
	 * counted exactly in its cgroup (not EMFILE) */
	snprintf(dir2, sizeof(dir2), "%s-b", dir);
	assert_int_equal(mkdir(dir2, 0755), 0);
	{
		const char *argv[] = { "/bin/sh", "-c", "ulimit -n 40 && exec \"$@\"", "sh",
				       th_tacho_bin(), "stat", "--json", "-a",
				       "--for-each-cgroup", NULL, "-e", NULL, "--",
				       threads_prog(), "cgroup", dir, "7", "1", NULL };
		struct tc_sb evs;

		snprintf(pair, sizeof(pair), "%s,%s-b", name, name);
		argv[9] = pair;
		tc_sb_init(&evs);
		for (int i = 0; i < 12; i++)
			tc_sb_addf(&evs, "%s%s", i ? "," : "", WRITE_EVENT);
		argv[11] = evs.buf;
		th_runv(&r, NULL, (char *const *)argv);
		tc_sb_exit(&evs);
	}
	assert_int_equal(r.status, 0);
	j = assert_json(r.err);
	assert_true(json_num(j, "program_runs_per_repetition") > 1);
	assert_int_equal(th_json_get(j, "events")->n, 24);
	for (size_t i = 0; i < 24; i++) {
		const struct th_json *e = th_json_get(j, "events")->items[i];

		if (!strcmp(json_str(e, "cgroup"), name)) {
			assert_string_equal(json_str(e, "status"), "counted");
			assert_int_equal((long long)json_num(e, "value"), 7);
			n++;
		}
	}
	assert_int_equal(n, 12);
	th_json_free(j);
	th_run_free(&r);
	assert_int_equal(rmdir(dir2), 0);

	assert_int_equal(rmdir(dir), 0);
}

struct tid_sums {
	long long tid[8], pid[8], sum[8];
	size_t n;
};

static void add_tid(const struct th_json *j, void *arg)
{
	struct tid_sums *t = arg;
	long long tid = (long long)json_num(j, "tid");
	size_t i;

	need_tracepoint(j);
	assert_string_equal(json_str(j, "name"), WRITE_EVENT);
	assert_non_null(th_json_get(j, "comm"));
	for (i = 0; i < t->n && t->tid[i] != tid; i++)
		;
	if (i == t->n) {
		assert_true(t->n < ARRAY_SIZE(t->tid));
		t->tid[t->n] = tid;
		t->pid[t->n] = (long long)json_num(j, "pid");
		t->sum[t->n++] = 0;
	}
	assert_int_equal((long long)json_num(j, "pid"), t->pid[i]);
	assert_string_equal(json_str(j, "status"), "counted");
	t->sum[i] += (long long)json_num(j, "value");
}

/* --per-thread -I 20 over two running processes: every interval has a line per thread,
 * with its tid, pid and comm; each thread's values over the intervals add up to its
 * writes exactly (the first threads: a byte to each of their others, their "ready"
 * being before counting started). */
static void test_interval_per_thread(void **state)
{
	int in1, out1, in2, out2, status;
	struct tid_sums t = { .n = 0 };
	long long other[3];
	size_t lines, k = 0;
	char pids[48], *text = NULL;
	pid_t h1, h2, tacho;
	size_t len;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	h1 = start_waiting(&in1, &out1, "3", NULL);
	h2 = start_waiting(&in2, &out2, "4", "5", NULL);
	snprintf(pids, sizeof(pids), "%d,%d", (int)h1, (int)h2);
	tacho = fork();
	assert_true(tacho >= 0);
	if (tacho == 0) {
		execl(th_tacho_bin(), th_tacho_bin(), "stat", "--json", "-o",
		      th_tmp("ivpt.json"), "--per-thread", "-I", "20", "-p", pids, "-e",
		      WRITE_EVENT, (char *)NULL);
		_exit(127);
	}
	for (int polls = 0; perf_fds(tacho) < 5; polls++) {
		assert_true(polls < 3000);
		usleep(10000);
	}
	/* an interval or more passes with the threads waiting: lines of 0 */
	usleep(60000);
	assert_int_equal(write(in1, "g", 1), 1);
	assert_int_equal(write(in2, "g", 1), 1);
	close(in1);
	close(in2);
	assert_int_equal(waitpid(h1, &status, 0), h1);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(h2, &status, 0), h2);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(tacho, &status, 0), tacho);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(out1);
	close(out2);
	assert_int_equal(tc_read_file(th_tmp("ivpt.json"), &text, &len, 1 << 20), 0);
	lines = iv_lines(text, add_tid, &t);
	/* one line per thread in every interval, and more than one interval */
	assert_int_equal(t.n, 5);
	assert_int_equal(lines % 5, 0);
	assert_true(lines >= 10);
	for (size_t i = 0; i < t.n; i++) {
		if (t.tid[i] == h1)
			assert_int_equal(t.sum[i], 1);
		else if (t.tid[i] == h2)
			assert_int_equal(t.sum[i], 2);
		else
			other[k++] = t.sum[i] * 100 + (t.pid[i] == h1);
	}
	assert_int_equal(k, 3);
	/* the writers: 3 in the first helper, 4 and 5 in the second */
	for (size_t i = 0; i < 3; i++) {
		long long v = other[i];
		assert_true(v == 301 || v == 400 || v == 500);
	}
	assert_true(other[0] != other[1] && other[1] != other[2] && other[0] != other[2]);
	free(text);
}

struct cpu_lines {
	int *on;
	size_t n, seen[64];
	double t[2];
	size_t nt;
};

static void add_cpu(const struct th_json *j, void *arg)
{
	struct cpu_lines *c = arg;
	long long cpu = (long long)json_num(j, "cpu");
	double t = json_num(j, "time");
	size_t i;

	for (i = 0; i < c->n && c->on[i] != cpu; i++)
		;
	assert_true(i < c->n && i < ARRAY_SIZE(c->seen));
	c->seen[i]++;
	assert_string_equal(json_str(j, "status"), "counted");
	assert_true(json_num(j, "value") >= 0);
	assert_non_null(th_json_get(j, "socket"));
	if (!c->nt || c->t[c->nt - 1] != t) {
		assert_true(c->nt < 2);
		c->t[c->nt++] = t;
	}
}

/* -A -a -I 50 --interval-count 2: exactly one line per online CPU in each of the two
 * intervals, in JSON (with the CPU's keys), CSV (the CPU's columns after the
 * interval's) and the table (the CPU's label). */
static void test_interval_per_cpu(void **state)
{
	struct cpu_lines c = { .n = 0 };
	struct th_run r;
	char head[128], first[32];
	size_t lines;
	(void)state;

	if (!can_count_cpus())
		TEST_SKIP("counting CPUs needs root or perf_event_paranoid <= 0");
	assert_int_equal(tc_online_cpus(&c.on, &c.n), 0);
	th_tacho(&r, "stat", "--json", "-A", "-a", "-I", "50", "--interval-count", "2", "-e",
		 "cpu-clock", "--", "sleep", "5", NULL);
	assert_int_equal(r.status, 143);
	lines = iv_lines(r.err, add_cpu, &c);
	assert_int_equal(lines, 2 * c.n);
	assert_int_equal(c.nt, 2);
	for (size_t i = 0; i < c.n; i++)
		assert_int_equal(c.seen[i], 2);
	th_run_free(&r);

	th_tacho(&r, "stat", "--csv", "-A", "-a", "-I", "50", "--interval-count", "2", "-e",
		 "cpu-clock", "--", "sleep", "5", NULL);
	assert_int_equal(r.status, 143);
	assert_true(sscanf(r.err, "%127[^\n]", head) == 1);
	assert_string_equal(head, "time,name,status,value,unit,coverage,explanation,run,cpu,"
			    "socket,die,core,node");
	lines = 0;
	for (const char *p = r.err; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, 1 + 2 * c.n);
	th_run_free(&r);

	th_tacho(&r, "stat", "-A", "-a", "-I", "50", "--interval-count", "2", "-e", "cpu-clock",
		 "--", "sleep", "5", NULL);
	assert_int_equal(r.status, 143);
	snprintf(first, sizeof(first), " CPU%d ", c.on[0]);
	assert_contains(r.err, first);
	lines = 0;
	for (const char *p = r.err; (p = strstr(p, " cpu-clock")); p++)
		lines++;
	assert_int_equal(lines, 2 * c.n);
	th_run_free(&r);
	free(c.on);
}

/* Bad combinations: one line and the usage (2); a cgroup that is not there (1). */
static void test_breakdown_errors(void **state)
{
	static const char *const cases[][8] = {
		{ "-A", "--", "true" },
		{ "--per-core", "-p", "1" },
		{ "--per-thread", "-a", "--", "true" },
		{ "--per-thread", "-r", "2", "--", "true" },
		{ "--per-thread", "-I", "100", "--", "true" },
		{ "-A", "-a", "-I", "100", "--sim", "--", "true" },
		{ "-A", "--per-core", "-a", "--", "true" },
		{ "-G", "", "-a", "--", "true" },
		{ "--for-each-cgroup", "a,", "-a", "--", "true" },
		{ "-G", "a,b", "-e", "page-faults", "-a", "--", "true" },
	};
	struct th_run r;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *argv[12] = { th_tacho_bin(), "stat" };
		size_t n = 2;

		for (size_t k = 0; k < 8 && cases[i][k]; k++)
			argv[n++] = cases[i][k];
		th_runv(&r, NULL, (char *const *)argv);
		if (r.status != 2)
			fprintf(stderr, "case %zu (%s %s): status %d\n%s", i, cases[i][0],
				cases[i][1], r.status, r.err);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, "usage: tacho stat");
		th_run_free(&r);
	}
	if (can_count_cpus()) {
		th_tacho(&r, "stat", "-a", "-G", "tacho-no-such-cgroup", "-e", "page-faults", "--",
			 "true", NULL);
		assert_int_equal(r.status, 1);
		assert_contains(r.err, "tacho: cannot count: no cgroup 'tacho-no-such-cgroup'");
		th_run_free(&r);
	}
}

/* The mount table's perf_event hierarchy: v1's controller wins over v2, v2 alone
 * serves, neither is -ENOENT; a mount point with a space is unescaped. */
static void test_cgroup_root_parse(void **state)
{
	char root[256];
	(void)state;

	assert_int_equal(tc_stat_cgroup_root_parse(
		"cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
		"cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n"
		"cgroup /sys/fs/cgroup/perf_event cgroup rw,nosuid,perf_event 0 0\n",
		root, sizeof(root)), 0);
	assert_string_equal(root, "/sys/fs/cgroup/perf_event");
	assert_int_equal(tc_stat_cgroup_root_parse(
		"cgroup /sys/fs/cgroup/cpu cgroup rw,cpu,perf_eventx 0 0\n"
		"cgroup2 /sys/fs/cg\\040two cgroup2 rw 0 0", root, sizeof(root)), 0);
	assert_string_equal(root, "/sys/fs/cg two");
	assert_int_equal(tc_stat_cgroup_root_parse("proc /proc proc rw 0 0\n", root,
						   sizeof(root)), -ENOENT);
	assert_int_equal(tc_stat_cgroup_root_parse("", root, sizeof(root)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_per_thread_program),
		cmocka_unit_test(test_per_thread_events_keep_their_counts),
		cmocka_unit_test(test_per_thread_pid),
		cmocka_unit_test(test_pid_list),
		cmocka_unit_test(test_per_cpu),
		cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_interval_per_thread),
		cmocka_unit_test(test_interval_per_cpu),
		cmocka_unit_test(test_breakdown_errors),
		cmocka_unit_test(test_cgroup_root_parse),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
