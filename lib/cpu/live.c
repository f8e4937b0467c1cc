/* live.c - reading the CPUID leaves of every online CPU of this machine: pinned to each
 * CPU in turn, or through the kernel's cpuid driver (/dev/cpu/N/cpuid). Leaves and
 * subleaves are enumerated the way `cpuid -r` (Todd Allen's tool) does, so the two dumps
 * can be compared line by line. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/cpuid.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"

/* Sanity caps: a real CPU's maximum basic leaf is below 0x30 and its subleaf counts
 * below 64; a hypervisor or a broken part answering more would make us loop for long. */
#define MAX_BASIC_LEAVES 0x100u
#define MAX_RANGE_LEAVES 0x100u  /* 0x8000_0000..0x8000_00FF and the like */
#define MAX_SUBLEAVES    64u

struct reader {
	int fd;        /* /dev/cpu/N/cpuid, or -1 to execute CPUID on the pinned CPU */
	tc_cpuid_read_fn *fn;  /* or this, when set (tests: a CPU simulated from a dump) */
	void *arg;
	struct tacho_cpuid_dump *d;
	unsigned idx;  /* CPU index in d */
};

static int cpuid_read(struct reader *r, uint32_t leaf, uint32_t sub, struct tacho_cpuid_regs *out)
{
	if (r->fn)
		return r->fn(r->arg, leaf, sub, out);
	if (r->fd >= 0) {
		/* The cpuid driver takes the leaf in the low 32 bits of the file offset and
		 * the subleaf in the high 32 (arch/x86/kernel/cpuid.c), 16 bytes per read. */
		uint32_t b[4];
		ssize_t n;

		do
			n = pread(r->fd, b, sizeof(b), (off_t)((uint64_t)sub << 32 | leaf));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if (n != (ssize_t)sizeof(b))
			return -EIO;
		*out = (struct tacho_cpuid_regs){ .eax = b[0], .ebx = b[1], .ecx = b[2], .edx = b[3] };
		return 0;
	}
	if (!tc_cpuid_exec(leaf, sub, out))
		return -TACHO_ENOTX86;
	return 0;
}

/* Reads (leaf, sub), records it, and hands the registers back. */
static int put(struct reader *r, uint32_t leaf, uint32_t sub, struct tacho_cpuid_regs *out)
{
	struct tacho_cpuid_regs tmp;
	int err;

	if (!out)
		out = &tmp;
	err = cpuid_read(r, leaf, sub, out);
	if (err)
		return err;
	return tc_cpuid_dump_set(r->d, r->idx, leaf, sub, out);
}

/* Subleaves 0..N, N from subleaf 0's EAX: leaves 7, 0x14, 0x17, 0x18, 0x1D, 0x20, 0x24
 * (SDM vol. 2A, CPUID: "reports the maximum input value for supported leaf N sub-leaves"). */
static int subleaves_to_max(struct reader *r, uint32_t leaf)
{
	struct tacho_cpuid_regs s0;
	int err = put(r, leaf, 0, &s0);
	uint32_t max = s0.eax < MAX_SUBLEAVES ? s0.eax : MAX_SUBLEAVES - 1;

	for (uint32_t i = 1; !err && i <= max; i++)
		err = put(r, leaf, i, NULL);
	return err;
}

/* Subleaf 0, then subleaf i for every bit i (from `first`) set in mask. */
static int subleaves_by_mask(struct reader *r, uint32_t leaf, uint64_t mask, unsigned first)
{
	int err = 0;

	for (unsigned i = first; !err && i < 64; i++)
		if (mask >> i & 1)
			err = put(r, leaf, i, NULL);
	return err;
}

/* Leaf 0xB, 0x1F, 0x8000_0026: levels until the level type (ECX[15:8]) is 0; that last,
 * invalid level is kept, as `cpuid -r` keeps it (it tells where the list ends). */
static int subleaves_topology(struct reader *r, uint32_t leaf)
{
	struct tacho_cpuid_regs x;
	int err = 0;

	for (uint32_t i = 0; !err && i < MAX_SUBLEAVES; i++) {
		err = put(r, leaf, i, &x);
		if (!err && (x.ecx >> 8 & 0xff) == 0)
			break;
	}
	return err;
}

