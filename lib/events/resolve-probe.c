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
	/* The kernel's ABI for an execute breakpoint: bp_len is sizeof(long) (x86's
	 * arch_build_bp_info refuses any other), and the address needs no alignment:
	 * x86 encodes the length of an execute breakpoint as X86_BREAKPOINT_LEN_X, which
	 * is LEN_1, whose alignment mask is 0 (hw_breakpoint_arch_parse). An instruction
	 * may start at any byte, and so may the breakpoint on it. */
	if (type == HW_BREAKPOINT_X) {
		if (have_len && len != sizeof(long))
			return tc_perr(p, l0, -TACHO_EPARSE,
				    "an execute breakpoint covers %zu bytes, the kernel's length "
				    "for one at any address (write /%zu or no length)",
				    sizeof(long), sizeof(long));
		len = sizeof(long);
	} else if (!have_len) {
		len = HW_BREAKPOINT_LEN_4;
	}
	if (type != HW_BREAKPOINT_X && addr % len)
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

/* ---------------------------------------------------------------- SDT probes */

size_t tc_sdt_prefix(const struct tc_parser *p, size_t start)
{
	return p->len - start >= 4 && strncasecmp(p->src + start, "sdt:", 4) == 0 ? 4 : 0;
}

/* Where the uprobe PMU puts ref_ctr_offset in config (its format file, "config:32-63"
 * since Linux 4.20), or -1 when the kernel has none. */
static int ref_ctr_shift(const struct tc_events_ctx *ctx)
{
	char path[1024], line[64];
	const char *fmt;
	uint64_t lo;
	char *dash;

	snprintf(path, sizeof(path), "%s/uprobe/format/ref_ctr_offset", ctx->sysfs_root);
	if (tc_read_line_file(path, line, sizeof(line)))
		return -1;
	fmt = tc_trim(line);
	if (!tc_starts_with(fmt, "config:"))
		return -1;
	dash = strchr(fmt, '-');
	if (dash)
		*dash = '\0';
	if (tc_parse_u64(fmt + 7, &lo) || lo > 32)
		return -1;
	return (int)lo;
}

/* The nearest PROVIDER:NAME of the file to the one asked, for a did-you-mean. */
static void sdt_nearest(const struct tacho_sdt_list *l, const char *want, size_t len,
			char *buf, size_t size)
{
	struct tc_nearest n;
	char (*names)[160] = calloc(tacho_sdt_list_count(l) ? tacho_sdt_list_count(l) : 1,
				    sizeof(*names));
	const char *found;

	buf[0] = '\0';
	if (!names)
		return;
	tc_nearest_init(&n, want, len);
	for (size_t i = 0; i < tacho_sdt_list_count(l); i++) {
		const struct tacho_sdt_probe *pr = tacho_sdt_list_probe(l, i);
		snprintf(names[i], sizeof(names[i]), "%s:%s", pr->provider, pr->name);
		tc_nearest_add(&n, names[i], strlen(names[i]));
	}
	found = tc_nearest_get(&n);
	if (found)
		snprintf(buf, size, "%s", found);
	tc_nearest_exit(&n);
	free(names);
}

