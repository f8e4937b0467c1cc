/* format.c - human-readable sizes and counts (ia32lib's ia32size, in binary units);
 * UTF-8 checked, and outside text made safe to print on a terminal. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

char *tc_fmt_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0;
	uint64_t whole = bytes;

	while (whole >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		whole /= 1024;
		u++;
	}
	if (u == 0 || bytes % ((uint64_t)1 << (10 * u)) == 0) {
		snprintf(buf, size, "%" PRIu64 " %s", whole, units[u]);
	} else {
		/* not a whole number of units (a 1.5 MiB L2, a 22.5 MiB L3): one or two decimals */
		double v = (double)bytes / (double)((uint64_t)1 << (10 * u));
		double tenth = round(v * 10) / 10;
		if (fabs(tenth - v) < 1e-9)
			snprintf(buf, size, "%.1f %s", v, units[u]);
		else
			snprintf(buf, size, "%.2f %s", v, units[u]);
	}
	return buf;
}

char *tc_fmt_si(double v, char *buf, size_t size)
{
	static const char *const units[] = { "", " k", " M", " G", " T", " P" };
	unsigned u = 0;
	double a = fabs(v);

	while (a >= 1000.0 && u + 1 < ARRAY_SIZE(units)) {
		a /= 1000.0;
		v /= 1000.0;
		u++;
	}
	if (u == 0 && v == floor(v))
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.3g%s", v, units[u]);
	return buf;
}

char *tc_fmt_grouped(uint64_t v, char *buf, size_t size)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%" PRIu64, v);
	size_t o = 0;

	for (int i = 0; i < n && o + 1 < size; i++) {
		if (i > 0 && (n - i) % 3 == 0 && o + 2 < size)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	if (size)
		buf[o < size ? o : size - 1] = '\0';
	return buf;
}

size_t tc_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = n ? s[0] : 0;
	size_t len;
	uint32_t cp;

	if (!n)
		return 0;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;   /* a continuation byte, an overlong lead (c0, c1) or past U+10FFFF */
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8
	 * (RFC 3629 section 3) */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

void tc_sb_add_printable(struct tc_sb *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	for (size_t i = 0; i < n;) {
		size_t len = tc_utf8_seq(s + i, n - i);
		/* C0 controls and DEL, C1 controls (U+0080..U+009F: 8-bit CSI and OSC to a
		 * terminal) and bytes that are not UTF-8 are shown, not acted upon */
		bool c1 = len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0;
		if (len == 0 || (len == 1 && (s[i] < 0x20 || s[i] == 0x7f)) || c1) {
			for (size_t k = 0; k < (len ? len : 1); k++)
				tc_sb_addf(sb, "\\x%02x", s[i + k]);
			i += len ? len : 1;
			continue;
		}
		tc_sb_add(sb, s + i, len);
		i += len;
	}
}

void tc_fputs_printable(const char *s, FILE *f)
{
	struct tc_sb sb = TC_SB_INIT;

	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
			goto out_escape;
	fputs(s, f);   /* plain ASCII, the common case */
	return;
out_escape:
	tc_sb_init(&sb);
	tc_sb_add_printable(&sb, s);
	fputs(sb.oom ? "?" : sb.buf, f);
	tc_sb_exit(&sb);
}

/* The digits of a double that reads back as itself. DBL_DIG (15) digits give back any
 * decimal of 15 digits or fewer that became a normal double, so %.15g, whose trailing
 * zeros %g drops, is the shortest form of every such double that has one; else 16
 * digits may do, and 17 always do (DBL_DECIMAL_DIG). Each candidate is checked by
 * strtod: three tries at most, where a search by halving made five. A subnormal has
 * fewer bits than that guarantee assumes (5e-324 is the smallest): its shortest is
 * searched by halving (a precision that reads back stays one with more digits). */
char *tc_fmt_shortest(double v, char *buf, size_t size)
{
	int lo = DBL_DIG, hi = DBL_DECIMAL_DIG;

	if (v != 0 && fabs(v) < DBL_MIN) {
		lo = 1;
		while (lo < hi) {
			int mid = (lo + hi) / 2;

			snprintf(buf, size, "%.*g", mid, v);
			if (strtod(buf, NULL) == v)
				hi = mid;
			else
				lo = mid + 1;
		}
	}
	for (int prec = lo; prec < hi; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, size, "%.*g", hi, v);
	return buf;
}
