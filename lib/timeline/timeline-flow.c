/* timeline-flow.c - the arrows of a trace: from a wake-up to the switch that runs the
 * thread, and from a mark to the mark of the same value another thread makes next (an
 * item handed from a producer to a consumer), for the Chrome and HTML views. */
#include <errno.h>
#include <stdlib.h>

#include "timeline/timeline.h"
#include "tacho/errors.h"

struct flows {
	struct tc_tl_flow *v;
	size_t n, a;
	bool *end;          /* [item]: already an end of a flow */
	bool *start;        /* [item]: already a start */
};

static int flow_add(struct flows *f, size_t from, size_t to, enum tc_tl_flow_kind kind)
{
	/* one arrow leaves and one arrives at an item: a view binds an arrow to the
	 * item's slice by one id (Perfetto's bind_id) */
	if (f->start[from] || f->end[to] || f->end[from] || f->start[to])
		return 0;
	if (f->n == f->a) {
		size_t na = f->a ? f->a * 2 : 64;
		struct tc_tl_flow *nv = realloc(f->v, na * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		f->v = nv;
		f->a = na;
	}
	f->v[f->n++] = (struct tc_tl_flow){ .from = from, .to = to, .kind = kind };
	f->start[from] = true;
	f->end[to] = true;
	return 0;
}

/* Wake-ups: a thread's first wake-up since it last left a CPU, to the next switch to
 * it. A wake-up while one is pending (the thread is runnable already) adds none; a
 * switch away forgets the pending one (it woke a thread that was still running). */
static int sched_flows(const struct tacho_timeline *t, struct flows *f)
{
	struct tc_hmap pending;   /* tid -> the item of its pending wake-up */
	int err = 0;

	if (t->sched_switch == UINT32_MAX || !tc_payload_has(t->payload, t->sched_switch))
		return 0;
	tc_hmap_init(&pending);
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct tc_tl_item *it = &t->items[i];
		uint64_t prev, next, pid;
		const void *raw;
		size_t size;
		uint32_t k;

		if (it->kind != TC_TL_EVENT || tc_tl_raw(t, it, &raw, &size))
			continue;
		if (it->event == t->sched_switch) {
			if (tc_payload_num(t->payload, it->event, raw, size, "prev_pid", &prev) ||
			    tc_payload_num(t->payload, it->event, raw, size, "next_pid", &next))
				continue;
			if (prev && tc_hmap_get(&pending, prev, &k))
				tc_hmap_del(&pending, prev, k);
			if (next && tc_hmap_get(&pending, next, &k)) {
				tc_hmap_del(&pending, next, k);
				err = flow_add(f, k, i, TC_TL_FLOW_WAKEUP);
			}
		} else if (it->event == t->sched_wakeup || it->event == t->sched_wakeup_new) {
			if (tc_payload_num(t->payload, it->event, raw, size, "pid", &pid) || !pid ||
			    tc_hmap_get(&pending, pid, &k))
				continue;
			err = tc_hmap_put(&pending, pid, (uint32_t)i);
		}
	}
	tc_hmap_exit(&pending);
	return err;
}

#define HANDOFF_CHANNELS 12   /* mark channels looked at, as the delta table's pairs */

/* For each mark of channel a, the first mark of channel b at or after it with the same
 * value (into match[], SIZE_MAX: none). */
static int match_by_value(const struct tacho_timeline *t, uint32_t a, uint32_t b,
			  size_t *match, size_t *nmatch)
{
	struct tc_hmap next_b;   /* value -> the b of that value the walk saw last */
	int err = 0;

	*nmatch = 0;
	tc_hmap_init(&next_b);
	/* walk backwards: each b becomes the next b of its value for the items before it */
	for (size_t i = t->n; i-- > 0 && !err;) {
		const struct tc_tl_item *it = &t->items[i];
		uint32_t k;

		match[i] = SIZE_MAX;
		if (it->kind != TC_TL_MARK)
			continue;
		if (it->chan == b)
			err = tc_hmap_put(&next_b, it->value, (uint32_t)i);
		if (!err && it->chan == a && tc_hmap_get(&next_b, it->value, &k)) {
			match[i] = k;
			(*nmatch)++;
		}
	}
	tc_hmap_exit(&next_b);
	return err;
}

