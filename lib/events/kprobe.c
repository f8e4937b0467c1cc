/* kprobe.c - the resolver of kprobes (kprobe:SYMBOL[+OFF], kretprobe:SYMBOL) through the
 * kprobe PMU (kernel/trace/trace_event_perf.c, perf_kprobe_init): the kernel function's
 * name as a pointer in config1, the offset into it in config2, the return-probe bit of
 * config from the PMU's format. The name is checked against /proc/kallsyms where that
 * can be read, so that a misspelt function is told (with the nearest name) here rather
 * than as the kernel's bare ENOENT at open. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "events/parse.h"
#include "tacho/errors.h"

#define KALLSYMS "/proc/kallsyms"

size_t tc_kprobe_prefix(const struct tc_parser *p, size_t start)
{
	size_t left = p->len - start;

	if (left >= 7 && strncasecmp(p->src + start, "kprobe:", 7) == 0)
		return 7;
	if (left >= 10 && strncasecmp(p->src + start, "kretprobe:", 10) == 0)
		return 10;
	return 0;
}

static bool symbol_char(char c)
{
	return tc_is_alnum(c) || c == '_' || c == '.';
}

/* Whether /proc/kallsyms lists a function (type t or T) named sym (len bytes): 0 when
 * it does, -ENOENT (with the nearest function in near, "" when none), -ENOTDIR when it
 * names something that is no function, or -errno when the file cannot be read (the
 * check is then left to the kernel). */
static int kallsyms_find(const char *sym, size_t len, char *near, size_t nearsz)
{
	struct tc_nearest n;
	char line[512];
	FILE *f = fopen(KALLSYMS, "r");
	int r = -ENOENT;

	near[0] = '\0';
	if (!f)
		return -errno;
	tc_nearest_init(&n, sym, len);
	while (fgets(line, sizeof(line), f)) {
		/* "ffffffff81000000 T _stext [module]" */
		char *type = strchr(line, ' '), *name, *e;
		bool func;

		if (!type || !type[1] || type[2] != ' ')
			continue;
		func = type[1] == 't' || type[1] == 'T';
		name = type + 3;
		e = name + strcspn(name, " \t\n");
		if ((size_t)(e - name) == len && !memcmp(name, sym, len)) {
			r = func ? 0 : -ENOTDIR;
			if (func)
				break;
		} else if (func) {
			tc_nearest_add(&n, name, (size_t)(e - name));
		}
	}
	fclose(f);
	if (r == -ENOENT && tc_nearest_get(&n))
		snprintf(near, nearsz, "%s", tc_nearest_get(&n));
	tc_nearest_exit(&n);
	return r;
}

int tc_parse_kprobe(struct tc_parser *p, size_t start, size_t end, struct tc_event *ev)
{
	const char *s = p->src;
	size_t pre = tc_kprobe_prefix(p, start), t0 = start + pre, t1, plus;
	bool ret = pre == 10;
	uint64_t add = 0;
	uint32_t type;
	unsigned retbit;
	const char *func;
	char sym[256], near[256];
	int r;

	for (t1 = t0; t1 < end && s[t1] != ':'; t1++)
		;
	if (t1 < end) {
		r = tc_modifiers(p, ev, t1 + 1, end - t1 - 1);
		if (r)
			return r;
		/* the kernel drops a probe's hits in kernel mode for an exclude_kernel
		 * event (perf_tp_event_match): all of a kprobe's */
		if (ev->attr.exclude_kernel)
			return tc_perr(p, t1 + 1, -TACHO_EPARSE, "a kprobe fires in the kernel: "
				    "counting user space only it would count nothing (drop 'u')");
	}
	for (plus = t0; plus < t1 && s[plus] != '+'; plus++)
		;
	if (plus == t0)
		return tc_perr(p, t0, -TACHO_EPARSE, "expected a kernel function's name after "
			    "'%.*s'", (int)pre, s + start);
	for (size_t i = t0; i < plus; i++)
		if (!symbol_char(s[i]))
			return tc_perr(p, i, -TACHO_EPARSE, "unexpected '%c' in a kernel function's "
				    "name", s[i]);
	if (plus - t0 >= sizeof(sym))
		return tc_perr(p, t0, -TACHO_EOUTOFRANGE, "the function's name is longer than %zu "
			    "bytes", sizeof(sym) - 1);
	if (plus < t1) {
		r = tc_parse_num(s + plus + 1, t1 - plus - 1, &add);
		if (r)
			return tc_perr(p, plus + 1, r == -TACHO_EOUTOFRANGE ? r : -TACHO_EPARSE,
				    "expected a byte offset into the function after '+'");
		if (ret && add)
			return tc_perr(p, plus, -TACHO_EPARSE, "a return probe fires when the "
				    "function returns: it takes no '+OFF'");
	}
	r = tc_probe_pmu(p->ctx, "kprobe", &type, &retbit);
	if (r)
		return tc_perr(p, start, -TACHO_ENOEVENT, r == -ENODEV ?
			    "no kprobe PMU in %s: this kernel cannot count kprobes through "
			    "the perf syscall (it needs CONFIG_KPROBE_EVENTS, Linux 4.17 or later)" :
			    "cannot read the kprobe PMU in %s: %s", p->ctx->sysfs_root,
			    tacho_strerror(r));
	snprintf(sym, sizeof(sym), "%.*s", (int)(plus - t0), s + t0);
	if (!p->ctx->no_files) {
		r = kallsyms_find(sym, plus - t0, near, sizeof(near));
		if (r == -ENOENT)
			return tc_perr(p, t0, -TACHO_ENOEVENT, "no kernel function '%s' in "
				    KALLSYMS "%s%s%s", sym, near[0] ? " (did you mean '" : "",
				    near, near[0] ? "'?)" : "");
		if (r == -ENOTDIR)
			return tc_perr(p, t0, -TACHO_ENOEVENT, "'%s' in " KALLSYMS " is no "
				    "function (kprobes go on code)", sym);
	}
	func = tc_uprobe_intern(sym);
	if (!func)
		return tc_perr(p, start, -ENOMEM, "out of memory");
	ev->source = TC_EV_BREAKPOINT;
	ev->attr.type = type;
	ev->attr.config = ret ? 1ull << retbit : 0;
	ev->attr.kprobe_func = (uint64_t)(uintptr_t)func;
	ev->attr.probe_offset = add;
	ev->pmu = tc_strdup("kprobe");
	return ev->pmu ? 0 : tc_perr(p, start, -ENOMEM, "out of memory");
}
