/* tacho.h - the one public header of libtacho, the CPU performance-monitoring library.
 *
 * Read it like a manual: sections come in dependency order (errors and diagnostics,
 * CPU detection, events, counters, the time-stamp counter, regions, sampling).
 * Every function states what it does, what it returns on error, who owns what
 * afterwards and whether it may be called from several threads at once.
 *
 * Conventions, everywhere:
 *  - a function that can fail returns 0 (or a count) on success and a negative code on
 *    failure: -errno for an error of the operating system, -TACHO_E... for one of tacho's
 *    own; tacho_strerror() turns either into a sentence;
 *  - _new/_free: objects the caller owns; _init/_exit: storage the caller provides;
 *    every _free and _exit accepts NULL;
 *  - the library never prints, never exits and never runs a shell; it reports through
 *    the log callback (tacho_set_log) and through struct tacho_diag where input is bad.
 */
#ifndef TACHO_H
#define TACHO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TACHO_API __attribute__((visibility("default")))
#else
#define TACHO_API
#endif

/* ==================================================================================
 * 1. Version, errors and diagnostics
 * ================================================================================== */

#define TACHO_VERSION_MAJOR 0
#define TACHO_VERSION_MINOR 1
#define TACHO_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH". Never NULL. Thread-safe. */
TACHO_API const char *tacho_version(void);

/* tacho's own error codes. They are positive numbers far above any errno; functions
 * return them negated. X(NAME, NUMBER, SENTENCE) */
#define TACHO_ERRNO_MAP(X)                                                              \
	X(EPARSE,    10001, "malformed input")                                          \
	X(ETRUNC,    10002, "input ends too early")                                     \
	X(EEMPTY,    10003, "input is empty")                                           \
	X(ENODATA,   10004, "the value is not available from this source")              \
	X(ENOEVENT,  10005, "no such event")                                            \
	X(ENOPMU,    10006, "no hardware performance-monitoring unit on this machine")  \
	X(ENOTCPU,   10007, "this event does not exist on this CPU")                    \
	X(ERANGE,    10008, "a value is out of range")                                  \
	X(EVERSION,  10009, "unsupported file format version")                          \
	X(ECORRUPT,  10010, "the file is corrupt")                                      \
	X(ENOTX86,   10011, "not an x86 processor")                                     \
	X(ENOTCOUNTED, 10012, "the event was never scheduled on a counter")             \
	X(ETOOMANY,  10013, "more events than this CPU has counters for in one group")  \
	X(ECHILD,    10014, "the program could not be started")

enum tacho_errno {
#define TACHO_ERRNO_ENUM_(name, num, text) TACHO_##name = num,
	TACHO_ERRNO_MAP(TACHO_ERRNO_ENUM_)
#undef TACHO_ERRNO_ENUM_
};

/* The sentence for an error code, negative or positive, tacho's or the OS's (then it
 * is strerror's text). Never NULL; an unknown code gives "unknown error N" from a
 * thread-local buffer. Thread-safe. */
TACHO_API const char *tacho_strerror(int err);

/* The symbolic name of an error code ("TACHO_EPARSE", "ENOENT"), or NULL if unknown.
 * Thread-safe. */
TACHO_API const char *tacho_err_name(int err);

/* Where bad input was found. Functions that parse text fill one in when the caller
 * passes a non-NULL pointer; on success they leave it untouched. */
struct tacho_diag {
	char source[256];   /* file name, or the text that was parsed (may be cut short) */
	unsigned line;      /* 1-based line in source; 0 when not a file */
	unsigned column;    /* 1-based column (byte offset + 1); 0 when unknown */
	char message[256];  /* what was wrong, lowercase, no final full stop */
};

/* Formats a diagnostic as one line: "SOURCE:LINE:COLUMN: MESSAGE" (LINE and COLUMN
 * only when known). Returns the length it wanted, as snprintf does. */
TACHO_API int tacho_diag_format(const struct tacho_diag *d, char *buf, size_t size);

enum tacho_log_level {
	TACHO_LOG_ERROR = 0,
	TACHO_LOG_WARN  = 1,
	TACHO_LOG_INFO  = 2,
	TACHO_LOG_DEBUG = 3,
};

typedef void tacho_log_fn(void *arg, enum tacho_log_level level, const char *msg);

/* Installs the callback that receives the library's diagnostics (warnings about
 * values it could not trust, fallbacks it took) and the most verbose level passed on.
 * NULL silences the library (the default). Call it before other threads use the
 * library; the callback itself may be called from any thread. */
TACHO_API void tacho_set_log(tacho_log_fn *fn, void *arg, enum tacho_log_level max);

/* ==================================================================================
 * 2. CPU detection (CPUID: live or from a dump; pure decoding)
 * ================================================================================== */

/* --- 2a. Raw CPUID leaves ---
 * A tacho_cpuid_dump holds the raw CPUID leaves of one or more logical CPUs, read live
 * from this machine or loaded from a dump taken elsewhere. Decoding (2b) is a pure
 * function of a dump, so everything tacho says about a CPU can be tested on data. */

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

/* Looks up one leaf of the idx-th CPU. Honours the maximum leaf of each range
 * (CPUID.0:EAX for 0x0..., CPUID.8000_0000h:EAX for 0x8000_0000..., the hypervisor's
 * 0x4000_0000:EAX, and so on): a leaf above its range's maximum returns
 * -TACHO_ENODATA even if the dump holds a value, because a real CPU answers such a
 * query with another leaf's data. A leaf that is not subleaf-indexed is found under
 * subleaf 0 whatever subleaf is asked. Returns 0 and *out, or -TACHO_ENODATA.
 * Thread-safe. */
TACHO_API int tacho_cpuid_query(const struct tacho_cpuid_dump *dump, unsigned idx,
				uint32_t leaf, uint32_t subleaf, struct tacho_cpuid_regs *out);

/* Writes every leaf of every CPU in the format of `cpuid -r` (one "CPU N:" header,
 * then "   0xLEAF 0xSL: eax=0x... ebx=0x... ecx=0x... edx=0x..." lines), which
 * tacho_cpuid_dump_parse reads back to the same dump. 0 or -EIO. */
TACHO_API int tacho_cpuid_dump_write_raw(const struct tacho_cpuid_dump *dump, FILE *f);

/* --- 2b. Decoding ---
 * tacho_cpu_decode turns a dump (2a) into a plain struct tacho_cpu_info that callers
 * read directly. It is a pure function of the raw leaves: the same dump always gives
 * the same description, whether it was read live or loaded from a file. It honours the
 * maximum leaf of every range (through tacho_cpuid_query), never fails on odd values
 * (it writes a note instead), and says where each value came from. What CPUID cannot
 * tell (a hypervisor's invented L3, a TSC frequency nobody reports) is said in the
 * notes, not guessed. */

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
 * said otherwise. */
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
 * virtual machine without a virtual PMU. */
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
 * answer and adds KERNEL and CALIBRATED. tacho_tsc_source_name (section 5) names them. */
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
};

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

/* One logical CPU of the dump, placed in the topology. */
struct tacho_cpu_logical {
	int os_cpu;                  /* as tacho_cpuid_dump_os_cpu; -1 unknown */
	uint32_t apic_id;            /* x2APIC ID (0xB/0x1F EDX) or leaf 1 EBX[31:24] */
	unsigned package, die, core, thread; /* IDs from the APIC ID fields */
	unsigned core_type;          /* index into tacho_cpu_info.core_types */
};

#define TACHO_CPU_MAX_CACHES 16
#define TACHO_CPU_MAX_TLBS 32

/* One kind of core and what it sees. */
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

struct tacho_cpu_info {
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
};

/* Decodes a dump. Fills *out completely (zeroing it first), including notes about
 * anything odd; a dump with strange values still decodes. Returns 0, or -ENOMEM (then
 * *out holds nothing that needs freeing), or -TACHO_ENODATA when the dump has no leaf 0
 * at all. Free with tacho_cpu_info_exit. Thread-safe (pure: reads only the dump). */
TACHO_API int tacho_cpu_decode(const struct tacho_cpuid_dump *dump, struct tacho_cpu_info *out);

/* Frees what tacho_cpu_decode allocated inside *info and zeroes it. NULL is fine. */
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
 * bit; returns -TACHO_ERANGE past the end). Thread-safe. */
TACHO_API unsigned tacho_cpu_feature_count(void);
TACHO_API const char *tacho_cpu_feature_name(unsigned i);
TACHO_API int tacho_cpu_feature_where(unsigned i, uint32_t *leaf, uint32_t *subleaf,
				      char *reg, unsigned *bit);
/* The index of a flag by name, or -ENOENT if tacho has no flag of that name. */
TACHO_API int tacho_cpu_feature_index(const char *name);
/* True if the decoded CPU has the named flag (false for unknown names). */
TACHO_API bool tacho_cpu_has(const struct tacho_cpu_info *info, const char *name);

/* --- 2c. What the kernel says ---
 * The kernel's view of the processor, from /sys/devices/system/cpu and /proc/cpuinfo:
 * the online logical CPUs, how they group into packages, dies and cores, and the caches
 * each one sees with the CPUs that share them. On x86 the kernel builds this from CPUID
 * too, but it counts sharing over the CPUs it actually brought up, and in a VM it is the
 * guest's view. tacho_cpu_crosscheck() compares it with a decoded CPUID description
 * (2b) and says in words where the two disagree. */

