/* diff-profile.c - two recordings compared row by row: each one's report rows (by
 * symbol, or another sort key) matched by name, with the share of each before and
 * after, and the rows that appeared or vanished. A binary is matched by its file name,
 * not its path, so that a program rebuilt elsewhere lines up with itself. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff-int.h"
#include "output/output.h"
#include "tacho/report.h"
#include "util/util.h"

struct pd_row {
	char *symbol, *dso;      /* the row's names (dso: the binary's file name) */
	double before, after;    /* shares of the events, percent; NaN where absent */
	uint64_t before_samples, after_samples;
};

struct tacho_profile_diff {
	char *before_name, *after_name;
	uint64_t before_samples, after_samples;
	size_t n;
	struct pd_row *rows;
};

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "";
}

static struct pd_row *pd_find(struct tacho_profile_diff *d, const char *symbol, const char *dso)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->rows[i].symbol, symbol) && !strcmp(d->rows[i].dso, dso))
			return &d->rows[i];
	return NULL;
}

/* Adds one recording's rows to d: side 0 before, 1 after. */
static int pd_add(struct tacho_profile_diff *d, const char *path, enum tacho_sort sort, int side,
		  struct tacho_diag *diag)
{
	struct tacho_profile *p;
	struct tacho_profile_row *rows = NULL;
	struct tacho_profile_info info = { .sz = sizeof(info) };
	size_t n = 0;
	int err = tacho_profile_load(path, &p, diag);

	if (err)
		return err;
	err = tacho_profile_info(p, &info);
	if (!err)
		err = tacho_profile_rows(p, sort, false, &rows, &n, sizeof(*rows));
	if (err) {
		tc_diag_set(diag, path, 0, 0, err, "cannot read its rows: %s", tacho_strerror(err));
		goto out;
	}
	if (side)
		d->after_samples = info.samples;
	else
		d->before_samples = info.samples;
	for (size_t i = 0; i < n; i++) {
		/* by binary, the row has no function: its name is the binary's */
		const char *sym = sort == TACHO_SORT_DSO ? "" :
				  rows[i].symbol ? rows[i].symbol : "[unknown]";
		const char *dso = base_name(rows[i].dso);
		struct pd_row *r = pd_find(d, sym, dso);

		if (!r) {
			struct pd_row *grown = realloc(d->rows, (d->n + 1) * sizeof(*grown));

			if (!grown) {
				err = -ENOMEM;
				break;
			}
			d->rows = grown;
			r = &d->rows[d->n];
			memset(r, 0, sizeof(*r));
			r->before = r->after = NAN;
			r->symbol = strdup(sym);
			r->dso = strdup(dso);
			d->n++;
			if (!r->symbol || !r->dso) {
				err = -ENOMEM;
				break;
			}
		}
		/* two rows of one name in one recording (two binaries of one file name, an
		 * address sort) add up */
		if (side) {
			r->after = (isnan(r->after) ? 0 : r->after) + rows[i].percent;
			r->after_samples += rows[i].samples;
		} else {
			r->before = (isnan(r->before) ? 0 : r->before) + rows[i].percent;
			r->before_samples += rows[i].samples;
		}
	}
	if (err == -ENOMEM)
		tc_diag_set(diag, path, 0, 0, err, "out of memory");
out:
	free(rows);
	tacho_profile_free(p);
	return err;
}

static double pd_change(const struct pd_row *r)
{
	return (isnan(r->after) ? 0 : r->after) - (isnan(r->before) ? 0 : r->before);
}

/* The largest change first, growth before shrinkage of the same size, then by name. */
static int pd_cmp(const void *a, const void *b)
{
	const struct pd_row *x = a, *y = b;
	double cx = pd_change(x), cy = pd_change(y);

	if (fabs(cx) != fabs(cy))
		return fabs(cx) > fabs(cy) ? -1 : 1;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(x->symbol, y->symbol);
}

int tacho_profile_diff_new(const char *before_path, const char *after_path, enum tacho_sort sort,
			   struct tacho_profile_diff **out, struct tacho_diag *diag)
{
	struct tacho_profile_diff *d;
	int err;

	if (!before_path || !after_path || !out || tc_diag_check(diag))
		return -EINVAL;
	*out = NULL;
	if (sort != TACHO_SORT_SYMBOL && sort != TACHO_SORT_DSO)
		return tc_diag_set(diag, "sort", 0, 0, -EINVAL, "recordings are compared by "
				   "symbol or by dso");
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->before_name = strdup(before_path);
	d->after_name = strdup(after_path);
	err = !d->before_name || !d->after_name ? -ENOMEM : 0;
	if (!err)
		err = pd_add(d, before_path, sort, 0, diag);
	if (!err)
		err = pd_add(d, after_path, sort, 1, diag);
	if (err) {
		tacho_profile_diff_free(d);
		return err;
	}
	if (d->n > 1)
		qsort(d->rows, d->n, sizeof(*d->rows), pd_cmp);
	*out = d;
	return 0;
}

void tacho_profile_diff_free(struct tacho_profile_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->rows[i].symbol);
		free(d->rows[i].dso);
	}
	free(d->rows);
	free(d->before_name);
	free(d->after_name);
	free(d);
}

size_t tacho_profile_diff_count(const struct tacho_profile_diff *d)
{
	return d ? d->n : 0;
}

#define PD_ROW_V1 tc_offsetofend(struct tacho_profile_diff_row, after_samples)

