/* test-hashmap.c - util's hash map and string pool: collisions (many values under one
 * key), growth, removal inside and across probe runs, a long random run checked against
 * a plain array, and interning (the same id and pointer for equal strings, pointers
 * that survive growth). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/util.h"

/* A deterministic generator, so that a failure is the same on every run. */
static uint64_t rng = 0x243f6a8885a308d3ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_empty(void **state)
{
	struct tc_hmap h = TC_HMAP_INIT;
	size_t pos = 0;
	uint32_t v;
	(void)state;

	assert_false(tc_hmap_get(&h, 0, &v));
	assert_false(tc_hmap_next(&h, 7, &pos, &v));
	assert_false(tc_hmap_del(&h, 7, 0));
	assert_int_equal(tc_hmap_count(&h), 0);
	assert_int_equal(tc_hmap_put(&h, 1, UINT32_MAX), -TACHO_EOUTOFRANGE);
	assert_int_equal(tc_hmap_add(&h, 1, UINT32_MAX), -TACHO_EOUTOFRANGE);
	assert_int_equal(tc_hmap_count(&h), 0);
	tc_hmap_exit(&h);
	tc_hmap_exit(&h);   /* twice is fine: an empty map */
}

static void test_put_get(void **state)
{
	struct tc_hmap h;
	uint32_t v;
	(void)state;

	tc_hmap_init(&h);
	/* key 0 and value 0 are ordinary */
	assert_int_equal(tc_hmap_put(&h, 0, 0), 0);
	assert_true(tc_hmap_get(&h, 0, &v) && v == 0);
	assert_int_equal(tc_hmap_put(&h, UINT64_MAX, UINT32_MAX - 1), 0);
	assert_true(tc_hmap_get(&h, UINT64_MAX, &v) && v == UINT32_MAX - 1);
	/* put replaces */
	assert_int_equal(tc_hmap_put(&h, 0, 5), 0);
	assert_true(tc_hmap_get(&h, 0, &v) && v == 5);
	assert_int_equal(tc_hmap_count(&h), 2);
	assert_false(tc_hmap_get(&h, 1, &v));
	tc_hmap_exit(&h);
	assert_false(tc_hmap_get(&h, 0, &v));
	/* usable again after exit */
	assert_int_equal(tc_hmap_put(&h, 3, 4), 0);
	assert_true(tc_hmap_get(&h, 3, &v) && v == 4);
	tc_hmap_exit(&h);
}

/* One key with many values: the walk gives each exactly once, through growth. */
static void test_collisions(void **state)
{
	struct tc_hmap h = TC_HMAP_INIT;
	enum { N = 1000 };
	static bool seen[N];
	size_t pos = 0, count = 0;
	uint32_t v;
	(void)state;

	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(tc_hmap_add(&h, 42, i), 0);
		assert_int_equal(tc_hmap_add(&h, 43, i + N), 0);   /* a neighbour's run */
	}
	assert_int_equal(tc_hmap_count(&h), 2 * N);
	memset(seen, 0, sizeof(seen));
	while (tc_hmap_next(&h, 42, &pos, &v)) {
		assert_true(v < N);
		assert_false(seen[v]);
		seen[v] = true;
		count++;
	}
	assert_int_equal(count, N);
	/* removing from the middle of the run keeps the rest reachable */
	for (uint32_t i = 0; i < N; i += 2)
		assert_true(tc_hmap_del(&h, 42, i));
	assert_false(tc_hmap_del(&h, 42, 0));      /* already gone */
	assert_false(tc_hmap_del(&h, 42, N + 1));  /* 43's value, not 42's */
	memset(seen, 0, sizeof(seen));
	pos = count = 0;
	while (tc_hmap_next(&h, 42, &pos, &v)) {
		assert_true(v % 2 == 1 && !seen[v]);
		seen[v] = true;
		count++;
	}
	assert_int_equal(count, N / 2);
	for (uint32_t i = 0; i < N; i++) {
		size_t p43 = 0;
		bool found = false;
		while (!found && tc_hmap_next(&h, 43, &p43, &v))
			found = v == i + N;
		if (!found)
			fail_msg("value %u of key 43 lost after removals under key 42", i + N);
	}
	assert_int_equal(tc_hmap_count(&h), N / 2 + N);
	tc_hmap_exit(&h);
}

