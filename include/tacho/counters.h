/* tacho/counters.h - libtacho's public interface: counting: events opened on a target
 * in groups, read with a status per value.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_COUNTERS_H
#define TACHO_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "tacho/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 4. Counters (the perf_event engine)
 * ================================================================================== */
/* A struct tacho_counters is a set of events opened on one target (a program tacho
 * starts, a process, a thread, or CPUs) in groups. Members of a group are scheduled
 * on the PMU together and read with one read(2); every value comes back with a status,
 * so that a caller never mistakes "not counted" for zero.
 *
 * Typical use (error checks left out):
 *
 *	struct tacho_child *ch;
 *	tacho_child_start(argv, NULL, &ch);                  // forked, waits before exec
 *	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_CHILD,
 *					 .pid = tacho_child_pid(ch) };
 *	tacho_counters_open(&o, specs, nspecs, sizeof(specs[0]), &c); // enable_on_exec
 *	tacho_child_exec(ch);                                // counting starts at exec
 *	tacho_child_wait(ch, &exit);
 *	tacho_counters_read(c, values, nspecs, sizeof(values[0]));
 *
 * docs/lib-counters.md tells more: targets, groups, inheritance, the explainer. */

/* --- Counting ---
 * Targets: what the events watch. */
enum tacho_target {
	TACHO_TARGET_THREAD = 0,   /* one thread: pid is its tid, 0 the calling thread */
	TACHO_TARGET_PROCESS,      /* every thread of process pid (/proc/PID/task when
				      opened), 0 this process */
	TACHO_TARGET_CHILD,        /* a child from tacho_child_start, before tacho_child_exec:
				      counting starts at exec (enable_on_exec) */
	TACHO_TARGET_CPUS,         /* every task on the CPUs listed (all online ones when
				      ncpus is 0); needs privilege at paranoid > 0 */
};

/* Options (docs/architecture.md, "An API that can grow"): sz first; fields the caller's
 * sz does not cover take their defaults. */
struct tacho_counters_opts {
	size_t sz;                 /* sizeof(struct tacho_counters_opts) */
	enum tacho_target target;
	pid_t pid;                 /* THREAD, PROCESS, CHILD */
	const int *cpus;           /* CPUS: the CPU numbers; NULL with ncpus 0: all online */
	size_t ncpus;
	bool no_inherit;           /* do not follow threads and processes the target creates
				      after the open (by default tacho does, for task targets) */
	bool no_group_read;        /* read each event by itself even inside a group */
};

/* One event to open: its name (for messages), its attributes and its group. Events with
 * the same group number >= 0 are opened as one group, in order, the first one the
 * leader; TACHO_GROUP_NONE opens an event alone. Element size (docs/architecture.md,
 * "An API that can grow"): an array of specs goes with its element size
 * as the caller knows it (sizeof(specs[0])); fields the caller's version lacks read as
 * 0. attr is read by its own size field, as the kernel reads it: a caller built
 * with older kernel headers sets the size it has (PERF_ATTR_SIZE_VER*, or sizeof) and
 * the fields it lacks are zero; a size of 0, or one the library's headers do not know,
 * is refused. The engine sets the attributes it owns (size, disabled, inherit,
 * enable_on_exec, read_format) and keeps the rest (sampling fields included). */
#define TACHO_GROUP_NONE (-1)
struct tacho_counter_spec {
	const char *name;
	const struct perf_event_attr *attr;   /* read during tacho_counters_open only */
	int group;
};

/* What became of one event. */
enum tacho_count_status {
	TACHO_COUNT_COUNTED = 0,     /* on a counter all the time it was enabled */
	TACHO_COUNT_MULTIPLEXED,     /* on a counter part of the time: value is scaled,
					coverage < 1 says how much it ran */
	TACHO_COUNT_NOT_COUNTED,     /* opened, but never on a counter (time running 0),
					or never enabled, or not opened for want of file
					descriptors (err -EMFILE / -ENFILE; a group then
					is left out whole), or opened but of a source
					proven not to count on this machine (err
					-TACHO_ESILENT; tacho_source_prove): no value */
	TACHO_COUNT_NOT_SUPPORTED,   /* could not be opened: err and why say so */
	TACHO_COUNT_SIMULATED,       /* not counted by hardware: the value of a simulation
					of the program (valgrind, lib/sim), exact for what
					the simulator counts, a model for the rest */
};

/* The stable lowercase name of a status: "counted", "multiplexed", "not counted",
 * "not supported", "simulated". */
TACHO_API const char *tacho_count_status_name(enum tacho_count_status s);

/* One event's value. Element size: tacho_counters_read fills an array of them with the
 * caller's sizeof(struct tacho_count), writing only the fields it has. */
