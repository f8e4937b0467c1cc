/* set.c - sets of register values: what was read on each CPU, what was written and read
 * back, or a value given by hand; each entry keeps its error explained, so that the
 * writers can say per CPU what went wrong. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "msr/msr.h"

int tacho_msr_set_new(unsigned flags, struct tacho_msr_set **out)
{
	struct tacho_msr_set *set;

	if (!out)
		return -EINVAL;
	set = calloc(1, sizeof(*set));
	if (!set)
		return -ENOMEM;
	set->flags = flags;
	*out = set;
	return 0;
}

void tacho_msr_set_free(struct tacho_msr_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++) {
		free(set->v[i].label);
		free(set->v[i].why);
	}
	free(set->v);
	free(set);
}

struct tc_msr_entry *tc_msr_set_push(struct tacho_msr_set *set, int cpu,
				     const struct tacho_msr *m, uint32_t address)
{
	struct tc_msr_entry *e;

	if (set->n == set->alloc) {
		size_t na = set->alloc ? 2 * set->alloc : 16;
		struct tc_msr_entry *nv = realloc(set->v, na * sizeof(*nv));
		if (!nv)
			return NULL;
		set->v = nv;
		set->alloc = na;
	}
	e = &set->v[set->n++];
	memset(e, 0, sizeof(*e));
	e->cpu = cpu;
	e->msr = m;
	e->address = address;
	return e;
}

int tc_msr_entry_failf(struct tc_msr_entry *e, int err, enum tacho_hint hint, const char *fmt,
		       ...)
{
	char buf[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	e->err = err;
	e->hint = hint;
	free(e->why);
	e->why = tc_strdup(buf);
	return e->why ? 0 : -ENOMEM;
}

int tc_msr_entry_fail(struct tacho_msr_dev *dev, struct tc_msr_entry *e, int err, bool write)
{
	char buf[768];
	enum tacho_hint hint;

	tacho_msr_explain(dev, err, e->cpu, e->msr, e->address, write, buf, sizeof(buf), &hint);
	return tc_msr_entry_failf(e, err, hint, "%s", buf);
}

int tacho_msr_set_add(struct tacho_msr_set *set, int cpu, const struct tacho_msr *m,
		      uint32_t address, uint64_t value, const char *label)
{
	struct tc_msr_entry *e;

	if (!set || cpu < -1 || (m && m->address != address))
		return -EINVAL;
	e = tc_msr_set_push(set, cpu, m, address);
	if (!e)
		return -ENOMEM;
	e->value = value;
	e->has_value = true;
	if (label) {
		e->label = tc_strdup(label);
		if (!e->label) {
			set->n--;
			return -ENOMEM;
		}
	}
	return 0;
}

int tacho_msr_set_rdmsr(struct tacho_msr_set *set, struct tacho_msr_dev *dev,
			const struct tacho_msr *m, uint32_t address, const int *cpus, size_t n)
{
	int first = 0;

	if (!set || !dev || (n && !cpus) || (m && m->address != address))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		struct tc_msr_entry *e = tc_msr_set_push(set, cpus[i], m, address);
		int err;

		if (!e)
			return -ENOMEM;
		err = tacho_msr_rdmsr(dev, cpus[i], address, &e->value);
		e->has_value = !err;
		if (err) {
			if (tc_msr_entry_fail(dev, e, err, false))
				return -ENOMEM;
			if (!first)
				first = err;
		}
	}
	return first;
}

int tacho_msr_set_wrmsr(struct tacho_msr_set *set, struct tacho_msr_dev *dev,
			const struct tacho_msr *m, const int *cpus, size_t n, const char *text,
			unsigned flags, struct tacho_diag *diag)
{
	uint64_t *before = NULL, *after = NULL;
	int err = 0;

	if (!set || !dev || !m || !text || (n && !cpus) || tc_diag_check(diag))
		return -EINVAL;
	if (!m->writable)
		return -TACHO_ENOWRITE;
	if (!tacho_msr_applies(m, &dev->cpu))
		return -TACHO_EMSRCPU;
	before = calloc(n ? n : 1, sizeof(*before));
	after = calloc(n ? n : 1, sizeof(*after));
	if (!before || !after) {
		err = -ENOMEM;
		goto out;
	}
	/* every CPU's new value first: a bad text or a failed read writes nothing */
	for (size_t i = 0; i < n; i++) {
		err = tacho_msr_rdmsr(dev, cpus[i], m->address, &before[i]);
		if (err) {
			struct tc_msr_entry *e = tc_msr_set_push(set, cpus[i], m, m->address);
			if (!e || tc_msr_entry_fail(dev, e, err, false))
				err = -ENOMEM;
			goto out;
		}
		err = tacho_msr_assign(m, before[i], text, &after[i], diag);
		if (!err && (after[i] & ~tc_msr_fields_mask(m)) && m->rest_reserved)
			err = tc_diag_set(diag, text, 0, 1, -TACHO_EOUTOFRANGE, "the value 0x%llx would "
					  "set bits %s reserves", (unsigned long long)after[i],
					  m->name);
		if (err)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct tc_msr_entry *e = tc_msr_set_push(set, cpus[i], m, m->address);

		if (!e) {
			err = -ENOMEM;
			goto out;
		}
		e->wrote = true;
		e->before = e->value = before[i];
		e->has_value = true;
		e->written_value = after[i];
		if (!(flags & TACHO_MSR_FORCE)) {
			/* what would be written, for each CPU; nothing is */
			if (tc_msr_entry_fail(dev, e, -TACHO_ENOFORCE, true)) {
				err = -ENOMEM;
				goto out;
			}
			continue;
		}
		err = tacho_msr_wrmsr(dev, cpus[i], m, after[i], flags);
		if (err) {
			if (tc_msr_entry_fail(dev, e, err, true))
				err = -ENOMEM;
			goto out;
		}
		e->written = true;
		/* what the CPU kept: a counter written through IA32_PMCx keeps bits 31:0
		 * sign-extended; read-only bits keep their value */
		err = tacho_msr_rdmsr(dev, cpus[i], m->address, &e->value);
		e->has_value = !err;
		if (err) {
			if (tc_msr_entry_fail(dev, e, err, false))
				err = -ENOMEM;
			goto out;
		}
	}
	err = flags & TACHO_MSR_FORCE ? 0 : -TACHO_ENOFORCE;
