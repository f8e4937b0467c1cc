/* schedule.c - the counter scheduler: how many counters the CPU gives a task, and which
 * events share a run of the program and a perf group so that nothing is multiplexed
 * (P5Stat ran the program once per pair of events; seed 000) unless asked to.
 *
 * The rule that matters: a group is placed only where it fits. An event or group that
 * can never fit (a user group wider than the counters, a fixed-only event on a CPU
 * without that fixed counter) is marked with the reason and never opened, instead of
 * being opened, left unscheduled by the kernel and reported as a silent zero. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"
#include "stat/schedule.h"
#include "tacho/cpu.h"
#include "tacho/events.h"
#include "tacho/stat.h"

/* Intel's architectural fixed counters (SDM Vol. 3B 20.2.2, "Fixed-function performance
 * counters"): IA32_FIXED_CTR0 counts INST_RETIRED.ANY, CTR1 CPU_CLK_UNHALTED.THREAD,
 * CTR2 CPU_CLK_UNHALTED.REF_TSC. The kernel places an event there when its encoding
 * matches exactly (no edge, inv or cmask), or for the generic events below. */
#define FIXED_INSTRUCTIONS 0
#define FIXED_CYCLES 1
#define FIXED_REF_CYCLES 2
/* TOPDOWN.SLOTS, Ice Lake and later (SDM Vol. 3B, "Performance Metrics") */
#define FIXED_SLOTS 3

/* The encodings (event | umask << 8) that the kernel maps to a fixed counter. 0x0300 is
 * the kernel's pseudo-encoding for REF_TSC, which no general counter can count. */
static const struct {
	uint64_t config;
	int fixed;
	bool fixed_only;
} intel_fixed_raw[] = {
	{ .config = 0x00c0, .fixed = FIXED_INSTRUCTIONS },  /* INST_RETIRED.ANY_P */
	{ .config = 0x0100, .fixed = FIXED_INSTRUCTIONS, .fixed_only = true }, /* INST_RETIRED.ANY */
	{ .config = 0x003c, .fixed = FIXED_CYCLES },        /* CPU_CLK_UNHALTED.THREAD_P */
	{ .config = 0x0300, .fixed = FIXED_REF_CYCLES, .fixed_only = true },
	/* the kernel widens every fixed constraint to the general counters except
	 * REF_TSC's and the topdown slots' (arch/x86/events/intel/core.c,
	 * intel_pmu_check_event_constraints) */
	{ .config = 0x0400, .fixed = FIXED_SLOTS, .fixed_only = true },
};

/* The kernel's names for the core PMU (hybrid parts have two). */
static bool core_pmu_name(const char *name)
{
	return name && (!strcmp(name, "cpu") || !strcmp(name, "cpu_core") ||
			!strcmp(name, "cpu_atom"));
}

