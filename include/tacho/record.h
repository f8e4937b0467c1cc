/* tacho/record.h - libtacho's public interface: sampling: recording (tacho record). Its
 * reports are tacho/report.h, the build-id cache it fills tacho/symbols.h.
 * Part of <tacho.h>, which includes every area; include that one.
 *
 * ELF symbols, source lines, unwinding and build-ids go through elfutils, which
 * libtacho loads (libdw.so.1, with libelf) the first time one of these functions
 * reads an ELF file, not at the program's start. A process where it cannot be loaded
 * ends there with exit status 127 and one line on standard error that says what is
 * missing, as the dynamic loader would have ended it at start-up when libtacho linked
 * it; install elfutils' libdw (Debian: libdw1) wherever recordings are made or
 * reported. */
#ifndef TACHO_RECORD_H
#define TACHO_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/run.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 7. Sampling
 * ================================================================================== */
/* Event-based and time-based sampling (VTune's EBS and TBS, seed 004; perf record and
 * perf report today): every Nth event, or every millisecond of CPU time, the kernel
 * notes where the program was; tacho writes that to a record file as it goes and turns
 * it into hot spots by function, library, source line and instruction.
 * docs/lib-sampling.md tells more; docs/record-format.md describes the file. */

/* --- Recording --- */
/* How call chains are recorded (docs/call-graphs.md compares them). */
enum tacho_call_graph {
	TACHO_CALL_GRAPH_NONE = 0,  /* none (or frame pointers when opts.callchain is set) */
	TACHO_CALL_GRAPH_FP,        /* the kernel walks the frame pointers (perf -g) */
	TACHO_CALL_GRAPH_DWARF,     /* the kernel copies the user registers and a window of
				       the user stack; the report unwinds it with the
				       binaries' CFI (x86-64 only) */
	TACHO_CALL_GRAPH_LBR,       /* the CPU's last-branch records in call-stack mode
				       (Intel, Haswell on; not in most VMs) */
};

/* Options (docs/architecture.md, "An API that can grow"): sz first; fields the caller's
 * sz does not cover take their defaults. */
struct tacho_record_opts {
	size_t sz;                  /* sizeof(struct tacho_record_opts) */
	const char *events;         /* an event spec of the grammar (section 3); NULL:
				       cycles where there is a core PMU, else cpu-clock */
	uint64_t period;            /* sample every period events (perf's -c) */
	unsigned freq;              /* or: this many samples per second, the kernel adjusting
				       the period (perf's -F). With neither: the clocks
				       (cpu-clock, task-clock) sample every 1/rate s of CPU
				       time; other events start with a provisional period,
				       are counted for calibrate_ms, then get the period that
				       gives about rate samples per second */
	bool callchain;             /* record call chains (user stacks by frame pointers) */
	const char *output;         /* the record file; NULL: "tacho.rec" */
	char *const *argv;          /* the program to start and record, NULL-terminated */
	pid_t pid;                  /* or an existing process (every thread of it) */
	bool system_wide;           /* or every CPU (with argv: while the program runs) */
	unsigned mmap_pages;        /* data pages of each ring (a power of two); 0: sized
				       from the rate and what each sample carries, at least
				       perf's default (perf_event_mlock_kb less a page: 128
				       pages), more only where the kernel's mlock limit does
				       not apply (CAP_IPC_LOCK), up to 16 MiB a ring and 512
				       MiB in all (res->ring_pages says what was used) */
	unsigned flush_ms;          /* the longest time between writes to the file; 0: 200 */
	unsigned calibrate_ms;      /* the calibration window; 0: 100 */
	unsigned rate;              /* samples per second aimed at; 0: 1000 */
	volatile int *stop;         /* when *stop becomes non-zero (a signal number, set by
				       the caller's signal handler): with a program, the
				       signal is passed on to it, *stop is cleared (an
				       atomic exchange) and recording goes on until it
				       ends; if *stop becomes non-zero again while it runs,
				       the program is killed with SIGKILL (said through
				       notify) and the file still finished. Otherwise
				       recording stops */
	void (*notify)(void *arg, const char *msg);  /* what tacho chose (the period, the
				       calibration), as it happens; NULL: the log at INFO */
	void *notify_arg;
	enum tacho_call_graph call_graph; /* how to record call chains; NONE with
				       callchain set is FP */
	unsigned stack_size;        /* DWARF: bytes of user stack copied per sample, a
				       multiple of 8 up to 65528; 0: 8192 */
	const char *buildid_cache;  /* at the end, copy the binaries the recording mapped
				       into the build-id cache in this folder
				       (tacho_buildid_cache_dir; docs/buildid-cache.md:
				       no file over 64 MiB, nothing once it holds 1 GiB);
				       NULL: none */
	bool off_cpu;               /* also sample where threads block: sched:sched_switch
				       with call chains (frame pointers unless call_graph
				       says otherwise) and the switches back in, each
				       blocked stack written as a sample of the event
				       "offcpu-time" whose period is the nanoseconds the
				       thread waited (switch-in time minus switch-out time;
				       a preempted thread, still runnable, is not counted).
				       Needs the privilege to read sched_switch's payload
				       (CAP_PERFMON or perf_event_paranoid -1). */
};

