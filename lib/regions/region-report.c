/* region-report.c - the regions' report: every thread's records merged by name, then
 * written as JSON (the contract in tacho/regions.h), CSV or a table. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "regions/region-int.h"
#include "output/output.h"
#include "tsc/tsc.h"
#include "tacho/counters.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/regions.h"
#include "tacho/tsc.h"

struct rr_thread {         /* one region on one thread, for the per-thread detail */
	pid_t tid;
	size_t region;
	uint64_t calls;
	bool counted;          /* the thread's counters were open */
	struct tacho_region_value *vals;  /* [nq], in tacho_regions_report.th_vals */
};

struct tacho_regions_report {
	size_t n, nev, nq;
	struct tacho_region_stat *st;
	struct tacho_region_value *vals;   /* [n][nq]: q 0 ticks, 1 + i events */
	const struct tacho_region_value **valp;  /* [n][nq] &vals[...]: what the stats
						    point to */
	char **evnames;
	const char **evunit;   /* [nev] "ns" for the clocks, else "" (static strings) */
	enum tacho_count_status *status;
	char **why;
	char *notes;
	char *alerts;      /* the notes a person must see even when the report goes to a
			      file: a bad TACHO_EVENTS, events that could not be counted */
	struct rr_thread *th;
	size_t nth;
	/* one block each, sized before they are filled (80,000 names made 160,000 small
	 * allocations of the snapshot, most of its time in malloc and page faults) */
	char *names;                       /* the regions' names, one after the other */
	struct tacho_region_value *th_vals;  /* [nthv][nq]: the per-thread detail of
						regions of several threads (one thread's
						region shares the region's) */
	size_t nthv;
	/* how it was measured */
	double hz;
	enum tacho_tsc_source hz_source;
	int64_t *o_in, *o_nested;
	const char *read_path;
	char *spec;
	unsigned nthreads;
};

/* The software clocks count nanoseconds. */
static bool clock_event(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

void tc_region_accumulators_merge(const struct tc_region_accumulator *const *acc,
				  const uint64_t *calls, size_t n,
				  struct tacho_region_value *out)
{
	double mean = 0, m2 = 0;
	uint64_t total_calls = 0;
	bool any = false;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		const struct tc_region_accumulator *a = acc[i];
		uint64_t c = calls[i];
		if (!c)
			continue;
		out->total += a->incl;
		out->exclusive += a->excl;
		if (!any || a->min < out->min)
			out->min = (double)a->min;
		if (!any || a->max > out->max)
			out->max = (double)a->max;
		any = true;
		/* this thread's mean and sum of squared deviations from the shifted sums,
		 * then Chan et al.'s pairwise combination */
		double s1 = tc_region_acc_s1(a, c);
		double nb = (double)c, mb = (double)a->shift + s1 / nb;
		double m2b = tc_region_acc_s2(a) - s1 * s1 / nb;
		if (m2b < 0)
			m2b = 0;
		double na = (double)total_calls, nn = na + nb, delta = mb - mean;
		mean += delta * nb / nn;
		m2 += m2b + delta * delta * na * nb / nn;
		total_calls += c;
	}
	if (!total_calls) {
		out->mean = out->stddev = out->min = out->max = NAN;
		return;
	}
	out->mean = mean;
	out->stddev = total_calls > 1 ? sqrt(m2 / (double)(total_calls - 1)) : 0;
	if (out->total < 0) {
		out->total = 0;
		out->clamped = true;
	}
	if (out->exclusive < 0) {
		out->exclusive = 0;
		out->clamped = true;
	}
}

void tacho_regions_report_free(struct tacho_regions_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nev; i++) {
		free(r->evnames[i]);
		free(r->why[i]);
	}
	free(r->names);
	free(r->th_vals);
	free(r->evnames);
	free(r->evunit);
	free(r->why);
	free(r->status);
	free(r->st);
	free(r->vals);
	free(r->valp);
	free(r->th);
	free(r->notes);
	free(r->alerts);
	free(r->o_in);
	free(r->o_nested);
	free(r->spec);
	free(r);
}

void tc_region_accumulator_absorb(struct tc_region_accumulator *dst, uint64_t dcalls,
				  const struct tc_region_accumulator *src, uint64_t scalls)
{
	if (!scalls)
		return;
	if (!dcalls) {
		*dst = *src;
		return;
	}
	/* each side's mean and sum of squared deviations from its shifted sums, combined
	 * (Chan et al.), then written back as sums shifted by dst's first value */
	double na = (double)dcalls, nb = (double)scalls, n = na + nb;
	double s1a = tc_region_acc_s1(dst, dcalls), s1b = tc_region_acc_s1(src, scalls);
	double ma = (double)dst->shift + s1a / na, mb = (double)src->shift + s1b / nb;
	double m2a = tc_region_acc_s2(dst) - s1a * s1a / na;
	double m2b = tc_region_acc_s2(src) - s1b * s1b / nb;
	double delta = mb - ma, m2, s1;

	if (m2a < 0)
		m2a = 0;
	if (m2b < 0)
		m2b = 0;
	m2 = m2a + m2b + delta * delta * na * nb / n;
	dst->incl += src->incl;
	dst->excl += src->excl;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	/* s1 follows from the sums (incl and calls, dst's shift kept) */
	s1 = tc_region_acc_s1(dst, dcalls + scalls);
	dst->s2 = m2 + s1 * s1 / n;
	dst->s2i = 0;
}

