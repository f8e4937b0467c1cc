/* test-perf-counters.c - the counting engine on this machine's exact events: hardware
 * breakpoints, page faults, syscall tracepoints, context switches; group reads; the
 * breakpoint-register limit; scaling; following a child and its descendants.
 *
 * The test binary is also its own helper program: run with "--helper WHAT ARGS" it does
 * exactly WHAT and nothing else (no stdio), so that counts of a launched program are
 * known in advance. */
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "pages.h"
#include "perf/perf.h"
#include "perf/syscall.h"

static volatile long watched;    /* the breakpoint target */

/* --- the helper program --- */

static void helper_writes(int fd, long k)
{
	char c = 'x';

	for (long i = 0; i < k; i++)
		if (write(fd, &c, 1) != 1)
			_exit(3);
}

static int helper(int argc, char **argv)
{
	long k = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
	int fd;

	if (argc < 3)
		return 2;
	if (!strcmp(argv[2], "writes")) {              /* K writes to /dev/null */
		fd = open("/dev/null", O_WRONLY);
		helper_writes(fd, k);
		return 0;
	}
	if (!strcmp(argv[2], "fork-writes")) {         /* a grandchild does the K writes */
		pid_t p;
		int st;
		fd = open("/dev/null", O_WRONLY);
		p = fork();
		if (p == 0) {
			helper_writes(fd, k);
			_exit(0);
		}
		if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			return 4;
		return 0;
	}
	if (!strcmp(argv[2], "sleeps")) {              /* K sleeps of 1 ms */
		struct timespec ts = { 0, 1000000 };
		for (long i = 0; i < k; i++)
			nanosleep(&ts, NULL);
		return 0;
	}
	return 2;
}

/* --- helpers --- */

/* Specs point at their attrs: a pool that outlives every open of a test. */
static struct perf_event_attr *new_attr(void)
{
	static struct perf_event_attr pool[32];
	static unsigned next;
	struct perf_event_attr *a = &pool[next++ % ARRAY_SIZE(pool)];

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	return a;
}

static struct tacho_counter_spec bp_spec(const char *name, volatile void *addr, int group)
{
	struct perf_event_attr *a = new_attr();
	struct tacho_counter_spec s = { .name = name, .attr = a, .group = group };

	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = HW_BREAKPOINT_W;
	a->bp_addr = (uintptr_t)addr;
	a->bp_len = HW_BREAKPOINT_LEN_8;
	a->exclude_kernel = 1;       /* ':u', the seeds' "count in CPL 3" */
	return s;
}

static struct tacho_counter_spec sw_spec(const char *name, uint64_t config, int group)
{
	struct perf_event_attr *a = new_attr();
	struct tacho_counter_spec s = { .name = name, .attr = a, .group = group };

	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
	return s;
}

/* The open hook that notes what the engine asks the kernel for, then asks it. */
struct opens {
	size_t n;
	struct {
		pid_t pid;
		int cpu, group_fd, fd;
		uint64_t read_format;
		bool disabled, inherit, enable_on_exec;
	} o[64];
};

static int note_open(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	struct opens *r = arg;
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);

	if (r->n < ARRAY_SIZE(r->o)) {
		r->o[r->n].pid = pid;
		r->o[r->n].cpu = cpu;
		r->o[r->n].group_fd = group_fd;
		r->o[r->n].fd = fd < 0 ? -1 : (int)fd;
		r->o[r->n].read_format = attr->read_format;
		r->o[r->n].disabled = attr->disabled;
		r->o[r->n].inherit = attr->inherit;
		r->o[r->n].enable_on_exec = attr->enable_on_exec;
	}
	r->n++;
	return fd < 0 ? -errno : (int)fd;
}

/* The id of a tracepoint from tracefs, or -1 (the caller skips). */
static long long tracepoint_id(const char *sys, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];
	long long id;

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], sys, name);
		if (tc_read_int_file(path, &id) == 0)
			return id;
	}
	return -1;
}

static struct tacho_counter_spec tp_spec(const char *name, long long id, int group)
{
	struct perf_event_attr *a = new_attr();
	struct tacho_counter_spec s = { .name = name, .attr = a, .group = group };

	a->type = PERF_TYPE_TRACEPOINT;
	a->config = (uint64_t)id;
	/* not exclude_kernel: a tracepoint fires in the kernel, and with exclude_kernel
	 * the kernel drops every hit (perf_tp_event_match) */
	return s;
}

