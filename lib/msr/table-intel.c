/* table-intel.c - Intel's registers as data: the architectural ones (the TSC, APERF and
 * MPERF, the architectural performance-monitoring registers, DEBUGCTL, MISC_ENABLE,
 * PERF_CAPABILITIES, the thermal status) and the model-specific ones a performance
 * engineer reads on every recent part (PLATFORM_INFO, RAPL energy, TEMPERATURE_TARGET).
 * Bit layouts from the Intel SDM; every description is tacho's own words. The P5's and
 * the P6's registers are in table-p5.c and table-p6.c. */
#include "msr/msr.h"

#define INTEL TC_VENDOR(TACHO_VENDOR_INTEL)
#define AMD (TC_VENDOR(TACHO_VENDOR_AMD) | TC_VENDOR(TACHO_VENDOR_HYGON))

/* Family 6 from Core Solo/Duo (model 0Eh, the first architectural PMU) and the families
 * after 0Fh; not the Pentium 4 (family 0Fh, whose PMU is another design). */
#define WHERE_ARCH { 2, { { INTEL, TC_FM(6, 0x0e), TC_FM(6, 0xff) },                      \
			  { INTEL, TC_FM(0x10, 0), TC_FM_MAX } } }
#define CPUS_ARCH "Intel with an architectural PMU (family 6 from Core Solo/Duo, model 0Eh)"
/* Nehalem (06_1AH) and later */
#define WHERE_NHM { 2, { { INTEL, TC_FM(6, 0x1a), TC_FM(6, 0xff) },                       \
			 { INTEL, TC_FM(0x10, 0), TC_FM_MAX } } }
/* Sandy Bridge (06_2AH) and later: RAPL */
#define WHERE_RAPL { 2, { { INTEL, TC_FM(6, 0x2a), TC_FM(6, 0xff) },                      \
			  { INTEL, TC_FM(0x10, 0), TC_FM_MAX } } }

#define SDM_ARCH "Intel SDM Vol. 4, Table 2-2 (IA-32 architectural MSRs)"
#define SDM_PERFMON "Intel SDM Vol. 3B, Performance Monitoring: 'Architectural Performance " \
	"Monitoring'; Vol. 4, Table 2-2"
#define SDM_RAPL "Intel SDM Vol. 3B, Power and Thermal Management: 'Platform Specific "     \
	"Power Management Support' (RAPL interfaces); Vol. 4, the model tables from Sandy "   \
	"Bridge on"
#define SDM_THERM "Intel SDM Vol. 3B, Power and Thermal Management: 'Thermal Monitoring "   \
	"and Protection'; Vol. 4, Table 2-2"

#define NOT_OURS_PERF "the kernel's perf programs it for its fixed counters and PMIs"

/* The architectural events (SDM Vol. 3B, 'Pre-defined Architectural Performance Events'),
 * keyed by event | umask << 8. The kernel's generic events map onto these on Intel. */
static const struct tc_msr_name arch_events[] = {
	{ 0x003c, "unhalted core cycles" },
	{ 0x00c0, "instructions retired" },
	{ 0x00c4, "branch instructions retired" },
	{ 0x00c5, "mispredicted branches retired" },
	{ 0x013c, "unhalted reference cycles" },
	{ 0x01a4, "topdown slots" },
	{ 0x412e, "last-level cache misses" },
	{ 0x4f2e, "last-level cache references" },
};
const struct tc_msr_names tc_msr_intel_arch_events = TC_NAMES(arch_events, "architectural event");

static const struct tc_msr_field count64[] = {
	{ .name = "count", .lo = 0, .hi = 63, .show = TC_SHOW_COUNT,
	  .desc = "the count (a counter is as wide as CPUID says; the bits above read 0)" },
};

static const struct tc_msr_field tsc_fields[] = {
	{ .name = "tsc", .lo = 0, .hi = 63, .show = TC_SHOW_COUNT,
	  .desc = "cycles of the time-stamp counter since reset (at a constant rate on parts "
		  "with an invariant TSC)" },
};

static const struct tc_msr_field tsc_adjust_fields[] = {
	{ .name = "adjust", .lo = 0, .hi = 63, .show = TC_SHOW_SIGNED,
	  .desc = "what this thread adds to its TSC; a write to the TSC changes it by the "
		  "same amount" },
};

/* IA32_PERFEVTSELx: SDM Vol. 3B, 'Architectural Performance Monitoring Version 1' (the
 * layout), versions 3 (AnyThread) and 6 (EQ, UMASK2); bits 32 and 33 are Haswell's TSX
 * qualifiers. */
