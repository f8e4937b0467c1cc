/* test-trace-wake.c - a producer wakes its consumer when a ring fills to the watermark
 * (issue 32): exactly once per rise from below, never once per mark, never for a mark
 * dropped or a dry one; a drain that leaves a ring at or past the watermark says so (the
 * producer will not signal that ring again until it is read below it); and the waker's
 * thread turns the futex word into a readable eventfd, which the consumer empties.
 * Counts, not times: the wake word is read before and after each mark. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "trace/area.h"
#include "tacho/trace.h"

/* The number of producer wake-ups so far: the header's wake word. */
static uint32_t wakes(const struct tc_trace_area *a)
{
	return __atomic_load_n(&((struct tc_trace_header *)a->base)->wake, __ATOMIC_ACQUIRE);
}

struct count {
	size_t n;
	size_t stop_at;    /* stop the drain after this many entries (0: never) */
};

static int on_entry(void *arg, uint32_t slot, uint32_t pid, uint32_t tid,
		    const struct tc_trace_entry *e)
{
	struct count *c = arg;

	if (c->stop_at && c->n == c->stop_at)
		return 1;
	c->n++;
	return 0;
}

/* Drains up to stop entries (0: all); returns how many were read. */
static size_t drain(struct tc_trace_area *a, uint32_t *known, size_t stop)
{
	struct count c = { .stop_at = stop };
	struct tc_trace_visit v = { .arg = &c, .entry = on_entry };
	int err = tc_trace_area_drain(a, known, &v, false);

	assert_int_equal(err, stop ? 1 : 0);
	return c.n;
}

static void attach(struct tc_trace_area *a, uint32_t entries)
{
	char spec[64];

	assert_int_equal(tc_trace_area_create(a, 2, entries, 0), 0);
	snprintf(spec, sizeof(spec), "/proc/self/fd/%d", a->fd);
	assert_int_equal(tc_trace_attach(spec), 0);
}

/* The pure rule: a crossing is the fill seen before a write equal to the watermark. A
 * fill that rises by one a write from 0 to past a whole ring crosses once. */
static void test_crosses_rule(void **state)
{
	unsigned crossings = 0;

	assert_int_equal(tc_trace_watermark(65536), 16384);
	assert_int_equal(tc_trace_watermark(16), 4);
	assert_int_equal(tc_trace_watermark(2), 1);   /* a tiny ring still wakes */
	for (uint64_t fill = 0; fill < 100; fill++)
		crossings += tc_trace_crosses(fill, tc_trace_watermark(64));
	assert_int_equal(crossings, 1);
}

/* Through the real producer: a ring of 16 (watermark 4). Each line says what the fill
 * is before the mark and whether the mark must wake. */