static struct tacho_counters *open_self(const struct tacho_counter_spec *s, size_t n)
{
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
	struct tacho_counters *c = NULL;

	assert_int_equal(tacho_counters_open(&o, s, n, sizeof(*s), &c), 0);
	assert_non_null(c);
	return c;
}

static void assert_counted(const struct tacho_count *v, uint64_t want)
{
	if (v->status != TACHO_COUNT_COUNTED || v->raw != want || v->value != (double)want)
		fail_msg("%s: status %s raw %llu value %g, want counted %llu (%s)", v->name,
			 tacho_count_status_name(v->status), (unsigned long long)v->raw,
			 v->value, (unsigned long long)want, v->why ? v->why : "");
	assert_true(v->enabled_ns > 0);
	assert_true(v->running_ns == v->enabled_ns);
	assert_true(v->coverage == 1.0);
	assert_int_equal(v->err, 0);
}

static char self_exe[4096];

/* Runs the helper as a launched child with the specs; returns its exit status. */
static int count_child(const char *what, const char *arg, const struct tacho_counter_spec *s,
		       size_t n, bool no_inherit, struct tacho_count *out)
{
	char *argv[] = { self_exe, (char *)"--helper", (char *)what, (char *)arg, NULL };
	struct tacho_child *ch;
	struct tacho_counters *c;
	struct tacho_exit ex;
	int exec_err;

	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_CHILD,
					 .pid = tacho_child_pid(ch), .no_inherit = no_inherit };
	assert_int_equal(tacho_counters_open(&o, s, n, sizeof(*s), &c), 0);
	assert_int_equal(tacho_child_exec(ch, &exec_err), 0);
	assert_int_equal(tacho_child_wait(ch, &ex), 0);
	assert_int_equal(tacho_counters_read(c, out, n, sizeof(*out)), 0);
	tacho_counters_free(c);
	tacho_child_free(ch);
	return ex.status;
}

/* --- tests --- */

static void test_breakpoint_exact(void **state)
{
	static const long ns[] = { 0, 1, 7, 1000, 123457 };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_BREAKPOINT_DATA);

	for (size_t k = 0; k < ARRAY_SIZE(ns); k++) {
		struct tacho_counter_spec s = bp_spec("mem:watched:w", &watched, 0);
		struct tacho_counters *c = open_self(&s, 1);
		struct tacho_count v;

		/* disabled until enabled: these stores must not count */
		watched = -1;
		assert_int_equal(tacho_counters_enable(c), 0);
		for (long i = 0; i < ns[k]; i++)
			watched = i;
		assert_int_equal(tacho_counters_disable(c), 0);
		watched = -2;
		assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
		if (ns[k] == 0) {
			/* enabled, on a counter, and nothing happened: a true zero */
			assert_int_equal(v.status, TACHO_COUNT_COUNTED);
			assert_int_equal(v.raw, 0);
		} else {
			assert_counted(&v, (uint64_t)ns[k]);
		}
		/* reset zeroes; a second window counts from zero */
		assert_int_equal(tacho_counters_reset(c), 0);
		assert_int_equal(tacho_counters_enable(c), 0);
		watched = 5;
		watched = 6;
		assert_int_equal(tacho_counters_disable(c), 0);
		assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
		assert_counted(&v, 2);
		tacho_counters_free(c);
	}
}

