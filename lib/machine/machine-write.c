/* machine-write.c - the writers of what this machine allows (what `tacho doctor`
 * prints): the checks, one line each, and the clock survey, as a table, CSV or the JSON
 * document of docs/schemas.md. They read only the public struct tacho_check and
 * struct tacho_clock_info, so that any list of checks can be written. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "util/util.h"
#include "tacho/counters.h"
#include "tacho/machine.h"
#include "tacho/output.h"
#include "tacho/tsc.h"

/* 0.385 ns, 24.4 ns, 4 ms: the unit that keeps the number short */
static void fmt_ns(double ns, char *buf, size_t size)
{
	if (ns >= 1e9)
		snprintf(buf, size, "%.3g s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, size, "%.3g ms", ns / 1e6);
	else if (ns >= 1e4)
		snprintf(buf, size, "%.3g us", ns / 1e3);
	else
		snprintf(buf, size, "%.3g ns", ns);
}

/* What a doc holds: the library's copies of the caller's arrays. */
struct doc {
	const struct tacho_check *c, *v;
	size_t n, nv;
	const struct tacho_clock_info *k;
	size_t nk;
	const struct tacho_source_proof *s;
	size_t ns;
};

/* "exact", "0 of 1,000", "998 of 1,000", "-": what the proof counted. */
static void fmt_counted(const struct tacho_source_proof *p, char *buf, size_t size)
{
	char c[32], e[32];

	tc_fmt_grouped(p->counted, c, sizeof(c));
	tc_fmt_grouped(p->expected, e, sizeof(e));
	if (p->verdict == TACHO_VERDICT_EXACT || p->verdict == TACHO_VERDICT_SILENT ||
	    p->verdict == TACHO_VERDICT_WRONG)
		snprintf(buf, size, "%s of %s", c, e);
	else
		snprintf(buf, size, "-");
}

static int checks_table(FILE *f, const struct tacho_check *c, size_t n,
			const struct tc_write_settings *w)
{
	struct tc_table *t = tc_table_new(4);
	char hb[1200];
	int err = 0;

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		const char *cells[4] = { tacho_check_state_name(c[i].state), c[i].title,
					 c[i].value,
					 tc_hinted_w(w, c[i].text, c[i].hint, hb, sizeof(hb)) };
		err = tc_table_add(t, cells);
	}
	if (!err)
		tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	return err;
}

static int sources_table(FILE *f, const struct tacho_source_proof *s, size_t n,
			 const struct tc_write_settings *w)
{
	struct tc_table *t = tc_table_new(4);
	char counted[80], hb[1200], text[800];
	int err;

	if (!t)
		return -ENOMEM;
	err = tc_table_add(t, (const char *const[]){ "source", "verdict", "counted",
						     "the proof, or why not" });
	for (size_t i = 0; i < n && !err; i++) {
		fmt_counted(&s[i], counted, sizeof(counted));
		/* a sentence of why not already says what the proof did; this is the
		 * machine's own page, to which no hint need point */
		snprintf(text, sizeof(text), "%s%s", s[i].why[0] ? s[i].why : s[i].what,
			 s[i].cached ? " (this boot's proof)" : "");
		err = tc_table_add(t, (const char *const[]){
			tacho_source_name(s[i].source), tacho_verdict_name(s[i].verdict), counted,
			tc_hinted_w(w, text, s[i].hint == TACHO_HINT_MACHINE ? TACHO_HINT_NONE
									     : s[i].hint,
				    hb, sizeof(hb)) });
	}
	if (!err)
		tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	return err;
}

static int write_table(FILE *f, const struct doc *d, const struct tc_write_settings *w)
{
	const struct tacho_clock_info *k = d->k;
	size_t nk = d->nk;
	struct tc_table *t;
	char res[64], cost[128];
	int err;

	fprintf(f, "what this machine lets tacho measure:\n\n");
	err = checks_table(f, d->c, d->n, w);
	if (!err && d->ns) {
		fprintf(f, "\nwhat each source counts, proven by counting known events (a "
			   "source that is not exact here is never shown as a number):\n\n");
		err = sources_table(f, d->s, d->ns, w);
	}
	if (!err && d->nv) {
		fprintf(f, "\nthe hardware counters, checked:\n\n");
		err = checks_table(f, d->v, d->nv, w);
	}
	if (err || !nk)
		return err;
	fprintf(f, "\nclocks (resolution; cost of one read, the median of many):\n\n");
	t = tc_table_new(3);
	if (!t)
		return -ENOMEM;
	tc_table_align_right(t, 1, true);
	tc_table_align_right(t, 2, true);
	err = tc_table_add(t, (const char *const[]){ "clock", "resolution", "one read" });
	for (size_t i = 0; i < nk && !err; i++) {
		if (k[i].err) {
			snprintf(res, sizeof(res), "-");
			snprintf(cost, sizeof(cost), "cannot read: %s", tacho_strerror(k[i].err));
		} else {
			fmt_ns(k[i].resolution_ns, res, sizeof(res));
			fmt_ns(k[i].read_ns, cost, sizeof(cost));
		}
		err = tc_table_add(t, (const char *const[]){ k[i].name, res, cost });
	}
	if (!err)
		tc_table_print(t, f, 2, 3);
	tc_table_free(t);
	return err;
}

