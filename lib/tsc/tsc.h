/* tsc.h - internal helpers of the TSC module shared with lib/measure. */
#ifndef TACHO_TSC_TSC_H
#define TACHO_TSC_TSC_H

#include "util/util.h"

/* The cached info (measured on the first call); never NULL. Thread-safe. */
const struct tacho_tsc_info *tc_tsc_info(void);

/* CLOCK_MONOTONIC_RAW in ns. */
uint64_t tc_mono_raw_ns(void);

#endif
