/* test-msr-device.c - reading and writing registers through a fake tree of msr devices
 * (sparse regular files; the library's device directory is a parameter): exact values
 * over several CPUs, EIO past a file's end, EPERM for a read-only file, EACCES for an
 * unreadable one, a missing CPU, a directory instead of a device, and every refusal and
 * explanation of a write (not writable, read-only in the manual, another processor's,
 * reserved bits, not forced, a bad FIELD=VAL, the kernel's filters read from a fake
 * /sys); a processor given only for a fake tree, never for a real device. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "msr-fake.h"
#include "msr/msr.h"

static const struct tacho_msr_cpu skylake = { TACHO_VENDOR_INTEL, 6, 0x55, false };
static const struct tacho_msr_cpu skylake_guest = { TACHO_VENDOR_INTEL, 6, 0x55, true };

static struct tacho_msr_dev *dev_on(const struct th_msr_fake *f, const struct tacho_msr_cpu *cpu,
				    bool sys)
{
	struct tacho_msr_opts o = { .sz = sizeof(o), .device_dir = f->dir, .cpu = cpu,
				    .sys_root = sys ? f->sys : NULL };
	struct tacho_msr_dev *dev;

	assert_int_equal(tacho_msr_dev_new(&o, &dev), 0);
	return dev;
}

static const struct tacho_msr *reg(const char *name)
{
	const struct tacho_msr *m = tc_msr_by_name(name);

	assert_non_null(m);
	return m;
}

static void explain(struct tacho_msr_dev *dev, int err, int cpu, const char *name,
		    uint32_t address, bool write, char *buf, size_t size, enum tacho_hint *hint)
{
	tacho_msr_explain(dev, err, cpu, name ? reg(name) : NULL, address, write, buf, size, hint);
}

/* --- reading --- */

