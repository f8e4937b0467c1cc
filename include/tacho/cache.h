/* tacho/cache.h - libtacho's public interface: measuring the memory hierarchy (the
 * latency curve, the levels found on it, bandwidths, the TLBs' reach) and holding it
 * against what CPUID and the kernel claim.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_CACHE_H
#define TACHO_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 5b. The memory hierarchy, measured
 * ================================================================================== */
/* CPUID and sysfs say what caches a CPU has; in a virtual machine they say what the
 * hypervisor chose to pass on, which can be far from what a program gets. tacho
 * measures instead, as lmbench's lat_mem_rd does and then some: a pointer chase (each
 * load's address is the value of the previous load, so loads cannot overlap) over
 * working sets from 4 KiB to beyond the last cache gives the load-to-use latency
 * curve; its plateaus are the levels, its knees their sizes (docs/cache.md states the
 * method and its resolution). A chase with one load per page gives the TLBs' reach,
 * streaming kernels the bandwidth of each level, and each measured level is put
 * beside the sizes CPUID and sysfs claim for the CPU it ran on. */

/* What tacho_cache_measure measures: a mask. 0 means all of them. */
#define TACHO_CACHE_LATENCY   (1u << 0)   /* the latency curve and its levels (always
					     done: the others stand on it) */
#define TACHO_CACHE_BANDWIDTH (1u << 1)   /* read, write and copy of each level, one
					     thread and every allowed CPU */
#define TACHO_CACHE_TLB       (1u << 2)   /* the page-stride chases and the TLBs' reach */

/* Progress of a measurement, for a program that shows it: the phase ("latency",
 * "tlb", "bandwidth") and how much of the whole run is done, 0 to 1. Called on the
 * measuring thread; it must not call back into the measurement. */
typedef void tacho_cache_progress_fn(void *arg, const char *phase, double done);

/* The knobs of a measurement. Zero (or NULL for the whole struct) means the default
 * everywhere. sz first, so that fields can be added (libbpf's opts). */
struct tacho_cache_opts {
	size_t sz;                  /* sizeof(struct tacho_cache_opts) */
	bool pin_cpu;               /* measure on cpu (below); false: on the CPU the caller
				       runs on when it calls */
	int cpu;                    /* the CPU, as in /sys/devices/system/cpu/cpuN */
	unsigned what;              /* TACHO_CACHE_* mask; 0: everything */
	bool thorough;              /* more points and samples, and a second latency curve
				       with every load to a random line of the whole set in
				       small pages (the TLB's share of the latency); takes
				       several times longer */
	uint64_t min_bytes;         /* the smallest working set; 0: 4 KiB */
	uint64_t max_bytes;         /* the largest; 0: four times the largest cache claimed
				       (at least 64 MiB, at most 1 GiB and a quarter of the
				       available memory) */
	unsigned points_per_octave; /* 0: 4 (8 with thorough); at most 16 */
	unsigned samples;           /* timed samples per point; 0: 9 (21 with thorough) */
	unsigned rounds;            /* sweeps of every curve; each point keeps the sweep
				       with the lowest median, so that a stretch of
				       disturbance (another hardware thread on the same
				       core, a noisy neighbour) spoils one sweep, not the
				       curve; 0: 3 (5 with thorough); at most 15 */
	const char *sysfs_root;     /* where the kernel's claims are read (tests); NULL or
				       "/": this machine */
	const struct tacho_cpuid_dump *dump;  /* CPUID's claims; NULL: this machine's,
				       read live */
	tacho_cache_progress_fn *progress;    /* NULL: no progress */
	void *progress_arg;
};

/* Which curve a point belongs to. */
enum tacho_cache_curve {
	TACHO_CACHE_CURVE_LATENCY = 0, /* the levels' curve: a random cyclic order of every
					  line of the working set, visited a 64 KiB chunk at a
					  time so that the TLB never misses (huge pages where
					  the kernel grants them) */
	TACHO_CACHE_CURVE_RANDOM,      /* thorough only: every load to a random line of the
					  whole set, small pages: the TLB misses included */
	TACHO_CACHE_CURVE_PAGES,       /* one load per 4 KiB page, small pages: the TLBs */
	TACHO_CACHE_CURVE_PAGES_HUGE,  /* the same addresses in huge pages */
	TACHO_CACHE_CURVE_COUNT
};

/* One point of a curve: the latency of one load at one working-set size, from
 * repeated timed samples, in the sweep (of tacho_cache_about.rounds) where their
 * median was lowest. Samples during which the thread was switched out are thrown
 * away and taken again (discarded counts them, over every sweep). */
struct tacho_cache_point {
	uint64_t bytes;             /* the working set (line curves) or the address range
				       (page curves: pages x 4096) */
	uint64_t pages;             /* page curves: pages visited; 0 for line curves */
	double ns;                  /* the median of the samples, per load */
	double ns_p25, ns_p75;      /* their quartiles */
	double ns_min, ns_max;
	unsigned samples;           /* kept */
	unsigned discarded;         /* thrown away (preempted) */
};

