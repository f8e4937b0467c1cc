/* fuzz-elf.c - libFuzzer target for what tacho reads of ELF files it did not make: the
 * symbol tables, program headers, build-id notes and line tables (tc_symdso_*, through
 * elfutils, from a file and from memory as the vDSO is read), the build-id at record
 * time, and the uprobe path: a function's file offset from .symtab/.dynsym and the
 * check that an offset lies in an executable segment. The input is written to a
 * temporary file, as the code reads a path. Checks: any bytes open or fail with an
 * error code and a sentence; a symbol found by name is found again by its address; an
 * offset the uprobe path computes passes its own check; a lookup's function starts at
 * or below the address; reads stay within what was asked. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events/events.h"
#include "record/recfile.h"
#include "symbols/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

/* A folder in memory when there is one: files are rewritten on every run. */
static const char *fuzz_tmp(void)
{
	return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}


static void remove_file(void)
{
	unlink(path);
}

static const char *const names[] = { "main", "twice", "_start", "helper", "" };

static void symdso(struct tc_symdso *d, const uint8_t *data, size_t size)
{
	uint8_t buf[64];
	uint64_t start, len, addr;
	struct tc_symloc sl;
	size_t blen;

	if (tc_symdso_build_id(d, &blen) == NULL && blen)
		abort();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (tc_symdso_find(d, names[i], &start, &len) != 0)
			continue;
		if (tc_symdso_lookup(d, start, &sl) != 0 || (sl.symbol && sl.sym_start > start))
			abort();
		if (tc_symdso_read(d, start, buf, sizeof(buf)) > sizeof(buf))
			abort();
		tc_symdso_file_to_addr(d, start, &addr);
	}
	/* addresses taken from the input itself */
	for (size_t i = 0; i + 8 <= size && i < 128; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		if (tc_symdso_lookup(d, a, &sl) == 0 && sl.symbol && sl.sym_start > a)
			abort();
		if (tc_symdso_read(d, a, buf, sizeof(buf)) > sizeof(buf))
			abort();
		tc_symdso_file_to_addr(d, a & 0xffffff, &addr);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tc_symdso *d;
	uint8_t bid[TC_BUILD_ID_MAX];
	char why[512];
	uint64_t off;
	int fd;

	if (!path[0]) {
		snprintf(path, sizeof(path), "%s/fuzz-elf-%d", fuzz_tmp(), (int)getpid());
		atexit(remove_file);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	close(fd);

	if (tc_build_id_of_file(path, bid, sizeof(bid)) > (int)sizeof(bid) ||
	    tc_build_id_of_image(data, size, bid, sizeof(bid)) > (int)sizeof(bid))
		abort();
	if (tc_symdso_open(path, NULL, 0, &d) == 0) {
		symdso(d, data, size);
		tc_symdso_free(d);
	}
	if (size && tc_symdso_open("[vdso]", data, size, &d) == 0) {
		symdso(d, data, size);
		tc_symdso_free(d);
	}

	/* the uprobe path: what it computes, it accepts */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		why[0] = '\0';
		if (tc_uprobe_symbol_offset(path, names[i], strlen(names[i]), 0, &off, why,
					    sizeof(why)) == 0) {
			if (tc_uprobe_check_offset(path, off, why, sizeof(why)) != 0) {
				fprintf(stderr, "%s: offset %#llx: %s\n", names[i],
					(unsigned long long)off, why);
				abort();
			}
		} else if (!why[0]) {
			abort();   /* an error comes with its sentence */
		}
		tc_uprobe_symbol_offset(path, names[i], strlen(names[i]), 1, &off, why,
					sizeof(why));
	}
	why[0] = '\0';
	if (tc_uprobe_check_offset(path, size / 2, why, sizeof(why)) != 0 && !why[0])
		abort();
	return 0;
}
