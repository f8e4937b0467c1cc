/* tacho/events.h - libtacho's public interface: the event grammar shared by every
 * command, and enumerating events.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_EVENTS_H
#define TACHO_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/counters.h"
#include "tacho/cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 3. Events (the event grammar shared by every command)
 * ================================================================================== */
/* One grammar names every event, in every command and in the library (TACHO_EVENTS for
 * regions, -e for stat and record); docs/events.md describes it whole. A spec is a
 * comma-separated list of events; commas inside pmu/.../ do not split, and {a,b} keeps
 * events in one group (optionally {a,b}:MODS, applied to each member). One event is:
 *   cycles, instructions, ...        generic hardware           [:MODS]
 *   L1-dcache-load-misses, LLC-loads generic cache              [:MODS]
 *   task-clock, page-faults, ...     kernel software            [:MODS]
 *   INST_RETIRED:ANY, pmu::EV:UMASK  CPU-specific, libpfm4      [:MODS]
 *   cpu/event=0x3c,umask=1,cmask=1/  a sysfs PMU's format terms [MODS or :MODS]
 *   msr/tsc/                         a sysfs PMU's named event
 *   r1a8                             raw config of the CPU's PMU [:MODS]
 *   sched:sched_switch, sched:*      tracepoint (wildcards: one event per match) [:MODS]
 *   mem:0x1000[/8][:rw]              hardware breakpoint        [:MODS]
 *   uprobe:PATH:SYMBOL[+OFF]         entries of a function of an ELF file (uprobe PMU)
 *   uprobe:PATH:0xOFFSET             an instruction at a file offset      [:MODS]
 *   uretprobe:PATH:SYMBOL            returns of the function              [:MODS]
 * MODS are letters: u (user only), k (kernel only), h (hypervisor only), combinable;
 * G (guest only), H (host only), I (exclude idle), p/pp/ppp (precise_ip 1-3), D (pinned).
 */

/* Where an event comes from. */
enum tacho_event_source {
	TACHO_EVENT_SRC_HARDWARE = 0,  /* generic hardware events of the kernel */
	TACHO_EVENT_SRC_CACHE,         /* generic cache events */
	TACHO_EVENT_SRC_SOFTWARE,      /* kernel software events */
	TACHO_EVENT_SRC_PFM,           /* CPU-specific, named by libpfm4 */
	TACHO_EVENT_SRC_RAW,           /* rNNNN */
	TACHO_EVENT_SRC_PMU,           /* a PMU of /sys/bus/event_source/devices */
	TACHO_EVENT_SRC_TRACEPOINT,    /* kernel tracepoints (tracefs) */
	TACHO_EVENT_SRC_BREAKPOINT,    /* hardware breakpoints, and uprobes (pmu "uprobe"):
					  exact, rare events that take no counter */
	TACHO_EVENT_SRC_COUNT
};

/* A short lowercase name for a source ("hardware", "cache", "software", "pfm", "raw",
 * "pmu", "tracepoint", "breakpoint"); "unknown" outside the enum. Thread-safe. */
TACHO_API const char *tacho_event_source_name(enum tacho_event_source src);

/* Where the grammar looks things up; every field may be NULL/0 for the default.
 * Tests point these at fake trees. Options (docs/architecture.md, "An API that can
 * grow"): sz first; fields the caller's sz does not cover take their defaults. */
struct tacho_event_opts {
	size_t sz;                  /* sizeof(struct tacho_event_opts), for growth */
	const char *sysfs_pmu_root; /* default "/sys/bus/event_source/devices" */
	const char *tracefs_root;   /* default: the first of /sys/kernel/tracing and
				       /sys/kernel/debug/tracing that has events/ (the
				       library never mounts tracefs) */
	unsigned flags;             /* TACHO_EVENT_* below; read when sz covers it */
};
/* Never open a file that a spec names (uprobe paths): a uprobe then needs an absolute
 * PATH and a numeric offset, taken as written. For fuzzers and untrusted specs. */
#define TACHO_EVENT_NO_FILES 0x1u

/* A parsed list of events. Opaque; the engine reads it through tacho_evlist_*. */
struct tacho_evlist;

/* Makes an empty list that resolves names with opts (NULL: the defaults; the strings
 * are copied). 0 and *out, or -ENOMEM / -EINVAL (opts->sz too small) /
 * -TACHO_EVERSION (opts set a field past the struct this library knows: a program built
 * against a newer tacho.h). Free it with tacho_evlist_free. */
TACHO_API int tacho_evlist_new(const struct tacho_event_opts *opts, struct tacho_evlist **out);

