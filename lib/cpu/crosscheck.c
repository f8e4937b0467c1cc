/* crosscheck.c - the kernel's view of the CPUs (sysfs.c) held against what CPUID says
 * (decode.c): threads, packages, cores, hybrid kinds, the core PMU, feature flags and
 * every cache, each value compared only where both sides know it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuid.h"
#include "util/util.h"
#include "tacho/cpu.h"

void tacho_cpu_crosscheck_exit(struct tacho_cpu_crosscheck *x)
{
	if (!x || x->sz < TC_CPU_CROSSCHECK_SZ_V1)
		return;
	free(x->items);
	x->items = NULL;
	x->n = x->checked = 0;
}

static int add_item(struct tacho_cpu_crosscheck *x, const char *what, const char *fmt, ...)
	TC_PRINTF(3, 4);
static int add_item(struct tacho_cpu_crosscheck *x, const char *what, const char *fmt, ...)
{
	struct tacho_cpu_disagreement *p, *d;
	va_list ap;

	p = realloc(x->items, (x->n + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	x->items = p;
	d = &p[x->n++];
	snprintf(d->what, sizeof(d->what), "%s", what);
	va_start(ap, fmt);
	vsnprintf(d->text, sizeof(d->text), fmt, ap);
	va_end(ap);
	return 0;
}

/* "L1d", "L1i", "L2", "L3" as people say them. */
static void cache_label(unsigned level, const char *type, char *buf, size_t size)
{
	if (!strcmp(type, "data"))
		snprintf(buf, size, "L%ud", level);
	else if (!strcmp(type, "instruction"))
		snprintf(buf, size, "L%ui", level);
	else
		snprintf(buf, size, "L%u", level);
}

static void describe_cpuid_cache(const struct tacho_cpu_cache *c, struct tc_sb *sb)
{
	char size[32];

	tc_sb_adds(sb, c->size ? tc_fmt_size(c->size, size, sizeof(size)) : "an unknown size");
	if (c->fully_assoc)
		tc_sb_adds(sb, ", fully associative");
	else if (c->ways)
		tc_sb_addf(sb, ", %u ways", c->ways);
	else
		tc_sb_adds(sb, ", ways unknown");
	if (c->line_size)
		tc_sb_addf(sb, ", %u-byte lines", c->line_size);
	if (c->sharing)
		tc_sb_addf(sb, ", shared by up to %u thread%s", c->sharing, c->sharing == 1 ? "" : "s");
}

static void describe_sysfs_cache(const struct tacho_sysfs_cache *k, struct tc_sb *sb)
{
	char size[32];

	tc_sb_adds(sb, k->size_bytes ? tc_fmt_size(k->size_bytes, size, sizeof(size))
				     : "an unknown size");
	if (k->ways)
		tc_sb_addf(sb, ", %u ways", k->ways);
	if (k->line_bytes)
		tc_sb_addf(sb, ", %u-byte lines", k->line_bytes);
	if (k->shared_cpus)
		tc_sb_addf(sb, ", shared by %u CPU%s", k->shared_cpus, k->shared_cpus == 1 ? "" : "s");
}

static const struct tacho_sysfs_cache *sysfs_cache(const struct tacho_sysfs_cpu *c,
						   unsigned level, const char *type)
{
	for (unsigned i = 0; i < c->ncaches; i++)
		if (c->caches[i].level == level && !strcmp(c->caches[i].type, type))
			return &c->caches[i];
	return NULL;
}

/* The sysfs CPU that stands for core type k: the OS CPU of the dump's first CPU of that
 * kind; on a part with one kind and a dump that does not know OS numbers, any CPU. */
static const struct tacho_sysfs_cpu *representative(const struct tacho_cpu_info *info,
						    const struct tacho_cpu_sysfs *sys, unsigned k)
{
	const struct tacho_cpu_core_type *ct = &info->core_types[k];

	if (info->cpus && ct->first_cpu < info->ncpus && info->cpus[ct->first_cpu].os_cpu >= 0)
		return tacho_cpu_sysfs_cpu(sys, info->cpus[ct->first_cpu].os_cpu);
	return info->ncore_types == 1 && sys->ncpus ? &sys->cpus[0] : NULL;
}

