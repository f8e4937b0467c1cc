/* test-trace-lost-channels.c - the loader's losses by channel on traces written by hand:
 * LOST records on CPUs 0 and 3, one with no CPU known (TC_LOST_NO_CPU) and one naming a
 * CPU no machine has; each lands in its channel, the channels sum to the total, and the
 * words say them; losses that add up past 2^64 are a corrupt file, said with the byte. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "record/recfile.h"
#include "timeline/timeline.h"

struct lost {
	uint64_t n;
	uint32_t cpu;
};

/* A trace of nothing but its LOST records, in memory (*len bytes; free it). */
static unsigned char *trace_of(const struct lost *l, size_t nl, size_t *len)
{
	struct tc_record_writer w;
	int fd = memfd_create("trace", 0);
	unsigned char *buf;
	off_t size;

	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_meta(&w, "command", "./prog");
	for (size_t i = 0; i < nl; i++)
		tc_record_writer_lost(&w, l[i].n, 10 + i, l[i].cpu);
	tc_record_writer_finish(&w, 0, 0, 100, 0);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	size = lseek(fd, 0, SEEK_END);
	assert_true(size > 0);
	buf = malloc((size_t)size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	tc_record_writer_close(&w);
	*len = (size_t)size;
	return buf;
}

static void test_channels_sum_to_total(void **state)
{
	static const struct lost l[] = {
		{ 5, 3 }, { 7, 0 }, { 2, 3 }, { 11, TC_LOST_NO_CPU }, { 4, 5000 },
	};
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_timeline *t;
	size_t len;
	unsigned char *buf = trace_of(l, ARRAY_SIZE(l), &len);
	char words[256];

	assert_int_equal(tc_timeline_load_mem(buf, len, "l.trace", &t, &d), 0);
	assert_int_equal(t->lost, 29);
	assert_int_equal(t->nlost_cpu, 4);
	assert_int_equal(t->lost_cpu[0], 7);
	assert_int_equal(t->lost_cpu[1], 0);
	assert_int_equal(t->lost_cpu[2], 0);
	assert_int_equal(t->lost_cpu[3], 7);
	/* no CPU, and a CPU past any machine's: no ring anyone can find */
	assert_int_equal(t->lost_nocpu, 15);
	assert_string_equal(tc_tl_lost_words(t, words, sizeof(words)),
			    "cpu0 7, cpu3 7, 15 on no known CPU");
	assert_contains(t->notes.buf, "events lost by the kernel: 29 (cpu0 7, cpu3 7, 15 on "
			"no known CPU)\n");
	/* words cut short stay a string */
	assert_string_equal(tc_tl_lost_words(t, words, 9), "cpu0 7, ");
	tacho_timeline_free(t);
	free(buf);
}

static void test_nothing_lost(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_timeline *t;
	size_t len;
	unsigned char *buf = trace_of(NULL, 0, &len);
	char words[64];

	assert_int_equal(tc_timeline_load_mem(buf, len, "n.trace", &t, &d), 0);
	assert_int_equal(t->lost, 0);
	assert_int_equal(t->nlost_cpu, 0);
	assert_string_equal(tc_tl_lost_words(t, words, sizeof(words)), "");
	assert_null(strstr(t->notes.buf ? t->notes.buf : "", "events lost"));
	tacho_timeline_free(t);
	free(buf);
}

static void test_overflow_is_corrupt(void **state)
{
	static const struct lost l[] = { { UINT64_MAX, 0 }, { 1, 1 } };
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_timeline *t = NULL;
	size_t len;
	unsigned char *buf = trace_of(l, ARRAY_SIZE(l), &len);

	assert_int_equal(tc_timeline_load_mem(buf, len, "o.trace", &t, &d), -TACHO_ECORRUPT);
	assert_null(t);
	assert_contains(d.message, "the lost events add up past 2^64");
	assert_contains(d.message, "record at byte ");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_channels_sum_to_total),
		cmocka_unit_test(test_nothing_lost),
		cmocka_unit_test(test_overflow_is_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
