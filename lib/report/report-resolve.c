/* report-resolve.c - resolving the addresses of samples: each distinct (process,
 * address, kind) once, to a binary, function (demangled unless turned off), source line
 * and instruction, through the mappings the recording saw and the kernel's symbols. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "symbols/buildid-cache.h"
#include "report/profile-dso.h"
#include "report/report-int.h"
#include "tacho/errors.h"
#include "tacho/report.h"

void tacho_profile_set_demangle(struct tacho_profile *p, bool on)
{
	if (p->no_demangle == !on)
		return;
	p->no_demangle = !on;
	/* the cached locations carry the names of the old choice: resolve again */
	p->nlocs = 0;
	tc_hmap_exit(&p->loc_idx);
	tc_hmap_exit(&p->unk_idx);   /* by location index */
}

void tacho_profile_set_inline(struct tacho_profile *p, bool on)
{
	if (p->no_inline == !on)
		return;
	p->no_inline = !on;
	/* drop the chains made (and the locations they added) */
	p->nlocs = 0;
	tc_hmap_exit(&p->loc_idx);
	tc_hmap_exit(&p->unk_idx);
}

/* The pool id of the name to show for the symbol-table name raw: its demangled form
 * (computed once per name), or raw itself. */
static int display_name(struct tacho_profile *p, uint32_t raw, uint32_t *out)
{
	char *dem;
	int err = 0;

	*out = raw;
	if (p->no_demangle)
		return 0;
	if (tc_hmap_get(&p->dem_idx, raw, out))
		return 0;
	dem = tc_demangle(pool_str(p, raw));
	if (dem) {
		err = tc_strpool_intern(&p->pool, dem, out);
		free(dem);
	}
	if (!err)
		err = tc_hmap_put(&p->dem_idx, raw, *out);
	return err;
}

/* True when sd's build-id is the one recorded for d (or nothing was recorded). */
static bool same_build_id(const struct dso *d, const struct tc_symdso *sd)
{
	size_t len;
	const uint8_t *b;

	if (!d->bidlen)
		return true;
	b = tc_symdso_build_id(sd, &len);
	return b && len >= d->bidlen && !memcmp(b, d->bid, d->bidlen);
}

/* Opens path for d when it has the recorded build-id: true and d->sd, d->path. */
static bool open_as(struct tacho_profile *p, struct dso *d, const char *path)
{
	struct tc_symdso *sd = NULL;

	tc_symdso_open(path, NULL, 0, &sd);
	if (!sd)
		return false;
	if (!same_build_id(d, sd) || tc_strpool_intern(&p->pool, path, &d->path)) {
		tc_symdso_free(sd);
		d->path = NONE;
		return false;
	}
	d->sd = sd;
	return true;
}

struct tc_symdso *tc_profile_dso_open(struct tacho_profile *p, struct dso *d)
{
	const char *name = pool_str(p, d->name);
	bool changed = false;

	if (d->tried)
		return d->stale ? NULL : d->sd;
	d->tried = true;
	if (d->image) {
		tc_symdso_open(name, d->image, d->image_len, &d->sd);
	} else if (name[0] == '/') {
		struct tc_symdso *sd = NULL;
		tc_symdso_open(name, NULL, 0, &sd);
		if (sd && same_build_id(d, sd)) {
			d->sd = sd;
			d->path = d->name;
		} else if (sd) {
			changed = true;
			tc_symdso_free(sd);
		}
		if (!d->sd && d->bidlen) {
			/* rebuilt or gone: a copy by build-id in tacho's cache or perf's
			 * (docs/buildid-cache.md), else the separate debug file, as gdb
			 * finds it */
			char hex[2 * TC_BUILD_ID_MAX + 1], path[4200];
			if (tc_bidcache_lookup(d->bid, d->bidlen, path, sizeof(path)) == 0)
				open_as(p, d, path);
			if (!d->sd) {
				tc_hex_encode(d->bid, d->bidlen, hex, sizeof(hex));
				snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug",
					 hex, hex + 2);
				open_as(p, d, path);
			}
		}
	}
	if (!d->sd && changed) {
		tc_log(TACHO_LOG_WARN, "%s changed since the recording (build-id differs) and no "
		       "copy is in the build-id cache: its samples are not symbolized", name);
		d->stale = true;
		return NULL;
	}
	/* a missing regular file is worth a word; deleted files, memfds, devices and
	 * anonymous code ("//anon": JIT) never had symbols to read */
	if (!d->sd && name[0] == '/' && !strstr(name, " (deleted)") &&
	    !tc_starts_with(name, "/memfd:") && !tc_starts_with(name, "/dev/") &&
	    !tc_starts_with(name, "//anon"))
		tc_log(TACHO_LOG_WARN, "cannot read %s: its samples are not symbolized", name);
	return d->sd;
}

