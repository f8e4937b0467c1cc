/* test-report-habits.c - perf's spellings of tacho report: --stdio is the default text,
 * --tui and --gtk are refused in one line; -F/--fields writes perf script -F's line per
 * sample with the fields asked. A recording of page faults (one sample per fresh page,
 * period 1, each with the faulting address) is the data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* tacho record -q -e page-faults -c 1 -o file -- sample-faults PAGES; false when this
 * machine cannot record them */
static bool record_faults(const char *file, const char *pages)
{
	struct th_run r;
	bool ok;
	char *argv[] = { (char *)th_tacho_bin(), (char *)"record", (char *)"-q", (char *)"-e",
			 (char *)"page-faults", (char *)"-c", (char *)"1", (char *)"-o",
			 (char *)file, (char *)"--", (char *)th_prog("sample-faults"),
			 (char *)pages, NULL };

	th_runv(&r, NULL, argv);
	ok = r.status == 0;
	th_run_free(&r);
	return ok;
}

/* --stdio writes what the plain report writes, byte for byte; --tui and --gtk are one
 * line each, exit 2, nothing on stdout. */
static void test_stdio_tui_gtk(void **state)
{
	struct th_run plain, stdio, r;
	const char *rec = th_tmp("f.rec");
	(void)state;

	if (!record_faults(rec, "300"))
		TEST_SKIP("cannot record page faults here");
	th_tacho(&plain, "report", "-i", rec, NULL);
	assert_int_equal(plain.status, 0);
	assert_contains(plain.out, "touch_pages");
	th_tacho(&stdio, "report", "-i", rec, "--stdio", NULL);
	assert_int_equal(stdio.status, 0);
	assert_string_equal(stdio.out, plain.out);
	th_run_free(&stdio);
	th_run_free(&plain);

	th_tacho(&r, "report", "-i", rec, "--tui", NULL);
	assert_int_equal(r.status, 2);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "tacho: report --tui: tacho report has no interactive "
			    "browser; it writes text (--stdio, the default), --json, --csv, or a "
			    "clickable flame graph with --format svg\n");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", rec, "--gtk", NULL);
	assert_int_equal(r.status, 2);
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "tacho: report --gtk: tacho report has no interactive browser");
	th_run_free(&r);
}

/* -F: exactly one line per sample of touch_pages (300 pages), each with the fields in
 * the order asked; the data addresses one page apart; bad fields are one line, exit
 * 2. */
static void test_fields(void **state)
{
	struct th_run r;
	const char *rec = th_tmp("g.rec");
	unsigned long prev = 0, page = (unsigned long)sysconf(_SC_PAGESIZE), lines = 0;
	char *save = NULL;
	(void)state;

	if (!record_faults(rec, "300"))
		TEST_SKIP("cannot record page faults here");
	th_tacho(&r, "report", "-i", rec, "-F", "sym,period,comm,event", "--symbols",
		 "touch_pages", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(th_count_lines(r.out), 300);
	for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		assert_string_equal(l, "touch_pages 1 sample-faults page-faults");
	th_run_free(&r);

	/* the long spelling; pid equals tid (one thread); addresses page apart in time
	 * order, as touch_pages writes them */
	th_tacho(&r, "report", "-i", rec, "--fields", "pid,tid,addr,symoff", "--symbols",
		 "touch_pages", NULL);
	assert_int_equal(r.status, 0);
	save = NULL;
	for (char *l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned pid, tid;
		unsigned long addr;
		char sym[64];

		if (sscanf(l, "%u %u %lx %63s", &pid, &tid, &addr, sym) != 4)
			fail_msg("line '%s' is not pid tid addr symoff", l);
		assert_int_equal(pid, tid);
		assert_true(!strncmp(sym, "touch_pages+0x", 14));
		if (lines++ && addr - prev != page)
			fail_msg("sample %lu: address %#lx, %#lx after the previous one", lines,
				 addr, addr - prev);
		prev = addr;
	}
	assert_int_equal(lines, 300);
	th_run_free(&r);

	th_tacho(&r, "report", "-i", rec, "-F", "comm,bogus", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho report: -F: 'bogus' is no field (comm, pid, tid, time,");
	assert_string_equal(r.out, "");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", rec, "-F", "comm,", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "-F: '' is no field");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", rec, "-F", "comm", "--json", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stdio_tui_gtk),
		cmocka_unit_test(test_fields),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
