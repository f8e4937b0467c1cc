/* record-offcpu.c - off-CPU time (record --off-cpu): the sched_switch samples of a
 * thread that blocked (its call chain is where it blocked: the tracepoint fires in the
 * context of the task switched out) are held until the thread's switch back in
 * (PERF_RECORD_SWITCH), and written then as samples of "offcpu-time" whose period is
 * the nanoseconds between the two. */
#include <stdlib.h>
#include <string.h>

#include "perf/engine.h"
#include "record/payload.h"
#include "record/offcpu.h"
#include "record/record-int.h"

/* A blocked thread's switch out, waiting for its switch in. */
struct offcpu_out {
	uint64_t time, ip;
	uint32_t pid, tid, cpu, nr;
	uint16_t misc;
	uint64_t *chain;        /* nr entries, malloc'd (NULL when nr is 0) */
};

/* A switch in, paired with its switch out after the drain that read it. */
struct offcpu_in {
	uint64_t time;
	uint32_t tid;
};

struct tc_offcpu {
	struct offcpu_out *outs;
	size_t nouts, outs_cap;
	struct offcpu_in *ins;
	size_t nins, ins_cap;
	uint64_t unmatched;     /* switches out that never came back in (the thread ended,
				   or its switch in was lost) */
};

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	void *t;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 256;
	t = realloc(*arr, c * size);
	if (!t)
		return -1;
	*arr = t;
	*cap = c;
	return 0;
}

static struct tc_offcpu *state(struct session *s)
{
	if (!s->offcpu)
		s->offcpu = calloc(1, sizeof(*s->offcpu));
	return s->offcpu;
}

/* Whether sched_switch's prev_state says the task blocked. The kernel reports a task
 * still runnable (preempted, or yielding) with no state bit in the low byte: 0, or
 * 0 with a "preempted" flag above the state bits (TASK_REPORT_MAX, 0x100 since Linux
 * 4.14; TASK_STATE_MAX before). S, D, T, t, X, Z, P and I are bits 0x01 to 0x80; X
 * (0x10) and Z (0x20) are a thread's last switch as it exits: no wait, no end. */
static bool blocked(uint64_t prev_state)
{
	return (prev_state & 0xff) != 0 && !(prev_state & 0x30);
}

void tc_record_offcpu_sample(struct session *s, uint32_t ev, const struct tc_perf_sample *smp)
{
	struct tc_offcpu *o = state(s);
	struct offcpu_out *out;
	uint64_t st;

	if (!o || !smp->raw_size ||
	    tc_payload_num(s->payload, ev, smp->raw, smp->raw_size, "prev_state", &st) ||
	    !blocked(st))
		return;
	if (grow((void **)&o->outs, &o->outs_cap, o->nouts, sizeof(*o->outs)))
		return;
	out = &o->outs[o->nouts];
	memset(out, 0, sizeof(*out));
	if (smp->nr) {
		out->chain = malloc(smp->nr * sizeof(uint64_t));
		if (!out->chain)
			return;
		memcpy(out->chain, smp->chain, smp->nr * sizeof(uint64_t));
		out->nr = (uint32_t)smp->nr;
	}
	out->time = smp->time;
	out->ip = smp->ip;
	out->pid = smp->pid;
	out->tid = smp->tid;
	out->cpu = smp->cpu;
	out->misc = smp->misc;
	o->nouts++;
}

void tc_record_offcpu_in(struct session *s, uint32_t tid, uint64_t time)
{
	struct tc_offcpu *o = state(s);

	/* kept even with no out held: the out may lie in a ring this drain reads after
	 * this one; an in that pairs with nothing (a preempted thread's) is dropped by
	 * tc_record_offcpu_resolve */
	if (!o || grow((void **)&o->ins, &o->ins_cap, o->nins, sizeof(*o->ins)))
		return;
	o->ins[o->nins].time = time;
	o->ins[o->nins].tid = tid;
	o->nins++;
}

