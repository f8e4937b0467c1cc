/* tacho/cpu.h - libtacho's public interface: CPU detection: raw CPUID leaves (live or
 * from a dump), pure decoding, the kernel's view.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_CPU_H
#define TACHO_CPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/output.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 2. CPU detection (CPUID: live or from a dump; pure decoding)
 * ================================================================================== */

/* --- Raw CPUID leaves ---
 * A tacho_cpuid_dump holds the raw CPUID leaves of one or more logical CPUs, read live
 * from this machine or loaded from a dump taken elsewhere. Decoding (below) is a pure
 * function of a dump, so everything tacho says about a CPU can be tested on data. */

/* The four registers of one CPUID answer. Fixed: CPUID has no fifth register. */
struct tacho_cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

struct tacho_cpuid_dump;

/* Reads the leaves of every online logical CPU of this machine (pinning the calling
 * thread to each in turn, or through /dev/cpu/N/cpuid for a CPU it may not run on),
 * enumerating leaves and subleaves as `cpuid -r` does. A CPU reachable neither way is
 * left out with a warning to the log. Returns 0 and a new dump in *out,
 * -TACHO_ENOTX86 off x86, or -errno. The caller frees it with
 * tacho_cpuid_dump_free. Not thread-safe with respect to the calling thread's CPU
 * affinity, which it restores before returning. */
TACHO_API int tacho_cpuid_dump_live(struct tacho_cpuid_dump **out);

/* Parses a dump in any of the formats tacho reads (detected by content): `cpuid -r`
 * (Todd Allen's tool, also what `tacho cpu --raw` writes), libcpuid's raw format,
 * AIDA64's and InstLatx64's CPUID listings (docs/lib-cpuid.md). text need not be
 * NUL-terminated; a line of exactly 80 '-' ends it. `name` names the text in
 * diagnostics (a file name). Returns 0 and a new dump, or -TACHO_EPARSE (a malformed
 * data line) / -TACHO_ETRUNC (the text stops inside one) / -TACHO_EEMPTY (no leaf) /
 * -TACHO_ENOTX86 (a libcpuid dump of an ARM CPU) / -ENOMEM, with *diag (if non-NULL)
 * naming the line; *out is NULL then. Thread-safe. */
TACHO_API int tacho_cpuid_dump_parse(const char *text, size_t len, const char *name,
				     struct tacho_cpuid_dump **out, struct tacho_diag *diag);

/* Reads the file at path and parses it as tacho_cpuid_dump_parse does; errors of the
 * file itself are -errno, with *diag naming the file. Thread-safe. */
TACHO_API int tacho_cpuid_dump_load(const char *path, struct tacho_cpuid_dump **out,
				    struct tacho_diag *diag);

TACHO_API void tacho_cpuid_dump_free(struct tacho_cpuid_dump *dump);

/* Number of logical CPUs in the dump (at least 1). */
TACHO_API unsigned tacho_cpuid_dump_ncpus(const struct tacho_cpuid_dump *dump);

/* The operating system's number of the idx-th CPU of the dump (as in
 * /sys/devices/system/cpu/cpuN), or -1 when the dump does not say. */
TACHO_API int tacho_cpuid_dump_os_cpu(const struct tacho_cpuid_dump *dump, unsigned idx);

/* A new dump of one CPU of dump: the one whose operating system number is cpu (its
 * index where the dump does not say), its leaves copied as they are. 0 and *out (free
 * it with tacho_cpuid_dump_free), -ENOENT when the dump has no such CPU, -EINVAL
 * (NULL, cpu < 0), -ENOMEM. */
TACHO_API int tacho_cpuid_dump_select(const struct tacho_cpuid_dump *dump, int cpu,
				      struct tacho_cpuid_dump **out);

/* Looks up one leaf of the idx-th CPU. Honours the maximum leaf of each range
 * (CPUID.0:EAX for 0x0..., CPUID.8000_0000h:EAX for 0x8000_0000..., the hypervisor's
 * 0x4000_0000:EAX, and so on): a leaf above its range's maximum returns
 * -TACHO_ENOVALUE even if the dump holds a value, because a real CPU answers such a
 * query with another leaf's data. A leaf that is not subleaf-indexed is found under
 * subleaf 0 whatever subleaf is asked. Returns 0 and *out, or -TACHO_ENOVALUE.
 * Thread-safe. */
TACHO_API int tacho_cpuid_query(const struct tacho_cpuid_dump *dump, unsigned idx,
				uint32_t leaf, uint32_t subleaf, struct tacho_cpuid_regs *out);

/* Writes every leaf of every CPU in the format of `cpuid -r` (one "CPU N:" header,
 * then "   0xLEAF 0xSL: eax=0x... ebx=0x... ecx=0x... edx=0x..." lines), which
 * tacho_cpuid_dump_parse reads back to the same dump. 0 or -EIO. */
TACHO_API int tacho_cpuid_dump_write_raw(const struct tacho_cpuid_dump *dump, FILE *f);

