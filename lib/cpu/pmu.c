/* pmu.c - performance monitoring as CPUID describes it: Intel leaf 0xA (architectural
 * performance monitoring, SDM Vol. 2A CPUID 0Ah and Vol. 3B 20.2), AMD 0x8000_0022
 * (PerfMonV2, APM Vol. 3 E.4.20) and the core counter count of older AMD parts
 * (APM Vol. 2 13.2: four PerfCtr, six with PerfCtrExtCore, 0x8000_0001 ECX[23]). */
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"

void tc_cpu_pmu(const struct tacho_cpuid_dump *d, unsigned cpu, const struct tacho_cpu_info *info,
		struct tacho_cpu_pmu *p)
{
	struct tacho_cpuid_regs r, rx;
	bool amd = info->vendor == TACHO_VENDOR_AMD || info->vendor == TACHO_VENDOR_HYGON;

	memset(p, 0, sizeof(*p));
	if (!amd && info->max_leaf >= 0xa && tc_query_leaf(d, cpu, 0xa, 0, &r)) {
		p->version = tc_bits(r.eax, 7, 0);
		if (p->version) {
			p->gp_counters = tc_bits(r.eax, 15, 8);
			p->gp_width = tc_bits(r.eax, 23, 16);
			p->arch_events_len = tc_bits(r.eax, 31, 24);
			/* EBX bit i = 1 means architectural event i is NOT available; only
			 * the first arch_events_len bits mean anything. */
			if (p->arch_events_len)
				p->arch_events = ~r.ebx & (uint32_t)((1ull << (p->arch_events_len > 32 ? 32 : p->arch_events_len)) - 1);
			/* EDX describes fixed counters from version 2 on. */
			if (p->version >= 2) {
				p->fixed_counters = tc_bits(r.edx, 4, 0);
				p->fixed_width = tc_bits(r.edx, 12, 5);
				p->any_thread_deprecated = tc_bits(r.edx, 15, 15);
			}
			/* Version 5: ECX is a bitmap of fixed counters; counter i exists if
			 * ECX[i] is set or i < EDX[4:0] (SDM CPUID 0Ah). */
			if (p->version >= 5) {
				p->fixed_mask = r.ecx;
				for (unsigned i = 0; i < p->fixed_counters && i < 32; i++)
					p->fixed_mask |= 1u << i;
			} else if (p->fixed_counters) {
				p->fixed_mask = (uint32_t)((1ull << p->fixed_counters) - 1);
			}
		}
	}
	if (!amd)
		return;
	tc_query_leaf(d, cpu, 0x80000001u, 0, &rx);
	p->amd_nb_ext = tc_bits(rx.ecx, 24, 24);
	p->amd_l2i_ext = tc_bits(rx.ecx, 28, 28);
	if (tc_query_leaf(d, cpu, 0x80000022u, 0, &r) && tc_bits(r.eax, 0, 0)) {
		p->amd_perfmon_v2 = true;
		p->amd_lbr_v2 = tc_bits(r.eax, 1, 1);
		p->gp_counters = tc_bits(r.ebx, 3, 0);
		p->amd_lbr_stack = tc_bits(r.ebx, 9, 4);
		p->amd_nb_counters = tc_bits(r.ebx, 15, 10);
		p->amd_umc_counters = tc_bits(r.ebx, 21, 16);
	} else if (tc_bits(rx.ecx, 23, 23)) {
		/* PerfCtrExtCore (family 15h on): six core counters */
		p->gp_counters = 6;
	} else if (info->family >= 6 && !info->hypervisor_bit) {
		/* every AMD part since the K7 has four core counters, without a CPUID bit
		 * to say so (APM Vol. 2 13.2). A hypervisor may offer none of them, and
		 * CPUID cannot tell: then leave the count unknown (0). */
		p->gp_counters = 4;
	}
	/* AMD's counters are 48 bits wide (APM Vol. 2 13.2.1); CPUID does not say. */
	if (p->gp_counters)
		p->gp_width = 48;
}
