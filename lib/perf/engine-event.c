/* engine-event.c - the engine's event: its descriptors over a grid of CPUs x threads,
 * its group, its ids, its pages, its ioctls and its read (RDPMC where the page allows,
 * else read(2)); the one rule for a value; the grid; the probe. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf/engine-int.h"
#include "tacho/counters.h"
#include "tacho/errors.h"

/* --- the one rule --- */

enum tacho_count_status tc_count_status(uint64_t enabled, uint64_t running)
{
	if (!running)
		return TACHO_COUNT_NOT_COUNTED;
	return running >= enabled ? TACHO_COUNT_COUNTED : TACHO_COUNT_MULTIPLEXED;
}

double tc_count_scale(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (!running)
		return NAN;
	if (running >= enabled)
		return (double)raw;
	/* 128-bit product: raw * enabled overflows 64 bits after a few seconds of a
	 * cycle counter (2^32 counts times 2^32 ns) */
	return (double)((unsigned __int128)raw * enabled / running) +
	       (double)((unsigned __int128)raw * enabled % running) / (double)running;
}

void tc_perf_sum_add(struct tc_perf_sum *s, uint64_t raw, uint64_t enabled, uint64_t running)
{
	s->raw += raw;
	s->enabled += enabled;
	s->running += running;
	/* each cell scaled by its own times: a CPU that ran the event half the time and
	 * one that ran it all the time are not one event that ran three quarters */
	if (running)
		s->scaled += tc_count_scale(raw, enabled, running);
}

void tc_perf_sum_finish(const struct tc_perf_sum *s, const struct tc_perf_ev *e,
			struct tc_perf_count *out)
{
	memset(out, 0, sizeof(*out));
	out->value = NAN;
	if (!e || !e->nopen) {
		out->status = TACHO_COUNT_NOT_SUPPORTED;
		return;
	}
	out->raw = s->raw;
	out->enabled = s->enabled;
	out->running = s->running;
	out->eof = s->eof;
	if (e->silent) {
		/* its source opens but is proven not to count here: whatever the kernel's
		 * count says, it is no number, enabled or not (a task that has not run
		 * since the open reads a counted 0 otherwise, in the live views) */
		out->status = TACHO_COUNT_NOT_COUNTED;
		out->err = -TACHO_ESILENT;
		out->why = e->silent;
		return;
	}
	/* a cell that gave end-of-file counted nothing: a sum of the others would be a
	 * silent undercount */
	out->status = s->eof ? TACHO_COUNT_NOT_COUNTED : tc_count_status(s->enabled, s->running);
	if (out->status == TACHO_COUNT_COUNTED) {
		out->value = (double)s->raw;
		out->coverage = 1.0;
	} else if (out->status == TACHO_COUNT_MULTIPLEXED) {
		out->value = s->scaled;
		out->coverage = (double)s->running / (double)s->enabled;
	}
}

/* --- a caller's attr --- */

int tc_perf_attr_copy(struct perf_event_attr *out, const struct perf_event_attr *in)
{
	/* the sizes this header knows: each kernel release that grew the struct published
	 * its new size (include/uapi/linux/perf_event.h, PERF_ATTR_SIZE_VER*) */
	static const uint32_t known[] = {
		PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER1, PERF_ATTR_SIZE_VER2,
		PERF_ATTR_SIZE_VER3, PERF_ATTR_SIZE_VER4, PERF_ATTR_SIZE_VER5,
#ifdef PERF_ATTR_SIZE_VER6
		PERF_ATTR_SIZE_VER6,
#endif
#ifdef PERF_ATTR_SIZE_VER7
		PERF_ATTR_SIZE_VER7,
#endif
#ifdef PERF_ATTR_SIZE_VER8
		PERF_ATTR_SIZE_VER8,
#endif
	};
	uint32_t size;
	size_t i;

	if (!out || !in)
		return -EINVAL;
	size = in->size;
	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (known[i] == size && size <= sizeof(*out))
			break;
	if (i == ARRAY_SIZE(known))
		return -EINVAL;
	/* the fields an older caller does not have are zero, as the kernel reads them */
	memset(out, 0, sizeof(*out));
	memcpy(out, in, size);
	out->size = sizeof(*out);
	return 0;
}

/* --- the grid --- */

