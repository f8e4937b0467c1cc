/* cmd-report.c - `tacho report`: hot spots of a record file, by function, binary, source
 * line or instruction; one function instruction by instruction; exports. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "util/util.h"

enum { OPT_CHILDREN = 256, OPT_JSON, OPT_ANNOTATE, OPT_FORMAT, OPT_EVENT, OPT_NO_DEMANGLE,
       OPT_COMM, OPT_PID, OPT_TID, OPT_DSO, OPT_SYMBOLS, OPT_TIME, OPT_PERCENT_LIMIT,
       OPT_CSV, OPT_MCA, OPT_STDIO, OPT_TUI, OPT_GTK, OPT_FIELDS, OPT_INLINE, OPT_NO_INLINE };

#define MAX_SORT 16

static const char report_usage[] =
	"usage: tacho report [-i <file>] [--event <name>] [--sort <key>[,<key>...]] [--children] [-g caller|callee] [<filters>] [--percent-limit <pct>] [--json|--csv] [--no-demangle] [--no-inline]\n"
	"   or: tacho report [-i <file>] --annotate <symbol> [--mca] [<filters>] [--json] [--no-demangle]\n"
	"   or: tacho report [-i <file>] --format folded|perf-script|script-json|pprof|svg|speedscope [-o <file>] [<filters>] [--no-demangle] [--no-inline]\n"
	"   or: tacho report [-i <file>] -F <field>[,<field>...] [-o <file>] [<filters>]\n"
	"filters: --comm, --pid, --tid, --cpu, --dso, --symbols (comma lists), --time <start>,<end>\n"
	"\n"
	"Reads a file of 'tacho record', or perf's perf.data (file or pipe mode), and shows\n"
	"where the samples fell, most first, with\n"
	"their share of all events (each sample weighs its period, like perf's Overhead). Binaries are found through their mappings and checked\n"
	"by build-id; symbols come from .symtab or .dynsym and separate debug files, lines\n"
	"from DWARF; the vDSO from the copy in the file; the kernel from /proc/kallsyms when\n"
	"the recording comes from this boot. Samples of data breakpoints, which the CPU\n"
	"reports after the storing instruction, are put on the storing instruction.\n"
	"\n";

static const struct cli_option report_options[] = {
	{ 'i', 'i', "input", "<file>",
	  "the record file, tacho's or perf's perf.data; - reads\n"
	  "standard input (default tacho.rec)" },
	{ OPT_EVENT, 0, "event", "<name>",
	  "the event to report when the file has several (default:\n"
	  "the first)" },
	{ 's', 's', "sort", "<keys>",
	  "rows by a comma list of keys (perf's syntax): comm, pid,\n"
	  "tid, cpu, event, dso, symbol (default: the function and\n"
	  "its binary), line (source file and line), address\n"
	  "(instruction); e.g. --sort comm,dso,symbol" },
	{ OPT_CHILDREN, 0, "children", NULL,
	  "count each function for every sample with it anywhere on\n"
	  "the call chain (record with -g)" },
	{ 'g', 'g', "call-graph", "<order>",
	  "below each row, a tree of the recorded call chains: caller\n"
	  "(from the root down) or callee (from the row up to its\n"
	  "callers), each node with its percent (record with -g)" },
	{ OPT_COMM, 0, "comm", "<names>",
	  "only samples of these processes (comma list)" },
	{ OPT_COMM, 0, "comms", "<names>", "the same (perf's name)" },
	{ OPT_PID, 0, "pid", "<pids>",
	  "only samples of these process ids" },
	{ OPT_TID, 0, "tid", "<tids>",
	  "only samples of these thread ids" },
	{ 'C', 'C', "cpu", "<cpus>",
	  "only samples taken on these CPUs (\"0-3,8\")" },
	{ OPT_DSO, 0, "dso", "<dsos>",
	  "only samples in these binaries (path or file name)" },
	{ OPT_DSO, 0, "dsos", "<dsos>", "the same (perf's name)" },
	{ OPT_SYMBOLS, 0, "symbols", "<syms>",
	  "only samples in these functions" },
	{ OPT_TIME, 0, "time", "<range>",
	  "only samples in START,END (seconds as perf-script shows\n"
	  "them; +S: after the first sample; either side may be\n"
	  "empty), or percent slices: 0%-25%, 10%/2" },
	{ OPT_PERCENT_LIMIT, 0, "percent-limit", "<pct>",
	  "leave out rows (and tree nodes) under pct percent" },
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON object: {\"version\": 1, \"samples\", \"lost\", \"rows\"}" },
	{ OPT_CSV, 0, "csv", NULL,
	  "CSV: a header row, then a row per entry (and tree node), a\n"
	  "column per dimension (docs/schemas.md)" },
	{ OPT_STDIO, 0, "stdio", NULL,
	  "the text report on standard output: the default (perf's\n"
	  "spelling, accepted)" },
	{ OPT_TUI, 0, "tui", NULL,
	  "refused: tacho report has no interactive browser" },
	{ OPT_GTK, 0, "gtk", NULL, "refused, as --tui" },
	{ OPT_ANNOTATE, 0, "annotate", "<sym>",
	  "function <sym> instruction by instruction: address,\n"
	  "mnemonic and operands, samples and percent, the source\n"
	  "lines interleaved with their text, the hottest marked" },
	{ OPT_MCA, 0, "mca", NULL,
	  "with --annotate: the function's basic block with the most\n"
	  "events to llvm-mca (this CPU's -mcpu): predicted IPC,\n"
	  "block throughput, resource pressure and bottleneck beside\n"
	  "the measured samples; --json writes that block alone" },
	{ OPT_FORMAT, 0, "format", "<f>",
	  "folded: one line per stack, for FlameGraph, speedscope and\n"
	  "inferno; perf-script: the text of `perf script`, for the\n"
	  "Firefox Profiler and speedscope; script-json: the same\n"
	  "samples as JSON with tracepoint payloads' fields; pprof:\n"
	  "gzipped profile.proto, for go tool pprof, Pyroscope,\n"
	  "Parca and Grafana; svg: an interactive flame graph\n"
	  "(click to zoom, search); speedscope: speedscope's JSON, a\n"
	  "profile per process in time order" },
	{ 'F', 'F', "fields", "<fields>",
	  "one line per sample with these fields, in this order\n"
	  "(perf script -F): comm, pid, tid, time, cpu, event,\n"
	  "period, ip, sym, symoff, dso, addr" },
	{ OPT_NO_DEMANGLE, 0, "no-demangle", NULL,
	  "show C++ names as the binary spells them (_ZN3foo3barEv),\n"
	  "not demangled (foo::bar()); demangling uses libstdc++\n"
	  "when it is installed" },
	{ OPT_INLINE, 0, "inline", NULL,
	  "functions the compiler inlined are frames of their own in\n"
	  "call graphs and stacks (-g, --children, the formats),\n"
	  "marked (inlined), from the binary's DWARF; the default,\n"
	  "as perf report's" },
	{ OPT_NO_INLINE, 0, "no-inline", NULL,
	  "no inlined functions as frames: each address is the\n"
	  "function the symbol table names (no DWARF read for it)" },
	{ 'o', 'o', "output", "<file>",
	  "write there instead of standard output" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char report_footer[] =
	"A file that ends early (the recording was killed) is read up to its last complete\n"
	"record, with a warning. exit status: 0 done, 1 the file cannot be read, 2 bad usage\n";

/* --annotate SYM --mca: the function's listing, then its hottest block through
 * llvm-mca (JSON: the block's document alone). Returns the exit status; closes out. */
