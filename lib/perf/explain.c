/* explain.c - turns a failed perf_event_open(2) into one sentence that says why and
 * what to do (the idea of perf's evsel__open_strerror; tacho's own words and cases).
 *
 * The same errno means different things for different event types, so the sentence
 * depends on (errno, attr.type, the machine). What the machine allows is gathered in a
 * struct tc_perf_env: probed live, or filled in by tests to reach every path. */
#include <dirent.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf/perf.h"
#include "tacho/counters.h"
#include "tacho/errors.h"

#define EVDEV "/sys/bus/event_source/devices"

/* The sysfs names of a core PMU that counts hardware events: "cpu" on x86 (Intel and
 * AMD), "cpu_core"/"cpu_atom" on hybrid Intel parts, armv8_pmuv3* on Arm. */
static const char *const core_pmus[] = { "cpu", "cpu_core", "cpu_atom", "armv8_pmuv3",
					 "armv8_pmuv3_0" };

static bool path_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* Effective capabilities from /proc/self/status ("CapEff:\t000001ffffffffff"). */
static int read_capeff(uint64_t *caps)
{
	char *text;
	int err = tc_read_file("/proc/self/status", &text, NULL, 1 << 20);

	if (err)
		return err;
	err = tc_parse_capeff(text, caps);
	free(text);
	return err;
}

int tc_perf_env_probe(struct tc_perf_env *env)
{
	long long v;
	uint64_t caps = 0;
	struct rlimit rl;

	memset(env, 0, sizeof(*env));
	env->paranoid = tc_read_int_file("/proc/sys/kernel/perf_event_paranoid", &v) == 0
		? (int)v : TC_PARANOID_UNKNOWN;
	if (read_capeff(&caps) == 0) {
		env->caps_known = true;
		/* capability(7): CAP_SYS_ADMIN is bit 21, CAP_PERFMON (Linux 5.8) bit 38 */
		env->cap_sys_admin = (caps >> 21) & 1;
		env->cap_perfmon = (caps >> 38) & 1;
	}
	env->euid = geteuid();
	for (size_t i = 0; i < ARRAY_SIZE(core_pmus); i++) {
		char p[128];
		snprintf(p, sizeof(p), EVDEV "/%s", core_pmus[i]);
		if (path_exists(p)) {
			snprintf(env->core_pmu, sizeof(env->core_pmu), "%s", core_pmus[i]);
			break;
		}
	}
	env->hypervisor = tc_hypervisor_guest();
	env->nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (long)rl.rlim_cur : -1;
	env->tracefs = path_exists("/sys/kernel/tracing/events") ||
		       path_exists("/sys/kernel/debug/tracing/events");
	return 0;
}

/* The name of the PMU of an attr.type: the fixed types by table, dynamic ones from
 * EVDEV/NAME/type. 0 or -ENOENT. */
int tc_pmu_name_of_type(uint32_t type, char *buf, size_t size)
{
	static const char *const fixed[] = {
		[PERF_TYPE_HARDWARE] = "cpu",           [PERF_TYPE_SOFTWARE] = "software",
		[PERF_TYPE_TRACEPOINT] = "tracepoint",  [PERF_TYPE_HW_CACHE] = "cpu",
		[PERF_TYPE_RAW] = "cpu",                [PERF_TYPE_BREAKPOINT] = "breakpoint",
	};
	struct dirent *de;
	DIR *d;
	int err = -ENOENT;

	if (type < ARRAY_SIZE(fixed)) {
		snprintf(buf, size, "%s", fixed[type]);
		return 0;
	}
	d = opendir(EVDEV);
	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		char p[512];
		long long t;
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), EVDEV "/%s/type", de->d_name);
		if (tc_read_int_file(p, &t) == 0 && t == (long long)type) {
			snprintf(buf, size, "%s", de->d_name);
			err = 0;
			break;
		}
	}
	closedir(d);
	return err;
}

const char *tc_paranoid_meaning(int level)
{
	if (level == TC_PARANOID_UNKNOWN)
		return "unknown (this kernel has no /proc/sys/kernel/perf_event_paranoid)";
	if (level <= -1)
		return "no restriction: any user may count the kernel and whole CPUs and read "
		       "raw tracepoint data";
	if (level == 0)
		return "any user may count the kernel and whole CPUs, but not read raw "
		       "tracepoint data";
	if (level == 1)
		return "users may count their own processes in user and kernel mode, but not "
		       "whole CPUs";
	if (level == 2)
		return "users may count only their own processes, and only in user space";
	return "users may not use perf_event_open at all (a distribution's extra level)";
}

