/* token.c - the event grammar's tokens: errors that point at a column, numbers, name
 * characters, modifier letters (perf's semantics), and the events being built. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/parse.h"
#include "tacho/errors.h"
#include "tacho/events.h"

int tc_perr(struct tc_parser *p, size_t off, int err, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tc_diag_set(p->diag, p->src, 0, (unsigned)off + 1, err, "%s", msg);
}

void tc_event_exit(struct tc_event *ev)
{
	free(ev->name);
	free(ev->pmu);
	free(ev->unit_buf);
	free(ev->probe_path);
	memset(ev, 0, sizeof(*ev));
}

void tc_event_init(struct tc_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->attr.size = sizeof(ev->attr);
	ev->unit = "";
	ev->scale = 1.0;
	ev->group_leader = -1;
}

bool tc_is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool tc_name_char(char c)
{
	return tc_is_alnum(c) || c == '_' || c == '-' || c == '.' || c == ':' || c == '=';
}

/* Parses src[start..end) as an unsigned number (0x hex or decimal). */
int tc_parse_num(const char *s, size_t len, uint64_t *out)
{
	char buf[64];

	if (len == 0 || len >= sizeof(buf))
		return len ? -TACHO_EOUTOFRANGE : -TACHO_EPARSE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return tc_parse_u64(buf, out);
}

/* ---------------------------------------------------------------- modifiers */

/* perf 6.1's letters (tools/perf/util/parse-events.l, modifier_event): the ones tacho
 * applies, and S, W, P and b, which it names and refuses with the reason */
static const char modifier_chars[] = "ukhGHIpDeSWPb";

bool tc_all_modifier_chars(const char *s, size_t len)
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
		case 'e':
			/* alone on the PMU while it counts */
			attr->exclusive = 1;
			break;
		case 'S':
			*why = "'%c' (perf record's sample read of a group, PERF_SAMPLE_READ) is not "
			       "supported: tacho record samples each event by itself";
			return (int)i;
		case 'W':
			*why = "'%c' (perf's weak group, split when it cannot be scheduled) is not "
			       "needed: tacho plans groups to fit the counters, and runs the program "
			       "again rather than split one; drop the braces for separate events";
			return (int)i;
		case 'P':
			*why = "'%c' (the highest precise level the CPU allows) is not supported: "
			       "tacho does not probe for it; give the level with p, pp or ppp";
			return (int)i;
		case 'b':
			*why = "'%c' (perf's BPF counters) is not supported: tacho counts through "
			       "perf events only";
			return (int)i;
		case ':':
			*why = "unexpected '%c': modifiers come as one group (write 'uk', not 'u:k')";
			return (int)i;
		default:
			*why = "unknown modifier '%c' (expected u, k, h, G, H, I, p, pp, ppp, D or e)";
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
int tc_modifiers(struct tc_parser *p, struct tc_event *ev, size_t off, size_t len)
{
	const char *why = NULL;
	int bad;

	if (len == 0)
		return tc_perr(p, off, -TACHO_EPARSE, "expected modifiers (u, k, h, G, H, I, p, D, e)");
	bad = tc_apply_modifiers(&ev->attr, p->src + off, len, &why);
	if (bad >= 0)
		return tc_perr(p, off + bad, -TACHO_EPARSE, why, p->src[off + bad]);
	return 0;
}

/* ---------------------------------------------------------------- the events built */

int tc_push_event(struct tc_parser *p, struct tc_event *ev)
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

/* ---------------------------------------------------------------- column diagnostics */

int tacho_diag_caret(const struct tacho_diag *d, char *buf, size_t size)
{
	struct tc_sb sb = TC_SB_INIT;
	size_t n, col;
	int ret;

	if (tc_diag_check(d))
		return -EINVAL;
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
