/* symtop.c - the hot symbols of the machine or of one process, live (perf top): one
 * sampling event on every online CPU (the process's threads, inherited, or every task),
 * its rings drained at each interval, each sample's IP made a symbol (kernel: kallsyms;
 * user: the process's executable mappings from /proc/PID/maps, then the binary's
 * symbol table through lib/symbols), and each symbol's share of the interval's samples
 * kept with its recent history. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "events/events.h"
#include "live/live-int.h"
#include "perf/engine.h"
#include "symbols/symbols.h"

#define DEFAULT_FREQ 99
#define DEFAULT_HISTORY 60
#define DEFAULT_ROWS 50
#define RING_PAGES 16
#define MAX_SYMS 200000

struct pmap {
	uint64_t lo, hi, off;
	const char *path;           /* interned */
};

struct pmaps {
	pid_t pid;
	struct pmap *m;
	size_t n;
};

struct dso {
	const char *path;           /* interned */
	struct tc_symdso *d;        /* NULL when it cannot be read */
};

struct sym {
	const char *name, *dso;     /* interned */
	const char *shown;          /* name demangled (interned), or name */
	bool kernel;
	double now, total;          /* weight (periods) in this interval, and in all */
	double *hist;               /* [H] shares */
	size_t hpos, hcount;
};

struct tacho_live_symbols {
	pid_t pid;
	unsigned H, max_rows;
	char *proc_root;
	char *event;
	uint64_t sample_type;
	struct tc_perf_list *list;
	struct tc_kallsyms *ksyms;
	struct tc_strpool pool;
	struct pmaps *procs;
	size_t nprocs;
	struct tc_hmap procidx;     /* pid -> procs */
	struct dso *dsos;
	size_t ndsos;
	struct tc_hmap dsoidx;      /* hash of the path pointer -> dsos */
	struct sym *syms;
	size_t nsyms;
	struct tc_hmap symidx;      /* hash(dso, name) -> syms */
	double interval_weight;
	uint64_t interval_samples, lost;
	bool started;
	double t0, tprev;
	int err;                    /* the first error of a drain */
};

struct tacho_live_symtab {
	char *event;
	double time, interval;
	uint64_t samples, lost;
	size_t n;
	struct tacho_live_symbol *s;
	double *hist;
	char **strs;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --- /proc/PID/maps --- */

int tc_maps_line_parse(const char *line, size_t len, uint64_t *lo, uint64_t *hi, uint64_t *off,
		       bool *exec, const char **path, size_t *path_len)
{
	const char *p = line, *end = line + len;
	uint64_t v[3] = { 0, 0, 0 };
	char seps[3] = { '-', ' ', ' ' };

	/* "lo-hi perms offset dev inode   path" (proc(5)), the numbers in hex */
	for (size_t k = 0; k < 3; k++) {
		const char *s = p;
		if (k == 2) {
			/* the permissions come before the offset */
			if (end - p < 5 || p[4] != ' ')
				return -TACHO_EPARSE;
			*exec = p[2] == 'x';
			p += 5;
			s = p;
		}
		for (; p < end && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')); p++) {
			if (v[k] >> 60)
				return -TACHO_EPARSE;
			v[k] = v[k] * 16 + (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
		}
		if (p == s || p == end || *p != seps[k])
			return -TACHO_EPARSE;
		p++;
	}
	if (v[1] < v[0])
		return -TACHO_EPARSE;
	/* dev and inode, then blanks up to the path (none for anonymous memory) */
	for (size_t k = 0; k < 2; k++) {
		while (p < end && *p != ' ')
			p++;
		if (p == end && k == 0)
			return -TACHO_EPARSE;
		while (p < end && *p == ' ')
			p++;
	}
	*lo = v[0];
	*hi = v[1];
	*off = v[2];
	*path = p;
	*path_len = (size_t)(end - p);
	return 0;
}

static void pmaps_free(struct tacho_live_symbols *s)
{
	for (size_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].m);
	free(s->procs);
	s->procs = NULL;
	s->nprocs = 0;
	tc_hmap_exit(&s->procidx);
}

/* The executable file mappings of pid (read once per interval), or NULL. */
static struct pmaps *pmaps_of(struct tacho_live_symbols *s, pid_t pid)
{
	char path[PATH_MAX], *text, *line;
	struct pmaps *pm, *np;
	size_t len;
	uint32_t i;

