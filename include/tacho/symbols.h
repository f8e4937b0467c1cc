/* tacho/symbols.h - libtacho's public interface: symbols: the build-id cache, copies of
 * the binaries recordings mapped, from which reports name the functions of binaries
 * rebuilt or removed since (tacho buildid-cache).
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_SYMBOLS_H
#define TACHO_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/output.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- The build-id cache (docs/buildid-cache.md) --- */
/* Copies of the binaries recordings mapped, by build-id, in DIR/.build-id/xx/rest/ (the
 * file as "elf", the path it had as "path"): a report looks there (and in perf's
 * ~/.debug) when a binary on disk has another build-id than the one recorded, or is
 * gone. */

/* The cache's folder: $XDG_CACHE_HOME/tacho, else $HOME/.cache/tacho, into buf.
 * 0, -ENOENT (neither is set to an absolute path), -ENAMETOOLONG, -EINVAL. Reads the
 * environment: not thread-safe with setenv. */
TACHO_API int tacho_buildid_cache_dir(char *buf, size_t size);

/* Lists the cache at dir, by build-id:
 *  - TACHO_FORMAT_TABLE: "# N binaries, SIZE in DIR", then build-id, size, when last
 *    used (stored, or found in the cache by a recording) and path per entry;
 *  - TACHO_FORMAT_CSV: build_id, path, bytes, used (Unix seconds);
 *  - TACHO_FORMAT_JSON: {"version": 1, "dir", "bytes", "entries": [{"build_id",
 *    "path", "bytes", "used"}]} (docs/schemas.md).
 * A folder that does not exist is an empty cache. 0, -EINVAL, -ENOMEM, -errno of
 * reading it, -EIO. */
TACHO_API int tacho_buildid_cache_write(const char *dir, FILE *f, enum tacho_format fmt,
					const struct tacho_write_opts *opts);

/* Removes the entries of the cache at dir that are what: a path (starting with '/': the
 * copies of that file, every build-id) or a build-id (40 hex digits, or its first 8 or
 * more). *removed (may be NULL): how many. 0, -ENOENT (none matched), -EINVAL (neither
 * form), -errno with *diag. */
TACHO_API int tacho_buildid_cache_remove(const char *dir, const char *what, unsigned *removed,
					 struct tacho_diag *diag);

/* Removes the least recently used entries of the cache at dir until it holds at most
 * max_bytes (0: empties it, the report's copy of the kernel's symbols too). *removed
 * and *freed (may be NULL): how many and how many bytes. 0, -EINVAL, -errno with
 * *diag. */
TACHO_API int tacho_buildid_cache_prune(const char *dir, uint64_t max_bytes, unsigned *removed,
					uint64_t *freed, struct tacho_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_SYMBOLS_H */