#define TACHO_RECORD_LOST_CPUS 256

/* What a recording did. Sized (docs/architecture.md, "An API that can grow"): the
 * caller sets sz (`struct tacho_record_result res = { .sz = sizeof(res) };`) and gets
 * the fields it covers. */
struct tacho_record_result {
	size_t sz;                  /* sizeof(struct tacho_record_result) */
	uint64_t samples;           /* samples written */
	uint64_t lost;              /* samples the kernel dropped (full ring), from its
				       PERF_RECORD_LOST records, plus, for period-1
				       events, those the count says were due but that no
				       record reported (a ring still full at the end,
				       throttling): never hidden */
	uint64_t throttled;         /* times the kernel throttled an event */
	uint64_t bytes;             /* size of the file */
	bool ran;                   /* the program was started */
	struct tacho_exit exit;     /* how it ended (when ran) */
	int exec_err;               /* errno of a failed exec (then -TACHO_ENOSTART) */
	char choice[256];           /* the last sentence about the period tacho chose */
	unsigned cached_files;      /* binaries copied into the build-id cache */
	uint64_t cached_bytes;      /* their size */
	/* lost, by where it was lost: the kernel's PERF_RECORD_LOST and LOST_SAMPLES
	 * records by the CPU of the ring they came on (lost_cpu[i] for CPU i, lost_cpu_more
	 * for CPUs TACHO_RECORD_LOST_CPUS and above), and lost_unattributed for those no
	 * record told (period 1, above); they sum to lost */
	uint64_t lost_cpu[TACHO_RECORD_LOST_CPUS];
	uint64_t lost_cpu_more;
	uint64_t lost_unattributed;
	unsigned ring_pages;        /* data pages of each CPU's ring: mmap_pages, or the
				       default sized from the rate, the call chains and the
				       kernel's perf mlock limit */
};

/* Records samples of opts->events on the target into opts->output, writing the file as
 * the recording goes (every flush_ms at the latest), so that a recording killed at any
 * moment reads up to its last write. Returns when the program (or the process) ends,
 * with no fixed delay, or when *opts->stop is set without a program. Returns 0 (also
 * when the program failed: see res->exit), -TACHO_ENOSTART when the program could not be
 * started (res->exec_err), the grammar's errors for a bad spec, -errno of
 * perf_event_open with an explanation in *diag (-EOPNOTSUPP for LBR where the CPU has
 * none), -EINVAL for a bad stack_size or call_graph, -EOPNOTSUPP for DWARF off x86-64,
 * or -errno of writing the file; -EINVAL
 * (and nothing recorded, *res untouched) for an opts->sz or res->sz below the first
 * version; -TACHO_EVERSION (nothing recorded, *res untouched, *diag saying so) for
 * options that set a field past the struct this library knows (a program built against
 * a newer tacho.h). Starts a child and changes no signal disposition; not thread-safe
 * with other forks. */
TACHO_API int tacho_record(const struct tacho_record_opts *opts, struct tacho_record_result *res,
			   struct tacho_diag *diag);

/* --- Always-on sampling (tacho serve --profile) ---
 * One sampler that keeps sampling every CPU at a low rate and holds what it saw over a
 * rolling window, so that a profile of the last N seconds is answered at once, without
 * a recording of its own. Samples are aggregated as they come, by (process, thread,
 * event, call chain) -> count and summed period, in slices of slice_s seconds: memory
 * grows with the distinct stacks, not with the samples. A slice leaves when it is past
 * the window, or, oldest first, when the memory held goes past max_bytes (the current
 * slice then takes no new stack, only counts of those it has); both are counted. The
 * processes' names and executable mappings (what a report needs to name the stacks)
 * are held as long as a held slice may need them: those of a process that exited go
 * with the last slice from before its exit. docs/serve.md tells more. */
struct tacho_sampler;

