/* main-lib.c - main of test-cmd-callgraph's program whose chain a -> b -> c -> leaf is
 * in a shared library built without frame pointers (chain.c with -DLIB). */
#include <stdlib.h>

long a(long n, long every);
volatile long msink;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	long every = argc > 2 ? atol(argv[2]) : 0;

	msink = a(n, every);
	return 0;
}
