/* util.h - internal helpers shared by every module: buffers, parsing, formatting, files.
 *
 * Internal names start with tc_ (hidden by -fvisibility=hidden and the version script);
 * public ones with tacho_. Look here before writing a helper: if it exists, use it; if
 * two modules need it, it belongs here. */
#ifndef TACHO_UTIL_H
#define TACHO_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tacho.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TC_STR_(x) #x
#define TC_STR(x) TC_STR_(x)
#define TACHO_VERSION_STRING                                                            \
	TC_STR(TACHO_VERSION_MAJOR) "." TC_STR(TACHO_VERSION_MINOR) "." TC_STR(TACHO_VERSION_PATCH)

#define TC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TC_UNUSED __attribute__((unused))
#define tc_likely(x) __builtin_expect(!!(x), 1)
#define tc_unlikely(x) __builtin_expect(!!(x), 0)

/* --- diagnostics (error.c) --- */

/* Fills *d (when d is non-NULL) and returns err, so that parsers can write
 * `return tc_diag_set(d, file, line, col, -TACHO_EPARSE, "...")`. */
int tc_diag_set(struct tacho_diag *d, const char *source, unsigned line, unsigned column,
		int err, const char *fmt, ...) TC_PRINTF(6, 7);
bool tc_log_enabled(enum tacho_log_level level);
void tc_log(enum tacho_log_level level, const char *fmt, ...) TC_PRINTF(2, 3);

/* --- growable string (strbuf.c), in the manner of git's strbuf ---
 * Always NUL-terminated; buf is never NULL after tc_sb_init. On allocation failure
 * the buffer sets .oom and drops further appends: check it once at the end. */
struct tc_sb {
	char *buf;
	size_t len, alloc;
	bool oom;
};
#define TC_SB_INIT { NULL, 0, 0, false }
void tc_sb_init(struct tc_sb *sb);
void tc_sb_exit(struct tc_sb *sb);
void tc_sb_reset(struct tc_sb *sb);
void tc_sb_add(struct tc_sb *sb, const void *data, size_t len);
void tc_sb_adds(struct tc_sb *sb, const char *s);
void tc_sb_addc(struct tc_sb *sb, char c);
void tc_sb_addf(struct tc_sb *sb, const char *fmt, ...) TC_PRINTF(2, 3);
void tc_sb_vaddf(struct tc_sb *sb, const char *fmt, va_list ap);
/* Hands the string to the caller (free() it) and resets sb. NULL if sb.oom. */
char *tc_sb_detach(struct tc_sb *sb);

/* --- files (file.c) --- */

/* Reads a whole file into a NUL-terminated buffer the caller frees. Returns 0 or
 * -errno. `max` bounds the size (-EFBIG past it); 0 means 256 MiB. */
int tc_read_file(const char *path, char **out, size_t *len, size_t max);
/* Reads a small sysfs/procfs file and strips the trailing newline. 0 or -errno. */
int tc_read_line_file(const char *path, char *buf, size_t size);
/* Parses an integer from a small file (decimal or 0x hex). 0 or -errno/-TACHO_EPARSE. */
int tc_read_int_file(const char *path, long long *out);

/* --- numbers (parse.c) --- */

/* Strict parses: the whole of s must be the number (no sign for u64), base 0 rules
 * (0x hex, 0 octal is NOT accepted: leading zeros mean decimal). 0 or -TACHO_EPARSE /
 * -TACHO_ERANGE. */
int tc_parse_u64(const char *s, uint64_t *out);
int tc_parse_i64(const char *s, int64_t *out);
int tc_parse_double(const char *s, double *out);
/* A size in bytes: digits and an optional unit, K/KiB, M/MiB, G/GiB (powers of 1024,
 * any case) or B; "64K", "1MiB", "4096". 0, or -TACHO_EPARSE / -TACHO_ERANGE with *diag
 * (if non-NULL) pointing at the column. */
int tc_parse_size(const char *s, uint64_t *out, struct tacho_diag *diag);
/* Hex of exactly 1..16 digits without prefix, as in dumps. */
int tc_parse_hex_u64(const char *s, size_t len, uint64_t *out);

/* --- formatting (format.c) --- */