static void test_read(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	struct tacho_msr_set *set;
	struct tacho_msr_entry e = { .sz = sizeof(e) };
	const int cpus[] = { 0, 1, 2 };
	char why[512];
	enum tacho_hint hint;
	uint64_t v;
	(void)state;

	th_msr_fake_new(&f, 3, 0x400);
	th_msr_poke(&f, 0, 0x10, 0x123456789abcdef0ull);
	th_msr_poke(&f, 1, 0x10, 0x0fedcba987654321ull);
	th_msr_poke(&f, 2, 0x186, 0x4300c0);
	dev = dev_on(&f, &skylake, false);
	assert_int_equal(tacho_msr_dev_cpu(dev)->model, 0x55);

	assert_int_equal(tacho_msr_rdmsr(dev, 0, 0x10, &v), 0);
	assert_int_equal(v, 0x123456789abcdef0ull);
	assert_int_equal(tacho_msr_rdmsr(dev, 1, 0x10, &v), 0);
	assert_int_equal(v, 0x0fedcba987654321ull);
	/* the file holds the registers below 0x400 */
	assert_int_equal(tacho_msr_rdmsr(dev, 0, 0x3ff, &v), 0);
	assert_int_equal(tacho_msr_rdmsr(dev, 0, 0x400, &v), -EIO);
	assert_int_equal(tacho_msr_rdmsr(dev, 0, 0x606, &v), -EIO);
	assert_int_equal(tacho_msr_rdmsr(dev, -1, 0x10, &v), -EINVAL);

	/* -C 0-2 of one register: an entry per CPU, in order */
	assert_int_equal(tacho_msr_set_new(0, &set), 0);
	assert_int_equal(tacho_msr_set_rdmsr(set, dev, reg("IA32_PERFEVTSEL0"), 0x186, cpus, 3), 0);
	assert_int_equal(tacho_msr_set_count(set), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(tacho_msr_set_entry(set, i, &e), 0);
		assert_int_equal(e.cpu, (int)i);
		assert_int_equal(e.err, 0);
		assert_null(e.why);
		assert_true(e.has_value);
		assert_int_equal(e.value, i == 2 ? 0x4300c0 : 0);
	}
	/* an address past the files: EIO on every CPU, each explained */
	assert_int_equal(tacho_msr_set_rdmsr(set, dev, reg("MSR_RAPL_POWER_UNIT"), 0x606, cpus, 2),
			 -EIO);
	assert_int_equal(tacho_msr_set_count(set), 5);
	assert_int_equal(tacho_msr_set_entry(set, 4, &e), 0);
	assert_int_equal(e.err, -EIO);
	assert_false(e.has_value);
	assert_string_equal(e.why, "the CPU does not implement MSR_RAPL_POWER_UNIT (0x606): RDMSR "
			    "faulted (EIO)");
	assert_int_equal(e.hint, TACHO_HINT_NONE);
	assert_int_equal(tacho_msr_set_entry(set, 5, &e), -EINVAL);
	tacho_msr_set_free(set);

	/* EIO for another processor's register says whose it is */
	explain(dev, -EIO, 0, "PERF_CTL0", 0xc0010200, false, why, sizeof(why), &hint);
	assert_string_equal(why, "the CPU does not implement PERF_CTL0 (0xc0010200): RDMSR faulted "
			    "(EIO); PERF_CTL0 exists on AMD from family 15h on (CPUID "
			    "8000_0001h:ECX[23], PerfCtrExtCore), and this is Intel family 0x6 "
			    "model 0x55");
	assert_int_equal(hint, TACHO_HINT_NONE);
	explain(dev, -EIO, 3, NULL, 0x1234, true, why, sizeof(why), NULL);
	assert_string_equal(why, "the CPU refused to write MSR 0x1234: WRMSR faulted (EIO) on a "
			    "reserved bit, a value out of range, or a register it does not "
			    "implement");
	tacho_msr_dev_free(dev);

	/* in a virtual machine the hypervisor decides, and the hint says where to look */
	dev = dev_on(&f, &skylake_guest, false);
	explain(dev, -EIO, 0, "MSR_RAPL_POWER_UNIT", 0x606, false, why, sizeof(why), &hint);
	assert_string_equal(why, "the CPU does not implement MSR_RAPL_POWER_UNIT (0x606): RDMSR "
			    "faulted (EIO); in a virtual machine the hypervisor decides which "
			    "MSRs exist, and this one does not give it");
	assert_int_equal(hint, TACHO_HINT_MACHINE);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
}

