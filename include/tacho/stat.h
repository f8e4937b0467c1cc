/* tacho/stat.h - libtacho's public interface: stat sessions: counter scheduling over
 * runs, derived metrics, aggregation.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_STAT_H
#define TACHO_STAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/cpu.h"
#include "tacho/events.h"
#include "tacho/run.h"
#include "tacho/sim.h"
#include "tacho/counters.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Scheduling: which events share a run of the program ---
 * A core PMU has a few general-purpose counters (2 on the Pentium, 4 or 8 on Intel
 * cores, 6 on AMD Zen) and, on Intel, fixed counters for instructions, cycles and
 * ref-cycles. More events than counters means either multiplexing (the kernel rotates
 * groups and scales the counts) or more runs of the program (P5Stat's way, seed 000).
 * The library's scheduler (lib/stat/schedule.h) plans the runs and a stat session
 * (below) executes them. Events that need no counter of the core PMU (software,
 * tracepoints, msr, uprobes, other PMUs) are counted in the first run; breakpoints
 * take one of the four debug registers each. */

/* Flags of the schedule (tacho_stat_opts.sched_flags). */
#define TACHO_SCHED_MULTIPLEX 0x1u  /* one run; groups that each fit the counters,
				       rotated by the kernel and scaled (breakpoints beyond
				       four still need another run: the kernel cannot
				       rotate them) */

/* --- Stat sessions ---
 * tacho_stat runs a program (or watches a process, a thread, CPUs), executes the plan
 * of its runs (above) and aggregates: what `tacho stat` prints, computed the same way for any caller.
 * The derived metrics it gives (struct tacho_metric, tacho_metrics_compute) are
 * tacho/events.h's. */

/* Called while counting with -I: the counts of one interval. Handed out (read through
 * the pointer, valid during the call; fields are only ever added at the end), and so
 * are the counts: counts[i] points to one. */
struct tacho_stat_interval {
	double t_s;                       /* end of the interval, seconds since counting began */
	double len_s;                     /* its length */
	size_t n;                         /* events, as in the session's list */
	const struct tacho_count *const *counts; /* [n] per event: value, status and
					     coverage of the interval alone (deltas); status
					     NOT_SUPPORTED / NOT_COUNTED as in
					     tacho_counters_read */
	unsigned run;                     /* the repetition it is of, from 0 (-r) */
	size_t nunits;                    /* a breakdown's units (opts.aggr; 0 without
					     one), in tacho_stat_unit's order */
	const struct tacho_stat_unit *const *units; /* [nunits] */
	const struct tacho_count *const *unit_counts; /* [nunits * n]: unit u's event i at
					     u * n + i, the interval alone as counts[i]
					     is (the units add up to counts[i]); NULL
					     where the event is not counted in the unit
					     (cgroup_pairs) */
};
typedef void tacho_stat_interval_fn(void *arg, const struct tacho_stat_interval *iv);

/* Called before each run of the program: done runs of total (warm-up runs included). */
typedef void tacho_stat_progress_fn(void *arg, unsigned done, unsigned total);

/* How a session's counts are broken down (perf stat's aggregation modes). Every mode
 * but GLOBAL gives each event one value per unit (tacho_stat_unit) besides its total. */
enum tacho_stat_aggr {
	TACHO_STAT_AGGR_GLOBAL = 0,  /* one value per event (the default) */
	TACHO_STAT_AGGR_CPU,         /* per CPU of a CPUS target (perf's -A, --per-cpu) */
	TACHO_STAT_AGGR_CORE,        /* per core (the CPUs of a CPUS target that share one) */
	TACHO_STAT_AGGR_DIE,         /* per die of a package */
	TACHO_STAT_AGGR_SOCKET,      /* per package */
	TACHO_STAT_AGGR_NODE,        /* per NUMA node */
	TACHO_STAT_AGGR_THREAD,      /* per thread: of a PROCESS target (its threads when
					counting starts, each with the threads it creates
					later), of a THREAD target, or of a CHILD program
					(every thread and process it ever had, each by
					itself: the kernel reports a thread's counts when
					it ends) */
	TACHO_STAT_AGGR_CGROUP,      /* per cgroup of opts.cgroups, on a CPUS target */
	TACHO_STAT_AGGR_COUNT,
};

