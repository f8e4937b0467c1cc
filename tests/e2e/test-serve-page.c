/* test-serve-page.c - tacho serve's page read back from headless Chromium: a program
 * does exactly 1,234 writes in one burst while serve counts syscalls:sys_enter_write in
 * it; once /metrics says 1234, Chromium loads the page from the live serve, with
 * ?cursor=peak, which puts the chart's cursor on the program's highest point, and
 * dumps the DOM after the data came and takes a screenshot (page.png in the test's
 * folder). The
 * DOM says what the uPlot chart drew: its value axis' labels and their values (round
 * steps, the labels saying the values), its time axis' labels (clock times), its
 * legend's read-out under the cursor (the burst, the one point above zero, inside the
 * axis), and the table's total, exactly /metrics' 1234. The embedded uPlot files are
 * served byte for byte as third_party/uplot/ holds them. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"

#define WRITES 1234

static bool have(const char *prog)
{
	char *argv[] = { (char *)"sh", (char *)"-c", NULL, NULL };
	char cmd[256];
	struct th_run r;
	bool ok;

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null", prog);
	argv[2] = cmd;
	th_runv(&r, NULL, argv);
	ok = r.status == 0;
	th_run_free(&r);
	return ok;
}

/* The counter of pid's writes in /metrics, -1 while it has none. */
static double metrics_writes(int port, const char *pid)
{
	char *body = NULL, want[64];
	double v = -1;

	if (th_http_get(port, "/metrics", NULL, &body) == 200 && body) {
		snprintf(want, sizeof(want), "pid=\"%s\"", pid);
		for (char *l = strtok(body, "\n"); l; l = strtok(NULL, "\n")) {
			char *sp = strrchr(l, ' ');

			if (!strncmp(l, "tacho_syscalls_sys_enter_write_total{", 37) &&
			    strstr(l, want) && sp)
				v = strtod(sp + 1, NULL);
		}
	}
	free(body);
	return v;
}

/* The value of attribute name="..." on the element whose id="id", as a new string. */
static char *attr(const char *dom, const char *id, const char *name)
{
	char key[64], *p, *end, *gt;

	snprintf(key, sizeof(key), "id=\"%s\"", id);
	p = strstr(dom, key);
	if (!p)
		fail_msg("no element %s in the page:\n%s", id, dom);
	/* the attributes of that tag: from its '<' to its '>' */
	while (p > dom && *p != '<')
		p--;
	gt = strchr(p, '>');
	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(p, key);
	if (!p || !gt || p > gt)
		fail_msg("no %s on %s in the page:\n%s", name, id, dom);
	p += strlen(key);
	end = strchr(p, '"');
	return strndup(p, (size_t)(end - p));
}

/* A label of the page: 250, 2.5k, 1M. */
static double label_value(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	switch (*end) {
	case 'k': return v * 1e3;
	case 'M': return v * 1e6;
	case 'G': return v * 1e9;
	case '\0': return v;
	}
	fail_msg("label '%s' is not a number", s);
	return NAN;
}

/* The value axis: at least two values, 0 first, one step apart, the step a round one
 * (1, 2, 2.5 or 5 times a power of ten), and each label that value. Returns where the
 * next tick would be: the scale's top lies below it. */
static double check_value_axis(const char *splits, const char *labels)
{
	double v[32] = { 0 }, step = 0, mant;
	char *l = strdup(labels), *save = NULL, *tok;
	int n = 0, i = 0;

	for (const char *p = splits; *p && n < 32; n++) {
		char *end;

		v[n] = strtod(p, &end);
		if (end == p)
			fail_msg("value axis '%s': not numbers", splits);
		p = end;
	}
	if (n < 2 || v[0] != 0)
		fail_msg("value axis '%s': 0 and at least one step", splits);
	step = v[1] - v[0];
	mant = step / pow(10, floor(log10(step)));
	if (fabs(mant - 1) > 1e-9 && fabs(mant - 2) > 1e-9 && fabs(mant - 2.5) > 1e-9 &&
	    fabs(mant - 5) > 1e-9)
		fail_msg("value axis '%s': the step %g is not a round one", splits, step);
	for (i = 1; i < n; i++)
		if (fabs(v[i] - i * step) > 1e-9 * step)
			fail_msg("value axis '%s': %g is not %d steps of %g", splits, v[i], i,
				 step);
	i = 0;
	for (tok = strtok_r(l, " ", &save); tok; tok = strtok_r(NULL, " ", &save), i++)
		if (i >= n || fabs(label_value(tok) - v[i]) > 1e-9 * step)
			fail_msg("value axis: label '%s' for %g (labels '%s')", tok,
				 i < n ? v[i] : NAN, labels);
	if (i != n)
		fail_msg("value axis: %d labels for %d values", i, n);
	free(l);
	return v[n - 1] + step;
}