/* Human-readable binary size: "48 KiB", "2 MiB", "1.5 MiB", "512 B". Returns buf. */
char *tc_fmt_size(uint64_t bytes, char *buf, size_t size);
/* Human-readable count with SI suffix: "1.23 M", "950". Returns buf. */
char *tc_fmt_si(double v, char *buf, size_t size);
/* Number with thousands separators: "1,234,567". Returns buf. */
char *tc_fmt_grouped(uint64_t v, char *buf, size_t size);

/* --- small string helpers (parse.c) --- */
char *tc_strdup(const char *s);     /* NULL-safe strdup */
char *tc_strndup(const char *s, size_t n);
char *tc_trim(char *s);             /* trims ASCII space in place, returns s */
bool tc_starts_with(const char *s, const char *prefix);

/* --- statistics (stats.c) [owner: stat] ---
 * Descriptive statistics over doubles; u64 counts go through tc_stats_compute_u64
 * (converted once to double: exact up to 2^53, never a wrapped integer sum).
 * Definitions, everywhere in tacho:
 *  - stddev: the SAMPLE standard deviation (divisor n-1), by the corrected two-pass
 *    algorithm over shifted values (tc_welford_*: Welford's update);
 *    0 for n == 1 (no variation observed), NaN for n == 0;
 *  - median / percentile p (0..100): linear interpolation between the two nearest
 *    ranks of the sorted data (Hyndman & Fan type 7, numpy's default): h = (n-1)p/100,
 *    x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]);
 *  - mode with bin width w > 0: values fall into bins [k w, (k+1) w); the mode is the
 *    mean of the values in the most populated bin, the lowest bin winning a tie;
 *    w <= 0: the most frequent exact value (lowest on a tie);
 *  - mad: median absolute deviation from the median, unscaled (multiply by 1.4826 for
 *    a stddev estimate under normality);
 *  - spread_pct: the range relative to the mean, 100 (max - min) / |mean|: how far
 *    apart the runs were (P5Stat's question); rsd_pct: 100 stddev / |mean| (the
 *    coefficient of variation; perf's "+-" is this divided by sqrt(n));
 *    both are 0 when all values are equal and NaN when the mean is 0 otherwise.
 * Undefined results are NaN (the JSON writer prints null). Thread-safe, no state. */
struct tc_stats {
	size_t n;
	double min, max, mean, stddev, median, mad, spread_pct, rsd_pct;
};
/* All fields at once. 0; -EINVAL if a value is NaN or infinite; -ENOMEM. n == 0 gives
 * n = 0 and NaN everywhere (returns 0). */
int tc_stats_compute(const double *v, size_t n, struct tc_stats *out);
int tc_stats_compute_u64(const uint64_t *v, size_t n, struct tc_stats *out);
/* Percentile / mode of unsorted data (they sort a copy; NaN on n == 0 or no memory),
 * and of data already sorted ascending (no allocation). */
double tc_stats_percentile(const double *v, size_t n, double p);
double tc_stats_percentile_sorted(const double *sorted, size_t n, double p);
double tc_stats_mode(const double *v, size_t n, double width);
double tc_stats_mode_sorted(const double *sorted, size_t n, double width);
void tc_stats_sort(double *v, size_t n);   /* ascending, in place */
/* Streaming mean / stddev / min / max (Welford), for values that arrive one by one
 * (intervals) and need no storage. */
struct tc_welford {
	uint64_t n;
	double mean, m2, min, max;
};
void tc_welford_init(struct tc_welford *w);
void tc_welford_add(struct tc_welford *w, double x);
double tc_welford_mean(const struct tc_welford *w);    /* NaN if n == 0 */
double tc_welford_stddev(const struct tc_welford *w);  /* sample; 0 if n == 1, NaN if 0 */
/* --- end statistics --- */

/* --- CPU lists (cpulist.c) [owner: stat] ---
 * Parses "0-3,8,10-11" (the kernel's cpulist format, perf's -C): numbers and ranges,
 * comma-separated, no spaces. Returns 0 and a sorted array of distinct CPU numbers
 * the caller free()s; -TACHO_EEMPTY, -TACHO_EPARSE (*diag points at the column),
 * -TACHO_ERANGE (a number of 65536 or more), -ENOMEM. */
int tc_parse_cpu_list(const char *s, int **out, size_t *n, struct tacho_diag *diag);

#endif /* TACHO_UTIL_H */
