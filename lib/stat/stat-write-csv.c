/* stat-write-csv.c - a stat session in CSV: the columns of tacho's own, with a
 * header row, and perf stat -x's layout. */
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

/* --- CSV --- */

static const char *const csv_head[] = { "kind", "name", "status", "value", "unit",
					"coverage", "runs", "mean", "stddev", "min", "median",
					"max", "spread_pct", "explanation" };

/* The CSV row of an event (kind "event"; "total" for the totals of a breakdown), its
 * unit's fields after the common ones (un NULL: none). */
static void csv_event(FILE *f, const struct tc_write_settings *w, const char *kind,
		      const struct tacho_stat_event *e, enum tacho_stat_aggr a,
		      const struct tacho_stat_unit *un)
{
	const char *row[ARRAY_SIZE(csv_head) + UF_COUNT];
	char b[8][64], runs[16], hb[1200], ub[UF_COUNT][24];
	bool v = tc_stat_has_value(e->status);
	size_t n = 0;

	snprintf(runs, sizeof(runs), "%u", e->nvalues);
	row[n++] = kind;
	row[n++] = e->name;
	row[n++] = tacho_count_status_name(e->status);
	row[n++] = v ? tc_stat_fmt_machine(e->value, b[0], sizeof(b[0])) : "";
	row[n++] = e->unit;
	/* no value, no coverage: empty, as JSON's null */
	row[n++] = v ? tc_stat_fmt_machine(e->coverage, b[1], sizeof(b[1])) : "";
	row[n++] = runs;
	row[n++] = v ? tc_stat_fmt_machine(e->stats->mean, b[2], sizeof(b[2])) : "";
	row[n++] = v ? tc_stat_fmt_machine(e->stats->stddev, b[3], sizeof(b[3])) : "";
	row[n++] = v ? tc_stat_fmt_machine(e->stats->min, b[4], sizeof(b[4])) : "";
	row[n++] = v ? tc_stat_fmt_machine(e->stats->median, b[5], sizeof(b[5])) : "";
	row[n++] = v ? tc_stat_fmt_machine(e->stats->max, b[6], sizeof(b[6])) : "";
	row[n++] = v ? tc_stat_fmt_machine(e->stats->spread_pct, b[7], sizeof(b[7])) : "";
	row[n++] = e->why ? tc_hinted_w(w, e->why, e->hint, hb, sizeof(hb)) : "";
	for (const enum unit_field *uf = tc_stat_unit_fields(a); *uf != UF_COUNT; uf++, n++)
		row[n] = un ? tc_stat_unit_csv(un, *uf, ub[uf - tc_stat_unit_fields(a)],
					       sizeof(ub[0]))
			    : "";
	tc_csv_row(f, w, row, n);
}

/* A row of the common columns, followed by the empty fields of a breakdown's. */
static void csv_row_units(FILE *f, const struct tc_write_settings *w, const char *const *row,
			  size_t n, enum tacho_stat_aggr a)
{
	const char *all[ARRAY_SIZE(csv_head) + UF_COUNT];
	size_t k = 0;

	for (; k < n; k++)
		all[k] = row[k];
	for (size_t i = 0; i < tc_stat_unit_nfields(a); i++)
		all[k++] = "";
	tc_csv_row(f, w, all, k);
}

/* --- perf stat -x's own layout --- */

/* perf's shadow metric of event i, as perf prints it beside the event (tools/perf/util/
 * stat-shadow.c): CPUs utilized beside task-clock, GHz beside cycles, insn per cycle
 * beside instructions, a rate per second over task-clock scaled to K/, M/ or G/sec
 * (each step taken above 1000, as perf's convert_unit_double); false where tacho has no
 * such metric. */
bool tc_stat_perf_metric(const struct tacho_stat *s, size_t i, double *val, char *unit,
			 size_t usz)
{
	for (size_t m = 0; m < tacho_stat_nmetrics(s); m++) {
		const struct tacho_metric *mt = tacho_stat_metric(s, m);
		double v = mt->value;

		if (mt->inputs[0] != (int)i)
			continue;
		if (!strcmp(mt->name, "CPUs utilized") || !strcmp(mt->name, "GHz")) {
			snprintf(unit, usz, "%s", mt->name);
		} else if (!strcmp(mt->name, "IPC")) {
			snprintf(unit, usz, "insn per cycle");
		} else if (!strcmp(mt->unit, "/sec") && strstr(mt->expr, "task-clock")) {
			const char *pre = "";
			if (v > 1e3) {
				v /= 1e3;
				pre = "K";
			}
			if (v > 1e3) {
				v /= 1e3;
				pre = "M";
			}
			if (v > 1e3) {
				v /= 1e3;
				pre = "G";
			}
			snprintf(unit, usz, "%s/sec", pre);
		} else {
			continue;
		}
		*val = v;
		return true;
	}
	return false;
}

/* perf's variance of event e over the repetitions: the relative standard deviation of
 * the mean, in per cent (perf's rel_stddev_stats); 0 where there is none to compute, as
 * perf prints it. */
double tc_stat_perf_variance(const struct tacho_stat_event *e)
{
	if (tc_stat_has_value(e->status) && e->nvalues > 1 && e->value != 0 &&
	    isfinite(e->stats->stddev))
		return 100.0 * e->stats->stddev / sqrt((double)e->nvalues) / fabs(e->value);
	return 0;
}

