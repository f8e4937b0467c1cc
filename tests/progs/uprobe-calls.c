/* uprobe-calls.c - a program that calls one function an exactly known number of
 * times, for the uprobe tests (tests/unit/test-events-uprobe.c,
 * tests/e2e/test-uprobe.c). Built static and not PIE (Makefile: tests/progs).
 *
 *   uprobe-calls N        call work() N times (and leaf() 2N times, from work)
 *
 * work() and leaf() are global, noinline and not cloned, so each call enters the
 * symbol's first instruction: a uprobe on "work" counts exactly N, one on "leaf"
 * exactly 2N, and a uretprobe on "work" exactly N. */
#include <stdlib.h>

volatile long sink;

__attribute__((noinline, noclone, used)) void leaf(long i);
__attribute__((noinline, noclone, used)) void work(long i);

void leaf(long i)
{
	sink += i;
	__asm__ volatile("" ::: "memory");
}

void work(long i)
{
	leaf(i);
	leaf(-i);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;

	for (long i = 0; i < n; i++)
		work(i);
	return 0;
}
