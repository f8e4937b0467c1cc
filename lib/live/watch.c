/* watch.c - the watch session, tacho watch's controller: its rules fed the target's
 * frames, and at each crossing what the rule asks done: a signal sent, a CPU cap or a
 * duty cycle applied at the smallest share the holding rules ask, or lifted; a cap that
 * holds steered by what it brings. Each crossing comes back as data (a change): the
 * session runs no command and writes no log, the program does both from the changes. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "live/live-int.h"

#define TC_WATCH_RESULT_SZ_V1 tc_offsetofend(struct tacho_watch_result, feedback)
/* The options' first versions (TC_OPTS_VALID) */
#define TC_OPTS_V1_tacho_watch_rule_opts tc_offsetofend(struct tacho_watch_rule_opts, duty)
#define TC_OPTS_V1_tacho_watch_opts tc_offsetofend(struct tacho_watch_opts, period_us)

struct wrule {
	struct tacho_rule *rule;
	int sig;
	double cap, duty;           /* percent, 0: none */
	double share;               /* the throttle's share it asks while it holds */
	double goal;                /* a cap of one event: the rate to bring it to; NAN for
				       a ratio (the CPU share is the goal then) */
};

struct tacho_watch {
	struct wrule *r;
	size_t nr, ar;
	char *events;               /* tacho_watch_events */
	char *mounts, *proc_root;
	unsigned period_us;
	bool started;
	pid_t pid;
	char cgdir[PATH_MAX];       /* a cgroup target's directory, for the signals */
	struct tacho_throttle *cap, *duty;
	struct tacho_watch_change *ch;   /* [nr]: one change per rule and step at most */
	size_t nch;
};

int tacho_watch_new(const struct tacho_watch_opts *opts, struct tacho_watch **out)
{
	struct tacho_watch_opts o;
	struct tacho_watch *w;
	int err;

	if (!out)
		return -EINVAL;
	err = TC_OPTS_VALID(opts, tacho_watch_opts);
	if (err)
		return err;
	*out = NULL;
	TC_OPTS_COPY(&o, opts);
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->period_us = o.period_us;
	w->events = tc_strdup("");
	w->mounts = o.mounts ? tc_strdup(o.mounts) : NULL;
	w->proc_root = o.proc_root ? tc_strdup(o.proc_root) : NULL;
	if (!w->events || (o.mounts && !w->mounts) || (o.proc_root && !w->proc_root)) {
		tacho_watch_free(w);
		return -ENOMEM;
	}
	*out = w;
	return 0;
}

void tacho_watch_free(struct tacho_watch *w)
{
	if (!w)
		return;
	/* the throttles first: they undo what the rules did to the target */
	tacho_throttle_free(w->cap);
	tacho_throttle_free(w->duty);
	for (size_t i = 0; i < w->nr; i++)
		tacho_rule_free(w->r[i].rule);
	free(w->r);
	free(w->ch);
	free(w->events);
	free(w->mounts);
	free(w->proc_root);
	free(w);
}

/* Whether names[0 .. n - 1] hold name (the grammar's names, compared whole: a PMU
 * event's terms may hold commas). */
static bool named(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* The events of every rule once, in order, then task-clock. */
static int make_events(struct tacho_watch *w)
{
	const char **names = calloc(2 * w->nr + 1, sizeof(*names));
	struct tc_sb sb;
	size_t n = 0;
	char *s;

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < w->nr; i++)
		for (unsigned k = 0; k < 2; k++) {
			const char *e = tc_rule_event(w->r[i].rule, k);
			if (e && !named(names, n, e))
				names[n++] = e;
		}
	/* the CPU the target uses: what a cap is a share of */
	if (!named(names, n, "task-clock"))
		names[n++] = "task-clock";
	tc_sb_init(&sb);
	for (size_t i = 0; i < n; i++) {
		if (i)
			tc_sb_addc(&sb, ',');
		tc_sb_adds(&sb, names[i]);
	}
	free(names);
	s = tc_sb_detach(&sb);
	if (!s)
		return -ENOMEM;
	free(w->events);
	w->events = s;
	return 0;
}

