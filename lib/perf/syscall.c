/* syscall.c - the single call site of perf_event_open(2), with a seam for tests. */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf/perf.h"

static tc_perf_open_hook *open_hook;
static void *open_hook_arg;

void tc_perf_set_open_hook(tc_perf_open_hook *hook, void *arg)
{
	open_hook = hook;
	open_hook_arg = arg;
}

int tc_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags)
{
	long fd;

	/* the kernel checks attr->size against what it knows; always send ours */
	attr->size = sizeof(*attr);
	flags |= PERF_FLAG_FD_CLOEXEC;
	if (open_hook)
		return open_hook(open_hook_arg, attr, pid, cpu, group_fd, flags);
	do
		fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : (int)fd;
}
