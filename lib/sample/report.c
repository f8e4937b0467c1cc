/* report.c - loading a record file, resolving every sample to a binary, function,
 * source line and instruction (each distinct address once), and aggregating. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sample/recfile.h"
#include "sample/symbols.h"

/* --- the profile --- */
struct dso {
	uint32_t name;                 /* pool id of the path / label */
	uint8_t bid[TC_BUILD_ID_MAX];
	uint8_t bidlen;
	const unsigned char *image;    /* in-file copy (vDSO), or NULL */
	size_t image_len;
	struct tc_symdso *sd;
	bool tried, stale;
};

struct map {
	uint64_t start, end, pgoff, time;
	uint32_t dso;
};

struct proc {
	uint32_t pid, parent;          /* parent: pid it was forked from (0: none) */
	uint64_t fork_time;
	uint32_t comm;                 /* pool id */
	struct map *maps;
	size_t nmaps, cap;
	size_t last_hit;
};

struct smp {
	uint64_t time, ip, period, addr;
	const uint64_t *chain;         /* into the mapped file */
	uint32_t pid, tid, cpu, nr;
	uint16_t event, misc;
};

/* Where one address is: all ids into the string pool (UINT32_MAX: unknown). */
struct loc {
	uint64_t ip;                   /* the key: pid, ip, kind, kernel */
	uint32_t pid;
	uint8_t kind, kernel;
	uint32_t sym, dso, file;       /* sym: the name shown (demangled unless turned off) */
	uint32_t raw;                  /* the name as the symbol table spells it */
	int line;
	uint64_t addr;                 /* ELF address of the instruction (trap-corrected) */
	uint64_t sym_start;
	uint64_t rel;                  /* the address looked up, relative to the ELF */
};

struct ev {
	uint32_t name;                 /* pool id */
	uint32_t flags;
	uint64_t period;
};

struct tacho_profile {
	unsigned char *data;
	size_t len;
	struct tc_strpool pool;
	struct ev *evs;
	size_t nev;
	struct dso *dsos;
	size_t ndsos;
	struct proc *procs;
	size_t nprocs;
	struct tc_hmap proc_idx;          /* pid -> proc */
	struct smp *smps;
	size_t nsmps;
	uint64_t lost;
	bool truncated, finished;
	uint64_t good_end;
	int exit_status;
	const char *command, *boot_id, *kptr;
	struct loc *locs;
	size_t nlocs, locs_cap;
	struct tc_hmap loc_idx;           /* (pid, ip, kind) -> loc */
	bool no_demangle;              /* show C++ names as the binary spells them */
	struct tc_hmap dem_idx;           /* pool id of a raw name -> pool id of its display */
	struct tc_kallsyms *ksyms;
	bool ksyms_tried;
	const char *kernel_note;
	uint32_t unknown_id, kernel_id;
	uint16_t sel;                  /* the event reports are about */
	uint64_t sel_samples, sel_events;
};

#define NONE UINT32_MAX

/* The string of a pool id; NULL for NONE. */
static const char *pool_str(const struct tacho_profile *p, uint32_t id)
{
	return tc_strpool_str(&p->pool, id);
}

static struct proc *get_proc(struct tacho_profile *p, uint32_t pid, bool create)
{
	uint32_t i;
	struct proc *np;

	if (tc_hmap_get(&p->proc_idx, pid, &i))
		return &p->procs[i];
	if (!create)
		return NULL;
	np = realloc(p->procs, (p->nprocs + 1) * sizeof(*np));
	if (!np)
		return NULL;
	p->procs = np;
	memset(&np[p->nprocs], 0, sizeof(*np));
	np[p->nprocs].pid = pid;
	np[p->nprocs].comm = NONE;
	if (tc_hmap_put(&p->proc_idx, pid, (uint32_t)p->nprocs))
		return NULL;
	return &p->procs[p->nprocs++];
}

