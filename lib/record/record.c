/* record.c - a sampling session in phases: resolve the events and how each one samples,
 * open them on the engine (one ring per CPU), start the file, run (poll, drain,
 * calibrate, pass signals on), finish. The side-band synthesis is sideband.c's. */
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "events/events.h"
#include "events/tpformat.h"
#include "events/user-only.h"
#include "perf/engine.h"
#include "symbols/buildid-cache.h"
#include "record/recfile.h"
#include "record/record.h"
#include "record/sideband.h"
#include "symbols/symbols.h"
#include "tacho/counters.h"
#include "tacho/errors.h"
#include "tacho/events.h"
#include "tacho/run.h"
#include "tacho/record.h"

#define DEFAULT_PAGES 128        /* 512 KiB of data per ring */
#define DEFAULT_FLUSH_MS 200
#define DEFAULT_CALIBRATE_MS 100
#define DEFAULT_RATE 1000
#define DEFAULT_STACK 8192       /* bytes of user stack per DWARF sample, as perf's */

/* The user registers a DWARF sample carries: the x86-64 set perf asks for
 * (asm/perf_regs.h: AX..R15 without the segment registers DS, ES, FS, GS), which
 * holds every register the CFI of x86-64 code may name. */
#define X86_64_REGS_USER 0xff0fffull

struct rec_event {
	char *name;
	struct perf_event_attr attr;
	enum tacho_event_source source;
	uint32_t flags;                 /* TC_EVF_* */
	bool calibrate;                 /* period to be chosen from the first window */
	uint64_t period;                /* fixed period, or frequency with TC_EVF_FREQ */
	uint64_t samples;               /* samples of this event written */
	char *format;                   /* TC_EVF_RAW: the tracepoint's format text */
	size_t format_len;
};

struct session {
	const struct tacho_record_opts *o;
	struct tacho_record_result *res;
	struct rec_event *ev;
	size_t nev;
	struct tc_perf_list *list;      /* the engine's events, one ring per CPU */
	uint64_t sample_type;
	enum tacho_call_graph cg;       /* the call graph mode in effect */
	uint64_t regs_mask;             /* sample_regs_user (DWARF) */
	struct tc_record_writer w;
	struct tc_sideband side;
	struct tc_bidcache *seen;       /* mapped files, for the build-id cache */
	uint64_t kernel_samples;        /* samples taken in the kernel */
	struct tacho_child *child;
	bool child_mode;
	int pidfd;
	const struct tc_record_hooks *hooks;
	uint64_t unparsed;              /* sample records too short for their fields */
	struct count_slot *counts;      /* PERF_SAMPLE_READ: last count per counter */
	size_t ncounts, counts_cap;     /* entries, slots (a power of two, or 0) */
	char msg[256];
};

/* The count one counter had at its last sample: a counter is an event's descriptor
 * (its id), and with inherit each thread's copy of it (the samples of every copy carry
 * the descriptor's id, and each copy's own count). */
struct count_slot {
	uint64_t id, tid, value;
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void notify(struct session *s, const char *fmt, ...) TC_PRINTF(2, 3);
static void notify(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	if (s->o->notify)
		s->o->notify(s->o->notify_arg, s->msg);
	else
		tc_log(TACHO_LOG_INFO, "%s", s->msg);
}

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

		if (e->attr.type != PERF_TYPE_TRACEPOINT)
			continue;
		if (!priv && (s->o->system_wide || strncmp(e->name, "syscalls:", 9)))
			continue;
		if (tc_tracepoint_format(e->name, e->attr.config, &e->format, &e->format_len))
			continue;   /* no format, no payload: the samples stay as they were */
		e->flags |= TC_EVF_RAW;
		s->sample_type |= PERF_SAMPLE_RAW;
	}
}

/* The call graph mode and its parameters, checked. 0 or -EINVAL / -EOPNOTSUPP. */
static int setup_call_graph(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;

	s->cg = o->call_graph;
	if (s->cg == TACHO_CALL_GRAPH_NONE && o->callchain)
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

static int setup_events(struct session *s, struct tacho_diag *diag)
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
	err = tacho_evlist_parse(spec, &list, diag);
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
	return 0;
}

/* The attributes of event i as the session samples it (the engine adds the ones it
 * owns: read_format, disabled, inherit, enable_on_exec). */
