/* cpulist.c - CPU lists as the kernel writes them ("0-3,8,10-11"): for -C and for
 * sysfs files such as /sys/devices/system/cpu/online. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Far above any machine's CPU count (the kernel's NR_CPUS tops out at 8192), low enough
 * that "0-2000000000" cannot ask for gigabytes. */
#define CPU_LIST_MAX 65536

static int num(const char *s, size_t *pos, unsigned *out)
{
	size_t p = *pos;
	unsigned long v = 0;

	if (s[p] < '0' || s[p] > '9')
		return -1;
	while (s[p] >= '0' && s[p] <= '9') {
		v = v * 10 + (unsigned long)(s[p] - '0');
		if (v >= CPU_LIST_MAX)
			return -2;
		p++;
	}
	*pos = p;
	*out = (unsigned)v;
	return 0;
}

int tc_parse_cpu_list(const char *s, int **out, size_t *n, struct tacho_diag *diag)
{
	unsigned char *seen = NULL;
	size_t pos = 0, count = 0;
	int *cpus;
	int r;

	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return tc_diag_set(diag, s ? s : "", 0, 1, -TACHO_EEMPTY, "empty CPU list");
	seen = calloc(CPU_LIST_MAX, 1);
	if (!seen)
		return -ENOMEM;
	for (;;) {
		unsigned a, b;
		size_t start = pos;

		r = num(s, &pos, &a);
		if (r)
			goto out_bad;
		b = a;
		if (s[pos] == '-') {
			pos++;
			start = pos;
			r = num(s, &pos, &b);
			if (r)
				goto out_bad;
			if (b < a) {
				free(seen);
				return tc_diag_set(diag, s, 0, (unsigned)start + 1, -TACHO_EPARSE,
						   "range ends below its start (%u-%u)", a, b);
			}
		}
		for (unsigned c = a; c <= b; c++) {
			count += !seen[c];
			seen[c] = 1;
		}
		if (s[pos] == '\0')
			break;
		if (s[pos] != ',') {
			r = -1;
			goto out_bad;
		}
		pos++;
		continue;
out_bad:
		free(seen);
		if (r == -2)
			return tc_diag_set(diag, s, 0, (unsigned)start + 1, -TACHO_EOUTOFRANGE,
					   "CPU number too large (at most %d)", CPU_LIST_MAX - 1);
		return tc_diag_set(diag, s, 0, (unsigned)pos + 1, -TACHO_EPARSE,
				   "expected a CPU number or range such as 0-3,8");
	}
	cpus = malloc(count * sizeof(*cpus));
	if (!cpus) {
		free(seen);
		return -ENOMEM;
	}
	count = 0;
	for (unsigned c = 0; c < CPU_LIST_MAX; c++)
		if (seen[c])
			cpus[count++] = (int)c;
	free(seen);
	*out = cpus;
	*n = count;
	return 0;
}