int tacho_watch_add(struct tacho_watch *w, const struct tacho_watch_rule_opts *opts,
		    struct tacho_diag *diag)
{
	struct tacho_watch_rule_opts o;
	struct wrule *r;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(opts, tacho_watch_rule_opts, diag);
	if (err == -TACHO_EVERSION)
		return err;
	if (err || !w || !opts || w->started)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "bad watch rule options");
	TC_OPTS_COPY(&o, opts);
	if (!o.rule)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no rule");
	if (o.signal < 0 || o.signal > 64 || !(o.cap >= 0) || !(o.duty >= 0) || o.duty >= 100 ||
	    !isfinite(o.cap) || (o.cap > 0 && o.duty > 0))
		return tc_diag_set(diag, o.rule->input ? o.rule->input : "", 0, 0, -EINVAL,
				   "bad actions: a signal is 1 to 64, a cap a percentage above "
				   "0, a duty cycle one below 100, and a rule has one of the two");
	if (w->nr == w->ar) {
		size_t na = w->ar ? 2 * w->ar : 4;
		struct wrule *nr = realloc(w->r, na * sizeof(*nr));
		struct tacho_watch_change *nc;

		if (!nr)
			return -ENOMEM;
		w->r = nr;
		nc = realloc(w->ch, na * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		w->ch = nc;
		w->ar = na;
	}
	r = &w->r[w->nr];
	memset(r, 0, sizeof(*r));
	err = tacho_rule_new(o.rule, &r->rule, diag);
	if (err)
		return err;
	r->sig = o.signal;
	r->cap = o.cap;
	r->duty = o.duty;
	r->goal = NAN;
	w->nr++;
	err = make_events(w);
	if (err) {
		tacho_rule_free(r->rule);
		w->nr--;
		return err;
	}
	return (int)(w->nr - 1);
}

size_t tacho_watch_nrules(const struct tacho_watch *w)
{
	return w ? w->nr : 0;
}

const struct tacho_rule *tacho_watch_rule(const struct tacho_watch *w, size_t i)
{
	return w && i < w->nr ? w->r[i].rule : NULL;
}

const char *tacho_watch_events(const struct tacho_watch *w)
{
	return w ? w->events : NULL;
}

const struct tacho_throttle *tacho_watch_throttle(const struct tacho_watch *w,
						  enum tacho_throttle_kind kind)
{
	if (!w)
		return NULL;
	return kind == TACHO_THROTTLE_CAP ? w->cap : kind == TACHO_THROTTLE_DUTY ? w->duty : NULL;
}

int tacho_watch_start(struct tacho_watch *w, pid_t pid, const char *cgroup,
		      enum tacho_throttle_kind *failed, struct tacho_diag *diag)
{
	struct tacho_throttle_opts to = { .sz = sizeof(to) };
	bool want_cap = false, want_duty = false;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	if (!w || w->started || (pid > 0) == (cgroup != NULL) || pid < 0)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "a watch needs one target: a process "
				   "or a cgroup");
	for (size_t i = 0; i < w->nr; i++) {
		want_cap |= w->r[i].cap > 0;
		want_duty |= w->r[i].duty > 0;
	}
	to.pid = pid;
	to.cgroup = cgroup;
	to.period_us = w->period_us;
	to.mounts = w->mounts;
	to.proc_root = w->proc_root;
	if (want_cap) {
		to.kind = TACHO_THROTTLE_CAP;
		err = tacho_throttle_new(&to, &w->cap, diag);
		if (err) {
			if (failed)
				*failed = TACHO_THROTTLE_CAP;
			return err;
		}
	}
	if (want_duty) {
		to.kind = TACHO_THROTTLE_DUTY;
		err = tacho_throttle_new(&to, &w->duty, diag);
		if (err) {
			if (failed)
				*failed = TACHO_THROTTLE_DUTY;
			return err;
		}
	}
	/* signals go to the processes of the cgroup, as the hierarchy the sampler counts
	 * it in lists them (the path as given where it cannot be resolved: the signal then
	 * says why) */
	if (cgroup && tacho_cgroup_resolve(cgroup, w->mounts, w->cgdir, sizeof(w->cgdir)))
		snprintf(w->cgdir, sizeof(w->cgdir), "%s", cgroup);
	w->pid = pid;
	w->started = true;
	return 0;
}

/* --- acting --- */

/* The processes it went to, or -errno. */
static int send_signal(const struct tacho_watch *w, int sig)
{
	char path[PATH_MAX + 16], *text;
	size_t len;
	int n = 0, err;

	if (w->pid)
		return kill(w->pid, sig) ? -errno : 1;
	snprintf(path, sizeof(path), "%s/cgroup.procs", w->cgdir);
	err = tc_read_file(path, &text, &len, 16u << 20);
	if (err)
		return err;
	for (char *save = NULL, *p = strtok_r(text, "\n", &save); p;
	     p = strtok_r(NULL, "\n", &save)) {
		uint64_t pid;
		if (!tc_parse_u64(p, &pid) && pid > 0 && pid <= INT32_MAX && !kill((pid_t)pid, sig))
			n++;
	}
	free(text);
	return n;
}

/* Event name's rate on the target averaged over the rule's window (its last intervals,
 * from the row's history). */
static double window_rate(const struct tacho_live_frame *f, const struct wrule *r,
			  const char *name)
{
	const struct tacho_live_row *row = tacho_live_frame_row(f, 0);
	int e = tacho_live_frame_event_index(f, name);
	double iv = tacho_live_frame_interval(f), sum = 0;
	size_t k, n = 0, want;

	if (!row || e < 0)
		return NAN;
	want = iv > 0 ? (size_t)ceil(tc_rule_window(r->rule) / iv) : 1;
	if (want < 1)
		want = 1;
	for (k = row->nhistory; k-- > 0 && n < want;) {
		double v = row->history[(size_t)e * row->nhistory + k];
		if (isfinite(v)) {
			sum += v;
			n++;
		}
	}
	return n ? sum / (double)n : NAN;
}

