/* test-record-ring.c - the default size of tacho record's rings (tc_record_ring_pages):
 * from the rate, the call chains, a DWARF stack, the CPUs and the kernel's perf mlock
 * limit, on data. */
#include "harness.h"
#include "record/record.h"

static void test_ring_pages(void **state)
{
	static const struct {
		int line;
		struct tc_ring_need n;
		unsigned pages;
	} cases[] = {
		/* the limit binds: perf's default, whatever the rate (516 KiB less the
		 * control page: 128 pages of 4 KiB) */
		{ __LINE__, { .rate = 1000, .ncpus = 2, .page_size = 4096 }, 128 },
		{ __LINE__, { .rate = 40000, .callchain = true, .ncpus = 2, .page_size = 4096 }, 128 },
		{ __LINE__, { .rate = 1000, .ncpus = 2, .page_size = 4096, .mlock_kb = 516 }, 128 },
		/* a smaller or odd allowance rounds down to a power of two, as perf's */
		{ __LINE__, { .rate = 1000, .ncpus = 2, .page_size = 4096, .mlock_kb = 260 }, 64 },
		{ __LINE__, { .rate = 1000, .ncpus = 2, .page_size = 4096, .mlock_kb = 1000 }, 128 },
		{ __LINE__, { .rate = 1000, .ncpus = 2, .page_size = 4096, .mlock_kb = 2052 }, 512 },
		{ __LINE__, { .rate = 1000, .ncpus = 2, .page_size = 4096, .mlock_kb = 1 }, 1 },
		/* 64 KiB pages: 512 KiB is 8 of them */
		{ __LINE__, { .rate = 1000, .ncpus = 2, .page_size = 65536, .mlock_kb = 576 }, 8 },
		/* no limit: never below the default ... */
		{ __LINE__, { .rate = 1000, .ncpus = 2, .page_size = 4096, .unlimited = true }, 128 },
		{ __LINE__, { .rate = 0, .ncpus = 2, .page_size = 4096, .unlimited = true }, 128 },
		/* ... and half a second of samples: 4 kHz x 80 B = 160 KB: the default;
		 * 40 kHz x 80 B = 1.6 MB -> 391 pages -> 512 */
		{ __LINE__, { .rate = 4000, .ncpus = 2, .page_size = 4096, .unlimited = true }, 128 },
		{ __LINE__, { .rate = 40000, .ncpus = 2, .page_size = 4096, .unlimited = true }, 512 },
		/* with chains, 80 + 8 x 50 = 480 B: 10 kHz 2.4 MB -> 586 -> 1024 pages;
		 * 40 kHz 9.6 MB -> 2344 -> 4096 (16 MiB, the most a ring gets) */
		{ __LINE__, { .rate = 10000, .callchain = true, .ncpus = 2, .page_size = 4096,
			      .unlimited = true }, 1024 },
		{ __LINE__, { .rate = 40000, .callchain = true, .ncpus = 2, .page_size = 4096,
			      .unlimited = true }, 4096 },
		{ __LINE__, { .rate = 100000, .callchain = true, .ncpus = 2, .page_size = 4096,
			      .unlimited = true }, 4096 },
		/* 512 MiB over all rings: 256 CPUs get 2 MiB each, 1024 CPUs 512 KiB */
		{ __LINE__, { .rate = 40000, .callchain = true, .ncpus = 256, .page_size = 4096,
			      .unlimited = true }, 512 },
		{ __LINE__, { .rate = 40000, .callchain = true, .ncpus = 1024, .page_size = 4096,
			      .unlimited = true }, 128 },
		{ __LINE__, { .rate = 40000, .callchain = true, .ncpus = 8192, .page_size = 4096,
			      .unlimited = true }, 128 },
		/* DWARF: 8 KiB of stack a sample dominates: 1 kHz x 8.8 KB = 4.4 MB -> 1080 pages
		 * -> 2048; 100 Hz 442 KB: the default */
		{ __LINE__, { .rate = 1000, .callchain = true, .stack_size = 8192, .ncpus = 2,
			      .page_size = 4096, .unlimited = true }, 2048 },
		{ __LINE__, { .rate = 100, .callchain = true, .stack_size = 8192, .ncpus = 2,
			      .page_size = 4096, .unlimited = true }, 128 },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		unsigned got = tc_record_ring_pages(&cases[i].n);
		if (got != cases[i].pages)
			fail_msg("line %d: %u pages, want %u", cases[i].line, got, cases[i].pages);
		if (got & (got - 1))
			fail_msg("line %d: %u is not a power of two", cases[i].line, got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_pages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
