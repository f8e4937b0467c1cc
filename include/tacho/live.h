/* tacho/live.h - libtacho's public interface: live monitoring: one sampler that counts
 * events over a set of targets at an interval and keeps each row's recent history, the
 * frames it hands out and their writers (text, CSV, JSON lines, OpenMetrics), rules over
 * the rates, throttling a target's CPU (cgroup bandwidth or a stop/continue duty
 * cycle), and the watch session that drives rules and throttles over frames. tacho
 * top, tacho serve and tacho watch stand on it.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_LIVE_H
#define TACHO_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/events.h"
#include "tacho/counters.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 8. Live monitoring (lib/live)
 * ================================================================================== */
/* A sampler counts the events of a parsed list over the rows of a view, all on the
 * perf engine: the whole machine (CPU-wide counters on every online CPU), each CPU,
 * each process, each thread, each cgroup (perf's cgroup mode). Each call of
 * tacho_live_sample reads every row, turns the counts since the previous call into
 * rates, refreshes the rows from /proc (processes and threads come and go) and returns
 * a frame: an immutable snapshot that any thread may read and write out.
 *
 * What a process row counts: per-task counters with inherit, opened on each thread the
 * process has when it is first followed; threads and children it creates later are
 * counted into the thread that created them (the kernel's inheritance), and what
 * ended threads counted stays in. Processes are many: the sampler follows at most
 * max_rows of them, the busiest by CPU time over the last interval (from /proc), and
 * keeps those it follows while they stay among the busiest 2 x max_rows, so that rows
 * do not flicker. What it leaves out is counted by reason in the frame's health
 * (docs/top.md says why these choices). */

enum tacho_live_view {
	TACHO_LIVE_MACHINE = 0,    /* one row: every online CPU summed */
	TACHO_LIVE_CPU,            /* a row per online CPU */
	TACHO_LIVE_PROCESS,        /* a row per process */
	TACHO_LIVE_THREAD,         /* a row per thread */
	TACHO_LIVE_CGROUP,         /* a row per cgroup of the perf_event hierarchy */
	TACHO_LIVE_VIEW_COUNT
};

/* "machine", "cpu", "process", "thread", "cgroup"; "unknown" outside the enum.
 * Thread-safe. */
TACHO_API const char *tacho_live_view_name(enum tacho_live_view v);
/* The view of one of those names. 0, or -EINVAL for any other string. */
TACHO_API int tacho_live_view_parse(const char *s, enum tacho_live_view *out);

struct tacho_live_opts {
	size_t sz;                  /* sizeof(struct tacho_live_opts) */
	const struct tacho_evlist *events;  /* what to count (read during tacho_live_new);
				       the user's {groups} stay groups */
	enum tacho_live_view view;
	pid_t pid;                  /* PROCESS: > 0 this process alone; THREAD: > 0 its
				       threads alone; 0: every process this user may
				       count */
	bool child;                 /* pid is a program from tacho_child_start that has
				       not exec'd yet: its counters start at its exec */
	const char *const *cgroups; /* CGROUP: these cgroups, as paths under the
				       perf_event hierarchy ("/system.slice") or absolute
				       paths inside it; NULL with ncgroups 0: every cgroup
				       below the hierarchy's root, up to max_rows */
	size_t ncgroups;
	unsigned max_rows;          /* PROCESS, THREAD, CGROUP without pid or cgroups: the
				       most rows followed (0: 32) */
	unsigned history;           /* rates kept per row and event for the frames (0:
				       120; at most 100000) */
	const char *proc_root;      /* NULL: "/proc" */
	const char *mounts;         /* the mount table to find the cgroup hierarchies in;
				       NULL: "/proc/self/mounts" */
	long fd_limit;              /* descriptors the sampler may hold; 0: the
				       RLIMIT_NOFILE soft limit less 64 */
	unsigned rank_by;           /* PROCESS, THREAD without pid: how the rows are
				       chosen: 0, by CPU time (/proc); e + 1, by event
				       e's count (tacho_live_rank_by says how) */
};

struct tacho_live;
struct tacho_live_frame;

/* Opens the rows of the view (for PROCESS and THREAD over everything, the first
 * selection from /proc; CPU-wide rows need what tacho_perf_strerror explains where
 * they do not open). Counting starts at the first tacho_live_sample, or at the child's
 * exec. Returns 0 and *out; -EINVAL (bad options, an opts->sz below the first version,
 * an empty event list, a child without pid), -TACHO_EVERSION (opts set a field past
 * the struct this library knows: a program built against a newer tacho.h; *diag says
 * so), -ESRCH (no such process), -ENOENT (a cgroup that does not exist, or no
 * perf_event hierarchy is mounted; *diag says which), -ENOMEM. Events that open
 * nowhere do not fail the call: their values read NOT_SUPPORTED with the reason.
 * diag may be NULL. The caller owns *out (tacho_live_free). One thread at a time may
 * use a sampler; its frames are independent of it. */
