/* fuzz-record-file.c - libFuzzer target for the record file reader and the report built
 * on it: any bytes load (or fail with an error code) and aggregate without a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/recfile.h"
#include "rec-repair.h"
#include "tacho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* Its corpus's crash-tpformat-subscript.rec carries tracepoint format texts, which the
 * bytes mutate: libtraceevent 1.7 leaks a few bytes inside tep_parse_format on some
 * malformed texts (its parser, not tacho's; suppressed alike in fuzz-trace-file,
 * fuzz-payload and fuzz-perfdata). */
const char *__lsan_default_suppressions(void)
{
	return "leak:tep_parse_format\n";
}

static void one(const uint8_t *data, size_t size);

static char path[64];
static volatile uint64_t sink;

static void remove_file(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed = rec_repair(data, size);

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
		while (tc_record_reader_next(&r, &rec, "fuzz", NULL) == 1) {
			if (rec.type == TC_REC_META) {
				size_t pos = 0;
				const char *k, *v;
				while (tc_rec_meta_next(&rec, &pos, &k, &v))
					;
			}
			/* what the reader built is read to its ends: ASan sees a chain
			 * or stack that runs past its memory */
			if (rec.type == TC_REC_SAMPLE && rec.u.sample.nr)
				sink ^= rec.u.sample.chain[0] ^ rec.u.sample.chain[rec.u.sample.nr - 1];
			if (rec.type == TC_REC_USTACK && rec.u.ustack.stack_len)
				sink ^= rec.u.ustack.stack[rec.u.ustack.stack_len - 1];
		}
	tc_record_reader_exit(&r);

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
			tacho_profile_write_annotate(p, "main", null, TACHO_FORMAT_TABLE, NULL);
			tacho_profile_write_folded(p, null);
			tacho_profile_write_script(p, null);
			tacho_profile_write_script_json(p, null);
			tacho_profile_write_pprof(p, null);
			tacho_profile_write_flamegraph(p, null);
			tacho_profile_write_speedscope(p, null);
			fclose(null);
		}
		tacho_profile_free(p);
	}
}
