/* test-sim-engine.c - `tacho stat --sim --sim-engine`: which valgrind tool runs and
 * which simulations it turns on for the events asked (docs/sim.md, "The engines"), on
 * the loop of tests/progs/sim-kernels.c (6 instructions and 1 conditional branch per
 * iteration). The totals are compared exactly: auto (callgrind without the simulations
 * no event needs) against callgrind with both; cachegrind by the difference of two
 * runs (its total differs from callgrind's by a fixed number of glibc's start-up
 * instructions, the same for N and 2N iterations); the regions under auto, exact by
 * difference; a program with regions refused under cachegrind; the usage errors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

static bool have_valgrind(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	for (const char *p = path ? path : ""; *p; ) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof(buf), "%.*s/valgrind", (int)n, p);
		if (access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

#define NEED_VALGRIND()                                                                 \
	do {                                                                            \
		if (!have_valgrind())                                                   \
			TEST_SKIP("valgrind is not installed (Debian package valgrind)"); \
	} while (0)

/* `tacho stat --sim --json --sim-engine ENGINE -e EVENTS -- sim-kernels loop N`: the
 * document (the test fails unless tacho exited 0). */
static struct th_json *loop_json(const char *engine, const char *events, const char *n)
{
	struct th_run r;
	struct th_json *j;

	th_tacho(&r, "stat", "--sim", "--json", "--sim-engine", engine, "-e", events, "--",
		 th_prog("sim-kernels"), "loop", n, NULL);
	if (r.status != 0)
		fail_msg("tacho stat --sim --sim-engine %s -e %s exited %d:\n%s", engine, events,
			 r.status, r.err);
	j = assert_json(r.err);
	th_run_free(&r);
	return j;
}

static double value(const struct th_json *j, const char *event)
{
	const struct th_json *e = th_json_find(j, "events", "name", event);

	if (!e)
		fail_msg("no event '%s' in the output", event);
	assert_string_equal(json_str(e, "status"), "simulated");
	return json_num(e, "value");
}

/* What ran, as the document states it: the tool and its two simulations. */
static void assert_ran(const struct th_json *j, const char *tool, bool caches, bool branches)
{
	const struct th_json *c = th_json_get(j, "simulation.cache_sim");
	const struct th_json *b = th_json_get(j, "simulation.branch_sim");

	assert_json_str(j, "simulation.tool", tool);
	assert_non_null(c);
	assert_non_null(b);
	assert_int_equal(c->type, TH_JSON_BOOL);
	assert_int_equal(b->type, TH_JSON_BOOL);
	assert_int_equal(c->boolean, caches);
	assert_int_equal(b->boolean, branches);
}

/* -e instructions alone: auto runs callgrind with neither simulation, and counts
 * exactly what callgrind with both counts; each event that needs a simulation turns on
 * that one alone, with the same value as with both. */
static void test_auto_same_totals(void **state)
{
	static const struct {
		int line;
		const char *events;
		bool caches, branches;
	} cases[] = {
		{ __LINE__, "instructions", false, false },
		{ __LINE__, "instructions,branches", false, true },
		{ __LINE__, "instructions,L1-dcache-loads,L1-dcache-stores", true, false },
		{ __LINE__, "instructions,branch-misses,cache-misses", true, true },
	};
	(void)state;

	NEED_VALGRIND();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct th_json *a = loop_json("auto", cases[i].events, "10000");
		struct th_json *c = loop_json("callgrind", cases[i].events, "10000");
		const struct th_json *ev = th_json_get(a, "events");

		print_message("line %d: -e %s\n", cases[i].line, cases[i].events);
		assert_ran(a, "callgrind", cases[i].caches, cases[i].branches);
		assert_ran(c, "callgrind", true, true);
		assert_non_null(ev);
		for (size_t k = 0; k < ev->n; k++) {
			const char *name = json_str(ev->items[k], "name");
			assert_true(value(a, name) == value(c, name));
		}
		th_json_free(a);
		th_json_free(c);
	}
}

/* cachegrind: N and 2N iterations differ by exactly 6N instructions and N branches, the
 * same on every run; and it counts the loop as callgrind does (the engines' totals
 * differ by the same start-up instructions at N and at 2N). */
static void test_cachegrind_loop_exact(void **state)
{
	const char *ev = "instructions,branches";
	struct th_json *a, *b, *a2, *ca, *cb;
	(void)state;

	NEED_VALGRIND();
	a = loop_json("cachegrind", ev, "10000");
	b = loop_json("cachegrind", ev, "20000");
	a2 = loop_json("cachegrind", ev, "10000");
	ca = loop_json("callgrind", ev, "10000");
	cb = loop_json("callgrind", ev, "20000");
	assert_ran(a, "cachegrind", false, true);
	assert_true(value(b, "instructions") - value(a, "instructions") == 60000);
	assert_true(value(b, "branches") - value(a, "branches") == 10000);
	assert_true(value(a2, "instructions") == value(a, "instructions"));
	assert_true(value(a2, "branches") == value(a, "branches"));
	assert_true(value(a, "instructions") - value(ca, "instructions") ==
		    value(b, "instructions") - value(cb, "instructions"));
	th_json_free(a);
	th_json_free(b);
	th_json_free(a2);
	th_json_free(ca);
	th_json_free(cb);
}

