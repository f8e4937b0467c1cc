/* fuzz-msr-assign.c - libFuzzer target for the FIELD=VAL parser of the MSR part
 * (tacho_msr_assign), and the name/address lookup it follows in the command. The first
 * byte picks a register of the table (or none: an address the table does not know), the
 * next eight are the base value, the rest is the text. Checks the parser's promises: an
 * error leaves *out alone, names a column inside the text (or just after it) and a
 * message; assignments change only the bits of the fields they name, and a whole value is
 * never one that sets reserved bits; the lookup never crashes and finds a register whose
 * address it returns. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msr/msr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct tacho_msr *m = NULL, *found = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	uint64_t base = 0, out = 0x1234, mask;
	uint32_t address;
	size_t n = tacho_msr_count();
	char *s;
	int r;

	if (size < 9 || size > 4096)
		return 0;
	if (data[0] < n)
		m = tacho_msr_at(data[0]);
	memcpy(&base, data + 1, sizeof(base));
	s = malloc(size - 9 + 1);
	if (!s)
		return 0;
	memcpy(s, data + 9, size - 9);
	s[size - 9] = '\0';

	r = tacho_msr_assign(m, base, s, &out, &d);
	if (r) {
		if (out != 0x1234 || !d.message[0] || d.column > strlen(s) + 1)
			abort();
	} else if (strchr(s, '=')) {
		/* FIELD=VAL touches only the named fields */
		mask = tc_msr_fields_mask(m);
		if ((out ^ base) & ~mask)
			abort();
	} else if (m && m->rest_reserved && (out & ~tc_msr_fields_mask(m))) {
		abort();
	}

	d = (struct tacho_diag){ .sz = sizeof(d) };
	r = tacho_msr_lookup(s, m ? &(struct tacho_msr_cpu){ TACHO_VENDOR_INTEL, 6, 0x55, false } :
			     NULL, &found, &address, &d);
	if (r == 0 && found && found->address != address)
		abort();
	if (r && !d.message[0])
		abort();
	free(s);
	return 0;
}
