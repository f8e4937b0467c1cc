/* cmd-stat.c - `tacho stat`: count events over a program's runs (or a process, a thread,
 * CPUs) and print each value with its status, the statistics of the repetitions and
 * the derived metrics. The counting (tacho_stat_run) and the writing (tacho_stat_write)
 * are the library's; this file parses options, picks the events and words messages. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "push.h"
#include "util/util.h"

enum { OPT_WARMUP = 256, OPT_ALL, OPT_MULTIPLEX, OPT_CSV, OPT_JSON, OPT_SIM, OPT_SIM_CPU, OPT_SIM_HOT, OPT_MCA,
	OPT_SIM_ENGINE,
       OPT_PER_CORE, OPT_PER_DIE, OPT_PER_SOCKET, OPT_PER_NODE, OPT_PER_THREAD,
       OPT_FOR_EACH_CGROUP, OPT_REGIONS, OPT_CONTROL, OPT_LOG_FD, OPT_PERF_LAYOUT,
       OPT_JSON_OUTPUT,
       OPT_TIMEOUT, OPT_INTERVAL_COUNT, OPT_APPEND, OPT_PRE, OPT_POST,
       OPT_PUSH, OPT_PUSH_JOB, OPT_PUSH_LABEL, OPT_METRIC_ONLY, OPT_TOPDOWN };

#define MAX_GROUPS 16

static const char stat_usage[] =
	"usage: tacho stat [-e <events>] [-r <n>] [--warmup <n>] [--all] [--multiplex]\n"
	"                  [-I <ms>] [-x <sep> | --csv | --json | -j] [-o <file>] [--] <program> [<args>]\n"
	"   or: tacho stat [<options>] (-p <pid> | -t <tid>)\n"
	"   or: tacho stat [<options>] (-a | -C <cpus>) [[--] <program> [<args>]]\n"
	"   or: tacho stat [<options>] (-A | --per-core | --per-die | --per-socket | --per-node |\n"
	"                  -G <cgroups> | --for-each-cgroup <cgroups>) (-a | -C <cpus>) [...]\n"
	"   or: tacho stat [<options>] --per-thread (-p <pid> | -t <tid> | [--] <program> ...)\n"
	"   or: tacho stat [<options>] (--regions | --control <channel> | -D <ms>) [--] <program> ...\n"
	"   or: tacho stat --sim [--sim-cpu <dump>] [--sim-engine <tool>] [--sim-hot <by>[:<n>]]\n"
	"                  [--mca] [-e <events>] [-r <n>] [--] <program> [<args>]\n"
	"\n"
	"Counts events while a program runs and prints every value with its status. When\n"
	"there are more events than the CPU has counters, the program runs as many times\n"
	"as it takes so that nothing is multiplexed (--multiplex: one run, scaled values).\n"
	"The program's own output is untouched: tacho writes to standard error or to -o.\n"
	"\n";

static const struct cli_option stat_options[] = {
	{ 'e', 'e', "event", "<events>",
	  "events to count (comma-separated; docs/events.md); may be\n"
	  "repeated. Default: cycles, instructions, branches and\n"
	  "the software set where a hardware PMU exists, else the\n"
	  "software set alone (task-clock, context-switches, ...)" },
	{ OPT_ALL, 0, "all", NULL,
	  "every event this machine offers (the CPU's through\n"
	  "libpfm4 when it has a PMU, every software event, other\n"
	  "PMUs' named events; not tracepoints)" },
	{ 'M', 'M', "metrics", "<groups>",
	  "count the events of these metric groups and print their\n"
	  "metrics (comma list; a group or a metric's name): ipc,\n"
	  "branches, cache, l1d, llc, tlb, stalls, frequency,\n"
	  "utilization; refused, naming the events, where they need\n"
	  "a hardware PMU this machine lacks" },
	{ 'd', 'd', "detailed", NULL,
	  "the default events and the L1d and LLC loads and misses\n"
	  "(-M l1d,llc), as perf's -d" },
	{ OPT_METRIC_ONLY, 0, "metric-only", NULL,
	  "the table shows the derived metrics alone (rates per\n"
	  "second among them), no line per event" },
	{ OPT_TOPDOWN, 0, "topdown", NULL,
	  "refused: tacho's metric table has no top-down metrics" },
	{ 'r', 'r', "repeat", "<n>",
	  "run the program n times: mean, stddev, min, median, max\n"
	  "and spread per event" },
	{ OPT_WARMUP, 0, "warmup", "<n>",
	  "run it n times first without counting" },
	{ OPT_MULTIPLEX, 0, "multiplex", NULL,
	  "one run of the program; the kernel rotates the groups\n"
	  "and tacho scales, showing each value's coverage" },
	{ 'I', 'I', "interval", "<ms>",
	  "print the counts of every <ms> milliseconds" },
	{ OPT_INTERVAL_COUNT, 0, "interval-count", "<n>",
	  "with -I: stop after n intervals (the program gets\n"
	  "SIGTERM)" },
	{ OPT_TIMEOUT, 0, "timeout", "<ms>",
	  "stop after <ms> milliseconds (the program gets SIGTERM;\n"
	  "-p, -t, -a, -C stop counting)" },
	{ OPT_SIM, 0, "sim", NULL,
	  "simulate instead of counting: run the program under\n"
	  "valgrind (callgrind) with this CPU's caches; values are\n"
	  "\"simulated\", exact and the same on every run\n"
	  "(docs/sim.md). Default events: instructions, branches,\n"
	  "branch-misses and the L1, LL cache events" },
	{ OPT_SIM_CPU, 0, "sim-cpu", "<dump>",
	  "with --sim: simulate the caches of the CPU of this CPUID\n"
	  "dump (tacho cpu --raw, cpuid -r) instead of this one's" },
	{ OPT_SIM_ENGINE, 0, "sim-engine", "<tool>",
	  "with --sim: auto (callgrind, simulating only the caches\n"
	  "and branches the events need), callgrind (both always)\n"
	  "or cachegrind (faster; no regions, no --sim-hot, --mca,\n"
	  "and loses what a process ran before an exec)" },
	{ OPT_SIM_HOT, 0, "sim-hot", "<by>[:<n>]",
	  "with --sim: the n (20) hottest places of the first\n"
	  "event, by function, line or instruction" },
	{ OPT_MCA, 0, "mca", NULL,
	  "with --sim: the hottest basic block to llvm-mca, with\n"
	  "this CPU's -mcpu: predicted IPC, throughput, pressure" },
	{ 'p', 'p', "pid", "<pids>",
	  "count process <pid> (all its threads) until it ends or\n"
	  "Ctrl-C; a list (12,34): added up, until all have ended" },
	{ 't', 't', "tid", "<tids>",
	  "count thread <tid> alone (a list: added up)" },
	{ 'a', 'a', "all-cpus", NULL,
	  "count everything on every CPU" },
	{ 'C', 'C', "cpu", "<cpus>",
	  "count everything on these CPUs (0-3,8)" },
	{ 'A', 'A', "no-aggr", NULL,
	  "with -a or -C: a value per CPU (also --per-cpu)" },
	{ 'A', 0, "per-cpu", NULL,
	  "the same as -A" },
	{ OPT_PER_CORE, 0, "per-core", NULL,
	  "with -a or -C: a value per core (its CPUs added)" },
	{ OPT_PER_DIE, 0, "per-die", NULL,
	  "with -a or -C: a value per die" },
	{ OPT_PER_SOCKET, 0, "per-socket", NULL,
	  "with -a or -C: a value per package" },
	{ OPT_PER_NODE, 0, "per-node", NULL,
	  "with -a or -C: a value per NUMA node" },
	{ OPT_PER_THREAD, 0, "per-thread", NULL,
	  "a value per thread: of -p, -t, or of the program (one\n"
	  "run: each thread's counts as it ends)" },
	{ 'G', 'G', "cgroup", "<cgroups>",
	  "with -a or -C: count only in these cgroups, perf's way:\n"
	  "the first event in the first, ...; one cgroup takes\n"
	  "every event; \"\" counts an event everywhere" },
	{ OPT_FOR_EACH_CGROUP, 0, "for-each-cgroup", "<cgroups>",
	  "with -a or -C: every event in every cgroup of the list" },
	{ OPT_REGIONS, 0, "regions", NULL,
	  "count only while a thread of the program is inside one of\n"
	  "its tacho regions (it links libtacho)" },
	{ OPT_CONTROL, 0, "control", "<channel>",
	  "perf's: fd:CTL[,ACK] or fifo:CTL[,ACK]: enable, disable\n"
	  "and ping read from CTL, \"ack\" written to ACK" },
	{ 'D', 'D', "delay", "<ms>",
	  "start counting ms after the program starts; -1: only\n"
	  "when --control or --regions says" },
	{ 'x', 'x', "field-separator", "<c>",
	  "CSV with separator <c>, header row first" },
	{ OPT_PERF_LAYOUT, 0, "perf-layout", NULL,
	  "with -x: perf stat -x's own columns (value, unit, event,\n"
	  "run time, % running, metric), no header; with --json:\n"
	  "perf stat -j's lines (the same as -j)" },
	{ OPT_CSV, 0, "csv", NULL,
	  "CSV with ','" },
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON document (with -I: one JSON object per line)" },
	{ 'j', 'j', "json-output", NULL,
	  "perf stat -j's JSON lines: one object per event (and\n"
	  "unit, interval) with perf's keys (--json --perf-layout)" },
	{ 'o', 'o', "output", "<file>",
	  "write there instead of standard error" },
	{ OPT_APPEND, 0, "append", NULL,
	  "with -o: add to the file instead of replacing it" },
	{ OPT_PRE, 0, "pre", "<command>",
	  "run this shell command before each run of the program;\n"
	  "its failure stops tacho (exit 1)" },
	{ OPT_POST, 0, "post", "<command>",
	  "run this shell command after each run" },
	{ OPT_PUSH, 0, "push", "<url>",
	  "after the run, PUT the counts to the Prometheus\n"
	  "Pushgateway at <url> (http:// only; docs/stat.md)" },
	{ OPT_PUSH_JOB, 0, "push-job", "<name>",
	  "with --push: the job of the group (default tacho)" },
	{ OPT_PUSH_LABEL, 0, "push-label", "<name>=<value>",
	  "with --push: one more label of the group's key; may be\n"
	  "repeated" },
	{ OPT_LOG_FD, 0, "log-fd", "<fd>",
	  "write to this open descriptor instead of standard error" },
	{ 'q', 'q', "quiet", NULL,
	  "print no counts and no notes: the exit status alone" },
	{ 'i', 'i', "no-inherit", NULL,
	  "count the program (or -p, -t) itself, not the threads\n"
	  "and processes it creates" },
	{ 'n', 'n', "null", NULL,
	  "count no events: the program's wall, user and sys times" },
	{ 'v', 'v', "verbose", NULL,
	  "say how the events were scheduled, and the event-select\n"
	  "value perf programs for each (docs/msr.md)" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char stat_footer[] =
	"Statuses: counted; multiplexed (scaled, with its coverage); not counted (opened\n"
	"but never on a counter, or never scheduled: the reason is given); not supported\n"
	"(could not be opened here: the reason is given); simulated (--sim: valgrind's\n"
	"value, not a counter's). A value that was not counted is never printed as 0: it\n"
	"is empty in CSV and null in JSON.\n"
	"\n"
	"exit status: the program's (128 + N when signal N killed it; the counts are still\n"
	"printed), 0 for -p/-t/-a without a program, 127 when the program cannot be found,\n"
	"126 when it cannot be executed, 1 when counting failed (or events were left out for\n"
	"want of file descriptors), 2 for bad usage.\n"
	"docs/stat.md tells more.\n";

/* What the command was asked, what it made of it, and what it holds until the end:
 * cmd_stat_fn parses, prepares, counts and prints in phases that share this, and
 * stat_cli_exit releases it all on every path. */
