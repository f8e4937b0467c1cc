/* diff.c - two stat documents compared event by event: each side's runs read from its
 * JSON, matched by name, and the change of the means with Welch's interval (or
 * exactly, where the runs show no noise). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff-int.h"
#include "output/json-read.h"
#include "util/util.h"

#define DIFF_MAX_FILE (64u << 20)

/* One event of one document. */
struct side_event {
	const struct tc_jv *ev;
	const char *name, *unit, *status;
	struct tc_welford w;   /* its runs with a value */
	bool simulated;        /* valgrind's count: the same on every run */
	bool matched;
};

struct side {
	const char *name;
	struct tc_jv *doc;
	long long runs;
	size_t n;
	struct side_event *ev;
};

const char *tc_diff_verdict_name(enum tacho_diff_verdict v)
{
	switch (v) {
	case TACHO_DIFF_NO_CHANGE: return "no change";
	case TACHO_DIFF_CHANGED: return "changed";
	case TACHO_DIFF_UNKNOWN: return "unknown";
	}
	return "unknown";
}

static int bad_at(struct tacho_diag *diag, const struct side *s, const struct tc_jv *at,
		  const char *what)
{
	return tc_diag_set(diag, s->name, at->line, at->column, -TACHO_EPARSE,
			   "not a stat document: %s", what);
}

static const char *str_member(const struct tc_jv *o, const char *key)
{
	const struct tc_jv *v = tc_jv_get(o, key);

	return v && v->type == TC_JV_STRING ? v->str : NULL;
}

/* The runs of one event: "values" with -r (nulls are runs without a value), else the
 * one "value". */
static int side_event_read(struct side *s, struct side_event *e, struct tacho_diag *diag)
{
	const struct tc_jv *values = tc_jv_get(e->ev, "values"), *value;

	e->name = str_member(e->ev, "name");
	if (!e->name)
		return bad_at(diag, s, e->ev, "an event without a \"name\" string");
	e->unit = str_member(e->ev, "unit");
	e->unit = e->unit ? e->unit : "";
	e->status = str_member(e->ev, "status");
	e->status = e->status ? e->status : "";
	e->simulated = !strcmp(e->status, "simulated");
	tc_welford_init(&e->w);
	if (values) {
		if (values->type != TC_JV_ARRAY)
			return bad_at(diag, s, values, "\"values\" is not an array");
		for (size_t i = 0; i < values->n; i++) {
			const struct tc_jv *v = &values->items[i];

			if (v->type == TC_JV_NUMBER)
				tc_welford_add(&e->w, v->number);
			else if (v->type != TC_JV_NULL)
				return bad_at(diag, s, v, "a run's value is neither a number nor null");
		}
		return 0;
	}
	value = tc_jv_get(e->ev, "value");
	if (!value)
		return bad_at(diag, s, e->ev, "an event without a \"value\"");
	if (value->type == TC_JV_NUMBER)
		tc_welford_add(&e->w, value->number);
	else if (value->type != TC_JV_NULL)
		return bad_at(diag, s, value, "\"value\" is neither a number nor null");
	return 0;
}

static int side_read(struct side *s, const char *text, size_t len, struct tacho_diag *diag)
{
	const struct tc_jv *version, *events, *runs;
	int err = tc_json_read(text, len, s->name, &s->doc, diag);

	if (err)
		return err;
	if (s->doc->type != TC_JV_OBJECT)
		return bad_at(diag, s, s->doc, "not a JSON object");
	version = tc_jv_get(s->doc, "version");
	if (!version || version->type != TC_JV_NUMBER)
		return bad_at(diag, s, s->doc, "no \"version\"");
	if (version->number != 1)
		return tc_diag_set(diag, s->name, version->line, version->column,
				   -TACHO_EVERSION, "a stat document of version %g (this tacho "
				   "reads version 1)", version->number);
	/* a breakdown's entries are per unit; its totals are the events' */
	events = tc_jv_get(s->doc, "totals");
	if (!events)
		events = tc_jv_get(s->doc, "events");
	if (!events || events->type != TC_JV_ARRAY)
		return bad_at(diag, s, s->doc, "no \"events\" array (is it stat's --json?)");
	if (!events->n)
		return bad_at(diag, s, events, "no events");
	runs = tc_jv_get(s->doc, "runs");
	s->runs = runs && runs->type == TC_JV_NUMBER && runs->integer ? (long long)runs->number : 1;
	s->ev = calloc(events->n, sizeof(*s->ev));
	if (!s->ev)
		return tc_diag_set(diag, s->name, 0, 0, -ENOMEM, "out of memory");
	s->n = events->n;
	for (size_t i = 0; i < s->n; i++) {
		s->ev[i].ev = &events->items[i];
		if (s->ev[i].ev->type != TC_JV_OBJECT)
			return bad_at(diag, s, s->ev[i].ev, "an event is not an object");
		err = side_event_read(s, &s->ev[i], diag);
		if (err)
			return err;
	}
	return 0;
}