static void test_never_enabled_is_not_counted(void **state)
{
	/* an event no proof is asked for: the reason is the one rule's */
	struct tacho_counter_spec s = sw_spec("context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 0);
	struct tacho_counters *c = open_self(&s, 1);
	struct tacho_count v;
	(void)state;

	watched = 1;
	assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
	assert_int_equal(v.status, TACHO_COUNT_NOT_COUNTED);
	assert_true(isnan(v.value));
	assert_non_null(v.why);
	assert_contains(v.why, "never enabled");
	tacho_counters_free(c);
}

static void test_page_faults_exact(void **state)
{
	static const size_t pages[] = { 1, 17, 256 };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	for (size_t k = 0; k < ARRAY_SIZE(pages); k++) {
		size_t n = pages[k];
		struct tacho_counter_spec s[2] = {
			sw_spec("page-faults", PERF_COUNT_SW_PAGE_FAULTS, 0),
			sw_spec("minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, 0),
		};
		char *p = th_pages_map(n);
		struct tacho_counters *c;
		struct tacho_count v[2];

		assert_non_null(p);
		c = open_self(s, 2);
		assert_int_equal(tacho_counters_enable(c), 0);
		th_pages_touch(p, n);
		assert_int_equal(tacho_counters_disable(c), 0);
		assert_int_equal(tacho_counters_read(c, v, 2, sizeof(*v)), 0);
		assert_counted(&v[0], n);
		assert_counted(&v[1], n);
		tacho_counters_free(c);
		th_pages_unmap(p, n);
	}
}

/* Arrays go with the caller's element size: a program built against a newer header,
 * whose elements have a field this library does not know, is read and written at its
 * stride, its field left alone; an element smaller than the first version is refused. */
static void test_element_sizes(void **state)
{
	enum { N = 19 };
	struct newer_spec {
		struct tacho_counter_spec s;
		long future;
	} specs[2] = {
		{ sw_spec("page-faults", PERF_COUNT_SW_PAGE_FAULTS, 0), -1 },
		{ sw_spec("minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, 0), -1 },
	};
	struct newer_count {
		struct tacho_count c;
		uint64_t future;
	} v[2] = { { .future = 0xfeed }, { .future = 0xbeef } };
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
	struct tacho_counters *c = NULL;
	char *p = th_pages_map(N);
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	assert_non_null(p);
	assert_int_equal(tacho_counters_open(&o, &specs[0].s, 2,
					     offsetof(struct tacho_counter_spec, group), &c),
			 -EINVAL);
	assert_null(c);
	assert_int_equal(tacho_counters_open(&o, &specs[0].s, 2, sizeof(specs[0]), &c), 0);
	assert_int_equal(tacho_counters_enable(c), 0);
	th_pages_touch(p, N);
	assert_int_equal(tacho_counters_disable(c), 0);
	assert_int_equal(tacho_counters_read(c, &v[0].c, 2, offsetof(struct tacho_count, hint)),
			 -EINVAL);
	assert_int_equal(tacho_counters_read(c, &v[0].c, 2, sizeof(v[0])), 0);
	assert_string_equal(v[0].c.name, "page-faults");
	assert_string_equal(v[1].c.name, "minor-faults");
	assert_counted(&v[0].c, N);
	assert_counted(&v[1].c, N);
	assert_int_equal(v[0].future, 0xfeed);
	assert_int_equal(v[1].future, 0xbeef);
	tacho_counters_free(c);
	th_pages_unmap(p, N);
}

static void test_syscall_tracepoint_exact(void **state)
{
	long long id = tracepoint_id("syscalls", "sys_enter_write");
	struct tacho_counter_spec s;
	struct tacho_counters *c;
	struct tacho_count v;
	int fd;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (id < 0)
		TEST_SKIP("tracefs has no syscalls/sys_enter_write (tracefs not mounted, or "
			  "a kernel without syscall tracepoints)");
	s = tp_spec("syscalls:sys_enter_write", id, 0);
	c = open_self(&s, 1);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(tacho_counters_enable(c), 0);
	helper_writes(fd, 333);
	assert_int_equal(tacho_counters_disable(c), 0);
	close(fd);
	assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
	assert_counted(&v, 333);
	tacho_counters_free(c);
}

static void test_group_read_ids_in_order(void **state)
{
	static volatile long a, b;
	struct tacho_counter_spec s[4] = {
		bp_spec("a", &a, 7), bp_spec("b", &b, 7),
		sw_spec("page-faults", PERF_COUNT_SW_PAGE_FAULTS, 7),
		sw_spec("alone", PERF_COUNT_SW_PAGE_FAULTS, TACHO_GROUP_NONE),
	};
	struct opens op = { 0 };
	struct tacho_counters *c;
	struct tacho_count v[4];
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_BREAKPOINT_DATA);

	tc_perf_set_passing_open_hook(note_open, &op);
	c = open_self(s, 4);
	tc_perf_set_open_hook(NULL, NULL);
	/* one group of three and one alone, every one read whole by one read(2) with
	 * the ids that map the values back; leaders disabled, members enabled */
	assert_int_equal(op.n, 4);
	assert_int_equal(op.o[0].group_fd, -1);
	assert_true(op.o[0].disabled);
	for (size_t i = 1; i < 3; i++) {
		assert_int_equal(op.o[i].group_fd, op.o[0].fd);
		assert_false(op.o[i].disabled);
	}
	assert_int_equal(op.o[3].group_fd, -1);
	for (size_t i = 0; i < 4; i++)
		assert_true(op.o[i].read_format ==
			    (PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			     PERF_FORMAT_TOTAL_TIME_RUNNING));
	assert_int_equal(tacho_counters_opened(c), 4);
	assert_int_equal(tacho_counters_enable(c), 0);
	for (int i = 0; i < 10; i++)
		a = i;
	for (int i = 0; i < 20; i++)
		b = i;
	assert_int_equal(tacho_counters_disable(c), 0);
	assert_int_equal(tacho_counters_read(c, v, 4, sizeof(*v)), 0);
	assert_string_equal(v[0].name, "a");
	assert_counted(&v[0], 10);
	assert_string_equal(v[1].name, "b");
	assert_counted(&v[1], 20);
	assert_string_equal(v[3].name, "alone");
	/* the group ran as one: the same enabled time for each member */
	assert_true(v[0].enabled_ns == v[1].enabled_ns && v[1].enabled_ns == v[2].enabled_ns);
	tacho_counters_free(c);
}

static void test_fifth_breakpoint_enospc(void **state)
{
	static volatile long w[5];
	struct tacho_counter_spec s[5];
	struct tacho_counters *c;
	struct tacho_count v[5];
	(void)state;

	for (int i = 0; i < 5; i++)
		s[i] = bp_spec("mem", &w[i], TACHO_GROUP_NONE);
	c = open_self(s, 5);
	assert_int_equal(tacho_counters_opened(c), 4);
	assert_int_equal(tacho_counters_enable(c), 0);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j <= i; j++)
			w[i] = j;
	assert_int_equal(tacho_counters_disable(c), 0);
	assert_int_equal(tacho_counters_read(c, v, 5, sizeof(*v)), 0);
	/* the four count exactly where breakpoints fire; where they never do, each says
	 * so (the registers are taken all the same: the fifth still cannot open) */
	for (int i = 0; i < 4; i++) {
		const char *why;
		if (th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, &why)) {
			assert_counted(&v[i], (uint64_t)i + 1);
		} else {
			assert_int_equal(v[i].status, TACHO_COUNT_NOT_COUNTED);
			assert_int_equal(v[i].err, -TACHO_ESILENT);
			assert_string_equal(v[i].why, why);
			assert_true(isnan(v[i].value));
		}
	}
	assert_int_equal(v[4].status, TACHO_COUNT_NOT_SUPPORTED);
	assert_int_equal(v[4].err, -ENOSPC);
	assert_true(isnan(v[4].value));
	assert_contains(v[4].why, "all hardware breakpoint registers are taken");
	assert_contains(v[4].why, "four (DR0-DR3)");
	tacho_counters_free(c);

	/* the same five as one group: the fifth member cannot join, the four stay */
	for (int i = 0; i < 5; i++)
		s[i].group = 1;
	c = open_self(s, 5);
	assert_int_equal(tacho_counters_opened(c), 4);
	assert_int_equal(tacho_counters_read(c, v, 5, sizeof(*v)), 0);
	assert_int_equal(v[4].status, TACHO_COUNT_NOT_SUPPORTED);
	assert_int_equal(v[4].err, -ENOSPC);
	tacho_counters_free(c);
}

static void test_scale_arithmetic(void **state)
{
	static const struct {
		uint64_t raw, ena, run;
		double want;
	} cases[] = {
		{ 100, 1000, 1000, 100 },
		{ 100, 1000, 500, 200 },
		{ 3, 10, 4, 7.5 },
		{ 0, 1000, 10, 0 },
		{ 1, 3, 2, 1.5 },
		/* raw * enabled overflows 64 bits: 2^40 * 2^40 / 2^39 */
		{ 1ull << 40, 1ull << 40, 1ull << 39, 2199023255552.0 },
		{ UINT64_MAX, 4, 2, 36893488147419103230.0 },
		/* running > enabled cannot be, but must not shrink the value */
		{ 50, 10, 20, 50 },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		double got = tc_count_scale(cases[i].raw, cases[i].ena, cases[i].run);
		if (fabs(got - cases[i].want) > 1e-9 * fabs(cases[i].want))
			fail_msg("case %zu: got %.17g want %.17g", i, got, cases[i].want);
	}
	/* the one rule: time running 0 is not counted and no number, whatever the count */
	assert_true(isnan(tc_count_scale(5, 10, 0)));
	assert_true(isnan(tc_count_scale(0, 0, 0)));
	assert_int_equal(tc_count_status(10, 0), TACHO_COUNT_NOT_COUNTED);
	assert_int_equal(tc_count_status(0, 0), TACHO_COUNT_NOT_COUNTED);
	assert_int_equal(tc_count_status(10, 10), TACHO_COUNT_COUNTED);
	assert_int_equal(tc_count_status(10, 20), TACHO_COUNT_COUNTED);
	assert_int_equal(tc_count_status(10, 3), TACHO_COUNT_MULTIPLEXED);
	assert_string_equal(tacho_count_status_name(TACHO_COUNT_COUNTED), "counted");
	assert_string_equal(tacho_count_status_name(TACHO_COUNT_MULTIPLEXED), "multiplexed");
	assert_string_equal(tacho_count_status_name(TACHO_COUNT_NOT_COUNTED), "not counted");
	assert_string_equal(tacho_count_status_name(TACHO_COUNT_NOT_SUPPORTED), "not supported");
}

/* A fake perf fd: a pipe whose read end holds the bytes a read(2) of a single event
 * ({value, enabled, running, id}) would return. */
struct fake {
	uint64_t rec[8][4];
	int n, fds[8];
	unsigned eof;    /* bit i: the i-th read gives end-of-file (a pinned event in error) */
};

static int fake_open(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	struct fake *f = arg;
	int p[2];

	assert_false(attr->read_format & PERF_FORMAT_GROUP);
	assert_true(f->n < 8);
	assert_int_equal(pipe(p), 0);
	if (!(f->eof & (1u << f->n)))
		assert_int_equal(write(p[1], f->rec[f->n], sizeof(f->rec[0])), sizeof(f->rec[0]));
	close(p[1]);
	f->fds[f->n] = p[0];
	return p[0] + 0 * f->n++;
}

static void test_statuses_on_synthetic_reads(void **state)
{
	struct fake f = { .rec = {
		{ 1000, 500, 500, 1 },      /* counted */
		{ 1000, 800, 200, 2 },      /* multiplexed, coverage 0.25: 4000 */
		{ 0, 800, 0, 3 },           /* enabled, never on a counter */
		{ 0, 0, 0, 4 },             /* never enabled */
		{ 0 },                      /* read() gives 0 bytes: a pinned event in error */
	}, .eof = 1u << 4 };
	struct tacho_counter_spec s[5];
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD,
					 .no_group_read = true };
	struct tacho_counters *c;
	struct tacho_count v[5];
	(void)state;

	for (int i = 0; i < 5; i++)
		s[i] = sw_spec("e", PERF_COUNT_SW_DUMMY, TACHO_GROUP_NONE);
	tc_perf_set_open_hook(fake_open, &f);
	assert_int_equal(tacho_counters_open(&o, s, 5, sizeof(*s), &c), 0);
	tc_perf_set_open_hook(NULL, NULL);
	/* the end-of-file of one pinned event must not fail the read of the others */
	assert_int_equal(tacho_counters_read(c, v, 5, sizeof(*v)), 0);
	assert_int_equal(v[0].status, TACHO_COUNT_COUNTED);
	assert_true(v[0].value == 1000 && v[0].coverage == 1.0);
	assert_int_equal(v[1].status, TACHO_COUNT_MULTIPLEXED);
	assert_int_equal(v[1].raw, 1000);
	assert_true(v[1].value == 4000 && v[1].coverage == 0.25);
	assert_int_equal(v[2].status, TACHO_COUNT_NOT_COUNTED);
	assert_true(isnan(v[2].value));
	assert_contains(v[2].why, "never got a counter");
	assert_int_equal(v[3].status, TACHO_COUNT_NOT_COUNTED);
	assert_contains(v[3].why, "never enabled");
	assert_int_equal(v[4].status, TACHO_COUNT_NOT_COUNTED);
	assert_true(isnan(v[4].value));
	assert_contains(v[4].why, "pinned event");
	tacho_counters_free(c);
}

