/* report-write.c - the writers of a recording's report (what `tacho report` prints): the
 * header lines, the rows of any tuple of sort keys (with children, with caller/callee
 * trees), as a table, CSV or the JSON document of docs/schemas.md. One function
 * instruction by instruction is annotate.c's; the exports (folded stacks, perf script's
 * text) report-export.c's; pprof, the flame graph and speedscope are lib/export's. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "report/report-int.h"
#include "util/util.h"
#include "tacho/report.h"
#include "tacho/output.h"

/* What one call writes: rows of a tuple of sort keys. */
struct view {
	struct tacho_profile_info in;
	enum tacho_sort sort;
	bool children;
	const struct tacho_profile_row *rows;
	size_t n;
	/* rows of tacho_profile_report_rows: the options, the columns they show (in
	 * order, the function last), the samples the filter kept */
	const struct tacho_report_opts *ro;
	unsigned cols[16], ncols;
	unsigned dims;              /* the columns as a set (1u << C_...) */
	unsigned keys;              /* those of the keys (a graph adds the function) */
	uint64_t kept, kept_events;
	bool filtered;
};

/* The dimension columns of a report, in the order of the keys (the symbol last). */
enum { C_COMM, C_PID, C_TID, C_CPU, C_EVENT, C_ADDR, C_LINE, C_DSO, C_SYM };

static bool has(const struct view *v, unsigned c)
{
	return v->dims & 1u << c;
}