TACHO_API int tacho_live_new(const struct tacho_live_opts *opts, struct tacho_live **out,
			     struct tacho_diag *diag);
/* Closes every counter and frees. NULL-safe. */
TACHO_API void tacho_live_free(struct tacho_live *l);

/* One interval: reads every row (the first call enables the counters and reads their
 * start), computes each value's rate over the time since the previous call, notes the
 * rows whose process ended (their final counts are in this frame, flagged ended, and
 * they are closed after it), then refreshes the rows from /proc. Returns 0 and a new
 * frame in *out (the caller holds one reference: tacho_live_frame_put), -ENOMEM, or
 * -errno of a read. */
TACHO_API int tacho_live_sample(struct tacho_live *l, struct tacho_live_frame **out);

/* Chooses the rows of a PROCESS or THREAD view over every task by event (an index in
 * the list; -1: by CPU time, the default): the tasks whose count of that event was
 * the largest over the last interval, machine-wide, so that a program busy with the
 * event but not with the CPU is followed, and one that starts is followed at the next
 * sample. The counts come from a sampling copy of the event on every online CPU: every
 * occurrence of a tracepoint (period 1); 1000 samples a second per CPU, each weighed
 * by its period, for other events; clocks are ranked by CPU time from /proc, which
 * they measure. The rows followed still count the event exactly, per task. 0; -EINVAL
 * (an event out of range, a view or sampler it does not apply to); -errno of the
 * sampling event's open or mapping (CPU-wide sampling needs perf_event_paranoid <= 0
 * or CAP_PERFMON), the rows then chosen by CPU time. Takes effect at the next
 * sample. */
TACHO_API int tacho_live_rank_by(struct tacho_live *l, int event);

/* The events as the sampler counts them (names, units): valid as long as l. */
TACHO_API size_t tacho_live_nevents(const struct tacho_live *l);

/* --- frames ---
 * A frame never changes. It is shared by reference counting: _get adds a reference,
 * _put drops one and frees at the last (NULL-safe). Both are thread-safe, and so is
 * reading a frame from several threads at once. */
TACHO_API struct tacho_live_frame *tacho_live_frame_get(struct tacho_live_frame *f);
TACHO_API void tacho_live_frame_put(struct tacho_live_frame *f);

/* One value of one row. */
struct tacho_live_value {
	enum tacho_count_status status;
	double total;               /* in the event's unit since the row began counting;
				       NAN without a value */
	double rate;                /* per second over the last interval; NAN in the
				       row's first frame or without a value */
	double coverage;            /* running / enabled over the last interval */
	const char *why;            /* NOT_SUPPORTED, NOT_COUNTED: why (names no command:
				       see hint); else NULL */
	enum tacho_hint hint;
};

/* One row. Owned by its frame. */
struct tacho_live_row {
	enum tacho_live_view kind;
	long long id;               /* the CPU, pid, tid or cgroup id (the directory's
				       inode); -1 for the machine */
	pid_t pid;                  /* process and thread rows: the process; else 0 */
	unsigned uid;               /* process and thread rows: the owner */
	const char *name;           /* "all", "cpu3", the command name, the cgroup path */
	double cpus;                /* process and thread rows: CPUs used over the last
				       interval from /proc (1.0: one whole CPU); CPU and
				       machine rows: the CPUs kept busy (/proc/stat's
				       user, nice, system, irq, softirq); NAN elsewhere
				       or in the first frame */
	bool ended;                 /* the process or thread ended: final counts, last
				       frame of this row */
	double since;               /* frame time at which the row began counting */
	const struct tacho_live_value *values;   /* [nevents] */
	const double *history;      /* [nevents * nhistory]: event e's rates, oldest
				       first, at history[e * nhistory + k]; NAN where none */
	size_t nhistory;
};