struct stat_cli {
	/* from the options */
	enum tacho_format fmt;
	char sep;
	bool fmt_set;
	const char *outpath;
	const char *cpus_arg;
	bool repeat_given;
	unsigned repeat;
	bool all;
	bool explain;                   /* -v: the event-select value of each event */
	unsigned interval;
	unsigned ntargets;
	char target[64];                /* what is counted, for people ("process 42") */
	pid_t *pids;                    /* -p/-t's ids */
	struct tc_sb events;            /* every -e, comma-joined */
	struct tacho_stat_opts o;
	/* what it made of them */
	struct tacho_pmu_counters pmu;
	struct tacho_evlist *list;
	int *cpus;
	char note[320];                 /* why the default events are what they are */
	FILE *out;                      /* stderr or the -o file */
	bool progress;                  /* a progress line on the terminal */
	struct tacho_write_opts wo;
	bool interval_header_done;
	int exec_err;
	struct tacho_stat *s;
	bool sim;                       /* --sim */
	const char *sim_cpu;            /* --sim-cpu */
	enum tacho_sim_engine engine;   /* --sim-engine */
	bool engine_set;
	unsigned hot;                   /* --sim-hot: places to show, 0 none */
	enum tacho_sim_view hot_view;
	bool mca;                       /* --mca */
	struct tacho_sim_mca *mca_result;
	struct tacho_sim *simulator;
	bool aggr_set;                  /* a breakdown was asked */
	char *cgroup_arg;               /* -G / --for-each-cgroup, split into cgroups */
	char **cgroups;
	int ctl_fds[2];                 /* --control fifo: the fifos tacho opened, or -1 */
	int log_fd;                     /* --log-fd, or -1 */
	bool quiet;                     /* -q */
	bool perf_layout;               /* --perf-layout, -j */
	unsigned timeout_ms;            /* --timeout */
	unsigned interval_count;        /* --interval-count */
	unsigned intervals;             /* intervals printed */
	double progress_t0;             /* when the first run began (progress after 1 s) */
	bool append;                    /* --append */
	const char *pre, *post;         /* --pre, --post */
	bool pre_failed;
	bool progress_shown;
	struct cli_push push;           /* --push, --push-job, --push-label */
	const struct tacho_metric_group *groups[MAX_GROUPS]; /* -M and -d's, each once */
	size_t ngroups;
	bool detailed;                  /* -d */
	bool metric_only;               /* --metric-only */
	bool log_held;                  /* the library's warnings wait for the document */
};

/* A phase that does not end the command returns GO_ON; any other value is the exit
 * code. */
#define GO_ON (-1)