/* Whether the rows' entries have dimension c (the keys, not what a graph adds). */
static bool is_key(const struct view *v, unsigned c)
{
	return v->keys & 1u << c;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* "# 97,306 instructions, simulated: ..." for a recording of record --sim: its periods
 * are exact counts, and no sample was drawn, so neither a period nor losses are told. */
static void write_sim_header(FILE *f, const struct tacho_profile_info *in)
{
	char g[32];

	fprintf(f, "# %s ", tc_fmt_grouped(in->events, g, sizeof(g)));
	tc_fputs_printable(in->event ? in->event : "?", f);
	fputs(", simulated: every instruction counted by valgrind, no sampling", f);
	if (in->command) {
		fputs(": ", f);
		tc_fputs_printable(in->command, f);
	}
	fputc('\n', f);
}

/* "(period P)", "(frequency F)". A fixed period is the samples' own when they all
 * have one (a recording whose calibration had not ended when the program did has
 * samples of the provisional period, not of the event's last one), else the event's:
 * a clock's samples are weighed by the time each covered, never twice the same. */
static void write_period(FILE *f, const struct tacho_profile_info *in)
{
	uint64_t p = in->period_min && in->period_min == in->period_max ? in->period_min
									   : in->period;
	char g[32];

	if (in->offcpu) {
		/* the periods are the time each stack waited, not a sampling period */
		fprintf(f, " (blocked stacks weighed by the time they waited: %s ns in all)",
			tc_fmt_grouped(in->events, g, sizeof(g)));
		return;
	}
	fprintf(f, " (%s %" PRIu64 ")", in->freq ? "frequency" : "period", in->freq ? in->period : p);
}

/* "# 1,000 samples of mem:0x...:w (period 10), 0 lost: ./prog 1000"; a simulated
 * recording: write_sim_header's line */
static void write_header(FILE *f, const struct tacho_profile_info *in)
{
	char g[32], l[32];

	if (in->simulated) {
		write_sim_header(f, in);
		return;
	}
	fprintf(f, "# %s samples", tc_fmt_grouped(in->samples, g, sizeof(g)));
	/* the event and the command come from the file: shown, never acted upon */
	if (in->event) {
		fputs(" of ", f);
		tc_fputs_printable(in->event, f);
		write_period(f, in);
	}
	fprintf(f, ", %s lost", tc_fmt_grouped(in->lost, l, sizeof(l)));
	if (in->lost_where)
		fprintf(f, " (%s)", in->lost_where);
	if (in->throttles)
		fprintf(f, ", sampling throttled %s times", tc_fmt_grouped(in->throttles, l, sizeof(l)));
	if (in->command) {
		fputs(": ", f);
		tc_fputs_printable(in->command, f);
	}
	fputc('\n', f);
}

void tc_profile_write_header(FILE *f, const struct tacho_profile_info *in)
{
	write_header(f, in);
}

/* The keys a row has depend on the view: file and line for the line and address sorts,
 * the address for the address sort, self with children. */
static bool has_lines(const struct view *v)
{
	if (v->ro)
		return has(v, C_LINE);
	return v->sort == TACHO_SORT_LINE || v->sort == TACHO_SORT_ADDRESS;
}

static bool has_address(const struct view *v)
{
	if (v->ro)
		return has(v, C_ADDR);
	return v->sort == TACHO_SORT_ADDRESS;
}

/* Every column in every view, a column per dimension, empty where the view has no such
 * key (the first nine as they always were; comm to depth since the dimensions). */
static int write_csv(FILE *f, const struct view *v, const struct tc_write_settings *w)
{
	static const char *const head[] = { "samples", "self", "events", "percent", "symbol",
					    "dso", "file", "line", "address", "comm", "pid",
					    "tid", "cpu", "event", "depth" };
	char samples[24], self[24], events[24], pct[32], line[16], addr[24], pid[16], tid[16],
		cpu[16], depth[16];

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < v->n; i++) {
		const struct tacho_profile_row *r = &v->rows[i];
		bool node = v->ro && r->depth, sym = !v->ro || is_key(v, C_SYM) || node;
		bool dso = !v->ro || is_key(v, C_DSO) || node;
		const char *row[] = { samples, self, events, pct, sym ? r->symbol : "",
				      dso ? r->dso : "",
				      !node && has_lines(v) && r->file ? r->file : "",
				      !node && has_lines(v) && r->line > 0 ? line : "",
				      !node && has_address(v) ? addr : "",
				      !node && v->ro && has(v, C_COMM) && r->comm ? r->comm : "",
				      !node && v->ro && has(v, C_PID) ? pid : "",
				      !node && v->ro && has(v, C_TID) ? tid : "",
				      !node && v->ro && has(v, C_CPU) ? cpu : "",
				      !node && v->ro && has(v, C_EVENT) && r->event ? r->event : "",
				      v->ro && v->ro->graph ? depth : "" };
		_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
		snprintf(samples, sizeof(samples), "%" PRIu64, r->samples);
		snprintf(self, sizeof(self), "%" PRIu64, r->self);
		snprintf(events, sizeof(events), "%" PRIu64, r->events);
		snprintf(pct, sizeof(pct), "%.17g", r->percent);
		snprintf(line, sizeof(line), "%d", r->line);
		snprintf(addr, sizeof(addr), "%#" PRIx64, r->address);
		snprintf(pid, sizeof(pid), "%d", r->pid);
		snprintf(tid, sizeof(tid), "%d", r->tid);
		snprintf(cpu, sizeof(cpu), "%d", r->cpu);
		snprintf(depth, sizeof(depth), "%u", r->depth);
		tc_csv_row(f, w, row, ARRAY_SIZE(row));
	}
	return 0;
}

int tacho_profile_write_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
			     FILE *f, enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tacho_report_opts ro = { .sz = sizeof(ro), .sort = &sort, .nsort = 1,
					.children = children };

	if ((unsigned)sort > TACHO_SORT_ADDRESS)
		return -EINVAL;
	return tacho_profile_write_report(p, &ro, f, fmt, opts);
}

/* --- rows by any dimensions (tacho_profile_write_report) --- */

/* The columns of the keys, in their order, each once, the function last (so that a
 * long name pads nothing); with a graph the function is there for the tree. */
