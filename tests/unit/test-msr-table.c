/* test-msr-table.c - the MSR tables: their shape (names unique, fields inside 64 bits and
 * apart, sorted names, a reason for every register tacho will not write), a decode of every
 * field of every register, one row each naming the line of the test table and of the
 * register's table entry on failure; the seeds' CESR and PerfEvtSel0 values decoded as
 * they describe them; lookups by name, alias and address; where registers exist; and the
 * FIELD=VAL parser, good and bad. */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "msr/msr.h"

static const struct tacho_msr_cpu skylake = { TACHO_VENDOR_INTEL, 6, 0x55, false };
static const struct tacho_msr_cpu pentium = { TACHO_VENDOR_INTEL, 5, 2, false };
static const struct tacho_msr_cpu pentium2 = { TACHO_VENDOR_INTEL, 6, 5, false };
static const struct tacho_msr_cpu pentium4 = { TACHO_VENDOR_INTEL, 0xf, 2, false };
static const struct tacho_msr_cpu zen3 = { TACHO_VENDOR_AMD, 0x19, 1, true };
static const struct tacho_msr_cpu zen4 = { TACHO_VENDOR_AMD, 0x19, 0x11, false };
static const struct tacho_msr_cpu k8 = { TACHO_VENDOR_AMD, 0xf, 0x41, false };
static const struct tacho_msr_cpu hygon = { TACHO_VENDOR_HYGON, 0x18, 1, false };
static const struct tacho_msr_cpu via = { TACHO_VENDOR_VIA, 6, 0xf, false };
static const struct tacho_msr_cpu nobody = { TACHO_VENDOR_UNKNOWN, 0, 0, false };

/* "lib/msr/table-intel.c:123", for failures */
static const char *where(const struct tacho_msr *m)
{
	static char buf[160];

	snprintf(buf, sizeof(buf), "%s:%d", m->file, m->line);
	return buf;
}

/* --- the tables' shape --- */

static void check_names(const struct tc_msr_names *names, const struct tacho_msr *m,
			const char *field)
{
	for (size_t i = 1; names && i < names->n; i++)
		if (names->v[i - 1].key >= names->v[i].key)
			fail_msg("%s %s (%s): its names are not sorted at key 0x%x", m->name, field,
				 where(m), names->v[i].key);
}

static const char *const wanted[] = {
	"IA32_TIME_STAMP_COUNTER", "IA32_TSC_ADJUST", "IA32_APERF", "IA32_MPERF", "CESR", "CTR0",
	"CTR1", "P6_PERFEVTSEL0", "P6_PERFEVTSEL1", "P6_PERFCTR0", "P6_PERFCTR1",
	"IA32_PERFEVTSEL0", "IA32_PERFEVTSEL7", "IA32_PMC0", "IA32_PMC7", "IA32_FIXED_CTR0",
	"IA32_FIXED_CTR_CTRL", "IA32_PERF_GLOBAL_CTRL", "IA32_PERF_GLOBAL_STATUS",
	"IA32_PERF_GLOBAL_OVF_CTRL", "IA32_DEBUGCTL", "IA32_MISC_ENABLE", "MSR_PLATFORM_INFO",
	"IA32_PERF_CAPABILITIES", "MSR_RAPL_POWER_UNIT", "MSR_PKG_ENERGY_STATUS",
	"MSR_PP0_ENERGY_STATUS", "MSR_PP1_ENERGY_STATUS", "MSR_DRAM_ENERGY_STATUS",
	"IA32_THERM_STATUS", "IA32_PACKAGE_THERM_STATUS", "AMD_PERFEVTSEL0", "AMD_PERFEVTSEL3",
	"AMD_PERFCTR0", "AMD_PERFCTR3", "PERF_CTL0", "PERF_CTR0", "PERF_CTL5", "PERF_CTR5",
	"HWCR", "AMD_PSTATE_CUR_LIMIT", "AMD_PSTATE_CTL", "AMD_PSTATE_STATUS", "AMD_PSTATE_DEF0",
	"AMD_RAPL_POWER_UNIT", "AMD_PKG_ENERGY_STATUS",
};

static void test_integrity(void **state)
{
	size_t n = tacho_msr_count(), writable = 0;
	(void)state;

	/* the registers issue 18 asks for are there */
	for (size_t i = 0; i < ARRAY_SIZE(wanted); i++)
		if (!tc_msr_by_name(wanted[i]))
			fail_msg("the table has no %s", wanted[i]);
	assert_null(tacho_msr_at(n));
	for (size_t i = 0; i < n; i++) {
		const struct tacho_msr *m = tacho_msr_at(i);
		uint64_t seen = 0;

		assert_non_null(m);
		if (!m->name || !m->desc || !*m->desc || !m->source || !*m->source || !m->cpus ||
		    !*m->cpus || !m->nfields || !m->where.n || m->where.n > 4)
			fail_msg("%s: an entry without name, description, source, processors, "
				 "fields or ranges", where(m));
		for (size_t k = 0; k < i; k++)
			if (!strcasecmp(tacho_msr_at(k)->name, m->name))
				fail_msg("%s: the name %s is taken at %s", where(m), m->name,
					 where(tacho_msr_at(k)));
		if (m->writable) {
			writable++;
			if (m->access != TACHO_MSR_RW)
				fail_msg("%s: %s is writable but the manual makes it read-only",
					 where(m), m->name);
		} else if (m->access == TACHO_MSR_RW && (!m->not_writable || !*m->not_writable)) {
			fail_msg("%s: %s is read-write in the manual: say why tacho does not write it",
				 where(m), m->name);
		}
		if (m->no_save && !m->writable)
			fail_msg("%s: no_save on a register tacho does not write", where(m));
		for (unsigned r = 0; r < m->where.n; r++)
			if (!m->where.r[r].vendors || m->where.r[r].lo > m->where.r[r].hi)
				fail_msg("%s: range %u is empty", where(m), r);
		for (unsigned f = 0; f < m->nfields; f++) {
			const struct tc_msr_field *fl = &m->fields[f];
			uint64_t mask;

			if (!fl->name || !fl->desc || fl->lo > fl->hi || fl->hi > 63)
				fail_msg("%s: %s field %u is malformed", where(m), m->name, f);
			mask = tc_msr_field_mask(fl);
			if (seen & mask)
				fail_msg("%s: %s field %s overlaps another", where(m), m->name, fl->name);
			seen |= mask;
			for (unsigned g = 0; g < f; g++)
				if (!strcmp(m->fields[g].name, fl->name))
					fail_msg("%s: %s has two fields %s", where(m), m->name, fl->name);
			if (fl->show == TC_SHOW_FLAG && (fl->lo != fl->hi || !fl->on || !fl->off))
				fail_msg("%s: %s flag %s needs one bit and two words", where(m),
					 m->name, fl->name);
			if ((fl->show == TC_SHOW_NAMES || fl->show == TC_SHOW_EVENT_INTEL ||
			     fl->show == TC_SHOW_EVENT_AMD) && !fl->names)
				fail_msg("%s: %s %s has no names", where(m), m->name, fl->name);
			if ((fl->show == TC_SHOW_POW2 || fl->show == TC_SHOW_BITS) && !fl->unit)
				fail_msg("%s: %s %s has no unit", where(m), m->name, fl->name);
			check_names(fl->names, m, fl->name);
		}
	}
	/* the counter sets of both vendors and the seeds' registers are writable */
	assert_true(writable >= 50);
}

