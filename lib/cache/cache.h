/* cache.h - what the files of the memory-hierarchy part share: the result's insides,
 * the knee finder, the analysis of the curves, the chases and the bandwidth kernels. */
#ifndef TC_CACHE_H
#define TC_CACHE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tacho/cache.h"
#include "tacho/tsc.h"
#include "util/util.h"

#define TC_CACHE_MAX_LEVELS 12
#define TC_CACHE_MAX_TLBS 4
#define TC_CACHE_MAX_CLAIMS 8
#define TC_CACHE_LINE 64u          /* bytes per element of every chase */
#define TC_CACHE_PAGE 4096u        /* the small page the TLB chase strides by */
#define TC_CACHE_HUGE (2u << 20)   /* a huge page */

/* A data or unified cache level as claimed for the measured CPU. Sizes 0: that source
 * says nothing. */
struct tc_cache_claim {
	unsigned level;
	enum tacho_cache_type type;
	uint64_t cpuid_bytes;
	uint64_t sysfs_bytes;
	unsigned sysfs_shared;     /* CPUs sharing the instance (shared_cpu_list) */
};

struct tacho_cache_result {
	struct tacho_cache_about about;
	struct tacho_cache_point *curve[TACHO_CACHE_CURVE_COUNT];
	size_t ncurve[TACHO_CACHE_CURVE_COUNT];
	/* the claims, ascending by level */
	struct tc_cache_claim claims[TC_CACHE_MAX_CLAIMS];
	size_t nclaims;
	unsigned cpuid_tlb[3];     /* CPUID's 4 KiB data TLB entries of level 1 and 2 */
	/* derived by tc_cache_analyze */
	struct tacho_cache_level levels[TC_CACHE_MAX_LEVELS];
	size_t nlevels;
	struct tacho_cache_memory mem;
	struct tacho_cache_tlb tlbs[TC_CACHE_MAX_TLBS];
	size_t ntlbs;
	/* words */
	char **warnings;
	size_t nwarnings;
	char **notes;
	size_t nnotes;
	bool oom;                  /* a warning or note was lost to a failed allocation */
};

/* --- the result (result.c) --- */

/* A zeroed result with NaN where a figure is unknown. NULL on no memory. */
struct tacho_cache_result *tc_cache_result_new(void);
/* Copies n points into curve c (replacing what was there). 0 or -ENOMEM. */
int tc_cache_curve_set(struct tacho_cache_result *r, enum tacho_cache_curve c,
		       const struct tacho_cache_point *pts, size_t n);
/* Appends a sentence to the warnings (noise) or the notes (findings). */
void tc_cache_warn(struct tacho_cache_result *r, const char *fmt, ...) TC_PRINTF(2, 3);
void tc_cache_note(struct tacho_cache_result *r, const char *fmt, ...) TC_PRINTF(2, 3);
/* A size for people: "32 KiB", "861 KiB", "11.3 MiB" (three figures unless whole). */
void tc_cache_fmt_bytes(uint64_t b, char *buf, size_t size);

/* --- the knee finder (knee.c) ---
 * A pure function of a curve: points ascending in x (a size) with the median y of
 * their samples (a latency) and the samples' quartiles. It cuts the curve into
 * plateaus, ranges of points whose medians stay close to the plateau's median, and
 * the transitions between them; a plateau ends (its knee) at the last point before
 * the curve has climbed a third of the way (log scale) to the next plateau, bounded
 * to 1.6-2x its latency.
 * docs/cache.md states the rules; the constants are here. */
#define TC_KNEE_RISE 0.15          /* a point whose median is more than 15 % above the
				      plateau's median leaves it ... */
#define TC_KNEE_NOISE 3.0          /* ... or three times the plateau's typical half
				      quartile range, whichever is larger */
#define TC_LEVEL_RATIO 1.5         /* neighbouring plateaus closer than this ratio are
				      one level (a slope, a TLB step, noise) */
#define TC_MIN_OCTAVES 0.75        /* a level spans at least three quarters of an octave */
#define TC_KNEE_END_MIN 1.6        /* a level ends where the curve has climbed a third of
				      the step to the next (log scale), but no sooner than
				      1.6x its latency ... */
#define TC_KNEE_END_MAX 2.0        /* ... and no later than twice it */

struct tc_curve_pt {
	double x;                  /* size, ascending */
	double y;                  /* median latency, > 0 */
	double y_p25, y_p75;       /* quartiles of its samples (= y when unknown) */
};

struct tc_plateau {
	size_t first, last;        /* indices of its first and last point */
	double y;                  /* the median of the medians of its points */
	double y_min, y_max;       /* the lowest and highest of them */
	bool open;                 /* it reaches the curve's last point */
};

