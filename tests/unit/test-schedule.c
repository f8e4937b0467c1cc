/* test-schedule.c - the counter scheduler on encodings: this machine has no PMU, so
 * fake counter descriptions (Intel 4 general + 3 fixed, AMD 6 general, the Pentium's
 * two) and lists of events must split into exactly the expected runs and groups. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stat/schedule.h"

static const struct tacho_pmu_counters intel_4_3 = {
	.sz = sizeof(struct tacho_pmu_counters),
	.gp = 4, .fixed = 3, .fixed_mask = 0x7, .breakpoints = 4, .fixed_intel = true,
	.known = true, .source = "test: Intel 4+3",
};
static const struct tacho_pmu_counters amd_6 = {
	.sz = sizeof(struct tacho_pmu_counters),
	.gp = 6, .breakpoints = 4, .known = true, .source = "test: AMD 6",
};
static const struct tacho_pmu_counters p5_2 = {
	.sz = sizeof(struct tacho_pmu_counters),
	.gp = 2, .breakpoints = 4, .known = true, .source = "test: Pentium",
};
static const struct tacho_pmu_counters no_pmu = {
	.sz = sizeof(struct tacho_pmu_counters),
	.breakpoints = 4, .known = true, .none = true, .source = "test: none",
};
static const struct tacho_pmu_counters unknown = {
	.sz = sizeof(struct tacho_pmu_counters),
	.breakpoints = 4, .source = "test: unknown",
};

/* Shorthands for encodings. */
#define HW(c) { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_##c }
#define SW(c) { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_##c }
#define RAW(c) { .type = PERF_TYPE_RAW, .config = (c) }
#define CACHE(c) { .type = PERF_TYPE_HW_CACHE, .config = (c) }
#define TP(c) { .type = PERF_TYPE_TRACEPOINT, .config = (c) }
#define BP { .type = PERF_TYPE_BREAKPOINT }

struct ev {
	struct perf_event_attr attr;
	unsigned group;
};

struct sched_case {
	int line;
	const struct tacho_pmu_counters *pmu;
	unsigned flags;
	struct ev ev[48];
	unsigned n;
	unsigned nruns;
	int run[48];          /* expected run of each event (-1: unscheduled) */
	int fixed[48];        /* 1: on a fixed counter, 0: not, -1: do not check */
	unsigned ngroups0;    /* expected groups in run 0 (0: do not check) */
};

static struct tc_schedule *build(const struct sched_case *c)
{
	struct tc_sched_item items[48];
	struct tc_schedule *s = NULL;

	for (unsigned i = 0; i < c->n; i++) {
		items[i] = tc_sched_classify(&c->ev[i].attr, TACHO_EVENT_SRC_HARDWARE, "cpu",
					     c->pmu);
		items[i].group = c->ev[i].group;
	}
	if (tc_schedule_build(items, c->n, c->pmu, c->flags, &s) != 0)
		fail_msg("case at line %d: tc_schedule_build failed", c->line);
	return s;
}

/* Checks the invariants every plan must keep: each scheduled event is in exactly the
 * group its slot names, and no run (or, multiplexed, no group) exceeds the counters. */
