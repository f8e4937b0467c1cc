/* area.c - the trace area's shape, checked the same way by both sides, and the
 * consumer's side of it: making the area for a traced program, draining its rings, and
 * the counts of what the producers dropped. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/area.h"
#include "util/util.h"
#include "tacho/errors.h"

/* Rings and their entries are read and written with 8-byte atomics, and each ring's
 * indexes sit on cache lines of their own: a ring starts on a cache line. */
#define RING_ALIGN 64u

static uint64_t page_up(uint64_t x)
{
	return (x + 4095) & ~(uint64_t)4095;
}

int tc_trace_geom_make(uint32_t nslots, uint32_t entries, uint32_t nchannels,
		       struct tc_trace_geom *g)
{
	nslots = nslots ? nslots : TC_TRACE_DEFAULT_SLOTS;
	entries = entries ? entries : TC_TRACE_DEFAULT_ENTRIES;
	nchannels = nchannels ? nchannels : TC_TRACE_DEFAULT_CHANNELS;
	if (entries < 2 || (entries & (entries - 1)) || entries > TC_TRACE_MAX_ENTRIES ||
	    nslots > TC_TRACE_MAX_SLOTS || nchannels > TC_TRACE_MAX_CHANNELS)
		return -EINVAL;
	/* within these limits nothing below can overflow 64 bits (at most 2^16 rings of
	 * 2^24 entries of 24 bytes: 2^45 bytes) */
	g->nslots = nslots;
	g->entries = entries;
	g->nchannels = nchannels;
	g->ring_bytes = page_up(sizeof(struct tc_trace_ring) +
				(uint64_t)entries * sizeof(struct tc_trace_entry));
	g->channels_off = 4096;
	g->rings_off = page_up(g->channels_off +
			       (uint64_t)nchannels * sizeof(struct tc_trace_channel));
	g->size = g->rings_off + (uint64_t)nslots * g->ring_bytes;
	return 0;
}

int tc_trace_geom_check(const struct tc_trace_header *h, uint64_t size, struct tc_trace_geom *out)
{
	struct tc_trace_geom g = {
		.nslots = h->nslots, .entries = h->entries, .nchannels = h->nchannels,
		.channels_off = h->channels_off, .rings_off = h->rings_off,
		.ring_bytes = h->ring_bytes, .size = h->size,
	};
	uint64_t chan_len, chan_end, rings_len, rings_end;

	if (h->magic != TC_TRACE_MAGIC || h->version != TC_TRACE_VERSION || g.size != size ||
	    size > SIZE_MAX)
		return -TACHO_ECORRUPT;
	if (!g.nslots || g.nslots > TC_TRACE_MAX_SLOTS || g.entries < 2 ||
	    g.entries > TC_TRACE_MAX_ENTRIES || (g.entries & (g.entries - 1)) ||
	    !g.nchannels || g.nchannels > TC_TRACE_MAX_CHANNELS)
		return -TACHO_ECORRUPT;
	/* a ring holds its entries (the mask of entries - 1 then keeps every index of
	 * it inside it), on a cache line of its own; a channel's flag is 4-aligned */
	if (g.ring_bytes < sizeof(struct tc_trace_ring) +
			   (uint64_t)g.entries * sizeof(struct tc_trace_entry) ||
	    g.ring_bytes % RING_ALIGN || g.rings_off % RING_ALIGN || g.channels_off % 8)
		return -TACHO_ECORRUPT;
	/* the header, the channels and the rings one after the other, inside the area:
	 * every sum and product checked, since any field may hold anything */
	if (g.channels_off < sizeof(struct tc_trace_header) ||
	    __builtin_mul_overflow((uint64_t)g.nchannels, (uint64_t)sizeof(struct tc_trace_channel),
				   &chan_len) ||
	    __builtin_add_overflow(g.channels_off, chan_len, &chan_end) || chan_end > g.rings_off ||
	    __builtin_mul_overflow((uint64_t)g.nslots, g.ring_bytes, &rings_len) ||
	    __builtin_add_overflow(g.rings_off, rings_len, &rings_end) || rings_end > size)
		return -TACHO_ECORRUPT;
	*out = g;
	return 0;
}

