/* test-buildid-cache.c - the build-id cache's policy inside the library: a file is copied
 * once, only while it is still the file that was mapped (same build-id), never over 64
 * MiB; the vDSO, memfds and devices are not noted; a copy is found by build-id. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/buildid-cache.h"
#include "symbols/symbols.h"
#include "tacho.h"

static char said[1024];

static void say(void *arg, const char *fmt, ...)
{
	va_list ap;

	(void)arg;
	va_start(ap, fmt);
	vsnprintf(said, sizeof(said), fmt, ap);
	va_end(ap);
}

static void test_policy(void **state)
{
	const char *bin = th_prog("sample-cpu"), *big = th_tmp("big.so");
	char dir[4096], path[4200];
	uint8_t bid[TC_BUILD_ID_MAX], other[TC_BUILD_ID_MAX];
	struct tc_bidcache *c;
	unsigned files;
	uint64_t bytes;
	struct stat st;
	int n, fd;
	(void)state;

	snprintf(dir, sizeof(dir), "%s", th_tmp("cache"));
	assert_int_equal(setenv("XDG_CACHE_HOME", th_tmpdir(), 1), 0);
	n = tc_build_id_of_file(bin, bid, sizeof(bid));
	assert_true(n > 0);
	assert_int_equal(stat(bin, &st), 0);
	/* a sparse file over the limit, with some build-id */
	fd = open(big, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)TC_BIDCACHE_FILE_MAX + 1), 0);
	close(fd);
	memset(other, 0x5a, sizeof(other));

	assert_int_equal(tc_bidcache_new(&c), 0);
	tc_bidcache_note(c, bin, bid, (unsigned)n);
	tc_bidcache_note(c, bin, bid, (unsigned)n);          /* once */
	tc_bidcache_note(c, big, other, 20);
	tc_bidcache_note(c, "[vdso]", other, 20);            /* not files */
	tc_bidcache_note(c, "/memfd:jit (deleted)", other, 20);
	tc_bidcache_note(c, "/dev/zero", other, 20);
	assert_int_equal(tc_bidcache_store(c, dir, say, NULL, &files, &bytes), 0);
	assert_int_equal(files, 1);
	assert_int_equal(bytes, (uint64_t)st.st_size);
	assert_non_null(strstr(said, "big.so"));
	assert_non_null(strstr(said, "over the 64 MiB a file may take"));
	tc_bidcache_free(c);

	/* the same note into the default folder ($XDG_CACHE_HOME/tacho), where the
	 * report's look-up by build-id finds it */
	snprintf(dir, sizeof(dir), "%s/tacho", th_tmpdir());
	assert_int_equal(tc_bidcache_new(&c), 0);
	tc_bidcache_note(c, bin, bid, (unsigned)n);
	assert_int_equal(tc_bidcache_store(c, dir, say, NULL, &files, &bytes), 0);
	assert_int_equal(files, 1);
	assert_int_equal(tc_bidcache_lookup(bid, (unsigned)n, path, sizeof(path)), 0);
	assert_int_equal(stat(path, &st), 0);
	/* a second recording of the same binary copies nothing */
	assert_int_equal(tc_bidcache_store(c, dir, say, NULL, &files, &bytes), 0);
	assert_int_equal(files, 0);
	tc_bidcache_free(c);
	assert_int_equal(tc_bidcache_lookup(other, 20, path, sizeof(path)), -ENOENT);

	/* a file that is no longer the one mapped (another build-id) is not copied */
	assert_int_equal(tc_bidcache_new(&c), 0);
	tc_bidcache_note(c, bin, other, 20);
	assert_int_equal(tc_bidcache_store(c, dir, say, NULL, &files, &bytes), 0);
	assert_int_equal(files, 0);
	tc_bidcache_free(c);
	assert_int_equal(tacho_buildid_cache_prune(dir, 0, &files, &bytes, NULL), 0);
	assert_int_equal(files, 1);
	snprintf(dir, sizeof(dir), "%s", th_tmp("cache"));
	assert_int_equal(tacho_buildid_cache_prune(dir, 0, &files, &bytes, NULL), 0);
	assert_int_equal(files, 1);
	unlink(big);
}

static void test_default_dir(void **state)
{
	char buf[64];
	(void)state;

	assert_int_equal(setenv("XDG_CACHE_HOME", "/x/cache", 1), 0);
	assert_int_equal(tacho_buildid_cache_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/x/cache/tacho");
	/* a relative XDG_CACHE_HOME is ignored (XDG says so) */
	assert_int_equal(setenv("XDG_CACHE_HOME", "rel", 1), 0);
	assert_int_equal(setenv("HOME", "/home/u", 1), 0);
	assert_int_equal(tacho_buildid_cache_dir(buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/home/u/.cache/tacho");
	assert_int_equal(tacho_buildid_cache_dir(buf, 8), -ENAMETOOLONG);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_int_equal(tacho_buildid_cache_dir(buf, sizeof(buf)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy),
		cmocka_unit_test(test_default_dir),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
