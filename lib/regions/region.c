/* region.c - named regions: per-thread state without locks on the hot path, nesting
 * with inclusive and exclusive figures, the cost of measuring calibrated at set-up and
 * subtracted from every call (the seeds' StartProfile/EndProfile: "measure the
 * overhead of reading the two counters and subtract it"). The report is in
 * region-report.c. */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "regions/region.h"
#include "regions/region-int.h"
#include "trace/area.h"
#include "tsc/tsc.h"
#include "tacho/errors.h"
#include "tacho/events.h"
#include "tacho/regions.h"
#include "tacho/tsc.h"

struct tc_regions tc_regions = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static __thread struct tc_region_thread *tls __attribute__((tls_model("initial-exec")));
static pthread_key_t thread_key;

/* --- records and lookup --- */

/* The index of the record called name, created on first use. Off the fast path:
 * the pointer cache answers repeated calls with the same string. The thread's string
 * pool numbers names in the order first seen, as records are made, so a name's id is
 * its record's index. */
/* A record's size in a slab: a multiple of 16, so that each record is aligned as
 * the slab's storage. */
static size_t rec_size(const struct tc_region_thread *t)
{
	size_t sz = sizeof(struct tc_region_record) + t->nq * sizeof(struct tc_region_accumulator);

	return (sz + 15) & ~(size_t)15;
}

static int rec_add(struct tc_region_thread *t, const char *name)
{
	struct tc_region_record *r;
	uint32_t id;
	int err;

	if (t->nrec == t->arec) {
		size_t a = t->arec ? t->arec * 2 : 16;
		struct tc_region_record **recs = realloc(t->recs, a * sizeof(*recs));
		if (!recs)
			return -ENOMEM;
		t->recs = recs;
		t->arec = a;
	}
	/* the record first: a name interned without its record would break id == index */
	if (!t->slab_left) {
		size_t n = t->slabs ? t->slabs->n * 2 : 16;
		struct tc_region_slab *sl;

		if (n > 4096)
			n = 4096;
		sl = calloc(1, sizeof(*sl) + n * rec_size(t));
		if (!sl)
			return -ENOMEM;
		sl->n = n;
		sl->next = t->slabs;
		t->slabs = sl;
		t->slab_next = sl->mem;
		t->slab_left = n;
	}
	err = tc_strpool_intern(&t->names, name, &id);
	if (err)
		return err;
	r = (struct tc_region_record *)(void *)t->slab_next;
	/* zero already (calloc), but written here, inside the lookup the enclosing
	 * regions do not count: a slab page first touched by end() would charge its
	 * page fault to this region and to every one around it */
	memset(r, 0, rec_size(t));
	t->slab_next += rec_size(t);
	t->slab_left--;
	r->name = tc_strpool_str(&t->names, id);
	t->recs[t->nrec++] = r;
	return (int)id;
}

static int rec_find_slow(struct tc_region_thread *t, const char *name)
{
	uint32_t id;
	int r;

	/* only this thread changes its names: it reads them without the lock */
	if (tc_strpool_find(&t->names, name, &id))
		return (int)id;
	/* A report may be walking this thread's records (the table it reallocs, the
	 * pool it grows): a new record is made under the lock. */
	if (t->in_setup)
		return rec_add(t, name);
	pthread_mutex_lock(&tc_regions.lock);
	r = rec_add(t, name);
	pthread_mutex_unlock(&tc_regions.lock);
	return r;
}

/* The pointer table's home slot: Fibonacci hashing (Knuth, TAOCP vol. 3, 6.4) of the
 * whole address. String literals lie next to each other, a few bytes apart
 * ("outer\0inner"): taking low address bits put such neighbours in one slot, and two
 * nested regions then evicted each other on every call. The top bits of the product
 * spread neighbours far apart. */
