/* live-write.c - the writers of a live frame: a table for people (tacho top -b), CSV
 * and JSON lines (docs/schemas.md, "live"), and the metrics exposition for Prometheus
 * (its text format 0.0.4 and OpenMetrics 1.0, docs/serve.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "live/live-int.h"
#include "output/output.h"

static const char *const csv_head[] = {
	"time", "view", "id", "pid", "name", "cpus", "event", "status", "rate", "total", "unit",
	"coverage", "explanation",
};

static bool has_value(const struct tacho_live_value *v)
{
	return v->status == TACHO_COUNT_COUNTED || v->status == TACHO_COUNT_MULTIPLEXED;
}

/* Integers exactly, others with 15 significant digits; nothing for no value. */
static const char *fmt_num(double v, char *buf, size_t size)
{
	if (!isfinite(v))
		buf[0] = '\0';
	else if (v == floor(v) && fabs(v) < 9.007199254740992e15)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.15g", v);
	return buf;
}

/* --- the table --- */

static const char *row_label(const struct tacho_live_row *r, char *buf, size_t size)
{
	switch (r->kind) {
	case TACHO_LIVE_PROCESS:
	case TACHO_LIVE_THREAD:
		snprintf(buf, size, "%lld", r->id);
		break;
	case TACHO_LIVE_CPU:
		snprintf(buf, size, "%lld", r->id);
		break;
	default:
		buf[0] = '\0';
	}
	return buf;
}

static const char *id_heading(enum tacho_live_view v)
{
	switch (v) {
	case TACHO_LIVE_PROCESS:
		return "PID";
	case TACHO_LIVE_THREAD:
		return "TID";
	case TACHO_LIVE_CPU:
		return "CPU";
	default:
		return "";
	}
}

/* A rate for people: "1.23 k/s", "12.5 msec/s", or why there is none. */
static const char *fmt_rate(const struct tacho_live_value *v, const char *unit, char *buf,
			    size_t size)
{
	char si[32];

	if (v->status == TACHO_COUNT_NOT_SUPPORTED)
		snprintf(buf, size, "<not supported>");
	else if (!has_value(v))
		snprintf(buf, size, "<not counted>");
	else if (!isfinite(v->rate))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%s%s%s/s", tc_fmt_si(v->rate, si, sizeof(si)),
			 unit && *unit ? " " : "", unit ? unit : "");
	return buf;
}

