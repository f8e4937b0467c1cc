/* timeline-write.c - the views of a trace: the text timeline with time ticks and the
 * delta table (table, CSV, JSON), Chrome's Trace Event JSON, an SVG picture. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "timeline/timeline.h"
#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/timeline.h"

#define TL_COLUMNS 64

/* "1.234 ms" for people. */
static const char *fmt_ns(double ns, char *buf, size_t size)
{
	if (ns < 1e3)
		snprintf(buf, size, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.3f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, size, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", ns / 1e9);
	return buf;
}

static uint64_t t_first(const struct tacho_timeline *t)
{
	return t->n ? t->items[0].time : 0;
}

static uint64_t t_span(const struct tacho_timeline *t)
{
	return t->n ? t->items[t->n - 1].time - t->items[0].time : 0;
}

/* Rows of the timeline: one per thread and channel that has items there, in the order
 * threads and channels first appear. */
struct row {
	uint32_t tid, chan;
};

static int rows_of(const struct tacho_timeline *t, struct row **out, size_t *n)
{
	struct row *r = NULL;
	size_t nr = 0, ar = 0;

	for (size_t i = 0; i < t->n; i++) {
		const struct tc_tl_item *it = &t->items[i];
		size_t k;
		for (k = 0; k < nr; k++)
			if (r[k].tid == it->tid && r[k].chan == it->chan)
				break;
		if (k < nr)
			continue;
		if (nr == ar) {
			ar = ar ? ar * 2 : 16;
			struct row *nrw = realloc(r, ar * sizeof(*r));
			if (!nrw) {
				free(r);
				return -ENOMEM;
			}
			r = nrw;
		}
		r[nr].tid = it->tid;
		r[nr].chan = it->chan;
		nr++;
	}
	*out = r;
	*n = nr;
	return 0;
}

/* A thread's name: its own, else its process's (a new thread inherits the name, and
 * the kernel writes no COMM record for it). */
static const char *comm_of(const struct tacho_timeline *t, uint32_t tid)
{
	uint32_t pid = 0;

	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid) {
			if (t->threads[i].comm[0])
				return t->threads[i].comm;
			pid = t->threads[i].pid;
		}
	for (size_t i = 0; pid && i < t->nthreads; i++)
		if (t->threads[i].tid == pid && t->threads[i].comm[0])
			return t->threads[i].comm;
	return "?";
}

const char *tc_tl_comm(const struct tacho_timeline *t, uint32_t tid)
{
	return comm_of(t, tid);
}

const char *tc_tl_fmt_ns(double ns, char *buf, size_t size)
{
	return fmt_ns(ns, buf, size);
}

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case TC_TL_MARK: return "mark";
	case TC_TL_BEGIN: case TC_TL_END: return "span";
	case TC_TL_COUNTER: return "counter";
	case TC_TL_EVENT: return "event";
	default: return "?";
	}
}

#define TEXT_PAYLOADS 10   /* payloads shown per channel in the text view */

struct str_args {
	const struct tacho_timeline *t;
	const struct tc_tl_item *it;
	FILE *f;               /* the text view: ` [filename: "..."]` */
	struct tc_json *j;     /* or Chrome's args: members of "strings" */
	bool opened;           /* "strings" begun (only where there is one) */
};

/* A system call's string argument ("const char *") that a constant of a binary the
 * process had mapped holds: the string, read from the binary (exact: nothing changes
 * a constant), as the perf-script export shows it. */
static int const_arg(void *arg, const struct tc_payload_field *fld)
{
	/* the profile opens binaries as it is asked: one lookup at a time, so that the
	 * writers stay thread-safe on one trace */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct str_args *a = arg;
	char buf[4096];
	int err;

	if (!a->t->prof || !fld->is_pointer || strcmp(fld->type, "const char *"))
		return 0;
	pthread_mutex_lock(&lock);
	err = tc_profile_const_str(a->t->prof, a->it->pid, a->it->time, fld->num, buf,
				   sizeof(buf));
	pthread_mutex_unlock(&lock);
	if (err)
		return 0;
	if (a->j) {
		if (!a->opened)
			tc_json_obj_begin(a->j, "strings");
		a->opened = true;
		tc_json_str(a->j, fld->name, buf);
		return 0;
	}
	fprintf(a->f, " [%s: \"", fld->name);
	tc_fputs_printable(buf, a->f);
	fputs("\"]", a->f);
	return 0;
}

/* The first payloads of each event channel, decoded as perf script shows them; the
 * Chrome view has every one (args). */