/* --- Decoding ---
 * tacho_cpu_decode turns a dump (above) into a plain struct tacho_cpu_info that callers
 * read directly. It is a pure function of the raw leaves: the same dump always gives
 * the same description, whether it was read live or loaded from a file. It honours the
 * maximum leaf of every range (through tacho_cpuid_query), never fails on odd values
 * (it writes a note instead), and says where each value came from. What CPUID cannot
 * tell (a hypervisor's invented L3, a TSC frequency nobody reports) is said in the
 * notes, not guessed.
 *
 * The description is sized (docs/architecture.md, "An API that can grow"): struct
 * tacho_cpu_info carries sz, set by the caller, and a new fact goes at its end. The
 * parts it holds by value or in its arrays (caches, TLBs, PMU, TSC, topology, logical
 * CPUs, core types) are fixed: their layout never changes once released, since a
 * caller indexes and embeds them with its own sizeof; what a new leaf tells goes into
 * new fields at the end of struct tacho_cpu_info. */

enum tacho_cpu_vendor {
	TACHO_VENDOR_UNKNOWN = 0,
	TACHO_VENDOR_INTEL,      /* "GenuineIntel" */
	TACHO_VENDOR_AMD,        /* "AuthenticAMD" (and the old "AMDisbetter!") */
	TACHO_VENDOR_HYGON,      /* "HygonGenuine" */
	TACHO_VENDOR_VIA,        /* "CentaurHauls" (Centaur, IDT, VIA) */
	TACHO_VENDOR_ZHAOXIN,    /* "  Shanghai  " */
	TACHO_VENDOR_CYRIX,      /* "CyrixInstead" */
	TACHO_VENDOR_TRANSMETA,  /* "GenuineTMx86", "TransmetaCPU" */
	TACHO_VENDOR_NSC,        /* "Geode by NSC" */
	TACHO_VENDOR_RISE,       /* "RiseRiseRise" */
	TACHO_VENDOR_SIS,        /* "SiS SiS SiS " */
	TACHO_VENDOR_UMC,        /* "UMC UMC UMC " */
	TACHO_VENDOR_NEXGEN,     /* "NexGenDriven" */
	TACHO_VENDOR_VORTEX,     /* "Vortex86 SoC" */
	TACHO_VENDOR_COUNT
};

/* The hypervisor named by the signature of leaf 0x4000_0000 (EBX, ECX, EDX). */
enum tacho_hypervisor {
	TACHO_HV_NONE = 0,       /* no hypervisor leaves (bare metal, or a hidden one) */
	TACHO_HV_UNKNOWN,        /* leaves present, signature not in tacho's table */
	TACHO_HV_KVM,            /* "KVMKVMKVM\0\0\0" */
	TACHO_HV_HYPERV,         /* "Microsoft Hv" */
	TACHO_HV_VMWARE,         /* "VMwareVMware" */
	TACHO_HV_XEN,            /* "XenVMMXenVMM" */
	TACHO_HV_BHYVE,          /* "bhyve bhyve " */
	TACHO_HV_QEMU_TCG,       /* "TCGTCGTCGTCG" */
	TACHO_HV_PARALLELS,      /* " lrpepyh  vr", " prl hyperv " */
	TACHO_HV_VIRTUALBOX,     /* "VBoxVBoxVBox" */
	TACHO_HV_ACRN,           /* "ACRNACRNACRN" */
	TACHO_HV_QNX,            /* " QNXQVMBSQG " */
	TACHO_HV_APPLE,          /* "Apple VZ" style signatures (Virtualization.framework) */
	TACHO_HV_COUNT
};

/* Where a value came from. One enum for caches, TLBs and topology so that a report can
 * print it beside the value. */
enum tacho_cpu_source {
	TACHO_SRC_NONE = 0,
	TACHO_SRC_LEAF_2,            /* Intel leaf 2 descriptor bytes */
	TACHO_SRC_LEAF_4,            /* Intel deterministic cache parameters */
	TACHO_SRC_LEAF_18,           /* Intel deterministic address translation */
	TACHO_SRC_AMD_8000001D,      /* AMD cache topology (like leaf 4) */
	TACHO_SRC_AMD_80000005,      /* AMD legacy L1 cache and TLB */
	TACHO_SRC_AMD_80000006,      /* AMD legacy L2/L3 cache and L2 TLB */
	TACHO_SRC_AMD_80000019,      /* AMD 1 GiB page TLBs */
	TACHO_SRC_LEAF_1F,           /* V2 extended topology */
	TACHO_SRC_LEAF_B,            /* extended topology */
	TACHO_SRC_AMD_80000008,      /* AMD core count and APIC ID size */
	TACHO_SRC_AMD_8000001E,      /* AMD compute unit / node IDs */
	TACHO_SRC_LEGACY,            /* leaf 1 EBX[23:16] and leaf 4 EAX[31:26] */
	TACHO_SRC_APIC_IDS,          /* counted from the APIC IDs (reserved: the topology keeps
	                              * its leaf as source and sets `complete` instead) */
	TACHO_SRC_COUNT
};