/* The stable lowercase name of a mode: "global", "cpu", "core", "die", "socket", "node",
 * "thread", "cgroup"; "unknown" out of range. */
TACHO_API const char *tacho_stat_aggr_name(enum tacho_stat_aggr a);

/* Options (docs/architecture.md, "An API that can grow"): sz first; fields the caller's
 * sz does not cover take their defaults. */
struct tacho_stat_opts {
	size_t sz;                      /* sizeof(struct tacho_stat_opts) */
	const struct tacho_evlist *events;
	enum tacho_target target;       /* CHILD: run argv (and count it); PROCESS, THREAD:
					   pid; CPUS: cpus (ncpus 0: all), while argv runs
					   or, without argv, until *stop */
	char *const *argv;              /* the program, NULL-terminated */
	pid_t pid;
	const int *cpus;
	size_t ncpus;
	unsigned repeat;                /* counted repetitions (0 means 1) */
	unsigned warmup;                /* runs of the program before, not counted */
	unsigned sched_flags;           /* TACHO_SCHED_MULTIPLEX */
	const struct tacho_pmu_counters *pmu; /* NULL: tacho_pmu_counters_detect() */
	unsigned interval_ms;           /* > 0: call on_interval every interval_ms */
	tacho_stat_interval_fn *on_interval;
	void *interval_arg;
	tacho_stat_progress_fn *on_progress;
	void *progress_arg;
	volatile int *stop;             /* non-NULL: when it becomes non-zero (a signal
					   handler of the caller's), counting stops, the
					   program is left to end (PROCESS/THREAD/CPUS: not
					   touched) and what was counted is kept */
	int *exec_err;                  /* non-NULL: receives the errno of a failed exec
					   when -TACHO_ENOSTART is returned (ENOENT: no such
					   program, EACCES: not executable); a caller built
					   before this field existed passes a smaller sz */
	const struct tacho_sim *sim;    /* non-NULL: simulate instead of counting: each
					   repetition runs the program once under the simulator
					   (tacho_sim_run), every event with a simulated meaning
					   gets the status SIMULATED, the others NOT_SUPPORTED
					   with the reason; the target must be CHILD, and neither
					   intervals nor a PMU are used. Needed until the session
					   ends (tacho_stat_run returns) */
	enum tacho_stat_aggr aggr;      /* the breakdown (GLOBAL by default). CPU, CORE, DIE,
					   SOCKET, NODE and CGROUP need a CPUS target; THREAD
					   a task target (CHILD: with one repetition, and
					   without interval_ms: its threads report when they
					   end); none goes with sim. With interval_ms each
					   interval carries every unit's counts */
	const char *const *cgroups;     /* CGROUP: ncgroups cgroups, each a path inside the
					   perf_event hierarchy (cgroup v1's perf_event
					   controller, else cgroup v2) or an absolute path to
					   one; "" counts every task (no cgroup) */
	size_t ncgroups;
	bool cgroup_pairs;              /* CGROUP: event i is counted in cgroups[i] alone
					   (perf's -G); one cgroup takes every event. false:
					   every event in every cgroup (--for-each-cgroup) */
	bool regions_only;              /* CHILD: count only while a thread of the program
					   is inside a tacho region: the program's libtacho
					   asks for the counters to be enabled at the first
					   region's begin and disabled at the last one's end,
					   over a socket named by TACHO_STAT_CONTROL in its
					   environment (docs/stat.md) */
	bool control;                   /* CHILD: perf's --control: commands ("enable",
					   "disable", "ping", each ending with a newline or
					   a NUL) read from control_fd while the program runs,
					   each acknowledged with "ack\n\0" on control_ack_fd
					   (-1: none). The descriptors stay the caller's */
	int control_fd, control_ack_fd;
	int delay_ms;                   /* CHILD: perf's -D: 0 counting starts at the exec;
					   > 0 that many milliseconds after it; -1 only a
					   command (control, or regions_only) enables */
	bool no_inherit;                /* perf's -i: count the task itself, not the threads
					   and processes it creates */
	bool null_run;                  /* perf's -n: events may be empty (0 of them): the
					   program's times alone */
	const pid_t *pids;              /* PROCESS, THREAD: npids processes or threads
					   (perf's -p PID1,PID2), counted together: every
					   thread of each listed process as it is when counting
					   starts (a thread made later counts with the thread
					   that made it), the counts added up; THREAD aggr
					   keeps one unit per thread. pid is then unused.
					   Counting ends when all have ended. npids 0: pid */
	size_t npids;
};