static int find_dso(struct tacho_profile *p, const char *name, const uint8_t *bid, unsigned bidlen,
		    uint32_t *out)
{
	uint32_t nid;
	struct dso *nd;
	int err = tc_strpool_intern(&p->pool, name, &nid);

	if (err)
		return err;
	for (size_t i = 0; i < p->ndsos; i++)
		if (p->dsos[i].name == nid && p->dsos[i].bidlen == bidlen &&
		    !memcmp(p->dsos[i].bid, bid, bidlen)) {
			*out = (uint32_t)i;
			return 0;
		}
	nd = realloc(p->dsos, (p->ndsos + 1) * sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	p->dsos = nd;
	memset(&nd[p->ndsos], 0, sizeof(*nd));
	nd[p->ndsos].name = nid;
	nd[p->ndsos].bidlen = (uint8_t)bidlen;
	memcpy(nd[p->ndsos].bid, bid, bidlen);
	*out = (uint32_t)p->ndsos++;
	return 0;
}

static int add_map(struct tacho_profile *p, const struct tc_rec *r)
{
	struct proc *pr = get_proc(p, r->u.mmap.pid, true);
	uint32_t d;
	int err;

	if (!pr)
		return -ENOMEM;
	err = find_dso(p, r->u.mmap.filename, r->u.mmap.build_id, r->u.mmap.build_id_size, &d);
	if (err)
		return err;
	for (size_t i = 0; i < pr->nmaps; i++)
		if (pr->maps[i].start == r->u.mmap.start && pr->maps[i].dso == d &&
		    pr->maps[i].end == r->u.mmap.start + r->u.mmap.len &&
		    pr->maps[i].pgoff == r->u.mmap.pgoff)
			return 0;   /* the same mapping twice (synthesized and reported) */
	if (pr->nmaps == pr->cap) {
		size_t nc = pr->cap ? pr->cap * 2 : 16;
		struct map *nm = realloc(pr->maps, nc * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		pr->maps = nm;
		pr->cap = nc;
	}
	pr->maps[pr->nmaps++] = (struct map){ r->u.mmap.start, r->u.mmap.start + r->u.mmap.len,
					      r->u.mmap.pgoff, r->u.mmap.time, d };
	return 0;
}

static int load_records(struct tacho_profile *p, const char *path, struct tacho_diag *diag)
{
	struct tc_recr rd;
	struct tc_rec r;
	size_t cap = 0;
	int ret;

	ret = tc_recr_init(&rd, p->data, p->len, path, diag);
	if (ret)
		return ret;
	while ((ret = tc_recr_next(&rd, &r, path, diag)) == 1) {
		switch (r.type) {
		case TC_REC_META: {
			size_t pos = 0;
			const char *k, *v;
			while (tc_rec_meta_next(&r, &pos, &k, &v)) {
				if (!strcmp(k, "command"))
					p->command = v;
				else if (!strcmp(k, "boot_id"))
					p->boot_id = v;
				else if (!strcmp(k, "kptr_restrict"))
					p->kptr = v;
			}
			break;
		}
		case TC_REC_EVENT: {
			struct ev *ne;
			if (r.u.event.index != p->nev)
				return tc_diag_set(diag, path, 0, 0, -TACHO_ECORRUPT,
						   "corrupt record at byte %" PRIu64 ": event %u out of order",
						   r.offset, r.u.event.index);
			ne = realloc(p->evs, (p->nev + 1) * sizeof(*ne));
			if (!ne)
				return -ENOMEM;
			p->evs = ne;
			ne[p->nev].flags = r.u.event.flags;
			ne[p->nev].period = r.u.event.period;
			if (tc_strpool_intern(&p->pool, r.u.event.name, &ne[p->nev].name))
				return -ENOMEM;
			p->nev++;
			break;
		}
		case TC_REC_PERIOD:
			if (r.u.period.event < p->nev)
				p->evs[r.u.period.event].period = r.u.period.period;
			break;
		case TC_REC_MMAP:
			if (add_map(p, &r))
				return -ENOMEM;
			break;
		case TC_REC_COMM: {
			struct proc *pr = get_proc(p, r.u.comm.pid, true);
			if (!pr)
				return -ENOMEM;
			/* the process's name is its main thread's */
			if (r.u.comm.pid == r.u.comm.tid || pr->comm == NONE)
				if (tc_strpool_intern(&p->pool, r.u.comm.comm, &pr->comm))
					return -ENOMEM;
			break;
		}
		case TC_REC_TASK:
			if (r.u.task.kind == TC_TASK_FORK && r.u.task.pid != r.u.task.ppid) {
				struct proc *pr = get_proc(p, r.u.task.pid, true);
				struct proc *pp;
				if (!pr)
					return -ENOMEM;
				pr->parent = r.u.task.ppid;
				pr->fork_time = r.u.task.time;
				pp = get_proc(p, r.u.task.ppid, true);
				if (!pp)
					return -ENOMEM;
				pr = get_proc(p, r.u.task.pid, false);   /* realloc may have moved it */
				if (pr && pr->comm == NONE)
					pr->comm = pp->comm;
			}
			break;
		case TC_REC_SAMPLE: {
			struct smp *s;
			if (p->nsmps == cap) {
				size_t nc = cap ? cap * 2 : 4096;
				struct smp *ns = realloc(p->smps, nc * sizeof(*ns));
				if (!ns)
					return -ENOMEM;
				p->smps = ns;
				cap = nc;
			}
			s = &p->smps[p->nsmps++];
			s->time = r.u.sample.time;
			s->ip = r.u.sample.ip;
			s->addr = r.u.sample.addr;
			s->period = r.u.sample.period;
			s->chain = r.u.sample.chain;
			s->pid = r.u.sample.pid;
			s->tid = r.u.sample.tid;
			s->cpu = r.u.sample.cpu;
			s->nr = r.u.sample.nr;
			s->event = r.u.sample.event;
			s->misc = r.u.sample.misc;
			break;
		}
		case TC_REC_LOST:
			p->lost += r.u.lost.lost;
			break;
		case TC_REC_IMAGE: {
			uint32_t d;
			if (find_dso(p, r.u.image.name, r.u.image.build_id, r.u.image.build_id_size, &d))
				return -ENOMEM;
			p->dsos[d].image = r.u.image.data;
			p->dsos[d].image_len = r.u.image.len;
			break;
		}
		case TC_REC_FINISH:
			p->exit_status = r.u.finish.status;
			break;
		default:
			break;
		}
	}
	if (ret < 0)
		return ret;
	if (rd.skipped)
		tc_log(TACHO_LOG_WARN, "%s: skipped %" PRIu64 " records of a type this tacho does "
		       "not know (written by a newer tacho?): the report may miss what they held",
		       path, rd.skipped);
	p->truncated = rd.truncated;
	p->finished = rd.finished;
	p->good_end = rd.good_end;
	/* a sample naming an event the file never declared is corrupt */
	for (size_t i = 0; i < p->nsmps; i++)
		if (p->smps[i].event >= p->nev && !(p->nev == 0 && p->truncated))
			return tc_diag_set(diag, path, 0, 0, -TACHO_ECORRUPT,
					   "sample %zu names event %u of %zu", i, p->smps[i].event, p->nev);
	/* the vDSO image pairs with the mappings named [vdso] whatever their build-id */
	for (size_t i = 0; i < p->ndsos; i++)
		if (!strcmp(pool_str(p, p->dsos[i].name), "[vdso]") && !p->dsos[i].image)
			for (size_t j = 0; j < p->ndsos; j++)
				if (p->dsos[j].image && !strcmp(pool_str(p, p->dsos[j].name), "[vdso]")) {
					p->dsos[i].image = p->dsos[j].image;
					p->dsos[i].image_len = p->dsos[j].image_len;
				}
	return 0;
}

static void select_event(struct tacho_profile *p, uint16_t ev)
{
	p->sel = ev;
	p->sel_samples = 0;
	p->sel_events = 0;
	for (size_t i = 0; i < p->nsmps; i++)
		if (p->smps[i].event == ev) {
			p->sel_samples++;
			p->sel_events += p->smps[i].period;
		}
}

int tacho_profile_select_event(struct tacho_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nev; i++)
		if (!strcmp(pool_str(p, p->evs[i].name), name)) {
			select_event(p, (uint16_t)i);
			return 0;
		}
	return -ENOENT;
}

int tacho_profile_load(const char *path, struct tacho_profile **out, struct tacho_diag *diag)
{
	struct tacho_profile *p;
	struct stat st;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return tc_diag_set(diag, path, 0, 0, err, "cannot open: %s", tacho_strerror(err));
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return tc_diag_set(diag, path, 0, 0, err, "cannot read: %s", tacho_strerror(err));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return tc_diag_set(diag, path, 0, 0, -EINVAL, "not a regular file");
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	p->exit_status = -1;
	p->len = (size_t)st.st_size;
	if (p->len) {
		void *m = mmap(NULL, p->len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			err = -errno;
			close(fd);
			free(p);
			return tc_diag_set(diag, path, 0, 0, err, "cannot map: %s", tacho_strerror(err));
		}
		p->data = m;
	}
	close(fd);
	err = tc_strpool_intern(&p->pool, "[unknown]", &p->unknown_id);
	if (!err)
		err = tc_strpool_intern(&p->pool, "[kernel]", &p->kernel_id);
	if (!err)
		err = load_records(p, path, diag);
	if (err) {
		if (err == -ENOMEM)
			tc_diag_set(diag, path, 0, 0, err, "out of memory");
		tacho_profile_free(p);
		return err;
	}
	select_event(p, 0);
	*out = p;
	return 0;
}

void tacho_profile_free(struct tacho_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->ndsos; i++)
		tc_symdso_free(p->dsos[i].sd);
	free(p->dsos);
	for (size_t i = 0; i < p->nprocs; i++)
		free(p->procs[i].maps);
	free(p->procs);
	tc_hmap_exit(&p->proc_idx);
	free(p->smps);
	free(p->evs);
	free(p->locs);
	tc_hmap_exit(&p->loc_idx);
	tc_hmap_exit(&p->dem_idx);
	tc_kallsyms_free(p->ksyms);
	tc_strpool_exit(&p->pool);
	if (p->data)
		munmap(p->data, p->len);
	free(p);
}

