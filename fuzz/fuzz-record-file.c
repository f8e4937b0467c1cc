/* fuzz-record-file.c - libFuzzer target for the record file reader and the report built
 * on it: any bytes load (or fail with an error code) and aggregate without a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sample/recfile.h"
#include "tacho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Mutated bytes nearly always fail the checksums, so that the decoders behind them would
 * never be reached: the second pass repairs every checksum it can (the header's and
 * each record's whose size fits) before reading. */
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

static void one(const uint8_t *data, size_t size);

static char path[64];

static void remove_file(void)
{
	unlink(path);
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

static void one(const uint8_t *data, size_t size)
{
	struct tacho_profile *p;
	struct tc_record_reader r;
	struct tc_rec rec;
	FILE *f;

	/* the reader on the bytes as they are */
	if (tc_record_reader_init(&r, data, size, "fuzz", NULL) == 0)
		while (tc_record_reader_next(&r, &rec, "fuzz", NULL) == 1)
			if (rec.type == TC_REC_META) {
				size_t pos = 0;
				const char *k, *v;
				while (tc_rec_meta_next(&rec, &pos, &k, &v))
					;
			}

	/* the whole report through a file, as tacho report reads it. Mappings may name
	 * any path: symbolization of real files is part of what is fuzzed. */
	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/fuzz-record-file-%d.rec", (int)getpid());
		atexit(remove_file);
	}
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(data, 1, size, f);
	fclose(f);
	if (tacho_profile_load(path, &p, NULL) == 0) {
		struct tacho_profile_row *rows;
		size_t n;
		FILE *null = fopen("/dev/null", "w");
		if (tacho_profile_rows(p, TACHO_SORT_LINE, true, &rows, &n, sizeof(*rows)) == 0)
			free(rows);
		if (tacho_profile_annotate(p, "main", &rows, &n, sizeof(*rows)) == 0)
			free(rows);
		if (null) {
			tacho_profile_write_folded(p, null);
			tacho_profile_write_script(p, null);
			fclose(null);
		}
		tacho_profile_free(p);
	}
}
