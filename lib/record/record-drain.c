/* record-drain.c - what the rings of a recording session hold, into its file: the
 * samples (weighed by their counts while a period is calibrated), mappings, names,
 * tasks, losses and throttling; the losses no record told; and the "Sample After"
 * calibration of the periods from the first window's counts. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "perf/engine.h"
#include "record/record-int.h"
#include "tacho/counters.h"

/* The count one counter had at its last sample: a counter is an event's descriptor
 * (its id), and with inherit each thread's copy of it (the samples of every copy carry
 * the descriptor's id, and each copy's own count). */
struct count_slot {
	uint64_t id, tid, value;
};

/* The layout of PERF_RECORD_MMAP2 (the perf syscall's manual page): pid, tid, addr,
 * len, pgoff, then maj/min/ino/ino_generation or (with PERF_RECORD_MISC_MMAP_BUILD_ID)
 * the build-id, then prot, flags, filename. */
struct k_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct { uint32_t maj, min; uint64_t ino, ino_generation; } dev;
		struct { uint8_t size, res1; uint16_t res2; uint8_t id[20]; } bid;
	} u;
	uint32_t prot, flags;
	char filename[];
};

struct k_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

/* The slot of counter (id, tid), made when new. NULL when out of memory. */
static struct count_slot *count_slot(struct session *s, uint64_t id, uint64_t tid)
{
	size_t mask, i;

	if (2 * (s->ncounts + 1) > s->counts_cap) {
		size_t cap = s->counts_cap ? 2 * s->counts_cap : 64;
		struct count_slot *t = calloc(cap, sizeof(*t));
		if (!t)
			return NULL;
		for (size_t k = 0; k < s->counts_cap; k++) {
			struct count_slot *o = &s->counts[k];
			if (!o->id)
				continue;
			for (i = (o->id * 31 + o->tid) & (cap - 1); t[i].id; i = (i + 1) & (cap - 1))
				;
			t[i] = *o;
		}
		free(s->counts);
		s->counts = t;
		s->counts_cap = cap;
	}
	mask = s->counts_cap - 1;
	for (i = (id * 31 + tid) & mask; s->counts[i].id; i = (i + 1) & mask)
		if (s->counts[i].id == id && s->counts[i].tid == tid)
			return &s->counts[i];
	s->counts[i].id = id;
	s->counts[i].tid = tid;
	s->ncounts++;
	return &s->counts[i];
}

/* A sample's weight from the count it carries (PERF_SAMPLE_READ): the events its
 * counter counted since the counter's previous sample, whatever the period was then.
 * This is what keeps the weights exact across a change of period: the kernel starts a
 * software event's new period with an overflow on its next occurrence, still counted
 * with the old period (perf_swevent_set_period() uses last_period), which from period
 * 1 gives two samples for that one occurrence. 0 for such a repeat; the label when
 * the count went backwards (never seen). */
static uint64_t read_weight(struct session *s, const struct tc_perf_sample *smp, uint64_t label)
{
	struct count_slot *c = count_slot(s, smp->id, s->o->system_wide ? 0 : smp->tid);
	uint64_t w;

	if (!c)
		return label;
	w = smp->value >= c->value ? smp->value - c->value : label;
	c->value = smp->value;
	return w;
}

/* Samples the kernel said were lost on the ring of cpu (the sample_id's CPU of its
 * LOST record: tacho's sample type has PERF_SAMPLE_CPU), in the total and by CPU. */
static void account_lost(struct session *s, uint64_t n, uint32_t cpu)
{
	s->res->lost += n;
	if (cpu < TACHO_RECORD_LOST_CPUS)
		s->res->lost_cpu[cpu] += n;
	else
		s->res->lost_cpu_more += n;
}