/* perf's -x metric fields of event i: insn per cycle to 2 decimals, the rest to 3;
 * two empty fields where tacho has no such metric (as perf prints them then). */
static void perf_metric(const struct tacho_stat *s, size_t i, char *val, size_t vsz,
			char *unit, size_t usz)
{
	double v;

	val[0] = unit[0] = '\0';
	if (tc_stat_perf_metric(s, i, &v, unit, usz))
		snprintf(val, vsz, !strcmp(unit, "insn per cycle") ? "%.2f" : "%.3f", v);
}

/* perf 6.1's -x columns: value, unit, event, [variance (with -r),] run time (ns),
 * percentage running, metric value, metric unit; "<not supported>" and "<not counted>"
 * in place of a value, as perf writes them. No header. */
int tc_stat_write_perf_csv(const struct tacho_stat *s, const struct about *a, FILE *f,
			  const struct tc_write_settings *w)
{
	for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
		const struct tacho_stat_event *e = tacho_stat_event(s, i);
		char val[64], var[32], run[32], pct[32], mval[32], munit[32];
		const char *row[8];
		size_t n = 0;
		bool v = tc_stat_has_value(e->status);

		if (!v)
			snprintf(val, sizeof(val), "%s", tc_stat_no_value_word(e->status));
		else if (*e->unit)
			snprintf(val, sizeof(val), "%.2f", e->value);
		else
			snprintf(val, sizeof(val), "%.0f", e->value);
		snprintf(var, sizeof(var), "%.2f%%", tc_stat_perf_variance(e));
		snprintf(run, sizeof(run), "%.0f", v ? e->enabled_ns : 0.0);
		snprintf(pct, sizeof(pct), "%.2f", v ? 100.0 * e->coverage :
			 e->status == TACHO_COUNT_NOT_SUPPORTED ? 100.0 : 0.0);
		if (v)
			perf_metric(s, i, mval, sizeof(mval), munit, sizeof(munit));
		else
			mval[0] = munit[0] = '\0';
		row[n++] = val;
		row[n++] = e->unit;
		row[n++] = e->name;
		if (a->repeat > 1)
			row[n++] = var;
		row[n++] = run;
		row[n++] = pct;
		row[n++] = mval;
		row[n++] = munit;
		tc_csv_row(f, w, row, n);
	}
	return tc_write_status(f);
}

int tc_stat_write_csv(const struct tacho_stat *s, FILE *f, const struct tc_write_settings *w)
{
	enum tacho_stat_aggr a = tacho_stat_aggr(s);
	char b[8][64];

	if (w->header) {
		const char *head[ARRAY_SIZE(csv_head) + UF_COUNT];
		size_t n = 0;
		for (; n < ARRAY_SIZE(csv_head); n++)
			head[n] = csv_head[n];
		for (const enum unit_field *uf = tc_stat_unit_fields(a); *uf != UF_COUNT; uf++)
			head[n++] = tc_stat_unit_field_name[*uf];
		tc_csv_row(f, w, head, n);
	}
	/* a breakdown: a row per unit and event, then the totals (no unit's fields) */
	for (size_t u = 0; u < tacho_stat_nunits(s); u++)
		for (size_t i = 0; i < tacho_stat_nevents(s); i++)
			if (tacho_stat_unit_event(s, u, i))
				csv_event(f, w, "event", tacho_stat_unit_event(s, u, i), a,
					  tacho_stat_unit(s, u));
	for (size_t i = 0; i < tacho_stat_nevents(s); i++)
		csv_event(f, w, a == TACHO_STAT_AGGR_GLOBAL ? "event" : "total",
			  tacho_stat_event(s, i), a, NULL);
	if (tacho_stat_sim_machine(s)) {
		/* the simulated machine, a row per cache: its size, and the rest in words */
		const struct tacho_sim_machine *m = tacho_stat_sim_machine(s);
		const struct tacho_sim_cache *c[] = { &m->i1, &m->d1, &m->ll };
		static const char *const cname[] = { "I1", "D1", "LL" };
		for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
			char size[32], words[400];
			snprintf(size, sizeof(size), "%llu", (unsigned long long)c[i]->size);
			snprintf(words, sizeof(words), "%u-way, %u B lines, from %s%s%s",
				 c[i]->ways, c[i]->line_size, m->source,
				 m->note[0] ? "; " : "", m->note);
			const char *row[] = { "sim-cache", cname[i], "simulated", size, "B",
					      "", "", "", "", "", "", "", "", words };
			_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(csv_head),
				       "a field per column");
			csv_row_units(f, w, row, ARRAY_SIZE(row), a);
		}
	}
	for (size_t i = 0; i < tacho_stat_nmetrics(s); i++) {
		const struct tacho_metric *m = tacho_stat_metric(s, i);
		const char *row[] = { "metric", m->full_name, "derived",
				      tc_stat_fmt_machine(m->value, b[0], sizeof(b[0])), m->unit,
				      "", "", "", "", "", "", "", "", m->full_expr };
		_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(csv_head), "a field per column");
		csv_row_units(f, w, row, ARRAY_SIZE(row), a);
	}
	return tc_write_status(f);
}
