/* test-trace-marks-burst.c - a burst of exactly 2,000,000 marks from one thread, as fast
 * as it can, under tacho trace (issue 32): every mark is accounted for, exactly. The
 * marks that reached the file plus the drops the file reports are the 2,000,000 sent;
 * the drops the file reports are the marks tacho_mark refused in the program (never a
 * mark missing and unreported, never one counted twice); the marks that arrived are
 * in the order they were written, each value once. No time is checked: on a loaded
 * machine more may be dropped, and the test then checks the counts of that run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "json-check.h"
#include "record/recfile.h"

#define BURST 2000000u

struct tally {
	uint64_t marks;            /* on channel "burst" */
	uint64_t other;            /* marks on any other channel */
	uint64_t ring_full, no_ring, no_channel;   /* the last MARK_DROPS */
	uint64_t damage;
	bool drops_seen, order_ok;
};

static void tally_file(const char *path, struct tally *t)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_record_reader rd;
	struct tc_rec r;
	uint32_t burst = UINT32_MAX;
	uint64_t last = 0;
	char *data;
	size_t len;
	int err;

	memset(t, 0, sizeof(*t));
	t->order_ok = true;
	assert_int_equal(tc_read_file(path, &data, &len, 0), 0);
	assert_int_equal(tc_record_reader_init(&rd, data, len, path, &d), 0);
	while ((err = tc_record_reader_next(&rd, &r, path, &d)) == 1) {
		if (r.type == TC_REC_CHANNEL && !strcmp(r.u.channel.name, "burst"))
			burst = r.u.channel.index;
		if (r.type == TC_REC_MARK) {
			if (r.u.mark.channel != burst) {
				t->other++;
				continue;
			}
			/* values are 0..BURST-1 in the order written: each one above the last */
			if (r.u.mark.value >= BURST || (t->marks && r.u.mark.value <= last))
				t->order_ok = false;
			last = r.u.mark.value;
			t->marks++;
		}
		if (r.type == TC_REC_MARK_DROPS) {
			t->drops_seen = true;
			t->ring_full = r.u.mark_drops.ring_full;
			t->no_ring = r.u.mark_drops.no_ring;
			t->no_channel = r.u.mark_drops.no_channel;
			t->damage = r.u.mark_drops.damaged_entries + r.u.mark_drops.damaged_rings +
				    r.u.mark_drops.damaged_header;
		}
	}
	if (err < 0)
		fail_msg("%s: %s", path, d.message);
	assert_true(rd.finished);
	free(data);
}

static void test_burst_accounted(void **state)
{
	struct th_run r;
	struct tally t;
	unsigned long long sent = 0, refused = 0;
	char n[16];

	snprintf(n, sizeof(n), "%u", BURST);
	th_tacho(&r, "trace", "-q", "-o", th_tmp("b.trace"), "--", th_prog("trace-burst"), n,
		 NULL);
	assert_int_equal(r.status, 0);
	/* the program's own count of what tacho_mark refused (-ENOBUFS) */
	assert_int_equal(sscanf(r.out, "sent %llu refused %llu", &sent, &refused), 2);
	th_run_free(&r);
	assert_int_equal(sent, BURST);
	tally_file(th_tmp("b.trace"), &t);
	print_message("burst: %" PRIu64 " of %u marks arrived, %" PRIu64 " dropped\n", t.marks,
		      BURST, t.ring_full);
	assert_true(t.drops_seen);    /* the final count is always written */
	assert_int_equal(t.other, 0);
	assert_int_equal(t.damage, 0);
	assert_int_equal(t.no_ring + t.no_channel, 0);
	assert_true(t.order_ok);
	/* every mark arrived or was counted as dropped, and the file's count of drops is
	 * the program's count of refusals */
	assert_int_equal(t.marks + t.ring_full, BURST);
	assert_int_equal(t.ring_full, refused);
}

/* The same through a small ring (1,024 entries, woken at 256): many more wake-ups and
 * drains for the same burst, the same exact accounting. */
static void test_burst_small_ring(void **state)
{
	struct th_run r;
	struct tally t;
	unsigned long long sent = 0, refused = 0;

	th_tacho(&r, "trace", "-q", "--ring", "1024", "-o", th_tmp("s.trace"), "--",
		 th_prog("trace-burst"), "200000", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(sscanf(r.out, "sent %llu refused %llu", &sent, &refused), 2);
	th_run_free(&r);
	assert_int_equal(sent, 200000);
	tally_file(th_tmp("s.trace"), &t);
	assert_true(t.drops_seen);
	assert_true(t.order_ok);
	assert_int_equal(t.marks + t.ring_full, 200000);
	assert_int_equal(t.ring_full, refused);
}

/* --ring-full wait through a ring of 64: every one of 200,000 marks arrives, in order,
 * none refused or dropped; the waits the program made are what tacho said and what the
 * report's JSON holds, the same count in both. */
static void test_burst_wait_full(void **state)
{
	struct th_run r, rep;
	struct tally t;
	unsigned long long sent = 0, refused = 0, waits = 0;
	const struct th_json *w;
	struct th_json *j;
	const char *said;

	th_tacho(&r, "trace", "--ring", "64", "--ring-full", "wait", "-o", th_tmp("w.trace"),
		 "--", th_prog("trace-burst"), "200000", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(sscanf(r.out, "sent %llu refused %llu", &sent, &refused), 2);
	assert_int_equal(sent, 200000);
	assert_int_equal(refused, 0);
	assert_null(strstr(r.err, "dropped"));
	said = strstr(r.err, "waited for room in its mark rings ");
	if (said)
		assert_int_equal(sscanf(said, "waited for room in its mark rings %llu", &waits), 1);
	tally_file(th_tmp("w.trace"), &t);
	assert_true(t.order_ok);
	assert_int_equal(t.marks, 200000);
	assert_int_equal(t.ring_full + t.no_ring + t.no_channel, 0);
	th_tacho(&rep, "trace", "report", "-i", th_tmp("w.trace"), "-f", "json", NULL);
	assert_int_equal(rep.status, 0);
	j = assert_json(rep.out);
	w = th_json_get(j, "dropped.waits");
	assert_non_null(w);
	assert_true(w->integer);
	/* tacho says nothing when nothing waited; the file holds 0 then */
	assert_int_equal((unsigned long long)w->number, waits);
	assert_non_null(th_json_get(j, "dropped.waited_ns"));
	print_message("wait: 200000 of 200000 marks through a ring of 64, %llu waits\n", waits);
	th_json_free(j);
	th_run_free(&rep);
	th_run_free(&r);
}

/* A bad --ring-full, and one with -p (running processes have no rings): one line each,
 * exit 2. Without --ring-full wait the report's JSON has no waits. */
static void test_ring_full_usage(void **state)
{
	struct th_run r;
	struct th_json *j;

	th_tacho(&r, "trace", "--ring-full", "block", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--ring-full takes drop or wait, not 'block'"));
	th_run_free(&r);
	th_tacho(&r, "trace", "--ring-full", "wait", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--ring-full wait needs a program"));
	th_run_free(&r);
	th_tacho(&r, "trace", "-q", "--ring-full", "drop", "-o", th_tmp("d.trace"), "--",
		 th_prog("trace-burst"), "10", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("d.trace"), "-f", "json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_null(th_json_get(j, "dropped.waits"));
	th_json_free(j);
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_accounted),
		cmocka_unit_test(test_burst_small_ring),
		cmocka_unit_test(test_burst_wait_full),
		cmocka_unit_test(test_ring_full_usage),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
