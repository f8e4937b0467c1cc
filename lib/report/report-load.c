/* report-load.c - loading a record file into a profile: its events, processes (forks
 * and names), mappings, binaries and samples; the profile's life, the event a report
 * is about, the summary. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/payload.h"
#include "report/perfdata.h"
#include "report/report-int.h"
#include "record/sideband.h"
#include "tacho/errors.h"
#include "tacho/report.h"

static void own_vdso_for(struct tacho_profile *p, uint32_t vdso);

int tc_profile_grow(struct tacho_profile *p, void **v, size_t *cap, size_t n, size_t sz,
		    size_t min)
{
	size_t nc = *cap ? *cap : min;
	void *nv;

	if (n <= *cap)
		return 0;
	while (nc < n) {
		if (nc > SIZE_MAX / 2 / sz)
			return -ENOMEM;
		nc *= 2;
	}
	nv = realloc(*v, nc * sz);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	p->grows++;
	return 0;
}

/* The index of c in p->ctxs, added when new. Consecutive samples share one as a rule
 * (one thread on one CPU): the last one found is tried first. 0 or -ENOMEM. */
static int smp_ctx(struct tacho_profile *p, const struct smp_ctx *c, uint32_t *out)
{
	uint64_t key;
	size_t pos = 0;
	uint32_t i;

	if (p->nctxs && !memcmp(&p->ctxs[p->ctx_last], c, sizeof(*c))) {
		*out = p->ctx_last;
		return 0;
	}
	key = tc_hash_u64(((uint64_t)c->pid << 32 | c->tid) ^
			  tc_hash_u64((uint64_t)c->cpu << 16 | c->event));
	while (tc_hmap_next(&p->ctx_idx, key, &pos, &i))
		if (!memcmp(&p->ctxs[i], c, sizeof(*c))) {
			*out = p->ctx_last = i;
			return 0;
		}
	if (p->nctxs >= UINT32_MAX - 1 ||
	    tc_profile_grow(p, (void **)&p->ctxs, &p->ctxs_cap, p->nctxs + 1, sizeof(*p->ctxs),
			    64) ||
	    tc_hmap_add(&p->ctx_idx, key, (uint32_t)p->nctxs))
		return -ENOMEM;
	p->ctxs[p->nctxs] = *c;
	*out = p->ctx_last = (uint32_t)p->nctxs++;
	return 0;
}

int tc_smp_set_chain(struct tacho_profile *p, struct smp *s, const uint64_t *chain,
		     uint32_t nr)
{
	if (!nr) {
		s->nr = 0;
		return 0;
	}
	if (!s->nr) {
		if (p->nchains >= UINT32_MAX ||
		    tc_profile_grow(p, (void **)&p->chains, &p->chains_cap, p->nchains + 1,
				    sizeof(*p->chains), 4096))
			return -ENOMEM;
		s->chain = (uint32_t)p->nchains++;
	}
	p->chains[s->chain] = chain;
	s->nr = nr <= SMP_NR_MAX ? (uint16_t)nr : SMP_NR_MAX;
	p->chains_cut += nr > SMP_NR_MAX;
	return 0;
}

