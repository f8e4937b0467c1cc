/* metrics.c - derived metrics (IPC, CPI, miss ratios, GHz, CPUs utilized, events per
 * second, the average duration of an event) as a const table over counted events.
 * A metric exists only where every input was counted: no input, no metric; a zero
 * denominator gives no metric either, never an infinity or a zero. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "events/metrics.h"
#include "perf/perf.h"
#include "util/util.h"
#include "tacho/events.h"

/* One input of a table metric: an event named by its encoding, so that "cycles",
 * "cpu-cycles" and "cpu/cpu-cycles/" all match. */
struct metric_event {
	uint32_t type;
	uint64_t config;
};

#define HWE(c) { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_##c }
#define SWE(c) { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_##c }
/* generic cache events: id | op << 8 | result << 16 (PERF_TYPE_HW_CACHE in the perf
 * syscall's manual page) */
#define CACHEE(id, op, res)                                                             \
	{ .type = PERF_TYPE_HW_CACHE,                                                   \
	  .config = PERF_COUNT_HW_CACHE_##id | (PERF_COUNT_HW_CACHE_OP_##op << 8) |     \
		    (PERF_COUNT_HW_CACHE_RESULT_##res << 16) }

struct metric_def {
	const char *name;
	const char *unit;
	struct metric_event num, den;
	bool den_is_wall;     /* the denominator is the wall time of the run (ns) */
	double factor;        /* value = factor * num / den */
};

static const struct metric_def metric_defs[] = {
	{ .name = "IPC", .unit = "insn per cycle", .num = HWE(INSTRUCTIONS),
	  .den = HWE(CPU_CYCLES), .factor = 1 },
	{ .name = "CPI", .unit = "cycles per insn", .num = HWE(CPU_CYCLES),
	  .den = HWE(INSTRUCTIONS), .factor = 1 },
	{ .name = "branch-miss ratio", .unit = "%", .num = HWE(BRANCH_MISSES),
	  .den = HWE(BRANCH_INSTRUCTIONS), .factor = 100 },
	{ .name = "cache-miss ratio", .unit = "%", .num = HWE(CACHE_MISSES),
	  .den = HWE(CACHE_REFERENCES), .factor = 100 },
	{ .name = "L1-dcache load-miss ratio", .unit = "%", .num = CACHEE(L1D, READ, MISS),
	  .den = CACHEE(L1D, READ, ACCESS), .factor = 100 },
	{ .name = "LLC load-miss ratio", .unit = "%", .num = CACHEE(LL, READ, MISS),
	  .den = CACHEE(LL, READ, ACCESS), .factor = 100 },
	{ .name = "dTLB load-miss ratio", .unit = "%", .num = CACHEE(DTLB, READ, MISS),
	  .den = CACHEE(DTLB, READ, ACCESS), .factor = 100 },
	{ .name = "stalled frontend", .unit = "% of cycles",
	  .num = HWE(STALLED_CYCLES_FRONTEND), .den = HWE(CPU_CYCLES), .factor = 100 },
	{ .name = "stalled backend", .unit = "% of cycles", .num = HWE(STALLED_CYCLES_BACKEND),
	  .den = HWE(CPU_CYCLES), .factor = 100 },
	/* cycles per nanosecond of task-clock is the average frequency while running */
	{ .name = "GHz", .unit = "GHz", .num = HWE(CPU_CYCLES), .den = SWE(TASK_CLOCK),
	  .factor = 1 },
	{ .name = "CPUs utilized", .unit = "CPUs", .num = SWE(TASK_CLOCK), .den_is_wall = true,
	  .factor = 1 },
};

/* The groups of `stat -M`: each names metrics of the table above and the events
 * (their generic names, which tacho_evlist_parse knows) that count their inputs.
 * test-stat-metrics.c derives each group's metrics from its events' counts. */
static const struct tacho_metric_group metric_groups[] = {
	{ .name = "ipc", .metrics = "IPC, CPI", .events = "instructions,cycles",
	  .counters = "instructions,cycles" },
	{ .name = "branches", .metrics = "branch-miss ratio",
	  .events = "branch-instructions,branch-misses",
	  .counters = "branch-instructions,branch-misses" },
	{ .name = "cache", .metrics = "cache-miss ratio",
	  .events = "cache-references,cache-misses",
	  .counters = "cache-references,cache-misses" },
	{ .name = "l1d", .metrics = "L1-dcache load-miss ratio",
	  .events = "L1-dcache-loads,L1-dcache-load-misses",
	  .counters = "L1-dcache-loads,L1-dcache-load-misses" },
	{ .name = "llc", .metrics = "LLC load-miss ratio",
	  .events = "LLC-loads,LLC-load-misses",
	  .counters = "LLC-loads,LLC-load-misses" },
	{ .name = "tlb", .metrics = "dTLB load-miss ratio",
	  .events = "dTLB-loads,dTLB-load-misses",
	  .counters = "dTLB-loads,dTLB-load-misses" },
	{ .name = "stalls", .metrics = "stalled frontend, stalled backend",
	  .events = "cycles,stalled-cycles-frontend,stalled-cycles-backend",
	  .counters = "cycles,stalled-cycles-frontend,stalled-cycles-backend" },
	{ .name = "frequency", .metrics = "GHz", .events = "cycles,task-clock",
	  .counters = "cycles" },
	/* the one a machine without counters serves: task-clock is a timer */
	{ .name = "utilization", .metrics = "CPUs utilized", .events = "task-clock" },
};

const struct tacho_metric_group *tacho_metric_group_at(size_t i)
{
	return i < ARRAY_SIZE(metric_groups) ? &metric_groups[i] : NULL;
}

/* Whether name is one of list's ", "-separated names, in any case. */
static bool in_names(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncasecmp(p, name, len))
			return true;
		p += n;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return false;
}

const struct tacho_metric_group *tacho_metric_group_find(const char *name)
{
	if (!name || !*name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(metric_groups); i++)
		if (!strcasecmp(metric_groups[i].name, name) ||
		    in_names(metric_groups[i].metrics, name))
			return &metric_groups[i];
	return NULL;
}

static bool is_event(const struct tacho_metric_input *in, const struct perf_event_attr *a,
		     const struct metric_event *e)
{
	return in->has_value && a->type == e->type && a->config == e->config;
}

/* Inputs of one metric must count the same privilege levels: cycles:u with all
 * instructions is no IPC. */
static bool same_rings(const struct perf_event_attr *a, const struct perf_event_attr *b)
{
	return a->exclude_user == b->exclude_user && a->exclude_kernel == b->exclude_kernel &&
	       a->exclude_hv == b->exclude_hv && a->exclude_guest == b->exclude_guest &&
	       a->exclude_host == b->exclude_host;
}

static bool is_clock(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

struct metric_vec {
	struct tacho_metric *m;
	size_t n, alloc;
};

/* Adds a metric named name_a followed by name_b ("avg duration of " NAME, NAME " rate"):
 * the whole name and expression in strings of their own until pack() puts them
 * beside the array, the fixed fields holding what fits. */
static int push(struct metric_vec *v, const char *name_a, const char *name_b,
		const char *unit, double value, int a, int b, const char *expr_a,
		const char *expr_op, const char *expr_b)
{
	struct tacho_metric *m;
	char *name, *expr;

	if (!isfinite(value))
		return 0;
	if (v->n == v->alloc) {
		size_t na = v->alloc ? 2 * v->alloc : 8;
		struct tacho_metric *p = realloc(v->m, na * sizeof(*p));
		if (!p)
			return -ENOMEM;
		v->m = p;
		v->alloc = na;
	}
	if (asprintf(&name, "%s%s", name_a, name_b) < 0)
		return -ENOMEM;
	if (asprintf(&expr, "%s %s %s", expr_a, expr_op, expr_b) < 0) {
		free(name);
		return -ENOMEM;
	}
	m = &v->m[v->n++];
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
	snprintf(m->expr, sizeof(m->expr), "%s", expr);
	m->full_name = name;
	m->full_expr = expr;
	m->value = value;
	m->inputs[0] = a;
	m->inputs[1] = b;
	return 0;
}

static void vec_free(struct metric_vec *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free((char *)v->m[i].full_name);
		free((char *)v->m[i].full_expr);
	}
	free(v->m);
}

/* The bytes the metrics' strings take, terminators included. */
static size_t strings_size(const struct tacho_metric *m, size_t n)
{
	size_t bytes = 0;

	for (size_t i = 0; i < n; i++)
		bytes += strlen(m[i].full_name) + 1 + strlen(m[i].full_expr) + 1;
	return bytes;
}

/* Copies s to *at and moves *at past it: the strings' area after an array. */
static const char *put_string(char **at, const char *s)
{
	size_t len = strlen(s) + 1;
	char *d = memcpy(*at, s, len);

	*at += len;
	return d;
}

/* One allocation for the caller to free(): the array, then the strings it points to. */
static int pack(struct metric_vec *v, struct tacho_metric **out)
{
	size_t head = v->n * sizeof(*v->m);
	struct tacho_metric *m;
	char *at;

	if (!v->n) {
		*out = NULL;
		return 0;
	}
	m = malloc(head + strings_size(v->m, v->n));
	if (!m)
		return -ENOMEM;
	at = (char *)m + head;
	for (size_t i = 0; i < v->n; i++) {
		m[i] = v->m[i];
		m[i].full_name = put_string(&at, v->m[i].full_name);
		m[i].full_expr = put_string(&at, v->m[i].full_expr);
	}
	*out = m;
	return 0;
}

/* x86 PerfEvtSel layout (SDM Vol. 3B 20.2.1.1; AMD APM Vol. 2 13.2.1): event 7:0,
 * umask 15:8, edge 18, inv 23, cmask 31:24 (AMD's event 11:8 sits at 35:32). */
#define X86_EDGE (1ull << 18)
#define X86_CMASK_SHIFT 24
#define X86_CMASK (0xffull << X86_CMASK_SHIFT)

static unsigned cmask_of(uint64_t c)
{
	return (unsigned)((c & X86_CMASK) >> X86_CMASK_SHIFT);
}

/* The average duration of an event: its cycles (cmask=1: cycles with at least one
 * occurrence in progress; the Pentium's CESR "count cycles" bit, seed 000) over its
 * occurrences (cmask=1 with edge: the starts; or the plain event). */
static int durations(struct metric_vec *v, const struct tacho_metric_input *in,
		     const struct perf_event_attr *attrs, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		const struct perf_event_attr *ca = &attrs[c];
		int best = -1;

		if (!in[c].has_value || ca->type != PERF_TYPE_RAW || cmask_of(ca->config) != 1 ||
		    (ca->config & X86_EDGE))
			continue;
		for (size_t o = 0; o < n; o++) {
			const struct perf_event_attr *oa = &attrs[o];
			uint64_t base_c = ca->config & ~(X86_CMASK | X86_EDGE);
			uint64_t base_o = oa->config & ~(X86_CMASK | X86_EDGE);
			bool edge, plain;

			if (o == c || !in[o].has_value || oa->type != ca->type || base_o != base_c ||
			    !same_rings(ca, oa))
				continue;
			edge = cmask_of(oa->config) == 1 && (oa->config & X86_EDGE);
			plain = cmask_of(oa->config) == 0 && !(oa->config & X86_EDGE);
			if (edge) {
				best = (int)o;
				break;
			}
			if (plain && best < 0)
				best = (int)o;
		}
		if (best >= 0 && in[best].value > 0) {
			int err = push(v, "avg duration of ", in[best].name, "cycles",
				       in[c].value / in[best].value, (int)c, best, in[c].name, "/",
				       in[best].name);
			if (err)
				return err;
		}
	}
	return 0;
}