static int text_payloads(const struct tacho_timeline *t, FILE *f)
{
	uint64_t t0 = t_first(t);
	struct tc_sb sb = TC_SB_INIT;
	bool head = false;
	char b1[32];

	tc_sb_init(&sb);
	for (size_t c = 0; c < t->nch; c++) {
		uint64_t shown = 0, more = 0;

		for (size_t i = 0; i < t->n; i++) {
			const struct tc_tl_item *it = &t->items[i];
			const void *raw;
			size_t size;
			int err;

			if (it->chan != c || tc_tl_raw(t, it, &raw, &size))
				continue;
			if (shown == TEXT_PAYLOADS) {
				more++;
				continue;
			}
			if (!head)
				fprintf(f, "\npayloads (the first %d of each event, as the tracepoint "
					"prints them):\n", TEXT_PAYLOADS);
			head = true;
			tc_sb_reset(&sb);
			err = tc_payload_print(t->payload, it->event, raw, size, &sb);
			if (err == -ENOMEM)
				goto out_nomem;
			fprintf(f, "  %12s  %u %s  [%03u]  ", fmt_ns((double)(it->time - t0), b1,
				sizeof(b1)), it->tid, comm_of(t, it->tid), it->cpu);
			tc_fputs_printable(t->ch[c].name, f);
			fputs(": ", f);
			if (!err) {
				struct str_args a = { t, it, f, NULL, false };
				tc_fputs_printable(sb.buf ? sb.buf : "", f);
				tc_payload_fields(t->payload, it->event, raw, size, const_arg, &a);
			} else {
				fprintf(f, "[payload of %zu bytes: %s]", size, err == -ENOENT ?
					"no format to decode it" : tacho_strerror(err));
			}
			fputc('\n', f);
			shown++;
		}
		if (more)
			fprintf(f, "  ... and %" PRIu64 " more of %s\n", more, t->ch[c].name);
	}
	tc_sb_exit(&sb);
	return 0;
out_nomem:
	tc_sb_exit(&sb);
	return -ENOMEM;
}

#define TEXT_STATE_ROWS 20   /* threads shown in the text view's states (most running) */

struct state_row {
	uint32_t pid, tid;
	uint64_t sum[5], runs;
};

