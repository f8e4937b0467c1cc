/* summary-write.c - the summary of a trace in words and in JSON: each thread's system
 * calls (as `perf trace -s`, with percentiles and the errors by errno) and each thread's
 * scheduling latency (as `perf sched latency`). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "timeline/timeline.h"
#include "tacho/timeline.h"

#define TEXT_SUMMARY_THREADS 20   /* threads of the text view (most calls, longest wait) */

int tc_tl_summary_get(const struct tacho_timeline *t, struct tc_tl_summary *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = tc_timeline_syscalls(t, &s->calls);
	if (!err)
		err = tc_timeline_sched_latency(t, &s->lat, &s->nlat);
	if (err)
		tc_tl_summary_exit(s);
	return err;
}

void tc_tl_summary_exit(struct tc_tl_summary *s)
{
	if (!s)
		return;
	tc_tl_syscalls_exit(&s->calls);
	free(s->lat);
	memset(s, 0, sizeof(*s));
}

/* "ENOENT"; "errno 4000" where the C library has no name for it. */
static const char *errno_name(int err, char *buf, size_t size)
{
	const char *s = strerrorname_np(err);

	if (s)
		return s;
	snprintf(buf, size, "errno %d", err);
	return buf;
}

/* "ENOENT x10, EACCES x1" */
static void errnos_text(const struct tc_tl_syscall *r, char *out, size_t size)
{
	size_t len = 0;

	out[0] = '\0';
	for (size_t i = 0; i < r->nerrnos && len < size; i++) {
		char b[32];
		int w = snprintf(out + len, size - len, "%s%s x%" PRIu64, i ? ", " : "",
				 errno_name(r->errnos[i].err, b, sizeof(b)), r->errnos[i].count);
		if (w < 0)
			break;
		len += (size_t)w;
	}
}

static int text_calls(const struct tacho_timeline *t, const struct tc_tl_syscalls *c, FILE *f)
{
	size_t threads = 0;

	fprintf(f, "\nsystem calls (from sys_enter/sys_exit pairs, per thread; the busiest "
		"first):\n");
	for (size_t i = 0; i < c->n;) {
		uint64_t calls = 0, errors = 0;
		size_t k = i;
		struct tc_table *tb;

		while (k < c->n && c->rows[k].tid == c->rows[i].tid) {
			calls += c->rows[k].count;
			errors += c->rows[k].errors;
			k++;
		}
		if (threads++ == TEXT_SUMMARY_THREADS) {
			size_t more = 1;
			for (size_t m = i + 1; m < c->n; m++)
				more += c->rows[m].tid != c->rows[m - 1].tid;
			fprintf(f, "\n  ... and %zu more threads (--format json has them all)\n", more);
			break;
		}
		fprintf(f, "\n  %u %s (process %u): %" PRIu64 " call%s, %" PRIu64 " error%s\n",
			c->rows[i].tid, tc_tl_comm(t, c->rows[i].tid), c->rows[i].pid, calls,
			calls == 1 ? "" : "s", errors, errors == 1 ? "" : "s");
		tb = tc_table_new(10);
		if (!tb)
			return -ENOMEM;
		for (unsigned col = 1; col < 9; col++)
			tc_table_align_right(tb, col, true);
		tc_table_addf(tb, "syscall\tcalls\terrors\ttotal\tmin\tmean\tp50\tp99\tmax\terrnos");
		for (; i < k; i++) {
			const struct tc_tl_syscall *r = &c->rows[i];
			char b[6][32], errs[256];
			errnos_text(r, errs, sizeof(errs));
			tc_table_addf(tb, "%s\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\t%s\t%s\t%s\t%s\t%s",
				      r->name, r->count, r->errors,
				      tc_tl_fmt_ns((double)r->total, b[0], 32),
				      tc_tl_fmt_ns((double)r->min, b[1], 32),
				      tc_tl_fmt_ns(r->mean, b[2], 32),
				      tc_tl_fmt_ns(r->p50, b[3], 32),
				      tc_tl_fmt_ns(r->p99, b[4], 32),
				      tc_tl_fmt_ns((double)r->max, b[5], 32), errs);
		}
		tc_table_print(tb, f, 4, 2);
		tc_table_free(tb);
	}
	if (c->unpaired)
		fprintf(f, "\n  %" PRIu64 " enters or exits without their pair (a call the trace "
			"began or ended in, or one that does not return: exit_group)\n", c->unpaired);
	return 0;
}

