/* cmd-trace.c - `tacho trace`: record a program's marks, regions and events on one
 * timeline; `tacho trace report`: the timeline, the delta table, Chrome JSON, SVG. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "util/util.h"

static const char trace_usage[] =
	"usage: tacho trace [-e <events>] [-s] [--sched-latency] [-o <file>] [--ring <entries>] [--ring-full drop|wait] [-a] [-m <n>] -- <program> [<args>...]\n"
	"   or: tacho trace [-e <events>] [-s] [-o <file>] [-m <n>] -p <pid>[,<pid>...]\n"
	"   or: tacho trace [-e <events>] [-s] [--sched-latency] [-o <file>] [-m <n>] -a\n"
	"   or: tacho trace report [-i <file>] [-s] [--format text|csv|json|chrome|svg|html] [-o <out>]\n"
	"\n"
	"Records what a program marks (tacho_mark, tacho_mark_counter), its regions as spans,\n"
	"and every occurrence of the events of -e (syscalls:sys_enter_write, sched:sched_switch,\n"
	"page-faults...), each with its thread, on one clock: the marks' TSC is converted to\n"
	"perf's clock with the kernel's own conversion. Tracepoints carry their payloads\n"
	"(decoded with libtraceevent); sched_switch and sched_wakeup give thread states.\n"
	"The file is written as the trace goes. 'tacho trace report' shows it (docs/trace.md).\n"
	"\n";

static const struct cli_option trace_options[] = {
	{ 'e', 'e', "event", "<events>",
	  "events of the grammar (docs/events.md), each recorded at\n"
	  "every occurrence. Example: syscalls:sys_enter_write" },
	{ 's', 's', "summary", NULL,
	  "record every system call (raw_syscalls) and, at the end,\n"
	  "print each thread's calls, errors by errno and latency" },
	{ 257, 0, "sched-latency", NULL,
	  "record scheduling on every CPU (implies -a) and print\n"
	  "each thread's delays from wake-up to running" },
	{ 'o', 'o', "output", "<file>",
	  "the trace file (default tacho.trace)" },
	{ 256, 0, "ring", "<entries>",
	  "entries of each thread's mark ring, a power of two\n"
	  "(default 65536); a full ring drops new marks, counted" },
	{ 258, 0, "ring-full", "<drop|wait>",
	  "what a thread whose ring is full does: drop the mark,\n"
	  "counted (default), or wait for room: no mark lost, the\n"
	  "program slowed by the waits (counted; 1 s at most each)" },
	{ 'p', 'p', "pid", "<pids>",
	  "trace running processes, PID[,PID...] (their events:\n"
	  "they have no ring for marks) until they end or Ctrl-C" },
	{ 'a', 'a', "all-cpus", NULL,
	  "the events of every CPU (with a program: while it runs,\n"
	  "and its marks; without: until Ctrl-C)" },
	{ 'm', 'm', "mmap-pages", "<n>",
	  "data pages of each kernel ring, a power of two (default\n"
	  "128): more for -a on a busy machine, whose events a full\n"
	  "ring loses (counted)" },
	{ 'q', 'q', "quiet", NULL,
	  "do not say what was recorded" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char trace_footer[] =
	"exit status: the program's (128 + signal if a signal ended it; also when it wrote\n"
	"over its trace area, which is a warning), 126/127 when it could not be run, 1 when\n"
	"tracing failed, 2 bad usage\n";

static const char report_usage[] =
	"usage: tacho trace report [-i <file>] [-s] [--format text|csv|json|chrome|svg|html] [-o <out>]\n"
	"\n"
	"Shows a trace: text is a timeline with time ticks (a row per thread and channel) and\n"
	"the delta table (per channel, and from each event of A to the next of B: count, min,\n"
	"median, mean, p99, max); csv and json are the delta table and the counts; chrome is\n"
	"Chrome's Trace Event JSON (Perfetto's UI, chrome://tracing); svg a picture; html a\n"
	"page that zooms and pans, with the item under the pointer told. -s: the\n"
	"summary alone (system calls, scheduling latency), which text and json also have.\n"
	"\n";

static const struct cli_option report_options[] = {
	{ 'i', 'i', "input", "<file>", "the trace (default tacho.trace)" },
	{ 's', 's', "summary", NULL, "only the summary: system calls, scheduling latency" },
	{ 'f', 'f', "format", "<fmt>", "text (default), csv, json, chrome, svg or html" },
	{ 'o', 'o', "output", "<out>", "write there instead of to stdout" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const struct cli_cmd cmd_trace_report = {
	.name = "trace report",
	.summary = "show a trace",
	.usage = report_usage,
	.options = report_options,
	.help_col = 24,
};

/* A trace is written as FILE.tmp-XXXXXX and renamed to FILE when it ends: a tacho
 * killed half-way (SIGKILL) leaves the temporary file. The newest such file beside in
 * into tmp; how many there are (0: none). */