static void check_invariants(const struct sched_case *c, const struct tc_schedule *s)
{
	unsigned seen[48] = { 0 };
	bool mux = c->flags & TACHO_SCHED_MULTIPLEX;
	bool limited = c->pmu->known && !c->pmu->none;

	for (unsigned r = 0; r < tc_schedule_nruns(s); r++) {
		unsigned gp_run = 0, bp_run = 0;
		uint32_t fixed_run = 0;
		for (unsigned g = 0; g < tc_schedule_ngroups(s, r); g++) {
			unsigned n, gp_grp = 0;
			uint32_t fixed_grp = 0;
			const unsigned *ev = tc_schedule_group(s, r, g, &n);
			if (n == 0)
				fail_msg("case at line %d: run %u group %u is empty", c->line, r, g);
			for (unsigned k = 0; k < n; k++) {
				const struct tc_sched_slot *sl = tc_schedule_slot(s, ev[k]);
				const struct perf_event_attr *a = &c->ev[ev[k]].attr;
				bool counter = a->type == PERF_TYPE_HARDWARE ||
					       a->type == PERF_TYPE_RAW ||
					       a->type == PERF_TYPE_HW_CACHE;
				seen[ev[k]]++;
				if (sl->run != (int)r || sl->group != (int)g)
					fail_msg("case at line %d: event %u listed in %u/%u, slot "
						 "says %d/%d", c->line, ev[k], r, g, sl->run,
						 sl->group);
				if (a->type == PERF_TYPE_BREAKPOINT)
					bp_run++;
				if (counter && !sl->fixed) {
					gp_run++;
					gp_grp++;
				}
				if (sl->fixed) {
					int idx = tc_sched_classify(a, TACHO_EVENT_SRC_HARDWARE,
								    "cpu", c->pmu).fixed_idx;
					uint32_t *f = mux ? &fixed_grp : &fixed_run;
					if (*f & (1u << idx))
						fail_msg("case at line %d: fixed counter %d used "
							 "twice", c->line, idx);
					*f |= 1u << idx;
				}
			}
			if (limited && mux && gp_grp > c->pmu->gp)
				fail_msg("case at line %d: group %u/%u needs %u counters", c->line, r,
					 g, gp_grp);
		}
		if (limited && !mux && gp_run > c->pmu->gp)
			fail_msg("case at line %d: run %u needs %u general counters", c->line, r,
				 gp_run);
		if (bp_run > c->pmu->breakpoints)
			fail_msg("case at line %d: run %u has %u breakpoints", c->line, r, bp_run);
	}
	for (unsigned i = 0; i < c->n; i++) {
		const struct tc_sched_slot *sl = tc_schedule_slot(s, i);
		if (sl->run < 0 ? seen[i] != 0 || !sl->why : seen[i] != 1 || sl->why)
			fail_msg("case at line %d: event %u appears %u times (run %d)", c->line, i,
				 seen[i], sl->run);
	}
}

