/* decode.c - register values in words and back: each field's meaning (the event an
 * event select names, a flag's two states, a ratio in MHz, a unit of 1/2^n joules) and
 * the parser of FIELD=VAL assignments that builds a value for a write or a decode. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "msr/msr.h"

void tc_msr_bits(unsigned lo, unsigned hi, char *buf, size_t size)
{
	if (lo == hi)
		snprintf(buf, size, "%u", lo);
	else
		snprintf(buf, size, "%u:%u", hi, lo);
}

/* 1/2^n of unit, with the prefix that keeps it readable: "15.26 uJ", "125 mW". */
static void fmt_pow2(unsigned n, const char *unit, char *buf, size_t size)
{
	static const struct {
		double scale;
		const char *prefix;
	} prefixes[] = { { 1, "" }, { 1e-3, "m" }, { 1e-6, "u" }, { 1e-9, "n" }, { 1e-12, "p" } };
	double v = ldexp(1.0, -(int)n);
	size_t i = 0;

	while (i + 1 < ARRAY_SIZE(prefixes) && v < prefixes[i].scale)
		i++;
	snprintf(buf, size, "1/2^%u %s = %.4g %s%s", n, unit, v / prefixes[i].scale,
		 prefixes[i].prefix, unit);
}

/* "PMC0, PMC3" for the set bits of v, "none" when none is. */
static void fmt_bits(uint64_t v, const char *unit, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < 64 && len < size; i++)
		if (v >> i & 1)
			len += (size_t)snprintf(buf + len, size - len, "%s%s%u", len ? ", " : "",
						unit ? unit : "bit ", i);
	if (!len)
		snprintf(buf, size, "none");
}

void tc_msr_meaning(const struct tc_msr_field *f, uint64_t v, char *buf, size_t size)
{
	uint64_t x = tc_msr_field_get(f, v);
	unsigned width = (unsigned)f->hi - f->lo + 1;
	const char *text;
	char num[40];
	uint32_t key;

	switch (f->show) {
	case TC_SHOW_COUNT:
		snprintf(buf, size, "%s", tc_fmt_grouped(x, num, sizeof(num)));
		break;
	case TC_SHOW_HEX:
		snprintf(buf, size, "0x%llx", (unsigned long long)x);
		break;
	case TC_SHOW_SIGNED: {
		/* sign-extend from the field's top bit */
		int64_t s = width >= 64 ? (int64_t)x :
			(int64_t)(x ^ (1ull << (width - 1))) - (int64_t)(1ull << (width - 1));
		snprintf(buf, size, "%lld", (long long)s);
		break;
	}
	case TC_SHOW_FLAG:
		snprintf(buf, size, "%s", x ? f->on : f->off);
		break;
	case TC_SHOW_NAMES:
		text = tc_msr_name_of(f->names, (uint32_t)x);
		if (text)
			snprintf(buf, size, "%s", text);
		else
			snprintf(buf, size, "0x%llx: not a %s tacho knows", (unsigned long long)x,
				 f->names ? f->names->what : "value");
		break;
	case TC_SHOW_EVENT_INTEL:
		/* the architectural events are defined by event and unit mask together */
		key = (uint32_t)(x | (v >> 8 & 0xff) << 8);
		text = tc_msr_name_of(f->names, key);
		if (text)
			snprintf(buf, size, "%s (%s, umask 0x%02x)", text, f->names->what,
				 (unsigned)(key >> 8));
		else
			snprintf(buf, size, "event 0x%02llx, umask 0x%02x: not an architectural "
				 "event (the CPU's event list names it)", (unsigned long long)x,
				 (unsigned)(key >> 8));
		break;
	case TC_SHOW_EVENT_AMD:
		key = (uint32_t)(x | (v >> 32 & 0xf) << 8);
		text = tc_msr_name_of(f->names, key);
		if (text)
			snprintf(buf, size, "%s (%s 0x%03x)", text, f->names->what, (unsigned)key);
		else
			snprintf(buf, size, "event 0x%03x: model-specific (the part's PPR names it)",
				 (unsigned)key);
		break;
	case TC_SHOW_BITS:
		fmt_bits(x, f->unit, buf, size);
		break;
	case TC_SHOW_RATIO:
		if (x)
			snprintf(buf, size, "%llu x 100 MHz = %llu MHz", (unsigned long long)x,
				 (unsigned long long)x * 100);
		else
			snprintf(buf, size, "0: not reported");
		break;
	case TC_SHOW_POW2:
		fmt_pow2((unsigned)x, f->unit ? f->unit : "", buf, size);
		break;
	case TC_SHOW_BELOW_TJMAX:
		snprintf(buf, size, "%llu C below TjMax", (unsigned long long)x);
		break;
	case TC_SHOW_CELSIUS:
		snprintf(buf, size, "%llu C", (unsigned long long)x);
		break;
	case TC_SHOW_AMD_PSTATE_MHZ: {
		/* family 17h: CoreCOF = 200 MHz x CpuFid / CpuDfsId (the divisor in eighths
		 * of the 25 MHz reference's multiplier) */
		uint64_t did = v >> 8 & 0x3f;
		if (did)
			snprintf(buf, size, "%llu MHz (200 MHz x %llu / %llu)",
				 (unsigned long long)(200 * x / did), (unsigned long long)x,
				 (unsigned long long)did);
		else
			snprintf(buf, size, "no frequency (cpu_dfs_id is 0)");
		break;
	}
	default:
		snprintf(buf, size, "0x%llx", (unsigned long long)x);
		break;
	}
}

