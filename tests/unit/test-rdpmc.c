/* test-rdpmc.c - the user-space counter reader: its arithmetic on synthetic mmap pages
 * (counter width, sign extension, the seqlock retry, time scaling) and its read()
 * fallback live (software events are never on a hardware counter: index is 0). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "pages.h"
#include "perf/engine.h"
#include "perf/rdpmc.h"

struct fake {
	struct perf_event_mmap_page *pg;
	uint64_t pmc;           /* what rdpmc returns */
	uint64_t tsc;           /* what rdtsc returns */
	uint32_t last_counter;  /* the counter rdpmc was asked for */
	unsigned rdpmc_calls;
	int bump_passes;        /* passes during which the seqlock moves under the read */
	uint64_t new_offset;    /* what the "kernel" writes while it moves */
};

static uint64_t fake_rdpmc(void *arg, uint32_t counter)
{
	struct fake *f = arg;
	f->last_counter = counter;
	f->rdpmc_calls++;
	return f->pmc;
}

static uint64_t fake_rdtsc(void *arg)
{
	return ((struct fake *)arg)->tsc;
}

/* The kernel updating the page in the middle of our read: lock moves, offset changes. */
static void fake_after_pass(void *arg, unsigned pass)
{
	struct fake *f = arg;
	if ((int)pass < f->bump_passes) {
		f->pg->lock += 2;
		f->pg->offset = f->new_offset;
	}
}

static struct perf_event_mmap_page *new_page(void)
{
	struct perf_event_mmap_page *pg = calloc(1, sizeof(*pg));
	assert_non_null(pg);
	pg->lock = 2;
	pg->cap_user_rdpmc = 1;
	pg->index = 3;
	pg->pmc_width = 48;
	return pg;
}

static const struct {
	int line;
	uint16_t width;
	uint64_t pmc;
	int64_t offset;
	uint64_t want;
} width_cases[] = {
	/* a 48-bit counter at -16 (programmed negative, as for sampling) */
	{ __LINE__, 48, 0xfffffffffff0ull, 1000, 984 },
	/* the largest positive 48-bit value */
	{ __LINE__, 48, 0x7fffffffffffull, 0, 0x7fffffffffffull },
	/* bits above the width are garbage and must be dropped */
	{ __LINE__, 48, 0xabcd000000000005ull, 10, 15 },
	/* the smallest negative 48-bit value, offset making the count positive */
	{ __LINE__, 48, 0x800000000000ull, (int64_t)0x800000000000ll + 7, 7 },
	/* 40-bit counters (older AMD, Intel's P6 family) */
	{ __LINE__, 40, 0xffffffffffull, 1, 0 },
	{ __LINE__, 40, 0x7fffffffffull, 0, 0x7fffffffffull },
	/* full 64 bits: no extension */
	{ __LINE__, 64, 0xfffffffffffffff0ull, 32, 16 },
	/* width 0 (an old kernel that leaves it unset): taken as is */
	{ __LINE__, 0, 123, 2, 125 },
};

static void test_width(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(width_cases); i++) {
		struct perf_event_mmap_page *pg = new_page();
		struct fake f = { .pg = pg, .pmc = width_cases[i].pmc };
		struct tc_pmc_ops ops = { fake_rdpmc, fake_rdtsc, NULL, &f };
		struct tc_pmc_value v;

		pg->pmc_width = width_cases[i].width;
		pg->offset = width_cases[i].offset;
		int err = tc_pmc_read_page(pg, &ops, &v);
		if (err || v.count != width_cases[i].want)
			fail_msg("case at line %d: err %d count %#llx, want %#llx",
				 width_cases[i].line, err, (unsigned long long)v.count,
				 (unsigned long long)width_cases[i].want);
		/* RDPMC takes index - 1 (the page's index is 1-based, 0 meaning none) */
		assert_int_equal(f.last_counter, 2);
		assert_int_equal(v.retries, 0);
		/* the page's time_running is 0: whatever the PMC holds, the one rule
		 * gives no number (the reader used to pass the raw count on) */
		assert_int_equal(tc_count_status(v.enabled, v.running), TACHO_COUNT_NOT_COUNTED);
		assert_true(isnan(tc_count_scale(v.count, v.enabled, v.running)));
		free(pg);
	}
}

/* A fixed counter: the kernel's page index is its RDPMC selector plus one, and on x86
 * the selector of fixed counter N already carries bit 30 (SDM Vol. 2B RDPMC: ECX[30]
 * selects the fixed counters; arch/x86/events/core.c x86_pmu_event_idx returns
 * event_base_rdpmc + 1). The reader must pass it through unchanged, not add bit 30
 * again nor strip it. */
