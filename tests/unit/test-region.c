/* test-region.c - regions with exact answers: stores to a variable watched by a hardware
 * breakpoint and faults on fresh pages, counted inside regions, nested, from several
 * threads at once, and an empty region that reads 0 after the subtraction. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "pages.h"
#include "tacho.h"
#include "regions/region-int.h"
#include "regions/region.h"
#include "output/output.h"
#include "perf/syscall.h"
#include "util/util.h"

/* The variable the breakpoint watches. Aligned to its length: mem:ADDR/8:w. */
static volatile uint64_t watched __attribute__((aligned(8)));
static int setup_err;
static char setup_msg[512];
static size_t ev_bp, ev_pf;   /* event indices in the report: the "stores" and page faults */
/* The exact event the tests call stores: the watched variable's stores where this
 * machine's breakpoints fire, else getppid(2) calls through their tracepoint (a
 * hypervisor that delivers no breakpoint leaves the regions' logic to be tested all
 * the same). */
static bool use_breakpoint;

static void store_n(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (use_breakpoint)
			watched = i;
		else
			syscall(SYS_getppid);
	}
}

static struct tacho_regions_report *report(void)
{
	struct tacho_regions_report *r = NULL;
	assert_int_equal(tacho_regions_report_new(&r), 0);
	assert_non_null(r);
	return r;
}

static const struct tacho_region_stat *find(struct tacho_regions_report *r, const char *name)
{
	const struct tacho_region_stat *st = tacho_regions_report_find(r, name);
	if (!st)
		fail_msg("region '%s' missing from the report", name);
	return st;
}

/* Every open of the process passes through (the real system call), counted when it is
 * a hold's: on the calling thread, disabled, no read format (engine.h). */
static unsigned held_page_faults, held_breakpoints;

static int passing_open(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			unsigned long flags)
{
	long fd;
	(void)arg;

	if (pid == 0 && attr->disabled && !attr->read_format && !attr->inherit) {
		held_page_faults += attr->type == PERF_TYPE_SOFTWARE &&
				    attr->config == PERF_COUNT_SW_PAGE_FAULTS;
		held_breakpoints += attr->type == PERF_TYPE_BREAKPOINT;
	}
	fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}

static int group_setup(void **state)
{
	char spec[128];
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	const char *why;

	tc_perf_set_passing_open_hook(passing_open, NULL);

	use_breakpoint = th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, &why);
	if (use_breakpoint)
		snprintf(spec, sizeof(spec), "mem:%p/8:w,page-faults", (void *)&watched);
	else
		snprintf(spec, sizeof(spec), "syscalls:sys_enter_getppid,page-faults");
	/* the first call of syscall() may fault its page of libc in: not in a region */
	syscall(SYS_getppid);
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = spec, .no_report_at_exit = true };
	setup_err = tacho_regions_init(&o, &d);
	if (setup_err)
		tacho_diag_format(&d, setup_msg, sizeof(setup_msg));
	return 0;
}

/* Skips when this machine cannot count the events (no breakpoints in this VM, or
 * perf_event_paranoid 3): the reason comes from the report. */
#define NEED_EVENTS()                                                                   \
	do {                                                                            \
		if (setup_err)                                                          \
			fail_msg("tacho_regions_init: %s: %s", tacho_strerror(setup_err), \
				 setup_msg);                                            \
		if (!events_ok())                                                       \
			TEST_SKIP("%s", why_not);                                       \
	} while (0)

static char why_not[512];

static bool events_ok(void)
{
	struct tacho_regions_report *r;
	bool ok = true;

	/* the first region of this thread opens the counters */
	assert_int_equal(tacho_region_begin("probe"), 0);
	assert_int_equal(tacho_region_end("probe"), 0);
	r = report();
	assert_int_equal(tacho_regions_report_nevents(r), 2);
	for (size_t i = 0; i < 2; i++) {
		const char *why = NULL;
		const char *name = tacho_regions_report_event(r, i);
		if (tacho_regions_report_status(r, i, &why) != TACHO_COUNT_COUNTED) {
			snprintf(why_not, sizeof(why_not), "%s: %s", name, why ? why : "not counted");
			ok = false;
		}
		if (strcmp(name, "page-faults"))
			ev_bp = i;
		else
			ev_pf = i;
	}
	tacho_regions_report_free(r);
	tacho_regions_reset();
	return ok;
}