static int switch_cmp(const void *pa, const void *pb)
{
	const struct tc_offcpu_switch *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return (int)b->out - (int)a->out;   /* an out before an in of the same time */
}

void tc_offcpu_pair(struct tc_offcpu_switch *sw, size_t n, bool final,
		    void (*each)(void *arg, size_t out, bool paired, uint64_t waited), void *arg)
{
	qsort(sw, n, sizeof(*sw), switch_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct tc_offcpu_switch *cur = &sw[i];
		bool same_next = i + 1 < n && sw[i + 1].tid == cur->tid;

		if (!cur->out)
			continue;
		/* the next switch of this thread: an in pairs, another out orphans this one */
		if (same_next && !sw[i + 1].out)
			each(arg, cur->idx, true, sw[i + 1].time - cur->time);
		else if (final || same_next)
			each(arg, cur->idx, false, 0);
	}
}

struct resolve {
	struct session *s;
	uint32_t ev;
	bool *used;
};

static void write_out(struct session *s, uint32_t ev, const struct offcpu_out *out,
		      uint64_t waited);

static void on_pair(void *arg, size_t out, bool paired, uint64_t waited)
{
	struct resolve *r = arg;

	if (paired)
		write_out(r->s, r->ev, &r->s->offcpu->outs[out], waited);
	else
		r->s->offcpu->unmatched++;
	r->used[out] = true;
}

static void write_out(struct session *s, uint32_t ev, const struct offcpu_out *out,
		      uint64_t waited)
{
	tc_record_writer_sample(&s->w, out->time, out->ip, 0, waited, out->pid, out->tid,
				out->cpu, (uint16_t)ev, out->misc, out->nr, out->chain);
	s->res->samples++;
	s->ev[ev].samples++;
	s->kernel_samples += (out->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			     PERF_RECORD_MISC_KERNEL;
}

/* After a drain of every ring: a switch in drained now has its switch out drained too
 * (the out was written to its ring before the thread could run again), so each in
 * pairs with the latest out of its thread before it. An out followed by another out
 * lost its in (a full ring): dropped, as are outs never followed by an in at the end.
 * Outs still waiting stay for the next drain. */
void tc_record_offcpu_resolve(struct session *s, uint32_t ev, bool final)
{
	struct tc_offcpu *o = s->offcpu;
	struct tc_offcpu_switch *sw;
	struct resolve r = { s, ev, NULL };
	size_t n, keep = 0;

	if (!o || (!o->nins && !final))
		return;
	n = o->nouts + o->nins;
	sw = malloc((n ? n : 1) * sizeof(*sw));
	r.used = calloc(o->nouts ? o->nouts : 1, sizeof(*r.used));
	if (!sw || !r.used) {
		free(sw);
		free(r.used);
		return;
	}
	for (size_t i = 0; i < o->nouts; i++)
		sw[i] = (struct tc_offcpu_switch){ o->outs[i].time, o->outs[i].tid, true, i };
	for (size_t i = 0; i < o->nins; i++)
		sw[o->nouts + i] = (struct tc_offcpu_switch){ o->ins[i].time, o->ins[i].tid,
							      false, i };
	tc_offcpu_pair(sw, n, final, on_pair, &r);
	for (size_t i = 0; i < o->nouts; i++) {
		if (r.used[i]) {
			free(o->outs[i].chain);
			continue;
		}
		o->outs[keep++] = o->outs[i];
	}
	o->nouts = keep;
	o->nins = 0;
	free(sw);
	free(r.used);
}

uint64_t tc_record_offcpu_unmatched(const struct session *s)
{
	return s->offcpu ? s->offcpu->unmatched : 0;
}

void tc_record_offcpu_free(struct session *s)
{
	struct tc_offcpu *o = s->offcpu;

	if (!o)
		return;
	for (size_t i = 0; i < o->nouts; i++)
		free(o->outs[i].chain);
	free(o->outs);
	free(o->ins);
	free(o);
	s->offcpu = NULL;
}
