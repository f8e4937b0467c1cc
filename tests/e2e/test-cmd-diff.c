/* test-cmd-diff.c - `tacho diff` end to end on real stat documents: two `stat -r 10
 * --json` of a helper making exactly K more write(2) calls compare to +K exactly (a
 * tracepoint counts every call, so every run agrees); a program against itself is no
 * change; --fail-above exits 1 exactly when a limit is exceeded; every format; bad and
 * mismatched inputs are one line and exit 2; two recordings whose hot function moved,
 * as rows and as a differential flame graph. Only exact events are compared here: the
 * verdict on a noisy one between two sessions would depend on the machine's load
 * (tests/unit/test-diff.c holds the intervals to known samples instead). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

#define EVENTS "syscalls:sys_enter_write,syscalls:sys_enter_openat"

static bool have_docs;

/* stat -r 10 of the helper making n writes, its JSON into the test folder as name */
static void stat_doc(const char *name, const char *n)
{
	struct th_run r;
	char out[4096];

	snprintf(out, sizeof(out), "%s", th_tmp(name));
	th_tacho(&r, "stat", "-r", "10", "--json", "-o", out, "-e", EVENTS, "--",
		 th_prog("stat-helper"), "writes", n, NULL);
	if (r.status != 0)
		fail_msg("stat exited %d: %s", r.status, r.err);
	th_run_free(&r);
}

static int setup(void **state)
{
	const char *why;

	if (th_tmpdir_setup(state))
		return -1;
	/* the documents are made once, for every test of the file */
	have_docs = th_source_exact(TACHO_SOURCE_TRACEPOINT, &why) && th_have_write_tracepoint();
	if (have_docs) {
		stat_doc("w20.json", "20");
		stat_doc("w20b.json", "20");
		stat_doc("w27.json", "27");
	}
	return 0;
}

#define NEED_DOCS()                                                                     \
	do {                                                                            \
		NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);                                   \
		if (!have_docs)                                                         \
			TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");  \
	} while (0)

/* tacho diff ARGS... (NULL-terminated), with the test folder's files by name */
#define diff(r, ...) th_tacho((r), "diff", __VA_ARGS__, NULL)

static char *p(const char *name)
{
	static char bufs[4][4096];
	static int next;
	char *b = bufs[next++ % 4];

	snprintf(b, 4096, "%s", th_tmp(name));
	return b;
}

static void test_exact_change(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_DOCS();

	diff(&r, "--format", "json", p("w20.json"), p("w27.json"));
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_json_str(j, "events[0].name", "syscalls:sys_enter_write");
	assert_json_str(j, "events[0].verdict", "changed");
	assert_json_type(j, "events[0].exact", TH_JSON_BOOL);
	assert_true(th_json_get(j, "events[0].exact")->boolean);
	assert_true(json_num(j, "events[0].before") == 20);
	assert_true(json_num(j, "events[0].after") == 27);
	assert_true(json_num(j, "events[0].change") == 7);
	assert_true(json_num(j, "events[0].lo") == 7 && json_num(j, "events[0].hi") == 7);
	assert_json_int(j, "events[0].n_before", 10);
	assert_json_int(j, "events[0].n_after", 10);
	/* the one open of /dev/null, unchanged */
	assert_json_str(j, "events[1].verdict", "no change");
	assert_true(json_num(j, "events[1].change") == 0);
	assert_json_int(j, "before_runs", 10);
	th_json_free(j);
	th_run_free(&r);

	diff(&r, p("w20.json"), p("w27.json"));
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "# 95% intervals of the change");
	assert_contains(r.out, "syscalls:sys_enter_write");
	assert_contains(r.out, "+35.00%");
	assert_contains(r.out, "exact");
	assert_contains(r.out, "# 1 changed, 1 no change, 0 unknown\n");
	assert_string_equal(r.err, "");
	th_run_free(&r);
}