static const struct sched_case cases[] = {
	{ /* perf stat's default hardware set on Intel 4+3: two runs, the fixed three
	   * in the first */
		__LINE__, &intel_4_3, 0,
		{ { HW(CPU_CYCLES) }, { HW(INSTRUCTIONS) }, { HW(BRANCH_INSTRUCTIONS) },
		  { HW(BRANCH_MISSES) }, { HW(CACHE_REFERENCES) }, { HW(CACHE_MISSES) },
		  { CACHE(0x10000) }, { HW(REF_CPU_CYCLES) } },
		8, 2, { 0, 0, 0, 0, 0, 0, 1, 0 }, { 1, 1, 0, 0, 0, 0, 0, 1 }, 1,
	},
	{ /* ten general events and cycles: 4 + 4 + 2 */
		__LINE__, &intel_4_3, 0,
		{ { RAW(0x01) }, { RAW(0x02) }, { RAW(0x03) }, { RAW(0x04) }, { RAW(0x05) },
		  { RAW(0x06) }, { RAW(0x07) }, { RAW(0x08) }, { RAW(0x09) }, { RAW(0x0a) },
		  { HW(CPU_CYCLES) } },
		11, 3, { 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 0 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 }, 1,
	},
	{ /* raw encodings of the fixed events go on them; with cmask or edge they do not
	   * (SDM 20.2.1.1: the fixed counters count only the plain event) */
		__LINE__, &intel_4_3, 0,
		{ { RAW(0x003c) }, { RAW(0x00c0) }, { RAW(0x0100003c) }, { RAW(0x4003c) },
		  { RAW(0x0300) } },
		5, 1, { 0, 0, 0, 0, 0 }, { 1, 1, 0, 0, 1 }, 1,
	},
	{ /* cycles and instructions go first, into the first run, wherever they are in
	   * the list (the Pentium: two counters) */
		__LINE__, &p5_2, 0,
		{ { RAW(0x01) }, { RAW(0x02) }, { HW(INSTRUCTIONS) }, { RAW(0x03) },
		  { HW(CPU_CYCLES) } },
		5, 3, { 1, 1, 0, 2, 0 }, { 0, 0, 0, 0, 0 }, 1,
	},
	{ /* AMD has no fixed counters: cycles and instructions take general ones; 10 = 6+4 */
		__LINE__, &amd_6, 0,
		{ { HW(CPU_CYCLES) }, { HW(INSTRUCTIONS) }, { RAW(0x01) }, { RAW(0x02) },
		  { RAW(0x03) }, { RAW(0x04) }, { RAW(0x05) }, { RAW(0x06) }, { RAW(0x07) },
		  { RAW(0x08) } },
		10, 2, { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1 }, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 1,
	},
	{ /* P5Stat: the Pentium's two counters, six events, three runs; the software
	   * events count in the first run, each alone */
		__LINE__, &p5_2, 0,
		{ { RAW(0x00) }, { SW(TASK_CLOCK) }, { RAW(0x01) }, { RAW(0x02) }, { RAW(0x03) },
		  { RAW(0x04) }, { SW(PAGE_FAULTS) }, { RAW(0x05) } },
		8, 3, { 0, 0, 0, 1, 1, 2, 0, 2 }, { -1, -1, -1, -1, -1, -1, -1, -1 }, 3,
	},
	{ /* six breakpoints: four debug registers, so two runs */
		__LINE__, &intel_4_3, 0,
		{ { BP }, { BP }, { BP }, { BP }, { BP }, { BP }, { TP(7) } },
		7, 2, { 0, 0, 0, 0, 1, 1, 0 }, { -1, -1, -1, -1, -1, -1, -1 }, 5,
	},
	{ /* a user group wider than the counters never runs; the others do */
		__LINE__, &intel_4_3, 0,
		{ { RAW(0x01), 1 }, { RAW(0x02), 1 }, { RAW(0x03), 1 }, { RAW(0x04), 1 },
		  { RAW(0x05), 1 }, { RAW(0x06) }, { SW(CONTEXT_SWITCHES) } },
		7, 1, { -1, -1, -1, -1, -1, 0, 0 }, { -1, -1, -1, -1, -1, -1, -1 }, 2,
	},
	{ /* user groups stay whole: {a,b,c} and {d,e} cannot share a run of 4 */
		__LINE__, &intel_4_3, 0,
		{ { RAW(0x01), 1 }, { RAW(0x02), 1 }, { RAW(0x03), 1 }, { RAW(0x04), 2 },
		  { RAW(0x05), 2 }, { RAW(0x06) } },
		6, 2, { 0, 0, 0, 1, 1, 0 }, { -1, -1, -1, -1, -1, -1 }, 2,
	},
	{ /* a group's members need not be adjacent in the list */
		__LINE__, &p5_2, 0,
		{ { RAW(0x01), 1 }, { RAW(0x02) }, { RAW(0x03), 1 } },
		3, 2, { 0, 1, 0 }, { -1, -1, -1 }, 1,
	},
	{ /* ref-cycles without its fixed counter (v5 bitmap without bit 2) never runs */
		__LINE__, &(const struct tacho_pmu_counters){
			.sz = sizeof(struct tacho_pmu_counters), .gp = 4, .fixed = 2,
			.fixed_mask = 0x3, .breakpoints = 4, .fixed_intel = true, .known = true },
		0, { { HW(REF_CPU_CYCLES) }, { HW(CPU_CYCLES) } },
		2, 1, { -1, 0 }, { -1, 1 }, 1,
	},
	{ /* the NMI watchdog holds fixed counter 1: cycles takes a general one, and two
	   * cycles events cannot both be fixed */
		__LINE__, &(const struct tacho_pmu_counters){
			.sz = sizeof(struct tacho_pmu_counters), .gp = 4, .fixed = 2,
			.fixed_mask = 0x5, .breakpoints = 4, .fixed_intel = true, .known = true },
		0, { { HW(CPU_CYCLES) }, { HW(INSTRUCTIONS) }, { HW(INSTRUCTIONS) },
		     { RAW(1) }, { RAW(2) }, { RAW(3) } },
		6, 2, { 0, 0, 0, 0, 0, 1 }, { 0, 1, 0, 0, 0, 0 }, 1,
	},
	{ /* multiplexed: one run, groups of at most four general counters */
		__LINE__, &intel_4_3, TACHO_SCHED_MULTIPLEX,
		{ { RAW(0x01) }, { RAW(0x02) }, { RAW(0x03) }, { RAW(0x04) }, { RAW(0x05) },
		  { RAW(0x06) }, { RAW(0x07) }, { RAW(0x08) }, { RAW(0x09) }, { RAW(0x0a) },
		  { HW(CPU_CYCLES) }, { SW(TASK_CLOCK) } },
		12, 1, { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 },
		{ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0 }, 4,
	},
	{ /* multiplexed breakpoints still need a second run beyond four */
		__LINE__, &intel_4_3, TACHO_SCHED_MULTIPLEX,
		{ { BP }, { BP }, { BP }, { BP }, { BP }, { RAW(1) } },
		6, 2, { 0, 0, 0, 0, 1, 0 }, { -1, -1, -1, -1, -1, 0 }, 5,
	},
	{ /* no PMU: counter events alone in the first run, so the kernel says why */
		__LINE__, &no_pmu, 0,
		{ { HW(CPU_CYCLES) }, { HW(INSTRUCTIONS) }, { RAW(0x01) }, { SW(TASK_CLOCK) },
		  { SW(PAGE_FAULTS) } },
		5, 1, { 0, 0, 0, 0, 0 }, { 0, 0, 0, 0, 0 }, 5,
	},
	{ /* counters unknown: the same, one run */
		__LINE__, &unknown, 0,
		{ { RAW(0x01) }, { RAW(0x02) }, { RAW(0x03) }, { RAW(0x04) }, { RAW(0x05) },
		  { RAW(0x06) } },
		6, 1, { 0, 0, 0, 0, 0, 0 }, { 0, 0, 0, 0, 0, 0 }, 6,
	},
	{ /* only software events: one run */
		__LINE__, &intel_4_3, 0,
		{ { SW(TASK_CLOCK) }, { SW(CONTEXT_SWITCHES) }, { SW(CPU_MIGRATIONS) },
		  { SW(PAGE_FAULTS) } },
		4, 1, { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, 4,
	},
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct sched_case *c = &cases[i];
		struct tc_schedule *s = build(c);

		if (tc_schedule_nruns(s) != c->nruns)
			fail_msg("case at line %d: %u runs, want %u", c->line,
				 tc_schedule_nruns(s), c->nruns);
		for (unsigned e = 0; e < c->n; e++) {
			const struct tc_sched_slot *sl = tc_schedule_slot(s, e);
			if (sl->run != c->run[e])
				fail_msg("case at line %d: event %u in run %d, want %d (%s)",
					 c->line, e, sl->run, c->run[e], sl->why ? sl->why : "");
			if (c->fixed[e] >= 0 && sl->fixed != (c->fixed[e] == 1))
				fail_msg("case at line %d: event %u fixed=%d, want %d", c->line, e,
					 sl->fixed, c->fixed[e]);
		}
		if (c->ngroups0 && tc_schedule_ngroups(s, 0) != c->ngroups0)
			fail_msg("case at line %d: %u groups in run 0, want %u", c->line,
				 tc_schedule_ngroups(s, 0), c->ngroups0);
		check_invariants(c, s);
		tc_schedule_free(s);
	}
}