struct tacho_count {
	const char *name;            /* the spec's name (owned by the counters) */
	enum tacho_count_status status;
	uint64_t raw;                /* the sum of the kernel's counts over CPUs / threads
					(kept for who wants it when not counted, never a
					value) */
	double value;                /* raw for COUNTED, raw * enabled / running summed per
					CPU / thread for MULTIPLEXED, NAN when there is none */
	uint64_t enabled_ns, running_ns;
	double coverage;             /* running / enabled (1.0 when counted, 0 when not) */
	int err;                     /* NOT_SUPPORTED (and NOT_COUNTED for want of file
					descriptors): -errno of perf_event_open or
					-TACHO_E...; NOT_COUNTED of a silent source:
					-TACHO_ESILENT; else 0 */
	const char *why;             /* NOT_SUPPORTED / NOT_COUNTED: a sentence saying why
					and what to do (owned by the counters); else NULL.
					It names no command: see hint */
	enum tacho_hint hint;        /* where the reader of why should look next
					(TACHO_HINT_NONE: nowhere) */
};

struct tacho_counters;

/* Opens the n events of specs (each spec_sz bytes: sizeof(specs[0])) on the target.
 * Events that cannot be opened do not fail the call: they read back as NOT_SUPPORTED
 * with the error and its explanation (tacho_perf_strerror). A member that cannot join
 * its group is reported that way too, never dropped silently; the rest of the group
 * stays. Counters start disabled, except for TACHO_TARGET_CHILD, where the program's
 * exec enables them. Returns 0 and *out (even when every event failed: read them for
 * the reasons); -EINVAL for bad options, a spec_sz below the first version or an attr
 * whose size the library cannot read, -TACHO_EVERSION for options that set a field
 * past the struct this library knows (a program built against a newer tacho.h),
 * -ESRCH when the target does not exist, -ENOMEM.
 * The caller owns *out (tacho_counters_free). One object must not be used by two
 * threads at once; separate objects are independent. */
TACHO_API int tacho_counters_open(const struct tacho_counters_opts *opts,
				  const struct tacho_counter_spec *specs, size_t n,
				  size_t spec_sz, struct tacho_counters **out);

/* Closes every fd and frees. NULL-safe. */
TACHO_API void tacho_counters_free(struct tacho_counters *c);

/* Number of events (as given to open, failed ones included). */
TACHO_API size_t tacho_counters_count(const struct tacho_counters *c);

/* Number of events that opened on at least one CPU or thread. */
TACHO_API size_t tacho_counters_opened(const struct tacho_counters *c);

/* Enable, disable, zero every opened event (one ioctl per group and CPU/thread, with
 * PERF_IOC_FLAG_GROUP). Returns 0 or the first -errno. */
TACHO_API int tacho_counters_enable(struct tacho_counters *c);
TACHO_API int tacho_counters_disable(struct tacho_counters *c);
TACHO_API int tacho_counters_reset(struct tacho_counters *c);

/* Reads every event into out[0..n-1], elements of count_sz bytes (sizeof(out[0])), in
 * the order of the specs (n may be smaller than the count). A group is read with one
 * read(2) per CPU/thread. Returns 0, -EINVAL (a count_sz below the first version), or
 * -errno of read(2). May be called while counting (a snapshot) or after. */
TACHO_API int tacho_counters_read(struct tacho_counters *c, struct tacho_count *out, size_t n,
				  size_t count_sz);

/* The perf strerror: why perf_event_open(attr) failed with err (negative errno) for a
 * process target on this machine, as one clause, lowercase, without the event's name,
 * that names the cause (the paranoid level and what it allows, a missing capability,
 * no PMU in this virtual machine, an event this CPU lacks, breakpoint registers taken,
 * too many open files, ...) and ends with what to do in parentheses. It names no
 * command: *hint (hint may be NULL) says where to look next, for the program to put
 * in its own words. attr is read by its size field (tacho_counter_spec); NULL, or an
 * attr the library cannot read, is explained as an empty one. Returns buf.
 * Thread-safe. */
TACHO_API char *tacho_perf_strerror(int err, const struct perf_event_attr *attr, char *buf,
				    size_t size, enum tacho_hint *hint);

/* --- Sources that prove they count ---
 * A source (a kind of event) can open and yet never count: hardware breakpoints open in
 * some virtual machines whose hypervisor never delivers their debug exceptions, and
 * read 0 for any number of stores. perf shows that 0 as a count; tacho does not. Each
 * source that tacho calls exact proves itself once per boot, cheaply, by counting a
 * known number of known events in the calling process (1,000 stores to a watched
 * variable, 100 calls of a function, 64 fresh pages, 100 getppid(2) calls through a
 * tracepoint, a uprobe and a kprobe, and where a PMU exists a loop of a known number of
 * user instructions and branches). The engine asks before it shows a value: an event of
 * a source that does not count here reads TACHO_COUNT_NOT_COUNTED with err
 * -TACHO_ESILENT and the proof's sentence as why, in every reader (counting, stat,
 * regions, the live views), and recording and rules refuse it. Sources whose counts
 * merely drift (cycles, task-clock, context switches) are not proven and pass as
 * counted. docs/lib-counters.md, "Sources that prove they count", tells more. */
