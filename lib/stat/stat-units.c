/* stat-units.c - what a stat session's breakdowns need beside counting: the place of
 * each CPU (core, die, package from sysfs, its NUMA node), a cgroup made into a
 * directory of the perf_event hierarchy, and two engine lists that the counting API
 * does not offer: a cgroup counted on CPUs (perf's cgroup mode), and a program whose
 * threads the kernel reports one by one as they end (inherit_stat's PERF_RECORD_READ),
 * which is how one run of a program gives exact per-thread counts. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stat/stat.h"
#include "perf/engine.h"
#include "perf/perf.h"
#include "util/util.h"
#include "tacho/counters.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"

/* --- where each CPU sits --- */

/* The node of a CPU: sysfs links /sys/devices/system/cpu/cpuN/nodeM; -1 without one. */
static int cpu_node(int cpu)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int node = -1;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		char *end;
		long v;

		if (strncmp(d->d_name, "node", 4) || d->d_name[4] < '0' || d->d_name[4] > '9')
			continue;
		v = strtol(d->d_name + 4, &end, 10);
		if (!*end && v >= 0 && v < 1 << 20) {
			node = (int)v;
			break;
		}
	}
	closedir(dir);
	return node;
}

int tc_stat_cpu_places(const int *cpus, size_t n, struct tc_stat_cpu_place *out)
{
	struct tacho_cpu_sysfs *sys = NULL;

	/* without sysfs every CPU stays a unit of its own kind unknown (-1): counting
	 * per CPU still works, the grouping says it does not know */
	if (tacho_cpu_sysfs_read(NULL, &sys))
		sys = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct tacho_sysfs_cpu *c = NULL;

		out[i] = (struct tc_stat_cpu_place){ .cpu = cpus[i], .socket = -1, .die = -1,
						     .core = -1, .node = cpu_node(cpus[i]) };
		for (unsigned k = 0; sys && k < sys->ncpus; k++)
			if (sys->cpus[k].cpu == cpus[i])
				c = &sys->cpus[k];
		if (c) {
			out[i].socket = c->package;
			out[i].die = c->die;
			out[i].core = c->core;
		}
	}
	tacho_cpu_sysfs_free(sys);
	return 0;
}

/* --- cgroups --- */

/* The option field of a mount line (the fourth) holds opt as a whole word. */
static bool has_option(const char *opts, size_t len, const char *opt)
{
	size_t ol = strlen(opt);

	for (size_t i = 0; i + ol <= len; i++)
		if ((i == 0 || opts[i - 1] == ',') && !strncmp(opts + i, opt, ol) &&
		    (i + ol == len || opts[i + ol] == ','))
			return true;
	return false;
}

int tc_stat_cgroup_root_parse(const char *mounts, char *root, size_t size)
{
	char v2[4096] = "";
	const char *line = mounts;

	root[0] = '\0';
	/* the kernel binds perf_event to one hierarchy: a v1 mount of its controller,
	 * else v2, where it is always enabled */
	while (line && *line) {
		const char *eol = strchr(line, '\n'), *p = line, *f[4];
		size_t fl[4];
		int k;

		if (!eol)
			eol = line + strlen(line);
		for (k = 0; k < 4; k++) {
			while (p < eol && *p == ' ')
				p++;
			f[k] = p;
			while (p < eol && *p != ' ')
				p++;
			fl[k] = (size_t)(p - f[k]);
			if (!fl[k])
				break;
		}
		if (k == 4 && fl[2] == 6 && !memcmp(f[2], "cgroup", 6) &&
		    has_option(f[3], fl[3], "perf_event")) {
			tc_unescape_octal(f[1], fl[1], root, size);
			return 0;
		}
		if (k >= 3 && fl[2] == 7 && !memcmp(f[2], "cgroup2", 7) && !v2[0])
			tc_unescape_octal(f[1], fl[1], v2, sizeof(v2));
		line = *eol ? eol + 1 : NULL;
	}
	if (!v2[0])
		return -ENOENT;
	snprintf(root, size, "%s", v2);
	return 0;
}

