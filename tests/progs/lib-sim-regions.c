/* lib-sim-regions.c - nested regions around loops of known length, for the tests of
 * regions under simulation (tests/e2e/test-cmd-sim.c): links libtacho.
 *
 *   lib-sim-regions N M    region "outer" around N iterations of a 6-instruction loop
 *                          and region "inner", inside it, around M iterations
 */
#include <stdlib.h>

#include <tacho.h>

static void loop(long n)
{
	if (n <= 0)
		return;
	__asm__ volatile("1:\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "nop\n\t"
			 "dec %0\n\t"
			 "jnz 1b"
			 : "+r"(n)
			 :
			 : "cc");
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0, m = argc > 2 ? atol(argv[2]) : 0;

	tacho_region_begin("outer");
	loop(n);
	tacho_region_begin("inner");
	loop(m);
	tacho_region_end("inner");
	tacho_region_end("outer");
	return 0;
}