/* Parses spec and appends its events to list. All or nothing: on error the list is as
 * it was. Returns 0, or -TACHO_EPARSE (malformed), -TACHO_ENOEVENT (well formed but
 * unknown here), -TACHO_EOUTOFRANGE (a value that does not fit), -TACHO_EEMPTY, -ENOMEM,
 * with *diag (if non-NULL) holding the spec as source, the 1-based column of the bad
 * character and what was expected there (tacho_diag_caret shows it). Reads sysfs,
 * tracefs and libpfm4's tables. Not thread-safe on the same list; thread-safe on
 * different lists. */
TACHO_API int tacho_evlist_add(struct tacho_evlist *list, const char *spec,
			       struct tacho_diag *diag);

/* tacho_evlist_new(NULL) + tacho_evlist_add(spec): the common case. On error *out is
 * NULL. */
TACHO_API int tacho_evlist_parse(const char *spec, struct tacho_evlist **out,
				 struct tacho_diag *diag);

/* The same with explicit lookup places. */
TACHO_API int tacho_evlist_parse_opts(const char *spec, const struct tacho_event_opts *opts,
				      struct tacho_evlist **out, struct tacho_diag *diag);

TACHO_API void tacho_evlist_free(struct tacho_evlist *list);

/* Number of events in the list (0 for NULL). */
TACHO_API size_t tacho_evlist_count(const struct tacho_evlist *list);

/* Accessors of the i-th event; i must be below tacho_evlist_count (else NULL, -EINVAL,
 * TACHO_EVENT_SRC_COUNT, -1 or 1.0). Strings live as long as the list. */
TACHO_API const char *tacho_evlist_name(const struct tacho_evlist *list, size_t i);
/* Copies the complete perf_event_attr (size set; read_format, disabled, inherit and
 * the sampling fields left for the engine, except sample_period when the spec gave a
 * PMU event's period= term). 0 or -EINVAL. For a uprobe, the copy's uprobe_path
 * (config1) points to the resolved path, which the library keeps for the life of the
 * process, so the copy may be opened after the list is freed (under
 * TACHO_EVENT_NO_FILES it points into the list instead: open before freeing). */
TACHO_API int tacho_evlist_attr(const struct tacho_evlist *list, size_t i,
				struct perf_event_attr *out);
TACHO_API enum tacho_event_source tacho_evlist_source(const struct tacho_evlist *list, size_t i);
/* The PMU's name ("cpu", "software", "msr", "tracepoint", a libpfm4 PMU name). */
TACHO_API const char *tacho_evlist_pmu(const struct tacho_evlist *list, size_t i);
/* The unit of the scaled value ("" for plain counts, "msec" for the clocks). */
TACHO_API const char *tacho_evlist_unit(const struct tacho_evlist *list, size_t i);

/* Tries to open event i counting on the calling thread (any CPU), then closes it:
 * whether this process may count it here and now. Returns 0 or the -errno of
 * perf_event_open (-ENOENT, -EOPNOTSUPP, -EACCES, -EINVAL, -ENOSPC, ...), or
 * -TACHO_ESILENT when it opens but its source is proven not to count on this machine
 * (tacho_source_prove says why). The open is not cached; the source's proof is, as
 * tacho_source_prove keeps it. Thread-safe. */
TACHO_API int tacho_evlist_probe(const struct tacho_evlist *list, size_t i);

/* Opens the events of a parsed list as tacho_counters_open does (tacho/counters.h),
 * named as the list names them. groups: groups[i] is event i's group number (as in
 * tacho_counter_spec.group), e.g. from the scheduler; NULL keeps the {groups} the user
 * wrote in the list and opens every other event alone. Same returns and ownership as
 * tacho_counters_open. */
TACHO_API int tacho_counters_open_evlist(const struct tacho_counters_opts *opts,
					 const struct tacho_evlist *list, const int *groups,
					 struct tacho_counters **out);

/* Formats the diagnostic of a parse as two lines for a terminal: the source text,
 * then a caret under the bad column ("cycles:q\n       ^\n"); tabs in the source are
 * kept in the caret line so it lines up. Returns the length it wanted, as snprintf;
 * 0 when d has no column. Thread-safe. */
TACHO_API int tacho_diag_caret(const struct tacho_diag *d, char *buf, size_t size);

/* --- Derived metrics ---
 * Values computed from counted events (IPC from instructions and cycles, miss ratios,
 * rates), and the groups of events that give them (`tacho stat -M`): a table over
 * events, as pure as the grammar; a stat session computes them for its events
 * (tacho_stat_metric, tacho/stat.h). */