static void fill_attr(struct session *s, size_t i, struct perf_event_attr *a)
{
	const struct tacho_record_opts *o = s->o;
	unsigned pages = o->mmap_pages ? o->mmap_pages : DEFAULT_PAGES;
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
static size_t target_pids(const struct session *s, const pid_t **pids)
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
	size_t n = target_pids(s, &pids);
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

/* Whether every target process has ended. */
static bool targets_gone(const struct session *s)
{
	const pid_t *pids;
	size_t n = target_pids(s, &pids);

	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], 0) == 0 || errno != ESRCH)
			return false;
	return true;
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
static int open_events(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	unsigned pages = o->mmap_pages ? o->mmap_pages : DEFAULT_PAGES;
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
			 * the weights are the periods' labels (calibrate()). */
			tc_perf_list_free(s->list);
			s->list = NULL;
			s->sample_type &= ~(uint64_t)PERF_SAMPLE_READ;
			return open_events(s, diag);
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
		break;
	}
	case PERF_RECORD_LOST: {
		const uint64_t *p = (const void *)(h + 1);   /* id, lost */
		if (h->size < sizeof(*h) + 16)
			break;
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_record_writer_lost(&s->w, p[1], sid.time, sid.cpu);
		s->res->lost += p[1];
		break;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		const uint64_t *p = (const void *)(h + 1);   /* lost */
		if (h->size < sizeof(*h) + 8)
			break;
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_record_writer_lost(&s->w, p[0], sid.time, sid.cpu);
		s->res->lost += p[0];
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
static void account_unreported_lost(struct session *s)
{
	uint64_t due = 0, got = 0, extra;

	for (size_t e = 0; e < s->nev; e++) {
		struct tc_perf_count c;

		if (s->ev[e].calibrate || (s->ev[e].flags & TC_EVF_FREQ) || s->ev[e].period != 1)
			return;
		if (tc_perf_ev_read(tc_perf_list_event(s->list, e), &c) == 0)
			due += c.raw;
		got += s->ev[e].samples;
	}
	if (due <= got + s->res->lost)
		return;
	extra = due - got - s->res->lost;
	tc_record_writer_lost(&s->w, extra, 0, 0);
	s->res->lost += extra;
}

static int drain_all(struct session *s, bool final)
{
	tc_perf_list_drain(s->list, on_record, s);
	if (s->hooks && s->hooks->drain) {
		int err = s->hooks->drain(s->hooks->arg, &s->w, final);
		if (err && !s->w.err)
			s->w.err = err;
	}
	return tc_record_writer_flush(&s->w);
}

static void write_meta(struct session *s)
{
	const struct tacho_record_opts *o = s->o;
	struct tc_sb sb = TC_SB_INIT;
	struct utsname u;
	char buf[256];
	long long kr = -1;

	tc_sb_init(&sb);
	if (o->argv)
		for (size_t i = 0; o->argv[i]; i++)
			tc_sb_addf(&sb, "%s%s", i ? " " : "", o->argv[i]);
	else if (o->pid) {
		const pid_t *pids;
		size_t n = target_pids(s, &pids);
		for (size_t i = 0; i < n; i++)
			tc_sb_addf(&sb, "%s%d", i ? "," : "-p ", (int)pids[i]);
	}
	else
		tc_sb_adds(&sb, "-a");
	if (!sb.oom)
		tc_record_writer_meta(&s->w, "command", sb.buf);
	tc_sb_exit(&sb);
	tc_record_writer_meta(&s->w, "tacho", tacho_version());
	if (uname(&u) == 0) {
		tc_record_writer_meta(&s->w, "kernel", u.release);
		tc_record_writer_meta(&s->w, "hostname", u.nodename);
		tc_record_writer_meta(&s->w, "machine", u.machine);
	}
	if (tc_read_line_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) == 0)
		tc_record_writer_meta(&s->w, "boot_id", buf);
	if (tc_read_int_file("/proc/sys/kernel/kptr_restrict", &kr) == 0) {
		snprintf(buf, sizeof(buf), "%lld", kr);
		tc_record_writer_meta(&s->w, "kptr_restrict", buf);
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, now_ns(CLOCK_REALTIME));
	tc_record_writer_meta(&s->w, "start_realtime_ns", buf);
	/* perf's timestamps are the kernel's local clock; CLOCK_MONOTONIC is close */
	snprintf(buf, sizeof(buf), "%" PRIu64, now_ns(CLOCK_MONOTONIC));
	tc_record_writer_meta(&s->w, "start_monotonic_ns", buf);
	for (size_t i = 0; i < s->nev; i++)
		tc_record_writer_event(&s->w, (uint32_t)i, s->ev[i].attr.type,
				       s->ev[i].attr.config, s->sample_type, s->ev[i].period,
				       s->ev[i].flags, s->ev[i].name);
	for (size_t i = 0; i < s->nev; i++)
		if (s->ev[i].flags & TC_EVF_RAW)
			tc_record_writer_tpformat(&s->w, (uint32_t)i, s->ev[i].format,
						  s->ev[i].format_len);
}