enum tacho_cache_type {
	TACHO_CACHE_DATA = 1,        /* numbered as in leaf 4 EAX[4:0] */
	TACHO_CACHE_INSTRUCTION = 2,
	TACHO_CACHE_UNIFIED = 3,
};

/* One cache as seen by one kind of core. Zero in a number means "not known" unless
 * said otherwise. Fixed (a part of the description, above). */
struct tacho_cpu_cache {
	unsigned level;              /* 1, 2, 3, 4 */
	enum tacho_cache_type type;
	uint64_t size;               /* bytes */
	unsigned ways;               /* 0 when fully associative or unknown */
	bool fully_assoc;
	unsigned line_size;          /* bytes */
	unsigned partitions;         /* lines per tag (leaf 4 EBX[21:12] + 1); 0 unknown */
	unsigned sets;               /* 0 unknown */
	unsigned sharing;            /* leaf 4 / 0x8000_001D EAX[25:14] + 1: the most logical
	                              * CPUs that may share one instance (Intel: addressable
	                              * IDs, an upper bound); 0 unknown */
	int instances;               /* instances in one package for this kind of core;
	                              * -1 when the dump cannot tell */
	int inclusive;               /* 1 inclusive of lower levels, 0 not, -1 unknown */
	enum tacho_cpu_source source;
	uint8_t descriptor;          /* the leaf 2 descriptor byte, when source is LEAF_2 */
};

enum tacho_tlb_type {
	TACHO_TLB_DATA = 1,          /* numbered as in leaf 0x18 EDX[4:0] */
	TACHO_TLB_INSTRUCTION = 2,
	TACHO_TLB_UNIFIED = 3,
	TACHO_TLB_LOAD = 4,          /* load-only (leaf 0x18) */
	TACHO_TLB_STORE = 5,         /* store-only (leaf 0x18) */
};

/* Page sizes a TLB holds, as a mask. */
#define TACHO_PAGE_4K (1u << 0)
#define TACHO_PAGE_2M (1u << 1)
#define TACHO_PAGE_4M (1u << 2)
#define TACHO_PAGE_1G (1u << 3)

/* One TLB as seen by one kind of core. Fixed (a part of the description). */
struct tacho_cpu_tlb {
	unsigned level;              /* 1, 2 (leaf 2 "shared L2" TLBs are 2) */
	enum tacho_tlb_type type;
	unsigned page_sizes;         /* TACHO_PAGE_* mask */
	unsigned entries;
	unsigned ways;               /* 0 when fully associative or unknown */
	bool fully_assoc;
	unsigned sharing;            /* logical CPUs sharing it (leaf 0x18); 0 unknown */
	enum tacho_cpu_source source;
	uint8_t descriptor;          /* the leaf 2 descriptor byte, when source is LEAF_2 */
};

/* Kinds of core, as leaf 0x1A EAX[31:24] (Intel) or 0x8000_0026 (AMD) name them. */
enum tacho_core_kind {
	TACHO_CORE_GENERAL = 0,      /* a part that is not hybrid: every core alike */
	TACHO_CORE_PERFORMANCE,      /* Intel "Core" (0x40), AMD performance */
	TACHO_CORE_EFFICIENCY,       /* Intel "Atom" (0x20), AMD efficiency */
	TACHO_CORE_LP_EFFICIENCY,    /* Intel low-power Atom (SoC tile, no L3 access) */
	TACHO_CORE_KIND_COUNT
};

/* Performance monitoring as CPUID describes it. Zero counters is a real answer on a
 * virtual machine without a virtual PMU. Fixed (a part of the description). */
struct tacho_cpu_pmu {
	unsigned version;            /* leaf 0xA EAX[7:0]; 0 = none reported */
	unsigned gp_counters;        /* general-purpose counters per logical CPU */
	unsigned gp_width;           /* bits */
	unsigned fixed_counters;
	unsigned fixed_width;
	uint32_t fixed_mask;         /* leaf 0xA ECX (v5+): bit i = fixed counter i exists */
	unsigned arch_events_len;    /* leaf 0xA EAX[31:24]: bits of EBX that are valid */
	uint32_t arch_events;        /* bit i set = architectural event i AVAILABLE
	                              * (already inverted from EBX, where 1 = absent) */
	bool any_thread_deprecated;  /* leaf 0xA EDX[15] */
	/* AMD */
	bool amd_perfmon_v2;         /* 0x8000_0022 EAX[0] */
	bool amd_lbr_v2;             /* 0x8000_0022 EAX[1] */
	unsigned amd_lbr_stack;      /* 0x8000_0022 EBX[9:4] */
	unsigned amd_nb_counters;    /* 0x8000_0022 EBX[15:10] (data fabric) */
	unsigned amd_umc_counters;   /* 0x8000_0022 EBX[21:16] */
	bool amd_nb_ext;             /* 0x8000_0001 ECX[24] PerfCtrExtNB */
	bool amd_l2i_ext;            /* 0x8000_0001 ECX[28] PerfCtrExtLLC */
};

