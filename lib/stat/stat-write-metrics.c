/* stat-write-metrics.c - a stat session as a metrics exposition (the Prometheus text
 * format or OpenMetrics), with the names, labels and honesty rules of tacho serve's
 * /metrics (lib/output/metrics.c holds what both write): what tacho stat --push sends
 * to a Pushgateway (docs/stat.md, "Pushes"). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stat/stat-write.h"

/* The labels of unit u (none without a breakdown): the breakdown's fields by their
 * names (cpu; socket, die, core; node; pid, tid, comm; cgroup), the CPUs a unit adds
 * up left out (not an identity), unknown fields left out. */
static void unit_labels(FILE *out, const struct tacho_stat_unit *u)
{
	char b[32];

	if (!u)
		return;
	for (const enum unit_field *f = tc_stat_unit_fields(u->aggr); *f != UF_COUNT; f++) {
		const char *v;

		if (*f == UF_NCPUS)
			continue;
		v = tc_stat_unit_csv(u, *f, b, sizeof(b));
		if (!v[0] && *f != UF_CGROUP)
			continue;
		fprintf(out, ",%s=", tc_stat_unit_field_name[*f]);
		tc_metric_label_value(out, v);
	}
}

/* The event or a unit's share of it, at the caller's index (NULL where not counted
 * in that unit). */
static const struct tacho_stat_event *value_at(const struct tacho_stat *s, size_t u,
					       size_t e)
{
	return tacho_stat_nunits(s) ? tacho_stat_unit_event(s, u, e) : tacho_stat_event(s, e);
}

static bool same_reason(const struct tacho_stat_event *a, const struct tacho_stat_event *b)
{
	return a->status == b->status && !strcmp(a->why ? a->why : "", b->why ? b->why : "");
}

/* tacho_not_counted{event,status,reason}: how many values of event e (the total, or
 * each unit's) have no number, one sample per status and reason. */
static void not_counted(FILE *out, const struct tacho_stat *s, size_t e, size_t nrows)
{
	for (size_t i = 0; i < nrows; i++) {
		const struct tacho_stat_event *v = value_at(s, i, e);
		bool first = true;
		unsigned n = 0;

		if (!v || tc_stat_has_value(v->status))
			continue;
		for (size_t p = 0; p < i && first; p++) {
			const struct tacho_stat_event *q = value_at(s, p, e);
			first = !(q && !tc_stat_has_value(q->status) && same_reason(q, v));
		}
		if (!first)
			continue;
		for (size_t p = i; p < nrows; p++) {
			const struct tacho_stat_event *q = value_at(s, p, e);
			n += q && !tc_stat_has_value(q->status) && same_reason(q, v);
		}
		fputs("tacho_not_counted{event=", out);
		tc_metric_label_value(out, tacho_stat_event(s, e)->name);
		fputs(",status=", out);
		tc_metric_label_value(out, tacho_count_status_name(v->status));
		fputs(",reason=", out);
		tc_metric_label_value(out, v->why ? v->why : "");
		fputc('}', out);
		tc_metric_value(out, n);
	}
}

int tacho_stat_write_metrics(const struct tacho_stat *s, FILE *out,
			     enum tacho_metrics_format fmt)
{
	size_t nev, nunits, nrows;
	bool om, *done, any_missing = false;
	char name[256], other[256], help[512];

	if (!s || !out || (fmt != TACHO_METRICS_PROMETHEUS && fmt != TACHO_METRICS_OPENMETRICS))
		return -EINVAL;
	/* a simulated count is no count of this machine: under the counter's name it would
	 * say what never happened */
	if (tacho_stat_sim_machine(s))
		return -EINVAL;
	om = fmt == TACHO_METRICS_OPENMETRICS;
	nev = tacho_stat_nevents(s);
	nunits = tacho_stat_nunits(s);
	nrows = nunits ? nunits : 1;
	done = calloc(nev ? nev : 1, sizeof(*done));
	if (!done)
		return -ENOMEM;
	/* a family per distinct name, as /metrics has: events whose names make the same one
	 * share it, told apart by their event label */
	for (size_t e = 0; e < nev; e++) {
		const struct tacho_stat_event *ev = tacho_stat_event(s, e);
		const char *unit;
		double factor;

		if (done[e])
			continue;
		tc_metric_family(ev->name, ev->unit, name, sizeof(name), &unit, &factor);
		snprintf(help, sizeof(help), "Count of the perf event %s%s%s over the program's "
			 "run (the mean of the repetitions with -r).", ev->name,
			 unit && *unit ? ", in " : "", unit && *unit ? unit : "");
		tc_metric_head(out, om, name, "counter", unit, help);
		for (size_t k = e; k < nev; k++) {
			const struct tacho_stat_event *ek = tacho_stat_event(s, k);
			const char *u2;
			double f2;

			tc_metric_family(ek->name, ek->unit, other, sizeof(other), &u2, &f2);
			if (strcmp(name, other))
				continue;
			done[k] = true;
			for (size_t i = 0; i < nrows; i++) {
				const struct tacho_stat_event *v = value_at(s, i, k);

				/* no number, no sample: tacho_not_counted says why */
				if (!v || !tc_stat_has_value(v->status) || !isfinite(v->value)) {
					any_missing |= v != NULL;
					continue;
				}
				fprintf(out, "%s_total{event=", name);
				tc_metric_label_value(out, ek->name);
				unit_labels(out, nunits ? tacho_stat_unit(s, i) : NULL);
				fputc('}', out);
				tc_metric_value(out, v->value * f2);
			}
		}
	}
	free(done);
	tc_metric_head(out, om, "tacho_not_counted", "gauge", NULL,
		       "Values of an event without a number (the total, or each unit's in a "
		       "breakdown), by event, status and reason.");
	if (any_missing)
		for (size_t e = 0; e < nev; e++)
			not_counted(out, s, e, nrows);
	tc_metric_gauge(out, om, "tacho_stat_repetitions", NULL,
			"Repetitions of the program that were counted to the end.",
			tacho_stat_repeats(s));
	if (isfinite(tacho_stat_wall_s(s)))
		tc_metric_gauge(out, om, "tacho_stat_wall_seconds", "seconds",
				"Wall-clock time of one run of the program (the mean of the "
				"repetitions).", tacho_stat_wall_s(s));
	if (om)
		fputs("# EOF\n", out);
	return tc_write_status(out);
}
