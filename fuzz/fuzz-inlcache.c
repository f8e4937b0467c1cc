/* fuzz-inlcache.c - libFuzzer target for the inline cache's reader (tc_inlcache_parse,
 * on an 8-byte-aligned copy of the input, as from a mapped file) and its look-up: any
 * bytes are refused with a reason, or give a table whose every look-up stays inside it
 * (ASan sees a read past the copy): at most max frames, each name and file a string
 * or NULL and a line not below 0. Addresses are taken from the input's ranges area and
 * around them. The build-id it expects is the seed's (bytes 1 2 3 4). Each input is
 * read twice: as it is, and with its checksum set right (a header's bytes 36-39, over
 * what follows its 64 bytes), so that the checks behind the checksum are reached. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/inlcache.h"
#include "tacho/errors.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct tc_inlcache *c, uint64_t addr)
{
	struct tc_syminl out[4];
	int n = tc_inlcache_find(c, addr, out, 4);

	if (n < 0 || n > 4)
		abort();
	for (int i = 0; i < n; i++) {
		if (out[i].name)
			(void)strlen(out[i].name);
		if (out[i].call_file)
			(void)strlen(out[i].call_file);
		if (out[i].call_line < 0)
			abort();
	}
}

static void one(const uint8_t *data, size_t size, bool fix)
{
	static const uint8_t bid[4] = { 1, 2, 3, 4 };
	struct tc_inlcache *c;
	const char *why;
	uint64_t *copy = malloc((size / 8 + 1) * 8);
	int err;

	if (!copy)
		return;
	memcpy(copy, data, size);
	if (fix && size >= 64) {
		uint32_t crc = tc_crc32(0, (const uint8_t *)copy + 64, size - 64);
		memcpy((uint8_t *)copy + 36, &crc, 4);
	}
	err = tc_inlcache_parse(copy, size, bid, sizeof(bid), &c, &why);
	if (err) {
		if (err != -TACHO_EPARSE || !why || c)
			abort();
		free(copy);
		return;
	}
	for (size_t off = 64; off + 8 <= size && off < 64 + 16 * 64; off += 16) {
		uint64_t a;
		memcpy(&a, data + off, 8);
		check(c, a);
		check(c, a - 1);
		check(c, a + 1);
	}
	check(c, 0);
	check(c, UINT64_MAX);
	tc_inlcache_free(c);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size, false);
	one(data, size, true);
	return 0;
}
