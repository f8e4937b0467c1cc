/* test-record-sampler.c - the always-on sampler (tacho_sampler, tacho/record.h) through
 * its public calls: bad options and stats sizes refused, nothing held before it runs;
 * run on a thread of its own over the whole machine, with a memory cap of one byte every
 * sample is refused (exactly: dropped for memory = samples taken, no stack held) and
 * slices leave for the cap; with the default cap nothing is dropped and the held window
 * is written as gzipped pprof. Needs system-wide sampling (root, or paranoid -1):
 * skipped with the reason otherwise. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"
#include "tacho.h"

struct run {
	struct tacho_sampler *s;
	volatile int stop;
	int err;
	struct tacho_diag diag;
	pthread_t t;
};

static void *run_main(void *arg)
{
	struct run *r = arg;

	r->err = tacho_sampler_run(r->s, &r->stop, &r->diag);
	return NULL;
}

static void start(struct run *r, const struct tacho_sampler_opts *o)
{
	r->stop = 0;
	r->err = 0;
	r->diag = (struct tacho_diag){ .sz = sizeof(r->diag) };
	assert_int_equal(tacho_sampler_new(o, &r->s), 0);
	assert_int_equal(pthread_create(&r->t, NULL, run_main, r), 0);
}

static void stop(struct run *r)
{
	r->stop = 1;
	assert_int_equal(pthread_join(r->t, NULL), 0);
}

/* Stats until pred holds (a wait for a state: the deadline only ends a hung run), or
 * the run ended with an error: then the test skips where sampling is not allowed. */
static bool wait_for(struct run *r, struct tacho_sampler_stats *st,
		     bool (*pred)(const struct tacho_sampler_stats *st))
{
	double end = th_now() + 120;

	while (th_now() < end) {
		st->sz = sizeof(*st);
		assert_int_equal(tacho_sampler_stats(r->s, st), 0);
		if (pred(st))
			return true;
		if (!st->running && r->err)
			return false;
		usleep(50000);
	}
	fail_msg("the sampler never reached the state waited for");
	return false;
}

static void test_opts(void **state)
{
	struct tacho_sampler_opts o = { .sz = sizeof(o) };
	struct tacho_sampler_stats st = { .sz = 4 };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_sampler *s = NULL;
	FILE *f;
	(void)state;

	o.window_s = 86401;
	assert_int_equal(tacho_sampler_new(&o, &s), -EINVAL);
	o.window_s = 10;
	o.slice_s = 11;
	assert_int_equal(tacho_sampler_new(&o, &s), -EINVAL);
	o.slice_s = 0;
	o.freq = 100001;
	assert_int_equal(tacho_sampler_new(&o, &s), -EINVAL);
	assert_int_equal(tacho_sampler_new(NULL, &s), 0);
	assert_int_equal(tacho_sampler_stats(s, &st), -EINVAL);
	st.sz = sizeof(st);
	assert_int_equal(tacho_sampler_stats(s, &st), 0);
	assert_false(st.running);
	assert_int_equal(st.samples, 0);
	/* nothing held before it ran */
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(tacho_sampler_write_pprof(s, 10, 0, f, &diag), -TACHO_EEMPTY);
	assert_string_equal(diag.message, "the sampler holds nothing yet");
	fclose(f);
	tacho_sampler_free(s);
	tacho_sampler_free(NULL);
}

static bool slices_dropped(const struct tacho_sampler_stats *st)
{
	return st->dropped_slices >= 1 && st->samples > 0;
}

static void test_cap(void **state)
{
	struct tacho_sampler_opts o = { .sz = sizeof(o), .window_s = 2, .slice_s = 1,
					.max_bytes = 1 };
	struct tacho_sampler_stats st;
	struct run r;
	(void)state;

	start(&r, &o);
	if (!wait_for(&r, &st, slices_dropped)) {
		stop(&r);
		tacho_sampler_free(r.s);
		TEST_SKIP("cannot sample the machine: %s", r.diag.message);
	}
	stop(&r);
	assert_int_equal(r.err, 0);
	st.sz = sizeof(st);
	assert_int_equal(tacho_sampler_stats(r.s, &st), 0);
	assert_false(st.running);
	/* one byte holds no stack: every sample was refused, none left with a slice */
	assert_int_equal(st.stacks, 0);
	assert_int_equal(st.dropped_memory, st.samples);
	assert_int_equal(st.dropped_window, 0);
	assert_true(st.event[0]);
	tacho_sampler_free(r.s);
}

static bool some_samples(const struct tacho_sampler_stats *st)
{
	return st->samples >= 1;
}

static void test_window(void **state)
{
	struct tacho_sampler_opts o = { .sz = sizeof(o) };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_sampler_stats st;
	unsigned char magic[2] = { 0, 0 };
	struct run r;
	FILE *f;
	(void)state;

	start(&r, &o);
	if (!wait_for(&r, &st, some_samples)) {
		stop(&r);
		tacho_sampler_free(r.s);
		TEST_SKIP("cannot sample the machine: %s", r.diag.message);
	}
	/* written while the sampler goes on */
	f = tmpfile();
	assert_non_null(f);
	assert_int_equal(tacho_sampler_write_pprof(r.s, 60, 0, f, &diag), 0);
	rewind(f);
	assert_int_equal(fread(magic, 1, 2, f), 2);
	assert_int_equal(magic[0], 0x1f);
	assert_int_equal(magic[1], 0x8b);
	fclose(f);
	stop(&r);
	assert_int_equal(r.err, 0);
	st.sz = sizeof(st);
	assert_int_equal(tacho_sampler_stats(r.s, &st), 0);
	/* 64 MiB and 60 s: nothing left */
	assert_int_equal(st.dropped_memory, 0);
	assert_int_equal(st.dropped_window, 0);
	assert_int_equal(st.dropped_slices, 0);
	assert_true(st.stacks > 0 && st.stacks <= st.samples);
	assert_true(st.bytes > 0 && st.bytes <= 64ull << 20);
	/* once per sampler */
	assert_int_equal(tacho_sampler_run(r.s, &r.stop, &diag), -EINVAL);
	tacho_sampler_free(r.s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opts),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