static void stat_cli_init(struct stat_cli *c)
{
	memset(c, 0, sizeof(*c));
	c->fmt = TACHO_FORMAT_TABLE;
	c->sep = ',';
	c->repeat = 1;
	tc_sb_init(&c->events);
	c->o.sz = sizeof(c->o);
	c->o.target = TACHO_TARGET_CHILD;
	c->ctl_fds[0] = c->ctl_fds[1] = -1;
	c->log_fd = -1;
	cli_write_opts_init(&c->wo);   /* the library's hints in the command's words */
}

static void stat_cli_exit(struct stat_cli *c)
{
	if (c->log_held)
		cli_log_release(false);
	if (c->out && c->outpath)
		cli_close_output(c->out, c->outpath);
	else if (c->out && c->log_fd >= 0)
		fclose(c->out);
	tacho_stat_free(c->s);
	tacho_sim_mca_free(c->mca_result);
	tacho_sim_free(c->simulator);
	tacho_evlist_free(c->list);
	tc_sb_exit(&c->events);
	free(c->cpus);
	free(c->cgroup_arg);
	free(c->cgroups);
	free(c->pids);
	for (int i = 0; i < 2; i++)
		if (c->ctl_fds[i] >= 0)
			close(c->ctl_fds[i]);
}

/* --- parsing --- */

static int parse_uint(const char *opt, const char *s, unsigned max, unsigned *out)
{
	uint64_t v;

	if (tc_parse_u64(s, &v) != 0 || v > max)
		return cli_usage_error(&cmd_stat, "bad value for %s: '%s' (a whole number up to "
				       "%u)", opt, s, max);
	*out = (unsigned)v;
	return GO_ON;
}

static int set_format(struct stat_cli *c, enum tacho_format fmt)
{
	if (c->fmt_set && c->fmt != fmt)
		return cli_usage_error(&cmd_stat, "choose one output format: -x, --csv, --json or "
				       "-j");
	c->fmt = fmt;
	c->fmt_set = true;
	return GO_ON;
}

/* perf's -p PID1,PID2 (and -t): the ids into c->pids, the first also into o.pid. */
static int set_tasks(struct stat_cli *c, int opt, const char *arg)
{
	const char *what = opt == 'p' ? "pid" : "tid";
	size_t n = 1;
	pid_t *pids;

	for (const char *q = arg; *q; q++)
		n += *q == ',';
	pids = calloc(n, sizeof(*pids));
	if (!pids) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	free(c->pids);
	c->pids = pids;
	for (size_t i = 0; i < n; i++) {
		const char *end = strchr(arg, ',');
		size_t len = end ? (size_t)(end - arg) : strlen(arg);
		char num[24];
		uint64_t pid;

		if (len == 0 || len >= sizeof(num))
			return cli_usage_error(&cmd_stat, "bad %s '%.*s' (a process or thread id)",
					       what, (int)len, arg);
		memcpy(num, arg, len);
		num[len] = '\0';
		if (tc_parse_u64(num, &pid) != 0 || pid == 0 || pid > 0x7fffffff)
			return cli_usage_error(&cmd_stat, "bad %s '%s' (a process or thread id)",
					       what, num);
		pids[i] = (pid_t)pid;
		arg += len + 1;
	}
	c->o.target = opt == 'p' ? TACHO_TARGET_PROCESS : TACHO_TARGET_THREAD;
	c->o.pid = pids[0];
	c->o.pids = n > 1 ? pids : NULL;
	c->o.npids = n > 1 ? n : 0;
	if (n == 1)
		snprintf(c->target, sizeof(c->target), "%s %d",
			 opt == 'p' ? "process" : "thread", (int)pids[0]);
	else
		snprintf(c->target, sizeof(c->target), "%zu %s", n,
			 opt == 'p' ? "processes" : "threads");
	return GO_ON;
}

static int set_target(struct stat_cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 'p':
	case 't': {
		int r = set_tasks(c, opt, arg);

		if (r != GO_ON)
			return r;
		break;
	}
	case 'a':
		c->o.target = TACHO_TARGET_CPUS;
		snprintf(c->target, sizeof(c->target), "all CPUs");
		break;
	case 'C':
		c->o.target = TACHO_TARGET_CPUS;
		c->cpus_arg = arg;
		snprintf(c->target, sizeof(c->target), "CPUs %s", arg);
		break;
	}
	c->ntargets++;
	return GO_ON;
}

/* One breakdown per command: -A, --per-*, -G and --for-each-cgroup exclude each
 * other. */
static int set_aggr(struct stat_cli *c, enum tacho_stat_aggr a, const char *list, bool pairs)
{
	size_t n = 1;
	char *p;

	if (c->aggr_set && (c->o.aggr != a || a == TACHO_STAT_AGGR_CGROUP))
		return cli_usage_error(&cmd_stat, "one breakdown at most: -A, --per-core, "
				       "--per-die, --per-socket, --per-node, --per-thread, -G or "
				       "--for-each-cgroup");
	c->aggr_set = true;
	c->o.aggr = a;
	if (!list)
		return GO_ON;
	/* perf's list: names separated by commas, an empty one meaning everywhere */
	c->cgroup_arg = tc_strdup(list);
	for (const char *q = list; *q; q++)
		n += *q == ',';
	c->cgroups = calloc(n, sizeof(*c->cgroups));
	if (!c->cgroup_arg || !c->cgroups) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	p = c->cgroup_arg;
	for (size_t i = 0; i < n; i++) {
		char *comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		c->cgroups[i] = p;
		p = comma ? comma + 1 : p + strlen(p);
	}
	if (!pairs) {
		for (size_t i = 0; i < n; i++)
			if (!c->cgroups[i][0])
				return cli_usage_error(&cmd_stat, "--for-each-cgroup: an empty "
						       "cgroup name in '%s'", list);
	} else if (n == 1 && !c->cgroups[0][0]) {
		return cli_usage_error(&cmd_stat, "-G needs a cgroup");
	}
	c->o.cgroups = (const char *const *)c->cgroups;
	c->o.ncgroups = n;
	c->o.cgroup_pairs = pairs;
	return GO_ON;
}

/* perf's --control: fd:CTL[,ACK] (descriptors this process was given) or
 * fifo:CTL[,ACK] (named pipes, opened read-write so that the open never waits for the
 * other side). */
static int parse_control(struct stat_cli *c, const char *arg)
{
	bool fifo = !strncmp(arg, "fifo:", 5);
	char buf[4096], *comma;

	if (!fifo && strncmp(arg, "fd:", 3))
		return cli_usage_error(&cmd_stat, "bad value for --control: '%s' (fd:CTL[,ACK] or "
				       "fifo:CTL[,ACK])", arg);
	snprintf(buf, sizeof(buf), "%s", arg + (fifo ? 5 : 3));
	comma = strchr(buf, ',');
	if (comma)
		*comma++ = '\0';
	for (int i = 0; i < 2; i++) {
		const char *s = i ? comma : buf;
		uint64_t fd;
		int *out = i ? &c->o.control_ack_fd : &c->o.control_fd;

		*out = -1;
		if (!s)
			continue;
		if (fifo) {
			c->ctl_fds[i] = open(s, O_RDWR | O_CLOEXEC);
			if (c->ctl_fds[i] < 0) {
				cli_error("cannot open the control fifo '%s': %s", s, strerror(errno));
				return EXIT_FAIL;
			}
			*out = c->ctl_fds[i];
		} else if (tc_parse_u64(s, &fd) || fd > 1 << 20 || fcntl((int)fd, F_GETFD) < 0) {
			return cli_usage_error(&cmd_stat, "bad value for --control: '%s' is not an "
					       "open descriptor", s);
		} else {
			*out = (int)fd;
		}
	}
	c->o.control = true;
	return GO_ON;
}

