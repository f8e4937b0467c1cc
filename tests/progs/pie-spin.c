/* pie-spin.c - spins in one function of a position-independent program linked with the
 * shared C library, then prints its own /proc/self/maps: the layout that the mappings
 * of a profile of it must reproduce (tests/e2e/test-pprof.c). Unlike the other helper
 * programs it is dynamic and PIE, so that its segments sit at randomized addresses and
 * its libraries' code at file offsets other than the executable's.
 * usage: pie-spin [MS]   MS: CPU milliseconds to spend in spin_hot (default 300) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Long rounds between clock reads, so that nearly every sample lands here. */
__attribute__((noinline, optimize("no-omit-frame-pointer")))
static void spin_hot(double ms)   /* pprof: start line */
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		for (unsigned long i = 0; i < 2000000; i++)
			sink += i;
}

__attribute__((optimize("no-omit-frame-pointer")))
int main(int argc, char **argv)
{
	char line[4096];
	FILE *f;

	spin_hot(argc > 1 ? atof(argv[1]) : 300);
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	fclose(f);
	return 0;
}
