/* perfdata-zstd.c - perf record -z: the PERF_RECORD_COMPRESSED (and COMPRESSED2) records
 * of a perf.data, whose payloads are one zstd stream per session holding ordinary perf
 * records. libzstd is loaded at the first compressed record (dlopen), as the other
 * optional libraries are: a file without one never needs it, and no command pays its
 * start-up. Each record's payload is inflated into a chunk of its own that lives until
 * the reader ends (the records yielded point into it), beginning with the partial
 * record the previous chunk ended with (perf splits records across two COMPRESSED
 * records where its ring buffer wrapped). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "report/perfdata-int.h"

/* the soname of the headers built against (libzstd.so.1 on Debian 12) */
#define ZS_STR_(x) #x
#define ZS_STR(x) ZS_STR_(x)
#define ZS_SONAME "libzstd.so." ZS_STR(ZSTD_VERSION_MAJOR)

static struct {
	ZSTD_DStream *(*create)(void);
	size_t (*init)(ZSTD_DStream *);
	size_t (*decompress)(ZSTD_DStream *, ZSTD_outBuffer *, ZSTD_inBuffer *);
	size_t (*free)(ZSTD_DStream *);
	unsigned (*is_error)(size_t);
	const char *(*error_name)(size_t);
	bool ok;
	char why[200];
} zs;
static pthread_once_t zs_once = PTHREAD_ONCE_INIT;

static void zs_load(void)
{
	void *h = dlopen(ZS_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(zs.why, sizeof(zs.why), "%s cannot be loaded", ZS_SONAME);
		return;
	}
	/* the POSIX way of turning dlsym's object pointer into a function pointer */
	*(void **)&zs.create = dlsym(h, "ZSTD_createDStream");
	*(void **)&zs.init = dlsym(h, "ZSTD_initDStream");
	*(void **)&zs.decompress = dlsym(h, "ZSTD_decompressStream");
	*(void **)&zs.free = dlsym(h, "ZSTD_freeDStream");
	*(void **)&zs.is_error = dlsym(h, "ZSTD_isError");
	*(void **)&zs.error_name = dlsym(h, "ZSTD_getErrorName");
	zs.ok = zs.create && zs.init && zs.decompress && zs.free && zs.is_error && zs.error_name;
	if (!zs.ok)
		snprintf(zs.why, sizeof(zs.why), "%s lacks zstd's streaming functions", ZS_SONAME);
	/* kept loaded for the life of the process: the handle is never closed */
}

/* what one record's payload may inflate to: perf compresses at most one ring buffer's
 * worth (HEADER_COMPRESSED's mmap_len) into a record; a file that says nothing gets a
 * generous bound, and no file more than 256 MiB (a zstd bomb is corrupt, not a
 * reason to fill the memory) */
static size_t inflate_max(const struct tc_perfdata_reader *r)
{
	uint64_t m = r->zmmap_len ? r->zmmap_len : 16u << 20;

	if (m < 1u << 20)
		m = 1u << 20;
	return m > 256u << 20 ? 256u << 20 : (size_t)m;
}

int tc_pd_inflate(struct tc_perfdata_reader *r, const unsigned char *src, size_t n,
		  uint64_t off, const char *name, struct tacho_diag *diag)
{
	size_t carry = r->zlen - r->zpos, cap, max = inflate_max(r);
	struct tc_pd_zchunk *c;
	ZSTD_inBuffer in = { src, n, 0 };
	ZSTD_outBuffer out;

	if (r->ztype && r->ztype != 1)
		return tc_diag_set(diag, name, 0, 0, -TACHO_EVERSION, "perf.data at byte %" PRIu64
				   ": compressed with method %u, not zstd (1)", off, r->ztype);
	pthread_once(&zs_once, zs_load);
	if (!zs.ok)
		return tc_diag_set(diag, name, 0, 0, -TACHO_EVERSION, "perf.data at byte %" PRIu64
				   ": compressed records (perf record -z) need libzstd: %s "
				   "(Debian: apt-get install libzstd1)", off, zs.why);
	if (!r->zstream) {
		r->zstream = zs.create();
		if (!r->zstream)
			return -ENOMEM;
		if (zs.is_error(zs.init(r->zstream)))
			return -ENOMEM;
	}
	/* room for the carried-over bytes and a first guess of the payload's, grown as
	 * the stream fills it */
	cap = carry + (n < max / 8 ? 8 * n : max) + 4096;
	c = malloc(sizeof(*c) + cap);
	if (!c)
		return -ENOMEM;
	c->next = r->zchunks;
	r->zchunks = c;
	if (carry)
		memcpy(c->data, r->zdata + r->zpos, carry);
	out = (ZSTD_outBuffer){ c->data, cap, carry };
	/* a full output may leave bytes inside the decoder: it is called again then */
	while (in.pos < in.size || out.pos == out.size) {
		size_t ret;

		if (out.pos == out.size) {
			struct tc_pd_zchunk *g;

			if (out.size - carry >= max)
				return corrupt(diag, name, off, "a compressed record that inflates "
					       "past its bound");
			cap = out.size * 2 > carry + max ? carry + max : out.size * 2;
			r->zchunks = c->next;
			g = realloc(c, sizeof(*c) + cap);
			if (!g) {
				free(c);
				return -ENOMEM;
			}
			c = g;
			r->zchunks = c;
			out.dst = c->data;
			out.size = cap;
		}
		ret = zs.decompress(r->zstream, &out, &in);
		if (zs.is_error(ret)) {
			char what[160];
			snprintf(what, sizeof(what), "a compressed record zstd cannot inflate (%s)",
				 zs.error_name(ret));
			return corrupt(diag, name, off, what);
		}
	}
	/* what the stream still holds inside the decoder comes out with the next record */
	r->zdata = c->data;
	r->zlen = out.pos;
	r->zpos = 0;
	r->zoff = off;
	return 0;
}

void tc_pd_zstd_exit(struct tc_perfdata_reader *r)
{
	while (r->zchunks) {
		struct tc_pd_zchunk *c = r->zchunks;
		r->zchunks = c->next;
		free(c);
	}
	if (r->zstream && zs.ok)
		zs.free(r->zstream);
	r->zstream = NULL;
}