/* What the sampler could not count in this frame, and its own cost. */
struct tacho_live_health {
	double sample_s;            /* how long the tacho_live_sample that made it took */
	unsigned rows;              /* rows in the frame */
	unsigned not_followed;      /* processes, threads or cgroups beyond max_rows */
	unsigned no_permission;     /* processes of other users, which this user may not
				       count (CAP_PERFMON, or root, may) */
	unsigned no_descriptors;    /* targets left out for want of file descriptors
				       (events x threads each; raise RLIMIT_NOFILE) */
	unsigned ended;             /* rows that ended in this frame */
	long fds;                   /* perf descriptors held */
	long fd_limit;
	const char *empty;          /* a frame without rows: why, in one line ("no cgroup
				       below /sys/fs/cgroup (...)"); NULL otherwise */
};

TACHO_API enum tacho_live_view tacho_live_frame_view(const struct tacho_live_frame *f);
/* Seconds since the sampler's first sample; and since the previous frame (0 in the
 * first). */
TACHO_API double tacho_live_frame_time(const struct tacho_live_frame *f);
TACHO_API double tacho_live_frame_interval(const struct tacho_live_frame *f);
/* The wall-clock time of the frame, seconds since the Epoch. */
TACHO_API double tacho_live_frame_wall(const struct tacho_live_frame *f);
TACHO_API size_t tacho_live_frame_nevents(const struct tacho_live_frame *f);
/* Event i's name as the list spelled it, and its unit ("" for counts, "msec" for the
 * clocks, whose totals and rates are in milliseconds). NULL out of range. */
TACHO_API const char *tacho_live_frame_event(const struct tacho_live_frame *f, size_t i);
TACHO_API const char *tacho_live_frame_unit(const struct tacho_live_frame *f, size_t i);
/* The index of the event named name, or -1. */
TACHO_API int tacho_live_frame_event_index(const struct tacho_live_frame *f, const char *name);
TACHO_API size_t tacho_live_frame_nrows(const struct tacho_live_frame *f);
/* Row i (processes: the busiest first; CPUs by number; cgroups by path), NULL out of
 * range. */
TACHO_API const struct tacho_live_row *tacho_live_frame_row(const struct tacho_live_frame *f,
							     size_t i);
TACHO_API const struct tacho_live_health *tacho_live_frame_health(const struct tacho_live_frame *f);

/* Writes a frame:
 *  - TACHO_FORMAT_TABLE: a heading line (time, view, rows, what was left out), a
 *    column heading, then a line per row: id, name, CPU%, each event's rate (or why
 *    not, in brackets);
 *  - TACHO_FORMAT_CSV: a header row (unless csv_no_header) and a row per row and
 *    event (docs/schemas.md, "live");
 *  - TACHO_FORMAT_JSON, TACHO_FORMAT_JSON_LINES: the "live" document of
 *    docs/schemas.md (one line for JSON_LINES or json_compact). The history is left
 *    out unless with_history.
 * 0, -EINVAL, -ENOMEM, -EIO. Thread-safe. */
TACHO_API int tacho_live_frame_write(const struct tacho_live_frame *f, FILE *out,
				     enum tacho_format fmt, const struct tacho_write_opts *opts);
/* The same JSON document with each row's history ("history": one array per event). */
TACHO_API int tacho_live_frame_write_history(const struct tacho_live_frame *f, FILE *out,
					     const struct tacho_write_opts *opts);

/* --- Hot symbols (perf top) ---
 * A symbol sampler samples one event at a low frequency on every online CPU, user and
 * kernel, over every task (the idle loop left out where the event is a clock) or over
 * one process's threads and what they create; at each interval it drains the samples,
 * names each one's function (the kernel's from /proc/kallsyms, a process's from its
 * executable mappings in /proc/PID/maps and the binary's symbol table) and hands out
 * a table of the symbols of the interval, the hottest first, each with its share of
 * the interval's samples (weighted by their periods) and its recent shares. Samples
 * whose address is in no known function are "[unknown]" in their binary ("[kernel]",
 * "[unknown]" without a mapping). */
struct tacho_live_symbols_opts {
	size_t sz;                  /* sizeof(struct tacho_live_symbols_opts) */
	const struct tacho_evlist *event;  /* its first event is sampled: cycles where a
				       PMU counts them, cpu-clock elsewhere (the caller's
				       choice) */
	pid_t pid;                  /* > 0: this process alone; 0: every task */
	unsigned freq;              /* samples a second on each CPU (0: 99) */
	unsigned history;           /* shares kept per symbol (0: 60; at most 100000) */
	unsigned max_rows;          /* symbols in a table (0: 50) */
	const char *proc_root;      /* NULL: "/proc" */
};
struct tacho_live_symbols;
struct tacho_live_symtab;

