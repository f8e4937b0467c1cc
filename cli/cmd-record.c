/* cmd-record.c - `tacho record`: sample a program, a process or every CPU into a file. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "push.h"
#include "util/util.h"

enum { OPT_CALL_GRAPH = 256, OPT_NO_BUILDID_CACHE, OPT_SIM, OPT_SIM_CPU, OPT_PUSH,
       OPT_PUSH_NAME, OPT_PUSH_LABEL, OPT_PUSH_FORMAT, OPT_OFF_CPU };

static const char record_usage[] =
	"usage: tacho record [-e <event>] [-c <period> | -F <hz>] [-g | --call-graph <mode>] [-o <file>] -- <program> [<args>...]\n"
	"   or: tacho record [-e <event>] [-c <period> | -F <hz>] [-g | --call-graph <mode>] [-o <file>] (-p <pid> | -a)\n"
	"   or: tacho record --sim [--sim-cpu <dump>] [-e <events>] [-g] [-o <file>] -- <program> [<args>...]\n"
	"\n"
	"Samples where a program spends its events: every <period> events (or <hz> times a\n"
	"second) the kernel notes the instruction, thread, CPU, time, the data address where\n"
	"the event has one (page faults, breakpoints) and, with -g, the call chain. Threads\n"
	"and child processes are followed. The file is written as the recording goes: a\n"
	"recording that is killed still reads up to its last write. 'tacho report' reads it.\n"
	"\n"
	"With neither -c nor -F, cpu-clock and task-clock sample every millisecond of CPU\n"
	"time (1000 samples per CPU-second); any other event is counted for 100 ms first and\n"
	"then sampled with the period that gives about 1000 samples a second (VTune's\n"
	"\"Sample After\" calibration). tacho says what it chose.\n"
	"\n"
	"With --sim the program runs under valgrind's callgrind instead, and every\n"
	"instruction is counted: each instruction that ran becomes one sample whose period\n"
	"is its exact simulated count (docs/sim.md). The report's views say so. With -g\n"
	"each function is told apart by its callers (32 deep) and the samples carry them.\n"
	"\n";


static const struct cli_option record_options[] = {
	{ 'e', 'e', "event", "<spec>",
	  "the event (docs/events.md); default: cycles where the CPU\n"
	  "has a PMU, else cpu-clock. Examples: page-faults,\n"
	  "mem:0x601040:w (a data breakpoint), sched:sched_switch" },
	{ 'c', 'c', "count", "<period>",
	  "sample every <period> events" },
	{ 'F', 'F', "freq", "<hz>",
	  "sample <hz> times a second (the kernel adjusts the period)" },
	{ 'g', 'g', NULL, NULL,
	  "record call chains by frame pointers (--call-graph fp)" },
	{ OPT_CALL_GRAPH, 0, "call-graph", "<mode>",
	  "record call chains: fp (frame pointers), dwarf[,<size>]\n"
	  "(user registers and <size> bytes of stack, default 8192,\n"
	  "unwound by the report; for code without frame pointers)\n"
	  "or lbr (the CPU's branch records; docs/call-graphs.md)" },
	{ OPT_OFF_CPU, 0, "off-cpu", NULL,
	  "also sample where threads block: each stack that waited,\n"
	  "weighed by the nanoseconds until it ran again, as the\n"
	  "event offcpu-time (sched_switch; needs root or\n"
	  "perf_event_paranoid -1; implies -g)" },
	{ 'o', 'o', "output", "<file>",
	  "the record file (default tacho.rec)" },
	{ 'p', 'p', "pid", "<pid>",
	  "record a running process (all its threads) until it ends\n"
	  "or Ctrl-C" },
	{ 'a', 'a', "all-cpus", NULL,
	  "record every CPU (until Ctrl-C, or while <program> runs)" },
	{ 'm', 'm', "mmap-pages", "<n>",
	  "data pages per CPU ring, a power of two (default: sized\n"
	  "from the rate and -g, at least perf's 128)" },
	{ OPT_NO_BUILDID_CACHE, 0, "no-buildid-cache", NULL,
	  "do not copy the mapped binaries into the build-id cache\n"
	  "(docs/buildid-cache.md)" },
	{ 'q', 'q', "quiet", NULL,
	  "do not say what was chosen and recorded" },
	{ OPT_SIM, 0, "sim", NULL,
	  "simulate instead of sampling: every instruction counted\n"
	  "by valgrind's callgrind, weighed by the events (-e, of\n"
	  "those 'tacho stat --sim' gives; default instructions)" },
	{ OPT_SIM_CPU, 0, "sim-cpu", "<dump>",
	  "with --sim: simulate the caches of the CPU of this\n"
	  "CPUID dump" },
	{ OPT_PUSH, 0, "push", "<url>",
	  "after recording, POST the profile to Pyroscope's\n"
	  "/ingest at <url> (http:// only; docs/record.md)" },
	{ OPT_PUSH_NAME, 0, "push-name", "<app>",
	  "with --push: the application name (default tacho)" },
	{ OPT_PUSH_LABEL, 0, "push-label", "<name>=<value>",
	  "with --push: a label of the profile; may be repeated" },
	{ OPT_PUSH_FORMAT, 0, "push-format", "<fmt>",
	  "with --push: pprof (default) or folded" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char record_footer[] =
	"Ctrl-C while a program runs is passed on to it and the file is finished when it\n"
	"ends; a second Ctrl-C (or SIGTERM) kills the program with SIGKILL.\n"
	"\n"
	"exit status: the program's (128 + signal if a signal ended it), 126/127 when it\n"
	"could not be run, 1 when recording failed, 2 bad usage\n";

static void say(void *arg, const char *msg)
{
	if (!*(bool *)arg)
		fprintf(stderr, "tacho: %s\n", msg);
}

static int parse_num(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	if (tc_parse_u64(s, out) || *out == 0 || *out > max)
		return cli_usage_error(&cmd_record, "%s needs a number from 1 to %" PRIu64 ", not '%s'",
				       opt, max, s);
	return 0;
}

#define SIM_CALLERS 32   /* --sim -g: the callers a chain holds */

