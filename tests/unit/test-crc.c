/* test-crc.c - the record file's CRC-32 (lib/util/crc32.c) held to zlib's crc32, both the
 * folding path and the portable tables, on random data of every length 0..4096 from
 * every alignment, and continued across splits. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/util.h"

typedef unsigned long (*zlib_crc32_fn)(unsigned long, const unsigned char *, unsigned int);

#define DATA_LEN (4096 + 64)

static zlib_crc32_fn zlib_crc32;
static unsigned char *data;

static int setup(void **state)
{
	/* zlib is there wherever libdw is (libdw links it); loaded, not linked, so that the
	 * library's own link line stays as it is */
	void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	if (z)
		zlib_crc32 = (zlib_crc32_fn)(uintptr_t)dlsym(z, "crc32");
	data = malloc(DATA_LEN);
	if (!data)
		return -1;
	for (size_t i = 0; i < DATA_LEN; i++) {
		/* xorshift64: the same bytes on every run */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		data[i] = (unsigned char)(x >> 32);
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(data);
	return 0;
}

static void test_check_value(void **state)
{
	(void)state;
	/* the standard check value of CRC-32/ISO-HDLC */
	assert_int_equal(tc_crc32(0, "123456789", 9), 0xcbf43926);
	assert_int_equal(tc_crc32_portable(0, "123456789", 9), 0xcbf43926);
	assert_int_equal(tc_crc32(0, "", 0), 0);
	assert_int_equal(tc_crc32(0x12345678, data, 0), 0x12345678);
}

static void test_every_length(void **state)
{
	(void)state;
	if (!zlib_crc32)
		TEST_SKIP("libz.so.1 cannot be loaded: no reference to compare with");
	/* every length, each from a start that walks through the 16 alignments */
	for (size_t len = 0; len <= 4096; len++) {
		const unsigned char *p = data + len % 16;
		uint32_t want = (uint32_t)zlib_crc32(0, p, (unsigned)len);

		if (tc_crc32(0, p, len) != want || tc_crc32_portable(0, p, len) != want)
			fail_msg("length %zu from offset %zu: %08x / %08x, zlib %08x", len, len % 16,
				 tc_crc32(0, p, len), tc_crc32_portable(0, p, len), want);
	}
	/* every start 0..63 for the lengths around the folding's thresholds */
	for (size_t off = 0; off < 64; off++)
		for (size_t len = 0; len <= 300; len++) {
			uint32_t want = (uint32_t)zlib_crc32(0, data + off, (unsigned)len);

			assert_int_equal(tc_crc32(0, data + off, len), want);
			assert_int_equal(tc_crc32_portable(0, data + off, len), want);
		}
}

static void test_continued(void **state)
{
	(void)state;
	if (!zlib_crc32)
		TEST_SKIP("libz.so.1 cannot be loaded: no reference to compare with");
	/* a crc continued over two pieces is the crc of the whole, at every split, from a
	 * seed that is not 0 */
	for (size_t len = 0; len <= 1024; len += 37)
		for (size_t cut = 0; cut <= len; cut++) {
			uint32_t seed = (uint32_t)zlib_crc32(0, data + 3000, 5);
			uint32_t want = (uint32_t)zlib_crc32(seed, data + 1, (unsigned)len);
			uint32_t c = tc_crc32(tc_crc32(seed, data + 1, cut), data + 1 + cut, len - cut);
			uint32_t cp = tc_crc32_portable(tc_crc32_portable(seed, data + 1, cut),
							data + 1 + cut, len - cut);

			assert_int_equal(c, want);
			assert_int_equal(cp, want);
		}
}

static void test_clmul_named(void **state)
{
	(void)state;
	/* which path the checks above went through on this machine */
	if (!tc_crc32_has_clmul())
		TEST_SKIP("this CPU has no PCLMULQDQ: only the tables were compared");
	assert_true(tc_crc32_has_clmul());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_every_length),
		cmocka_unit_test(test_continued),
		cmocka_unit_test(test_clmul_named),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
