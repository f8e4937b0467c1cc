/* machine.c - what this machine and this user allow tacho to measure, and why: the
 * facts behind `tacho doctor`, each with what to do about a limitation. It stands above
 * the engine (its probes), cpu, tsc and the counter detection of lib/stat. */
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/engine.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"
#include "tacho/events.h"
#include "tacho/machine.h"
#include "tacho/tsc.h"

#define EVDEV "/sys/bus/event_source/devices"

const char *tacho_check_state_name(enum tacho_check_state s)
{
	static const char *const names[] = {
		[TACHO_CHECK_OK] = "ok",
		[TACHO_CHECK_LIMIT] = "limited",
		[TACHO_CHECK_INFO] = "info",
	};

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

/* What one run of the checks shares. */
struct probe {
	struct tc_perf_env env;
	bool have_cpu;
	struct tacho_cpu_info cpu;
	struct tacho_check *out;   /* the caller's array: max entries of check_sz bytes */
	size_t max, n, check_sz;
	struct tacho_check cur;    /* the row being filled, the library's struct */
	bool pending;              /* cur is row n - 1, not yet copied out */
	bool grow;                 /* out is the library's: grown as rows come */
	bool oom;                  /* growing it failed */
};

/* Copies the row being filled into the caller's array, at its element size, when it
 * has room; a row beyond max is counted, not stored: the caller learns it needs more. */
static void flush(struct probe *p)
{
	if (p->pending && p->grow && p->n - 1 >= p->max && !p->oom) {
		size_t max = p->max ? 2 * p->max : 32;
		void *nc = realloc(p->out, max * p->check_sz);

		if (nc) {
			p->out = nc;
			p->max = max;
		} else {
			p->oom = true;
		}
	}
	if (p->pending && p->n - 1 < p->max)
		tc_sized_put(TC_ELEM(p->out, p->n - 1, p->check_sz), p->check_sz, &p->cur,
			     sizeof(p->cur));
	p->pending = false;
}

static struct tacho_check *row(struct probe *p, const char *key, const char *title,
			       enum tacho_check_state st)
{
	struct tacho_check *c = &p->cur;

	flush(p);
	memset(c, 0, sizeof(*c));
	c->key = key;
	c->title = title;
	c->state = st;
	p->n++;
	p->pending = true;
	return c;
}

static void setf(char *buf, size_t size, const char *fmt, ...) TC_PRINTF(3, 4);
static void setf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static void addf(char *buf, size_t size, const char *fmt, ...) TC_PRINTF(3, 4);
static void addf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* The explainer's sentence for a row, and its hint: never "what this machine allows",
 * since the doctor is the page that hint would send the reader to. */
static void explain(struct probe *p, struct tacho_check *c, int err,
		    const struct perf_event_attr *a, char *buf, size_t size)
{
	tc_perf_explain(&p->env, err, a, NULL, 0, buf, size, &c->hint);
	if (c->hint == TACHO_HINT_MACHINE)
		c->hint = TACHO_HINT_NONE;
}

/* Opens attr on the calling thread and closes it again: 0 or -errno. */
static int try_open(struct perf_event_attr *a)
{
	a->disabled = 1;
	return tc_perf_probe(a, NULL);
}

static void check_pmu(struct probe *p)
{
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE,
				     .config = PERF_COUNT_HW_INSTRUCTIONS, .exclude_kernel = 1 };
	struct tacho_check *c;
	char path[256], name[64] = "";
	int err = try_open(&a);
	size_t len;

	if (p->env.core_pmu[0]) {
		snprintf(path, sizeof(path), EVDEV "/%s/caps/pmu_name", p->env.core_pmu);
		tc_read_line_file(path, name, sizeof(name));
	}
	c = row(p, "pmu", "hardware PMU", err ? TACHO_CHECK_LIMIT : TACHO_CHECK_OK);
	if (!err) {
		setf(c->value, sizeof(c->value), "%s%s%s%s", p->env.core_pmu, name[0] ? " (" : "",
		     name, name[0] ? ")" : "");
		setf(c->text, sizeof(c->text), "hardware events count here (" EVDEV "/%s)",
		     p->env.core_pmu);
		if (p->have_cpu && p->cpu.pmu.version)
			addf(c->text, sizeof(c->text), "; CPUID leaf 0xA: version %u, %u general "
			     "counters of %u bits, %u fixed", p->cpu.pmu.version,
			     p->cpu.pmu.gp_counters, p->cpu.pmu.gp_width,
			     p->cpu.pmu.fixed_counters);
		return;
	}
	setf(c->value, sizeof(c->value), "%s", p->env.core_pmu[0] ? p->env.core_pmu : "none");
	/* the facts first, so that the sentence ends with what to do */
	if (p->have_cpu)
		setf(c->text, sizeof(c->text), "CPUID leaf 0xA: PMU version %u, %u general "
		     "counters; ", p->cpu.pmu.version, p->cpu.pmu.gp_counters);
	len = strlen(c->text);
	explain(p, c, err, &a, c->text + len, sizeof(c->text) - len);
}

