/* fuzz-kallsyms.c - libFuzzer target for the /proc/kallsyms reader (tc_kallsyms_load, read
 * through a memfd as from a file) and its lookup: any text loads or fails with an error
 * code; a lookup gives NULL or a name and a start at or below the address, and the
 * start's own lookup gives the same start; a table that hides its addresses finds
 * nothing. The same bytes as the cached copy of the kernel's symbols (its header, then
 * copy mapped: tc_kallsyms_cache_load), asked for the range in the input's last 16
 * bytes: it loads only a copy that names the range's start, or fails with a code, and
 * its look-ups give NULL or a name that starts at or below the address (a copy tacho
 * did not write, out of order, may name another symbol: the bisection trusts tacho's
 * order, and checks only the lines it reads). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_mapped(struct tc_kallsyms *k, uint64_t addr)
{
	uint64_t start = 0;
	const char *name = tc_kallsyms_lookup(k, addr, &start);

	if (name && (start > addr || strlen(name) > 1 << 20))
		abort();
}

static void check(struct tc_kallsyms *k, uint64_t addr)
{
	uint64_t start = 0, again = 0;
	const char *name = tc_kallsyms_lookup(k, addr, &start);

	if (!name)
		return;
	if (tc_kallsyms_hidden(k) || start > addr || strlen(name) > 1 << 20)
		abort();
	if (!tc_kallsyms_lookup(k, start, &again) || again != start)
		abort();
}

#define BOOT "0f0f7a8a-276c-49bd-ad67-b153ef2b3935"

static char dir[] = "/tmp/fuzz-kallsyms-XXXXXX", file[128];

/* The folder goes with the process. */
static void remove_dir(void)
{
	char sub[128];

	unlink(file);
	snprintf(sub, sizeof(sub), "%s/tacho", dir);
	rmdir(sub);
	rmdir(dir);
}

/* The input as the cache file of boot BOOT in a folder of this process's own. */
static void as_cache(const uint8_t *data, size_t size)
{
	struct tc_kallsyms *k;
	uint64_t lo = 0, hi = 0;
	int fd;

	if (!file[0]) {
		if (!mkdtemp(dir))
			return;
		atexit(remove_dir);
		setenv("XDG_CACHE_HOME", dir, 1);
		snprintf(file, sizeof(file), "%s/tacho", dir);
		mkdir(file, 0700);
		snprintf(file, sizeof(file), "%s/tacho/kallsyms-" BOOT, dir);
	}
	/* mode 0600 whatever the umask: a copy others may write is refused */
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (fchmod(fd, 0600) || write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	close(fd);
	/* the range from the last 16 bytes: the first are the header's */
	if (size >= 16) {
		memcpy(&lo, data + size - 16, 8);
		memcpy(&hi, data + size - 8, 8);
	}
	if (tc_kallsyms_cache_load(BOOT, lo, hi, &k) != 0)
		return;
	if (!tc_kallsyms_lookup(k, lo, NULL))
		abort();
	check_mapped(k, lo);
	check_mapped(k, hi);
	check_mapped(k, 0);
	check_mapped(k, UINT64_MAX);
	tc_kallsyms_free(k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct tc_kallsyms *k;
	char path[64], *text;

	if (fd < 0)
		fd = memfd_create("fuzz-kallsyms", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	as_cache(data, size);
	if (tc_kallsyms_load(path, &k) != 0)
		return 0;
	/* addresses from the input's own bytes, and the edges */
	check(k, 0);
	check(k, UINT64_MAX);
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		check(k, a);
		check(k, a | 0xffffffff80000000ull);
	}
	/* every line's address as it is written, and the byte after it */
	text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
		for (char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			uint64_t a = strtoull(p, NULL, 16);
			check(k, a);
			check(k, a + 1);
		}
		free(text);
	}
	tc_kallsyms_free(k);
	return 0;
}