/* --sim-hot function|line|instruction[:N] */
static int parse_hot(struct stat_cli *c, const char *arg)
{
	static const char *const views[] = { "function", "line", "instruction" };
	size_t len = strcspn(arg, ":");

	for (unsigned v = 0; v < ARRAY_SIZE(views); v++) {
		if (strlen(views[v]) != len || strncmp(arg, views[v], len))
			continue;
		c->hot_view = (enum tacho_sim_view)v;
		c->hot = 20;
		if (arg[len] && parse_uint("--sim-hot", arg + len + 1, 1000000, &c->hot) != GO_ON)
			return EXIT_USAGE;
		if (c->hot == 0)
			return cli_usage_error(&cmd_stat, "--sim-hot %s: how many places to show "
					       "must be at least 1", arg);
		return GO_ON;
	}
	return cli_usage_error(&cmd_stat, "bad value for --sim-hot: '%s' (function, line or "
			       "instruction, then :N for how many)", arg);
}

/* -M's comma list: each name a group's or a metric's (tacho_metric_group_find), each
 * group kept once. */
static int add_groups(struct stat_cli *c, const char *list)
{
	char name[64];

	for (const char *p = list;; p++) {
		size_t n = strcspn(p, ",");
		const struct tacho_metric_group *g;
		bool have = false;

		if (!n || n >= sizeof(name))
			return cli_usage_error(&cmd_stat, "-M needs metric groups (ipc, branches, "
					       "cache, l1d, llc, tlb, stalls, frequency, "
					       "utilization), not '%s'", list);
		memcpy(name, p, n);
		name[n] = '\0';
		g = tacho_metric_group_find(name);
		if (!g)
			return cli_usage_error(&cmd_stat, "-M: no metric group or metric '%s' in "
					       "tacho's table (groups: ipc, branches, cache, l1d, "
					       "llc, tlb, stalls, frequency, utilization)", name);
		for (size_t i = 0; i < c->ngroups; i++)
			have |= c->groups[i] == g;
		if (!have && c->ngroups < MAX_GROUPS)
			c->groups[c->ngroups++] = g;
		p += n;
		if (!*p)
			return GO_ON;
	}
}

static int parse_option(struct stat_cli *c, int opt)
{
	switch (opt) {
	case 'M':
		return add_groups(c, optarg);
	case 'd':
		c->detailed = true;
		return add_groups(c, "l1d,llc");
	case OPT_METRIC_ONLY:
		c->metric_only = true;
		return GO_ON;
	/* perf's --topdown reads level-1 top-down metrics (Intel's slots and topdown-*
	 * events, AMD's pipeline-utilization events); tacho's table has none to give */
	case OPT_TOPDOWN:
		cli_error("cannot count --topdown: tacho's metric table has no top-down "
			  "metrics (they need Intel's slots and topdown-* events or AMD Zen 4's "
			  "pipeline-utilization events, and definitions tacho lacks); -M lists "
			  "the metrics it has");
		return EXIT_FAIL;
	case 'e':
		if (!*optarg)
			return cli_usage_error(&cmd_stat, "-e needs an event list");
		tc_sb_addf(&c->events, "%s%s", c->events.len ? "," : "", optarg);
		return GO_ON;
	case 'r':
		if (parse_uint("-r", optarg, 1000000, &c->repeat) != GO_ON)
			return EXIT_USAGE;
		if (c->repeat == 0)
			return cli_usage_error(&cmd_stat, "-r must be at least 1");
		c->repeat_given = true;
		return GO_ON;
	case OPT_WARMUP:
		return parse_uint("--warmup", optarg, 1000000, &c->o.warmup);
	case OPT_ALL:
		c->all = true;
		return GO_ON;
	case OPT_MULTIPLEX:
		c->o.sched_flags |= TACHO_SCHED_MULTIPLEX;
		return GO_ON;
	case 'I':
		if (parse_uint("-I", optarg, 86400000, &c->interval) != GO_ON)
			return EXIT_USAGE;
		if (c->interval == 0)
			return cli_usage_error(&cmd_stat, "-I must be at least 1 ms");
		return GO_ON;
	case 'p':
	case 't':
	case 'a':
	case 'C':
		return set_target(c, opt, optarg);
	case 'x':
		if (set_format(c, TACHO_FORMAT_CSV) != GO_ON)
			return EXIT_USAGE;
		if (strlen(optarg) != 1)
			return cli_usage_error(&cmd_stat, "-x takes one character, not '%s'", optarg);
		c->sep = optarg[0];
		return GO_ON;
	case OPT_CSV:
		return set_format(c, TACHO_FORMAT_CSV);
	case OPT_JSON:
		return set_format(c, TACHO_FORMAT_JSON);
	case 'j':
		c->perf_layout = true;
		return set_format(c, TACHO_FORMAT_JSON);
	case 'o':
		c->outpath = optarg;
		return GO_ON;
	case 'v':
		/* stat -v: tacho -v's schedule line, and the events' registers */
		cli_verbose++;
		c->explain = true;
		return GO_ON;
	case OPT_SIM:
		c->sim = true;
		return GO_ON;
	case OPT_SIM_CPU:
		if (!*optarg)
			return cli_usage_error(&cmd_stat, "--sim-cpu needs a CPUID dump");
		c->sim_cpu = optarg;
		return GO_ON;
	case OPT_SIM_ENGINE:
		if (!strcmp(optarg, "auto"))
			c->engine = TACHO_SIM_ENGINE_AUTO;
		else if (!strcmp(optarg, "callgrind"))
			c->engine = TACHO_SIM_ENGINE_CALLGRIND;
		else if (!strcmp(optarg, "cachegrind"))
			c->engine = TACHO_SIM_ENGINE_CACHEGRIND;
		else
			return cli_usage_error(&cmd_stat, "bad value for --sim-engine: '%s' (auto, "
					       "callgrind or cachegrind)", optarg);
		c->engine_set = true;
		return GO_ON;
	case OPT_SIM_HOT:
		return parse_hot(c, optarg);
	case OPT_MCA:
		c->mca = true;
		return GO_ON;
	case 'A':
		return set_aggr(c, TACHO_STAT_AGGR_CPU, NULL, false);
	case OPT_PER_CORE:
		return set_aggr(c, TACHO_STAT_AGGR_CORE, NULL, false);
	case OPT_PER_DIE:
		return set_aggr(c, TACHO_STAT_AGGR_DIE, NULL, false);
	case OPT_PER_SOCKET:
		return set_aggr(c, TACHO_STAT_AGGR_SOCKET, NULL, false);
	case OPT_PER_NODE:
		return set_aggr(c, TACHO_STAT_AGGR_NODE, NULL, false);
	case OPT_PER_THREAD:
		return set_aggr(c, TACHO_STAT_AGGR_THREAD, NULL, false);
	case 'G':
		return set_aggr(c, TACHO_STAT_AGGR_CGROUP, optarg, true);
	case OPT_REGIONS:
		c->o.regions_only = true;
		return GO_ON;
	case OPT_LOG_FD: {
		uint64_t fd;
		if (tc_parse_u64(optarg, &fd) || fd > 1 << 20 || fcntl((int)fd, F_GETFD) < 0)
			return cli_usage_error(&cmd_stat, "bad value for --log-fd: '%s' is not an "
					       "open descriptor", optarg);
		c->log_fd = (int)fd;
		return GO_ON;
	}
	case 'q':
		c->quiet = true;
		return GO_ON;
	case 'i':
		c->o.no_inherit = true;
		return GO_ON;
	case 'n':
		c->o.null_run = true;
		return GO_ON;
	case OPT_PERF_LAYOUT:
		c->perf_layout = true;
		return GO_ON;
	case OPT_APPEND:
		c->append = true;
		return GO_ON;
	case OPT_PRE:
		c->pre = optarg;
		return GO_ON;
	case OPT_POST:
		c->post = optarg;
		return GO_ON;
	case OPT_PUSH:
		c->push.url = optarg;
		return GO_ON;
	case OPT_PUSH_JOB:
		if (!*optarg)
			return cli_usage_error(&cmd_stat, "--push-job needs a name");
		c->push.job = optarg;
		return GO_ON;
	case OPT_PUSH_LABEL:
		return cli_push_label_add(&c->push, &cmd_stat, optarg,
					  cli_push_stat_reserved) ? EXIT_USAGE : GO_ON;
	case OPT_TIMEOUT:
		if (parse_uint("--timeout", optarg, 86400000, &c->timeout_ms) != GO_ON)
			return EXIT_USAGE;
		if (c->timeout_ms < 10)
			return cli_usage_error(&cmd_stat, "--timeout must be at least 10 ms");
		return GO_ON;
	case OPT_INTERVAL_COUNT:
		if (parse_uint("--interval-count", optarg, 1000000000, &c->interval_count) != GO_ON)
			return EXIT_USAGE;
		if (c->interval_count == 0)
			return cli_usage_error(&cmd_stat, "--interval-count must be at least 1");
		return GO_ON;
	case OPT_CONTROL:
		return parse_control(c, optarg);
	case 'D':
		if (!strcmp(optarg, "-1")) {
			c->o.delay_ms = -1;
			return GO_ON;
		}
		{
			unsigned ms = 0;
			if (parse_uint("-D", optarg, 86400000, &ms) != GO_ON)
				return EXIT_USAGE;
			c->o.delay_ms = (int)ms;
		}
		return GO_ON;
	case OPT_FOR_EACH_CGROUP:
		return set_aggr(c, TACHO_STAT_AGGR_CGROUP, optarg, false);
	}
	return GO_ON;
}

