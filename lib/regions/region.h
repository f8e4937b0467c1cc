/* region.h - internal side of regions shared with the report writer. */
#ifndef TACHO_REGIONS_REGION_H
#define TACHO_REGIONS_REGION_H

#include "regions/measure-set.h"
#include "tacho/regions.h"
#include "util/util.h"

/* Per-call accumulators of one quantity (TSC ticks, or one event's count) of one
 * region on one thread. Values are after the subtraction of the measuring cost, so
 * they may be negative for an empty region (noise around the calibrated cost): the
 * report clamps totals at 0 and says so. Per-call mean and variance come from sums of
 * values shifted by the first one (numerically stable, one multiply and add per call). */
struct tc_region_accumulator {
	int64_t incl, excl;        /* sums: inclusive, and without nested regions */
	int64_t min, max;          /* of the inclusive per-call values */
	int64_t shift;             /* the first value */
	/* the sum of the squares of (v - shift), in two parts: s2i, exact, of the values
	 * within 2^31 of the shift (an integer multiply and add, where the double's
	 * convert, multiply and add made end() wait three times as long before the next
	 * begin()'s fence), and s2 of the others and of s2i when it would overflow; read
	 * the whole with tc_region_acc_s2 */
	double s2;
	uint64_t s2i;
};

static inline double tc_region_acc_s2(const struct tc_region_accumulator *a)
{
	return a->s2 + (double)a->s2i;
}

/* The sum of (v - shift) over calls calls: incl's sum less calls x shift, exact in
 * integers (the hot path sums only the squares). */
static inline double tc_region_acc_s1(const struct tc_region_accumulator *a, uint64_t calls)
{
	return (double)(a->incl - (int64_t)calls * a->shift);
}

/* One call's value of one quantity into its accumulator: incl, what this call cost less
 * the measuring inside it (its own pair's inner part and the whole of every pair
 * nested in it), excl the same without the nested regions; first: the record's first
 * call. Inside end()'s seqlock (region.c); the tests feed it values of their own. */
static inline void tc_region_acc_add(struct tc_region_accumulator *a, int64_t incl,
				     int64_t excl, bool first)
{
	TC_STORE_RELEASE(a->incl, a->incl + incl);
	TC_STORE_RELEASE(a->excl, a->excl + excl);
	if (first) {
		TC_STORE_RELEASE(a->min, incl);
		TC_STORE_RELEASE(a->max, incl);
		TC_STORE_RELEASE(a->shift, incl);
	} else {
		if (incl < a->min)
			TC_STORE_RELEASE(a->min, incl);
		if (incl > a->max)
			TC_STORE_RELEASE(a->max, incl);
	}
	/* the sum of (v - shift) is incl's sum less calls x shift (tc_region_acc_s1):
	 * only the squares are summed here */
	int64_t v = incl - a->shift;
	if (tc_likely(v > -(INT64_C(1) << 31) && v < INT64_C(1) << 31)) {
		uint64_t sq = (uint64_t)(v * v), sum;
		if (tc_likely(!__builtin_add_overflow(a->s2i, sq, &sum))) {
			TC_STORE_RELEASE(a->s2i, sum);
			return;
		}
		TC_STORE_RELEASE(a->s2, a->s2 + (double)a->s2i);
		TC_STORE_RELEASE(a->s2i, sq);
		return;
	}
	TC_STORE_RELEASE(a->s2, a->s2 + (double)v * (double)v);
}

struct tacho_region_value;
struct tacho_regions_report;
/* How many regions a snapshot holds (the tests' look at it: a program finds a region by
 * name or writes them all). */
size_t tc_regions_report_count(const struct tacho_regions_report *r);
/* How many thread states regions hold now: one per thread alive that entered a region
 * (a thread's state is merged into process-wide records when it ends). The tests'
 * look at it; not exported. */
unsigned tc_regions_thread_states(void);
/* The calling thread's begins and ends that the path for time alone handed to the full
 * one (region.c); the tests' look at it, not exported. */
unsigned long tc_regions_full_calls(void);
/* Adds src (scalls calls) to dst (dcalls calls): sums, extremes, and the mean and
 * variance by Chan et al.'s pairwise combination, kept in dst's shifted sums (pure). */
void tc_region_accumulator_absorb(struct tc_region_accumulator *dst, uint64_t dcalls,
				  const struct tc_region_accumulator *src, uint64_t scalls);
/* Merges n per-thread accumulators with calls[] calls each into *out (pure). */
void tc_region_accumulators_merge(const struct tc_region_accumulator *const *acc,
				  const uint64_t *calls, size_t n,
				  struct tacho_region_value *out);

#endif