/* Where a TSC frequency came from, best first. One enum for the whole library: the
 * decoder (tacho_cpu_decode, struct tacho_cpu_tsc) gives the CPUID sources, in the
 * order 15h (with the crystal from ECX, the SDM's table or 16h's base), the
 * hypervisor's leaf 4000_0010h, 16h alone; section 5 (tacho_tsc_info) takes that
 * answer and adds SYSFS, KERNEL, CPUINFO and CALIBRATED. tacho_tsc_source_name (below) names them. */
enum tacho_tsc_source {
	TACHO_TSC_FREQ_UNKNOWN = 0,
	TACHO_TSC_FREQ_CPUID_15,       /* CPUID 15h: crystal Hz (ECX) x EBX / EAX, exact */
	TACHO_TSC_FREQ_CPUID_15_TABLE, /* CPUID 15h ratio, the crystal from the SDM's table
					  (15h ECX = 0 on those parts); as trusted as 15h */
	TACHO_TSC_FREQ_CPUID_15_16,    /* CPUID 15h ratio with the crystal derived from 16h's
					  base MHz (15h ECX = 0), as Linux does */
	TACHO_TSC_FREQ_HYPERVISOR,     /* CPUID 4000_0010h EAX, kHz (VMware's leaf, KVM too) */
	TACHO_TSC_FREQ_KERNEL,         /* the kernel's TSC->ns conversion in a perf mmap page
					  (time_mult, time_shift; cap_user_time) */
	TACHO_TSC_FREQ_CPUID_16,       /* CPUID 16h EAX: the nominal base MHz alone */
	TACHO_TSC_FREQ_CALIBRATED,     /* measured against CLOCK_MONOTONIC_RAW */
	TACHO_TSC_FREQ_SYSFS,          /* the kernel's tsc_khz in /sys/devices/system/cpu/
					  cpu0/tsc_freq_khz (not upstream; where present) */
	TACHO_TSC_FREQ_CPUINFO,        /* a guest's /proc/cpuinfo "cpu MHz" where the kernel
					  took tsc_khz from the hypervisor (flags hypervisor
					  and tsc_known_freq, no aperfmperf): kHz */
};

/* A short name for a source: "cpuid-15h", "cpuid-15h+sdm-table", "cpuid-15h+16h",
 * "hypervisor", "kernel", "cpuid-16h", "calibrated", "sysfs", "unknown". Never NULL.
 * Thread-safe. */
TACHO_API const char *tacho_tsc_source_name(enum tacho_tsc_source src);

/* The TSC as CPUID describes it. Fixed (a part of the description). */
struct tacho_cpu_tsc {
	bool present;                /* 1:EDX[4] */
	bool invariant;              /* 0x8000_0007 EDX[8] */
	bool rdtscp;                 /* 0x8000_0001 EDX[27] */
	bool deadline;               /* 1:ECX[24] TSC-deadline timer */
	uint64_t hz;                 /* 0 when no source gave it */
	enum tacho_tsc_source source; /* a CPUID source, or TACHO_TSC_FREQ_UNKNOWN */
	uint64_t crystal_hz;         /* leaf 0x15 ECX or the SDM table; 0 unknown */
	uint32_t ratio_num, ratio_den; /* leaf 0x15 EBX / EAX */
	unsigned base_mhz, max_mhz, bus_mhz; /* leaf 0x16, 0 when absent */
};

/* Packages, dies, cores and threads as CPUID and the APIC IDs say. Fixed (a part of the
 * description). */
struct tacho_cpu_topology {
	unsigned packages;           /* in the dump (1 if only part of a package is there) */
	unsigned dies_per_package;
	unsigned cores_per_package;  /* all kinds together */
	unsigned threads_per_core;   /* the most threads of any core */
	unsigned logical_per_package;
	enum tacho_cpu_source source; /* where the fields came from: LEAF_1F, LEAF_B,
	                               * AMD_8000001E, AMD_80000008 or LEGACY */
	bool complete;               /* the dump holds every logical CPU of its packages,
	                              * so the counts were checked against the APIC IDs */
	unsigned smt_shift, core_shift; /* APIC ID bits below the core and package levels */
};

/* One logical CPU of the dump, placed in the topology. Fixed (a part of the
 * description: tacho_cpu_info.cpus is indexed with the caller's sizeof). */
struct tacho_cpu_logical {
	int os_cpu;                  /* as tacho_cpuid_dump_os_cpu; -1 unknown */
	uint32_t apic_id;            /* x2APIC ID (0xB/0x1F EDX) or leaf 1 EBX[31:24] */
	unsigned package, die, core, thread; /* IDs from the APIC ID fields */
	unsigned core_type;          /* index into tacho_cpu_info.core_types */
};

#define TACHO_CPU_MAX_CACHES 16
#define TACHO_CPU_MAX_TLBS 32