const char *tc_profile_dso_path(struct tacho_profile *p, struct dso *d)
{
	return d->path == NONE ? NULL : pool_str(p, d->path);
}

/* The newest mapping of pid that covers ip and is not younger than the sample (a
 * process that exec'd, or re-mapped a range), else the newest that covers it: a binary
 * search among the mappings by start, then a walk back while a mapping that starts
 * lower may still reach ip (max_end), which is one step when mappings do not overlap.
 * (The cache of the last mapping hit it replaces returned an older mapping that a newer
 * one covered.) */
const struct map *tc_profile_find_map(struct tacho_profile *p, uint32_t pid, uint64_t ip,
				      uint64_t time)
{
	for (int depth = 0; depth < 16; depth++) {
		struct proc *pr = tc_profile_proc(p, pid, false);
		size_t lo = 0, hi, best = SIZE_MAX, young = SIZE_MAX;

		if (!pr)
			return NULL;
		/* hi: how many mappings start at or below ip */
		hi = pr->by_start ? pr->nmaps : 0;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			p->compares++;
			if (pr->maps[pr->by_start[mid]].start <= ip)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k-- > 0 && pr->max_end[k] > ip;) {
			size_t i = pr->by_start[k];
			p->compares++;
			if (ip >= pr->maps[i].end)
				continue;
			if (pr->maps[i].time <= time) {
				if (best == SIZE_MAX || i > best)
					best = i;
			} else if (young == SIZE_MAX || i > young) {
				young = i;
			}
		}
		if (best != SIZE_MAX)
			return &pr->maps[best];
		if (young != SIZE_MAX)
			return &pr->maps[young];
		if (!pr->parent || pr->parent == pid)
			return NULL;
		pid = pr->parent;   /* a forked child shares its parent's mappings */
	}
	return NULL;
}

static bool is_kernel_ip(uint64_t ip, uint16_t misc)
{
	unsigned mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL ||
	       (mode == PERF_RECORD_MISC_CPUMODE_UNKNOWN && ip >= 0xffff800000000000ull);
}

/* The lowest and highest kernel address a lookup may ask for: the samples' IPs and the
 * kernel parts of their chains (walked as tc_profile_frames walks them), less one for a
 * return address. False when there is none. */
static bool kernel_range(const struct tacho_profile *p, uint64_t *lo, uint64_t *hi)
{
	bool any = false;

	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < p->nsmps; i++) {
		const struct smp *s = &p->smps[i];
		bool kernel = is_kernel_ip(s->ip, s->misc);   /* before any marker */

		for (uint32_t k = 0; k <= s->nr; k++) {
			uint64_t ip = s->ip;

			if (k < s->nr) {
				memcpy(&ip, &tc_smp_chain(p, s)[k], 8);
				if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
					kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL ||
						 ip == (uint64_t)PERF_CONTEXT_GUEST_KERNEL;
					continue;
				}
			} else {
				kernel = is_kernel_ip(s->ip, s->misc);   /* the IP itself */
			}
			/* an address in the lower half is no kernel text's, in the copy or in
			 * /proc/kallsyms (both name none there): user stack words after a
			 * value that reads as PERF_CONTEXT_KERNEL, in a frame-pointer chain
			 * through code without frame pointers */
			if (!kernel || ip < 0xffff800000000000ull)
				continue;
			any = true;
			if (ip - (ip != 0) < *lo)
				*lo = ip - (ip != 0);
			if (ip > *hi)
				*hi = ip;
		}
	}
	return any;
}

