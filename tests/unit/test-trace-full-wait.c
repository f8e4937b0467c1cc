/* test-trace-full-wait.c - an area made with TC_TRACE_WAIT_FULL (tacho trace --ring-full
 * wait): a producer whose ring is full waits for the consumer to make room instead of
 * dropping its mark, so that every mark arrives, in order, through a ring far smaller
 * than the burst; a consumer that never drains costs one wait of TC_TRACE_STALL_MS, then
 * the thread drops (counted) without waiting until tacho is seen moving its ring's
 * tail again, and then waits again; an area without the flag drops at once, as it
 * always did. Counts, not times. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "trace/area.h"
#include "tacho/trace.h"

static void attach(struct tc_trace_area *a, uint32_t entries, uint32_t flags)
{
	char spec[64];

	assert_int_equal(tc_trace_area_create(a, 2, entries, 0), 0);
	if (flags)
		tc_trace_area_set_flags(a, flags);
	snprintf(spec, sizeof(spec), "/proc/self/fd/%d", a->fd);
	assert_int_equal(tc_trace_attach(spec), 0);
}

static struct tc_trace_ring *ring0(struct tc_trace_area *a)
{
	return tc_trace_ring_at(a->base, &a->g, 0);
}

struct seen {
	uint64_t n;           /* entries read */
	uint64_t next;        /* the value the next one must have */
	uint64_t out_of_order;
};

static int on_entry(void *arg, uint32_t slot, uint32_t pid, uint32_t tid,
		    const struct tc_trace_entry *e)
{
	struct seen *s = arg;

	if (e->value != s->next)
		s->out_of_order++;
	s->next = e->value + 1;
	s->n++;
	return 0;
}

static uint64_t drain_all(struct tc_trace_area *a, uint32_t *known)
{
	struct seen s = { 0 };
	struct tc_trace_visit v = { .arg = &s, .entry = on_entry };

	assert_int_equal(tc_trace_area_drain(a, known, &v, false), 0);
	return s.n;
}

/* Without the flag: the fifth mark into a ring of 4 is dropped at once, no wait. */
static void test_without_flag_drops(void **state)
{
	struct tc_trace_area a;
	struct tc_trace_drops d;
	uint32_t known = 0;

	attach(&a, 4, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(tacho_mark("d", (uint64_t)i), 0);
	assert_int_equal(tacho_mark("d", 4), -ENOBUFS);
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.ring_full, 1);
	assert_int_equal(d.waits, 0);
	assert_int_equal(d.waited_ns, 0);
	assert_int_equal(drain_all(&a, &known), 4);
	tc_trace_detach();
	tc_trace_area_free(&a);
}

/* With the flag and nobody draining: one wait, which gives up (the mark dropped and
 * counted); the next full ring drops without a second wait; once the ring is read the
 * thread marks again, and its next full ring waits again. */
static void test_stalled_consumer(void **state)
{
	struct tc_trace_area a;
	struct tc_trace_drops d;
	uint32_t known = 0;

	attach(&a, 4, TC_TRACE_WAIT_FULL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(tacho_mark("s", (uint64_t)i), 0);
	assert_int_equal(tacho_mark("s", 4), -ENOBUFS);      /* waited, gave up */
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.waits, 1);
	assert_int_equal(d.ring_full, 1);
	/* the wait lasted its whole limit: a count the producer took from its clock */
	assert_true(d.waited_ns >= (uint64_t)TC_TRACE_STALL_MS * 1000000u);
	assert_int_equal(__atomic_load_n(&ring0(&a)->waiting, __ATOMIC_RELAXED), 0);
	assert_int_equal(tacho_mark("s", 5), -ENOBUFS);      /* stalled: no second wait */
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.waits, 1);
	assert_int_equal(d.ring_full, 2);
	assert_int_equal(drain_all(&a, &known), 4);
	assert_int_equal(tacho_mark("s", 6), 0);             /* room */
	for (int i = 7; i < 10; i++)
		assert_int_equal(tacho_mark("s", (uint64_t)i), 0);
	/* full again, and the consumer moved the tail since the wait gave up: it drains,
	 * so this full ring is waited for again (and gives up again: nobody drains) */
	assert_int_equal(tacho_mark("s", 10), -ENOBUFS);
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.waits, 2);
	assert_int_equal(d.ring_full, 3);
	tc_trace_detach();
	tc_trace_area_free(&a);
}

struct consumer {
	struct tc_trace_area *a;
	uint32_t known;
	struct seen seen;
	int stop;
};

/* Drains every 50 us until told to stop, then once more. */
static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	struct tc_trace_visit v = { .arg = &c->seen, .entry = on_entry };
	const struct timespec nap = { 0, 50000 };

	for (;;) {
		bool last = __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE);
		if (tc_trace_area_drain(c->a, &c->known, &v, last))
			break;
		if (last)
			break;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* 20,000 marks through a ring of 8, with a consumer that drains every 50 us: every
 * mark arrives, in order, none dropped; the producer waited (8 entries cannot hold
 * what it writes in 50 us). */
static void test_every_mark_arrives(void **state)
{
	enum { N = 20000 };
	struct tc_trace_area a;
	struct tc_trace_drops d;
	struct consumer c = { .a = &a };
	pthread_t th;

	attach(&a, 8, TC_TRACE_WAIT_FULL);
	assert_int_equal(pthread_create(&th, NULL, consumer_main, &c), 0);
	for (uint64_t i = 0; i < N; i++)
		assert_int_equal(tacho_mark("e", i), 0);
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(c.seen.n, N);
	assert_int_equal(c.seen.out_of_order, 0);
	assert_int_equal(c.seen.next, N);
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.ring_full, 0);
	assert_true(d.waits > 0);
	tc_trace_detach();
	tc_trace_area_free(&a);
}

/* A program that sets its ring's waiting flag for nothing: the consumer clears it when
 * it moves the tail (one futex wake) and reads every entry as before. */
static void test_flag_set_for_nothing(void **state)
{
	struct tc_trace_area a;
	uint32_t known = 0;

	attach(&a, 16, TC_TRACE_WAIT_FULL);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tacho_mark("f", (uint64_t)i), 0);
	__atomic_store_n(&ring0(&a)->waiting, 1, __ATOMIC_RELAXED);
	assert_int_equal(drain_all(&a, &known), 3);
	assert_int_equal(__atomic_load_n(&ring0(&a)->waiting, __ATOMIC_RELAXED), 0);
	/* nothing moved: the flag stays, no wake */
	__atomic_store_n(&ring0(&a)->waiting, 1, __ATOMIC_RELAXED);
	assert_int_equal(drain_all(&a, &known), 0);
	assert_int_equal(__atomic_load_n(&ring0(&a)->waiting, __ATOMIC_RELAXED), 1);
	tc_trace_detach();
	tc_trace_area_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_flag_drops),
		cmocka_unit_test(test_stalled_consumer),
		cmocka_unit_test(test_every_mark_arrives),
		cmocka_unit_test(test_flag_set_for_nothing),
	};

	unsetenv("TACHO_TRACE");
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
