/* stat-breakdown.c - a stat session's breakdowns (--per-cpu, --per-core, ...,
 * --per-thread, --for-cgroup): the units, the cells their counters open on (a CPU, a
 * thread or a cgroup, each adding to its unit), and counting them for one run. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf/perf.h"
#include "events/metrics.h"
#include "stat/schedule.h"
#include "stat/stat.h"
#include "events/user-only.h"
#include "util/util.h"
#include "tacho/counters.h"
#include "tacho/events.h"
#include "tacho/run.h"
#include "tacho/sim.h"
#include "tacho/stat.h"
#include "stat/stat-int.h"

const char tc_stat_cell_ended_why[] = "the thread ended before its counters could open";

/* --- breakdowns: units, the cells their counters open on, and counting them --- */

const char *tacho_stat_aggr_name(enum tacho_stat_aggr a)
{
	static const char *const names[] = {
		[TACHO_STAT_AGGR_GLOBAL] = "global", [TACHO_STAT_AGGR_CPU] = "cpu",
		[TACHO_STAT_AGGR_CORE] = "core",     [TACHO_STAT_AGGR_DIE] = "die",
		[TACHO_STAT_AGGR_SOCKET] = "socket", [TACHO_STAT_AGGR_NODE] = "node",
		[TACHO_STAT_AGGR_THREAD] = "thread", [TACHO_STAT_AGGR_CGROUP] = "cgroup",
	};

	return (unsigned)a < ARRAY_SIZE(names) ? names[a] : "unknown";
}

bool tc_stat_aggr_by_cpu(enum tacho_stat_aggr a)
{
	return a >= TACHO_STAT_AGGR_CPU && a <= TACHO_STAT_AGGR_NODE;
}

/* A new unit with every event of the session asked and no value yet; its strings are
 * pointed at by units_finish, once the array stops moving. */
static struct stat_unit *unit_add(struct tacho_stat *s)
{
	struct stat_unit *u = realloc(s->units, (s->nunits + 1) * sizeof(*u));

	if (!u)
		return NULL;
	s->units = u;
	u = &s->units[s->nunits++];
	memset(u, 0, sizeof(*u));
	u->pub.aggr = s->aggr;
	u->pub.cpu = u->pub.socket = u->pub.die = u->pub.core = u->pub.node = -1;
	u->pub.tid = u->pub.pid = -1;
	u->ev = calloc(s->nev ? s->nev : 1, sizeof(*u->ev));
	u->asked = calloc(s->nev ? s->nev : 1, sizeof(*u->asked));
	if (!u->ev || !u->asked)
		return NULL;
	for (size_t e = 0; e < s->nev; e++) {
		const struct ev_res *t = &s->ev[e];
		if (tc_stat_ev_res_init(&u->ev[e], s->repeat, t->name, t->unit, t->scale))
			return NULL;
		u->ev[e].attr = t->attr;
		u->ev[e].pub.run = t->pub.run;
		u->asked[e] = true;
	}
	return u;
}

static void units_finish(struct tacho_stat *s)
{
	for (size_t u = 0; u < s->nunits; u++) {
		struct stat_unit *su = &s->units[u];
		su->pub.label = su->label;
		su->pub.comm = s->aggr == TACHO_STAT_AGGR_THREAD ? su->comm : NULL;
		su->pub.cgroup = su->cgroup;
	}
}

/* The key of a CPU's unit in mode a: CPUs with equal keys add up. */
static void place_key(enum tacho_stat_aggr a, const struct tc_stat_cpu_place *p, int k[4])
{
	k[0] = k[1] = k[2] = k[3] = -1;
	switch (a) {
	case TACHO_STAT_AGGR_CPU:
		k[3] = p->cpu;
		break;
	case TACHO_STAT_AGGR_CORE:
		k[2] = p->core;
		/* fall through */
	case TACHO_STAT_AGGR_DIE:
		k[1] = p->die;
		/* fall through */
	case TACHO_STAT_AGGR_SOCKET:
		k[0] = p->socket;
		break;
	case TACHO_STAT_AGGR_NODE:
		k[0] = p->node;
		break;
	default:
		break;
	}
}

