/* test-trace-lost.c - events the kernel lost, by channel: a kernel ring of one page
 * (-m 1) under a thread that makes some 1,000 system calls as fast as it can loses
 * events; tacho trace's warning, the report's notes, its summary and its JSON say how
 * many on each CPU's ring (and how many on none known), and the channels sum to the
 * total, which is the same in the warning (the recording's count) and in the file. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json-check.h"

/* Sums "cpuN COUNT" and "COUNT on no known CPU" in the parenthesis after at; the total
 * is the number before at. */
static uint64_t sum_channels(const char *at, unsigned *nch)
{
	const char *p = strchr(at, '(');
	const char *end = p ? strchr(p, ')') : NULL;
	uint64_t sum = 0;

	assert_non_null(end);
	*nch = 0;
	for (p++; p < end;) {
		unsigned cpu;
		unsigned long long n;
		int used = 0;

		if (sscanf(p, "cpu%u %llu%n", &cpu, &n, &used) == 2 ||
		    sscanf(p, "%llu on no known CPU%n", &n, &used) == 1) {
			if (!used)
				fail_msg("cannot read the channels at: %.80s", p);
			sum += n;
			(*nch)++;
			p += used;
			if (*p == ',')
				p += 2;
			continue;
		}
		fail_msg("cannot read the channels at: %.80s", p);
	}
	return sum;
}

static void test_lost_by_channel(void **state)
{
	struct th_run r;
	unsigned nch;
	uint64_t total = 0;
	char *warn = NULL;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	/* a one-page ring and 1,000 calls as fast as a thread makes them: the kernel
	 * fills the ring between tacho's reads; a machine fast enough to lose nothing in
	 * five tries has nothing to show here */
	for (int tries = 0; !warn; tries++) {
		th_tacho(&r, "trace", "-m", "1", "-e", "raw_syscalls:sys_enter,raw_syscalls:sys_exit",
			 "-o", th_tmp("l.trace"), "--", th_prog("trace-sys"), "calls", NULL);
		assert_int_equal(r.status, 0);
		const char *w = strstr(r.err, "events were lost (");
		if (w) {
			const char *line = w;
			while (line > r.err && line[-1] != '\n')
				line--;
			total = strtoull(line + strlen("tacho: warning: "), NULL, 10);
			warn = strdup(w);
		}
		th_run_free(&r);
		if (!warn && tries == 4)
			TEST_SKIP("a one-page kernel ring lost no event in 5 traces of 1,000 "
				  "system calls: nothing lost to count by channel");
	}
	assert_true(total > 0);
	assert_int_equal(sum_channels(warn, &nch), total);
	assert_true(nch >= 1);
	free(warn);

	/* the report's notes, at the top of the text view */
	th_tacho(&r, "trace", "report", "-i", th_tmp("l.trace"), NULL);
	assert_int_equal(r.status, 0);
	char want[64];
	snprintf(want, sizeof(want), "events lost by the kernel: %" PRIu64 " (", total);
	assert_contains(r.out, want);
	assert_int_equal(sum_channels(strstr(r.out, want), &nch), total);
	th_run_free(&r);

	/* the summary says it beside its rows */
	th_tacho(&r, "trace", "report", "-s", "-i", th_tmp("l.trace"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, want);
	assert_contains(r.out, "the rows above miss them");
	th_run_free(&r);

	/* the JSON: each CPU's ring, once, and the ones no record told */
	th_tacho(&r, "trace", "report", "--format", "json", "-i", th_tmp("l.trace"), NULL);
	assert_int_equal(r.status, 0);
	struct th_json *j = assert_json(r.out);
	const struct th_json *by = th_json_get(j, "dropped.events_lost_by_cpu");
	uint64_t sum = (uint64_t)json_num(j, "dropped.events_lost_no_cpu");
	assert_non_null(by);
	assert_int_equal(by->type, TH_JSON_ARRAY);
	for (size_t i = 0; i < by->n; i++) {
		double cpu = json_num(by->items[i], "cpu");
		assert_true(json_num(by->items[i], "lost") > 0);
		for (size_t k = 0; k < i; k++)
			assert_true(json_num(by->items[k], "cpu") < cpu);
		sum += (uint64_t)json_num(by->items[i], "lost");
	}
	assert_int_equal((uint64_t)json_num(j, "dropped.events_lost"), total);
	assert_int_equal(sum, total);
	th_json_free(j);
	th_run_free(&r);
}

/* A trace that lost nothing says nothing of losses, and its JSON has them all 0. */
static void test_nothing_lost(void **state)
{
	struct th_run r;

	th_tacho(&r, "trace", "-o", th_tmp("n.trace"), "--", th_prog("trace-marks"), "none",
		 NULL);
	assert_int_equal(r.status, 0);
	assert_not_contains(r.err, "were lost");
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "--format", "json", "-i", th_tmp("n.trace"), NULL);
	assert_int_equal(r.status, 0);
	struct th_json *j = assert_json(r.out);
	assert_json_int(j, "dropped.events_lost", 0);
	assert_json_int(j, "dropped.events_lost_no_cpu", 0);
	assert_int_equal(th_json_get(j, "dropped.events_lost_by_cpu")->n, 0);
	th_json_free(j);
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_by_channel),
		cmocka_unit_test(test_nothing_lost),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
