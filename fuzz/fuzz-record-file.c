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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct tacho_profile *p;
	struct tc_recr r;
	struct tc_rec rec;
	FILE *f;

	/* the reader on the bytes as they are */
	if (tc_recr_init(&r, data, size, "fuzz", NULL) == 0)
		while (tc_recr_next(&r, &rec, "fuzz", NULL) == 1)
			if (rec.type == TC_REC_META) {
				size_t pos = 0;
				const char *k, *v;
				while (tc_rec_meta_next(&rec, &pos, &k, &v))
					;
			}

	/* the whole report through a file, as tacho report reads it. Mappings may name
	 * any path: symbolization of real files is part of what is fuzzed. */
	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/fuzz-record-file-%d.rec", (int)getpid());
	f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	if (tacho_profile_load(path, &p, NULL) == 0) {
		struct tacho_profile_row *rows;
		size_t n;
		FILE *null = fopen("/dev/null", "w");
		if (tacho_profile_rows(p, TACHO_SORT_LINE, true, &rows, &n) == 0)
			free(rows);
		if (tacho_profile_annotate(p, "main", &rows, &n) == 0)
			free(rows);
		if (null) {
			tacho_profile_write_folded(p, null);
			tacho_profile_write_script(p, null);
			fclose(null);
		}
		tacho_profile_free(p);
	}
	return 0;
}
