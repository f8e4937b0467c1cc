/* fuzz-cpu-decode.c - libFuzzer target for tacho_cpu_decode: any bytes become a dump of
 * 1-8 CPUs whose leaves hold any values (19-byte records: CPU, which leaf from a list of
 * the leaves the decoder reads, subleaf, EAX EBX ECX EDX), and decoding must never
 * crash, leak or read out of bounds, must return 0 whenever leaf 0 is there, and must
 * give a description whose counts are consistent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t leaves[] = {
	0, 1, 2, 4, 6, 7, 0xa, 0xb, 0xd, 0x14, 0x15, 0x16, 0x18, 0x1a, 0x1f,
	0x40000000, 0x40000010, 0x80000000, 0x80000001, 0x80000002, 0x80000003, 0x80000004,
	0x80000005, 0x80000006, 0x80000007, 0x80000008, 0x80000019, 0x8000001d, 0x8000001e,
	0x8000001f, 0x80000021, 0x80000022, 0x80000026,
};

static uint32_t u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tacho_cpuid_dump *d;
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	unsigned ncpus;
	int err;

	if (size < 1)
		return 0;
	ncpus = 1 + (data[0] & 7);
	d = tc_cpuid_dump_new();
	if (!d)
		abort();
	for (unsigned c = 0; c < ncpus; c++)
		if (tc_cpuid_dump_add_cpu(d, (int)c) < 0)
			abort();
	for (size_t off = 1; off + 19 <= size; off += 19) {
		const uint8_t *p = data + off;
		struct tacho_cpuid_regs r = { u32(p + 3), u32(p + 7), u32(p + 11), u32(p + 15) };
		uint32_t leaf = leaves[p[1] % (sizeof(leaves) / sizeof(leaves[0]))];
		/* CPU byte 0xff: every CPU (dumps mostly repeat leaves across CPUs) */
		for (unsigned c = 0; c < ncpus; c++)
			if (p[0] == 0xff || p[0] % ncpus == c)
				tc_cpuid_dump_set(d, c, leaf, p[2] & 0x3f, &r);
	}
	if (tc_cpuid_dump_finish(d) != 0) {
		tacho_cpuid_dump_free(d);
		return 0;
	}
	err = tacho_cpu_decode(d, &info);
	if (err == 0) {
		unsigned threads = 0;
		if (info.ncore_types < 1 || info.ncore_types > TACHO_CPU_MAX_CORE_TYPES ||
		    info.ncpus != tacho_cpuid_dump_ncpus(d) || !info.topo.packages)
			abort();
		for (unsigned k = 0; k < info.ncore_types; k++) {
			const struct tacho_cpu_core_type *ct = &info.core_types[k];
			if (ct->ncaches > TACHO_CPU_MAX_CACHES || ct->ntlbs > TACHO_CPU_MAX_TLBS ||
			    ct->first_cpu >= info.ncpus)
				abort();
			threads += ct->threads;
		}
		for (unsigned i = 0; i < info.ncpus; i++)
			if (info.cpus[i].core_type >= info.ncore_types)
				abort();
		for (unsigned i = 0; i < info.nnotes; i++)
			if (!info.notes[i] || !info.notes[i][0])
				abort();
		if (strlen(info.brand) > 48 || strlen(info.vendor_string) != 12)
			abort();
		(void)threads;
		tacho_cpu_info_exit(&info);
	} else if (err != -TACHO_ENOVALUE && err != -ENOMEM) {
		abort();
	}
	tacho_cpuid_dump_free(d);
	return 0;
}
