/* stat-write-interval.c - the lines of each interval of a stat session: table, CSV
 * and JSON lines, and perf stat -I -x's and -I -j's layouts. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stat/schedule.h"
#include "stat/stat.h"
#include "stat/stat-write.h"
#include "output/output.h"
#include "util/util.h"
#include "tacho/stat.h"
#include "tacho/counters.h"
#include "tacho/events.h"
#include "tacho/output.h"
#include "tacho/run.h"
#include "tacho/sim.h"

static const char *const csv_interval_head[] = { "time", "name", "status", "value", "unit",
						 "coverage", "explanation", "run" };
/* --- intervals --- */

/* The lines of an interval, each made in memory and written to f in one piece: f is
 * stderr, unbuffered, by default, where a JSON line printed piece by piece cost 38
 * write(2) calls (and a reader of the stream could see half a line). Without the memory
 * stream (no memory) the lines go to f directly, as before. */
struct iv_lines {
	FILE *f, *m;
	char *buf;
	size_t len;
};

static FILE *iv_line(struct iv_lines *l)
{
	if (!l->m)
		return l->f;
	rewind(l->m);
	return l->m;
}

static void iv_line_end(struct iv_lines *l)
{
	if (!l->m)
		return;
	/* the memory stream's size is its position: this line's length */
	if (fflush(l->m) == 0 && l->len)
		fwrite(l->buf, 1, l->len, l->f);
}

/* One record of an interval: count k of the total (un NULL) or of unit un, whose
 * fields follow the common ones (CSV columns, JSON keys, the table's label). */
static int iv_record(const struct tacho_stat_interval *iv, const struct tacho_count *k,
		     const struct tacho_stat_unit *un, enum tacho_stat_aggr a, const char *unit,
		     FILE *out, enum tacho_format fmt, const struct tc_write_settings *w)
{
	char b1[64], b2[64], t[32], hb[1200], run[16], ub[UF_COUNT][24];
	bool v = tc_stat_has_value(k->status);

	/* the repetition the interval is of (0 from a caller's interval of its own) */
	snprintf(run, sizeof(run), "%u", iv->run);
	snprintf(t, sizeof(t), "%.6f", iv->t_s);
	if (fmt == TACHO_FORMAT_JSON || fmt == TACHO_FORMAT_JSON_LINES) {
		/* a stream: one object per line, whatever the layout asked */
		struct tc_json j;
		tc_json_init(&j, out, false);
		tc_json_obj_begin(&j, NULL);
		/* whole nanoseconds, as the clock gave them: the shortest digits of
		 * the division's double (0.40008607900000004) are noise */
		tc_json_double(&j, "time", round(iv->t_s * 1e9) / 1e9);
		tc_json_uint(&j, "run", iv->run);
		tc_json_str(&j, "name", k->name);
		tc_json_str(&j, "status", tacho_count_status_name(k->status));
		tc_stat_json_value(&j, "value", v ? k->value : NAN, unit);
		tc_json_str(&j, "unit", unit);
		if (v)
			tc_json_double(&j, "coverage", k->coverage);
		else
			tc_json_null(&j, "coverage");
		tc_json_str(&j, "explanation",
			    v ? NULL : tc_hinted_w(w, k->why, k->hint, hb, sizeof(hb)));
		if (un)
			tc_stat_unit_json(&j, un);
		tc_json_obj_end(&j);
		return tc_json_doc_end(&j);
	} else if (fmt == TACHO_FORMAT_CSV) {
		const char *row[ARRAY_SIZE(csv_interval_head) + UF_COUNT] = {
			t, k->name, tacho_count_status_name(k->status),
			v ? tc_stat_fmt_machine(k->value, b1, sizeof(b1)) : "", unit,
			v ? tc_stat_fmt_machine(k->coverage, b2, sizeof(b2)) : "",
			v ? "" : (k->why ? tc_hinted_w(w, k->why, k->hint, hb, sizeof(hb)) : ""),
			run };
		size_t n = ARRAY_SIZE(csv_interval_head);

		for (const enum unit_field *uf = tc_stat_unit_fields(a); *uf != UF_COUNT; uf++, n++)
			row[n] = un ? tc_stat_unit_csv(un, *uf, ub[uf - tc_stat_unit_fields(a)],
						       sizeof(ub[0]))
				    : "";
		tc_csv_row(out, w, row, n);
	} else {
		const char *val = v ? tc_stat_fmt_human(k->value, unit, b1, sizeof(b1))
				    : tc_stat_no_value_word(k->status);
		if (k->status == TACHO_COUNT_MULTIPLEXED)
			snprintf(b2, sizeof(b2), "(%.1f%% coverage)", 100.0 * k->coverage);
		else
			b2[0] = '\0';
		if (un)
			fprintf(out, "%14s %-20s %20s %-5s %s %s\n", t, un->label, val, unit,
				k->name, b2);
		else
			fprintf(out, "%14s %20s %-5s %s %s\n", t, val, unit, k->name, b2);
	}
	return 0;
}