#define TACHO_SYSFS_MAX_CACHES 8   /* cache/indexN directories read per CPU */

/* One cacheN/indexN directory. Unknown numbers are 0. */
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

/* One online logical CPU. Identifiers the kernel does not provide are -1. */
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

/* Reads the kernel's view. `root` is prepended to every path ("/sys/devices/system/cpu/
 * online", "/proc/cpuinfo", "/sys/devices/cpu_core/cpus"); NULL or "/" reads this
 * machine, a folder reads a fake tree built there (tests). Returns 0 and a new
 * description in *out, or -errno when the online CPU list cannot be read, -TACHO_EPARSE
 * when it is malformed, -ENOMEM. Files missing for one CPU (older kernels have no die_id
 * or core_cpus_list; offline CPUs have no topology) leave their fields unknown and are
 * not errors; a missing /proc/cpuinfo leaves model_name empty and flags NULL. The caller
 * frees *out with tacho_cpu_sysfs_free. Thread-safe. */
TACHO_API int tacho_cpu_sysfs_read(const char *root, struct tacho_cpu_sysfs **out);

TACHO_API void tacho_cpu_sysfs_free(struct tacho_cpu_sysfs *sys);

/* The sysfs entry of logical CPU `cpu`, or NULL when it is not online in sys. */
TACHO_API const struct tacho_sysfs_cpu *tacho_cpu_sysfs_cpu(const struct tacho_cpu_sysfs *sys,
							     int cpu);

/* One thing CPUID and the kernel disagree about. */
struct tacho_cpu_disagreement {
	char what[32];    /* the subject: "packages", "cores", "L3", "L1d", "feature avx512f" */
	char text[320];   /* the sentence, e.g. "L3: CPUID says 320 MiB shared by 2 threads,
			     the kernel says 32 MiB shared by 2 CPUs" */
};

/* The result of a cross-check. Storage the caller provides (_init/_exit lifetime). */
struct tacho_cpu_crosscheck {
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
 * freed) and
 * returns 0, or -ENOMEM. A value one side does not know is not compared. Free with
 * tacho_cpu_crosscheck_exit. Thread-safe. */
TACHO_API int tacho_cpu_crosscheck(const struct tacho_cpu_info *info,
				   const struct tacho_cpu_sysfs *sys,
				   struct tacho_cpu_crosscheck *out);

TACHO_API void tacho_cpu_crosscheck_exit(struct tacho_cpu_crosscheck *x);

/* ==================================================================================
 * 3. Events (the event grammar shared by every command)
 * ================================================================================== */
/* @@section-events@@ */
/* One grammar names every event, in every command and in the library (TACHO_EVENTS for
 * regions, -e for stat and record); docs/events.md describes it whole. A spec is a
 * comma-separated list of events; commas inside pmu/.../ do not split, and {a,b} keeps
 * events in one group (optionally {a,b}:MODS, applied to each member). One event is:
 *   cycles, instructions, ...        generic hardware           [:MODS]
 *   L1-dcache-load-misses, LLC-loads generic cache              [:MODS]
 *   task-clock, page-faults, ...     kernel software            [:MODS]
 *   INST_RETIRED:ANY, pmu::EV:UMASK  CPU-specific, libpfm4      [:MODS]
 *   cpu/event=0x3c,umask=1,cmask=1/  a sysfs PMU's format terms [MODS or :MODS]
 *   msr/tsc/                         a sysfs PMU's named event
 *   r1a8                             raw config of the CPU's PMU [:MODS]
 *   sched:sched_switch, sched:*      tracepoint (wildcards: one event per match) [:MODS]
 *   mem:0x1000[/8][:rw]              hardware breakpoint        [:MODS]
 *   uprobe:PATH:SYMBOL[+OFF]         entries of a function of an ELF file (uprobe PMU)
 *   uprobe:PATH:0xOFFSET             an instruction at a file offset      [:MODS]
 *   uretprobe:PATH:SYMBOL            returns of the function              [:MODS]
 * MODS are letters: u (user only), k (kernel only), h (hypervisor only), combinable;
 * G (guest only), H (host only), I (exclude idle), p/pp/ppp (precise_ip 1-3), D (pinned).
 */

/* Where an event comes from. */
enum tacho_event_source {
	TACHO_EVENT_SRC_HARDWARE = 0,  /* generic hardware events of the kernel */
	TACHO_EVENT_SRC_CACHE,         /* generic cache events */
	TACHO_EVENT_SRC_SOFTWARE,      /* kernel software events */
	TACHO_EVENT_SRC_PFM,           /* CPU-specific, named by libpfm4 */
	TACHO_EVENT_SRC_RAW,           /* rNNNN */
	TACHO_EVENT_SRC_PMU,           /* a PMU of /sys/bus/event_source/devices */
	TACHO_EVENT_SRC_TRACEPOINT,    /* kernel tracepoints (tracefs) */
	TACHO_EVENT_SRC_BREAKPOINT,    /* hardware breakpoints, and uprobes (pmu "uprobe"):
					  exact, rare events that take no counter */
	TACHO_EVENT_SRC_COUNT_
};

/* A short lowercase name for a source ("hardware", "cache", "software", "pfm", "raw",
 * "pmu", "tracepoint", "breakpoint"); "unknown" outside the enum. Thread-safe. */
TACHO_API const char *tacho_event_source_name(enum tacho_event_source src);

/* Where the grammar looks things up; every field may be NULL/0 for the default.
 * Tests point these at fake trees. */
struct tacho_event_opts {
	size_t sz;                  /* sizeof(struct tacho_event_opts), for growth */
	const char *sysfs_pmu_root; /* default "/sys/bus/event_source/devices" */
	const char *tracefs_root;   /* default: the first of /sys/kernel/tracing and
				       /sys/kernel/debug/tracing that has events/ (the
				       library never mounts tracefs) */
	unsigned flags;             /* TACHO_EVENT_* below; read when sz covers it */
};
/* Never open a file that a spec names (uprobe paths): a uprobe then needs an absolute
 * PATH and a numeric offset, taken as written. For fuzzers and untrusted specs. */
#define TACHO_EVENT_NO_FILES 0x1u

/* A parsed list of events. Opaque; the engine reads it through tacho_evlist_*. */
struct tacho_evlist;

/* Makes an empty list that resolves names with opts (NULL: the defaults; the strings
 * are copied). 0 and *out, or -ENOMEM / -EINVAL (opts->sz too small). Free it with
 * tacho_evlist_free. */
TACHO_API int tacho_evlist_new(const struct tacho_event_opts *opts, struct tacho_evlist **out);

/* Parses spec and appends its events to list. All or nothing: on error the list is as
 * it was. Returns 0, or -TACHO_EPARSE (malformed), -TACHO_ENOEVENT (well formed but
 * unknown here), -TACHO_ERANGE (a value that does not fit), -TACHO_EEMPTY, -ENOMEM,
 * with *diag (if non-NULL) holding the spec as source, the 1-based column of the bad
 * character and what was expected there (tacho_diag_caret shows it). Reads sysfs,
 * tracefs and libpfm4's tables. Not thread-safe on the same list; thread-safe on
 * different lists. */
TACHO_API int tacho_evlist_add(struct tacho_evlist *list, const char *spec,
			       struct tacho_diag *diag);

/* tacho_evlist_new(NULL) + tacho_evlist_add(spec): the common case. On error *out is
 * NULL. */
TACHO_API int tacho_evlist_parse(const char *spec, struct tacho_evlist **out,
				 struct tacho_diag *diag);

/* The same with explicit lookup places. */
TACHO_API int tacho_evlist_parse_opts(const char *spec, const struct tacho_event_opts *opts,
				      struct tacho_evlist **out, struct tacho_diag *diag);

TACHO_API void tacho_evlist_free(struct tacho_evlist *list);

/* Number of events in the list (0 for NULL). */
TACHO_API size_t tacho_evlist_count(const struct tacho_evlist *list);

/* Accessors of the i-th event; i must be below tacho_evlist_count (else NULL, -EINVAL,
 * TACHO_EVENT_SRC_COUNT_, -1 or 1.0). Strings live as long as the list. */
TACHO_API const char *tacho_evlist_name(const struct tacho_evlist *list, size_t i);
/* Copies the complete perf_event_attr (size set; read_format, disabled, inherit and
 * the sampling fields left for the engine, except sample_period when the spec gave a
 * PMU event's period= term). 0 or -EINVAL. For a uprobe, the copy's uprobe_path
 * (config1) points to the resolved path, which the library keeps for the life of the
 * process, so the copy may be opened after the list is freed (under
 * TACHO_EVENT_NO_FILES it points into the list instead: open before freeing). */
TACHO_API int tacho_evlist_attr(const struct tacho_evlist *list, size_t i,
				struct perf_event_attr *out);
TACHO_API enum tacho_event_source tacho_evlist_source(const struct tacho_evlist *list, size_t i);
/* The PMU's name ("cpu", "software", "msr", "tracepoint", a libpfm4 PMU name). */
TACHO_API const char *tacho_evlist_pmu(const struct tacho_evlist *list, size_t i);
/* The unit of the scaled value ("" for plain counts, "msec" for the clocks) and the
 * factor from raw count to it. */