/* The first version of struct tacho_msr_field_value ends at meaning: a caller's sz
 * below it is refused. */
#define FIELD_VALUE_SZ_V1 tc_offsetofend(struct tacho_msr_field_value, meaning)

int tacho_msr_decode_field(const struct tacho_msr *m, unsigned i, uint64_t regval,
			   struct tacho_msr_field_value *out)
{
	struct tacho_msr_field_value fv;
	size_t sz;

	if (!m || !out || i >= m->nfields || out->sz < FIELD_VALUE_SZ_V1)
		return -EINVAL;
	sz = out->sz < sizeof(fv) ? out->sz : sizeof(fv);
	fv.sz = out->sz;
	fv.name = m->fields[i].name;
	fv.lo = m->fields[i].lo;
	fv.hi = m->fields[i].hi;
	fv.value = tc_msr_field_get(&m->fields[i], regval);
	tc_msr_meaning(&m->fields[i], regval, fv.meaning, sizeof(fv.meaning));
	memcpy(out, &fv, sz);
	return 0;
}

/* --- FIELD=VAL --- */

static const struct tc_msr_field *find_field(const struct tacho_msr *m, const char *name,
					     size_t len)
{
	for (unsigned i = 0; i < m->nfields; i++)
		if (strlen(m->fields[i].name) == len && !strncasecmp(m->fields[i].name, name, len))
			return &m->fields[i];
	return NULL;
}

/* ", did you mean X?" for the field names of m nearest to name, or "". */
static void nearest_field(const struct tacho_msr *m, const char *name, char *buf, size_t size)
{
	unsigned best = 3;
	const char *which = NULL;

	for (unsigned i = 0; i < m->nfields; i++) {
		unsigned d = tc_msr_distance(name, m->fields[i].name, 2);
		if (d < best) {
			best = d;
			which = m->fields[i].name;
		}
	}
	if (which)
		snprintf(buf, size, " (did you mean %s?)", which);
	else
		buf[0] = '\0';
}

/* The reserved bits of m that v sets: 0 when none (or m reserves none). */
static uint64_t reserved_set(const struct tacho_msr *m, uint64_t v)
{
	return m && m->rest_reserved ? v & ~tc_msr_fields_mask(m) : 0;
}