/* HH:MM:SS */
static bool is_clock(const char *s, size_t len)
{
	return len == 8 && s[2] == ':' && s[5] == ':' &&
	       strspn(s, "0123456789:") == 8;
}

/* The text of uPlot's legend cell for the series labelled label (the read-out). */
static char *legend_value(const char *dom, const char *label)
{
	char key[128], *p, *end;

	snprintf(key, sizeof(key), "class=\"u-label\">%s</div>", label);
	p = strstr(dom, key);
	if (!p)
		fail_msg("no legend entry '%s':\n%s", label, dom);
	p = strstr(p, "class=\"u-value\">");
	assert_non_null(p);
	p += strlen("class=\"u-value\">");
	end = strchr(p, '<');
	return strndup(p, (size_t)(end - p));
}

/* The total cell of the table's row for id. */
static char *table_total(const char *dom, const char *id)
{
	char key[64], *p, *end;

	snprintf(key, sizeof(key), "<tr data-id=\"%s\">", id);
	p = strstr(dom, key);
	if (!p)
		fail_msg("no table row for %s:\n%s", id, dom);
	p = strstr(p, "<td class=\"total\">");
	assert_non_null(p);
	p += strlen("<td class=\"total\">");
	end = strchr(p, '<');
	return strndup(p, (size_t)(end - p));
}

static void run_chromium(char **extra, const char *url, const char *tag, struct th_proc *chr)
{
	char *argv[16] = { (char *)"chromium", (char *)"--headless", (char *)"--no-sandbox",
			   (char *)"--disable-gpu", (char *)"--hide-scrollbars",
			   (char *)"--enable-logging=stderr", (char *)"--v=0",
			   (char *)"--window-size=1100,700",
			   /* the page's timers run at once in virtual time; its requests are
			    * real, and the data is there already */
			   (char *)"--virtual-time-budget=3000" };
	int n = 9;

	while (*extra)
		argv[n++] = *extra++;
	argv[n++] = (char *)url;
	argv[n] = NULL;
	th_spawn(chr, tag, argv);
	if (!th_proc_wait(chr, 120)) {
		th_proc_end(chr);
		fail_msg("chromium did not finish");
	}
	assert_int_equal(chr->status, 0);
}

