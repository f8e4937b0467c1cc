/* table-amd.c - AMD's registers as data (Hygon's family 18h shares them): the legacy
 * performance counters (PerfEvtSel0-3 at C001_0000h, PerfCtr0-3 at C001_0004h), the six
 * of the core performance-counter extensions (PERF_CTL0-5 and PERF_CTR0-5 interleaved at
 * C001_0200h), HWCR, the P-state registers and RAPL. Bit layouts from the AMD64
 * Architecture Programmer's Manual and the families' PPRs; descriptions in tacho's
 * words. The TSC, APERF and MPERF, which AMD shares with Intel, are in table-intel.c. */
#include "msr/msr.h"

#define AMD (TC_VENDOR(TACHO_VENDOR_AMD) | TC_VENDOR(TACHO_VENDOR_HYGON))

/* every AMD64 part from the K7 (family 6) on has the legacy four */
#define WHERE_K7 { 1, { { AMD, TC_FM(6, 0), TC_FM_MAX } } }
#define WHERE_F15 { 1, { { AMD, TC_FM(0x15, 0), TC_FM_MAX } } }
#define WHERE_F10 { 1, { { AMD, TC_FM(0x10, 0), TC_FM_MAX } } }
#define WHERE_ZEN { 1, { { AMD, TC_FM(0x17, 0), TC_FM_MAX } } }
/* the family 17h P-state definition layout: Zen to Zen 3 and Hygon (Zen 4 differs) */
#define WHERE_PSTATE17 { 3, { { AMD, TC_FM(0x17, 0), TC_FM(0x18, 0xff) },               \
			      { AMD, TC_FM(0x19, 0x00), TC_FM(0x19, 0x0f) },              \
			      { AMD, TC_FM(0x19, 0x20), TC_FM(0x19, 0x5f) } } }

#define APM_PMC "AMD64 APM Vol. 2, 'Performance Monitoring Counters' (PerfEvtSeln, the " \
	"core performance counter extensions); the families' BKDG and PPR"
#define PPR_17 "AMD PPR for family 17h (and 19h): "

/* Events every Zen part counts the same way, from the PPRs' core PMC events; the rest
 * are model-specific (the PPR of the part, or libpfm4). Keyed by the 12-bit event. */
static const struct tc_msr_name amd_events[] = {
	{ 0x076, "cycles not in halt" },
	{ 0x0c0, "retired instructions" },
	{ 0x0c1, "retired macro-ops" },
	{ 0x0c2, "retired branch instructions" },
	{ 0x0c3, "retired mispredicted branch instructions" },
	{ 0x0c4, "retired taken branch instructions" },
};
static const struct tc_msr_names amd_event_names = TC_NAMES(amd_events, "AMD core event");

static const struct tc_msr_field evtsel_fields[] = {
	{ .name = "event", .lo = 0, .hi = 7, .show = TC_SHOW_EVENT_AMD,
	  .names = &amd_event_names,
	  .desc = "event select, bits 7:0 (bits 11:8 are event_hi)" },
	{ .name = "umask", .lo = 8, .hi = 15, .show = TC_SHOW_HEX,
	  .desc = "unit mask: which conditions of the event count" },
	{ .name = "usr", .lo = 16, .hi = 16, .show = TC_SHOW_FLAG,
	  .desc = "count at privilege levels 1 to 3", .on = "counts in user mode",
	  .off = "not in user mode" },
	{ .name = "os", .lo = 17, .hi = 17, .show = TC_SHOW_FLAG,
	  .desc = "count at privilege level 0", .on = "counts in the kernel (ring 0)",
	  .off = "not in the kernel" },
	{ .name = "edge", .lo = 18, .hi = 18, .show = TC_SHOW_FLAG,
	  .desc = "count 0-to-1 transitions of the condition", .on = "counts edges",
	  .off = "counts every occurrence" },
	{ .name = "int", .lo = 20, .hi = 20, .show = TC_SHOW_FLAG,
	  .desc = "interrupt through the local APIC on overflow", .on = "interrupts on overflow",
	  .off = "no interrupt" },
	{ .name = "en", .lo = 22, .hi = 22, .show = TC_SHOW_FLAG,
	  .desc = "enable the counter", .on = "counting", .off = "stopped" },
	{ .name = "inv", .lo = 23, .hi = 23, .show = TC_SHOW_FLAG,
	  .desc = "invert the counter-mask test", .on = "cycles below cmask",
	  .off = "cycles at or above cmask" },
	{ .name = "cmask", .lo = 24, .hi = 31, .show = TC_SHOW_COUNT,
	  .desc = "counter mask: when not 0, count the cycles with at least cmask events" },
	{ .name = "event_hi", .lo = 32, .hi = 35, .show = TC_SHOW_HEX,
	  .desc = "event select, bits 11:8" },
	{ .name = "guest_only", .lo = 40, .hi = 40, .show = TC_SHOW_FLAG,
	  .desc = "count only while a guest runs (SVM)", .on = "only in guests",
	  .off = "not restricted to guests" },
	{ .name = "host_only", .lo = 41, .hi = 41, .show = TC_SHOW_FLAG,
	  .desc = "count only while the host runs (SVM)", .on = "only in the host",
	  .off = "not restricted to the host" },
};