static const struct tc_msr_field perfevtsel_fields[] = {
	{ .name = "event", .lo = 0, .hi = 7, .show = TC_SHOW_EVENT_INTEL,
	  .desc = "event select: which event the counter counts, with the unit mask",
	  .names = &tc_msr_intel_arch_events },
	{ .name = "umask", .lo = 8, .hi = 15, .show = TC_SHOW_HEX,
	  .desc = "unit mask: which conditions of the event count" },
	{ .name = "usr", .lo = 16, .hi = 16, .show = TC_SHOW_FLAG,
	  .desc = "count while the CPU runs at privilege levels 1 to 3 (user code)",
	  .on = "counts in user mode", .off = "not in user mode" },
	{ .name = "os", .lo = 17, .hi = 17, .show = TC_SHOW_FLAG,
	  .desc = "count while the CPU runs at privilege level 0 (the kernel)",
	  .on = "counts in the kernel (ring 0)", .off = "not in the kernel" },
	{ .name = "edge", .lo = 18, .hi = 18, .show = TC_SHOW_FLAG,
	  .desc = "count the starts of the condition (0 to 1 transitions) rather than every "
		  "cycle or event of it",
	  .on = "counts edges", .off = "counts every occurrence" },
	{ .name = "pc", .lo = 19, .hi = 19, .show = TC_SHOW_FLAG,
	  .desc = "pin control: the PMi pin toggles on overflow instead of on each increment",
	  .on = "the pin shows overflows", .off = "the pin shows increments" },
	{ .name = "int", .lo = 20, .hi = 20, .show = TC_SHOW_FLAG,
	  .desc = "interrupt through the local APIC when the counter overflows",
	  .on = "interrupts on overflow", .off = "no interrupt" },
	{ .name = "any", .lo = 21, .hi = 21, .show = TC_SHOW_FLAG,
	  .desc = "AnyThread: count the event of every hardware thread of the core (version 3 "
		  "on; deprecated where CPUID.0AH:EDX[15] says so)",
	  .on = "counts for every thread of the core", .off = "counts for this thread" },
	{ .name = "en", .lo = 22, .hi = 22, .show = TC_SHOW_FLAG,
	  .desc = "enable the counter",
	  .on = "counting", .off = "stopped" },
	{ .name = "inv", .lo = 23, .hi = 23, .show = TC_SHOW_FLAG,
	  .desc = "invert the counter-mask test: count the cycles with fewer than cmask events",
	  .on = "cycles below cmask", .off = "cycles at or above cmask" },
	{ .name = "cmask", .lo = 24, .hi = 31, .show = TC_SHOW_COUNT,
	  .desc = "counter mask: when not 0, count the cycles in which at least cmask events "
		  "happen (fewer, with inv)" },
	{ .name = "in_tx", .lo = 32, .hi = 32, .show = TC_SHOW_FLAG,
	  .desc = "count only inside transactional regions (TSX, Haswell on)",
	  .on = "only in transactions", .off = "everywhere" },
	{ .name = "in_txcp", .lo = 33, .hi = 33, .show = TC_SHOW_FLAG,
	  .desc = "leave out the events of aborted transactional regions (TSX, Haswell on)",
	  .on = "aborted transactions left out", .off = "aborted transactions counted" },
	{ .name = "eq", .lo = 36, .hi = 36, .show = TC_SHOW_FLAG,
	  .desc = "with cmask: count the cycles with exactly cmask events (version 6)",
	  .on = "cycles with exactly cmask", .off = "cmask is a lower bound" },
	{ .name = "umask2", .lo = 40, .hi = 47, .show = TC_SHOW_HEX,
	  .desc = "a second unit mask (version 6)" },
};

#define PERFEVTSEL(n)                                                                   \
	TC_MSR(.name = "IA32_PERFEVTSEL" #n, .aliases = "PerfEvtSel" #n,                \
	       .address = 0x186 + (n),                                                    \
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,  \
	       .where = WHERE_ARCH, .cpus = CPUS_ARCH,                                    \
	       .desc = "selects the event general-purpose counter " #n " (IA32_PMC" #n ") " \
		       "counts, at which privilege levels, and how",                    \
	       .source = SDM_PERFMON, TC_FIELDS(perfevtsel_fields), .rest_reserved = true)

#define PMC(n)                                                                          \
	TC_MSR(.name = "IA32_PMC" #n, .aliases = "PerfCtr" #n, .address = 0xc1 + (n),   \
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,  \
	       .where = WHERE_ARCH, .cpus = CPUS_ARCH,                                    \
	       .desc = "general-purpose counter " #n "; a write through this address sets " \
		       "bits 31:0 and copies bit 31 above them (IA32_A_PMC" #n " at "     \
		       "4C1h+" #n " writes the full width)",                              \
	       .source = SDM_PERFMON, TC_FIELDS(count64))

static const struct tc_msr_field fixed_ctrl_fields[] = {
#define FIXED_CTRL(n)                                                                   \
	{ .name = "os" #n, .lo = 4 * (n), .hi = 4 * (n), .show = TC_SHOW_FLAG,          \
	  .desc = "fixed counter " #n " counts at ring 0",                                 \
	  .on = "counts in the kernel", .off = "not in the kernel" },                       \
	{ .name = "usr" #n, .lo = 4 * (n) + 1, .hi = 4 * (n) + 1, .show = TC_SHOW_FLAG,  \
	  .desc = "fixed counter " #n " counts at rings 1 to 3",                            \
	  .on = "counts in user mode", .off = "not in user mode" },                         \
	{ .name = "any" #n, .lo = 4 * (n) + 2, .hi = 4 * (n) + 2, .show = TC_SHOW_FLAG,  \
	  .desc = "fixed counter " #n " counts for every thread of the core (version 3 on)", \
	  .on = "every thread of the core", .off = "this thread" },                         \
	{ .name = "pmi" #n, .lo = 4 * (n) + 3, .hi = 4 * (n) + 3, .show = TC_SHOW_FLAG,  \
	  .desc = "fixed counter " #n " interrupts on overflow",                            \
	  .on = "interrupts on overflow", .off = "no interrupt" }
	FIXED_CTRL(0), FIXED_CTRL(1), FIXED_CTRL(2), FIXED_CTRL(3),
#undef FIXED_CTRL
};

#define FIXED_CTR(n, what)                                                              \
	TC_MSR(.name = "IA32_FIXED_CTR" #n, .address = 0x309 + (n),                     \
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,  \
	       .where = WHERE_ARCH, .cpus = CPUS_ARCH " (counter " #n ": as CPUID.0AH "   \
		       "says)",                                                           \
	       .desc = "fixed-function counter " #n ": " what,                              \
	       .source = SDM_PERFMON " ('Version 2')", TC_FIELDS(count64))

static const struct tc_msr_field global_ctrl_fields[] = {
	{ .name = "pmc_en", .lo = 0, .hi = 31, .show = TC_SHOW_BITS, .unit = "PMC",
	  .desc = "bit n lets general-purpose counter n count" },
	{ .name = "fixed_en", .lo = 32, .hi = 47, .show = TC_SHOW_BITS, .unit = "FIXED_CTR",
	  .desc = "bit 32+n lets fixed counter n count" },
	{ .name = "perf_metrics_en", .lo = 48, .hi = 48, .show = TC_SHOW_FLAG,
	  .desc = "lets the topdown metrics (IA32_PERF_METRICS) count (Ice Lake on)",
	  .on = "enabled", .off = "disabled" },
};