TACHO_API const char *tacho_evlist_unit(const struct tacho_evlist *list, size_t i);
TACHO_API double tacho_evlist_scale(const struct tacho_evlist *list, size_t i);
/* The index of the leader of the {group} the user put event i in, or -1 when the user
 * did not group it. */
TACHO_API int tacho_evlist_group_leader(const struct tacho_evlist *list, size_t i);

/* Tries to open event i counting on the calling thread (any CPU), then closes it:
 * whether this process may count it here and now. Returns 0 or the -errno of
 * perf_event_open (-ENOENT, -EOPNOTSUPP, -EACCES, -EINVAL, -ENOSPC, ...). Nothing is
 * cached. Thread-safe. */
TACHO_API int tacho_evlist_probe(const struct tacho_evlist *list, size_t i);

/* Formats the diagnostic of a parse as two lines for a terminal: the source text,
 * then a caret under the bad column ("cycles:q\n       ^\n"); tabs in the source are
 * kept in the caret line so it lines up. Returns the length it wanted, as snprintf;
 * 0 when d has no column. Thread-safe. */
TACHO_API int tacho_diag_caret(const struct tacho_diag *d, char *buf, size_t size);

/* --- 3b. Enumerating the events this machine knows (tacho list) --- */

struct tacho_event_info {
	enum tacho_event_source source;
	const char *name;     /* how to write it in a spec (for the breakpoint source and
				 PMUs with formats: the syntax, e.g. "mem:ADDR[/LEN][:rwx]") */
	const char *aliases;  /* other accepted spellings, comma-separated, or "" */
	const char *desc;     /* one line, "" when none is known */
	const char *pmu;      /* the PMU (libpfm4's name, the sysfs PMU, the tracepoint's
				 subsystem, "cpu" for generic ones) */
	const char *probe;    /* a spec tacho_evlist_parse accepts and that opens this
				 event, for tacho_evlist_probe; NULL when there is none */
};

/* Called once per event; a non-zero return stops the walk and is returned by
 * tacho_events_foreach. The strings are valid only during the call. */
typedef int tacho_event_visit_fn(void *arg, const struct tacho_event_info *ev);

/* Walks the events known here from the sources in mask (bits 1u << source; 0: all),
 * source by source in enum order: the generic tables; libpfm4's events and umasks of
 * its active CPU PMUs (not its generic "perf" tables); the sysfs PMUs' named events
 * and format syntax (not cpu's raw configuration); tracepoints from tracefs (sorted);
 * the breakpoint and uprobe syntax (a uprobe row's probe, when the uprobe PMU is there,
 * is a function of libtacho as this process maps it). Returns 0, the visitor's non-zero
 * value, or -ENOMEM. Missing sources (no tracefs) are skipped silently:
 * tacho_event_opts says where it looked.
 * Thread-safe as long as the visitor is. */
TACHO_API int tacho_events_foreach(const struct tacho_event_opts *opts, unsigned mask,
				   tacho_event_visit_fn *fn, void *arg);

/* The tracefs folder tracepoints are looked up in (opts->tracefs_root, else the first
 * of /sys/kernel/tracing and /sys/kernel/debug/tracing whose events/ this process can
 * see), or NULL when there is none: not mounted, or not readable by this user. The
 * string is static or opts's. Thread-safe. */
TACHO_API const char *tacho_event_tracefs(const struct tacho_event_opts *opts);

/* ==================================================================================
 * 4. Counters (the perf_event engine)
 * ================================================================================== */
/* A struct tacho_counters is a set of events opened on one target (a program tacho
 * starts, a process, a thread, or CPUs) in groups. Members of a group are scheduled
 * on the PMU together and read with one read(2); every value comes back with a status,
 * so that a caller never mistakes "not counted" for zero.
 *
 * Typical use (error checks left out):
 *
 *	struct tacho_child *ch;
 *	tacho_child_start(argv, NULL, &ch);                  // forked, waits before exec
 *	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_CHILD,
 *					 .pid = tacho_child_pid(ch) };
 *	tacho_counters_open(&o, specs, nspecs, &c);          // enable_on_exec + inherit
 *	tacho_child_exec(ch);                                // counting starts at exec
 *	tacho_child_wait(ch, &exit);
 *	tacho_counters_read(c, values, nspecs);
 *
 * docs/lib-counters.md tells more: targets, groups, inheritance, the explainer. */

/* --- 4a. Launching a program (lib/run) ---
 * tacho_child_start forks; the child waits on a pipe until tacho_child_exec releases it,
 * so that counters can be attached to its pid before it runs a single instruction of
 * the program. Its stdin, stdout and stderr are those of the caller, untouched. */

struct tacho_child;

struct tacho_child_opts {
	size_t sz;                  /* sizeof(struct tacho_child_opts) */
	bool forward_signals;       /* from tacho_child_exec until tacho_child_wait returns:
				       SIGINT, SIGTERM, SIGHUP, SIGQUIT sent to this process
				       by another process are passed on to the child; from
				       the terminal (Ctrl-C) the child gets them itself and
				       this process ignores them, so that the caller lives
				       to print its counts. The caller's handlers are
				       restored afterwards. One child at a time. */
	const char *cwd;            /* NULL: the caller's */
};

/* How a program ended. */
struct tacho_exit {
	int status;        /* as a shell says it: the exit code, or 128 + the signal */
	bool exited;       /* it called exit(): code is valid */
	int code;          /* exit code */
	int signal;        /* the signal that killed it, else 0 */
	bool core_dumped;
	uint64_t user_ns, sys_ns;   /* CPU time of the program and its waited-for children */
	long max_rss_kb;
};

/* Forks a child that will run argv[0] (searched in PATH as execvp does) with argv.
 * Returns 0 and *out, or -errno (fork, pipe). The child has not run the program yet.
 * The caller owns *out: tacho_child_free. Not thread-safe with respect to other
 * threads that fork. */
TACHO_API int tacho_child_start(char *const argv[], const struct tacho_child_opts *opts,
				struct tacho_child **out);

/* The child's process id (valid until tacho_child_free). */
TACHO_API pid_t tacho_child_pid(const struct tacho_child *c);

/* Lets the child run the program and waits until the exec has happened or failed.
 * Returns 0 once the program runs; -TACHO_ECHILD when it could not be started, with
 * the reason as *exec_err (e.g. ENOENT: no such program, EACCES: not executable), the
 * child then already reaped; -EINVAL when called twice. exec_err may be NULL. */
TACHO_API int tacho_child_exec(struct tacho_child *c, int *exec_err);

/* Waits for the program to end and fills *st (may be NULL). Forwards signals as the
 * options said. Returns 0, or -errno of wait4, -EINVAL if the child was never
 * released or already waited for. */
TACHO_API int tacho_child_wait(struct tacho_child *c, struct tacho_exit *st);

/* Sends sig to the child. 0 or -errno (-ESRCH once it is reaped). */
TACHO_API int tacho_child_kill(struct tacho_child *c, int sig);

/* Kills (SIGKILL) and reaps a child that was never waited for, then frees. NULL-safe. */
TACHO_API void tacho_child_free(struct tacho_child *c);

/* Describes an ending in words: "exited with status 3", "killed by signal 11
 * (SIGSEGV), core dumped". Returns buf. Thread-safe. */
TACHO_API char *tacho_exit_describe(const struct tacho_exit *st, char *buf, size_t size);

/* Describes why a program could not be started: "cannot run 'frob': no such program
 * in PATH" (exec_err ENOENT), "... permission denied (not executable?)" and so on. */
TACHO_API char *tacho_exec_strerror(const char *program, int exec_err, char *buf, size_t size);

/* --- 4b. Counting ---
 * Targets: what the events watch. */
enum tacho_target {
	TACHO_TARGET_THREAD = 0,   /* one thread: pid is its tid, 0 the calling thread */
	TACHO_TARGET_PROCESS,      /* every thread of process pid (/proc/PID/task when
				      opened), 0 this process */
	TACHO_TARGET_CHILD,        /* a child from tacho_child_start, before tacho_child_exec:
				      counting starts at exec (enable_on_exec) */
	TACHO_TARGET_CPUS,         /* every task on the CPUs listed (all online ones when
				      ncpus is 0); needs privilege at paranoid > 0 */
};

struct tacho_counters_opts {
	size_t sz;                 /* sizeof(struct tacho_counters_opts) */
	enum tacho_target target;
	pid_t pid;                 /* THREAD, PROCESS, CHILD */
	const int *cpus;           /* CPUS: the CPU numbers; NULL with ncpus 0: all online */
	size_t ncpus;
	bool no_inherit;           /* do not follow threads and processes the target creates
				      after the open (by default tacho does, for task targets) */
	bool no_group_read;        /* read each event by itself even inside a group */
};

/* One event to open: its name (for messages), its attributes and its group. Events
 * with the same group number >= 0 are opened as one group, in order, the first one
 * the leader; TACHO_GROUP_NONE opens an event alone. The engine sets the attributes
 * it owns (disabled, inherit, enable_on_exec, read_format counting bits) and keeps
 * the rest (sampling fields included). */
#define TACHO_GROUP_NONE (-1)
struct tacho_counter_spec {
	const char *name;
	struct perf_event_attr attr;
	int group;
};