enum tacho_source {
	TACHO_SOURCE_NONE = 0,          /* no proof: not one tacho calls exact */
	TACHO_SOURCE_BREAKPOINT_DATA,   /* data breakpoints (mem:ADDR:w, :r, :rw) */
	TACHO_SOURCE_BREAKPOINT_EXEC,   /* execute breakpoints (mem:ADDR:x) */
	TACHO_SOURCE_PAGE_FAULTS,       /* the software page-faults and minor-faults */
	TACHO_SOURCE_TRACEPOINT,        /* tracepoints */
	TACHO_SOURCE_UPROBE,            /* uprobes (uprobe:, sdt:) */
	TACHO_SOURCE_KPROBE,            /* kprobes */
	TACHO_SOURCE_INSTRUCTIONS,      /* the PMU's retired instructions */
	TACHO_SOURCE_BRANCHES,          /* the PMU's retired branch instructions */
	TACHO_SOURCE_COUNT
};

/* What a source's proof found. */
enum tacho_verdict {
	TACHO_VERDICT_UNKNOWN = 0,   /* not proven: the proof could not run (why says why);
					its counts are shown, as perf shows them */
	TACHO_VERDICT_EXACT,         /* counted exactly what the proof made */
	TACHO_VERDICT_SILENT,        /* opened and counted nothing: never a number here */
	TACHO_VERDICT_WRONG,         /* opened and counted another number: never a number */
	TACHO_VERDICT_NOT_OPEN,      /* does not open here (err, why) */
};

/* One source's proof. Sized (docs/architecture.md, "An API that can grow"): sz first,
 * set by the caller; the library writes what sz covers. */
struct tacho_source_proof {
	size_t sz;                   /* sizeof(struct tacho_source_proof) */
	enum tacho_source source;
	enum tacho_verdict verdict;
	uint64_t expected;           /* the events the proof made */
	uint64_t counted;            /* what the source counted of them (0 unless opened) */
	int err;                     /* NOT_OPEN: -errno of the open; SILENT, WRONG:
					-TACHO_ESILENT; UNKNOWN: why the proof could not run;
					EXACT: 0 */
	char what[96];               /* the proof in words ("1,000 stores to a watched
					variable"), lowercase */
	char why[320];               /* every verdict but EXACT: one sentence, lowercase,
					no full stop, naming no command ("" for EXACT) */
	enum tacho_hint hint;        /* where the reader of why should look next */
	bool cached;                 /* the verdict came from this boot's cache */
	bool forced;                 /* made SILENT by the test switch TACHO_TEST_NOT_FIRING */
	double cost_us;              /* what the proof took (0 when cached or forced) */
};

/* The stable name of a source ("breakpoint-data", "breakpoint-exec", "page-faults",
 * "tracepoint", "uprobe", "kprobe", "instructions", "branches"; "none"), and of a
 * verdict ("exact", "silent", "wrong", "not open", "unknown"). Never NULL. */
TACHO_API const char *tacho_source_name(enum tacho_source s);
TACHO_API const char *tacho_verdict_name(enum tacho_verdict v);
/* The source named name (its stable name, as tacho_source_name gives it; the first len
 * bytes of name, or all of it for len 0), or TACHO_SOURCE_NONE. Thread-safe. */
TACHO_API enum tacho_source tacho_source_parse(const char *name, size_t len);
/* The source an event belongs to, from its attributes (read by their size field), or
 * TACHO_SOURCE_NONE. A dynamic PMU's name is looked up in sysfs (kprobe, uprobe).
 * Thread-safe. */
TACHO_API enum tacho_source tacho_source_of(const struct perf_event_attr *attr);

#define TACHO_PROVE_FRESH 0x1u   /* run the proof now: neither the process's verdict nor
				    this boot's cache */
/* Proves source s on this machine and fills *out. By default the verdict is the one
 * this process already has, else the one of this boot's cache (a file under the user's
 * cache folder, $XDG_CACHE_HOME/tacho or ~/.cache/tacho, keyed by the kernel's boot
 * id; never read or written under AT_SECURE), else the proof runs (tens of
 * microseconds for a breakpoint, tens of milliseconds for a tracepoint or a uprobe,
 * whose close waits for an RCU grace period) and its verdict is kept in both. Only
 * verdicts that counted something definite are kept in the cache (EXACT, SILENT,
 * WRONG); one whose reason passes (descriptors or debug registers taken, counters held
 * by others) is proven again at the next question. The test
 * switch: where the environment variable TACHO_TEST_NOT_FIRING lists s by name (comma
 * separated, or "all"), the verdict is SILENT without a proof; it is ignored under
 * AT_SECURE. Returns 0 (whatever the verdict), -EINVAL (s out of range, out NULL or its
 * sz below the first version). Thread-safe. */
TACHO_API int tacho_source_prove(enum tacho_source s, unsigned flags,
				 struct tacho_source_proof *out);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_COUNTERS_H */
