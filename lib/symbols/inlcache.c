/* inlcache.c - the inline cache's file: building it, and reading it back only after
 * checking every count, offset and order in it (inlcache.h describes the layout). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "symbols/buildid-cache.h"
#include "symbols/inlcache.h"
#include "tacho/errors.h"
#include "util/util.h"

#define IC_MAGIC "TCINLNS"   /* and its NUL: 8 bytes */
#define IC_VERSION 1u

struct ic_header {
	char magic[8];
	uint32_t version;
	uint32_t bid_len;
	uint8_t bid[TC_BUILD_ID_MAX];
	uint32_t crc;          /* CRC-32 of everything after the header */
	uint64_t nranges, nframes, strsize;
};

struct ic_range {
	uint64_t addr;
	uint32_t first, n;
};

struct ic_frame {
	uint32_t name, file, line;
};

struct tc_inlcache {
	const struct ic_range *r;
	const struct ic_frame *f;
	const char *s;
	size_t nr;
	void *map;             /* the mapping, when tc_inlcache_map made it */
	size_t maplen;
};

static int bad(const char **why, const char *what)
{
	*why = what;
	return -TACHO_EPARSE;
}

int tc_inlcache_parse(const void *buf, size_t len, const uint8_t *bid, size_t bidlen,
		      struct tc_inlcache **out, const char **why)
{
	const struct ic_header *h = buf;
	const uint8_t *body = (const uint8_t *)buf + sizeof(*h);
	const struct ic_range *r;
	const struct ic_frame *f;
	const char *s;
	struct tc_inlcache *c;
	size_t blen;