/* What keeps a device from opening, each explained. */
static void test_open_errors(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	struct tacho_msr_set *set;
	struct tacho_msr_entry e = { .sz = sizeof(e) };
	char path[256], why[512], want[512];
	enum tacho_hint hint;
	const int cpus[] = { 0, 1, 5 };
	int *list;
	size_t n;
	uint64_t v;
	(void)state;

	th_msr_fake_new(&f, 2, 0x400);
	/* CPU 1's device is a directory, and CPU 0's nobody may read */
	assert_int_equal(unlink(th_msr_fake_path(&f, 1)), 0);
	assert_int_equal(mkdir(th_msr_fake_path(&f, 1), 0755), 0);
	assert_int_equal(chmod(th_msr_fake_path(&f, 0), 0200), 0);
	dev = dev_on(&f, &skylake, false);
	assert_int_equal(tacho_msr_rdmsr(dev, 0, 0x10, &v), -EACCES);
	assert_int_equal(tacho_msr_rdmsr(dev, 1, 0x10, &v), -EISDIR);
	assert_int_equal(tacho_msr_rdmsr(dev, 5, 0x10, &v), -ENOENT);

	assert_int_equal(tacho_msr_set_new(0, &set), 0);
	assert_int_equal(tacho_msr_set_rdmsr(set, dev, reg("IA32_TIME_STAMP_COUNTER"), 0x10, cpus, 3),
			 -EACCES);
	assert_int_equal(tacho_msr_set_entry(set, 0, &e), 0);
	snprintf(want, sizeof(want), "%s may be opened by root only (the driver's devices are mode "
		 "0600): run tacho as root", th_msr_fake_path(&f, 0));
	assert_string_equal(e.why, want);
	assert_int_equal(e.hint, TACHO_HINT_MACHINE);
	assert_int_equal(tacho_msr_set_entry(set, 1, &e), 0);
	assert_int_equal(e.err, -EISDIR);
	snprintf(want, sizeof(want), "%s: Is a directory", th_msr_fake_path(&f, 1));
	assert_string_equal(e.why, want);
	assert_int_equal(tacho_msr_set_entry(set, 2, &e), 0);
	snprintf(want, sizeof(want), "no %s/5/msr: the device tree %s has no device for CPU 5",
		 f.dir, f.dir);
	assert_string_equal(e.why, want);
	assert_int_equal(e.hint, TACHO_HINT_NONE);
	tacho_msr_set_free(set);

	/* the CPUs that have a device: a directory is none, nor a folder without msr */
	snprintf(path, sizeof(path), "%s/7", f.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/cpuid", f.dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(tacho_msr_dev_cpus(dev, &list, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(list[0], 0);
	free(list);
	tacho_msr_dev_free(dev);

	/* this machine's /dev/cpu (with this machine's processor: a given one is only for
	 * fake trees): whether the driver is loaded decides the sentence */
	{
		struct tacho_msr_opts o = { .sz = sizeof(o), .sys_root = f.sys };
		assert_int_equal(tacho_msr_dev_new(&o, &dev), 0);
	}
	tacho_msr_explain(dev, -ENOENT, 0, NULL, 0, false, why, sizeof(why), &hint);
	assert_string_equal(why, "no /dev/cpu/0/msr: the msr driver is not loaded (modprobe msr as "
			    "root; a kernel built without CONFIG_X86_MSR, or a virtual machine or "
			    "container that does not pass it, has none)");
	assert_int_equal(hint, TACHO_HINT_MACHINE);
	th_msr_fake_sys(&f, "sys/module/msr/parameters/allow_writes", "on\n");
	tacho_msr_explain(dev, -ENOENT, 3, NULL, 0, false, why, sizeof(why), &hint);
	assert_string_equal(why, "no /dev/cpu/3/msr, although the msr driver is loaded: CPU 3 is "
			    "offline or does not exist, or this /dev is not the machine's (a "
			    "container)");
	tacho_msr_explain(dev, -EPERM, 0, NULL, 0, false, why, sizeof(why), &hint);
	assert_string_equal(why, "opening /dev/cpu/0/msr needs CAP_SYS_RAWIO, which this process "
			    "lacks (root in a container, or a reduced capability set)");
	assert_int_equal(hint, TACHO_HINT_MACHINE);
	tacho_msr_explain(dev, -ENXIO, 9, NULL, 0, false, why, sizeof(why), &hint);
	assert_string_equal(why, "CPU 9 is offline or does not exist (/dev/cpu/9/msr answers ENXIO)");
	tacho_msr_dev_free(dev);

	/* a tree with no device at all */
	th_msr_fake_free(&f);
	th_msr_fake_new(&f, 0, 0);
	dev = dev_on(&f, &skylake, false);
	assert_int_equal(tacho_msr_dev_cpus(dev, &list, &n), -ENOENT);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
	{
		struct tacho_msr_opts o = { .sz = sizeof(o), .device_dir = "/nonexistent/tacho",
					    .cpu = &skylake };
		assert_int_equal(tacho_msr_dev_new(&o, &dev), 0);
		assert_int_equal(tacho_msr_dev_cpus(dev, &list, &n), -ENOENT);
		tacho_msr_dev_free(dev);
		o.sz = 1;
		assert_int_equal(tacho_msr_dev_new(&o, &dev), -EINVAL);
	}
}

/* A processor given is a fake tree's: refused with /dev/cpu, and a device of the tree
 * that is not a regular file (a link to a real one, here /dev/null) is not opened for
 * it; the same tree without a given processor uses the link. */
static void test_given_cpu_real_devices(void **state)
{
	struct tacho_msr_opts o = { .sz = sizeof(o), .cpu = &skylake };
	struct tacho_msr_dev *dev = NULL;
	struct th_msr_fake f;
	char why[512];
	uint64_t v = 1;
	(void)state;

	assert_int_equal(tacho_msr_dev_new(&o, &dev), -EINVAL);
	assert_null(dev);
	o.device_dir = "/dev/cpu/";
	assert_int_equal(tacho_msr_dev_new(&o, &dev), -EINVAL);
	th_msr_fake_new(&f, 2, 0x200);
	assert_int_equal(unlink(th_msr_fake_path(&f, 1)), 0);
	assert_int_equal(symlink("/dev/null", th_msr_fake_path(&f, 1)), 0);
	dev = dev_on(&f, &skylake, false);
	assert_int_equal(tacho_msr_rdmsr(dev, 0, 0x186, &v), 0);
	assert_int_equal(tacho_msr_rdmsr(dev, 1, 0x186, &v), -EXDEV);
	assert_int_equal(tacho_msr_wrmsr(dev, 1, reg("IA32_PERFEVTSEL0"), 0, TACHO_MSR_FORCE),
			 -EXDEV);
	tacho_msr_explain(dev, -EXDEV, 1, NULL, 0x186, true, why, sizeof(why), NULL);
	assert_non_null(strstr(why, "/1/msr is not a file of the fake tree but a device: the "
			       "processor given for a fake tree (Intel family 0x6 model 0x55) is "
			       "not the one behind a real device"));
	tacho_msr_dev_free(dev);
	o.cpu = NULL;
	o.device_dir = f.dir;
	assert_int_equal(tacho_msr_dev_new(&o, &dev), 0);
	/* /dev/null reads nothing: the driver's answer for a register the CPU lacks */
	assert_int_equal(tacho_msr_rdmsr(dev, 1, 0x186, &v), -EIO);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
}

/* --- writing --- */

static void test_write_refused(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	char *before, *after, why[512];
	size_t len, len2;
	enum tacho_hint hint;
	(void)state;

	th_msr_fake_new(&f, 1, 0x400);
	th_msr_poke(&f, 0, 0x10, 1000);
	before = th_msr_fake_snapshot(&f, 0, &len);
	dev = dev_on(&f, &skylake, false);
	/* in this order: the table, the processor, the value, the flag */
	assert_int_equal(tacho_msr_wrmsr(dev, 0, reg("IA32_TIME_STAMP_COUNTER"), 0, TACHO_MSR_FORCE),
			 -TACHO_ENOWRITE);
	assert_int_equal(tacho_msr_wrmsr(dev, 0, reg("IA32_PERF_GLOBAL_STATUS"), 0, TACHO_MSR_FORCE),
			 -TACHO_ENOWRITE);
	assert_int_equal(tacho_msr_wrmsr(dev, 0, reg("CESR"), 0x83, TACHO_MSR_FORCE),
			 -TACHO_EMSRCPU);
	assert_int_equal(tacho_msr_wrmsr(dev, 0, reg("IA32_PERFEVTSEL0"), 1ull << 63,
					 TACHO_MSR_FORCE), -TACHO_EOUTOFRANGE);
	assert_int_equal(tacho_msr_wrmsr(dev, 0, reg("IA32_PERFEVTSEL0"), 0x4300c0, 0),
			 -TACHO_ENOFORCE);
	assert_int_equal(tacho_msr_wrmsr(dev, 0, NULL, 0, TACHO_MSR_FORCE), -EINVAL);
	/* nothing was written */
	after = th_msr_fake_snapshot(&f, 0, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(before, after, len);
	free(after);

	explain(dev, -TACHO_ENOWRITE, 0, "IA32_TIME_STAMP_COUNTER", 0x10, true, why, sizeof(why),
		&hint);
	assert_string_equal(why, "tacho does not write this register: the kernel keeps time with "
			    "it (clocksource tsc): a write breaks clock_gettime and the scheduler's "
			    "clock");
	explain(dev, -TACHO_ENOWRITE, 0, "IA32_PERF_GLOBAL_STATUS", 0x38e, true, why, sizeof(why),
		NULL);
	assert_string_equal(why, "the register is read-only (WRMSR faults on it)");
	explain(dev, -TACHO_EMSRCPU, 0, "CESR", 0x11, true, why, sizeof(why), NULL);
	assert_string_equal(why, "the register exists on Intel Pentium and Pentium MMX (family 5), "
			    "and this is Intel family 0x6 model 0x55 (the address may be another "
			    "register here)");
	explain(dev, -TACHO_ENOFORCE, 2, "IA32_PERFEVTSEL0", 0x186, true, why, sizeof(why), NULL);
	assert_string_equal(why, "a write to IA32_PERFEVTSEL0 changes what CPU 2 does for every "
			    "program on it, so it must be forced");
	explain(dev, -TACHO_EOUTOFRANGE, 0, "IA32_PERFEVTSEL0", 0x186, true, why, sizeof(why), NULL);
	assert_string_equal(why, "the value sets bits IA32_PERFEVTSEL0 reserves");
	explain(dev, -ENOMEM, 0, NULL, 0x10, false, why, sizeof(why), NULL);
	assert_non_null(strstr(why, "Cannot allocate memory"));
	tacho_msr_dev_free(dev);
	free(before);
	th_msr_fake_free(&f);
}

/* A write of FIELD=VAL on two CPUs: what each had, what was written, what reads back. */
static void test_write_set(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	struct tacho_msr_set *set;
	struct tacho_msr_entry e = { .sz = sizeof(e) };
	struct tacho_diag d = { .sz = sizeof(d) };
	const int cpus[] = { 0, 1 };
	char *before, *after;
	size_t len, len2;
	(void)state;

	th_msr_fake_new(&f, 2, 0x400);
	th_msr_poke(&f, 0, 0x186, 0x1000000);      /* cmask 1 */
	th_msr_poke(&f, 1, 0x186, 0x412e);
	dev = dev_on(&f, &skylake, false);
	assert_int_equal(tacho_msr_set_new(TACHO_MSR_SET_FIELDS, &set), 0);

	/* a bad assignment writes nothing, on any CPU */
	before = th_msr_fake_snapshot(&f, 1, &len);
	d = (struct tacho_diag){ .sz = sizeof(d) };
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, reg("IA32_PERFEVTSEL0"), cpus, 2,
					     "event=0xc0,umask=256", TACHO_MSR_FORCE, &d),
			 -TACHO_EOUTOFRANGE);
	assert_string_equal(d.message, "umask=256 does not fit in 8 bits (15:8; at most 0xff)");
	assert_int_equal(d.column, 18);
	assert_int_equal(tacho_msr_set_count(set), 0);
	/* not forced: what would be written, per CPU; nothing is */
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, reg("IA32_PERFEVTSEL0"), cpus, 2,
					     "event=0xc0,usr=1,os=1,en=1", 0, &d), -TACHO_ENOFORCE);
	assert_int_equal(tacho_msr_set_count(set), 2);
	assert_int_equal(tacho_msr_set_entry(set, 1, &e), 0);
	assert_true(e.wrote);
	assert_false(e.written);
	assert_int_equal(e.err, -TACHO_ENOFORCE);
	assert_int_equal(e.before, 0x412e);
	assert_int_equal(e.written_value, 0x4341c0);
	assert_true(e.has_value);
	assert_int_equal(e.value, 0x412e);
	after = th_msr_fake_snapshot(&f, 1, &len2);
	assert_memory_equal(before, after, len);
	free(before);
	free(after);
	tacho_msr_set_free(set);

	/* forced: written and read back, fields not named keep each CPU's bits */
	assert_int_equal(tacho_msr_set_new(0, &set), 0);
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, reg("IA32_PERFEVTSEL0"), cpus, 2,
					     "event=0xc0,usr=1,os=1,en=1", TACHO_MSR_FORCE, &d), 0);
	assert_int_equal(th_msr_peek(&f, 0, 0x186), 0x14300c0);
	assert_int_equal(th_msr_peek(&f, 1, 0x186), 0x4341c0);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(tacho_msr_set_entry(set, i, &e), 0);
		assert_true(e.written);
		assert_int_equal(e.err, 0);
		assert_int_equal(e.value, i ? 0x4341c0 : 0x14300c0);
		assert_int_equal(e.before, i ? 0x412e : 0x1000000);
	}
	/* a whole value */
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, reg("IA32_PERFEVTSEL0"), cpus, 1, "0",
					     TACHO_MSR_FORCE, &d), 0);
	assert_int_equal(th_msr_peek(&f, 0, 0x186), 0);
	/* refusals come before any read */
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, reg("IA32_APERF"), cpus, 2, "0",
					     TACHO_MSR_FORCE, &d), -TACHO_ENOWRITE);
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, reg("PERF_CTL0"), cpus, 2, "0",
					     TACHO_MSR_FORCE, &d), -TACHO_EMSRCPU);
	assert_int_equal(tacho_msr_set_count(set), 3);
	tacho_msr_set_free(set);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);

	/* a register past the file's end: the read before the write fails, explained, and
	 * nothing is written */
	th_msr_fake_new(&f, 1, 0x186);
	dev = dev_on(&f, &skylake, false);
	assert_int_equal(tacho_msr_set_new(0, &set), 0);
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, reg("IA32_PERFEVTSEL0"), cpus, 1,
					     "en=1", TACHO_MSR_FORCE, &d), -EIO);
	assert_int_equal(tacho_msr_set_count(set), 1);
	assert_int_equal(tacho_msr_set_entry(set, 0, &e), 0);
	assert_false(e.wrote);
	assert_string_equal(e.why, "the CPU does not implement IA32_PERFEVTSEL0 (0x186): RDMSR "
			    "faulted (EIO)");
	assert_int_equal(tacho_msr_wrmsr(dev, 0, reg("IA32_PERFEVTSEL0"), 0x4300c0,
					 TACHO_MSR_FORCE), -EIO);
	/* a register below the end is there, and its neighbours keep their values */
	th_msr_poke(&f, 0, 0xc2, 0x2222);
	assert_int_equal(tacho_msr_wrmsr(dev, 0, reg("IA32_PMC0"), ~0ull, TACHO_MSR_FORCE), 0);
	assert_int_equal(th_msr_peek(&f, 0, 0xc1), ~0ull);
	assert_int_equal(th_msr_peek(&f, 0, 0xc2), 0x2222);
	assert_int_equal(th_msr_peek(&f, 0, 0xc0), 0);
	tacho_msr_set_free(set);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
}