static int read_leaf(struct reader *r, uint32_t leaf)
{
	struct tacho_cpuid_regs x, s0, s1;
	int err;

	switch (leaf) {
	case 0x4:
		/* Deterministic cache parameters: until cache type (EAX[4:0]) 0, which is
		 * kept (SDM vol. 2A, CPUID leaf 04H; `cpuid -r` prints it too). */
		for (uint32_t i = 0; i < MAX_SUBLEAVES; i++) {
			err = put(r, leaf, i, &x);
			if (err || (x.eax & 0x1f) == 0)
				return err;
		}
		return 0;
	case 0x7: case 0x14: case 0x17: case 0x18: case 0x1d: case 0x20: case 0x24:
		return subleaves_to_max(r, leaf);
	case 0xb: case 0x1f:
		return subleaves_topology(r, leaf);
	case 0xd:
		/* XSAVE state components: subleaves 0 and 1, then one per component that
		 * XCR0 (sub 0 EDX:EAX) or IA32_XSS (sub 1 EDX:ECX) can enable. */
		err = put(r, leaf, 0, &s0);
		if (!err)
			err = put(r, leaf, 1, &s1);
		if (err)
			return err;
		return subleaves_by_mask(r, leaf,
					 ((uint64_t)s0.edx << 32 | s0.eax) |
						 ((uint64_t)s1.edx << 32 | s1.ecx), 2);
	case 0xf:
		/* RDT monitoring: subleaf 0; subleaf 1 (L3) when sub 0 EDX[1] says so, and
		 * any further resource bit the same way. */
		err = put(r, leaf, 0, &s0);
		return err ? err : subleaves_by_mask(r, leaf, s0.edx, 1);
	case 0x10:
		/* RDT allocation: subleaf i for each resource bit i of sub 0 EBX (1 L3 CAT,
		 * 2 L2 CAT, 3 memory bandwidth, ...). */
		err = put(r, leaf, 0, &s0);
		return err ? err : subleaves_by_mask(r, leaf, s0.ebx, 1);
	case 0x12:
		/* SGX: subleaves 0 and 1, then EPC sections from 2 until the sub-leaf
		 * type (EAX[3:0]) is 0, that one kept. */
		err = put(r, leaf, 0, NULL);
		if (!err)
			err = put(r, leaf, 1, NULL);
		for (uint32_t i = 2; !err && i < MAX_SUBLEAVES; i++) {
			err = put(r, leaf, i, &x);
			if (!err && (x.eax & 0xf) == 0)
				break;
		}
		return err;
	case 0x1b:
		/* PCONFIG: subleaf 0, then until the sub-leaf type (EAX[11:0]) is 0. */
		err = put(r, leaf, 0, &x);
		for (uint32_t i = 1; !err && i < MAX_SUBLEAVES; i++) {
			err = put(r, leaf, i, &x);
			if (!err && (x.eax & 0xfff) == 0)
				break;
		}
		return err;
	case 0x23:
		/* Architectural PMU extended leaf: sub 0 EAX is a bit map of the valid
		 * subleaves (SDM vol. 2A, CPUID leaf 23H), not a maximum. */
		err = put(r, leaf, 0, &s0);
		return err ? err : subleaves_by_mask(r, leaf, s0.eax, 1);
	case 0x8000001d:
		/* AMD cache topology: until cache type 0, which `cpuid -r` does not keep. */
		for (uint32_t i = 0; i < MAX_SUBLEAVES; i++) {
			err = cpuid_read(r, leaf, i, &x);
			if (err || (x.eax & 0x1f) == 0)
				return err;
			err = tc_cpuid_dump_set(r->d, r->idx, leaf, i, &x);
			if (err)
				return err;
		}
		return 0;
	case 0x80000020:
		/* AMD platform QoS: subleaf i for each feature bit i of sub 0 EBX (APM vol. 3,
		 * CPUID Fn8000_0020). */
		err = put(r, leaf, 0, &s0);
		return err ? err : subleaves_by_mask(r, leaf, s0.ebx, 1);
	case 0x80000026:
		return subleaves_topology(r, leaf);
	default:
		return put(r, leaf, 0, NULL);
	}
}

/* A range other than the basic one: its first leaf is probed and recorded (as `cpuid -r`
 * does: the query layer ignores it when the range is absent); when its EAX is a maximum
 * inside the range, every leaf up to it (capped) is read too. Returns 1 if the range
 * exists, 0 if not, or an error. */
