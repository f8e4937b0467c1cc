/* sampler.c - the live sampler: rows (the machine, CPUs, processes, threads, cgroups),
 * each an engine list over its grid; one sample reads them all, turns counts into
 * rates and history, and hands out an immutable frame. Which processes, threads and
 * cgroups have rows, as they come and go under a cap and a descriptor budget, is
 * sampler-follow.c's (sampler-int.h: what the two share). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "events/events.h"
#include "live/sampler-int.h"

#define DEFAULT_MAX_ROWS 32
#define DEFAULT_HISTORY 120
#define MAX_HISTORY 100000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- rows --- */

void tc_live_row_free(struct lrow *r, size_t nev)
{
	if (!r)
		return;
	tc_perf_list_free(r->list);
	for (size_t e = 0; r->why && e < nev; e++)
		free(r->why[e]);
	free(r->why);
	free(r->hint);
	free(r->name);
	free(r->path);
	free(r->cnt);
	free(r->prev_total);
	free(r->prev_ena);
	free(r->prev_run);
	free(r->vals);
	free(r->hist);
	free(r);
}

struct lrow *tc_live_row_new(struct tacho_live *l, enum tacho_live_view kind, long long id,
			     const char *name)
{
	struct lrow *r = calloc(1, sizeof(*r));
	size_t n = l->nev;

	if (!r)
		return NULL;
	r->kind = kind;
	r->id = id;
	r->name = tc_strdup(name);
	r->cnt = calloc(n, sizeof(*r->cnt));
	r->prev_total = calloc(n, sizeof(*r->prev_total));
	r->prev_ena = calloc(n, sizeof(*r->prev_ena));
	r->prev_run = calloc(n, sizeof(*r->prev_run));
	r->vals = calloc(n, sizeof(*r->vals));
	r->why = calloc(n, sizeof(*r->why));
	r->hint = calloc(n, sizeof(*r->hint));
	r->hist = malloc(n * l->H * sizeof(*r->hist));
	r->cpus = NAN;
	if (!r->name || !r->cnt || !r->prev_total || !r->prev_ena || !r->prev_run || !r->vals ||
	    !r->why || !r->hint || !r->hist) {
		tc_live_row_free(r, n);
		return NULL;
	}
	/* a row opened after this sample's reads is in the frame unread: no value yet,
	 * never a zero */
	for (size_t e = 0; e < n; e++)
		r->vals[e] = (struct tacho_live_value){
			.status = TACHO_COUNT_NOT_COUNTED, .total = NAN, .rate = NAN,
			.why = "counting began during this interval: its first value comes with "
			       "the next",
		};
	return r;
}

