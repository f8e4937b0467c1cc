/* sysfs.c - reading the kernel's view of the CPUs: /sys/devices/system/cpu (online
 * CPUs, topology, caches), the hybrid and core PMUs, and /proc/cpuinfo's model name
 * and flags. crosscheck.c holds it against CPUID. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu/cpuid.h"
#include "util/util.h"
#include "tacho/cpu.h"

/* --- CPU lists --- */

/* The size of a kernel CPU list ("0-3,8-11\n") and its lowest CPU, which names the
 * instance of a shared cache or a core (sysfs sharing sets partition the CPUs).
 * 0 or -TACHO_EPARSE / -TACHO_EEMPTY / -TACHO_EOUTOFRANGE / -ENOMEM. */
static int list_count(char *s, unsigned *count, int *first)
{
	int *cpus;
	size_t n;
	int err = tc_parse_cpu_list(tc_trim(s), &cpus, &n, NULL);

	if (err)
		return err;
	*count = (unsigned)n;
	*first = cpus[0];     /* sorted, and never empty on success */
	free(cpus);
	return 0;
}

/* --- reading the tree --- */

struct reader {
	const char *root;   /* "" for this machine */
	char path[PATH_MAX];
};

static const char *rpath(struct reader *r, const char *fmt, ...) TC_PRINTF(2, 3);
static const char *rpath(struct reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->path, sizeof(r->path), "%s", r->root);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < sizeof(r->path))
		vsnprintf(r->path + n, sizeof(r->path) - (size_t)n, fmt, ap);
	va_end(ap);
	return r->path;
}

/* An integer file of folder dfd, or -1 when it is missing or not a number. */
static long long read_id(int dfd, const char *name)
{
	long long v;

	if (tc_read_int_at(dfd, name, &v) != 0 || v < 0 || v > INT_MAX)
		return -1;
	return v;
}

static unsigned read_uint(int dfd, const char *name)
{
	long long v = read_id(dfd, name);

	return v < 0 ? 0 : (unsigned)v;
}

