/* fuzz-sim-callgrind.c - libFuzzer target for lib/sim's reader of callgrind's output
 * files (lib/sim/callgrind.c): any text either parses, with every event's total
 * reachable by name, its places adding up to the totals in every view, every call
 * site naming its two functions and a second file adding to the first, or is refused
 * with a diagnostic, never read past its size. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "tacho/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_sim_result *res = NULL;
	uint64_t a, b;
	int err;

	err = tacho_sim_result_parse((const char *)data, size, "fuzz", &res, &d);
	if (err) {
		/* refused: nothing made, and a reason given */
		if (res || !d.message[0])
			abort();
		return 0;
	}
	if (!res)
		abort();
	/* every view adds up to the total of the event, for an event every file has */
	for (int v = TACHO_SIM_VIEW_FUNCTION; v <= TACHO_SIM_VIEW_INSTRUCTION; v++) {
		struct perf_event_attr insn = { .size = sizeof(insn), .type = PERF_TYPE_HARDWARE,
						.config = PERF_COUNT_HW_INSTRUCTIONS };
		struct tacho_sim_row *rows;
		uint64_t sum = 0, all;
		size_t n;

		if (tacho_sim_result_rows(res, (enum tacho_sim_view)v, &insn, &rows, &n,
					  sizeof(*rows), NULL) != 0)
			break;
		for (size_t i = 0; i < n; i++)
			sum += rows[i].value;
		if (tacho_sim_result_value(res, &insn, &all, NULL) != 0 || sum != all)
			abort();
		free(rows);
	}
	/* every call site names its caller and its callee */
	for (size_t i = 0; i < tc_sim_result_ncalls(res); i++) {
		const char *ob, *fn, *cfn;
		uint64_t addr, count;
		tc_sim_result_call(res, i, &ob, &fn, &cfn, &addr, &count);
		if (!fn || !cfn)
			abort();
	}
	/* the same file again doubles every total */
	if (tacho_sim_result_total(res, "Ir", &a) == 0) {
		if (tacho_sim_result_parse((const char *)data, size, "fuzz", &res, &d) == 0 &&
		    (tacho_sim_result_total(res, "Ir", &b) != 0 || b != 2 * a))
			abort();
	}
	tacho_sim_result_free(res);
	return 0;
}
