/* list.c - what `tacho list` shows: a walk over every event this machine knows, and
 * a probe that says whether this process may open one here. */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/events.h"
#include "perf/engine.h"
#include "perf/perf.h"
#include "tacho/errors.h"
#include "tacho/events.h"

/* Event i's attributes as a probe opens them (disabled). 0 or -EINVAL. */
static int probe_attr(const struct tacho_evlist *list, size_t i, struct perf_event_attr *attr)
{
	const struct tc_event *ev = tc_evlist_get(list, i);

	if (!ev)
		return -EINVAL;
	*attr = ev->attr;
	attr->disabled = 1;
	return 0;
}

int tacho_evlist_probe(const struct tacho_evlist *list, size_t i)
{
	struct perf_event_attr attr;
	int err = probe_attr(list, i, &attr);

	if (!err)
		err = tc_perf_probe(&attr, NULL);
	/* it opens; whether it counts is its source's proof */
	return !err && tc_source_silent(&attr) ? -TACHO_ESILENT : err;
}

int tc_evlist_probe_uprobe_dry(const struct tacho_evlist *list, size_t i)
{
	/* a path no file has: /proc/self has no fdinfo of descriptor -1 */
	static const char nofile[] = "/proc/self/fdinfo/-1";
	struct perf_event_attr attr;
	int err = probe_attr(list, i, &attr);

	if (err)
		return err;
	attr.uprobe_path = (uint64_t)(uintptr_t)nofile;
	err = tc_perf_probe(&attr, NULL);
	/* ENOENT: the kernel let us in and looked for the file */
	return err == -ENOENT ? 0 : err;
}

int tc_evlist_probe_tracepoint_dry(const struct tacho_evlist *list, size_t i)
{
	struct perf_event_attr attr;
	int err = probe_attr(list, i, &attr);

	if (err)
		return err;
	/* perf_copy_attr takes a branch stack of user branches from anyone; perf_tp_
	 * event_init refuses any branch stack (kernel/events/core.c) */
	attr.sample_type |= PERF_SAMPLE_BRANCH_STACK;
	attr.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY;
	err = tc_perf_probe(&attr, NULL);
	return err == -EOPNOTSUPP ? 0 : err;
}

/* snprintf into a fixed buffer where a long name may be cut (it then fails to open,
 * which is the right outcome for a path that long). */
static void fmtbuf(char *buf, size_t size, const char *fmt, ...) TC_PRINTF(3, 4);
static void fmtbuf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

struct walk {
	tacho_event_visit_fn *fn;
	void *arg;
	struct tc_events_ctx ctx;
};

static int visit(struct walk *w, enum tacho_event_source src, const char *name,
		 const char *aliases, const char *desc, const char *pmu, const char *probe)
{
	struct tacho_event_info info = {
		.source = src, .name = name, .aliases = aliases ? aliases : "",
		.desc = desc ? desc : "", .pmu = pmu ? pmu : "", .probe = probe,
	};
	return w->fn(w->arg, &info);
}

static int walk_generic(struct walk *w, const struct tc_generic_event *t, size_t n,
			enum tacho_event_source src)
{
	for (size_t i = 0; i < n; i++) {
		int r = visit(w, src, t[i].name, t[i].alias, t[i].desc,
			      src == TACHO_EVENT_SRC_HARDWARE ? "cpu" : "software", t[i].name);
		if (r)
			return r;
	}
	return 0;
}

static int walk_cache(struct walk *w)
{
	char name[64], desc[160];

	for (size_t i = 0; i < tc_cache_kinds_count; i++) {
		const struct tc_cache_kind *k = &tc_cache_kinds[i];
		for (unsigned op = 0; op < 3; op++) {
			if (!(k->ops & (1u << op)))
				continue;
			for (int miss = 0; miss < 2; miss++) {
				const char *word = tc_cache_op_word(op);
				int r;
				if (miss)
					fmtbuf(name, sizeof(name), "%s-%s-misses", k->name, word);
				else
					fmtbuf(name, sizeof(name), "%s-%s%s", k->name, word,
						 op == PERF_COUNT_HW_CACHE_OP_PREFETCH ? "es" : "s");
				fmtbuf(desc, sizeof(desc), "%s: %s%s", k->desc,
					 op == PERF_COUNT_HW_CACHE_OP_READ ? "loads" :
					 op == PERF_COUNT_HW_CACHE_OP_WRITE ? "stores" : "prefetches",
					 miss ? " that missed" : "");
				r = visit(w, TACHO_EVENT_SRC_CACHE, name, NULL, desc, "cpu", name);
				if (r)
					return r;
			}
		}
	}
	return 0;
}

