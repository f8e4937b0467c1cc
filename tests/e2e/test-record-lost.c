/* test-record-lost.c - tacho record's losses told per CPU, truthfully: a tiny ring (-m 1)
 * at a high cpu-clock rate with call chains loses samples; the summary line's losses by
 * CPU (and those with no CPU) sum to its total, and report's header says the same. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The sum of the numbers of a "(cpu0 1,919, cpu1 713, 5 on no known CPU)" list (also
 * the summary's "5 with no CPU ..." form), commas of thousands dropped; *n: entries. */
static uint64_t sum_where(const char *open, int *n)
{
	uint64_t sum = 0;
	const char *p = open, *end = strchr(open, ')');

	*n = 0;
	assert_non_null(end);
	while (p < end) {
		const char *c = strstr(p, "cpu");
		uint64_t v = 0;
		bool any = false;

		if (c && c < end && (c == open + 1 || c[-1] == ' ')) {
			p = c + 3;
			while (*p >= '0' && *p <= '9')   /* the CPU number */
				p++;
		}
		while (*p == ' ')
			p++;
		for (; (*p >= '0' && *p <= '9') || *p == ','; p++) {
			if (*p == ',' && !(p[1] >= '0' && p[1] <= '9'))
				break;
			if (*p != ',') {
				v = v * 10 + (uint64_t)(*p - '0');
				any = true;
			}
		}
		if (any) {
			sum += v;
			(*n)++;
		}
		p = strchr(p, ',');
		if (!p || p > end)
			break;
		p++;
	}
	return sum;
}

static void test_lost_per_cpu(void **state)
{
	const char *file = th_tmp("lost.rec");
	char *argv[] = { (char *)th_tacho_bin(), (char *)"record", (char *)"-F", (char *)"40000",
			 (char *)"-g", (char *)"-m", (char *)"1", (char *)"-o", (char *)file,
			 (char *)"--", (char *)th_prog("sample-cpu"), (char *)"600", NULL };
	struct th_run r;
	uint64_t total = 0, in_file = 0;
	int n = 0, nf = 0;
	(void)state;

	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("record failed (%d): %s", r.status, r.err);
	const char *line = strstr(r.err, " samples, ");
	assert_non_null(line);
	total = strtoull(line + strlen(" samples, "), NULL, 10);
	assert_non_null(strstr(r.err, "rings of 1 pages per CPU"));
	if (!total) {
		th_run_free(&r);
		TEST_SKIP("a ring of one page at 40 kHz lost nothing on this run: no loss to check");
	}
	const char *open = strstr(line, " lost (");
	assert_non_null(open);
	assert_int_equal(sum_where(open + 6, &n), total);
	assert_true(n >= 1);
	th_run_free(&r);

	/* report's header: the same total, the same split */
	th_tacho(&r, "report", "-i", file, NULL);
	assert_int_equal(r.status, 0);
	const char *h = strstr(r.out, " lost (");
	assert_non_null(h);
	const char *t = h;
	while (t > r.out && t[-1] != ' ')
		t--;
	for (; t < h; t++)
		if (*t != ',')
			in_file = in_file * 10 + (uint64_t)(*t - '0');
	assert_int_equal(in_file, total);
	assert_int_equal(sum_where(h + 6, &nf), total);
	assert_int_equal(nf, n);
	th_run_free(&r);
}

/* Without losses neither says where: no empty list, no zeros. */
static void test_no_loss_no_list(void **state)
{
	const char *file = th_tmp("none.rec");
	char *argv[] = { (char *)th_tacho_bin(), (char *)"record", (char *)"-F", (char *)"100",
			 (char *)"-o", (char *)file, (char *)"--", (char *)th_prog("sample-cpu"),
			 (char *)"50", NULL };
	struct th_run r;
	(void)state;

	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, " samples, 0 lost, in "));
	/* the default ring here: at least perf's 128 pages */
	const char *rp = strstr(r.err, "rings of ");
	assert_non_null(rp);
	assert_true(strtoul(rp + 9, NULL, 10) >= 128);
	th_run_free(&r);
	th_tacho(&r, "report", "-i", file, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, ", 0 lost"));
	assert_null(strstr(r.out, " lost ("));
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_per_cpu),
		cmocka_unit_test(test_no_loss_no_list),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
