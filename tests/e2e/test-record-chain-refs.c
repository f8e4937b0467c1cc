/* test-record-chain-refs.c - call chains written once and referred to (record format
 * version 4) and in a tree of nodes (version 5): a real `tacho record -g` whose samples
 * carry their chains in full (TACHO_REC_INLINE_CHAINS=1, what version 3 wrote), written
 * again with references and as a tree, reports exactly the same folded stacks and
 * perf-script lines, the same number of samples, in smaller files; a recording made
 * as a tree (the default) reports its stacks. */
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

/* The sample count a recording's FINISH record holds */
static size_t finish_samples(const char *file)
{
	struct tc_record_reader rd;
	struct tc_rec r;
	char *data;
	size_t len, n = 0;

	assert_int_equal(tc_read_file(file, &data, &len, 0), 0);
	assert_int_equal(tc_record_reader_init(&rd, data, len, file, NULL), 0);
	while (tc_record_reader_next(&rd, &r, file, NULL) == 1)
		if (r.type == TC_REC_FINISH)
			n = r.u.finish.samples;
	tc_record_reader_exit(&rd);
	free(data);
	assert_true(n > 0);
	return n;
}

static void test_refs_report_the_same(void **state)
{
	const char *full = th_tmp("full.rec"), *refs = th_tmp("refs.rec"),
		   *tree = th_tmp("tree.rec"), *direct = th_tmp("direct.rec");
	char *argv[] = { (char *)th_tacho_bin(), (char *)"record", (char *)"-q", (char *)"-g",
			 (char *)"-F", (char *)"4000", (char *)"-o", (char *)full, (char *)"--",
			 (char *)th_prog("sample-cpu"), (char *)"300", NULL };
	static const char *fmts[] = { "folded", "perf-script" };
	char *data, *a, *b, *c;
	size_t len, refs_len, tree_len, lines = 0;
	struct th_run r;
	(void)state;

	setenv("TACHO_REC_INLINE_CHAINS", "1", 1);
	th_run_ok(argv);
	unsetenv("TACHO_REC_INLINE_CHAINS");
	assert_int_equal(tc_read_file(full, &data, &len, 0), 0);
	th_rec_copy(data, len, refs, 4, 100);
	th_rec_copy(data, len, tree, 5, 100);
	free(data);
	assert_int_equal(tc_read_file(refs, &data, &refs_len, 0), 0);
	free(data);
	assert_int_equal(tc_read_file(tree, &data, &tree_len, 0), 0);
	free(data);
	assert_true(refs_len < len);
	assert_true(tree_len < refs_len);
	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		a = report(full, fmts[i]);
		b = report(refs, fmts[i]);
		c = report(tree, fmts[i]);
		/* the program's own frames, under main: chains were there to compare */
		assert_contains(a, "main");
		assert_contains(a, "hot3");
		assert_string_equal(a, b);
		assert_string_equal(a, c);
		/* perf-script: a line that starts in column 0 for each sample, as many as
		 * the file holds (the FINISH record's count) */
		for (const char *q = c; i == 1 && *q; q = strchr(q, '\n') ? strchr(q, '\n') + 1 : "")
			lines += *q != '\t' && *q != ' ' && *q != '\n';
		free(a);
		free(b);
		free(c);
	}

	assert_int_equal(lines, finish_samples(tree));

	/* recorded as a tree (the default) */
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