static int state_row_cmp(const void *a, const void *b)
{
	const struct state_row *x = a, *y = b;

	if (x->sum[0] != y->sum[0])
		return x->sum[0] > y->sum[0] ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Per thread, the time in each scheduling state (from sched_switch and sched_wakeup's
 * payloads) and the number of times it ran, the threads that ran longest first. 0 and
 * *out (free it; NULL with *n 0 when the trace has no states), -ENOMEM. */
static int state_rows(const struct tacho_timeline *t, struct state_row **out, size_t *nout)
{
	static const enum tc_tl_state order[] = { TC_TL_RUNNING, TC_TL_RUNNABLE,
						  TC_TL_SLEEPING, TC_TL_BLOCKED, TC_TL_OTHER };
	struct state_row *rows;
	struct tc_tl_slice *sl;
	size_t n, nrows = 0;
	int err = tc_timeline_states(t, &sl, &n);

	*out = NULL;
	*nout = 0;
	if (err || !n)
		return err;
	rows = calloc(t->nthreads ? t->nthreads : 1, sizeof(*rows));
	if (!rows) {
		free(sl);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nthreads; i++) {
		struct state_row *r = &rows[nrows];
		bool any = false;

		memset(r, 0, sizeof(*r));
		r->tid = t->threads[i].tid;
		r->pid = t->threads[i].pid;
		for (size_t k = 0; k < n; k++) {
			if (sl[k].tid != r->tid)
				continue;
			any = true;
			for (size_t o = 0; o < 5; o++)
				if (sl[k].state == order[o])
					r->sum[o] += sl[k].end - sl[k].begin;
			r->runs += sl[k].state == TC_TL_RUNNING;
		}
		nrows += any;
	}
	free(sl);
	qsort(rows, nrows, sizeof(*rows), state_row_cmp);
	*out = rows;
	*nout = nrows;
	return 0;
}

/* The thread states in the text view: the 20 threads that ran longest (a trace of all
 * CPUs names every thread of the machine). */
static int text_states(const struct tacho_timeline *t, FILE *f)
{
	struct state_row *rows;
	struct tc_table *tb;
	size_t nrows;
	int err = state_rows(t, &rows, &nrows);

	if (err || !nrows)
		return err;
	tb = tc_table_new(7);
	if (!tb) {
		free(rows);
		return -ENOMEM;
	}
	for (unsigned c = 1; c < 7; c++)
		tc_table_align_right(tb, c, true);
	fprintf(f, "\nthread states (from sched_switch and sched_wakeup; known from each "
		"thread's first switch or wake-up):\n");
	tc_table_addf(tb, "thread\truns\trunning\trunnable\tsleeping\tblocked (D)\tother");
	for (size_t i = 0; i < nrows && i < TEXT_STATE_ROWS; i++) {
		char b[5][32];
		tc_table_addf(tb, "%u %s\t%" PRIu64 "\t%s\t%s\t%s\t%s\t%s", rows[i].tid,
			      comm_of(t, rows[i].tid), rows[i].runs,
			      fmt_ns((double)rows[i].sum[0], b[0], 32),
			      fmt_ns((double)rows[i].sum[1], b[1], 32),
			      fmt_ns((double)rows[i].sum[2], b[2], 32),
			      fmt_ns((double)rows[i].sum[3], b[3], 32),
			      fmt_ns((double)rows[i].sum[4], b[4], 32));
	}
	tc_table_print(tb, f, 2, 2);
	if (nrows > TEXT_STATE_ROWS)
		fprintf(f, "  ... and %zu more threads (--format json has them all)\n",
			nrows - TEXT_STATE_ROWS);
	tc_table_free(tb);
	free(rows);
	return 0;
}

static int write_text(const struct tacho_timeline *t, FILE *f, const struct tc_tl_delta *d,
		      size_t nd)
{
	uint64_t t0 = t_first(t), span = t_span(t);
	double col = span ? (double)(span + 1) / TL_COLUMNS : 1;
	struct row *rows = NULL;
	size_t nrows = 0;
	char b1[32], b2[32], b3[32], b4[32], b5[32];
	struct tc_table *tb;
	int err;

	err = rows_of(t, &rows, &nrows);
	if (err)
		return err;
	fprintf(f, "trace: %zu thread%s, %zu channel%s, %zu item%s over %s\n", t->nthreads,
		t->nthreads == 1 ? "" : "s", t->nch, t->nch == 1 ? "" : "s", t->n,
		t->n == 1 ? "" : "s", fmt_ns((double)span, b1, sizeof(b1)));
	if (t->notes.len)
		fprintf(f, "%s", t->notes.buf);
	if (t->n) {
		fprintf(f, "\ntimeline: one column is %s; a digit counts the items in it, * ten or "
			"more; = a span is open\n", fmt_ns(col, b1, sizeof(b1)));
		tb = tc_table_new(3);
		if (!tb) {
			free(rows);
			return -ENOMEM;
		}
		/* the ruler: a tick every 16 columns with its time */
		char ruler[TL_COLUMNS + 1], ticks[TL_COLUMNS + 32];
		memset(ruler, '-', TL_COLUMNS);
		ruler[TL_COLUMNS] = '\0';
		for (int c = 0; c < TL_COLUMNS; c += 16)
			ruler[c] = '+';
		snprintf(ticks, sizeof(ticks), "0");
		for (int c = 16; c < TL_COLUMNS; c += 16) {
			size_t len = strlen(ticks);
			char lab[32];
			fmt_ns(col * c, lab, sizeof(lab));
			while (len < (size_t)c && len + 1 < sizeof(ticks))
				ticks[len++] = ' ';
			snprintf(ticks + len, sizeof(ticks) - len, "%s", lab);
		}
		tc_table_addf(tb, "thread\tchannel\t%s", ticks);
		tc_table_addf(tb, "\t\t%s", ruler);
		for (size_t r = 0; r < nrows; r++) {
			unsigned cnt[TL_COLUMNS] = { 0 };
			bool open[TL_COLUMNS] = { false };
			char line[TL_COLUMNS + 1];
			int depth = 0;
			size_t last = 0;
			for (size_t i = 0; i < t->n; i++) {
				const struct tc_tl_item *it = &t->items[i];
				if (it->tid != rows[r].tid || it->chan != rows[r].chan)
					continue;
				size_t c = (size_t)((double)(it->time - t0) / col);
				if (c >= TL_COLUMNS)
					c = TL_COLUMNS - 1;
				for (size_t k = last; depth > 0 && k <= c; k++)
					open[k] = true;
				last = c;
				if (it->kind == TC_TL_BEGIN)
					depth++;
				else if (it->kind == TC_TL_END)
					depth = depth > 0 ? depth - 1 : 0;
				if (it->kind != TC_TL_END)
					cnt[c]++;
				else
					open[c] = true;
			}
			for (size_t k = 0; k < TL_COLUMNS; k++)
				line[k] = cnt[k] >= 10 ? '*' : cnt[k] ? (char)('0' + cnt[k]) :
					  open[k] ? '=' : ' ';
			line[TL_COLUMNS] = '\0';
			tc_table_addf(tb, "%u %s\t%s\t%s", rows[r].tid, comm_of(t, rows[r].tid),
				      t->ch[rows[r].chan].name, line);
		}
		tc_table_print(tb, f, 2, 2);
		tc_table_free(tb);
	}
	free(rows);
	fprintf(f, "\nchannels:\n");
	tb = tc_table_new(3);
	if (!tb)
		return -ENOMEM;
	tc_table_align_right(tb, 2, true);
	tc_table_addf(tb, "channel\tkind\tcount");
	for (size_t c = 0; c < t->nch; c++)
		tc_table_addf(tb, "%s\t%s\t%" PRIu64, t->ch[c].name, kind_name(t->ch[c].kind),
			      t->ch[c].count);
	tc_table_print(tb, f, 2, 2);
	tc_table_free(tb);
	err = text_payloads(t, f);
	if (!err)
		err = text_states(t, f);
	if (!err)
		err = tc_tl_text_summary(t, f, false);
	if (err)
		return err;
	fprintf(f, "\ndeltas (from each event to the next of its channel; A -> B: to the next B; "
		"same value: to the next B with the A's value):\n");
	tb = tc_table_new(7);
	if (!tb)
		return -ENOMEM;
	for (unsigned c = 1; c < 7; c++)
		tc_table_align_right(tb, c, true);
	tc_table_addf(tb, "from -> to\tcount\tmin\tmedian\tmean\tp99\tmax");
	for (size_t i = 0; i < nd; i++) {
		char name[600];
		if (d[i].from == d[i].to)
			snprintf(name, sizeof(name), "%s", t->ch[d[i].from].name);
		else
			snprintf(name, sizeof(name), "%s -> %s%s", t->ch[d[i].from].name,
				 t->ch[d[i].to].name, d[i].by_value ? ", same value" : "");
		tc_table_addf(tb, "%s\t%" PRIu64 "\t%s\t%s\t%s\t%s\t%s", name, d[i].count,
			      fmt_ns((double)d[i].min, b1, sizeof(b1)),
			      fmt_ns(d[i].median, b2, sizeof(b2)), fmt_ns(d[i].mean, b3, sizeof(b3)),
			      fmt_ns(d[i].p99, b4, sizeof(b4)),
			      fmt_ns((double)d[i].max, b5, sizeof(b5)));
	}
	tc_table_print(tb, f, 2, 2);
	tc_table_free(tb);
	return 0;
}

static void write_csv(const struct tacho_timeline *t, FILE *f, const struct tc_write_settings *w,
		      const struct tc_tl_delta *d, size_t nd)
{
	static const char *const head[] = { "from", "to", "by", "count", "min_ns", "median_ns",
					    "mean_ns", "p99_ns", "max_ns" };

	if (w->header)
		tc_csv_row(f, w, head, 9);
	for (size_t i = 0; i < nd; i++) {
		char v[6][32];
		const char *row[9] = { t->ch[d[i].from].name, t->ch[d[i].to].name,
				       d[i].by_value ? "value" : "next", v[0], v[1], v[2], v[3],
				       v[4], v[5] };
		snprintf(v[0], sizeof(v[0]), "%" PRIu64, d[i].count);
		snprintf(v[1], sizeof(v[1]), "%" PRIu64, d[i].min);
		snprintf(v[2], sizeof(v[2]), "%.1f", d[i].median);
		snprintf(v[3], sizeof(v[3]), "%.1f", d[i].mean);
		snprintf(v[4], sizeof(v[4]), "%.1f", d[i].p99);
		snprintf(v[5], sizeof(v[5]), "%" PRIu64, d[i].max);
		tc_csv_row(f, w, row, 9);
	}
}

static int write_json(const struct tacho_timeline *t, FILE *f, enum tacho_format fmt,
		      const struct tc_write_settings *w, const struct tc_tl_delta *d, size_t nd)
{
	struct tc_tl_summary sum;
	struct state_row *rows;
	struct tc_json j;
	size_t nrows;
	int err = state_rows(t, &rows, &nrows);

	if (err)
		return err;
	err = tc_tl_summary_get(t, &sum);
	if (err) {
		free(rows);
		return err;
	}
	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "items", t->n);
	tc_json_uint(&j, "span_ns", t_span(t));
	tc_json_bool(&j, "complete", !t->truncated);
	tc_json_bool(&j, "known_clock", t->clock_known);
	tc_json_obj_begin(&j, "dropped");
	tc_json_uint(&j, "ring_full", t->ring_full);
	tc_json_uint(&j, "no_ring", t->no_ring);
	tc_json_uint(&j, "no_channel", t->no_channel);
	if (t->wait_full) {
		/* --ring-full wait: none dropped for a full ring, the program slowed instead */
		tc_json_uint(&j, "waits", t->waits);
		tc_json_uint(&j, "waited_ns", t->waited_ns);
	}
	tc_json_uint(&j, "events_lost", t->lost);
	/* by channel: each CPU's ring, and those no record told; they sum to events_lost */
	tc_json_arr_begin(&j, "events_lost_by_cpu");
	for (size_t c = 0; c < t->nlost_cpu; c++) {
		if (!t->lost_cpu[c])
			continue;
		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "cpu", c);
		tc_json_uint(&j, "lost", t->lost_cpu[c]);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_uint(&j, "events_lost_no_cpu", t->lost_nocpu);
	tc_json_obj_end(&j);
	tc_json_obj_begin(&j, "damaged");
	tc_json_uint(&j, "entries", t->damaged_entries);
	tc_json_uint(&j, "rings", t->damaged_rings);
	tc_json_bool(&j, "header", t->damaged_header != 0);
	tc_json_obj_end(&j);
	tc_json_arr_begin(&j, "threads");
	for (size_t i = 0; i < t->nthreads; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "pid", t->threads[i].pid);
		tc_json_uint(&j, "tid", t->threads[i].tid);
		tc_json_str(&j, "comm", t->threads[i].comm);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "channels");
	for (size_t c = 0; c < t->nch; c++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", t->ch[c].name);
		tc_json_str(&j, "kind", kind_name(t->ch[c].kind));
		tc_json_uint(&j, "count", t->ch[c].count);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "states");
	for (size_t i = 0; i < nrows; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_uint(&j, "pid", rows[i].pid);
		tc_json_uint(&j, "tid", rows[i].tid);
		tc_json_str(&j, "comm", comm_of(t, rows[i].tid));
		tc_json_uint(&j, "runs", rows[i].runs);
		tc_json_uint(&j, "running_ns", rows[i].sum[0]);
		tc_json_uint(&j, "runnable_ns", rows[i].sum[1]);
		tc_json_uint(&j, "sleeping_ns", rows[i].sum[2]);
		tc_json_uint(&j, "blocked_ns", rows[i].sum[3]);
		tc_json_uint(&j, "other_ns", rows[i].sum[4]);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	free(rows);
	tc_tl_json_summary(t, &sum, &j);
	tc_tl_summary_exit(&sum);
	tc_json_arr_begin(&j, "deltas");
	for (size_t i = 0; i < nd; i++) {
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "from", t->ch[d[i].from].name);
		tc_json_str(&j, "to", t->ch[d[i].to].name);
		tc_json_str(&j, "by", d[i].by_value ? "value" : "next");
		tc_json_uint(&j, "count", d[i].count);
		tc_json_uint(&j, "min_ns", d[i].min);
		tc_json_double(&j, "median_ns", d[i].median);
		tc_json_double(&j, "mean_ns", d[i].mean);
		tc_json_double(&j, "p99_ns", d[i].p99);
		tc_json_uint(&j, "max_ns", d[i].max);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_str(&j, "notes", t->notes.len ? t->notes.buf : "");
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

int tacho_timeline_write(const struct tacho_timeline *t, FILE *f, enum tacho_format fmt,
			 const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	struct tc_tl_delta *d;
	size_t nd;
	int err;

	if (!t || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	err = tc_timeline_deltas(t, &d, &nd);
	if (err)
		return err;
	if (fmt == TACHO_FORMAT_TABLE)
		err = write_text(t, f, d, nd);
	else if (fmt == TACHO_FORMAT_CSV)
		write_csv(t, f, &w, d, nd);
	else
		err = write_json(t, f, fmt, &w, d, nd);
	free(d);
	return err ? err : tc_write_status(f);
}

/* --- Chrome's Trace Event Format --- */

static bool syscall_pair(const char *enter, const char *exit_name)
{
	/* "syscalls:sys_enter_X" and "syscalls:sys_exit_X" */
	const char *a = strstr(enter, "sys_enter_"), *b = strstr(exit_name, "sys_exit_");

	return a && b && a - enter == b - exit_name && !strncmp(enter, exit_name, (size_t)(a - enter)) &&
	       !strcmp(a + 10, b + 9);
}

/* A payload's fields as the keys of an args object: numbers as numbers (signed ones
 * with their sign), addresses and strings as strings. */
static int json_field(void *arg, const struct tc_payload_field *f)
{
	struct tc_json *j = arg;

	char hex[24];

	if (f->is_string) {
		tc_json_strn(j, f->name, f->str, f->len);
	} else if (f->is_pointer) {
		/* an address as perf script writes it: JSON's numbers hold 53 bits */
		snprintf(hex, sizeof(hex), "0x%" PRIx64, f->num);
		tc_json_str(j, f->name, hex);
	} else if (f->is_signed)
		tc_json_int(j, f->name, (int64_t)f->num);
	else
		tc_json_uint(j, f->name, f->num);
	return 0;
}

/* The payload of an event into the args being written; one that does not decode says
 * why under "payload". */
static void json_payload(const struct tacho_timeline *t, struct tc_json *j,
			 const struct tc_tl_item *it)
{
	const void *raw;
	size_t size;
	int err;

	if (tc_tl_raw(t, it, &raw, &size))
		return;
	err = tc_payload_fields(t->payload, it->event, raw, size, json_field, j);
	if (err) {
		tc_json_str(j, "payload", err == -ENOENT ? "no format to decode it" :
			    tacho_strerror(err));
		return;
	}
	if (t->prof) {
		struct str_args a = { t, it, NULL, j, false };
		tc_payload_fields(t->payload, it->event, raw, size, const_arg, &a);
		if (a.opened)
			tc_json_obj_end(j);
	}
}

/* The thread states as async slices (b/e), one track of them per thread: they cannot
 * share the thread's own track, whose region spans they would cross. */
static int chrome_states(const struct tacho_timeline *t, struct tc_json *j, FILE *f,
			 uint64_t t0)
{
	struct tc_tl_slice *sl;
	size_t n;
	char buf[32];
	int err = tc_timeline_states(t, &sl, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		const char *name = tc_tl_state_name(sl[i].state, sl[i].letter, buf, sizeof(buf));
		for (int edge = 0; edge < 2; edge++) {
			fputc('\n', f);
			tc_json_obj_begin(j, NULL);
			tc_json_str(j, "name", name);
			tc_json_str(j, "cat", "thread state");
			tc_json_str(j, "ph", edge ? "e" : "b");
			tc_json_double(j, "ts", (double)((edge ? sl[i].end : sl[i].begin) - t0) / 1e3);
			tc_json_uint(j, "pid", sl[i].pid);
			tc_json_uint(j, "tid", sl[i].tid);
			tc_json_uint(j, "id", sl[i].tid);
			tc_json_obj_end(j);
		}
	}
	free(sl);
	return 0;
}

static void chrome_common(struct tc_json *j, const char *name, const char *ph, uint64_t ts_ns,
			  const struct tc_tl_item *it)
{
	tc_json_str(j, "name", name);
	tc_json_str(j, "ph", ph);
	tc_json_double(j, "ts", (double)ts_ns / 1e3);
	tc_json_uint(j, "pid", it->pid);
	tc_json_uint(j, "tid", it->tid);
}

/* The pid of thread tid as the trace names it (tid itself when it does not). */
static uint32_t pid_of(const struct tacho_timeline *t, uint32_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return t->threads[i].pid;
	return tid;
}

/* Names for Perfetto's tracks: each process (its main thread's name) and thread. */
static void chrome_names(const struct tacho_timeline *t, struct tc_json *j)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct tc_tl_thread *th = &t->threads[i];
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = t->threads[k].pid == th->pid;
		for (int what = seen; what < 2; what++) {
			tc_json_obj_begin(j, NULL);
			tc_json_str(j, "name", what ? "thread_name" : "process_name");
			tc_json_str(j, "ph", "M");
			tc_json_uint(j, "pid", th->pid);
			tc_json_uint(j, "tid", what ? th->tid : th->pid);
			tc_json_obj_begin(j, "args");
			tc_json_str(j, "name", comm_of(t, what ? th->tid : th->pid));
			tc_json_obj_end(j);
			tc_json_obj_end(j);
		}
	}
}

