/* record-open.c - a recording session's set-up: the events and how each one samples
 * (the call graph, the periods, tracepoint payloads, user-only events), the target
 * (a program, processes, every CPU) as a grid, and every event opened over it on the
 * engine, one ring per CPU; and the choice of periods, said. */
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events/events.h"
#include "events/tpformat.h"
#include "events/user-only.h"
#include "perf/engine.h"
#include "perf/perf.h"
#include "record/payload.h"
#include "record/record-int.h"
#include "tacho/counters.h"
#include "tacho/errors.h"

/* The user registers a DWARF sample carries: the x86-64 set perf asks for
 * (asm/perf_regs.h: AX..R15 without the segment registers DS, ES, FS, GS), which
 * holds every register the CFI of x86-64 code may name. */
#define X86_64_REGS_USER 0xff0fffull

/* Software events whose sample has a data address (the faulting address), and
 * breakpoints (the watched address). */
static bool event_has_addr(const struct perf_event_attr *a)
{
	if (a->type == PERF_TYPE_BREAKPOINT)
		return true;
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_PAGE_FAULTS || a->config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
		a->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ || a->config == PERF_COUNT_SW_ALIGNMENT_FAULTS ||
		a->config == PERF_COUNT_SW_EMULATION_FAULTS);
}

static bool event_is_time(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* A data breakpoint (bp_type with R or W) is a trap: the IP is the next instruction.
 * An execute breakpoint is a fault: the IP is the instruction itself. */
static bool event_is_trap(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_BREAKPOINT && (a->bp_type & (HW_BREAKPOINT_R | HW_BREAKPOINT_W));
}

/* The period tacho starts with while it measures the rate (calibration). Events that
 * occur at most a few hundred thousand times a second (software, tracepoints,
 * breakpoints) start at 1; hardware events at a prime near 100 000 (a cycles event at
 * 3 GHz then interrupts 30 000 times a second for the window, well under the kernel's
 * throttling limit). */
static uint64_t provisional_period(const struct rec_event *e)
{
	switch (e->source) {
	case TACHO_EVENT_SRC_SOFTWARE:
	case TACHO_EVENT_SRC_TRACEPOINT:
	case TACHO_EVENT_SRC_BREAKPOINT:
		return 1;
	default:
		return 100003;
	}
}

/* Tracepoint payloads: a tracepoint's samples carry its raw data (PERF_SAMPLE_RAW),
 * and the file keeps its format text once, so that the report decodes the fields
 * offline. The kernel gives raw tracepoint data to an unprivileged user only for the
 * tracepoints it marks safe (the syscalls, on a task: TRACE_EVENT_FL_CAP_ANY) and
 * refuses the open otherwise; without CAP_PERFMON or paranoid -1 the others are
 * recorded as before, without payloads. The sample_type is the session's: other events
 * then carry an empty raw part (4 bytes of size and 4 of padding). */
static void setup_payloads(struct session *s, const struct tc_perf_env *env)
{
	bool priv = tc_perf_env_privileged(env) || env->paranoid == -1;

	for (size_t i = 0; i < s->nev; i++) {
		struct rec_event *e = &s->ev[i];

		if (e->attr.type != PERF_TYPE_TRACEPOINT || (e->flags & TC_EVF_OFFCPU))
			continue;
		if (!priv && (s->o->system_wide || strncmp(e->name, "syscalls:", 9)))
			continue;
		if (tc_tracepoint_format(e->name, e->attr.config, &e->format, &e->format_len))
			continue;   /* no format, no payload: the samples stay as they were */
		e->flags |= TC_EVF_RAW;
		s->sample_type |= PERF_SAMPLE_RAW;
	}
}

/* --off-cpu: the last event is sched:sched_switch, sampled at every switch with its
 * payload (prev_state: whether the thread blocked) and with the switches back in
 * (attr.context_switch); it is written into the file as "offcpu-time", one sample a
 * blocked stack weighing the nanoseconds waited (record-offcpu.c). 0 or -errno with
 * *diag. */
static int setup_offcpu(struct session *s, struct tacho_diag *diag)
{
	struct rec_event *e = &s->ev[s->nev - 1];
	char *fmt = NULL, *name;
	size_t len = 0;
	int err;

	err = tc_tracepoint_format("sched:sched_switch", e->attr.config, &fmt, &len);
	if (!err)
		err = tc_payload_new(&s->payload);
	if (!err)
		err = tc_payload_add(s->payload, (uint32_t)(s->nev - 1), fmt, len);
	free(fmt);
	if (err)
		return tc_diag_set(diag, "sched:sched_switch", 0, 0, err, "--off-cpu cannot read "
				   "the format of sched:sched_switch: %s", tacho_strerror(err));
	name = tc_strdup("offcpu-time");
	if (!name)
		return -ENOMEM;
	free(e->name);
	e->name = name;
	e->flags = (e->flags & ~(uint32_t)(TC_EVF_FREQ | TC_EVF_RAW)) | TC_EVF_OFFCPU;
	e->calibrate = false;
	e->period = 1;
	e->attr.freq = 0;
	e->attr.sample_period = 1;
	e->attr.context_switch = 1;
	s->sample_type |= PERF_SAMPLE_RAW;
	s->offcpu_ev = s->nev - 1;
	return 0;
}

/* The call graph mode and its parameters, checked. 0 or -EINVAL / -EOPNOTSUPP. */
int tc_record_setup_call_graph(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;

	s->cg = o->call_graph;
	/* off-CPU time is where threads blocked: a stack, by frame pointers unless said */
	if (s->cg == TACHO_CALL_GRAPH_NONE && (o->callchain || o->off_cpu))
		s->cg = TACHO_CALL_GRAPH_FP;
	if (s->cg > TACHO_CALL_GRAPH_LBR)
		return tc_diag_set(diag, "record", 0, 0, -EINVAL, "unknown call graph mode %d",
				   (int)s->cg);
	if (o->stack_size && (s->cg != TACHO_CALL_GRAPH_DWARF || o->stack_size % 8 ||
			      o->stack_size > TC_USTACK_MAX))
		return tc_diag_set(diag, "record", 0, 0, -EINVAL, "the stack size is for dwarf "
				   "call graphs, a multiple of 8 from 8 to %u bytes, not %u",
				   TC_USTACK_MAX, o->stack_size);
	if (s->cg == TACHO_CALL_GRAPH_DWARF) {
#if defined(__x86_64__)
		s->regs_mask = X86_64_REGS_USER;
#else
		return tc_diag_set(diag, "record", 0, 0, -EOPNOTSUPP, "dwarf call graphs are "
				   "implemented for x86-64 only");
#endif
	}
	return 0;
}

int tc_record_setup_events(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	struct tacho_evlist *list = NULL;
	const char *spec = o->events;
	struct tc_perf_env env;
	struct tc_sb made_u = TC_SB_INIT;
	size_t n;
	bool priv;
	int err;

	tc_perf_env_probe(&env);
	priv = tc_perf_env_privileged(&env) || (env.paranoid != TC_PARANOID_UNKNOWN && env.paranoid <= 1);
	if (!spec || !*spec)
		spec = env.core_pmu[0] ? "cycles" : "cpu-clock";
	if (o->off_cpu) {
		/* the last event: sched_switch, written as "offcpu-time" (setup_offcpu) */
		if (!tc_perf_env_privileged(&env) && env.paranoid != -1)
			return tc_diag_set(diag, "--off-cpu", 0, 0, -EACCES, "--off-cpu "
					   "reads sched_switch's prev_state, which the kernel "
					   "gives only with CAP_PERFMON (root) or "
					   "kernel.perf_event_paranoid -1");
		struct tc_sb with = TC_SB_INIT;
		tc_sb_init(&with);
		tc_sb_addf(&with, "%s,sched:sched_switch", spec);
		if (with.oom) {
			tc_sb_exit(&with);
			return -ENOMEM;
		}
		err = tacho_evlist_parse(with.buf, &list, diag);
		tc_sb_exit(&with);
	} else {
		err = tacho_evlist_parse(spec, &list, diag);
	}
	if (err)
		return err;
	n = tacho_evlist_count(list);
	/* the file's samples carry an event's index in 16 bits (docs/record-format.md):
	 * that is the only limit; every event costs a descriptor per CPU or thread, which
	 * the engine's open explains when they run out */
	if (n == 0 || n > TC_RECORD_MAX_EVENTS) {
		tacho_evlist_free(list);
		return tc_diag_set(diag, spec, 0, 0, -TACHO_EOUTOFRANGE, "record takes 1 to %u "
				   "events, not %zu", TC_RECORD_MAX_EVENTS, n);
	}
	/* nev only once ev holds that many: session_free walks ev[0..nev) (a list of
	 * 360 events set nev, failed, and session_free walked a NULL ev) */
	s->ev = calloc(n, sizeof(*s->ev));
	if (!s->ev) {
		tacho_evlist_free(list);
		return -ENOMEM;
	}
	s->nev = n;
	/* PERF_SAMPLE_PERIOD only in frequency mode, where the kernel varies the period:
	 * with a fixed period a software event that is asked for the period samples EVERY
	 * event, each with period 1, whatever sample_period says (perf_swevent_event()
	 * in kernel/events/core.c). With a fixed period the file takes it from the event
	 * (and from the PERIOD record after calibration). */
	s->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	if (o->freq)
		s->sample_type |= PERF_SAMPLE_PERIOD;
	/* the kernel part of a chain comes from PERF_SAMPLE_CALLCHAIN in every mode; DWARF
	 * and LBR replace only its user part (fill_attr stops the kernel's walk of user
	 * frame pointers there) */
	if (s->cg != TACHO_CALL_GRAPH_NONE)
		s->sample_type |= PERF_SAMPLE_CALLCHAIN;
	if (s->cg == TACHO_CALL_GRAPH_DWARF)
		s->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	if (s->cg == TACHO_CALL_GRAPH_LBR)
		s->sample_type |= PERF_SAMPLE_BRANCH_STACK;
	/* with a period to calibrate, each sample carries its event's count, from which
	 * its weight is taken (read_weight); a kernel that refuses it with inherit (before
	 * Linux 6.12) is asked again without it (open_events) */
	if (!o->freq && !o->period)
		s->sample_type |= PERF_SAMPLE_READ;
	tc_sb_init(&made_u);
	for (size_t i = 0; i < s->nev; i++) {
		struct rec_event *e = &s->ev[i];
		struct perf_event_attr *a = &e->attr;

		e->name = tc_strdup(tacho_evlist_name(list, i));
		tacho_evlist_attr(list, i, a);
		e->source = tacho_evlist_source(list, i);
		if (event_has_addr(a))
			s->sample_type |= PERF_SAMPLE_ADDR, e->flags |= TC_EVF_ADDR;
		if (event_is_trap(a))
			e->flags |= TC_EVF_TRAP;
		if (s->cg != TACHO_CALL_GRAPH_NONE)
			e->flags |= TC_EVF_CALLCHAIN;
		if (s->cg == TACHO_CALL_GRAPH_DWARF)
			e->flags |= TC_EVF_USTACK;
		if (s->cg == TACHO_CALL_GRAPH_LBR)
			e->flags |= TC_EVF_BRANCH;
		if (o->period) {
			e->period = o->period;
		} else if (o->freq) {
			e->period = o->freq;
			e->flags |= TC_EVF_FREQ;
		} else if (event_is_time(a)) {
			/* the clocks count nanoseconds: 1 ms of CPU time is exactly 1000
			 * samples per CPU-second, with no calibration needed */
			e->period = 1000000000ull / (o->rate ? o->rate : DEFAULT_RATE);
		} else {
			e->calibrate = true;
			e->period = provisional_period(e);
		}
		if (e->flags & TC_EVF_FREQ) {
			a->freq = 1;
			a->sample_freq = e->period;
		} else {
			a->sample_period = e->period;
		}
		/* without privilege at paranoid 2 only user space may be sampled: named
		 * EVENT:u, and said once, as stat does */
		if (!priv && tc_user_only_applies(a)) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
			if (e->name) {
				char *u = tc_user_only_name(e->name);
				if (u)
					tc_sb_addf(&made_u, "%s%s", made_u.len ? ", " : "", u);
				free(e->name);
				e->name = u;
			}
		}
	}
	tacho_evlist_free(list);
	for (size_t i = 0; i < s->nev; i++)
		if (!s->ev[i].name) {
			tc_sb_exit(&made_u);
			return -ENOMEM;
		}
	if (made_u.oom || (made_u.len && tc_user_only_warn_verb(&env, "sampling", made_u.buf))) {
		tc_sb_exit(&made_u);
		return -ENOMEM;
	}
	tc_sb_exit(&made_u);
	setup_payloads(s, &env);
	if (o->off_cpu) {
		err = setup_offcpu(s, diag);
		if (err)
			return err;
	}
	return 0;
}