static void test_page_shows_metrics(void **state)
{
	char *burst[] = { (char *)th_prog("live-helper"), (char *)"burst", (char *)"1234", NULL };
	struct th_proc helper, serve, chr;
	char pid[32], listen[32], url[96], label[64], shotarg[4200], *dom, *log, *v;
	char *extra[] = { (char *)"--dump-dom", shotarg, NULL };
	double n = -1, end, top, peak;
	int port = th_free_port();
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!have("chromium"))
		TEST_SKIP("chromium is not installed");
	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	th_spawn(&helper, "burst", burst);
	snprintf(pid, sizeof(pid), "%d", (int)helper.pid);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"serve", (char *)"--listen",
				 listen, (char *)"-d", (char *)"0.2", (char *)"-e",
				 (char *)"syscalls:sys_enter_write", (char *)"-p", pid, NULL };
		th_spawn_ready(&serve, "serve", argv, port, "/api/frame", "tacho serve");
	}
	/* a frame or two of nothing, then the burst */
	end = th_now() + 10;
	while (metrics_writes(port, pid) != 0 && th_now() < end)
		usleep(100000);
	usleep(500000);
	th_proc_kill(&helper, SIGUSR1);
	end = th_now() + 10;
	while ((n = metrics_writes(port, pid)) < WRITES && th_now() < end)
		usleep(100000);
	if (n != WRITES)
		fail_msg("/metrics has %g writes of %s, not %d", n, pid, WRITES);
	usleep(500000);   /* the frames after the burst: its point has neighbours */

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/?cursor=peak", port);
	snprintf(shotarg, sizeof(shotarg), "--screenshot=%s", th_tmp("page.png"));
	run_chromium(extra, url, "chromium", &chr);
	dom = th_slurp(chr.out);
	log = th_slurp(chr.err);
	assert_contains(dom, "<div id=\"errors\"></div>");
	if (strstr(log, ":CONSOLE"))
		fail_msg("console messages:\n%s", log);

	/* the one chart: the program's series, round values on its axis */
	snprintf(label, sizeof(label), "live-helper (%s)", pid);
	v = attr(dom, "chart-0", "data-series");
	assert_string_equal(v, label);
	free(v);
	{
		char *splits = attr(dom, "chart-0", "data-ysplits");
		char *labels = attr(dom, "chart-0", "data-yticks");

		top = check_value_axis(splits, labels);
		free(splits);
		free(labels);
	}
	/* the time axis: clock times, one apart from the next */
	{
		char *xt = attr(dom, "chart-0", "data-xticks"), *save = NULL, *prev = NULL;
		int k = 0;

		for (char *t = strtok_r(xt, " ", &save); t; t = strtok_r(NULL, " ", &save), k++) {
			if (!is_clock(t, strlen(t)))
				fail_msg("time axis label '%s' is not HH:MM:SS", t);
			if (prev && !strcmp(prev, t))
				fail_msg("time axis label '%s' twice", t);
			prev = t;
		}
		if (k < 2)
			fail_msg("the time axis has %d labels", k);
		free(xt);
	}
	/* the read-out under the cursor: the burst (every other point is 0), within the
	 * axis; and the time it happened */
	v = legend_value(dom, label);
	peak = label_value(v);
	if (!(peak > 0) || peak > top)
		fail_msg("the read-out at the peak is '%s' (the axis ends below %g)", v, top);
	free(v);
	v = legend_value(dom, "time");
	if (!is_clock(v, strlen(v)))
		fail_msg("the read-out's time is '%s'", v);
	free(v);
	/* the total, as /metrics has it */
	v = table_total(dom, pid);
	assert_string_equal(v, "1,234");
	free(v);
	free(dom);
	free(log);

	/* the screenshot: a PNG 1100 pixels wide */
	{
		char *png = NULL;
		size_t len = 0;

		assert_int_equal(th_read_data(th_tmp("page.png"), &png, &len), 0);
		assert_true(len > 24);
		assert_memory_equal(png, "\x89PNG\r\n\x1a\n", 8);
		assert_int_equal(((unsigned char)png[16] << 24 | (unsigned char)png[17] << 16 |
				  (unsigned char)png[18] << 8 | (unsigned char)png[19]), 1100);
		free(png);
	}
	th_proc_kill(&serve, SIGTERM);
	assert_true(th_proc_wait(&serve, 10));
	assert_int_equal(serve.status, 0);
	th_proc_kill(&helper, SIGTERM);
	th_proc_wait(&helper, 10);
}

/* The uPlot the page loads is the vendored one, byte for byte, from tacho itself. */
static void test_uplot_embedded(void **state)
{
	static const char *const files[][2] = {
		{ "/uplot.iife.min.js", "third_party/uplot/uPlot.iife.min.js" },
		{ "/uplot.min.css", "third_party/uplot/uPlot.min.css" },
	};
	struct th_proc serve;
	char listen[32];
	int port = th_free_port();
	char *argv[] = { (char *)th_tacho_bin(), (char *)"serve", (char *)"--listen", listen,
			 (char *)"-e", (char *)"task-clock", (char *)"--view", (char *)"machine",
			 NULL };
	(void)state;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	th_spawn_ready(&serve, "serve-files", argv, port, "/api/frame", "tacho serve");
	for (size_t i = 0; i < 2; i++) {
		char *body = NULL, *want = NULL;
		size_t len = 0;

		assert_int_equal(th_read_data(th_path(files[i][1]), &want, &len), 0);
		assert_int_equal(th_http_get(port, files[i][0], NULL, &body), 200);
		assert_non_null(body);
		assert_int_equal(strlen(body), len);
		assert_memory_equal(body, want, len);
		free(body);
		free(want);
	}
	{
		char *body = NULL;

		assert_int_equal(th_http_get(port, "/", NULL, &body), 200);
		assert_contains(body, "<script src=\"uplot.iife.min.js\"></script>");
		assert_contains(body, "href=\"uplot.min.css\"");
		assert_not_contains(body, "http://");
		assert_not_contains(body, "https://");
		free(body);
	}
	th_proc_kill(&serve, SIGTERM);
	assert_true(th_proc_wait(&serve, 10));
	assert_int_equal(serve.status, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_uplot_embedded, th_procs_teardown),
		cmocka_unit_test_teardown(test_page_shows_metrics, th_procs_teardown),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