static const struct tc_msr_field ctr_fields[] = {
	{ .name = "count", .lo = 0, .hi = 47, .show = TC_SHOW_COUNT,
	  .desc = "the count, 48 bits" },
};

#define EVTSEL(n)                                                                       \
	TC_MSR(.name = "AMD_PERFEVTSEL" #n, .aliases = "PerfEvtSel" #n ",K7_EVNTSEL" #n,   \
	       .address = 0xc0010000 + (n), .scope = TACHO_MSR_SCOPE_THREAD,              \
	       .access = TACHO_MSR_RW, .writable = true, .where = WHERE_K7,               \
	       .cpus = "AMD from the K7 (family 6) on",                                    \
	       .desc = "selects what legacy counter " #n " (PerfCtr" #n ") counts; from "   \
		       "family 15h on the same register as PERF_CTL" #n,                  \
	       .source = APM_PMC, TC_FIELDS(evtsel_fields), .rest_reserved = true)
#define CTR(n)                                                                          \
	TC_MSR(.name = "AMD_PERFCTR" #n, .aliases = "PerfCtr" #n ",K7_PERFCTR" #n,         \
	       .address = 0xc0010004 + (n), .scope = TACHO_MSR_SCOPE_THREAD,              \
	       .access = TACHO_MSR_RW, .writable = true, .where = WHERE_K7,               \
	       .cpus = "AMD from the K7 (family 6) on",                                    \
	       .desc = "legacy counter " #n " (RDPMC " #n ")",                               \
	       .source = APM_PMC, TC_FIELDS(ctr_fields), .rest_reserved = true)
#define PERF_CTL(n)                                                                     \
	TC_MSR(.name = "PERF_CTL" #n, .aliases = "F15H_PERF_CTL" #n,                      \
	       .address = 0xc0010200 + 2 * (n), .scope = TACHO_MSR_SCOPE_THREAD,          \
	       .access = TACHO_MSR_RW, .writable = true, .where = WHERE_F15,              \
	       .cpus = "AMD from family 15h on (CPUID 8000_0001h:ECX[23], PerfCtrExtCore)", \
	       .desc = "selects what counter " #n " (PERF_CTR" #n ") counts",               \
	       .source = APM_PMC, TC_FIELDS(evtsel_fields), .rest_reserved = true)
#define PERF_CTR(n)                                                                     \
	TC_MSR(.name = "PERF_CTR" #n, .aliases = "F15H_PERF_CTR" #n,                      \
	       .address = 0xc0010201 + 2 * (n), .scope = TACHO_MSR_SCOPE_THREAD,          \
	       .access = TACHO_MSR_RW, .writable = true, .where = WHERE_F15,              \
	       .cpus = "AMD from family 15h on (CPUID 8000_0001h:ECX[23], PerfCtrExtCore)", \
	       .desc = "counter " #n " (RDPMC " #n ")",                                      \
	       .source = APM_PMC, TC_FIELDS(ctr_fields), .rest_reserved = true)

