/* bench-mark.c - what a mark costs: untraced (the goal: at most 2x a bare rdtsc) and
 * traced (the goal: at most 1.5x a region's begin), beside a bare rdtsc, a fenced
 * lfence;rdtsc and a time-only region begin/end pair.
 *
 *   bench-mark            prints "VARIANT<TAB>NS_PER_CALL" lines (bench/mark.sh reads them)
 *
 * The variants take turns round by round so that other load on the machine hits them
 * alike; each figure is the median over 41 rounds of the round's time divided by its
 * calls (timed with the TSC). A region is timed as a begin/end pair and printed per pair
 * and per edge (half a pair), since a begin cannot be timed alone in a loop. Traced marks
 * go into an area this program makes and drains between rounds, as tacho trace would. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tacho.h"
#include "trace/area.h"
#include "util/util.h"

#define ROUNDS 41
#define CALLS 20000

typedef void call_fn(void);

static inline uint64_t bare_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static volatile uint64_t sink;

static void v_rdtsc(void) { sink = bare_rdtsc(); }
static void v_fenced(void) { sink = tacho_tsc_begin(); }
static void v_mark(void) { tacho_mark("bench", 1); }
static void v_region(void)
{
	tacho_region_begin("bench");
	tacho_region_end("bench");
}

struct variant {
	const char *name;
	call_fn *fn;
	double v[ROUNDS];
};

static struct tc_trace_area area;
static uint32_t known;

static void drain(void)
{
	struct tc_trace_visit v = { 0 };

	if (area.base)
		tc_trace_area_drain(&area, &known, &v, false);
}

static void measure(struct variant *vs, size_t n)
{
	for (size_t k = 0; k < n; k++)   /* warm-up */
		for (unsigned i = 0; i < CALLS; i++)
			vs[k].fn();
	drain();
	for (int r = 0; r < ROUNDS; r++) {
		for (size_t k = 0; k < n; k++) {
			uint64_t a = tacho_tsc_begin();
			for (unsigned i = 0; i < CALLS; i++)
				vs[k].fn();
			uint64_t b = tacho_tsc_end();
			vs[k].v[r] = tacho_tsc_to_ns(b - a) / CALLS;
			drain();
		}
	}
	for (size_t k = 0; k < n; k++)
		printf("%s\t%.2f\n", vs[k].name, tc_stats_percentile(vs[k].v, ROUNDS, 50));
}

int main(void)
{
	struct tacho_regions_opts ro = { .sz = sizeof(ro), .events = "", .no_report_at_exit = true };
	struct tacho_diag d = { .sz = sizeof(d) };
	struct variant untraced[] = {
		{ "bare rdtsc", v_rdtsc },
		{ "lfence;rdtsc", v_fenced },
		{ "tacho_mark, not traced", v_mark },
		{ "region begin/end pair, not traced", v_region },
	};
	struct variant traced[] = {
		{ "tacho_mark, traced", v_mark },
		{ "region begin/end pair, traced", v_region },
	};
	char spec[64];

	unsetenv("TACHO_TRACE");
	if (tacho_regions_init(&ro, &d)) {
		fprintf(stderr, "bench-mark: %s\n", d.message);
		return 1;
	}
	measure(untraced, ARRAY_SIZE(untraced));
	/* rings that hold a round (2 x CALLS entries for the region pairs); attached as
	 * a traced program attaches, by descriptor */
	if (tc_trace_area_create(&area, 4, 1u << 16, 0)) {
		fprintf(stderr, "bench-mark: cannot make the trace area\n");
		return 1;
	}
	snprintf(spec, sizeof(spec), "/proc/self/fd/%d", area.fd);
	if (tc_trace_attach(spec)) {
		fprintf(stderr, "bench-mark: cannot attach to the trace area %s\n", spec);
		return 1;
	}
	measure(traced, ARRAY_SIZE(traced));
	tc_trace_detach();
	tc_trace_area_free(&area);
	return 0;
}
