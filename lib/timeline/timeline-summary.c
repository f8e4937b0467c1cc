/* timeline-summary.c - the summary of a trace: each thread's system calls from their
 * sys_enter/sys_exit pairs (count, errors by errno, latency), and each thread's
 * scheduling latency from a wake-up to the switch that runs it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline/timeline.h"

static const char *const syscall_names[] = {
#include "timeline/syscall-names-x86_64.h"
};

const char *tc_syscall_name(uint64_t nr)
{
#if defined(__x86_64__)
	if (nr < sizeof(syscall_names) / sizeof(syscall_names[0]))
		return syscall_names[nr];
#else
	(void)syscall_names;
	(void)nr;
#endif
	return NULL;
}

/* --- system calls --- */

static int call_cmp(const void *a, const void *b)
{
	const struct tc_tl_call *x = a, *y = b;
	int c;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->ns < y->ns ? -1 : x->ns > y->ns;
}

static int errno_cmp(const void *a, const void *b)
{
	const struct tc_tl_errno *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->err < y->err ? -1 : x->err > y->err;
}

/* Rows: the threads with the most calls first (the lower tid on a tie), and within one
 * the most total time, then by name. */
static int syscall_row_cmp(const void *a, const void *b)
{
	const struct tc_tl_syscall *x = a, *y = b;

	if (x->tid != y->tid) {
		if (x->thread_calls != y->thread_calls)
			return x->thread_calls > y->thread_calls ? -1 : 1;
		return x->tid < y->tid ? -1 : 1;
	}
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* A kernel's error return: -4095..-1 (MAX_ERRNO), as the C library reads it. */
static bool is_error(int64_t ret)
{
	return ret < 0 && ret >= -4095;
}

/* The row of the calls of one thread and system call, sorted by duration. */
static int row_of(const struct tc_tl_call *c, size_t n, struct tc_tl_syscall *r)
{
	uint64_t *ns = malloc(n * sizeof(*ns));
	int *errs = malloc(n * sizeof(*errs));
	size_t ne = 0;

	if (!ns || !errs) {
		free(ns);
		free(errs);
		return -ENOMEM;
	}
	memset(r, 0, sizeof(*r));
	r->pid = c[0].pid;
	r->tid = c[0].tid;
	snprintf(r->name, sizeof(r->name), "%s", c[0].name);
	r->count = n;
	for (size_t i = 0; i < n; i++) {
		ns[i] = c[i].ns;
		r->total += c[i].ns;
		if (is_error(c[i].ret))
			errs[ne++] = (int)-c[i].ret;
	}
	r->min = ns[0];
	r->max = ns[n - 1];
	r->mean = (double)r->total / (double)n;
	r->p50 = tc_stats_percentile_sorted_u64(ns, n, 50);
	r->p99 = tc_stats_percentile_sorted_u64(ns, n, 99);
	r->errors = ne;
	free(ns);
	if (ne) {
		qsort(errs, ne, sizeof(*errs), int_cmp);   /* runs of equal errnos */
		r->errnos = calloc(ne, sizeof(*r->errnos));
		if (!r->errnos) {
			free(errs);
			return -ENOMEM;
		}
		for (size_t i = 0; i < ne; i++) {
			if (!r->nerrnos || r->errnos[r->nerrnos - 1].err != errs[i])
				r->errnos[r->nerrnos++].err = errs[i];
			r->errnos[r->nerrnos - 1].count++;
		}
		qsort(r->errnos, r->nerrnos, sizeof(*r->errnos), errno_cmp);
	}
	free(errs);
	return 0;
}

int tc_tl_syscalls_of(struct tc_tl_call *calls, size_t n, struct tc_tl_syscalls *out)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return 0;
	qsort(calls, n, sizeof(*calls), call_cmp);
	out->rows = calloc(n, sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	for (size_t i = 0, first = 0; i < n;) {
		size_t k = i + 1;
		while (k < n && calls[k].tid == calls[i].tid && !strcmp(calls[k].name, calls[i].name))
			k++;
		err = row_of(&calls[i], k - i, &out->rows[out->n]);
		if (err) {
			tc_tl_syscalls_exit(out);
			return err;
		}
		out->n++;
		i = k;
		/* the thread's last row: each of its rows learns its total */
		if (i == n || calls[i].tid != calls[i - 1].tid) {
			uint64_t sum = 0;
			for (size_t r = first; r < out->n; r++)
				sum += out->rows[r].count;
			for (size_t r = first; r < out->n; r++)
				out->rows[r].thread_calls = sum;
			first = out->n;
		}
	}
	qsort(out->rows, out->n, sizeof(*out->rows), syscall_row_cmp);
	return 0;
}

void tc_tl_syscalls_exit(struct tc_tl_syscalls *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->rows[i].errnos);
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

/* Which system call an item enters or leaves: 1 an enter, 2 an exit, 0 neither; the
 * name into name. raw_syscalls' carry the number (id), syscalls:sys_*_X the name. */
static int syscall_edge(const struct tacho_timeline *t, const struct tc_tl_item *it, bool raw,
			char *name, size_t size, int64_t *ret)
{
	const char *ch = t->ch[it->chan].name;
	const void *p;
	size_t len;
	uint64_t v;
	int edge;

	if (it->kind != TC_TL_EVENT)
		return 0;
	if (raw) {
		if (!strcmp(ch, "raw_syscalls:sys_enter"))
			edge = 1;
		else if (!strcmp(ch, "raw_syscalls:sys_exit"))
			edge = 2;
		else
			return 0;
		if (tc_tl_raw(t, it, &p, &len) ||
		    tc_payload_num(t->payload, it->event, p, len, "id", &v))
			return 0;
		const char *s = tc_syscall_name(v);
		if (s)
			snprintf(name, size, "%s", s);
		else
			snprintf(name, size, "syscall_%lld", (long long)v);
	} else {
		if (!strncmp(ch, "syscalls:sys_enter_", 19))
			edge = 1;
		else if (!strncmp(ch, "syscalls:sys_exit_", 18))
			edge = 2;
		else
			return 0;
		snprintf(name, size, "%s", ch + (edge == 1 ? 19 : 18));
	}
	if (edge == 2) {
		/* an exit without its return value is no call */
		if (tc_tl_raw(t, it, &p, &len) ||
		    tc_payload_num(t->payload, it->event, p, len, "ret", &v))
			return 0;
		*ret = (int64_t)v;
	}
	return edge;
}

struct pending {
	char name[32];
	uint64_t time;
	bool open;
};

int tc_timeline_syscalls(const struct tacho_timeline *t, struct tc_tl_syscalls *out)
{
	struct tc_tl_call *calls = NULL;
	struct pending *pend = NULL;
	struct tc_hmap idx;
	size_t n = 0, a = 0, npend = 0;
	uint64_t unpaired = 0;
	bool raw = false;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!t->payload)
		return 0;
	/* raw_syscalls see every call: where the trace has them, the per-call tracepoints
	 * would count some calls twice */
	for (size_t c = 0; c < t->nch; c++)
		if (!strncmp(t->ch[c].name, "raw_syscalls:sys_e", 18))
			raw = true;
	tc_hmap_init(&idx);
	pend = calloc(t->nthreads ? t->nthreads : 1, sizeof(*pend));
	if (!pend) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct tc_tl_item *it = &t->items[i];
		char name[32];
		int64_t ret = 0;
		uint32_t k;
		int edge = syscall_edge(t, it, raw, name, sizeof(name), &ret);

		if (!edge)
			continue;
		if (!tc_hmap_get(&idx, it->tid, &k)) {
			/* every item's thread is among t's threads: npend stays below them */
			if (npend >= (t->nthreads ? t->nthreads : 1))
				continue;
			k = (uint32_t)npend++;
			err = tc_hmap_put(&idx, it->tid, k);
			if (err)
				break;
		}
		struct pending *p = &pend[k];
		if (edge == 1) {
			unpaired += p->open;    /* an enter whose exit never came (exit_group) */
			snprintf(p->name, sizeof(p->name), "%s", name);
			p->time = it->time;
			p->open = true;
			continue;
		}
		if (!p->open || strcmp(p->name, name)) {
			unpaired += 1 + p->open;
			p->open = false;
			continue;
		}
		p->open = false;
		if (n == a) {
			size_t na = a ? a * 2 : 1024;
			struct tc_tl_call *nc = realloc(calls, na * sizeof(*nc));
			if (!nc) {
				err = -ENOMEM;
				break;
			}
			calls = nc;
			a = na;
		}
		calls[n] = (struct tc_tl_call){ .pid = it->pid, .tid = it->tid,
						.ns = it->time - p->time, .ret = ret };
		snprintf(calls[n].name, sizeof(calls[n].name), "%s", name);
		n++;
	}
	for (size_t k = 0; k < npend; k++)
		unpaired += pend[k].open;
	if (!err)
		err = tc_tl_syscalls_of(calls, n, out);
	out->unpaired = unpaired;