/* The smallest share asked by the rules of that kind that hold, or 0. */
static double held_share(const struct tacho_watch *w, bool cap)
{
	double s = 0;

	for (size_t i = 0; i < w->nr; i++) {
		const struct wrule *r = &w->r[i];
		if (!tacho_rule_active(r->rule) || !(cap ? r->cap : r->duty))
			continue;
		if (!s || r->share < s)
			s = r->share;
	}
	return s;
}

/* The throttle at the share the holding rules ask, or lifted when none does. */
static void throttle_update(struct tacho_watch *w, struct tacho_throttle *t, bool cap,
			    struct tacho_watch_throttled *did)
{
	double s = held_share(w, cap);

	if (!t)
		return;
	if (s > 0) {
		did->did = TACHO_WATCH_APPLIED;
		did->share = s;
		did->err = tacho_throttle_apply(t, s);
	} else if (tacho_throttle_active(t)) {
		did->did = TACHO_WATCH_LIFTED;
		did->err = tacho_throttle_lift(t);
	}
}

static void on_change(struct tacho_watch *w, struct wrule *r, struct tacho_watch_change *c,
		      const struct tacho_live_frame *f)
{
	bool fired = c->change == TACHO_RULE_FIRED;

	if (fired && r->sig) {
		c->signal = r->sig;
		c->signalled = send_signal(w, r->sig);
	}
	if (fired && r->cap) {
		double used = window_rate(f, r, "task-clock") / 1000.0;   /* msec per second */
		/* the share of what it used: under load it had less than a CPU */
		r->share = (isfinite(used) && used > 0 ? used : 1.0) * r->cap / 100;
		/* one event: then its rate is what the cap brings to the percentage (a ratio
		 * stays the same whatever the bandwidth: the CPU share it is) */
		r->goal = tc_rule_event(r->rule, 1) ? NAN :
			  window_rate(f, r, tc_rule_event(r->rule, 0)) * r->cap / 100;
	} else if (fired && r->duty) {
		r->share = r->duty / 100;
	}
	if (r->cap)
		throttle_update(w, w->cap, true, &c->cap);
	if (r->duty)
		throttle_update(w, w->duty, false, &c->duty);
}

/* The cap as measured, not as written: the capping rule that holds with the smallest
 * share steers it, by its event's rate (one event) or by the CPU it uses (a ratio). */
static int cap_feedback(struct tacho_watch *w, const struct tacho_live_frame *f)
{
	const struct tacho_live_row *row = tacho_live_frame_row(f, 0);
	const struct wrule *lead = NULL;
	double measured, target;
	int e;

	for (size_t i = 0; i < w->nr; i++) {
		const struct wrule *r = &w->r[i];
		if (tacho_rule_active(r->rule) && r->cap && (!lead || r->share < lead->share))
			lead = r;
	}
	if (!lead || !row)
		return 0;
	if (isfinite(lead->goal)) {
		e = tacho_live_frame_event_index(f, tc_rule_event(lead->rule, 0));
		measured = e >= 0 ? row->values[e].rate : NAN;
		target = lead->goal;
	} else {
		e = tacho_live_frame_event_index(f, "task-clock");
		measured = e >= 0 ? row->values[e].rate / 1e3 : NAN;
		target = lead->share;
	}
	return tacho_throttle_feedback(w->cap, measured, target);
}

int tacho_watch_step(struct tacho_watch *w, const struct tacho_live_frame *f,
		     struct tacho_watch_result *res)
{
	struct tacho_watch_result out = { .sz = sizeof(out) };

	if (!w || !w->started || !f || (res && res->sz < TC_WATCH_RESULT_SZ_V1))
		return -EINVAL;
	w->nch = 0;
	if (tacho_live_frame_nrows(f)) {
		for (size_t i = 0; i < w->nr; i++) {
			struct tacho_watch_change *c = &w->ch[w->nch];
			double value;
			int k = tacho_rule_eval(w->r[i].rule, f, 0, &value);

			if (k != TACHO_RULE_FIRED && k != TACHO_RULE_LIFTED)
				continue;
			memset(c, 0, sizeof(*c));
			c->rule = i;
			c->change = (enum tacho_rule_change)k;
			c->value = value;
			c->time = tacho_live_frame_time(f);
			on_change(w, &w->r[i], c, f);
			w->nch++;
		}
		if (w->cap && tacho_throttle_active(w->cap))
			out.feedback = cap_feedback(w, f);
	}
	out.nchanges = w->nch;
	if (res)
		tc_sized_put_sz(res, &out, sizeof(out));
	return 0;
}

const struct tacho_watch_change *tacho_watch_step_change(const struct tacho_watch *w, size_t i)
{
	return w && i < w->nch ? &w->ch[i] : NULL;
}
