/* live-int.h - what the files of lib/live share: the pure parsers of /proc and of the
 * mount table (tested and fuzzed on any input), the task scan, the cgroup hierarchies,
 * the rules' events, and the inside of a frame. Nothing outside lib/live includes it
 * but its tests. */
#ifndef TACHO_LIVE_INT_H
#define TACHO_LIVE_INT_H

#include <limits.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "tacho/live.h"
#include "util/util.h"

/* --- /proc/PID/stat (procscan.c) --- */
struct tc_proc_stat {
	pid_t pid;
	char comm[64];             /* the command name, cut at 63 bytes */
	char state;                /* R, S, D, Z, T, ... */
	pid_t ppid;
	uint64_t ticks;            /* utime + stime, in clock ticks */
	uint64_t starttime;        /* clock ticks after boot: with pid, the identity of a
				      task (pids are reused) */
	long threads;
};
/* Parses the text of /proc/PID/stat (or /proc/PID/task/TID/stat): the command name is
 * everything between the first '(' and the last ')', since it may hold spaces and
 * parentheses itself. Pure. 0 or -TACHO_EPARSE. */
int tc_proc_stat_parse(const char *text, size_t len, struct tc_proc_stat *out);

/* The busy time of each CPU in the text of /proc/stat: busy[c] gets the clock ticks
 * (USER_HZ) CPU c has spent in user (guest included), nice, system, irq and softirq
 * time since boot, for c < n; UINT64_MAX for a CPU the text does not list. Idle, iowait
 * and steal are not busy. Pure. The number of cpuN lines read, or -TACHO_EPARSE (no
 * such line, or a cpuN line without its first eight numbers). */
int tc_proc_cpu_busy_parse(const char *text, size_t len, uint64_t *busy, size_t n);

/* One line of /proc/PID/maps ("lo-hi perms offset dev inode   path", no newline):
 * the range, the file offset, whether it is executable, and the path (pointing into
 * line, *path_len bytes; 0 for anonymous memory). Pure. 0 or -TACHO_EPARSE. */
int tc_maps_line_parse(const char *line, size_t len, uint64_t *lo, uint64_t *hi, uint64_t *off,
		       bool *exec, const char **path, size_t *path_len);

/* The cgroup hierarchies of a mount table (the text of /proc/self/mounts; octal escapes
 * undone). Pure. */
struct tc_cgroup_mounts {
	char v2[PATH_MAX];          /* the cgroup2 mount, or "" */
	bool v2_ro;
	char v1_cpu[PATH_MAX];      /* the v1 hierarchy with the cpu controller, or "" */
	bool v1_cpu_ro;
	char v1_perf[PATH_MAX];     /* the v1 hierarchy with perf_event, or "" */
};
/* 0 (fields left "" where absent), -TACHO_EPARSE for a line without four fields. */
int tc_cgroup_mounts_parse(const char *text, size_t len, struct tc_cgroup_mounts *out);
/* Reads the mount table at path (NULL: /proc/self/mounts) and parses it. */
int tc_cgroup_mounts_read(const char *path, struct tc_cgroup_mounts *out);
/* The root of the hierarchy perf's cgroup mode uses: v1's perf_event, else cgroup v2.
 * NULL when neither is mounted. */
const char *tc_cgroup_perf_root(const struct tc_cgroup_mounts *m);
/* A user's cgroup (a path under root, with or without its leading '/', or an absolute
 * path inside root) made absolute into buf, checked to be a directory. 0, -ENOENT,
 * -EINVAL (outside root, or ".." in it), -ERANGE. */
int tc_cgroup_resolve(const char *root, const char *cg, char *buf, size_t size);

/* --- rules (rule.c) --- */
/* Event k (0, or 1 for a ratio's divisor) of the rule as the grammar names it, NULL
 * beyond its events. */
const char *tc_rule_event(const struct tacho_rule *r, unsigned k);
/* The rule's window: for_s as given. */
double tc_rule_window(const struct tacho_rule *r);

/* --- the task scan (procscan.c) --- */
struct tc_task {
	struct tc_proc_stat st;
	unsigned uid;
	pid_t tgid;                 /* the process a thread belongs to (itself for one) */
};
struct tc_scan {
	struct tc_task *t;
	size_t n, alloc;
};
void tc_scan_exit(struct tc_scan *s);
/* Every process of proc_root (threads: every thread of every process, or of pid alone
 * when pid > 0; processes: pid alone when pid > 0), zombies included. 0, -ENOMEM, or
 * -errno of opening proc_root. */
int tc_scan_tasks(const char *proc_root, bool threads, pid_t pid, struct tc_scan *out);
/* One task's stat: /proc/PID/stat, or /proc/PID/task/TID/stat when tid != pid. 0,
 * -ESRCH (gone), -TACHO_EPARSE. */
int tc_task_stat(const char *proc_root, pid_t pid, pid_t tid, struct tc_proc_stat *out);

/* --- a frame (frame.c; made by sampler.c) --- */
struct tacho_live_frame {
	atomic_int refs;
	enum tacho_live_view view;
	double time, interval, wall;
	size_t nev;
	char **events, **units;
	size_t nrows;
	struct tacho_live_row *rows;
	struct tacho_live_health health;
	/* storage the rows point into */
	struct tacho_live_value *vals;   /* [nrows * nev] */
	double *hist;                    /* the histories, back to back */
	char **strs;                     /* names and explanations, freed with the frame */
	size_t nstrs, astrs;
};

/* A new frame for nev events and nrows rows (histories of nhist points each, at most),
 * refs 1, event names copied. NULL without memory. */
struct tacho_live_frame *tc_frame_new(size_t nev, const char *const *events,
				      const char *const *units, size_t nrows, size_t nhist);
/* A string kept by the frame (copied); NULL without memory. */
const char *tc_frame_str(struct tacho_live_frame *f, const char *s);

/* --- the throttle's keeper (throttle-keeper.c) --- */

/* What the keeper undoes if the throttle's owner dies first. */
struct tc_keeper_plan {
	enum {
		TC_KEEPER_MOVED,      /* CAP of a process: the pids in from go back to to, and
				         dir goes if the owner made it */
		TC_KEEPER_LIMIT,      /* CAP of a cgroup: saved goes back into limit */
		TC_KEEPER_STOPPED,    /* DUTY: SIGCONT to pid, or to every pid in from */
	} what;
	pid_t pid;
	char from[PATH_MAX + 16];
	char to[PATH_MAX + 16];
	char dir[PATH_MAX];
	char limit[PATH_MAX + 32];
	char saved[128];
};
/* Forks the keeper (twice: it is nobody's child) and waits until it is ready. 0 and
 * *fd, the owner's end (close-on-exec), or -errno, -EAGAIN when it did not start. */
int tc_keeper_start(const struct tc_keeper_plan *plan, int *fd);
/* Tells it, before the change: 'A' a throttle applied (the process moved in, the limit
 * written, the cycle begun), 'L' lifted, 'M' the owner makes the cgroup (it removes
 * it), 'm' it did not (it was there). Nothing when fd < 0. */
void tc_keeper_tell(int fd, char what);
/* Everything undone by the owner: the keeper ends without acting; *fd closed, -1. */
void tc_keeper_done(int *fd);

#endif