static void test_child_writes_exact(void **state)
{
	long long id = tracepoint_id("syscalls", "sys_enter_write");
	struct tacho_counter_spec s[2];
	struct tacho_count v[2];
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (id < 0)
		TEST_SKIP("tracefs has no syscalls/sys_enter_write");
	s[0] = tp_spec("syscalls:sys_enter_write", id, 0);
	s[1] = sw_spec("task-clock", PERF_COUNT_SW_TASK_CLOCK, 0);
	/* enable_on_exec: nothing of the fork and the wait before exec is counted */
	assert_int_equal(count_child("writes", "41", s, 2, false, v), 0);
	assert_counted(&v[0], 41);
	assert_int_equal(v[1].status, TACHO_COUNT_COUNTED);
	assert_true(v[1].raw > 0);
}

static void test_child_follows_grandchild(void **state)
{
	long long id = tracepoint_id("syscalls", "sys_enter_write");
	struct tacho_counter_spec s;
	struct tacho_count v;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (id < 0)
		TEST_SKIP("tracefs has no syscalls/sys_enter_write");
	s = tp_spec("syscalls:sys_enter_write", id, 0);
	assert_int_equal(count_child("fork-writes", "29", &s, 1, false, &v), 0);
	assert_counted(&v, 29);
	/* without inheritance the grandchild's writes are not the child's */
	assert_int_equal(count_child("fork-writes", "29", &s, 1, true, &v), 0);
	assert_counted(&v, 0);
}