/* One region of one thread alive, or of the threads that ended (tid 0): where its
 * figures are. They are copied out of the live state (snap_record) only when its
 * region is merged, into a scratch block the size of the largest region: a copy of
 * every record's accumulators up front made the snapshot of 80,000 names with four
 * events touch 30 MB more of fresh memory, and each new page costs a fault. */
struct rr_item {
	const char *name;
	pid_t tid;
	unsigned threads;
	bool counted;                      /* a thread alive whose counters were open */
	uint64_t calls;                    /* the snapshot's, once copied */
	struct tc_region_thread *t;        /* a thread alive's, with rec */
	const struct tc_region_record *rec;
	const struct tc_region_retired *rt;  /* or the threads that ended */
	uint64_t *qcalls;                  /* [nq] calls each quantity covers (scratch) */
	struct tc_region_accumulator *q;   /* [nq] (scratch) */
};

static int cmp_item(const void *a, const void *b)
{
	const struct rr_item *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void acc_copy(struct tc_region_accumulator *d, const struct tc_region_accumulator *a)
{
	d->incl = TC_LOAD_ACQUIRE(a->incl);
	d->excl = TC_LOAD_ACQUIRE(a->excl);
	d->min = TC_LOAD_ACQUIRE(a->min);
	d->max = TC_LOAD_ACQUIRE(a->max);
	d->shift = TC_LOAD_ACQUIRE(a->shift);
	d->s2 = TC_LOAD_ACQUIRE(a->s2);
	d->s2i = TC_LOAD_ACQUIRE(a->s2i);
}

/* Copies record rec of thread t, which its owner may be updating right now: the
 * seqlock's read side retries until the copy saw no end() in between. With the lock
 * (the record cannot move or go). */
static void snap_record(struct tc_region_thread *t, const struct tc_region_record *rec,
			size_t nq, struct rr_item *it)
{
	for (;;) {
		unsigned s0 = TC_LOAD_ACQUIRE(t->seq);

		if (s0 & 1) {
			sched_yield();   /* the owner is inside end(): a few stores */
			continue;
		}
		/* acquire loads: the second read of seq cannot move before them */
		it->calls = TC_LOAD_ACQUIRE(rec->calls);
		for (size_t q = 0; q < nq; q++)
			acc_copy(&it->q[q], &rec->q[q]);
		if (TC_READ_ONCE(t->seq) == s0)
			break;
	}
	/* a thread without its counters has no event figures */
	for (size_t q = 0; q < nq; q++)
		it->qcalls[q] = q < t->nq_read ? it->calls : 0;
}

static double to_ns(double ticks, double hz)
{
	return hz > 0 ? ticks * 1e9 / hz : NAN;
}

/* The report's arrays of quantities, and how it was measured. */
static int build_setup(struct tacho_regions_report *r, size_t nq)
{
	r->nq = nq;
	r->nev = nq - 1;
	r->nthreads = tc_regions.nthreads;
	r->evnames = calloc(nq, sizeof(*r->evnames));
	r->evunit = calloc(nq, sizeof(*r->evunit));
	r->why = calloc(nq, sizeof(*r->why));
	r->status = calloc(nq, sizeof(*r->status));
	r->o_in = calloc(nq, sizeof(*r->o_in));
	r->o_nested = calloc(nq, sizeof(*r->o_nested));
	if (!r->evnames || !r->evunit || !r->why || !r->status || !r->o_in || !r->o_nested)
		return -ENOMEM;
	r->spec = tc_strdup(tc_regions.spec);
	const struct tacho_tsc_info *ti = tc_tsc_info();
	r->hz = ti->hz;
	r->hz_source = ti->source;
	r->read_path = tc_regions.read_path ? tc_regions.read_path : "none";
	if (tc_regions.ready) {
		memcpy(r->o_in, tc_regions.o_in, nq * sizeof(int64_t));
		memcpy(r->o_nested, tc_regions.o_nested, nq * sizeof(int64_t));
	}
	return 0;
}

/* Event i's name, unit and status, and why it has no value (in the notes too);
 * whether it was multiplexed (*muxp). */
static int build_event(struct tacho_regions_report *r, size_t i, struct tc_sb *notes,
		       bool *muxp)
{
	bool mux = false, ran = false;

	r->evnames[i] = tc_strdup(tc_regions.ev.names[i]);
	if (!r->evnames[i])
		return -ENOMEM;
	r->evunit[i] = clock_event(&tc_regions.ev.attrs[i]) ? "ns" : "";
	mux = tc_regions.retired_multiplexed;
	ran = tc_regions.retired_ran;
	for (struct tc_region_thread *t = tc_regions.threads; t; t = t->next) {
		mux |= !t->set_err && tc_measure_set_multiplexed(&t->m);
		ran |= !t->set_err && tc_measure_set_ran(&t->m);
	}
	*muxp = mux;
	if (tc_regions.ev_opened[i + 1] && !ran) {
		/* opened, but the kernel never put the group on the counters: its
		 * zeros would be lies */
		r->status[i] = TACHO_COUNT_NOT_COUNTED;
		r->why[i] = tc_strdup("opened, but never on a counter while regions "
				      "ran (more hardware events than the PMU counts at "
				      "once? try fewer events)");
		tc_sb_addf(notes, "event '%s' was not counted: %s\n", r->evnames[i],
			   r->why[i] ? r->why[i] : "");
	} else if (tc_regions.ev_opened[i + 1]) {
		r->status[i] = mux ? TACHO_COUNT_MULTIPLEXED : TACHO_COUNT_COUNTED;
	} else if (tc_regions.ev_err[i + 1]) {
		const char *why = tc_regions.ev_why[i + 1];
		/* a source that opens but never counts here was not counted; one
		 * that did not open is not supported */
		r->status[i] = tc_regions.ev_err[i + 1] == -TACHO_ESILENT
				       ? TACHO_COUNT_NOT_COUNTED
				       : TACHO_COUNT_NOT_SUPPORTED;
		r->why[i] = tc_strdup(why ? why : tacho_strerror(tc_regions.ev_err[i + 1]));
		tc_sb_addf(notes, "event '%s' %s: %s\n", r->evnames[i],
			   r->status[i] == TACHO_COUNT_NOT_COUNTED ? "was not counted"
								  : "could not be counted",
			   r->why[i] ? r->why[i] : "");
	} else {
		r->status[i] = TACHO_COUNT_NOT_COUNTED;
	}
	return 0;
}

/* The notes on the calls that went wrong, of the threads that ended and of each
 * thread alive; how many items there may be (a region of a thread alive, or of the
 * threads that ended). */
static size_t build_thread_notes(struct tc_sb *notes)
{
	size_t nitems = tc_regions.nretired;

	if (tc_regions.retired_unbalanced)
		tc_sb_addf(notes, "threads that ended: %lu region end(s) that matched no open "
			   "region were ignored\n", tc_regions.retired_unbalanced);
	if (tc_regions.retired_errors)
		tc_sb_addf(notes, "threads that ended: %lu region call(s) failed (nesting "
			   "deeper than %d, or a counter read failed)\n", tc_regions.retired_errors,
			   TC_REGION_MAXDEPTH);
	for (struct tc_region_thread *t = tc_regions.threads; t; t = t->next) {
		unsigned long unbalanced = TC_READ_ONCE(t->unbalanced);
		unsigned long errors = TC_READ_ONCE(t->errors);
		unsigned depth = TC_READ_ONCE(t->depth);

		nitems += t->nrec;
		if (unbalanced)
			tc_sb_addf(notes, "thread %d: %lu region end(s) that matched no open "
				   "region were ignored\n", (int)t->tid, unbalanced);
		if (errors)
			tc_sb_addf(notes, "thread %d: %lu region call(s) failed (nesting deeper "
				   "than %d, or a counter read failed)\n", (int)t->tid, errors,
				   TC_REGION_MAXDEPTH);
		if (depth)
			tc_sb_addf(notes, "thread %d: %u region(s) still open at the report "
				   "(not counted)\n", (int)t->tid, depth);
	}
	return nitems;
}

/* The items with calls: the threads that ended, then each record of the threads
 * alive; how many. Their figures wait for load_item. */
static size_t build_items(size_t nq, struct rr_item *items)
{
	size_t nitems = 0;

	for (size_t i = 0; i < tc_regions.nretired; i++) {
		const struct tc_region_retired *rt = tc_regions.retired[i];

		if (rt->calls)
			items[nitems++] = (struct rr_item){ .name = rt->name,
							    .threads = rt->threads,
							    .calls = rt->calls, .rt = rt };
	}
	for (struct tc_region_thread *t = tc_regions.threads; t; t = t->next) {
		for (size_t i = 0; i < t->nrec; i++) {
			const struct tc_region_record *rec = t->recs[i];

			/* calls only grow while the lock is held (a reset takes it): one
			 * seen here is still there when load_item copies the record */
			if (TC_LOAD_ACQUIRE(rec->calls))
				items[nitems++] = (struct rr_item){
					.name = rec->name, .tid = t->tid, .threads = 1,
					.counted = t->nq_read == nq, .t = t, .rec = rec };
		}
	}
	return nitems;
}

/* Item it's figures into qcalls and q ([nq] each). */
static void load_item(struct rr_item *it, size_t nq, uint64_t *qcalls,
		      struct tc_region_accumulator *q)
{
	it->qcalls = qcalls;
	it->q = q;
	if (it->rt) {
		for (size_t k = 0; k < nq; k++) {
			qcalls[k] = it->rt->q[k].calls;
			q[k] = it->rt->q[k].a;
		}
		return;
	}
	snap_record(it->t, it->rec, nq, it);
}

/* The next region, of items [i, j) (one name, sorted by thread): its figures merged
 * over the threads, and the detail of each thread alive. accs and calls: room for
 * j - i. */
static void build_region(struct tacho_regions_report *r, struct rr_item *items,
			 size_t i, size_t j, const struct tc_region_accumulator **accs,
			 uint64_t *calls, uint64_t *qcalls, struct tc_region_accumulator *qacc,
			 char **namep, struct tc_sb *notes)
{
	size_t nq = r->nq, len = strlen(items[i].name) + 1;
	struct tacho_region_stat *st = &r->st[r->n];
	struct tacho_region_value *v = &r->vals[r->n * nq];
	const struct tacho_region_value **vp = &r->valp[r->n * nq];

	st->name = memcpy(*namep, items[i].name, len);
	*namep += len;
	for (size_t k = i; k < j; k++) {
		load_item(&items[k], nq, qcalls + (k - i) * nq, qacc + (k - i) * nq);
		st->calls += items[k].calls;
		st->threads += items[k].threads;
	}
	for (size_t q = 0; q < nq; q++) {
		for (size_t k = i; k < j; k++) {
			accs[k - i] = &items[k].q[q];
			calls[k - i] = items[k].qcalls[q];
		}
		tc_region_accumulators_merge(accs, calls, j - i, &v[q]);
		if (q > 0 && r->status[q - 1] >= TACHO_COUNT_NOT_COUNTED)
			memset(&v[q], 0, sizeof(v[q]));
		if (v[q].clamped)
			tc_sb_addf(notes, "region '%s': %s measured below the calibrated "
				   "cost of measuring; clamped at 0\n", st->name,
				   q ? r->evnames[q - 1] : "time");
	}
	for (size_t q = 0; q < nq; q++)
		vp[q] = &v[q];
	st->ticks = vp[0];
	st->time_ns = to_ns((double)v[0].total, r->hz);
	st->exclusive_ns = to_ns((double)v[0].exclusive, r->hz);
	st->events = nq > 1 ? &vp[1] : NULL;
	/* the per-thread detail: the threads alive (those that ended are in the
	 * totals only) */
	for (size_t k = i; k < j; k++) {
		struct rr_thread *th = &r->th[r->nth];
		if (!items[k].tid)
			continue;
		th->tid = items[k].tid;
		th->region = r->n;
		th->calls = items[k].calls;
		th->counted = items[k].counted;
		r->nth++;
		if (j - i == 1) {
			/* the region is this thread's alone: its figures are the
			 * thread's (a merge of one) */
			th->vals = v;
			continue;
		}
		th->vals = &r->th_vals[r->nthv++ * nq];
		for (size_t q = 0; q < nq; q++) {
			const struct tc_region_accumulator *a = &items[k].q[q];
			tc_region_accumulators_merge(&a, &items[k].qcalls[q], 1,
						     &th->vals[q]);
		}
	}
	r->n++;
}

/* Builds the report. With the lock held. */
static int build(struct tacho_regions_report *r)
{
	struct rr_item *items = NULL;
	uint64_t *qcalls = NULL;
	struct tc_region_accumulator *qacc = NULL;
	size_t nitems = 0, nreg = 0, namelen = 0, group = 0, maxgroup = 1, nthv = 0, nq = tc_regions.ready ? tc_regions.nq : 1;
	const struct tc_region_accumulator **accs = NULL;
	uint64_t *calls = NULL;
	struct tc_sb notes = TC_SB_INIT;
	int err = -ENOMEM;

	if (build_setup(r, nq))
		goto out;
	tc_sb_init(&notes);
	if (tc_regions.notes.len)
		tc_sb_adds(&notes, tc_regions.notes.buf);
	for (size_t i = 0; i < r->nev; i++) {
		bool mux;

		if (build_event(r, i, &notes, &mux))
			goto out;
		if (i == r->nev - 1) {
			r->alerts = tc_strndup(notes.buf, notes.len);
			if (!r->alerts)
				goto out;
		}
		if (mux)
			tc_sb_addf(&notes, "event '%s' was multiplexed: its values cover only the "
				   "time it was on a counter\n", r->evnames[i]);
	}
	if (!r->alerts) {
		r->alerts = tc_strndup(notes.buf, notes.len);
		if (!r->alerts)
			goto out;
	}
	nitems = build_thread_notes(&notes);
	items = calloc(nitems ? nitems : 1, sizeof(*items));
	r->th = calloc(nitems ? nitems : 1, sizeof(*r->th));
	if (!items || !r->th)
		goto out;
	nitems = build_items(nq, items);
	qsort(items, nitems, sizeof(*items), cmp_item);

	/* the sizes of everything, before it is filled: regions, their names, the
	 * largest region (the scratch), the detail of regions of several threads */
	for (size_t i = 0; i < nitems; i++) {
		if (!i || strcmp(items[i].name, items[i - 1].name)) {
			nreg++;
			namelen += strlen(items[i].name) + 1;
			group = 0;
		}
		if (++group > maxgroup)
			maxgroup = group;
		if (group == 2)
			nthv += 2;
		else if (group > 2)
			nthv++;
	}
	qcalls = calloc(maxgroup * nq, sizeof(*qcalls));
	qacc = calloc(maxgroup * nq, sizeof(*qacc));
	accs = calloc(maxgroup, sizeof(*accs));
	calls = calloc(maxgroup, sizeof(*calls));
	r->st = calloc(nreg ? nreg : 1, sizeof(*r->st));
	r->vals = calloc((nreg ? nreg : 1) * nq, sizeof(*r->vals));
	r->valp = calloc((nreg ? nreg : 1) * nq, sizeof(*r->valp));
	r->names = malloc(namelen ? namelen : 1);
	r->th_vals = calloc((nthv ? nthv : 1) * nq, sizeof(*r->th_vals));
	if (!qcalls || !qacc || !accs || !calls || !r->st || !r->vals || !r->valp ||
	    !r->names || !r->th_vals)
		goto out;
	char *namep = r->names;
	for (size_t i = 0, j; i < nitems; i = j) {
		for (j = i; j < nitems && !strcmp(items[j].name, items[i].name); j++)
			;
		build_region(r, items, i, j, accs, calls, qcalls, qacc, &namep, &notes);
	}
	r->notes = tc_sb_detach(&notes);
	if (!r->notes)
		goto out;
	err = 0;
out:
	tc_sb_exit(&notes);
	free(items);
	free(qcalls);
	free(qacc);
	free(accs);
	free(calls);
	return err;
}

int tacho_regions_report_new(struct tacho_regions_report **out)
{
	struct tacho_regions_report *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&tc_regions.lock);
	err = build(r);
	pthread_mutex_unlock(&tc_regions.lock);
	if (err) {
		tacho_regions_report_free(r);
		return err;
	}
	*out = r;
	return 0;
}

