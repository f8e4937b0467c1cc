/* rule.c - rules over the rates of a live frame (tacho watch): an event or a ratio of
 * two, a threshold crossed for a while, lifted past a hysteresis band; and rates as
 * people write them ("2.5k", "10M/s"). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "live/live-int.h"

struct tacho_rule {
	struct tacho_rule_opts o;
	char *input;
	char *a, *b;          /* the events' names as the grammar spells them; b NULL: no ratio */
	char *events;         /* "a" or "a,b" */
	bool active;
	double since;         /* frame time from which the condition toward the other state
				 has held; NAN when it does not */
};

int tacho_rate_parse(const char *s, double *out, struct tacho_diag *diag)
{
	static const struct { char c; double mul; } suffixes[] = {
		{ 'k', 1e3 }, { 'K', 1e3 }, { 'M', 1e6 }, { 'G', 1e9 }, { 'T', 1e12 },
		{ 'm', 1e-3 }, { 'u', 1e-6 },
	};
	char num[64];
	size_t n = 0;
	double v, mul = 1;
	const char *p;

	if (tc_diag_check(diag))
		return -EINVAL;
	int err;

	if (!s || !*s)
		return tc_diag_set(diag, s ? s : "", 0, 1, -TACHO_EPARSE, "empty rate");
	/* digits, a point, an exponent: the number */
	for (p = s; (*p >= '0' && *p <= '9') || *p == '.' ||
		    ((*p == 'e' || *p == 'E') && p > s && (p[1] == '-' || p[1] == '+' ||
							     (p[1] >= '0' && p[1] <= '9'))) ||
		    ((*p == '-' || *p == '+') && p > s && (p[-1] == 'e' || p[-1] == 'E'));
	     p++) {
		if (n + 1 >= sizeof(num))
			return tc_diag_set(diag, s, 0, (unsigned)(p - s) + 1, -TACHO_EPARSE,
					   "number too long");
		num[n++] = *p;
	}
	num[n] = '\0';
	if (!n)
		return tc_diag_set(diag, s, 0, 1, -TACHO_EPARSE,
				   "expected a number (a rate such as 1000, 2.5k or 10M/s)");
	err = tc_parse_double(num, &v);
	if (err)
		return tc_diag_set(diag, s, 0, 1, err, err == -TACHO_EOUTOFRANGE ? "number out of range"
				   : "malformed number");
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++)
		if (*p && *p == suffixes[i].c) {
			mul = suffixes[i].mul;
			p++;
			break;
		}
	if (!strcmp(p, "/s"))
		p += 2;
	if (*p)
		return tc_diag_set(diag, s, 0, (unsigned)(p - s) + 1, -TACHO_EPARSE,
				   "unexpected '%c' (a rate is a number, an optional k, M, G, T, m "
				   "or u, and an optional /s)", *p);
	v *= mul;
	if (!isfinite(v))
		return tc_diag_set(diag, s, 0, 1, -TACHO_EOUTOFRANGE, "number out of range");
	*out = v;
	return 0;
}

int tacho_rule_check(const struct tacho_rule *r, char *why, size_t size)
{
	struct tacho_evlist *list = NULL;
	int err;

	if (!r || !why || !size)
		return -EINVAL;
	why[0] = '\0';
	err = tacho_evlist_parse(r->events, &list, NULL);
	if (err)
		return err;
	for (size_t i = 0; !err && i < tacho_evlist_count(list); i++) {
		struct perf_event_attr a;
		char reason[512];

		err = tacho_evlist_probe(list, i);
		if (!err)
			continue;
		tacho_evlist_attr(list, i, &a);
		if (err == -TACHO_ESILENT) {
			struct tacho_source_proof p = { .sz = sizeof(p) };

			tacho_source_prove(tacho_source_of(&a), 0, &p);
			snprintf(reason, sizeof(reason), "%s", p.why);
		} else {
			tacho_perf_strerror(err, &a, reason, sizeof(reason), NULL);
		}
		snprintf(why, size, "'%s' cannot be counted here: %s", tacho_evlist_name(list, i),
			 reason);
	}
	tacho_evlist_free(list);
	return err;
}

void tacho_rule_free(struct tacho_rule *r)
{
	if (!r)
		return;
	free(r->input);
	free(r->a);
	free(r->b);
	free(r->events);
	free(r);
}

