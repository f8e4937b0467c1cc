/* result.c - the result of a memory-hierarchy measurement: its lifetime, its curves,
 * its words, and the public accessors that read it. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

static void bw_unknown(struct tacho_cache_bandwidth *bw)
{
	memset(bw, 0, sizeof(*bw));
	bw->read = bw->write = bw->copy = NAN;
	bw->read_all = bw->write_all = bw->copy_all = NAN;
}

struct tacho_cache_result *tc_cache_result_new(void)
{
	struct tacho_cache_result *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->about.cpu = -1;
	r->about.steal_pct = NAN;
	r->about.step = NAN;
	r->mem.ns = r->mem.ns_min = r->mem.ns_max = r->mem.ticks = r->mem.cycles = NAN;
	bw_unknown(&r->mem.bw);
	return r;
}

void tacho_cache_result_free(struct tacho_cache_result *r)
{
	if (!r)
		return;
	for (size_t c = 0; c < TACHO_CACHE_CURVE_COUNT; c++)
		free(r->curve[c]);
	for (size_t i = 0; i < r->nwarnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->notes);
	free(r);
}

int tc_cache_curve_set(struct tacho_cache_result *r, enum tacho_cache_curve c,
		       const struct tacho_cache_point *pts, size_t n)
{
	struct tacho_cache_point *copy = NULL;

	if ((unsigned)c >= TACHO_CACHE_CURVE_COUNT)
		return -EINVAL;
	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, pts, n * sizeof(*copy));
	}
	free(r->curve[c]);
	r->curve[c] = copy;
	r->ncurve[c] = n;
	return 0;
}

static void add_words(struct tacho_cache_result *r, char ***list, size_t *n, const char *fmt,
		      va_list ap)
{
	char **nl;
	char *s;

	if (vasprintf(&s, fmt, ap) < 0) {
		r->oom = true;
		return;
	}
	nl = realloc(*list, (*n + 1) * sizeof(*nl));
	if (!nl) {
		free(s);
		r->oom = true;
		return;
	}
	nl[(*n)++] = s;
	*list = nl;
}

void tc_cache_warn(struct tacho_cache_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_words(r, &r->warnings, &r->nwarnings, fmt, ap);
	va_end(ap);
}

void tc_cache_note(struct tacho_cache_result *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_words(r, &r->notes, &r->nnotes, fmt, ap);
	va_end(ap);
}

/* A size for people: whole units as they are ("32 KiB"), others to three figures
 * ("861 KiB", "11.3 MiB"): the sweep's sizes are whole lines, not round numbers, and
 * their resolution is a step of the sweep anyway. */
void tc_cache_fmt_bytes(uint64_t b, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB" };
	double v = (double)b;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	if (v == floor(v))
		snprintf(buf, size, "%.0f %s", v, units[u]);
	else
		snprintf(buf, size, "%.3g %s", v, units[u]);
}

/* --- the public accessors --- */

const struct tacho_cache_about *tacho_cache_result_about(const struct tacho_cache_result *r)
{
	return r ? &r->about : NULL;
}

size_t tacho_cache_result_npoints(const struct tacho_cache_result *r, enum tacho_cache_curve curve)
{
	return r && (unsigned)curve < TACHO_CACHE_CURVE_COUNT ? r->ncurve[curve] : 0;
}

const struct tacho_cache_point *tacho_cache_result_point(const struct tacho_cache_result *r,
							enum tacho_cache_curve curve, size_t i)
{
	if (!r || (unsigned)curve >= TACHO_CACHE_CURVE_COUNT || i >= r->ncurve[curve])
		return NULL;
	return &r->curve[curve][i];
}

size_t tacho_cache_result_nlevels(const struct tacho_cache_result *r)
{
	return r ? r->nlevels : 0;
}

const struct tacho_cache_level *tacho_cache_result_level(const struct tacho_cache_result *r, size_t i)
{
	return r && i < r->nlevels ? &r->levels[i] : NULL;
}

const struct tacho_cache_memory *tacho_cache_result_memory(const struct tacho_cache_result *r)
{
	return r ? &r->mem : NULL;
}

size_t tacho_cache_result_ntlbs(const struct tacho_cache_result *r)
{
	return r ? r->ntlbs : 0;
}

const struct tacho_cache_tlb *tacho_cache_result_tlb(const struct tacho_cache_result *r, size_t i)
{
	return r && i < r->ntlbs ? &r->tlbs[i] : NULL;
}

size_t tacho_cache_result_nwarnings(const struct tacho_cache_result *r)
{
	return r ? r->nwarnings : 0;
}

const char *tacho_cache_result_warning(const struct tacho_cache_result *r, size_t i)
{
	return r && i < r->nwarnings ? r->warnings[i] : NULL;
}

size_t tacho_cache_result_nnotes(const struct tacho_cache_result *r)
{
	return r ? r->nnotes : 0;
}

const char *tacho_cache_result_note(const struct tacho_cache_result *r, size_t i)
{
	return r && i < r->nnotes ? r->notes[i] : NULL;
}