	if (tc_hmap_get(&s->procidx, (uint64_t)pid, &i))
		return &s->procs[i];
	np = realloc(s->procs, (s->nprocs + 1) * sizeof(*np));
	if (!np)
		return NULL;
	s->procs = np;
	pm = &s->procs[s->nprocs];
	memset(pm, 0, sizeof(*pm));
	pm->pid = pid;
	if (tc_hmap_put(&s->procidx, (uint64_t)pid, (uint32_t)s->nprocs))
		return NULL;
	s->nprocs++;
	snprintf(path, sizeof(path), "%s/%d/maps", s->proc_root, (int)pid);
	if (tc_read_file(path, &text, &len, 0))
		return pm;    /* gone: its samples are "[unknown]" */
	for (line = text; line < text + len;) {
		char *eol = memchr(line, '\n', (size_t)(text + len - line));
		uint64_t lo, hi, off;
		const char *fp;
		size_t fl;
		bool exec;

		if (!eol)
			eol = text + len;
		if (!tc_maps_line_parse(line, (size_t)(eol - line), &lo, &hi, &off, &exec, &fp, &fl) &&
		    exec && fl) {
			struct pmap *m = realloc(pm->m, (pm->n + 1) * sizeof(*m));
			char *name = strndup(fp, fl);
			const char *in = name ? tc_strpool_add(&s->pool, name) : NULL;

			free(name);
			if (m)
				pm->m = m;
			if (m && in)
				pm->m[pm->n++] = (struct pmap){ lo, hi, off, in };
		}
		line = eol + 1;
	}
	free(text);
	return pm;
}

static struct tc_symdso *dso_of(struct tacho_live_symbols *s, const char *path)
{
	uint64_t key = tc_hash_u64((uint64_t)(uintptr_t)path);
	struct dso *nd;
	uint32_t i;

