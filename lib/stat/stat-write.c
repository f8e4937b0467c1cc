/* stat-write.c - the writers of a stat session: what the formats share (the values,
 * the caller's description, a breakdown unit's fields), the event table with statuses
 * and statistics, and tacho_stat_write, which picks the format. CSV is in
 * stat-write-csv.c, JSON in stat-write-json.c, the intervals' lines in
 * stat-write-interval.c. */
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

/* --- values --- */

static bool integral(double v)
{
	return isfinite(v) && v == floor(v) && fabs(v) < 9.007199254740992e15;
}

/* A value for people: counts with thousands separators, others with decimals. */
const char *tc_stat_fmt_human(double v, const char *unit, char *buf, size_t size)
{
	char g[32];

	if (!isfinite(v)) {
		snprintf(buf, size, "-");
	} else if (unit && *unit) {
		snprintf(buf, size, "%.2f", v);
	} else if (integral(v) && v >= 0) {
		tc_fmt_grouped((uint64_t)v, buf, size);
	} else if (v >= 0 && v < 9e15) {
		double ip = floor(v);
		int frac = (int)llround((v - ip) * 100);
		if (frac == 100) {
			ip += 1;
			frac = 0;
		}
		tc_fmt_grouped((uint64_t)ip, g, sizeof(g));
		snprintf(buf, size, "%.31s.%02d", g, frac % 100);
	} else {
		snprintf(buf, size, "%.4g", v);
	}
	return buf;
}

/* A value for machines: integers exactly, others in the fewest digits that read back
 * as the same double; nothing for no value. */
const char *tc_stat_fmt_machine(double v, char *buf, size_t size)
{
	if (!isfinite(v))
		buf[0] = '\0';
	else if (integral(v))
		snprintf(buf, size, "%.0f", v);
	else
		tc_fmt_shortest(v, buf, size);
	return buf;
}

static const char *metric_human(const struct tacho_metric *m, char *buf, size_t size)
{
	char si[32];

	if (!strcmp(m->unit, "/sec"))
		snprintf(buf, size, "%s/sec", tc_fmt_si(m->value, si, sizeof(si)));
	else if (!strcmp(m->unit, "%") || !strcmp(m->unit, "% of cycles"))
		snprintf(buf, size, "%.2f%s", m->value, m->unit);
	else
		snprintf(buf, size, "%.3f %s", m->value, m->unit);
	return buf;
}

bool tc_stat_has_value(enum tacho_count_status s)
{
	return s == TACHO_COUNT_COUNTED || s == TACHO_COUNT_MULTIPLEXED ||
	       s == TACHO_COUNT_SIMULATED;
}

/* "32 KiB, 8-way, 64 B lines" */
static const char *sim_cache_human(const struct tacho_sim_cache *c, char *buf, size_t size)
{
	char b[32];

	snprintf(buf, size, "%s, %u-way, %u B lines", tc_fmt_size(c->size, b, sizeof(b)),
		 c->ways, c->line_size);
	return buf;
}

const char *tc_stat_no_value_word(enum tacho_count_status s)
{
	return s == TACHO_COUNT_NOT_SUPPORTED ? "<not supported>" : "<not counted>";
}

/* A count (no unit, whole, not negative) as a JSON integer, anything else as a
 * number, no value as null. A clock's msec and a time's seconds come from whole
 * nanoseconds: rounded back to them, so that the digits are not the scaling's noise
 * (0.102372, not 0.10237199999999999). */
void tc_stat_json_value(struct tc_json *j, const char *key, double v, const char *unit)
{
	if (isfinite(v) && unit && !strcmp(unit, "msec") && fabs(v) < 1e9)
		v = round(v * 1e6) / 1e6;
	else if (isfinite(v) && unit && !strcmp(unit, "s") && fabs(v) < 1e6)
		v = round(v * 1e9) / 1e9;
	if (!isfinite(v))
		tc_json_null(j, key);
	else if (integral(v) && v >= 0 && (!unit || !*unit))
		tc_json_uint(j, key, (uint64_t)v);
	else
		tc_json_double(j, key, v);
}

