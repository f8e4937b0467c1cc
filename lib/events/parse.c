/* parse.c - the event grammar: splits a spec into events and groups, resolves each
 * name (generic, cache, software, raw, tracepoint, libpfm4, sysfs PMU, breakpoint,
 * uprobe),
 * applies modifiers, and reports the first bad character of a malformed spec.
 * docs/events.md is the user's description of what this accepts. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>

#include "events/events.h"

struct tacho_evlist {
	struct tc_event *ev;
	size_t n, alloc;
	struct tc_events_ctx ctx;
	char *sysfs_root;      /* owned copies of ctx's strings */
	char *tracefs_root;
};

struct parser {
	const char *src;
	size_t len;
	const struct tc_events_ctx *ctx;
	struct tacho_diag *diag;
	struct tc_event *ev;   /* the events parsed so far, appended to the list at the end */
	size_t n, alloc;
};

/* ---------------------------------------------------------------- small helpers */

static int perr(struct parser *p, size_t off, int err, const char *fmt, ...) TC_PRINTF(4, 5);
static int perr(struct parser *p, size_t off, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tc_diag_set(p->diag, p->src, 0, (unsigned)off + 1, err, "%s", msg);
}

static void event_exit(struct tc_event *ev)
{
	free(ev->name);
	free(ev->pmu);
	free(ev->unit_buf);
	free(ev->probe_path);
	memset(ev, 0, sizeof(*ev));
}

static void event_init(struct tc_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->attr.size = sizeof(ev->attr);
	ev->unit = "";
	ev->scale = 1.0;
	ev->group_leader = -1;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Parses src[start..end) as an unsigned number (0x hex or decimal). */
static int parse_num(const char *s, size_t len, uint64_t *out)
{
	char buf[64];

	if (len == 0 || len >= sizeof(buf))
		return len ? -TACHO_ERANGE : -TACHO_EPARSE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return tc_parse_u64(buf, out);
}

/* ---------------------------------------------------------------- modifiers */

static const char modifier_chars[] = "ukhGHIpD";

static bool all_modifier_chars(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr(modifier_chars, s[i]) || s[i] == '\0')
			return false;
	return true;
}

/* perf's semantics: the first of u/k/h excludes all three privilege levels, then each
 * letter re-includes its own, so "uk" counts user and kernel but not the hypervisor.
 * G and H work the same way on guest and host. */
int tc_apply_modifiers(struct perf_event_attr *attr, const char *s, size_t len,
		       const char **why)
{
	bool ring = false, gh = false;
	int eu = 0, ek = 0, eh = 0, eg = 0, ehost = 0, precise = 0;

	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case 'u': case 'k': case 'h':
			if (!ring) {
				ring = true;
				eu = ek = eh = 1;
			}
			if (s[i] == 'u')
				eu = 0;
			else if (s[i] == 'k')
				ek = 0;
			else
				eh = 0;
			break;
		case 'G': case 'H':
			if (!gh) {
				gh = true;
				eg = ehost = 1;
			}
			if (s[i] == 'G')
				eg = 0;
			else
				ehost = 0;
			break;
		case 'I':
			attr->exclude_idle = 1;
			break;
		case 'p':
			if (++precise > 3) {
				*why = "precise level above 3 at '%c' (p, pp or ppp)";
				return (int)i;
			}
			break;
		case 'D':
			attr->pinned = 1;
			break;
		case ':':
			*why = "unexpected '%c': modifiers come as one group (write 'uk', not 'u:k')";
			return (int)i;
		default:
			*why = "unknown modifier '%c' (expected u, k, h, G, H, I, p, pp, ppp or D)";
			return (int)i;
		}
	}
	if (ring) {
		attr->exclude_user = eu;
		attr->exclude_kernel = ek;
		attr->exclude_hv = eh;
	}
	if (gh) {
		attr->exclude_guest = eg;
		attr->exclude_host = ehost;
	}
	if (precise)
		attr->precise_ip = precise;
	return -1;
}

