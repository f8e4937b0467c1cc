/* fuzz-cpulist.c - libFuzzer target for the CPU-list parser of -C (tc_parse_cpu_list). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	char *s = malloc(size + 1);
	int *cpus;
	size_t n;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (tc_parse_cpu_list(s, &cpus, &n, &d) == 0) {
		/* sorted, distinct, in range */
		for (size_t i = 1; i < n; i++)
			if (cpus[i] <= cpus[i - 1])
				abort();
		free(cpus);
	}
	free(s);
	return 0;
}
