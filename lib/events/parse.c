/* parse.c - the event grammar's structure: a spec into events and {groups} separated
 * by commas, where each event ends (pmu/terms/ keep their commas), which resolver reads
 * it, a group's modifiers and leader. The tokens are in token.c, the resolvers in
 * resolve.c, resolve-probe.c and sysfs.c; docs/events.md is the user's description. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "events/parse.h"
#include "tacho/errors.h"

/* ---------------------------------------------------------------- one event */

static bool ends_term(char c)
{
	return c == ',' || c == '{' || c == '}' || c == ' ' || c == '\t' || c == '\n';
}

/* Finds where the event at start ends: at a separator outside pmu/.../. */
static int term_extent(struct tc_parser *p, size_t start, size_t *end)
{
	const char *s = p->src;
	size_t i = start;

	if ((p->len - start >= 4 && strncasecmp(s + start, "mem:", 4) == 0) ||
	    tc_uprobe_prefix(p, start) || tc_kprobe_prefix(p, start) || tc_sdt_prefix(p, start)) {
		/* no pmu/terms/ here: a '/' is part of the address or the path */
		while (i < p->len && !ends_term(s[i]))
			i++;
		*end = i;
		return 0;
	}
	while (i < p->len && !ends_term(s[i])) {
		if (s[i] == '/') {
			const char *close = memchr(s + i + 1, '/', p->len - i - 1);
			if (!close)
				return tc_perr(p, p->len, -TACHO_EPARSE,
					    "expected '/' to close the terms opened at column %zu",
					    i + 1);
			/* one pair of slashes per event; what follows is modifiers */
			i = (size_t)(close - s) + 1;
			while (i < p->len && !ends_term(s[i]))
				i++;
			break;
		}
		i++;
	}
	*end = i;
	return 0;
}

/* Whether NAME/ names a PMU of sysfs (its folder has a type). */
static bool is_pmu(const struct tc_parser *p, size_t start, size_t len)
{
	char path[1024];
	long long type;

	if (!tc_events_safe_component(p->src + start, len))
		return false;
	snprintf(path, sizeof(path), "%s/%.*s/type", p->ctx->sysfs_root, (int)len,
		 p->src + start);
	return tc_read_int_file(path, &type) == 0;
}

/* perf's terms on a named event, NAME/TERMS/[MODIFIERS]: the event as its name makes
 * it, then period=N (a sampling period), freq=N (a sampling frequency) and name=TEXT (how
 * outputs call it), separated by commas. */
static int parse_named_terms(struct tc_parser *p, size_t start, size_t slash, size_t end,
			     struct tc_event *ev)
{
	const char *s = p->src;
	const char *close = memchr(s + slash + 1, '/', end - slash - 1);
	size_t pos = slash + 1, stop;
	int r;

	if (!close)
		return tc_perr(p, end, -TACHO_EPARSE, "expected '/' to close the terms of '%.*s'",
			       (int)(slash - start), s + start);
	stop = (size_t)(close - s);
	r = tc_parse_named(p, start, slash, ev);
	if (r)
		return r;
	if (pos == stop)
		return tc_perr(p, pos, -TACHO_EPARSE, "expected a term (period, freq or name)");
	while (pos <= stop) {
		size_t k0 = pos, klen, v0, vlen;
		uint64_t v = 0;
		char num[32];

		while (pos < stop && s[pos] != ',' && s[pos] != '=')
			pos++;
		klen = pos - k0;
		if (pos == stop || s[pos] != '=')
			return tc_perr(p, k0, -TACHO_EPARSE, "expected TERM=VALUE (period, freq or "
				       "name) on the named event '%.*s'", (int)(slash - start),
				       s + start);
		v0 = ++pos;
		while (pos < stop && s[pos] != ',')
			pos++;
		vlen = pos - v0;
		if (klen == 4 && !strncmp(s + k0, "name", 4)) {
			if (!vlen)
				return tc_perr(p, v0, -TACHO_EPARSE, "expected a name after 'name='");
			free(ev->name);
			ev->name = tc_strndup(s + v0, vlen);
			if (!ev->name)
				return tc_perr(p, v0, -ENOMEM, "out of memory");
		} else if ((klen == 6 && !strncmp(s + k0, "period", 6)) ||
			   (klen == 4 && !strncmp(s + k0, "freq", 4))) {
			if (!vlen || vlen >= sizeof(num))
				return tc_perr(p, v0, -TACHO_EPARSE, "expected a number for '%.*s'",
					       (int)klen, s + k0);
			memcpy(num, s + v0, vlen);
			num[vlen] = '\0';
			if (tc_parse_u64(num, &v) || v == 0)
				return tc_perr(p, v0, -TACHO_EPARSE, "expected a number above 0 "
					       "for '%.*s'", (int)klen, s + k0);
			/* sample_period and sample_freq share their place: the last wins */
			ev->attr.freq = klen == 4;
			ev->attr.sample_period = v;
		} else {
			return tc_perr(p, k0, -TACHO_ENOEVENT, "'%.*s' is no term of a named "
				       "event (period, freq or name) and '%.*s' is no PMU",
				       (int)klen, s + k0, (int)(slash - start), s + start);
		}
		pos++;
	}
	/* modifiers follow the closing '/', with or without a ':' */
	pos = stop + 1;
	if (pos < end && s[pos] == ':')
		pos++;
	return pos < end || s[pos - 1] == ':' ? tc_modifiers(p, ev, pos, end - pos) : 0;
}

