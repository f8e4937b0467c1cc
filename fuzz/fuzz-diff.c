/* fuzz-diff.c - libFuzzer target for what `tacho diff` reads: the strict JSON reader
 * (tc_json_read) on the whole input, and the comparison of two stat documents
 * (tacho_diff_stat) on the input cut at its first NUL byte (the whole input twice when
 * there is none). A document either is refused with a message and a line inside the
 * text, or compares, and then every writer runs on it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/json-read.h"
#include "tacho/diff.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned lines_of(const char *s, size_t n)
{
	unsigned lines = 1;

	for (size_t i = 0; i < n; i++)
		lines += s[i] == '\n';
	return lines;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *nul = memchr(data, '\0', size);
	size_t alen = nul ? (size_t)(nul - text) : size;
	const char *b = nul ? nul + 1 : text;
	size_t blen = nul ? size - alen - 1 : size;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_diff *diff;
	struct tc_jv *v;
	FILE *f;

	if (tc_json_read(text, size, "fuzz", &v, &d) == 0)
		tc_jv_free(v);
	else if (d.line < 1 || d.line > lines_of(text, size))
		abort();
	if (tacho_diff_stat(text, alen, "a", b, blen, "b", NULL, &diff, &d) != 0) {
		if (!d.message[0])
			abort();
		return 0;
	}
	f = fopen("/dev/null", "w");
	if (f) {
		tacho_diff_set_limit(diff, NULL, 1.0);
		tacho_diff_write(diff, f, TACHO_FORMAT_TABLE, NULL);
		tacho_diff_write(diff, f, TACHO_FORMAT_CSV, NULL);
		tacho_diff_write(diff, f, TACHO_FORMAT_JSON, NULL);
		tacho_diff_write_markdown(diff, f);
		fclose(f);
	}
	tacho_diff_free(diff);
	return 0;
}