static void side_exit(struct side *s)
{
	free(s->ev);
	tc_jv_free(s->doc);
}

/* The first event of s named name not yet matched (an event given twice, -e a,a, is
 * matched in order). */
static struct side_event *side_find(struct side *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->ev[i].matched && !strcmp(s->ev[i].name, name))
			return &s->ev[i];
	return NULL;
}

static double pct_of(double v, double base)
{
	if (isnan(v) || isnan(base))
		return NAN;
	if (base != 0)
		return 100.0 * v / fabs(base);
	return v == 0 ? 0.0 : copysign(INFINITY, v);
}

static const char *unknown_note(const struct side_event *a, const struct side_event *b)
{
	if (!a->w.n && !b->w.n)
		return "no value on either side";
	if (!a->w.n)
		return "no value before";
	if (!b->w.n)
		return "no value after";
	return "a single run on a side, and the runs are not known to be exact "
	       "(give stat -r 2 or more)";
}

/* The comparison of one event; its strings are the caller's to copy. */
static void compare(const struct side_event *a, const struct side_event *b, double confidence,
		    struct tacho_diff_row *r)
{
	struct tc_welch w;

	memset(r, 0, sizeof(*r));
	r->n_before = (size_t)a->w.n;
	r->n_after = (size_t)b->w.n;
	r->before = tc_welford_mean(&a->w);
	r->after = tc_welford_mean(&b->w);
	r->change = r->after - r->before;
	r->lo = r->hi = r->df = NAN;
	r->limit_pct = NAN;
	r->verdict = TACHO_DIFF_UNKNOWN;
	/* Exact: the simulator's counts, or runs that all agreed on each side (two at
	 * least, so that agreement was observed): no noise, no interval to estimate. */
	r->exact = a->w.n && b->w.n && ((a->simulated && b->simulated) ||
		   (a->w.n >= 2 && b->w.n >= 2 && a->w.min == a->w.max && b->w.min == b->w.max));
	if (r->exact) {
		r->lo = r->hi = r->change;
		r->verdict = r->change == 0 ? TACHO_DIFF_NO_CHANGE : TACHO_DIFF_CHANGED;
	} else if (tc_welch_interval(&a->w, &b->w, confidence, &w) == 0) {
		r->lo = w.lo;
		r->hi = w.hi;
		r->df = w.df;
		r->verdict = w.lo > 0 || w.hi < 0 ? TACHO_DIFF_CHANGED : TACHO_DIFF_NO_CHANGE;
	}
	r->change_pct = pct_of(r->change, r->before);
	r->lo_pct = pct_of(r->lo, r->before);
	r->hi_pct = pct_of(r->hi, r->before);
}

#define TC_OPTS_V1_tacho_diff_opts tc_offsetofend(struct tacho_diff_opts, confidence)
#define DIFF_ROW_V1 tc_offsetofend(struct tacho_diff_row, note)

static char *dup_or_null(const char *s, bool *oom)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*oom = true;
	return d;
}

static int diff_build(struct side *a, struct side *b, double confidence, struct tacho_diff *d,
		      struct tacho_diag *diag)
{
	bool oom = false;

	d->rows = calloc(a->n, sizeof(*d->rows));
	if (!d->rows)
		return tc_diag_set(diag, b->name, 0, 0, -ENOMEM, "out of memory");
	for (size_t i = 0; i < a->n; i++) {
		struct side_event *ea = &a->ev[i], *eb = side_find(b, ea->name);
		struct diff_row *row = &d->rows[i];

		if (!eb)
			return tc_diag_set(diag, a->name, ea->ev->line, ea->ev->column,
					   -TACHO_ENOEVENT, "event '%s' is not in %s (compare "
					   "documents of the same events)", ea->name, b->name);
		eb->matched = true;
		if (strcmp(ea->unit, eb->unit))
			return tc_diag_set(diag, b->name, eb->ev->line, eb->ev->column,
					   -TACHO_ENOEVENT, "'%s' is in '%s' here and in '%s' in %s",
					   ea->name, eb->unit, ea->unit, a->name);
		compare(ea, eb, confidence, &row->r);
		d->n++;
		row->name = dup_or_null(ea->name, &oom);
		row->unit = dup_or_null(ea->unit, &oom);
		if (row->r.verdict == TACHO_DIFF_UNKNOWN)
			row->note = dup_or_null(unknown_note(ea, eb), &oom);
		if (oom)
			return tc_diag_set(diag, b->name, 0, 0, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < b->n; i++)
		if (!b->ev[i].matched)
			return tc_diag_set(diag, b->name, b->ev[i].ev->line, b->ev[i].ev->column,
					   -TACHO_ENOEVENT, "event '%s' is not in %s (compare "
					   "documents of the same events)", b->ev[i].name, a->name);
	return 0;
}

int tacho_diff_stat(const char *before, size_t before_len, const char *before_name,
		    const char *after, size_t after_len, const char *after_name,
		    const struct tacho_diff_opts *opts, struct tacho_diff **out,
		    struct tacho_diag *diag)
{
	struct side a = { .name = before_name ? before_name : "before" };
	struct side b = { .name = after_name ? after_name : "after" };
	struct tacho_diff *d = NULL;
	double confidence;
	int err;

