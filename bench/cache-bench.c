/* cache-bench.c - tacho cache beside its peers, in one run: the latency of each level
 * against a pointer chase written here the way lmbench's lat_mem_rd builds its chain
 * (lmbench 3, lib_mem.c line_initialize: the pages of the set in random order, the
 * lines of each page in bit-reversed order, one pointer per line, the timed loop
 * `p = *p` unrolled a hundred times), and the bandwidth of each level against
 * likwid-bench's load_avx, store_avx and copy_avx kernels on the same working set and
 * CPU. Prints one table per comparison and the ratio tacho / peer.
 *
 *   cache-bench [CPU]        (default CPU 0; likwid-bench runs on the first CPU of S0,
 *                            so keep 0 unless you know better) */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "tacho.h"

/* --- the lmbench-method chase --- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static size_t below(size_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (size_t)(rng % n);
}

/* lmbench's words_initialize: i with its bits reversed, times scale */
static void bit_reversed(size_t *v, size_t n, size_t scale)
{
	unsigned bits = 0;

	for (size_t i = n >> 1; i; i >>= 1)
		bits++;
	for (size_t i = 0; i < n; i++) {
		size_t r = 0;
		for (unsigned j = 0; j < bits; j++)
			if (i & ((size_t)1 << j))
				r |= (size_t)1 << (bits - j - 1);
		v[i] = r * scale;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Context switches of this thread so far: a timing during which it moved was shared
 * with other tasks (tacho retakes such samples; so does this peer). */
static long switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* ns per load of the lmbench-method chain over `bytes`: the median of 11 timings of
 * about 0.1 ms each (tacho's sample length) during which the thread was not switched
 * out; on a busy machine a longer timing holds other tasks' time slices. */
static double lmbench_chase(size_t bytes)
{
	const size_t page = 4096, line = 64, nlines = page / line;
	size_t npages = (bytes + page - 1) / page, lines[64], *pages;
	char *base = malloc(npages * page + page), *p;
	double t[11];
	size_t loads;
	int kept = 0, tries = 0;

	pages = malloc(npages * sizeof(*pages));
	if (!base || !pages) {
		free(base);
		free(pages);
		return NAN;
	}
	p = (char *)(((uintptr_t)base + page - 1) & ~(uintptr_t)(page - 1));
	for (size_t i = 0; i < npages; i++)
		pages[i] = i * page;
	for (size_t i = npages; i > 1; i--) {   /* the pages in random order */
		size_t j = below(i), tmp = pages[i - 1];
		pages[i - 1] = pages[j];
		pages[j] = tmp;
	}
	bit_reversed(lines, nlines, line);
	for (size_t i = 0; i < npages; i++) {
		for (size_t j = 0; j + 1 < nlines; j++)
			*(char **)(p + pages[i] + lines[j]) = p + pages[i] + lines[j + 1];
		*(char **)(p + pages[i] + lines[nlines - 1]) = p + pages[(i + 1) % npages] + lines[0];
	}
	char **q = (char **)(p + pages[0] + lines[0]);
	loads = 1000;
	while (kept < 11 && tries++ < 2000) {
		long s0;
		double t0, dt;

		/* warm: once through a chain that fits in a cache (which lost it if we
		 * were switched out); memory needs no warming */
		for (size_t i = 0; bytes <= (16u << 20) && i < npages * nlines; i++)
			q = (char **)*q;
		s0 = switches();
		t0 = now_ns();
		for (size_t i = 0; i < loads; i += 100) {
#define L q = (char **)*q;
#define TEN L L L L L L L L L L
			TEN TEN TEN TEN TEN TEN TEN TEN TEN TEN
#undef TEN
#undef L
		}
		dt = now_ns() - t0;
		if (switches() != s0)
			continue;
		if (dt < 50e3) {   /* too short to time: lengthen to ~0.1 ms and start over */
			loads = (size_t)(loads * 100e3 / (dt > 1 ? dt : 1)) / 100 * 100 + 100;
			kept = 0;
			continue;
		}
		t[kept++] = dt / (double)loads;
	}
	__asm__ __volatile__("" : : "r"(q) : "memory");
	free(base);
	free(pages);
	if (kept < 11)
		return NAN;
	qsort(t, 11, sizeof(double), cmp_double);
	return t[5];
}

/* --- likwid-bench --- */

/* GB/s of one likwid-bench kernel over `bytes` with `threads` threads of S0: the best of
 * 9 runs of a fixed number of iterations that take about 1 ms (-i), so that some of
 * them run while no other task has the CPU, as tacho's undisturbed samples do. NaN
 * when it cannot be run. */
static double likwid(const char *kernel, uint64_t bytes, unsigned threads, double gbs_guess)
{
	char cmd[256], line[256];
	double best = NAN;
	unsigned long iters = (unsigned long)(gbs_guess * 1e9 * 1e-3 / (double)bytes);

	if (iters < 10)
		iters = 10;   /* likwid-bench's own floor */
	snprintf(cmd, sizeof(cmd), "likwid-bench -t %s -i %lu -w S0:%lluB:%u 2>/dev/null", kernel,
		 iters, (unsigned long long)bytes, threads);
	for (int run = 0; run < 9; run++) {
		FILE *f = popen(cmd, "r");

		if (!f)
			return NAN;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "MByte/s:", 8)) {
				double gbs = strtod(line + 8, NULL) / 1000;

				if (!(best >= gbs))
					best = gbs;
			}
		pclose(f);
	}
	return best;
}

static void bw_rows(const char *name, const struct tacho_cache_bandwidth *bw)
{
	static const char *const kernels[3] = { "load_avx", "store_avx", "copy_avx" };
	const double ours[3] = { bw->read, bw->write, bw->copy };
	const double all[3] = { bw->read_all, bw->write_all, bw->copy_all };

	if (!bw->bytes)
		return;
	for (unsigned k = 0; k < 3; k++) {
		double peer = likwid(kernels[k], bw->bytes, 1, ours[k]);
		double peer_all = bw->threads > 1 ? likwid(kernels[k], bw->bytes_all * bw->threads,
							      bw->threads, all[k]) : NAN;

		printf("  %-7s %-9s %10llu  %8.1f %8.1f %6.2f   %8.1f %8.1f %6.2f\n", name, kernels[k],
		       (unsigned long long)bw->bytes, ours[k], peer, ours[k] / peer, all[k], peer_all,
		       all[k] / peer_all);
	}
}

int main(int argc, char **argv)
{
	struct tacho_cache_opts o = { .sz = sizeof(o), .pin_cpu = true };
	struct tacho_cache_result *r;
	const struct tacho_cache_about *a;
	cpu_set_t one, all;
	int err;

	o.cpu = argc > 1 ? atoi(argv[1]) : 0;
	err = tacho_cache_measure(&o, &r);
	if (err) {
		fprintf(stderr, "cache-bench: cannot measure: %s\n", tacho_strerror(err));
		return 1;
	}
	a = tacho_cache_result_about(r);
	printf("tacho cache on CPU %d: %.2f s, %u points per octave, best of %u sweeps of %u "
	       "samples, huge pages %.0f %%\n\n", a->cpu, a->seconds, a->points_per_octave,
	       a->rounds, a->samples, 100 * a->huge_fraction);

	/* the peer chase runs pinned to the same CPU */
	sched_getaffinity(0, sizeof(all), &all);
	CPU_ZERO(&one);
	CPU_SET(o.cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
	printf("latency (ns a load) in the middle of each level, and of memory:\n"
	       "  level   working set    tacho  lmbench-method  ratio\n");
	for (size_t i = 0; i < tacho_cache_result_nlevels(r); i++) {
		const struct tacho_cache_level *l = tacho_cache_result_level(r, i);
		size_t mid;
		double peer;

		if (!l->bytes)
			continue;
		mid = (size_t)sqrt((double)l->first_bytes * (double)l->bytes) & ~(size_t)4095;
		peer = lmbench_chase(mid);
		printf("  L%-5u %12zu  %7.3g  %14.3g  %5.2f\n", l->level, mid, l->ns, peer, l->ns / peer);
	}
	if (tacho_cache_result_memory(r)->seen) {
		double peer = lmbench_chase(a->max_bytes);
		printf("  memory %12llu  %7.3g  %14.3g  %5.2f\n", (unsigned long long)a->max_bytes,
		       tacho_cache_result_memory(r)->ns, peer, tacho_cache_result_memory(r)->ns / peer);
	}

	/* likwid-bench pins its own threads: it must not inherit the chase's single CPU,
	 * where its threads would take turns (a first version lost a factor of 8 so) */
	sched_setaffinity(0, sizeof(all), &all);
	printf("\nbandwidth (GB/s), one thread, then %u threads (likwid-bench on S0, the best of 9 runs):\n"
	       "  level   kernel     working set   tacho   likwid  ratio      tacho   likwid  ratio\n",
	       a->threads);
	for (size_t i = 0; i < tacho_cache_result_nlevels(r); i++) {
		const struct tacho_cache_level *l = tacho_cache_result_level(r, i);
		char name[16];

		snprintf(name, sizeof(name), "L%u", l->level);
		bw_rows(name, &l->bw);
	}
	bw_rows("memory", &tacho_cache_result_memory(r)->bw);
	tacho_cache_result_free(r);
	return 0;
}