/* Opens the sampler (counting starts at the first tacho_live_symbols_sample). 0 and
 * *out; -EINVAL (bad options, no event), -TACHO_EVERSION, -ESRCH (no such process),
 * -errno of the open or the rings' mapping with *diag saying why (perf_event_paranoid,
 * an event that cannot sample), -ENOMEM. diag may be NULL. One thread at a time. */
TACHO_API int tacho_live_symbols_new(const struct tacho_live_symbols_opts *opts,
				     struct tacho_live_symbols **out, struct tacho_diag *diag);
TACHO_API void tacho_live_symbols_free(struct tacho_live_symbols *s);   /* NULL-safe */
/* The event sampled, as the list named it. */
TACHO_API const char *tacho_live_symbols_event(const struct tacho_live_symbols *s);
/* One interval: enables the event at the first call (that table is empty), drains the
 * samples since the previous call and makes them symbols. 0 and a new table in *out
 * (tacho_live_symtab_free), -ENOMEM, -errno of the enable. */
TACHO_API int tacho_live_symbols_sample(struct tacho_live_symbols *s,
					struct tacho_live_symtab **out);

/* One symbol of a table; owned by the table. */
struct tacho_live_symbol {
	const char *name;           /* the function, or "[unknown]" */
	const char *dso;            /* the binary's file name, "[kernel]", "[vdso]", ... */
	bool kernel;                /* a kernel-mode sample */
	double weight;              /* its samples' periods summed over the interval */
	double share;               /* weight / every sample's weight, 0 to 1 */
	const double *history;      /* its shares over the last intervals, oldest first
				       (this one last) */
	size_t nhistory;
};
struct tacho_live_symtab_info {
	const char *event;          /* owned by the table */
	double time;                /* seconds since the first sample */
	double interval;            /* since the previous table (0 in the first) */
	unsigned long long samples; /* samples in the interval */
	unsigned long long lost;    /* samples the kernel dropped, since the start */
};
/* The symbols of the interval, the hottest first (at most max_rows), and what the
 * table is. Thread-safe once made; NULL-safe. */
TACHO_API size_t tacho_live_symtab_count(const struct tacho_live_symtab *t);
TACHO_API const struct tacho_live_symbol *tacho_live_symtab_at(const struct tacho_live_symtab *t,
								size_t i);
TACHO_API void tacho_live_symtab_info(const struct tacho_live_symtab *t,
				      struct tacho_live_symtab_info *out);
/* Writes the table as text: a heading (time, event, samples, lost), then a line per
 * symbol: its share in percent, its binary, its name. 0, -EINVAL, -EIO. */
TACHO_API int tacho_live_symtab_write(const struct tacho_live_symtab *t, FILE *out);
TACHO_API void tacho_live_symtab_free(struct tacho_live_symtab *t);   /* NULL-safe */

/* The exposition formats (enum tacho_metrics_format) are in tacho/output.h. */
/* The parts of an exposition: what depends on the frame alone (the counters, what
 * was not counted, the sampler's health), and what depends on the scrape (its
 * duration, the count, and OpenMetrics' "# EOF"). A server renders the first once per
 * frame and the second per scrape, and sends them one after the other. */
#define TACHO_METRICS_FRAME  0x1u
#define TACHO_METRICS_SCRAPE 0x2u
struct tacho_metrics_opts {
	size_t sz;                  /* sizeof(struct tacho_metrics_opts) */
	enum tacho_metrics_format format;
	double scrape_s;            /* the previous scrape's duration, exposed as
				       tacho_scrape_duration_seconds; NAN to leave out */
	unsigned long long scrapes; /* scrapes served before this one */
	unsigned parts;             /* TACHO_METRICS_*; 0: both */
	/* with the scrape's part, after tacho's own families and before OpenMetrics'
	 * # EOF: extra(extra_arg, out, openmetrics) writes more families (tacho serve
	 * --profile: tacho_sampler_write_metrics); 0 or -errno, which the call returns.
	 * NULL: none */
	int (*extra)(void *arg, FILE *out, bool openmetrics);
	void *extra_arg;
};
/* Writes the frame (f may be NULL when parts is TACHO_METRICS_SCRAPE alone) as
 * metrics: one counter family per event, tacho_EVENT_total (the
 * name made of the event's, clocks in seconds as tacho_EVENT_seconds_total), a sample
 * per row with labels for the row (cpu; pid and comm; tid; cgroup) and the event's
 * spelling (event), # HELP and # TYPE (and # UNIT in OpenMetrics); values without
 * a number are left out and counted in tacho_not_counted{event, status, reason}; then
 * tacho's own health: tacho_rows, tacho_targets_left_out{reason},
 * tacho_sample_duration_seconds, tacho_frame_timestamp_seconds,
 * tacho_perf_descriptors, tacho_scrape_duration_seconds, tacho_scrapes_total;
 * then what opts->extra writes. docs/serve.md lists them.
 * 0, -EINVAL (an opts->sz below the first version), -TACHO_EVERSION (opts set a field
 * past the struct this library knows: a program built against a newer tacho.h), -EIO.
 * Thread-safe. */
