/* diff-profile.c - two recordings compared row by row: each one's report rows (by
 * symbol, dso, line, comm or a tuple of them) matched by name, with the share of each
 * before and after, the interval of its change (the samples as binomial draws), and
 * the rows that appeared or vanished. A binary is matched by its file name, not its
 * path, so that a program rebuilt elsewhere lines up with itself; where both recordings
 * hold its build-id and they differ, its rows say it was rebuilt. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff-int.h"
#include "output/output.h"
#include "report/profile-dso.h"
#include "symbols/symbols.h"
#include "tacho/report.h"
#include "util/util.h"

struct pd_row {
	char *symbol, *dso;      /* the row's names (dso: the binary's file name) */
	char *comm, *file;       /* NULL where the sort has none */
	int line;
	double before, after;    /* shares of the events, percent; NaN where absent */
	uint64_t before_samples, after_samples;
	/* the build-id each side recorded for the binary (len 0: none known) */
	uint8_t bid[2][TC_BUILD_ID_MAX];
	size_t bidlen[2];
};

struct tacho_profile_diff {
	char *before_name, *after_name;
	uint64_t before_samples, after_samples;
	double confidence;
	unsigned dims;           /* PD_* of the keys */
	size_t n;
	struct pd_row *rows;
};

/* The dimensions a row is matched by. */
enum { PD_SYM = 1, PD_DSO = 2, PD_LINE = 4, PD_COMM = 8 };

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "";
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static struct pd_row *pd_find(struct tacho_profile_diff *d, const struct pd_row *k)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct pd_row *r = &d->rows[i];
		if (!strcmp(r->symbol, k->symbol) && !strcmp(r->dso, k->dso) &&
		    str_eq(r->comm, k->comm) && str_eq(r->file, k->file) && r->line == k->line)
			return &d->rows[i];
	}
	return NULL;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *c = s ? strdup(s) : NULL;

	if (s && !c)
		*oom = true;
	return c;
}

/* The row of key k in d, made when new (its strings copied). NULL: out of memory. */
static struct pd_row *pd_row_of(struct tacho_profile_diff *d, const struct pd_row *k)
{
	struct pd_row *r = pd_find(d, k), *grown;
	bool oom = false;

