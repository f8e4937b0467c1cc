/* stat-write-json.c - a stat session as one JSON document (docs/schemas.md). */
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

static void json_machine(struct tc_json *j, const struct tacho_sim_machine *m)
{
	tc_json_obj_begin(j, "simulation");
	tc_json_str(j, "tool", m->tool);
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
		json_machine(&j, tacho_stat_sim_machine(s));
		json_regions(&j, s);
		tc_stat_json_hot(&j, s, a);
		tc_stat_json_mca(&j, a, tacho_stat_sim_machine(s));
	}
	if (a->note)
		tc_json_str(&j, "note", a->note);
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
