/* test-region-race.c - regions under concurrency: 64 threads creating regions while
 * another thread takes reports in a loop (the report must read a consistent snapshot of
 * tables their owners grow), and many short threads whose states must not pile up.
 * Built and run in the ThreadSanitizer tree too (make tests-tsan). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tacho.h"
#include "regions/region.h"

#define WORKERS 64
#define NAMES 200     /* a thread's table grows from 16 to 256 records meanwhile */
#define ROUNDS 3

static char names[NAMES][16];
static int setup_err;

static int group_setup(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	/* page-faults: a software event, so the counters' hot path runs where it can */
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = "page-faults",
					.no_report_at_exit = true };
	(void)state;

	for (int i = 0; i < NAMES; i++)
		snprintf(names[i], sizeof(names[i]), "r%03d", i);
	setup_err = tacho_regions_init(&o, &d);
	return 0;
}

static void *worker_main(void *arg)
{
	int *err = arg;

	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < NAMES; i++) {
			*err |= tacho_region_begin(names[i]);
			*err |= tacho_region_end(names[i]);
		}
	}
	return NULL;
}

struct reporter {
	volatile int stop;     /* written by the main thread once the workers are joined */
	unsigned reports;
	int err;
	char what[160];
};

static void *reporter_main(void *arg)
{
	struct reporter *rp = arg;
	uint64_t last = 0;

	while (!__atomic_load_n(&rp->stop, __ATOMIC_ACQUIRE)) {
		struct tacho_regions_report *r;
		const struct tacho_region_stat *st;
		int err = tacho_regions_report_new(&r);

		if (err) {
			rp->err = err;
			snprintf(rp->what, sizeof(rp->what), "report: %s", tacho_strerror(err));
			return NULL;
		}
		rp->reports++;
		/* a snapshot never shows more than was done, nor fewer calls than the last */
		st = tacho_regions_report_find(r, "r000");
		if (st && (st->calls > WORKERS * ROUNDS || st->calls < last ||
			   st->threads > WORKERS)) {
			rp->err = -EPROTO;
			snprintf(rp->what, sizeof(rp->what), "r000: %llu calls (last %llu), "
				 "%u threads", (unsigned long long)st->calls,
				 (unsigned long long)last, st->threads);
		}
		if (st)
			last = st->calls;
		if (tc_regions_report_count(r) > NAMES) {
			rp->err = -EPROTO;
			snprintf(rp->what, sizeof(rp->what), "%zu regions",
				 tc_regions_report_count(r));
		}
		tacho_regions_report_free(r);
	}
	return NULL;
}

/* 64 threads make their first regions (and grow their tables) while one reports in a
 * loop: the report must neither write past what it allocated nor read a table being
 * reallocated (ASan saw a heap-buffer-overflow in 2 runs of 3; TSan, the races). At the
 * end the totals are exact: every call counted once, merged over threads that ended. */
static void test_report_while_creating(void **state)
{
	pthread_t th[WORKERS], rep;
	int errs[WORKERS] = { 0 };
	struct reporter rp = { 0 };
	(void)state;
	if (setup_err)
		fail_msg("tacho_regions_init: %s", tacho_strerror(setup_err));

	assert_int_equal(pthread_create(&rep, NULL, reporter_main, &rp), 0);
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &errs[i]), 0);
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	__atomic_store_n(&rp.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(rep, NULL), 0);
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(errs[i], 0);
	if (rp.err)
		fail_msg("reporter: %s", rp.what);
	assert_true(rp.reports > 0);

	struct tacho_regions_report *r;
	assert_int_equal(tacho_regions_report_new(&r), 0);
	assert_int_equal(tc_regions_report_count(r), NAMES);
	for (int i = 0; i < NAMES; i++) {
		const struct tacho_region_stat *st = tacho_regions_report_find(r, names[i]);
		assert_non_null(st);
		assert_int_equal(st->calls, WORKERS * ROUNDS);
		assert_int_equal(st->threads, WORKERS);
	}
	tacho_regions_report_free(r);
	/* every worker ended: its state was merged and freed */
	assert_int_equal(tc_regions_thread_states(), 0);
	tacho_regions_reset();
}

/* 10,000 threads show the bound as 50,000 would (the states never exceed the threads
 * alive), in a tenth of the time: each thread's first region opens and closes its own
 * counters. ThreadSanitizer keeps a record of every thread it saw: fewer there. */
#if defined(__SANITIZE_THREAD__)
#define SHORT_THREADS 2000
#else
#define SHORT_THREADS 10000
#endif
#define BATCH 64

static void *short_main(void *arg)
{
	int *err = arg;

	*err |= tacho_region_begin("short");
	*err |= tacho_region_end("short");
	return NULL;
}

/* Short threads, 64 at a time: states are counted while they run and after; none
 * stays once its thread ended (before the merge, every thread's state stayed: 50,000
 * threads kept 176 MB), and the report still has every call and every thread. */
static void test_short_threads_bounded(void **state)
{
	pthread_t th[BATCH];
	int errs[BATCH];
	unsigned most = 0;
	(void)state;
	if (setup_err)
		fail_msg("tacho_regions_init: %s", tacho_strerror(setup_err));

	for (int done = 0; done < SHORT_THREADS; done += BATCH) {
		int n = SHORT_THREADS - done < BATCH ? SHORT_THREADS - done : BATCH;
		for (int i = 0; i < n; i++) {
			errs[i] = 0;
			assert_int_equal(pthread_create(&th[i], NULL, short_main, &errs[i]), 0);
		}
		unsigned now = tc_regions_thread_states();
		if (now > most)
			most = now;
		for (int i = 0; i < n; i++) {
			assert_int_equal(pthread_join(th[i], NULL), 0);
			assert_int_equal(errs[i], 0);
		}
	}
	assert_true(most <= BATCH);
	assert_int_equal(tc_regions_thread_states(), 0);

	struct tacho_regions_report *r;
	assert_int_equal(tacho_regions_report_new(&r), 0);
	const struct tacho_region_stat *st = tacho_regions_report_find(r, "short");
	assert_non_null(st);
	assert_int_equal(st->calls, SHORT_THREADS);
	assert_int_equal(st->threads, SHORT_THREADS);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_while_creating),
		cmocka_unit_test(test_short_threads_bounded),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
