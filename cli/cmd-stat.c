/* cmd-stat.c - `tacho stat`: count events over a program's runs (or a process, a thread,
 * CPUs) and print each value with its status, the statistics of the repetitions and
 * the derived metrics. The counting (tacho_stat_run) and the writing (tacho_stat_write)
 * are the library's; this file parses options, picks the events and words messages. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/util.h"

enum { OPT_WARMUP = 256, OPT_ALL, OPT_MULTIPLEX, OPT_CSV, OPT_JSON };

static const char stat_usage[] =
	"usage: tacho stat [-e <events>] [-r <n>] [--warmup <n>] [--all] [--multiplex]\n"
	"                  [-I <ms>] [-x <sep> | --csv | --json] [-o <file>] [--] <program> [<args>]\n"
	"   or: tacho stat [<options>] (-p <pid> | -t <tid>)\n"
	"   or: tacho stat [<options>] (-a | -C <cpus>) [[--] <program> [<args>]]\n"
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
	{ 'p', 'p', "pid", "<pid>",
	  "count process <pid> (all its threads) until it ends or\n"
	  "Ctrl-C" },
	{ 't', 't', "tid", "<tid>",
	  "count thread <tid> alone" },
	{ 'a', 'a', "all-cpus", NULL,
	  "count everything on every CPU" },
	{ 'C', 'C', "cpu", "<cpus>",
	  "count everything on these CPUs (0-3,8)" },
	{ 'x', 'x', "field-separator", "<c>",
	  "CSV with separator <c>, header row first" },
	{ OPT_CSV, 0, "csv", NULL,
	  "CSV with ','" },
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON document (with -I: one JSON object per line)" },
	{ 'o', 'o', "output", "<file>",
	  "write there instead of standard error" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char stat_footer[] =
	"Statuses: counted; multiplexed (scaled, with its coverage); not counted (opened\n"
	"but never on a counter, or never scheduled: the reason is given); not supported\n"
	"(could not be opened here: the reason is given). A value that was not counted is\n"
	"never printed as 0: it is empty in CSV and null in JSON.\n"
	"\n"
	"exit status: the program's (128 + N when signal N killed it; the counts are still\n"
	"printed), 0 for -p/-t/-a without a program, 127 when the program cannot be found,\n"
	"126 when it cannot be executed, 1 when counting failed, 2 for bad usage.\n"
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
	unsigned interval;
	unsigned ntargets;
	char target[64];                /* what is counted, for people ("process 42") */
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
	c->wo.sz = sizeof(c->wo);
}

static void stat_cli_exit(struct stat_cli *c)
{
	if (c->out && c->outpath)
		cli_close_output(c->out, c->outpath);
	tacho_stat_free(c->s);
	tacho_evlist_free(c->list);
	tc_sb_exit(&c->events);
	free(c->cpus);
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
		return cli_usage_error(&cmd_stat, "choose one output format: -x, --csv or --json");
	c->fmt = fmt;
	c->fmt_set = true;
	return GO_ON;
}