static void test_child_sleeps_switch(void **state)
{
	struct tacho_counter_spec s = sw_spec("context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, 0);
	struct tacho_count v;
	(void)state;

	assert_int_equal(count_child("sleeps", "25", &s, 1, false, &v), 0);
	assert_int_equal(v.status, TACHO_COUNT_COUNTED);
	/* every sleep gives the CPU away at least once: a lower bound that holds exactly */
	if (v.raw < 25)
		fail_msg("context-switches %llu < 25 sleeps", (unsigned long long)v.raw);
}

static pthread_barrier_t bar;
static int writer_fd;

static void *writer_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar);     /* counters open */
	pthread_barrier_wait(&bar);     /* counters enabled */
	helper_writes(writer_fd, 57);
	pthread_barrier_wait(&bar);     /* done */
	return NULL;
}

static void test_process_target_threads(void **state)
{
	long long id = tracepoint_id("syscalls", "sys_enter_write");
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_PROCESS };
	struct tacho_counter_spec s;
	struct tacho_counters *c;
	struct tacho_count v;
	struct opens op = { 0 };
	pid_t *tids;
	size_t ntids;
	pthread_t t;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (id < 0)
		TEST_SKIP("tracefs has no syscalls/sys_enter_write");
	s = tp_spec("syscalls:sys_enter_write", id, 0);
	writer_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pthread_barrier_init(&bar, NULL, 2);
	assert_int_equal(pthread_create(&t, NULL, writer_thread, NULL), 0);
	/* the thread exists before the open, so /proc/self/task lists it: one open per
	 * thread, on any CPU, following what each one creates */
	assert_int_equal(tc_proc_threads(0, &tids, &ntids), 0);
	assert_true(ntids >= 2);
	tc_perf_set_passing_open_hook(note_open, &op);
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), 0);
	tc_perf_set_open_hook(NULL, NULL);
	assert_int_equal(op.n, ntids);
	for (size_t i = 0; i < ntids; i++) {
		assert_int_equal(op.o[i].pid, tids[i]);
		assert_int_equal(op.o[i].cpu, -1);
		assert_true(op.o[i].inherit);
	}
	free(tids);
	pthread_barrier_wait(&bar);
	assert_int_equal(tacho_counters_enable(c), 0);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	assert_int_equal(tacho_counters_disable(c), 0);
	pthread_join(t, NULL);
	assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
	assert_counted(&v, 57);
	tacho_counters_free(c);
	close(writer_fd);
	pthread_barrier_destroy(&bar);
}

