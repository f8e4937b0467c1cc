/* test-report-inline.c - inlined functions as frames (report --inline, the default, and
 * --no-inline) on a cpu-clock recording with call chains of tests/progs/inline-hot (built
 * -O2: spin_sum, always inlined, holds the hot loop of work). The counts are the
 * samples', so the checks are relations that hold exactly whatever they are: with
 * -g, the samples of the row "spin_sum (inlined)" (whose caller in the tree is work) and
 * those of work's own row add up to work's row without inline frames; the folded
 * stacks without the frame "spin_sum_[i]" are the stacks of --no-inline, count for
 * count; speedscope names the frame; go tool pprof (where go is installed) reads it as
 * its own inlining. perf 6.1 prints no inline frames for this program here (its
 * addr2line pipe gives none; test-symbols-inline.c checks the chain against addr2line
 * itself). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

static char rec[4096];

/* Records inline-hot once (cpu-clock, frame-pointer chains); skips where sampling is
 * refused. */
static void record_once(void)
{
	struct th_run r;

	if (rec[0])
		return;
	snprintf(rec, sizeof(rec), "%s", th_tmp("inline.tacho"));
	th_tacho(&r, "record", "-q", "-e", "cpu-clock", "-g", "-o", rec, "--",
		 th_prog("inline-hot"), "300", NULL);
	if (r.status != 0) {
		if (strstr(r.err, "cannot sample")) {
			rec[0] = '\0';
			th_run_free(&r);
			TEST_SKIP("cpu-clock cannot be sampled here");
		}
		fail_msg("record failed (%d): %s", r.status, r.err);
	}
	th_run_free(&r);
}

/* The samples of the top-level row sym in report -g callee --json (opt: --inline or
 * --no-inline), 0 when there is none; *caller the symbol of its first child, if asked. */
static long row_samples(const char *opt, const char *sym, char *caller, size_t len)
{
	struct th_run r;
	struct th_json *j;
	const struct th_json *row;
	long n = 0;

	th_tacho(&r, "report", "-i", rec, "-g", "callee", "--json", opt, NULL);
	if (r.status != 0)
		fail_msg("report %s failed (%d): %s", opt, r.status, r.err);
	j = assert_json(r.out);
	row = th_json_find(j, "rows", "symbol", sym);
	if (row) {
		n = (long)json_num(row, "samples");
		if (caller)
			snprintf(caller, len, "%s", json_str(row, "children[0].symbol"));
	}
	th_json_free(j);
	th_run_free(&r);
	return n;
}

static void test_rows_and_tree(void **state)
{
	char caller[256] = "";
	long inl, own, whole;
	(void)state;

	record_once();
	inl = row_samples("--inline", "spin_sum (inlined)", caller, sizeof(caller));
	own = row_samples("--inline", "work", NULL, 0);
	whole = row_samples("--no-inline", "work", NULL, 0);
	/* 300 ms at 1 ms a sample: most of them are in the loop */
	assert_true(inl > 0);
	assert_string_equal(caller, "work");
	assert_int_equal(inl + own, whole);
	assert_int_equal(row_samples("--no-inline", "spin_sum (inlined)", NULL, 0), 0);
	/* --inline is the default */
	{
		struct th_run a, b;
		th_tacho(&a, "report", "-i", rec, "-g", "callee", NULL);
		th_tacho(&b, "report", "-i", rec, "-g", "callee", "--inline", NULL);
		assert_int_equal(a.status, 0);
		assert_string_equal(a.out, b.out);
		assert_non_null(strstr(a.out, "spin_sum (inlined)"));
		th_run_free(&a);
		th_run_free(&b);
	}
	/* a report of the sampled function alone keeps the symbol table's */
	{
		struct th_run a;
		th_tacho(&a, "report", "-i", rec, NULL);
		assert_int_equal(a.status, 0);
		assert_null(strstr(a.out, "spin_sum"));
		assert_non_null(strstr(a.out, "work"));
		th_run_free(&a);
	}
}

