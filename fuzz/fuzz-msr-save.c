/* fuzz-msr-save.c - libFuzzer target for the MSR save-file parser
 * (tacho_msr_save_parse). Checks its promises: an error leaves *out NULL and names a
 * line of the text; a file that parses is written back (tacho_msr_save_write) as text
 * that parses again to a set written the same way, byte for byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msr/msr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *written(const struct tacho_msr_set *set, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		abort();
	if (tacho_msr_save_write(set, f))
		abort();
	fclose(f);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_msr_set *set = (struct tacho_msr_set *)&set, *again = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	char *a, *b;
	size_t alen, blen, lines = 1;
	int r;

	if (size > 65536)
		return 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	r = tacho_msr_save_parse((const char *)data, size, "fuzz", &set, &d);
	if (r) {
		if (set || !d.message[0] || d.line > lines)
			abort();
		return 0;
	}
	a = written(set, &alen);
	if (tacho_msr_save_parse(a, alen, "again", &again, NULL))
		abort();
	b = written(again, &blen);
	if (alen != blen || memcmp(a, b, alen))
		abort();
	if (tacho_msr_set_count(set) != tacho_msr_set_count(again))
		abort();
	free(a);
	free(b);
	tacho_msr_set_free(set);
	tacho_msr_set_free(again);
	return 0;
}
