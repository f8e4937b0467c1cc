/* sysfs.c - the kernel's view of the CPUs (/sys/devices/system/cpu, /proc/cpuinfo) and
 * its cross-check with what CPUID says. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/sysfs.h"

/* --- CPU lists --- */

static int parse_uint(const char **p, unsigned long *out)
{
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return -TACHO_EPARSE;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > TC_CPU_LIST_MAX)
			return -TACHO_EPARSE;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

int tc_cpu_list_parse(const char *s, int (*fn)(void *arg, int cpu), void *arg)
{
	const char *p = s;
	int err;

	/* The kernel prints bitmap lists with "%*pbl": ranges "a-b" separated by commas,
	 * ending in a newline; an empty set is an empty line. */
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\n' || *p == '\0')
		return 0;
	for (;;) {
		unsigned long a, b;

		if (parse_uint(&p, &a))
			return -TACHO_EPARSE;
		b = a;
		if (*p == '-') {
			p++;
			if (parse_uint(&p, &b) || b < a)
				return -TACHO_EPARSE;
		}
		for (unsigned long c = a; c <= b; c++) {
			err = fn(arg, (int)c);
			if (err)
				return err;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		while (*p == '\n' || *p == ' ' || *p == '\t')
			p++;
		return *p == '\0' ? 0 : -TACHO_EPARSE;
	}
}

struct count_arg {
	unsigned count;
	int first;
};

static int count_one(void *arg, int cpu)
{
	struct count_arg *c = arg;

	if (c->first < 0 || cpu < c->first)
		c->first = cpu;
	c->count++;
	return 0;
}

int tc_cpu_list_count(const char *s, unsigned *count, int *first)
{
	struct count_arg c = { 0, -1 };
	int err = tc_cpu_list_parse(s, count_one, &c);

	if (err)
		return err;
	*count = c.count;
	*first = c.first;
	return 0;
}

/* --- /proc/cpuinfo --- */

char *tc_cpuinfo_field(const char *text, size_t len, const char *key)
{
	size_t klen = strlen(key);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q;

		if (!eol)
			eol = end;
		/* a blank line ends the first processor's block */
		if (eol == p && p != text)
			return NULL;
		if ((size_t)(eol - p) > klen && memcmp(p, key, klen) == 0) {
			q = p + klen;
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (q < eol && *q == ':') {
				q++;
				while (q < eol && (*q == ' ' || *q == '\t'))
					q++;
				const char *e = eol;
				while (e > q && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
					e--;
				return tc_strndup(q, (size_t)(e - q));
			}
		}
		p = eol + 1;
	}
	return NULL;
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
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return 0;
	while (isdigit((unsigned char)*p)) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*p++ - '0');
	}
	switch (*p) {
	case 'K': case 'k': v <<= 10; p++; break;
	case 'M': case 'm': v <<= 20; p++; break;
	case 'G': case 'g': v <<= 30; p++; break;
	default: break;
	}
	return *p == '\0' ? v : 0;
}

static void read_cache(struct reader *r, int cpu, unsigned idx, struct tacho_sysfs_cache *c)
{
	char buf[4096];
	const char *dir = "/sys/devices/system/cpu/cpu%d/cache/index%u/%s";

	memset(c, 0, sizeof(*c));
	c->shared_first = -1;
	c->level = read_uint(r, rpath(r, dir, cpu, idx, "level"));
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
	    tc_cpu_list_count(buf, &c->shared_cpus, &c->shared_first) != 0) {
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
		if (tc_cpu_list_count(buf, &c->core_threads, &c->core_first) != 0) {
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

struct online_arg {
	struct tacho_sysfs_cpu *cpus;
	unsigned n, alloc;
};

static int add_online(void *arg, int cpu)
{
	struct online_arg *o = arg;

	if (o->n == o->alloc) {
		unsigned a = o->alloc ? o->alloc * 2 : 16;
		struct tacho_sysfs_cpu *p = realloc(o->cpus, a * sizeof(*p));
		if (!p)
			return -ENOMEM;
		o->cpus = p;
		o->alloc = a;
	}
	memset(&o->cpus[o->n], 0, sizeof(o->cpus[0]));
	o->cpus[o->n++].cpu = cpu;
	return 0;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct tacho_sysfs_cpu *x = a, *y = b;

	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
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

struct pmu_arg {
	struct tacho_cpu_sysfs *sys;
	const char *pmu;
};

static int mark_pmu(void *arg, int cpu)
{
	struct pmu_arg *a = arg;
	struct tacho_sysfs_cpu *c = find_cpu(a->sys, cpu);

	if (c)
		snprintf(c->pmu, sizeof(c->pmu), "%s", a->pmu);
	return 0;
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
	struct online_arg o = { NULL, 0, 0 };
	struct tacho_cpu_sysfs *s;
	char *text = NULL;
	size_t len;
	int err;

	*out = NULL;
	err = tc_read_file(rpath(&r, "/sys/devices/system/cpu/online"), &text, &len, 1 << 20);
	if (err)
		return err;
	err = tc_cpu_list_parse(text, add_online, &o);
	free(text);
	text = NULL;
	if (!err && o.n == 0)
		err = -TACHO_EPARSE;   /* the CPU reading this is online: an empty list is wrong */
	if (err) {
		free(o.cpus);
		return err;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(o.cpus);
		return -ENOMEM;
	}
	qsort(o.cpus, o.n, sizeof(o.cpus[0]), cmp_cpu);
	s->cpus = o.cpus;
	for (unsigned i = 0; i < o.n; i++)    /* "0,0-1" names CPU 0 twice: keep one */
		if (s->ncpus == 0 || s->cpus[s->ncpus - 1].cpu != o.cpus[i].cpu)
			s->cpus[s->ncpus++] = o.cpus[i];
	for (unsigned i = 0; i < s->ncpus; i++)
		read_cpu(&r, &s->cpus[i]);

	/* Hybrid Intel parts have one core PMU per kind of core, each listing its CPUs
	 * (perf's pmu-events: cpu_core for P-cores, cpu_atom for E-cores). */
	static const char *const pmus[] = { "cpu_core", "cpu_atom", "cpu_lowpower" };
	for (size_t i = 0; i < ARRAY_SIZE(pmus); i++) {
		struct pmu_arg a = { s, pmus[i] };
		if (tc_read_file(rpath(&r, "/sys/devices/%s/cpus", pmus[i]), &text, &len,
				 1 << 20) == 0) {
			if (tc_cpu_list_parse(text, mark_pmu, &a) != 0)
				tc_log(TACHO_LOG_WARN, "%s: not a CPU list", r.path);
			free(text);
			text = NULL;
		}
	}

	s->packages = count_distinct(s, key_package);
	s->dies = count_distinct(s, key_die);
	s->cores = count_distinct(s, key_core);

	if (tc_read_file(rpath(&r, "/proc/cpuinfo"), &text, &len, 64 << 20) == 0) {
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

void tacho_cpu_crosscheck_exit(struct tacho_cpu_crosscheck *x)
{
	if (!x)
		return;
	free(x->items);
	x->items = NULL;
	x->n = x->checked = 0;
}
