/* test-metrics.c - derived metrics on data: each metric from its inputs, nothing where
 * an input is missing, uncounted, zero in the denominator or counted at other rings;
 * the groups of `stat -M` served on data as a machine with a PMU would count them
 * (their events parsed, given counts, their metrics derived exactly). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tacho.h"
#include "harness.h"
#include "util/util.h"

/* An input's attr is read by its size field, as the kernel reads one: these are
 * full-size, as a caller built with this library's headers passes them. */
#define ATTR(t, c) { .size = sizeof(struct perf_event_attr), .type = (t), .config = (c) }
#define HWA(c) ATTR(PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c)
#define SWA(c) ATTR(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c)
#define RAWA(c) ATTR(PERF_TYPE_RAW, (c))
#define HW(c) (&(const struct perf_event_attr)HWA(c))
#define SW(c) (&(const struct perf_event_attr)SWA(c))

static const struct tacho_metric *find(const struct tacho_metric *m, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(m[i].name, name))
			return &m[i];
	return NULL;
}

/* The metric, which must exist (a failure names it). */
static const struct tacho_metric *must(const struct tacho_metric *m, size_t n, const char *name)
{
	static const struct tacho_metric none = { .value = NAN };
	const struct tacho_metric *x = find(m, n, name);

	if (!x) {
		fail_msg("metric '%s' missing", name);
		return &none;
	}
	return x;
}

static double get(const struct tacho_metric *m, size_t n, const char *name)
{
	return must(m, n, name)->value;
}

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * (1.0 + fabs(b)))

static void test_table_metrics(void **state)
{
	const struct tacho_metric_input in[] = {
		{ "cycles", HW(CPU_CYCLES), 3e9, true },
		{ "instructions", HW(INSTRUCTIONS), 6e9, true },
		{ "branches", HW(BRANCH_INSTRUCTIONS), 1e9, true },
		{ "branch-misses", HW(BRANCH_MISSES), 1e7, true },
		{ "cache-references", HW(CACHE_REFERENCES), 2e6, true },
		{ "cache-misses", HW(CACHE_MISSES), 5e5, true },
		{ "task-clock", SW(TASK_CLOCK), 1.5e9, true },   /* 1.5 s in ns */
	};
	struct tacho_metric *m;
	size_t n;
	(void)state;

	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 3e9, &m, &n,
					       sizeof(*m)), 0);
	assert_true(NEAR(get(m, n, "IPC"), 2.0));
	assert_true(NEAR(get(m, n, "CPI"), 0.5));
	assert_true(NEAR(get(m, n, "branch-miss ratio"), 1.0));
	assert_true(NEAR(get(m, n, "cache-miss ratio"), 25.0));
	assert_true(NEAR(get(m, n, "GHz"), 2.0));
	assert_true(NEAR(get(m, n, "CPUs utilized"), 0.5));
	/* rates over task-clock seconds, not over wall time */
	assert_true(NEAR(get(m, n, "branch-misses rate"), 1e7 / 1.5));
	assert_true(NEAR(get(m, n, "cycles rate"), 2e9));
	assert_null(find(m, n, "task-clock rate"));
	assert_string_equal(must(m, n, "IPC")->expr, "instructions / cycles");
	assert_string_equal(must(m, n, "IPC")->unit, "insn per cycle");
	assert_int_equal(must(m, n, "IPC")->inputs[0], 1);
	assert_int_equal(must(m, n, "IPC")->inputs[1], 0);
	free(m);
}

