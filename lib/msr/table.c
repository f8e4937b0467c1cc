/* table.c - the tables of table-*.c seen as one: enumeration, description, where a
 * register exists, finding one by name, alias or address (with the nearest names when
 * none fits), and the processor the registers are looked up for. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "cpu/cpuid.h"
#include "msr/msr.h"

/* The order of the whole table: what applies to most machines first, so that where a
 * name or an address fits registers of several CPUs and none applies, the modern one
 * wins. */
static const struct tc_msr_table *const tables[] = {
	&tc_msr_table_intel, &tc_msr_table_amd, &tc_msr_table_p6, &tc_msr_table_p5,
};

size_t tacho_msr_count(void)
{
	size_t n = 0;

	for (size_t t = 0; t < ARRAY_SIZE(tables); t++)
		n += tables[t]->n;
	return n;
}

const struct tacho_msr *tacho_msr_at(size_t i)
{
	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		if (i < tables[t]->n)
			return &tables[t]->v[i];
		i -= tables[t]->n;
	}
	return NULL;
}

const char *tacho_msr_scope_name(enum tacho_msr_scope s)
{
	static const char *const names[TACHO_MSR_SCOPE_COUNT] = {
		[TACHO_MSR_SCOPE_THREAD] = "thread",
		[TACHO_MSR_SCOPE_CORE] = "core",
		[TACHO_MSR_SCOPE_PACKAGE] = "package",
	};

	return (unsigned)s < TACHO_MSR_SCOPE_COUNT ? names[s] : "unknown";
}

const char *tacho_msr_access_name(enum tacho_msr_access a)
{
	static const char *const names[TACHO_MSR_ACCESS_COUNT] = {
		[TACHO_MSR_RO] = "read-only",
		[TACHO_MSR_RW] = "read-write",
	};

	return (unsigned)a < TACHO_MSR_ACCESS_COUNT ? names[a] : "unknown";
}

uint64_t tc_msr_fields_mask(const struct tacho_msr *m)
{
	uint64_t mask = 0;

	for (unsigned i = 0; i < m->nfields; i++)
		mask |= tc_msr_field_mask(&m->fields[i]);
	return mask;
}

/* The first versions of the sized structs end at these fields: a caller's sz below
 * them is refused (docs/architecture.md, "An API that can grow"). */
#define MSR_INFO_SZ_V1 tc_offsetofend(struct tacho_msr_info, undecoded)
#define FIELD_INFO_SZ_V1 tc_offsetofend(struct tacho_msr_field_info, desc)

int tacho_msr_describe(const struct tacho_msr *m, struct tacho_msr_info *out)
{
	struct tacho_msr_info info;
	size_t sz;

	if (!m || !out || out->sz < MSR_INFO_SZ_V1)
		return -EINVAL;
	sz = out->sz < sizeof(info) ? out->sz : sizeof(info);
	memset(&info, 0, sizeof(info));
	info.sz = out->sz;
	info.name = m->name;
	info.aliases = m->aliases ? m->aliases : "";
	info.address = m->address;
	info.scope = m->scope;
	info.access = m->access;
	info.writable = m->writable;
	info.not_writable = !m->writable && m->not_writable ? m->not_writable : "";
	info.cpus = m->cpus;
	info.desc = m->desc;
	info.source = m->source;
	info.nfields = m->nfields;
	if (m->rest_reserved)
		info.reserved = ~tc_msr_fields_mask(m);
	else
		info.undecoded = ~tc_msr_fields_mask(m);
	/* only what the caller's struct has room for: a newer caller's is larger */
	memcpy(out, &info, sz);
	return 0;
}

int tacho_msr_field_describe(const struct tacho_msr *m, unsigned i,
			     struct tacho_msr_field_info *out)
{
	struct tacho_msr_field_info fi;
	size_t sz;

	if (!m || !out || i >= m->nfields || out->sz < FIELD_INFO_SZ_V1)
		return -EINVAL;
	sz = out->sz < sizeof(fi) ? out->sz : sizeof(fi);
	fi.sz = out->sz;
	fi.name = m->fields[i].name;
	fi.lo = m->fields[i].lo;
	fi.hi = m->fields[i].hi;
	fi.desc = m->fields[i].desc;
	memcpy(out, &fi, sz);
	return 0;
}

bool tacho_msr_applies(const struct tacho_msr *m, const struct tacho_msr_cpu *cpu)
{
	uint32_t fm;

	if (!m || !cpu || cpu->vendor == TACHO_VENDOR_UNKNOWN ||
	    (unsigned)cpu->vendor >= TACHO_VENDOR_COUNT)
		return false;
	fm = TC_FM(cpu->family, cpu->model & 0xff);
	for (unsigned i = 0; i < m->where.n && i < ARRAY_SIZE(m->where.r); i++) {
		const struct tc_msr_range *r = &m->where.r[i];
		if ((r->vendors & TC_VENDOR(cpu->vendor)) && fm >= r->lo && fm <= r->hi)
			return true;
	}
	return false;
}

