/* test-perf-engine.c - the perf engine (lib/perf/engine.h) through its seams, without a
 * PMU: a grid of several CPUs x threads opened cell by cell (the attributes the engine
 * owns, members into their cell's leader, a leader that fails on one cell), rings shared
 * per CPU with SET_OUTPUT, a group read whose ids come back in another order, the one
 * rule for a time running of 0, the period ioctl, and the hot path's choice between
 * RDPMC and read(2) on synthetic pages. Then live: exact page faults and breakpoint
 * stores through a list and through the hot path.
 *
 * The fake kernel: every open is a pipe (the engine reads its read end; the test writes
 * what read(2) of a perf event would return into its write end), ids and ioctls go
 * through the ioctl hook, mappings are calloc'd memory the test fills like the kernel's
 * pages, RDPMC is a callback. */
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "perf/engine.h"
#include "perf/rdpmc.h"
#include "perf/syscall.h"

#define MAXOPEN 64

struct fake_open {
	pid_t pid;
	int cpu, group_fd;
	unsigned long flags;            /* perf_event_open's flags */
	int fd, wfd;                    /* the pipe: what the engine reads, what we write */
	uint64_t id;
	struct perf_event_attr attr;
	void *map;                      /* what mmap gave for this fd */
	size_t map_len;
};

struct fake_ioctl {
	int fd;
	unsigned long req, arg;
	uint64_t value;                 /* PERIOD: the period; SET_OUTPUT: the target fd */
};

struct fake {
	size_t n;
	struct fake_open o[MAXOPEN];
	size_t nio;
	struct fake_ioctl io[4 * MAXOPEN];
	int fail_at;                    /* the open (0-based) that fails, -1 none */
	int fail_err;
	pid_t gone;                     /* opens on this thread fail with ESRCH */
	int fail_map;                   /* the mapping (0-based) that fails, -1 none */
	int fail_ioctl_req;             /* a request that fails (0: none) */
	bool old_kernel;                /* refuses PERF_FORMAT_GROUP with inherit (before
					   Linux 5.13) */
	size_t refused;                 /* opens it refused that way */
	size_t nmap;
	uint64_t pmc[8];                /* what RDPMC of counter i returns */
	unsigned rdpmc_calls;
};

static struct fake *fk;

/* The open behind fd: the latest one, since the engine closes descriptors and the next
 * pipe may get the same number. */
static struct fake_open *by_fd(int fd)
{
	for (size_t i = fk->n < MAXOPEN ? fk->n : MAXOPEN; i-- > 0;)
		if (fk->o[i].fd == fd)
			return &fk->o[i];
	return NULL;
}

static int fake_open(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		     unsigned long flags)
{
	struct fake *f = arg;
	struct fake_open *o;
	int p[2];

	assert_true(f->n < MAXOPEN);
	if ((int)f->n == f->fail_at) {
		f->o[f->n].fd = f->o[f->n].wfd = -1;
		f->n++;
		return -f->fail_err;
	}
	if (f->gone && pid == f->gone)
		return -ESRCH;
	if (f->old_kernel && attr->inherit && (attr->read_format & PERF_FORMAT_GROUP)) {
		f->refused++;
		return -EINVAL;
	}
	/* non-blocking: a read the test did not feed fails at once instead of hanging */
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	o = &f->o[f->n];
	o->pid = pid;
	o->cpu = cpu;
	o->group_fd = group_fd;
	o->flags = flags;
	o->fd = p[0];
	o->wfd = p[1];
	o->id = 1000 + f->n;
	o->attr = *attr;
	f->n++;
	return p[0];
}

static int fake_ioctl(void *arg, int fd, unsigned long req, unsigned long val)
{
	struct fake *f = arg;
	struct fake_ioctl *io = &f->io[f->nio++];
	struct fake_open *o = by_fd(fd);

	assert_true(f->nio < ARRAY_SIZE(f->io));
	assert_non_null(o);
	io->fd = fd;
	io->req = req;
	io->arg = val;
	if (f->fail_ioctl_req && req == (unsigned long)f->fail_ioctl_req)
		return -EINVAL;
	if (req == PERF_EVENT_IOC_ID)
		*(uint64_t *)val = o->id;
	else if (req == PERF_EVENT_IOC_PERIOD)
		io->value = *(const uint64_t *)val;
	else if (req == PERF_EVENT_IOC_SET_OUTPUT)
		io->value = val;
	return 0;
}

static int fake_map(void *arg, int fd, size_t len, int prot, void **out)
{
	struct fake *f = arg;
	struct fake_open *o = by_fd(fd);
	void *p;

	(void)prot;
	assert_non_null(o);
	if ((int)f->nmap++ == f->fail_map)
		return -EPERM;
	p = aligned_alloc(4096, len);
	assert_non_null(p);
	memset(p, 0, len);
	o->map = p;
	o->map_len = len;
	*out = p;
	return 0;
}

static void fake_unmap(void *arg, void *addr, size_t len)
{
	(void)arg;
	(void)len;
	free(addr);
}

static uint64_t fake_rdpmc(void *arg, uint32_t counter)
{
	struct fake *f = arg;

	f->rdpmc_calls++;
	return counter < ARRAY_SIZE(f->pmc) ? f->pmc[counter] : 0;
}

static const struct tc_perf_mmap_hooks fake_maps = { fake_map, fake_unmap, NULL };
static struct tc_perf_mmap_hooks maps;
static struct tc_pmc_ops pmc_ops;

static void fake_begin(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->fail_at = -1;
	f->fail_map = -1;
	fk = f;
	maps = fake_maps;
	maps.arg = f;
	pmc_ops = (struct tc_pmc_ops){ .rdpmc = fake_rdpmc, .arg = f };
	tc_perf_set_open_hook(fake_open, f);
	tc_perf_set_ioctl_hook(fake_ioctl, f);
	tc_perf_set_mmap_hooks(&maps);
	tc_perf_set_pmc_ops(&pmc_ops);
}

/* Whatever a failed test left installed (cmocka leaves a test at its first failed
 * assertion): the next test talks to the real kernel. */
static int reset_hooks(void **state)
{
	(void)state;
	tc_perf_set_open_hook(NULL, NULL);
	tc_perf_set_ioctl_hook(NULL, NULL);
	tc_perf_set_mmap_hooks(NULL);
	tc_perf_set_pmc_ops(NULL);
	fk = NULL;
	return 0;
}

