/* test-inlcache.c - the inline cache (symbols/inlcache.h): built ranges answer as
 * added and merge; a file with any count, offset, order, checksum or build-id wrong is
 * refused; a binary's cache (tc_symdso_inlines) answers what libdw's dwarf_getscopes
 * answers at every byte of the functions of two programs (one with inlined functions
 * within inlined ones and blocks) and at every other byte of libc's busiest functions
 * (when its debug file is installed), is written once and mapped afterwards, and a
 * corrupt one is built again; a binary whose DWARF inlines nothing gets one of no
 * range. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/buildid-cache.h"
#include "symbols/inlcache.h"
#include "symbols/symbols.h"
#include "tacho/errors.h"
#include "util/util.h"

static const uint8_t bid[4] = { 1, 2, 3, 4 };

static void *image_of(size_t *len)
{
	static const struct tc_syminl one[] = { { "spin", "a.c", 7 } };
	static const struct tc_syminl two[] = { { "in", "b.h", 3 }, { "out", NULL, 0 } };
	static const struct tc_syminl unnamed[] = { { NULL, "a.c", 11 } };
	struct tc_inlbuild *b;
	void *img;

	assert_int_equal(tc_inlbuild_new(&b), 0);
	assert_int_equal(tc_inlbuild_add(b, 0x100, NULL, 0), 0);   /* dropped */
	assert_int_equal(tc_inlbuild_add(b, 0x1000, one, 1), 0);
	assert_int_equal(tc_inlbuild_add(b, 0x1004, one, 1), 0);   /* merged */
	assert_int_equal(tc_inlbuild_add(b, 0x1008, two, 2), 0);
	assert_int_equal(tc_inlbuild_add(b, 0x1010, NULL, 0), 0);
	assert_int_equal(tc_inlbuild_add(b, 0x2000, unnamed, 1), 0);
	assert_int_equal(tc_inlbuild_add(b, 0x2000, NULL, 0), -EINVAL);
	assert_int_equal(tc_inlbuild_add(b, 0x3000, one, TC_IC_MAX_CHAIN + 1), -EINVAL);
	/* open at the end: refused, then closed */
	assert_int_equal(tc_inlbuild_image(b, bid, sizeof(bid), &img, len), -EINVAL);
	assert_int_equal(tc_inlbuild_add(b, 0x2010, NULL, 0), 0);
	assert_int_equal(tc_inlbuild_image(b, bid, sizeof(bid), &img, len), 0);
	tc_inlbuild_free(b);
	return img;
}

static void expect(const struct tc_inlcache *c, uint64_t addr, const char *name,
		   const char *file, int line, const char *name2)
{
	struct tc_syminl out[4];
	int n = tc_inlcache_find(c, addr, out, 4);

	assert_int_equal(n, !line && !name ? 0 : name2 ? 2 : 1);
	if (!n)
		return;
	if (name)
		assert_string_equal(out[0].name, name);
	else
		assert_null(out[0].name);
	assert_string_equal(out[0].call_file, file);
	assert_int_equal(out[0].call_line, line);
	if (name2) {
		assert_string_equal(out[1].name, name2);
		assert_null(out[1].call_file);
		assert_int_equal(out[1].call_line, 0);
		/* at most max */
		assert_int_equal(tc_inlcache_find(c, addr, out, 1), 1);
	}
}

static void test_build(void **state)
{
	struct tc_inlcache *c;
	const char *why;
	size_t len;
	void *img = image_of(&len);
	(void)state;

	assert_int_equal(tc_inlcache_parse(img, len, bid, sizeof(bid), &c, &why), 0);
	assert_int_equal(tc_inlcache_count(c), 5);
	expect(c, 0, NULL, NULL, 0, NULL);
	expect(c, 0xfff, NULL, NULL, 0, NULL);
	expect(c, 0x1000, "spin", "a.c", 7, NULL);
	expect(c, 0x1007, "spin", "a.c", 7, NULL);
	expect(c, 0x1008, "in", "b.h", 3, "out");
	expect(c, 0x100f, "in", "b.h", 3, "out");
	expect(c, 0x1010, NULL, NULL, 0, NULL);
	expect(c, 0x1fff, NULL, NULL, 0, NULL);
	expect(c, 0x2000, NULL, "a.c", 11, NULL);
	expect(c, 0x200f, NULL, "a.c", 11, NULL);
	expect(c, 0x2010, NULL, NULL, 0, NULL);
	expect(c, UINT64_MAX, NULL, NULL, 0, NULL);
	tc_inlcache_free(c);
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
	struct tc_inlcache *c = (void *)1;
	const char *why = NULL;
	void *copy = malloc(len ? len : 1);

	memcpy(copy, img, len);
	assert_int_equal(tc_inlcache_parse(copy, len, id, idlen, &c, &why), -TACHO_EPARSE);
	assert_null(c);
	assert_non_null(why);
	assert_non_null(strstr(why, what));
	free(copy);
}

