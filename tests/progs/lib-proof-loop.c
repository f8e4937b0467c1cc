/* lib-proof-loop.c - the loop whose instructions and branches the library's proofs of
 * the PMU count (lib/perf/verify.c), run N times, for the test that holds the proof's
 * numbers to valgrind's count of the same code (tests/e2e/test-cmd-sim.c): links
 * libtacho.
 *
 *   lib-proof-loop N       tc_source_proof_loop(N)
 */
#include <stdlib.h>

void tc_source_proof_loop(unsigned long n);

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1;

	if (n >= 1)
		tc_source_proof_loop((unsigned long)n);
	return 0;
}