/* -C names CPUs that are online: the kernel would refuse the others with an error that
 * reads like a bad option, and skipping them would count less than asked. */
static int check_online(const int *cpus, size_t n)
{
	char online[256] = "";
	int *on = NULL;
	size_t non = 0, j = 0;
	int ret = GO_ON;

	if (tc_online_cpus(&on, &non))
		return GO_ON;   /* no sysfs to ask: the kernel will say */
	for (size_t i = 0; i < n && ret == GO_ON; i++) {
		while (j < non && on[j] < cpus[i])
			j++;
		if (j == non || on[j] != cpus[i]) {
			tc_read_line_file("/sys/devices/system/cpu/online", online, sizeof(online));
			ret = cli_usage_error(&cmd_stat, "CPU %d is not online (online: %s)", cpus[i],
					      online[0] ? online : "none known");
		}
	}
	free(on);
	return ret;
}

static int stat_parse(struct stat_cli *c, int argc, char **argv)
{
	struct cli_args args;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int opt = 0, ret = GO_ON;
	size_t ncpus = 0;

	cli_args_init(&args, &cmd_stat, argc, argv);
	while (ret == GO_ON && (opt = cli_args_next(&args)) > 0)
		ret = parse_option(c, opt);
	if (ret != GO_ON)
		return ret;
	if (opt < 0)
		return args.exit;
	if (c->ntargets > 1)
		return cli_usage_error(&cmd_stat, "one target at most: -p, -t, -a or -C");
	if (c->all && c->events.len)
		return cli_usage_error(&cmd_stat, "--all and -e do not go together");
	if ((c->sim_cpu || c->hot || c->mca) && !c->sim)
		return cli_usage_error(&cmd_stat, "--sim-cpu, --sim-hot and --mca go with --sim");
	if (c->engine_set && !c->sim)
		return cli_usage_error(&cmd_stat, "--sim-engine goes with --sim");
	if (c->engine == TACHO_SIM_ENGINE_CACHEGRIND && (c->hot || c->mca))
		return cli_usage_error(&cmd_stat, "--sim-hot and --mca need callgrind's places: "
				       "no --sim-engine cachegrind");
	if (c->sim && (c->ntargets || c->interval || c->all || (c->o.sched_flags &
							       TACHO_SCHED_MULTIPLEX)))
		return cli_usage_error(&cmd_stat, "--sim runs a program under valgrind: no -p, -t, "
				       "-a, -C, -I, --all or --multiplex");
	if (optind < argc)
		c->o.argv = argv + optind;
	if (c->o.target == TACHO_TARGET_CHILD && !c->o.argv)
		return cli_usage_error(&cmd_stat, "no program to run (tacho stat [<options>] -- "
				       "<program> [<args>])");
	if ((c->o.target == TACHO_TARGET_PROCESS || c->o.target == TACHO_TARGET_THREAD) &&
	    c->o.argv)
		return cli_usage_error(&cmd_stat, "-p and -t count a running process: no program "
				       "to run ('%s')", c->o.argv[0]);
	if ((c->repeat > 1 || c->o.warmup) && !c->o.argv)
		return cli_usage_error(&cmd_stat, "-r and --warmup need a program to run");
	if (c->append && !c->outpath)
		return cli_usage_error(&cmd_stat, "--append goes with -o");
	if ((c->pre || c->post) && (!c->o.argv || c->o.target != TACHO_TARGET_CHILD || c->sim))
		return cli_usage_error(&cmd_stat, "--pre and --post go around the runs of a "
				       "program tacho runs");
	if (cli_push_check(&c->push, &cmd_stat))
		return EXIT_USAGE;
	if (c->push.url && c->sim)
		return cli_usage_error(&cmd_stat, "--push sends counts of this machine: not the "
				       "simulated ones of --sim");
	if (c->interval_count && !c->interval)
		return cli_usage_error(&cmd_stat, "--interval-count goes with -I");
	if (c->timeout_ms && c->interval)
		return cli_usage_error(&cmd_stat, "--timeout does not go with -I (use "
				       "--interval-count)");
	if (c->log_fd >= 0 && c->outpath)
		return cli_usage_error(&cmd_stat, "-o and --log-fd both name where to write: "
				       "choose one");
	if (c->perf_layout && !c->fmt_set)
		return cli_usage_error(&cmd_stat, "--perf-layout goes with -x, --csv or --json");
	if (c->perf_layout && c->sim)
		return cli_usage_error(&cmd_stat, "perf's layouts (--perf-layout, -j) write "
				       "counts: no --sim");
	if (c->perf_layout && c->fmt == TACHO_FORMAT_CSV && c->aggr_set && !c->interval)
		return cli_usage_error(&cmd_stat, "--perf-layout writes perf's columns of a "
				       "count or its intervals: no breakdown without -I");
	/* perf's -j -I -r has a "variance" of each interval over its repetitions so far:
	 * not a figure tacho keeps, and a line without the key is not perf's */
	if (c->perf_layout && c->fmt == TACHO_FORMAT_JSON && c->interval && c->repeat > 1)
		return cli_usage_error(&cmd_stat, "-j with -I takes no -r: tacho keeps no "
				       "variance of an interval over the repetitions");
	if (c->ngroups && (c->all || c->sim || c->o.null_run))
		return cli_usage_error(&cmd_stat, "-M and -d add events to count: no --all, "
				       "--sim or -n");
	if (c->metric_only && (c->fmt != TACHO_FORMAT_TABLE || c->interval))
		return cli_usage_error(&cmd_stat, "--metric-only shapes the table: no -x, --csv "
				       "or --json (they carry the metrics already), no -I");
	if (c->o.null_run && (c->events.len || c->all || c->sim))
		return cli_usage_error(&cmd_stat, "-n counts no events: no -e, --all or --sim");
	if (c->o.null_run && !c->o.argv)
		return cli_usage_error(&cmd_stat, "-n times a program: give one to run");
	if (c->o.regions_only || c->o.control || c->o.delay_ms) {
		if (c->o.target != TACHO_TARGET_CHILD || c->interval || c->sim || c->aggr_set)
			return cli_usage_error(&cmd_stat, "--regions, --control and -D switch the "
					       "counting of a program tacho runs: no -p, -t, -a, -C, "
					       "-I, --sim or breakdown");
		if (c->o.delay_ms == -1 && !c->o.control && !c->o.regions_only)
			return cli_usage_error(&cmd_stat, "-D -1 waits for --control or --regions "
					       "to enable counting");
	}
	if (c->aggr_set) {
		const char *what = c->o.aggr == TACHO_STAT_AGGR_CGROUP ? "-G and --for-each-cgroup"
				   : c->o.aggr == TACHO_STAT_AGGR_THREAD ? "--per-thread"
				   : "-A and --per-core, -die, -socket, -node";
		bool cpus = c->o.target == TACHO_TARGET_CPUS;
		if (c->o.aggr == TACHO_STAT_AGGR_THREAD ? cpus : !cpus)
			return cli_usage_error(&cmd_stat, "%s count%s %s", what,
					       c->o.aggr == TACHO_STAT_AGGR_THREAD ? "s" : "",
					       c->o.aggr == TACHO_STAT_AGGR_THREAD
						       ? "a program, -p or -t, not CPUs"
						       : "CPUs: add -a or -C");
		if (c->sim)
			return cli_usage_error(&cmd_stat, "%s do%s not go with --sim", what,
					       c->o.aggr == TACHO_STAT_AGGR_THREAD ? "es" : "");
		if (c->interval && c->o.aggr == TACHO_STAT_AGGR_THREAD && c->o.argv)
			return cli_usage_error(&cmd_stat, "--per-thread -I counts the threads of "
					       "-p or -t: a program's threads report their "
					       "counts when they end");
		if (c->o.aggr == TACHO_STAT_AGGR_THREAD && c->o.argv && c->repeat > 1)
			return cli_usage_error(&cmd_stat, "--per-thread counts one run of the "
					       "program (its threads are new on every run): no -r");
	}
	if (c->cpus_arg) {
		if (tc_parse_cpu_list(c->cpus_arg, &c->cpus, &ncpus, &diag))
			return cli_usage_error(&cmd_stat, "bad CPU list '%s' at column %u: %s",
					       c->cpus_arg, diag.column, diag.message);
		c->o.cpus = c->cpus;
		c->o.ncpus = ncpus;
		ret = check_online(c->cpus, ncpus);
		if (ret != GO_ON)
			return ret;
	}
	c->o.repeat = c->repeat;
	return GO_ON;
}

