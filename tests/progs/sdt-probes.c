/* sdt-probes.c - USDT probes (systemtap's sys/sdt.h, as Python, PostgreSQL and glibc
 * carry them) fired a known number of times, for the SDT events of tacho stat
 * (tests/e2e/test-stat-events.c). Built static and not position-independent like every
 * helper of tests/progs.
 *
 *   sdt-probes K    fires tacho_test:tick K times, and tacho_test:guarded K times
 *                   where its semaphore says a tracer is attached (the kernel raises
 *                   it when a uprobe with its ref_ctr_offset is placed), else never
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

/* the semaphores, sys/sdt.h's names in its section: with _SDT_HAS_SEMAPHORES every
 * probe has one; tick fires whatever its own says, guarded only when raised */
unsigned short tacho_test_tick_semaphore __attribute__((section(".probes")));
unsigned short tacho_test_guarded_semaphore __attribute__((section(".probes")));

int main(int argc, char **argv)
{
	long k = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
	long guarded = 0;

	for (long i = 0; i < k; i++) {
		DTRACE_PROBE1(tacho_test, tick, i);
		if (tacho_test_guarded_semaphore) {
			DTRACE_PROBE1(tacho_test, guarded, i);
			guarded++;
		}
	}
	/* how often the guarded probe's site ran: the test compares */
	printf("%ld\n", guarded);
	return 0;
}
