/* dump-parse.c - reading CPUID dumps taken elsewhere: `cpuid -r` (Todd Allen's tool, and
 * what tacho_cpuid_dump_write_raw writes), libcpuid's raw format, AIDA64's CPUID listing,
 * InstLatx64's and AIDA's older listings. The format is detected from the content. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpuid.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"

enum dump_format {
	FMT_NONE,
	FMT_CPUID_R,  /* "CPU 0:" then "   0x00000000 0x00: eax=0x... ebx=... ecx=... edx=..." */
	FMT_LIBCPUID, /* "basic_cpuid[0]=EAX EBX ECX EDX", "_____ Logical CPU #n _____" */
	FMT_AIDA,     /* "CPUID 00000004: EAX-EBX-ECX-EDX [SL 02] [note]" and its relatives */
};

static const char *const format_names[] = {
	[FMT_NONE] = "unknown",
	[FMT_CPUID_R] = "cpuid -r",
	[FMT_LIBCPUID] = "libcpuid",
	[FMT_AIDA] = "AIDA64/InstLatx64",
};

/* libcpuid's arrays (libcpuid's cpu_raw_data_t, serialised by cpuid_serialize_raw_data):
 * basic_cpuid[i] is CPUID(i) and ext_cpuid[i] CPUID(0x8000_0000 + i), both with ECX = 0;
 * the others are one leaf enumerated by subleaf: intel_fn4[i] is CPUID(4, i) (deterministic
 * cache parameters), intel_fn11[i] CPUID(0xB, i) (x2APIC topology), intel_fn12h[i]
 * CPUID(0x12, i) (SGX), intel_fn14h[i] CPUID(0x14, i) (processor trace),
 * amd_fn8000001dh[i] CPUID(0x8000_001D, i) (AMD cache topology). */
static const struct libcpuid_key {
	const char *name;
	uint32_t leaf;     /* basic/ext: the first leaf of the range; others: the leaf */
	bool by_subleaf;   /* the index is the subleaf (else it is added to the leaf) */
	unsigned strong;   /* bit that marks this leaf's subleaf 0 as given explicitly */
} libcpuid_keys[] = {
	{ .name = "basic_cpuid", .leaf = 0x0 },
	{ .name = "ext_cpuid", .leaf = 0x80000000u },
	{ .name = "intel_fn4", .leaf = 0x4, .by_subleaf = true, .strong = 1u << 0 },
	{ .name = "intel_fn11", .leaf = 0xb, .by_subleaf = true, .strong = 1u << 1 },
	{ .name = "intel_fn12h", .leaf = 0x12, .by_subleaf = true, .strong = 1u << 2 },
	{ .name = "intel_fn14h", .leaf = 0x14, .by_subleaf = true, .strong = 1u << 3 },
	{ .name = "amd_fn8000001dh", .leaf = 0x8000001du, .by_subleaf = true, .strong = 1u << 4 },
};

/* The largest index tacho accepts in a libcpuid array and the largest subleaf in any
 * format: far above anything a CPU defines, low enough to catch garbage. */
#define MAX_INDEX 0xffffu
#define MAX_LEAVES_PER_CPU 4096u

struct parser {
	const char *src;              /* name for diagnostics */
	struct tacho_diag *diag;
	struct tacho_cpuid_dump *d;
	enum dump_format fmt;
	int cur;                      /* current CPU index in d, -1 before the first */
	unsigned cur_header_line;     /* line of the current CPU's header, 0 if implicit */
	size_t nleaves;               /* leaves recorded in total */
	unsigned strong;              /* libcpuid: subleaf-0 leaves given by a specific array */
	/* the line being parsed */
	const char *line, *end;
	unsigned lineno;
	bool last_unterminated;       /* this line is the last one and has no newline */
};

/* Reports a problem on the current line. `at_eol` says the problem is that the line
 * ended where more was expected: on a final line without its newline that is a file cut
 * short (-TACHO_ETRUNC), elsewhere a malformed line (-TACHO_EPARSE). */
