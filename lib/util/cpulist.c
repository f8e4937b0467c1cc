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

struct cpu_range {
	unsigned a, b;
};

static int range_cmp(const void *x, const void *y)
{
	const struct cpu_range *p = x, *q = y;

	return p->a < q->a ? -1 : p->a > q->a;
}

/* The ranges as written are kept (a few bytes each), then sorted and merged: a call
 * allocates in proportion to the text and the CPUs it names, not to CPU_LIST_MAX, as
 * every reader of a sysfs CPU list calls this. */
int tc_parse_cpu_list(const char *s, int **out, size_t *n, struct tacho_diag *diag)
{
	struct cpu_range *v = NULL;
	size_t pos = 0, count = 0, nr = 0, cap = 0, k = 0;
	unsigned next = 0;
	int *cpus;
	int r;

	*out = NULL;
	*n = 0;
	if (!s || !*s)
		return tc_diag_set(diag, s ? s : "", 0, 1, -TACHO_EEMPTY, "empty CPU list");
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
				free(v);
				return tc_diag_set(diag, s, 0, (unsigned)start + 1, -TACHO_EPARSE,
						   "range ends below its start (%u-%u)", a, b);
			}
		}
		if (nr == cap) {
			size_t ncap = cap ? cap * 2 : 8;
			struct cpu_range *nv = realloc(v, ncap * sizeof(*nv));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		v[nr].a = a;
		v[nr++].b = b;
		if (s[pos] == '\0')
			break;
		if (s[pos] != ',') {
			r = -1;
			goto out_bad;
		}
		pos++;
		continue;
out_bad:
		free(v);
		if (r == -2)
			return tc_diag_set(diag, s, 0, (unsigned)start + 1, -TACHO_EOUTOFRANGE,
					   "CPU number too large (at most %d)", CPU_LIST_MAX - 1);
		return tc_diag_set(diag, s, 0, (unsigned)pos + 1, -TACHO_EPARSE,
				   "expected a CPU number or range such as 0-3,8");
	}
	/* sorted by start, each range counts the CPUs above those already counted */
	qsort(v, nr, sizeof(*v), range_cmp);
	for (size_t i = 0; i < nr; i++) {
		unsigned lo = i && v[i].a < next ? next : v[i].a;
		if (v[i].b >= lo)
			count += v[i].b - lo + 1;
		if (!i || v[i].b + 1 > next)
			next = v[i].b + 1;
	}
	cpus = malloc(count * sizeof(*cpus));
	if (!cpus) {
		free(v);
		return -ENOMEM;
	}
	next = 0;
	for (size_t i = 0; i < nr; i++) {
		for (unsigned c = i && v[i].a < next ? next : v[i].a; c <= v[i].b; c++)
			cpus[k++] = (int)c;
		if (!i || v[i].b + 1 > next)
			next = v[i].b + 1;
	}
	free(v);
	*out = cpus;
	*n = count;
	return 0;
}