void tacho_profile_info(const struct tacho_profile *p, struct tacho_profile_info *out)
{
	memset(out, 0, sizeof(*out));
	out->samples = p->sel_samples;
	out->all_samples = p->nsmps;
	out->nevents = (unsigned)p->nev;
	out->lost = p->lost;
	out->truncated = p->truncated;
	out->good_bytes = p->good_end;
	out->file_bytes = p->len;
	if (p->sel < p->nev) {
		out->event = pool_str(p, p->evs[p->sel].name);
		out->period = p->evs[p->sel].period;
		out->freq = p->evs[p->sel].flags & TC_EVF_FREQ;
	}
	out->command = p->command;
	out->exit_status = p->finished ? p->exit_status : -1;
	out->kernel_note = p->kernel_note;
}

void tacho_profile_set_demangle(struct tacho_profile *p, bool on)
{
	if (p->no_demangle == !on)
		return;
	p->no_demangle = !on;
	/* the cached locations carry the names of the old choice: resolve again */
	p->nlocs = 0;
	tc_hmap_exit(&p->loc_idx);
}

/* --- resolving addresses --- */

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

static struct tc_symdso *dso_open(struct tacho_profile *p, struct dso *d)
{
	const char *name = pool_str(p, d->name);

	if (d->tried)
		return d->stale ? NULL : d->sd;
	d->tried = true;
	if (d->image) {
		tc_symdso_open(name, d->image, d->image_len, &d->sd);
	} else if (name[0] == '/') {
		tc_symdso_open(name, NULL, 0, &d->sd);
		if (!d->sd && d->bidlen) {
			/* the file is gone: look for a copy by build-id, as gdb does */
			char hex[2 * TC_BUILD_ID_MAX + 1], path[128];
			tc_hex_encode(d->bid, d->bidlen, hex, sizeof(hex));
			snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
				 hex + 2);
			tc_symdso_open(path, NULL, 0, &d->sd);
		}
	}
	if (d->sd && d->bidlen) {
		size_t len;
		const uint8_t *b = tc_symdso_build_id(d->sd, &len);
		if (!b || len < d->bidlen || memcmp(b, d->bid, d->bidlen)) {
			tc_log(TACHO_LOG_WARN, "%s changed since the recording (build-id differs): "
			       "its samples are not symbolized", name);
			d->stale = true;
			return NULL;
		}
	}
	/* a missing regular file is worth a word; deleted files, memfds and devices
	 * (JIT code, shared memory) never had symbols to read */
	if (!d->sd && name[0] == '/' && !strstr(name, " (deleted)") &&
	    !tc_starts_with(name, "/memfd:") && !tc_starts_with(name, "/dev/"))
		tc_log(TACHO_LOG_WARN, "cannot read %s: its samples are not symbolized", name);
	return d->sd;
}