/* The reasons name the numbers. */
static void test_why(void **state)
{
	size_t i = 0;
	struct tc_schedule *s;
	(void)state;

	while (i + 1 < ARRAY_SIZE(cases) &&   /* the 5-wide group */
	       !(cases[i].n == 7 && cases[i].ev[4].group == 1 && cases[i].pmu == &intel_4_3))
		i++;
	assert_int_equal(cases[i].ev[4].group, 1);
	s = build(&cases[i]);
	assert_non_null(tc_schedule_slot(s, 0)->why);
	assert_contains(tc_schedule_slot(s, 0)->why, "needs 5 general-purpose counters");
	assert_contains(tc_schedule_slot(s, 0)->why, "gives a task 4");
	assert_null(tc_schedule_slot(s, 5)->why);
	assert_null(tc_schedule_slot(s, 99));
	assert_null(tc_schedule_group(s, 5, 0, NULL));
	tc_schedule_free(s);
	tc_schedule_free(NULL);
}

/* The descriptor limit (pmu.max_events): 10 software events and a group of 3, at most
 * 4 events a run, on every kind of PMU description: runs of at most 4, the group whole
 * in one run, list order kept within a run; a group wider than the limit is left out
 * with the reason; with --multiplex the limit is not the scheduler's (one run). */