static void test_no_change(void **state)
{
	struct th_run r;
	(void)state;
	NEED_DOCS();

	diff(&r, "--fail-above", "0", "--format", "csv", p("w20.json"), p("w20b.json"));
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\nsyscalls:sys_enter_write,,no change,true,10,10,20,20,0,0,0,0,"
			"0,0,,0,false,\n");
	assert_contains(r.out, "\nsyscalls:sys_enter_openat,,no change,true,10,10,");
	th_run_free(&r);
}

static void test_fail_above(void **state)
{
	static const struct {
		int line;
		const char *a, *b;
		int status;
	} c[] = {
		{ __LINE__, "50", NULL, 0 },
		{ __LINE__, "35", NULL, 0 },      /* +35 % is not above 35 */
		{ __LINE__, "34.9", NULL, 1 },
		{ __LINE__, "syscalls:sys_enter_write=34.9", NULL, 1 },
		{ __LINE__, "syscalls:sys_enter_openat=0", NULL, 0 },
		{ __LINE__, "10", "syscalls:sys_enter_write=50", 0 },   /* its own limit wins */
		{ __LINE__, "50", "syscalls:sys_enter_write=1", 1 },
		{ __LINE__, "-1", NULL, 1 },      /* openat did not fall by 1 % */
	};
	(void)state;
	NEED_DOCS();

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		struct th_run r;

		if (c[i].b)
			diff(&r, "--fail-above", c[i].a, "--fail-above", c[i].b, p("w20.json"),
			     p("w27.json"));
		else
			diff(&r, "--fail-above", c[i].a, p("w20.json"), p("w27.json"));
		if (r.status != c[i].status)
			fail_msg("line %d: exit %d, want %d\n%s%s", c[i].line, r.status, c[i].status,
				 r.out, r.err);
		if (c[i].status == 1) {
			assert_contains(r.err, "changed by more than");
			assert_int_equal(th_count_lines(r.err), 1);
			assert_contains(r.out, "changed, over ");
		} else {
			assert_string_equal(r.err, "");
		}
		th_run_free(&r);
	}
}

static void test_markdown(void **state)
{
	struct th_run r;
	(void)state;
	NEED_DOCS();

	diff(&r, "--format", "markdown", "--fail-above", "5", "--confidence", "99",
	     p("w20.json"), p("w27.json"));
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "**tacho diff**: ");
	assert_contains(r.out, "(10 and 10 runs): 1 changed, 1 no change, 0 unknown, "
			"**1 over the limit**\n");
	assert_contains(r.out, "\n| event | before | after | change | change % | interval | "
			"verdict |\n|---|---:|---:|---:|---:|---|---|\n");
	assert_contains(r.out, "| syscalls:sys\\_enter\\_write | 20 | 27 | +7 | +35.00% | exact | "
			"**changed, over +5.00%** |\n");
	assert_contains(r.out, "99% intervals of the change");
	th_run_free(&r);
}

static bool have_valgrind(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	for (const char *q = path ? path : ""; *q; ) {
		size_t n = strcspn(q, ":");
		snprintf(buf, sizeof(buf), "%.*s/valgrind", (int)n, q);
		if (access(buf, X_OK) == 0)
			return true;
		q += n + (q[n] == ':');
	}
	return false;
}

/* The simulator's documents: one run each, exact because simulated. The same program
 * twice is no change on every event, exactly (valgrind takes seconds a run: two runs,
 * and the exact change itself is the tracepoint's above). */
static void test_sim(void **state)
{
	static const char *const names[] = { "s20.json", "s20b.json" };
	struct th_run r;
	struct th_json *j;
	const struct th_json *ev;
	(void)state;

	if (!have_valgrind())
		TEST_SKIP("valgrind is not installed (Debian package valgrind)");
	for (int i = 0; i < 2; i++) {
		th_tacho(&r, "stat", "--sim", "--json", "-o", p(names[i]), "--",
			 th_prog("stat-helper"), "writes", "20", NULL);
		if (r.status != 0)
			fail_msg("stat --sim exited %d: %s", r.status, r.err);
		th_run_free(&r);
	}
	diff(&r, "--format", "json", p("s20.json"), p("s20b.json"));
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	ev = th_json_get(j, "events");
	assert_true(ev && ev->n >= 1);
	for (size_t i = 0; i < ev->n; i++) {
		assert_string_equal(th_json_get(ev->items[i], "verdict")->string, "no change");
		assert_true(th_json_get(ev->items[i], "exact")->boolean);
		assert_true(th_json_get(ev->items[i], "n_before")->number == 1);
	}
	th_json_free(j);
	th_run_free(&r);
}

