/* test-profile-load.c - loading recordings that are large or hostile: sums that would
 * wrap (the file is called corrupt), more than 65,536 events (the selected index is
 * kept whole), 70,000 mappings (the lookups' work is counted: linear, not quadratic),
 * escape sequences in names (shown, never passed to the terminal). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tacho.h"
#include "harness.h"
#include "record/recfile.h"
#include "report/report-int.h"

/* Opens a recording at the test folder's file name with one page-faults event. */
static void start(struct tc_record_writer *w, const char *name, unsigned nev)
{
	char ev[32];

	assert_int_equal(tc_record_writer_open(w, th_tmp(name)), 0);
	tc_record_writer_meta(w, "command", "./prog");
	for (unsigned i = 0; i < nev; i++) {
		snprintf(ev, sizeof(ev), "ev%u", i);
		tc_record_writer_event(w, i, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
				       PERF_SAMPLE_IP, 1, 0, ev);
	}
}

static int finish_load(struct tc_record_writer *w, const char *name, struct tacho_profile **p,
		       struct tacho_diag *d)
{
	tc_record_writer_finish(w, 0, 0, 100, 0);
	assert_int_equal(tc_record_writer_close(w), 0);
	memset(d, 0, sizeof(*d));
	d->sz = sizeof(*d);
	return tacho_profile_load(th_tmp(name), p, d);
}

/* Two samples of period 2^63 wrapped the event's sum to 0 (and two lost records of
 * 2^63 the lost count): percentages of 1.8e21 %. The file is called corrupt instead. */
static void test_sums_do_not_wrap(void **state)
{
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_diag d;
	(void)state;

	start(&w, "period.rec", 1);
	tc_record_writer_sample(&w, 10, 0x401000, 0, 1ull << 63, 7, 7, 0, 0, 2, 0, NULL);
	tc_record_writer_sample(&w, 11, 0x401000, 0, 1ull << 63, 7, 7, 0, 0, 2, 0, NULL);
	assert_int_equal(finish_load(&w, "period.rec", &p, &d), -TACHO_ECORRUPT);
	assert_null(p);
	assert_contains(d.message, "add up to more than 2^64");

	start(&w, "lost.rec", 1);
	tc_record_writer_lost(&w, 1ull << 63, 10, 0);
	tc_record_writer_lost(&w, 1ull << 63, 11, 0);
	assert_int_equal(finish_load(&w, "lost.rec", &p, &d), -TACHO_ECORRUPT);
	assert_contains(d.message, "lost samples add up to more than 2^64");

	/* up to 2^64 - 1 is a sum, not a corruption */
	start(&w, "max.rec", 1);
	tc_record_writer_sample(&w, 10, 0x401000, 0, UINT64_MAX - 5, 7, 7, 0, 0, 2, 0, NULL);
	tc_record_writer_sample(&w, 11, 0x401000, 0, 5, 7, 7, 0, 0, 2, 0, NULL);
	assert_int_equal(finish_load(&w, "max.rec", &p, &d), 0);
	assert_int_equal(p->sel_events, UINT64_MAX);
	tacho_profile_free(p);
}

/* Event 65,537 of a file that declares 65,538: selecting it by name selected event 1
 * (the index cut to 16 bits), whose name and samples the report then showed. */
static void test_select_event_keeps_index(void **state)
{
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_profile_info info = { .sz = sizeof(info) };
	struct tacho_diag d;
	(void)state;

	start(&w, "events.rec", 65538);
	tc_record_writer_sample(&w, 10, 0x401000, 0, 3, 7, 7, 0, 1, 2, 0, NULL);
	assert_int_equal(finish_load(&w, "events.rec", &p, &d), 0);
	assert_int_equal(tacho_profile_select_event(p, "ev1"), 0);
	assert_int_equal(tacho_profile_info(p, &info), 0);
	assert_string_equal(info.event, "ev1");
	assert_int_equal(info.samples, 1);
	assert_int_equal(tacho_profile_select_event(p, "ev65537"), 0);
	assert_int_equal(tacho_profile_info(p, &info), 0);
	assert_string_equal(info.event, "ev65537");
	assert_int_equal(info.samples, 0);
	assert_int_equal(info.nevents, 65538);
	tacho_profile_free(p);
}

/* THROTTLE records were read and dropped: a recording the kernel throttled looked
 * complete. Now the info counts them (not the UNTHROTTLE ones) and the report's first
 * line and JSON say so. */
