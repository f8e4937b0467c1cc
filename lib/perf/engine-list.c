/* engine-list.c - the engine's list of events over one grid: groups, the open with the
 * kernel's fallbacks, enable/disable for all, the read of all with a status per value,
 * sample ids, one ring per CPU (SET_OUTPUT), poll and drain, and the hot path that
 * regions read a one-thread group with. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/engine-int.h"
#include "tacho/errors.h"

int tc_perf_list_new(struct tc_perf_list **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void hot_exit(struct tc_perf_hot *h)
{
	free(h->fds);
	free(h->pages);
	free(h->pos);
	free(h->buf);
	memset(h, 0, sizeof(*h));
}

static void rings_exit(struct tc_perf_list *l)
{
	for (size_t i = 0; i < l->nrings; i++)
		tc_ring_exit(&l->rings[i]);
	free(l->rings);
	free(l->ring_fd);
	free(l->pfd);
	l->rings = NULL;
	l->ring_fd = NULL;
	l->pfd = NULL;
	l->nrings = 0;
}

/* Members before their leader: the kernel keeps a group while a member holds it. */
static void close_all(struct tc_perf_list *l)
{
	hot_exit(&l->hot);
	rings_exit(l);
	for (size_t i = l->nev; i-- > 0;)
		tc_perf_ev_close(l->ev[i]);
	free(l->ids);
	l->ids = NULL;
	l->nids = 0;
}

void tc_perf_list_free(struct tc_perf_list *l)
{
	if (!l)
		return;
	close_all(l);
	for (size_t i = 0; i < l->nev; i++)
		tc_perf_ev_free(l->ev[i]);
	free(l->ev);
	free(l->group);
	free(l->sums);
	tc_perf_grid_exit(&l->grid);
	free(l);
}

int tc_perf_list_add(struct tc_perf_list *l, const struct perf_event_attr *attr,
		     const char *name, int group)
{
	struct tc_perf_ev *e;
	int err;

	if (!l || !attr || l->opened)
		return -EINVAL;
	if (l->nev == l->aev) {
		size_t n = l->aev ? 2 * l->aev : 8;
		struct tc_perf_ev **ev = realloc(l->ev, n * sizeof(*ev));
		int *g;
		if (!ev)
			return -ENOMEM;
		l->ev = ev;
		g = realloc(l->group, n * sizeof(*g));
		if (!g)
			return -ENOMEM;
		l->group = g;
		l->aev = n;
	}
	err = tc_perf_ev_new(attr, name, &e);
	if (err)
		return err;
	/* the first event of a group number leads it; later ones join in order */
	for (size_t i = 0; group >= 0 && i < l->nev; i++) {
		if (l->group[i] != group)
			continue;
		err = tc_perf_ev_set_leader(e, l->ev[i]);
		if (err) {
			tc_perf_ev_free(e);
			return err;
		}
		break;
	}
	e->idx = l->nev;
	l->group[l->nev] = group;
	l->ev[l->nev++] = e;
	return (int)e->idx;
}

size_t tc_perf_list_count(const struct tc_perf_list *l)
{
	return l ? l->nev : 0;
}

struct tc_perf_ev *tc_perf_list_event(const struct tc_perf_list *l, size_t i)
{
	return l && i < l->nev ? l->ev[i] : NULL;
}

static int cmp_id(const void *a, const void *b)
{
	const struct tc_perf_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Every (id, event) pair, sorted: a sample names its event by id, and there is one id
 * per event, CPU and (with several threads) thread, so a linear scan would grow with
 * all three. */
static int index_ids(struct tc_perf_list *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nev; i++)
		n += l->ev[i]->nopen;
	l->ids = calloc(n ? n : 1, sizeof(*l->ids));
	if (!l->ids)
		return -ENOMEM;
	for (size_t i = 0; i < l->nev; i++) {
		const struct tc_perf_ev *e = l->ev[i];
		for (size_t c = 0; c < e->ncells; c++)
			if (e->fds[c] >= 0 && e->ids[c]) {
				l->ids[l->nids].id = e->ids[c];
				l->ids[l->nids++].ev = (uint32_t)i;
			}
	}
	qsort(l->ids, l->nids, sizeof(*l->ids), cmp_id);
	return 0;
}