static void test_missing_inputs(void **state)
{
	struct tacho_metric_input in[] = {
		{ "cycles", HW(CPU_CYCLES), 0, false },          /* not counted */
		{ "instructions", HW(INSTRUCTIONS), 6e9, true },
		{ "branches", HW(BRANCH_INSTRUCTIONS), 0, true }, /* counted: zero */
		{ "branch-misses", HW(BRANCH_MISSES), 10, true },
		{ "page-faults", SW(PAGE_FAULTS), 1000, true },
	};
	struct tacho_metric *m;
	size_t n;
	(void)state;

	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_null(find(m, n, "IPC"));
	assert_null(find(m, n, "CPI"));
	assert_null(find(m, n, "GHz"));
	assert_null(find(m, n, "branch-miss ratio"));     /* zero denominator */
	assert_null(find(m, n, "CPUs utilized"));         /* no task-clock, no wall time */
	assert_null(find(m, n, "page-faults rate"));      /* nothing to divide by */
	assert_null(find(m, n, "cycles rate"));
	for (size_t i = 0; i < n; i++)
		assert_true(isfinite(m[i].value));
	free(m);

	/* with a wall time, rates fall back to it */
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 2e9, &m, &n,
					       sizeof(*m)), 0);
	assert_true(NEAR(get(m, n, "page-faults rate"), 500.0));
	assert_string_equal(must(m, n, "page-faults rate")->expr, "page-faults / wall time");
	assert_int_equal(must(m, n, "page-faults rate")->inputs[1], -1);
	free(m);

	/* nothing at all */
	assert_int_equal(tacho_metrics_compute(NULL, 0, sizeof(struct tacho_metric_input), 1e9,
					       &m, &n, sizeof(*m)), 0);
	assert_int_equal(n, 0);
	assert_null(m);
	assert_int_equal(tacho_metrics_compute(NULL, 1, sizeof(struct tacho_metric_input), 1e9,
					       &m, &n, sizeof(*m)), -EINVAL);
}

/* cycles:u with instructions:k is no IPC; cycles:u with instructions:u is. */
static void test_rings(void **state)
{
	struct perf_event_attr a[] = { HWA(CPU_CYCLES), HWA(INSTRUCTIONS), HWA(INSTRUCTIONS) };
	struct tacho_metric_input in[] = {
		{ "cycles:u", &a[0], 100, true },
		{ "instructions:k", &a[1], 50, true },
		{ "instructions:u", &a[2], 300, true },
	};
	struct tacho_metric *m;
	size_t n;
	(void)state;

	a[0].exclude_kernel = 1;
	a[1].exclude_user = 1;
	a[2].exclude_kernel = 1;
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_true(NEAR(get(m, n, "IPC"), 3.0));
	assert_string_equal(must(m, n, "IPC")->expr, "instructions:u / cycles:u");
	free(m);
}

/* The Pentium's "count cycles instead of events" (CESR bit 8, seed 000) today is
 * cmask=1: cycles with the event in progress; edge counts its starts. Their ratio is
 * the mean duration of one occurrence. */
static void test_duration(void **state)
{
	/* event 0x48 umask 0x01 (L1D_PEND_MISS.PENDING on Intel): cmask=1 = 0x01000148,
	 * cmask=1,edge = 0x01040148 */
	struct perf_event_attr a[] = { RAWA(0x01000148), RAWA(0x01040148), RAWA(0x01040149) };
	struct tacho_metric_input in[] = {
		{ "l1d-pend-cycles", &a[0], 12000, true },
		{ "l1d-pend-starts", &a[1], 400, true },
		{ "other", &a[2], 7, true },    /* another umask: not a partner */
	};
	struct tacho_metric *m;
	size_t n;
	(void)state;

	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_true(NEAR(get(m, n, "avg duration of l1d-pend-starts"), 30.0));
	assert_string_equal(must(m, n, "avg duration of l1d-pend-starts")->unit, "cycles");
	free(m);

	/* occurrences counted plainly (no cmask, no edge) serve too */
	a[1].config = 0x0148;
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_true(NEAR(get(m, n, "avg duration of l1d-pend-starts"), 30.0));
	free(m);

	/* without occurrences, or with zero of them, no duration */
	in[1].has_value = false;
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_null(find(m, n, "avg duration of l1d-pend-starts"));
	free(m);
	in[1].has_value = true;
	in[1].value = 0;
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_null(find(m, n, "avg duration of l1d-pend-starts"));
	free(m);
}