struct tc_sched_item tc_sched_classify(const struct perf_event_attr *a,
				       enum tacho_event_source src, const char *pmu_name,
				       const struct tacho_pmu_counters *pmu)
{
	struct tc_sched_item it = { .kind = TC_SCHED_FREE, .fixed_idx = -1 };

	(void)src;
	switch (a->type) {
	case PERF_TYPE_SOFTWARE:
	case PERF_TYPE_TRACEPOINT:
		return it;
	case PERF_TYPE_BREAKPOINT:
		it.kind = TC_SCHED_BREAKPOINT;
		return it;
	case PERF_TYPE_HARDWARE:
		it.kind = TC_SCHED_GP;
		it.first = (a->config & 0xffffffffu) == PERF_COUNT_HW_CPU_CYCLES ||
			   (a->config & 0xffffffffu) == PERF_COUNT_HW_INSTRUCTIONS;
		/* a precise (PEBS) event may be moved to another encoding on a general
		 * counter; planning it on a general one never over-fills a run. Not
		 * ref-cycles: it exists on fixed counter 2 alone, precise or not. */
		if (pmu && pmu->fixed_intel) {
			/* the low 32 bits name the generic event; the high ones a hybrid PMU */
			switch (a->config & 0xffffffffu) {
			case PERF_COUNT_HW_INSTRUCTIONS:
				if (a->precise_ip)
					break;
				it.kind = TC_SCHED_FIXED_OR_GP;
				it.fixed_idx = FIXED_INSTRUCTIONS;
				break;
			case PERF_COUNT_HW_CPU_CYCLES:
				if (a->precise_ip)
					break;
				it.kind = TC_SCHED_FIXED_OR_GP;
				it.fixed_idx = FIXED_CYCLES;
				break;
			case PERF_COUNT_HW_REF_CPU_CYCLES:
				it.kind = TC_SCHED_FIXED_ONLY;
				it.fixed_idx = FIXED_REF_CYCLES;
				break;
			}
		}
		return it;
	case PERF_TYPE_HW_CACHE:
		/* its config is id | op << 8 | result << 16, not an x86 encoding: never
		 * compare it with the fixed counters' (L1-dcache-stores is 0x100) */
		it.kind = TC_SCHED_GP;
		return it;
	case PERF_TYPE_RAW:
		it.kind = TC_SCHED_GP;
		break;
	default:
		/* a dynamic PMU: the core one ("cpu", "cpu_core", "cpu_atom") competes for
		 * the counters; the others (msr, power, uncore, uprobe) bring their own */
		if (!core_pmu_name(pmu_name))
			return it;
		it.kind = TC_SCHED_GP;
		break;
	}
	if (pmu && pmu->fixed_intel) {
		/* raw encodings: the bits the kernel compares with a fixed counter's code
		 * (arch/x86/events/perf_event.h FIXED_EVENT_FLAGS: X86_RAW_EVENT_MASK plus
		 * in_tx, in_tx_cp) must match exactly: 7:0 event, 15:8 umask, 18 edge,
		 * 23 inv, 31:24 cmask, 32 in_tx, 33 in_tx_cp. The others (16 usr, 17 os,
		 * 19 pc, 20 int, 21 any, 22 en) the kernel sets itself or lets a fixed
		 * counter do too (IA32_FIXED_CTR_CTRL has its own AnyThread bit, SDM
		 * 20.2.2), so they do not move the event off the fixed counter. */
		uint64_t c = a->config & 0x3ff84ffffull;
		for (size_t i = 0; i < ARRAY_SIZE(intel_fixed_raw); i++) {
			if (c != intel_fixed_raw[i].config)
				continue;
			/* precise: a general counter, as above, unless the event has no
			 * encoding there (ref-cycles, slots) */
			if (a->precise_ip && !intel_fixed_raw[i].fixed_only)
				continue;
			it.kind = intel_fixed_raw[i].fixed_only ? TC_SCHED_FIXED_ONLY :
								  TC_SCHED_FIXED_OR_GP;
			it.fixed_idx = intel_fixed_raw[i].fixed;
		}
	}
	return it;
}

/* --- the schedule --- */

struct sched_group {
	unsigned *ev;
	unsigned n, alloc;
	bool user;          /* a user group: nothing else joins it */
	bool counters;      /* the run's automatic group of counter events */
	unsigned gp_used;   /* multiplex mode: counters are per group */
	uint32_t fixed_used;
};

struct sched_run {
	struct sched_group *g;
	unsigned ng, galloc;
	unsigned gp_used, bp_used;
	uint32_t fixed_used;
	int auto_group;     /* index of the automatic counter group, -1 none yet */
	unsigned nopen;     /* events placed in the run (descriptors, pmu.max_events) */
};

struct tc_schedule {
	unsigned nev;
	struct tc_sched_slot *slots;
	char **why;         /* owned reason strings, one per event (NULL if placed) */
	struct sched_run *runs;
	unsigned nruns, ralloc;
	unsigned flags;
	bool descriptor_bound;   /* pmu.max_events kept an event out of a run */
	struct tacho_pmu_counters pmu;
};

