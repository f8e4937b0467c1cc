/* fuzz-cpuinfo.c - libFuzzer target for util's /proc/cpuinfo reader (lib/util/cpuinfo.c):
 * a field of the first processor's block, and a flag among its "flags", on any text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "model name", "flags", "processor", "" };
	const char *text = (const char *)data;
	char *flags;
	bool has;

	/* the text is not NUL-terminated: the reader must stay inside size bytes */
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char *v = tc_cpuinfo_field(text, size, keys[i]);
		if (v && strlen(v) > size)
			abort();
		free(v);
	}
	/* the two ways to ask for a flag agree */
	flags = tc_cpuinfo_field(text, size, "flags");
	has = tc_cpuinfo_has_flag(text, size, "constant_tsc");
	if (flags && !memchr(data, '\0', size) &&
	    has != tc_cpuinfo_flags_has(flags, "constant_tsc"))
		abort();
	if (!flags && has)
		abort();
	(void)tc_cpuinfo_has_flag(text, size, "x");
	free(flags);
	return 0;
}
