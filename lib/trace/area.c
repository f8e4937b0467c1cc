/* area.c - the trace area's shape, checked the same way by both sides, and the
 * consumer's side of it: making the area for a traced program, draining its rings, and
 * the counts of what the producers dropped. The consumer believes nothing the area says
 * after its creation: the traced program shares every byte of it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace/area.h"
#include "util/util.h"
#include "tacho/errors.h"

/* Rings and their entries are read and written with 8-byte atomics, and each ring's
 * indexes sit on cache lines of their own: a ring starts on a cache line. */
#define RING_ALIGN 64u

/* The layout of version 1, which programs built with any libtacho share: fields added
 * since live in its padding, so no offset moved */
_Static_assert(sizeof(struct tc_trace_ring) == 256 && offsetof(struct tc_trace_ring, head) == 64 &&
	       offsetof(struct tc_trace_ring, tail) == 128 &&
	       offsetof(struct tc_trace_ring, dropped) == 192, "the ring's layout of version 1");
_Static_assert(sizeof(struct tc_trace_header) == 88 &&
	       offsetof(struct tc_trace_header, wake) == 80, "the header's layout of version 1");

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
	a->slot = calloc(a->g.nslots, sizeof(*a->slot));
	if (!a->slot)
		return -ENOMEM;
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

void tc_trace_area_set_flags(struct tc_trace_area *a, uint32_t flags)
{
	a->flags = flags;
	__atomic_store_n(&((struct tc_trace_header *)a->base)->flags, flags, __ATOMIC_RELEASE);
}