static int group_add(struct sched_group *g, unsigned ev)
{
	if (g->n == g->alloc) {
		unsigned a = g->alloc ? 2 * g->alloc : 4;
		unsigned *p = realloc(g->ev, a * sizeof(*p));
		if (!p)
			return -ENOMEM;
		g->ev = p;
		g->alloc = a;
	}
	g->ev[g->n++] = ev;
	return 0;
}

static int run_new_group(struct sched_run *r)
{
	if (r->ng == r->galloc) {
		unsigned a = r->galloc ? 2 * r->galloc : 4;
		struct sched_group *p = realloc(r->g, a * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->g = p;
		r->galloc = a;
	}
	memset(&r->g[r->ng], 0, sizeof(r->g[r->ng]));
	return (int)r->ng++;
}

static int sched_new_run(struct tc_schedule *s)
{
	if (s->nruns == s->ralloc) {
		unsigned a = s->ralloc ? 2 * s->ralloc : 4;
		struct sched_run *p = realloc(s->runs, a * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->runs = p;
		s->ralloc = a;
	}
	memset(&s->runs[s->nruns], 0, sizeof(s->runs[s->nruns]));
	s->runs[s->nruns].auto_group = -1;
	return (int)s->nruns++;
}

/* One unit: a user group, or a single event. */
struct unit {
	unsigned *ev;
	unsigned n;
	unsigned group;
};

/* What a unit needs, given the fixed counters already taken (fixed_busy). Fixed
 * counters first, general ones for the rest; false if a fixed-only event finds its
 * counter missing or taken. */
static bool unit_needs(const struct tc_schedule *s, const struct tc_sched_item *items,
		       const struct unit *u, uint32_t fixed_busy, unsigned *gp, unsigned *bp,
		       uint32_t *fixed, bool *free_only)
{
	bool ok = true;

	*gp = *bp = 0;
	*fixed = 0;
	*free_only = true;
	for (unsigned i = 0; i < u->n; i++) {
		const struct tc_sched_item *it = &items[u->ev[i]];
		uint32_t bit = it->fixed_idx >= 0 && it->fixed_idx < 32 ? 1u << it->fixed_idx : 0;

		switch (it->kind) {
		case TC_SCHED_FREE:
			break;
		case TC_SCHED_BREAKPOINT:
			(*bp)++;
			*free_only = false;
			break;
		case TC_SCHED_GP:
			(*gp)++;
			*free_only = false;
			break;
		case TC_SCHED_FIXED_OR_GP:
		case TC_SCHED_FIXED_ONLY:
			*free_only = false;
			if (bit && (s->pmu.fixed_mask & bit) && !(fixed_busy & bit) && !(*fixed & bit))
				*fixed |= bit;
			else if (it->kind == TC_SCHED_FIXED_ONLY)
				ok = false;
			else
				(*gp)++;
			break;
		}
	}
	return ok;
}

static void set_why(struct tc_schedule *s, const struct unit *u, const char *fmt, ...)
	TC_PRINTF(3, 4);
static void set_why(struct tc_schedule *s, const struct unit *u, const char *fmt, ...)
{
	for (unsigned i = 0; i < u->n; i++) {
		struct tc_sb sb = TC_SB_INIT;
		unsigned e = u->ev[i];
		va_list ap;

		va_start(ap, fmt);
		tc_sb_vaddf(&sb, fmt, ap);
		va_end(ap);
		s->why[e] = tc_sb_detach(&sb);
		s->slots[e].run = -1;
		s->slots[e].group = -1;
		s->slots[e].fixed = false;
		s->slots[e].why = s->why[e] ? s->why[e] : "cannot be placed on the counters";
	}
}

/* Records the members of u in group g of run r, marking which sit on fixed counters. */
static int place(struct tc_schedule *s, const struct tc_sched_item *items,
		 const struct unit *u, unsigned r, unsigned g, uint32_t fixed_before)
{
	struct sched_group *grp = &s->runs[r].g[g];
	uint32_t taken = fixed_before;

	for (unsigned i = 0; i < u->n; i++) {
		const struct tc_sched_item *it = &items[u->ev[i]];
		struct tc_sched_slot *sl = &s->slots[u->ev[i]];
		uint32_t bit = it->fixed_idx >= 0 && it->fixed_idx < 32 ? 1u << it->fixed_idx : 0;
		int err = group_add(grp, u->ev[i]);

		if (err)
			return err;
		s->runs[r].nopen++;
		sl->run = (int)r;
		sl->group = (int)g;
		sl->fixed = false;
		sl->why = NULL;
		if ((it->kind == TC_SCHED_FIXED_OR_GP || it->kind == TC_SCHED_FIXED_ONLY) && bit &&
		    (s->pmu.fixed_mask & bit) && !(taken & bit)) {
			sl->fixed = true;
			taken |= bit;
		}
	}
	return 0;
}

/* Whether run r can open k more events under the descriptor limit. */
static bool run_has_room(struct tc_schedule *s, unsigned r, unsigned k)
{
	if (!s->pmu.max_events || s->runs[r].nopen + k <= s->pmu.max_events)
		return true;
	s->descriptor_bound = true;
	return false;
}

/* The first run from `from` that has room for k more events, a new one when none
 * has: its index, or a negative error. */
static int run_with_room(struct tc_schedule *s, unsigned from, unsigned k)
{
	unsigned r;
	int err;

	for (r = from; r < s->nruns; r++)
		if (run_has_room(s, r, k))
			return (int)r;
	err = sched_new_run(s);
	return err < 0 ? err : (int)(s->nruns - 1);
}

static int place_unit(struct tc_schedule *s, const struct tc_sched_item *items,
		      const struct unit *u)
{
	const struct tacho_pmu_counters *pmu = &s->pmu;
	bool mux = s->flags & TACHO_SCHED_MULTIPLEX;
	bool limited = pmu->known && !pmu->none;
	unsigned gp, bp, r, g;
	uint32_t fixed;
	bool free_only;
	int err, ng;

	/* does it fit an empty run at all? */
	if (!unit_needs(s, items, u, 0, &gp, &bp, &fixed, &free_only) && limited) {
		set_why(s, u, "needs a fixed counter this CPU does not offer (%s)", pmu->source);
		return 0;
	}
	if (limited && gp > pmu->gp) {
		set_why(s, u, "%s %u general-purpose counters at once; the CPU gives a task %u "
			      "(%s)", u->n > 1 ? "this group needs" : "needs", gp, pmu->gp,
			pmu->source);
		return 0;
	}
	if (bp > pmu->breakpoints) {
		set_why(s, u, "this group needs %u breakpoint registers at once; x86 has %u", bp,
			pmu->breakpoints);
		return 0;
	}
	if (!mux && pmu->max_events && u->n > pmu->max_events) {
		set_why(s, u, "this group needs %u file descriptors at once; the descriptor "
			      "limit (ulimit -n) leaves room for %u events at a time", u->n,
			pmu->max_events);
		return 0;
	}
	if (s->nruns == 0 && (err = sched_new_run(s)) < 0)
		return err;

	if (free_only) {
		/* software events and tracepoints count in the first run (with a
		 * descriptor limit: the first that has room) */
		int fr = mux ? 0 : run_with_room(s, 0, u->n);
		if (fr < 0)
			return fr;
		ng = run_new_group(&s->runs[fr]);
		if (ng < 0)
			return ng;
		s->runs[fr].g[ng].user = u->group != 0;
		return place(s, items, u, (unsigned)fr, (unsigned)ng, 0);
	}

	if (!limited) {
		/* counters unknown, or none (then the kernel's refusal, explained, is the
		 * honest answer): every counter event alone in the first run */
		if (bp) {
			for (r = 0; r < s->nruns; r++)
				if (s->runs[r].bp_used + bp <= pmu->breakpoints &&
				    (mux || run_has_room(s, r, u->n)))
					break;
			if (r == s->nruns && (err = sched_new_run(s)) < 0)
				return err;
		} else {
			int fr = mux ? 0 : run_with_room(s, 0, u->n);
			if (fr < 0)
				return fr;
			r = (unsigned)fr;
		}
		ng = run_new_group(&s->runs[r]);
		if (ng < 0)
			return ng;
		s->runs[r].g[ng].user = u->group != 0;
		s->runs[r].bp_used += bp;
		return place(s, items, u, r, (unsigned)ng, 0);
	}

	if (!mux) {
		/* first fit over runs: the whole run shares the counters */
		for (r = 0;; r++) {
			struct sched_run *run;
			if (r == s->nruns && (err = sched_new_run(s)) < 0)
				return err;
			run = &s->runs[r];
			if (!unit_needs(s, items, u, run->fixed_used, &gp, &bp, &fixed, &free_only))
				continue;
			if (run->gp_used + gp > pmu->gp || run->bp_used + bp > pmu->breakpoints ||
			    !run_has_room(s, r, u->n))
				continue;
			if (u->group || bp) {
				ng = run_new_group(run);
				if (ng < 0)
					return ng;
				run->g[ng].user = u->group != 0;
			} else {
				if (run->auto_group < 0) {
					ng = run_new_group(run);
					if (ng < 0)
						return ng;
					run->g[ng].counters = true;
					run->auto_group = ng;
				}
				ng = run->auto_group;
			}
			err = place(s, items, u, r, (unsigned)ng, run->fixed_used);
			run->gp_used += gp;
			run->bp_used += bp;
			run->fixed_used |= fixed;
			return err;
		}
	}

	/* multiplex: one run (more only for breakpoints, which the kernel cannot rotate:
	 * it reserves a debug register at open); counters are shared per group */
	for (r = 0;; r++) {
		struct sched_run *run;
		if (r == s->nruns && (err = sched_new_run(s)) < 0)
			return err;
		run = &s->runs[r];
		if (run->bp_used + bp > pmu->breakpoints)
			continue;
		if (u->group || bp) {
			unit_needs(s, items, u, 0, &gp, &bp, &fixed, &free_only);
			ng = run_new_group(run);
			if (ng < 0)
				return ng;
			run->g[ng].user = u->group != 0;
		} else {
			for (g = 0; g < run->ng; g++) {
				struct sched_group *grp = &run->g[g];
				if (!grp->counters)
					continue;
				if (unit_needs(s, items, u, grp->fixed_used, &gp, &bp, &fixed,
					       &free_only) &&
				    grp->gp_used + gp <= pmu->gp)
					break;
			}
			if (g == run->ng) {
				ng = run_new_group(run);
				if (ng < 0)
					return ng;
				run->g[ng].counters = true;
				unit_needs(s, items, u, 0, &gp, &bp, &fixed, &free_only);
			} else {
				ng = (int)g;
			}
		}
		err = place(s, items, u, r, (unsigned)ng, run->g[ng].fixed_used);
		run->g[ng].gp_used += gp;
		run->g[ng].fixed_used |= fixed;
		run->bp_used += bp;
		return err;
	}
}

void tc_schedule_free(struct tc_schedule *s)
{
	if (!s)
		return;
	for (unsigned r = 0; r < s->nruns; r++) {
		for (unsigned g = 0; g < s->runs[r].ng; g++)
			free(s->runs[r].g[g].ev);
		free(s->runs[r].g);
	}
	free(s->runs);
	if (s->why)
		for (unsigned i = 0; i < s->nev; i++)
			free(s->why[i]);
	free(s->why);
	free(s->slots);
	free(s);
}

int tc_schedule_build(const struct tc_sched_item *items, size_t n,
		      const struct tacho_pmu_counters *pmu, unsigned flags,
		      struct tc_schedule **out)
{
	struct tc_schedule *s;
	struct unit *units = NULL;
	unsigned *order = NULL;
	size_t nu = 0;
	int err = 0;

	if (!out || !pmu || (n && !items) || n > UINT32_MAX / 2)
		return -EINVAL;
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->nev = (unsigned)n;
	s->flags = flags;
	s->pmu = *pmu;
	s->slots = calloc(n ? n : 1, sizeof(*s->slots));
	s->why = calloc(n ? n : 1, sizeof(*s->why));
	units = calloc(n ? n : 1, sizeof(*units));
	order = calloc(n ? n : 1, sizeof(*order));
	if (!s->slots || !s->why || !units || !order) {
		err = -ENOMEM;
		goto out;
	}
	/* units in the order of their first event; a user group's members are gathered
	 * (order[] holds them contiguously) */
	{
		size_t used = 0;
		bool *done = calloc(n ? n : 1, sizeof(*done));
		if (!done) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			if (done[i])
				continue;
			units[nu].ev = &order[used];
			units[nu].group = items[i].group;
			for (size_t j = i; j < n; j++) {
				if (j == i || (items[i].group && items[j].group == items[i].group &&
					       !done[j])) {
					order[used++] = (unsigned)j;
					done[j] = true;
					units[nu].n++;
				}
			}
			nu++;
		}
		free(done);
	}
	/* cycles and instructions (alone or in a group) first, then the rest, each in
	 * the order given */
	for (int pass = 0; pass < 2 && !err; pass++)
		for (size_t u = 0; u < nu && !err; u++) {
			bool first = false;
			for (unsigned k = 0; k < units[u].n; k++)
				first |= items[units[u].ev[k]].first;
			if (first == (pass == 0))
				err = place_unit(s, items, &units[u]);
		}
out:
	free(units);
	free(order);
	if (err) {
		tc_schedule_free(s);
		return err;
	}
	*out = s;
	return 0;
}

int tc_schedule_new(const struct tacho_evlist *events,
		       const struct tacho_pmu_counters *caller_pmu, unsigned flags,
		       struct tc_schedule **out)
{
	struct tacho_pmu_counters pmu_copy, *pmu = &pmu_copy;
	struct tc_sched_item *items;
	size_t n;
	int err;

	if (!events || !caller_pmu || !out || caller_pmu->sz < TC_PMU_COUNTERS_SZ_V1)
		return -EINVAL;
	/* the caller's version: the fields it lacks read as 0 */
	tc_sized_get(pmu, sizeof(*pmu), caller_pmu, caller_pmu->sz);
	pmu->sz = sizeof(*pmu);
	n = tacho_evlist_count(events);
	items = calloc(n ? n : 1, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct perf_event_attr attr;
		int leader;

		err = tacho_evlist_attr(events, i, &attr);
		if (err) {
			free(items);
			return err;
		}
		items[i] = tc_sched_classify(&attr, tacho_evlist_source(events, i),
					     tacho_evlist_pmu(events, i), pmu);
		leader = tc_evlist_group_leader(events, i);
		items[i].group = leader >= 0 ? (unsigned)leader + 1 : 0;
	}
	err = tc_schedule_build(items, n, pmu, flags, out);
	free(items);
	return err;
}

unsigned tc_schedule_nruns(const struct tc_schedule *s)
{
	return s ? s->nruns : 0;
}

unsigned tc_schedule_nevents(const struct tc_schedule *s)
{
	return s ? s->nev : 0;
}

bool tc_schedule_descriptor_bound(const struct tc_schedule *s)
{
	return s && s->descriptor_bound;
}

unsigned tc_schedule_ngroups(const struct tc_schedule *s, unsigned run)
{
	return s && run < s->nruns ? s->runs[run].ng : 0;
}

const unsigned *tc_schedule_group(const struct tc_schedule *s, unsigned run,
				     unsigned group, unsigned *n)
{
	if (!s || run >= s->nruns || group >= s->runs[run].ng) {
		if (n)
			*n = 0;
		return NULL;
	}
	if (n)
		*n = s->runs[run].g[group].n;
	return s->runs[run].g[group].ev;
}

const struct tc_sched_slot *tc_schedule_slot(const struct tc_schedule *s, unsigned ev)
{
	return s && ev < s->nev ? &s->slots[ev] : NULL;
}

const struct tacho_pmu_counters *tc_schedule_counters(const struct tc_schedule *s)
{
	return s ? &s->pmu : NULL;
}
