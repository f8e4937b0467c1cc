/* resolve-probe.c - the resolvers of address events: hardware breakpoints
 * (mem:ADDR[/LEN][:rwx]) and uprobes (uprobe:PATH:WHERE, uretprobe:; the ELF side is in
 * uprobe.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <linux/hw_breakpoint.h>

#include "events/parse.h"
#include "tacho/errors.h"

/* ---------------------------------------------------------------- breakpoints */

/* mem:ADDR[/LEN][:ACCESS][:MODS]. The kernel's rules (kernel/events/hw_breakpoint.c,
 * arch/x86/kernel/hw_breakpoint.c): LEN 1, 2, 4 or 8; the address aligned to LEN; an
 * execute breakpoint is never also a data one and covers sizeof(long) bytes. */
int tc_parse_breakpoint(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev)
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
		return tc_perr(p, a0, -TACHO_EPARSE, "expected an address after 'mem:'");
	r = tc_parse_num(s + a0, pos - a0, &addr);
	if (r) {
		size_t i = a0;
		bool hex = pos - a0 >= 2 && s[a0] == '0' && (s[a0 + 1] == 'x' || s[a0 + 1] == 'X');
		if (hex)
			i += 2;
		while (i < pos && (hex ? tc_is_hex_digit(s[i]) : (s[i] >= '0' && s[i] <= '9')))
			i++;
		if (r == -TACHO_EOUTOFRANGE)
			return tc_perr(p, a0, r, "the address does not fit in 64 bits");
		/* i == pos: nothing after "0x" */
		return tc_perr(p, i, -TACHO_EPARSE, "expected a hex (0x...) or decimal address");
	}
	if (pos < end && s[pos] == '/') {
		l0 = ++pos;
		while (pos < end && s[pos] != ':')
			pos++;
		if (pos == l0)
			return tc_perr(p, l0, -TACHO_EPARSE, "expected a length (1, 2, 4 or 8) after '/'");
		r = tc_parse_num(s + l0, pos - l0, &len);
		if (r || (len != 1 && len != 2 && len != 4 && len != 8))
			return tc_perr(p, l0, -TACHO_EPARSE, "a breakpoint's length is 1, 2, 4 or 8 bytes");
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
					return tc_perr(p, i, -TACHO_EPARSE,
						    "an execute breakpoint cannot also watch reads "
						    "or writes (use two events)");
			}
			pos = segend;
		}
		if (pos < end) {
			r = tc_modifiers(p, ev, pos + 1, end - pos - 1);
			if (r)
				return r;
		}
	}
	if (!type)
		type = HW_BREAKPOINT_RW;
	if (type == HW_BREAKPOINT_X) {
		if (have_len && len != sizeof(long))
			return tc_perr(p, l0, -TACHO_EPARSE,
				    "an execute breakpoint covers %zu bytes (write /%zu or no length)",
				    sizeof(long), sizeof(long));
		len = sizeof(long);
	} else if (!have_len) {
		len = HW_BREAKPOINT_LEN_4;
	}
	if (addr % len)
		return tc_perr(p, a0, -TACHO_EPARSE, "the address 0x%llx is not aligned to the length %llu%s",
			    (unsigned long long)addr, (unsigned long long)len,
			    have_len ? "" : " (the default; give one: mem:ADDR/1)");
	ev->source = TC_EV_BREAKPOINT;
	ev->attr.type = PERF_TYPE_BREAKPOINT;
	ev->attr.config = 0;
	ev->attr.bp_type = type;
	ev->attr.bp_addr = addr;
	ev->attr.bp_len = len;
	ev->pmu = tc_strdup("breakpoint");
	return ev->pmu ? 0 : tc_perr(p, start, -ENOMEM, "out of memory");
}

/* ---------------------------------------------------------------- uprobes */

/* The length of "uprobe:" or "uretprobe:" at start, or 0. These prefixes win over a
 * tracepoint subsystem of the same name: tracefs names uprobe events "uprobes:NAME"
 * (plural), and "uprobe" is a PMU of the kernel here (docs/events.md). */
size_t tc_uprobe_prefix(const struct tc_parser *p, size_t start)
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
	return tc_is_alnum(c) || c == '_' || c == '.' || c == '$';
}

/* An error of uprobe.c as a diagnostic: a file that cannot be read or is not ELF is
 * the path's fault (well formed, but nothing to probe: -TACHO_ENOEVENT); a missing
 * function or an offset out of range is the function's or offset's. */
static int uprobe_err(struct tc_parser *p, int r, size_t path_col, size_t where_col,
		      const char *why)
{
	if (r == -ENOMEM)
		return tc_perr(p, path_col, r, "out of memory");
	if (r == -TACHO_EOUTOFRANGE || r == -TACHO_ENOEVENT)
		return tc_perr(p, where_col, r, "%s", why);
	return tc_perr(p, path_col, -TACHO_ENOEVENT, "%s", why);
}

/* uprobe:PATH:SYMBOL[+OFF][:MODS], uprobe:PATH:OFFSET[:MODS] and the same with
 * uretprobe:. PATH runs to the first ':' (a path with ':' in it cannot be written;
 * a symbolic link without one can). The uprobe PMU (kernel/events/core.c,
 * perf_uprobe_init) takes the path as a user pointer in config1 and the file offset
 * of the instruction in config2; the kernel resolves the path itself, in the opening
 * process, so a relative one is made absolute here. */