/* The engine is freed first (it closes the read ends and unmaps); then the write ends. */
static void fake_end(struct fake *f)
{
	tc_perf_set_open_hook(NULL, NULL);
	tc_perf_set_ioctl_hook(NULL, NULL);
	tc_perf_set_mmap_hooks(NULL);
	tc_perf_set_pmc_ops(NULL);
	for (size_t i = 0; i < f->n && i < MAXOPEN; i++)
		if (f->o[i].wfd >= 0)
			close(f->o[i].wfd);
	fk = NULL;
}

/* What read(2) of the event behind o returns next. */
static void feed(const struct fake_open *o, const uint64_t *words, size_t n)
{
	assert_int_equal(write(o->wfd, words, n * sizeof(*words)), (ssize_t)(n * sizeof(*words)));
}

static struct perf_event_attr sw_attr(uint64_t config)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = config };
	return a;
}

static size_t ioctls(const struct fake *f, unsigned long req)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nio; i++)
		n += f->io[i].req == req;
	return n;
}

/* --- the grid --- */

static void test_grid_rules(void **state)
{
	static const int cpus[] = { 0, 3 }, bad_cpus[] = { 1, -2 };
	static const pid_t threads[] = { 7, 8 }, any[] = { -1 }, bad[] = { -5 };
	struct tc_perf_grid g;
	(void)state;

	assert_int_equal(tc_perf_grid_init(&g, cpus, 2, threads, 2), 0);
	assert_int_equal(g.ncpus, 2);
	assert_int_equal(g.nthreads, 2);
	assert_int_equal(g.cpus[1], 3);
	assert_int_equal(g.threads[1], 8);
	tc_perf_grid_exit(&g);
	tc_perf_grid_exit(&g);          /* idempotent */
	/* NULL sides are "any": one column or one row of -1 */
	assert_int_equal(tc_perf_grid_init(&g, cpus, 2, NULL, 0), 0);
	assert_int_equal(g.nthreads, 1);
	assert_int_equal(g.threads[0], -1);
	tc_perf_grid_exit(&g);
	/* the kernel has no "every task on every CPU"; nor CPUs or threads below -1 */
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, any, 1), -EINVAL);
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(tc_perf_grid_init(&g, bad_cpus, 2, threads, 1), -EINVAL);
	assert_int_equal(tc_perf_grid_init(&g, cpus, 1, bad, 1), -EINVAL);
}

/* Three events (A leads B, C alone, listed A, C, B) over 3 CPUs x 2 threads: every cell
 * opened once per event, cell by cell and on each cell group by group (A, its member B,
 * then C: the order in which the kernel inherits them, engine-list.c's open_all); the
 * attributes the engine owns set on each; B opened into A's descriptor of the same
 * cell. A refused on one cell leaves B leading there. */
static void test_grid_opens(void **state)
{
	static const int cpus[] = { 0, 1, 2 };
	static const pid_t threads[] = { 101, 102 };
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct perf_event_attr b = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr c = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
	unsigned flags = TC_PERF_INHERIT | TC_PERF_ENABLE_ON_EXEC | TC_PERF_GROUP_READ;
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	struct perf_event_attr refused;
	unsigned ctx;
	struct fake f;
	(void)state;

	a.sample_period = 4000;            /* the caller's fields are kept */
	a.read_format = PERF_FORMAT_LOST;  /* the engine's are its own */
	a.disabled = 0;
	fake_begin(&f);
	f.fail_at = 9;                     /* A on cell 3: cpu 1, thread 102 */
	f.fail_err = EBUSY;
	assert_int_equal(tc_perf_grid_init(&g, cpus, 3, threads, 2), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", 5), 0);
	assert_int_equal(tc_perf_list_add(l, &c, "C", TACHO_GROUP_NONE), 1);
	assert_int_equal(tc_perf_list_add(l, &b, "B", 5), 2);
	assert_int_equal(tc_perf_list_open(l, &g, flags), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "late", 1), -EINVAL);   /* after the open */
	assert_int_equal(tc_perf_list_flags(l), flags);

	/* on each cell A, B, C (ev 0, 2, 1 in the list), cell after cell */
	assert_int_equal(f.n, 18);
	for (size_t k = 0; k < 18; k++) {
		static const size_t ev_at[] = { 0, 2, 1 };
		size_t ev = ev_at[k % 3], cell = k / 3;
		const struct fake_open *o = &f.o[k];
		const struct fake_open *lead = &f.o[3 * cell];    /* A's open on that cell */
		bool refused_cell = cell == 3;

		if (ev == 0 && refused_cell)
			continue;
		assert_int_equal(o->cpu, cpus[cell / 2]);
		assert_int_equal(o->pid, threads[cell % 2]);
		assert_int_equal(o->attr.size, sizeof(struct perf_event_attr));
		assert_true(o->attr.read_format ==
			    (PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			     PERF_FORMAT_TOTAL_TIME_RUNNING));
		assert_true(o->attr.inherit);
		if (ev == 2 && !refused_cell) {
			/* B joins A there, enabled, and does not start at exec itself */
			assert_int_equal(o->group_fd, lead->fd);
			assert_false(o->attr.disabled);
			assert_false(o->attr.enable_on_exec);
		} else {
			/* a leader: A, C, and B where A was refused */
			assert_int_equal(o->group_fd, -1);
			assert_true(o->attr.disabled);
			assert_true(o->attr.enable_on_exec);
		}
		if (ev == 0)
			assert_int_equal(o->attr.sample_period, 4000);
	}
	/* the refusal is kept with its context, the other cells open */
	assert_int_equal(tc_perf_ev_nopen(tc_perf_list_event(l, 0)), 5);
	assert_int_equal(tc_perf_ev_error(tc_perf_list_event(l, 0), &ctx, &refused), -EBUSY);
	assert_int_equal(ctx, 0);
	assert_true(refused.disabled && refused.enable_on_exec);
	assert_int_equal(tc_perf_ev_error(tc_perf_list_event(l, 2), &ctx, NULL), 0);
	assert_int_equal(tc_perf_ev_nopen(tc_perf_list_event(l, 2)), 6);

	/* enable: one ioctl per group and cell, through the cell's leader, group flag */
	f.nio = 0;
	assert_int_equal(tc_perf_list_enable(l), 0);
	assert_int_equal(f.nio, 12);
	for (size_t i = 0; i < f.nio; i++) {
		assert_int_equal(f.io[i].req, PERF_EVENT_IOC_ENABLE);
		assert_int_equal(f.io[i].arg, PERF_IOC_FLAG_GROUP);
	}
	assert_int_equal(f.io[3].fd, f.o[10].fd);   /* cell 3: B leads */
	tc_perf_list_free(l);
	tc_perf_grid_exit(&g);
	fake_end(&f);
}