static const struct tc_msr_field global_status_fields[] = {
	{ .name = "ovf_pmc", .lo = 0, .hi = 31, .show = TC_SHOW_BITS, .unit = "PMC",
	  .desc = "bit n: general-purpose counter n overflowed" },
	{ .name = "ovf_fixed", .lo = 32, .hi = 47, .show = TC_SHOW_BITS, .unit = "FIXED_CTR",
	  .desc = "bit 32+n: fixed counter n overflowed" },
	{ .name = "ovf_perf_metrics", .lo = 48, .hi = 48, .show = TC_SHOW_FLAG,
	  .desc = "the topdown metrics overflowed", .on = "overflowed", .off = "no" },
	{ .name = "topa_pmi", .lo = 55, .hi = 55, .show = TC_SHOW_FLAG,
	  .desc = "Intel PT raised a PMI (its output region filled)", .on = "yes", .off = "no" },
	{ .name = "lbr_frz", .lo = 58, .hi = 58, .show = TC_SHOW_FLAG,
	  .desc = "the LBR stack is frozen (by a PMI)", .on = "frozen", .off = "running" },
	{ .name = "ctr_frz", .lo = 59, .hi = 59, .show = TC_SHOW_FLAG,
	  .desc = "the counters are frozen (by a PMI)", .on = "frozen", .off = "running" },
	{ .name = "asci", .lo = 60, .hi = 60, .show = TC_SHOW_FLAG,
	  .desc = "the counters count events of an SGX enclave (anti side-channel: they "
		  "stop there)", .on = "yes", .off = "no" },
	{ .name = "ovf_uncore", .lo = 61, .hi = 61, .show = TC_SHOW_FLAG,
	  .desc = "an uncore counter overflowed", .on = "overflowed", .off = "no" },
	{ .name = "ovf_buf", .lo = 62, .hi = 62, .show = TC_SHOW_FLAG,
	  .desc = "the PEBS buffer reached its threshold", .on = "full", .off = "no" },
	{ .name = "cond_chgd", .lo = 63, .hi = 63, .show = TC_SHOW_FLAG,
	  .desc = "the performance-monitoring state changed (another agent took the "
		  "counters)", .on = "changed", .off = "no" },
};

static const struct tc_msr_field global_ovf_fields[] = {
	{ .name = "clr_pmc", .lo = 0, .hi = 31, .show = TC_SHOW_BITS, .unit = "PMC",
	  .desc = "writing 1 to bit n clears counter n's overflow status" },
	{ .name = "clr_fixed", .lo = 32, .hi = 47, .show = TC_SHOW_BITS, .unit = "FIXED_CTR",
	  .desc = "writing 1 to bit 32+n clears fixed counter n's overflow status" },
	{ .name = "clr_perf_metrics", .lo = 48, .hi = 48, .show = TC_SHOW_FLAG,
	  .desc = "clears the topdown metrics' overflow", .on = "clear", .off = "keep" },
	{ .name = "clr_topa_pmi", .lo = 55, .hi = 55, .show = TC_SHOW_FLAG,
	  .desc = "clears topa_pmi", .on = "clear", .off = "keep" },
	{ .name = "clr_lbr_frz", .lo = 58, .hi = 58, .show = TC_SHOW_FLAG,
	  .desc = "clears lbr_frz", .on = "clear", .off = "keep" },
	{ .name = "clr_ctr_frz", .lo = 59, .hi = 59, .show = TC_SHOW_FLAG,
	  .desc = "clears ctr_frz", .on = "clear", .off = "keep" },
	{ .name = "clr_asci", .lo = 60, .hi = 60, .show = TC_SHOW_FLAG,
	  .desc = "clears asci", .on = "clear", .off = "keep" },
	{ .name = "clr_ovf_uncore", .lo = 61, .hi = 61, .show = TC_SHOW_FLAG,
	  .desc = "clears ovf_uncore", .on = "clear", .off = "keep" },
	{ .name = "clr_ovf_buf", .lo = 62, .hi = 62, .show = TC_SHOW_FLAG,
	  .desc = "clears ovf_buf", .on = "clear", .off = "keep" },
	{ .name = "clr_cond_chgd", .lo = 63, .hi = 63, .show = TC_SHOW_FLAG,
	  .desc = "clears cond_chgd", .on = "clear", .off = "keep" },
};

static const struct tc_msr_field perf_cap_fields[] = {
	{ .name = "lbr_format", .lo = 0, .hi = 5, .show = TC_SHOW_HEX,
	  .desc = "the format of the last-branch records" },
	{ .name = "pebs_trap", .lo = 6, .hi = 6, .show = TC_SHOW_FLAG,
	  .desc = "PEBS records the state after the instruction (trap) rather than before it",
	  .on = "trap-like", .off = "fault-like" },
	{ .name = "pebs_arch_regs", .lo = 7, .hi = 7, .show = TC_SHOW_FLAG,
	  .desc = "PEBS records hold the architectural registers", .on = "yes", .off = "no" },
	{ .name = "pebs_format", .lo = 8, .hi = 11, .show = TC_SHOW_COUNT,
	  .desc = "the version of the PEBS record format" },
	{ .name = "smm_freeze", .lo = 12, .hi = 12, .show = TC_SHOW_FLAG,
	  .desc = "IA32_DEBUGCTL can freeze the counters while in SMM", .on = "yes", .off = "no" },
	{ .name = "fw_write", .lo = 13, .hi = 13, .show = TC_SHOW_FLAG,
	  .desc = "the counters take full-width writes through IA32_A_PMCx (4C1h on)",
	  .on = "yes", .off = "no" },
	{ .name = "pebs_baseline", .lo = 14, .hi = 14, .show = TC_SHOW_FLAG,
	  .desc = "adaptive PEBS (a baseline record, groups chosen by MSR_PEBS_DATA_CFG)",
	  .on = "yes", .off = "no" },
	{ .name = "perf_metrics", .lo = 15, .hi = 15, .show = TC_SHOW_FLAG,
	  .desc = "IA32_PERF_METRICS gives the topdown level-1 metrics", .on = "yes", .off = "no" },
	{ .name = "pebs_output_pt", .lo = 16, .hi = 16, .show = TC_SHOW_FLAG,
	  .desc = "PEBS records can go to the Intel PT output instead of the DS buffer",
	  .on = "yes", .off = "no" },
};