static unsigned pow2_floor(uint64_t v)
{
	unsigned p = 1;

	while ((uint64_t)p * 2 <= v && p < (1u << 30))
		p *= 2;
	return p;
}

unsigned tc_record_ring_pages(const struct tc_ring_need *n)
{
	uint64_t page = n->page_size ? n->page_size : 4096;
	uint64_t kb = n->mlock_kb ? n->mlock_kb : 512 + page / 1024;
	/* perf's own default (perf_event_mlock_kb_in_pages): the allowance less the
	 * control page, in pages, rounded down to a power of two */
	uint64_t allowance = kb > page / 1024 ? (kb - page / 1024) * 1024 / page : 1;
	unsigned base = pow2_floor(allowance ? allowance : 1);
	/* a sample's bytes: header, ip, pid/tid, time, id, cpu, period (tacho's sample
	 * type) and the sample_id of the records around it; a chain's entries, with
	 * its context markers; a DWARF sample's registers, size and stack */
	double bytes = 80;
	if (n->callchain)
		bytes += 8.0 * (TC_RING_CHAIN_GUESS + 2);
	if (n->stack_size)
		bytes += 8.0 * 20 + 16 + n->stack_size;
	double want = n->rate > 0 ? n->rate * bytes * TC_RING_HOLD_MS / 1000 : 0;
	uint64_t pages = 1, max;

	if (!n->unlimited)
		return base;
	while (pages < (1u << 30) && (double)(pages * page) < want)
		pages *= 2;
	max = pow2_floor(TC_RING_MAX_BYTES / page);
	if (n->ncpus && TC_RING_ALL_BYTES / n->ncpus / page < max)
		max = pow2_floor(TC_RING_ALL_BYTES / n->ncpus / page);
	if (pages > max)
		pages = max;
	return pages > base ? (unsigned)pages : base;
}