static int pfm_visit(void *arg, const char *name, const char *desc, const char *pmu)
{
	struct walk *w = arg;
	char probe[600], dbuf[2048];

	struct perf_event_attr attr;
	char *epmu = NULL;
	bool ok;

	/* an event whose umasks have no default cannot be counted without one */
	fmtbuf(probe, sizeof(probe), "%s::%s", pmu, name);
	ok = tc_pfm_encode(probe, strlen(probe), &attr, sizeof(attr), &epmu) == 0;
	free(epmu);
	if (ok)
		return visit(w, TACHO_EVENT_SRC_PFM, name, NULL, desc, pmu, probe);
	fmtbuf(dbuf, sizeof(dbuf), "[needs a umask: %s:UMASK] %s", name, desc);
	return visit(w, TACHO_EVENT_SRC_PFM, name, NULL, dbuf, pmu, NULL);
}

static int dir_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* A PMU's format terms, as one line: "event (config:0-7), umask (config:8-15)". */
static void format_summary(const char *dir, struct tc_sb *sb)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, dir_filter, alphasort);

	for (int i = 0; i < n; i++) {
		char path[1024], fmt[128];
		fmtbuf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (tc_read_line_file(path, fmt, sizeof(fmt)) == 0)
			tc_sb_addf(sb, "%s%s (%s)", sb->len ? ", " : "", ents[i]->d_name, fmt);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
}

static bool alias_side_file(const char *name)
{
	const char *dot = strrchr(name, '.');
	return dot && (!strcmp(dot, ".scale") || !strcmp(dot, ".unit") ||
		       !strcmp(dot, ".snapshot") || !strcmp(dot, ".per-pkg"));
}

/* An alias the grammar cannot use as it is (a parameter like "umask=?", a value too
 * wide) is listed with the reason and not probed. */
static int visit_alias(struct walk *w, const char *pmu, const char *name, const char *text)
{
	struct tacho_event_opts opts = {
		.sz = sizeof(opts), .sysfs_pmu_root = w->ctx.sysfs_root,
		.tracefs_root = w->ctx.tracefs_root,
	};
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	char desc[600];

	if (tacho_evlist_parse_opts(name, &opts, &l, &d) == 0) {
		tacho_evlist_free(l);
		return visit(w, TACHO_EVENT_SRC_PMU, name, NULL, text, pmu, name);
	}
	fmtbuf(desc, sizeof(desc), "[unusable: %s] %s", d.message, text);
	return visit(w, TACHO_EVENT_SRC_PMU, name, NULL, desc, pmu, NULL);
}

static int walk_pmus(struct walk *w)
{
	struct dirent **pmus;
	int n = scandir(w->ctx.sysfs_root, &pmus, dir_filter, alphasort), r = 0;

	for (int i = 0; i < n; i++) {
		const char *pmu = pmus[i]->d_name;
		char path[1024], name[600], desc[512];
		struct tc_sb sb = TC_SB_INIT;
		struct dirent **evs;
		int ne;

		if (r) {
			free(pmus[i]);
			continue;
		}
		tc_sb_init(&sb);
		fmtbuf(path, sizeof(path), "%s/%s/format", w->ctx.sysfs_root, pmu);
		format_summary(path, &sb);
		if (sb.len && !sb.oom) {
			fmtbuf(name, sizeof(name), "%s/TERM=VALUE,.../", pmu);
			fmtbuf(desc, sizeof(desc), "terms: %s", sb.buf);
			r = visit(w, TACHO_EVENT_SRC_PMU, name, NULL, desc, pmu, NULL);
		}
		tc_sb_exit(&sb);
		fmtbuf(path, sizeof(path), "%s/%s/events", w->ctx.sysfs_root, pmu);
		ne = scandir(path, &evs, dir_filter, alphasort);
		for (int j = 0; j < ne; j++) {
			char file[1200], text[256];
			if (!r && !alias_side_file(evs[j]->d_name)) {
				fmtbuf(file, sizeof(file), "%s/%s", path, evs[j]->d_name);
				if (tc_read_line_file(file, text, sizeof(text)) != 0)
					text[0] = '\0';
				fmtbuf(name, sizeof(name), "%s/%s/", pmu, evs[j]->d_name);
				r = visit_alias(w, pmu, name, text);
			}
			free(evs[j]);
		}
		if (ne >= 0)
			free(evs);
		free(pmus[i]);
	}
	if (n >= 0)
		free(pmus);
	return r;
}

