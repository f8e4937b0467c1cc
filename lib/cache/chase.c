/* chase.c - the pointer chases behind the latency curve and the TLB's reach: buffers
 * with or without huge pages, the orders of the chains, the timed loop that throws
 * away samples the scheduler disturbed, and the small probes of how quiet the machine
 * is (a core-clock estimate, steal time, other runnable tasks). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cache/cache.h"

#define HUGE_ALIGN (2u << 20)
#define CHUNK_LINES 1024u   /* 64 KiB: 16 small pages, well inside any L1 TLB */

/* --- buffers --- */

int tc_cache_buf_init(struct tc_cache_buf *b, size_t bytes, bool huge)
{
	uintptr_t a;

	memset(b, 0, sizeof(*b));
	b->map_bytes = bytes + HUGE_ALIGN;
	b->map = mmap(NULL, b->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		return -errno;
	}
	a = ((uintptr_t)b->map + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
	b->base = (char *)a;
	b->bytes = bytes;
	b->huge = huge;
	/* Huge pages make the TLB reach the whole buffer (and make it physically
	 * contiguous in 2 MiB pieces, so that set-indexed caches see every set); the
	 * page chase asks for small pages on purpose. Either advice may be refused
	 * (THP "never", an old kernel): the result says what was granted. */
#ifdef MADV_HUGEPAGE
	(void)madvise(b->base, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
#endif
	return 0;
}

void tc_cache_buf_exit(struct tc_cache_buf *b)
{
	if (b && b->map)
		munmap(b->map, b->map_bytes);
	if (b)
		memset(b, 0, sizeof(*b));
}

double tc_cache_buf_huge_fraction(const struct tc_cache_buf *b)
{
	char *text, *line, *save;
	size_t len;
	uintptr_t base = (uintptr_t)b->base;
	bool inside = false;
	uint64_t huge_kb = 0;
	int err = tc_read_file("/proc/self/smaps", &text, &len, 0);

	if (err)
		return err;
	/* madvise split the mapping: the VMAs that overlap [base, base + bytes) */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uintptr_t lo, hi;
		unsigned long long kb;

		/* a mapping's header, "LO-HI perms ...": no field name has a '-' after
		 * hex digits */
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2) {
			inside = lo < base + b->bytes && hi > base;
			continue;
		}
		if (inside && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			huge_kb += kb;
	}
	free(text);
	return b->bytes ? fmin(1.0, (double)huge_kb * 1024 / (double)b->bytes) : 0;
}

/* --- the orders --- */

/* xorshift64*: fast, good enough to shuffle, and the same chains every run */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* uniform in [0, n) without modulo bias worth speaking of (Lemire's multiply) */
static size_t below(uint64_t *s, size_t n)
{
	return (size_t)(((unsigned __int128)rnd(s) * n) >> 64);
}

static void shuffle(uint32_t *a, size_t n, uint64_t *s)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = below(s, i);
		uint32_t t = a[i - 1];

		a[i - 1] = a[j];
		a[j] = t;
	}
}

/* Writes the cyclic chain of element addresses addr(order[i]) -> addr(order[i + 1]). */
static void *chain_link(char *base, const uint32_t *order, size_t n, size_t scale, const uint32_t *off)
{
	for (size_t i = 0; i < n; i++) {
		size_t a = (size_t)order[i], b = (size_t)order[i + 1 < n ? i + 1 : 0];
		char *from = base + a * scale + (off ? off[a] : 0);
		char *to = base + b * scale + (off ? off[b] : 0);

		*(void **)from = to;
	}
	return base + (size_t)order[0] * scale + (off ? off[order[0]] : 0);
}

