/* resolve.c - the resolvers of event names: generic and software events (tables.c),
 * generic cache events (CACHE-OP-RESULT), raw rNNNN, tracepoints by name and by
 * pattern (tracepoint.c), libpfm4 (pfm.c), and the best error when none knows a name.
 * sysfs PMU terms and aliases are in sysfs.c; breakpoints and uprobes in
 * resolve-probe.c. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "events/parse.h"
#include "tacho/errors.h"

/* ---------------------------------------------------------------- cache events */

/* Matches CACHE-OP[-RESULT] or CACHE-OPs. Returns 0 with *config, 1 when the name
 * does not start with a cache's name, or -1 when it does but the rest is wrong (with
 * *bad the offset of the wrong part and *why what was expected). */
static int parse_cache(const char *s, size_t len, uint64_t *config, size_t *bad,
		       char *why, size_t whysz)
{
	const struct tc_cache_name *cache = NULL;
	const struct tc_cache_kind *kind = NULL;
	size_t clen = 0, pos, oplen, rlen;
	unsigned op = ~0u, result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	bool plural = false;

	for (size_t i = 0; i < tc_cache_aliases_count; i++) {
		size_t l = strlen(tc_cache_aliases[i].name);
		if (l < len && s[l] == '-' && strncasecmp(s, tc_cache_aliases[i].name, l) == 0 &&
		    l > clen) {
			cache = &tc_cache_aliases[i];
			clen = l;
		}
	}
	if (!cache)
		return 1;
	for (size_t i = 0; i < tc_cache_kinds_count; i++)
		if (tc_cache_kinds[i].id == cache->id)
			kind = &tc_cache_kinds[i];
	pos = clen + 1;
	for (oplen = 0; pos + oplen < len && s[pos + oplen] != '-'; oplen++)
		;
	for (size_t i = 0; i < tc_cache_ops_count; i++) {
		if (strlen(tc_cache_ops[i].name) == oplen &&
		    strncasecmp(s + pos, tc_cache_ops[i].name, oplen) == 0) {
			op = tc_cache_ops[i].id;
			plural = s[pos + oplen - 1] == 's' || s[pos + oplen - 1] == 'S';
		}
	}
	if (op == ~0u && pos + oplen == len &&
	    ((oplen == 6 && !strncasecmp(s + pos, "misses", 6)) ||
	     (oplen == 4 && !strncasecmp(s + pos, "miss", 4)))) {
		/* CACHE-misses: perf's spelling for load misses */
		*config = kind->id | (uint64_t)PERF_COUNT_HW_CACHE_OP_READ << 8 |
			  (uint64_t)PERF_COUNT_HW_CACHE_RESULT_MISS << 16;
		return 0;
	}
	if (op == ~0u) {
		*bad = pos;
		snprintf(why, whysz, "expected an operation of %s: load(s), store(s) or prefetch(es)",
			 kind->name);
		return -1;
	}
	if (!(kind->ops & (1u << op))) {
		*bad = pos;
		snprintf(why, whysz, "%s has no %s events in the kernel's generic cache table%s",
			 kind->name, tc_cache_op_word(op),
			 kind->ops == (1u << PERF_COUNT_HW_CACHE_OP_READ) ? " (only loads)" :
			 " (loads and prefetches only)");
		return -1;
	}
	pos += oplen;
	if (pos < len) {
		pos++;   /* the '-' */
		rlen = len - pos;
		if (plural) {
			*bad = pos;
			snprintf(why, whysz, "nothing may follow a plural operation (write "
				 "'%s-%s-misses' or '%s-%ss')", kind->name, tc_cache_op_word(op),
				 kind->name, tc_cache_op_word(op));
			return -1;
		}
		if ((rlen == 6 && !strncasecmp(s + pos, "misses", 6)) ||
		    (rlen == 4 && !strncasecmp(s + pos, "miss", 4)))
			result = PERF_COUNT_HW_CACHE_RESULT_MISS;
		else if ((rlen == 4 && !strncasecmp(s + pos, "refs", 4)) ||
			 (rlen == 9 && !strncasecmp(s + pos, "reference", 9)) ||
			 (rlen == 6 && !strncasecmp(s + pos, "access", 6)) ||
			 (rlen == 8 && !strncasecmp(s + pos, "accesses", 8)) ||
			 (rlen == 3 && !strncasecmp(s + pos, "ops", 3)))
			result = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
		else {
			*bad = pos;
			snprintf(why, whysz, "expected 'misses' (or nothing, for all accesses)");
			return -1;
		}
	}
	*config = kind->id | (uint64_t)op << 8 | (uint64_t)result << 16;
	return 0;
}

