/* cmd-stat.c - `tacho stat`: count events over a program's runs (or a process, a thread,
 * CPUs) and print each value with its status, the statistics of the repetitions and
 * the derived metrics. The counting is the library's (tacho_stat_run); this file parses
 * options and prints. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output/output.h"
#include "util/util.h"

static const char stat_help[] =
	"usage: tacho stat [-e <events>] [-r <n>] [--warmup <n>] [--all] [--multiplex]\n"
	"                  [-I <ms>] [-x <sep> | --csv | --json] [-o <file>] [--] <program> [<args>]\n"
	"   or: tacho stat [<options>] (-p <pid> | -t <tid>)\n"
	"   or: tacho stat [<options>] (-a | -C <cpus>) [[--] <program> [<args>]]\n"
	"\n"
	"Counts events while a program runs and prints every value with its status. When\n"
	"there are more events than the CPU has counters, the program runs as many times\n"
	"as it takes so that nothing is multiplexed (--multiplex: one run, scaled values).\n"
	"The program's own output is untouched: tacho writes to standard error or to -o.\n"
	"\n"
	"options:\n"
	"    -e, --event <events>  events to count (comma-separated; docs/events.md); may be\n"
	"                          repeated. Default: cycles, instructions, branches and\n"
	"                          the software set where a hardware PMU exists, else the\n"
	"                          software set alone (task-clock, context-switches, ...)\n"
	"    --all                 every event this machine offers (the CPU's through\n"
	"                          libpfm4 when it has a PMU, every software event, other\n"
	"                          PMUs' named events; not tracepoints)\n"
	"    -r, --repeat <n>      run the program n times: mean, stddev, min, median, max\n"
	"                          and spread per event\n"
	"    --warmup <n>          run it n times first without counting\n"
	"    --multiplex           one run of the program; the kernel rotates the groups\n"
	"                          and tacho scales, showing each value's coverage\n"
	"    -I, --interval <ms>   print the counts of every <ms> milliseconds\n"
	"    -p, --pid <pid>       count process <pid> (all its threads) until it ends or\n"
	"                          Ctrl-C\n"
	"    -t, --tid <tid>       count thread <tid> alone\n"
	"    -a, --all-cpus        count everything on every CPU\n"
	"    -C, --cpu <cpus>      count everything on these CPUs (0-3,8)\n"
	"    -x, --field-separator <c>  CSV with separator <c>, header row first\n"
	"    --csv                 CSV with ','\n"
	"    --json                one JSON document (with -I: one JSON object per line)\n"
	"    -o, --output <file>   write there instead of standard error\n"
	"    -h, --help            this text\n"
	"\n"
	"Statuses: counted; multiplexed (scaled, with its coverage); not counted (opened\n"
	"but never on a counter, or never scheduled: the reason is given); not supported\n"
	"(could not be opened here: the reason is given). A value that was not counted is\n"
	"never printed as 0: it is empty in CSV and null in JSON.\n"
	"\n"
	"exit status: the program's (128 + N when signal N killed it; the counts are still\n"
	"printed), 0 for -p/-t/-a without a program, 127 when the program cannot be found,\n"
	"126 when it cannot be executed, 1 when counting failed, 2 for bad usage.\n"
	"docs/stat.md tells more.\n";

/* perf stat's default set, the software part first. */
static const char events_sw[] = "task-clock,context-switches,cpu-migrations,page-faults";
static const char events_sw_more[] = ",minor-faults,major-faults";
static const char events_hw[] = ",cycles,instructions,branches,branch-misses";

enum fmt { FMT_TABLE, FMT_CSV, FMT_JSON };

struct stat_cli {
	enum fmt fmt;
	char sep;
	FILE *out;
	bool repeat_given;
	unsigned repeat;
	bool progress;      /* a progress line on the terminal */
	bool interval_header_done;
	const struct tacho_evlist *list;   /* for the units of interval values */
	char note[320];                    /* why the default events are what they are */
	struct tc_json json;
};

/* --- formatting values --- */