/* Bandwidth in GB/s (1e9 bytes per second) of one working set: read (loads), write
 * (stores, without non-temporal hints) and copy (the bytes read plus the bytes written,
 * as likwid-bench counts them), by one thread and by one thread on each CPU allowed.
 * Medians of repeated samples; NaN where not measured. */
struct tacho_cache_bandwidth {
	uint64_t bytes;             /* the working set of one thread */
	uint64_t bytes_all;         /* of each thread in the all-CPU runs */
	unsigned threads;           /* threads of the all-CPU runs */
	double read, write, copy;   /* one thread */
	double read_all, write_all, copy_all;   /* every thread together */
};

/* One level of the hierarchy: what the curve shows beside what is claimed for the CPU
 * the measurement ran on. A level the curve shows and nobody claims has no claims; a
 * claimed level the curve does not show has bytes 0 (not seen). */
struct tacho_cache_level {
	unsigned level;             /* 1, 2, 3, ...: the claimed level it was matched to,
				       else its place on the curve */
	enum tacho_cache_type type; /* the claim's type; when nothing is claimed, data for
				       the first level and unified beyond (a chase of loads
				       cannot tell) */
	uint64_t bytes;             /* measured: the largest working set still on the
				       level's plateau; 0: not seen on the curve */
	uint64_t first_bytes;       /* where the plateau starts */
	double ns;                  /* the plateau's latency: the median of its points */
	double ns_min, ns_max;      /* the lowest and highest point on the plateau */
	double ticks;               /* ns in TSC ticks ("cycles (TSC)") */
	double cycles;              /* ns in core cycles at the clock estimated during the
				       run (tacho_cache_about.core_hz); NaN when unknown */
	uint64_t cpuid_bytes;       /* what CPUID claims for this CPU; 0: nothing */
	uint64_t sysfs_bytes;       /* what /sys/devices/system/cpu/cpuN/cache says */
	unsigned sysfs_shared;      /* CPUs sharing this instance in sysfs; 0: unknown */
	int agrees;                 /* 1: every claim within the resolution of the
				       measurement; 0: one is not (note says which); -1:
				       nothing claimed */
	struct tacho_cache_bandwidth bw;
	char note[256];             /* why it disagrees or what to know; "" if nothing */
};

/* Main memory: the curve's last plateau, which never ends within the sweep. */
struct tacho_cache_memory {
	bool seen;                  /* the curve reached a plateau past the last cache */
	bool flat;                  /* that plateau is flat; false: the curve still rose at
				       the largest size, so ns is a lower bound */
	uint64_t first_bytes;       /* where it starts */
	double ns, ns_min, ns_max, ticks, cycles;
	struct tacho_cache_bandwidth bw;
};

/* One TLB level from the page-stride chase: how many pages it holds. */
struct tacho_cache_tlb {
	unsigned level;             /* 1, 2 */
	unsigned entries;           /* measured: the most pages whose translations stay in
				       it (4 KiB pages) */
	uint64_t reach_bytes;       /* entries x 4096 */
	double ns;                  /* the latency of a load on its plateau, with the caches'
				       share removed */
	double miss_ns;             /* what a miss in it costs (the next plateau's latency
				       less this one's); NaN after the last */
	unsigned cpuid_entries;     /* CPUID's data (or unified) TLB of this level for 4 KiB
				       pages; 0: not claimed */
	int agrees;                 /* as in tacho_cache_level */
};

/* How the measurement went: where it ran, with what, and how noisy it was. */
struct tacho_cache_about {
	int cpu;                    /* the CPU it was pinned to */
	char brand[49];             /* CPUID's brand string of the machine; "" unknown */
	bool hypervisor;            /* CPUID says it is a guest */
	double tsc_hz;              /* the TSC frequency the ticks are counted in */
	const char *tsc_source;     /* tacho_tsc_source_name of where it came from */
	double core_hz;             /* the core clock estimated from a chain of dependent
				       adds timed with the TSC (one add per cycle); 0 if not
				       measured */
	double core_hz_min, core_hz_max;  /* its lowest and highest estimate over the run */
	unsigned points_per_octave;
	double step;                /* the size ratio of neighbouring points, 2^(1/ppo):
				       the resolution of every size found */
	unsigned samples;           /* timed samples per point */
	unsigned rounds;            /* sweeps of each curve */
	uint64_t min_bytes, max_bytes;
	bool huge_pages;            /* the latency curve got huge pages from the kernel */
	double huge_fraction;       /* the share of its buffer in huge pages, 0..1 */
	const char *kernel;         /* the bandwidth kernels' instructions: "avx2", "sse2"
				       (static storage); NULL when bandwidth was not measured */
	unsigned threads;           /* threads of the all-CPU bandwidth runs */
	double seconds;             /* the whole measurement's wall time */
	double steal_pct;           /* the hypervisor's steal time on the CPU during the run,
				       as a share of it; NaN when /proc/stat does not say */
	unsigned discarded;         /* samples thrown away because the thread was switched
				       out, over all curves */
	unsigned busy;              /* the most other runnable tasks seen on the machine */
	bool thorough;
};

