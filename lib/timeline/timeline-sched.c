/* timeline-sched.c - scheduling as thread states: the payloads of sched_switch and
 * sched_wakeup walked in time order into running, runnable, sleeping and blocked
 * slices per thread, for the text view and Chrome's JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline/timeline.h"

/* prev_state's bits as sched_switch's format prints them since Linux 4.14
 * (TASK_REPORT: __print_flags(prev_state & 0xff, "|", { 0x01, "S" }, { 0x02, "D" },
 * ...), "R" when none is set, and TASK_REPORT_MAX (0x100) a preemption, "R+") */
static const struct { unsigned bit; char letter; } state_bits[] = {
	{ 0x01, 'S' }, { 0x02, 'D' }, { 0x04, 'T' }, { 0x08, 't' }, { 0x10, 'X' },
	{ 0x20, 'Z' }, { 0x40, 'P' }, { 0x80, 'I' },
};

static enum tc_tl_state decode_state(uint64_t prev_state, char *letter)
{
	for (size_t i = 0; i < sizeof(state_bits) / sizeof(state_bits[0]); i++) {
		if (!(prev_state & state_bits[i].bit))
			continue;
		*letter = state_bits[i].letter;
		return *letter == 'S' ? TC_TL_SLEEPING : *letter == 'D' ? TC_TL_BLOCKED :
		       TC_TL_OTHER;
	}
	*letter = 'R';
	return TC_TL_RUNNABLE;
}

const char *tc_tl_state_name(enum tc_tl_state s, char letter, char *buf, size_t size)
{
	switch (s) {
	case TC_TL_RUNNING: return "running";
	case TC_TL_RUNNABLE: return "runnable";
	case TC_TL_SLEEPING: return "sleeping";
	case TC_TL_BLOCKED: return "blocked (D)";
	default:
		snprintf(buf, size, "%s (%c)", letter == 'T' || letter == 't' ? "stopped" :
			 letter == 'I' ? "idle" : letter == 'P' ? "parked" : "dead", letter);
		return buf;
	}
}

struct th_state {
	uint32_t pid, tid;
	enum tc_tl_state state;   /* 0: not known yet */
	char letter;
	uint64_t since;
};

struct walk {
	struct tc_tl_slice *out;
	size_t n, a;
};

static int slice_add(struct walk *w, const struct th_state *s, uint64_t end)
{
	/* an instant is no slice (a trace of a program sees its threads leave the CPU,
	 * not come back: the switch is the next item of their own) */
	if (!s->state || end <= s->since)
		return 0;
	if (w->n == w->a) {
		size_t a = w->a ? w->a * 2 : 256;
		struct tc_tl_slice *n = realloc(w->out, a * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->out = n;
		w->a = a;
	}
	w->out[w->n++] = (struct tc_tl_slice){ .pid = s->pid, .tid = s->tid, .state = s->state,
					       .letter = s->letter, .begin = s->since, .end = end };
	return 0;
}

/* Thread tid enters state at time: the state it leaves becomes a slice. */
static int enter(struct walk *w, struct th_state *th, enum tc_tl_state state, char letter,
		 uint64_t time)
{
	int err;

	if (th->state == state && th->letter == letter)
		return 0;
	err = slice_add(w, th, time);
	th->state = state;
	th->letter = letter;
	th->since = time;
	return err;
}

static int slice_cmp(const void *a, const void *b)
{
	const struct tc_tl_slice *x = a, *y = b;

	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int tc_timeline_states(const struct tacho_timeline *t, struct tc_tl_slice **out, size_t *nout)
{
	struct th_state *ths;
	struct tc_hmap idx;
	struct walk w = { 0 };
	int err = 0;

	*out = NULL;
	*nout = 0;
	if (t->sched_switch == UINT32_MAX || !tc_payload_has(t->payload, t->sched_switch))
		return 0;
	ths = calloc(t->nthreads ? t->nthreads : 1, sizeof(*ths));
	if (!ths)
		return -ENOMEM;
	tc_hmap_init(&idx);
	for (size_t i = 0; i < t->nthreads && !err; i++) {
		ths[i].pid = t->threads[i].pid;
		ths[i].tid = t->threads[i].tid;
		err = tc_hmap_put(&idx, t->threads[i].tid, (uint32_t)i);
	}
	for (size_t i = 0; i < t->n && !err; i++) {
		const struct tc_tl_item *it = &t->items[i];
		uint64_t prev, next, state, pid;
		const void *raw;
		size_t size;
		uint32_t k;
		char letter;

		/* whatever a thread writes or triggers, it runs then (a sample's thread is
		 * the one on the CPU): where the trace sees no switch-in (a trace of a
		 * program records sched_switch only as its threads leave a CPU), a thread
		 * runs from its next item on */
		if (tc_hmap_get(&idx, it->tid, &k) && ths[k].state != TC_TL_RUNNING &&
		    ths[k].state)
			err = enter(&w, &ths[k], TC_TL_RUNNING, 'R', it->time);
		if (err || it->kind != TC_TL_EVENT || tc_tl_raw(t, it, &raw, &size))
			continue;
		if (it->event == t->sched_switch) {
			/* a payload that does not decode is no switch */
			if (tc_payload_num(t->payload, it->event, raw, size, "prev_pid", &prev) ||
			    tc_payload_num(t->payload, it->event, raw, size, "prev_state", &state) ||
			    tc_payload_num(t->payload, it->event, raw, size, "next_pid", &next))
				continue;
			enum tc_tl_state st = decode_state(state, &letter);
			if (prev && tc_hmap_get(&idx, (uint32_t)prev, &k))
				err = enter(&w, &ths[k], st, letter, it->time);
			if (!err && next && tc_hmap_get(&idx, (uint32_t)next, &k))
				err = enter(&w, &ths[k], TC_TL_RUNNING, 'R', it->time);
		} else if (it->event == t->sched_wakeup || it->event == t->sched_wakeup_new) {
			if (tc_payload_num(t->payload, it->event, raw, size, "pid", &pid) ||
			    !tc_hmap_get(&idx, (uint32_t)pid, &k))
				continue;
			/* a wake-up of a running thread (it was about to sleep) changes
			 * nothing */
			if (ths[k].state != TC_TL_RUNNING)
				err = enter(&w, &ths[k], TC_TL_RUNNABLE, 'R', it->time);
		}
	}
	uint64_t last = t->n ? t->items[t->n - 1].time : 0;
	for (size_t i = 0; i < t->nthreads && !err; i++)
		if (ths[i].letter != 'X' && ths[i].letter != 'Z')
			err = slice_add(&w, &ths[i], last);
	tc_hmap_exit(&idx);
	free(ths);
	if (err) {
		free(w.out);
		return err;
	}
	if (w.n)
		qsort(w.out, w.n, sizeof(*w.out), slice_cmp);
	*out = w.out;
	*nout = w.n;
	return 0;
}
