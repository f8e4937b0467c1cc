/* lib-stat-regions.c - write(2) calls inside and outside regions, for tacho stat
 * --regions (tests/e2e/test-stat-regions.c): links libtacho.
 *
 *   lib-stat-regions OUT IN [report]
 *                              OUT one-byte writes to /dev/null outside any region
 *                              (half before, half after) and IN inside: a third in a
 *                              region, a third in a region nested in a second one,
 *                              the rest in a region of a second thread that runs while
 *                              the first thread is inside its own; with "report", the
 *                              regions' report at exit (to stderr), else none
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tacho.h>

static int devnull;

static void writes(long n)
{
	for (long i = 0; i < n; i++)
		if (write(devnull, "x", 1) != 1)
			exit(3);
}

static void *second(void *arg)
{
	tacho_region_begin("second");
	writes(*(long *)arg);
	tacho_region_end("second");
	return NULL;
}

int main(int argc, char **argv)
{
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = "",
					.no_report_at_exit = !(argc > 3 && !strcmp(argv[3], "report")) };
	long out = argc > 1 ? atol(argv[1]) : 0, in = argc > 2 ? atol(argv[2]) : 0;
	long third = in / 3, rest = in - 2 * third;
	pthread_t t;

	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || tacho_regions_init(&o, NULL))
		return 2;
	writes(out / 2);
	tacho_region_begin("first");
	writes(third);
	tacho_region_end("first");
	writes(out - out / 2 - out / 4);
	tacho_region_begin("outer");
	tacho_region_begin("inner");
	writes(third);
	/* the other thread's region begins and ends while this one is open: the
	 * counters stay on throughout */
	if (pthread_create(&t, NULL, second, &rest) || pthread_join(t, NULL))
		return 2;
	tacho_region_end("inner");
	tacho_region_end("outer");
	writes(out / 4);
	return 0;
}