/* A folder opened for openat: one walk of its path, then one name per file. */
static int open_dir(struct reader *r, const char *fmt, int cpu, unsigned idx)
{
	char rel[96];

	snprintf(rel, sizeof(rel), fmt, cpu, idx);
	return open(rpath(r, "%s", rel), O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* What the CPUs read so far tell of the ones still to read. The kernel keeps one
 * cacheinfo leaf per CPU and index and builds shared_cpu_list by comparing the same
 * index on both CPUs (drivers/base/cacheinfo.c, arch/x86/kernel/cpu/cacheinfo.c): a
 * CPU named in an earlier CPU's list for index i has that very cache at index i, with
 * the same values. The threads of a core (core_cpus_list) have its package, die and
 * core. Their files are not read again: on a machine of 2-thread cores sharing an L3,
 * most of the files of most CPUs. Indexed by CPU number (below ncpu). */
struct known {
	int ncpu;
	const bool *caches;            /* the CPUs whose caches are read; NULL: all */
	const struct tacho_sysfs_cache **cache[TACHO_SYSFS_MAX_CACHES];
	const struct tacho_sysfs_cpu **core;
};

/* Marks each CPU of list (a kernel CPU list, read-only) as known through v. */
static void mark_list(const char *list, int ncpu, const void **slots, const void *v)
{
	int *cpus;
	size_t n;
	char *copy;

	if (!slots || !(copy = tc_strdup(list)))
		return;
	if (tc_parse_cpu_list(tc_trim(copy), &cpus, &n, NULL) == 0) {
		for (size_t i = 0; i < n; i++)
			if (cpus[i] >= 0 && cpus[i] < ncpu && !slots[cpus[i]])
				slots[cpus[i]] = v;
		free(cpus);
	}
	free(copy);
}

/* "32K", "1024K", "32768K" (the kernel's "%uK"); plain bytes and M/G are accepted too. */
static uint64_t parse_size(const char *s)
{
	static const char units[] = "KkMmGg";
	size_t n = strspn(s, "0123456789");
	unsigned shift = 0;
	char num[24];
	uint64_t v;

	if (n == 0 || n >= sizeof(num))
		return 0;
	if (s[n] && strchr(units, s[n]))
		shift = 10 * (unsigned)(1 + (strchr(units, s[n]) - units) / 2);
	if (s[n + (shift != 0)] != '\0')
		return 0;
	memcpy(num, s, n);
	num[n] = '\0';
	if (tc_parse_u64(num, &v) || v > UINT64_MAX >> shift)
		return 0;
	return v << shift;
}

/* Index idx of CPU cpu: false when the CPU has no such folder (the one after its
 * last). */
static bool read_cache(struct reader *r, struct known *kn, int cpu, unsigned idx,
		       struct tacho_sysfs_cache *c)
{
	const struct tacho_sysfs_cache *same = cpu < kn->ncpu && kn->cache[idx] ?
					       kn->cache[idx][cpu] : NULL;
	char buf[4096];
	long long level;
	int dfd, err;

	if (same) {
		*c = *same;
		return true;
	}
	memset(c, 0, sizeof(*c));
	c->shared_first = -1;
	dfd = open_dir(r, "/sys/devices/system/cpu/cpu%d/cache/index%u", cpu, idx);
	if (dfd < 0)
		return errno != ENOENT && errno != ENOTDIR;
	err = tc_read_int_at(dfd, "level", &level);
	c->level = err || level < 0 || level > INT_MAX ? 0 : (unsigned)level;
	if (tc_read_line_at(dfd, "type", buf, sizeof(buf)) == 0) {
		size_t i;
		for (i = 0; buf[i] && i + 1 < sizeof(c->type); i++)
			c->type[i] = (char)tolower((unsigned char)buf[i]);
		c->type[i] = '\0';
	}
	if (tc_read_line_at(dfd, "size", buf, sizeof(buf)) == 0)
		c->size_bytes = parse_size(tc_trim(buf));
	c->ways = read_uint(dfd, "ways_of_associativity");
	c->line_bytes = read_uint(dfd, "coherency_line_size");
	c->sets = read_uint(dfd, "number_of_sets");
	if (tc_read_line_at(dfd, "shared_cpu_list", buf, sizeof(buf)) == 0) {
		if (list_count(buf, &c->shared_cpus, &c->shared_first) != 0) {
			c->shared_cpus = 0;
			c->shared_first = -1;
		} else if (c->level || c->type[0] || c->size_bytes) {
			mark_list(buf, kn->ncpu, (const void **)kn->cache[idx], c);
		}
	}
	close(dfd);
	return true;
}

static void read_cpu(struct reader *r, struct known *kn, struct tacho_sysfs_cpu *c)
{
	const struct tacho_sysfs_cpu *same = c->cpu < kn->ncpu && kn->core ? kn->core[c->cpu] :
					     NULL;
	char buf[4096];
	int cpu = c->cpu;

	c->core_first = -1;
	if (same) {
		c->package = same->package;
		c->die = same->die;
		c->core = same->core;
		c->core_threads = same->core_threads;
		c->core_first = same->core_first;
	} else {
		int dfd = open_dir(r, "/sys/devices/system/cpu/cpu%d/topology", cpu, 0);
		/* an offline CPU, or a fake tree without the folder: all unknown */
		c->package = (int)read_id(dfd, "physical_package_id");
		c->die = (int)read_id(dfd, "die_id");
		c->core = (int)read_id(dfd, "core_id");
		/* core_cpus_list arrived in 5.7 as the clearer name of thread_siblings_list */
		if (dfd >= 0 && (tc_read_line_at(dfd, "core_cpus_list", buf, sizeof(buf)) == 0 ||
				 tc_read_line_at(dfd, "thread_siblings_list", buf, sizeof(buf)) == 0)) {
			if (list_count(buf, &c->core_threads, &c->core_first) != 0) {
				c->core_threads = 0;
				c->core_first = -1;
			} else if (c->package >= 0 && c->core >= 0) {
				mark_list(buf, kn->ncpu, (const void **)kn->core, c);
			}
		}
		if (dfd >= 0)
			close(dfd);
	}
	if (kn->caches && (cpu >= kn->ncpu || !kn->caches[cpu]))
		return;
	/* index0, index1, ... with no gaps; the kernel numbers them in CPUID's order */
	for (unsigned i = 0; i < TACHO_SYSFS_MAX_CACHES; i++) {
		struct tacho_sysfs_cache *k = &c->caches[c->ncaches];
		if (!read_cache(r, kn, cpu, i, k))
			break;
		if (k->level == 0 && k->type[0] == '\0' && k->size_bytes == 0)
			break;
		c->ncaches++;
	}
}

static struct tacho_sysfs_cpu *find_cpu(const struct tacho_cpu_sysfs *s, int cpu)
{
	size_t lo = 0, hi = s->ncpus;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->cpus[mid].cpu == cpu)
			return &s->cpus[mid];
		if (s->cpus[mid].cpu < cpu)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Marks the CPUs a hybrid part's core PMU lists in /sys/devices/PMU/cpus. */
static void mark_pmu(struct tacho_cpu_sysfs *s, char *list, const char *pmu, const char *path)
{
	int *cpus;
	size_t n;

	if (tc_parse_cpu_list(tc_trim(list), &cpus, &n, NULL) != 0) {
		tc_log(TACHO_LOG_WARN, "%s: not a CPU list", path);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct tacho_sysfs_cpu *c = find_cpu(s, cpus[i]);
		if (c)
			snprintf(c->pmu, sizeof(c->pmu), "%s", pmu);
	}
	free(cpus);
}

/* How many distinct values key() takes over the CPUs that know it (0: none know). */
static unsigned count_distinct(const struct tacho_cpu_sysfs *s,
			       long long (*key)(const struct tacho_sysfs_cpu *))
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->ncpus; i++) {
		long long k = key(&s->cpus[i]);
		bool seen = false;
		if (k < 0)
			continue;
		for (unsigned j = 0; j < i && !seen; j++)
			seen = key(&s->cpus[j]) == k;
		n += !seen;
	}
	return n;
}

