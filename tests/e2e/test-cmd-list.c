/* test-cmd-list.c - `tacho list`: groups, filters, JSON, probes that agree with what
 * this machine can open (software events and breakpoints always; hardware events only
 * where a core PMU exists), and usage errors. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "util/util.h"

static bool have_core_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}

static bool have_tracefs(void)
{
	return access("/sys/kernel/tracing/events/syscalls/sys_enter_write/id", R_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/events/syscalls/sys_enter_write/id", R_OK) == 0;
}

/* The line of out that starts (after indentation) with name followed by a space. */
static const char *line_of(const char *out, const char *name, char *buf, size_t size)
{
	const char *p = out;
	size_t n = strlen(name);

	while (p && *p) {
		const char *s = p, *e = strchr(p, '\n');
		while (*s == ' ')
			s++;
		if (strncmp(s, name, n) == 0 && s[n] == ' ') {
			size_t len = e ? (size_t)(e - p) : strlen(p);
			snprintf(buf, size, "%.*s", (int)len, p);
			return buf;
		}
		p = e ? e + 1 : NULL;
	}
	fail_msg("no line for '%s' in:\n%s", name, out);
	return NULL;
}

static void test_help(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "list", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho list [<pattern>]");
	assert_contains(r.out, "tracepoint");
	th_run_free(&r);
}

static void test_software_and_breakpoints_open(void **state)
{
	struct th_run r;
	char buf[512];
	const char *why;
	(void)state;

	th_tacho(&r, "list", "--source", "software,breakpoint", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "software events (kernel):");
	assert_contains(r.out, "breakpoints and probes:");
	assert_not_contains(r.out, "generic hardware");
	/* DESIGN.md section 4: these count here, so they must open */
	assert_contains(line_of(r.out, "task-clock", buf, sizeof(buf)), " yes ");
	assert_contains(line_of(r.out, "page-faults", buf, sizeof(buf)), "(faults)");
	assert_contains(line_of(r.out, "page-faults", buf, sizeof(buf)),
			th_source_exact(TACHO_SOURCE_PAGE_FAULTS, &why) ? " yes " : " opens, never ");
	assert_contains(line_of(r.out, "context-switches", buf, sizeof(buf)), " yes ");
	/* a breakpoint opens; where it never fires (this machine's proof says) the row
	 * says so, with the reason below */
	if (th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, &why)) {
		assert_contains(line_of(r.out, "mem:ADDR[/LEN][:rwx]", buf, sizeof(buf)), " yes ");
	} else {
		assert_contains(line_of(r.out, "mem:ADDR[/LEN][:rwx]", buf, sizeof(buf)),
				" opens, never counts ");
		assert_contains(r.out, "    never counts: ");
	}
	assert_string_equal(r.err, "");
	th_run_free(&r);
}

static void test_hardware_rows(void **state)
{
	struct th_run r;
	struct th_json *j;
	size_t hw = 0, cache = 0;
	(void)state;

	th_tacho(&r, "list", "--json", "--source", "hardware,cache", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_json_int(j, "version", 1);
	assert_json_type(j, "events", TH_JSON_ARRAY);
	for (size_t i = 0; i < th_json_get(j, "events")->n; i++) {
		const struct th_json *e = th_json_get(j, "events")->items[i];
		const struct th_json *src = th_json_get(e, "source");
		const struct th_json *opens = th_json_get(e, "opens");

		assert_non_null(src);
		assert_non_null(opens);
		hw += !strcmp(src->string, "hardware");
		cache += !strcmp(src->string, "cache");
		assert_int_equal(opens->type, TH_JSON_BOOL);
		if (!opens->boolean) {
			/* a refusal always says which errno and why */
			assert_int_equal(th_json_get(e, "error")->type, TH_JSON_STRING);
			assert_int_equal(th_json_get(e, "why")->type, TH_JSON_STRING);
			assert_true(strlen(th_json_get(e, "why")->string) > 10);
		}
		if (!have_core_pmu() && opens->boolean)
			fail_msg("'%s' opens on a machine without a core PMU",
				 th_json_get(e, "name")->string);
	}
	/* ten generic hardware events; 32 cache events: L1-dcache, LLC, dTLB and node with
	 * loads, stores, prefetches (x2 for misses), L1-icache loads and prefetches, iTLB
	 * and branch loads */
	assert_int_equal(hw, 10);
	assert_int_equal(cache, 4 * 6 + 4 + 2 + 2);
	assert_json_str(j, "events[0].name", "cycles");
	assert_json_str(j, "events[0].aliases[0]", "cpu-cycles");
	assert_json_str(j, "events[0].pmu", "cpu");
	th_json_free(j);
	th_run_free(&r);
}

static void test_pattern(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	/* a substring, case-insensitive, over names and aliases */
	th_tacho(&r, "list", "--json", "PAGE-F", "--source", "software", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_int_equal(th_json_get(j, "events")->n, 1);
	assert_json_str(j, "events[0].name", "page-faults");
	assert_json_str(j, "events[0].source", "software");
	assert_json_type(j, "events[0].opens", TH_JSON_BOOL);
	assert_true(th_json_get(j, "events[0].opens")->boolean);
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "list", "--json", "cs", "--source", "software", NULL);
	j = assert_json(r.out);
	/* "cs" is the alias of context-switches; no other software name contains it */
	assert_int_equal(th_json_get(j, "events")->n, 1);
	assert_json_str(j, "events[0].name", "context-switches");
	th_json_free(j);
	th_run_free(&r);

	/* a glob */
	th_tacho(&r, "list", "--json", "*-clock", NULL);
	j = assert_json(r.out);
	assert_int_equal(th_json_get(j, "events")->n, 2);
	assert_json_str(j, "events[0].name", "task-clock");
	assert_json_str(j, "events[1].name", "cpu-clock");
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "list", "no-such-event-anywhere", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "no event matches no-such-event-anywhere\n");
	th_run_free(&r);
}