static void describe_choice(struct session *s)
{
	for (size_t i = 0; i < s->nev; i++) {
		const struct rec_event *e = &s->ev[i];
		char g[32];
		if (e->flags & TC_EVF_FREQ)
			notify(s, "sampling %s at %" PRIu64 " samples per second (frequency mode: the "
			       "kernel adjusts the period)", e->name, e->period);
		else if (e->calibrate)
			notify(s, "sampling %s: measuring its rate for %u ms to choose a period for "
			       "about %u samples per second", e->name,
			       s->o->calibrate_ms ? s->o->calibrate_ms : DEFAULT_CALIBRATE_MS,
			       s->o->rate ? s->o->rate : DEFAULT_RATE);
		else if (!s->o->period && event_is_time(&e->attr))
			notify(s, "sampling %s every %s ns of CPU time (period %" PRIu64 ", %u samples "
			       "per CPU-second)", e->name, tc_fmt_grouped(e->period, g, sizeof(g)),
			       e->period, s->o->rate ? s->o->rate : DEFAULT_RATE);
		else
			notify(s, "sampling %s every %" PRIu64 " events", e->name, e->period);
	}
	snprintf(s->res->choice, sizeof(s->res->choice), "%s", s->msg);
}

/* VTune's "Sample After" calibration (seed 004): from the count of the first window,
 * the period that gives about `rate` samples per second of the program's CPU time,
 * applied to every open descriptor of the event by the engine. */
static void calibrate(struct session *s, bool final)
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
			notify(s, "%s: no events in the first %u ms; keeping the period of %" PRIu64,
			       s->ev[e].name, s->o->calibrate_ms ? s->o->calibrate_ms : DEFAULT_CALIBRATE_MS,
			       s->ev[e].period);
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
		notify(s, "%s: %s events per CPU-second in the program's first %.0f ms of CPU time: "
		       "sampling every %" PRIu64 " events (about %u samples per CPU-second)", s->ev[e].name,
		       tc_fmt_grouped((uint64_t)((double)count * 1e9 / (double)running), g, sizeof(g)),
		       running / 1e6, period, rate);
		snprintf(s->res->choice, sizeof(s->res->choice), "%s", s->msg);
	}
}

static void session_free(struct session *s)
{
	tc_perf_list_free(s->list);
	free(s->counts);
	for (size_t i = 0; i < s->nev; i++) {
		free(s->ev[i].name);
		free(s->ev[i].format);
	}
	free(s->ev);
	tc_sideband_exit(&s->side);
	tc_bidcache_free(s->seen);
	if (s->pidfd >= 0)
		close(s->pidfd);
	tacho_child_free(s->child);
}

/* Phase 3: the file and what is known before the first sample: the meta records, the
 * vDSO, the processes that already run, the choice of periods. 0; -errno with *diag
 * when the file cannot be created; 1 when a write failed (the caller closes and says
 * so). */
static int start_file(struct session *s, const char *out_path, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	int err;

	err = tc_record_writer_open(&s->w, out_path);
	if (err)
		return tc_diag_set(diag, out_path, 0, 0, err, "cannot write '%s': %s", out_path,
				   err == -ELOOP ? "it is a symbolic link, which tacho does not "
				   "follow" : tacho_strerror(err));
	write_meta(s);
	tc_sideband_vdso(&s->side);
	if (!s->child_mode && !o->system_wide) {
		const pid_t *pids;
		size_t n = target_pids(s, &pids);
		for (size_t i = 0; i < n; i++)
			tc_sideband_process(&s->side, pids[i]);
	} else if (o->system_wide)
		tc_sideband_all(&s->side);
	if (s->hooks && s->hooks->start) {
		err = s->hooks->start(s->hooks->arg, &s->w);
		if (err)
			return tc_diag_set(diag, out_path, 0, 0, err, "cannot start the trace: %s",
					   tacho_strerror(err));
	}
	if (tc_record_writer_flush(&s->w))
		return 1;
	describe_choice(s);
	return 0;
}