struct tacho_sampler_opts {
	size_t sz;                  /* sizeof(struct tacho_sampler_opts) */
	const char *events;         /* as tacho_record_opts.events; NULL: cycles where there
				       is a core PMU, else cpu-clock */
	unsigned freq;              /* samples a second on each CPU; 0: 19 (Parca's agent:
				       a prime, never in step with a periodic timer) */
	unsigned window_s;          /* seconds held; 0: 60 */
	unsigned slice_s;           /* seconds a slice covers; 0: window_s / 6, from 1 to 10 */
	uint64_t max_bytes;         /* the memory held at most; 0: 64 MiB */
};

/* What a sampler holds and has done (totals since tacho_sampler_new). Sized. */
struct tacho_sampler_stats {
	size_t sz;                  /* sizeof(struct tacho_sampler_stats) */
	bool running;               /* tacho_sampler_run is sampling */
	uint64_t samples;           /* samples taken in */
	uint64_t lost;              /* samples the kernel dropped (full ring) */
	uint64_t dropped_window;    /* samples that left with a slice past the window */
	uint64_t dropped_memory;    /* samples that left with a slice, or were refused,
				       because of max_bytes */
	uint64_t dropped_slices;    /* slices that left because of max_bytes */
	uint64_t bytes;             /* memory held: slices, mappings and names */
	uint64_t stacks;            /* distinct (process, thread, event, stack) entries
				       held, over the slices */
	double held_s;              /* seconds the held slices cover, up to now */
	double cpu_s;               /* CPU time of the thread in tacho_sampler_run
				       (CLOCK_THREAD_CPUTIME_ID), at its latest read of
				       the rings */
	char event[64];             /* the event sampled (once running) */
};

/* A sampler with these options (NULL: every default): 0 and *out, -EINVAL for a
 * window_s or slice_s over a day, a slice_s over window_s, a freq over 100000;
 * -TACHO_EVERSION for options past this library's; -ENOMEM. Free with
 * tacho_sampler_free. */
TACHO_API int tacho_sampler_new(const struct tacho_sampler_opts *opts, struct tacho_sampler **out);
/* Samples every CPU (kernel and user call chains by frame pointers) until *stop
 * becomes non-zero, on the calling thread: the caller gives it a thread of its own.
 * Returns 0 when stopped, or tacho_record's errors (with *diag) when sampling could
 * not start or a read failed. Once per sampler. */
TACHO_API int tacho_sampler_run(struct tacho_sampler *s, volatile int *stop,
				struct tacho_diag *diag);
/* Writes the samples of the slices that reach into the last `seconds` seconds (whole
 * slices: up to slice_s more), of process pid alone when pid is not 0, as gzipped pprof (tacho_profile_write_pprof) to f. The
 * held samples are copied into a temporary file in $TMPDIR (else /tmp) under the
 * sampler's lock, named there from it without: several callers at once, and the
 * sampler, go on. 0; -TACHO_EEMPTY (with *diag) when no slice is held yet; -errno.
 * Thread-safe. */
TACHO_API int tacho_sampler_write_pprof(struct tacho_sampler *s, unsigned seconds, pid_t pid,
					FILE *f, struct tacho_diag *diag);
struct tacho_profile;
/* The same samples as tacho_sampler_write_pprof (the last `seconds`, of pid alone when
 * not 0) loaded as a profile (tacho/report.h), for the caller to filter
 * (tacho_profile_set_filter: a cgroup, comms...) and write in any format: 0 and *out
 * (free with tacho_profile_free); -TACHO_EEMPTY (with *diag) when no slice is held yet;
 * -errno, tacho_profile_load's errors. Thread-safe. */
TACHO_API int tacho_sampler_profile(struct tacho_sampler *s, unsigned seconds, pid_t pid,
				    struct tacho_profile **out, struct tacho_diag *diag);
/* The totals now (out->sz set by the caller). 0, -EINVAL. Thread-safe. */
TACHO_API int tacho_sampler_stats(struct tacho_sampler *s, struct tacho_sampler_stats *out);
/* The totals as metrics families (Prometheus' text format, or OpenMetrics with om:
 * # UNIT lines, no # EOF), tacho_serve_profile_*: cpu_seconds_total, samples_total,
 * dropped_samples_total{reason="window"|"memory"}, dropped_slices_total,
 * lost_samples_total, bytes, stacks, window_seconds, running (docs/serve.md). For
 * tacho_metrics_opts.extra. 0, -EINVAL, -EIO. Thread-safe. */
TACHO_API int tacho_sampler_write_metrics(struct tacho_sampler *s, FILE *out, bool om);
/* Frees a sampler that is not running (NULL is fine). */
TACHO_API void tacho_sampler_free(struct tacho_sampler *s);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_RECORD_H */