/* A thread that ended since it was listed: with TC_PERF_SKIP_GONE its cells stay closed
 * and no error is kept; without, ESRCH is the event's error. A CPU-wide refusal says so. */
static void test_skip_gone_and_context(void **state)
{
	static const pid_t threads[] = { 301, 302 };
	static const int cpus[] = { 4 };
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	unsigned ctx;
	struct fake f;
	(void)state;

	fake_begin(&f);
	f.gone = 302;
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, threads, 2), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_SKIP_GONE), 0);
	assert_int_equal(tc_perf_ev_nopen(tc_perf_list_event(l, 0)), 1);
	assert_int_equal(tc_perf_ev_error(tc_perf_list_event(l, 0), NULL, NULL), 0);
	tc_perf_list_free(l);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_open(l, &g, 0), 0);
	assert_int_equal(tc_perf_ev_error(tc_perf_list_event(l, 0), NULL, NULL), -ESRCH);
	tc_perf_list_free(l);
	tc_perf_grid_exit(&g);

	f.gone = 0;
	f.fail_at = (int)f.n;
	f.fail_err = EACCES;
	assert_int_equal(tc_perf_grid_init(&g, cpus, 1, NULL, 0), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_open(l, &g, 0), 0);
	assert_int_equal(tc_perf_ev_error(tc_perf_list_event(l, 0), &ctx, NULL), -EACCES);
	assert_int_equal(ctx, TC_EXPLAIN_CPU_WIDE);
	tc_perf_list_free(l);
	tc_perf_grid_exit(&g);
	fake_end(&f);
}

/* perf's cgroup mode: the grid's threads are cgroup directory descriptors, every cell
 * opens with PERF_FLAG_PID_CGROUP and that descriptor as pid, on its own CPU, without
 * inherit; a member joins its cell's leader; a refusal is explained as CPU-wide. A CPU
 * of -1, INHERIT or ENABLE_ON_EXEC is refused before any open. */
static void test_cgroup_mode(void **state)
{
	static const int cpus[] = { 0, 1 }, any_cpu[] = { -1 };
	static const pid_t cg[] = { 42 };
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct perf_event_attr b = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
	struct tc_perf_count v[2];
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	unsigned ctx;
	struct fake f;
	(void)state;

	fake_begin(&f);
	assert_int_equal(tc_perf_grid_init(&g, cpus, 2, cg, 1), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", 0), 0);
	assert_int_equal(tc_perf_list_add(l, &b, "B", 0), 1);
	assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_CGROUP | TC_PERF_GROUP_READ), 0);
	assert_int_equal(f.n, 4);
	for (size_t i = 0; i < f.n; i++) {
		assert_int_equal(f.o[i].pid, 42);
		assert_true(f.o[i].flags & PERF_FLAG_PID_CGROUP);
		assert_true(f.o[i].flags & PERF_FLAG_FD_CLOEXEC);
		assert_int_equal(f.o[i].attr.inherit, 0);
		assert_int_equal(f.o[i].attr.enable_on_exec, 0);
	}
	/* A on CPU 0 and B into it, then A on CPU 1 and B into that */
	assert_int_equal(f.o[0].cpu, 0);
	assert_int_equal(f.o[1].cpu, 0);
	assert_int_equal(f.o[2].cpu, 1);
	assert_int_equal(f.o[0].group_fd, -1);
	assert_int_equal(f.o[1].group_fd, f.o[0].fd);
	assert_int_equal(f.o[2].group_fd, -1);
	assert_int_equal(f.o[3].group_fd, f.o[2].fd);
	/* each CPU's group read, summed per event */
	feed(&f.o[0], (const uint64_t[]){ 2, 100, 100, 5, f.o[0].id, 7, f.o[1].id }, 7);
	feed(&f.o[2], (const uint64_t[]){ 2, 100, 100, 11, f.o[2].id, 13, f.o[3].id }, 7);
	assert_int_equal(tc_perf_list_read(l, v), 0);
	assert_int_equal(v[0].raw, 16);
	assert_int_equal(v[1].raw, 20);
	assert_int_equal(v[0].status, TACHO_COUNT_COUNTED);
	tc_perf_list_free(l);

	/* a refusal is a CPU-wide open's */
	f.fail_at = (int)f.n;
	f.fail_err = EACCES;
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_CGROUP), 0);
	assert_int_equal(tc_perf_ev_error(tc_perf_list_event(l, 0), &ctx, NULL), -EACCES);
	assert_int_equal(ctx, TC_EXPLAIN_CPU_WIDE);
	tc_perf_list_free(l);

	/* refused before any open */
	f.fail_at = -1;
	{
		size_t before = f.n;
		assert_int_equal(tc_perf_list_new(&l), 0);
		assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
		assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_CGROUP | TC_PERF_INHERIT), -EINVAL);
		assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_CGROUP | TC_PERF_ENABLE_ON_EXEC),
				 -EINVAL);
		tc_perf_list_free(l);
		tc_perf_grid_exit(&g);
		assert_int_equal(tc_perf_grid_init(&g, any_cpu, 1, cg, 1), 0);
		assert_int_equal(tc_perf_list_new(&l), 0);
		assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
		assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_CGROUP), -EINVAL);
		tc_perf_list_free(l);
		assert_int_equal(f.n, before);
	}
	tc_perf_grid_exit(&g);
	fake_end(&f);
}

/* A kernel that refuses group reads of inherited events: the list finds out that this is
 * the reason (the same open without PERF_FORMAT_GROUP works) and opens everything again
 * without it; reads then go event by event. */
static void test_old_kernel_no_group_read(void **state)
{
	static const pid_t threads[] = { 41, 42 };
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	struct tc_perf_count v[2];
	struct fake f;
	(void)state;

	fake_begin(&f);
	f.old_kernel = true;
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, threads, 2), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "a", 0), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "b", 0), 1);
	assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_INHERIT | TC_PERF_GROUP_READ), 0);
	assert_int_equal(tc_perf_list_flags(l), TC_PERF_INHERIT);
	assert_int_equal(f.refused, 1);
	/* the probe without the group format, then the four opens for real */
	assert_int_equal(f.n, 5);
	for (size_t k = 1; k < 5; k++)
		assert_false(f.o[k].attr.read_format & PERF_FORMAT_GROUP);
	assert_int_equal(f.o[2].group_fd, f.o[1].fd);   /* b joins a on the first cell */
	assert_int_equal(tc_perf_ev_nopen(tc_perf_list_event(l, 0)), 2);
	assert_int_equal(tc_perf_ev_nopen(tc_perf_list_event(l, 1)), 2);
	feed(&f.o[1], (const uint64_t[]){ 1, 10, 10, f.o[1].id }, 4);
	feed(&f.o[2], (const uint64_t[]){ 2, 10, 10, f.o[2].id }, 4);
	feed(&f.o[3], (const uint64_t[]){ 3, 10, 10, f.o[3].id }, 4);
	feed(&f.o[4], (const uint64_t[]){ 4, 10, 10, f.o[4].id }, 4);
	assert_int_equal(tc_perf_list_read(l, v), 0);
	assert_int_equal(v[0].raw, 4);
	assert_int_equal(v[1].raw, 6);
	assert_int_equal(v[1].status, TACHO_COUNT_COUNTED);
	tc_perf_list_free(l);
	tc_perf_grid_exit(&g);
	fake_end(&f);
}

