/* stat-write-json.c - a stat session as one JSON document (docs/schemas.md), and as
 * perf stat -j's JSON lines. */
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

/* --- JSON --- */

static void json_event(struct tc_json *j, const struct tacho_stat *s,
		       const struct tacho_stat_event *e, bool stats,
		       const struct tc_write_settings *w, const struct tacho_stat_unit *un)
{
	char hb[1200];
	bool v = tc_stat_has_value(e->status);

	tc_json_obj_begin(j, NULL);
	tc_json_str(j, "name", e->name);
	if (un)
		tc_stat_unit_json(j, un);
	tc_json_str(j, "status", tacho_count_status_name(e->status));
	tc_stat_json_value(j, "value", v ? e->value : NAN, e->unit);
	tc_json_str(j, "unit", e->unit);
	if (v)
		tc_json_double(j, "coverage", e->coverage);
	else
		tc_json_null(j, "coverage");
	if (stats) {
		/* a number even when whole ("x": no count's integer), a clock's in ns */
		const char *nu = e->unit && *e->unit ? e->unit : "x";

		/* every repetition's value (null where it gave none), and how many did */
		tc_json_arr_begin(j, "values");
		for (unsigned k = 0; k < tacho_stat_repeats(s); k++)
			tc_stat_json_value(j, NULL, e->values[k], e->unit);
		tc_json_arr_end(j);
		tc_json_uint(j, "n", e->nvalues);
		tc_stat_json_value(j, "mean", v ? e->stats->mean : NAN, nu);
		tc_stat_json_value(j, "stddev", v ? e->stats->stddev : NAN, nu);
		tc_stat_json_value(j, "min", v ? e->stats->min : NAN, e->unit);
		tc_stat_json_value(j, "median", v ? e->stats->median : NAN, nu);
		tc_stat_json_value(j, "max", v ? e->stats->max : NAN, e->unit);
		tc_stat_json_value(j, "spread_pct", v ? e->stats->spread_pct : NAN, "x");
	}
	if (e->run >= 0)
		tc_json_int(j, "program_run", e->run);
	else
		tc_json_null(j, "program_run");
	tc_json_str(j, "explanation", tc_hinted_w(w, e->why, e->hint, hb, sizeof(hb)));
	tc_json_obj_end(j);
}

static void json_cache(struct tc_json *j, const char *key, const struct tacho_sim_cache *c)
{
	tc_json_obj_begin(j, key);
	tc_json_uint(j, "size", c->size);
	tc_json_uint(j, "ways", c->ways);
	tc_json_uint(j, "line_size", c->line_size);
	tc_json_obj_end(j);
}

static void json_machine(struct tc_json *j, const struct tacho_sim_machine *m,
			 const struct tacho_sim_result *res)
{
	unsigned sims = res ? tacho_sim_result_sims(res) : TACHO_SIM_CACHES | TACHO_SIM_BRANCHES;

	tc_json_obj_begin(j, "simulation");
	tc_json_str(j, "tool", res && tacho_sim_result_tool(res) ? tacho_sim_result_tool(res)
								 : m->tool);
	tc_json_bool(j, "cache_sim", sims & TACHO_SIM_CACHES);
	tc_json_bool(j, "branch_sim", sims & TACHO_SIM_BRANCHES);
	json_cache(j, "I1", &m->i1);
	json_cache(j, "D1", &m->d1);
	json_cache(j, "LL", &m->ll);
	tc_json_str(j, "source", m->source);
	tc_json_str(j, "note", m->note);
	tc_json_str(j, "branch_model", m->branch_model);
	tc_json_str(j, "mcpu", m->mcpu);
	tc_json_str(j, "mcpu_source", m->mcpu_source);
	tc_json_obj_end(j);
}