/* The rate metric of event i, if any (shown beside the event as perf does). */
static const struct tacho_metric *rate_of(const struct tacho_stat *s, size_t i)
{
	for (size_t m = 0; m < tacho_stat_nmetrics(s); m++) {
		const struct tacho_metric *mt = tacho_stat_metric(s, m);
		if (!strcmp(mt->unit, "/sec") && mt->inputs[0] == (int)i)
			return mt;
	}
	return NULL;
}

/* Every field of the struct is optional: the first version is sz alone. */
#define TC_OPTS_V1_tacho_stat_about tc_offsetofend(struct tacho_stat_about, sz)

static int about_get(const struct tacho_stat_about *in, struct about *out)
{
	int err = TC_OPTS_VALID(in, tacho_stat_about);

	memset(out, 0, sizeof(*out));
	out->target = "";
	if (err || !in)
		return err;
	if (TC_OPTS_HAS(in, tacho_stat_about, argv))
		out->argv = in->argv && in->argv[0] ? in->argv : NULL;
	if (TC_OPTS_HAS(in, tacho_stat_about, target) && in->target)
		out->target = in->target;
	if (TC_OPTS_HAS(in, tacho_stat_about, repeat))
		out->repeat = in->repeat;
	if (TC_OPTS_HAS(in, tacho_stat_about, note) && in->note && *in->note)
		out->note = in->note;
	if (TC_OPTS_HAS(in, tacho_stat_about, hot_view)) {
		if ((unsigned)in->hot_view > TACHO_SIM_VIEW_INSTRUCTION)
			return -EINVAL;
		out->hot = in->hot;
		out->hot_view = in->hot_view;
	}
	if (TC_OPTS_HAS(in, tacho_stat_about, mca))
		out->mca = in->mca;
	if (TC_OPTS_HAS(in, tacho_stat_about, perf_layout))
		out->perf_layout = in->perf_layout;
	if (TC_OPTS_HAS(in, tacho_stat_about, stopped) && in->stopped && *in->stopped)
		out->stopped = in->stopped;
	if (TC_OPTS_HAS(in, tacho_stat_about, metric_only))
		out->metric_only = in->metric_only;
	if (TC_OPTS_HAS(in, tacho_stat_about, nwarnings) && in->nwarnings) {
		if (!in->warnings)
			return -EINVAL;
		for (size_t i = 0; i < in->nwarnings; i++)
			if (!in->warnings[i])
				return -EINVAL;
		out->warnings = in->warnings;
		out->nwarnings = in->nwarnings;
	}
	return 0;
}

/* --- the table --- */

/* The simulated machine, under the title: the values are this machine's, not the
 * CPU's. res says what ran: a simulation left off (no event asked needs it) is said. */
static void table_machine(const struct tacho_sim_machine *m, const struct tacho_sim_result *res,
			  FILE *f)
{
	unsigned sims = res ? tacho_sim_result_sims(res) : TACHO_SIM_CACHES | TACHO_SIM_BRANCHES;
	const char *tool = res && tacho_sim_result_tool(res) ? tacho_sim_result_tool(res)
							     : m ? m->tool : NULL;
	char b[3][80];

	if (!m)
		return;
	fprintf(f, "  simulated by valgrind's %s, caches from %s:\n", tool, m->source);
	fprintf(f, "    I1 %s; D1 %s; LL %s\n", sim_cache_human(&m->i1, b[0], sizeof(b[0])),
		sim_cache_human(&m->d1, b[1], sizeof(b[1])),
		sim_cache_human(&m->ll, b[2], sizeof(b[2])));
	if (m->note && m->note[0])
		fprintf(f, "    (%s)\n", m->note);
	fprintf(f, "    branch predictor: %s\n", m->branch_model);
	if (!(sims & (TACHO_SIM_CACHES | TACHO_SIM_BRANCHES)))
		fprintf(f, "    (neither simulated this run: no event asked needs them)\n");
	else if (!(sims & TACHO_SIM_CACHES))
		fprintf(f, "    (the caches not simulated this run: no cache event asked)\n");
	else if (!(sims & TACHO_SIM_BRANCHES))
		fprintf(f, "    (the branch predictor not simulated this run: no branch event "
			"asked)\n");
	fprintf(f, "\n");
}

