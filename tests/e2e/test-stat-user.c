/* test-stat-user.c - `tacho stat` as a user who may count user space only
 * (perf_event_paranoid 2, no CAP_PERFMON): the events that include the kernel fall back
 * to ':u', are named so in every output, are said once, and count exactly (the page
 * faults of fresh pages touched in user space). The suite runs as root: the commands
 * drop to nobody with setpriv, and paranoid is raised to 2 for the test if it is lower
 * (and put back after).
 *
 * As in test-cmd-stat.c the helper runs without address-space randomization, so its
 * start-up faults the same pages on every run and the minimum over runs is exact. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

#define PARANOID "/proc/sys/kernel/perf_event_paranoid"

static long long paranoid_before = -1000;  /* restored by teardown when changed */
static bool paranoid_changed;
static char skip_why[256];                  /* why this machine cannot run the tests */

static int read_paranoid(long long *v)
{
	FILE *f = fopen(PARANOID, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%lld", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static int write_paranoid(long long v)
{
	FILE *f = fopen(PARANOID, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%lld\n", v) < 0)
		err = -EIO;
	if (fclose(f) != 0 && !err)
		err = -errno;
	return err;
}

/* Runs `tacho CMD ARGS...` (NULL-terminated) as a user without privilege: nobody when
 * the suite runs as root, else the user itself. */
static void vtacho_user(struct th_run *r, const char *cmd, const char *first, va_list ap)
{
	const char *argv[64];
	size_t n = 0;

	if (geteuid() == 0) {
		argv[n++] = "setpriv";
		argv[n++] = "--reuid=nobody";
		argv[n++] = "--regid=nogroup";
		argv[n++] = "--clear-groups";
	}
	argv[n++] = th_tacho_bin();
	argv[n++] = cmd;
	argv[n++] = first;
	while (n < 63 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	argv[n] = NULL;
	th_runv(r, NULL, (char *const *)argv);
}

static void record_user(struct th_run *r, const char *first, ...)
{
	va_list ap;

	va_start(ap, first);
	vtacho_user(r, "record", first, ap);
	va_end(ap);
}

static void stat_user(struct th_run *r, const char *first, ...)
{
	va_list ap;

	va_start(ap, first);
	vtacho_user(r, "stat", first, ap);
	va_end(ap);
}

static size_t count_of(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The fewest page faults of the helper touching `pages` pages over 7 runs, with the
 * event named as the fallback names it. */
static double user_faults_min(const char *pages)
{
	struct th_run r;
	struct th_json *j;
	double v;

	stat_user(&r, "--json", "-r", "7", "-e", "page-faults", "--", th_prog("stat-helper"),
		  "pages", pages, NULL);
	if (r.status != 0)
		fail_msg("tacho stat exited %d: %s", r.status, r.err);
	j = assert_json(strchr(r.err, '{'));
	assert_json_str(j, "events[0].name", "page-faults:u");
	assert_json_str(j, "events[0].status", "counted");
	v = json_num(j, "events[0].min");
	th_json_free(j);
	th_run_free(&r);
	return v;
}

/* page-faults:u counts exactly the N faults of N fresh pages touched in user space. */
static void test_page_faults_user_exact(void **state)
{
	double base, a;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	if (*skip_why)
		TEST_SKIP("%s", skip_why);
	base = user_faults_min("0");
	a = user_faults_min("1000");
	if (a - base != 1000)
		fail_msg("page-faults:u: %g at 0 pages, %g at 1000", base, a);
	assert_true(base > 0);
}

/* The table, the CSV and the JSON all name the events EVENT:u, the warning says why once,
 * and the command exits 0. */
static void test_named_and_said_once(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	if (*skip_why)
		TEST_SKIP("%s", skip_why);
	stat_user(&r, "-e", "page-faults,task-clock", "--", th_prog("stat-helper"), "pages",
		  "10", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, " page-faults:u ");
	assert_contains(r.err, " task-clock:u\n");
	assert_int_equal(count_of(r.err, "in user space only"), 1);
	assert_contains(r.err, "tacho: warning: counting page-faults:u, task-clock:u in user "
			       "space only (':u'): perf_event_paranoid is ");
	assert_not_contains(r.err, "not supported");
	th_run_free(&r);

	stat_user(&r, "--csv", "-e", "page-faults,task-clock", "--", th_prog("stat-helper"),
		  "pages", "10", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "\nevent,page-faults:u,counted,");
	assert_contains(r.err, "\nevent,task-clock:u,counted,");
	th_run_free(&r);

	stat_user(&r, "--json", "-r", "2", "-e", "page-faults,task-clock", "--",
		  th_prog("stat-helper"), "pages", "10", NULL);
	assert_int_equal(r.status, 0);
	/* said once for the session, not once per repetition */
	assert_int_equal(count_of(r.err, "in user space only"), 1);
	j = assert_json(strchr(r.err, '{'));
	assert_json_str(j, "events[0].name", "page-faults:u");
	assert_json_str(j, "events[1].name", "task-clock:u");
	assert_json_str(j, "events[1].status", "counted");
	th_json_free(j);
	th_run_free(&r);
}

/* A breakpoint on the helper's variable falls back too (its access group stays, the
 * 'u' comes after it) and counts exactly the N stores, which are in user space. */
static void test_breakpoint_user_exact(void **state)
{
	struct th_run r;
	struct th_json *j;
	char addr[64], spec[96], name[100];
	char *const argv[] = { (char *)th_prog("stat-helper"), (char *)"addr", NULL };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_BREAKPOINT_DATA);

	if (*skip_why)
		TEST_SKIP("%s", skip_why);
	th_runv(&r, NULL, argv);
	snprintf(addr, sizeof(addr), "%s", r.out);
	addr[strcspn(addr, "\n")] = '\0';
	th_run_free(&r);
	snprintf(spec, sizeof(spec), "mem:%s/8:w", addr);
	snprintf(name, sizeof(name), "%s:u", spec);
	stat_user(&r, "--json", "-e", spec, "--", th_prog("stat-helper"), "stores", "1234",
		  NULL);
	if (r.status != 0)
		fail_msg("tacho stat exited %d: %s", r.status, r.err);
	j = assert_json(strchr(r.err, '{'));
	assert_json_str(j, "events[0].name", name);
	assert_json_str(j, "events[0].status", "counted");
	assert_true(json_num(j, "events[0].value") == 1234);
	th_json_free(j);
	th_run_free(&r);
}

/* What ':u' cannot help keeps its explanation: a tracepoint fires in the kernel (user
 * only it would count nothing), and an event the user wrote ':k' wants the kernel. */
static void test_no_fallback_where_it_would_lie(void **state)
{
	struct th_run r;
	(void)state;

	if (*skip_why)
		TEST_SKIP("%s", skip_why);
	stat_user(&r, "-e", "page-faults:k", "--", th_prog("stat-helper"), "pages", "1", NULL);
	assert_contains(r.err, "<not supported>");
	assert_contains(r.err, "page-faults:k");
	assert_not_contains(r.err, "page-faults:ku");
	assert_not_contains(r.err, "in user space only");
	th_run_free(&r);

	/* whole CPUs need paranoid 0 or less: with no program to run, a count of nothing
	 * at all has failed, and says so after the reasons */
	stat_user(&r, "-a", "--timeout", "50", "-e", "page-faults", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "<not supported>");
	assert_contains(r.err, "tacho: counted nothing: none of the 1 event could be counted here");
	th_run_free(&r);

	/* as root, a modifier group gains the 'u': cycles:D would read cycles:Du. A
	 * software event shows it here */
	stat_user(&r, "-e", "context-switches:D", "--", th_prog("stat-helper"), "pages", "1",
		  NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "context-switches:Du");
	th_run_free(&r);
}

/* record falls back as stat does: the event named page-faults:u in the recording and
 * its report, and the warning said once. */
static void test_record_user_only(void **state)
{
	char dir[] = "/tmp/tacho-user-XXXXXX", out[64], cmd[128];
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	if (*skip_why)
		TEST_SKIP("%s", skip_why);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);   /* nobody writes the recording there */
	snprintf(out, sizeof(out), "%s/u.rec", dir);
	record_user(&r, "-q", "-e", "page-faults", "-c", "1", "-o", out, "--",
		    th_prog("stat-helper"), "pages", "10", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_of(r.err, "in user space only"), 1);
	assert_contains(r.err, "tacho: warning: sampling page-faults:u in user space only");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", out, NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, " samples of page-faults:u (period 1)");
	th_run_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	long long p;
	int err;
	(void)state;

	err = read_paranoid(&p);
	if (err) {
		snprintf(skip_why, sizeof(skip_why), "cannot read %s: %s", PARANOID,
			 strerror(-err));
		return 0;
	}
	if (geteuid() != 0) {
		if (p < 2)
			snprintf(skip_why, sizeof(skip_why), "perf_event_paranoid is %lld: this "
				 "user may count the kernel, and nothing falls back", p);
		return 0;
	}
	if (access("/usr/bin/setpriv", X_OK) != 0 && access("/bin/setpriv", X_OK) != 0) {
		snprintf(skip_why, sizeof(skip_why), "no setpriv (util-linux) to drop to nobody");
		return 0;
	}
	if (p < 2) {
		err = write_paranoid(2);
		if (err) {
			snprintf(skip_why, sizeof(skip_why), "perf_event_paranoid is %lld and "
				 "cannot be set to 2: %s", p, strerror(-err));
			return 0;
		}
		paranoid_before = p;
		paranoid_changed = true;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (paranoid_changed && write_paranoid(paranoid_before) != 0) {
		fprintf(stderr, "cannot put perf_event_paranoid back to %lld\n", paranoid_before);
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_faults_user_exact),
		cmocka_unit_test(test_named_and_said_once),
		cmocka_unit_test(test_breakpoint_user_exact),
		cmocka_unit_test(test_no_fallback_where_it_would_lie),
		cmocka_unit_test(test_record_user_only),
	};

	personality(ADDR_NO_RANDOMIZE);
	return cmocka_run_group_tests(tests, setup, teardown);
}