static void report_columns(struct view *v)
{
	static const unsigned expand[][4] = {
		[TACHO_SORT_SYMBOL] = { C_DSO, C_SYM },
		[TACHO_SORT_DSO] = { C_DSO },
		[TACHO_SORT_LINE] = { C_LINE, C_DSO, C_SYM },
		[TACHO_SORT_ADDRESS] = { C_ADDR, C_LINE, C_DSO, C_SYM },
		[TACHO_SORT_COMM] = { C_COMM },
		[TACHO_SORT_PID] = { C_PID },
		[TACHO_SORT_TID] = { C_TID },
		[TACHO_SORT_CPU] = { C_CPU },
		[TACHO_SORT_EVENT] = { C_EVENT },
	};
	enum tacho_sort def = TACHO_SORT_SYMBOL;
	const enum tacho_sort *keys = v->ro->nsort ? v->ro->sort : &def;
	size_t nkeys = v->ro->nsort ? v->ro->nsort : 1;

	v->ncols = 0;
	v->dims = 0;
	for (size_t i = 0; i < nkeys; i++) {
		const unsigned *e = expand[keys[i]];
		/* C_COMM is 0: the first entry is always a column, the rest end at 0 */
		for (size_t k = 0; k < 4 && (k == 0 || e[k]); k++)
			v->dims |= 1u << e[k];
	}
	v->keys = v->dims;
	if (v->ro->graph)
		v->dims |= 1u << C_SYM;
	for (size_t i = 0; i < nkeys; i++) {
		const unsigned *e = expand[keys[i]];
		for (size_t k = 0; k < 4 && (k == 0 || e[k]); k++) {
			bool have = e[k] == C_SYM;
			for (unsigned c = 0; c < v->ncols && !have; c++)
				have = v->cols[c] == e[k];
			if (!have)
				v->cols[v->ncols++] = e[k];
		}
	}
	if (v->dims & 1u << C_SYM)
		v->cols[v->ncols++] = C_SYM;
}

static const char *const col_names[] = {
	[C_COMM] = "comm", [C_PID] = "pid", [C_TID] = "tid", [C_CPU] = "cpu",
	[C_EVENT] = "event", [C_ADDR] = "address", [C_LINE] = "file:line", [C_DSO] = "dso",
	[C_SYM] = "symbol",
};

/* "# 3 of 1,502 samples of page-faults (period 1), kept by the filter, 0 lost: CMD":
 * write_header's line, saying what the filter kept and, with the event key, that every
 * event is in the rows. */
static void write_report_header(FILE *f, const struct view *v)
{
	char g[32], a[32], l[32];

	if (v->in.simulated && !has(v, C_EVENT) && !v->filtered) {
		write_sim_header(f, &v->in);
		return;
	}
	/* "# 60,003 of 97,826 instructions kept by the filter, simulated: ...": counts,
	 * not the samples (one per instruction) they are spread over */
	if (v->in.simulated && !has(v, C_EVENT)) {
		fprintf(f, "# %s of %s ", tc_fmt_grouped(v->kept_events, g, sizeof(g)),
			tc_fmt_grouped(v->in.events, a, sizeof(a)));
		tc_fputs_printable(v->in.event ? v->in.event : "?", f);
		fputs(" kept by the filter, simulated: every instruction counted by valgrind, no "
		      "sampling", f);
		if (v->in.command) {
			fputs(": ", f);
			tc_fputs_printable(v->in.command, f);
		}
		fputc('\n', f);
		return;
	}
	fputs("# ", f);
	if (v->filtered)
		fprintf(f, "%s of ", tc_fmt_grouped(v->kept, g, sizeof(g)));
	if (has(v, C_EVENT)) {
		fprintf(f, "%s samples of %u events", tc_fmt_grouped(v->filtered ? v->in.all_samples :
						v->kept, a, sizeof(a)), v->in.nevents);
	} else {
		fprintf(f, "%s samples", tc_fmt_grouped(v->in.samples, a, sizeof(a)));
		if (v->in.event) {
			/* the event and the command come from the file: shown, never acted upon */
			fputs(" of ", f);
			tc_fputs_printable(v->in.event, f);
			write_period(f, &v->in);
		}
	}
	if (v->in.simulated) {
		fputs(", simulated: exact counts, no sampling", f);
	} else {
		fprintf(f, ", %s lost", tc_fmt_grouped(v->in.lost, l, sizeof(l)));
		if (v->in.lost_where)
			fprintf(f, " (%s)", v->in.lost_where);
		if (v->in.throttles)
			fprintf(f, ", sampling throttled %s times",
				tc_fmt_grouped(v->in.throttles, l, sizeof(l)));
	}
	if (v->in.command) {
		fputs(": ", f);
		tc_fputs_printable(v->in.command, f);
	}
	fputc('\n', f);
}