/* Which of the mark channels marks[0..nm) each thread marks: a bit per channel, the
 * union over threads in both[x] (the channels that share a thread with channel x). */
static int mark_threads(const struct tacho_timeline *t, const uint32_t *marks, size_t nm,
			uint16_t *both)
{
	struct tc_hmap idx;     /* tid -> its index in mask[] */
	uint16_t *mask = calloc(t->nthreads + 1, sizeof(*mask));
	size_t nmask = 0;
	int err = 0;

	if (!mask)
		return -ENOMEM;
	tc_hmap_init(&idx);
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct tc_tl_item *it = &t->items[i];
		uint32_t k;
		size_t x;

		if (it->kind != TC_TL_MARK)
			continue;
		for (x = 0; x < nm && marks[x] != it->chan; x++)
			;
		if (x == nm)
			continue;
		if (!tc_hmap_get(&idx, it->tid, &k)) {
			uint16_t *nmk;
			k = (uint32_t)nmask++;
			nmk = realloc(mask, (nmask + 1) * sizeof(*mask));
			err = nmk ? tc_hmap_put(&idx, it->tid, k) : -ENOMEM;
			if (nmk)
				mask = nmk;
			if (err)
				break;
			mask[k] = 0;
		}
		mask[k] |= (uint16_t)(1u << x);
	}
	for (size_t x = 0; x < nm; x++) {
		both[x] = 0;
		for (size_t k = 0; k < nmask; k++)
			if (mask[k] & (1u << x))
				both[x] |= mask[k];
	}
	tc_hmap_exit(&idx);
	free(mask);
	return err;
}

/* Hand-offs: two mark channels that no thread marks both of (a producer's and a
 * consumer's), each a of one to the next b of its value on the other: an item that one
 * thread marks (enqueue, id) and another takes (dequeue, id). */
static int handoff_flows(const struct tacho_timeline *t, struct flows *f)
{
	uint32_t marks[HANDOFF_CHANNELS];
	uint16_t both[HANDOFF_CHANNELS];
	size_t nm = 0, *match;
	int err;

	for (size_t c = 0; c < t->nch && nm < HANDOFF_CHANNELS; c++)
		if (t->ch[c].kind == TC_TL_MARK)
			marks[nm++] = (uint32_t)c;
	if (nm < 2)
		return 0;
	err = mark_threads(t, marks, nm, both);
	if (err)
		return err;
	match = malloc(t->n * sizeof(*match));
	if (!match)
		return -ENOMEM;
	for (size_t x = 0; x < nm && !err; x++)
		for (size_t y = 0; y < nm && !err; y++) {
			size_t nmatch;

			if (x == y || (both[x] & (1u << y)))
				continue;
			err = match_by_value(t, marks[x], marks[y], match, &nmatch);
			for (size_t i = 0; i < t->n && nmatch && !err; i++)
				if (match[i] != SIZE_MAX)
					err = flow_add(f, i, match[i], TC_TL_FLOW_HANDOFF);
		}
	free(match);
	return err;
}

int tc_timeline_flows(const struct tacho_timeline *t, struct tc_tl_flow **out, size_t *nout)
{
	struct flows f = { 0 };
	int err;

	*out = NULL;
	*nout = 0;
	if (!t->n)
		return 0;
	if (t->n >= UINT32_MAX)   /* the maps hold an item's index in 32 bits */
		return -TACHO_EOUTOFRANGE;
	f.start = calloc(t->n, sizeof(*f.start));
	f.end = calloc(t->n, sizeof(*f.end));
	err = f.start && f.end ? 0 : -ENOMEM;
	if (!err)
		err = sched_flows(t, &f);
	if (!err)
		err = handoff_flows(t, &f);
	free(f.start);
	free(f.end);
	if (err) {
		free(f.v);
		return err;
	}
	*out = f.v;
	*nout = f.n;
	return 0;
}
