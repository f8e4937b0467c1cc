/* test-linecache.c - the line cache (symbols/linecache.h): built ranges answer as added
 * and merge; a file with any count, offset, order, checksum or build-id wrong is
 * refused; a binary's cache (tc_symdso_line) answers what libdw answers at every
 * address of its code, is written once and mapped afterwards, and a corrupt one is
 * built again. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/buildid-cache.h"
#include "symbols/linecache.h"
#include "symbols/symbols.h"
#include "tacho/errors.h"
#include "util/util.h"

static const uint8_t bid[4] = { 1, 2, 3, 4 };

static void *image_of(size_t *len)
{
	struct tc_linebuild *b;
	void *img;

	assert_int_equal(tc_linebuild_new(&b), 0);
	assert_int_equal(tc_linebuild_add(b, 0x100, NULL, 0, NULL), 0);   /* dropped */
	assert_int_equal(tc_linebuild_add(b, 0x1000, "a.c", 10, "/src"), 0);
	assert_int_equal(tc_linebuild_add(b, 0x1004, "a.c", 10, "/src"), 0);  /* merged */
	assert_int_equal(tc_linebuild_add(b, 0x1008, "b.h", 3, NULL), 0);
	assert_int_equal(tc_linebuild_add(b, 0x1010, NULL, 0, NULL), 0);
	assert_int_equal(tc_linebuild_add(b, 0x2000, "a.c", 11, "/src"), 0);
	assert_int_equal(tc_linebuild_add(b, 0x2000, NULL, 0, NULL), -EINVAL);
	/* open at the end: refused, then closed */
	assert_int_equal(tc_linebuild_image(b, bid, sizeof(bid), &img, len), -EINVAL);
	assert_int_equal(tc_linebuild_add(b, 0x2010, NULL, 0, NULL), 0);
	assert_int_equal(tc_linebuild_image(b, bid, sizeof(bid), &img, len), 0);
	tc_linebuild_free(b);
	return img;
}

static void expect(const struct tc_linecache *c, uint64_t addr, const char *file, int line,
		   const char *dir)
{
	const char *f, *d;
	int l;

	assert_int_equal(tc_linecache_find(c, addr, &f, &l, &d), file != NULL);
	if (!file) {
		assert_null(f);
		assert_int_equal(l, 0);
		assert_null(d);
		return;
	}
	assert_string_equal(f, file);
	assert_int_equal(l, line);
	if (dir)
		assert_string_equal(d, dir);
	else
		assert_null(d);
}

static void test_build(void **state)
{
	struct tc_linecache *c;
	const char *why;
	size_t len;
	void *img = image_of(&len);
	(void)state;

	assert_int_equal(tc_linecache_parse(img, len, bid, sizeof(bid), &c, &why), 0);
	assert_int_equal(tc_linecache_count(c), 5);
	expect(c, 0, NULL, 0, NULL);
	expect(c, 0xfff, NULL, 0, NULL);
	expect(c, 0x1000, "a.c", 10, "/src");
	expect(c, 0x1007, "a.c", 10, "/src");
	expect(c, 0x1008, "b.h", 3, NULL);
	expect(c, 0x100f, "b.h", 3, NULL);
	expect(c, 0x1010, NULL, 0, NULL);
	expect(c, 0x1fff, NULL, 0, NULL);
	expect(c, 0x2000, "a.c", 11, "/src");
	expect(c, 0x200f, "a.c", 11, "/src");
	expect(c, 0x2010, NULL, 0, NULL);
	expect(c, UINT64_MAX, NULL, 0, NULL);
	tc_linecache_free(c);
	free(img);
}

/* Sets the checksum of a changed image again (the header's crc at byte 36, over what
 * follows the 64-byte header), so that the check after it is the one that refuses. */
static void rechecksum(uint8_t *img, size_t len)
{
	uint32_t crc = tc_crc32(0, img + 64, len - 64);

	memcpy(img + 36, &crc, 4);
}

static void refused(const uint8_t *img, size_t len, const uint8_t *id, size_t idlen,
		    const char *what)
{
	struct tc_linecache *c = (void *)1;
	const char *why = NULL;
	void *copy = malloc(len ? len : 1);

	memcpy(copy, img, len);
	assert_int_equal(tc_linecache_parse(copy, len, id, idlen, &c, &why), -TACHO_EPARSE);
	assert_null(c);
	assert_non_null(why);
	assert_non_null(strstr(why, what));
	free(copy);
}