static void kernel_symbols(struct tacho_profile *p)
{
	char now[64] = "";
	uint64_t lo, hi;
	int cached;

	if (p->ksyms_tried)
		return;
	p->ksyms_tried = true;
	tc_read_line_file("/proc/sys/kernel/random/boot_id", now, sizeof(now));
	if (!p->boot_id || strcmp(p->boot_id, now)) {
		p->kernel_note = "the recording comes from another boot: kernel addresses are not "
				 "symbolized";
		return;
	}
	/* the kernel's own symbols of this boot from the user's cache when every kernel
	 * address sampled is in the kernel's own text; else /proc/kallsyms, which then
	 * fills the cache */
	cached = kernel_range(p, &lo, &hi) ? tc_kallsyms_cache_load(now, lo, hi, &p->ksyms)
					   : -ERANGE;
	if (cached == 0)
		return;
	if (tc_kallsyms_load(NULL, &p->ksyms) != 0) {
		p->ksyms = NULL;
		p->kernel_note = "cannot read /proc/kallsyms: kernel addresses are not symbolized";
		return;
	}
	/* a copy when there is none (or a broken one); one that does not cover these
	 * samples is right, and stays */
	if ((cached == -ENOENT || cached == -EINVAL) && !tc_kallsyms_hidden(p->ksyms))
		tc_kallsyms_cache_save(p->ksyms, now);
	if (tc_kallsyms_hidden(p->ksyms))
		p->kernel_note = "/proc/kallsyms shows every address as 0 (kernel.kptr_restrict): "
				 "kernel addresses are not symbolized";
}

/* The source file and line of a location in a binary (its address as looked up). */
static int loc_lines(struct tacho_profile *p, struct loc *l)
{
	struct tc_symdso *sd;
	struct tc_symloc sl;

	/* a chain's lines are DWARF's own (set when it was made) */
	if (l->role != LOC_SAMPLED || l->dsoi == NONE || l->dsoi >= p->ndsos)
		return 0;
	sd = tc_profile_dso_open(p, &p->dsos[l->dsoi]);
	if (!sd)
		return 0;
	tc_symdso_line(sd, l->addr, &sl);
	if (sl.file && tc_strpool_intern(&p->pool, sl.file, &l->src_file))
		return -ENOMEM;
	l->src_line = sl.file ? sl.line : 0;
	return 0;
}

int tc_profile_want_lines(struct tacho_profile *p)
{
	if (p->want_lines)
		return 0;
	for (size_t i = 0; i < p->nlocs; i++)
		if (loc_lines(p, &p->locs[i]))
			return -ENOMEM;
	/* set once every location has its lines: a call after -ENOMEM tries again */
	p->want_lines = true;
	return 0;
}