TACHO_API int tacho_live_frame_write_metrics(const struct tacho_live_frame *f, FILE *out,
					     const struct tacho_metrics_opts *opts);

/* --- Rules over rates (tacho watch) ---
 * A rule watches one input of a row: an event's rate, or the ratio of two events'
 * rates ("cache-misses/instructions"). ABOVE fires once the input has stayed above the
 * threshold for for_s seconds, and lifts once it has stayed below threshold x (1 -
 * hysteresis) for for_s seconds (BELOW: the mirror image, above threshold x (1 +
 * hysteresis)): between the two it keeps its state, so that a rate hovering at the
 * threshold fires once, not at every interval. An interval without a value (not
 * counted, the first frame) keeps the state and restarts the clock. */

enum tacho_rule_dir {
	TACHO_RULE_ABOVE = 0,
	TACHO_RULE_BELOW,
};

struct tacho_rule_opts {
	size_t sz;                  /* sizeof(struct tacho_rule_opts) */
	const char *input;          /* "EVENT" or "EVENT/EVENT", each in the event grammar */
	enum tacho_rule_dir dir;
	double threshold;           /* per second (a ratio: the ratio itself) */
	double for_s;               /* 0: one interval is enough */
	double hysteresis;          /* a fraction of the threshold, 0 to 1 (0: 0.1; a
				       negative value: none) */
};

struct tacho_rule;

/* Parses the input with the event grammar (a ratio is two events split at the one '/'
 * that leaves an event on each side). 0 and *out; -TACHO_EPARSE, -TACHO_ENOEVENT
 * (with *diag: the input, the column, what was wrong), -EINVAL (an opts->sz below the
 * first version, a threshold that is not finite or negative, for_s negative,
 * hysteresis above 1), -TACHO_EVERSION (opts set a field past the struct this library
 * knows: a program built against a newer tacho.h; *diag says so), -ENOMEM. The caller
 * owns *out (tacho_rule_free). */
TACHO_API int tacho_rule_new(const struct tacho_rule_opts *opts, struct tacho_rule **out,
			     struct tacho_diag *diag);
TACHO_API void tacho_rule_free(struct tacho_rule *r);
/* The events the rule needs, as one spec for tacho_evlist_add ("a" or "a,b"). Lives as
 * long as r. */
TACHO_API const char *tacho_rule_events(const struct tacho_rule *r);
/* The rule in words: "page-faults above 1000/s for 2 s (lifts below 900/s)". Returns
 * the length it wanted, as snprintf. */
TACHO_API int tacho_rule_describe(const struct tacho_rule *r, char *buf, size_t size);

enum tacho_rule_change {
	TACHO_RULE_SAME = 0,
	TACHO_RULE_FIRED,
	TACHO_RULE_LIFTED,
};
/* Feeds the rule row `row` of frame f: finds its events by name, computes the input
 * (*value, NAN when it has none) and advances its state with the frame's time. Returns
 * FIRED or LIFTED at a crossing, SAME otherwise; -EINVAL for a bad row or a frame
 * without the rule's events. Not thread-safe on one rule. */
TACHO_API int tacho_rule_eval(struct tacho_rule *r, const struct tacho_live_frame *f, size_t row,
			      double *value);
/* Whether every event the rule needs can be counted on this machine, before anything
 * runs: each is opened on the calling thread and closed (tacho_evlist_probe), and a
 * source that opens but never counts here is as good as one that does not open. A rule
 * over an event that cannot be counted would never fire, silently. Returns 0; the
 * first event's -errno or -TACHO_ESILENT with a sentence in why (lowercase, naming the
 * event and the reason, no command); -EINVAL; -ENOMEM. Thread-safe. */
TACHO_API int tacho_rule_check(const struct tacho_rule *r, char *why, size_t size);
/* Whether the rule has fired and not lifted. */
TACHO_API bool tacho_rule_active(const struct tacho_rule *r);