/* ---------------------------------------------------------------- named events */

struct lookup_miss {
	int tp_err;            /* the tracepoint lookup's error, when it was tried */
};

/* Resolves a bare name (no '/', modifiers already split off). 0 when found, else
 * -TACHO_ENOEVENT (quietly). */
static int resolve_name(struct tc_parser *p, size_t off, size_t len, struct tc_event *ev,
			struct lookup_miss *miss)
{
	const char *s = p->src + off;
	const struct tc_generic_event *g;
	const char *colon;
	uint64_t v;
	size_t bad;
	char why[200];

	if ((g = tc_generic_find(s, len))) {
		ev->source = g->type == PERF_TYPE_HARDWARE ? TC_EV_HARDWARE : TC_EV_SOFTWARE;
		ev->attr.type = g->type;
		ev->attr.config = g->config;
		ev->unit = g->unit;
		ev->scale = g->scale;
		ev->uses_counter = g->type == PERF_TYPE_HARDWARE;
		ev->fixed_counter = g->fixed;
		ev->pmu = tc_strdup(g->type == PERF_TYPE_HARDWARE ? "cpu" : "software");
		return ev->pmu ? 0 : -ENOMEM;
	}
	if (parse_cache(s, len, &v, &bad, why, sizeof(why)) == 0) {
		ev->source = TC_EV_CACHE;
		ev->attr.type = PERF_TYPE_HW_CACHE;
		ev->attr.config = v;
		ev->uses_counter = true;
		ev->pmu = tc_strdup("cpu");
		return ev->pmu ? 0 : -ENOMEM;
	}
	if (len >= 2 && len <= 17 && s[0] == 'r') {
		size_t i = 1;
		while (i < len && tc_is_hex_digit(s[i]))
			i++;
		if (i == len && tc_parse_hex_u64(s + 1, len - 1, &v) == 0) {
			ev->source = TC_EV_RAW;
			ev->attr.type = PERF_TYPE_RAW;
			ev->attr.config = v;
			ev->uses_counter = true;
			ev->pmu = tc_strdup("cpu");
			return ev->pmu ? 0 : -ENOMEM;
		}
	}
	colon = memchr(s, ':', len);
	if (colon && !memchr(colon + 1, ':', len - (size_t)(colon - s) - 1)) {
		size_t slen = (size_t)(colon - s), nlen = len - slen - 1;
		if (tc_events_safe_component(s, slen) && tc_events_safe_component(colon + 1, nlen)) {
			int r = tc_tracepoint_id(p->ctx, s, slen, colon + 1, nlen, &v);
			if (r == 0) {
				ev->source = TC_EV_TRACEPOINT;
				ev->attr.type = PERF_TYPE_TRACEPOINT;
				ev->attr.config = v;
				ev->pmu = tc_strdup("tracepoint");
				return ev->pmu ? 0 : -ENOMEM;
			}
			miss->tp_err = r;
		}
	}
	if (tc_pfm_encode(s, len, &ev->attr, sizeof(ev->attr), &ev->pmu) == 0) {
		ev->source = TC_EV_PFM;
		ev->attr.size = sizeof(ev->attr);
		/* libpfm4's generic "perf" PMU maps to software or tracepoint events too */
		ev->uses_counter = ev->attr.type == PERF_TYPE_HARDWARE ||
				   ev->attr.type == PERF_TYPE_HW_CACHE ||
				   ev->attr.type == PERF_TYPE_RAW;
		return 0;
	}
	return -TACHO_ENOEVENT;
}