/* --sim: the program under valgrind, its counts written as a recording. */
static int record_sim(const char *cpu_dump, const char *events, const char *output,
		      char *const *prog, bool callchain, bool quiet)
{
	struct tacho_sim_opts so = { .sz = sizeof(so), .cpu_dump = cpu_dump };
	struct tacho_sim_record_opts ro = { .sz = sizeof(ro), .events = events,
					    .output = output,
					    .callers = callchain ? SIM_CALLERS : 0 };
	struct tacho_record_result res = { .sz = sizeof(res) };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_sim *sim = NULL;
	char size[32];
	int err = tacho_sim_new(&so, &sim, &diag);

	if (err) {
		cli_error("cannot simulate: %s", diag.message[0] ? diag.message : tacho_strerror(err));
		return EXIT_FAIL;
	}
	err = tacho_sim_record(sim, prog, &ro, &res, &diag);
	tacho_sim_free(sim);
	if (err == -TACHO_ENOVALUE) {
		cli_error("%s", diag.message);
		return EXIT_FAIL;
	}
	if (err)
		return cli_session_error(err, &diag, res.exec_err);
	if (!quiet)
		fprintf(stderr, "tacho: %" PRIu64 " simulated samples (one per instruction, %s"
			"event), in '%s' (%s)\n", res.samples, callchain ? "calling context and " :
			"", output ? output : "tacho.rec", tc_fmt_size(res.bytes, size, sizeof(size)));
	if (res.exit.signal && !quiet) {
		char how[96];
		fprintf(stderr, "tacho: the program %s\n",
			tacho_exit_describe(&res.exit, how, sizeof(how)));
	}
	return res.exit.status;
}

/* --call-graph fp | dwarf[,SIZE] | lbr into the options. 0 or EXIT_USAGE (said). */
static int parse_call_graph(const char *s, struct tacho_record_opts *o)
{
	uint64_t v;

	o->stack_size = 0;
	if (!strcmp(s, "fp")) {
		o->call_graph = TACHO_CALL_GRAPH_FP;
	} else if (!strcmp(s, "lbr")) {
		o->call_graph = TACHO_CALL_GRAPH_LBR;
	} else if (!strcmp(s, "dwarf")) {
		o->call_graph = TACHO_CALL_GRAPH_DWARF;
	} else if (!strncmp(s, "dwarf,", 6)) {
		o->call_graph = TACHO_CALL_GRAPH_DWARF;
		if (tc_parse_u64(s + 6, &v) || v == 0 || v > 65528 || v % 8)
			return cli_usage_error(&cmd_record, "--call-graph dwarf,<size> needs a "
					       "multiple of 8 from 8 to 65528 bytes, not '%s'",
					       s + 6);
		o->stack_size = (unsigned)v;
	} else {
		return cli_usage_error(&cmd_record, "--call-graph takes fp, dwarf[,<size>] or "
				       "lbr, not '%s'", s);
	}
	return 0;
}