	*out = NULL;
	*why = NULL;
	if (len < sizeof(*h))
		return bad(why, "shorter than its header");
	if (memcmp(h->magic, IC_MAGIC, sizeof(h->magic)))
		return bad(why, "not an inline cache (no magic)");
	if (h->version != IC_VERSION)
		return bad(why, "another version");
	if (h->bid_len != bidlen || bidlen > TC_BUILD_ID_MAX || memcmp(h->bid, bid, bidlen))
		return bad(why, "another build-id");
	blen = len - sizeof(*h);
	/* each part in turn fits what is left: no product or sum can wrap */
	if (h->nranges > blen / sizeof(*r) || h->nframes > (blen - h->nranges * sizeof(*r)) /
	    sizeof(*f) || h->strsize != blen - h->nranges * sizeof(*r) - h->nframes * sizeof(*f))
		return bad(why, "counts that do not add up to its size");
	if (tc_crc32(0, body, blen) != h->crc)
		return bad(why, "a checksum that does not match");
	r = (const struct ic_range *)body;
	f = (const struct ic_frame *)(body + h->nranges * sizeof(*r));
	s = (const char *)(f + h->nframes);
	if (h->strsize && s[h->strsize - 1])
		return bad(why, "strings that do not end with a NUL");
	if (h->strsize > UINT32_MAX || h->nframes > UINT32_MAX)
		return bad(why, "strings or frames too many");
	for (size_t i = 0; i < h->nframes; i++)
		if ((f[i].name != TC_IC_NONE && f[i].name >= h->strsize) ||
		    (f[i].file != TC_IC_NONE && f[i].file >= h->strsize) || f[i].line > INT_MAX)
			return bad(why, "a frame with a name, file or line out of range");
	for (size_t i = 0; i < h->nranges; i++) {
		if (i && r[i].addr <= r[i - 1].addr)
			return bad(why, "ranges out of order");
		if (r[i].n > TC_IC_MAX_CHAIN || r[i].first > h->nframes ||
		    r[i].n > h->nframes - r[i].first)
			return bad(why, "a range with frames out of range");
	}
	if (h->nranges && r[h->nranges - 1].n)
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

int tc_inlcache_map(int fd, const uint8_t *bid, size_t bidlen, struct tc_inlcache **out,
		    const char **why)
{
	size_t len;
	void *m;
	int err;

	*out = NULL;
	err = tc_bidcache_map_file(fd, sizeof(struct ic_header), &m, &len, why);
	if (err)
		return err;
	err = tc_inlcache_parse(m, len, bid, bidlen, out, why);
	if (err) {
		munmap(m, len);
		return err;
	}
	(*out)->map = m;
	(*out)->maplen = len;
	return 0;
}

void tc_inlcache_free(struct tc_inlcache *c)
{
	if (!c)
		return;
	if (c->map)
		munmap(c->map, c->maplen);
	free(c);
}

size_t tc_inlcache_count(const struct tc_inlcache *c)
{
	return c->nr;
}

int tc_inlcache_find(const struct tc_inlcache *c, uint64_t addr, struct tc_syminl *out,
		     size_t max)
{
	size_t lo = 0, hi = c->nr, n;
	const struct ic_range *r;

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
	n = r->n < max ? r->n : max;
	for (size_t i = 0; i < n; i++) {
		const struct ic_frame *f = &c->f[r->first + i];
		out[i].name = f->name != TC_IC_NONE ? c->s + f->name : NULL;
		out[i].call_file = f->file != TC_IC_NONE ? c->s + f->file : NULL;
		out[i].call_line = (int)f->line;
	}
	return (int)n;
}

/* --- building --- */

struct tc_inlbuild {
	struct ic_range *r;
	size_t nr, cap;
	struct ic_frame *f;
	size_t nf, fcap;
	char *s;                    /* the strings, as the file has them */
	size_t ns, scap;
	struct tc_hmap sidx;        /* tc_hash_str -> offset in s */
};

int tc_inlbuild_new(struct tc_inlbuild **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void tc_inlbuild_free(struct tc_inlbuild *b)
{
	if (!b)
		return;
	free(b->r);
	free(b->f);
	free(b->s);
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

/* The offset of s in the strings (TC_IC_NONE for NULL), added when new. */
static int intern(struct tc_inlbuild *b, const char *s, uint32_t *off)
{
	uint64_t key;
	size_t pos = 0, len;
	uint32_t v;
	int err;

	if (!s) {
		*off = TC_IC_NONE;
		return 0;
	}
	key = tc_hash_str(s);
	len = strlen(s) + 1;
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

/* Whether the n frames of range r are chain. */
static bool same_chain(const struct tc_inlbuild *b, const struct ic_range *r,
		       const struct tc_syminl *chain, size_t n)
{
	if (r->n != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct ic_frame *f = &b->f[r->first + i];
		const char *name = f->name != TC_IC_NONE ? b->s + f->name : NULL;
		const char *file = f->file != TC_IC_NONE ? b->s + f->file : NULL;

		if ((name ? !chain[i].name || strcmp(name, chain[i].name) : !!chain[i].name) ||
		    (file ? !chain[i].call_file || strcmp(file, chain[i].call_file) :
			    !!chain[i].call_file) ||
		    (int)f->line != (chain[i].call_line > 0 ? chain[i].call_line : 0))
			return false;
	}
	return true;
}

int tc_inlbuild_add(struct tc_inlbuild *b, uint64_t addr, const struct tc_syminl *chain,
		    size_t n)
{
	size_t first = b->nf;
	int err;

	if ((b->nr && addr <= b->r[b->nr - 1].addr) || n > TC_IC_MAX_CHAIN)
		return -EINVAL;
	/* the same chain as the range before: that range goes on (nothing before the
	 * first range answers either, so a first range with none is not kept) */
	if (b->nr ? same_chain(b, &b->r[b->nr - 1], chain, n) : !n)
		return 0;
	if (b->nf + n >= TC_IC_NONE)
		return -TACHO_EOUTOFRANGE;
	err = grow((void **)&b->f, &b->fcap, b->nf + n, sizeof(*b->f));
	if (!err)
		err = grow((void **)&b->r, &b->cap, b->nr + 1, sizeof(*b->r));
	for (size_t i = 0; i < n && !err; i++) {
		struct ic_frame *f = &b->f[b->nf + i];

		err = intern(b, chain[i].name, &f->name);
		if (!err)
			err = intern(b, chain[i].call_file, &f->file);
		f->line = chain[i].call_line > 0 ? (uint32_t)chain[i].call_line : 0;
	}
	if (err)
		return err;
	b->nf += n;
	b->r[b->nr].addr = addr;
	b->r[b->nr].first = n ? (uint32_t)first : 0;
	b->r[b->nr].n = (uint32_t)n;
	b->nr++;
	return 0;
}

int tc_inlbuild_image(const struct tc_inlbuild *b, const uint8_t *bid, size_t bidlen,
		      void **buf, size_t *len)
{
	struct ic_header h;
	size_t rs = b->nr * sizeof(*b->r), fs = b->nf * sizeof(*b->f);
	uint8_t *p;

	*buf = NULL;
	*len = 0;
	if (bidlen > TC_BUILD_ID_MAX || (b->nr && b->r[b->nr - 1].n))
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, IC_MAGIC, sizeof(h.magic));
	h.version = IC_VERSION;
	h.bid_len = (uint32_t)bidlen;
	memcpy(h.bid, bid, bidlen);
	h.nranges = b->nr;
	h.nframes = b->nf;
	h.strsize = b->ns;
	p = malloc(sizeof(h) + rs + fs + b->ns);
	if (!p)
		return -ENOMEM;
	if (rs)
		memcpy(p + sizeof(h), b->r, rs);
	if (fs)
		memcpy(p + sizeof(h) + rs, b->f, fs);
	if (b->ns)
		memcpy(p + sizeof(h) + rs + fs, b->s, b->ns);
	h.crc = tc_crc32(0, p + sizeof(h), rs + fs + b->ns);
	memcpy(p, &h, sizeof(h));
	*buf = p;
	*len = sizeof(h) + rs + fs + b->ns;
	return 0;
}