static int report_mca(struct tacho_profile *p, const char *symbol, FILE *out,
		      const char *outpath, enum tacho_format fmt, const struct tacho_write_opts *wo)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_sim_mca *m = NULL;
	int err = tacho_sim_mca_profile(p, symbol, NULL, &m, &diag);

	if (err) {
		cli_error("cannot analyse the hottest block: %s",
			  diag.message[0] ? diag.message : tacho_strerror(err));
		cli_abandon_output(out);
		return EXIT_FAIL;
	}
	if (fmt == TACHO_FORMAT_TABLE) {
		err = tacho_profile_write_annotate(p, symbol, out, fmt, wo);
		if (!err && fputc('\n', out) == EOF)
			err = -EIO;
	}
	if (!err)
		err = tacho_sim_mca_write(m, out, fmt, wo);
	tacho_sim_mca_free(m);
	if (err)
		return cli_output_failed(out, outpath, err, "report");
	return cli_close_output(out, outpath);
}

/* --annotate of a name no sample is in: the nearest sampled function's name offered
 * ("did you mean"), as the event grammar offers events. */
static void no_such_function(struct tacho_profile *p, const char *name, const char *input)
{
	struct tacho_profile_row *rows = NULL;
	struct tc_nearest near;
	size_t n = 0;

	tc_nearest_init(&near, name, strlen(name));
	if (tacho_profile_rows(p, TACHO_SORT_SYMBOL, false, &rows, &n, sizeof(*rows)) == 0)
		for (size_t i = 0; i < n; i++)
			if (rows[i].symbol)
				tc_nearest_add(&near, rows[i].symbol, strlen(rows[i].symbol));
	if (tc_nearest_get(&near))
		cli_error("no samples in a function named '%s' (did you mean '%s'?)", name,
			  tc_nearest_get(&near));
	else
		cli_error("no samples in a function named '%s' (see 'tacho report -i %s')", name,
			  input);
	tc_nearest_exit(&near);
	free(rows);
}

