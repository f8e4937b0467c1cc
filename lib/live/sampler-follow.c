/* sampler-follow.c - which rows the live sampler has, as they come and go: the cgroups
 * asked for (or every one below the root), ended when their directory goes; processes
 * and threads scanned from /proc, ranked by their CPU time (or by the counts of an
 * event sampled on every CPU, tacho_live_rank_by) and followed under the cap and the
 * descriptor budget, ended when they exit. The rows themselves are sampler.c's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events/events.h"
#include "live/sampler-int.h"

#define CGROUP_DEPTH 4

/* --- cgroups --- */

static struct lrow *find_cgroup_row(struct tacho_live *l, const char *path)
{
	for (size_t i = 0; i < l->nrows; i++)
		if (!strcmp(l->rows[i]->path, path))
			return l->rows[i];
	return NULL;
}

/* A row for the cgroup directory path: 0, 1 when left out, -errno. */
static int add_cgroup_row(struct tacho_live *l, const char *path)
{
	size_t rl = strlen(l->perf_root);
	struct tc_perf_grid g;
	pid_t dirfd_as_pid;
	struct lrow *r;
	struct stat sb;
	int fd, err;

	if ((size_t)l->fd_limit < (size_t)l->fds + l->nev * l->ncpus) {
		l->no_descriptors++;
		return 1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		err = -errno;
		close(fd);
		return err;
	}
	r = tc_live_row_new(l, TACHO_LIVE_CGROUP, (long long)sb.st_ino,
		    path[rl] ? path + rl : "/");
	if (!r) {
		close(fd);
		return -ENOMEM;
	}
	r->path = tc_strdup(path);
	dirfd_as_pid = fd;
	err = r->path ? tc_perf_grid_init(&g, l->cpus, l->ncpus, &dirfd_as_pid, 1) : -ENOMEM;
	if (!err) {
		/* the kernel holds the cgroup from the open on: the directory's descriptor
		 * is not needed after it */
		err = tc_live_row_open(l, r, &g, TC_PERF_CGROUP | TC_PERF_GROUP_READ);
		tc_perf_grid_exit(&g);
	}
	close(fd);
	if (!err && l->started)
		err = tc_live_row_enable(l, r);
	if (!err)
		err = tc_live_rows_push(l, r);
	if (err)
		tc_live_row_free(r, l->nev);
	return err;
}

struct cgwalk {
	char **paths;
	size_t n, alloc;
};