/* One folded stack and its count. */
struct stack {
	char *s;
	unsigned long long n;
};

/* Adds (s, n) to v (merging an equal stack); returns the new count of v. */
static size_t add_stack(struct stack *v, size_t nv, const char *s, unsigned long long n)
{
	for (size_t i = 0; i < nv; i++)
		if (!strcmp(v[i].s, s)) {
			v[i].n += n;
			return nv;
		}
	v[nv].s = strdup(s);
	assert_non_null(v[nv].s);
	v[nv].n = n;
	return nv + 1;
}

/* The folded output's stacks, each with ";spin_sum_[i]" cut out when cut is set;
 * *marked: how many stacks had it. */
static size_t folded(const char *opt, bool cut, struct stack *v, size_t max, size_t *marked)
{
	struct th_run r;
	size_t nv = 0;
	char *save = NULL;

	*marked = 0;
	th_tacho(&r, "report", "-i", rec, "--format", "folded", opt, NULL);
	if (r.status != 0)
		fail_msg("report --format folded %s failed (%d): %s", opt, r.status, r.err);
	for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *m;
		assert_non_null(sp);
		*sp = '\0';
		if ((m = strstr(line, ";spin_sum_[i]"))) {
			/* the inlined frame right under work (kernel frames of an
			 * interrupt in the loop may follow it) */
			assert_true(m - line >= 5 && !strncmp(m - 5, ";work", 5));
			(*marked)++;
			if (cut)
				memmove(m, m + strlen(";spin_sum_[i]"),
					strlen(m + strlen(";spin_sum_[i]")) + 1);
		}
		assert_true(nv < max);
		nv = add_stack(v, nv, line, strtoull(sp + 1, NULL, 10));
	}
	th_run_free(&r);
	return nv;
}

static void test_folded(void **state)
{
	static struct stack a[512], b[512];
	size_t na, nb, marked;
	(void)state;

	record_once();
	na = folded("--inline", true, a, 512, &marked);
	assert_true(marked > 0);
	nb = folded("--no-inline", false, b, 512, &marked);
	assert_int_equal(marked, 0);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		size_t k = 0;
		while (k < nb && strcmp(a[i].s, b[k].s))
			k++;
		if (k == nb)
			fail_msg("stack %s only with --inline", a[i].s);
		assert_int_equal(a[i].n, b[k].n);
	}
	for (size_t i = 0; i < na; i++)
		free(a[i].s);
	for (size_t i = 0; i < nb; i++)
		free(b[i].s);
}

static void test_speedscope_pprof(void **state)
{
	struct th_run r;
	const char *pb = th_tmp("inline.pb.gz");
	(void)state;

	record_once();
	th_tacho(&r, "report", "-i", rec, "--format", "speedscope", NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "\"spin_sum (inlined)\""));
	th_run_free(&r);
	th_tacho(&r, "report", "-i", rec, "--format", "speedscope", "--no-inline", NULL);
	assert_int_equal(r.status, 0);
	assert_null(strstr(r.out, "spin_sum"));
	th_run_free(&r);

	th_tacho(&r, "report", "-i", rec, "--format", "pprof", "-o", pb, NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	if (!th_go_env())
		TEST_SKIP("go is not installed: pprof's reading of the inline lines is not checked");
	{
		char *argv[] = { (char *)"go", (char *)"tool", (char *)"pprof",
				 (char *)"-symbolize=none", (char *)"-traces", (char *)pb, NULL };
		th_go_runv(&r, argv);
		if (r.status != 0)
			fail_msg("go tool pprof -traces failed (%d): %s", r.status, r.err);
		/* pprof's own mark of a line that is inlined into the next */
		assert_non_null(strstr(r.out, "spin_sum (inline)"));
		assert_null(strstr(r.out, "(inlined)"));
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_and_tree),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_speedscope_pprof),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
