/* diff-write.c - the writers of a comparison: the table for people, CSV, JSON
 * (docs/schemas.md#diff) and the Markdown table a CI system posts as a comment. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff-int.h"
#include "output/output.h"
#include "util/util.h"

/* A mean or a change for people: whole numbers whole (counts), others to 6 significant
 * digits; sign forces a '+' on positive values. "-" for NaN. */
static const char *fmt_num(double v, bool sign, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, size, sign ? "%+.0f" : "%.0f", v);
	else
		snprintf(buf, size, sign ? "%+.6g" : "%.6g", v);
	return buf;
}

/* A percentage: "+12.34%", "+inf%" for a value out of nothing, "-" for NaN. */
static const char *fmt_pct(double v, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else if (isinf(v))
		snprintf(buf, size, "%s", v > 0 ? "+inf%" : "-inf%");
	else
		snprintf(buf, size, "%+.2f%%", v);
	return buf;
}

/* The interval's cell: "exact", "[-1.2%, +3.4%]", or "-". */
static const char *fmt_interval(const struct tacho_diff_row *r, char *buf, size_t size)
{
	char lo[32], hi[32];

	if (r->exact)
		snprintf(buf, size, "exact");
	else if (isnan(r->lo))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "[%s, %s]", fmt_pct(r->lo_pct, lo, sizeof(lo)),
			 fmt_pct(r->hi_pct, hi, sizeof(hi)));
	return buf;
}

/* The verdict's cell: "changed", "no change", "unknown (why)", with the limit's
 * breach: "changed, over +5.00%". */
static const char *fmt_verdict(const struct tacho_diff_row *r, char *buf, size_t size)
{
	char lim[32];

	if (r->verdict == TACHO_DIFF_UNKNOWN)
		snprintf(buf, size, "unknown (%s)", r->note ? r->note : "");
	else if (r->exceeds)
		snprintf(buf, size, "changed, over %s", fmt_pct(r->limit_pct, lim, sizeof(lim)));
	else
		snprintf(buf, size, "%s", tc_diff_verdict_name(r->verdict));
	return buf;
}

/* "task-clock (msec)", or the name alone for counts. */
static const char *fmt_event(const struct tacho_diff_row *r, char *buf, size_t size)
{
	snprintf(buf, size, r->unit[0] ? "%s (%s)" : "%s", r->name, r->unit);
	return buf;
}

static void count_verdicts(const struct tacho_diff *d, size_t n[3])
{
	struct tacho_diff_row r = { .sz = sizeof(r) };

	n[0] = n[1] = n[2] = 0;
	for (size_t i = 0; i < d->n; i++)
		if (tacho_diff_row(d, i, &r) == 0)
			n[r.verdict]++;
}

static int write_table(const struct tacho_diff *d, FILE *f)
{
	struct tc_table *t = tc_table_new(7);
	struct tacho_diff_row r = { .sz = sizeof(r) };
	size_t n[3];
	int err;

	if (!t)
		return -ENOMEM;
	count_verdicts(d, n);
	/* the names are the user's file names: shown printable, as every table's text */
	fputs("# before: ", f);
	tc_fputs_printable(d->before_name, f);
	fprintf(f, " (%lld run%s), after: ", d->before_runs, d->before_runs == 1 ? "" : "s");
	tc_fputs_printable(d->after_name, f);
	fprintf(f, " (%lld run%s)\n", d->after_runs, d->after_runs == 1 ? "" : "s");
	fprintf(f, "# %g%% intervals of the change (Welch's t on the means; exact where every "
		"run agreed)\n", 100.0 * d->confidence);
	for (unsigned c = 1; c <= 4; c++)
		tc_table_align_right(t, c, true);
	err = tc_table_add(t, (const char *const[]){ "event", "before", "after", "change",
		"change %", "interval", "verdict" });
	for (size_t i = 0; i < d->n && !err; i++) {
		char ev[320], b[40], a[40], c[40], p[40], iv[80], v[320];

		tacho_diff_row(d, i, &r);
		err = tc_table_add(t, (const char *const[]){
			fmt_event(&r, ev, sizeof(ev)), fmt_num(r.before, false, b, sizeof(b)),
			fmt_num(r.after, false, a, sizeof(a)), fmt_num(r.change, true, c, sizeof(c)),
			fmt_pct(r.change_pct, p, sizeof(p)), fmt_interval(&r, iv, sizeof(iv)),
			fmt_verdict(&r, v, sizeof(v)) });
	}
	if (!err) {
		tc_table_print(t, f, 0, 2);
		fprintf(f, "# %zu changed, %zu no change, %zu unknown", n[TACHO_DIFF_CHANGED],
			n[TACHO_DIFF_NO_CHANGE], n[TACHO_DIFF_UNKNOWN]);
		if (tacho_diff_exceeded(d))
			fprintf(f, "; %zu over the limit", tacho_diff_exceeded(d));
		fputc('\n', f);
	}
	tc_table_free(t);
	return err ? err : tc_write_status(f);
}