static void test_throttles_said(void **state)
{
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_profile_info info = { .sz = sizeof(info) };
	struct tacho_diag d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	start(&w, "throttle.rec", 1);
	tc_record_writer_sample(&w, 10, 0x401000, 0, 1, 7, 7, 0, 0, 2, 0, NULL);
	tc_record_writer_throttle(&w, 11, 0, true);
	tc_record_writer_throttle(&w, 12, 0, false);
	tc_record_writer_throttle(&w, 13, 1, true);
	tc_record_writer_throttle(&w, 14, 1, false);
	tc_record_writer_throttle(&w, 15, 0, true);
	assert_int_equal(finish_load(&w, "throttle.rec", &p, &d), 0);
	assert_int_equal(tacho_profile_info(p, &info), 0);
	assert_int_equal(info.throttles, 3);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_SYMBOL, false, f, TACHO_FORMAT_TABLE,
						  NULL), 0);
	fclose(f);
	assert_contains(buf, "1 samples of ev0 (period 1), 0 lost, sampling throttled 3 times: ./prog");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_SYMBOL, false, f, TACHO_FORMAT_JSON,
						  NULL), 0);
	fclose(f);
	assert_contains(buf, "\"throttles\": 3");
	free(buf);
	tacho_profile_free(p);

	/* none: the line stays as it was */
	start(&w, "quiet.rec", 1);
	tc_record_writer_sample(&w, 10, 0x401000, 0, 1, 7, 7, 0, 0, 2, 0, NULL);
	assert_int_equal(finish_load(&w, "quiet.rec", &p, &d), 0);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_SYMBOL, false, f, TACHO_FORMAT_TABLE,
						  NULL), 0);
	fclose(f);
	assert_contains(buf, "(period 1), 0 lost: ./prog");
	free(buf);
	tacho_profile_free(p);
}

#define NMAPS 70000

/* 70,000 mappings of as many binaries, each mapped twice (synthesized and reported),
 * and a sample in each: every lookup compared its key with every binary, mapping or
 * both (2.4e9 comparisons); now the work is a few comparisons per mapping and per
 * sample, and the arrays grow by doubling. */
static void test_many_mappings_linear(void **state)
{
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_profile_row *rows;
	struct tacho_diag d;
	size_t n;
	char name[32];
	(void)state;

	start(&w, "maps.rec", 1);
	for (int twice = 0; twice < 2; twice++)
		for (unsigned i = 0; i < NMAPS; i++) {
			/* a name that is no path: the report does not look for the file */
			snprintf(name, sizeof(name), "[anon:%u]", i);
			tc_record_writer_mmap(&w, 7, 7, 0x10000000ull + i * 0x2000ull, 0x1000, 0, 5,
					      1, NULL, 0, name);
		}
	for (unsigned i = 0; i < NMAPS; i++)
		tc_record_writer_sample(&w, 10 + i, 0x10000800ull + i * 0x2000ull, 0, 1, 7, 7, 0,
					0, 2, 0, NULL);
	assert_int_equal(finish_load(&w, "maps.rec", &p, &d), 0);
	assert_int_equal(p->ndsos, NMAPS);
	assert_int_equal(tc_profile_proc(p, 7, false)->nmaps, NMAPS);
	assert_true(p->compares <= 2ull * NMAPS);   /* one confirmation per second copy */
	assert_true(p->grows <= 64);
	assert_int_equal(tacho_profile_rows(p, TACHO_SORT_DSO, false, &rows, &n, sizeof(*rows)), 0);
	/* every sample found its own binary */
	assert_int_equal(n, NMAPS);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(rows[i].samples, 1);
		assert_true(strncmp(rows[i].dso, "[anon:", 6) == 0);
	}
	/* a binary search (17 steps) and one step back per sample */
	assert_true(p->compares <= 2ull * NMAPS + 20ull * NMAPS);
	free(rows);
	tacho_profile_free(p);
}

/* Overlapping mappings: the newest that covers the address and is not younger than the
 * sample wins (an address is resolved once: the younger mapping is not seen here). */