/* Finds the plateaus of pts[0..n), ascending, at most max of them in out. Returns how
 * many it found (it may be more than max: only max are written). Points with y <= 0
 * or NaN are ignored as if absent. */
size_t tc_cache_plateaus(const struct tc_curve_pt *pts, size_t n, struct tc_plateau *out,
			 size_t max);

/* --- from curves to levels (analyze.c) ---
 * Fills levels, mem, tlbs and the notes of r from its curves, claims and about (step,
 * tsc_hz, core_hz): the knee finder on the latency curve, each measured level matched
 * to a claimed one and held against it, the TLB levels from the page chase with the
 * caches' share taken out. Pure apart from r. 0 or -ENOMEM. */
int tc_cache_analyze(struct tacho_cache_result *r);

/* Does claim c agree with the measured size m at resolution step (> 1)? */
bool tc_cache_agrees(uint64_t m, uint64_t c, double step);

/* --- the chases (chase.c) --- */

/* A buffer of anonymous memory, aligned to 2 MiB, with huge pages asked for or
 * refused. */
struct tc_cache_buf {
	char *base;                /* aligned start */
	size_t bytes;
	void *map;                 /* what mmap returned */
	size_t map_bytes;
	bool huge;                 /* MADV_HUGEPAGE was asked */
};
int tc_cache_buf_init(struct tc_cache_buf *b, size_t bytes, bool huge);
void tc_cache_buf_exit(struct tc_cache_buf *b);
/* The share of b that the kernel backs with huge pages (/proc/self/smaps), 0..1;
 * negative -errno when it cannot tell. */
double tc_cache_buf_huge_fraction(const struct tc_cache_buf *b);

/* How one point is timed. */
struct tc_chase_cfg {
	unsigned samples;          /* timed samples to keep */
	double sample_ns;          /* how long one sample should take */
	double tsc_hz;
};

/* The state of a series of points: the latency of the last one, to size the next
 * point's samples, and the count of discarded samples. */
struct tc_chase_state {
	double last_ns;
	unsigned discarded;
};

/* The pointer chain orders (chase.c), written into b's first bytes: the latency
 * curve's (every line of `lines`, a chunk at a time, in two passes by alternating
 * lines), the random one (every line, any order) and the page stride's (one line at a
 * random offset of each of `pages` pages, pages in random order). Each returns the
 * chain's first element, or NULL on no memory. */
void *tc_chase_build_lines(struct tc_cache_buf *b, size_t lines, uint64_t *seed);
void *tc_chase_build_random(struct tc_cache_buf *b, size_t lines, uint64_t *seed);
void *tc_chase_build_pages(struct tc_cache_buf *b, size_t pages, uint64_t *seed);

/* Times a chain: warms it up over `warm` loads, then takes cfg->samples samples of
 * enough loads to last about cfg->sample_ns each, discarding and retaking any during
 * which the thread was switched out; fills *pt (not bytes/pages). */
void tc_chase_time(void *head, size_t warm, const struct tc_chase_cfg *cfg,
		   struct tc_chase_state *st, struct tacho_cache_point *pt);

/* The TSC ticks of a chain of `adds` dependent additions, the best of `tries`: one add
 * per core cycle on every x86 since the P6, so tsc_hz * adds / ticks is the core clock. */
double tc_cache_add_chain_ticks(unsigned adds, unsigned tries);

/* Other runnable tasks on the machine now (/proc/stat procs_running less this one). */
unsigned tc_cache_busy(void);
/* The steal time of cpu so far, in USER_HZ ticks (/proc/stat); negative if unknown. */
long long tc_cache_steal(int cpu);

/* --- bandwidth (bandwidth.c) --- */

enum tc_bw_kind { TC_BW_READ, TC_BW_WRITE, TC_BW_COPY };

/* The kernels' instruction set on this CPU: "avx2" or "sse2". */
const char *tc_bw_kernel_name(void);

struct tc_bw_cfg {
	unsigned samples;
	double sample_ns;
	double tsc_hz;
	const int *cpus;           /* the CPUs of the all-CPU runs */
	size_t ncpus;
};

/* Measures bw for one working set: one thread (the caller, already pinned) over
 * `bytes`, and one thread on each of cfg->cpus over `bytes_all` each. Fills the
 * fields of *bw; NaN where a run failed. 0, or -ENOMEM / -errno (threads). */
int tc_bw_measure(const struct tc_bw_cfg *cfg, uint64_t bytes, uint64_t bytes_all,
		  struct tacho_cache_bandwidth *bw, unsigned *discarded);

#endif
