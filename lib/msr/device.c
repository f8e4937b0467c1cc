/* device.c - the msr driver's devices (DIR/N/msr: pread and pwrite of 8 bytes at the
 * register's address), opened once per CPU and kept, with the refusals that keep writes
 * safe and the explanation of every way an access fails.
 *
 * A regular file stands for a device (tests, a copy of a machine's registers), with the
 * driver's answers: EIO past its end, EPERM for writes when nobody may write it, EACCES
 * for reads when nobody may read it, whoever runs (root included). It holds register A
 * at byte 8 A, not at A as the driver's offset says: registers have consecutive numbers
 * (PMC0 is C1h, PMC1 C2h), and read at A, the 8 bytes of one would be 7 of the next, so
 * a write to one would change its neighbours. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "msr/msr.h"

#define DEFAULT_DIR "/dev/cpu"

static uint64_t default_wait(void *arg, unsigned ms)
{
	struct timespec a, b, d = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &a);
	/* a signal may cut the sleep short: the interval measured is what counts */
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &d, &d) == EINTR)
		;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull + (uint64_t)b.tv_nsec -
	       (uint64_t)a.tv_nsec;
}

/* Every field of the options is optional: the first version is sz alone. */
#define TC_OPTS_V1_tacho_msr_opts tc_offsetofend(struct tacho_msr_opts, sz)

int tacho_msr_dev_new(const struct tacho_msr_opts *opts, struct tacho_msr_dev **out)
{
	const char *dir, *root;
	struct tacho_msr_dev *dev;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	err = TC_OPTS_VALID(opts, tacho_msr_opts);
	if (err)
		return err;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	dir = TC_OPTS_GET(opts, tacho_msr_opts, device_dir, NULL);
	root = TC_OPTS_GET(opts, tacho_msr_opts, sys_root, NULL);
	dev->dir_default = !dir || !strcmp(dir, DEFAULT_DIR) || !strcmp(dir, DEFAULT_DIR "/");
	dev->dir = tc_strdup(dir ? dir : DEFAULT_DIR);
	dev->sys_root = tc_strdup(root ? root : "");
	if (!dev->dir || !dev->sys_root) {
		tacho_msr_dev_free(dev);
		return -ENOMEM;
	}
	if (TC_OPTS_GET(opts, tacho_msr_opts, cpu, NULL)) {
		/* a processor given stands for a fake tree's; the real devices are this
		 * machine's, whose table checks must be its own (a Pentium's register is
		 * another register here, or none) */
		if (dev->dir_default) {
			tacho_msr_dev_free(dev);
			return -EINVAL;
		}
		dev->cpu = *opts->cpu;
		dev->cpu_given = true;
	} else if (tacho_msr_cpu_live(&dev->cpu) == -ENOMEM) {
		tacho_msr_dev_free(dev);
		return -ENOMEM;
	}
	/* off x86 the processor stays unknown: reads still work on a fake tree */
	dev->wait = default_wait;
	if (TC_OPTS_HAS(opts, tacho_msr_opts, wait_arg) && opts->wait) {
		dev->wait = opts->wait;
		dev->wait_arg = opts->wait_arg;
	}
	*out = dev;
	return 0;
}

void tacho_msr_dev_free(struct tacho_msr_dev *dev)
{
	if (!dev)
		return;
	for (size_t i = 0; i < dev->nfds; i++) {
		if (dev->fds[i].rd >= 0)
			close(dev->fds[i].rd);
		if (dev->fds[i].wr >= 0)
			close(dev->fds[i].wr);
	}
	free(dev->fds);
	free(dev->dir);
	free(dev->sys_root);
	free(dev);
}

const struct tacho_msr_cpu *tacho_msr_dev_cpu(const struct tacho_msr_dev *dev)
{
	return dev ? &dev->cpu : NULL;
}

