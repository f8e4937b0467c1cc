/* test-stat-threads.c - the proof that the kernel moved a thread's counts to another
 * thread (tc_stat_thread_moved), on the reports of a run seen on Linux 6.18 under load
 * and on the cases that must not count as proof. */
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "stat/stat.h"
#include "tacho/errors.h"

enum { N = 3 };

/* syscalls:sys_enter_read, page-faults, syscalls:sys_enter_write: never rotating,
 * each counted in the total */
static const bool whole[N] = { true, true, true };
static const bool seen[N] = { true, true, true };

static void totals(struct tacho_count *t)
{
	memset(t, 0, N * sizeof(*t));
	for (int i = 0; i < N; i++) {
		t[i].status = TACHO_COUNT_COUNTED;
		t[i].enabled_ns = t[i].running_ns = 1000000;
	}
}

/* thread rw-1 of that run: 30 reads and 20 writes made, its report enabled 41 us and
 * running for none of its events, the counts under the first thread */
static void test_moved_thread(void **state)
{
	struct tacho_count t[N];
	const uint64_t ena[N] = { 41000, 41000, 41000 }, run[N] = { 0, 0, 0 };
	(void)state;

	totals(t);
	assert_true(tc_stat_thread_moved(N, whole, t, seen, ena, run));
}

/* a thread that ran with its own copies: running, however short */
static void test_own_thread(void **state)
{
	struct tacho_count t[N];
	const uint64_t ena[N] = { 41000, 41000, 41000 }, run[N] = { 40900, 1, 41000 };
	(void)state;

	totals(t);
	assert_false(tc_stat_thread_moved(N, whole, t, seen, ena, run));
}

/* not proof: an event that rotates (a hardware counter may wait for one), one not
 * reported, one never enabled, one whose total never ran, one whose source is proven
 * silent here */
static void test_no_proof(void **state)
{
	struct tacho_count t[N];
	const uint64_t ena[N] = { 41000, 41000, 41000 }, run[N] = { 0, 0, 0 };
	const uint64_t ena0[N] = { 0, 0, 0 };
	const bool rotating[N] = { false, false, false }, unseen[N] = { false, false, false };
	(void)state;

	totals(t);
	assert_false(tc_stat_thread_moved(N, rotating, t, seen, ena, run));
	assert_false(tc_stat_thread_moved(N, whole, t, unseen, ena, run));
	assert_false(tc_stat_thread_moved(N, whole, t, seen, ena0, run));
	for (int i = 0; i < N; i++)
		t[i].running_ns = 0;
	assert_false(tc_stat_thread_moved(N, whole, t, seen, ena, run));
	totals(t);
	for (int i = 0; i < N; i++)
		t[i].err = -TACHO_ESILENT;
	assert_false(tc_stat_thread_moved(N, whole, t, seen, ena, run));
	/* one proving event among others that prove nothing is enough */
	t[1].err = 0;
	assert_true(tc_stat_thread_moved(N, whole, t, seen, ena, run));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moved_thread),
		cmocka_unit_test(test_own_thread),
		cmocka_unit_test(test_no_proof),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