static void check_counters(struct probe *p)
{
	struct tacho_pmu_counters pc = { .sz = sizeof(pc) };
	struct tacho_check *c;

	if (tacho_pmu_counters_detect(&pc) != 0)
		return;
	c = row(p, "counters", "counters per task",
		pc.known && !pc.none && p->env.core_pmu[0] ? TACHO_CHECK_OK : TACHO_CHECK_INFO);
	if (pc.known && !pc.none && !p->env.core_pmu[0]) {
		/* CPUID describes counters, the kernel drives none: a VM that hides them */
		setf(c->value, sizeof(c->value), "0 usable");
		setf(c->text, sizeof(c->text), "CPUID describes %u general-purpose and %u fixed "
		     "counters (%s), but the kernel has no PMU driver for them here, so a task "
		     "gets none; breakpoints: %u debug registers", pc.gp, pc.fixed, pc.source,
		     pc.breakpoints);
	} else if (!pc.known) {
		setf(c->value, sizeof(c->value), "unknown");
		setf(c->text, sizeof(c->text), "the CPU does not say how many counters it has "
		     "(%s): counting lets the kernel multiplex what does not fit, and says "
		     "how much of the time each event was counted",
		     pc.source[0] ? pc.source : "no source");
	} else if (pc.none) {
		setf(c->value, sizeof(c->value), "0");
		setf(c->text, sizeof(c->text), "no hardware counters, says %s; "
		     "breakpoints: %u debug registers", pc.source, pc.breakpoints);
	} else {
		setf(c->value, sizeof(c->value), "%u general, %u fixed", pc.gp, pc.fixed);
		setf(c->text, sizeof(c->text), "%u general-purpose and %u fixed counters (%s); "
		     "breakpoints: %u debug registers", pc.gp, pc.fixed, pc.source,
		     pc.breakpoints);
	}
	if (pc.note[0])
		addf(c->text, sizeof(c->text), "; %s", pc.note);
}

