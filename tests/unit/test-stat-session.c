/* test-stat-session.c - tacho_stat_run as a program linking libtacho calls it: exact
 * counts of the helper program, repetitions and warm-up runs as the progress callback
 * sees them, intervals that add up to the whole, refusals with their diagnostics. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "perf/perf.h"
#include "perf/syscall.h"
#include "util/util.h"

static char helper[4096];

struct progress {
	unsigned calls, last_done, last_total;
};

static void on_progress(void *arg, unsigned done, unsigned total)
{
	struct progress *p = arg;

	p->calls++;
	p->last_done = done;
	p->last_total = total;
}

struct intervals {
	unsigned n;
	double sum;
	bool monotonic;
	double last_t;
};

static void on_interval(void *arg, const struct tacho_stat_interval *iv)
{
	struct intervals *s = arg;

	s->n++;
	if (iv->t_s < s->last_t)
		s->monotonic = false;
	s->last_t = iv->t_s;
	if (iv->n >= 1 && iv->counts[0]->status == TACHO_COUNT_COUNTED)
		s->sum += iv->counts[0]->value;
}

static struct tacho_evlist *events(const char *spec)
{
	struct tacho_evlist *l = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };

	if (tacho_evlist_parse(spec, &l, &d) != 0)
		fail_msg("cannot parse '%s': %s", spec, d.message);
	return l;
}

/* K writes, repeated, with warm-up runs: the value is K in every repetition, the
 * progress callback sees every run of the program. */