/* Phase 4a: counting starts: the program's exec (its events enable themselves there),
 * or an explicit enable. 0 or -errno with *diag. */
static int start_target(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	int err, exec_err = 0;

	if (!s->child_mode) {
		tc_perf_list_enable(s->list);
		/* one process: its pidfd wakes the loop when it ends; several are looked
		 * for at every wake-up */
		if (!o->system_wide && !(s->hooks && s->hooks->npids > 1))
			s->pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
		return 0;
	}
	if (o->system_wide)
		tc_perf_list_enable(s->list);
	err = tacho_child_exec(s->child, &exec_err);
	if (err) {
		s->res->exec_err = exec_err;
		tacho_exec_strerror(o->argv[0], exec_err, s->msg, sizeof(s->msg));
		return tc_diag_set(diag, o->argv[0], 0, 0, err, "%s", s->msg);
	}
	s->res->ran = true;
	s->pidfd = (int)syscall(SYS_pidfd_open, tacho_child_pid(s->child), 0);
	return 0;
}

/* A signal from the caller (*o->stop): passed on to the program once, SIGKILL the
 * second time; without a program, the end of the recording. */
static bool take_stop(struct session *s, bool *forwarded, bool *killed)
{
	const struct tacho_record_opts *o = s->o;

	if (!o->stop || !*o->stop)
		return false;
	if (!s->child_mode)
		return true;
	/* take the signal and clear the flag in one step (an atomic exchange cannot lose
	 * a signal that lands in between), so that a second one shows as the flag set
	 * again */
	int sig = __atomic_exchange_n(o->stop, 0, __ATOMIC_SEQ_CST);
	if (!*forwarded) {
		/* pass the signal on and record until the program ends */
		tacho_child_kill(s->child, sig);
		*forwarded = true;
	} else if (!*killed) {
		/* a second signal: the program ignored or is stuck in the first; SIGKILL
		 * cannot be caught, and the file is still finished below */
		tacho_child_kill(s->child, SIGKILL);
		*killed = true;
		notify(s, "a second signal: killing the program (SIGKILL); the recording is "
		       "kept");
	}
	return false;
}

/* Phase 4b: until the target ends (or *stop): wait for the rings, drain them at every
 * wake-up and at least every flush_ms, calibrate the periods at 1/20, 1/4 and the end
 * of the window. 0; -errno with *diag when waiting failed (the recording is still
 * finished); 1 when a write failed. */