static int read_range(struct reader *r, uint32_t base)
{
	struct tacho_cpuid_regs x;
	uint32_t max;
	int err = put(r, base, 0, &x);

	if (err)
		return err;
	if ((x.eax & 0xffff0000u) != (base & 0xffff0000u) || x.eax < base)
		return 0;
	max = x.eax - base < MAX_RANGE_LEAVES ? x.eax : base + MAX_RANGE_LEAVES - 1;
	for (uint32_t leaf = base + 1; !err && leaf <= max; leaf++)
		err = read_leaf(r, leaf);
	return err ? err : 1;
}

/* Every leaf of the CPU the reader reaches. */
static int read_cpu(struct reader *r)
{
	struct tacho_cpuid_regs l0, l1 = { 0 }, h;
	uint32_t max;
	int err;

	err = put(r, 0, 0, &l0);
	if (err)
		return err;
	max = l0.eax < MAX_BASIC_LEAVES ? l0.eax : MAX_BASIC_LEAVES - 1;
	if (l0.eax >= MAX_BASIC_LEAVES)
		tc_log(TACHO_LOG_WARN, "cpuid: maximum basic leaf %#x is implausible; reading up to %#x",
		       l0.eax, max);
	for (uint32_t leaf = 1; leaf <= max; leaf++) {
		err = read_leaf(r, leaf);
		if (err)
			return err;
	}
	/* CPUID.1:ECX[31] decides the hypervisor range below (the dump is not sorted yet,
	 * so it is read again rather than looked up). */
	if (max >= 1) {
		err = cpuid_read(r, 1, 0, &l1);
		if (err)
			return err;
	}

	/* Xeon Phi's 0x2000_0000 range: `cpuid -r` probes it on every CPU. */
	err = read_range(r, 0x20000000u);
	if (err < 0)
		return err;

	/* Hypervisor interfaces (0x4000_0000, then 0x4000_0100, ... for a second one).
	 * The probe leaf is recorded like the other probes; the interfaces are read only
	 * when CPUID.1:ECX[31] says a hypervisor is present or 0x4000_0000 answers a
	 * maximum and a signature: on bare metal these leaves echo the highest basic leaf. */
	err = put(r, 0x40000000u, 0, &h);
	if (err)
		return err;
	if ((l1.ecx >> 31 & 1) ||
	    ((h.eax & 0xffffff00u) == 0x40000000u && (h.ebx | h.ecx | h.edx))) {
		for (uint32_t base = 0x40000000u; base < 0x40010000u; base += 0x100) {
			err = read_range(r, base);
			if (err <= 0)
				break;
		}
		if (err < 0)
			return err;
	}

	err = read_range(r, 0x80000000u);
	if (err < 0)
		return err;
	/* Transmeta (0x8086_0000) and Centaur/Zhaoxin (0xC000_0000) ranges. */
	err = read_range(r, 0x80860000u);
	if (err < 0)
		return err;
	err = read_range(r, 0xc0000000u);
	return err < 0 ? err : 0;
}

int tc_cpuid_enumerate(tc_cpuid_read_fn *fn, void *arg, struct tacho_cpuid_dump *d,
		       unsigned idx)
{
	struct reader r = { .fd = -1, .fn = fn, .arg = arg, .d = d, .idx = idx };

	if (idx >= d->ncpus)
		return -EINVAL;
	return read_cpu(&r);
}

/* The calling thread's affinity mask, in a set big enough to hold it. */
static cpu_set_t *get_affinity(size_t *size)
{
	for (int ncpu = 1024; ncpu <= 1 << 20; ncpu *= 2) {
		cpu_set_t *set = CPU_ALLOC(ncpu);
		size_t sz = CPU_ALLOC_SIZE(ncpu);

		if (!set)
			return NULL;
		if (sched_getaffinity(0, sz, set) == 0) {
			*size = sz;
			return set;
		}
		CPU_FREE(set);
		if (errno != EINVAL)
			return NULL;
	}
	return NULL;
}