static void test_cpu_target(void **state)
{
	long long id = tracepoint_id("syscalls", "sys_enter_write");
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_CPUS };
	struct tacho_counter_spec s;
	struct tacho_counters *c;
	struct tacho_count v;
	struct opens op = { 0 };
	int *cpus, fd;
	size_t ncpu;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (id < 0)
		TEST_SKIP("tracefs has no syscalls/sys_enter_write");
	s = tp_spec("syscalls:sys_enter_write", id, 0);
	assert_int_equal(tc_online_cpus(&cpus, &ncpu), 0);
	tc_perf_set_passing_open_hook(note_open, &op);
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), 0);
	tc_perf_set_open_hook(NULL, NULL);
	/* every online CPU, every task on it, nothing to inherit */
	assert_int_equal(op.n, ncpu);
	for (size_t i = 0; i < ncpu; i++) {
		assert_int_equal(op.o[i].pid, -1);
		assert_int_equal(op.o[i].cpu, cpus[i]);
		assert_false(op.o[i].inherit);
	}
	if (!tacho_counters_opened(c)) {
		assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
		TEST_SKIP("this user may not count whole CPUs: %s", v.why);
	}
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_int_equal(tacho_counters_enable(c), 0);
	helper_writes(fd, 100);
	assert_int_equal(tacho_counters_disable(c), 0);
	close(fd);
	assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
	assert_int_equal(v.status, TACHO_COUNT_COUNTED);
	/* every task on every CPU is counted: ours at least */
	if (v.raw < 100)
		fail_msg("CPU-wide writes %llu < 100", (unsigned long long)v.raw);
	tacho_counters_free(c);

	/* an explicit list of one CPU */
	o.cpus = cpus + ncpu - 1;
	o.ncpus = 1;
	memset(&op, 0, sizeof(op));
	tc_perf_set_passing_open_hook(note_open, &op);
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), 0);
	tc_perf_set_open_hook(NULL, NULL);
	assert_int_equal(op.n, 1);
	assert_int_equal(op.o[0].cpu, cpus[ncpu - 1]);
	tacho_counters_free(c);
	free(cpus);
}