static unsigned killed_trace(const char *in, char *tmp, size_t size)
{
	const char *slash = strrchr(in, '/');
	const char *base = slash ? slash + 1 : in;
	size_t blen = strlen(base);
	char dirname[4096];
	struct timespec newest = { 0, 0 };
	unsigned found = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(dirname, sizeof(dirname), "%.*s", slash ? (int)(slash - in + 1) : 1,
		 slash ? in : ".");
	dir = opendir(dirname);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		char path[4096 + 256];
		struct stat sb;

		if (strncmp(d->d_name, base, blen) || strncmp(d->d_name + blen, ".tmp-", 5) ||
		    strlen(d->d_name + blen + 5) != 6)
			continue;
		snprintf(path, sizeof(path), "%s%s", slash ? dirname : "", d->d_name);
		if (stat(path, &sb) || !S_ISREG(sb.st_mode))
			continue;
		found++;
		if (found == 1 || sb.st_mtim.tv_sec > newest.tv_sec ||
		    (sb.st_mtim.tv_sec == newest.tv_sec && sb.st_mtim.tv_nsec > newest.tv_nsec)) {
			newest = sb.st_mtim;
			snprintf(tmp, size, "%s", path);
		}
	}
	closedir(dir);
	return found;
}

/* in is missing: says in one line whether a killed trace left its temporary file, and
 * whether that reads. EXIT_FAIL. */
static int trace_missing(const char *in, int err, const char *line)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_timeline *t = NULL;
	char tmp[4096 + 256], more[64] = "";
	unsigned n = killed_trace(in, tmp, sizeof(tmp));
	int lerr;

	if (!n) {
		cli_error("cannot read the trace %s", line[0] ? line : tacho_strerror(err));
		return EXIT_FAIL;
	}
	if (n > 1)
		snprintf(more, sizeof(more), " (the newest of %u)", n);
	lerr = tacho_timeline_load(tmp, &t, &diag);
	if (lerr) {
		char why[600];
		if (diag.message[0])
			tacho_diag_format(&diag, why, sizeof(why));
		cli_error("the trace '%s' was not finished (tacho trace was killed, or "
			  "still runs): what it wrote is in '%s'%s, which cannot be read: %s",
			  in, tmp, more, diag.message[0] ? why : tacho_strerror(lerr));
	} else {
		cli_error("the trace '%s' was not finished (tacho trace was killed, or "
			  "still runs): what it wrote is in '%s'%s, which reads up to its last "
			  "flush (%zu items): tacho trace report -i '%s'", in, tmp, more,
			  tacho_timeline_items(t), tmp);
	}
	tacho_timeline_free(t);
	return EXIT_FAIL;
}