/* True (said) when -o names the recording being reported, by any name (a hard link,
 * standard input): the report would replace it, and the recording is not the
 * report's to lose. */
static bool overwrites_input(const char *input, const char *outpath)
{
	struct stat in, out;

	if (!outpath || !strcmp(outpath, "-") || stat(outpath, &out) || !S_ISREG(out.st_mode))
		return false;
	if (strcmp(input, "-") ? stat(input, &in) : fstat(STDIN_FILENO, &in))
		return false;
	if (in.st_dev != out.st_dev || in.st_ino != out.st_ino)
		return false;
	cli_error("cannot write the report to '%s': it is the recording being reported (-i "
		  "%s), which it would replace", outpath, input);
	return true;
}

/* What the options ask, as cmd_report_fn takes them from report_option. */
struct report_cli {
	const char *input, *annotate, *format, *outpath, *event, *fields;
	enum tacho_sort sort[MAX_SORT];
	struct tacho_report_opts ro;    /* its sort is sort */
	struct tacho_profile_filter filter;
	bool filtering, json, csv, demangle, inline_frames, mca;
};

/* One option into c: 0, or the exit code (the message said). */
static int report_option(struct report_cli *c, int opt)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };

	switch (opt) {
	case 'i':
		c->input = optarg;
		break;
	case 's':
		if (tacho_profile_parse_sort(optarg, c->sort, MAX_SORT, &c->ro.nsort, &diag))
			return cli_usage_error(&cmd_report, "--sort: %s", diag.message);
		break;
	case OPT_CHILDREN:
		c->ro.children = true;
		break;
	case 'g':
		if (!strcmp(optarg, "caller"))
			c->ro.graph = TACHO_GRAPH_CALLER;
		else if (!strcmp(optarg, "callee"))
			c->ro.graph = TACHO_GRAPH_CALLEE;
		else
			return cli_usage_error(&cmd_report, "-g takes caller or callee, not '%s'",
					       optarg);
		break;
	case OPT_COMM:
		c->filter.comms = optarg;
		c->filtering = true;
		break;
	case OPT_PID:
		c->filter.pids = optarg;
		c->filtering = true;
		break;
	case OPT_TID:
		c->filter.tids = optarg;
		c->filtering = true;
		break;
	case 'C':
		c->filter.cpus = optarg;
		c->filtering = true;
		break;
	case OPT_DSO:
		c->filter.dsos = optarg;
		c->filtering = true;
		break;
	case OPT_SYMBOLS:
		c->filter.symbols = optarg;
		c->filtering = true;
		break;
	case OPT_TIME:
		c->filter.time = optarg;
		c->filtering = true;
		break;
	case OPT_PERCENT_LIMIT:
		if (tc_parse_double(optarg, &c->ro.percent_limit) || !(c->ro.percent_limit >= 0) ||
		    c->ro.percent_limit > 100)
			return cli_usage_error(&cmd_report, "--percent-limit takes a percentage "
					       "from 0 to 100, not '%s'", optarg);
		break;
	case OPT_JSON:
		c->json = true;
		break;
	case OPT_CSV:
		c->csv = true;
		break;
	case OPT_ANNOTATE:
		if (!*optarg)
			return cli_usage_error(&cmd_report, "--annotate needs a function's "
					       "name");
		c->annotate = optarg;
		break;
	case OPT_FORMAT:
		if (strcmp(optarg, "folded") && strcmp(optarg, "perf-script") &&
		    strcmp(optarg, "script-json") && strcmp(optarg, "pprof") &&
		    strcmp(optarg, "svg") && strcmp(optarg, "speedscope"))
			return cli_usage_error(&cmd_report, "--format takes folded, perf-script, "
					       "script-json, pprof, svg or speedscope, "
					       "not '%s'", optarg);
		c->format = optarg;
		break;
	case 'o':
		c->outpath = optarg;
		break;
	case OPT_EVENT:
		c->event = optarg;
		break;
	case OPT_NO_DEMANGLE:
		c->demangle = false;
		break;
	case OPT_INLINE:
	case OPT_NO_INLINE:
		c->inline_frames = opt == OPT_INLINE;
		break;
	case OPT_MCA:
		c->mca = true;
		break;
	case OPT_STDIO:
		break;
	case 'F':
		if (!*optarg)
			return cli_usage_error(&cmd_report, "-F needs fields (comm, pid, "
					       "tid, time, cpu, event, period, ip, sym, "
					       "symoff, dso, addr)");
		c->fields = optarg;
		break;
	/* perf's browsers: tacho's interactive view is top's, of a live run */
	case OPT_TUI:
	case OPT_GTK:
		cli_error("report --%s: tacho report has no interactive browser; it "
			  "writes text (--stdio, the default), --json, --csv, or a "
			  "clickable flame graph with --format svg",
			  opt == OPT_TUI ? "tui" : "gtk");
		return EXIT_USAGE;
	}
	return 0;
}

