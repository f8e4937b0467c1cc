/* pmu-counters.c - tacho_pmu_counters_detect: the counters a task may use on this
 * machine, as CPUID and the kernel describe them (lib/cpu/pmu-counters.c), and
 * libpfm4's tables where CPUID leaves them unknown. Here, not in cpu, because libpfm4 is
 * events'; apart from pfm.c, whose libpfm4 headers clash with <linux/perf_event.h>. */
#include <errno.h>

#include "cpu/pmu-counters.h"
#include "events/pfm.h"
#include "tacho/cpu.h"
#include "tacho/events.h"
#include "util/util.h"

int tacho_pmu_counters_detect(struct tacho_pmu_counters *out)
{
	struct tacho_pmu_counters pc;
	int err;

	if (!out || out->sz < TC_PMU_COUNTERS_SZ_V1)
		return -EINVAL;
	err = tc_pmu_counters_detect(&pc, tc_pfm_core_counters);
	if (!err)
		tc_sized_put_sz(out, &pc, sizeof(pc));
	return err;
}
