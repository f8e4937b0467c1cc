/* decode.c - tacho_cpu_decode: from a CPUID dump to struct tacho_cpu_info. This file
 * drives the others and decodes vendor, signature, brand string and hypervisor; the
 * rest lives beside it (features.c, cache.c, leaf2.c, tlb.c, topology.c, pmu.c,
 * tsc.c, uarch.c), and what they all share below them (info.c): calls go from here
 * down, never back. Sources: Intel SDM Vol. 2A "CPUID"; AMD APM Vol. 3 Appendix E. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/decode.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"

static const struct {
	const char *sig;
	enum tacho_cpu_vendor v;
} vendors[] = {
	{ "GenuineIntel", TACHO_VENDOR_INTEL },
	{ "AuthenticAMD", TACHO_VENDOR_AMD },
	{ "AMDisbetter!", TACHO_VENDOR_AMD },      /* early K5 samples */
	{ "HygonGenuine", TACHO_VENDOR_HYGON },
	{ "CentaurHauls", TACHO_VENDOR_VIA },
	{ "  Shanghai  ", TACHO_VENDOR_ZHAOXIN },
	{ "CyrixInstead", TACHO_VENDOR_CYRIX },
	{ "GenuineTMx86", TACHO_VENDOR_TRANSMETA },
	{ "TransmetaCPU", TACHO_VENDOR_TRANSMETA },
	{ "Geode by NSC", TACHO_VENDOR_NSC },
	{ "RiseRiseRise", TACHO_VENDOR_RISE },
	{ "SiS SiS SiS ", TACHO_VENDOR_SIS },
	{ "UMC UMC UMC ", TACHO_VENDOR_UMC },
	{ "NexGenDriven", TACHO_VENDOR_NEXGEN },
	{ "Vortex86 SoC", TACHO_VENDOR_VORTEX },
};

/* Hypervisor signatures: leaf 0x4000_0000 EBX, ECX, EDX as 12 characters. */
static const struct {
	const char sig[13];
	enum tacho_hypervisor hv;
} hypervisors[] = {
	{ "KVMKVMKVM", TACHO_HV_KVM },           /* followed by three NULs */
	{ "Linux KVM Hv", TACHO_HV_KVM },        /* KVM's Hyper-V enlightenments */
	{ "Microsoft Hv", TACHO_HV_HYPERV },
	{ "VMwareVMware", TACHO_HV_VMWARE },
	{ "XenVMMXenVMM", TACHO_HV_XEN },
	{ "bhyve bhyve ", TACHO_HV_BHYVE },
	{ "TCGTCGTCGTCG", TACHO_HV_QEMU_TCG },
	{ " lrpepyh  vr", TACHO_HV_PARALLELS },
	{ " prl hyperv ", TACHO_HV_PARALLELS },
	{ "VBoxVBoxVBox", TACHO_HV_VIRTUALBOX },
	{ "ACRNACRNACRN", TACHO_HV_ACRN },
	{ " QNXQVMBSQG ", TACHO_HV_QNX },
	{ "VirtualApple", TACHO_HV_APPLE },
	{ "Apple VZ", TACHO_HV_APPLE },
};

/* Frees what a description owns (all of it in its first version: a later owning field
 * must be freed here when a caller's sz does not reach it). */
static void info_free(struct tacho_cpu_info *info)
{
	for (unsigned i = 0; i < info->nnotes; i++)
		free(info->notes[i]);
	free(info->notes);
	free(info->cpus);
}

void tacho_cpu_info_exit(struct tacho_cpu_info *info)
{
	size_t sz;

	if (!info || info->sz < TC_CPU_INFO_SZ_V1)
		return;
	sz = info->sz < sizeof(*info) ? info->sz : sizeof(*info);
	info_free(info);
	memset((char *)info + sizeof(info->sz), 0, sz - sizeof(info->sz));
}

static void regs_str(char *out, uint32_t a, uint32_t b, uint32_t c)
{
	memcpy(out, &a, 4);
	memcpy(out + 4, &b, 4);
	memcpy(out + 8, &c, 4);
	out[12] = '\0';
}

static void decode_vendor(const struct tacho_cpuid_regs *r0, struct tacho_cpu_info *info)
{
	char raw[13];

	regs_str(raw, r0->ebx, r0->edx, r0->ecx);
	for (unsigned i = 0; i < 12; i++)
		info->vendor_string[i] = raw[i] >= 0x20 && raw[i] < 0x7f ? raw[i] : '?';
	info->vendor_string[12] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(vendors); i++)
		if (memcmp(raw, vendors[i].sig, 12) == 0)
			info->vendor = vendors[i].v;
	if (info->vendor == TACHO_VENDOR_UNKNOWN)
		tc_cpu_note(info, "vendor string \"%s\" is not one tacho knows", info->vendor_string);
}