/* The attrs are read by their size field: an older caller's smaller attr (here the
 * first published one, PERF_ATTR_SIZE_VER0) reads with the rest zero, whatever lies
 * beyond it; a size of 0 or one this library's headers do not know is refused. An
 * input without a value is ignored, attr and all. */
static void test_attr_sizes(void **state)
{
	struct {
		struct perf_event_attr a;
		unsigned char beyond[64];
	} c = { .a = HWA(CPU_CYCLES) }, i = { .a = HWA(INSTRUCTIONS) };
	struct tacho_metric_input in[] = {
		{ "cycles", &c.a, 100, true },
		{ "instructions", &i.a, 300, true },
	};
	struct tacho_metric *m;
	size_t n;
	(void)state;

	/* exclude_kernel sits in the flags word, inside VER0: a difference there splits
	 * the rings; sample_regs_user lies beyond VER0 and must read as zero */
	c.a.size = PERF_ATTR_SIZE_VER0;
	c.a.sample_regs_user = ~0ull;
	memset(c.beyond, 0xff, sizeof(c.beyond));
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_true(NEAR(get(m, n, "IPC"), 3.0));
	free(m);
	c.a.exclude_kernel = 1;
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_null(find(m, n, "IPC"));
	free(m);
	c.a.exclude_kernel = 0;

	c.a.size = 0;
	m = (struct tacho_metric *)&c;   /* must be reset, not left */
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), -EINVAL);
	assert_null(m);
	c.a.size = PERF_ATTR_SIZE_VER0 + 4;   /* between two published sizes */
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), -EINVAL);
	c.a.size = sizeof(struct perf_event_attr) + 8;   /* a newer header than ours */
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), -EINVAL);
	/* without a value the attr is not read at all */
	in[0].has_value = false;
	in[0].attr = NULL;
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_null(find(m, n, "IPC"));
	free(m);
	in[1].attr = NULL;
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), -EINVAL);
}

/* Both arrays go with the caller's element size: inputs of a newer header's larger
 * elements are read at their stride, and the metrics are laid out at the caller's
 * stride, the fields it has and the library does not know left zero. */
static void test_element_sizes(void **state)
{
	struct newer_input {
		struct tacho_metric_input in;
		double future;
	} in[] = {
		{ { "cycles", HW(CPU_CYCLES), 3e9, true }, -1 },
		{ { "instructions", HW(INSTRUCTIONS), 6e9, true }, -1 },
	};
	struct newer_metric {
		struct tacho_metric m;
		double future;
	} *m = NULL;
	size_t n = 0;
	bool ipc = false, cpi = false;
	(void)state;

	assert_int_equal(tacho_metrics_compute(&in[0].in, 2,
					       offsetof(struct tacho_metric_input, has_value),
					       0, (struct tacho_metric **)&m, &n,
					       sizeof(*m)), -EINVAL);
	assert_int_equal(tacho_metrics_compute(&in[0].in, 2, sizeof(in[0]), 0,
					       (struct tacho_metric **)&m, &n,
					       offsetof(struct tacho_metric, inputs)), -EINVAL);
	assert_int_equal(tacho_metrics_compute(&in[0].in, 2, sizeof(in[0]), 0,
					       (struct tacho_metric **)&m, &n, sizeof(*m)), 0);
	assert_true(n >= 2);
	for (size_t i = 0; i < n; i++) {
		assert_true(m[i].future == 0);
		if (!strcmp(m[i].m.name, "IPC")) {
			assert_true(NEAR(m[i].m.value, 2.0));
			ipc = true;
		} else if (!strcmp(m[i].m.name, "CPI")) {
			assert_true(NEAR(m[i].m.value, 0.5));
			cpi = true;
		}
	}
	assert_true(ipc && cpi);
	free(m);
}

/* A name longer than name[] holds: full_name and full_expr whole, name and expr their
 * first bytes; laid out at a newer caller's odd stride the pointers (unaligned there,
 * read with memcpy) still lead to the strings, in the array's own allocation; a caller
 * of the first version, whose elements end at inputs, gets those fields alone. */