static void test_corrupt(void **state)
{
	size_t len;
	uint8_t *img = image_of(&len), *bad = malloc(len);
	const uint8_t other[4] = { 1, 2, 3, 5 };
	uint64_t u64;
	uint32_t u32;
	(void)state;

	refused(img, 10, bid, sizeof(bid), "shorter");
	refused(img, len, other, sizeof(other), "build-id");
	refused(img, len, bid, 3, "build-id");
	refused(img, len - 1, bid, sizeof(bid), "counts");
	memcpy(bad, img, len);
	bad[0] = 'X';
	refused(bad, len, bid, sizeof(bid), "magic");
	memcpy(bad, img, len);
	bad[8] = 2;
	refused(bad, len, bid, sizeof(bid), "version");
	memcpy(bad, img, len);
	bad[len - 3] ^= 1;
	refused(bad, len, bid, sizeof(bid), "checksum");
	/* sound checksums over unsound contents: the last NUL gone */
	memcpy(bad, img, len);
	bad[len - 1] = 'x';
	rechecksum(bad, len);
	refused(bad, len, bid, sizeof(bid), "NUL");
	/* a range count past the end */
	memcpy(bad, img, len);
	u64 = 1000;
	memcpy(bad + 40, &u64, 8);
	rechecksum(bad, len);
	refused(bad, len, bid, sizeof(bid), "counts");
	/* ranges out of order: the second starts below the first */
	memcpy(bad, img, len);
	u64 = 0x10;
	memcpy(bad + 64 + 16, &u64, 8);
	rechecksum(bad, len);
	refused(bad, len, bid, sizeof(bid), "order");
	/* a range naming a file past the table */
	memcpy(bad, img, len);
	u32 = 77;
	memcpy(bad + 64 + 8, &u32, 4);
	rechecksum(bad, len);
	refused(bad, len, bid, sizeof(bid), "out of range");
	/* a file name offset past the strings (files follow the 5 ranges) */
	memcpy(bad, img, len);
	u32 = 1u << 30;
	memcpy(bad + 64 + 5 * 16, &u32, 4);
	rechecksum(bad, len);
	refused(bad, len, bid, sizeof(bid), "outside");
	free(bad);
	free(img);
}

/* libdw's answer and the cache's agree on every byte of the program's functions. */
static void compare(struct tc_symdso *cached, struct tc_symdso *plain, const char *fn)
{
	uint64_t start, size;

	assert_int_equal(tc_symdso_find(plain, fn, &start, &size), 0);
	for (uint64_t a = start - 32; a < start + size + 32; a++) {
		struct tc_symloc x = { 0 }, y = { 0 };

		tc_symdso_line(cached, a, &x);
		tc_symdso_line(plain, a, &y);
		assert_int_equal(x.line, y.line);
		assert_int_equal(!x.file, !y.file);
		assert_int_equal(!x.comp_dir, !y.comp_dir);
		if (x.file)
			assert_string_equal(x.file, y.file);
		if (x.comp_dir)
			assert_string_equal(x.comp_dir, y.comp_dir);
	}
}

static void open_pair(const char *bin, struct tc_symdso **cached, struct tc_symdso **plain)
{
	/* no cache folder can be made under /proc: libdw answers alone */
	assert_int_equal(setenv("XDG_CACHE_HOME", "/proc/no-such-folder", 1), 0);
	assert_int_equal(tc_symdso_open(bin, NULL, 0, plain), 0);
	{
		struct tc_symloc y;
		tc_symdso_line(*plain, 0, &y);   /* decides: no cache */
	}
	assert_int_equal(setenv("XDG_CACHE_HOME", th_tmpdir(), 1), 0);
	assert_int_equal(tc_symdso_open(bin, NULL, 0, cached), 0);
}

static void test_symdso(void **state)
{
	const char *bin = th_prog("inline-hot");
	static const char *fns[] = { "main", "work" };
	struct tc_symdso *cached, *plain;
	struct tc_linecache *c;
	char dir[4096], path[4200];
	uint8_t id[TC_BUILD_ID_MAX];
	struct stat st, st2;
	size_t idlen;
	const char *why;
	int fd;
	(void)state;

	open_pair(bin, &cached, &plain);
	{
		/* a copy: the dso's own goes with it */
		const uint8_t *p = tc_symdso_build_id(cached, &idlen);
		assert_non_null(p);
		assert_true(idlen <= sizeof(id));
		memcpy(id, p, idlen);
	}
	assert_int_equal(tc_bidcache_entry_dir(id, idlen, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/lines", dir);
	unlink(path);
	/* cold: built from libdw and written */
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
		compare(cached, plain, fns[i]);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(tc_linecache_map(fd, id, idlen, &c, &why), 0);
	assert_true(tc_linecache_count(c) > 2);
	tc_linecache_free(c);
	close(fd);
	tc_symdso_free(cached);

	/* warm: mapped, not written again */
	assert_int_equal(tc_symdso_open(bin, NULL, 0, &cached), 0);
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
		compare(cached, plain, fns[i]);
	assert_int_equal(stat(path, &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);
	tc_symdso_free(cached);

	/* corrupt: refused, built again (a new file), same answers */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "junk", 4, 100), 4);
	close(fd);
	assert_int_equal(tc_symdso_open(bin, NULL, 0, &cached), 0);
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
		compare(cached, plain, fns[i]);
	assert_int_equal(stat(path, &st2), 0);
	assert_int_not_equal(st2.st_ino, st.st_ino);
	fd = open(path, O_RDONLY);
	assert_int_equal(tc_linecache_map(fd, id, idlen, &c, &why), 0);
	tc_linecache_free(c);
	close(fd);
	tc_symdso_free(cached);
	tc_symdso_free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_symdso),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
