/* perf.h - internal interface of the perf_event engine. lib/perf is the only place
 * that calls perf_event_open(2); everything above goes through here. */
#ifndef TACHO_PERF_PERF_H
#define TACHO_PERF_PERF_H

#include <linux/perf_event.h>
#include <sys/types.h>

#include "util/util.h"

/* The one call of perf_event_open(2). Returns the new fd (O_CLOEXEC is always added)
 * or -errno. Tests can replace the system call with tc_perf_set_open_hook to record
 * the attributes tacho asks for, or to inject failures, without a PMU. */
int tc_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags);

typedef int tc_perf_open_hook(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu,
			      int group_fd, unsigned long flags);
/* NULL restores the real system call. Not thread-safe: tests only. */
void tc_perf_set_open_hook(tc_perf_open_hook *hook, void *arg);

#endif
