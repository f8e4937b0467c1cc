/* suggest.c - "did you mean": the nearest name to a word that named none, by edit
 * distance (event names, command options). */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define MAX_WORD 64

unsigned tc_edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	/* three rows of the optimal string alignment table: a swap looks two back */
	unsigned rows[3][MAX_WORD + 1];
	unsigned *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (la > MAX_WORD || lb > MAX_WORD)
		return UINT_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned *t;

		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			unsigned cost = ca != cb;
			unsigned v = prev[j - 1] + cost;

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
		}
		t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

void tc_nearest_init(struct tc_nearest *n, const char *word, size_t len)
{
	memset(n, 0, sizeof(*n));
	n->word = word;
	n->len = len;
	n->best = UINT_MAX;
}

void tc_nearest_add(struct tc_nearest *n, const char *cand, size_t len)
{
	unsigned limit = (unsigned)(n->len / 3), d;
	char *copy;

	if (limit < 1)
		limit = 1;
	if (limit > 3)
		limit = 3;
	/* the distance is at least the difference of the lengths */
	if (len > n->len + limit || n->len > len + limit)
		return;
	d = tc_edit_distance(n->word, n->len, cand, len);
	/* the word itself is no suggestion; the word in other letter case is */
	if ((len == n->len && !memcmp(cand, n->word, len)) || d > limit || d >= n->best)
		return;
	copy = tc_strndup(cand, len);
	if (!copy) {
		n->oom = true;
		return;
	}
	free(n->name);
	n->name = copy;
	n->best = d;
}

const char *tc_nearest_get(const struct tc_nearest *n)
{
	return n->name;
}

void tc_nearest_exit(struct tc_nearest *n)
{
	free(n->name);
	memset(n, 0, sizeof(*n));
}