void tc_msr_dev_path(const struct tacho_msr_dev *dev, int cpu, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%d/msr", dev->dir, cpu);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int tacho_msr_dev_cpus(struct tacho_msr_dev *dev, int **cpus, size_t *n)
{
	size_t count = 0, alloc = 0;
	int *v = NULL, err = 0;
	struct dirent *e;
	DIR *d;

	if (!dev || !cpus || !n)
		return -EINVAL;
	*cpus = NULL;
	*n = 0;
	d = opendir(dev->dir);
	if (!d)
		return errno == ENOMEM ? -ENOMEM : -ENOENT;
	while ((e = readdir(d)) != NULL) {
		char path[4096];
		struct stat st;
		uint64_t cpu;

		if (tc_parse_u64(e->d_name, &cpu) || cpu > 65535)
			continue;
		tc_msr_dev_path(dev, (int)cpu, path, sizeof(path));
		if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
			continue;
		if (count == alloc) {
			size_t na = alloc ? 2 * alloc : 16;
			int *nv = realloc(v, na * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				goto out;
			}
			v = nv;
			alloc = na;
		}
		v[count++] = (int)cpu;
	}
	if (!count)
		err = -ENOENT;
out:
	closedir(d);
	if (err) {
		free(v);
		return err;
	}
	qsort(v, count, sizeof(*v), cmp_int);
	*cpus = v;
	*n = count;
	return 0;
}

/* The descriptor of CPU cpu's device for reading or writing, opened the first time. A
 * regular file's permission bits stand for what the driver would allow (see the top of
 * this file): checked before opening, so that root gets the same answers. */
static int dev_fd(struct tacho_msr_dev *dev, int cpu, bool write, int *fd, bool *file)
{
	struct tc_msr_fd *slot = NULL;
	char path[4096];
	struct stat st;
	bool regular = false;
	int f;

	for (size_t i = 0; i < dev->nfds; i++)
		if (dev->fds[i].cpu == cpu)
			slot = &dev->fds[i];
	if (slot && (write ? slot->wr : slot->rd) >= 0) {
		*fd = write ? slot->wr : slot->rd;
		*file = slot->regular;
		return 0;
	}
	tc_msr_dev_path(dev, cpu, path, sizeof(path));
	/* a processor given is a fake tree's: a real device is not opened for it */
	if (dev->cpu_given && stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
		return -EXDEV;
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		if (write && !(st.st_mode & 0222))
			return -EPERM;
		if (!write && !(st.st_mode & 0444))
			return -EACCES;
		regular = true;
	}
	f = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
	if (f < 0)
		return -errno;
	/* and what was opened, not what the path said before (a file swapped for a link
	 * to a device in between) */
	if (dev->cpu_given && (fstat(f, &st) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
		close(f);
		return -EXDEV;
	}
	if (!slot) {
		if (dev->nfds == dev->allocfds) {
			size_t na = dev->allocfds ? 2 * dev->allocfds : 8;
			struct tc_msr_fd *nf = realloc(dev->fds, na * sizeof(*nf));
			if (!nf) {
				close(f);
				return -ENOMEM;
			}
			dev->fds = nf;
			dev->allocfds = na;
		}
		slot = &dev->fds[dev->nfds++];
		slot->cpu = cpu;
		slot->rd = slot->wr = -1;
	}
	if (write)
		slot->wr = f;
	else
		slot->rd = f;
	slot->regular = regular;
	*fd = f;
	*file = regular;
	return 0;
}

/* Where register address lies: the driver's offset, or a regular file's 8 A. */
static off_t offset_of(uint32_t address, bool file)
{
	return file ? (off_t)address * 8 : (off_t)address;
}

/* A regular file past whose end the register lies stands for an MSR the CPU lacks. */
static bool past_end(int fd, off_t off)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (uint64_t)st.st_size < (uint64_t)off + 8;
}

int tacho_msr_rdmsr(struct tacho_msr_dev *dev, int cpu, uint32_t address, uint64_t *value)
{
	uint64_t v;
	ssize_t n;
	bool file;
	int fd, err;

	if (!dev || !value || cpu < 0)
		return -EINVAL;
	err = dev_fd(dev, cpu, false, &fd, &file);
	if (err)
		return err;
	do
		n = pread(fd, &v, sizeof(v), offset_of(address, file));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* the driver never reads short: a file that ends early lacks the register */
	if (n != (ssize_t)sizeof(v))
		return -EIO;
	*value = v;
	return 0;
}

int tacho_msr_wrmsr(struct tacho_msr_dev *dev, int cpu, const struct tacho_msr *m,
		    uint64_t value, unsigned flags)
{
	ssize_t n;
	bool file;
	int fd, err;

	if (!dev || !m || cpu < 0)
		return -EINVAL;
	if (!m->writable)
		return -TACHO_ENOWRITE;
	/* the same address may be another register on another processor */
	if (!tacho_msr_applies(m, &dev->cpu))
		return -TACHO_EMSRCPU;
	if (m->rest_reserved && (value & ~tc_msr_fields_mask(m)))
		return -TACHO_EOUTOFRANGE;
	if (!(flags & TACHO_MSR_FORCE))
		return -TACHO_ENOFORCE;
	err = dev_fd(dev, cpu, true, &fd, &file);
	if (err)
		return err;
	if (file && past_end(fd, offset_of(m->address, true)))
		return -EIO;
	do
		n = pwrite(fd, &value, sizeof(value), offset_of(m->address, file));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(value) ? 0 : -EIO;
}

/* --- explanations --- */

/* The selected mode of /sys/kernel/security/lockdown ("none [integrity]
 * confidentiality"), or "" when it cannot be read. */
static void lockdown_mode(const struct tacho_msr_dev *dev, char *mode, size_t size)
{
	char path[4096], line[128];
	const char *a, *b;

	mode[0] = '\0';
	snprintf(path, sizeof(path), "%s/sys/kernel/security/lockdown", dev->sys_root);
	if (tc_read_line_file(path, line, sizeof(line)))
		return;
	a = strchr(line, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b)
		snprintf(mode, size, "%.*s", (int)(b - a - 1), a + 1);
}

static bool sys_exists(const struct tacho_msr_dev *dev, const char *rel)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", dev->sys_root, rel);
	return stat(path, &st) == 0;
}