int tc_metrics_compute(const struct tacho_metric_input *in, size_t n, double wall_ns,
		       const char *wall_name, struct tacho_metric **out, size_t *nout)
{
	struct metric_vec v = { 0 };
	struct perf_event_attr *attrs;
	int task_clock = -1, err = 0;

	if (!out || !nout || (n && !in))
		return -EINVAL;
	*out = NULL;
	*nout = 0;
	if (!wall_name)
		wall_name = "wall time";
	/* each attr read by its own size, as the kernel reads one; an input without a
	 * value is ignored, its attr with it */
	attrs = calloc(n ? n : 1, sizeof(*attrs));
	if (!attrs)
		return -ENOMEM;
	for (size_t a = 0; a < n && !err; a++)
		if (in[a].has_value)
			err = tc_perf_attr_copy(&attrs[a], in[a].attr);
	for (size_t d = 0; d < ARRAY_SIZE(metric_defs) && !err; d++) {
		const struct metric_def *def = &metric_defs[d];
		for (size_t a = 0; a < n && !err; a++) {
			if (!is_event(&in[a], &attrs[a], &def->num))
				continue;
			if (def->den_is_wall) {
				if (wall_ns > 0)
					err = push(&v, def->name, "", def->unit,
						   def->factor * in[a].value / wall_ns, (int)a, -1,
						   in[a].name, "/", wall_name);
				continue;
			}
			for (size_t b = 0; b < n; b++) {
				if (b == a || !is_event(&in[b], &attrs[b], &def->den) ||
				    !same_rings(&attrs[a], &attrs[b]))
					continue;
				if (in[b].value > 0)
					err = push(&v, def->name, "", def->unit,
						   def->factor * in[a].value / in[b].value, (int)a,
						   (int)b, in[a].name, "/", in[b].name);
				break;
			}
		}
	}
	if (!err)
		err = durations(&v, in, attrs, n);
	/* events per second of running time (task-clock), else of wall time */
	for (size_t a = 0; a < n; a++)
		if (in[a].has_value && attrs[a].type == PERF_TYPE_SOFTWARE &&
		    attrs[a].config == PERF_COUNT_SW_TASK_CLOCK && in[a].value > 0) {
			task_clock = (int)a;
			break;
		}
	for (size_t a = 0; a < n && !err; a++) {
		double secs;

		if (!in[a].has_value || is_clock(&attrs[a]))
			continue;
		secs = task_clock >= 0 ? in[task_clock].value * 1e-9 : wall_ns * 1e-9;
		if (!(secs > 0))
			continue;
		err = push(&v, in[a].name, " rate", "/sec", in[a].value / secs, (int)a,
			   task_clock, in[a].name, "/",
			   task_clock >= 0 ? in[task_clock].name : wall_name);
	}
	free(attrs);
	if (!err)
		err = pack(&v, out);
	if (!err)
		*nout = v.n;
	vec_free(&v);
	return err;
}

