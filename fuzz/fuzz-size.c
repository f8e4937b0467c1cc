/* fuzz-size.c - libFuzzer target for the size parser of --min and --max (tc_parse_size):
 * any text either parses to a value whose decimal form and unit read back the same, or
 * fails with a column inside the text. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_diag d;
	char *s = malloc(size + 1), again[32];
	uint64_t v, w;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	if (tc_parse_size(s, &v, &d) == 0) {
		/* bytes written back in decimal parse to the same value */
		snprintf(again, sizeof(again), "%" PRIu64, v);
		if (tc_parse_size(again, &w, NULL) != 0 || w != v)
			abort();
	} else if (d.column < 1 || d.column > strlen(s) + 1) {
		abort();
	}
	free(s);
	return 0;
}
