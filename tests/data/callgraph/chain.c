/* chain.c - the program of test-cmd-callgraph: leaf() reached only through
 * main -> a -> b -> c -> leaf, built -O2 -fomit-frame-pointer (noipa: no inlining, no
 * cloning; each caller works after its call, so no call is a tail call). With -DLIB the
 * chain lives in a shared library and main is in main-lib.c. Arguments: iterations of
 * leaf's loop, and how often it makes a system call (0: never), which puts the kernel's
 * frames under leaf's. */
#include <stdlib.h>
#include <unistd.h>

volatile long sink;

__attribute__((noipa)) long leaf(long n, long every)
{
	long s = 1;

	for (long i = 0; i < n; i++) {
		s = s * 31 + i;
		if (every && i % every == 0)
			s += getppid();
	}
	return s;
}

__attribute__((noipa)) long c(long n, long every)
{
	long r = leaf(n, every);
	sink += r;
	return r + 3;
}

__attribute__((noipa)) long b(long n, long every)
{
	long r = c(n, every);
	sink += r;
	return r + 2;
}

__attribute__((noipa)) long a(long n, long every)
{
	long r = b(n, every);
	sink += r;
	return r + 1;
}

#ifndef LIB
int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	long every = argc > 2 ? atol(argv[2]) : 0;

	sink = a(n, every);
	return 0;
}
#endif