/* --- every field of every register, decoded --- */

/* V(register pattern, value) sets the register and the value the F rows below it
 * decode: F(field, its value, its meaning in words). */
struct drow {
	int line;
	const char *pattern;
	uint64_t value;
	const char *field;
	uint64_t fvalue;
	const char *meaning;
};
#define V(pat, val) { __LINE__, pat, val, NULL, 0, NULL }
#define F(field, fv, text) { __LINE__, NULL, 0, field, fv, text }

static const struct drow drows[] = {
	V("IA32_TIME_STAMP_COUNTER", 0x1234567890),
	F("tsc", 0x1234567890, "78,187,493,520"),
	V("IA32_TSC_ADJUST", 0xffffffffffff0000),
	F("adjust", 0xffffffffffff0000, "-65536"),
	V("IA32_MPERF", 0xf4240),
	F("count", 0xf4240, "1,000,000"),
	V("IA32_APERF", 0xf4240),
	F("count", 0xf4240, "1,000,000"),
	V("IA32_PMC[0-7]", 0xffffffffffff),
	F("count", 0xffffffffffff, "281,474,976,710,655"),
	V("IA32_PERFEVTSEL[0-7]", 0x4300c0),
	F("event", 0xc0, "instructions retired (architectural event, umask 0x00)"),
	F("umask", 0x0, "0x0"),
	F("usr", 0x1, "counts in user mode"),
	F("os", 0x1, "counts in the kernel (ring 0)"),
	F("edge", 0x0, "counts every occurrence"),
	F("pc", 0x0, "the pin shows increments"),
	F("int", 0x0, "no interrupt"),
	F("any", 0x0, "counts for this thread"),
	F("en", 0x1, "counting"),
	F("inv", 0x0, "cycles at or above cmask"),
	F("cmask", 0x0, "0"),
	F("in_tx", 0x0, "everywhere"),
	F("in_txcp", 0x0, "aborted transactions counted"),
	F("eq", 0x0, "cmask is a lower bound"),
	F("umask2", 0x0, "0x0"),
	V("IA32_PERFEVTSEL[0-7]", 0x51302bc412e),
	F("event", 0x2e, "last-level cache misses (architectural event, umask 0x41)"),
	F("umask", 0x41, "0x41"),
	F("usr", 0x0, "not in user mode"),
	F("os", 0x0, "not in the kernel"),
	F("edge", 0x1, "counts edges"),
	F("pc", 0x1, "the pin shows overflows"),
	F("int", 0x1, "interrupts on overflow"),
	F("any", 0x1, "counts for every thread of the core"),
	F("en", 0x0, "stopped"),
	F("inv", 0x1, "cycles below cmask"),
	F("cmask", 0x2, "2"),
	F("in_tx", 0x1, "only in transactions"),
	F("in_txcp", 0x1, "aborted transactions left out"),
	F("eq", 0x1, "cycles with exactly cmask"),
	F("umask2", 0x5, "0x5"),
	V("IA32_FIXED_CTR[0-3]", 0xffffffffffff),
	F("count", 0xffffffffffff, "281,474,976,710,655"),
	V("IA32_FIXED_CTR_CTRL", 0x4b0a),
	F("os0", 0x0, "not in the kernel"),
	F("usr0", 0x1, "counts in user mode"),
	F("any0", 0x0, "this thread"),
	F("pmi0", 0x1, "interrupts on overflow"),
	F("os1", 0x0, "not in the kernel"),
	F("usr1", 0x0, "not in user mode"),
	F("any1", 0x0, "this thread"),
	F("pmi1", 0x0, "no interrupt"),
	F("os2", 0x1, "counts in the kernel"),
	F("usr2", 0x1, "counts in user mode"),
	F("any2", 0x0, "this thread"),
	F("pmi2", 0x1, "interrupts on overflow"),
	F("os3", 0x0, "not in the kernel"),
	F("usr3", 0x0, "not in user mode"),
	F("any3", 0x1, "every thread of the core"),
	F("pmi3", 0x0, "no interrupt"),
	V("IA32_PERF_GLOBAL_CTRL", 0x100070000000f),
	F("pmc_en", 0xf, "PMC0, PMC1, PMC2, PMC3"),
	F("fixed_en", 0x7, "FIXED_CTR0, FIXED_CTR1, FIXED_CTR2"),
	F("perf_metrics_en", 0x1, "enabled"),
	V("IA32_PERF_GLOBAL_STATUS", 0xc000000100000002),
	F("ovf_pmc", 0x2, "PMC1"),
	F("ovf_fixed", 0x1, "FIXED_CTR0"),
	F("ovf_perf_metrics", 0x0, "no"),
	F("topa_pmi", 0x0, "no"),
	F("lbr_frz", 0x0, "running"),
	F("ctr_frz", 0x0, "running"),
	F("asci", 0x0, "no"),
	F("ovf_uncore", 0x0, "no"),
	F("ovf_buf", 0x1, "full"),
	F("cond_chgd", 0x1, "changed"),
	V("IA32_PERF_GLOBAL_OVF_CTRL", 0xc000000100000002),
	F("clr_pmc", 0x2, "PMC1"),
	F("clr_fixed", 0x1, "FIXED_CTR0"),
	F("clr_perf_metrics", 0x0, "keep"),
	F("clr_topa_pmi", 0x0, "keep"),
	F("clr_lbr_frz", 0x0, "keep"),
	F("clr_ctr_frz", 0x0, "keep"),
	F("clr_asci", 0x0, "keep"),
	F("clr_ovf_uncore", 0x0, "keep"),
	F("clr_ovf_buf", 0x1, "clear"),
	F("clr_cond_chgd", 0x1, "clear"),
	V("IA32_PERF_CAPABILITIES", 0x33c5),
	F("lbr_format", 0x5, "0x5"),
	F("pebs_trap", 0x1, "trap-like"),
	F("pebs_arch_regs", 0x1, "yes"),
	F("pebs_format", 0x3, "3"),
	F("smm_freeze", 0x1, "yes"),
	F("fw_write", 0x1, "yes"),
	F("pebs_baseline", 0x0, "no"),
	F("perf_metrics", 0x0, "no"),
	F("pebs_output_pt", 0x0, "no"),
	V("IA32_DEBUGCTL", 0x1801),
	F("lbr", 0x1, "recording"),
	F("btf", 0x0, "on instructions"),
	F("tr", 0x0, "off"),
	F("bts", 0x0, "off"),
	F("btint", 0x0, "circular"),
	F("bts_off_os", 0x0, "everywhere"),
	F("bts_off_usr", 0x0, "everywhere"),
	F("freeze_lbrs_on_pmi", 0x1, "yes"),
	F("freeze_perfmon_on_pmi", 0x1, "yes"),
	F("enable_uncore_pmi", 0x0, "no"),
	F("freeze_while_smm", 0x0, "no"),
	F("rtm_debug", 0x0, "no"),
	V("IA32_MISC_ENABLE", 0x850089),
	F("fast_strings", 0x1, "enabled"),
	F("auto_tcc", 0x1, "enabled"),
	F("perfmon_available", 0x1, "yes"),
	F("bts_unavailable", 0x0, "available"),
	F("pebs_unavailable", 0x0, "available"),
	F("eist", 0x1, "enabled"),
	F("monitor_fsm", 0x1, "enabled"),
	F("limit_cpuid_maxval", 0x0, "not limited"),
	F("xtpr_disable", 0x1, "off"),
	F("xd_disable", 0x0, "XD on"),
	F("turbo_disable", 0x0, "turbo allowed"),
	V("MSR_PLATFORM_INFO", 0x80a0030801800),
	F("max_nonturbo_ratio", 0x18, "24 x 100 MHz = 2400 MHz"),
	F("ppin_cap", 0x1, "yes"),
	F("prog_turbo_ratio", 0x1, "yes"),
	F("prog_tdp_limit", 0x1, "yes"),
	F("prog_tj_offset", 0x0, "no"),
	F("max_efficiency_ratio", 0xa, "10 x 100 MHz = 1000 MHz"),
	F("min_operating_ratio", 0x8, "8 x 100 MHz = 800 MHz"),
	V("IA32_THERM_STATUS", 0x88390802),
	F("thermal", 0x0, "not hot"),
	F("thermal_log", 0x1, "was hot"),
	F("prochot", 0x0, "no"),
	F("prochot_log", 0x0, "no"),
	F("critical", 0x0, "no"),
	F("critical_log", 0x0, "no"),
	F("threshold1", 0x0, "below"),
	F("threshold1_log", 0x0, "no"),
	F("threshold2", 0x0, "below"),
	F("threshold2_log", 0x0, "no"),
	F("power_limit", 0x0, "no"),
	F("power_limit_log", 0x1, "was limited"),
	F("current_limit", 0x0, "no"),
	F("current_limit_log", 0x0, "no"),
	F("cross_domain", 0x0, "no"),
	F("cross_domain_log", 0x0, "no"),
	F("readout", 0x39, "57 C below TjMax"),
	F("resolution", 0x1, "1 C"),
	F("valid", 0x1, "valid"),
	V("IA32_PACKAGE_THERM_STATUS", 0x420005),
	F("thermal", 0x1, "hot"),
	F("thermal_log", 0x0, "no"),
	F("prochot", 0x1, "asserted"),
	F("prochot_log", 0x0, "no"),
	F("critical", 0x0, "no"),
	F("critical_log", 0x0, "no"),
	F("threshold1", 0x0, "below"),
	F("threshold1_log", 0x0, "no"),
	F("threshold2", 0x0, "below"),
	F("threshold2_log", 0x0, "no"),
	F("power_limit", 0x0, "no"),
	F("power_limit_log", 0x0, "no"),
	F("readout", 0x42, "66 C below TjMax"),
	V("MSR_TEMPERATURE_TARGET", 0x5640000),
	F("tj_target", 0x64, "100 C"),
	F("tcc_offset", 0x5, "5 C"),
	V("MSR_RAPL_POWER_UNIT", 0xa0e03),
	F("power_unit", 0x3, "1/2^3 W = 125 mW"),
	F("energy_unit", 0xe, "1/2^14 J = 61.04 uJ"),
	F("time_unit", 0xa, "1/2^10 s = 976.6 us"),
	V("MSR_*_ENERGY_STATUS", 0x12345678),
	F("energy", 0x12345678, "305,419,896"),
	V("MSR_PKG_POWER_INFO", 0x2b7fff018003c0),
	F("tdp", 0x3c0, "960"),
	F("min_power", 0x180, "384"),
	F("max_power", 0x7fff, "32,767"),
	F("max_window", 0x2b, "43"),
	V("AMD_PERFEVTSEL[0-3]", 0x200005300c0),
	F("event", 0xc0, "retired instructions (AMD core event 0x0c0)"),
	F("umask", 0x0, "0x0"),
	F("usr", 0x1, "counts in user mode"),
	F("os", 0x1, "counts in the kernel (ring 0)"),
	F("edge", 0x0, "counts every occurrence"),
	F("int", 0x1, "interrupts on overflow"),
	F("en", 0x1, "counting"),
	F("inv", 0x0, "cycles at or above cmask"),
	F("cmask", 0x0, "0"),
	F("event_hi", 0x0, "0x0"),
	F("guest_only", 0x0, "not restricted to guests"),
	F("host_only", 0x1, "only in the host"),
	V("AMD_PERFEVTSEL[0-3]", 0x10403840fc0),
	F("event", 0xc0, "event 0x4c0: model-specific (the part's PPR names it)"),
	F("umask", 0xf, "0xf"),
	F("usr", 0x0, "not in user mode"),
	F("os", 0x0, "not in the kernel"),
	F("edge", 0x1, "counts edges"),
	F("int", 0x0, "no interrupt"),
	F("en", 0x0, "stopped"),
	F("inv", 0x1, "cycles below cmask"),
	F("cmask", 0x3, "3"),
	F("event_hi", 0x4, "0x4"),
	F("guest_only", 0x1, "only in guests"),
	F("host_only", 0x0, "not restricted to the host"),
	V("AMD_PERFCTR[0-3]", 0xffffffffffff),
	F("count", 0xffffffffffff, "281,474,976,710,655"),
	V("PERF_CTL[0-5]", 0x200005300c1),
	F("event", 0xc1, "retired macro-ops (AMD core event 0x0c1)"),
	F("umask", 0x0, "0x0"),
	F("usr", 0x1, "counts in user mode"),
	F("os", 0x1, "counts in the kernel (ring 0)"),
	F("edge", 0x0, "counts every occurrence"),
	F("int", 0x1, "interrupts on overflow"),
	F("en", 0x1, "counting"),
	F("inv", 0x0, "cycles at or above cmask"),
	F("cmask", 0x0, "0"),
	F("event_hi", 0x0, "0x0"),
	F("guest_only", 0x0, "not restricted to guests"),
	F("host_only", 0x1, "only in the host"),
	V("PERF_CTR[0-5]", 0xffffffffffff),
	F("count", 0xffffffffffff, "281,474,976,710,655"),
	V("HWCR", 0x45000011),
	F("smm_lock", 0x1, "locked"),
	F("tlb_cache_dis", 0x0, "cached walks"),
	F("invdwbinvd", 0x1, "INVD writes back"),
	F("dis_lock", 0x0, "locks on"),
	F("ignne_em", 0x0, "not emulated"),
	F("mon_mwait_dis", 0x0, "enabled"),
	F("mon_mwait_user_en", 0x0, "ring 0 only"),
	F("smi_sp_cyc_dis", 0x0, "sent"),
	F("rsm_sp_cyc_dis", 0x0, "sent"),
	F("wrap32_dis", 0x0, "wrap"),
	F("mc_status_wr_en", 0x0, "read-only"),
	F("lock_tsc_to_p0", 0x0, "not locked"),
	F("tsc_freq_sel", 0x1, "P0 frequency"),
	F("cpb_dis", 0x0, "boost allowed"),
	F("eff_freq_cnt_mwait", 0x1, "count in MWAIT"),
	F("eff_freq_ro_lock", 0x0, "writable"),
	F("ir_perf_en", 0x1, "counting"),
	F("cpuid_user_dis", 0x0, "allowed"),
	V("AMD_PSTATE_CUR_LIMIT", 0x20),
	F("cur_pstate_limit", 0x0, "0"),
	F("pstate_max_val", 0x2, "2"),
	V("AMD_PSTATE_CTL", 0x1),
	F("pstate_cmd", 0x1, "1"),
	V("AMD_PSTATE_STATUS", 0x2),
	F("cur_pstate", 0x2, "2"),
	V("AMD_PSTATE_DEF[0-7]", 0x8000000047968888),
	F("cpu_fid", 0x88, "3400 MHz (200 MHz x 136 / 8)"),
	F("cpu_dfs_id", 0x8, "0x8"),
	F("cpu_vid", 0x5a, "0x5a"),
	F("idd_value", 0x1e, "30"),
	F("idd_div", 0x1, "1"),
	F("pstate_en", 0x1, "valid"),
	V("AMD_RAPL_POWER_UNIT", 0xa1003),
	F("power_unit", 0x3, "1/2^3 W = 125 mW"),
	F("energy_unit", 0x10, "1/2^16 J = 15.26 uJ"),
	F("time_unit", 0xa, "1/2^10 s = 976.6 us"),
	V("AMD_*_ENERGY_STATUS", 0x12345678),
	F("energy", 0x12345678, "305,419,896"),
	V("CESR", 0x570056),
	F("es0", 0x16, "instructions executed (both pipes)"),
	F("os0", 0x1, "counts at CPL 0-2"),
	F("usr0", 0x0, "not at CPL 3"),
	F("cc0", 0x0, "counts events"),
	F("pc0", 0x0, "PM0 shows increments"),
	F("es1", 0x17, "instructions executed in the V pipe (paired)"),
	F("os1", 0x1, "counts at CPL 0-2"),
	F("usr1", 0x0, "not at CPL 3"),
	F("cc1", 0x0, "counts events"),
	F("pc1", 0x0, "PM1 shows increments"),
	V("CESR", 0xe9039f),
	F("es0", 0x1f, "clocks stalled by address generation interlocks (AGI)"),
	F("os0", 0x0, "not at CPL 0-2"),
	F("usr0", 0x1, "counts at CPL 3"),
	F("cc0", 0x1, "counts clocks"),
	F("pc0", 0x1, "PM0 shows overflows"),
	F("es1", 0x29, "data read misses or data write misses"),
	F("os1", 0x1, "counts at CPL 0-2"),
	F("usr1", 0x1, "counts at CPL 3"),
	F("cc1", 0x0, "counts events"),
	F("pc1", 0x0, "PM1 shows increments"),
	V("CTR[01]", 0xffffffffff),
	F("count", 0xffffffffff, "1,099,511,627,775"),
	V("P6_PERFEVTSEL0", 0x410048),
	F("event", 0x48, "DCU_MISS_OUTSTANDING: cycles weighted by L1 data misses outstanding"),
	F("umask", 0x0, "0x0"),
	F("usr", 0x1, "counts in user mode"),
	F("os", 0x0, "not in the kernel"),
	F("edge", 0x0, "counts every occurrence"),
	F("pc", 0x0, "the pin shows increments"),
	F("int", 0x0, "no interrupt"),
	F("en", 0x1, "both counters count"),
	F("inv", 0x0, "cycles at or above cmask"),
	F("cmask", 0x0, "0"),
	V("P6_PERFEVTSEL1", 0x19c0f45),
	F("event", 0x45, "DCU_LINES_IN: lines allocated in the L1 data cache"),
	F("umask", 0xf, "0xf"),
	F("usr", 0x0, "not in user mode"),
	F("os", 0x0, "not in the kernel"),
	F("edge", 0x1, "counts edges"),
	F("pc", 0x1, "the pin shows overflows"),
	F("int", 0x1, "interrupts on overflow"),
	F("inv", 0x1, "cycles below cmask"),
	F("cmask", 0x1, "1"),
	V("P6_PERFCTR[01]", 0xffffffffff),
	F("count", 0xffffffffff, "1,099,511,627,775"),
	/* beyond the tables of names: what the decoder says it does not know */
	V("IA32_PERFEVTSEL[0-7]", 0x4301d1),
	F("event", 0xd1, "event 0xd1, umask 0x01: not an architectural event (the CPU's event "
	  "list names it)"),
	V("CESR", 0x20),
	F("es0", 0x20, "0x20: not a P5 event tacho knows"),
	V("P6_PERFEVTSEL0", 0x01),
	F("event", 0x1, "0x1: not a P6 event tacho knows"),
	V("AMD_PSTATE_DEF[0-7]", 0x88),
	F("cpu_fid", 0x88, "no frequency (cpu_dfs_id is 0)"),
	V("MSR_PLATFORM_INFO", 0),
	F("max_nonturbo_ratio", 0x0, "0: not reported"),
	V("IA32_PERF_GLOBAL_CTRL", 0),
	F("pmc_en", 0x0, "none"),
	V("IA32_TSC_ADJUST", 0x7fffffffffffffff),
	F("adjust", 0x7fffffffffffffff, "9223372036854775807"),
};

