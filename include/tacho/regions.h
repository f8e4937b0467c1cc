/* tacho/regions.h - libtacho's public interface: named regions of a program, timed and
 * counted.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_REGIONS_H
#define TACHO_REGIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/counters.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 6. Regions and the microbenchmark harness
 * ================================================================================== */
/* --- Regions ---
 * Named sections of a program, timed with the TSC and counted with any events of the
 * -e grammar, from any thread, nestable, with the cost of measuring subtracted (the
 * seeds' StartProfile/EndProfile and PmonStat sections):
 *
 *	tacho_region_begin("parse");
 *	parse(buf);
 *	tacho_region_end("parse");
 *
 *	$ TACHO_EVENTS=page-faults,task-clock TACHO_OUTPUT=out.json ./prog
 *
 * Names: tacho_region_* is one region (begin, end, TACHO_REGION_SCOPE, the figures of
 * one region); tacho_regions_* is the process-wide state (init, write, reset);
 * tacho_regions_report_* is a snapshot of every region (new, find or enumerate, write,
 * free).
 *
 * The events come from tacho_regions_init, else from the environment variable
 * TACHO_EVENTS; with none, regions measure time only. Each thread opens its own
 * counters on its first region (one perf group, read with RDPMC through the mmap pages
 * where the kernel allows it, else with one read(2)); no lock is taken on the hot path.
 * At set-up tacho measures what an empty region costs, inside the region and, for
 * nesting, as seen by the enclosing one (the median of 301 pairs, per event), and
 * subtracts it from every call: an empty region reads 0 events and about 0 ns, and a
 * region that stores N times to a variable watched by a breakpoint (mem:ADDR:w) reads
 * exactly N. Totals that the subtraction takes below zero are clamped at 0 and the
 * report says so.
 *
 * At exit (or at tacho_regions_write) a report merged over threads goes to the file
 * named by TACHO_OUTPUT (.json, .csv, anything else a table; "none": no report at all)
 * or to stderr. JSON:
 *   {"version": 1, "regions": [{"name": N, "calls": C, "time_ns": T,
 *                               "events": {EVENT: TOTAL, ...}}, ...],
 *    "detail": [...per-call statistics, exclusive figures, ticks, threads...],
 *    "measurement": {...how it was measured, what was subtracted...},
 *    "notes": [...]}
 * EVENT is spelled as in TACHO_EVENTS; TOTAL is null for an event that could not be
 * counted (the notes say why). A bad TACHO_EVENTS never stops the program: regions
 * fall back to time only, the message goes to the log callback and into the report's
 * notes, and, when the report goes to a file, once to stderr as well at report time
 * (the report at exit is the one place where regions print, by design). After fork()
 * the child starts without the parent's figures or counters and writes no report at
 * exit (it may call tacho_regions_write). */

/* Explicit set-up, instead of the environment. Every field may be 0/NULL. Options
 * (docs/architecture.md, "An API that can grow"): sz first. */
struct tacho_regions_opts {
	size_t sz;               /* sizeof(struct tacho_regions_opts) */
	const char *events;      /* the -e grammar; NULL: $TACHO_EVENTS; "": time only */
	const char *output;      /* report file; NULL: $TACHO_OUTPUT; "-": stderr;
				    "none": no report */
	bool no_report_at_exit;  /* do not write the report at exit */
};

/* Sets regions up now (otherwise the first tacho_region_begin does, from the
 * environment). Returns 0; -EBUSY when regions are already set up; -EINVAL for an
 * opts->sz of 0; -TACHO_EVERSION with *diag for opts that set a field past the struct
 * this library knows (a program built against a newer tacho.h); -TACHO_EPARSE /
 * -TACHO_ENOEVENT ... with *diag for a bad spec (regions then stay unconfigured and
 * the next call may try again). Call it before threads use regions. */
TACHO_API int tacho_regions_init(const struct tacho_regions_opts *opts,
				 struct tacho_diag *diag);

/* Enters / leaves the region called name on the calling thread. Regions nest: end
 * must name the innermost open region of this thread. Names are compared as strings
 * (the pointer is remembered to make the common case fast). Returns 0; -EINVAL for
 * NULL or an end that does not match the innermost open region (nothing is recorded,
 * the region stays open); -TACHO_EOUTOFRANGE beyond 64 levels; -ENOMEM; -errno of the
 * counter read. Thread-safe; lock-free after the thread's first call. */
TACHO_API int tacho_region_begin(const char *name);
TACHO_API int tacho_region_end(const char *name);

/* The scoped form for C (GCC and Clang): the region ends when the enclosing block
 * does, however it is left.
 *	{ TACHO_REGION_SCOPE("lookup"); ... return x; }   // ended on return */
