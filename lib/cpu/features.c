/* features.c - the named CPUID feature flags: one const table (name, leaf, subleaf,
 * register, bit), names as Linux prints them in /proc/cpuinfo where it has one.
 * Sources: Intel SDM Vol. 2A, CPUID (Tables 3-8 to 3-11 and leaf 7/0xD/0x14 pages);
 * AMD APM Vol. 3, Appendix E (CPUID Fn8000_0001, _0007, _0008, _000A, _001F, _0021,
 * _0022); Linux arch/x86/include/asm/cpufeatures.h for the names. */
#include <errno.h>
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"

struct tc_feature {
	const char *name;
	uint32_t leaf, subleaf;
	char reg;            /* 'a' 'b' 'c' 'd' */
	uint8_t bit;
};

#define F(n, l, s, r, b) { .name = n, .leaf = l, .subleaf = s, .reg = r, .bit = b }

static const struct tc_feature features[] = {
	/* CPUID.1:EDX (SDM Table 3-11) */
	F("fpu", 1, 0, 'd', 0), F("vme", 1, 0, 'd', 1), F("de", 1, 0, 'd', 2),
	F("pse", 1, 0, 'd', 3), F("tsc", 1, 0, 'd', 4), F("msr", 1, 0, 'd', 5),
	F("pae", 1, 0, 'd', 6), F("mce", 1, 0, 'd', 7), F("cx8", 1, 0, 'd', 8),
	F("apic", 1, 0, 'd', 9), F("sep", 1, 0, 'd', 11), F("mtrr", 1, 0, 'd', 12),
	F("pge", 1, 0, 'd', 13), F("mca", 1, 0, 'd', 14), F("cmov", 1, 0, 'd', 15),
	F("pat", 1, 0, 'd', 16), F("pse36", 1, 0, 'd', 17), F("pn", 1, 0, 'd', 18),
	F("clflush", 1, 0, 'd', 19), F("dts", 1, 0, 'd', 21), F("acpi", 1, 0, 'd', 22),
	F("mmx", 1, 0, 'd', 23), F("fxsr", 1, 0, 'd', 24), F("sse", 1, 0, 'd', 25),
	F("sse2", 1, 0, 'd', 26), F("ss", 1, 0, 'd', 27), F("ht", 1, 0, 'd', 28),
	F("tm", 1, 0, 'd', 29), F("ia64", 1, 0, 'd', 30), F("pbe", 1, 0, 'd', 31),
	/* CPUID.1:ECX (SDM Table 3-10) */
	F("pni", 1, 0, 'c', 0), F("pclmulqdq", 1, 0, 'c', 1), F("dtes64", 1, 0, 'c', 2),
	F("monitor", 1, 0, 'c', 3), F("ds_cpl", 1, 0, 'c', 4), F("vmx", 1, 0, 'c', 5),
	F("smx", 1, 0, 'c', 6), F("est", 1, 0, 'c', 7), F("tm2", 1, 0, 'c', 8),
	F("ssse3", 1, 0, 'c', 9), F("cid", 1, 0, 'c', 10), F("sdbg", 1, 0, 'c', 11),
	F("fma", 1, 0, 'c', 12), F("cx16", 1, 0, 'c', 13), F("xtpr", 1, 0, 'c', 14),
	F("pdcm", 1, 0, 'c', 15), F("pcid", 1, 0, 'c', 17), F("dca", 1, 0, 'c', 18),
	F("sse4_1", 1, 0, 'c', 19), F("sse4_2", 1, 0, 'c', 20), F("x2apic", 1, 0, 'c', 21),
	F("movbe", 1, 0, 'c', 22), F("popcnt", 1, 0, 'c', 23),
	F("tsc_deadline_timer", 1, 0, 'c', 24), F("aes", 1, 0, 'c', 25),
	F("xsave", 1, 0, 'c', 26), F("osxsave", 1, 0, 'c', 27), F("avx", 1, 0, 'c', 28),
	F("f16c", 1, 0, 'c', 29), F("rdrand", 1, 0, 'c', 30), F("hypervisor", 1, 0, 'c', 31),
	/* CPUID.6 thermal and power management */
	F("dtherm", 6, 0, 'a', 0), F("ida", 6, 0, 'a', 1), F("arat", 6, 0, 'a', 2),
	F("pln", 6, 0, 'a', 4), F("pts", 6, 0, 'a', 6), F("hwp", 6, 0, 'a', 7),
	F("hwp_notify", 6, 0, 'a', 8), F("hwp_act_window", 6, 0, 'a', 9),
	F("hwp_epp", 6, 0, 'a', 10), F("hwp_pkg_req", 6, 0, 'a', 11), F("hfi", 6, 0, 'a', 19),
	F("aperfmperf", 6, 0, 'c', 0), F("epb", 6, 0, 'c', 3),
	/* CPUID.(7,0):EBX */
	F("fsgsbase", 7, 0, 'b', 0), F("tsc_adjust", 7, 0, 'b', 1), F("sgx", 7, 0, 'b', 2),
	F("bmi1", 7, 0, 'b', 3), F("hle", 7, 0, 'b', 4), F("avx2", 7, 0, 'b', 5),
	F("fdp_excptn_only", 7, 0, 'b', 6), F("smep", 7, 0, 'b', 7), F("bmi2", 7, 0, 'b', 8),
	F("erms", 7, 0, 'b', 9), F("invpcid", 7, 0, 'b', 10), F("rtm", 7, 0, 'b', 11),
	F("cqm", 7, 0, 'b', 12), F("zero_fcs_fds", 7, 0, 'b', 13), F("mpx", 7, 0, 'b', 14),
	F("rdt_a", 7, 0, 'b', 15), F("avx512f", 7, 0, 'b', 16), F("avx512dq", 7, 0, 'b', 17),
	F("rdseed", 7, 0, 'b', 18), F("adx", 7, 0, 'b', 19), F("smap", 7, 0, 'b', 20),
	F("avx512ifma", 7, 0, 'b', 21), F("pcommit", 7, 0, 'b', 22),
	F("clflushopt", 7, 0, 'b', 23), F("clwb", 7, 0, 'b', 24), F("intel_pt", 7, 0, 'b', 25),
	F("avx512pf", 7, 0, 'b', 26), F("avx512er", 7, 0, 'b', 27), F("avx512cd", 7, 0, 'b', 28),
	F("sha_ni", 7, 0, 'b', 29), F("avx512bw", 7, 0, 'b', 30), F("avx512vl", 7, 0, 'b', 31),
	/* CPUID.(7,0):ECX */
	F("prefetchwt1", 7, 0, 'c', 0), F("avx512vbmi", 7, 0, 'c', 1), F("umip", 7, 0, 'c', 2),
	F("pku", 7, 0, 'c', 3), F("ospke", 7, 0, 'c', 4), F("waitpkg", 7, 0, 'c', 5),
	F("avx512_vbmi2", 7, 0, 'c', 6), F("shstk", 7, 0, 'c', 7), F("gfni", 7, 0, 'c', 8),
	F("vaes", 7, 0, 'c', 9), F("vpclmulqdq", 7, 0, 'c', 10), F("avx512_vnni", 7, 0, 'c', 11),
	F("avx512_bitalg", 7, 0, 'c', 12), F("tme", 7, 0, 'c', 13),
	F("avx512_vpopcntdq", 7, 0, 'c', 14), F("la57", 7, 0, 'c', 16), F("rdpid", 7, 0, 'c', 22),
	F("keylocker", 7, 0, 'c', 23), F("bus_lock_detect", 7, 0, 'c', 24),
	F("cldemote", 7, 0, 'c', 25), F("movdiri", 7, 0, 'c', 27), F("movdir64b", 7, 0, 'c', 28),
	F("enqcmd", 7, 0, 'c', 29), F("sgx_lc", 7, 0, 'c', 30), F("pks", 7, 0, 'c', 31),
	/* CPUID.(7,0):EDX */
	F("sgx_keys", 7, 0, 'd', 1), F("avx512_4vnniw", 7, 0, 'd', 2),
	F("avx512_4fmaps", 7, 0, 'd', 3), F("fsrm", 7, 0, 'd', 4), F("uintr", 7, 0, 'd', 5),
	F("avx512_vp2intersect", 7, 0, 'd', 8), F("srbds_ctrl", 7, 0, 'd', 9),
	F("md_clear", 7, 0, 'd', 10), F("rtm_always_abort", 7, 0, 'd', 11),
	F("tsx_force_abort", 7, 0, 'd', 13), F("serialize", 7, 0, 'd', 14),
	F("hybrid_cpu", 7, 0, 'd', 15), F("tsxldtrk", 7, 0, 'd', 16), F("pconfig", 7, 0, 'd', 18),
	F("arch_lbr", 7, 0, 'd', 19), F("ibt", 7, 0, 'd', 20), F("amx_bf16", 7, 0, 'd', 22),
	F("avx512_fp16", 7, 0, 'd', 23), F("amx_tile", 7, 0, 'd', 24),
	F("amx_int8", 7, 0, 'd', 25), F("spec_ctrl", 7, 0, 'd', 26),
	F("intel_stibp", 7, 0, 'd', 27), F("flush_l1d", 7, 0, 'd', 28),
	F("arch_capabilities", 7, 0, 'd', 29), F("core_capabilities", 7, 0, 'd', 30),
	F("spec_ctrl_ssbd", 7, 0, 'd', 31),
	/* CPUID.(7,1) */
	F("sha512", 7, 1, 'a', 0), F("sm3", 7, 1, 'a', 1), F("sm4", 7, 1, 'a', 2),
	F("rao_int", 7, 1, 'a', 3), F("avx_vnni", 7, 1, 'a', 4), F("avx512_bf16", 7, 1, 'a', 5),
	F("lass", 7, 1, 'a', 6), F("cmpccxadd", 7, 1, 'a', 7), F("arch_perfmon_ext", 7, 1, 'a', 8),
	F("fzrm", 7, 1, 'a', 10), F("fsrs", 7, 1, 'a', 11), F("fsrc", 7, 1, 'a', 12),
	F("fred", 7, 1, 'a', 17), F("lkgs", 7, 1, 'a', 18), F("wrmsrns", 7, 1, 'a', 19),
	F("amx_fp16", 7, 1, 'a', 21), F("hreset", 7, 1, 'a', 22), F("avx_ifma", 7, 1, 'a', 23),
	F("lam", 7, 1, 'a', 26), F("msrlist", 7, 1, 'a', 27),
	F("ppin", 7, 1, 'b', 0),
	F("avx_vnni_int8", 7, 1, 'd', 4), F("avx_ne_convert", 7, 1, 'd', 5),
	F("amx_complex", 7, 1, 'd', 8), F("avx_vnni_int16", 7, 1, 'd', 10),
	F("prefetchi", 7, 1, 'd', 14), F("user_msr", 7, 1, 'd', 15), F("avx10", 7, 1, 'd', 19),
	F("apx_f", 7, 1, 'd', 21),
	/* CPUID.(7,2):EDX */
	F("psfd", 7, 2, 'd', 0), F("ipred_ctrl", 7, 2, 'd', 1), F("rrsba_ctrl", 7, 2, 'd', 2),
	F("ddpd_u", 7, 2, 'd', 3), F("bhi_ctrl", 7, 2, 'd', 4), F("mcdt_no", 7, 2, 'd', 5),
	/* CPUID.(0xD,1):EAX xsave extensions */
	F("xsaveopt", 0xd, 1, 'a', 0), F("xsavec", 0xd, 1, 'a', 1), F("xgetbv1", 0xd, 1, 'a', 2),
	F("xsaves", 0xd, 1, 'a', 3), F("xfd", 0xd, 1, 'a', 4),
	/* CPUID.(0x14,0) Intel Processor Trace capabilities (Linux keeps these in
	 * /sys/bus/event_source/devices/intel_pt/caps; the names follow those) */
	F("pt_cr3_filtering", 0x14, 0, 'b', 0), F("pt_psb_cyc", 0x14, 0, 'b', 1),
	F("pt_ip_filtering", 0x14, 0, 'b', 2), F("pt_mtc", 0x14, 0, 'b', 3),
	F("pt_ptwrite", 0x14, 0, 'b', 4), F("pt_power_event_trace", 0x14, 0, 'b', 5),
	F("pt_event_trace", 0x14, 0, 'b', 7), F("pt_tnt_disable", 0x14, 0, 'b', 8),
	F("pt_topa_output", 0x14, 0, 'c', 0), F("pt_topa_multiple_entries", 0x14, 0, 'c', 1),
	F("pt_single_range_output", 0x14, 0, 'c', 2), F("pt_output_subsys", 0x14, 0, 'c', 3),
	F("pt_payloads_lip", 0x14, 0, 'c', 31),
	/* CPUID.8000_0001h:ECX (AMD APM Vol. 3 E.4.2; Intel sets lahf_lm, abm, 3dnowprefetch) */
	F("lahf_lm", 0x80000001, 0, 'c', 0), F("cmp_legacy", 0x80000001, 0, 'c', 1),
	F("svm", 0x80000001, 0, 'c', 2), F("extapic", 0x80000001, 0, 'c', 3),
	F("cr8_legacy", 0x80000001, 0, 'c', 4), F("abm", 0x80000001, 0, 'c', 5),
	F("sse4a", 0x80000001, 0, 'c', 6), F("misalignsse", 0x80000001, 0, 'c', 7),
	F("3dnowprefetch", 0x80000001, 0, 'c', 8), F("osvw", 0x80000001, 0, 'c', 9),
	F("ibs", 0x80000001, 0, 'c', 10), F("xop", 0x80000001, 0, 'c', 11),
	F("skinit", 0x80000001, 0, 'c', 12), F("wdt", 0x80000001, 0, 'c', 13),
	F("lwp", 0x80000001, 0, 'c', 15), F("fma4", 0x80000001, 0, 'c', 16),
	F("tce", 0x80000001, 0, 'c', 17), F("nodeid_msr", 0x80000001, 0, 'c', 19),
	F("tbm", 0x80000001, 0, 'c', 21), F("topoext", 0x80000001, 0, 'c', 22),
	F("perfctr_core", 0x80000001, 0, 'c', 23), F("perfctr_nb", 0x80000001, 0, 'c', 24),
	F("bpext", 0x80000001, 0, 'c', 26), F("ptsc", 0x80000001, 0, 'c', 27),
	F("perfctr_llc", 0x80000001, 0, 'c', 28), F("mwaitx", 0x80000001, 0, 'c', 29),
	/* CPUID.8000_0001h:EDX, the bits that do not repeat leaf 1 */
	F("syscall", 0x80000001, 0, 'd', 11), F("mp", 0x80000001, 0, 'd', 19),
	F("nx", 0x80000001, 0, 'd', 20), F("mmxext", 0x80000001, 0, 'd', 22),
	F("fxsr_opt", 0x80000001, 0, 'd', 25), F("pdpe1gb", 0x80000001, 0, 'd', 26),
	F("rdtscp", 0x80000001, 0, 'd', 27), F("lm", 0x80000001, 0, 'd', 29),
	F("3dnowext", 0x80000001, 0, 'd', 30), F("3dnow", 0x80000001, 0, 'd', 31),
	/* CPUID.8000_0007h RAS and advanced power management */
	F("overflow_recov", 0x80000007, 0, 'b', 0), F("succor", 0x80000007, 0, 'b', 1),
	F("smca", 0x80000007, 0, 'b', 3),
	F("ts", 0x80000007, 0, 'd', 0), F("fid", 0x80000007, 0, 'd', 1),
	F("vid", 0x80000007, 0, 'd', 2), F("ttp", 0x80000007, 0, 'd', 3),
	F("tm_amd", 0x80000007, 0, 'd', 4), F("stc", 0x80000007, 0, 'd', 5),
	F("100mhzsteps", 0x80000007, 0, 'd', 6), F("hwpstate", 0x80000007, 0, 'd', 7),
	/* invariant TSC: Linux derives constant_tsc and nonstop_tsc from this bit */
	F("constant_tsc", 0x80000007, 0, 'd', 8), F("cpb", 0x80000007, 0, 'd', 9),
	F("eff_freq_ro", 0x80000007, 0, 'd', 10), F("proc_feedback", 0x80000007, 0, 'd', 11),
	F("acc_power", 0x80000007, 0, 'd', 12),
	/* CPUID.8000_0008h:EBX */
	F("clzero", 0x80000008, 0, 'b', 0), F("irperf", 0x80000008, 0, 'b', 1),
	F("xsaveerptr", 0x80000008, 0, 'b', 2), F("rdpru", 0x80000008, 0, 'b', 4),
	F("wbnoinvd", 0x80000008, 0, 'b', 9), F("amd_ibpb", 0x80000008, 0, 'b', 12),
	F("amd_ibrs", 0x80000008, 0, 'b', 14), F("amd_stibp", 0x80000008, 0, 'b', 15),
	F("amd_stibp_always_on", 0x80000008, 0, 'b', 17), F("amd_ppin", 0x80000008, 0, 'b', 23),
	F("amd_ssbd", 0x80000008, 0, 'b', 24), F("virt_ssbd", 0x80000008, 0, 'b', 25),
	F("amd_ssb_no", 0x80000008, 0, 'b', 26), F("cppc", 0x80000008, 0, 'b', 27),
	F("amd_psfd", 0x80000008, 0, 'b', 28), F("btc_no", 0x80000008, 0, 'b', 29),
	F("amd_ibpb_ret", 0x80000008, 0, 'b', 30),
	/* CPUID.8000_000Ah:EDX SVM features */
	F("npt", 0x8000000a, 0, 'd', 0), F("lbrv", 0x8000000a, 0, 'd', 1),
	F("svm_lock", 0x8000000a, 0, 'd', 2), F("nrip_save", 0x8000000a, 0, 'd', 3),
	F("tsc_scale", 0x8000000a, 0, 'd', 4), F("vmcb_clean", 0x8000000a, 0, 'd', 5),
	F("flushbyasid", 0x8000000a, 0, 'd', 6), F("decodeassists", 0x8000000a, 0, 'd', 7),
	F("pausefilter", 0x8000000a, 0, 'd', 10), F("pfthreshold", 0x8000000a, 0, 'd', 12),
	F("avic", 0x8000000a, 0, 'd', 13), F("v_vmsave_vmload", 0x8000000a, 0, 'd', 15),
	F("vgif", 0x8000000a, 0, 'd', 16), F("x2avic", 0x8000000a, 0, 'd', 18),
	F("v_spec_ctrl", 0x8000000a, 0, 'd', 20), F("vnmi", 0x8000000a, 0, 'd', 25),
	/* CPUID.8000_001Fh:EAX memory encryption */
	F("sme", 0x8000001f, 0, 'a', 0), F("sev", 0x8000001f, 0, 'a', 1),
	F("vm_page_flush", 0x8000001f, 0, 'a', 2), F("sev_es", 0x8000001f, 0, 'a', 3),
	F("sev_snp", 0x8000001f, 0, 'a', 4), F("v_tsc_aux", 0x8000001f, 0, 'a', 9),
	F("sme_coherent", 0x8000001f, 0, 'a', 10), F("debug_swap", 0x8000001f, 0, 'a', 14),
	/* CPUID.8000_0021h:EAX extended features 2 */
	F("no_nested_data_bp", 0x80000021, 0, 'a', 0), F("lfence_rdtsc", 0x80000021, 0, 'a', 2),
	F("null_sel_clr_base", 0x80000021, 0, 'a', 6), F("autoibrs", 0x80000021, 0, 'a', 8),
	F("no_smm_ctl_msr", 0x80000021, 0, 'a', 9), F("sbpb", 0x80000021, 0, 'a', 27),
	F("ibpb_brtype", 0x80000021, 0, 'a', 28), F("srso_no", 0x80000021, 0, 'a', 29),
	F("amd_heterogeneous_cores", 0x80000021, 0, 'a', 30),
	/* CPUID.8000_0022h:EAX performance monitoring (APM Vol. 3 E.4.20) */
	F("perfmon_v2", 0x80000022, 0, 'a', 0), F("amd_lbr_v2", 0x80000022, 0, 'a', 1),
	F("amd_lbr_pmc_freeze", 0x80000022, 0, 'a', 2),
};