/* --- the events: -e, --all or perf stat's default set --- */

static int build_all(struct tacho_evlist *list, const struct tacho_pmu_counters *pmu)
{
	size_t skipped = 0;
	int err = tacho_evlist_add_all(list, pmu->known && !pmu->none, &skipped);

	if (skipped && cli_verbose && (!err || err == -TACHO_EEMPTY))
		cli_warn("--all: %zu listed events could not be parsed and were left out",
			 skipped);
	return err;
}

static void default_events(struct stat_cli *c)
{
	bool hw = c->pmu.known && !c->pmu.none;

	tc_sb_adds(&c->events, tacho_events_default(hw ? TACHO_EVENTS_HARDWARE : 0));
	if (hw)
		return;
	if (c->pmu.none)
		snprintf(c->note, sizeof(c->note), "no hardware PMU on this machine (%s): "
			 "counting software events; see 'tacho doctor'", c->pmu.note);
	/* on stderr, unless CSV or JSON goes there (it must stay parseable): JSON carries
	 * it as "note" */
	if (c->note[0] && (c->fmt == TACHO_FORMAT_TABLE || c->outpath) && !c->quiet)
		cli_error("%s", c->note);
}

/* Adds to sb each of names (","-separated) that it does not hold yet, sep between
 * them. */
static void add_names(struct tc_sb *sb, const char *names, const char *sep)
{
	for (const char *p = names; *p;) {
		size_t n = strcspn(p, ","), lsep = strlen(sep);
		bool have = false;

		for (const char *q = sb->buf; q && *q;) {
			const char *end = strstr(q, sep);
			size_t m = end ? (size_t)(end - q) : strlen(q);

			have |= m == n && !strncmp(p, q, n);
			q += m + (end ? lsep : 0);
		}
		if (!have)
			tc_sb_addf(sb, "%s%.*s", sb->len ? sep : "", (int)n, p);
		p += n + (p[n] == ',');
	}
}

/* -M and -d where this machine cannot count them: every group that needs counters it
 * lacks, refused in one sentence that names the events. GO_ON when none is. */
static int groups_refused(struct stat_cli *c)
{
	struct tc_sb asked = TC_SB_INIT, metrics = TC_SB_INIT, missing = TC_SB_INIT;
	int ret = GO_ON;

	for (size_t i = 0; c->pmu.known && c->pmu.none && i < c->ngroups; i++) {
		const struct tacho_metric_group *g = c->groups[i];

		if (!g->counters)
			continue;
		add_names(&asked, g->name, ",");
		tc_sb_addf(&metrics, "%s%s", metrics.len ? ", " : "", g->metrics);
		add_names(&missing, g->counters, ", ");
	}
	if (asked.oom || metrics.oom || missing.oom) {
		cli_error("out of memory");
		ret = EXIT_FAIL;
	} else if (asked.len) {
		cli_error("cannot count %s%s: %s need%s %s from the CPU's counters, and this "
			  "machine has no hardware PMU (%s); where one exists tacho counts them "
			  "and prints %s (see 'tacho doctor')",
			  c->detailed ? "-d" : "-M ", c->detailed ? "" : asked.buf, metrics.buf,
			  strchr(metrics.buf, ',') ? "" : "s", missing.buf,
			  c->pmu.note[0] ? c->pmu.note : c->pmu.source, metrics.buf);
		ret = EXIT_FAIL;
	}
	tc_sb_exit(&asked);
	tc_sb_exit(&metrics);
	tc_sb_exit(&missing);
	return ret;
}

/* --sim: the simulator and its default events. */
static int sim_prepare(struct stat_cli *c)
{
	struct tacho_sim_opts so = { .sz = sizeof(so), .cpu_dump = c->sim_cpu,
				     .engine = c->engine,
				     .dump_instr = c->mca || (c->hot && c->hot_view ==
								      TACHO_SIM_VIEW_INSTRUCTION) };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err = tacho_sim_new(&so, &c->simulator, &diag);

	if (err) {
		cli_error("cannot simulate: %s", diag.message[0] ? diag.message
								   : tacho_strerror(err));
		return EXIT_FAIL;
	}
	c->o.sim = c->simulator;
	if (!c->events.len)
		tc_sb_adds(&c->events, tacho_sim_default_events());
	if (c->events.oom) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	err = tacho_evlist_parse(c->events.buf, &c->list, &diag);
	if (err)
		return cli_event_error("event list", &diag);
	return GO_ON;
}

