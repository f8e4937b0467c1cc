/* format.c - human-readable sizes and counts (ia32lib's ia32size, in binary units). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

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