const char *tc_msr_name_of(const struct tc_msr_names *names, uint32_t key)
{
	size_t lo = 0, hi;

	if (!names)
		return NULL;
	hi = names->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (names->v[mid].key == key)
			return names->v[mid].text;
		if (names->v[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct tacho_msr *tc_msr_by_name(const char *name)
{
	for (size_t i = 0, n = tacho_msr_count(); i < n; i++) {
		const struct tacho_msr *m = tacho_msr_at(i);
		if (!strcmp(m->name, name))
			return m;
	}
	return NULL;
}

/* --- by name --- */

/* True when word (len bytes) is one of the comma-separated names of list, any case. */
static bool in_list(const char *list, const char *word, size_t len)
{
	while (list && *list) {
		size_t n = strcspn(list, ",");
		if (n == len && !strncasecmp(list, word, len))
			return true;
		list += n;
		list += *list == ',';
	}
	return false;
}

static bool named(const struct tacho_msr *m, const char *name)
{
	size_t len = strlen(name);

	return (strlen(m->name) == len && !strncasecmp(m->name, name, len)) ||
	       in_list(m->aliases, name, len);
}

unsigned tc_msr_distance(const char *a, const char *b, unsigned cap)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];

	/* names are short; a longer input is not a near miss of any */
	if (lb >= ARRAY_SIZE(row) || la >= 64)
		return cap + 1;
	if ((la > lb ? la - lb : lb - la) > cap)
		return cap + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0], best;
		row[0] = (unsigned)i;
		best = row[0];
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned sub = diag + (tolower((unsigned char)a[i - 1]) !=
					       tolower((unsigned char)b[j - 1]));
			unsigned v = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
			row[j] = sub < v ? sub : v;
			diag = up;
			if (row[j] < best)
				best = row[j];
		}
		if (best > cap)
			return cap + 1;
	}
	return row[lb];
}

/* The nearest names found so far, closest first. */
struct near {
	char name[64];
	unsigned d;
};

static void consider(struct near *best, size_t *nbest, size_t max, const char *cand, unsigned d)
{
	size_t k;

	for (k = 0; k < *nbest; k++)
		if (!strcasecmp(best[k].name, cand))
			return;
	k = *nbest < max ? (*nbest)++ : max;
	/* insertion into the sorted few; a full list drops its worst */
	while (k > 0 && best[k - 1].d > d) {
		if (k < max)
			best[k] = best[k - 1];
		k--;
	}
	if (k < max) {
		snprintf(best[k].name, sizeof(best[k].name), "%s", cand);
		best[k].d = d;
	}
}

/* Up to three names or aliases of the table nearest to name, closest first, as "A, B
 * or C" in buf; "" when none is near. */
static void nearest_names(const char *name, char *buf, size_t size)
{
	struct near best[3];
	size_t nbest = 0, len = strlen(name);
	/* a third of the name may be wrong, and two letters of a short one */
	unsigned cap = len / 3 > 2 ? (unsigned)(len / 3) : 2;

	for (size_t i = 0, n = tacho_msr_count(); i < n; i++) {
		const struct tacho_msr *m = tacho_msr_at(i);
		const char *list = m->aliases;
		unsigned d = tc_msr_distance(name, m->name, cap);

		if (d <= cap)
			consider(best, &nbest, ARRAY_SIZE(best), m->name, d);
		while (list && *list) {
			size_t an = strcspn(list, ",");
			char word[64];

			snprintf(word, sizeof(word), "%.*s", (int)an, list);
			d = tc_msr_distance(name, word, cap);
			if (d <= cap)
				consider(best, &nbest, ARRAY_SIZE(best), word, d);
			list += an;
			list += *list == ',';
		}
	}
	buf[0] = '\0';
	for (size_t k = 0, l = 0; k < nbest; k++) {
		int w = snprintf(buf + l, size - l, "%s%s",
				 k == 0 ? "" : k + 1 == nbest ? " or " : ", ", best[k].name);
		/* a list that does not fit ends with the names that did */
		if (w < 0 || (size_t)w >= size - l) {
			buf[l] = '\0';
			break;
		}
		l += (size_t)w;
	}
}

/* --- by address --- */

/* "0x186", "186h", "C001_0200h": 0 and *out, -TACHO_EPARSE, -TACHO_EOUTOFRANGE; 1 when spec
 * is not written as an address at all (a name). */