int tc_perf_grid_init(struct tc_perf_grid *g, const int *cpus, size_t ncpus,
		      const pid_t *threads, size_t nthreads)
{
	static const int any_cpu = -1;
	static const pid_t any_thread = -1;

	memset(g, 0, sizeof(*g));
	if (!cpus || !ncpus) {
		cpus = &any_cpu;
		ncpus = 1;
	}
	if (!threads || !nthreads) {
		threads = &any_thread;
		nthreads = 1;
	}
	for (size_t c = 0; c < ncpus; c++) {
		if (cpus[c] < -1)
			return -EINVAL;
		for (size_t t = 0; t < nthreads; t++)
			if (threads[t] < -1 || (cpus[c] == -1 && threads[t] == -1))
				return -EINVAL;
	}
	g->cpus = malloc(ncpus * sizeof(*g->cpus));
	g->threads = malloc(nthreads * sizeof(*g->threads));
	if (!g->cpus || !g->threads) {
		tc_perf_grid_exit(g);
		return -ENOMEM;
	}
	memcpy(g->cpus, cpus, ncpus * sizeof(*cpus));
	memcpy(g->threads, threads, nthreads * sizeof(*threads));
	g->ncpus = ncpus;
	g->nthreads = nthreads;
	return 0;
}

void tc_perf_grid_exit(struct tc_perf_grid *g)
{
	if (!g)
		return;
	free(g->cpus);
	free(g->threads);
	memset(g, 0, sizeof(*g));
}

/* --- the event --- */

int tc_perf_ev_new(const struct perf_event_attr *attr, const char *name, struct tc_perf_ev **out)
{
	struct tc_perf_ev *e;

	*out = NULL;
	if (!attr)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->attr = *attr;
	e->name = tc_strdup(name ? name : "");
	e->members = malloc(sizeof(*e->members));
	if (!e->name || !e->members) {
		tc_perf_ev_free(e);
		return -ENOMEM;
	}
	e->members[0] = e;
	e->nmembers = 1;
	*out = e;
	return 0;
}

void tc_perf_ev_free(struct tc_perf_ev *e)
{
	if (!e)
		return;
	tc_perf_ev_close(e);
	free(e->name);
	free(e->members);
	free(e);
}

