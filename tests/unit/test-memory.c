/* test-memory.c - the memory of a count grows linearly with its events: the peak of
 * the bytes the heap holds during tacho_stat_run, counted through the test's own
 * malloc, calloc, realloc and free (a seam over glibc's __libc_* calls), for 500 and
 * 2,000 ungrouped page-faults events. Each ungrouped event's group once held an array
 * sized by the total event count: 10,000 events took 0.7 GB.
 *
 * AddressSanitizer owns malloc in the asan build: there the seam is compiled out and
 * the test skips with that reason (the release build runs it). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tacho.h"
#include "harness.h"

#if defined(__SANITIZE_ADDRESS__)
#define COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNTING 0
#endif
#endif
#ifndef COUNTING
#define COUNTING 1
#endif

#if COUNTING
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t n);

/* Exported (the build hides symbols by default): libtacho.so, in the shared-library
 * variant, must find these before the C library's. */
#define SEAM __attribute__((visibility("default")))

/* bytes in use and their peak; atomics: the library may allocate in a thread */
static size_t in_use, peak;

static void *taken(void *p)
{
	if (p) {
		size_t now = __atomic_add_fetch(&in_use, malloc_usable_size(p), __ATOMIC_RELAXED);
		size_t old = __atomic_load_n(&peak, __ATOMIC_RELAXED);
		while (now > old && !__atomic_compare_exchange_n(&peak, &old, now, true,
								 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
	}
	return p;
}

static void given_back(void *p)
{
	if (p)
		__atomic_sub_fetch(&in_use, malloc_usable_size(p), __ATOMIC_RELAXED);
}

SEAM void *malloc(size_t n)
{
	return taken(__libc_malloc(n));
}

SEAM void *calloc(size_t n, size_t size)
{
	return taken(__libc_calloc(n, size));
}

SEAM void *realloc(void *p, size_t n)
{
	void *q;

	given_back(p);
	q = __libc_realloc(p, n);
	if (!q && p && n)
		taken(p);   /* the old block is still there */
	return taken(q);
}

SEAM void free(void *p)
{
	given_back(p);
	__libc_free(p);
}

SEAM void *memalign(size_t align, size_t n)
{
	return taken(__libc_memalign(align, n));
}

SEAM void *aligned_alloc(size_t align, size_t n)
{
	return taken(__libc_memalign(align, n));
}

SEAM int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);

	if (!p)
		return ENOMEM;
	*out = taken(p);
	return 0;
}
#endif

/* The peak of the heap during a count of n page-faults events of a program that
 * cannot be started (the events are opened on the held child before its exec fails),
 * above what the heap held before. */
static size_t peak_of(size_t n)
{
#if COUNTING
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_evlist *l = NULL;
	struct tacho_stat *s = NULL;
	char *const argv[] = { (char *)"/nonexistent/tacho-test-program", NULL };
	struct tacho_stat_opts o = { .sz = sizeof(o) };
	size_t len = n * sizeof("page-faults,"), base, at = 0;
	char *spec = malloc(len);

	if (!spec)
		fail_msg("out of memory");
	for (size_t i = 0; i < n; i++)
		at += (size_t)snprintf(spec + at, len - at, "%spage-faults", i ? "," : "");
	assert_int_equal(tacho_evlist_parse(spec, &l, &d), 0);
	free(spec);
	assert_int_equal(tacho_evlist_count(l), n);
	o.events = l;
	o.target = TACHO_TARGET_CHILD;
	o.argv = argv;
	base = __atomic_load_n(&in_use, __ATOMIC_RELAXED);
	__atomic_store_n(&peak, base, __ATOMIC_RELAXED);
	assert_int_equal(tacho_stat_run(&o, &s, &d), -TACHO_ENOSTART);
	tacho_evlist_free(l);
	return __atomic_load_n(&peak, __ATOMIC_RELAXED) - base;
#else
	(void)n;
	return 0;
#endif
}

static void test_linear_in_events(void **state)
{
	struct rlimit rl;
	size_t p1, p500, p2000;
	double per500, per2000;
	(void)state;

	if (!COUNTING)
		TEST_SKIP("AddressSanitizer owns malloc here: the release build counts the bytes");
	/* 2,000 events hold 2,000 descriptors */
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 2100)
		TEST_SKIP("2,000 events need 2,100 descriptors and the hard limit is %llu",
			  (unsigned long long)rl.rlim_max);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 2100) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 4096 ? 4096 : rl.rlim_max;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	p1 = peak_of(1);   /* what does not depend on the events: the PMU tables */
	p500 = peak_of(500);
	p2000 = peak_of(2000);
	assert_true(p500 > p1 && p2000 > p500);
	per500 = (double)(p500 - p1) / 500;
	per2000 = (double)(p2000 - p1) / 2000;
	printf("# heap peak: %zu bytes for 1 event; %.0f bytes per event at 500, %.0f at "
	       "2,000\n", p1, per500, per2000);
	/* linear: the same bytes per event (quadratic would be 4 times as many), and a
	 * few KiB each, not the total count's array in every event */
	assert_true(per2000 <= 1.25 * per500);
	assert_true(per2000 <= 8192);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear_in_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
