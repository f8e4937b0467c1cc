/* fuzz-trace-area.c - libFuzzer target for tacho's drain of a trace area (the consumer,
 * tc_trace_area_drain and tc_trace_area_drops): an area of 4 rings of 8 entries and 8
 * channels, with one ring and one channel of good marks, which the bytes then write
 * over as a traced program with a stray pointer could, between drains: a program of
 * operations (patch any bytes, set a field of the header, of a ring or of an entry to a
 * value, drain, final drain, read the drops). Whatever the area holds: every channel
 * handed out comes in index order with a name that ends inside its slot, every entry
 * has a kind of enum tc_trace_kind and a channel already handed out, a ring gives at
 * most its size per drain, the drain returns 0 and ends (a garbage head once made it
 * read without end), and nothing is read outside the mapping (a stray read there is a
 * SEGV the fuzzer reports). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/area.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOTS 4
#define ENTRIES 8
#define CHANNELS 8

struct check {
	uint32_t channels;            /* handed out so far */
	uint32_t per_slot[SLOTS];     /* entries of this drain */
};

static int on_channel(void *arg, uint32_t index, const char *name)
{
	struct check *c = arg;

	if (index != c->channels || index >= CHANNELS || strlen(name) >= TC_TRACE_NAME_MAX)
		abort();
	c->channels++;
	return 0;
}

static int on_entry(void *arg, uint32_t slot, uint32_t pid, uint32_t tid,
		    const struct tc_trace_entry *e)
{
	struct check *c = arg;

	(void)pid;
	(void)tid;
	if (slot >= SLOTS || e->kind < 1 || e->kind > TC_TRACE_KIND_MAX ||
	    e->channel >= c->channels || ++c->per_slot[slot] > ENTRIES)
		abort();
	return 0;
}

/* The u64 at a place a stray pointer would most often hit: the header's fields, a
 * ring's indexes and flags, an entry's fields (chosen by sel). */
static void *hot_field(struct tc_trace_area *a, uint8_t sel, size_t *width)
{
	struct tc_trace_header *h = a->base;
	struct tc_trace_ring *r = tc_trace_ring_at(a->base, &a->g, (sel >> 4) % SLOTS);

	*width = 8;
	switch (sel & 15) {
	case 0: *width = 4; return &h->nslots;
	case 1: *width = 4; return &h->entries;
	case 2: *width = 4; return &h->slots_used;
	case 3: *width = 4; return &h->channels_used;
	case 4: return &h->rings_off;
	case 5: return &h->ring_bytes;
	case 6: return &r->head;
	case 7: return &r->tail;
	case 8: *width = 4; return &r->claimed;
	case 9: return &r->dropped;
	case 10: *width = 4; return &r->e[(sel >> 4) % ENTRIES].kind;
	case 11: *width = 4; return &r->e[(sel >> 4) % ENTRIES].channel;
	case 12: return &r->e[(sel >> 4) % ENTRIES].tsc;
	case 13: *width = 4; return &tc_trace_channel_at(a->base, &a->g, (sel >> 4) % CHANNELS)->ready;
	case 14: return &h->unslotted;
	default: return &h->magic;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tc_trace_area a;
	struct tc_trace_header *h;
	struct tc_trace_ring *r;
	struct tc_trace_drops d;
	struct check c = { 0 };
	struct tc_trace_visit v = { .arg = &c, .channel = on_channel, .entry = on_entry };
	uint32_t known = 0;
	size_t i = 0;

	if (tc_trace_area_create(&a, SLOTS, ENTRIES, CHANNELS))
		return 0;
	/* what a producer leaves: channel 0, ring 0 with three marks on it */
	h = a.base;
	strcpy(tc_trace_channel_at(a.base, &a.g, 0)->name, "c");
	tc_trace_channel_at(a.base, &a.g, 0)->ready = 1;
	h->channels_used = 1;
	h->slots_used = 1;
	r = tc_trace_ring_at(a.base, &a.g, 0);
	r->pid = r->tid = 1;
	r->claimed = 1;
	for (uint64_t k = 0; k < 3; k++)
		r->e[k] = (struct tc_trace_entry){ .tsc = k, .value = k, .channel = 0,
						   .kind = TC_TRACE_MARK };
	r->head = 3;

	while (i < size) {
		uint8_t op = data[i++];

		switch (op % 5) {
		case 0: {   /* bytes anywhere in the area */
			if (size - i < 3)
				goto out;
			size_t off = ((size_t)data[i] << 8 | data[i + 1]) % a.g.size;
			size_t len = data[i + 2] % 64;
			i += 3;
			if (len > size - i)
				len = size - i;
			if (len > a.g.size - off)
				len = (size_t)(a.g.size - off);
			memcpy((char *)a.base + off, data + i, len);
			i += len;
			break;
		}
		case 1: {   /* a field set to a value */
			size_t w;
			uint64_t val = 0;
			if (size - i < 1)
				goto out;
			void *f = hot_field(&a, data[i++], &w);
			size_t n = size - i < 8 ? size - i : 8;
			memcpy(&val, data + i, n);
			i += n;
			memcpy(f, &val, w);
			break;
		}
		case 2:
		case 3:
			memset(c.per_slot, 0, sizeof(c.per_slot));
			if (tc_trace_area_drain(&a, &known, &v, op % 5 == 3))
				abort();
			if (known != c.channels || known > CHANNELS)
				abort();
			break;
		default:
			tc_trace_area_drops(&a, &d);
			if (a.slots_seen > SLOTS || a.channels_seen > CHANNELS)
				abort();
			break;
		}
	}
out:
	memset(c.per_slot, 0, sizeof(c.per_slot));
	if (tc_trace_area_drain(&a, &known, &v, true))
		abort();
	tc_trace_area_drops(&a, &d);
	tc_trace_area_free(&a);
	return 0;
}