/* What became of one event. */
enum tacho_count_status {
	TACHO_COUNT_COUNTED = 0,     /* on a counter all the time it was enabled */
	TACHO_COUNT_MULTIPLEXED,     /* on a counter part of the time: value is scaled,
					coverage < 1 says how much it ran */
	TACHO_COUNT_NOT_COUNTED,     /* opened, but never on a counter (time running 0),
					or never enabled: there is no value */
	TACHO_COUNT_NOT_SUPPORTED,   /* could not be opened: err and why say so */
};

/* The stable lowercase name of a status: "counted", "multiplexed", "not counted",
 * "not supported". */
TACHO_API const char *tacho_count_status_name(enum tacho_count_status s);

struct tacho_count {
	const char *name;            /* the spec's name (owned by the counters) */
	enum tacho_count_status status;
	uint64_t raw;                /* the sum of the kernel's counts over CPUs / threads */
	double value;                /* raw for COUNTED, raw * enabled / running summed per
					CPU / thread for MULTIPLEXED, NAN when there is none */
	uint64_t enabled_ns, running_ns;
	double coverage;             /* running / enabled (1.0 when counted, 0 when not) */
	int err;                     /* NOT_SUPPORTED: -errno of perf_event_open or
					-TACHO_E...; else 0 */
	const char *why;             /* NOT_SUPPORTED / NOT_COUNTED: a sentence saying why
					and what to do (owned by the counters); else NULL */
};

struct tacho_counters;

/* Opens the n events of specs on the target. Events that cannot be opened do not fail
 * the call: they read back as NOT_SUPPORTED with the error and its explanation
 * (tacho_counters_explain). A member that cannot join its group is reported that way
 * too, never dropped silently; the rest of the group stays. Counters start disabled,
 * except for TACHO_TARGET_CHILD, where the program's exec enables them.
 * Returns 0 and *out (even when every event failed: read them for the reasons);
 * -EINVAL for bad options, -ESRCH when the target does not exist, -ENOMEM. The caller
 * owns *out (tacho_counters_free). One object must not be used by two threads at once;
 * separate objects are independent. */
TACHO_API int tacho_counters_open(const struct tacho_counters_opts *opts,
				  const struct tacho_counter_spec *specs, size_t n,
				  struct tacho_counters **out);

/* Opens the events of a parsed list (section 3) as tacho_counters_open does, named as
 * the list names them. groups: groups[i] is event i's group number (as in
 * tacho_counter_spec.group), e.g. from the scheduler; NULL keeps the {groups} the user
 * wrote in the list and opens every other event alone. Same returns and ownership. */
TACHO_API int tacho_counters_open_evlist(const struct tacho_counters_opts *opts,
					 const struct tacho_evlist *list, const int *groups,
					 struct tacho_counters **out);

/* Closes every fd and frees. NULL-safe. */
TACHO_API void tacho_counters_free(struct tacho_counters *c);

/* Number of events (as given to open, failed ones included). */
TACHO_API size_t tacho_counters_count(const struct tacho_counters *c);

/* Number of events that opened on at least one CPU or thread. */
TACHO_API size_t tacho_counters_opened(const struct tacho_counters *c);

/* Enable, disable, zero every opened event (one ioctl per group and CPU/thread, with
 * PERF_IOC_FLAG_GROUP). Returns 0 or the first -errno. */
TACHO_API int tacho_counters_enable(struct tacho_counters *c);
TACHO_API int tacho_counters_disable(struct tacho_counters *c);
TACHO_API int tacho_counters_reset(struct tacho_counters *c);

/* Reads every event into out[0..n-1] in the order of the specs (n may be smaller than
 * the count). A group is read with one read(2) per CPU/thread. Returns 0 or -errno
 * of read(2). May be called while counting (a snapshot) or after. */
TACHO_API int tacho_counters_read(struct tacho_counters *c, struct tacho_count *out, size_t n);

/* Explains why perf_event_open(attr) failed with err (negative errno) for a process
 * target on this machine: one clause, lowercase, without the event's name, that names
 * the cause (the paranoid level and what it allows, a missing capability, no PMU in
 * this virtual machine, an event this CPU lacks, breakpoint registers taken, too many
 * open files, ...) and ends with what to do in parentheses. Returns buf. Thread-safe. */
TACHO_API char *tacho_counters_explain(int err, const struct perf_event_attr *attr,
				       char *buf, size_t size);

/* Arithmetic of multiplexing, exposed for tests and for callers that read fds
 * themselves: raw * enabled / running without overflow; NAN when running is 0. */
TACHO_API double tacho_count_scale(uint64_t raw, uint64_t enabled_ns, uint64_t running_ns);

/* --- 4c. What this machine allows (the facts behind `tacho doctor`) --- */

enum tacho_check_state {
	TACHO_CHECK_OK = 0,     /* works */
	TACHO_CHECK_LIMIT,      /* a limitation: text ends with what to do, in parentheses */
	TACHO_CHECK_INFO,       /* a fact worth knowing, neither good nor bad */
};

/* "ok", "limited", "info". */
TACHO_API const char *tacho_check_state_name(enum tacho_check_state s);

struct tacho_check {
	const char *key;        /* stable identifier: "pmu", "vm", "paranoid", "caps",
				   "software", "breakpoints", "tracefs", "rdpmc", "msr",
				   "nmi_watchdog", "mlock", "sample_rate", "tsc",
				   "clocksource", "counters" (static storage) */
	const char *title;      /* for people: "hardware PMU", ... (static storage) */
	enum tacho_check_state state;
	char value[96];         /* the short answer: "none", "2", "yes (KVM)", ... */
	char text[768];         /* one sentence: what it means for measuring, and for
				   TACHO_CHECK_LIMIT what to do */
};

/* Looks at this machine and this user: the hardware PMU (sysfs, CPUID leaf 0xA, and
 * whether a hardware event opens), the counters a task gets, virtualization (CPUID,
 * /sys/hypervisor, DMI), perf_event_paranoid and the capabilities, whether software
 * events, breakpoints and tracepoints open, tracefs, user-space RDPMC (from the mmap
 * page of an event), /dev/cpu/N/msr, the NMI watchdog, perf_event_mlock_kb,
 * perf_event_max_sample_rate, the TSC and the clocksource. Fills at most max checks
 * into out and returns how many there are (more than max: call again with room), or
 * -EINVAL. Takes some tens of ms (it calibrates the TSC once per process, and reads
 * CPUID on every CPU). Not thread-safe with respect to the calling thread's CPU
 * affinity, which it restores. */
TACHO_API int tacho_machine_check(struct tacho_check *out, size_t max);

/* --- 4s. Scheduling: which events share a run of the program [owner: stat] ---
 * A core PMU has a few general-purpose counters (2 on the Pentium, 4 or 8 on Intel
 * cores, 6 on AMD Zen) and, on Intel, fixed counters for instructions, cycles and
 * ref-cycles. More events than counters means either multiplexing (the kernel rotates
 * groups and scales the counts) or more runs of the program (P5Stat's way, seed 000).
 * The scheduler plans the runs; tacho_stat (4m) executes them. Events that need no
 * counter of the core PMU (software, tracepoints, msr, uprobes, other PMUs) are
 * counted in the first run; breakpoints take one of the four debug registers each. */

struct tacho_pmu_counters {
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
};

/* The counters a CPU described by info offers a task: CPUID leaf 0xA on Intel (the
 * smallest of every core type on hybrid parts), 0x8000_0022 or the PerfCtrExtCore flag
 * on AMD, two on P5/P6 parts before leaf 0xA. Pure: test it on dumps. 0 or -EINVAL. */
TACHO_API int tacho_pmu_counters_from_cpu(const struct tacho_cpu_info *info,
					  struct tacho_pmu_counters *out);

/* Adjusts *c for the kernel's NMI watchdog (a pinned cycles event on every CPU), when
 * active: it takes fixed counter 1 on Intel, a general counter elsewhere, and says so
 * in c->note. 0 or -EINVAL. Pure. */
TACHO_API int tacho_pmu_counters_set_watchdog(struct tacho_pmu_counters *c, bool active);

/* This machine's counters: the few CPUID leaves that decide them, read on the calling
 * CPU (not a full dump: cheap enough for every `tacho stat`), decoded, then the NMI
 * watchdog from /proc/sys/kernel/nmi_watchdog. Off x86, *out says "unknown". 0,
 * -ENOMEM. Thread-safe. */
TACHO_API int tacho_pmu_counters_detect(struct tacho_pmu_counters *out);

/* A plan: nruns runs of the program, each with perf groups of event indices. */
struct tacho_schedule;

/* Where one event of the list goes. */
struct tacho_sched_slot {
	int run;                 /* 0-based run of the program; -1: never scheduled */
	int group;               /* 0-based perf group within the run; -1 when unscheduled */
	bool fixed;              /* planned on a fixed counter */
	const char *why;         /* NULL when scheduled; else why it can never be counted
				    here (it is never opened), owned by the schedule */
};

/* Flags of tacho_schedule_new. */
#define TACHO_SCHED_MULTIPLEX 0x1u  /* one run; groups that each fit the counters,
				       rotated by the kernel and scaled (breakpoints beyond
				       four still need another run: the kernel cannot
				       rotate them) */