/* " (cpu0 12, cpu3 46, 5 on no known CPU)": where the losses were, if any. */
static void lost_where(const struct tacho_record_result *res, char *buf, size_t size)
{
	struct tc_sb sb = TC_SB_INIT;
	const char *sep = " (";

	buf[0] = 0;
	if (!res->lost)
		return;
	tc_sb_init(&sb);
	for (unsigned c = 0; c < TACHO_RECORD_LOST_CPUS; c++) {
		if (!res->lost_cpu[c])
			continue;
		tc_sb_addf(&sb, "%scpu%u %" PRIu64, sep, c, res->lost_cpu[c]);
		sep = ", ";
	}
	if (res->lost_cpu_more) {
		tc_sb_addf(&sb, "%s%" PRIu64 " on cpu%u and above", sep, res->lost_cpu_more,
			   TACHO_RECORD_LOST_CPUS);
		sep = ", ";
	}
	if (res->lost_unattributed)
		tc_sb_addf(&sb, "%s%" PRIu64 " on no known CPU", sep, res->lost_unattributed);
	tc_sb_adds(&sb, ")");
	snprintf(buf, size, "%s", sb.oom ? "" : sb.buf);
	tc_sb_exit(&sb);
}

/* What the options ask, as cmd_record_fn takes them from record_option. */
struct record_cli {
	struct tacho_record_opts o;
	struct tc_sb events;            /* every -e, comma-joined */
	struct cli_push push;
	bool quiet, sim, no_cache;
	const char *sim_cpu;
};

/* One option into c: 0, or -1 for a usage error (said). */
static int record_option(struct record_cli *c, int opt)
{
	uint64_t v;

	switch (opt) {
	case 'e':
		if (!*optarg) {
			cli_usage_error(&cmd_record, "-e needs an event");
			return -1;
		}
		tc_sb_addf(&c->events, "%s%s", c->events.len ? "," : "", optarg);
		break;
	case 'c':
		if (parse_num("-c", optarg, UINT64_MAX >> 1, &c->o.period))
			return -1;
		break;
	case 'F':
		if (parse_num("-F", optarg, 1000000, &v))
			return -1;
		c->o.freq = (unsigned)v;
		break;
	case 'g':
		c->o.call_graph = TACHO_CALL_GRAPH_FP;
		c->o.stack_size = 0;
		break;
	case OPT_CALL_GRAPH:
		if (parse_call_graph(optarg, &c->o))
			return -1;
		break;
	case 'o':
		c->o.output = optarg;
		break;
	case 'p':
		if (parse_num("-p", optarg, INT32_MAX, &v))
			return -1;
		c->o.pid = (pid_t)v;
		break;
	case 'a':
		c->o.system_wide = true;
		break;
	case 'm':
		if (parse_num("-m", optarg, 1u << 20, &v))
			return -1;
		if (v & (v - 1)) {
			cli_usage_error(&cmd_record, "-m needs a power of two, not %" PRIu64, v);
			return -1;
		}
		c->o.mmap_pages = (unsigned)v;
		break;
	case 'q':
		c->quiet = true;
		break;
	case OPT_OFF_CPU:
		c->o.off_cpu = true;
		break;
	case OPT_SIM:
		c->sim = true;
		break;
	case OPT_SIM_CPU:
		if (!*optarg) {
			cli_usage_error(&cmd_record, "--sim-cpu needs a CPUID dump");
			return -1;
		}
		c->sim_cpu = optarg;
		break;
	case OPT_NO_BUILDID_CACHE:
		c->no_cache = true;
		break;
	case OPT_PUSH:
		c->push.url = optarg;
		break;
	case OPT_PUSH_NAME:
		c->push.name = optarg;
		break;
	case OPT_PUSH_LABEL:
		if (cli_push_label_add(&c->push, &cmd_record, optarg, NULL))
			return -1;
		break;
	case OPT_PUSH_FORMAT:
		if (strcmp(optarg, "pprof") && strcmp(optarg, "folded")) {
			cli_usage_error(&cmd_record, "--push-format takes pprof or "
					"folded, not '%s'", optarg);
			return -1;
		}
		c->push.format = optarg;
		break;
	}
	return 0;
}