static const struct map *find_map(struct tacho_profile *p, uint32_t pid, uint64_t ip, uint64_t time)
{
	for (int depth = 0; depth < 16; depth++) {
		struct proc *pr = get_proc(p, pid, false);
		const struct map *best = NULL;

		if (!pr)
			return NULL;
		if (pr->last_hit < pr->nmaps) {
			const struct map *m = &pr->maps[pr->last_hit];
			if (ip >= m->start && ip < m->end && m->time <= time)
				return m;
		}
		/* the newest mapping that covers ip and is not younger than the sample (a
		 * process that exec'd, or re-mapped a range) */
		for (size_t i = pr->nmaps; i-- > 0;) {
			const struct map *m = &pr->maps[i];
			if (ip < m->start || ip >= m->end)
				continue;
			if (m->time <= time) {
				pr->last_hit = i;
				return m;
			}
			if (!best)
				best = m;
		}
		if (best)
			return best;
		if (!pr->parent || pr->parent == pid)
			return NULL;
		pid = pr->parent;   /* a forked child shares its parent's mappings */
	}
	return NULL;
}

static void kernel_symbols(struct tacho_profile *p)
{
	char now[64] = "";

	if (p->ksyms_tried)
		return;
	p->ksyms_tried = true;
	tc_read_line_file("/proc/sys/kernel/random/boot_id", now, sizeof(now));
	if (!p->boot_id || strcmp(p->boot_id, now)) {
		p->kernel_note = "the recording comes from another boot: kernel addresses are not "
				 "symbolized";
		return;
	}
	if (tc_kallsyms_load(NULL, &p->ksyms) != 0) {
		p->kernel_note = "cannot read /proc/kallsyms: kernel addresses are not symbolized";
		return;
	}
	if (tc_kallsyms_hidden(p->ksyms))
		p->kernel_note = "/proc/kallsyms shows every address as 0 (kernel.kptr_restrict): "
				 "kernel addresses are not symbolized";
}