uint64_t tc_smp_bigp(const struct tacho_profile *p, const struct smp *s)
{
	size_t i = (size_t)(s - p->smps), lo = 0, hi = p->nbigp;

	while (lo < hi) {   /* appended as the samples were: by index */
		size_t mid = lo + (hi - lo) / 2;
		if (p->bigp[mid].i < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nbigp && p->bigp[lo].i == i ? p->bigp[lo].period : SMP_PERIOD_BIG;
}

struct proc *tc_profile_proc(struct tacho_profile *p, uint32_t pid, bool create)
{
	uint32_t i;
	struct proc *np;

	if (tc_hmap_get(&p->proc_idx, pid, &i))
		return &p->procs[i];
	if (!create)
		return NULL;
	if (tc_profile_grow(p, (void **)&p->procs, &p->procs_cap, p->nprocs + 1,
			    sizeof(*p->procs), 16))
		return NULL;
	np = p->procs;
	memset(&np[p->nprocs], 0, sizeof(*np));
	np[p->nprocs].pid = pid;
	np[p->nprocs].comm = NONE;
	np[p->nprocs].cgroup = NONE;
	if (tc_hmap_put(&p->proc_idx, pid, (uint32_t)p->nprocs))
		return NULL;
	return &p->procs[p->nprocs++];
}

/* The binary of this name and build-id, added when it is new: found through the index
 * by name, so that 70,000 mappings of as many files do not compare every pair. */
static int find_dso(struct tacho_profile *p, const char *name, const uint8_t *bid, unsigned bidlen,
		    uint32_t *out)
{
	uint32_t nid, i;
	struct dso *nd;
	size_t pos = 0;
	int err = tc_strpool_intern(&p->pool, name, &nid);

	if (err)
		return err;
	while (tc_hmap_next(&p->dso_idx, nid, &pos, &i)) {
		p->compares++;
		if (p->dsos[i].bidlen == bidlen && !memcmp(p->dsos[i].bid, bid, bidlen)) {
			*out = i;
			return 0;
		}
	}
	if (tc_profile_grow(p, (void **)&p->dsos, &p->dsos_cap, p->ndsos + 1, sizeof(*p->dsos),
			    16))
		return -ENOMEM;
	nd = p->dsos;
	memset(&nd[p->ndsos], 0, sizeof(*nd));
	nd[p->ndsos].name = nid;
	nd[p->ndsos].path = NONE;
	nd[p->ndsos].bidlen = (uint8_t)bidlen;
	memcpy(nd[p->ndsos].bid, bid, bidlen);
	if (tc_hmap_add(&p->dso_idx, nid, (uint32_t)p->ndsos))
		return -ENOMEM;
	*out = (uint32_t)p->ndsos++;
	return 0;
}

static uint64_t map_key(uint32_t pid, const struct map *m)
{
	return tc_hash_u64(pid ^ ((uint64_t)m->dso << 32)) ^ tc_hash_u64(m->start) ^
	       tc_hash_u64(m->end + 0x9e3779b97f4a7c15ull) ^ tc_hash_u64(~m->pgoff);
}

static int add_map(struct tacho_profile *p, const struct tc_rec *r)
{
	struct proc *pr = tc_profile_proc(p, r->u.mmap.pid, true);
	struct map m;
	uint64_t key;
	uint32_t i;
	size_t pos = 0;
	int err;

	if (!pr)
		return -ENOMEM;
	m = (struct map){ r->u.mmap.start, r->u.mmap.start + r->u.mmap.len, r->u.mmap.pgoff,
			  r->u.mmap.time, 0 };
	err = find_dso(p, r->u.mmap.filename, r->u.mmap.build_id, r->u.mmap.build_id_size, &m.dso);
	if (err)
		return err;
	/* the same mapping twice (synthesized and reported) is kept once */
	key = map_key(pr->pid, &m);
	while (tc_hmap_next(&p->map_idx, key, &pos, &i)) {
		const struct map *o = &pr->maps[i];
		p->compares++;
		if (i < pr->nmaps && o->start == m.start && o->end == m.end && o->pgoff == m.pgoff &&
		    o->dso == m.dso)
			return 0;
	}
	if (tc_profile_grow(p, (void **)&pr->maps, &pr->cap, pr->nmaps + 1, sizeof(*pr->maps), 16))
		return -ENOMEM;
	if (tc_hmap_add(&p->map_idx, key, (uint32_t)pr->nmaps))
		return -ENOMEM;
	pr->maps[pr->nmaps++] = m;
	return 0;
}

static int start_cmp(const void *a, const void *b, void *arg)
{
	const struct proc *pr = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct map *x = &pr->maps[i], *y = &pr->maps[j];

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Every process's mappings by start address, for find_map (report-resolve.c). */
static int index_maps(struct tacho_profile *p)
{
	for (size_t k = 0; k < p->nprocs; k++) {
		struct proc *pr = &p->procs[k];
		uint64_t end = 0;

		if (!pr->nmaps)
			continue;
		pr->by_start = malloc(pr->nmaps * sizeof(*pr->by_start));
		pr->max_end = malloc(pr->nmaps * sizeof(*pr->max_end));
		if (!pr->by_start || !pr->max_end)
			return -ENOMEM;
		for (size_t i = 0; i < pr->nmaps; i++)
			pr->by_start[i] = (uint32_t)i;
		qsort_r(pr->by_start, pr->nmaps, sizeof(*pr->by_start), start_cmp, pr);
		for (size_t i = 0; i < pr->nmaps; i++) {
			if (pr->maps[pr->by_start[i]].end > end)
				end = pr->maps[pr->by_start[i]].end;
			pr->max_end[i] = end;
		}
	}
	return 0;
}
/* A tracepoint's format: a format libtraceevent cannot read leaves its payloads
 * undecoded (the views say so), and the rest of the report stands. */
static int load_tpformat(struct tacho_profile *p, const struct tc_rec *r)
{
	int err;

	if (!p->payload && tc_payload_new(&p->payload))
		return -ENOMEM;
	err = tc_payload_add(p->payload, r->u.tpformat.event, r->u.tpformat.text,
			     r->u.tpformat.len);
	return err == -ENOMEM ? err : 0;
}

/* A payload belongs to the sample right before it, of the same event. */
static int load_raw(struct tacho_profile *p, const struct tc_rec *r, bool after_sample)
{
	if (!after_sample || !p->nsmps || tc_smp_event(p, &p->smps[p->nsmps - 1]) != r->u.raw.event)
		return -TACHO_ECORRUPT;
	if (tc_profile_grow(p, (void **)&p->raws, &p->raws_cap, p->nraws + 1, sizeof(*p->raws),
			    64))
		return -ENOMEM;
	p->raws[p->nraws].smp = p->nsmps - 1;
	p->raws[p->nraws].data = r->u.raw.data;
	p->raws[p->nraws].size = (uint32_t)r->u.raw.size;
	p->nraws++;
	return 0;
}

int tc_profile_raw(const struct tacho_profile *p, const struct smp *s,
		   const unsigned char **data, uint32_t *size)
{
	size_t i = (size_t)(s - p->smps), lo = 0, hi = p->nraws;

	while (lo < hi) {   /* the payloads are in the samples' order */
		size_t mid = lo + (hi - lo) / 2;
		if (p->raws[mid].smp < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->nraws || p->raws[lo].smp != i)
		return -ENOENT;
	*data = p->raws[lo].data;
	*size = p->raws[lo].size;
	return 0;
}

/* The next record of tacho's file, or of perf's perf.data read as tacho's (pd->data
 * set): read_records reads both. */
static int next_record(struct tc_record_reader *rd, struct tc_perfdata_reader *pd,
		       struct tc_rec *r, const char *path, struct tacho_diag *diag)
{
	int ret;

	if (!pd->data)
		return tc_record_reader_next(rd, r, path, diag);
	ret = tc_perfdata_reader_next(pd, r, path, diag);
	rd->truncated = pd->truncated;
	rd->finished = pd->finished;
	rd->good_end = pd->good_end;
	return ret;
}

static int read_records(struct tacho_profile *p, struct tc_record_reader *prd,
			struct tc_perfdata_reader *pd, const char *path, struct tacho_diag *diag);

static int load_records(struct tacho_profile *p, const char *path, struct tacho_diag *diag)
{
	struct tc_record_reader rd = { 0 };
	struct tc_perfdata_reader pd = { 0 };
	int ret;

	if (!tc_perfdata_is(p->data, p->len))
		ret = tc_record_reader_init(&rd, p->data, p->len, path, diag);
	else
		ret = tc_perfdata_reader_init(&pd, p->data, p->len, path, diag);
	if (!ret)
		ret = read_records(p, &rd, &pd, path, diag);
	/* what the reader built (chains from a tree, unpacked stacks) is not in the
	 * file's bytes: the profile keeps it as long as it keeps the samples */
	p->rec_mem = tc_record_reader_take_mem(&rd);
	tc_record_reader_exit(&rd);
	/* the words of a perf.data live in its reader: the pool keeps them */
	if (!ret && pd.data && p->command && !(p->command = tc_strpool_add(&p->pool, p->command)))
		ret = -ENOMEM;
	if (!ret && pd.data && p->boot_id && !(p->boot_id = tc_strpool_add(&p->pool, p->boot_id)))
		ret = -ENOMEM;
	if (pd.data)
		tc_perfdata_reader_exit(&pd);
	return ret;
}

/* What the loaders of the records share while a file is read. */
struct load {
	struct tacho_profile *p;
	const char *path;
	struct tacho_diag *diag;
	size_t cap;                    /* samples p->smps (and p->addrs) has room for */
	bool after_sample;             /* the record before this one was a sample */
};

/* The loaders, one per record type the report keeps: each adds r to the profile and
 * returns 0, -ENOMEM, or -TACHO_ECORRUPT with *diag. */
typedef int (*rec_loader)(struct load *l, const struct tc_rec *r);

static int load_meta(struct load *l, const struct tc_rec *r)
{
	struct tacho_profile *p = l->p;
	size_t pos = 0;
	const char *k, *v;

	while (tc_rec_meta_next(r, &pos, &k, &v)) {
		if (!strcmp(k, "command"))
			p->command = v;
		else if (!strcmp(k, "boot_id"))
			p->boot_id = v;
		else if (!strcmp(k, "kptr_restrict"))
			p->kptr = v;
	}
	return 0;
}

static int load_event(struct load *l, const struct tc_rec *r)
{
	struct tacho_profile *p = l->p;
	struct ev *ne;

	if (r->u.event.index != p->nev)
		return tc_diag_set(l->diag, l->path, 0, 0, -TACHO_ECORRUPT,
				   "corrupt record at byte %" PRIu64 ": event %u out of order",
				   r->offset, r->u.event.index);
	if (tc_profile_grow(p, (void **)&p->evs, &p->evs_cap, p->nev + 1, sizeof(*p->evs), 4))
		return -ENOMEM;
	ne = p->evs;
	ne[p->nev].events = 0;
	ne[p->nev].flags = r->u.event.flags;
	ne[p->nev].period = r->u.event.period;
	if (tc_strpool_intern(&p->pool, r->u.event.name, &ne[p->nev].name))
		return -ENOMEM;
	p->nev++;
	return 0;
}

static int load_tpformat_rec(struct load *l, const struct tc_rec *r)
{
	return load_tpformat(l->p, r);
}

static int load_raw_rec(struct load *l, const struct tc_rec *r)
{
	int e = load_raw(l->p, r, l->after_sample);

	if (e == -TACHO_ECORRUPT)
		return tc_diag_set(l->diag, l->path, 0, 0, e, "corrupt record at byte %" PRIu64
				   ": a payload that follows no sample of its event", r->offset);
	return e;
}

static int load_period(struct load *l, const struct tc_rec *r)
{
	if (r->u.period.event < l->p->nev)
		l->p->evs[r->u.period.event].period = r->u.period.period;
	return 0;
}

static int load_mmap(struct load *l, const struct tc_rec *r)
{
	return add_map(l->p, r) ? -ENOMEM : 0;
}

static int load_comm(struct load *l, const struct tc_rec *r)
{
	struct tacho_profile *p = l->p;
	struct proc *pr = tc_profile_proc(p, r->u.comm.pid, true);

	if (!pr)
		return -ENOMEM;
	/* the process's name is its main thread's, the latest by time: a file need not
	 * keep the records in time order (perf's pipe mode writes each CPU's buffer in
	 * turn: the exec's COMM on one CPU can come before the shell's own on another) */
	if (r->u.comm.pid == r->u.comm.tid
		    ? pr->comm == NONE || !pr->comm_time || r->u.comm.time >= pr->comm_time
		    : pr->comm == NONE) {
		if (tc_strpool_intern(&p->pool, r->u.comm.comm, &pr->comm))
			return -ENOMEM;
		/* a thread's name stands in until the main thread's comes */
		pr->comm_time = r->u.comm.pid == r->u.comm.tid ? r->u.comm.time : 0;
	}
	return 0;
}

/* The cgroup a process was in: the latest record by time (a process moved while
 * recorded is labelled where it ended). */
static int load_cgroup(struct load *l, const struct tc_rec *r)
{
	struct tacho_profile *p = l->p;
	struct proc *pr = tc_profile_proc(p, r->u.cgroup.pid, true);

	if (!pr)
		return -ENOMEM;
	if (pr->cgroup == NONE || r->u.cgroup.time >= pr->cgroup_time) {
		if (tc_strpool_intern(&p->pool, r->u.cgroup.path, &pr->cgroup))
			return -ENOMEM;
		pr->cgroup_time = r->u.cgroup.time;
	}
	return 0;
}

static int load_task(struct load *l, const struct tc_rec *r)
{
	struct tacho_profile *p = l->p;
	struct proc *pr, *pp;

	if (r->u.task.kind != TC_TASK_FORK || r->u.task.pid == r->u.task.ppid)
		return 0;
	pr = tc_profile_proc(p, r->u.task.pid, true);
	if (!pr)
		return -ENOMEM;
	pr->parent = r->u.task.ppid;
	pr->fork_time = r->u.task.time;
	pp = tc_profile_proc(p, r->u.task.ppid, true);
	if (!pp)
		return -ENOMEM;
	pr = tc_profile_proc(p, r->u.task.pid, false);   /* realloc may have moved it */
	if (pr && pr->comm == NONE)
		pr->comm = pp->comm;
	return 0;
}

/* Room for one more sample (and its data address, once a sample had one). */
static int sample_room(struct load *l, uint64_t addr)
{
	struct tacho_profile *p = l->p;

	if (p->nsmps == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 4096;
		struct smp *ns = realloc(p->smps, nc * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		p->smps = ns;
		if (p->addrs) {
			uint64_t *na = realloc(p->addrs, nc * sizeof(*na));
			if (!na)
				return -ENOMEM;
			p->addrs = na;
		}
		l->cap = nc;
	}
	if (addr && !p->addrs) {
		/* the first sample with a data address: the others had none */
		p->addrs = calloc(l->cap, sizeof(*p->addrs));
		if (!p->addrs)
			return -ENOMEM;
	}
	return 0;
}

static int load_sample(struct load *l, const struct tc_rec *r)
{
	struct tacho_profile *p = l->p;
	struct smp *s;
	int err;

	if (sample_room(l, r->u.sample.addr))
		return -ENOMEM;
	if (p->addrs)
		p->addrs[p->nsmps] = r->u.sample.addr;
	s = &p->smps[p->nsmps];
	/* no machine has 65535 CPUs: the number stands for none */
	err = smp_ctx(p, &(struct smp_ctx){ .pid = r->u.sample.pid,
					    .tid = r->u.sample.tid,
					    .cpu = r->u.sample.cpu < SMP_CPU_NONE ?
						   (uint16_t)r->u.sample.cpu : SMP_CPU_NONE,
					    .event = r->u.sample.event }, &s->ctx);
	if (err)
		return err;
	s->time = r->u.sample.time;
	s->ip = r->u.sample.ip;
	s->misc = r->u.sample.misc;
	s->nr = 0;
	if (r->u.sample.period < SMP_PERIOD_BIG) {
		s->period32 = (uint32_t)r->u.sample.period;
	} else {
		if (tc_profile_grow(p, (void **)&p->bigp, &p->bigp_cap, p->nbigp + 1,
				    sizeof(*p->bigp), 16))
			return -ENOMEM;
		p->bigp[p->nbigp++] = (struct smp_bigp){ p->nsmps, r->u.sample.period };
		s->period32 = SMP_PERIOD_BIG;
	}
	if (r->u.sample.nr && tc_smp_set_chain(p, s, r->u.sample.chain, r->u.sample.nr))
		return -ENOMEM;
	p->nsmps++;
	return 0;
}

/* TC_REC_USTACK and TC_REC_BRANCH: the stack or branches of the sample just before,
 * kept for unwind.c */
static int load_xtra(struct load *l, const struct tc_rec *r)
{
	struct tacho_profile *p = l->p;

	if (!p->nsmps)
		return 0;
	if (tc_profile_grow(p, (void **)&p->xtras, &p->xtras_cap, p->nxtras + 1,
			    sizeof(*p->xtras), 256))
		return -ENOMEM;
	p->xtras[p->nxtras++] = (struct xtra){ .smp = p->nsmps - 1, .type = r->type, .r = *r };
	return 0;
}

static int load_lost(struct load *l, const struct tc_rec *r)
{
	/* no kernel loses 2^64 samples: a sum that wraps is a damaged file */
	if (__builtin_add_overflow(l->p->lost, r->u.lost.lost, &l->p->lost))
		return tc_diag_set(l->diag, l->path, 0, 0, -TACHO_ECORRUPT,
				   "corrupt record at byte %" PRIu64 ": the lost samples add up "
				   "to more than 2^64", r->offset);
	/* by CPU (a CPU number past 4096 is no ring's: a damaged field, counted as
	 * unknown); the sum cannot wrap where the total did not */
	uint32_t cpu = r->u.lost.cpu;
	if (cpu == TC_LOST_NO_CPU || cpu >= 4096) {
		l->p->lost_nocpu += r->u.lost.lost;
	} else {
		if (cpu >= l->p->nlost_cpu) {
			uint64_t *v = realloc(l->p->lost_cpu, (cpu + 1) * sizeof(*v));
			if (!v)
				return -ENOMEM;
			memset(v + l->p->nlost_cpu, 0, (cpu + 1 - l->p->nlost_cpu) * sizeof(*v));
			l->p->lost_cpu = v;
			l->p->nlost_cpu = cpu + 1;
		}
		l->p->lost_cpu[cpu] += r->u.lost.lost;
	}
	return 0;
}

/* "cpu0 12, cpu3 46, 5 on no known CPU" into p->lost_where, when any were lost. */
static int lost_where(struct tacho_profile *p)
{
	struct tc_sb sb = TC_SB_INIT;
	char g[32];
	const char *sep = "";

	if (!p->lost)
		return 0;
	tc_sb_init(&sb);
	for (size_t c = 0; c < p->nlost_cpu; c++) {
		if (!p->lost_cpu[c])
			continue;
		tc_sb_addf(&sb, "%scpu%zu %s", sep, c, tc_fmt_grouped(p->lost_cpu[c], g, sizeof(g)));
		sep = ", ";
	}
	if (p->lost_nocpu)
		tc_sb_addf(&sb, "%s%s on no known CPU", sep,
			   tc_fmt_grouped(p->lost_nocpu, g, sizeof(g)));
	if (sb.oom) {
		tc_sb_exit(&sb);
		return -ENOMEM;
	}
	p->lost_where = tc_sb_detach(&sb);
	return p->lost_where ? 0 : -ENOMEM;
}

static int load_throttle(struct load *l, const struct tc_rec *r)
{
	l->p->throttles += r->u.throttle.throttled != 0;
	return 0;
}

static int load_image(struct load *l, const struct tc_rec *r)
{
	struct tacho_profile *p = l->p;
	uint32_t d;

	if (find_dso(p, r->u.image.name, r->u.image.build_id, r->u.image.build_id_size, &d))
		return -ENOMEM;
	p->dsos[d].image = r->u.image.data;
	p->dsos[d].image_len = r->u.image.len;
	return 0;
}

static int load_finish(struct load *l, const struct tc_rec *r)
{
	l->p->exit_status = r->u.finish.status;
	return 0;
}

/* The record types a report has no use for (channels and marks: tacho trace's) have
 * none. */
static const rec_loader loaders[TC_REC_TYPE_MAX + 1] = {
	[TC_REC_META] = load_meta,
	[TC_REC_EVENT] = load_event,
	[TC_REC_TPFORMAT] = load_tpformat_rec,
	[TC_REC_RAW] = load_raw_rec,
	[TC_REC_PERIOD] = load_period,
	[TC_REC_MMAP] = load_mmap,
	[TC_REC_COMM] = load_comm,
	[TC_REC_CGROUP] = load_cgroup,
	[TC_REC_TASK] = load_task,
	[TC_REC_SAMPLE] = load_sample,
	[TC_REC_USTACK] = load_xtra,
	[TC_REC_BRANCH] = load_xtra,
	[TC_REC_LOST] = load_lost,
	[TC_REC_THROTTLE] = load_throttle,
	[TC_REC_IMAGE] = load_image,
	[TC_REC_FINISH] = load_finish,
};

/* A sample naming an event the file never declared is corrupt; so is one whose periods
 * add up past 2^64 (no run counts that many events): a sum that wrapped would give
 * percentages above 100. Sums each event's periods. */
static int sum_events(struct tacho_profile *p, const char *path, struct tacho_diag *diag)
{
	for (size_t i = 0; i < p->nsmps; i++) {
		const struct smp *s = &p->smps[i];
		uint32_t ev = tc_smp_event(p, s);
		if (ev >= p->nev) {
			if (p->nev == 0 && p->truncated)
				continue;
			return tc_diag_set(diag, path, 0, 0, -TACHO_ECORRUPT,
					   "sample %zu names event %u of %zu", i, ev, p->nev);
		}
		if (__builtin_add_overflow(p->evs[ev].events, tc_smp_period(p, s),
					   &p->evs[ev].events))
			return tc_diag_set(diag, path, 0, 0, -TACHO_ECORRUPT,
					   "sample %zu: the periods of event %u add up to more "
					   "than 2^64", i, ev);
	}
	return 0;
}

/* The vDSO image pairs with the mappings named [vdso] whatever their build-id. */
static void pair_vdso(struct tacho_profile *p)
{
	uint32_t vdso, i;
	size_t pos = 0;
	const struct dso *img = NULL;

	if (!tc_strpool_find(&p->pool, "[vdso]", &vdso))
		return;
	while (!img && tc_hmap_next(&p->dso_idx, vdso, &pos, &i))
		if (p->dsos[i].image)
			img = &p->dsos[i];
	pos = 0;
	while (img && tc_hmap_next(&p->dso_idx, vdso, &pos, &i))
		if (!p->dsos[i].image) {
			p->dsos[i].image = img->image;
			p->dsos[i].image_len = img->image_len;
		}
	/* none in the file (perf's recordings hold none): a recording of this boot's
	 * kernel (perf.data: the same kernel at the same place) ran the vDSO this process
	 * has, unless a build-id it kept says otherwise */
	if (!img)
		own_vdso_for(p, vdso);
}

static int read_records(struct tacho_profile *p, struct tc_record_reader *prd,
			struct tc_perfdata_reader *pd, const char *path, struct tacho_diag *diag)
{
	struct tc_record_reader *rd = prd;
	struct load l = { .p = p, .path = path, .diag = diag };
	struct tc_rec r;
	bool last_was_sample = false;
	int ret;

	while ((ret = next_record(rd, pd, &r, path, diag)) == 1) {
		rec_loader load = (unsigned)r.type <= TC_REC_TYPE_MAX ? loaders[r.type] : NULL;

		l.after_sample = last_was_sample;
		last_was_sample = r.type == TC_REC_SAMPLE;
		if (load && (ret = load(&l, &r)))
			return ret;
	}
	if (ret < 0)
		return ret;
	if (rd->skipped)
		tc_log(TACHO_LOG_WARN, "%s: skipped %" PRIu64 " records of a type this tacho does "
		       "not know (written by a newer tacho?): the report may miss what they held",
		       path, rd->skipped);
	p->truncated = rd->truncated;
	p->finished = rd->finished;
	p->good_end = rd->good_end;
	ret = sum_events(p, path, diag);
	if (ret)
		return ret;
	ret = lost_where(p);
	if (ret)
		return ret;
	pair_vdso(p);
	return index_maps(p);
}

static void own_vdso_for(struct tacho_profile *p, uint32_t vdso)
{
	char now[64] = "";
	const void *img;
	uint8_t bid[TC_BUILD_ID_MAX];
	size_t len, pos = 0;
	uint32_t i;
	int n;

	if (!p->boot_id || tc_read_line_file("/proc/sys/kernel/random/boot_id", now, sizeof(now)) ||
	    strcmp(p->boot_id, now) || !tc_own_vdso(&img, &len))
		return;
	n = tc_build_id_of_image(img, len, bid, sizeof(bid));
	while (tc_hmap_next(&p->dso_idx, vdso, &pos, &i)) {
		struct dso *d = &p->dsos[i];
		if (d->bidlen && (n <= 0 || d->bidlen != (unsigned)n || memcmp(d->bid, bid, d->bidlen)))
			continue;
		d->image = img;
		d->image_len = len;
	}
}

static void select_event(struct tacho_profile *p, size_t ev)
{
	p->sel = ev;
	p->sel_samples = 0;
	p->sel_events = ev < p->nev ? p->evs[ev].events : 0;
	p->sel_chained = 0;
	p->sel_pmin = p->sel_pmax = 0;
	for (size_t i = 0; i < p->nsmps; i++)
		if (tc_smp_event(p, &p->smps[i]) == ev) {
			uint64_t per = tc_smp_period(p, &p->smps[i]);
			if (!p->sel_samples++ || per < p->sel_pmin)
				p->sel_pmin = per;
			if (per > p->sel_pmax)
				p->sel_pmax = per;
			p->sel_chained += p->smps[i].nr > 0;
		}
	for (size_t i = 0; i < p->nxtras; i++) {
		const struct smp *s = &p->smps[p->xtras[i].smp];
		p->sel_chained += tc_smp_event(p, s) == ev && !s->nr;
	}
}

int tacho_profile_select_event(struct tacho_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nev; i++)
		if (!strcmp(pool_str(p, p->evs[i].name), name)) {
			select_event(p, i);
			return 0;
		}
	return -ENOENT;
}

/* Reads fd from where it is (a file just opened: its start) to its end: size bytes as
 * fstat said, fewer when the file shrank meanwhile, more when it grew, all of a pipe. */
static int read_all(int fd, size_t size, const unsigned char **out, size_t *len)
{
	/* room past the size, so that the read that finds the end needs no doubling */
	size_t alloc = size ? size + 4096 : 4096, n = 0;
	unsigned char *buf = malloc(alloc), *nb;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == alloc) {
			nb = realloc(buf, alloc * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			alloc *= 2;
		}
		r = read(fd, buf + n, alloc - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

/* The test seam of report-int.h: NULL but in tests. */
void (*tc_profile_load_copy_hook)(void *arg);
void *tc_profile_load_copy_hook_arg;

/* How much of a regular file moves in one sendfile: large enough that the system call
 * costs nothing against the copy, small enough that the test seam falls mid-file. */
#define COPY_CHUNK ((size_t)1 << 20)

/* A copy of the regular file fd in a sealed memfd, mapped read-only: the kernel moves
 * the page cache's bytes into the memfd's pages (sendfile), which are neither zeroed
 * first (a full-page write does not clear the page) nor copied again into this
 * process; the mapping then shares them. The memfd is this process's own and sealed
 * against shrinking, growing and writing before it is mapped, so that the mapping never
 * faults (no SIGBUS: nothing can cut it short) and the bytes checked by their CRC are
 * the bytes later used. A file cut short while it is copied is copied up to where it
 * ends (sendfile returns 0 there). Returns -ENOSYS (or the error of memfd_create,
 * sendfile, F_ADD_SEALS or mmap) when the kernel cannot: the caller then reads. */
static int map_copy(int fd, const unsigned char **out, size_t *len)
{
	int mfd = memfd_create("tacho-report", MFD_CLOEXEC | MFD_ALLOW_SEALING), err = 0;
	size_t n = 0;
	void *m;

	if (mfd < 0)
		return -errno;
	for (;;) {
		ssize_t r = sendfile(mfd, fd, NULL, COPY_CHUNK);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		if (n == 0 && tc_profile_load_copy_hook)
			tc_profile_load_copy_hook(tc_profile_load_copy_hook_arg);
		n += (size_t)r;
	}
	if (!err && n == 0)
		err = -ENODATA;   /* nothing to map: the caller's read gives the empty buffer */
	if (!err && fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
			  F_SEAL_SEAL) < 0)
		err = -errno;
	if (!err) {
		m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, mfd, 0);
		if (m == MAP_FAILED)
			err = -errno;
	}
	close(mfd);
	if (err)
		return err;
	*out = m;
	*len = n;
	return 0;
}

int tacho_profile_load(const char *path, struct tacho_profile **out, struct tacho_diag *diag)
{
	struct tacho_profile *p;
	struct stat st;
	int fd, err;

	*out = NULL;
	if (tc_diag_check(diag))
		return -EINVAL;
	/* A recording may come from someone else: only a regular file is read (a FIFO
	 * would hang the open, a device would be read); "-" is standard input, which the
	 * caller chose (perf record -o - | tacho report -i -) */
	if (!strcmp(path, "-")) {
		fd = dup(STDIN_FILENO);
		if (fd < 0)
			return tc_diag_set(diag, path, 0, 0, -errno, "cannot read standard input: %s",
					   tacho_strerror(-errno));
		st.st_size = 0;
	} else {
		fd = tc_open_regular(path, &st);
	}
	if (fd == -EINVAL)
		return tc_diag_set(diag, path, 0, 0, -EINVAL, "not a regular file (a FIFO or a "
				   "device): refused");
	if (fd < 0)
		return tc_diag_set(diag, path, 0, 0, fd, "cannot open: %s", tacho_strerror(fd));
	p = calloc(1, sizeof(*p));
	if (!p) {
		close(fd);
		return -ENOMEM;
	}
	p->exit_status = -1;
	/* Not the file mapped: a mapping of a file that shrinks while it is reported (a
	 * recording cut short, report -o over its own input, another program) faults with
	 * SIGBUS past the new end, and truncation unmaps even a private mapping's copied
	 * pages. What was weighed (docs/lib-sampling.md, "Reading the file"): a lease does not stop
	 * the owner truncating and breaks by signal; checking size and mtime around the
	 * load is racy; MAP_POPULATE or mlock copy the pages but truncation still takes
	 * them; catching SIGBUS needs a handler, which a library must not install. So the
	 * bytes are copied, in the cheapest safe way: a regular file into a sealed memfd
	 * (map_copy, 4x less CPU than read(2) into fresh heap, which the kernel zeroes
	 * before it copies), standard input or a kernel without memfd by read(2). Either
	 * way a file cut short while it is read is read up to where it ends. */
	err = -ENOSYS;
	if (strcmp(path, "-"))
		err = map_copy(fd, &p->data, &p->len);
	if (!err)
		p->data_mapped = true;
	else if (lseek(fd, 0, SEEK_SET) == 0 || !strcmp(path, "-"))
		err = read_all(fd, (size_t)st.st_size, &p->data, &p->len);
	else
		err = -errno;
	close(fd);
	if (err) {
		free(p);
		return tc_diag_set(diag, path, 0, 0, err, "cannot read: %s", tacho_strerror(err));
	}
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
	free(p->lost_cpu);
	free(p->lost_where);
	for (size_t i = 0; i < p->ndsos; i++)
		tc_symdso_free(p->dsos[i].sd);
	free(p->dsos);
	tc_hmap_exit(&p->dso_idx);
	for (size_t i = 0; i < p->nprocs; i++) {
		free(p->procs[i].maps);
		free(p->procs[i].by_start);
		free(p->procs[i].max_end);
	}
	free(p->procs);
	tc_hmap_exit(&p->proc_idx);
	tc_hmap_exit(&p->map_idx);
	free(p->smps);
	free(p->ctxs);
	tc_hmap_exit(&p->ctx_idx);
	free(p->chains);
	tc_rec_mem_free(p->rec_mem);
	free(p->bigp);
	free(p->addrs);
	free(p->raws);
	tc_payload_free(p->payload);
	free(p->xtras);
	free(p->uchains);
	free(p->evs);
	free(p->locs);
	tc_hmap_exit(&p->loc_idx);
	tc_hmap_exit(&p->unk_idx);
	tc_hmap_exit(&p->dem_idx);
	tc_kallsyms_free(p->ksyms);
	tc_profile_filter_free(p->filter);
	tc_strpool_exit(&p->pool);
	if (p->data_mapped)
		munmap((void *)p->data, p->len);
	else
		free((void *)p->data);
	free(p);
}

/* The first version of struct tacho_profile_info ends at kernel_note. */
#define INFO_SZ_V1 tc_offsetofend(struct tacho_profile_info, kernel_note)

int tacho_profile_info(const struct tacho_profile *p, struct tacho_profile_info *caller)
{
	struct tacho_profile_info info, *out = &info;

	if (!p || !caller || caller->sz < INFO_SZ_V1)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->samples = p->sel_samples;
	out->all_samples = p->nsmps;
	out->nevents = (unsigned)p->nev;
	out->lost = p->lost;
	out->lost_where = p->lost_where;
	out->truncated = p->truncated;
	out->good_bytes = p->good_end;
	out->file_bytes = p->len;
	if (p->sel < p->nev) {
		out->event = pool_str(p, p->evs[p->sel].name);
		out->period = p->evs[p->sel].period;
		out->freq = p->evs[p->sel].flags & TC_EVF_FREQ;
		out->simulated = p->evs[p->sel].flags & TC_EVF_SIM;
		out->offcpu = p->evs[p->sel].flags & TC_EVF_OFFCPU;
	}
	out->events = p->sel_events;
	out->command = p->command;
	out->exit_status = p->finished ? p->exit_status : -1;
	out->kernel_note = p->kernel_note;
	out->throttles = p->throttles;
	out->chains_cut = p->chains_cut;
	out->chained = p->sel_chained;
	out->period_min = p->sel_pmin;
	out->period_max = p->sel_pmax;
	tc_sized_put_sz(caller, out, sizeof(*out));
	return 0;
}