/* An item at an end of an arrow: a complete event of no duration (X), since Perfetto
 * binds an arrow (bind_id with flow_out or flow_in) to a slice, and an instant is none. */
struct chrome_flow {
	uint32_t out, in;      /* the arrow's id + 1 leaving, arriving at the item; 0: none */
};

static void chrome_flow_bind(struct tc_json *j, const struct chrome_flow *fl)
{
	tc_json_double(j, "dur", 0);
	tc_json_uint(j, "bind_id", fl->out ? fl->out : fl->in);
	tc_json_bool(j, fl->out ? "flow_out" : "flow_in", true);
}

/* A wake-up's arrow ends on the woken thread's own track (the switch fires in the
 * context of the task that leaves the CPU): an event "switched in" there. */
static void chrome_switched_in(const struct tacho_timeline *t, struct tc_json *j, FILE *f,
			       const struct tc_tl_item *sw, uint32_t id, uint64_t t0)
{
	uint64_t next = 0;
	const void *raw;
	size_t size;

	if (tc_tl_raw(t, sw, &raw, &size) ||
	    tc_payload_num(t->payload, sw->event, raw, size, "next_pid", &next))
		return;
	fputc('\n', f);
	tc_json_obj_begin(j, NULL);
	tc_json_str(j, "name", "switched in");
	tc_json_str(j, "cat", "wakeup");
	tc_json_str(j, "ph", "X");
	tc_json_double(j, "ts", (double)(sw->time - t0) / 1e3);
	tc_json_uint(j, "pid", pid_of(t, (uint32_t)next));
	tc_json_uint(j, "tid", next);
	tc_json_double(j, "dur", 0);
	tc_json_uint(j, "bind_id", id);
	tc_json_bool(j, "flow_in", true);
	tc_json_obj_begin(j, "args");
	tc_json_uint(j, "cpu", sw->cpu);
	tc_json_uint(j, "from_tid", sw->tid);
	tc_json_obj_end(j);
	tc_json_obj_end(j);
}

