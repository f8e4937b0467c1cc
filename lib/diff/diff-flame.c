/* diff-flame.c - the differential flame graph: two recordings' stacks merged into one
 * tree (a frame is a path of function names and binaries' file names from the process
 * down), each frame as wide as its share after (or before), red where the share grew
 * and blue where it shrank, drawn through export's flame graph (flamegraph.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "export/flamegraph.h"
#include "tacho/diff.h"
#include "tacho/report.h"
#include "util/util.h"

#define NO_ID UINT32_MAX

struct mnode {
	uint32_t name, dso;            /* pool ids (dso NO_ID: none) */
	uint32_t parent;
	uint64_t ev[2];                /* the events under it, before [0] and after [1] */
};

struct merge {
	struct tc_strpool pool;
	struct mnode *v;
	size_t n, cap;
	struct tc_hmap idx;            /* (parent, name, dso) -> child */
	int side;                      /* the recording being added: 0 before, 1 after */
	uint64_t total[2];             /* the root's events, each side */
	double most;                   /* the largest change of a frame, percentage points */
};

/* The TC_OPTS_VALID first version of struct tacho_flame_diff_opts. */
#define TC_OPTS_V1_tacho_flame_diff_opts tc_offsetofend(struct tacho_flame_diff_opts, width_before)

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int m_child(struct merge *m, uint32_t parent, uint32_t name, uint32_t dso, uint32_t *out)
{
	uint64_t key = tc_hash_u64(((uint64_t)parent << 32) ^ name) ^ tc_hash_u64(dso + 0x51ull);
	size_t pos = 0;
	uint32_t i;

	/* the key is a hash: confirm the whole of it */
	while (tc_hmap_next(&m->idx, key, &pos, &i))
		if (m->v[i].parent == parent && m->v[i].name == name && m->v[i].dso == dso) {
			*out = i;
			return 0;
		}
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 1024;
		struct mnode *nv = realloc(m->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->v = nv;
		m->cap = nc;
	}
	i = (uint32_t)m->n;
	m->v[i] = (struct mnode){ .name = name, .dso = dso, .parent = parent };
	if (tc_hmap_add(&m->idx, key, i))
		return -ENOMEM;
	m->n++;
	*out = i;
	return 0;
}

static int m_stack(void *arg, const struct tc_fg_loc *locs, size_t n, uint64_t period)
{
	struct merge *m = arg;
	uint32_t at = 0;

	m->v[0].ev[m->side] += period;
	for (size_t k = 0; k < n; k++) {
		uint32_t name, dso = NO_ID;
		int err = tc_strpool_intern(&m->pool, locs[k].name, &name);

		/* a binary by its file name, as the rows are matched */
		if (!err && locs[k].dso)
			err = tc_strpool_intern(&m->pool, base_name(locs[k].dso), &dso);
		if (!err)
			err = m_child(m, at, name, dso, &at);
		if (err)
			return err;
		m->v[at].ev[m->side] += period;
	}
	return 0;
}

static int m_add(struct merge *m, const char *path, int side, uint64_t *samples,
		 struct tacho_diag *diag)
{
	struct tacho_profile *p;
	struct tacho_profile_info info = { .sz = sizeof(info) };
	int err = tacho_profile_load(path, &p, diag);

	if (err)
		return err;
	m->side = side;
	err = tacho_profile_info(p, &info);
	if (!err)
		err = tc_profile_each_stack(p, m_stack, m);
	if (err)
		tc_diag_set(diag, path, 0, 0, err, "cannot read its stacks: %s",
			    tacho_strerror(err));
	*samples = info.samples;
	tacho_profile_free(p);
	return err;
}

/* Frame i's share of side s's events, percent (0 where the side has none). */
static double m_pct(const struct merge *m, uint32_t i, int s)
{
	return m->total[s] ? 100.0 * (double)m->v[i].ev[s] / (double)m->total[s] : 0;
}

static double m_change(const struct merge *m, uint32_t i)
{
	return m_pct(m, i, 1) - m_pct(m, i, 0);
}

