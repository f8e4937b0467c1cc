/* sample-cxxname.c - burns CPU in a function whose symbol-table name is a mangled C++
 * name, without a C++ compiler: an asm label gives the C function the name
 * _ZN5tacho6detail4spinEv, which demangles to "tacho::detail::spin()" (Itanium C++
 * ABI 5.1). For the demangling tests (tests/unit/test-symbols.c, e2e record/report).
 * usage: sample-cxxname [MS]   MS: CPU milliseconds to burn (default 300) */
#include <stdlib.h>
#include <time.h>

#define FP __attribute__((noinline, optimize("no-omit-frame-pointer")))

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void spin(void) __asm__("_ZN5tacho6detail4spinEv");

FP void spin(void)
{
	for (unsigned long i = 0; i < 200000; i++)
		sink += i;
}

FP int main(int argc, char **argv)
{
	double end = cpu_ms() + (argc > 1 ? atof(argv[1]) : 300);

	while (cpu_ms() < end)
		spin();
	return 0;
}
