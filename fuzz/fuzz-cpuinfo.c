/* fuzz-cpuinfo.c - libFuzzer target for util's /proc/cpuinfo reader (lib/util/cpuinfo.c):
 * a field of the first processor's block, a flag among its "flags", and the TSC rate
 * a guest's cpuinfo gives (lib/tsc), on any text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tsc/tsc.h"
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
	/* the TSC rate of a guest's cpuinfo: 0, or whole kHz below 10^6 MHz */
	double hz = tc_tsc_cpuinfo_hz(text, size);
	if (hz < 0 || hz >= 1e15 || (hz > 0 && hz != (double)(uint64_t)(hz / 1000) * 1000))
		abort();
	free(flags);
	return 0;
}