int tacho_stat_interval_write(const struct tacho_stat_interval *iv,
			      const struct tacho_evlist *events, FILE *f, enum tacho_format fmt,
			      const struct tacho_write_opts *opts)
{
	enum tacho_stat_aggr a = TACHO_STAT_AGGR_GLOBAL;
	struct tc_write_settings w;
	struct iv_lines lines = { .f = f };
	int err;

	if (!iv || !f || (iv->n && !iv->counts) ||
	    (iv->nunits && (!iv->units || !iv->unit_counts)))
		return -EINVAL;
	for (size_t u = 0; u < iv->nunits; u++)
		if (!iv->units[u])
			return -EINVAL;
	if (iv->nunits)
		a = iv->units[0]->aggr;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	lines.m = open_memstream(&lines.buf, &lines.len);
	if (fmt == TACHO_FORMAT_CSV && w.header) {
		const char *head[ARRAY_SIZE(csv_interval_head) + UF_COUNT];
		size_t n = 0;

		for (; n < ARRAY_SIZE(csv_interval_head); n++)
			head[n] = csv_interval_head[n];
		for (const enum unit_field *uf = tc_stat_unit_fields(a); *uf != UF_COUNT; uf++)
			head[n++] = tc_stat_unit_field_name[*uf];
		tc_csv_row(iv_line(&lines), &w, head, n);
		iv_line_end(&lines);
	}
	/* with a breakdown, one record per unit and event (perf's -I -A): the units add
	 * up to the totals, which a reader sums itself */
	for (size_t u = 0; u < (iv->nunits ? iv->nunits : 1) && !err; u++) {
		for (size_t i = 0; i < iv->n && !err; i++) {
			const struct tacho_count *k = iv->nunits ? iv->unit_counts[u * iv->n + i]
								 : iv->counts[i];
			const char *unit = events ? tacho_evlist_unit(events, i) : "";

			if (!k)
				continue;
			err = iv_record(iv, k, iv->nunits ? iv->units[u] : NULL, a,
					unit ? unit : "", iv_line(&lines), fmt, &w);
			if (!err)
				iv_line_end(&lines);
		}
	}
	if (!err)
		err = lines.m && ferror(lines.m) ? -ENOMEM : 0;
	if (lines.m)
		fclose(lines.m);
	free(lines.buf);
	return err ? err : tc_write_status(f);
}

/* perf stat -I -x's line of count k (in unit un, or the total): time, the unit's id
 * (and, for a core, die, package or node, its CPUs), value, unit, event, the cgroup
 * after the event, run time, percentage running, and the metric's two fields, empty:
 * no metric is derived from an interval alone. */
