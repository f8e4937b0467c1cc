/* array-walk.c - ia32lib's L1 example (seed 002) with tacho regions: walk an array of 10
 * million ints multiplying each by 13, after touching every page first so that no page
 * fault lands in the walk.
 *
 *   array-walk [N]             N ints (default 10,000,000)
 *
 * Where the CPU's counters can be opened (a real machine) it counts L1 data-cache loads
 * and load misses, as the seed did: a 64-byte line holds 16 ints, so expect about N/16
 * misses and at least N loads. Where they cannot (a VM without a PMU) it counts page
 * faults and times with the TSC: the pre-touch faults on every page of the array once,
 * the walk on none. Either way the regions' report is written at exit (TACHO_OUTPUT, or
 * stderr); TACHO_EVENTS, when set, replaces the choice made here.
 *
 * Build: cc array-walk.c $(pkg-config --cflags --libs tacho)   (or `make examples`) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tacho.h"

/* The loops are kept free of AddressSanitizer's checks: in a sanitizer build those
 * touch shadow memory and fault on its pages too, and the counts must be the walk's. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_ASAN __attribute__((no_sanitize("address")))
#endif
#endif
#if !defined(NO_ASAN) && defined(__SANITIZE_ADDRESS__)
#define NO_ASAN __attribute__((no_sanitize("address")))
#endif
#ifndef NO_ASAN
#define NO_ASAN
#endif

NO_ASAN static void pretouch(int *a, size_t n, size_t page)
{
	for (size_t i = 0; i < n; i += page / sizeof(int))
		((volatile int *)a)[i] = 0;
}

NO_ASAN static void walk(int *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] *= 13;   /* one load and one store per element, as in the seed */
}

/* The events this machine can count: the seed's pair where they open, else page faults. */
static const char *choose_events(void)
{
	static const char *const l1 = "L1-dcache-loads,L1-dcache-load-misses";
	struct tacho_evlist *list;
	int ok = 0;

	if (tacho_evlist_parse(l1, &list, NULL) == 0) {
		ok = tacho_evlist_probe(list, 0) == 0 && tacho_evlist_probe(list, 1) == 0;
		tacho_evlist_free(list);
	}
	return ok ? l1 : "page-faults";
}

int main(int argc, char **argv)
{
	size_t n = 10 * 1000 * 1000, page = (size_t)sysconf(_SC_PAGESIZE);
	struct tacho_regions_report *r;
	struct tacho_diag d = { .sz = sizeof(d) };
	const char *events = getenv("TACHO_EVENTS");
	int err;

	if (argc > 1) {
		char *end;
		n = strtoull(argv[1], &end, 10);
		if (*end || n == 0) {
			fprintf(stderr, "usage: array-walk [N]\n");
			return 2;
		}
	}
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = events ? events : choose_events() };
	err = tacho_regions_init(&o, &d);
	if (err) {
		char msg[600];
		tacho_diag_format(&d, msg, sizeof(msg));
		fprintf(stderr, "array-walk: bad events: %s\n", msg);
		return 1;
	}

	size_t bytes = (n * sizeof(int) + page - 1) / page * page;
	int *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED) {
		perror("array-walk: mmap");
		return 1;
	}
	madvise(a, bytes, MADV_NOHUGEPAGE);   /* one fault per 4 KiB page, not per 2 MiB */

	tacho_region_begin("pretouch");
	pretouch(a, n, page);
	tacho_region_end("pretouch");

	tacho_region_begin("walk");
	walk(a, n);
	tacho_region_end("walk");

	if (tacho_regions_report_new(&r) == 0) {
		const struct tacho_region_stat *w = tacho_regions_report_find(r, "walk");
		const struct tacho_region_stat *p = tacho_regions_report_find(r, "pretouch");
		printf("array-walk: %zu ints (%zu pages), events %s\n", n, bytes / page, o.events);
		if (w && p) {
			printf("  pretouch  %12.0f ns\n", p->time_ns);
			printf("  walk      %12.0f ns  %.3f ns per element\n", w->time_ns,
			       w->time_ns / (double)n);
			for (size_t i = 0; i < tacho_regions_report_nevents(r); i++) {
				const char *why;
				const char *name = tacho_regions_report_event(r, i);
				if (tacho_regions_report_status(r, i, &why) >= TACHO_COUNT_NOT_COUNTED) {
					printf("  %s: not counted: %s\n", name, why ? why : "no reason given");
					continue;
				}
				printf("  %-22s pretouch %10lld  walk %10lld\n", name,
				       (long long)p->events[i]->total,
				       (long long)w->events[i]->total);
			}
			if (strstr(o.events, "L1-dcache"))
				printf("  expected in the walk: >= %zu loads, about %zu misses "
				       "(16 ints per 64-byte line)\n", n, n / 16);
			else if (!strcmp(o.events, "page-faults"))
				printf("  expected: %zu faults in pretouch (one per page), 0 in the "
				       "walk\n", bytes / page);
		}
		tacho_regions_report_free(r);
	}
	munmap(a, bytes);
	return 0;   /* the regions' report follows, at exit */
}