static int walk_tracepoints(struct walk *w)
{
	const char *root = tc_tracefs_root(&w->ctx);
	char path[1024];
	struct dirent **subs;
	int n, r = 0;

	if (!root)
		return 0;
	fmtbuf(path, sizeof(path), "%s/events", root);
	n = scandir(path, &subs, dir_filter, alphasort);
	for (int i = 0; i < n; i++) {
		struct dirent **tps;
		char sub[1200];
		int nt = -1;

		if (!r && subs[i]->d_type == DT_DIR) {
			fmtbuf(sub, sizeof(sub), "%s/%s", path, subs[i]->d_name);
			nt = scandir(sub, &tps, dir_filter, alphasort);
		}
		for (int j = 0; j < nt; j++) {
			char name[600];
			if (!r && tps[j]->d_type == DT_DIR) {
				fmtbuf(name, sizeof(name), "%s:%s", subs[i]->d_name, tps[j]->d_name);
				r = visit(w, TACHO_EVENT_SRC_TRACEPOINT, name, NULL, "", subs[i]->d_name,
					  name);
			}
			free(tps[j]);
		}
		if (nt >= 0)
			free(tps);
		free(subs[i]);
	}
	if (n >= 0)
		free(subs);
	return r;
}

/* A uprobe spec that opens here: the entry of this very function, as this process
 * maps it (/proc/self/maps gives the file and where it is mapped from, whether the
 * library is linked statically or shared, PIE or not). False when it cannot be
 * written (no such mapping, or a path the grammar cannot hold). */
static bool uprobe_probe_spec(char *buf, size_t size)
{
	char path[4096];
	uint64_t off;

	if (tc_self_file_offset((uintptr_t)&tacho_events_foreach, path, sizeof(path), &off) ||
	    strpbrk(path, ":, \t{}"))
		return false;
	fmtbuf(buf, size, "uprobe:%s:0x%llx", path, (unsigned long long)off);
	return true;
}

static int visit_uprobe(struct walk *w)
{
	char probe[4400], desc[300];
	uint32_t type;
	unsigned bit;
	bool have = tc_uprobe_pmu(&w->ctx, &type, &bit) == 0;

	if (have)
		fmtbuf(desc, sizeof(desc), "entries of a function in an ELF file, exact (uretprobe: "
		       "returns; uprobe PMU %u)", (unsigned)type);
	else
		fmtbuf(desc, sizeof(desc), "entries of a function, exact; not here: no uprobe "
		       "PMU in %s (CONFIG_UPROBE_EVENTS)", w->ctx.sysfs_root);
	return visit(w, TACHO_EVENT_SRC_BREAKPOINT, "uprobe:PATH:SYMBOL[+OFF]|0xOFFSET", NULL,
		     desc, "uprobe", have && uprobe_probe_spec(probe, sizeof(probe)) ? probe : NULL);
}

/* The breakpoint probe watches writes to this variable: it exists in every process
 * that links the library, so opening it says whether breakpoints work here. */
static long probe_target;

