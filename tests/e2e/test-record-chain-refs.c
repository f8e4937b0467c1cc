/* test-record-chain-refs.c - call chains written once and referred to (record format
 * version 4): a real `tacho record -g` whose samples carry their chains in full
 * (TACHO_REC_INLINE_CHAINS=1, what version 3 wrote), written again with references,
 * reports exactly the same folded stacks and perf-script lines in a smaller file; a
 * recording made with references reports its stacks. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rec-copy.h"
#include "record/recfile.h"
#include "util/util.h"

/* The report of file as format fmt (its whole output: the test fails unless it exits 0) */
static char *report(const char *file, const char *fmt)
{
	struct th_run r;
	char *out;

	th_tacho(&r, "report", "-i", file, "--format", fmt, NULL);
	if (r.status)
		fail_msg("report %s of %s: %s", fmt, file, r.err);
	out = strdup(r.out);
	assert_non_null(out);
	th_run_free(&r);
	return out;
}

static void test_refs_report_the_same(void **state)
{
	const char *full = th_tmp("full.rec"), *refs = th_tmp("refs.rec"),
		   *direct = th_tmp("direct.rec");
	char *argv[] = { (char *)th_tacho_bin(), (char *)"record", (char *)"-q", (char *)"-g",
			 (char *)"-F", (char *)"4000", (char *)"-o", (char *)full, (char *)"--",
			 (char *)th_prog("sample-cpu"), (char *)"300", NULL };
	static const char *fmts[] = { "folded", "perf-script" };
	char *data, *a, *b;
	size_t len, refs_len;
	struct th_run r;
	(void)state;

	setenv("TACHO_REC_INLINE_CHAINS", "1", 1);
	th_run_ok(argv);
	unsetenv("TACHO_REC_INLINE_CHAINS");
	assert_int_equal(tc_read_file(full, &data, &len, 0), 0);
	th_rec_copy(data, len, refs, false, 100);
	free(data);
	assert_int_equal(tc_read_file(refs, &data, &refs_len, 0), 0);
	free(data);
	assert_true(refs_len < len);
	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		a = report(full, fmts[i]);
		b = report(refs, fmts[i]);
		/* the program's own frames, under main: chains were there to compare */
		assert_contains(a, "main");
		assert_contains(a, "hot3");
		assert_string_equal(a, b);
		free(a);
		free(b);
	}

	/* recorded with references (the default) */
	argv[7] = (char *)direct;
	th_run_ok(argv);
	a = report(direct, "folded");
	assert_contains(a, ";main;hot3");
	free(a);
	th_tacho(&r, "report", "-i", direct, NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_report_the_same),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
