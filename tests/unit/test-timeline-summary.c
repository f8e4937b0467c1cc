/* test-timeline-summary.c - the summary's arithmetic on made-up data: system calls grouped
 * per thread and call with their latency statistics (type-7 percentiles, worked out by
 * hand below) and their errors by errno, the rows' order; the scheduling latency walk
 * through switches and wake-ups (which wake-ups open a delay, which switch closes it);
 * x86-64 system call names. tests/e2e/test-trace-summary.c runs it on real traces. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "timeline/timeline.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * (1.0 + fabs((double)(b))))

static struct tc_tl_call call(uint32_t tid, const char *name, uint64_t ns, int64_t ret)
{
	struct tc_tl_call c = { .pid = 100, .tid = tid, .ns = ns, .ret = ret };

	snprintf(c.name, sizeof(c.name), "%s", name);
	return c;
}

static void test_syscalls(void **state)
{
	struct tc_tl_call calls[200];
	struct tc_tl_syscalls s;
	size_t n = 0;
	(void)state;

	/* thread 7: read once (the thread with fewer calls comes second) */
	calls[n++] = call(7, "read", 5000, 10);
	/* thread 9: write 100 times, 1..100 ns, given in reverse order; the returns are
	 * counts, not errors, -4096 included (below MAX_ERRNO's -4095: an address) */
	for (uint64_t i = 100; i >= 1; i--)
		calls[n++] = call(9, "write", i, i == 50 ? -4096 : 1);
	/* openat 6 times: ENOENT 3, EACCES 2, one success; 1000 ns each */
	static const int64_t rets[] = { -ENOENT, 3, -EACCES, -ENOENT, -EACCES, -ENOENT };
	for (size_t i = 0; i < 6; i++)
		calls[n++] = call(9, "openat", 1000, rets[i]);
	/* mmap once, -4095: the last error there is (MAX_ERRNO) */
	calls[n++] = call(9, "mmap", 7, -4095);

	assert_int_equal(tc_tl_syscalls_of(calls, n, &s), 0);
	assert_int_equal(s.n, 4);
	/* thread 9 first (107 calls), its rows by total: openat 6000, write 5050, mmap 7 */
	assert_string_equal(s.rows[0].name, "openat");
	assert_string_equal(s.rows[1].name, "write");
	assert_string_equal(s.rows[2].name, "mmap");
	assert_string_equal(s.rows[3].name, "read");
	assert_int_equal(s.rows[3].tid, 7);
	assert_int_equal(s.rows[0].pid, 100);

	const struct tc_tl_syscall *w = &s.rows[1];
	assert_int_equal(w->count, 100);
	assert_int_equal(w->errors, 0);
	assert_int_equal(w->nerrnos, 0);
	assert_int_equal(w->total, 5050);
	assert_int_equal(w->min, 1);
	assert_int_equal(w->max, 100);
	assert_true(NEAR(w->mean, 50.5));
	/* type 7: rank (n - 1) p: 49.5 -> 50 + 0.5; 98.01 -> 99 + 0.01 */
	assert_true(NEAR(w->p50, 50.5));
	assert_true(NEAR(w->p99, 99.01));

	const struct tc_tl_syscall *o = &s.rows[0];
	assert_int_equal(o->count, 6);
	assert_int_equal(o->errors, 5);
	assert_int_equal(o->nerrnos, 2);
	assert_int_equal(o->errnos[0].err, ENOENT);   /* the most frequent first */
	assert_int_equal(o->errnos[0].count, 3);
	assert_int_equal(o->errnos[1].err, EACCES);
	assert_int_equal(o->errnos[1].count, 2);
	assert_true(o->min == 1000 && o->max == 1000 && NEAR(o->p50, 1000) &&
		    NEAR(o->p99, 1000) && NEAR(o->mean, 1000));

	const struct tc_tl_syscall *m = &s.rows[2];
	assert_int_equal(m->errors, 1);
	assert_int_equal(m->errnos[0].err, 4095);
	assert_true(NEAR(m->p50, 7) && NEAR(m->p99, 7));

	const struct tc_tl_syscall *r = &s.rows[3];
	assert_int_equal(r->count, 1);
	assert_int_equal(r->errors, 0);
	assert_true(r->min == 5000 && r->max == 5000 && NEAR(r->mean, 5000));
	tc_tl_syscalls_exit(&s);

	/* none: no rows */
	assert_int_equal(tc_tl_syscalls_of(calls, 0, &s), 0);
	assert_int_equal(s.n, 0);
	assert_null(s.rows);
	tc_tl_syscalls_exit(&s);
	tc_tl_syscalls_exit(NULL);
}