static void check_vm(struct probe *p)
{
	char hvtype[64] = "", vendor[128] = "", product[128] = "";
	bool vm = p->env.hypervisor;
	struct tacho_check *c;

	tc_read_line_file("/sys/hypervisor/type", hvtype, sizeof(hvtype));
	tc_read_line_file("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor));
	tc_read_line_file("/sys/class/dmi/id/product_name", product, sizeof(product));
	vm = vm || hvtype[0];
	c = row(p, "vm", "virtual machine", TACHO_CHECK_INFO);
	if (!vm) {
		setf(c->value, sizeof(c->value), "no");
		setf(c->text, sizeof(c->text), "no hypervisor: CPUID.1:ECX[31] is clear");
	} else {
		const char *hv = p->have_cpu ? tacho_hypervisor_name(p->cpu.hypervisor) : "unknown";
		setf(c->value, sizeof(c->value), "yes (%s)", hv);
		setf(c->text, sizeof(c->text), "a guest of %s", hv);
		if (p->have_cpu && p->cpu.hv_signature[0])
			addf(c->text, sizeof(c->text), " (CPUID 0x40000000 signature \"%s\")",
			     p->cpu.hv_signature);
		addf(c->text, sizeof(c->text), ": the counters, the TSC and the MSRs are what "
		     "the hypervisor chooses to show");
	}
	if (hvtype[0])
		addf(c->text, sizeof(c->text), "; /sys/hypervisor/type: %s", hvtype);
	if (vendor[0] || product[0])
		addf(c->text, sizeof(c->text), "; DMI: %s %s", vendor, product);
}

static void check_paranoid(struct probe *p)
{
	int lvl = p->env.paranoid;
	bool priv = tc_perf_env_privileged(&p->env);
	struct tacho_check *c;

	c = row(p, "paranoid", "perf_event_paranoid",
		priv || lvl <= 0 ? TACHO_CHECK_OK : TACHO_CHECK_LIMIT);
	if (lvl == TC_PARANOID_UNKNOWN)
		setf(c->value, sizeof(c->value), "unknown");
	else
		setf(c->value, sizeof(c->value), "%d", lvl);
	setf(c->text, sizeof(c->text), "%s", tc_paranoid_meaning(lvl));
	if (priv)
		addf(c->text, sizeof(c->text), "; this user has %s, so the level does not "
		     "limit it", p->env.cap_perfmon ? "CAP_PERFMON" : "CAP_SYS_ADMIN");
	else if (lvl > 0)
		addf(c->text, sizeof(c->text), " (as root, or with CAP_PERFMON: setcap "
		     "cap_perfmon+ep on the program, or lower it: sysctl "
		     "kernel.perf_event_paranoid=%d)", lvl >= 2 ? 1 : 0);
}

static void check_caps(struct probe *p)
{
	struct tacho_check *c;
	bool priv = tc_perf_env_privileged(&p->env);

	c = row(p, "caps", "capabilities", priv ? TACHO_CHECK_OK : TACHO_CHECK_INFO);
	if (!p->env.caps_known) {
		setf(c->value, sizeof(c->value), "unknown");
		setf(c->text, sizeof(c->text), "CapEff could not be read from /proc/self/status");
		return;
	}
	setf(c->value, sizeof(c->value), "euid %u", p->env.euid);
	setf(c->text, sizeof(c->text), "CAP_PERFMON %s, CAP_SYS_ADMIN %s (effective)",
	     p->env.cap_perfmon ? "yes" : "no", p->env.cap_sys_admin ? "yes" : "no");
	if (!priv)
		addf(c->text, sizeof(c->text), "; perf_event_paranoid applies (grant "
		     "CAP_PERFMON: setcap cap_perfmon+ep $(which tacho))");
}

static void check_open(struct probe *p, const char *key, const char *title,
		       struct perf_event_attr *a, const char *ok_text)
{
	struct tacho_check *c;
	int err = try_open(a);

	struct tacho_source_proof proof = { .sz = sizeof(proof) };

	a->size = sizeof(*a);
	/* it opens; a source that never counts here is no better than one that does not
	 * open (its proof says why) */
	if (!err && tacho_source_prove(tacho_source_of(a), 0, &proof) == 0 &&
	    (proof.verdict == TACHO_VERDICT_SILENT || proof.verdict == TACHO_VERDICT_WRONG)) {
		c = row(p, key, title, TACHO_CHECK_LIMIT);
		setf(c->value, sizeof(c->value), "%s", proof.verdict == TACHO_VERDICT_SILENT ?
			      "opens, never fires" : "opens, not exact");
		setf(c->text, sizeof(c->text), "%s", proof.why);
		c->hint = TACHO_HINT_NONE;
		return;
	}
	c = row(p, key, title, err ? TACHO_CHECK_LIMIT : TACHO_CHECK_OK);
	setf(c->value, sizeof(c->value), "%s", err ? "no" : "yes");
	if (err)
		explain(p, c, err, a, c->text, sizeof(c->text));
	else
		setf(c->text, sizeof(c->text), "%s", ok_text);
}

/* The mount point of tracefs from /proc/mounts, or "". */
/* Where tracefs is mounted ("" when it is not). 0, or -errno of reading /proc/mounts. */
static int tracefs_mount(char *buf, size_t size)
{
	char *text;
	int err;

	buf[0] = '\0';
	err = tc_read_file("/proc/mounts", &text, NULL, 4 << 20);
	if (err)
		return err;
	if (tc_mounts_find(text, "tracefs", buf, size))
		buf[0] = '\0';
	free(text);
	return 0;
}

static void check_tracefs(struct probe *p)
{
	char dir[512], ev[600], idp[700];
	struct tacho_check *c;
	long long id;
	int err = tracefs_mount(dir, sizeof(dir));

	if (err) {
		/* not knowing the mounts is not knowing that tracefs is absent */
		c = row(p, "tracefs", "tracefs", TACHO_CHECK_LIMIT);
		setf(c->value, sizeof(c->value), "unknown");
		setf(c->text, sizeof(c->text), "cannot read /proc/mounts to find tracefs: %s "
		     "(tracepoints need tracefs: check 'mount -t tracefs')", tacho_strerror(err));
		return;
	}
	if (!dir[0]) {
		c = row(p, "tracefs", "tracefs", TACHO_CHECK_LIMIT);
		setf(c->value, sizeof(c->value), "not mounted");
		setf(c->text, sizeof(c->text), "tracepoints (syscalls:*, sched:*) cannot be "
		     "named without tracefs (mount -t tracefs nodev /sys/kernel/tracing)");
		return;
	}
	snprintf(ev, sizeof(ev), "%s/events", dir);
	if (access(ev, R_OK | X_OK) != 0) {
		c = row(p, "tracefs", "tracefs", TACHO_CHECK_LIMIT);
		setf(c->value, sizeof(c->value), "%s", dir);
		setf(c->text, sizeof(c->text), "mounted at %s but %s is not readable by this "
		     "user (run as root, or mount it with mode=755 / gid= a group of yours)",
		     dir, ev);
		return;
	}
	c = row(p, "tracefs", "tracefs", TACHO_CHECK_OK);
	setf(c->value, sizeof(c->value), "%s", dir);
	setf(c->text, sizeof(c->text), "mounted at %s and readable", dir);
	snprintf(idp, sizeof(idp), "%s/events/syscalls/sys_enter_write/id", dir);
	if (tc_read_int_file(idp, &id) == 0) {
		struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT, .config = (uint64_t)id };
		err = try_open(&a);
		if (err) {
			char why[400];
			c->state = TACHO_CHECK_LIMIT;
			explain(p, c, err, &a, why, sizeof(why));
			addf(c->text, sizeof(c->text), ", but syscalls:sys_enter_write does not "
			     "open: %s", why);
		} else {
			addf(c->text, sizeof(c->text), "; syscalls:sys_enter_write opens (exact "
			     "counts of system calls)");
		}
	}
}