static void test_open_evlist(void **state)
{
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
	struct tacho_evlist *list;
	struct tacho_counters *c;
	struct tacho_count v[3];
	struct tacho_diag d = { .sz = sizeof(d) };
	struct opens op = { 0 };
	char *p;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	assert_int_equal(tacho_evlist_parse("page-faults,{minor-faults,major-faults}", &list,
					    &d), 0);
	tc_perf_set_passing_open_hook(note_open, &op);
	assert_int_equal(tacho_counters_open_evlist(&o, list, NULL, &c), 0);
	tc_perf_set_open_hook(NULL, NULL);
	/* the user's {group}: major-faults joins minor-faults; the lone page-faults is a
	 * group of one */
	assert_int_equal(op.n, 3);
	assert_int_equal(op.o[0].group_fd, -1);
	assert_int_equal(op.o[1].group_fd, -1);
	assert_int_equal(op.o[2].group_fd, op.o[1].fd);
	assert_int_equal(tacho_counters_count(c), 3);
	p = th_pages_map(10);
	assert_non_null(p);
	assert_int_equal(tacho_counters_enable(c), 0);
	th_pages_touch(p, 10);
	assert_int_equal(tacho_counters_disable(c), 0);
	assert_int_equal(tacho_counters_read(c, v, 3, sizeof(*v)), 0);
	assert_string_equal(v[0].name, "page-faults");
	assert_string_equal(v[1].name, "minor-faults");
	assert_string_equal(v[2].name, "major-faults");
	assert_counted(&v[0], 10);
	assert_counted(&v[1], 10);
	assert_counted(&v[2], 0);
	tacho_counters_free(c);

	/* the caller's grouping instead: all three in one group, led by page-faults */
	int groups[3] = { 4, 4, 4 };
	memset(&op, 0, sizeof(op));
	tc_perf_set_passing_open_hook(note_open, &op);
	assert_int_equal(tacho_counters_open_evlist(&o, list, groups, &c), 0);
	tc_perf_set_open_hook(NULL, NULL);
	assert_int_equal(op.n, 3);
	assert_int_equal(op.o[0].group_fd, -1);
	assert_int_equal(op.o[1].group_fd, op.o[0].fd);
	assert_int_equal(op.o[2].group_fd, op.o[0].fd);
	tacho_counters_free(c);
	tacho_evlist_free(list);
	th_pages_unmap(p, 10);
	assert_int_equal(tacho_counters_open_evlist(&o, NULL, NULL, &c), -EINVAL);
}

/* Too many open files: the real EMFILE, in a child whose descriptor limit is low. The
 * events are task-clock, a timer that TACHO_TEST_NOT_FIRING leaves counting: the source
 * is incidental here, the descriptors left over are what is checked. */