static void json_row(struct tc_json *j, const struct tacho_diff_row *r)
{
	tc_json_obj_begin(j, NULL);
	tc_json_str(j, "name", r->name);
	tc_json_str(j, "unit", r->unit);
	tc_json_str(j, "verdict", tc_diff_verdict_name(r->verdict));
	tc_json_bool(j, "exact", r->exact);
	tc_json_uint(j, "n_before", r->n_before);
	tc_json_uint(j, "n_after", r->n_after);
	/* NaN and the infinities are written null */
	tc_json_double(j, "before", r->before);
	tc_json_double(j, "after", r->after);
	tc_json_double(j, "change", r->change);
	tc_json_double(j, "change_pct", r->change_pct);
	tc_json_double(j, "lo", r->lo);
	tc_json_double(j, "hi", r->hi);
	tc_json_double(j, "lo_pct", r->lo_pct);
	tc_json_double(j, "hi_pct", r->hi_pct);
	tc_json_double(j, "df", r->df);
	tc_json_double(j, "limit_pct", r->limit_pct);
	tc_json_bool(j, "exceeds", r->exceeds);
	tc_json_str(j, "note", r->note);
	tc_json_obj_end(j);
}

static int write_json(const struct tacho_diff *d, FILE *f, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	struct tacho_diff_row r = { .sz = sizeof(r) };
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_str(&j, "before", d->before_name);
	tc_json_str(&j, "after", d->after_name);
	tc_json_int(&j, "before_runs", d->before_runs);
	tc_json_int(&j, "after_runs", d->after_runs);
	tc_json_double(&j, "confidence", d->confidence);
	tc_json_str(&j, "method", "welch-t");
	tc_json_arr_begin(&j, "events");
	for (size_t i = 0; i < d->n; i++) {
		tacho_diff_row(d, i, &r);
		json_row(&j, &r);
	}
	tc_json_arr_end(&j);
	tc_json_uint(&j, "exceeded", tacho_diff_exceeded(d));
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* CSV numbers as the shortest text that reads back the same; "" for NaN. */
static const char *csv_num(double v, char *buf, size_t size)
{
	if (isnan(v))
		buf[0] = '\0';
	else if (isinf(v))
		snprintf(buf, size, "%s", v > 0 ? "inf" : "-inf");
	else if (v == floor(v) && fabs(v) < 1e15)
		snprintf(buf, size, "%.0f", v);   /* counts whole, as stat's CSV has them */
	else
		tc_fmt_shortest(v, buf, size);
	return buf;
}

static int write_csv(const struct tacho_diff *d, FILE *f, const struct tc_write_settings *w)
{
	static const char *const head[] = { "name", "unit", "verdict", "exact", "n_before",
		"n_after", "before", "after", "change", "change_pct", "lo", "hi", "lo_pct",
		"hi_pct", "df", "limit_pct", "exceeds", "note" };
	struct tacho_diff_row r = { .sz = sizeof(r) };

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < d->n; i++) {
		char nb[24], na[24], num[10][40];

		tacho_diff_row(d, i, &r);
		snprintf(nb, sizeof(nb), "%zu", r.n_before);
		snprintf(na, sizeof(na), "%zu", r.n_after);
		const char *row[] = { r.name, r.unit, tc_diff_verdict_name(r.verdict),
			r.exact ? "true" : "false", nb, na,
			csv_num(r.before, num[0], 40), csv_num(r.after, num[1], 40),
			csv_num(r.change, num[2], 40), csv_num(r.change_pct, num[3], 40),
			csv_num(r.lo, num[4], 40), csv_num(r.hi, num[5], 40),
			csv_num(r.lo_pct, num[6], 40), csv_num(r.hi_pct, num[7], 40),
			csv_num(r.df, num[8], 40), csv_num(r.limit_pct, num[9], 40),
			r.exceeds ? "true" : "false", r.note ? r.note : "" };
		tc_csv_row(f, w, row, ARRAY_SIZE(row));
	}
	return tc_write_status(f);
}