static void json_regions(struct tc_json *j, const struct tacho_stat *s)
{
	tc_json_arr_begin(j, "regions");
	for (size_t i = 0; i < tacho_stat_nregions(s); i++) {
		const struct tacho_stat_region *g = tacho_stat_region(s, i);
		tc_json_obj_begin(j, NULL);
		tc_json_str(j, "name", g->name);
		tc_json_uint(j, "calls", g->calls);
		tc_json_uint(j, "unbalanced", g->unbalanced);
		tc_json_arr_begin(j, "events");
		for (size_t e = 0; e < tacho_stat_nevents(s); e++) {
			const struct tacho_stat_event *ev = tacho_stat_event(s, e);
			tc_json_obj_begin(j, NULL);
			tc_json_str(j, "name", ev->name);
			tc_stat_json_value(j, "inclusive", g->inclusive[e], ev->unit);
			tc_stat_json_value(j, "exclusive", g->exclusive[e], ev->unit);
			tc_json_obj_end(j);
		}
		tc_json_arr_end(j);
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
}

/* --- perf stat -j's own layout --- */

/* "key" : "val", as perf spaces it; the string escaped (perf writes it raw, and a
 * thread's name with a quote would break its line). */
static void pj_str(FILE *f, const char *key, const char *val, const char *after)
{
	fprintf(f, "\"%s\" : ", key);
	tc_json_escape(f, val, strlen(val));
	fputs(after, f);
}

/* perf's order of a breakdown's lines: per CPU and per thread event by event, each
 * unit's line under it; per core, die, package, node and cgroup unit by unit, its
 * events under it. */
bool tc_stat_perf_by_unit(enum tacho_stat_aggr a)
{
	return a != TACHO_STAT_AGGR_GLOBAL && a != TACHO_STAT_AGGR_CPU &&
	       a != TACHO_STAT_AGGR_THREAD;
}

/* One line of perf 6.1's stat -j (util/stat-display.c; its keys and order are held
 * against perf's own output in tests/e2e/test-stat-json-perf.c): the interval, the
 * unit ("cpu"; "core", "die", "socket" or "node" with "aggregate-number", its CPUs;
 * "thread"), "counter-value" as a string ("%f", or "<not counted>", "<not supported>"),
 * "unit", "event", the "cgroup", the "variance" (-r), "event-runtime" (ns running),
 * "pcnt-running", "metric-value" and "metric-unit" (0.000000 and "" where there is no
 * metric, as perf writes it). */
void tc_stat_perf_json_line(FILE *f, const char *interval, const struct tacho_stat_unit *un,
			    const struct tacho_count *k, const char *unit,
			    const double *variance, const char *munit, double mval)
{
	bool v = tc_stat_has_value(k->status);
	/* perf writes "<not counted>" where the counter never ran: no run time then */
	unsigned long long run = v ? k->running_ns : 0, ena = k->enabled_ns;
	static const char *const key[] = { [TACHO_STAT_AGGR_CORE] = "core",
					   [TACHO_STAT_AGGR_DIE] = "die",
					   [TACHO_STAT_AGGR_SOCKET] = "socket",
					   [TACHO_STAT_AGGR_NODE] = "node" };

	fputc('{', f);
	if (interval)
		fprintf(f, "\"interval\" : %s, ", interval);
	if (un && un->aggr == TACHO_STAT_AGGR_CPU) {
		fprintf(f, "\"cpu\" : \"%d\", ", un->cpu);
	} else if (un && un->aggr == TACHO_STAT_AGGR_THREAD) {
		pj_str(f, "thread", un->label, ", ");
	} else if (un && (size_t)un->aggr < ARRAY_SIZE(key) && key[un->aggr]) {
		pj_str(f, key[un->aggr], un->label, ", ");
		fprintf(f, "\"aggregate-number\" : %u, ", un->ncpus);
	}
	if (v)
		fprintf(f, "\"counter-value\" : \"%f\", ", k->value);
	else
		pj_str(f, "counter-value", tc_stat_no_value_word(k->status), ", ");
	pj_str(f, "unit", unit ? unit : "", ", ");
	pj_str(f, "event", k->name ? k->name : "", ", ");
	if (un && un->aggr == TACHO_STAT_AGGR_CGROUP)
		pj_str(f, "cgroup", un->cgroup ? un->cgroup : "", ", ");
	if (variance)
		fprintf(f, "\"variance\" : %.2f, ", *variance);
	/* perf's percentage: 100 unless the two times differ, then 100 * run / ena in
	 * whole per cent (its division is of integers) */
	fprintf(f, "\"event-runtime\" : %llu, \"pcnt-running\" : %.2f, ", run,
		run != ena && ena ? (double)(100 * run / ena) : 100.0);
	fprintf(f, "\"metric-value\" : %f, ", munit[0] ? mval : 0.0);
	pj_str(f, "metric-unit", munit, "}\n");
}

/* perf stat -j's lines of the session's counts: one per event, or with a breakdown one
 * per unit and event (perf prints no totals then), in perf's order. The metrics are
 * tacho's of the totals; a unit's line has none (tacho derives none per unit). */
int tc_stat_write_perf_json(const struct tacho_stat *s, const struct about *a, FILE *f)
{
	enum tacho_stat_aggr ag = tacho_stat_aggr(s);
	size_t ne = tacho_stat_nevents(s);
	size_t nu = ag == TACHO_STAT_AGGR_GLOBAL ? 1 : tacho_stat_nunits(s);
	bool by_unit = tc_stat_perf_by_unit(ag);

	for (size_t x = 0; x < ne * nu; x++) {
		size_t i = by_unit ? x % ne : x / nu, u = by_unit ? x / ne : x % nu;
		const struct tacho_stat_unit *un = NULL;
		const struct tacho_stat_event *e;
		struct tacho_count k = { 0 };
		double var, mval = 0;
		char munit[32] = "";

		if (ag == TACHO_STAT_AGGR_GLOBAL) {
			e = tacho_stat_event(s, i);
		} else {
			e = tacho_stat_unit_event(s, u, i);
			un = tacho_stat_unit(s, u);
		}
		if (!e)
			continue;
		k.name = e->name;
		k.status = e->status;
		k.value = e->value;
		/* the means of the repetitions with a value, as perf's averages */
		k.enabled_ns = (uint64_t)llround(e->enabled_ns);
		k.running_ns = (uint64_t)llround(e->enabled_ns * e->coverage);
		var = tc_stat_perf_variance(e);
		if (!un && tc_stat_has_value(e->status))
			tc_stat_perf_metric(s, i, &mval, munit, sizeof(munit));
		tc_stat_perf_json_line(f, NULL, un, &k, e->unit, a->repeat > 1 ? &var : NULL,
				       munit, mval);
	}
	return tc_write_status(f);
}

int tc_stat_write_json(const struct tacho_stat *s, const struct about *a, FILE *f,
		      enum tacho_format fmt, const struct tc_write_settings *w)
{
	const struct tacho_exit *ex = tacho_stat_exit_status(s);
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "runs", tacho_stat_repeats(s));
	tc_json_uint(&j, "program_runs_per_repetition", tacho_stat_runs(s));
	if (a->argv) {
		tc_json_arr_begin(&j, "command");
		for (size_t i = 0; a->argv[i]; i++)
			tc_json_str(&j, NULL, a->argv[i]);
		tc_json_arr_end(&j);
	}
	if (tacho_stat_aggr(s) != TACHO_STAT_AGGR_GLOBAL) {
		/* a breakdown: an entry per unit and event, and the events' totals */
		tc_json_str(&j, "aggregation", tacho_stat_aggr_name(tacho_stat_aggr(s)));
		tc_json_arr_begin(&j, "events");
		for (size_t u = 0; u < tacho_stat_nunits(s); u++)
			for (size_t i = 0; i < tacho_stat_nevents(s); i++)
				if (tacho_stat_unit_event(s, u, i))
					json_event(&j, s, tacho_stat_unit_event(s, u, i),
						   a->repeat > 0, w, tacho_stat_unit(s, u));
		tc_json_arr_end(&j);
		tc_json_arr_begin(&j, "totals");
	} else {
		tc_json_arr_begin(&j, "events");
	}
	for (size_t i = 0; i < tacho_stat_nevents(s); i++)
		json_event(&j, s, tacho_stat_event(s, i), a->repeat > 0, w, NULL);
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "metrics");
	for (size_t i = 0; i < tacho_stat_nmetrics(s); i++) {
		const struct tacho_metric *m = tacho_stat_metric(s, i);
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", m->full_name);
		tc_json_double(&j, "value", m->value);
		tc_json_str(&j, "unit", m->unit);
		tc_json_str(&j, "expr", m->full_expr);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_stat_json_value(&j, "wall_s", tacho_stat_wall_s(s), "s");
	tc_stat_json_value(&j, "user_s", tacho_stat_user_s(s), "s");
	tc_stat_json_value(&j, "sys_s", tacho_stat_sys_s(s), "s");
	if (tacho_stat_sim_machine(s)) {
		json_machine(&j, tacho_stat_sim_machine(s), tacho_stat_sim_result(s));
		json_regions(&j, s);
		tc_stat_json_hot(&j, s, a);
		tc_stat_json_mca(&j, a, tacho_stat_sim_machine(s));
	}
	if (a->note)
		tc_json_str(&j, "note", a->note);
	if (a->nwarnings) {
		tc_json_arr_begin(&j, "warnings");
		for (size_t i = 0; i < a->nwarnings; i++)
			tc_json_str(&j, NULL, a->warnings[i]);
		tc_json_arr_end(&j);
	}
	tc_json_bool(&j, "interrupted", tacho_stat_interrupted(s));
	if (ex) {
		tc_json_int(&j, "exit_status", ex->status);
		if (ex->signal)
			tc_json_int(&j, "signal", ex->signal);
	} else {
		tc_json_null(&j, "exit_status");
	}
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}