static int set_target(struct stat_cli *c, int opt, const char *arg)
{
	uint64_t pid;

	switch (opt) {
	case 'p':
	case 't':
		if (tc_parse_u64(arg, &pid) != 0 || pid == 0 || pid > 0x7fffffff)
			return cli_usage_error(&cmd_stat, "bad %s '%s' (a process or thread id)",
					       opt == 'p' ? "pid" : "tid", arg);
		c->o.target = opt == 'p' ? TACHO_TARGET_PROCESS : TACHO_TARGET_THREAD;
		c->o.pid = (pid_t)pid;
		snprintf(c->target, sizeof(c->target), "%s %d", opt == 'p' ? "process" : "thread",
			 (int)pid);
		break;
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

static int parse_option(struct stat_cli *c, int opt)
{
	switch (opt) {
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
	case 'o':
		c->outpath = optarg;
		return GO_ON;
	}
	return GO_ON;
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
	if (c->cpus_arg) {
		if (tc_parse_cpu_list(c->cpus_arg, &c->cpus, &ncpus, &diag))
			return cli_usage_error(&cmd_stat, "bad CPU list '%s' at column %u: %s",
					       c->cpus_arg, diag.column, diag.message);
		c->o.cpus = c->cpus;
		c->o.ncpus = ncpus;
	}
	c->o.repeat = c->repeat;
	return GO_ON;
}

/* --- the events: -e, --all or perf stat's default set --- */

/* perf stat's default set, the software part first. */
static const char events_sw[] = "task-clock,context-switches,cpu-migrations,page-faults";
static const char events_sw_more[] = ",minor-faults,major-faults";
static const char events_hw[] = ",cycles,instructions,branches,branch-misses";

struct all_ctx {
	struct tacho_evlist *list;
	size_t added, skipped;
};

static int add_one(void *arg, const struct tacho_event_info *ev)
{
	struct all_ctx *a = arg;

	/* "dummy" and "bpf-output" are placeholders (for sideband records and BPF
	 * programs' output): they never count anything by themselves */
	if (!ev->probe || !strcmp(ev->name, "dummy") || !strcmp(ev->name, "bpf-output"))
		return 0;
	if (tacho_evlist_add(a->list, ev->probe, NULL) == 0)
		a->added++;
	else
		a->skipped++;
	return 0;
}

static int build_all(struct tacho_evlist *list, const struct tacho_pmu_counters *pmu)
{
	struct all_ctx a = { .list = list };
	unsigned mask = 1u << TACHO_EVENT_SRC_SOFTWARE | 1u << TACHO_EVENT_SRC_PMU;
	int err;

	if (pmu->known && !pmu->none)
		mask |= 1u << TACHO_EVENT_SRC_HARDWARE | 1u << TACHO_EVENT_SRC_CACHE |
			1u << TACHO_EVENT_SRC_PFM;
	err = tacho_events_foreach(NULL, mask, add_one, &a);
	if (err)
		return err;
	if (a.skipped && cli_verbose)
		cli_warn("--all: %zu listed events could not be parsed and were left out",
			 a.skipped);
	return a.added ? 0 : -TACHO_EEMPTY;
}

static void default_events(struct stat_cli *c)
{
	tc_sb_adds(&c->events, events_sw);
	if (c->pmu.known && !c->pmu.none) {
		tc_sb_adds(&c->events, events_hw);
		return;
	}
	tc_sb_adds(&c->events, events_sw_more);
	if (c->pmu.none)
		snprintf(c->note, sizeof(c->note), "no hardware PMU on this machine (%s): "
			 "counting software events; see 'tacho doctor'", c->pmu.note);
	/* on stderr, unless CSV or JSON goes there (it must stay parseable): JSON carries
	 * it as "note" */
	if (c->note[0] && (c->fmt == TACHO_FORMAT_TABLE || c->outpath))
		cli_error("%s", c->note);
}

static int stat_prepare(struct stat_cli *c)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	c->pmu.sz = sizeof(c->pmu);
	err = tacho_pmu_counters_detect(&c->pmu);
	if (err) {
		cli_error("cannot read this CPU's counters: %s", tacho_strerror(err));
		return EXIT_FAIL;
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
	if (!c->events.len)
		default_events(c);
	if (c->events.oom) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	err = tacho_evlist_parse(c->events.buf, &c->list, &diag);
	if (err)
		return cli_event_error("event list", &diag);
	return GO_ON;
}

/* --- counting --- */

static void on_interval(void *arg, const struct tacho_stat_interval *iv)
{
	struct stat_cli *c = arg;

	c->wo.csv_no_header = c->interval_header_done;
	tacho_stat_interval_write(iv, c->list, c->out, c->fmt, &c->wo);
	c->interval_header_done = true;
	fflush(c->out);
}

static void on_progress(void *arg, unsigned done, unsigned total)
{
	struct stat_cli *c = arg;

	if (!c->progress)
		return;
	if (done >= total)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\rtacho stat: run %u of %u", done + 1, total);
	fflush(stderr);
}

static int stat_count(struct stat_cli *c)
{
	struct cli_signals saved;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	c->out = c->outpath ? cli_open_output(c->outpath) : stderr;
	if (!c->out)
		return EXIT_FAIL;
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
	diag = (struct tacho_diag){ .sz = sizeof(diag) };
	err = tacho_stat_run(&c->o, &c->s, &diag);
	cli_stop_signals_restore(&saved);
	if (!err)
		return GO_ON;
	if (c->progress)
		on_progress(c, 1, 1);
	if (err == -TACHO_ENOSTART) {
		cli_error("%s", diag.message);
		/* as a shell says it: 127 not found, 126 found but not runnable */
		return c->exec_err == ENOENT || c->exec_err == ENOTDIR ? 127 : 126;
	}
	if (diag.message[0])
		cli_error("cannot count: %s", diag.message);
	else
		cli_error("cannot count: %s", tacho_strerror(err));
	return EXIT_FAIL;
}

/* --- printing --- */

static int stat_print(struct stat_cli *c)
{
	const struct tacho_exit *ex = tacho_stat_exit(c->s);
	struct tacho_stat_about about = {
		.sz = sizeof(about),
		.argv = c->o.argv,
		.target = c->target,
		.repeat = c->repeat_given ? c->repeat : 0,
		.note = c->note,
	};
	FILE *out = c->out;
	int err = 0;

	if (cli_verbose) {
		const struct tacho_schedule *plan = tacho_stat_schedule(c->s);
		const struct tacho_pmu_counters *pc = tacho_schedule_counters(plan);
		fprintf(stderr, "tacho: %u events in %u run%s of the program per repetition; "
			"counters: %u general, %u fixed (%s)%s%s\n",
			tacho_schedule_nevents(plan), tacho_schedule_nruns(plan),
			tacho_schedule_nruns(plan) == 1 ? "" : "s", pc->gp, pc->fixed, pc->source,
			pc->note[0] ? "; " : "", pc->note);
	}
	/* with -I the intervals were the output */
	if (!c->interval)
		err = tacho_stat_write(c->s, &about, out, c->fmt, &c->wo);
	/* a write error is told by the close that follows */
	if (err && err != -EIO)
		cli_error("cannot write the counts: %s", tacho_strerror(err));
	if (c->outpath) {
		c->out = NULL;
		if (cli_close_output(out, c->outpath) != EXIT_OK)
			return EXIT_FAIL;
	} else {
		fflush(stderr);
	}
	if (err)
		return EXIT_FAIL;
	return ex ? ex->status : EXIT_OK;
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
