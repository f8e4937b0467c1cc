/* kallsyms.c - the kernel's symbols: /proc/kallsyms read and sorted, or a copy of it in
 * the build-id cache mapped and bisected line by line (kallsyms-cache.c makes the copy),
 * and the look-up of an address in either. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "tacho/errors.h"

/* --- kallsyms --- */

struct ksym {
	uint64_t addr;
	const char *name;      /* in text */
};

struct tc_kallsyms {
	struct ksym *v;
	size_t n;
	bool hidden;
	/* the file as read, its lines cut in place: the names point into it. (Interning
	 * them in a string pool saved a few MB but hashed 100k names on every report
	 * with a kernel sample, a tenth of a small report's time.) */
	char *text;
	/* a copy mapped (tc_kallsyms_map): its lines, bisected at each look-up, from
	 * body on; the names looked up so far, by their line's offset */
	const char *map;
	size_t map_len, body;
	struct tc_hmap named;          /* line offset -> index into names */
	char **names;
	size_t nnames;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The value of hex digit c, or -1 (inline: the reader parses 122k addresses). */
static inline int hexval(unsigned char c)
{
	if ((unsigned)(c - '0') < 10)
		return c - '0';
	c |= 0x20;   /* 'A'-'F' to 'a'-'f' */
	return (unsigned)(c - 'a') < 6 ? c - 'a' + 10 : -1;
}

int tc_kallsyms_load(const char *path, struct tc_kallsyms **out)
{
	char *text, *line, *eol;
	size_t len, cap = 0;
	struct tc_kallsyms *k;
	bool any = false, nonzero = false, sorted = true;
	int err;

	*out = NULL;
	err = tc_read_file(path ? path : "/proc/kallsyms", &text, &len, 0);
	if (err)
		return err;
	k = calloc(1, sizeof(*k));
	if (!k) {
		free(text);
		return -ENOMEM;
	}
	for (line = text; line < text + len; line = eol + 1) {
		char *end = line, type, *name, *tab;
		uint64_t addr = 0;
		int d, digits = 0;

		eol = memchr(line, '\n', (size_t)(text + len - line));
		if (!eol)
			eol = text + len;   /* the NUL tc_read_file put there */
		*eol = '\0';
		/* "ADDRESS TYPE NAME": the address in hex, 16 digits on x86-64 */
		while ((d = hexval((unsigned char)*end)) >= 0 && digits++ < 16) {
			addr = addr << 4 | (uint64_t)d;
			end++;
		}
		if (!digits || digits > 16 || *end != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		name = end + 3;
		any = true;
		if (addr)
			nonzero = true;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (!addr)
			continue;
		if (k->n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct ksym *nv = realloc(k->v, ncap * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			k->v = nv;
			cap = ncap;
		}
		/* "name\t[module]": keep the name and the module */
		for (tab = strchr(name, '\t'); tab; tab = strchr(tab + 1, '\t'))
			*tab = ' ';
		if (k->n && addr < k->v[k->n - 1].addr)
			sorted = false;
		k->v[k->n].addr = addr;
		k->v[k->n].name = name;
		k->n++;
	}
	k->text = text;
	if (err) {
		tc_kallsyms_free(k);
		return err;
	}
	k->hidden = any && !nonzero;
	/* the kernel lists its own text in address order and usually its modules too
	 * (122k lines here, none out of order): sort only when one is */
	if (!sorted)
		qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
	*out = k;
	return 0;
}

/* --- a mapped copy: "%016x t NAME\n" lines in address order --- */

#define MAPPED_NAME 19   /* the name's column: 16 digits, " t " */

int tc_kallsyms_map(int fd, size_t body, struct tc_kallsyms **out)
{
	struct tc_kallsyms *k;
	struct stat st;
	void *m;

	*out = NULL;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size <= body)
		return -EINVAL;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	k = calloc(1, sizeof(*k));
	if (!k) {
		munmap(m, (size_t)st.st_size);
		return -ENOMEM;
	}
	k->map = m;
	k->map_len = (size_t)st.st_size;
	k->body = body;
	tc_hmap_init(&k->named);
	*out = k;
	return 0;
}

/* The address of the line that starts at at (0 and false when it is not one of the
 * copy's) and where the next one starts. */
static bool mapped_line(const struct tc_kallsyms *k, size_t at, uint64_t *addr, size_t *next)
{
	const char *m = k->map, *nl;
	uint64_t a = 0;

	if (at + MAPPED_NAME >= k->map_len)
		return false;
	for (size_t i = 0; i < 16; i++) {
		int d = hexval((unsigned char)m[at + i]);
		if (d < 0)
			return false;
		a = a << 4 | (uint64_t)d;
	}
	if (m[at + 16] != ' ' || m[at + 18] != ' ')
		return false;
	nl = memchr(m + at + MAPPED_NAME, '\n', k->map_len - at - MAPPED_NAME);
	*addr = a;
	*next = nl ? (size_t)(nl - m) + 1 : k->map_len;
	return true;
}

/* Bisects the lines for the last one at or before addr: reads some 17 lines of 122k,
 * so that a report touches the pages of the symbols it names, not a 5 MB table. */
static const char *mapped_lookup(struct tc_kallsyms *k, uint64_t addr, uint64_t *start)
{
	size_t lo = k->body, hi = k->map_len, best = SIZE_MAX, next;
	uint64_t a, best_addr = 0, hi_addr = UINT64_MAX;
	uint32_t idx;
	const char *nl;
	char *name, **nn;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		while (mid > lo && k->map[mid - 1] != '\n')
			mid--;   /* the start of the line mid is in */
		/* a line not in the format, or out of order with those read before: not
		 * the copy tacho wrote, no name rather than a wrong one */
		if (!mapped_line(k, mid, &a, &next) || a < best_addr || a > hi_addr)
			return NULL;
		if (a <= addr) {
			best = mid;
			best_addr = a;
			lo = next;
		} else {
			hi = mid;
			hi_addr = a;
		}
	}
	if (best == SIZE_MAX)
		return NULL;
	if (start)
		*start = best_addr;
	if (tc_hmap_get(&k->named, best, &idx))
		return k->names[idx];
	nl = memchr(k->map + best + MAPPED_NAME, '\n', k->map_len - best - MAPPED_NAME);
	name = strndup(k->map + best + MAPPED_NAME,
		       nl ? (size_t)(nl - k->map) - best - MAPPED_NAME
			  : k->map_len - best - MAPPED_NAME);
	nn = name ? realloc(k->names, (k->nnames + 1) * sizeof(*nn)) : NULL;
	if (!nn || tc_hmap_put(&k->named, best, (uint32_t)k->nnames)) {
		free(name);
		if (nn)
			k->names = nn;
		return NULL;
	}
	k->names = nn;
	k->names[k->nnames++] = name;
	return name;
}

void tc_kallsyms_free(struct tc_kallsyms *k)
{
	if (!k)
		return;
	free(k->text);
	free(k->v);
	if (k->map)
		munmap((void *)k->map, k->map_len);
	for (size_t i = 0; i < k->nnames; i++)
		free(k->names[i]);
	free(k->names);
	tc_hmap_exit(&k->named);
	free(k);
}

size_t tc_kallsyms_count(const struct tc_kallsyms *k)
{
	return k->n;
}

const char *tc_kallsyms_at(const struct tc_kallsyms *k, size_t i, uint64_t *addr)
{
	*addr = k->v[i].addr;
	return k->v[i].name;
}

bool tc_kallsyms_hidden(const struct tc_kallsyms *k)
{
	return k->hidden;
}

const char *tc_kallsyms_lookup(struct tc_kallsyms *k, uint64_t addr, uint64_t *start)
{
	size_t lo = 0, hi = k->n;

	if (k->map)
		return mapped_lookup(k, addr, start);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (start)
		*start = k->v[lo - 1].addr;
	return k->v[lo - 1].name;
}