static int field_index(const struct tacho_msr *m, const char *name)
{
	for (unsigned i = 0; i < m->nfields; i++)
		if (!strcmp(m->fields[i].name, name))
			return (int)i;
	return -1;
}

static void test_decode_every_field(void **state)
{
	size_t n = tacho_msr_count(), checked = 0;
	bool *covered;
	size_t *offset;
	(void)state;

	/* which (register, field) pairs a row covers: every one must be */
	offset = calloc(n + 1, sizeof(*offset));
	assert_non_null(offset);
	for (size_t i = 0; i < n; i++)
		offset[i + 1] = offset[i] + tacho_msr_at(i)->nfields;
	covered = calloc(offset[n] ? offset[n] : 1, sizeof(*covered));
	assert_non_null(covered);
	for (size_t r = 0; r < ARRAY_SIZE(drows); r++) {
		const struct drow *d = &drows[r], *v = d;
		size_t matched = 0;

		if (!d->field)
			continue;
		while (v->field)
			v--;
		for (size_t i = 0; i < n; i++) {
			const struct tacho_msr *m = tacho_msr_at(i);
			struct tacho_msr_field_value fv = { .sz = sizeof(fv) };
			int k;

			if (fnmatch(v->pattern, m->name, 0))
				continue;
			matched++;
			k = field_index(m, d->field);
			if (k < 0)
				fail_msg("test line %d: %s (%s) has no field %s", d->line, m->name,
					 where(m), d->field);
			assert_int_equal(tacho_msr_decode_field(m, (unsigned)k, v->value, &fv), 0);
			if (fv.value != d->fvalue || strcmp(fv.meaning, d->meaning))
				fail_msg("test line %d: %s (%s) 0x%llx field %s is 0x%llx \"%s\", "
					 "want 0x%llx \"%s\"", d->line, m->name, where(m),
					 (unsigned long long)v->value, d->field,
					 (unsigned long long)fv.value, fv.meaning,
					 (unsigned long long)d->fvalue, d->meaning);
			covered[offset[i] + (size_t)k] = true;
			checked++;
		}
		if (!matched)
			fail_msg("test line %d: no register matches %s", v->line, v->pattern);
	}
	for (size_t i = 0; i < n; i++) {
		const struct tacho_msr *m = tacho_msr_at(i);
		for (unsigned k = 0; k < m->nfields; k++)
			if (!covered[offset[i] + k])
				fail_msg("%s: no row decodes %s field %s", where(m), m->name,
					 m->fields[k].name);
	}
	print_message("%zu field decodes checked over %zu registers\n", checked, n);
	free(covered);
	free(offset);
}