/* Whether the kernel's perf mlock limit binds this process: not with CAP_IPC_LOCK
 * (bit 14 of CapEff) nor at perf_event_paranoid -1 (kernel/events/core.c, perf_mmap). */
static bool mlock_unlimited(void)
{
	char *status = NULL;
	size_t len = 0;
	uint64_t caps = 0;
	long long paranoid;
	bool yes = false;

	if (tc_read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) == 0 &&
	    paranoid < 0)
		return true;
	if (tc_read_file("/proc/self/status", &status, &len, 0) == 0 &&
	    tc_parse_capeff(status, &caps) == 0)
		yes = caps >> 14 & 1;
	free(status);
	return yes;
}

/* The data pages of each ring: -m, else sized by tc_record_ring_pages from the rate
 * the events aim at (a frequency; a period of a software clock; else the calibrated
 * rate, or the default rate where a fixed period says nothing of it). */
static unsigned ring_pages(struct session *s)
{
	const struct tacho_record_opts *o = s->o;
	struct tc_ring_need n = { 0 };
	long long kb;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (o->mmap_pages)
		return o->mmap_pages;
	for (size_t i = 0; i < s->nev; i++) {
		const struct rec_event *e = &s->ev[i];
		const struct perf_event_attr *a = &e->attr;

		if (e->flags & TC_EVF_FREQ)
			n.rate += (double)e->period;
		else if (!e->calibrate && e->period && a->type == PERF_TYPE_SOFTWARE &&
			 (a->config == PERF_COUNT_SW_CPU_CLOCK ||
			  a->config == PERF_COUNT_SW_TASK_CLOCK))
			n.rate += 1e9 / (double)e->period;
		else
			n.rate += o->rate ? o->rate : DEFAULT_RATE;
	}
	n.callchain = s->cg != TACHO_CALL_GRAPH_NONE;
	n.stack_size = s->cg == TACHO_CALL_GRAPH_DWARF ?
			       (o->stack_size ? o->stack_size : DEFAULT_STACK) : 0;
	n.ncpus = cpus > 0 ? (unsigned)cpus : 1;
	n.page_size = (unsigned)sysconf(_SC_PAGESIZE);
	if (tc_read_int_file("/proc/sys/kernel/perf_event_mlock_kb", &kb) == 0 && kb > 0 &&
	    kb < (1ll << 31))
		n.mlock_kb = (unsigned)kb;
	n.unlimited = mlock_unlimited();
	return tc_record_ring_pages(&n);
}

