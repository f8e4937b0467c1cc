/* cpuid-dump.c - load a CPUID dump (cpuid -r, libcpuid, AIDA64 or InstLatx64 format)
 * and print leaf 0 of each CPU: the maximum basic leaf and the vendor string.
 *
 *   cc cpuid-dump.c $(pkg-config --cflags --libs tacho) -o cpuid-dump
 *   ./cpuid-dump dump.txt          (or no argument: this machine, read live)
 */
#include <stdio.h>
#include <string.h>

#include <tacho.h>

int main(int argc, char **argv)
{
	struct tacho_cpuid_dump *dump;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char line[600];
	int err;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [DUMP-FILE]\n", argv[0]);
		return 2;
	}
	if (argc == 2) {
		err = tacho_cpuid_dump_load(argv[1], &dump, &diag);
		if (err) {
			/* "FILE:LINE:COLUMN: what was wrong" */
			tacho_diag_format(&diag, line, sizeof(line));
			fprintf(stderr, "cpuid-dump: %s (%s)\n", line, tacho_strerror(err));
			return 1;
		}
	} else {
		err = tacho_cpuid_dump_live(&dump);
		if (err) {
			fprintf(stderr, "cpuid-dump: cannot read this machine's CPUID: %s\n",
				tacho_strerror(err));
			return 1;
		}
	}
	for (unsigned i = 0; i < tacho_cpuid_dump_ncpus(dump); i++) {
		struct tacho_cpuid_regs r;
		char vendor[13];

		if (tacho_cpuid_query(dump, i, 0, 0, &r) != 0) {
			printf("cpu %u: no leaf 0 in the dump\n", i);
			continue;
		}
		/* The vendor string is EBX, EDX, ECX in that order (SDM vol. 2A, CPUID). */
		memcpy(vendor, &r.ebx, 4);
		memcpy(vendor + 4, &r.edx, 4);
		memcpy(vendor + 8, &r.ecx, 4);
		vendor[12] = '\0';
		printf("cpu %u (os cpu %d): max leaf 0x%x, vendor \"%s\"\n", i,
		       tacho_cpuid_dump_os_cpu(dump, i), r.eax, vendor);
	}
	tacho_cpuid_dump_free(dump);
	return 0;
}