static int parse_address(const char *spec, uint32_t *out, struct tacho_diag *diag)
{
	size_t len = strlen(spec), start = 0, end = len, digits = 0;
	uint64_t v = 0;

	if (len >= 2 && spec[0] == '0' && (spec[1] == 'x' || spec[1] == 'X'))
		start = 2;
	else if (len > 1 && (spec[len - 1] == 'h' || spec[len - 1] == 'H') &&
		 isxdigit((unsigned char)spec[0]))
		end = len - 1;
	else if (len && isdigit((unsigned char)spec[0]) && strspn(spec, "0123456789") == len)
		return tc_diag_set(diag, spec, 0, 1, -TACHO_EPARSE, "'%s' could be decimal or hex: "
				   "write an address as 0x%s or %sh", spec, spec, spec);
	else
		return 1;
	for (size_t i = start; i < end; i++) {
		char c = spec[i];
		if (c == '_' && i > start && i + 1 < end && spec[i - 1] != '_')
			continue;
		if (!isxdigit((unsigned char)c)) {
			/* "CESRh" or "0xname" is not an address: a name then, if it was one */
			if (start == 0)
				return 1;
			return tc_diag_set(diag, spec, 0, (unsigned)i + 1, -TACHO_EPARSE,
					   "'%c' is not a hex digit in the address '%s'", c, spec);
		}
		v = v << 4 | (uint64_t)(isdigit((unsigned char)c) ? c - '0' :
					 tolower((unsigned char)c) - 'a' + 10);
		digits++;
		if (v > 0xffffffffull)
			return tc_diag_set(diag, spec, 0, 1, -TACHO_EOUTOFRANGE, "MSR address '%s' is "
					   "above 0xffffffff", spec);
	}
	if (!digits)
		return tc_diag_set(diag, spec, 0, (unsigned)start + 1, -TACHO_EPARSE,
				   "no hex digits in the address '%s'", spec);
	*out = (uint32_t)v;
	return 0;
}

/* The best of the registers with that name or alias (by_name) or at that address: the
 * first that applies to cpu, else the first in the table's order. */
static const struct tacho_msr *pick(const struct tacho_msr_cpu *cpu, const char *name,
				    uint32_t address, bool by_name)
{
	const struct tacho_msr *first = NULL;

	for (size_t i = 0, n = tacho_msr_count(); i < n; i++) {
		const struct tacho_msr *m = tacho_msr_at(i);
		if (by_name ? !named(m, name) : m->address != address)
			continue;
		if (cpu && tacho_msr_applies(m, cpu))
			return m;
		if (!first)
			first = m;
	}
	return first;
}

int tacho_msr_lookup(const char *spec, const struct tacho_msr_cpu *cpu,
		     const struct tacho_msr **msr, uint32_t *address, struct tacho_diag *diag)
{
	const struct tacho_msr *m;
	uint32_t addr = 0;
	char near[200];
	int r;

	if (!spec || !msr || !address || tc_diag_check(diag))
		return -EINVAL;
	if (!*spec)
		return tc_diag_set(diag, spec, 0, 1, -TACHO_EPARSE, "an MSR name or address is "
				   "empty");
	r = parse_address(spec, &addr, diag);
	if (r < 0)
		return r;
	if (r == 0) {
		*msr = pick(cpu, NULL, addr, false);
		*address = addr;
		return 0;
	}
	m = pick(cpu, spec, 0, true);
	if (m) {
		*msr = m;
		*address = m->address;
		return 0;
	}
	nearest_names(spec, near, sizeof(near));
	r = tc_diag_set(diag, spec, 0, 1, -TACHO_ENOMSR, "no MSR named '%s' in tacho's table%s%s%s",
			spec, near[0] ? " (did you mean " : "", near, near[0] ? "?)" : "");
	if (diag)
		diag->hint = TACHO_HINT_MSRS;
	return r;
}

/* --- the processor --- */

int tacho_msr_cpu_of_dump(const struct tacho_cpuid_dump *dump, struct tacho_msr_cpu *out)
{
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	int err;

	if (!dump || !out)
		return -EINVAL;
	err = tacho_cpu_decode(dump, &info);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->vendor = info.vendor;
	out->family = info.family;
	out->model = info.model;
	out->guest = info.hypervisor_bit;
	tacho_cpu_info_exit(&info);
	return 0;
}

int tacho_msr_cpu_live(struct tacho_msr_cpu *out)
{
	static const uint32_t leaves[] = { 0, 1 };
	struct tacho_cpuid_dump *d;
	int err = 0, idx;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	d = tc_cpuid_dump_new();
	if (!d)
		return -ENOMEM;
	idx = tc_cpuid_dump_add_cpu(d, -1);
	if (idx < 0) {
		err = idx;
		goto out;
	}
	/* leaves 0 and 1 name the vendor, family and model: the decoder needs no more */
	for (size_t i = 0; i < ARRAY_SIZE(leaves) && !err; i++) {
		struct tacho_cpuid_regs r;
		if (!tc_cpuid_exec(leaves[i], 0, &r)) {
			err = -TACHO_ENOTX86;
			goto out;
		}
		err = tc_cpuid_dump_set(d, (unsigned)idx, leaves[i], 0, &r);
	}
	if (!err)
		err = tc_cpuid_dump_finish(d);
	if (!err)
		err = tacho_msr_cpu_of_dump(d, out);
out:
	tacho_cpuid_dump_free(d);
	return err;
}

int tacho_msr_cpu_format(const struct tacho_msr_cpu *cpu, char *buf, size_t size)
{
	if (!cpu || cpu->vendor == TACHO_VENDOR_UNKNOWN)
		return snprintf(buf, size, "an unknown CPU");
	return snprintf(buf, size, "%s family 0x%x model 0x%x%s",
			tacho_cpu_vendor_name(cpu->vendor), cpu->family, cpu->model,
			cpu->guest ? " (a virtual machine)" : "");
}
