/* cmd-diff.c - `tacho diff`: two stat documents compared, event by event, with an
 * interval for each change and a limit for a CI gate; two recordings row by row, or as
 * a differential flame graph (docs/diff.md). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

enum { OPT_FORMAT = 256, OPT_CONFIDENCE, OPT_FAIL_ABOVE, OPT_SORT, OPT_WIDTH };

static const char diff_usage[] =
	"usage: tacho diff [--format <fmt>] [--confidence <pct>] [--fail-above [<event>=]<pct>]...\n"
	"                  <before.json> <after.json>\n"
	"   or: tacho diff [--format <fmt>] [--sort <key>[,<key>...]] [--confidence <pct>]\n"
	"                  <before.rec> <after.rec>\n"
	"   or: tacho diff --format svg [--width after|before] [-o <file>] <before.rec> <after.rec>\n"
	"\n"
	"Compares two 'tacho stat -r N --json' documents (before and after a change), event\n"
	"by event: each side's mean over its runs, the change, and an interval of the change\n"
	"(Welch's t interval on the means, 95% unless --confidence says otherwise). An event\n"
	"is compared exactly when every run of both sides agreed (tracepoints, fresh pages'\n"
	"faults) or the values are simulated (--sim). The verdict is 'changed' when the\n"
	"interval leaves 0 out, 'no change' when it holds 0.\n"
	"\n"
	"Two recordings ('tacho record' files or perf.data) are compared by their report\n"
	"rows instead: each function's share of the samples before and after, largest\n"
	"change first, with an interval of the change that says whether it exceeds\n"
	"sampling noise, and the functions that appeared or vanished; a binary rebuilt\n"
	"between them (its build-id differs) still lines up by name, marked rebuilt; or as\n"
	"a differential\n"
	"flame graph (--format svg): both recordings' stacks merged, each frame as wide as\n"
	"its share after (or before), red where it grew, blue where it shrank.\n"
	"\n";

static const struct cli_option diff_options[] = {
	{ OPT_FORMAT, 0, "format", "<fmt>",
	  "text (the default), json, csv, markdown (a table for a\n"
	  "CI system to post as a comment), or svg (recordings: a\n"
	  "differential flame graph)" },
	{ OPT_CONFIDENCE, 0, "confidence", "<pct>",
	  "the confidence of the intervals, in percent (default 95);\n"
	  "recordings: of each row's share interval" },
	{ OPT_FAIL_ABOVE, 0, "fail-above", "[<event>=]<pct>",
	  "exit 1 when an event changed (its interval leaves 0 out) by\n"
	  "more than pct percent of its value before; <event>=<pct> sets\n"
	  "one event's limit (repeat the option for several)" },
	{ OPT_SORT, 0, "sort", "<key>",
	  "recordings: rows by symbol (function and binary, the\n"
	  "default), dso (binary), line (source line), comm (process\n"
	  "name), or a comma-separated tuple of them (dso,sym)" },
	{ OPT_WIDTH, 0, "width", "<side>",
	  "--format svg: frames as wide as their shares after (the\n"
	  "default) or before" },
	{ 'o', 'o', "output", "<file>",
	  "write there instead of standard output" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char diff_footer[] =
	"exit status: 0 compared (and nothing over its limit), 1 an event changed by more\n"
	"than its --fail-above limit, 2 bad usage or an input that is not a stat document\n"
	"or does not count the same events as the other\n";

static int run_diff(int argc, char **argv);

const struct cli_cmd cmd_diff = {
	.name = "diff",
	.fn = run_diff,
	.summary = "compare two stat results: each event's change and its interval",
	.usage = diff_usage,
	.options = diff_options,
	.help_col = 30,
	.indent_long = false,
	.footer = diff_footer,
};

enum diff_format { FMT_TEXT, FMT_JSON, FMT_CSV, FMT_MARKDOWN, FMT_SVG };

#define MAX_LIMITS 64

struct limit {
	const char *event;   /* NULL: every event */
	double pct;
};

/* "5", "2.5", "-10", "page-faults=5", "syscalls:sys_enter_write=0": the event is what
 * comes before the last '=' (an event spec has none of its own here). */
static int parse_limit(char *arg, struct limit *l)
{
	char *eq = strrchr(arg, '=');
	const char *num = eq ? eq + 1 : arg;

	l->event = NULL;
	if (eq) {
		*eq = '\0';
		if (!*arg)
			return -1;
		l->event = arg;
	}
	return tc_parse_double(num, &l->pct) || isnan(l->pct) || isinf(l->pct) ? -1 : 0;
}

