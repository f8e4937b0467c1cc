/* cmd-report.c - `tacho report`: hot spots of a record file, by function, binary, source
 * line or instruction; one function instruction by instruction; exports. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "output/output.h"
#include "util/util.h"

enum { OPT_CHILDREN = 256, OPT_JSON, OPT_ANNOTATE, OPT_FORMAT, OPT_EVENT, OPT_NO_DEMANGLE };

static const char report_usage[] =
	"usage: tacho report [-i <file>] [--event <name>] [--sort symbol|dso|line|address] [--children] [--json] [--no-demangle]\n"
	"   or: tacho report [-i <file>] --annotate <symbol> [--json] [--no-demangle]\n"
	"   or: tacho report [-i <file>] --format folded|perf-script [--no-demangle]\n"
	"\n"
	"Reads a file of 'tacho record' and shows where the samples fell, most first, with\n"
	"their share of all events (each sample weighs its period, like perf's Overhead). Binaries are found through their mappings and checked\n"
	"by build-id; symbols come from .symtab or .dynsym and separate debug files, lines\n"
	"from DWARF; the vDSO from the copy in the file; the kernel from /proc/kallsyms when\n"
	"the recording comes from this boot. Samples of data breakpoints, which the CPU\n"
	"reports after the storing instruction, are put on the storing instruction.\n"
	"\n";

static const struct cli_option report_options[] = {
	{ 'i', 'i', "input", "<file>",
	  "the record file (default tacho.rec)" },
	{ OPT_EVENT, 0, "event", "<name>",
	  "the event to report when the file has several (default:\n"
	  "the first)" },
	{ 's', 's', "sort", "<key>",
	  "symbol (default), dso, line (source file and line) or\n"
	  "address (instruction)" },
	{ OPT_CHILDREN, 0, "children", NULL,
	  "count each function for every sample with it anywhere on\n"
	  "the call chain (record with -g)" },
	{ OPT_JSON, 0, "json", NULL,
	  "one JSON object: {\"version\": 1, \"samples\", \"lost\", \"rows\"}" },
	{ OPT_ANNOTATE, 0, "annotate", "<sym>",
	  "function <sym> instruction by instruction: address,\n"
	  "samples, source line" },
	{ OPT_FORMAT, 0, "format", "<f>",
	  "folded: one line per stack, for FlameGraph, speedscope and\n"
	  "inferno; perf-script: the text of `perf script`, for the\n"
	  "Firefox Profiler and speedscope" },
	{ OPT_NO_DEMANGLE, 0, "no-demangle", NULL,
	  "show C++ names as the binary spells them (_ZN3foo3barEv),\n"
	  "not demangled (foo::bar()); demangling uses libstdc++\n"
	  "when it is installed" },
	{ 'o', 'o', "output", "<file>",
	  "write there instead of standard output" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char report_footer[] =
	"A file that ends early (the recording was killed) is read up to its last complete\n"
	"record, with a warning. exit status: 0 done, 1 the file cannot be read, 2 bad usage\n";

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static void print_header(FILE *f, const struct tacho_profile_info *in)
{
	char g[32], l[32];

	fprintf(f, "# %s samples", tc_fmt_grouped(in->samples, g, sizeof(g)));
	if (in->event)
		fprintf(f, " of %s (%s %" PRIu64 ")", in->event, in->freq ? "frequency" : "period",
			in->period);
	fprintf(f, ", %s lost", tc_fmt_grouped(in->lost, l, sizeof(l)));
	if (in->command)
		fprintf(f, ": %s", in->command);
	fputc('\n', f);
}

static void print_table(FILE *f, const struct tacho_profile_info *in, enum tacho_sort sort,
			bool children, const struct tacho_profile_row *rows, size_t n)
{
	struct tc_table *t = tc_table_new(children ? 6 : 5);
	char loc[4200];

	if (!t) {
		cli_error("out of memory");
		return;
	}
	print_header(f, in);
	for (unsigned c = 0; c < (children ? 3u : 2u); c++)
		tc_table_align_right(t, c, true);
	if (children)
		tc_table_addf(t, "children\tself\tpercent\tsymbol\tdso\t");
	else if (sort == TACHO_SORT_LINE)
		tc_table_addf(t, "samples\tpercent\tfile:line\tsymbol\tdso");
	else if (sort == TACHO_SORT_ADDRESS)
		tc_table_addf(t, "samples\tpercent\taddress\tsymbol\tfile:line");
	else if (sort == TACHO_SORT_DSO)
		tc_table_addf(t, "samples\tpercent\tdso\t\t");
	else
		tc_table_addf(t, "samples\tpercent\tsymbol\tdso\t");
	for (size_t i = 0; i < n; i++) {
		const struct tacho_profile_row *r = &rows[i];
		if (r->file)
			snprintf(loc, sizeof(loc), "%s:%d", r->file, r->line);
		else
			snprintf(loc, sizeof(loc), "?");
		if (children)
			tc_table_addf(t, "%" PRIu64 "\t%" PRIu64 "\t%.2f%%\t%s\t%s\t", r->samples, r->self,
				      r->percent, r->symbol, base_name(r->dso));
		else if (sort == TACHO_SORT_LINE)
			tc_table_addf(t, "%" PRIu64 "\t%.2f%%\t%s\t%s\t%s", r->samples, r->percent, loc,
				      r->symbol, base_name(r->dso));
		else if (sort == TACHO_SORT_ADDRESS)
			tc_table_addf(t, "%" PRIu64 "\t%.2f%%\t%#" PRIx64 "\t%s\t%s", r->samples,
				      r->percent, r->address, r->symbol, loc);
		else if (sort == TACHO_SORT_DSO)
			tc_table_addf(t, "%" PRIu64 "\t%.2f%%\t%s\t\t", r->samples, r->percent, r->dso);
		else
			tc_table_addf(t, "%" PRIu64 "\t%.2f%%\t%s\t%s\t", r->samples, r->percent,
				      r->symbol, base_name(r->dso));
	}
	tc_table_print(t, f, 0, 2);
	tc_table_free(t);
}

static void print_json(FILE *f, const struct tacho_profile_info *in, enum tacho_sort sort,
		       bool children, bool annotate, const struct tacho_profile_row *rows, size_t n)
{
	struct tc_json j;

	tc_json_init(&j, f, true);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "samples", in->samples);
	tc_json_uint(&j, "lost", in->lost);
	tc_json_arr_begin(&j, "rows");
	for (size_t i = 0; i < n; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "symbol", rows[i].symbol);
		tc_json_str(&j, "dso", rows[i].dso);
		tc_json_uint(&j, "samples", rows[i].samples);
		tc_json_double(&j, "percent", rows[i].percent);
		if (sort == TACHO_SORT_LINE || sort == TACHO_SORT_ADDRESS || annotate) {
			tc_json_str(&j, "file", rows[i].file);
			tc_json_int(&j, "line", rows[i].line);
		}
		if (sort == TACHO_SORT_ADDRESS || annotate)
			tc_json_uint(&j, "address", rows[i].address);
		if (children)
			tc_json_uint(&j, "self", rows[i].self);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	tc_json_finish(&j);
}

static void print_annotate(FILE *f, const struct tacho_profile_info *in, const char *sym,
			   const struct tacho_profile_row *rows, size_t n)
{
	struct tc_table *t = tc_table_new(4);
	uint64_t total = 0;
	char loc[4200];

	if (!t) {
		cli_error("out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++)
		total += rows[i].samples;
	print_header(f, in);
	fprintf(f, "# %s in %s: %" PRIu64 " samples\n", sym, n ? rows[0].dso : "?", total);
	tc_table_align_right(t, 1, true);
	tc_table_align_right(t, 2, true);
	tc_table_addf(t, "address\tsamples\tpercent\tsource");
	for (size_t i = 0; i < n; i++) {
		if (rows[i].file)
			snprintf(loc, sizeof(loc), "%s:%d", base_name(rows[i].file), rows[i].line);
		else
			snprintf(loc, sizeof(loc), "?");
		if (rows[i].samples)
			tc_table_addf(t, "%#" PRIx64 "\t%" PRIu64 "\t%.2f%%\t%s", rows[i].address,
				      rows[i].samples, rows[i].percent, loc);
		else
			tc_table_addf(t, "%#" PRIx64 "\t\t\t%s", rows[i].address, loc);
	}
	tc_table_print(t, f, 0, 2);
	tc_table_free(t);
}

static int cmd_report_fn(int argc, char **argv)
{
	struct cli_args args;
	const char *input = "tacho.rec", *annotate = NULL, *format = NULL, *outpath = NULL;
	const char *event = NULL;
	enum tacho_sort sort = TACHO_SORT_SYMBOL;
	bool children = false, json = false, demangle = true;
	struct tacho_profile *p = NULL;
	struct tacho_profile_info in;
	struct tacho_profile_row *rows = NULL;
	struct tacho_diag diag;
	size_t n = 0;
	FILE *out;
	int opt, err, ret = EXIT_FAIL;

	cli_args_init(&args, &cmd_report, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case 'i':
			input = optarg;
			break;
		case 's':
			if (!strcmp(optarg, "symbol") || !strcmp(optarg, "sym"))
				sort = TACHO_SORT_SYMBOL;
			else if (!strcmp(optarg, "dso"))
				sort = TACHO_SORT_DSO;
			else if (!strcmp(optarg, "line") || !strcmp(optarg, "srcline"))
				sort = TACHO_SORT_LINE;
			else if (!strcmp(optarg, "address") || !strcmp(optarg, "addr"))
				sort = TACHO_SORT_ADDRESS;
			else
				return cli_usage_error(&cmd_report, "--sort takes symbol, dso, line or "
						       "address, not '%s'", optarg);
			break;
		case OPT_CHILDREN:
			children = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_ANNOTATE:
			annotate = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "folded") && strcmp(optarg, "perf-script"))
				return cli_usage_error(&cmd_report, "--format takes folded or perf-script, "
						       "not '%s'", optarg);
			format = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_EVENT:
			event = optarg;
			break;
		case OPT_NO_DEMANGLE:
			demangle = false;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (optind < argc)
		return cli_usage_error(&cmd_report, "unexpected argument '%s'", argv[optind]);
	if (format && (json || annotate || children))
		return cli_usage_error(&cmd_report, "--format writes a file of its own: no --json, "
				       "--annotate or --children with it");
	if (annotate && children)
		return cli_usage_error(&cmd_report, "--annotate shows self samples: no --children");

	memset(&diag, 0, sizeof(diag));
	err = tacho_profile_load(input, &p, &diag);
	if (err) {
		char line[600];
		tacho_diag_format(&diag, line, sizeof(line));
		cli_error("cannot read %s", diag.message[0] ? line : tacho_strerror(err));
		return EXIT_FAIL;
	}
	if (event && tacho_profile_select_event(p, event)) {
		cli_error("'%s' holds no event '%s'", input, event);
		goto done;
	}
	tacho_profile_set_demangle(p, demangle);
	tacho_profile_info(p, &in);
	if (in.nevents > 1 && !event)
		cli_warn("'%s' holds %u events: reporting %s (choose with --event)", input,
			 in.nevents, in.event);
	if (in.truncated) {
		char a[32], b[32];
		cli_warn("'%s' ends early (the recording was killed or the file cut short): read "
			 "%s of %s bytes, up to its last complete record", input,
			 tc_fmt_grouped(in.good_bytes, a, sizeof(a)),
			 tc_fmt_grouped(in.file_bytes, b, sizeof(b)));
	}
	if (in.lost)
		cli_warn("%" PRIu64 " samples were lost while recording", in.lost);
	out = cli_open_output(outpath);
	if (!out)
		goto done;
	if (format && !strcmp(format, "folded"))
		err = tacho_profile_write_folded(p, out);
	else if (format)
		err = tacho_profile_write_script(p, out);
	else if (annotate)
		err = tacho_profile_annotate(p, annotate, &rows, &n);
	else
		err = tacho_profile_rows(p, sort, children, &rows, &n);
	if (err == -ENOENT && annotate) {
		cli_error("no samples in a function named '%s' (see 'tacho report -i %s')", annotate,
			  input);
		cli_close_output(out, outpath);
		goto done;
	}
	if (err) {
		cli_error("cannot report: %s", tacho_strerror(err));
		cli_close_output(out, outpath);
		goto done;
	}
	if (in.kernel_note)
		tacho_profile_info(p, &in);
	if (!format) {
		if (json)
			print_json(out, &in, sort, children, annotate != NULL, rows, n);
		else if (annotate)
			print_annotate(out, &in, annotate, rows, n);
		else
			print_table(out, &in, sort, children, rows, n);
	}
	tacho_profile_info(p, &in);
	if (in.kernel_note)
		cli_warn("%s", in.kernel_note);
	ret = cli_close_output(out, outpath);
done:
	free(rows);
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