/* Writes v (size bytes) at off of a copy of img, sets its checksum right and expects
 * it refused for what. */
static void patched(const uint8_t *img, size_t len, size_t off, const void *v, size_t size,
		    const char *what)
{
	uint8_t *bad = malloc(len);

	memcpy(bad, img, len);
	memcpy(bad + off, v, size);
	rechecksum(bad, len);
	refused(bad, len, bid, sizeof(bid), what);
	free(bad);
}

static void test_corrupt(void **state)
{
	/* 5 ranges of 16 bytes from 64, then 4 frames of 12 bytes from 144 */
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
	/* sound checksums over unsound contents */
	memcpy(bad, img, len);
	bad[len - 1] = 'x';
	rechecksum(bad, len);
	refused(bad, len, bid, sizeof(bid), "NUL");
	u64 = 1000;
	patched(img, len, 40, &u64, 8, "counts");          /* ranges past the end */
	patched(img, len, 48, &u64, 8, "counts");          /* frames past the end */
	u64 = 0x10;
	patched(img, len, 64 + 16, &u64, 8, "order");      /* the second below the first */
	u32 = 3;
	patched(img, len, 64 + 16 + 8, &u32, 4, "frames out of range");  /* 3 + 2 > 4 */
	u32 = TC_IC_MAX_CHAIN + 1;
	patched(img, len, 64 + 12, &u32, 4, "frames out of range");
	u32 = 1;
	patched(img, len, 64 + 4 * 16 + 12, &u32, 4, "does not end");
	u32 = 1u << 30;
	patched(img, len, 144, &u32, 4, "out of range");   /* a name past the strings */
	patched(img, len, 144 + 4, &u32, 4, "out of range");   /* a file */
	u32 = 1u << 31;
	patched(img, len, 144 + 8, &u32, 4, "out of range");   /* a line past INT_MAX */
	free(bad);
	free(img);
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* libdw's answer and the cache's agree at every step-th byte of function fn (and 32
 * bytes around it); the number of those with a function inlined. */
static size_t compare(struct tc_symdso *cached, struct tc_symdso *plain, const char *fn,
		      unsigned step)
{
	uint64_t start, size;
	size_t inl = 0;

	if (tc_symdso_find(plain, fn, &start, &size) != 0)
		fail_msg("%s: not in the symbol table", fn);
	for (uint64_t a = start - 32; a < start + size + 32; a += step) {
		struct tc_syminl x[TC_IC_MAX_CHAIN], y[TC_IC_MAX_CHAIN];
		int n = tc_symdso_inlines(cached, a, x, TC_IC_MAX_CHAIN);
		int m = tc_symdso_inlines(plain, a, y, TC_IC_MAX_CHAIN);

		if (n != m)
			fail_msg("%s+%lld: %d inlined from the cache, %d from libdw", fn,
				 (long long)(a - start), n, m);
		for (int i = 0; i < n; i++)
			if (!same_str(x[i].name, y[i].name) ||
			    !same_str(x[i].call_file, y[i].call_file) ||
			    x[i].call_line != y[i].call_line)
				fail_msg("%s+%lld, frame %d: %s %s:%d from the cache, %s %s:%d "
					 "from libdw", fn, (long long)(a - start), i,
					 x[i].name ? x[i].name : "-", x[i].call_file ? x[i].call_file : "-",
					 x[i].call_line, y[i].name ? y[i].name : "-",
					 y[i].call_file ? y[i].call_file : "-", y[i].call_line);
		inl += n > 0;
	}
	return inl;
}

static void open_pair(const char *bin, struct tc_symdso **cached, struct tc_symdso **plain)
{
	struct tc_syminl y[1];

	/* no cache folder can be made under /proc: libdw answers alone */
	assert_int_equal(setenv("XDG_CACHE_HOME", "/proc/no-such-folder", 1), 0);
	assert_int_equal(tc_symdso_open(bin, NULL, 0, plain), 0);
	tc_symdso_inlines(*plain, 0, y, 1);   /* decides: no cache */
	assert_int_equal(setenv("XDG_CACHE_HOME", th_tmpdir(), 1), 0);
	assert_int_equal(tc_symdso_open(bin, NULL, 0, cached), 0);
}

/* The cache file of the binary that dso d reads, into path. */
static void cache_path(struct tc_symdso *d, char *path, size_t size, uint8_t *id, size_t *idlen)
{
	const uint8_t *p = tc_symdso_build_id(d, idlen);
	char dir[4096];

	assert_non_null(p);
	assert_true(*idlen <= TC_BUILD_ID_MAX);
	memcpy(id, p, *idlen);
	assert_int_equal(tc_bidcache_entry_dir(id, *idlen, dir, sizeof(dir)), 0);
	snprintf(path, size, "%s/inlines", dir);
}

static void test_symdso(void **state)
{
	const char *bin = th_prog("inline-nest");
	static const char *fns[] = { "main", "run" };
	struct tc_symdso *cached, *plain;
	struct tc_inlcache *c;
	char path[4200];
	uint8_t id[TC_BUILD_ID_MAX];
	struct stat st, st2;
	size_t idlen, inl = 0;
	const char *why;
	int fd;
	(void)state;

	open_pair(bin, &cached, &plain);
	cache_path(cached, path, sizeof(path), id, &idlen);
	unlink(path);
	/* cold: built in one walk and written */
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
		inl += compare(cached, plain, fns[i], 1);
	assert_true(inl > 10);   /* the comparison met inlined functions */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(tc_inlcache_map(fd, id, idlen, &c, &why), 0);
	assert_true(tc_inlcache_count(c) > 4);
	tc_inlcache_free(c);
	close(fd);
	tc_symdso_free(cached);

	/* warm: mapped, not written again */
	assert_int_equal(tc_symdso_open(bin, NULL, 0, &cached), 0);
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
		compare(cached, plain, fns[i], 1);
	assert_int_equal(stat(path, &st2), 0);
	assert_int_equal(st2.st_ino, st.st_ino);
	tc_symdso_free(cached);

	/* corrupt: refused, built again (a new file), same answers */
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "junk", 4, 70), 4);
	close(fd);
	assert_int_equal(tc_symdso_open(bin, NULL, 0, &cached), 0);
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++)
		compare(cached, plain, fns[i], 1);
	assert_int_equal(stat(path, &st2), 0);
	assert_int_not_equal(st2.st_ino, st.st_ino);
	tc_symdso_free(cached);
	tc_symdso_free(plain);

	/* the program with one inlined function, every byte of it */
	open_pair(th_prog("inline-hot"), &cached, &plain);
	assert_true(compare(cached, plain, "work", 1) > 0);
	compare(cached, plain, "main", 1);
	tc_symdso_free(cached);
	tc_symdso_free(plain);
}