/* A file and its message: the line must name the file (and the place) and be one line. */
static void put(const char *name, const char *text)
{
	FILE *f = fopen(th_tmp(name), "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_bad_inputs(void **state)
{
	static const struct {
		int line;
		const char *a, *b;   /* files of the test folder; "" for a missing one */
		const char *message;
	} c[] = {
		{ __LINE__, "cut.json", "ok.json", "cut.json:2:1: expected ',' or '}' in an object" },
		{ __LINE__, "ok.json", "regions.json", "regions.json:1:1: not a stat document: no "
		  "\"events\" array (is it stat's --json?)" },
		{ __LINE__, "ok.json", "other.json", "ok.json:1:27: event 'w' is not in " },
		{ __LINE__, "ok.json", "more.json", "more.json:1:54: event 'o' is not in " },
		{ __LINE__, "ok.json", "missing.json", "missing.json: cannot read it: " },
		{ __LINE__, "ok.json", "v2.json", "v2.json:1:13: a stat document of version 2" },
	};
	(void)state;

	put("ok.json", "{\"version\": 1, \"events\": [{\"name\": \"w\", \"value\": 1}]}");
	put("cut.json", "{\"version\": 1, \"events\": [{\"name\": \"w\", \"value\": 1}]\n");
	put("regions.json", "{\"version\": 1, \"regions\": []}");
	put("other.json", "{\"version\": 1, \"events\": [{\"name\": \"x\", \"value\": 1}]}");
	put("more.json", "{\"version\": 1, \"events\": [{\"name\": \"w\", \"value\": 1}, "
	    "{\"name\": \"o\", \"value\": 1}]}");
	put("v2.json", "{\"version\": 2, \"events\": []}");
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		struct th_run r;

		diff(&r, p(c[i].a), p(c[i].b));
		if (r.status != 2 || th_count_lines(r.err) != 1 || !strstr(r.err, c[i].message) ||
		    r.out_len)
			fail_msg("line %d: exit %d, stderr:\n%s\nwant 2 and '%s'", c[i].line,
				 r.status, r.err, c[i].message);
		th_run_free(&r);
	}
}

/* Two recordings of a program whose hot function moved: old_hot's row vanished,
 * new_hot's appeared, each with most of its recording's samples (each burns 200 ms of
 * CPU, sampled by cpu-clock at 1 kHz: about 200 samples; the other is never called, so
 * its row is absent for certain, not merely small). */
static void test_recordings(void **state)
{
	static const char *const mode[] = { "old", "new" };
	struct th_run r;
	struct th_json *j;
	const struct th_json *rows;
	bool seen_old = false, seen_new = false;
	(void)state;

	for (int i = 0; i < 2; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%s.rec", mode[i]);
		th_tacho(&r, "record", "-q", "-e", "cpu-clock", "-o", p(name), "--",
			 th_prog("diff-hot"), mode[i], "200", NULL);
		if (r.status != 0)
			fail_msg("record exited %d: %s", r.status, r.err);
		th_run_free(&r);
	}
	diff(&r, "--format", "json", p("old.rec"), p("new.rec"));
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	rows = th_json_get(j, "rows");
	assert_non_null(rows);
	for (size_t i = 0; i < rows->n; i++) {
		const char *sym = th_json_get(rows->items[i], "symbol")->string;
		const char *status = th_json_get(rows->items[i], "status")->string;
		double before = th_json_get(rows->items[i], "before_pct")->number;
		double after = th_json_get(rows->items[i], "after_pct")->number;

		if (!strcmp(sym, "old_hot")) {
			seen_old = true;
			assert_string_equal(status, "vanished");
			assert_true(before > 50 && after == 0);
			assert_string_equal(th_json_get(rows->items[i], "dso")->string, "diff-hot");
		} else if (!strcmp(sym, "new_hot")) {
			seen_new = true;
			assert_string_equal(status, "appeared");
			assert_true(after > 50 && before == 0);
		}
	}
	assert_true(seen_old && seen_new);
	/* the largest change first: one of the two */
	assert_true(!strcmp(th_json_get(j, "rows[0].symbol")->string, "old_hot") ||
		    !strcmp(th_json_get(j, "rows[0].symbol")->string, "new_hot"));
	th_json_free(j);
	th_run_free(&r);

	/* by binary: the program is in both, and the table says so */
	diff(&r, "--sort", "dso", p("old.rec"), p("new.rec"));
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "diff-hot");
	assert_contains(r.out, "# before: ");
	th_run_free(&r);
	/* a key that differs from one run to the next matches nothing: refused */
	diff(&r, "--sort", "pid", p("old.rec"), p("new.rec"));
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--sort takes symbol, dso, line or comm, not 'pid'");
	th_run_free(&r);
	/* what only stat documents take */
	diff(&r, "--format", "markdown", p("old.rec"), p("new.rec"));
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	diff(&r, "--fail-above", "5", p("old.rec"), p("new.rec"));
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	/* a recording against a file that is none */
	put("junk.rec", "not a recording at all, just text");
	diff(&r, p("old.rec"), p("junk.rec"));
	assert_int_equal(r.status, 2);
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "junk.rec");
	th_run_free(&r);
}