/* cachegrind with the cache simulation: the same data reads and writes of the loop as
 * callgrind's by the difference of two runs (the loop's body reads and writes nothing:
 * 0 more at 2N), and a miss figure that is there. */
static void test_cachegrind_caches(void **state)
{
	const char *ev = "instructions,L1-dcache-loads,L1-dcache-load-misses";
	struct th_json *a, *b;
	(void)state;

	NEED_VALGRIND();
	a = loop_json("cachegrind", ev, "10000");
	b = loop_json("cachegrind", ev, "20000");
	assert_ran(a, "cachegrind", true, false);
	assert_true(value(b, "instructions") - value(a, "instructions") == 60000);
	assert_true(value(b, "L1-dcache-loads") == value(a, "L1-dcache-loads"));
	assert_true(value(a, "L1-dcache-load-misses") > 0);
	th_json_free(a);
	th_json_free(b);
}

/* Regions need callgrind's dumps: -e instructions under auto (callgrind without
 * simulations) has the regions, exact by the difference of two runs (10,000 more
 * iterations in outer alone: exactly 60,000 more in its inclusive and exclusive counts,
 * none in inner's), and the same total as callgrind with both simulations. (Where a
 * boundary's own instructions fall, before or after its dump, depends on the
 * simulations: outer's counts differ by a fixed few instructions between the two;
 * docs/sim.md.) */
static void test_auto_regions(void **state)
{
	static const struct {
		const char *engine, *n;
	} runs[3] = { { "auto", "10000" }, { "auto", "20000" }, { "callgrind", "10000" } };
	struct th_json *j[3];
	double v[3][3];   /* outer inclusive, outer exclusive, inner inclusive */
	(void)state;

	NEED_VALGRIND();
#if defined(__SANITIZE_ADDRESS__)
	TEST_SKIP("the regions' program links this tree's sanitized libtacho, which valgrind "
		  "cannot run");
#endif
	for (int k = 0; k < 3; k++) {
		struct th_run r;
		th_tacho(&r, "stat", "--sim", "--json", "--sim-engine", runs[k].engine, "-e",
			 "instructions", "--", th_prog("lib-sim-regions"), runs[k].n, "5000", NULL);
		if (r.status != 0)
			fail_msg("exit %d:\n%s", r.status, r.err);
		j[k] = assert_json(r.err);
		th_run_free(&r);
		const struct th_json *o = th_json_find(j[k], "regions", "name", "outer");
		const struct th_json *i = th_json_find(j[k], "regions", "name", "inner");
		assert_non_null(o);
		assert_non_null(i);
		assert_int_equal(json_num(o, "calls"), 1);
		assert_int_equal(json_num(i, "calls"), 1);
		v[k][0] = json_num(o, "events[0].inclusive");
		v[k][1] = json_num(o, "events[0].exclusive");
		v[k][2] = json_num(i, "events[0].inclusive");
	}
	assert_true(v[1][0] - v[0][0] == 60000);
	assert_true(v[1][1] - v[0][1] == 60000);
	assert_true(v[1][2] == v[0][2]);
	assert_true(value(j[0], "instructions") == value(j[2], "instructions"));
	for (int k = 0; k < 3; k++)
		th_json_free(j[k]);
}

/* A program that marks regions is refused under cachegrind, before it runs (its
 * regions would be left out without a word): exit 1, the reason named. */
static void test_cachegrind_refuses_regions(void **state)
{
	struct th_run r;
	(void)state;

	NEED_VALGRIND();
	th_tacho(&r, "stat", "--sim", "--sim-engine", "cachegrind", "-e", "instructions", "--",
		 th_prog("lib-sim-regions"), "10", "10", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "marks regions (tacho_region_begin), which cachegrind cannot "
			"count");
	assert_null(strstr(r.err, "instructions  (simulated)"));
	th_run_free(&r);
}

/* The usage errors: exit 2 and one line naming the problem, nothing run. */
static void test_engine_usage(void **state)
{
	static const struct {
		int line;
		const char *args[6];
		const char *says;
	} cases[] = {
		{ __LINE__, { "--sim", "--sim-engine", "memcheck" }, "bad value for --sim-engine" },
		{ __LINE__, { "--sim-engine", "cachegrind" }, "--sim-engine goes with --sim" },
		{ __LINE__, { "--sim", "--sim-engine", "cachegrind", "--sim-hot", "line" },
		  "no --sim-engine cachegrind" },
		{ __LINE__, { "--sim", "--sim-engine", "cachegrind", "--mca" },
		  "no --sim-engine cachegrind" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *argv[16];
		size_t n = 0;
		struct th_run r;

		argv[n++] = th_tacho_bin();
		argv[n++] = "stat";
		for (size_t k = 0; k < 6 && cases[i].args[k]; k++)
			argv[n++] = cases[i].args[k];
		argv[n++] = "--";
		argv[n++] = "true";
		argv[n] = NULL;
		th_runv(&r, NULL, (char *const *)argv);
		print_message("line %d\n", cases[i].line);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, cases[i].says);
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_same_totals),
		cmocka_unit_test(test_cachegrind_loop_exact),
		cmocka_unit_test(test_cachegrind_caches),
		cmocka_unit_test(test_auto_regions),
		cmocka_unit_test(test_cachegrind_refuses_regions),
		cmocka_unit_test(test_engine_usage),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