/* Plans how to count every event of list with the counters pmu describes. Without
 * TACHO_SCHED_MULTIPLEX: first fit, in list order (cycles and instructions, and the
 * groups holding them, before the rest, so that they share the first run with the
 * clocks), into as few runs as keep every run within the counters, so nothing is
 * multiplexed; a {group} of the user stays one perf
 * group; the counter events of a run form one perf group (one read). An event or
 * group that can never fit (wider than the counters, a fixed-only event without its
 * fixed counter) gets a slot with run -1 and a reason, and is never opened. With no
 * hardware PMU (pmu->none) or unknown counters, counter events are planned alone in
 * the first run, so that the kernel's refusal (explained by the engine) or its
 * multiplexing (with coverage) is what the user sees. 0 and *out (free it with
 * tacho_schedule_free), -EINVAL or -ENOMEM. Thread-safe. */
TACHO_API int tacho_schedule_new(const struct tacho_evlist *list,
				 const struct tacho_pmu_counters *pmu, unsigned flags,
				 struct tacho_schedule **out);
TACHO_API void tacho_schedule_free(struct tacho_schedule *s);

/* Reading a plan (0 / NULL for out-of-range arguments). Pointers live as long as s. */
TACHO_API unsigned tacho_schedule_nruns(const struct tacho_schedule *s);
TACHO_API unsigned tacho_schedule_nevents(const struct tacho_schedule *s);
TACHO_API unsigned tacho_schedule_ngroups(const struct tacho_schedule *s, unsigned run);
/* The event indices of one group, leader first; *n their number. */
TACHO_API const unsigned *tacho_schedule_group(const struct tacho_schedule *s, unsigned run,
					       unsigned group, unsigned *n);
TACHO_API const struct tacho_sched_slot *tacho_schedule_slot(const struct tacho_schedule *s,
							     unsigned ev);
TACHO_API const struct tacho_pmu_counters *tacho_schedule_counters(const struct tacho_schedule *s);
/* --- end 4s --- */

/* --- 4m. Derived metrics and stat sessions [owner: stat] ---
 * tacho_stat runs a program (or watches a process, a thread, CPUs), executes a schedule
 * (4s) and aggregates: what `tacho stat` prints, computed the same way for any caller. */

/* One counted event as the metrics see it. value is the count itself, unscaled
 * (task-clock and cpu-clock in nanoseconds). */
struct tacho_metric_input {
	const char *name;
	struct perf_event_attr attr;   /* type, config and the exclude_* bits are used */
	double value;
	bool has_value;                /* false: not counted; the event is then ignored */
};

/* A derived value. */
struct tacho_metric {
	char name[80];     /* "IPC", "branch-miss ratio", "GHz", "CPUs utilized",
			      "page-faults rate", "avg duration of NAME" */
	char unit[24];     /* "insn per cycle", "%", "GHz", "/sec", "cycles", ... */
	char expr[200];    /* how it was computed: "instructions / cycles" */
	double value;      /* always finite */
	int inputs[2];     /* indices of the inputs; -1 for the wall time */
};

/* Computes every metric whose inputs all have values and the same privilege rings:
 * IPC, CPI, branch-, cache-, L1d-, LLC- and dTLB-miss ratios, stalled-cycle shares,
 * GHz (cycles per task-clock nanosecond), CPUs utilized (task-clock / wall_ns), the
 * rate per second of every event that is not a clock (over task-clock, or wall_ns
 * when task-clock was not counted), and the average duration in cycles of a raw x86
 * event counted both with cmask=1 (its cycles) and with cmask=1,edge or plain (its
 * occurrences). A zero denominator gives no metric. wall_ns <= 0: unknown. Returns 0
 * and *out (malloc'd, the caller free()s it; NULL when *nout is 0), -EINVAL, -ENOMEM.
 * Pure and thread-safe. */
TACHO_API int tacho_metrics_compute(const struct tacho_metric_input *in, size_t n,
				    double wall_ns, struct tacho_metric **out, size_t *nout);

/* Called while counting with -I: the counts of one interval. */
struct tacho_stat_interval {
	double t_s;                       /* end of the interval, seconds since counting began */
	double len_s;                     /* its length */
	size_t n;                         /* events, as in the session's list */
	const struct tacho_count *counts; /* per event: value, status and coverage of the
					     interval alone (deltas); status NOT_SUPPORTED
					     / NOT_COUNTED as in tacho_counters_read */
};
typedef void tacho_stat_interval_fn(void *arg, const struct tacho_stat_interval *iv);

/* Called before each run of the program: done runs of total (warm-up runs included). */
typedef void tacho_stat_progress_fn(void *arg, unsigned done, unsigned total);

struct tacho_stat_opts {
	size_t sz;                      /* sizeof(struct tacho_stat_opts) */
	const struct tacho_evlist *events;
	enum tacho_target target;       /* CHILD: run argv (and count it); PROCESS, THREAD:
					   pid; CPUS: cpus (ncpus 0: all), while argv runs
					   or, without argv, until *stop */
	char *const *argv;              /* the program, NULL-terminated */
	pid_t pid;
	const int *cpus;
	size_t ncpus;
	unsigned repeat;                /* counted repetitions (0 means 1) */
	unsigned warmup;                /* runs of the program before, not counted */
	unsigned sched_flags;           /* TACHO_SCHED_MULTIPLEX */
	const struct tacho_pmu_counters *pmu; /* NULL: tacho_pmu_counters_detect() */
	unsigned interval_ms;           /* > 0: call on_interval every interval_ms */
	tacho_stat_interval_fn *on_interval;
	void *interval_arg;
	tacho_stat_progress_fn *on_progress;
	void *progress_arg;
	volatile int *stop;             /* non-NULL: when it becomes non-zero (a signal
					   handler of the caller's), counting stops, the
					   program is left to end (PROCESS/THREAD/CPUS: not
					   touched) and what was counted is kept */
	int *exec_err;                  /* non-NULL: receives the errno of a failed exec
					   when -TACHO_ECHILD is returned (ENOENT: no such
					   program, EACCES: not executable); a caller built
					   before this field existed passes a smaller sz */
};

/* One event's result over every repetition. */
struct tacho_stat_event {
	const char *name;
	const char *unit;                /* of value and the statistics ("" or "msec") */
	enum tacho_count_status status;  /* COUNTED: every repetition counted it whole;
					    MULTIPLEXED: some value, but not always whole
					    (coverage says how much); NOT_COUNTED /
					    NOT_SUPPORTED: no value at all (why says why) */
	double value;                    /* mean over the repetitions with a value, in unit
					    (count x the event's scale); NAN when none */
	double coverage;                 /* mean of running/enabled (0 for a repetition
					    without a value) */
	unsigned nvalues;                /* repetitions that gave a value */
	struct tacho_stat_summary {
		double mean, stddev, min, median, max;
		double spread_pct;       /* 100 (max - min) / |mean| */
		double rsd_pct;          /* 100 stddev / |mean| */
	} stats;                         /* over the values; NAN where undefined */
	const double *values;            /* per repetition, NAN where none (repeat entries) */
	int err;                         /* NOT_SUPPORTED: the open's error */
	const char *why;                 /* a sentence for NOT_SUPPORTED / NOT_COUNTED */
	int run;                         /* the schedule's run (-1: never scheduled) */
};

struct tacho_stat;

/* Runs the session: warm-up runs, then repeat x (the schedule's runs) runs of the
 * program, each counting its share of the events, and aggregates. A program killed by
 * a signal, or *stop, ends the session early: what was counted is kept
 * (tacho_stat_repeats says how many repetitions completed; interrupted is set).
 * Refused with -EINVAL and a diagnostic: no events; a target other than CHILD (or CPUS
 * with a program) with a schedule of several runs (a process cannot be run again: use
 * TACHO_SCHED_MULTIPLEX); interval_ms with several runs (one time line needs one
 * run: use TACHO_SCHED_MULTIPLEX or fewer events); repeat > 1 without a program.
 * -TACHO_ECHILD when the program cannot be started, *diag saying why ("cannot run
 * 'frob': no such program in PATH"); -ESRCH for a PID that does not exist; -ENOMEM.
 * On success *out holds the results (tacho_stat_free). Not thread-safe with other
 * code of the process that forks or handles SIGCHLD; callbacks run on a helper thread
 * while a program runs. */
TACHO_API int tacho_stat_run(const struct tacho_stat_opts *opts, struct tacho_stat **out,
			     struct tacho_diag *diag);
TACHO_API void tacho_stat_free(struct tacho_stat *s);

TACHO_API size_t tacho_stat_nevents(const struct tacho_stat *s);
TACHO_API const struct tacho_stat_event *tacho_stat_event(const struct tacho_stat *s, size_t i);
/* The metrics of the mean values (tacho_metrics_compute over them and the mean wall
 * time). */
TACHO_API size_t tacho_stat_nmetrics(const struct tacho_stat *s);
TACHO_API const struct tacho_metric *tacho_stat_metric(const struct tacho_stat *s, size_t i);
/* Completed counted repetitions, runs of the program per repetition (the schedule's),
 * the mean wall time of one run (seconds; NAN when none), whether it ended early. */
