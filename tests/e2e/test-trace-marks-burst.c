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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_accounted),
		cmocka_unit_test(test_burst_small_ring),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