int tacho_msr_assign(const struct tacho_msr *m, uint64_t base, const char *text, uint64_t *out,
		     struct tacho_diag *diag)
{
	uint64_t v = base, seen = 0;
	const char *p = text;

	if (!text || !out || tc_diag_check(diag))
		return -EINVAL;
	if (!*text)
		return tc_diag_set(diag, text, 0, 1, -TACHO_EPARSE, "no value: give a number or "
				   "FIELD=VALUE assignments");
	if (!strchr(text, '=')) {
		uint64_t bad;
		if (tc_parse_u64(text, &v))
			return tc_diag_set(diag, text, 0, 1, -TACHO_EPARSE, "'%s' is not a number "
					   "(decimal, or hex with 0x) nor FIELD=VALUE assignments",
					   text);
		bad = reserved_set(m, v);
		if (bad)
			return tc_diag_set(diag, text, 0, 1, -TACHO_EOUTOFRANGE, "0x%llx sets bits %s "
					   "reserves (mask 0x%llx): the CPU would refuse it",
					   (unsigned long long)v, m->name, (unsigned long long)bad);
		*out = v;
		return 0;
	}
	if (!m)
		return tc_diag_set(diag, text, 0, 1, -TACHO_EPARSE, "FIELD=VALUE needs a register "
				   "tacho knows; this address has no fields: give a whole value");
	for (;;) {
		size_t nlen = strcspn(p, "=,"), vlen;
		const struct tc_msr_field *f;
		char name[64], val[32], near[96];
		unsigned col = (unsigned)(p - text) + 1;
		uint64_t x, max;

		if (!nlen || p[nlen] != '=')
			return tc_diag_set(diag, text, 0, col + (unsigned)nlen, -TACHO_EPARSE,
					   "expected FIELD=VALUE");
		snprintf(name, sizeof(name), "%.*s", (int)(nlen < 63 ? nlen : 63), p);
		f = find_field(m, p, nlen);
		if (!f) {
			nearest_field(m, name, near, sizeof(near));
			return tc_diag_set(diag, text, 0, col, -TACHO_EPARSE, "%s has no field "
					   "'%s'%s", m->name, name, near);
		}
		if (seen & tc_msr_field_mask(f))
			return tc_diag_set(diag, text, 0, col, -TACHO_EPARSE, "field '%s' is "
					   "given twice", f->name);
		seen |= tc_msr_field_mask(f);
		p += nlen + 1;
		col = (unsigned)(p - text) + 1;
		vlen = strcspn(p, ",");
		if (!vlen || vlen >= sizeof(val))
			return tc_diag_set(diag, text, 0, col, -TACHO_EPARSE, vlen ? "the value of "
					   "'%s' is too long" : "no value for '%s'", f->name);
		memcpy(val, p, vlen);
		val[vlen] = '\0';
		if (tc_parse_u64(val, &x))
			return tc_diag_set(diag, text, 0, col, -TACHO_EPARSE, "'%s' is not a number "
					   "(decimal, or hex with 0x)", val);
		max = tc_msr_field_mask(f) >> f->lo;
		if (x > max) {
			char bits[16];
			tc_msr_bits(f->lo, f->hi, bits, sizeof(bits));
			return tc_diag_set(diag, text, 0, col, -TACHO_EOUTOFRANGE, "%s=%s does not fit "
					   "in %u bit%s (%s; at most 0x%llx)", f->name, val,
					   (unsigned)f->hi - f->lo + 1, f->hi == f->lo ? "" : "s",
					   bits, (unsigned long long)max);
		}
		v = (v & ~tc_msr_field_mask(f)) | x << f->lo;
		p += vlen;
		if (!*p)
			break;
		p++;    /* the comma */
		if (!*p)
			return tc_diag_set(diag, text, 0, (unsigned)(p - text) + 1, -TACHO_EPARSE,
					   "expected FIELD=VALUE after ','");
	}
	*out = v;
	return 0;
}
