/* record-offcpu.c - off-CPU time (record --off-cpu): the sched_switch samples of a
 * thread that blocked (its call chain is where it blocked: the tracepoint fires in the
 * context of the task switched out) are held until the thread's switch back in
 * (PERF_RECORD_SWITCH), and written then as samples of "offcpu-time" whose period is
 * the nanoseconds between the two. */
#include <stdlib.h>
#include <string.h>

#include "perf/engine.h"
#include "record/payload.h"
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

/* The switches of all threads in one order: by thread, then time; an out before an in
 * of the same time. */
struct item {
	uint64_t time;
	uint32_t tid;
	uint32_t out;           /* 1: outs[idx]; 0: an in */
	size_t idx;
};

static int item_cmp(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return (int)b->out - (int)a->out;
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
	struct item *it;
	size_t n, keep = 0;
	bool *used;

	if (!o || (!o->nins && !final))
		return;
	n = o->nouts + o->nins;
	it = malloc((n ? n : 1) * sizeof(*it));
	used = calloc(o->nouts ? o->nouts : 1, sizeof(*used));
	if (!it || !used) {
		free(it);
		free(used);
		return;
	}
	for (size_t i = 0; i < o->nouts; i++)
		it[i] = (struct item){ o->outs[i].time, o->outs[i].tid, 1, i };
	for (size_t i = 0; i < o->nins; i++)
		it[o->nouts + i] = (struct item){ o->ins[i].time, o->ins[i].tid, 0, i };
	qsort(it, n, sizeof(*it), item_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct item *cur = &it[i];

		if (!cur->out)
			continue;
		/* the next switch of this thread: an in pairs, another out orphans this one */
		if (i + 1 < n && it[i + 1].tid == cur->tid && !it[i + 1].out) {
			write_out(s, ev, &o->outs[cur->idx], it[i + 1].time - cur->time);
			used[cur->idx] = true;
		} else if (final || (i + 1 < n && it[i + 1].tid == cur->tid)) {
			used[cur->idx] = true;
			o->unmatched++;
		}
	}
	for (size_t i = 0; i < o->nouts; i++) {
		if (used[i]) {
			free(o->outs[i].chain);
			continue;
		}
		o->outs[keep++] = o->outs[i];
	}
	o->nouts = keep;
	o->nins = 0;
	free(it);
	free(used);
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
