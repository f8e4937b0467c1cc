/* test-region-env.c - regions set up from the environment, as a program that never
 * calls tacho_regions_init sees them: TACHO_EVENTS (good, bad, not countable here),
 * TACHO_OUTPUT (.json, .csv, a table, an unwritable path), the report at exit. Each
 * case runs in a forked child, which exits normally so that the report is written by
 * the exit hook. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "pages.h"
#include "tacho.h"
#include "regions/region.h"

static char out_path[256];
static bool child_as_nobody;   /* the child drops to nobody before its program */
static volatile uint64_t watched __attribute__((aligned(8)));

static int log_calls;
static void count_log(void *arg, enum tacho_log_level level, const char *msg)
{
	(void)arg;
	(void)msg;
	if (level == TACHO_LOG_WARN)
		log_calls++;
}

/* The child's program: three calls of "work", each faulting on 5 pages, and one
 * empty region; with a log callback when asked. */
static void child_program(bool with_log)
{
	if (with_log)
		tacho_set_log(count_log, NULL, TACHO_LOG_WARN);
	for (int i = 0; i < 3; i++) {
		if (tacho_region_begin("work"))
			_exit(98);
		if (th_fault_pages(5))
			_exit(99);
		if (tacho_region_end("work"))
			_exit(97);
	}
	tacho_region_begin("nothing");
	tacho_region_end("nothing");
	tacho_region_begin("stores");
	for (int i = 0; i < 123; i++)
		watched = (uint64_t)i;
	tacho_region_end("stores");
	if (with_log && log_calls != 1)
		_exit(96);   /* the bad spec is logged exactly once */
	exit(0);   /* the report is written by the exit hook */
}

struct result {
	int status;
	char *err;     /* the child's stderr */
	char *file;    /* the report file, or NULL */
};

static char *slurp_fd(int fd)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	ssize_t n;

	assert_non_null(buf);
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = 0;
	return buf;
}

static void run_child(struct result *r, const char *events, const char *output, bool with_log)
{
	int pfd[2];
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (output)
		unlink(output);
	assert_int_equal(pipe(pfd), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(pfd[0]);
		dup2(pfd[1], 2);
		if (events && !strcmp(events, "BREAKPOINT")) {
			/* the address is this process's: the spec is made here */
			char spec[64];
			snprintf(spec, sizeof(spec), "mem:%p/8:w", (void *)&watched);
			setenv("TACHO_EVENTS", spec, 1);
		} else if (events)
			setenv("TACHO_EVENTS", events, 1);
		else
			unsetenv("TACHO_EVENTS");
		if (output)
			setenv("TACHO_OUTPUT", output, 1);
		else
			unsetenv("TACHO_OUTPUT");
		if (child_as_nobody && (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
					setresuid(65534, 65534, 65534)))
			_exit(95);
		child_program(with_log);
	}
	close(pfd[1]);
	r->err = slurp_fd(pfd[0]);
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
	if (output) {
		FILE *f = fopen(output, "r");
		if (f) {
			r->file = slurp_fd(fileno(f));
			fclose(f);
		}
		unlink(output);
	}
}

static void result_free(struct result *r)
{
	free(r->err);
	free(r->file);
}

/* run_child for a report that must hold want (the 15 page faults of "work", exactly).
 * The counts are exact, but the kernel may add a page fault now and then (a page that
 * compaction is moving faults once more when touched: seen in a full suite under load,
 * 16 for 15 in every child of one burst of it), so a report without want is made
 * again once, and only one that misses it again fails. */
static void run_child_exact(struct result *r, const char *events, const char *output,
			    bool with_log, const char *want)
{
	run_child(r, events, output, with_log);
	if (r->file && !strstr(r->file, want)) {
		print_message("the report lacked \"%s\" once; running the child again\n", want);
		result_free(r);
		run_child(r, events, output, with_log);
	}
}

static void expect_exit0(const struct result *r)
{
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
		fail_msg("child ended with status %#x; stderr:\n%s", r->status, r->err);
}

static void test_time_only_table_on_stderr(void **state)
{
	struct result r;
	(void)state;

	run_child(&r, NULL, NULL, false);
	expect_exit0(&r);
	assert_contains(r.err, "tacho regions");
	assert_contains(r.err, "work");
	assert_contains(r.err, "nothing");
	assert_contains(r.err, "time only");
	result_free(&r);
}