static int stat_prepare(struct stat_cli *c)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	if (c->sim)
		return sim_prepare(c);

	c->pmu.sz = sizeof(c->pmu);
	err = tacho_pmu_counters_detect(&c->pmu);
	if (err) {
		cli_error("cannot read this CPU's counters: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}
	if (c->o.null_run) {
		err = tacho_evlist_new(NULL, &c->list);
		if (err) {
			cli_error("cannot make an empty event list: %s", tacho_strerror(err));
			return EXIT_FAIL;
		}
		return GO_ON;
	}
	if (c->all) {
		err = tacho_evlist_new(NULL, &c->list);
		if (!err)
			err = build_all(c->list, &c->pmu);
		if (err) {
			cli_error("cannot list this machine's events: %s", tacho_strerror(err));
			return EXIT_FAIL;
		}
		return GO_ON;
	}
	if (groups_refused(c) != GO_ON)
		return EXIT_FAIL;
	if (!c->events.len && (!c->ngroups || c->detailed))
		default_events(c);
	/* -M and -d: each group's events, those the list names already once */
	for (size_t i = 0; i < c->ngroups; i++)
		add_names(&c->events, c->groups[i]->events, ",");
	if (c->events.oom) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	err = tacho_evlist_parse(c->events.buf, &c->list, &diag);
	if (err == -ENOMEM) {
		/* no fault of the list's: no caret, and no usage error */
		cli_error("cannot read the event list: out of memory");
		return EXIT_FAIL;
	}
	if (err)
		return cli_event_error("event list", &diag);
	if (c->o.cgroup_pairs && c->o.ncgroups > 1 && c->o.ncgroups > tacho_evlist_count(c->list))
		return cli_usage_error(&cmd_stat, "-G names %zu cgroups for %zu events (each goes "
				       "with the event in its place)", c->o.ncgroups,
				       tacho_evlist_count(c->list));
	if (c->explain && cli_msr_explain_events(c->list, stderr))
		return EXIT_FAIL;
	return GO_ON;
}

/* --- counting --- */

/* --timeout and --interval-count end the session as a SIGTERM to tacho does: the
 * library passes it on to the program (perf stops its workload so too) or, for -p,
 * -t, -a and -C, stops counting. To the process, not a thread: the interval helper
 * thread blocks every signal. */
static void stop_now(void)
{
	kill(getpid(), SIGTERM);
}

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	stop_now();
}