/* A rate as people write it: a number with an optional SI suffix (k, M, G, T; m, u
 * below one) and an optional "/s": "1000", "2.5k", "10M/s", "0.02". 0 and *out;
 * -TACHO_EPARSE (with *diag: the column) for anything else, -TACHO_EOUTOFRANGE for a value
 * that is not finite. Thread-safe. */
TACHO_API int tacho_rate_parse(const char *s, double *out, struct tacho_diag *diag);

/* --- Throttling a target's CPU (tacho watch --cap, --duty) ---
 * CAP limits the CPU bandwidth of the target through the cgroup CPU controller: cgroup
 * v2's cpu.max where the v2 hierarchy has the cpu controller, else v1's
 * cpu.cfs_quota_us and cpu.cfs_period_us. A process is moved into a cgroup of its own
 * (tacho-PID under the controller's root) while the throttle lives and moved back at
 * the end; a cgroup given by path has its own limit set and restored. DUTY stops and
 * continues the target (SIGSTOP, SIGCONT) on a thread of its own, where no cgroup is
 * writable. */

enum tacho_throttle_kind {
	TACHO_THROTTLE_CAP = 0,
	TACHO_THROTTLE_DUTY,
};

struct tacho_throttle_opts {
	size_t sz;                  /* sizeof(struct tacho_throttle_opts) */
	enum tacho_throttle_kind kind;
	pid_t pid;                  /* the process, or 0 with cgroup */
	const char *cgroup;         /* CAP: a cgroup of the CPU controller's hierarchy
				       (path under it, or absolute); DUTY: the processes of
				       this cgroup (of any hierarchy, absolute or under the
				       perf_event one) */
	unsigned period_us;         /* CAP: the bandwidth period (0: 100000); DUTY: the
				       cycle (0: 100000) */
	const char *mounts;         /* NULL: "/proc/self/mounts" */
	const char *proc_root;      /* NULL: "/proc" */
};

struct tacho_throttle;

/* Finds where the throttle will act, changes nothing yet, and starts its keeper: a
 * process (forked, execs nothing, nobody's child here, "tacho-keeper") that undoes
 * what the throttle changed if this process dies without tacho_throttle_free (a
 * SIGKILL, a crash), and ends when it is freed; the keeper's socket is this process's
 * only tie to it, close-on-exec. 0 and *out; -ENOENT with *diag when CAP finds no CPU
 * controller it can write (none mounted, read-only, or not this user's: DUTY works
 * anyway), or the cgroup does not exist; -ESRCH (no such process), -EINVAL,
 * -TACHO_EVERSION (opts set a field past the struct this library knows: a program built
 * against a newer tacho.h; *diag says so), -ENOMEM, -errno (with *diag) when the keeper
 * cannot start. The caller owns *out
 * (tacho_throttle_free). */
TACHO_API int tacho_throttle_new(const struct tacho_throttle_opts *opts,
				 struct tacho_throttle **out, struct tacho_diag *diag);
/* Limits the target: CAP to `share` CPUs of bandwidth (0.25: a quarter of one CPU,
 * at least 1 ms per period); DUTY to running that fraction of each cycle (0 < share
 * < 1). May be called again with another share. 0 or -errno (of the cgroup files,
 * or of kill). */
TACHO_API int tacho_throttle_apply(struct tacho_throttle *t, double share);
/* CAP: corrects the bandwidth written to the kernel so that a quantity the caller
 * measures on the target (measured, over the last interval) comes to target: the CPUs
 * it uses (the kernel's enforcement overruns a quota by up to a scheduler tick per
 * period), or the rate of an event that follows its progress (what a CPU second buys
 * varies with the load). A damped step each call, the bandwidth kept between a quarter
 * and twice the share of the last apply. Call it every interval while the cap holds.
 * 0 (also when there is nothing to do: DUTY, a lifted throttle, a measured or target
 * that is not a positive number), or -errno of the cgroup file. */
TACHO_API int tacho_throttle_feedback(struct tacho_throttle *t, double measured, double target);
/* Lifts the limit (the target runs freely; a stopped one is continued). 0 or -errno. */
TACHO_API int tacho_throttle_lift(struct tacho_throttle *t);
TACHO_API bool tacho_throttle_active(const struct tacho_throttle *t);
/* Where it acts, for messages: "cgroup v1 /sys/fs/cgroup/cpu/tacho-42
 * (cpu.cfs_quota_us)", "SIGSTOP/SIGCONT of process 42". Lives as long as t. */
TACHO_API const char *tacho_throttle_where(const struct tacho_throttle *t);
/* Lifts, moves the process back to its cgroup, removes the cgroup it made, continues
 * a stopped process, frees. NULL-safe. */