/* The latency curve's order. Every line of the working set is in one cycle, in random
 * order, so no prefetcher can guess the next address. But the cycle takes its lines a
 * 64 KiB chunk at a time (chunks in random order), so that at any moment the loads
 * touch 16 small pages and the TLB never misses: the curve shows the caches alone,
 * even where the kernel (or a hypervisor underneath) gives small pages. And it makes
 * two passes: first the even lines of even pages and the odd lines of odd pages, then
 * the others, so that a line's neighbour is loaded half a cycle later; an adjacent-
 * line prefetcher (Intel's spatial prefetcher, AMD's up/down one) fetches it in vain
 * instead of turning half the misses into hits, yet both halves of every cache set
 * are used. */
void *tc_chase_build_lines(struct tc_cache_buf *b, size_t lines, uint64_t *seed)
{
	size_t nchunks = (lines + CHUNK_LINES - 1) / CHUNK_LINES, m = 0;
	uint32_t *order = malloc(lines * sizeof(*order));
	uint32_t *chunks = malloc(nchunks * sizeof(*chunks));
	void *head = NULL;

	if (!order || !chunks || !lines)
		goto out;
	for (unsigned pass = 0; pass < 2; pass++) {
		for (size_t c = 0; c < nchunks; c++)
			chunks[c] = (uint32_t)c;
		shuffle(chunks, nchunks, seed);
		for (size_t c = 0; c < nchunks; c++) {
			size_t lo = (size_t)chunks[c] * CHUNK_LINES, start = m;
			size_t hi = lo + CHUNK_LINES < lines ? lo + CHUNK_LINES : lines;

			for (size_t l = lo; l < hi; l++)
				if (((l + l / (TC_CACHE_PAGE / TC_CACHE_LINE)) & 1) == pass)
					order[m++] = (uint32_t)l;
			shuffle(order + start, m - start, seed);
		}
	}
	head = chain_link(b->base, order, m, TC_CACHE_LINE, NULL);
out:
	free(order);
	free(chunks);
	return head;
}

/* Every line in one random cycle over the whole set: what lmbench's lat_mem_rd -t and
 * a linked list in a real program see, TLB misses included. */
void *tc_chase_build_random(struct tc_cache_buf *b, size_t lines, uint64_t *seed)
{
	uint32_t *order = malloc(lines * sizeof(*order));
	void *head = NULL;

	if (!order || !lines)
		goto out;
	for (size_t l = 0; l < lines; l++)
		order[l] = (uint32_t)l;
	shuffle(order, lines, seed);
	head = chain_link(b->base, order, lines, TC_CACHE_LINE, NULL);
out:
	free(order);
	return head;
}

/* One load per small page, the pages in random order, each at a random line of its
 * page: the random offsets spread the lines over every cache set (at one offset they
 * would all fall in a few sets and miss for that reason alone). */
void *tc_chase_build_pages(struct tc_cache_buf *b, size_t pages, uint64_t *seed)
{
	uint32_t *order = malloc(pages * sizeof(*order));
	uint32_t *off = malloc(pages * sizeof(*off));
	void *head = NULL;

	if (!order || !off || !pages)
		goto out;
	for (size_t p = 0; p < pages; p++) {
		order[p] = (uint32_t)p;
		off[p] = (uint32_t)below(seed, TC_CACHE_PAGE / TC_CACHE_LINE) * TC_CACHE_LINE;
	}
	shuffle(order, pages, seed);
	head = chain_link(b->base, order, pages, TC_CACHE_PAGE, off);
out:
	free(order);
	free(off);
	return head;
}

/* --- the timed loop --- */

/* n loads, n a multiple of 16, each depending on the one before. noinline and the
 * returned pointer keep the compiler from shortening the chain. */
static __attribute__((noinline)) void *chase(void *p, size_t n)
{
	void **q = p;

	for (size_t i = 0; i < n; i += 16) {
#define L q = (void **)*q;
		L L L L L L L L L L L L L L L L
#undef L
	}
	return q;
}

static long switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nivcsw + ru.ru_nvcsw;
}

void tc_chase_time(void *head, size_t warm, const struct tc_chase_cfg *cfg,
		   struct tc_chase_state *st, struct tacho_cache_point *pt)
{
	double v[256];
	unsigned want = cfg->samples < ARRAY_SIZE(v) ? cfg->samples : ARRAY_SIZE(v);
	unsigned kept = 0, tries = 0, thrown = 0;
	double est = st->last_ns > 0 ? st->last_ns : 1.0;
	size_t loads = (size_t)(cfg->sample_ns / est);
	void *p = head;

