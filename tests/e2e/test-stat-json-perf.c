/* test-stat-json-perf.c - `tacho stat -j` (perf stat -j's JSON lines) held against perf
 * 6.1's own output of the same command line: every line of tacho's is one JSON object,
 * each has exactly the keys of perf's line for the same event and mode, in perf's order,
 * and exact counts agree with perf's and with what the program did (write(2) calls
 * through their tracepoint; fresh pages, one fault each). Modes: a count, -r, -I, -A,
 * --per-core, --per-thread of a process, --for-each-cgroup. A source that this machine
 * cannot count, or a perf that cannot run or count it, skips with the reason. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "util/util.h"

#define WRITE_EVENT "syscalls:sys_enter_write"
#define MAX_LINES 256

/* The JSON lines of one command's output. */
struct jlines {
	struct th_json *line[MAX_LINES];
	size_t n;
};

static void jlines_free(struct jlines *l)
{
	for (size_t i = 0; i < l->n; i++)
		th_json_free(l->line[i]);
	l->n = 0;
}

/* The lines of text as JSON objects. strict (tacho's): every line must be one JSON
 * object, no empty line; else (perf's) lines that are not objects are passed over
 * (perf's blank line between -I's intervals). */
static void jlines_parse(struct jlines *l, const char *text, bool strict, const char *who)
{
	l->n = 0;
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *s = strndup(p, len), err[160];
		struct th_json *j;

		assert_non_null(s);
		j = len ? th_json_parse(s, err, sizeof(err)) : NULL;
		if (strict && (!j || j->type != TH_JSON_OBJECT))
			fail_msg("%s: line %zu is not a JSON object (%s): '%s'", who, l->n + 1,
				 j ? "another value" : len ? err : "empty", s);
		if (j && j->type == TH_JSON_OBJECT && l->n < MAX_LINES)
			l->line[l->n++] = j;
		else
			th_json_free(j);
		free(s);
		p = eol ? eol + 1 : p + len;
	}
}

/* The string member key of line j, or NULL. */
static const char *jstr(const struct th_json *j, const char *key)
{
	const struct th_json *v = th_json_get(j, key);

	return v && v->type == TH_JSON_STRING ? v->string : NULL;
}

/* perf's keys that name a line's unit, besides its event. */
static const char *const unit_keys[] = { "cpu", "core", "die", "socket", "node", "thread",
					 "cgroup" };

/* The line of l for event ev whose unit (if like has one) is like's; with any_unit, the
 * first for ev when none has like's unit (a thread's name differs between runs). */
static const struct th_json *find_line(const struct jlines *l, const struct th_json *like,
				       bool any_unit)
{
	const char *ev = jstr(like, "event");

	for (int pass = 0; pass < (any_unit ? 2 : 1); pass++)
		for (size_t i = 0; i < l->n; i++) {
			bool same = ev && jstr(l->line[i], "event") &&
				    !strcmp(ev, jstr(l->line[i], "event"));

			for (size_t k = 0; same && !pass && k < ARRAY_SIZE(unit_keys); k++) {
				const char *a = jstr(like, unit_keys[k]),
					   *b = jstr(l->line[i], unit_keys[k]);
				same = (!a && !b) || (a && b && !strcmp(a, b));
			}
			if (same)
				return l->line[i];
		}
	return NULL;
}

/* a and b have the same members, by name, in the same order. */
static void same_keys(const struct th_json *a, const struct th_json *b, const char *mode)
{
	const char *ev = jstr(a, "event");

	for (size_t k = 0; k < a->n || k < b->n; k++)
		if (k >= a->n || k >= b->n || strcmp(a->items[k]->key, b->items[k]->key))
			fail_msg("%s, %s: key %zu is '%s' in tacho's line, '%s' in perf's", mode,
				 ev ? ev : "?", k, k < a->n ? a->items[k]->key : "(none)",
				 k < b->n ? b->items[k]->key : "(none)");
}

/* Every line of tacho's (t) has the keys of perf's (p) line of the same event and unit,
 * the values of perf's types; and every event of perf's has a line in tacho's. */
