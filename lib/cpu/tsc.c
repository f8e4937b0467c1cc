/* tsc.c - what CPUID says about the time-stamp counter: present, invariant, and its
 * frequency from leaf 0x15 (crystal x ratio), the hypervisor's leaf 0x4000_0010 or
 * leaf 0x16 (base frequency), in that order of trust. This is the one place that reads
 * those leaves: lib/tsc (section 5 of tacho.h) takes this answer and adds the kernel's
 * value and a measurement; both speak enum tacho_tsc_source. SDM Vol. 2A CPUID
 * 15h/16h; SDM Vol. 3B 19.7.3 "Determining the Processor Base Frequency" and its
 * table "Nominal Core Crystal Clock Frequency". */
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"

/* Parts whose leaf 0x15 gives the ratio but ECX = 0: the SDM's crystal table, and
 * Denverton as Linux's native_calibrate_tsc has it. Intel family 6 only. */
static const struct {
	unsigned model;
	uint64_t hz;
	const char *what;
} crystal[] = {
	{ 0x4e, 24000000, "Skylake client" },
	{ 0x5e, 24000000, "Skylake client" },
	{ 0x8e, 24000000, "Kaby/Coffee/Whiskey/Amber Lake client" },
	{ 0x9e, 24000000, "Kaby/Coffee Lake client" },
	{ 0x55, 25000000, "Xeon Scalable (Skylake-SP)" },
	{ 0x5c, 19200000, "Goldmont (Apollo Lake)" },
	{ 0x5f, 25000000, "Goldmont (Denverton)" },
};

/* The names of enum tacho_tsc_source live with the enum, in the CPU area, so that the
 * CPU description's writer can name the decoder's sources without lib/tsc. */
static const char *const source_names[] = {
	[TACHO_TSC_FREQ_UNKNOWN] = "unknown",
	[TACHO_TSC_FREQ_CPUID_15] = "cpuid-15h",
	[TACHO_TSC_FREQ_CPUID_15_16] = "cpuid-15h+16h",
	[TACHO_TSC_FREQ_HYPERVISOR] = "hypervisor",
	[TACHO_TSC_FREQ_KERNEL] = "kernel",
	[TACHO_TSC_FREQ_CPUID_16] = "cpuid-16h",
	[TACHO_TSC_FREQ_CALIBRATED] = "calibrated",
	[TACHO_TSC_FREQ_CPUID_15_TABLE] = "cpuid-15h+sdm-table",
	[TACHO_TSC_FREQ_SYSFS] = "sysfs",
	[TACHO_TSC_FREQ_CPUINFO] = "cpuinfo",
};

const char *tacho_tsc_source_name(enum tacho_tsc_source src)
{
	if ((unsigned)src < ARRAY_SIZE(source_names) && source_names[src])
		return source_names[src];
	return "unknown";
}

void tc_cpu_tsc(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info)
{
	struct tacho_cpu_tsc *t = &info->tsc;
	struct tacho_cpuid_regs r;

	if (tc_query_leaf(d, 0, 1, 0, &r)) {
		t->present = tc_bits(r.edx, 4, 4);
		t->deadline = tc_bits(r.ecx, 24, 24);
	}
	if (tc_query_leaf(d, 0, 0x80000001u, 0, &r))
		t->rdtscp = tc_bits(r.edx, 27, 27);
	if (tc_query_leaf(d, 0, 0x80000007u, 0, &r))
		t->invariant = tc_bits(r.edx, 8, 8);
	if (info->max_leaf >= 0x16 && tc_query_leaf(d, 0, 0x16, 0, &r)) {
		t->base_mhz = tc_bits(r.eax, 15, 0);
		t->max_mhz = tc_bits(r.ebx, 15, 0);
		t->bus_mhz = tc_bits(r.ecx, 15, 0);
	}
	if (info->max_leaf >= 0x15 && tc_query_leaf(d, 0, 0x15, 0, &r) && r.eax && r.ebx) {
		t->ratio_den = r.eax;
		t->ratio_num = r.ebx;
		if (r.ecx) {
			t->crystal_hz = r.ecx;
			t->source = TACHO_TSC_FREQ_CPUID_15;
		} else if (info->vendor == TACHO_VENDOR_INTEL && info->family == 6) {
			for (size_t i = 0; i < ARRAY_SIZE(crystal); i++)
				if (crystal[i].model == info->model) {
					t->crystal_hz = crystal[i].hz;
					t->source = TACHO_TSC_FREQ_CPUID_15_TABLE;
				}
		}
		if (!t->crystal_hz && t->base_mhz) {
			/* Linux: crystal = base x den / num when the ratio is known */
			t->crystal_hz = (uint64_t)((unsigned __int128)t->base_mhz * 1000000u *
						   t->ratio_den / t->ratio_num);
			t->source = TACHO_TSC_FREQ_CPUID_15_16;
		}
		if (t->crystal_hz)
			t->hz = (uint64_t)((unsigned __int128)t->crystal_hz * t->ratio_num /
					   t->ratio_den);
		else
			tc_cpu_note(info, "leaf 0x15 gives the TSC/crystal ratio %u/%u but not the "
				    "crystal frequency, and the model is not in the SDM's table",
				    t->ratio_num, t->ratio_den);
	}
	/* A hypervisor that states the TSC rate (VMware's leaf, KVM and others too) says
	 * what the guest sees; 16h is the host part's nominal base, passed through. */
	if (!t->hz && info->hv_max_leaf >= 0x40000010u &&
	    tc_query_leaf(d, 0, 0x40000010u, 0, &r) && r.eax) {
		t->hz = (uint64_t)r.eax * 1000u;
		t->source = TACHO_TSC_FREQ_HYPERVISOR;
	}
	if (!t->hz && t->base_mhz) {
		t->hz = (uint64_t)t->base_mhz * 1000000u;
		t->source = TACHO_TSC_FREQ_CPUID_16;
		tc_cpu_note(info, "TSC frequency from leaf 0x16's base frequency (%u MHz): the SDM "
			    "calls it nominal; the real TSC rate may differ slightly", t->base_mhz);
	}
	if (t->present && !t->hz)
		tc_cpu_note(info, "CPUID does not give the TSC frequency (no leaf 0x15/0x16 value, "
			    "no hypervisor leaf 0x40000010): ask the kernel or measure it");
	if (t->present && !t->invariant && info->max_ext_leaf >= 0x80000007u)
		tc_cpu_note(info, "the TSC is not invariant (0x80000007 EDX[8] clear): its rate "
			    "may change with P-states or stop in deep C-states");
}