static bool looks_like_subsystem(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			return false;
	return len > 0;
}

/* The first ':' that ends an event's name: libpfm4's "pmu::EVENT" prefix is part of
 * the name. */
static const char *first_colon(const char *s, size_t len)
{
	const char *c = memchr(s, ':', len);
	const char *pfx = NULL;

	for (size_t i = 0; i + 1 < len; i++)
		if (s[i] == ':' && s[i + 1] == ':') {
			pfx = s + i + 2;
			break;
		}
	if (pfx && c == pfx - 2)
		c = memchr(pfx, ':', len - (size_t)(pfx - s));
	return c;
}

/* The best error for a name nothing resolved. */
static int explain_unknown(struct tc_parser *p, size_t off, size_t len, struct lookup_miss *miss)
{
	const char *s = p->src + off;
	const char *colon = first_colon(s, len);
	size_t first = colon ? (size_t)(colon - s) : len, bad;
	struct tc_event tmp;
	struct lookup_miss m2 = { 0 };
	uint64_t v;
	char why[200];
	int r;

	for (size_t i = 0; i < len; i++)
		if (!tc_name_char(s[i]))
			return tc_perr(p, off + i, -TACHO_EPARSE,
				    "unexpected character '%c' in an event name", s[i]);
	if (first == 0)
		return tc_perr(p, off, -TACHO_EPARSE, "expected an event name");

	/* a known event followed by something that is not a modifier group */
	tc_event_init(&tmp);
	r = resolve_name(p, off, first, &tmp, &m2);
	if (r == 0 && tmp.source != TC_EV_PFM) {
		int r2 = tc_modifiers(p, &tmp, off + first + 1, len - first - 1);
		tc_event_exit(&tmp);
		if (r2)
			return r2;
	}
	tc_event_exit(&tmp);
	if (r == -ENOMEM)
		return tc_perr(p, off, -ENOMEM, "out of memory");

	/* a libpfm4 event whose umask or attribute is wrong: find the first bad part */
	if (tc_pfm_knows(s, first)) {
		size_t end = first;
		while (end < len) {
			size_t next = end + 1;
			char *pmu = NULL;
			struct perf_event_attr a;
			while (next < len && s[next] != ':')
				next++;
			r = tc_pfm_encode(s, next, &a, sizeof(a), &pmu);
			free(pmu);
			if (r != 0)
				return tc_perr(p, off + end + 1, -TACHO_ENOEVENT,
					    "libpfm4 rejects '%.*s' of %.*s: %s", (int)(next - end - 1),
					    s + end + 1, (int)first, s, tc_pfm_strerror(r));
			end = next;
		}
		return tc_perr(p, off, -TACHO_ENOEVENT, "libpfm4 cannot encode '%.*s'", (int)len, s);
	}
	if (parse_cache(s, first, &v, &bad, why, sizeof(why)) < 0)
		return tc_perr(p, off + bad, -TACHO_ENOEVENT, "%s", why);
	if (s[0] == 'r' && first > 17) {
		size_t i = 1;
		while (i < first && tc_is_hex_digit(s[i]))
			i++;
		if (i == first)
			return tc_perr(p, off + 17, -TACHO_EOUTOFRANGE,
				    "a raw event has at most 16 hex digits");
	}
	if (colon && looks_like_subsystem(s, first) && !memchr(colon + 1, ':', len - first - 1)) {
		const char *root = tc_tracefs_root(p->ctx);
		if (miss->tp_err == -ENODEV || !root) {
			tc_tracefs_why(p->ctx, why, sizeof(why));
			return tc_perr(p, off, -TACHO_ENOEVENT,
				    "no tracefs to look up tracepoint '%.*s' in: %s", (int)len, s, why);
		}
		if (miss->tp_err == -ENOENT) {
			char path[512];
			snprintf(path, sizeof(path), "%s/events/%.*s", root, (int)first, s);
			if (access(path, F_OK) != 0 &&
			    tc_events_suggest(p->ctx, s, first, why, sizeof(why)) == 0)
				return tc_perr(p, off, -TACHO_ENOEVENT,
					    "no tracepoint subsystem '%.*s' in %s/events: did you "
					    "mean '%s'?", (int)first, s, root, why);
			if (access(path, F_OK) != 0)
				return tc_perr(p, off, -TACHO_ENOEVENT,
					    "no tracepoint subsystem '%.*s' in %s/events", (int)first,
					    s, root);
			return tc_perr(p, off + first + 1, -TACHO_ENOEVENT,
				    "no tracepoint '%.*s' in %s/events/%.*s", (int)(len - first - 1),
				    colon + 1, root, (int)first, s);
		}
	}
	if (tc_events_suggest(p->ctx, s, first, why, sizeof(why)) == 0)
		tc_perr(p, off, -TACHO_ENOEVENT, "unknown event '%.*s': did you mean '%s'? (not a "
			"generic, cache, software, raw, tracepoint or libpfm4 name)", (int)first,
			s, why);
	else
		tc_perr(p, off, -TACHO_ENOEVENT, "unknown event '%.*s' (not a generic, cache, "
			"software, raw, tracepoint or libpfm4 name)", (int)first, s);
	if (p->diag)
		p->diag->hint = TACHO_HINT_EVENTS;   /* the names that exist */
	return -TACHO_ENOEVENT;
}

