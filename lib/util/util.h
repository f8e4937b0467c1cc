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
#include <stdio.h>

#include "tacho/errors.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TC_STR_(x) #x
#define TC_STR(x) TC_STR_(x)
#define TACHO_VERSION_STRING                                                            \
	TC_STR(TACHO_VERSION_MAJOR) "." TC_STR(TACHO_VERSION_MINOR) "." TC_STR(TACHO_VERSION_PATCH)

/* --- structs that grow (docs/architecture.md, "An API that can grow") ---
 * A struct of the API that the caller sizes (opts, results, array elements) says how
 * many bytes it has in sz (or an element size beside the array); the library reads and
 * writes only the fields wholly inside them. */

/* The end of field in type: a struct's first version ends at the end of its last
 * field of that version. */
#define tc_offsetofend(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
/* Whether a caller's struct p, of its own sz bytes, has field. */
#define TC_SZ_HAS(p, type, field) ((p)->sz >= tc_offsetofend(type, field))
/* Options: a struct the caller fills for the library to read (the "options" rule). One
 * mechanism for them all, libbpf's OPTS_VALID and libpfm4's pfmlib_check_struct:
 * - each struct's first version is TC_OPTS_V1_<tag> (tc_offsetofend of its last field
 *   then), defined beside the code that checks it, so that TC_OPTS_VALID cannot be
 *   written for a struct without one;
 * - TC_OPTS_VALID(opts, tag), on entry: 0 for NULL (every default) or a valid struct;
 *   -EINVAL when sz is below the first version; -TACHO_EVERSION when sz goes past the
 *   struct this library knows (sizeof) and a byte there is not zero: the caller, built
 *   against a newer tacho.h, asks for something this library lacks, and is told so
 *   instead of having it silently ignored. TC_OPTS_VALID_DIAG also says so in diag;
 * - then TC_OPTS_GET(opts, tag, field, dflt) reads a field (dflt for NULL opts or a
 *   field the caller's version lacks), or TC_OPTS_COPY(&mine, opts) copies the whole
 *   struct into the library's version (missing fields zero, mine.sz the library's). */