/* Time alone: once a literal has been begun at a depth, its begins and ends there take
 * the short path, and so do the calibration's pairs (what is subtracted is what that
 * path costs): a handful of full calls, not the calibration's 301 pairs' 602 ends. */
static void test_time_only_short_path(void **state)
{
	pid_t pid;
	int status;
	(void)state;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		unsetenv("TACHO_EVENTS");
		setenv("TACHO_OUTPUT", "/dev/null", 1);
		unsigned long n0 = 0;
		for (int i = 0; i < 1000; i++) {
			if (tacho_region_begin("short-outer") || tacho_region_begin("short-inner") ||
			    tacho_region_end("short-inner") || tacho_region_end("short-outer"))
				_exit(90);
			if (i == 0)
				n0 = tc_regions_full_calls();
		}
		if (n0 == 0 || n0 > 8)
			_exit(91);   /* the first round's two begins, the calibration's few */
		if (tc_regions_full_calls() != n0)
			_exit(92);
		/* a name not seen at that depth takes the full path once, then the short */
		for (int i = 0; i < 10; i++)
			if (tacho_region_begin("short-inner") || tacho_region_end("short-inner"))
				_exit(93);
		if (tc_regions_full_calls() != n0 + 1)
			_exit(94);
		/* each end counted its own region: the short end's record is the innermost */
		struct tacho_regions_report *r = NULL;
		if (tacho_regions_report_new(&r) || !r)
			_exit(95);
		const struct tacho_region_stat *o = tacho_regions_report_find(r, "short-outer");
		const struct tacho_region_stat *in = tacho_regions_report_find(r, "short-inner");
		_exit(o && in && o->calls == 1000 && in->calls == 1010 ? 0 : 96);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("child ended with status %#x (90: a call failed, 91: the first round "
			 "or the calibration took the full path, 92: a later round did, 93/94: a "
			 "new depth, 95/96: no report, or calls counted on the wrong region)",
			 status);
}

static void test_json_exact(void **state)
{
	struct result r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	run_child_exact(&r, "page-faults", out_path, false, "\"page-faults\": 15");
	expect_exit0(&r);
	assert_non_null(r.file);
	struct th_json *doc = assert_json(r.file);
	assert_json_int(doc, "version", 1);
	const struct th_json *work = assert_json_named(doc, "regions", "work");
	assert_json_int(work, "calls", 3);
	assert_json_int(work, "events.page-faults", 15);
	/* the empty region reads exactly 0 after the subtraction */
	assert_json_int(assert_json_named(doc, "regions", "nothing"), "events.page-faults", 0);
	th_json_free(doc);
	/* nothing to tell the person running it */
	assert_string_equal(r.err, "");
	result_free(&r);
}

/* A breakpoint on a variable, from TACHO_EVENTS: exactly the 123 stores. */
static void test_breakpoint_from_env(void **state)
{
	struct result r;
	char want[96];

	const char *why;
	bool fires = th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, &why);
	(void)state;

	snprintf(want, sizeof(want), "mem:%p/8:w", (void *)&watched);
	for (int forced = 0; forced < 2; forced++) {
		/* where breakpoints never fire (for real, or by the test switch): not
		 * counted, with the reason, and no region shows a number for it */
		struct th_json *d;

		if (forced)
			th_not_firing("breakpoint-data");
		else if (fires)
			continue;
		run_child(&r, "BREAKPOINT", out_path, false);
		th_not_firing_end();
		expect_exit0(&r);
		assert_non_null(r.file);
		d = assert_json(r.file);
		assert_json_type(th_json_get(assert_json_named(d, "regions", "stores"), "events"),
				 want, TH_JSON_NULL);
		assert_contains(r.file, "\"status\": \"not counted\"");
		/* the machine's own proof's sentence, or the switch's */
		assert_contains(r.file, forced ? "TACHO_TEST_NOT_FIRING" : why);
		assert_contains(r.file, "was not counted");
		th_json_free(d);
		result_free(&r);
	}
	if (!fires)
		TEST_SKIP("breakpoint-data cannot be counted exactly here: %s", why);
	run_child(&r, "BREAKPOINT", out_path, false);
	expect_exit0(&r);
	assert_non_null(r.file);
	struct th_json *doc = assert_json(r.file);
	assert_json_int(th_json_get(assert_json_named(doc, "regions", "stores"), "events"), want,
			123);
	assert_json_int(th_json_get(assert_json_named(doc, "regions", "work"), "events"), want, 0);
	th_json_free(doc);
	result_free(&r);
}