/* One cell of a row; buf for those that are numbers. */
static const char *cell(const struct view *v, const struct tacho_profile_row *r, unsigned c,
			char *buf, size_t size)
{
	switch (c) {
	case C_COMM:
		return r->comm ? r->comm : "";
	case C_PID:
		snprintf(buf, size, "%d", r->pid);
		return buf;
	case C_TID:
		snprintf(buf, size, "%d", r->tid);
		return buf;
	case C_CPU:
		snprintf(buf, size, "%d", r->cpu);
		return buf;
	case C_EVENT:
		return r->event ? r->event : "";
	case C_ADDR:
		snprintf(buf, size, "%#" PRIx64, r->address);
		return buf;
	case C_LINE:
		if (r->file)
			snprintf(buf, size, "%s:%d", r->file, r->line);
		else
			snprintf(buf, size, "?");
		return buf;
	case C_DSO:
		/* beside the function, its file name; alone, the whole path */
		return has(v, C_SYM) ? base_name(r->dso) : r->dso;
	case C_SYM:
		snprintf(buf, size, "%*s%s", 2 * (int)r->depth, "", r->symbol);
		return buf;
	}
	return "";
}

static int write_report_table(FILE *f, const struct view *v)
{
	unsigned lead = v->ro->children ? 3 : 2, ncols = lead + v->ncols;
	struct tc_table *t = tc_table_new(ncols);
	const char *cells[3 + 16];
	char num[3][32], (*buf)[4200] = malloc(16 * sizeof(*buf));   /* a path or a name per
									 column: off the stack */
	int err;

	if (!t || !buf) {
		tc_table_free(t);
		free(buf);
		return -ENOMEM;
	}
	write_report_header(f, v);
	for (unsigned c = 0; c < lead; c++)
		tc_table_align_right(t, c, true);
	for (unsigned c = 0; c < v->ncols; c++)
		if (v->cols[c] == C_PID || v->cols[c] == C_TID || v->cols[c] == C_CPU)
			tc_table_align_right(t, lead + c, true);
	/* a simulated recording's rows lead with their exact counts (with children: the
	 * function's with its callees' and its own), its samples being only one per
	 * instruction and calling context */
	cells[0] = v->ro->children ? "children" : v->in.simulated ? "simulated" : "samples";
	cells[1] = v->ro->children ? "self" : "percent";
	cells[2] = "percent";
	for (unsigned c = 0; c < v->ncols; c++)
		cells[lead + c] = col_names[v->cols[c]];
	err = tc_table_add(t, cells);
	for (size_t i = 0; i < v->n && !err; i++) {
		const struct tacho_profile_row *r = &v->rows[i];
		snprintf(num[0], sizeof(num[0]), "%" PRIu64,
			 v->in.simulated ? r->events : r->samples);
		snprintf(num[1], sizeof(num[1]), "%" PRIu64,
			 v->in.simulated ? r->self_events : r->self);
		snprintf(num[2], sizeof(num[2]), "%.2f%%", r->percent);
		cells[0] = num[0];
		cells[1] = v->ro->children ? (r->depth ? "" : num[1]) : num[2];
		cells[2] = num[2];
		for (unsigned c = 0; c < v->ncols; c++)
			/* a tree's node shows its function alone; an entry its keys */
			cells[lead + c] = (r->depth ? v->cols[c] != C_SYM : !is_key(v, v->cols[c])) ?
					  "" : cell(v, r, v->cols[c], buf[c], sizeof(buf[c]));
		err = tc_table_add(t, cells);
	}
	if (!err)
		tc_table_print(t, f, 0, 2);
	tc_table_free(t);
	free(buf);
	return err;
}