static int trace_report(int argc, char **argv)
{
	struct cli_args args;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_write_opts wo;
	struct tacho_timeline *t = NULL;
	const char *in = "tacho.trace", *out = NULL, *format = "text";
	FILE *f = stdout;
	bool summary = false;
	int opt, err;

	cli_args_init(&args, &cmd_trace_report, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case 'i':
			in = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 's':
			summary = true;
			break;
		case 'o':
			out = optarg;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (optind < argc)
		return cli_usage_error(&cmd_trace_report, "unexpected argument '%s'", argv[optind]);
	if (strcmp(format, "text") && strcmp(format, "csv") && strcmp(format, "json") &&
	    strcmp(format, "chrome") && strcmp(format, "svg") && strcmp(format, "html"))
		return cli_usage_error(&cmd_trace_report, "unknown format '%s' (text, csv, json, "
				       "chrome, svg or html)", format);
	if (summary && strcmp(format, "text"))
		return cli_usage_error(&cmd_trace_report, "-s is a text view: the %s view has "
				       "%s", format, !strcmp(format, "json") ? "the summary "
				       "already (syscalls, sched_latency)" : "no summary");
	err = tacho_timeline_load(in, &t, &diag);
	if (err) {
		char line[600] = "";
		if (diag.message[0])
			tacho_diag_format(&diag, line, sizeof(line));
		if (err == -ENOENT)
			return trace_missing(in, err, line);
		cli_error("cannot read the trace %s", line[0] ? line : tacho_strerror(err));
		return EXIT_FAIL;
	}
	if (out) {
		f = cli_open_output(out);   /* mode 0600, renamed into place when whole */
		if (!f) {
			tacho_timeline_free(t);
			return EXIT_FAIL;
		}
	}
	cli_write_opts_init(&wo);
	if (summary)
		err = tacho_timeline_write_summary(t, f);
	else if (!strcmp(format, "chrome"))
		err = tacho_timeline_write_chrome(t, f);
	else if (!strcmp(format, "svg"))
		err = tacho_timeline_write_svg(t, f);
	else if (!strcmp(format, "html"))
		err = tacho_timeline_write_html(t, f);
	else
		err = tacho_timeline_write(t, f, !strcmp(format, "csv") ? TACHO_FORMAT_CSV :
					   !strcmp(format, "json") ? TACHO_FORMAT_JSON :
					   TACHO_FORMAT_TABLE, &wo);
	tacho_timeline_free(t);
	if (err && err != -EIO) {
		cli_error("cannot write the trace's %s view: %s", format, tacho_strerror(err));
		if (out)
			cli_abandon_output(f);
		return EXIT_FAIL;
	}
	/* a write error (-EIO) is told once, by the close or main's check of stdout */
	if (out && cli_close_output(f, out) != EXIT_OK)
		return EXIT_FAIL;
	return err ? EXIT_FAIL : EXIT_OK;
}

/* -s and --sched-latency: the summary of the trace just written, on stderr (stdout is
 * the program's), as perf trace -s prints it. 0 or 1 (said). */
static int trace_summary(const char *path)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_timeline *t = NULL;
	int err = tacho_timeline_load(path, &t, &diag);

	if (err) {
		char line[600];
		if (diag.message[0])
			tacho_diag_format(&diag, line, sizeof(line));
		cli_error("cannot read the trace for its summary: %s", diag.message[0] ? line :
			  tacho_strerror(err));
		return 1;
	}
	err = tacho_timeline_write_summary(t, stderr);
	tacho_timeline_free(t);
	if (err) {
		cli_error("cannot write the summary: %s", tacho_strerror(err));
		return 1;
	}
	return 0;
}

/* -p's list: process ids, comma-separated, each once. 0 or a usage error (2). */
static int parse_pids(const char *arg, pid_t **pids, size_t *n)
{
	const char *p = arg;

	do {
		char num[24];
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		uint64_t v;
		pid_t *np;

		snprintf(num, sizeof(num), "%.*s", (int)(len < sizeof(num) ? len : sizeof(num) - 1), p);
		if (len == 0 || len >= sizeof(num) || tc_parse_u64(num, &v) || v == 0 ||
		    v > INT32_MAX)
			return cli_usage_error(&cmd_trace, "-p needs process ids separated by "
					       "commas, not '%s'", arg);
		for (size_t i = 0; i < *n; i++)
			if ((*pids)[i] == (pid_t)v)
				return cli_usage_error(&cmd_trace, "-p names process %" PRIu64
						       " twice", v);
		np = realloc(*pids, (*n + 1) * sizeof(*np));
		if (!np) {
			cli_error("out of memory");
			return EXIT_FAIL;
		}
		*pids = np;
		(*pids)[(*n)++] = (pid_t)v;
		p = comma ? comma + 1 : NULL;
	} while (p);
	return 0;
}