static long long key_package(const struct tacho_sysfs_cpu *c)
{
	return c->package;
}

static long long key_die(const struct tacho_sysfs_cpu *c)
{
	return c->package < 0 || c->die < 0 ? -1 : ((long long)c->package << 32) | c->die;
}

static long long key_core(const struct tacho_sysfs_cpu *c)
{
	if (c->core_first >= 0)
		return c->core_first;
	/* without core_cpus_list: core_id is unique within a package only */
	return c->package < 0 || c->core < 0 ? -1 : ((long long)1 << 62) |
		((long long)c->package << 32) | c->core;
}

/* want: by CPU number below want_n, whether its caches are read; NULL: every CPU's. */
static int sysfs_read(const char *root, const bool *want, int want_n,
		      struct tacho_cpu_sysfs **out)
{
	struct reader r = { .root = root && strcmp(root, "/") != 0 ? root : "" };
	struct tacho_cpu_sysfs *s;
	char *text = NULL;
	int *online = NULL;
	size_t len, n = 0;
	int err;

	*out = NULL;
	err = tc_read_file(rpath(&r, "/sys/devices/system/cpu/online"), &text, &len, 1 << 20);
	if (err)
		return err;
	/* the CPU reading this is online: an empty list is as wrong as junk */
	err = tc_parse_cpu_list(tc_trim(text), &online, &n, NULL);
	free(text);
	text = NULL;
	if (err)
		return err == -ENOMEM ? err : -TACHO_EPARSE;
	s = calloc(1, sizeof(*s));
	if (s)
		s->cpus = calloc(n, sizeof(*s->cpus));
	if (!s || !s->cpus) {
		free(s);
		free(online);
		return -ENOMEM;
	}
	/* tc_parse_cpu_list gives them sorted and distinct, as find_cpu needs */
	for (size_t i = 0; i < n; i++)
		s->cpus[i].cpu = online[i];
	s->ncpus = (unsigned)n;
	free(online);
	{
		struct known kn = { .ncpu = s->cpus[s->ncpus - 1].cpu + 1 };
		bool ok = kn.ncpu > 0;
		if (want)   /* a CPU beyond want's end is not wanted */
			kn.caches = want_n >= kn.ncpu ? want : NULL;
		if (want && !kn.caches) {
			/* without the memory, every CPU's caches: more files, the same view */
			bool *w = calloc((size_t)kn.ncpu, sizeof(*w));
			if (w)
				memcpy(w, want, (size_t)want_n * sizeof(*w));
			kn.caches = w;
		}
		ok = ok && (kn.core = calloc((size_t)kn.ncpu, sizeof(*kn.core)));
		for (unsigned i = 0; ok && i < TACHO_SYSFS_MAX_CACHES; i++)
			ok = (kn.cache[i] = calloc((size_t)kn.ncpu, sizeof(*kn.cache[i]))) != NULL;
		/* without the memory every CPU reads its own files, as it always may */
		for (unsigned i = 0; i < s->ncpus; i++)
			read_cpu(&r, &kn, &s->cpus[i]);
		free(kn.core);
		for (unsigned i = 0; i < TACHO_SYSFS_MAX_CACHES; i++)
			free(kn.cache[i]);
		if (kn.caches != want)
			free((void *)kn.caches);
	}