static bool integral(double v)
{
	return isfinite(v) && v == floor(v) && fabs(v) < 9.007199254740992e15;
}

/* A value for people: counts with thousands separators, others with decimals. */
static const char *fmt_human(double v, const char *unit, char *buf, size_t size)
{
	char g[32];

	if (!isfinite(v)) {
		snprintf(buf, size, "-");
	} else if (unit && *unit) {
		snprintf(buf, size, "%.2f", v);
	} else if (integral(v) && v >= 0) {
		tc_fmt_grouped((uint64_t)v, buf, size);
	} else if (v >= 0 && v < 9e15) {
		double ip = floor(v);
		int frac = (int)llround((v - ip) * 100);
		if (frac == 100) {
			ip += 1;
			frac = 0;
		}
		tc_fmt_grouped((uint64_t)ip, g, sizeof(g));
		snprintf(buf, size, "%.31s.%02d", g, frac % 100);
	} else {
		snprintf(buf, size, "%.4g", v);
	}
	return buf;
}

/* A value for machines: integers exactly, others with 15 significant digits. */
static const char *fmt_machine(double v, char *buf, size_t size)
{
	if (!isfinite(v))
		buf[0] = '\0';
	else if (integral(v))
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.15g", v);
	return buf;
}

static const char *metric_human(const struct tacho_metric *m, char *buf, size_t size)
{
	char si[32];

	if (!strcmp(m->unit, "/sec"))
		snprintf(buf, size, "%s/sec", tc_fmt_si(m->value, si, sizeof(si)));
	else if (!strcmp(m->unit, "%") || !strcmp(m->unit, "% of cycles"))
		snprintf(buf, size, "%.2f%s", m->value, m->unit);
	else
		snprintf(buf, size, "%.3f %s", m->value, m->unit);
	return buf;
}

static bool has_value(enum tacho_count_status s)
{
	return s == TACHO_COUNT_COUNTED || s == TACHO_COUNT_MULTIPLEXED;
}

/* The rate metric of event i, if any (shown beside the event as perf does). */
static const struct tacho_metric *rate_of(const struct tacho_stat *s, size_t i)
{
	for (size_t m = 0; m < tacho_stat_nmetrics(s); m++) {
		const struct tacho_metric *mt = tacho_stat_metric(s, m);
		if (!strcmp(mt->unit, "/sec") && mt->inputs[0] == (int)i)
			return mt;
	}
	return NULL;
}

/* --- the summary --- */