static void table_title(const struct tacho_stat *s, const struct about *a, FILE *f)
{
	unsigned reps = tacho_stat_repeats(s), runs = tacho_stat_runs(s);
	char who[512];

	if (a->argv) {
		struct tc_sb sb = TC_SB_INIT;
		for (size_t i = 0; a->argv[i]; i++) {
			if (i)
				tc_sb_addc(&sb, ' ');
			tc_sb_add_printable(&sb, a->argv[i]);   /* no escape sequence passes */
		}
		if (a->target[0])
			snprintf(who, sizeof(who), "%s while '%s' ran", a->target, sb.buf ? sb.buf : "");
		else
			snprintf(who, sizeof(who), "'%s'", sb.buf ? sb.buf : "");
		tc_sb_exit(&sb);
	} else {
		snprintf(who, sizeof(who), "%s", a->target);
	}
	if (tacho_stat_sim_machine(s))
		fprintf(f, "\n Simulated event stats%s%s", who[0] ? " for " : "", who);
	else if (who[0])
		fprintf(f, "\n Counter stats for %s", who);
	else
		fprintf(f, "\n Counter stats");
	if (a->repeat > 1 || runs > 1) {
		fprintf(f, " (");
		if (a->repeat > 1)
			fprintf(f, "%u repetition%s%s", reps, reps == 1 ? "" : "s",
				runs > 1 ? ", " : "");
		if (runs > 1)
			fprintf(f, "%u runs of the program each to fit the %s", runs,
				tc_schedule_descriptor_bound(tc_stat_schedule(s)) ?
				"descriptor limit" : "counters");
		fprintf(f, ")");
	}
	fprintf(f, ":\n\n");
	table_machine(tacho_stat_sim_machine(s), tacho_stat_sim_result(s), f);
}

/* One row per event: value, unit, name, then the statistics of the repetitions (with
 * more than one asked for) and the rate or the coverage. */
static int table_events(const struct tacho_stat *s, bool stats, FILE *f, size_t *nnotes)
{
	struct tc_table *t = tc_table_new(stats ? 9 : 4);
	char b1[64], b2[64], b3[64], b4[64], b5[64];
	int err = 0;

	if (!t)
		return -ENOMEM;
	tc_table_align_right(t, 0, true);
	if (stats) {
		for (unsigned col = 3; col < 9; col++)
			tc_table_align_right(t, col, true);
		err = tc_table_addf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", "mean", "", "event",
				    "stddev", "min", "median", "max", "spread", "");
	}
	for (size_t i = 0; i < tacho_stat_nevents(s) && !err; i++) {
		const struct tacho_stat_event *e = tacho_stat_event(s, i);
		const struct tacho_metric *rate = rate_of(s, i);
		char note[160] = "";
		const char *val;

		if (!tc_stat_has_value(e->status)) {
			val = tc_stat_no_value_word(e->status);
			(*nnotes)++;
		} else {
			val = tc_stat_fmt_human(e->value, e->unit, b1, sizeof(b1));
		}
		if (e->status == TACHO_COUNT_MULTIPLEXED)
			snprintf(note, sizeof(note), "(multiplexed, %.1f%% coverage)",
				 100.0 * e->coverage);
		else if (e->status == TACHO_COUNT_SIMULATED)
			snprintf(note, sizeof(note), "(simulated)");
		else if (rate)
			metric_human(rate, note, sizeof(note));
		if (stats && tc_stat_has_value(e->status)) {
			const struct tacho_stat_summary *st = e->stats;
			char spread[32];
			if (isfinite(st->spread_pct))
				snprintf(spread, sizeof(spread), "%.2f%%", st->spread_pct);
			else
				snprintf(spread, sizeof(spread), "-");
			err = tc_table_addf(t, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", val, e->unit,
					    e->name,
					    tc_stat_fmt_human(st->stddev, e->unit, b2, sizeof(b2)),
					    tc_stat_fmt_human(st->min, e->unit, b3, sizeof(b3)),
					    tc_stat_fmt_human(st->median, e->unit, b4, sizeof(b4)),
					    tc_stat_fmt_human(st->max, e->unit, b5, sizeof(b5)), spread,
					    note);
		} else if (stats) {
			err = tc_table_addf(t, "%s\t%s\t%s\t\t\t\t\t\t", val, e->unit, e->name);
		} else {
			err = tc_table_addf(t, "%s\t%s\t%s\t%s", val, e->unit, e->name, note);
		}
	}
	if (!err)
		tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	return err;
}