static void test_descriptor_limit(void **state)
{
	const struct tacho_pmu_counters *pmus[] = { &intel_4_3, &amd_6, &no_pmu, &unknown };
	struct tc_sched_item items[13];
	struct tc_schedule *s;
	(void)state;

	for (size_t p = 0; p < ARRAY_SIZE(pmus); p++) {
		struct tacho_pmu_counters pmu = *pmus[p];
		unsigned placed = 0;

		pmu.max_events = 4;
		for (unsigned i = 0; i < 13; i++) {
			struct perf_event_attr a = SW(PAGE_FAULTS);
			items[i] = tc_sched_classify(&a, TACHO_EVENT_SRC_SOFTWARE, "software", &pmu);
			items[i].group = i >= 5 && i < 8 ? 1 : 0;   /* events 5, 6, 7 */
		}
		assert_int_equal(tc_schedule_build(items, 13, &pmu, 0, &s), 0);
		assert_true(tc_schedule_nruns(s) >= 4);   /* 13 events, 4 a run */
		assert_true(tc_schedule_descriptor_bound(s));
		for (unsigned r = 0; r < tc_schedule_nruns(s); r++) {
			unsigned in_run = 0;
			for (unsigned g = 0; g < tc_schedule_ngroups(s, r); g++) {
				unsigned n;
				tc_schedule_group(s, r, g, &n);
				in_run += n;
			}
			if (in_run > 4)
				fail_msg("pmu %zu: run %u holds %u events", p, r, in_run);
			placed += in_run;
		}
		assert_int_equal(placed, 13);
		assert_int_equal(tc_schedule_slot(s, 5)->run, tc_schedule_slot(s, 6)->run);
		assert_int_equal(tc_schedule_slot(s, 5)->run, tc_schedule_slot(s, 7)->run);
		assert_int_equal(tc_schedule_slot(s, 5)->group, tc_schedule_slot(s, 7)->group);
		tc_schedule_free(s);

		/* a group of 5 cannot fit 4 descriptors: left out, said why */
		for (unsigned i = 0; i < 13; i++)
			items[i].group = i < 5 ? 1 : 0;
		assert_int_equal(tc_schedule_build(items, 13, &pmu, 0, &s), 0);
		assert_non_null(tc_schedule_slot(s, 0)->why);
		assert_contains(tc_schedule_slot(s, 0)->why, "needs 5 file descriptors at once");
		assert_int_equal(tc_schedule_slot(s, 4)->run, -1);
		assert_null(tc_schedule_slot(s, 5)->why);
		tc_schedule_free(s);

		/* multiplexed: one run, the kernel's limit decides */
		for (unsigned i = 0; i < 13; i++)
			items[i].group = 0;
		assert_int_equal(tc_schedule_build(items, 13, &pmu, TACHO_SCHED_MULTIPLEX, &s), 0);
		assert_int_equal(tc_schedule_nruns(s), 1);
		assert_false(tc_schedule_descriptor_bound(s));
		tc_schedule_free(s);

		/* no limit: one run */
		pmu.max_events = 0;
		assert_int_equal(tc_schedule_build(items, 13, &pmu, 0, &s), 0);
		assert_int_equal(tc_schedule_nruns(s), 1);
		tc_schedule_free(s);
	}
}

/* P5Stat's full job: all 38 Pentium events (seed 000), two per run: 19 runs. */
static void test_p5stat(void **state)
{
	struct tc_sched_item items[38];
	struct tc_schedule *s;
	(void)state;

	for (unsigned i = 0; i < 38; i++) {
		struct perf_event_attr a = { .type = PERF_TYPE_RAW, .config = i };
		items[i] = tc_sched_classify(&a, TACHO_EVENT_SRC_RAW, "cpu", &p5_2);
		assert_int_equal(items[i].kind, TC_SCHED_GP);
	}
	assert_int_equal(tc_schedule_build(items, 38, &p5_2, 0, &s), 0);
	assert_int_equal(tc_schedule_nruns(s), 19);
	for (unsigned r = 0; r < 19; r++) {
		unsigned n;
		const unsigned *ev = tc_schedule_group(s, r, 0, &n);
		assert_int_equal(tc_schedule_ngroups(s, r), 1);
		assert_int_equal(n, 2);
		assert_int_equal(ev[0], 2 * r);
		assert_int_equal(ev[1], 2 * r + 1);
	}
	tc_schedule_free(s);
	/* empty list: no runs */
	assert_int_equal(tc_schedule_build(NULL, 0, &p5_2, 0, &s), 0);
	assert_int_equal(tc_schedule_nruns(s), 0);
	tc_schedule_free(s);
	assert_int_equal(tc_schedule_build(items, 1, NULL, 0, &s), -EINVAL);
}