/* What the loaded recording lacks, said before its report: call chains the options
 * need, the event chosen among several, an early end, lost samples, cut chains. */
static void report_warnings(const struct report_cli *c, const struct tacho_profile_info *in,
			    bool all_events)
{
	/* perf refuses these without chains; the report still has each sample's own
	 * function, and says what it lacks */
	if ((c->ro.children || c->ro.graph) && in->samples && !in->chained)
		cli_warn("'%s' has no call chains (record with -g or --call-graph): %s shows "
			 "each sample's own function alone", c->input,
			 c->ro.children ? "--children" : "-g");
	/* the event key reports every event: nothing to choose */
	if (in->nevents > 1 && !c->event && !all_events)
		cli_warn("'%s' holds %u events: reporting %s (choose with --event)", c->input,
			 in->nevents, in->event);
	if (in->truncated && in->good_bytes == in->file_bytes) {
		char b[32];
		/* every record whole, the last one missing: "read N of N" would say both */
		cli_warn("'%s' has no final record (the recording was killed before it "
			 "finished): read all %s bytes", c->input,
			 tc_fmt_grouped(in->file_bytes, b, sizeof(b)));
	} else if (in->truncated) {
		char a[32], b[32];
		cli_warn("'%s' ends early (the recording was killed or the file cut short): read "
			 "%s of %s bytes, up to its last complete record", c->input,
			 tc_fmt_grouped(in->good_bytes, a, sizeof(a)),
			 tc_fmt_grouped(in->file_bytes, b, sizeof(b)));
	}
	if (in->lost)
		cli_warn("%" PRIu64 " samples were lost while recording", in->lost);
	if (in->chains_cut)
		cli_warn("%" PRIu64 " samples have call chains of more than 65535 entries: the "
			 "report keeps the first 65535 of each", in->chains_cut);
}