/* Statistics of an event's values over the repetitions. Handed out through
 * tacho_stat_event's stats. */
struct tacho_stat_summary {
	double mean, stddev, min, median, max;
	double spread_pct;       /* 100 (max - min) / |mean| */
	double rsd_pct;          /* 100 stddev / |mean| */
};

/* One event's result over every repetition. Handed out by tacho_stat_event (read
 * through the pointer: fields are only ever added at the end). */
struct tacho_stat_event {
	const char *name;
	const char *unit;                /* of value and the statistics ("" or "msec") */
	enum tacho_count_status status;  /* COUNTED: every repetition counted it whole;
					    MULTIPLEXED: some value, but not always whole
					    (coverage says how much); SIMULATED: every
					    repetition's value is the simulator's (opts.sim);
					    NOT_COUNTED / NOT_SUPPORTED: no value at all (why
					    says why) */
	double value;                    /* mean over the repetitions with a value, in unit
					    (count x the event's scale); NAN when none */
	double coverage;                 /* mean of running/enabled (0 for a repetition
					    without a value) */
	unsigned nvalues;                /* repetitions that gave a value */
	const struct tacho_stat_summary *stats; /* over the values; NAN where undefined */
	const double *values;            /* per repetition, NAN where none (repeat entries) */
	int err;                         /* NOT_SUPPORTED: the open's error */
	const char *why;                 /* a sentence for NOT_SUPPORTED / NOT_COUNTED; it
					    names no command */
	int run;                         /* the schedule's run (-1: never scheduled) */
	enum tacho_hint hint;            /* where the reader of why should look next */
	double enabled_ns;               /* mean time enabled (the kernel's time_enabled, over
					    the CPUs or threads it was open on) of the
					    repetitions with a value; 0 without one */
};

struct tacho_stat;

/* Runs the session: warm-up runs, then repeat x (the schedule's runs) runs of the
 * program, each counting its share of the events, and aggregates. A program killed by
 * a signal, or *stop, ends the session early: what was counted is kept
 * (tacho_stat_repeats says how many repetitions completed; interrupted is set only
 * for a signal to this process or *stop).
 * Refused with -EINVAL and a diagnostic: no events; a target other than CHILD (or CPUS
 * with a program) with a schedule of several runs (a process cannot be run again: use
 * TACHO_SCHED_MULTIPLEX); interval_ms with several runs (one time line needs one
 * run: use TACHO_SCHED_MULTIPLEX or fewer events); repeat > 1 without a program.
 * -TACHO_ENOSTART when the program cannot be started, *diag saying why ("cannot run
 * 'frob': no such program in PATH"); -ESRCH for a PID that does not exist; -ENOMEM.
 * -EINVAL for an opts->sz below the first version; -TACHO_EVERSION with *diag for
 * options that set a field past the struct this library knows (a program built
 * against a newer tacho.h).
 * On success *out holds the results (tacho_stat_free). Not thread-safe with other
 * code of the process that forks or handles SIGCHLD; callbacks run on a helper thread
 * while a program runs. */
TACHO_API int tacho_stat_run(const struct tacho_stat_opts *opts, struct tacho_stat **out,
			     struct tacho_diag *diag);
TACHO_API void tacho_stat_free(struct tacho_stat *s);

TACHO_API size_t tacho_stat_nevents(const struct tacho_stat *s);
TACHO_API const struct tacho_stat_event *tacho_stat_event(const struct tacho_stat *s, size_t i);
/* The metrics of the mean values (tacho_metrics_compute over them and the mean wall
 * time). */
TACHO_API size_t tacho_stat_nmetrics(const struct tacho_stat *s);
TACHO_API const struct tacho_metric *tacho_stat_metric(const struct tacho_stat *s, size_t i);
/* Completed counted repetitions, runs of the program per repetition (the schedule's),
 * the mean wall time of one run (seconds; NAN when none), whether counting was cut
 * short by a signal to this process (forwarded to the program, or *stop): a program
 * that died of a signal of its own (SIGSEGV) ends the repetitions too, but is no
 * interruption: tacho_stat_exit_status says how it ended. */