static inline void tacho_region_scope_end_(const char **name)
{
	if (*name)
		tacho_region_end(*name);
}
#define TACHO_REGION_CAT2_(a, b) a##b
#define TACHO_REGION_CAT_(a, b) TACHO_REGION_CAT2_(a, b)
#define TACHO_REGION_SCOPE(name)                                                         \
	const char *TACHO_REGION_CAT_(tacho_region_scope_, __LINE__)                      \
		__attribute__((cleanup(tacho_region_scope_end_), unused)) =               \
			(tacho_region_begin(name) == 0 ? (name) : (const char *)0)

/* One measured quantity of a region (TSC ticks or one event), merged over threads,
 * after the subtraction of the cost of measuring. Handed out: a region's figures point
 * to them (fields are only ever added at the end). */
struct tacho_region_value {
	int64_t total;       /* inclusive total, clamped at 0 */
	int64_t exclusive;   /* total without the nested regions, clamped at 0 */
	double mean, stddev; /* per call, inclusive (stddev: sample, 0 for one call) */
	double min, max;     /* per call, inclusive (may be below 0 from noise) */
	bool clamped;        /* a total went below zero and was clamped */
};

/* The figures of one region. Handed out by tacho_regions_report_find and
 * tacho_regions_report_region (read through the pointer; every struct in it is reached
 * through a pointer too, so that each may grow at its end). */
struct tacho_region_stat {
	const char *name;
	uint64_t calls;
	unsigned threads;                  /* threads that entered it */
	const struct tacho_region_value *ticks;   /* TSC ticks */
	double time_ns, exclusive_ns;      /* ticks->total / ->exclusive in nanoseconds */
	const struct tacho_region_value *const *events; /* [tacho_regions_report_nevents] */
};

/* A snapshot of every region of every thread, merged by name (sorted by name). */
struct tacho_regions_report;

/* Takes the snapshot. Figures of a thread that is inside a region at this moment may
 * be torn by one call; take it when threads are quiet (at exit they are). 0 and *out
 * (tacho_regions_report_free), -ENOMEM. Thread-safe. */
TACHO_API int tacho_regions_report_new(struct tacho_regions_report **out);
TACHO_API void tacho_regions_report_free(struct tacho_regions_report *r);
/* The region called name, or NULL. Valid while r lives. */
TACHO_API const struct tacho_region_stat *
tacho_regions_report_find(const struct tacho_regions_report *r, const char *name);
/* Enumerating the regions: how many the report holds (0 for NULL), and the i-th of
 * them in the report's order, sorted by name (the order of the writers' rows), or NULL
 * when i >= tacho_regions_report_nregions(r) or r is NULL. Each pointer is valid while r
 * lives and is the one tacho_regions_report_find returns for its name. Thread-safe on
 * a report nobody frees meanwhile:
 *     for (size_t i = 0; i < tacho_regions_report_nregions(r); i++)
 *             use(tacho_regions_report_region(r, i)); */
TACHO_API size_t tacho_regions_report_nregions(const struct tacho_regions_report *r);
TACHO_API const struct tacho_region_stat *
tacho_regions_report_region(const struct tacho_regions_report *r, size_t i);
/* The events (as spelled in the spec) and whether they were counted:
 * TACHO_COUNT_COUNTED, _MULTIPLEXED (values are raw deltas while on the counter),
 * _NOT_SUPPORTED (why says why; values are 0 and the writers print null),
 * _NOT_COUNTED (no thread entered a region). */
TACHO_API size_t tacho_regions_report_nevents(const struct tacho_regions_report *r);
TACHO_API const char *tacho_regions_report_event(const struct tacho_regions_report *r,
						  size_t i);
TACHO_API enum tacho_count_status
tacho_regions_report_status(const struct tacho_regions_report *r, size_t i, const char **why);
/* Messages for the reader, one per line ("" when none): a bad TACHO_EVENTS, events
 * that could not be counted, clamped totals, unbalanced ends. */
TACHO_API const char *tacho_regions_report_notes(const struct tacho_regions_report *r);

/* Writes the report to f: a table (TACHO_FORMAT_TABLE), CSV in long form (one row
 * per region and quantity: region, quantity, status, calls, total, exclusive, mean,
 * stddev, min, max, clamped) or the JSON document above (TACHO_FORMAT_JSON, or on one
 * line); opts may be NULL (docs/schemas.md). 0, -EINVAL (a bad format or opts), -EIO.
 * Thread-safe on a report nobody frees meanwhile. */
TACHO_API int tacho_regions_report_write(const struct tacho_regions_report *r, FILE *f,
					 enum tacho_format fmt,
					 const struct tacho_write_opts *opts);