size_t tc_regions_report_count(const struct tacho_regions_report *r)
{
	return r ? r->n : 0;
}

const struct tacho_region_stat *tacho_regions_report_find(const struct tacho_regions_report *r,
							 const char *name)
{
	for (size_t i = 0; r && name && i < r->n; i++)
		if (!strcmp(r->st[i].name, name))
			return &r->st[i];
	return NULL;
}

size_t tacho_regions_report_nregions(const struct tacho_regions_report *r)
{
	return r ? r->n : 0;
}

const struct tacho_region_stat *tacho_regions_report_region(const struct tacho_regions_report *r,
							   size_t i)
{
	return r && i < r->n ? &r->st[i] : NULL;
}

size_t tacho_regions_report_nevents(const struct tacho_regions_report *r)
{
	return r ? r->nev : 0;
}

const char *tacho_regions_report_event(const struct tacho_regions_report *r, size_t i)
{
	return r && i < r->nev ? r->evnames[i] : NULL;
}

enum tacho_count_status tacho_regions_report_status(const struct tacho_regions_report *r,
						   size_t i, const char **why)
{
	if (!r || i >= r->nev) {
		if (why)
			*why = NULL;
		return TACHO_COUNT_NOT_COUNTED;
	}
	if (why)
		*why = r->why[i];
	return r->status[i];
}