/* One counted event as the metrics see it. value is the count itself, unscaled
 * (task-clock and cpu-clock in nanoseconds). Element size: an array of inputs goes with
 * sizeof(in[0]) as the caller knows it; fields its version lacks read as 0. */
struct tacho_metric_input {
	const char *name;
	const struct perf_event_attr *attr; /* type, config and the exclude_* bits are used;
					       read by its size field (tacho_counter_spec) */
	double value;
	bool has_value;                /* false: not counted; the event is then ignored */
};

/* A derived value. Element size in tacho_metrics_compute's array (laid out at the
 * caller's sizeof(struct tacho_metric)); handed out by tacho_stat_metric (read through
 * the pointer: fields are only ever added at the end). */
struct tacho_metric {
	char name[80];     /* "IPC", "branch-miss ratio", "GHz", "CPUs utilized",
			      "page-faults rate", "avg duration of NAME": full_name's first
			      79 bytes (an event's long name makes a longer one) */
	char unit[24];     /* "insn per cycle", "%", "GHz", "/sec", "cycles", ... */
	char expr[200];    /* how it was computed: "instructions / cycles" (full_expr's
			      first 199 bytes) */
	double value;      /* always finite */
	int inputs[2];     /* indices of the inputs; -1 for the wall time */
	/* since 0.1.1 of the struct (larger than the first, which ends at inputs): */
	const char *full_name; /* the whole name, never cut; it lives as long as the
				  metric (in the array's own allocation, or the session's) */
	const char *full_expr; /* the whole expression, likewise */
};

/* Computes every metric whose inputs all have values and the same privilege rings:
 * IPC, CPI, branch-, cache-, L1d-, LLC- and dTLB-miss ratios, stalled-cycle shares,
 * GHz (cycles per task-clock nanosecond), CPUs utilized (task-clock / wall_ns), the
 * rate per second of every event that is not a clock (over task-clock, or wall_ns
 * when task-clock was not counted), and the average duration in cycles of a raw x86
 * event counted both with cmask=1 (its cycles) and with cmask=1,edge or plain (its
 * occurrences). A zero denominator gives no metric. wall_ns <= 0: unknown. in holds n
 * inputs of in_sz bytes each (sizeof(in[0])). Returns 0 and *out: *nout metrics of
 * metric_sz bytes each (sizeof(**out): the array is laid out at the caller's stride),
 * malloc'd, the caller free()s it, which frees the strings full_name and full_expr
 * point to with it; NULL when *nout is 0. -EINVAL for bad arguments, an
 * element size below the first version or an input with a value whose attr is NULL or
 * of a size the library cannot read; -ENOMEM. Pure and thread-safe. */
TACHO_API int tacho_metrics_compute(const struct tacho_metric_input *in, size_t n,
				    size_t in_sz, double wall_ns, struct tacho_metric **out,
				    size_t *nout, size_t metric_sz);

/* A group of the metrics above, as `tacho stat -M` names them (perf's -M): the
 * events to count so that tacho_metrics_compute derives its metrics. */
struct tacho_metric_group {
	const char *name;      /* "ipc", "branches", "cache", "l1d", "llc", "tlb", "stalls",
				  "frequency", "utilization" */
	const char *metrics;   /* the metrics it gives, by their names, ", "-separated:
				  "IPC, CPI" */
	const char *events;    /* the event list that counts their inputs (for
				  tacho_evlist_parse): "instructions,cycles" */
	const char *counters;  /* those of its events that the CPU's counters count
				  (hardware and hardware-cache events), ","-separated:
				  without a hardware PMU there is no metric; NULL when
				  none is (task-clock is a timer) */
};
/* The group named name: a group's name or one of its metrics' ("IPC", "GHz"), in any
 * case. Returns the group (static storage) or NULL when the table has no such name.
 * Pure and thread-safe. */
TACHO_API const struct tacho_metric_group *tacho_metric_group_find(const char *name);
/* The i-th group of the table, NULL past the last: for listing them. */
TACHO_API const struct tacho_metric_group *tacho_metric_group_at(size_t i);

/* --- Enumerating the events this machine knows (tacho list) --- */

/* One event of a walk. Handed out to the visitor (read through the pointer during the
 * call; fields are only ever added at the end). */
struct tacho_event_info {
	enum tacho_event_source source;
	const char *name;     /* how to write it in a spec (for the breakpoint source and
				 PMUs with formats: the syntax, e.g. "mem:ADDR[/LEN][:rwx]") */
	const char *aliases;  /* other accepted spellings, comma-separated, or "" */
	const char *desc;     /* one line, "" when none is known */
	const char *pmu;      /* the PMU (libpfm4's name, the sysfs PMU, the tracepoint's
				 subsystem, "cpu" for generic ones) */
	const char *probe;    /* a spec tacho_evlist_parse accepts and that opens this
				 event, for tacho_evlist_probe; NULL when there is none */
};