/* --- the seeds --- */

static uint64_t field_of(const char *reg, const char *field, uint64_t v, char *meaning,
			 size_t size)
{
	const struct tacho_msr *m = tc_msr_by_name(reg);
	struct tacho_msr_field_value fv = { .sz = sizeof(fv) };
	int k;

	assert_non_null(m);
	k = field_index(m, field);
	assert_true(k >= 0);
	assert_int_equal(tacho_msr_decode_field(m, (unsigned)k, v, &fv), 0);
	if (meaning)
		snprintf(meaning, size, "%s", fv.meaning);
	return fv.value;
}

/* Seed 004's PMX32 command, "WRMSR 11 AND FFFFFC00 OR 00000083", read from the seed:
 * counter 0 counts data read misses at ring 3, counter 1 is left as it was. */
static void test_seed_pmx(void **state)
{
	const char *path = th_path("shared/seeds/004_f8023d28299ac70d.txt");
	unsigned long long and_mask, or_bits;
	const struct tacho_msr *cesr;
	uint64_t before = 0x00d9009c, after;
	char *text, meaning[160];
	const char *p;
	size_t len;
	uint32_t addr;
	(void)state;

	if (th_read_data(path, &text, &len))
		TEST_SKIP("the seeds are not at %s (TACHO_SHARED)", path);
	p = strstr(text, "WRMSR 11 AND ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "WRMSR 11 AND %llx OR %llx", &and_mask, &or_bits), 2);
	free(text);
	assert_int_equal(and_mask, 0xfffffc00ull);
	/* "11" is CESR's address in the seed's hex */
	assert_int_equal(tacho_msr_lookup("11h", &pentium, &cesr, &addr, NULL), 0);
	assert_ptr_equal(cesr, tc_msr_by_name("CESR"));
	/* PMX keeps the bits outside the mask: whatever counter 1 was doing */
	after = (before & and_mask) | or_bits;
	assert_int_equal(after, 0x00d90083);
	assert_int_equal(field_of("CESR", "es0", after, meaning, sizeof(meaning)), 3);
	assert_string_equal(meaning, "data read misses");
	assert_int_equal(field_of("CESR", "usr0", after, NULL, 0), 1);
	assert_int_equal(field_of("CESR", "os0", after, NULL, 0), 0);
	assert_int_equal(field_of("CESR", "cc0", after, meaning, sizeof(meaning)), 0);
	assert_string_equal(meaning, "counts events");
	assert_int_equal(field_of("CESR", "pc0", after, NULL, 0), 0);
	/* counter 1 as before: 0x19 (write-buffer stalls) at CPL 0-2 and 3, clocks */
	assert_int_equal(field_of("CESR", "es1", after, meaning, sizeof(meaning)), 0x19);
	assert_string_equal(meaning, "clocks stalled by full write buffers");
	assert_int_equal(field_of("CESR", "os1", after, NULL, 0), 1);
	assert_int_equal(field_of("CESR", "usr1", after, NULL, 0), 1);
	assert_int_equal(field_of("CESR", "cc1", after, NULL, 0), 0);
	/* the same as tacho's own assignments */
	assert_int_equal(tacho_msr_assign(cesr, before, "es0=3,os0=0,usr0=1,cc0=0,pc0=0", &after,
					  NULL), 0);
	assert_int_equal(after, 0x00d90083);
}

/* Seed 001's macros: SetMSRTimers ORs SYS_CODE (bit 6) into each half, USER_CODE is bit 7,
 * COUNT_CYCLES bit 8, PM0_OVERFLOWS bit 9; seed 003's driver writes event | 10000h |
 * 400000h into PerfEvtSel0 (186h). */
static void test_seed_macros(void **state)
{
	char m[160];
	uint64_t v;
	(void)state;

	/* SetMSRTimers 16h, 17h: instructions in both pipes, in the V pipe, at CPL 0-2 */
	v = (uint64_t)(0x17 | 0x40) << 16 | (0x16 | 0x40);
	assert_int_equal(field_of("CESR", "es0", v, m, sizeof(m)), 0x16);
	assert_string_equal(m, "instructions executed (both pipes)");
	assert_int_equal(field_of("CESR", "os0", v, m, sizeof(m)), 1);
	assert_int_equal(field_of("CESR", "es1", v, m, sizeof(m)), 0x17);
	assert_string_equal(m, "instructions executed in the V pipe (paired)");
	/* USER_CODE + COUNT_CYCLES + PM0_OVERFLOWS: the AGI stall clocks of user code */
	v = 0x1f | 0x80 | 0x100 | 0x200;
	assert_int_equal(field_of("CESR", "cc0", v, m, sizeof(m)), 1);
	assert_string_equal(m, "counts clocks");
	assert_int_equal(field_of("CESR", "pc0", v, m, sizeof(m)), 1);
	assert_string_equal(m, "PM0 shows overflows");
	/* seed 003: DCU_MISS_OUTSTANDING for user mode, counting, on PerfEvtSel0 of a P6 */
	v = 0x48 | 0x10000 | 0x400000;
	assert_int_equal(v, 0x410048);
	{
		const struct tacho_msr *sel;
		uint32_t a;
		assert_int_equal(tacho_msr_lookup("PerfEvtSel0", &pentium2, &sel, &a, NULL), 0);
		assert_ptr_equal(sel, tc_msr_by_name("P6_PERFEVTSEL0"));
		assert_int_equal(a, 0x186);
	}
	assert_int_equal(field_of("P6_PERFEVTSEL0", "event", v, m, sizeof(m)), 0x48);
	assert_string_equal(m, "DCU_MISS_OUTSTANDING: cycles weighted by L1 data misses "
			       "outstanding");
	assert_int_equal(field_of("P6_PERFEVTSEL0", "usr", v, NULL, 0), 1);
	assert_int_equal(field_of("P6_PERFEVTSEL0", "os", v, NULL, 0), 0);
	assert_int_equal(field_of("P6_PERFEVTSEL0", "en", v, m, sizeof(m)), 1);
	assert_string_equal(m, "both counters count");
}

/* --- finding registers --- */

static const struct {
	int line;
	const char *spec;
	const struct tacho_msr_cpu *cpu;
	int err;
	const char *name;          /* NULL: an address the table does not know */
	uint32_t address;
	const char *message;       /* in the diagnostic */
	unsigned column;
} lookups[] = {
	{ __LINE__, "TSC", &skylake, 0, "IA32_TIME_STAMP_COUNTER", 0x10, NULL, 0 },
	{ __LINE__, "tsc", NULL, 0, "IA32_TIME_STAMP_COUNTER", 0x10, NULL, 0 },
	{ __LINE__, "ia32_perfevtsel3", NULL, 0, "IA32_PERFEVTSEL3", 0x189, NULL, 0 },
	{ __LINE__, "0x186", &skylake, 0, "IA32_PERFEVTSEL0", 0x186, NULL, 0 },
	{ __LINE__, "186h", &pentium2, 0, "P6_PERFEVTSEL0", 0x186, NULL, 0 },
	{ __LINE__, "186H", NULL, 0, "IA32_PERFEVTSEL0", 0x186, NULL, 0 },
	{ __LINE__, "PerfEvtSel0", &pentium2, 0, "P6_PERFEVTSEL0", 0x186, NULL, 0 },
	{ __LINE__, "PerfEvtSel0", &zen3, 0, "AMD_PERFEVTSEL0", 0xc0010000, NULL, 0 },
	{ __LINE__, "PerfEvtSel0", &skylake, 0, "IA32_PERFEVTSEL0", 0x186, NULL, 0 },
	{ __LINE__, "PerfEvtSel0", NULL, 0, "IA32_PERFEVTSEL0", 0x186, NULL, 0 },
	{ __LINE__, "C001_0200h", &zen3, 0, "PERF_CTL0", 0xc0010200, NULL, 0 },
	{ __LINE__, "0xc001_020b", NULL, 0, "PERF_CTR5", 0xc001020b, NULL, 0 },
	{ __LINE__, "0xC0010000", &zen3, 0, "AMD_PERFEVTSEL0", 0xc0010000, NULL, 0 },
	{ __LINE__, "11h", &pentium, 0, "CESR", 0x11, NULL, 0 },
	{ __LINE__, "0x12", NULL, 0, "CTR0", 0x12, NULL, 0 },
	{ __LINE__, "p5_ctr1", NULL, 0, "CTR1", 0x13, NULL, 0 },
	{ __LINE__, "0x1234", &skylake, 0, NULL, 0x1234, NULL, 0 },
	{ __LINE__, "0xffffffff", NULL, 0, NULL, 0xffffffff, NULL, 0 },
	{ __LINE__, "IA32_PERFEVTSL0", &skylake, -TACHO_ENOMSR, NULL, 0,
	  "no MSR named 'IA32_PERFEVTSL0' in tacho's table (did you mean IA32_PERFEVTSEL0", 1 },
	{ __LINE__, "APREF", NULL, -TACHO_ENOMSR, NULL, 0, "(did you mean APERF", 1 },
	{ __LINE__, "no_such_thing", NULL, -TACHO_ENOMSR, NULL, 0,
	  "no MSR named 'no_such_thing' in tacho's table", 1 },
	{ __LINE__, "186", NULL, -TACHO_EPARSE, NULL, 0, "could be decimal or hex: write an "
	  "address as 0x186 or 186h", 1 },
	{ __LINE__, "0x", NULL, -TACHO_EPARSE, NULL, 0, "no hex digits", 3 },
	{ __LINE__, "0x18g", NULL, -TACHO_EPARSE, NULL, 0, "'g' is not a hex digit", 5 },
	{ __LINE__, "0x1_0000_0000", NULL, -TACHO_EOUTOFRANGE, NULL, 0, "above 0xffffffff", 1 },
	{ __LINE__, "", NULL, -TACHO_EPARSE, NULL, 0, "empty", 1 },
};

static void test_lookup(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(lookups); i++) {
		const struct tacho_msr *m = (const struct tacho_msr *)&m;
		struct tacho_diag d = { .sz = sizeof(d) };
		uint32_t addr = 7;
		int err;

		err = tacho_msr_lookup(lookups[i].spec, lookups[i].cpu, &m, &addr, &d);
		if (err != lookups[i].err)
			fail_msg("line %d: '%s' gives %d, want %d (%s)", lookups[i].line,
				 lookups[i].spec, err, lookups[i].err, d.message);
		if (err) {
			if (!strstr(d.message, lookups[i].message) || d.column != lookups[i].column)
				fail_msg("line %d: '%s': \"%s\" at column %u", lookups[i].line,
					 lookups[i].spec, d.message, d.column);
			assert_int_equal(addr, 7);
			assert_int_equal(d.hint, err == -TACHO_ENOMSR ? TACHO_HINT_MSRS : TACHO_HINT_NONE);
			continue;
		}
		if (addr != lookups[i].address || (lookups[i].name ? !m || strcmp(m->name,
		    lookups[i].name) : m != NULL))
			fail_msg("line %d: '%s' gives %s at 0x%x, want %s at 0x%x", lookups[i].line,
				 lookups[i].spec, m ? m->name : "(none)", addr,
				 lookups[i].name ? lookups[i].name : "(none)", lookups[i].address);
	}
	assert_int_equal(tacho_msr_lookup(NULL, NULL, NULL, NULL, NULL), -EINVAL);
}