static int check_caches(const struct tacho_cpu_info *info, const struct tacho_cpu_sysfs *sys,
			unsigned k, struct tacho_cpu_crosscheck *x)
{
	const struct tacho_cpu_core_type *ct = &info->core_types[k];
	const struct tacho_sysfs_cpu *sc = representative(info, sys, k);
	char label[16], kind[48] = "";
	bool seen[TACHO_SYSFS_MAX_CACHES] = { false };
	int err = 0;

	if (!sc)
		return 0;
	if (info->ncore_types > 1)
		snprintf(kind, sizeof(kind), " (%s cores, CPU %d)",
			 tacho_core_kind_name(ct->kind), sc->cpu);
	for (unsigned i = 0; i < ct->ncaches && !err; i++) {
		const struct tacho_cpu_cache *c = &ct->caches[i];
		const char *type = tacho_cache_type_name(c->type);
		const struct tacho_sysfs_cache *kc = sysfs_cache(sc, c->level, type);
		struct tc_sb sb = TC_SB_INIT;
		bool differ = false;

		cache_label(c->level, type, label, sizeof(label));
		if (!kc) {
			x->checked++;
			tc_sb_init(&sb);
			tc_sb_addf(&sb, "%s%s: CPUID says ", label, kind);
			describe_cpuid_cache(c, &sb);
			tc_sb_adds(&sb, "; the kernel lists no such cache");
			err = sb.oom ? -ENOMEM : add_item(x, label, "%s", sb.buf);
			tc_sb_exit(&sb);
			continue;
		}
		seen[kc - sc->caches] = true;
		/* Each value is compared only where both sides know it. The kernel reads
		 * the same leaves on x86 but its sharing counts only CPUs that are online,
		 * and CPUID's sharing (leaf 4 EAX[25:14], 0x8000_001D EAX[25:14]) is an upper
		 * bound on addressable IDs, so only a kernel count above it disagrees. */
		if (c->size && kc->size_bytes) {
			x->checked++;
			differ |= c->size != kc->size_bytes;
		}
		if (c->ways && kc->ways && !c->fully_assoc) {
			x->checked++;
			differ |= c->ways != kc->ways;
		}
		/* Ways CPUID leaves unknown (0x8000_0006's code 9, "see 0x8000_001D", with
		 * that leaf empty) are no agreement with a kernel that gives them: it read
		 * them somewhere CPUID, as tacho reads it here, does not say. */
		if (!c->ways && !c->fully_assoc && kc->ways) {
			x->checked++;
			differ = true;
		}
		if (c->line_size && kc->line_bytes) {
			x->checked++;
			differ |= c->line_size != kc->line_bytes;
		}
		if (c->sharing && kc->shared_cpus) {
			x->checked++;
			differ |= kc->shared_cpus > c->sharing;
		}
		if (!differ)
			continue;
		tc_sb_init(&sb);
		tc_sb_addf(&sb, "%s%s: CPUID says ", label, kind);
		describe_cpuid_cache(c, &sb);
		tc_sb_adds(&sb, "; the kernel says ");
		describe_sysfs_cache(kc, &sb);
		err = sb.oom ? -ENOMEM : add_item(x, label, "%s", sb.buf);
		tc_sb_exit(&sb);
	}
	for (unsigned i = 0; i < sc->ncaches && !err; i++) {
		struct tc_sb sb = TC_SB_INIT;

		if (seen[i] || !sc->caches[i].level)
			continue;
		x->checked++;
		cache_label(sc->caches[i].level, sc->caches[i].type, label, sizeof(label));
		tc_sb_init(&sb);
		tc_sb_addf(&sb, "%s%s: the kernel lists ", label, kind);
		describe_sysfs_cache(&sc->caches[i], &sb);
		tc_sb_adds(&sb, "; CPUID reports no such cache");
		err = sb.oom ? -ENOMEM : add_item(x, label, "%s", sb.buf);
		tc_sb_exit(&sb);
	}
	return err;
}

/* Distinct (package, die, core) triples among the dump's CPUs. */
static unsigned dump_cores(const struct tacho_cpu_info *info)
{
	unsigned n = 0;

	for (unsigned i = 0; i < info->ncpus; i++) {
		const struct tacho_cpu_logical *a = &info->cpus[i];
		bool seen = false;
		for (unsigned j = 0; j < i && !seen; j++) {
			const struct tacho_cpu_logical *b = &info->cpus[j];
			seen = a->package == b->package && a->die == b->die && a->core == b->core;
		}
		n += !seen;
	}
	return n;
}

