/* trace-scribble.c - a traced program with a stray pointer into its trace area, for
 * tacho trace's tests (issue 27): it marks, maps the area that TACHO_TRACE names a second
 * time, writes over it in the way its argument names, then goes on marking from a new
 * thread for about 300 ms (tacho drains every 100 ms) and exits 0. "head-ahead": a
 * ring's head 2^40 past its tail; "head-behind": a head behind what tacho read;
 * "head-race": random heads written as fast as it can while marks go on; "sizes": the
 * header's shape set to huge values; "zero-header": the header's page zeroed; "torn":
 * a ring claimed by hand with entries of no kind, of channels past the table and never
 * published; "all-rings": every ring claimed with random heads, slots_used past the
 * rings; "channels": every channel published with a name that does not end;
 * "random": the header, the channel table and every ring's first page random;
 * "truncate": the area cut to 0 and to 4096 bytes (says "truncated" if that worked). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tacho.h"
#include "trace/area.h"

static volatile int stop_race;

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&t, NULL);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Marks on a ring of its own, for about 300 ms: tacho's drains meet the damage, and
 * entries after it. */
static void *marker(void *arg)
{
	for (int i = 0; i < 150; i++) {
		tacho_mark("after", (uint64_t)i);
		sleep_ms(2);
	}
	return arg;
}

static void *racer(void *arg)
{
	struct tc_trace_ring *r = arg;
	uint64_t s = 88172645463325252ull;

	while (!__atomic_load_n(&stop_race, __ATOMIC_RELAXED))
		__atomic_store_n(&r->head, rnd(&s), __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "", *spec = getenv("TACHO_TRACE");
	struct tc_trace_header *h, hc;
	struct tc_trace_geom g;
	struct stat st;
	pthread_t t, race;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int fd;

	/* the library maps the area at the first mark: its ring is ring 0 */
	for (int i = 0; i < 3; i++)
		tacho_mark("before", (uint64_t)i);
	if (!spec || (fd = open(spec, O_RDWR)) < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "trace-scribble: no trace area\n");
		return 2;
	}
	h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return 2;
	memcpy(&hc, h, sizeof(hc));
	if (tc_trace_geom_check(&hc, (uint64_t)st.st_size, &g))
		return 2;
	struct tc_trace_ring *r0 = tc_trace_ring_at(h, &g, 0);
	/* what tacho read of ring 0 (its tail), once it has read the three marks */
	for (int i = 0; i < 500 && __atomic_load_n(&r0->tail, __ATOMIC_ACQUIRE) < 3; i++)
		sleep_ms(10);

	if (!strcmp(mode, "head-ahead")) {
		r0->head = r0->tail + (1ull << 40);
	} else if (!strcmp(mode, "head-behind")) {
		r0->head = r0->tail - 2;
	} else if (!strcmp(mode, "head-race")) {
		if (pthread_create(&race, NULL, racer, r0))
			return 1;
	} else if (!strcmp(mode, "sizes")) {
		h->nslots = 0xffffffff;
		h->entries = 1u << 31;
		h->nchannels = 0xffffffff;
		h->channels_off = UINT64_MAX - 4095;
		h->rings_off = 1ull << 62;
		h->ring_bytes = 1ull << 63;
		h->size = UINT64_MAX;
	} else if (!strcmp(mode, "zero-header")) {
		memset(h, 0, 4096);
	} else if (!strcmp(mode, "torn")) {
		uint32_t slot = __atomic_fetch_add(&h->slots_used, 1, __ATOMIC_RELAXED);
		if (slot >= g.nslots)
			return 1;
		struct tc_trace_ring *r = tc_trace_ring_at(h, &g, slot);
		const struct tc_trace_entry torn[] = {
			{ .tsc = 1, .value = 1, .channel = 0, .kind = 0 },
			{ .tsc = 2, .value = 2, .channel = 0, .kind = 99 },
			{ .tsc = 3, .value = 3, .channel = 0xffffffff, .kind = TC_TRACE_MARK },
			{ .tsc = 4, .value = 4, .channel = g.nchannels - 1, .kind = TC_TRACE_MARK },
			{ .tsc = UINT64_MAX, .value = 5, .channel = 0, .kind = TC_TRACE_END },
		};
		r->pid = (uint32_t)getpid();
		r->tid = 1;
		__atomic_store_n(&r->claimed, 1, __ATOMIC_RELEASE);
		memcpy(r->e, torn, sizeof(torn));
		__atomic_store_n(&r->head, sizeof(torn) / sizeof(torn[0]), __ATOMIC_RELEASE);
	} else if (!strcmp(mode, "all-rings")) {
		for (uint32_t i = 1; i < g.nslots; i++) {
			struct tc_trace_ring *r = tc_trace_ring_at(h, &g, i);
			r->pid = (uint32_t)rnd(&seed);
			r->tid = (uint32_t)rnd(&seed);
			r->head = rnd(&seed);
			r->dropped = rnd(&seed);
			__atomic_store_n(&r->claimed, 1, __ATOMIC_RELEASE);
		}
		/* past the rings (as when threads ran out of them), not so near 2^32
		 * that the next thread's claim wraps it round to 0 */
		h->slots_used = g.nslots + 5;
	} else if (!strcmp(mode, "channels")) {
		for (uint32_t i = 1; i < g.nchannels; i++) {
			struct tc_trace_channel *c = tc_trace_channel_at(h, &g, i);
			memset(c->name, 0xff, sizeof(c->name));
			__atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
		}
		h->channels_used = g.nchannels + 5;
	} else if (!strcmp(mode, "random")) {
		uint64_t *p = (uint64_t *)(void *)h;
		for (uint64_t i = 0; i < g.rings_off / 8; i++)
			p[i] = rnd(&seed);
		for (uint32_t i = 0; i < g.nslots; i++) {
			uint64_t *q = (uint64_t *)(void *)tc_trace_ring_at(h, &g, i);
			for (size_t k = 0; k < 4096 / 8; k++)
				q[k] = rnd(&seed);
		}
	} else if (!strcmp(mode, "truncate")) {
		if (ftruncate(fd, 0) == 0 || ftruncate(fd, 4096) == 0)
			printf("truncated\n");
	} else {
		fprintf(stderr, "trace-scribble: unknown mode '%s'\n", mode);
		return 2;
	}
	/* the damage stays: this thread marks no more on ring 0 (its next mark would
	 * store its own head over a head written over) */
	if (pthread_create(&t, NULL, marker, NULL) || pthread_join(t, NULL))
		return 1;
	if (!strcmp(mode, "head-race")) {
		__atomic_store_n(&stop_race, 1, __ATOMIC_RELAXED);
		pthread_join(race, NULL);
	}
	return 0;
}
