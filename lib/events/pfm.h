/* pfm.h - tacho's thin layer over libpfm4. Kept free of <linux/perf_event.h> because
 * libpfm4's headers define their own struct perf_event_attr (the same ABI). */
#ifndef TACHO_EVENTS_PFM_H
#define TACHO_EVENTS_PFM_H

#include <stdbool.h>
#include <stddef.h>

/* Loads libpfm.so.4 and initializes it, once (thread-safe). 0, or -TACHO_ENOVALUE when
 * libpfm4 could not be loaded or could not start (said once in the log; then every
 * lookup misses). Every function below calls it first. */
int tc_pfm_init(void);

/* Encodes name (len bytes, with libpfm4's own ":UMASK:attr=value" parts) for
 * perf_event, at privilege levels 0 and 3. On success returns 0, copies libpfm4's
 * perf_event_attr into attr (attr_size bytes, the caller's struct perf_event_attr;
 * bytes beyond libpfm4's struct are zeroed) and sets *pmu to libpfm4's PMU name
 * (malloc'd). On failure returns libpfm4's (negative) error code, or -ENOMEM. */
int tc_pfm_encode(const char *name, size_t len, void *attr, size_t attr_size, char **pmu);

/* True if libpfm4 knows an event called name (len bytes, no umasks). */
bool tc_pfm_knows(const char *name, size_t len);

/* libpfm4's sentence for one of its error codes. */
const char *tc_pfm_strerror(int err);

/* Calls fn for each event, then for each of its umasks ("EVENT:UMASK"), of every
 * CPU PMU libpfm4 finds active here (not its generic "perf" PMUs). Stops at and
 * returns fn's first non-zero value; 0 at the end. */
typedef int tc_pfm_visit_fn(void *arg, const char *name, const char *desc, const char *pmu);
int tc_pfm_foreach(tc_pfm_visit_fn *fn, void *arg);

/* libpfm4's count of the active core PMU's counters: 0 and the numbers with libpfm4's
 * PMU name, or -1 when libpfm4 knows no active core PMU (or is not there). */
int tc_pfm_core_counters(unsigned *gp, unsigned *fixed, char *name, size_t size);

#endif