static int walk_cgroups(const char *dir, unsigned depth, struct cgwalk *w)
{
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (depth > CGROUP_DEPTH)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;     /* removed meanwhile */
	while (!err && (de = readdir(d))) {
		char path[PATH_MAX];
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (w->n == w->alloc) {
			size_t na = w->alloc ? 2 * w->alloc : 32;
			char **p = realloc(w->paths, na * sizeof(*p));
			if (!p) {
				err = -ENOMEM;
				break;
			}
			w->paths = p;
			w->alloc = na;
		}
		w->paths[w->n] = tc_strdup(path);
		if (!w->paths[w->n]) {
			err = -ENOMEM;
			break;
		}
		w->n++;
		err = walk_cgroups(path, depth + 1, w);
	}
	closedir(d);
	return err;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Rows of directories that are gone end; with add, the cgroups asked for, or every one
 * below the root (sorted, up to max_rows), get rows. */
int tc_live_refresh_cgroups(struct tacho_live *l, bool add)
{
	struct cgwalk w = { 0 };
	char **paths = l->cg;
	size_t n = l->ncg, followed = 0;
	int err = 0;

	if (!l->ncg && add) {
		err = walk_cgroups(l->perf_root, 1, &w);
		if (w.n)
			qsort(w.paths, w.n, sizeof(*w.paths), cmp_str);
		paths = w.paths;
		n = w.n;
		l->empty[0] = '\0';
		if (!err && !w.n && access(l->perf_root, R_OK | X_OK))
			snprintf(l->empty, sizeof(l->empty), "cannot list the cgroups below %s: "
				 "%s", l->perf_root, strerror(errno));
		else if (!err && !w.n)
			snprintf(l->empty, sizeof(l->empty), "no cgroup below %s (the root of the "
				 "perf_event hierarchy, not a row itself): nothing to show",
				 l->perf_root);
	}
	for (size_t i = 0; i < l->nrows; i++) {
		struct lrow *r = l->rows[i];
		struct stat sb;
		if (!r->ended && stat(r->path, &sb) && errno == ENOENT) {
			r->ended = true;
			l->ended++;
		}
		followed += !r->ended;
	}
	for (size_t i = 0; add && !err && i < n; i++) {
		int k;
		if (find_cgroup_row(l, paths[i]))
			continue;
		if (!l->ncg && followed >= l->max_rows) {
			l->not_followed++;
			continue;
		}
		k = add_cgroup_row(l, paths[i]);
		if (k == 0)
			followed++;
		else if (k < 0 && k != -ENOENT)
			err = k;
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.paths[i]);
	free(w.paths);
	return err;
}

/* --- tasks --- */

static uint64_t task_key(pid_t tid, uint64_t start)
{
	return tc_hash_u64(((uint64_t)(uint32_t)tid << 32) ^ start);
}

static bool prev_ticks(const struct tacho_live *l, pid_t tid, uint64_t start, uint64_t *ticks)
{
	uint32_t i;

	if (!tc_hmap_get(&l->prev_map, (uint64_t)tid, &i) || l->prev[i].start != start)
		return false;
	*ticks = l->prev[i].ticks;
	return true;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->delta != y->delta)
		return x->delta > y->delta ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

static struct lrow *find_task_row(struct tacho_live *l, pid_t tid, uint64_t start)
{
	for (size_t i = 0; i < l->nrows; i++)
		if (l->rows[i]->tid == tid && l->rows[i]->start == start)
			return l->rows[i];
	return NULL;
}

/* A row for task t, which used delta clock ticks over the last scan. 0; 1 when it was
 * left out (counted in the health); -errno. */
static int add_task_row(struct tacho_live *l, const struct tc_task *t, uint64_t delta)
{
	bool thread = l->view == TACHO_LIVE_THREAD;
	struct tc_perf_grid g;
	pid_t *tids = NULL;
	size_t ntids = 1;
	struct lrow *r;
	unsigned flags;
	int err;

	if (tc_hmap_get(&l->refused, task_key(t->st.pid, t->st.starttime), &(uint32_t){ 0 })) {
		l->no_permission++;
		return 1;
	}
	if (!l->privileged && t->uid != l->euid) {
		l->no_permission++;
		return 1;
	}
	if (thread) {
		tids = malloc(sizeof(*tids));
		if (!tids)
			return -ENOMEM;
		tids[0] = t->st.pid;
	} else {
		err = tc_proc_threads(t->st.pid, &tids, &ntids);
		if (err == -ESRCH || err == -ENOENT)
			return 1;
		if (err)
			return err;
	}
	if (l->fd_limit < l->fds + (long)(l->nev * ntids)) {
		free(tids);
		l->no_descriptors++;
		return 1;
	}
	r = tc_live_row_new(l, thread ? TACHO_LIVE_THREAD : TACHO_LIVE_PROCESS, t->st.pid, t->st.comm);
	if (!r) {
		free(tids);
		return -ENOMEM;
	}
	r->pid = t->tgid;
	r->tid = t->st.pid;
	r->uid = t->uid;
	r->start = t->st.starttime;
	r->ticks = t->st.ticks;
	/* its CPU use over the interval the scan covered (all of its ticks when it is
	 * new), so that its first frame has a CPU% though its counters have no rate yet */
	if (l->scan_dt > 0)
		r->cpus = (double)delta / ((double)l->hz * l->scan_dt);
	err = tc_perf_grid_init(&g, NULL, 0, tids, ntids);
	free(tids);
	/* a process: every thread it has, and (inherit) whatever they create; a thread:
	 * itself alone, its new threads get rows of their own */
	flags = TC_PERF_GROUP_READ | TC_PERF_SKIP_GONE | (thread ? 0 : TC_PERF_INHERIT);
	if (!err) {
		err = tc_live_row_open(l, r, &g, flags);
		tc_perf_grid_exit(&g);
	}
	if (err == -EACCES) {
		tc_hmap_put(&l->refused, task_key(t->st.pid, t->st.starttime), 0);
		l->no_permission++;
		tc_live_row_free(r, l->nev);
		return 1;
	}
	if (err == -ESRCH) {
		tc_live_row_free(r, l->nev);
		return 1;
	}
	if (!err && l->started)
		err = tc_live_row_enable(l, r);
	if (!err)
		err = tc_live_rows_push(l, r);
	if (err)
		tc_live_row_free(r, l->nev);
	return err;
}

/* --- choosing rows by an event --- */

#define RANK_PAGES 64
#define RANK_FREQ 1000

static int rank_record(void *arg, const struct perf_event_header *rec)
{
	struct tacho_live *l = arg;
	struct tc_perf_sample smp;
	uint64_t key;
	uint32_t i;

	if (rec->type != PERF_RECORD_SAMPLE ||
	    tc_perf_parse_sample(PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD, rec, &smp))
		return 0;
	key = l->view == TACHO_LIVE_THREAD ? smp.tid : smp.pid;
	if (!key)
		return 0;     /* the idle task */
	if (!tc_hmap_get(&l->rank_idx, key, &i)) {
		if (l->nrank == l->arank) {
			size_t n = l->arank ? 2 * l->arank : 256;
			double *w = realloc(l->rank_w, n * sizeof(*w));
			if (!w)
				return 0;
			l->rank_w = w;
			l->arank = n;
		}
		i = (uint32_t)l->nrank;
		if (tc_hmap_put(&l->rank_idx, key, i))
			return 0;
		l->rank_w[l->nrank++] = 0;
	}
	l->rank_w[i] += smp.period ? (double)smp.period : 1;
	return 0;
}

/* The ranked event's counts by task since the last drain into rank_idx / rank_w. */
void tc_live_rank_drain(struct tacho_live *l)
{
	tc_hmap_exit(&l->rank_idx);
	l->nrank = 0;
	if (l->ranker)
		tc_perf_list_drain(l->ranker, rank_record, l);
}

static double rank_weight(const struct tacho_live *l, pid_t key)
{
	uint32_t i;

	return l->ranker && tc_hmap_get(&l->rank_idx, (uint64_t)key, &i) ? l->rank_w[i] : 0;
}

int tacho_live_rank_by(struct tacho_live *l, int event)
{
	struct perf_event_attr a;
	struct tc_perf_list *list = NULL;
	struct tc_perf_grid g;
	size_t bad;
	bool sharing;
	int err, k;

	if (!l || event < -1 || (event >= 0 && (size_t)event >= l->nev) ||
	    (l->view != TACHO_LIVE_PROCESS && l->view != TACHO_LIVE_THREAD) || l->pid > 0)
		return -EINVAL;
	if (event == l->rank)
		return 0;
	tc_perf_list_free(l->ranker);
	l->ranker = NULL;
	l->rank = -1;
	tc_hmap_exit(&l->rank_idx);
	l->nrank = 0;
	if (event < 0 || tc_live_is_clock(&l->attrs[event]))
		return 0;     /* CPU time from /proc is what a clock measures */
	a = l->attrs[event];
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	a.read_format = 0;
	a.inherit = 0;
	if (a.type == PERF_TYPE_TRACEPOINT) {
		a.freq = 0;
		a.sample_period = 1;    /* every occurrence: a first one is seen at once */
	} else {
		a.freq = 1;
		a.sample_freq = RANK_FREQ;
	}
	err = tc_perf_grid_init(&g, l->cpus, l->ncpus, NULL, 0);
	if (err)
		return err;
	err = tc_perf_list_new(&list);
	if (!err) {
		k = tc_perf_list_add(list, &a, l->names[event], TACHO_GROUP_NONE);
		err = k < 0 ? k : tc_perf_list_open(list, &g, 0);
	}
	tc_perf_grid_exit(&g);
	if (!err && !tc_perf_ev_nopen(tc_perf_list_event(list, 0))) {
		err = tc_perf_ev_error(tc_perf_list_event(list, 0), NULL, NULL);
		if (!err)
			err = -ENODEV;
	}
	if (!err)
		err = tc_perf_list_mmap(list, RANK_PAGES, &bad, &sharing);
	if (!err)
		err = tc_perf_list_enable(list);
	if (err) {
		tc_perf_list_free(list);
		return err;
	}
	l->ranker = list;
	l->rank = event;
	return 0;
}

/* Scans /proc: updates the CPU use of every followed task (dt: seconds since the last
 * scan), ends the rows of tasks that are gone or zombies, and ranks the live tasks by
 * their CPU time since the last scan for tc_live_follow_tasks. */
int tc_live_scan_tasks(struct tacho_live *l, double dt)
{
	bool threads = l->view == TACHO_LIVE_THREAD;
	struct prevtask *np = NULL;
	struct cand *c;
	size_t nc = 0;
	int err;

	err = tc_scan_tasks(l->proc_root, threads, l->pid, &l->scan);
	if (err)
		return err;
	l->scan_dt = dt;
	c = realloc(l->cand, (l->scan.n ? l->scan.n : 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	l->cand = c;
	l->ncand = 0;
	np = malloc((l->scan.n ? l->scan.n : 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	for (size_t i = 0; i < l->nrows; i++)
		l->rows[i]->seen = false;
	for (size_t i = 0; i < l->scan.n; i++) {
		const struct tc_task *t = &l->scan.t[i];
		struct lrow *r = find_task_row(l, t->st.pid, t->st.starttime);
		uint64_t before;
		bool dead = t->st.state == 'Z' || t->st.state == 'X';

		np[i] = (struct prevtask){ t->st.pid, t->st.starttime, t->st.ticks };
		if (r && !dead) {
			r->seen = true;
			/* the name changes at exec (a program tacho started was "tacho" until
			 * then) */
			if (strcmp(r->name, t->st.comm)) {
				char *n = tc_strdup(t->st.comm);
				if (n) {
					free(r->name);
					r->name = n;
				}
			}
			r->cpus = dt > 0 ? (double)(t->st.ticks - r->ticks) / ((double)l->hz * dt)
					 : NAN;
			r->ticks = t->st.ticks;
		}
		if (dead)
			continue;
		/* a task first seen now has existed for less than an interval: its whole
		 * CPU time is its recent use */
		if (!prev_ticks(l, t->st.pid, t->st.starttime, &before))
			before = l->nprev ? 0 : t->st.ticks;
		c[nc].t = i;
		c[nc].delta = l->nprev ? t->st.ticks - (before <= t->st.ticks ? before : t->st.ticks)
				       : t->st.ticks;
		c[nc].weight = rank_weight(l, t->st.pid);
		nc++;
	}
	/* rows whose task is gone, or a zombie, end: their final counts are read now */
	for (size_t i = 0; i < l->nrows; i++) {
		struct lrow *r = l->rows[i];
		if (!r->seen && !r->ended) {
			r->ended = true;
			l->ended++;
		}
	}
	free(l->prev);
	l->prev = np;
	l->nprev = l->scan.n;
	tc_hmap_exit(&l->prev_map);
	for (size_t i = 0; i < l->nprev; i++)
		if (tc_hmap_put(&l->prev_map, (uint64_t)l->prev[i].tid, (uint32_t)i))
			return -ENOMEM;
	qsort(c, nc, sizeof(*c), cmp_cand);
	l->ncand = nc;
	return 0;
}

/* Follows the tasks tc_live_scan_tasks ranked: all of them for one process; otherwise those
 * followed while they stay among the busiest 2 x cap (no flicker), then the busiest
 * others up to the cap. */
int tc_live_follow_tasks(struct tacho_live *l)
{
	const struct cand *c = l->cand;
	size_t nc = l->ncand, kept = 0;
	int err = 0;

	if (l->pid > 0) {
		/* one process, or its threads: all of them */
		for (size_t i = 0; !err && i < nc; i++) {
			const struct tc_task *t = &l->scan.t[c[i].t];
			int k = find_task_row(l, t->st.pid, t->st.starttime) ? 0 :
				add_task_row(l, t, c[i].delta);
			err = k < 0 ? k : 0;
		}
		return err;
	}
	for (size_t i = 0; i < nc; i++) {
		const struct tc_task *t = &l->scan.t[c[i].t];
		struct lrow *r = find_task_row(l, t->st.pid, t->st.starttime);
		if (r && !r->ended)
			r->seen = i < 2 * (size_t)l->max_rows && kept++ < l->max_rows;
	}
	for (size_t i = l->nrows; i-- > 0;)
		if (!l->rows[i]->ended && !l->rows[i]->seen)
			tc_live_rows_remove(l, i);
	for (size_t i = 0; !err && i < nc; i++) {
		const struct tc_task *t = &l->scan.t[c[i].t];
		int k;
		if (find_task_row(l, t->st.pid, t->st.starttime))
			continue;
		if (kept >= l->max_rows) {
			l->not_followed++;
			continue;
		}
		k = add_task_row(l, t, c[i].delta);
		if (k < 0)
			err = k;
		else if (k == 0)
			kept++;
	}
	return err;
}
