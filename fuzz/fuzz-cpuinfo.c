/* fuzz-cpuinfo.c - libFuzzer target for the /proc/cpuinfo field reader of the kernel's
 * CPU view (tc_cpuinfo_field in lib/cpu/sysfs.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "model name", "flags", "processor", "" };

	/* the text is not NUL-terminated: the reader must stay inside size bytes */
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char *v = tc_cpuinfo_field((const char *)data, size, keys[i]);
		if (v && strlen(v) > size)
			abort();
		free(v);
	}
	return 0;
}