static void check_rdpmc(struct probe *p)
{
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE,
				     .config = PERF_COUNT_HW_INSTRUCTIONS, .exclude_kernel = 1,
				     .disabled = 1 };
	char path[256], val[32] = "";
	struct tc_perf_page_info pg;
	struct tacho_check *c;

	if (p->env.core_pmu[0]) {
		snprintf(path, sizeof(path), EVDEV "/%s/rdpmc", p->env.core_pmu);
		tc_read_line_file(path, val, sizeof(val));
	}
	/* the page of an event opened on this thread says whether RDPMC is allowed */
	if (tc_perf_probe(&a, &pg) == 0) {
		bool cap = pg.cap_user_rdpmc;
		c = row(p, "rdpmc", "user-space rdpmc", cap ? TACHO_CHECK_OK : TACHO_CHECK_LIMIT);
		setf(c->value, sizeof(c->value), "%s", cap ? "yes" : "no");
		if (cap)
			setf(c->text, sizeof(c->text), "the mmap page of an event says "
			     "cap_user_rdpmc: regions read counters with RDPMC, without a system "
			     "call (%s/rdpmc = %s)", p->env.core_pmu, val[0] ? val : "?");
		else
			setf(c->text, sizeof(c->text), "the kernel does not let user space run "
			     "RDPMC (%s/rdpmc = %s): regions fall back to read(2), ~250 ns per "
			     "read (echo 1 > " EVDEV "/%s/rdpmc as root)", p->env.core_pmu,
			     val[0] ? val : "?", p->env.core_pmu);
		return;
	}
	c = row(p, "rdpmc", "user-space rdpmc", TACHO_CHECK_LIMIT);
	setf(c->value, sizeof(c->value), "no");
	setf(c->text, sizeof(c->text), "no hardware event opens, so there is no counter to "
	     "read with RDPMC: regions read software events with read(2) (see the hardware "
	     "PMU line)");
}