/* One frame of a flame graph's SVG: where it is, its name, its <title>'s shares, its
 * fill. */
struct frame {
	double x, w;
	unsigned d;
	char name[128], who[256];   /* who: the title before ": " */
	double before, after, change;
	unsigned rgb[3];
};

/* The frames of the SVG in text, as tc_fg_draw writes them (one <g class="f"> each). */
static size_t svg_frames(const char *text, struct frame *v, size_t max)
{
	size_t n = 0;

	for (const char *s = strstr(text, "<g class=\"f\""); s; s = strstr(s + 1, "<g class=\"f\"")) {
		struct frame *f = &v[n];
		const char *t = strstr(s, "<title>"), *colon;
		int k;

		assert_true(n < max);
		k = sscanf(s, "<g class=\"f\" data-x=\"%lf\" data-w=\"%lf\" data-d=\"%u\" data-n=\"%127[^\"]\"",
			   &f->x, &f->w, &f->d, f->name);
		assert_int_equal(k, 4);
		assert_non_null(t);
		t += strlen("<title>");
		colon = strstr(t, ": before ");
		assert_non_null(colon);
		assert_true((size_t)(colon - t) < sizeof(f->who));
		memcpy(f->who, t, (size_t)(colon - t));
		f->who[colon - t] = '\0';
		k = sscanf(colon, ": before %lf%%, after %lf%%, change %lf%%</title>", &f->before,
			   &f->after, &f->change);
		assert_int_equal(k, 3);
		t = strstr(colon, "fill=\"rgb(");
		assert_non_null(t);
		k = sscanf(t, "fill=\"rgb(%u,%u,%u)\"", &f->rgb[0], &f->rgb[1], &f->rgb[2]);
		assert_int_equal(k, 3);
		n++;
	}
	return n;
}

/* Whether frame c is a child of frame f: one deeper, within its span. */
static bool child_of(const struct frame *c, const struct frame *f)
{
	return c->d == f->d + 1 && c->x >= f->x - 0.002 && c->x + c->w <= f->x + f->w + 0.002;
}

#define MAX_SVG_FRAMES 4096

/* The SVG at path drawn by `diff --format svg [--width before]`: well-formed; its frames
 * into v. Checks what holds of every frame: the root spans the whole width (1,200 less
 * 10 each side) and holds 100% on both sides; each frame's width is its share on the
 * drawn side, its change is after less before; its children fit in it. */