bool tc_lookup_named(struct tc_parser *p, size_t start, size_t len)
{
	struct lookup_miss miss = { 0 };
	struct tc_event ev;
	int r;

	tc_event_init(&ev);
	r = resolve_name(p, start, len, &ev, &miss);
	tc_event_exit(&ev);
	return r == 0;
}

int tc_parse_named(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev)
{
	const char *s = p->src + start;
	size_t len = end - start;
	const char *last = NULL;
	struct lookup_miss miss = { 0 };
	int r;

	for (size_t i = len; i > 0; i--)
		if (s[i - 1] == ':') {
			last = s + i - 1;
			break;
		}
	if (last && tc_all_modifier_chars(last + 1, len - (size_t)(last - s) - 1)) {
		size_t nlen = (size_t)(last - s);
		r = resolve_name(p, start, nlen, ev, &miss);
		if (r == 0)
			return tc_modifiers(p, ev, start + nlen + 1, len - nlen - 1);
		if (r != -TACHO_ENOEVENT)
			return tc_perr(p, start, r, "%s", tacho_strerror(r));
		tc_event_exit(ev);
		tc_event_init(ev);
	}
	r = resolve_name(p, start, len, ev, &miss);
	if (r == 0)
		return 0;
	if (r != -TACHO_ENOEVENT)
		return tc_perr(p, start, r, "%s", tacho_strerror(r));
	return explain_unknown(p, start, len, &miss);
}

/* ---------------------------------------------------------------- tracepoint globs */

bool tc_has_glob(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	return false;
}

static int dir_only(const struct dirent *d)
{
	return d->d_name[0] != '.' && (d->d_type == DT_DIR || d->d_type == DT_UNKNOWN);
}

/* SUBSYS:NAME[:MODS] where SUBSYS or NAME holds shell wildcards (* ? [...]): one event
 * per matching tracepoint, in sorted order, each named SUBSYS:NAME[:MODS]. */
