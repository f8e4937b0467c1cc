/* bench-region.c - what a tacho region costs, beside what it is made of and beside PAPI.
 *
 *   bench-region tsc       a time-only begin/end pair vs a bare lfence;rdtsc +
 *                          lfence;rdtsc;lfence (tacho's reads), and vs the same with
 *                          rdtscp;lfence at the end where CPUID announces RDTSCP
 *   bench-region events    a pair with four software events vs two group reads of those
 *                          four (perf_event_open + read, by hand) vs PAPI_read twice
 *   bench-region papi-hl   PAPI_hl_region_begin/end on the same four events
 *   bench-region first     the first tacho_region_begin of a process, in ms (its set-up)
 *   bench-region names     time-only pairs over 1, 100, 1,000 and 10,000 names in heap
 *                          buffers, cycled (10,000 pairs a round: what the name lookup
 *                          and the data cache cost as names grow, beside one name)
 *   bench-region report    the JSON report of 10k, 20k, 40k and 80k names, in ms of this
 *                          thread's CPU time (median of 5: tacho_regions_report_new and
 *                          the write to /dev/null; CPU time, not wall, so that a loaded
 *                          machine does not count other processes' time)
 *
 *   bench-region scale     80,000 names in heap buffers, each begun and ended once: the
 *                          first use of a name (us, the loop's CPU time over 80,000),
 *                          the snapshot of them all (tacho_regions_report_new, CPU ms)
 *                          and a second pass over the same names (us a pair)
 *   bench-region scale-exit  80,000 names once each and nothing else: with TACHO_OUTPUT
 *                          set, a program that writes their report at exit
 *                          (bench/region-scale.sh times the whole run from outside)
 *
 * The time-only run also times a region with a 256-character name (a literal: the
 * pointer alone answers) and 10,000 names made in heap buffers, cycled (each hit
 * confirmed by a string compare, and no miss once all are known).
 *
 * Regions are set up once per process, and PAPI's high-level API runs its own event
 * set, hence one mode per run; bench/region.sh runs all and puts them side by side.
 * Within a run the variants take turns round by round, so that other load on the
 * machine hits them alike; each line printed is "VARIANT<TAB>NS_PER_PAIR", the median
 * over 41 rounds of the round's time divided by its pairs (timed with the TSC). The
 * papi-hl run measures the group reads again, so that PAPI's regions can be compared
 * through a baseline taken in the same process. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <papi.h>

#include "tacho.h"
#include "util/util.h"

#define ROUNDS 41
#define EVENTS "task-clock,page-faults,context-switches,cpu-migrations"
#define PAPI_EVENTS_LIST "perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES,perf::CPU-MIGRATIONS"

typedef void pair_fn(void *arg);

struct variant {
	const char *name;
	pair_fn *fn;
	void *arg;
	double v[ROUNDS];
};

/* Runs the variants in turns, round by round (A B C A B C ...), so that a burst of other
 * load on the machine hits them alike, and prints for each the median over ROUNDS of
 * the cost of one call in ns. */
static void measure(struct variant *vs, size_t n, unsigned pairs)
{
	for (size_t k = 0; k < n; k++)   /* warm-up */
		for (unsigned i = 0; i < pairs; i++)
			vs[k].fn(vs[k].arg);
	for (int r = 0; r < ROUNDS; r++) {
		for (size_t k = 0; k < n; k++) {
			uint64_t a = tacho_tsc_begin();
			for (unsigned i = 0; i < pairs; i++)
				vs[k].fn(vs[k].arg);
			uint64_t b = tacho_tsc_end();
			vs[k].v[r] = tacho_tsc_to_ns(b - a) / pairs;
		}
	}
	for (size_t k = 0; k < n; k++)
		printf("%s\t%.1f\n", vs[k].name, tc_stats_percentile(vs[k].v, ROUNDS, 50));
}

static volatile uint64_t sink;

static void bare_tsc(void *arg)
{
	(void)arg;
	uint64_t a = tacho_tsc_begin();
	uint64_t b = tacho_tsc_end();
	sink += b - a;
}

/* The end read tacho used before it gave up RDTSCP (docs/lib-tsc.md), for comparison: run
 * only where CPUID.8000_0001h:EDX[27] announces the instruction. */
static void bare_tsc_rdtscp(void *arg)
{
	uint32_t lo, hi, aux;
	(void)arg;
	uint64_t a = tacho_tsc_begin();
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	(void)aux;
	sink += (((uint64_t)hi << 32) | lo) - a;
}

