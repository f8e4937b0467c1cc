/* metrics.h - internal side of the derived metrics (metrics.c): the computation on the
 * library's own arrays, which stat sessions call directly. */
#ifndef TACHO_EVENTS_METRICS_H
#define TACHO_EVENTS_METRICS_H

#include <stddef.h>

#include "tacho/events.h"

/* tacho_metrics_compute on arrays of the library's element sizes: *out is an array of
 * *nout struct tacho_metric as this library lays them out (free() it). wall_name names
 * the time wall_ns is in the metrics' expressions: "wall time" when NULL, "time
 * counted" for a session that switched its counters on part of the run (-D, regions,
 * --control): wall_ns is then the wall time they were on, and its rates are of that. */
int tc_metrics_compute(const struct tacho_metric_input *in, size_t n, double wall_ns,
		       const char *wall_name, struct tacho_metric **out, size_t *nout);

#endif
