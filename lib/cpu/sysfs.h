/* sysfs.h - internal helpers of the kernel's CPU view (sysfs.c), reachable by tests and
 * the fuzz target. The public contract is tacho.h section 2c. */
#ifndef TACHO_CPU_SYSFS_H
#define TACHO_CPU_SYSFS_H

#include "util/util.h"

#endif