int tacho_timeline_write_chrome(const struct tacho_timeline *t, FILE *f)
{
	uint64_t t0 = t_first(t);
	struct chrome_flow *fl;
	struct tc_tl_flow *flows;
	size_t nflows;
	struct tc_json j;
	bool *used;
	int err;

	if (!t || !f)
		return -EINVAL;
	err = tc_timeline_flows(t, &flows, &nflows);
	if (err)
		return err;
	used = calloc(t->n ? t->n : 1, sizeof(*used));
	fl = calloc(t->n ? t->n : 1, sizeof(*fl));
	if (!used || !fl) {
		free(used);
		free(fl);
		free(flows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nflows; i++) {
		fl[flows[i].from].out = (uint32_t)i + 1;
		fl[flows[i].to].in = (uint32_t)i + 1;
	}
	tc_json_init(&j, f, false);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_str(&j, "displayTimeUnit", "ns");
	tc_json_arr_begin(&j, "traceEvents");
	chrome_names(t, &j);
	for (size_t i = 0; i < t->n; i++) {
		const struct tc_tl_item *it = &t->items[i];
		const char *name = t->ch[it->chan].name;
		/* the end of a wake-up's arrow is on the woken thread (below) */
		bool woke = fl[i].in && flows[fl[i].in - 1].kind == TC_TL_FLOW_WAKEUP;
		bool bound = fl[i].out || (fl[i].in && !woke);

		if (used[i])
			continue;
		if (woke)
			chrome_switched_in(t, &j, f, it, fl[i].in, t0);
		fputc('\n', f);
		tc_json_obj_begin(&j, NULL);
		switch (it->kind) {
		case TC_TL_BEGIN:
			chrome_common(&j, name, "B", it->time - t0, it);
			break;
		case TC_TL_END:
			chrome_common(&j, name, "E", it->time - t0, it);
			break;
		case TC_TL_COUNTER:
			chrome_common(&j, name, "C", it->time - t0, it);
			tc_json_obj_begin(&j, "args");
			tc_json_uint(&j, "value", it->value);
			tc_json_obj_end(&j);
			break;
		case TC_TL_EVENT: {
			/* a system call's enter with the next exit of the same call on its
			 * thread: one complete event (X) */
			size_t k = i + 1;
			if (strstr(name, "sys_enter_"))
				for (; k < t->n; k++)
					if (t->items[k].tid == it->tid && !used[k] &&
					    t->items[k].kind == TC_TL_EVENT)
						break;
			if (k < t->n && strstr(name, "sys_enter_") &&
			    syscall_pair(name, t->ch[t->items[k].chan].name)) {
				used[k] = true;
				chrome_common(&j, strstr(name, "sys_enter_") + 10, "X", it->time - t0, it);
				tc_json_double(&j, "dur", (double)(t->items[k].time - it->time) / 1e3);
				tc_json_obj_begin(&j, "args");
				tc_json_str(&j, "enter", name);
				tc_json_uint(&j, "cpu", it->cpu);
				json_payload(t, &j, it);
				if (t->items[k].raw_size) {
					tc_json_obj_begin(&j, "exit");
					json_payload(t, &j, &t->items[k]);
					tc_json_obj_end(&j);
				}
				tc_json_obj_end(&j);
				break;
			}
			chrome_common(&j, name, bound ? "X" : "i", it->time - t0, it);
			if (bound)
				chrome_flow_bind(&j, &fl[i]);
			else
				tc_json_str(&j, "s", "t");
			tc_json_obj_begin(&j, "args");
			tc_json_uint(&j, "cpu", it->cpu);
			json_payload(t, &j, it);
			tc_json_obj_end(&j);
			break;
		}
		default:
			chrome_common(&j, name, bound ? "X" : "i", it->time - t0, it);
			if (bound)
				chrome_flow_bind(&j, &fl[i]);
			else
				tc_json_str(&j, "s", "t");
			tc_json_obj_begin(&j, "args");
			tc_json_uint(&j, "value", it->value);
			tc_json_obj_end(&j);
			break;
		}
		tc_json_obj_end(&j);
	}
	free(used);
	free(fl);
	free(flows);
	err = chrome_states(t, &j, f, t0);
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	int jerr = tc_json_finish(&j);
	err = err ? err : jerr;
	fputc('\n', f);
	return err ? err : tc_write_status(f);
}

/* --- SVG --- */

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '&')
			fputs("&amp;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c < 0x20)
			fputc('?', f);   /* no control characters in XML 1.0 */
		else
			fputc(c, f);
	}
}

