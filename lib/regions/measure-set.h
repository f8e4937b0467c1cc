/* measure-set.h - a measurement set: the events of a region or a benchmark opened on
 * the calling thread as one group through the engine, read on the engine's hot path
 * (one RDPMC per event when every event is on a counter that allows it, else one group
 * read(2)). Shared by region.c and bench.c. */
#ifndef TACHO_REGIONS_MEASURE_SET_H
#define TACHO_REGIONS_MEASURE_SET_H

#include <linux/perf_event.h>

#include "perf/engine.h"
#include "util/util.h"
#include "tacho/events.h"

/* The events, resolved once per process: names as the user spelled them. */
struct tc_event_set {
	size_t n;
	char **names;
	struct perf_event_attr *attrs;
};

/* From a parsed list (names copied). 0 or -ENOMEM. */
int tc_event_set_from_list(struct tc_event_set *s, const struct tacho_evlist *list);
void tc_event_set_exit(struct tc_event_set *s);
/* For a user who may count user space only (user-only.h): each event the kernel refuses
 * because it includes the kernel is made user-only and renamed EVENT:u; *why gets the
 * sentence that names them and says why (malloc'd), or NULL when none changed. Probes
 * on the calling thread. 0 or -ENOMEM. */
int tc_event_set_user_only(struct tc_event_set *s, char **why);

struct tc_measure_set {
	size_t n;                       /* events */
	struct tc_perf_list *list;      /* the engine's list (owns the descriptors) */
	int *err;                       /* [n] 0 where the event is open, else why it is
					   not counted (-errno or -TACHO_E...) */
	char **why;                     /* [n] the engine's sentence, or NULL */
};

/* Opens the set on the calling thread and starts counting. Events that cannot be
 * opened are recorded in err/why and read as 0 (the caller reports them as not
 * supported). 0, or -errno/-TACHO_E... when nothing could be set up at all. */
int tc_measure_set_open(struct tc_measure_set *m, const struct tc_event_set *s);
/* Closes and zeroes *m. NULL-safe; a zeroed set is fine. */
void tc_measure_set_close(struct tc_measure_set *m);

/* Reads every event's current count into v[0..n-1] (0 where not open): the engine's
 * hot path, no allocation, no lock. 0, -EINVAL for a set that is not open, or -errno
 * of read(2). */
static inline int tc_measure_set_read(struct tc_measure_set *m, uint64_t *v)
{
	return tc_perf_list_read_hot(m->list, v);
}

/* Whether event i is open. */
bool tc_measure_set_is_open(const struct tc_measure_set *m, size_t i);
/* What the reads saw so far: time running below time enabled (multiplexed), time
 * running above 0 (the events were on their counters at some point). False on a
 * zeroed set. */
bool tc_measure_set_multiplexed(const struct tc_measure_set *m);
bool tc_measure_set_ran(const struct tc_measure_set *m);
/* How the set is read, in words: "rdpmc", "one group read(2)", "one read(2) per
 * event". */
const char *tc_measure_set_read_path(const struct tc_measure_set *m);

#endif
