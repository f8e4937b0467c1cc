/* test-record-chain-refs.c - call chains written once and referred to (record format
 * version 4) and in a tree of nodes (version 5): a real `tacho record -g` whose samples
 * carry their chains in full (TACHO_REC_INLINE_CHAINS=1, what version 3 wrote), written
 * again with references and as a tree, reports exactly the same folded stacks and
 * perf-script lines, the same number of samples, in smaller files; a recording made
 * as a tree (the default) reports its stacks. The same for `--call-graph dwarf`, whose
 * user stacks version 5 compresses with zstd (ZSTACK records): the copy of a version 4
 * recording reports byte for byte the same, in a file a tenth the size; a report
 * without libzstd (TACHO_NO_ZSTD=1, the seam) refuses it in one line, and a recording
 * without it writes the stacks raw and says so once. */
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

/* How many records of type type the record file holds (walked by their headers), and
 * their bytes in *bytes when bytes is not NULL */
static size_t count_type_bytes(const char *file, uint16_t type, size_t *bytes)
{
	char *data;
	size_t len, n = 0, b = 0;

	assert_int_equal(tc_read_file(file, &data, &len, 0), 0);
	for (size_t off = TC_REC_FILE_HDR; off + TC_REC_HDR <= len;) {
		uint32_t size;
		uint16_t t;

		memcpy(&size, data + off + 4, 4);
		memcpy(&t, data + off + 8, 2);
		assert_true(size >= TC_REC_HDR);
		n += t == type;
		b += t == type ? size : 0;
		off += size;
	}
	free(data);
	if (bytes)
		*bytes = b;
	return n;
}

static size_t count_type(const char *file, uint16_t type)
{
	return count_type_bytes(file, type, NULL);
}

static void test_dwarf_stacks(void **state)
{
	const char *v4 = th_tmp("dw4.rec"), *v5 = th_tmp("dw5.rec"), *raw = th_tmp("dwraw.rec");
	char *argv[] = { (char *)th_tacho_bin(), (char *)"record", (char *)"-q",
			 (char *)"--call-graph", (char *)"dwarf", (char *)"-F", (char *)"1000",
			 (char *)"-o", (char *)v4, (char *)"--", (char *)th_prog("sample-cpu"),
			 (char *)"200", NULL };
	static const char *fmts[] = { "folded", "perf-script" };
	char *data, *a, *b;
	size_t len, len5, stacks, raw_bytes, z_bytes;
	struct th_run r;
	(void)state;

	setenv("TACHO_REC_FORMAT", "4", 1);
	th_run_ok(argv);
	unsetenv("TACHO_REC_FORMAT");
	assert_int_equal(tc_read_file(v4, &data, &len, 0), 0);
	th_rec_copy(data, len, v5, 5, 100);
	free(data);
	stacks = count_type_bytes(v4, TC_REC_USTACK, &raw_bytes);
	assert_true(stacks > 20);
	assert_int_equal(count_type_bytes(v5, TC_REC_ZSTACK, &z_bytes), stacks);
	assert_int_equal(count_type(v5, TC_REC_USTACK), 0);
	assert_int_equal(tc_read_file(v5, &data, &len5, 0), 0);
	free(data);
	/* the stacks themselves, a tenth of their raw bytes at most (the whole file's
	 * ratio also holds the side-band, which weighs more when a loaded machine gives
	 * fewer samples: 10x of the file failed once), and the file smaller */
	print_message("dwarf: %zu stacks, %zu bytes raw, %zu compressed; file %zu -> %zu\n",
		      stacks, raw_bytes, z_bytes, len, len5);
	assert_true(z_bytes * 10 < raw_bytes);
	assert_true(len5 < len);
	for (size_t i = 0; i < ARRAY_SIZE(fmts); i++) {
		a = report(v4, fmts[i]);
		b = report(v5, fmts[i]);
		assert_contains(a, "main");
		assert_string_equal(a, b);
		free(a);
		free(b);
	}

	/* no libzstd to read it: one line, exit 1 */
	setenv("TACHO_NO_ZSTD", "1", 1);
	th_tacho(&r, "report", "-i", v5, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "is compressed and needs libzstd: libzstd is not used "
			"(TACHO_NO_ZSTD=1)");
	assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
	th_run_free(&r);
	/* none to write it: the stacks raw, said once */
	argv[8] = (char *)raw;
	th_runv(&r, NULL, argv);
	unsetenv("TACHO_NO_ZSTD");
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "the user stacks are written uncompressed");
	assert_ptr_equal(strstr(strstr(r.err, "uncompressed") + 1, "uncompressed"), NULL);
	th_run_free(&r);
	assert_int_equal(count_type(raw, TC_REC_ZSTACK), 0);
	assert_true(count_type(raw, TC_REC_USTACK) > 20);
	a = report(raw, "folded");
	assert_contains(a, "main");
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_report_the_same),
		cmocka_unit_test(test_dwarf_stacks),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
