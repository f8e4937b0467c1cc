/* stat-sim.c - a stat session's simulated runs (--sim): the program under valgrind
 * with the machine's caches instead of counted, and the regions it marked matched up
 * with the value of every event. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf/perf.h"
#include "events/metrics.h"
#include "stat/schedule.h"
#include "stat/stat.h"
#include "events/user-only.h"
#include "util/util.h"
#include "tacho/counters.h"
#include "tacho/events.h"
#include "tacho/run.h"
#include "tacho/sim.h"
#include "tacho/stat.h"
#include "stat/stat-int.h"

void tc_stat_regions_free(struct tacho_stat *s)
{
	for (size_t i = 0; i < s->nregions; i++) {
		free(s->regions[i].name);
		free(s->regions[i].vals);
	}
	free(s->regions);
	s->regions = NULL;
	s->nregions = 0;
}

/* The regions of a simulated run, with the value of every event of the session. */
static int take_regions(struct tacho_stat *s, const struct tacho_sim_result *res)
{
	size_t n = tacho_sim_result_nregions(res);

	tc_stat_regions_free(s);
	if (!n)
		return 0;
	s->regions = calloc(n, sizeof(*s->regions));
	if (!s->regions)
		return -ENOMEM;
	s->nregions = n;
	for (size_t i = 0; i < n; i++) {
		const struct tacho_sim_region *g = tacho_sim_result_region(res, i);
		struct stat_region *r = &s->regions[i];

		r->name = tc_strdup(g->name);
		r->vals = malloc(2 * (s->nev ? s->nev : 1) * sizeof(*r->vals));
		if (!r->name || !r->vals)
			return -ENOMEM;
		r->pub.name = r->name;
		r->pub.calls = g->calls;
		r->pub.unbalanced = g->unbalanced;
		r->pub.inclusive = r->vals;
		r->pub.exclusive = r->vals + s->nev;
		for (size_t e = 0; e < s->nev; e++)
			for (int x = 0; x < 2; x++) {
				uint64_t v;
				r->vals[x * s->nev + e] =
					tacho_sim_region_value(res, i, &s->ev[e].attr, x, &v,
							       NULL) == 0
						? (double)v * s->ev[e].scale
						: NAN;
			}
	}
	return 0;
}

/* One repetition under the simulator: the program runs once under valgrind, and every
 * event takes its simulated value or says why it has none. */
int tc_stat_simulate_once(const struct tacho_stat_opts *o, struct tacho_stat *s, unsigned rep,
			  struct tacho_diag *diag)
{
	const struct perf_event_attr **attrs = calloc(s->nev ? s->nev : 1, sizeof(*attrs));
	struct tacho_sim_result *res = NULL;
	int err, exec_err = 0;
	double t0 = now_ns();

	if (!attrs)
		return -ENOMEM;
	/* only the simulations these events need (an event without a simulated meaning
	 * needs none, and says why below) */
	for (size_t e = 0; e < s->nev; e++)
		attrs[e] = &s->ev[e].attr;
	err = tacho_sim_run_events(o->sim, o->argv, attrs, s->nev, &res, &exec_err, diag);
	free(attrs);
	if (err) {
		if (err == -TACHO_ENOSTART && exec_err &&
		    TC_OPTS_GET(o, tacho_stat_opts, exec_err, NULL))
			*o->exec_err = exec_err;
		return err;
	}
	s->wall_ns[rep] = now_ns() - t0;
	s->exit = *tacho_sim_result_exit(res);
	s->have_exit = true;
	if (s->exit.signal)
		s->cut = true;
	for (size_t e = 0; e < s->nev; e++) {
		struct ev_res *r = &s->ev[e];
		const char *why = NULL;
		uint64_t v;

		r->seen[rep] = true;
		if (tacho_sim_result_value(res, &r->attr, &v, &why) == 0) {
			r->status[rep] = TACHO_COUNT_SIMULATED;
			r->coverage[rep] = 1.0;
			r->values[rep] = tc_apply_scale((double)v, r->scale);
			continue;
		}
		r->status[rep] = TACHO_COUNT_NOT_SUPPORTED;
		r->values[rep] = NAN;
		if (!r->why) {
			r->why = tc_strdup(why);
			r->hint = TACHO_HINT_NONE;
		}
		if (!r->err)
			r->err = -TACHO_ENOVALUE;
	}
	err = take_regions(s, res);
	tacho_sim_result_free(s->sim_last);
	s->sim_last = res;
	return err;
}