int tc_parse_sdt(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev)
{
	const char *s = p->src;
	size_t p0 = start + 4, p1, v0, v1, n0, n1;
	struct tacho_sdt_list *l = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	const struct tacho_sdt_probe *site = NULL;
	size_t nsites = 0;
	char path[4096], near[200];
	const char *upath;
	unsigned retbit;
	uint32_t type;
	char *abs;
	int r, shift;

	for (p1 = p0; p1 < end && s[p1] != ':'; p1++)
		;
	if (p1 == p0)
		return tc_perr(p, p0, -TACHO_EPARSE, "expected the path of an executable or "
			       "library after 'sdt:'");
	if (p1 - p0 >= sizeof(path))
		return tc_perr(p, p0, -TACHO_EOUTOFRANGE, "the path is longer than %zu bytes",
			       sizeof(path) - 1);
	v0 = p1 + 1;
	for (v1 = v0; v1 < end && s[v1] != ':'; v1++)
		;
	n0 = v1 + 1;
	for (n1 = n0; n1 < end && s[n1] != ':'; n1++)
		;
	if (p1 >= end || v1 == v0 || v1 >= end || n1 == n0)
		return tc_perr(p, p1 < end ? v0 : end, -TACHO_EPARSE, "expected "
			       "sdt:PATH:PROVIDER:NAME (tacho list sdt PATH lists them)");
	if (n1 < end) {
		r = tc_modifiers(p, ev, n1 + 1, end - n1 - 1);
		if (r)
			return r;
	}
	r = tc_uprobe_pmu(p->ctx, &type, &retbit);
	if (r)
		return tc_perr(p, start, -TACHO_ENOEVENT, r == -ENODEV ?
			       "no uprobe PMU in %s: this kernel cannot place SDT probes through "
			       "the perf syscall (it needs CONFIG_UPROBE_EVENTS, Linux 4.17 or "
			       "later)" : "cannot read the uprobe PMU in %s: %s",
			       p->ctx->sysfs_root, tacho_strerror(r));
	if (p->ctx->no_files)
		return tc_perr(p, p0, -TACHO_EPARSE, "an SDT probe needs its file read, which "
			       "is off here");
	snprintf(path, sizeof(path), "%.*s", (int)(p1 - p0), s + p0);
	abs = realpath(path, NULL);
	if (!abs) {
		int e = errno;
		if (e == ENOMEM)
			return tc_perr(p, p0, -ENOMEM, "out of memory");
		return tc_perr(p, p0, -TACHO_ENOEVENT, "cannot find '%s': %s", path, strerror(e));
	}
	r = tacho_sdt_list_new(abs, &l, &d);
	if (r) {
		free(abs);
		return tc_perr(p, p0, r == -ENOMEM ? r : -TACHO_ENOEVENT, "%s", d.message[0] ?
			       d.message : tacho_strerror(r));
	}
	for (size_t i = 0; i < tacho_sdt_list_count(l); i++) {
		const struct tacho_sdt_probe *pr = tacho_sdt_list_probe(l, i);
		if (strlen(pr->provider) == v1 - v0 && !memcmp(pr->provider, s + v0, v1 - v0) &&
		    strlen(pr->name) == n1 - n0 && !memcmp(pr->name, s + n0, n1 - n0)) {
			if (!site)
				site = pr;
			nsites++;
		}
	}
	if (!site) {
		sdt_nearest(l, s + v0, n1 - v0, near, sizeof(near));
		r = tc_perr(p, v0, -TACHO_ENOEVENT, "no SDT probe '%.*s' in '%s'%s%s%s",
			    (int)(n1 - v0), s + v0, abs, near[0] ? ": did you mean '" : "",
			    near, near[0] ? "'?" : (tacho_sdt_list_count(l) ? "" :
						    " (it has no .note.stapsdt)"));
		goto out;
	}
	if (nsites > 1) {
		/* perf places one uprobe per site and adds them up; tacho's events are one
		 * uprobe each */
		r = tc_perr(p, v0, -TACHO_ENOEVENT, "the SDT probe '%.*s' has %zu sites in '%s' "
			    "(inlined or repeated): tacho counts one site per event; list them "
			    "with 'tacho list sdt' and count each as uprobe:PATH:OFFSET",
			    (int)(n1 - v0), s + v0, nsites, abs);
		goto out;
	}
	if (site->offset == UINT64_MAX) {
		r = tc_perr(p, v0, -TACHO_ENOEVENT, "the SDT probe '%.*s' lies in no executable "
			    "segment of '%s'", (int)(n1 - v0), s + v0, abs);
		goto out;
	}
	shift = ref_ctr_shift(p->ctx);
	if (site->semaphore && (shift < 0 || site->semaphore_offset == UINT64_MAX ||
				site->semaphore_offset >> (64 - shift))) {
		/* without it the kernel would not raise the semaphore, and a probe guarded by
		 * it would never fire: a count of 0 that means nothing */
		r = tc_perr(p, v0, -TACHO_ENOEVENT, "the SDT probe '%.*s' has a semaphore, and %s",
			    (int)(n1 - v0), s + v0, shift < 0 ?
			    "this kernel's uprobe PMU cannot raise it (no ref_ctr_offset: Linux "
			    "4.20 or later)" : "its offset cannot be given to the kernel");
		goto out;
	}
	upath = tc_uprobe_intern(abs);
	if (!upath) {
		r = tc_perr(p, start, -ENOMEM, "out of memory");
		goto out;
	}
	ev->source = TC_EV_BREAKPOINT;
	ev->attr.type = type;
	ev->attr.config = site->semaphore ? site->semaphore_offset << shift : 0;
	ev->attr.uprobe_path = (uint64_t)(uintptr_t)upath;
	ev->attr.probe_offset = site->offset;
	ev->pmu = tc_strdup("uprobe");
	r = ev->pmu ? 0 : tc_perr(p, start, -ENOMEM, "out of memory");
out:
	tacho_sdt_list_free(l);
	free(abs);
	return r;
}