static int record_loop(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	unsigned flush_ms = o->flush_ms ? o->flush_ms : DEFAULT_FLUSH_MS;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), calib_at = 0, last_flush = t0;
	uint64_t calib_ms = o->calibrate_ms ? o->calibrate_ms : DEFAULT_CALIBRATE_MS;
	unsigned calib_step = 0;
	bool done = false, forwarded = false, killed = false;

	/* calibrate in three steps, at 1/20, 1/4 and all of the window: the provisional
	 * period (1 for software events) then lasts only a few milliseconds, and the
	 * final period comes from the whole window */
	for (size_t e = 0; e < s->nev; e++)
		if (s->ev[e].calibrate)
			calib_at = t0 + calib_ms * 1000000u / 20;
	while (!done) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int timeout = (int)flush_ms, n;
		short pid_revents = 0;

		if (calib_at && now >= calib_at) {
			calib_step++;
			calibrate(s, calib_step == 3);
			calib_at = calib_step == 1 ? t0 + calib_ms * 1000000u / 4 :
				   calib_step == 2 ? t0 + calib_ms * 1000000u : 0;
			now = now_ns(CLOCK_MONOTONIC);
		}
		/* wake for the next calibration step, not only at the flush interval */
		if (calib_at && calib_at > now && (calib_at - now) / 1000000u < (uint64_t)timeout)
			timeout = (int)((calib_at - now) / 1000000u) + 1;
		else if (calib_at && calib_at <= now)
			timeout = 0;
		if (s->pidfd < 0 && (s->child_mode || !o->system_wide))
			timeout = timeout > 20 ? 20 : timeout;   /* no pidfd: look for the exit often */
		n = tc_perf_list_poll(s->list, timeout, s->pidfd, &pid_revents);
		if (n < 0 && n != -EINTR)
			return tc_diag_set(diag, "record", 0, 0, n, "cannot wait for samples (poll): %s",
					   tacho_strerror(n));
		if (take_stop(s, &forwarded, &killed))
			done = true;
		if (s->child_mode) {
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			/* WNOWAIT: look without reaping; tacho_child_wait reaps and reports */
			if (waitid(P_PID, (id_t)tacho_child_pid(s->child), &si,
				   WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
				done = true;
		} else if (!o->system_wide) {
			if (targets_gone(s))
				done = true;
			else if (s->pidfd >= 0 && n > 0 && (pid_revents & POLLIN))
				done = true;
		}
		now = now_ns(CLOCK_MONOTONIC);
		/* drain at every wake-up or timeout: the file lags the program by at most
		 * flush_ms, and on exit there is no wait at all */
		if (done || n > 0 || now - last_flush >= (uint64_t)flush_ms * 1000000u) {
			last_flush = now;
			if (drain_all(s, false))
				return 1;
		}
	}
	return 0;
}

/* Phase 5: the program's end, the last records, the losses no record told, the totals.
 * err is what the loop left (a failed wait); returns it, or the wait's error, or 1
 * when a write failed. */
static int finish(struct session *s, int err, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;

	if (s->child_mode) {
		int werr = tacho_child_wait(s->child, &s->res->exit);
		if (werr && !err)
			err = tc_diag_set(diag, o->argv[0], 0, 0, werr,
					  "cannot learn how '%s' ended: %s", o->argv[0],
					  tacho_strerror(werr));
	}
	tc_perf_list_disable(s->list);
	/* a write error wins over the wait's error, which is not one */
	if (drain_all(s, true))
		return 1;
	account_unreported_lost(s);
	if (s->unparsed)
		tc_log(TACHO_LOG_WARN, "%" PRIu64 " sample records from the kernel were shorter "
		       "than their fields and were dropped", s->unparsed);
	tc_record_writer_finish(&s->w, s->res->samples, s->res->lost, now_ns(CLOCK_MONOTONIC),
				s->child_mode ? s->res->exit.status : 0);
	return err;
}

