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

static int write_table(FILE *f, const struct tacho_check *c, size_t n,
		       const struct tacho_clock_info *k, size_t nk,
		       const struct tc_write_settings *w)
{
	struct tc_table *t = tc_table_new(4);
	char res[64], cost[128], hb[1200];
	int err = 0;

	if (!t)
		return -ENOMEM;
	fprintf(f, "what this machine lets tacho measure:\n\n");
	for (size_t i = 0; i < n && !err; i++) {
		const char *cells[4] = { tacho_check_state_name(c[i].state), c[i].title,
					 c[i].value,
					 tc_hinted_w(w, c[i].text, c[i].hint, hb, sizeof(hb)) };
		err = tc_table_add(t, cells);
	}
	if (!err)
		tc_table_print(t, f, 2, 2);
	tc_table_free(t);
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

static int write_json(FILE *f, const struct tacho_check *c, size_t n,
		      const struct tacho_clock_info *k, size_t nk, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	struct tc_json j;
	char hb[1200];

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_arr_begin(&j, "checks");
	for (size_t i = 0; i < n; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "key", c[i].key);
		tc_json_str(&j, "title", c[i].title);
		tc_json_str(&j, "state", tacho_check_state_name(c[i].state));
		tc_json_str(&j, "value", c[i].value);
		tc_json_str(&j, "text", tc_hinted_w(w, c[i].text, c[i].hint, hb, sizeof(hb)));
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
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
static void write_csv(FILE *f, const struct tacho_check *c, size_t n,
		      const struct tacho_clock_info *k, size_t nk,
		      const struct tc_write_settings *w)
{
	static const char *const head[] = { "kind", "key", "title", "state", "value", "text",
					    "resolution_ns", "read_ns", "error" };
	char res[40], cost[40], hb[1200];

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < n; i++) {
		const char *row[] = { "check", c[i].key, c[i].title,
				      tacho_check_state_name(c[i].state), c[i].value,
				      tc_hinted_w(w, c[i].text, c[i].hint, hb, sizeof(hb)),
				      "", "", "" };
		_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
		tc_csv_row(f, w, row, ARRAY_SIZE(row));
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
#define VIEW_SZ_V1 tc_offsetofend(struct tacho_machine_view, clock_sz)
#define CHECK_SZ_V1 tc_offsetofend(struct tacho_check, hint)
#define CLOCK_SZ_V1 tc_offsetofend(struct tacho_clock_info, read_ns)

static int write_doc(const struct tacho_check *checks, size_t n,
		     const struct tacho_clock_info *clocks, size_t nclocks, FILE *f,
		     enum tacho_format fmt, const struct tc_write_settings *ws)
{
	struct tc_write_settings w = *ws;
	int err = 0;

	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(f, checks, n, clocks, nclocks, fmt, &w);
	case TACHO_FORMAT_CSV:
		write_csv(f, checks, n, clocks, nclocks, &w);
		break;
	default:
		err = write_table(f, checks, n, clocks, nclocks, &w);
		break;
	}
	return err ? err : tc_write_status(f);
}

int tacho_machine_write(const struct tacho_machine_view *view, FILE *f, enum tacho_format fmt,
			const struct tacho_write_opts *opts)
{
	struct tacho_machine_view v;
	struct tacho_check *checks = NULL;
	struct tacho_clock_info *clocks = NULL;
	struct tc_write_settings w;
	int err;

	if (!view || !f || view->sz < VIEW_SZ_V1)
		return -EINVAL;
	tc_sized_get(&v, sizeof(v), view, view->sz);
	if ((v.nchecks && (!v.checks || v.check_sz < CHECK_SZ_V1)) ||
	    (v.nclocks && (!v.clocks || v.clock_sz < CLOCK_SZ_V1)))
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	/* the caller's arrays at their element sizes, in the library's structs */
	checks = calloc(v.nchecks ? v.nchecks : 1, sizeof(*checks));
	clocks = calloc(v.nclocks ? v.nclocks : 1, sizeof(*clocks));
	if (!checks || !clocks) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < v.nchecks; i++)
		tc_sized_get(&checks[i], sizeof(checks[i]), TC_CONST_ELEM(v.checks, i, v.check_sz),
			     v.check_sz);
	for (size_t i = 0; i < v.nclocks; i++)
		tc_sized_get(&clocks[i], sizeof(clocks[i]), TC_CONST_ELEM(v.clocks, i, v.clock_sz),
			     v.clock_sz);
	err = write_doc(checks, v.nchecks, clocks, v.nclocks, f, fmt, &w);
out_free:
	free(checks);
	free(clocks);
	return err;
}