TACHO_API void tacho_throttle_free(struct tacho_throttle *t);

/* The directory of a cgroup as tacho_live_opts' cgroups and tacho_throttle_opts' DUTY
 * name one: a path under the hierarchy of perf's cgroup mode (v1's perf_event, else
 * cgroup v2), with or without its leading '/', or an absolute path inside it. mounts:
 * the mount table to find the hierarchy in (NULL: "/proc/self/mounts"). 0 and the
 * absolute path in buf (no trailing '/'); -ENOENT (no such cgroup, or no hierarchy
 * mounted), -ENOTDIR, -EINVAL (empty, outside the hierarchy, or ".." in it), -ERANGE
 * (longer than size), -errno of the mount table. Thread-safe. */
TACHO_API int tacho_cgroup_resolve(const char *cgroup, const char *mounts, char *buf,
				   size_t size);

/* --- A watch session (tacho watch) ---
 * The controller of tacho watch, fed the frames of a sampler whose first row is its
 * target (a process with its threads and children, or a cgroup): rules, each with
 * what to do while it holds: a signal when it fires, a CPU cap or a duty cycle while
 * it holds. At every crossing the session acts (sends the signal; applies the
 * throttle of the rule's kind at the smallest share any rule holding asks, or lifts it
 * when none holds) and says what it did as data, a change per crossing, for the caller
 * to log; while a cap holds, it steers it each frame by what it brings
 * (tacho_throttle_feedback). It runs no command: a program that runs one at a crossing
 * (tacho watch --exec) does so from the changes.
 *
 * In order: tacho_watch_new, tacho_watch_add per rule (before anything runs, so that a
 * bad rule stops nothing half-started), the sampler made over tacho_watch_events,
 * tacho_watch_start with the target (the throttles found, their keeper started),
 * tacho_watch_step per frame, tacho_watch_free (every throttle lifted and undone).
 * One thread at a time may use a session.
 *
 * The cap's share: when a rule with cap fires, the CPUs the target used over the rule's
 * window (its task-clock rate averaged over the last for_s seconds of the row's
 * history; one CPU when the frames do not say) times cap percent; then each frame the
 * bandwidth is steered so that the rule's event rate comes to cap percent of its rate
 * over the window before the firing (a ratio, which bandwidth does not change: so
 * that the CPU it uses comes to the share). docs/watch.md tells why. */

struct tacho_watch_opts {
	size_t sz;                  /* sizeof(struct tacho_watch_opts) */
	const char *mounts;         /* the mount table (cgroup hierarchies); NULL:
				       "/proc/self/mounts" */
	const char *proc_root;      /* NULL: "/proc" */
	unsigned period_us;         /* the throttles' period: CAP's bandwidth period and
				       DUTY's cycle (0: 100000) */
};

/* A rule and what to do while it holds. Options. */
struct tacho_watch_rule_opts {
	size_t sz;                  /* sizeof(struct tacho_watch_rule_opts) */
	const struct tacho_rule_opts *rule;   /* the rule, as tacho_rule_new takes it */
	int signal;                 /* sent to the target when the rule fires (each process
				       of a cgroup); 0: none */
	double cap;                 /* percent, above 0: while the rule holds, the target's
				       CPU bandwidth is capped (the cap's share, above);
				       0: none */
	double duty;                /* percent, above 0 and below 100: while the rule
				       holds, the target runs this share of each cycle and
				       is stopped (SIGSTOP) for the rest; 0: none. Not with
				       cap. */
};

/* What a crossing did to one throttle. Fixed. */
enum tacho_watch_did {
	TACHO_WATCH_UNTOUCHED = 0,  /* the rule has no throttle of this kind */
	TACHO_WATCH_APPLIED,        /* limited to share: the smallest any holding rule of
				       this kind asks */
	TACHO_WATCH_LIFTED,         /* lifted: no rule of this kind holds any more */
};
struct tacho_watch_throttled {
	enum tacho_watch_did did;
	double share;               /* APPLIED: CAP: CPUs of bandwidth (0.25: a quarter of
				       one); DUTY: the fraction of each cycle it runs */
	int err;                    /* 0, or the -errno of the apply or the lift (did says
				       which was tried) */
};

/* One rule's crossing in a step and what the session did at it. Handed out: read
 * through tacho_watch_step_change's pointer, valid until the next step or free. */