/* Out of descriptors half-way through a group (EMFILE, ENFILE): the group counts
 * together or not at all, so on that cell the others are closed too and take that
 * refusal as theirs (the group would have opened with more descriptors). Other
 * refusals keep the rest open: an event this machine does not support leaves its
 * group's others counting, as the regions and stat's automatic groups rely on. */
static void groups_whole(struct tc_perf_list *l)
{
	for (size_t i = 0; i < l->nev; i++) {
		struct tc_perf_ev *g = l->ev[i];

		if (g->leader || g->nmembers < 2)
			continue;
		for (size_t c = 0; c < g->ncells; c++) {
			const struct tc_perf_ev *bad = NULL;
			for (size_t m = 0; m < g->nmembers && !bad; m++)
				if (g->members[m]->fds[c] < 0 &&
				    (g->members[m]->err == -EMFILE || g->members[m]->err == -ENFILE))
					bad = g->members[m];
			if (!bad)
				continue;
			/* members before their leader: the kernel keeps a group while a
			 * member holds it */
			for (size_t m = g->nmembers; m-- > 0;) {
				struct tc_perf_ev *e = g->members[m];
				if (e->fds[c] < 0)
					continue;
				close(e->fds[c]);
				e->fds[c] = -1;
				e->nopen--;
				if (!e->err) {
					e->err = bad->err;
					e->err_flags = bad->err_flags;
					e->err_attr = bad->err_attr;
				}
			}
		}
	}
}

/* Opens every event, cell by cell and group by group: on each cell every leader in the
 * list's order, each followed at once by its members in theirs, then the next cell.
 * The order matters to the kernel where events are inherited with inherit_stat: when it
 * switches between two threads whose contexts are copies of one another it swaps the
 * contexts, and with them each pair of events' counts, pairing the events of the two
 * lists by position (kernel/events/core.c, perf_event_sync_stat). A copy's list is
 * built from the parent's groups tree, sorted by CPU, then PMU, then the order of the
 * opens, a leader followed by its members; the parent's own list is in the order of
 * the opens. Opened event by event over the CPUs the two orders differed, and counts
 * moved between events at each such switch (a thread's reads showed up as another's
 * writes). Opened cell by cell and group by group they are the same, as long as the
 * groups of one CPU are led by events of one PMU (tc_stat_cells_open sees to that).
 * 0; 1 when the kernel refuses group reads of inherited events (everything is closed
 * again); -errno. */
static int open_all(struct tc_perf_list *l, const struct tc_perf_grid *g, unsigned flags)
{
	size_t ncells = l->grid.ncpus * l->grid.nthreads;   /* g made whole (NULL: { -1 }) */
	int err = 0;

	/* leaders first: a member's open checks its leader's grid */
	for (int pass = 0; pass < 2 && !err; pass++)
		for (size_t i = 0; i < l->nev && !err; i++)
			if (!l->ev[i]->leader == !pass)
				err = tc_perf_ev_open_begin(l->ev[i], g, flags);
	for (size_t c = 0; c < ncells && !err; c++) {
		for (size_t i = 0; i < l->nev && !err; i++) {
			const struct tc_perf_ev *e = l->ev[i];

			if (e->leader)
				continue;   /* opened right after its leader */
			for (size_t m = 0; m < e->nmembers && !err; m++)
				err = tc_perf_ev_open_cell(e->members[m], c);
		}
	}
	if (err) {
		close_all(l);
		return err;
	}
	groups_whole(l);
	return 0;
}

