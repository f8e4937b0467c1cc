/* tacho/bench.h - libtacho's public interface: the microbenchmark harness.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_BENCH_H
#define TACHO_BENCH_H

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

/* --- The microbenchmark harness ---
 * Runs a function many times and says how long one call takes, in TSC ticks and ns,
 * with counters when asked: warm-up runs first, then trials, each timed with the TSC and
 * counted with the events. The cost of measuring is the median of as many empty trials
 * and is subtracted; or, with the difference method, each trial runs k and 2k calls and
 * reports (T(2k) - T(k)) / k, so that every fixed cost cancels. Trials farther than
 * cull_k * max(MAD, 1 tick) from the median, on either side (an interrupt, a
 * preemption; with the difference method one in the k-call run makes a trial too
 * fast), are culled, and the result states that rule. The mode is there for code that
 * should take constant time (the seeds' "mode of ~100 trials").
 *
 * The harness never reports an impossible figure. When a kept trial measured 0 ticks or
 * fewer per call (the 2k calls took no longer than the k, or the trial no longer than
 * the median empty trial), the body's time is below the noise: the result says so
 * (below_noise, noise) and its ticks and ns carry n but no figures (NaN), rather than a
 * time that is 0 or negative. An event whose kept trials counted below 0 per call is
 * below the noise the same way (event_noise). Nothing is clamped. */

typedef void tacho_bench_fn(void *arg);

/* Options (docs/architecture.md, "An API that can grow"): sz first; fields the caller's
 * sz does not cover take their defaults. */
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

/* Statistics of per-call values over the kept trials. Handed out: a result points to
 * them (fields are only ever added at the end). */
struct tacho_bench_stats {
	size_t n;
	double min, median, mode, mean, stddev, max;
	double p10, p25, p75, p90, p99;
};

/* What the environment says about trusting the figures. Sized (docs/architecture.md,
 * "An API that can grow"): the caller of tacho_bench_env_check sets sz; a result
 * points to the library's own. */
#define TACHO_BENCH_WARN_MAX 8
struct tacho_bench_env {
	size_t sz;            /* sizeof(struct tacho_bench_env) */
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
 * other load. Fills *out, with a warning per reason not to trust timings. 0 (what
 * cannot be read is left empty), or -EINVAL for NULL or an sz below the first version.
 * Thread-safe. */
TACHO_API int tacho_bench_env_check(struct tacho_bench_env *out);

/* A run's result. Handed out (docs/architecture.md, "An API that can grow"): the
 * library allocates it, the caller reads it through the pointer, and every struct in it
 * is reached through a pointer too, so that each may grow at its end. */
struct tacho_bench_result {
	unsigned trials, kept, culled, reps;
	bool difference;
	char cull_rule[128];              /* the rule, in words */
	const struct tacho_bench_stats *ticks;   /* per call */
	const struct tacho_bench_stats *ns;      /* per call */
	double overhead_ticks;            /* subtracted from every trial (0 with the
					     difference method) */
	double tsc_hz;
	size_t nevents;
	char **event_names;               /* as spelled in the spec */
	const struct tacho_bench_stats *const *events; /* [nevents] per call; n = 0 for
					     events not counted */
	char **event_why;                 /* NULL, or why the event is not counted */
	const struct tacho_bench_env *env;
	/* Below the noise (the harness's opening comment): the kept trials' ticks per call
	 * reach 0 or below, so every figure of ticks and ns is NaN (n stays the kept
	 * trials) and noise says what they measured; false with noise "" otherwise, when
	 * every figure is above 0. */
	bool below_noise;
	char noise[192];
	char **event_noise;               /* [nevents] NULL, or why the event's figures are
					     NaN: its kept trials counted below 0 per call */
};

/* Runs fn(arg) as opts say (NULL: the defaults) on the calling thread. Returns 0 and
 * *out (free with tacho_bench_result_free); -EINVAL (no fn, opts->sz too small, k
 * with 2k overflowing); -TACHO_EVERSION with *diag (opts set a field past the struct
 * this library knows: a program built against a newer tacho.h); -TACHO_EPARSE ...
 * with *diag for a bad events spec; -ENOMEM; -errno of a counter read. Events that
 * cannot be counted here do not fail the run: their n is 0 and event_why says why.
 * Thread-safe (each call measures its own thread). */
TACHO_API int tacho_bench_run(tacho_bench_fn *fn, void *arg, const struct tacho_bench_opts *opts,
			      struct tacho_bench_result **out, struct tacho_diag *diag);
TACHO_API void tacho_bench_result_free(struct tacho_bench_result *r);

/* Writes the result to f: a table (statistics per quantity, the rule, the warnings; a
 * quantity below the noise reads "below the noise", with a note why); CSV, one row per
 * quantity (quantity, status, n, min, median, mode, mean, stddev, p10, p25, p75, p90,
 * p99, max, explanation: ticks, ns, then each event, an event not counted or a quantity
 * below the noise with empty figures and why); or JSON ({"version": 1, "trials",
 * "kept", "culled", "reps", "difference", "cull_rule", "overhead_ticks", "tsc_hz",
 * "below_noise", "ticks": {STATS}, "ns": {STATS}, "events": {NAME: {STATS} | null},
 * "warnings": [...]}, each STATS with "noise": null or why its figures are null;
 * docs/schemas.md). opts may be NULL. 0, -EINVAL (a bad format or opts), -ENOMEM, -EIO.
 * Thread-safe. */
TACHO_API int tacho_bench_result_write(const struct tacho_bench_result *r, FILE *f,
				       enum tacho_format fmt,
				       const struct tacho_write_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_BENCH_H */
