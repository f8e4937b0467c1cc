/* bench-region.c - what a tacho region costs, beside what it is made of and beside PAPI.
 *
 *   bench-region tsc       a time-only begin/end pair vs a bare lfence;rdtsc + rdtscp;lfence
 *   bench-region events    a pair with four software events vs two group reads of those
 *                          four (perf_event_open + read, by hand) vs PAPI_read twice
 *   bench-region papi-hl   PAPI_hl_region_begin/end on the same four events
 *
 * Regions are set up once per process, hence one mode per run; bench/region.sh runs all
 * and puts them side by side. Each line printed is "VARIANT<TAB>NS_PER_PAIR", the median
 * over 21 rounds of the round's time divided by its pairs (timed with the TSC). */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <papi.h>

#include "tacho.h"

#define ROUNDS 21
#define EVENTS "task-clock,page-faults,context-switches,cpu-migrations"
#define PAPI_EVENTS_LIST "perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES,perf::CPU-MIGRATIONS"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

typedef void pair_fn(void *arg);

/* The median over ROUNDS of the cost of one call of fn, in ns. */
static double measure(pair_fn *fn, void *arg, unsigned pairs)
{
	double v[ROUNDS];

	for (unsigned i = 0; i < pairs / 10 + 1; i++)   /* warm-up */
		fn(arg);
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t a = tacho_tsc_begin();
		for (unsigned i = 0; i < pairs; i++)
			fn(arg);
		uint64_t b = tacho_tsc_end();
		v[r] = tacho_tsc_to_ns(b - a) / pairs;
	}
	qsort(v, ROUNDS, sizeof(v[0]), cmp_double);
	return v[ROUNDS / 2];
}

static volatile uint64_t sink;

static void bare_tsc(void *arg)
{
	(void)arg;
	uint64_t a = tacho_tsc_begin();
	uint64_t b = tacho_tsc_end();
	sink += b - a;
}

static void region_pair(void *arg)
{
	(void)arg;
	tacho_region_begin("bench");
	tacho_region_end("bench");
}

struct group {
	int leader;
	uint64_t buf[1 + 4];
};

static void two_group_reads(void *arg)
{
	struct group *g = arg;
	if (read(g->leader, g->buf, sizeof(g->buf)) < 0)
		abort();
	if (read(g->leader, g->buf, sizeof(g->buf)) < 0)
		abort();
}

static void two_group_reads_tsc(void *arg)
{
	struct group *g = arg;
	if (read(g->leader, g->buf, sizeof(g->buf)) < 0)
		abort();
	uint64_t a = tacho_tsc_begin();
	uint64_t b = tacho_tsc_end();
	if (read(g->leader, g->buf, sizeof(g->buf)) < 0)
		abort();
	sink += b - a;
}

struct papi {
	int es;
	long long v[4];
};

static void papi_two_reads(void *arg)
{
	struct papi *p = arg;
	PAPI_read(p->es, p->v);
	PAPI_read(p->es, p->v);
}

static void papi_hl_pair(void *arg)
{
	(void)arg;
	PAPI_hl_region_begin("bench");
	PAPI_hl_region_end("bench");
}

/* The four software events, opened by hand as one group read with PERF_FORMAT_GROUP:
 * the floor a region with these events is compared to. */
static int open_group(struct group *g)
{
	static const uint64_t cfg[4] = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
					 PERF_COUNT_SW_CONTEXT_SWITCHES,
					 PERF_COUNT_SW_CPU_MIGRATIONS };
	g->leader = -1;
	for (int i = 0; i < 4; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = cfg[i];
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.read_format = PERF_FORMAT_GROUP;
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, g->leader, 0);
		if (fd < 0)
			return -errno;
		if (g->leader < 0)
			g->leader = fd;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct tacho_regions_opts o = { .sz = sizeof(o), .no_report_at_exit = true };

	if (!strcmp(mode, "tsc")) {
		o.events = "";
		if (tacho_regions_init(&o, NULL))
			return 1;
		printf("bare lfence;rdtsc + rdtscp;lfence\t%.1f\n", measure(bare_tsc, NULL, 100000));
		printf("tacho region, time only\t%.1f\n", measure(region_pair, NULL, 100000));
		return 0;
	}
	if (!strcmp(mode, "events")) {
		struct group g;
		struct papi p = { PAPI_NULL, { 0 } };
		int err;

		o.events = EVENTS;
		if ((err = tacho_regions_init(&o, NULL)) || (err = open_group(&g))) {
			fprintf(stderr, "bench-region: %s\n", tacho_strerror(err));
			return 1;
		}
		printf("two group reads of 4 events\t%.1f\n", measure(two_group_reads, &g, 2000));
		printf("two group reads + TSC pair\t%.1f\n", measure(two_group_reads_tsc, &g, 2000));
		printf("tacho region, 4 events\t%.1f\n", measure(region_pair, NULL, 2000));
		if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
		    PAPI_create_eventset(&p.es) != PAPI_OK) {
			fprintf(stderr, "bench-region: PAPI does not start\n");
			return 0;
		}
		char names[] = PAPI_EVENTS_LIST;
		for (char *s = strtok(names, ","); s; s = strtok(NULL, ","))
			if (PAPI_add_named_event(p.es, s) != PAPI_OK) {
				fprintf(stderr, "bench-region: PAPI cannot add %s\n", s);
				return 0;
			}
		if (PAPI_start(p.es) != PAPI_OK)
			return 0;
		printf("PAPI_read x2, 4 events\t%.1f\n", measure(papi_two_reads, &p, 2000));
		return 0;
	}
	if (!strcmp(mode, "papi-hl")) {
		/* PAPI's high-level API takes its events from the environment */
		setenv("PAPI_EVENTS", PAPI_EVENTS_LIST, 1);
		printf("PAPI_hl_region_begin/end, 4 events\t%.1f\n", measure(papi_hl_pair, NULL, 2000));
		return 0;
	}
	fprintf(stderr, "usage: bench-region tsc|events|papi-hl\n");
	return 2;
}