static int online_cpus(int **cpus, unsigned *n)
{
	char buf[4096];
	int err = tc_read_line_file("/sys/devices/system/cpu/online", buf, sizeof(buf));

	if (!err) {
		/* the kernel's cpulist format (sysfs-devices-system-cpu) */
		size_t count;

		err = tc_parse_cpu_list(tc_trim(buf), cpus, &count, NULL);
		if (!err)
			*n = (unsigned)count;
	}
	if (err && err != -ENOMEM) {
		/* No sysfs (a container without it): the CPUs this thread may run on. */
		size_t sz;
		cpu_set_t *set = get_affinity(&sz);
		unsigned count = 0, k = 0;

		tc_log(TACHO_LOG_WARN, "cpuid: cannot read the online CPUs (%s); using this "
		       "thread's affinity mask", tacho_strerror(err));
		if (!set)
			return -errno;
		count = (unsigned)CPU_COUNT_S(sz, set);
		*cpus = calloc(count ? count : 1, sizeof(int));
		if (!*cpus) {
			CPU_FREE(set);
			return -ENOMEM;
		}
		for (int c = 0; k < count && (size_t)c < sz * 8; c++)
			if (CPU_ISSET_S((size_t)c, sz, set))
				(*cpus)[k++] = c;
		CPU_FREE(set);
		*n = k;
		err = k ? 0 : -ENODEV;
	}
	return err;
}

static int pin_to(int cpu)
{
	size_t sz = CPU_ALLOC_SIZE(cpu + 1);
	cpu_set_t *set = CPU_ALLOC(cpu + 1);
	int err = 0;

	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(sz, set);
	CPU_SET_S((size_t)cpu, sz, set);
	if (sched_setaffinity(0, sz, set) != 0)
		err = -errno;
	CPU_FREE(set);
	return err;
}

static int open_cpuid_dev(int cpu)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/cpu/%d/cpuid", cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int tc_cpuid_dump_live_method(enum tc_live_method method, struct tacho_cpuid_dump **out)
{
	struct tacho_cpuid_dump *d = NULL;
	cpu_set_t *saved = NULL;
	size_t saved_sz = 0;
	int *cpus = NULL;
	unsigned ncpus = 0;
	int err, last_err = 0;

	*out = NULL;
#if !defined(__x86_64__) && !defined(__i386__)
	(void)method;
	return -TACHO_ENOTX86;
#endif
	err = online_cpus(&cpus, &ncpus);
	if (err)
		return err;
	d = tc_cpuid_dump_new();
	if (!d) {
		err = -ENOMEM;
		goto out;
	}
	if (method != TC_LIVE_DEV) {
		saved = get_affinity(&saved_sz);
		if (!saved) {
			err = errno ? -errno : -ENOMEM;
			goto out;
		}
	}
	for (unsigned i = 0; i < ncpus; i++) {
		struct reader r = { .fd = -1, .d = d };
		int idx, e = -ENODEV;

		/* Pinning is one system call per CPU; the driver costs an inter-processor
		 * call per leaf and needs root and the cpuid module. Pin first; use the
		 * driver for CPUs this thread may not run on (a cpuset that excludes them). */
		if (method != TC_LIVE_DEV)
			e = pin_to(cpus[i]);
		if (e && method != TC_LIVE_PIN) {
			r.fd = open_cpuid_dev(cpus[i]);
			e = r.fd < 0 ? r.fd : 0;
		}
		if (e) {
			tc_log(TACHO_LOG_WARN, "cpuid: cannot read CPU %d (%s); it is left out",
			       cpus[i], tacho_strerror(e));
			last_err = e;
			continue;
		}
		idx = tc_cpuid_dump_add_cpu(d, cpus[i]);
		if (idx < 0) {
			err = idx;
		} else {
			r.idx = (unsigned)idx;
			err = read_cpu(&r);
		}
		if (r.fd >= 0)
			close(r.fd);
		if (err)
			goto out;
	}
	err = tc_cpuid_dump_finish(d);
	if (err)
		err = last_err ? last_err : err;

out:
	if (saved) {
		if (sched_setaffinity(0, saved_sz, saved) != 0)
			tc_log(TACHO_LOG_WARN, "cpuid: cannot restore the thread's CPU affinity: %s",
			       tacho_strerror(-errno));
		CPU_FREE(saved);
	}
	free(cpus);
	if (err) {
		tacho_cpuid_dump_free(d);
		return err;
	}
	*out = d;
	return 0;
}

int tacho_cpuid_dump_live(struct tacho_cpuid_dump **out)
{
	return tc_cpuid_dump_live_method(TC_LIVE_AUTO, out);
}
