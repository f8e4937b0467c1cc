/* fuzz-perfdata.c - libFuzzer target for the perf.data reader and the report built on
 * it: any bytes read as perf's file or pipe format load (or fail with an error code)
 * and go through every report view (dimensions, filters, trees, annotate and every
 * export) without a crash; compressed records (perf record -z) inflate through libzstd
 * (corpus: faults-z-pipe.data), whose mutated streams fail as corrupt. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/perfdata.h"
#include "tacho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* A perf.data's tracing data carries tracepoint format texts, which the bytes mutate
 * freely (no checksum): libtraceevent 1.7 leaks a few bytes inside tep_parse_format on
 * some malformed texts (its parser, not tacho's; fuzz-payload.c found it too). Only
 * allocations made inside that parse are let go: a tep handle tacho failed to free
 * still leaks from tep_alloc and is reported. */
const char *__lsan_default_suppressions(void)
{
	return "leak:tep_parse_format\n";
}

static char path[64];

static void remove_file(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tc_perfdata_reader r;
	struct tacho_profile *p;
	struct tc_rec rec;
	FILE *f;

	/* the reader on the bytes as they are */
	if (tc_perfdata_reader_init(&r, data, size, "fuzz", NULL) == 0)
		while (tc_perfdata_reader_next(&r, &rec, "fuzz", NULL) == 1)
			;
	tc_perfdata_reader_exit(&r);

	/* the whole report through a file, as tacho report -i perf.data reads it */
	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/fuzz-perfdata-%d.data", (int)getpid());
		atexit(remove_file);
	}
	f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	if (tacho_profile_load(path, &p, NULL) == 0) {
		struct tacho_profile_row *rows;
		size_t n;
		FILE *null = fopen("/dev/null", "w");
		if (tacho_profile_rows(p, TACHO_SORT_LINE, true, &rows, &n, sizeof(*rows)) == 0)
			free(rows);
		if (tacho_profile_rows(p, TACHO_SORT_SYMBOL, false, &rows, &n, sizeof(*rows)) == 0)
			free(rows);
		if (tacho_profile_annotate(p, "main", &rows, &n, sizeof(*rows)) == 0)
			free(rows);
		/* the dimensions of the file (pid, tid, a CPU perf may not have recorded,
		 * time) in rows with a call tree, then under a filter of each */
		{
			static const enum tacho_sort keys[] = {
				TACHO_SORT_COMM, TACHO_SORT_TID, TACHO_SORT_CPU, TACHO_SORT_EVENT,
				TACHO_SORT_SYMBOL,
			};
			struct tacho_report_opts ro = { .sz = sizeof(ro), .sort = keys,
							.nsort = 5, .graph = TACHO_GRAPH_CALLEE };
			struct tacho_profile_filter flt = { .sz = sizeof(flt), .cpus = "0",
							    .tids = "1-100000", .time = "10%-90%" };

			if (tacho_profile_report_rows(p, &ro, &rows, &n, sizeof(*rows)) == 0)
				free(rows);
			if (tacho_profile_set_filter(p, &flt, NULL) == 0 &&
			    tacho_profile_report_rows(p, &ro, &rows, &n, sizeof(*rows)) == 0)
				free(rows);
		}
		if (null) {
			tacho_profile_write_annotate(p, "main", null, TACHO_FORMAT_TABLE, NULL);
			tacho_profile_write_folded(p, null);
			tacho_profile_write_script(p, null);
			tacho_profile_write_pprof(p, null);
			tacho_profile_write_flamegraph(p, null);
			tacho_profile_write_speedscope(p, null);
			fclose(null);
		}
		tacho_profile_free(p);
	}
	return 0;
}