/* --- breakdowns: the unit's fields beside each value --- */

const char *const tc_stat_unit_field_name[UF_COUNT] = {
	"cpu", "socket", "die", "core", "node", "ncpus", "pid", "tid", "comm", "cgroup",
};

/* The fields of each mode, in the order of their columns; ends at UF_COUNT. */
const enum unit_field *tc_stat_unit_fields(enum tacho_stat_aggr a)
{
	static const enum unit_field none[] = { UF_COUNT },
		cpu[] = { UF_CPU, UF_SOCKET, UF_DIE, UF_CORE, UF_NODE, UF_COUNT },
		core[] = { UF_SOCKET, UF_DIE, UF_CORE, UF_NCPUS, UF_COUNT },
		die[] = { UF_SOCKET, UF_DIE, UF_NCPUS, UF_COUNT },
		socket[] = { UF_SOCKET, UF_NCPUS, UF_COUNT },
		node[] = { UF_NODE, UF_NCPUS, UF_COUNT },
		thread[] = { UF_PID, UF_TID, UF_COMM, UF_COUNT },
		cgroup[] = { UF_CGROUP, UF_NCPUS, UF_COUNT };

	switch (a) {
	case TACHO_STAT_AGGR_CPU: return cpu;
	case TACHO_STAT_AGGR_CORE: return core;
	case TACHO_STAT_AGGR_DIE: return die;
	case TACHO_STAT_AGGR_SOCKET: return socket;
	case TACHO_STAT_AGGR_NODE: return node;
	case TACHO_STAT_AGGR_THREAD: return thread;
	case TACHO_STAT_AGGR_CGROUP: return cgroup;
	default: return none;
	}
}

size_t tc_stat_unit_nfields(enum tacho_stat_aggr a)
{
	size_t n = 0;

	for (const enum unit_field *f = tc_stat_unit_fields(a); *f != UF_COUNT; f++)
		n++;
	return n;
}

/* A field as a number (-1: unknown) or, for comm and cgroup, a string. */
static long long unit_num(const struct tacho_stat_unit *u, enum unit_field f)
{
	switch (f) {
	case UF_CPU: return u->cpu;
	case UF_SOCKET: return u->socket;
	case UF_DIE: return u->die;
	case UF_CORE: return u->core;
	case UF_NODE: return u->node;
	case UF_NCPUS: return u->ncpus;
	case UF_PID: return u->pid;
	case UF_TID: return u->tid;
	default: return -1;
	}
}

static const char *unit_str(const struct tacho_stat_unit *u, enum unit_field f)
{
	if (f == UF_COMM)
		return u->comm ? u->comm : "";
	if (f == UF_CGROUP)
		return u->cgroup ? u->cgroup : "";
	return NULL;
}

/* CSV: the field, empty when unknown. */
const char *tc_stat_unit_csv(const struct tacho_stat_unit *u, enum unit_field f, char *buf,
			    size_t size)
{
	const char *str = unit_str(u, f);
	long long v;

	if (str)
		return str;
	v = unit_num(u, f);
	if (v < 0)
		buf[0] = '\0';
	else
		snprintf(buf, size, "%lld", v);
	return buf;
}

/* JSON: the field, null when unknown. */
void tc_stat_unit_json(struct tc_json *j, const struct tacho_stat_unit *u)
{
	for (const enum unit_field *f = tc_stat_unit_fields(u->aggr); *f != UF_COUNT; f++) {
		const char *str = unit_str(u, *f);
		long long v = unit_num(u, *f);

		if (str)
			tc_json_str(j, tc_stat_unit_field_name[*f], str);
		else if (v < 0)
			tc_json_null(j, tc_stat_unit_field_name[*f]);
		else
			tc_json_int(j, tc_stat_unit_field_name[*f], v);
	}
}

/* One row per unit and event: the unit's label (and the CPUs it adds up, for a core,
 * a die, a package, a node or a cgroup), value, unit, name, then the coverage or the
 * rate's absence: a unit's rate would need its own clock. */
