/* hashmap.c - the one hash map: open addressing with linear probing from a 64-bit key
 * to a 32-bit value, several values per key for keys that are hashes, removal by
 * shifting back (no tombstones); and the hash functions that feed it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

uint64_t tc_hash_u64(uint64_t x)
{
	/* splitmix64's finalizer (Steele, Lea & Flood 2014): every key bit reaches every
	 * hash bit, so that pids, addresses and indices spread over the low bits the
	 * table uses */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t tc_hash_bytes(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 14695981039346656037ull;   /* FNV-1a, 64-bit */

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

uint64_t tc_hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

void tc_hmap_init(struct tc_hmap *h)
{
	memset(h, 0, sizeof(*h));
}

void tc_hmap_exit(struct tc_hmap *h)
{
	free(h->keys);
	free(h->vals);
	memset(h, 0, sizeof(*h));
}

size_t tc_hmap_count(const struct tc_hmap *h)
{
	return h->n;
}

static size_t home(const struct tc_hmap *h, uint64_t key)
{
	return (size_t)tc_hash_u64(key) & (h->cap - 1);
}

static int grow(struct tc_hmap *h)
{
	size_t ncap = h->cap ? h->cap * 2 : 16;
	struct tc_hmap nh = { .cap = ncap };

	nh.keys = calloc(ncap, sizeof(*nh.keys));
	nh.vals = calloc(ncap, sizeof(*nh.vals));
	if (!nh.keys || !nh.vals) {
		free(nh.keys);
		free(nh.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < h->cap; i++) {
		size_t j;
		if (!h->vals[i])
			continue;
		for (j = home(&nh, h->keys[i]); nh.vals[j]; j = (j + 1) & (ncap - 1))
			;
		nh.keys[j] = h->keys[i];
		nh.vals[j] = h->vals[i];
	}
	nh.n = h->n;
	free(h->keys);
	free(h->vals);
	*h = nh;
	return 0;
}

bool tc_hmap_next(const struct tc_hmap *h, uint64_t key, size_t *pos, uint32_t *val)
{
	size_t mask = h->cap - 1;

	if (!h->cap)
		return false;
	/* *pos counts the slots of key's probe run already looked at; the run ends at an
	 * empty slot, and there always is one (the table is at most half full) */
	for (size_t j = (home(h, key) + *pos) & mask; h->vals[j]; j = (j + 1) & mask) {
		++*pos;
		if (h->keys[j] == key) {
			*val = h->vals[j] - 1;
			return true;
		}
	}
	return false;
}

bool tc_hmap_get(const struct tc_hmap *h, uint64_t key, uint32_t *val)
{
	size_t pos = 0;

	return tc_hmap_next(h, key, &pos, val);
}

int tc_hmap_add(struct tc_hmap *h, uint64_t key, uint32_t val)
{
	size_t j;

	if (val == UINT32_MAX)
		return -TACHO_EOUTOFRANGE;
	if ((h->n + 1) * 2 > h->cap && grow(h))
		return -ENOMEM;
	for (j = home(h, key); h->vals[j]; j = (j + 1) & (h->cap - 1))
		;
	h->keys[j] = key;
	h->vals[j] = val + 1;
	h->n++;
	return 0;
}

int tc_hmap_put(struct tc_hmap *h, uint64_t key, uint32_t val)
{
	if (val == UINT32_MAX)
		return -TACHO_EOUTOFRANGE;
	if (h->cap) {
		size_t mask = h->cap - 1;
		for (size_t j = home(h, key); h->vals[j]; j = (j + 1) & mask)
			if (h->keys[j] == key) {
				h->vals[j] = val + 1;
				return 0;
			}
	}
	return tc_hmap_add(h, key, val);
}

bool tc_hmap_del(struct tc_hmap *h, uint64_t key, uint32_t val)
{
	size_t mask = h->cap - 1, i, j;

	if (!h->cap)
		return false;
	for (i = home(h, key); h->vals[i]; i = (i + 1) & mask)
		if (h->keys[i] == key && h->vals[i] == val + 1)
			break;
	if (!h->vals[i])
		return false;
	/* Knuth's algorithm R (TAOCP vol. 3, 6.4): walk the rest of the run and move back
	 * into the hole every entry whose home slot does not lie cyclically in (hole, j],
	 * since a lookup for it would otherwise stop at the hole */
	for (j = (i + 1) & mask; h->vals[j]; j = (j + 1) & mask) {
		size_t k = home(h, h->keys[j]);
		bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
		if (stays)
			continue;
		h->keys[i] = h->keys[j];
		h->vals[i] = h->vals[j];
		i = j;
	}
	h->vals[i] = 0;
	h->keys[i] = 0;
	h->n--;
	return true;
}
