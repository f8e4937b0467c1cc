/* sysfs.h - internal helpers of the kernel's CPU view (sysfs.c), reachable by tests and
 * the fuzz target. The public contract is tacho.h section 2c. */
#ifndef TACHO_CPU_SYSFS_H
#define TACHO_CPU_SYSFS_H

#include "util/util.h"

/* The largest CPU number a list may name: Linux's NR_CPUS tops out at 8192 today; a
 * generous bound keeps junk like "0-4000000000" from allocating gigabytes. */
#define TC_CPU_LIST_MAX 65536

/* Parses a kernel CPU list ("0-3,8-11", "5", "" for none, a trailing newline allowed).
 * Calls fn(arg, cpu) for every CPU in order of the text (stopping when fn returns
 * non-zero, which is then returned). Returns 0, or -TACHO_EPARSE for anything else
 * (descending ranges, numbers above TC_CPU_LIST_MAX, junk). */
int tc_cpu_list_parse(const char *s, int (*fn)(void *arg, int cpu), void *arg);

/* Counts the CPUs of a list and finds the lowest. 0 or -TACHO_EPARSE. */
int tc_cpu_list_count(const char *s, unsigned *count, int *first);

/* Finds "KEY<tabs/spaces>: VALUE" in /proc/cpuinfo text and copies VALUE (up to the end
 * of that line) into a new string; only the first processor's block is searched.
 * NULL when absent or on allocation failure. */
char *tc_cpuinfo_field(const char *text, size_t len, const char *key);

#endif