/* --- where registers exist --- */

static const struct {
	int line;
	const char *name;
	const struct tacho_msr_cpu *cpu;
	bool applies;
} where_rows[] = {
	{ __LINE__, "IA32_TIME_STAMP_COUNTER", &pentium, true },
	{ __LINE__, "IA32_TIME_STAMP_COUNTER", &zen3, true },
	{ __LINE__, "IA32_TIME_STAMP_COUNTER", &via, false },
	{ __LINE__, "IA32_TIME_STAMP_COUNTER", &nobody, false },
	{ __LINE__, "CESR", &pentium, true },
	{ __LINE__, "CESR", &pentium2, false },
	{ __LINE__, "CESR", &skylake, false },
	{ __LINE__, "P6_PERFEVTSEL0", &pentium2, true },
	{ __LINE__, "P6_PERFEVTSEL0", &skylake, false },
	{ __LINE__, "IA32_PERFEVTSEL0", &skylake, true },
	{ __LINE__, "IA32_PERFEVTSEL0", &pentium2, false },
	{ __LINE__, "IA32_PERFEVTSEL0", &pentium4, false },
	{ __LINE__, "IA32_PERFEVTSEL0", &zen3, false },
	{ __LINE__, "IA32_APERF", &zen3, true },
	{ __LINE__, "IA32_APERF", &k8, false },
	{ __LINE__, "AMD_PERFEVTSEL0", &k8, true },
	{ __LINE__, "AMD_PERFEVTSEL0", &hygon, true },
	{ __LINE__, "PERF_CTL0", &k8, false },
	{ __LINE__, "PERF_CTL5", &zen3, true },
	{ __LINE__, "AMD_PSTATE_DEF0", &zen3, true },
	{ __LINE__, "AMD_PSTATE_DEF0", &zen4, false },
	{ __LINE__, "AMD_PSTATE_DEF0", &hygon, true },
	{ __LINE__, "AMD_RAPL_POWER_UNIT", &k8, false },
	{ __LINE__, "MSR_RAPL_POWER_UNIT", &skylake, true },
	{ __LINE__, "MSR_RAPL_POWER_UNIT", &zen3, false },
	{ __LINE__, "HWCR", &skylake, false },
};

