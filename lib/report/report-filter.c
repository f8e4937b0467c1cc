/* report-filter.c - which samples a report takes (perf report's --comm, --pid, --tid,
 * --cpu, --dsos, --symbols and --time, parsed once into lists), and the parser of perf's
 * sort syntax ("comm,dso,symbol"). Every view asks tc_profile_keep of each sample. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report/report-int.h"
#include "util/util.h"
#include "tacho/errors.h"
#include "tacho/report.h"

struct tc_window {
	uint64_t from, to;             /* sample times in ns, both ends included */
};

struct tc_filter {
	char **comms, **dsos, **syms, **cgroups;
	size_t ncomms, ndsos, nsyms, ncgroups;
	uint64_t *pids, *tids;
	size_t npids, ntids;
	int *cpus;
	size_t ncpus;
	struct tc_window *wins;
	size_t nwins;
};

/* The first version of struct tacho_profile_filter (TC_OPTS_VALID) ends at time. */
#define TC_OPTS_V1_tacho_profile_filter tc_offsetofend(struct tacho_profile_filter, time)

/* len bytes of the caller's text for a diagnostic: at most size - 1, control bytes as
 * '?', so that the message stays one line whatever was typed. Returns buf. */
static const char *shown(char *buf, size_t size, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size && s[i]; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void tc_profile_filter_free(struct tc_filter *f)
{
	if (!f)
		return;
	free_list(f->comms, f->ncomms);
	free_list(f->dsos, f->ndsos);
	free_list(f->syms, f->nsyms);
	free_list(f->cgroups, f->ncgroups);
	free(f->pids);
	free(f->tids);
	free(f->cpus);
	free(f->wins);
	free(f);
}

/* "a,b,c" into a malloc'd array of copies. 0, -TACHO_EEMPTY (an empty item), -ENOMEM. */
static int split_names(const char *s, char ***out, size_t *n, const char *what,
		       struct tacho_diag *d)
{
	char **v = NULL;
	size_t cnt = 0;
	const char *p = s;

	for (;;) {
		size_t len = strcspn(p, ",");
		char **nv;
		if (!len) {
			free_list(v, cnt);
			return tc_diag_set(d, s, 0, (unsigned)(p - s) + 1, -TACHO_EEMPTY,
					   "an empty name in the %s list", what);
		}
		nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv || !(nv[cnt] = strndup(p, len))) {
			free_list(nv ? nv : v, cnt);
			return -ENOMEM;
		}
		v = nv;
		cnt++;
		if (!p[len])
			break;
		p += len + 1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

static int split_ids(const char *s, uint64_t **out, size_t *n, const char *what,
		     struct tacho_diag *d)
{
	char **names, buf[64];
	size_t cnt;
	uint64_t *v;
	int err = split_names(s, &names, &cnt, what, d);

	if (err)
		return err;
	v = malloc(cnt * sizeof(*v));
	if (!v) {
		free_list(names, cnt);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cnt && !err; i++)
		if (tc_parse_u64(names[i], &v[i]) || v[i] > INT32_MAX)
			err = tc_diag_set(d, s, 0, 0, -TACHO_EPARSE, "'%s' in the %s list is not a %s",
					  shown(buf, sizeof(buf), names[i], SIZE_MAX), what, what);
	free_list(names, cnt);
	if (err) {
		free(v);
		return err;
	}
	*out = v;
	*n = cnt;
	return 0;
}

/* Seconds with up to nine decimals ("29282.719555") in ns, exactly (no double). *unit:
 * the ns of its last digit, so that an end written as the export shows it covers the
 * whole of that digit. 0 or -TACHO_EPARSE. */
static int parse_secs(const char *s, size_t len, uint64_t *ns, uint64_t *unit)
{
	uint64_t secs = 0, frac = 0, scale = 1000000000u;
	size_t i = 0;
	bool digits = false;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits = true) {
		if (secs > (UINT64_MAX / 1000000000u - 9) / 10)
			return -TACHO_EPARSE;
		secs = secs * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < len && s[i] == '.') {
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits = true) {
			if (scale == 1)
				return -TACHO_EPARSE;   /* finer than a nanosecond */
			scale /= 10;
			frac += (uint64_t)(s[i] - '0') * scale;
		}
	}
	if (!digits || i != len)
		return -TACHO_EPARSE;
	*ns = secs * 1000000000u + frac;
	*unit = scale;
	return 0;
}

