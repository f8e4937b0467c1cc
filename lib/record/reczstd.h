/* reczstd.h - zstd for the record file's compressed user stacks (ZSTACK records,
 * docs/record-format.md): libzstd is loaded at the first use (dlopen), as tacho's other
 * optional libraries are. One stream runs through a file's ZSTACK records: each record
 * holds what the compressor gave out for one sample's registers and stack, flushed, so
 * that a later stack refers back to the earlier ones (they differ in a few words). */
#ifndef TACHO_RECORD_RECZSTD_H
#define TACHO_RECORD_RECZSTD_H

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"

/* Whether libzstd is there. False, with *why (may be NULL) saying why in a sentence of
 * its own, when it cannot be loaded or lacks a function, or when TACHO_NO_ZSTD=1 is in
 * the environment (the tests' seam: tacho as on a machine without libzstd). */
bool tc_zs_available(const char **why);

/* A compression stream, or NULL (no libzstd, no memory). Level as zstd's. */
void *tc_zs_cstream_new(int level);
void tc_zs_cstream_free(void *cs);
/* A growing buffer of compressed bytes (free buf when done). */
struct tc_zbuf {
	unsigned char *buf;
	size_t len, cap;
};
/* Compresses n bytes of src (as many pieces as the caller has) into the stream; with
 * flush set, gives out everything so far: what follows in out (appended). 0, -ENOMEM,
 * or -EIO (zstd failed: the caller starts a new stream). */
int tc_zs_compress(void *cs, const void *src, size_t n, bool flush, struct tc_zbuf *out);

/* A decompression stream, or NULL; it refuses a window past 16 MiB (a crafted stream's
 * memory). */
void *tc_zs_dstream_new(void);
void tc_zs_dstream_free(void *ds);
/* Starts ds over (a new stream begins). */
void tc_zs_dstream_reset(void *ds);
/* Inflates the n bytes at src, the next piece of ds's stream, into dst: 0 when it gives
 * exactly want bytes; 1 when it gives fewer, 2 more (at most cap, then it stops: the
 * caller gives cap > want to see a lie), -EIO with *err zstd's word for a stream it
 * cannot read. */
int tc_zs_decompress(void *ds, const void *src, size_t n, void *dst, size_t want,
		     size_t cap, const char **err);

#endif
