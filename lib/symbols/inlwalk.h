/* inlwalk.h - the functions inlined at each address of a binary, from its DWARF
 * (lib/symbols/inlwalk.c): one frame as libdw gives it, and the walk of every unit that
 * makes a binary's inline cache. Private to the symbols part. */
#ifndef TACHO_SYMBOLS_INLWALK_H
#define TACHO_SYMBOLS_INLWALK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "util/elfutils.h"

#include "symbols/symbols.h"

/* The frame of inlined subroutine die of unit cu: its function's name, the file and
 * line of its call (names point into the DWARF, which outlives the frame). */
void tc_inl_fill(Dwarf_Die *die, Dwarf_Die *cu, struct tc_syminl *out);

/* The inline cache's bytes for module mod (module address = ELF address + modbias),
 * from one walk of every unit, stamped with the binary's build-id (bid, bidlen): a
 * malloc'd image for tc_inlcache_parse. 0, -ENOENT (no DWARF, or no address range
 * table: a debug file installed later is read), -errno. */
int tc_inlwalk_build(Dwfl_Module *mod, uint64_t modbias, const uint8_t *bid, size_t bidlen,
		     void **image, size_t *len);

/* Appends x to the array *v of *n entries (room for *cap, grown by doubling). 0 or
 * -ENOMEM (then *v is as it was). */
static inline int tc_u64_push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		uint64_t *p = realloc(*v, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

/* qsort's order of uint64_t values, ascending. */
static inline int tc_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