static void test_long_names(void **state)
{
	char ev[121], want[140], expr[160];
	struct tacho_metric_input in[] = {
		{ ev, SW(PAGE_FAULTS), 1000, true },
		{ "task-clock", SW(TASK_CLOCK), 2e9, true },
		{ "cs", SW(CONTEXT_SWITCHES), 10, true },
	};
	const size_t v1 = offsetof(struct tacho_metric, inputs) + sizeof(int[2]);
	const size_t odd = sizeof(struct tacho_metric) + 3;
	const char *name, *ex;
	struct tacho_metric *m;
	char *laid;
	size_t n;
	(void)state;

	memset(ev, 'x', 120);
	ev[120] = '\0';
	snprintf(want, sizeof(want), "%s rate", ev);
	snprintf(expr, sizeof(expr), "%s / task-clock", ev);
	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0, &m, &n,
					       sizeof(*m)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(m[0].full_name, want);
	assert_string_equal(m[0].full_expr, expr);
	assert_int_equal(strlen(m[0].name), sizeof(m[0].name) - 1);
	assert_memory_equal(m[0].name, want, sizeof(m[0].name) - 1);
	assert_true(NEAR(m[0].value, 500.0));
	assert_string_equal(m[1].name, "cs rate");
	assert_string_equal(m[1].full_name, "cs rate");
	free(m);

	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0,
					       (struct tacho_metric **)&laid, &n, odd), 0);
	assert_int_equal(n, 2);
	memcpy(&name, laid + offsetof(struct tacho_metric, full_name), sizeof(name));
	memcpy(&ex, laid + offsetof(struct tacho_metric, full_expr), sizeof(ex));
	assert_string_equal(name, want);
	assert_string_equal(ex, expr);
	memcpy(&name, laid + odd + offsetof(struct tacho_metric, full_name), sizeof(name));
	assert_string_equal(name, "cs rate");
	for (size_t i = sizeof(struct tacho_metric); i < odd; i++)
		assert_int_equal(laid[i], 0);
	free(laid);

	assert_int_equal(tacho_metrics_compute(in, ARRAY_SIZE(in), sizeof(in[0]), 0,
					       (struct tacho_metric **)&laid, &n, v1 + 4), 0);
	assert_int_equal(n, 2);
	for (size_t i = v1; i < v1 + 4; i++)
		assert_int_equal(laid[i], 0);
	assert_memory_equal(laid, want, sizeof(m[0].name) - 1);
	assert_string_equal(laid + v1 + 4, "cs rate");
	free(laid);
}

/* Each group of `stat -M`, as a machine with a PMU serves it: its event list parsed
 * as stat parses it, the counts below given to its events in order, and the metrics it
 * names derived with the values below (wall time 1 s). One case a group, each
 * naming its line; every group of the table has one. */
static const struct group_case {
	const char *group;
	double counts[3];
	struct { const char *name; double value; } want[2];
} group_cases[] = {
	{ "ipc", { 6e9, 3e9 }, { { "IPC", 2.0 }, { "CPI", 0.5 } } },
	{ "branches", { 1e9, 1e7 }, { { "branch-miss ratio", 1.0 } } },
	{ "cache", { 2e6, 5e5 }, { { "cache-miss ratio", 25.0 } } },
	{ "l1d", { 4e6, 1e6 }, { { "L1-dcache load-miss ratio", 25.0 } } },
	{ "llc", { 1e6, 1e5 }, { { "LLC load-miss ratio", 10.0 } } },
	{ "tlb", { 1e6, 2e4 }, { { "dTLB load-miss ratio", 2.0 } } },
	{ "stalls", { 1e9, 2e8, 3e8 }, { { "stalled frontend", 20.0 },
					 { "stalled backend", 30.0 } } },
	{ "frequency", { 3e9, 1.5e9 }, { { "GHz", 2.0 } } },
	{ "utilization", { 5e8 }, { { "CPUs utilized", 0.5 } } },
};