/* The members of one row: one per dimension, then the counts; a tree's nodes below it
 * in "children" (those of rows[*i + 1 ...] deeper than it). */
static void write_report_json_row(struct tc_json *j, const struct view *v, size_t *i)
{
	const struct tacho_profile_row *r = &v->rows[*i];
	unsigned depth = r->depth;

	tc_json_obj_begin(j, NULL);
	if (depth) {
		tc_json_str(j, "symbol", r->symbol);
		tc_json_str(j, "dso", r->dso);
	} else {
		if (is_key(v, C_SYM))
			tc_json_str(j, "symbol", r->symbol);
		if (is_key(v, C_DSO))
			tc_json_str(j, "dso", r->dso);
		if (has(v, C_COMM))
			tc_json_str(j, "comm", r->comm);
		if (has(v, C_PID))
			tc_json_int(j, "pid", r->pid);
		if (has(v, C_TID))
			tc_json_int(j, "tid", r->tid);
		if (has(v, C_CPU))
			tc_json_int(j, "cpu", r->cpu);
		if (has(v, C_EVENT))
			tc_json_str(j, "event", r->event);
	}
	tc_json_uint(j, "samples", r->samples);
	tc_json_double(j, "percent", r->percent);
	if (!depth && v->in.simulated)
		tc_json_uint(j, "events", r->events);
	if (!depth) {
		if (has(v, C_LINE)) {
			tc_json_str(j, "file", r->file);
			tc_json_int(j, "line", r->line);
		}
		if (has(v, C_ADDR))
			tc_json_uint(j, "address", r->address);
		if (v->ro->children)
			tc_json_uint(j, "self", r->self);
		if (v->ro->children && v->in.simulated)
			tc_json_uint(j, "self_events", r->self_events);
	}
	if (v->ro->graph) {
		tc_json_arr_begin(j, "children");
		while (*i + 1 < v->n && v->rows[*i + 1].depth > depth) {
			++*i;
			write_report_json_row(j, v, i);
		}
		tc_json_arr_end(j);
	}
	tc_json_obj_end(j);
}

static int write_report_json(FILE *f, const struct view *v, enum tacho_format fmt,
			     const struct tc_write_settings *w)
{
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "samples", v->kept);
	tc_json_uint(&j, "lost", v->in.lost);
	tc_json_uint(&j, "throttles", v->in.throttles);
	if (v->filtered)
		tc_json_uint(&j, "all_samples", has(v, C_EVENT) ? v->in.all_samples : v->in.samples);
	if (v->in.simulated)
		tc_json_str(&j, "status", "simulated");
	tc_json_arr_begin(&j, "rows");
	for (size_t i = 0; i < v->n; i++)
		write_report_json_row(&j, v, &i);
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

int tacho_profile_write_report(struct tacho_profile *p, const struct tacho_report_opts *ropts,
			       FILE *f, enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tacho_profile_row *rows = NULL;
	struct tacho_report_opts ro;
	struct view v = { .in.sz = sizeof(v.in), .ro = &ro };
	struct tc_write_settings w;
	int err;

	if (!p || !f || !ropts)
		return -EINVAL;
	err = tc_report_opts_get(ropts, &ro);
	if (!err)
		err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	err = tc_profile_report_rows(p, &ro, &rows, &v.n);
	if (err)
		return err;
	tacho_profile_info(p, &v.in);
	v.rows = rows;
	v.children = ro.children;
	v.kept = p->kept_samples;
	v.kept_events = p->kept_events;
	v.filtered = p->filter != NULL;
	report_columns(&v);
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		err = write_report_json(f, &v, fmt, &w);
		break;
	case TACHO_FORMAT_CSV:
		err = write_csv(f, &v, &w);
		break;
	default:
		err = write_report_table(f, &v);
		break;
	}
	if (!err && fmt != TACHO_FORMAT_JSON && fmt != TACHO_FORMAT_JSON_LINES)
		err = tc_write_status(f);
	free(rows);
	return err;
}
