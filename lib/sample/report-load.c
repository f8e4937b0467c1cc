/* report-load.c - loading a record file into a profile: its events, processes (forks
 * and names), mappings, binaries and samples; the profile's life, the event a report
 * is about, the summary. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sample/report-int.h"
#include "tacho/errors.h"
#include "tacho/sample.h"

struct proc *tc_profile_proc(struct tacho_profile *p, uint32_t pid, bool create)
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
	struct proc *pr = tc_profile_proc(p, r->u.mmap.pid, true);
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
	struct tc_record_reader rd;
	struct tc_rec r;
	size_t cap = 0;
	int ret;

	ret = tc_record_reader_init(&rd, p->data, p->len, path, diag);
	if (ret)
		return ret;
	while ((ret = tc_record_reader_next(&rd, &r, path, diag)) == 1) {
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
			struct proc *pr = tc_profile_proc(p, r.u.comm.pid, true);
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
				struct proc *pr = tc_profile_proc(p, r.u.task.pid, true);
				struct proc *pp;
				if (!pr)
					return -ENOMEM;
				pr->parent = r.u.task.ppid;
				pr->fork_time = r.u.task.time;
				pp = tc_profile_proc(p, r.u.task.ppid, true);
				if (!pp)
					return -ENOMEM;
				pr = tc_profile_proc(p, r.u.task.pid, false);   /* realloc may have moved it */
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
	if (tc_diag_check(diag))
		return -EINVAL;
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
	tc_sized_put_sz(caller, out, sizeof(*out));
	return 0;
}