/* Applies src[off..off+len) as modifiers, or reports the bad letter. */
static int modifiers(struct parser *p, struct tc_event *ev, size_t off, size_t len)
{
	const char *why = NULL;
	int bad;

	if (len == 0)
		return perr(p, off, -TACHO_EPARSE, "expected modifiers (u, k, h, G, H, I, p, D)");
	bad = tc_apply_modifiers(&ev->attr, p->src + off, len, &why);
	if (bad >= 0)
		return perr(p, off + bad, -TACHO_EPARSE, why, p->src[off + bad]);
	return 0;
}

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
static int resolve_name(struct parser *p, size_t off, size_t len, struct tc_event *ev,
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
		while (i < len && is_hex(s[i]))
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

static bool name_char(char c)
{
	return is_alnum(c) || c == '_' || c == '-' || c == '.' || c == ':' || c == '=';
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
static int explain_unknown(struct parser *p, size_t off, size_t len, struct lookup_miss *miss)
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
		if (!name_char(s[i]))
			return perr(p, off + i, -TACHO_EPARSE,
				    "unexpected character '%c' in an event name", s[i]);
	if (first == 0)
		return perr(p, off, -TACHO_EPARSE, "expected an event name");

	/* a known event followed by something that is not a modifier group */
	event_init(&tmp);
	r = resolve_name(p, off, first, &tmp, &m2);
	if (r == 0 && tmp.source != TC_EV_PFM) {
		int r2 = modifiers(p, &tmp, off + first + 1, len - first - 1);
		event_exit(&tmp);
		if (r2)
			return r2;
	}
	event_exit(&tmp);
	if (r == -ENOMEM)
		return perr(p, off, -ENOMEM, "out of memory");

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
				return perr(p, off + end + 1, -TACHO_ENOEVENT,
					    "libpfm4 rejects '%.*s' of %.*s: %s", (int)(next - end - 1),
					    s + end + 1, (int)first, s, tc_pfm_strerror(r));
			end = next;
		}
		return perr(p, off, -TACHO_ENOEVENT, "libpfm4 cannot encode '%.*s'", (int)len, s);
	}
	if (parse_cache(s, first, &v, &bad, why, sizeof(why)) < 0)
		return perr(p, off + bad, -TACHO_ENOEVENT, "%s", why);
	if (s[0] == 'r' && first > 17) {
		size_t i = 1;
		while (i < first && is_hex(s[i]))
			i++;
		if (i == first)
			return perr(p, off + 17, -TACHO_ERANGE,
				    "a raw event has at most 16 hex digits");
	}
	if (colon && looks_like_subsystem(s, first) && !memchr(colon + 1, ':', len - first - 1)) {
		const char *root = tc_tracefs_root(p->ctx);
		if (miss->tp_err == -ENODEV || !root) {
			tc_tracefs_why(p->ctx, why, sizeof(why));
			return perr(p, off, -TACHO_ENOEVENT,
				    "no tracefs to look up tracepoint '%.*s' in: %s", (int)len, s, why);
		}
		if (miss->tp_err == -ENOENT) {
			char path[512];
			snprintf(path, sizeof(path), "%s/events/%.*s", root, (int)first, s);
			if (access(path, F_OK) != 0)
				return perr(p, off, -TACHO_ENOEVENT,
					    "no tracepoint subsystem '%.*s' in %s/events", (int)first,
					    s, root);
			return perr(p, off + first + 1, -TACHO_ENOEVENT,
				    "no tracepoint '%.*s' in %s/events/%.*s", (int)(len - first - 1),
				    colon + 1, root, (int)first, s);
		}
	}
	perr(p, off, -TACHO_ENOEVENT, "unknown event '%.*s' (not a generic, cache, software, "
	     "raw, tracepoint or libpfm4 name)", (int)first, s);
	if (p->diag)
		p->diag->hint = TACHO_HINT_EVENTS;   /* the names that exist */
	return -TACHO_ENOEVENT;
}

static int parse_named(struct parser *p, size_t start, size_t end, struct tc_event *ev)
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
	if (last && all_modifier_chars(last + 1, len - (size_t)(last - s) - 1)) {
		size_t nlen = (size_t)(last - s);
		r = resolve_name(p, start, nlen, ev, &miss);
		if (r == 0)
			return modifiers(p, ev, start + nlen + 1, len - nlen - 1);
		if (r != -TACHO_ENOEVENT)
			return perr(p, start, r, "%s", tacho_strerror(r));
		event_exit(ev);
		event_init(ev);
	}
	r = resolve_name(p, start, len, ev, &miss);
	if (r == 0)
		return 0;
	if (r != -TACHO_ENOEVENT)
		return perr(p, start, r, "%s", tacho_strerror(r));
	return explain_unknown(p, start, len, &miss);
}