bool tc_perf_env_privileged(const struct tc_perf_env *env)
{
	/* CAP_PERFMON (Linux 5.8) or, before it and still, CAP_SYS_ADMIN lift
	 * perf_event_paranoid (kernel/events/core.c: perfmon_capable()) */
	return env->cap_perfmon || env->cap_sys_admin;
}

enum ev_kind { K_HW, K_SW, K_TP, K_BP, K_PMU };

static bool is_core_pmu(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(core_pmus); i++)
		if (!strcmp(name, core_pmus[i]))
			return true;
	return tc_starts_with(name, "armv8_") || tc_starts_with(name, "armv7_");
}

static enum ev_kind kind_of(const struct perf_event_attr *a, const char *pmu)
{
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return K_HW;
	case PERF_TYPE_SOFTWARE:
		return K_SW;
	case PERF_TYPE_TRACEPOINT:
		return K_TP;
	case PERF_TYPE_BREAKPOINT:
		return K_BP;
	}
	return pmu && is_core_pmu(pmu) ? K_HW : K_PMU;
}

struct out {
	char *buf;
	size_t size, len;
	enum tacho_hint hint;   /* where the reader should look next */
};

static void put(struct out *o, const char *fmt, ...) TC_PRINTF(2, 3);
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->len >= o->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
	if (o->len >= o->size)
		o->len = o->size - 1;
}

static void no_pmu(struct out *o, const struct tc_perf_env *env)
{
	if (env->hypervisor)
		put(o, "this virtual machine has no hardware PMU: the hypervisor does not pass "
		       "the CPU's counters through (count software events, tracepoints or "
		       "uprobes instead, or give the VM a virtual PMU, e.g. QEMU/KVM "
		       "'-cpu host,pmu=on')");
	else
		put(o, "this machine has no hardware PMU driver (" EVDEV "/cpu is missing): "
		       "the kernel was built without it or the CPU is not supported (count "
		       "software events instead)");
	/* valgrind can still give the program's instructions, branches and cache
	 * accesses: the hint sends the reader to the simulation */
	o->hint = TACHO_HINT_SIMULATE;
}

static void paranoid_hint(struct out *o)
{
	put(o, "run as root, give the program CAP_PERFMON (setcap cap_perfmon+ep), or "
	       "lower kernel.perf_event_paranoid with sysctl");
}

/* Intel's AnyThread bit (IA32_PERFEVTSELx bit 21, SDM Vol. 3B "Architectural
 * Performance Monitoring Version 3") in a raw or core-PMU encoding; the generic
 * types put other things in config. */
static bool any_thread(const struct perf_event_attr *a)
{
	return a->type != PERF_TYPE_HARDWARE && a->type != PERF_TYPE_HW_CACHE &&
	       (a->config & (1ull << 21));
}

/* The dynamic PMUs that honour exclude_user/exclude_kernel. The others (msr, power,
 * cstate_*, uncore_*, amd_df, ...) are registered with PERF_PMU_CAP_NO_EXCLUDE, or
 * check the bits in their event_init, and refuse any exclude_* bit with EINVAL. */
static bool pmu_filters_rings(const char *pmu)
{
	static const char *const filtering[] = { "uprobe", "kprobe", "intel_pt", "intel_bts",
						 "cs_etm" };

	for (size_t i = 0; pmu && i < ARRAY_SIZE(filtering); i++)
		if (!strcmp(pmu, filtering[i]))
			return true;
	return pmu && tc_starts_with(pmu, "arm_spe");
}