static void test_no_probe(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	th_tacho(&r, "list", "--json", "--no-probe", "--source", "software", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	/* perf 6.1's software events, cgroup-switches the twelfth */
	assert_int_equal(th_json_get(j, "events")->n, 12);
	for (size_t i = 0; i < 12; i++) {
		char path[64];
		snprintf(path, sizeof(path), "events[%zu].opens", i);
		assert_json_type(j, path, TH_JSON_NULL);
	}
	th_json_free(j);
	th_run_free(&r);
}

static void test_tracepoints(void **state)
{
	struct th_run r;
	struct th_json *j;
	char buf[512];
	(void)state;

	if (!have_tracefs())
		TEST_SKIP("no tracefs with syscalls:sys_enter_write mounted here");
	/* a pattern that selects few: each is opened */
	th_tacho(&r, "list", "--json", "syscalls:sys_enter_write*", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_true(th_json_get(j, "events")->n >= 1);
	assert_json_str(j, "events[0].name", "syscalls:sys_enter_write");
	assert_json_str(j, "events[0].pmu", "syscalls");
	assert_json_type(j, "events[0].opens", TH_JSON_BOOL);
	assert_json_type(j, "tracepoint_probed_for_all", TH_JSON_NULL);
	if (geteuid() == 0)
		assert_true(th_json_get(j, "events[0].opens")->boolean);
	th_json_free(j);
	th_run_free(&r);

	/* no pattern: one line per subsystem, one tracepoint opened for all */
	th_tacho(&r, "list", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "tracepoints (tracefs):");
	assert_contains(line_of(r.out, "syscalls:*", buf, sizeof(buf)), " tracepoints");
	assert_contains(r.out, "tried one, ");
	assert_not_contains(r.out, "syscalls:sys_enter_write ");
	th_run_free(&r);
}

static void test_every_group_in_order(void **state)
{
	struct th_run r;
	const char *hw, *cache, *sw, *raw, *pmu, *bp;
	(void)state;

	th_tacho(&r, "list", NULL);
	assert_int_equal(r.status, 0);
	hw = strstr(r.out, "generic hardware events (kernel):");
	cache = strstr(r.out, "generic cache events (kernel):");
	sw = strstr(r.out, "software events (kernel):");
	raw = strstr(r.out, "raw events:");
	pmu = strstr(r.out, "other PMUs (/sys/bus/event_source/devices):");
	bp = strstr(r.out, "breakpoints and probes:");
	assert_non_null(hw);
	assert_non_null(cache);
	assert_non_null(sw);
	assert_non_null(raw);
	assert_non_null(pmu);
	assert_non_null(bp);
	assert_true(hw < cache && cache < sw && sw < raw && raw < pmu && pmu < bp);
	if (!have_core_pmu())
		/* the note under the hardware group says why they do not open */
		assert_contains(r.out, "    ENOENT: ");
	th_run_free(&r);
}

/* As an unprivileged user: with perf_event_paranoid 2 the software events do not open
 * as written (they include the kernel) but do with ':u', and the list says both. */
static void test_unprivileged(void **state)
{
	struct th_run r;
	struct th_json *j;
	long long paranoid;
	char *argv[] = { (char *)"setpriv", (char *)"--reuid=65534", (char *)"--regid=65534",
			 (char *)"--clear-groups", (char *)th_tacho_bin(), (char *)"list",
			 (char *)"--json", (char *)"--source", (char *)"software", NULL };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	if (geteuid() != 0)
		TEST_SKIP("needs root to run tacho as another user");
	if (access("/usr/bin/setpriv", X_OK) != 0)
		TEST_SKIP("no /usr/bin/setpriv");
	if (tc_read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid) != 0)
		TEST_SKIP("cannot read perf_event_paranoid");
	th_runv(&r, NULL, argv);
	if (r.status == 126 || r.status == 127 || strstr(r.err, "Permission denied"))
		TEST_SKIP("user 65534 cannot run %s", th_tacho_bin());
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	/* perf 6.1's software events, cgroup-switches the twelfth */
	assert_int_equal(th_json_get(j, "events")->n, 12);
	for (size_t i = 0; i < 12; i++) {
		char path[64];
		const struct th_json *opens, *u;

		snprintf(path, sizeof(path), "events[%zu].opens", i);
		opens = th_json_get(j, path);
		snprintf(path, sizeof(path), "events[%zu].opens_with_u", i);
		u = th_json_get(j, path);
		assert_non_null(opens);
		assert_non_null(u);
		if (paranoid >= 2) {
			assert_false(opens->boolean);
			snprintf(path, sizeof(path), "events[%zu].error", i);
			assert_json_str(j, path, "EACCES");
			assert_int_equal(u->type, TH_JSON_BOOL);
			assert_true(u->boolean);
		} else if (paranoid <= 1) {
			assert_true(opens->boolean);
			assert_int_equal(u->type, TH_JSON_NULL);
		}
	}
	th_json_free(j);
	th_run_free(&r);
}

/* The perf_event_open calls in strace's log at path whose line holds what: how many,
 * each of them refused with the answer refusal (or the test fails). */
static size_t refused_opens(const char *path, const char *what, const char *refusal)
{
	char *log = NULL;
	size_t len, n = 0;

	assert_int_equal(tc_read_file(path, &log, &len, 1 << 24), 0);
	for (char *l = strtok(log, "\n"); l; l = strtok(NULL, "\n")) {
		if (!strstr(l, what))
			continue;
		n++;
		if (!strstr(l, refusal))
			fail_msg("an open that was not refused (%s): %s", refusal, l);
	}
	free(log);
	return n;
}

/* The uprobe row is probed without registering a uprobe (that took 13-200 ms and 61
 * ms to remove): the kernel is asked to open one on a path no file has, which it
 * answers ENOENT after its checks of the PMU and of the caller's privilege. As root it
 * opens (strace: every open of the uprobe PMU answered ENOENT, none gave a descriptor);
 * as an unprivileged user it does not, with EACCES (uprobes need CAP_PERFMON whatever
 * kernel.perf_event_paranoid says). */
static void test_uprobe_probe_dry(void **state)
{
	char cmd[4096], pmu[64];
	char *sh[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	char *nobody[] = { (char *)"setpriv", (char *)"--reuid=65534", (char *)"--regid=65534",
			   (char *)"--clear-groups", (char *)th_tacho_bin(), (char *)"list",
			   (char *)"--json", (char *)"--source", (char *)"breakpoint", NULL };
	const struct th_json *row;
	struct th_json *j;
	struct th_run r;
	long long type;
	(void)state;

	if (geteuid() != 0)
		TEST_SKIP("needs root to see the probe open and to run tacho as another user");
	if (tc_read_int_file("/sys/bus/event_source/devices/uprobe/type", &type) != 0)
		TEST_SKIP("no uprobe PMU in this kernel (CONFIG_UPROBE_EVENTS)");
	if (access("/usr/bin/strace", X_OK) != 0)
		TEST_SKIP("no strace(1) to see the probe's open");
	/* LeakSanitizer stops the process with ptrace at exit, which a traced process
	 * cannot: no leak check in this run of a sanitized tree */
	snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\" "
		 "strace -f -qq -e trace=perf_event_open -o '%s' '%s' list --json "
		 "--source breakpoint", th_tmp("strace"), th_tacho_bin());
	th_runv(&r, NULL, sh);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	row = th_json_find(j, "events", "pmu", "uprobe");
	assert_non_null(row);
	assert_true(th_json_get(row, "opens")->boolean);
	th_json_free(j);
	th_run_free(&r);
	snprintf(pmu, sizeof(pmu), "type=%#llx ", type);
	assert_int_equal(refused_opens(th_tmp("strace"), pmu, "= -1 ENOENT"), 1);

	if (access("/usr/bin/setpriv", X_OK) != 0)
		TEST_SKIP("no /usr/bin/setpriv");
	th_runv(&r, NULL, nobody);
	if (r.status == 126 || r.status == 127 || strstr(r.err, "Permission denied"))
		TEST_SKIP("user 65534 cannot run %s", th_tacho_bin());
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	row = th_json_find(j, "events", "pmu", "uprobe");
	assert_non_null(row);
	assert_false(th_json_get(row, "opens")->boolean);
	assert_string_equal(th_json_get(row, "error")->string, "EACCES");
	th_json_free(j);
	th_run_free(&r);
}

/* Tracepoints are probed without arming one (a real probe's close waited some 40 ms
 * for RCU grace periods, the most of tacho list's wall time): the kernel is asked for
 * a branch stack, which the tracepoint PMU refuses first thing, after the checks of the
 * caller that every open makes. As root every probed tracepoint opens, and strace sees
 * every open of a tracepoint answered EOPNOTSUPP, none giving a descriptor. */
static void test_tracepoint_probe_dry(void **state)
{
	char cmd[4096];
	char *sh[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	const struct th_json *row, *evs;
	struct th_json *j;
	struct th_run r;
	size_t probed = 0;
	(void)state;

	if (geteuid() != 0)
		TEST_SKIP("needs root to read tracefs and see every probe open");
	if (!th_have_write_tracepoint())
		TEST_SKIP("no syscalls:sys_enter_write tracepoint to list");
	if (access("/usr/bin/strace", X_OK) != 0)
		TEST_SKIP("no strace(1) to see the probe's open");
	snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=\"${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0\" "
		 "strace -f -qq -e trace=perf_event_open -o '%s' '%s' list --json "
		 "'syscalls:sys_*_write'", th_tmp("strace-tp"), th_tacho_bin());
	th_runv(&r, NULL, sh);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	evs = th_json_get(j, "events");
	assert_non_null(evs);
	for (size_t i = 0; i < evs->n; i++) {
		row = evs->items[i];
		if (strcmp(th_json_get(row, "source")->string, "tracepoint"))
			continue;
		probed++;
		assert_true(th_json_get(row, "opens")->boolean);
	}
	assert_int_equal(probed, 2);   /* sys_enter_write and sys_exit_write */
	th_json_free(j);
	th_run_free(&r);
	assert_int_equal(refused_opens(th_tmp("strace-tp"), "type=PERF_TYPE_TRACEPOINT",
				       "= -1 EOPNOTSUPP"), 2);
}

static void test_usage_errors(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "list", "--source", "bogus", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho list: unknown source 'bogus'");
	assert_contains(r.err, "usage: tacho list");
	assert_string_equal(r.out, "");
	th_run_free(&r);

	th_tacho(&r, "list", "--source", "software,", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown source ''");
	th_run_free(&r);

	th_tacho(&r, "list", "a", "b", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "one pattern at most, not 'b'");
	th_run_free(&r);

	th_tacho(&r, "list", "--frob", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unknown option or missing value: '--frob'");
	/* the line, and the usage's two forms (a pattern; sdt FILE) */
	assert_int_equal(th_count_lines(r.err), 3);
	th_run_free(&r);

	th_tacho(&r, "list", "--source", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_software_and_breakpoints_open),
		cmocka_unit_test(test_hardware_rows),
		cmocka_unit_test(test_pattern),
		cmocka_unit_test(test_no_probe),
		cmocka_unit_test(test_tracepoints),
		cmocka_unit_test(test_every_group_in_order),
		cmocka_unit_test(test_unprivileged),
		cmocka_unit_test(test_uprobe_probe_dry),
		cmocka_unit_test(test_tracepoint_probe_dry),
		cmocka_unit_test(test_usage_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
