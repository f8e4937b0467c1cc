/* map.c - tacho's event names in valgrind's counts: which perf event (generic hardware
 * or cache event) each simulated total stands for, as a table, and why the others have
 * no simulated meaning. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"
#include "util/util.h"
#include "tacho/sim.h"

#define CACHE(id, op, res)                                                              \
	((uint64_t)PERF_COUNT_HW_CACHE_##id | (uint64_t)PERF_COUNT_HW_CACHE_OP_##op << 8 |   \
	 (uint64_t)PERF_COUNT_HW_CACHE_RESULT_##res << 16)

/* An event and the valgrind totals that add up to it. */
struct sim_map {
	uint32_t type;
	uint64_t config;
	const char *sum[3];
};

static const struct sim_map sim_map[] = {
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, { "Ir" } },
	/* valgrind counts conditional (Bc) and indirect (Bi) branches; a direct jump or
	 * call cannot be mispredicted in its model and is not counted */
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, { "Bc", "Bi" } },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, { "Bcm", "Bim" } },
	/* the last level's accesses are the first level's misses */
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, { "I1mr", "D1mr", "D1mw" } },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, { "ILmr", "DLmr", "DLmw" } },
	{ PERF_TYPE_HW_CACHE, CACHE(L1D, READ, ACCESS), { "Dr" } },
	{ PERF_TYPE_HW_CACHE, CACHE(L1D, READ, MISS), { "D1mr" } },
	{ PERF_TYPE_HW_CACHE, CACHE(L1D, WRITE, ACCESS), { "Dw" } },
	{ PERF_TYPE_HW_CACHE, CACHE(L1D, WRITE, MISS), { "D1mw" } },
	{ PERF_TYPE_HW_CACHE, CACHE(L1I, READ, ACCESS), { "Ir" } },
	{ PERF_TYPE_HW_CACHE, CACHE(L1I, READ, MISS), { "I1mr" } },
	{ PERF_TYPE_HW_CACHE, CACHE(LL, READ, ACCESS), { "D1mr" } },
	{ PERF_TYPE_HW_CACHE, CACHE(LL, READ, MISS), { "DLmr" } },
	{ PERF_TYPE_HW_CACHE, CACHE(LL, WRITE, ACCESS), { "D1mw" } },
	{ PERF_TYPE_HW_CACHE, CACHE(LL, WRITE, MISS), { "DLmw" } },
};

static const char default_events[] =
	"instructions,branches,branch-misses,L1-dcache-loads,L1-dcache-load-misses,"
	"L1-dcache-stores,L1-icache-load-misses,LLC-loads,LLC-load-misses,cache-misses";

const char *tacho_sim_default_events(void)
{
	return default_events;
}

/* Why an event has no simulated value, by its kind. */
static const char *no_meaning(const struct perf_event_attr *a)
{
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
		if (a->config == PERF_COUNT_HW_CPU_CYCLES || a->config == PERF_COUNT_HW_REF_CPU_CYCLES ||
		    a->config == PERF_COUNT_HW_BUS_CYCLES ||
		    a->config == PERF_COUNT_HW_STALLED_CYCLES_FRONTEND ||
		    a->config == PERF_COUNT_HW_STALLED_CYCLES_BACKEND)
			return "no simulated value: valgrind's model has no time, so no "
			       "cycles (llvm-mca predicts a block's cycles)";
		return "no simulated value: valgrind simulates no such event";
	case PERF_TYPE_HW_CACHE:
		return "no simulated value: valgrind simulates the I1, D1 and last-level "
		       "caches' reads and writes, no TLB, prefetch or branch-buffer cache";
	case PERF_TYPE_SOFTWARE:
		return "no simulated value: a software event of the kernel would count "
		       "valgrind's own work, not the program's";
	default:
		return "no simulated value: valgrind simulates the instructions, caches "
		       "and branches, not this event";
	}
}

/* The value of a total by name among n. */
static int find_total(const char *const *names, const uint64_t *vals, size_t n,
		      const char *ev, uint64_t *out)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], ev)) {
			*out = vals[i];
			return 0;
		}
	return -TACHO_ENOVALUE;
}

/* attr's value among the totals vals of names (n of each). */
static int map_vals(const char *const *names, const uint64_t *vals, size_t n,
		    const struct perf_event_attr *attr, uint64_t *out, const char **why)
{
	struct perf_event_attr a = { 0 };

	/* read by its own size, as the kernel reads it */
	memcpy(&a, attr, attr->size < sizeof(a) ? attr->size : sizeof(a));
	if (why)
		*why = NULL;
	if (a.exclude_user) {
		if (why)
			*why = "no simulated value: valgrind simulates user space only, and this "
			       "event excludes it";
		return -TACHO_ENOVALUE;
	}
	for (size_t i = 0; i < ARRAY_SIZE(sim_map); i++) {
		const struct sim_map *m = &sim_map[i];
		uint64_t sum = 0, v;

		if (m->type != a.type || m->config != a.config)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(m->sum) && m->sum[k]; k++) {
			if (find_total(names, vals, n, m->sum[k], &v) != 0) {
				if (why)
					*why = "no simulated value: the simulation did not produce "
					       "the counts it needs";
				return -TACHO_ENOVALUE;
			}
			sum += v;
		}
		*out = sum;
		return 0;
	}
	if (why)
		*why = no_meaning(&a);
	return -TACHO_ENOVALUE;
}

const char *tc_sim_event_why(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = { 0 };

	memcpy(&a, attr, attr->size < sizeof(a) ? attr->size : sizeof(a));
	if (a.exclude_user)
		return "no simulated value: valgrind simulates user space only, and this "
		       "event excludes it";
	for (size_t i = 0; i < ARRAY_SIZE(sim_map); i++)
		if (sim_map[i].type == a.type && sim_map[i].config == a.config)
			return NULL;
	return no_meaning(&a);
}