static int table_units(const struct tacho_stat *s, FILE *f, size_t *nnotes)
{
	enum tacho_stat_aggr a = tacho_stat_aggr(s);
	bool ncpus = a != TACHO_STAT_AGGR_CPU && a != TACHO_STAT_AGGR_THREAD;
	struct tc_table *t = tc_table_new(ncpus ? 6 : 5);
	char b1[64], nc[16];
	int err = 0;

	if (!t)
		return -ENOMEM;
	tc_table_align_right(t, ncpus ? 2 : 1, true);
	if (ncpus)
		tc_table_align_right(t, 1, true);
	for (size_t u = 0; u < tacho_stat_nunits(s) && !err; u++) {
		const struct tacho_stat_unit *un = tacho_stat_unit(s, u);

		for (size_t i = 0; i < tacho_stat_nevents(s) && !err; i++) {
			const struct tacho_stat_event *e = tacho_stat_unit_event(s, u, i);
			char note[160] = "";
			const char *val;

			if (!e)
				continue;
			if (!tc_stat_has_value(e->status)) {
				val = tc_stat_no_value_word(e->status);
				(*nnotes)++;
			} else {
				val = tc_stat_fmt_human(e->value, e->unit, b1, sizeof(b1));
			}
			if (e->status == TACHO_COUNT_MULTIPLEXED)
				snprintf(note, sizeof(note), "(multiplexed, %.1f%% coverage)",
					 100.0 * e->coverage);
			snprintf(nc, sizeof(nc), "%u", un->ncpus);
			if (ncpus)
				err = tc_table_addf(t, "%s\t%s\t%s\t%s\t%s\t%s", un->label, nc, val,
						    e->unit, e->name, note);
			else
				err = tc_table_addf(t, "%s\t%s\t%s\t%s\t%s", un->label, val, e->unit,
						    e->name, note);
		}
	}
	if (!err)
		tc_table_print(t, f, 2, 2);
	tc_table_free(t);
	return err;
}

/* Why a unit's event has no value, one line each, after the table. */
static void table_unit_notes(const struct tacho_stat *s, FILE *f,
			     const struct tc_write_settings *w)
{
	char hb[1200];

	for (size_t u = 0; u < tacho_stat_nunits(s); u++) {
		const struct tacho_stat_unit *un = tacho_stat_unit(s, u);
		for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
			const struct tacho_stat_event *e = tacho_stat_unit_event(s, u, i);
			if (e && !tc_stat_has_value(e->status))
				fprintf(f, "  %s %s: %s: %s\n", un->label, e->name,
					tacho_count_status_name(e->status),
					e->why ? tc_hinted_w(w, e->why, e->hint, hb, sizeof(hb)) :
						 "no reason known");
		}
	}
}

/* The derived metrics other than the rates shown beside their events; with
 * metric_only (no event lines), the rates too. */
static int table_metrics(const struct tacho_stat *s, bool metric_only, FILE *f)
{
	struct tc_table *m = tc_table_new(3);
	size_t nm = 0;
	char b[64];
	int err = 0;

	if (!m)
		return -ENOMEM;
	tc_table_align_right(m, 1, true);
	for (size_t i = 0; i < tacho_stat_nmetrics(s) && !err; i++) {
		const struct tacho_metric *mt = tacho_stat_metric(s, i);
		if (!strcmp(mt->unit, "/sec") && !metric_only)
			continue;
		err = tc_table_addf(m, "%s\t%s\t(%s)", mt->full_name,
				    metric_human(mt, b, sizeof(b)), mt->full_expr);
		nm++;
	}
	if (nm && !err) {
		fprintf(f, "\n");
		tc_table_print(m, f, 2, 2);
	} else if (!err && metric_only) {
		/* never an empty answer: say that nothing was derived */
		fprintf(f, "\n  no metric: none has all its events counted\n");
	}
	tc_table_free(m);
	return err;
}

static const char *const view_name[] = { "function", "line", "instruction" };

/* The hottest places of a simulated session: of its first event with a simulated value.
 * 0 and *rows (free()), *n, *ev; *n 0 when there are none. */
