/* inline-hot.c - a program whose hot loop is in a function inlined into its caller,
 * for the inline frames of report (tests/unit/test-symbols-inline.c,
 * tests/e2e/test-report-inline.c): spin_sum is always inlined into work, which main
 * calls, so that the symbol table names work at the loop's addresses and DWARF's
 * inlined subroutine names spin_sum, called from the line of work marked as the call
 * (cpu_ms stays out of line, so that work's prologue is its own code). Built with
 * -O2 (the Makefile's rule for inline-*). */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline __attribute__((always_inline)) void spin_sum(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 3; /* INLINE-LOOP */
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) static void work(double until)
{
	while (cpu_ms() < until)
		spin_sum(200000); /* INLINE-CALL */
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? strtod(argv[1], NULL) : 300;

	work(cpu_ms() + ms);
	return 0;
}
