/* report-write.c - the writers of a recording's report (what `tacho report` prints): the
 * header lines, the rows of each sort (with or without children), one function
 * instruction by instruction, as a table, CSV or the JSON document of docs/schemas.md.
 * The exports (folded stacks, perf script's text) are report.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "sample/report-int.h"
#include "util/util.h"
#include "tacho/sample.h"
#include "tacho/output.h"

/* What one call writes: rows of a sort, or of one function (annotate). */
struct view {
	struct tacho_profile_info in;
	enum tacho_sort sort;
	bool children;
	const char *annotate;       /* the function, for annotate */
	const struct tacho_profile_row *rows;
	size_t n;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* "# 1,000 samples of mem:0x...:w (period 10), 0 lost: ./prog 1000"; a simulated
 * recording: "# 97,306 instructions, simulated: ..." */
static void write_header(FILE *f, const struct tacho_profile_info *in)
{
	char g[32], l[32];

	if (in->simulated) {
		fprintf(f, "# %s ", tc_fmt_grouped(in->events, g, sizeof(g)));
		tc_fputs_printable(in->event ? in->event : "?", f);
		fputs(", simulated: every instruction counted by valgrind, no sampling", f);
		if (in->command) {
			fputs(": ", f);
			tc_fputs_printable(in->command, f);
		}
		fputc('\n', f);
		return;
	}
	fprintf(f, "# %s samples", tc_fmt_grouped(in->samples, g, sizeof(g)));
	/* the event and the command come from the file: shown, never acted upon */
	if (in->event) {
		fputs(" of ", f);
		tc_fputs_printable(in->event, f);
		fprintf(f, " (%s %" PRIu64 ")", in->freq ? "frequency" : "period", in->period);
	}
	fprintf(f, ", %s lost", tc_fmt_grouped(in->lost, l, sizeof(l)));
	if (in->command) {
		fputs(": ", f);
		tc_fputs_printable(in->command, f);
	}
	fputc('\n', f);
}

/* A row's first column: its samples, or in a simulated recording its exact count. */
static uint64_t first_value(const struct view *v, const struct tacho_profile_row *r)
{
	return v->in.simulated ? r->events : r->samples;
}

static int write_rows_table(FILE *f, const struct view *v)
{
	struct tc_table *t = tc_table_new(v->children ? 6 : 5);
	const char *col = v->in.simulated ? "simulated" : "samples";
	char loc[4200];
	int err = 0;

	if (!t)
		return -ENOMEM;
	write_header(f, &v->in);
	for (unsigned c = 0; c < (v->children ? 3u : 2u); c++)
		tc_table_align_right(t, c, true);
	if (v->children)
		err = tc_table_addf(t, "children\tself\tpercent\tsymbol\tdso\t");
	else if (v->sort == TACHO_SORT_LINE)
		err = tc_table_addf(t, "%s\tpercent\tfile:line\tsymbol\tdso", col);
	else if (v->sort == TACHO_SORT_ADDRESS)
		err = tc_table_addf(t, "%s\tpercent\taddress\tsymbol\tfile:line", col);
	else if (v->sort == TACHO_SORT_DSO)
		err = tc_table_addf(t, "%s\tpercent\tdso\t\t", col);
	else
		err = tc_table_addf(t, "%s\tpercent\tsymbol\tdso\t", col);
	for (size_t i = 0; i < v->n && !err; i++) {
		const struct tacho_profile_row *r = &v->rows[i];
		if (r->file)
			snprintf(loc, sizeof(loc), "%s:%d", r->file, r->line);
		else
			snprintf(loc, sizeof(loc), "?");
		if (v->children)
			err = tc_table_addf(t, "%" PRIu64 "\t%" PRIu64 "\t%.2f%%\t%s\t%s\t", r->samples,
					    r->self, r->percent, r->symbol, base_name(r->dso));
		else if (v->sort == TACHO_SORT_LINE)
			err = tc_table_addf(t, "%" PRIu64 "\t%.2f%%\t%s\t%s\t%s", first_value(v, r),
					    r->percent, loc, r->symbol, base_name(r->dso));
		else if (v->sort == TACHO_SORT_ADDRESS)
			err = tc_table_addf(t, "%" PRIu64 "\t%.2f%%\t%#" PRIx64 "\t%s\t%s", first_value(v, r),
					    r->percent, r->address, r->symbol, loc);
		else if (v->sort == TACHO_SORT_DSO)
			err = tc_table_addf(t, "%" PRIu64 "\t%.2f%%\t%s\t\t", first_value(v, r), r->percent,
					    r->dso);
		else
			err = tc_table_addf(t, "%" PRIu64 "\t%.2f%%\t%s\t%s\t", first_value(v, r), r->percent,
					    r->symbol, base_name(r->dso));
	}
	if (!err)
		tc_table_print(t, f, 0, 2);
	tc_table_free(t);
	return err;
}

static int write_annotate_table(FILE *f, const struct view *v)
{
	struct tc_table *t = tc_table_new(4);
	uint64_t total = 0;
	char loc[4200];
	int err;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++)
		total += first_value(v, &v->rows[i]);
	write_header(f, &v->in);
	fprintf(f, "# %s in %s: %" PRIu64 " %s\n", v->annotate, v->n ? v->rows[0].dso : "?",
		total, v->in.simulated ? "simulated" : "samples");
	tc_table_align_right(t, 1, true);
	tc_table_align_right(t, 2, true);
	err = tc_table_addf(t, "address\t%s\tpercent\tsource",
			    v->in.simulated ? "simulated" : "samples");
	for (size_t i = 0; i < v->n && !err; i++) {
		const struct tacho_profile_row *r = &v->rows[i];
		if (r->file)
			snprintf(loc, sizeof(loc), "%s:%d", base_name(r->file), r->line);
		else
			snprintf(loc, sizeof(loc), "?");
		if (r->samples)
			err = tc_table_addf(t, "%#" PRIx64 "\t%" PRIu64 "\t%.2f%%\t%s", r->address,
					    first_value(v, r), r->percent, loc);
		else
			err = tc_table_addf(t, "%#" PRIx64 "\t\t\t%s", r->address, loc);
	}
	if (!err)
		tc_table_print(t, f, 0, 2);
	tc_table_free(t);
	return err;
}