static int on_record(void *arg, const struct perf_event_header *h)
{
	struct session *s = arg;
	struct tc_perf_sample_id sid;

	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct tc_perf_sample smp;
		uint64_t ev;
		if (tc_perf_parse_sample_regs(s->sample_type, s->regs_mask, h, &smp) != 0) {
			s->unparsed++;   /* told after the last drain; never stop the drain */
			return 0;
		}
		if (s->nev > 1) {
			int i = tc_perf_list_event_of_id(s->list, smp.id);
			ev = i >= 0 ? (uint64_t)i : 0;
		} else {
			ev = 0;
		}
		if (ev < s->nev && (s->ev[ev].flags & TC_EVF_OFFCPU)) {
			tc_record_offcpu_sample(s, (uint32_t)ev, &smp);
			break;   /* written when the thread runs again */
		}
		if (!(s->sample_type & PERF_SAMPLE_PERIOD))
			smp.period = s->ev[ev].period;
		if (s->sample_type & PERF_SAMPLE_READ) {
			smp.period = read_weight(s, &smp, smp.period);
			if (!smp.period)
				break;  /* the same occurrence again: it has its sample */
		}
		tc_record_writer_sample(&s->w, smp.time, smp.ip, smp.addr, smp.period, smp.pid,
					smp.tid, smp.cpu, (uint16_t)ev, smp.misc,
					(uint32_t)smp.nr, smp.chain);
		if (ev < s->nev && (s->ev[ev].flags & TC_EVF_RAW) && smp.raw_size)
			tc_record_writer_raw(&s->w, (uint32_t)ev, smp.raw, smp.raw_size);
		/* the stack or branches follow their sample, in the same flush */
		if (smp.regs_abi && smp.nregs)
			tc_record_writer_ustack(&s->w, smp.regs_abi, s->regs_mask, smp.nregs,
						smp.regs, smp.stack, (uint32_t)smp.stack_dyn);
		if (smp.bnr)
			tc_record_writer_branch(&s->w, (uint32_t)smp.bnr, smp.branches);
		s->res->samples++;
		s->kernel_samples += (smp.misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
				     PERF_RECORD_MISC_KERNEL;
		if (ev < s->nev)
			s->ev[ev].samples++;
		break;
	}
	case PERF_RECORD_MMAP2: {
		const struct k_mmap2 *m = (const void *)h;
		size_t max;
		char name[4096];
		if (h->size < sizeof(*m))
			break;
		max = h->size - sizeof(*m);
		snprintf(name, sizeof(name), "%.*s", (int)strnlen(m->filename, max), m->filename);
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		if (!(m->prot & 4 /* PROT_EXEC */))
			break;
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID && m->u.bid.size <= 20)
			tc_sideband_mmap(&s->side, m->pid, m->tid, m->addr, m->len, m->pgoff,
					 m->prot, sid.time, m->u.bid.id, m->u.bid.size, name);
		else
			tc_sideband_mmap(&s->side, m->pid, m->tid, m->addr, m->len, m->pgoff,
					 m->prot, sid.time, NULL, 0, name);
		break;
	}
	case PERF_RECORD_COMM: {
		const uint32_t *p = (const void *)(h + 1);
		const char *comm = (const char *)(p + 2);
		char name[64];
		size_t max;
		if (h->size < sizeof(*h) + 8)
			break;
		max = h->size - sizeof(*h) - 8;
		snprintf(name, sizeof(name), "%.*s", (int)strnlen(comm, max), comm);
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_record_writer_comm(&s->w, p[0], p[1], h->misc & PERF_RECORD_MISC_COMM_EXEC,
				      sid.time, name);
		/* a process named: the cgroup it is in (read now, while it lives) */
		if (p[0] == p[1])
			tc_sideband_cgroup(&s->side, p[0], sid.time);
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		const struct k_task *t = (const void *)h;
		if (h->size < sizeof(*t))
			break;
		tc_record_writer_task(&s->w,
				      h->type == PERF_RECORD_FORK ? TC_TASK_FORK : TC_TASK_EXIT,
				      t->pid, t->ppid, t->tid, t->ptid, t->time);
		/* a new process: its cgroup, which may not be its parent's */
		if (h->type == PERF_RECORD_FORK && t->pid == t->tid && t->pid != t->ppid)
			tc_sideband_cgroup(&s->side, t->pid, t->time);
		break;
	}
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		/* only "offcpu-time" asks for switches (attr.context_switch); a CPU's
		 * event (-a) has the CPU-wide form, whose switch in the kernel writes as
		 * the task switched in: its sample id names that task too */
		if (h->misc & PERF_RECORD_MISC_SWITCH_OUT)
			break;
		if (tc_perf_parse_sample_id(s->sample_type, h, &sid) == 0)
			tc_record_offcpu_in(s, sid.tid, sid.time);
		break;
	case PERF_RECORD_LOST: {
		const uint64_t *p = (const void *)(h + 1);   /* id, lost */
		if (h->size < sizeof(*h) + 16)
			break;
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_record_writer_lost(&s->w, p[1], sid.time, sid.cpu);
		account_lost(s, p[1], sid.cpu);
		break;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		const uint64_t *p = (const void *)(h + 1);   /* lost */
		if (h->size < sizeof(*h) + 8)
			break;
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_record_writer_lost(&s->w, p[0], sid.time, sid.cpu);
		account_lost(s, p[0], sid.cpu);
		break;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		const uint64_t *p = (const void *)(h + 1);   /* time, id, stream_id */
		if (h->size < sizeof(*h) + 24)
			break;
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_record_writer_throttle(&s->w, p[0], sid.cpu,
					  h->type == PERF_RECORD_THROTTLE);
		if (h->type == PERF_RECORD_THROTTLE)
			s->res->throttled++;
		break;
	}
	default:
		break;
	}
	return 0;
}

/* The kernel writes a PERF_RECORD_LOST only just before its next record on that ring:
 * when the ring was still full as the program ended, the last losses reach the file in
 * no record at all. With period 1 every event is a sample, so the count (summed over
 * CPUs and, through inherit, over exited threads and children) says exactly how many
 * were due; what arrived neither as a sample nor in a LOST record was dropped too (a
 * full ring at the end, or throttling) and is counted as lost, never hidden. Larger
 * periods are left alone: each inherited task keeps its own remainder, so the count
 * would overstate what was due. Call after the final drain, with the events disabled. */