/* ---------------------------------------------------------------- breakpoints */

/* mem:ADDR[/LEN][:ACCESS][:MODS]. The kernel's rules (kernel/events/hw_breakpoint.c,
 * arch/x86/kernel/hw_breakpoint.c): LEN 1, 2, 4 or 8; the address aligned to LEN; an
 * execute breakpoint is never also a data one and covers sizeof(long) bytes. */
static int parse_breakpoint(struct parser *p, size_t start, size_t end, struct tc_event *ev)
{
	const char *s = p->src;
	size_t pos = start + 4, a0, l0 = 0;
	uint64_t addr, len = 0;
	unsigned type = 0;
	bool have_len = false, x_seen = false;
	int r;

	a0 = pos;
	while (pos < end && s[pos] != '/' && s[pos] != ':')
		pos++;
	if (pos == a0)
		return perr(p, a0, -TACHO_EPARSE, "expected an address after 'mem:'");
	r = parse_num(s + a0, pos - a0, &addr);
	if (r) {
		size_t i = a0;
		bool hex = pos - a0 >= 2 && s[a0] == '0' && (s[a0 + 1] == 'x' || s[a0 + 1] == 'X');
		if (hex)
			i += 2;
		while (i < pos && (hex ? is_hex(s[i]) : (s[i] >= '0' && s[i] <= '9')))
			i++;
		if (r == -TACHO_ERANGE)
			return perr(p, a0, r, "the address does not fit in 64 bits");
		/* i == pos: nothing after "0x" */
		return perr(p, i, -TACHO_EPARSE, "expected a hex (0x...) or decimal address");
	}
	if (pos < end && s[pos] == '/') {
		l0 = ++pos;
		while (pos < end && s[pos] != ':')
			pos++;
		if (pos == l0)
			return perr(p, l0, -TACHO_EPARSE, "expected a length (1, 2, 4 or 8) after '/'");
		r = parse_num(s + l0, pos - l0, &len);
		if (r || (len != 1 && len != 2 && len != 4 && len != 8))
			return perr(p, l0, -TACHO_EPARSE, "a breakpoint's length is 1, 2, 4 or 8 bytes");
		have_len = true;
	}
	if (pos < end) {
		/* s[pos] == ':' */
		size_t seg = pos + 1, segend = seg;
		while (segend < end && s[segend] != ':')
			segend++;
		bool access = segend > seg;
		for (size_t i = seg; i < segend; i++)
			if (s[i] != 'r' && s[i] != 'w' && s[i] != 'x')
				access = false;
		if (access) {
			for (size_t i = seg; i < segend; i++) {
				if (s[i] == 'r')
					type |= HW_BREAKPOINT_R;
				else if (s[i] == 'w')
					type |= HW_BREAKPOINT_W;
				else {
					type |= HW_BREAKPOINT_X;
					x_seen = true;
				}
				if (x_seen && (type & HW_BREAKPOINT_RW))
					return perr(p, i, -TACHO_EPARSE,
						    "an execute breakpoint cannot also watch reads "
						    "or writes (use two events)");
			}
			pos = segend;
		}
		if (pos < end) {
			r = modifiers(p, ev, pos + 1, end - pos - 1);
			if (r)
				return r;
		}
	}
	if (!type)
		type = HW_BREAKPOINT_RW;
	if (type == HW_BREAKPOINT_X) {
		if (have_len && len != sizeof(long))
			return perr(p, l0, -TACHO_EPARSE,
				    "an execute breakpoint covers %zu bytes (write /%zu or no length)",
				    sizeof(long), sizeof(long));
		len = sizeof(long);
	} else if (!have_len) {
		len = HW_BREAKPOINT_LEN_4;
	}
	if (addr % len)
		return perr(p, a0, -TACHO_EPARSE, "the address 0x%llx is not aligned to the length %llu%s",
			    (unsigned long long)addr, (unsigned long long)len,
			    have_len ? "" : " (the default; give one: mem:ADDR/1)");
	ev->source = TC_EV_BREAKPOINT;
	ev->attr.type = PERF_TYPE_BREAKPOINT;
	ev->attr.config = 0;
	ev->attr.bp_type = type;
	ev->attr.bp_addr = addr;
	ev->attr.bp_len = len;
	ev->pmu = tc_strdup("breakpoint");
	return ev->pmu ? 0 : perr(p, start, -ENOMEM, "out of memory");
}

