/* fuzz-procfs.c - libFuzzer target for the engine's procfs parsers (CapEff of
 * /proc/self/status, a mount point in /proc/mounts; /proc/cpuinfo is fuzz-cpuinfo's):
 * any text gives an answer or an error, never a crash or a read past the end; a found
 * mount point always fits its buffer. */
#include <stdlib.h>
#include <string.h>

#include "perf/perf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char dir[16];
	uint64_t caps;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	(void)tc_parse_capeff(text, &caps);
	memset(dir, 'Z', sizeof(dir));
	if (tc_mounts_find(text, "tracefs", dir, sizeof(dir)) == 0 &&
	    !memchr(dir, '\0', sizeof(dir)))
		abort();
	free(text);
	return 0;
}
