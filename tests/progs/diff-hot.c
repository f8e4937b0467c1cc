/* diff-hot.c - a program whose hot function is chosen on its command line, for the
 * comparison of two recordings (tests/e2e/test-cmd-diff.c): `diff-hot old MS` burns MS
 * milliseconds of CPU in old_hot, `diff-hot new MS` in new_hot; the other is never
 * called, so that its row vanishes or appears for certain. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FP __attribute__((noinline, optimize("no-omit-frame-pointer")))

static volatile unsigned long sink;

#ifdef REBUILT
/* a build whose bytes, so build-id, differ from the default one's, for a binary rebuilt
 * at one path (tests/e2e/test-diff-recordings.c) */
const char diff_hot_build[] = "rebuilt";
#endif

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

FP static void old_hot(double until)
{
	while (cpu_ms() < until)
		for (unsigned long i = 0; i < 100000; i++)
			sink += i;
}

FP static void new_hot(double until)
{
	while (cpu_ms() < until)
		for (unsigned long i = 0; i < 100000; i++)
			sink ^= i;
}

int main(int argc, char **argv)
{
	double ms = argc > 2 ? strtod(argv[2], NULL) : 300;

	if (argc > 1 && !strcmp(argv[1], "new"))
		new_hot(cpu_ms() + ms);
	else
		old_hot(cpu_ms() + ms);
	return 0;
}