static void time_span(const struct tacho_profile *p, uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < p->nsmps; i++) {
		if (p->smps[i].time < *lo)
			*lo = p->smps[i].time;
		if (p->smps[i].time > *hi)
			*hi = p->smps[i].time;
	}
	if (*lo > *hi)
		*lo = *hi = 0;
}

/* One percent form: "A%-B%" or "P%/N", of the span lo..hi. */
static int parse_percent(const char *s, size_t len, uint64_t lo, uint64_t hi,
			 struct tc_window *w)
{
	char buf[64], *end;
	double a, b;
	long nth;
	const char *slash;

	if (len >= sizeof(buf))
		return -TACHO_EPARSE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	a = strtod(buf, &end);
	if (end == buf || *end != '%' || errno)
		return -TACHO_EPARSE;
	slash = end + 1;
	if (*slash == '/') {
		nth = strtol(slash + 1, &end, 10);
		if (end == slash + 1 || *end || nth < 1 || a <= 0 || a * (double)nth > 100 + 1e-9)
			return -TACHO_EPARSE;
		b = a * (double)nth;
		a = b - a;
	} else if (*slash == '-') {
		const char *bs = slash + 1;
		b = strtod(bs, &end);
		if (end == bs || strcmp(end, "%") || b > 100 || a > b)
			return -TACHO_EPARSE;
	} else {
		return -TACHO_EPARSE;
	}
	if (a < 0 || b > 100)
		return -TACHO_EPARSE;
	w->from = lo + (uint64_t)((double)(hi - lo) * a / 100);
	w->to = b >= 100 ? hi : lo + (uint64_t)((double)(hi - lo) * b / 100);
	return 0;
}

static int parse_time(const struct tacho_profile *p, const char *s, struct tc_filter *f,
		      struct tacho_diag *d)
{
	uint64_t lo, hi;
	char buf[64];

	time_span(p, &lo, &hi);
	if (strchr(s, '%')) {
		const char *q = s;
		for (;;) {
			size_t len = strcspn(q, ",");
			struct tc_window *nw = realloc(f->wins, (f->nwins + 1) * sizeof(*nw));
			if (!nw)
				return -ENOMEM;
			f->wins = nw;
			if (parse_percent(q, len, lo, hi, &f->wins[f->nwins]))
				return tc_diag_set(d, s, 0, (unsigned)(q - s) + 1, -TACHO_EPARSE,
						   "--time takes A%%-B%% or P%%/N (0 to 100 %%), not "
						   "'%s'", shown(buf, sizeof(buf), q, len));
			f->nwins++;
			if (!q[len])
				return 0;
			q += len + 1;
		}
	}
	{
		const char *comma = strchr(s, ',');
		const char *side[2];
		size_t len[2];
		uint64_t v[2] = { 0, UINT64_MAX }, unit;

		if (!comma || strchr(comma + 1, ','))
			return tc_diag_set(d, s, 0, 0, -TACHO_EPARSE, "--time takes START,END "
					   "(seconds; either may be empty), not '%s'",
					   shown(buf, sizeof(buf), s, SIZE_MAX));
		side[0] = s;
		len[0] = (size_t)(comma - s);
		side[1] = comma + 1;
		len[1] = strlen(comma + 1);
		for (int k = 0; k < 2; k++) {
			bool rel = len[k] && side[k][0] == '+';
			if (!len[k])
				continue;
			if (parse_secs(side[k] + rel, len[k] - rel, &v[k], &unit))
				return tc_diag_set(d, s, 0, (unsigned)(side[k] - s) + 1, -TACHO_EPARSE,
						   "'%s' is not a time in seconds",
						   shown(buf, sizeof(buf), side[k], len[k]));
			if (rel)
				v[k] = v[k] > UINT64_MAX - lo ? UINT64_MAX : v[k] + lo;
			if (k == 1)   /* the end covers the whole of its last digit */
				v[1] = v[1] > UINT64_MAX - (unit - 1) ? UINT64_MAX : v[1] + unit - 1;
		}
		if (v[0] > v[1])
			return tc_diag_set(d, s, 0, 0, -TACHO_EPARSE,
					   "--time '%s' ends before it starts",
					   shown(buf, sizeof(buf), s, SIZE_MAX));
		f->wins = malloc(sizeof(*f->wins));
		if (!f->wins)
			return -ENOMEM;
		f->wins[0] = (struct tc_window){ v[0], v[1] };
		f->nwins = 1;
	}
	return 0;
}

