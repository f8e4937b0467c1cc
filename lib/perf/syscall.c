/* syscall.c - the single call site of perf_event_open(2), of the perf ioctls and of the
 * mappings of perf events, each with a seam for tests; and the RDPMC instruction's seam
 * for the engine's fast path. */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf/perf.h"
#include "perf/rdpmc.h"
#include "perf/syscall.h"

static tc_perf_open_hook *open_hook;
static void *open_hook_arg;
static bool open_hook_passes;
static tc_perf_ioctl_hook *ioctl_hook;
static void *ioctl_hook_arg;
static const struct tc_perf_mmap_hooks *mmap_hooks;
static const struct tc_pmc_ops *pmc_ops;

void tc_perf_set_open_hook(tc_perf_open_hook *hook, void *arg)
{
	open_hook = hook;
	open_hook_arg = arg;
	open_hook_passes = false;
}

void tc_perf_set_passing_open_hook(tc_perf_open_hook *hook, void *arg)
{
	open_hook = hook;
	open_hook_arg = arg;
	open_hook_passes = true;
}

bool tc_perf_open_hooked(void)
{
	return open_hook && !open_hook_passes;
}

void tc_perf_set_ioctl_hook(tc_perf_ioctl_hook *hook, void *arg)
{
	ioctl_hook = hook;
	ioctl_hook_arg = arg;
}

void tc_perf_set_mmap_hooks(const struct tc_perf_mmap_hooks *hooks)
{
	mmap_hooks = hooks;
}

void tc_perf_set_pmc_ops(const struct tc_pmc_ops *ops)
{
	pmc_ops = ops;
}

int tc_perf_event_open_real(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags)
{
	long fd;

	/* the kernel checks attr->size against what it knows; always send ours */
	attr->size = sizeof(*attr);
	flags |= PERF_FLAG_FD_CLOEXEC;
	do
		fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : (int)fd;
}

int tc_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags)
{
	if (open_hook) {
		attr->size = sizeof(*attr);
		return open_hook(open_hook_arg, attr, pid, cpu, group_fd,
				 flags | PERF_FLAG_FD_CLOEXEC);
	}
	return tc_perf_event_open_real(attr, pid, cpu, group_fd, flags);
}

int tc_perf_ioctl(int fd, unsigned long req, unsigned long arg)
{
	if (ioctl_hook)
		return ioctl_hook(ioctl_hook_arg, fd, req, arg);
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

int tc_perf_mmap(int fd, size_t len, int prot, void **out)
{
	void *p;

	if (mmap_hooks)
		return mmap_hooks->map(mmap_hooks->arg, fd, len, prot, out);
	p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	return 0;
}

void tc_perf_munmap(void *addr, size_t len)
{
	if (!addr)
		return;
	if (mmap_hooks)
		mmap_hooks->unmap(mmap_hooks->arg, addr, len);
	else
		munmap(addr, len);
}

const struct tc_pmc_ops *tc_perf_pmc_ops(bool timed)
{
	if (pmc_ops)
		return pmc_ops;
#if defined(__x86_64__) || defined(__i386__)
	return timed ? &tc_pmc_ops_cpu : &tc_pmc_ops_cpu_count;
#else
	/* RDPMC is x86's: elsewhere every read goes through read(2) */
	(void)timed;
	return NULL;
#endif
}