static void check_msr(struct probe *p)
{
	char allow[32] = "";
	struct tacho_check *c;
	int fd;

	tc_read_line_file("/sys/module/msr/parameters/allow_writes", allow, sizeof(allow));
	if (!exists("/dev/cpu/0/msr")) {
		c = row(p, "msr", "/dev/cpu/N/msr", TACHO_CHECK_LIMIT);
		setf(c->value, sizeof(c->value), "absent");
		setf(c->text, sizeof(c->text), "%s (modprobe msr, if the kernel was built with "
		     "CONFIG_X86_MSR; the msr PMU of perf (msr/tsc/, msr/aperf/) works without "
		     "it)", exists("/sys/module/msr") ? "the msr module is loaded but no device "
		     "node exists" : "no msr driver is loaded");
		return;
	}
	fd = open("/dev/cpu/0/msr", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		c = row(p, "msr", "/dev/cpu/N/msr", TACHO_CHECK_LIMIT);
		setf(c->value, sizeof(c->value), "present");
		setf(c->text, sizeof(c->text), "present but not readable: %s (needs root with "
		     "CAP_SYS_RAWIO)", strerror(errno));
		return;
	}
	close(fd);
	c = row(p, "msr", "/dev/cpu/N/msr", TACHO_CHECK_OK);
	setf(c->value, sizeof(c->value), "readable");
	setf(c->text, sizeof(c->text), "readable; writes: msr.allow_writes = %s",
	     allow[0] ? allow : "unknown");
}

static void check_nmi_watchdog(struct probe *p)
{
	struct tacho_check *c;
	long long v;
	int err = tc_read_int_file("/proc/sys/kernel/nmi_watchdog", &v);

	if (err == -ENOENT) {
		c = row(p, "nmi_watchdog", "NMI watchdog", TACHO_CHECK_INFO);
		setf(c->value, sizeof(c->value), "absent");
		setf(c->text, sizeof(c->text), "the kernel has no hard-lockup watchdog: every "
		     "counter is free");
		return;
	}
	if (err) {
		/* unreadable is not absent: it may hold a counter all the same */
		c = row(p, "nmi_watchdog", "NMI watchdog", TACHO_CHECK_INFO);
		setf(c->value, sizeof(c->value), "unknown");
		setf(c->text, sizeof(c->text), "cannot read /proc/sys/kernel/nmi_watchdog: %s; "
		     "if it is on, it holds one counter on every CPU",
		     tacho_strerror(err));
		return;
	}
	if (!v) {
		c = row(p, "nmi_watchdog", "NMI watchdog", TACHO_CHECK_OK);
		setf(c->value, sizeof(c->value), "off");
		setf(c->text, sizeof(c->text), "off: it holds no counter");
		return;
	}
	c = row(p, "nmi_watchdog", "NMI watchdog",
		p->env.core_pmu[0] ? TACHO_CHECK_LIMIT : TACHO_CHECK_INFO);
	setf(c->value, sizeof(c->value), "on");
	if (p->env.core_pmu[0])
		setf(c->text, sizeof(c->text), "on: it pins a cycles counter on every CPU (a "
		     "fixed counter on Intel, a general one elsewhere), one fewer for tacho "
		     "(sysctl kernel.nmi_watchdog=0 frees it)");
	else
		setf(c->text, sizeof(c->text), "on, but with no hardware PMU it holds no "
		     "counter here");
}

static void check_sysctl_info(struct probe *p)
{
	struct tacho_check *c;
	long long v;

	if (tc_read_int_file("/proc/sys/kernel/perf_event_mlock_kb", &v) == 0) {
		c = row(p, "mlock", "perf_event_mlock_kb", TACHO_CHECK_INFO);
		setf(c->value, sizeof(c->value), "%lld", v);
		setf(c->text, sizeof(c->text), "an unprivileged user may lock %lld KiB of "
		     "sampling ring buffer per CPU beyond RLIMIT_MEMLOCK (larger buffers need "
		     "CAP_IPC_LOCK or sysctl kernel.perf_event_mlock_kb)", v);
		c->hint = TACHO_HINT_RING_PAGES;
	}
	if (tc_read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", &v) == 0) {
		c = row(p, "sample_rate", "perf_event_max_sample_rate", TACHO_CHECK_INFO);
		setf(c->value, sizeof(c->value), "%lld Hz", v);
		setf(c->text, sizeof(c->text), "sampling faster than %lld per second per CPU is "
		     "refused; the kernel lowers this when sampling interrupts take too long", v);
	}
}