/* ---------------------------------------------------------------- uprobes */

/* The length of "uprobe:" or "uretprobe:" at start, or 0. These prefixes win over a
 * tracepoint subsystem of the same name: tracefs names uprobe events "uprobes:NAME"
 * (plural), and "uprobe" is a PMU of the kernel here (docs/events.md). */
static size_t uprobe_prefix(const struct parser *p, size_t start)
{
	size_t left = p->len - start;

	if (left >= 7 && strncasecmp(p->src + start, "uprobe:", 7) == 0)
		return 7;
	if (left >= 10 && strncasecmp(p->src + start, "uretprobe:", 10) == 0)
		return 10;
	return 0;
}

static bool symbol_char(char c)
{
	return is_alnum(c) || c == '_' || c == '.' || c == '$';
}

/* An error of uprobe.c as a diagnostic: a file that cannot be read or is not ELF is
 * the path's fault (well formed, but nothing to probe: -TACHO_ENOEVENT); a missing
 * function or an offset out of range is the function's or offset's. */
static int uprobe_err(struct parser *p, int r, size_t path_col, size_t where_col,
		      const char *why)
{
	if (r == -ENOMEM)
		return perr(p, path_col, r, "out of memory");
	if (r == -TACHO_ERANGE || r == -TACHO_ENOEVENT)
		return perr(p, where_col, r, "%s", why);
	return perr(p, path_col, -TACHO_ENOEVENT, "%s", why);
}

/* uprobe:PATH:SYMBOL[+OFF][:MODS], uprobe:PATH:OFFSET[:MODS] and the same with
 * uretprobe:. PATH runs to the first ':' (a path with ':' in it cannot be written;
 * a symbolic link without one can). The uprobe PMU (kernel/events/core.c,
 * perf_uprobe_init) takes the path as a user pointer in config1 and the file offset
 * of the instruction in config2; the kernel resolves the path itself, in the opening
 * process, so a relative one is made absolute here. */
