/* tacho/errors.h - libtacho's public interface: version, error codes, diagnostics and
 * the log callback.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_ERRORS_H
#define TACHO_ERRORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>


#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TACHO_API __attribute__((visibility("default")))
#else
#define TACHO_API
#endif

/* ==================================================================================
 * 1. Version, errors and diagnostics
 * ================================================================================== */

/* The version of this header. A new minor version only adds (functions, fields at
 * the ends of structs, enum values); a new major version may break programs built
 * against an older one. */
#define TACHO_VERSION_MAJOR 0
#define TACHO_VERSION_MINOR 1
#define TACHO_VERSION_PATCH 0
/* The same as one number that grows with each release, SQLite's way: MAJOR * 1000000 +
 * MINOR * 1000 + PATCH (1000 for 0.1.0). */
#define TACHO_VERSION_NUMBER                                                            \
	(TACHO_VERSION_MAJOR * 1000000 + TACHO_VERSION_MINOR * 1000 + TACHO_VERSION_PATCH)

/* The library's version as "MAJOR.MINOR.PATCH": the library's that runs, which may be
 * another than the header's the program was built with. Never NULL. Thread-safe. */
TACHO_API const char *tacho_version(void);

/* The library's version as TACHO_VERSION_NUMBER counts it (the library's, as above).
 * Thread-safe. */
TACHO_API int tacho_version_number(void);

/* tacho's own error codes. They are positive numbers far above any errno; functions
 * return them negated. No name repeats an errno's (tacho_err_name says "TACHO_EX" and
 * "EX" for two different numbers otherwise). X(NAME, NUMBER, SENTENCE) */
#define TACHO_ERRNO_MAP(X)                                                                \
	X(EPARSE,      10001, "malformed input")                                          \
	X(ETRUNC,      10002, "input ends too early")                                     \
	X(EEMPTY,      10003, "input is empty")                                           \
	X(ENOVALUE,    10004, "the value is not available from this source")              \
	X(ENOEVENT,    10005, "no such event")                                            \
	X(ENOPMU,      10006, "no hardware performance-monitoring unit on this machine")  \
	X(ENOTCPU,     10007, "this event does not exist on this CPU")                    \
	X(EOUTOFRANGE, 10008, "a value is out of range")                                  \
	X(EVERSION,    10009, "unsupported version (of a file format or of the library)") \
	X(ECORRUPT,    10010, "the file is corrupt")                                      \
	X(ENOTX86,     10011, "not an x86 processor")                                     \
	X(ENOTCOUNTED, 10012, "the event was never scheduled on a counter")               \
	X(ETOOMANY,    10013, "more events than this CPU has counters for in one group")  \
	X(ENOSTART,    10014, "the program could not be started")                         \
	X(ENOMSR,      10015, "no such model-specific register")                          \
	X(EMSRCPU,     10016, "this register does not exist on this CPU")                 \
	X(ENOWRITE,    10017, "tacho does not write this register")                       \
	X(ENOFORCE,    10018, "writing a register must be forced")                       \
	X(ENOSIM,      10019, "the simulator (valgrind) is not available")                \
	X(ESILENT,     10020, "the event opens but does not count on this machine")

enum tacho_errno {
#define TACHO_ERRNO_ENUM_(name, num, text) TACHO_##name = num,
	TACHO_ERRNO_MAP(TACHO_ERRNO_ENUM_)
#undef TACHO_ERRNO_ENUM_
};

/* The sentence for an error code, negative or positive, tacho's or the OS's (then it
 * is strerror's text). Never NULL; an unknown code gives "unknown error N" from a
 * thread-local buffer. Thread-safe. */
TACHO_API const char *tacho_strerror(int err);

/* The symbolic name of an error code ("TACHO_EPARSE", "ENOENT"), or NULL if unknown.
 * Thread-safe. */
TACHO_API const char *tacho_err_name(int err);

/* Where to look next, as data: a sentence of the library that would send its reader
 * elsewhere ("see what this machine allows") carries one of these beside its text, and
 * never names a command; a program words the hint its own way (the tacho command
 * names its subcommands). */
