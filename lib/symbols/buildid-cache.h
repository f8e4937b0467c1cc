/* buildid-cache.h - the build-id cache inside the library: what a recording notes as it
 * sees mapped files, the copies it makes at its end, and the look-up of a copy by the
 * report (docs/buildid-cache.md; the command's calls are in tacho/symbols.h). */
#ifndef TACHO_SYMBOLS_BUILDID_CACHE_H
#define TACHO_SYMBOLS_BUILDID_CACHE_H

#include <stdint.h>

#include "symbols/symbols.h"

/* The policy: no file over 64 MiB is copied, and no copy is made once the cache holds
 * 1 GiB (record says so; nothing is removed behind the user's back). */
#define TC_BIDCACHE_FILE_MAX (64ull << 20)
#define TC_BIDCACHE_MAX (1ull << 30)

/* The files with a build-id that a recording mapped, each build-id once. */
struct tc_bidcache;
int tc_bidcache_new(struct tc_bidcache **out);
void tc_bidcache_free(struct tc_bidcache *c);   /* NULL-safe */
/* Notes a mapped file (kept only for a path of a file, with a build-id). */
void tc_bidcache_note(struct tc_bidcache *c, const char *path, const uint8_t *bid,
		      unsigned len);
/* Copies each noted file that is not in the cache at dir yet, is still the file it was
 * (same build-id), and fits the policy; the ones already there are marked as used (for
 * pruning). say tells what was left out and why. *files, *bytes: what was copied. 0 or
 * -errno of a copy that failed (said). */
int tc_bidcache_store(struct tc_bidcache *c, const char *dir,
		      void (*say)(void *arg, const char *fmt, ...), void *arg,
		      unsigned *files, uint64_t *bytes);
/* The path of a copy of the binary with this build-id in tacho's cache (the default
 * folder) or perf's ~/.debug, into buf. 0 or -ENOENT. */
int tc_bidcache_lookup(const uint8_t *bid, unsigned len, char *buf, size_t size);
/* The folder of build-id bid's entry in tacho's cache, DIR/.build-id/xx/rest, into buf
 * (not created): it holds the copy ("elf"), its path ("path") and the source lines
 * decoded from the binary or its debug file ("lines": symbols/linecache.h). 0, -ENOENT
 * (no cache folder, no build-id or one longer than TC_BUILD_ID_MAX), -ENAMETOOLONG. */
int tc_bidcache_entry_dir(const uint8_t *bid, size_t len, char *buf, size_t size);

/* Maps the cache file fd (a line or an inline cache beside a binary's entry) read-only
 * and private, so that a copy replaced by rename leaves the mapping whole: a regular
 * file of at least min bytes. 0 and *map, *len (munmap them); -errno, or -TACHO_EPARSE
 * with *why saying what the file is not. */
int tc_bidcache_map_file(int fd, size_t min, void **map, size_t *len, const char **why);

#endif