static const struct tc_msr_field hwcr_fields[] = {
	{ .name = "smm_lock", .lo = 0, .hi = 0, .show = TC_SHOW_FLAG,
	  .desc = "the SMM configuration is locked until reset", .on = "locked", .off = "open" },
	{ .name = "tlb_cache_dis", .lo = 3, .hi = 3, .show = TC_SHOW_FLAG,
	  .desc = "page-table walks do not use the caches", .on = "uncached walks",
	  .off = "cached walks" },
	{ .name = "invdwbinvd", .lo = 4, .hi = 4, .show = TC_SHOW_FLAG,
	  .desc = "INVD behaves as WBINVD (writes back)", .on = "INVD writes back",
	  .off = "INVD discards" },
	{ .name = "dis_lock", .lo = 7, .hi = 7, .show = TC_SHOW_FLAG,
	  .desc = "the LOCK prefix has no bus-locking effect", .on = "locks off", .off = "locks on" },
	{ .name = "ignne_em", .lo = 8, .hi = 8, .show = TC_SHOW_FLAG,
	  .desc = "the IGNNE# port is emulated", .on = "emulated", .off = "not emulated" },
	{ .name = "mon_mwait_dis", .lo = 9, .hi = 9, .show = TC_SHOW_FLAG,
	  .desc = "MONITOR and MWAIT are disabled", .on = "disabled", .off = "enabled" },
	{ .name = "mon_mwait_user_en", .lo = 10, .hi = 10, .show = TC_SHOW_FLAG,
	  .desc = "MONITOR and MWAIT may run at any privilege level", .on = "allowed in user mode",
	  .off = "ring 0 only" },
	{ .name = "smi_sp_cyc_dis", .lo = 13, .hi = 13, .show = TC_SHOW_FLAG,
	  .desc = "no special bus cycle on an SMI", .on = "none", .off = "sent" },
	{ .name = "rsm_sp_cyc_dis", .lo = 14, .hi = 14, .show = TC_SHOW_FLAG,
	  .desc = "no special bus cycle on RSM", .on = "none", .off = "sent" },
	{ .name = "wrap32_dis", .lo = 17, .hi = 17, .show = TC_SHOW_FLAG,
	  .desc = "32-bit addresses do not wrap at 4 GiB outside long mode", .on = "no wrap",
	  .off = "wrap" },
	{ .name = "mc_status_wr_en", .lo = 18, .hi = 18, .show = TC_SHOW_FLAG,
	  .desc = "the machine-check status registers may be written", .on = "writable",
	  .off = "read-only" },
	{ .name = "lock_tsc_to_p0", .lo = 21, .hi = 21, .show = TC_SHOW_FLAG,
	  .desc = "the TSC counts at the P0 rate whatever the P-state", .on = "P0 rate",
	  .off = "not locked" },
	{ .name = "tsc_freq_sel", .lo = 24, .hi = 24, .show = TC_SHOW_FLAG,
	  .desc = "the TSC counts at the P0 frequency (read-only on recent parts)",
	  .on = "P0 frequency", .off = "core clock" },
	{ .name = "cpb_dis", .lo = 25, .hi = 25, .show = TC_SHOW_FLAG,
	  .desc = "core performance boost (frequencies above P0) is off", .on = "boost off",
	  .off = "boost allowed" },
	{ .name = "eff_freq_cnt_mwait", .lo = 26, .hi = 26, .show = TC_SHOW_FLAG,
	  .desc = "APERF and MPERF count during MWAIT", .on = "count in MWAIT",
	  .off = "stop in MWAIT" },
	{ .name = "eff_freq_ro_lock", .lo = 27, .hi = 27, .show = TC_SHOW_FLAG,
	  .desc = "APERF and MPERF are read-only until reset", .on = "read-only",
	  .off = "writable" },
	{ .name = "ir_perf_en", .lo = 30, .hi = 30, .show = TC_SHOW_FLAG,
	  .desc = "the instructions-retired counter (IRPerfCount, C000_00E9h) counts",
	  .on = "counting", .off = "stopped" },
	{ .name = "cpuid_user_dis", .lo = 35, .hi = 35, .show = TC_SHOW_FLAG,
	  .desc = "CPUID faults outside ring 0", .on = "ring 0 only", .off = "allowed" },
};

static const struct tc_msr_field pstate_limit_fields[] = {
	{ .name = "cur_pstate_limit", .lo = 0, .hi = 2, .show = TC_SHOW_COUNT,
	  .desc = "the fastest P-state the OS may ask for now (0 is the fastest)" },
	{ .name = "pstate_max_val", .lo = 4, .hi = 6, .show = TC_SHOW_COUNT,
	  .desc = "the slowest P-state there is" },
};