/* --- rings --- */

struct drained {
	int n;
	uint32_t type[8];
};

static int on_rec(void *arg, const struct perf_event_header *h)
{
	struct drained *d = arg;

	if (d->n < 8)
		d->type[d->n] = h->type;
	d->n++;
	return 0;
}

/* Two events over 2 CPUs x 3 threads: one ring per CPU, owned by the first descriptor
 * open there; the other five of that CPU write into it. Samples name their event by id;
 * poll and drain go through the list. */
static void test_rings_set_output(void **state)
{
	static const int cpus[] = { 0, 5 };
	static const pid_t threads[] = { 201, 202, 203 };
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK);
	struct perf_event_attr b = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	long psz = sysconf(_SC_PAGESIZE);
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	struct drained d = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(h) };
	struct perf_event_mmap_page *meta;
	size_t bad = 99;
	bool sharing = true;
	short rev, revs[TC_PERF_POLL_EXTRA];
	int none = -1, extra[TC_PERF_POLL_EXTRA], pfds[2];
	struct fake f;
	(void)state;

	a.sample_period = 1000;
	b.sample_period = 1;
	fake_begin(&f);
	assert_int_equal(tc_perf_grid_init(&g, cpus, 2, threads, 3), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_add(l, &b, "B", TACHO_GROUP_NONE), 1);
	assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_INHERIT), 0);
	assert_int_equal(f.n, 12);
	assert_int_equal(tc_perf_list_mmap(l, 3, &bad, &sharing), -EINVAL);  /* not 2^n */
	f.nio = 0;
	assert_int_equal(tc_perf_list_mmap(l, 4, &bad, &sharing), 0);
	assert_int_equal(tc_perf_list_nrings(l), 2);
	/* the owners: A on (cpu 0, thread 201) and A on (cpu 5, thread 201); opened cell by
	 * cell, A and B on each, the second CPU's first cell is the fourth */
	assert_int_equal(f.nmap, 2);
	assert_non_null(f.o[0].map);
	assert_non_null(f.o[6].map);
	assert_int_equal(f.o[0].map_len, 5 * (size_t)psz);
	assert_int_equal(ioctls(&f, PERF_EVENT_IOC_SET_OUTPUT), 10);
	for (size_t i = 0; i < f.nio; i++) {
		const struct fake_open *o = by_fd(f.io[i].fd);
		if (f.io[i].req != PERF_EVENT_IOC_SET_OUTPUT || !o)
			continue;
		/* into the owner of its own CPU */
		assert_int_equal(f.io[i].value, (uint64_t)(o->cpu == 0 ? f.o[0].fd : f.o[6].fd));
		assert_null(o->map);
	}
	/* ids map back to events: B's descriptor on (cpu 5, thread 203) is the last */
	assert_int_equal(tc_perf_list_event_of_id(l, f.o[11].id), 1);
	assert_int_equal(tc_perf_list_event_of_id(l, f.o[4].id), 0);
	assert_int_equal(tc_perf_list_event_of_id(l, 5), -1);

	/* poll: nothing waits; then the second ring's owner becomes readable */
	assert_int_equal(tc_perf_list_poll(l, 0, &none, &rev, 1), 0);
	assert_int_equal(write(f.o[6].wfd, "x", 1), 1);
	assert_int_equal(tc_perf_list_poll(l, 0, &none, &rev, 1), 1);
	/* the caller's descriptors beside the rings: the second one readable, each
	 * told apart; one more than the list holds room for is refused */
	assert_int_equal(pipe(pfds), 0);
	extra[0] = -1;
	extra[1] = pfds[0];
	assert_int_equal(write(pfds[1], "x", 1), 1);
	assert_int_equal(tc_perf_list_poll(l, 0, extra, revs, 2), 2);
	assert_int_equal(revs[0], 0);
	assert_true(revs[1] & POLLIN);
	assert_int_equal(tc_perf_list_poll(l, 0, extra, revs, TC_PERF_POLL_EXTRA + 1), -EINVAL);
	close(pfds[0]);
	close(pfds[1]);
	/* drain: two records the "kernel" put in the first ring, none in the second */
	meta = f.o[0].map;
	memcpy((char *)f.o[0].map + psz, &h, sizeof(h));
	h.type = PERF_RECORD_LOST;
	memcpy((char *)f.o[0].map + psz + sizeof(h), &h, sizeof(h));
	meta->data_head = 2 * sizeof(h);
	assert_int_equal(tc_perf_list_drain(l, on_rec, &d), 0);
	assert_int_equal(d.n, 2);
	assert_int_equal(d.type[0], PERF_RECORD_SAMPLE);
	assert_int_equal(d.type[1], PERF_RECORD_LOST);
	assert_int_equal(meta->data_tail, 2 * sizeof(h));
	tc_perf_list_free(l);

	/* a ring that cannot be mapped names its event; so does one that cannot share */
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_add(l, &b, "B", TACHO_GROUP_NONE), 1);
	assert_int_equal(tc_perf_list_open(l, &g, 0), 0);
	f.fail_map = (int)f.nmap + 1;     /* the second CPU's ring */
	assert_int_equal(tc_perf_list_mmap(l, 4, &bad, &sharing), -EPERM);
	assert_int_equal(bad, 0);
	assert_false(sharing);
	tc_perf_list_free(l);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "A", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_add(l, &b, "B", TACHO_GROUP_NONE), 1);
	assert_int_equal(tc_perf_list_open(l, &g, 0), 0);
	f.fail_map = -1;
	f.fail_ioctl_req = (int)PERF_EVENT_IOC_SET_OUTPUT;
	assert_int_equal(tc_perf_list_mmap(l, 4, &bad, &sharing), -EINVAL);
	assert_int_equal(bad, 0);         /* A on the second thread of the first CPU */
	assert_true(sharing);
	tc_perf_list_free(l);
	tc_perf_grid_exit(&g);
	fake_end(&f);
}

