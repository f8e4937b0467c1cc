/* linecache.c - the line cache's file: building it, and reading it back only after
 * checking every count, offset and order in it (linecache.h describes the layout). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "symbols/buildid-cache.h"
#include "symbols/linecache.h"
#include "symbols/symbols.h"
#include "tacho/errors.h"
#include "util/util.h"

#define LC_MAGIC "TCLINES"   /* and its NUL: 8 bytes */
#define LC_VERSION 1u

struct lc_header {
	char magic[8];
	uint32_t version;
	uint32_t bid_len;
	uint8_t bid[TC_BUILD_ID_MAX];
	uint32_t crc;          /* CRC-32 of everything after the header */
	uint64_t nranges, nfiles, strsize;
};

struct lc_range {
	uint64_t addr;
	uint32_t file;
	uint32_t line;
};

struct lc_file {
	uint32_t name, dir;
};

struct tc_linecache {
	const struct lc_range *r;
	const struct lc_file *f;
	const char *s;
	size_t nr;
	void *map;             /* the mapping, when tc_linecache_map made it */
	size_t maplen;
};

static int bad(const char **why, const char *what)
{
	*why = what;
	return -TACHO_EPARSE;
}

int tc_linecache_parse(const void *buf, size_t len, const uint8_t *bid, size_t bidlen,
		       struct tc_linecache **out, const char **why)
{
	const struct lc_header *h = buf;
	const uint8_t *body = (const uint8_t *)buf + sizeof(*h);
	const struct lc_range *r;
	const struct lc_file *f;
	const char *s;
	struct tc_linecache *c;
	size_t blen;

	*out = NULL;
	*why = NULL;
	if (len < sizeof(*h))
		return bad(why, "shorter than its header");
	if (memcmp(h->magic, LC_MAGIC, sizeof(h->magic)))
		return bad(why, "not a line cache (no magic)");
	if (h->version != LC_VERSION)
		return bad(why, "another version");
	if (h->bid_len != bidlen || bidlen > TC_BUILD_ID_MAX || memcmp(h->bid, bid, bidlen))
		return bad(why, "another build-id");
	blen = len - sizeof(*h);
	/* each part in turn fits what is left: no product or sum can wrap */
	if (h->nranges > blen / sizeof(*r) || h->nfiles > (blen - h->nranges * sizeof(*r)) /
	    sizeof(*f) || h->strsize != blen - h->nranges * sizeof(*r) - h->nfiles * sizeof(*f))
		return bad(why, "counts that do not add up to its size");
	if (tc_crc32(0, body, blen) != h->crc)
		return bad(why, "a checksum that does not match");
	r = (const struct lc_range *)body;
	f = (const struct lc_file *)(body + h->nranges * sizeof(*r));
	s = (const char *)(f + h->nfiles);
	if (h->strsize && s[h->strsize - 1])
		return bad(why, "strings that do not end with a NUL");
	if (h->strsize > UINT32_MAX)
		return bad(why, "strings too large");
	for (size_t i = 0; i < h->nfiles; i++)
		if (f[i].name >= h->strsize || (f[i].dir != TC_LC_NONE && f[i].dir >= h->strsize))
			return bad(why, "a file name outside its strings");
	for (size_t i = 0; i < h->nranges; i++) {
		if (i && r[i].addr <= r[i - 1].addr)
			return bad(why, "ranges out of order");
		if (r[i].file == TC_LC_NONE ? r[i].line != 0 :
		    r[i].file >= h->nfiles || r[i].line == 0 || r[i].line > INT_MAX)
			return bad(why, "a range with a file or line out of range");
	}
	if (h->nranges && r[h->nranges - 1].file != TC_LC_NONE)
		return bad(why, "a last range that does not end");
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->r = r;
	c->f = f;
	c->s = s;
	c->nr = h->nranges;
	*out = c;
	return 0;
}

int tc_linecache_map(int fd, const uint8_t *bid, size_t bidlen, struct tc_linecache **out,
		     const char **why)
{
	size_t len;
	void *m;
	int err;

	*out = NULL;
	err = tc_bidcache_map_file(fd, sizeof(struct lc_header), &m, &len, why);
	if (err)
		return err;
	err = tc_linecache_parse(m, len, bid, bidlen, out, why);
	if (err) {
		munmap(m, len);
		return err;
	}
	(*out)->map = m;
	(*out)->maplen = len;
	return 0;
}

void tc_linecache_free(struct tc_linecache *c)
{
	if (!c)
		return;
	if (c->map)
		munmap(c->map, c->maplen);
	free(c);
}

size_t tc_linecache_count(const struct tc_linecache *c)
{
	return c->nr;
}