enum tacho_hint {
	TACHO_HINT_NONE = 0,
	TACHO_HINT_MACHINE,     /* what this machine and user allow (tacho doctor) */
	TACHO_HINT_EVENTS,      /* which events exist here (tacho list) */
	TACHO_HINT_SCHEDULE,    /* count over several runs of the program instead of one
				   oversized group (tacho stat, without --multiplex) */
	TACHO_HINT_RING_PAGES,  /* a smaller sampling ring per CPU (tacho record -m) */
	TACHO_HINT_CACHE,       /* measuring the caches rather than believing CPUID (a
				   pointer-chasing latency curve: tacho cache) */
	TACHO_HINT_MSRS,        /* which model-specific registers tacho knows (tacho msr
				   list) */
	TACHO_HINT_SIMULATE,    /* simulated counts instead (valgrind: tacho stat --sim),
				   where the machine cannot count the event */
	TACHO_HINT_COUNT
};

/* Where bad input was found. Functions that parse text fill one in when the caller
 * passes a non-NULL pointer; on success they leave it untouched.
 * Sized (docs/architecture.md, "An API that can grow"): the caller sets sz, as in
 * `struct tacho_diag d = { .sz = sizeof(d) };`, and the library writes only the fields
 * sz covers; a function given a diag whose sz is below this first version returns
 * -EINVAL and writes nothing. */
struct tacho_diag {
	size_t sz;          /* sizeof(struct tacho_diag) */
	char source[256];   /* file name, or the text that was parsed (may be cut short) */
	unsigned line;      /* 1-based line in source; 0 when not a file */
	unsigned column;    /* 1-based column (byte offset + 1); 0 when unknown */
	char message[256];  /* what was wrong, lowercase, no final full stop */
	enum tacho_hint hint; /* where to look next; TACHO_HINT_NONE when nowhere */
};

/* Whether this library can serve a program built against the header of version
 * major.minor: the same major version (another breaks the ABI both ways) and a minor
 * version at least as new as the header's (an older library lacks what a newer header
 * declares, and its structs are shorter). Returns 0; -TACHO_EVERSION with *diag (if
 * non-NULL) saying both versions and what to do, source "libtacho"; -EINVAL for a
 * negative version or a diag whose sz is too small. Thread-safe.
 * A program calls it through TACHO_CHECK_VERSION at start-up, before anything else of
 * the library:
 *
 *	struct tacho_diag d = { .sz = sizeof(d) };
 *	if (TACHO_CHECK_VERSION(&d)) {
 *		fprintf(stderr, "%s\n", d.message);
 *		return 1;
 *	}
 */
TACHO_API int tacho_version_check(int major, int minor, struct tacho_diag *diag);

/* tacho_version_check with the version of the header the program is compiled with. */
#define TACHO_CHECK_VERSION(diag)                                                       \
	tacho_version_check(TACHO_VERSION_MAJOR, TACHO_VERSION_MINOR, (diag))

/* Formats a diagnostic as one line: "SOURCE:LINE:COLUMN: MESSAGE" (LINE and COLUMN
 * only when known). Returns the length it wanted, as snprintf does; -EINVAL for a NULL
 * d or one whose sz is too small. Thread-safe. */
TACHO_API int tacho_diag_format(const struct tacho_diag *d, char *buf, size_t size);

enum tacho_log_level {
	TACHO_LOG_ERROR = 0,
	TACHO_LOG_WARN  = 1,
	TACHO_LOG_INFO  = 2,
	TACHO_LOG_DEBUG = 3,
};

typedef void tacho_log_fn(void *arg, enum tacho_log_level level, const char *msg);

/* Installs the callback that receives the library's diagnostics (warnings about
 * values it could not trust, fallbacks it took) and the most verbose level passed on.
 * NULL silences the library (the default). Call it before other threads use the
 * library; the callback itself may be called from any thread. */
TACHO_API void tacho_set_log(tacho_log_fn *fn, void *arg, enum tacho_log_level max);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_ERRORS_H */