/* --- reads --- */

/* A group of three on two cells, read whole: the kernel lists C, A, B on the first
 * cell; the ids put each value where it belongs. The second cell ran half the time:
 * each cell is scaled by its own times, then summed. */
static void test_group_read_by_id(void **state)
{
	static const pid_t threads[] = { 11, 12 };
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	struct tc_perf_count v[3];
	struct fake f;
	(void)state;

	fake_begin(&f);
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, threads, 2), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tc_perf_list_add(l, &a, "x", 0), i);
	assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_GROUP_READ), 0);
	/* opens: A, B, C on cell 0, then A, B, C on cell 1 */
	assert_int_equal(f.n, 6);
	const uint64_t cell0[] = { 3, 1000, 1000, 30, f.o[2].id, 10, f.o[0].id, 20, f.o[1].id };
	const uint64_t cell1[] = { 3, 1000, 500, 1, f.o[3].id, 2, f.o[4].id, 3, f.o[5].id };
	feed(&f.o[0], cell0, ARRAY_SIZE(cell0));     /* read from the leader of each cell */
	feed(&f.o[3], cell1, ARRAY_SIZE(cell1));
	assert_int_equal(tc_perf_list_read(l, v), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(v[i].status, TACHO_COUNT_MULTIPLEXED);
		assert_int_equal(v[i].enabled, 2000);
		assert_int_equal(v[i].running, 1500);
		assert_true(v[i].coverage == 0.75);
	}
	assert_int_equal(v[0].raw, 11);
	assert_true(v[0].value == 10 + 2);    /* 10 counted whole, 1 at half the time */
	assert_int_equal(v[1].raw, 22);
	assert_true(v[1].value == 20 + 4);
	assert_int_equal(v[2].raw, 33);
	assert_true(v[2].value == 30 + 6);

	/* a group read that ends early is an error, not a silent zero */
	const uint64_t short_read[] = { 3, 1000, 1000, 30, f.o[2].id };
	feed(&f.o[0], short_read, ARRAY_SIZE(short_read));
	assert_int_equal(tc_perf_list_read(l, v), -EIO);
	/* end-of-file (a pinned group in error state): nothing counted there */
	feed(&f.o[3], cell1, ARRAY_SIZE(cell1));
	close(f.o[0].wfd);
	f.o[0].wfd = -1;
	assert_int_equal(tc_perf_list_read(l, v), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(v[i].status, TACHO_COUNT_NOT_COUNTED);
		assert_true(v[i].eof);
		assert_true(isnan(v[i].value));
	}
	tc_perf_list_free(l);
	tc_perf_grid_exit(&g);
	fake_end(&f);
}

/* Which groups can never be multiplexed: those of software-context PMUs only (what
 * per-thread stat relies on to call a short thread's count whole, whatever its
 * times). A software member of a hardware leader's group rotates with it, and so does
 * a group a hardware member joins; a dynamic PMU other than kprobe and uprobe (msr
 * here, or the CPU's) is not assumed to be one. */
static void test_never_rotates(void **state)
{
	struct perf_event_attr sw = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr tp = { .size = sizeof(tp), .type = PERF_TYPE_TRACEPOINT };
	struct perf_event_attr bp = { .size = sizeof(bp), .type = PERF_TYPE_BREAKPOINT };
	struct perf_event_attr hw = { .size = sizeof(hw), .type = PERF_TYPE_HARDWARE };
	struct perf_event_attr raw = { .size = sizeof(raw), .type = PERF_TYPE_RAW };
	struct perf_event_attr up = { .size = sizeof(up) };
	struct tc_perf_ev *e[6], *g1, *g2, *m1, *m2, *m3;
	long long type;
	(void)state;

	assert_int_equal(tc_perf_ev_new(&sw, "sw", &e[0]), 0);
	assert_int_equal(tc_perf_ev_new(&tp, "tp", &e[1]), 0);
	assert_int_equal(tc_perf_ev_new(&bp, "bp", &e[2]), 0);
	assert_int_equal(tc_perf_ev_new(&hw, "hw", &e[3]), 0);
	assert_int_equal(tc_perf_ev_new(&raw, "raw", &e[4]), 0);
	assert_true(tc_perf_ev_never_rotates(e[0]));
	assert_true(tc_perf_ev_never_rotates(e[1]));
	assert_true(tc_perf_ev_never_rotates(e[2]));
	assert_false(tc_perf_ev_never_rotates(e[3]));
	assert_false(tc_perf_ev_never_rotates(e[4]));
	assert_false(tc_perf_ev_never_rotates(NULL));
	e[5] = NULL;
	if (tc_read_int_file("/sys/bus/event_source/devices/uprobe/type", &type) == 0) {
		up.type = (uint32_t)type;
		assert_int_equal(tc_perf_ev_new(&up, "up", &e[5]), 0);
		assert_true(tc_perf_ev_never_rotates(e[5]));
	}
	if (tc_read_int_file("/sys/bus/event_source/devices/msr/type", &type) == 0) {
		struct tc_perf_ev *msr;
		up.type = (uint32_t)type;
		assert_int_equal(tc_perf_ev_new(&up, "msr", &msr), 0);
		assert_false(tc_perf_ev_never_rotates(msr));
		tc_perf_ev_free(msr);
	}

	/* groups: software only, and a hardware leader with a software member */
	assert_int_equal(tc_perf_ev_new(&sw, "g1", &g1), 0);
	assert_int_equal(tc_perf_ev_new(&tp, "m1", &m1), 0);
	assert_int_equal(tc_perf_ev_set_leader(m1, g1), 0);
	assert_true(tc_perf_ev_never_rotates(g1));
	assert_true(tc_perf_ev_never_rotates(m1));
	assert_int_equal(tc_perf_ev_new(&hw, "g2", &g2), 0);
	assert_int_equal(tc_perf_ev_new(&sw, "m2", &m2), 0);
	assert_int_equal(tc_perf_ev_set_leader(m2, g2), 0);
	assert_false(tc_perf_ev_never_rotates(m2));
	assert_false(tc_perf_ev_never_rotates(g2));
	/* a hardware member joining a software group takes it to the hardware PMU */
	assert_int_equal(tc_perf_ev_new(&raw, "m3", &m3), 0);
	assert_int_equal(tc_perf_ev_set_leader(m3, g1), 0);
	assert_false(tc_perf_ev_never_rotates(g1));
	assert_false(tc_perf_ev_never_rotates(m1));

	for (size_t i = 0; i < ARRAY_SIZE(e); i++)
		tc_perf_ev_free(e[i]);
	tc_perf_ev_free(m1);
	tc_perf_ev_free(m2);
	tc_perf_ev_free(m3);
	tc_perf_ev_free(g1);
	tc_perf_ev_free(g2);
}