static void check_layout(const struct jlines *t, const struct jlines *p, const char *mode,
			 bool any_unit)
{
	assert_true(t->n > 0);
	for (size_t i = 0; i < t->n; i++) {
		const struct th_json *a = t->line[i], *b = find_line(p, a, any_unit);

		if (!b)
			fail_msg("%s: no line of perf's for tacho's event '%s'", mode,
				 jstr(a, "event") ? jstr(a, "event") : "?");
		same_keys(a, b, mode);
		assert_json_type(a, "counter-value", TH_JSON_STRING);
		assert_json_type(a, "event-runtime", TH_JSON_NUMBER);
		assert_true(th_json_get(a, "event-runtime")->integer);
		assert_json_type(a, "pcnt-running", TH_JSON_NUMBER);
		assert_json_type(a, "metric-value", TH_JSON_NUMBER);
		assert_json_type(a, "metric-unit", TH_JSON_STRING);
		/* perf's "<not supported>": tacho cannot have counted it either */
		if (!strcmp(jstr(b, "counter-value"), "<not supported>"))
			assert_string_equal(jstr(a, "counter-value"), "<not supported>");
	}
	for (size_t i = 0; i < p->n; i++)
		if (!find_line(t, p->line[i], true))
			fail_msg("%s: perf has a line for '%s', tacho none", mode,
				 jstr(p->line[i], "event"));
}

/* Runs `tacho stat -j ARGS...` and `perf stat -j ARGS...` (the same arguments, args
 * NULL-terminated) into *t and *p. False (perf's output in *p) when perf cannot run
 * here. */
static bool run_both(struct th_run *t, struct th_run *p, const char *const *args)
{
	char *argv[40] = { (char *)th_tacho_bin(), (char *)"stat", (char *)"-j" };
	size_t n = 3;

	for (size_t k = 0; args[k] && n < ARRAY_SIZE(argv) - 1; k++)
		argv[n++] = (char *)args[k];
	argv[n] = NULL;
	th_runv(t, NULL, argv);
	argv[0] = (char *)"perf";
	th_runv(p, NULL, argv);
	return p->status != 127 && strchr(p->err, '{');
}

#define SKIP_NO_PERF(p)                                                                 \
	TEST_SKIP("perf stat -j cannot run or count this here (status %d): %.200s",    \
		  (p)->status, (p)->err)

/* A count, then -r 3: the same keys as perf's lines ("variance" with -r), and the
 * writes counted exactly by both: 7. */
static void test_count(void **state)
{
	static const char *const reps[] = { "1", "3" };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	for (size_t r = 0; r < ARRAY_SIZE(reps); r++) {
		struct th_run t, p;
		struct jlines lt, lp;
		const struct th_json *w;
		char mode[16];

		const char *const args[] = { "-r", reps[r], "-e",
					     "page-faults,task-clock," WRITE_EVENT ",cycles", "--",
					     th_prog("stat-helper"), "writes", "7", NULL };

		snprintf(mode, sizeof(mode), "-r %s", reps[r]);
		if (!run_both(&t, &p, args))
			SKIP_NO_PERF(&p);
		assert_int_equal(t.status, 0);
		jlines_parse(&lt, t.err, true, "tacho");
		jlines_parse(&lp, p.err, false, "perf");
		assert_int_equal(lt.n, 4);
		check_layout(&lt, &lp, mode, false);
		w = find_line(&lt, lp.line[2], false);
		assert_non_null(w);
		assert_string_equal(jstr(w, "counter-value"), "7.000000");
		assert_string_equal(jstr(lp.line[2], "counter-value"), "7.000000");
		/* the count's shape: perf's "%f" of a count, 100 % running, a rate beside */
		assert_true(th_json_get(w, "event-runtime")->number > 0);
		assert_true(th_json_get(w, "pcnt-running")->number == 100);
		assert_string_equal(jstr(w, "metric-unit"), jstr(lp.line[2], "metric-unit"));
		assert_string_equal(jstr(lt.line[1], "unit"), "msec");
		assert_string_equal(jstr(lt.line[1], "metric-unit"), "CPUs utilized");
		if (r)
			assert_true(th_json_get(w, "variance")->number == 0);
		jlines_free(&lt);
		jlines_free(&lp);
		th_run_free(&t);
		th_run_free(&p);
	}
}

/* The fewest page faults of `stat-helper pages N` over 3 runs of cmd stat -j: without
 * address randomization (main) the helper's start-up faults the same pages on every
 * run, under either launcher; the fewest leaves out a run the loaded machine disturbed.
 * -1 where it has no count. */