const char *tacho_regions_report_notes(const struct tacho_regions_report *r)
{
	return r && r->notes ? r->notes : "";
}

/* --- writers --- */

static bool counted(const struct tacho_regions_report *r, size_t i)
{
	return r->status[i] == TACHO_COUNT_COUNTED || r->status[i] == TACHO_COUNT_MULTIPLEXED;
}

static void json_value(struct tc_json *j, const char *key, const struct tacho_region_value *v)
{
	tc_json_obj_begin(j, key);
	tc_json_int(j, "total", v->total);
	tc_json_int(j, "exclusive", v->exclusive);
	tc_json_double(j, "mean", v->mean);
	tc_json_double(j, "stddev", v->stddev);
	tc_json_double(j, "min", v->min);
	tc_json_double(j, "max", v->max);
	tc_json_bool(j, "clamped", v->clamped);
	tc_json_obj_end(j);
}

static int write_json(const struct tacho_regions_report *r, FILE *f, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	/* one exit, through tc_json_doc_end, and nothing else written to f meanwhile */
	tc_json_hold(&j);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_arr_begin(&j, "regions");
	for (size_t i = 0; i < r->n; i++) {
		const struct tacho_region_stat *st = &r->st[i];
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", st->name);
		tc_json_uint(&j, "calls", st->calls);
		/* no TSC frequency, no nanoseconds: null as in the detail, never a 0 */
		if (isnan(st->time_ns))
			tc_json_null(&j, "time_ns");
		else
			tc_json_uint(&j, "time_ns", (uint64_t)llround(st->time_ns));
		tc_json_obj_begin(&j, "events");
		for (size_t e = 0; e < r->nev; e++) {
			if (counted(r, e))
				tc_json_int(&j, r->evnames[e], st->events[e]->total);
			else
				tc_json_null(&j, r->evnames[e]);
		}
		tc_json_obj_end(&j);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);

	tc_json_arr_begin(&j, "detail");
	/* build() lists the per-thread detail region by region, in the regions' order:
	 * one cursor walks it beside the regions (a scan of all of it for each region
	 * was quadratic: 4.5 s for 80,000 names) */
	size_t k = 0;
	for (size_t i = 0; i < r->n; i++) {
		const struct tacho_region_stat *st = &r->st[i];
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "name", st->name);
		tc_json_uint(&j, "calls", st->calls);
		tc_json_uint(&j, "threads", st->threads);
		tc_json_double(&j, "time_ns", st->time_ns);
		tc_json_double(&j, "exclusive_ns", st->exclusive_ns);
		json_value(&j, "ticks", st->ticks);
		tc_json_obj_begin(&j, "events");
		for (size_t e = 0; e < r->nev; e++) {
			if (counted(r, e))
				json_value(&j, r->evnames[e], st->events[e]);
			else
				tc_json_null(&j, r->evnames[e]);
		}
		tc_json_obj_end(&j);
		/* "threads" is the count above: one key, one meaning (RFC 8259, 4) */
		tc_json_arr_begin(&j, "per_thread");
		for (; k < r->nth && r->th[k].region == i; k++) {
			const struct rr_thread *th = &r->th[k];
			tc_json_obj_begin(&j, NULL);
			tc_json_int(&j, "tid", th->tid);
			tc_json_uint(&j, "calls", th->calls);
			tc_json_double(&j, "time_ns", to_ns((double)th->vals[0].total, r->hz));
			tc_json_obj_begin(&j, "events");
			for (size_t e = 0; e < r->nev; e++) {
				if (counted(r, e) && th->counted)
					tc_json_int(&j, r->evnames[e], th->vals[e + 1].total);
				else
					tc_json_null(&j, r->evnames[e]);
			}
			tc_json_obj_end(&j);
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);

	tc_json_obj_begin(&j, "measurement");
	tc_json_double(&j, "tsc_hz", r->hz);
	tc_json_str(&j, "tsc_hz_source", tacho_tsc_source_name(r->hz_source));
	tc_json_str(&j, "events_spec", r->spec);
	tc_json_str(&j, "counter_read", r->read_path);
	tc_json_uint(&j, "threads", r->nthreads);
	tc_json_str(&j, "subtracted", "per call: the median cost of an empty region (inside) "
		    "plus, for each region nested in it, the median cost of a whole nested "
		    "pair (nested), both measured at set-up over 301 pairs");
	tc_json_obj_begin(&j, "overhead");
	tc_json_obj_begin(&j, "ticks");
	tc_json_int(&j, "inside", r->o_in[0]);
	tc_json_int(&j, "nested", r->o_nested[0]);
	tc_json_obj_end(&j);
	for (size_t e = 0; e < r->nev; e++) {
		tc_json_obj_begin(&j, r->evnames[e]);
		tc_json_int(&j, "inside", r->o_in[e + 1]);
		tc_json_int(&j, "nested", r->o_nested[e + 1]);
		tc_json_str(&j, "status", tacho_count_status_name(r->status[e]));
		tc_json_str(&j, "why", r->why[e]);
		tc_json_obj_end(&j);
	}
	tc_json_obj_end(&j);
	tc_json_obj_end(&j);

	tc_json_arr_begin(&j, "notes");
	for (const char *p = r->notes; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		tc_json_strn(&j, NULL, p, len);
		p += len + (nl ? 1 : 0);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

static void csv_num(FILE *f, const struct tc_write_settings *w, double v)
{
	char buf[64];

	if (isnan(v))
		buf[0] = 0;
	else
		snprintf(buf, sizeof(buf), "%.17g", v);
	tc_csv_field(f, w->sep, false, buf);
}

/* Long format, one row per region and quantity: it holds any event name. */
static int write_csv(const struct tacho_regions_report *r, FILE *f,
		     const struct tc_write_settings *w)
{
	static const char *const head[] = { "region", "quantity", "status", "calls", "total",
					    "exclusive", "mean", "stddev", "min", "max",
					    "clamped" };
	char buf[64];

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < r->n; i++) {
		const struct tacho_region_stat *st = &r->st[i];
		for (size_t q = 0; q < r->nq + 1; q++) {
			/* rows: time_ns, ticks, then each event */
			const struct tacho_region_value *v =
				q < 2 ? st->ticks : st->events[q - 2];
			double scale = q == 0 ? (r->hz > 0 ? 1e9 / r->hz : NAN) : 1;
			const char *status = q < 2 ? "counted" : tacho_count_status_name(r->status[q - 2]);
			bool have = q < 2 || counted(r, q - 2);

			tc_csv_field(f, w->sep, true, st->name);
			tc_csv_field(f, w->sep, false, q == 0 ? "time_ns" : q == 1 ? "ticks" :
				     r->evnames[q - 2]);
			tc_csv_field(f, w->sep, false, status);
			snprintf(buf, sizeof(buf), "%llu", (unsigned long long)st->calls);
			tc_csv_field(f, w->sep, false, buf);
			csv_num(f, w, have ? (double)v->total * scale : NAN);
			csv_num(f, w, have ? (double)v->exclusive * scale : NAN);
			csv_num(f, w, have ? v->mean * scale : NAN);
			csv_num(f, w, have ? v->stddev * scale : NAN);
			csv_num(f, w, have ? v->min * scale : NAN);
			csv_num(f, w, have ? v->max * scale : NAN);
			tc_csv_field(f, w->sep, false, have ? (v->clamped ? "yes" : "no") : "");
			tc_csv_end(f);
		}
	}
	return tc_write_status(f);
}

/* Nanoseconds for the table: grouped whole part, `decimals` (0 or 1) after the point;
 * "-" when there is no TSC frequency, as for an event not counted. buf holds 64. */
static void fmt_ns(double ns, char *buf, int decimals)
{
	char g[32];
	double ip;
	int frac;

	if (!isfinite(ns) || ns < 0 || ns >= 9e18) {
		snprintf(buf, 64, "%s", "-");
		return;
	}
	ip = floor(ns);
	frac = decimals ? (int)llround((ns - ip) * 10) : 0;
	if (!decimals && ns - ip >= 0.5)
		ip += 1;
	if (frac == 10) {
		ip += 1;
		frac = 0;
	}
	tc_fmt_grouped((uint64_t)ip, g, sizeof(g));
	if (decimals)
		snprintf(buf, 64, "%s.%d", g, frac);
	else
		snprintf(buf, 64, "%s", g);
}

static int write_table(const struct tacho_regions_report *r, FILE *f)
{
	unsigned ncols = 5 + (unsigned)r->nev;
	struct tc_table *t = tc_table_new(ncols);
	const char **cells = calloc(ncols, sizeof(*cells));
	char (*buf)[64] = calloc(ncols, sizeof(*buf));
	int err = -ENOMEM;

	if (!t || !cells || !buf)
		goto out;
	for (unsigned c = 1; c < ncols; c++)
		tc_table_align_right(t, c, true);
	cells[0] = "region";
	cells[1] = "calls";
	cells[2] = "time ns";
	cells[3] = "excl ns";
	cells[4] = "ns/call";
	for (size_t e = 0; e < r->nev; e++) {
		/* the clocks count nanoseconds (regions keep raw counts; stat scales them
		 * to msec): the unit goes into the heading, as for the time columns */
		if (r->evunit && r->evunit[e][0])
			snprintf(buf[5 + e], 64, "%.50s %s", r->evnames[e], r->evunit[e]);
		else
			snprintf(buf[5 + e], 64, "%.60s", r->evnames[e]);
		cells[5 + e] = buf[5 + e];
	}
	if (tc_table_add(t, cells))
		goto out;
	for (size_t i = 0; i < r->n; i++) {
		const struct tacho_region_stat *st = &r->st[i];
		cells[0] = st->name;
		/* counts and whole nanoseconds with thousands separators, like stat */
		tc_fmt_grouped(st->calls, buf[1], 64);
		fmt_ns(st->time_ns, buf[2], 0);
		fmt_ns(st->exclusive_ns, buf[3], 0);
		fmt_ns(st->time_ns / (double)st->calls, buf[4], 1);
		for (size_t e = 0; e < r->nev; e++) {
			int64_t v = st->events[e]->total;

			if (counted(r, e))
				tc_fmt_grouped(v > 0 ? (uint64_t)v : 0, buf[5 + e], 64);
			else
				snprintf(buf[5 + e], 64, "%s", "-");
		}
		for (unsigned c = 1; c < ncols; c++)
			cells[c] = buf[c];
		if (tc_table_add(t, cells))
			goto out;
	}
	fprintf(f, "tacho regions (TSC %.0f Hz from %s; counters read by %s; the cost of "
		"measuring subtracted)\n", r->hz, tacho_tsc_source_name(r->hz_source),
		r->read_path);
	tc_table_print(t, f, 2, 2);
	for (const char *p = r->notes; p && *p;) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		fprintf(f, "note: %.*s\n", len, p);
		p += len + (nl ? 1 : 0);
	}
	err = tc_write_status(f);
out:
	tc_table_free(t);
	free(cells);
	free(buf);
	return err;
}

