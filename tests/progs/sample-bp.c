/* sample-bp.c - stores to one variable N times on one line, for data-breakpoint
 * sampling with an exact answer (tests/e2e/test-cmd-record.c).
 * usage: sample-bp --addr      prints the variable's address (fixed: not PIE)
 *        sample-bp N           stores N times */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile long sample_bp_target;
volatile long sample_bp_other;

__attribute__((noinline)) static void store_loop(long n)
{
	for (long i = 0; i < n; i++) {
		sample_bp_target = i; /* STORE-LINE */
		sample_bp_other = i + 1;
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--addr")) {
		printf("%p\n", (void *)&sample_bp_target);
		return 0;
	}
	store_loop(argc > 1 ? atol(argv[1]) : 1000);
	return 0;
}
