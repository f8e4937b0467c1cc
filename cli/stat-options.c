/* stat-options.c - `tacho stat`'s options: the usage, the option table (which makes the
 * parser, the help, the manual page and the completions), and parsing them into a
 * struct stat_cli, each checked alone and then against the others. Running and
 * writing are cmd-stat.c's. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stat.h"

enum { OPT_WARMUP = 256, OPT_ALL, OPT_MULTIPLEX, OPT_CSV, OPT_JSON, OPT_SIM, OPT_SIM_CPU, OPT_SIM_HOT, OPT_MCA,
	OPT_SIM_ENGINE,
       OPT_PER_CORE, OPT_PER_DIE, OPT_PER_SOCKET, OPT_PER_NODE, OPT_PER_THREAD,
       OPT_FOR_EACH_CGROUP, OPT_REGIONS, OPT_CONTROL, OPT_LOG_FD, OPT_PERF_LAYOUT,
       OPT_JSON_OUTPUT,
       OPT_TIMEOUT, OPT_INTERVAL_COUNT, OPT_APPEND, OPT_PRE, OPT_POST,
       OPT_PUSH, OPT_PUSH_JOB, OPT_PUSH_LABEL, OPT_METRIC_ONLY, OPT_TOPDOWN };

const char stat_usage[] =
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


const struct cli_option stat_options[] = {
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

const char stat_footer[] =
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

void stat_cli_init(struct stat_cli *c)
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

/* --- parsing --- */

/* An option the step does not handle (never an exit code, nor GO_ON). */
#define NOT_MINE (-2)

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

/* What to count: -e, --all, -M, -d and --metric-only (--topdown refused). GO_ON, the
 * exit code, or NOT_MINE for another step's option. */
static int parse_events_option(struct stat_cli *c, int opt)
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
	case OPT_ALL:
		c->all = true;
		return GO_ON;
	}
	return NOT_MINE;
}

/* How the program runs and when counting is on: -r, --warmup, --multiplex, -I,
 * --interval-count, --timeout, --regions, --control, -D, -i, -n, --pre, --post. GO_ON,
 * the exit code, or NOT_MINE for another step's option. */
static int parse_runs_option(struct stat_cli *c, int opt)
{
	switch (opt) {
	case 'r':
		if (parse_uint("-r", optarg, 1000000, &c->repeat) != GO_ON)
			return EXIT_USAGE;
		if (c->repeat == 0)
			return cli_usage_error(&cmd_stat, "-r must be at least 1");
		c->repeat_given = true;
		return GO_ON;
	case OPT_WARMUP:
		return parse_uint("--warmup", optarg, 1000000, &c->o.warmup);
	case OPT_MULTIPLEX:
		c->o.sched_flags |= TACHO_SCHED_MULTIPLEX;
		return GO_ON;
	case 'I':
		if (parse_uint("-I", optarg, 86400000, &c->interval) != GO_ON)
			return EXIT_USAGE;
		if (c->interval == 0)
			return cli_usage_error(&cmd_stat, "-I must be at least 1 ms");
		return GO_ON;
	case OPT_REGIONS:
		c->o.regions_only = true;
		return GO_ON;
	case 'i':
		c->o.no_inherit = true;
		return GO_ON;
	case 'n':
		c->o.null_run = true;
		return GO_ON;
	case OPT_PRE:
		c->pre = optarg;
		return GO_ON;
	case OPT_POST:
		c->post = optarg;
		return GO_ON;
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
	}
	return NOT_MINE;
}

/* What is counted and how it is broken down: -p, -t, -a, -C, the breakdowns (-A,
 * --per-*, -G, --for-each-cgroup) and the simulator (--sim and its options). GO_ON,
 * the exit code, or NOT_MINE for another step's option. */
static int parse_target_option(struct stat_cli *c, int opt)
{
	switch (opt) {
	case 'p':
	case 't':
	case 'a':
	case 'C':
		return set_target(c, opt, optarg);
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
	case OPT_FOR_EACH_CGROUP:
		return set_aggr(c, TACHO_STAT_AGGR_CGROUP, optarg, false);

	}
	return NOT_MINE;
}

/* Where and how the result is written: -x, --csv, --json, -j, -o, --append,
 * --perf-layout, -v, -q, --log-fd and the pushes. GO_ON, the exit code, or NOT_MINE
 * for another step's option. */
static int parse_output_option(struct stat_cli *c, int opt)
{
	switch (opt) {
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
	case OPT_PERF_LAYOUT:
		c->perf_layout = true;
		return GO_ON;
	case OPT_APPEND:
		c->append = true;
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
	}
	return NOT_MINE;
}

/* One option into c, by the step that knows it: GO_ON, or the exit code. */
static int parse_option(struct stat_cli *c, int opt)
{
	int (*const steps[])(struct stat_cli *, int) = {
		parse_events_option, parse_runs_option, parse_target_option,
		parse_output_option,
	};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int ret = steps[i](c, opt);

		if (ret != NOT_MINE)
			return ret;
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

int stat_parse(struct stat_cli *c, int argc, char **argv)
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