	if (tc_hmap_get(&s->dsoidx, key, &i))
		return s->dsos[i].d;
	nd = realloc(s->dsos, (s->ndsos + 1) * sizeof(*nd));
	if (!nd)
		return NULL;
	s->dsos = nd;
	nd[s->ndsos] = (struct dso){ path, NULL };
	/* "[vdso]", "[stack]": no file to read */
	if (path[0] == '/' && tc_symdso_open(path, NULL, 0, &nd[s->ndsos].d))
		nd[s->ndsos].d = NULL;
	if (tc_hmap_put(&s->dsoidx, key, (uint32_t)s->ndsos)) {
		tc_symdso_free(nd[s->ndsos].d);
		return NULL;
	}
	return nd[s->ndsos++].d;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

static struct sym *sym_get(struct tacho_live_symbols *s, const char *name, const char *dso,
			   bool kernel)
{
	uint64_t key = tc_hash_u64((uint64_t)(uintptr_t)name ^ tc_hash_u64((uint64_t)(uintptr_t)dso));
	size_t pos = 0;
	struct sym *ns;
	uint32_t i;

	while (tc_hmap_next(&s->symidx, key, &pos, &i))
		if (s->syms[i].name == name && s->syms[i].dso == dso)
			return &s->syms[i];
	if (s->nsyms >= MAX_SYMS)
		return NULL;
	ns = realloc(s->syms, (s->nsyms + 1) * sizeof(*ns));
	if (!ns)
		return NULL;
	s->syms = ns;
	memset(&ns[s->nsyms], 0, sizeof(*ns));
	ns[s->nsyms].name = name;
	ns[s->nsyms].shown = name;
	if (name[0] == '_' && name[1] == 'Z') {
		char *d = tc_demangle(name);
		const char *in = d ? tc_strpool_add(&s->pool, d) : NULL;
		free(d);
		if (in)
			ns[s->nsyms].shown = in;
	}
	ns[s->nsyms].dso = dso;
	ns[s->nsyms].kernel = kernel;
	ns[s->nsyms].hist = malloc(s->H * sizeof(double));
	if (!ns[s->nsyms].hist || tc_hmap_add(&s->symidx, key, (uint32_t)s->nsyms)) {
		free(ns[s->nsyms].hist);
		return NULL;
	}
	return &ns[s->nsyms++];
}

/* The symbol and binary of one sample. */
static void resolve(struct tacho_live_symbols *s, const struct tc_perf_sample *smp,
		    const char **name, const char **dso, bool *kernel)
{
	unsigned mode = smp->misc & PERF_RECORD_MISC_CPUMODE_MASK;

	*name = "[unknown]";
	*dso = "[unknown]";
	*kernel = mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL;
	if (mode == PERF_RECORD_MISC_KERNEL) {
		const char *n = s->ksyms ? tc_kallsyms_lookup(s->ksyms, smp->ip, NULL) : NULL;
		*dso = "[kernel]";
		if (n)
			*name = n;
		return;
	}
	if (mode != PERF_RECORD_MISC_USER)
		return;
	{
		struct pmaps *pm = pmaps_of(s, (pid_t)smp->pid);
		for (size_t i = 0; pm && i < pm->n; i++) {
			const struct pmap *m = &pm->m[i];
			struct tc_symdso *d;
			struct tc_symloc loc;
			uint64_t addr;

			if (smp->ip < m->lo || smp->ip >= m->hi)
				continue;
			*dso = m->path;
			d = dso_of(s, m->path);
			if (d && !tc_symdso_file_to_addr(d, smp->ip - m->lo + m->off, &addr) &&
			    !tc_symdso_symbol(d, addr, &loc) && loc.symbol)
				*name = loc.symbol;
			return;
		}
	}
}

static int on_record(void *arg, const struct perf_event_header *rec)
{
	struct tacho_live_symbols *s = arg;
	struct tc_perf_sample smp;
	const char *name, *dso;
	struct sym *sy;
	bool kernel;

	if (rec->type == PERF_RECORD_LOST) {
		if (rec->size >= sizeof(*rec) + 16) {
			uint64_t n;
			memcpy(&n, (const char *)rec + sizeof(*rec) + 8, sizeof(n));
			s->lost += n;
		}
		return 0;
	}
	if (rec->type != PERF_RECORD_SAMPLE ||
	    tc_perf_parse_sample(s->sample_type, rec, &smp))
		return 0;
	resolve(s, &smp, &name, &dso, &kernel);
	/* names from binaries and kallsyms live as long as their tables: the pool keeps
	 * one copy of each, and a symbol is its name's and binary's pointers */
	name = tc_strpool_add(&s->pool, name);
	dso = tc_strpool_add(&s->pool, dso[0] == '/' ? base_name(dso) : dso);
	sy = name && dso ? sym_get(s, name, dso, kernel) : NULL;
	if (!sy) {
		if (!s->err)
			s->err = -ENOMEM;
		return 0;
	}
	sy->now += smp.period ? (double)smp.period : 1;
	s->interval_weight += smp.period ? (double)smp.period : 1;
	s->interval_samples++;
	return 0;
}

void tacho_live_symbols_free(struct tacho_live_symbols *s)
{
	if (!s)
		return;
	tc_perf_list_free(s->list);
	tc_kallsyms_free(s->ksyms);
	pmaps_free(s);
	for (size_t i = 0; i < s->ndsos; i++)
		tc_symdso_free(s->dsos[i].d);
	free(s->dsos);
	tc_hmap_exit(&s->dsoidx);
	for (size_t i = 0; i < s->nsyms; i++)
		free(s->syms[i].hist);
	free(s->syms);
	tc_hmap_exit(&s->symidx);
	tc_strpool_exit(&s->pool);
	free(s->proc_root);
	free(s->event);
	free(s);
}

#define TC_OPTS_V1_tacho_live_symbols_opts tc_offsetofend(struct tacho_live_symbols_opts, proc_root)

int tacho_live_symbols_new(const struct tacho_live_symbols_opts *o,
			   struct tacho_live_symbols **out, struct tacho_diag *diag)
{
	struct tacho_live_symbols *s;
	struct perf_event_attr a;
	struct tc_perf_grid g;
	pid_t *tids = NULL;
	size_t ntids = 0, bad = 0, nopen = 0;
	int *cpus = NULL;
	size_t ncpus = 0;
	bool sharing = false;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(o, tacho_live_symbols_opts, diag);
	if (err == -TACHO_EVERSION)
		return err;
	if (err || !o || !out || !tacho_evlist_count(o->event) || o->pid < 0 ||
	    o->history > 100000)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "bad options for the symbol sampler");
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pid = o->pid;
	s->H = o->history ? o->history : DEFAULT_HISTORY;
	s->max_rows = o->max_rows ? o->max_rows : DEFAULT_ROWS;
	s->proc_root = tc_strdup(o->proc_root ? o->proc_root : "/proc");
	s->event = tc_strdup(tacho_evlist_name(o->event, 0));
	err = s->proc_root && s->event ? tacho_evlist_attr(o->event, 0, &a) : -ENOMEM;
	if (err)
		goto out_free;
	a.sample_type = s->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	a.freq = 1;
	a.sample_freq = o->freq ? o->freq : DEFAULT_FREQ;
	a.read_format = 0;
	/* the idle loop is no one's work: a clock leaves it out (other PMUs may refuse
	 * the flag) */
	if (!o->pid && a.type == PERF_TYPE_SOFTWARE &&
	    (a.config == PERF_COUNT_SW_CPU_CLOCK || a.config == PERF_COUNT_SW_TASK_CLOCK))
		a.exclude_idle = 1;
	if (o->pid) {
		err = tc_proc_threads(o->pid, &tids, &ntids);
		if (err) {
			err = tc_diag_set(diag, "", 0, 0, -ESRCH, "no process %d", (int)o->pid);
			goto out_free;
		}
	}
	err = tc_online_cpus(&cpus, &ncpus);
	if (!err)
		err = tc_perf_grid_init(&g, cpus, ncpus, tids, ntids);
	free(cpus);
	free(tids);
	if (!err)
		err = tc_perf_list_new(&s->list);
	if (!err) {
		int k = tc_perf_list_add(s->list, &a, s->event, TACHO_GROUP_NONE);
		err = k < 0 ? k : tc_perf_list_open(s->list, &g, o->pid ? TC_PERF_INHERIT |
						    TC_PERF_SKIP_GONE : 0);
		tc_perf_grid_exit(&g);
	}
	if (err)
		goto out_free;
	nopen = tc_perf_ev_nopen(tc_perf_list_event(s->list, 0));
	if (!nopen) {
		struct tc_perf_env env;
		struct perf_event_attr sent;
		unsigned flags;
		char why[512];
		enum tacho_hint hint;

		err = tc_perf_ev_error(tc_perf_list_event(s->list, 0), &flags, &sent);
		if (!err)
			err = -ESRCH;
		tc_perf_env_probe(&env);
		tc_perf_explain(&env, err, &sent, NULL, flags, why, sizeof(why), &hint);
		err = tc_diag_set(diag, "", 0, 0, err, "cannot sample %s: %s", s->event, why);
		goto out_free;
	}
	err = tc_perf_list_mmap(s->list, RING_PAGES, &bad, &sharing);
	if (err) {
		err = tc_diag_set(diag, "", 0, 0, err, "cannot map the sampling rings: %s",
				  tacho_strerror(err));
		goto out_free;
	}
	/* no kernel symbols (kptr_restrict): kernel samples stay "[unknown]" */
	if (tc_kallsyms_load(NULL, &s->ksyms))
		s->ksyms = NULL;
	*out = s;
	return 0;

out_free:
	tacho_live_symbols_free(s);
	if (err == -ENOMEM)
		tc_diag_set(diag, "", 0, 0, err, "out of memory");
	return err;
}

const char *tacho_live_symbols_event(const struct tacho_live_symbols *s)
{
	return s ? s->event : NULL;
}

void tacho_live_symtab_free(struct tacho_live_symtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->strs && i < 2 * t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->s);
	free(t->hist);
	free(t->event);
	free(t);
}