static void json_checks(struct tc_json *j, const char *key, const struct tacho_check *c,
			size_t n, const struct tc_write_settings *w)
{
	char hb[1200];

	tc_json_arr_begin(j, key);
	for (size_t i = 0; i < n; i++) {
		tc_json_obj_begin(j, NULL);
		tc_json_str(j, "key", c[i].key);
		tc_json_str(j, "title", c[i].title);
		tc_json_str(j, "state", tacho_check_state_name(c[i].state));
		tc_json_str(j, "value", c[i].value);
		tc_json_str(j, "text", tc_hinted_w(w, c[i].text, c[i].hint, hb, sizeof(hb)));
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
}

static int write_json(FILE *f, const struct doc *d, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	const struct tacho_clock_info *k = d->k;
	size_t nk = d->nk;
	struct tc_json j;
	char hb[1200];

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	json_checks(&j, "checks", d->c, d->n, w);
	if (d->ns) {
		tc_json_arr_begin(&j, "sources");
		for (size_t i = 0; i < d->ns; i++) {
			const struct tacho_source_proof *p = &d->s[i];
			bool numbers = p->verdict == TACHO_VERDICT_EXACT ||
				       p->verdict == TACHO_VERDICT_SILENT ||
				       p->verdict == TACHO_VERDICT_WRONG;

			tc_json_obj_begin(&j, NULL);
			tc_json_str(&j, "source", tacho_source_name(p->source));
			tc_json_str(&j, "verdict", tacho_verdict_name(p->verdict));
			tc_json_uint(&j, "expected", p->expected);
			if (numbers)
				tc_json_uint(&j, "counted", p->counted);
			else
				tc_json_null(&j, "counted");
			tc_json_str(&j, "what", p->what);
			if (p->why[0])
				tc_json_str(&j, "why", tc_hinted_w(w, p->why, p->hint, hb, sizeof(hb)));
			else
				tc_json_null(&j, "why");
			tc_json_bool(&j, "cached", p->cached);
			tc_json_bool(&j, "forced", p->forced);
			tc_json_double(&j, "cost_us", p->cost_us);
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
	}
	if (d->nv)
		json_checks(&j, "verify", d->v, d->nv, w);
	tc_json_arr_begin(&j, "clocks");
	for (size_t i = 0; i < nk; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", k[i].name);
		if (k[i].err) {
			tc_json_null(&j, "resolution_ns");
			tc_json_null(&j, "read_ns");
			tc_json_str(&j, "error", tacho_strerror(k[i].err));
		} else {
			tc_json_double(&j, "resolution_ns", k[i].resolution_ns);
			tc_json_double(&j, "read_ns", k[i].read_ns);
			tc_json_null(&j, "error");
		}
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* Checks and clocks in one table, told apart by the first column, as stat's events
 * and metrics are. */
static void write_csv(FILE *f, const struct doc *d, const struct tc_write_settings *w)
{
	static const char *const head[] = { "kind", "key", "title", "state", "value", "text",
					    "resolution_ns", "read_ns", "error" };
	const struct tacho_clock_info *k = d->k;
	size_t nk = d->nk;
	char res[40], cost[40], hb[1200], text[800];

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (int part = 0; part < 3; part++) {
		const struct tacho_check *c = part ? d->v : d->c;
		size_t n = part == 0 ? d->n : part == 2 ? d->nv : 0;

		for (size_t i = 0; i < n; i++) {
			const char *row[] = { part ? "verify" : "check", c[i].key, c[i].title,
					      tacho_check_state_name(c[i].state), c[i].value,
					      tc_hinted_w(w, c[i].text, c[i].hint, hb, sizeof(hb)),
					      "", "", "" };
			_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
			tc_csv_row(f, w, row, ARRAY_SIZE(row));
		}
		/* the sources between the checks and the hardware's: a source's key, its
		 * verdict as the state, what it counted as the value */
		for (size_t i = 0; part == 1 && i < d->ns; i++) {
			char counted[80];
			const struct tacho_source_proof *p = &d->s[i];
			const char *row[] = { "source", tacho_source_name(p->source), p->what,
					      tacho_verdict_name(p->verdict), counted, text, "", "",
					      "" };
			_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
			fmt_counted(p, counted, sizeof(counted));
			snprintf(text, sizeof(text), "%s", tc_hinted_w(w, p->why, p->hint, hb,
								       sizeof(hb)));
			tc_csv_row(f, w, row, ARRAY_SIZE(row));
		}
	}
	for (size_t i = 0; i < nk; i++) {
		const char *row[] = { "clock", k[i].name, "", "", "", "", res, cost,
				      k[i].err ? tacho_strerror(k[i].err) : "" };
		_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
		res[0] = cost[0] = '\0';
		if (!k[i].err) {
			snprintf(res, sizeof(res), "%.17g", k[i].resolution_ns);
			snprintf(cost, sizeof(cost), "%.17g", k[i].read_ns);
		}
		tc_csv_row(f, w, row, ARRAY_SIZE(row));
	}
}

/* The first versions: struct tacho_machine_view ends at clock_sz, struct tacho_check at
 * hint, struct tacho_clock_info at read_ns. */
#define TC_OPTS_V1_tacho_machine_view tc_offsetofend(struct tacho_machine_view, clock_sz)
#define CHECK_SZ_V1 tc_offsetofend(struct tacho_check, hint)
#define CLOCK_SZ_V1 tc_offsetofend(struct tacho_clock_info, read_ns)

#define PROOF_SZ_V1 tc_offsetofend(struct tacho_source_proof, cost_us)

static int write_doc(const struct doc *d, FILE *f, enum tacho_format fmt,
		     const struct tc_write_settings *ws)
{
	struct tc_write_settings w = *ws;
	int err = 0;

	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(f, d, fmt, &w);
	case TACHO_FORMAT_CSV:
		write_csv(f, d, &w);
		break;
	default:
		err = write_table(f, d, &w);
		break;
	}
	return err ? err : tc_write_status(f);
}

int tacho_machine_write(const struct tacho_machine_view *view, FILE *f, enum tacho_format fmt,
			const struct tacho_write_opts *opts)
{
	struct tacho_machine_view v;
	struct tacho_check *checks = NULL, *verify = NULL;
	struct tacho_clock_info *clocks = NULL;
	struct tacho_source_proof *sources = NULL;
	struct tc_write_settings w;
	int err;

	if (!view || !f)
		return -EINVAL;
	err = TC_OPTS_VALID(view, tacho_machine_view);
	if (err)
		return err;
	TC_OPTS_COPY(&v, view);
	if ((v.nchecks && (!v.checks || v.check_sz < CHECK_SZ_V1)) ||
	    (v.nclocks && (!v.clocks || v.clock_sz < CLOCK_SZ_V1)) ||
	    (v.nsources && (!v.sources || v.source_sz < PROOF_SZ_V1)) ||
	    (v.nverify && (!v.verify || v.check_sz < CHECK_SZ_V1)))
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	/* the caller's arrays at their element sizes, in the library's structs */
	checks = calloc(v.nchecks ? v.nchecks : 1, sizeof(*checks));
	clocks = calloc(v.nclocks ? v.nclocks : 1, sizeof(*clocks));
	sources = calloc(v.nsources ? v.nsources : 1, sizeof(*sources));
	verify = calloc(v.nverify ? v.nverify : 1, sizeof(*verify));
	if (!checks || !clocks || !sources || !verify) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < v.nchecks; i++)
		tc_sized_get(&checks[i], sizeof(checks[i]), TC_CONST_ELEM(v.checks, i, v.check_sz),
			     v.check_sz);
	for (size_t i = 0; i < v.nclocks; i++)
		tc_sized_get(&clocks[i], sizeof(clocks[i]), TC_CONST_ELEM(v.clocks, i, v.clock_sz),
			     v.clock_sz);
	for (size_t i = 0; i < v.nsources; i++)
		tc_sized_get(&sources[i], sizeof(sources[i]),
			     TC_CONST_ELEM(v.sources, i, v.source_sz), v.source_sz);
	for (size_t i = 0; i < v.nverify; i++)
		tc_sized_get(&verify[i], sizeof(verify[i]), TC_CONST_ELEM(v.verify, i, v.check_sz),
			     v.check_sz);
	err = write_doc(&(struct doc){ .c = checks, .n = v.nchecks, .k = clocks, .nk = v.nclocks,
				       .s = sources, .ns = v.nsources, .v = verify,
				       .nv = v.nverify },
			f, fmt, &w);
out_free:
	free(checks);
	free(clocks);
	free(sources);
	free(verify);
	return err;
}
