/* sysfs.h - internal helpers of the kernel's CPU view (sysfs.c), reachable by tests and
 * the fuzz target. The public contract is tacho.h section 2c. */
#ifndef TACHO_CPU_SYSFS_H
#define TACHO_CPU_SYSFS_H

#include "util/util.h"

/* Finds "KEY<tabs/spaces>: VALUE" in /proc/cpuinfo text and copies VALUE (up to the end
 * of that line) into a new string; only the first processor's block is searched.
 * NULL when absent or on allocation failure. */
char *tc_cpuinfo_field(const char *text, size_t len, const char *key);

#endif