static const struct tc_msr_field pstate_ctl_fields[] = {
	{ .name = "pstate_cmd", .lo = 0, .hi = 2, .show = TC_SHOW_COUNT,
	  .desc = "the P-state the OS asks for" },
};

static const struct tc_msr_field pstate_status_fields[] = {
	{ .name = "cur_pstate", .lo = 0, .hi = 2, .show = TC_SHOW_COUNT,
	  .desc = "the P-state the core is in" },
};

static const struct tc_msr_field pstate_def_fields[] = {
	{ .name = "cpu_fid", .lo = 0, .hi = 7, .show = TC_SHOW_AMD_PSTATE_MHZ,
	  .desc = "core frequency ID: the frequency is 200 MHz x cpu_fid / cpu_dfs_id" },
	{ .name = "cpu_dfs_id", .lo = 8, .hi = 13, .show = TC_SHOW_HEX,
	  .desc = "core divisor ID, in eighths (8: divide by 1)" },
	{ .name = "cpu_vid", .lo = 14, .hi = 21, .show = TC_SHOW_HEX,
	  .desc = "core voltage ID" },
	{ .name = "idd_value", .lo = 22, .hi = 29, .show = TC_SHOW_COUNT,
	  .desc = "the current the P-state may draw, before idd_div" },
	{ .name = "idd_div", .lo = 30, .hi = 31, .show = TC_SHOW_COUNT,
	  .desc = "the divisor of idd_value (0: 1 A, 1: 1/10 A, 2: 1/100 A steps)" },
	{ .name = "pstate_en", .lo = 63, .hi = 63, .show = TC_SHOW_FLAG,
	  .desc = "this P-state is valid", .on = "valid", .off = "not defined" },
};

#define PSTATE_DEF(n)                                                                   \
	TC_MSR(.name = "AMD_PSTATE_DEF" #n, .aliases = "PStateDef" #n,                    \
	       .address = 0xc0010064 + (n), .scope = TACHO_MSR_SCOPE_CORE,                \
	       .access = TACHO_MSR_RW,                                                    \
	       .not_writable = "the firmware defines the P-states: a wrong frequency or "  \
			       "voltage can hang the part",                               \
	       .where = WHERE_PSTATE17,                                                   \
	       .cpus = "AMD family 17h, Hygon 18h, AMD 19h to Zen 3 (models 0-0Fh, 20h-5Fh)", \
	       .desc = "the frequency, voltage and current of P-state " #n,                 \
	       .source = PPR_17 "MSRC001_0064 to _006B (P-state definitions)",             \
	       TC_FIELDS(pstate_def_fields))

static const struct tc_msr_field rapl_unit_fields[] = {
	{ .name = "power_unit", .lo = 0, .hi = 3, .show = TC_SHOW_POW2, .unit = "W",
	  .desc = "power values count in units of 1/2^power_unit watts" },
	{ .name = "energy_unit", .lo = 8, .hi = 12, .show = TC_SHOW_POW2, .unit = "J",
	  .desc = "the energy counters count in units of 1/2^energy_unit joules" },
	{ .name = "time_unit", .lo = 16, .hi = 19, .show = TC_SHOW_POW2, .unit = "s",
	  .desc = "time values count in units of 1/2^time_unit seconds" },
};

static const struct tc_msr_field energy_fields[] = {
	{ .name = "energy", .lo = 0, .hi = 31, .show = TC_SHOW_COUNT,
	  .desc = "energy used since reset, in the energy unit of AMD_RAPL_POWER_UNIT; it "
		  "wraps at 2^32" },
};