int tc_trace_area_create(struct tc_trace_area *a, uint32_t nslots, uint32_t entries,
			 uint32_t nchannels)
{
	struct tc_trace_header *h;
	int err;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	err = tc_trace_geom_make(nslots, entries, nchannels, &a->g);
	if (err)
		return err;
	/* no name in /dev/shm: a name is what another user plants a link or a file of
	 * their own under, before tacho creates it (issue 27). A memfd has none, is
	 * 0600, and goes with its last descriptor and mapping. */
	a->fd = memfd_create("tacho-trace", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (a->fd < 0) {
		err = -errno;
		goto out_free;
	}
	/* sparse: only the pages that threads and channels touch take memory */
	if (ftruncate(a->fd, (off_t)a->g.size) < 0) {
		err = -errno;
		goto out_free;
	}
	/* nobody, the program included, can cut it under tacho's mapping (SIGBUS) or
	 * grow it; the program's library requires these seals of a descriptor */
	if (fcntl(a->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		err = -errno;
		goto out_free;
	}
	h = mmap(NULL, (size_t)a->g.size, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (h == MAP_FAILED) {
		err = -errno;
		goto out_free;
	}
	a->base = h;
	h->version = TC_TRACE_VERSION;
	h->nslots = a->g.nslots;
	h->entries = a->g.entries;
	h->nchannels = a->g.nchannels;
	h->channels_off = a->g.channels_off;
	h->rings_off = a->g.rings_off;
	h->ring_bytes = a->g.ring_bytes;
	h->size = a->g.size;
	/* the magic last: a producer that maps the area too early refuses it */
	__atomic_store_n(&h->magic, TC_TRACE_MAGIC, __ATOMIC_RELEASE);
	return 0;
out_free:
	tc_trace_area_free(a);
	return err;
}

void tc_trace_area_free(struct tc_trace_area *a)
{
	if (a->base)
		munmap(a->base, (size_t)a->g.size);
	if (a->fd >= 0)
		close(a->fd);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

int tc_trace_area_env(const struct tc_trace_area *a, char *buf, size_t size)
{
	int n = snprintf(buf, size, "TACHO_TRACE=/proc/self/fd/%d", a->fd);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int drain_channels(struct tc_trace_area *a, uint32_t *known,
			  const struct tc_trace_visit *v)
{
	struct tc_trace_header *h = a->base;
	uint32_t used = __atomic_load_n(&h->channels_used, __ATOMIC_ACQUIRE);
	char name[TC_TRACE_NAME_MAX];
	int err;

	if (used > a->g.nchannels)
		used = a->g.nchannels;
	/* channels are published in index order per process but may become ready out of
	 * order across threads: stop at the first one not ready yet */
	while (*known < used) {
		struct tc_trace_channel *c = tc_trace_channel_at(a->base, &a->g, *known);
		if (!__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE))
			break;
		memcpy(name, c->name, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		if (v->channel) {
			err = v->channel(v->arg, *known, name);
			if (err)
				return err;
		}
		(*known)++;
	}
	return 0;
}

int tc_trace_area_drain(struct tc_trace_area *a, uint32_t *known,
			const struct tc_trace_visit *v)
{
	struct tc_trace_header *h = a->base;
	uint32_t used, mask = a->g.entries - 1;
	int err;

	err = drain_channels(a, known, v);
	if (err)
		return err;
	used = __atomic_load_n(&h->slots_used, __ATOMIC_ACQUIRE);
	if (used > a->g.nslots)
		used = a->g.nslots;
	for (uint32_t s = 0; s < used && !err; s++) {
		struct tc_trace_ring *r = tc_trace_ring_at(a->base, &a->g, s);
		uint64_t head, tail;

		if (!__atomic_load_n(&r->claimed, __ATOMIC_ACQUIRE))
			continue;
		head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		for (tail = r->tail; tail != head; tail++) {
			struct tc_trace_entry e = r->e[tail & mask];
			/* an entry naming a channel published after the walk above */
			if (e.channel >= *known) {
				err = drain_channels(a, known, v);
				if (err || e.channel >= *known)
					break;   /* not ready yet: read it next time */
			}
			if (v->entry) {
				err = v->entry(v->arg, s, r->pid, r->tid, &e);
				if (err)
					break;
			}
		}
		/* the room up to tail is the producer's again */
		__atomic_store_n(&r->tail, tail, __ATOMIC_RELEASE);
	}
	return err;
}

void tc_trace_area_drops(struct tc_trace_area *a, struct tc_trace_drops *out)
{
	struct tc_trace_header *h = a->base;
	uint32_t used = __atomic_load_n(&h->slots_used, __ATOMIC_ACQUIRE);

	memset(out, 0, sizeof(*out));
	if (used > a->g.nslots)
		used = a->g.nslots;
	for (uint32_t s = 0; s < used; s++)
		out->ring_full += __atomic_load_n(&tc_trace_ring_at(a->base, &a->g, s)->dropped,
						  __ATOMIC_RELAXED);
	out->no_ring = __atomic_load_n(&h->unslotted, __ATOMIC_RELAXED);
	out->no_channel = __atomic_load_n(&h->unnamed, __ATOMIC_RELAXED);
}