static void test_overlapping_mappings(void **state)
{
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_profile_row *rows;
	struct tacho_diag d;
	size_t n;
	(void)state;

	start(&w, "overlap.rec", 1);
	tc_record_writer_mmap(&w, 7, 7, 0x400000, 0x100000, 0, 5, 1, NULL, 0, "[big]");
	tc_record_writer_mmap(&w, 7, 7, 0x410000, 0x1000, 0, 5, 2, NULL, 0, "[small]");
	tc_record_writer_mmap(&w, 7, 7, 0x480000, 0x1000, 0, 5, 50, NULL, 0, "[late]");
	tc_record_writer_sample(&w, 10, 0x410800, 0, 1, 7, 7, 0, 0, 2, 0, NULL);   /* small */
	tc_record_writer_sample(&w, 11, 0x420000, 0, 2, 7, 7, 0, 0, 2, 0, NULL);   /* big */
	tc_record_writer_sample(&w, 12, 0x480800, 0, 4, 7, 7, 0, 0, 2, 0, NULL);   /* big: late is younger */
	tc_record_writer_sample(&w, 61, 0x300000, 0, 16, 7, 7, 0, 0, 2, 0, NULL);  /* none */
	assert_int_equal(finish_load(&w, "overlap.rec", &p, &d), 0);
	assert_int_equal(tacho_profile_rows(p, TACHO_SORT_DSO, false, &rows, &n, sizeof(*rows)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(rows[0].dso, "[unknown]");
	assert_int_equal(rows[0].events, 16);
	assert_string_equal(rows[1].dso, "[big]");
	assert_int_equal(rows[1].events, 6);
	assert_string_equal(rows[2].dso, "[small]");
	assert_int_equal(rows[2].events, 1);
	free(rows);
	tacho_profile_free(p);
}

/* A recording is data from someone else: its command line, thread names, event names
 * and binaries' names reach the terminal with their control bytes shown as \xHH (an
 * OSC sequence would set the window title; CSI would recolour or move the cursor), in
 * the table, perf-script and folded views; its JSON is valid UTF-8. */
static void test_escape_sequences_shown(void **state)
{
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_diag d;
	static const char *const writers[] = { "table", "script", "folded", "json" };
	(void)state;

	assert_int_equal(tc_record_writer_open(&w, th_tmp("esc.rec")), 0);
	tc_record_writer_meta(&w, "command", "./prog \x1b]0;pwned\x07 \xff");
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			       PERF_SAMPLE_IP, 1, 0, "page-faults\x1b[2J");
	tc_record_writer_comm(&w, 7, 7, true, 1, "\x1b[31mevil\xc2\x9b");
	tc_record_writer_mmap(&w, 7, 7, 0x400000, 0x1000, 0, 5, 1, NULL, 0, "[anon \x1b[1A]");
	tc_record_writer_sample(&w, 10, 0x400800, 0, 1, 7, 7, 0, 0, 2, 0, NULL);
	assert_int_equal(finish_load(&w, "esc.rec", &p, &d), 0);
	for (size_t i = 0; i < ARRAY_SIZE(writers); i++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (i == 0)
			assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_DSO, false, f,
								  TACHO_FORMAT_TABLE, NULL), 0);
		else if (i == 1)
			assert_int_equal(tacho_profile_write_script(p, f), 0);
		else if (i == 2)
			assert_int_equal(tacho_profile_write_folded(p, f), 0);
		else
			assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_DSO, false, f,
								  TACHO_FORMAT_JSON, NULL), 0);
		fclose(f);
		for (size_t k = 0; k < len; k++)
			if (text[k] == 0x1b || text[k] == 0x07 || (unsigned char)text[k] == 0x9b ||
			    (i < 3 && (unsigned char)text[k] == 0xff))
				fail_msg("%s: byte 0x%02x at %zu: %s", writers[i],
					 (unsigned char)text[k], k, text);
		if (i < 3)
			assert_contains(text, "\\x1b");
		if (i == 0) {
			assert_contains(text, "./prog \\x1b]0;pwned\\x07 \\xff");
			assert_contains(text, "[anon \\x1b[1A]");
			assert_contains(text, "page-faults\\x1b[2J");
		}
		if (i == 1)
			assert_contains(text, "\\x1b[31mevil\\xc2\\x9b 7/7");
		if (i == 2)
			assert_contains(text, "\\x1b[31mevil\\xc2\\x9b;[unknown] 1");
		if (i == 3)
			assert_contains(text, "\\u001b[1A");
		free(text);
	}
	tacho_profile_free(p);
}

/* A report keeps 32 bytes a sample: a chain of more than 65535 entries (no kernel
 * makes one, a crafted file may) is cut there and counted, the CPU a sample has none
 * of stays none, a data address is kept only where a sample has one, and the CPU and
 * address come back as written. */