static int TC_PRINTF(4, 5) perr(struct parser *ps, const char *at, bool at_eol, const char *fmt, ...)
{
	char msg[200];
	va_list ap;
	int err = at_eol && ps->last_unterminated ? -TACHO_ETRUNC : -TACHO_EPARSE;
	unsigned col = at ? (unsigned)(at - ps->line) + 1 : 0;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tc_diag_set(ps->diag, ps->src, ps->lineno, col, err, "%s%s (%s format)", msg,
			   err == -TACHO_ETRUNC ? ": the dump ends in the middle of a line" : "",
			   format_names[ps->fmt]);
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	return p;
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Matches the literal s at *p; advances past it on success. */
static bool eat(const char **p, const char *end, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(end - *p) < n || memcmp(*p, s, n) != 0)
		return false;
	*p += n;
	return true;
}

/* Reads hex digits at *p: 1..max_digits of them, or exactly `exact` when it is non-zero
 * (every writer of these formats prints registers as 8 digits, so fewer at the end of
 * the text means the text was cut). `what` names the field in the error. */
static int get_hex(struct parser *ps, const char **p, unsigned exact, unsigned max_digits,
		   uint32_t *out, const char *what)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned n = 0;

	while (s < ps->end && tc_is_hex_digit(*s)) {
		if (n == 16)
			return perr(ps, *p, false, "%s: too many hex digits", what);
		s++;
		n++;
	}
	if (n)
		tc_parse_hex_u64(*p, n, &v);   /* 1..16 hex digits: cannot fail */
	if (n == 0) {
		if (s == ps->end)
			return perr(ps, s, true, "%s: missing", what);
		return perr(ps, s, false, "%s: expected a hex number", what);
	}
	if (s < ps->end && is_alnum(*s))
		return perr(ps, s, false, "%s: bad hex digit '%c'", what, *s);
	if (exact && n != exact) {
		if (n < exact && s == ps->end)
			return perr(ps, *p, true, "%s: %u hex digits where %u are expected", what,
				    n, exact);
		return perr(ps, *p, false, "%s: %u hex digits where %u are expected", what, n,
			    exact);
	}
	if (n > max_digits || v > UINT32_MAX)
		return perr(ps, *p, false, "%s: value too large", what);
	*out = (uint32_t)v;
	*p = s;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Reads at most 9 decimal digits at *p (CPU numbers, array indices: the lines are not
 * NUL-terminated, so tc_parse_u64 does not fit) and moves *p past them. Returns how many
 * it read; a tenth digit is left at *p for the caller to reject. */
static unsigned scan_dec(const char **p, const char *end, unsigned *out)
{
	unsigned v = 0, n = 0;

	while (*p < end && is_digit(**p) && n < 9) {
		v = v * 10 + (unsigned)(**p - '0');
		(*p)++;
		n++;
	}
	*out = v;
	return n;
}

/* A decimal number of at most 9 digits. */
static int get_dec(struct parser *ps, const char **p, unsigned *out, const char *what)
{
	const char *s = *p;
	unsigned v, n = scan_dec(&s, ps->end, &v);

	if (s < ps->end && is_digit(*s))
		return perr(ps, *p, false, "%s: number too large", what);
	if (n == 0)
		return perr(ps, s, s == ps->end, "%s: expected a decimal number", what);
	*out = v;
	*p = s;
	return 0;
}

/* Expects the literal s; a line that ends early is reported as cut short. */
static int expect(struct parser *ps, const char **p, const char *s, const char *what)
{
	if (eat(p, ps->end, s))
		return 0;
	/* A prefix of s up to the end of the line: the line stops in the middle. */
	size_t left = (size_t)(ps->end - *p);
	bool cut = left < strlen(s) && memcmp(*p, s, left) == 0;
	return perr(ps, *p, cut, "expected '%s' %s", s, what);
}

/* Only spaces may follow. */
static int expect_eol(struct parser *ps, const char *p)
{
	p = skip_ws(p, ps->end);
	if (p != ps->end)
		return perr(ps, p, false, "unexpected text after the registers");
	return 0;
}

static int new_cpu(struct parser *ps, int os_cpu)
{
	int idx = tc_cpuid_dump_add_cpu(ps->d, os_cpu);

	if (idx < 0)
		return idx;
	ps->cur = idx;
	ps->cur_header_line = ps->lineno;
	ps->strong = 0;
	return 0;
}