static const struct {
	int line;
	struct perf_event_attr attr;
	enum tacho_event_source src;
	const char *pmu;
	bool intel;
	enum tc_sched_kind kind;
	int fixed;
} classify_cases[] = {
	{ __LINE__, HW(CPU_CYCLES), TACHO_EVENT_SRC_HARDWARE, "cpu", true, TC_SCHED_FIXED_OR_GP, 1 },
	{ __LINE__, HW(CPU_CYCLES), TACHO_EVENT_SRC_HARDWARE, "cpu", false, TC_SCHED_GP, -1 },
	{ __LINE__, HW(INSTRUCTIONS), TACHO_EVENT_SRC_HARDWARE, "cpu", true, TC_SCHED_FIXED_OR_GP, 0 },
	{ __LINE__, HW(REF_CPU_CYCLES), TACHO_EVENT_SRC_HARDWARE, "cpu", true, TC_SCHED_FIXED_ONLY, 2 },
	{ __LINE__, HW(BRANCH_MISSES), TACHO_EVENT_SRC_HARDWARE, "cpu", true, TC_SCHED_GP, -1 },
	{ __LINE__, CACHE(0x10000), TACHO_EVENT_SRC_CACHE, "cpu", true, TC_SCHED_GP, -1 },
	/* L1-dcache-stores: 0x100 as a cache config, INST_RETIRED.ANY as a raw one */
	{ __LINE__, CACHE(0x100), TACHO_EVENT_SRC_CACHE, "cpu", true, TC_SCHED_GP, -1 },
	{ __LINE__, RAW(0x100), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_FIXED_ONLY, 0 },
	{ __LINE__, CACHE(0x3c), TACHO_EVENT_SRC_CACHE, "cpu", true, TC_SCHED_GP, -1 },
	{ __LINE__, { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES, .precise_ip = 2 },
	  TACHO_EVENT_SRC_HARDWARE, "cpu", true, TC_SCHED_GP, -1 },
	/* ref-cycles exists on fixed counter 2 alone: precise or not, never a general one */
	{ __LINE__, { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_REF_CPU_CYCLES, .precise_ip = 1 },
	  TACHO_EVENT_SRC_HARDWARE, "cpu", true, TC_SCHED_FIXED_ONLY, 2 },
	{ __LINE__, { .type = PERF_TYPE_RAW, .config = 0x0300, .precise_ip = 1 },
	  TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_FIXED_ONLY, 2 },
	{ __LINE__, { .type = PERF_TYPE_RAW, .config = 0x3c, .precise_ip = 1 },
	  TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_GP, -1 },
	{ __LINE__, RAW(0x3c), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_FIXED_OR_GP, 1 },
	{ __LINE__, RAW(0x0100003c), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_GP, -1 },
	{ __LINE__, RAW(0x80003c), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_GP, -1 },
	{ __LINE__, RAW(0x3c), TACHO_EVENT_SRC_RAW, "cpu", false, TC_SCHED_GP, -1 },
	/* the kernel compares event, umask, edge, inv, cmask and in_tx(_cp) only: usr/os
	 * bits written into a raw code and 'any' keep the fixed counter, in_tx loses it */
	{ __LINE__, RAW(0x53003c), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_FIXED_OR_GP, 1 },
	{ __LINE__, RAW(0x2000c0), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_FIXED_OR_GP, 0 },
	{ __LINE__, RAW(0x530300), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_FIXED_ONLY, 2 },
	{ __LINE__, RAW(0x10000003c), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_GP, -1 },
	{ __LINE__, RAW(0x2000000c0), TACHO_EVENT_SRC_RAW, "cpu", true, TC_SCHED_GP, -1 },
	/* TOPDOWN.SLOTS (cpu/slots/) lives on fixed counter 3 only */
	{ __LINE__, { .type = 4, .config = 0x0400 }, TACHO_EVENT_SRC_PMU, "cpu", true,
	  TC_SCHED_FIXED_ONLY, 3 },
	{ __LINE__, SW(PAGE_FAULTS), TACHO_EVENT_SRC_SOFTWARE, "software", true, TC_SCHED_FREE, -1 },
	{ __LINE__, TP(300), TACHO_EVENT_SRC_TRACEPOINT, "tracepoint", true, TC_SCHED_FREE, -1 },
	{ __LINE__, BP, TACHO_EVENT_SRC_BREAKPOINT, "breakpoint", true, TC_SCHED_BREAKPOINT, -1 },
	{ __LINE__, { .type = 9, .config = 0 }, TACHO_EVENT_SRC_PMU, "msr", true, TC_SCHED_FREE, -1 },
	{ __LINE__, { .type = 8, .config = 0xc0 }, TACHO_EVENT_SRC_PMU, "cpu_core", true,
	  TC_SCHED_FIXED_OR_GP, 0 },
	{ __LINE__, { .type = 12, .config = 0x1 }, TACHO_EVENT_SRC_PMU, "uncore_imc_0", true,
	  TC_SCHED_FREE, -1 },
};

