/* bandwidth.c - the bandwidth of one working set: read, write and copy kernels (AVX2
 * where the CPU has it, else SSE2), run by one thread and by one pinned thread on each
 * allowed CPU at once, timed with the TSC in repeated samples. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cache/cache.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#else
#define HAVE_X86 0
#endif

#define MAX_SAMPLES 64

/* --- the kernels: bytes is a multiple of 128; each pass touches every byte once ---
 * The empty asm on the pointer makes it opaque to the compiler each iteration, so a
 * store loop is not turned into memset nor a load loop folded away. Loads go to four
 * accumulators so that the loads, not the xors, set the pace. Stores are ordinary
 * (no streaming hint), as likwid-bench's store and copy kernels. */

#if HAVE_X86
__attribute__((target("avx2"))) static uint64_t read_avx2(const char *buf, size_t bytes, unsigned reps)
{
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;

	for (unsigned r = 0; r < reps; r++) {
		for (const char *p = buf, *end = buf + bytes; p < end; p += 128) {
			__asm__("" : "+r"(p));
			a0 = _mm256_xor_si256(a0, _mm256_load_si256((const __m256i *)p));
			a1 = _mm256_xor_si256(a1, _mm256_load_si256((const __m256i *)(p + 32)));
			a2 = _mm256_xor_si256(a2, _mm256_load_si256((const __m256i *)(p + 64)));
			a3 = _mm256_xor_si256(a3, _mm256_load_si256((const __m256i *)(p + 96)));
		}
	}
	a0 = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
	return (uint64_t)_mm256_extract_epi64(a0, 0) ^ (uint64_t)_mm256_extract_epi64(a0, 3);
}

__attribute__((target("avx2"))) static void write_avx2(char *buf, size_t bytes, unsigned reps)
{
	__m256i v = _mm256_set1_epi64x(0x5a5a5a5a5a5a5a5all);

	for (unsigned r = 0; r < reps; r++) {
		for (char *p = buf, *end = buf + bytes; p < end; p += 128) {
			__asm__("" : "+r"(p));
			_mm256_store_si256((__m256i *)p, v);
			_mm256_store_si256((__m256i *)(p + 32), v);
			_mm256_store_si256((__m256i *)(p + 64), v);
			_mm256_store_si256((__m256i *)(p + 96), v);
		}
	}
}

__attribute__((target("avx2"))) static void copy_avx2(char *dst, const char *src, size_t bytes,
						      unsigned reps)
{
	for (unsigned r = 0; r < reps; r++) {
		const char *s = src;

		for (char *p = dst, *end = dst + bytes; p < end; p += 128, s += 128) {
			__m256i x0, x1, x2, x3;

			__asm__("" : "+r"(p), "+r"(s));
			x0 = _mm256_load_si256((const __m256i *)s);
			x1 = _mm256_load_si256((const __m256i *)(s + 32));
			x2 = _mm256_load_si256((const __m256i *)(s + 64));
			x3 = _mm256_load_si256((const __m256i *)(s + 96));
			_mm256_store_si256((__m256i *)p, x0);
			_mm256_store_si256((__m256i *)(p + 32), x1);
			_mm256_store_si256((__m256i *)(p + 64), x2);
			_mm256_store_si256((__m256i *)(p + 96), x3);
		}
	}
}

static uint64_t read_sse2(const char *buf, size_t bytes, unsigned reps)
{
	__m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;

	for (unsigned r = 0; r < reps; r++) {
		for (const char *p = buf, *end = buf + bytes; p < end; p += 64) {
			__asm__("" : "+r"(p));
			a0 = _mm_xor_si128(a0, _mm_load_si128((const __m128i *)p));
			a1 = _mm_xor_si128(a1, _mm_load_si128((const __m128i *)(p + 16)));
			a2 = _mm_xor_si128(a2, _mm_load_si128((const __m128i *)(p + 32)));
			a3 = _mm_xor_si128(a3, _mm_load_si128((const __m128i *)(p + 48)));
		}
	}
	a0 = _mm_xor_si128(_mm_xor_si128(a0, a1), _mm_xor_si128(a2, a3));
	return (uint64_t)_mm_cvtsi128_si64(a0);
}

static void write_sse2(char *buf, size_t bytes, unsigned reps)
{
	__m128i v = _mm_set1_epi32(0x5a5a5a5a);

	for (unsigned r = 0; r < reps; r++) {
		for (char *p = buf, *end = buf + bytes; p < end; p += 64) {
			__asm__("" : "+r"(p));
			_mm_store_si128((__m128i *)p, v);
			_mm_store_si128((__m128i *)(p + 16), v);
			_mm_store_si128((__m128i *)(p + 32), v);
			_mm_store_si128((__m128i *)(p + 48), v);
		}
	}
}