static int cmd_record_fn(int argc, char **argv)
{
	struct cli_args args;
	struct record_cli c = { .o = { .sz = sizeof(c.o) }, .events = TC_SB_INIT,
				.push = { .pyroscope = true } };
	struct tacho_record_result res = { .sz = sizeof(res) };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct cli_signals saved;
	long long t0, t1;
	int ret;
	char cache_dir[4096];
	int opt, err;
	char size[32];

	tc_sb_init(&c.events);
	cli_args_init(&args, &cmd_record, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		if (record_option(&c, opt))
			goto out_usage;
	}
	if (opt < 0) {
		tc_sb_exit(&c.events);
		return args.exit;
	}
	if (c.o.period && c.o.freq) {
		cli_usage_error(&cmd_record, "-c and -F exclude each other");
		goto out_usage;
	}
	if (optind < argc)
		c.o.argv = argv + optind;
	if (cli_push_check(&c.push, &cmd_record))
		goto out_usage;
	if (c.push.url && c.sim) {
		cli_usage_error(&cmd_record, "--push sends samples of this machine: not the "
				"simulated ones of --sim");
		goto out_usage;
	}
	if (c.sim_cpu && !c.sim) {
		cli_usage_error(&cmd_record, "--sim-cpu goes with --sim");
		goto out_usage;
	}
	if (c.sim && (c.o.period || c.o.freq || c.o.pid || c.o.system_wide || c.o.mmap_pages ||
		      !c.o.argv)) {
		cli_usage_error(&cmd_record, "--sim runs a program under valgrind and counts every "
				"instruction: no -c, -F, -p, -a or -m, and a program to run");
		goto out_usage;
	}
	if (c.sim && c.o.off_cpu) {
		cli_usage_error(&cmd_record, "--off-cpu samples this machine's scheduler: not "
				"with --sim");
		goto out_usage;
	}
	if (c.sim && c.o.call_graph > TACHO_CALL_GRAPH_FP) {
		cli_usage_error(&cmd_record, "--sim takes its call chains from valgrind: -g, not "
				"--call-graph dwarf or lbr");
		goto out_usage;
	}
	if (c.sim) {
		if (c.events.oom) {
			tc_sb_exit(&c.events);
			cli_error("out of memory");
			return EXIT_FAIL;
		}
		err = record_sim(c.sim_cpu, c.events.len ? c.events.buf : NULL, c.o.output,
				 c.o.argv, c.o.callchain || c.o.call_graph != TACHO_CALL_GRAPH_NONE,
				 c.quiet);
		tc_sb_exit(&c.events);
		return err;
	}
	if (c.o.pid && (c.o.system_wide || c.o.argv)) {
		cli_usage_error(&cmd_record, "-p records an existing process: no -a, no program");
		goto out_usage;
	}
	if (!c.o.argv && !c.o.pid && !c.o.system_wide) {
		cli_usage_error(&cmd_record, "give a program to run, -p <pid> or -a");
		goto out_usage;
	}
	if (c.events.oom) {
		tc_sb_exit(&c.events);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	c.o.events = c.events.len ? c.events.buf : NULL;
	/* the binaries go into the build-id cache unless told not to, or there is no
	 * place for it (no HOME) */
	if (!c.no_cache && tacho_buildid_cache_dir(cache_dir, sizeof(cache_dir)) == 0)
		c.o.buildid_cache = cache_dir;
	c.o.stop = &cli_stop_sig;
	c.o.notify = say;
	c.o.notify_arg = &c.quiet;

	/* the program still dies of Ctrl-C; tacho lives to finish the file */
	cli_stop_signals_catch(&saved);
	diag = (struct tacho_diag){ .sz = sizeof(diag) };
	t0 = (long long)time(NULL);
	err = tacho_record(&c.o, &res, &diag);
	t1 = (long long)time(NULL);
	cli_stop_signals_restore(&saved);
	tc_sb_exit(&c.events);
	if (err)
		return cli_session_error(err, &diag, res.exec_err);
	if (!c.quiet) {
		char where[512];

		lost_where(&res, where, sizeof(where));
		fprintf(stderr, "tacho: %" PRIu64 " samples, %" PRIu64 " lost%s, in '%s' (%s; "
			"rings of %u pages per CPU)\n", res.samples, res.lost, where,
			c.o.output ? c.o.output : "tacho.rec",
			tc_fmt_size(res.bytes, size, sizeof(size)), res.ring_pages);
	}
	if (res.lost)
		cli_warn("%" PRIu64 " samples were lost (the ring filled faster than tacho read it; "
			 "try a larger -m than %u or a longer period)", res.lost, res.ring_pages);
	if (res.throttled && !c.quiet)
		cli_warn("the kernel throttled sampling %" PRIu64 " times "
			 "(kernel.perf_event_max_sample_rate): try a longer period", res.throttled);
	ret = EXIT_OK;
	if (res.ran) {
		if (res.exit.signal && !c.quiet) {
			char how[96];
			fprintf(stderr, "tacho: the program %s\n",
				tacho_exit_describe(&res.exit, how, sizeof(how)));
		}
		ret = res.exit.status;
	}
	/* the recording stays whatever the push gives; a failed push is exit 1 unless
	 * the program's status already says a failure */
	if (c.push.url && cli_push_profile(&c.push, c.o.output ? c.o.output : "tacho.rec", t0, t1) !=
	    EXIT_OK && ret == EXIT_OK)
		ret = EXIT_FAIL;
	return ret;
out_usage:
	tc_sb_exit(&c.events);
	return EXIT_USAGE;
}

const struct cli_cmd cmd_record = {
	.name = "record",
	.fn = cmd_record_fn,
	.summary = "sample a program's events into a file (see 'tacho report')",
	.usage = record_usage,
	.options = record_options,
	.help_col = 27,
	.indent_long = true,
	.stop_at_operand = true,
	.footer = record_footer,
};