static void on_interval(void *arg, const struct tacho_stat_interval *iv)
{
	struct stat_cli *c = arg;

	/* the partial interval after the last one asked for is not one of them */
	if (c->interval_count && c->intervals >= c->interval_count)
		return;
	c->wo.csv_no_header = c->interval_header_done;
	if (c->perf_layout && c->fmt == TACHO_FORMAT_JSON)
		tacho_stat_interval_write_perf_json(iv, c->list, c->out, &c->wo);
	else if (c->perf_layout)
		tacho_stat_interval_write_perf(iv, c->list, c->out, &c->wo);
	else
		tacho_stat_interval_write(iv, c->list, c->out, c->fmt, &c->wo);
	c->interval_header_done = true;
	fflush(c->out);
	if (c->interval_count && ++c->intervals == c->interval_count)
		stop_now();
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs a --pre or --post command with the shell; nonzero when it failed (said once). */
static int run_hook(struct stat_cli *c, const char *cmd, const char *what)
{
	int st;

	fflush(NULL);
	st = system(cmd);
	if (st == 0)
		return 0;
	cli_error("%s '%s' failed (%s %d)", what, cmd,
		  st == -1 ? "cannot run the shell:" : WIFEXITED(st) ? "exit status" : "signal",
		  st == -1 ? errno : WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	(void)c;
	return 1;
}

/* A line on the terminal once the runs have taken a second (shorter work needs none),
 * cleared at the end; nothing when standard error is no terminal. */
static void on_progress(void *arg, unsigned done, unsigned total)
{
	struct stat_cli *c = arg;

	/* perf's --pre and --post, through the shell as perf runs them: after the run
	 * before this call, before the run that follows it */
	if (c->post && done > 0 && !c->pre_failed)
		run_hook(c, c->post, "--post");
	if (c->pre && done < total && !c->pre_failed && run_hook(c, c->pre, "--pre")) {
		c->pre_failed = true;
		stop_now();
	}
	if (!c->progress)
		return;
	if (!c->progress_t0)
		c->progress_t0 = mono_s();
	if (done >= total) {
		if (c->progress_shown)
			fprintf(stderr, "\r\033[K");
	} else if (mono_s() - c->progress_t0 >= 1.0) {
		fprintf(stderr, "\rtacho stat: run %u of %u", done + 1, total);
		c->progress_shown = true;
	}
	fflush(stderr);
}

static int stat_count(struct stat_cli *c)
{
	struct cli_signals saved;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	if (c->log_fd >= 0) {
		/* perf's --log-fd: a descriptor the caller opened; a copy, so that closing
		 * ours leaves theirs */
		int fd = fcntl(c->log_fd, F_DUPFD_CLOEXEC, 3);
		c->out = fd >= 0 ? fdopen(fd, "a") : NULL;
		if (!c->out) {
			cli_error("cannot write to descriptor %d: %s", c->log_fd, strerror(errno));
			if (fd >= 0)
				close(fd);
			return EXIT_FAIL;
		}
	} else {
		c->out = c->outpath ? cli_open_output(c->outpath) : stderr;
	}
	if (!c->out)
		return EXIT_FAIL;
	/* the JSON document on standard error: a warning line there would break it, so
	 * the warnings go into it ("warnings") */
	if (c->out == stderr && c->fmt == TACHO_FORMAT_JSON && !c->perf_layout && !c->interval &&
	    !c->quiet) {
		cli_log_hold();
		c->log_held = true;
	}
	if (c->append && c->outpath) {
		/* the new file starts with the old one's contents: appended, and still
		 * written whole and renamed into place */
		char *old = NULL;
		size_t len = 0;
		int r = tc_read_file(c->outpath, &old, &len, 1u << 30);

		if (r == 0 && len && fwrite(old, 1, len, c->out) != len)
			r = -EIO;
		free(old);
		if (r && r != -ENOENT) {
			cli_error("cannot append to '%s': %s", c->outpath, tacho_strerror(r));
			return EXIT_FAIL;
		}
	}
	c->wo.csv_sep = c->sep;
	c->progress = !c->interval && isatty(STDERR_FILENO);
	c->o.events = c->list;
	c->o.pmu = &c->pmu;
	c->o.stop = &cli_stop_sig;
	c->o.exec_err = &c->exec_err;
	c->o.on_progress = on_progress;
	c->o.progress_arg = c;
	if (c->interval) {
		c->o.interval_ms = c->interval;
		c->o.on_interval = on_interval;
		c->o.interval_arg = c;
	}

	/* Ctrl-C stops counting and still prints; while a program runs, the library
	 * forwards or leaves the signal to it */
	cli_stop_signals_catch(&saved);
	if (c->timeout_ms) {
		struct sigaction sa = { .sa_handler = on_alarm };
		struct itimerval it = { .it_value = { .tv_sec = c->timeout_ms / 1000,
						      .tv_usec = (c->timeout_ms % 1000) * 1000 } };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	diag = (struct tacho_diag){ .sz = sizeof(diag) };
	err = tacho_stat_run(&c->o, &c->s, &diag);
	if (c->timeout_ms) {
		struct itimerval off = { 0 };
		setitimer(ITIMER_REAL, &off, NULL);
		signal(SIGALRM, SIG_DFL);
	}
	cli_stop_signals_restore(&saved);
	if (!err && c->mca) {
		err = tacho_sim_mca_new(c->simulator, tacho_stat_sim_result(c->s), &c->mca_result,
					&diag);
		if (err) {
			cli_error("cannot analyse the hottest block: %s", diag.message[0] ?
				  diag.message : tacho_strerror(err));
			return EXIT_FAIL;
		}
	}
	if (!err)
		return GO_ON;
	if (c->progress)
		on_progress(c, 1, 1);
	if (err == -TACHO_ENOSTART) {
		cli_error("%s", diag.message);
		if (c->sim && !c->exec_err)
			return 126;   /* found, but valgrind cannot run it */
		/* as a shell says it: 127 not found, 126 found but not runnable */
		return c->exec_err == ENOENT || c->exec_err == ENOTDIR ? 127 : 126;
	}
	if (diag.message[0])
		cli_error("cannot %s: %s", c->sim ? "simulate" : "count", diag.message);
	else
		cli_error("cannot %s: %s", c->sim ? "simulate" : "count", tacho_strerror(err));
	return EXIT_FAIL;
}

/* --- printing --- */

/* Events left uncounted for want of file descriptors make the whole count fail (1),
 * said in one line after the counts that were made, unless the program's own failure
 * is the status to report. */
static int out_of_files(const struct tacho_stat *s, const struct tacho_exit *ex)
{
	size_t n = 0;

	for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
		const struct tacho_stat_event *e = tacho_stat_event(s, i);
		n += e->status == TACHO_COUNT_NOT_COUNTED && (e->err == -EMFILE || e->err == -ENFILE);
	}
	if (!n && !ex) {
		/* no program ran (-p, -a, -C): a session that counted nothing at all has
		 * failed, whatever it printed of why */
		size_t failed = 0, nev = tacho_stat_nevents(s);
		for (size_t i = 0; i < nev; i++) {
			const struct tacho_stat_event *e = tacho_stat_event(s, i);
			/* an event that opened and whose target never ran is no failure */
			failed += e->status == TACHO_COUNT_NOT_SUPPORTED ||
				  (e->status == TACHO_COUNT_NOT_COUNTED && e->err);
		}
		if (nev && failed == nev) {
			cli_error("counted nothing: none of the %zu event%s could be counted here "
				  "(the reasons are above)", nev, nev == 1 ? "" : "s");
			return EXIT_FAIL;
		}
	}
	if (!n)
		return ex ? ex->status : EXIT_OK;
	cli_error("cannot count %zu of %zu events: out of file descriptors (every event takes "
		  "one per CPU or thread: raise 'ulimit -n', or count fewer events)", n,
		  tacho_stat_nevents(s));
	return ex && ex->status ? ex->status : EXIT_FAIL;
}

static int stat_print_local(struct stat_cli *c)
{
	const struct tacho_exit *ex = tacho_stat_exit_status(c->s);
	struct tacho_stat_about about = {
		.sz = sizeof(about),
		.argv = c->o.argv,
		.target = c->target,
		.repeat = c->repeat_given ? c->repeat : 0,
		.note = c->note,
		.hot = c->hot,
		.hot_view = c->hot_view,
		.mca = c->mca_result,
		.perf_layout = c->perf_layout,
		.metric_only = c->metric_only,
	};
	char stopped[64];
	FILE *out = c->out;
	int err = 0;

	if (timed_out) {
		snprintf(stopped, sizeof(stopped), "after --timeout %u ms", c->timeout_ms);
		about.stopped = stopped;
	}

	if (cli_verbose && !c->sim) {
		const struct tacho_pmu_counters *pc = tacho_stat_pmu_counters(c->s);
		unsigned runs = tacho_stat_runs(c->s);

		if (pc)
			fprintf(stderr, "tacho: %zu events in %u run%s of the program per "
				"repetition; counters: %u general, %u fixed (%s)%s%s\n",
				tacho_stat_nevents(c->s), runs, runs == 1 ? "" : "s", pc->gp,
				pc->fixed, pc->source, pc->note[0] ? "; " : "", pc->note);
	}
	if (c->log_held)
		about.warnings = cli_log_held(&about.nwarnings);
	/* with -I the intervals were the output; -q wants none */
	if (!c->interval && !c->quiet)
		err = tacho_stat_write(c->s, &about, out, c->fmt, &c->wo);
	if (c->log_held) {
		/* what the document could not carry is printed after it */
		cli_log_release(!err);
		c->log_held = false;
	}
	/* a write error is told by the close that follows */
	if (err && err != -EIO)
		cli_error("cannot write the counts: %s", tacho_strerror(err));
	if (c->outpath) {
		c->out = NULL;
		if (cli_close_output(out, c->outpath) != EXIT_OK)
			return EXIT_FAIL;
	} else if (c->log_fd >= 0) {
		c->out = NULL;
		if (ferror(out) | fclose(out)) {
			cli_error("cannot write the counts to descriptor %d", c->log_fd);
			return EXIT_FAIL;
		}
	} else if (fflush(stderr) != 0 || ferror(stderr)) {
		/* the counts were lost (2>/dev/full): the exit status is all that can
		 * still say so */
		return EXIT_FAIL;
	}
	if (err || c->pre_failed)
		return EXIT_FAIL;
	/* a stop signal before the program was ever released: it has no status of its
	 * own, and the signal's is what it would have had a moment later (exit 0 here
	 * told a script that the program had run) */
	if (!ex && c->o.argv && c->o.argv[0] && tacho_stat_interrupted(c->s) && cli_stop_sig > 0)
		return 128 + cli_stop_sig;
	return out_of_files(c->s, ex);
}

/* The local output first, whatever the push gives: a push that fails loses nothing
 * that was printed or written. A failed push makes the exit status 1 unless it already
 * says a failure of its own (the program's). */
static int stat_print(struct stat_cli *c)
{
	int ret = stat_print_local(c);

	if (c->push.url && cli_push_stat(&c->push, c->s) != EXIT_OK && ret == EXIT_OK)
		ret = EXIT_FAIL;
	return ret;
}

static int cmd_stat_fn(int argc, char **argv)
{
	struct stat_cli c;
	int ret;

	stat_cli_init(&c);
	ret = stat_parse(&c, argc, argv);
	if (ret == GO_ON)
		ret = stat_prepare(&c);
	if (ret == GO_ON)
		ret = stat_count(&c);
	if (ret == GO_ON)
		ret = stat_print(&c);
	stat_cli_exit(&c);
	return ret;
}

const struct cli_cmd cmd_stat = {
	.name = "stat",
	.fn = cmd_stat_fn,
	.summary = "count events over a program's runs, with statistics and derived metrics",
	.usage = stat_usage,
	.options = stat_options,
	.help_col = 26,
	.stop_at_operand = true,
	.footer = stat_footer,
};
