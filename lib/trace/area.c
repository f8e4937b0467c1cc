/* area.c - the consumer's side of the trace area: creating it for a traced program,
 * draining its rings, and the counts of what the producers dropped. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/area.h"
#include "util/util.h"
#include "tacho/errors.h"

int tc_trace_area_create(struct tc_trace_area *a, const char *path, uint32_t nslots,
			 uint32_t entries, uint32_t nchannels)
{
	struct tc_trace_header *h;
	uint64_t ring_bytes, size, chan_off, rings_off;
	int fd, err = 0;

	memset(a, 0, sizeof(*a));
	nslots = nslots ? nslots : TC_TRACE_DEFAULT_SLOTS;
	entries = entries ? entries : TC_TRACE_DEFAULT_ENTRIES;
	nchannels = nchannels ? nchannels : TC_TRACE_DEFAULT_CHANNELS;
	if (entries < 2 || (entries & (entries - 1)) || entries > (1u << 24) || nslots > 65536 ||
	    nchannels > (1u << 20))
		return -EINVAL;
	ring_bytes = sizeof(struct tc_trace_ring) +
		     (uint64_t)entries * sizeof(struct tc_trace_entry);
	ring_bytes = (ring_bytes + 4095) & ~(uint64_t)4095;
	chan_off = 4096;
	rings_off = chan_off + (uint64_t)nchannels * sizeof(struct tc_trace_channel);
	rings_off = (rings_off + 4095) & ~(uint64_t)4095;
	size = rings_off + (uint64_t)nslots * ring_bytes;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* a sparse file: only the pages that threads and channels touch take memory */
	if (ftruncate(fd, (off_t)size) < 0) {
		err = -errno;
		goto out_unlink;
	}
	h = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		err = -errno;
		goto out_unlink;
	}
	h->version = TC_TRACE_VERSION;
	h->nslots = nslots;
	h->entries = entries;
	h->nchannels = nchannels;
	h->channels_off = chan_off;
	h->rings_off = rings_off;
	h->ring_bytes = ring_bytes;
	h->size = size;
	/* the magic last: a producer that maps the file too early refuses it */
	__atomic_store_n(&h->magic, TC_TRACE_MAGIC, __ATOMIC_RELEASE);
	a->path = strdup(path);
	if (!a->path) {
		munmap(h, (size_t)size);
		err = -ENOMEM;
		goto out_unlink;
	}
	a->h = h;
	a->size = (size_t)size;
	a->owner = true;
	close(fd);
	return 0;
out_unlink:
	unlink(path);
	close(fd);
	return err;
}

void tc_trace_area_free(struct tc_trace_area *a)
{
	if (a->h)
		munmap(a->h, a->size);
	if (a->owner && a->path)
		unlink(a->path);
	free(a->path);
	memset(a, 0, sizeof(*a));
}

static int drain_channels(struct tc_trace_header *h, uint32_t *known,
			  const struct tc_trace_visit *v)
{
	uint32_t used = __atomic_load_n(&h->channels_used, __ATOMIC_ACQUIRE);
	char name[TC_TRACE_NAME_MAX];
	int err;

	if (used > h->nchannels)
		used = h->nchannels;
	/* channels are published in index order per process but may become ready out of
	 * order across threads: stop at the first one not ready yet */
	while (*known < used) {
		struct tc_trace_channel *c = tc_trace_channel_at(h, *known);
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
	struct tc_trace_header *h = a->h;
	uint32_t used, mask = h->entries - 1;
	int err;

	err = drain_channels(h, known, v);
	if (err)
		return err;
	used = __atomic_load_n(&h->slots_used, __ATOMIC_ACQUIRE);
	if (used > h->nslots)
		used = h->nslots;
	for (uint32_t s = 0; s < used && !err; s++) {
		struct tc_trace_ring *r = tc_trace_ring_at(h, s);
		uint64_t head, tail;

		if (!__atomic_load_n(&r->claimed, __ATOMIC_ACQUIRE))
			continue;
		head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		for (tail = r->tail; tail != head; tail++) {
			struct tc_trace_entry e = r->e[tail & mask];
			/* an entry naming a channel published after the walk above */
			if (e.channel >= *known) {
				err = drain_channels(h, known, v);
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
	struct tc_trace_header *h = a->h;
	uint32_t used = __atomic_load_n(&h->slots_used, __ATOMIC_ACQUIRE);

	memset(out, 0, sizeof(*out));
	if (used > h->nslots)
		used = h->nslots;
	for (uint32_t s = 0; s < used; s++)
		out->ring_full += __atomic_load_n(&tc_trace_ring_at(h, s)->dropped, __ATOMIC_RELAXED);
	out->no_ring = __atomic_load_n(&h->unslotted, __ATOMIC_RELAXED);
	out->no_channel = __atomic_load_n(&h->unnamed, __ATOMIC_RELAXED);
}