/* One kind of core and what it sees. Fixed (a part of the description). */
struct tacho_cpu_core_type {
	enum tacho_core_kind kind;
	uint32_t native_model_id;    /* leaf 0x1A EAX[23:0]; 0 when not hybrid */
	const char *uarch;           /* microarchitecture of this kind; NULL unknown */
	unsigned cores;              /* per package, of this kind */
	unsigned threads;            /* logical CPUs per package, of this kind */
	unsigned first_cpu;          /* index in the dump of a CPU of this kind */
	unsigned ncaches;
	struct tacho_cpu_cache caches[TACHO_CPU_MAX_CACHES]; /* sorted by level, type */
	unsigned ntlbs;
	struct tacho_cpu_tlb tlbs[TACHO_CPU_MAX_TLBS];
	struct tacho_cpu_pmu pmu;
};

#define TACHO_CPU_FEATURE_WORDS 16   /* room for 1024 named flags */
#define TACHO_CPU_MAX_CORE_TYPES 4
#define TACHO_CPU_MAX_CACHE_GROUPS 8
#define TACHO_CPU_SET_WORDS 16       /* a set of up to 1024 CPUs of a dump */

/* CPUs of one kind that report the same caches, and those caches. A kind's CPUs need
 * not agree: a Ryzen 9 7950X3D's CPUs 0-15 (the CCD under the stacked cache) report a
 * 96 MiB L3 in 0x8000_001D and CPUs 16-31 a 32 MiB one. Fixed (a part of the
 * description). */
struct tacho_cpu_cache_group {
	unsigned core_type;          /* index into tacho_cpu_info.core_types */
	unsigned first_cpu;          /* index in the dump of the group's first CPU */
	unsigned ncpus;              /* the dump's CPUs in the group */
	uint64_t cpus[TACHO_CPU_SET_WORDS]; /* bit i (word i / 64): the dump's CPU i */
	unsigned ncaches;
	struct tacho_cpu_cache caches[TACHO_CPU_MAX_CACHES]; /* sorted by level, type;
	                              * instances counted among the group's CPUs of the
	                              * first CPU's package (-1 when the dump lacks some) */
};

struct tacho_cpu_info {
	size_t sz;                   /* sizeof(struct tacho_cpu_info), set by the caller */
	enum tacho_cpu_vendor vendor;
	char vendor_string[13];      /* leaf 0 EBX EDX ECX, as the CPU says it */
	char brand[49];              /* 0x8000_0002..4, leading and trailing spaces trimmed;
	                              * "" when absent */
	uint32_t max_leaf, max_ext_leaf; /* CPUID.0:EAX, CPUID.8000_0000h:EAX (0 if none) */
	uint32_t signature;          /* CPUID.1:EAX */
	unsigned family, model, stepping;      /* display values (SDM Vol. 2A, CPUID EAX=1) */
	unsigned base_family, base_model, ext_family, ext_model; /* raw fields */
	unsigned cpu_type;           /* 1:EAX[13:12]: 0 OEM, 1 OverDrive, 2 dual */
	const char *uarch;           /* e.g. "Zen 4", "Golden Cove + Gracemont"; NULL unknown */
	const char *uarch_note;      /* when the table cannot decide (shared model numbers) */
	unsigned phys_addr_bits, virt_addr_bits; /* 0x8000_0008 EAX; 0 unknown */

	/* virtualization */
	bool hypervisor_bit;         /* 1:ECX[31]: we are a guest */
	enum tacho_hypervisor hypervisor;
	char hv_signature[13];       /* leaf 0x4000_0000 EBX ECX EDX, "" when absent */
	uint32_t hv_max_leaf;

	/* named feature flags: bit i of features[] is flag i of tacho_cpu_feature_name() */
	uint64_t features[TACHO_CPU_FEATURE_WORDS];

	struct tacho_cpu_topology topo;
	unsigned ncore_types;        /* 1 on parts that are not hybrid */
	struct tacho_cpu_core_type core_types[TACHO_CPU_MAX_CORE_TYPES];
	struct tacho_cpu_pmu pmu;    /* of the dump's first CPU (core_types have theirs) */
	struct tacho_cpu_tsc tsc;
	uint32_t xsave_size;         /* 0xD.0 ECX: bytes for every feature XCR0 may enable */
	uint64_t xcr0_supported;     /* 0xD.0 EDX:EAX */

	unsigned ncpus;              /* logical CPUs in the dump */
	struct tacho_cpu_logical *cpus; /* ncpus entries, owned (freed by _exit) */

	unsigned nnotes;
	char **notes;                /* remarks in plain words: contradictions, absent leaves,
	                              * values CPUID cannot know; owned (freed by _exit) */
	unsigned notes_dropped;      /* notes lost to a failed allocation */

	/* Where the CPUs of a kind report different caches, one group per distinct set
	 * of caches, in the order of their first CPUs (core_types[k].caches are then the
	 * first group's). None when every CPU reports what the first of its kind does. */
	unsigned ncache_groups;
	struct tacho_cpu_cache_group cache_groups[TACHO_CPU_MAX_CACHE_GROUPS];
};

/* Decodes a dump into *out, whose sz the caller set (`struct tacho_cpu_info info = {
 * .sz = sizeof(info) };`). Fills what sz covers (zeroing it first), including notes
 * about anything odd; a dump with strange values still decodes. Returns 0, or -ENOMEM
 * (then *out holds nothing that needs freeing), or -TACHO_ENOVALUE when the dump has no
 * leaf 0 at all, or -EINVAL for NULL or an sz below the first version (nothing
 * written). Free with tacho_cpu_info_exit. Thread-safe (pure: reads only the dump). */