static const struct tc_msr_field debugctl_fields[] = {
	{ .name = "lbr", .lo = 0, .hi = 0, .show = TC_SHOW_FLAG,
	  .desc = "record the last taken branches in the LBR stack", .on = "recording",
	  .off = "off" },
	{ .name = "btf", .lo = 1, .hi = 1, .show = TC_SHOW_FLAG,
	  .desc = "single-step on branches rather than on instructions (with EFLAGS.TF)",
	  .on = "on branches", .off = "on instructions" },
	{ .name = "tr", .lo = 6, .hi = 6, .show = TC_SHOW_FLAG,
	  .desc = "send branch trace messages", .on = "on", .off = "off" },
	{ .name = "bts", .lo = 7, .hi = 7, .show = TC_SHOW_FLAG,
	  .desc = "store branch trace messages in the BTS buffer of the DS save area",
	  .on = "on", .off = "off" },
	{ .name = "btint", .lo = 8, .hi = 8, .show = TC_SHOW_FLAG,
	  .desc = "interrupt when the BTS buffer fills (else it wraps)", .on = "interrupt",
	  .off = "circular" },
	{ .name = "bts_off_os", .lo = 9, .hi = 9, .show = TC_SHOW_FLAG,
	  .desc = "no branch trace store at ring 0", .on = "not in the kernel", .off = "everywhere" },
	{ .name = "bts_off_usr", .lo = 10, .hi = 10, .show = TC_SHOW_FLAG,
	  .desc = "no branch trace store at rings 1 to 3", .on = "not in user mode",
	  .off = "everywhere" },
	{ .name = "freeze_lbrs_on_pmi", .lo = 11, .hi = 11, .show = TC_SHOW_FLAG,
	  .desc = "a performance-monitoring interrupt stops LBR recording", .on = "yes", .off = "no" },
	{ .name = "freeze_perfmon_on_pmi", .lo = 12, .hi = 12, .show = TC_SHOW_FLAG,
	  .desc = "a performance-monitoring interrupt stops every counter", .on = "yes", .off = "no" },
	{ .name = "enable_uncore_pmi", .lo = 13, .hi = 13, .show = TC_SHOW_FLAG,
	  .desc = "uncore counters may interrupt this CPU", .on = "yes", .off = "no" },
	{ .name = "freeze_while_smm", .lo = 14, .hi = 14, .show = TC_SHOW_FLAG,
	  .desc = "the counters and LBRs stop while in system-management mode", .on = "yes",
	  .off = "no" },
	{ .name = "rtm_debug", .lo = 15, .hi = 15, .show = TC_SHOW_FLAG,
	  .desc = "debug exceptions inside RTM regions are delivered", .on = "yes", .off = "no" },
};

static const struct tc_msr_field misc_enable_fields[] = {
	{ .name = "fast_strings", .lo = 0, .hi = 0, .show = TC_SHOW_FLAG,
	  .desc = "REP MOVS and REP STOS run in their fast form", .on = "enabled", .off = "disabled" },
	{ .name = "auto_tcc", .lo = 3, .hi = 3, .show = TC_SHOW_FLAG,
	  .desc = "the thermal control circuit throttles on its own when too hot",
	  .on = "enabled", .off = "disabled" },
	{ .name = "perfmon_available", .lo = 7, .hi = 7, .show = TC_SHOW_FLAG,
	  .desc = "performance monitoring is available (read-only)", .on = "yes", .off = "no" },
	{ .name = "bts_unavailable", .lo = 11, .hi = 11, .show = TC_SHOW_FLAG,
	  .desc = "branch trace store is not available (read-only)", .on = "unavailable",
	  .off = "available" },
	{ .name = "pebs_unavailable", .lo = 12, .hi = 12, .show = TC_SHOW_FLAG,
	  .desc = "precise event-based sampling is not available (read-only)",
	  .on = "unavailable", .off = "available" },
	{ .name = "eist", .lo = 16, .hi = 16, .show = TC_SHOW_FLAG,
	  .desc = "Enhanced Intel SpeedStep (P-states through IA32_PERF_CTL)", .on = "enabled",
	  .off = "disabled" },
	{ .name = "monitor_fsm", .lo = 18, .hi = 18, .show = TC_SHOW_FLAG,
	  .desc = "MONITOR and MWAIT are available", .on = "enabled", .off = "disabled" },
	{ .name = "limit_cpuid_maxval", .lo = 22, .hi = 22, .show = TC_SHOW_FLAG,
	  .desc = "CPUID.0:EAX reports at most 2 (for old operating systems)", .on = "limited",
	  .off = "not limited" },
	{ .name = "xtpr_disable", .lo = 23, .hi = 23, .show = TC_SHOW_FLAG,
	  .desc = "xTPR messages to the chipset are off", .on = "off", .off = "on" },
	{ .name = "xd_disable", .lo = 34, .hi = 34, .show = TC_SHOW_FLAG,
	  .desc = "the execute-disable page bit is turned off", .on = "XD off", .off = "XD on" },
	{ .name = "turbo_disable", .lo = 38, .hi = 38, .show = TC_SHOW_FLAG,
	  .desc = "turbo (opportunistic frequencies above the base) is off (model-specific)",
	  .on = "turbo off", .off = "turbo allowed" },
};