static void test_applies(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(where_rows); i++) {
		const struct tacho_msr *m = tc_msr_by_name(where_rows[i].name);
		char who[160];

		assert_non_null(m);
		tacho_msr_cpu_format(where_rows[i].cpu, who, sizeof(who));
		if (tacho_msr_applies(m, where_rows[i].cpu) != where_rows[i].applies)
			fail_msg("line %d: %s %s on %s", where_rows[i].line, m->name,
				 where_rows[i].applies ? "should apply" : "should not apply", who);
	}
	assert_false(tacho_msr_applies(NULL, &skylake));
	assert_false(tacho_msr_applies(tc_msr_by_name("CESR"), NULL));
}

/* --- FIELD=VAL --- */

static const struct {
	int line;
	const char *reg;            /* NULL: an address without an entry */
	uint64_t base;
	const char *text;
	int err;
	uint64_t out;
	unsigned column;
	const char *message;
} assigns[] = {
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "event=0xc0,usr=1,os=1,en=1", 0, 0x4300c0, 0, NULL },
	{ __LINE__, "IA32_PERFEVTSEL0", 0x4300c0, "umask=0x41,event=0x2e", 0, 0x43412e, 0, NULL },
	{ __LINE__, "IA32_PERFEVTSEL0", 0x4300c0, "en=0", 0, 0x0300c0, 0, NULL },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "CMASK=255", 0, 0xff000000, 0, NULL },
	{ __LINE__, "IA32_PERFEVTSEL0", 123, "0x4300c0", 0, 0x4300c0, 0, NULL },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "4391104", 0, 0x4300c0, 0, NULL },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "umask=0x1ff", -TACHO_EOUTOFRANGE, 0, 7,
	  "umask=0x1ff does not fit in 8 bits (15:8; at most 0xff)" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "en=2", -TACHO_EOUTOFRANGE, 0, 4,
	  "en=2 does not fit in 1 bit (22; at most 0x1)" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "umsk=1", -TACHO_EPARSE, 0, 1,
	  "IA32_PERFEVTSEL0 has no field 'umsk' (did you mean umask?)" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "usr=1,usr=0", -TACHO_EPARSE, 0, 7,
	  "field 'usr' is given twice" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "usr=1,", -TACHO_EPARSE, 0, 7, "after ','" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "usr=", -TACHO_EPARSE, 0, 5, "no value for 'usr'" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "=1", -TACHO_EPARSE, 0, 1, "expected FIELD=VALUE" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "usr=x", -TACHO_EPARSE, 0, 5, "'x' is not a number" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "usr=1,os", -TACHO_EPARSE, 0, 9,
	  "expected FIELD=VALUE" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "0x100000000000000", -TACHO_EOUTOFRANGE, 0, 1,
	  "sets bits IA32_PERFEVTSEL0 reserves (mask 0x100000000000000)" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "-1", -TACHO_EPARSE, 0, 1, "is not a number" },
	{ __LINE__, "IA32_PERFEVTSEL0", 0, "", -TACHO_EPARSE, 0, 1, "no value" },
	/* CESR: the P5's two halves */
	{ __LINE__, "CESR", 0, "es0=3,usr0=1", 0, 0x83, 0, NULL },
	{ __LINE__, "CESR", 0, "es1=0x16,os1=1,cc1=1", 0, 0x01560000, 0, NULL },
	{ __LINE__, "CESR", 0, "es0=64", -TACHO_EOUTOFRANGE, 0, 5, "es0=64 does not fit in 6 bits" },
	/* a register that reserves nothing takes any value */
	{ __LINE__, "IA32_MISC_ENABLE", 0, "0xffffffffffffffff", 0, ~0ull, 0, NULL },
	{ __LINE__, "IA32_TIME_STAMP_COUNTER", 0, "tsc=0xffffffffffffffff", 0, ~0ull, 0, NULL },
	/* an address the table does not know: whole values only */
	{ __LINE__, NULL, 0, "0x10", 0, 0x10, 0, NULL },
	{ __LINE__, NULL, 0, "x=1", -TACHO_EPARSE, 0, 1, "needs a register tacho knows" },
};