/* The one event of spec as the grammar names it, or an error with diag. */
static int one_event(const char *spec, char **name, struct tacho_diag *diag)
{
	struct tacho_evlist *l;
	int err = tacho_evlist_parse(spec, &l, diag);

	if (err)
		return err;
	if (tacho_evlist_count(l) != 1) {
		tacho_evlist_free(l);
		return tc_diag_set(diag, spec, 0, 0, -TACHO_EPARSE,
				   "a rule watches one event or the ratio of two (EVENT/EVENT)");
	}
	*name = tc_strdup(tacho_evlist_name(l, 0));
	tacho_evlist_free(l);
	return *name ? 0 : -ENOMEM;
}

/* A ratio: the one '/' that leaves an event on each side (event names may hold '/'
 * themselves: cpu/event=0x3c/). */
static int split_ratio(struct tacho_rule *r, struct tacho_diag *diag)
{
	const char *in = r->input;
	int found = 0;

	for (const char *p = strchr(in, '/'); p; p = strchr(p + 1, '/')) {
		char *left = tc_strndup(in, (size_t)(p - in)), *a = NULL, *b = NULL;
		bool ok;

		if (!left)
			return -ENOMEM;
		ok = *left && p[1] && !one_event(left, &a, NULL) && !one_event(p + 1, &b, NULL);
		free(left);
		if (!ok) {
			free(a);
			free(b);
			continue;
		}
		if (found++) {
			free(a);
			free(b);
			return tc_diag_set(diag, in, 0, (unsigned)(p - in) + 1, -TACHO_EPARSE,
					   "ambiguous ratio: more than one '/' splits it into two "
					   "events");
		}
		r->a = a;
		r->b = b;
	}
	return found ? 0 : 1;
}

/* The options' first version (TC_OPTS_VALID) ends at for_s: hysteresis came later. */
#define TC_OPTS_V1_tacho_rule_opts tc_offsetofend(struct tacho_rule_opts, for_s)

int tacho_rule_new(const struct tacho_rule_opts *o, struct tacho_rule **out,
		   struct tacho_diag *diag)
{
	struct tacho_rule *r;
	struct tc_sb sb = TC_SB_INIT;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(o, tacho_rule_opts, diag);
	if (err == -TACHO_EVERSION)
		return err;
	if (err || !o || !out || !o->input)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "bad rule options");
	*out = NULL;
	if (!isfinite(o->threshold) || o->threshold < 0)
		return tc_diag_set(diag, o->input, 0, 0, -EINVAL, "a threshold must be a finite "
				   "rate of 0 or more");
	if (!(o->for_s >= 0) || !isfinite(o->for_s))
		return tc_diag_set(diag, o->input, 0, 0, -EINVAL, "a duration must be 0 or more "
				   "seconds");
	if (TC_OPTS_HAS(o, tacho_rule_opts, hysteresis) &&
	    (o->hysteresis > 1 || isnan(o->hysteresis)))
		return tc_diag_set(diag, o->input, 0, 0, -EINVAL, "a hysteresis is a fraction "
				   "of the threshold, at most 1");
	if (o->dir != TACHO_RULE_ABOVE && o->dir != TACHO_RULE_BELOW)
		return tc_diag_set(diag, o->input, 0, 0, -EINVAL, "bad rule direction");
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	TC_OPTS_COPY(&r->o, o);
	if (r->o.hysteresis == 0)
		r->o.hysteresis = 0.1;
	else if (r->o.hysteresis < 0)
		r->o.hysteresis = 0;
	r->since = NAN;
	r->input = tc_strdup(o->input);
	if (!r->input) {
		err = -ENOMEM;
		goto out_free;
	}
	/* one event first; a ratio only where the whole is not one */
	err = one_event(r->input, &r->a, diag);
	if (err && err != -ENOMEM && strchr(r->input, '/')) {
		struct tacho_diag whole;
		size_t n = diag && diag->sz < sizeof(whole) ? diag->sz : sizeof(whole);
		int k;

		if (diag)
			memcpy(&whole, diag, n);   /* as much as the caller's version has */
		k = split_ratio(r, diag);
		if (k == 1 && diag)
			memcpy(diag, &whole, n);   /* no split works: the whole input's error */
		else if (k != 1)
			err = k;
	}
	if (err)
		goto out_free;
	tc_sb_adds(&sb, r->a);
	if (r->b) {
		tc_sb_addc(&sb, ',');
		tc_sb_adds(&sb, r->b);
	}
	r->events = tc_sb_detach(&sb);
	if (!r->events) {
		err = -ENOMEM;
		goto out_free;
	}
	*out = r;
	return 0;

