/* measure.c - tacho_cache_measure: pins the thread, gathers what CPUID and sysfs claim
 * for that CPU, sweeps the latency curve and the page chases, finds the levels, then
 * measures each level's bandwidth, and says how quiet the machine was meanwhile. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/cache.h"

#define MIB (1024ull * 1024)
#define MIN_BYTES_ALLOWED 4096ull
#define MAX_BYTES_ALLOWED (1024 * MIB)
#define DEFAULT_MAX_FLOOR (64 * MIB)
#define TLB_PAGES_FLOOR 16384u
#define SAMPLE_NS 100e3           /* one timed sample of a chase: 0.1 ms */
#define BW_SAMPLE_NS 1e6          /* one of a bandwidth kernel: 1 ms */
#define ADDS 20000u               /* the clock probe's chain: some 5-10 us */

/* Everything one measurement carries from phase to phase. */
struct run {
	struct tacho_cache_opts o;
	struct tacho_cache_result *r;
	int cpu;
	int *cpus;                 /* the CPUs the caller may run on: the all-CPU runs */
	size_t ncpus;
	struct tc_chase_cfg cfg;
	double clock[8];           /* core-clock estimates through the run */
	unsigned nclock;
	uint64_t seed;
	double t0;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress(struct run *u, const char *phase, double done)
{
	if (u->o.progress)
		u->o.progress(u->o.progress_arg, phase, done);
}

static void probe_clock(struct run *u)
{
	double ticks = tc_cache_add_chain_ticks(ADDS, 5);
	unsigned busy = tc_cache_busy();

	if (busy > u->r->about.busy)
		u->r->about.busy = busy;
	if (isfinite(ticks) && ticks > 0 && u->nclock < ARRAY_SIZE(u->clock))
		u->clock[u->nclock++] = u->cfg.tsc_hz * ((ADDS + 15) & ~15u) / ticks;
}

/* --- options --- */

/* Every field of the options is optional: the first version is sz alone. */
#define TC_OPTS_V1_tacho_cache_opts tc_offsetofend(struct tacho_cache_opts, sz)

static int take_opts(const struct tacho_cache_opts *in, struct tacho_cache_opts *o)
{
	int err = TC_OPTS_VALID(in, tacho_cache_opts);

	if (err)
		return err;
	TC_OPTS_COPY(o, in);
	if (o->what & ~(TACHO_CACHE_LATENCY | TACHO_CACHE_BANDWIDTH | TACHO_CACHE_TLB))
		return -EINVAL;
	if (!o->what)
		o->what = TACHO_CACHE_LATENCY | TACHO_CACHE_BANDWIDTH | TACHO_CACHE_TLB;
	o->what |= TACHO_CACHE_LATENCY;
	if (o->points_per_octave > 16)
		return -EINVAL;
	if (!o->points_per_octave)
		o->points_per_octave = o->thorough ? 8 : 4;
	if (o->samples > 255)
		return -EINVAL;
	if (!o->samples)
		o->samples = o->thorough ? 21 : 9;
	if (o->rounds > 15)
		return -EINVAL;
	if (!o->rounds)
		o->rounds = o->thorough ? 5 : 3;
	if (o->min_bytes && (o->min_bytes < MIN_BYTES_ALLOWED || o->min_bytes > MAX_BYTES_ALLOWED))
		return -EINVAL;
	if (o->max_bytes && (o->max_bytes < MIN_BYTES_ALLOWED || o->max_bytes > MAX_BYTES_ALLOWED))
		return -EINVAL;
	if (!o->min_bytes)
		o->min_bytes = MIN_BYTES_ALLOWED;
	if (o->max_bytes && o->min_bytes > o->max_bytes)
		return -EINVAL;
	if (o->pin_cpu && (o->cpu < 0 || o->cpu >= CPU_SETSIZE))
		return -EINVAL;
	return 0;
}

/* --- the claims --- */

static struct tc_cache_claim *claim_of(struct tacho_cache_result *r, unsigned level)
{
	for (size_t i = 0; i < r->nclaims; i++)
		if (r->claims[i].level == level)
			return &r->claims[i];
	if (r->nclaims == TC_CACHE_MAX_CLAIMS)
		return NULL;
	r->claims[r->nclaims] = (struct tc_cache_claim){ .level = level, .type = TACHO_CACHE_UNIFIED };
	return &r->claims[r->nclaims++];
}

static int cmp_claim(const void *a, const void *b)
{
	const struct tc_cache_claim *x = a, *y = b;

	return (x->level > y->level) - (x->level < y->level);
}

/* The index in the dump of the CPU the measurement runs on. */
static unsigned dump_index(const struct tacho_cpuid_dump *d, int cpu)
{
	unsigned n = tacho_cpuid_dump_ncpus(d);

	for (unsigned i = 0; i < n; i++)
		if (tacho_cpuid_dump_os_cpu(d, i) == cpu)
			return i;
	/* a dump that does not name its CPUs: by position */
	return cpu >= 0 && (unsigned)cpu < n ? (unsigned)cpu : 0;
}

static void claims_cpuid(struct run *u)
{
	struct tacho_cache_result *r = u->r;
	struct tacho_cpuid_dump *live = NULL;
	const struct tacho_cpuid_dump *d = u->o.dump;
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	const struct tacho_cpu_core_type *ct;
	const struct tacho_cpu_cache *caches;
	unsigned idx, ncaches;
	int err;

	if (!d) {
		err = tacho_cpuid_dump_live(&live);
		if (err) {
			tc_cache_warn(r, "CPUID could not be read: %s; nothing is held against it",
				      tacho_strerror(err));
			return;
		}
		d = live;
	}
	err = tacho_cpu_decode(d, &info);
	if (err) {
		tc_cache_warn(r, "CPUID could not be decoded: %s", tacho_strerror(err));
		goto out;
	}
	idx = dump_index(d, u->cpu);
	ct = &info.core_types[idx < info.ncpus ? info.cpus[idx].core_type : 0];
	snprintf(r->about.brand, sizeof(r->about.brand), "%s", info.brand);
	r->about.hypervisor = info.hypervisor_bit;
	/* the caches this very CPU reports: on an asymmetric part (a 7950X3D's two
	 * CCDs) they are not those of the first CPU of its kind */
	caches = tacho_cpu_caches_of(&info, idx < info.ncpus ? idx : 0, &ncaches);
	for (unsigned i = 0; i < ncaches; i++) {
		const struct tacho_cpu_cache *c = &caches[i];
		struct tc_cache_claim *cl;

		if (c->type == TACHO_CACHE_INSTRUCTION || !c->size || !(cl = claim_of(r, c->level)))
			continue;
		cl->type = c->type;
		cl->cpuid_bytes = c->size;
	}
	for (unsigned i = 0; i < ct->ntlbs; i++) {
		const struct tacho_cpu_tlb *t = &ct->tlbs[i];

		if (!(t->page_sizes & TACHO_PAGE_4K) || t->level < 1 || t->level > 2 ||
		    (t->type != TACHO_TLB_DATA && t->type != TACHO_TLB_UNIFIED && t->type != TACHO_TLB_LOAD))
			continue;
		if (t->entries > r->cpuid_tlb[t->level])
			r->cpuid_tlb[t->level] = t->entries;
	}
	tacho_cpu_info_exit(&info);
out:
	tacho_cpuid_dump_free(live);
}

static void claims_sysfs(struct run *u)
{
	struct tacho_cache_result *r = u->r;
	struct tacho_cpu_sysfs *sys;
	const struct tacho_sysfs_cpu *c;
	int err = tacho_cpu_sysfs_read(u->o.sysfs_root, &sys);

	if (err) {
		tc_cache_warn(r, "sysfs could not be read: %s; nothing is held against it",
			      tacho_strerror(err));
		return;
	}
	c = tacho_cpu_sysfs_cpu(sys, u->cpu);
	for (unsigned i = 0; c && i < c->ncaches; i++) {
		const struct tacho_sysfs_cache *k = &c->caches[i];
		struct tc_cache_claim *cl;

		if (!k->size_bytes || !strcmp(k->type, "instruction") || !(cl = claim_of(r, k->level)))
			continue;
		cl->type = !strcmp(k->type, "data") ? TACHO_CACHE_DATA : TACHO_CACHE_UNIFIED;
		cl->sysfs_bytes = k->size_bytes;
		cl->sysfs_shared = k->shared_cpus;
	}
	tacho_cpu_sysfs_free(sys);
}

static uint64_t largest_claim(const struct tacho_cache_result *r)
{
	uint64_t m = 0;

	for (size_t i = 0; i < r->nclaims; i++) {
		uint64_t b = r->claims[i].sysfs_bytes > r->claims[i].cpuid_bytes ?
			     r->claims[i].sysfs_bytes : r->claims[i].cpuid_bytes;
		if (b > m)
			m = b;
	}
	return m;
}

/* MemAvailable of /proc/meminfo in bytes; 0 unknown. */
static uint64_t mem_available(void)
{
	char *text, *p;
	size_t len;
	unsigned long long kb = 0;

	if (tc_read_file("/proc/meminfo", &text, &len, 0))
		return 0;
	p = strstr(text, "MemAvailable:");
	if (p)
		sscanf(p, "MemAvailable: %llu kB", &kb);
	free(text);
	return kb * 1024;
}

static uint64_t default_max(const struct tacho_cache_result *r)
{
	uint64_t m = 4 * largest_claim(r), avail = mem_available(), p = 1;

	if (m < DEFAULT_MAX_FLOOR)
		m = DEFAULT_MAX_FLOOR;
	if (m > MAX_BYTES_ALLOWED)
		m = MAX_BYTES_ALLOWED;
	/* two buffers of it may live at once (the page chase's pair is smaller) */
	if (avail && m > avail / 4)
		m = avail / 4;
	while (p * 2 <= m)
		p *= 2;
	return p < MIN_BYTES_ALLOWED ? MIN_BYTES_ALLOWED : p;
}

/* --- the curves --- */

/* The sizes of the sweep: min * 2^(k/ppo), whole lines, strictly increasing. */
static size_t sweep(uint64_t min, uint64_t max, unsigned ppo, uint64_t unit, uint64_t *out,
		    size_t cap)
{
	size_t n = 0;

	for (unsigned k = 0; n < cap; k++) {
		uint64_t s = (uint64_t)((double)min * exp2((double)k / ppo) + 0.5);

		s -= s % unit;
		if (s > max)
			break;
		if (n && s <= out[n - 1])
			continue;
		out[n++] = s;
	}
	return n;
}

typedef void *build_fn(struct tc_cache_buf *b, size_t n, uint64_t *seed);

/* One curve: for each size, build the chain in buf and time it; the whole sweep
 * rounds times, each point keeping its sweep with the lowest median (disturbance only
 * ever adds time). Working sets of one huge page or less are swept in more places, a
 * different 2 MiB of the buffer each time: a hypervisor may back a guest's huge page
 * with scattered small pages of the host, and a physically indexed cache (an L2)
 * then finds some of its sets crowded and looks smaller than it is; the lowest over
 * several pages is the cache's own behaviour. unit: bytes per element (a line, or a
 * page for the page chases); buf must hold the largest size plus (places - 1) huge
 * pages. */
static int curve(struct run *u, enum tacho_cache_curve which, struct tc_cache_buf *buf,
		 build_fn *build, const uint64_t *sizes, size_t n, uint64_t unit,
		 unsigned places, const char *phase, double p0, double p1)
{
	struct tacho_cache_point *pts = calloc(n, sizeof(*pts));
	unsigned rounds = u->o.rounds, sweeps = rounds > places ? rounds : places;
	double work = 0, done = 0;
	int err = 0;

	if (!pts)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		work += (double)(sizes[i] <= TC_CACHE_HUGE ? sweeps : rounds);
	for (unsigned round = 0; round < sweeps && !err; round++) {
		struct tc_chase_state st = { 0 };
		struct tc_cache_buf at = *buf;

		at.base += (size_t)round * TC_CACHE_HUGE;
		for (size_t i = 0; i < n; i++) {
			size_t elems = (size_t)(sizes[i] / unit);
			struct tacho_cache_point pt = { 0 };
			void *head;

			if (round >= (sizes[i] <= TC_CACHE_HUGE ? sweeps : rounds) ||
			    round * TC_CACHE_HUGE + sizes[i] > buf->bytes)
				continue;
			head = build(&at, elems, &u->seed);
			if (!head) {
				err = -ENOMEM;
				break;
			}
			/* building the chain wrote every element, so the set is in the caches
			 * it fits; a short warm-up settles the rest */
			tc_chase_time(head, elems < 65536 ? elems : 65536, &u->cfg, &st, &pt);
			pt.bytes = sizes[i];
			pt.pages = unit == TC_CACHE_PAGE ? elems : 0;
			pt.discarded += pts[i].discarded;
			if (round == 0 || pt.ns < pts[i].ns)
				pts[i] = pt;
			else
				pts[i].discarded = pt.discarded;
			done++;
			progress(u, phase, p0 + (p1 - p0) * done / work);
		}
		u->r->about.discarded += st.discarded;
	}
	if (!err)
		err = tc_cache_curve_set(u->r, which, pts, n);
	free(pts);
	return err;
}

static int latency(struct run *u)
{
	struct tacho_cache_result *r = u->r;
	uint64_t sizes[512];
	size_t n = sweep(u->o.min_bytes, u->o.max_bytes, u->o.points_per_octave, TC_CACHE_LINE,
			 sizes, ARRAY_SIZE(sizes));
	struct tc_cache_buf buf;
	double huge;
	int err;

	unsigned places = u->o.thorough ? 16 : 8;

	err = tc_cache_buf_init(&buf, u->o.max_bytes + (places - 1) * TC_CACHE_HUGE, true);
	if (err)
		return err;
	err = curve(u, TACHO_CACHE_CURVE_LATENCY, &buf, tc_chase_build_lines, sizes, n,
		    TC_CACHE_LINE, places, "latency", 0, u->o.thorough ? 0.3 : 0.45);
	huge = tc_cache_buf_huge_fraction(&buf);
	r->about.huge_fraction = huge >= 0 ? huge : 0;
	r->about.huge_pages = huge >= 0.5;
	tc_cache_buf_exit(&buf);
	if (err || !u->o.thorough)
		return err;
	/* the same sizes, every load anywhere in the set, small pages */
	err = tc_cache_buf_init(&buf, u->o.max_bytes, false);
	if (err)
		return err;
	err = curve(u, TACHO_CACHE_CURVE_RANDOM, &buf, tc_chase_build_random, sizes, n,
		    TC_CACHE_LINE, 1, "latency", 0.3, 0.5);
	tc_cache_buf_exit(&buf);
	return err;
}

static int tlb(struct run *u)
{
	uint64_t sizes[512], max_pages = TLB_PAGES_FLOOR;
	size_t n;
	struct tc_cache_buf buf;
	int err;

	if (4ull * u->r->cpuid_tlb[2] > max_pages)
		max_pages = 4ull * u->r->cpuid_tlb[2];
	n = sweep(8 * TC_CACHE_PAGE, max_pages * TC_CACHE_PAGE, u->o.points_per_octave,
		  TC_CACHE_PAGE, sizes, ARRAY_SIZE(sizes));
	err = tc_cache_buf_init(&buf, max_pages * TC_CACHE_PAGE, false);
	if (err)
		return err;
	err = curve(u, TACHO_CACHE_CURVE_PAGES, &buf, tc_chase_build_pages, sizes, n,
		    TC_CACHE_PAGE, 1, "tlb", 0.5, 0.58);
	tc_cache_buf_exit(&buf);
	if (err)
		return err;
	err = tc_cache_buf_init(&buf, max_pages * TC_CACHE_PAGE, true);
	if (err)
		return err;
	err = curve(u, TACHO_CACHE_CURVE_PAGES_HUGE, &buf, tc_chase_build_pages, sizes, n,
		    TC_CACHE_PAGE, 1, "tlb", 0.58, 0.66);
	tc_cache_buf_exit(&buf);
	return err;
}

/* --- bandwidth, level by level --- */

static int bandwidth(struct run *u)
{
	struct tacho_cache_result *r = u->r;
	struct tc_bw_cfg cfg = {
		.samples = u->o.thorough ? 11 : 5, .sample_ns = BW_SAMPLE_NS,
		.tsc_hz = u->cfg.tsc_hz, .cpus = u->cpus, .ncpus = u->ncpus,
	};
	uint64_t prev = 0, agg = 0;
	size_t todo = 1, done = 0;
	int err = 0;

	r->about.kernel = tc_bw_kernel_name();
	r->about.threads = (unsigned)u->ncpus;
	for (size_t i = 0; i < r->nlevels; i++)
		todo += r->levels[i].bytes != 0;
	for (size_t i = 0; i < r->nlevels && !err; i++) {
		struct tacho_cache_level *lv = &r->levels[i];
		uint64_t ws, ws_all;
		unsigned share;

		if (!lv->bytes)
			continue;
		/* half the level, so that it surely fits; but well above the level below */
		ws = lv->bytes / 2;
		if (prev && ws < 2 * prev)
			ws = (uint64_t)sqrt((double)prev * (double)lv->bytes);
		/* a level shared by several of the threads is split among them */
		share = lv->sysfs_shared ? lv->sysfs_shared : (lv->level <= 2 ? 1 : (unsigned)u->ncpus);
		if (share > u->ncpus)
			share = (unsigned)u->ncpus;
		ws_all = ws / (share ? share : 1);
		err = tc_bw_measure(&cfg, ws, ws_all, &lv->bw, &r->about.discarded);
		prev = lv->bytes;
		if (lv->sysfs_shared)
			agg = lv->bytes * ((u->ncpus + lv->sysfs_shared - 1) / lv->sysfs_shared);
		else
			agg = lv->bytes;
		progress(u, "bandwidth", 0.66 + 0.34 * (double)++done / (double)todo);
	}
	if (!err && r->mem.seen) {
		/* memory: the whole sweep's size, and in the all-CPU runs at least four
		 * times every instance of the last level together */
		uint64_t total = u->o.max_bytes > 4 * agg ? u->o.max_bytes : 4 * agg;

		err = tc_bw_measure(&cfg, u->o.max_bytes, total / u->ncpus, &r->mem.bw,
				    &r->about.discarded);
	}
	progress(u, "bandwidth", 1);
	return err;
}

/* --- how it went --- */

static void hygiene(struct run *u, long long steal0, double t_end)
{
	struct tacho_cache_result *r = u->r;
	struct tacho_cache_about *a = &r->about;
	long long steal1 = tc_cache_steal(u->cpu);
	long hz = sysconf(_SC_CLK_TCK);
	size_t n = r->ncurve[TACHO_CACHE_CURVE_LATENCY], wide = 0;
	double c[ARRAY_SIZE(u->clock)];

	a->seconds = t_end - u->t0;
	if (steal0 >= 0 && steal1 >= steal0 && hz > 0 && a->seconds > 0)
		a->steal_pct = 100.0 * (double)(steal1 - steal0) / (double)hz / a->seconds;
	if (u->nclock) {
		/* core_hz stays what the levels' cycles were counted at */
		memcpy(c, u->clock, u->nclock * sizeof(*c));
		tc_stats_sort(c, u->nclock);
		if (!(a->core_hz > 0))
			a->core_hz = tc_stats_percentile_sorted(c, u->nclock, 50);
		a->core_hz_min = c[0];
		a->core_hz_max = c[u->nclock - 1];
	}
	if (a->steal_pct > 1)
		tc_cache_warn(r, "the hypervisor ran something else on this CPU for %.1f %% of the "
			      "run (steal time): latencies and bandwidths may be high", a->steal_pct);
	if (a->busy)
		tc_cache_warn(r, "up to %u other task%s %s runnable during the run: %s the caches "
			      "and the memory bus; samples during which this thread was switched "
			      "out were retaken (%u)", a->busy, a->busy == 1 ? "" : "s",
			      a->busy == 1 ? "was" : "were", a->busy == 1 ? "it shared" : "they shared",
			      a->discarded);
	if (a->core_hz_min > 0 && a->core_hz_max / a->core_hz_min > 1.05)
		tc_cache_warn(r, "the core clock changed during the run (%.2f to %.2f GHz, from a "
			      "chain of dependent adds): frequency scaling, turbo or a throttled "
			      "core; cycles are counted at the median", a->core_hz_min / 1e9,
			      a->core_hz_max / 1e9);
	for (size_t i = 0; i < n; i++) {
		const struct tacho_cache_point *p = &r->curve[TACHO_CACHE_CURVE_LATENCY][i];
		if ((p->ns_p75 - p->ns_p25) > 0.1 * p->ns)
			wide++;
	}
	if (n && wide * 5 > n)
		tc_cache_warn(r, "%zu of the %zu points of the latency curve scattered by more than "
			      "10 %% between their quartiles: the machine was noisy (try --thorough, "
			      "or a quieter moment)", wide, n);
	if (a->hypervisor)
		tc_cache_note(r, "a virtual machine: CPUID and sysfs say what the hypervisor passes "
			      "on; the host's shared caches also serve its other guests, so a "
			      "guest may see less of them than claimed, and less at busy times");
	if (!a->huge_pages)
		tc_cache_note(r, "the kernel gave the latency curve small pages (%.0f %% huge): the "
			      "curve's chase keeps the TLB hitting anyway, but a set-indexed cache "
			      "may show its knee a little early", 100 * a->huge_fraction);
}

static int allowed_cpus(struct run *u, const cpu_set_t *set)
{
	u->cpus = malloc((size_t)CPU_COUNT(set) * sizeof(*u->cpus) + sizeof(int));
	if (!u->cpus)
		return -ENOMEM;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set))
			u->cpus[u->ncpus++] = c;
	return 0;
}