static void explain_eacces(struct out *o, const struct tc_perf_env *env,
			   const struct perf_event_attr *a, const char *pmu, enum ev_kind k,
			   bool cpu_wide)
{
	int p = env->paranoid;

	if (tc_perf_env_privileged(env)) {
		put(o, "permission denied even though this user has %s: a security module "
		       "(SELinux, AppArmor) or kernel lockdown refused it (check the audit log "
		       "and /sys/kernel/security/lockdown)",
		    env->cap_perfmon ? "CAP_PERFMON" : "CAP_SYS_ADMIN");
		return;
	}
	if (pmu && (!strcmp(pmu, "uprobe") || !strcmp(pmu, "kprobe"))) {
		/* perf_uprobe_event_init and perf_kprobe_event_init (kernel/events/core.c)
		 * refuse anyone not perfmon_capable(), before any modifier or paranoid
		 * level is looked at: ':u' cannot help */
		put(o, "the %s PMU needs CAP_PERFMON (or CAP_SYS_ADMIN) whatever the modifiers "
		       "and perf_event_paranoid: run as root, or give the program CAP_PERFMON "
		       "(setcap cap_perfmon+ep)", pmu);
		return;
	}
	if (p != TC_PARANOID_UNKNOWN && p >= 3) {
		put(o, "perf_event_paranoid is %d: this kernel lets no unprivileged user count "
		       "anything (", p);
		paranoid_hint(o);
		put(o, " to 2 or less)");
		return;
	}
	if (cpu_wide && p > 0) {
		put(o, "counting whole CPUs needs perf_event_paranoid 0 or less, or "
		       "CAP_PERFMON, and it is %d here (count a program or a PID instead, or ",
		    p);
		paranoid_hint(o);
		put(o, ")");
		return;
	}
	if (!a->exclude_kernel && p > 1) {
		if (k == K_TP)
			put(o, "tracepoints fire in the kernel, and perf_event_paranoid is %d: "
			       "this user may count user space only (", p);
		else if (k == K_PMU && !pmu_filters_rings(pmu))
			/* the kernel checks paranoid before the PMU sees the event, and the
			 * PMU then refuses exclude_* with EINVAL (PERF_PMU_CAP_NO_EXCLUDE,
			 * kernel/events/core.c perf_try_init_event): ':u' cannot help */
			put(o, "perf_event_paranoid is %d: this user may count user space only, "
			       "and the PMU '%s' counts the kernel too, with no privilege filter "
			       "(", p, pmu ? pmu : "?");
		else
			put(o, "perf_event_paranoid is %d: this user may count user space only, "
			       "and this event includes the kernel (add the ':u' modifier, or ",
			    p);
		paranoid_hint(o);
		put(o, " to 1)");
		return;
	}
	if (k == K_HW && any_thread(a) && p > 0) {
		/* arch/x86/events/intel/core.c intel_pmu_hw_config: AnyThread counts the
		 * sibling hyperthread's work too, so it needs perf_paranoid_cpu() off */
		put(o, "the 'any' bit (AnyThread, bit 21) counts the sibling hyperthread too "
		       "and needs perf_event_paranoid 0 or less, or CAP_PERFMON, and it is %d "
		       "here (drop 'any', or ", p);
		paranoid_hint(o);
		put(o, ")");
		return;
	}
	if (k == K_TP && (a->sample_type & PERF_SAMPLE_RAW) && p > -1) {
		put(o, "raw tracepoint data needs perf_event_paranoid -1 or CAP_PERFMON, and it "
		       "is %d here (", p);
		paranoid_hint(o);
		put(o, ")");
		return;
	}
	put(o, "permission denied: perf_event_paranoid is %d (%s), or the process belongs "
	       "to another user (", p, tc_paranoid_meaning(p));
	paranoid_hint(o);
	put(o, ")");
}

char *tc_perf_explain(const struct tc_perf_env *env, int err, const struct perf_event_attr *a,
		      const char *pmu, unsigned flags, char *buf, size_t size,
		      enum tacho_hint *hint)
{
	struct out o = { buf, size, 0, TACHO_HINT_NONE };
	char pmubuf[64];
	enum ev_kind k;
	bool member = flags & TC_EXPLAIN_GROUP_MEMBER;
	bool cpu_wide = flags & TC_EXPLAIN_CPU_WIDE;
	bool sampling = a->sample_period != 0;   /* sample_freq shares the field */

	if (hint)
		*hint = TACHO_HINT_NONE;
	if (!size)
		return buf;
	buf[0] = '\0';
	if (!pmu) {
		if (tc_pmu_name_of_type(a->type, pmubuf, sizeof(pmubuf)) == 0)
			pmu = pmubuf;
	}
	k = kind_of(a, pmu);
	if (err > 0)
		err = -err;