int tc_perf_list_open(struct tc_perf_list *l, const struct tc_perf_grid *g, unsigned flags)
{
	int err;

	if (!l || !g || l->opened)
		return -EINVAL;
	err = tc_perf_grid_init(&l->grid, g->cpus, g->ncpus, g->threads, g->nthreads);
	if (err)
		return err;
	l->sums = calloc(l->nev ? l->nev : 1, sizeof(*l->sums));
	if (!l->sums) {
		err = -ENOMEM;
		goto out_grid;
	}
	err = open_all(l, g, flags);
	if (err == 1) {
		tc_log(TACHO_LOG_INFO, "this kernel refuses group reads of inherited events: "
		       "reading each event by itself");
		flags &= ~TC_PERF_GROUP_READ;
		err = open_all(l, g, flags);
	}
	if (!err)
		err = index_ids(l);
	if (err) {
		close_all(l);
		err = err < 0 ? err : -EINVAL;
		goto out_sums;
	}
	l->flags = flags;
	l->opened = true;
	return 0;

out_sums:
	free(l->sums);
	l->sums = NULL;
out_grid:
	tc_perf_grid_exit(&l->grid);
	return err;
}

unsigned tc_perf_list_flags(const struct tc_perf_list *l)
{
	return l->flags;
}

const struct tc_perf_grid *tc_perf_list_grid(const struct tc_perf_list *l)
{
	return l && l->opened ? &l->grid : NULL;
}

static int list_ioctl(struct tc_perf_list *l, int (*fn)(struct tc_perf_ev *))
{
	int first = 0;

	if (!l)
		return -EINVAL;
	for (size_t i = 0; i < l->nev; i++) {
		int err;
		if (l->ev[i]->leader)
			continue;   /* its leader's ioctl reaches it */
		err = fn(l->ev[i]);
		if (err && !first)
			first = err;
	}
	return first;
}

int tc_perf_list_enable(struct tc_perf_list *l)
{
	return list_ioctl(l, tc_perf_ev_enable);
}

int tc_perf_list_disable(struct tc_perf_list *l)
{
	return list_ioctl(l, tc_perf_ev_disable);
}