static int parse_uprobe(struct parser *p, size_t start, size_t end, struct tc_event *ev)
{
	const char *s = p->src;
	size_t pre = uprobe_prefix(p, start), p0 = start + pre, p1, t0, t1, plus;
	bool ret = pre == 10;
	uint64_t off = 0, add = 0;
	uint32_t type;
	unsigned retbit;
	const char *upath = NULL;
	char why[600], path[4096];
	int r;

	for (p1 = p0; p1 < end && s[p1] != ':'; p1++)
		;
	if (p1 == p0)
		return perr(p, p0, -TACHO_EPARSE, "expected the path of an executable or library "
			    "after '%.*s'", (int)pre, s + start);
	if (p1 == end)
		return perr(p, end, -TACHO_EPARSE, "expected ':' and a function name or a file "
			    "offset after the path");
	if (p1 - p0 >= sizeof(path))
		return perr(p, p0, -TACHO_ERANGE, "the path is longer than %zu bytes",
			    sizeof(path) - 1);
	t0 = p1 + 1;
	for (t1 = t0; t1 < end && s[t1] != ':'; t1++)
		;
	if (t1 == t0)
		return perr(p, t0, -TACHO_EPARSE, "expected a function name or a file offset "
			    "(0x...) after the path");
	if (t1 < end) {
		r = modifiers(p, ev, t1 + 1, end - t1 - 1);
		if (r)
			return r;
	}
	for (plus = t0; plus < t1 && s[plus] != '+'; plus++)
		;
	if (s[t0] >= '0' && s[t0] <= '9') {
		/* a file offset; "+" has no meaning after a number */
		r = parse_num(s + t0, t1 - t0, &off);
		if (r)
			return perr(p, t0, r == -TACHO_ERANGE ? r : -TACHO_EPARSE,
				    r == -TACHO_ERANGE ? "the offset does not fit in 64 bits" :
				    "expected a file offset (0x... or decimal) or a function name");
	} else {
		for (size_t i = t0; i < plus; i++)
			if (!symbol_char(s[i]))
				return perr(p, i, -TACHO_EPARSE, "unexpected '%c' in a function name",
					    s[i]);
		if (plus == t0)
			return perr(p, t0, -TACHO_EPARSE, "expected a function name before '+'");
		if (plus < t1) {
			r = parse_num(s + plus + 1, t1 - plus - 1, &add);
			if (r)
				return perr(p, plus + 1, r == -TACHO_ERANGE ? r : -TACHO_EPARSE,
					    "expected a byte offset into the function after '+'");
			if (ret && add)
				return perr(p, plus, -TACHO_EPARSE, "a return probe fires when the "
					    "function returns: it takes no '+OFF'");
		}
	}
	/* the PMU first: without it nothing else matters */
	r = tc_uprobe_pmu(p->ctx, &type, &retbit);
	if (r)
		return perr(p, start, -TACHO_ENOEVENT, r == -ENODEV ?
			    "no uprobe PMU in %s: this kernel cannot count uprobes through "
			    "the perf syscall (it needs CONFIG_UPROBE_EVENTS, Linux 4.17 or later)" :
			    "cannot read the uprobe PMU in %s: %s", p->ctx->sysfs_root,
			    tacho_strerror(r));
	snprintf(path, sizeof(path), "%.*s", (int)(p1 - p0), s + p0);
	if (p->ctx->no_files) {
		if (path[0] != '/')
			return perr(p, p0, -TACHO_EPARSE, "the path must be absolute here "
				    "(files named in specs are not looked at)");
		if (plus != t1 || !(s[t0] >= '0' && s[t0] <= '9'))
			return perr(p, t0, -TACHO_EPARSE, "a function name needs its file read, "
				    "which is off here: give the file offset (0x...)");
		ev->probe_path = tc_strdup(path);
		upath = ev->probe_path;
	} else {
		char *abs = realpath(path, NULL);
		if (!abs) {
			int e = errno;
			if (e == ENOMEM)
				return perr(p, p0, -ENOMEM, "out of memory");
			return perr(p, p0, -TACHO_ENOEVENT, "cannot find '%s': %s", path, strerror(e));
		}
		if (plus == t1 && s[t0] >= '0' && s[t0] <= '9')
			r = tc_uprobe_check_offset(abs, off, why, sizeof(why));
		else
			r = tc_uprobe_symbol_offset(abs, s + t0, plus - t0, add, &off, why,
						    sizeof(why));
		upath = r ? NULL : tc_uprobe_intern(abs);
		free(abs);
		if (r)
			return uprobe_err(p, r, p0, r == -TACHO_ERANGE && plus < t1 ? plus + 1 : t0,
					  why);
	}
	if (!upath)
		return perr(p, start, -ENOMEM, "out of memory");
	ev->source = TC_EV_BREAKPOINT;
	ev->attr.type = type;
	ev->attr.config = ret ? 1ull << retbit : 0;
	ev->attr.uprobe_path = (uint64_t)(uintptr_t)upath;
	ev->attr.probe_offset = off;
	ev->pmu = tc_strdup("uprobe");
	return ev->pmu ? 0 : perr(p, start, -ENOMEM, "out of memory");
}

/* ---------------------------------------------------------------- one event */

static bool ends_term(char c)
{
	return c == ',' || c == '{' || c == '}' || c == ' ' || c == '\t' || c == '\n';
}