static const struct tc_msr_field platform_info_fields[] = {
	{ .name = "max_nonturbo_ratio", .lo = 8, .hi = 15, .show = TC_SHOW_RATIO,
	  .desc = "the ratio of the highest frequency without turbo (the base; TSC rate on "
		  "most parts) to the bus clock" },
	{ .name = "ppin_cap", .lo = 23, .hi = 23, .show = TC_SHOW_FLAG,
	  .desc = "the protected processor inventory number can be read", .on = "yes", .off = "no" },
	{ .name = "prog_turbo_ratio", .lo = 28, .hi = 28, .show = TC_SHOW_FLAG,
	  .desc = "the turbo ratio limits can be programmed", .on = "yes", .off = "no" },
	{ .name = "prog_tdp_limit", .lo = 29, .hi = 29, .show = TC_SHOW_FLAG,
	  .desc = "the TDP limit for turbo can be programmed", .on = "yes", .off = "no" },
	{ .name = "prog_tj_offset", .lo = 30, .hi = 30, .show = TC_SHOW_FLAG,
	  .desc = "the offset of the thermal target can be programmed", .on = "yes", .off = "no" },
	{ .name = "max_efficiency_ratio", .lo = 40, .hi = 47, .show = TC_SHOW_RATIO,
	  .desc = "the ratio of the lowest frequency the OS may ask for (most efficient)" },
	{ .name = "min_operating_ratio", .lo = 48, .hi = 55, .show = TC_SHOW_RATIO,
	  .desc = "the ratio of the lowest frequency the part runs at" },
};

static const struct tc_msr_field therm_status_fields[] = {
	{ .name = "thermal", .lo = 0, .hi = 0, .show = TC_SHOW_FLAG,
	  .desc = "the sensor is at or above the thermal-control activation temperature now",
	  .on = "hot", .off = "not hot" },
	{ .name = "thermal_log", .lo = 1, .hi = 1, .show = TC_SHOW_FLAG,
	  .desc = "it was, since the log was last cleared (sticky)", .on = "was hot", .off = "no" },
	{ .name = "prochot", .lo = 2, .hi = 2, .show = TC_SHOW_FLAG,
	  .desc = "PROCHOT# is asserted (by this part or by the platform)", .on = "asserted",
	  .off = "no" },
	{ .name = "prochot_log", .lo = 3, .hi = 3, .show = TC_SHOW_FLAG,
	  .desc = "PROCHOT# was asserted (sticky)", .on = "was asserted", .off = "no" },
	{ .name = "critical", .lo = 4, .hi = 4, .show = TC_SHOW_FLAG,
	  .desc = "the critical temperature is reached now", .on = "critical", .off = "no" },
	{ .name = "critical_log", .lo = 5, .hi = 5, .show = TC_SHOW_FLAG,
	  .desc = "the critical temperature was reached (sticky)", .on = "was critical",
	  .off = "no" },
	{ .name = "threshold1", .lo = 6, .hi = 6, .show = TC_SHOW_FLAG,
	  .desc = "above the first programmed threshold", .on = "above", .off = "below" },
	{ .name = "threshold1_log", .lo = 7, .hi = 7, .show = TC_SHOW_FLAG,
	  .desc = "crossed the first threshold (sticky)", .on = "crossed", .off = "no" },
	{ .name = "threshold2", .lo = 8, .hi = 8, .show = TC_SHOW_FLAG,
	  .desc = "above the second programmed threshold", .on = "above", .off = "below" },
	{ .name = "threshold2_log", .lo = 9, .hi = 9, .show = TC_SHOW_FLAG,
	  .desc = "crossed the second threshold (sticky)", .on = "crossed", .off = "no" },
	{ .name = "power_limit", .lo = 10, .hi = 10, .show = TC_SHOW_FLAG,
	  .desc = "the frequency is held below what the OS asked, for power or heat",
	  .on = "limited", .off = "no" },
	{ .name = "power_limit_log", .lo = 11, .hi = 11, .show = TC_SHOW_FLAG,
	  .desc = "it was (sticky)", .on = "was limited", .off = "no" },
	{ .name = "current_limit", .lo = 12, .hi = 12, .show = TC_SHOW_FLAG,
	  .desc = "an electrical current limit holds the frequency down", .on = "limited",
	  .off = "no" },
	{ .name = "current_limit_log", .lo = 13, .hi = 13, .show = TC_SHOW_FLAG,
	  .desc = "one did (sticky)", .on = "was limited", .off = "no" },
	{ .name = "cross_domain", .lo = 14, .hi = 14, .show = TC_SHOW_FLAG,
	  .desc = "another domain's limit holds the frequency down", .on = "limited", .off = "no" },
	{ .name = "cross_domain_log", .lo = 15, .hi = 15, .show = TC_SHOW_FLAG,
	  .desc = "one did (sticky)", .on = "was limited", .off = "no" },
	{ .name = "readout", .lo = 16, .hi = 22, .show = TC_SHOW_BELOW_TJMAX,
	  .desc = "the temperature, in degrees Celsius below the thermal-control activation "
		  "temperature (MSR_TEMPERATURE_TARGET bits 23:16)" },
	{ .name = "resolution", .lo = 27, .hi = 30, .show = TC_SHOW_CELSIUS,
	  .desc = "the precision of readout, in degrees Celsius" },
	{ .name = "valid", .lo = 31, .hi = 31, .show = TC_SHOW_FLAG,
	  .desc = "readout holds a valid reading", .on = "valid", .off = "not valid" },
};