void tc_trace_area_free(struct tc_trace_area *a)
{
	if (a->base)
		munmap(a->base, (size_t)a->g.size);
	if (a->fd >= 0)
		close(a->fd);
	free(a->slot);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

int tc_trace_area_env(const struct tc_trace_area *a, char *buf, size_t size)
{
	int n = snprintf(buf, size, "TACHO_TRACE=/proc/self/fd/%d", a->fd);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The header as the producers left it: its shape must still be the one made, and its
 * counts of rings and channels handed out only grow. Anything else is damage, counted
 * once; the consumer goes on with its own copy of the shape and the largest counts it
 * has seen. */
static void check_header(struct tc_trace_area *a)
{
	struct tc_trace_header *h = a->base;
	uint32_t slots = __atomic_load_n(&h->slots_used, __ATOMIC_ACQUIRE);
	uint32_t chans = __atomic_load_n(&h->channels_used, __ATOMIC_ACQUIRE);
	bool bad = false;

	/* each field read once, with an atomic load: the program may be writing it */
	bad |= __atomic_load_n(&h->magic, __ATOMIC_RELAXED) != TC_TRACE_MAGIC;
	bad |= __atomic_load_n(&h->version, __ATOMIC_RELAXED) != TC_TRACE_VERSION;
	bad |= __atomic_load_n(&h->nslots, __ATOMIC_RELAXED) != a->g.nslots;
	bad |= __atomic_load_n(&h->entries, __ATOMIC_RELAXED) != a->g.entries;
	bad |= __atomic_load_n(&h->nchannels, __ATOMIC_RELAXED) != a->g.nchannels;
	bad |= __atomic_load_n(&h->channels_off, __ATOMIC_RELAXED) != a->g.channels_off;
	bad |= __atomic_load_n(&h->rings_off, __ATOMIC_RELAXED) != a->g.rings_off;
	bad |= __atomic_load_n(&h->ring_bytes, __ATOMIC_RELAXED) != a->g.ring_bytes;
	bad |= __atomic_load_n(&h->size, __ATOMIC_RELAXED) != a->g.size;
	if (slots > a->g.nslots)
		slots = a->g.nslots;   /* may pass nslots: the rings ran out */
	if (chans > a->g.nchannels)
		chans = a->g.nchannels;
	bad |= slots < a->slots_seen || chans < a->channels_seen;
	if (slots > a->slots_seen)
		a->slots_seen = slots;
	if (chans > a->channels_seen)
		a->channels_seen = chans;
	if (bad)
		a->damage.header = 1;
	if (!a->damage.header) {
		a->unslotted = __atomic_load_n(&h->unslotted, __ATOMIC_RELAXED);
		a->unnamed = __atomic_load_n(&h->unnamed, __ATOMIC_RELAXED);
	}
}

static int drain_channels(struct tc_trace_area *a, uint32_t *known,
			  const struct tc_trace_visit *v)
{
	char name[TC_TRACE_NAME_MAX];
	int err;

	/* channels are published in index order per process but may become ready out of
	 * order across threads: stop at the first one not ready yet */
	while (*known < a->channels_seen) {
		struct tc_trace_channel *c = tc_trace_channel_at(a->base, &a->g, *known);
		if (!__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE))
			break;
		memcpy(name, c->name, sizeof(name));
		/* the library always ends a name inside the slot */
		if (!memchr(name, '\0', sizeof(name)))
			a->damage.entries++;
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

/* One entry, each field read once: the copy is what is checked and handed out. */
static void entry_read(const struct tc_trace_entry *src, struct tc_trace_entry *e)
{
	e->tsc = __atomic_load_n(&src->tsc, __ATOMIC_RELAXED);
	e->value = __atomic_load_n(&src->value, __ATOMIC_RELAXED);
	e->channel = __atomic_load_n(&src->channel, __ATOMIC_RELAXED);
	e->kind = __atomic_load_n(&src->kind, __ATOMIC_RELAXED);
}

/* Ring s: 0 (also when it waits for a channel not published yet), or a callback's
 * error. */
static int drain_ring(struct tc_trace_area *a, uint32_t s, uint32_t *known,
		      const struct tc_trace_visit *v, bool final)
{
	struct tc_trace_slot *st = &a->slot[s];
	struct tc_trace_ring *r = tc_trace_ring_at(a->base, &a->g, s);
	uint64_t mask = a->g.entries - 1, head, tail;
	bool moved;
	int err = 0;

	if (!st->claimed) {
		if (!__atomic_load_n(&r->claimed, __ATOMIC_ACQUIRE))
			return 0;
		/* whose ring it is, as the thread said when it claimed it */
		st->pid = __atomic_load_n(&r->pid, __ATOMIC_RELAXED);
		st->tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);
		st->claimed = true;
	}
	head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	/* the producer is never more than a ring ahead of what was read, nor behind it
	 * (that wraps to a huge distance): such a head was written over, and following
	 * it would read the ring round and round (a garbage head kept tacho reading one
	 * ring while its memory grew to 13.9 GB) */
	if (head - st->tail > a->g.entries) {
		st->dead = true;
		a->damage.rings++;
		return 0;
	}
	/* the tail is the consumer's own: the one in the area is for the producer */
	for (tail = st->tail; tail != head; tail++) {
		struct tc_trace_entry e;

		entry_read(&r->e[tail & mask], &e);
		if (e.kind < 1 || e.kind > TC_TRACE_KIND_MAX || e.channel >= a->g.nchannels) {
			a->damage.entries++;
			continue;
		}
		if (e.channel >= *known) {
			/* a channel published after the walk of the channels */
			err = drain_channels(a, known, v);
			if (err)
				break;
			if (e.channel >= *known) {
				if (!final)
					break;   /* not ready yet: read it next time */
				a->damage.entries++;   /* never published */
				continue;
			}
		}
		if (v->entry) {
			err = v->entry(v->arg, s, st->pid, st->tid, &e);
			if (err)
				break;
		}
	}
	moved = tail != st->tail;
	st->tail = tail;
	/* the room up to tail is the producer's again; a producer waiting for it (an area
	 * made with TC_TRACE_WAIT_FULL) is woken. The store and the load of the flag are
	 * sequentially consistent, as the producer's are in the other order: it sees this
	 * tail or this side sees its flag. A program that sets the flag for nothing costs
	 * a futex call a ring and a drain that moved it, no more */
	__atomic_store_n(&r->tail, tail, __ATOMIC_SEQ_CST);
	if (moved && (a->flags & TC_TRACE_WAIT_FULL) &&
	    __atomic_load_n(&r->waiting, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
		syscall(SYS_futex, (uint32_t *)&r->tail, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
	/* the producer wakes the consumer when its fill rises through the watermark; a
	 * ring that filled past it while it was read does not rise through it again
	 * until read below it: the caller is told to come back at once, not at its timer */
	if (__atomic_load_n(&r->head, __ATOMIC_RELAXED) - tail > tc_trace_watermark(a->g.entries))
		a->behind = true;
	return err;
}

int tc_trace_area_drain(struct tc_trace_area *a, uint32_t *known,
			const struct tc_trace_visit *v, bool final)
{
	int err;

	a->behind = false;
	check_header(a);
	err = drain_channels(a, known, v);
	if (err)
		return err;
	for (uint32_t s = 0; s < a->slots_seen; s++) {
		if (a->slot[s].dead)
			continue;
		err = drain_ring(a, s, known, v, final);
		if (err)
			return err;
	}
	return 0;
}

/* The waker's thread: from one value of the wake word to the next, a write to the
 * eventfd. FUTEX_WAIT returns at once when the word is no longer the value seen, so a
 * crossing between the load and the wait is not lost. */
static void *waker_main(void *arg)
{
	struct tc_trace_waker *w = arg;
	uint32_t seen = w->seen;
	struct timespec poll = { 0, TC_TRACE_WAKER_POLL_MS * 1000000L };

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		syscall(SYS_futex, w->word, FUTEX_WAIT, seen, &poll, NULL, 0);
		uint32_t now = __atomic_load_n(w->word, __ATOMIC_ACQUIRE);
		if (now != seen) {
			seen = now;
			eventfd_write(w->fd, 1);
		}
	}
	return NULL;
}

int tc_trace_waker_start(struct tc_trace_waker *w, struct tc_trace_area *a)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->word = &((struct tc_trace_header *)a->base)->wake;
	/* the value before the thread runs: a crossing between here and its first wait
	 * is one it has not seen (read in the thread, it would be missed) */
	w->seen = __atomic_load_n(w->word, __ATOMIC_ACQUIRE);
	w->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->fd < 0)
		return -errno;
	err = pthread_create(&w->thread, NULL, waker_main, w);
	if (err) {
		close(w->fd);
		w->fd = -1;
		return -err;
	}
	w->running = true;
	return 0;
}

void tc_trace_waker_clear(struct tc_trace_waker *w)
{
	eventfd_t v;

	if (w->fd >= 0)
		eventfd_read(w->fd, &v);   /* EAGAIN when already empty: nothing to do */
}

void tc_trace_waker_poke(struct tc_trace_waker *w)
{
	if (w->fd >= 0)
		eventfd_write(w->fd, 1);
}

void tc_trace_waker_stop(struct tc_trace_waker *w)
{
	if (w->running) {
		__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
		/* wake the thread as a producer would: it looks at stop next */
		__atomic_fetch_add(w->word, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, w->word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		pthread_join(w->thread, NULL);
		w->running = false;
	}
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

void tc_trace_area_drops(struct tc_trace_area *a, struct tc_trace_drops *out)
{
	memset(out, 0, sizeof(*out));
	check_header(a);
	for (uint32_t s = 0; s < a->slots_seen; s++) {
		struct tc_trace_ring *r = tc_trace_ring_at(a->base, &a->g, s);
		if (a->slot[s].dead)
			continue;
		out->ring_full = add_sat(out->ring_full,
					 __atomic_load_n(&r->dropped, __ATOMIC_RELAXED));
		out->waits = add_sat(out->waits, __atomic_load_n(&r->waits, __ATOMIC_RELAXED));
		out->waited_ns = add_sat(out->waited_ns,
					 __atomic_load_n(&r->waited_ns, __ATOMIC_RELAXED));
	}
	out->no_ring = a->unslotted;
	out->no_channel = a->unnamed;
}
