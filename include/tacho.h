/* tacho.h - the one public header of libtacho, the CPU performance-monitoring library.
 *
 * Read it like a manual: sections come in dependency order (errors and diagnostics,
 * CPU detection, events, counters, the time-stamp counter, regions, sampling).
 * Every function states what it does, what it returns on error, who owns what
 * afterwards and whether it may be called from several threads at once.
 *
 * Conventions, everywhere:
 *  - a function that can fail returns 0 (or a count) on success and a negative code on
 *    failure: -errno for an error of the operating system, -TACHO_E... for one of tacho's
 *    own; tacho_strerror() turns either into a sentence;
 *  - _new/_free: objects the caller owns; _init/_exit: storage the caller provides;
 *    every _free and _exit accepts NULL;
 *  - the library never prints, never exits and never runs a shell; it reports through
 *    the log callback (tacho_set_log) and through struct tacho_diag where input is bad.
 */
#ifndef TACHO_H
#define TACHO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>

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

#define TACHO_VERSION_MAJOR 0
#define TACHO_VERSION_MINOR 1
#define TACHO_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH". Never NULL. Thread-safe. */
TACHO_API const char *tacho_version(void);

/* tacho's own error codes. They are positive numbers far above any errno; functions
 * return them negated. X(NAME, NUMBER, SENTENCE) */
#define TACHO_ERRNO_MAP(X)                                                              \
	X(EPARSE,    10001, "malformed input")                                          \
	X(ETRUNC,    10002, "input ends too early")                                     \
	X(EEMPTY,    10003, "input is empty")                                           \
	X(ENODATA,   10004, "the value is not available from this source")              \
	X(ENOEVENT,  10005, "no such event")                                            \
	X(ENOPMU,    10006, "no hardware performance-monitoring unit on this machine")  \
	X(ENOTCPU,   10007, "this event does not exist on this CPU")                    \
	X(ERANGE,    10008, "a value is out of range")                                  \
	X(EVERSION,  10009, "unsupported file format version")                          \
	X(ECORRUPT,  10010, "the file is corrupt")                                      \
	X(ENOTX86,   10011, "not an x86 processor")                                     \
	X(ENOTCOUNTED, 10012, "the event was never scheduled on a counter")             \
	X(ETOOMANY,  10013, "more events than this CPU has counters for in one group")  \
	X(ECHILD,    10014, "the program could not be started")

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

/* Where bad input was found. Functions that parse text fill one in when the caller
 * passes a non-NULL pointer; on success they leave it untouched. */
struct tacho_diag {
	char source[256];   /* file name, or the text that was parsed (may be cut short) */
	unsigned line;      /* 1-based line in source; 0 when not a file */
	unsigned column;    /* 1-based column (byte offset + 1); 0 when unknown */
	char message[256];  /* what was wrong, lowercase, no final full stop */
};

/* Formats a diagnostic as one line: "SOURCE:LINE:COLUMN: MESSAGE" (LINE and COLUMN
 * only when known). Returns the length it wanted, as snprintf does. */
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

/* ==================================================================================
 * 2. CPU detection (CPUID: live or from a dump; pure decoding)
 * ================================================================================== */

/* --- 2a. Raw CPUID leaves ---
 * A tacho_cpuid_dump holds the raw CPUID leaves of one or more logical CPUs, read live
 * from this machine or loaded from a dump taken elsewhere. Decoding (2b) is a pure
 * function of a dump, so everything tacho says about a CPU can be tested on data. */

struct tacho_cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

struct tacho_cpuid_dump;

/* Reads the leaves of every online logical CPU of this machine (pinning the calling
 * thread to each in turn, or through /dev/cpu/N/cpuid). Returns 0 and a new dump in
 * *out, -TACHO_ENOTX86 off x86, or -errno. The caller frees it with
 * tacho_cpuid_dump_free. Not thread-safe with respect to the calling thread's CPU
 * affinity, which it restores before returning. */
TACHO_API int tacho_cpuid_dump_live(struct tacho_cpuid_dump **out);

/* Parses a dump in any of the formats tacho reads (detected by content): `cpuid -r`
 * (Todd Allen's tool, also what `tacho cpu --raw` writes), libcpuid's raw format,
 * AIDA64's and InstLatx64's CPUID listings. `name` names the text in diagnostics
 * (a file name). Returns 0 and a new dump, or -TACHO_EPARSE / -TACHO_EEMPTY /
 * -TACHO_ETRUNC / -ENOMEM with *diag (if non-NULL) naming the line. Thread-safe. */
TACHO_API int tacho_cpuid_dump_parse(const char *text, size_t len, const char *name,
				     struct tacho_cpuid_dump **out, struct tacho_diag *diag);

/* Reads the file at path and parses it as tacho_cpuid_dump_parse does; errors of the
 * file itself are -errno, with *diag naming the file. Thread-safe. */
TACHO_API int tacho_cpuid_dump_load(const char *path, struct tacho_cpuid_dump **out,
				    struct tacho_diag *diag);

TACHO_API void tacho_cpuid_dump_free(struct tacho_cpuid_dump *dump);

/* Number of logical CPUs in the dump (at least 1). */
TACHO_API unsigned tacho_cpuid_dump_ncpus(const struct tacho_cpuid_dump *dump);

/* The operating system's number of the idx-th CPU of the dump (as in
 * /sys/devices/system/cpu/cpuN), or -1 when the dump does not say. */
TACHO_API int tacho_cpuid_dump_os_cpu(const struct tacho_cpuid_dump *dump, unsigned idx);

/* Looks up one leaf of the idx-th CPU. Honours the maximum leaf of each range
 * (CPUID.0:EAX for 0x0..., CPUID.8000_0000h:EAX for 0x8000_0000..., the hypervisor's
 * 0x4000_0000:EAX, and so on): a leaf above its range's maximum returns
 * -TACHO_ENODATA even if the dump holds a value, because a real CPU answers such a
 * query with another leaf's data. A leaf that is not subleaf-indexed is found under
 * subleaf 0 whatever subleaf is asked. Returns 0 and *out, or -TACHO_ENODATA.
 * Thread-safe. */
TACHO_API int tacho_cpuid_query(const struct tacho_cpuid_dump *dump, unsigned idx,
				uint32_t leaf, uint32_t subleaf, struct tacho_cpuid_regs *out);

/* Writes every leaf of every CPU in the format of `cpuid -r` (one "CPU N:" header,
 * then "   0xLEAF 0xSL: eax=0x... ebx=0x... ecx=0x... edx=0x..." lines), which
 * tacho_cpuid_dump_parse reads back to the same dump. 0 or -EIO. */
TACHO_API int tacho_cpuid_dump_write_raw(const struct tacho_cpuid_dump *dump, FILE *f);

/* @@section-cpu-decode@@ */

/* ==================================================================================
 * 3. Events (the event grammar shared by every command)
 * ================================================================================== */
/* @@section-events@@ */

/* ==================================================================================
 * 4. Counters (the perf_event engine)
 * ================================================================================== */
/* @@section-counters@@ */

/* ==================================================================================
 * 5. The time-stamp counter
 * ================================================================================== */
/* @@section-tsc@@ */

/* ==================================================================================
 * 6. Regions and the microbenchmark harness
 * ================================================================================== */
/* @@section-regions@@ */

/* ==================================================================================
 * 7. Sampling
 * ================================================================================== */
/* @@section-sampling@@ */

#ifdef __cplusplus
}
#endif

#endif /* TACHO_H */