static void iv_perf_record(const struct tacho_stat_interval *iv, const struct tacho_count *k,
			   const struct tacho_stat_unit *un, const char *unit, FILE *out,
			   const struct tc_write_settings *w)
{
	char t[48], val[64], run[32], pct[32], nc[16];
	bool v = tc_stat_has_value(k->status);
	const char *row[12];
	size_t n = 0;

	/* perf's time: whole seconds right-aligned in 6 columns, then nanoseconds */
	snprintf(t, sizeof(t), "%6llu.%09llu", (unsigned long long)(llround(iv->t_s * 1e9) /
								     1000000000),
		 (unsigned long long)(llround(iv->t_s * 1e9) % 1000000000));
	if (!v)
		snprintf(val, sizeof(val), "%s", tc_stat_no_value_word(k->status));
	else if (*unit)
		snprintf(val, sizeof(val), "%.2f", k->value);
	else
		snprintf(val, sizeof(val), "%.0f", k->value);
	snprintf(run, sizeof(run), "%llu", v ? (unsigned long long)k->enabled_ns : 0ULL);
	snprintf(pct, sizeof(pct), "%.2f", v ? 100.0 * k->coverage :
		 k->status == TACHO_COUNT_NOT_SUPPORTED ? 100.0 : 0.0);
	row[n++] = t;
	if (un && un->aggr != TACHO_STAT_AGGR_CGROUP) {
		row[n++] = un->label;
		if (un->aggr != TACHO_STAT_AGGR_CPU && un->aggr != TACHO_STAT_AGGR_THREAD) {
			snprintf(nc, sizeof(nc), "%u", un->ncpus);
			row[n++] = nc;
		}
	}
	row[n++] = val;
	row[n++] = unit;
	row[n++] = k->name;
	if (un && un->aggr == TACHO_STAT_AGGR_CGROUP)
		row[n++] = un->cgroup ? un->cgroup : "";
	row[n++] = run;
	row[n++] = pct;
	row[n++] = "";
	row[n++] = "";
	tc_csv_row(out, w, row, n);
}

/* perf's interval lines, -x's (json false) or -j's. */
static int iv_perf_write(const struct tacho_stat_interval *iv, const struct tacho_evlist *events,
			 FILE *f, const struct tacho_write_opts *opts, bool json)
{
	struct tc_write_settings w;
	struct iv_lines lines = { .f = f };
	char t[48];
	size_t nu;
	bool by_unit;
	int err;

	if (!iv || !f || (iv->n && !iv->counts) ||
	    (iv->nunits && (!iv->units || !iv->unit_counts)))
		return -EINVAL;
	for (size_t u = 0; u < iv->nunits; u++)
		if (!iv->units[u])
			return -EINVAL;
	err = tc_write_settings_get(opts, TACHO_FORMAT_CSV, &w);
	if (err)
		return err;
	/* -j's time: perf's "%lu.%09lu", a JSON number */
	snprintf(t, sizeof(t), "%llu.%09llu", (unsigned long long)(llround(iv->t_s * 1e9) /
								   1000000000),
		 (unsigned long long)(llround(iv->t_s * 1e9) % 1000000000));
	nu = iv->nunits ? iv->nunits : 1;
	by_unit = iv->nunits && tc_stat_perf_by_unit(iv->units[0]->aggr);
	lines.m = open_memstream(&lines.buf, &lines.len);
	for (size_t x = 0; x < iv->n * nu; x++) {
		size_t i = by_unit ? x % iv->n : x / nu, u = by_unit ? x / iv->n : x % nu;
		const struct tacho_count *k = iv->nunits ? iv->unit_counts[u * iv->n + i]
							 : iv->counts[i];
		const struct tacho_stat_unit *un = iv->nunits ? iv->units[u] : NULL;
		const char *unit = events ? tacho_evlist_unit(events, i) : "";

		if (!k)
			continue;
		/* no metric: none is derived from an interval alone */
		if (json)
			tc_stat_perf_json_line(iv_line(&lines), t, un, k, unit, NULL, "", 0);
		else
			iv_perf_record(iv, k, un, unit ? unit : "", iv_line(&lines), &w);
		iv_line_end(&lines);
	}
	err = lines.m && ferror(lines.m) ? -ENOMEM : 0;
	if (lines.m)
		fclose(lines.m);
	free(lines.buf);
	return err ? err : tc_write_status(f);
}

int tacho_stat_interval_write_perf(const struct tacho_stat_interval *iv,
				   const struct tacho_evlist *events, FILE *f,
				   const struct tacho_write_opts *opts)
{
	return iv_perf_write(iv, events, f, opts, false);
}

int tacho_stat_interval_write_perf_json(const struct tacho_stat_interval *iv,
					const struct tacho_evlist *events, FILE *f,
					const struct tacho_write_opts *opts)
{
	return iv_perf_write(iv, events, f, opts, true);
}
