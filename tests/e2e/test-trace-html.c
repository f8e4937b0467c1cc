/* test-trace-html.c - tacho trace report --format html in headless Chromium: the page
 * of a real trace (three threads of trace-marks) draws, logs nothing, and says on its
 * <body> how many items, threads and rows it drew, which must be the trace's own
 * counts; #zoom=START,END narrows the view to exactly that range, and the items the page
 * counts in view are those the library finds there; a screenshot of it is taken. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "timeline/timeline.h"
#include "tacho/timeline.h"

#define CHROMIUM "/usr/bin/chromium"

static struct tacho_timeline *load(const char *path)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_timeline *t = NULL;

	if (tacho_timeline_load(path, &t, &d))
		fail_msg("cannot load %s: %s", path, d.message);
	return t;
}

/* The number in attribute name="..." of the <body> that Chromium dumped. */
static unsigned long long body_attr(const char *dom, const char *name)
{
	char key[64];
	const char *body = strstr(dom, "<body"), *p;

	assert_non_null(body);
	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(body, key);
	if (!p || p > strchr(body, '>'))
		fail_msg("<body> has no %s: %.300s", name, body);
	return strtoull(p + strlen(key), NULL, 10);
}

/* The page's DOM after its script ran, at url (with its fragment). */
static void dump_dom(struct th_run *r, const char *url)
{
	char bin[] = CHROMIUM, a1[] = "--headless", a2[] = "--no-sandbox", a3[] = "--disable-gpu",
	     a4[] = "--enable-logging=stderr", a5[] = "--dump-dom", u[4200];

	snprintf(u, sizeof(u), "%s", url);
	char *argv[] = { bin, a1, a2, a3, a4, a5, u, NULL };
	th_runv(r, NULL, argv);
	assert_int_equal(r->status, 0);
	/* a script error or warning shows as a CONSOLE line */
	assert_not_contains(r->err, "CONSOLE");
}

/* What the page must count: distinct threads (named by the trace, or only seen in its
 * items) and rows (thread and channel pairs). */
static void trace_counts(const struct tacho_timeline *t, size_t *threads, size_t *rows)
{
	uint32_t *tids = calloc(t->n + t->nthreads + 1, sizeof(*tids));
	uint64_t *pairs = calloc(t->n + 1, sizeof(*pairs));
	size_t nt = 0, np = 0;

	assert_non_null(tids);
	assert_non_null(pairs);
	for (size_t i = 0; i < t->nthreads + t->n; i++) {
		uint32_t tid = i < t->nthreads ? t->threads[i].tid : t->items[i - t->nthreads].tid;
		size_t k;
		for (k = 0; k < nt && tids[k] != tid; k++)
			;
		if (k == nt)
			tids[nt++] = tid;
	}
	for (size_t i = 0; i < t->n; i++) {
		uint64_t key = (uint64_t)t->items[i].tid << 32 | t->items[i].chan;
		size_t k;
		for (k = 0; k < np && pairs[k] != key; k++)
			;
		if (k == np)
			pairs[np++] = key;
	}
	*threads = nt;
	*rows = np;
	free(tids);
	free(pairs);
}

