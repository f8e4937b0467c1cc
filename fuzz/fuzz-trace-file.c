/* fuzz-trace-file.c - libFuzzer target for tacho trace's loader and its views: any bytes
 * load (or fail with an error code), and a loaded trace writes its text, CSV, JSON,
 * Chrome and SVG views and its summary without a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/recfile.h"
#include "rec-repair.h"
#include "timeline/timeline.h"
#include "tacho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* The corpus's syscalls.trace carries tracepoint format texts, which the bytes mutate
 * (rec_repair makes their checksums hold again): libtraceevent 1.7 leaks a few bytes
 * inside tep_parse_format on some malformed texts (its parser, not tacho's; found by
 * fuzz-payload and fuzz-perfdata too, suppressed alike). A tep handle tacho failed to
 * free still leaks from tep_alloc and is reported. */
const char *__lsan_default_suppressions(void)
{
	return "leak:tep_parse_format\n";
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
			tacho_timeline_write_html(t, null);
			tacho_timeline_write_summary(t, null);
			fclose(null);
		}
		tacho_timeline_count(t, "a", 0);
		tacho_timeline_free(t);
	}
	free(copy);
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
