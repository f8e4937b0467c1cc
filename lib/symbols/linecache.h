/* linecache.h - a binary's source lines decoded once and kept by build-id in the
 * build-id cache (docs/buildid-cache.md): a file of sorted address ranges, each with its
 * source file and line, that later reports map instead of inflating and parsing the
 * binary's DWARF line tables again. The file (version 1, native byte order):
 *   header   magic "TCLINES\0", version, build-id, counts, CRC-32 of what follows
 *   ranges   n x { u64 addr; u32 file; u32 line }, addresses strictly increasing: the
 *            range of entry i runs up to entry i + 1's address; file TC_LC_NONE marks
 *            a range without a line (and the end of the last one)
 *   files    m x { u32 name; u32 dir } offsets into the strings (dir TC_LC_NONE: none)
 *   strings  NUL-terminated, the last byte a NUL
 * Nothing in the file is trusted: it is read only when every count, offset and order
 * checks out (tc_linecache_parse). */
#ifndef TACHO_SYMBOLS_LINECACHE_H
#define TACHO_SYMBOLS_LINECACHE_H

#include <stddef.h>
#include <stdint.h>

#define TC_LC_NONE UINT32_MAX

struct tc_linecache;

/* Checks len bytes at buf as a line cache of the binary with build-id bid (bidlen bytes,
 * at most TC_BUILD_ID_MAX; buf aligned to 8 bytes) and makes a table that answers from them (buf is not copied:
 * it must outlive the table). 0 and *out, or -TACHO_EPARSE and *why, a phrase saying
 * what is wrong (a static string), or -ENOMEM. */
int tc_linecache_parse(const void *buf, size_t len, const uint8_t *bid, size_t bidlen,
		       struct tc_linecache **out, const char **why);
/* Maps the regular file open at fd and parses it as tc_linecache_parse does; the
 * mapping goes with the table. 0, -TACHO_EPARSE (*why), -errno. */
int tc_linecache_map(int fd, const uint8_t *bid, size_t bidlen, struct tc_linecache **out,
		     const char **why);
void tc_linecache_free(struct tc_linecache *c);   /* NULL-safe */
/* The source file, line and comp_dir at addr (pointers into the table, valid until it
 * is freed): 1, or 0 (all NULL/0) when the table has no line there. */
int tc_linecache_find(const struct tc_linecache *c, uint64_t addr, const char **file,
		      int *line, const char **comp_dir);
/* The number of ranges (for tests and the debug line). */
size_t tc_linecache_count(const struct tc_linecache *c);

/* Building one: ranges added in strictly increasing address order, file NULL (or line
 * <= 0) for a range without a line; a range with the same answer as the one before
 * merges into it. The last range added must be one without a line (the end of the one
 * before). */
struct tc_linebuild;
int tc_linebuild_new(struct tc_linebuild **out);
void tc_linebuild_free(struct tc_linebuild *b);   /* NULL-safe */
/* 0, -EINVAL (addr not above the last one's), -ENOMEM, -TACHO_EOUTOFRANGE. */
int tc_linebuild_add(struct tc_linebuild *b, uint64_t addr, const char *file, int line,
		     const char *comp_dir);
/* The file's bytes for build-id bid, malloc'd into *buf (the caller frees). 0, -EINVAL
 * (a build-id longer than TC_BUILD_ID_MAX, or a last range with a line), -ENOMEM. */
int tc_linebuild_image(const struct tc_linebuild *b, const uint8_t *bid, size_t bidlen,
		       void **buf, size_t *len);

#endif