/* Which core PMU the kernel would list a CPU of this kind under. */
static const char *kind_pmu(enum tacho_core_kind k)
{
	switch (k) {
	case TACHO_CORE_PERFORMANCE: return "cpu_core";
	case TACHO_CORE_EFFICIENCY:
	case TACHO_CORE_LP_EFFICIENCY: return "cpu_atom";
	default: return "";
	}
}

static int check_topology(const struct tacho_cpu_info *info, const struct tacho_cpu_sysfs *sys,
			  struct tacho_cpu_crosscheck *x)
{
	int err = 0;

	/* The live dump reads every online CPU, so these count the same CPUs. */
	x->checked++;
	if (info->ncpus != sys->ncpus)
		err = add_item(x, "threads", "logical CPUs: CPUID was read on %u, the kernel has %u online",
			       info->ncpus, sys->ncpus);
	if (!err && info->topo.packages && sys->packages) {
		x->checked++;
		if (info->topo.packages != sys->packages)
			err = add_item(x, "packages", "packages: CPUID's APIC IDs give %u, the kernel says %u",
				       info->topo.packages, sys->packages);
	}
	if (!err && info->ncpus && info->cpus && sys->cores) {
		unsigned n = dump_cores(info);
		x->checked++;
		if (n != sys->cores)
			err = add_item(x, "cores", "cores: CPUID's APIC IDs give %u, the kernel counts %u",
				       n, sys->cores);
	}
	/* What CPUID declares a package to hold against what the kernel brought up: a
	 * hypervisor may declare more than it gives, or CPUs may be offline. */
	if (!err && info->topo.logical_per_package && sys->packages == 1) {
		x->checked++;
		if (info->topo.logical_per_package != sys->ncpus)
			err = add_item(x, "threads per package",
				       "threads per package: CPUID declares %u, the kernel has %u online",
				       info->topo.logical_per_package, sys->ncpus);
	}
	/* Hybrid parts: the kernel lists each CPU under the core PMU of its kind. */
	if (!err && info->cpus) {
		unsigned compared = 0, wrong = 0;
		int first_wrong = -1;
		const char *said = "", *kernel = "";
		for (unsigned i = 0; i < info->ncpus; i++) {
			const struct tacho_sysfs_cpu *sc = info->cpus[i].os_cpu >= 0 ?
				tacho_cpu_sysfs_cpu(sys, info->cpus[i].os_cpu) : NULL;
			unsigned t = info->cpus[i].core_type;
			const char *want;
			if (!sc || t >= info->ncore_types)
				continue;
			want = info->ncore_types > 1 ? kind_pmu(info->core_types[t].kind) : "";
			compared++;
			if (strcmp(want, sc->pmu) != 0) {
				if (!wrong++) {
					first_wrong = sc->cpu;
					said = tacho_core_kind_name(info->core_types[t].kind);
					kernel = sc->pmu[0] ? sc->pmu : "no hybrid PMU";
				}
			}
		}
		if (compared) {
			x->checked++;
			if (wrong)
				err = add_item(x, "core types",
					       "core types: CPUID calls CPU %d %s, the kernel lists it under %s (%u of %u CPUs differ)",
					       first_wrong, said, kernel, wrong, compared);
		}
	}
	return err;
}

/* CPUID's performance monitoring against the kernel's core PMU. */
static int check_pmu(const struct tacho_cpu_info *info, const struct tacho_cpu_sysfs *sys,
		     struct tacho_cpu_crosscheck *x)
{
	const struct tacho_cpu_pmu *p = &info->pmu;
	bool amd = info->vendor == TACHO_VENDOR_AMD || info->vendor == TACHO_VENDOR_HYGON;
	/* AMD's four legacy counters have no CPUID bit (APM Vol. 2, 13.2); only
	 * PerfCtrExtCore (0x8000_0001 ECX[23]) and PerfMonV2 announce counters there. */
	bool cpuid_has = p->version > 0 || p->amd_perfmon_v2 ||
			 (amd && tacho_cpu_has(info, "perfctr_core"));

	/* Only a positive answer from CPUID can be held against the kernel on AMD. */
	if (sys->core_pmu < 0 || (!cpuid_has && amd))
		return 0;
	x->checked++;
	if (cpuid_has && sys->core_pmu == 0)
		return add_item(x, "pmu", "PMU: CPUID reports performance monitoring (leaf 0xA "
				"version %u, %u general counters), but the kernel registered no "
				"core PMU", p->version, p->gp_counters);
	if (!cpuid_has && sys->core_pmu == 1)
		return add_item(x, "pmu", "PMU: CPUID leaf 0xA reports no performance monitoring, "
				"but the kernel registered a core PMU");
	return 0;
}