	/* Hybrid Intel parts have one core PMU per kind of core, each listing its CPUs
	 * (perf's pmu-events: cpu_core for P-cores, cpu_atom for E-cores). */
	static const char *const pmus[] = { "cpu_core", "cpu_atom", "cpu_lowpower" };
	for (size_t i = 0; i < ARRAY_SIZE(pmus); i++) {
		if (tc_read_file(rpath(&r, "/sys/devices/%s/cpus", pmus[i]), &text, &len,
				 1 << 20) == 0) {
			mark_pmu(s, text, pmus[i], r.path);
			free(text);
			text = NULL;
		}
	}

	/* The kernel registers its core PMU as "cpu" (or one per kind on hybrid parts);
	 * without it only software events, tracepoints, breakpoints and uprobes exist. */
	s->core_pmu = -1;
	if (access(rpath(&r, "/sys/bus/event_source/devices"), F_OK) == 0) {
		static const char *const core_pmus[] = { "cpu", "cpu_core", "cpu_atom" };
		s->core_pmu = 0;
		for (size_t i = 0; i < ARRAY_SIZE(core_pmus); i++)
			if (access(rpath(&r, "/sys/bus/event_source/devices/%s", core_pmus[i]),
				   F_OK) == 0)
				s->core_pmu = 1;
	}

	s->packages = count_distinct(s, key_package);
	s->dies = count_distinct(s, key_die);
	s->cores = count_distinct(s, key_core);

	if (tc_cpuinfo_read(r.root, &text, &len) == 0) {
		char *model = tc_cpuinfo_field(text, len, "model name");
		if (model)
			snprintf(s->model_name, sizeof(s->model_name), "%s", model);
		free(model);
		s->flags = tc_cpuinfo_field(text, len, "flags");
		free(text);
	}
	*out = s;
	return 0;
}

int tacho_cpu_sysfs_read(const char *root, struct tacho_cpu_sysfs **out)
{
	return sysfs_read(root, NULL, 0, out);
}

int tacho_cpu_sysfs_read_for(const char *root, const struct tacho_cpu_info *info,
			     struct tacho_cpu_sysfs **out)
{
	bool *want = NULL;
	int n = 0, first = -1, err;

	if (!info || info->sz < TC_CPU_INFO_SZ_V1)
		return -EINVAL;
	/* tacho_cpu_crosscheck's CPU for each kind of core: the first of its kind, by
	 * the kernel's number; where the description has one kind and no numbers it
	 * takes the first online CPU, and every CPU's caches are read */
	for (unsigned k = 0; k < info->ncore_types; k++) {
		const struct tacho_cpu_core_type *ct = &info->core_types[k];
		if (info->cpus && ct->first_cpu < info->ncpus && info->cpus[ct->first_cpu].os_cpu >= 0)
			n = info->cpus[ct->first_cpu].os_cpu + 1 > n ? info->cpus[ct->first_cpu].os_cpu + 1 : n;
		else if (info->ncore_types == 1)
			first = 0;
	}
	want = calloc((size_t)n + 1, sizeof(*want));
	if (!want)
		return -ENOMEM;
	for (unsigned k = 0; k < info->ncore_types; k++) {
		const struct tacho_cpu_core_type *ct = &info->core_types[k];
		if (info->cpus && ct->first_cpu < info->ncpus && info->cpus[ct->first_cpu].os_cpu >= 0)
			want[info->cpus[ct->first_cpu].os_cpu] = true;
	}
	err = sysfs_read(root, first < 0 ? want : NULL, first < 0 ? n : 0, out);
	free(want);
	return err;
}

void tacho_cpu_sysfs_free(struct tacho_cpu_sysfs *s)
{
	if (!s)
		return;
	free(s->cpus);
	free(s->flags);
	free(s);
}

const struct tacho_sysfs_cpu *tacho_cpu_sysfs_cpu(const struct tacho_cpu_sysfs *s, int cpu)
{
	return s ? find_cpu(s, cpu) : NULL;
}