enum { K_EXACT = 0, K_RETURN = 1, K_TRAP = 2 };

static bool is_kernel_ip(uint64_t ip, uint16_t misc)
{
	unsigned mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;

	return mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL ||
	       (mode == PERF_RECORD_MISC_CPUMODE_UNKNOWN && ip >= 0xffff800000000000ull);
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
			goto done;
	}
	memset(&l, 0, sizeof(l));
	l.ip = ip;
	l.pid = pid;
	l.kind = (uint8_t)kind;
	l.kernel = kernel;
	l.file = NONE;
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
		const struct map *m = find_map(p, pid, ip, time);
		if (m) {
			struct dso *d = &p->dsos[m->dso];
			struct tc_symdso *sd = dso_open(p, d);
			uint64_t addr = ip - m->start + m->pgoff;   /* file offset until translated */
			l.dso = d->name;
			l.addr = addr;
			if (sd && tc_symdso_file_to_addr(sd, addr, &addr) == 0) {
				struct tc_symloc sl;
				uint64_t look = kind == K_EXACT ? addr : addr - 1;
				l.rel = addr;
				l.addr = addr;
				tc_symdso_lookup(sd, look, &sl);
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
							tc_symdso_lookup(sd, insn, &sl);
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
				if (sl.file && tc_strpool_intern(&p->pool, sl.file, &l.file))
					return -ENOMEM;
				l.line = sl.line;
				l.sym_start = sl.sym_start;
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
done:
	*out = idx;
	return 0;
}

/* The frames of a sample, leaf first: loc ids into frames (at most max). */
static int sample_frames(struct tacho_profile *p, const struct smp *s, uint32_t *frames, size_t max,
			 size_t *n)
{
	bool trap = s->event < p->nev && (p->evs[s->event].flags & TC_EVF_TRAP);
	bool kernel = is_kernel_ip(s->ip, s->misc);
	int err;

	*n = 0;
	if (!s->nr) {
		err = resolve(p, s->pid, s->ip, s->time, trap ? K_TRAP : K_EXACT, kernel, &frames[0]);
		if (!err)
			*n = 1;
		return err;
	}
	for (uint32_t i = 0; i < s->nr && *n < max; i++) {
		uint64_t ip;
		memcpy(&ip, &s->chain[i], 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL ||
				 ip == (uint64_t)PERF_CONTEXT_GUEST_KERNEL;
			continue;
		}
		err = resolve(p, s->pid, ip, s->time, *n == 0 ? (trap ? K_TRAP : K_EXACT) : K_RETURN,
			      kernel, &frames[*n]);
		if (err)
			return err;
		(*n)++;
	}
	if (*n == 0) {
		err = resolve(p, s->pid, s->ip, s->time, trap ? K_TRAP : K_EXACT,
			      is_kernel_ip(s->ip, s->misc), &frames[0]);
		if (!err)
			*n = 1;
		return err;
	}
	return 0;
}

/* --- aggregation --- */
struct agg {
	uint32_t sym, dso, file;
	int line;
	uint64_t addr;
	uint64_t samples, self;
	uint64_t events;               /* sum of the periods of its samples */
};

struct aggtab {
	struct agg *v;
	size_t n, cap;
	struct tc_hmap idx;
};

static int agg_add(struct aggtab *t, const struct agg *k, uint64_t incl, uint64_t self,
		   uint64_t events)
{
	uint64_t key = tc_hash_u64(k->sym ^ ((uint64_t)k->dso << 32)) ^
		       tc_hash_u64(k->file ^ ((uint64_t)(uint32_t)k->line << 32)) ^
		       tc_hash_u64(k->addr + 0x9e3779b97f4a7c15ull);
	uint32_t i;
	size_t pos = 0;

	/* probe by hash, then confirm the whole key (two keys may share a hash) */
	while (tc_hmap_next(&t->idx, key, &pos, &i)) {
		if (t->v[i].sym == k->sym && t->v[i].dso == k->dso && t->v[i].file == k->file &&
		    t->v[i].line == k->line && t->v[i].addr == k->addr) {
			t->v[i].samples += incl;
			t->v[i].self += self;
			t->v[i].events += events;
			return 0;
		}
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		struct agg *nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = nc;
	}
	t->v[t->n] = *k;
	t->v[t->n].samples = incl;
	t->v[t->n].self = self;
	t->v[t->n].events = events;
	if (tc_hmap_add(&t->idx, key, (uint32_t)t->n))
		return -ENOMEM;
	t->n++;
	return 0;
}

static void key_of(const struct tacho_profile *p, const struct loc *l, enum tacho_sort sort,
		   struct agg *k)
{
	memset(k, 0, sizeof(*k));
	k->sym = NONE;
	k->file = NONE;
	switch (sort) {
	case TACHO_SORT_DSO:
		k->dso = l->dso;
		break;
	case TACHO_SORT_LINE:
		k->sym = l->sym;
		k->dso = l->dso;
		k->file = l->file;
		k->line = l->line;
		/* without a line, keep instructions apart only by function */
		break;
	case TACHO_SORT_ADDRESS:
		k->sym = l->sym;
		k->dso = l->dso;
		k->file = l->file;
		k->line = l->line;
		k->addr = l->addr;
		break;
	case TACHO_SORT_SYMBOL:
	default:
		k->sym = l->sym;
		k->dso = l->dso;
		break;
	}
	(void)p;
}

static int row_cmp(const void *a, const void *b)
{
	const struct tacho_profile_row *x = a, *y = b;
	int c;

	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if ((c = strcmp(x->symbol, y->symbol)))
		return c;
	if ((c = strcmp(x->dso, y->dso)))
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

static int to_rows(struct tacho_profile *p, struct aggtab *t, uint64_t total,
		   struct tacho_profile_row **rows, size_t *n)
{
	struct tacho_profile_row *r = calloc(t->n ? t->n : 1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct agg *a = &t->v[i];
		r[i].symbol = a->sym == NONE ? "[unknown]" : pool_str(p, a->sym);
		r[i].dso = pool_str(p, a->dso) ? pool_str(p, a->dso) : "[unknown]";
		r[i].file = pool_str(p, a->file);
		r[i].line = a->line;
		r[i].address = a->addr;
		r[i].samples = a->samples;
		r[i].self = a->self;
		r[i].events = a->events;
		/* like perf's "Overhead": each sample weighs the events it stands for, so that
		 * samples taken with a smaller period (calibration, frequency mode) count less */
		r[i].percent = total ? 100.0 * (double)a->events / (double)total : 0;
	}
	qsort(r, t->n, sizeof(*r), row_cmp);
	*rows = r;
	*n = t->n;
	return 0;
}

#define MAX_FRAMES 512

int tacho_profile_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
		       struct tacho_profile_row **rows, size_t *n)
{
	struct aggtab t = { 0 };
	uint32_t frames[MAX_FRAMES];
	struct agg keys[MAX_FRAMES];
	int err = 0;

	*rows = NULL;
	*n = 0;
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		size_t nf, nk = 0;
		struct agg k;
		uint64_t w = p->smps[i].period;

		if (p->smps[i].event != p->sel)
			continue;
		if (!children) {
			/* self only: the leaf; no need to resolve the rest of the chain */
			err = sample_frames(p, &p->smps[i], frames, 1, &nf);
			if (err)
				break;
			key_of(p, &p->locs[frames[0]], sort, &k);
			err = agg_add(&t, &k, 1, 1, w);
			continue;
		}
		err = sample_frames(p, &p->smps[i], frames, MAX_FRAMES, &nf);
		if (err)
			break;
		for (size_t f = 0; f < nf; f++) {
			bool dup = false;
			key_of(p, &p->locs[frames[f]], sort, &k);
			for (size_t j = 0; j < nk && !dup; j++)
				dup = !memcmp(&keys[j], &k, sizeof(k));
			if (dup)
				continue;   /* recursion: count a function once per sample */
			keys[nk++] = k;
			err = agg_add(&t, &k, 1, f == 0, w);
			if (err)
				break;
		}
	}
	if (!err)
		err = to_rows(p, &t, p->sel_events, rows, n);
	free(t.v);
	tc_hmap_exit(&t.idx);
	return err;
}