static int parse_event(struct tc_parser *p, size_t start, size_t *endp)
{
	struct tc_event ev;
	size_t end = start;
	const char *slash;
	int r;

	r = term_extent(p, start, &end);
	if (r)
		return r;
	if (end == start) {
		if (start >= p->len)
			return tc_perr(p, start, -TACHO_EPARSE, "expected an event at the end");
		return tc_perr(p, start, -TACHO_EPARSE, "expected an event before '%c'", p->src[start]);
	}
	tc_event_init(&ev);
	ev.column = (unsigned)start + 1;
	slash = memchr(p->src + start, '/', end - start);
	if (end - start >= 4 && strncasecmp(p->src + start, "mem:", 4) == 0) {
		r = tc_parse_breakpoint(p, start, end, &ev);
	} else if (tc_uprobe_prefix(p, start)) {
		r = tc_parse_uprobe(p, start, end, &ev);
	} else if (tc_kprobe_prefix(p, start)) {
		r = tc_parse_kprobe(p, start, end, &ev);
	} else if (tc_sdt_prefix(p, start)) {
		r = tc_parse_sdt(p, start, end, &ev);
	} else if (slash && !is_pmu(p, start, (size_t)(slash - (p->src + start))) &&
		   tc_lookup_named(p, start, (size_t)(slash - (p->src + start)))) {
		r = parse_named_terms(p, start, (size_t)(slash - p->src), end, &ev);
	} else if (slash) {
		r = tc_pmu_parse(p->ctx, p->src, start, end, &ev, p->diag);
		if (r >= 0) {
			size_t pos = (size_t)r;
			/* modifiers follow the closing '/', with or without a ':' */
			if (pos < end && p->src[pos] == ':')
				pos++;
			r = pos < end || p->src[pos - 1] == ':' ? tc_modifiers(p, &ev, pos, end - pos) : 0;
		}
	} else if (tc_has_glob(p->src + start, end - start)) {
		tc_event_exit(&ev);
		r = tc_parse_tracepoint_glob(p, start, end);
		if (r == 0)
			*endp = end;
		return r;
	} else {
		r = tc_parse_named(p, start, end, &ev);
	}
	if (r == 0 && !ev.name) {
		ev.name = tc_strndup(p->src + start, end - start);
		if (!ev.name)
			r = tc_perr(p, start, -ENOMEM, "out of memory");
	}
	if (r == 0 && tc_push_event(p, &ev) != 0)
		r = tc_perr(p, start, -ENOMEM, "out of memory");
	if (r) {
		tc_event_exit(&ev);
		return r;
	}
	*endp = end;
	return 0;
}

/* ---------------------------------------------------------------- the list */

static size_t skip_space(const struct tc_parser *p, size_t pos)
{
	while (pos < p->len && (p->src[pos] == ' ' || p->src[pos] == '\t' || p->src[pos] == '\n'))
		pos++;
	return pos;
}

static int parse_group(struct tc_parser *p, size_t open, size_t *endp, size_t base)
{
	size_t pos = open + 1, first = p->n;
	int r;

	for (;;) {
		pos = skip_space(p, pos);
		if (pos < p->len && p->src[pos] == '{')
			return tc_perr(p, pos, -TACHO_EPARSE, "groups do not nest");
		if (pos < p->len && p->src[pos] == '}' && p->n == first)
			return tc_perr(p, pos, -TACHO_EPARSE, "expected an event in the group");
		r = parse_event(p, pos, &pos);
		if (r)
			return r;
		pos = skip_space(p, pos);
		if (pos >= p->len)
			return tc_perr(p, pos, -TACHO_EPARSE,
				    "expected '}' to close the group opened at column %zu", open + 1);
		if (p->src[pos] == '}')
			break;
		if (p->src[pos] != ',')
			return tc_perr(p, pos, -TACHO_EPARSE, "expected ',' or '}' after an event");
		pos++;
	}
	pos++;   /* '}' */
	if (pos < p->len && p->src[pos] == ':') {
		size_t m0 = ++pos;
		while (pos < p->len && !ends_term(p->src[pos]))
			pos++;
		for (size_t i = first; i < p->n; i++) {
			r = tc_modifiers(p, &p->ev[i], m0, pos - m0);
			if (r)
				return r;
		}
	}
	for (size_t i = first; i < p->n; i++)
		p->ev[i].group_leader = (int)(base + first);
	*endp = pos;
	return 0;
}

int tc_parse_spec(struct tc_parser *p, size_t base)
{
	size_t pos = skip_space(p, 0);
	int r;

	if (pos >= p->len)
		return tc_perr(p, pos, -TACHO_EEMPTY, "expected at least one event");
	for (;;) {
		if (p->src[pos] == '{')
			r = parse_group(p, pos, &pos, base);
		else
			r = parse_event(p, pos, &pos);
		if (r)
			return r;
		pos = skip_space(p, pos);
		if (pos >= p->len)
			return 0;
		if (p->src[pos] != ',')
			return tc_perr(p, pos, -TACHO_EPARSE, "expected ',' between events, not '%c'",
				    p->src[pos]);
		pos = skip_space(p, pos + 1);
		if (pos >= p->len)
			return tc_perr(p, pos, -TACHO_EPARSE, "expected an event after ','");
	}
}