/* Pale through deep red for growth, through blue for shrinkage, by the change against
 * the largest (the palest still tinted, so that a small change stands apart from the
 * grey of none and from the background). */
static void m_fill(void *arg, uint32_t i, char *buf, size_t size)
{
	const struct merge *m = arg;
	double c = m_change(m, i);
	unsigned g = m->most > 0 ? (unsigned)lround(230 - 195 * fabs(c) / m->most) : 230;

	if (c > 0)
		snprintf(buf, size, "rgb(255,%u,%u)", g, g);
	else if (c < 0)
		snprintf(buf, size, "rgb(%u,%u,255)", g, g);
	else
		snprintf(buf, size, "rgb(225,225,225)");
}

static void m_title(void *arg, uint32_t i, FILE *f)
{
	const struct merge *m = arg;
	const struct mnode *n = &m->v[i];

	tc_fg_xml_put(f, i ? tc_strpool_str(&m->pool, n->name) : "all");
	if (n->dso != NO_ID) {
		fputs(" (", f);
		tc_fg_xml_put(f, tc_strpool_str(&m->pool, n->dso));
		fputc(')', f);
	}
	fprintf(f, ": before %.2f%%, after %.2f%%, change %+.2f%%",
		m_pct(m, i, 0), m_pct(m, i, 1), m_change(m, i));
}

int tacho_profile_diff_write_flamegraph(const char *before_path, const char *after_path,
					const struct tacho_flame_diff_opts *opts, FILE *f,
					struct tacho_diag *diag)
{
	struct merge m = { .cap = 1024 };
	struct tc_fg_frame *v = NULL;
	struct tc_fg_page pg = { .fill = m_fill, .title = m_title, .arg = &m };
	uint64_t samples[2] = { 0, 0 };
	char *heading = NULL;
	bool before;
	int side, err;

	if (!before_path || !after_path || !f || tc_diag_check(diag))
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(opts, tacho_flame_diff_opts, diag);
	if (err)
		return err;
	before = TC_OPTS_GET(opts, tacho_flame_diff_opts, width_before, false);
	side = before ? 0 : 1;
	tc_strpool_init(&m.pool);
	tc_hmap_init(&m.idx);
	m.v = calloc(m.cap, sizeof(*m.v));
	if (!m.v) {
		err = -ENOMEM;
		goto out;
	}
	m.n = 1;   /* the root, "all" */
	m.v[0].name = NO_ID;
	m.v[0].dso = NO_ID;
	err = m_add(&m, before_path, 0, &samples[0], diag);
	if (!err)
		err = m_add(&m, after_path, 1, &samples[1], diag);
	if (err)
		goto out;
	m.total[0] = m.v[0].ev[0];
	m.total[1] = m.v[0].ev[1];
	v = malloc(m.n * sizeof(*v));
	if (!v || asprintf(&heading, "Differential flame graph: %s (%" PRIu64 " samples) to %s "
			   "(%" PRIu64 " samples), widths %s; red grew, blue shrank",
			   base_name(before_path), samples[0], base_name(after_path), samples[1],
			   before ? "before" : "after") < 0) {
		heading = NULL;
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < m.n; i++) {
		double c = fabs(m_change(&m, (uint32_t)i));

		if (c > m.most)
			m.most = c;
		v[i] = (struct tc_fg_frame){
			.name = i ? tc_strpool_str(&m.pool, m.v[i].name) : "all",
			.sub = m.v[i].dso != NO_ID ? tc_strpool_str(&m.pool, m.v[i].dso) : NULL,
			.parent = m.v[i].parent, .value = (double)m.v[i].ev[side] };
	}
	pg.heading = heading;
	pg.v = v;
	pg.n = m.n;
	err = tc_fg_draw(f, &pg);
out:
	if (err == -ENOMEM && diag && !diag->message[0])
		tc_diag_set(diag, "flame graph", 0, 0, err, "out of memory");
	free(heading);
	free(v);
	free(m.v);
	tc_hmap_exit(&m.idx);
	tc_strpool_exit(&m.pool);
	return err;
}