int tacho_regions_report_write(const struct tacho_regions_report *r, FILE *f,
			      enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tc_write_settings w;
	int err;

	if (!r || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		return write_json(r, f, fmt, &w);
	case TACHO_FORMAT_CSV:
		return write_csv(r, f, &w);
	default:
		return write_table(r, f);
	}
}

/* The report and what goes with it is made in memory and written with one write(2),
 * or as few as its size needs: a program's traces (strace, a tracepoint on
 * sys_enter_write) show its own writes, not the 23 of a report written a line at a
 * time through the unbuffered stderr. */

/* Writes all of buf to fd. 0 or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* head (may be NULL), then the report in fmt, into *buf (malloc'd). 0 or -errno. */
static int render(const struct tacho_regions_report *r, const char *head, enum tacho_format fmt,
		  char **buf, size_t *len)
{
	FILE *m = open_memstream(buf, len);
	int err;

	if (!m)
		return -errno;
	if (head)
		fputs(head, m);
	err = tacho_regions_report_write(r, m, fmt, NULL);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

/* The report as a table on stderr, after head: one write. */
static int to_stderr(const struct tacho_regions_report *r, const char *head)
{
	char *buf = NULL;
	size_t len = 0;
	int err = render(r, head, TACHO_FORMAT_TABLE, &buf, &len);

	if (err)
		return err;
	/* what the program left in stderr's stream comes first */
	fflush(stderr);
	err = write_all(STDERR_FILENO, buf, len);
	free(buf);
	return err;
}

/* The figures must not be lost: when the file cannot be written (opened, written or
 * closed), they go to stderr, with the reason. */
static int fall_back(const struct tacho_regions_report *r, const char *path, int ferr)
{
	char head[4200];
	int err;

	tc_log(TACHO_LOG_ERROR, "regions: cannot write the report to %s: %s", path,
	       tacho_strerror(ferr));
	snprintf(head, sizeof(head), "tacho regions: cannot write the report to %s: %s; here it "
		 "is\n", path, ferr == -ELOOP ? "it is a symbolic link, which tacho does not follow" :
		 tacho_strerror(ferr));
	err = to_stderr(r, head);
	return err ? err : ferr;
}

/* The notes a person must see even when the report goes elsewhere or nowhere, in one
 * write. */
static void print_alerts(const struct tacho_regions_report *r)
{
	struct tc_sb sb = TC_SB_INIT;

	tc_sb_init(&sb);
	for (const char *p = r->alerts; p && *p;) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);
		tc_sb_addf(&sb, "tacho regions: %.*s\n", len, p);
		p += len + (nl ? 1 : 0);
	}
	if (sb.len && !sb.oom) {
		fflush(stderr);
		write_all(STDERR_FILENO, sb.buf, sb.len);
	}
	tc_sb_exit(&sb);
}