static size_t svg_check(const char *path, bool before, struct frame *v)
{
	char *text = NULL;
	size_t len, n;

	{
		char *argv[] = { (char *)"xmllint", (char *)"--noout", (char *)path, NULL };
		struct th_run r;

		th_runv(&r, NULL, argv);
		if (r.status)
			fail_msg("xmllint: %s", r.err);
		th_run_free(&r);
	}
	assert_int_equal(th_read_data(path, &text, &len), 0);
	n = svg_frames(text, v, MAX_SVG_FRAMES);
	free(text);
	assert_true(n > 3);
	assert_string_equal(v[0].name, "all");
	assert_int_equal(v[0].d, 0);
	assert_true(fabs(v[0].x - 10) < 1e-9 && fabs(v[0].w - 1180) < 1e-9);
	assert_true(v[0].before == 100 && v[0].after == 100 && v[0].change == 0);
	for (size_t i = 0; i < n; i++) {
		double kids = 0, share = before ? v[i].before : v[i].after;

		/* the title's shares are to 0.01, the width to 0.001 pixel */
		if (fabs(v[i].w / 1180 * 100 - share) > 0.005 + 1e-9)
			fail_msg("%s: %.3f pixels wide, %.2f%% in its title", v[i].who, v[i].w, share);
		if (fabs(v[i].after - v[i].before - v[i].change) > 0.015)
			fail_msg("%s: the change is not after less before", v[i].who);
		for (size_t k = 0; k < n; k++)
			if (child_of(&v[k], &v[i]))
				kids += v[k].w;
		if (kids > v[i].w + 0.002 * (double)n)
			fail_msg("%s: its children are wider than it", v[i].who);
		if (i == 0 && fabs(kids - v[0].w) > 0.01)
			fail_msg("the processes' frames are %.3f pixels wide together, not 1180", kids);
	}
	return n;
}

/* A frame's fill against its title's change: grey rgb(225,225,225) for none; else
 * rgb(255,g,g) for growth, rgb(g,g,255) for shrinkage, g from 230 down to 35 as the
 * change goes to the largest (most). The title's change is to 0.01 points: g within 1,
 * and a change it shows as 0.00 may have either colour. */
static void fill_check(const struct frame *f, double most)
{
	double want = 230 - 195 * fabs(f->change) / most;
	unsigned g;

	if (f->rgb[0] == 225 && f->rgb[1] == 225 && f->rgb[2] == 225) {
		if (f->change != 0)
			fail_msg("%s: grey, but changed by %.2f", f->who, f->change);
		return;
	}
	if (fabs(f->change) < 0.01)
		return;
	if (f->change > 0 && !(f->rgb[0] == 255 && f->rgb[1] == f->rgb[2]))
		fail_msg("%s: grew by %.2f, not red", f->who, f->change);
	if (f->change < 0 && !(f->rgb[2] == 255 && f->rgb[0] == f->rgb[1]))
		fail_msg("%s: shrank by %.2f, not blue", f->who, f->change);
	g = f->change > 0 ? f->rgb[1] : f->rgb[0];
	if (fabs((double)g - want) > 1)
		fail_msg("%s: changed by %.2f of at most %.2f, its colour %u not %.1f", f->who,
			 f->change, most, g, want);
}

/* The function's share of the events where it was sampled itself (its frames' shares
 * less their children's, as the rows count) from one side's frames. *terms: how many
 * rounded numbers went into it. */
static double self_share(const struct frame *v, size_t n, const char *who, bool before,
			 unsigned *terms)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(v[i].who, who))
			continue;
		sum += before ? v[i].before : v[i].after;
		++*terms;
		for (size_t k = 0; k < n; k++)
			if (child_of(&v[k], &v[i])) {
				sum -= before ? v[k].before : v[k].after;
				++*terms;
			}
	}
	return sum;
}

/* The differential flame graph of two recordings with call chains (-g) of the program
 * whose hot function moved: new_hot is red and old_hot blue (drawn by the shares
 * before: after, it has none), every frame's colour as deep as its change against the
 * largest; every function's own share, from the frames' titles, is what the rows of
 * `tacho diff --format json` give it; in Chromium the picture zooms to new_hot. A file
 * that is no recording, and a full disk, are one line each. */