static const struct sym *sort_syms;

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = &sort_syms[*(const size_t *)a], *y = &sort_syms[*(const size_t *)b];

	if (x->now != y->now)
		return x->now > y->now ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->shown, y->shown);
}

static struct tacho_live_symtab *make_symtab(struct tacho_live_symbols *s, double now, double dt)
{
	struct tacho_live_symtab *t = calloc(1, sizeof(*t));
	size_t *idx = malloc((s->nsyms ? s->nsyms : 1) * sizeof(*idx)), n = 0;

	if (!t || !idx)
		goto out_free;
	for (size_t i = 0; i < s->nsyms; i++)
		if (s->syms[i].now > 0)
			idx[n++] = i;
	/* qsort's comparator has no argument: one sampler at a time per thread is the
	 * rule, and this table is only read during the sort */
	sort_syms = s->syms;
	qsort(idx, n, sizeof(*idx), cmp_sym);
	if (n > s->max_rows)
		n = s->max_rows;
	t->event = tc_strdup(s->event);
	t->time = now - s->t0;
	t->interval = dt;
	t->samples = s->interval_samples;
	t->lost = s->lost;
	t->n = n;
	t->s = calloc(n ? n : 1, sizeof(*t->s));
	t->hist = malloc((n * s->H + 1) * sizeof(*t->hist));
	t->strs = calloc(2 * n + 1, sizeof(*t->strs));
	if (!t->event || !t->s || !t->hist || !t->strs)
		goto out_free;
	for (size_t k = 0; k < n; k++) {
		const struct sym *y = &s->syms[idx[k]];
		struct tacho_live_symbol *o = &t->s[k];
		double *h = &t->hist[k * s->H];

		t->strs[2 * k] = tc_strdup(y->shown);
		t->strs[2 * k + 1] = tc_strdup(y->dso);
		if (!t->strs[2 * k] || !t->strs[2 * k + 1])
			goto out_free;
		o->name = t->strs[2 * k];
		o->dso = t->strs[2 * k + 1];
		o->kernel = y->kernel;
		o->weight = y->now;
		o->share = s->interval_weight > 0 ? y->now / s->interval_weight : 0;
		for (size_t j = 0; j < y->hcount; j++)
			h[j] = y->hist[(y->hpos + s->H - y->hcount + j) % s->H];
		o->history = h;
		o->nhistory = y->hcount;
	}
	free(idx);
	return t;

out_free:
	free(idx);
	tacho_live_symtab_free(t);
	return NULL;
}