TACHO_API unsigned tacho_stat_repeats(const struct tacho_stat *s);
TACHO_API unsigned tacho_stat_runs(const struct tacho_stat *s);
TACHO_API double tacho_stat_wall_s(const struct tacho_stat *s);
TACHO_API bool tacho_stat_interrupted(const struct tacho_stat *s);
/* The mean CPU time of the program in user and in kernel mode, seconds, over the
 * repetitions (its waited-for children included, as getrusage says); NAN when no
 * program ran. */
TACHO_API double tacho_stat_user_s(const struct tacho_stat *s);
TACHO_API double tacho_stat_sys_s(const struct tacho_stat *s);
/* How the last run of the program ended (its exit status or signal, as a shell says
 * it); NULL when no program ran. Named so because an `_exit` function of this header
 * releases what its object holds (tacho_cpu_info_exit): this one only reads. */
TACHO_API const struct tacho_exit *tacho_stat_exit_status(const struct tacho_stat *s);
/* The counters the events were planned for (lives as long as s); NULL for NULL or a
 * simulated session. The plan itself is in tacho_stat_runs (runs of the program per
 * repetition) and in each tacho_stat_event's run and why. */
TACHO_API const struct tacho_pmu_counters *tacho_stat_pmu_counters(const struct tacho_stat *s);
/* The simulated machine of a session run with opts.sim (a copy: lives as long as s);
 * NULL for a session that counted. */
TACHO_API const struct tacho_sim_machine *tacho_stat_sim_machine(const struct tacho_stat *s);

/* A region of the program under simulation (tacho_region_begin/end: tacho/sim.h says
 * how), with the simulated values of the session's events, of the last repetition (a
 * simulation gives the same on every one). Handed out by tacho_stat_region (read
 * through the pointer: fields are only ever added at the end). */
struct tacho_stat_region {
	const char *name;
	uint64_t calls;
	unsigned unbalanced;          /* ends that matched no begin, begins never ended */
	const double *inclusive;      /* [tacho_stat_nevents], NAN where the event has no
					 simulated value */
	const double *exclusive;      /* the same without the nested regions */
};

/* One unit of a breakdown: a CPU, a core, a die, a package, a node, a thread or a
 * cgroup. Handed out by tacho_stat_unit (read through the pointer: fields are only ever
 * added at the end). Fields that do not apply to the mode are -1, 0 or NULL. */
struct tacho_stat_unit {
	enum tacho_stat_aggr aggr;
	const char *label;       /* for people: "CPU3", "S0-D0-C1", "S0-D0", "S0", "N0",
				    "COMM-TID", the cgroup */
	int cpu;                 /* CPU: its number */
	int socket, die, core;   /* CPU, CORE, DIE, SOCKET: physical_package_id, die_id,
				    core_id of sysfs (-1 unknown or not part of the mode) */
	int node;                /* CPU, NODE: the NUMA node (-1 unknown) */
	unsigned ncpus;          /* CPU family and CGROUP: the CPUs it adds up */
	pid_t tid;               /* THREAD: the thread; -1 for what no thread's report
				    accounts for (records lost) */
	pid_t pid;               /* THREAD: its process */
	const char *comm;        /* THREAD: its name ("" unknown) */
	const char *cgroup;      /* CGROUP: the cgroup as asked ("" every task) */
};

/* The breakdown of a session (GLOBAL when none was asked), its units (none without a
 * breakdown, a list of processes or threads counted together too), and one event's
 * result in one unit: the same fields as the event's total (value, status, statistics
 * over the repetitions, why), NULL where the event was not counted in that unit (an
 * event paired with another cgroup by cgroup_pairs). Units are sorted (CPU, core, ...
 * by number, threads by process then thread id, cgroups as asked). Live as long as s. */