/* Growth from empty to 100,000 keys: every key keeps its value. */
static void test_growth(void **state)
{
	struct tc_hmap h = TC_HMAP_INIT;
	enum { N = 100000 };
	uint32_t v;
	(void)state;

	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(tc_hmap_put(&h, (uint64_t)i * 4096, i), 0);
	assert_int_equal(tc_hmap_count(&h), N);
	assert_true(h.cap >= 2 * N);   /* at most half full */
	for (uint32_t i = 0; i < N; i++)
		if (!tc_hmap_get(&h, (uint64_t)i * 4096, &v) || v != i)
			fail_msg("key %u lost or wrong after growth", i);
	assert_false(tc_hmap_get(&h, 4095, &v));
	tc_hmap_exit(&h);
}

/* A long random mix of put, add, del and get against a plain array of pairs. Few
 * distinct keys, so that runs are long and removals shift across them (and around the
 * end of the table). */
static void test_random_model(void **state)
{
	enum { OPS = 100000, MAXP = 512 };
	static struct { uint64_t k; uint32_t v; } model[MAXP];
	size_t n = 0;
	struct tc_hmap h = TC_HMAP_INIT;
	(void)state;

	for (int op = 0; op < OPS; op++) {
		uint64_t r = next_rand();
		uint64_t k = (r >> 8) % 97;
		uint32_t v = (uint32_t)((r >> 32) % 50);
		size_t i;

		switch (r % 4) {
		case 0:   /* add, if there is room in the model */
			if (n == MAXP)
				break;
			assert_int_equal(tc_hmap_add(&h, k, v), 0);
			model[n].k = k;
			model[n++].v = v;
			break;
		case 1: {   /* del: the map and the model agree on whether the pair is there */
			for (i = 0; i < n && !(model[i].k == k && model[i].v == v); i++)
				;
			bool there = i < n;
			if (tc_hmap_del(&h, k, v) != there)
				fail_msg("op %d: del(%llu, %u) disagrees with the model", op,
					 (unsigned long long)k, v);
			if (there)
				model[i] = model[--n];
			break;
		}
		case 2: {   /* walk: the multiset of values under k is the model's */
			size_t pos = 0, got = 0, want = 0;
			uint32_t x;
			for (i = 0; i < n; i++)
				want += model[i].k == k;
			while (tc_hmap_next(&h, k, &pos, &x)) {
				bool ok = false;
				for (i = 0; i < n && !ok; i++)
					ok = model[i].k == k && model[i].v == x;
				if (!ok)
					fail_msg("op %d: key %llu gave %u, not in the model", op,
						 (unsigned long long)k, x);
				got++;
			}
			if (got != want)
				fail_msg("op %d: key %llu has %zu values, the model %zu", op,
					 (unsigned long long)k, got, want);
			break;
		}
		default:
			assert_int_equal(tc_hmap_count(&h), n);
			break;
		}
	}
	tc_hmap_exit(&h);
}

static void test_hashes(void **state)
{
	(void)state;
	/* FNV-1a's published test values (Noll): "" and "a" */
	assert_true(tc_hash_str("") == 0xcbf29ce484222325ull);
	assert_true(tc_hash_str("a") == 0xaf63dc4c8601ec8cull);
	assert_true(tc_hash_bytes("foobar", 6) == tc_hash_str("foobar"));
	assert_true(tc_hash_bytes("a\0b", 3) != tc_hash_str("a"));
	assert_true(tc_hash_u64(0) == 0);
	assert_true(tc_hash_u64(1) != tc_hash_u64(2));
}

