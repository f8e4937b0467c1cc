/* bench.h - internal side of the microbenchmark harness, for tests. */
#ifndef TACHO_REGIONS_BENCH_H
#define TACHO_REGIONS_BENCH_H

#include "util/util.h"
#include "tacho/bench.h"

/* Fills e->warnings from the other fields of *e (pure: tests drive it on data). */
void tc_bench_env_eval(struct tacho_bench_env *e);

/* Statistics of n per-call values (sorted in place) with a mode bin width. 0 or
 * -ENOMEM. */
int tc_bench_stats(double *v, size_t n, double mode_bin, struct tacho_bench_stats *out);

/* Culls values farther than k * max(MAD, floor) from the median, on either side:
 * compacts the kept ones to the front of v (in their order) and the same for the
 * parallel rows of aux (n_aux arrays of n, may be 0). Returns how many were kept. k < 0
 * or n < 3: keeps all. */
size_t tc_bench_cull(double *v, size_t n, double k, double floor, double **aux, size_t n_aux);

/* Whether the per-call statistics s (from tc_bench_stats) are below the noise: a time
 * (time true) whose kept trials reach 0 or below, a count whose kept trials go below 0.
 * If so, writes why to why (what the trials measured, in unit; difference says which
 * method made them) and makes every figure of s NaN, n kept; else why is "". */
bool tc_bench_noise(struct tacho_bench_stats *s, bool time, bool difference, const char *unit,
		    char *why, size_t size);

/* A result as tacho_bench_run allocates it, with room for nev events (names, whys and
 * noises NULL, statistics empty); NULL without memory. tacho_bench_result_free frees
 * it. */
struct tacho_bench_result *tc_bench_result_new(size_t nev);

/* The end of a run, on data: culls the trials by tc_bench_cull (tv[trials] ticks per
 * call, evv[q][trials] the per-call counts of event q, both compacted in place), then
 * fills trials, kept, culled, cull_rule, ticks, ns (from r->tsc_hz), each event's
 * statistics (n = 0 where event_why is set), below_noise, noise and event_noise. Reads
 * r->difference, tsc_hz, nevents and event_why, which the caller sets first. cull_k is
 * taken as it is (tacho_bench_run gives 0 its default first; negative: no culling);
 * mode_bin 0 is 1. 0 or -ENOMEM. */
int tc_bench_result_finish(struct tacho_bench_result *r, double *tv, double **evv,
			   unsigned trials, double cull_k, double mode_bin);

#endif