/* A write the kernel filters: EPERM from a read-only file, explained by what the fake
 * /sys says: lockdown first, then allow_writes, else the file itself. */
static void test_write_filtered(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	struct tacho_msr_set *set;
	struct tacho_msr_entry e = { .sz = sizeof(e) };
	const int cpus[] = { 0, 1 };
	char why[512], want[512];
	enum tacho_hint hint;
	(void)state;

	th_msr_fake_new(&f, 2, 0x400);
	assert_int_equal(chmod(th_msr_fake_path(&f, 1), 0444), 0);
	dev = dev_on(&f, &skylake, true);
	assert_int_equal(tacho_msr_wrmsr(dev, 1, reg("IA32_PMC0"), 5, TACHO_MSR_FORCE), -EPERM);
	assert_int_equal(th_msr_peek(&f, 1, 0xc1), 0);
	/* reading is still allowed */
	{
		uint64_t v;
		assert_int_equal(tacho_msr_rdmsr(dev, 1, 0xc1, &v), 0);
	}

	/* on both CPUs: CPU 0 is written, CPU 1 refuses and stops the write */
	assert_int_equal(tacho_msr_set_new(0, &set), 0);
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, reg("IA32_PMC0"), cpus, 2, "7",
					     TACHO_MSR_FORCE, NULL), -EPERM);
	assert_int_equal(th_msr_peek(&f, 0, 0xc1), 7);
	assert_int_equal(tacho_msr_set_entry(set, 1, &e), 0);
	assert_false(e.written);
	assert_int_equal(e.err, -EPERM);
	snprintf(want, sizeof(want), "%s is read-only: this device filters writes, as the kernel "
		 "does under lockdown or msr.allow_writes=off", th_msr_fake_path(&f, 1));
	assert_string_equal(e.why, want);
	assert_int_equal(e.hint, TACHO_HINT_MACHINE);
	tacho_msr_set_free(set);

	th_msr_fake_sys(&f, "sys/module/msr/parameters/allow_writes", "off\n");
	th_msr_fake_sys(&f, "sys/kernel/security/lockdown", "[none] integrity confidentiality\n");
	explain(dev, -EPERM, 1, "IA32_PMC0", 0xc1, true, why, sizeof(why), &hint);
	snprintf(want, sizeof(want), "the msr driver's allow_writes is off (as root: echo on > "
		 "%s/sys/module/msr/parameters/allow_writes, or boot with msr.allow_writes=on)",
		 f.sys);
	assert_string_equal(why, want);
	th_msr_fake_sys(&f, "sys/kernel/security/lockdown", "none [integrity] confidentiality\n");
	explain(dev, -EPERM, 1, "IA32_PMC0", 0xc1, true, why, sizeof(why), &hint);
	snprintf(want, sizeof(want), "kernel lockdown (integrity) forbids writing MSRs "
		 "(%s/sys/kernel/security/lockdown; it comes with Secure Boot: boot with "
		 "lockdown=none where policy allows)", f.sys);
	assert_string_equal(why, want);
	assert_int_equal(hint, TACHO_HINT_MACHINE);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
}