static void print_table(struct stat_cli *c, const struct tacho_stat *s, char *const *argv,
			const char *target)
{
	struct tc_table *t;
	bool stats = c->repeat > 1;
	unsigned reps = tacho_stat_repeats(s), runs = tacho_stat_runs(s);
	const struct tacho_exit *ex = tacho_stat_exit(s);
	char who[512] = "", b1[64], b2[64], b3[64], b4[64], b5[64], b6[64];
	size_t nnotes = 0;

	if (argv && argv[0]) {
		struct tc_sb sb = TC_SB_INIT;
		for (size_t i = 0; argv[i]; i++)
			tc_sb_addf(&sb, "%s%s", i ? " " : "", argv[i]);
		if (target[0])
			snprintf(who, sizeof(who), "%s while '%s' ran", target, sb.buf ? sb.buf : "");
		else
			snprintf(who, sizeof(who), "'%s'", sb.buf ? sb.buf : "");
		tc_sb_exit(&sb);
	} else {
		snprintf(who, sizeof(who), "%s", target);
	}
	fprintf(c->out, "\n Counter stats for %s", who);
	if (c->repeat > 1 || runs > 1) {
		fprintf(c->out, " (");
		if (c->repeat > 1)
			fprintf(c->out, "%u repetition%s%s", reps, reps == 1 ? "" : "s",
				runs > 1 ? ", " : "");
		if (runs > 1)
			fprintf(c->out, "%u runs of the program each to fit the counters", runs);
		fprintf(c->out, ")");
	}
	fprintf(c->out, ":\n\n");

	t = tc_table_new(stats ? 9 : 4);
	if (!t)
		return;
	tc_table_align_right(t, 0, true);
	if (stats) {
		for (unsigned col = 3; col < 9; col++)
			tc_table_align_right(t, col, true);
		tc_table_addf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", "mean", "", "event", "stddev",
			      "min", "median", "max", "spread", "");
	}
	for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
		const struct tacho_stat_event *e = tacho_stat_event(s, i);
		const struct tacho_metric *rate = rate_of(s, i);
		char note[160] = "";
		const char *val;

		if (!has_value(e->status)) {
			val = e->status == TACHO_COUNT_NOT_SUPPORTED ? "<not supported>"
								     : "<not counted>";
			nnotes++;
		} else {
			val = fmt_human(e->value, e->unit, b1, sizeof(b1));
		}
		if (e->status == TACHO_COUNT_MULTIPLEXED)
			snprintf(note, sizeof(note), "(multiplexed, %.1f%% coverage)",
				 100.0 * e->coverage);
		else if (rate)
			metric_human(rate, note, sizeof(note));
		if (stats && has_value(e->status)) {
			char spread[32];
			if (isfinite(e->stats.spread_pct))
				snprintf(spread, sizeof(spread), "%.2f%%", e->stats.spread_pct);
			else
				snprintf(spread, sizeof(spread), "-");
			tc_table_addf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", val, e->unit, e->name,
				      fmt_human(e->stats.stddev, e->unit, b2, sizeof(b2)),
				      fmt_human(e->stats.min, e->unit, b3, sizeof(b3)),
				      fmt_human(e->stats.median, e->unit, b4, sizeof(b4)),
				      fmt_human(e->stats.max, e->unit, b5, sizeof(b5)), spread,
				      note);
		} else if (stats) {
			tc_table_addf(t, "%s\t%s\t%s\t\t\t\t\t\t", val, e->unit, e->name);
		} else {
			tc_table_addf(t, "%s\t%s\t%s\t%s", val, e->unit, e->name, note);
		}
	}
	tc_table_print(t, c->out, 2, 2);
	tc_table_free(t);

	/* derived metrics other than the rates shown beside their events */
	{
		struct tc_table *m = tc_table_new(3);
		size_t nm = 0;
		if (m) {
			tc_table_align_right(m, 1, true);
			for (size_t i = 0; i < tacho_stat_nmetrics(s); i++) {
				const struct tacho_metric *mt = tacho_stat_metric(s, i);
				if (!strcmp(mt->unit, "/sec"))
					continue;
				tc_table_addf(m, "%s\t%s\t(%s)", mt->name,
					      metric_human(mt, b6, sizeof(b6)), mt->expr);
				nm++;
			}
			if (nm) {
				fprintf(c->out, "\n");
				tc_table_print(m, c->out, 2, 2);
			}
			tc_table_free(m);
		}
	}
	if (nnotes) {
		fprintf(c->out, "\n");
		for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
			const struct tacho_stat_event *e = tacho_stat_event(s, i);
			if (!has_value(e->status))
				fprintf(c->out, "  %s: %s: %s\n", e->name,
					tacho_count_status_name(e->status),
					e->why ? cli_hinted(e->why, e->hint) : "no reason known");
		}
	}
	fprintf(c->out, "\n");
	if (isfinite(tacho_stat_wall_s(s)))
		fprintf(c->out, "  %.6f seconds wall time%s\n", tacho_stat_wall_s(s),
			reps > 1 ? " (mean of a run)" : "");
	if (ex && (ex->signal || ex->code))
		fprintf(c->out, "  the program: %s\n",
			tacho_exit_describe(ex, b6, sizeof(b6)));
	if (tacho_stat_interrupted(s) && c->repeat > 1)
		fprintf(c->out, "  stopped early: %u of %u repetitions\n", reps, c->repeat);
	else if (tacho_stat_interrupted(s) && !ex)
		fprintf(c->out, "  stopped by a signal\n");
	fprintf(c->out, "\n");
}

