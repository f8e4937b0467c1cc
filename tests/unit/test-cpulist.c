/* test-cpulist.c - CPU lists as -C and the kernel write them: good lists, bad ones with
 * the column of the fault, overlapping ranges merged, and what one call allocates. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/util.h"

static const struct {
	int line;
	const char *in;
	int err;
	unsigned column;        /* for errors */
	size_t n;
	int cpus[8];
} cases[] = {
	{ __LINE__, "0", 0, 0, 1, { 0 } },
	{ __LINE__, "0-3", 0, 0, 4, { 0, 1, 2, 3 } },
	{ __LINE__, "8,0-1,3", 0, 0, 4, { 0, 1, 3, 8 } },
	{ __LINE__, "2,2,1-2", 0, 0, 2, { 1, 2 } },
	{ __LINE__, "5-5", 0, 0, 1, { 5 } },
	{ __LINE__, "65535", 0, 0, 1, { 65535 } },
	{ __LINE__, "", -TACHO_EEMPTY, 1, 0, { 0 } },
	{ __LINE__, "3-1", -TACHO_EPARSE, 3, 0, { 0 } },
	{ __LINE__, "1,", -TACHO_EPARSE, 3, 0, { 0 } },
	{ __LINE__, ",1", -TACHO_EPARSE, 1, 0, { 0 } },
	{ __LINE__, "1-", -TACHO_EPARSE, 3, 0, { 0 } },
	{ __LINE__, "a", -TACHO_EPARSE, 1, 0, { 0 } },
	{ __LINE__, "0 ,1", -TACHO_EPARSE, 2, 0, { 0 } },
	{ __LINE__, "-1", -TACHO_EPARSE, 1, 0, { 0 } },
	{ __LINE__, "65536", -TACHO_EOUTOFRANGE, 1, 0, { 0 } },
	{ __LINE__, "0-99999999999", -TACHO_EOUTOFRANGE, 3, 0, { 0 } },
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		int *cpus = NULL;
		size_t n = 99;
		int err = tc_parse_cpu_list(cases[i].in, &cpus, &n, &d);

		if (err != cases[i].err)
			fail_msg("case at line %d (\"%s\"): err %d, want %d", cases[i].line,
				 cases[i].in, err, cases[i].err);
		if (err) {
			if (d.column != cases[i].column)
				fail_msg("case at line %d: column %u, want %u (%s)", cases[i].line,
					 d.column, cases[i].column, d.message);
			assert_null(cpus);
			assert_int_equal(n, 0);
			continue;
		}
		if (n != cases[i].n || memcmp(cpus, cases[i].cpus, n * sizeof(int)) != 0)
			fail_msg("case at line %d (\"%s\"): %zu CPUs, first %d", cases[i].line,
				 cases[i].in, n, n ? cpus[0] : -1);
		free(cpus);
	}
}

/* Ranges that overlap, nest and repeat in any order give each CPU once, sorted. */
static void test_overlaps(void **state)
{
	int *cpus;
	size_t n;
	(void)state;

	assert_int_equal(tc_parse_cpu_list("10-20,0-3,2-12,15,30-31,5-6,19-25", &cpus, &n,
					   NULL), 0);
	assert_int_equal(n, 26 + 2);
	for (size_t i = 0; i < 26; i++)
		assert_int_equal(cpus[i], (int)i);
	assert_int_equal(cpus[26], 30);
	assert_int_equal(cpus[27], 31);
	free(cpus);
	assert_int_equal(tc_parse_cpu_list("0-65535,7", &cpus, &n, NULL), 0);
	assert_int_equal(n, 65536);
	assert_int_equal(cpus[65535], 65535);
	free(cpus);
}

#ifdef __SANITIZE_ADDRESS__
/* ASan's allocator calls this for every allocation (the runtime exports it; gcc ships
 * no header declaring it). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *,
								  size_t),
					      void (*free_hook)(const volatile void *));
static size_t largest;
static bool watching;

static void on_malloc(const volatile void *p, size_t size)
{
	(void)p;
	if (watching && size > largest)
		largest = size;
}

static void on_free(const volatile void *p)
{
	(void)p;
}
#endif

/* The parser runs for every sysfs CPU list tacho reads (online CPUs, each cache's and
 * each PMU's CPUs): a short list must not cost a table of every possible CPU (it was a
 * 64 KiB calloc per call). */
static void test_small_allocation(void **state)
{
	(void)state;
#ifdef __SANITIZE_ADDRESS__
	int *cpus;
	size_t n;

	assert_int_not_equal(__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free), 0);
	watching = true;
	assert_int_equal(tc_parse_cpu_list("0-3,8,10-11", &cpus, &n, NULL), 0);
	watching = false;
	assert_int_equal(n, 7);
	free(cpus);
	if (largest > 256)
		fail_msg("parsing \"0-3,8,10-11\" allocated a block of %zu bytes", largest);
#else
	TEST_SKIP("needs the allocation hook of the ASan build (build/asan runs this test)");
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_overlaps),
		cmocka_unit_test(test_small_allocation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