int tacho_cache_measure(const struct tacho_cache_opts *opts, struct tacho_cache_result **out)
{
	struct run u = { .seed = 0x9e3779b97f4a7c15ull };
	struct tacho_tsc_info ti = { .sz = sizeof(ti) };
	cpu_set_t saved, one;
	long long steal0;
	bool pinned = false;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	err = take_opts(opts, &u.o);
	if (err)
		return err;
	u.t0 = now_s();
	if (sched_getaffinity(0, sizeof(saved), &saved))
		return -errno;
	u.cpu = u.o.pin_cpu ? u.o.cpu : sched_getcpu();
	if (u.cpu < 0 || u.cpu >= CPU_SETSIZE || !CPU_ISSET(u.cpu, &saved))
		return -EINVAL;
	u.r = tc_cache_result_new();
	if (!u.r)
		return -ENOMEM;
	err = allowed_cpus(&u, &saved);
	if (err)
		goto out;
	CPU_ZERO(&one);
	CPU_SET(u.cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		err = -errno;
		goto out;
	}
	pinned = true;
	u.r->about.cpu = u.cpu;
	u.r->about.thorough = u.o.thorough;
	u.r->about.points_per_octave = u.o.points_per_octave;
	u.r->about.step = exp2(1.0 / u.o.points_per_octave);
	u.r->about.samples = u.o.samples;
	u.r->about.rounds = u.o.rounds;
	steal0 = tc_cache_steal(u.cpu);

	claims_cpuid(&u);
	claims_sysfs(&u);
	qsort(u.r->claims, u.r->nclaims, sizeof(u.r->claims[0]), cmp_claim);
	if (!u.o.max_bytes)
		u.o.max_bytes = default_max(u.r);
	if (u.o.min_bytes > u.o.max_bytes) {
		err = -EINVAL;
		goto out;
	}
	u.r->about.min_bytes = u.o.min_bytes;
	u.r->about.max_bytes = u.o.max_bytes;

	err = tacho_tsc_info(&ti);
	if (err == -TACHO_ENOTX86) {
		ti.hz = 1e9;            /* the reads fall back to nanoseconds */
		ti.source = TACHO_TSC_FREQ_UNKNOWN;
	} else if (err || !(ti.hz > 0)) {
		err = err ? err : -ENODEV;
		goto out;
	}
	err = 0;
	u.r->about.tsc_hz = ti.hz;
	u.r->about.tsc_source = tacho_tsc_source_name(ti.source);
	u.cfg = (struct tc_chase_cfg){ .samples = u.o.samples, .sample_ns = SAMPLE_NS, .tsc_hz = ti.hz };

	probe_clock(&u);
	progress(&u, "latency", 0);
	err = latency(&u);
	probe_clock(&u);
	if (!err && (u.o.what & TACHO_CACHE_TLB)) {
		err = tlb(&u);
		probe_clock(&u);
	}
	if (err)
		goto out;
	/* the clock estimate goes into the levels' cycles */
	if (u.nclock) {
		double c[ARRAY_SIZE(u.clock)];

		memcpy(c, u.clock, u.nclock * sizeof(*c));
		tc_stats_sort(c, u.nclock);
		u.r->about.core_hz = tc_stats_percentile_sorted(c, u.nclock, 50);
	}
	err = tc_cache_analyze(u.r);
	if (!err && (u.o.what & TACHO_CACHE_BANDWIDTH)) {
		err = bandwidth(&u);
		probe_clock(&u);
	}
	if (err)
		goto out;
	hygiene(&u, steal0, now_s());
out:
	if (pinned)
		sched_setaffinity(0, sizeof(saved), &saved);
	free(u.cpus);
	if (err) {
		tacho_cache_result_free(u.r);
		return err;
	}
	*out = u.r;
	return 0;
}