int tc_linecache_find(const struct tc_linecache *c, uint64_t addr, const char **file,
		      int *line, const char **comp_dir)
{
	size_t lo = 0, hi = c->nr;
	const struct lc_range *r;

	*file = NULL;
	*line = 0;
	*comp_dir = NULL;
	/* the last range that starts at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->r[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	r = &c->r[lo - 1];
	if (r->file == TC_LC_NONE)
		return 0;
	*file = c->s + c->f[r->file].name;
	*line = (int)r->line;
	if (c->f[r->file].dir != TC_LC_NONE)
		*comp_dir = c->s + c->f[r->file].dir;
	return 1;
}

/* --- building --- */

struct tc_linebuild {
	struct lc_range *r;
	size_t nr, cap;
	struct lc_file *f;
	size_t nf, fcap;
	struct tc_hmap fidx;        /* (name, dir) -> f */
	char *s;                    /* the strings, as the file has them */
	size_t ns, scap;
	struct tc_hmap sidx;        /* tc_hash_str -> offset in s */
};

int tc_linebuild_new(struct tc_linebuild **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void tc_linebuild_free(struct tc_linebuild *b)
{
	if (!b)
		return;
	free(b->r);
	free(b->f);
	free(b->s);
	tc_hmap_exit(&b->fidx);
	tc_hmap_exit(&b->sidx);
	free(b);
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

/* The offset of s in the strings, added when new. */
static int intern(struct tc_linebuild *b, const char *s, uint32_t *off)
{
	uint64_t key = tc_hash_str(s);
	size_t pos = 0, len = strlen(s) + 1;
	uint32_t v;
	int err;

	while (tc_hmap_next(&b->sidx, key, &pos, &v))
		if (!strcmp(b->s + v, s)) {
			*off = v;
			return 0;
		}
	if (b->ns + len >= UINT32_MAX)
		return -TACHO_EOUTOFRANGE;
	err = grow((void **)&b->s, &b->scap, b->ns + len, 1);
	if (err)
		return err;
	memcpy(b->s + b->ns, s, len);
	*off = (uint32_t)b->ns;
	err = tc_hmap_add(&b->sidx, key, *off);
	if (err)
		return err;
	b->ns += len;
	return 0;
}

static int file_of(struct tc_linebuild *b, const char *name, const char *dir, uint32_t *out)
{
	uint32_t n, d = TC_LC_NONE, v;
	uint64_t key;
	size_t pos = 0;
	int err;

	err = intern(b, name, &n);
	if (!err && dir)
		err = intern(b, dir, &d);
	if (err)
		return err;
	key = tc_hash_u64(((uint64_t)n << 32) | d);
	while (tc_hmap_next(&b->fidx, key, &pos, &v))
		if (b->f[v].name == n && b->f[v].dir == d) {
			*out = v;
			return 0;
		}
	if (b->nf >= TC_LC_NONE - 1)
		return -TACHO_EOUTOFRANGE;
	err = grow((void **)&b->f, &b->fcap, b->nf + 1, sizeof(*b->f));
	if (err)
		return err;
	err = tc_hmap_add(&b->fidx, key, (uint32_t)b->nf);
	if (err)
		return err;
	b->f[b->nf].name = n;
	b->f[b->nf].dir = d;
	*out = (uint32_t)b->nf++;
	return 0;
}

int tc_linebuild_add(struct tc_linebuild *b, uint64_t addr, const char *file, int line,
		     const char *comp_dir)
{
	uint32_t fi = TC_LC_NONE;
	int err;

	if (b->nr && addr <= b->r[b->nr - 1].addr)
		return -EINVAL;
	if (!file || line <= 0) {
		line = 0;
	} else {
		err = file_of(b, file, comp_dir, &fi);
		if (err)
			return err;
	}
	/* the same answer as the range before: that range goes on (nothing before the
	 * first range answers either, so a first range without a line is not kept) */
	if (b->nr ? b->r[b->nr - 1].file == fi && b->r[b->nr - 1].line == (uint32_t)line :
		    fi == TC_LC_NONE)
		return 0;
	err = grow((void **)&b->r, &b->cap, b->nr + 1, sizeof(*b->r));
	if (err)
		return err;
	b->r[b->nr].addr = addr;
	b->r[b->nr].file = fi;
	b->r[b->nr].line = (uint32_t)line;
	b->nr++;
	return 0;
}

int tc_linebuild_image(const struct tc_linebuild *b, const uint8_t *bid, size_t bidlen,
		       void **buf, size_t *len)
{
	struct lc_header h;
	size_t rs = b->nr * sizeof(*b->r), fs = b->nf * sizeof(*b->f);
	uint8_t *p;

	*buf = NULL;
	*len = 0;
	if (bidlen > TC_BUILD_ID_MAX || (b->nr && b->r[b->nr - 1].file != TC_LC_NONE))
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, LC_MAGIC, sizeof(h.magic));
	h.version = LC_VERSION;
	h.bid_len = (uint32_t)bidlen;
	memcpy(h.bid, bid, bidlen);
	h.nranges = b->nr;
	h.nfiles = b->nf;
	h.strsize = b->ns;
	p = malloc(sizeof(h) + rs + fs + b->ns);
	if (!p)
		return -ENOMEM;
	memcpy(p + sizeof(h), b->r, rs);
	memcpy(p + sizeof(h) + rs, b->f, fs);
	memcpy(p + sizeof(h) + rs + fs, b->s, b->ns);
	h.crc = tc_crc32(0, p + sizeof(h), rs + fs + b->ns);
	memcpy(p, &h, sizeof(h));
	*buf = p;
	*len = sizeof(h) + rs + fs + b->ns;
	return 0;
}