TACHO_API enum tacho_stat_aggr tacho_stat_aggr(const struct tacho_stat *s);
TACHO_API size_t tacho_stat_nunits(const struct tacho_stat *s);
TACHO_API const struct tacho_stat_unit *tacho_stat_unit(const struct tacho_stat *s, size_t u);
TACHO_API const struct tacho_stat_event *tacho_stat_unit_event(const struct tacho_stat *s,
							       size_t u, size_t i);

/* The simulation of the last repetition of a simulated session (lives as long as s: its
 * places, tacho_sim_result_rows), NULL for a session that counted. */
TACHO_API const struct tacho_sim_result *tacho_stat_sim_result(const struct tacho_stat *s);

/* The regions of a simulated session, in the order of their first begin (0 / NULL for a
 * session that counted, or a program without regions). */
TACHO_API size_t tacho_stat_nregions(const struct tacho_stat *s);
TACHO_API const struct tacho_stat_region *tacho_stat_region(const struct tacho_stat *s,
							    size_t i);

/* --- Writing a session (what `tacho stat` prints; docs/schemas.md) --- */

/* What the writers say about a session besides its figures: how its caller asked for
 * it and names it. Every field may be 0/NULL. Options: sz first. */
struct tacho_stat_about {
	size_t sz;                  /* sizeof(struct tacho_stat_about) */
	char *const *argv;          /* the program that ran, NULL-terminated: the table's
				       title and the JSON's "command" */
	const char *target;         /* what was counted, for people, when it is not the
				       program alone: "process 42", "all CPUs", "CPUs 0-3" */
	unsigned repeat;            /* the repetitions asked for; 0: none were asked. More
				       than one gives the table its statistics columns; any
				       gives the JSON every repetition's values and their
				       statistics */
	const char *note;           /* one sentence for the reader (the JSON's "note"), or
				       NULL */
	unsigned hot;               /* a simulated session: the hot hottest places of its
				       first simulated event (the table's "hottest ..."
				       section, the JSON's "hot"); 0: none */
	enum tacho_sim_view hot_view; /* by function, line or instruction */
	const struct tacho_sim_mca *mca; /* llvm-mca's analysis of the hottest block
				       (tacho_sim_mca_new), to write with the session, or
				       NULL */
	bool perf_layout;           /* TACHO_FORMAT_CSV: perf stat -x's own columns instead
				       of tacho's (value, unit, event, [variance,] run time,
				       percentage running, metric value, metric unit), no
				       header, for scripts written against perf; either
				       JSON format: perf stat -j's lines, one object per
				       event (per unit and event with a breakdown), with
				       perf's keys (tacho_stat_interval_write_perf_json
				       lists them; "variance" after the event with repeat
				       > 1; a unit's line has no metric) */
	const char *stopped;        /* how tacho itself ended an interrupted session, in
				       words after "stopped" ("after --timeout 200 ms"), for
				       the table; NULL: a signal stopped it */
	bool metric_only;           /* TACHO_FORMAT_TABLE: the derived metrics alone, the
				       rates per second among them, no line per event
				       (perf's --metric-only); other formats ignore it */
	const char *const *warnings; /* what the library warned of while counting, when
				       the document goes where the log would (tacho stat
				       --json on stderr: a line there would break it):
				       TACHO_FORMAT_JSON's "warnings"; the other formats
				       ignore them */
	size_t nwarnings;
};

/* Writes the results of s to f:
 *  - TACHO_FORMAT_TABLE: the title, one line per event (value, unit, name, then the
 *    statistics of the repetitions, the rate or the coverage; "<not supported>" /
 *    "<not counted>" for an event without a value, never 0), the derived metrics, why
 *    each event without a value has none, the wall time, how the program ended;
 *  - TACHO_FORMAT_CSV: a header row (kind, name, status, value, unit, coverage, runs,
 *    mean, stddev, min, median, max, spread_pct, explanation), a row per event (kind
 *    "event") and per metric (kind "metric", status "derived"); no value is an empty
 *    field;
 *  - TACHO_FORMAT_JSON (or on one line): the document of docs/schemas.md, "version" 1.
 * about and opts may be NULL. 0, -EINVAL (NULL s or f, a bad format, an sz too small, a
 * NULL among about's warnings),
 * -TACHO_EVERSION (about or opts set a field past the struct this library knows: a
 * program built against a newer tacho.h), -ENOMEM, -EIO (a write error on f).
 * Thread-safe on a session nobody frees meanwhile. */
