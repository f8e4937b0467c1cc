/* cpuid.c - the CPUID dump container: building, sorted lookup honouring maximum leaves,
 * and the `cpuid -r` writer. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuid.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"

struct tacho_cpuid_dump *tc_cpuid_dump_new(void)
{
	return calloc(1, sizeof(struct tacho_cpuid_dump));
}

void tacho_cpuid_dump_free(struct tacho_cpuid_dump *d)
{
	if (!d)
		return;
	for (unsigned i = 0; i < d->ncpus; i++)
		free(d->cpus[i].leaves);
	free(d->cpus);
	free(d);
}

int tc_cpuid_dump_add_cpu(struct tacho_cpuid_dump *d, int os_cpu)
{
	if (d->ncpus == d->alloc) {
		unsigned n = d->alloc ? d->alloc * 2 : 4;
		struct tc_cpuid_cpu *p = realloc(d->cpus, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		d->cpus = p;
		d->alloc = n;
	}
	memset(&d->cpus[d->ncpus], 0, sizeof(d->cpus[0]));
	d->cpus[d->ncpus].os_cpu = os_cpu;
	return (int)d->ncpus++;
}

bool tc_cpuid_leaf_indexed(uint32_t leaf)
{
	switch (leaf) {
	case 0x4: case 0x7: case 0xb: case 0xd: case 0xf: case 0x10: case 0x12: case 0x14:
	case 0x17: case 0x18: case 0x1b: case 0x1d: case 0x1e: case 0x1f: case 0x20:
	case 0x23: case 0x24:
	case 0x8000001d: case 0x80000020: case 0x80000026:
		return true;
	default:
		return false;
	}
}

int tc_cpuid_dump_set(struct tacho_cpuid_dump *d, unsigned idx, uint32_t leaf, uint32_t subleaf,
		      const struct tacho_cpuid_regs *r)
{
	struct tc_cpuid_cpu *c;

	if (idx >= d->ncpus)
		return -EINVAL;
	c = &d->cpus[idx];
	if (!tc_cpuid_leaf_indexed(leaf))
		subleaf = 0;
	/* Live reading and most dumps come in (leaf, subleaf) order: while they do, a key
	 * above the last one is new and the (linear) search for a duplicate is skipped. */
	if (c->n && !(!c->unsorted && (c->leaves[c->n - 1].leaf < leaf ||
				       (c->leaves[c->n - 1].leaf == leaf &&
					c->leaves[c->n - 1].subleaf < subleaf)))) {
		for (size_t i = 0; i < c->n; i++)
			if (c->leaves[i].leaf == leaf && c->leaves[i].subleaf == subleaf) {
				c->leaves[i].r = *r;
				return 0;
			}
		c->unsorted = true;
	}
	if (c->n == c->alloc) {
		size_t n = c->alloc ? c->alloc * 2 : 64;
		struct tc_cpuid_leaf *p = realloc(c->leaves, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->leaves = p;
		c->alloc = n;
	}
	c->leaves[c->n].leaf = leaf;
	c->leaves[c->n].subleaf = subleaf;
	c->leaves[c->n].r = *r;
	c->n++;
	return 0;
}

static int cmp_leaf(const void *a, const void *b)
{
	const struct tc_cpuid_leaf *x = a, *y = b;

	if (x->leaf != y->leaf)
		return x->leaf < y->leaf ? -1 : 1;
	if (x->subleaf != y->subleaf)
		return x->subleaf < y->subleaf ? -1 : 1;
	return 0;
}

int tc_cpuid_dump_finish(struct tacho_cpuid_dump *d)
{
	unsigned k = 0;

	for (unsigned i = 0; i < d->ncpus; i++) {
		if (d->cpus[i].n == 0) {
			free(d->cpus[i].leaves);
			continue;
		}
		qsort(d->cpus[i].leaves, d->cpus[i].n, sizeof(d->cpus[i].leaves[0]), cmp_leaf);
		d->cpus[i].unsorted = false;
		d->cpus[k++] = d->cpus[i];
	}
	d->ncpus = k;
	return k ? 0 : -TACHO_EEMPTY;
}

unsigned tacho_cpuid_dump_ncpus(const struct tacho_cpuid_dump *d)
{
	return d ? d->ncpus : 0;
}

int tacho_cpuid_dump_os_cpu(const struct tacho_cpuid_dump *d, unsigned idx)
{
	return d && idx < d->ncpus ? d->cpus[idx].os_cpu : -1;
}