static void test_pool_intern(void **state)
{
	struct tc_strpool p = TC_STRPOOL_INIT;
	char buf[32];
	uint32_t a, b, c, e;
	const char *pa;
	(void)state;

	assert_int_equal(tc_strpool_count(&p), 0);
	assert_null(tc_strpool_str(&p, 0));
	assert_false(tc_strpool_find(&p, "main", &a));
	assert_int_equal(tc_strpool_intern(&p, "main", &a), 0);
	assert_int_equal(a, 0);
	assert_int_equal(tc_strpool_intern(&p, "[kernel]", &b), 0);
	assert_int_equal(b, 1);
	/* an equal string in another buffer: the same id, the same pointer */
	strcpy(buf, "main");
	assert_int_equal(tc_strpool_intern(&p, buf, &c), 0);
	assert_int_equal(c, a);
	pa = tc_strpool_add(&p, buf);
	assert_ptr_equal(pa, tc_strpool_str(&p, a));
	assert_ptr_not_equal(pa, buf);
	assert_string_equal(pa, "main");
	assert_true(tc_strpool_find(&p, "[kernel]", &c) && c == b);
	assert_int_equal(tc_strpool_intern(&p, "", &e), 0);   /* the empty string too */
	assert_int_equal(e, 2);
	assert_string_equal(tc_strpool_str(&p, e), "");
	assert_int_equal(tc_strpool_count(&p), 3);
	assert_null(tc_strpool_str(&p, 3));
	assert_null(tc_strpool_str(&p, UINT32_MAX));
	/* prefixes are other strings */
	assert_int_equal(tc_strpool_intern(&p, "mai", &c), 0);
	assert_int_equal(c, 3);
	tc_strpool_exit(&p);
	assert_int_equal(tc_strpool_count(&p), 0);
	assert_false(tc_strpool_find(&p, "main", &a));
	tc_strpool_exit(&p);
}

/* Many strings and a long one: the first pointers stay where they were, every id maps
 * back to its text. */
static void test_pool_growth(void **state)
{
	enum { N = 50000 };
	struct tc_strpool p;
	const char *first, *mid = NULL;
	char name[32], *big;
	uint32_t id;
	(void)state;

	tc_strpool_init(&p);
	first = tc_strpool_add(&p, "sym0");
	assert_non_null(first);
	for (int i = 1; i < N; i++) {
		snprintf(name, sizeof(name), "sym%d", i);
		assert_int_equal(tc_strpool_intern(&p, name, &id), 0);
		assert_int_equal(id, (uint32_t)i);
		if (i == N / 2)
			mid = tc_strpool_str(&p, id);
	}
	big = malloc(200000);
	assert_non_null(big);
	memset(big, 'x', 199999);
	big[199999] = '\0';
	assert_int_equal(tc_strpool_intern(&p, big, &id), 0);
	assert_int_equal(id, N);
	assert_string_equal(tc_strpool_str(&p, id), big);
	assert_int_equal(tc_strpool_intern(&p, "after-big", &id), 0);
	free(big);
	assert_ptr_equal(tc_strpool_str(&p, 0), first);
	assert_string_equal(first, "sym0");
	snprintf(name, sizeof(name), "sym%d", N / 2);
	assert_string_equal(mid, name);
	assert_true(tc_strpool_find(&p, name, &id) && id == N / 2);
	for (int i = 0; i < N; i += 997) {
		snprintf(name, sizeof(name), "sym%d", i);
		assert_string_equal(tc_strpool_str(&p, (uint32_t)i), name);
	}
	assert_int_equal(tc_strpool_count(&p), N + 2);
	tc_strpool_exit(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_collisions),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_random_model),
		cmocka_unit_test(test_hashes),
		cmocka_unit_test(test_pool_intern),
		cmocka_unit_test(test_pool_growth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