static void test_flamegraph(void **state)
{
	static const char *const mode[] = { "old", "new" };
	struct frame *fb = calloc(MAX_SVG_FRAMES, sizeof(*fb));
	struct frame *fa = calloc(MAX_SVG_FRAMES, sizeof(*fa));
	struct th_run r;
	struct th_json *j;
	const struct th_json *rows;
	size_t nb, na;
	bool seen_old = false, seen_new = false;
	double most = 0;
	char url[4200];
	const char *q;
	(void)state;

	assert_true(fb && fa);
	if (access("/usr/bin/xmllint", X_OK))
		TEST_SKIP("xmllint is not installed (Debian package libxml2-utils)");
	for (int i = 0; i < 2; i++) {
		char name[16];

		snprintf(name, sizeof(name), "g%s.rec", mode[i]);
		th_tacho(&r, "record", "-q", "-g", "-e", "cpu-clock", "-o", p(name), "--",
			 th_prog("diff-hot"), mode[i], "200", NULL);
		if (r.status != 0)
			fail_msg("record exited %d: %s", r.status, r.err);
		th_run_free(&r);
	}
	diff(&r, "--format", "svg", p("gold.rec"), p("gnew.rec"), "-o", p("after.svg"));
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	th_run_free(&r);
	diff(&r, "--format", "svg", "--width", "before", p("gold.rec"), p("gnew.rec"), "-o",
	     p("before.svg"));
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	/* a stat document is no recording; a full disk is told, the file left alone */
	put("doc.json", "{\"version\": 1, \"events\": []}");
	diff(&r, "--format", "svg", p("gold.rec"), p("doc.json"));
	assert_int_equal(r.status, 2);
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "doc.json: not a tacho recording");
	th_run_free(&r);
	diff(&r, "--format", "svg", p("gold.rec"), p("gnew.rec"), "-o", "/dev/full");
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "/dev/full");
	th_run_free(&r);
	na = svg_check(p("after.svg"), false, fa);
	nb = svg_check(p("before.svg"), true, fb);

	/* the largest change of any frame: each frame is in one picture at least */
	for (size_t i = 0; i < na + nb; i++) {
		const struct frame *f = i < na ? &fa[i] : &fb[i - na];

		if (fabs(f->change) > most)
			most = fabs(f->change);
	}
	for (size_t i = 0; i < na + nb; i++) {
		const struct frame *f = i < na ? &fa[i] : &fb[i - na];

		fill_check(f, most);
		if (i < na)
			assert_string_not_equal(f->name, "old_hot");   /* no width after */
		else
			assert_string_not_equal(f->name, "new_hot");   /* no width before */
		if (!strcmp(f->name, "new_hot")) {
			seen_new = true;
			assert_string_equal(f->who, "new_hot (diff-hot)");
			assert_true(f->before == 0 && f->after > 50);
			assert_true(f->rgb[0] == 255 && f->rgb[1] < 200);   /* red */
		}
		if (!strcmp(f->name, "old_hot")) {
			seen_old = true;
			assert_true(f->after == 0 && f->before > 50);
			assert_true(f->rgb[2] == 255 && f->rgb[0] < 200);   /* blue */
		}
		/* the largest change is the deepest colour */
		if (fabs(f->change) == most)
			assert_int_equal(f->change > 0 ? f->rgb[1] : f->rgb[0], 35);
	}
	assert_true(seen_old && seen_new);

	/* each row's shares again, from the frames: before from the picture drawn by the
	 * shares before (where every frame with a share before is), after from the other */
	diff(&r, "--format", "json", p("gold.rec"), p("gnew.rec"));
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	rows = th_json_get(j, "rows");
	assert_true(rows && rows->n >= 2);
	for (size_t i = 0; i < rows->n; i++) {
		const char *sym = th_json_get(rows->items[i], "symbol")->string;
		const char *dso = th_json_get(rows->items[i], "dso")->string;
		double before = th_json_get(rows->items[i], "before_pct")->number;
		double after = th_json_get(rows->items[i], "after_pct")->number;
		unsigned tb = 0, ta = 0;
		char who[300];
		double sb, sa;

		if (!strcmp(dso, "[unknown]"))
			continue;   /* a frame of an unknown binary names none */
		snprintf(who, sizeof(who), "%s (%s)", sym, dso);
		sb = self_share(fb, nb, who, true, &tb);
		sa = self_share(fa, na, who, false, &ta);
		if (fabs(sb - before) > 0.005 * tb + 1e-9 || fabs(sa - after) > 0.005 * ta + 1e-9)
			fail_msg("%s: the rows give %.4f%% before, %.4f%% after; the frames %.2f%%, "
				 "%.2f%%", who, before, after, sb, sa);
	}
	th_json_free(j);
	th_run_free(&r);
	free(fa);
	free(fb);

	if (access("/usr/bin/chromium", X_OK))
		TEST_SKIP("chromium is not installed (scripts/deps.sh test)");
	snprintf(url, sizeof(url), "file://%s#zoom=new_hot", p("after.svg"));
	{
		char *argv[] = { (char *)"/usr/bin/chromium", (char *)"--headless",
				 (char *)"--no-sandbox", (char *)"--disable-gpu",
				 (char *)"--enable-logging=stderr", (char *)"--dump-dom", url, NULL };
		th_runv(&r, NULL, argv);
	}
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "<svg");
	assert_not_contains(r.out, "parsererror");
	assert_not_contains(r.err, "CONSOLE");
	/* the zoomed frame spans the whole width */
	q = strstr(r.out, "data-n=\"new_hot\"");
	assert_non_null(q);
	q = strstr(q, "<rect ");
	assert_non_null(q);
	assert_non_null(strstr(q, "width=\"1180.000\""));
	th_run_free(&r);
}

