/* test-sim-cachegrind.c - the reader of callgrind's files on cachegrind's (docs/sim.md,
 * "The engines"): its header ("desc:" first, "cmd:", "events:"), names never
 * compressed ("fn=(below main)" is a name, not an id), "summary:" checked as
 * callgrind's "totals:", and the same errors. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tacho/sim.h"

/* As cachegrind 3.19 writes it with --cache-sim=no --branch-sim=yes. */
static const char cg[] =
	"desc: I1 cache:         32768 B, 64 B, 8-way associative\n"
	"desc: D1 cache:         49152 B, 64 B, 12-way associative\n"
	"desc: LL cache:         536870912 B, 64 B, 2-way associative\n"
	"cmd: ./sim-kernels loop 10\n"
	"events: Ir Bc Bcm Bi Bim\n"
	"fl=./csu/../sysdeps/nptl/libc_start_call_main.h\n"
	"fn=(below main)\n"
	"29 7 1 0 0 0\n"
	"44 2\n"
	"fl=sim-kernels.c\n"
	"fn=loop\n"
	"36 60 10 1 0 0\n"
	"fn=main\n"
	"50 3 0 0 1 1\n"
	"summary: 72 11 1 1 1\n";

static void test_cachegrind_file(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_sim_result *r = NULL;
	struct tacho_sim_row *rows = NULL;
	struct perf_event_attr insn = { .size = sizeof(insn), .type = PERF_TYPE_HARDWARE,
					.config = PERF_COUNT_HW_INSTRUCTIONS };
	uint64_t v = 0;
	size_t n = 0;
	(void)state;

	assert_int_equal(tacho_sim_result_parse(cg, strlen(cg), "cg", &r, &d), 0);
	assert_int_equal(tacho_sim_result_total(r, "Ir", &v), 0);
	assert_int_equal(v, 72);
	assert_int_equal(tacho_sim_result_total(r, "Bim", &v), 0);
	assert_int_equal(v, 1);
	/* no cache simulation: no data reads in the result */
	assert_int_equal(tacho_sim_result_total(r, "Dr", &v), -TACHO_ENOVALUE);
	/* a parsed result ran nothing */
	assert_null(tacho_sim_result_tool(r));
	assert_int_equal(tacho_sim_result_sims(r), 0);
	assert_int_equal(tacho_sim_result_rows(r, TACHO_SIM_VIEW_FUNCTION, &insn, &rows, &n,
					       sizeof(*rows), NULL), 0);
	assert_int_equal(n, 3);
	assert_string_equal(rows[0].function, "loop");
	assert_int_equal(rows[0].value, 60);
	assert_string_equal(rows[1].function, "(below main)");
	assert_int_equal(rows[1].value, 9);
	free(rows);
	tacho_sim_result_free(r);
}

/* A summary that is not the sum of the cost lines, and one before "events:", are
 * refused with their line. */
static void test_cachegrind_bad(void **state)
{
	static const struct {
		int line;
		const char *text;
		unsigned at;
		const char *says;
	} cases[] = {
		{ __LINE__, "desc: x\nevents: Ir\nfn=f\n1 5\nsummary: 6\n", 0, "not the sum" },
		{ __LINE__, "desc: x\nsummary: 6\n", 2, "\"summary:\" before \"events:\"" },
		{ __LINE__, "desc: x\nevents: Ir\nfn=f\n1 x\n", 4, "not a whole number" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		struct tacho_sim_result *r = NULL;

		print_message("line %d\n", cases[i].line);
		assert_int_equal(tacho_sim_result_parse(cases[i].text, strlen(cases[i].text), "cg",
							&r, &d), -TACHO_EPARSE);
		assert_null(r);
		if (cases[i].at)
			assert_int_equal(d.line, cases[i].at);
		assert_non_null(strstr(d.message, cases[i].says));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cachegrind_file),
		cmocka_unit_test(test_cachegrind_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