_Static_assert(ARRAY_SIZE(features) <= TACHO_CPU_FEATURE_WORDS * 64,
	       "the public bitmap must hold every named flag");

static uint32_t reg_of(const struct tacho_cpuid_regs *r, char reg)
{
	switch (reg) {
	case 'a': return r->eax;
	case 'b': return r->ebx;
	case 'c': return r->ecx;
	default:  return r->edx;
	}
}

void tc_cpu_features(const struct tacho_cpuid_dump *d, unsigned cpu, uint64_t *bits)
{
	struct tacho_cpuid_regs r;
	uint32_t leaf = 0, sub = 0;
	bool have = false, cached = false;

	/* The table is grouped by leaf, so each leaf is queried once per run. */
	for (size_t i = 0; i < ARRAY_SIZE(features); i++) {
		const struct tc_feature *f = &features[i];
		if (!cached || f->leaf != leaf || f->subleaf != sub) {
			leaf = f->leaf;
			sub = f->subleaf;
			have = tc_query_leaf(d, cpu, leaf, sub, &r);
			cached = true;
		}
		if (have && (reg_of(&r, f->reg) >> f->bit & 1))
			bits[i / 64] |= 1ull << (i % 64);
	}
}

unsigned tacho_cpu_feature_count(void)
{
	return ARRAY_SIZE(features);
}

const char *tacho_cpu_feature_name(unsigned i)
{
	return i < ARRAY_SIZE(features) ? features[i].name : NULL;
}

int tacho_cpu_feature_where(unsigned i, uint32_t *leaf, uint32_t *subleaf, char *reg,
			    unsigned *bit)
{
	if (i >= ARRAY_SIZE(features))
		return -TACHO_EOUTOFRANGE;
	if (leaf)
		*leaf = features[i].leaf;
	if (subleaf)
		*subleaf = features[i].subleaf;
	if (reg)
		*reg = features[i].reg;
	if (bit)
		*bit = features[i].bit;
	return 0;
}

int tacho_cpu_feature_index(const char *name)
{
	if (!name)
		return -ENOENT;
	for (size_t i = 0; i < ARRAY_SIZE(features); i++)
		if (strcmp(features[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

bool tacho_cpu_has(const struct tacho_cpu_info *info, const char *name)
{
	int i = tacho_cpu_feature_index(name);

	if (!info || info->sz < TC_CPU_INFO_SZ_V1 || i < 0)
		return false;
	return info->features[i / 64] >> (i % 64) & 1;
}
