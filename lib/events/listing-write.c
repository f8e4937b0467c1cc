/* listing-write.c - the writers of the event listing (what `tacho list` prints): a table
 * per source with whether each event opens here and, under it, why those that do not
 * cannot; CSV; the JSON document of docs/schemas.md. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events/listing.h"
#include "output/output.h"
#include "util/util.h"
#include "tacho/events.h"
#include "tacho/output.h"

static const char *const headings[] = {
	[TACHO_EVENT_SRC_HARDWARE] = "generic hardware events (kernel)",
	[TACHO_EVENT_SRC_CACHE] = "generic cache events (kernel)",
	[TACHO_EVENT_SRC_SOFTWARE] = "software events (kernel)",
	[TACHO_EVENT_SRC_PFM] = "CPU-specific events (libpfm4, this CPU's active PMUs)",
	[TACHO_EVENT_SRC_RAW] = "raw events",
	[TACHO_EVENT_SRC_PMU] = "other PMUs (/sys/bus/event_source/devices)",
	[TACHO_EVENT_SRC_TRACEPOINT] = "tracepoints (tracefs)",
	[TACHO_EVENT_SRC_BREAKPOINT] = "breakpoints and probes",
};

static const char *status_word(const struct tc_listing_row *r, char *buf, size_t size)
{
	if (!r->probed)
		return "";
	if (!r->err)
		return "yes";
	if (r->err_u == 0)
		return "only :u";
	if (r->err == -TACHO_ESILENT)
		return "opens, never counts";
	snprintf(buf, size, "no (%s)", tacho_err_name(r->err) ? tacho_err_name(r->err) : "?");
	return buf;
}

/* Why a probed row did not open, in one sentence. */
static const char *why_text(const struct tacho_event_listing *l, const struct tc_listing_row *r,
			    const struct tc_write_settings *w, char *buf, size_t size)
{
	if (r->why >= 0)
		return tc_hinted_w(w, l->ex[r->why].text, l->ex[r->why].hint, buf, size);
	return r->msg ? r->msg : tacho_strerror(r->err);
}

/* Notes under a group: why its events could not be opened, once per reason. */
static void write_notes(FILE *f, const struct tacho_event_listing *l, size_t from, size_t to,
			const struct tc_write_settings *w)
{
	char hb[1200];

	for (size_t e = 0; e < l->nex; e++) {
		size_t count = 0;
		for (size_t i = from; i < to; i++)
			if (l->rows[i].why == (int)e)
				count++;
		if (count)
			fprintf(f, "    %s: %s\n", l->ex[e].err == -TACHO_ESILENT ? "never counts" :
				tacho_err_name(l->ex[e].err) ? tacho_err_name(l->ex[e].err) : "error",
				tc_hinted_w(w, l->ex[e].text, l->ex[e].hint, hb, sizeof(hb)));
	}
	for (size_t i = from; i < to; i++)
		if (l->rows[i].msg)
			fprintf(f, "    %s: %s\n", l->rows[i].name, l->rows[i].msg);
}

/* Tracepoints without a filter: one line per subsystem. */
static int add_subsystem_row(struct tc_table *t, const struct tacho_event_listing *l,
			     size_t from, size_t to)
{
	size_t ok = 0, probed = 0;
	char name[300], n1[48], st[64];

	for (size_t i = from; i < to; i++) {
		probed += l->rows[i].probed;
		ok += l->rows[i].probed && !l->rows[i].err;
	}
	snprintf(name, sizeof(name), "%s:*", l->rows[from].pmu);
	snprintf(n1, sizeof(n1), "%zu tracepoint%s", to - from, to - from == 1 ? "" : "s");
	if (!probed || l->tp_rep != SIZE_MAX)
		st[0] = '\0';
	else if (ok == probed)
		snprintf(st, sizeof(st), "yes");
	else
		snprintf(st, sizeof(st), "%zu of %zu", ok, probed);
	return tc_table_add(t, (const char *const[]){ name, st, n1 });
}

/* The first sentence of a description, at most 100 characters, for the table
 * (libpfm4's descriptions run to paragraphs; the JSON has them whole). */
static const char *short_desc(const char *d, char *buf, size_t size)
{
	size_t n = strcspn(d, "\n");
	const char *stop = strstr(d, ". ");

	if (stop && (size_t)(stop - d) < n)
		n = (size_t)(stop - d);
	if (n > 100)
		snprintf(buf, size, "%.97s...", d);
	else
		snprintf(buf, size, "%.*s", (int)n, d);
	return buf;
}

/* Tracepoints were asked for but none was found: say why rather than leave the group
 * out silently. True when it wrote. */
