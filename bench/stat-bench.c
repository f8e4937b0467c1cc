/* stat-bench.c - the measuring half of bench/stat.sh: wall time of commands run side by
 * side (interleaved, so that a noisy neighbour hurts both alike) and the cost of one
 * group read through libtacho against the engine's hot path (the bare read(2) of the
 * group, values copied out).
 *
 *   stat-bench time ROUNDS CMD... [';' CMD...]   median, min and p90 wall ms per command
 *   stat-bench read N                            ns per group read of 4 software events
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf/engine.h"
#include "util/util.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Runs argv with stdout and stderr on /dev/null; returns the wall time in ns. */
static double run_once(char **argv)
{
	double t0 = now_ns();
	pid_t pid = fork();
	int st;

	if (pid < 0) {
		perror("stat-bench: fork");
		exit(1);
	}
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) {
		fprintf(stderr, "stat-bench: '%s' failed\n", argv[0]);
		exit(1);
	}
	return now_ns() - t0;
}

static int cmd_time(int argc, char **argv)
{
	char **cmds[16];
	size_t ncmd = 0;
	unsigned rounds = (unsigned)atoi(argv[0]);
	double *t[16];

	for (int i = 1; i < argc && ncmd < 16;) {
		cmds[ncmd++] = &argv[i];
		while (i < argc && strcmp(argv[i], ";"))
			i++;
		if (i < argc)
			argv[i++] = NULL;   /* the ';' ends this command's argv */
	}
	for (size_t c = 0; c < ncmd; c++) {
		t[c] = calloc(rounds, sizeof(double));
		run_once(cmds[c]);   /* warm the page cache, the dynamic linker's cache */
	}
	for (unsigned r = 0; r < rounds; r++)
		for (size_t c = 0; c < ncmd; c++)
			t[c][r] = run_once(cmds[c]) / 1e6;
	for (size_t c = 0; c < ncmd; c++) {
		struct tc_stats s;
		struct tc_sb name = TC_SB_INIT;
		tc_stats_compute(t[c], rounds, &s);
		for (char **a = cmds[c]; *a; a++)
			tc_sb_addf(&name, "%s%s", a == cmds[c] ? "" : " ", *a);
		printf("%-60s median %8.3f ms  min %8.3f  p90 %8.3f  (%u runs)\n", name.buf,
		       s.median, s.min, tc_stats_percentile(t[c], rounds, 90), rounds);
		tc_sb_exit(&name);
		free(t[c]);
	}
	return 0;
}

static int cmd_read(unsigned n)
{
	static const char *const names[] = { "task-clock", "page-faults", "context-switches",
					      "cpu-migrations" };
	static const uint64_t configs[] = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
					    PERF_COUNT_SW_CONTEXT_SWITCHES,
					    PERF_COUNT_SW_CPU_MIGRATIONS };
	static const pid_t self = 0;
	struct perf_event_attr attrs[4];
	struct tacho_counter_spec specs[4];
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD,
					 .pid = 0, .no_inherit = true };
	struct tacho_counters *c;
	struct tacho_count out[4];
	struct tc_perf_list *hot = NULL;
	struct tc_perf_grid grid;
	double *lib = calloc(n, sizeof(double)), *raw = calloc(n, sizeof(double));
	uint64_t v[4];
	struct tc_stats sl, sr;
	int err;

	for (int i = 0; i < 4; i++) {
		memset(&attrs[i], 0, sizeof(attrs[i]));
		attrs[i].size = sizeof(attrs[i]);
		attrs[i].type = PERF_TYPE_SOFTWARE;
		attrs[i].config = configs[i];
		specs[i].name = names[i];
		specs[i].attr = &attrs[i];
		specs[i].group = 0;
	}
	err = tacho_counters_open(&o, specs, 4, &c);
	if (err || tacho_counters_opened(c) != 4) {
		fprintf(stderr, "stat-bench: cannot open the group: %s\n", tacho_strerror(err));
		return 1;
	}
	tacho_counters_enable(c);
	/* the same group on the engine's hot path: one read(2), values copied out */
	err = tc_perf_list_new(&hot);
	for (int i = 0; i < 4 && !err; i++)
		err = tc_perf_list_add(hot, &attrs[i], names[i], 0) < 0;
	if (!err)
		err = tc_perf_grid_init(&grid, NULL, 0, &self, 1);
	if (!err) {
		err = tc_perf_list_open(hot, &grid, TC_PERF_GROUP_READ);
		tc_perf_grid_exit(&grid);
	}
	if (!err)
		err = tc_perf_list_hot_init(hot);
	if (!err)
		err = tc_perf_list_enable(hot);
	if (err) {
		fprintf(stderr, "stat-bench: cannot open the engine's group: %s\n",
			tacho_strerror(err));
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		double t0 = now_ns();
		tacho_counters_read(c, out, 4, sizeof(*out));
		double t1 = now_ns();
		if (tc_perf_list_read_hot(hot, v))
			return 1;
		double t2 = now_ns();
		lib[i] = t1 - t0;
		raw[i] = t2 - t1;
	}
	tc_stats_compute(lib, n, &sl);
	tc_stats_compute(raw, n, &sr);
	printf("group read of 4 software events, %u reads (clock_gettime pairs included):\n", n);
	printf("  tacho_counters_read     median %7.0f ns  min %7.0f\n", sl.median, sl.min);
	printf("  the engine's hot read   median %7.0f ns  min %7.0f  (one read(2) of the group)\n",
	       sr.median, sr.min);
	tacho_counters_free(c);
	tc_perf_list_free(hot);
	free(lib);
	free(raw);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "time"))
		return cmd_time(argc - 2, argv + 2);
	if (argc == 3 && !strcmp(argv[1], "read"))
		return cmd_read((unsigned)atoi(argv[2]));
	fprintf(stderr, "usage: stat-bench time ROUNDS CMD... [';' CMD...] | stat-bench read N\n");
	return 2;
}