	if (r)
		return r;
	grown = realloc(d->rows, (d->n + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	d->rows = grown;
	r = &d->rows[d->n++];
	memset(r, 0, sizeof(*r));
	r->before = r->after = NAN;
	r->symbol = dup_or_null(k->symbol, &oom);
	r->dso = dup_or_null(k->dso, &oom);
	r->comm = dup_or_null(k->comm, &oom);
	r->file = dup_or_null(k->file, &oom);
	r->line = k->line;
	return oom ? NULL : r;
}

/* Adds one recording's rows to d: side 0 before, 1 after. */
static int pd_add(struct tacho_profile_diff *d, const char *path,
		  const struct tacho_report_opts *ro, int side, struct tacho_diag *diag)
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
		err = tacho_profile_report_rows(p, ro, &rows, &n, sizeof(*rows));
	if (err) {
		tc_diag_set(diag, path, 0, 0, err, "cannot read its rows: %s", tacho_strerror(err));
		goto out;
	}
	if (side)
		d->after_samples = info.samples;
	else
		d->before_samples = info.samples;
	for (size_t i = 0; i < n; i++) {
		/* without a function key, the row has no function: its name is "" */
		struct pd_row k = {
			.symbol = (char *)(d->dims & PD_SYM ? rows[i].symbol ? rows[i].symbol :
							      "[unknown]" : ""),
			.dso = (char *)(d->dims & (PD_SYM | PD_DSO | PD_LINE) ?
					base_name(rows[i].dso) : ""),
			.comm = (char *)(d->dims & PD_COMM ? rows[i].comm : NULL),
			.file = (char *)(d->dims & PD_LINE ? rows[i].file : NULL),
			.line = d->dims & PD_LINE ? rows[i].line : 0,
		};
		struct pd_row *r = pd_row_of(d, &k);

		if (!r) {
			err = -ENOMEM;
			break;
		}
		/* the binary's build-id on this side, where the recording holds one (a
		 * row of no binary, by comm alone, has none) */
		if (k.dso[0] && rows[i].dso && !r->bidlen[side])
			r->bidlen[side] = tc_profile_dso_build_id(p, rows[i].dso, r->bid[side],
								  sizeof(r->bid[side]));
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

/* Whether both recordings hold a build-id for the row's binary, and they differ. */
static bool pd_rebuilt(const struct pd_row *r)
{
	return r->bidlen[0] && r->bidlen[1] &&
	       (r->bidlen[0] != r->bidlen[1] || memcmp(r->bid[0], r->bid[1], r->bidlen[0]));
}

/* The largest change first, growth before shrinkage of the same size, then by name. */
static int pd_cmp(const void *a, const void *b)
{
	const struct pd_row *x = a, *y = b;
	double cx = pd_change(x), cy = pd_change(y);
	int c;

	if (fabs(cx) != fabs(cy))
		return fabs(cx) > fabs(cy) ? -1 : 1;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	if ((c = strcmp(x->symbol, y->symbol)) || (c = strcmp(x->dso, y->dso)) ||
	    (c = strcmp(x->comm ? x->comm : "", y->comm ? y->comm : "")) ||
	    (c = strcmp(x->file ? x->file : "", y->file ? y->file : "")))
		return c;
	return (x->line > y->line) - (x->line < y->line);
}

#define TC_OPTS_V1_tacho_profile_diff_opts tc_offsetofend(struct tacho_profile_diff_opts, \
							  confidence)

int tacho_profile_diff_open(const char *before_path, const char *after_path,
			    const struct tacho_profile_diff_opts *opts,
			    struct tacho_profile_diff **out, struct tacho_diag *diag)
{
	static const enum tacho_sort by_symbol = TACHO_SORT_SYMBOL;
	struct tacho_report_opts ro = { .sz = sizeof(ro), .sort = &by_symbol, .nsort = 1 };
	struct tacho_profile_diff *d;
	double confidence;
	unsigned dims = 0;
	int err;

	if (!before_path || !after_path || !out || tc_diag_check(diag))
		return -EINVAL;
	*out = NULL;
	err = TC_OPTS_VALID_DIAG(opts, tacho_profile_diff_opts, diag);
	if (err)
		return err;
	if (TC_OPTS_GET(opts, tacho_profile_diff_opts, nsort, 0)) {
		ro.sort = opts->sort;
		ro.nsort = opts->nsort;
	}
	if (!ro.sort)
		return tc_diag_set(diag, "sort", 0, 0, -EINVAL, "no sort keys");
	for (size_t i = 0; i < ro.nsort; i++) {
		static const unsigned dim[] = { [TACHO_SORT_SYMBOL] = PD_SYM,
			[TACHO_SORT_DSO] = PD_DSO, [TACHO_SORT_LINE] = PD_LINE,
			[TACHO_SORT_COMM] = PD_COMM };
		/* pids, threads, CPUs and addresses differ from one run or build to the
		 * next: nothing to match */
		if ((unsigned)ro.sort[i] >= ARRAY_SIZE(dim) || !dim[ro.sort[i]])
			return tc_diag_set(diag, "sort", 0, 0, -EINVAL, "recordings are compared "
					   "by symbol, dso, line or comm");
		dims |= dim[ro.sort[i]];
	}
	confidence = TC_OPTS_GET(opts, tacho_profile_diff_opts, confidence, 0.0);
	if (confidence == 0)
		confidence = 0.95;
	if (!(confidence > 0 && confidence < 1))
		return tc_diag_set(diag, "confidence", 0, 0, -EINVAL, "the confidence is a "
				   "fraction above 0 and below 1");
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->confidence = confidence;
	d->dims = dims;
	d->before_name = strdup(before_path);
	d->after_name = strdup(after_path);
	err = !d->before_name || !d->after_name ? -ENOMEM : 0;
	if (!err)
		err = pd_add(d, before_path, &ro, 0, diag);
	if (!err)
		err = pd_add(d, after_path, &ro, 1, diag);
	if (err) {
		tacho_profile_diff_free(d);
		return err;
	}
	if (d->n > 1)
		qsort(d->rows, d->n, sizeof(*d->rows), pd_cmp);
	*out = d;
	return 0;
}

int tacho_profile_diff_new(const char *before_path, const char *after_path, enum tacho_sort sort,
			   struct tacho_profile_diff **out, struct tacho_diag *diag)
{
	struct tacho_profile_diff_opts o = { .sz = sizeof(o), .sort = &sort, .nsort = 1 };

	if (out)
		*out = NULL;
	if (sort != TACHO_SORT_SYMBOL && sort != TACHO_SORT_DSO)
		return tc_diag_set(diag, "sort", 0, 0, -EINVAL, "recordings are compared by "
				   "symbol or by dso");
	return tacho_profile_diff_open(before_path, after_path, &o, out, diag);
}

void tacho_profile_diff_free(struct tacho_profile_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->rows[i].symbol);
		free(d->rows[i].dso);
		free(d->rows[i].comm);
		free(d->rows[i].file);
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

/* The number of binaries rebuilt between the recordings (of the rows' binaries). */
static size_t pd_rebuilt_count(const struct tacho_profile_diff *d, const char **one)
{
	size_t n = 0;

	for (size_t i = 0; i < d->n; i++) {
		bool seen = false;
		if (!pd_rebuilt(&d->rows[i]))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = pd_rebuilt(&d->rows[j]) && !strcmp(d->rows[j].dso, d->rows[i].dso);
		if (!seen) {
			*one = d->rows[i].dso;
			n++;
		}
	}
	return n;
}

#define PD_ROW_V1 tc_offsetofend(struct tacho_profile_diff_row, after_samples)

int tacho_profile_diff_row(const struct tacho_profile_diff *d, size_t i,
			   struct tacho_profile_diff_row *row)
{
	struct tacho_profile_diff_row r;
	const struct pd_row *p;
	struct tc_two_prop tp;

	if (!d || !row || i >= d->n || row->sz < PD_ROW_V1)
		return -EINVAL;
	p = &d->rows[i];
	memset(&r, 0, sizeof(r));
	r.symbol = p->symbol;
	r.dso = p->dso;
	r.comm = p->comm;
	r.file = p->file;
	r.line = p->line;
	r.before_pct = isnan(p->before) ? 0 : p->before;
	r.after_pct = isnan(p->after) ? 0 : p->after;
	r.change_pct = pd_change(p);
	r.status = isnan(p->before) ? TACHO_PROFILE_DIFF_APPEARED :
		   isnan(p->after) ? TACHO_PROFILE_DIFF_VANISHED : TACHO_PROFILE_DIFF_BOTH;
	r.before_samples = p->before_samples;
	r.after_samples = p->after_samples;
	r.rebuilt = pd_rebuilt(p);
	/* the samples as binomial draws: the row's count of each side's total */
	if (tc_two_prop_interval(p->before_samples, d->before_samples, p->after_samples,
				 d->after_samples, d->confidence, &tp) == 0) {
		r.lo_pct = 100.0 * tp.lo;
		r.hi_pct = 100.0 * tp.hi;
		r.beyond_noise = tp.lo > 0 || tp.hi < 0;
	} else {
		r.lo_pct = r.hi_pct = NAN;   /* a recording without samples */
	}
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

/* The row's key in words for the table: "symbol", "dso", "comm", "file:line" as the
 * sort has them. */
static void pd_file_line(const struct tacho_profile_diff_row *r, char *buf, size_t size)
{
	if (r->file)
		snprintf(buf, size, "%s:%d", r->file, r->line);
	else
		snprintf(buf, size, "%s", r->line ? "?" : "");
}

static const char *pd_noise_word(const struct tacho_profile_diff_row *r)
{
	return isnan(r->lo_pct) ? "unknown" : r->beyond_noise ? "changed" : "noise";
}

/* The JSON document of docs/schemas.md, "diff-profile". */
static int pd_write_json(const struct tacho_profile_diff *d, FILE *f, enum tacho_format fmt,
			 const struct tc_write_settings *w)
{
	struct tacho_profile_diff_row r = { .sz = sizeof(r) };
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_str(&j, "before", d->before_name);
	tc_json_str(&j, "after", d->after_name);
	tc_json_uint(&j, "before_samples", d->before_samples);
	tc_json_uint(&j, "after_samples", d->after_samples);
	tc_json_double(&j, "confidence", d->confidence * 100.0);
	tc_json_arr_begin(&j, "rows");
	for (size_t i = 0; i < d->n; i++) {
		tacho_profile_diff_row(d, i, &r);
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "symbol", r.symbol);
		tc_json_str(&j, "dso", r.dso);
		if (d->dims & PD_COMM)
			tc_json_str(&j, "comm", r.comm ? r.comm : "[unknown]");
		if (d->dims & PD_LINE) {
			if (r.file)
				tc_json_str(&j, "file", r.file);
			else
				tc_json_null(&j, "file");
			tc_json_int(&j, "line", r.line);
		}
		tc_json_double(&j, "before_pct", r.before_pct);
		tc_json_double(&j, "after_pct", r.after_pct);
		tc_json_double(&j, "change_pct", r.change_pct);
		if (isnan(r.lo_pct)) {
			tc_json_null(&j, "interval_lo_pct");
			tc_json_null(&j, "interval_hi_pct");
			tc_json_null(&j, "beyond_noise");
		} else {
			tc_json_double(&j, "interval_lo_pct", r.lo_pct);
			tc_json_double(&j, "interval_hi_pct", r.hi_pct);
			tc_json_bool(&j, "beyond_noise", r.beyond_noise);
		}
		tc_json_uint(&j, "before_samples", r.before_samples);
		tc_json_uint(&j, "after_samples", r.after_samples);
		tc_json_str(&j, "status", r.status == TACHO_PROFILE_DIFF_BOTH ? "both" :
			    pd_status_name(r.status));
		tc_json_bool(&j, "rebuilt", r.rebuilt);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* CSV: a header row (unless w says none), then a line per row. */
static int pd_write_csv(const struct tacho_profile_diff *d, FILE *f,
			const struct tc_write_settings *w)
{
	struct tacho_profile_diff_row r = { .sz = sizeof(r) };
	static const char *const head[] = { "symbol", "dso", "comm", "file", "line",
		"before_pct", "after_pct", "change_pct", "interval_lo_pct",
		"interval_hi_pct", "beyond_noise", "before_samples", "after_samples",
		"status", "rebuilt" };

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < d->n; i++) {
		char n[8][40];

		tacho_profile_diff_row(d, i, &r);
		snprintf(n[0], 40, "%d", r.line);
		tc_fmt_shortest(r.before_pct, n[1], 40);
		tc_fmt_shortest(r.after_pct, n[2], 40);
		tc_fmt_shortest(r.change_pct, n[3], 40);
		tc_fmt_shortest(r.lo_pct, n[4], 40);
		tc_fmt_shortest(r.hi_pct, n[5], 40);
		snprintf(n[6], 40, "%llu", (unsigned long long)r.before_samples);
		snprintf(n[7], 40, "%llu", (unsigned long long)r.after_samples);
		const char *row[] = { r.symbol, r.dso, r.comm ? r.comm : "",
			r.file ? r.file : "", d->dims & PD_LINE ? n[0] : "", n[1], n[2],
			n[3], isnan(r.lo_pct) ? "" : n[4], isnan(r.hi_pct) ? "" : n[5],
			isnan(r.lo_pct) ? "" : r.beyond_noise ? "true" : "false", n[6], n[7],
			r.status == TACHO_PROFILE_DIFF_BOTH ? "both" : pd_status_name(r.status),
			r.rebuilt ? "true" : "false" };
		tc_csv_row(f, w, row, ARRAY_SIZE(row));
	}
	return tc_write_status(f);
}

/* The table: the header lines (the recordings, the interval, what was rebuilt: one
 * binary, named, or how many), then a line per row. */
static int pd_write_table(const struct tacho_profile_diff *d, FILE *f, size_t rebuilt,
			  const char *one)
{
	struct tacho_profile_diff_row r = { .sz = sizeof(r) };
	int err;

	/* the key columns the sort has, in the order comm, line, symbol, dso */
	bool has[4] = { d->dims & PD_COMM, d->dims & PD_LINE, d->dims & PD_SYM,
			d->dims & (PD_SYM | PD_DSO | PD_LINE) };
	static const char *const key_head[4] = { "comm", "line", "symbol", "dso" };
	const char *cell[10];
	size_t nc;
	struct tc_table *t = tc_table_new(6 + has[0] + has[1] + has[2] + has[3]);
	if (!t)
		return -ENOMEM;
	fputs("# before: ", f);
	tc_fputs_printable(d->before_name, f);
	fprintf(f, " (%llu samples), after: ", (unsigned long long)d->before_samples);
	tc_fputs_printable(d->after_name, f);
	fprintf(f, " (%llu samples); shares of the events, largest change first\n",
		(unsigned long long)d->after_samples);
	fprintf(f, "# %g%% intervals of the change of each share of samples (Newcombe's score "
		"interval, the samples as binomial draws): changed, or within noise\n",
		d->confidence * 100.0);
	if (rebuilt == 1) {
		fputs("# ", f);
		tc_fputs_printable(one, f);
		fputs(" was rebuilt (its build-id differs): its rows are matched by name\n", f);
	} else if (rebuilt) {
		fprintf(f, "# %zu binaries were rebuilt (their build-ids differ): their rows are "
			"matched by name\n", rebuilt);
	}
	for (unsigned c = 0; c < 3; c++)
		tc_table_align_right(t, c, true);
	nc = 0;
	cell[nc++] = "before";
	cell[nc++] = "after";
	cell[nc++] = "change";
	cell[nc++] = "interval";
	cell[nc++] = "noise";
	for (int k = 0; k < 4; k++)
		if (has[k])
			cell[nc++] = key_head[k];
	cell[nc++] = "";
	err = tc_table_add(t, cell);
	for (size_t i = 0; i < d->n && !err; i++) {
		char b[32], a[32], c[32], iv[80], lo[32], hi[32], fl[4200], note[40];

		tacho_profile_diff_row(d, i, &r);
		if (isnan(r.lo_pct))
			snprintf(iv, sizeof(iv), "-");
		else
			snprintf(iv, sizeof(iv), "[%s, %s]", pct(r.lo_pct, true, lo, sizeof(lo)),
				 pct(r.hi_pct, true, hi, sizeof(hi)));
		pd_file_line(&r, fl, sizeof(fl));
		snprintf(note, sizeof(note), "%s%s%s", pd_status_name(r.status),
			 r.rebuilt && r.status != TACHO_PROFILE_DIFF_BOTH ? " " : "",
			 r.rebuilt ? "rebuilt" : "");
		const char *key[4] = { r.comm ? r.comm : "[unknown]", fl, r.symbol, r.dso };
		nc = 0;
		cell[nc++] = pct(r.before_pct, false, b, sizeof(b));
		cell[nc++] = pct(r.after_pct, false, a, sizeof(a));
		cell[nc++] = pct(r.change_pct, true, c, sizeof(c));
		cell[nc++] = iv;
		cell[nc++] = pd_noise_word(&r);
		for (int k = 0; k < 4; k++)
			if (has[k])
				cell[nc++] = key[k];
		cell[nc++] = note;
		err = tc_table_add(t, cell);
	}
	if (!err)
		tc_table_print(t, f, 0, 2);
	tc_table_free(t);
	return err ? err : tc_write_status(f);
}

int tacho_profile_diff_write(const struct tacho_profile_diff *d, FILE *f, enum tacho_format fmt,
			     const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	const char *one = NULL;
	size_t rebuilt;
	int err;

	if (!d || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	rebuilt = pd_rebuilt_count(d, &one);
	if (fmt == TACHO_FORMAT_JSON || fmt == TACHO_FORMAT_JSON_LINES)
		return pd_write_json(d, f, fmt, &w);
	if (fmt == TACHO_FORMAT_CSV)
		return pd_write_csv(d, f, &w);
	return pd_write_table(d, f, rebuilt, one);
}