int tc_stat_cgroup_dir(const char *cg, char *buf, size_t size)
{
	char root[4096], *text = NULL;
	size_t len, rl;
	struct stat sb;
	int err, n;

	if (!cg || !*cg)
		return -EINVAL;
	/* no ".." anywhere: a path must stay inside the hierarchy */
	for (const char *p = cg; (p = strstr(p, "..")); p += 2)
		if ((p == cg || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return -EINVAL;
	err = tc_read_file("/proc/self/mounts", &text, &len, 16u << 20);
	if (err)
		return err;
	err = tc_stat_cgroup_root_parse(text, root, sizeof(root));
	free(text);
	if (err)
		return -ENOENT;
	rl = strlen(root);
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	/* perf's names are relative to the hierarchy's root; a path that already
	 * starts there is taken as it is */
	if (rl && !strncmp(cg, root, rl) && (cg[rl] == '/' || cg[rl] == '\0'))
		n = snprintf(buf, size, "%s", cg);
	else
		n = snprintf(buf, size, "%.*s/%s", (int)rl, root, cg[0] == '/' ? cg + 1 : cg);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	if (stat(buf, &sb))
		return -errno;
	return S_ISDIR(sb.st_mode) ? 0 : -ENOTDIR;
}

/* --- an engine list read as the counting API reads one --- */

struct tc_stat_cells {
	struct tc_perf_list *list;
	size_t n;
	struct tc_perf_count *vals;     /* [n] */
	char **why;                     /* [n]: why an event opened nowhere (owned) */
	enum tacho_hint *hint;
	int *err;
	bool threads;                   /* thread reports asked: the ring is mapped */
	bool *whole;                    /* [n] with threads: the event's group never
					   rotates (asked once: a dynamic PMU's name is a
					   walk of sysfs) */
};

void tc_stat_cells_free(struct tc_stat_cells *c)
{
	if (!c)
		return;
	tc_perf_list_free(c->list);
	for (size_t i = 0; c->why && i < c->n; i++)
		free(c->why[i]);
	free(c->why);
	free(c->hint);
	free(c->err);
	free(c->vals);
	free(c->whole);
	free(c);
}

/* Why each event that opened nowhere did not open, in the explainer's words. */
static int cells_explain(struct tc_stat_cells *c, bool cpu_wide)
{
	struct tc_perf_env env;
	bool probed = false;

	for (size_t i = 0; i < c->n; i++) {
		struct tc_perf_ev *e = tc_perf_list_event(c->list, i);
		struct perf_event_attr a;
		unsigned flags;
		char why[512];

		if (tc_perf_ev_nopen(e))
			continue;
		c->err[i] = tc_perf_ev_error(e, &flags, &a);
		if (!c->err[i]) {
			c->err[i] = -ESRCH;
			c->why[i] = tc_strdup("the target ended before its counters could open");
		} else {
			if (!probed) {
				tc_perf_env_probe(&env);
				probed = true;
			}
			tc_perf_explain(&env, c->err[i], &a, NULL,
					flags | (cpu_wide ? TC_EXPLAIN_CPU_WIDE : 0), why,
					sizeof(why), &c->hint[i]);
			c->why[i] = tc_strdup(why);
		}
		if (!c->why[i])
			return -ENOMEM;
	}
	return 0;
}

/* Pages of each CPU's ring that receives the threads' reports: a report of an event is
 * 48 bytes, so 64 pages hold some 5,000 of them per CPU before the drain at the end;
 * 64 pages and the first stay within the locked memory the kernel grants a user per
 * CPU by default (perf_event_mlock_kb, 516 KiB). */
#define THREAD_RING_PAGES 64u

/* With thread reports, the kernel pairs the events of two threads' contexts by their
 * position in its lists when it swaps them (engine-list.c's open_all says how), and a
 * copy's list is sorted by the PMU of each group's leader before the order of the
 * opens: PMUs it orders by their address in the kernel, which no one outside it
 * knows. So every group on a CPU must be led by an event of one PMU: the
 * software-context events (software, tracepoints, breakpoints, probes: they never
 * compete for a counter) join the group of the first hardware event, or, without one,
 * the first event's. The hardware events keep their own groups, all led by the core
 * PMU (on a hybrid CPU with events of two core PMUs, the order of their groups is the
 * kernel's to choose: docs/stat.md says so). 0, -ENOMEM. */
static int one_leader_pmu(struct tc_perf_list *l)
{
	size_t n = tc_perf_list_count(l), lead = 0;

	for (size_t i = 0; i < n; i++) {
		if (!tc_perf_type_never_rotates(tc_perf_ev_attr(tc_perf_list_event(l, i))->type)) {
			lead = i;
			break;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct tc_perf_ev *e = tc_perf_list_event(l, i);
		int err;

		if (i == lead || !tc_perf_type_never_rotates(tc_perf_ev_attr(e)->type))
			continue;
		err = tc_perf_ev_set_leader(e, tc_perf_list_event(l, lead));
		if (err)
			return err;
	}
	return 0;
}

int tc_stat_cells_open(const struct tacho_counter_spec *specs, size_t n,
		       const struct tc_perf_grid *g, unsigned flags, bool thread_reports,
		       struct tc_stat_cells **out)
{
	struct tc_stat_cells *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return -ENOMEM;
	c->n = n;
	c->vals = calloc(n ? n : 1, sizeof(*c->vals));
	c->why = calloc(n ? n : 1, sizeof(*c->why));
	c->hint = calloc(n ? n : 1, sizeof(*c->hint));
	c->err = calloc(n ? n : 1, sizeof(*c->err));
	err = c->vals && c->why && c->hint && c->err ? tc_perf_list_new(&c->list) : -ENOMEM;
	for (size_t i = 0; !err && i < n; i++) {
		struct perf_event_attr a;

		err = tc_perf_attr_copy(&a, specs[i].attr);
		if (err)
			break;
		if (thread_reports) {
			/* each inherited copy of the event reports its thread's counts
			 * when the thread ends; the first also says which threads there
			 * were (fork, exit) and what each is called (exec, prctl) */
			a.inherit_stat = 1;
			if (i == 0)
				a.comm = a.comm_exec = a.task = 1;
			/* where the kernel allows it, keep each thread's events its
			 * own: it then never swaps two threads' contexts (below) */
			if (i == 0 && tc_perf_inherit_sample_read())
				a.sample_type |= PERF_SAMPLE_READ | PERF_SAMPLE_TID;
		}
		/* thread reports: the software-context events are put in one group
		 * below, whatever group they were given (they never compete for a
		 * counter, so that a group changes nothing of what they count) */
		err = tc_perf_list_add(c->list, &a, specs[i].name,
				       thread_reports && tc_perf_type_never_rotates(a.type) ?
				       TACHO_GROUP_NONE : specs[i].group);
		if (err > 0)
			err = 0;
	}
	if (!err && thread_reports)
		err = one_leader_pmu(c->list);
	if (!err)
		err = tc_perf_list_open(c->list, g, flags);
	if (!err)
		err = cells_explain(c, g->nthreads == 0 || (flags & TC_PERF_CGROUP));
	if (!err && thread_reports) {
		err = tc_perf_list_mmap(c->list, THREAD_RING_PAGES, NULL, NULL);
		c->threads = true;
		c->whole = calloc(c->n ? c->n : 1, sizeof(*c->whole));
		if (!c->whole && !err)
			err = -ENOMEM;
		for (size_t i = 0; c->whole && i < c->n; i++)
			c->whole[i] = tc_perf_ev_never_rotates(tc_perf_list_event(c->list, i));
	}
	if (err) {
		tc_stat_cells_free(c);
		return err;
	}
	*out = c;
	return 0;
}

int tc_stat_cells_enable(struct tc_stat_cells *c)
{
	return tc_perf_list_enable(c->list);
}

int tc_stat_cells_disable(struct tc_stat_cells *c)
{
	return tc_perf_list_disable(c->list);
}

/* One engine value as a struct tacho_count, as tacho_counters_read says it. */
static void count_from(const struct tc_stat_cells *c, size_t i, const struct tc_perf_count *v,
		       struct tacho_count *o)
{
	memset(o, 0, sizeof(*o));
	o->name = tc_perf_ev_name(tc_perf_list_event(c->list, i));
	o->status = v->status;
	o->value = v->value;
	o->coverage = v->coverage;
	if (v->status == TACHO_COUNT_NOT_SUPPORTED) {
		if (c->err[i] == -EMFILE || c->err[i] == -ENFILE)
			o->status = TACHO_COUNT_NOT_COUNTED;
		o->err = c->err[i];
		o->why = c->why[i];
		o->hint = c->hint[i];
		return;
	}
	o->raw = v->raw;
	o->enabled_ns = v->enabled;
	o->running_ns = v->running;
	if (v->err) {
		o->err = v->err;
		o->why = v->why;
		o->hint = TACHO_HINT_MACHINE;
	} else if (v->status == TACHO_COUNT_NOT_COUNTED)
		o->why = v->enabled ? "the event was enabled but never got a counter (too many "
				      "events at once: use fewer, or fewer groups)"
				    : "the event was never enabled (the program never ran, or "
				      "counting was never started)";
}

static void count_of(uint64_t raw, uint64_t ena, uint64_t run, bool whole, const char *name,
		     struct tacho_count *o);

int tc_stat_cells_read(struct tc_stat_cells *c, struct tacho_count *out)
{
	int err = tc_perf_list_read(c->list, c->vals);

	if (err)
		return err;
	for (size_t i = 0; i < c->n; i++) {
		const struct tc_perf_count *v = &c->vals[i];
		size_t nopen = tc_perf_ev_nopen(tc_perf_list_event(c->list, i));

		if (!c->threads || v->status == TACHO_COUNT_NOT_SUPPORTED || !nopen || v->err) {
			count_from(c, i, v, &out[i]);
			continue;
		}
		/* a task's event on each CPU is enabled whenever the task runs, and
		 * running while it runs on that CPU: its time enabled is one cell's,
		 * its time running the sum (count_of says what that makes) */
		count_of(v->raw, v->enabled / nopen, v->running, c->whole[i],
			 tc_perf_ev_name(tc_perf_list_event(c->list, i)), &out[i]);
	}
	return 0;
}

/* --- the threads' reports --- */

struct thread_acc {
	pid_t pid, tid;
	uint64_t *raw, *ena, *run;  /* [n] */
	bool *seen;                 /* [n]: a report of this event came */
	bool reported;              /* any report came */
};

struct drain_ctx {
	struct tc_stat_cells *c;
	struct thread_acc *t;
	size_t nt, cap;
	struct { pid_t tid; char comm[16]; } *names;
	size_t nnames, capnames;
	uint64_t lost;
	int err;
};

static struct thread_acc *thread_get(struct drain_ctx *d, pid_t pid, pid_t tid)
{
	struct thread_acc *t;

	for (size_t i = 0; i < d->nt; i++)
		if (d->t[i].tid == tid)
			return &d->t[i];
	if (d->nt == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		t = realloc(d->t, cap * sizeof(*t));
		if (!t)
			return NULL;
		d->t = t;
		d->cap = cap;
	}
	t = &d->t[d->nt];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->raw = calloc(d->c->n ? d->c->n : 1, sizeof(*t->raw));
	t->ena = calloc(d->c->n ? d->c->n : 1, sizeof(*t->ena));
	t->run = calloc(d->c->n ? d->c->n : 1, sizeof(*t->run));
	t->seen = calloc(d->c->n ? d->c->n : 1, sizeof(*t->seen));
	d->nt++;
	if (!t->raw || !t->ena || !t->run || !t->seen)
		return NULL;
	return t;
}

/* PERF_RECORD_READ without sample_id_all: pid, tid, then the read_format the engine
 * asks (value, time enabled, time running, id: no group reads for thread reports). */
struct read_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t value, enabled, running, id;
};

struct comm_rec {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

static int on_record(void *arg, const struct perf_event_header *h)
{
	struct drain_ctx *d = arg;

	if (h->type == PERF_RECORD_READ && h->size >= sizeof(struct read_rec)) {
		const struct read_rec *r = (const void *)h;
		int i = tc_perf_list_event_of_id(d->c->list, r->id);
		struct thread_acc *t;

		if (i < 0)
			return 0;
		t = thread_get(d, (pid_t)r->pid, (pid_t)r->tid);
		if (!t) {
			d->err = -ENOMEM;
			return 1;
		}
		/* a thread reports once per event and CPU: its counts and times running
		 * add up, its time enabled is each copy's (the thread's own time) */
		t->reported = true;
		t->raw[i] += r->value;
		if (r->enabled > t->ena[i])
			t->ena[i] = r->enabled;
		t->run[i] += r->running;
		t->seen[i] = true;
	} else if (h->type == PERF_RECORD_COMM && h->size > sizeof(struct comm_rec)) {
		const struct comm_rec *r = (const void *)h;
		size_t len = h->size - sizeof(*r), i;

		for (i = 0; i < d->nnames && d->names[i].tid != (pid_t)r->tid; i++)
			;
		if (i == d->nnames) {
			if (d->nnames == d->capnames) {
				size_t cap = d->capnames ? 2 * d->capnames : 16;
				void *p = realloc(d->names, cap * sizeof(*d->names));
				if (!p) {
					d->err = -ENOMEM;
					return 1;
				}
				d->names = p;
				d->capnames = cap;
			}
			d->nnames++;
		}
		d->names[i].tid = (pid_t)r->tid;
		snprintf(d->names[i].comm, sizeof(d->names[i].comm), "%.*s",
			 (int)(len < 16 ? len : 15), r->comm);
	} else if ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) &&
		   h->size >= sizeof(*h) + 16) {
		/* pid, ppid, tid, ptid: a thread that was, whether it reports or not */
		const uint32_t *p = (const void *)(h + 1);
		if (!thread_get(d, (pid_t)p[0], (pid_t)p[2])) {
			d->err = -ENOMEM;
			return 1;
		}
	} else if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16) {
		const uint64_t *p = (const void *)(h + 1);
		d->lost += p[1];
	}
	return 0;
}

