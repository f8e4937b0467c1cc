/* inline-nest.c - inlined functions within inlined functions, for the inline cache
 * (tests/unit/test-inlcache.c): outer is inlined into run, middle into outer and
 * inner into middle, with a block of its own in middle, so that the cache's one walk
 * of the DWARF meets nested inlined subroutines, lexical blocks and several ranges to
 * one scope, and must answer as libdw's dwarf_getscopes does at every address. Built
 * with -O2 (the Makefile's rule for inline-*). */
#include <stdlib.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) void inner(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * 3;
}

static inline __attribute__((always_inline)) void middle(unsigned long n)
{
	inner(n);
	if (n & 1) {
		unsigned long k = n * 7;
		inner(k);
		sink ^= k;
	}
	sink++;
}

static inline __attribute__((always_inline)) void outer(unsigned long n)
{
	middle(n);
	if (sink > n)
		middle(n / 2);
	sink--;
}

__attribute__((noinline)) static void run(unsigned long n)
{
	for (int r = 0; r < 3; r++)
		outer(n + (unsigned long)r);
}

int main(int argc, char **argv)
{
	run(argc > 1 ? strtoul(argv[1], NULL, 10) : 1000);
	return 0;
}