static void bid_say(void *arg, const char *fmt, ...) TC_PRINTF(2, 3);
static void bid_say(void *arg, const char *fmt, ...)
{
	struct session *s = arg;
	char msg[sizeof(s->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	notify(s, "%s", msg);
}

/* After the file is complete: the binaries it mapped into the build-id cache. A copy
 * that fails is said and leaves the recording as it is. */
static void store_binaries(struct session *s)
{
	char size[32];

	if (!s->seen)
		return;
	if (tc_bidcache_store(s->seen, s->o->buildid_cache, bid_say, s, &s->res->cached_files,
			      &s->res->cached_bytes) == 0 && s->res->cached_files)
		notify(s, "copied %u binar%s (%s) into the build-id cache in %s",
		       s->res->cached_files, s->res->cached_files == 1 ? "y" : "ies", tc_fmt_size(s->res->cached_bytes, size, sizeof(size)),
		       s->o->buildid_cache);
}

/* The first versions: struct tacho_record_opts ends at notify_arg (TC_OPTS_VALID),
 * struct tacho_record_result at choice. */
#define TC_OPTS_V1_tacho_record_opts tc_offsetofend(struct tacho_record_opts, notify_arg)
#define RESULT_SZ_V1 tc_offsetofend(struct tacho_record_result, choice)

int tacho_record(const struct tacho_record_opts *caller_opts, struct tacho_record_result *res,
		 struct tacho_diag *diag)
{
	return tc_record_run(caller_opts, res, NULL, diag);
}

int tc_record_run(const struct tacho_record_opts *caller_opts, struct tacho_record_result *res,
		  const struct tc_record_hooks *hooks, struct tacho_diag *diag)
{
	struct tacho_record_opts opts, *o = &opts;
	struct tacho_record_result result = { .sz = sizeof(result) };
	struct session s;
	const char *out_path;
	int err, cerr;

	if (tc_diag_check(diag))
		return -EINVAL;
	if (!caller_opts || !res || res->sz < RESULT_SZ_V1)
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(caller_opts, tacho_record_opts, diag);
	if (err)
		return err;
	/* the caller's versions: options it lacks read as 0, the result is written as far
	 * as its sz goes (at the end, whatever happened: zero when nothing ran) */
	TC_OPTS_COPY(&opts, caller_opts);
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.res = &result;
	s.w.fd = -1;
	s.pidfd = -1;
	s.hooks = hooks;
	tc_sideband_init(&s.side, &s.w);
	if (o->buildid_cache && *o->buildid_cache) {
		err = tc_bidcache_new(&s.seen);
		if (err)
			goto out;
		s.side.seen = s.seen;
	}
	s.child_mode = o->argv && o->argv[0];
	out_path = o->output ? o->output : "tacho.rec";
	if (!s.child_mode && !o->pid && !o->system_wide) {
		err = tc_diag_set(diag, "record", 0, 0, -EINVAL, "nothing to record: give a "
				  "program, a process or all CPUs");
		goto out;
	}
	if (o->period && o->freq) {
		err = tc_diag_set(diag, "record", 0, 0, -EINVAL, "a period and a frequency "
				  "exclude each other");
		goto out;
	}
	if (o->mmap_pages && (o->mmap_pages & (o->mmap_pages - 1))) {
		err = tc_diag_set(diag, "record", 0, 0, -EINVAL, "the ring size must be a power "
				  "of two pages, not %u", o->mmap_pages);
		goto out;
	}
	err = setup_call_graph(&s, diag);
	if (err)
		goto out;

	/* phase 1: the events and how each one samples */
	err = setup_events(&s, diag);
	if (err)
		goto out;
	/* phase 2: the program held before exec, the events opened on it */
	if (s.child_mode) {
		struct tacho_child_opts co = { .sz = sizeof(co), .forward_signals = false,
					       .env = hooks ? hooks->env : NULL,
					       .inherit_fds = hooks ? hooks->inherit_fds : NULL,
					       .ninherit_fds = hooks ? hooks->ninherit_fds : 0 };
		err = tacho_child_start(o->argv, &co, &s.child);
		if (err) {
			tc_diag_set(diag, o->argv[0], 0, 0, err, "cannot start '%s': %s", o->argv[0],
				    tacho_strerror(err));
			goto out;
		}
	}
	err = open_events(&s, diag);
	if (err)
		goto out;
	/* phase 3: the file */
	err = start_file(&s, out_path, diag);
	if (err == 1)
		goto out_write_failed;
	if (err)
		goto out;
	/* phase 4: the recording itself */
	err = start_target(&s, diag);
	if (err) {
		/* no program ran, no recording: the previous file stays (issue 10) */
		tc_record_writer_discard(&s.w);
		goto out;
	}
	err = record_loop(&s, diag);
	if (err == 1)
		goto out_write_failed;
	/* phase 5 */
	err = finish(&s, err, diag);
	if (err == 1)
		goto out_write_failed;
	cerr = tc_record_writer_close(&s.w);
	if (cerr && !err) {
		err = cerr;
		goto out_write_failed_closed;
	}
	result.bytes = s.w.written;
	store_binaries(&s);
	/* the kernel's own symbols of this boot into the user's cache, once a boot: the
	 * report of a recording with kernel samples then maps them instead of making the
	 * kernel format all of /proc/kallsyms (docs/report.md); quietly, since a report
	 * reads /proc/kallsyms as before when there is no copy */
	if (s.kernel_samples && o->buildid_cache)   /* --no-buildid-cache: no cache written */
		tc_kallsyms_cache_prime();
	goto out;
out_write_failed:
	err = 0;
	tc_record_writer_discard(&s.w);
out_write_failed_closed:
	tc_diag_set(diag, out_path, 0, 0, err ? err : s.w.err, "cannot write '%s': %s", out_path,
		    tacho_strerror(err ? err : s.w.err));
	err = err ? err : s.w.err;
out:
	session_free(&s);
	tc_sized_put_sz(res, &result, sizeof(result));
	return err;
}
