/* fuzz-sdt.c - libFuzzer target for the SDT note reader (tacho list sdt, sdt: events):
 * any bytes give a list of probe sites or an error, never a crash or a read past the
 * end; every site has its strings, and an offset or the "none" marker. Seeds: an object
 * file and a small shared object with one probe each (fuzz/corpus/sdt). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_sdt_list *l = NULL;
	void *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	/* libelf may write into a memory image (elf_memory): a copy of the input */
	memcpy(copy, data, size);
	if (tc_sdt_list_mem(copy, size, &l) == 0) {
		for (size_t i = 0; i < tacho_sdt_list_count(l); i++) {
			const struct tacho_sdt_probe *p = tacho_sdt_list_probe(l, i);
			if (!p || !p->provider || !p->name || !p->args)
				abort();
			(void)strlen(p->provider);
			(void)strlen(p->args);
		}
		tacho_sdt_list_free(l);
	}
	free(copy);
	return 0;
}