static int place_order(const void *a, const void *b, void *arg)
{
	const struct tc_stat_cpu_place *x = a, *y = b;
	const enum tacho_stat_aggr *mode = arg;
	int kx[4], ky[4];

	place_key(*mode, x, kx);
	place_key(*mode, y, ky);
	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

/* The target's CPUs (the caller's list, or every online one), malloc'd. */
static int target_cpus(const struct tacho_stat_opts *o, int **out, size_t *n)
{
	if (!o->ncpus)
		return tc_online_cpus(out, n);
	if (!o->cpus)
		return -EINVAL;
	*out = malloc(o->ncpus * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	memcpy(*out, o->cpus, o->ncpus * sizeof(**out));
	*n = o->ncpus;
	return 0;
}

/* Per CPU, core, die, package or node: one cell per CPU, each adding to its unit. */
static int units_cpus(const struct tacho_stat_opts *o, struct tacho_stat *s)
{
	struct tc_stat_cpu_place *pl = NULL;
	int *cpus = NULL, prev[4] = { 0 };
	size_t n = 0;
	int err = target_cpus(o, &cpus, &n);

	if (err)
		return err;
	pl = calloc(n ? n : 1, sizeof(*pl));
	s->cells = calloc(n ? n : 1, sizeof(*s->cells));
	if (!pl || !s->cells) {
		err = -ENOMEM;
		goto out;
	}
	tc_stat_cpu_places(cpus, n, pl);
	qsort_r(pl, n, sizeof(*pl), place_order, &s->aggr);
	for (size_t i = 0; i < n; i++) {
		struct stat_unit *u;
		int k[4];

		place_key(s->aggr, &pl[i], k);
		if (i == 0 || memcmp(k, prev, sizeof(k))) {
			u = unit_add(s);
			if (!u) {
				err = -ENOMEM;
				goto out;
			}
			memcpy(prev, k, sizeof(k));
			u->pub.socket = k[0];
			u->pub.die = k[1];
			u->pub.core = k[2];
			switch (s->aggr) {
			case TACHO_STAT_AGGR_CPU:
				u->pub.cpu = pl[i].cpu;
				u->pub.socket = pl[i].socket;
				u->pub.die = pl[i].die;
				u->pub.core = pl[i].core;
				u->pub.node = pl[i].node;
				snprintf(u->label, sizeof(u->label), "CPU%d", pl[i].cpu);
				break;
			case TACHO_STAT_AGGR_CORE:
				snprintf(u->label, sizeof(u->label), "S%d-D%d-C%d", k[0], k[1], k[2]);
				break;
			case TACHO_STAT_AGGR_DIE:
				snprintf(u->label, sizeof(u->label), "S%d-D%d", k[0], k[1]);
				break;
			case TACHO_STAT_AGGR_SOCKET:
				snprintf(u->label, sizeof(u->label), "S%d", k[0]);
				break;
			default:
				u->pub.socket = -1;
				u->pub.node = k[0];
				snprintf(u->label, sizeof(u->label), "N%d", k[0]);
				break;
			}
		}
		s->units[s->nunits - 1].pub.ncpus++;
		s->cells[s->ncells++] = (struct stat_cell){ .cpu = pl[i].cpu, .tid = -1,
							    .unit = s->nunits - 1 };
	}
out:
	free(pl);
	free(cpus);
	return err;
}

/* The threads of one task of the target, a cell each: a process's threads listed now
 * (a thread it creates later is counted with the thread that created it), or the one
 * thread. Per thread a unit of its own; counted together (a list without a breakdown)
 * every cell goes to unit 0. */
static int units_task(const struct tacho_stat_opts *o, struct tacho_stat *s, pid_t pid,
		      struct tacho_diag *diag)
{
	pid_t *tids = NULL;
	size_t n = 1;
	int err = 0;
	struct stat_cell *cells;

	if (o->target == TACHO_TARGET_PROCESS) {
		err = tc_proc_threads(pid, &tids, &n);
		if (err == -ESRCH)
			return tc_diag_set(diag, "", 0, 0, err, "no process or thread %d",
					   (int)pid);
		if (err)
			return err;
	}
	cells = realloc(s->cells, (s->ncells + n) * sizeof(*cells));
	if (!cells) {
		err = -ENOMEM;
		goto out;
	}
	s->cells = cells;
	for (size_t i = 0; i < n; i++) {
		pid_t tid = tids ? tids[i] : pid;
		struct stat_unit *u;
		char path[64];

		if (s->aggr != TACHO_STAT_AGGR_THREAD) {
			s->cells[s->ncells++] = (struct stat_cell){ .cpu = -1, .tid = tid, .unit = 0 };
			continue;
		}
		u = unit_add(s);
		if (!u) {
			err = -ENOMEM;
			goto out;
		}
		u->pub.tid = tid;
		u->pub.pid = o->target == TACHO_TARGET_PROCESS ? pid : -1;
		if (o->target == TACHO_TARGET_PROCESS)
			snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
		else
			snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
		if (tc_read_line_file(path, u->comm, sizeof(u->comm)))
			u->comm[0] = '\0';
		snprintf(u->label, sizeof(u->label), "%s-%d", u->comm, (int)tid);
		s->cells[s->ncells++] = (struct stat_cell){ .cpu = -1, .tid = tid,
							    .unit = s->nunits - 1 };
	}
out:
	free(tids);
	return err;
}

/* Per thread of the target's processes or threads, or every thread of a list of them
 * counted together in one unit. */
static int units_tasks(const struct tacho_stat_opts *o, struct tacho_stat *s,
		       struct tacho_diag *diag)
{
	int err = 0;

	if (s->aggr != TACHO_STAT_AGGR_THREAD && !unit_add(s))
		return -ENOMEM;
	for (size_t i = 0; i < tc_stat_task_count(o) && !err; i++)
		err = units_task(o, s, tc_stat_task_at(o, i), diag);
	return err;
}

/* The cgroup event e is counted in. */
static const char *cgroup_of(const struct tacho_stat_opts *o, size_t e)
{
	if (!o->cgroup_pairs)
		return NULL;
	if (o->ncgroups == 1)
		return o->cgroups[0];
	return e < o->ncgroups ? o->cgroups[e] : "";
}

static int cgroup_unit(const struct tacho_stat_opts *o, struct tacho_stat *s, const char *cg,
		       struct tacho_diag *diag)
{
	struct stat_unit *u;
	char dir[4096] = "";
	int err;

	for (size_t i = 0; i < s->nunits; i++)
		if (!strcmp(s->units[i].cgroup, cg))
			return 0;
	if (*cg) {
		err = tc_stat_cgroup_dir(cg, dir, sizeof(dir));
		if (err == -ENOENT)
			return tc_diag_set(diag, cg, 0, 0, err, "no cgroup '%s' in the perf_event "
					   "hierarchy (cgroup v1's perf_event controller, else "
					   "cgroup v2)", cg);
		if (err)
			return tc_diag_set(diag, cg, 0, 0, err, "bad cgroup '%s': %s", cg,
					   tacho_strerror(err));
	}
	u = unit_add(s);
	if (!u)
		return -ENOMEM;
	u->cgroup = tc_strdup(cg);
	u->dir = tc_strdup(dir);
	if (!u->cgroup || !u->dir)
		return -ENOMEM;
	u->pub.ncpus = (unsigned)s->ncg_cpus;
	snprintf(u->label, sizeof(u->label), "%s", *cg ? cg : "(every task)");
	for (size_t e = 0; e < s->nev; e++) {
		const char *mine = cgroup_of(o, e);
		u->asked[e] = !mine || !strcmp(mine, cg);
	}
	return 0;
}

/* Per cgroup: one cell per cgroup, each over the target's CPUs. */
static int units_cgroups(const struct tacho_stat_opts *o, struct tacho_stat *s,
			 struct tacho_diag *diag)
{
	int err = target_cpus(o, &s->cg_cpus, &s->ncg_cpus);

	for (size_t i = 0; !err && i < o->ncgroups; i++)
		err = cgroup_unit(o, s, o->cgroups[i] ? o->cgroups[i] : "", diag);
	if (!err && o->cgroup_pairs && o->ncgroups > 1 && s->nev > o->ncgroups)
		err = cgroup_unit(o, s, "", diag);
	if (err)
		return err;
	s->cells = calloc(s->nunits ? s->nunits : 1, sizeof(*s->cells));
	if (!s->cells)
		return -ENOMEM;
	for (size_t u = 0; u < s->nunits; u++)
		s->cells[s->ncells++] = (struct stat_cell){ .cpu = -1, .tid = -1, .unit = u };
	return 0;
}

int tc_stat_units_setup(const struct tacho_stat_opts *o, struct tacho_stat *s,
		        struct tacho_diag *diag)
{
	int err = 0;

	if (tc_stat_aggr_by_cpu(s->aggr))
		err = units_cpus(o, s);
	else if (s->aggr == TACHO_STAT_AGGR_CGROUP)
		err = units_cgroups(o, s, diag);
	else if ((s->aggr == TACHO_STAT_AGGR_THREAD && o->target != TACHO_TARGET_CHILD) ||
		 tc_stat_task_list(o))
		err = units_tasks(o, s, diag);
	/* a program's threads are known once it has run */
	units_finish(s);
	return err;
}

/* Counts added over cells, under the one rule: a value where any cell has one (scaled
 * cells make it multiplexed), else the first cell's reason. */
struct count_acc {
	uint64_t raw, enabled, running;
	double value;
	unsigned nval, nmux;
	bool have_bad;
	struct tacho_count bad;
};

static void acc_add(struct count_acc *a, const struct tacho_count *k)
{
	if ((k->status == TACHO_COUNT_COUNTED || k->status == TACHO_COUNT_MULTIPLEXED) &&
	    isfinite(k->value)) {
		a->raw += k->raw;
		a->enabled += k->enabled_ns;
		a->running += k->running_ns;
		a->value += k->value;
		a->nval++;
		a->nmux += k->status == TACHO_COUNT_MULTIPLEXED;
	} else if (!a->have_bad || (a->bad.status == TACHO_COUNT_NOT_SUPPORTED &&
				    k->status == TACHO_COUNT_NOT_COUNTED)) {
		a->bad = *k;
		a->have_bad = true;
	}
}

static void acc_get(const struct count_acc *a, struct tacho_count *out)
{
	if (!a->nval) {
		if (a->have_bad) {
			*out = a->bad;
			return;
		}
		memset(out, 0, sizeof(*out));
		out->status = TACHO_COUNT_NOT_COUNTED;
		out->value = NAN;
		out->why = "nothing was counted here";
		return;
	}
	memset(out, 0, sizeof(*out));
	out->status = a->nmux ? TACHO_COUNT_MULTIPLEXED : TACHO_COUNT_COUNTED;
	out->raw = a->raw;
	out->enabled_ns = a->enabled;
	out->running_ns = a->running;
	out->value = a->value;
	out->coverage = a->nmux && a->enabled ? (double)a->running / (double)a->enabled : 1.0;
}

/* The specs of run, group by group, and which event each one is. */
static int build_specs(struct tacho_stat *s, unsigned run, struct tacho_counter_spec **specs,
		       unsigned **spec_ev, size_t *nspecs)
{
	size_t n = 0;

	for (unsigned g = 0; g < tc_schedule_ngroups(s->sched, run); g++) {
		unsigned k;
		tc_schedule_group(s->sched, run, g, &k);
		n += k;
	}
	*specs = calloc(n ? n : 1, sizeof(**specs));
	*spec_ev = calloc(n ? n : 1, sizeof(**spec_ev));
	if (!*specs || !*spec_ev)
		return -ENOMEM;
	n = 0;
	for (unsigned g = 0; g < tc_schedule_ngroups(s->sched, run); g++) {
		unsigned k;
		const unsigned *ev = tc_schedule_group(s->sched, run, g, &k);
		for (unsigned i = 0; i < k; i++) {
			struct ev_res *r = &s->ev[ev[i]];
			(*specs)[n].name = r->name;
			(*specs)[n].attr = &r->attr;
			(*specs)[n].group = k > 1 ? (int)g : TACHO_GROUP_NONE;
			(*spec_ev)[n] = ev[i];
			n++;
		}
	}
	*nspecs = n;
	return 0;
}

/* Runs the program of a CPU target (started after the counters, as count_once does)
 * or waits for the end of the target. */
static int run_or_wait(const struct tacho_stat_opts *o, struct tacho_stat *s,
		       struct tacho_diag *diag)
{
	if (!(o->target == TACHO_TARGET_CPUS && o->argv && o->argv[0])) {
		/* a list ends when its last task has: each waited for in turn */
		if (o->target == TACHO_TARGET_CPUS)
			tc_stat_wait_target(o, 0);
		for (size_t i = 0; o->target != TACHO_TARGET_CPUS && i < tc_stat_task_count(o); i++)
			tc_stat_wait_target(o, tc_stat_task_at(o, i));
		if (tc_stat_stop_requested(o))
			s->interrupted = s->cut = true;
		return 0;
	}
	/* the counters are the CPUs': the program runs as a warm-up runs */
	return tc_stat_run_uncounted(o, s, diag);
}

/* Opens the counters of one cell: a CPU or a thread through the counting API, a cgroup
 * through the engine's cgroup mode (the specs its unit asks for: sub, nsub). */
static int cell_open(struct tacho_stat *s, const struct stat_cell *cl,
		     const struct tacho_counter_spec *sub, size_t nsub, void **obj)
{
	struct tacho_counters_opts co = { .sz = sizeof(co) };
	int err;

	*obj = NULL;
	if (s->aggr == TACHO_STAT_AGGR_CGROUP) {
		const struct stat_unit *u = &s->units[cl->unit];
		struct tc_perf_grid g = { 0 };
		int fd = -1;

		if (u->dir[0]) {
			fd = open(u->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				return -errno;
		}
		err = tc_perf_grid_init(&g, s->cg_cpus, s->ncg_cpus, fd >= 0 ? &fd : NULL,
					fd >= 0 ? 1 : 0);
		if (!err)
			err = tc_stat_cells_open(sub, nsub, &g, TC_PERF_GROUP_READ |
						 (fd >= 0 ? TC_PERF_CGROUP : 0), false,
						 (struct tc_stat_cells **)obj);
		/* the kernel holds its own reference to the cgroup from the open on */
		if (fd >= 0)
			close(fd);
		tc_perf_grid_exit(&g);
		return err;
	}
	if (cl->tid >= 0) {
		co.target = TACHO_TARGET_THREAD;
		co.pid = cl->tid;
	} else {
		co.target = TACHO_TARGET_CPUS;
		co.cpus = &cl->cpu;
		co.ncpus = 1;
	}
	err = tacho_counters_open(&co, sub, nsub, sizeof(*sub), (struct tacho_counters **)obj);
	/* a thread that ended since it was listed counted nothing: its unit says so */
	return cl->tid >= 0 && err == -ESRCH ? 0 : err;
}

static void cell_close(const struct tacho_stat *s, void *obj)
{
	if (s->aggr == TACHO_STAT_AGGR_CGROUP)
		tc_stat_cells_free(obj);
	else
		tacho_counters_free(obj);
}

static int cell_enable(const struct tacho_stat *s, void *obj, bool on)
{
	if (!obj)
		return 0;
	if (s->aggr == TACHO_STAT_AGGR_CGROUP)
		return on ? tc_stat_cells_enable(obj) : tc_stat_cells_disable(obj);
	return on ? tacho_counters_enable(obj) : tacho_counters_disable(obj);
}

int tc_stat_cell_read(const struct tacho_stat *s, void *obj, struct tacho_count *out, size_t n)
{
	if (!obj) {
		for (size_t i = 0; i < n; i++) {
			memset(&out[i], 0, sizeof(out[i]));
			out[i].status = TACHO_COUNT_NOT_COUNTED;
			out[i].value = NAN;
			out[i].why = tc_stat_cell_ended_why;
		}
		return 0;
	}
	if (s->aggr == TACHO_STAT_AGGR_CGROUP)
		return tc_stat_cells_read(obj, out);
	return tacho_counters_read(obj, out, n, sizeof(*out));
}

/* One run of a breakdown over fixed cells (CPUs, threads of a process, cgroups): every
 * cell's counters opened, enabled together, read, and added into its unit and into
 * the event's total. */
int tc_stat_count_units_once(const struct tacho_stat_opts *o, struct tacho_stat *s,
			     unsigned run, unsigned rep, struct tacho_diag *diag)
{
	struct tacho_counter_spec *specs = NULL, *sub = NULL;
	struct tacho_count *counts = NULL, *tmp = NULL;
	unsigned *spec_ev = NULL;
	size_t n = 0, *subidx = NULL, nc = s->ncells;
	struct ticker t = { 0 };
	bool *asked = NULL;
	void **obj = NULL;
	double t0, t1;
	int err;

	err = build_specs(s, run, &specs, &spec_ev, &n);
	if (err)
		goto out;
	obj = calloc(nc ? nc : 1, sizeof(*obj));
	counts = calloc((nc ? nc : 1) * (n ? n : 1), sizeof(*counts));
	asked = calloc((nc ? nc : 1) * (n ? n : 1), sizeof(*asked));
	sub = calloc(n ? n : 1, sizeof(*sub));
	subidx = calloc(n ? n : 1, sizeof(*subidx));
	tmp = calloc(n ? n : 1, sizeof(*tmp));
	if (!obj || !counts || !asked || !sub || !subidx || !tmp) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t c = 0; c < nc; c++) {
		const struct stat_unit *u = &s->units[s->cells[c].unit];
		size_t nsub = 0;

		for (size_t i = 0; i < n; i++) {
			if (!u->asked[spec_ev[i]])
				continue;
			asked[c * n + i] = true;
			subidx[nsub] = i;
			sub[nsub++] = specs[i];
		}
		err = nsub ? cell_open(s, &s->cells[c], sub, nsub, &obj[c]) : 0;
		if (err) {
			if (err == -ESRCH)
				tc_diag_set(diag, "", 0, 0, err, "no process or thread %d",
					    (int)(s->cells[c].tid > 0 ? s->cells[c].tid : o->pid));
			goto out;
		}
	}
	t0 = now_ns();
	for (size_t c = 0; c < nc && !err; c++)
		err = cell_enable(s, obj[c], true);
	/* intervals over a list of tasks (every cell holds every event: one unit), or over
	 * a breakdown's cells, each added into its unit too */
	if (!err && o->interval_ms && o->on_interval &&
	    (tc_stat_task_list(o) || s->aggr != TACHO_STAT_AGGR_GLOBAL)) {
		t.cells = obj;
		t.ncells = nc;
		t.asked = asked;
		t.units = s->aggr != TACHO_STAT_AGGR_GLOBAL;
		t.n = n;
		t.spec_ev = spec_ev;
		t.nev = s->nev;
		t.o = o;
		t.s = s;
		t.whole = tc_stat_never_multiplexed(s);
		t.rep = rep;
		err = tc_stat_ticker_start(&t);
	}
	if (!err)
		err = run_or_wait(o, s, diag);
	for (size_t c = 0; c < nc; c++)
		cell_enable(s, obj[c], false);
	t1 = now_ns();
	tc_stat_ticker_stop(&t, err == 0);
	if (err)
		goto out;
	for (size_t c = 0; c < nc && !err; c++) {
		size_t k = 0;

		err = tc_stat_cell_read(s, obj[c], tmp, n);
		/* back from the cell's own order to the run's */
		for (size_t i = 0; !err && i < n; i++)
			if (asked[c * n + i])
				counts[c * n + i] = tmp[k++];
	}
	if (err)
		goto out;
	if (run == 0)
		s->wall_ns[rep] = t1 - t0;
	for (size_t i = 0; i < n; i++) {
		struct count_acc total = { 0 };
		struct tacho_count k;

		for (size_t u = 0; u < s->nunits; u++) {
			struct count_acc ua = { 0 };
			bool any = false;

			for (size_t c = 0; c < nc; c++) {
				if (s->cells[c].unit != u || !asked[c * n + i])
					continue;
				acc_add(&ua, &counts[c * n + i]);
				acc_add(&total, &counts[c * n + i]);
				any = true;
			}
			if (!any)
				continue;
			acc_get(&ua, &k);
			tc_stat_record(&s->units[u].ev[spec_ev[i]], &k, rep);
		}
		acc_get(&total, &k);
		tc_stat_record(&s->ev[spec_ev[i]], &k, rep);
	}
out:
	for (size_t c = 0; obj && c < nc; c++)
		cell_close(s, obj[c]);
	free(obj);
	free(counts);
	free(asked);
	free(sub);
	free(subidx);
	free(tmp);
	free(specs);
	free(spec_ev);
	return err;
}

/* The name a program's first thread has until it names itself: its file's base name,
 * as the kernel cuts it (15 bytes). */
static void base_comm(const char *path, char *buf, size_t size)
{
	const char *b = strrchr(path, '/');

	snprintf(buf, size, "%.15s", b ? b + 1 : path);
}

/* One run of a program with a unit per thread: every inherited copy of the events
 * reports its thread's counts when the thread ends, into one ring that is read when
 * the program has ended; the first thread holds the rest of the total. */
int tc_stat_count_threads_once(const struct tacho_stat_opts *o, struct tacho_stat *s,
			       unsigned run, unsigned rep, struct tacho_diag *diag)
{
	struct tacho_child_opts cho = { .sz = sizeof(cho), .forward_signals = true,
					 .stop = o->stop };
	struct tacho_counter_spec *specs = NULL;
	struct tacho_count *counts = NULL;
	struct tc_stat_thread *th = NULL;
	struct tc_stat_cells *cells = NULL;
	struct tacho_child *ch = NULL;
	struct tc_perf_grid g = { 0 };
	unsigned *spec_ev = NULL;
	size_t n = 0, nth = 0, ncpus = 0;
	uint64_t lost = 0;
	int *cpus = NULL;
	char comm[16];
	double t0, t1;
	pid_t pid;
	int err, exec_err = 0;

	err = build_specs(s, run, &specs, &spec_ev, &n);
	if (err)
		goto out;
	counts = calloc(n ? n : 1, sizeof(*counts));
	if (!counts) {
		err = -ENOMEM;
		goto out;
	}
	err = tacho_child_start(o->argv, &cho, &ch);
	if (err)
		goto out;
	pid = tacho_child_pid(ch);
	/* on every CPU: the kernel maps no ring of an inherited event that follows its
	 * task from CPU to CPU (all its copies would write into one) */
	err = tc_online_cpus(&cpus, &ncpus);
	if (!err)
		err = tc_perf_grid_init(&g, cpus, ncpus, &pid, 1);
	if (!err)
		err = tc_stat_cells_open(specs, n, &g, TC_PERF_INHERIT | TC_PERF_ENABLE_ON_EXEC,
					 true, &cells);
	if (err)
		goto out;
	t0 = now_ns();
	err = tacho_child_exec(ch, &exec_err);
	if (err == -TACHO_ENOSTART) {
		tc_stat_set_exec_diag(o, diag, exec_err);
		goto out;
	}
	if (!err)
		err = tacho_child_wait(ch, &s->exit);
	t1 = now_ns();
	if (err)
		goto out;
	s->have_exit = true;
	if (tacho_child_signals(ch))
		s->interrupted = true;
	if (s->exit.signal || tacho_child_signals(ch))
		s->cut = true;
	err = tc_stat_cells_read(cells, counts);
	if (err)
		goto out;
	base_comm(o->argv[0], comm, sizeof(comm));
	err = tc_stat_cells_threads(cells, counts, pid, comm, &th, &nth, &lost);
	if (err)
		goto out;
	if (lost)
		tc_log(TACHO_LOG_WARN, "%llu reports of ending threads were lost (more threads "
		       "than the ring holds): what they counted is in the first thread's "
		       "counts", (unsigned long long)lost);
	if (run == 0)
		s->wall_ns[rep] = t1 - t0;
	for (size_t i = 0; i < n; i++)
		tc_stat_record(&s->ev[spec_ev[i]], &counts[i], rep);
	for (size_t t = 0; t < nth; t++) {
		struct stat_unit *u = NULL;

		for (size_t k = 0; k < s->nunits && !u; k++)
			if (s->units[k].pub.tid == th[t].tid)
				u = &s->units[k];
		if (!u)
			u = unit_add(s);
		if (!u) {
			err = -ENOMEM;
			goto out;
		}
		u->pub.tid = th[t].tid;
		u->pub.pid = th[t].pid;
		snprintf(u->comm, sizeof(u->comm), "%s", th[t].comm);
		if (th[t].tid < 0)
			snprintf(u->label, sizeof(u->label), "(threads without a report)");
		else
			snprintf(u->label, sizeof(u->label), "%s-%d", th[t].comm, (int)th[t].tid);
		for (size_t i = 0; i < n; i++)
			tc_stat_record(&u->ev[spec_ev[i]], &th[t].counts[i], rep);
	}
out:
	units_finish(s);
	tc_stat_threads_free(th, nth);
	tc_stat_cells_free(cells);
	tc_perf_grid_exit(&g);
	tacho_child_free(ch);
	free(cpus);
	free(counts);
	free(specs);
	free(spec_ev);
	return err;
}