/* The one rule: a time running of 0 is not counted, and no number, whatever the count
 * field says; the event read sums cells by it; an event open nowhere is not
 * supported. */
static void test_running_zero_rule(void **state)
{
	static const pid_t threads[] = { 21, 22 };
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	struct tc_perf_count v[2], e;
	struct fake f;
	(void)state;

	fake_begin(&f);
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, threads, 2), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "a", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "b", TACHO_GROUP_NONE), 1);
	f.fail_at = 1;   /* b's first cell: a and b on cell 0, then on cell 1 */
	f.fail_err = ENOENT;
	assert_int_equal(tc_perf_list_open(l, &g, 0), 0);
	f.fail_at = -1;
	/* { value, enabled, running, id }: a count with no running time on both cells */
	const uint64_t none0[] = { 77, 500, 0, f.o[0].id }, none1[] = { 5, 0, 0, f.o[2].id };
	feed(&f.o[0], none0, 4);
	feed(&f.o[2], none1, 4);
	const uint64_t b1[] = { 9, 100, 100, f.o[3].id };
	assert_int_equal(f.o[1].fd, -1);         /* b refused on its first cell */
	feed(&f.o[3], b1, 4);
	assert_int_equal(tc_perf_list_read(l, v), 0);
	assert_int_equal(v[0].status, TACHO_COUNT_NOT_COUNTED);
	assert_true(isnan(v[0].value));
	assert_int_equal(v[0].raw, 82);          /* kept for who wants it, never a value */
	assert_true(v[0].coverage == 0);
	/* b open on one cell of two: its value is that cell's */
	assert_int_equal(v[1].status, TACHO_COUNT_COUNTED);
	assert_true(v[1].value == 9);

	/* one cell without running time, one multiplexed: the first adds no number */
	const uint64_t c0[] = { 1000, 400, 0, f.o[0].id }, c1[] = { 100, 400, 200, f.o[2].id };
	feed(&f.o[0], c0, 4);
	feed(&f.o[2], c1, 4);
	assert_int_equal(tc_perf_ev_read(tc_perf_list_event(l, 0), &e), 0);
	assert_int_equal(e.status, TACHO_COUNT_MULTIPLEXED);
	assert_true(e.value == 200);
	assert_true(e.coverage == 0.25);
	tc_perf_list_free(l);

	/* open nowhere */
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "a", TACHO_GROUP_NONE), 0);
	f.fail_at = (int)f.n;
	f.fail_err = ENOENT;
	tc_perf_grid_exit(&g);
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, threads, 1), 0);
	assert_int_equal(tc_perf_list_open(l, &g, 0), 0);
	assert_int_equal(tc_perf_list_read(l, v), 0);
	assert_int_equal(v[0].status, TACHO_COUNT_NOT_SUPPORTED);
	assert_true(isnan(v[0].value));
	tc_perf_list_free(l);
	tc_perf_grid_exit(&g);
	fake_end(&f);
}

/* The sampling period goes to every open cell of the event, and to no other event. */
static void test_period(void **state)
{
	static const int cpus[] = { 0, 1 };
	static const pid_t threads[] = { 31, 32 };
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK);
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	size_t n = 0;
	struct fake f;
	(void)state;

	a.sample_period = 1;
	fake_begin(&f);
	f.gone = 32;
	assert_int_equal(tc_perf_grid_init(&g, cpus, 2, threads, 2), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "a", TACHO_GROUP_NONE), 0);
	assert_int_equal(tc_perf_list_add(l, &a, "b", TACHO_GROUP_NONE), 1);
	assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_SKIP_GONE), 0);
	f.nio = 0;
	assert_int_equal(tc_perf_ev_set_period(tc_perf_list_event(l, 1), 12345), 0);
	for (size_t i = 0; i < f.nio; i++) {
		const struct fake_open *o = by_fd(f.io[i].fd);
		assert_non_null(o);
		if (!o)
			return;
		assert_int_equal(f.io[i].req, PERF_EVENT_IOC_PERIOD);
		assert_int_equal(f.io[i].value, 12345);
		assert_int_equal(o->pid, 31);      /* the gone thread has no descriptor */
		assert_true(o == &f.o[1] || o == &f.o[3]);   /* b's, not a's (a, b per cell) */
		n++;
	}
	assert_int_equal(n, 2);
	tc_perf_list_free(l);
	tc_perf_grid_exit(&g);
	fake_end(&f);
}

/* --- the hot path --- */

static void fill_page(struct fake_open *o, uint32_t index, uint64_t offset, bool rdpmc)
{
	struct perf_event_mmap_page *pg = o->map;

	assert_non_null(pg);
	pg->lock = 2;
	pg->cap_user_rdpmc = rdpmc;
	pg->index = index;
	pg->pmc_width = 48;
	pg->offset = (int64_t)offset;
	pg->time_enabled = 100;
	pg->time_running = 100;
}

static struct tc_perf_list *hot_list(struct fake *f, size_t n, bool group_read)
{
	static const pid_t self = 0;
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct tc_perf_list *l;
	struct tc_perf_grid g;

	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, &self, 1), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(tc_perf_list_add(l, &a, "e", 0), (int)i);
	assert_int_equal(tc_perf_list_open(l, &g, group_read ? TC_PERF_GROUP_READ : 0), 0);
	tc_perf_grid_exit(&g);
	(void)f;
	return l;
}

/* Every page allows RDPMC: one RDPMC per event and no read(2). One event off its
 * counter at the moment of a read: that read is one read(2) of the group. A page that
 * does not allow RDPMC at set-up: the group read, always. */
