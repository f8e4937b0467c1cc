/* tacho/tsc.h - libtacho's public interface: the time-stamp counter and the clocks.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_TSC_H
#define TACHO_TSC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 5. The time-stamp counter
 * ================================================================================== */
/* The TSC counts at a constant rate on every CPU made in the last fifteen years
 * ("invariant TSC", CPUID.8000_0007h:EDX[8]); reading it costs a few nanoseconds, far
 * less than any system call. The seeds' StartTSC/EndTSC stalled the pipeline with CPUID
 * around RDTSC; in a virtual machine CPUID is a VM exit (~7 us), so tacho fences with
 * LFENCE instead (SDM Vol. 2B, RDTSC: LFENCE before RDTSC waits for every earlier
 * instruction to complete, LFENCE after it keeps later ones from starting before the
 * read; on AMD where LFENCE is dispatch serializing, APM Vol. 3 LFENCE: always on CPUs
 * with CPUID.8000_0021h:EAX[2], and wherever Linux set MSR C001_1029[1]).
 *
 * Both ends use RDTSC, never RDTSCP: `lfence; rdtsc; lfence` orders the end read as
 * `rdtscp; lfence` would, on every x86-64 CPU, where RDTSCP needs CPUID.8000_0001h:
 * EDX[27], which some hypervisors clear (bhyve's Zen 5 guests), and valgrind cannot run
 * RDTSCP where the host's CPUID lacks that bit even though the synthetic CPUID it shows
 * the program has it (valgrind 3.19: SIGILL). No choice is made at run time, so a read
 * costs no branch and no call. */

/* Out-of-line reads, for callers that do not want inline assembly: the same
 * instructions as tacho_tsc_begin and tacho_tsc_end below. Off x86 both return
 * CLOCK_MONOTONIC_RAW in nanoseconds. Thread-safe. */
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

/* An end read, `lfence; rdtsc; lfence`, inline for hot paths: the first LFENCE waits
 * for every earlier instruction, the second holds later ones back until the counter is
 * read. Runs on every x86-64 CPU and under valgrind (above). Thread-safe. */
static inline uint64_t tacho_tsc_end(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
#else
	return tacho_tsc_read_end();
#endif
}

/* tacho_tsc_source_name (tacho/cpu.h, beside enum tacho_tsc_source) names a source. */

/* What is known about this machine's TSC. Sized (docs/architecture.md, "An API that can
 * grow"): the caller sets sz (`struct tacho_tsc_info ti = { .sz = sizeof(ti) };`) and
 * gets the fields it covers. */
struct tacho_tsc_info {
	size_t sz;           /* sizeof(struct tacho_tsc_info) */
	bool present;        /* CPUID.1:EDX[4] */
	bool rdtscp;         /* CPUID.8000_0001h:EDX[27] (a fact: tacho's reads do not
				need it) */
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
	double calibrated_hz; /* measured against CLOCK_MONOTONIC_RAW over at least 20 ms
				 since the first use, only where no other source gave
				 the frequency; else 0 */
	double pair_ticks;   /* cost of tacho_tsc_begin()+tacho_tsc_end() back to back: the
				median of 2001 pairs, measured once; what to subtract */
	double pair_ns;      /* the same in nanoseconds */
};

/* Fills *out with what tacho knows about the TSC. The frequency comes from the first
 * source that gives it, in this order: CPUID 15h, the hypervisor's leaf 4000_0010h,
 * the kernel's sysfs tsc_freq_khz (these three cost nothing), the kernel's conversion
 * in a perf mmap page, a guest's /proc/cpuinfo where its kernel took tsc_khz from the
 * hypervisor (TACHO_TSC_FREQ_CPUINFO), CPUID 16h alone, and last a calibration against
 * CLOCK_MONOTONIC_RAW over at least 5 ms since the library first looked at the TSC
 * (the first call sleeps for what is left of those 5 ms, if anything). The first call
 * also opens one dummy perf event for the kernel's conversion (time_mult, time_shift,
 * time_zero), and caches; later calls copy. Returns 0, -TACHO_ENOTX86 off x86 or
 * -ENODEV without a TSC (*out still filled as far as known), -EINVAL for NULL or an sz
 * below the first version (nothing written). Thread-safe. */
TACHO_API int tacho_tsc_info(struct tacho_tsc_info *out);

/* The same without measuring: CPUID's facts, the pair cost, and the frequency only
 * where one of the three free sources gives it (else hz 0, source
 * TACHO_TSC_FREQ_UNKNOWN). Opens no perf event and never sleeps (well under a
 * millisecond the first time, in a VM where each CPUID exits to the hypervisor); the
 * kernel's fields and calibrated_hz are 0 unless tacho_tsc_info ran before. Returns
 * and is thread-safe as tacho_tsc_info. */
TACHO_API int tacho_tsc_info_quick(struct tacho_tsc_info *out);

/* The TSC frequency in Hz that CPUID alone gives, for dumps taken elsewhere: leaf 15h
 * (with the SDM's crystal table or 16h's base when 15h lacks the crystal), then the
 * hypervisor's leaf 4000_0010h, then 16h's nominal base, as tacho_cpu_decode reads
 * them from the first CPU of the dump (idx must be 0). Pure. Returns 0 and *hz, *src;
 * -TACHO_ENOVALUE when the dump does not say; -EINVAL for another idx. */
TACHO_API int tacho_tsc_freq_cpuid(const struct tacho_cpuid_dump *dump, unsigned idx,
				   double *hz, enum tacho_tsc_source *src);

/* Ticks to nanoseconds at the frequency tacho_tsc_info found (ticks * 1e9 / hz);
 * 0 when no frequency is known. Thread-safe (the first call may measure, as above). */
TACHO_API double tacho_tsc_to_ns(uint64_t ticks);

/* --- Clocks: every way a program can read the time, and what it costs --- */

#define TACHO_CLOCK_SURVEY_MAX 8

/* One clock. Element size: tacho_clock_survey fills an array of them at the caller's
 * sizeof(struct tacho_clock_info), and tacho_machine_write reads one so. */
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
 * max entries of clock_sz bytes each (sizeof(out[0])). Returns the number filled (7
 * when max allows), or -EINVAL for a clock_sz below the first version. Takes some ms.
 * Thread-safe. */
TACHO_API int tacho_clock_survey(struct tacho_clock_info *out, size_t max, size_t clock_sz);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_TSC_H */