	switch (-err) {
	case EACCES:
		explain_eacces(&o, env, a, pmu, k, cpu_wide);
		break;
	case EPERM:
		put(&o, "the kernel does not permit this: a security module or kernel lockdown "
			"refused it, or the event asks for something only CAP_SYS_ADMIN may "
			"(%s)", tc_perf_env_privileged(env)
				? "check the audit log and /sys/kernel/security/lockdown"
				: "try as root");
		break;
	case ENOENT:
		switch (k) {
		case K_HW:
			if (!env->core_pmu[0]) {
				no_pmu(&o, env);
				break;
			}
			if (a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE)
				put(&o, "the CPU's PMU ('%s') has no counter for this generic "
					"event (name one of the events it has)", env->core_pmu);
			else
				put(&o, "this CPU does not have this event: its PMU ('%s') does "
					"not accept the encoding (name an event of this CPU)",
				    env->core_pmu);
			o.hint = TACHO_HINT_EVENTS;
			break;
		case K_SW:
			put(&o, "this kernel does not know software event %llu: it is older "
				"than the event", (unsigned long long)a->config);
			o.hint = TACHO_HINT_EVENTS;
			break;
		case K_TP:
			if (!env->tracefs) {
				put(&o, "tracepoint id %llu is unknown and tracefs is not mounted "
					"(mount -t tracefs nodev /sys/kernel/tracing)",
				    (unsigned long long)a->config);
				break;
			}
			put(&o, "this kernel has no tracepoint with id %llu (look in "
				"/sys/kernel/tracing/events)", (unsigned long long)a->config);
			o.hint = TACHO_HINT_EVENTS;
			break;
		case K_BP:
			put(&o, "hardware breakpoints are not available here: the kernel was "
				"built without CONFIG_HAVE_HW_BREAKPOINT or the architecture lacks "
				"them");
			break;
		case K_PMU:
			if (pmu)
				put(&o, "the PMU '%s' does not have this event (see " EVDEV "/%s/events "
					"and format)", pmu, pmu);
			else
				put(&o, "no PMU has type %u: its driver is not loaded (ls " EVDEV ")",
				    a->type);
			break;
		}
		break;
	case EOPNOTSUPP:
		if (k == K_HW && !env->core_pmu[0]) {
			no_pmu(&o, env);
		} else if (k == K_HW) {
			put(&o, "the CPU's PMU cannot do what this event asks: %s (count instead "
				"of sampling, or drop the modifier)",
			    a->precise_ip ? "this precise level (':p')"
			    : sampling ? "sampling on this event"
			    : a->exclude_user || a->exclude_kernel || a->exclude_hv
				? "filtering by privilege level (':u' or ':k')"
				: "one of its options (a branch stack or a filter)");
		} else if (k == K_PMU) {
			put(&o, "the PMU '%s' does not support this mode: %s", pmu ? pmu : "?",
			    sampling ? "it cannot sample (count it instead)"
				     : "most such PMUs count whole CPUs only and cannot filter by "
				       "privilege level (use -a, without ':u' or ':k')");
		} else {
			put(&o, "this %s event does not support %s",
			    k == K_SW ? "software" : k == K_TP ? "tracepoint" : "breakpoint",
			    sampling ? "sampling as asked (count it instead)"
				     : "one of the options asked (e.g. a privilege filter)");
		}
		break;
	case EINVAL:
		if (member && (k == K_HW || k == K_PMU)) {
			put(&o, "the group does not fit: its events cannot all be on the PMU's "
				"counters at once (split the group)");
			o.hint = TACHO_HINT_SCHEDULE;
		} else if (k == K_HW && any_thread(a))
			put(&o, "the PMU refused the 'any' bit (AnyThread, bit 21): it needs "
				"architectural perfmon version 3, and CPUs from Ice Lake on "
				"deprecate it, CPUID leaf 0xA EDX bit 15 (drop 'any')");
		else if (k == K_HW && a->precise_ip && !sampling)
			/* arch/x86/events/core.c x86_pmu_hw_config: PEBS on a counting
			 * event is refused with EINVAL ("no sense in having PEBS for non
			 * sampling events") */
			put(&o, "a precise level (':p') is for sampling only: the PMU refuses it "
				"on a counting event (drop the 'p' to count)");
		else if (k == K_HW) {
			put(&o, "the PMU rejected this encoding: a reserved bit, a counter mask, "
				"edge or invert this event does not take, or a period above "
				"perf_event_max_sample_rate (check the event's fields)");
			o.hint = TACHO_HINT_EVENTS;
		} else if (k == K_BP && a->bp_type == HW_BREAKPOINT_R)
			/* arch/x86/kernel/hw_breakpoint.c arch_build_bp_info: the debug
			 * registers' RW field has no read-only setting */
			put(&o, "x86 has no read-only data breakpoints: a debug register "
				"watches writes, or reads and writes (use ':rw', or ':w')");
		else if (k == K_BP)
			put(&o, "the breakpoint is malformed: its length must be 1, 2, 4 or 8 "
				"bytes with the address aligned to it (x86), and an execute "
				"breakpoint takes the length of a long");
		else if (k == K_TP)
			put(&o, "the kernel rejected this tracepoint (id %llu) with these options",
			    (unsigned long long)a->config);
		else if (k == K_SW)
			put(&o, "the kernel rejected an option of this software event (a "
				"sampling rate above kernel.perf_event_max_sample_rate, or a flag "
				"it does not know)");
		else if ((a->exclude_user || a->exclude_kernel || a->exclude_hv) &&
			 !pmu_filters_rings(pmu))
			put(&o, "the PMU '%s' cannot filter by privilege level: it counts user "
				"and kernel together (drop the ':u', ':k' or ':h' modifier)",
			    pmu ? pmu : "?");
		else
			put(&o, "the PMU '%s' rejected this configuration (see the fields it takes "
				"in " EVDEV "/%s/format)", pmu ? pmu : "?", pmu ? pmu : "?");
		break;
	case ENOSPC:
		if (k == K_BP)
			put(&o, "all hardware breakpoint registers are taken: x86 has four "
				"(DR0-DR3), shared by every breakpoint and debugger on this thread "
				"or CPU (watch at most four addresses at once, or stop the "
				"debugger)");
		else if (k == K_HW)
			put(&o, "no counter is free for this event: another tool or the NMI "
				"watchdog holds them (stop the other tool, or sysctl "
				"kernel.nmi_watchdog=0)");
		else
			put(&o, "the %s has no room for another event of this kind",
			    pmu ? pmu : "kernel");
		break;
	case EBUSY:
		put(&o, "the %s is busy: another user holds it exclusively (an exclusive event, "
			"another profiler, or the hypervisor reserved it) (stop the other tool "
			"and retry)", k == K_HW ? "CPU's PMU" : pmu ? pmu : "PMU");
		break;
	case E2BIG:
		put(&o, "this kernel knows an older, smaller perf_event_attr and a field it "
			"does not know is set (this feature needs a newer kernel)");
		break;
	case EMFILE:
		put(&o, "too many open files: every event on every CPU or thread takes a file "
			"descriptor and the limit is %ld (raise it with 'ulimit -n 65536', or "
			"count fewer events, threads or CPUs)", env->nofile);
		break;
	case ENFILE:
		put(&o, "the system has run out of file descriptors (raise fs.file-max)");
		break;
	case ESRCH:
		put(&o, "the process or thread to count does not exist (it has ended, or the "
			"id is wrong)");
		break;
	case ENODEV:
		put(&o, "this CPU lacks a feature the event needs (a branch stack, a precise "
			"mode, or a counter of that kind)");
		break;
	case EOVERFLOW:
		put(&o, "the requested call-chain depth is above kernel.perf_event_max_stack");
		break;
	case ENOSYS:
		put(&o, "this kernel has no perf_event_open: it was built without "
			"CONFIG_PERF_EVENTS, or a seccomp filter (as in many containers) forbids "
			"it (run outside the container, or allow perf_event_open)");
		break;
	case EFAULT:
		put(&o, "the kernel could not read the event's attributes (a bug in tacho: "
			"please report it)");
		break;
	default:
		put(&o, "perf_event_open failed: %s", tacho_strerror(err));
		break;
	}
	if (hint)
		*hint = o.hint;
	return buf;
}

char *tacho_perf_strerror(int err, const struct perf_event_attr *attr, char *buf, size_t size,
			  enum tacho_hint *hint)
{
	struct tc_perf_env env;
	struct perf_event_attr a;

	/* the caller's attr is read by its own size, as the kernel would: an attr the
	 * library cannot read is explained as an empty one */
	if (!attr || tc_perf_attr_copy(&a, attr))
		memset(&a, 0, sizeof(a));
	if (err == -TACHO_ESILENT) {
		/* it opened: the reason is its source's proof, not the open */
		const char *why = tc_source_silent(&a);
		struct tacho_source_proof p = { .sz = sizeof(p) };

		if (!why && tacho_source_prove(tacho_source_of(&a), 0, &p) == 0 && p.why[0])
			why = p.why;
		snprintf(buf, size, "%s", why ? why : tacho_strerror(err));
		if (hint)
			*hint = TACHO_HINT_MACHINE;
		return buf;
	}
	tc_perf_env_probe(&env);
	return tc_perf_explain(&env, err, &a, NULL, 0, buf, size, hint);
}