out:
	tc_hmap_exit(&idx);
	free(pend);
	free(calls);
	return err;
}

/* --- scheduling latency --- */

enum lat_state { LAT_UNKNOWN, LAT_RUNNING, LAT_PREEMPTED, LAT_ASLEEP, LAT_WOKEN };

struct lat_thread {
	enum lat_state state;
	uint64_t woken;     /* LAT_WOKEN: when */
};

static int lat_row(struct tc_tl_sched_lat **rows, size_t *n, size_t *a, struct tc_hmap *idx,
		   struct lat_thread **ths, uint32_t tid, uint32_t *k)
{
	if (tc_hmap_get(idx, tid, k))
		return 0;
	if (*n == *a) {
		size_t na = *a ? *a * 2 : 64;
		struct tc_tl_sched_lat *nr = realloc(*rows, na * sizeof(*nr));
		struct lat_thread *nt;
		if (!nr)
			return -ENOMEM;
		*rows = nr;
		nt = realloc(*ths, na * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		*ths = nt;
		*a = na;
	}
	(*rows)[*n] = (struct tc_tl_sched_lat){ .tid = tid };
	(*ths)[*n] = (struct lat_thread){ .state = LAT_UNKNOWN };
	*k = (uint32_t)*n;
	(*n)++;
	return tc_hmap_put(idx, tid, *k);
}

int tc_tl_sched_latency_of(const struct tc_tl_sched_ev *ev, size_t n,
			   struct tc_tl_sched_lat **out, size_t *nout)
{
	struct tc_tl_sched_lat *rows = NULL;
	struct lat_thread *ths = NULL;
	size_t nr = 0, ar = 0;
	struct tc_hmap idx;
	uint32_t k;
	int err = 0;