/* Called once per event; a non-zero return stops the walk and is returned by
 * tacho_events_foreach. The strings are valid only during the call. */
typedef int tacho_event_visit_fn(void *arg, const struct tacho_event_info *ev);

/* Walks the events known here from the sources in mask (bits 1u << source; 0: all),
 * source by source in enum order: the generic tables; libpfm4's events and umasks of
 * its active CPU PMUs (not its generic "perf" tables); the sysfs PMUs' named events
 * and format syntax (not cpu's raw configuration); tracepoints from tracefs (sorted);
 * the breakpoint and uprobe syntax (a uprobe row's probe, when the uprobe PMU is there,
 * is a function of libtacho as this process maps it). Returns 0, the visitor's non-zero
 * value, -ENOMEM, or for opts what tacho_evlist_new says of them (-EINVAL,
 * -TACHO_EVERSION). Missing sources (no tracefs) are skipped silently:
 * tacho_event_opts says where it looked.
 * Thread-safe as long as the visitor is. */
TACHO_API int tacho_events_foreach(const struct tacho_event_opts *opts, unsigned mask,
				   tacho_event_visit_fn *fn, void *arg);

/* The default sets, as one spec for tacho_evlist_parse. flags: TACHO_EVENTS_HARDWARE
 * when the machine has a PMU that counts (tacho_pmu_counters: known and not none),
 * TACHO_EVENTS_LIVE for the live set. tacho stat's (perf stat's): task-clock,
 * context-switches, cpu-migrations, page-faults, then cycles, instructions, branches,
 * branch-misses with the hardware, else minor-faults and major-faults. The live set
 * (tacho top, serve): the same four software events, then cycles and instructions
 * with the hardware. A static string; thread-safe. */
#define TACHO_EVENTS_HARDWARE 0x1u
#define TACHO_EVENTS_LIVE 0x2u
TACHO_API const char *tacho_events_default(unsigned flags);

/* Adds every event of this machine that tacho_events_foreach lists with a probe spec
 * (tacho stat --all): the software and PMU sources, with hardware (the machine has a
 * PMU that counts) the generic hardware and cache events and libpfm4's too; not the
 * placeholders "dummy" and "bpf-output", which count nothing by themselves. An event
 * whose spec does not parse is left out and counted in *skipped (may be NULL). 0;
 * -TACHO_EEMPTY (nothing added); -EINVAL; -ENOMEM. Not thread-safe on the same
 * list. */
TACHO_API int tacho_evlist_add_all(struct tacho_evlist *list, bool hardware, size_t *skipped);

/* --- The event listing (what `tacho list` shows; docs/schemas.md) --- */

/* Which events a listing holds. Every field may be 0/NULL. Options: sz first. */
struct tacho_event_listing_opts {
	size_t sz;                  /* sizeof(struct tacho_event_listing_opts) */
	const struct tacho_event_opts *events;  /* where to look (NULL: the defaults) */
	unsigned sources;           /* bits 1u << source; 0: every source */
	const char *pattern;        /* events whose name or an alias matches: a glob when it
				       has * ? or [, else a case-insensitive substring;
				       NULL or "": every event */
	bool no_probe;              /* do not try to open the events */
};

/* The events of a walk (tacho_events_foreach) that match, in its order, each tried
 * unless no_probe: opened counting on the calling thread, then closed, with the
 * engine's explanation when it does not open (once per source and error), and, after
 * EACCES, whether its ':u' form opens. Tracepoints are each tried only when at most
 * ten match; otherwise one (sched:sched_switch where there is one) is tried for all,
 * since closing a tracepoint costs the kernel a grace period. Opaque. */
struct tacho_event_listing;

/* Makes the listing. 0 and *out (free it with tacho_event_listing_free), -EINVAL (a
 * source bit out of range, an sz too small, here or in opts->events), -TACHO_EVERSION
 * (opts or opts->events set a field past the struct this library knows: a program
 * built against a newer tacho.h), -ENOMEM. Takes some milliseconds per
 * probed event. Thread-safe. */
TACHO_API int tacho_event_listing_new(const struct tacho_event_listing_opts *opts,
				      struct tacho_event_listing **out);
TACHO_API void tacho_event_listing_free(struct tacho_event_listing *l);
/* How many events it holds (0 for NULL). */
TACHO_API size_t tacho_event_listing_count(const struct tacho_event_listing *l);