static void test_assign(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(assigns); i++) {
		const struct tacho_msr *m = assigns[i].reg ? tc_msr_by_name(assigns[i].reg) : NULL;
		struct tacho_diag d = { .sz = sizeof(d) };
		uint64_t out = 0x5555;
		int err;

		err = tacho_msr_assign(m, assigns[i].base, assigns[i].text, &out, &d);
		if (err != assigns[i].err)
			fail_msg("line %d: '%s' gives %d, want %d (%s)", assigns[i].line,
				 assigns[i].text, err, assigns[i].err, d.message);
		if (err) {
			if (!strstr(d.message, assigns[i].message) || d.column != assigns[i].column)
				fail_msg("line %d: '%s': \"%s\" at column %u, want \"%s\" at %u",
					 assigns[i].line, assigns[i].text, d.message, d.column,
					 assigns[i].message, assigns[i].column);
			assert_int_equal(out, 0x5555);
			assert_string_equal(d.source, assigns[i].text);
		} else if (out != assigns[i].out) {
			fail_msg("line %d: '%s' gives 0x%llx, want 0x%llx", assigns[i].line,
				 assigns[i].text, (unsigned long long)out,
				 (unsigned long long)assigns[i].out);
		}
	}
	assert_int_equal(tacho_msr_assign(NULL, 0, NULL, NULL, NULL), -EINVAL);
}