static void test_repeat_and_warmup(void **state)
{
	char writes[] = "writes", k[] = "33";
	char *argv[] = { helper, writes, k, NULL };
	struct tacho_evlist *l;
	struct tacho_stat *s;
	struct progress p = { 0 };
	struct tacho_diag d = { .sz = sizeof(d) };
	const struct tacho_stat_event *e;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (access("/sys/kernel/tracing/events/syscalls/sys_enter_write", F_OK) != 0)
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	l = events("syscalls:sys_enter_write,page-faults");
	struct tacho_stat_opts o = { .sz = sizeof(o), .events = l, .target = TACHO_TARGET_CHILD,
				     .argv = argv, .repeat = 4, .warmup = 2,
				     .on_progress = on_progress, .progress_arg = &p };
	assert_int_equal(tacho_stat_run(&o, &s, &d), 0);
	assert_int_equal(tacho_stat_repeats(s), 4);
	assert_int_equal(tacho_stat_runs(s), 1);
	assert_false(tacho_stat_interrupted(s));
	/* 2 warm-up + 4 counted runs announced, then the final (total, total) */
	assert_int_equal(p.calls, 7);
	assert_int_equal(p.last_done, 6);
	assert_int_equal(p.last_total, 6);
	e = tacho_stat_event(s, 0);
	assert_int_equal(e->status, TACHO_COUNT_COUNTED);
	assert_int_equal(e->nvalues, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_true(e->values[i] == 33);
	assert_true(e->value == 33 && e->stats->stddev == 0 && e->stats->spread_pct == 0);
	assert_null(e->why);
	assert_int_equal(e->run, 0);
	assert_non_null(tacho_stat_exit_status(s));
	assert_int_equal(tacho_stat_exit_status(s)->status, 0);
	assert_true(tacho_stat_wall_s(s) > 0);
	assert_null(tacho_stat_event(s, 2));
	tacho_stat_free(s);
	tacho_evlist_free(l);
}

/* Intervals of 2 ms over a program that touches pages: their sum is the whole. */
static void test_intervals_sum(void **state)
{
	char pages[] = "pages", n[] = "3000";
	char *argv[] = { helper, pages, n, NULL };
	struct tacho_evlist *l;
	struct intervals iv = { .monotonic = true };
	struct tacho_stat *s;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	l = events("page-faults");   /* after the skip: it would leak there */

	struct tacho_stat_opts o = { .sz = sizeof(o), .events = l, .target = TACHO_TARGET_CHILD,
				     .argv = argv, .interval_ms = 2, .on_interval = on_interval,
				     .interval_arg = &iv };
	assert_int_equal(tacho_stat_run(&o, &s, &d), 0);
	assert_true(iv.n >= 1);
	assert_true(iv.monotonic);
	assert_true(iv.sum == tacho_stat_event(s, 0)->value);
	assert_true(iv.sum >= 3000);
	tacho_stat_free(s);
	tacho_evlist_free(l);
}

/* A fake two-counter PMU and hardware events: the plan needs three runs; a process
 * target cannot do that, nor can intervals. The refusal names the numbers. */
static void test_refusals(void **state)
{
	static const struct tacho_pmu_counters two = {
		.sz = sizeof(two), .gp = 2, .breakpoints = 4, .known = true, .source = "test",
	};
	char t[] = "true";
	char *argv[] = { t, NULL };
	struct tacho_evlist *l = events("r01,r02,r03,r04,r05");
	struct tacho_stat *s = (struct tacho_stat *)1;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	struct tacho_stat_opts o = { .sz = sizeof(o), .events = l,
				     .target = TACHO_TARGET_PROCESS, .pid = getpid(), .pmu = &two };
	assert_int_equal(tacho_stat_run(&o, &s, &d), -EINVAL);
	assert_null(s);
	assert_contains(d.message, "need 3 runs");
	assert_contains(d.message, "--multiplex");

	o.target = TACHO_TARGET_CHILD;
	o.argv = argv;
	o.interval_ms = 10;
	o.on_interval = on_interval;
	assert_int_equal(tacho_stat_run(&o, &s, &d), -EINVAL);
	assert_contains(d.message, "intervals need them counted in one run");

	/* no program for a child, a program for a process, repetitions without one */
	o.interval_ms = 0;
	o.argv = NULL;
	assert_int_equal(tacho_stat_run(&o, &s, &d), -EINVAL);
	assert_contains(d.message, "no program to run");
	o.target = TACHO_TARGET_PROCESS;
	o.repeat = 3;
	assert_int_equal(tacho_stat_run(&o, &s, &d), -EINVAL);
	assert_contains(d.message, "need a program");
	o.sz = 8;
	assert_int_equal(tacho_stat_run(&o, &s, &d), -EINVAL);
	assert_int_equal(tacho_stat_run(NULL, &s, &d), -EINVAL);
	tacho_evlist_free(l);
}

/* A program built against a newer tacho.h whose options set a field this library does
 * not know is refused, -TACHO_EVERSION and a sentence; the same struct with that field
 * zero runs as this library's. */
static void test_newer_opts(void **state)
{
	char t[] = "true";
	char *argv[] = { t, NULL };
	struct tacho_evlist *l = events("page-faults");
	struct tacho_stat *s = (struct tacho_stat *)1;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct {
		struct tacho_stat_opts o;
		long future;
	} n;
	(void)state;

	memset(&n, 0, sizeof(n));
	n.o.sz = sizeof(n);
	n.o.events = l;
	n.o.target = TACHO_TARGET_CHILD;
	n.o.argv = argv;
	n.future = 1;
	assert_int_equal(tacho_stat_run(&n.o, &s, &d), -TACHO_EVERSION);
	assert_contains(d.message, "struct tacho_stat_opts");
	assert_contains(d.message, "newer tacho.h");
	n.future = 0;
	assert_int_equal(tacho_stat_run(&n.o, &s, &d), 0);
	assert_non_null(s);
	tacho_stat_free(s);
	tacho_evlist_free(l);
}

/* A program that does not exist: -TACHO_ENOSTART and the sentence. */
static void test_no_program(void **state)
{
	char p[] = "/nonexistent/prog";
	char *argv[] = { p, NULL };
	struct tacho_evlist *l = events("page-faults");
	struct tacho_stat *s;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	struct tacho_stat_opts o = { .sz = sizeof(o), .events = l, .target = TACHO_TARGET_CHILD,
				     .argv = argv };
	assert_int_equal(tacho_stat_run(&o, &s, &d), -TACHO_ENOSTART);
	assert_string_equal(d.message, "cannot run '/nonexistent/prog': no such file");
	tacho_evlist_free(l);
}

/* Software events need no counter: with a fake PMU of two counters they still count
 * in one run; a killed program ends the repetitions early, counts kept. */
static void test_signal_ends_early(void **state)
{
	char segv[] = "segv";
	char *argv[] = { helper, segv, NULL };
	struct tacho_evlist *l;
	struct tacho_stat *s;
	struct tacho_diag d = { .sz = sizeof(d) };
	const struct tacho_stat_event *e;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	l = events("page-faults,task-clock");   /* after the skip: it would leak there */

	struct tacho_stat_opts o = { .sz = sizeof(o), .events = l, .target = TACHO_TARGET_CHILD,
				     .argv = argv, .repeat = 5 };
	assert_int_equal(tacho_stat_run(&o, &s, &d), 0);
	/* the program's own death is its ending, not an interruption of tacho's */
	assert_false(tacho_stat_interrupted(s));
	assert_int_equal(tacho_stat_repeats(s), 1);
	assert_int_equal(tacho_stat_exit_status(s)->status, 139);
	assert_int_equal(tacho_stat_exit_status(s)->signal, 11);
	e = tacho_stat_event(s, 0);
	assert_int_equal(e->status, TACHO_COUNT_COUNTED);
	assert_int_equal(e->nvalues, 1);
	assert_true(e->value > 0);
	assert_true(isnan(e->values[1]));    /* repetitions that never ran: no value */
	e = tacho_stat_event(s, 1);
	assert_string_equal(e->unit, "msec");
	tacho_stat_free(s);
	tacho_evlist_free(l);
}

/* A PMU for a machine without one: every hardware or raw event is opened as the
 * software event page-faults (exact here), with the engine's flags, pid and group kept,
 * so that the whole hardware path (plan, groups, runs, reads) runs for real. */
struct fake_pmu {
	unsigned leaders, members, hw;
	unsigned held;   /* opened on the calling thread: the session's hold (engine.h) */
};

static int fake_open(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	struct fake_pmu *f = arg;
	struct perf_event_attr a = *attr;
	long fd;

	if (a.type == PERF_TYPE_HARDWARE || a.type == PERF_TYPE_RAW) {
		if (pid == 0)
			f->held++;
		else if (f->hw++, group_fd < 0)
			f->leaders++;
		else
			f->members++;
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_PAGE_FAULTS;
	}
	fd = syscall(SYS_perf_event_open, &a, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}

/* Five raw events on a two-counter PMU: three runs of the program (2 + 2 + 1), each
 * run's counter events one perf group; every event counts the same exact page faults
 * as page-faults itself, whatever run it was in. */
static void test_hardware_path_on_fake_pmu(void **state)
{
	static const struct tacho_pmu_counters two = {
		.sz = sizeof(two), .gp = 2, .breakpoints = 4, .known = true, .source = "test",
	};
	char pages[] = "pages", n[] = "100";
	char *argv[] = { helper, pages, n, NULL };
	struct tacho_evlist *l = events("page-faults,r01,r02,r03,r04,r05");
	struct fake_pmu f = { 0 };
	struct tacho_stat *s;
	struct tacho_diag d = { .sz = sizeof(d) };
	double want;
	(void)state;

	struct tacho_stat_opts o = { .sz = sizeof(o), .events = l, .target = TACHO_TARGET_CHILD,
				     .argv = argv, .repeat = 2, .pmu = &two };
	tc_perf_set_open_hook(fake_open, &f);
	int err = tacho_stat_run(&o, &s, &d);
	tc_perf_set_open_hook(NULL, NULL);
	assert_int_equal(err, 0);
	assert_int_equal(tacho_stat_runs(s), 3);
	assert_int_equal(tacho_stat_repeats(s), 2);
	/* per repetition: groups {r01,r02}, {r03,r04}, {r05} */
	assert_int_equal(f.hw, 10);
	assert_int_equal(f.leaders, 6);
	assert_int_equal(f.members, 4);
	/* the PMU's set-up held across the six runs: each raw event once */
	assert_int_equal(f.held, 5);
	want = tacho_stat_event(s, 0)->value;
	assert_true(want >= 100);
	for (size_t i = 1; i <= 5; i++) {
		const struct tacho_stat_event *e = tacho_stat_event(s, i);
		assert_int_equal(e->status, TACHO_COUNT_COUNTED);
		assert_int_equal(e->run, (int)(i - 1) / 2);
		if (e->value != want || e->stats->stddev != 0)
			fail_msg("event %zu (run %d): %g, want %g", i, e->run, e->value, want);
	}
	tacho_stat_free(s);

	/* multiplexed: one run, three groups, the same counts */
	o.sched_flags = TACHO_SCHED_MULTIPLEX;
	o.repeat = 1;
	memset(&f, 0, sizeof(f));
	tc_perf_set_open_hook(fake_open, &f);
	err = tacho_stat_run(&o, &s, &d);
	tc_perf_set_open_hook(NULL, NULL);
	assert_int_equal(err, 0);
	assert_int_equal(tacho_stat_runs(s), 1);
	assert_int_equal(f.leaders, 3);
	assert_int_equal(f.members, 2);
	for (size_t i = 1; i <= 5; i++)
		assert_true(tacho_stat_event(s, i)->value == tacho_stat_event(s, 0)->value);
	tacho_stat_free(s);
	tacho_evlist_free(l);
}

static int setup(void **state)
{
	(void)state;
	snprintf(helper, sizeof(helper), "%s", th_prog("stat-helper"));
	return access(helper, X_OK) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeat_and_warmup),
		cmocka_unit_test(test_intervals_sum),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_newer_opts),
		cmocka_unit_test(test_no_program),
		cmocka_unit_test(test_signal_ends_early),
		cmocka_unit_test(test_hardware_path_on_fake_pmu),
	};

	personality(ADDR_NO_RANDOMIZE);
	return cmocka_run_group_tests(tests, setup, NULL);
}