TACHO_API int tacho_cpu_decode(const struct tacho_cpuid_dump *dump, struct tacho_cpu_info *out);

/* The caches that the dump's CPU `cpu` (an index in the dump, as info->cpus) reports:
 * its cache group's where its kind has groups, else its kind's. Sets *n to their
 * count. NULL (and *n 0) for a CPU out of range, NULL arguments or an info whose sz
 * is too small. The array lives in *info. Thread-safe. */
TACHO_API const struct tacho_cpu_cache *tacho_cpu_caches_of(const struct tacho_cpu_info *info,
							    unsigned cpu, unsigned *n);

/* Frees what tacho_cpu_decode allocated inside *info and zeroes it but for sz. NULL
 * (or a struct whose sz is too small to have been decoded) is fine. */
TACHO_API void tacho_cpu_info_exit(struct tacho_cpu_info *info);

/* Names for the enums above ("Intel", "KVM", "leaf 4", "unified", "data",
 * "performance", "leaf 0x15"...). Never NULL ("unknown" for values out of range).
 * Thread-safe. */
TACHO_API const char *tacho_cpu_vendor_name(enum tacho_cpu_vendor v);
TACHO_API const char *tacho_hypervisor_name(enum tacho_hypervisor hv);
TACHO_API const char *tacho_cpu_source_name(enum tacho_cpu_source s);
TACHO_API const char *tacho_cache_type_name(enum tacho_cache_type t);
TACHO_API const char *tacho_tlb_type_name(enum tacho_tlb_type t);
TACHO_API const char *tacho_core_kind_name(enum tacho_core_kind k);

/* The named feature flags: their number, the /proc/cpuinfo-style name of flag i
 * (NULL past the end), and where it lives (leaf, subleaf, register 'a' 'b' 'c' 'd',
 * bit; returns -TACHO_EOUTOFRANGE past the end). Thread-safe. */
TACHO_API unsigned tacho_cpu_feature_count(void);
TACHO_API const char *tacho_cpu_feature_name(unsigned i);
TACHO_API int tacho_cpu_feature_where(unsigned i, uint32_t *leaf, uint32_t *subleaf,
				      char *reg, unsigned *bit);
/* The index of a flag by name, or -ENOENT if tacho has no flag of that name. */
TACHO_API int tacho_cpu_feature_index(const char *name);
/* True if the decoded CPU has the named flag (false for unknown names, NULL, or an
 * info whose sz is too small). */
TACHO_API bool tacho_cpu_has(const struct tacho_cpu_info *info, const char *name);

/* --- What the kernel says ---
 * The kernel's view of the processor, from /sys/devices/system/cpu and /proc/cpuinfo:
 * the online logical CPUs, how they group into packages, dies and cores, and the caches
 * each one sees with the CPUs that share them. On x86 the kernel builds this from CPUID
 * too, but it counts sharing over the CPUs it actually brought up, and in a VM it is the
 * guest's view. tacho_cpu_crosscheck() compares it with a decoded CPUID description
 * (above) and says in words where the two disagree.
 *
 * The kernel's view is handed out (the library allocates it, the caller reads it
 * through the pointer, and new facts go at the end of struct tacho_cpu_sysfs); its
 * parts (struct tacho_sysfs_cpu, struct tacho_sysfs_cache) are fixed, as a
 * description's are. */

#define TACHO_SYSFS_MAX_CACHES 8   /* cache/indexN directories read per CPU */

/* One cacheN/indexN directory. Unknown numbers are 0. Fixed (a part of the kernel's
 * view). */
struct tacho_sysfs_cache {
	unsigned level;          /* 1, 2, 3, 4 */
	char type[16];           /* "data", "instruction", "unified" (the kernel's word, lowercase) */
	uint64_t size_bytes;     /* "size" ("32K") in bytes */
	unsigned ways;           /* ways_of_associativity */
	unsigned line_bytes;     /* coherency_line_size */
	unsigned sets;           /* number_of_sets */
	unsigned shared_cpus;    /* how many CPUs shared_cpu_list names */
	int shared_first;        /* the lowest of them, which names this instance; -1 unknown */
};

/* One online logical CPU. Identifiers the kernel does not provide are -1. Fixed (a part
 * of the kernel's view: tacho_cpu_sysfs.cpus is indexed with the caller's sizeof). */
struct tacho_sysfs_cpu {
	int cpu;                 /* N of /sys/devices/system/cpu/cpuN */
	int package;             /* topology/physical_package_id */
	int die;                 /* topology/die_id */
	int core;                /* topology/core_id (unique within a package only) */
	unsigned core_threads;   /* CPUs in topology/core_cpus_list (thread_siblings_list on
				    kernels before 5.7): the hardware threads of this core */
	int core_first;          /* the lowest of them, which names the core; -1 unknown */
	char pmu[16];            /* hybrid parts: the core PMU that lists this CPU in
				    /sys/devices/PMU/cpus ("cpu_core", "cpu_atom"); "" otherwise */
	unsigned ncaches;
	struct tacho_sysfs_cache caches[TACHO_SYSFS_MAX_CACHES];
};