int tc_live_rows_push(struct tacho_live *l, struct lrow *r)
{
	if (l->nrows == l->arows) {
		size_t n = l->arows ? 2 * l->arows : 16;
		struct lrow **p = realloc(l->rows, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->rows = p;
		l->arows = n;
	}
	l->rows[l->nrows++] = r;
	l->fds += r->nfds;
	return 0;
}

void tc_live_rows_remove(struct tacho_live *l, size_t i)
{
	l->fds -= l->rows[i]->nfds;
	tc_live_row_free(l->rows[i], l->nev);
	memmove(&l->rows[i], &l->rows[i + 1], (l->nrows - i - 1) * sizeof(*l->rows));
	l->nrows--;
}

/* Opens r's list over g with flags. 0; -ESRCH when no event opened anywhere because
 * the task is gone; -EACCES when none opened for want of permission; -errno. */
int tc_live_row_open(struct tacho_live *l, struct lrow *r, const struct tc_perf_grid *g,
		     unsigned flags)
{
	size_t nopen = 0, esrch = 0, eacces = 0;
	int err;

	err = tc_perf_list_new(&r->list);
	for (size_t e = 0; !err && e < l->nev; e++) {
		int k = tc_perf_list_add(r->list, &l->attrs[e], l->names[e], l->groups[e]);
		err = k < 0 ? k : 0;
	}
	if (!err)
		err = tc_perf_list_open(r->list, g, flags);
	if (err)
		return err;
	r->nfds = 0;
	for (size_t e = 0; e < l->nev; e++) {
		struct tc_perf_ev *ev = tc_perf_list_event(r->list, e);
		size_t n = tc_perf_ev_nopen(ev);
		int why = tc_perf_ev_error(ev, NULL, NULL);

		r->nfds += (long)n;
		nopen += n > 0;
		esrch += !n && (why == -ESRCH || why == 0);
		eacces += !n && (why == -EACCES || why == -EPERM);
	}
	if (!nopen && l->nev && esrch == l->nev)
		return -ESRCH;
	if (!nopen && l->nev && eacces == l->nev && r->kind >= TACHO_LIVE_PROCESS &&
	    r->kind <= TACHO_LIVE_THREAD)
		return -EACCES;
	r->opened = now_s();
	r->since = l->started ? r->opened - l->t0 : 0;
	return 0;
}

int tc_live_row_enable(struct tacho_live *l, struct lrow *r)
{
	(void)l;
	r->enabled = true;
	return tc_perf_list_enable(r->list);
}

/* Why event e of r has no value: the engine's explanation of its refusal, worked out
 * once. */
static const char *row_why(struct tacho_live *l, struct lrow *r, size_t e, enum tacho_hint *hint)
{
	struct tc_perf_ev *ev = tc_perf_list_event(r->list, e);
	struct perf_event_attr a;
	unsigned flags;
	char buf[512];
	int err;

	if (!r->why[e]) {
		err = tc_perf_ev_error(ev, &flags, &a);
		if (!err) {
			r->why[e] = tc_strdup("the target ended before its counters could open");
		} else {
			tc_perf_explain(&l->env, err, &a, NULL, flags, buf, sizeof(buf),
					&r->hint[e]);
			r->why[e] = tc_strdup(buf);
		}
	}
	*hint = r->hint[e];
	return r->why[e];
}

bool tc_live_is_clock(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && (a->config == PERF_COUNT_SW_CPU_CLOCK ||
						 a->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* /proc/stat's busy ticks of every CPU into l->busy (CPU and machine views). */
static void read_busy(struct tacho_live *l)
{
	char path[PATH_MAX], *text;
	size_t len;

	l->busy_ok = false;
	snprintf(path, sizeof(path), "%s/stat", l->proc_root);
	if (tc_read_file(path, &text, &len, 0))
		return;
	l->busy_ok = tc_proc_cpu_busy_parse(text, len, l->busy, l->nbusy) > 0;
	free(text);
}

/* The busy ticks of a CPU or machine row, false when /proc/stat lacks one of them. */
static bool row_busy(const struct tacho_live *l, const struct lrow *r, uint64_t *out)
{
	uint64_t sum = 0;

	if (!l->busy_ok)
		return false;
	for (size_t i = 0; i < l->ncpus; i++) {
		int c = l->cpus[i];
		if (r->kind == TACHO_LIVE_CPU && c != r->id)
			continue;
		if (c < 0 || (size_t)c >= l->nbusy || l->busy[c] == UINT64_MAX)
			return false;
		sum += l->busy[c];
	}
	*out = sum;
	return true;
}

/* A CPU-wide clock counts the time it was enabled, every CPU's 1000 msec a second,
 * busy or idle: on CPU and machine rows the clocks are the CPUs' busy time from
 * /proc/stat instead (user, nice, system, irq, softirq), in msec. True when it set v. */
static bool busy_clock(struct tacho_live *l, struct lrow *r, size_t e, double dt,
		       struct tacho_live_value *v)
{
	uint64_t b;
	double ms_per_tick = 1000.0 / (double)l->hz;

	if ((r->kind != TACHO_LIVE_CPU && r->kind != TACHO_LIVE_MACHINE) ||
	    !tc_live_is_clock(&l->attrs[e]))
		return false;
	if (!row_busy(l, r, &b)) {
		v->status = TACHO_COUNT_NOT_COUNTED;
		v->why = "the CPU's busy time could not be read from /proc/stat";
		v->hint = TACHO_HINT_MACHINE;
		return true;
	}
	if (!r->busy_have && !r->read_once)
		r->busy0 = b;
	v->status = TACHO_COUNT_COUNTED;
	v->coverage = 1;
	v->total = (double)(b - (b >= r->busy0 ? r->busy0 : b)) * ms_per_tick;
	if (r->read_once && r->busy_have && dt > 0 && b >= r->busy_prev)
		v->rate = (double)(b - r->busy_prev) * ms_per_tick / dt;
	return true;
}

/* The CPUs a CPU or machine row kept busy since its last read (NAN at the first). */
static void row_busy_cpus(struct tacho_live *l, struct lrow *r, double dt)
{
	uint64_t b;

	if (r->kind != TACHO_LIVE_CPU && r->kind != TACHO_LIVE_MACHINE)
		return;
	r->cpus = NAN;
	if (!row_busy(l, r, &b)) {
		r->busy_have = false;
		return;
	}
	if (!r->busy_have && !r->read_once)
		r->busy0 = b;
	if (r->busy_have && r->read_once && dt > 0 && b >= r->busy_prev)
		r->cpus = (double)(b - r->busy_prev) / ((double)l->hz * dt);
	r->busy_prev = b;
	r->busy_have = true;
}

/* Reads r and updates its values, rates and history; now is monotonic seconds, dt the
 * time since the previous sample (0 at the first). */
static int row_read(struct tacho_live *l, struct lrow *r, double now, double dt)
{
	int err = tc_perf_list_read(r->list, r->cnt);
	double span = r->read_once ? dt : now - r->opened;

	if (err)
		return err;
	for (size_t e = 0; e < l->nev; e++) {
		const struct tc_perf_count *c = &r->cnt[e];
		struct tacho_live_value *v = &r->vals[e];
		double total, rate = NAN;

		memset(v, 0, sizeof(*v));
		v->total = v->rate = NAN;
		if (busy_clock(l, r, e, dt, v))
			goto push;
		if (c->status == TACHO_COUNT_NOT_SUPPORTED) {
			v->status = c->status;
			v->why = row_why(l, r, e, &v->hint);
			goto push;
		}
		if (c->err) {
			/* a source that never counts here: not even a task that has not
			 * run since the open shows a 0 */
			v->status = TACHO_COUNT_NOT_COUNTED;
			v->why = c->why;
			v->hint = TACHO_HINT_MACHINE;
			goto push;
		}
		if (!c->enabled) {
			/* a task that has not run since the open (a task's times run only
			 * while it is on a CPU) counted nothing: 0, not "no value" */
			v->status = TACHO_COUNT_COUNTED;
			v->total = r->read_once ? r->prev_total[e] : 0;
			v->rate = l->started && span > 0 ? 0 : NAN;
			v->coverage = 1;
			rate = v->rate;
			goto push;
		}
		if (c->status == TACHO_COUNT_NOT_COUNTED) {
			v->status = c->status;
			v->why = c->eof ? "the pinned event could not get a counter and is in "
					  "error state"
					: "the event was enabled but never got a counter (too many "
					  "events at once: use fewer)";
			goto push;
		}
		total = c->value * l->scales[e];
		/* a multiplexed count is an estimate that may step back: a total never
		 * does (counters exported as such must be monotonic) */
		if (r->read_once && isfinite(r->prev_total[e]) && total < r->prev_total[e])
			total = r->prev_total[e];
		v->status = c->status;
		v->total = total;
		v->coverage = c->coverage;
		if (r->read_once) {
			uint64_t dena = c->enabled - r->prev_ena[e], drun = c->running - r->prev_run[e];
			double prev = isfinite(r->prev_total[e]) ? r->prev_total[e] : 0;

			if (!dena) {
				rate = 0;     /* the task did not run in the interval */
				v->coverage = 1;
			} else if (!drun) {
				v->status = TACHO_COUNT_NOT_COUNTED;
				v->why = "not on a counter during the last interval";
				v->coverage = 0;
			} else {
				v->coverage = (double)drun / (double)dena;
				rate = dt > 0 ? (total - prev) / dt : NAN;
			}
		} else if (span > 0 && l->started) {
			rate = total / span;
		}
		v->rate = rate;
		r->prev_total[e] = total;
		r->prev_ena[e] = c->enabled;
		r->prev_run[e] = c->running;
push:
		r->hist[e * l->H + r->hpos] = v->rate;
	}
	r->hpos = (r->hpos + 1) % l->H;
	if (r->hcount < l->H)
		r->hcount++;
	row_busy_cpus(l, r, dt);
	r->read_once = true;
	return 0;
}

/* --- the fixed rows: the machine, CPUs --- */

static int add_cpu_rows(struct tacho_live *l)
{
	struct tc_perf_grid g;
	struct lrow *r;
	int err;

	if (l->view == TACHO_LIVE_MACHINE) {
		r = tc_live_row_new(l, TACHO_LIVE_MACHINE, -1, "all");
		if (!r)
			return -ENOMEM;
		err = tc_perf_grid_init(&g, l->cpus, l->ncpus, NULL, 0);
		if (!err) {
			err = tc_live_row_open(l, r, &g, TC_PERF_GROUP_READ);
			tc_perf_grid_exit(&g);
		}
		if (!err)
			err = tc_live_rows_push(l, r);
		if (err)
			tc_live_row_free(r, l->nev);
		return err;
	}
	for (size_t i = 0; i < l->ncpus; i++) {
		char name[32];

		snprintf(name, sizeof(name), "cpu%d", l->cpus[i]);
		r = tc_live_row_new(l, TACHO_LIVE_CPU, l->cpus[i], name);
		if (!r)
			return -ENOMEM;
		err = tc_perf_grid_init(&g, &l->cpus[i], 1, NULL, 0);
		if (!err) {
			err = tc_live_row_open(l, r, &g, TC_PERF_GROUP_READ);
			tc_perf_grid_exit(&g);
		}
		if (!err)
			err = tc_live_rows_push(l, r);
		if (err) {
			tc_live_row_free(r, l->nev);
			return err;
		}
	}
	return 0;
}

/* --- the sampler --- */

void tacho_live_free(struct tacho_live *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nrows; i++)
		tc_live_row_free(l->rows[i], l->nev);
	free(l->rows);
	for (size_t e = 0; e < l->nev; e++) {
		if (l->names)
			free(l->names[e]);
		if (l->units)
			free(l->units[e]);
	}
	for (size_t i = 0; i < l->ncg; i++)
		free(l->cg[i]);
	free(l->cg);
	free(l->names);
	free(l->units);
	free(l->scales);
	free(l->attrs);
	free(l->groups);
	free(l->cpus);
	free(l->perf_root);
	free(l->proc_root);
	free(l->prev);
	free(l->cand);
	free(l->busy);
	tc_perf_list_free(l->ranker);
	tc_hmap_exit(&l->rank_idx);
	free(l->rank_w);
	tc_hmap_exit(&l->prev_map);
	tc_hmap_exit(&l->refused);
	tc_scan_exit(&l->scan);
	free(l);
}

size_t tacho_live_nevents(const struct tacho_live *l)
{
	return l ? l->nev : 0;
}

static int copy_events(struct tacho_live *l, const struct tacho_evlist *list)
{
	size_t n = tacho_evlist_count(list);

	l->nev = n;
	l->attrs = calloc(n, sizeof(*l->attrs));
	l->groups = calloc(n, sizeof(*l->groups));
	l->names = calloc(n, sizeof(*l->names));
	l->units = calloc(n, sizeof(*l->units));
	l->scales = calloc(n, sizeof(*l->scales));
	if (!l->attrs || !l->groups || !l->names || !l->units || !l->scales)
		return -ENOMEM;
	for (size_t e = 0; e < n; e++) {
		int lead = tc_evlist_group_leader(list, e);
		int err = tacho_evlist_attr(list, e, &l->attrs[e]);
		const char *unit = tacho_evlist_unit(list, e);

		if (err)
			return err;
		l->groups[e] = lead >= 0 ? lead : TACHO_GROUP_NONE;
		l->names[e] = tc_strdup(tacho_evlist_name(list, e));
		l->units[e] = tc_strdup(unit ? unit : "");
		l->scales[e] = tc_evlist_scale(list, e);
		if (!l->names[e] || !l->units[e])
			return -ENOMEM;
	}
	return 0;
}

static int setup_cgroups(struct tacho_live *l, const struct tacho_live_opts *o,
			 struct tacho_diag *diag)
{
	struct tc_cgroup_mounts m;
	const char *root;
	int err;

	err = tc_cgroup_mounts_read(o->mounts, &m);
	if (err)
		return tc_diag_set(diag, o->mounts ? o->mounts : "/proc/self/mounts", 0, 0, err,
				   "cannot read the mount table: %s", tacho_strerror(err));
	root = tc_cgroup_perf_root(&m);
	if (!root)
		return tc_diag_set(diag, "", 0, 0, -ENOENT, "no cgroup hierarchy with perf_event "
				   "is mounted (neither cgroup v2 nor a v1 perf_event one)");
	l->perf_root = tc_strdup(root);
	l->cg = calloc(o->ncgroups ? o->ncgroups : 1, sizeof(*l->cg));
	if (!l->perf_root || !l->cg)
		return -ENOMEM;
	for (size_t i = 0; i < o->ncgroups; i++) {
		char path[PATH_MAX];

		err = tc_cgroup_resolve(root, o->cgroups[i], path, sizeof(path));
		if (err)
			return tc_diag_set(diag, o->cgroups[i] ? o->cgroups[i] : "", 0, 0,
					   err == -EINVAL || err == -ERANGE ? -EINVAL : -ENOENT,
					   "no cgroup '%s' under %s (%s)", o->cgroups[i], root,
					   tacho_strerror(err));
		l->cg[l->ncg] = tc_strdup(path);
		if (!l->cg[l->ncg])
			return -ENOMEM;
		l->ncg++;
	}
	return 0;
}

/* The options' first version (TC_OPTS_VALID) ends at mounts: fd_limit came later. */
#define TC_OPTS_V1_tacho_live_opts tc_offsetofend(struct tacho_live_opts, mounts)

int tacho_live_new(const struct tacho_live_opts *o, struct tacho_live **out,
		   struct tacho_diag *diag)
{
	struct tacho_live *l;
	struct rlimit rl;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(o, tacho_live_opts, diag);
	if (err == -TACHO_EVERSION)
		return err;
	if (err || !o || !out || (unsigned)o->view >= TACHO_LIVE_VIEW_COUNT ||
	    !tacho_evlist_count(o->events) || o->pid < 0 || (o->child && o->pid <= 0) ||
	    (o->ncgroups && !o->cgroups) || o->history > MAX_HISTORY)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "bad options for the live sampler");
	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->view = o->view;
	l->pid = o->pid;
	l->child = o->child;
	l->max_rows = o->max_rows ? o->max_rows : DEFAULT_MAX_ROWS;
	l->H = o->history ? o->history : DEFAULT_HISTORY;
	l->proc_root = tc_strdup(o->proc_root ? o->proc_root : "/proc");
	l->hz = sysconf(_SC_CLK_TCK);
	if (l->hz <= 0)
		l->hz = 100;
	if (TC_OPTS_GET(o, tacho_live_opts, fd_limit, 0) > 0)
		l->fd_limit = o->fd_limit;
	else
		l->fd_limit = getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ?
			      1024 - 64 : (long)rl.rlim_cur - 64;
	l->rank = -1;
	tc_perf_env_probe(&l->env);
	l->privileged = tc_perf_env_privileged(&l->env);
	l->euid = (unsigned)geteuid();
	err = l->proc_root ? copy_events(l, o->events) : -ENOMEM;
	if (err)
		goto out_free;

	switch (l->view) {
	case TACHO_LIVE_MACHINE:
	case TACHO_LIVE_CPU:
	case TACHO_LIVE_CGROUP:
		err = tc_online_cpus(&l->cpus, &l->ncpus);
		if (err)
			goto out_free;
		if (l->view != TACHO_LIVE_CGROUP) {
			for (size_t i = 0; i < l->ncpus; i++)
				if (l->cpus[i] >= 0 && (size_t)l->cpus[i] >= l->nbusy)
					l->nbusy = (size_t)l->cpus[i] + 1;
			l->busy = calloc(l->nbusy ? l->nbusy : 1, sizeof(*l->busy));
			err = l->busy ? add_cpu_rows(l) : -ENOMEM;
			break;
		}
		err = setup_cgroups(l, o, diag);
		if (!err)
			err = tc_live_refresh_cgroups(l, true);
		break;
	case TACHO_LIVE_PROCESS:
	case TACHO_LIVE_THREAD:
		if (l->pid > 0 && kill(l->pid, 0) && errno == ESRCH) {
			err = tc_diag_set(diag, "", 0, 0, -ESRCH, "no process %d", (int)l->pid);
			goto out_free;
		}
		if (l->child && l->view == TACHO_LIVE_PROCESS) {
			/* before its exec: the counters start at the exec */
			struct tc_task t = { .st.pid = l->pid, .tgid = l->pid,
					     .uid = (unsigned)geteuid() };
			struct lrow *r;
			struct tc_perf_grid g;

			err = tc_task_stat(l->proc_root, l->pid, l->pid, &t.st);
			r = err ? NULL : tc_live_row_new(l, TACHO_LIVE_PROCESS, l->pid, t.st.comm);
			if (!err && !r)
				err = -ENOMEM;
			if (err)
				goto out_free;
			r->pid = r->tid = l->pid;
			r->start = t.st.starttime;
			r->uid = t.uid;
			r->enabled = true;       /* by the exec */
			err = tc_perf_grid_init(&g, NULL, 0, &l->pid, 1);
			if (!err) {
				err = tc_live_row_open(l, r, &g, TC_PERF_GROUP_READ | TC_PERF_INHERIT |
					       TC_PERF_ENABLE_ON_EXEC);
				tc_perf_grid_exit(&g);
			}
			if (!err)
				err = tc_live_rows_push(l, r);
			if (err) {
				tc_live_row_free(r, l->nev);
				goto out_free;
			}
			break;
		}
		err = tc_online_cpus(&l->cpus, &l->ncpus);
		if (!err && TC_OPTS_GET(o, tacho_live_opts, rank_by, 0) && l->pid <= 0) {
			if (o->rank_by > l->nev) {
				err = tc_diag_set(diag, "", 0, 0, -EINVAL, "rank_by %u is past the "
						  "%zu events", o->rank_by, l->nev);
				goto out_free;
			}
			err = tacho_live_rank_by(l, (int)o->rank_by - 1);
			if (err) {
				err = tc_diag_set(diag, "", 0, 0, err, "cannot choose the rows by "
						  "%s (sampling it on every CPU): %s",
						  l->names[o->rank_by - 1], tacho_strerror(err));
				goto out_free;
			}
		}
		if (!err)
			err = tc_live_scan_tasks(l, 0);
		if (!err)
			err = tc_live_follow_tasks(l);
		if (!err && l->pid > 0 && !l->nrows && !l->no_permission)
			err = tc_diag_set(diag, "", 0, 0, -ESRCH, "no process %d", (int)l->pid);
		break;
	default:
		err = -EINVAL;
	}
	if (err)
		goto out_free;
	*out = l;
	return 0;

out_free:
	tacho_live_free(l);
	if (err == -ENOMEM)
		tc_diag_set(diag, "", 0, 0, err, "out of memory");
	return err;
}

/* The order of a frame's rows: task rows by CPU use (the busiest first), the others
 * as they are (CPUs by number, cgroups by path). */
static int cmp_rows(const void *a, const void *b)
{
	const struct tacho_live_row *x = a, *y = b;
	double cx = isnan(x->cpus) ? -1 : x->cpus, cy = isnan(y->cpus) ? -1 : y->cpus;
	bool task = x->kind == TACHO_LIVE_PROCESS || x->kind == TACHO_LIVE_THREAD;

	if (task && cx != cy)
		return cx > cy ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static struct tacho_live_frame *make_frame(struct tacho_live *l, double now, double dt,
					   double took)
{
	struct tacho_live_frame *f;
	size_t H = l->H, off = 0;
	struct timespec wall;

	f = tc_frame_new(l->nev, (const char *const *)l->names, (const char *const *)l->units,
			 l->nrows, H);
	if (!f)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &wall);
	f->view = l->view;
	f->time = now - l->t0;
	f->interval = dt;
	f->wall = (double)wall.tv_sec + (double)wall.tv_nsec * 1e-9;
	/* a task's CPU use from task-clock where it is counted (exact), else from /proc's
	 * clock ticks (a hundredth of a second) */
	int tclock = -1;
	for (size_t e = 0; e < l->nev; e++)
		if (l->attrs[e].type == PERF_TYPE_SOFTWARE &&
		    l->attrs[e].config == PERF_COUNT_SW_TASK_CLOCK &&
		    !l->attrs[e].exclude_user && !l->attrs[e].exclude_kernel) {
			tclock = (int)e;
			break;
		}
	for (size_t i = 0; i < l->nrows; i++) {
		const struct lrow *r = l->rows[i];
		struct tacho_live_row *o = &f->rows[i];
		struct tacho_live_value *v = &f->vals[i * l->nev];
		double *h = &f->hist[off];

		o->kind = r->kind;
		o->id = r->id;
		o->pid = r->kind == TACHO_LIVE_PROCESS || r->kind == TACHO_LIVE_THREAD ? r->pid : 0;
		o->uid = r->uid;
		o->name = tc_frame_str(f, r->name);
		o->cpus = r->cpus;
		if ((r->kind == TACHO_LIVE_PROCESS || r->kind == TACHO_LIVE_THREAD) && tclock >= 0 &&
		    isfinite(r->vals[tclock].rate))
			o->cpus = r->vals[tclock].rate / l->scales[tclock] / 1e9;   /* ns per s */
		o->ended = r->ended;
		o->since = r->since;
		o->values = v;
		o->history = h;
		o->nhistory = r->hcount;
		if (!o->name)
			goto out_free;
		for (size_t e = 0; e < l->nev; e++) {
			v[e] = r->vals[e];
			if (v[e].why && !(v[e].why = tc_frame_str(f, v[e].why)))
				goto out_free;
			/* the ring unrolled, oldest first */
			for (size_t k = 0; k < r->hcount; k++)
				h[e * r->hcount + k] =
					r->hist[e * H + (r->hpos + H - r->hcount + k) % H];
		}
		off += l->nev * r->hcount;
	}
	qsort(f->rows, f->nrows, sizeof(*f->rows), cmp_rows);
	f->health = (struct tacho_live_health){
		.sample_s = took,
		.rows = (unsigned)l->nrows,
		.not_followed = l->not_followed,
		.no_permission = l->no_permission,
		.no_descriptors = l->no_descriptors,
		.ended = l->ended,
		.fds = l->fds,
		.fd_limit = l->fd_limit,
	};
	if (!l->nrows) {
		const char *why = l->empty[0] ? l->empty : NULL;
		char buf[160];
		if (!why && l->no_descriptors) {
			snprintf(buf, sizeof(buf), "every target left out at the file descriptor "
				 "limit (%ld)", l->fd_limit);
			why = buf;
		} else if (!why && l->no_permission) {
			why = "every target belongs to another user, whom this one may not count";
		} else if (!why && l->view == TACHO_LIVE_CGROUP) {
			why = "every cgroup below the hierarchy's root went away";
		}
		if (why && !(f->health.empty = tc_frame_str(f, why)))
			goto out_free;
	}
	return f;

out_free:
	tacho_live_frame_put(f);
	return NULL;
}

int tacho_live_sample(struct tacho_live *l, struct tacho_live_frame **out)
{
	double now, dt;
	int err = 0;

	if (!l || !out)
		return -EINVAL;
	*out = NULL;
	now = now_s();
	/* rows reported ended in the previous frame go now */
	for (size_t i = l->nrows; i-- > 0;)
		if (l->rows[i]->ended)
			tc_live_rows_remove(l, i);
	l->not_followed = l->no_permission = l->no_descriptors = l->ended = 0;
	if (!l->started) {
		for (size_t i = 0; i < l->nrows; i++)
			if (!l->rows[i]->enabled)
				tc_live_row_enable(l, l->rows[i]);
		l->started = true;
		l->t0 = l->tprev = now;
		for (size_t i = 0; i < l->nrows; i++) {
			l->rows[i]->opened = now;
			l->rows[i]->since = 0;
		}
	}
	dt = now - l->tprev;
	/* find the rows that ended before reading them: their reads are then final; the
	 * ranked event's counts since the last sample choose the new ones */
	if (l->view == TACHO_LIVE_PROCESS || l->view == TACHO_LIVE_THREAD) {
		tc_live_rank_drain(l);
		err = tc_live_scan_tasks(l, dt);
	}
	else if (l->view == TACHO_LIVE_CGROUP)
		err = tc_live_refresh_cgroups(l, false);
	else
		read_busy(l);
	for (size_t i = 0; !err && i < l->nrows; i++)
		err = row_read(l, l->rows[i], now, dt);
	if (err)
		return err;
	/* then follow what is new */
	if (l->view == TACHO_LIVE_PROCESS || l->view == TACHO_LIVE_THREAD) {
		if (!(l->child && l->view == TACHO_LIVE_PROCESS))
			err = tc_live_follow_tasks(l);
	} else if (l->view == TACHO_LIVE_CGROUP) {
		err = tc_live_refresh_cgroups(l, true);
	}
	if (err)
		return err;
	l->tprev = now;
	*out = make_frame(l, now, dt, now_s() - now);
	return *out ? 0 : -ENOMEM;
}
