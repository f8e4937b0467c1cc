/* cpu-info.c - decode this machine's CPUID (or a dump file) and print the vendor, the
 * brand string and the caches of each kind of core, with the leaf each came from, then
 * the decoder's notes.
 *
 *   cc cpu-info.c $(pkg-config --cflags --libs tacho) -o cpu-info
 *   ./cpu-info                 (this machine)   ./cpu-info dump.txt   (a dump)
 */
#include <stdio.h>

#include <tacho.h>

int main(int argc, char **argv)
{
	struct tacho_cpuid_dump *dump;
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char line[600];
	int err;

	/* first of all: the library that runs serves the header this was built with */
	if (TACHO_CHECK_VERSION(&diag)) {
		fprintf(stderr, "cpu-info: %s\n", diag.message);
		return 1;
	}
	if (argc > 2) {
		fprintf(stderr, "usage: %s [DUMP-FILE]\n", argv[0]);
		return 2;
	}
	err = argc == 2 ? tacho_cpuid_dump_load(argv[1], &dump, &diag)
			: tacho_cpuid_dump_live(&dump);
	if (err) {
		if (argc == 2) {
			tacho_diag_format(&diag, line, sizeof(line));
			fprintf(stderr, "cpu-info: %s (%s)\n", line, tacho_strerror(err));
		} else {
			fprintf(stderr, "cpu-info: cannot read CPUID: %s\n", tacho_strerror(err));
		}
		return 1;
	}
	/* Pure: the same dump always decodes to the same description. */
	err = tacho_cpu_decode(dump, &info);
	tacho_cpuid_dump_free(dump);
	if (err) {
		fprintf(stderr, "cpu-info: cannot decode: %s\n", tacho_strerror(err));
		return 1;
	}
	printf("vendor:  %s (\"%s\")\n", tacho_cpu_vendor_name(info.vendor), info.vendor_string);
	printf("brand:   %s\n", info.brand[0] ? info.brand : "(none)");
	printf("family %u, model %u (0x%x), stepping %u; %s\n", info.family, info.model,
	       info.model, info.stepping, info.uarch ? info.uarch : "microarchitecture unknown");
	printf("%u package(s), %u core(s) and %u logical CPU(s) per package\n",
	       info.topo.packages, info.topo.cores_per_package, info.topo.logical_per_package);
	for (unsigned k = 0; k < info.ncore_types; k++) {
		const struct tacho_cpu_core_type *ct = &info.core_types[k];

		printf("%s cores: %u, threads: %u\n", tacho_core_kind_name(ct->kind), ct->cores,
		       ct->threads);
		for (unsigned i = 0; i < ct->ncaches; i++) {
			const struct tacho_cpu_cache *c = &ct->caches[i];
			char size[24] = "?", ways[16] = "?", lsz[16] = "?", inst[16] = "?";

			/* 0 means CPUID did not say: printed as "?", never as a zero */
			if (c->size)
				snprintf(size, sizeof(size), "%llu",
					 (unsigned long long)(c->size / 1024));
			if (c->fully_assoc)
				snprintf(ways, sizeof(ways), "full");
			else if (c->ways)
				snprintf(ways, sizeof(ways), "%u", c->ways);
			if (c->line_size)
				snprintf(lsz, sizeof(lsz), "%u", c->line_size);
			if (c->instances >= 0)
				snprintf(inst, sizeof(inst), "%d", c->instances);
			printf("  L%u %-11s %8s KiB  %4s-way  %3s-byte lines  x%s  (%s)\n",
			       c->level, tacho_cache_type_name(c->type), size, ways, lsz, inst,
			       tacho_cpu_source_name(c->source));
		}
	}
	for (unsigned i = 0; i < info.nnotes; i++)
		printf("note: %s\n", info.notes[i]);
	tacho_cpu_info_exit(&info);
	return 0;
}