static const char *name_of(const struct drain_ctx *d, pid_t tid)
{
	for (size_t i = 0; i < d->nnames; i++)
		if (d->names[i].tid == tid)
			return d->names[i].comm;
	return NULL;
}

static int tid_order(const void *a, const void *b)
{
	const struct tc_stat_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid == y->tid)
		return 0;
	return x->tid < y->tid ? -1 : 1;
}

/* A task's count added over its per-CPU copies: raw and the time running summed, the
 * time enabled one copy's. Time running 0 is no value (the one rule). Otherwise the
 * times running of the copies add up to the time enabled when the event was on a
 * counter whenever its task ran; they are taken at different instants, so that a
 * sum within 1 % of it is counted whole and the raw sum is the exact count; below
 * that the event was multiplexed and the count is scaled.
 *
 * whole: the event's group never rotates (tc_perf_ev_never_rotates), so that it
 * counted whenever its task ran and its raw count is exact whatever the times say.
 * The times of a short thread cannot show that within 1 %: the kernel removes a
 * task's copies one at a time at its exit, the context's clock moving between them,
 * and when it swaps equal contexts between two threads of a process at a context
 * switch it swaps the copies' totals but not the time an idle copy has yet to add,
 * so that some microseconds of time enabled pass from one thread to another
 * (kernel/events/core.c, perf_event_sync_stat). A thread of 100 us, whose share of
 * the time was 97 %, was once reported multiplexed under load. */