#define TC_OPTS_TYPED_(opts, tag) (1 ? (opts) : (const struct tag *)0)
#define TC_OPTS_VALID(opts, tag)                                                        \
	tc_opts_check(TC_OPTS_TYPED_(opts, tag), TC_OPTS_V1_##tag, sizeof(struct tag),    \
		      "struct " #tag, NULL)
#define TC_OPTS_VALID_DIAG(opts, tag, diag)                                             \
	tc_opts_check(TC_OPTS_TYPED_(opts, tag), TC_OPTS_V1_##tag, sizeof(struct tag),    \
		      "struct " #tag, (diag))
#define TC_OPTS_HAS(opts, tag, field)                                                   \
	(TC_OPTS_TYPED_(opts, tag) && TC_SZ_HAS(opts, struct tag, field))
#define TC_OPTS_GET(opts, tag, field, dflt)                                             \
	(TC_OPTS_HAS(opts, tag, field) ? (opts)->field : (dflt))
#define TC_OPTS_COPY(dst, opts) tc_opts_copy((dst), sizeof(*(dst)), (opts))
/* What TC_OPTS_VALID expands to: opts (NULL or a struct whose first field is its size_t
 * sz) against its first version v1 and the library's known size; name and diag (may be
 * NULL) for the sentence. */
int tc_opts_check(const void *opts, size_t v1, size_t known, const char *name,
		  struct tacho_diag *diag);
/* What TC_OPTS_COPY expands to: the caller's opts (NULL: none) into dst (dst_sz bytes,
 * its first field a size_t sz, set to dst_sz). */
void tc_opts_copy(void *dst, size_t dst_sz, const void *opts);
/* Element i of an array whose elements are elem_sz bytes (the caller's sizeof). */
#define TC_ELEM(base, i, elem_sz) ((void *)((char *)(base) + (size_t)(i) * (elem_sz)))
#define TC_CONST_ELEM(base, i, elem_sz)                                                 \
	((const void *)((const char *)(base) + (size_t)(i) * (elem_sz)))
/* Copies the library's struct (src, src_sz bytes) into the caller's (dst, dst_sz
 * bytes): the fields the caller's version has. */
void tc_sized_put(void *dst, size_t dst_sz, const void *src, size_t src_sz);
/* The same into a caller's struct whose first field is its size_t sz (at least the
 * first version's, checked before): dst's sz stays as the caller set it. */
void tc_sized_put_sz(void *dst, const void *src, size_t src_sz);
/* Reads the caller's struct (src, src_sz bytes) into the library's (dst, dst_sz bytes):
 * the fields the caller's version lacks are zero, their defaults. */
void tc_sized_get(void *dst, size_t dst_sz, const void *src, size_t src_sz);

#define TC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TC_UNUSED __attribute__((unused))
#define tc_likely(x) __builtin_expect(!!(x), 1)
#define tc_unlikely(x) __builtin_expect(!!(x), 0)
/* A value one thread writes and another reads without a lock (a region's figures, the
 * hot path's flags): atomic loads and stores of any scalar type, plain moves on x86-64,
 * so no data race for the compiler, nor for ThreadSanitizer. The _ACQUIRE and _RELEASE
 * forms also order the accesses around them (a seqlock's data, without the fences that
 * ThreadSanitizer cannot follow); on x86-64 they too are plain moves. */
#define TC_LOAD_ORDER(x, order)                                                         \
	({                                                                              \
		/* x's type without const (lvalue conversion); not evaluated */       \
		__typeof__(({ __auto_type tc_t_ = (x); tc_t_; })) tc_once_;             \
		__atomic_load(&(x), &tc_once_, order);                                  \
		tc_once_;                                                               \
	})
#define TC_STORE_ORDER(x, v, order)                                                     \
	do {                                                                            \
		__typeof__(x) tc_once_ = (v);                                           \
		__atomic_store(&(x), &tc_once_, order);                                 \
	} while (0)
#define TC_READ_ONCE(x) TC_LOAD_ORDER(x, __ATOMIC_RELAXED)
#define TC_WRITE_ONCE(x, v) TC_STORE_ORDER(x, v, __ATOMIC_RELAXED)
#define TC_LOAD_ACQUIRE(x) TC_LOAD_ORDER(x, __ATOMIC_ACQUIRE)
#define TC_STORE_RELEASE(x, v) TC_STORE_ORDER(x, v, __ATOMIC_RELEASE)

/* --- diagnostics (error.c) --- */

/* The first version of struct tacho_diag ends at hint. */
#define TC_DIAG_SZ_V1 tc_offsetofend(struct tacho_diag, hint)
/* -EINVAL for a caller's diag whose sz is below the first version, else 0 (NULL too):
 * every public function that takes a diag checks it on entry. */
int tc_diag_check(const struct tacho_diag *d);
/* Fills *d (when d is non-NULL) and returns err, so that parsers can write
 * `return tc_diag_set(d, file, line, col, -TACHO_EPARSE, "...")`. */
int tc_diag_set(struct tacho_diag *d, const char *source, unsigned line, unsigned column,
		int err, const char *fmt, ...) TC_PRINTF(6, 7);
bool tc_log_enabled(enum tacho_log_level level);
void tc_log(enum tacho_log_level level, const char *fmt, ...) TC_PRINTF(2, 3);

/* --- output files (outfile.c) ---
 * Every file tacho writes (a recording, -o, TACHO_OUTPUT) is made here: a new file of
 * mode 0600 (a recording holds addresses, command lines and paths), NAME.tmp-XXXXXX in
 * the same directory, renamed over NAME by tc_outfile_commit. So a symbolic link at NAME
 * is never followed to a file (open refuses it, -ELOOP; a link to a pipe, a terminal or
 * /dev/null, as /dev/stdout, is written in place), a failed run leaves NAME as it was, two
 * runs writing NAME each leave a whole file (the last rename wins), and a file still
 * being read under NAME (report -i F -o F) keeps its contents until it is unmapped. A
 * character device or a FIFO at NAME is written in place (never created, truncated or
 * replaced); a FIFO without a reader is -ENXIO, a directory -EISDIR, anything else that
 * is not a regular file -EPERM. */
#define TC_OUTFILE_KEEP_OLD 0x1u   /* commit moves a regular file at NAME to NAME.old */
struct tc_outfile {
	int fd;          /* write here (or through tc_outfile_stream) */
	FILE *f;
	char *path;
	char *tmp;       /* NULL: written in place */
	unsigned flags;
};
/* 0, or -errno with *o cleared. */
int tc_outfile_open(struct tc_outfile *o, const char *path, unsigned flags);
/* A stdio stream on fd, made on first call and owned by *o; NULL without memory. */
FILE *tc_outfile_stream(struct tc_outfile *o);
/* Flushes and closes (a write error of the stream counts), then renames into place; on
 * any error the temporary file goes and NAME stays as it was. 0 or -errno; *o is done
 * either way. */
int tc_outfile_commit(struct tc_outfile *o);
/* Closes and removes the temporary file: NAME stays as it was. NULL-safe fields. */
void tc_outfile_abort(struct tc_outfile *o);

/* --- a minimal HTTP/1.1 client (http.c) ---
 * For the pushes (docs/serve.md, "Pushes"): plain http:// only, one request per
 * connection, a deadline over the whole exchange. Not for hostile servers' bulk data:
 * at most 64 KiB of an answer is read, and only its status and first body line kept. */
struct tc_http_url {
	char host[256];             /* a name, an IPv4 address, or an IPv6 one without [] */
	char port[6];
	char path[1024];            /* the base path, without trailing '/' ("" for none) */
};
/* Parses "http://HOST[:PORT][/PATH]" (HOST may be [V6]). 0; -EPROTONOSUPPORT for
 * https://, -EINVAL for anything else that is not such a URL; *why says what in a few
 * words (a static string). */
int tc_http_url_parse(const char *url, struct tc_http_url *u, const char **why);
struct tc_http_request {
	const char *method;         /* "PUT", "POST", "GET" */
	const struct tc_http_url *url;
	const char *target;         /* after the URL's base path: "/metrics/job/x", with
				       its query; already percent-encoded */
	const char *content_type;   /* NULL: none */
	const void *body;
	size_t body_len;
	unsigned timeout_ms;        /* the whole exchange; 0: 10000 */
};
struct tc_http_response {
	int status;                 /* 100..599; -1 before an answer */
	char status_line[128];      /* "400 Bad Request": the code and the reason */
	char body_line[256];        /* the first non-empty line of the body (chunked
				       bodies put back together), bytes outside printable
				       ASCII as '?'; "" without a body */
};
/* Parses an answer read to the end (buf[0..n), not NUL-terminated): the status line,
 * the header fields (Transfer-Encoding: chunked is undone), the body's first line. 0 or
 * -EBADMSG (not an HTTP/1.x answer, or its header section cut short). */
int tc_http_response_parse(const char *buf, size_t n, struct tc_http_response *r);
/* Sends the request, reads the answer until the server closes, parses it. 0 with *r
 * (whatever its status: the caller judges it), or -errno (-ECONNREFUSED, -ETIMEDOUT,
 * -EHOSTUNREACH for a name that does not resolve, -EBADMSG, -ENOMEM) with why saying
 * what happened in words. Thread-safe; blocks up to the timeout. */
int tc_http_request(const struct tc_http_request *q, struct tc_http_response *r,
		    char *why, size_t wsz);

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
/* Opens path for reading only if it is a regular file, filling *st when st is non-NULL:
 * the fd, -EISDIR for a directory, -EINVAL for anything else that is not a regular file
 * (a FIFO, a device), or -errno. The type is read before anything is opened for
 * reading (O_PATH), so a FIFO or a device is never opened at all: no wait for a writer,
 * no terminal taken, no driver's open run. What a recording or a dump names is data
 * from someone else: open it with this. */
struct stat;
int tc_open_regular(const char *path, struct stat *st);
/* tc_read_file of a regular file (tc_open_regular), refused with -EFBIG before any read
 * when larger than max. */
int tc_read_regular_file(const char *path, char **out, size_t *len, size_t max);
/* Where execvp would find the program name (with a '/': name itself; else the first
 * executable regular file in $PATH, "/usr/bin:/bin" when unset, an empty entry being
 * "."): 0 and the path in *out (malloc'd), or -ENOENT, -ENOTDIR, -EACCES (only files
 * that cannot be run, as exec says it), -ENOMEM. */
int tc_path_lookup(const char *name, char **out);
/* Copies s[0..n) to out (at most size - 1 bytes, NUL-terminated), turning the octal
 * escapes \NNN of /proc/mounts and mountinfo (a space is \040) into their bytes. */
void tc_unescape_octal(const char *s, size_t n, char *out, size_t size);
/* Reads a small sysfs/procfs file and strips the trailing newline. 0 or -errno. */
int tc_read_line_file(const char *path, char *buf, size_t size);
/* The same, path relative to the directory dirfd (AT_FDCWD: the working one), as
 * openat takes them: a walk of one name instead of the whole path for each file of a
 * sysfs folder. */
int tc_read_line_at(int dirfd, const char *path, char *buf, size_t size);
/* The user's cache folder for tacho: $XDG_CACHE_HOME/tacho, else $HOME/.cache/tacho (a
 * relative XDG_CACHE_HOME is invalid and ignored, as the XDG specification says). Not
 * created. 0; -EPERM in a secure process (a setuid program must not read or write
 * where whoever started it points: tc_env_trusted); -ENOENT without a usable variable;
 * -ENAMETOOLONG. */
int tc_user_cache_dir(char *buf, size_t size);
/* mkdir -p with mode 0700 for what it creates (path is restored; it is written to for
 * the walk). 0 or -errno. */
int tc_mkdirs(char *path);
/* Parses an integer from a small file (decimal or 0x hex). 0 or -errno/-TACHO_EPARSE. */
int tc_read_int_file(const char *path, long long *out);
int tc_read_int_at(int dirfd, const char *path, long long *out);

/* The file that maps addr executable in this process and addr's offset in it, what a
 * uprobe on that code takes, from /proc/self/maps: 0 with the path in path (size
 * bytes); -ENOENT for an address in no executable mapping of a file (anonymous code,
 * a file deleted since, a path longer than size). */
int tc_self_file_offset(uintptr_t addr, char *path, size_t size, uint64_t *off);

/* --- the environment (env.c) ---
 * Every variable the library reads goes through tc_env_trusted: in a process that runs
 * with privileges its caller may lack (setuid, setgid, file capabilities: the kernel's
 * AT_SECURE, as secure_getenv decides), whoever set a variable could make it write,
 * map or run what they may not (TACHO_OUTPUT, TACHO_TRACE, HOME, PATH, ...), so there
 * every variable reads as unset. docs/security.md lists them. */
/* The variable name, or NULL when unset or when this process is secure; *ignored (may
 * be NULL) is set when a value was there and was ignored, for the caller to say so. */
const char *tc_env_trusted(const char *name, bool *ignored);
/* Whether this process is secure (AT_SECURE, or what a test forced). */
bool tc_env_secure(void);
/* The tests' seam: 1 or 0 makes every process look secure or not, -1 asks the kernel
 * again. */
void tc_env_force_secure(int secure);

/* --- /proc/cpuinfo (cpuinfo.c): the one reader of it ---
 * Reads root/proc/cpuinfo (root NULL, "" or "/": this machine; else a fake tree) into a
 * NUL-terminated buffer the caller frees. 0 or -errno. */
int tc_cpuinfo_read(const char *root, char **text, size_t *len);
/* The value of "KEY<blanks>: VALUE" in the first processor's block of text[0..len)
 * (which need not be NUL-terminated), blanks around it removed, as a new string the
 * caller frees. NULL when absent or on allocation failure. */
char *tc_cpuinfo_field(const char *text, size_t len, const char *key);
/* Whether the first processor's "flags" field lists flag as a whole word. False for an
 * empty flag, a NULL text or no flags field. No allocation. */
bool tc_cpuinfo_has_flag(const char *text, size_t len, const char *flag);
/* The same test on a flags value already taken out (tc_cpuinfo_field's "flags"). */
bool tc_cpuinfo_flags_has(const char *flags, const char *flag);

/* --- numbers (parse.c) --- */

/* Strict parses: the whole of s must be the number (no sign for u64), base 0 rules
 * (0x hex, 0 octal is NOT accepted: leading zeros mean decimal). 0 or -TACHO_EPARSE /
 * -TACHO_EOUTOFRANGE. */
int tc_parse_u64(const char *s, uint64_t *out);
int tc_parse_i64(const char *s, int64_t *out);
int tc_parse_double(const char *s, double *out);
/* A size in bytes: digits and an optional unit, K/KiB, M/MiB, G/GiB (powers of 1024,
 * any case) or B; "64K", "1MiB", "4096". 0, or -TACHO_EPARSE / -TACHO_EOUTOFRANGE with *diag
 * (if non-NULL) pointing at the column. */
int tc_parse_size(const char *s, uint64_t *out, struct tacho_diag *diag);
/* Hex of exactly 1..16 digits without prefix, as in dumps. */
int tc_parse_hex_u64(const char *s, size_t len, uint64_t *out);

/* --- hex digits (parse.c): the one place that knows them ---
 * ASCII only, whatever the locale: dumps, procfs and event specs are not text in the
 * user's language. */
/* The value of a hex digit (0-9, a-f, A-F -> 0..15), or -1 for any other character. */
int tc_hex_value(int c);
bool tc_is_hex_digit(int c);
/* Writes the n bytes at data as 2n lower-case hex digits and a NUL into buf; when
 * size is short, as many whole bytes as fit (size 0 writes nothing). Returns buf. */
char *tc_hex_encode(const void *data, size_t n, char *buf, size_t size);

/* --- formatting (format.c) --- */

/* The length (1 to 4) of the well-formed UTF-8 sequence at s (n bytes readable), or 0
 * when the bytes there are not UTF-8 (RFC 3629: no overlong form, no surrogate, at
 * most U+10FFFF). */
size_t tc_utf8_seq(const unsigned char *s, size_t n);
/* Text from outside (a recording's command line, a program's name, an event spec) as
 * a terminal may show it: control bytes (C0, DEL, C1) and bytes that are not UTF-8
 * become \xHH, so that they cannot move the cursor or set the window title; valid
 * UTF-8 is kept. Appends to sb / writes to f. */
void tc_sb_add_printable(struct tc_sb *sb, const char *s);
void tc_fputs_printable(const char *s, FILE *f);

/* Human-readable binary size: "48 KiB", "2 MiB", "1.5 MiB", "512 B". Returns buf. */
char *tc_fmt_size(uint64_t bytes, char *buf, size_t size);
/* Human-readable count with SI suffix: "1.23 M", "950". Returns buf. */
char *tc_fmt_si(double v, char *buf, size_t size);
/* Number with thousands separators: "1,234,567". Returns buf. */
char *tc_fmt_grouped(uint64_t v, char *buf, size_t size);
/* A finite double in the fewest significant digits (%g style) that strtod reads back
 * as the same double: 0.500660921, not 0.50066092100000004. size >= 32. Returns buf. */
char *tc_fmt_shortest(double v, char *buf, size_t size);

/* --- small string helpers (parse.c) --- */
char *tc_strdup(const char *s);     /* NULL-safe strdup */
char *tc_strndup(const char *s, size_t n);
char *tc_trim(char *s);             /* trims ASCII space in place, returns s */
bool tc_starts_with(const char *s, const char *prefix);

/* --- CRC-32 (crc32.c) --- */

/* CRC-32 (IEEE 802.3 polynomial, reflected, as zlib's crc32) of len bytes, continuing
 * from crc (0 to start): PCLMULQDQ folding where the CPU has it, else slicing-by-8. Any
 * alignment; thread-safe. */
uint32_t tc_crc32(uint32_t crc, const void *data, size_t len);
/* The same by the tables alone (the fallback, which the tests hold to zlib too). */
uint32_t tc_crc32_portable(uint32_t crc, const void *data, size_t len);
/* Whether tc_crc32 folds with PCLMULQDQ on this CPU. */
bool tc_crc32_has_clmul(void);

/* --- the CPUID instruction (cpuid.c) ---
 * Executes CPUID (leaf, subleaf) on the calling CPU: r[0..3] = EAX, EBX, ECX, EDX.
 * False, r zeroed, where there is no CPUID (not x86). Thread-safe. */
bool tc_cpuid_insn(uint32_t leaf, uint32_t subleaf, uint32_t r[4]);
/* Whether this runs as a guest of a hypervisor: CPUID.1:ECX[31] on x86, elsewhere
 * whether /sys/hypervisor/type exists. Thread-safe. */
bool tc_hypervisor_guest(void);

/* --- valgrind's client requests (valgrind.c) ---
 * The request numbers of valgrind.h and callgrind.h (valgrind 3.x, stable since 3.0):
 * the core's RUNNING_ON_VALGRIND, and a tool's requests numbered from the tool's two
 * letters (VG_USERREQ_TOOL_BASE). */
#define TC_VG_RUNNING_ON_VALGRIND 0x1001u
#define TC_VG_TOOL_BASE(a, b) (((unsigned)(a) & 0xff) << 24 | ((unsigned)(b) & 0xff) << 16)
/* One client request with one argument: valgrind's answer, or dflt natively (and on
 * every architecture but x86-64, where tacho makes no request). Thread-safe. */
uintptr_t tc_valgrind_request(uintptr_t dflt, uintptr_t req, uintptr_t a1);
/* The depth of valgrinds this runs on: 0 natively. Thread-safe. */
unsigned tc_valgrind_running(void);
/* callgrind's CALLGRIND_DUMP_STATS_AT(name): write the counts so far, the dump's trigger
 * naming name, and start again from zero; nothing natively. Thread-safe. */
void tc_valgrind_dump_at(const char *name);
/* The prefix of a region's mark in a dump's trigger: "tacho:b:TID:NAME" at a begin,
 * "tacho:e:TID:NAME" at an end. Written by regions (lib/regions/region-sim.c), read
 * back by the simulator (lib/sim/callgrind.c). */
#define TC_VG_REGION_MARK "tacho:"

/* --- hashing and the hash map (hashmap.c): the one map of tacho ---
 * Open addressing with linear probing from a 64-bit key to a 32-bit value (an index
 * into the caller's array, as a rule). Keys are mixed inside, so small integers (pids,
 * ids) spread as well as hashes do. A key may hold several values (tc_hmap_add): for a
 * key that is the hash of something larger (a string, a tuple), the caller walks the
 * values under it with tc_hmap_next and confirms each against its own data. Removal
 * moves the rest of the probe run back (no tombstones), so lookups stay short after
 * many removals. At most half full; grows by doubling. All-zero storage (TC_HMAP_INIT)
 * is an empty map. Not thread-safe; a map must not change during a walk. */
struct tc_hmap {
	uint64_t *keys;
	uint32_t *vals;       /* value + 1; 0 marks an empty slot */
	size_t cap, n;
};
#define TC_HMAP_INIT { NULL, NULL, 0, 0 }
void tc_hmap_init(struct tc_hmap *h);
/* Frees the table; h is an empty map again. */
void tc_hmap_exit(struct tc_hmap *h);
size_t tc_hmap_count(const struct tc_hmap *h);
/* A value of key (for a key that holds several, any one of them). */
bool tc_hmap_get(const struct tc_hmap *h, uint64_t key, uint32_t *val);
/* Sets key's value: replaces it when key holds one, else adds it. 0, -ENOMEM, or
 * -TACHO_EOUTOFRANGE for val UINT32_MAX (the one value a slot cannot hold). */
int tc_hmap_put(struct tc_hmap *h, uint64_t key, uint32_t val);
/* Adds (key, val) beside what key already holds. Returns as tc_hmap_put. */
int tc_hmap_add(struct tc_hmap *h, uint64_t key, uint32_t val);
/* Walks key's values: *pos = 0 to begin; true with *val for each, false at the end. */
bool tc_hmap_next(const struct tc_hmap *h, uint64_t key, size_t *pos, uint32_t *val);
/* Removes the pair (key, val); false when the map does not hold it. */
bool tc_hmap_del(struct tc_hmap *h, uint64_t key, uint32_t val);
/* splitmix64's finalizer (to combine fields into a key), and FNV-1a over bytes and
 * over a NUL-terminated string. */
uint64_t tc_hash_u64(uint64_t x);
uint64_t tc_hash_bytes(const void *data, size_t n);
uint64_t tc_hash_str(const char *s);

/* --- the string pool (strpool.c): interned strings ---
 * One copy of each distinct string, numbered 0, 1, 2, ... in the order first seen, at
 * an address that stays valid until tc_strpool_exit (copies live in chunks that never
 * move). Equal strings get the same id and the same pointer, so callers compare ids or
 * pointers instead of strings. All-zero storage (TC_STRPOOL_INIT) is an empty pool.
 * Not thread-safe. */
struct tc_strpool_chunk;
struct tc_strpool {
	char **strs;                      /* id -> copy */
	size_t n, cap;
	struct tc_hmap index;             /* tc_hash_str -> ids */
	struct tc_strpool_chunk *chunks;  /* newest first */
};
#define TC_STRPOOL_INIT { NULL, 0, 0, TC_HMAP_INIT, NULL }
void tc_strpool_init(struct tc_strpool *p);
/* Frees every copy; p is an empty pool again. */
void tc_strpool_exit(struct tc_strpool *p);
/* The id of s, added when new. 0, -ENOMEM (the pool is unchanged), -TACHO_EOUTOFRANGE
 * (2^32 - 1 strings). */
int tc_strpool_intern(struct tc_strpool *p, const char *s, uint32_t *id);
/* The pool's copy of s, added when new; NULL when out of memory. */
const char *tc_strpool_add(struct tc_strpool *p, const char *s);
/* The id of s if the pool holds it; never adds. */
bool tc_strpool_find(const struct tc_strpool *p, const char *s, uint32_t *id);
/* The string of id, or NULL for an id the pool never gave. */
const char *tc_strpool_str(const struct tc_strpool *p, uint32_t id);
size_t tc_strpool_count(const struct tc_strpool *p);

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
 * and of data sorted by tc_stats_sort (no allocation). p outside 0..100 is clamped to
 * the minimum or maximum; p NaN gives NaN. A NaN among the values makes the result NaN
 * (as numpy's percentile does): tc_stats_sort puts NaN last, where the _sorted
 * functions look for it. The median is p = 50: the middle value, or for an even n the
 * mean of the middle two. */
double tc_stats_percentile(const double *v, size_t n, double p);
double tc_stats_percentile_sorted(const double *sorted, size_t n, double p);
double tc_stats_mode(const double *v, size_t n, double width);
double tc_stats_mode_sorted(const double *sorted, size_t n, double width);
void tc_stats_sort(double *v, size_t n);   /* ascending, in place, NaN last */
/* The same percentile over u64 counts and ticks, in double (exact up to 2^53; the
 * interpolation works on the integer difference of neighbours). */
double tc_stats_percentile_u64(const uint64_t *v, size_t n, double p);
double tc_stats_percentile_sorted_u64(const uint64_t *sorted, size_t n, double p);
void tc_stats_sort_u64(uint64_t *v, size_t n);   /* ascending, in place */
/* The value of rank k (0-based) of v[0..n), k < n, as v would hold it sorted, in O(n)
 * on average; v is reordered. 0 when k >= n (v untouched). */
uint64_t tc_stats_select_u64(uint64_t *v, size_t n, size_t k);
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
/* v x scale, computed as v / 10^k when scale is 10^-k (a unit from nanoseconds to
 * milliseconds, say): the division by an exact power of ten rounds once, so that
 * 510947 ns is 0.510947 msec in every output, where the product with the inexact
 * 1e-6 gave 0.5109469999999999. */
double tc_apply_scale(double v, double scale);
/* --- end statistics --- */

/* --- two samples compared (welch.c) [owner: diff] ---
 * Student's t distribution and Welch's interval for the change of a mean, the
 * statistics of `tacho diff`. Pure functions of their arguments, thread-safe; undefined
 * results are NaN. */
/* The regularized incomplete beta function I_x(a, b), a, b > 0: 0 at x <= 0, 1 at
 * x >= 1, NaN for a or b not positive and finite. About 1e-14 relative. */
double tc_beta_inc(double a, double b, double x);
/* P(T <= t) for Student's t with df > 0 degrees of freedom (df may be fractional, and
 * INFINITY for the normal distribution); NaN for a df that is not positive. */
double tc_student_t_cdf(double t, double df);
/* The t with P(T <= t) = p: -INFINITY at p = 0, INFINITY at 1, NaN outside [0, 1] or
 * for a df that is not positive. The two-sided interval of confidence c takes
 * p = (1 + c) / 2 (df 10, c 0.95: 2.228). */
double tc_student_t_quantile(double p, double df);
/* Welch's interval for mean(after) - mean(before), neither variance assumed equal to
 * the other: change +- t * se, with se = sqrt(s_a^2/n_a + s_b^2/n_b), df by
 * Welch-Satterthwaite and t the (1 + confidence)/2 quantile. Where no run of either
 * side differed from another (se 0) the interval is the change itself, df INFINITY
 * and t 0. */
struct tc_welch {
	double change;   /* mean(after) - mean(before) */
	double se;       /* the change's standard error */
	double df;       /* Welch-Satterthwaite degrees of freedom */
	double t;        /* the quantile used */
	double lo, hi;   /* the interval */
};
/* 0; -EINVAL when a side has fewer than 2 values or confidence is not in (0, 1). */
int tc_welch_interval(const struct tc_welford *before, const struct tc_welford *after,
		      double confidence, struct tc_welch *out);
/* The change of a proportion between two binomial samples, x_b of n_b before and x_a
 * of n_a after (the share of a report's samples in one row): p_a - p_b with Newcombe's
 * hybrid score interval (Newcombe 1998, "Interval estimation for the difference between
 * independent proportions", Stat. Med. 17:873, method 10), built from each side's
 * Wilson score interval at the normal quantile z of (1 + confidence)/2. Unlike the
 * Wald interval it stays inside [-1, 1] and has a width where a share is 0 or 1 (a row
 * that appeared or vanished). */
struct tc_two_prop {
	double change;   /* p_a - p_b, a fraction */
	double z;        /* the quantile used */
	double lo, hi;   /* the interval, fractions */
};
/* 0; -EINVAL when a side has no trial (n 0), more successes than trials, or confidence
 * is not in (0, 1). */
int tc_two_prop_interval(uint64_t x_b, uint64_t n_b, uint64_t x_a, uint64_t n_a,
			 double confidence, struct tc_two_prop *out);
/* --- end two samples --- */

/* --- CPU lists (cpulist.c) [owner: stat] ---
 * Parses "0-3,8,10-11" (the kernel's cpulist format, perf's -C): numbers and ranges,
 * comma-separated, no spaces. Returns 0 and a sorted array of distinct CPU numbers
 * the caller free()s; -TACHO_EEMPTY, -TACHO_EPARSE (*diag points at the column),
 * -TACHO_EOUTOFRANGE (a number of 65536 or more), -ENOMEM. */
int tc_parse_cpu_list(const char *s, int **out, size_t *n, struct tacho_diag *diag);

/* --- the running system (procsys.c): one reader each, shared by every part --- */
/* The thread ids of process pid (0: this process) from /proc/PID/task, ascending.
 * 0 and a malloc'd array the caller free()s; -ESRCH when there is no such process
 * (or no thread is left of it), -EINVAL for a negative pid, -errno, -ENOMEM. */
int tc_proc_threads(pid_t pid, pid_t **out, size_t *n);
/* The online CPUs from /sys/devices/system/cpu/online ("0-3,6"), ascending. 0 and a
 * malloc'd array the caller free()s; -errno, -TACHO_EPARSE, -ENOMEM. */
int tc_online_cpus(int **out, size_t *n);
/* The path of a hierarchy in the text of /proc/PID/cgroup: controller NULL for the
 * cgroup v2 line ("0::/path"), else the v1 line whose controller list holds it as a
 * whole word ("4:cpu,cpuacct:/path"). Pure. 0, -ENOENT (no such line), -TACHO_EPARSE,
 * -ERANGE (longer than size). */
int tc_proc_cgroup_path(const char *text, size_t len, const char *controller, char *path,
			size_t size);
/* The cgroup v2 path of process pid ("/system.slice/cron.service"), read from
 * /proc/PID/cgroup. 0, -ENOENT (no v2 line: a v1-only machine), -ESRCH (no such
 * process), -errno, -TACHO_EPARSE, -ERANGE. */
int tc_proc_cgroup(pid_t pid, char *path, size_t size);
/* The container a cgroup path names, as the runtimes name their cgroups: the last
 * component that holds a 64-hex-digit id, bare ("/docker/ID", kubepods' "/pod.../ID")
 * or wrapped ("docker-ID.scope", "cri-containerd-ID.scope", "crio-ID.scope",
 * "libpod-ID.scope"). The id (64 lowercase hex digits) into id (65 bytes), or false
 * when the path names none. Pure. */
bool tc_cgroup_container_id(const char *path, char id[65]);

/* --- "did you mean" (suggest.c) ---
 * The nearest of a set of names to a word that named none: the optimal string
 * alignment distance (insertions, deletions, substitutions and swaps of two neighbours
 * cost 1), case-insensitive. A candidate counts when its distance is at most a third
 * of the word's length (at least 1, at most 3): "page-fault" finds "page-faults",
 * "xyz" finds nothing far away. On ties the first candidate offered stays. */
struct tc_nearest {
	const char *word;
	size_t len;
	unsigned best;      /* the best distance so far (UINT_MAX: none) */
	char *name;         /* the best candidate (owned), or NULL */
	bool oom;
};
void tc_nearest_init(struct tc_nearest *n, const char *word, size_t len);
/* Offers a candidate of len bytes (copied when it is the best so far). */
void tc_nearest_add(struct tc_nearest *n, const char *cand, size_t len);
/* The best candidate, or NULL when none is near enough. Owned by n. */
const char *tc_nearest_get(const struct tc_nearest *n);
void tc_nearest_exit(struct tc_nearest *n);
/* The distance itself (pure; words of up to 64 bytes, longer ones are UINT_MAX). */
unsigned tc_edit_distance(const char *a, size_t la, const char *b, size_t lb);

#endif /* TACHO_UTIL_H */