static void test_classify(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(classify_cases); i++) {
		struct tc_sched_item it = tc_sched_classify(
			&classify_cases[i].attr, classify_cases[i].src, classify_cases[i].pmu,
			classify_cases[i].intel ? &intel_4_3 : &amd_6);
		if (it.kind != classify_cases[i].kind || it.fixed_idx != classify_cases[i].fixed)
			fail_msg("classify case at line %d: kind %d fixed %d", classify_cases[i].line,
				 it.kind, it.fixed_idx);
	}
}

static void set_feature(struct tacho_cpu_info *info, const char *name)
{
	int i = tacho_cpu_feature_index(name);

	assert_true(i >= 0);
	info->features[i / 64] |= 1ull << (i % 64);
}

static void test_counters_from_cpu(void **state)
{
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	struct tacho_pmu_counters c = { .sz = sizeof(c) };
	(void)state;

	/* Intel, architectural perfmon v4: 4 general, 3 fixed */
	info = (struct tacho_cpu_info){ .sz = sizeof(info) };
	info.vendor = TACHO_VENDOR_INTEL;
	info.family = 6;
	info.max_leaf = 0x16;
	info.pmu = (struct tacho_cpu_pmu){ .version = 4, .gp_counters = 4, .fixed_counters = 3 };
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_true(c.known && !c.none && c.fixed_intel);
	assert_int_equal(c.gp, 4);
	assert_int_equal(c.fixed, 3);
	assert_int_equal(c.fixed_mask, 0x7);
	assert_int_equal(c.breakpoints, 4);
	assert_string_equal(c.source, "CPUID leaf 0xA");
	/* the watchdog takes fixed counter 1 */
	assert_int_equal(tc_pmu_counters_set_watchdog(&c, true), 0);
	assert_int_equal(c.fixed_mask, 0x5);
	assert_int_equal(c.fixed, 2);
	assert_contains(c.note, "NMI watchdog");

	/* v5 with a fixed-counter bitmap: counters 0, 1, 3 */
	info.pmu = (struct tacho_cpu_pmu){ .version = 5, .gp_counters = 8, .fixed_counters = 4,
					   .fixed_mask = 0xb };
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_int_equal(c.fixed_mask, 0xb);
	assert_int_equal(c.fixed, 3);

	/* hybrid: the smaller of the two kinds */
	info.ncore_types = 2;
	info.core_types[0].pmu = (struct tacho_cpu_pmu){ .version = 5, .gp_counters = 8,
							 .fixed_counters = 4, .fixed_mask = 0xf };
	info.core_types[1].pmu = (struct tacho_cpu_pmu){ .version = 5, .gp_counters = 6,
							 .fixed_counters = 3, .fixed_mask = 0x7 };
	info.pmu = info.core_types[0].pmu;
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_int_equal(c.gp, 6);
	assert_int_equal(c.fixed_mask, 0x7);
	info.ncore_types = 0;

	/* a KVM guest without a virtual PMU: leaf 0xA is zero */
	info.hypervisor_bit = true;
	info.pmu = (struct tacho_cpu_pmu){ 0 };
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_true(c.known && c.none);
	assert_int_equal(c.gp, 0);
	assert_string_equal(c.note, "virtual machine guest, CPUID leaf 0xA is zero");
	info.hypervisor = TACHO_HV_KVM;
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_string_equal(c.note, "KVM guest, CPUID leaf 0xA is zero");
	assert_int_equal(tc_pmu_counters_set_watchdog(&c, true), 0);
	assert_int_equal(c.gp, 0);

	/* the Pentium: no leaf 0xA, two counters (seed 000) */
	info = (struct tacho_cpu_info){ .sz = sizeof(info) };
	info.vendor = TACHO_VENDOR_INTEL;
	info.family = 5;
	info.max_leaf = 1;
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_int_equal(c.gp, 2);
	assert_int_equal(c.fixed, 0);
	assert_false(c.none);

	/* AMD: PerfCtrExtCore gives six; without it four; perfmon v2 says itself */
	info = (struct tacho_cpu_info){ .sz = sizeof(info) };
	info.vendor = TACHO_VENDOR_AMD;
	info.family = 0x17;
	set_feature(&info, "perfctr_core");
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_int_equal(c.gp, 6);
	assert_false(c.fixed_intel);
	assert_int_equal(tc_pmu_counters_set_watchdog(&c, true), 0);
	assert_int_equal(c.gp, 5);
	memset(info.features, 0, sizeof(info.features));
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_int_equal(c.gp, 4);
	info.pmu = (struct tacho_cpu_pmu){ .amd_perfmon_v2 = true, .gp_counters = 6 };
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_int_equal(c.gp, 6);
	assert_string_equal(c.source, "CPUID 0x8000_0022");
	/* an AMD guest that shows nothing: unknown, not "none" */
	info = (struct tacho_cpu_info){ .sz = sizeof(info) };
	info.vendor = TACHO_VENDOR_AMD;
	info.family = 0x19;
	info.hypervisor_bit = true;
	assert_int_equal(tc_pmu_counters_from_cpu(&info, &c), 0);
	assert_false(c.known);

	assert_int_equal(tc_pmu_counters_from_cpu(NULL, &c), -EINVAL);
}