int tc_parse_tracepoint_glob(struct tc_parser *p, size_t start, size_t end)
{
	const char *s = p->src + start;
	size_t len = end - start, c1, c2, n0 = p->n;
	char sys[256], pat[256], dir[1024];
	const char *root;
	struct dirent **subs;
	int nsub, r = 0;

	for (size_t i = 0; i < len; i++)
		if (!tc_name_char(s[i]) && s[i] != '*' && s[i] != '?' && s[i] != '[' && s[i] != ']')
			return tc_perr(p, start + i, -TACHO_EPARSE,
				    "unexpected character '%c' in a tracepoint pattern", s[i]);
	for (c1 = 0; c1 < len && s[c1] != ':'; c1++)
		;
	if (c1 == len || c1 == 0)
		return tc_perr(p, start, -TACHO_EPARSE, "wildcards select tracepoints: expected "
			    "SUBSYSTEM:NAME with * ? or [...] in either part");
	for (c2 = c1 + 1; c2 < len && s[c2] != ':'; c2++)
		;
	if (c2 == c1 + 1 || c1 >= sizeof(sys) || c2 - c1 - 1 >= sizeof(pat))
		return tc_perr(p, start + c1 + 1, -TACHO_EPARSE, "expected a tracepoint name pattern");
	snprintf(sys, sizeof(sys), "%.*s", (int)c1, s);
	snprintf(pat, sizeof(pat), "%.*s", (int)(c2 - c1 - 1), s + c1 + 1);
	if (c2 < len) {
		struct tc_event probe;
		tc_event_init(&probe);
		r = tc_modifiers(p, &probe, start + c2 + 1, len - c2 - 1);
		if (r)
			return r;
	}
	root = tc_tracefs_root(p->ctx);
	if (!root) {
		char why[300];
		tc_tracefs_why(p->ctx, why, sizeof(why));
		return tc_perr(p, start, -TACHO_ENOEVENT, "no tracefs to look up tracepoints in: %s",
			    why);
	}
	snprintf(dir, sizeof(dir), "%s/events", root);
	nsub = scandir(dir, &subs, dir_only, alphasort);
	for (int i = 0; i < nsub; i++) {
		struct dirent **tps;
		char sub[1400];
		int nt = -1;

		if (!r && fnmatch(sys, subs[i]->d_name, 0) == 0) {
			snprintf(sub, sizeof(sub), "%s/%s", dir, subs[i]->d_name);
			nt = scandir(sub, &tps, dir_only, alphasort);
		}
		for (int j = 0; j < nt; j++) {
			struct tc_event ev;
			struct tc_sb name = TC_SB_INIT;
			uint64_t id;
			const char *tp = tps[j]->d_name;

			if (!r && fnmatch(pat, tp, 0) == 0 &&
			    tc_tracepoint_id(p->ctx, subs[i]->d_name, strlen(subs[i]->d_name), tp,
					     strlen(tp), &id) == 0) {
				tc_event_init(&ev);
				ev.column = (unsigned)start + 1;
				ev.source = TC_EV_TRACEPOINT;
				ev.attr.type = PERF_TYPE_TRACEPOINT;
				ev.attr.config = id;
				tc_sb_init(&name);
				tc_sb_addf(&name, "%s:%s", subs[i]->d_name, tp);
				if (c2 < len)
					tc_sb_add(&name, s + c2, len - c2);
				ev.name = tc_sb_detach(&name);
				ev.pmu = tc_strdup("tracepoint");
				if (c2 < len)
					tc_modifiers(p, &ev, start + c2 + 1, len - c2 - 1);
				if (!ev.name || !ev.pmu || tc_push_event(p, &ev) != 0) {
					tc_event_exit(&ev);
					r = tc_perr(p, start, -ENOMEM, "out of memory");
				}
			}
			free(tps[j]);
		}
		if (nt >= 0)
			free(tps);
		free(subs[i]);
	}
	if (nsub >= 0)
		free(subs);
	if (!r && p->n == n0)
		r = tc_perr(p, start, -TACHO_ENOEVENT, "no tracepoint matches '%.*s' in %s",
			 (int)(c2), s, dir);
	if (r) {
		while (p->n > n0)
			tc_event_exit(&p->ev[--p->n]);
	}
	return r;
}
