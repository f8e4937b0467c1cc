/* cache-groups.c - caches grouped by the CPUs that report them: the decoder describes a
 * kind of core by its first CPU's leaves, but the CPUs of one kind need not agree (a
 * Ryzen 9 7950X3D's two CCDs report a 96 MiB and a 32 MiB L3 in 0x8000_001D). Each CPU's
 * cache leaves are decoded and compared; a kind whose CPUs differ gets one group per
 * distinct set of caches, with instances counted among the group's own CPUs. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuid.h"
#include "cpu/decode.h"
#include "tacho/cpu.h"

static bool same_cache(const struct tacho_cpu_cache *a, const struct tacho_cpu_cache *b)
{
	return a->level == b->level && a->type == b->type && a->size == b->size &&
	       a->ways == b->ways && a->fully_assoc == b->fully_assoc &&
	       a->line_size == b->line_size && a->partitions == b->partitions &&
	       a->sets == b->sets && a->sharing == b->sharing && a->source == b->source &&
	       a->descriptor == b->descriptor;
}

static bool same_caches(const struct tacho_cpu_cache *a, unsigned na,
			const struct tacho_cpu_cache *b, unsigned nb)
{
	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (!same_cache(&a[i], &b[i]))
			return false;
	return true;
}

static bool in_set(const uint64_t *set, unsigned cpu)
{
	return cpu < TACHO_CPU_SET_WORDS * 64 && (set[cpu / 64] >> (cpu % 64)) & 1;
}

/* Instances of cache c among the group's CPUs in the package of its first CPU: the
 * distinct cache IDs (APIC ID >> ceil(log2(sharing))), as tc_cpu_cache_instances
 * counts them for a whole kind. -1 when the dump lacks CPUs of the package or the
 * cache does not say who shares it. */
static int group_instances(const struct tacho_cpu_info *info, const struct tacho_cpu_cache_group *g,
			   const struct tacho_cpu_cache *c)
{
	unsigned shift, pkg = info->cpus[g->first_cpu].package, nids = 0;
	uint32_t ids[1024];

	if (!c->sharing || !info->topo.complete)
		return -1;
	shift = tc_ceil_log2(c->sharing);
	for (unsigned j = 0; j < info->ncpus; j++) {
		uint32_t id = info->cpus[j].apic_id >> shift;
		bool seen = false;

		if (!in_set(g->cpus, j) || info->cpus[j].package != pkg)
			continue;
		for (unsigned m = 0; m < nids && !seen; m++)
			seen = ids[m] == id;
		if (!seen && nids < ARRAY_SIZE(ids))
			ids[nids++] = id;
	}
	return (int)nids;
}

void tc_cpu_cache_groups(const struct tacho_cpuid_dump *d, struct tacho_cpu_info *info)
{
	struct tacho_cpu_core_type *scratch = malloc(sizeof(*scratch));
	bool full = false;

	if (!scratch) {
		info->notes_dropped++;   /* the decode fails with -ENOMEM */
		return;
	}
	for (unsigned k = 0; k < info->ncore_types; k++) {
		struct tacho_cpu_core_type *ct = &info->core_types[k];
		unsigned first = info->ncache_groups;

		for (unsigned j = 0; j < info->ncpus && j < TACHO_CPU_SET_WORDS * 64; j++) {
			const struct tacho_cpu_cache *caches = ct->caches;
			unsigned ncaches = ct->ncaches, g;

			if (info->cpus[j].core_type != k)
				continue;
			if (j != ct->first_cpu) {
				memset(scratch, 0, sizeof(*scratch));
				scratch->kind = ct->kind;
				tc_cpu_caches(d, j, info, scratch);
				caches = scratch->caches;
				ncaches = scratch->ncaches;
			}
			for (g = first; g < info->ncache_groups; g++)
				if (same_caches(info->cache_groups[g].caches,
						info->cache_groups[g].ncaches, caches, ncaches))
					break;
			if (g == info->ncache_groups) {
				struct tacho_cpu_cache_group *n = &info->cache_groups[g];

				if (g == TACHO_CPU_MAX_CACHE_GROUPS) {
					full = true;
					continue;
				}
				memset(n, 0, sizeof(*n));
				n->core_type = k;
				n->first_cpu = j;
				n->ncaches = ncaches;
				memcpy(n->caches, caches, ncaches * sizeof(caches[0]));
				info->ncache_groups++;
			}
			info->cache_groups[g].cpus[j / 64] |= 1ull << (j % 64);
			info->cache_groups[g].ncpus++;
		}
		/* one group is the kind itself: nothing to add */
		if (info->ncache_groups == first + 1) {
			info->ncache_groups = first;
			memset(&info->cache_groups[first], 0, sizeof(info->cache_groups[first]));
			continue;
		}
		for (unsigned g = first; g < info->ncache_groups; g++) {
			struct tacho_cpu_cache_group *grp = &info->cache_groups[g];

			for (unsigned i = 0; i < grp->ncaches; i++)
				grp->caches[i].instances = group_instances(info, grp, &grp->caches[i]);
		}
		/* The kind's caches are its first CPU's: one that every group reports keeps
		 * the kind's count, one that differs gets its group's. */
		for (unsigned i = 0; i < ct->ncaches; i++) {
			bool everywhere = true;

			for (unsigned g = first + 1; g < info->ncache_groups && everywhere; g++) {
				const struct tacho_cpu_cache_group *grp = &info->cache_groups[g];
				bool found = false;

				for (unsigned m = 0; m < grp->ncaches && !found; m++)
					found = same_cache(&grp->caches[m], &ct->caches[i]);
				everywhere = found;
			}
			if (!everywhere)
				ct->caches[i].instances = info->cache_groups[first].caches[i].instances;
		}
	}
	if (full)
		tc_cpu_note(info, "the CPUs report more than %d different sets of caches: the "
			    "CPUs of the sets past those are not in any cache group",
			    TACHO_CPU_MAX_CACHE_GROUPS);
	free(scratch);
}

const struct tacho_cpu_cache *tacho_cpu_caches_of(const struct tacho_cpu_info *info, unsigned cpu,
						  unsigned *n)
{
	const struct tacho_cpu_core_type *ct;

	if (n)
		*n = 0;
	if (!info || !n || info->sz < TC_CPU_INFO_SZ_V1 || cpu >= info->ncpus || !info->cpus)
		return NULL;
	if (info->sz >= TC_CPU_INFO_SZ_GROUPS)
		for (unsigned g = 0; g < info->ncache_groups && g < TACHO_CPU_MAX_CACHE_GROUPS; g++)
			if (in_set(info->cache_groups[g].cpus, cpu)) {
				*n = info->cache_groups[g].ncaches;
				return info->cache_groups[g].caches;
			}
	if (info->cpus[cpu].core_type >= info->ncore_types)
		return NULL;
	ct = &info->core_types[info->cpus[cpu].core_type];
	*n = ct->ncaches;
	return ct->caches;
}