struct tacho_watch_change {
	size_t rule;                /* the rule's index (tacho_watch_rule) */
	enum tacho_rule_change change;   /* TACHO_RULE_FIRED or TACHO_RULE_LIFTED */
	double value;               /* the input that crossed (tacho_rule_eval's value) */
	double time;                /* the frame's time: seconds since counting began */
	int signal;                 /* FIRED with a signal: the signal sent; else 0 */
	int signalled;              /* with signal: the processes it went to (1: the
				       process), or -errno (none) */
	struct tacho_watch_throttled cap, duty;
};

/* What one step did. Sized: sz first, set by the caller. */
struct tacho_watch_result {
	size_t sz;                  /* sizeof(struct tacho_watch_result) */
	size_t nchanges;            /* the rules that fired or lifted, in rule order:
				       tacho_watch_step_change(w, 0 .. nchanges - 1) */
	int feedback;               /* 0, or the -errno with which the cap that holds
				       could not be corrected (it stays as it was) */
};

struct tacho_watch;

/* An empty session (opts may be NULL: the defaults). 0 and *out; -EINVAL (an opts->sz
 * below the first version), -TACHO_EVERSION (opts set a field past the struct this
 * library knows: a program built against a newer tacho.h), -ENOMEM. The caller owns
 * *out (tacho_watch_free). */
TACHO_API int tacho_watch_new(const struct tacho_watch_opts *opts, struct tacho_watch **out);
/* Adds a rule (parsed as tacho_rule_new parses it) with its actions, before
 * tacho_watch_start. Returns the rule's index (0, 1, ...); tacho_rule_new's errors
 * with *diag; -EINVAL (an opts->sz below the first version, no rule, a signal outside
 * 1 to 64, cap not above 0, duty not between 0 and 100, both cap and duty, or after
 * start); -TACHO_EVERSION (opts set a field past the struct this library knows: a
 * program built against a newer tacho.h; *diag says so); -ENOMEM. diag may be NULL. */
TACHO_API int tacho_watch_add(struct tacho_watch *w, const struct tacho_watch_rule_opts *opts,
			      struct tacho_diag *diag);
TACHO_API size_t tacho_watch_nrules(const struct tacho_watch *w);
/* Rule i (to describe, check or ask whether it holds), NULL out of range. Lives as long
 * as w. */
TACHO_API const struct tacho_rule *tacho_watch_rule(const struct tacho_watch *w, size_t i);
/* What the sampler must count for the session, as one spec for tacho_evlist_parse:
 * every event of the rules once, in the order the rules name them, then task-clock (the
 * CPU the target uses, which a cap is a share of) unless a rule names it. "" without
 * rules. Lives until the next tacho_watch_add. */
TACHO_API const char *tacho_watch_events(const struct tacho_watch *w);
/* The target: the process pid (> 0), or the cgroup (a path as tacho_cgroup_resolve
 * takes it; its processes get the signals, and the cap is its own limit, saved and
 * restored). Finds where each throttle a rule asks for will act and starts its keeper,
 * changing nothing yet (tacho_throttle_new). 0; tacho_throttle_new's errors with *diag
 * and *failed (if non-NULL) the throttle that could not be set up; -EINVAL (no target,
 * both, or started already). diag may be NULL. */
TACHO_API int tacho_watch_start(struct tacho_watch *w, pid_t pid, const char *cgroup,
				enum tacho_throttle_kind *failed, struct tacho_diag *diag);
/* Feeds frame f (row 0: the target) to every rule in order (tacho_rule_eval), acts at
 * each crossing, then corrects a cap that holds. A frame without rows changes nothing,
 * and a rule whose events the frame lacks never crosses. 0 and *res (may be NULL);
 * -EINVAL (not started, no frame, a res whose sz is below its first version). */
TACHO_API int tacho_watch_step(struct tacho_watch *w, const struct tacho_live_frame *f,
			       struct tacho_watch_result *res);
/* The i-th change of the last step, NULL out of range. */
TACHO_API const struct tacho_watch_change *tacho_watch_step_change(const struct tacho_watch *w,
								   size_t i);
/* The session's throttle of that kind (for tacho_throttle_where and _active), NULL when
 * no rule asks for one or before tacho_watch_start. Lives as long as w. */
TACHO_API const struct tacho_throttle *tacho_watch_throttle(const struct tacho_watch *w,
							    enum tacho_throttle_kind kind);
/* Lifts and undoes every throttle (tacho_throttle_free), frees the rules and the
 * session. NULL-safe. */
TACHO_API void tacho_watch_free(struct tacho_watch *w);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_LIVE_H */