static int parse_format(const char *s, enum diff_format *fmt)
{
	static const char *const names[] = { "text", "json", "csv", "markdown", "svg" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(s, names[i])) {
			*fmt = (enum diff_format)i;
			return 0;
		}
	return -1;
}

static int diff_write(const struct tacho_diff *d, enum diff_format fmt)
{
	static const enum tacho_format lib[] = {
		[FMT_TEXT] = TACHO_FORMAT_TABLE, [FMT_JSON] = TACHO_FORMAT_JSON,
		[FMT_CSV] = TACHO_FORMAT_CSV,
	};
	struct tacho_write_opts wo;
	int err;

	cli_write_opts_init(&wo);
	if (fmt == FMT_MARKDOWN)
		err = tacho_diff_write_markdown(d, stdout);
	else
		err = tacho_diff_write(d, stdout, lib[fmt], &wo);
	/* a write error is told once, by main's check of standard output */
	if (err && err != -EIO)
		cli_error("cannot write the comparison: %s", tacho_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
}

/* Whether the file's first byte past white space opens a JSON object: a stat document,
 * else a recording. A file that cannot be read is left to the loader to tell. */
static bool is_json(const char *path)
{
	FILE *f = fopen(path, "rb");
	int c = EOF;

	if (!f)
		return true;
	do
		c = getc(f);
	while (c == ' ' || c == '\t' || c == '\n' || c == '\r');
	fclose(f);
	return c == '{' || c == '[';
}

static int diff_recordings(const char *a, const char *b, const enum tacho_sort *sort,
			   size_t nsort, double confidence, enum diff_format fmt)
{
	struct tacho_profile_diff_opts po = { .sz = sizeof(po), .sort = sort, .nsort = nsort,
					      .confidence = confidence };
	static const enum tacho_format lib[] = {
		[FMT_TEXT] = TACHO_FORMAT_TABLE, [FMT_JSON] = TACHO_FORMAT_JSON,
		[FMT_CSV] = TACHO_FORMAT_CSV,
	};
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_write_opts wo;
	struct tacho_profile_diff *d;
	int err;

	if (fmt == FMT_MARKDOWN)
		return cli_usage_error(&cmd_diff, "--format markdown is for stat documents; "
				       "recordings take text, json, csv or svg");
	err = tacho_profile_diff_open(a, b, &po, &d, &diag);
	if (err) {
		cli_error("%s: %s", diag.source[0] ? diag.source : a,
			  diag.message[0] ? diag.message : tacho_strerror(err));
		return EXIT_USAGE;
	}
	cli_write_opts_init(&wo);
	err = tacho_profile_diff_write(d, stdout, lib[fmt], &wo);
	tacho_profile_diff_free(d);
	if (err && err != -EIO)
		cli_error("cannot write the comparison: %s", tacho_strerror(err));
	return err ? EXIT_FAIL : EXIT_OK;
}

/* --format svg: the differential flame graph, to outpath (NULL: standard output). */
static int diff_flamegraph(const char *a, const char *b, bool width_before, const char *outpath)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_flame_diff_opts fo = { .sz = sizeof(fo), .width_before = width_before };
	FILE *out = cli_open_output(outpath);
	int err;

	if (!out)
		return EXIT_FAIL;
	err = tacho_profile_diff_write_flamegraph(a, b, &fo, out, &diag);
	if (err && diag.message[0]) {
		cli_abandon_output(out);
		cli_error("%s: %s", diag.source[0] ? diag.source : a, diag.message);
		return EXIT_USAGE;
	}
	if (err)
		return cli_output_failed(out, outpath, err, "draw the flame graph");
	return cli_close_output(out, outpath);
}

