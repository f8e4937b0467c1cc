/* mset.c - a measurement set on the calling thread: opened by the engine as one group,
 * read through the perf mmap pages with RDPMC where the kernel allows it, otherwise
 * with one read(2) of the group. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "measure/mset.h"
#include "perf/perf.h"
#include "perf/rdpmc.h"

int tc_evset_from_list(struct tc_evset *s, const struct tacho_evlist *list)
{
	size_t n = tacho_evlist_count(list);

	memset(s, 0, sizeof(*s));
	if (!n)
		return 0;
	s->names = calloc(n, sizeof(*s->names));
	s->attrs = calloc(n, sizeof(*s->attrs));
	if (!s->names || !s->attrs)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		s->names[i] = tc_strdup(tacho_evlist_name(list, i));
		if (!s->names[i])
			goto oom;
		s->n = i + 1;
		if (tacho_evlist_attr(list, i, &s->attrs[i]))
			goto oom;
	}
	return 0;
oom:
	tc_evset_exit(s);
	return -ENOMEM;
}

void tc_evset_exit(struct tc_evset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->attrs);
	memset(s, 0, sizeof(*s));
}

void tc_mset_close(struct tc_mset *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->pg && i < m->n; i++)
		tc_perf_munmap_page(m->pg[i]);
	for (size_t i = 0; m->why && i < m->n; i++)
		free(m->why[i]);
	tacho_counters_free(m->c);
	free(m->err);
	free(m->why);
	free(m->pg);
	free(m->fds);
	free(m->pos);
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

/* The engine's counting read_format: TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID, with
 * GROUP when it reads groups whole. A group read is { nr, enabled, running,
 * { value, id }[nr] }; a single one { value, enabled, running, id }. */
static int map_group(struct tc_mset *m)
{
	uint64_t *ids = calloc(m->n, sizeof(*ids));
	ssize_t r;
	int err = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		if (m->fds[i] >= 0 && ioctl(m->fds[i], PERF_EVENT_IOC_ID, &ids[i]) < 0)
			ids[i] = 0;
	r = read(m->group_fd, m->buf, m->words * sizeof(uint64_t));
	if (r < 0) {
		err = -errno;
		goto out;
	}
	size_t got = (size_t)r / sizeof(uint64_t);
	if (got < 3 || got < 3 + 2 * m->buf[0]) {
		err = -EIO;
		goto out;
	}
	for (size_t i = 0; i < m->n; i++) {
		if (m->fds[i] < 0)
			continue;
		size_t k;
		for (k = 0; k < m->buf[0]; k++)
			if (m->buf[4 + 2 * k] == ids[i])
				break;
		if (k == m->buf[0]) {
			/* not in the leader's group: read each fd alone instead */
			m->group_fd = -1;
			goto out;
		}
		m->pos[i] = 3 + 2 * k;
	}
out:
	free(ids);
	return err;
}

int tc_mset_open(struct tc_mset *m, const struct tc_evset *s)
{
	struct tacho_counter_spec *specs = NULL;
	struct tacho_count *counts = NULL;
	struct tacho_counters_opts o = {
		.sz = sizeof(o), .target = TACHO_TARGET_THREAD, .pid = 0, .no_inherit = true,
	};
	int err;

	memset(m, 0, sizeof(*m));
	m->n = s->n;
	m->group_fd = -1;
	if (!s->n)
		return 0;
	specs = calloc(s->n, sizeof(*specs));
	counts = calloc(s->n, sizeof(*counts));
	m->err = calloc(s->n, sizeof(*m->err));
	m->why = calloc(s->n, sizeof(*m->why));
	m->pg = calloc(s->n, sizeof(*m->pg));
	m->fds = calloc(s->n, sizeof(*m->fds));
	m->pos = calloc(s->n, sizeof(*m->pos));
	m->words = 3 + 4 * s->n;
	m->buf = calloc(m->words, sizeof(*m->buf));
	if (!specs || !counts || !m->err || !m->why || !m->pg || !m->fds || !m->pos || !m->buf) {
		err = -ENOMEM;
		goto fail;
	}
	/* One group: every event is read by one read(2) and scheduled together. */
	for (size_t i = 0; i < s->n; i++) {
		specs[i].name = s->names[i];
		specs[i].attr = s->attrs[i];
		specs[i].group = 0;
	}
	err = tacho_counters_open(&o, specs, s->n, &m->c);
	if (err)
		goto fail;
	/* the statuses of events that did not open, with the engine's explanation */
	err = tacho_counters_read(m->c, counts, s->n);
	if (err)
		goto fail;
	m->rdpmc = true;
	size_t nopen = 0;
	for (size_t i = 0; i < s->n; i++) {
		m->fds[i] = tc_counters_fd(m->c, i, 0);
		if (m->fds[i] < 0) {
			m->err[i] = counts[i].err ? counts[i].err : -TACHO_ENOTCOUNTED;
			m->why[i] = tc_strdup(counts[i].why);
			continue;
		}
		nopen++;
		if (m->group_fd < 0)
			m->group_fd = m->fds[i];
		/* Mapping the page is what lets the kernel allow RDPMC on x86; where it
		 * fails (no memory for the page) the event is still read with read(2). */
		if (tc_perf_mmap_page(m->fds[i], &m->pg[i]))
			m->pg[i] = NULL;
		if (!m->pg[i] || !m->pg[i]->cap_user_rdpmc)
			m->rdpmc = false;
	}
	if (!nopen)
		m->rdpmc = false;
	err = tacho_counters_enable(m->c);
	if (err)
		goto fail;
	if (m->group_fd >= 0 && tc_counters_group_read(m->c)) {
		err = map_group(m);
		if (err)
			goto fail;
	} else {
		m->group_fd = -1;
	}
	free(specs);
	free(counts);
	return 0;
fail:
	free(specs);
	free(counts);
	tc_mset_close(m);
	return err;
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

int tc_mset_read(struct tc_mset *m, uint64_t *v)
{
	int err;

	if (m->rdpmc) {
		size_t i;
		for (i = 0; i < m->n; i++) {
			struct tc_pmc_value pv;
			if (m->fds[i] < 0) {
				v[i] = 0;
				continue;
			}
			/* the count only: the page's times compare as they would brought up
			 * to now, so no RDTSC per event per read */
			if (tc_pmc_read_page(m->pg[i], &tc_pmc_ops_cpu_count, &pv))
				break;   /* off its counter now: the whole set by read(2) */
			v[i] = pv.count;
			if (pv.running < pv.enabled)
				m->multiplexed = true;
			/* read through the page: index != 0, on its counter now */
			m->ran = true;
		}
		if (i == m->n) {
			m->reads_rdpmc++;
			return 0;
		}
	}
	m->reads_syscall++;
	if (m->group_fd >= 0) {
		err = read_one(m->group_fd, m->buf, m->words);
		if (err)
			return err;
		if (m->buf[2] < m->buf[1])
			m->multiplexed = true;
		if (m->buf[2])
			m->ran = true;
		for (size_t i = 0; i < m->n; i++)
			v[i] = m->fds[i] < 0 ? 0 : m->buf[m->pos[i]];
		return 0;
	}
	for (size_t i = 0; i < m->n; i++) {
		if (m->fds[i] < 0) {
			v[i] = 0;
			continue;
		}
		err = read_one(m->fds[i], m->buf, m->words);
		if (err)
			return err;
		if (m->buf[2] < m->buf[1])
			m->multiplexed = true;
		if (m->buf[2])
			m->ran = true;
		v[i] = m->buf[0];
	}
	return 0;
}