int tacho_profile_diff_row(const struct tacho_profile_diff *d, size_t i,
			   struct tacho_profile_diff_row *row)
{
	struct tacho_profile_diff_row r;
	const struct pd_row *p;

	if (!d || !row || i >= d->n || row->sz < PD_ROW_V1)
		return -EINVAL;
	p = &d->rows[i];
	memset(&r, 0, sizeof(r));
	r.symbol = p->symbol;
	r.dso = p->dso;
	r.before_pct = isnan(p->before) ? 0 : p->before;
	r.after_pct = isnan(p->after) ? 0 : p->after;
	r.change_pct = pd_change(p);
	r.status = isnan(p->before) ? TACHO_PROFILE_DIFF_APPEARED :
		   isnan(p->after) ? TACHO_PROFILE_DIFF_VANISHED : TACHO_PROFILE_DIFF_BOTH;
	r.before_samples = p->before_samples;
	r.after_samples = p->after_samples;
	tc_sized_put_sz(row, &r, sizeof(r));
	return 0;
}

static const char *pd_status_name(enum tacho_profile_diff_status s)
{
	return s == TACHO_PROFILE_DIFF_APPEARED ? "appeared" :
	       s == TACHO_PROFILE_DIFF_VANISHED ? "vanished" : "";
}

static const char *pct(double v, bool sign, char *buf, size_t size)
{
	snprintf(buf, size, sign ? "%+.2f%%" : "%.2f%%", v);
	return buf;
}

int tacho_profile_diff_write(const struct tacho_profile_diff *d, FILE *f, enum tacho_format fmt,
			     const struct tacho_write_opts *opts)
{
	struct tacho_profile_diff_row r = { .sz = sizeof(r) };
	struct tc_write_settings w;
	int err;

	if (!d || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	if (fmt == TACHO_FORMAT_JSON || fmt == TACHO_FORMAT_JSON_LINES) {
		struct tc_json j;

		tc_json_doc_begin(&j, f, fmt, &w);
		tc_json_obj_begin(&j, NULL);
		tc_json_int(&j, "version", 1);
		tc_json_str(&j, "before", d->before_name);
		tc_json_str(&j, "after", d->after_name);
		tc_json_uint(&j, "before_samples", d->before_samples);
		tc_json_uint(&j, "after_samples", d->after_samples);
		tc_json_arr_begin(&j, "rows");
		for (size_t i = 0; i < d->n; i++) {
			tacho_profile_diff_row(d, i, &r);
			tc_json_obj_begin(&j, NULL);
			tc_json_str(&j, "symbol", r.symbol);
			tc_json_str(&j, "dso", r.dso);
			tc_json_double(&j, "before_pct", r.before_pct);
			tc_json_double(&j, "after_pct", r.after_pct);
			tc_json_double(&j, "change_pct", r.change_pct);
			tc_json_uint(&j, "before_samples", r.before_samples);
			tc_json_uint(&j, "after_samples", r.after_samples);
			tc_json_str(&j, "status", r.status == TACHO_PROFILE_DIFF_BOTH ? "both" :
				    pd_status_name(r.status));
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
		tc_json_obj_end(&j);
		return tc_json_doc_end(&j);
	}
	if (fmt == TACHO_FORMAT_CSV) {
		static const char *const head[] = { "symbol", "dso", "before_pct", "after_pct",
			"change_pct", "before_samples", "after_samples", "status" };

		if (w.header)
			tc_csv_row(f, &w, head, ARRAY_SIZE(head));
		for (size_t i = 0; i < d->n; i++) {
			char n[5][40];

			tacho_profile_diff_row(d, i, &r);
			const char *row[] = { r.symbol, r.dso, tc_fmt_shortest(r.before_pct, n[0], 40),
				tc_fmt_shortest(r.after_pct, n[1], 40),
				tc_fmt_shortest(r.change_pct, n[2], 40), n[3], n[4],
				r.status == TACHO_PROFILE_DIFF_BOTH ? "both" : pd_status_name(r.status) };
			snprintf(n[3], 40, "%llu", (unsigned long long)r.before_samples);
			snprintf(n[4], 40, "%llu", (unsigned long long)r.after_samples);
			tc_csv_row(f, &w, row, ARRAY_SIZE(row));
		}
		return tc_write_status(f);
	}
	struct tc_table *t = tc_table_new(6);
	if (!t)
		return -ENOMEM;
	fputs("# before: ", f);
	tc_fputs_printable(d->before_name, f);
	fprintf(f, " (%llu samples), after: ", (unsigned long long)d->before_samples);
	tc_fputs_printable(d->after_name, f);
	fprintf(f, " (%llu samples); shares of the events, largest change first\n",
		(unsigned long long)d->after_samples);
	for (unsigned c = 0; c < 3; c++)
		tc_table_align_right(t, c, true);
	err = tc_table_add(t, (const char *const[]){ "before", "after", "change", "symbol", "dso",
		"" });
	for (size_t i = 0; i < d->n && !err; i++) {
		char b[32], a[32], c[32];

		tacho_profile_diff_row(d, i, &r);
		err = tc_table_add(t, (const char *const[]){ pct(r.before_pct, false, b, sizeof(b)),
			pct(r.after_pct, false, a, sizeof(a)), pct(r.change_pct, true, c, sizeof(c)),
			r.symbol, r.dso, pd_status_name(r.status) });
	}
	if (!err)
		tc_table_print(t, f, 0, 2);
	tc_table_free(t);
	return err ? err : tc_write_status(f);
}