out:
	free(before);
	free(after);
	return err;
}

size_t tacho_msr_set_count(const struct tacho_msr_set *set)
{
	return set ? set->n : 0;
}

/* The first version of struct tacho_msr_entry ends at written_value: a caller's sz
 * below it is refused. */
#define ENTRY_SZ_V1 tc_offsetofend(struct tacho_msr_entry, written_value)

int tacho_msr_set_entry(const struct tacho_msr_set *set, size_t i, struct tacho_msr_entry *out)
{
	struct tacho_msr_entry pub;
	const struct tc_msr_entry *e;
	size_t sz;

	if (!set || i >= set->n || !out || out->sz < ENTRY_SZ_V1)
		return -EINVAL;
	e = &set->v[i];
	sz = out->sz < sizeof(pub) ? out->sz : sizeof(pub);
	memset(&pub, 0, sizeof(pub));
	pub.sz = out->sz;
	pub.cpu = e->cpu;
	pub.label = e->label;
	pub.msr = e->msr;
	pub.address = e->address;
	pub.err = e->err;
	pub.why = e->err ? e->why : NULL;
	pub.hint = e->hint;
	pub.has_value = e->has_value;
	pub.value = e->value;
	pub.wrote = e->wrote;
	pub.written = e->written;
	pub.before = e->before;
	pub.written_value = e->written_value;
	memcpy(out, &pub, sz);
	return 0;
}
