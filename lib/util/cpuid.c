/* cpuid.c - the CPUID instruction, the one place that executes it (lib/cpu's live source
 * builds on it), and the one question below lib/cpu that needs it: is this a guest of
 * a hypervisor? */
#include <string.h>
#include <unistd.h>

#include "util/util.h"

bool tc_cpuid_insn(uint32_t leaf, uint32_t subleaf, uint32_t r[4])
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("cpuid"
			 : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
			 : "a"(leaf), "c"(subleaf));
	return true;
#else
	(void)leaf;
	(void)subleaf;
	memset(r, 0, 4 * sizeof(r[0]));
	return false;
#endif
}

bool tc_hypervisor_guest(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t r[4];

	/* CPUID.1:ECX bit 31 is reserved for hypervisors to set (SDM Vol. 2A, Table 3-10:
	 * "not used"; every mainstream hypervisor, KVM, Xen HVM, Hyper-V and VMware, sets
	 * it). A plain read: this is not a timing path, and lib/cpu's dump is more than
	 * one bit needs. Leaf 1 exists on every CPU that runs x86-64 Linux. */
	tc_cpuid_insn(1, 0, r);
	return (r[2] >> 31) & 1;
#else
	return access("/sys/hypervisor/type", F_OK) == 0;
#endif
}