static void test_compact_samples(void **state)
{
	enum { LONG = 70000 };
	uint64_t *chain = malloc(LONG * sizeof(*chain));
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_profile_info info = { .sz = sizeof(info) };
	struct tacho_diag d;
	(void)state;

	assert_non_null(chain);
	for (size_t i = 0; i < LONG; i++)
		chain[i] = 0x401000 + i;
	start(&w, "compact.rec", 1);
	tc_record_writer_sample(&w, 10, 0x401000, 0, 1, 7, 7, 3, 0, 2, LONG, chain);
	tc_record_writer_sample(&w, 11, 0x401000, 0, 1, 7, 7, TC_CPU_UNKNOWN, 0, 2, 3, chain);
	tc_record_writer_sample(&w, 12, 0x401000, 0, 1, 7, 7, 65535, 0, 2, 0, NULL);
	assert_int_equal(finish_load(&w, "compact.rec", &p, &d), 0);
	assert_int_equal(tacho_profile_info(p, &info), 0);
	assert_int_equal(info.chains_cut, 1);
	assert_int_equal(info.all_samples, 3);
	assert_int_equal(p->smps[0].nr, 65535);
	assert_int_equal(tc_smp_chain(p, &p->smps[0])[65534], 0x401000 + 65534);
	assert_int_equal(p->smps[1].nr, 3);
	assert_int_equal(tc_smp_chain(p, &p->smps[1])[2], 0x401002);
	assert_null(tc_smp_chain(p, &p->smps[2]));
	assert_int_equal(p->nchains, 2);   /* a pointer only for the samples with a chain */
	assert_int_equal(tc_smp_cpu(p, &p->smps[0]), 3);
	assert_int_equal(tc_smp_cpu(p, &p->smps[1]), TC_CPU_UNKNOWN);
	assert_int_equal(tc_smp_cpu(p, &p->smps[2]), TC_CPU_UNKNOWN);
	assert_null(p->addrs);
	tacho_profile_free(p);

	/* addresses: none before the first, each as written after */
	start(&w, "addrs.rec", 1);
	for (uint64_t i = 0; i < 5000; i++)
		tc_record_writer_sample(&w, 10 + i, 0x401000, i >= 3 ? 0x7f0000000000 + i : 0, 1,
					7, 7, 0, 0, 2, 0, NULL);
	assert_int_equal(finish_load(&w, "addrs.rec", &p, &d), 0);
	assert_non_null(p->addrs);
	for (size_t i = 0; i < 5000; i++)
		assert_int_equal(tc_smp_addr(p, &p->smps[i]), i >= 3 ? 0x7f0000000000 + i : 0);
	tacho_profile_free(p);
	free(chain);
}

/* The sample's period has 32 bits: one of 2^32 - 1 or more is kept beside it, by the
 * sample's index, and comes back exact (the event's sum with it); the thread, CPU and
 * event the samples share are kept once per combination and come back per sample. */
static void test_big_periods_and_contexts(void **state)
{
	enum { N = 3000 };
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_diag d;
	uint64_t sum = 0;
	(void)state;

	start(&w, "bigp.rec", 3);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t per = i % 7 == 0 ? (1ull << 32) + i : i % 11 == 0 ? UINT32_MAX : i + 1;
		tc_record_writer_sample(&w, 10 + i, 0x401000 + i, 0, per, 100 + (uint32_t)(i % 5),
					1000 + (uint32_t)(i % 10), (uint32_t)(i % 3),
					(uint16_t)(i % 3), i % 2 ? 2 : 1, 0, NULL);
		sum += per;
	}
	assert_int_equal(finish_load(&w, "bigp.rec", &p, &d), 0);
	assert_int_equal(p->nsmps, N);
	assert_int_equal(p->nctxs, 30);   /* tid i % 10 fixes pid, CPU and event: 10 x 3 */
	assert_int_equal(p->nbigp, N / 7 + 1 + (N / 11 + 1) - (N / 77 + 1));
	for (size_t i = 0; i < N; i++) {
		const struct smp *s = &p->smps[i];
		uint64_t per = i % 7 == 0 ? (1ull << 32) + i : i % 11 == 0 ? UINT32_MAX : i + 1;
		assert_int_equal(tc_smp_period(p, s), per);
		assert_int_equal(tc_smp_pid(p, s), 100 + i % 5);
		assert_int_equal(tc_smp_tid(p, s), 1000 + i % 10);
		assert_int_equal(tc_smp_cpu(p, s), i % 3);
		assert_int_equal(tc_smp_event(p, s), i % 3);
		assert_int_equal(s->misc, i % 2 ? 2 : 1);
		assert_int_equal(s->ip, 0x401000 + i);
	}
	assert_int_equal(p->evs[0].events + p->evs[1].events + p->evs[2].events, sum);
	tacho_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums_do_not_wrap),
		cmocka_unit_test(test_compact_samples),
		cmocka_unit_test(test_big_periods_and_contexts),
		cmocka_unit_test(test_select_event_keeps_index),
		cmocka_unit_test(test_throttles_said),
		cmocka_unit_test(test_many_mappings_linear),
		cmocka_unit_test(test_overlapping_mappings),
		cmocka_unit_test(test_escape_sequences_shown),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
