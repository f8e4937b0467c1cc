/* fuzz-trace-file.c - libFuzzer target for tacho trace's loader and its views: any bytes
 * load (or fail with an error code), and a loaded trace writes its text, CSV, JSON,
 * Chrome and SVG views without a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample/recfile.h"
#include "timeline/timeline.h"
#include "tacho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Mutated bytes nearly always fail the checksums: the second pass repairs every checksum
 * it can (the header's and each record's whose size fits) before loading, so that the
 * loader behind them is reached (as fuzz-record-file.c does). */
static uint8_t *repair(const uint8_t *data, size_t size)
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

static void one(const uint8_t *data, size_t size)
{
	struct tacho_timeline *t;
	/* the reader keeps pointers into the bytes: give it 8-aligned ones, as a file's */
	uint64_t *copy = malloc(size ? (size + 7) / 8 * 8 : 8);
	FILE *null;

	if (!copy)
		return;
	memcpy(copy, data, size);
	if (tc_timeline_load_mem(copy, size, "fuzz", &t, NULL) == 0) {
		null = fopen("/dev/null", "w");
		if (null) {
			tacho_timeline_write(t, null, TACHO_FORMAT_TABLE, NULL);
			tacho_timeline_write(t, null, TACHO_FORMAT_CSV, NULL);
			tacho_timeline_write(t, null, TACHO_FORMAT_JSON, NULL);
			tacho_timeline_write_chrome(t, null);
			tacho_timeline_write_svg(t, null);
			fclose(null);
		}
		tacho_timeline_count(t, "a", 0);
		tacho_timeline_free(t);
	}
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed = repair(data, size);

	one(data, size);
	if (fixed) {
		one(fixed, size);
		free(fixed);
	}
	return 0;
}
