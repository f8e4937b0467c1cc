/* clocks.c - a survey of the clocks a program can read: resolution and the cost of one
 * read, for `tacho doctor` and for choosing a timer (the seeds' "other timers"). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "tsc/tsc.h"
#include "tacho/errors.h"
#include "tacho/tsc.h"

static const struct {
	const char *name;
	int id;
} clocks[] = {
	{ "tsc", -1 },
	{ "CLOCK_MONOTONIC", CLOCK_MONOTONIC },
	{ "CLOCK_MONOTONIC_RAW", CLOCK_MONOTONIC_RAW },
	{ "CLOCK_MONOTONIC_COARSE", CLOCK_MONOTONIC_COARSE },
	{ "CLOCK_REALTIME", CLOCK_REALTIME },
	{ "CLOCK_PROCESS_CPUTIME_ID", CLOCK_PROCESS_CPUTIME_ID },
	{ "CLOCK_THREAD_CPUTIME_ID", CLOCK_THREAD_CPUTIME_ID },
};

#define BATCH 32
#define BATCHES 201

/* One batch of BATCH reads of the clock; the compiler may not drop them (volatile
 * sink), and the TSC itself is read through the same inline as regions use. */
static int read_batch(int id)
{
	struct timespec ts;
	volatile uint64_t sink = 0;

	for (int i = 0; i < BATCH; i++) {
		if (id < 0) {
			sink += tacho_tsc_begin();
		} else {
			if (clock_gettime((clockid_t)id, &ts))
				return -errno;
			sink += (uint64_t)ts.tv_nsec;
		}
	}
	(void)sink;
	return 0;
}

/* The median over BATCHES batches of the time of one batch, less the timer's own
 * begin/end cost, divided by BATCH. Timed with the TSC when its rate is known, else
 * with CLOCK_MONOTONIC_RAW (then the figure includes that clock's cost / BATCH). */
static int read_cost(int id, double *ns)
{
	const struct tacho_tsc_info *ti = tc_tsc_info();
	bool tsc = ti->present && ti->hz > 0;
	uint64_t v[BATCHES];
	int err;

	for (int b = 0; b < BATCHES; b++) {
		uint64_t t0 = tsc ? tacho_tsc_begin() : tc_mono_raw_ns();
		err = read_batch(id);
		uint64_t t1 = tsc ? tacho_tsc_end() : tc_mono_raw_ns();
		if (err)
			return err;
		v[b] = t1 - t0;
	}
	tc_stats_sort_u64(v, BATCHES);
	double med = tc_stats_percentile_sorted_u64(v, BATCHES, 50);
	if (tsc) {
		med -= ti->pair_ticks;
		med = med < 0 ? 0 : med;
		med = med * 1e9 / ti->hz;
	}
	*ns = med / BATCH;
	return 0;
}

/* The first version of struct tacho_clock_info ends at read_ns. */
#define CLOCK_INFO_SZ_V1 tc_offsetofend(struct tacho_clock_info, read_ns)

/* One clock's entry, in the library's struct. */
static void survey_one(size_t i, struct tacho_clock_info *c)
{
	const struct tacho_tsc_info *ti = tc_tsc_info();
	struct timespec res;

	memset(c, 0, sizeof(*c));
	c->name = clocks[i].name;
	c->clock_id = clocks[i].id;
	if (clocks[i].id < 0) {
		if (!ti->present) {
			c->err = -ENODEV;
			return;
		}
		if (ti->hz <= 0) {
			c->err = -TACHO_ENOVALUE;
			return;
		}
		c->resolution_ns = 1e9 / ti->hz;
	} else {
		if (clock_getres((clockid_t)clocks[i].id, &res)) {
			c->err = -errno;
			return;
		}
		c->resolution_ns = (double)res.tv_sec * 1e9 + (double)res.tv_nsec;
	}
	c->err = read_cost(clocks[i].id, &c->read_ns);
	if (c->err)
		c->read_ns = 0;
}

int tacho_clock_survey(struct tacho_clock_info *out, size_t max, size_t clock_sz)
{
	size_t n = 0;

	if (max && (!out || clock_sz < CLOCK_INFO_SZ_V1))
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(clocks) && n < max; i++, n++) {
		struct tacho_clock_info c;

		survey_one(i, &c);
		tc_sized_put(TC_ELEM(out, n, clock_sz), clock_sz, &c, sizeof(c));
	}
	return (int)n;
}
