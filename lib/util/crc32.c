/* crc32.c - CRC-32 (IEEE 802.3, reflected, zlib's crc32) of the record file: slicing-by-8
 * tables everywhere, and PCLMULQDQ folding on x86-64 CPUs that have it (CPUID checked
 * once), for the long runs of a block.
 *
 * The byte-at-a-time table loop it replaces ran at about 190 MB/s and was half of a
 * 600k-sample report. Slicing-by-8 consumes eight bytes per step through eight tables
 * (one load and a shift chain per byte instead of a serial dependency per byte); the
 * carry-less multiply folds 64 bytes per step (Gopal et al., "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ Instruction", Intel 2009; constants from its
 * appendix, the same as zlib-ng's and Chromium's). A record is short (a sample is 72
 * bytes), so the tables carry most calls; the fold is for headers of long records and
 * bulk checks. A hardware CRC32 instruction (SSE4.2) computes CRC32C, another
 * polynomial: using it needs a new file format (docs/record-format.md). */
#include <pthread.h>
#include <string.h>

#include "util/util.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define CRC_POLY 0xedb88320u

static uint32_t crc_tab[8][256];

static void crc_tab_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? CRC_POLY ^ (c >> 1) : c >> 1;
		crc_tab[0][i] = c;
	}
	/* table t gives a byte's contribution t bytes further on */
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = crc_tab[0][crc_tab[t - 1][i] & 0xff] ^ (crc_tab[t - 1][i] >> 8);
}

/* On the inverted state (what zlib calls crc ^ 0xffffffff), as the fold below. */
static uint32_t crc_slice8(uint32_t c, const unsigned char *p, size_t len)
{
	/* bytes one at a time up to an 8-byte boundary, so that the words are aligned */
	while (len && ((uintptr_t)p & 7)) {
		c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	while (len >= 8) {
		uint32_t lo, hi;

		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= c;
		c = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		    crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^
		    crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
		    crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = crc_tab[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__)
#define CRC_CLMUL_MIN 64

/* An unaligned 16-byte load (movdqu), without a cast that claims alignment. */
static inline __m128i load16(const unsigned char *p)
{
	__m128i v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The fold of len bytes (len >= 64, a multiple of 16) into the inverted state c. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_clmul(uint32_t c,
								   const unsigned char *p,
								   size_t len)
{
	/* x^(4*128+32) and x^(4*128-32) mod P, bit-reflected (fold by 64 bytes) */
	const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596, 0x0154442bd4);
	/* x^(128+32) and x^(128-32) mod P (fold by 16 bytes) */
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009e, 0x01751997d0);
	/* x^64 mod P (128 bits to 64) */
	const __m128i k5k0 = _mm_set_epi64x(0, 0x0163cd6124);
	/* P' = P reflected with its x^32 bit, and mu = floor(x^64 / P) for Barrett */
	const __m128i poly = _mm_set_epi64x(0x01f7011641, 0x01db710641);
	const __m128i mask32 = _mm_setr_epi32(~0, 0, ~0, 0);
	__m128i x1, x2, x3, x4, x5, x6, x7, x8;

	x1 = load16(p + 0x00);
	x2 = load16(p + 0x10);
	x3 = load16(p + 0x20);
	x4 = load16(p + 0x30);
	x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)c));
	p += 64;
	len -= 64;
	/* four lanes of 16 bytes folded 64 bytes ahead each step */
	while (len >= 64) {
		x5 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
		x6 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
		x7 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
		x8 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
		x1 = _mm_clmulepi64_si128(x1, k1k2, 0x11);
		x2 = _mm_clmulepi64_si128(x2, k1k2, 0x11);
		x3 = _mm_clmulepi64_si128(x3, k1k2, 0x11);
		x4 = _mm_clmulepi64_si128(x4, k1k2, 0x11);
		x1 = _mm_xor_si128(_mm_xor_si128(x1, x5),
				   load16(p + 0x00));
		x2 = _mm_xor_si128(_mm_xor_si128(x2, x6),
				   load16(p + 0x10));
		x3 = _mm_xor_si128(_mm_xor_si128(x3, x7),
				   load16(p + 0x20));
		x4 = _mm_xor_si128(_mm_xor_si128(x4, x8),
				   load16(p + 0x30));
		p += 64;
		len -= 64;
	}
	/* the four lanes into one */
	x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
	x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
	x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
	x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, x3), x5);
	x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
	x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
	x1 = _mm_xor_si128(_mm_xor_si128(x1, x4), x5);
	while (len >= 16) {
		x2 = load16(p);
		x5 = _mm_clmulepi64_si128(x1, k3k4, 0x00);
		x1 = _mm_clmulepi64_si128(x1, k3k4, 0x11);
		x1 = _mm_xor_si128(_mm_xor_si128(x1, x2), x5);
		p += 16;
		len -= 16;
	}
	/* 128 bits to 64 */
	x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
	x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
	x2 = _mm_srli_si128(x1, 4);
	x1 = _mm_and_si128(x1, mask32);
	x1 = _mm_clmulepi64_si128(x1, k5k0, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	/* Barrett reduction to 32 bits */
	x2 = _mm_and_si128(x1, mask32);
	x2 = _mm_clmulepi64_si128(x2, poly, 0x10);
	x2 = _mm_and_si128(x2, mask32);
	x2 = _mm_clmulepi64_si128(x2, poly, 0x00);
	x1 = _mm_xor_si128(x1, x2);
	return (uint32_t)_mm_extract_epi32(x1, 1);
}

static bool crc_has_clmul;
#endif

static void crc_init(void)
{
	crc_tab_init();
#if defined(__x86_64__)
	uint32_t r[4];

	/* CPUID.1:ECX bit 1 PCLMULQDQ, bit 19 SSE4.1 (pextrd) */
	tc_cpuid_insn(1, 0, r);
	crc_has_clmul = (r[2] & (1u << 1)) && (r[2] & (1u << 19));
#endif
}

static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

uint32_t tc_crc32_portable(uint32_t crc, const void *data, size_t len)
{
	pthread_once(&crc_once, crc_init);
	return ~crc_slice8(~crc, data, len);
}

bool tc_crc32_has_clmul(void)
{
	pthread_once(&crc_once, crc_init);
#if defined(__x86_64__)
	return crc_has_clmul;
#else
	return false;
#endif
}

uint32_t tc_crc32(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t c = ~crc;

	pthread_once(&crc_once, crc_init);
#if defined(__x86_64__)
	if (len >= CRC_CLMUL_MIN && crc_has_clmul) {
		size_t n = len & ~(size_t)15;

		c = crc_clmul(c, p, n);
		p += n;
		len -= n;
	}
#endif
	return ~crc_slice8(c, p, len);
}