TACHO_API unsigned tacho_stat_repeats(const struct tacho_stat *s);
TACHO_API unsigned tacho_stat_runs(const struct tacho_stat *s);
TACHO_API double tacho_stat_wall_s(const struct tacho_stat *s);
TACHO_API bool tacho_stat_interrupted(const struct tacho_stat *s);
/* How the last run of the program ended; NULL when no program ran. */
TACHO_API const struct tacho_exit *tacho_stat_exit(const struct tacho_stat *s);
/* The plan that was executed. */
TACHO_API const struct tacho_schedule *tacho_stat_schedule(const struct tacho_stat *s);
/* --- end 4m --- */

/* ==================================================================================
 * 5. The time-stamp counter
 * ================================================================================== */
/* The TSC counts at a constant rate on every CPU made in the last fifteen years
 * ("invariant TSC", CPUID.8000_0007h:EDX[8]); reading it costs a few nanoseconds, far
 * less than any system call. The seeds' StartTSC/EndTSC stalled the pipeline with CPUID
 * around RDTSC; in a virtual machine CPUID is a VM exit (~7 us), so tacho fences with
 * LFENCE instead (SDM Vol. 2B, RDTSC/RDTSCP: LFENCE before RDTSC waits for earlier
 * instructions; LFENCE after RDTSCP keeps later ones from starting before the read). */

/* Out-of-line reads, for callers that do not want inline assembly or may run where
 * RDTSCP is missing: read_begin is `lfence; rdtsc`; read_end is `rdtscp; lfence`, or
 * `lfence; rdtsc; lfence` without RDTSCP. Off x86 both return CLOCK_MONOTONIC_RAW in
 * nanoseconds. Thread-safe. */
TACHO_API uint64_t tacho_tsc_read_begin(void);
TACHO_API uint64_t tacho_tsc_read_end(void);

/* A begin read, `lfence; rdtsc`, inline for hot paths: no earlier instruction is
 * still executing when the counter is sampled. Thread-safe. */
static inline uint64_t tacho_tsc_begin(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return tacho_tsc_read_begin();
#endif
}

/* An end read, `rdtscp; lfence`, inline for hot paths: RDTSCP waits for every earlier
 * instruction, the LFENCE holds back later ones. Needs RDTSCP (tacho_tsc_info.rdtscp;
 * every x86-64 CPU since 2008). Thread-safe. */
static inline uint64_t tacho_tsc_end(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	(void)aux;
	return ((uint64_t)hi << 32) | lo;
#else
	return tacho_tsc_read_end();
#endif
}

/* A short name for a source (enum tacho_tsc_source, section 2b: the decoder's and this
 * section's): "cpuid-15h", "cpuid-15h+sdm-table", "cpuid-15h+16h", "hypervisor",
 * "kernel", "cpuid-16h", "calibrated", "unknown". Never NULL. Thread-safe. */
TACHO_API const char *tacho_tsc_source_name(enum tacho_tsc_source src);

/* What is known about this machine's TSC. */
struct tacho_tsc_info {
	bool present;        /* CPUID.1:EDX[4] */
	bool rdtscp;         /* CPUID.8000_0001h:EDX[27] */
	bool invariant;      /* CPUID.8000_0007h:EDX[8]: constant rate in every P/C-state */
	bool hypervisor;     /* CPUID.1:ECX[31]: running in a virtual machine */
	double hz;           /* ticks per second; 0 when no source gave one */
	enum tacho_tsc_source source;
	double cpuid_hz;     /* what CPUID (15h/16h/hypervisor) says, 0 if nothing */
	double kernel_hz;    /* what the kernel's conversion says, 0 if not offered */
	bool kernel_time;    /* the perf mmap page offered cap_user_time */
	uint32_t time_mult;  /* kernel conversion: ns = time_zero + ((ticks * mult) >> shift) */
	uint16_t time_shift;
	uint64_t time_zero;  /* valid when kernel_time_zero */
	bool kernel_time_zero;
	double calibrated_hz; /* measured against CLOCK_MONOTONIC_RAW over ~20 ms (always
				 measured, as a cross-check; 0 if the clock failed) */
	double pair_ticks;   /* cost of tacho_tsc_begin()+tacho_tsc_end() back to back: the
				median of 2001 pairs, measured once; what to subtract */
	double pair_ns;      /* the same in nanoseconds */
};

/* Fills *out with what tacho knows about the TSC. The first call measures (about
 * 25 ms: the calibration and the pair cost) and caches; later calls copy. Returns 0,
 * -TACHO_ENOTX86 off x86 or -ENODEV without a TSC (*out still filled as far as known).
 * Thread-safe. */
TACHO_API int tacho_tsc_info(struct tacho_tsc_info *out);

/* The TSC frequency in Hz that CPUID alone gives, for dumps taken elsewhere: leaf 15h
 * (with the SDM's crystal table or 16h's base when 15h lacks the crystal), then the
 * hypervisor's leaf 4000_0010h, then 16h's nominal base, as tacho_cpu_decode reads
 * them from the first CPU of the dump (idx must be 0). Pure. Returns 0 and *hz, *src;
 * -TACHO_ENODATA when the dump does not say; -EINVAL for another idx. */
TACHO_API int tacho_tsc_freq_cpuid(const struct tacho_cpuid_dump *dump, unsigned idx,
				   double *hz, enum tacho_tsc_source *src);

/* The kernel's TSC frequency from a perf mmap page's time_mult and time_shift:
 * 1e9 * 2^shift / mult. 0 when mult is 0. Pure. */
TACHO_API double tacho_tsc_kernel_hz(uint32_t time_mult, uint16_t time_shift);

/* Ticks to nanoseconds at the frequency tacho_tsc_info found (ticks * 1e9 / hz);
 * 0 when no frequency is known. Thread-safe (the first call may measure, as above). */
TACHO_API double tacho_tsc_to_ns(uint64_t ticks);

/* --- 5b. Clocks: every way a program can read the time, and what it costs --- */

#define TACHO_CLOCK_SURVEY_MAX 8

struct tacho_clock_info {
	const char *name;      /* "tsc", "CLOCK_MONOTONIC", ... (static storage) */
	int clock_id;          /* the clockid_t, or -1 for the TSC */
	int err;               /* 0, or why it could not be read (then the figures are 0) */
	double resolution_ns;  /* clock_getres(); for the TSC, one tick */
	double read_ns;        /* the median cost of one read (batches of 32, timed with
				  the TSC or CLOCK_MONOTONIC_RAW, the timer's own cost removed) */
};

/* Surveys the TSC, CLOCK_MONOTONIC, _RAW, _COARSE, CLOCK_REALTIME,
 * CLOCK_PROCESS_CPUTIME_ID and CLOCK_THREAD_CPUTIME_ID, in that order, filling at most
 * max entries. Returns the number filled (7 when max allows). Takes some ms.
 * Thread-safe. */
TACHO_API int tacho_clock_survey(struct tacho_clock_info *out, size_t max);

/* ==================================================================================
 * 6. Regions and the microbenchmark harness
 * ================================================================================== */
/* --- 6a. Regions ---
 * Named sections of a program, timed with the TSC and counted with any events of the
 * -e grammar, from any thread, nestable, with the cost of measuring subtracted (the
 * seeds' StartProfile/EndProfile and PmonStat sections):
 *
 *	tacho_region_begin("parse");
 *	parse(buf);
 *	tacho_region_end("parse");
 *
 *	$ TACHO_EVENTS=page-faults,task-clock TACHO_OUTPUT=out.json ./prog
 *
 * The events come from tacho_regions_init, else from the environment variable
 * TACHO_EVENTS; with none, regions measure time only. Each thread opens its own
 * counters on its first region (one perf group, read with RDPMC through the mmap pages
 * where the kernel allows it, else with one read(2)); no lock is taken on the hot path.
 * At set-up tacho measures what an empty region costs, inside the region and, for
 * nesting, as seen by the enclosing one (the median of 301 pairs, per event), and
 * subtracts it from every call: an empty region reads 0 events and about 0 ns, and a
 * region that stores N times to a variable watched by a breakpoint (mem:ADDR:w) reads
 * exactly N. Totals that the subtraction takes below zero are clamped at 0 and the
 * report says so.
 *
 * At exit (or at tacho_regions_write) a report merged over threads goes to the file
 * named by TACHO_OUTPUT (.json, .csv, anything else a table) or to stderr. JSON:
 *   {"version": 1, "regions": [{"name": N, "calls": C, "time_ns": T,
 *                               "events": {EVENT: TOTAL, ...}}, ...],
 *    "detail": [...per-call statistics, exclusive figures, ticks, threads...],
 *    "measurement": {...how it was measured, what was subtracted...},
 *    "notes": [...]}
 * EVENT is spelled as in TACHO_EVENTS; TOTAL is null for an event that could not be
 * counted (the notes say why). A bad TACHO_EVENTS never stops the program: regions
 * fall back to time only, the message goes to the log callback and into the report's
 * notes, and, when the report goes to a file, once to stderr as well at report time
 * (the report at exit is the one place where regions print, by design). After fork()
 * the child starts without the parent's figures or counters and writes no report at
 * exit (it may call tacho_regions_write). */

/* Explicit set-up, instead of the environment. Every field may be 0/NULL. */
struct tacho_regions_opts {
	size_t sz;               /* sizeof(struct tacho_regions_opts) */
	const char *events;      /* the -e grammar; NULL: $TACHO_EVENTS; "": time only */
	const char *output;      /* report file; NULL: $TACHO_OUTPUT; "-": stderr */
	bool no_report_at_exit;  /* do not write the report at exit */
};