static inline size_t pc_slot(const char *name, size_t mask)
{
	return (size_t)(((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

struct fixed_query {
	uintptr_t addr;
	bool fixed;
};

static int fixed_visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct fixed_query *q = data;
	(void)size;

	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && q->addr >= lo && q->addr - lo < ph->p_memsz) {
			q->fixed = !(ph->p_flags & PF_W);
			return 1;
		}
	}
	return 0;
}

/* Whether name lies in a read-only segment of the program or a library it loaded (a
 * string literal, whose contents never change). Off the fast path: once per pointer. */
static bool name_is_fixed(const char *name)
{
	struct fixed_query q = { .addr = (uintptr_t)name };

	dl_iterate_phdr(fixed_visit, &q);
	return q.fixed;
}

static void pc_put(struct tc_region_name_slot *tab, size_t mask, const char *name, uint32_t rec,
		   bool fixed)
{
	size_t i = pc_slot(name, mask);

	while (tab[i].name && tab[i].name != name)
		i = (i + 1) & mask;
	tab[i].name = name;
	tab[i].rec = rec;
	tab[i].fixed = fixed;
}

/* Makes room for one more pointer: twice the table while it holds fewer than eight
 * pointers per record (names made in buffers at ever new addresses must not grow it
 * without bound), else starts it afresh. It grows at three quarters full, not half: a
 * probe of linear probing then reads 2.5 slots at most on average, mostly within one
 * cache line, and 10,000 names fit in 256 KiB of slots instead of 512, which kept a
 * cycle through them in the L2 cache (84 ns a pair instead of 145 in bench-region
 * names). 0 or -ENOMEM (the table stays as it was). */
static int pc_room(struct tc_region_thread *t)
{
	size_t size = t->pc_mask + 1, nsize = size * 2;
	struct tc_region_name_slot *tab;

	if (t->pc_used + 1 <= size / 4 * 3)
		return 0;
	if (size >= 8 * (t->nrec + 8)) {
		memset(t->pc, 0, size * sizeof(*t->pc));
		t->pc_used = 0;
		return 0;
	}
	tab = calloc(nsize, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < size; i++)
		if (t->pc[i].name)
			pc_put(tab, nsize - 1, t->pc[i].name, t->pc[i].rec, t->pc[i].fixed);
	free(t->pc);
	t->pc = tab;
	t->pc_mask = nsize - 1;
	return 0;
}

/* The lookup the pointer table did not answer, all of it: the record by its string
 * (made when new), then the pointer entered, or its entry corrected (a buffer that now
 * holds another name). */
static int rec_find_miss_work(struct tc_region_thread *t, const char *name,
			      struct tc_region_name_slot *slot, bool *fixed)
{
	int r = rec_find_slow(t, name);

	if (r < 0)
		return r;
	if (slot) {
		/* a known buffer: only its record changes */
		slot->rec = (uint32_t)r;
		*fixed = false;
		return r;
	}
	*fixed = name_is_fixed(name);
	if (pc_room(t) == 0) {
		pc_put(t->pc, t->pc_mask, name, (uint32_t)r, *fixed);
		t->pc_used++;
	}
	return r;
}

static inline int64_t *frame_start(struct tc_region_thread *t, unsigned depth);

/* The slow lookup inside open regions: it may allocate (a new record, a bigger table,
 * the pointer table) and ask the loader about the pointer, and what that costs (page faults of the allocator, time) belongs to no region. The
 * enclosing regions' start values move forward by what it cost, so their figures stay
 * exact whatever the heap does. */
static int rec_find_guarded(struct tc_region_thread *t, const char *name,
			    struct tc_region_name_slot *slot, bool *fixed)
{
	int64_t *before = t->snap, *after = t->snap2;
	int r;

	if (t->depth == 0)
		return rec_find_miss_work(t, name, slot, fixed);
	if (t->nq_read > 1 && tc_measure_set_read(&t->m, (uint64_t *)before + 1))
		return rec_find_miss_work(t, name, slot, fixed);
	before[0] = (int64_t)tacho_tsc_begin();
	r = rec_find_miss_work(t, name, slot, fixed);
	after[0] = (int64_t)tacho_tsc_end();
	if (t->nq_read > 1 && tc_measure_set_read(&t->m, (uint64_t *)after + 1))
		return r;
	for (unsigned d = 0; d < t->depth; d++) {
		int64_t *start = frame_start(t, d);
		for (size_t q = 0; q < t->nq_read; q++)
			start[q] += after[q] - before[q];
	}
	return r;
}

static int rec_find_miss(struct tc_region_thread *t, const char *name,
			 struct tc_region_name_slot *slot, bool *fixed)
{
	t->pc_misses++;
	return rec_find_guarded(t, name, slot, fixed);
}

/* The record called name. A hit on a fixed pointer costs one compare of pointers; on a
 * buffer, a string compare too. */
static inline int rec_find(struct tc_region_thread *t, const char *name, bool *fixed)
{
	size_t i = pc_slot(name, t->pc_mask);

	for (;;) {
		struct tc_region_name_slot *pc = &t->pc[i];

		if (tc_likely(pc->name == name)) {
			if (tc_likely(pc->fixed)) {
				*fixed = true;
				return (int)pc->rec;
			}
			/* a buffer may have been reused with new contents */
			if (!strcmp(t->recs[pc->rec]->name, name)) {
				*fixed = false;
				return (int)pc->rec;
			}
			return rec_find_miss(t, name, pc, fixed);
		}
		if (!pc->name)
			return rec_find_miss(t, name, NULL, fixed);
		i = (i + 1) & t->pc_mask;
	}
}

static void records_free(struct tc_region_thread *t)
{
	while (t->slabs) {
		struct tc_region_slab *next = t->slabs->next;
		free(t->slabs);
		t->slabs = next;
	}
	t->slab_next = NULL;
	t->slab_left = 0;
	free(t->recs);
	tc_strpool_exit(&t->names);
	t->recs = NULL;
	t->nrec = t->arec = 0;
	if (t->pc)
		memset(t->pc, 0, (t->pc_mask + 1) * sizeof(*t->pc));
	t->pc_used = 0;
	/* the frames' records are gone: no begin may take one for its name */
	for (size_t i = 0; i < TC_REGION_MAXDEPTH; i++)
		t->frames[i].fixed_name = NULL;
}

/* --- the hot path --- */

static inline int64_t *frame_start(struct tc_region_thread *t, unsigned depth)
{
	return t->fvals + (size_t)depth * 2 * t->nq;
}

static inline int64_t *frame_child(struct tc_region_thread *t, unsigned depth)
{
	return t->fvals + (size_t)depth * 2 * t->nq + t->nq;
}

static struct tc_region_thread *thread_setup(int *err);

/* The depth of open regions, and the record of the innermost with it. */
static inline void set_depth(struct tc_region_thread *t, unsigned d)
{
	TC_WRITE_ONCE(t->depth, d);
	t->top_rec = d ? t->frames[d - 1].rec : NULL;
}

/* begin() and end() in full: every case (a first call, a name to look up, events to
 * read, tacho stat's control, tracing, the calibration). The exported functions below
 * take the common case, time alone on a name known at that depth, and hand every other
 * to these. */
static __attribute__((noinline)) int region_begin_full(const char *name)
{
	struct tc_region_thread *t = tls;
	int err, r;

	if (tc_unlikely(!t)) {
		/* under simulation (TACHO_SIM on valgrind) a region measures nothing: it
		 * marks its boundary in callgrind's counts, and the thread never sets up,
		 * so that natively the hot path is as it was */
		if (name && tc_region_sim_on()) {
			tc_region_sim_mark('b', name);
			return 0;
		}
		t = thread_setup(&err);
		if (!t)
			return err;
	}
	t->full_calls++;
	if (tc_unlikely(!name))
		return -EINVAL;
	if (tc_unlikely(t->depth == TC_REGION_MAXDEPTH)) {
		TC_WRITE_ONCE(t->errors, t->errors + 1);
		return -TACHO_EOUTOFRANGE;
	}
	/* The frame at this depth still holds the record of the region begun there last
	 * (a loop's body is begun at the same depth again and again): the same fixed
	 * pointer is the same record, with one compare and no lookup, which the fence
	 * before the TSC read would wait for. */
	struct tc_region_frame *f = &t->frames[t->depth];
	if (tc_unlikely(f->fixed_name != name)) {
		bool fixed;
		r = rec_find(t, name, &fixed);
		if (tc_unlikely(r < 0))
			return r;
		f->rec = t->recs[r];
		f->fixed_name = fixed ? name : NULL;
	}
	/* tacho stat --regions: its counters on before the region's own window opens */
	if (tc_unlikely(tc_region_ctl_on) && t->depth == 0 && !t->in_setup)
		tc_region_control_enter();

	int64_t *start = frame_start(t, t->depth);
	f->desc = 0;
	/* a loop, not memset: nq is 1 for time alone, a few with events, and the call
	 * to the library's memset cost more than the stores it makes */
	int64_t *child = frame_child(t, t->depth);
	for (size_t q = 0; q < t->nq; q++)
		child[q] = 0;
	set_depth(t, t->depth + 1);
	/* Traced: the span's begin, outside this region's window and inside the
	 * enclosing one's, where the calibration of a nested pair (which runs traced
	 * too) accounts for it. */
	if (tc_unlikely(tc_trace_on()))
		tc_trace_emit(TC_TRACE_BEGIN | (t->in_setup ? TC_TRACE_DRY : 0), name, 0);
	/* Counters first, the TSC last: the time window holds as little of the
	 * measuring as it can, and the counter window none of the bookkeeping above. */
	if (t->nq_read > 1) {
		err = tc_measure_set_read(&t->m, (uint64_t *)start + 1);
		if (tc_unlikely(err)) {
			set_depth(t, t->depth - 1);
			TC_WRITE_ONCE(t->errors, t->errors + 1);
			if (tc_trace_on())   /* the span the trace saw begin ends here */
				tc_trace_emit(TC_TRACE_END | (t->in_setup ? TC_TRACE_DRY : 0),
					      name, 0);
			if (tc_unlikely(tc_region_ctl_on) && t->depth == 0 && !t->in_setup)
				tc_region_control_leave();
			return err;
		}
	}
	start[0] = (int64_t)tacho_tsc_begin();
	return 0;
}

static __attribute__((noinline)) int region_end_full(const char *name, uint64_t t1)
{
	struct tc_region_thread *t = tls;
	int err;

	if (tc_unlikely(!t || t->depth == 0 || !name)) {
		if (!t && name && tc_region_sim_on()) {
			tc_region_sim_mark('e', name);
			return 0;
		}
		if (t)
			TC_WRITE_ONCE(t->unbalanced, t->unbalanced + 1);
		return -EINVAL;
	}
	t->full_calls++;
	int64_t *now = t->snap;
	now[0] = (int64_t)t1;
	if (t->nq_read > 1) {
		err = tc_measure_set_read(&t->m, (uint64_t *)now + 1);
		if (tc_unlikely(err)) {
			TC_WRITE_ONCE(t->errors, t->errors + 1);
			return err;
		}
	}

	unsigned d = t->depth - 1;
	struct tc_region_frame *f = &t->frames[d];
	struct tc_region_record *rec = f->rec;
	/* the begin's literal: the same pointer is the same name; anything else is
	 * compared as a string */
	if (tc_unlikely(f->fixed_name != name && strcmp(rec->name, name))) {
		TC_WRITE_ONCE(t->unbalanced, t->unbalanced + 1);
		return -EINVAL;
	}
	set_depth(t, d);

	const int64_t *start = frame_start(t, d), *child = frame_child(t, d);
	const int64_t *ot = tc_regions.o_in, *of = tc_regions.o_nested;
	int64_t *pchild = d ? frame_child(t, d - 1) : NULL;
	uint64_t calls = rec->calls;

	/* The seqlock's write side: seq odd, then the record's fields, then seq even. A
	 * report on another thread copies the record only while seq is even and the same
	 * before and after. Each store is a release (nothing before it moves after it),
	 * which on x86-64 is a plain move. */
	TC_WRITE_ONCE(t->seq, t->seq + 1);
	TC_STORE_RELEASE(rec->calls, calls + 1);
	for (size_t q = 0; q < t->nq_read; q++) {
		/* what this call cost, less the measuring inside it: its own pair's inner
		 * part and the whole of every pair nested in it */
		int64_t incl = now[q] - start[q] - ot[q] - (int64_t)f->desc * of[q];
		tc_region_acc_add(&rec->q[q], incl, incl - child[q], !calls);
		if (pchild)
			pchild[q] += incl;
	}
	TC_STORE_RELEASE(t->seq, t->seq + 1);
	if (d)
		t->frames[d - 1].desc += 1 + f->desc;
	if (tc_unlikely(t->cal_out)) {
		for (size_t q = 0; q < t->nq_read; q++)
			t->cal_out[q] = now[q] - start[q];
	}
	if (tc_unlikely(tc_trace_on()))
		tc_trace_emit(TC_TRACE_END | (t->in_setup ? TC_TRACE_DRY : 0), name, 0);
	/* after the region's window closed: tacho stat --regions stops counting */
	if (tc_unlikely(tc_region_ctl_on) && d == 0 && !t->in_setup)
		tc_region_control_leave();
	return 0;
}

unsigned long tc_regions_full_calls(void)
{
	return tls ? tls->full_calls : 0;
}

/* Whether the hot path may skip what region_*_full do beyond the common case: the
 * thread measures time alone, tacho stat's control is off, and tracing is known off. */
static inline bool time_alone(const struct tc_region_thread *t)
{
	return t->nq_read == 1 && !tc_region_ctl_on &&
	       __atomic_load_n(&tc_trace_state, __ATOMIC_RELAXED) == 1;
}

int tacho_region_begin(const char *name)
{
	struct tc_region_thread *t = tls;

	/* the same literal begun at this depth last time: its frame still holds its
	 * record; nothing to look up, one quantity to start */
	if (tc_unlikely(!t || !name || t->depth == TC_REGION_MAXDEPTH ||
			t->frames[t->depth].fixed_name != name || !time_alone(t)))
		return region_begin_full(name);
	unsigned d = t->depth;
	t->frames[d].desc = 0;
	frame_child(t, d)[0] = 0;
	set_depth(t, d + 1);
	frame_start(t, d)[0] = (int64_t)tacho_tsc_begin();
	return 0;
}

int tacho_region_end(const char *name)
{
	uint64_t t1 = tacho_tsc_end();
	struct tc_region_thread *t = tls;

	if (tc_unlikely(!t || !t->depth || !name || t->frames[t->depth - 1].fixed_name != name ||
			!time_alone(t)))
		return region_end_full(name, t1);
	unsigned d = t->depth - 1;
	struct tc_region_frame *f = &t->frames[d];
	struct tc_region_record *rec = t->top_rec;   /* f->rec, one load nearer */
	/* every address and value read before the first store: the atomic stores below
	 * would make the compiler read them again */
	const int64_t *start = frame_start(t, d), *child = frame_child(t, d);
	int64_t *pchild = d ? frame_child(t, d - 1) : NULL;
	uint64_t calls = rec->calls;
	unsigned seq = t->seq, desc = f->desc;
	int64_t incl = (int64_t)t1 - start[0] - tc_regions.o_in[0] -
		       (int64_t)desc * tc_regions.o_nested[0];
	int64_t excl = incl - child[0];

	set_depth(t, d);
	/* the seqlock's write side, as region_end_full's */
	TC_WRITE_ONCE(t->seq, seq + 1);
	TC_STORE_RELEASE(rec->calls, calls + 1);
	tc_region_acc_add(&rec->q[0], incl, excl, !calls);
	TC_STORE_RELEASE(t->seq, seq + 2);
	if (pchild) {
		pchild[0] += incl;
		t->frames[d - 1].desc += 1 + desc;
	}
	/* the calibration's pairs take this path as a user's do: what they cost is
	 * what is subtracted */
	if (tc_unlikely(t->cal_out))
		t->cal_out[0] = (int64_t)t1 - start[0];
	return 0;
}

/* --- set-up --- */

static void thread_free(struct tc_region_thread *t)
{
	tc_measure_set_close(&t->m);
	records_free(t);
	free(t->pc);
	free(t->snap);
	free(t->snap2);
	free(t->fvals);
	free(t);
}

static void retired_free(void)
{
	for (size_t i = 0; i < tc_regions.nretired; i++)
		free(tc_regions.retired[i]);
	free(tc_regions.retired);
	tc_strpool_exit(&tc_regions.retired_names);
	tc_regions.retired = NULL;
	tc_regions.nretired = tc_regions.aretired = 0;
}

/* The process-wide record of the name, made on first use. With the lock. */
static struct tc_region_retired *retired_get(const char *name)
{
	struct tc_region_retired *r;
	uint32_t id;
	int err;

	if (tc_strpool_find(&tc_regions.retired_names, name, &id))
		return tc_regions.retired[id];
	if (tc_regions.nretired == tc_regions.aretired) {
		size_t a = tc_regions.aretired ? tc_regions.aretired * 2 : 16;
		struct tc_region_retired **v = realloc(tc_regions.retired, a * sizeof(*v));
		if (!v)
			return NULL;
		tc_regions.retired = v;
		tc_regions.aretired = a;
	}
	r = calloc(1, sizeof(*r) + tc_regions.nq * sizeof(r->q[0]));
	if (!r)
		return NULL;
	err = tc_strpool_intern(&tc_regions.retired_names, name, &id);
	if (err) {
		free(r);
		return NULL;
	}
	r->name = tc_strpool_str(&tc_regions.retired_names, id);
	tc_regions.retired[tc_regions.nretired++] = r;
	return r;
}

/* The thread ends: its figures go into the process-wide records and its state goes,
 * so that a process of many short threads keeps one record per region name, not one
 * state per thread. Without the memory for a record, the state stays as it is (the
 * report reads it as a thread's). */
static void thread_gone(void *arg)
{
	struct tc_region_thread *t = arg, **pp;
	size_t i;

	pthread_mutex_lock(&tc_regions.lock);
	/* every record first, so that a failure merges nothing twice */
	for (i = 0; i < t->nrec; i++)
		if (t->recs[i]->calls && !retired_get(t->recs[i]->name))
			break;
	if (i < t->nrec) {
		tc_log(TACHO_LOG_WARN, "regions: out of memory merging thread %d's figures; "
		       "its state stays", (int)t->tid);
		tc_regions.retired_multiplexed |= tc_measure_set_multiplexed(&t->m);
		tc_regions.retired_ran |= tc_measure_set_ran(&t->m);
		tc_measure_set_close(&t->m);
		pthread_mutex_unlock(&tc_regions.lock);
		return;
	}
	for (i = 0; i < t->nrec; i++) {
		const struct tc_region_record *rec = t->recs[i];
		struct tc_region_retired *r;

		if (!rec->calls)
			continue;
		r = retired_get(rec->name);
		r->calls += rec->calls;
		r->threads++;
		for (size_t q = 0; q < t->nq_read; q++) {
			tc_region_accumulator_absorb(&r->q[q].a, r->q[q].calls, &rec->q[q],
						     rec->calls);
			r->q[q].calls += rec->calls;
		}
	}
	tc_regions.retired_errors += t->errors;
	tc_regions.retired_unbalanced += t->unbalanced;
	tc_regions.retired_multiplexed |= tc_measure_set_multiplexed(&t->m);
	tc_regions.retired_ran |= tc_measure_set_ran(&t->m);
	for (pp = &tc_regions.threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	tc_regions.nstates--;
	thread_free(t);
	tls = NULL;
	pthread_mutex_unlock(&tc_regions.lock);
}

unsigned tc_regions_thread_states(void)
{
	unsigned n;

	pthread_mutex_lock(&tc_regions.lock);
	n = tc_regions.nstates;
	pthread_mutex_unlock(&tc_regions.lock);
	return n;
}

/* fork(): the lock must not be held by a thread that does not exist in the child, and
 * the child must not read its parent's counters (the inherited fds count the parent's
 * threads). The child starts afresh: its first region opens its own counters. It does
 * not write the report at exit (the parent's TACHO_OUTPUT is the parent's); it may call
 * tacho_regions_write itself. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&tc_regions.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&tc_regions.lock);
}

static void fork_child(void)
{
	struct tc_region_thread *t = tc_regions.threads;

	pthread_mutex_init(&tc_regions.lock, NULL);
	while (t) {
		struct tc_region_thread *next = t->next;
		thread_free(t);
		t = next;
	}
	tc_regions.threads = NULL;
	tc_regions.nthreads = tc_regions.nstates = 0;
	retired_free();
	tc_regions.retired_errors = tc_regions.retired_unbalanced = 0;
	tc_regions.retired_multiplexed = tc_regions.retired_ran = false;
	tls = NULL;
	pthread_setspecific(thread_key, NULL);
}

static void at_exit(void)
{
	if (tc_regions.report_at_exit && getpid() == tc_regions.pid)
		tacho_regions_write();
}

#define CAL_PAIRS 301   /* odd: the median is one of the values, an integer */

/* Measures the cost of measuring on thread t, through the very code a user's region
 * runs: CAL_PAIRS empty regions nested in an enclosing one. The inner pairs give what
 * a region sees of its own begin/end; the outer ones, less that, what an enclosing
 * region sees of a whole nested pair. Medians, so that an interrupt does not count. */
static int calibrate(struct tc_region_thread *t)
{
	size_t nq = t->nq;
	size_t nqr = t->nq_read;
	int64_t *in = calloc(CAL_PAIRS * nq, sizeof(*in));
	int64_t *out = calloc(CAL_PAIRS * nq, sizeof(*out));
	double *col = calloc(CAL_PAIRS, sizeof(*col));   /* exact: deltas far below 2^53 */
	int err = -ENOMEM;

	if (!in || !out || !col)
		goto out;
	for (int i = -16; i < CAL_PAIRS; i++) {   /* 16 warm-up rounds */
		int64_t *pi = i < 0 ? in : in + (size_t)i * nq;
		int64_t *po = i < 0 ? out : out + (size_t)i * nq;
		err = tacho_region_begin("\001calibrate-outer");
		if (!err)
			err = tacho_region_begin("\001calibrate-inner");
		t->cal_out = pi;
		if (!err)
			err = tacho_region_end("\001calibrate-inner");
		t->cal_out = po;
		if (!err)
			err = tacho_region_end("\001calibrate-outer");
		t->cal_out = NULL;
		if (err)
			goto out;
	}
	for (size_t q = 0; q < nqr; q++) {
		for (int i = 0; i < CAL_PAIRS; i++)
			col[i] = (double)in[(size_t)i * nq + q];
		tc_stats_sort(col, CAL_PAIRS);
		tc_regions.o_in[q] = (int64_t)tc_stats_percentile_sorted(col, CAL_PAIRS, 50);
		for (int i = 0; i < CAL_PAIRS; i++)
			col[i] = (double)out[(size_t)i * nq + q];
		tc_stats_sort(col, CAL_PAIRS);
		tc_regions.o_nested[q] = (int64_t)tc_stats_percentile_sorted(col, CAL_PAIRS, 50) -
					 tc_regions.o_in[q];
		if (tc_regions.o_nested[q] < 0)
			tc_regions.o_nested[q] = 0;
	}
	err = 0;
out:
	t->cal_out = NULL;
	set_depth(t, 0);
	records_free(t);
	free(in);
	free(out);
	free(col);
	return err;
}

/* Called with the lock held. */
static void add_note(const char *fmt, ...) TC_PRINTF(1, 2);
static void add_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tc_sb_vaddf(&tc_regions.notes, fmt, ap);
	va_end(ap);
	tc_sb_addc(&tc_regions.notes, '\n');
}

/* A variable of the environment, unless this process runs with privileges its caller
 * lacks (setuid, setgid, file capabilities: the kernel's AT_SECURE, as secure_getenv):
 * then whoever set TACHO_OUTPUT could make it write a file they may not write, and
 * TACHO_EVENTS's text would land in it. Ignored, and said once on the log. */
static const char *trusted_env(const char *name)
{
	bool ignored;
	const char *v = tc_env_trusted(name, &ignored);

	if (ignored) {
		/* in the report's notes (on stderr, where the report then goes) and on
		 * the log */
		add_note("%s ignored: this process runs with privileges (setuid, setgid or "
			 "file capabilities) that whoever set it may lack", name);
		tc_log(TACHO_LOG_WARN, "%s ignored: this process runs with privileges "
		       "(setuid, setgid or file capabilities)", name);
	}
	return v;
}

/* Once per process: the events, the output, the TSC, the exit hook. With the lock. */
static int process_setup(const struct tacho_regions_opts *opts, struct tacho_diag *diag)
{
	const char *spec, *output;
	struct tacho_evlist *list = NULL;
	int err;

	/* the TSC's facts, outside any region; its frequency (a perf event, perhaps a
	 * calibration) waits for the first report */
	tc_tsc_early();
	tc_sb_init(&tc_regions.notes);
	spec = opts && opts->events ? opts->events : trusted_env("TACHO_EVENTS");
	output = opts && opts->output ? opts->output : trusted_env("TACHO_OUTPUT");
	if (spec && *spec) {
		struct tacho_diag d = { .sz = sizeof(d) };

		err = tacho_evlist_parse(spec, &list, &d);
		if (err) {
			char msg[600];
			if (diag)
				tc_sized_put_sz(diag, &d, sizeof(d));
			if (opts && opts->events)
				return err;   /* an explicit call: the caller decides */
			tacho_diag_format(&d, msg, sizeof(msg));
			add_note("TACHO_EVENTS: %s (%s); regions measure time only", msg,
				 tacho_strerror(err));
			tc_log(TACHO_LOG_WARN, "TACHO_EVENTS: %s; regions measure time only", msg);
		} else {
			char *why = NULL;

			err = tc_event_set_from_list(&tc_regions.ev, list);
			tacho_evlist_free(list);
			if (!err)
				err = tc_event_set_user_only(&tc_regions.ev, &why);
			if (err)
				return err;
			if (why) {
				/* in the report, and once to a log callback */
				add_note("%s", why);
				tc_log(TACHO_LOG_WARN, "%s", why);
				free(why);
			}
		}
	}
	tc_regions.spec = tc_strdup(spec);
	tc_regions.output = tc_strdup(output);
	tc_regions.nq = 1 + tc_regions.ev.n;
	tc_regions.o_in = calloc(tc_regions.nq, sizeof(int64_t));
	tc_regions.o_nested = calloc(tc_regions.nq, sizeof(int64_t));
	tc_regions.ev_err = calloc(tc_regions.nq, sizeof(int));
	tc_regions.ev_why = calloc(tc_regions.nq, sizeof(char *));
	tc_regions.ev_opened = calloc(tc_regions.nq, sizeof(bool));
	if (!tc_regions.o_in || !tc_regions.o_nested || !tc_regions.ev_err || !tc_regions.ev_why ||
	    !tc_regions.ev_opened)
		return -ENOMEM;
	err = pthread_key_create(&thread_key, thread_gone);
	if (err)
		return -err;
	err = pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (err)
		return -err;
	tc_regions.pid = getpid();
	tc_region_control_setup(trusted_env("TACHO_STAT_CONTROL"));
	tc_regions.report_at_exit = !(opts && opts->no_report_at_exit);
	if (tc_regions.report_at_exit)
		atexit(at_exit);
	tc_regions.ready = true;
	return 0;
}

/* Every field of the options is optional: the first version is sz alone. */
#define TC_OPTS_V1_tacho_regions_opts tc_offsetofend(struct tacho_regions_opts, sz)

int tacho_regions_init(const struct tacho_regions_opts *opts, struct tacho_diag *diag)
{
	struct tacho_regions_opts o;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(opts, tacho_regions_opts, diag);
	if (err)
		return err;
	/* fields past what the caller's sz covers read as 0 (libbpf's _opts rule) */
	TC_OPTS_COPY(&o, opts);
	pthread_mutex_lock(&tc_regions.lock);
	err = tc_regions.ready ? -EBUSY : process_setup(&o, diag);
	pthread_mutex_unlock(&tc_regions.lock);
	return err;
}

static struct tc_region_thread *thread_setup(int *errp)
{
	struct tc_region_thread *t;
	int err = 0;

	pthread_mutex_lock(&tc_regions.lock);
	if (!tc_regions.ready) {
		err = process_setup(NULL, NULL);
		if (err)
			goto out_unlock;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		err = -ENOMEM;
		goto out_unlock;
	}
	t->tid = gettid();
	t->in_setup = true;
	t->nq = tc_regions.nq;
	t->snap = calloc(t->nq, sizeof(*t->snap));
	t->snap2 = calloc(t->nq, sizeof(*t->snap2));
	t->fvals = calloc((size_t)TC_REGION_MAXDEPTH * 2 * t->nq, sizeof(*t->fvals));
	t->pc = calloc(TC_REGION_NAME_SLOTS, sizeof(*t->pc));
	t->pc_mask = TC_REGION_NAME_SLOTS - 1;
	if (!t->snap || !t->snap2 || !t->fvals || !t->pc) {
		free(t->pc);
		free(t->snap);
		free(t->snap2);
		free(t->fvals);
		free(t);
		err = -ENOMEM;
		goto out_unlock;
	}
	if (tc_regions.ev.n) {
		err = tc_measure_set_open(&t->m, &tc_regions.ev);
		if (err) {
			/* nothing could be set up for counting: this thread times only */
			if (!tc_regions.open_failed_noted)
				add_note("cannot count events on thread %d: %s; its regions "
					 "measure time only", (int)t->tid, tacho_strerror(err));
			tc_regions.open_failed_noted = true;
			memset(&t->m, 0, sizeof(t->m));
			t->m.n = tc_regions.ev.n;
			t->set_err = err;
			err = 0;
		}
		for (size_t i = 0; i < tc_regions.ev.n; i++) {
			bool open = !t->set_err && tc_measure_set_is_open(&t->m, i);
			if (open) {
				tc_regions.ev_opened[i + 1] = true;
			} else if (!tc_regions.ev_err[i + 1]) {
				tc_regions.ev_err[i + 1] = t->set_err ? t->set_err
								      : t->m.err[i];
				if (!t->set_err && t->m.why[i])
					tc_regions.ev_why[i + 1] = tc_strdup(t->m.why[i]);
			}
		}
	}
	if (tc_regions.ev.n && !t->set_err && !tc_regions.hold_tried) {
		const struct perf_event_attr *a[64];
		size_t n = tc_regions.ev.n < 64 ? tc_regions.ev.n : 64;
		tc_regions.hold_tried = true;
		for (size_t i = 0; i < n; i++)
			a[i] = &tc_regions.ev.attrs[i];
		if (tc_perf_hold_open(a, n, &tc_regions.hold) < 0)
			tc_regions.hold = NULL;   /* best effort: only slower without it */
	}
	/* a thread that could not open its counters measures time only */
	t->nq_read = t->set_err ? 1 : t->nq;
	t->next = tc_regions.threads;
	tc_regions.threads = t;
	tc_regions.nthreads++;
	tc_regions.nstates++;
	tls = t;
	pthread_setspecific(thread_key, t);
	if (!tc_regions.calibrated || (t->nq_read > 1 && !tc_regions.calibrated_counters)) {
		err = calibrate(t);
		if (err) {
			t->in_setup = false;
			tls = NULL;
			goto out_unlock;
		}
		tc_regions.calibrated = true;
		if (t->nq_read > 1)
			tc_regions.calibrated_counters = true;
		tc_regions.read_path = t->nq_read == 1 ? "none (time only)" :
			tc_measure_set_read_path(&t->m);
	}
	t->in_setup = false;
	pthread_mutex_unlock(&tc_regions.lock);
	return t;
out_unlock:
	pthread_mutex_unlock(&tc_regions.lock);
	*errp = err;
	return NULL;
}

void tacho_regions_reset(void)
{
	pthread_mutex_lock(&tc_regions.lock);
	for (struct tc_region_thread *t = tc_regions.threads; t; t = t->next) {
		for (size_t i = 0; i < t->nrec; i++) {
			t->recs[i]->calls = 0;
			memset(t->recs[i]->q, 0, t->nq * sizeof(struct tc_region_accumulator));
		}
		t->errors = t->unbalanced = 0;
	}
	for (size_t i = 0; i < tc_regions.nretired; i++) {
		struct tc_region_retired *r = tc_regions.retired[i];
		r->calls = 0;
		r->threads = 0;
		memset(r->q, 0, tc_regions.nq * sizeof(r->q[0]));
	}
	tc_regions.retired_errors = tc_regions.retired_unbalanced = 0;
	pthread_mutex_unlock(&tc_regions.lock);
}