/* --- describing, for callers built against other headers --- */

static void test_describe(void **state)
{
	const struct tacho_msr *m = tc_msr_by_name("IA32_PERFEVTSEL0");
	struct tacho_msr_info info;
	struct tacho_msr_field_info fi = { .sz = sizeof(fi) };
	struct tacho_msr_field_value fv;
	(void)state;

	memset(&info, 0xaa, sizeof(info));
	info.sz = sizeof(info);
	assert_int_equal(tacho_msr_describe(m, &info), 0);
	assert_string_equal(info.name, "IA32_PERFEVTSEL0");
	assert_string_equal(info.aliases, "PerfEvtSel0");
	assert_int_equal(info.address, 0x186);
	assert_int_equal(info.scope, TACHO_MSR_SCOPE_THREAD);
	assert_int_equal(info.access, TACHO_MSR_RW);
	assert_true(info.writable);
	assert_string_equal(info.not_writable, "");
	assert_int_equal(info.nfields, 15);
	/* bits 34, 35, 37-39 and 48-63 are the manual's reserved ones */
	assert_int_equal(info.reserved, 0xffff00ec00000000ull);
	assert_int_equal(info.undecoded, 0);
	/* a struct shorter than the first version is refused and left as it was */
	memset(&info, 0xaa, sizeof(info));
	info.sz = offsetof(struct tacho_msr_info, undecoded);
	assert_int_equal(tacho_msr_describe(m, &info), -EINVAL);
	assert_int_equal(info.address, 0xaaaaaaaa);
	info.sz = 0;
	assert_int_equal(tacho_msr_describe(m, &info), -EINVAL);
	/* a newer header's larger struct gets this version's fields, its own untouched */
	{
		struct {
			struct tacho_msr_info v1;
			uint64_t later;
		} newer;

		memset(&newer, 0xaa, sizeof(newer));
		newer.v1.sz = sizeof(newer);
		assert_int_equal(tacho_msr_describe(m, &newer.v1), 0);
		assert_int_equal(newer.v1.sz, sizeof(newer));
		assert_int_equal(newer.v1.address, 0x186);
		assert_int_equal(newer.v1.undecoded, 0);
		assert_int_equal(newer.later, 0xaaaaaaaaaaaaaaaaull);
	}
	/* the manual's read-write register tacho refuses says why */
	info.sz = sizeof(info);
	assert_int_equal(tacho_msr_describe(tc_msr_by_name("IA32_TIME_STAMP_COUNTER"), &info), 0);
	assert_false(info.writable);
	assert_non_null(strstr(info.not_writable, "clocksource"));
	assert_int_equal(info.reserved, 0);
	assert_int_equal(tacho_msr_describe(tc_msr_by_name("IA32_MISC_ENABLE"), &info), 0);
	assert_int_equal(info.undecoded & 0xff, 0x76);   /* bits 1, 2, 4, 5, 6 */

	assert_int_equal(tacho_msr_field_describe(m, 1, &fi), 0);
	assert_string_equal(fi.name, "umask");
	assert_int_equal(fi.lo, 8);
	assert_int_equal(fi.hi, 15);
	assert_int_equal(tacho_msr_field_describe(m, 15, &fi), -EINVAL);
	fi.sz = offsetof(struct tacho_msr_field_info, desc);
	fi.lo = 99;
	assert_int_equal(tacho_msr_field_describe(m, 1, &fi), -EINVAL);
	assert_int_equal(fi.lo, 99);
	fv.sz = sizeof(fv);
	assert_int_equal(tacho_msr_decode_field(m, 1, 0x4300c0, &fv), 0);
	assert_int_equal(fv.value, 0);
	assert_int_equal(tacho_msr_decode_field(m, 15, 0, &fv), -EINVAL);
	fv.sz = offsetof(struct tacho_msr_field_value, meaning);
	fv.value = 77;
	assert_int_equal(tacho_msr_decode_field(m, 0, 0x4300c0, &fv), -EINVAL);
	assert_int_equal(fv.value, 77);
	assert_int_equal(tacho_msr_decode_field(NULL, 0, 0, &fv), -EINVAL);
	assert_string_equal(tacho_msr_scope_name(TACHO_MSR_SCOPE_PACKAGE), "package");
	assert_string_equal(tacho_msr_scope_name(TACHO_MSR_SCOPE_COUNT), "unknown");
	assert_string_equal(tacho_msr_access_name(TACHO_MSR_RO), "read-only");
	assert_string_equal(tacho_msr_access_name(TACHO_MSR_ACCESS_COUNT), "unknown");
}

/* The processor of a CPUID dump: the seam the command's --cpuid uses. */
static void test_cpu_of_dump(void **state)
{
	static const struct {
		const char *file;
		enum tacho_cpu_vendor vendor;
		unsigned family, model;
	} dumps[] = {
		{ "tests/data/msr/skylake-x.cpuid", TACHO_VENDOR_INTEL, 6, 0x55 },
		{ "tests/data/msr/zen3.cpuid", TACHO_VENDOR_AMD, 0x19, 1 },
		{ "tests/data/msr/pentium.cpuid", TACHO_VENDOR_INTEL, 5, 2 },
		{ "tests/data/msr/pentium-ii.cpuid", TACHO_VENDOR_INTEL, 6, 5 },
		{ "tests/data/cpuid/kvm-epyc-1cpu.cpuid-r1", TACHO_VENDOR_AMD, 0x19, 0x11 },
	};
	char buf[160];
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(dumps); i++) {
		struct tacho_cpuid_dump *d;
		struct tacho_msr_cpu cpu;

		assert_int_equal(tacho_cpuid_dump_load(th_path(dumps[i].file), &d, NULL), 0);
		assert_int_equal(tacho_msr_cpu_of_dump(d, &cpu), 0);
		tacho_cpuid_dump_free(d);
		if (cpu.vendor != dumps[i].vendor || cpu.family != dumps[i].family ||
		    cpu.model != dumps[i].model)
			fail_msg("%s: vendor %d family 0x%x model 0x%x", dumps[i].file, cpu.vendor,
				 cpu.family, cpu.model);
	}
	tacho_msr_cpu_format(&zen3, buf, sizeof(buf));
	assert_string_equal(buf, "AMD family 0x19 model 0x1 (a virtual machine)");
	tacho_msr_cpu_format(&nobody, buf, sizeof(buf));
	assert_string_equal(buf, "an unknown CPU");
	assert_int_equal(tacho_msr_cpu_of_dump(NULL, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_integrity),
		cmocka_unit_test(test_decode_every_field),
		cmocka_unit_test(test_seed_pmx),
		cmocka_unit_test(test_seed_macros),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_applies),
		cmocka_unit_test(test_assign),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_cpu_of_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