static void test_breakpoint_exact(void **state)
{
	static const unsigned n[] = { 10, 20, 30, 40, 1000 };
	(void)state;
	NEED_EVENTS();

	for (size_t i = 0; i < ARRAY_SIZE(n); i++) {
		assert_int_equal(tacho_region_begin("stores"), 0);
		store_n(n[i]);
		assert_int_equal(tacho_region_end("stores"), 0);
	}
	struct tacho_regions_report *r = report();
	const struct tacho_region_stat *st = find(r, "stores");
	assert_int_equal(st->calls, 5);
	assert_int_equal(st->threads, 1);
	assert_int_equal(st->events[ev_bp]->total, 1100);
	assert_int_equal(st->events[ev_bp]->exclusive, 1100);
	assert_true(st->events[ev_bp]->min == 10 && st->events[ev_bp]->max == 1000);
	assert_true(st->events[ev_bp]->mean == 220);
	assert_false(st->events[ev_bp]->clamped);
	assert_int_equal(st->events[ev_pf]->total, 0);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

static void test_page_faults_exact(void **state)
{
	(void)state;
	NEED_EVENTS();

	for (unsigned i = 1; i <= 4; i++) {
		assert_int_equal(tacho_region_begin("faults"), 0);
		assert_int_equal(th_fault_pages(16 * i), 0);
		assert_int_equal(tacho_region_end("faults"), 0);
	}
	struct tacho_regions_report *r = report();
	const struct tacho_region_stat *st = find(r, "faults");
	assert_int_equal(st->calls, 4);
	assert_int_equal(st->events[ev_pf]->total, 16 + 32 + 48 + 64);
	assert_true(st->events[ev_pf]->min == 16 && st->events[ev_pf]->max == 64);
	/* 16, 32, 48, 64: mean 40, sample stddev sqrt((24^2 + 8^2 + 8^2 + 24^2) / 3) */
	assert_true(st->events[ev_pf]->mean == 40);
	assert_true(fabs(st->events[ev_pf]->stddev - sqrt(1280.0 / 3)) < 1e-9);
	assert_int_equal(st->events[ev_bp]->total, 0);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

static void *fault_calls(void *arg)
{
	const unsigned *pages = arg;

	for (unsigned i = 0; i < 2; i++) {
		if (tacho_region_begin("faults") || th_fault_pages(pages[i]) ||
		    tacho_region_end("faults"))
			return (void *)1;
	}
	return NULL;
}

/* The first thread that opened its counters held the kernel's set-up of each kind for
 * the process (a thread's open and close then patch no static key): page-faults once
 * however many threads came and went, the breakpoint never (a debug register each). */
static void test_held_once(void **state)
{
	(void)state;
	NEED_EVENTS();

	assert_int_equal(held_page_faults, 1);
	assert_int_equal(held_breakpoints, 0);
}

/* The same four calls over two threads that have ended (their figures merged into the
 * process's: Chan et al.'s combination of means and squared deviations) and the main
 * thread alive: 16 and 48 in one, 32 and 64 in the other, 40 in the main thread. */
/* The sum of squares end() keeps: an exact integer part for values within 2^31 of the
 * first one, a double for the others and for the integer part when it would overflow.
 * Small values, values 2^40 away and enough values of 2^31 - 1 to overflow 64 bits give
 * the mean and deviation a two-pass computation in long double does, alone and merged
 * from two halves. */
static void test_accumulator_squares(void **state)
{
	enum { N = 40 };
	int64_t v[N];
	struct tc_region_accumulator whole = { 0 }, lo = { 0 }, hi = { 0 };
	const struct tc_region_accumulator *one[] = { &whole }, *two[] = { &lo, &hi };
	uint64_t calls1[] = { N }, calls2[] = { N / 2, N - N / 2 };
	struct tacho_region_value out;
	long double mean = 0, m2 = 0;
	(void)state;

	/* the first value is the shift: the others lie i, 2^31 - 1 (the largest the
	 * integer part takes: four of their squares pass 2^64) or 2^40 away */
	for (int i = 0; i < N; i++)
		v[i] = 1000 + (i % 4 == 1 ? (INT64_C(1) << 31) - 1 : i % 4 == 2 ? -(INT64_C(1) << 40) :
			       i % 4 == 3 ? (INT64_C(1) << 40) + i : i);
	for (int i = 0; i < N; i++) {
		tc_region_acc_add(&whole, v[i], v[i], i == 0);
		tc_region_acc_add(i < N / 2 ? &lo : &hi, v[i], v[i], i == 0 || i == N / 2);
		mean += v[i];
	}
	assert_true(whole.s2 > 0 && whole.s2i > 0);   /* both parts in use */
	{
		/* values within range alone: the integer part overflowed into the double */
		struct tc_region_accumulator near = { 0 };
		for (int i = 0; i < 10; i++)
			tc_region_acc_add(&near, i ? 1000 + (INT64_C(1) << 31) - 1 : 1000, 0, i == 0);
		assert_true(near.s2 > 0);
		double d = (double)((INT64_C(1) << 31) - 1), want = 9.0 * d * d;
		assert_true(fabs(tc_region_acc_s2(&near) - want) <= 1e-15 * want);
	}
	mean /= N;
	for (int i = 0; i < N; i++)
		m2 += (v[i] - mean) * (v[i] - mean);
	double sd = (double)sqrtl(m2 / (N - 1));

	tc_region_accumulators_merge(one, calls1, 1, &out);
	assert_true(fabs(out.mean - (double)mean) <= 1e-9 * fabs((double)mean));
	assert_true(fabs(out.stddev - sd) <= 1e-9 * sd);
	assert_int_equal((int64_t)out.min, -(INT64_C(1) << 40) + 1000);
	tc_region_accumulators_merge(two, calls2, 2, &out);
	assert_true(fabs(out.mean - (double)mean) <= 1e-9 * fabs((double)mean));
	assert_true(fabs(out.stddev - sd) <= 1e-9 * sd);
	tc_region_accumulator_absorb(&lo, N / 2, &hi, N - N / 2);
	assert_int_equal(lo.s2i, 0);   /* the merged sums hold the whole in the double */
	const struct tc_region_accumulator *m[] = { &lo };
	tc_region_accumulators_merge(m, calls1, 1, &out);
	assert_true(fabs(out.stddev - sd) <= 1e-9 * sd);
}

static void test_page_faults_threads(void **state)
{
	static const unsigned a[2] = { 16, 48 }, b[2] = { 32, 64 };
	pthread_t ta, tb;
	void *ra, *rb;
	(void)state;
	NEED_EVENTS();

	assert_int_equal(pthread_create(&ta, NULL, fault_calls, (void *)a), 0);
	assert_int_equal(pthread_join(ta, &ra), 0);
	assert_int_equal(pthread_create(&tb, NULL, fault_calls, (void *)b), 0);
	assert_int_equal(pthread_join(tb, &rb), 0);
	assert_null(ra);
	assert_null(rb);
	assert_int_equal(tacho_region_begin("faults"), 0);
	assert_int_equal(th_fault_pages(40), 0);
	assert_int_equal(tacho_region_end("faults"), 0);
	struct tacho_regions_report *r = report();
	const struct tacho_region_stat *st = find(r, "faults");
	assert_int_equal(st->calls, 5);
	assert_int_equal(st->events[ev_pf]->total, 16 + 32 + 48 + 64 + 40);
	/* mean 40; squared deviations 576 + 64 + 64 + 576 + 0 over 4 */
	assert_true(fabs(st->events[ev_pf]->mean - 40) < 1e-9);
	assert_true(fabs(st->events[ev_pf]->stddev - sqrt(1280.0 / 4)) < 1e-9);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

/* The subtraction: an empty region reads exactly 0 events, and its time total is the
 * noise around the calibrated cost (never asserted: no timing thresholds). */
static void test_empty_region(void **state)
{
	(void)state;
	NEED_EVENTS();

	for (int i = 0; i < 1000; i++) {
		assert_int_equal(tacho_region_begin("empty"), 0);
		assert_int_equal(tacho_region_end("empty"), 0);
	}
	struct tacho_regions_report *r = report();
	const struct tacho_region_stat *st = find(r, "empty");
	assert_int_equal(st->calls, 1000);
	assert_int_equal(st->events[ev_bp]->total, 0);
	assert_int_equal(st->events[ev_pf]->total, 0);
	assert_true(st->events[ev_bp]->min == 0 && st->events[ev_bp]->max == 0);
	assert_true(st->ticks->total >= 0 && st->time_ns >= 0);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

/* outer: 3 stores and 8 faults of its own, then inner twice with 5 stores and 4 faults
 * each; 4 calls of outer. Inclusive and exclusive figures are exact. */
static void test_nested(void **state)
{
	(void)state;
	NEED_EVENTS();

	for (int i = 0; i < 4; i++) {
		assert_int_equal(tacho_region_begin("outer"), 0);
		store_n(3);
		assert_int_equal(th_fault_pages(8), 0);
		for (int k = 0; k < 2; k++) {
			assert_int_equal(tacho_region_begin("inner"), 0);
			store_n(5);
			assert_int_equal(th_fault_pages(4), 0);
			assert_int_equal(tacho_region_end("inner"), 0);
		}
		assert_int_equal(tacho_region_end("outer"), 0);
	}
	struct tacho_regions_report *r = report();
	const struct tacho_region_stat *o = find(r, "outer"), *in = find(r, "inner");
	assert_int_equal(o->calls, 4);
	assert_int_equal(in->calls, 8);
	assert_int_equal(o->events[ev_bp]->total, 4 * (3 + 2 * 5));
	assert_int_equal(o->events[ev_bp]->exclusive, 4 * 3);
	assert_int_equal(in->events[ev_bp]->total, 40);
	assert_int_equal(in->events[ev_bp]->exclusive, 40);
	assert_int_equal(o->events[ev_pf]->total, 4 * (8 + 2 * 4));
	assert_int_equal(o->events[ev_pf]->exclusive, 4 * 8);
	assert_int_equal(in->events[ev_pf]->total, 32);
	/* time: the parts add up, whatever they are */
	assert_true(o->ticks->exclusive <= o->ticks->total);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

/* Three levels, the middle one entered from two different parents. */
static void test_nested_deep(void **state)
{
	(void)state;
	NEED_EVENTS();

	assert_int_equal(tacho_region_begin("a"), 0);
	store_n(1);
	assert_int_equal(tacho_region_begin("b"), 0);
	store_n(10);
	assert_int_equal(tacho_region_begin("c"), 0);
	store_n(100);
	assert_int_equal(tacho_region_end("c"), 0);
	assert_int_equal(tacho_region_end("b"), 0);
	assert_int_equal(tacho_region_begin("c"), 0);
	store_n(1000);
	assert_int_equal(tacho_region_end("c"), 0);
	assert_int_equal(tacho_region_end("a"), 0);

	struct tacho_regions_report *r = report();
	assert_int_equal(find(r, "a")->events[ev_bp]->total, 1111);
	assert_int_equal(find(r, "a")->events[ev_bp]->exclusive, 1);
	assert_int_equal(find(r, "b")->events[ev_bp]->total, 110);
	assert_int_equal(find(r, "b")->events[ev_bp]->exclusive, 10);
	assert_int_equal(find(r, "c")->events[ev_bp]->total, 1100);
	assert_int_equal(find(r, "c")->calls, 2);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

/* The first use of a name allocates (its record, a bigger table): 3000 new names
 * inside an enclosing region grow the heap by some hundreds of KiB, and none of those
 * page faults may be charged to the enclosing region. */
static void test_new_names_inside(void **state)
{
	char name[32];
	(void)state;
	NEED_EVENTS();

	assert_int_equal(tacho_region_begin("host"), 0);
	store_n(9);
	for (int i = 0; i < 3000; i++) {
		snprintf(name, sizeof(name), "guest-%d", i);
		assert_int_equal(tacho_region_begin(name), 0);
		assert_int_equal(tacho_region_end(name), 0);
	}
	assert_int_equal(tacho_region_end("host"), 0);
	struct tacho_regions_report *r = report();
	assert_int_equal(find(r, "host")->events[ev_pf]->total, 0);
	assert_int_equal(find(r, "host")->events[ev_bp]->total, 9);
	assert_int_equal(find(r, "guest-2999")->calls, 1);
	assert_int_equal(tc_regions_report_count(r), 3001);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

static unsigned long my_pc_misses(void)
{
	pid_t tid = gettid();

	for (struct tc_region_thread *t = tc_regions.threads; t; t = t->next)
		if (t->tid == tid)
			return t->pc_misses;
	fail_msg("no region state for this thread");
	return 0;
}

/* Names that lie a few bytes apart, as neighbouring literals do, nested: once known,
 * every begin is answered by the pointer cache (no slow lookup, which inside open
 * regions also costs two counter reads). */
static void test_pointer_cache_neighbours(void **state)
{
	static const char names[] = "p0\0p1\0p2\0p3";
	const char *n[4] = { names, names + 3, names + 6, names + 9 };
	unsigned long m0 = 0;
	(void)state;

	for (int round = 0; round < 101; round++) {
		for (int k = 0; k < 4; k++)
			assert_int_equal(tacho_region_begin(n[k]), 0);
		for (int k = 3; k >= 0; k--)
			assert_int_equal(tacho_region_end(n[k]), 0);
		if (round == 0)
			m0 = my_pc_misses();   /* the first round made the records */
	}
	assert_int_equal(my_pc_misses(), m0);
	struct tacho_regions_report *r = report();
	assert_int_equal(find(r, "p0")->calls, 101);
	assert_int_equal(find(r, "p3")->calls, 101);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

static struct tc_region_thread *my_state(void)
{
	pid_t tid = gettid();

	for (struct tc_region_thread *t = tc_regions.threads; t; t = t->next)
		if (t->tid == tid)
			return t;
	fail_msg("no region state for this thread");
	abort();
}

/* Whether name's entry in the pointer table is fixed; fails without one. */
static bool slot_fixed(const char *name)
{
	struct tc_region_thread *t = my_state();

	for (size_t i = 0; i <= t->pc_mask; i++)
		if (t->pc[i].name == name)
			return t->pc[i].fixed;
	fail_msg("'%s' at %p is not in the pointer table", name, (const void *)name);
	abort();
}

/* 10,000 names cycled: once each is known, no begin misses the pointer table (the
 * 64-slot cache it replaced missed on nearly every call). A literal's pointer is fixed
 * (answered by the pointer alone), a buffer's is not (its string is compared); either
 * ends the region the other began when the strings are equal. */
static void test_pointer_table(void **state)
{
	enum { N = 10000 };
	char **names = calloc(N, sizeof(*names));
	char copy[] = "literal-name";
	unsigned long m0 = 0;
	(void)state;

	assert_non_null(names);
	for (int i = 0; i < N; i++) {
		names[i] = malloc(16);
		assert_non_null(names[i]);
		snprintf(names[i], 16, "n%d", i);
	}
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			assert_int_equal(tacho_region_begin(names[i]), 0);
			assert_int_equal(tacho_region_end(names[i]), 0);
		}
		if (round == 0)
			m0 = my_pc_misses();
	}
	assert_int_equal(my_pc_misses(), m0);
	/* every pointer held, the table at most three quarters full */
	assert_true((my_state()->pc_mask + 1) / 4 * 3 >= N);
	assert_false(slot_fixed(names[17]));

	assert_int_equal(tacho_region_begin("literal-name"), 0);
	assert_int_equal(tacho_region_end(copy), 0);
	assert_int_equal(tacho_region_begin(copy), 0);
	assert_int_equal(tacho_region_end("literal-name"), 0);
	assert_int_equal(tacho_region_begin("literal-name"), 0);
	assert_int_equal(tacho_region_end("literal-name"), 0);
	assert_true(slot_fixed("literal-name"));
	assert_false(slot_fixed(copy));
	/* a buffer that names another region by its end is refused, as before */
	assert_int_equal(tacho_region_begin(copy), 0);
	strcpy(copy, "other-name");
	assert_int_equal(tacho_region_end(copy), -EINVAL);
	strcpy(copy, "literal-name");
	assert_int_equal(tacho_region_end(copy), 0);

	struct tacho_regions_report *r = report();
	assert_int_equal(find(r, "n9999")->calls, 3);
	assert_int_equal(find(r, "literal-name")->calls, 4);
	assert_int_equal(tc_regions_report_count(r), N + 1);
	tacho_regions_report_free(r);
	tacho_regions_reset();
	for (int i = 0; i < N; i++)
		free(names[i]);
	free(names);
}

struct worker {
	unsigned stores, pages;
	int err;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < 10; i++) {
		w->err |= tacho_region_begin("shared");
		store_n(w->stores);
		w->err |= th_fault_pages(w->pages);
		w->err |= tacho_region_end("shared");
	}
	return NULL;
}

/* Four threads at once, each with its own counters: totals are exact sums. */
static void test_threads(void **state)
{
	struct worker w[4] = { { 100, 1, 0 }, { 200, 2, 0 }, { 300, 3, 0 }, { 400, 4, 0 } };
	pthread_t th[4];
	(void)state;
	NEED_EVENTS();

	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].err, 0);
	}
	struct tacho_regions_report *r = report();
	const struct tacho_region_stat *st = find(r, "shared");
	assert_int_equal(st->calls, 40);
	assert_int_equal(st->threads, 4);
	assert_int_equal(st->events[ev_bp]->total, 10 * (100 + 200 + 300 + 400));
	assert_int_equal(st->events[ev_pf]->total, 10 * (1 + 2 + 3 + 4));
	assert_true(st->events[ev_bp]->min == 100 && st->events[ev_bp]->max == 400);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

struct live_worker {
	pthread_barrier_t done, report_taken;
	int err;
};

static void *live_worker_main(void *arg)
{
	struct live_worker *w = arg;

	for (int i = 0; i < 3; i++) {
		w->err |= tacho_region_begin("both");
		store_n(200);
		w->err |= tacho_region_end("both");
	}
	w->err |= tacho_region_begin("worker-only");
	store_n(7);
	w->err |= tacho_region_end("worker-only");
	pthread_barrier_wait(&w->done);
	pthread_barrier_wait(&w->report_taken);   /* alive while the report is made */
	return NULL;
}

/* The per-thread detail of threads alive: a region two threads share lists each with
 * its own exact figures; a region of one thread lists that thread with the region's. */
static void test_threads_detail(void **state)
{
	struct live_worker w = { .err = 0 };
	pthread_t th;
	char *buf = NULL;
	size_t len = 0;
	(void)state;
	NEED_EVENTS();

	pthread_barrier_init(&w.done, NULL, 2);
	pthread_barrier_init(&w.report_taken, NULL, 2);
	assert_int_equal(pthread_create(&th, NULL, live_worker_main, &w), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tacho_region_begin("both"), 0);
		store_n(50);
		assert_int_equal(tacho_region_end("both"), 0);
	}
	pthread_barrier_wait(&w.done);
	struct tacho_regions_report *r = report();
	pthread_barrier_wait(&w.report_taken);
	pthread_join(th, NULL);
	assert_int_equal(w.err, 0);
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tacho_regions_report_write(r, f, TACHO_FORMAT_JSON, NULL), 0);
	fclose(f);
	struct th_json *doc = assert_json(buf);
	const char *bp = tacho_regions_report_event(r, ev_bp);
	const struct th_json *both = assert_json_named(doc, "detail", "both");
	assert_json_int(both, "calls", 5);
	assert_json_int(both, "threads", 2);
	unsigned seen = 0;
	for (int i = 0; i < 2; i++) {
		char path[64];
		snprintf(path, sizeof(path), "per_thread[%d]", i);
		const struct th_json *one = th_json_get(both, path);
		assert_non_null(one);
		double calls = json_num(one, "calls"), n = json_num(th_json_get(one, "events"), bp);
		if (calls == 2 && n == 100)
			seen |= 1;   /* this thread: 2 x 50 */
		if (calls == 3 && n == 600)
			seen |= 2;   /* the worker: 3 x 200 */
	}
	assert_int_equal(seen, 3);
	assert_null(th_json_get(both, "per_thread[2]"));
	const struct th_json *own = assert_json_named(doc, "detail", "worker-only");
	assert_json_int(own, "threads", 1);
	assert_json_int(own, "per_thread[0].calls", 1);
	assert_json_int(th_json_get(own, "per_thread[0].events"), bp, 7);
	assert_null(th_json_get(own, "per_thread[1]"));
	th_json_free(doc);
	free(buf);
	tacho_regions_report_free(r);
	tacho_regions_reset();
	pthread_barrier_destroy(&w.done);
	pthread_barrier_destroy(&w.report_taken);
}

static int scoped(unsigned n, bool early)
{
	TACHO_REGION_SCOPE("scoped");
	store_n(n);
	if (early)
		return 1;   /* the region ends here too */
	store_n(n);
	return 0;
}

static void test_scope(void **state)
{
	(void)state;
	NEED_EVENTS();

	assert_int_equal(scoped(7, false), 0);
	assert_int_equal(scoped(7, true), 1);
	struct tacho_regions_report *r = report();
	const struct tacho_region_stat *st = find(r, "scoped");
	assert_int_equal(st->calls, 2);
	assert_int_equal(st->events[ev_bp]->total, 21);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

/* Names are strings, not pointers: a buffer reused with other contents is another
 * region; the same contents from another buffer is the same one. */
static void test_names_by_value(void **state)
{
	char buf[32];
	(void)state;
	NEED_EVENTS();

	for (int i = 0; i < 6; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i % 2);
		assert_int_equal(tacho_region_begin(buf), 0);
		store_n(1);
		strcpy(buf, i % 2 ? "name-1" : "name-0");   /* same contents, rewritten */
		assert_int_equal(tacho_region_end(buf), 0);
	}
	struct tacho_regions_report *r = report();
	assert_int_equal(find(r, "name-0")->calls, 3);
	assert_int_equal(find(r, "name-1")->calls, 3);
	assert_int_equal(find(r, "name-1")->events[ev_bp]->total, 3);
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

static void test_misuse(void **state)
{
	(void)state;
	NEED_EVENTS();

	assert_int_equal(tacho_region_begin(NULL), -EINVAL);
	assert_int_equal(tacho_region_end("never-begun"), -EINVAL);
	assert_int_equal(tacho_region_begin("x"), 0);
	/* the wrong name: nothing recorded, x stays open */
	assert_int_equal(tacho_region_end("y"), -EINVAL);
	store_n(2);
	assert_int_equal(tacho_region_end("x"), 0);
	/* 64 levels are allowed, the 65th is not */
	for (int i = 0; i < 64; i++)
		assert_int_equal(tacho_region_begin("deep"), 0);
	assert_int_equal(tacho_region_begin("deep"), -TACHO_EOUTOFRANGE);
	for (int i = 0; i < 64; i++)
		assert_int_equal(tacho_region_end("deep"), 0);
	assert_int_equal(tacho_regions_init(NULL, NULL), -EBUSY);

	struct tacho_regions_report *r = report();
	assert_int_equal(find(r, "x")->calls, 1);
	assert_int_equal(find(r, "x")->events[ev_bp]->total, 2);
	assert_null(tacho_regions_report_find(r, "y"));
	assert_int_equal(find(r, "deep")->calls, 64);
	assert_contains(tacho_regions_report_notes(r), "matched no open region");
	assert_contains(tacho_regions_report_notes(r), "deeper than 64");
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

/* After fork() the child counts its own work with its own counters (the inherited fds
 * would count the parent) and sees none of the parent's figures. */
static void test_fork(void **state)
{
	(void)state;
	NEED_EVENTS();

	assert_int_equal(tacho_region_begin("parent"), 0);
	store_n(5);
	assert_int_equal(tacho_region_end("parent"), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct tacho_regions_report *r = NULL;
		int bad = 0;
		tacho_region_begin("child");
		store_n(7);
		tacho_region_end("child");
		if (tacho_regions_report_new(&r))
			_exit(10);
		const struct tacho_region_stat *c = tacho_regions_report_find(r, "child");
		bad |= !c || c->calls != 1 || c->events[ev_bp]->total != 7 ? 1 : 0;
		bad |= tacho_regions_report_find(r, "parent") ? 2 : 0;
		tacho_regions_report_free(r);
		_exit(bad);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the parent goes on counting */
	assert_int_equal(tacho_region_begin("parent"), 0);
	store_n(6);
	assert_int_equal(tacho_region_end("parent"), 0);
	struct tacho_regions_report *r = report();
	assert_int_equal(find(r, "parent")->calls, 2);
	assert_int_equal(find(r, "parent")->events[ev_bp]->total, 11);
	assert_null(tacho_regions_report_find(r, "child"));
	tacho_regions_report_free(r);
	tacho_regions_reset();
}

/* The JSON contract: {"version": 1, "regions": [{"name", "calls", "time_ns",
 * "events": {EVENT: total}}]} with EVENT as spelled in the spec. */
static void test_json(void **state)
{
	char *buf = NULL, want[256];
	size_t len = 0;
	(void)state;
	NEED_EVENTS();

	assert_int_equal(tacho_region_begin("json"), 0);
	store_n(42);
	assert_int_equal(tacho_region_end("json"), 0);
	struct tacho_regions_report *r = report();
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(tacho_regions_report_write(r, f, TACHO_FORMAT_JSON, NULL), 0);
	fclose(f);
	/* valid JSON (no duplicate keys), the figures exact where they are written: the
	 * summary, the detail and the one thread's entry */
	struct th_json *doc = assert_json(buf);
	const char *bp = tacho_regions_report_event(r, ev_bp);
	assert_json_int(doc, "version", 1);
	const struct th_json *sum = assert_json_named(doc, "regions", "json");
	assert_json_int(sum, "calls", 1);
	assert_json_int(th_json_get(sum, "events"), bp, 42);
	assert_json_int(sum, "events.page-faults", 0);
	const struct th_json *det = assert_json_named(doc, "detail", "json");
	assert_json_int(det, "calls", 1);
	assert_json_int(det, "threads", 1);
	assert_json_int(th_json_get(det, "events"), "page-faults.total", 0);
	const struct th_json *dbp = th_json_get(th_json_get(det, "events"), bp);
	assert_non_null(dbp);
	assert_json_int(dbp, "total", 42);
	assert_json_int(dbp, "exclusive", 42);
	assert_json_int(det, "per_thread[0].calls", 1);
	assert_json_int(th_json_get(det, "per_thread[0].events"), bp, 42);
	th_json_free(doc);
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tacho_regions_report_write(r, f, TACHO_FORMAT_CSV, NULL), 0);
	fclose(f);
	assert_contains(buf, "region,quantity,status,calls,total,exclusive");
	snprintf(want, sizeof(want), "json,%s,counted,1,42,42,", tacho_regions_report_event(r, ev_bp));
	assert_contains(buf, want);
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_int_equal(tacho_regions_report_write(r, f, TACHO_FORMAT_TABLE, NULL), 0);
	fclose(f);
	assert_contains(buf, "page-faults");
	assert_contains(buf, "json");
	free(buf);
	tacho_regions_report_free(r);
	tacho_regions_reset();

	assert_int_equal(tc_format_of_path("x.json"), TACHO_FORMAT_JSON);
	assert_int_equal(tc_format_of_path("x.csv"), TACHO_FORMAT_CSV);
	assert_int_equal(tc_format_of_path("x.txt"), TACHO_FORMAT_TABLE);
	assert_int_equal(tc_format_of_path(NULL), TACHO_FORMAT_TABLE);
}

/* Natively the client requests change nothing and say no valgrind: regions measure,
 * and a mark for the simulator is a dump request nobody answers. */
static void test_sim_marks_native(void **state)
{
	(void)state;
	if (tc_valgrind_running())
		TEST_SKIP("this test runs on valgrind");
	tc_valgrind_dump_at(TC_VG_REGION_MARK "b:1:x");
	tc_region_sim_mark('b', "x");
	assert_false(tc_region_sim_on());
}

/* A report enumerates its regions in name order, each the one find returns for its
 * name, and says no past the end and for NULL. */
static void test_enumerate(void **state)
{
	static const char *const mine[] = { "enum-a", "enum-b", "enum-c" };
	size_t seen = 0;

	(void)state;
	assert_int_equal(tacho_region_begin("enum-c"), 0);
	assert_int_equal(tacho_region_begin("enum-a"), 0);
	assert_int_equal(tacho_region_end("enum-a"), 0);
	assert_int_equal(tacho_region_end("enum-c"), 0);
	assert_int_equal(tacho_region_begin("enum-b"), 0);
	assert_int_equal(tacho_region_end("enum-b"), 0);

	struct tacho_regions_report *r = report();
	size_t n = tacho_regions_report_nregions(r);
	assert_true(n >= 3);
	for (size_t i = 0; i < n; i++) {
		const struct tacho_region_stat *st = tacho_regions_report_region(r, i);
		assert_non_null(st);
		assert_ptr_equal(st, tacho_regions_report_find(r, st->name));
		if (i > 0)
			assert_true(strcmp(tacho_regions_report_region(r, i - 1)->name,
					   st->name) < 0);
		if (seen < ARRAY_SIZE(mine) && !strcmp(st->name, mine[seen])) {
			assert_int_equal(st->calls, 1);
			seen++;
		}
	}
	assert_int_equal(seen, ARRAY_SIZE(mine));
	assert_null(tacho_regions_report_region(r, n));
	assert_null(tacho_regions_report_region(r, SIZE_MAX));
	assert_null(tacho_regions_report_region(NULL, 0));
	assert_int_equal(tacho_regions_report_nregions(NULL), 0);
	tacho_regions_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_breakpoint_exact), cmocka_unit_test(test_page_faults_exact),
		cmocka_unit_test(test_page_faults_threads),
		cmocka_unit_test(test_accumulator_squares),
		cmocka_unit_test(test_held_once),
		cmocka_unit_test(test_empty_region),     cmocka_unit_test(test_nested),
		cmocka_unit_test(test_nested_deep),      cmocka_unit_test(test_new_names_inside),
		cmocka_unit_test(test_pointer_cache_neighbours),
		cmocka_unit_test(test_pointer_table),
		cmocka_unit_test(test_threads), cmocka_unit_test(test_threads_detail),
		cmocka_unit_test(test_scope),            cmocka_unit_test(test_names_by_value),
		cmocka_unit_test(test_misuse),           cmocka_unit_test(test_fork),
		cmocka_unit_test(test_json),             cmocka_unit_test(test_sim_marks_native),
		cmocka_unit_test(test_enumerate),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