/* The first versions: struct tacho_metric_input ends at has_value, struct tacho_metric
 * at inputs; the second struct tacho_metric at full_expr. */
#define INPUT_SZ_V1 tc_offsetofend(struct tacho_metric_input, has_value)
#define METRIC_SZ_V1 tc_offsetofend(struct tacho_metric, inputs)
#define METRIC_SZ_V2 tc_offsetofend(struct tacho_metric, full_expr)

int tacho_metrics_compute(const struct tacho_metric_input *in, size_t n, size_t in_sz,
			  double wall_ns, struct tacho_metric **out, size_t *nout,
			  size_t metric_sz)
{
	struct tacho_metric_input *inputs = NULL;
	struct tacho_metric *m = NULL;
	char *laid, *at;
	bool with_strings;
	size_t nm = 0;
	int err;

	if (!out || !nout || (n && (!in || in_sz < INPUT_SZ_V1)) || metric_sz < METRIC_SZ_V1)
		return -EINVAL;
	*out = NULL;
	*nout = 0;
	/* the caller's inputs at its stride, fields its version lacks as 0 */
	inputs = calloc(n ? n : 1, sizeof(*inputs));
	if (!inputs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		tc_sized_get(&inputs[i], sizeof(inputs[i]), TC_CONST_ELEM(in, i, in_sz), in_sz);
	err = tc_metrics_compute(inputs, n, wall_ns, NULL, &m, &nm);
	free(inputs);
	if (err || !nm)
		return err;
	/* laid out at the caller's stride: the fields its version has, and the strings
	 * after the array when it has their pointers (copied in: the caller's stride need
	 * not align them) */
	with_strings = metric_sz >= METRIC_SZ_V2;
	laid = calloc(1, nm * metric_sz + (with_strings ? strings_size(m, nm) : 0));
	if (!laid) {
		free(m);
		return -ENOMEM;
	}
	at = laid + nm * metric_sz;
	for (size_t i = 0; i < nm; i++) {
		char *el = TC_ELEM(laid, i, metric_sz);

		/* a pointer into m, freed below, is never handed out: without room for
		 * both, the caller gets the first version's fields alone */
		tc_sized_put(el, metric_sz, &m[i], with_strings ? sizeof(m[i]) : METRIC_SZ_V1);
		if (with_strings) {
			const char *name = put_string(&at, m[i].full_name);
			const char *expr = put_string(&at, m[i].full_expr);

			memcpy(el + offsetof(struct tacho_metric, full_name), &name, sizeof(name));
			memcpy(el + offsetof(struct tacho_metric, full_expr), &expr, sizeof(expr));
		}
	}
	free(m);
	*out = (struct tacho_metric *)(void *)laid;
	*nout = nm;
	return 0;
}