/* A word of the flags line */
struct word {
	const char *p;
	size_t n;
};

static int word_cmp(const void *a, const void *b)
{
	const struct word *x = a, *y = b;
	int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);

	return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* The words of flags, sorted (malloc'd; *n of them), so that each of tacho's names is a
 * binary search: a scan of the line for each took half of tacho cpu's instructions. */
static struct word *flag_words(const char *flags, size_t *n)
{
	size_t cap = 1, k = 0;
	struct word *w;

	for (const char *p = flags; *p; p++)
		cap += *p == ' ' || *p == '\t' || *p == '\n';
	w = malloc(cap * sizeof(*w));
	if (!w)
		return NULL;
	for (const char *p = flags; *p;) {
		const char *b;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		b = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		if (p > b && k < cap)
			w[k++] = (struct word){ b, (size_t)(p - b) };
	}
	qsort(w, k, sizeof(*w), word_cmp);
	*n = k;
	return w;
}

/* tacho names its flags as /proc/cpuinfo does, so the lists compare word by word. The
 * kernel leaves out flags it hides on purpose (osxsave), it does not use, or it masks
 * (disabled by a boot option or a missing feature it depends on). */
static int check_features(const struct tacho_cpu_info *info, const struct tacho_cpu_sysfs *sys,
			  struct tacho_cpu_crosscheck *x)
{
	struct tc_sb missing = TC_SB_INIT, extra = TC_SB_INIT;
	unsigned nmissing = 0, nextra = 0, n = tacho_cpu_feature_count();
	struct word *words;
	size_t nwords;
	int err = 0;

	if (!sys->flags)
		return 0;
	words = flag_words(sys->flags, &nwords);
	if (!words)
		return -ENOMEM;
	tc_sb_init(&missing);
	tc_sb_init(&extra);
	for (unsigned i = 0; i < n; i++) {
		const char *name = tacho_cpu_feature_name(i);
		bool set = i / 64 < TACHO_CPU_FEATURE_WORDS && (info->features[i / 64] >> (i % 64)) & 1;
		bool listed;

		if (!name)
			continue;
		struct word key = { name, strlen(name) };
		listed = key.n && bsearch(&key, words, nwords, sizeof(*words), word_cmp);
		if (set && !listed) {
			tc_sb_addf(&missing, "%s%s", nmissing ? ", " : "", name);
			nmissing++;
		} else if (!set && listed) {
			tc_sb_addf(&extra, "%s%s", nextra ? ", " : "", name);
			nextra++;
		}
	}
	x->checked += 2;
	if (missing.oom || extra.oom)
		err = -ENOMEM;
	if (!err && nmissing)
		err = add_item(x, "features", "features: CPUID reports %u flag%s that /proc/cpuinfo does "
			       "not list (the kernel hides, masks or does not use them): %s",
			       nmissing, nmissing == 1 ? "" : "s", missing.buf);
	if (!err && nextra)
		err = add_item(x, "features", "features: /proc/cpuinfo lists %u flag%s that CPUID does "
			       "not report (the kernel set them itself): %s",
			       nextra, nextra == 1 ? "" : "s", extra.buf);
	tc_sb_exit(&missing);
	tc_sb_exit(&extra);
	free(words);
	return err;
}

int tacho_cpu_crosscheck(const struct tacho_cpu_info *info, const struct tacho_cpu_sysfs *sys,
			 struct tacho_cpu_crosscheck *caller)
{
	struct tacho_cpu_crosscheck x = { .sz = sizeof(x) }, *out = &x;
	int err;

	if (!info || !sys || !caller || info->sz < TC_CPU_INFO_SZ_V1 ||
	    caller->sz < TC_CPU_CROSSCHECK_SZ_V1)
		return -EINVAL;
	err = check_topology(info, sys, out);
	if (!err)
		err = check_pmu(info, sys, out);
	if (!err)
		err = check_features(info, sys, out);
	for (unsigned k = 0; k < info->ncore_types && !err; k++)
		err = check_caches(info, sys, k, out);
	if (err)
		tacho_cpu_crosscheck_exit(out);
	/* all of the first version, the items with it (nothing owned lies beyond) */
	tc_sized_put_sz(caller, out, sizeof(*out));
	return err;
}
