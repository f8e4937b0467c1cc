/* parse.c - strict number parsing and small string helpers. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

int tc_hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool tc_is_hex_digit(int c)
{
	return tc_hex_value(c) >= 0;
}

char *tc_hex_encode(const void *data, size_t n, char *buf, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	const unsigned char *b = data;
	size_t o = 0;

	if (!size)
		return buf;
	for (size_t i = 0; i < n && o + 2 < size; i++) {
		buf[o++] = digits[b[i] >> 4];
		buf[o++] = digits[b[i] & 0xf];
	}
	buf[o] = '\0';
	return buf;
}

int tc_parse_hex_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 16)
		return len ? -TACHO_EOUTOFRANGE : -TACHO_EPARSE;
	for (size_t i = 0; i < len; i++) {
		int d = tc_hex_value((unsigned char)s[i]);
		if (d < 0)
			return -TACHO_EPARSE;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

int tc_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return -TACHO_EPARSE;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		size_t n = strlen(s + 2);
		if (n > 16) {
			/* leading zeros are fine, value bits are not */
			const char *p = s + 2;
			while (*p == '0' && strlen(p) > 16)
				p++;
			return tc_parse_hex_u64(p, strlen(p), out);
		}
		return tc_parse_hex_u64(s + 2, n, out);
	}
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -TACHO_EPARSE;
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -TACHO_EOUTOFRANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

int tc_parse_i64(const char *s, int64_t *out)
{
	uint64_t v;
	bool neg = false;
	int err;

	if (!s)
		return -TACHO_EPARSE;
	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	err = tc_parse_u64(s, &v);
	if (err)
		return err;
	if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
		return -TACHO_EOUTOFRANGE;
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

int tc_parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -TACHO_EPARSE;
	errno = 0;
	v = strtod(s, &end);
	if (*end)
		return -TACHO_EPARSE;
	if (errno == ERANGE || !isfinite(v))
		return -TACHO_EOUTOFRANGE;
	*out = v;
	return 0;
}

char *tc_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

char *tc_strndup(const char *s, size_t n)
{
	return s ? strndup(s, n) : NULL;
}

char *tc_trim(char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

bool tc_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}