static void test_fast_path_decision(void **state)
{
	struct tc_perf_hot_state st;
	struct tc_perf_list *l;
	uint64_t v[2];
	struct fake f;
	(void)state;

	fake_begin(&f);
	l = hot_list(&f, 2, true);
	/* hot_init learns the positions from one group read: the kernel lists B first */
	const uint64_t layout[] = { 2, 50, 50, 0, f.o[1].id, 0, f.o[0].id };
	assert_int_equal(tc_perf_list_hot_init(l), -EAGAIN);   /* nothing to read yet */
	feed(&f.o[0], layout, ARRAY_SIZE(layout));
	assert_int_equal(tc_perf_list_hot_init(l), 0);
	tc_perf_list_hot_state(l, &st);
	/* the pages as the fake mapped them (zero): no RDPMC */
	assert_int_equal(st.path, TC_PERF_HOT_GROUP_READ);
	/* now as a kernel that allows it writes them; the path is chosen at set-up */
	fill_page(&f.o[0], 1, 1000, true);     /* counter 0 */
	fill_page(&f.o[1], 3, 2000, true);     /* counter 2 */
	f.pmc[0] = 5;
	f.pmc[2] = 7;
	feed(&f.o[0], layout, ARRAY_SIZE(layout));
	assert_int_equal(tc_perf_list_hot_init(l), 0);
	tc_perf_list_hot_state(l, &st);
	assert_int_equal(st.path, TC_PERF_HOT_RDPMC);
	f.rdpmc_calls = 0;
	assert_int_equal(tc_perf_list_read_hot(l, v), 0);
	assert_int_equal(v[0], 1005);
	assert_int_equal(v[1], 2007);
	assert_int_equal(f.rdpmc_calls, 2);    /* one per event */
	tc_perf_list_hot_state(l, &st);
	assert_int_equal(st.reads_rdpmc, 1);
	assert_int_equal(st.reads_syscall, 0);
	assert_true(st.ran);
	assert_false(st.multiplexed);

	/* B off its counter now (index 0): this read takes the group's read(2), whose
	 * values the ids placed at set-up */
	((struct perf_event_mmap_page *)f.o[1].map)->index = 0;
	const uint64_t now[] = { 2, 80, 40, 222, f.o[1].id, 111, f.o[0].id };
	feed(&f.o[0], now, ARRAY_SIZE(now));
	assert_int_equal(tc_perf_list_read_hot(l, v), 0);
	assert_int_equal(v[0], 111);
	assert_int_equal(v[1], 222);
	tc_perf_list_hot_state(l, &st);
	assert_int_equal(st.reads_syscall, 1);
	assert_true(st.multiplexed);            /* running 40 < enabled 80 */
	tc_perf_list_free(l);

	/* a page without cap_user_rdpmc at set-up: the group read, every time */
	l = hot_list(&f, 2, true);
	feed(&f.o[2], (const uint64_t[]){ 2, 1, 1, 0, f.o[2].id, 0, f.o[3].id }, 7);
	assert_int_equal(tc_perf_list_hot_init(l), 0);
	fill_page(&f.o[2], 1, 0, true);
	fill_page(&f.o[3], 2, 0, false);
	feed(&f.o[2], (const uint64_t[]){ 2, 1, 1, 0, f.o[2].id, 0, f.o[3].id }, 7);
	assert_int_equal(tc_perf_list_hot_init(l), 0);
	tc_perf_list_hot_state(l, &st);
	assert_int_equal(st.path, TC_PERF_HOT_GROUP_READ);
	f.rdpmc_calls = 0;
	feed(&f.o[2], (const uint64_t[]){ 2, 9, 9, 4, f.o[2].id, 6, f.o[3].id }, 7);
	assert_int_equal(tc_perf_list_read_hot(l, v), 0);
	assert_int_equal(v[0], 4);
	assert_int_equal(v[1], 6);
	assert_int_equal(f.rdpmc_calls, 0);
	tc_perf_list_free(l);

	/* not a group read: one read(2) per event */
	l = hot_list(&f, 2, false);
	assert_int_equal(tc_perf_list_hot_init(l), 0);
	tc_perf_list_hot_state(l, &st);
	assert_int_equal(st.path, TC_PERF_HOT_EVENT_READS);
	feed(&f.o[4], (const uint64_t[]){ 31, 5, 5, f.o[4].id }, 4);
	feed(&f.o[5], (const uint64_t[]){ 32, 5, 5, f.o[5].id }, 4);
	assert_int_equal(tc_perf_list_read_hot(l, v), 0);
	assert_int_equal(v[0], 31);
	assert_int_equal(v[1], 32);
	tc_perf_list_free(l);
	fake_end(&f);
}

/* --- live, exact --- */

__attribute__((no_sanitize_address, noinline))
static void touch_pages(char *p, size_t n, size_t psz)
{
	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i * psz] = 1;
}

static volatile long watched;

/* page-faults and a write breakpoint in one group on this thread: the list's read and
 * the hot path agree, and both are exact. */
static void test_live_exact(void **state)
{
	static const pid_t self = 0;
	struct perf_event_attr pf = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr bp = { .size = sizeof(bp), .type = PERF_TYPE_BREAKPOINT,
				      .bp_type = HW_BREAKPOINT_W, .bp_len = HW_BREAKPOINT_LEN_8,
				      .exclude_kernel = 1 };
	long psz = sysconf(_SC_PAGESIZE);
	struct tc_perf_hot_state st;
	struct tc_perf_count v[2];
	struct tc_perf_list *l;
	struct tc_perf_grid g;
	uint64_t a[2], b[2];
	char *mem;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);
	NEED_SOURCE(TACHO_SOURCE_BREAKPOINT_DATA);

	bp.bp_addr = (uintptr_t)&watched;
	assert_int_equal(tc_perf_grid_init(&g, NULL, 0, &self, 1), 0);
	assert_int_equal(tc_perf_list_new(&l), 0);
	assert_int_equal(tc_perf_list_add(l, &pf, "page-faults", 0), 0);
	assert_int_equal(tc_perf_list_add(l, &bp, "mem:watched:w", 0), 1);
	assert_int_equal(tc_perf_list_open(l, &g, TC_PERF_GROUP_READ), 0);
	tc_perf_grid_exit(&g);
	if (!tc_perf_ev_nopen(tc_perf_list_event(l, 1))) {
		int err = tc_perf_ev_error(tc_perf_list_event(l, 1), NULL, NULL);
		tc_perf_list_free(l);
		TEST_SKIP("cannot open a breakpoint here: %s", tacho_strerror(err));
	}
	assert_int_equal(tc_perf_list_hot_init(l), 0);
	tc_perf_list_hot_state(l, &st);
	/* software events and breakpoints are never on a PMU counter */
	assert_int_equal(st.path, TC_PERF_HOT_GROUP_READ);
	mem = mmap(NULL, 40 * (size_t)psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	assert_true(mem != MAP_FAILED);
	madvise(mem, 40 * (size_t)psz, MADV_NOHUGEPAGE);
	watched = -1;
	assert_int_equal(tc_perf_list_enable(l), 0);
	assert_int_equal(tc_perf_list_read_hot(l, a), 0);
	touch_pages(mem, 40, (size_t)psz);
	for (long i = 0; i < 333; i++)
		watched = i;
	assert_int_equal(tc_perf_list_read_hot(l, b), 0);
	assert_int_equal(tc_perf_list_disable(l), 0);
	assert_int_equal(b[0] - a[0], 40);
	assert_int_equal(b[1] - a[1], 333);
	assert_int_equal(tc_perf_list_read(l, v), 0);
	assert_int_equal(v[0].status, TACHO_COUNT_COUNTED);
	assert_int_equal(v[0].raw, b[0]);
	assert_int_equal(v[1].status, TACHO_COUNT_COUNTED);
	assert_int_equal(v[1].raw, b[1]);
	/* reset zeroes the group at once */
	assert_int_equal(tc_perf_list_reset(l), 0);
	assert_int_equal(tc_perf_list_read(l, v), 0);
	assert_int_equal(v[0].raw, 0);
	assert_int_equal(v[1].raw, 0);
	munmap(mem, 40 * (size_t)psz);
	tc_perf_list_free(l);
}