static void print_csv_header(struct stat_cli *c, bool interval)
{
	static const char *const cols[] = { "kind", "name", "status", "value", "unit",
					    "coverage", "runs", "mean", "stddev", "min",
					    "median", "max", "spread_pct", "explanation" };
	static const char *const icols[] = { "time", "name", "status", "value", "unit",
					     "coverage", "explanation" };
	const char *const *h = interval ? icols : cols;
	size_t n = interval ? ARRAY_SIZE(icols) : ARRAY_SIZE(cols);

	for (size_t i = 0; i < n; i++)
		tc_csv_field(c->out, c->sep, i == 0, h[i]);
	tc_csv_end(c->out);
}

static void print_csv(struct stat_cli *c, const struct tacho_stat *s)
{
	char b[8][64];

	print_csv_header(c, false);
	for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
		const struct tacho_stat_event *e = tacho_stat_event(s, i);
		bool v = has_value(e->status);
		const char *f[14] = {
			"event", e->name, tacho_count_status_name(e->status),
			v ? fmt_machine(e->value, b[0], sizeof(b[0])) : "", e->unit,
			fmt_machine(e->coverage, b[1], sizeof(b[1])), NULL,
			v ? fmt_machine(e->stats.mean, b[2], sizeof(b[2])) : "",
			v ? fmt_machine(e->stats.stddev, b[3], sizeof(b[3])) : "",
			v ? fmt_machine(e->stats.min, b[4], sizeof(b[4])) : "",
			v ? fmt_machine(e->stats.median, b[5], sizeof(b[5])) : "",
			v ? fmt_machine(e->stats.max, b[6], sizeof(b[6])) : "",
			v ? fmt_machine(e->stats.spread_pct, b[7], sizeof(b[7])) : "",
			e->why ? cli_hinted(e->why, e->hint) : "",
		};
		char runs[16];
		snprintf(runs, sizeof(runs), "%u", e->nvalues);
		f[6] = runs;
		for (size_t k = 0; k < ARRAY_SIZE(f); k++)
			tc_csv_field(c->out, c->sep, k == 0, f[k]);
		tc_csv_end(c->out);
	}
	for (size_t i = 0; i < tacho_stat_nmetrics(s); i++) {
		const struct tacho_metric *m = tacho_stat_metric(s, i);
		const char *f[14] = { "metric", m->name, "derived",
				      fmt_machine(m->value, b[0], sizeof(b[0])), m->unit,
				      "", "", "", "", "", "", "", "", m->expr };
		for (size_t k = 0; k < ARRAY_SIZE(f); k++)
			tc_csv_field(c->out, c->sep, k == 0, f[k]);
		tc_csv_end(c->out);
	}
}

static void json_value(struct tc_json *j, const char *key, double v, const char *unit)
{
	if (!isfinite(v))
		tc_json_null(j, key);
	else if (integral(v) && v >= 0 && (!unit || !*unit))
		tc_json_uint(j, key, (uint64_t)v);
	else
		tc_json_double(j, key, v);
}