static int hot_rows(const struct tacho_stat *s, const struct about *a,
		    struct tacho_sim_row **rows, size_t *n, const struct tacho_stat_event **ev,
		    const struct perf_event_attr **attr_out)
{
	const struct tacho_sim_result *res = tacho_stat_sim_result(s);

	*rows = NULL;
	*n = 0;
	if (!a->hot || !res)
		return 0;
	for (size_t e = 0; e < tacho_stat_nevents(s); e++) {
		const struct perf_event_attr *attr = tc_stat_event_attr(s, e);
		int err;
		if (tacho_stat_event(s, e)->status != TACHO_COUNT_SIMULATED)
			continue;
		err = tacho_sim_result_rows(res, a->hot_view, attr, rows, n, sizeof(**rows),
					    NULL);
		if (err)
			return err;
		*ev = tacho_stat_event(s, e);
		if (attr_out)
			*attr_out = attr;
		if (*n > a->hot)
			*n = a->hot;
		return 0;
	}
	return 0;
}

static int table_hot(const struct tacho_stat *s, const struct about *a, FILE *f)
{
	const struct tacho_stat_event *ev = NULL;
	struct tacho_sim_row *rows;
	struct tc_table *t;
	char b[64], where[600], addr[32];
	size_t n;
	int err = hot_rows(s, a, &rows, &n, &ev, NULL);

	if (err || !n) {
		free(rows);
		return err;
	}
	t = tc_table_new(3);
	if (!t) {
		free(rows);
		return -ENOMEM;
	}
	tc_table_align_right(t, 0, true);
	err = tc_table_addf(t, "%s\t%s\t%s", ev->name, "function", a->hot_view ==
			    TACHO_SIM_VIEW_FUNCTION ? "object" : "where");
	for (size_t i = 0; i < n && !err; i++) {
		const struct tacho_sim_row *r = &rows[i];
		addr[0] = '\0';
		if (a->hot_view == TACHO_SIM_VIEW_INSTRUCTION)
			snprintf(addr, sizeof(addr), "0x%llx ", (unsigned long long)r->address);
		if (a->hot_view == TACHO_SIM_VIEW_FUNCTION)
			snprintf(where, sizeof(where), "%s", r->object ? r->object : "???");
		else
			snprintf(where, sizeof(where), "%s%s:%u", addr, r->file ? r->file : "???",
				 r->line);
		err = tc_table_addf(t, "%s\t%s\t%s",
				    tc_stat_fmt_human((double)r->value, "", b, sizeof(b)),
				    r->function ? r->function : "???", where);
	}
	if (!err) {
		fprintf(f, "\n  hottest by %s (simulated %s, self):\n", view_name[a->hot_view],
			ev->name);
		tc_table_print(t, f, 2, 2);
	}
	tc_table_free(t);
	free(rows);
	return err;
}

