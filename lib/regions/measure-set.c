/* measure-set.c - a measurement set on the calling thread: the engine's list of one
 * group on one cell, read on its hot path (RDPMC through the mmap pages where the kernel
 * allows it, otherwise one read(2) of the group). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "regions/measure-set.h"
#include "events/user-only.h"
#include "perf/engine.h"
#include "tacho/errors.h"
#include "tacho/events.h"

int tc_event_set_from_list(struct tc_event_set *s, const struct tacho_evlist *list)
{
	size_t n = tacho_evlist_count(list);

	memset(s, 0, sizeof(*s));
	if (!n)
		return 0;
	s->names = calloc(n, sizeof(*s->names));
	s->attrs = calloc(n, sizeof(*s->attrs));
	if (!s->names || !s->attrs)
		goto out_oom;
	for (size_t i = 0; i < n; i++) {
		s->names[i] = tc_strdup(tacho_evlist_name(list, i));
		if (!s->names[i])
			goto out_oom;
		s->n = i + 1;
		if (tacho_evlist_attr(list, i, &s->attrs[i]))
			goto out_oom;
	}
	return 0;
out_oom:
	tc_event_set_exit(s);
	return -ENOMEM;
}

void tc_event_set_exit(struct tc_event_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->attrs);
	memset(s, 0, sizeof(*s));
}

int tc_event_set_user_only(struct tc_event_set *s, char **why)
{
	struct tc_sb names = TC_SB_INIT;
	struct tc_perf_env env;
	int err = 0;

	*why = NULL;
	if (!s->n)
		return 0;
	tc_perf_env_probe(&env);
	if (!tc_user_only_needed(&env))
		return 0;
	tc_sb_init(&names);
	for (size_t i = 0; i < s->n; i++) {
		char *name;

		if (!tc_user_only_fallback(&s->attrs[i]))
			continue;
		name = tc_user_only_name(s->names[i]);
		if (!name) {
			err = -ENOMEM;
			goto out;
		}
		free(s->names[i]);
		s->names[i] = name;
		tc_sb_addf(&names, "%s%s", names.len ? ", " : "", name);
	}
	if (names.oom)
		err = -ENOMEM;
	else if (names.len && !(*why = tc_user_only_why(&env, names.buf)))
		err = -ENOMEM;
out:
	tc_sb_exit(&names);
	return err;
}

void tc_measure_set_close(struct tc_measure_set *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->why && i < m->n; i++)
		free(m->why[i]);
	tc_perf_list_free(m->list);
	free(m->err);
	free(m->why);
	memset(m, 0, sizeof(*m));
}

int tc_measure_set_open(struct tc_measure_set *m, const struct tc_event_set *s)
{
	static const pid_t self = 0;
	struct tc_perf_grid grid = { 0 };
	struct tc_perf_env env;
	bool env_probed = false;
	int err;

	memset(m, 0, sizeof(*m));
	m->n = s->n;
	if (!s->n)
		return 0;
	m->err = calloc(s->n, sizeof(*m->err));
	m->why = calloc(s->n, sizeof(*m->why));
	err = m->err && m->why ? tc_perf_list_new(&m->list) : -ENOMEM;
	if (err)
		goto out_close;
	/* One group: every event is read by one read(2) and scheduled together. */
	for (size_t i = 0; i < s->n; i++) {
		err = tc_perf_list_add(m->list, &s->attrs[i], s->names[i], 0);
		if (err < 0)
			goto out_close;
	}
	err = tc_perf_grid_init(&grid, NULL, 0, &self, 1);
	if (!err)
		err = tc_perf_list_open(m->list, &grid, TC_PERF_GROUP_READ);
	tc_perf_grid_exit(&grid);
	if (err)
		goto out_close;
	/* the events that did not open, with the engine's explanation */
	for (size_t i = 0; i < s->n; i++) {
		const struct tc_perf_ev *e = tc_perf_list_event(m->list, i);
		struct perf_event_attr a;
		unsigned flags;
		char why[512];

		if (tc_perf_ev_nopen(e) && tc_perf_ev_silent(e)) {
			/* open, and its source never counts here: not counted, with the
			 * proof's sentence (tc_measure_set_is_open says no) */
			m->err[i] = -TACHO_ESILENT;
			m->why[i] = tc_strdup(tc_perf_ev_silent(e));
			continue;
		}
		if (tc_perf_ev_nopen(e))
			continue;
		m->err[i] = tc_perf_ev_error(e, &flags, &a);
		if (!m->err[i]) {
			m->err[i] = -TACHO_ENOTCOUNTED;
			continue;
		}
		if (!env_probed) {
			tc_perf_env_probe(&env);
			env_probed = true;
		}
		tc_perf_explain(&env, m->err[i], &a, NULL, flags, why, sizeof(why), NULL);
		m->why[i] = tc_strdup(why);
	}
	err = tc_perf_list_hot_init(m->list);
	if (!err)
		err = tc_perf_list_enable(m->list);
	if (err)
		goto out_close;
	return 0;
out_close:
	tc_measure_set_close(m);
	return err;
}

bool tc_measure_set_is_open(const struct tc_measure_set *m, size_t i)
{
	return m->err && i < m->n && !m->err[i];
}

bool tc_measure_set_multiplexed(const struct tc_measure_set *m)
{
	struct tc_perf_hot_state st;

	if (!m->list)
		return false;
	tc_perf_list_hot_state(m->list, &st);
	return st.multiplexed;
}

bool tc_measure_set_ran(const struct tc_measure_set *m)
{
	struct tc_perf_hot_state st;

	if (!m->list)
		return false;
	tc_perf_list_hot_state(m->list, &st);
	return st.ran;
}

const char *tc_measure_set_read_path(const struct tc_measure_set *m)
{
	struct tc_perf_hot_state st = { .path = TC_PERF_HOT_NONE };

	if (m->list)
		tc_perf_list_hot_state(m->list, &st);
	switch (st.path) {
	case TC_PERF_HOT_RDPMC:
		return "rdpmc";
	case TC_PERF_HOT_GROUP_READ:
		return "one group read(2)";
	default:
		return "one read(2) per event";
	}
}
