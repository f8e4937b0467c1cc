/* counters.c - tacho_counters, the public counting API, on the engine's list: a target
 * made into a grid, the specs into groups, and each read value into a status with a
 * sentence that says why when there is no value. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "perf/engine.h"
#include "tacho/counters.h"
#include "tacho/errors.h"

struct cnt_event {
	char *why;                     /* NOT_SUPPORTED: the explanation (owned) */
	enum tacho_hint hint;
	int err;
};

struct tacho_counters {
	struct tacho_counters_opts opts;
	struct tc_perf_list *list;
	struct cnt_event *ev;
	size_t nev;
	struct tc_perf_count *vals;    /* [nev]: tacho_counters_read's scratch, no malloc per read */
};

const char *tacho_count_status_name(enum tacho_count_status s)
{
	static const char *const names[] = {
		[TACHO_COUNT_COUNTED] = "counted",
		[TACHO_COUNT_MULTIPLEXED] = "multiplexed",
		[TACHO_COUNT_NOT_COUNTED] = "not counted",
		[TACHO_COUNT_NOT_SUPPORTED] = "not supported",
		[TACHO_COUNT_SIMULATED] = "simulated",
	};

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

/* The grid of a target: one thread; every thread of a process; a child before exec;
 * CPUs. */
static int make_grid(const struct tacho_counters_opts *o, struct tc_perf_grid *g)
{
	pid_t *tids = NULL;
	int *cpus = NULL;
	size_t n = 0;
	int err;

	switch (o->target) {
	case TACHO_TARGET_THREAD:
	case TACHO_TARGET_CHILD:
		if (o->pid < 0 || (o->target == TACHO_TARGET_CHILD && o->pid == 0))
			return -EINVAL;
		return tc_perf_grid_init(g, NULL, 0, &o->pid, 1);
	case TACHO_TARGET_PROCESS:
		if (o->pid < 0)
			return -EINVAL;
		err = tc_proc_threads(o->pid, &tids, &n);
		if (err)
			return err;
		err = tc_perf_grid_init(g, NULL, 0, tids, n);
		free(tids);
		return err;
	case TACHO_TARGET_CPUS:
		if (o->ncpus) {
			if (!o->cpus)
				return -EINVAL;
			for (size_t i = 0; i < o->ncpus; i++)
				if (o->cpus[i] < 0)
					return -EINVAL;
			return tc_perf_grid_init(g, o->cpus, o->ncpus, NULL, 0);
		}
		err = tc_online_cpus(&cpus, &n);
		if (err)
			return err;
		err = tc_perf_grid_init(g, cpus, n, NULL, 0);
		free(cpus);
		return err;
	}
	return -EINVAL;
}

void tacho_counters_free(struct tacho_counters *c)
{
	if (!c)
		return;
	tc_perf_list_free(c->list);
	for (size_t i = 0; c->ev && i < c->nev; i++)
		free(c->ev[i].why);
	free(c->ev);
	free(c->vals);
	free(c);
}

/* Why each event that opened nowhere did not open, in the explainer's words. */
static int explain_failures(struct tacho_counters *c)
{
	struct tc_perf_env env;
	bool env_probed = false;

	for (size_t i = 0; i < c->nev; i++) {
		struct tc_perf_ev *e = tc_perf_list_event(c->list, i);
		struct cnt_event *ce = &c->ev[i];
		struct perf_event_attr a;
		unsigned flags;
		char why[512];

		if (tc_perf_ev_nopen(e))
			continue;
		ce->err = tc_perf_ev_error(e, &flags, &a);
		if (!ce->err) {
			/* a process target whose threads all ended */
			ce->err = -ESRCH;
			ce->why = tc_strdup("the target ended before its counters could open");
		} else {
			if (!env_probed) {
				tc_perf_env_probe(&env);
				env_probed = true;
			}
			tc_perf_explain(&env, ce->err, &a, NULL, flags, why, sizeof(why), &ce->hint);
			ce->why = tc_strdup(why);
			tc_log(TACHO_LOG_DEBUG, "cannot open '%s': %s", tc_perf_ev_name(e), why);
		}
		if (!ce->why)
			return -ENOMEM;
	}
	return 0;
}

/* The first versions: struct tacho_counters_opts ends at ncpus, struct
 * tacho_counter_spec at group, struct tacho_count at hint. */
#define TC_OPTS_V1_tacho_counters_opts tc_offsetofend(struct tacho_counters_opts, ncpus)
#define SPEC_SZ_V1 tc_offsetofend(struct tacho_counter_spec, group)
#define COUNT_SZ_V1 tc_offsetofend(struct tacho_count, hint)

int tacho_counters_open(const struct tacho_counters_opts *opts,
			const struct tacho_counter_spec *specs, size_t n, size_t spec_sz,
			struct tacho_counters **out)
{
	struct tacho_counters *c;
	struct tc_perf_grid grid = { 0 };
	size_t all_esrch = 0, nopen = 0;
	unsigned flags;
	int err;

	if (!opts || !out || (n && (!specs || spec_sz < SPEC_SZ_V1)))
		return -EINVAL;
	err = TC_OPTS_VALID(opts, tacho_counters_opts);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	TC_OPTS_COPY(&c->opts, opts);
	c->nev = n;
	c->ev = calloc(n ? n : 1, sizeof(*c->ev));
	c->vals = calloc(n ? n : 1, sizeof(*c->vals));
	err = c->ev && c->vals ? tc_perf_list_new(&c->list) : -ENOMEM;
	if (err)
		goto out_free;
	for (size_t i = 0; i < n; i++) {
		struct tacho_counter_spec sp;
		struct perf_event_attr a;

		tc_sized_get(&sp, sizeof(sp), TC_CONST_ELEM(specs, i, spec_sz), spec_sz);
		err = tc_perf_attr_copy(&a, sp.attr);
		if (err)
			goto out_free;
		err = tc_perf_list_add(c->list, &a, sp.name, sp.group);
		if (err < 0)
			goto out_free;
	}
	err = make_grid(&c->opts, &grid);
	if (err)
		goto out_free;
	/* task targets follow what they create unless asked not to; a group is read
	 * whole unless asked not to */
	flags = (c->opts.target != TACHO_TARGET_CPUS && !c->opts.no_inherit ? TC_PERF_INHERIT : 0) |
		(c->opts.target == TACHO_TARGET_CHILD ? TC_PERF_ENABLE_ON_EXEC : 0) |
		(!c->opts.no_group_read ? TC_PERF_GROUP_READ : 0) |
		(c->opts.target == TACHO_TARGET_PROCESS ? TC_PERF_SKIP_GONE : 0);
	err = tc_perf_list_open(c->list, &grid, flags);
	tc_perf_grid_exit(&grid);
	if (err)
		goto out_free;
	err = explain_failures(c);
	if (err)
		goto out_free;
	for (size_t i = 0; i < n; i++) {
		if (tc_perf_ev_nopen(tc_perf_list_event(c->list, i)))
			nopen++;
		else if (c->ev[i].err == -ESRCH)
			all_esrch++;
	}
	if (n && !nopen && all_esrch == n) {
		err = -ESRCH;
		goto out_free;
	}
	*out = c;
	return 0;

out_free:
	tacho_counters_free(c);
	return err;
}

size_t tacho_counters_count(const struct tacho_counters *c)
{
	return c ? c->nev : 0;
}

size_t tacho_counters_opened(const struct tacho_counters *c)
{
	size_t n = 0;

	for (size_t i = 0; c && i < c->nev; i++)
		n += tc_perf_ev_nopen(tc_perf_list_event(c->list, i)) > 0;
	return n;
}

int tacho_counters_enable(struct tacho_counters *c)
{
	return c ? tc_perf_list_enable(c->list) : -EINVAL;
}

int tacho_counters_disable(struct tacho_counters *c)
{
	return c ? tc_perf_list_disable(c->list) : -EINVAL;
}

int tacho_counters_reset(struct tacho_counters *c)
{
	return c ? tc_perf_list_reset(c->list) : -EINVAL;
}

int tacho_counters_read(struct tacho_counters *c, struct tacho_count *out, size_t n,
			size_t count_sz)
{
	int err;

	if (!c || (n && (!out || count_sz < COUNT_SZ_V1)))
		return -EINVAL;
	if (n > c->nev)
		n = c->nev;
	err = tc_perf_list_read(c->list, c->vals);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		const struct tc_perf_count *v = &c->vals[i];
		const struct cnt_event *ce = &c->ev[i];
		struct tacho_count count = { 0 }, *o = &count;

		o->name = tc_perf_ev_name(tc_perf_list_event(c->list, i));
		o->status = v->status;
		o->value = v->value;
		o->coverage = v->coverage;
		if (v->status == TACHO_COUNT_NOT_SUPPORTED) {
			/* out of descriptors says nothing of the event: it is supported and
			 * was not counted this time (the reason says what to raise) */
			if (ce->err == -EMFILE || ce->err == -ENFILE)
				o->status = TACHO_COUNT_NOT_COUNTED;
			o->err = ce->err;
			o->why = ce->why;
			o->hint = ce->hint;
			tc_sized_put(TC_ELEM(out, i, count_sz), count_sz, o, sizeof(*o));
			continue;
		}
		o->raw = v->raw;
		o->enabled_ns = v->enabled;
		o->running_ns = v->running;
		if (v->err) {
			/* its source never counts here: the proof's sentence */
			o->err = v->err;
			o->why = v->why;
			o->hint = TACHO_HINT_MACHINE;
		} else if (v->eof)
			o->why = "the pinned event (':D') could not get a counter and is in "
				 "error state (other events or the NMI watchdog hold the "
				 "counters: drop ':D', or free them)";
		else if (v->status == TACHO_COUNT_NOT_COUNTED)
			o->why = v->enabled ? "the event was enabled but never got a counter "
					      "(too many events at once: use fewer, or fewer groups)"
					    : "the event was never enabled (the program never ran, "
					      "or counting was never started)";
		tc_sized_put(TC_ELEM(out, i, count_sz), count_sz, o, sizeof(*o));
	}
	return 0;
}