static int resolve(struct tacho_profile *p, uint32_t pid, uint64_t ip, uint64_t time, int kind,
		   bool kernel, uint32_t *out)
{
	uint64_t key = tc_hash_u64(ip) ^ ((uint64_t)pid << 2) ^ (uint64_t)kind ^
		       ((uint64_t)kernel << 34);
	struct loc l;
	uint32_t idx;
	size_t pos = 0;

	/* the key is a hash of (pid, ip, kind, kernel): confirm the location is this one */
	while (tc_hmap_next(&p->loc_idx, key, &pos, &idx)) {
		const struct loc *c = &p->locs[idx];
		if (c->ip == ip && c->pid == pid && c->kind == kind && c->kernel == kernel)
			goto out;
	}
	memset(&l, 0, sizeof(l));
	l.ip = ip;
	l.pid = pid;
	l.kind = (uint8_t)kind;
	l.kernel = kernel;
	l.src_file = NONE;
	l.dsoi = NONE;
	l.sym = NONE;
	l.raw = NONE;
	l.dso = p->unknown_id;
	if (kernel) {
		const char *name;
		uint64_t start = 0;
		l.dso = p->kernel_id;
		l.addr = ip;
		kernel_symbols(p);
		if (p->ksyms && (name = tc_kallsyms_lookup(p->ksyms, kind == K_RETURN ? ip - 1 : ip,
							   &start))) {
			if (tc_strpool_intern(&p->pool, name, &l.sym))
				return -ENOMEM;
			l.raw = l.sym;
			l.sym_start = start;
		}
	} else {
		const struct map *m = tc_profile_find_map(p, pid, ip, time);
		if (m) {
			struct dso *d = &p->dsos[m->dso];
			l.map = *m;
			l.mapped = true;
			struct tc_symdso *sd = tc_profile_dso_open(p, d);
			uint64_t addr = ip - m->start + m->pgoff;   /* file offset until translated */
			l.dso = d->name;
			l.addr = addr;
			if (sd && tc_symdso_file_to_addr(sd, addr, &addr) == 0) {
				struct tc_symloc sl;
				uint64_t look = kind == K_EXACT ? addr : addr - 1;
				l.rel = addr;
				l.addr = addr;
				l.dsoi = m->dso;
				tc_symdso_symbol(sd, look, &sl);
				if (kind == K_TRAP && sl.symbol) {
					/* decode from the function's start to the IP: the last
					 * instruction boundary before it is the store */
					uint8_t code[8192];
					uint64_t insn;
					size_t want = (size_t)(addr - sl.sym_start), got;
					l.addr = addr - 1;
					if (want <= sizeof(code)) {
						got = tc_symdso_read(sd, sl.sym_start, code, want);
						if (got == want && tc_x86_prev_insn(code, got, sl.sym_start,
										    addr, &insn) == 0) {
							l.addr = insn;
							tc_symdso_symbol(sd, insn, &sl);
						}
					}
				} else if (kind == K_RETURN || kind == K_TRAP) {
					/* no function to decode from: the byte before the IP lies
					 * inside the instruction that trapped (or made the call) */
					l.addr = addr - 1;
				}
				if (sl.symbol && (tc_strpool_intern(&p->pool, sl.symbol, &l.raw) ||
						  display_name(p, l.raw, &l.sym)))
					return -ENOMEM;
				l.sym_start = sl.sym_start;
				/* l.addr is the address looked up, in every case above */
				if (p->want_lines && loc_lines(p, &l))
					return -ENOMEM;
			}
		}
	}
	if (p->nlocs == p->locs_cap) {
		size_t nc = p->locs_cap ? p->locs_cap * 2 : 256;
		struct loc *nl = realloc(p->locs, nc * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		p->locs = nl;
		p->locs_cap = nc;
	}
	idx = (uint32_t)p->nlocs;
	p->locs[p->nlocs++] = l;
	if (tc_hmap_add(&p->loc_idx, key, idx))
		return -ENOMEM;
out:
	*out = idx;
	return 0;
}

/* Appends location c, a copy of a sampled one made a frame of its chain: role, name
 * (the pool id of the name as DWARF spells it, or NONE), and line. 0 or -ENOMEM. */
static int add_chain_loc(struct tacho_profile *p, struct loc c, uint8_t role, uint32_t raw,
			 const char *file, int line)
{
	c.role = role;
	c.inl_done = true;
	c.ninl = 0;
	c.inl_first = 0;
	c.src_file = NONE;
	c.src_line = 0;
	if (file && line > 0) {
		if (tc_strpool_intern(&p->pool, file, &c.src_file))
			return -ENOMEM;
		c.src_line = line;
	}
	if (role == LOC_INLINED) {
		/* perf's own mark of an inlined function in a call chain */
		uint32_t shown = NONE;
		struct tc_sb sb = TC_SB_INIT;
		int err;

		tc_sb_init(&sb);
		c.raw = raw;
		if (raw != NONE && display_name(p, raw, &shown))
			err = -ENOMEM;
		else {
			tc_sb_addf(&sb, "%s (inlined)", shown != NONE ? pool_str(p, shown) : "[unknown]");
			err = sb.oom ? -ENOMEM : tc_strpool_intern(&p->pool, sb.buf, &c.sym);
		}
		tc_sb_exit(&sb);
		if (err)
			return err;
	}
	if (tc_profile_grow(p, (void **)&p->locs, &p->locs_cap, p->nlocs + 1, sizeof(*p->locs),
			    256))
		return -ENOMEM;
	p->locs[p->nlocs++] = c;
	return 0;
}

/* Looks up the chain of location idx (once): see tc_profile_inlines. */
static int make_chain(struct tacho_profile *p, uint32_t idx)
{
	struct tc_syminl inl[MAX_INLINE];
	struct loc base = p->locs[idx];
	struct tc_symdso *sd;
	struct tc_symloc at;
	uint32_t first = (uint32_t)p->nlocs;
	int n, err = 0;

	p->locs[idx].inl_done = true;
	sd = base.dsoi < p->ndsos ? tc_profile_dso_open(p, &p->dsos[base.dsoi]) : NULL;
	n = sd ? tc_symdso_inlines(sd, base.addr, inl, MAX_INLINE) : 0;
	if (n <= 0)
		return 0;
	/* the innermost function is at the address's own line; each outer one at the
	 * line of the call that was inlined into it */
	tc_symdso_line(sd, base.addr, &at);
	for (int i = 0; i < n && !err; i++) {
		uint32_t raw = NONE;
		if (inl[i].name && tc_strpool_intern(&p->pool, inl[i].name, &raw)) {
			err = -ENOMEM;
			break;
		}
		err = add_chain_loc(p, base, LOC_INLINED, raw, i ? inl[i - 1].call_file : at.file,
				    i ? inl[i - 1].call_line : at.line);
	}
	if (!err)
		err = add_chain_loc(p, base, LOC_INLINER, base.raw, inl[n - 1].call_file,
				    inl[n - 1].call_line);
	if (err) {
		p->nlocs = first;   /* no half chain: the next call tries again */
		p->locs[idx].inl_done = false;
		return err;
	}
	p->locs[idx].inl_first = first;
	p->locs[idx].ninl = (uint16_t)n;
	return 0;
}

int tc_profile_inlines(struct tacho_profile *p, uint32_t idx, uint32_t *first, size_t *n)
{
	const struct loc *l = &p->locs[idx];
	int err;

	*n = 0;
	*first = 0;
	if (p->no_inline || l->role != LOC_SAMPLED || l->kernel || l->dsoi == NONE)
		return 0;
	if (!l->inl_done && (err = make_chain(p, idx)))
		return err;
	l = &p->locs[idx];
	if (l->ninl) {
		*first = l->inl_first;
		*n = (size_t)l->ninl + 1;
	}
	return 0;
}

int tc_profile_chain(struct tacho_profile *p, const struct smp *s, uint32_t *frames, size_t max,
		     size_t *n)
{
	uint32_t real[MAX_FRAMES];
	size_t nr;
	int err;

	if (p->no_inline)
		return tc_profile_frames(p, s, frames, max, n);
	*n = 0;
	err = tc_profile_frames(p, s, real, max < MAX_FRAMES ? max : MAX_FRAMES, &nr);
	for (size_t k = 0; k < nr && *n < max && !err; k++) {
		uint32_t first;
		size_t ni;

		err = tc_profile_inlines(p, real[k], &first, &ni);
		if (!ni)
			frames[(*n)++] = real[k];
		for (size_t j = 0; j < ni && *n < max; j++)
			frames[(*n)++] = first + (uint32_t)j;
	}
	return err;
}

int tc_profile_frames(struct tacho_profile *p, const struct smp *s, uint32_t *frames, size_t max,
		      size_t *n)
{
	bool trap = tc_smp_event(p, s) < p->nev && (p->evs[tc_smp_event(p, s)].flags & TC_EVF_TRAP);
	bool kernel = is_kernel_ip(s->ip, s->misc);
	int err;

	*n = 0;
	if (!p->unwound) {
		/* the chains of DWARF and LBR samples are made once, before any is read */
		err = tc_profile_unwind(p);
		if (err)
			return err;
	}
	if (!s->nr) {
		err = resolve(p, tc_smp_pid(p, s), s->ip, s->time, trap ? K_TRAP : K_EXACT, kernel, &frames[0]);
		if (!err)
			*n = 1;
		return err;
	}
	/* The first address of each context (after its PERF_CONTEXT_* marker) is where
	 * that context was interrupted: the kernel's sampled IP, then the user registers'
	 * IP at the kernel's entry (a page fault's faulting instruction, which may be a
	 * function's first). Each one after it in the same context is a return address,
	 * looked up one byte back, inside its call. */
	bool ctx_first = true;
	for (uint32_t i = 0; i < s->nr && *n < max; i++) {
		uint64_t ip;
		int kind;
		memcpy(&ip, &tc_smp_chain(p, s)[i], 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL ||
				 ip == (uint64_t)PERF_CONTEXT_GUEST_KERNEL;
			ctx_first = true;
			continue;
		}
		kind = *n == 0 ? (trap ? K_TRAP : K_EXACT) : ctx_first ? K_EXACT : K_RETURN;
		ctx_first = false;
		err = resolve(p, tc_smp_pid(p, s), ip, s->time, kind, kernel, &frames[*n]);
		if (err)
			return err;
		(*n)++;
	}
	if (*n == 0) {
		err = resolve(p, tc_smp_pid(p, s), s->ip, s->time, trap ? K_TRAP : K_EXACT,
			      is_kernel_ip(s->ip, s->misc), &frames[0]);
		if (!err)
			*n = 1;
		return err;
	}
	return 0;
}

size_t tc_profile_dso_build_id(const struct tacho_profile *p, const char *name, uint8_t *bid,
			       size_t max)
{
	size_t len = 0;

	for (size_t i = 0; i < p->ndsos; i++) {
		const struct dso *d = &p->dsos[i];

		if (!d->bidlen || strcmp(pool_str(p, d->name), name))
			continue;
		if (len && (len != d->bidlen || memcmp(bid, d->bid, len)))
			return 0;   /* two builds under one name */
		if (d->bidlen > max)
			return 0;
		len = d->bidlen;
		memcpy(bid, d->bid, len);
	}
	return len;
}