/* Display family and model, SDM Vol. 2A, CPUID EAX=01h, "Version Information":
 * the extended family counts only when the base family is 0Fh; the extended model
 * counts when the base family is 06h or 0Fh (Intel). AMD (APM Vol. 3, CPUID
 * Fn0000_0001_EAX) and Hygon use the extended model only with base family 0Fh.
 * Others (Centaur, Zhaoxin) follow Linux's rule: family 6 and above. */
static void decode_signature(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info)
{
	struct tacho_cpuid_regs r;

	if (!tc_query_leaf(d, 0, 1, 0, &r)) {
		tc_cpu_note(info, "leaf 1 is absent: no family, model or stepping");
		return;
	}
	info->signature = r.eax;
	info->stepping = tc_bits(r.eax, 3, 0);
	info->base_model = tc_bits(r.eax, 7, 4);
	info->base_family = tc_bits(r.eax, 11, 8);
	info->cpu_type = tc_bits(r.eax, 13, 12);
	info->ext_model = tc_bits(r.eax, 19, 16);
	info->ext_family = tc_bits(r.eax, 27, 20);
	info->family = info->base_family;
	if (info->base_family == 0xf)
		info->family += info->ext_family;
	info->model = info->base_model;
	switch (info->vendor) {
	case TACHO_VENDOR_INTEL:
		if (info->base_family == 6 || info->base_family == 0xf)
			info->model |= info->ext_model << 4;
		break;
	case TACHO_VENDOR_AMD:
	case TACHO_VENDOR_HYGON:
		if (info->base_family == 0xf)
			info->model |= info->ext_model << 4;
		break;
	default:
		if (info->base_family >= 6)
			info->model |= info->ext_model << 4;
		break;
	}
	info->hypervisor_bit = r.ecx >> 31;
}

static void decode_brand(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info)
{
	char raw[49];
	struct tacho_cpuid_regs r;
	size_t n = 0, a, b;

	if (info->max_ext_leaf < 0x80000004) {
		tc_cpu_note(info, "no brand string (leaves 0x80000002-4 are absent)");
		return;
	}
	for (uint32_t l = 0x80000002; l <= 0x80000004; l++) {
		tc_query_leaf(d, 0, l, 0, &r);
		memcpy(raw + n, &r.eax, 4);
		memcpy(raw + n + 4, &r.ebx, 4);
		memcpy(raw + n + 8, &r.ecx, 4);
		memcpy(raw + n + 12, &r.edx, 4);
		n += 16;
	}
	raw[48] = '\0';
	n = strlen(raw);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)raw[i] < 0x20 || (unsigned char)raw[i] >= 0x7f)
			raw[i] = ' ';
	for (a = 0; a < n && raw[a] == ' '; a++)
		;
	for (b = n; b > a && raw[b - 1] == ' '; b--)
		;
	memcpy(info->brand, raw + a, b - a);
	info->brand[b - a] = '\0';
}

static void decode_hypervisor(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info)
{
	struct tacho_cpuid_regs r;
	char sig[13];
	bool printable = true, in_range;

	if (tacho_cpuid_query(d, 0, 0x40000000, 0, &r) == 0) {
		regs_str(sig, r.ebx, r.ecx, r.edx);
		for (unsigned i = 0; i < 12 && sig[i]; i++)
			if (sig[i] < 0x20 || sig[i] >= 0x7f)
				printable = false;
		in_range = (r.eax & 0xffffff00u) == 0x40000000u;
		for (size_t i = 0; i < ARRAY_SIZE(hypervisors); i++)
			if (strncmp(sig, hypervisors[i].sig, 12) == 0)
				info->hypervisor = hypervisors[i].hv;
		/* Bare metal answers leaf 0x4000_0000 with the highest basic leaf's data;
		 * believe the range only if its maximum or its signature make sense. */
		if (info->hypervisor == TACHO_HV_NONE && in_range && printable && sig[0])
			info->hypervisor = TACHO_HV_UNKNOWN;
		if (info->hypervisor != TACHO_HV_NONE) {
			memcpy(info->hv_signature, sig, 13);
			/* Old KVM says 0 for "up to 0x4000_0001" (Linux's kvm_cpuid_base). */
			info->hv_max_leaf = in_range ? r.eax : 0x40000001u;
		}
	}
	if (info->hypervisor_bit && info->hypervisor == TACHO_HV_NONE)
		tc_cpu_note(info, "CPUID.1:ECX[31] says this is a virtual machine, but there are "
			    "no hypervisor leaves");
	else if (!info->hypervisor_bit && info->hypervisor != TACHO_HV_NONE)
		tc_cpu_note(info, "hypervisor leaves name \"%s\" but CPUID.1:ECX[31] is clear",
			    info->hv_signature);
	if (info->hypervisor_bit)
		tc_cpu_note(info, "a hypervisor stands between this CPU and CPUID: it chooses "
			    "what CPUID reports (family and model, cache sizes, core counts and "
			    "topology may be the host's, or invented)");
}