static int record(struct parser *ps, uint32_t leaf, uint32_t subleaf,
		  const struct tacho_cpuid_regs *r)
{
	int err;

	if (ps->cur < 0) {
		/* Leaves before any CPU header: one CPU the dump does not number. */
		err = new_cpu(ps, -1);
		if (err)
			return err;
		ps->cur_header_line = 0;
	}
	/* A real CPU has a few hundred leaves and subleaves; thousands in one CPU is not a
	 * dump (and the container's duplicate check is linear). */
	if (ps->d->cpus[ps->cur].n >= MAX_LEAVES_PER_CPU)
		return perr(ps, ps->line, false, "more than %u leaves for one CPU",
			    MAX_LEAVES_PER_CPU);
	err = tc_cpuid_dump_set(ps->d, (unsigned)ps->cur, leaf, subleaf, r);
	if (err)
		return err;
	ps->nleaves++;
	return 0;
}

/* How many times this CPU already holds `leaf`: the subleaf of a repeated line in the
 * listings that do not print subleaves (AIDA's old format repeats leaf 4 once per
 * cache, in subleaf order). */
static uint32_t occurrences(const struct parser *ps, uint32_t leaf)
{
	const struct tc_cpuid_cpu *c;
	uint32_t n = 0;

	if (ps->cur < 0)
		return 0;
	c = &ps->d->cpus[ps->cur];
	for (size_t i = 0; i < c->n; i++)
		n += c->leaves[i].leaf == leaf;
	return n;
}

/* --- `cpuid -r` ---
 * "CPU 3:" (or "CPU:" with -1), then per leaf
 * "   0x00000007 0x01: eax=0x00000020 ebx=0x00000000 ecx=0x00000000 edx=0x00000000". */

/* "CPU N:" or "CPU:" alone on the line; returns the number, -1 without one, or -2. */
static long cpuid_r_header(const char *p, const char *end)
{
	long n = -1;

	p = skip_ws(p, end);
	if (!eat(&p, end, "CPU"))
		return -2;
	p = skip_ws(p, end);
	if (p < end && *p >= '0' && *p <= '9') {
		n = 0;
		while (p < end && *p >= '0' && *p <= '9') {
			n = n * 10 + (*p - '0');
			if (n > INT_MAX)
				return -2;
			p++;
		}
		p = skip_ws(p, end);
	}
	if (!eat(&p, end, ":"))
		return -2;
	p = skip_ws(p, end);
	return p == end ? n : -2;
}

static bool cpuid_r_data(const char *p, const char *end)
{
	p = skip_ws(p, end);
	return end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
}

static int parse_cpuid_r(struct parser *ps)
{
	static const char *const reg_names[] = { "eax", "ebx", "ecx", "edx" };
	const char *p = ps->line;
	uint32_t leaf, subleaf, v[4];
	long n;
	int err;

	n = cpuid_r_header(p, ps->end);
	if (n >= -1)
		return new_cpu(ps, (int)n);
	if (!cpuid_r_data(p, ps->end))
		return 0; /* free text (cpuid's decoded output, a title): not data */
	p = skip_ws(p, ps->end) + 2;
	if ((err = get_hex(ps, &p, 0, 8, &leaf, "leaf")))
		return err;
	if (eat(&p, ps->end, ":")) {
		/* Old versions of cpuid print no subleaf: repeated lines are the next ones. */
		subleaf = occurrences(ps, leaf);
		if (subleaf && !tc_cpuid_leaf_indexed(leaf))
			return 0;
	} else {
		if (p == ps->end || !is_ws(*p))
			return perr(ps, p, p == ps->end, "expected a space after the leaf");
		p = skip_ws(p, ps->end);
		if ((err = expect(ps, &p, "0x", "before the subleaf")))
			return err;
		if ((err = get_hex(ps, &p, 0, 8, &subleaf, "subleaf")))
			return err;
		if ((err = expect(ps, &p, ":", "after the subleaf")))
			return err;
	}
	for (int i = 0; i < 4; i++) {
		char lit[8];
		p = skip_ws(p, ps->end);
		snprintf(lit, sizeof(lit), "%s=0x", reg_names[i]);
		if ((err = expect(ps, &p, lit, "(register missing)")))
			return err;
		if ((err = get_hex(ps, &p, 8, 8, &v[i], reg_names[i])))
			return err;
	}
	if ((err = expect_eol(ps, p)))
		return err;
	return record(ps, leaf, subleaf,
		      &(struct tacho_cpuid_regs){ .eax = v[0], .ebx = v[1], .ecx = v[2], .edx = v[3] });
}