/* The keys a row has depend on the view: file and line for the line and address sorts
 * and annotate, the address for the address sort and annotate, self with children. */
static bool has_lines(const struct view *v)
{
	return v->sort == TACHO_SORT_LINE || v->sort == TACHO_SORT_ADDRESS || v->annotate;
}

static bool has_address(const struct view *v)
{
	return v->sort == TACHO_SORT_ADDRESS || v->annotate;
}

static int write_json(FILE *f, const struct view *v, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "samples", v->in.samples);
	tc_json_uint(&j, "lost", v->in.lost);
	if (v->in.simulated)
		tc_json_str(&j, "status", "simulated");
	tc_json_arr_begin(&j, "rows");
	for (size_t i = 0; i < v->n; i++) {
		const struct tacho_profile_row *r = &v->rows[i];
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "symbol", r->symbol);
		tc_json_str(&j, "dso", r->dso);
		tc_json_uint(&j, "samples", r->samples);
		tc_json_double(&j, "percent", r->percent);
		if (v->in.simulated)
			tc_json_uint(&j, "events", r->events);
		if (has_lines(v)) {
			tc_json_str(&j, "file", r->file);
			tc_json_int(&j, "line", r->line);
		}
		if (has_address(v))
			tc_json_uint(&j, "address", r->address);
		if (v->children)
			tc_json_uint(&j, "self", r->self);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* Every column in every view, empty where the view has no such key. */
static int write_csv(FILE *f, const struct view *v, const struct tc_write_settings *w)
{
	static const char *const head[] = { "samples", "self", "events", "percent", "symbol",
					    "dso", "file", "line", "address" };
	char samples[24], self[24], events[24], pct[32], line[16], addr[24];

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < v->n; i++) {
		const struct tacho_profile_row *r = &v->rows[i];
		const char *row[] = { samples, self, events, pct, r->symbol, r->dso,
				      has_lines(v) && r->file ? r->file : "",
				      has_lines(v) && r->line > 0 ? line : "",
				      has_address(v) ? addr : "" };
		_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
		snprintf(samples, sizeof(samples), "%" PRIu64, r->samples);
		snprintf(self, sizeof(self), "%" PRIu64, r->self);
		snprintf(events, sizeof(events), "%" PRIu64, r->events);
		snprintf(pct, sizeof(pct), "%.17g", r->percent);
		snprintf(line, sizeof(line), "%d", r->line);
		snprintf(addr, sizeof(addr), "%#" PRIx64, r->address);
		tc_csv_row(f, w, row, ARRAY_SIZE(row));
	}
	return 0;
}

static int write_view(FILE *f, const struct view *v, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	int err;

	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(f, v, fmt, w);
	case TACHO_FORMAT_CSV:
		err = write_csv(f, v, w);
		break;
	default:
		err = v->annotate ? write_annotate_table(f, v) : write_rows_table(f, v);
		break;
	}
	return err ? err : tc_write_status(f);
}

int tacho_profile_write_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
			     FILE *f, enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tacho_profile_row *rows = NULL;
	struct view v = { .in.sz = sizeof(v.in), .sort = sort, .children = children };
	struct tc_write_settings w;
	int err;

	if (!p || !f || (unsigned)sort > TACHO_SORT_ADDRESS)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	err = tc_profile_rows(p, sort, children, &rows, &v.n);
	if (err)
		return err;
	tacho_profile_info(p, &v.in);
	v.rows = rows;
	err = write_view(f, &v, fmt, &w);
	free(rows);
	return err;
}

int tacho_profile_write_annotate(struct tacho_profile *p, const char *symbol, FILE *f,
				 enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tacho_profile_row *rows = NULL;
	struct view v = { .in.sz = sizeof(v.in), .annotate = symbol };
	struct tc_write_settings w;
	int err;

	if (!p || !symbol || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	err = tc_profile_annotate(p, symbol, &rows, &v.n);
	if (err)
		return err;
	tacho_profile_info(p, &v.in);
	v.rows = rows;
	err = write_view(f, &v, fmt, &w);
	free(rows);
	return err;
}