static void region_pair(void *arg)
{
	(void)arg;
	tacho_region_begin("bench");
	tacho_region_end("bench");
}

#define LONG_NAME \
	"a-region-name-of-256-characters-0123456789abcdef0123456789abcdef0123456789abcdef" \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" \
	"0123456789abcdef"
_Static_assert(sizeof(LONG_NAME) == 257, "LONG_NAME is 256 characters");

static void region_pair_long(void *arg)
{
	(void)arg;
	tacho_region_begin(LONG_NAME);
	tacho_region_end(LONG_NAME);
}

#define CYCLED 10000
static char *cycled[CYCLED];

static void region_pair_cycled(void *arg)
{
	static unsigned i;
	const char *name = cycled[i];

	(void)arg;
	i = i + 1 == CYCLED ? 0 : i + 1;
	tacho_region_begin(name);
	tacho_region_end(name);
}

/* Cycles through the first n names of cycled[], each variant with its own cursor. */
struct names {
	unsigned n, i;
};

static void region_pair_names(void *arg)
{
	struct names *c = arg;
	const char *name = cycled[c->i];

	c->i = c->i + 1 == c->n ? 0 : c->i + 1;
	tacho_region_begin(name);
	tacho_region_end(name);
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
	struct group g;
	int err;

	if (!strcmp(mode, "first")) {
		/* the whole set-up, as a program meets it: no init call before */
		struct timespec a, b;

		setenv("TACHO_OUTPUT", "/dev/null", 1);
		clock_gettime(CLOCK_MONOTONIC, &a);
		tacho_region_begin("first");
		clock_gettime(CLOCK_MONOTONIC, &b);
		tacho_region_end("first");
		printf("first tacho_region_begin (ms)\t%.3f\n",
		       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
		return 0;
	}
	if (!strcmp(mode, "scale-exit")) {
		/* a whole program: 80,000 names once each, the report at exit where
		 * TACHO_OUTPUT asks for one (region-scale.sh times it from outside) */
		char name[32];

		for (unsigned i = 0; i < 80000; i++) {
			snprintf(name, sizeof(name), "region-%u", i);
			tacho_region_begin(name);
			tacho_region_end(name);
		}
		return 0;
	}
	if (!strcmp(mode, "scale")) {
		/* as a program meets it: set up by the first begin, the report at exit
		 * where TACHO_OUTPUT asks for one */
		struct tacho_regions_report *rep;
		struct timespec a, a2, b, c;
		char name[32];

		tacho_region_begin("set-up");
		tacho_region_end("set-up");
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		for (unsigned i = 0; i < 80000; i++) {
			snprintf(name, sizeof(name), "region-%u", i);
			tacho_region_begin(name);
			tacho_region_end(name);
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
		if (tacho_regions_report_new(&rep))
			return 1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
		tacho_regions_report_free(rep);
		printf("first use of a name, 80,000 names (CPU us)\t%.2f\n",
		       ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / 80000);
		/* the same names again, known now: what a pair costs without the first
		 * use (with events, mostly the counters' reads) */
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
		for (unsigned i = 0; i < 80000; i++) {
			snprintf(name, sizeof(name), "region-%u", i);
			tacho_region_begin(name);
			tacho_region_end(name);
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a2);
		printf("second use of a name, 80,000 names (CPU us)\t%.2f\n",
		       ((a2.tv_sec - a.tv_sec) * 1e9 + (a2.tv_nsec - a.tv_nsec)) / 1e3 / 80000);
		printf("snapshot of 80,000 names (CPU ms)\t%.1f\n",
		       (c.tv_sec - b.tv_sec) * 1e3 + (c.tv_nsec - b.tv_nsec) / 1e6);
		return 0;
	}
	if (!strcmp(mode, "report")) {
		o.events = "";
		if (tacho_regions_init(&o, NULL))
			return 1;
		for (unsigned n = 10000; n <= 80000; n *= 2) {
			double ms[5];
			char name[32];

			for (unsigned i = 0; i < n; i++) {
				snprintf(name, sizeof(name), "region-%u", i);
				tacho_region_begin(name);
				tacho_region_end(name);
			}
			for (int k = 0; k < 5; k++) {
				struct tacho_regions_report *rep;
				struct timespec a, b;
				FILE *f = fopen("/dev/null", "w");

				if (!f)
					return 1;
				clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
				if (tacho_regions_report_new(&rep))
					return 1;
				tacho_regions_report_write(rep, f, TACHO_FORMAT_JSON, NULL);
				tacho_regions_report_free(rep);
				fclose(f);
				clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
				ms[k] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
			}
			printf("JSON report of %u names (CPU ms)\t%.1f\n", n,
			       tc_stats_percentile(ms, 5, 50));
			tacho_regions_reset();
		}
		return 0;
	}
	if (!strcmp(mode, "names")) {
		struct names c[] = { { 1, 0 }, { 100, 0 }, { 1000, 0 }, { CYCLED, 0 } };

		o.events = "";
		if (tacho_regions_init(&o, NULL))
			return 1;
		for (int i = 0; i < CYCLED; i++) {
			cycled[i] = malloc(24);
			if (!cycled[i])
				return 1;
			snprintf(cycled[i], 24, "cycled-%d", i);
		}
		struct variant vs[] = {
			{ "time only, 1 name", region_pair_names, &c[0], { 0 } },
			{ "time only, 100 names cycled", region_pair_names, &c[1], { 0 } },
			{ "time only, 1,000 names cycled", region_pair_names, &c[2], { 0 } },
			{ "time only, 10,000 names cycled", region_pair_names, &c[3], { 0 } },
		};
		measure(vs, 4, 10000);
		return 0;
	}
	if (!strcmp(mode, "tsc")) {
		o.events = "";
		if (tacho_regions_init(&o, NULL))
			return 1;
		for (int i = 0; i < CYCLED; i++) {
			cycled[i] = malloc(24);
			if (!cycled[i])
				return 1;
			snprintf(cycled[i], 24, "cycled-%d", i);
		}
		struct tacho_tsc_info ti = { .sz = sizeof(ti) };
		struct variant vs[] = {
			{ "bare lfence;rdtsc + lfence;rdtsc;lfence", bare_tsc, NULL, { 0 } },
			{ "tacho region, time only", region_pair, NULL, { 0 } },
			{ "tacho region, time only, 256-char name", region_pair_long, NULL, { 0 } },
			{ "tacho region, time only, 10k names cycled", region_pair_cycled, NULL,
			  { 0 } },
			{ "bare lfence;rdtsc + rdtscp;lfence", bare_tsc_rdtscp, NULL, { 0 } },
		};
		tacho_tsc_info_quick(&ti);
		measure(vs, ti.rdtscp ? 5 : 4, 20000);
		return 0;
	}
	if ((err = open_group(&g))) {
		fprintf(stderr, "bench-region: cannot open the software events: %s\n",
			tacho_strerror(err));
		return 1;
	}
	if (!strcmp(mode, "events")) {
		struct papi p = { PAPI_NULL, { 0 } };
		char names[] = PAPI_EVENTS_LIST;

		o.events = EVENTS;
		if ((err = tacho_regions_init(&o, NULL))) {
			fprintf(stderr, "bench-region: %s\n", tacho_strerror(err));
			return 1;
		}
		if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT ||
		    PAPI_create_eventset(&p.es) != PAPI_OK) {
			fprintf(stderr, "bench-region: PAPI does not start\n");
			return 1;
		}
		for (char *s = strtok(names, ","); s; s = strtok(NULL, ","))
			if (PAPI_add_named_event(p.es, s) != PAPI_OK) {
				fprintf(stderr, "bench-region: PAPI cannot add %s\n", s);
				return 1;
			}
		if (PAPI_start(p.es) != PAPI_OK)
			return 1;
		struct variant vs[] = {
			{ "two group reads of 4 events", two_group_reads, &g, { 0 } },
			{ "two group reads + TSC pair", two_group_reads_tsc, &g, { 0 } },
			{ "tacho region, 4 events", region_pair, NULL, { 0 } },
			{ "PAPI_read x2, 4 events", papi_two_reads, &p, { 0 } },
		};
		measure(vs, 4, 500);
		return 0;
	}
	if (!strcmp(mode, "papi-hl")) {
		/* PAPI's high-level API takes its events from the environment, and runs its
		 * own event set: a process of its own, with the same baseline beside it */
		setenv("PAPI_EVENTS", PAPI_EVENTS_LIST, 1);
		struct variant vs[] = {
			{ "two group reads of 4 events (papi-hl run)", two_group_reads, &g, { 0 } },
			{ "PAPI_hl_region_begin/end, 4 events", papi_hl_pair, NULL, { 0 } },
		};
		measure(vs, 2, 500);
		return 0;
	}
	fprintf(stderr, "usage: bench-region tsc|names|events|papi-hl|first|report\n");
	return 2;
}