void tc_stat_json_hot(struct tc_json *j, const struct tacho_stat *s, const struct about *a)
{
	const struct tacho_stat_event *ev = NULL;
	struct tacho_sim_row *rows;
	size_t n;

	if (!a->hot || !tacho_stat_sim_result(s))
		return;
	if (hot_rows(s, a, &rows, &n, &ev, NULL))
		n = 0;
	tc_json_obj_begin(j, "hot");
	tc_json_str(j, "view", view_name[a->hot_view]);
	if (ev)
		tc_json_str(j, "event", ev->name);
	else
		tc_json_null(j, "event");
	tc_json_arr_begin(j, "rows");
	for (size_t i = 0; i < n; i++) {
		tc_json_obj_begin(j, NULL);
		tc_json_str(j, "object", rows[i].object ? rows[i].object : "???");
		tc_json_str(j, "function", rows[i].function ? rows[i].function : "???");
		if (a->hot_view != TACHO_SIM_VIEW_FUNCTION) {
			tc_json_str(j, "file", rows[i].file ? rows[i].file : "???");
			tc_json_uint(j, "line", rows[i].line);
		}
		if (a->hot_view == TACHO_SIM_VIEW_INSTRUCTION)
			tc_json_uint(j, "address", rows[i].address);
		tc_json_uint(j, "value", rows[i].value);
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
	tc_json_obj_end(j);
	free(rows);
}

/* llvm-mca's prediction for the hottest block. */
static void table_mca(const struct about *a, const struct tacho_sim_machine *mach, FILE *f)
{
	const struct tacho_sim_mca_info *m = tacho_sim_mca_info(a->mca);
	char b[64];

	if (!m)
		return;
	fprintf(f, "\n  the hottest block: %s in %s at 0x%llx, run %s times (simulated):\n",
		m->function, m->object, (unsigned long long)m->address,
		tc_stat_fmt_human((double)m->executions, "", b, sizeof(b)));
	for (size_t i = 0; i < m->ninsns; i++)
		fprintf(f, "    %s\n", m->insns[i]);
	fprintf(f, "  llvm-mca -mcpu=%s (%s): IPC %.2f, %.2f cycles per iteration (block "
		"throughput), dispatch width %u\n", m->mcpu, mach ? mach->mcpu_source : "",
		m->ipc, m->block_rthroughput, m->dispatch_width);
	fprintf(f, "  resource pressure per iteration:");
	for (size_t i = 0; i < m->nresources; i++)
		if (m->resource_pressure[i] > 0)
			fprintf(f, " %s %.2f", m->resource_names[i], m->resource_pressure[i]);
	fprintf(f, "\n");
	/* llvm-mca's bottleneck analysis, its lines indented under ours */
	for (const char *l = m->bottleneck; *l;) {
		size_t n = strcspn(l, "\n");
		fprintf(f, "  %.*s\n", (int)n, l);
		l += n + (l[n] == '\n');
	}
}

void tc_stat_json_mca(struct tc_json *j, const struct about *a,
		     const struct tacho_sim_machine *mach)
{
	const struct tacho_sim_mca_info *m = tacho_sim_mca_info(a->mca);

	if (!m)
		return;
	tc_json_obj_begin(j, "mca");
	tc_json_str(j, "mcpu", m->mcpu);
	tc_json_str(j, "mcpu_source", mach ? mach->mcpu_source : "");
	tc_json_str(j, "object", m->object);
	tc_json_str(j, "function", m->function);
	tc_json_uint(j, "address", m->address);
	tc_json_uint(j, "executions", m->executions);
	tc_json_str(j, "bytes", m->bytes);
	tc_json_arr_begin(j, "instructions");
	for (size_t i = 0; i < m->ninsns; i++)
		tc_json_str(j, NULL, m->insns[i]);
	tc_json_arr_end(j);
	tc_json_double(j, "ipc", m->ipc);
	tc_json_double(j, "block_rthroughput", m->block_rthroughput);
	tc_json_uint(j, "dispatch_width", m->dispatch_width);
	tc_json_arr_begin(j, "resources");
	for (size_t i = 0; i < m->nresources; i++) {
		tc_json_obj_begin(j, NULL);
		tc_json_str(j, "name", m->resource_names[i]);
		tc_json_double(j, "pressure", m->resource_pressure[i]);
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
	tc_json_str(j, "bottleneck", m->bottleneck);
	tc_json_obj_end(j);
}

/* The regions of a simulated run: per region and event, inclusive and exclusive. */
static int table_regions(const struct tacho_stat *s, FILE *f)
{
	struct tc_table *t;
	char b1[64], b2[64], calls[32];
	int err = 0;

	if (!tacho_stat_nregions(s))
		return 0;
	t = tc_table_new(5);
	if (!t)
		return -ENOMEM;
	tc_table_align_right(t, 1, true);
	tc_table_align_right(t, 3, true);
	tc_table_align_right(t, 4, true);
	err = tc_table_addf(t, "region\tcalls\tevent\tinclusive\texclusive");
	for (size_t i = 0; i < tacho_stat_nregions(s) && !err; i++) {
		const struct tacho_stat_region *g = tacho_stat_region(s, i);
		snprintf(calls, sizeof(calls), "%llu", (unsigned long long)g->calls);
		for (size_t e = 0; e < tacho_stat_nevents(s) && !err; e++) {
			const struct tacho_stat_event *ev = tacho_stat_event(s, e);
			if (!isfinite(g->inclusive[e]))
				continue;
			err = tc_table_addf(t, "%s\t%s\t%s\t%s\t%s", g->name, calls, ev->name,
					    tc_stat_fmt_human(g->inclusive[e], ev->unit, b1, sizeof(b1)),
					    tc_stat_fmt_human(g->exclusive[e], ev->unit, b2, sizeof(b2)));
		}
	}
	if (!err) {
		fprintf(f, "\n  regions (simulated; exclusive: without the nested regions):\n");
		tc_table_print(t, f, 2, 2);
		for (size_t i = 0; i < tacho_stat_nregions(s); i++)
			if (tacho_stat_region(s, i)->unbalanced)
				fprintf(f, "  %s: %u unbalanced begin or end, not counted\n",
					tacho_stat_region(s, i)->name,
					tacho_stat_region(s, i)->unbalanced);
	}
	tc_table_free(t);
	return err;
}

static int write_table(const struct tacho_stat *s, const struct about *a, FILE *f,
		       const struct tc_write_settings *w)
{
	char hb[1200];

	unsigned reps = tacho_stat_repeats(s);
	const struct tacho_exit *ex = tacho_stat_exit_status(s);
	size_t nnotes = 0;
	char how[64];
	int err;

	table_title(s, a, f);
	if (a->metric_only) {
		/* no event lines, but what was not counted is said all the same: the
		 * metrics it feeds are missing from the table */
		err = 0;
		for (size_t i = 0; i < tacho_stat_nevents(s); i++)
			if (!tc_stat_has_value(tacho_stat_event(s, i)->status))
				nnotes++;
	} else if (tacho_stat_aggr(s) != TACHO_STAT_AGGR_GLOBAL)
		err = table_units(s, f, &nnotes);
	else
		err = table_events(s, a->repeat > 1, f, &nnotes);
	if (!err)
		err = table_metrics(s, a->metric_only, f);
	if (!err)
		err = table_regions(s, f);
	if (!err)
		err = table_hot(s, a, f);
	if (!err)
		table_mca(a, tacho_stat_sim_machine(s), f);
	if (err)
		return err;
	if (nnotes && tacho_stat_aggr(s) != TACHO_STAT_AGGR_GLOBAL) {
		fprintf(f, "\n");
		table_unit_notes(s, f, w);
	} else if (nnotes) {
		fprintf(f, "\n");
		for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
			const struct tacho_stat_event *e = tacho_stat_event(s, i);
			if (!tc_stat_has_value(e->status))
				fprintf(f, "  %s: %s: %s\n", e->name,
					tacho_count_status_name(e->status),
					e->why ? tc_hinted_w(w, e->why, e->hint, hb, sizeof(hb)) :
						 "no reason known");
		}
	}
	/* a null run (-n) has no rows above: its times follow the title */
	if (tacho_stat_nevents(s))
		fprintf(f, "\n");
	if (isfinite(tacho_stat_wall_s(s)))
		fprintf(f, "  %.6f seconds wall time%s\n", tacho_stat_wall_s(s),
			reps > 1 ? " (mean of a run)" : "");
	/* perf's lines: the program's CPU time, as getrusage gives it */
	if (isfinite(tacho_stat_user_s(s)) && !tacho_stat_sim_machine(s)) {
		fprintf(f, "  %.6f seconds user\n", tacho_stat_user_s(s));
		fprintf(f, "  %.6f seconds sys\n", tacho_stat_sys_s(s));
	}
	if (ex && (ex->signal || ex->code))
		fprintf(f, "  the program: %s\n", tacho_exit_describe(ex, how, sizeof(how)));
	if (a->repeat > 1 && reps < a->repeat)
		fprintf(f, "  stopped early: %u of %u repetitions\n", reps, a->repeat);
	else if (tacho_stat_interrupted(s) && !ex)
		fprintf(f, "  stopped %s\n", a->stopped ? a->stopped : "by a signal");
	fprintf(f, "\n");
	return tc_write_status(f);
}

int tacho_stat_write(const struct tacho_stat *s, const struct tacho_stat_about *about, FILE *f,
		     enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	struct about a;
	int err;

	if (!s || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (!err)
		err = about_get(about, &a);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		if (a.perf_layout)
			return tc_stat_write_perf_json(s, &a, f);
		return tc_stat_write_json(s, &a, f, fmt, &w);
	case TACHO_FORMAT_CSV:
		if (a.perf_layout)
			return tc_stat_write_perf_csv(s, &a, f, &w);
		return tc_stat_write_csv(s, f, &w);
	default:
		return write_table(s, &a, f, &w);
	}
}