static int addr_cmp(const void *a, const void *b)
{
	const struct tacho_profile_row *x = a, *y = b;

	return x->address < y->address ? -1 : x->address > y->address;
}

int tacho_profile_annotate(struct tacho_profile *p, const char *symbol,
			   struct tacho_profile_row **rows, size_t *n)
{
	struct aggtab t = { 0 };
	uint32_t frame, sym_id = NONE, raw_id = NONE, dso_name = NONE;
	uint64_t sym_start = 0, hits = 0;
	int err = 0;

	*rows = NULL;
	*n = 0;
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		size_t nf;
		const struct loc *l;
		struct agg k;

		if (p->smps[i].event != p->sel)
			continue;
		err = sample_frames(p, &p->smps[i], &frame, 1, &nf);
		if (err || !nf)
			break;
		l = &p->locs[frame];
		/* by the name shown or by the mangled one */
		if (l->sym == NONE ||
		    (strcmp(pool_str(p, l->sym), symbol) && strcmp(pool_str(p, l->raw), symbol)))
			continue;
		if (sym_id == NONE) {
			sym_id = l->sym;
			raw_id = l->raw;
			dso_name = l->dso;
			sym_start = l->sym_start;
		}
		key_of(p, l, TACHO_SORT_ADDRESS, &k);
		err = agg_add(&t, &k, 1, 1, p->smps[i].period);
		hits++;
	}
	if (err || !hits) {
		free(t.v);
		tc_hmap_exit(&t.idx);
		return err ? err : -ENOENT;
	}
	/* every instruction of the function, sampled or not, when its bytes can be read
	 * and decoded: the view then reads like a listing */
	for (size_t i = 0; i < p->ndsos && !err; i++) {
		struct dso *d = &p->dsos[i];
		struct tc_symdso *sd;
		uint64_t start, size;
		uint8_t code[65536];
		size_t got, off = 0;

		if (d->name != dso_name || !(sd = dso_open(p, d)))
			continue;
		if (tc_symdso_find(sd, pool_str(p, raw_id), &start, &size) || start != sym_start ||
		    !size || size > sizeof(code))
			break;
		got = tc_symdso_read(sd, start, code, (size_t)size);
		while (off < got && !err) {
			unsigned len = tc_x86_insn_len(code + off, got - off);
			struct tc_symloc sl;
			struct agg k = { .sym = sym_id, .dso = dso_name, .file = NONE, .addr = start + off };
			if (!len)
				break;
			tc_symdso_lookup(sd, start + off, &sl);
			if (sl.file && tc_strpool_intern(&p->pool, sl.file, &k.file))
				err = -ENOMEM;
			k.line = sl.line;
			if (!err)
				err = agg_add(&t, &k, 0, 0, 0);
			off += len;
		}
		break;
	}
	if (!err)
		err = to_rows(p, &t, p->sel_events, rows, n);
	if (!err) {
		/* the same address may come twice if a line table disagreed: keep the one
		 * with samples (agg_add merged equal keys already) */
		qsort(*rows, *n, sizeof(**rows), addr_cmp);
		size_t w = 0;
		for (size_t i = 0; i < *n; i++) {
			if (w && (*rows)[w - 1].address == (*rows)[i].address) {
				if ((*rows)[i].samples > (*rows)[w - 1].samples)
					(*rows)[w - 1] = (*rows)[i];
				continue;
			}
			(*rows)[w++] = (*rows)[i];
		}
		*n = w;
	}
	free(t.v);
	tc_hmap_exit(&t.idx);
	return err;
}