static double faults_min(const char *cmd, const char *pages)
{
	double min = -1;

	for (int k = 0; k < 3; k++) {
		char *argv[] = { (char *)cmd, (char *)"stat", (char *)"-j", (char *)"-e",
				 (char *)"page-faults", (char *)"--",
				 (char *)th_prog("stat-helper"), (char *)"pages", (char *)pages,
				 NULL };
		struct th_run r;
		struct jlines l;
		const char *v;

		if (!strcmp(cmd, "tacho"))
			argv[0] = (char *)th_tacho_bin();
		th_runv(&r, NULL, argv);
		jlines_parse(&l, r.err, !strcmp(cmd, "tacho"), cmd);
		v = l.n == 1 ? jstr(l.line[0], "counter-value") : NULL;
		if (v && v[0] != '<' && (min < 0 || atof(v) < min))
			min = atof(v);
		jlines_free(&l);
		th_run_free(&r);
	}
	return min;
}

/* N fresh pages are N more page faults, in tacho's -j lines and in perf's, and the
 * two count the same. */
static void test_page_faults(void **state)
{
	double t0, t1, p0, p1;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	t0 = faults_min("tacho", "0");
	t1 = faults_min("tacho", "500");
	assert_true(t0 > 0);
	if (t1 - t0 != 500)
		fail_msg("tacho: %g page faults at 0 pages, %g at 500", t0, t1);
	p0 = faults_min("perf", "0");
	p1 = faults_min("perf", "500");
	if (p0 < 0 || p1 < 0)
		TEST_SKIP("perf stat -j did not count page-faults here");
	if (p1 - p0 != 500)
		fail_msg("perf: %g page faults at 0 pages, %g at 500", p0, p1);
	if (t0 != p0 || t1 != p1)
		fail_msg("page faults at 0 and 500 pages: tacho %g and %g, perf %g and %g", t0,
			 t1, p0, p1);
}

/* Where tacho says it did not count (a source proven silent here: hardware breakpoints
 * that never fire), its -j line says "<not counted>", never a number; where the source
 * counts, the exact stores. */
static void test_not_counted(void **state)
{
	struct th_run r, a;
	struct jlines l;
	struct th_json *j;
	const char *value, *status;
	char spec[64];
	(void)state;

	th_runv(&a, NULL, (char *[]){ (char *)th_prog("stat-helper"), (char *)"addr", NULL });
	a.out[strcspn(a.out, "\n")] = '\0';
	snprintf(spec, sizeof(spec), "mem:%s:w:u", a.out);
	th_run_free(&a);

	j = th_stat_json(&r, "-e", spec, "--", th_prog("stat-helper"), "stores", "5", NULL);
	th_tacho(&a, "stat", "-j", "-e", spec, "--", th_prog("stat-helper"), "stores", "5",
		 NULL);
	jlines_parse(&l, a.err, true, "tacho");
	assert_int_equal(l.n, 1);
	value = json_str(l.line[0], "counter-value");
	status = json_str(j, "events[0].status");
	if (!strcmp(status, "counted"))
		assert_string_equal(value, "5.000000");
	else if (!strcmp(status, "not supported"))
		assert_string_equal(value, "<not supported>");
	else
		assert_string_equal(value, "<not counted>");
	if (value[0] == '<') {
		assert_true(th_json_get(l.line[0], "event-runtime")->number == 0);
		assert_string_equal(jstr(l.line[0], "metric-unit"), "");
	}
	jlines_free(&l);
	th_json_free(j);
	th_run_free(&a);
	th_run_free(&r);
}

/* -I: "interval" first, a number; the same keys as perf's lines; a line per event and
 * interval. */
static void test_interval(void **state)
{
	static const char *const args[] = { "-I", "100", "--interval-count", "2", "-e",
					    "page-faults,task-clock," WRITE_EVENT, "--", "sleep",
					    "1", NULL };
	struct th_run t, p;
	struct jlines lt, lp;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!run_both(&t, &p, args))
		SKIP_NO_PERF(&p);
	/* perf waits for its workload (1 s); tacho ends it after the second interval
	 * (143), unless a loaded machine let it end first */
	assert_true(t.status == 143 || t.status == 0);
	jlines_parse(&lt, t.err, true, "tacho");
	jlines_parse(&lp, p.err, false, "perf");
	assert_true(lt.n >= 3 && lt.n % 3 == 0);
	check_layout(&lt, &lp, "-I", false);
	for (size_t i = 0; i < lt.n; i++) {
		assert_string_equal(lt.line[i]->items[0]->key, "interval");
		assert_json_type(lt.line[i], "interval", TH_JSON_NUMBER);
	}
	jlines_free(&lt);
	jlines_free(&lp);
	th_run_free(&t);
	th_run_free(&p);
}