static bool given(const char *s)
{
	return s && s[0];
}

int tacho_profile_set_filter(struct tacho_profile *p, const struct tacho_profile_filter *f,
			     struct tacho_diag *diag)
{
	struct tc_filter *nf;
	int err = tc_diag_check(diag);

	if (err)
		return err;
	if (!p)
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(f, tacho_profile_filter, diag);
	if (err)
		return err;
	if (!f) {
		tc_profile_filter_free(p->filter);
		p->filter = NULL;
		return 0;
	}
	nf = calloc(1, sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	if (given(f->comms))
		err = split_names(f->comms, &nf->comms, &nf->ncomms, "comm", diag);
	if (!err && given(f->dsos))
		err = split_names(f->dsos, &nf->dsos, &nf->ndsos, "dso", diag);
	if (!err && given(f->symbols))
		err = split_names(f->symbols, &nf->syms, &nf->nsyms, "symbol", diag);
	if (!err && given(f->pids))
		err = split_ids(f->pids, &nf->pids, &nf->npids, "pid", diag);
	if (!err && given(f->tids))
		err = split_ids(f->tids, &nf->tids, &nf->ntids, "tid", diag);
	if (!err && given(f->cpus))
		err = tc_parse_cpu_list(f->cpus, &nf->cpus, &nf->ncpus, diag);
	if (!err && given(f->time))
		err = parse_time(p, f->time, nf, diag);
	if (!err && TC_OPTS_HAS(f, tacho_profile_filter, cgroups) && given(f->cgroups))
		err = split_names(f->cgroups, &nf->cgroups, &nf->ncgroups, "cgroup", diag);
	if (err) {
		tc_profile_filter_free(nf);
		return err == -TACHO_EEMPTY || err == -TACHO_EOUTOFRANGE ? -TACHO_EPARSE : err;
	}
	tc_profile_filter_free(p->filter);
	p->filter = nf;
	return 0;
}

static bool in_names(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* --symbols: a function's name against the names given, versions aside
 * (tc_sym_name_match: "fopen" finds fopen@@GLIBC_2.2.5) */
static bool in_syms(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; s && i < n; i++)
		if (tc_sym_name_match(s, v[i]))
			return true;
	return false;
}

static bool in_ids(const uint64_t *v, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

/* Whether cgroup path is one of v or below one ("/a" holds "/a" and "/a/b", not
 * "/ab"); a trailing '/' in v is no part of the name. */
static bool in_cgroups(char *const *v, size_t n, const char *path)
{
	for (size_t i = 0; path && i < n; i++) {
		size_t len = strlen(v[i]);
		while (len > 0 && v[i][len - 1] == '/')
			len--;
		if (!strncmp(v[i], path, len) && (path[len] == 0 || path[len] == '/'))
			return true;
	}
	return false;
}

static const char *base_of(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s && s[1] ? s + 1 : path;
}

int tc_profile_keep(struct tacho_profile *p, const struct smp *s)
{
	return tc_smp_event(p, s) == p->sel ? tc_profile_keep_any(p, s) : 0;
}

int tc_profile_keep_any(struct tacho_profile *p, const struct smp *s)
{
	const struct tc_filter *f = p->filter;
	bool in = false;

	if (!f)
		return 1;
	if (f->npids && !in_ids(f->pids, f->npids, tc_smp_pid(p, s)))
		return 0;
	if (f->ntids && !in_ids(f->tids, f->ntids, tc_smp_tid(p, s)))
		return 0;
	if (f->ncpus) {
		for (size_t i = 0; i < f->ncpus && !in; i++)
			in = f->cpus[i] >= 0 && (uint32_t)f->cpus[i] == tc_smp_cpu(p, s);
		if (!in)
			return 0;
	}
	if (f->nwins) {
		in = false;
		for (size_t i = 0; i < f->nwins && !in; i++)
			in = s->time >= f->wins[i].from && s->time <= f->wins[i].to;
		if (!in)
			return 0;
	}
	if (f->ncomms) {
		struct proc *pr = tc_profile_proc(p, tc_smp_pid(p, s), false);
		if (!pr || pr->comm == NONE || !in_names(f->comms, f->ncomms, pool_str(p, pr->comm)))
			return 0;
	}
	if (f->ncgroups) {
		struct proc *pr = tc_profile_proc(p, tc_smp_pid(p, s), false);
		if (!pr || pr->cgroup == NONE ||
		    !in_cgroups(f->cgroups, f->ncgroups, pool_str(p, pr->cgroup)))
			return 0;
	}
	if (f->ndsos || f->nsyms) {
		/* by the sampled instruction, the leaf of the chain */
		uint32_t frame;
		size_t nf;
		const struct loc *l;
		int err = tc_profile_frames(p, s, &frame, 1, &nf);
		if (err)
			return err;
		if (!nf)
			return 0;
		l = &p->locs[frame];
		if (f->ndsos && !in_names(f->dsos, f->ndsos, pool_str(p, l->dso)) &&
		    !in_names(f->dsos, f->ndsos, base_of(pool_str(p, l->dso))))
			return 0;
		if (f->nsyms && (l->sym == NONE || (!in_syms(f->syms, f->nsyms, pool_str(p, l->sym)) &&
						    !in_syms(f->syms, f->nsyms, pool_str(p, l->raw)))))
			return 0;
	}
	return 1;
}

/* --- perf's sort syntax --- */

static const struct {
	const char *name;
	enum tacho_sort key;
} sort_names[] = {
	{ "comm", TACHO_SORT_COMM },     { "pid", TACHO_SORT_PID },
	{ "tid", TACHO_SORT_TID },       { "cpu", TACHO_SORT_CPU },
	{ "dso", TACHO_SORT_DSO },       { "symbol", TACHO_SORT_SYMBOL },
	{ "line", TACHO_SORT_LINE },     { "address", TACHO_SORT_ADDRESS },
	{ "event", TACHO_SORT_EVENT },
	/* perf's spellings */
	{ "sym", TACHO_SORT_SYMBOL },    { "srcline", TACHO_SORT_LINE },
	{ "addr", TACHO_SORT_ADDRESS },
};

int tacho_profile_parse_sort(const char *spec, enum tacho_sort *keys, size_t max, size_t *n,
			     struct tacho_diag *diag)
{
	const char *p = spec;
	int err = tc_diag_check(diag);

	if (err)
		return err;
	if (!spec || !keys || !n)
		return -EINVAL;
	*n = 0;
	for (;;) {
		size_t len = strcspn(p, ","), i;
		bool dup = false;
		char buf[64];

		if (!len)
			return tc_diag_set(diag, spec, 0, (unsigned)(p - spec) + 1, -TACHO_EEMPTY,
					   "an empty sort key");
		for (i = 0; i < ARRAY_SIZE(sort_names); i++)
			if (strlen(sort_names[i].name) == len && !strncmp(sort_names[i].name, p, len))
				break;
		if (i == ARRAY_SIZE(sort_names)) {
			struct tc_nearest near;
			const char *best;
			tc_nearest_init(&near, p, len);
			for (size_t k = 0; k < ARRAY_SIZE(sort_names); k++)
				tc_nearest_add(&near, sort_names[k].name, strlen(sort_names[k].name));
			best = tc_nearest_get(&near);
			shown(buf, sizeof(buf), p, len);
			if (best)
				err = tc_diag_set(diag, spec, 0, (unsigned)(p - spec) + 1, -TACHO_EPARSE,
						  "unknown sort key '%s': did you mean '%s'?", buf,
						  best);
			else
				err = tc_diag_set(diag, spec, 0, (unsigned)(p - spec) + 1, -TACHO_EPARSE,
						  "unknown sort key '%s' (comm, pid, tid, cpu, dso, "
						  "symbol, line, address, event)", buf);
			tc_nearest_exit(&near);
			return err;
		}
		for (size_t k = 0; k < *n; k++)
			dup |= keys[k] == sort_names[i].key;
		if (!dup) {
			if (*n == max)
				return -E2BIG;
			keys[(*n)++] = sort_names[i].key;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}