static const struct tc_msr_field pkg_therm_status_fields[] = {
	{ .name = "thermal", .lo = 0, .hi = 0, .show = TC_SHOW_FLAG,
	  .desc = "the package is at or above its thermal-control activation temperature now",
	  .on = "hot", .off = "not hot" },
	{ .name = "thermal_log", .lo = 1, .hi = 1, .show = TC_SHOW_FLAG,
	  .desc = "it was (sticky)", .on = "was hot", .off = "no" },
	{ .name = "prochot", .lo = 2, .hi = 2, .show = TC_SHOW_FLAG,
	  .desc = "PROCHOT# is asserted", .on = "asserted", .off = "no" },
	{ .name = "prochot_log", .lo = 3, .hi = 3, .show = TC_SHOW_FLAG,
	  .desc = "PROCHOT# was asserted (sticky)", .on = "was asserted", .off = "no" },
	{ .name = "critical", .lo = 4, .hi = 4, .show = TC_SHOW_FLAG,
	  .desc = "the critical temperature is reached now", .on = "critical", .off = "no" },
	{ .name = "critical_log", .lo = 5, .hi = 5, .show = TC_SHOW_FLAG,
	  .desc = "it was (sticky)", .on = "was critical", .off = "no" },
	{ .name = "threshold1", .lo = 6, .hi = 6, .show = TC_SHOW_FLAG,
	  .desc = "above the first programmed threshold", .on = "above", .off = "below" },
	{ .name = "threshold1_log", .lo = 7, .hi = 7, .show = TC_SHOW_FLAG,
	  .desc = "crossed it (sticky)", .on = "crossed", .off = "no" },
	{ .name = "threshold2", .lo = 8, .hi = 8, .show = TC_SHOW_FLAG,
	  .desc = "above the second programmed threshold", .on = "above", .off = "below" },
	{ .name = "threshold2_log", .lo = 9, .hi = 9, .show = TC_SHOW_FLAG,
	  .desc = "crossed it (sticky)", .on = "crossed", .off = "no" },
	{ .name = "power_limit", .lo = 10, .hi = 10, .show = TC_SHOW_FLAG,
	  .desc = "the package's frequency is held below what was asked", .on = "limited",
	  .off = "no" },
	{ .name = "power_limit_log", .lo = 11, .hi = 11, .show = TC_SHOW_FLAG,
	  .desc = "it was (sticky)", .on = "was limited", .off = "no" },
	{ .name = "readout", .lo = 16, .hi = 22, .show = TC_SHOW_BELOW_TJMAX,
	  .desc = "the package's temperature, in degrees Celsius below its activation "
		  "temperature" },
};

static const struct tc_msr_field temperature_target_fields[] = {
	{ .name = "tj_target", .lo = 16, .hi = 23, .show = TC_SHOW_CELSIUS,
	  .desc = "the thermal-control activation temperature (TjMax) the readouts count "
		  "down from" },
	{ .name = "tcc_offset", .lo = 24, .hi = 29, .show = TC_SHOW_CELSIUS,
	  .desc = "how far below tj_target throttling starts (models that allow it)" },
};

static const struct tc_msr_field rapl_unit_fields[] = {
	{ .name = "power_unit", .lo = 0, .hi = 3, .show = TC_SHOW_POW2, .unit = "W",
	  .desc = "power values count in units of 1/2^power_unit watts" },
	{ .name = "energy_unit", .lo = 8, .hi = 12, .show = TC_SHOW_POW2, .unit = "J",
	  .desc = "the energy counters count in units of 1/2^energy_unit joules" },
	{ .name = "time_unit", .lo = 16, .hi = 19, .show = TC_SHOW_POW2, .unit = "s",
	  .desc = "time windows count in units of 1/2^time_unit seconds" },
};

static const struct tc_msr_field energy_fields[] = {
	{ .name = "energy", .lo = 0, .hi = 31, .show = TC_SHOW_COUNT,
	  .desc = "energy used since reset, in the energy unit of the unit register; it wraps "
		  "at 2^32 (minutes at full power)" },
};

static const struct tc_msr_field pkg_power_info_fields[] = {
	{ .name = "tdp", .lo = 0, .hi = 14, .show = TC_SHOW_COUNT,
	  .desc = "the thermal design power, in power units" },
	{ .name = "min_power", .lo = 16, .hi = 30, .show = TC_SHOW_COUNT,
	  .desc = "the lowest package power limit that can be set, in power units" },
	{ .name = "max_power", .lo = 32, .hi = 46, .show = TC_SHOW_COUNT,
	  .desc = "the highest package power limit that can be set, in power units" },
	{ .name = "max_window", .lo = 48, .hi = 53, .show = TC_SHOW_COUNT,
	  .desc = "the longest averaging window, in time units (encoded)" },
};

#define ENERGY(name_, alias, addr, what, cpus_)                                         \
	TC_MSR(.name = name_, .aliases = alias, .address = addr,                        \
	       .scope = TACHO_MSR_SCOPE_PACKAGE, .access = TACHO_MSR_RO,                  \
	       .where = WHERE_RAPL, .cpus = cpus_,                                        \
	       .desc = "energy counter of " what " (RAPL)", .source = SDM_RAPL,           \
	       TC_FIELDS(energy_fields), .rest_reserved = true)