static int map_value(const struct tacho_sim_result *res, long region, bool exclusive,
		     const struct perf_event_attr *attr, uint64_t *out, const char **why)
{
	const char *const *names;
	const uint64_t *vals;
	size_t n;

	if (!res || !attr || !out || attr->size < PERF_ATTR_SIZE_VER0)
		return -EINVAL;
	if (tc_sim_result_values(res, region, exclusive, &names, &vals, &n))
		return -EINVAL;
	return map_vals(names, vals, n, attr, out, why);
}

int tacho_sim_result_value(const struct tacho_sim_result *res,
			   const struct perf_event_attr *attr, uint64_t *out, const char **why)
{
	return map_value(res, -1, false, attr, out, why);
}

int tacho_sim_region_value(const struct tacho_sim_result *res, size_t i,
			   const struct perf_event_attr *attr, bool exclusive, uint64_t *out,
			   const char **why)
{
	if (!res || i >= tacho_sim_result_nregions(res))
		return -EINVAL;
	return map_value(res, (long)i, exclusive, attr, out, why);
}

/* --- views: the places of a result, merged by function, line or instruction --- */

#define TC_SIM_ROW_SZ_V1 tc_offsetofend(struct tacho_sim_row, value)

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int row_cmp(const void *x, const void *y)
{
	const struct tacho_sim_row *a = x, *b = y;
	int c;

	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	if ((c = str_cmp(a->object, b->object)) || (c = str_cmp(a->function, b->function)) ||
	    (c = str_cmp(a->file, b->file)))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->address < b->address ? -1 : a->address > b->address;
}

static bool same_place(const struct tacho_sim_row *a, const struct tacho_sim_row *b)
{
	/* the names are the result's pool's: one pointer per distinct string */
	return a->object == b->object && a->function == b->function && a->file == b->file &&
	       a->line == b->line && a->address == b->address;
}

int tacho_sim_result_rows(const struct tacho_sim_result *res, enum tacho_sim_view view,
			  const struct perf_event_attr *attr, struct tacho_sim_row **out,
			  size_t *n, size_t row_sz, const char **why)
{
	const char *const *names;
	const uint64_t *vals;
	struct tacho_sim_row *rows = NULL, *o;
	struct tc_hmap idx;
	size_t nev, nplaces, nrows = 0;
	uint64_t v;
	int err;

	if (!res || !attr || !out || !n || row_sz < TC_SIM_ROW_SZ_V1 ||
	    (unsigned)view > TACHO_SIM_VIEW_INSTRUCTION)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	err = map_value(res, -1, false, attr, &v, why);
	if (err)
		return err;
	tc_sim_result_values(res, -1, false, &names, &vals, &nev);
	nplaces = tc_sim_result_nplaces(res);
	rows = calloc(nplaces ? nplaces : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	tc_hmap_init(&idx);
	for (size_t i = 0; i < nplaces && !err; i++) {
		struct tacho_sim_row k = { 0 };
		const uint64_t *cost;
		size_t pos = 0;
		uint32_t at;
		uint64_t h;
		bool found = false;

		tc_sim_result_place(res, i, &k.object, &k.function, &k.file, &k.line, &k.address,
				    &cost);
		if (map_vals(names, cost, nev, attr, &k.value, NULL) != 0 || !k.value)
			continue;
		if (view == TACHO_SIM_VIEW_FUNCTION) {
			k.file = NULL;
			k.line = 0;
		}
		if (view != TACHO_SIM_VIEW_INSTRUCTION)
			k.address = 0;
		h = tc_hash_u64((uint64_t)(uintptr_t)k.object ^
				tc_hash_u64((uint64_t)(uintptr_t)k.function) ^
				tc_hash_u64((uint64_t)(uintptr_t)k.file + k.line) ^
				tc_hash_u64(k.address + 1));
		while (tc_hmap_next(&idx, h, &pos, &at))
			if (same_place(&rows[at], &k)) {
				rows[at].value += k.value;
				found = true;
				break;
			}
		if (!found) {
			err = tc_hmap_add(&idx, h, (uint32_t)nrows);
			rows[nrows++] = k;
		}
	}
	tc_hmap_exit(&idx);
	if (err || !nrows) {
		free(rows);
		return err;
	}
	qsort(rows, nrows, sizeof(*rows), row_cmp);
	/* laid out at the caller's stride */
	o = calloc(nrows, row_sz);
	if (!o) {
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nrows; i++)
		tc_sized_put((char *)o + i * row_sz, row_sz, &rows[i], sizeof(rows[i]));
	free(rows);
	*out = o;
	*n = nrows;
	return 0;
}

unsigned tc_sim_event_sims(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = { 0 };
	unsigned sims = 0;

	memcpy(&a, attr, attr->size < sizeof(a) ? attr->size : sizeof(a));
	for (size_t i = 0; i < ARRAY_SIZE(sim_map); i++) {
		const struct sim_map *m = &sim_map[i];

		if (m->type != a.type || m->config != a.config)
			continue;
		/* valgrind counts Ir in every mode; the branches (Bc, Bcm, Bi, Bim) only
		 * with --branch-sim=yes, the data accesses and every miss only with
		 * --cache-sim=yes (cachegrind's and callgrind's manuals) */
		for (size_t k = 0; k < ARRAY_SIZE(m->sum) && m->sum[k]; k++)
			if (m->sum[k][0] == 'B')
				sims |= TACHO_SIM_BRANCHES;
			else if (strcmp(m->sum[k], "Ir"))
				sims |= TACHO_SIM_CACHES;
	}
	return sims;
}