static bool no_tracefs_note(FILE *f, const struct tacho_event_listing *l,
			    const struct tc_write_settings *w, bool any)
{
	const char *hint;

	if (!l->tp_wanted || l->pattern || l->tracefs)
		return false;
	hint = tc_hint_words(w, TACHO_HINT_MACHINE);
	fprintf(f, "%stracepoints (tracefs):\n    none: no tracefs this user can read%s%s%s\n",
		any ? "\n" : "", hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
	return true;
}

static int write_group(FILE *f, const struct tacho_event_listing *l, size_t i, size_t j,
		       const struct tc_write_settings *w)
{
	enum tacho_event_source src = l->rows[i].src;
	struct tc_table *t = tc_table_new(3);
	char label[600], st[64], desc[128];
	int err = 0;

	if (!t)
		return -ENOMEM;
	fprintf(f, "%s:\n", (unsigned)src < ARRAY_SIZE(headings) ? headings[src] : "other");
	if (src == TACHO_EVENT_SRC_TRACEPOINT && l->grouped) {
		for (size_t k = i; k < j && !err;) {
			size_t m = k;
			while (m < j && !strcmp(l->rows[m].pmu, l->rows[k].pmu))
				m++;
			err = add_subsystem_row(t, l, k, m);
			k = m;
		}
	} else {
		for (size_t k = i; k < j && !err; k++) {
			const struct tc_listing_row *r = &l->rows[k];
			if (r->aliases[0])
				snprintf(label, sizeof(label), "%s (%s)", r->name, r->aliases);
			else
				snprintf(label, sizeof(label), "%s", r->name);
			err = tc_table_add(t, (const char *const[]){ label, status_word(r, st, sizeof(st)),
					   short_desc(r->desc, desc, sizeof(desc)) });
		}
	}
	if (!err)
		tc_table_print(t, f, 4, 2);
	tc_table_free(t);
	if (err)
		return err;
	if (src == TACHO_EVENT_SRC_TRACEPOINT && l->tp_rep != SIZE_MAX) {
		const struct tc_listing_row *r = &l->rows[l->tp_rep];
		fprintf(f, "    tried one, %s: %s; the kernel asks the same of the others "
			"(ftrace's own\n    events excepted); a pattern that selects at most %d "
			"tries each\n", r->name, r->err ? "it failed" : "it opens",
			TC_LISTING_TP_PROBE_EACH);
	}
	write_notes(f, l, i, j, w);
	return 0;
}

static int write_table(FILE *f, const struct tacho_event_listing *l,
		       const struct tc_write_settings *w)
{
	size_t i = 0;
	bool any = false, tp_seen = false;
	int err;

	while (i < l->n) {
		enum tacho_event_source src = l->rows[i].src;
		size_t j = i;

		while (j < l->n && l->rows[j].src == src)
			j++;
		if (src > TACHO_EVENT_SRC_TRACEPOINT && !tp_seen)
			any |= no_tracefs_note(f, l, w, any);
		tp_seen |= src >= TACHO_EVENT_SRC_TRACEPOINT;
		if (any)
			fputc('\n', f);
		any = true;
		err = write_group(f, l, i, j, w);
		if (err)
			return err;
		i = j;
	}
	if (!tp_seen)
		any |= no_tracefs_note(f, l, w, any);
	if (!any)
		fprintf(f, "no event matches%s%s\n", l->pattern ? " " : "",
			l->pattern ? l->pattern : "");
	return 0;
}

static int write_json(FILE *f, const struct tacho_event_listing *l, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	struct tc_json j;
	char hb[1200];

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_arr_begin(&j, "events");
	for (size_t i = 0; i < l->n; i++) {
		const struct tc_listing_row *r = &l->rows[i];
		const char *a = r->aliases;

		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", r->name);
		tc_json_arr_begin(&j, "aliases");
		while (a && *a) {
			const char *comma = strchr(a, ',');
			size_t n = comma ? (size_t)(comma - a) : strlen(a);
			tc_json_strn(&j, NULL, a, n);
			a = comma ? comma + 1 : NULL;
		}
		tc_json_arr_end(&j);
		tc_json_str(&j, "source", tacho_event_source_name(r->src));
		tc_json_str(&j, "pmu", r->pmu);
		tc_json_str(&j, "description", r->desc);
		if (r->err_u <= 0)
			tc_json_bool(&j, "opens_with_u", r->err_u == 0);
		else
			tc_json_null(&j, "opens_with_u");
		if (!r->probed) {
			tc_json_null(&j, "opens");
			tc_json_null(&j, "error");
			tc_json_null(&j, "why");
		} else {
			tc_json_bool(&j, "opens", r->err == 0);
			if (r->err) {
				tc_json_str(&j, "error", tacho_err_name(r->err));
				tc_json_str(&j, "why", why_text(l, r, w, hb, sizeof(hb)));
			} else {
				tc_json_null(&j, "error");
				tc_json_null(&j, "why");
			}
		}
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	if (l->tp_rep != SIZE_MAX)
		tc_json_str(&j, "tracepoint_probed_for_all", l->rows[l->tp_rep].name);
	else
		tc_json_null(&j, "tracepoint_probed_for_all");
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* One row per event; what was not probed is empty, never "no". */
static int write_csv(FILE *f, const struct tacho_event_listing *l,
		     const struct tc_write_settings *w)
{
	static const char *const head[] = { "name", "aliases", "source", "pmu", "opens",
					    "opens_with_u", "error", "why", "description" };
	char hb[1200];

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < l->n; i++) {
		const struct tc_listing_row *r = &l->rows[i];
		const char *err = r->probed && r->err ? tacho_err_name(r->err) : NULL;
		const char *row[] = {
			r->name, r->aliases, tacho_event_source_name(r->src), r->pmu,
			!r->probed ? "" : r->err ? "no" : "yes",
			r->err_u > 0 ? "" : r->err_u == 0 ? "yes" : "no",
			r->probed && r->err ? (err ? err : "?") : "",
			r->probed && r->err ? why_text(l, r, w, hb, sizeof(hb)) : "",
			r->desc,
		};
		_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
		tc_csv_row(f, w, row, ARRAY_SIZE(row));
	}
	return 0;
}

int tacho_event_listing_write(const struct tacho_event_listing *l, FILE *f,
			      enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int err;

	if (!l || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(f, l, fmt, &w);
	case TACHO_FORMAT_CSV:
		err = write_csv(f, l, &w);
		break;
	default:
		err = write_table(f, l, &w);
		break;
	}
	return err ? err : tc_write_status(f);
}
