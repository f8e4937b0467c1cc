/* pmu-counters.c - the counters a task may use (struct tacho_pmu_counters): decoded
 * from the few CPUID leaves that decide them, then what the kernel says (a core PMU in
 * sysfs, the NMI watchdog holding a counter). The scheduler of stat sessions plans with
 * them, and `tacho doctor` reports them; the public entry point,
 * tacho_pmu_counters_detect, is events' (lib/events/pfm.c), which adds libpfm4's tables
 * where CPUID says nothing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpu/cpuid.h"
#include "cpu/pmu-counters.h"
#include "tacho/cpu.h"
#include "util/util.h"

/* Intel's fixed counter 1, CPU_CLK_UNHALTED.THREAD (SDM Vol. 3B 20.2.2): the one the
 * NMI watchdog takes. */
#define FIXED_CYCLES 1

static void set_source(struct tacho_pmu_counters *c, const char *s)
{
	snprintf(c->source, sizeof(c->source), "%s", s);
}

static void add_note(struct tacho_pmu_counters *c, const char *s)
{
	size_t len = strlen(c->note);

	snprintf(c->note + len, sizeof(c->note) - len, "%s%s", len ? "; " : "", s);
}

int tc_pmu_counters_from_cpu(const struct tacho_cpu_info *info, struct tacho_pmu_counters *out)
{
	const struct tacho_cpu_pmu *p;
	unsigned gp, fixed;
	uint32_t mask;

	if (!info || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	/* DR0-DR3 on every x86 since the 386 (SDM Vol. 3B 18.2) */
	out->breakpoints = 4;
	p = &info->pmu;
	gp = p->gp_counters;
	fixed = p->fixed_counters;
	mask = p->fixed_mask;
	/* a hybrid part: a task may run on any kind of core, so only what every kind
	 * has is safe to plan with */
	for (unsigned i = 0; i < info->ncore_types && i < TACHO_CPU_MAX_CORE_TYPES; i++) {
		const struct tacho_cpu_pmu *q = &info->core_types[i].pmu;
		if (q->version == 0 && q->gp_counters == 0)
			continue;
		if (q->gp_counters < gp)
			gp = q->gp_counters;
		if (q->fixed_counters < fixed)
			fixed = q->fixed_counters;
		if (q->fixed_mask)
			mask &= q->fixed_mask;
	}
	switch (info->vendor) {
	case TACHO_VENDOR_INTEL:
	case TACHO_VENDOR_ZHAOXIN:
	case TACHO_VENDOR_VIA:
		if (p->version > 0) {
			out->fixed_intel = true;
			out->gp = gp;
			/* before version 5 there is no bitmap: the first N fixed counters exist */
			out->fixed_mask = mask ? mask : (fixed >= 32 ? 0xffffffffu : (1u << fixed) - 1);
			out->fixed = (unsigned)__builtin_popcount(out->fixed_mask);
			out->known = true;
			set_source(out, "CPUID leaf 0xA");
		} else if (info->vendor == TACHO_VENDOR_INTEL && !info->hypervisor_bit &&
			   (info->family == 5 || info->family == 6) && info->max_leaf < 0xA) {
			/* P5 (CESR, MSR 11h: CTR0/CTR1; seed 000) and P6 before architectural
			 * perfmon (PerfEvtSel0/1, MSR 186h/187h; seed 002): two counters */
			out->gp = 2;
			out->known = true;
			set_source(out, info->family == 5 ? "Pentium (two counters, CESR)" :
							    "P6 family (two counters)");
		} else {
			out->known = true;
			set_source(out, "CPUID leaf 0xA (no counters)");
		}
		break;
	case TACHO_VENDOR_AMD:
	case TACHO_VENDOR_HYGON:
		if (p->amd_perfmon_v2 && gp) {
			/* 0x8000_0022 EBX[3:0] NumPerfCtrCore (APM Vol. 3, E.4.19) */
			out->gp = gp;
			out->known = true;
			set_source(out, "CPUID 0x8000_0022");
		} else if (info->hypervisor_bit && gp == 0 &&
			   !tacho_cpu_has(info, "perfctr_core")) {
			/* a guest that shows no counter extension may have no virtual PMU at
			 * all; the kernel's answer (an open that fails) will tell */
			out->known = false;
			set_source(out, "unknown (AMD guest without PerfCtrExtCore)");
		} else if (tacho_cpu_has(info, "perfctr_core")) {
			/* 0x8000_0001 ECX[23] PerfCtrExtCore: six core counters (APM Vol. 2,
			 * 13.2.1) */
			out->gp = 6;
			out->known = true;
			set_source(out, "CPUID 0x8000_0001 PerfCtrExtCore (six counters)");
		} else if (info->family >= 6) {
			/* K7 and later without the extension: four (PerfEvtSel0-3, C001_0000h) */
			out->gp = 4;
			out->known = true;
			set_source(out, "AMD legacy (four counters)");
		} else {
			out->known = false;
			set_source(out, "unknown");
		}
		break;
	default:
		out->known = false;
		set_source(out, "unknown vendor");
		break;
	}
	if (out->known && out->gp == 0 && out->fixed == 0) {
		/* a short clause the CLI puts in parentheses: "KVM guest, CPUID leaf 0xA
		 * is zero" */
		char buf[96];
		out->none = true;
		if (info->hypervisor_bit)
			snprintf(buf, sizeof(buf), "%s guest, CPUID leaf 0xA is zero",
				 info->hypervisor == TACHO_HV_NONE ||
						 info->hypervisor == TACHO_HV_UNKNOWN
					 ? "virtual machine"
					 : tacho_hypervisor_name(info->hypervisor));
		else
			snprintf(buf, sizeof(buf), "CPUID leaf 0xA is zero");
		add_note(out, buf);
	}
	return 0;
}

int tc_pmu_counters_set_watchdog(struct tacho_pmu_counters *c, bool active)
{
	if (!c)
		return -EINVAL;
	if (!active || c->none || !c->known)
		return 0;
	/* the hard-lockup detector is a pinned cycles event on every CPU (kernel/
	 * watchdog_perf.c): on Intel the kernel puts it on fixed counter 1, because
	 * its scheduler tries an event's fixed counter before the general ones
	 * (arch/x86/events/core.c __perf_sched_find_counter); elsewhere it takes a
	 * general counter. Not modelled: a kernel whose lockup detector is not perf's
	 * (the "buddy" detector, Linux 6.6) holds no counter though nmi_watchdog is 1,
	 * and Skylake's TSX erratum workaround (allow_tsx_force_abort) holds general
	 * counter 3. The first leaves a counter unused; the second can leave a full run
	 * multiplexed, which the counts then report as such (never a silent zero). */
	if (c->fixed_intel && (c->fixed_mask & (1u << FIXED_CYCLES))) {
		c->fixed_mask &= ~(1u << FIXED_CYCLES);
		c->fixed--;
		add_note(c, "the NMI watchdog holds fixed counter 1 (cycles): cycles takes a "
			    "general counter (sysctl kernel.nmi_watchdog=0 frees it)");
	} else if (c->gp > 0) {
		c->gp--;
		add_note(c, "the NMI watchdog holds one general counter (sysctl "
			    "kernel.nmi_watchdog=0 frees it)");
	}
	return 0;
}

/* The leaves that decide the counters, from the calling CPU only: a full dump pins to
 * every CPU and costs ~7 us per CPUID in a VM (DESIGN.md 4), which `tacho stat -- true`
 * cannot afford. */
static const uint32_t detect_leaves[] = { 0x0, 0x1, 0x7, 0xA, 0x1A, 0x40000000,
					  0x80000000, 0x80000001, 0x80000022 };

int tc_pmu_counters_detect(struct tacho_pmu_counters *out, tc_pmu_core_counters_fn *fallback)
{
	struct tacho_cpuid_dump *d;
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	struct tacho_cpuid_regs r;
	char info_hv[96] = "the kernel found no PMU";
	long long wd = 0;
	int idx, err;

	memset(out, 0, sizeof(*out));
	out->sz = sizeof(*out);
	out->breakpoints = 4;
	if (!tc_cpuid_exec(0, 0, &r)) {
		set_source(out, "not x86");
		return 0;
	}
	d = tc_cpuid_dump_new();
	if (!d)
		return -ENOMEM;
	idx = tc_cpuid_dump_add_cpu(d, -1);
	err = idx < 0 ? idx : 0;
	for (size_t i = 0; !err && i < ARRAY_SIZE(detect_leaves); i++)
		if (tc_cpuid_exec(detect_leaves[i], 0, &r))
			err = tc_cpuid_dump_set(d, (unsigned)idx, detect_leaves[i], 0, &r);
	if (!err)
		err = tc_cpuid_dump_finish(d);
	if (!err)
		err = tacho_cpu_decode(d, &info);
	tacho_cpuid_dump_free(d);
	if (err)
		return err;
	err = tc_pmu_counters_from_cpu(&info, out);
	if (info.hypervisor_bit)
		snprintf(info_hv, sizeof(info_hv), "%s guest, the kernel found no PMU",
			 info.hypervisor == TACHO_HV_NONE || info.hypervisor == TACHO_HV_UNKNOWN
				 ? "virtual machine" : tacho_hypervisor_name(info.hypervisor));
	tacho_cpu_info_exit(&info);
	if (err)
		return err;
	if (!tc_sysfs_has_core_pmu(NULL)) {
		/* the kernel is the last word: an AMD guest's CPUID shows the legacy four
		 * counters whether the hypervisor passes them through or not, and Linux
		 * registers no "cpu" PMU when it cannot use them */
		char hv[96];
		snprintf(hv, sizeof(hv), "%s", info_hv);
		out->gp = out->fixed = 0;
		out->fixed_mask = 0;
		out->known = out->none = true;
		out->note[0] = '\0';
		snprintf(out->source, sizeof(out->source), "the kernel (no core PMU in sysfs)");
		add_note(out, hv);
		return 0;
	}
	if (!out->known) {
		unsigned gp = 0, fixed = 0;
		char name[64];
		if (fallback && fallback(&gp, &fixed, name, sizeof(name)) == 0) {
			out->gp = gp;
			out->fixed = fixed;
			out->fixed_mask = fixed >= 32 ? 0xffffffffu : (1u << fixed) - 1;
			out->known = true;
			snprintf(out->source, sizeof(out->source), "libpfm4 (%.40s)", name);
		}
	}
	if (tc_read_int_file("/proc/sys/kernel/nmi_watchdog", &wd) == 0 && wd > 0)
		tc_pmu_counters_set_watchdog(out, true);
	return 0;
}

bool tc_sysfs_has_core_pmu(const char *root)
{
	static const char *const names[] = { "cpu", "cpu_core", "cpu_atom" };
	char path[512];

	if (!root)
		root = "/sys/bus/event_source/devices";
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s/type", root, names[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}