int tacho_events_foreach(const struct tacho_event_opts *opts, unsigned mask,
			 tacho_event_visit_fn *fn, void *arg)
{
	struct walk w = { .fn = fn, .arg = arg };
	char probe[64];
	int r = TC_OPTS_VALID(opts, tacho_event_opts);

	if (r)
		return r;
	w.ctx.sysfs_root = opts && opts->sysfs_pmu_root ? opts->sysfs_pmu_root : TC_SYSFS_PMU_ROOT;
	w.ctx.tracefs_root = opts ? opts->tracefs_root : NULL;
	if (!mask)
		mask = ~0u;
#define WANT(s) (mask & (1u << (s)))
	if (!r && WANT(TACHO_EVENT_SRC_HARDWARE))
		r = walk_generic(&w, tc_hw_events, tc_hw_events_count, TACHO_EVENT_SRC_HARDWARE);
	if (!r && WANT(TACHO_EVENT_SRC_CACHE))
		r = walk_cache(&w);
	if (!r && WANT(TACHO_EVENT_SRC_SOFTWARE))
		r = walk_generic(&w, tc_sw_events, tc_sw_events_count, TACHO_EVENT_SRC_SOFTWARE);
	if (!r && WANT(TACHO_EVENT_SRC_PFM))
		r = tc_pfm_foreach(pfm_visit, &w);
	if (!r && WANT(TACHO_EVENT_SRC_RAW))
		r = visit(&w, TACHO_EVENT_SRC_RAW, "rNNNN", NULL,
			  "raw configuration of the CPU's PMU, in hex (event | umask << 8 | ...)",
			  "cpu", NULL);
	if (!r && WANT(TACHO_EVENT_SRC_PMU))
		r = walk_pmus(&w);
	if (!r && WANT(TACHO_EVENT_SRC_TRACEPOINT))
		r = walk_tracepoints(&w);
	if (!r && WANT(TACHO_EVENT_SRC_BREAKPOINT)) {
		fmtbuf(probe, sizeof(probe), "mem:%p/%zu:w", (void *)&probe_target,
			 sizeof(probe_target));
		r = visit(&w, TACHO_EVENT_SRC_BREAKPOINT, "mem:ADDR[/LEN][:rwx]", NULL,
			  "hardware breakpoint: reads, writes or executions of ADDR (x86: 4 at once)",
			  "breakpoint", probe);
		if (!r)
			r = visit_uprobe(&w);
	}
#undef WANT
	return r;
}

const char *tacho_events_default(unsigned flags)
{
	bool hw = flags & TACHO_EVENTS_HARDWARE;

	if (flags & TACHO_EVENTS_LIVE)
		return hw ? "task-clock,context-switches,cpu-migrations,page-faults,cycles,"
			    "instructions" :
			    "task-clock,context-switches,cpu-migrations,page-faults";
	return hw ? "task-clock,context-switches,cpu-migrations,page-faults,cycles,"
		    "instructions,branches,branch-misses" :
		    "task-clock,context-switches,cpu-migrations,page-faults,minor-faults,"
		    "major-faults";
}

struct add_all {
	struct tacho_evlist *list;
	size_t added, skipped;
	int err;
};

static int add_one(void *arg, const struct tacho_event_info *ev)
{
	struct add_all *a = arg;
	int err;

	/* "dummy" and "bpf-output" are placeholders (for sideband records and BPF
	 * programs' output): they never count anything by themselves */
	if (!ev->probe || !strcmp(ev->name, "dummy") || !strcmp(ev->name, "bpf-output"))
		return 0;
	err = tacho_evlist_add(a->list, ev->probe, NULL);
	if (!err)
		a->added++;
	else
		a->skipped++;
	return 0;
}

int tacho_evlist_add_all(struct tacho_evlist *list, bool hardware, size_t *skipped)
{
	struct add_all a = { .list = list };
	unsigned mask = 1u << TACHO_EVENT_SRC_SOFTWARE | 1u << TACHO_EVENT_SRC_PMU;
	int err;

	if (!list)
		return -EINVAL;
	if (hardware)
		mask |= 1u << TACHO_EVENT_SRC_HARDWARE | 1u << TACHO_EVENT_SRC_CACHE |
			1u << TACHO_EVENT_SRC_PFM;
	err = tacho_events_foreach(NULL, mask, add_one, &a);
	if (skipped)
		*skipped = a.skipped;
	if (err)
		return err;
	return a.added ? 0 : -TACHO_EEMPTY;
}
