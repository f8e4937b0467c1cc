/* test-report-dims.c - tacho report's dimensions, filters and trees end to end, exact
 * where the kernel is: page-fault samples with period 1 are one per touched page, on
 * the touching line. A -a recording of two programs (3000 and 1000 pages) splits by
 * comm exactly; --comm keeps only its rows; a 4-thread program gives per-tid rows with
 * each thread's pages; --time windows cut a program's two phases apart at recorded
 * timestamps (absolute, relative, percent); the filters reach the exports and
 * annotate; -g trees in the table and JSON; bad keys and filters are one line, exit 2. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

/* tacho record -q -e page-faults -c 1 [extra...] -o out -- argv...; skips the test with
 * the proof's sentence where page-faults do not count. */
static void record_faults(struct th_run *r, const char *out, const char *extra[],
			  char *const argv[])
{
	char *args[40];
	int n = 0;

	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	args[n++] = (char *)th_tacho_bin();
	args[n++] = (char *)"record";
	args[n++] = (char *)"-q";
	args[n++] = (char *)"-e";
	args[n++] = (char *)"page-faults";
	args[n++] = (char *)"-c";
	args[n++] = (char *)"1";
	for (int i = 0; extra && extra[i]; i++)
		args[n++] = (char *)extra[i];
	args[n++] = (char *)"-o";
	args[n++] = (char *)out;
	args[n++] = (char *)"--";
	for (int i = 0; argv[i] && n < 39; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	th_runv(r, NULL, args);
}

/* Skips the test with record's refusal r->err, r freed first. */
static void skip_refused(struct th_run *r)
{
	char why[512];

	snprintf(why, sizeof(why), "%s", r->err);
	th_run_free(r);
	TEST_SKIP("%s", why);
}

/* tacho report -i file --json ARGS... (NULL-terminated), parsed; fails on exit != 0 */
static struct th_json *report_json(const char *file, ...)
{
	char *args[32];
	int n = 0;
	va_list ap;
	struct th_run r;
	struct th_json *j;

	args[n++] = (char *)th_tacho_bin();
	args[n++] = (char *)"report";
	args[n++] = (char *)"-i";
	args[n++] = (char *)file;
	args[n++] = (char *)"--json";
	va_start(ap, file);
	for (char *a; (a = va_arg(ap, char *)) && n < 31;)
		args[n++] = a;
	va_end(ap);
	args[n] = NULL;
	th_runv(&r, NULL, args);
	if (r.status != 0)
		fail_msg("report exit %d: %s", r.status, r.err);
	j = assert_json(r.out);
	th_run_free(&r);
	return j;
}

/* The samples of the rows whose line is line (and, when given, whose key is value). */
static double on_line(const struct th_json *j, int line, const char *key, const char *value)
{
	const struct th_json *rows = th_json_get(j, "rows");
	double sum = 0;

	for (size_t i = 0; rows && i < rows->n; i++) {
		const struct th_json *l = th_json_get(rows->items[i], "line");
		const struct th_json *k = key ? th_json_get(rows->items[i], key) : NULL;
		if (!l || (int)l->number != line)
			continue;
		if (key && (!k || !k->string || strcmp(k->string, value)))
			continue;
		sum += json_num(rows->items[i], "samples");
	}
	return sum;
}

static void test_system_wide_comm(void **state)
{
	int line = th_source_line("tests/progs/sample-faults.c", "FAULT-LINE");
	char heavy[512], light[512], script[2048];
	/* rings of 16 MiB a CPU: the other processes of a busy machine fault too */
	const char *extra[] = { "-a", "-m", "4096", NULL };
	char *argv[] = { (char *)"sh", (char *)"-c", script, NULL };
	struct th_json *j;
	struct th_run r;
	const struct th_json *rows, *h, *l;
	double hs, ls;
	(void)state;

	/* two names for one program: their comms tell them apart */
	snprintf(heavy, sizeof(heavy), "%s", th_tmp("dims-heavy"));
	snprintf(light, sizeof(light), "%s", th_tmp("dims-light"));
	assert_int_equal(symlink(th_prog("sample-faults"), heavy), 0);
	assert_int_equal(symlink(th_prog("sample-faults"), light), 0);
	snprintf(script, sizeof(script), "'%s' 3000 >/dev/null & '%s' 1000 >/dev/null; wait",
		 heavy, light);
	record_faults(&r, th_tmp("a.rec"), extra, argv);
	if (r.status != 0 && (strstr(r.err, "cannot sample") || strstr(r.err, "ermission"))) {
		char why[512];
		snprintf(why, sizeof(why), "%s", r.err);
		th_run_free(&r);
		TEST_SKIP("no system-wide sampling here: %s", why);
	}
	assert_int_equal(r.status, 0);
	th_run_free(&r);

	j = report_json(th_tmp("a.rec"), "--sort", "comm,line", "--comm", "dims-heavy,dims-light",
			NULL);
	if (json_num(j, "lost") > 0) {
		double lost = json_num(j, "lost");
		th_json_free(j);   /* a skip returns: nothing of the test may stay allocated */
		TEST_SKIP("the rings lost %g samples of the busy machine: the counts cannot be "
			  "exact", lost);
	}
	/* every fault of touch_pages, exactly, under each program's name */
	hs = on_line(j, line, "comm", "dims-heavy");
	ls = on_line(j, line, "comm", "dims-light");
	if (hs != 3000 || ls != 1000)
		fail_msg("the faulting line has %g samples of dims-heavy and %g of dims-light; "
			 "want 3000 and 1000", hs, ls);
	/* --comm kept these two only */
	rows = th_json_get(j, "rows");
	for (size_t i = 0; i < rows->n; i++) {
		const char *c = json_str(rows->items[i], "comm");
		if (strcmp(c, "dims-heavy") && strcmp(c, "dims-light"))
			fail_msg("--comm kept a row of %s", c);
	}
	th_json_free(j);

	/* by comm alone, of touch_pages alone: 3:1 exactly (percent of what the filter kept) */
	j = report_json(th_tmp("a.rec"), "--sort", "comm", "--comm", "dims-heavy,dims-light",
			"--symbols", "touch_pages", NULL);
	h = th_json_find(j, "rows", "comm", "dims-heavy");
	l = th_json_find(j, "rows", "comm", "dims-light");
	assert_non_null(h);
	assert_non_null(l);
	assert_int_equal(th_json_get(j, "rows")->n, 2);
	assert_int_equal(h->n, 3);   /* comm, samples, percent: no symbol */
	/* a fault on the function's own code page, if any, is one more sample */
	if (json_num(h, "samples") - 3000 > 1 || json_num(l, "samples") - 1000 > 1 ||
	    json_num(h, "samples") < 3000 || json_num(l, "samples") < 1000)
		fail_msg("touch_pages: %g and %g samples", json_num(h, "samples"),
			 json_num(l, "samples"));
	th_json_free(j);

	/* by comm, everything the two did (start-up faults too): 3:1 within 5 points */
	j = report_json(th_tmp("a.rec"), "--sort", "comm", "--comm", "dims-heavy,dims-light",
			NULL);
	hs = json_num(th_json_find(j, "rows", "comm", "dims-heavy"), "percent");
	if (hs < 70 || hs > 80)
		fail_msg("dims-heavy has %.2f %% of the two programs' faults; want 75 +- 5", hs);
	th_json_free(j);

	/* --comm NAME alone keeps only its rows, of every binary */
	j = report_json(th_tmp("a.rec"), "--sort", "comm,dso,symbol", "--comm", "dims-light", NULL);
	rows = th_json_get(j, "rows");
	assert_true(rows->n >= 1);
	for (size_t i = 0; i < rows->n; i++)
		assert_string_equal(json_str(rows->items[i], "comm"), "dims-light");
	assert_non_null(th_json_find(j, "rows", "symbol", "touch_pages"));
	th_json_free(j);
}

/* "tid T pages P" lines of sample-dims threads */
static size_t thread_pages(const char *out, int *tids, long *pages, size_t max)
{
	size_t n = 0;

	for (const char *p = out; p && *p && n < max; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (sscanf(p, "tid %d pages %ld", &tids[n], &pages[n]) == 2)
			n++;
	return n;
}

static void test_threads(void **state)
{
	int line = th_source_line("tests/progs/sample-dims.c", "TOUCH-LINE");
	char *argv[] = { (char *)th_prog("sample-dims"), (char *)"threads", (char *)"4",
			 (char *)"250", NULL };
	int tids[8];
	long pages[8];
	char key[48], tidarg[16];
	struct th_run r;
	struct th_json *j;
	size_t n;
	(void)state;

	record_faults(&r, th_tmp("t.rec"), NULL, argv);
	if (r.status != 0 && strstr(r.err, "cannot sample"))
		skip_refused(&r);
	assert_int_equal(r.status, 0);
	n = thread_pages(r.out, tids, pages, 8);
	th_run_free(&r);
	assert_int_equal(n, 4);

	/* one row per thread on the touching line, with exactly its pages */
	j = report_json(th_tmp("t.rec"), "--sort", "tid,line", NULL);
	for (size_t i = 0; i < n; i++) {
		const struct th_json *rows = th_json_get(j, "rows");
		double got = 0;
		for (size_t k = 0; k < rows->n; k++)
			if ((int)json_num(rows->items[k], "tid") == tids[i] &&
			    (int)json_num(rows->items[k], "line") == line)
				got += json_num(rows->items[k], "samples");
		if (got != (double)pages[i])
			fail_msg("thread %d: %g samples on the touching line, it touched %ld pages",
				 tids[i], got, pages[i]);
	}
	th_json_free(j);

	/* --dso by file name: the program's own samples, one row under --sort dso */
	j = report_json(th_tmp("t.rec"), "--sort", "dso", "--dso", "sample-dims", NULL);
	assert_int_equal(th_json_get(j, "rows")->n, 1);
	assert_string_equal(json_str(j, "rows[0].dso"), th_prog("sample-dims"));
	assert_null(th_json_get(j, "rows[0].symbol"));
	th_json_free(j);

	/* CSV: a column per dimension, the others empty */
	snprintf(tidarg, sizeof(tidarg), "%d", tids[2]);
	th_tacho(&r, "report", "-i", th_tmp("t.rec"), "--sort", "comm,tid", "--csv", "--tid", tidarg,
		 NULL);
	assert_int_equal(r.status, 0);
	snprintf(key, sizeof(key), ",sample-dims,,%d,,,\n", tids[2]);
	assert_true(!strncmp(r.out, "samples,self,events,percent,symbol,dso,file,line,address,"
			     "comm,pid,tid,cpu,event,depth\n", 86));
	assert_contains(r.out, key);
	assert_int_equal(th_count_lines(r.out), 2);
	th_run_free(&r);

	/* --tid keeps one thread, in every view */
	j = report_json(th_tmp("t.rec"), "--sort", "tid", "--tid", tidarg, NULL);
	assert_int_equal(th_json_get(j, "rows")->n, 1);
	assert_json_int(j, "rows[0].tid", tids[2]);
	th_json_free(j);
	j = report_json(th_tmp("t.rec"), "--annotate", "touch_pages", "--tid", tidarg, NULL);
	if (on_line(j, line, NULL, NULL) != (double)pages[2])
		fail_msg("annotate --tid %s: %g samples on the line; want %ld", tidarg,
			 on_line(j, line, NULL, NULL), pages[2]);
	th_json_free(j);
	th_tacho(&r, "report", "-i", th_tmp("t.rec"), "--format", "perf-script", "--tid", tidarg,
		 NULL);
	assert_int_equal(r.status, 0);
	snprintf(key, sizeof(key), "/%d ", tids[2]);
	{
		size_t headers = 0;
		for (const char *p = r.out; *p; p = strchr(p, '\n') + 1) {
			if (*p != '\t' && *p != '\n') {
				headers++;
				if (!strstr(p, key) || strstr(p, key) > strchr(p, '\n'))
					fail_msg("perf-script --tid %s printed %.*s", tidarg,
						 (int)strcspn(p, "\n"), p);
			}
			if (!strchr(p, '\n'))
				break;
		}
		assert_true(headers >= (size_t)pages[2]);
	}
	th_run_free(&r);
	/* folded, touch_pages alone: each stack ends in it, the counts add up to the pages
	 * (and a fault on its code page, if any, at most one more) */
	th_tacho(&r, "report", "-i", th_tmp("t.rec"), "--format", "folded", "--symbols",
		 "touch_pages", NULL);
	assert_int_equal(r.status, 0);
	{
		long total = 0, all = 0;
		for (const char *p = r.out; *p; p = strchr(p, '\n') + 1) {
			const char *sp = strrchr(p, ' ');
			assert_true(strstr(p, ";touch_pages ") == sp - 12);
			total += atol(sp + 1);
			if (!strchr(p, '\n') || !strchr(p, '\n')[1])
				break;
		}
		for (size_t i = 0; i < n; i++)
			all += pages[i];
		if (total < all || total > all + 1)
			fail_msg("folded --symbols touch_pages: %ld; the threads touched %ld", total,
				 all);
	}
	th_run_free(&r);
}

/* The n-th (0-based) sample's timestamp in a perf-script export, as printed
 * ("123.456789"): the word before the first ": " of its header line. */
static void nth_time(const char *script, size_t nth, char *out, size_t size)
{
	size_t k = 0;

	for (const char *p = script; p && *p;) {
		const char *eol = strchr(p, '\n');
		if (*p != '\t' && *p != '\n' && k++ == nth) {
			const char *colon = strstr(p, ": "), *sp = colon;
			assert_non_null(colon);
			while (sp > p && sp[-1] != ' ')
				sp--;
			snprintf(out, size, "%.*s", (int)(colon - sp), sp);
			return;
		}
		p = eol ? eol + 1 : NULL;
	}
	fail_msg("no sample %zu in the export", nth);
}

static void test_time_windows(void **state)
{
	int line = th_source_line("tests/progs/sample-dims.c", "TOUCH-LINE");
	char *argv[] = { (char *)th_prog("sample-dims"), (char *)"phases", (char *)"200",
			 (char *)"300", NULL };
	char end1[64], start2[64], win[160];
	struct th_run r;
	struct th_json *j;
	(void)state;

	record_faults(&r, th_tmp("p.rec"), NULL, argv);
	if (r.status != 0 && strstr(r.err, "cannot sample"))
		skip_refused(&r);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "report", "-i", th_tmp("p.rec"), "--format", "perf-script", "--symbols",
		 "touch_pages", NULL);
	assert_int_equal(r.status, 0);
	/* the last sample of the first phase, the first of the second (300 ms apart) */
	nth_time(r.out, 199, end1, sizeof(end1));
	nth_time(r.out, 200, start2, sizeof(start2));
	th_run_free(&r);

	snprintf(win, sizeof(win), ",%s", end1);
	j = report_json(th_tmp("p.rec"), "--sort", "line", "--time", win, NULL);
	if (on_line(j, line, NULL, NULL) != 200)
		fail_msg("--time %s: %g samples on the touching line; want 200", win,
			 on_line(j, line, NULL, NULL));
	th_json_free(j);
	snprintf(win, sizeof(win), "%s,", start2);
	j = report_json(th_tmp("p.rec"), "--sort", "line", "--time", win, NULL);
	if (on_line(j, line, NULL, NULL) != 300)
		fail_msg("--time %s: %g samples on the touching line; want 300", win,
			 on_line(j, line, NULL, NULL));
	th_json_free(j);
	snprintf(win, sizeof(win), "%s,%s", end1, start2);   /* one of each */
	j = report_json(th_tmp("p.rec"), "--sort", "line", "--time", win, NULL);
	assert_true(on_line(j, line, NULL, NULL) == 2);
	th_json_free(j);
	/* percent halves of the span: the sleep is in the middle */
	j = report_json(th_tmp("p.rec"), "--sort", "line", "--time", "0%-50%", NULL);
	assert_true(on_line(j, line, NULL, NULL) == 200);
	th_json_free(j);
	j = report_json(th_tmp("p.rec"), "--sort", "line", "--time", "50%/2", NULL);
	assert_true(on_line(j, line, NULL, NULL) == 300);
	th_json_free(j);
	/* relative: from 150 ms after the first sample */
	j = report_json(th_tmp("p.rec"), "--sort", "line", "--time", "+0.15,", NULL);
	assert_true(on_line(j, line, NULL, NULL) == 300);
	th_json_free(j);
}

static void test_trees(void **state)
{
	char *argv[] = { (char *)th_tacho_bin(), (char *)"record", (char *)"-q", (char *)"-g",
			 (char *)"-o", (char *)th_tmp("g.rec"), (char *)"--",
			 (char *)th_prog("sample-cpu"), (char *)"200", NULL };
	struct th_run r;
	struct th_json *j;
	const struct th_json *hot;
	(void)state;

	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	th_run_free(&r);

	/* callee: hot3's caller is main, nested in the JSON */
	j = report_json(th_tmp("g.rec"), "-g", "callee", NULL);
	hot = th_json_find(j, "rows", "symbol", "hot3");
	assert_non_null(hot);
	assert_json_str(hot, "children[0].symbol", "main");
	assert_true(json_num(hot, "children[0].samples") >= 0.95 * json_num(hot, "samples"));
	th_json_free(j);
	/* caller with children: main's callees are hot3 and hot1 */
	j = report_json(th_tmp("g.rec"), "-g", "caller", "--children", NULL);
	hot = th_json_find(j, "rows", "symbol", "main");
	assert_non_null(hot);
	assert_non_null(th_json_find(hot, "children", "symbol", "hot3"));
	assert_non_null(th_json_find(hot, "children", "symbol", "hot1"));
	th_json_free(j);
	/* the table: the nodes indented in the last column */
	th_tacho(&r, "report", "-i", th_tmp("g.rec"), "-g", "callee", "--symbols", "hot3", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "  hot3\n");
	assert_contains(r.out, "    main\n");
	th_run_free(&r);
}

static void test_bad_usage(void **state)
{
	static const char *const cases[][4] = {
		{ "--sort", "comn", "did you mean 'comm'?", NULL },
		{ "--sort", "symbol,,dso", "an empty sort key", NULL },
		{ "-g", "sideways", "-g takes caller or callee", NULL },
		{ "--pid", "abc", "'abc' in the pid list is not a pid", NULL },
		{ "--time", "5,4", "ends before it starts", NULL },
		{ "--time", "10%/0", "--time takes A%-B% or P%/N", NULL },
		{ "--percent-limit", "200", "--percent-limit takes a percentage", NULL },
	};
	struct th_run r;
	char *argv[] = { (char *)th_prog("sample-faults"), (char *)"10", NULL };
	(void)state;

	record_faults(&r, th_tmp("u.rec"), NULL, argv);
	if (r.status != 0 && strstr(r.err, "cannot sample"))
		skip_refused(&r);
	th_run_free(&r);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		th_tacho(&r, "report", "-i", th_tmp("u.rec"), cases[i][0], cases[i][1], NULL);
		if (r.status != 2 || !strstr(r.err, cases[i][2]) ||
		    strncmp(r.err, "tacho report: ", 14) || !strstr(r.err, "\nusage: tacho report"))
			fail_msg("%s %s: exit %d, %s", cases[i][0], cases[i][1], r.status, r.err);
		/* the sentence is one line, then the usage */
		assert_true(strchr(r.err, '\n') < strstr(r.err, "usage:"));
		assert_int_equal(strlen(r.out), 0);
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_usage),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_time_windows),
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_system_wide_comm),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
