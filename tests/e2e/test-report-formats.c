/* test-report-formats.c - report's views for other tools, end to end and exact: annotate
 * of code stripped of its line tables and of code it cannot read, the pprof export read back by Go's own pprof
 * (the same functions with the same sample counts as tacho report, and the call chains
 * leaf first), the SVG flame graph checked by xmllint and run in headless Chromium
 * (zoom and search through its script, no console error), speedscope's JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

/* Records sample-faults touching 1,000 pages, every page fault (-c 1): exact. */
static bool record_faults(const char *out, bool callchain)
{
	struct th_run r;
	bool ok;

	if (callchain)
		th_tacho(&r, "record", "-q", "-e", "page-faults", "-c", "1", "-g", "-o", out, "--",
			 th_prog("sample-faults"), "1000", NULL);
	else
		th_tacho(&r, "record", "-q", "-e", "page-faults", "-c", "1", "-o", out, "--",
			 th_prog("sample-faults"), "1000", NULL);
	ok = r.status == 0;
	if (!ok)
		print_error("record: %s\n", r.err);
	th_run_free(&r);
	return ok;
}

static struct th_json *report_json(const char *file)
{
	struct th_run r;
	struct th_json *j;

	th_tacho(&r, "report", "-i", file, "--json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	th_run_free(&r);
	return j;
}

static double num(const struct th_json *j, const char *key)
{
	const struct th_json *v = th_json_get(j, key);

	assert_non_null(v);
	return v->number;
}

static const char *str(const struct th_json *j, const char *key)
{
	const struct th_json *v = th_json_get(j, key);

	assert_non_null(v);
	return v->string ? v->string : "";
}

/* A copy of sample-bp without its DWARF (strip -g keeps .symtab and the build-id): the
 * instructions are still shown, with no source rows, and the storing instruction has
 * every sample. */
static void test_annotate_stripped(void **state)
{
	char *addr_argv[] = { (char *)th_prog("sample-bp"), (char *)"--addr", NULL };
	char prog[4200], event[64];
	struct th_run r;
	struct th_json *j;
	const struct th_json *rows, *lines, *hot = NULL;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_BREAKPOINT_DATA);

	snprintf(prog, sizeof(prog), "%s", th_tmp("bp-stripped"));
	{
		char *cp[] = { (char *)"cp", (char *)th_prog("sample-bp"), prog, NULL };
		char *strip[] = { (char *)"strip", (char *)"-g", prog, NULL };
		th_runv(&r, NULL, cp);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
		th_runv(&r, NULL, strip);
		if (r.status)
			TEST_SKIP("strip -g failed (binutils): %s", r.err);
		th_run_free(&r);
	}
	th_runv(&r, NULL, addr_argv);
	assert_int_equal(r.status, 0);
	r.out[strcspn(r.out, "\n")] = 0;
	snprintf(event, sizeof(event), "mem:%s:w", r.out);
	th_run_free(&r);
	th_tacho(&r, "record", "-q", "-e", event, "-c", "1", "-o", th_tmp("strip.rec"), "--", prog,
		 "1000", NULL);
	if (r.status)
		TEST_SKIP("no data breakpoints here: %s", r.err);
	th_run_free(&r);