static void count_of(uint64_t raw, uint64_t ena, uint64_t run, bool whole, const char *name,
		     struct tacho_count *o)
{
	memset(o, 0, sizeof(*o));
	o->name = name;
	o->raw = raw;
	o->enabled_ns = ena;
	o->running_ns = run;
	if (run == 0) {
		o->status = TACHO_COUNT_NOT_COUNTED;
		o->value = NAN;
		o->why = ena ? "the event was enabled but never got a counter in this thread"
			     : "the event was never enabled in this thread";
		return;
	}
	if (whole || (double)run >= 0.99 * (double)ena) {
		o->status = TACHO_COUNT_COUNTED;
		o->value = (double)raw;
		o->coverage = 1.0;
		return;
	}
	o->status = TACHO_COUNT_MULTIPLEXED;
	o->value = tc_count_scale(raw, ena, run);
	o->coverage = (double)run / (double)ena;
}

/* The kernel swaps two equal contexts of a process's threads at a context switch,
 * counts and all (kernel/events/core.c, perf_event_context_sched_out), so that a
 * thread's counts end up in another thread's report. tacho keeps it from that where
 * the kernel allows (tc_perf_inherit_sample_read: Linux 6.12 and later); yet on Linux
 * 6.18, 1 run in 1,500 under load still had two threads report nothing, enabled but
 * never running, and their counts under the first thread. Either sign proves a move:
 *
 * a thread that reported an event that never rotates (it is on whenever its task
 * runs) as enabled yet never running: the thread ran with another's copy; */