static void test_fixed_counter_index(void **state)
{
	struct perf_event_mmap_page *pg = new_page();
	struct fake f = { .pg = pg, .pmc = 1000 };
	struct tc_pmc_ops ops = { fake_rdpmc, fake_rdtsc, NULL, &f };
	struct tc_pmc_value v;
	(void)state;

	pg->index = (1u << 30 | 1) + 1;   /* IA32_FIXED_CTR1, cycles */
	pg->offset = 5;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), 0);
	assert_int_equal(f.last_counter, 1u << 30 | 1);
	assert_int_equal(v.count, 1005);
	free(pg);
}

static void test_not_allowed(void **state)
{
	struct perf_event_mmap_page *pg = new_page();
	struct fake f = { .pg = pg, .pmc = 5 };
	struct tc_pmc_ops ops = { fake_rdpmc, fake_rdtsc, NULL, &f };
	struct tc_pmc_value v;
	(void)state;

	pg->cap_user_rdpmc = 0;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), -EAGAIN);
	assert_false(tc_pmc_page_rdpmc(pg));
	pg->cap_user_rdpmc = 1;
	pg->index = 0;   /* not on a counter right now (or a software event) */
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), -EAGAIN);
	assert_false(tc_pmc_page_rdpmc(pg));
	/* RDPMC must not have been executed for either */
	assert_int_equal(f.rdpmc_calls, 0);
	pg->index = 1;
	assert_true(tc_pmc_page_rdpmc(pg));
	assert_false(tc_pmc_page_rdpmc(NULL));
	free(pg);
}

static void test_seqlock_retry(void **state)
{
	struct perf_event_mmap_page *pg = new_page();
	struct fake f = { .pg = pg, .pmc = 0xfffffffffffeull, .bump_passes = 2, .new_offset = 500 };
	struct tc_pmc_ops ops = { fake_rdpmc, fake_rdtsc, fake_after_pass, &f };
	struct tc_pmc_value v;
	(void)state;

	pg->offset = 100;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), 0);
	/* two passes saw the lock move; the third, stable, read the new offset */
	assert_int_equal(v.retries, 2);
	assert_int_equal(f.rdpmc_calls, 3);
	assert_int_equal(v.count, 498);

	/* a lock that never settles gives up instead of spinning forever */
	f.bump_passes = 1 << 30;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), -EBUSY);
	free(pg);
}

static void test_time_scaling(void **state)
{
	struct perf_event_mmap_page *pg = new_page();
	struct fake f = { .pg = pg, .pmc = 1400, .tsc = 2000 };
	struct tc_pmc_ops ops = { fake_rdpmc, fake_rdtsc, NULL, &f };
	struct tc_pmc_value v;
	(void)state;

	/* multiplexed: enabled 2000 ns so far, running 500; TSC 2000 ticks at 2 GHz
	 * (mult 2^31, shift 32: ns = ticks / 2) since time_offset 0 -> 1000 ns more */
	pg->offset = 100;
	pg->time_enabled = 1000;
	pg->time_running = 500;
	pg->cap_user_time = 1;
	pg->time_mult = 1u << 31;
	pg->time_shift = 32;
	pg->time_offset = 0;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), 0);
	assert_true(v.now);
	assert_int_equal(v.enabled, 2000);
	assert_int_equal(v.running, 1500);
	assert_int_equal(v.count, 1500);
	assert_true(tc_count_scale(v.count, v.enabled, v.running) == 2000);   /* 1500 * 2000 / 1500 */

	/* time_offset is signed in effect (u64 wrap): -400 ns */
	pg->time_offset = (uint64_t)-400;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), 0);
	assert_int_equal(v.enabled, 1600);
	assert_int_equal(v.running, 1100);

	/* cap_user_time_short: only the bits under time_mask count from time_cycles */
	pg->time_offset = 0;
	pg->cap_user_time_short = 1;
	pg->time_cycles = 0x1000;
	pg->time_mask = 0xfff;
	pg->time_mult = 1;
	pg->time_shift = 0;
	f.tsc = 0x12345;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), 0);
	assert_int_equal(v.enabled, 1000 + 0x1345);

	/* (cyc * mult) >> shift must not overflow 64 bits: 2^60 ticks at mult 2^31,
	 * shift 31 is 2^60 ns */
	pg->cap_user_time_short = 0;
	pg->time_enabled = 0;
	pg->time_running = 0;
	pg->time_mult = 1u << 31;
	pg->time_shift = 31;
	f.tsc = 1ull << 60;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), 0);
	assert_true(v.enabled == 1ull << 60 && v.running == 1ull << 60);
	assert_int_equal(tc_count_status(v.enabled, v.running), TACHO_COUNT_COUNTED);
	assert_true(tc_count_scale(v.count, v.enabled, v.running) == (double)v.count);

	/* without cap_user_time the times are the page's, not brought up to now */
	pg->cap_user_time = 0;
	pg->time_enabled = 30;
	pg->time_running = 10;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), 0);
	assert_false(v.now);
	assert_int_equal(v.enabled, 30);
	assert_int_equal(tc_count_status(v.enabled, v.running), TACHO_COUNT_MULTIPLEXED);
	assert_true(tc_count_scale(v.count, v.enabled, v.running) == 4500);   /* 1500 * 3 */
	free(pg);
}

