/* events.h - internal view of a parsed event: what the event grammar produces and the
 * engine, regions and sampling consume. The public side is tacho/events.h. */
#ifndef TACHO_EVENTS_EVENTS_H
#define TACHO_EVENTS_EVENTS_H

#include <linux/perf_event.h>
#include <stdint.h>

#include "util/util.h"
#include "tacho/events.h"

/* Where an event comes from; decides how `tacho list` groups it, how the scheduler
 * places it (hardware events compete for counters, the rest do not) and how a
 * failure to open it is explained. The values are the public enum's. */
enum tc_event_source {
	TC_EV_HARDWARE = TACHO_EVENT_SRC_HARDWARE,     /* generic hardware (cycles, ...) */
	TC_EV_CACHE = TACHO_EVENT_SRC_CACHE,           /* generic cache (L1-dcache-load-misses) */
	TC_EV_SOFTWARE = TACHO_EVENT_SRC_SOFTWARE,     /* kernel software (task-clock, ...) */
	TC_EV_PFM = TACHO_EVENT_SRC_PFM,               /* CPU-specific, through libpfm4 */
	TC_EV_RAW = TACHO_EVENT_SRC_RAW,               /* rNNNN */
	TC_EV_PMU = TACHO_EVENT_SRC_PMU,               /* pmu/term=value,.../ or pmu/alias/ */
	TC_EV_TRACEPOINT = TACHO_EVENT_SRC_TRACEPOINT, /* subsystem:name */
	TC_EV_BREAKPOINT = TACHO_EVENT_SRC_BREAKPOINT, /* mem:ADDR[/LEN][:rwx],
							  uprobe:PATH:WHERE (pmu "uprobe") and
							  kprobe:SYMBOL[+OFF] (pmu "kprobe") */
};

struct tc_event {
	char *name;                  /* as the user wrote it, modifiers included (or name=) */
	enum tc_event_source source;
	struct perf_event_attr attr; /* complete but for the engine's own fields
					(read_format, disabled, inherit, sample_*) */
	char *pmu;                   /* the PMU's name ("cpu", "software", "msr", the
					libpfm4 PMU "amd64_fam19h_zen4", ...) */
	const char *unit;            /* "" or a unit ("msec" for the clocks, "Joules", ...) */
	double scale;                /* multiply counts by this for the unit (1.0 usually) */
	bool uses_counter;           /* needs a general-purpose hardware counter */
	bool fixed_counter;          /* may live on a fixed counter instead (cycles, ...) */
	int group_leader;            /* index of the leader of the user's {group} it is in,
					or -1 when the user did not group it */
	unsigned column;             /* 1-based column of the event in the parsed spec */
	char *unit_buf;              /* owns unit when it came from a file */
	char *probe_path;            /* uprobes under TACHO_EVENT_NO_FILES: the path
					attr.uprobe_path (config1) points to, owned here
					(otherwise it points to tc_uprobe_intern's copy) */
};

/* The engine's view of a parsed list: the i-th event, or NULL past the end. The
 * pointer lives as long as the list. */
const struct tc_event *tc_evlist_get(const struct tacho_evlist *list, size_t i);
/* The factor from event i's raw count to its unit (tacho_evlist_unit), 1.0 past the
 * end. The engine and the samplers scale with it; a program reads scaled values. */
double tc_evlist_scale(const struct tacho_evlist *list, size_t i);
/* The index of the leader of the {group} the user put event i in, or -1 when the user
 * did not group it (or past the end). The engine and the scheduler open groups by it. */
int tc_evlist_group_leader(const struct tacho_evlist *list, size_t i);
/* tacho_evlist_probe for event i, a uprobe, without registering it: opened with a path
 * no file has, the kernel checks the PMU and the caller's privilege (perfmon_capable)
 * and then refuses the path (ENOENT: 0 here) before any uprobe exists, where a real
 * probe registers one and waits for SRCU grace periods to remove it (13-200 ms open,
 * 61 ms close here). 0 or what the kernel answered (-EACCES, -EPERM, ...). */