/* --- libcpuid ---
 * "version=0.8.1", "basic_cpuid[13]=00000207 00000340 00000380 00000000",
 * "_________________ Logical CPU #3 _________________". */

/* "____ Logical CPU #n ____": returns n, or -1 if the line is not such a separator. */
static long libcpuid_separator(const char *p, const char *end)
{
	unsigned n;

	if (p == end || *p != '_')
		return -1;
	while (p < end && *p == '_')
		p++;
	p = skip_ws(p, end);
	if (!eat(&p, end, "Logical CPU #"))
		return -1;
	if (!scan_dec(&p, end, &n))
		return -1;
	p = skip_ws(p, end);
	while (p < end && *p == '_')
		p++;
	return p == end ? (long)n : -1;
}

/* The key of a "key=..." or "key[i]=..." line: [a-z0-9_]+ at the start of the line.
 * Returns its length, or 0 when the line is not of that shape. */
static size_t libcpuid_key(const char *p, const char *end)
{
	const char *s = p;

	while (s < end && ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
		s++;
	if (s == p || s == end || (*s != '[' && *s != '='))
		return 0;
	return (size_t)(s - p);
}

static bool libcpuid_line(const char *p, const char *end)
{
	return libcpuid_separator(p, end) >= 0 || libcpuid_key(p, end) > 0;
}

static int parse_libcpuid(struct parser *ps)
{
	const char *p = ps->line, *key;
	const struct libcpuid_key *k = NULL;
	size_t klen;
	long sep;
	unsigned idx;
	uint32_t v[4], leaf, subleaf;
	int err;

	sep = libcpuid_separator(p, ps->end);
	if (sep >= 0)
		return new_cpu(ps, (int)sep);
	klen = libcpuid_key(p, ps->end);
	if (!klen)
		return 0; /* free text */
	key = p;
	if (klen > 4 && memcmp(key, "arm_", 4) == 0)
		return tc_diag_set(ps->diag, ps->src, ps->lineno, 1, -TACHO_ENOTX86,
				   "'%.*s': this is libcpuid's dump of an ARM processor (MIDR and ID "
				   "registers), not x86 CPUID", (int)klen, key);
	if (klen == 7 && memcmp(key, "version", 7) == 0)
		return 0; /* the libcpuid version that wrote the file */
	for (size_t i = 0; i < ARRAY_SIZE(libcpuid_keys); i++)
		if (strlen(libcpuid_keys[i].name) == klen &&
		    memcmp(libcpuid_keys[i].name, key, klen) == 0)
			k = &libcpuid_keys[i];
	p += klen;
	if (!k) {
		/* A newer libcpuid may add arrays tacho does not know: say so, go on. */
		tc_log(TACHO_LOG_WARN, "%s:%u: unknown libcpuid key '%.*s' skipped", ps->src,
		       ps->lineno, (int)klen, key);
		return 0;
	}
	if ((err = expect(ps, &p, "[", "after the key")))
		return err;
	if ((err = get_dec(ps, &p, &idx, "index")))
		return err;
	if (idx > MAX_INDEX)
		return perr(ps, p, false, "index %u out of range", idx);
	if ((err = expect(ps, &p, "]=", "after the index")))
		return err;
	for (int i = 0; i < 4; i++) {
		static const char *const names[] = { "eax", "ebx", "ecx", "edx" };
		if (i > 0) {
			if (p == ps->end)
				return perr(ps, p, true, "register %s missing", names[i]);
			if (!is_ws(*p))
				return perr(ps, p, false, "expected a space before %s", names[i]);
			p = skip_ws(p, ps->end);
		}
		if ((err = get_hex(ps, &p, 8, 8, &v[i], names[i])))
			return err;
	}
	if ((err = expect_eol(ps, p)))
		return err;

	if (k->by_subleaf) {
		leaf = k->leaf;
		subleaf = idx;
	} else {
		leaf = k->leaf + idx;
		subleaf = 0;
		/* basic_cpuid[4] and intel_fn4[0] both claim CPUID(4, 0): the specific array
		 * is the one libcpuid enumerated on purpose, so it wins whatever the order. */
		for (size_t i = 0; i < ARRAY_SIZE(libcpuid_keys); i++)
			if (libcpuid_keys[i].by_subleaf && libcpuid_keys[i].leaf == leaf &&
			    (ps->strong & libcpuid_keys[i].strong))
				return 0;
	}
	err = record(ps, leaf, subleaf,
		     &(struct tacho_cpuid_regs){ .eax = v[0], .ebx = v[1], .ecx = v[2], .edx = v[3] });
	/* marked after recording: the first line of a dump creates the CPU, clearing marks */
	if (!err && k->by_subleaf && subleaf == 0)
		ps->strong |= k->strong;
	return err;
}

/* --- AIDA64, InstLatx64 and AIDA's older listing ---
 * Headers: "------[ Logical CPU #n ]------", "------[ CPUID Registers / Logical CPU #n ]------"
 * (AIDA64; other "------[ ... ]------" sections end the CPU), "CPU#000 AffMask: 0x...01"
 * (InstLatx64), "CPUID Registers (CPU #1):" (old AIDA, numbered from 1; " Virtual" marks
 * a second thread). Data: "CPUID 0000000D: 00000207-00000340-00000380-00000000 [SL 01] [note]",
 * in the older listing "CPUID 00000004  \t1C004121-01C0003F-0000003F-00000000" without a
 * colon and without subleaves (repeated lines are successive subleaves). */

/* Parses "#n" with an optional " Virtual" and then `tail`; returns n or -1. */
static long aida_cpu_number(const char *p, const char *end, const char *tail)
{
	unsigned n;

	if (!eat(&p, end, "#") || !scan_dec(&p, end, &n))
		return -1;
	p = skip_ws(p, end);
	if (eat(&p, end, "Virtual"))
		p = skip_ws(p, end);
	if (!eat(&p, end, tail))
		return -1;
	return skip_ws(p, end) == end ? (long)n : -1;
}

/* An AIDA data line starts "CPUID", blanks, then the leaf: an 8-character word that is
 * hex or at least starts with a digit (so that "0000000G" is reported as a bad leaf),
 * followed by a colon or a blank. Everything else starting "CPUID" is text: "CPUID
 * Registers (CPU #1):", and the summary at the top of a report ("CPUID Manufacturer:",
 * "CPUID Revision    : 000B0671h"). Returns the position of the word, or NULL. */
static const char *aida_data(const char *p, const char *end)
{
	const char *w;
	bool hex = true;

	if (!eat(&p, end, "CPUID") || p == end || !is_ws(*p))
		return NULL;
	w = skip_ws(p, end);
	for (p = w; p < end && is_alnum(*p); p++)
		hex = hex && tc_is_hex_digit(*p);
	if (p - w != 8 || (p < end && *p != ':' && !is_ws(*p)))
		return NULL;
	if (!hex && !(*w >= '0' && *w <= '9'))
		return NULL;
	return w;
}

static bool aida_line(const char *p, const char *end)
{
	return eat(&p, end, "------[") || eat(&p, end, "CPU#") ||
	       eat(&p, end, "CPUID Registers (CPU") || aida_data(p, end);
}

/* "CPU#003 AffMask: 0x0000000000000008": the mask's one bit is the OS's CPU number (the
 * "#003" is the tool's own count, which can repeat: two "CPU#000" with masks 1 and 2).
 * With more than 64 CPUs the mask comes in words, one per Windows processor group,
 * "0xGROUP1:GROUP0"; a bit is then relative to its group, whose size the dump does not
 * give, and the count (which runs on across groups there) is the better number. */
static int aida_affmask(struct parser *ps, const char *p)
{
	unsigned num, words = 0, nd = 0;
	uint64_t mask = 0;
	int err;

	if ((err = get_dec(ps, &p, &num, "CPU number")))
		return err;
	p = skip_ws(p, ps->end);
	if (!eat(&p, ps->end, "AffMask:"))
		return new_cpu(ps, (int)num);
	p = skip_ws(p, ps->end);
	if (eat(&p, ps->end, "0x") || eat(&p, ps->end, "0X")) {
		words = 1;
		for (; p < ps->end && (tc_is_hex_digit(*p) || *p == ':'); p++) {
			if (*p == ':') {
				words++;
				continue;
			}
			if (nd++ < 16)
				mask = mask << 4 | (uint64_t)tc_hex_value(*p);
		}
	}
	if (words == 1 && nd <= 16 && mask && !(mask & (mask - 1)))
		return new_cpu(ps, __builtin_ctzll(mask));
	return new_cpu(ps, (int)num);
}

static int parse_aida(struct parser *ps)
{
	static const char *const names[] = { "eax", "ebx", "ecx", "edx" };
	const char *p = ps->line, *w;
	uint32_t leaf, subleaf = 0, v[4];
	bool has_sl = false;
	long n;
	int err;

	if (eat(&p, ps->end, "------[")) {
		const char *q = skip_ws(p, ps->end);
		if (eat(&q, ps->end, "CPUID Registers /"))
			q = skip_ws(q, ps->end);
		if (eat(&q, ps->end, "Logical CPU") && (q = skip_ws(q, ps->end)) &&
		    (n = aida_cpu_number(q, ps->end, "]------")) >= 0)
			return new_cpu(ps, (int)n);
		ps->cur = -1; /* another section of the report: not CPUID data */
		return 0;
	}
	if (eat(&p, ps->end, "CPU#"))
		return aida_affmask(ps, p);
	if (eat(&p, ps->end, "CPUID Registers (CPU")) {
		p = skip_ws(p, ps->end);
		n = aida_cpu_number(p, ps->end, "):");
		if (n < 0)
			return perr(ps, p, false, "malformed CPU header");
		return new_cpu(ps, n > 0 ? (int)(n - 1) : -1);
	}
	w = aida_data(ps->line, ps->end);
	if (!w)
		return 0; /* text */
	p = w;
	if ((err = get_hex(ps, &p, 8, 8, &leaf, "leaf")))
		return err;
	eat(&p, ps->end, ":");
	if (p == ps->end)
		return perr(ps, p, true, "registers missing");
	if (!is_ws(*p))
		return perr(ps, p, false, "expected a blank before the registers");
	p = skip_ws(p, ps->end);
	for (int i = 0; i < 4; i++) {
		if (i > 0 && (err = expect(ps, &p, "-", "between registers")))
			return err;
		if ((err = get_hex(ps, &p, 8, 8, &v[i], names[i])))
			return err;
	}
	/* What follows is a note ("[GenuineIntel]", "[L2: 256 KB] / L3: 0 KB]"), except a
	 * leading "[SL nn]", the subleaf in hex. */
	if (p < ps->end && !is_ws(*p))
		return perr(ps, p, false, "unexpected text after the registers");
	p = skip_ws(p, ps->end);
	if (eat(&p, ps->end, "[SL")) {
		p = skip_ws(p, ps->end);
		if ((err = get_hex(ps, &p, 0, 8, &subleaf, "subleaf")))
			return err;
		if ((err = expect(ps, &p, "]", "after the subleaf")))
			return err;
		has_sl = true;
	}
	if (!has_sl) {
		subleaf = occurrences(ps, leaf);
		if (subleaf && !tc_cpuid_leaf_indexed(leaf))
			return 0; /* a repeat of a leaf without subleaves: keep the first */
	}
	return record(ps, leaf, subleaf,
		      &(struct tacho_cpuid_regs){ .eax = v[0], .ebx = v[1], .ecx = v[2], .edx = v[3] });
}

/* --- detection and the line loop --- */

static enum dump_format detect(const char *p, const char *end)
{
	const char *t = skip_ws(p, end);

	if (cpuid_r_header(p, end) >= -1 || cpuid_r_data(p, end))
		return FMT_CPUID_R;
	if (t == p && libcpuid_line(p, end))
		return FMT_LIBCPUID;
	if (t == p && aida_line(p, end))
		return FMT_AIDA;
	return FMT_NONE;
}

/* libcpuid's test files append the expected results after a line of exactly 80 '-';
 * libcpuid's own loader stops there, and so does tacho. */
static bool is_stop_line(const char *p, const char *end)
{
	if (end - p != 80)
		return false;
	for (; p < end; p++)
		if (*p != '-')
			return false;
	return true;
}

int tacho_cpuid_dump_parse(const char *text, size_t len, const char *name,
			   struct tacho_cpuid_dump **out, struct tacho_diag *diag)
{
	struct parser ps = {
		.src = name ? name : "<cpuid dump>",
		.diag = diag,
		.cur = -1,
	};
	const char *pos = text, *end = text ? text + len : text;
	int err = 0;

	*out = NULL;
	if (tc_diag_check(diag))
		return -EINVAL;
	ps.d = tc_cpuid_dump_new();
	if (!ps.d)
		return -ENOMEM;
	while (pos < end) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		const char *le = nl ? nl : end;

		ps.lineno++;
		ps.line = pos;
		ps.last_unterminated = !nl;
		if (le > pos && le[-1] == '\r')
			le--;
		ps.end = le;
		pos = nl ? nl + 1 : end;
		if (is_stop_line(ps.line, ps.end))
			break;
		if (ps.fmt == FMT_NONE) {
			ps.fmt = detect(ps.line, ps.end);
			if (ps.fmt == FMT_NONE) {
				/* Before the first line we recognise, an ARM libcpuid dump still
				 * deserves its own error. */
				continue;
			}
		}
		switch (ps.fmt) {
		case FMT_CPUID_R:
			err = parse_cpuid_r(&ps);
			break;
		case FMT_LIBCPUID:
			err = parse_libcpuid(&ps);
			break;
		case FMT_AIDA:
			err = parse_aida(&ps);
			break;
		case FMT_NONE:
			break;
		}
		if (err)
			goto out_err;
	}
	if (ps.nleaves == 0) {
		err = tc_diag_set(diag, ps.src, 0, 0, -TACHO_EEMPTY, "no CPUID leaves found%s",
				  ps.fmt == FMT_NONE ? " (not a CPUID dump format tacho knows)" :
				  ps.fmt == FMT_CPUID_R ? " (cpuid's decoded output? use cpuid -r)" :
				  "");
		goto out_err;
	}
	/* A `cpuid -r` or libcpuid dump that ends on a CPU header was cut; AIDA64 lists
	 * headers without leaves for CPUs it did not read (real dumps end that way). */
	if (ps.fmt != FMT_AIDA && ps.cur >= 0 && ps.d->cpus[ps.cur].n == 0 && ps.cur_header_line) {
		err = tc_diag_set(diag, ps.src, ps.cur_header_line, 0, -TACHO_ETRUNC,
				  "the dump ends after this CPU header, with no leaves for it");
		goto out_err;
	}
	err = tc_cpuid_dump_finish(ps.d);
	if (err) {
		tc_diag_set(diag, ps.src, 0, 0, err, "no CPUID leaves found");
		goto out_err;
	}
	*out = ps.d;
	return 0;

out_err:
	tacho_cpuid_dump_free(ps.d);
	return err;
}

int tacho_cpuid_dump_load(const char *path, struct tacho_cpuid_dump **out,
			  struct tacho_diag *diag)
{
	char *buf;
	size_t len;
	int err;

	*out = NULL;
	if (tc_diag_check(diag))
		return -EINVAL;
	err = tc_read_file(path, &buf, &len, 0);
	if (err)
		return tc_diag_set(diag, path, 0, 0, err, "cannot read the file: %s",
				   tacho_strerror(err));
	err = tacho_cpuid_dump_parse(buf, len, path, out, diag);
	free(buf);
	return err;
}