static int run_diff(int argc, char **argv)
{
	struct cli_args args;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_diff_opts opts = { .sz = sizeof(opts) };
	struct tacho_diff *d;
	struct limit limits[MAX_LIMITS];
	enum diff_format fmt = FMT_TEXT;
	enum tacho_sort sort[8] = { TACHO_SORT_SYMBOL };
	size_t nsort = 1;
	bool sorted = false, width = false, width_before = false;
	const char *outpath = NULL;
	size_t nlimits = 0, nkeys;
	double conf;
	int opt, err, ret;

	cli_args_init(&args, &cmd_diff, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		switch (opt) {
		case OPT_FORMAT:
			if (parse_format(optarg, &fmt))
				return cli_usage_error(&cmd_diff, "--format takes text, json, csv, "
						       "markdown or svg, not '%s'", optarg);
			break;
		case OPT_CONFIDENCE:
			if (tc_parse_double(optarg, &conf) || !(conf > 0 && conf < 100))
				return cli_usage_error(&cmd_diff, "--confidence takes a percentage "
						       "above 0 and below 100, not '%s'", optarg);
			opts.confidence = conf / 100.0;
			break;
		case OPT_FAIL_ABOVE:
			if (nlimits == MAX_LIMITS)
				return cli_usage_error(&cmd_diff, "more than %d --fail-above limits",
						       MAX_LIMITS);
			if (parse_limit(optarg, &limits[nlimits]))
				return cli_usage_error(&cmd_diff, "--fail-above takes a percentage "
						       "or EVENT=PERCENTAGE, not '%s'", optarg);
			nlimits++;
			break;
		case OPT_SORT:
			if (tacho_profile_parse_sort(optarg, sort, ARRAY_SIZE(sort), &nkeys,
						     &diag))
				return cli_usage_error(&cmd_diff, "--sort takes symbol, dso, line or "
						       "comm, or a list of them, not '%s'", optarg);
			for (size_t k = 0; k < nkeys; k++)
				if (sort[k] != TACHO_SORT_SYMBOL && sort[k] != TACHO_SORT_DSO &&
				    sort[k] != TACHO_SORT_LINE && sort[k] != TACHO_SORT_COMM)
					return cli_usage_error(&cmd_diff, "--sort takes symbol, dso, "
							       "line or comm, not '%s'", optarg);
			nsort = nkeys;
			sorted = true;
			break;
		case OPT_WIDTH:
			if (strcmp(optarg, "after") && strcmp(optarg, "before"))
				return cli_usage_error(&cmd_diff, "--width takes after or before, "
						       "not '%s'", optarg);
			width_before = !strcmp(optarg, "before");
			width = true;
			break;
		case 'o':
			outpath = optarg;
			break;
		}
	}
	if (opt < 0)
		return args.exit;
	if (argc - optind < 2)
		return cli_usage_error(&cmd_diff, "two stat documents to compare are needed");
	if (argc - optind > 2)
		return cli_usage_error(&cmd_diff, "unexpected argument '%s'", argv[optind + 2]);
	if ((width || outpath) && fmt != FMT_SVG)
		return cli_usage_error(&cmd_diff, "--width and -o are for --format svg");
	/* svg is for recordings only: the loader says what else a file is */
	if (fmt == FMT_SVG || !is_json(argv[optind])) {
		if (nlimits)
			return cli_usage_error(&cmd_diff, "--fail-above is for stat documents, "
					       "not recordings");
		if (fmt == FMT_SVG) {
			if (sorted)
				return cli_usage_error(&cmd_diff, "--sort is for the rows, not "
						       "--format svg");
			return diff_flamegraph(argv[optind], argv[optind + 1], width_before,
					       outpath);
		}
		return diff_recordings(argv[optind], argv[optind + 1], sort, nsort,
				       opts.confidence, fmt);
	}
	if (sorted)
		return cli_usage_error(&cmd_diff, "--sort is for recordings, not stat documents");
	err = tacho_diff_stat_files(argv[optind], argv[optind + 1], &opts, &d, &diag);
	if (err) {
		char where[64] = "";

		if (diag.line)
			snprintf(where, sizeof(where), ":%u:%u", diag.line, diag.column);
		cli_error("%s%s: %s", diag.source, where, diag.message);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < nlimits; i++) {
		err = tacho_diff_set_limit(d, limits[i].event, limits[i].pct);
		if (err) {
			cli_error("--fail-above: no event '%s' in the documents", limits[i].event);
			tacho_diff_free(d);
			return EXIT_USAGE;
		}
	}
	ret = diff_write(d, fmt);
	if (ret == EXIT_OK && tacho_diff_exceeded(d)) {
		size_t n = tacho_diff_exceeded(d);

		cli_error("%zu event%s changed by more than %s limit", n, n == 1 ? "" : "s",
			  n == 1 ? "its" : "their");
		ret = EXIT_FAIL;
	}
	tacho_diff_free(d);
	return ret;
}