static const struct tacho_msr intel[] = {
	TC_MSR(.name = "IA32_TIME_STAMP_COUNTER", .aliases = "TSC", .address = 0x10,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW,
	       .not_writable = "the kernel keeps time with it (clocksource tsc): a write "
			       "breaks clock_gettime and the scheduler's clock",
	       .where = { 1, { { INTEL | AMD, TC_FM(5, 0), TC_FM_MAX } } },
	       .cpus = "Intel and AMD from the Pentium on (family 5)",
	       .desc = "the time-stamp counter RDTSC reads",
	       .source = "Intel SDM Vol. 3B, 'Time-Stamp Counter'; Vol. 4, Table 2-2; AMD64 "
			 "APM Vol. 2, 'Time-Stamp Counter'; seeds 000, 001",
	       TC_FIELDS(tsc_fields)),
	TC_MSR(.name = "IA32_TSC_ADJUST", .aliases = "TSC_ADJUST", .address = 0x3b,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW,
	       .not_writable = "it moves this thread's TSC: the kernel checks that every "
			       "CPU's TSC agrees and keeps time with it",
	       .where = WHERE_ARCH, .cpus = "Intel where CPUID.(EAX=07H):EBX[1] says so",
	       .desc = "the offset this thread adds to the TSC",
	       .source = "Intel SDM Vol. 3B, 'Time-Stamp Counter Adjustment'; Vol. 4, Table 2-2",
	       TC_FIELDS(tsc_adjust_fields)),
	TC_MSR(.name = "IA32_MPERF", .aliases = "MPERF", .address = 0xe7,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW,
	       .not_writable = "the kernel reads APERF and MPERF for the scheduler's frequency "
			       "invariance: a write skews its view of each CPU's capacity",
	       .where = { 3, { { INTEL, TC_FM(6, 0x0e), TC_FM(6, 0xff) },
			       { INTEL, TC_FM(0x10, 0), TC_FM_MAX },
			       { AMD, TC_FM(0x10, 0), TC_FM_MAX } } },
	       .cpus = "Intel and AMD (family 10h on) where CPUID.06H:ECX[0] says so",
	       .desc = "counts at a fixed rate (the TSC's on Intel) while the CPU is not halted",
	       .source = "Intel SDM Vol. 3B, 'Hardware Coordination Feedback'; AMD64 APM Vol. "
			 "2, 'Determining Processor Effective Frequency'",
	       TC_FIELDS(count64)),
	TC_MSR(.name = "IA32_APERF", .aliases = "APERF", .address = 0xe8,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW,
	       .not_writable = "the kernel reads APERF and MPERF for the scheduler's frequency "
			       "invariance: a write skews its view of each CPU's capacity",
	       .where = { 3, { { INTEL, TC_FM(6, 0x0e), TC_FM(6, 0xff) },
			       { INTEL, TC_FM(0x10, 0), TC_FM_MAX },
			       { AMD, TC_FM(0x10, 0), TC_FM_MAX } } },
	       .cpus = "Intel and AMD (family 10h on) where CPUID.06H:ECX[0] says so",
	       .desc = "counts at the actual clock while the CPU is not halted: delta APERF / "
		       "delta MPERF is the effective frequency over the base",
	       .source = "Intel SDM Vol. 3B, 'Hardware Coordination Feedback'; AMD64 APM Vol. "
			 "2, 'Determining Processor Effective Frequency'",
	       TC_FIELDS(count64)),

	/* the architectural PMU: selectors, counters, fixed counters, global control */
	PMC(0), PMC(1), PMC(2), PMC(3), PMC(4), PMC(5), PMC(6), PMC(7),
	PERFEVTSEL(0), PERFEVTSEL(1), PERFEVTSEL(2), PERFEVTSEL(3),
	PERFEVTSEL(4), PERFEVTSEL(5), PERFEVTSEL(6), PERFEVTSEL(7),
	FIXED_CTR(0, "instructions retired"),
	FIXED_CTR(1, "unhalted core cycles"),
	FIXED_CTR(2, "unhalted reference cycles (at the TSC's rate)"),
	FIXED_CTR(3, "topdown slots (Ice Lake on)"),
	TC_MSR(.name = "IA32_PERF_CAPABILITIES", .address = 0x345,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RO,
	       .where = WHERE_ARCH, .cpus = "Intel where CPUID.01H:ECX[15] (PDCM) says so",
	       .desc = "what the performance-monitoring hardware can do: LBR and PEBS formats, "
		       "full-width counter writes, topdown metrics",
	       .source = "Intel SDM Vol. 3B, Performance Monitoring: 'Performance Monitoring "
			 "Capabilities' (IA32_PERF_CAPABILITIES); Vol. 4, Table 2-2",
	       TC_FIELDS(perf_cap_fields)),
	TC_MSR(.name = "IA32_FIXED_CTR_CTRL", .address = 0x38d,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = WHERE_ARCH, .cpus = CPUS_ARCH " (version 2 on)",
	       .desc = "turns each fixed counter on for ring 0, the other rings, or both, with "
		       "its interrupt",
	       .source = SDM_PERFMON " ('Version 2')", TC_FIELDS(fixed_ctrl_fields)),
	TC_MSR(.name = "IA32_PERF_GLOBAL_STATUS", .address = 0x38e,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RO,
	       .where = WHERE_ARCH, .cpus = CPUS_ARCH " (version 2 on)",
	       .desc = "which counters overflowed, and the freeze and buffer conditions",
	       .source = SDM_PERFMON " ('Version 2' to 'Version 4')",
	       TC_FIELDS(global_status_fields)),
	TC_MSR(.name = "IA32_PERF_GLOBAL_OVF_CTRL", .aliases = "IA32_PERF_GLOBAL_STATUS_RESET",
	       .address = 0x390, .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW,
	       .writable = true, .no_save = true,
	       .where = WHERE_ARCH, .cpus = CPUS_ARCH " (version 2 on)",
	       .desc = "writing 1 to a bit clears the matching bit of IA32_PERF_GLOBAL_STATUS",
	       .source = SDM_PERFMON " ('Version 2' to 'Version 4')",
	       TC_FIELDS(global_ovf_fields)),
	/* last of the counter set, so that a restore turns counting on only when the
	 * selectors and counters already hold their values */
	TC_MSR(.name = "IA32_PERF_GLOBAL_CTRL", .address = 0x38f,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = WHERE_ARCH, .cpus = CPUS_ARCH " (version 2 on)",
	       .desc = "the master switch of every counter: a counter counts only when its bit "
		       "here and its own enable are both set",
	       .source = SDM_PERFMON " ('Version 2')", TC_FIELDS(global_ctrl_fields)),

	TC_MSR(.name = "IA32_DEBUGCTL", .aliases = "DEBUGCTL", .address = 0x1d9,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW,
	       .not_writable = "the kernel's perf and debuggers own it; BTS without the buffer "
			       "the kernel sets up would write where it must not",
	       .where = WHERE_ARCH, .cpus = "Intel (P6 family on; these bits as on recent parts)",
	       .desc = "last-branch recording, branch trace store, single-step on branches, "
		       "and the freezes on a performance-monitoring interrupt",
	       .source = "Intel SDM Vol. 3B, 'Debug, Branch Profile, TSC, and Intel Resource "
			 "Director Technology Features' (IA32_DEBUGCTL MSR); Vol. 4, Table 2-2",
	       TC_FIELDS(debugctl_fields)),
	TC_MSR(.name = "IA32_MISC_ENABLE", .aliases = "MISC_ENABLE", .address = 0x1a0,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW,
	       .not_writable = "the firmware and the kernel set it: it turns processor features "
			       "(fast strings, MONITOR, execute-disable, turbo) on and off",
	       .where = WHERE_ARCH, .cpus = "Intel (Pentium 4 and P6 families on)",
	       .desc = "switches for processor features, and whether performance monitoring, "
		       "BTS and PEBS are available",
	       .source = SDM_ARCH, TC_FIELDS(misc_enable_fields)),
	TC_MSR(.name = "MSR_PLATFORM_INFO", .aliases = "PLATFORM_INFO", .address = 0xce,
	       .scope = TACHO_MSR_SCOPE_PACKAGE, .access = TACHO_MSR_RO,
	       .where = WHERE_NHM,
	       .cpus = "Intel family 6 from Nehalem (06_1AH; its bus clock is 133.33 MHz, "
		       "100 MHz from Sandy Bridge on)",
	       .desc = "the part's frequency ratios (base, most efficient, lowest) and what "
		       "can be programmed",
	       .source = "Intel SDM Vol. 4, the model tables from Nehalem on (MSR_PLATFORM_INFO)",
	       TC_FIELDS(platform_info_fields)),
	TC_MSR(.name = "IA32_THERM_STATUS", .aliases = "THERM_STATUS", .address = 0x19c,
	       .scope = TACHO_MSR_SCOPE_CORE, .access = TACHO_MSR_RW,
	       .not_writable = "a write clears the thermal logs the kernel's thermal driver "
			       "watches",
	       .where = WHERE_ARCH, .cpus = "Intel where CPUID.01H:EDX[22] (ACPI) says so",
	       .desc = "the core's temperature (below TjMax) and its thermal and power limits, "
		       "now and since last cleared",
	       .source = SDM_THERM, TC_FIELDS(therm_status_fields)),
	TC_MSR(.name = "IA32_PACKAGE_THERM_STATUS", .aliases = "PACKAGE_THERM_STATUS",
	       .address = 0x1b1, .scope = TACHO_MSR_SCOPE_PACKAGE, .access = TACHO_MSR_RW,
	       .not_writable = "a write clears the thermal logs the kernel's thermal driver "
			       "watches",
	       .where = WHERE_ARCH, .cpus = "Intel where CPUID.06H:EAX[6] (PTM) says so",
	       .desc = "the package's temperature (below TjMax) and its thermal and power limits",
	       .source = SDM_THERM, TC_FIELDS(pkg_therm_status_fields)),
	TC_MSR(.name = "MSR_TEMPERATURE_TARGET", .aliases = "TEMPERATURE_TARGET",
	       .address = 0x1a2, .scope = TACHO_MSR_SCOPE_PACKAGE, .access = TACHO_MSR_RO,
	       .where = WHERE_NHM, .cpus = "Intel family 6 from Nehalem (most models)",
	       .desc = "the temperature the thermal readouts count down from",
	       .source = "Intel SDM Vol. 4, the model tables from Nehalem on "
			 "(MSR_TEMPERATURE_TARGET)",
	       TC_FIELDS(temperature_target_fields)),

	/* RAPL: the unit, then the energy counters; power = delta energy x unit / time */
	TC_MSR(.name = "MSR_RAPL_POWER_UNIT", .aliases = "RAPL_POWER_UNIT", .address = 0x606,
	       .scope = TACHO_MSR_SCOPE_PACKAGE, .access = TACHO_MSR_RO,
	       .where = WHERE_RAPL, .cpus = "Intel family 6 from Sandy Bridge (06_2AH)",
	       .desc = "the units of the RAPL power, energy and time values",
	       .source = SDM_RAPL, TC_FIELDS(rapl_unit_fields), .rest_reserved = true),
	ENERGY("MSR_PKG_ENERGY_STATUS", "PKG_ENERGY_STATUS", 0x611, "the whole package",
	       "Intel family 6 from Sandy Bridge (06_2AH)"),
	ENERGY("MSR_PP0_ENERGY_STATUS", "PP0_ENERGY_STATUS", 0x639,
	       "the cores (power plane 0)", "Intel family 6 from Sandy Bridge (most models)"),
	ENERGY("MSR_PP1_ENERGY_STATUS", "PP1_ENERGY_STATUS", 0x641,
	       "the graphics (power plane 1)", "Intel client parts from Sandy Bridge"),
	ENERGY("MSR_DRAM_ENERGY_STATUS", "DRAM_ENERGY_STATUS", 0x619,
	       "the memory (some servers count in 15.3 uJ whatever the unit says)",
	       "Intel servers from Sandy Bridge-EP, and some client parts"),
	ENERGY("MSR_PLATFORM_ENERGY_STATUS", "PLATFORM_ENERGY_STATUS", 0x64d,
	       "the whole platform (psys)", "Intel client parts from Skylake"),
	TC_MSR(.name = "MSR_PKG_POWER_INFO", .aliases = "PKG_POWER_INFO", .address = 0x614,
	       .scope = TACHO_MSR_SCOPE_PACKAGE, .access = TACHO_MSR_RO,
	       .where = WHERE_RAPL, .cpus = "Intel family 6 from Sandy Bridge (06_2AH)",
	       .desc = "the package's thermal design power and the range of its power limits",
	       .source = SDM_RAPL, TC_FIELDS(pkg_power_info_fields)),
};

const struct tc_msr_table tc_msr_table_intel = { intel, ARRAY_SIZE(intel) };