static void print_json(struct stat_cli *c, const struct tacho_stat *s, char *const *argv)
{
	struct tc_json *j = &c->json;
	const struct tacho_exit *ex = tacho_stat_exit(s);
	bool stats = c->repeat_given || c->repeat > 1;

	tc_json_init(j, c->out, true);
	tc_json_obj_begin(j, NULL);
	tc_json_int(j, "version", 1);
	tc_json_uint(j, "runs", tacho_stat_repeats(s));
	tc_json_uint(j, "program_runs_per_repetition", tacho_stat_runs(s));
	if (argv && argv[0]) {
		tc_json_arr_begin(j, "command");
		for (size_t i = 0; argv[i]; i++)
			tc_json_str(j, NULL, argv[i]);
		tc_json_arr_end(j);
	}
	tc_json_arr_begin(j, "events");
	for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
		const struct tacho_stat_event *e = tacho_stat_event(s, i);
		bool v = has_value(e->status);

		tc_json_obj_begin(j, NULL);
		tc_json_str(j, "name", e->name);
		tc_json_str(j, "status", tacho_count_status_name(e->status));
		json_value(j, "value", v ? e->value : NAN, e->unit);
		tc_json_str(j, "unit", e->unit);
		if (v)
			tc_json_double(j, "coverage", e->coverage);
		else
			tc_json_null(j, "coverage");
		if (stats) {
			/* every repetition's value (null where it gave none), and how many did */
			tc_json_arr_begin(j, "values");
			for (unsigned k = 0; k < tacho_stat_repeats(s); k++)
				json_value(j, NULL, e->values[k], e->unit);
			tc_json_arr_end(j);
			tc_json_uint(j, "n", e->nvalues);
			json_value(j, "mean", v ? e->stats.mean : NAN, "x");
			json_value(j, "stddev", v ? e->stats.stddev : NAN, "x");
			json_value(j, "min", v ? e->stats.min : NAN, e->unit);
			json_value(j, "median", v ? e->stats.median : NAN, "x");
			json_value(j, "max", v ? e->stats.max : NAN, e->unit);
			json_value(j, "spread_pct", v ? e->stats.spread_pct : NAN, "x");
		}
		if (e->run >= 0)
			tc_json_int(j, "program_run", e->run);
		else
			tc_json_null(j, "program_run");
		tc_json_str(j, "explanation", cli_hinted(e->why, e->hint));
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
	tc_json_arr_begin(j, "metrics");
	for (size_t i = 0; i < tacho_stat_nmetrics(s); i++) {
		const struct tacho_metric *m = tacho_stat_metric(s, i);
		tc_json_obj_begin(j, NULL);
		tc_json_str(j, "name", m->name);
		tc_json_double(j, "value", m->value);
		tc_json_str(j, "unit", m->unit);
		tc_json_str(j, "expr", m->expr);
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
	tc_json_double(j, "wall_s", tacho_stat_wall_s(s));
	if (c->note[0])
		tc_json_str(j, "note", c->note);
	tc_json_bool(j, "interrupted", tacho_stat_interrupted(s));
	if (ex) {
		tc_json_int(j, "exit_status", ex->status);
		if (ex->signal)
			tc_json_int(j, "signal", ex->signal);
	} else {
		tc_json_null(j, "exit_status");
	}
	tc_json_obj_end(j);
	tc_json_finish(j);
}

/* --- intervals --- */

static void on_interval(void *arg, const struct tacho_stat_interval *iv)
{
	struct stat_cli *c = arg;
	char b1[64], b2[64], t[32];

	snprintf(t, sizeof(t), "%.6f", iv->t_s);
	if (c->fmt == FMT_CSV && !c->interval_header_done) {
		print_csv_header(c, true);
		c->interval_header_done = true;
	}
	for (size_t i = 0; i < iv->n; i++) {
		const struct tacho_count *k = &iv->counts[i];
		bool v = has_value(k->status);
		const char *unit = c->list ? tacho_evlist_unit(c->list, i) : "";

		if (!unit)
			unit = "";
		if (c->fmt == FMT_JSON) {
			struct tc_json j;
			tc_json_init(&j, c->out, false);
			tc_json_obj_begin(&j, NULL);
			tc_json_double(&j, "time", iv->t_s);
			tc_json_str(&j, "name", k->name);
			tc_json_str(&j, "status", tacho_count_status_name(k->status));
			json_value(&j, "value", v ? k->value : NAN, unit);
			if (v)
				tc_json_double(&j, "coverage", k->coverage);
			else
				tc_json_null(&j, "coverage");
			tc_json_str(&j, "explanation", v ? NULL : cli_hinted(k->why, k->hint));
			tc_json_obj_end(&j);
			tc_json_finish(&j);
			fputc('\n', c->out);
		} else if (c->fmt == FMT_CSV) {
			const char *f[7] = { t, k->name, tacho_count_status_name(k->status),
					     v ? fmt_machine(k->value, b1, sizeof(b1)) : "", unit,
					     v ? fmt_machine(k->coverage, b2, sizeof(b2)) : "",
					     v ? "" : (k->why ? cli_hinted(k->why, k->hint) : "") };
			for (size_t f_i = 0; f_i < ARRAY_SIZE(f); f_i++)
				tc_csv_field(c->out, c->sep, f_i == 0, f[f_i]);
			tc_csv_end(c->out);
		} else {
			const char *val = v ? fmt_human(k->value, unit, b1, sizeof(b1))
					    : k->status == TACHO_COUNT_NOT_SUPPORTED
						      ? "<not supported>"
						      : "<not counted>";
			if (k->status == TACHO_COUNT_MULTIPLEXED)
				snprintf(b2, sizeof(b2), "(%.1f%% coverage)", 100.0 * k->coverage);
			else
				b2[0] = '\0';
			fprintf(c->out, "%14s %20s %-5s %s %s\n", t, val, unit, k->name, b2);
		}
	}
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

/* --- --all: every event this machine offers --- */

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

/* --- main --- */

static int parse_uint(const char *opt, const char *s, unsigned max, unsigned *out)
{
	uint64_t v;

	if (tc_parse_u64(s, &v) != 0 || v > max)
		return cli_usage_error(&cmd_stat, "bad value for %s: '%s' (a whole number up to "
				       "%u)", opt, s, max);
	*out = (unsigned)v;
	return 0;
}

static int cmd_stat_fn(int argc, char **argv)
{
	enum { OPT_WARMUP = 256, OPT_ALL, OPT_MULTIPLEX, OPT_CSV, OPT_JSON };
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "multiplex", no_argument, NULL, OPT_MULTIPLEX },
		{ "interval", required_argument, NULL, 'I' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat_cli c = { .fmt = FMT_TABLE, .sep = ',', .repeat = 1 };
	struct tacho_stat_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_CHILD };
	struct tacho_pmu_counters pmu;
	struct tc_sb events = TC_SB_INIT;
	struct tacho_evlist *list = NULL;
	struct tacho_stat *s = NULL;
	struct tacho_diag diag;
	struct cli_signals saved;
	const char *outpath = NULL, *cpus_arg = NULL;
	char target_desc[64] = "";
	int *cpus = NULL;
	size_t ncpus = 0;
	bool all = false, fmt_set = false;
	unsigned interval = 0;
	uint64_t pid = 0;
	int opt, err, ret = EXIT_FAIL, ntargets = 0, exec_err = 0;

	opterr = 0;     /* cli_bad_option says it once, with the usage */
	while ((opt = getopt_long(argc, argv, "+e:r:I:p:t:aC:x:o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			if (!*optarg) {
				tc_sb_exit(&events);
				return cli_usage_error(&cmd_stat, "-e needs an event list");
			}
			tc_sb_addf(&events, "%s%s", events.len ? "," : "", optarg);
			break;
		case 'r':
			if (parse_uint("-r", optarg, 1000000, &c.repeat) || c.repeat == 0) {
				tc_sb_exit(&events);
				return c.repeat == 0 ? cli_usage_error(&cmd_stat, "-r must be at "
								       "least 1") : EXIT_USAGE;
			}
			c.repeat_given = true;
			break;
		case OPT_WARMUP:
			if (parse_uint("--warmup", optarg, 1000000, &o.warmup)) {
				tc_sb_exit(&events);
				return EXIT_USAGE;
			}
			break;
		case OPT_ALL:
			all = true;
			break;
		case OPT_MULTIPLEX:
			o.sched_flags |= TACHO_SCHED_MULTIPLEX;
			break;
		case 'I':
			if (parse_uint("-I", optarg, 86400000, &interval) || interval == 0) {
				tc_sb_exit(&events);
				return interval == 0 && optarg[0] ?
					cli_usage_error(&cmd_stat, "-I must be at least 1 ms") :
					EXIT_USAGE;
			}
			break;
		case 'p':
		case 't':
			if (tc_parse_u64(optarg, &pid) != 0 || pid == 0 || pid > 0x7fffffff) {
				tc_sb_exit(&events);
				return cli_usage_error(&cmd_stat, "bad %s '%s' (a process or thread "
						       "id)", opt == 'p' ? "pid" : "tid", optarg);
			}
			o.target = opt == 'p' ? TACHO_TARGET_PROCESS : TACHO_TARGET_THREAD;
			o.pid = (pid_t)pid;
			snprintf(target_desc, sizeof(target_desc), "%s %d",
				 opt == 'p' ? "process" : "thread", (int)pid);
			ntargets++;
			break;
		case 'a':
			o.target = TACHO_TARGET_CPUS;
			snprintf(target_desc, sizeof(target_desc), "all CPUs");
			ntargets++;
			break;
		case 'C':
			o.target = TACHO_TARGET_CPUS;
			cpus_arg = optarg;
			snprintf(target_desc, sizeof(target_desc), "CPUs %s", optarg);
			ntargets++;
			break;
		case 'x':
			if (fmt_set && c.fmt != FMT_CSV)
				goto fmt_conflict;
			if (strlen(optarg) != 1) {
				tc_sb_exit(&events);
				return cli_usage_error(&cmd_stat, "-x takes one character, not '%s'",
						       optarg);
			}
			c.sep = optarg[0];
			c.fmt = FMT_CSV;
			fmt_set = true;
			break;
		case OPT_CSV:
			if (fmt_set && c.fmt != FMT_CSV)
				goto fmt_conflict;
			c.fmt = FMT_CSV;
			fmt_set = true;
			break;
		case OPT_JSON:
			if (fmt_set && c.fmt != FMT_JSON)
				goto fmt_conflict;
			c.fmt = FMT_JSON;
			fmt_set = true;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'h':
			tc_sb_exit(&events);
			return cli_help(&cmd_stat);
		default:
			tc_sb_exit(&events);
			return cli_bad_option(&cmd_stat, argc, argv);
		}
	}
	if (ntargets > 1) {
		tc_sb_exit(&events);
		return cli_usage_error(&cmd_stat, "one target at most: -p, -t, -a or -C");
	}
	if (all && events.len) {
		tc_sb_exit(&events);
		return cli_usage_error(&cmd_stat, "--all and -e do not go together");
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (o.target == TACHO_TARGET_CHILD && !o.argv) {
		tc_sb_exit(&events);
		return cli_usage_error(&cmd_stat, "no program to run (tacho stat [<options>] -- "
				       "<program> [<args>])");
	}
	if ((o.target == TACHO_TARGET_PROCESS || o.target == TACHO_TARGET_THREAD) && o.argv) {
		tc_sb_exit(&events);
		return cli_usage_error(&cmd_stat, "-p and -t count a running process: no program "
				       "to run ('%s')", o.argv[0]);
	}
	if ((c.repeat > 1 || o.warmup) && !o.argv) {
		tc_sb_exit(&events);
		return cli_usage_error(&cmd_stat, "-r and --warmup need a program to run");
	}
	if (cpus_arg) {
		err = tc_parse_cpu_list(cpus_arg, &cpus, &ncpus, &diag);
		if (err) {
			tc_sb_exit(&events);
			return cli_usage_error(&cmd_stat, "bad CPU list '%s' at column %u: %s",
					       cpus_arg, diag.column, diag.message);
		}
		o.cpus = cpus;
		o.ncpus = ncpus;
	}

	err = tacho_pmu_counters_detect(&pmu);
	if (err) {
		cli_error("cannot read this CPU's counters: %s", tacho_strerror(err));
		goto out;
	}
	if (all) {
		err = tacho_evlist_new(NULL, &list);
		if (!err)
			err = build_all(list, &pmu);
		if (err) {
			cli_error("cannot list this machine's events: %s", tacho_strerror(err));
			goto out;
		}
	} else {
		if (!events.len) {
			tc_sb_adds(&events, events_sw);
			if (pmu.known && !pmu.none) {
				tc_sb_adds(&events, events_hw);
			} else {
				tc_sb_adds(&events, events_sw_more);
				if (pmu.none)
					snprintf(c.note, sizeof(c.note), "no hardware PMU on this "
						 "machine (%s): counting software events; see "
						 "'tacho doctor'", pmu.note);
				/* on stderr, unless CSV or JSON goes there (it must stay
				 * parseable): JSON carries it as "note" */
				if (c.note[0] && (c.fmt == FMT_TABLE || outpath))
					cli_error("%s", c.note);
			}
		}
		if (events.oom) {
			cli_error("out of memory");
			goto out;
		}
		err = tacho_evlist_parse(events.buf, &list, &diag);
		if (err) {
			ret = cli_event_error("event list", &diag);
			goto out;
		}
	}

	c.out = outpath ? cli_open_output(outpath) : stderr;
	if (!c.out)
		goto out;
	c.progress = !interval && isatty(STDERR_FILENO);
	o.events = list;
	c.list = list;
	o.repeat = c.repeat;
	o.pmu = &pmu;
	o.stop = &cli_stop_sig;
	o.exec_err = &exec_err;
	o.on_progress = on_progress;
	o.progress_arg = &c;
	if (interval) {
		o.interval_ms = interval;
		o.on_interval = on_interval;
		o.interval_arg = &c;
	}

	/* Ctrl-C stops counting and still prints; while a program runs, the library
	 * forwards or leaves the signal to it */
	cli_stop_signals_catch(&saved);
	memset(&diag, 0, sizeof(diag));
	err = tacho_stat_run(&o, &s, &diag);
	cli_stop_signals_restore(&saved);
	if (err) {
		if (c.progress)
			on_progress(&c, 1, 1);
		if (err == -TACHO_ECHILD) {
			cli_error("%s", diag.message);
			/* as a shell says it: 127 not found, 126 found but not runnable */
			ret = exec_err == ENOENT || exec_err == ENOTDIR ? 127 : 126;
		} else if (diag.message[0]) {
			cli_error("cannot count: %s", diag.message);
		} else {
			cli_error("cannot count: %s", tacho_strerror(err));
		}
		if (outpath && c.out)
			cli_close_output(c.out, outpath);
		goto out;
	}
	if (cli_verbose) {
		const struct tacho_schedule *plan = tacho_stat_schedule(s);
		const struct tacho_pmu_counters *pc = tacho_schedule_counters(plan);
		fprintf(stderr, "tacho: %u events in %u run%s of the program per repetition; "
			"counters: %u general, %u fixed (%s)%s%s\n",
			tacho_schedule_nevents(plan), tacho_schedule_nruns(plan),
			tacho_schedule_nruns(plan) == 1 ? "" : "s", pc->gp, pc->fixed, pc->source,
			pc->note[0] ? "; " : "", pc->note);
	}
	if (!interval) {
		if (c.fmt == FMT_JSON)
			print_json(&c, s, o.argv);
		else if (c.fmt == FMT_CSV)
			print_csv(&c, s);
		else
			print_table(&c, s, o.argv, target_desc);
	}
	if (outpath) {
		if (cli_close_output(c.out, outpath) != EXIT_OK) {
			ret = EXIT_FAIL;
			goto out;
		}
	} else {
		fflush(stderr);
	}
	ret = tacho_stat_exit(s) ? tacho_stat_exit(s)->status : EXIT_OK;
out:
	tacho_stat_free(s);
	tacho_evlist_free(list);
	tc_sb_exit(&events);
	free(cpus);
	return ret;

fmt_conflict:
	tc_sb_exit(&events);
	return cli_usage_error(&cmd_stat, "choose one output format: -x, --csv or --json");
}

const struct cli_cmd cmd_stat = {
	.name = "stat",
	.fn = cmd_stat_fn,
	.summary = "count events over a program's runs, with statistics and derived metrics",
	.help = stat_help,
};