int tacho_live_symbols_sample(struct tacho_live_symbols *s, struct tacho_live_symtab **out)
{
	double now, dt;
	int err;

	if (!s || !out)
		return -EINVAL;
	*out = NULL;
	now = now_s();
	if (!s->started) {
		err = tc_perf_list_enable(s->list);
		if (err)
			return err;
		s->started = true;
		s->t0 = s->tprev = now;
	}
	dt = now - s->tprev;
	for (size_t i = 0; i < s->nsyms; i++)
		s->syms[i].now = 0;
	s->interval_weight = 0;
	s->interval_samples = 0;
	s->err = 0;
	/* a process's mappings change (dlopen, exec, a pid reused): read afresh each
	 * interval */
	pmaps_free(s);
	err = tc_perf_list_drain(s->list, on_record, s);
	if (!err)
		err = s->err;
	if (err)
		return err;
	for (size_t i = 0; i < s->nsyms; i++) {
		struct sym *y = &s->syms[i];
		double share = s->interval_weight > 0 ? y->now / s->interval_weight : 0;

		y->total += y->now;
		y->hist[y->hpos] = share;
		y->hpos = (y->hpos + 1) % s->H;
		if (y->hcount < s->H)
			y->hcount++;
	}
	s->tprev = now;
	*out = make_symtab(s, now, dt);
	return *out ? 0 : -ENOMEM;
}

size_t tacho_live_symtab_count(const struct tacho_live_symtab *t)
{
	return t ? t->n : 0;
}

const struct tacho_live_symbol *tacho_live_symtab_at(const struct tacho_live_symtab *t, size_t i)
{
	return t && i < t->n ? &t->s[i] : NULL;
}

void tacho_live_symtab_info(const struct tacho_live_symtab *t, struct tacho_live_symtab_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!t)
		return;
	out->event = t->event;
	out->time = t->time;
	out->interval = t->interval;
	out->samples = t->samples;
	out->lost = t->lost;
}

int tacho_live_symtab_write(const struct tacho_live_symtab *t, FILE *out)
{
	if (!t || !out)
		return -EINVAL;
	fprintf(out, "%.2f s: symbols view, %s, %llu samples", t->time, t->event,
		(unsigned long long)t->samples);
	if (t->lost)
		fprintf(out, ", %llu lost in all", (unsigned long long)t->lost);
	fprintf(out, "\n%7s  %-24s %s\n", "SHARE", "DSO", "SYMBOL");
	for (size_t i = 0; i < t->n; i++)
		fprintf(out, "%6.2f%%  %-24s %s\n", 100 * t->s[i].share, t->s[i].dso, t->s[i].name);
	return ferror(out) ? -EIO : 0;
}
