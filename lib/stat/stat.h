/* stat/stat.h - what the stat session shares with its writers inside lib/stat. */
#ifndef TC_STAT_STAT_H
#define TC_STAT_STAT_H

#include <linux/perf_event.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include "perf/engine.h"
#include "tacho/counters.h"
#include "tacho/stat.h"

/* The attributes of event i of the session (lives as long as s). */
const struct perf_event_attr *tc_stat_event_attr(const struct tacho_stat *s, size_t i);

/* --- stat-units.c: what the breakdowns need beside counting --- */

/* Where a CPU sits: sysfs's physical_package_id, die_id, core_id and its NUMA node,
 * -1 where unknown. */
struct tc_stat_cpu_place {
	int cpu, socket, die, core, node;
};
/* The places of the n CPUs of cpus into out[n]. Always 0: what sysfs does not say
 * stays -1. */
int tc_stat_cpu_places(const int *cpus, size_t n, struct tc_stat_cpu_place *out);

/* The root of the hierarchy that holds perf_event in mounts (the text of
 * /proc/self/mounts): a cgroup v1 mount with the perf_event controller, else the
 * cgroup2 mount. 0, -ENOENT when there is neither. Pure. */
int tc_stat_cgroup_root_parse(const char *mounts, char *root, size_t size);
/* A cgroup as perf names it (relative to that root, or an absolute path inside it)
 * made into its directory in buf. 0; -EINVAL for "" or a path with "..", -ENOENT (no
 * hierarchy, or no such cgroup), -ENOTDIR, -ENAMETOOLONG, -errno. */
int tc_stat_cgroup_dir(const char *cg, char *buf, size_t size);

/* An engine list over one grid, read as tacho_counters_read reads (a status per value,
 * why an event opened nowhere): for the cgroup mode (TC_PERF_CGROUP) and a program's
 * thread reports, which the counting API does not offer. With thread_reports every
 * event is opened with inherit_stat (each inherited copy reports its thread's counts
 * when the thread ends), the first with comm (the threads' names), and the ring that
 * receives them is mapped; the grid is then one task and flags have no group read. */
struct tc_stat_cells;
int tc_stat_cells_open(const struct tacho_counter_spec *specs, size_t n,
		       const struct tc_perf_grid *g, unsigned flags, bool thread_reports,
		       struct tc_stat_cells **out);
void tc_stat_cells_free(struct tc_stat_cells *c);
int tc_stat_cells_enable(struct tc_stat_cells *c);
int tc_stat_cells_disable(struct tc_stat_cells *c);
/* out[n]: every event summed over the grid. 0 or -errno of read(2). */
int tc_stat_cells_read(struct tc_stat_cells *c, struct tacho_count *out);

/* One thread of a program with its counts (n of them, as the specs). */
struct tc_stat_thread {
	pid_t pid, tid;
	char comm[16];
	struct tacho_count *counts;
};
/* After the program ended and total (tc_stat_cells_read) was read: every thread that
 * reported, and the first thread (main_tid, named main_comm unless an exec or prctl
 * named it) with what the total holds beyond the reports, sorted by process and
 * thread. *lost: reports the ring had no room for (their counts are then the first
 * thread's). 0, -EINVAL (no thread reports asked), -ENOMEM. Free *out with
 * tc_stat_threads_free. */
/* Whether a thread's report proves that it ran with another thread's copies of the
 * events (the kernel swapped their contexts): an event of n that never rotates
 * (whole[i]), reported (seen[i]) and counted in total[i], was enabled in the thread
 * (ena[i] > 0) yet never running there (run[i] == 0). */
bool tc_stat_thread_moved(size_t n, const bool *whole, const struct tacho_count *total,
			  const bool *seen, const uint64_t *ena, const uint64_t *run);

int tc_stat_cells_threads(struct tc_stat_cells *c, const struct tacho_count *total,
			  pid_t main_tid, const char *main_comm, struct tc_stat_thread **out,
			  size_t *nout, uint64_t *lost);
void tc_stat_threads_free(struct tc_stat_thread *t, size_t n);

/* --- stat-control.c: counting switched on and off while the program runs --- */

/* What turns a session's counters on and off: the program's regions (over a
 * socketpair whose end the program inherits, named by env), perf's --control
 * descriptors, perf's -D delay. A helper thread answers while the program runs. */
struct tc_stat_control {
	bool regions;
	int sock[2];                 /* regions: [0] tacho's end, [1] the program's */
	int ctl_fd, ack_fd;          /* --control: commands in, acknowledgements out; -1 */
	int delay_ms;                /* > 0: enable then; -1: only a command enables */
	int wake[2];
	char env[64];                /* TACHO_STAT_CONTROL=FD:PID for the program */
	char *envp[2];
	struct tacho_counters *c;
	pthread_t thread;
	bool started;
	unsigned enables, disables;
	uint64_t on_since;           /* CLOCK_MONOTONIC ns of the last enable; 0: off */
	uint64_t on_ns;              /* the wall time the counters were on, whole windows
					added at each disable and at exit */
};
void tc_stat_control_init(struct tc_stat_control *k);
/* Before the program is forked: the socket (regions) and k->envp for its environment.
 * 0 or -errno. */
int tc_stat_control_prepare(struct tc_stat_control *k, bool regions, int ctl_fd, int ack_fd,
			    int delay_ms);
/* After the fork: closes the program's end here. */
void tc_stat_control_forked(struct tc_stat_control *k);
/* After the exec: enables c at once unless regions or a delay say otherwise, and starts
 * the thread that answers. 0 or -errno. */
int tc_stat_control_start(struct tc_stat_control *k, struct tacho_counters *c);
/* Stops the thread and closes what prepare opened (not the caller's descriptors); the
 * counters' last window, if they are on, ends here (on_ns). */
void tc_stat_control_exit(struct tc_stat_control *k);

#endif /* TC_STAT_STAT_H */