/* The kernel's view. Handed out (tacho_cpu_sysfs_read allocates it; fields are only
 * ever added at the end). */
struct tacho_cpu_sysfs {
	unsigned ncpus;                /* online CPUs (at least 1) */
	struct tacho_sysfs_cpu *cpus;  /* ncpus entries, ascending cpu numbers */
	unsigned packages;             /* distinct physical_package_id values (0 if unknown) */
	unsigned dies;                 /* distinct (package, die_id) pairs (0 if unknown) */
	unsigned cores;                /* distinct cores over all packages (0 if unknown) */
	int core_pmu;                  /* the kernel's core PMU: 1 when /sys/bus/event_source/
					  devices has "cpu", "cpu_core" or "cpu_atom"; 0 when it
					  has none (no hardware events: a VM without a virtual
					  PMU); -1 when that folder is missing (unknown) */
	char model_name[128];          /* /proc/cpuinfo "model name"; "" when absent */
	char *flags;                   /* /proc/cpuinfo "flags" of the first CPU, words
					  separated by one space; NULL when absent */
};

/* Reads the kernel's view. A CPU the kernel names as sharing a cache (shared_cpu_list)
 * or a core (core_cpus_list) with a CPU read before it takes those values without
 * reading their files again: the kernel builds the lists from the very leaf each CPU
 * has at the same index. `root` is prepended to every path ("/sys/devices/system/cpu/
 * online", "/proc/cpuinfo", "/sys/devices/cpu_core/cpus"); NULL or "/" reads this
 * machine, a folder reads a fake tree built there (tests). Returns 0 and a new
 * description in *out, or -errno when the online CPU list cannot be read, -TACHO_EPARSE
 * when it is malformed, -ENOMEM. Files missing for one CPU (older kernels have no die_id
 * or core_cpus_list; offline CPUs have no topology) leave their fields unknown and are
 * not errors; a missing /proc/cpuinfo leaves model_name empty and flags NULL. The caller
 * frees *out with tacho_cpu_sysfs_free. Thread-safe. */
TACHO_API int tacho_cpu_sysfs_read(const char *root, struct tacho_cpu_sysfs **out);

/* The same, with the caches of only the CPUs tacho_cpu_crosscheck compares for info
 * (the first CPU of each kind of core; every CPU when info has no kernel numbers):
 * the others' ncaches are 0. Each cache is six or seven files a CPU, most of what a
 * read of a many-CPU machine costs. -EINVAL for a NULL or too small info; otherwise
 * as tacho_cpu_sysfs_read. */
TACHO_API int tacho_cpu_sysfs_read_for(const char *root, const struct tacho_cpu_info *info,
				       struct tacho_cpu_sysfs **out);

TACHO_API void tacho_cpu_sysfs_free(struct tacho_cpu_sysfs *sys);

/* The sysfs entry of logical CPU `cpu`, or NULL when it is not online in sys. */
TACHO_API const struct tacho_sysfs_cpu *tacho_cpu_sysfs_cpu(const struct tacho_cpu_sysfs *sys,
							     int cpu);

/* One thing CPUID and the kernel disagree about. Fixed: a subject and a sentence. */
struct tacho_cpu_disagreement {
	char what[32];    /* the subject: "packages", "cores", "L3", "L1d", "feature avx512f" */
	char text[320];   /* the sentence, e.g. "L3: CPUID says 320 MiB shared by 2 threads,
			     the kernel says 32 MiB shared by 2 CPUs" */
};

/* The result of a cross-check. Storage the caller provides (_init/_exit lifetime),
 * sized: the caller sets sz. */
struct tacho_cpu_crosscheck {
	size_t sz;                             /* sizeof(struct tacho_cpu_crosscheck) */
	unsigned checked;                      /* how many values were compared */
	unsigned n;                            /* how many of them disagreed */
	struct tacho_cpu_disagreement *items;  /* n entries, owned by the struct */
};

struct tacho_cpu_info;

/* Compares a CPUID description decoded from this machine's dump with the kernel's view:
 * packages, cores and threads (over the CPUs that are online), the kind of each CPU on
 * hybrid parts, performance monitoring against the kernel's core PMU, and for each
 * cache level and type its size, ways, line size, and how many CPUs share one instance
 * (CPUID's sharing is an upper bound: only a larger kernel count disagrees); and the
 * features CPUID reports that /proc/cpuinfo does not list (the kernel masks them or
 * does not use them), as one item "features". Fills *out (any previous content is not
 * freed) and returns 0, -ENOMEM, or -EINVAL (NULL, or an info or out whose sz is below
 * the first version; out is then untouched). A value one side does not know is not
 * compared. Free with tacho_cpu_crosscheck_exit. Thread-safe. */