TACHO_API int tacho_stat_write(const struct tacho_stat *s, const struct tacho_stat_about *about,
			       FILE *f, enum tacho_format fmt,
			       const struct tacho_write_opts *opts);

/* Writes the counts of s as a metrics exposition, with tacho serve's names and rules
 * (docs/serve.md, "/metrics"): one counter family per event, tacho_EVENT_total (clocks
 * in seconds: tacho_EVENT_seconds_total), a sample with the label event (the name as
 * written) for the total, or one per unit of a breakdown with the unit's labels (cpu;
 * socket, die, core; node; pid, tid, comm; cgroup) instead; with repetitions, the mean.
 * A value without a number is no sample: tacho_not_counted{event, status, reason}
 * counts them. Then tacho_stat_repetitions and tacho_stat_wall_seconds. The text of
 * what tacho stat --push sends. 0; -EINVAL (NULL s or out, a bad format, or a
 * simulated session, whose values this machine did not count), -ENOMEM, -EIO.
 * Thread-safe on a session nobody frees meanwhile. */
TACHO_API int tacho_stat_write_metrics(const struct tacho_stat *s, FILE *out,
				       enum tacho_metrics_format fmt);

/* Writes the counts of one interval (an on_interval call) to f, one record per event:
 * the table's "TIME VALUE UNIT NAME [(COVERAGE)]" line; a CSV row (time, name, status,
 * value, unit, coverage, explanation, run) after a header row unless
 * opts->csv_no_header (pass it from the second interval on); or, for both JSON formats,
 * one JSON object per line ({"time", "run", "name", "status", "value", "unit",
 * "coverage", "explanation"}). With units (iv->nunits), one record per unit and event
 * instead (none where unit_counts is NULL): the unit's label after the table's time,
 * its columns after the CSV's (those of tacho_stat_write's breakdown), its keys in the
 * JSON object. events is the session's list, for the units ("msec"); NULL: no units.
 * 0, -EINVAL (also units without their arrays), -EIO. Safe to call from the interval
 * callback. */
TACHO_API int tacho_stat_interval_write(const struct tacho_stat_interval *iv,
					const struct tacho_evlist *events, FILE *f,
					enum tacho_format fmt,
					const struct tacho_write_opts *opts);

/* Writes the counts of one interval in perf stat -I -x's own columns, one line per event
 * (per unit and event with a breakdown), no header: time (perf's "%6u.%09u"), the unit's
 * label ("CPU3", "S0-D0-C1" with its CPUs after it, "COMM-TID"), value (or
 * "<not counted>", "<not supported>"), unit, event, the cgroup (after the event, as perf
 * puts it), run time in ns (the interval's time enabled), percentage running, and two
 * empty metric fields (no metric is derived from an interval). opts->csv_sep is the
 * separator. 0, -EINVAL (as tacho_stat_interval_write), -EIO. Safe to call from the
 * interval callback. */
TACHO_API int tacho_stat_interval_write_perf(const struct tacho_stat_interval *iv,
					     const struct tacho_evlist *events, FILE *f,
					     const struct tacho_write_opts *opts);

/* Writes the counts of one interval as perf stat -I -j's JSON lines, one object per
 * event (per unit and event with a breakdown, in the order of perf's): "interval" (the
 * time, a number with 9 decimals), the unit ("cpu", "core"/"die"/"socket"/"node" with
 * "aggregate-number", "thread"), "counter-value" (a string: "%f", or "<not counted>",
 * "<not supported>"), "unit", "event", "cgroup" (for a cgroup unit), "event-runtime"
 * (ns running), "pcnt-running", and "metric-value" 0.000000 with "metric-unit" "" (no
 * metric is derived from an interval; it is how perf writes none). 0, -EINVAL (as
 * tacho_stat_interval_write), -EIO. Safe to call from the interval callback. */
TACHO_API int tacho_stat_interval_write_perf_json(const struct tacho_stat_interval *iv,
						  const struct tacho_evlist *events, FILE *f,
						  const struct tacho_write_opts *opts);
#ifdef __cplusplus
}
#endif

#endif /* TACHO_STAT_H */