/* Decodes into the library's struct, zeroed first; on failure it holds nothing to
 * free. */
static int decode(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info)
{
	struct tacho_cpuid_regs r0, r;
	int err;

	memset(info, 0, sizeof(*info));
	info->sz = sizeof(*info);
	if (!d || tacho_cpuid_dump_ncpus(d) == 0 || tacho_cpuid_query(d, 0, 0, 0, &r0) != 0)
		return -TACHO_ENOVALUE;
	info->max_leaf = r0.eax;
	decode_vendor(&r0, info);
	if (tacho_cpuid_query(d, 0, 0x80000000u, 0, &r) == 0 &&
	    (r.eax & 0xffff0000u) == 0x80000000u)
		info->max_ext_leaf = r.eax;
	decode_signature(d, info);
	decode_brand(d, info);
	decode_hypervisor(d, info);
	tc_cpu_features(d, 0, info->features);
	if (tc_query_leaf(d, 0, 0x80000008u, 0, &r)) {
		info->phys_addr_bits = tc_bits(r.eax, 7, 0);
		info->virt_addr_bits = tc_bits(r.eax, 15, 8);
	}
	if (tc_query_leaf(d, 0, 0xd, 0, &r)) {
		info->xsave_size = r.ecx;
		info->xcr0_supported = (uint64_t)r.edx << 32 | r.eax;
	}
	err = tc_cpu_topology(d, info);
	if (err)
		goto out_exit;
	for (unsigned k = 0; k < info->ncore_types; k++) {
		struct tacho_cpu_core_type *ct = &info->core_types[k];
		tc_cpu_caches(d, ct->first_cpu, info, ct);
		tc_cpu_tlbs(d, ct->first_cpu, info, ct);
		tc_cpu_pmu(d, ct->first_cpu, info, &ct->pmu);
	}
	tc_cpu_cache_instances(d, info);
	tc_cpu_pmu(d, 0, info, &info->pmu);
	if (info->hypervisor_bit && info->ncore_types) {
		const struct tacho_cpu_core_type *ct = &info->core_types[0];
		for (unsigned i = 0; i < ct->ncaches; i++)
			if (ct->caches[i].level >= 3)
				tc_cpu_note(info, "the L%u of %llu KiB is what the hypervisor reports: "
					    "it may be the host's whole cache, shared with other "
					    "guests, or invented; only a measurement (tacho cache) "
					    "shows what this machine gets", ct->caches[i].level,
					    (unsigned long long)(ct->caches[i].size / 1024));
		if (info->vendor == TACHO_VENDOR_AMD && !info->pmu.gp_counters)
			tc_cpu_note(info, "AMD's four legacy core counters have no CPUID bit, and "
				    "a hypervisor may not offer them: the counter count is unknown "
				    "(the kernel's PMU list tells)");
	}
	tc_cpu_tsc(d, info);
	tc_cpu_uarch(info);
	if (info->notes_dropped) {
		err = -ENOMEM;
		goto out_exit;
	}
	return 0;
out_exit:
	info_free(info);
	memset(info, 0, sizeof(*info));
	return err;
}

int tacho_cpu_decode(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *out)
{
	struct tacho_cpu_info *info;
	size_t sz;
	int err;

	if (!out || out->sz < TC_CPU_INFO_SZ_V1)
		return -EINVAL;
	/* the library's struct, then what the caller's version has of it: every field
	 * that owns memory is in the first version, so the copy owns it all */
	info = malloc(sizeof(*info));
	if (!info)
		return -ENOMEM;
	err = decode(d, info);
	if (!err) {
		tc_sized_put_sz(out, info, sizeof(*info));
	} else {
		sz = out->sz < sizeof(*out) ? out->sz : sizeof(*out);
		memset((char *)out + sizeof(out->sz), 0, sz - sizeof(out->sz));
	}
	free(info);
	return err;
}
