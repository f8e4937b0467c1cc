/* syscall.h - the perf system calls, each in one place with a seam for tests
 * (syscall.c). Only lib/perf and the tests include this: the parts above the engine
 * never see a descriptor. */
#ifndef TACHO_PERF_SYSCALL_H
#define TACHO_PERF_SYSCALL_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The one call of perf_event_open(2). Returns the new fd (O_CLOEXEC is always added)
 * or -errno. Tests can replace the system call with tc_perf_set_open_hook to record
 * the attributes tacho asks for, or to inject failures, without a PMU. */
int tc_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags);

/* The system call itself, whatever hook is set: the proofs of the sources (verify.c)
 * ask the real kernel, and only when no fake stands in for it. */
int tc_perf_event_open_real(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags);

typedef int tc_perf_open_hook(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu,
			      int group_fd, unsigned long flags);
/* NULL restores the real system call. Not thread-safe: tests only. */
void tc_perf_set_open_hook(tc_perf_open_hook *hook, void *arg);
/* The same for a hook that passes every open on to the kernel (to watch what tacho
 * asks): the engine proves its sources as it does without a hook. */
void tc_perf_set_passing_open_hook(tc_perf_open_hook *hook, void *arg);

/* Whether a test's hook stands in for perf_event_open(2) (one set with
 * tc_perf_set_open_hook): the engine then proves no source, since what the real kernel
 * would say of one applies to no fake. */
bool tc_perf_open_hooked(void);

/* A perf ioctl (PERF_EVENT_IOC_*) on fd: 0 or -errno. arg is the ioctl's argument (a
 * flag, or a pointer cast to unsigned long). */
int tc_perf_ioctl(int fd, unsigned long req, unsigned long arg);
typedef int tc_perf_ioctl_hook(void *arg, int fd, unsigned long req, unsigned long val);
/* NULL restores the real ioctl(2). Not thread-safe: tests only (fake fds are pipes,
 * which take no perf ioctl: the hook hands out ids and records periods). */
void tc_perf_set_ioctl_hook(tc_perf_ioctl_hook *hook, void *arg);

/* Maps len bytes of a perf fd (MAP_SHARED) with prot: 0 and *out, or -errno. */
int tc_perf_mmap(int fd, size_t len, int prot, void **out);
void tc_perf_munmap(void *addr, size_t len);   /* NULL-safe */
struct tc_perf_mmap_hooks {
	int (*map)(void *arg, int fd, size_t len, int prot, void **out);
	void (*unmap)(void *arg, void *addr, size_t len);
	void *arg;
};
/* NULL restores mmap(2)/munmap(2). Tests hand out synthetic pages and rings with it.
 * Not thread-safe: tests only. */
void tc_perf_set_mmap_hooks(const struct tc_perf_mmap_hooks *hooks);

/* The RDPMC (and RDTSC) the engine's fast path runs: NULL restores the instructions.
 * Tests drive the fast path on synthetic pages with it (this machine has no user
 * RDPMC: the instruction would fault). Not thread-safe: tests only. */
struct tc_pmc_ops;
void tc_perf_set_pmc_ops(const struct tc_pmc_ops *ops);
/* The ops in force: the test's, or the instructions (timed: with RDTSC, to bring the
 * times up to now; else the count alone); NULL where there is no RDPMC (not x86). */
const struct tc_pmc_ops *tc_perf_pmc_ops(bool timed);

#endif