	loads = (loads < 256 ? 256 : loads + 15) & ~(size_t)15;
	p = chase(p, (warm + 15) & ~(size_t)15);
	while (kept < want && tries < 4 * want + 8) {
		long before = switches();
		uint64_t t0 = tacho_tsc_begin();
		uint64_t t1;

		p = chase(p, loads);
		t1 = tacho_tsc_end();
		tries++;
		/* A sample during which the thread was switched out holds another task's
		 * time and finds the caches stirred: throw it away, warm up again, retake. */
		if (before < 0 || switches() != before) {
			thrown++;
			p = chase(p, (warm < loads ? warm : loads + 15) & ~(size_t)15);
			continue;
		}
		v[kept++] = (double)(t1 - t0) / (double)loads / cfg->tsc_hz * 1e9;
	}
	/* a machine so busy that no sample ran undisturbed: say what was seen */
	if (!kept) {
		for (unsigned i = 0; i < want; i++) {
			uint64_t t0 = tacho_tsc_begin();
			p = chase(p, loads);
			v[kept++] = (double)(tacho_tsc_end() - t0) / (double)loads / cfg->tsc_hz * 1e9;
		}
	}
	/* keep the chain's end alive */
	__asm__ __volatile__("" : : "r"(p) : "memory");
	tc_stats_sort(v, kept);
	pt->ns = tc_stats_percentile_sorted(v, kept, 50);
	pt->ns_p25 = tc_stats_percentile_sorted(v, kept, 25);
	pt->ns_p75 = tc_stats_percentile_sorted(v, kept, 75);
	pt->ns_min = v[0];
	pt->ns_max = v[kept - 1];
	pt->samples = kept;
	pt->discarded = thrown;
	st->discarded += thrown;
	st->last_ns = pt->ns;
}

/* --- how quiet the machine is --- */

double tc_cache_add_chain_ticks(unsigned adds, unsigned tries)
{
#if defined(__x86_64__) || defined(__i386__)
	double best = INFINITY;

	adds = (adds + 15) & ~15u;
	for (unsigned t = 0; t < tries; t++) {
		unsigned long x = 0;
		uint64_t t0 = tacho_tsc_begin(), t1;

		for (unsigned i = 0; i < adds; i += 16) {
			/* sixteen adds, each waiting for the one before: sixteen cycles; the
			 * loop's own counting runs beside them */
			__asm__ __volatile__(
				"add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				"add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				"add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
				"add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
				: "+r"(x));
		}
		t1 = tacho_tsc_end();
		if ((double)(t1 - t0) < best)
			best = (double)(t1 - t0);
	}
	return best;
#else
	(void)adds;
	(void)tries;
	return NAN;
#endif
}

/* One number after a word at the start of a line of /proc/stat. */
static long long proc_stat_field(const char *word, unsigned field)
{
	char *text, *p;
	size_t len, wl = strlen(word);
	long long v = -1;

	if (tc_read_file("/proc/stat", &text, &len, 0))
		return -1;
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, word, wl) || p[wl] != ' ')
			continue;
		p += wl;
		for (unsigned f = 0; f <= field; f++) {
			char *end;
			long long x = strtoll(p, &end, 10);

			if (end == p)
				break;
			if (f == field)
				v = x;
			p = end;
		}
		break;
	}
	free(text);
	return v;
}

unsigned tc_cache_busy(void)
{
	long long running = proc_stat_field("procs_running", 0);

	return running > 1 ? (unsigned)(running - 1) : 0;
}

long long tc_cache_steal(int cpu)
{
	char word[32];

	snprintf(word, sizeof(word), "cpu%d", cpu);
	/* user nice system idle iowait irq softirq steal */
	return proc_stat_field(word, 7);
}