/* The events lost by channel, "cpu0 12, cpu1 3, 4 on no known CPU", as tacho record
 * says it. */
static const char *lost_words(const struct tacho_timeline_result *res, char *buf,
			      size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned c = 0; c < TACHO_TIMELINE_LOST_CPUS && len < size; c++)
		if (res->events_lost_cpu[c])
			len += (size_t)snprintf(buf + len, size - len, "%scpu%u %" PRIu64,
						len ? ", " : "", c, res->events_lost_cpu[c]);
	if (res->events_lost_cpu_more && len < size)
		len += (size_t)snprintf(buf + len, size - len, "%s%" PRIu64 " on cpu%u and above",
					len ? ", " : "", res->events_lost_cpu_more,
					TACHO_TIMELINE_LOST_CPUS);
	if (res->events_lost_unattributed && len < size)
		snprintf(buf + len, size - len, "%s%" PRIu64 " on no known CPU", len ? ", " : "",
			 res->events_lost_unattributed);
	return buf;
}

/* What tacho says after a trace: what the file holds, then what was dropped, waited for,
 * lost or found damaged (each a line on stderr; -q leaves out the first two). */
static void trace_said(const struct tacho_timeline_result *r, const char *output, bool quiet)
{
	char size[32];

	if (!quiet)
		fprintf(stderr, "tacho: %" PRIu64 " marks, %" PRIu64 " events, in '%s' (%s)\n",
			r->marks, r->events, output ? output : "tacho.trace",
			tc_fmt_size(r->bytes, size, sizeof(size)));
	if (r->dropped)
		cli_warn("%" PRIu64 " marks were dropped (full rings: try a larger --ring, or "
			 "--ring-full wait)", r->dropped);
	if (r->waits && !quiet)
		fprintf(stderr, "tacho: the program waited for room in its mark rings %" PRIu64
			" times, %.3f ms in all (--ring-full wait): its marks' times include "
			"those waits\n", r->waits, (double)r->waited_ns / 1e6);
	if (r->events_lost) {
		char by[1024];
		cli_warn("%" PRIu64 " events were lost (%s): the kernel's ring filled faster than "
			 "tacho read it (try a larger -m)", r->events_lost,
			 lost_words(r, by, sizeof(by)));
	}
	/* the program's own bug (a stray pointer into its area), said beside its status,
	 * which stands: what could be read is in the file, and the file says so too */
	if (r->damaged_entries || r->damaged_rings || r->damaged_header)
		cli_warn("the trace is damaged: the program wrote over its trace area (%" PRIu64
			 " entries refused, %" PRIu64 " rings given up%s); what was there is lost",
			 r->damaged_entries, r->damaged_rings,
			 r->damaged_header ? ", its header overwritten" : "");
}