static bool is_regular(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int tacho_msr_explain(struct tacho_msr_dev *dev, int err, int cpu, const struct tacho_msr *m,
		      uint32_t address, bool write, char *buf, size_t size, enum tacho_hint *hint)
{
	char path[4096], who[160], mode[64], allow[32];
	enum tacho_hint h = TACHO_HINT_NONE;
	const char *name = m ? m->name : NULL;
	int n;

	if (!dev || !buf)
		return -EINVAL;
	tc_msr_dev_path(dev, cpu, path, sizeof(path));
	tacho_msr_cpu_format(&dev->cpu, who, sizeof(who));
	switch (err) {
	case -ENOENT:
	case -ENODEV:
		if (!dev->dir_default) {
			n = snprintf(buf, size, "no %s: the device tree %s has no device for CPU %d",
				     path, dev->dir, cpu);
			break;
		}
		h = TACHO_HINT_MACHINE;
		if (sys_exists(dev, "/sys/module/msr"))
			n = snprintf(buf, size, "no %s, although the msr driver is loaded: CPU %d "
				     "is offline or does not exist, or this /dev is not the "
				     "machine's (a container)", path, cpu);
		else
			n = snprintf(buf, size, "no %s: the msr driver is not loaded (modprobe msr "
				     "as root; a kernel built without CONFIG_X86_MSR, or a virtual "
				     "machine or container that does not pass it, has none)", path);
		break;
	case -ENXIO:
		n = snprintf(buf, size, "CPU %d is offline or does not exist (%s answers ENXIO)",
			     cpu, path);
		break;
	case -EACCES:
		h = TACHO_HINT_MACHINE;
		n = snprintf(buf, size, "%s may be opened by root only (the driver's devices are "
			     "mode 0600): run tacho as root", path);
		break;
	case -EPERM:
		h = TACHO_HINT_MACHINE;
		if (!write) {
			n = snprintf(buf, size, "opening %s needs CAP_SYS_RAWIO, which this process "
				     "lacks (root in a container, or a reduced capability set)", path);
			break;
		}
		lockdown_mode(dev, mode, sizeof(mode));
		allow[0] = '\0';
		{
			char ap[4096];
			snprintf(ap, sizeof(ap), "%s/sys/module/msr/parameters/allow_writes",
				 dev->sys_root);
			tc_read_line_file(ap, allow, sizeof(allow));
		}
		if (mode[0] && strcmp(mode, "none"))
			n = snprintf(buf, size, "kernel lockdown (%s) forbids writing MSRs "
				     "(%s/sys/kernel/security/lockdown; it comes with Secure Boot: "
				     "boot with lockdown=none where policy allows)", mode,
				     dev->sys_root);
		else if (!strcmp(allow, "off"))
			n = snprintf(buf, size, "the msr driver's allow_writes is off (as root: echo "
				     "on > %s/sys/module/msr/parameters/allow_writes, or boot with "
				     "msr.allow_writes=on)", dev->sys_root);
		else if (is_regular(path))
			n = snprintf(buf, size, "%s is read-only: this device filters writes, as the "
				     "kernel does under lockdown or msr.allow_writes=off", path);
		else
			n = snprintf(buf, size, "the kernel filtered the write (EPERM): kernel "
				     "lockdown or msr.allow_writes=off (%s/sys/kernel/security/"
				     "lockdown, %s/sys/module/msr/parameters/allow_writes)",
				     dev->sys_root, dev->sys_root);
		break;
	case -EIO: {
		char what[96], where[320] = "";

		if (name)
			snprintf(what, sizeof(what), "%s (0x%x)", name, address);
		else
			snprintf(what, sizeof(what), "MSR 0x%x", address);
		if (m && !tacho_msr_applies(m, &dev->cpu))
			snprintf(where, sizeof(where), "; %s exists on %s, and this is %s", name,
				 m->cpus, who);
		else if (dev->cpu.guest) {
			snprintf(where, sizeof(where), "; in a virtual machine the hypervisor "
				 "decides which MSRs exist, and this one does not give it");
			h = TACHO_HINT_MACHINE;
		}
		if (write)
			n = snprintf(buf, size, "the CPU refused to write %s: WRMSR faulted (EIO) "
				     "on a reserved bit, a value out of range, or a register it does "
				     "not implement%s", what, where);
		else
			n = snprintf(buf, size, "the CPU does not implement %s: RDMSR faulted "
				     "(EIO)%s", what, where);
		break;
	}
	case -TACHO_ENOWRITE:
		if (m && m->access == TACHO_MSR_RO)
			n = snprintf(buf, size, "the register is read-only (WRMSR faults on it)");
		else if (m && m->not_writable)
			n = snprintf(buf, size, "tacho does not write this register: %s",
				     m->not_writable);
		else
			n = snprintf(buf, size, "tacho does not write this register");
		break;
	case -TACHO_ENOFORCE:
		n = snprintf(buf, size, "a write to %s changes what CPU %d does for every program "
			     "on it, so it must be forced", name ? name : "an MSR", cpu);
		break;
	case -TACHO_EMSRCPU:
		n = snprintf(buf, size, "the register exists on %s, and this is %s (the address "
			     "may be another register here)", m ? m->cpus : "other processors", who);
		break;
	case -TACHO_EOUTOFRANGE:
		n = snprintf(buf, size, "the value sets bits %s reserves", name ? name : "the register");
		break;
	case -EXDEV:
		n = snprintf(buf, size, "%s is not a file of the fake tree but a device: the "
			     "processor given for a fake tree (%s) is not the one behind a real "
			     "device", path, who);
		break;
	default:
		n = snprintf(buf, size, "%s: %s", path, tacho_strerror(err));
		break;
	}
	if (hint)
		*hint = h;
	return n;
}
