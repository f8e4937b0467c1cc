/* pmu-counters.h - the counters a task may use, from CPUID and the kernel
 * (pmu-counters.c). The struct is public (include/tacho/cpu.h); its detection,
 * tacho_pmu_counters_detect, is events' (include/tacho/events.h). */
#ifndef TACHO_CPU_PMU_COUNTERS_H
#define TACHO_CPU_PMU_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/util.h"
#include "tacho/cpu.h"

/* The first version of struct tacho_pmu_counters ends at note. */
#define TC_PMU_COUNTERS_SZ_V1 tc_offsetofend(struct tacho_pmu_counters, note)

/* The counters a CPU described by info offers a task: CPUID leaf 0xA on Intel (the
 * smallest of every core type on hybrid parts), 0x8000_0022 or the PerfCtrExtCore flag
 * on AMD, two on P5/P6 parts before leaf 0xA. Pure: the tests' way to plan on dumps
 * (tc_pmu_counters_detect decodes this machine's leaves with it). 0 or -EINVAL. */
int tc_pmu_counters_from_cpu(const struct tacho_cpu_info *info, struct tacho_pmu_counters *out);

/* Adjusts *c for the kernel's NMI watchdog (a pinned cycles event on every CPU), when
 * active: it takes fixed counter 1 on Intel, a general counter elsewhere, and says so
 * in c->note. 0 or -EINVAL. Pure. */
int tc_pmu_counters_set_watchdog(struct tacho_pmu_counters *c, bool active);


/* The kernel's core PMU in sysfs ("cpu", "cpu_core"/"cpu_atom" on hybrid parts):
 * true if root (NULL: /sys/bus/event_source/devices) has one. */
bool tc_sysfs_has_core_pmu(const char *root);

/* Where CPUID says nothing of the counters: the core PMU's general and fixed counters
 * and its name from another source (libpfm4's tables: tc_pfm_core_counters). 0, or -1
 * when it knows nothing either. */
typedef int tc_pmu_core_counters_fn(unsigned *gp, unsigned *fixed, char *name, size_t size);

/* This machine's counters into *out (all of it: out->sz is set to sizeof(*out)): the
 * leaves that decide them read on the calling CPU and decoded (tc_pmu_counters_from_cpu),
 * none when the kernel has no core PMU in sysfs, fallback (NULL: none) asked when CPUID
 * leaves them unknown, then the NMI watchdog. Off x86, "unknown". 0 or -ENOMEM.
 * Thread-safe. */
int tc_pmu_counters_detect(struct tacho_pmu_counters *out, tc_pmu_core_counters_fn *fallback);

#endif
