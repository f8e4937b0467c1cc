/* test-trace-flows.c - the Chrome/Perfetto JSON's names and arrows on real traces: a
 * process_name for each process and a thread_name for each thread of the trace; each
 * arrow (Perfetto's bind_id with flow_out, flow_in) leaves one event and arrives at
 * one, never earlier; the queue example's 40 items each give one arrow from its
 * enqueue to its dequeue on the other thread, with the same value; over all CPUs, the
 * wake-up arrows are exactly those the rule of docs/trace.md gives, worked out here
 * again from the sched events the same JSON holds. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

static struct th_json *chrome_of(const char *trace)
{
	struct th_run r;
	struct th_json *j;

	th_tacho(&r, "trace", "report", "-i", trace, "--format", "chrome", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	th_run_free(&r);
	return j;
}

static const char *str_of(const struct th_json *e, const char *key)
{
	const struct th_json *v = th_json_get(e, key);

	return v && v->type == TH_JSON_STRING ? v->string : "";
}

static double num_of(const struct th_json *e, const char *key)
{
	const struct th_json *v = th_json_get(e, key);

	return v && v->type == TH_JSON_NUMBER ? v->number : -1;
}

/* Each process of threads has its process_name, each thread its thread_name, with the
 * trace's names. */
static void check_names(const struct th_json *ev, const struct th_json *threads)
{
	for (size_t i = 0; i < threads->n; i++) {
		double pid = num_of(threads->items[i], "pid"), tid = num_of(threads->items[i], "tid");
		bool pname = false, tname = false;

		for (size_t k = 0; k < ev->n; k++) {
			const struct th_json *e = ev->items[k];
			if (strcmp(str_of(e, "ph"), "M") || num_of(e, "pid") != pid)
				continue;
			if (!strcmp(str_of(e, "name"), "process_name"))
				pname = true;
			if (!strcmp(str_of(e, "name"), "thread_name") && num_of(e, "tid") == tid) {
				tname = true;
				assert_true(*str_of(th_json_get(e, "args"), "name"));
			}
		}
		if (!pname || !tname)
			fail_msg("thread %.0f of process %.0f: %s", tid, pid,
				 !pname ? "no process_name" : "no thread_name");
	}
}

/* The arrows: out[k] and in[k] the events of bind_id k + 1 (each exactly once), the
 * arrival not before the departure. Returns the number of arrows. */
static size_t check_flows(const struct th_json *ev, size_t **out_, size_t **in_)
{
	size_t *out = calloc(ev->n + 1, sizeof(*out)), *in = calloc(ev->n + 1, sizeof(*in));
	size_t n = 0;

	assert_non_null(out);
	assert_non_null(in);
	for (size_t k = 0; k < ev->n; k++) {
		const struct th_json *e = ev->items[k];
		double id = num_of(e, "bind_id");
		bool fo = th_json_get(e, "flow_out") != NULL, fi = th_json_get(e, "flow_in") != NULL;

		if (id < 0) {
			assert_false(fo || fi);
			continue;
		}
		/* Perfetto binds an arrow to a slice: a complete event of no duration */
		assert_string_equal(str_of(e, "ph"), "X");
		assert_true(num_of(e, "dur") == 0);
		assert_true(fo != fi);
		assert_true(id >= 1 && id <= (double)ev->n);
		size_t *slot = fo ? &out[(size_t)id - 1] : &in[(size_t)id - 1];
		if (*slot)
			fail_msg("bind_id %.0f has two %s events", id, fo ? "flow_out" : "flow_in");
		*slot = k + 1;
		if ((size_t)id > n)
			n = (size_t)id;
	}
	for (size_t i = 0; i < n; i++) {
		if (!out[i] || !in[i])
			fail_msg("bind_id %zu has no %s", i + 1, out[i] ? "flow_in" : "flow_out");
		out[i]--;
		in[i]--;
		assert_true(num_of(ev->items[in[i]], "ts") >= num_of(ev->items[out[i]], "ts"));
	}
	*out_ = out;
	*in_ = in;
	return n;
}

