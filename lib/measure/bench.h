/* bench.h - internal side of the microbenchmark harness, for tests. */
#ifndef TACHO_MEASURE_BENCH_H
#define TACHO_MEASURE_BENCH_H

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

#endif