static int cmd_report_fn(int argc, char **argv)
{
	struct cli_args args;
	struct report_cli c = {
		.input = "tacho.rec", .sort = { TACHO_SORT_SYMBOL },
		.ro = { .sz = sizeof(c.ro), .nsort = 1 }, .filter = { .sz = sizeof(c.filter) },
		.demangle = true, .inline_frames = true,
	};
	bool all_events = false;
	struct tacho_profile *p = NULL;
	struct tacho_profile_info in = { .sz = sizeof(in) };
	struct tacho_write_opts wo;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	enum tacho_format fmt;
	FILE *out;
	int opt, err, ret = EXIT_FAIL;

	c.ro.sort = c.sort;
	cli_args_init(&args, &cmd_report, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		int bad = report_option(&c, opt);

		if (bad)
			return bad;
	}
	if (opt < 0)
		return args.exit;
	if (optind < argc)
		return cli_usage_error(&cmd_report, "unexpected argument '%s'", argv[optind]);
	if (c.json && c.csv)
		return cli_usage_error(&cmd_report, "--json or --csv, not both");
	if (c.format && (c.json || c.csv || c.annotate || c.ro.children || c.ro.graph))
		return cli_usage_error(&cmd_report, "--format writes a file of its own: no --json, "
				       "--csv, --annotate, --children or -g with it");
	if (c.fields &&
	    (c.format || c.json || c.csv || c.annotate || c.ro.children || c.ro.graph))
		return cli_usage_error(&cmd_report, "-F writes a line per sample of its own: no "
				       "--format, --json, --csv, --annotate, --children or -g "
				       "with it");
	if (c.mca && !c.annotate)
		return cli_usage_error(&cmd_report, "--mca analyses a function: give it with "
				       "--annotate <symbol>");
	if (c.mca && c.csv)
		return cli_usage_error(&cmd_report, "--mca writes a table or JSON: no --csv");
	if (c.annotate && (c.ro.children || c.ro.graph))
		return cli_usage_error(&cmd_report, "--annotate shows self samples: no --children "
				       "or -g");
	/* gzip is not for a terminal */
	if (c.format && !strcmp(c.format, "pprof") && !c.outpath && isatty(STDOUT_FILENO))
		return cli_usage_error(&cmd_report, "--format pprof writes gzipped binary: give "
				       "-o <file> or redirect standard output");

	if (overwrites_input(c.input, c.outpath))
		return EXIT_FAIL;
	diag = (struct tacho_diag){ .sz = sizeof(diag) };
	err = tacho_profile_load(c.input, &p, &diag);
	if (err) {
		char line[600];
		tacho_diag_format(&diag, line, sizeof(line));
		cli_error("cannot read %s", diag.message[0] ? line : tacho_strerror(err));
		return EXIT_FAIL;
	}
	if (c.event && tacho_profile_select_event(p, c.event)) {
		cli_error("'%s' holds no event '%s'", c.input, c.event);
		goto out;
	}
	tacho_profile_set_demangle(p, c.demangle);
	tacho_profile_set_inline(p, c.inline_frames);
	diag = (struct tacho_diag){ .sz = sizeof(diag) };
	if (c.filtering && (err = tacho_profile_set_filter(p, &c.filter, &diag))) {
		tacho_profile_free(p);
		if (err == -ENOMEM) {
			cli_error("cannot report: %s", tacho_strerror(err));
			return EXIT_FAIL;
		}
		return cli_usage_error(&cmd_report, "%s", diag.message);
	}
	tacho_profile_info(p, &in);
	for (size_t i = 0; i < c.ro.nsort; i++)
		all_events |= c.sort[i] == TACHO_SORT_EVENT && !c.format && !c.annotate;
	report_warnings(&c, &in, all_events);
	out = cli_open_output(c.outpath);
	if (!out)
		goto out;
	cli_write_opts_init(&wo);
	fmt = c.json ? TACHO_FORMAT_JSON : c.csv ? TACHO_FORMAT_CSV : TACHO_FORMAT_TABLE;
	if (c.mca) {
		ret = report_mca(p, c.annotate, out, c.outpath, fmt, &wo);
		goto out;
	}
	if (c.fields) {
		diag = (struct tacho_diag){ .sz = sizeof(diag) };
		err = tacho_profile_write_fields(p, c.fields, out, &diag);
		if (err == -TACHO_EPARSE) {
			cli_abandon_output(out);
			tacho_profile_free(p);
			return cli_usage_error(&cmd_report, "-F: %s", diag.message);
		}
	} else if (c.format && !strcmp(c.format, "folded"))
		err = tacho_profile_write_folded(p, out);
	else if (c.format && !strcmp(c.format, "pprof"))
		err = tacho_profile_write_pprof(p, out);
	else if (c.format && !strcmp(c.format, "svg"))
		err = tacho_profile_write_flamegraph(p, out);
	else if (c.format && !strcmp(c.format, "speedscope"))
		err = tacho_profile_write_speedscope(p, out);
	else if (c.format && !strcmp(c.format, "script-json"))
		err = tacho_profile_write_script_json(p, out);
	else if (c.format)
		err = tacho_profile_write_script(p, out);
	else if (c.annotate)
		err = tacho_profile_write_annotate(p, c.annotate, out, fmt, &wo);
	else
		err = tacho_profile_write_report(p, &c.ro, out, fmt, &wo);
	if (err == -ENOENT && c.annotate) {
		no_such_function(p, c.annotate, c.input);
		cli_abandon_output(out);
		goto out;
	}
	if (err) {
		ret = cli_output_failed(out, c.outpath, err, "report");
		goto out;
	}
	tacho_profile_info(p, &in);
	if (in.kernel_note)
		cli_warn("%s", in.kernel_note);
	ret = cli_close_output(out, c.outpath);
out:
	tacho_profile_free(p);
	return ret;
}

const struct cli_cmd cmd_report = {
	.name = "report",
	.fn = cmd_report_fn,
	.summary = "show the hot spots of a recording, or export it",
	.usage = report_usage,
	.options = report_options,
	.help_col = 27,
	.indent_long = true,
	.footer = report_footer,
};
