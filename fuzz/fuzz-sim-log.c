/* fuzz-sim-log.c - libFuzzer target for lib/sim's reader of valgrind's log (the load
 * addresses of record --sim, lib/sim/record.c): any text gives loads whose paths are
 * strings the text held, never read past its size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tc_sim_load *loads = NULL;
	size_t n = 0;

	if (tc_sim_log_loads((const char *)data, size, &loads, &n))
		abort();
	for (size_t i = 0; i < n; i++)
		if (!loads[i].path || !memmem(data, size, loads[i].path, strlen(loads[i].path)))
			abort();
	/* a second log adds to the first */
	if (tc_sim_log_loads((const char *)data, size, &loads, &n))
		abort();
	tc_sim_loads_free(loads, n);
	return 0;
}