int tc_evlist_probe_uprobe_dry(const struct tacho_evlist *list, size_t i);
/* tacho_evlist_probe for event i, a tracepoint, without registering it: opened asking
 * for a branch stack, which the tracepoint PMU refuses (EOPNOTSUPP: 0 here) first thing
 * in its event_init, after every check perf_event_open makes before any PMU
 * (perf_event_paranoid, capabilities, the security module's hook) and before the
 * tracepoint is armed. A real probe arms it, and its close waits for RCU grace periods
 * to disarm it (some 40 ms here). What it leaves unasked is the tracepoint's own part
 * (its id, which tracefs gave, and the kernel's buffers for it). 0 or what the kernel
 * answered (-EACCES, -EPERM, ...). */
int tc_evlist_probe_tracepoint_dry(const struct tacho_evlist *list, size_t i);

/* --- tables.c: the generic events, as data --- */
struct tc_generic_event {
	const char *name;         /* canonical name */
	const char *alias;        /* another accepted name, or NULL */
	uint32_t type;            /* PERF_TYPE_HARDWARE / PERF_TYPE_SOFTWARE */
	uint64_t config;
	const char *unit;         /* "" or the unit after scaling */
	double scale;
	bool fixed;               /* Intel has a fixed counter for it */
	const char *desc;
};
extern const struct tc_generic_event tc_hw_events[];
extern const size_t tc_hw_events_count;
extern const struct tc_generic_event tc_sw_events[];
extern const size_t tc_sw_events_count;

struct tc_cache_name {
	const char *name;         /* spelling accepted in an event name */
	unsigned id;              /* PERF_COUNT_HW_CACHE_* (cache) or _OP_* (operation) */
};
struct tc_cache_kind {
	const char *name;         /* canonical ("L1-dcache") */
	unsigned id;              /* PERF_COUNT_HW_CACHE_L1D, ... */
	unsigned ops;             /* bit (1 << PERF_COUNT_HW_CACHE_OP_*) for each operation
				     the kernel's generic cache table can have for it */
	const char *desc;
};
extern const struct tc_cache_kind tc_cache_kinds[];
extern const size_t tc_cache_kinds_count;
extern const struct tc_cache_name tc_cache_aliases[];   /* spellings of the caches */
extern const size_t tc_cache_aliases_count;
extern const struct tc_cache_name tc_cache_ops[];       /* spellings of the operations */
extern const size_t tc_cache_ops_count;
/* The canonical word of an operation ("load", "store", "prefetch"). */
const char *tc_cache_op_word(unsigned op);

/* Finds a generic hardware or software event by name or alias (case-insensitive),
 * within the first len bytes of name. NULL if none. */
const struct tc_generic_event *tc_generic_find(const char *name, size_t len);

/* --- pfm.c: libpfm4 (its own header: libpfm4 defines its own perf_event_attr) --- */
#include "events/pfm.h"

/* --- sysfs.c: PMUs under /sys/bus/event_source/devices --- */
struct tc_events_ctx {
	const char *sysfs_root;    /* the devices folder */
	const char *tracefs_root;  /* NULL: search the usual places */
	bool no_files;             /* TACHO_EVENT_NO_FILES: never open a file a spec names */
};
#define TC_SYSFS_PMU_ROOT "/sys/bus/event_source/devices"
/* The first version of struct tacho_event_opts (TC_OPTS_VALID) ends at tracefs_root. */
#define TC_OPTS_V1_tacho_event_opts tc_offsetofend(struct tacho_event_opts, tracefs_root)

/* True if s (len bytes) is a safe single path component: [A-Za-z0-9_.-]+, not "." or
 * "..". Names that reach the file system go through this first. */
bool tc_events_safe_component(const char *s, size_t len);

