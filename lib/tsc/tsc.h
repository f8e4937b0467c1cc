/* tsc.h - internal helpers of the TSC module, shared with lib/regions and the tests. */
#ifndef TACHO_TSC_TSC_H
#define TACHO_TSC_TSC_H

#include "util/util.h"
#include "tacho/tsc.h"

/* The cached info (measured on the first call, as tacho_tsc_info); never NULL.
 * Thread-safe. */
const struct tacho_tsc_info *tc_tsc_info(void);
/* The part that costs no perf event and no sleep (tacho_tsc_info_quick): present,
 * rdtscp, invariant, hypervisor, cpuid_hz, pair_ticks are final; hz and pair_ns only
 * where a free source gave the frequency (read them through tc_tsc_info). Starts the
 * calibration's clock. Never NULL. Thread-safe. */
const struct tacho_tsc_info *tc_tsc_early(void);

/* The kernel's TSC frequency from a perf mmap page's time_mult and time_shift:
 * 1e9 * 2^shift / mult. 0 when mult is 0 or shift is 64 or more. Pure. */
double tc_tsc_kernel_hz(uint32_t time_mult, uint16_t time_shift);

/* The TSC rate a guest's /proc/cpuinfo text[0..len) gives (it need not be
 * NUL-terminated): the first CPU's "cpu MHz" (which x86 prints as "%u.%03u" of
 * cpu_khz) where its flags hold hypervisor and tsc_known_freq and not aperfmperf (the
 * kernel took cpu_khz and tsc_khz from the hypervisor's one figure, and prints no
 * measured rate), else 0. Pure. */
double tc_tsc_cpuinfo_hz(const char *text, size_t len);

/* CLOCK_MONOTONIC_RAW in ns. */
uint64_t tc_mono_raw_ns(void);

#endif