/* -a with -A, --per-core, --for-each-cgroup: the unit's keys where perf puts them and
 * the same units ("cpu" : "0", "core" : "S0-D0-C0" with "aggregate-number"). */
static void test_cpus(void **state)
{
	static const char *const modes[][9] = {
		{ "-a", "-A", "-e", "page-faults,task-clock", "--", "sleep", "0.1", NULL },
		{ "-a", "--per-core", "-e", "page-faults,task-clock", "--", "sleep", "0.1", NULL },
		{ "-a", "-e", "page-faults,task-clock", "--for-each-cgroup", "/", "--", "sleep",
		  "0.1", NULL },
	};
	(void)state;

	if (geteuid() != 0)
		TEST_SKIP("counting CPUs needs root");
	for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
		struct th_run t, p;
		struct jlines lt, lp;

		if (!run_both(&t, &p, modes[m]))
			SKIP_NO_PERF(&p);
		assert_int_equal(t.status, 0);
		jlines_parse(&lt, t.err, true, "tacho");
		jlines_parse(&lp, p.err, false, "perf");
		/* as many lines, unit for unit */
		assert_int_equal(lt.n, lp.n);
		check_layout(&lt, &lp, modes[m][1], false);
		jlines_free(&lt);
		jlines_free(&lp);
		th_run_free(&t);
		th_run_free(&p);
	}
}

/* --per-thread of a running process (-p): "thread" : "COMM-TID", as perf's. */
static void test_per_thread(void **state)
{
	struct th_run t, p;
	struct jlines lt, lp;
	char pid[16];
	pid_t child;
	(void)state;

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		execl(th_prog("stat-helper"), "stat-helper", "sleep", "3000", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	if (!run_both(&t, &p, (const char *const[]){ "--per-thread", "-p", pid, "--timeout",
						     "200", "-e", "page-faults,task-clock",
						     NULL })) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		SKIP_NO_PERF(&p);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(t.status, 0);
	jlines_parse(&lt, t.err, true, "tacho");
	jlines_parse(&lp, p.err, false, "perf");
	assert_int_equal(lt.n, 2);
	check_layout(&lt, &lp, "--per-thread", false);
	assert_string_equal(lt.line[0]->items[0]->key, "thread");
	jlines_free(&lt);
	jlines_free(&lp);
	th_run_free(&t);
	th_run_free(&p);
}

/* -j is --json --perf-layout; neither goes with another format, and -j -I takes no
 * -r: one line each that says why, exit 2. */
static void test_usage(void **state)
{
	static const char *const bad[][8] = {
		{ "-j", "-x,", "--", "true" },
		{ "-j", "--csv", "--", "true" },
		{ "-j", "-I", "100", "-r", "2", "--", "true" },
		{ "-j", "--sim", "--", "true" },
	};
	struct th_run a, b;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char *argv[12] = { (char *)th_tacho_bin(), (char *)"stat" };
		size_t n = 2;

		for (size_t k = 0; k < ARRAY_SIZE(bad[i]) && bad[i][k]; k++)
			argv[n++] = (char *)bad[i][k];
		th_runv(&a, NULL, argv);
		assert_int_equal(a.status, 2);
		assert_true(strncmp(a.err, "tacho stat: ", 12) == 0);
		th_run_free(&a);
	}
	/* the long form writes the same lines (no count differs: a null run's keys) */
	th_tacho(&a, "stat", "-j", "-e", "task-clock", "--", "true", NULL);
	th_tacho(&b, "stat", "--json", "--perf-layout", "-e", "task-clock", "--", "true", NULL);
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_true(strncmp(a.err, "{\"counter-value\" : \"", 20) == 0);
	assert_true(strncmp(b.err, "{\"counter-value\" : \"", 20) == 0);
	th_run_free(&a);
	th_run_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_page_faults),
		cmocka_unit_test(test_not_counted),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_cpus),
		cmocka_unit_test(test_per_thread),
		cmocka_unit_test(test_usage),
	};

	/* the helper's start-up the same on every run (inherited by what the tests run) */
	personality(ADDR_NO_RANDOMIZE);
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