/* Parses "pmu/terms/" (text is the whole term, base its 0-based offset in the source
 * for diagnostics). Fills ev (attr, pmu, unit, scale, name when name= was given) and
 * returns the number of bytes consumed (up to and including the closing '/'), or a
 * negative error with *diag set. */
int tc_pmu_parse(const struct tc_events_ctx *ctx, const char *src, size_t start, size_t end,
		 struct tc_event *ev, struct tacho_diag *diag);

/* --- tracepoint.c --- */
/* The tracefs mount point to use (ctx's, else the first of /sys/kernel/tracing and
 * /sys/kernel/debug/tracing that has events/), or NULL when none has. */
const char *tc_tracefs_root(const struct tc_events_ctx *ctx);
/* Why there is no tracefs to use, for an error message: where tacho looked, or that
 * it is there but this user cannot read it, and what to do. */
void tc_tracefs_why(const struct tc_events_ctx *ctx, char *buf, size_t size);
/* Looks up the id of sys:name. 0, -ENOENT (no such tracepoint), -ENODEV (no tracefs),
 * or another -errno. */
int tc_tracepoint_id(const struct tc_events_ctx *ctx, const char *sys, size_t syslen,
		     const char *name, size_t namelen, uint64_t *id);

/* --- uprobe.c --- */
/* suggest.c: the name or alias tacho list knows nearest to word (len bytes), into buf
 * (tc_nearest's rule). 0, -ENOENT when none is near, -ENOMEM. */
int tc_events_suggest(const struct tc_events_ctx *ctx, const char *word, size_t len,
		      char *buf, size_t size);

/* The uprobe PMU under ctx's sysfs root: its type and the bit of config that makes a
 * probe a return probe. 0, -ENODEV (no such PMU), -EPROTO (a format tacho cannot
 * read) or another -errno. */
int tc_uprobe_pmu(const struct tc_events_ctx *ctx, uint32_t *type, unsigned *retbit);
/* The same for any probe PMU of that shape (name "uprobe" or "kprobe"). */
int tc_probe_pmu(const struct tc_events_ctx *ctx, const char *name, uint32_t *type,
		 unsigned *retbit);
/* A copy of path that lives as long as the process: one per distinct path, shared.
 * NULL when out of memory. Thread-safe. */
const char *tc_uprobe_intern(const char *path);
/* The file offset of the entry of function name (len bytes) plus add in the ELF file
 * path, from .symtab, else .dynsym: st_value - p_vaddr + p_offset of the executable
 * PT_LOAD holding it. 0 and *off, or a negative error with why (a sentence) set:
 * the file cannot be opened (-errno), is not a regular ELF file (-TACHO_EPARSE), has
 * no such function or two of that name (-TACHO_ENOEVENT, with a close name when one
 * exists), add is past the function's end (-TACHO_EOUTOFRANGE). */
int tc_uprobe_symbol_offset(const char *path, const char *name, size_t len, uint64_t add,
			    uint64_t *off, char *why, size_t whysz);
/* Checks that file offset off lies in an executable PT_LOAD of the ELF file path.
 * 0, or a negative error with why set as above (-TACHO_EOUTOFRANGE when outside). */
int tc_uprobe_check_offset(const char *path, uint64_t off, char *why, size_t whysz);

/* --- sdt.c --- */
struct tacho_sdt_list;
/* The SDT notes of an ELF file given in memory (a fuzz target's input), as
 * tacho_sdt_list_new reads a file's. 0 and *out, -TACHO_EPARSE, -ENOMEM. */
int tc_sdt_list_mem(const void *buf, size_t len, struct tacho_sdt_list **out);

/* --- token.c (the grammar: parse.h) --- */
/* Applies the modifier letters s[0..len) to attr. On a bad letter returns its offset
 * (>= 0) and sets *why to a printf format taking the letter (%c); -1 when all were
 * good. */
int tc_apply_modifiers(struct perf_event_attr *attr, const char *s, size_t len,
		       const char **why);

#endif
