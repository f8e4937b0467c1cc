/* fuzz-cpulist.c - libFuzzer target for the CPU-list parser of -C and sysfs
 * (tc_parse_cpu_list): a list it accepts gives sorted, distinct CPUs, exactly those
 * its ranges name (checked against a table of every possible CPU). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char seen[65536];

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
		/* exactly the CPUs of the ranges as written (the list is well formed) */
		memset(seen, 0, sizeof(seen));
		for (char *p = s; *p; p += *p == ',') {
			unsigned long a = strtoul(p, &p, 10), b = a;
			if (*p == '-')
				b = strtoul(p + 1, &p, 10);
			for (unsigned long c = a; c <= b && c < sizeof(seen); c++)
				seen[c] = 1;
		}
		for (size_t i = 0; i < n; i++)
			if (cpus[i] < 0 || (size_t)cpus[i] >= sizeof(seen) || !seen[cpus[i]]--)
				abort();
		if (memchr(seen, 1, sizeof(seen)))
			abort();
		free(cpus);
	}
	free(s);
	return 0;
}