/* This machine: whatever it is, detection succeeds and is self-consistent. */
static void test_detect_live(void **state)
{
	struct tacho_pmu_counters c = { .sz = sizeof(c) };
	(void)state;

	assert_int_equal(tacho_pmu_counters_detect(&c), 0);
	assert_true(c.source[0] != '\0');
	/* sized: a caller's struct below the first version is refused, untouched */
	{
		struct tacho_pmu_counters small = { .sz = offsetof(struct tacho_pmu_counters,
								   note),
						    .gp = 77 };
		struct tacho_evlist *l = NULL;
		struct tc_schedule *s = (struct tc_schedule *)&small;

		assert_int_equal(tacho_pmu_counters_detect(&small), -EINVAL);
		assert_int_equal(small.gp, 77);
		assert_int_equal(tacho_evlist_parse("page-faults", &l, NULL), 0);
		assert_int_equal(tc_schedule_new(l, &small, 0, &s), -EINVAL);
		assert_int_equal(tc_schedule_new(l, &c, 0, &s), 0);
		assert_int_equal(tc_schedule_nruns(s), 1);
		tc_schedule_free(s);
		tacho_evlist_free(l);
	}
	assert_int_equal(c.fixed, (unsigned)__builtin_popcount(c.fixed_mask));
	if (c.none)
		assert_true(c.gp == 0 && c.fixed == 0);
	printf("this machine: %u general, %u fixed (%s)%s%s\n", c.gp, c.fixed, c.source,
	       c.note[0] ? ": " : "", c.note);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_why),
		cmocka_unit_test(test_p5stat),
		cmocka_unit_test(test_descriptor_limit),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_counters_from_cpu),
		cmocka_unit_test(test_detect_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