/* --- exports --- */

static const char *frame_name(const struct tacho_profile *p, const struct loc *l)
{
	return l->sym == NONE ? "[unknown]" : pool_str(p, l->sym);
}

static const char *comm_of(struct tacho_profile *p, uint32_t pid)
{
	struct proc *pr = get_proc(p, pid, false);

	return pr && pr->comm != NONE ? pool_str(p, pr->comm) : "[unknown]";
}

int tacho_profile_write_folded(struct tacho_profile *p, FILE *f)
{
	struct tc_strpool stacks = TC_STRPOOL_INIT;
	uint64_t *counts = NULL;
	size_t cap = 0, nstacks;
	uint32_t frames[MAX_FRAMES], *order = NULL;
	struct tc_sb sb = TC_SB_INIT;
	int err = 0;

	tc_sb_init(&sb);
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		size_t nf;
		uint32_t id;

		if (p->smps[i].event != p->sel)
			continue;
		err = sample_frames(p, &p->smps[i], frames, MAX_FRAMES, &nf);
		if (err)
			break;
		tc_sb_reset(&sb);
		tc_sb_adds(&sb, comm_of(p, p->smps[i].pid));
		for (size_t k = nf; k-- > 0;) {
			const char *name = frame_name(p, &p->locs[frames[k]]);
			tc_sb_addc(&sb, ';');
			/* ';' separates frames and a space ends the stack: keep them out */
			for (const char *c = name; *c; c++)
				tc_sb_addc(&sb, *c == ';' || *c == ' ' || *c == '\n' ? '_' : *c);
		}
		if (sb.oom || tc_strpool_intern(&stacks, sb.buf, &id)) {
			err = -ENOMEM;
			break;
		}
		if (id >= cap) {
			size_t nc = cap ? cap * 2 : 256;
			uint64_t *ncnt = realloc(counts, nc * sizeof(*ncnt));
			if (!ncnt) {
				err = -ENOMEM;
				break;
			}
			memset(ncnt + cap, 0, (nc - cap) * sizeof(*ncnt));
			counts = ncnt;
			cap = nc;
		}
		counts[id]++;
	}
	tc_sb_exit(&sb);
	nstacks = tc_strpool_count(&stacks);
	if (!err) {
		/* sorted by stack, so that equal profiles give equal files */
		order = malloc((nstacks ? nstacks : 1) * sizeof(*order));
		if (!order)
			err = -ENOMEM;
	}
	if (!err) {
		for (size_t i = 0; i < nstacks; i++)
			order[i] = (uint32_t)i;
		for (size_t i = 1; i < nstacks; i++) {   /* insertion sort on small sets */
			uint32_t v = order[i];
			size_t j = i;
			if (nstacks > 4096)
				break;
			while (j && strcmp(tc_strpool_str(&stacks, order[j - 1]),
					   tc_strpool_str(&stacks, v)) > 0) {
				order[j] = order[j - 1];
				j--;
			}
			order[j] = v;
		}
		for (size_t i = 0; i < nstacks; i++)
			fprintf(f, "%s %" PRIu64 "\n", tc_strpool_str(&stacks, order[i]),
				counts[order[i]]);
		if (ferror(f))
			err = -EIO;
	}
	free(order);
	free(counts);
	tc_strpool_exit(&stacks);
	return err;
}