	th_tacho(&r, "report", "-i", th_tmp("strip.rec"), "--annotate", "store_loop", "--json",
		 NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	th_run_free(&r);
	assert_true(th_json_get(j, "decoded")->boolean);
	rows = th_json_get(j, "rows");
	lines = th_json_get(j, "lines");
	assert_non_null(rows);
	assert_non_null(lines);
	assert_true(rows->n >= 5);
	assert_int_equal(lines->n, 0);   /* no line table left */
	for (size_t i = 0; i < rows->n; i++) {
		assert_true(th_json_get(rows->items[i], "file")->type == TH_JSON_NULL);
		assert_true(th_json_get(rows->items[i], "mnemonic")->type == TH_JSON_STRING);
		if (th_json_get(rows->items[i], "hottest")->boolean)
			hot = rows->items[i];
	}
	assert_non_null(hot);
	assert_int_equal((int)num(hot, "samples"), 1000);
	assert_string_equal(str(hot, "mnemonic"), "movq");
	th_json_free(j);

	/* the table: instructions, no source row */
	th_tacho(&r, "report", "-i", th_tmp("strip.rec"), "--annotate", "store_loop", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "movq");
	assert_not_contains(r.out, "sample-bp.c:");
	th_run_free(&r);
}

/* Code tacho cannot read (the kernel's: no image of it in the file): the sampled
 * addresses alone, undecoded, every sample of the function on them. */
static void test_annotate_unreadable(void **state)
{
	struct th_run r;
	struct th_json *j, *a;
	const struct th_json *rows, *kern = NULL;
	long long sum = 0;
	(void)state;

	if (!record_faults(th_tmp("k.rec"), true))
		TEST_SKIP("cannot record page faults here");
	j = report_json(th_tmp("k.rec"));
	rows = th_json_get(j, "rows");
	assert_non_null(rows);
	for (size_t i = 0; i < rows->n && !kern; i++)
		if (!strcmp(str(rows->items[i], "dso"), "[kernel]") &&
		    strcmp(str(rows->items[i], "symbol"), "[unknown]"))
			kern = rows->items[i];
	if (!kern) {
		th_json_free(j);
		TEST_SKIP("no named kernel function among the samples (kallsyms hidden?)");
	}
	th_tacho(&r, "report", "-i", th_tmp("k.rec"), "--annotate", str(kern, "symbol"), "--json",
		 NULL);
	assert_int_equal(r.status, 0);
	a = assert_json(r.out);
	th_run_free(&r);
	assert_false(th_json_get(a, "decoded")->boolean);
	assert_int_equal((long long)num(a, "function_samples"), (long long)num(kern, "samples"));
	rows = th_json_get(a, "rows");
	assert_non_null(rows);
	assert_true(rows->n >= 1);
	for (size_t i = 0; i < rows->n; i++) {
		assert_int_equal((int)num(rows->items[i], "size"), 0);
		assert_int_equal(th_json_get(rows->items[i], "mnemonic")->type, TH_JSON_NULL);
		assert_true(num(rows->items[i], "samples") >= 1);
		sum += (long long)num(rows->items[i], "samples");
	}
	assert_int_equal(sum, (long long)num(kern, "samples"));
	th_json_free(a);
	th_tacho(&r, "report", "-i", th_tmp("k.rec"), "--annotate", str(kern, "symbol"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "(its code cannot be read: sampled addresses only)\n");
	assert_contains(r.out, "(not decoded)");
	th_run_free(&r);
	th_json_free(j);
}

/* go tool pprof's cache and settings in the test's folder (th_go_env), no module
 * lookups */
static bool go_env(void)
{
	if (!th_go_env())
		return false;
	setenv("GOFLAGS", "-mod=mod", 1);
	return true;
}

static void go_pprof(struct th_run *r, const char *what, const char *file)
{
	char *argv[] = { (char *)"go", (char *)"tool", (char *)"pprof", (char *)"-symbolize=none",
			 (char *)"-sample_index=samples", (char *)"-nodecount=100000",
			 (char *)"-nodefraction=0", (char *)"-edgefraction=0", (char *)what,
			 (char *)file, NULL };
	th_runv(r, NULL, argv);
	if (r->status)
		fail_msg("go tool pprof %s failed (%d): %s", what, r->status, r->err);
}

/* pprof's -top: the flat samples of each function equal tacho report's samples for
 * every named function whose name is unique (pprof merges by name alone), and the
 * total is the file's samples. */
static void test_pprof_top(void **state)
{
	struct th_run r;
	struct th_json *j;
	const struct th_json *rows;
	char want[128];
	int checked = 0;
	(void)state;

	if (!go_env())
		TEST_SKIP("go is not installed (scripts/deps.sh test: golang-go)");
	if (!record_faults(th_tmp("pf.rec"), false))
		TEST_SKIP("cannot record page faults here");
	th_tacho(&r, "report", "-i", th_tmp("pf.rec"), "--format", "pprof", "-o",
		 th_tmp("pf.pb.gz"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	j = report_json(th_tmp("pf.rec"));
	rows = th_json_get(j, "rows");
	assert_non_null(rows);
	go_pprof(&r, "-top", th_tmp("pf.pb.gz"));
	snprintf(want, sizeof(want), "Total samples = %lld", (long long)num(j, "samples"));
	assert_contains(r.out, want);
	assert_string_equal(str(rows->items[0], "symbol"), "touch_pages");
	assert_int_equal((int)num(rows->items[0], "samples"), 1000);
	for (size_t i = 0; i < rows->n; i++) {
		const char *sym = str(rows->items[i], "symbol");
		unsigned same = 0;
		long long flat = -1;
		const char *line;

		for (size_t k = 0; k < rows->n; k++)
			same += !strcmp(str(rows->items[k], "symbol"), sym);
		if (same != 1 || !strcmp(sym, "[unknown]") || strchr(sym, ' '))
			continue;
		/* "      1000 97.37% 97.37%       1000 97.37%  touch_pages" */
		for (line = r.out; line; line = strchr(line, '\n')) {
			long long fl, cum;
			char name[256];
			line += *line == '\n';
			if (sscanf(line, "%lld %*f%% %*f%% %lld %*f%% %255s", &fl, &cum, name) == 3 &&
			    !strcmp(name, sym)) {
				flat = fl;
				break;
			}
		}
		if (flat != (long long)num(rows->items[i], "samples"))
			fail_msg("%s: %lld samples in go tool pprof -top, %lld in tacho report\n%s",
				 sym, flat, (long long)num(rows->items[i], "samples"), r.out);
		checked++;
	}
	assert_true(checked >= 2);
	assert_contains(r.out, "tacho record: ");   /* the comment */
	/* the program's mapping comes first: pprof names it */
	assert_contains(r.out, "File: sample-faults\nBuild ID: ");
	th_run_free(&r);
	th_json_free(j);
}

struct stack {
	char *s;
	long long n;
};

static int stack_cmp(const void *a, const void *b)
{
	return strcmp(((const struct stack *)a)->s, ((const struct stack *)b)->s);
}

/* Folded stacks without their callers named "[unknown]", sorted, the same stacks
 * added up: pprof leaves out the callers no mapping covers (a frame-pointer walk past
 * the outermost frame reads 0 or stack garbage), which folded shows as [unknown]. */
static char *without_unknown_callers(const char *folded)
{
	struct stack *v = NULL;
	size_t n = 0, cap = 0, out_len = 0;
	char *out = NULL, *copy = strdup(folded), *save = NULL;
	FILE *o;

	assert_non_null(copy);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *s, *at;
		assert_non_null(sp);
		*sp = 0;
		size_t sl = 0;
		s = malloc(strlen(line) + 1);
		assert_non_null(s);
		at = line;
		while (at) {
			char *semi = strchr(at, ';');
			size_t len = semi ? (size_t)(semi - at) : strlen(at);
			/* the first field is the process, the last the leaf */
			if (!semi || at == line || len != 9 || strncmp(at, "[unknown]", 9)) {
				if (at != line)
					s[sl++] = ';';
				memcpy(s + sl, at, len);
				sl += len;
			}
			at = semi ? semi + 1 : NULL;
		}
		s[sl] = 0;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = realloc(v, cap * sizeof(*v));
			assert_non_null(v);
		}
		v[n].s = s;
		v[n++].n = strtoll(sp + 1, NULL, 10);
	}
	qsort(v, n, sizeof(*v), stack_cmp);
	o = open_memstream(&out, &out_len);
	assert_non_null(o);
	for (size_t i = 0; i < n; i++) {
		long long sum = v[i].n;
		while (i + 1 < n && !strcmp(v[i].s, v[i + 1].s)) {
			free(v[i].s);
			sum += v[++i].n;
		}
		fprintf(o, "%s %lld\n", v[i].s, sum);
		free(v[i].s);
	}
	assert_int_equal(fclose(o), 0);
	free(v);
	free(copy);
	return out;
}

/* -traces on a -g recording, turned into folded stacks ("comm;root;...;leaf N", the
 * blocks of the same stack in several processes added up), is exactly tacho report
 * --format folded: the same stacks, root to leaf, with the same counts (the periods
 * are 1), once the callers pprof leaves out are taken out of both. */
static void test_pprof_traces(void **state)
{
	struct th_run r, folded;
	struct stack *v = NULL;
	size_t n = 0, cap = 0, out_len = 0;
	char *out = NULL;
	const char *b;
	FILE *o;
	(void)state;

	if (!go_env())
		TEST_SKIP("go is not installed (scripts/deps.sh test: golang-go)");
	if (!record_faults(th_tmp("pg.rec"), true))
		TEST_SKIP("cannot record page faults here");
	th_tacho(&r, "report", "-i", th_tmp("pg.rec"), "--format", "pprof", "-o",
		 th_tmp("pg.pb.gz"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&folded, "report", "-i", th_tmp("pg.rec"), "--format", "folded", NULL);
	assert_int_equal(folded.status, 0);
	go_pprof(&r, "-traces", th_tmp("pg.pb.gz"));
	/* a block: "-----------+---", label lines "  key:  value", "  N   leaf", then one
	 * "             caller" per frame */
	for (b = strstr(r.out, "-----------+"); b; b = strstr(b + 1, "-----------+")) {
		char comm[256] = "[unknown]", *frames[1024], line[1024];
		const char *at = strchr(b, '\n'), *end = strstr(b + 1, "-----------+");
		size_t nf = 0, len = 0;
		long long count = -1;

		while (at && (!end || at < end)) {
			size_t l;
			at++;
			l = strcspn(at, "\n");
			if (!l || (end && at + l > end))
				break;
			snprintf(line, sizeof(line), "%.*s", (int)l, at);
			at += l;
			char *t = line + strspn(line, " ");
			if (!strncmp(t, "comm:  ", 7)) {
				snprintf(comm, sizeof(comm), "%s", t + 7);
			} else if (strstr(t, ":  ")) {
				continue;   /* another label */
			} else if (count < 0 && *t >= '0' && *t <= '9') {
				count = strtoll(t, &t, 10);
				t += strspn(t, " ");
				frames[nf++] = strdup(t);
			} else if (count >= 0 && nf < 1024) {
				frames[nf++] = strdup(t);
			}
		}
		if (count < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = realloc(v, cap * sizeof(*v));
			assert_non_null(v);
		}
		{
			char *s = malloc(strlen(comm) + 1 + nf * 1024);
			assert_non_null(s);
			len = (size_t)sprintf(s, "%s", comm);
			for (size_t k = nf; k-- > 0;) {
				/* pprof's name for a location without a function, folded's */
				len += (size_t)sprintf(s + len, ";%s",
						       strcmp(frames[k], "<unknown>") ? frames[k]
										   : "[unknown]");
				free(frames[k]);
			}
			v[n].s = s;
			v[n].n = count;
			n++;
		}
	}
	qsort(v, n, sizeof(*v), stack_cmp);
	o = open_memstream(&out, &out_len);
	assert_non_null(o);
	for (size_t i = 0; i < n; i++) {
		long long sum = v[i].n;
		while (i + 1 < n && !strcmp(v[i].s, v[i + 1].s)) {
			free(v[i].s);
			sum += v[++i].n;
		}
		fprintf(o, "%s %lld\n", v[i].s, sum);
		free(v[i].s);
	}
	assert_int_equal(fclose(o), 0);
	{
		char *got = without_unknown_callers(out), *want = without_unknown_callers(folded.out);
		if (strcmp(got, want))
			fail_msg("go tool pprof -traces as folded stacks:\n%s\ntacho report "
				 "--format folded:\n%s", got, want);
		free(got);
		free(want);
	}
	assert_contains(out, "sample-faults;touch_pages 1000\n");
	free(out);
	free(v);
	th_run_free(&folded);
	th_run_free(&r);
}

/* speedscope's file, its stacks turned into folded stacks (a profile per process,
 * named "COMM (pid N)"), is exactly --format folded; the weights add up to each
 * profile's endValue. */
static void test_speedscope(void **state)
{
	struct th_run r, folded;
	struct th_json *j;
	const struct th_json *frames, *profiles;
	struct stack *v = NULL;
	size_t n = 0, out_len = 0;
	char *out = NULL;
	FILE *o;
	(void)state;

	if (!record_faults(th_tmp("ss.rec"), true))
		TEST_SKIP("cannot record page faults here");
	th_tacho(&r, "report", "-i", th_tmp("ss.rec"), "--format", "speedscope", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	th_run_free(&r);
	th_tacho(&folded, "report", "-i", th_tmp("ss.rec"), "--format", "folded", NULL);
	assert_int_equal(folded.status, 0);
	assert_string_equal(str(j, "$schema"), "https://www.speedscope.app/file-format-schema.json");
	frames = th_json_get(j, "shared.frames");
	profiles = th_json_get(j, "profiles");
	assert_non_null(frames);
	assert_non_null(profiles);
	for (size_t i = 0; i < profiles->n; i++) {
		const struct th_json *pr = profiles->items[i];
		const struct th_json *smp = th_json_get(pr, "samples"), *wt = th_json_get(pr, "weights");
		char comm[256];
		long long sum = 0;

		assert_string_equal(str(pr, "type"), "sampled");
		assert_int_equal(sscanf(str(pr, "name"), "%255s (pid", comm), 1);
		assert_int_equal(smp->n, wt->n);
		v = realloc(v, (n + smp->n) * sizeof(*v));
		assert_non_null(v);
		for (size_t s = 0; s < smp->n; s++) {
			const struct th_json *st = smp->items[s];
			size_t len = strlen(comm), cap = len + 1;
			char *line = malloc(cap);
			assert_non_null(line);
			memcpy(line, comm, len + 1);
			for (size_t k = 0; k < st->n; k++) {
				size_t fi = (size_t)st->items[k]->number;
				const char *name;
				assert_true(fi < frames->n);
				name = str(frames->items[fi], "name");
				cap = len + strlen(name) + 2;
				line = realloc(line, cap);
				assert_non_null(line);
				len += (size_t)sprintf(line + len, ";%s", name);
			}
			v[n].s = line;
			v[n].n = (long long)wt->items[s]->number;
			sum += v[n].n;
			n++;
		}
		assert_int_equal(sum, (long long)num(pr, "endValue"));
	}
	th_json_free(j);
	qsort(v, n, sizeof(*v), stack_cmp);
	o = open_memstream(&out, &out_len);
	assert_non_null(o);
	for (size_t i = 0; i < n; i++) {
		long long sum = v[i].n;
		while (i + 1 < n && !strcmp(v[i].s, v[i + 1].s)) {
			free(v[i].s);
			sum += v[++i].n;
		}
		fprintf(o, "%s %lld\n", v[i].s, sum);
		free(v[i].s);
	}
	assert_int_equal(fclose(o), 0);
	if (strcmp(out, folded.out))
		fail_msg("speedscope as folded stacks:\n%s\ntacho report --format folded:\n%s",
			 out, folded.out);
	assert_contains(out, "sample-faults;touch_pages 1000\n");
	free(out);
	free(v);
	th_run_free(&folded);
}

/* The flame graph: well-formed XML; in Chromium, the script zooms touch_pages to the
 * whole width and the search for it matches its share of the events, as tacho report
 * gives it; no console message. */
static void test_svg(void **state)
{
	struct th_run r;
	struct th_json *j;
	char url[4200], want[128];
	const char *p;
	double pct = 0;
	(void)state;

	if (!record_faults(th_tmp("sv.rec"), true))
		TEST_SKIP("cannot record page faults here");
	th_tacho(&r, "report", "-i", th_tmp("sv.rec"), "--format", "svg", "-o", th_tmp("f.svg"),
		 NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	j = report_json(th_tmp("sv.rec"));
	for (size_t i = 0; i < th_json_get(j, "rows")->n; i++)
		if (!strcmp(str(th_json_get(j, "rows")->items[i], "symbol"), "touch_pages"))
			pct = num(th_json_get(j, "rows")->items[i], "percent");
	th_json_free(j);
	assert_true(pct > 50);

	if (access("/usr/bin/xmllint", X_OK) == 0) {
		char *argv[] = { (char *)"xmllint", (char *)"--noout", (char *)th_tmp("f.svg"), NULL };
		th_runv(&r, NULL, argv);
		if (r.status)
			fail_msg("xmllint: %s", r.err);
		th_run_free(&r);
	}
	{
		char *argv[] = { (char *)"cat", (char *)th_tmp("f.svg"), NULL };
		th_runv(&r, NULL, argv);
		/* the frame's events are the samples' periods: 1,000 faults of period 1 */
		assert_contains(r.out, "<title>touch_pages (");
		assert_contains(r.out, "): 1000 events, ");
		th_run_free(&r);
	}

	if (access("/usr/bin/chromium", X_OK))
		TEST_SKIP("chromium is not installed (scripts/deps.sh test)");
	snprintf(url, sizeof(url), "file://%s#search=%%5Etouch_pages%%24&zoom=touch_pages",
		 th_tmp("f.svg"));
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
	snprintf(want, sizeof(want), ">Matched: %.1f%%<", pct);
	assert_contains(r.out, want);
	/* the zoomed frame spans the whole width (1,200 less 10 on each side) */
	p = strstr(r.out, "data-n=\"touch_pages\"");
	assert_non_null(p);
	p = strstr(p, "<rect ");
	assert_non_null(p);
	assert_non_null(strstr(p, "width=\"1180.000\""));
	assert_true(strstr(p, "width=\"1180.000\"") < strstr(p, "</g>"));
	th_run_free(&r);
}

static void test_bad_usage(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "report", "--format", "png", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--format takes folded, perf-script, script-json, pprof, svg or speedscope, not 'png'");
	th_run_free(&r);
	th_tacho(&r, "report", "--format", "svg", "--json", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_annotate_stripped),
		cmocka_unit_test(test_annotate_unreadable),
		cmocka_unit_test(test_pprof_top),
		cmocka_unit_test(test_pprof_traces),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_speedscope),
		cmocka_unit_test(test_bad_usage),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