static void test_csv(void **state)
{
	struct result r;
	char path[300];
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	snprintf(path, sizeof(path), "%s.csv", out_path);
	run_child_exact(&r, "page-faults", path, false,
			"work,page-faults,counted,3,15,15,5,0,5,5,no");
	expect_exit0(&r);
	assert_non_null(r.file);
	assert_contains(r.file, "region,quantity,status,calls,total");
	assert_contains(r.file, "work,page-faults,counted,3,15,15,5,0,5,5,no");
	result_free(&r);
}

/* A bad TACHO_EVENTS: the program runs on, timing only; the message is in the report,
 * once on stderr, and once through the log callback when there is one. */
static void test_bad_events(void **state)
{
	struct result r;
	(void)state;

	run_child(&r, "page-faults,no-such-event", out_path, true);
	expect_exit0(&r);
	assert_non_null(r.file);
	assert_contains(r.file, "\"calls\": 3");
	assert_contains(r.file, "\"events\": {}");
	assert_contains(r.file, "TACHO_EVENTS");
	assert_contains(r.file, "no-such-event");
	assert_contains(r.file, "regions measure time only");
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "tacho regions: TACHO_EVENTS: ");
	assert_contains(r.err, "no-such-event");
	result_free(&r);

	/* a syntax error says where */
	run_child(&r, "page-faults:zz", out_path, false);
	expect_exit0(&r);
	assert_int_equal(th_count_lines(r.err), 1);
	assert_contains(r.err, "TACHO_EVENTS: page-faults:zz:");
	assert_contains(r.file, "\"calls\": 3");
	result_free(&r);
}

/* An event this machine cannot count: null in the JSON, never a silent zero, and why. */
static void test_not_countable(void **state)
{
	struct result r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	run_child_exact(&r, "page-faults,cycles", out_path, false, "\"page-faults\": 15");
	expect_exit0(&r);
	assert_non_null(r.file);
	assert_contains(r.file, "\"page-faults\": 15");
	if (strstr(r.file, "\"cycles\": null")) {
		assert_contains(r.err, "event 'cycles' could not be counted");
	} else {
		/* a machine with a PMU counts it */
		assert_not_contains(r.file, "could not be counted");
	}
	result_free(&r);
}

/* A user who may count user space only (perf_event_paranoid 2, no CAP_PERFMON): the
 * regions count page-faults:u, exactly the 5 faults of each call, and the report says
 * why once. The suite runs as root: the child drops to nobody. */
static void test_user_only(void **state)
{
	struct result r;
	long long p = 0;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	bool read_ok = f && fscanf(f, "%lld", &p) == 1;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	if (f)
		fclose(f);
	if (!read_ok)
		TEST_SKIP("cannot read perf_event_paranoid");
	if (p < 2)
		TEST_SKIP("perf_event_paranoid is %lld: a user may count the kernel, and nothing "
			  "falls back (test-stat-user raises it for stat)", p);
	child_as_nobody = geteuid() == 0;
	run_child_exact(&r, "page-faults", out_path, true, "\"page-faults:u\": 15");
	child_as_nobody = false;
	expect_exit0(&r);
	assert_non_null(r.file);
	struct th_json *doc = assert_json(r.file);
	const struct th_json *work = assert_json_named(doc, "regions", "work");
	assert_json_int(work, "events.page-faults:u", 15);
	th_json_free(doc);
	assert_contains(r.file, "counting page-faults:u in user space only (':u')");
	result_free(&r);
}

static void test_unwritable_output(void **state)
{
	struct result r;
	(void)state;

	run_child(&r, NULL, "/nonexistent-dir/report.json", false);
	expect_exit0(&r);
	assert_contains(r.err, "cannot write the report to /nonexistent-dir/report.json");
	assert_contains(r.err, "work");
	result_free(&r);
}

int main(void)
{
	snprintf(out_path, sizeof(out_path), "/tmp/tacho-test-region-env-%d.json", (int)getpid());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_only_table_on_stderr),
		cmocka_unit_test(test_time_only_short_path),
		cmocka_unit_test(test_json_exact),
		cmocka_unit_test(test_breakpoint_from_env),
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_bad_events),
		cmocka_unit_test(test_not_countable),
		cmocka_unit_test(test_unwritable_output),
		cmocka_unit_test(test_user_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