/* Takes a snapshot and writes it where the report at exit would go (TACHO_OUTPUT or
 * the output option, else stderr; "none": nowhere, only the alerts of a bad
 * TACHO_EVENTS go to stderr). 0, -errno of the file, -ENOMEM. Thread-safe. */
TACHO_API int tacho_regions_write(void);

/* Forgets every figure recorded so far (events, calibration and counters stay). Call
 * it only while no thread is inside a region. */
TACHO_API void tacho_regions_reset(void);

/* Compiled out: with -DTACHO_DISABLE (as LIKWID's markers without -DLIKWID_PERFMON)
 * the calls above become inline no-ops that return 0 (the report calls return -ENOSYS,
 * NULL or 0, tacho_regions_report_write -ENOSYS), and TACHO_REGION_SCOPE nothing: an
 * instrumented program builds without libtacho and its regions cost nothing. The
 * declarations stay; only calls are replaced (the macros take arguments), so taking a
 * function's address still needs the library. The rest of <tacho.h> is unaffected. */
#ifdef TACHO_DISABLE
static inline int tacho_off_regions_init_(const struct tacho_regions_opts *o,
					  struct tacho_diag *d) { (void)o; (void)d; return 0; }
static inline int tacho_off_region_(const char *name) { (void)name; return 0; }
static inline int tacho_off_report_new_(struct tacho_regions_report **out)
{
	if (out)
		*out = (struct tacho_regions_report *)0;
	return -38;   /* -ENOSYS: no report when compiled out */
}
static inline void tacho_off_report_free_(struct tacho_regions_report *r) { (void)r; }
static inline const struct tacho_region_stat *
tacho_off_report_find_(const struct tacho_regions_report *r, const char *name)
{ (void)r; (void)name; return (const struct tacho_region_stat *)0; }
static inline size_t tacho_off_report_nevents_(const struct tacho_regions_report *r)
{ (void)r; return 0; }
static inline size_t tacho_off_report_nregions_(const struct tacho_regions_report *r)
{ (void)r; return 0; }
static inline const struct tacho_region_stat *
tacho_off_report_region_(const struct tacho_regions_report *r, size_t i)
{ (void)r; (void)i; return (const struct tacho_region_stat *)0; }
static inline int tacho_off_report_write_(const struct tacho_regions_report *r, FILE *f,
					  enum tacho_format fmt,
					  const struct tacho_write_opts *opts)
{ (void)r; (void)f; (void)fmt; (void)opts; return -38; }
static inline const char *tacho_off_report_event_(const struct tacho_regions_report *r,
						  size_t i) { (void)r; (void)i; return (const char *)0; }
static inline enum tacho_count_status
tacho_off_report_status_(const struct tacho_regions_report *r, size_t i, const char **why)
{
	(void)r;
	(void)i;
	if (why)
		*why = "regions are compiled out (TACHO_DISABLE)";
	return TACHO_COUNT_NOT_COUNTED;
}
static inline const char *tacho_off_report_notes_(const struct tacho_regions_report *r)
{ (void)r; return ""; }
static inline int tacho_off_regions_write_(void) { return 0; }
static inline void tacho_off_regions_reset_(void) { }
#define tacho_regions_init(opts, diag) tacho_off_regions_init_(opts, diag)
#define tacho_region_begin(name) tacho_off_region_(name)
#define tacho_region_end(name) tacho_off_region_(name)
#define tacho_regions_report_new(out) tacho_off_report_new_(out)
#define tacho_regions_report_free(r) tacho_off_report_free_(r)
#define tacho_regions_report_find(r, name) tacho_off_report_find_(r, name)
#define tacho_regions_report_nregions(r) tacho_off_report_nregions_(r)
#define tacho_regions_report_region(r, i) tacho_off_report_region_(r, i)
#define tacho_regions_report_nevents(r) tacho_off_report_nevents_(r)
#define tacho_regions_report_write(r, f, fmt, opts) tacho_off_report_write_(r, f, fmt, opts)
#define tacho_regions_report_event(r, i) tacho_off_report_event_(r, i)
#define tacho_regions_report_status(r, i, why) tacho_off_report_status_(r, i, why)
#define tacho_regions_report_notes(r) tacho_off_report_notes_(r)
#define tacho_regions_write() tacho_off_regions_write_()
#define tacho_regions_reset() tacho_off_regions_reset_()
#undef TACHO_REGION_SCOPE
#define TACHO_REGION_SCOPE(name) ((void)0)
#endif /* TACHO_DISABLE */

#ifdef __cplusplus
}
#endif

#endif /* TACHO_REGIONS_H */