int tacho_cpuid_dump_select(const struct tacho_cpuid_dump *d, int cpu,
			    struct tacho_cpuid_dump **out)
{
	const struct tc_cpuid_cpu *c = NULL;
	struct tacho_cpuid_dump *one;
	struct tc_cpuid_cpu *dst;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!d || cpu < 0)
		return -EINVAL;
	for (unsigned i = 0; i < d->ncpus && !c; i++)
		if ((d->cpus[i].os_cpu >= 0 ? d->cpus[i].os_cpu : (int)i) == cpu)
			c = &d->cpus[i];
	if (!c)
		return -ENOENT;
	one = tc_cpuid_dump_new();
	if (!one)
		return -ENOMEM;
	if (tc_cpuid_dump_add_cpu(one, c->os_cpu) < 0) {
		tacho_cpuid_dump_free(one);
		return -ENOMEM;
	}
	/* the leaves as they are: already sorted, each (leaf, subleaf) once */
	dst = &one->cpus[0];
	dst->leaves = malloc((c->n ? c->n : 1) * sizeof(*dst->leaves));
	if (!dst->leaves) {
		tacho_cpuid_dump_free(one);
		return -ENOMEM;
	}
	memcpy(dst->leaves, c->leaves, c->n * sizeof(*dst->leaves));
	dst->n = dst->alloc = c->n;
	dst->unsorted = c->unsorted;
	*out = one;
	return 0;
}

const struct tacho_cpuid_regs *tc_cpuid_raw(const struct tacho_cpuid_dump *d, unsigned idx,
					    uint32_t leaf, uint32_t subleaf)
{
	const struct tc_cpuid_cpu *c;
	struct tc_cpuid_leaf key = { .leaf = leaf, .subleaf = subleaf };
	const struct tc_cpuid_leaf *hit;

	if (!d || idx >= d->ncpus)
		return NULL;
	c = &d->cpus[idx];
	if (!tc_cpuid_leaf_indexed(leaf))
		key.subleaf = 0;
	hit = bsearch(&key, c->leaves, c->n, sizeof(c->leaves[0]), cmp_leaf);
	return hit ? &hit->r : NULL;
}

int tacho_cpuid_query(const struct tacho_cpuid_dump *d, unsigned idx, uint32_t leaf,
		      uint32_t subleaf, struct tacho_cpuid_regs *out)
{
	const struct tacho_cpuid_regs *r, *base;
	uint32_t range = leaf & 0xffff0000u;

	/* The hypervisor range is 0x4000_0000-0x4000_00FF (with 0x4000_0100 steps for
	 * several interfaces); its maximum is in EAX of the range's first leaf. */
	if (range == 0x40000000u)
		range = leaf & 0xffffff00u;
	base = tc_cpuid_raw(d, idx, range, 0);
	if (!base)
		return -TACHO_ENOVALUE;
	{
		uint32_t max = base->eax;
		/* A maximum outside its own range means the range does not exist (AMD and
		 * Intel answer leaves of an unknown range with the highest basic leaf), and
		 * then the range's first leaf is no answer either: `cpuid -r` probes
		 * 0x8086_0000 and 0xC000_0000 on every CPU. One exception: some hypervisors
		 * answer 0x4000_0000 with EAX = 0 and their signature in EBX-EDX, so that
		 * leaf stays readable when CPUID.1:ECX[31] says a hypervisor is there. */
		bool exists = (max & 0xffff0000u) == (range & 0xffff0000u) && max >= range;
		const struct tacho_cpuid_regs *l1 = tc_cpuid_raw(d, idx, 1, 0);
		if (!exists && leaf == 0x40000000u && range == leaf && max == 0 &&
		    l1 && (l1->ecx >> 31 & 1) && (base->ebx | base->ecx | base->edx))
			exists = true, max = range;
		if (!exists || leaf > max)
			return -TACHO_ENOVALUE;
	}
	r = tc_cpuid_raw(d, idx, leaf, subleaf);
	if (!r)
		return -TACHO_ENOVALUE;
	*out = *r;
	return 0;
}

int tacho_cpuid_dump_write_raw(const struct tacho_cpuid_dump *d, FILE *f)
{
	for (unsigned i = 0; i < d->ncpus; i++) {
		const struct tc_cpuid_cpu *c = &d->cpus[i];
		/* `cpuid -r -1` writes "CPU:" for a CPU it does not number; so does tacho,
		 * so that the dump reads back with the same (unknown) numbers. */
		if (c->os_cpu >= 0)
			fprintf(f, "CPU %d:\n", c->os_cpu);
		else
			fputs("CPU:\n", f);
		for (size_t k = 0; k < c->n; k++) {
			const struct tc_cpuid_leaf *l = &c->leaves[k];
			fprintf(f, "   0x%08" PRIx32 " 0x%02" PRIx32 ": eax=0x%08" PRIx32
				   " ebx=0x%08" PRIx32 " ecx=0x%08" PRIx32 " edx=0x%08" PRIx32 "\n",
				l->leaf, l->subleaf, l->r.eax, l->r.ebx, l->r.ecx, l->r.edx);
		}
	}
	return ferror(f) ? -EIO : 0;
}

bool tc_cpuid_exec(uint32_t leaf, uint32_t subleaf, struct tacho_cpuid_regs *out)
{
	uint32_t r[4];
	bool ok = tc_cpuid_insn(leaf, subleaf, r);

	*out = (struct tacho_cpuid_regs){ r[0], r[1], r[2], r[3] };
	return ok;
}