static void test_groups_served(void **state)
{
	size_t ngroups = 0;
	(void)state;

	while (tacho_metric_group_at(ngroups))
		ngroups++;
	assert_int_equal(ngroups, ARRAY_SIZE(group_cases));
	for (size_t c = 0; c < ARRAY_SIZE(group_cases); c++) {
		const struct group_case *k = &group_cases[c];
		const struct tacho_metric_group *g = tacho_metric_group_find(k->group);
		struct tacho_metric_input in[3];
		struct perf_event_attr attr[3];
		struct tacho_diag diag = { .sz = sizeof(diag) };
		struct tacho_evlist *list = NULL;
		struct tacho_metric *m;
		size_t n, nev;

		if (!g)
			fail_msg("case %zu: no group '%s'", c, k->group);
		if (g != tacho_metric_group_at(c))
			fail_msg("case %zu: '%s' out of the table's order", c, k->group);
		if (tacho_evlist_parse(g->events, &list, &diag))
			fail_msg("group %s: its events '%s' do not parse: %s", g->name, g->events,
				 diag.message);
		nev = tacho_evlist_count(list);
		assert_true(nev >= 1 && nev <= 3);
		for (size_t i = 0; i < nev; i++) {
			bool counter, listed;
			const char *name = tacho_evlist_name(list, i);

			assert_int_equal(tacho_evlist_attr(list, i, &attr[i]), 0);
			in[i] = (struct tacho_metric_input){ name, &attr[i], k->counts[i], true };
			/* counters names exactly its hardware and cache events */
			counter = attr[i].type == PERF_TYPE_HARDWARE ||
				  attr[i].type == PERF_TYPE_HW_CACHE;
			listed = g->counters && strstr(g->counters, name);
			if (counter != listed)
				fail_msg("group %s: event %s (type %u) is%s in its counters '%s'",
					 g->name, name, attr[i].type, listed ? "" : " not",
					 g->counters ? g->counters : "(none)");
		}
		assert_int_equal(tacho_metrics_compute(in, nev, sizeof(in[0]), 1e9, &m, &n,
						       sizeof(*m)), 0);
		for (size_t w = 0; w < 2 && k->want[w].name; w++) {
			const struct tacho_metric *x = must(m, n, k->want[w].name);

			if (!NEAR(x->value, k->want[w].value))
				fail_msg("group %s: %s is %g, want %g", g->name, k->want[w].name,
					 x->value, k->want[w].value);
			/* and the group says it gives it */
			assert_non_null(strstr(g->metrics, k->want[w].name));
		}
		free(m);
		tacho_evlist_free(list);
	}
}

/* A group is found by its name or a metric's, in any case; nothing else is. */
static void test_group_find(void **state)
{
	(void)state;

	assert_string_equal(tacho_metric_group_find("ipc")->name, "ipc");
	assert_string_equal(tacho_metric_group_find("IPC")->name, "ipc");
	assert_string_equal(tacho_metric_group_find("cpi")->name, "ipc");
	assert_string_equal(tacho_metric_group_find("gHz")->name, "frequency");
	assert_string_equal(tacho_metric_group_find("stalled backend")->name, "stalls");
	assert_string_equal(tacho_metric_group_find("CPUs utilized")->name, "utilization");
	assert_null(tacho_metric_group_find("ip"));
	assert_null(tacho_metric_group_find("topdown"));
	assert_null(tacho_metric_group_find(""));
	assert_null(tacho_metric_group_find(NULL));
	assert_null(tacho_metric_group_at(ARRAY_SIZE(group_cases)));
	assert_null(tacho_metric_group_find("utilization")->counters);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_metrics),
		cmocka_unit_test(test_attr_sizes),
		cmocka_unit_test(test_missing_inputs),
		cmocka_unit_test(test_rings),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_element_sizes),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_groups_served),
		cmocka_unit_test(test_group_find),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