out_free:
	tc_sb_exit(&sb);
	tacho_rule_free(r);
	return err;
}

const char *tacho_rule_events(const struct tacho_rule *r)
{
	return r ? r->events : NULL;
}

const char *tc_rule_event(const struct tacho_rule *r, unsigned k)
{
	return !r ? NULL : k == 0 ? r->a : k == 1 ? r->b : NULL;
}

double tc_rule_window(const struct tacho_rule *r)
{
	return r ? r->o.for_s : 0;
}

bool tacho_rule_active(const struct tacho_rule *r)
{
	return r && r->active;
}

static const char *fmt_threshold(double v, bool ratio, char *buf, size_t size)
{
	char si[32];

	if (ratio)
		snprintf(buf, size, "%g", v);
	else
		snprintf(buf, size, "%s/s", tc_fmt_si(v, si, sizeof(si)));
	return buf;
}

int tacho_rule_describe(const struct tacho_rule *r, char *buf, size_t size)
{
	bool above = r->o.dir == TACHO_RULE_ABOVE, ratio = r->b != NULL;
	double lift = r->o.threshold * (above ? 1 - r->o.hysteresis : 1 + r->o.hysteresis);
	char t1[48], t2[48], dur[48] = "";

	if (r->o.for_s > 0)
		snprintf(dur, sizeof(dur), " for %g s", r->o.for_s);
	return snprintf(buf, size, "%s %s %s%s (lifts %s %s)", r->input, above ? "above" : "below",
			fmt_threshold(r->o.threshold, ratio, t1, sizeof(t1)), dur,
			above ? "below" : "above", fmt_threshold(lift, ratio, t2, sizeof(t2)));
}

static double rate_of(const struct tacho_live_frame *f, const struct tacho_live_row *row,
		      int e)
{
	const struct tacho_live_value *v = &row->values[e];

	if (v->status != TACHO_COUNT_COUNTED && v->status != TACHO_COUNT_MULTIPLEXED)
		return NAN;
	(void)f;
	return v->rate;
}

int tacho_rule_eval(struct tacho_rule *r, const struct tacho_live_frame *f, size_t row,
		    double *value)
{
	const struct tacho_live_row *rw = tacho_live_frame_row(f, row);
	int ia, ib = -1;
	double x, t, h = r ? r->o.hysteresis : 0, th = r ? r->o.threshold : 0;
	bool toward;

	if (value)
		*value = NAN;
	if (!r || !rw)
		return -EINVAL;
	ia = tacho_live_frame_event_index(f, r->a);
	if (r->b)
		ib = tacho_live_frame_event_index(f, r->b);
	if (ia < 0 || (r->b && ib < 0))
		return -EINVAL;
	x = rate_of(f, rw, ia);
	if (r->b) {
		double d = rate_of(f, rw, ib);
		x = isfinite(d) && d > 0 ? x / d : NAN;
	}
	if (value)
		*value = x;
	t = tacho_live_frame_time(f);
	if (!isfinite(x)) {
		r->since = NAN;
		return TACHO_RULE_SAME;
	}
	if (!r->active)
		toward = r->o.dir == TACHO_RULE_ABOVE ? x > th : x < th;
	else
		toward = r->o.dir == TACHO_RULE_ABOVE ? x < th * (1 - h) : x > th * (1 + h);
	if (!toward) {
		r->since = NAN;
		return TACHO_RULE_SAME;
	}
	/* the rate is the interval's: the condition has held since its start */
	if (isnan(r->since))
		r->since = t - tacho_live_frame_interval(f);
	if (t - r->since + 1e-9 < r->o.for_s)
		return TACHO_RULE_SAME;
	r->active = !r->active;
	r->since = NAN;
	return r->active ? TACHO_RULE_FIRED : TACHO_RULE_LIFTED;
}