static void copy_sse2(char *dst, const char *src, size_t bytes, unsigned reps)
{
	for (unsigned r = 0; r < reps; r++) {
		const char *s = src;

		for (char *p = dst, *end = dst + bytes; p < end; p += 64, s += 64) {
			__m128i x0, x1, x2, x3;

			__asm__("" : "+r"(p), "+r"(s));
			x0 = _mm_load_si128((const __m128i *)s);
			x1 = _mm_load_si128((const __m128i *)(s + 16));
			x2 = _mm_load_si128((const __m128i *)(s + 32));
			x3 = _mm_load_si128((const __m128i *)(s + 48));
			_mm_store_si128((__m128i *)p, x0);
			_mm_store_si128((__m128i *)(p + 16), x1);
			_mm_store_si128((__m128i *)(p + 32), x2);
			_mm_store_si128((__m128i *)(p + 48), x3);
		}
	}
}

static bool use_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}
#else
static uint64_t read_plain(const char *buf, size_t bytes, unsigned reps)
{
	uint64_t a = 0;

	for (unsigned r = 0; r < reps; r++)
		for (const uint64_t *p = (const uint64_t *)buf; (const char *)p < buf + bytes; p++)
			a ^= *(const volatile uint64_t *)p;
	return a;
}

static void write_plain(char *buf, size_t bytes, unsigned reps)
{
	for (unsigned r = 0; r < reps; r++)
		for (uint64_t *p = (uint64_t *)buf; (char *)p < buf + bytes; p++)
			*(volatile uint64_t *)p = r;
}

static void copy_plain(char *dst, const char *src, size_t bytes, unsigned reps)
{
	for (unsigned r = 0; r < reps; r++)
		for (size_t i = 0; i < bytes; i += 8)
			*(volatile uint64_t *)(dst + i) = *(const volatile uint64_t *)(src + i);
}

static bool use_avx2(void)
{
	return false;
}
#endif

const char *tc_bw_kernel_name(void)
{
#if HAVE_X86
	return use_avx2() ? "avx2" : "sse2";
#else
	return "scalar";
#endif
}

static volatile uint64_t sink;

/* What one sample runs: reps passes over [off, off + len) of a working set of total
 * bytes (copy: from the first half to the second, len / 2 of each). A set that one
 * pass takes longer than a sample to stream (memory) is timed a part at a time, the
 * parts rotating through it, so that each part still comes from where the whole set
 * lives. */
struct span {
	char *buf;
	size_t total, off, len;
	unsigned reps;
};

static uint64_t run_kernel(enum tc_bw_kind kind, const struct span *sp)
{
	const char *src = sp->buf + sp->off / 2;
	char *dst = sp->buf + sp->total / 2 + sp->off / 2, *at = sp->buf + sp->off;
	uint64_t t0 = tacho_tsc_begin();

#if HAVE_X86
	bool avx = use_avx2();

	switch (kind) {
	case TC_BW_READ:
		sink = avx ? read_avx2(at, sp->len, sp->reps) : read_sse2(at, sp->len, sp->reps);
		break;
	case TC_BW_WRITE:
		if (avx)
			write_avx2(at, sp->len, sp->reps);
		else
			write_sse2(at, sp->len, sp->reps);
		break;
	case TC_BW_COPY:
		if (avx)
			copy_avx2(dst, src, sp->len / 2, sp->reps);
		else
			copy_sse2(dst, src, sp->len / 2, sp->reps);
		break;
	}
#else
	switch (kind) {
	case TC_BW_READ:
		sink = read_plain(at, sp->len, sp->reps);
		break;
	case TC_BW_WRITE:
		write_plain(at, sp->len, sp->reps);
		break;
	case TC_BW_COPY:
		copy_plain(dst, src, sp->len / 2, sp->reps);
		break;
	}
#endif
	return tacho_tsc_end() - t0;
}

/* The part and the passes of a sample that should take `target` ticks, for a set of
 * total bytes one pass over which takes `pass` ticks. */
static void plan(struct span *sp, double pass, double target)
{
	sp->off = 0;
	if (pass > target) {
		size_t part = (size_t)((double)sp->total * target / pass) & ~(size_t)4095;

		sp->len = part < 4096 ? 4096 : part;
		sp->reps = 1;
	} else {
		sp->len = sp->total;
		sp->reps = pass > 0 ? (unsigned)fmin(1e6, ceil(target / pass)) : 1;
	}
}

static void next_part(struct span *sp)
{
	sp->off += sp->len;
	if (sp->off + sp->len > sp->total)
		sp->off = 0;
}

static long switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nivcsw + ru.ru_nvcsw;
}

