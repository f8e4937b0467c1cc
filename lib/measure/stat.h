/* measure/stat.h - what the stat session shares with its writers inside lib/measure. */
#ifndef TC_MEASURE_STAT_H
#define TC_MEASURE_STAT_H

#include <linux/perf_event.h>

#include "tacho/stat.h"

/* The attributes of event i of the session (lives as long as s). */
const struct perf_event_attr *tc_stat_event_attr(const struct tacho_stat *s, size_t i);

#endif /* TC_MEASURE_STAT_H */