struct tacho_cache_result;

/* Measures the memory hierarchy as opts asks (NULL: everything, defaults), on one CPU:
 * the calling thread is pinned to it for the duration and its affinity restored after;
 * the all-CPU bandwidth runs one thread on each CPU the caller may run on. It reads
 * CPUID (opts->dump, else live) and sysfs for the claims. A default run takes a few
 * seconds and maps up to max_bytes of memory (twice for the page chase's huge-page
 * run), freed before it returns. Returns 0 and a new result in *out (free it with
 * tacho_cache_result_free); -EINVAL for bad opts (a CPU that is not online or not
 * allowed to the caller, min_bytes above max_bytes, sizes under 4 KiB or above 1 GiB,
 * points_per_octave above 16, samples above 255, rounds above 15); -TACHO_EVERSION
 * for opts that set a field past the struct this library knows (a program built
 * against a newer tacho.h); -ENOMEM; -errno from the system (mmap, affinity).
 * Noise (steal time, other tasks, a changing clock, a wide spread) does not fail it:
 * it is in the result's warnings. Not thread-safe with respect to the calling thread's
 * affinity; several measurements at once disturb each other. */
TACHO_API int tacho_cache_measure(const struct tacho_cache_opts *opts,
				  struct tacho_cache_result **out);

TACHO_API void tacho_cache_result_free(struct tacho_cache_result *r);

/* The accessors below return pointers into the result, valid until it is freed. The
 * structs they point to only ever grow at their end: read them through the pointers,
 * never copy them into arrays of your own. All are thread-safe on a result no one
 * frees meanwhile. */

/* How the measurement went (never NULL for a valid result). */
TACHO_API const struct tacho_cache_about *tacho_cache_result_about(const struct tacho_cache_result *r);

/* The points of one curve, ascending by size: how many, and the i-th (NULL past the
 * end). A curve that was not measured has none. */
TACHO_API size_t tacho_cache_result_npoints(const struct tacho_cache_result *r,
					    enum tacho_cache_curve curve);
TACHO_API const struct tacho_cache_point *tacho_cache_result_point(const struct tacho_cache_result *r,
								  enum tacho_cache_curve curve,
								  size_t i);

/* The levels, ascending (measured and claimed, matched), and main memory. */
TACHO_API size_t tacho_cache_result_nlevels(const struct tacho_cache_result *r);
TACHO_API const struct tacho_cache_level *tacho_cache_result_level(const struct tacho_cache_result *r,
								  size_t i);
TACHO_API const struct tacho_cache_memory *tacho_cache_result_memory(const struct tacho_cache_result *r);

/* The TLB levels the page-stride chase found, ascending. */
TACHO_API size_t tacho_cache_result_ntlbs(const struct tacho_cache_result *r);
TACHO_API const struct tacho_cache_tlb *tacho_cache_result_tlb(const struct tacho_cache_result *r,
							      size_t i);

/* The warnings of the run, in words: what may have disturbed it (steal time, other
 * tasks, a clock that changed, a wide spread, a sweep that stopped short). NULL past
 * the end. */
TACHO_API size_t tacho_cache_result_nwarnings(const struct tacho_cache_result *r);
TACHO_API const char *tacho_cache_result_warning(const struct tacho_cache_result *r, size_t i);

/* The notes, in words: what the measurement found that its numbers alone do not say
 * (a level nobody claims, huge pages that did not remove the TLB's steps). NULL past
 * the end. */
TACHO_API size_t tacho_cache_result_nnotes(const struct tacho_cache_result *r);
TACHO_API const char *tacho_cache_result_note(const struct tacho_cache_result *r, size_t i);

/* Writes the result to f: the table for people (TACHO_FORMAT_TABLE: the levels beside
 * the claims with their flags, memory, bandwidths, TLBs, how it went, the warnings),
 * the CSV (one row per point, level, TLB and warning, told apart by the first column)
 * or the JSON document of docs/schemas.md ("version" 1, the curves and the derived
 * levels). 0; -EINVAL (NULL r or f, a bad format or opts); -ENOMEM; -EIO. Pure apart
 * from writing f; thread-safe. */
TACHO_API int tacho_cache_write(const struct tacho_cache_result *r, FILE *f,
				enum tacho_format fmt, const struct tacho_write_opts *opts);

/* Writes an SVG picture of the latency curve to f: latency (log scale) against the
 * working set (log scale), the samples' quartiles as bars, each measured level's size
 * and latency, and the sizes CPUID and sysfs claim, marked and labelled. A standalone
 * SVG 1.1 document (no script, no external reference). 0; -EINVAL (NULL r or f, no
 * latency curve); -EIO. Thread-safe. */
TACHO_API int tacho_cache_write_svg(const struct tacho_cache_result *r, FILE *f,
				    const struct tacho_write_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_CACHE_H */