static int write_table(const struct tacho_live_frame *f, FILE *out, const struct tc_write_settings *w)
{
	const struct tacho_live_health *h = &f->health;
	unsigned ncols = 3 + (unsigned)f->nev;
	struct tc_table *t = tc_table_new(ncols);
	const char **cells = calloc(ncols, sizeof(*cells));
	char (*bufs)[64] = calloc(ncols, sizeof(*bufs));
	char hb[1200];
	int err = 0;

	if (!t || !cells || !bufs) {
		err = -ENOMEM;
		goto out;
	}
	fprintf(out, "%.2f s: %s view, %u row%s", f->time, tacho_live_view_name(f->view), h->rows,
		h->rows == 1 ? "" : "s");
	if (h->not_followed)
		fprintf(out, ", %u more not followed", h->not_followed);
	if (h->no_permission)
		fprintf(out, ", %u of other users not counted (no permission)", h->no_permission);
	if (h->no_descriptors)
		fprintf(out, ", %u not counted (file descriptor limit)", h->no_descriptors);
	if (h->ended)
		fprintf(out, ", %u ended", h->ended);
	if (h->empty)
		fprintf(out, ": %s", h->empty);
	fputc('\n', out);
	cells[0] = id_heading(f->view);
	cells[1] = "NAME";
	cells[2] = "CPU%";
	for (size_t e = 0; e < f->nev; e++)
		cells[3 + e] = f->events[e];
	tc_table_add(t, cells);
	tc_table_align_right(t, 0, true);
	tc_table_align_right(t, 2, true);
	for (size_t e = 0; e < f->nev; e++)
		tc_table_align_right(t, 3 + (unsigned)e, true);
	for (size_t i = 0; i < f->nrows; i++) {
		const struct tacho_live_row *r = &f->rows[i];

		cells[0] = row_label(r, bufs[0], sizeof(bufs[0]));
		snprintf(bufs[1], sizeof(bufs[1]), "%s%s", r->name, r->ended ? " (ended)" : "");
		cells[1] = bufs[1];
		if (isfinite(r->cpus))
			snprintf(bufs[2], sizeof(bufs[2]), "%.1f", 100.0 * r->cpus);
		else
			snprintf(bufs[2], sizeof(bufs[2]), "-");
		cells[2] = bufs[2];
		for (size_t e = 0; e < f->nev; e++)
			cells[3 + e] = fmt_rate(&r->values[e], f->units[e], bufs[3 + e],
						sizeof(bufs[3 + e]));
		if (tc_table_add(t, cells)) {
			err = -ENOMEM;
			goto out;
		}
	}
	tc_table_print(t, out, 0, 2);
	/* why an event has no value, once per event and reason */
	for (size_t e = 0; e < f->nev; e++) {
		const char *said = NULL;
		for (size_t i = 0; i < f->nrows; i++) {
			const struct tacho_live_value *v = &f->rows[i].values[e];
			if (has_value(v) || !v->why || (said && !strcmp(said, v->why)))
				continue;
			said = v->why;
			fprintf(out, "  %s: %s: %s\n", f->events[e], tacho_count_status_name(v->status),
				tc_hinted_w(w, v->why, v->hint, hb, sizeof(hb)));
		}
	}
out:
	tc_table_free(t);
	free(cells);
	free(bufs);
	return err;
}

/* --- CSV --- */

static int write_csv(const struct tacho_live_frame *f, FILE *out, const struct tc_write_settings *w)
{
	char t[32], id[32], pid[32], cpus[32], rate[40], total[40], cov[40], hb[1200];

	if (w->header)
		tc_csv_row(out, w, csv_head, ARRAY_SIZE(csv_head));
	snprintf(t, sizeof(t), "%.6f", f->time);
	for (size_t i = 0; i < f->nrows; i++) {
		const struct tacho_live_row *r = &f->rows[i];

		snprintf(id, sizeof(id), "%lld", r->id);
		if (r->pid)
			snprintf(pid, sizeof(pid), "%d", (int)r->pid);
		else
			pid[0] = '\0';
		fmt_num(r->cpus, cpus, sizeof(cpus));
		for (size_t e = 0; e < f->nev; e++) {
			const struct tacho_live_value *v = &r->values[e];
			bool val = has_value(v);
			const char *row[] = {
				t, tacho_live_view_name(r->kind), id, pid, r->name, cpus,
				f->events[e], tacho_count_status_name(v->status),
				val ? fmt_num(v->rate, rate, sizeof(rate)) : "",
				val ? fmt_num(v->total, total, sizeof(total)) : "", f->units[e],
				val ? fmt_num(v->coverage, cov, sizeof(cov)) : "",
				val || !v->why ? "" : tc_hinted_w(w, v->why, v->hint, hb, sizeof(hb)),
			};
			_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(csv_head), "a field per column");
			tc_csv_row(out, w, row, ARRAY_SIZE(row));
		}
	}
	return 0;
}

/* --- JSON --- */

static void json_num_or_null(struct tc_json *j, const char *key, double v)
{
	if (isfinite(v))
		tc_json_double(j, key, v);
	else
		tc_json_null(j, key);
}