static int cmd_trace_fn(int argc, char **argv)
{
	struct cli_args args;
	struct tacho_timeline_opts o = { .sz = sizeof(o) };
	struct tacho_timeline_result res = { .sz = sizeof(res) };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct cli_signals saved;
	struct tc_sb events = TC_SB_INIT;
	pid_t *pids = NULL;
	size_t npids = 0;
	bool quiet = false, summary = false, sched_latency = false;
	uint64_t v;
	int opt, err;

	if (argc > 1 && !strcmp(argv[1], "report"))
		return trace_report(argc - 1, argv + 1);
	tc_sb_init(&events);
	cli_args_init(&args, &cmd_trace, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case 'e':
			if (!*optarg) {
				tc_sb_exit(&events);
				return cli_usage_error(&cmd_trace, "-e needs an event");
			}
			tc_sb_addf(&events, "%s%s", events.len ? "," : "", optarg);
			break;
		case 'o':
			o.output = optarg;
			break;
		case 's':
			summary = true;
			break;
		case 257:
			sched_latency = true;
			break;
		case 256:
			if (tc_parse_u64(optarg, &v) || v < 2 || v > (1u << 24) || (v & (v - 1))) {
				cli_usage_error(&cmd_trace, "--ring needs a power of two from 2 to "
						"16777216, not '%s'", optarg);
				goto out_usage;
			}
			o.ring_entries = (unsigned)v;
			break;
		case 258:
			if (!strcmp(optarg, "wait") || !strcmp(optarg, "drop")) {
				o.wait_full = !strcmp(optarg, "wait");
				break;
			}
			cli_usage_error(&cmd_trace, "--ring-full takes drop or wait, not '%s'",
					optarg);
			goto out_usage;
		case 'p':
			err = parse_pids(optarg, &pids, &npids);
			if (err) {
				tc_sb_exit(&events);
				free(pids);
				return err;
			}
			break;
		case 'a':
			o.system_wide = true;
			break;
		case 'm':
			if (tc_parse_u64(optarg, &v) || !v || v > (1u << 20) || (v & (v - 1))) {
				cli_usage_error(&cmd_trace, "-m needs a power of two from 1 to "
						"1048576, not '%s'", optarg);
				goto out_usage;
			}
			o.mmap_pages = (unsigned)v;
			break;
		case 'q':
			quiet = true;
			break;
		}
	}
	if (opt < 0) {
		tc_sb_exit(&events);
		free(pids);
		return args.exit;
	}
	if (sched_latency && npids) {
		/* a switch to a thread fires in the context of the task that leaves the CPU:
		 * only a trace of every CPU sees a process's threads start to run */
		cli_usage_error(&cmd_trace, "--sched-latency traces every CPU: it takes a program "
				"or nothing, not -p");
		goto out_usage;
	}
	/* raw_syscalls: two tracepoints see every call (the ~700 of syscalls:* take
	 * seconds to open), each with the call's number and the exit with its return */
	if (summary)
		tc_sb_addf(&events, "%sraw_syscalls:sys_enter,raw_syscalls:sys_exit",
			   events.len ? "," : "");
	if (sched_latency) {
		tc_sb_addf(&events, "%ssched:sched_switch,sched:sched_wakeup,"
			   "sched:sched_wakeup_new", events.len ? "," : "");
		o.system_wide = true;
	}
	if (optind >= argc && !npids && !o.system_wide) {
		cli_usage_error(&cmd_trace, "give a program to trace, -p or -a");
		goto out_usage;
	}
	if (optind < argc && npids) {
		cli_usage_error(&cmd_trace, "-p traces running processes: give no program");
		goto out_usage;
	}
	if (o.wait_full && npids) {
		cli_usage_error(&cmd_trace, "--ring-full wait needs a program: -p traces running "
				"processes, which have no mark rings");
		goto out_usage;
	}
	if (npids && o.system_wide) {
		cli_usage_error(&cmd_trace, "-p and -a exclude each other");
		goto out_usage;
	}
	if (events.oom) {
		tc_sb_exit(&events);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	o.argv = optind < argc ? argv + optind : NULL;
	o.pids = pids;
	o.npids = npids;
	o.events = events.len ? events.buf : NULL;
	o.stop = &cli_stop_sig;
	cli_stop_signals_catch(&saved);
	err = tacho_timeline_record(&o, &res, &diag);
	cli_stop_signals_restore(&saved);
	tc_sb_exit(&events);
	free(pids);
	if (err)
		return cli_session_error(err, &diag, res.exec_err);
	trace_said(&res, o.output, quiet);
	if ((summary || sched_latency) && trace_summary(o.output ? o.output : "tacho.trace"))
		return EXIT_FAIL;
	if (res.ran)
		return res.exit.status;
	return EXIT_OK;
out_usage:
	tc_sb_exit(&events);
	free(pids);
	return EXIT_USAGE;
}

static const struct cli_cmd *const trace_subcommands[] = { &cmd_trace_report, NULL };

const struct cli_cmd cmd_trace = {
	.name = "trace",
	.fn = cmd_trace_fn,
	.summary = "record a program's marks, regions and events on one timeline",
	.usage = trace_usage,
	.options = trace_options,
	.help_col = 24,
	.stop_at_operand = true,
	.footer = trace_footer,
	.subcommands = trace_subcommands,
};
