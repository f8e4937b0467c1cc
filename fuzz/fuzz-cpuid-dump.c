/* fuzz-cpuid-dump.c - libFuzzer target for the CPUID dump parser: any bytes either fail
 * with a diagnostic or give a dump that writes back (`cpuid -r` form) and re-parses to
 * the very same text; queries on the result never fail in other ways. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *to_text(const struct tacho_cpuid_dump *d, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	if (tacho_cpuid_dump_write_raw(d, f) != 0)
		abort();
	fclose(f);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_cpuid_dump *d = NULL, *back = NULL;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char *t1, *t2;
	size_t l1, l2;
	int err;

	err = tacho_cpuid_dump_parse((const char *)data, size, "fuzz", &d, &diag);
	if (err) {
		/* a failure leaves nothing behind and says something */
		if (d || !diag.message[0])
			abort();
		return 0;
	}
	if (tacho_cpuid_dump_ncpus(d) == 0)
		abort();
	for (unsigned c = 0; c < tacho_cpuid_dump_ncpus(d); c++) {
		static const uint32_t leaves[] = { 0, 1, 4, 0xb, 0x40000000, 0x40000100,
						   0x80000000, 0x80000001, 0xc0000001 };
		struct tacho_cpuid_regs r;
		for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
			err = tacho_cpuid_query(d, c, leaves[i], 1, &r);
			if (err && err != -TACHO_ENOVALUE)
				abort();
		}
		(void)tacho_cpuid_dump_os_cpu(d, c);
	}
	t1 = to_text(d, &l1);
	err = tacho_cpuid_dump_parse(t1, l1, "fuzz-rt", &back, &diag);
	if (err) {
		fprintf(stderr, "round trip failed: %s: %s\n", tacho_strerror(err), diag.message);
		abort();
	}
	t2 = to_text(back, &l2);
	if (l1 != l2 || memcmp(t1, t2, l1) != 0) {
		fprintf(stderr, "round trip changed the dump\n");
		abort();
	}
	free(t1);
	free(t2);
	tacho_cpuid_dump_free(back);
	tacho_cpuid_dump_free(d);
	return 0;
}