static int text_latency(const struct tacho_timeline *t, const struct tc_tl_sched_lat *l,
			size_t n, FILE *f)
{
	uint64_t t0 = t->n ? t->items[0].time : 0;
	struct tc_table *tb = tc_table_new(6);

	if (!tb)
		return -ENOMEM;
	for (unsigned col = 1; col < 6; col++)
		tc_table_align_right(tb, col, true);
	fprintf(f, "\nscheduling latency (from a wake-up to the switch that runs the thread; "
		"the longest wait first):\n");
	tc_table_addf(tb, "thread\tprocess\twake-ups\tmean delay\tmax delay\tmax at");
	for (size_t i = 0; i < n && i < TEXT_SUMMARY_THREADS; i++) {
		char b[3][32];
		tc_table_addf(tb, "%u %s\t%u\t%" PRIu64 "\t%s\t%s\t%s", l[i].tid,
			      tc_tl_comm(t, l[i].tid), l[i].pid, l[i].count,
			      tc_tl_fmt_ns(l[i].mean, b[0], 32),
			      tc_tl_fmt_ns((double)l[i].max, b[1], 32),
			      tc_tl_fmt_ns((double)(l[i].max_at - t0), b[2], 32));
	}
	tc_table_print(tb, f, 2, 2);
	tc_table_free(tb);
	if (n > TEXT_SUMMARY_THREADS)
		fprintf(f, "  ... and %zu more threads (--format json has them all)\n",
			n - TEXT_SUMMARY_THREADS);
	return 0;
}

int tc_tl_text_summary(const struct tacho_timeline *t, FILE *f, bool only)
{
	struct tc_tl_summary s;
	int err = tc_tl_summary_get(t, &s);

	if (err)
		return err;
	if (only && !s.calls.n && !s.nlat)
		fprintf(f, "nothing to summarize: the trace has no sys_enter/sys_exit pairs "
			"(raw_syscalls:sys_enter,raw_syscalls:sys_exit) and no sched_switch with "
			"sched_wakeup\n");
	if (s.calls.n || s.calls.unpaired)
		err = text_calls(t, &s.calls, f);
	if (!err && s.nlat)
		err = text_latency(t, s.lat, s.nlat, f);
	/* the summary counts what arrived: say what did not, by ring, beside it (the text
	 * view has it in its notes, at the top) */
	if (!err && only && t->lost) {
		char by[512];
		fprintf(f, "\nevents lost by the kernel: %llu (%s): the rows above miss them\n",
			(unsigned long long)t->lost, tc_tl_lost_words(t, by, sizeof(by)));
	}
	tc_tl_summary_exit(&s);
	return err;
}

void tc_tl_json_summary(const struct tacho_timeline *t, const struct tc_tl_summary *s,
			struct tc_json *j)
{
	uint64_t t0 = t->n ? t->items[0].time : 0;

	tc_json_arr_begin(j, "syscalls");
	for (size_t i = 0; i < s->calls.n; i++) {
		const struct tc_tl_syscall *r = &s->calls.rows[i];
		tc_json_obj_begin(j, NULL);
		tc_json_uint(j, "pid", r->pid);
		tc_json_uint(j, "tid", r->tid);
		tc_json_str(j, "comm", tc_tl_comm(t, r->tid));
		tc_json_str(j, "syscall", r->name);
		tc_json_uint(j, "calls", r->count);
		tc_json_uint(j, "errors", r->errors);
		tc_json_arr_begin(j, "errnos");
		for (size_t e = 0; e < r->nerrnos; e++) {
			char b[32];
			tc_json_obj_begin(j, NULL);
			tc_json_str(j, "name", errno_name(r->errnos[e].err, b, sizeof(b)));
			tc_json_int(j, "errno", r->errnos[e].err);
			tc_json_uint(j, "count", r->errnos[e].count);
			tc_json_obj_end(j);
		}
		tc_json_arr_end(j);
		tc_json_uint(j, "total_ns", r->total);
		tc_json_uint(j, "min_ns", r->min);
		tc_json_double(j, "mean_ns", r->mean);
		tc_json_double(j, "p50_ns", r->p50);
		tc_json_double(j, "p99_ns", r->p99);
		tc_json_uint(j, "max_ns", r->max);
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
	tc_json_uint(j, "syscalls_unpaired", s->calls.unpaired);
	tc_json_arr_begin(j, "sched_latency");
	for (size_t i = 0; i < s->nlat; i++) {
		tc_json_obj_begin(j, NULL);
		tc_json_uint(j, "pid", s->lat[i].pid);
		tc_json_uint(j, "tid", s->lat[i].tid);
		tc_json_str(j, "comm", tc_tl_comm(t, s->lat[i].tid));
		tc_json_uint(j, "wakeups", s->lat[i].count);
		tc_json_double(j, "mean_ns", s->lat[i].mean);
		tc_json_uint(j, "max_ns", s->lat[i].max);
		tc_json_uint(j, "max_at_ns", s->lat[i].max_at - t0);
		tc_json_obj_end(j);
	}
	tc_json_arr_end(j);
}

int tacho_timeline_write_summary(const struct tacho_timeline *t, FILE *f)
{
	int err;

	if (!t || !f)
		return -EINVAL;
	err = tc_tl_text_summary(t, f, true);
	return err ? err : tc_write_status(f);
}