/* The attributes of event i as the session samples it (the engine adds the ones it
 * owns: read_format, disabled, inherit, enable_on_exec). */
static void fill_attr(struct session *s, size_t i, struct perf_event_attr *a)
{
	const struct tacho_record_opts *o = s->o;
	unsigned pages = s->ring_pages;
	bool first = i == 0;

	*a = s->ev[i].attr;
	a->sample_type = s->sample_type;
	a->sample_id_all = 1;
	/* the side-band records come from the first event: the kernel gives a task's
	 * mappings, names, forks and exits to the events of that task (on its CPU), so
	 * the first event of every thread and CPU reports them once */
	a->mmap = first;
	a->mmap2 = first;
	a->comm = first;
	a->comm_exec = first;
	a->task = first;
	a->build_id = first;
	/* wake the reader when a quarter of the ring is full; the poll timeout flushes
	 * the rest so that the file keeps up with the recording */
	if (s->hooks && s->hooks->use_clockid) {
		a->use_clockid = 1;
		a->clockid = s->hooks->clockid;
	}
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((size_t)pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	if (s->cg != TACHO_CALL_GRAPH_NONE) {
		a->exclude_callchain_kernel = 0;
		a->sample_max_stack = 127;
	}
	if (s->cg == TACHO_CALL_GRAPH_DWARF) {
		a->exclude_callchain_user = 1;
		a->sample_regs_user = s->regs_mask;
		a->sample_stack_user = o->stack_size ? o->stack_size : DEFAULT_STACK;
	}
	if (s->cg == TACHO_CALL_GRAPH_LBR) {
		/* the call stack the LBR keeps (calls push, returns pop): user code only,
		 * the kernel part comes from the callchain */
		a->exclude_callchain_user = 1;
		a->branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK;
	}
}

/* The running processes recorded: opts.pid, or the hooks' list (tacho trace -p). */
size_t tc_record_target_pids(const struct session *s, const pid_t **pids)
{
	if (s->hooks && s->hooks->npids) {
		*pids = s->hooks->pids;
		return s->hooks->npids;
	}
	*pids = &s->o->pid;
	return 1;
}

/* Every thread of every target process. 0, or -errno with *diag naming the process. */
static int target_threads(const struct session *s, pid_t **tids, size_t *ntids,
			  struct tacho_diag *diag)
{
	const pid_t *pids;
	size_t n = tc_record_target_pids(s, &pids);
	int err = 0;

	*tids = NULL;
	*ntids = 0;
	for (size_t i = 0; i < n && !err; i++) {
		pid_t *t = NULL, *all;
		size_t nt = 0;

		err = tc_proc_threads(pids[i], &t, &nt);
		if (err) {
			tc_diag_set(diag, "record", 0, 0, err, "cannot record process %d: %s",
				    (int)pids[i], err == -ESRCH ? "no such process" :
				    tacho_strerror(err));
			break;
		}
		all = realloc(*tids, (*ntids + nt) * sizeof(*all));
		if (!all) {
			free(t);
			err = -ENOMEM;
			break;
		}
		memcpy(all + *ntids, t, nt * sizeof(*t));
		*tids = all;
		*ntids += nt;
		free(t);
	}
	return err;
}

/* The grid of the target: the program's threads and children (inherited) on every
 * CPU; every task on every CPU; each thread of a running process on every CPU. */
static int make_grid(struct session *s, struct tc_perf_grid *g, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	int *cpus = NULL;
	pid_t *tids = NULL, one;
	size_t ncpus = 0, ntids = 0;
	int err;

	err = tc_online_cpus(&cpus, &ncpus);
	if (err)
		return tc_diag_set(diag, "/sys/devices/system/cpu/online", 0, 0, err,
				   "cannot list the online CPUs: %s", tacho_strerror(err));
	if (o->system_wide) {
		err = tc_perf_grid_init(g, cpus, ncpus, NULL, 0);
	} else if (s->child_mode) {
		one = tacho_child_pid(s->child);
		err = tc_perf_grid_init(g, cpus, ncpus, &one, 1);
	} else {
		err = target_threads(s, &tids, &ntids, diag);
		if (!err)
			err = tc_perf_grid_init(g, cpus, ncpus, tids, ntids);
	}
	free(cpus);
	free(tids);
	return err;
}

/* Phase 2: every event on every cell of the grid, one ring per CPU. */
int tc_record_open_events(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	unsigned pages = s->res->ring_pages = s->ring_pages = ring_pages(s);
	struct tc_perf_grid grid = { 0 };
	unsigned flags = 0;
	size_t bad = 0, opened = 0;
	bool sharing = false;
	int err;

	err = tc_perf_list_new(&s->list);
	if (err)
		return err;
	for (size_t i = 0; i < s->nev; i++) {
		struct perf_event_attr a;

		fill_attr(s, i, &a);
		err = tc_perf_list_add(s->list, &a, s->ev[i].name, TACHO_GROUP_NONE);
		if (err < 0)
			return err;
	}
	err = make_grid(s, &grid, diag);
	if (err)
		return err;
	/* a program is followed into its threads and children, and starts counting at
	 * exec; a running process's threads are followed too; whole CPUs need neither */
	if (s->child_mode)
		flags |= TC_PERF_ENABLE_ON_EXEC;
	if (!o->system_wide)
		flags |= TC_PERF_INHERIT;
	if (!s->child_mode && !o->system_wide)
		flags |= TC_PERF_SKIP_GONE;
	err = tc_perf_list_open(s->list, &grid, flags);
	tc_perf_grid_exit(&grid);
	if (err)
		return err;
	for (size_t i = 0; i < s->nev; i++) {
		struct tc_perf_ev *e = tc_perf_list_event(s->list, i);
		struct tc_perf_env env;
		struct perf_event_attr a;
		enum tacho_hint hint;
		char why[512];
		unsigned ctx;
		int ferr = tc_perf_ev_error(e, &ctx, &a);

		opened += tc_perf_ev_nopen(e);
		if (!ferr && tc_perf_ev_nopen(e) && tc_perf_ev_silent(e)) {
			/* it opens, and would write no sample: its source never fires here.
			 * Refused before the program runs, as an event that does not open */
			err = tc_diag_set(diag, s->ev[i].name, 0, 0, -TACHO_ESILENT,
					  "cannot sample '%s': %s", s->ev[i].name,
					  tc_perf_ev_silent(e));
			if (diag)
				diag->hint = TACHO_HINT_MACHINE;
			return err;
		}
		if (!ferr)
			continue;
		if (ferr == -EINVAL && (s->sample_type & PERF_SAMPLE_READ)) {
			/* PERF_SAMPLE_READ with inherit: Linux 6.12 and later. Without it
			 * the weights are the periods' labels (tc_record_calibrate). */
			tc_perf_list_free(s->list);
			s->list = NULL;
			s->sample_type &= ~(uint64_t)PERF_SAMPLE_READ;
			return tc_record_open_events(s, diag);
		}
		/* the explainer with the context of the refusal: a CPU-wide open is told
		 * apart from a task's */
		tc_perf_env_probe(&env);
		tc_perf_explain(&env, ferr, &a, NULL, ctx, why, sizeof(why), &hint);
		if (s->cg == TACHO_CALL_GRAPH_LBR && ferr == -EOPNOTSUPP) {
			/* the explainer knows events, not branch sampling: say what failed */
			snprintf(why, sizeof(why), "this CPU (or VM) gives no last-branch "
				 "records in call-stack mode for it (%s); use --call-graph dwarf "
				 "or fp", tacho_strerror(ferr));
			hint = TACHO_HINT_NONE;
		}
		err = tc_diag_set(diag, s->ev[i].name, 0, 0, ferr, "cannot sample '%s': %s",
				  s->ev[i].name, why);
		if (diag)
			diag->hint = hint;
		return err;
	}
	if (!opened)
		return tc_diag_set(diag, "record", 0, 0, -ESRCH, "cannot record process %d: "
				   "no such process", (int)o->pid);
	err = tc_perf_list_mmap(s->list, pages, &bad, &sharing);
	if (err && !sharing)
		return tc_diag_set(diag, s->ev[bad].name, 0, 0, err,
				   "cannot map the sample buffer of '%s' (%u pages): %s",
				   s->ev[bad].name, pages, tacho_strerror(err));
	if (err)
		return tc_diag_set(diag, s->ev[bad].name, 0, 0, err,
				   "cannot share the sample buffer for '%s': %s",
				   s->ev[bad].name, tacho_strerror(err));
	return 0;
}

void tc_record_describe_choice(struct session *s)
{
	for (size_t i = 0; i < s->nev; i++) {
		const struct rec_event *e = &s->ev[i];
		char g[32];
		if (e->flags & TC_EVF_OFFCPU)
			tc_record_notify(s, "sampling %s: every switch of the threads (sched_switch); "
					 "each stack that blocked weighs the ns until it ran again",
					 e->name);
		else if (e->flags & TC_EVF_FREQ)
			tc_record_notify(s, "sampling %s at %" PRIu64 " samples per second "
					 "(frequency mode: the kernel adjusts the period)", e->name,
					 e->period);
		else if (e->calibrate)
			tc_record_notify(s, "sampling %s: measuring its rate for %u ms to choose a "
					 "period for about %u samples per second", e->name,
					 s->o->calibrate_ms ? s->o->calibrate_ms : DEFAULT_CALIBRATE_MS,
					 s->o->rate ? s->o->rate : DEFAULT_RATE);
		else if (!s->o->period && event_is_time(&e->attr))
			tc_record_notify(s, "sampling %s every %s ns of CPU time (period %" PRIu64
					 ", %u samples per CPU-second)", e->name,
					 tc_fmt_grouped(e->period, g, sizeof(g)), e->period,
					 s->o->rate ? s->o->rate : DEFAULT_RATE);
		else
			tc_record_notify(s, "sampling %s every %" PRIu64 " events", e->name, e->period);
	}
	snprintf(s->res->choice, sizeof(s->res->choice), "%s", s->msg);
}