bool tc_stat_thread_moved(size_t n, const bool *whole, const struct tacho_count *total,
			  const bool *seen, const uint64_t *ena, const uint64_t *run)
{
	for (size_t i = 0; i < n; i++) {
		if (!whole[i] || !seen[i] || total[i].running_ns == 0 ||
		    total[i].err == -TACHO_ESILENT)
			continue;
		if (ena[i] > 0 && run[i] == 0)
			return true;
	}
	return false;
}

static bool thread_ran_elsewhere(const struct tc_stat_cells *c, const struct tacho_count *total,
				 const struct thread_acc *t)
{
	return tc_stat_thread_moved(c->n, c->whole, total, t->seen, t->ena, t->run);
}

/* the one silent thread, not the first, whose remainder ran for none of the events
 * that ran at all: it got the opened events at a swap and its counts went to
 * another's report (seen 2 times in 1,500 runs under load before tacho kept the
 * kernel from swapping). */
static bool remainder_ran_for_none(const struct tc_stat_cells *c, const struct tacho_count *total,
				   const struct thread_acc *m)
{
	bool ran = false, any = false;

	for (size_t i = 0; i < c->n; i++) {
		if (total[i].running_ns == 0 || total[i].err == -TACHO_ESILENT)
			continue;
		any = true;
		ran = ran || m->run[i] > 0;
	}
	return any && !ran;
}