int tc_perf_list_reset(struct tc_perf_list *l)
{
	return list_ioctl(l, tc_perf_ev_reset);
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

/* One read(2) of group g (its leader) on cell c, spread over the members' sums. */
static int read_group_cell(struct tc_perf_list *l, struct tc_perf_ev *g, size_t c)
{
	uint64_t *b = g->buf;
	int fd = tc_perf_ev_group_fd(g, c);
	size_t got;
	int err;

	if (fd < 0)
		return 0;
	/* { nr, time_enabled, time_running, { value, id } [nr] } */
	err = read_fd(fd, b, g->words, &got);
	if (err)
		return err;
	if (got == 0) {
		/* perf_event_open(2), "pinned": a pinned group that could not get its
		 * counters is in error state and read() returns 0 until it is enabled
		 * again; it counted nothing, the others are still good */
		for (size_t m = 0; m < g->nmembers; m++)
			if (g->members[m]->fds[c] >= 0)
				l->sums[g->members[m]->idx].eof = true;
		return 0;
	}
	if (got < 3 || b[0] > g->nmembers || b[0] > (got - 3) / 2)
		return -EIO;
	/* the kernel lists the members in the order they joined the group, so the
	 * search for an id starts after the previous match: one comparison per member
	 * in the usual case, whatever the order in any case */
	for (uint64_t k = 0, from = 0; k < b[0]; k++) {
		uint64_t val = b[3 + 2 * k], id = b[4 + 2 * k];
		for (size_t t = 0; t < g->nmembers; t++) {
			size_t m = (from + t) % g->nmembers;
			const struct tc_perf_ev *e = g->members[m];
			if (e->fds[c] >= 0 && e->ids[c] == id) {
				tc_perf_sum_add(&l->sums[e->idx], val, b[1], b[2]);
				from = m + 1;
				break;
			}
		}
	}
	return 0;
}

int tc_perf_list_read(struct tc_perf_list *l, struct tc_perf_count *out)
{
	bool group_read;
	int err = 0;

	if (!l || (l->nev && !out))
		return -EINVAL;
	if (!l->opened) {
		for (size_t i = 0; i < l->nev; i++)
			tc_perf_sum_finish(&(struct tc_perf_sum){ 0 }, NULL, &out[i]);
		return 0;
	}
	group_read = l->flags & TC_PERF_GROUP_READ;
	memset(l->sums, 0, l->nev * sizeof(*l->sums));
	for (size_t i = 0; i < l->nev && !err; i++) {
		struct tc_perf_ev *g = l->ev[i];
		if (g->leader)
			continue;
		for (size_t c = 0; c < l->grid.ncpus * l->grid.nthreads && !err; c++) {
			if (group_read) {
				err = read_group_cell(l, g, c);
				continue;
			}
			for (size_t m = 0; m < g->nmembers && !err; m++) {
				struct tc_perf_ev *e = g->members[m];
				uint64_t raw, ena, run;
				bool eof;
				int r = tc_perf_ev_read_cell(e, c, &raw, &ena, &run, &eof);
				if (r < 0)
					err = r;
				else if (r == 0 && eof)
					l->sums[e->idx].eof = true;
				else if (r == 0)
					tc_perf_sum_add(&l->sums[e->idx], raw, ena, run);
			}
		}
	}
	if (err)
		return err;
	for (size_t i = 0; i < l->nev; i++)
		tc_perf_sum_finish(&l->sums[i], l->ev[i], &out[i]);
	return 0;
}

int tc_perf_list_event_of_id(const struct tc_perf_list *l, uint64_t id)
{
	struct tc_perf_id key = { .id = id };
	const struct tc_perf_id *f;

	if (!l || !l->nids)
		return -1;
	f = bsearch(&key, l->ids, l->nids, sizeof(*l->ids), cmp_id);
	return f ? (int)f->ev : -1;
}

/* --- rings --- */

int tc_perf_list_mmap(struct tc_perf_list *l, unsigned data_pages, size_t *bad, bool *sharing)
{
	size_t nc, nt;
	int err;

	if (!l || !l->opened || l->rings || !data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	nc = l->grid.ncpus;
	nt = l->grid.nthreads;
	l->rings = calloc(nc, sizeof(*l->rings));
	l->ring_fd = malloc(nc * sizeof(*l->ring_fd));
	l->pfd = calloc(nc + TC_PERF_POLL_EXTRA, sizeof(*l->pfd));
	if (!l->rings || !l->ring_fd || !l->pfd) {
		rings_exit(l);
		return -ENOMEM;
	}
	for (size_t k = 0; k < nc; k++) {
		int owner = -1;

		for (size_t i = 0; i < l->nev; i++) {
			for (size_t t = 0; t < nt; t++) {
				int fd = l->ev[i]->fds[k * nt + t];

				if (fd < 0)
					continue;
				if (owner < 0) {
					/* the first descriptor on this CPU owns its ring */
					err = tc_ring_mmap(&l->rings[l->nrings], fd, data_pages);
					if (!err) {
						owner = fd;
						l->ring_fd[l->nrings++] = fd;
					}
				} else {
					err = tc_perf_ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
							    (unsigned long)owner);
				}
				if (err) {
					if (bad)
						*bad = i;
					if (sharing)
						*sharing = owner >= 0;
					return err;
				}
			}
		}
	}
	for (size_t i = 0; i < l->nrings; i++) {
		l->pfd[i].fd = l->ring_fd[i];
		l->pfd[i].events = POLLIN;
	}
	return 0;
}

size_t tc_perf_list_nrings(const struct tc_perf_list *l)
{
	return l ? l->nrings : 0;
}

int tc_perf_list_poll(struct tc_perf_list *l, int timeout_ms, const int *extra, short *revents,
		      size_t nextra)
{
	struct pollfd local[TC_PERF_POLL_EXTRA], *p = l->pfd ? l->pfd : local;
	size_t n = l->pfd ? l->nrings : 0;
	int r;

	if (nextra > TC_PERF_POLL_EXTRA)
		return -EINVAL;
	for (size_t i = 0; i < nextra; i++) {
		p[n + i].fd = extra[i];
		p[n + i].events = POLLIN;
		p[n + i].revents = 0;
	}
	r = poll(p, n + nextra, timeout_ms);
	if (r < 0)
		return -errno;
	for (size_t i = 0; r > 0 && i < n; i++)
		if (p[i].revents & (POLLHUP | POLLERR))
			p[i].fd = -1;   /* the target is gone: drained, never polled again */
	for (size_t i = 0; i < nextra; i++)
		revents[i] = p[n + i].revents;
	return r;
}

int tc_perf_list_drain(struct tc_perf_list *l, tc_ring_fn *fn, void *arg)
{
	for (size_t i = 0; l && i < l->nrings; i++) {
		int n = tc_ring_drain(&l->rings[i], fn, arg);
		if (n == -TACHO_ECORRUPT)
			tc_log(TACHO_LOG_WARN, "the sample buffer of CPU ring %zu was inconsistent; "
			       "its unread records were dropped", i);
		else if (n < 0)
			return n;
	}
	return 0;
}

/* --- the hot path --- */

/* Where each open event's value sits in one read(2) of the group: mapped by id once,
 * so that the hot path only copies. False when an event is not in the group that the
 * first one leads. */
static int map_group(struct tc_perf_list *l, struct tc_perf_hot *h, bool *all)
{
	size_t got;
	int err;

	*all = false;
	err = read_fd(h->group_fd, h->buf, h->words, &got);
	if (err)
		return err;
	if (got < 3 || h->buf[0] > (got - 3) / 2)
		return -EIO;
	for (size_t i = 0; i < l->nev; i++) {
		size_t k;
		if (h->fds[i] < 0)
			continue;
		for (k = 0; k < h->buf[0]; k++)
			if (h->buf[4 + 2 * k] == l->ev[i]->ids[0])
				break;
		if (k == h->buf[0])
			return 0;
		h->pos[i] = 3 + 2 * k;
	}
	*all = true;
	return 0;
}

int tc_perf_list_hot_init(struct tc_perf_list *l)
{
	struct tc_perf_hot *h;
	size_t nopen = 0;
	bool rdpmc, all;
	int err;

	if (!l || !l->opened || l->grid.ncpus * l->grid.nthreads != 1)
		return -EINVAL;
	h = &l->hot;
	hot_exit(h);
	h->words = 4 + 2 * l->nev;
	h->fds = calloc(l->nev ? l->nev : 1, sizeof(*h->fds));
	h->pages = calloc(l->nev ? l->nev : 1, sizeof(*h->pages));
	h->pos = calloc(l->nev ? l->nev : 1, sizeof(*h->pos));
	h->buf = calloc(h->words, sizeof(*h->buf));
	if (!h->fds || !h->pages || !h->pos || !h->buf) {
		hot_exit(h);
		return -ENOMEM;
	}
	h->group_fd = -1;
	h->ops = tc_perf_pmc_ops(false);
	rdpmc = h->ops != NULL;
	for (size_t i = 0; i < l->nev; i++) {
		struct tc_perf_ev *e = l->ev[i];

		h->fds[i] = e->fds[0];
		if (h->fds[i] < 0)
			continue;
		nopen++;
		if (h->group_fd < 0)
			h->group_fd = h->fds[i];
		/* Mapping the page is what lets the kernel allow RDPMC on x86; where it
		 * fails (no memory for the page) the event is still read with read(2). */
		tc_perf_ev_map_pages(e);
		h->pages[i] = e->pages ? e->pages[0] : NULL;
		if (!h->pages[i] || !h->pages[i]->cap_user_rdpmc)
			rdpmc = false;
	}
	if (!(l->flags & TC_PERF_GROUP_READ))
		h->group_fd = -1;
	if (h->group_fd >= 0) {
		err = map_group(l, h, &all);
		if (err) {
			hot_exit(h);
			return err;
		}
		if (!all)
			h->group_fd = -1;   /* not one group: read each event instead */
	}
	h->path = !nopen ? TC_PERF_HOT_NONE : rdpmc ? TC_PERF_HOT_RDPMC :
		  h->group_fd >= 0 ? TC_PERF_HOT_GROUP_READ : TC_PERF_HOT_EVENT_READS;
	h->ready = true;
	return 0;
}

static int read_one(int fd, uint64_t *buf, size_t words)
{
	ssize_t r;

	do
		r = read(fd, buf, words * sizeof(uint64_t));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r < (ssize_t)(3 * sizeof(uint64_t)) ? -EIO : 0;
}

int tc_perf_list_read_hot(struct tc_perf_list *l, uint64_t *v)
{
	struct tc_perf_hot *h;
	int err;

	if (tc_unlikely(!l || !l->hot.ready))
		return -EINVAL;
	h = &l->hot;
	if (h->path == TC_PERF_HOT_RDPMC) {
		size_t i;
		for (i = 0; i < l->nev; i++) {
			struct tc_pmc_value pv;
			if (h->fds[i] < 0) {
				v[i] = 0;
				continue;
			}
			/* the count only: the page's times compare as they would brought up
			 * to now, so no RDTSC per event per read */
			if (tc_pmc_read_page(h->pages[i], h->ops, &pv))
				break;   /* off its counter now: the whole set by read(2) */
			v[i] = pv.count;
			if (pv.running < pv.enabled)
				TC_WRITE_ONCE(h->multiplexed, true);
			/* read through the page: index != 0, on its counter now */
			TC_WRITE_ONCE(h->ran, true);
		}
		if (i == l->nev) {
			TC_WRITE_ONCE(h->reads_rdpmc, h->reads_rdpmc + 1);
			return 0;
		}
	}
	TC_WRITE_ONCE(h->reads_syscall, h->reads_syscall + 1);
	if (h->group_fd >= 0) {
		err = read_one(h->group_fd, h->buf, h->words);
		if (err)
			return err;
		if (h->buf[2] < h->buf[1])
			TC_WRITE_ONCE(h->multiplexed, true);
		if (h->buf[2])
			TC_WRITE_ONCE(h->ran, true);
		for (size_t i = 0; i < l->nev; i++)
			v[i] = h->fds[i] < 0 ? 0 : h->buf[h->pos[i]];
		return 0;
	}
	for (size_t i = 0; i < l->nev; i++) {
		uint64_t ena, run;
		bool eof;

		if (h->fds[i] < 0) {
			v[i] = 0;
			continue;
		}
		err = tc_perf_ev_read_cell(l->ev[i], 0, &v[i], &ena, &run, &eof);
		if (err)
			return err < 0 ? err : -EIO;
		if (run < ena)
			TC_WRITE_ONCE(h->multiplexed, true);
		if (run)
			TC_WRITE_ONCE(h->ran, true);
	}
	return 0;
}

void tc_perf_list_hot_state(const struct tc_perf_list *l, struct tc_perf_hot_state *out)
{
	const struct tc_perf_hot *h = &l->hot;

	/* the owner thread's hot path writes these without a lock while a report on
	 * another thread reads them */
	out->path = h->path;
	out->multiplexed = TC_READ_ONCE(h->multiplexed);
	out->ran = TC_READ_ONCE(h->ran);
	out->reads_rdpmc = TC_READ_ONCE(h->reads_rdpmc);
	out->reads_syscall = TC_READ_ONCE(h->reads_syscall);
}