/* Values given by hand and the set's bookkeeping. */
static void test_set_add(void **state)
{
	struct tacho_msr_set *set;
	struct tacho_msr_entry e = { .sz = sizeof(e) };
	(void)state;

	assert_int_equal(tacho_msr_set_new(0, &set), 0);
	assert_int_equal(tacho_msr_set_add(set, -1, reg("CESR"), 0x11, 0x83, "PMX"), 0);
	assert_int_equal(tacho_msr_set_add(set, 3, NULL, 0x1234, 9, NULL), 0);
	assert_int_equal(tacho_msr_set_add(set, -1, reg("CESR"), 0x12, 0, NULL), -EINVAL);
	assert_int_equal(tacho_msr_set_add(set, -2, NULL, 0, 0, NULL), -EINVAL);
	assert_int_equal(tacho_msr_set_count(set), 2);
	assert_int_equal(tacho_msr_set_entry(set, 0, &e), 0);
	assert_string_equal(e.label, "PMX");
	assert_int_equal(e.cpu, -1);
	assert_int_equal(e.value, 0x83);
	assert_int_equal(tacho_msr_set_entry(set, 1, &e), 0);
	assert_null(e.msr);
	assert_null(e.label);
	assert_int_equal(e.address, 0x1234);
	/* a struct shorter than the first version is refused and left as it was */
	e.sz = offsetof(struct tacho_msr_entry, written_value);
	e.address = 77;
	assert_int_equal(tacho_msr_set_entry(set, 1, &e), -EINVAL);
	assert_int_equal(e.address, 77);
	assert_int_equal(tacho_msr_set_count(NULL), 0);
	tacho_msr_set_free(set);
	tacho_msr_set_free(NULL);
	tacho_msr_dev_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_given_cpu_real_devices),
		cmocka_unit_test(test_write_refused),
		cmocka_unit_test(test_write_set),
		cmocka_unit_test(test_write_filtered),
		cmocka_unit_test(test_set_add),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