static void check_tsc(struct probe *p)
{
	struct tacho_tsc_info t = { .sz = sizeof(t) };
	struct tacho_check *c;
	char *cpuinfo = NULL;
	size_t cpuinfo_len = 0;
	const char *constant, *nonstop;
	char cur[64] = "", avail[256] = "";

	/* an unreadable /proc/cpuinfo says nothing about the flags: "unknown", not "no" */
	if (tc_cpuinfo_read(NULL, &cpuinfo, &cpuinfo_len) == 0) {
		constant = tc_cpuinfo_has_flag(cpuinfo, cpuinfo_len, "constant_tsc") ? "yes" : "no";
		nonstop = tc_cpuinfo_has_flag(cpuinfo, cpuinfo_len, "nonstop_tsc") ? "yes" : "no";
		free(cpuinfo);
	} else {
		constant = nonstop = "unknown (cannot read it)";
	}
	if (tacho_tsc_info(&t) == -TACHO_ENOTX86) {
		c = row(p, "tsc", "time-stamp counter", TACHO_CHECK_INFO);
		setf(c->value, sizeof(c->value), "not x86");
		setf(c->text, sizeof(c->text), "no TSC: regions time with CLOCK_MONOTONIC_RAW");
	} else {
		bool good = t.present && t.invariant;
		c = row(p, "tsc", "time-stamp counter", good ? TACHO_CHECK_OK : TACHO_CHECK_LIMIT);
		if (t.hz > 0)
			setf(c->value, sizeof(c->value), "%.3f MHz", t.hz / 1e6);
		else
			setf(c->value, sizeof(c->value), "%s", t.present ? "present" : "absent");
		setf(c->text, sizeof(c->text), "%s, %s RDTSCP; frequency %.6g MHz (source: %s); "
		     "/proc/cpuinfo: constant_tsc %s, nonstop_tsc %s",
		     t.invariant ? "invariant (CPUID.8000_0007h:EDX[8])"
				 : "NOT invariant: its rate may follow the clock or stop in sleep",
		     t.rdtscp ? "with" : "without", t.hz / 1e6, tacho_tsc_source_name(t.source),
		     constant, nonstop);
		if (t.calibrated_hz > 0)
			addf(c->text, sizeof(c->text), "; calibrated against CLOCK_MONOTONIC_RAW: "
			     "%.6g MHz", t.calibrated_hz / 1e6);
		if (!good)
			addf(c->text, sizeof(c->text), " (time with CLOCK_MONOTONIC instead, or "
			     "count cycles with the PMU)");
	}
	tc_read_line_file("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			  cur, sizeof(cur));
	tc_read_line_file("/sys/devices/system/clocksource/clocksource0/available_clocksource",
			  avail, sizeof(avail));
	tc_trim(avail);
	/* tsc and the paravirtual clocks (kvm-clock, hyperv_clocksource_tsc_page, xen with
	 * vsyscall) are read in the vDSO; hpet and acpi_pm make clock_gettime a system call */
	bool fast = !strcmp(cur, "tsc") || !strcmp(cur, "kvm-clock") ||
		    tc_starts_with(cur, "hyperv") || !strcmp(cur, "arch_sys_counter");
	c = row(p, "clocksource", "clocksource", fast ? TACHO_CHECK_OK : TACHO_CHECK_LIMIT);
	setf(c->value, sizeof(c->value), "%s", cur[0] ? cur : "unknown");
	setf(c->text, sizeof(c->text), "the kernel keeps time with %s (available: %s)",
	     cur[0] ? cur : "an unknown clock", avail[0] ? avail : "unknown");
	if (cur[0] && !fast)
		addf(c->text, sizeof(c->text), ": clock_gettime is a system call with it, not "
		     "a vDSO read (the kernel did not trust the TSC: see 'dmesg | grep -i tsc'; "
		     "tsc=reliable on the kernel command line if you know better)");
}

/* The first version of struct tacho_check ends at hint. */
#define CHECK_SZ_V1 tc_offsetofend(struct tacho_check, hint)

#define PROOF_SZ_V1 tc_offsetofend(struct tacho_source_proof, cost_us)

int tacho_machine_sources(unsigned flags, struct tacho_source_proof *out, size_t max,
			  size_t proof_sz)
{
	size_t n = 0;

	if (max && (!out || proof_sz < PROOF_SZ_V1))
		return -EINVAL;
	for (int s = TACHO_SOURCE_NONE + 1; s < TACHO_SOURCE_COUNT; s++, n++) {
		struct tacho_source_proof p = { .sz = sizeof(p) };

		if (n >= max)
			continue;   /* counted, for the caller's next call with room */
		tacho_source_prove((enum tacho_source)s, flags, &p);
		p.sz = proof_sz < sizeof(p) ? proof_sz : sizeof(p);
		tc_sized_put(TC_ELEM(out, n, proof_sz), proof_sz, &p, sizeof(p));
	}
	return (int)n;
}

/* One check of the hardware counters as a row: ok, limited where it ran and saw
 * something wrong, info "skipped" where it could not run (no PMU is no fault of the
 * check). */
static void verify_row(struct probe *p, const char *key, const char *title,
		       void (*fn)(struct tc_hw_check *), const char *ok_value)
{
	struct tc_hw_check h;
	struct tacho_check *c;

	fn(&h);
	c = row(p, key, title, !h.ran ? TACHO_CHECK_INFO : h.ok ? TACHO_CHECK_OK
								: TACHO_CHECK_LIMIT);
	if (!h.ran)
		setf(c->value, sizeof(c->value), "skipped");
	else if (!strcmp(key, "precise"))
		setf(c->value, sizeof(c->value), "precise_ip %.0f", h.figure[0]);
	else if (!strcmp(key, "lbr"))
		setf(c->value, sizeof(c->value), "%.0f deep", h.figure[0]);
	else
		setf(c->value, sizeof(c->value), "%s", h.ok ? ok_value : "no");
	setf(c->text, sizeof(c->text), "%s", h.text);
}

int tacho_machine_verify(struct tacho_check *out, size_t max, size_t check_sz)
{
	struct probe p;

	if (max && (!out || check_sz < CHECK_SZ_V1))
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.out = out;
	p.max = max;
	p.check_sz = check_sz;
	verify_row(&p, "rdpmc", "RDPMC against read(2)", tc_verify_rdpmc, "agree");
	verify_row(&p, "multiplexing", "multiplexed estimates", tc_verify_multiplex,
		   "within 2 %");
	verify_row(&p, "precise", "precise sampling and skid", tc_verify_precise, "yes");
	verify_row(&p, "lbr", "last-branch records", tc_verify_lbr, "yes");
	flush(&p);
	return (int)p.n;
}

/* Runs every check into p (its out, max, check_sz and grow set). */
static void run_checks(struct probe *ps)
{
	struct tacho_cpuid_dump *dump = NULL;
	struct probe p;
	static volatile long bp_target;

	memcpy(&p, ps, sizeof(p));
	tc_perf_env_probe(&p.env);
	p.cpu.sz = sizeof(p.cpu);
	if (tacho_cpuid_dump_live(&dump) == 0) {
		p.have_cpu = tacho_cpu_decode(dump, &p.cpu) == 0;
		tacho_cpuid_dump_free(dump);
	}

	check_pmu(&p);
	check_counters(&p);
	check_vm(&p);
	check_paranoid(&p);
	check_caps(&p);
	{
		struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
					     .config = PERF_COUNT_SW_TASK_CLOCK };
		check_open(&p, "software", "software events", &a,
			   "task-clock, page-faults, context-switches and the other kernel "
			   "software events count (page faults exactly)");
	}
	{
		struct perf_event_attr a = { .type = PERF_TYPE_BREAKPOINT, .bp_type = HW_BREAKPOINT_W,
					     .bp_addr = (uintptr_t)&bp_target,
					     .bp_len = HW_BREAKPOINT_LEN_8, .exclude_kernel = 1 };
		check_open(&p, "breakpoints", "hardware breakpoints", &a,
			   "a data breakpoint opens: exact counts of stores and calls to chosen "
			   "addresses, up to four at once (x86 DR0-DR3)");
	}
	check_tracefs(&p);
	check_rdpmc(&p);
	check_msr(&p);
	check_nmi_watchdog(&p);
	check_sysctl_info(&p);
	check_tsc(&p);
	flush(&p);
	if (p.have_cpu)
		tacho_cpu_info_exit(&p.cpu);
	memcpy(ps, &p, sizeof(p));
}

int tacho_machine_check(struct tacho_check *out, size_t max, size_t check_sz)
{
	struct probe p;

	if (max && (!out || check_sz < CHECK_SZ_V1))
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.out = out;
	p.max = max;
	p.check_sz = check_sz;
	run_checks(&p);
	return (int)p.n;
}

int tacho_machine_check_alloc(struct tacho_check **out, size_t check_sz)
{
	struct probe p;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (check_sz < CHECK_SZ_V1)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.check_sz = check_sz;
	p.grow = true;
	run_checks(&p);
	if (p.oom) {
		free(p.out);
		return -ENOMEM;
	}
	*out = p.out;
	return (int)p.n;
}
