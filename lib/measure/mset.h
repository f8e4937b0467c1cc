/* mset.h - a measurement set: the events of a region or a benchmark opened on the
 * calling thread through the engine, read as fast as this machine allows (RDPMC over
 * the mmap pages when every event is on a counter that allows it, else one group
 * read(2)). Shared by region.c and bench.c. */
#ifndef TACHO_MEASURE_MSET_H
#define TACHO_MEASURE_MSET_H

#include <linux/perf_event.h>

#include "util/util.h"

/* The events, resolved once per process: names as the user spelled them. */
struct tc_evset {
	size_t n;
	char **names;
	struct perf_event_attr *attrs;
};

/* From a parsed list (names copied). 0 or -ENOMEM. */
int tc_evset_from_list(struct tc_evset *s, const struct tacho_evlist *list);
void tc_evset_exit(struct tc_evset *s);

struct tc_mset {
	size_t n;                       /* events */
	struct tacho_counters *c;       /* the engine's object (owns the fds) */
	int *err;                       /* [n] 0, or why the event is not counted */
	char **why;                     /* [n] the engine's sentence, or NULL */
	struct perf_event_mmap_page **pg; /* [n] mapped pages, NULL where not open */
	int group_fd;                   /* one read(2) of this fd gives every open event,
					   or -1: read each fd alone */
	int *fds;                       /* [n] */
	size_t *pos;                    /* [n] index of the event in the group read */
	bool rdpmc;                     /* every open event's page has cap_user_rdpmc */
	bool multiplexed;               /* a read saw time_running < time_enabled */
	bool ran;                       /* a read saw time_running > 0: the events were on
					   their counters at some point (a group too big for
					   the PMU never is, and reads 0) */
	uint64_t *buf;
	size_t words;
	unsigned long reads_rdpmc, reads_syscall;
};

/* Opens the set on the calling thread and starts counting. Events that cannot be
 * opened are recorded in err/why and read as 0 (the caller reports them as not
 * supported). 0, or -errno/-TACHO_E... when nothing could be set up at all. */
int tc_mset_open(struct tc_mset *m, const struct tc_evset *s);
void tc_mset_close(struct tc_mset *m);

/* Reads every event's current count into v[0..n-1]. On the hot path: no allocation,
 * no lock. 0 or -errno of read(2). */
int tc_mset_read(struct tc_mset *m, uint64_t *v);

#endif