static int emfile_child(void)
{
	struct tacho_counter_spec s[8];
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
	struct tacho_counters *c;
	struct tacho_count v[8];
	struct rlimit rl;
	char want[64];
	int fd, emfile = 0;

	for (int i = 0; i < 8; i++)
		s[i] = sw_spec("task-clock", PERF_COUNT_SW_TASK_CLOCK, TACHO_GROUP_NONE);
	fd = open("/dev/null", O_RDONLY);     /* the lowest free descriptor */
	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl))
		return 10;
	close(fd);
	rl.rlim_cur = (rlim_t)fd + 3;         /* room for three events */
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 11;
	if (tacho_counters_open(&o, s, 8, sizeof(*s), &c))
		return 12;
	if (tacho_counters_opened(c) != 3)
		return 13;
	if (tacho_counters_read(c, v, 8, sizeof(*v)))
		return 14;
	snprintf(want, sizeof(want), "the limit is %d", fd + 3);
	for (int i = 0; i < 8; i++) {
		/* the event is supported: it was not counted, for want of descriptors */
		if (v[i].status == TACHO_COUNT_NOT_SUPPORTED)
			return 17;
		if (!v[i].err)
			continue;   /* one of the three that opened (never enabled here) */
		if (v[i].status != TACHO_COUNT_NOT_COUNTED)
			return 18;
		if (v[i].err != -EMFILE || !strstr(v[i].why, "too many open files") ||
		    !strstr(v[i].why, want) || !strstr(v[i].why, "ulimit -n"))
			return 15;
		emfile++;
	}
	tacho_counters_free(c);
	return emfile == 5 ? 0 : 16;
}

static void test_emfile_explained(void **state)
{
	pid_t p;
	int st;
	(void)state;

	fflush(NULL);
	p = fork();
	assert_true(p >= 0);
	if (p == 0)
		_exit(emfile_child());
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st))
		fail_msg("EMFILE child failed at step %d", WEXITSTATUS(st));
}

static void test_bad_targets(void **state)
{
	struct tacho_counter_spec s = sw_spec("task-clock", PERF_COUNT_SW_TASK_CLOCK, 0);
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_PROCESS,
					 .pid = 0x3ffffff };
	struct tacho_counters *c = NULL;
	int bad_cpu = -3;
	(void)state;

	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), -ESRCH);
	assert_null(c);
	o.target = TACHO_TARGET_THREAD;
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), -ESRCH);
	o.target = TACHO_TARGET_CHILD;
	o.pid = 0;
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), -EINVAL);
	o.target = TACHO_TARGET_CPUS;
	o.cpus = &bad_cpu;
	o.ncpus = 1;
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), -EINVAL);
	o.target = (enum tacho_target)99;
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), -EINVAL);
	o.sz = 0;
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), -EINVAL);
	assert_int_equal(tacho_counters_open(NULL, &s, 1, sizeof(s), &c), -EINVAL);
	tacho_counters_free(NULL);
	assert_int_equal(tacho_counters_enable(NULL), -EINVAL);
}

/* Options from a program built against a newer tacho.h: a field this library does not
 * know, set, is refused (-TACHO_EVERSION) before anything opens; left zero, the options
 * are this library's (here the missing process answers). */
static void test_newer_opts(void **state)
{
	struct tacho_counter_spec s = sw_spec("task-clock", PERF_COUNT_SW_TASK_CLOCK, 0);
	struct {
		struct tacho_counters_opts o;
		long future;
	} n;
	struct tacho_counters *c = NULL;
	(void)state;

	memset(&n, 0, sizeof(n));
	n.o.sz = sizeof(n);
	n.o.target = TACHO_TARGET_PROCESS;
	n.o.pid = 0x3ffffff;
	n.future = 1;
	assert_int_equal(tacho_counters_open(&n.o, &s, 1, sizeof(s), &c), -TACHO_EVERSION);
	assert_null(c);
	n.future = 0;
	assert_int_equal(tacho_counters_open(&n.o, &s, 1, sizeof(s), &c), -ESRCH);
	assert_null(c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_breakpoint_exact),
		cmocka_unit_test(test_never_enabled_is_not_counted),
		cmocka_unit_test(test_page_faults_exact),
		cmocka_unit_test(test_element_sizes),
		cmocka_unit_test(test_syscall_tracepoint_exact),
		cmocka_unit_test(test_group_read_ids_in_order),
		cmocka_unit_test(test_fifth_breakpoint_enospc),
		cmocka_unit_test(test_scale_arithmetic),
		cmocka_unit_test(test_statuses_on_synthetic_reads),
		cmocka_unit_test(test_child_writes_exact),
		cmocka_unit_test(test_child_follows_grandchild),
		cmocka_unit_test(test_child_sleeps_switch),
		cmocka_unit_test(test_process_target_threads),
		cmocka_unit_test(test_cpu_target),
		cmocka_unit_test(test_open_evlist),
		cmocka_unit_test(test_emfile_explained),
		cmocka_unit_test(test_bad_targets),
		cmocka_unit_test(test_newer_opts),
	};
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--helper"))
		return helper(argc, argv);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