static const char moved_why[] =
	"the kernel moved counts between this program's threads at a context switch, so "
	"that this thread's own count is not known (the total is right)";

void tc_stat_threads_free(struct tc_stat_thread *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		free(t[i].counts);
	free(t);
}

int tc_stat_cells_threads(struct tc_stat_cells *c, const struct tacho_count *total,
			  pid_t main_tid, const char *main_comm, struct tc_stat_thread **out,
			  size_t *nout, uint64_t *lost)
{
	struct drain_ctx d = { .c = c };
	struct tc_stat_thread *res = NULL;
	struct thread_acc *m;
	size_t nres = 0, silent;
	bool mixed;
	int err;

	*out = NULL;
	*nout = 0;
	if (!c->threads)
		return -EINVAL;
	err = tc_perf_list_drain(c->list, on_record, &d);
	if (d.err)
		err = d.err;
	if (err < 0)
		goto out;
	err = 0;
	/* One thread sends no report: the one whose task holds the events that were
	 * opened (the kernel swaps a thread's events with an equal copy's on a context
	 * switch, moving the counts along, so that it may be any thread). It holds what
	 * the total holds beyond every report. With more than one silent thread
	 * (reports lost, or threads still alive), that remainder is theirs together:
	 * tid -1. */
	if (!thread_get(&d, main_tid, main_tid)) {
		err = -ENOMEM;
		goto out;
	}
	m = NULL;
	silent = 0;
	for (size_t k = 0; k < d.nt; k++) {
		if (!d.t[k].reported) {
			silent++;
			m = &d.t[k];
		}
	}
	if (silent > 1) {
		m = thread_get(&d, -1, -1);
		if (!m) {
			err = -ENOMEM;
			goto out;
		}
	}
	/* every thread reported (the first kept nothing): no remainder to show */
	for (size_t i = 0; m && i < c->n; i++) {
		uint64_t raw = total[i].raw, ena = total[i].enabled_ns, run = total[i].running_ns;

		for (size_t k = 0; k < d.nt; k++) {
			if (!d.t[k].reported)
				continue;
			raw -= d.t[k].raw[i] <= raw ? d.t[k].raw[i] : raw;
			ena -= d.t[k].ena[i] <= ena ? d.t[k].ena[i] : ena;
			run -= d.t[k].run[i] <= run ? d.t[k].run[i] : run;
		}
		m->raw[i] += raw;
		m->ena[i] += ena;
		m->run[i] += run;
		m->seen[i] = true;
	}
	mixed = m && silent == 1 && m->tid != main_tid && remainder_ran_for_none(c, total, m);
	for (size_t k = 0; !mixed && k < d.nt; k++)
		mixed = d.t[k].reported && thread_ran_elsewhere(c, total, &d.t[k]);
	if (mixed)
		tc_log(TACHO_LOG_WARN, "the kernel moved counts between this program's threads "
		       "at a context switch: the per-thread counts are shown as not counted, "
		       "the totals are right");
	res = calloc(d.nt, sizeof(*res));
	if (!res) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < d.nt; k++) {
		struct tc_stat_thread *r;
		const char *nm;

		/* a silent thread whose remainder went to the others' unit */
		if (!d.t[k].reported && &d.t[k] != m)
			continue;
		r = &res[nres++];
		nm = d.t[k].tid >= 0 ? name_of(&d, d.t[k].tid) : "";

		if (!nm)
			nm = name_of(&d, d.t[k].pid);
		if (!nm)
			nm = main_comm;
		r->pid = d.t[k].pid;
		r->tid = d.t[k].tid;
		snprintf(r->comm, sizeof(r->comm), "%s", nm ? nm : "");
		r->counts = calloc(c->n ? c->n : 1, sizeof(*r->counts));
		if (!r->counts) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < c->n; i++) {
			if (total[i].status == TACHO_COUNT_NOT_SUPPORTED ||
			    total[i].err == -TACHO_ESILENT) {
				/* not supported, or a source that never counts here: the
				 * same for every thread */
				r->counts[i] = total[i];
				continue;
			}
			count_of(d.t[k].raw[i], d.t[k].ena[i], d.t[k].run[i], c->whole[i],
				 total[i].name, &r->counts[i]);
			if (mixed) {
				/* whatever its report says, it may hold another's */
				r->counts[i].status = TACHO_COUNT_NOT_COUNTED;
				r->counts[i].value = NAN;
				r->counts[i].coverage = 0;
				r->counts[i].why = moved_why;
			}
		}
	}
	qsort(res, nres, sizeof(*res), tid_order);
	*out = res;
	*nout = nres;
	res = NULL;
	*lost = d.lost;
out:
	tc_stat_threads_free(res, nres);
	for (size_t k = 0; k < d.nt; k++) {
		free(d.t[k].raw);
		free(d.t[k].ena);
		free(d.t[k].run);
		free(d.t[k].seen);
	}
	free(d.t);
	free(d.names);
	return err;
}
