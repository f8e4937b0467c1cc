/* cpuid.h - internal view of a CPUID dump: the container the loaders fill and the
 * decoder reads. See tacho/cpu.h for the public contract. */
#ifndef TACHO_CPU_CPUID_H
#define TACHO_CPU_CPUID_H

#include "util/util.h"
#include "tacho/cpu.h"

/* The first versions of the sized structs of the area (docs/architecture.md, "An API
 * that can grow"): a caller's struct smaller than these is refused. */
#define TC_CPU_INFO_SZ_V1 tc_offsetofend(struct tacho_cpu_info, notes_dropped)
#define TC_CPU_CROSSCHECK_SZ_V1 tc_offsetofend(struct tacho_cpu_crosscheck, items)

/* One leaf/subleaf as recorded. `indexed` is false for leaves whose subleaf is
 * meaningless (recorded under subleaf 0). */
struct tc_cpuid_leaf {
	uint32_t leaf, subleaf;
	struct tacho_cpuid_regs r;
};

struct tc_cpuid_cpu {
	int os_cpu;                   /* -1 when unknown */
	size_t n, alloc;
	struct tc_cpuid_leaf *leaves; /* kept sorted by (leaf, subleaf) once finished */
	bool unsorted;                /* while building: a leaf came out of order */
};

struct tacho_cpuid_dump {
	unsigned ncpus, alloc;
	struct tc_cpuid_cpu *cpus;
};

/* Building a dump (cpuid.c). */
struct tacho_cpuid_dump *tc_cpuid_dump_new(void);
/* Adds a CPU and returns its index, or -ENOMEM. */
int tc_cpuid_dump_add_cpu(struct tacho_cpuid_dump *d, int os_cpu);
/* Records a leaf for CPU idx; a second record of the same (leaf, subleaf) replaces the
 * first. 0 or -ENOMEM. */
int tc_cpuid_dump_set(struct tacho_cpuid_dump *d, unsigned idx, uint32_t leaf, uint32_t subleaf,
		      const struct tacho_cpuid_regs *r);
/* Sorts the leaves so queries can bisect; call once after loading. Drops CPUs that
 * hold no leaf at all. Returns 0, or -TACHO_EEMPTY if nothing is left. */
int tc_cpuid_dump_finish(struct tacho_cpuid_dump *d);

/* The raw lookup, ignoring maximum leaves (for --raw output and tests). */
const struct tacho_cpuid_regs *tc_cpuid_raw(const struct tacho_cpuid_dump *d, unsigned idx,
					    uint32_t leaf, uint32_t subleaf);

/* True for the leaves that the SDM/APM define with subleaves (4, 7, 0xB, 0xD, 0xF,
 * 0x10, 0x12, 0x14, 0x17, 0x18, 0x1D, 0x1F, 0x20, 0x23, 0x24, 0x8000_001D, 0x8000_0020,
 * 0x8000_0026 ...). */
bool tc_cpuid_leaf_indexed(uint32_t leaf);

/* Reading this machine's CPUs (live.c): tacho_cpuid_dump_live uses TC_LIVE_AUTO
 * (pinning, and /dev/cpu/N/cpuid for CPUs it cannot pin to); tests force one way to
 * compare the two. Same returns as tacho_cpuid_dump_live. */
enum tc_live_method { TC_LIVE_AUTO, TC_LIVE_PIN, TC_LIVE_DEV };
int tc_cpuid_dump_live_method(enum tc_live_method method, struct tacho_cpuid_dump **out);
/* The enumeration of live.c (which leaves and subleaves `cpuid -r` reads) run on any
 * source of CPUID answers: fn returns 0 and the registers of (leaf, subleaf), or a
 * negative code that stops it. Records into CPU idx of d (not finished). Tests drive it
 * with CPUs simulated from dumps. */
typedef int tc_cpuid_read_fn(void *arg, uint32_t leaf, uint32_t subleaf,
			     struct tacho_cpuid_regs *out);
int tc_cpuid_enumerate(tc_cpuid_read_fn *fn, void *arg, struct tacho_cpuid_dump *d,
		       unsigned idx);

/* Executes CPUID on the calling CPU through util's tc_cpuid_insn (x86 only; elsewhere
 * returns false, *out zeroed). */
bool tc_cpuid_exec(uint32_t leaf, uint32_t subleaf, struct tacho_cpuid_regs *out);

#endif