static int write_json(const struct tacho_live_frame *f, FILE *out, enum tacho_format fmt,
		      const struct tc_write_settings *w, bool history)
{
	const struct tacho_live_health *h = &f->health;
	struct tc_json j;
	char hb[1200];

	tc_json_doc_begin(&j, out, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_double(&j, "time", f->time);
	tc_json_double(&j, "interval", f->interval);
	tc_json_double(&j, "wall", f->wall);
	tc_json_str(&j, "view", tacho_live_view_name(f->view));
	tc_json_arr_begin(&j, "events");
	for (size_t e = 0; e < f->nev; e++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", f->events[e]);
		tc_json_str(&j, "unit", f->units[e]);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "rows");
	for (size_t i = 0; i < f->nrows; i++) {
		const struct tacho_live_row *r = &f->rows[i];

		tc_json_obj_begin(&j, NULL);
		tc_json_int(&j, "id", r->id);
		if (r->pid)
			tc_json_int(&j, "pid", r->pid);
		else
			tc_json_null(&j, "pid");
		tc_json_str(&j, "name", r->name);
		json_num_or_null(&j, "cpus", r->cpus);
		tc_json_bool(&j, "ended", r->ended);
		tc_json_double(&j, "since", r->since);
		tc_json_obj_begin(&j, "values");
		for (size_t e = 0; e < f->nev; e++) {
			const struct tacho_live_value *v = &r->values[e];
			bool val = has_value(v);

			tc_json_obj_begin(&j, f->events[e]);
			tc_json_str(&j, "status", tacho_count_status_name(v->status));
			json_num_or_null(&j, "rate", val ? v->rate : NAN);
			json_num_or_null(&j, "total", val ? v->total : NAN);
			json_num_or_null(&j, "coverage", val ? v->coverage : NAN);
			tc_json_str(&j, "explanation", val || !v->why ? NULL :
				    tc_hinted_w(w, v->why, v->hint, hb, sizeof(hb)));
			tc_json_obj_end(&j);
		}
		tc_json_obj_end(&j);
		if (history) {
			tc_json_obj_begin(&j, "history");
			for (size_t e = 0; e < f->nev; e++) {
				tc_json_arr_begin(&j, f->events[e]);
				for (size_t k = 0; k < r->nhistory; k++)
					json_num_or_null(&j, NULL, r->history[e * r->nhistory + k]);
				tc_json_arr_end(&j);
			}
			tc_json_obj_end(&j);
		}
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_begin(&j, "health");
	tc_json_double(&j, "sample_s", h->sample_s);
	tc_json_uint(&j, "rows", h->rows);
	tc_json_uint(&j, "not_followed", h->not_followed);
	tc_json_uint(&j, "no_permission", h->no_permission);
	tc_json_uint(&j, "no_descriptors", h->no_descriptors);
	tc_json_uint(&j, "ended", h->ended);
	tc_json_int(&j, "fds", h->fds);
	tc_json_int(&j, "fd_limit", h->fd_limit);
	if (h->empty)
		tc_json_str(&j, "empty", h->empty);
	tc_json_obj_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

int tacho_live_frame_write(const struct tacho_live_frame *f, FILE *out, enum tacho_format fmt,
			   const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int err;

	if (!f || !out)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_TABLE:
		err = write_table(f, out, &w);
		break;
	case TACHO_FORMAT_CSV:
		err = write_csv(f, out, &w);
		break;
	default:
		err = write_json(f, out, fmt, &w, false);
		break;
	}
	return err ? err : tc_write_status(out);
}

int tacho_live_frame_write_history(const struct tacho_live_frame *f, FILE *out,
				   const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int err;

	if (!f || !out)
		return -EINVAL;
	err = tc_write_settings_get(opts, TACHO_FORMAT_JSON, &w);
	if (err)
		return err;
	err = write_json(f, out, TACHO_FORMAT_JSON, &w, true);
	return err ? err : tc_write_status(out);
}

/* --- metrics --- */

/* The family of event e (tc_metric_family). */
static void family_of(const struct tacho_live_frame *f, size_t e, char *name, size_t size,
		      const char **unit, double *factor)
{
	tc_metric_family(f->events[e], f->units[e], name, size, unit, factor);
}

static void row_labels(FILE *out, const struct tacho_live_row *r)
{
	switch (r->kind) {
	case TACHO_LIVE_CPU:
		fprintf(out, ",cpu=\"%lld\"", r->id);
		break;
	case TACHO_LIVE_PROCESS:
		fprintf(out, ",pid=\"%lld\",comm=", r->id);
		tc_metric_label_value(out, r->name);
		break;
	case TACHO_LIVE_THREAD:
		fprintf(out, ",pid=\"%d\",tid=\"%lld\",comm=", (int)r->pid, r->id);
		tc_metric_label_value(out, r->name);
		break;
	case TACHO_LIVE_CGROUP:
		fputs(",cgroup=", out);
		tc_metric_label_value(out, r->name);
		break;
	default:
		break;
	}
}

/* The options' first version (TC_OPTS_VALID): format, to where scrape_s starts. */
#define TC_OPTS_V1_tacho_metrics_opts offsetof(struct tacho_metrics_opts, scrape_s)

int tacho_live_frame_write_metrics(const struct tacho_live_frame *f, FILE *out,
				   const struct tacho_metrics_opts *opts)
{
	const struct tacho_live_health *h;
	bool om, *done;
	double scrape_s;
	unsigned long long scrapes;
	unsigned parts;
	int (*extra)(void *arg, FILE *out, bool om);
	char name[256], other[256], help[512];
	int err;

	if (!out)
		return -EINVAL;
	err = TC_OPTS_VALID(opts, tacho_metrics_opts);
	if (err)
		return err;
	om = TC_OPTS_GET(opts, tacho_metrics_opts, format, TACHO_METRICS_PROMETHEUS) ==
	     TACHO_METRICS_OPENMETRICS;
	scrape_s = TC_OPTS_GET(opts, tacho_metrics_opts, scrape_s, NAN);
	scrapes = TC_OPTS_GET(opts, tacho_metrics_opts, scrapes, 0);
	parts = TC_OPTS_GET(opts, tacho_metrics_opts, parts, 0);
	if (!parts)
		parts = TACHO_METRICS_FRAME | TACHO_METRICS_SCRAPE;
	if (!f && (parts & TACHO_METRICS_FRAME))
		return -EINVAL;
	if (!(parts & TACHO_METRICS_FRAME))
		goto scrape;
	h = &f->health;
	done = calloc(f->nev ? f->nev : 1, sizeof(*done));
	if (!done)
		return -ENOMEM;
	/* a family per distinct name: events whose names make the same one (cycles:u and
	 * cycles:k) share it, told apart by their event label */
	for (size_t e = 0; e < f->nev; e++) {
		const char *unit;
		double factor;

		if (done[e])
			continue;
		family_of(f, e, name, sizeof(name), &unit, &factor);
		snprintf(help, sizeof(help), "Count of the perf event %s%s%s since tacho began "
			 "counting the target.", f->events[e], unit && *unit ? ", in " : "",
			 unit && *unit ? unit : "");
		tc_metric_head(out, om, name, "counter", unit, help);
		for (size_t k = e; k < f->nev; k++) {
			const char *u2;
			double f2;

			family_of(f, k, other, sizeof(other), &u2, &f2);
			if (strcmp(name, other))
				continue;
			done[k] = true;
			for (size_t i = 0; i < f->nrows; i++) {
				const struct tacho_live_row *r = &f->rows[i];
				const struct tacho_live_value *v = &r->values[k];

				/* no number, no sample: tacho_not_counted says why */
				if (!has_value(v) || !isfinite(v->total))
					continue;
				fprintf(out, "%s_total{event=", name);
				tc_metric_label_value(out, f->events[k]);
				row_labels(out, r);
				fputc('}', out);
				tc_metric_value(out, v->total * f2);
			}
		}
	}
	free(done);

	tc_metric_head(out, om, "tacho_not_counted", "gauge", NULL,
		    "Rows of the frame whose value of an event has no number, by event, status "
		    "and reason.");
	for (size_t e = 0; e < f->nev; e++) {
		for (size_t i = 0; i < f->nrows; i++) {
			const struct tacho_live_value *v = &f->rows[i].values[e];
			bool first = true;
			unsigned n = 0;

			if (has_value(v))
				continue;
			/* counted once, at the first row with this status and reason */
			for (size_t p = 0; p < i && first; p++) {
				const struct tacho_live_value *q = &f->rows[p].values[e];
				if (!has_value(q) && q->status == v->status &&
				    !strcmp(q->why ? q->why : "", v->why ? v->why : ""))
					first = false;
			}
			if (!first)
				continue;
			for (size_t p = i; p < f->nrows; p++) {
				const struct tacho_live_value *q = &f->rows[p].values[e];
				n += !has_value(q) && q->status == v->status &&
				     !strcmp(q->why ? q->why : "", v->why ? v->why : "");
			}
			fputs("tacho_not_counted{event=", out);
			tc_metric_label_value(out, f->events[e]);
			fputs(",status=", out);
			tc_metric_label_value(out, tacho_count_status_name(v->status));
			fputs(",reason=", out);
			tc_metric_label_value(out, v->why ? v->why : "");
			fputc('}', out);
			tc_metric_value(out, n);
		}
	}

	tc_metric_head(out, om, "tacho_rows", "gauge", NULL, "Rows (targets) counted in the frame.");
	fputs("tacho_rows{view=", out);
	tc_metric_label_value(out, tacho_live_view_name(f->view));
	fputc('}', out);
	tc_metric_value(out, h->rows);
	tc_metric_head(out, om, "tacho_targets_left_out", "gauge", NULL,
		    "Targets not counted in the frame, by reason: beyond the row cap, other "
		    "users' processes, the file descriptor limit.");
	fputs("tacho_targets_left_out{reason=\"max_rows\"}", out);
	tc_metric_value(out, h->not_followed);
	fputs("tacho_targets_left_out{reason=\"permission\"}", out);
	tc_metric_value(out, h->no_permission);
	fputs("tacho_targets_left_out{reason=\"descriptors\"}", out);
	tc_metric_value(out, h->no_descriptors);
	tc_metric_gauge(out, om, "tacho_sample_duration_seconds", "seconds",
	      "How long the sampling pass that made the frame took.", h->sample_s);
	tc_metric_gauge(out, om, "tacho_frame_timestamp_seconds", "seconds",
	      "When the frame was taken, in seconds since the Epoch.", f->wall);
	tc_metric_gauge(out, om, "tacho_perf_descriptors", NULL, "perf_event descriptors held.",
	      (double)h->fds);
	tc_metric_gauge(out, om, "tacho_perf_descriptor_limit", NULL,
	      "perf_event descriptors tacho allows itself.", (double)h->fd_limit);
scrape:
	if (!(parts & TACHO_METRICS_SCRAPE))
		return tc_write_status(out);
	if (isfinite(scrape_s))
		tc_metric_gauge(out, om, "tacho_scrape_duration_seconds", "seconds",
		      "How long tacho took to answer the previous scrape.", scrape_s);
	tc_metric_head(out, om, "tacho_scrapes", "counter", NULL, "Scrapes answered before this one.");
	fputs("tacho_scrapes_total", out);
	tc_metric_value(out, (double)scrapes);
	extra = TC_OPTS_GET(opts, tacho_metrics_opts, extra, NULL);
	if (extra) {
		err = extra(TC_OPTS_GET(opts, tacho_metrics_opts, extra_arg, NULL), out, om);
		if (err)
			return err;
	}
	if (om)
		fputs("# EOF\n", out);
	return tc_write_status(out);
}