static void test_html_in_chromium(void **state)
{
	struct tacho_timeline *t;
	struct th_run r;
	char url[4200];
	size_t threads, rows, in_view = 0;
	struct stat sb;

	if (access(CHROMIUM, X_OK))
		TEST_SKIP("chromium is not installed (scripts/deps.sh test)");
	th_tacho(&r, "trace", "-q", "-o", th_tmp("h.trace"), "--", th_prog("trace-marks"),
		 "threads", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("h.trace"), "--format", "html", "-o",
		 th_tmp("h.html"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	t = load(th_tmp("h.trace"));
	/* 3 x (1,000 a + 500 b + a span's two edges) */
	assert_int_equal(tacho_timeline_items(t), 4506);
	trace_counts(t, &threads, &rows);
	assert_true(threads >= 4);   /* the main thread and its three workers */
	assert_int_equal(rows, 9);   /* a, b and work on each worker */

	/* the whole trace */
	snprintf(url, sizeof(url), "file://%s", th_tmp("h.html"));
	dump_dom(&r, url);
	assert_int_equal(body_attr(r.out, "data-items"), 4506);
	assert_int_equal(body_attr(r.out, "data-threads"), threads);
	assert_int_equal(body_attr(r.out, "data-rows"), rows);
	assert_int_equal(body_attr(r.out, "data-view-start"), 0);
	uint64_t span = t->items[t->n - 1].time - t->items[0].time;
	assert_int_equal(body_attr(r.out, "data-view-end"), span);
	assert_int_equal(body_attr(r.out, "data-visible"), 4506);
	th_run_free(&r);

	/* zoomed to the second quarter: that range, and exactly the items in it */
	uint64_t a = span / 4, b = span / 2;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t at = t->items[i].time - t->items[0].time;
		in_view += at >= a && at <= b;
	}
	assert_true(in_view < 4506);
	snprintf(url, sizeof(url), "file://%s#zoom=%llu,%llu", th_tmp("h.html"),
		 (unsigned long long)a, (unsigned long long)b);
	dump_dom(&r, url);
	assert_int_equal(body_attr(r.out, "data-view-start"), a);
	assert_int_equal(body_attr(r.out, "data-view-end"), b);
	assert_int_equal(body_attr(r.out, "data-visible"), in_view);
	th_run_free(&r);

	/* a picture of it, for a person to look at when the test fails */
	char bin[] = CHROMIUM, a1[] = "--headless", a2[] = "--no-sandbox", a3[] = "--disable-gpu",
	     a4[] = "--hide-scrollbars", a5[] = "--window-size=1300,320", shot[4200];
	snprintf(shot, sizeof(shot), "--screenshot=%s", th_tmp("h.png"));
	char *argv[] = { bin, a1, a2, a3, a4, a5, shot, url, NULL };
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	assert_int_equal(stat(th_tmp("h.png"), &sb), 0);
	assert_true(sb.st_size > 1000);
	FILE *f = fopen(th_tmp("h.png"), "rb");
	unsigned char sig[8];
	assert_non_null(f);
	assert_int_equal(fread(sig, 1, 8, f), 8);
	fclose(f);
	assert_memory_equal(sig, "\x89PNG\r\n\x1a\n", 8);
	tacho_timeline_free(t);
}

/* The page holds the data in a <script> block: no string of the trace may end it. A
 * program's channel name is any string: one that says "</script>" stays text. */
static void test_html_escapes(void **state)
{
	struct th_run r;
	char *page;
	size_t len;
	const char *p;
	int closes = 0;

	th_tacho(&r, "trace", "-q", "-o", th_tmp("e.trace"), "--", th_prog("trace-marks"),
		 "evilname", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("e.trace"), "--format", "html", "-o",
		 th_tmp("e.html"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	assert_int_equal(th_read_data(th_tmp("e.html"), &page, &len), 0);
	for (p = page; (p = strstr(p, "</script")); p++)
		closes++;
	assert_int_equal(closes, 2);   /* the data's and the script's own */
	assert_contains(page, "\\u003c/script>");
	free(page);
	if (access(CHROMIUM, X_OK))
		TEST_SKIP("chromium is not installed (scripts/deps.sh test)");
	char url[4200];
	snprintf(url, sizeof(url), "file://%s", th_tmp("e.html"));
	dump_dom(&r, url);
	assert_int_equal(body_attr(r.out, "data-items"), 3);
	assert_int_equal(body_attr(r.out, "data-rows"), 1);
	th_run_free(&r);
}

static void test_html_bad_usage(void **state)
{
	struct th_run r;

	th_tacho(&r, "trace", "report", "-i", th_tmp("none.trace"), "--format", "htm", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown format 'htm'");
	assert_contains(r.err, "svg or html");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html_in_chromium),
		cmocka_unit_test(test_html_escapes),
		cmocka_unit_test(test_html_bad_usage),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