	if (!out || !before || !after || tc_diag_check(diag))
		return -EINVAL;
	*out = NULL;
	err = TC_OPTS_VALID_DIAG(opts, tacho_diff_opts, diag);
	if (err)
		return err;
	confidence = TC_OPTS_GET(opts, tacho_diff_opts, confidence, 0.0);
	if (confidence == 0)
		confidence = 0.95;
	if (!(confidence > 0 && confidence < 1))
		return tc_diag_set(diag, "options", 0, 0, -EINVAL,
				   "the confidence must lie between 0 and 1, not %g", confidence);
	err = side_read(&a, before, before_len, diag);
	if (!err)
		err = side_read(&b, after, after_len, diag);
	if (err)
		goto out;
	d = calloc(1, sizeof(*d));
	if (!d) {
		err = tc_diag_set(diag, b.name, 0, 0, -ENOMEM, "out of memory");
		goto out;
	}
	d->confidence = confidence;
	d->default_limit = NAN;
	d->before_runs = a.runs;
	d->after_runs = b.runs;
	d->before_name = strdup(a.name);
	d->after_name = strdup(b.name);
	if (!d->before_name || !d->after_name)
		err = tc_diag_set(diag, b.name, 0, 0, -ENOMEM, "out of memory");
	else
		err = diff_build(&a, &b, confidence, d, diag);
	if (err) {
		tacho_diff_free(d);
		d = NULL;
	}
out:
	side_exit(&a);
	side_exit(&b);
	*out = d;
	return err;
}

int tacho_diff_stat_files(const char *before_path, const char *after_path,
			  const struct tacho_diff_opts *opts, struct tacho_diff **out,
			  struct tacho_diag *diag)
{
	char *a = NULL, *b = NULL;
	size_t alen, blen;
	int err;

	if (!before_path || !after_path || !out || tc_diag_check(diag))
		return -EINVAL;
	*out = NULL;
	err = tc_read_regular_file(before_path, &a, &alen, DIFF_MAX_FILE);
	if (err) {
		tc_diag_set(diag, before_path, 0, 0, err, "cannot read it: %s", tacho_strerror(err));
		return err;
	}
	err = tc_read_regular_file(after_path, &b, &blen, DIFF_MAX_FILE);
	if (err)
		tc_diag_set(diag, after_path, 0, 0, err, "cannot read it: %s", tacho_strerror(err));
	else
		err = tacho_diff_stat(a, alen, before_path, b, blen, after_path, opts, out, diag);
	free(a);
	free(b);
	return err;
}

void tacho_diff_free(struct tacho_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		free(d->rows[i].name);
		free(d->rows[i].unit);
		free(d->rows[i].note);
	}
	free(d->rows);
	free(d->before_name);
	free(d->after_name);
	free(d);
}

size_t tacho_diff_count(const struct tacho_diff *d)
{
	return d ? d->n : 0;
}

/* The row's limit (its own, else the default) and whether it is exceeded. */
static void row_limit(const struct tacho_diff *d, const struct diff_row *row,
		      struct tacho_diff_row *r)
{
	r->limit_pct = row->has_limit ? row->r.limit_pct : d->default_limit;
	r->exceeds = !isnan(r->limit_pct) && r->verdict == TACHO_DIFF_CHANGED &&
		     r->change_pct > r->limit_pct;
}

int tacho_diff_row(const struct tacho_diff *d, size_t i, struct tacho_diff_row *row)
{
	struct tacho_diff_row r;

	if (!d || !row || i >= d->n || row->sz < DIFF_ROW_V1)
		return -EINVAL;
	r = d->rows[i].r;
	r.name = d->rows[i].name;
	r.unit = d->rows[i].unit;
	r.note = d->rows[i].note;
	row_limit(d, &d->rows[i], &r);
	tc_sized_put_sz(row, &r, sizeof(r));
	return 0;
}

int tacho_diff_set_limit(struct tacho_diff *d, const char *event, double pct)
{
	bool found = false;

	if (!d || isnan(pct))
		return -EINVAL;
	if (!event) {
		d->default_limit = pct;
		return 0;
	}
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->rows[i].name, event)) {
			d->rows[i].has_limit = true;
			d->rows[i].r.limit_pct = pct;
			found = true;
		}
	return found ? 0 : -TACHO_ENOEVENT;
}

size_t tacho_diff_exceeded(const struct tacho_diff *d)
{
	size_t n = 0;
	struct tacho_diff_row r = { .sz = sizeof(r) };

	for (size_t i = 0; d && i < d->n; i++)
		if (tacho_diff_row(d, i, &r) == 0 && r.exceeds)
			n++;
	return n;
}