/* Sets regions up now (otherwise the first tacho_region_begin does, from the
 * environment). Returns 0; -EBUSY when regions are already set up; -TACHO_EPARSE /
 * -TACHO_ENOEVENT ... with *diag for a bad spec (regions then stay unconfigured and
 * the next call may try again). Call it before threads use regions. */
TACHO_API int tacho_regions_init(const struct tacho_regions_opts *opts, struct tacho_diag *diag);

/* Enters / leaves the region called name on the calling thread. Regions nest: end
 * must name the innermost open region of this thread. Names are compared as strings
 * (the pointer is remembered to make the common case fast). Returns 0; -EINVAL for
 * NULL or an end that does not match the innermost open region (nothing is recorded,
 * the region stays open); -TACHO_ERANGE beyond 64 levels; -ENOMEM; -errno of the
 * counter read. Thread-safe; lock-free after the thread's first call. */
TACHO_API int tacho_region_begin(const char *name);
TACHO_API int tacho_region_end(const char *name);

/* The scoped form for C (GCC and Clang): the region ends when the enclosing block
 * does, however it is left.
 *	{ TACHO_REGION_SCOPE("lookup"); ... return x; }   // ended on return */
static inline void tacho_region_scope_end_(const char **name)
{
	if (*name)
		tacho_region_end(*name);
}
#define TACHO_REGION_CAT2_(a, b) a##b
#define TACHO_REGION_CAT_(a, b) TACHO_REGION_CAT2_(a, b)
#define TACHO_REGION_SCOPE(name)                                                         \
	const char *TACHO_REGION_CAT_(tacho_region_scope_, __LINE__)                      \
		__attribute__((cleanup(tacho_region_scope_end_), unused)) =               \
			(tacho_region_begin(name) == 0 ? (name) : (const char *)0)

/* One measured quantity of a region (TSC ticks or one event), merged over threads,
 * after the subtraction of the cost of measuring. */
struct tacho_region_value {
	int64_t total;       /* inclusive total, clamped at 0 */
	int64_t exclusive;   /* total without the nested regions, clamped at 0 */
	double mean, stddev; /* per call, inclusive (stddev: sample, 0 for one call) */
	double min, max;     /* per call, inclusive (may be below 0 from noise) */
	bool clamped;        /* a total went below zero and was clamped */
};

struct tacho_region_stat {
	const char *name;
	uint64_t calls;
	unsigned threads;                  /* threads that entered it */
	struct tacho_region_value ticks;   /* TSC ticks */
	double time_ns, exclusive_ns;      /* ticks.total / .exclusive in nanoseconds */
	const struct tacho_region_value *events;  /* [tacho_region_report_nevents] */
};

/* A snapshot of every region of every thread, merged by name (sorted by name). */
struct tacho_region_report;

/* Takes the snapshot. Figures of a thread that is inside a region at this moment may
 * be torn by one call; take it when threads are quiet (at exit they are). 0 and *out
 * (tacho_region_report_free), -ENOMEM. Thread-safe. */
TACHO_API int tacho_regions_report(struct tacho_region_report **out);
TACHO_API void tacho_region_report_free(struct tacho_region_report *r);
TACHO_API size_t tacho_region_report_count(const struct tacho_region_report *r);
/* The i-th region, or NULL past the end; by name, or NULL. Valid while r lives. */
TACHO_API const struct tacho_region_stat *tacho_region_report_get(const struct tacho_region_report *r,
								  size_t i);
TACHO_API const struct tacho_region_stat *tacho_region_report_find(const struct tacho_region_report *r,
								   const char *name);
/* The events (as spelled in the spec) and whether they were counted:
 * TACHO_COUNT_COUNTED, _MULTIPLEXED (values are raw deltas while on the counter),
 * _NOT_SUPPORTED (why says why; values are 0 and the writers print null),
 * _NOT_COUNTED (no thread entered a region). */
TACHO_API size_t tacho_region_report_nevents(const struct tacho_region_report *r);
TACHO_API const char *tacho_region_report_event(const struct tacho_region_report *r, size_t i);
TACHO_API enum tacho_count_status tacho_region_report_status(const struct tacho_region_report *r,
							     size_t i, const char **why);
/* Messages for the reader, one per line ("" when none): a bad TACHO_EVENTS, events
 * that could not be counted, clamped totals, unbalanced ends. */
TACHO_API const char *tacho_region_report_notes(const struct tacho_region_report *r);

enum tacho_report_format {
	TACHO_REPORT_TABLE = 0,
	TACHO_REPORT_CSV,
	TACHO_REPORT_JSON,
};
/* The format a file name asks for: .json, .csv, else a table. */
TACHO_API enum tacho_report_format tacho_report_format_of(const char *path);

/* Writes the report in fmt to f. 0 or -EIO. */
TACHO_API int tacho_region_report_write(const struct tacho_region_report *r, FILE *f,
					enum tacho_report_format fmt);

/* Takes a snapshot and writes it where the report at exit would go (TACHO_OUTPUT or
 * the output option, else stderr). 0, -errno of the file, -ENOMEM. Thread-safe. */
TACHO_API int tacho_regions_write(void);

/* Forgets every figure recorded so far (events, calibration and counters stay). Call
 * it only while no thread is inside a region. */
TACHO_API void tacho_regions_reset(void);

/* --- 6b. The microbenchmark harness ---
 * Runs a function many times and says how long one call takes, in TSC ticks and ns,
 * with counters when asked: warm-up runs first, then trials, each timed with the TSC and
 * counted with the events. The cost of measuring is the median of as many empty trials
 * and is subtracted; or, with the difference method, each trial runs k and 2k calls and
 * reports (T(2k) - T(k)) / k, so that every fixed cost cancels. Trials above
 * median + cull_k * max(MAD, 1 tick) (an interrupt, a preemption) are culled, and the
 * result states that rule. The mode is there for code that should take constant time
 * (the seeds' "mode of ~100 trials"). */

typedef void tacho_bench_fn(void *arg);

struct tacho_bench_opts {
	size_t sz;            /* sizeof(struct tacho_bench_opts) */
	unsigned warmup;      /* untimed runs first (0: 10) */
	unsigned trials;      /* timed trials (0: 101) */
	unsigned reps;        /* calls of fn per trial, k (0: 1) */
	bool difference;      /* each trial runs k and 2k calls: (T(2k) - T(k)) / k */
	const char *events;   /* the -e grammar; NULL or "": time only */
	double cull_k;        /* 0: 10; negative: no culling */
	double mode_bin;      /* bin width of the mode, per call (0: 1 tick, 1 count) */
};

/* Statistics of per-call values over the kept trials. */
struct tacho_bench_stats {
	size_t n;
	double min, median, mode, mean, stddev, max;
	double p10, p25, p75, p90, p99;
};

/* What the environment says about trusting the figures. */
#define TACHO_BENCH_WARN_MAX 8
struct tacho_bench_env {
	char governor[32];    /* cpufreq governor of CPU 0; "" when the VM has none */
	bool vm;              /* CPUID.1:ECX[31] */
	bool tsc_invariant;
	double loadavg1;      /* /proc/loadavg */
	int runnable;         /* runnable tasks now besides this one (/proc/loadavg) */
	int ncpus;            /* online CPUs */
	unsigned nwarnings;
	char warnings[TACHO_BENCH_WARN_MAX][192];   /* one sentence each */
};

/* Looks at the machine: the frequency governor, a hypervisor, the TSC's invariance,
 * other load. Fills *out, with a warning per reason not to trust timings. 0 always
 * (what cannot be read is left empty). Thread-safe. */
TACHO_API int tacho_bench_env_check(struct tacho_bench_env *out);

struct tacho_bench_result {
	unsigned trials, kept, culled, reps;
	bool difference;
	char cull_rule[128];              /* the rule, in words */
	struct tacho_bench_stats ticks;   /* per call */
	struct tacho_bench_stats ns;      /* per call */
	double overhead_ticks;            /* subtracted from every trial (0 with the
					     difference method) */
	double tsc_hz;
	size_t nevents;
	char **event_names;               /* as spelled in the spec */
	struct tacho_bench_stats *events; /* per call; n = 0 for events not counted */
	char **event_why;                 /* NULL, or why the event is not counted */
	struct tacho_bench_env env;
};

/* Runs fn(arg) as opts say (NULL: the defaults) on the calling thread. Returns 0 and
 * *out (free with tacho_bench_result_free); -EINVAL (no fn, opts->sz too small, k
 * with 2k overflowing); -TACHO_EPARSE ... with *diag for a bad events spec; -ENOMEM;
 * -errno of a counter read. Events that cannot be counted here do not fail the run:
 * their n is 0 and event_why says why. Thread-safe (each call measures its own
 * thread). */
TACHO_API int tacho_bench_run(tacho_bench_fn *fn, void *arg, const struct tacho_bench_opts *opts,
			      struct tacho_bench_result **out, struct tacho_diag *diag);
TACHO_API void tacho_bench_result_free(struct tacho_bench_result *r);