static uint64_t fake_rdtsc_counted(void *arg)
{
	struct fake *f = arg;
	f->rdpmc_calls += 1000;   /* marks a clock read */
	return f->tsc;
}

/* Without ops->rdtsc (the hot path's tc_pmc_ops_cpu_count): the count as before, the
 * times exactly the page's, no clock read, and running < enabled as it would read
 * brought up to now. */
static void test_count_only(void **state)
{
	struct perf_event_mmap_page *pg = new_page();
	struct fake f = { .pg = pg, .pmc = 1400, .tsc = 2000 };
	struct tc_pmc_ops ops = { fake_rdpmc, NULL, NULL, &f };
	struct tc_pmc_ops timed = { fake_rdpmc, fake_rdtsc_counted, NULL, &f };
	struct tc_pmc_value v, w;
	(void)state;

	pg->offset = 100;
	pg->time_enabled = 1000;
	pg->time_running = 500;
	pg->cap_user_time = 1;
	pg->time_mult = 1u << 31;
	pg->time_shift = 32;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), 0);
	assert_int_equal(f.rdpmc_calls, 1);   /* one RDPMC, no clock */
	assert_false(v.now);
	assert_int_equal(v.count, 1500);
	assert_int_equal(v.enabled, 1000);
	assert_int_equal(v.running, 500);
	assert_true(tc_count_scale(v.count, v.enabled, v.running) == 3000);   /* 1500 * 1000 / 500 */
	assert_int_equal(v.retries, 0);
	/* the same page with the clock: the same count, both times moved by 1000 ns */
	assert_int_equal(tc_pmc_read_page(pg, &timed, &w), 0);
	assert_int_equal(f.rdpmc_calls, 1 + 1 + 1000);
	assert_true(w.now);
	assert_int_equal(w.count, v.count);
	assert_int_equal(w.enabled - v.enabled, 1000);
	assert_int_equal(w.running - v.running, 1000);
	/* not on a counter: still -EAGAIN, read() it */
	pg->index = 0;
	assert_int_equal(tc_pmc_read_page(pg, &ops, &v), -EAGAIN);
	free(pg);
}

/* The live path through the engine: a software event is never on a hardware counter
 * (its page says index 0), so the event's read must fall back to read(2) although its
 * page is mapped; the count of fresh pages touched is exact. */
static void test_fallback_live(void **state)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_PAGE_FAULTS, .exclude_kernel = 1,
					.exclude_hv = 1 };
	static const pid_t self = 0;
	struct tc_perf_page_info info;
	struct tc_perf_grid g;
	struct tc_perf_ev *e;
	struct tc_perf_count a, b;
	const int npages = 64;
	int err;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	err = tc_perf_probe(&attr, &info);
	if (err)
		TEST_SKIP("cannot open page-faults: %s", tacho_strerror(err));
	assert_int_equal(info.index, 0);
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, &self, 1), 0);
	assert_int_equal(tc_perf_ev_new(&attr, "page-faults", &e), 0);
	assert_int_equal(tc_perf_ev_open(e, &g, 0), 0);
	assert_int_equal(tc_perf_ev_nopen(e), 1);
	assert_int_equal(tc_perf_ev_map_pages(e), 0);
	assert_int_equal(tc_perf_ev_enable(e), 0);

	char *mem = th_pages_map(npages);
	assert_non_null(mem);
	assert_int_equal(tc_perf_ev_read(e, &a), 0);
	th_pages_touch(mem, npages);
	assert_int_equal(tc_perf_ev_read(e, &b), 0);
	assert_int_equal(b.raw - a.raw, npages);
	assert_int_equal(b.status, TACHO_COUNT_COUNTED);
	assert_true(b.enabled >= a.enabled && b.running == b.enabled);
	th_pages_unmap(mem, npages);
	tc_perf_ev_free(e);
	tc_perf_grid_exit(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_width),         cmocka_unit_test(test_not_allowed),
		cmocka_unit_test(test_fixed_counter_index),
		cmocka_unit_test(test_seqlock_retry), cmocka_unit_test(test_time_scaling),
		cmocka_unit_test(test_count_only),
		cmocka_unit_test(test_fallback_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