/* Finds where the event at start ends: at a separator outside pmu/.../. */
static int term_extent(struct parser *p, size_t start, size_t *end)
{
	const char *s = p->src;
	size_t i = start;

	if ((p->len - start >= 4 && strncasecmp(s + start, "mem:", 4) == 0) ||
	    uprobe_prefix(p, start)) {
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
				return perr(p, p->len, -TACHO_EPARSE,
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

static int push_event(struct parser *p, struct tc_event *ev)
{
	if (p->n == p->alloc) {
		size_t na = p->alloc ? 2 * p->alloc : 8;
		struct tc_event *ne = realloc(p->ev, na * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		p->ev = ne;
		p->alloc = na;
	}
	p->ev[p->n++] = *ev;
	return 0;
}

/* ---------------------------------------------------------------- tracepoint globs */

static bool has_glob(const char *s, size_t len)
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
static int parse_tracepoint_glob(struct parser *p, size_t start, size_t end)
{
	const char *s = p->src + start;
	size_t len = end - start, c1, c2, n0 = p->n;
	char sys[256], pat[256], dir[1024];
	const char *root;
	struct dirent **subs;
	int nsub, r = 0;

	for (size_t i = 0; i < len; i++)
		if (!name_char(s[i]) && s[i] != '*' && s[i] != '?' && s[i] != '[' && s[i] != ']')
			return perr(p, start + i, -TACHO_EPARSE,
				    "unexpected character '%c' in a tracepoint pattern", s[i]);
	for (c1 = 0; c1 < len && s[c1] != ':'; c1++)
		;
	if (c1 == len || c1 == 0)
		return perr(p, start, -TACHO_EPARSE, "wildcards select tracepoints: expected "
			    "SUBSYSTEM:NAME with * ? or [...] in either part");
	for (c2 = c1 + 1; c2 < len && s[c2] != ':'; c2++)
		;
	if (c2 == c1 + 1 || c1 >= sizeof(sys) || c2 - c1 - 1 >= sizeof(pat))
		return perr(p, start + c1 + 1, -TACHO_EPARSE, "expected a tracepoint name pattern");
	snprintf(sys, sizeof(sys), "%.*s", (int)c1, s);
	snprintf(pat, sizeof(pat), "%.*s", (int)(c2 - c1 - 1), s + c1 + 1);
	if (c2 < len) {
		struct tc_event probe;
		event_init(&probe);
		r = modifiers(p, &probe, start + c2 + 1, len - c2 - 1);
		if (r)
			return r;
	}
	root = tc_tracefs_root(p->ctx);
	if (!root) {
		char why[300];
		tc_tracefs_why(p->ctx, why, sizeof(why));
		return perr(p, start, -TACHO_ENOEVENT, "no tracefs to look up tracepoints in: %s",
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
				event_init(&ev);
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
					modifiers(p, &ev, start + c2 + 1, len - c2 - 1);
				if (!ev.name || !ev.pmu || push_event(p, &ev) != 0) {
					event_exit(&ev);
					r = perr(p, start, -ENOMEM, "out of memory");
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
		r = perr(p, start, -TACHO_ENOEVENT, "no tracepoint matches '%.*s' in %s",
			 (int)(c2), s, dir);
	if (r) {
		while (p->n > n0)
			event_exit(&p->ev[--p->n]);
	}
	return r;
}

static int parse_event(struct parser *p, size_t start, size_t *endp)
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
			return perr(p, start, -TACHO_EPARSE, "expected an event at the end");
		return perr(p, start, -TACHO_EPARSE, "expected an event before '%c'", p->src[start]);
	}
	event_init(&ev);
	ev.column = (unsigned)start + 1;
	slash = memchr(p->src + start, '/', end - start);
	if (end - start >= 4 && strncasecmp(p->src + start, "mem:", 4) == 0) {
		r = parse_breakpoint(p, start, end, &ev);
	} else if (uprobe_prefix(p, start)) {
		r = parse_uprobe(p, start, end, &ev);
	} else if (slash) {
		r = tc_pmu_parse(p->ctx, p->src, start, end, &ev, p->diag);
		if (r >= 0) {
			size_t pos = (size_t)r;
			/* modifiers follow the closing '/', with or without a ':' */
			if (pos < end && p->src[pos] == ':')
				pos++;
			r = pos < end || p->src[pos - 1] == ':' ? modifiers(p, &ev, pos, end - pos) : 0;
		}
	} else if (has_glob(p->src + start, end - start)) {
		event_exit(&ev);
		r = parse_tracepoint_glob(p, start, end);
		if (r == 0)
			*endp = end;
		return r;
	} else {
		r = parse_named(p, start, end, &ev);
	}
	if (r == 0 && !ev.name) {
		ev.name = tc_strndup(p->src + start, end - start);
		if (!ev.name)
			r = perr(p, start, -ENOMEM, "out of memory");
	}
	if (r == 0 && push_event(p, &ev) != 0)
		r = perr(p, start, -ENOMEM, "out of memory");
	if (r) {
		event_exit(&ev);
		return r;
	}
	*endp = end;
	return 0;
}

/* ---------------------------------------------------------------- the list */

static size_t skip_space(const struct parser *p, size_t pos)
{
	while (pos < p->len && (p->src[pos] == ' ' || p->src[pos] == '\t' || p->src[pos] == '\n'))
		pos++;
	return pos;
}

static int parse_group(struct parser *p, size_t open, size_t *endp, size_t base)
{
	size_t pos = open + 1, first = p->n;
	int r;

	for (;;) {
		pos = skip_space(p, pos);
		if (pos < p->len && p->src[pos] == '{')
			return perr(p, pos, -TACHO_EPARSE, "groups do not nest");
		if (pos < p->len && p->src[pos] == '}' && p->n == first)
			return perr(p, pos, -TACHO_EPARSE, "expected an event in the group");
		r = parse_event(p, pos, &pos);
		if (r)
			return r;
		pos = skip_space(p, pos);
		if (pos >= p->len)
			return perr(p, pos, -TACHO_EPARSE,
				    "expected '}' to close the group opened at column %zu", open + 1);
		if (p->src[pos] == '}')
			break;
		if (p->src[pos] != ',')
			return perr(p, pos, -TACHO_EPARSE, "expected ',' or '}' after an event");
		pos++;
	}
	pos++;   /* '}' */
	if (pos < p->len && p->src[pos] == ':') {
		size_t m0 = ++pos;
		while (pos < p->len && !ends_term(p->src[pos]))
			pos++;
		for (size_t i = first; i < p->n; i++) {
			r = modifiers(p, &p->ev[i], m0, pos - m0);
			if (r)
				return r;
		}
	}
	for (size_t i = first; i < p->n; i++)
		p->ev[i].group_leader = (int)(base + first);
	*endp = pos;
	return 0;
}

static int parse_spec(struct parser *p, size_t base)
{
	size_t pos = skip_space(p, 0);
	int r;

	if (pos >= p->len)
		return perr(p, pos, -TACHO_EEMPTY, "expected at least one event");
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
			return perr(p, pos, -TACHO_EPARSE, "expected ',' between events, not '%c'",
				    p->src[pos]);
		pos = skip_space(p, pos + 1);
		if (pos >= p->len)
			return perr(p, pos, -TACHO_EPARSE, "expected an event after ','");
	}
}

/* ---------------------------------------------------------------- public API */

int tacho_evlist_new(const struct tacho_event_opts *opts, struct tacho_evlist **out)
{
	struct tacho_evlist *l;

	*out = NULL;
	if (opts && opts->sz < offsetof(struct tacho_event_opts, tracefs_root) + sizeof(char *))
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (opts) {
		l->sysfs_root = tc_strdup(opts->sysfs_pmu_root);
		l->tracefs_root = tc_strdup(opts->tracefs_root);
		if ((opts->sysfs_pmu_root && !l->sysfs_root) ||
		    (opts->tracefs_root && !l->tracefs_root)) {
			tacho_evlist_free(l);
			return -ENOMEM;
		}
	}
	l->ctx.sysfs_root = l->sysfs_root ? l->sysfs_root : TC_SYSFS_PMU_ROOT;
	l->ctx.tracefs_root = l->tracefs_root;
	if (opts && opts->sz >= offsetof(struct tacho_event_opts, flags) + sizeof(opts->flags))
		l->ctx.no_files = opts->flags & TACHO_EVENT_NO_FILES;
	*out = l;
	return 0;
}

int tacho_evlist_add(struct tacho_evlist *list, const char *spec, struct tacho_diag *diag)
{
	struct parser p = { .src = spec, .ctx = &list->ctx, .diag = diag };
	int r;

	if (!list || !spec)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "no event list given");
	p.len = strlen(spec);
	r = parse_spec(&p, list->n);
	if (r == 0 && list->n + p.n > list->alloc) {
		size_t na = list->n + p.n + 8;
		struct tc_event *ne = realloc(list->ev, na * sizeof(*ne));
		if (!ne)
			r = perr(&p, 0, -ENOMEM, "out of memory");
		else {
			list->ev = ne;
			list->alloc = na;
		}
	}
	if (r == 0) {
		memcpy(list->ev + list->n, p.ev, p.n * sizeof(*p.ev));
		list->n += p.n;
	} else {
		for (size_t i = 0; i < p.n; i++)
			event_exit(&p.ev[i]);
	}
	free(p.ev);
	return r;
}

int tacho_evlist_parse_opts(const char *spec, const struct tacho_event_opts *opts,
			    struct tacho_evlist **out, struct tacho_diag *diag)
{
	struct tacho_evlist *l;
	int r;

	*out = NULL;
	r = tacho_evlist_new(opts, &l);
	if (r)
		return tc_diag_set(diag, spec, 0, 0, r, "%s", tacho_strerror(r));
	r = tacho_evlist_add(l, spec, diag);
	if (r) {
		tacho_evlist_free(l);
		return r;
	}
	*out = l;
	return 0;
}

int tacho_evlist_parse(const char *spec, struct tacho_evlist **out, struct tacho_diag *diag)
{
	return tacho_evlist_parse_opts(spec, NULL, out, diag);
}

void tacho_evlist_free(struct tacho_evlist *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		event_exit(&list->ev[i]);
	free(list->ev);
	free(list->sysfs_root);
	free(list->tracefs_root);
	free(list);
}

size_t tacho_evlist_count(const struct tacho_evlist *list)
{
	return list ? list->n : 0;
}

const struct tc_event *tc_evlist_get(const struct tacho_evlist *list, size_t i)
{
	return list && i < list->n ? &list->ev[i] : NULL;
}

const char *tacho_evlist_name(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->name : NULL;
}

int tacho_evlist_attr(const struct tacho_evlist *list, size_t i, struct perf_event_attr *out)
{
	const struct tc_event *ev = tc_evlist_get(list, i);

	if (!ev || !out)
		return -EINVAL;
	*out = ev->attr;
	out->size = sizeof(*out);
	return 0;
}

enum tacho_event_source tacho_evlist_source(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? (enum tacho_event_source)ev->source : TACHO_EVENT_SRC_COUNT_;
}

const char *tacho_evlist_pmu(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->pmu : NULL;
}

const char *tacho_evlist_unit(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->unit : NULL;
}

double tacho_evlist_scale(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->scale : 1.0;
}

int tacho_evlist_group_leader(const struct tacho_evlist *list, size_t i)
{
	const struct tc_event *ev = tc_evlist_get(list, i);
	return ev ? ev->group_leader : -1;
}

const char *tacho_event_source_name(enum tacho_event_source src)
{
	static const char *const names[] = {
		[TACHO_EVENT_SRC_HARDWARE] = "hardware",
		[TACHO_EVENT_SRC_CACHE] = "cache",
		[TACHO_EVENT_SRC_SOFTWARE] = "software",
		[TACHO_EVENT_SRC_PFM] = "pfm",
		[TACHO_EVENT_SRC_RAW] = "raw",
		[TACHO_EVENT_SRC_PMU] = "pmu",
		[TACHO_EVENT_SRC_TRACEPOINT] = "tracepoint",
		[TACHO_EVENT_SRC_BREAKPOINT] = "breakpoint",
	};
	return (unsigned)src < ARRAY_SIZE(names) ? names[src] : "unknown";
}

int tacho_diag_caret(const struct tacho_diag *d, char *buf, size_t size)
{
	struct tc_sb sb = TC_SB_INIT;
	size_t n, col;
	int ret;

	if (!d || d->column == 0) {
		if (size)
			buf[0] = '\0';
		return 0;
	}
	tc_sb_init(&sb);
	n = strnlen(d->source, sizeof(d->source));
	col = d->column - 1;
	for (size_t i = 0; i < n; i++)
		tc_sb_addc(&sb, (unsigned char)d->source[i] < ' ' && d->source[i] != '\t' ? '?' :
			   d->source[i]);
	tc_sb_addc(&sb, '\n');
	for (size_t i = 0; i < col; i++)
		tc_sb_addc(&sb, i < n && d->source[i] == '\t' ? '\t' : ' ');
	tc_sb_adds(&sb, "^\n");
	if (sb.oom) {
		tc_sb_exit(&sb);
		return -ENOMEM;
	}
	ret = snprintf(buf, size, "%s", sb.buf);
	tc_sb_exit(&sb);
	return ret;
}