	*out = NULL;
	*nout = 0;
	tc_hmap_init(&idx);
	for (size_t i = 0; i < n && !err; i++) {
		const struct tc_tl_sched_ev *e = &ev[i];

		/* tid 0 is each CPU's idle task: never woken, it has no latency */
		if (e->kind == TC_TL_SWITCH) {
			if (e->tid) {
				err = lat_row(&rows, &nr, &ar, &idx, &ths, e->tid, &k);
				if (err)
					break;
				/* prev_state 0 is R: preempted, still runnable, waiting for a CPU
				 * with no wake-up to come; so is TASK_REPORT_MAX (0x100, "R+") */
				ths[k].state = e->prev_state & 0xff ? LAT_ASLEEP : LAT_PREEMPTED;
			}
			if (!e->next)
				continue;
			err = lat_row(&rows, &nr, &ar, &idx, &ths, e->next, &k);
			if (err)
				break;
			if (ths[k].state == LAT_WOKEN) {
				uint64_t d = e->time >= ths[k].woken ? e->time - ths[k].woken : 0;
				rows[k].count++;
				rows[k].total += d;
				if (rows[k].count == 1 || d > rows[k].max) {
					rows[k].max = d;
					rows[k].max_at = e->time;
				}
			}
			ths[k].state = LAT_RUNNING;
		} else if (e->tid) {
			err = lat_row(&rows, &nr, &ar, &idx, &ths, e->tid, &k);
			if (err)
				break;
			/* a wake-up of a thread that has not left its CPU (it was about to
			 * sleep), or of one already woken, starts nothing */
			if (e->kind == TC_TL_WAKEUP_NEW || ths[k].state == LAT_ASLEEP) {
				ths[k].state = LAT_WOKEN;
				ths[k].woken = e->time;
			}
		}
	}
	tc_hmap_exit(&idx);
	free(ths);
	if (err) {
		free(rows);
		return err;
	}
	for (size_t i = 0; i < nr; i++)
		if (rows[i].count)
			rows[i].mean = (double)rows[i].total / (double)rows[i].count;
	*out = rows;
	*nout = nr;
	return 0;
}

static int lat_cmp(const void *a, const void *b)
{
	const struct tc_tl_sched_lat *x = a, *y = b;

	if (x->max != y->max)
		return x->max > y->max ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int tc_timeline_sched_latency(const struct tacho_timeline *t, struct tc_tl_sched_lat **out,
			      size_t *nout)
{
	struct tc_tl_sched_ev *ev;
	size_t n = 0, m = 0;
	int err;

	*out = NULL;
	*nout = 0;
	if (t->sched_switch == UINT32_MAX || !tc_payload_has(t->payload, t->sched_switch) ||
	    (t->sched_wakeup == UINT32_MAX && t->sched_wakeup_new == UINT32_MAX))
		return 0;
	ev = malloc((t->n ? t->n : 1) * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct tc_tl_item *it = &t->items[i];
		uint64_t a, b, s;
		const void *raw;
		size_t size;

		if (it->kind != TC_TL_EVENT || tc_tl_raw(t, it, &raw, &size))
			continue;
		/* a payload that does not decode is no event */
		if (it->event == t->sched_switch) {
			if (tc_payload_num(t->payload, it->event, raw, size, "prev_pid", &a) ||
			    tc_payload_num(t->payload, it->event, raw, size, "prev_state", &s) ||
			    tc_payload_num(t->payload, it->event, raw, size, "next_pid", &b))
				continue;
			ev[n++] = (struct tc_tl_sched_ev){ .time = it->time, .kind = TC_TL_SWITCH,
							   .tid = (uint32_t)a, .next = (uint32_t)b,
							   .prev_state = s };
		} else if (it->event == t->sched_wakeup || it->event == t->sched_wakeup_new) {
			if (tc_payload_num(t->payload, it->event, raw, size, "pid", &a))
				continue;
			ev[n++] = (struct tc_tl_sched_ev){ .time = it->time, .tid = (uint32_t)a,
							   .kind = it->event == t->sched_wakeup ?
								   TC_TL_WAKEUP : TC_TL_WAKEUP_NEW };
		}
	}
	err = tc_tl_sched_latency_of(ev, n, out, nout);
	free(ev);
	if (err)
		return err;
	/* the threads that waited, each with its process */
	for (size_t i = 0; i < *nout; i++) {
		if (!(*out)[i].count)
			continue;
		(*out)[m] = (*out)[i];
		for (size_t k = 0; k < t->nthreads; k++)
			if (t->threads[k].tid == (*out)[m].tid)
				(*out)[m].pid = t->threads[k].pid;
		m++;
	}
	*nout = m;
	if (!m) {
		free(*out);
		*out = NULL;
	} else {
		qsort(*out, m, sizeof(**out), lat_cmp);
	}
	return 0;
}