TACHO_API int tacho_cpu_crosscheck(const struct tacho_cpu_info *info,
				   const struct tacho_cpu_sysfs *sys,
				   struct tacho_cpu_crosscheck *out);

TACHO_API void tacho_cpu_crosscheck_exit(struct tacho_cpu_crosscheck *x);

/* --- The counters a task may use ---
 * A core PMU has a few general-purpose counters (2 on the Pentium, 4 or 8 on Intel
 * cores, 6 on AMD Zen) and, on Intel, fixed counters for instructions, cycles and
 * ref-cycles; the NMI watchdog may hold one. tacho_pmu_counters_detect
 * (tacho/events.h) fills this for the machine; stat's scheduler plans runs with it. */

/* The counters a task may use. Sized (docs/architecture.md, "An API that can grow"):
 * the caller sets sz (`struct tacho_pmu_counters pc = { .sz = sizeof(pc) };`) where it
 * provides one, to be filled or read; the library touches only the fields sz covers. */
struct tacho_pmu_counters {
	size_t sz;               /* sizeof(struct tacho_pmu_counters) */
	unsigned gp;             /* general-purpose counters a task may use */
	unsigned fixed;          /* fixed counters a task may use */
	uint32_t fixed_mask;     /* bit i: fixed counter i usable (Intel: 0 instructions,
				    1 cycles, 2 ref-cycles) */
	unsigned breakpoints;    /* debug address registers (4 on x86) */
	bool fixed_intel;        /* fixed counters have Intel's architectural meaning */
	bool known;              /* the numbers come from a source; false: unknown (the
				    scheduler then plans one run and lets the kernel
				    multiplex) */
	bool none;               /* known, and there are no counters: no hardware PMU */
	char source[64];         /* where the numbers came from ("CPUID leaf 0xA") */
	char note[192];          /* what else limits them ("the NMI watchdog holds ..."),
				    "" when nothing */
	/* since 0.1.1 of the struct (sz larger than TC_PMU_COUNTERS_SZ_V1): */
	unsigned max_events;     /* events one run may have open at once: each takes a
				    file descriptor (per CPU or thread counted), so the
				    descriptor limit bounds a run; the scheduler then
				    spreads the events over more runs. 0: no limit.
				    tacho_pmu_counters_detect leaves it 0; tacho_stat_new
				    sets it from RLIMIT_NOFILE where runs can repeat. */
};

/* --- Writing a description (what `tacho cpu` prints; docs/schemas.md) --- */

/* What the writers show: a decoded description and what the caller learnt beside it.
 * Every field but sz and info may be 0/NULL. Sized, and so are the description and the
 * cross-check it points to. */
struct tacho_cpu_view {
	size_t sz;                       /* sizeof(struct tacho_cpu_view) */
	const struct tacho_cpu_info *info;   /* the description (tacho_cpu_decode) */
	bool live;                       /* decoded from this machine's CPUID, not a dump */
	const char *decoded;             /* what part of the dump it covers, when not all of
					    it, for people ("CPU 3 only (--cpu)"): a line of
					    its own in the table */
	double tsc_hz;                   /* this machine's TSC as tacho_tsc_info found it; 0:
					    not known (then CPUID's word stands alone) */
	enum tacho_tsc_source tsc_source;
	double tsc_kernel_hz;            /* the kernel's conversion, 0 if not offered */
	double tsc_calibrated_hz;        /* the calibration, 0 if not measured */
	const struct tacho_cpu_sysfs *sysfs;  /* the kernel's view (tacho_cpu_sysfs_read) */
	int sysfs_err;                   /* why sysfs is NULL when it was asked for */
	const struct tacho_cpu_crosscheck *crosscheck;  /* tacho_cpu_crosscheck of info
					    and sysfs; NULL: not compared */
	const char *crosscheck_skipped;  /* why the kernel was not asked, for people
					    ("--no-crosscheck"), on a live description */
	const char *tsc_unmeasured;      /* where tsc_hz is 0 because nothing was measured:
					    how to measure it, for people ("--tsc measures
					    it"); NULL: it was measured or could not be */
};

/* Writes the description to f: the report part by part (TACHO_FORMAT_TABLE: brand,
 * vendor, signature, microarchitecture, hypervisor, topology, the caches and TLBs of
 * each kind of core with the leaf each value came from, performance monitoring, the
 * TSC, the features by group, the notes, the cross-check) or the JSON document of
 * docs/schemas.md ("version" 1; TACHO_FORMAT_JSON, or on one line). Where the report
 * would send its reader to measure the caches it words TACHO_HINT_CACHE through
 * opts->hint_words. 0; -EINVAL (NULL view, info or f, an sz too small here or in the
 * info or cross-check, a bad format); -TACHO_EVERSION (the view or opts set a field
 * past the struct this library knows: a program built against a newer tacho.h);
 * -EOPNOTSUPP for TACHO_FORMAT_CSV (a description is not a table); -EIO. Pure apart
 * from writing f; thread-safe. */
TACHO_API int tacho_cpu_write(const struct tacho_cpu_view *view, FILE *f, enum tacho_format fmt,
			      const struct tacho_write_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_CPU_H */
