/* reczstd.c - libzstd, loaded at the first use, for the record file's ZSTACK records
 * (reczstd.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "record/reczstd.h"

#define RZ_STR_(x) #x
#define RZ_STR(x) RZ_STR_(x)
#define RZ_SONAME "libzstd.so." RZ_STR(ZSTD_VERSION_MAJOR)

static struct {
	ZSTD_CCtx *(*ccreate)(void);
	size_t (*cfree)(ZSTD_CCtx *);
	size_t (*cparam)(ZSTD_CCtx *, ZSTD_cParameter, int);
	size_t (*compress)(ZSTD_CCtx *, ZSTD_outBuffer *, ZSTD_inBuffer *, ZSTD_EndDirective);
	ZSTD_DCtx *(*dcreate)(void);
	size_t (*dfree)(ZSTD_DCtx *);
	size_t (*dparam)(ZSTD_DCtx *, ZSTD_dParameter, int);
	size_t (*dreset)(ZSTD_DCtx *, ZSTD_ResetDirective);
	size_t (*decompress)(ZSTD_DCtx *, ZSTD_outBuffer *, ZSTD_inBuffer *);
	unsigned (*is_error)(size_t);
	const char *(*error_name)(size_t);
	bool ok;
	char why[200];
} zs;
static pthread_once_t zs_once = PTHREAD_ONCE_INIT;

static void zs_load(void)
{
	const char *no = tc_env_trusted("TACHO_NO_ZSTD", NULL);
	void *h;

	if (no && !strcmp(no, "1")) {
		snprintf(zs.why, sizeof(zs.why), "libzstd is not used (TACHO_NO_ZSTD=1)");
		return;
	}
	h = dlopen(RZ_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(zs.why, sizeof(zs.why), "%s cannot be loaded", RZ_SONAME);
		return;
	}
	/* the POSIX way of turning dlsym's object pointer into a function pointer */
	*(void **)&zs.ccreate = dlsym(h, "ZSTD_createCCtx");
	*(void **)&zs.cfree = dlsym(h, "ZSTD_freeCCtx");
	*(void **)&zs.cparam = dlsym(h, "ZSTD_CCtx_setParameter");
	*(void **)&zs.compress = dlsym(h, "ZSTD_compressStream2");
	*(void **)&zs.dcreate = dlsym(h, "ZSTD_createDCtx");
	*(void **)&zs.dfree = dlsym(h, "ZSTD_freeDCtx");
	*(void **)&zs.dparam = dlsym(h, "ZSTD_DCtx_setParameter");
	*(void **)&zs.dreset = dlsym(h, "ZSTD_DCtx_reset");
	*(void **)&zs.decompress = dlsym(h, "ZSTD_decompressStream");
	*(void **)&zs.is_error = dlsym(h, "ZSTD_isError");
	*(void **)&zs.error_name = dlsym(h, "ZSTD_getErrorName");
	zs.ok = zs.ccreate && zs.cfree && zs.cparam && zs.compress && zs.dcreate &&
		zs.dfree && zs.dparam && zs.dreset && zs.decompress && zs.is_error &&
		zs.error_name;
	if (!zs.ok)
		snprintf(zs.why, sizeof(zs.why), "%s lacks zstd's streaming functions (1.4 "
			 "or later)", RZ_SONAME);
	/* kept loaded for the life of the process: the handle is never closed */
}

bool tc_zs_available(const char **why)
{
	pthread_once(&zs_once, zs_load);
	if (why)
		*why = zs.ok ? NULL : zs.why;
	return zs.ok;
}

void *tc_zs_cstream_new(int level)
{
	ZSTD_CCtx *c;

	if (!tc_zs_available(NULL) || !(c = zs.ccreate()))
		return NULL;
	if (zs.is_error(zs.cparam(c, ZSTD_c_compressionLevel, level)) ||
	    zs.is_error(zs.cparam(c, ZSTD_c_windowLog, 22))) {
		zs.cfree(c);
		return NULL;
	}
	return c;
}

void tc_zs_cstream_free(void *cs)
{
	if (cs && zs.ok)
		zs.cfree(cs);
}

int tc_zs_compress(void *cs, const void *src, size_t n, bool flush, struct tc_zbuf *out)
{
	ZSTD_inBuffer in = { src, n, 0 };
	ZSTD_EndDirective how = flush ? ZSTD_e_flush : ZSTD_e_continue;

	for (;;) {
		ZSTD_outBuffer o;
		size_t left;

		if (out->cap - out->len < 4096) {
			size_t cap = out->cap ? out->cap * 2 : 65536;
			unsigned char *b = realloc(out->buf, cap);

			if (!b)
				return -ENOMEM;
			out->buf = b;
			out->cap = cap;
		}
		o = (ZSTD_outBuffer){ out->buf + out->len, out->cap - out->len, 0 };
		left = zs.compress(cs, &o, &in, how);
		if (zs.is_error(left))
			return -EIO;
		out->len += o.pos;
		/* e_continue is done when the input is taken; e_flush when nothing is left
		 * inside the compressor either */
		if (in.pos == in.size && (!flush || left == 0))
			return 0;
	}
}

void *tc_zs_dstream_new(void)
{
	ZSTD_DCtx *d;

	if (!tc_zs_available(NULL) || !(d = zs.dcreate()))
		return NULL;
	if (zs.is_error(zs.dparam(d, ZSTD_d_windowLogMax, 24))) {
		zs.dfree(d);
		return NULL;
	}
	return d;
}

void tc_zs_dstream_free(void *ds)
{
	if (ds && zs.ok)
		zs.dfree(ds);
}

void tc_zs_dstream_reset(void *ds)
{
	zs.dreset(ds, ZSTD_reset_session_only);
}

int tc_zs_decompress(void *ds, const void *src, size_t n, void *dst, size_t want,
		     size_t cap, const char **err)
{
	ZSTD_inBuffer in = { src, n, 0 };
	ZSTD_outBuffer o = { dst, cap, 0 };

	/* all of the piece, unless the output fills first: a piece that gives more than
	 * cap is stopped there (a bomb costs cap bytes, no more) */
	while (in.pos < in.size && o.pos < o.size) {
		size_t in0 = in.pos, out0 = o.pos, ret = zs.decompress(ds, &o, &in);

		if (zs.is_error(ret)) {
			*err = zs.error_name(ret);
			return -EIO;
		}
		if (in.pos == in0 && o.pos == out0)
			break;
	}
	/* what the decoder still holds from this piece comes out now (a flushed piece
	 * leaves none; more would be a lie about the size) */
	if (o.pos < o.size) {
		size_t ret = zs.decompress(ds, &o, &in);

		if (zs.is_error(ret)) {
			*err = zs.error_name(ret);
			return -EIO;
		}
	}
	return o.pos == want && in.pos == in.size ? 0 : o.pos < want ? 1 : 2;
}
