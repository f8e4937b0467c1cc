/* sysfs.c - reading the kernel's view of the CPUs: /sys/devices/system/cpu (online
 * CPUs, topology, caches), the hybrid and core PMUs, and /proc/cpuinfo's model name
 * and flags. crosscheck.c holds it against CPUID. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* An integer file, or -1 when it is missing or not a number. */
static long long read_id(struct reader *r, const char *path)
{
	long long v;

	(void)r;
	if (tc_read_int_file(path, &v) != 0 || v < 0 || v > INT_MAX)
		return -1;
	return v;
}

static unsigned read_uint(struct reader *r, const char *path)
{
	long long v = read_id(r, path);

	return v < 0 ? 0 : (unsigned)v;
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

static void read_cache(struct reader *r, int cpu, unsigned idx, struct tacho_sysfs_cache *c)
{
	char buf[4096];
	const char *dir = "/sys/devices/system/cpu/cpu%d/cache/index%u/%s";
	long long level;
	int err;

	memset(c, 0, sizeof(*c));
	c->shared_first = -1;
	/* the index after the last has no folder: one failed open, not seven */
	err = tc_read_int_file(rpath(r, dir, cpu, idx, "level"), &level);
	if (err == -ENOENT || err == -ENOTDIR)
		return;
	c->level = err || level < 0 || level > INT_MAX ? 0 : (unsigned)level;
	if (tc_read_line_file(rpath(r, dir, cpu, idx, "type"), buf, sizeof(buf)) == 0) {
		size_t i;
		for (i = 0; buf[i] && i + 1 < sizeof(c->type); i++)
			c->type[i] = (char)tolower((unsigned char)buf[i]);
		c->type[i] = '\0';
	}
	if (tc_read_line_file(rpath(r, dir, cpu, idx, "size"), buf, sizeof(buf)) == 0)
		c->size_bytes = parse_size(tc_trim(buf));
	c->ways = read_uint(r, rpath(r, dir, cpu, idx, "ways_of_associativity"));
	c->line_bytes = read_uint(r, rpath(r, dir, cpu, idx, "coherency_line_size"));
	c->sets = read_uint(r, rpath(r, dir, cpu, idx, "number_of_sets"));
	if (tc_read_line_file(rpath(r, dir, cpu, idx, "shared_cpu_list"), buf, sizeof(buf)) == 0 &&
	    list_count(buf, &c->shared_cpus, &c->shared_first) != 0) {
		c->shared_cpus = 0;
		c->shared_first = -1;
	}
}

static void read_cpu(struct reader *r, struct tacho_sysfs_cpu *c)
{
	const char *topo = "/sys/devices/system/cpu/cpu%d/topology/%s";
	char buf[4096];
	int cpu = c->cpu;

	c->package = (int)read_id(r, rpath(r, topo, cpu, "physical_package_id"));
	c->die = (int)read_id(r, rpath(r, topo, cpu, "die_id"));
	c->core = (int)read_id(r, rpath(r, topo, cpu, "core_id"));
	c->core_first = -1;
	/* core_cpus_list arrived in 5.7 as the clearer name of thread_siblings_list */
	if (tc_read_line_file(rpath(r, topo, cpu, "core_cpus_list"), buf, sizeof(buf)) == 0 ||
	    tc_read_line_file(rpath(r, topo, cpu, "thread_siblings_list"), buf, sizeof(buf)) == 0) {
		if (list_count(buf, &c->core_threads, &c->core_first) != 0) {
			c->core_threads = 0;
			c->core_first = -1;
		}
	}
	/* index0, index1, ... with no gaps; the kernel numbers them in CPUID's order */
	for (unsigned i = 0; i < TACHO_SYSFS_MAX_CACHES; i++) {
		struct tacho_sysfs_cache *k = &c->caches[c->ncaches];
		read_cache(r, cpu, i, k);
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

int tacho_cpu_sysfs_read(const char *root, struct tacho_cpu_sysfs **out)
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
	for (unsigned i = 0; i < s->ncpus; i++)
		read_cpu(&r, &s->cpus[i]);

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