int tc_parse_uprobe(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev)
{
	const char *s = p->src;
	size_t pre = tc_uprobe_prefix(p, start), p0 = start + pre, p1, t0, t1, plus;
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
		return tc_perr(p, p0, -TACHO_EPARSE, "expected the path of an executable or library "
			    "after '%.*s'", (int)pre, s + start);
	if (p1 == end)
		return tc_perr(p, end, -TACHO_EPARSE, "expected ':' and a function name or a file "
			    "offset after the path");
	if (p1 - p0 >= sizeof(path))
		return tc_perr(p, p0, -TACHO_EOUTOFRANGE, "the path is longer than %zu bytes",
			    sizeof(path) - 1);
	t0 = p1 + 1;
	for (t1 = t0; t1 < end && s[t1] != ':'; t1++)
		;
	if (t1 == t0)
		return tc_perr(p, t0, -TACHO_EPARSE, "expected a function name or a file offset "
			    "(0x...) after the path");
	if (t1 < end) {
		r = tc_modifiers(p, ev, t1 + 1, end - t1 - 1);
		if (r)
			return r;
	}
	for (plus = t0; plus < t1 && s[plus] != '+'; plus++)
		;
	if (s[t0] >= '0' && s[t0] <= '9') {
		/* a file offset; "+" has no meaning after a number */
		r = tc_parse_num(s + t0, t1 - t0, &off);
		if (r)
			return tc_perr(p, t0, r == -TACHO_EOUTOFRANGE ? r : -TACHO_EPARSE,
				    r == -TACHO_EOUTOFRANGE ? "the offset does not fit in 64 bits" :
				    "expected a file offset (0x... or decimal) or a function name");
	} else {
		for (size_t i = t0; i < plus; i++)
			if (!symbol_char(s[i]))
				return tc_perr(p, i, -TACHO_EPARSE, "unexpected '%c' in a function name",
					    s[i]);
		if (plus == t0)
			return tc_perr(p, t0, -TACHO_EPARSE, "expected a function name before '+'");
		if (plus < t1) {
			r = tc_parse_num(s + plus + 1, t1 - plus - 1, &add);
			if (r)
				return tc_perr(p, plus + 1, r == -TACHO_EOUTOFRANGE ? r : -TACHO_EPARSE,
					    "expected a byte offset into the function after '+'");
			if (ret && add)
				return tc_perr(p, plus, -TACHO_EPARSE, "a return probe fires when the "
					    "function returns: it takes no '+OFF'");
		}
	}
	/* the PMU first: without it nothing else matters */
	r = tc_uprobe_pmu(p->ctx, &type, &retbit);
	if (r)
		return tc_perr(p, start, -TACHO_ENOEVENT, r == -ENODEV ?
			    "no uprobe PMU in %s: this kernel cannot count uprobes through "
			    "the perf syscall (it needs CONFIG_UPROBE_EVENTS, Linux 4.17 or later)" :
			    "cannot read the uprobe PMU in %s: %s", p->ctx->sysfs_root,
			    tacho_strerror(r));
	snprintf(path, sizeof(path), "%.*s", (int)(p1 - p0), s + p0);
	if (p->ctx->no_files) {
		if (path[0] != '/')
			return tc_perr(p, p0, -TACHO_EPARSE, "the path must be absolute here "
				    "(files named in specs are not looked at)");
		if (plus != t1 || !(s[t0] >= '0' && s[t0] <= '9'))
			return tc_perr(p, t0, -TACHO_EPARSE, "a function name needs its file read, "
				    "which is off here: give the file offset (0x...)");
		ev->probe_path = tc_strdup(path);
		upath = ev->probe_path;
	} else {
		char *abs = realpath(path, NULL);
		if (!abs) {
			int e = errno;
			if (e == ENOMEM)
				return tc_perr(p, p0, -ENOMEM, "out of memory");
			return tc_perr(p, p0, -TACHO_ENOEVENT, "cannot find '%s': %s", path, strerror(e));
		}
		if (plus == t1 && s[t0] >= '0' && s[t0] <= '9')
			r = tc_uprobe_check_offset(abs, off, why, sizeof(why));
		else
			r = tc_uprobe_symbol_offset(abs, s + t0, plus - t0, add, &off, why,
						    sizeof(why));
		upath = r ? NULL : tc_uprobe_intern(abs);
		free(abs);
		if (r)
			return uprobe_err(p, r, p0, r == -TACHO_EOUTOFRANGE && plus < t1 ? plus + 1 : t0,
					  why);
	}
	if (!upath)
		return tc_perr(p, start, -ENOMEM, "out of memory");
	ev->source = TC_EV_BREAKPOINT;
	ev->attr.type = type;
	ev->attr.config = ret ? 1ull << retbit : 0;
	ev->attr.uprobe_path = (uint64_t)(uintptr_t)upath;
	ev->attr.probe_offset = off;
	ev->pmu = tc_strdup("uprobe");
	return ev->pmu ? 0 : tc_perr(p, start, -ENOMEM, "out of memory");
}
