/* test-report-load-shrink.c - a recording cut short while tacho_profile_load copies it
 * (the test seam tc_profile_load_copy_hook truncates it after the first 1 MiB): the
 * load never faults, holds what was there when read, and reads a file cut short up to
 * where it ends, as a load of the file cut short beforehand does; a file truncated
 * after the load leaves the loaded bytes whole (a mapping of the file would fault). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "record/recfile.h"
#include "report/report-int.h"

#define NSAMPLES 40000
#define MIB (1u << 20)

/* A recording of NSAMPLES samples with 16-frame chains, each chain its own and far from
 * every other (a repeated chain, or frames near their parent's, would take a few bytes
 * in the file's tree): some 6 MiB. */
static void write_big(const char *name)
{
	struct tc_record_writer w;
	uint64_t chain[16];

	assert_int_equal(tc_record_writer_open(&w, th_tmp(name)), 0);
	tc_record_writer_meta(&w, "command", "./prog");
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			       PERF_SAMPLE_IP, 1, 0, "ev0");
	for (unsigned i = 0; i < NSAMPLES; i++) {
		for (unsigned k = 0; k < 16; k++)
			chain[k] = tc_hash_u64((uint64_t)i << 4 | k) >> 1;
		tc_record_writer_sample(&w, 10 + i, chain[0], 0, 1, 7, 7, 0, 0, 2, 16, chain);
	}
	tc_record_writer_finish(&w, 0, 0, 100, 0);
	assert_int_equal(tc_record_writer_close(&w), 0);
}

static int load(const char *name, struct tacho_profile **p, struct tacho_profile_info *info)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	int err = tacho_profile_load(th_tmp(name), p, &d);

	if (!err) {
		info->sz = sizeof(*info);
		assert_int_equal(tacho_profile_info(*p, info), 0);
	}
	return err;
}

static off_t cut_to;

static void cut(void *arg)
{
	assert_int_equal(truncate(arg, cut_to), 0);
}

static long file_size(const char *name)
{
	FILE *f = fopen(th_tmp(name), "rb");
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	fclose(f);
	return n;
}

/* Cut to 2.5 MiB after 1 MiB was copied: the load reads up to the new end, exactly as a
 * load of the file cut to 2.5 MiB beforehand does. */
static void test_cut_while_copied(void **state)
{
	struct tacho_profile *p, *q;
	struct tacho_profile_info info, before;
	char path[4096];
	(void)state;

	write_big("big.rec");
	assert_true(file_size("big.rec") > 5 * MIB);
	assert_int_equal(load("big.rec", &p, &info), 0);
	assert_true(p->data_mapped);   /* the kernel has memfd_create and sendfile */
	assert_false(info.truncated);
	assert_int_equal(info.samples, NSAMPLES);
	tacho_profile_free(p);

	snprintf(path, sizeof(path), "%s", th_tmp("big.rec"));
	cut_to = 5 * MIB / 2;
	tc_profile_load_copy_hook = cut;
	tc_profile_load_copy_hook_arg = path;
	assert_int_equal(load("big.rec", &p, &info), 0);
	tc_profile_load_copy_hook = NULL;
	assert_int_equal(file_size("big.rec"), 5 * MIB / 2);
	assert_true(info.truncated);
	assert_int_equal(info.file_bytes, 5 * MIB / 2);
	assert_true(info.samples > 0 && info.samples < NSAMPLES);

	/* the same file, cut before the load: the same samples */
	assert_int_equal(load("big.rec", &q, &before), 0);
	assert_int_equal(before.samples, info.samples);
	assert_int_equal(before.good_bytes, info.good_bytes);
	tacho_profile_free(q);
	tacho_profile_free(p);
}

/* Cut to 512 KiB after 1 MiB was copied: the copy holds the 1 MiB read before the cut
 * (nothing past the new end is read, nothing read is lost). */
static void test_cut_below_what_was_copied(void **state)
{
	struct tacho_profile *p;
	struct tacho_profile_info info;
	char path[4096];
	(void)state;

	write_big("below.rec");
	snprintf(path, sizeof(path), "%s", th_tmp("below.rec"));
	cut_to = MIB / 2;
	tc_profile_load_copy_hook = cut;
	tc_profile_load_copy_hook_arg = path;
	assert_int_equal(load("below.rec", &p, &info), 0);
	tc_profile_load_copy_hook = NULL;
	assert_true(info.truncated);
	assert_int_equal(info.file_bytes, MIB);
	assert_true(info.samples > 0 && info.samples < NSAMPLES);
	tacho_profile_free(p);
}

/* Truncated to nothing after the load: every loaded byte still reads, and the report
 * is written whole (a MAP_PRIVATE mapping of the file would fault with SIGBUS here). */
static void test_cut_after_load(void **state)
{
	struct tacho_profile *p;
	struct tacho_profile_info info;
	unsigned long sum = 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	write_big("after.rec");
	assert_int_equal(load("after.rec", &p, &info), 0);
	assert_int_equal(truncate(th_tmp("after.rec"), 0), 0);
	for (size_t i = 0; i < p->len; i++)
		sum += p->data[i];
	assert_true(sum > 0);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_SYMBOL, false, f, TACHO_FORMAT_TABLE,
						  NULL), 0);
	fclose(f);
	assert_contains(buf, "40,000 samples");
	free(buf);
	tacho_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_while_copied),
		cmocka_unit_test(test_cut_below_what_was_copied),
		cmocka_unit_test(test_cut_after_load),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
