/* counting.c - the glue between a parsed event list and the counting API above the
 * engine: tacho_counters_open_evlist opens the list's events as counter specs, grouped
 * as the user wrote them or as the caller (the scheduler) planned. */
#include <errno.h>
#include <stdlib.h>

#include "events/events.h"
#include "tacho/counters.h"
#include "tacho/events.h"

int tacho_counters_open_evlist(const struct tacho_counters_opts *opts,
			       const struct tacho_evlist *list, const int *groups,
			       struct tacho_counters **out)
{
	size_t n = tacho_evlist_count(list);
	struct tacho_counter_spec *specs;
	struct perf_event_attr *attrs;
	int err = 0;

	if (!list)
		return -EINVAL;
	specs = calloc(n ? n : 1, sizeof(*specs));
	attrs = calloc(n ? n : 1, sizeof(*attrs));
	if (!specs || !attrs) {
		err = -ENOMEM;
		goto out_free;
	}
	for (size_t i = 0; i < n && !err; i++) {
		specs[i].name = tacho_evlist_name(list, i);
		err = tacho_evlist_attr(list, i, &attrs[i]);
		specs[i].attr = &attrs[i];
		if (groups) {
			specs[i].group = groups[i];
		} else {
			/* the user's {a,b}: the leader's index names the group */
			int leader = tc_evlist_group_leader(list, i);
			specs[i].group = leader >= 0 ? leader : TACHO_GROUP_NONE;
		}
	}
	if (!err)
		err = tacho_counters_open(opts, specs, n, sizeof(*specs), out);
out_free:
	free(specs);
	free(attrs);
	return err;
}