/* Writes the result as a table (statistics per quantity, the rule, the warnings) or as
 * JSON ({"version": 1, "trials", "kept", "culled", "reps", "difference",
 * "cull_rule", "overhead_ticks", "ticks": {STATS}, "ns": {STATS},
 * "events": {NAME: {STATS} | null}, "warnings": [...]}). 0 or -EIO. */
TACHO_API int tacho_bench_result_write(const struct tacho_bench_result *r, FILE *f,
				       enum tacho_report_format fmt);

/* ==================================================================================
 * 7. Sampling
 * ================================================================================== */
/* @@section-sampling@@ */
/* Event-based and time-based sampling (VTune's EBS and TBS, seed 004; perf record and
 * perf report today): every Nth event, or every millisecond of CPU time, the kernel
 * notes where the program was; tacho writes that to a record file as it goes and turns
 * it into hot spots by function, library, source line and instruction.
 * docs/lib-sampling.md tells more; docs/record-format.md describes the file. */

/* --- 7a. Recording --- */
struct tacho_record_opts {
	size_t sz;                  /* sizeof(struct tacho_record_opts) */
	const char *events;         /* an event spec of the grammar (section 3); NULL:
				       cycles where there is a core PMU, else cpu-clock */
	uint64_t period;            /* sample every period events (perf's -c) */
	unsigned freq;              /* or: this many samples per second, the kernel adjusting
				       the period (perf's -F). With neither: the clocks
				       (cpu-clock, task-clock) sample every 1/rate s of CPU
				       time; other events start with a provisional period,
				       are counted for calibrate_ms, then get the period that
				       gives about rate samples per second */
	bool callchain;             /* record call chains (user stacks by frame pointers) */
	const char *output;         /* the record file; NULL: "tacho.rec" */
	char *const *argv;          /* the program to start and record, NULL-terminated */
	pid_t pid;                  /* or an existing process (every thread of it) */
	bool system_wide;           /* or every CPU (with argv: while the program runs) */
	unsigned mmap_pages;        /* data pages of each ring (a power of two); 0: 128 */
	unsigned flush_ms;          /* the longest time between writes to the file; 0: 200 */
	unsigned calibrate_ms;      /* the calibration window; 0: 100 */
	unsigned rate;              /* samples per second aimed at; 0: 1000 */
	volatile int *stop;         /* when *stop becomes non-zero (a signal number, set by
				       the caller's signal handler): with a program, the
				       signal is passed on to it, *stop is cleared (an
				       atomic exchange) and recording goes on until it
				       ends; if *stop becomes non-zero again while it runs,
				       the program is killed with SIGKILL (said through
				       notify) and the file still finished. Otherwise
				       recording stops */
	void (*notify)(void *arg, const char *msg);  /* what tacho chose (the period, the
				       calibration), as it happens; NULL: the log at INFO */
	void *notify_arg;
};

struct tacho_record_result {
	uint64_t samples;           /* samples written */
	uint64_t lost;              /* samples the kernel dropped (full ring), from its
				       PERF_RECORD_LOST records, plus, for period-1
				       events, those the count says were due but that no
				       record reported (a ring still full at the end,
				       throttling): never hidden */
	uint64_t throttled;         /* times the kernel throttled an event */
	uint64_t bytes;             /* size of the file */
	bool ran;                   /* the program was started */
	struct tacho_exit exit;     /* how it ended (when ran) */
	int exec_err;               /* errno of a failed exec (then -TACHO_ECHILD) */
	char choice[256];           /* the last sentence about the period tacho chose */
};

/* Records samples of opts->events on the target into opts->output, writing the file as
 * the recording goes (every flush_ms at the latest), so that a recording killed at any
 * moment reads up to its last write. Returns when the program (or the process) ends,
 * with no fixed delay, or when *opts->stop is set without a program. Returns 0 (also
 * when the program failed: see res->exit), -TACHO_ECHILD when the program could not be
 * started (res->exec_err), the grammar's errors for a bad spec, -errno of
 * perf_event_open with an explanation in *diag, or -errno of writing the file. Starts a
 * child and changes no signal disposition; not thread-safe with other forks. */
TACHO_API int tacho_record(const struct tacho_record_opts *opts, struct tacho_record_result *res,
			   struct tacho_diag *diag);

/* --- 7b. Reports --- */
/* A loaded recording, symbolized on demand (ELF symbols, separate debug info, source
 * lines through elfutils; the vDSO from the copy in the file; the kernel from
 * /proc/kallsyms when it was recorded in this boot). Opaque. */
struct tacho_profile;

/* Reads a record file. A file that ends early (a recording that was killed, or cut
 * short) loads up to its last complete record and says so in tacho_profile_info.
 * 0 and *out, or -errno (file), -TACHO_ECORRUPT (not a recording, a bad checksum, an
 * impossible record), -TACHO_EVERSION, -TACHO_ETRUNC (shorter than the header), with
 * *diag naming the file and the byte offset. The caller frees it with
 * tacho_profile_free. Not thread-safe on one profile. */
TACHO_API int tacho_profile_load(const char *path, struct tacho_profile **out,
				 struct tacho_diag *diag);
TACHO_API void tacho_profile_free(struct tacho_profile *p);

struct tacho_profile_info {
	uint64_t samples;           /* samples of the selected event (the first by default) */
	uint64_t all_samples;       /* samples of every event in the file */
	unsigned nevents;           /* events recorded */
	uint64_t lost;              /* samples the kernel reported lost */
	bool truncated;             /* the file ends early (no final record) */
	uint64_t good_bytes;        /* bytes read up to the last complete record */
	uint64_t file_bytes;
	const char *event;          /* the selected event's name */
	uint64_t period;            /* its period (the calibrated one if it changed) */
	bool freq;                  /* period is a frequency */
	const char *command;        /* what was recorded */
	int exit_status;            /* the program's, as a shell says it; -1 unknown */
	const char *kernel_note;    /* why kernel addresses are not symbolized, or NULL */
};
/* Strings live as long as the profile. */
TACHO_API void tacho_profile_info(const struct tacho_profile *p, struct tacho_profile_info *out);
/* Reports (rows, annotate, exports) are about one event of the file at a time: the
 * first one unless this selects another by name. 0 or -ENOENT. */
TACHO_API int tacho_profile_select_event(struct tacho_profile *p, const char *name);

/* C++ names (Itanium ABI, "_ZN3foo3barEv") are shown demangled ("foo::bar()") in rows,
 * annotate and the exports, unless this turns it off (on: true, the default). The
 * demangler is libstdc++'s __cxa_demangle, loaded with dlopen at first use: libtacho
 * does not link the C++ runtime, and without libstdc++.so.6 names stay as they are.
 * Row strings handed out before a change stay valid. Not thread-safe on one profile. */
TACHO_API void tacho_profile_set_demangle(struct tacho_profile *p, bool on);

enum tacho_sort {
	TACHO_SORT_SYMBOL = 0,      /* function and binary */
	TACHO_SORT_DSO,             /* binary (executable, library, [kernel], [vdso]) */
	TACHO_SORT_LINE,            /* source file and line */
	TACHO_SORT_ADDRESS,         /* instruction */
};

struct tacho_profile_row {
	const char *symbol;         /* "[unknown]" when there is none */
	const char *dso;            /* path of the binary, "[kernel]", "[vdso]", "[unknown]" */
	const char *file;           /* source file (TACHO_SORT_LINE, ADDRESS), or NULL */
	int line;                   /* its line, 0 when unknown */
	uint64_t address;           /* ELF address (TACHO_SORT_ADDRESS), else 0 */
	uint64_t samples;           /* self samples; with children: samples whose stack holds
				       this function anywhere */
	uint64_t self;              /* samples in the function itself */
	uint64_t events;            /* the events its samples stand for: the sum of their
				       periods */
	double percent;             /* events / all events * 100 (perf's "Overhead"); with
				       a fixed period the same as the share of samples */
};

/* Aggregates the samples of the selected event by sort key, most events first (then
 * samples, then name). children:
 * count a function for every sample with it anywhere on the call chain (needs -g).
 * Trap-type samples (data breakpoints) are attributed to the instruction before the
 * reported IP. 0 and *rows (malloc'd, caller frees; strings owned by the profile) with
 * *n, or -ENOMEM. */
TACHO_API int tacho_profile_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
				 struct tacho_profile_row **rows, size_t *n);
/* The per-instruction view of one function (name exact, as shown or as mangled): one
 * row per sampled address
 * of it, in address order, with file and line. 0, -ENOENT when no sample falls in a
 * function of that name, -ENOMEM. */
TACHO_API int tacho_profile_annotate(struct tacho_profile *p, const char *symbol,
				     struct tacho_profile_row **rows, size_t *n);
/* Exports: folded stacks, one line per distinct stack, "comm;outer;...;inner COUNT"
 * (FlameGraph, speedscope, inferno); and perf script's text (one block per sample: a
 * header line "comm pid/tid [cpu] secs: period event:" (then the data address in hex
 * for page faults and breakpoints), one line per frame
 * "\tADDR SYMBOL+0xOFF (DSO)", a blank line), which the Firefox Profiler and speedscope
 * import. 0 or -EIO. */
TACHO_API int tacho_profile_write_folded(struct tacho_profile *p, FILE *f);
TACHO_API int tacho_profile_write_script(struct tacho_profile *p, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_H */