/* Two threads' equal counts: the lower tid first; one thread's equal totals: by name. */
static void test_syscall_ties(void **state)
{
	struct tc_tl_call calls[] = {
		call(20, "close", 10, 0), call(20, "brk", 10, 0),
		call(3, "read", 10, 0), call(3, "dup", 10, 0),
	};
	struct tc_tl_syscalls s;
	(void)state;

	assert_int_equal(tc_tl_syscalls_of(calls, 4, &s), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.rows[0].tid, 3);
	assert_string_equal(s.rows[0].name, "dup");
	assert_string_equal(s.rows[1].name, "read");
	assert_int_equal(s.rows[2].tid, 20);
	assert_string_equal(s.rows[2].name, "brk");
	tc_tl_syscalls_exit(&s);
}

#define SW(t, prev, st, nxt) { .time = (t), .kind = TC_TL_SWITCH, .tid = (prev), \
			       .prev_state = (st), .next = (nxt) }
#define WAKE(t, who) { .time = (t), .kind = TC_TL_WAKEUP, .tid = (who) }
#define WAKE_NEW(t, who) { .time = (t), .kind = TC_TL_WAKEUP_NEW, .tid = (who) }

static const struct tc_tl_sched_lat *lat_of(const struct tc_tl_sched_lat *l, size_t n,
					    uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].tid == tid)
			return &l[i];
	fail_msg("no row for thread %u", tid);
	return l;   /* not reached: fail_msg ends the test */
}

static void test_sched_latency(void **state)
{
	static const struct tc_tl_sched_ev ev[] = {
		WAKE(10, 5),             /* 5 not yet seen to leave a CPU: may run, no delay */
		SW(20, 5, 1, 6),         /* 5 sleeps (S); 6 runs, never woken: no delay */
		WAKE(50, 5),             /* delay opens */
		WAKE(55, 5),             /* already woken: keeps 50 */
		SW(80, 6, 0, 5),         /* 6 preempted (R); 5 runs: 30 */
		SW(90, 5, 2, 6),         /* 5 blocks (D); 6 back, preempted: no delay */
		WAKE(95, 6),             /* 6 runs: a wake-up of a running thread, nothing */
		WAKE(100, 5),
		SW(190, 6, 1, 5),        /* 5: 90, its max, at 190 */
		WAKE_NEW(200, 8),        /* a new thread, never seen: a delay */
		SW(260, 5, 0x100, 8),    /* 8: 60; 5 preempted ("R+", 0x100 masked off) */
		SW(300, 8, 1, 0),        /* 8 sleeps; the idle task (0) runs */
		WAKE(310, 0),            /* tid 0 is idle: no row */
		WAKE(320, 8),
		SW(330, 0, 0, 8),        /* 8: 10 */
	};
	struct tc_tl_sched_lat *l;
	size_t n;
	(void)state;

	assert_int_equal(tc_tl_sched_latency_of(ev, ARRAY_SIZE(ev), &l, &n), 0);
	assert_int_equal(n, 3);   /* 5, 6, 8: no row for the idle task */
	const struct tc_tl_sched_lat *a = lat_of(l, n, 5);
	assert_int_equal(a->count, 2);
	assert_int_equal(a->total, 120);
	assert_int_equal(a->max, 90);
	assert_int_equal(a->max_at, 190);
	assert_true(NEAR(a->mean, 60));
	const struct tc_tl_sched_lat *b = lat_of(l, n, 6);
	assert_int_equal(b->count, 0);
	const struct tc_tl_sched_lat *c = lat_of(l, n, 8);
	assert_int_equal(c->count, 2);
	assert_int_equal(c->max, 60);
	assert_int_equal(c->max_at, 260);
	assert_true(NEAR(c->mean, 35));
	free(l);

	/* nothing: no rows */
	assert_int_equal(tc_tl_sched_latency_of(ev, 0, &l, &n), 0);
	assert_int_equal(n, 0);
	free(l);
}

static void test_syscall_names(void **state)
{
	(void)state;
#if defined(__x86_64__)
	/* arch/x86/entry/syscalls/syscall_64.tbl */
	assert_string_equal(tc_syscall_name(0), "read");
	assert_string_equal(tc_syscall_name(1), "write");
	assert_string_equal(tc_syscall_name(257), "openat");
	assert_string_equal(tc_syscall_name(435), "clone3");
#endif
	assert_null(tc_syscall_name(100000));
	assert_null(tc_syscall_name(UINT64_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syscalls),
		cmocka_unit_test(test_syscall_ties),
		cmocka_unit_test(test_sched_latency),
		cmocka_unit_test(test_syscall_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