#define SVG_LEFT 260
#define SVG_WIDTH 1000

struct row;
/* A counter's row: its level as a step line, scaled to the row's largest value. */
static void svg_counter(const struct tacho_timeline *t, FILE *f, const struct row *rw,
			double y, double scale);
#define SVG_ROW 22

static void svg_counter(const struct tacho_timeline *t, FILE *f, const struct row *rw,
			double y, double scale)
{
	uint64_t max = 0, t0 = t_first(t);
	double last_y = 0;
	bool first = true;

	for (size_t i = 0; i < t->n; i++)
		if (t->items[i].tid == rw->tid && t->items[i].chan == rw->chan &&
		    t->items[i].value > max)
			max = t->items[i].value;
	fprintf(f, "<path fill=\"none\" stroke=\"#3e999f\" d=\"");
	for (size_t i = 0; i < t->n; i++) {
		const struct tc_tl_item *it = &t->items[i];
		if (it->tid != rw->tid || it->chan != rw->chan)
			continue;
		double x = SVG_LEFT + (double)(it->time - t0) * scale;
		double ly = y + 18 - (max ? 16.0 * (double)it->value / (double)max : 0);
		if (first)
			fprintf(f, "M%.2f %.1f", x, ly);
		else
			fprintf(f, " H%.2f V%.1f", x, ly);
		first = false;
		last_y = ly;
	}
	if (!first)
		fprintf(f, " H%d V%.1f", SVG_LEFT + SVG_WIDTH, last_y);
	fprintf(f, "\"/>\n");
}