/* Working sets are whole 256-byte blocks (copy splits them in two 128-byte-aligned
 * halves). */
static size_t round_bytes(uint64_t b)
{
	b &= ~(uint64_t)255;
	return b < 256 ? 256 : (size_t)b;
}

/* The median of the undisturbed samples; of all of them when none was undisturbed
 * (a machine that busy is said in the warnings). */
static double median_of(double *clean, size_t nclean, double *all, size_t nall)
{
	double *v = nclean ? clean : all;
	size_t n = nclean ? nclean : nall;

	tc_stats_sort(v, n);
	return n ? tc_stats_percentile_sorted(v, n, 50) : NAN;
}

/* --- one thread: the caller, already pinned --- */

static double one_thread(const struct tc_bw_cfg *cfg, enum tc_bw_kind kind, char *buf,
			 size_t bytes, double *pass_out, unsigned *discarded)
{
	double clean[MAX_SAMPLES], all[4 * MAX_SAMPLES + 8];
	unsigned want = cfg->samples < MAX_SAMPLES ? cfg->samples : MAX_SAMPLES, kept = 0, n = 0;
	struct span sp = { .buf = buf, .total = bytes, .len = bytes, .reps = 1 };
	double pass;

	run_kernel(kind, &sp);                  /* warm: into the level measured */
	pass = (double)run_kernel(kind, &sp);
	plan(&sp, pass, cfg->sample_ns * cfg->tsc_hz / 1e9);
	for (unsigned tries = 0; kept < want && tries < 4 * want + 8; tries++) {
		long before = switches();
		uint64_t t = run_kernel(kind, &sp);
		double gbs = (double)sp.len * sp.reps / ((double)t / cfg->tsc_hz) / 1e9;

		next_part(&sp);
		all[n++] = gbs;
		if (before < 0 || switches() != before) {
			(*discarded)++;
			continue;
		}
		clean[kept++] = gbs;
	}
	*pass_out = pass;
	return median_of(clean, kept, all, n);
}

/* --- every CPU at once: a pinned thread each, in lockstep through barriers --- */

struct bw_team {
	const struct tc_bw_cfg *cfg;
	size_t bytes;
	double pass[3];           /* the ticks of one pass over a member's set, estimated */
	pthread_barrier_t bar;
	uint64_t *ticks;          /* [thread] of the current sample */
	bool *moved;              /* [thread]: switched out during it */
	int err;                  /* the first thread's failure, read after a barrier */
	pthread_mutex_t lock;
	pthread_cond_t gate;      /* members wait here until every one was started */
	bool open;
	double gbs[3];            /* results, written by thread 0 */
	unsigned discarded;
};

struct bw_member {
	struct bw_team *team;
	size_t idx;
	pthread_t tid;
	bool started;
};

static void team_fail(struct bw_team *t, int err)
{
	pthread_mutex_lock(&t->lock);
	if (!t->err)
		t->err = err;
	pthread_mutex_unlock(&t->lock);
}