static void test_once_per_crossing(void **state)
{
	struct tc_trace_area a;
	uint32_t known = 0, w0;

	attach(&a, 16);
	w0 = wakes(&a);
	/* fills 0..3 before the mark: no wake; fill 4: the crossing */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(tacho_mark("w", (uint64_t)i), 0);
		assert_int_equal(wakes(&a), w0);
	}
	assert_int_equal(tacho_mark("w", 4), 0);
	assert_int_equal(wakes(&a), w0 + 1);
	/* on to full (fills 5..15), then 3 dropped: not one more wake */
	for (int i = 5; i < 16; i++)
		assert_int_equal(tacho_mark("w", (uint64_t)i), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tacho_mark("w", 99), -ENOBUFS);
	assert_int_equal(wakes(&a), w0 + 1);
	/* read 13 of 16: fill 3, under the watermark; the next mark makes it 4 (no
	 * wake, the fill before it was 3), the one after crosses */
	assert_int_equal(drain(&a, &known, 13), 13);
	assert_true(a.behind == false);
	assert_int_equal(tacho_mark("w", 16), 0);
	assert_int_equal(wakes(&a), w0 + 1);
	assert_int_equal(tacho_mark("w", 17), 0);
	assert_int_equal(wakes(&a), w0 + 2);
	/* read 1 of 5: fill 4, at the watermark: the next mark crosses again */
	assert_int_equal(drain(&a, &known, 1), 1);
	assert_false(a.behind);
	assert_int_equal(tacho_mark("w", 18), 0);
	assert_int_equal(wakes(&a), w0 + 3);
	/* fill 5, read 0 of it... one more mark (fill 6), read 1: fill 5, past the
	 * watermark, which the producer will not cross again from there (its fill only
	 * rises until the ring is read): the drain says it left the ring behind */
	assert_int_equal(tacho_mark("w", 19), 0);
	assert_int_equal(drain(&a, &known, 1), 1);
	assert_true(a.behind);
	assert_int_equal(tacho_mark("w", 20), 0);
	assert_int_equal(wakes(&a), w0 + 3);
	/* all read: not behind; a dry emit (the regions' calibration) at the watermark
	 * publishes nothing and wakes nobody */
	assert_int_equal(drain(&a, &known, 0), 6);
	assert_false(a.behind);
	for (int i = 0; i < 4; i++)
		assert_int_equal(tacho_mark("w", (uint64_t)i), 0);
	assert_int_equal(tc_trace_emit(TC_TRACE_MARK | TC_TRACE_DRY, "w", 0), 0);
	assert_int_equal(wakes(&a), w0 + 3);
	assert_int_equal(tacho_mark("w", 4), 0);
	assert_int_equal(wakes(&a), w0 + 4);
	tc_trace_detach();
	tc_trace_area_free(&a);
}

/* 1,000 rises through the watermark of a ring of 64, read down to 0 between them, and
 * 1,000 marks more in each rise: 1,000 wakes for 17,000 marks, not one a mark. */
static void test_many_crossings(void **state)
{
	struct tc_trace_area a;
	uint32_t known = 0, w0;

	attach(&a, 64);
	w0 = wakes(&a);
	for (int r = 0; r < 1000; r++) {
		for (int i = 0; i < 17; i++)
			assert_int_equal(tacho_mark("m", (uint64_t)i), 0);
		assert_int_equal(drain(&a, &known, 0), 17);
	}
	assert_int_equal(wakes(&a) - w0, 1000);
	tc_trace_detach();
	tc_trace_area_free(&a);
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

/* The waker: nothing readable before a crossing; readable after one (waited for without
 * a limit that could fail a slow machine: the test's own timeout is the bound); empty
 * after a clear; a poke makes it readable from the consumer's side; stop ends the
 * thread, twice is harmless. */
static void test_waker(void **state)
{
	struct tc_trace_area a;
	struct tc_trace_waker w;
	uint32_t known = 0;

	attach(&a, 16);
	assert_int_equal(tc_trace_waker_start(&w, &a), 0);
	assert_true(w.fd >= 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(tacho_mark("k", (uint64_t)i), 0);
	assert_false(readable(w.fd, 0));
	assert_int_equal(tacho_mark("k", 4), 0);
	assert_true(readable(w.fd, -1));
	tc_trace_waker_clear(&w);
	assert_false(readable(w.fd, 0));
	assert_int_equal(drain(&a, &known, 0), 5);
	tc_trace_waker_poke(&w);
	assert_true(readable(w.fd, 0));
	tc_trace_waker_clear(&w);
	/* a second crossing after the ring was read */
	for (int i = 0; i < 5; i++)
		assert_int_equal(tacho_mark("k", (uint64_t)i), 0);
	assert_true(readable(w.fd, -1));
	tc_trace_waker_stop(&w);
	assert_int_equal(w.fd, -1);
	tc_trace_waker_stop(&w);
	tc_trace_detach();
	tc_trace_area_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crosses_rule),
		cmocka_unit_test(test_once_per_crossing),
		cmocka_unit_test(test_many_crossings),
		cmocka_unit_test(test_waker),
	};

	unsetenv("TACHO_TRACE");
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