int tacho_timeline_write_svg(const struct tacho_timeline *t, FILE *f)
{
	uint64_t t0 = t_first(t), span = t_span(t);
	double scale = span ? (double)SVG_WIDTH / (double)span : 0;
	struct row *rows = NULL;
	size_t nrows = 0;
	char b[32];
	int err;

	if (!t || !f)
		return -EINVAL;
	err = rows_of(t, &rows, &nrows);
	if (err)
		return err;
	unsigned height = (unsigned)(nrows * SVG_ROW + 60);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%u\" "
		"font-family=\"monospace\" font-size=\"12\">\n", SVG_LEFT + SVG_WIDTH + 40, height);
	fprintf(f, "<title>tacho trace: %zu items over %s</title>\n", t->n,
		fmt_ns((double)span, b, sizeof(b)));
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	/* the axis: ten ticks */
	for (int k = 0; k <= 10; k++) {
		double x = SVG_LEFT + k * SVG_WIDTH / 10.0;
		fprintf(f, "<line x1=\"%.1f\" y1=\"20\" x2=\"%.1f\" y2=\"%u\" stroke=\"#ddd\"/>\n",
			x, x, height - 20);
		fprintf(f, "<text x=\"%.1f\" y=\"14\" text-anchor=\"middle\">%s</text>\n", x,
			fmt_ns((double)span * k / 10.0, b, sizeof(b)));
	}
	for (size_t r = 0; r < nrows; r++) {
		double y = 30 + (double)r * SVG_ROW;
		uint64_t open_at[64];
		int depth = 0;

		fprintf(f, "<text x=\"4\" y=\"%.1f\">%u ", y + 14, rows[r].tid);
		xml_text(f, t->ch[rows[r].chan].name);
		fprintf(f, "</text>\n");
		if (t->ch[rows[r].chan].kind == TC_TL_COUNTER) {
			svg_counter(t, f, &rows[r], y, scale);
			continue;
		}
		for (size_t i = 0; i < t->n; i++) {
			const struct tc_tl_item *it = &t->items[i];
			double x = SVG_LEFT + (double)(it->time - t0) * scale;
			if (it->tid != rows[r].tid || it->chan != rows[r].chan)
				continue;
			if (it->kind == TC_TL_BEGIN) {
				if (depth < 64)
					open_at[depth] = it->time;
				depth++;
			} else if (it->kind == TC_TL_END && depth > 0) {
				depth--;
				if (depth < 64) {
					double x0 = SVG_LEFT + (double)(open_at[depth] - t0) * scale;
					fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"16\" "
						"fill=\"#7aa6da\" fill-opacity=\"0.6\"/>\n", x0, y + 2,
						x - x0 > 0.5 ? x - x0 : 0.5);
				}
			} else {
				fprintf(f, "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
					"stroke=\"%s\"/>\n", x, y + 2, x, y + 18,
					it->kind == TC_TL_EVENT ? "#c82829" : "#4d4d4c");
			}
		}
	}
	fprintf(f, "</svg>\n");
	free(rows);
	return tc_write_status(f);
}