int tacho_diff_write(const struct tacho_diff *d, FILE *f, enum tacho_format fmt,
		     const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int err;

	if (!d || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(d, f, fmt, &w);
	case TACHO_FORMAT_CSV:
		return write_csv(d, f, &w);
	default:
		return write_table(d, f);
	}
}

/* Text inside a Markdown table cell: the characters that would end the cell or start
 * markup are escaped, control bytes shown as \xHH (tc_fputs_printable). */
static void md_text(FILE *f, const char *s)
{
	struct tc_sb sb = TC_SB_INIT;

	tc_sb_init(&sb);
	for (; *s; s++) {
		if (strchr("\\|*_`<>[]#~", *s))
			tc_sb_addc(&sb, '\\');
		tc_sb_addc(&sb, *s);
	}
	tc_fputs_printable(sb.oom ? "?" : sb.buf, f);
	tc_sb_exit(&sb);
}

int tacho_diff_write_markdown(const struct tacho_diff *d, FILE *f)
{
	struct tacho_diff_row r = { .sz = sizeof(r) };
	size_t n[3], over;

	if (!d || !f)
		return -EINVAL;
	count_verdicts(d, n);
	over = tacho_diff_exceeded(d);
	fputs("**tacho diff**: ", f);
	md_text(f, d->before_name);
	fputs(" → ", f);
	md_text(f, d->after_name);
	fprintf(f, " (%lld and %lld runs): %zu changed, %zu no change, %zu unknown", d->before_runs,
		d->after_runs, n[TACHO_DIFF_CHANGED], n[TACHO_DIFF_NO_CHANGE],
		n[TACHO_DIFF_UNKNOWN]);
	if (over)
		fprintf(f, ", **%zu over the limit**", over);
	fputs("\n\n| event | before | after | change | change % | interval | verdict |\n"
	      "|---|---:|---:|---:|---:|---|---|\n", f);
	for (size_t i = 0; i < d->n; i++) {
		char ev[320], b[40], a[40], c[40], p[40], iv[80], v[320];

		tacho_diff_row(d, i, &r);
		fputs("| ", f);
		md_text(f, fmt_event(&r, ev, sizeof(ev)));
		fprintf(f, " | %s | %s | %s | %s | %s | ", fmt_num(r.before, false, b, sizeof(b)),
			fmt_num(r.after, false, a, sizeof(a)), fmt_num(r.change, true, c, sizeof(c)),
			fmt_pct(r.change_pct, p, sizeof(p)), fmt_interval(&r, iv, sizeof(iv)));
		fputs(r.exceeds || r.verdict == TACHO_DIFF_CHANGED ? "**" : "", f);
		md_text(f, fmt_verdict(&r, v, sizeof(v)));
		fputs(r.exceeds || r.verdict == TACHO_DIFF_CHANGED ? "** |\n" : " |\n", f);
	}
	fprintf(f, "\n%g%% intervals of the change: Welch's t on the means of the runs; "
		"exact where every run of both sides agreed.\n", 100.0 * d->confidence);
	return tc_write_status(f);
}