static void test_queue_handoffs(void **state)
{
	struct th_run r;
	char ex[4096];
	size_t *out, *in, n;

	snprintf(ex, sizeof(ex), "%s/examples/trace-queue", th_build_dir());
	if (access(ex, X_OK))
		TEST_SKIP("the examples are not built (make %s)", ex);
	th_tacho(&r, "trace", "-q", "-o", th_tmp("q.trace"), "--", ex, "40", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	struct th_json *j = chrome_of(th_tmp("q.trace"));
	const struct th_json *ev = th_json_get(j, "traceEvents");
	th_tacho(&r, "trace", "report", "-i", th_tmp("q.trace"), "--format", "json", NULL);
	assert_int_equal(r.status, 0);
	struct th_json *rep = assert_json(r.out);
	th_run_free(&r);
	const struct th_json *threads = th_json_get(rep, "threads");
	assert_int_equal(threads->n, 3);   /* main, producer, consumer */
	check_names(ev, threads);

	n = check_flows(ev, &out, &in);
	/* each item's enqueue to its own dequeue, on the consumer: 40 arrows, no other */
	assert_int_equal(n, 40);
	for (size_t i = 0; i < n; i++) {
		const struct th_json *a = ev->items[out[i]], *b = ev->items[in[i]];
		assert_string_equal(str_of(a, "name"), "enqueue");
		assert_string_equal(str_of(b, "name"), "dequeue");
		assert_true(num_of(a, "tid") != num_of(b, "tid"));
		assert_true(num_of(th_json_get(a, "args"), "value") ==
			    num_of(th_json_get(b, "args"), "value"));
	}
	/* the values 0..39, each once */
	for (unsigned v = 0; v < 40; v++) {
		size_t seen = 0;
		for (size_t i = 0; i < n; i++)
			seen += num_of(th_json_get(ev->items[out[i]], "args"), "value") == v;
		assert_int_equal(seen, 1);
	}
	free(out);
	free(in);
	th_json_free(rep);
	th_json_free(j);
}

/* trace-marks threads: a and b are marked by every thread, no hand-off: no arrow. */
static void test_no_handoff_no_arrow(void **state)
{
	struct th_run r;
	size_t *out, *in;

	th_tacho(&r, "trace", "-q", "-o", th_tmp("t.trace"), "--", th_prog("trace-marks"),
		 "threads", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	struct th_json *j = chrome_of(th_tmp("t.trace"));
	assert_int_equal(check_flows(th_json_get(j, "traceEvents"), &out, &in), 0);
	free(out);
	free(in);
	th_json_free(j);
}

/* The rule, again: a thread's first wake-up since it last left a CPU, to the next
 * switch to it; a switch away forgets a pending one. Over the JSON's sched events in
 * their order (the items' time order). want[k] = the switch event's index + 1 for a
 * wake-up event k that starts an arrow. */
static void expected_wakeups(const struct th_json *ev, size_t *want)
{
	size_t *pending = NULL;   /* [tid] wake-up event index + 1 */
	size_t npending = 0;

	for (size_t k = 0; k < ev->n; k++) {
		const struct th_json *e = ev->items[k], *args = th_json_get(e, "args");
		const char *name = str_of(e, "name");
		double prev, next, pid;

		want[k] = 0;
		if (!strcmp(name, "sched:sched_switch")) {
			prev = num_of(args, "prev_pid");
			next = num_of(args, "next_pid");
			/* an event whose payload did not come is no switch, as for tacho */
			if (prev < 0 || next < 0)
				continue;
			if (prev > 0 && (size_t)prev < npending)
				pending[(size_t)prev] = 0;
			if (next > 0 && (size_t)next < npending && pending[(size_t)next]) {
				want[pending[(size_t)next] - 1] = k + 1;
				pending[(size_t)next] = 0;
			}
		} else if (!strcmp(name, "sched:sched_wakeup") ||
			   !strcmp(name, "sched:sched_wakeup_new")) {
			pid = num_of(args, "pid");
			if (pid <= 0)
				continue;
			if ((size_t)pid >= npending) {
				size_t nn = (size_t)pid * 2 + 1;
				pending = realloc(pending, nn * sizeof(*pending));
				assert_non_null(pending);
				memset(pending + npending, 0, (nn - npending) * sizeof(*pending));
				npending = nn;
			}
			if (!pending[(size_t)pid])
				pending[(size_t)pid] = k + 1;
		}
	}
	free(pending);
}

static void test_wakeup_arrows(void **state)
{
	struct th_run r;
	size_t *out, *in, n, arrows = 0, to_prog = 0;
	double tid;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (geteuid() != 0)
		TEST_SKIP("-a and raw data of sched tracepoints need CAP_PERFMON (run as root)");
	th_tacho(&r, "trace", "-q", "-a", "-m", "1024", "-e",
		 "sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new", "-o",
		 th_tmp("w.trace"), "--", th_prog("trace-marks"), "sleeps", "20", NULL);
	assert_int_equal(r.status, 0);
	tid = atoi(r.out);   /* the program says which thread it is */
	assert_true(tid > 0);
	th_run_free(&r);
	struct th_json *j = chrome_of(th_tmp("w.trace"));
	const struct th_json *ev = th_json_get(j, "traceEvents");
	size_t *want = calloc(ev->n + 1, sizeof(*want));
	assert_non_null(want);
	expected_wakeups(ev, want);
	n = check_flows(ev, &out, &in);
	/* every arrow is a wake-up's, to the "switched in" event just before its switch,
	 * on the woken thread */
	for (size_t i = 0; i < n; i++) {
		const struct th_json *a = ev->items[out[i]], *b = ev->items[in[i]];
		const char *name = str_of(a, "name");
		assert_true(!strcmp(name, "sched:sched_wakeup") ||
			    !strcmp(name, "sched:sched_wakeup_new"));
		assert_string_equal(str_of(b, "name"), "switched in");
		assert_true(in[i] + 1 < ev->n);
		assert_string_equal(str_of(ev->items[in[i] + 1], "name"), "sched:sched_switch");
		assert_true(num_of(b, "tid") == num_of(th_json_get(a, "args"), "pid"));
		assert_true(num_of(th_json_get(ev->items[in[i] + 1], "args"), "next_pid") ==
			    num_of(b, "tid"));
		if (want[out[i]] != in[i] + 2)
			fail_msg("the arrow from event %zu ends at %zu; the rule says %zu", out[i],
				 in[i] + 1, want[out[i]] ? want[out[i]] - 1 : 0);
		to_prog += num_of(b, "tid") == tid;
	}
	for (size_t k = 0; k < ev->n; k++)
		arrows += want[k] != 0;
	/* and no wake-up the rule pairs is without its arrow */
	assert_int_equal(n, arrows);
	free(want);
	free(out);
	free(in);
	/* the names: every thread the trace names */
	th_tacho(&r, "trace", "report", "-i", th_tmp("w.trace"), "--format", "json", NULL);
	assert_int_equal(r.status, 0);
	struct th_json *rep = assert_json(r.out);
	th_run_free(&r);
	check_names(ev, th_json_get(rep, "threads"));
	/* the program slept 20 times: each time it was woken and ran again (unless the
	 * kernel lost some of those events: the check above holds whatever it lost) */
	if (json_num(rep, "dropped.events_lost") == 0)
		assert_true(to_prog >= 20);
	th_json_free(rep);
	th_json_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_handoffs),
		cmocka_unit_test(test_no_handoff_no_arrow),
		cmocka_unit_test(test_wakeup_arrows),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