/* The probe opens, maps, copies and closes: a dummy software event is never on a
 * counter. */
static void test_probe_live(void **state)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_DUMMY);
	struct tc_perf_page_info pg;
	int err;
	(void)state;

	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	memset(&pg, 0xff, sizeof(pg));
	err = tc_perf_probe(&a, &pg);
	if (err)
		TEST_SKIP("cannot open a software event: %s", tacho_strerror(err));
	assert_int_equal(pg.index, 0);
	assert_false(pg.cap_user_rdpmc);
	assert_int_equal(tc_perf_probe(&a, NULL), 0);
	a.type = 0x7ffffff0;   /* no such PMU */
	assert_true(tc_perf_probe(&a, NULL) < 0);
}

/* A hold opens one disabled copy of each kind of event worth holding, on the calling
 * thread, with the event's exclusions and nothing of its behaviour: page-faults once
 * though asked twice, a tracepoint, cycles, and context-switches user-only as asked;
 * not task-clock or cpu-clock (timers), a breakpoint (a debug register each) or
 * another PMU's event. A refused open is retried user-only (the :u fallback's user),
 * and one refused both ways is not held. */
static void test_hold(void **state)
{
	struct fake f;
	struct perf_event_attr pf = sw_attr(PERF_COUNT_SW_PAGE_FAULTS), pf2 = pf;
	struct perf_event_attr tc = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct perf_event_attr cc = sw_attr(PERF_COUNT_SW_CPU_CLOCK);
	struct perf_event_attr cs = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
	struct perf_event_attr bp = { .size = sizeof(bp), .type = PERF_TYPE_BREAKPOINT,
				      .bp_type = HW_BREAKPOINT_W, .bp_addr = 0x1000, .bp_len = 8 };
	struct perf_event_attr tp = { .size = sizeof(tp), .type = PERF_TYPE_TRACEPOINT,
				      .config = 42, .sample_period = 1 };
	struct perf_event_attr hw = { .size = sizeof(hw), .type = PERF_TYPE_HARDWARE,
				      .config = PERF_COUNT_HW_CPU_CYCLES };
	struct perf_event_attr other = { .size = sizeof(other), .type = 9, .config = 1 };
	const struct perf_event_attr *attrs[] = { &pf, &pf2, &tc, &cc, &cs, &bp, &tp, &hw, &other };
	struct tc_perf_hold *h;
	(void)state;

	pf.inherit = pf.enable_on_exec = pf.disabled = 1;
	pf.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED;
	pf2 = pf;
	cs.exclude_kernel = cs.exclude_hv = 1;
	fake_begin(&f);
	assert_int_equal(tc_perf_hold_open(attrs, ARRAY_SIZE(attrs), &h), 4);
	assert_non_null(h);
	assert_int_equal(f.n, 4);
	const uint32_t types[4] = { PERF_TYPE_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_TYPE_TRACEPOINT,
				    PERF_TYPE_HARDWARE };
	const uint64_t configs[4] = { PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES, 42,
				      PERF_COUNT_HW_CPU_CYCLES };
	for (size_t i = 0; i < 4; i++) {
		const struct fake_open *o = &f.o[i];
		assert_int_equal(o->attr.type, types[i]);
		assert_int_equal(o->attr.config, configs[i]);
		assert_int_equal(o->pid, 0);
		assert_int_equal(o->cpu, -1);
		assert_int_equal(o->group_fd, -1);
		assert_int_equal(o->attr.disabled, 1);
		assert_int_equal(o->attr.inherit, 0);
		assert_int_equal(o->attr.enable_on_exec, 0);
		assert_int_equal(o->attr.sample_period, 0);
		assert_int_equal(o->attr.read_format, 0);
		assert_int_equal(o->attr.exclude_kernel, i == 1);
	}
	tc_perf_hold_close(h);
	fake_end(&f);

	/* the first open refused: retried user-only; a tracepoint is never retried */
	const struct perf_event_attr *two[] = { &pf, &tp };
	fake_begin(&f);
	f.fail_at = 0;
	f.fail_err = EACCES;
	assert_int_equal(tc_perf_hold_open(two, 2, &h), 2);
	assert_int_equal(f.n, 3);
	assert_int_equal(f.o[1].attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(f.o[1].attr.exclude_kernel, 1);
	assert_int_equal(f.o[1].attr.exclude_hv, 1);
	assert_int_equal(f.o[2].attr.type, PERF_TYPE_TRACEPOINT);
	tc_perf_hold_close(h);
	fake_end(&f);

	/* nothing worth holding, or nothing at all: 0 and no hold */
	const struct perf_event_attr *none[] = { &tc, &bp };
	fake_begin(&f);
	assert_int_equal(tc_perf_hold_open(none, 2, &h), 0);
	assert_null(h);
	assert_int_equal(tc_perf_hold_open(none, 0, &h), 0);
	assert_null(h);
	assert_int_equal(f.n, 0);
	fake_end(&f);
	tc_perf_hold_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grid_rules),
		cmocka_unit_test_teardown(test_grid_opens, reset_hooks),
		cmocka_unit_test_teardown(test_skip_gone_and_context, reset_hooks),
		cmocka_unit_test_teardown(test_cgroup_mode, reset_hooks),
		cmocka_unit_test_teardown(test_old_kernel_no_group_read, reset_hooks),
		cmocka_unit_test_teardown(test_rings_set_output, reset_hooks),
		cmocka_unit_test_teardown(test_group_read_by_id, reset_hooks),
		cmocka_unit_test_teardown(test_running_zero_rule, reset_hooks),
		cmocka_unit_test_teardown(test_period, reset_hooks),
		cmocka_unit_test_teardown(test_fast_path_decision, reset_hooks),
		cmocka_unit_test(test_never_rotates),
		cmocka_unit_test(test_live_exact),
		cmocka_unit_test(test_probe_live),
		cmocka_unit_test_teardown(test_hold, reset_hooks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
