/* bench-crc.c - the record file's CRC-32 beside zlib's crc32 (the peer, the same
 * polynomial) and beside the byte-at-a-time table loop the reader used before, on a
 * sample record (72 bytes), a 4 KiB block and 1 MiB.
 *
 *   bench-crc     prints "SIZE<TAB>VARIANT<TAB>MB_PER_S<TAB>RATIO_MEDIAN<TAB>MIN<TAB>MAX"
 *
 * The variants take turns in each of 41 rounds (interleaved, so that other load falls
 * on them alike); each figure is the median over the rounds, and the ratio is the
 * median (min, max) of the per-round ratio of tacho's time to zlib's, all in this
 * thread's CPU time. zlib is loaded
 * with dlopen, as the test does, to leave the link line alone. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/util.h"

#define ROUNDS 41
#define BYTES_PER_ROUND (8u << 20)

typedef unsigned long zlib_fn(unsigned long, const unsigned char *, unsigned int);

static zlib_fn *zlib_crc32;
static uint32_t old_table[256];
static volatile uint32_t sink;

/* the reader's loop before this change: one table lookup per byte */
static uint32_t old_crc32(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	crc = ~crc;
	while (len--)
		crc = old_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static uint32_t v_tacho(const unsigned char *p, size_t n) { return tc_crc32(0, p, n); }
static uint32_t v_portable(const unsigned char *p, size_t n) { return tc_crc32_portable(0, p, n); }
static uint32_t v_old(const unsigned char *p, size_t n) { return old_crc32(0, p, n); }
static uint32_t v_zlib(const unsigned char *p, size_t n)
{
	return (uint32_t)zlib_crc32(0, p, (unsigned)n);
}

static double now(void)
{
	struct timespec ts;

	/* this thread's CPU time: on a shared machine, wall time counts others' work */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

int main(void)
{
	static const size_t sizes[] = { 72, 4096, 1u << 20 };
	static const struct {
		const char *name;
		uint32_t (*fn)(const unsigned char *, size_t);
	} vs[] = {
		{ "zlib crc32", v_zlib },
		{ "tacho tc_crc32", v_tacho },
		{ "tacho slicing-by-8 alone", v_portable },
		{ "byte-at-a-time (before)", v_old },
	};
	enum { NV = 4 };
	void *z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	unsigned char *buf;

	if (!z || !(zlib_crc32 = (zlib_fn *)(uintptr_t)dlsym(z, "crc32"))) {
		fprintf(stderr, "bench-crc: cannot load zlib's crc32 (libz.so.1)\n");
		return 1;
	}
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		old_table[i] = c;
	}
	buf = malloc((1u << 20) + 8);
	if (!buf)
		return 1;
	for (size_t i = 0; i < (1u << 20) + 8; i++)
		buf[i] = (unsigned char)(i * 2654435761u >> 13);
	for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
		size_t n = sizes[s], calls = BYTES_PER_ROUND / n;
		double t[NV][ROUNDS], ratio[NV][ROUNDS];

		for (int r = 0; r < ROUNDS; r++) {
			for (int v = 0; v < NV; v++) {
				double t0 = now();
				uint32_t acc = 0;
				/* start 1 byte off: records follow each other at 8-byte steps,
				 * a misaligned start is the harder case */
				for (size_t c = 0; c < calls; c++)
					acc += vs[v].fn(buf + 1 + (c & 7), n);
				sink = acc;
				t[v][r] = now() - t0;
			}
			for (int v = 0; v < NV; v++)
				ratio[v][r] = t[v][r] / t[0][r];
		}
		for (int v = 0; v < NV; v++) {
			double mbs, lo = ratio[v][0], hi = ratio[v][0];
			for (int r = 0; r < ROUNDS; r++) {
				lo = ratio[v][r] < lo ? ratio[v][r] : lo;
				hi = ratio[v][r] > hi ? ratio[v][r] : hi;
			}
			mbs = (double)(calls * n) / median(t[v], ROUNDS) / 1e6;
			printf("%zu\t%s\t%.0f\t%.3f\t%.3f\t%.3f\n", n, vs[v].name, mbs,
			       median(ratio[v], ROUNDS), lo, hi);
		}
	}
	free(buf);
	dlclose(z);
	return 0;
}