static const struct tacho_msr amd[] = {
	EVTSEL(0), EVTSEL(1), EVTSEL(2), EVTSEL(3),
	CTR(0), CTR(1), CTR(2), CTR(3),
	PERF_CTL(0), PERF_CTR(0), PERF_CTL(1), PERF_CTR(1), PERF_CTL(2), PERF_CTR(2),
	PERF_CTL(3), PERF_CTR(3), PERF_CTL(4), PERF_CTR(4), PERF_CTL(5), PERF_CTR(5),
	TC_MSR(.name = "HWCR", .aliases = "AMD_HWCR,K7_HWCR", .address = 0xc0010015,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW,
	       .not_writable = "the firmware and the kernel set it: it locks SMM, turns boost "
			       "off, changes MONITOR/MWAIT, CPUID and the TSC",
	       .where = { 1, { { AMD, TC_FM(0xf, 0), TC_FM_MAX } } },
	       .cpus = "AMD from the K8 (family 0Fh) on; the bits as on recent parts",
	       .desc = "the hardware configuration register: boost, the TSC's rate, "
		       "MONITOR/MWAIT, the instructions-retired counter",
	       .source = "AMD64 APM Vol. 2, 'MSR Cross-Reference' (HWCR); " PPR_17 "MSRC001_0015",
	       TC_FIELDS(hwcr_fields)),
	TC_MSR(.name = "AMD_PSTATE_CUR_LIMIT", .aliases = "PStateCurLim", .address = 0xc0010061,
	       .scope = TACHO_MSR_SCOPE_CORE, .access = TACHO_MSR_RO,
	       .where = WHERE_F10, .cpus = "AMD from family 10h on",
	       .desc = "the range of P-states the OS may use now",
	       .source = "AMD64 APM Vol. 2, 'P-State Control'; " PPR_17 "MSRC001_0061",
	       TC_FIELDS(pstate_limit_fields)),
	TC_MSR(.name = "AMD_PSTATE_CTL", .aliases = "PStateCtl", .address = 0xc0010062,
	       .scope = TACHO_MSR_SCOPE_CORE, .access = TACHO_MSR_RW,
	       .not_writable = "the kernel's cpufreq driver (acpi-cpufreq, amd-pstate) owns "
			       "the P-state: use its sysfs files",
	       .where = WHERE_F10, .cpus = "AMD from family 10h on",
	       .desc = "the P-state the OS asks the core for",
	       .source = "AMD64 APM Vol. 2, 'P-State Control'; " PPR_17 "MSRC001_0062",
	       TC_FIELDS(pstate_ctl_fields)),
	TC_MSR(.name = "AMD_PSTATE_STATUS", .aliases = "PStateStat", .address = 0xc0010063,
	       .scope = TACHO_MSR_SCOPE_CORE, .access = TACHO_MSR_RO,
	       .where = WHERE_F10, .cpus = "AMD from family 10h on",
	       .desc = "the P-state the core is in",
	       .source = "AMD64 APM Vol. 2, 'P-State Control'; " PPR_17 "MSRC001_0063",
	       TC_FIELDS(pstate_status_fields)),
	PSTATE_DEF(0), PSTATE_DEF(1), PSTATE_DEF(2), PSTATE_DEF(3),
	PSTATE_DEF(4), PSTATE_DEF(5), PSTATE_DEF(6), PSTATE_DEF(7),
	TC_MSR(.name = "AMD_RAPL_POWER_UNIT", .aliases = "RAPL_PWR_UNIT", .address = 0xc0010299,
	       .scope = TACHO_MSR_SCOPE_PACKAGE, .access = TACHO_MSR_RO,
	       .where = WHERE_ZEN, .cpus = "AMD from family 17h on",
	       .desc = "the units of the RAPL power, energy and time values",
	       .source = PPR_17 "MSRC001_0299 (RAPL power unit)",
	       TC_FIELDS(rapl_unit_fields), .rest_reserved = true),
	TC_MSR(.name = "AMD_CORE_ENERGY_STATUS", .aliases = "CORE_ENERGY_STAT",
	       .address = 0xc001029a, .scope = TACHO_MSR_SCOPE_CORE, .access = TACHO_MSR_RO,
	       .where = WHERE_ZEN, .cpus = "AMD from family 17h on",
	       .desc = "energy counter of this core",
	       .source = PPR_17 "MSRC001_029A (core energy status)",
	       TC_FIELDS(energy_fields), .rest_reserved = true),
	TC_MSR(.name = "AMD_PKG_ENERGY_STATUS", .aliases = "PKG_ENERGY_STAT",
	       .address = 0xc001029b, .scope = TACHO_MSR_SCOPE_PACKAGE, .access = TACHO_MSR_RO,
	       .where = WHERE_ZEN, .cpus = "AMD from family 17h on",
	       .desc = "energy counter of the whole package",
	       .source = PPR_17 "MSRC001_029B (package energy status)",
	       TC_FIELDS(energy_fields), .rest_reserved = true),
};

const struct tc_msr_table tc_msr_table_amd = { amd, ARRAY_SIZE(amd) };