int tacho_regions_write(void)
{
	struct tacho_regions_report *r;
	const char *path = tc_regions.output;
	bool to_file = path && *path && strcmp(path, "-");
	struct tc_outfile out;
	int err;

	err = tacho_regions_report_new(&r);
	if (err)
		return err;
	if (path && !strcmp(path, "none")) {
		/* no report, by request; what went wrong is still said */
		print_alerts(r);
		goto out;
	}
	if (!to_file) {
		err = to_stderr(r, NULL);
		goto out;
	}
	/* a new file of mode 0600, renamed over path when whole (util.h, tc_outfile),
	 * written through a stream with a buffer of 1 MiB: a report of that size or less
	 * is still one write(2), and a larger one is not first made whole in memory (the
	 * 47 MB JSON of 80,000 names grew an open_memstream buffer by copies, each new
	 * part zeroed: half of the program's exit in memmove, memset and their page
	 * faults) */
	err = tc_outfile_open(&out, path, 0);
	if (!err) {
		FILE *f = tc_outfile_stream(&out);

		if (!f || setvbuf(f, NULL, _IOFBF, 1 << 20))
			err = -ENOMEM;
		if (!err)
			err = tacho_regions_report_write(r, f, tc_format_of_path(path), NULL);
		if (err)
			tc_outfile_abort(&out);
		else
			/* a full disk (or /dev/full) may say so only here */
			err = tc_outfile_commit(&out);
	}
	if (err) {
		err = fall_back(r, path, err);
		goto out;
	}
	/* The notes are in the file; the person running the program is told once that
	 * there are some (a bad TACHO_EVENTS must not pass unseen). */
	print_alerts(r);
out:
	tacho_regions_report_free(r);
	return err;
}