static void test_usage(void **state)
{
	static const struct {
		int line;
		const char *args[4];
		const char *message;
	} c[] = {
		{ __LINE__, { "a.json" }, "two stat documents to compare are needed" },
		{ __LINE__, { "a", "b", "c" }, "unexpected argument 'c'" },
		{ __LINE__, { "--format", "yaml", "a", "b" }, "--format takes text, json, csv, markdown or svg" },
		{ __LINE__, { "--width", "after", "a", "b" }, "--width and -o are for --format svg" },
		{ __LINE__, { "--format", "svg", "--width=both", "a" }, "--width takes after or before, not 'both'" },
		{ __LINE__, { "--confidence", "100", "a", "b" }, "--confidence takes a percentage" },
		{ __LINE__, { "--fail-above", "x", "a", "b" }, "--fail-above takes a percentage" },
		{ __LINE__, { "--fail-above", "=5", "a", "b" }, "--fail-above takes a percentage" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		struct th_run r;

		th_tacho(&r, "diff", c[i].args[0], c[i].args[1], c[i].args[2], c[i].args[3], NULL);
		if (r.status != 2 || !strstr(r.err, c[i].message))
			fail_msg("line %d: exit %d, stderr:\n%s", c[i].line, r.status, r.err);
		th_run_free(&r);
	}
	/* a limit on an event the documents do not count */
	put("ok.json", "{\"version\": 1, \"events\": [{\"name\": \"w\", \"value\": 1}]}");
	{
		struct th_run r;

		diff(&r, "--fail-above", "nope=5", p("ok.json"), p("ok.json"));
		assert_int_equal(r.status, 2);
		assert_int_equal(th_count_lines(r.err), 1);
		assert_contains(r.err, "--fail-above: no event 'nope' in the documents");
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_change),
		cmocka_unit_test(test_no_change),
		cmocka_unit_test(test_fail_above),
		cmocka_unit_test(test_markdown),
		cmocka_unit_test(test_sim),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_recordings),
		cmocka_unit_test(test_flamegraph),
	};
	return cmocka_run_group_tests(tests, setup, th_tmpdir_teardown);
}