void tc_record_account_unreported_lost(struct session *s)
{
	uint64_t due = 0, got = 0, extra;

	for (size_t e = 0; e < s->nev; e++) {
		struct tc_perf_count c;

		/* off-CPU samples are switches that blocked, not every switch counted */
		if (s->ev[e].flags & TC_EVF_OFFCPU)
			continue;
		if (s->ev[e].calibrate || (s->ev[e].flags & TC_EVF_FREQ) || s->ev[e].period != 1)
			return;
		if (tc_perf_ev_read(tc_perf_list_event(s->list, e), &c) == 0)
			due += c.raw;
		got += s->ev[e].samples;
	}
	if (due <= got + s->res->lost)
		return;
	extra = due - got - s->res->lost;
	/* no CPU is known: the file says so (TC_LOST_NO_CPU), not CPU 0 */
	tc_record_writer_lost(&s->w, extra, 0, TC_LOST_NO_CPU);
	s->res->lost += extra;
	s->res->lost_unattributed += extra;
}

int tc_record_drain_all(struct session *s, bool final)
{
	tc_perf_list_drain(s->list, on_record, s);
	if (s->o->off_cpu)
		tc_record_offcpu_resolve(s, (uint32_t)s->offcpu_ev, final);
	if (s->hooks && s->hooks->drain) {
		int err = s->hooks->drain(s->hooks->arg, &s->w, final);
		if (err && !s->w.err)
			s->w.err = err;
	}
	return tc_record_writer_flush(&s->w);
}

/* VTune's "Sample After" calibration (seed 004): from the count of the first window,
 * the period that gives about `rate` samples per second of the program's CPU time,
 * applied to every open descriptor of the event by the engine. */
void tc_record_calibrate(struct session *s, bool final)
{
	unsigned rate = s->o->rate ? s->o->rate : DEFAULT_RATE;

	for (size_t e = 0; e < s->nev; e++) {
		struct tc_perf_ev *pe = tc_perf_list_event(s->list, e);
		struct tc_perf_count c = { 0 };
		uint64_t count, running, period;
		char g[32];

		if (!s->ev[e].calibrate)
			continue;
		/* running time summed over CPUs (and, through inherit, threads): the
		 * program's CPU time, the base of "samples per second" that cpu-clock's
		 * 1 ms period also has */
		if (tc_perf_ev_read(pe, &c))
			memset(&c, 0, sizeof(c));
		count = c.raw;
		running = c.running;
		if (!running || !count) {
			if (!final)
				continue;
			tc_record_notify(s, "%s: no events in the first %u ms; keeping the period "
					 "of %" PRIu64, s->ev[e].name, s->o->calibrate_ms ?
					 s->o->calibrate_ms : DEFAULT_CALIBRATE_MS, s->ev[e].period);
			continue;
		}
		period = (uint64_t)((double)count * 1e9 / (double)running / rate + 0.5);
		if (period < 1)
			period = 1;
		/* A change drops the events since the last sample (the kernel starts the new
		 * period afresh: period_left = 0, even for the same period), which no weight
		 * then stands for. From the provisional period 1 nothing is pending; later
		 * steps change only a period off by more than twice, so that the weights
		 * stay within a period or two of the true count. */
		if (s->ev[e].period > 1 && period < 2 * s->ev[e].period &&
		    2 * period > s->ev[e].period)
			period = s->ev[e].period;
		if (period != s->ev[e].period) {
			/* without PERF_SAMPLE_READ (read_weight, Linux 6.12 for inherited
			 * events) the samples in the rings were taken with the old period and
			 * are labelled with the event's period as they are drained: write them
			 * out with it before the change and again right after it, for those
			 * the program wrote while tacho was between the two (it may be
			 * preempted there; a sample cannot carry its own period: with a
			 * fixed period, PERF_SAMPLE_PERIOD makes a software event sample
			 * every event). Only the samples of the new period that land in the
			 * short time between the change and the second drain are taken for
			 * old ones: an undercount, never the old samples counted P times. */
			tc_perf_list_drain(s->list, on_record, s);
			tc_perf_ev_set_period(pe, period);
			tc_perf_list_drain(s->list, on_record, s);
			s->ev[e].period = period;
			tc_record_writer_period(&s->w, (uint32_t)e, period, 0);
		}
		if (!final)
			continue;
		tc_record_notify(s, "%s: %s events per CPU-second in the program's first %.0f ms "
				 "of CPU time: sampling every %" PRIu64 " events (about %u samples "
				 "per CPU-second)", s->ev[e].name,
				 tc_fmt_grouped((uint64_t)((double)count * 1e9 / (double)running),
						g, sizeof(g)),
				 running / 1e6, period, rate);
		snprintf(s->res->choice, sizeof(s->res->choice), "%s", s->msg);
	}
}
