/* rec-repair.h - for the fuzz targets that read record files (fuzz-record-file.c,
 * fuzz-trace-file.c): mutated bytes nearly always fail the checksums, so that the
 * decoders behind them would never be reached; rec_repair copies the bytes and repairs
 * every checksum it can (the header's and each record's whose size fits). */
#ifndef TACHO_FUZZ_REC_REPAIR_H
#define TACHO_FUZZ_REC_REPAIR_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/recfile.h"

/* A malloc'd copy of data[0..size) with its checksums repaired, or NULL. */
static inline uint8_t *rec_repair(const uint8_t *data, size_t size)
{
	uint8_t *c = malloc(size ? size : 1);
	uint32_t crc, rsize;
	size_t off = TC_REC_FILE_HDR;

	if (!c)
		return NULL;
	memcpy(c, data, size);
	if (size < TC_REC_FILE_HDR || memcmp(c, TC_REC_MAGIC, 8))
		return c;
	crc = tc_crc32(0, c, 24);
	memcpy(c + 24, &crc, 4);
	while (off + TC_REC_HDR <= size) {
		memcpy(&rsize, c + off + 4, 4);
		if (rsize < TC_REC_HDR || rsize % 8 || rsize > size - off)
			break;
		crc = tc_crc32(0, c + off + 4, rsize - 4);
		memcpy(c + off, &crc, 4);
		off += rsize;
	}
	return c;
}

#endif
