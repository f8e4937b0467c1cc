/* rdpmc.c - the user-space counter reader over a perf mmap page (the engine falls back
 * to read(2) where the page does not allow it). The loop follows the recipe in the
 * comments of struct perf_event_mmap_page (include/uapi/linux/perf_event.h); the
 * arithmetic is pure so tests run it on synthetic pages (this machine has no user
 * RDPMC). */
#include <errno.h>

#include "perf/rdpmc.h"
#include "util/util.h"

/* A compiler barrier, as in the recipe of include/uapi/linux/perf_event.h: enough on
 * x86, whose loads are not reordered with other loads (SDM Vol. 3A, "Memory Ordering
 * in P6 and More Recent Processor Families"), and the engine reads a page with RDPMC
 * on x86 only. Another architecture would need a read barrier (smp_rmb) here. */
#define barrier() __asm__ __volatile__("" : : : "memory")

bool tc_pmc_page_rdpmc(const volatile struct perf_event_mmap_page *pg)
{
	return pg && pg->cap_user_rdpmc && pg->index != 0;
}

/* (cyc * mult) >> shift without overflowing 64 bits: split cyc at the shift, as the
 * kernel's comment does (quot * mult + (rem * mult) >> shift). */
static uint64_t scale_cycles(uint64_t cyc, uint32_t mult, uint16_t shift)
{
	uint64_t quot, rem;

	if (shift >= 64)
		return 0;
	quot = cyc >> shift;
	rem = cyc & (((uint64_t)1 << shift) - 1);
	return quot * mult + ((rem * mult) >> shift);
}

int tc_pmc_read_page(const volatile struct perf_event_mmap_page *pg, const struct tc_pmc_ops *ops,
		     struct tc_pmc_value *out)
{
	uint32_t seq, idx = 0, mult = 0, width = 0;
	uint16_t shift = 0;
	uint64_t count = 0, enabled = 0, running = 0, cyc = 0, toff = 0, tcyc = 0, tmask = 0;
	int64_t pmc = 0;
	bool user_time = false, time_short = false;
	unsigned pass = 0;

	do {
		if (pass == 1000)
			return -EBUSY;
		seq = pg->lock;
		barrier();

		enabled = pg->time_enabled;
		running = pg->time_running;
		/* without ops->rdtsc the caller wants the count, not the times brought
		 * up to now: no clock read. Otherwise the header's recipe reads the clock
		 * only when enabled != running; doing it always costs one RDTSC and gives
		 * the same result when they are equal. */
		user_time = ops->rdtsc && pg->cap_user_time;
		if (user_time) {
			cyc = ops->rdtsc(ops->arg);
			toff = pg->time_offset;
			mult = pg->time_mult;
			shift = pg->time_shift;
			time_short = pg->cap_user_time_short;
			if (time_short) {
				tcyc = pg->time_cycles;
				tmask = pg->time_mask;
			}
		}
		idx = pg->index;
		count = pg->offset;
		if (!pg->cap_user_rdpmc || idx == 0) {
			/* the page alone cannot give the count: read() it */
			barrier();
			if (pg->lock == seq)
				return -EAGAIN;
			pass++;
			continue;
		}
		width = pg->pmc_width;
		pmc = (int64_t)ops->rdpmc(ops->arg, idx - 1);

		barrier();
		if (ops->after_pass)
			ops->after_pass(ops->arg, pass);
		pass++;
	} while (pg->lock != seq);

	/* The PMC holds only pmc_width bits; the kernel keeps offset so that offset plus
	 * the sign-extended PMC is the count (the PMC is programmed with a negative start
	 * value for sampling, hence the sign). */
	if (width > 0 && width < 64) {
		pmc = (int64_t)((uint64_t)pmc << (64 - width));
		pmc >>= 64 - width;
	}
	count += (uint64_t)pmc;

	out->now = false;
	if (user_time) {
		uint64_t delta;

		/* With cap_user_time_short the kernel's conversion is valid only for the
		 * low bits near time_cycles (a short clocksource such as arm64's). */
		if (time_short)
			cyc = tcyc + ((cyc - tcyc) & tmask);
		delta = toff + scale_cycles(cyc, mult, shift);
		enabled += delta;
		/* index != 0 here: the event is on a counter, so it is running too */
		running += delta;
		out->now = true;
	}
	out->count = count;
	out->enabled = enabled;
	out->running = running;
	out->retries = pass - 1;
	return 0;
}

#if defined(__x86_64__) || defined(__i386__)
static uint64_t cpu_rdpmc(void *arg, uint32_t counter)
{
	uint32_t lo, hi;
	(void)arg;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t cpu_rdtsc(void *arg)
{
	uint32_t lo, hi;
	(void)arg;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#else
static uint64_t cpu_rdpmc(void *arg, uint32_t counter)
{
	(void)arg;
	(void)counter;
	return 0;
}

static uint64_t cpu_rdtsc(void *arg)
{
	(void)arg;
	return 0;
}
#endif

const struct tc_pmc_ops tc_pmc_ops_cpu = {
	.rdpmc = cpu_rdpmc,
	.rdtsc = cpu_rdtsc,
};

const struct tc_pmc_ops tc_pmc_ops_cpu_count = {
	.rdpmc = cpu_rdpmc,
};
