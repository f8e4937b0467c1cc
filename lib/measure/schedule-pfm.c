/* schedule-pfm.c - libpfm4 as the second source of the counter count (the first is
 * CPUID, schedule.c): pfm_get_pmu_info's num_cntrs and num_fixed_cntrs of the active
 * core PMU. A file of its own because libpfm4's headers and <linux/perf_event.h>
 * (through tacho.h) cannot meet in one translation unit. */
#include <stdio.h>
#include <string.h>

#include <perfmon/pfmlib.h>

#include "events/pfm.h"

int tc_pfm_core_counters(unsigned *gp, unsigned *fixed, char *name, size_t size);

int tc_pfm_core_counters(unsigned *gp, unsigned *fixed, char *name, size_t size)
{
	pfm_pmu_t p;

	if (tc_pfm_init() != 0)
		return -1;
	pfm_for_all_pmus(p) {
		pfm_pmu_info_t info;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present)
			continue;
		/* the core PMU of this CPU, not its generic "perf" tables or uncore units */
		if (info.type != PFM_PMU_TYPE_CORE || info.num_cntrs <= 0 ||
		    !strncmp(info.name, "perf", 4))
			continue;
		*gp = (unsigned)info.num_cntrs;
		*fixed = info.num_fixed_cntrs > 0 ? (unsigned)info.num_fixed_cntrs : 0;
		snprintf(name, size, "%s", info.name);
		return 0;
	}
	return -1;
}