/* A binary with DWARF and nothing inlined in it (built here at -O0): a cache of no
 * range, written and mapped, that answers none as libdw does. */
static void test_none_inlined(void **state)
{
	char src[4200], so[4200], path[4200];
	char *argv[] = { (char *)"cc", (char *)"-O0", (char *)"-g", (char *)"-shared",
			 (char *)"-fPIC", (char *)"-o", so, src, NULL };
	struct tc_symdso *cached, *plain;
	struct tc_inlcache *c;
	uint8_t id[TC_BUILD_ID_MAX];
	const char *why;
	struct th_run r;
	size_t idlen;
	FILE *f;
	int fd;
	(void)state;

	snprintf(src, sizeof(src), "%s", th_tmp("none.c"));
	snprintf(so, sizeof(so), "%s", th_tmp("libnone.so"));
	f = fopen(src, "w");
	assert_non_null(f);
	fputs("int twice(int x) { return 2 * x; }\nint thrice(int x) { return 3 * x; }\n", f);
	assert_int_equal(fclose(f), 0);
	th_runv(&r, NULL, argv);
	if (r.status != 0)
		TEST_SKIP("no C compiler to build a library with DWARF: %s", r.err);
	th_run_free(&r);
	open_pair(so, &cached, &plain);
	cache_path(cached, path, sizeof(path), id, &idlen);
	assert_int_equal(compare(cached, plain, "twice", 1), 0);
	assert_int_equal(compare(cached, plain, "thrice", 1), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(tc_inlcache_map(fd, id, idlen, &c, &why), 0);
	assert_int_equal(tc_inlcache_count(c), 0);
	tc_inlcache_free(c);
	close(fd);
	tc_symdso_free(cached);
	tc_symdso_free(plain);
}

/* libc's busiest functions, with its debug file (Debian's libc6-dbg): a large DWARF
 * with thousands of units, dwz's partial units and every kind of scope. */
static void test_libc(void **state)
{
	static const char *fns[] = { "_int_malloc", "_int_free", "__libc_malloc",
				     "__vfprintf_internal", "_IO_file_xsputn" };
	struct tc_symdso *cached, *plain;
	Dl_info info;
	size_t inl = 0;
	(void)state;

	/* a function of libc's own that no sanitizer wraps (ASan's malloc is its own) */
	if (!dladdr((void *)&gnu_get_libc_version, &info) || !info.dli_fname)
		TEST_SKIP("libc's file is not known (dladdr)");
	open_pair(info.dli_fname, &cached, &plain);
	for (size_t i = 0; i < ARRAY_SIZE(fns); i++) {
		uint64_t start, size;
		if (tc_symdso_find(plain, fns[i], &start, &size) == 0)
			inl += compare(cached, plain, fns[i], 2);
	}
	tc_symdso_free(cached);
	tc_symdso_free(plain);
	if (!inl)
		TEST_SKIP("%s: no inlined function met in its largest functions (is libc6-dbg, "
			  "its DWARF, installed?)", info.dli_fname);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_symdso),
		cmocka_unit_test(test_none_inlined),
		cmocka_unit_test(test_libc),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
