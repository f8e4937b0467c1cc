/* inlcache.h - the functions inlined at each address of a binary, found once in its
 * DWARF and kept by build-id in the build-id cache (docs/buildid-cache.md) beside the
 * line cache: later reports map this file instead of inflating the binary's debug
 * sections and walking its scopes again (tc_symdso_inlines). The file (version 1,
 * native byte order):
 *   header   magic "TCINLNS\0", version, build-id, counts, CRC-32 of what follows
 *   ranges   n x { u64 addr; u32 first; u32 n }, addresses strictly increasing: the
 *            range of entry i runs up to entry i + 1's address, and has the n frames
 *            from frame first on, innermost first; n 0 marks a range where nothing is
 *            inlined (and the end of the last one)
 *   frames   m x { u32 name; u32 call_file; u32 call_line } offsets into the strings
 *            (TC_IC_NONE: none; call_line 0: unknown)
 *   strings  NUL-terminated, the last byte a NUL
 * Nothing in the file is trusted: it is read only when every count, offset and order
 * checks out (tc_inlcache_parse). */
#ifndef TACHO_SYMBOLS_INLCACHE_H
#define TACHO_SYMBOLS_INLCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/symbols.h"

#define TC_IC_NONE UINT32_MAX
/* The most frames one range may have. */
#define TC_IC_MAX_CHAIN 64

struct tc_inlcache;

/* Checks len bytes at buf as an inline cache of the binary with build-id bid (bidlen
 * bytes, at most TC_BUILD_ID_MAX; buf aligned to 8 bytes) and makes a table that
 * answers from them (buf is not copied: it must outlive the table). 0 and *out, or
 * -TACHO_EPARSE and *why, a phrase saying what is wrong (a static string), or
 * -ENOMEM. */
int tc_inlcache_parse(const void *buf, size_t len, const uint8_t *bid, size_t bidlen,
		      struct tc_inlcache **out, const char **why);
/* Maps the regular file open at fd and parses it as tc_inlcache_parse does; the
 * mapping goes with the table. 0, -TACHO_EPARSE (*why), -errno. */
int tc_inlcache_map(int fd, const uint8_t *bid, size_t bidlen, struct tc_inlcache **out,
		    const char **why);
void tc_inlcache_free(struct tc_inlcache *c);   /* NULL-safe */
/* The functions inlined at addr, innermost first, into out (at most max; pointers
 * into the table, valid until it is freed): their number, 0 when the table has none
 * there. */
int tc_inlcache_find(const struct tc_inlcache *c, uint64_t addr, struct tc_syminl *out,
		     size_t max);
/* The number of ranges (for tests and the debug line). */
size_t tc_inlcache_count(const struct tc_inlcache *c);

/* Building one: ranges added in strictly increasing address order, each with its
 * chain (n 0: nothing inlined); a range with the same chain as the one before merges
 * into it. The last range added must have none (the end of the one before). */
struct tc_inlbuild;
int tc_inlbuild_new(struct tc_inlbuild **out);
void tc_inlbuild_free(struct tc_inlbuild *b);   /* NULL-safe */
/* 0, -EINVAL (addr not above the last one's, or n above TC_IC_MAX_CHAIN), -ENOMEM,
 * -TACHO_EOUTOFRANGE. */
int tc_inlbuild_add(struct tc_inlbuild *b, uint64_t addr, const struct tc_syminl *chain,
		    size_t n);
/* The file's bytes for build-id bid, malloc'd into *buf (the caller frees). 0, -EINVAL
 * (a build-id longer than TC_BUILD_ID_MAX, or a last range with a chain), -ENOMEM. */
int tc_inlbuild_image(const struct tc_inlbuild *b, const uint8_t *bid, size_t bidlen,
		      void **buf, size_t *len);

#endif
