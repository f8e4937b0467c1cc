/* sampler-int.h - what the live sampler's two files share: a row, the sampler itself,
 * and the steps each file gives the other. sampler.c holds the rows (open, enable,
 * read, free), the fixed rows (the machine, CPUs) and the sampler (new, sample, the
 * frame, free); sampler-follow.c which rows come and go (cgroups, processes and
 * threads scanned from /proc and followed under the cap, or chosen by an event). */
#ifndef TACHO_LIVE_SAMPLER_INT_H
#define TACHO_LIVE_SAMPLER_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "live/live-int.h"
#include "perf/engine.h"

struct lrow {
	enum tacho_live_view kind;
	long long id;
	pid_t pid, tid;               /* task rows: the process and the task counted */
	unsigned uid;
	uint64_t start;               /* task rows: starttime, the task's identity */
	char *name;
	char *path;                   /* cgroup rows: the directory */
	struct tc_perf_list *list;
	long nfds;
	double opened;                /* monotonic seconds of the open */
	double since;                 /* frame time of the open */
	bool read_once;               /* a read since the open */
	bool ended;                   /* reported ended: closed at the next sample */
	bool enabled;
	bool seen;                    /* found by this refresh */
	uint64_t ticks;               /* task rows: CPU ticks at the last refresh */
	uint64_t busy0, busy_prev;    /* CPU and machine rows: busy ticks (/proc/stat) at
					 the start and at the last read */
	bool busy_have;
	double cpus;
	struct tc_perf_count *cnt;    /* [nev] */
	double *prev_total;           /* [nev] */
	uint64_t *prev_ena, *prev_run;
	struct tacho_live_value *vals; /* [nev] */
	char **why;                   /* [nev] owned explanations */
	enum tacho_hint *hint;        /* [nev] */
	double *hist;                 /* [nev * H] rings */
	size_t hpos, hcount;
};

struct cand {
	size_t t;          /* index in the scan */
	uint64_t delta;    /* CPU ticks since the previous scan */
	double weight;     /* the ranked event's count since the previous sample */
};

struct prevtask {
	pid_t tid;
	uint64_t start, ticks;
};

struct tacho_live {
	enum tacho_live_view view;
	pid_t pid;
	bool child;
	unsigned max_rows, H;
	char *proc_root;
	size_t nev;
	struct perf_event_attr *attrs;
	int *groups;
	char **names, **units;
	double *scales;
	struct lrow **rows;
	size_t nrows, arows;
	int *cpus;
	size_t ncpus;
	char *perf_root;
	char **cg;                    /* the cgroups asked for (resolved) */
	size_t ncg;
	struct tc_perf_env env;
	bool privileged;
	unsigned euid;
	long fd_limit, fds;
	long hz;
	struct tc_scan scan;
	struct prevtask *prev;
	size_t nprev;
	struct tc_hmap prev_map;      /* tid -> index in prev */
	struct tc_hmap refused;       /* hash(tid, start) of tasks this user may not count */
	struct cand *cand;            /* the last scan's live tasks, the busiest first */
	size_t ncand;
	bool started;
	double t0, tprev;
	unsigned not_followed, no_permission, no_descriptors, ended;
	double scan_dt;               /* seconds the last scan of /proc covered (0: none) */
	uint64_t *busy;               /* CPU and machine views: /proc/stat's busy ticks
					 by CPU number, read at each sample */
	size_t nbusy;
	bool busy_ok;                 /* the last read of /proc/stat worked */
	char empty[PATH_MAX + 160];   /* why the view has no rows, or "" */
	int rank;                     /* the event the rows are chosen by, or -1 (CPU) */
	struct tc_perf_list *ranker;  /* its sampling copy on every CPU, or NULL */
	struct tc_hmap rank_idx;      /* pid (or tid) -> rank_w */
	double *rank_w;
	size_t nrank, arank;
};

/* --- the rows (sampler.c) --- */

/* A new row of kind, id and name, its arrays sized for l's events and history; NULL
 * when out of memory. */
struct lrow *tc_live_row_new(struct tacho_live *l, enum tacho_live_view kind, long long id,
			     const char *name);
/* Frees r (NULL: nothing), its list closed; nev: the sampler's number of events. */
void tc_live_row_free(struct lrow *r, size_t nev);
/* Appends r to l's rows: 0, -ENOMEM. */
int tc_live_rows_push(struct tacho_live *l, struct lrow *r);
/* Removes row i of l and frees it, its descriptors given back to the budget. */
void tc_live_rows_remove(struct tacho_live *l, size_t i);
/* Opens r's list over g with flags. 0; -ESRCH when no event opened anywhere because
 * the task is gone; -EACCES when none opened for want of permission; -errno. */
int tc_live_row_open(struct tacho_live *l, struct lrow *r, const struct tc_perf_grid *g,
		     unsigned flags);
/* Enables r's list (a row added after the start counts from now). 0, -errno. */
int tc_live_row_enable(struct tacho_live *l, struct lrow *r);
/* True for cpu-clock and task-clock. */
bool tc_live_is_clock(const struct perf_event_attr *a);

/* --- which rows come and go (sampler-follow.c) --- */

/* Rows of directories that are gone end; with add, the cgroups asked for, or every one
 * below the root (sorted, up to max_rows), get rows. */
int tc_live_refresh_cgroups(struct tacho_live *l, bool add);
/* The ranked event's counts by task since the last drain into rank_idx / rank_w. */
void tc_live_rank_drain(struct tacho_live *l);
/* Scans /proc: updates the CPU use of every followed task (dt: seconds since the last
 * scan), ends the rows of tasks that are gone or zombies, and ranks the live tasks by
 * their CPU time since the last scan for tc_live_follow_tasks. */
int tc_live_scan_tasks(struct tacho_live *l, double dt);
/* Follows the tasks tc_live_scan_tasks ranked: all of them for one process; otherwise
 * those followed while they stay among the busiest 2 x cap (no flicker), then the
 * busiest others up to the cap. */
int tc_live_follow_tasks(struct tacho_live *l);

#endif