/* Writes the listing to f:
 *  - TACHO_FORMAT_TABLE: a heading per source, then per event its name (aliases),
 *    whether it opens here ("yes", "only :u", "no (ERRNAME)", empty when not tried) and
 *    the first sentence of its description; tracepoints one line per subsystem when
 *    the listing has no pattern and not the tracepoint source alone; under each group,
 *    why its events do not open, once per reason. When tracepoints were asked for and
 *    no tracefs can be read, a note says so (words TACHO_HINT_MACHINE through
 *    opts->hint_words);
 *  - TACHO_FORMAT_CSV: a header row (name, aliases, source, pmu, opens, opens_with_u,
 *    error, why, description) and a row per event, empty where nothing was tried;
 *  - TACHO_FORMAT_JSON (or on one line): the document of docs/schemas.md.
 * 0, -EINVAL, -ENOMEM, -EIO. Thread-safe on a listing nobody frees meanwhile. */
TACHO_API int tacho_event_listing_write(const struct tacho_event_listing *l, FILE *f,
					enum tacho_format fmt,
					const struct tacho_write_opts *opts);

/* --- The counters a task may use --- */

/* This machine's counters (struct tacho_pmu_counters, tacho/cpu.h): the few CPUID leaves that decide them, read on the calling
 * CPU (not a full dump: cheap enough for every `tacho stat`), decoded, then the NMI
 * watchdog from /proc/sys/kernel/nmi_watchdog; where CPUID leaves them unknown,
 * libpfm4's tables. Off x86, *out says "unknown". 0,
 * -EINVAL (NULL, or an sz below the first version), -ENOMEM. Thread-safe. */
TACHO_API int tacho_pmu_counters_detect(struct tacho_pmu_counters *out);

/* --- SDT probes (USDT: systemtap's sys/sdt.h) ---
 * A program built with sys/sdt.h carries a .note.stapsdt note per probe site: the
 * site's address, its provider and name, how its arguments are found, and the address
 * of its semaphore (a counter the program may test before doing the work of the probe's
 * arguments). The event sdt:PATH:PROVIDER:NAME places a uprobe on the site, with the
 * semaphore's file offset as its ref_ctr_offset so that the kernel raises the semaphore
 * while the probe is in place. */

/* One probe site. Handed out by tacho_sdt_list_probe (read through the pointer: fields
 * are only ever added at the end). */
struct tacho_sdt_probe {
	const char *provider;
	const char *name;
	const char *args;            /* the note's argument descriptions ("-8@%rdx"), or "" */
	uint64_t address;            /* the site's address (after .stapsdt.base's move) */
	uint64_t offset;             /* its file offset, where a uprobe goes; UINT64_MAX:
					in no executable segment */
	uint64_t semaphore;          /* the semaphore's address; 0: the site has none */
	uint64_t semaphore_offset;   /* its file offset (a uprobe's ref_ctr_offset);
					UINT64_MAX: outside the file's data */
};

/* The probe sites of an ELF file, in the notes' order. Opaque. */
struct tacho_sdt_list;

/* Reads the .note.stapsdt notes of path with libelf. 0 and *out (an empty list for a
 * file without notes; free it with tacho_sdt_list_free); -errno and *diag when the file
 * cannot be opened; -TACHO_EPARSE when it is not a 64-bit ELF file; -EINVAL; -ENOMEM.
 * Thread-safe. */
TACHO_API int tacho_sdt_list_new(const char *path, struct tacho_sdt_list **out,
				 struct tacho_diag *diag);
TACHO_API void tacho_sdt_list_free(struct tacho_sdt_list *l);
/* How many sites (0 for NULL), and site i (NULL out of range; lives as long as l). */
TACHO_API size_t tacho_sdt_list_count(const struct tacho_sdt_list *l);
TACHO_API const struct tacho_sdt_probe *tacho_sdt_list_probe(const struct tacho_sdt_list *l,
							     size_t i);
/* Writes the sites to f: a table (PROVIDER:NAME, file offset, semaphore offset, args),
 * CSV (provider, name, address, offset, semaphore, semaphore_offset, args: hex, empty
 * where none) or the JSON document of docs/schemas.md ("sdt"). 0, -EINVAL, -ENOMEM,
 * -EIO. Thread-safe on a list nobody frees meanwhile. */
TACHO_API int tacho_sdt_list_write(const struct tacho_sdt_list *l, FILE *f,
				   enum tacho_format fmt, const struct tacho_write_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_EVENTS_H */