static void *member_main(void *arg)
{
	struct bw_member *m = arg;
	struct bw_team *t = m->team;
	const struct tc_bw_cfg *cfg = t->cfg;
	size_t n = cfg->ncpus;
	struct tc_cache_buf buf = { 0 };
	cpu_set_t set;
	int err;

	/* nobody touches the barrier before all n members exist: if one could not be
	 * started, the others leave from here */
	pthread_mutex_lock(&t->lock);
	while (!t->open)
		pthread_cond_wait(&t->gate, &t->lock);
	err = t->err;
	pthread_mutex_unlock(&t->lock);
	if (err)
		return NULL;
	CPU_ZERO(&set);
	CPU_SET(cfg->cpus[m->idx], &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		team_fail(t, -err);
	else if ((err = tc_cache_buf_init(&buf, t->bytes, true)) != 0)
		team_fail(t, err);
	else
		memset(buf.base, 1, t->bytes);   /* first touch here: memory near this CPU */
	pthread_barrier_wait(&t->bar);
	if (t->err)
		goto out;

	for (unsigned k = 0; k < 3; k++) {
		double clean[MAX_SAMPLES], all[4 * MAX_SAMPLES + 8];
		unsigned want = cfg->samples < MAX_SAMPLES ? cfg->samples : MAX_SAMPLES, kept = 0;
		unsigned nall = 0;
		struct span sp = { .buf = buf.base, .total = t->bytes, .len = t->bytes, .reps = 1 };

		plan(&sp, t->pass[k], cfg->sample_ns * cfg->tsc_hz / 1e9);
		run_kernel((enum tc_bw_kind)k, &sp);
		for (unsigned tries = 0; kept < want && tries < 4 * want + 8; tries++) {
			long before;
			bool bad = false;
			uint64_t most = 0;
			double gbs;

			pthread_barrier_wait(&t->bar);
			before = switches();
			t->ticks[m->idx] = run_kernel((enum tc_bw_kind)k, &sp);
			t->moved[m->idx] = before < 0 || switches() != before;
			next_part(&sp);
			pthread_barrier_wait(&t->bar);
			/* every member reads the same flags and so takes the same decision */
			for (size_t i = 0; i < n; i++) {
				bad |= t->moved[i];
				if (t->ticks[i] > most)
					most = t->ticks[i];
			}
			gbs = (double)sp.len * sp.reps * (double)n / ((double)most / cfg->tsc_hz) / 1e9;
			all[nall++] = gbs;
			if (bad) {
				if (m->idx == 0)
					t->discarded++;
				continue;
			}
			clean[kept++] = gbs;
		}
		if (m->idx == 0)
			t->gbs[k] = median_of(clean, kept, all, nall);
	}
out:
	tc_cache_buf_exit(&buf);
	return NULL;
}

static int all_threads(const struct tc_bw_cfg *cfg, size_t bytes, const double pass[3],
		       double gbs[3], unsigned *discarded)
{
	struct bw_team t = { .cfg = cfg, .bytes = bytes };
	struct bw_member *m = NULL;
	size_t n = cfg->ncpus, started = 0;
	int err = 0;

	memcpy(t.pass, pass, sizeof(t.pass));
	for (unsigned k = 0; k < 3; k++)
		t.gbs[k] = NAN;
	t.ticks = calloc(n, sizeof(*t.ticks));
	t.moved = calloc(n, sizeof(*t.moved));
	m = calloc(n, sizeof(*m));
	if (!t.ticks || !t.moved || !m) {
		err = -ENOMEM;
		goto out_free;
	}
	pthread_mutex_init(&t.lock, NULL);
	pthread_cond_init(&t.gate, NULL);
	if ((err = pthread_barrier_init(&t.bar, NULL, (unsigned)n)) != 0) {
		err = -err;
		goto out_mutex;
	}
	for (size_t i = 0; i < n; i++) {
		m[i].team = &t;
		m[i].idx = i;
		err = pthread_create(&m[i].tid, NULL, member_main, &m[i]);
		if (err) {
			err = -err;
			break;
		}
		m[i].started = true;
		started++;
	}
	pthread_mutex_lock(&t.lock);
	if (started < n && !t.err)
		t.err = err;
	t.open = true;
	pthread_cond_broadcast(&t.gate);
	pthread_mutex_unlock(&t.lock);
	for (size_t i = 0; i < n; i++)
		if (m[i].started)
			pthread_join(m[i].tid, NULL);
	if (!err)
		err = t.err;
	memcpy(gbs, t.gbs, sizeof(t.gbs));
	*discarded += t.discarded;
	pthread_barrier_destroy(&t.bar);
out_mutex:
	pthread_cond_destroy(&t.gate);
	pthread_mutex_destroy(&t.lock);
out_free:
	free(t.ticks);
	free(t.moved);
	free(m);
	return err;
}

int tc_bw_measure(const struct tc_bw_cfg *cfg, uint64_t bytes, uint64_t bytes_all,
		  struct tacho_cache_bandwidth *bw, unsigned *discarded)
{
	struct tc_cache_buf buf;
	size_t b1 = round_bytes(bytes), ball = round_bytes(bytes_all);
	double pass[3], one[3], all[3] = { NAN, NAN, NAN };
	int err;

	err = tc_cache_buf_init(&buf, b1, true);
	if (err)
		return err;
	memset(buf.base, 1, b1);
	for (unsigned k = 0; k < 3; k++)
		one[k] = one_thread(cfg, (enum tc_bw_kind)k, buf.base, b1, &pass[k], discarded);
	tc_cache_buf_exit(&buf);
	bw->bytes = b1;
	bw->read = one[TC_BW_READ];
	bw->write = one[TC_BW_WRITE];
	bw->copy = one[TC_BW_COPY];
	if (cfg->ncpus > 1) {
		/* a member's pass, at the pace one thread had */
		for (unsigned k = 0; k < 3; k++)
			pass[k] *= (double)ball / (double)b1;
		err = all_threads(cfg, ball, pass, all, discarded);
		bw->bytes_all = ball;
		bw->threads = (unsigned)cfg->ncpus;
	} else {
		/* one CPU allowed: the all-CPU figures are the one-thread ones */
		memcpy(all, one, sizeof(all));
		bw->bytes_all = b1;
		bw->threads = 1;
	}
	bw->read_all = all[TC_BW_READ];
	bw->write_all = all[TC_BW_WRITE];
	bw->copy_all = all[TC_BW_COPY];
	return err;
}