int tc_perf_ev_set_leader(struct tc_perf_ev *e, struct tc_perf_ev *leader)
{
	struct tc_perf_ev **m;

	if (!e || !leader || e == leader || leader->leader || e->leader || e->nmembers > 1 ||
	    e->ncells || leader->ncells)
		return -EINVAL;
	m = realloc(leader->members, (leader->nmembers + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	leader->members = m;
	m[leader->nmembers++] = e;
	e->leader = leader;
	return 0;
}

const char *tc_perf_ev_name(const struct tc_perf_ev *e)
{
	return e->name;
}

const struct perf_event_attr *tc_perf_ev_attr(const struct tc_perf_ev *e)
{
	return &e->attr;
}

size_t tc_perf_ev_nopen(const struct tc_perf_ev *e)
{
	return e ? e->nopen : 0;
}

bool tc_perf_type_never_rotates(uint32_t type)
{
	char pmu[64];

	if (type == PERF_TYPE_SOFTWARE || type == PERF_TYPE_TRACEPOINT ||
	    type == PERF_TYPE_BREAKPOINT)
		return true;
	if (type <= PERF_TYPE_RAW || tc_pmu_name_of_type(type, pmu, sizeof(pmu)))
		return false;
	return !strcmp(pmu, "kprobe") || !strcmp(pmu, "uprobe");
}

bool tc_perf_ev_never_rotates(const struct tc_perf_ev *e)
{
	const struct tc_perf_ev *l;

	if (!e)
		return false;
	l = e->leader ? e->leader : e;
	for (size_t i = 0; i < l->nmembers; i++)
		if (!tc_perf_type_never_rotates(l->members[i]->attr.type))
			return false;
	return true;
}

int tc_perf_ev_error(const struct tc_perf_ev *e, unsigned *flags, struct perf_event_attr *attr)
{
	if (flags)
		*flags = e->err_flags;
	if (attr)
		*attr = e->err ? e->err_attr : e->attr;
	return e->err;
}

static const struct tc_perf_ev *leader_of(const struct tc_perf_ev *e)
{
	return e->leader ? e->leader : e;
}

int tc_perf_ev_group_fd(const struct tc_perf_ev *e, size_t c)
{
	const struct tc_perf_ev *l = leader_of(e);

	for (size_t m = 0; m < l->nmembers; m++)
		if (l->members[m]->ncells > c && l->members[m]->fds[c] >= 0)
			return l->members[m]->fds[c];
	return -1;
}

/* The descriptor e opens into on cell c: the first member before e that is open there,
 * or -1 when e leads there. */
static int group_fd_before(const struct tc_perf_ev *e, size_t c)
{
	const struct tc_perf_ev *l = leader_of(e);

	for (size_t m = 0; m < l->nmembers && l->members[m] != e; m++)
		if (l->members[m]->ncells > c && l->members[m]->fds[c] >= 0)
			return l->members[m]->fds[c];
	return -1;
}

/* The attributes of one open: the caller's, with the fields the engine owns. */
static void prepare_attr(const struct tc_perf_ev *e, unsigned flags, bool leads,
			 struct perf_event_attr *a)
{
	*a = e->attr;
	a->read_format = TC_PERF_READ_FORMAT;
	if (flags & TC_PERF_GROUP_READ)
		a->read_format |= PERF_FORMAT_GROUP;
	a->inherit = !!(flags & TC_PERF_INHERIT);
	/* The leader starts disabled and the members enabled, so that enabling the leader
	 * starts the whole group at once (perf_event_open(2), "disabled"). For a child,
	 * the kernel enables the leader at exec: not one instruction of tacho's own
	 * fork/exec path is counted. */
	a->disabled = leads;
	a->enable_on_exec = leads && (flags & TC_PERF_ENABLE_ON_EXEC);
}

static void close_cells(struct tc_perf_ev *e)
{
	long psz = sysconf(_SC_PAGESIZE);

	for (size_t c = 0; c < e->ncells; c++) {
		if (e->pages && e->pages[c])
			tc_perf_munmap(e->pages[c], (size_t)psz);
		if (e->fds[c] >= 0)
			close(e->fds[c]);
	}
	free(e->fds);
	free(e->ids);
	free(e->pages);
	free(e->buf);
	e->fds = NULL;
	e->ids = NULL;
	e->pages = NULL;
	e->buf = NULL;
	e->ncells = 0;
	e->nopen = 0;
}

void tc_perf_ev_close(struct tc_perf_ev *e)
{
	if (!e)
		return;
	close_cells(e);
	tc_perf_grid_exit(&e->grid);
	e->err = 0;
	e->err_flags = 0;
	e->silent = NULL;
}

int tc_perf_ev_open_begin(struct tc_perf_ev *e, const struct tc_perf_grid *g, unsigned flags)
{
	const struct tc_perf_ev *l;
	size_t n;
	int err;

	if (!e || !g || e->ncells)
		return -EINVAL;
	if (flags & TC_PERF_CGROUP) {
		/* a cgroup is counted per CPU: the kernel has no "this cgroup on any
		 * CPU", and a cgroup event is not a task's to inherit or exec */
		if (flags & (TC_PERF_INHERIT | TC_PERF_ENABLE_ON_EXEC))
			return -EINVAL;
		for (size_t c = 0; c < g->ncpus; c++)
			if (g->cpus[c] < 0)
				return -EINVAL;
		for (size_t t = 0; t < g->nthreads; t++)
			if (g->threads[t] < 0)
				return -EINVAL;
	}
	l = leader_of(e);
	if (e->leader && (l->grid.ncpus != g->ncpus || l->grid.nthreads != g->nthreads ||
			  !l->ncells))
		return -EINVAL;
	err = tc_perf_grid_init(&e->grid, g->cpus, g->ncpus, g->threads, g->nthreads);
	if (err)
		return err;
	n = g->ncpus * g->nthreads;
	e->fds = malloc(n * sizeof(*e->fds));
	e->ids = calloc(n, sizeof(*e->ids));
	/* a group read: { nr, time_enabled, time_running, { value, id }[nr] }; alone:
	 * { value, time_enabled, time_running, id } */
	e->words = 3 + 2 * l->nmembers + 1;
	e->buf = calloc(e->words, sizeof(*e->buf));
	if (!e->fds || !e->ids || !e->buf) {
		free(e->fds);
		free(e->ids);
		free(e->buf);
		e->fds = NULL;
		e->ids = NULL;
		e->buf = NULL;
		tc_perf_grid_exit(&e->grid);
		return -ENOMEM;
	}
	for (size_t c = 0; c < n; c++)
		e->fds[c] = -1;
	e->ncells = n;
	e->flags = flags;
	e->err = 0;
	e->err_flags = 0;
	/* asked before any cell opens: a proof that needs what the event would hold (a
	 * debug register) finds it free */
	e->silent = tc_source_silent(&e->attr);
	return 0;
}

int tc_perf_ev_open_cell(struct tc_perf_ev *e, size_t c)
{
	const struct tc_perf_grid *g = &e->grid;
	unsigned flags = e->flags;
	int cpu = g->cpus[c / g->nthreads];
	pid_t pid = g->threads[c % g->nthreads];
	int group_fd = group_fd_before(e, c);
	struct perf_event_attr a;
	int fd;

	prepare_attr(e, flags, group_fd < 0, &a);
	fd = tc_perf_event_open(&a, pid, cpu, group_fd,
				flags & TC_PERF_CGROUP ? PERF_FLAG_PID_CGROUP : 0);
	if (fd == -EINVAL && (flags & TC_PERF_GROUP_READ) && (flags & TC_PERF_INHERIT) &&
	    group_fd < 0) {
		/* Kernels before group reads of inherited events were allowed
		 * (Linux 5.13) refuse the pair: find out whether that is the
		 * reason, without the group format. */
		a.read_format &= ~(uint64_t)PERF_FORMAT_GROUP;
		fd = tc_perf_event_open(&a, pid, cpu, -1, 0);   /* never CGROUP: no INHERIT */
		if (fd >= 0) {
			close(fd);
			tc_perf_ev_close(e);
			return 1;
		}
		a.read_format |= PERF_FORMAT_GROUP;
	}
	if (fd == -EINVAL && a.build_id) {
		/* before Linux 5.12: no build-ids in MMAP2; the reader finds them in
		 * the files instead */
		a.build_id = 0;
		fd = tc_perf_event_open(&a, pid, cpu, group_fd,
					flags & TC_PERF_CGROUP ? PERF_FLAG_PID_CGROUP : 0);
		if (fd >= 0)
			e->attr.build_id = 0;
	}
	if (fd < 0) {
		if (fd == -ESRCH && (flags & TC_PERF_SKIP_GONE) && pid > 0 &&
		    !(flags & TC_PERF_CGROUP)) {
			/* the thread ended since /proc listed it */
			tc_log(TACHO_LOG_DEBUG, "thread %d ended before '%s' opened on it",
			       (int)pid, e->name);
			return 0;
		}
		if (!e->err) {
			e->err = fd;
			e->err_flags = (pid == -1 || (flags & TC_PERF_CGROUP) ?
					TC_EXPLAIN_CPU_WIDE : 0) |
				       (group_fd >= 0 ? TC_EXPLAIN_GROUP_MEMBER : 0);
			e->err_attr = a;
		}
		return 0;
	}
	if (tc_perf_ioctl(fd, PERF_EVENT_IOC_ID, (unsigned long)&e->ids[c]))
		e->ids[c] = 0;
	e->fds[c] = fd;
	e->nopen++;
	return 0;
}

int tc_perf_ev_open(struct tc_perf_ev *e, const struct tc_perf_grid *g, unsigned flags)
{
	int err = tc_perf_ev_open_begin(e, g, flags);

	for (size_t c = 0; !err && c < e->ncells; c++)
		err = tc_perf_ev_open_cell(e, c);
	return err;
}

/* One ioctl on every cell where e's group is open: through the cell's leader with the
 * group flag when e leads the group, on e's own descriptors otherwise. */
static int ev_ioctl(struct tc_perf_ev *e, unsigned long req)
{
	int first = 0;

	if (!e)
		return -EINVAL;
	for (size_t c = 0; c < e->ncells; c++) {
		int fd, err;

		if (e->leader) {
			fd = e->fds[c];
			if (fd < 0)
				continue;
			err = tc_perf_ioctl(fd, req, 0);
		} else {
			/* With the group flag the ioctl reaches every member and, for
			 * inherited events, every child copy too. */
			fd = tc_perf_ev_group_fd(e, c);
			if (fd < 0)
				continue;
			err = tc_perf_ioctl(fd, req, PERF_IOC_FLAG_GROUP);
		}
		if (err && !first)
			first = err;
	}
	return first;
}

int tc_perf_ev_enable(struct tc_perf_ev *e)
{
	return ev_ioctl(e, PERF_EVENT_IOC_ENABLE);
}

int tc_perf_ev_disable(struct tc_perf_ev *e)
{
	return ev_ioctl(e, PERF_EVENT_IOC_DISABLE);
}

int tc_perf_ev_reset(struct tc_perf_ev *e)
{
	return ev_ioctl(e, PERF_EVENT_IOC_RESET);
}

int tc_perf_ev_set_period(struct tc_perf_ev *e, uint64_t period)
{
	int first = 0;

	if (!e)
		return -EINVAL;
	for (size_t c = 0; c < e->ncells; c++) {
		int err;
		if (e->fds[c] < 0)
			continue;
		err = tc_perf_ioctl(e->fds[c], PERF_EVENT_IOC_PERIOD, (unsigned long)&period);
		if (err && !first)
			first = err;
	}
	return first;
}

int tc_perf_ev_map_pages(struct tc_perf_ev *e)
{
	long psz = sysconf(_SC_PAGESIZE);
	int first = 0;

	if (!e)
		return -EINVAL;
	if (!e->pages && e->ncells) {
		e->pages = calloc(e->ncells, sizeof(*e->pages));
		if (!e->pages)
			return -ENOMEM;
	}
	for (size_t c = 0; c < e->ncells; c++) {
		void *p;
		int err;

		if (e->fds[c] < 0 || e->pages[c])
			continue;
		err = tc_perf_mmap(e->fds[c], (size_t)psz, PROT_READ, &p);
		if (err) {
			if (!first)
				first = err;
			continue;
		}
		e->pages[c] = p;
	}
	return first;
}

static int read_fd(int fd, uint64_t *buf, size_t words, size_t *got)
{
	ssize_t r;

	do
		r = read(fd, buf, words * sizeof(uint64_t));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	*got = (size_t)r / sizeof(uint64_t);
	return 0;
}

int tc_perf_ev_read_cell(struct tc_perf_ev *e, size_t c, uint64_t *raw, uint64_t *enabled,
			 uint64_t *running, bool *eof)
{
	const struct tc_pmc_ops *ops;
	uint64_t *b = e->buf;
	size_t got = 0;
	int err;

	*eof = false;
	if (c >= e->ncells || e->fds[c] < 0)
		return 1;
	ops = e->pages && e->pages[c] ? tc_perf_pmc_ops(true) : NULL;
	if (ops && tc_pmc_page_rdpmc(e->pages[c])) {
		struct tc_pmc_value v;

		err = tc_pmc_read_page(e->pages[c], ops, &v);
		if (!err) {
			*raw = v.count;
			*enabled = v.enabled;
			*running = v.running;
			return 0;
		}
		if (err != -EAGAIN)
			return err;
		/* off its counter at this moment: the kernel has the count */
	}
	err = read_fd(e->fds[c], b, e->words, &got);
	if (err)
		return err;
	if (got == 0) {
		/* perf_event_open(2), "pinned": a pinned event that could not get its
		 * counter is in error state and read() returns 0 until it is enabled
		 * again */
		*eof = true;
		*raw = *enabled = *running = 0;
		return 0;
	}
	if (e->flags & TC_PERF_GROUP_READ) {
		/* any member's descriptor reads the whole group: find e by its id */
		if (got < 3 || b[0] > (got - 3) / 2)
			return -EIO;
		for (uint64_t k = 0; k < b[0]; k++)
			if (b[4 + 2 * k] == e->ids[c]) {
				*raw = b[3 + 2 * k];
				*enabled = b[1];
				*running = b[2];
				return 0;
			}
		return -EIO;
	}
	if (got < 4)
		return -EIO;
	*raw = b[0];
	*enabled = b[1];
	*running = b[2];
	return 0;
}

int tc_perf_ev_read(struct tc_perf_ev *e, struct tc_perf_count *out)
{
	struct tc_perf_sum s;

	if (!e || !out)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	for (size_t c = 0; c < e->ncells; c++) {
		uint64_t raw, ena, run;
		bool eof;
		int err = tc_perf_ev_read_cell(e, c, &raw, &ena, &run, &eof);

		if (err == 1)
			continue;
		if (err)
			return err;
		if (eof)
			s.eof = true;
		else
			tc_perf_sum_add(&s, raw, ena, run);
	}
	tc_perf_sum_finish(&s, e, out);
	return 0;
}

const char *tc_perf_ev_silent(const struct tc_perf_ev *e)
{
	return e ? e->silent : NULL;
}

/* --- the probe --- */

/* A compiler barrier between the seqlock and the fields (rdpmc.c says why it is
 * enough on x86). */
#define barrier() __asm__ __volatile__("" : : : "memory")

int tc_perf_probe(const struct perf_event_attr *attr, struct tc_perf_page_info *page)
{
	struct perf_event_attr a;
	long psz = sysconf(_SC_PAGESIZE);
	void *p;
	int fd, err;

	if (!attr)
		return -EINVAL;
	a = *attr;
	fd = tc_perf_event_open(&a, 0, -1, -1, 0);
	if (fd < 0)
		return fd;
	if (page) {
		const volatile struct perf_event_mmap_page *pg;
		uint32_t seq;

		memset(page, 0, sizeof(*page));
		err = tc_perf_mmap(fd, (size_t)psz, PROT_READ, &p);
		if (err) {
			close(fd);
			return err;
		}
		pg = p;
		do {
			seq = pg->lock;
			barrier();
			page->cap_user_rdpmc = pg->cap_user_rdpmc;
			page->index = pg->index;
			page->pmc_width = pg->pmc_width;
			page->cap_user_time = pg->cap_user_time;
			page->time_mult = pg->time_mult;
			page->time_shift = pg->time_shift;
			page->cap_user_time_zero = pg->cap_user_time_zero;
			page->time_zero = pg->time_zero;
			barrier();
		} while (pg->lock != seq);
		tc_perf_munmap(p, (size_t)psz);
	}
	close(fd);
	return 0;
}

bool tc_perf_inherit_sample_read(void)
{
	/* 0 not yet asked, 1 taken, 2 refused: one probe a process, its answer the
	 * same from any thread */
	static int known;
	int k = __atomic_load_n(&known, __ATOMIC_ACQUIRE);

	if (!k) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.disabled = 1;
		a.inherit = 1;
		a.inherit_stat = 1;
		a.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_TID;
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		k = tc_perf_probe(&a, NULL) == 0 ? 1 : 2;
		__atomic_store_n(&known, k, __ATOMIC_RELEASE);
	}
	return k == 1;
}

struct tc_perf_hold {
	size_t n;
	int fds[];
};

static bool hold_worth(const struct perf_event_attr *a)
{
	switch (a->type) {
	case PERF_TYPE_SOFTWARE:
		return a->config != PERF_COUNT_SW_CPU_CLOCK && a->config != PERF_COUNT_SW_TASK_CLOCK;
	case PERF_TYPE_TRACEPOINT:
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return true;
	default:
		return false;
	}
}

int tc_perf_hold_open(const struct perf_event_attr *const *attrs, size_t n,
		      struct tc_perf_hold **out)
{
	struct tc_perf_hold *h;

	*out = NULL;
	if (!n)
		return 0;
	h = calloc(1, sizeof(*h) + n * sizeof(h->fds[0]));
	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct perf_event_attr *a = attrs[i];
		struct perf_event_attr c;
		bool seen = false;
		int fd;

		if (!a || !hold_worth(a))
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = attrs[j] && hold_worth(attrs[j]) && attrs[j]->type == a->type &&
			       attrs[j]->config == a->config;
		if (seen)
			continue;
		/* the event's own privilege (its exclusions), none of its behaviour */
		memset(&c, 0, sizeof(c));
		c.size = sizeof(c);
		c.type = a->type;
		c.config = a->config;
		c.config1 = a->config1;
		c.config2 = a->config2;
		c.exclude_user = a->exclude_user;
		c.exclude_kernel = a->exclude_kernel;
		c.exclude_hv = a->exclude_hv;
		c.exclude_idle = a->exclude_idle;
		c.exclude_guest = a->exclude_guest;
		c.exclude_host = a->exclude_host;
		c.disabled = 1;
		fd = tc_perf_event_open(&c, 0, -1, -1, 0);
		if (fd < 0 && !c.exclude_kernel && a->type != PERF_TYPE_TRACEPOINT) {
			/* a user who may count only user space (stat's :u fallback) holds
			 * the same set-up with a user-only copy */
			c.exclude_kernel = c.exclude_hv = 1;
			fd = tc_perf_event_open(&c, 0, -1, -1, 0);
		}
		if (fd >= 0)
			h->fds[h->n++] = fd;
	}
	if (!h->n) {
		free(h);
		return 0;
	}
	*out = h;
	return (int)h->n;
}

void tc_perf_hold_close(struct tc_perf_hold *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		close(h->fds[i]);
	free(h);
}
