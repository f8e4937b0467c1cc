/* strpool.c - the one string pool: each distinct string stored once, numbered in the
 * order first seen, at an address that never moves, found again through the hash map. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* The copies live in chunks that are never reallocated, so that a string's address
 * stays valid as the pool grows. Chunks double from 256 bytes up to 64 KiB, so that the
 * small pools of regions (one per thread) stay small and the large ones (kernel
 * symbols, report locations) allocate rarely; a longer string gets a chunk of its own. */
struct tc_strpool_chunk {
	struct tc_strpool_chunk *next;
	size_t size, used;
	char data[];
};

#define CHUNK_MIN 256u
#define CHUNK_MAX (64u << 10)

void tc_strpool_init(struct tc_strpool *p)
{
	memset(p, 0, sizeof(*p));
}

void tc_strpool_exit(struct tc_strpool *p)
{
	struct tc_strpool_chunk *c = p->chunks;

	while (c) {
		struct tc_strpool_chunk *next = c->next;
		free(c);
		c = next;
	}
	free(p->strs);
	tc_hmap_exit(&p->index);
	memset(p, 0, sizeof(*p));
}

size_t tc_strpool_count(const struct tc_strpool *p)
{
	return p->n;
}

const char *tc_strpool_str(const struct tc_strpool *p, uint32_t id)
{
	return id < p->n ? p->strs[id] : NULL;
}

static bool find(const struct tc_strpool *p, const char *s, uint64_t h, uint32_t *id)
{
	size_t pos = 0;
	uint32_t i;

	/* the hash picks the candidates; the strings decide */
	while (tc_hmap_next(&p->index, h, &pos, &i))
		if (!strcmp(p->strs[i], s)) {
			*id = i;
			return true;
		}
	return false;
}

bool tc_strpool_find(const struct tc_strpool *p, const char *s, uint32_t *id)
{
	return find(p, s, tc_hash_str(s), id);
}

/* Room for len bytes: in the newest chunk, or in a new one. */
static char *room(struct tc_strpool *p, size_t len)
{
	struct tc_strpool_chunk *c = p->chunks;
	size_t size;

	if (c && c->size - c->used >= len)
		goto out;
	size = c ? c->size * 2 : CHUNK_MIN;
	if (size > CHUNK_MAX)
		size = CHUNK_MAX;
	if (size < len)
		size = len;
	c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	c->size = size;
	c->used = 0;
	c->next = p->chunks;
	p->chunks = c;
out:
	c->used += len;
	return c->data + c->used - len;
}

int tc_strpool_intern(struct tc_strpool *p, const char *s, uint32_t *id)
{
	uint64_t h = tc_hash_str(s);
	size_t len;
	char *copy;
	int err;

	if (find(p, s, h, id))
		return 0;
	if (p->n >= UINT32_MAX - 1)
		return -TACHO_EOUTOFRANGE;
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 16;
		char **ns = realloc(p->strs, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		p->strs = ns;
		p->cap = nc;
	}
	/* indexed first: if that fails, nothing has changed (a chunk's bytes, once taken,
	 * would stay taken) */
	err = tc_hmap_add(&p->index, h, (uint32_t)p->n);
	if (err)
		return err;
	len = strlen(s) + 1;
	copy = room(p, len);
	if (!copy) {
		tc_hmap_del(&p->index, h, (uint32_t)p->n);
		return -ENOMEM;
	}
	memcpy(copy, s, len);
	p->strs[p->n] = copy;
	*id = (uint32_t)p->n++;
	return 0;
}

const char *tc_strpool_add(struct tc_strpool *p, const char *s)
{
	uint32_t id;

	return tc_strpool_intern(p, s, &id) ? NULL : p->strs[id];
}