static int time_cmp(const void *a, const void *b)
{
	const struct smp *const *x = a, *const *y = b;

	if ((*x)->time != (*y)->time)
		return (*x)->time < (*y)->time ? -1 : 1;
	return *x < *y ? -1 : *x > *y;
}

int tacho_profile_write_script(struct tacho_profile *p, FILE *f)
{
	const struct smp **order = malloc((p->nsmps ? p->nsmps : 1) * sizeof(*order));
	uint32_t frames[MAX_FRAMES];
	int err = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsmps; i++)
		order[i] = &p->smps[i];
	/* the rings of several CPUs interleave in the file: the text is in time order */
	qsort(order, p->nsmps, sizeof(*order), time_cmp);
	for (size_t i = 0; i < p->nsmps && !err; i++) {
		const struct smp *s = order[i];
		size_t nf;
		const char *ev = s->event < p->nev ? pool_str(p, p->evs[s->event].name) : "[unknown]";

		if (s->event != p->sel)
			continue;
		err = sample_frames(p, s, frames, MAX_FRAMES, &nf);
		if (err)
			break;
		fprintf(f, "%s %u/%u [%03u] %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " %s:",
			comm_of(p, s->pid), s->pid, s->tid, s->cpu, s->time / 1000000000u,
			(s->time % 1000000000u) / 1000u, s->period, ev);
		/* the data address, where the event has one, as `perf script -F ...,addr`
		 * prints it: after the event name */
		if (s->event < p->nev && (p->evs[s->event].flags & TC_EVF_ADDR))
			fprintf(f, " %16" PRIx64, s->addr);
		fputc('\n', f);
		for (size_t k = 0; k < nf; k++) {
			const struct loc *l = &p->locs[frames[k]];
			const char *dso = pool_str(p, l->dso) ? pool_str(p, l->dso) : "[unknown]";
			uint64_t ip = k == 0 ? s->ip : l->addr;
			/* the runtime address, as perf prints it: the leaf's is the sample's IP;
			 * for callers, the chain's return address */
			if (k > 0 && s->nr) {
				size_t real = 0;
				for (uint32_t c = 0; c < s->nr; c++) {
					uint64_t v;
					memcpy(&v, &s->chain[c], 8);
					if (v >= (uint64_t)PERF_CONTEXT_MAX)
						continue;
					if (real++ == k) {
						ip = v;
						break;
					}
				}
			}
			if (l->sym != NONE)
				fprintf(f, "\t%16" PRIx64 " %s+0x%" PRIx64 " (%s)\n", ip, pool_str(p, l->sym),
					l->addr - l->sym_start, dso);
			else
				fprintf(f, "\t%16" PRIx64 " [unknown] (%s)\n", ip, dso);
		}
		fputc('\n', f);
		if (ferror(f))
			err = -EIO;
	}
	free(order);
	return err;
}
