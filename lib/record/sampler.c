/* sampler.c - the always-on sampler (tacho/record.h, "Always-on sampling"): a
 * recording of every CPU that never ends, whose records come to this file instead of a
 * file (tc_record_hooks.sink), are aggregated into slices of a rolling window, and are
 * written back as a small record file, then pprof, when a profile is asked for.
 *
 * What is held, under one mutex (the sampler's thread adds, callers read):
 * - the head: the records a report needs once (META, EVENT, PERIOD, IMAGE, TPFORMAT);
 * - the sideband: MMAP, COMM and TASK fork records, in the order they came, each with
 *   a serial number; a process's leave when the last slice from before its exit left
 *   (a pid used again later keeps the records that came after the exit);
 * - the slices, oldest first: per slice a hash of (pid, tid, event, misc, ip, chain)
 *   -> count, summed period and latest time.
 * The pprof of what is held is the export part's (export/sampler-pprof.c): this file
 * writes it as a record file (tc_sampler_write_file). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"
#include "record/recfile.h"
#include "output/output.h"
#include "util/util.h"
#include "tacho/record.h"

#define DEFAULT_FREQ 19
#define DEFAULT_WINDOW_S 60
#define DEFAULT_MAX_BYTES (64ull << 20)
#define MAX_SPAN_S 86400u
#define FLUSH_MS 1000   /* the rings are read once a second: the sampler's cost */

#define TC_OPTS_V1_tacho_sampler_opts tc_offsetofend(struct tacho_sampler_opts, max_bytes)
#define STATS_SZ_V1 tc_offsetofend(struct tacho_sampler_stats, event)

/* One distinct stack of a slice. */
struct entry {
	uint64_t hash;
	uint64_t count, period, time;
	uint64_t ip;
	uint32_t pid, tid, nr;
	uint16_t event, misc;
	uint64_t chain[];
};

struct slice {
	uint64_t seq;
	uint64_t start, end;             /* CLOCK_MONOTONIC ns; end 0: the current one */
	struct entry **e;
	size_t n, cap;
	struct tc_hmap index;            /* hash -> index in e */
	uint64_t samples, bytes;
};

/* A record kept whole (header, payload), as it came. */
struct kept {
	uint64_t serial;
	uint32_t pid;
	uint32_t size;
	unsigned char raw[];
};

struct death {
	uint32_t pid;
	uint64_t serial;                 /* records of pid before this one are its */
	uint64_t seq;                    /* the slice it happened in */
};

struct tacho_sampler {
	struct tacho_sampler_opts o;
	uint64_t slice_ns, window_ns;
	pthread_mutex_t mu;
	struct tc_sb in;                 /* the file header, then a flush's records */
	bool have_header;
	struct kept **head, **side;
	size_t nhead, headcap, nside, sidecap;
	uint64_t serial;
	struct death *deaths;
	size_t ndeaths, deathcap;
	struct slice **sl;               /* oldest first; the last one is current */
	size_t nsl, slcap;
	uint64_t next_seq;
	uint64_t side_bytes;
	bool ran;
	struct tacho_sampler_stats st;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t entry_size(uint32_t nr)
{
	return sizeof(struct entry) + nr * sizeof(uint64_t);
}

static void slice_free(struct slice *sl)
{
	if (!sl)
		return;
	for (size_t i = 0; i < sl->n; i++)
		free(sl->e[i]);
	free(sl->e);
	tc_hmap_exit(&sl->index);
	free(sl);
}

/* the bytes a slice holds, its table included */
static uint64_t slice_bytes(const struct slice *sl)
{
	return sizeof(*sl) + sl->bytes + sl->cap * sizeof(*sl->e) +
	       sl->index.cap * (sizeof(*sl->index.keys) + sizeof(*sl->index.vals));
}

static uint64_t held_bytes(const struct tacho_sampler *s)
{
	uint64_t b = s->side_bytes + s->in.alloc +
		     (s->headcap + s->sidecap) * sizeof(void *) +
		     s->deathcap * sizeof(struct death) + s->slcap * sizeof(void *);

	for (size_t i = 0; i < s->nsl; i++)
		b += slice_bytes(s->sl[i]);
	return b;
}

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t nc;
	void *nv;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	nv = realloc(*v, nc * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

static int new_slice(struct tacho_sampler *s, uint64_t now)
{
	struct slice *sl = calloc(1, sizeof(*sl));

	if (!sl || grow((void **)&s->sl, &s->slcap, s->nsl + 1, sizeof(*s->sl))) {
		free(sl);
		return -ENOMEM;
	}
	sl->seq = s->next_seq++;
	sl->start = now;
	s->sl[s->nsl++] = sl;
	return 0;
}

/* The oldest slice leaves; its samples count as dropped for the window or memory. */
static void drop_oldest(struct tacho_sampler *s, bool memory)
{
	struct slice *sl = s->sl[0];

	if (memory) {
		s->st.dropped_memory += sl->samples;
		s->st.dropped_slices++;
	} else {
		s->st.dropped_window += sl->samples;
	}
	slice_free(sl);
	memmove(s->sl, s->sl + 1, (s->nsl - 1) * sizeof(*s->sl));
	s->nsl--;
}

/* The sideband of processes that exited before every held slice began leaves. */
static void prune_side(struct tacho_sampler *s)
{
	uint64_t oldest = s->nsl ? s->sl[0]->seq : s->next_seq;
	struct tc_hmap ripe = TC_HMAP_INIT;
	size_t keep = 0, kd = 0;
	bool any = false;

	for (size_t i = 0; i < s->ndeaths; i++) {
		struct death *d = &s->deaths[i];
		uint32_t prev;
		if (d->seq >= oldest) {
			s->deaths[kd++] = *d;
			continue;
		}
		/* the latest exit of a pid covers the earlier ones; serials stay below
		 * 2^32 in practice, and a wrapped one only keeps records longer */
		if (!tc_hmap_get(&ripe, d->pid, &prev) || prev < (uint32_t)d->serial)
			if (tc_hmap_put(&ripe, d->pid, (uint32_t)d->serial)) {
				s->deaths[kd++] = *d;   /* out of memory: later */
				continue;
			}
		any = true;
	}
	s->ndeaths = kd;
	if (any) {
		for (size_t i = 0; i < s->nside; i++) {
			struct kept *k = s->side[i];
			uint32_t until;
			if (tc_hmap_get(&ripe, k->pid, &until) && k->serial < until) {
				s->side_bytes -= sizeof(*k) + k->size;
				free(k);
			} else {
				s->side[keep++] = k;
			}
		}
		s->nside = keep;
	}
	tc_hmap_exit(&ripe);
}

/* Slices past the window leave, a new one begins when the current one is over, and
 * the oldest leave while the memory held is over the cap. */
static void rotate(struct tacho_sampler *s, uint64_t now)
{
	struct slice *cur = s->nsl ? s->sl[s->nsl - 1] : NULL;

	if (cur && now - cur->start >= s->slice_ns) {
		cur->end = now;
		cur = NULL;
	}
	if (!cur)
		new_slice(s, now);   /* out of memory: the next call tries again */
	while (s->nsl > 1 && s->sl[0]->end && s->sl[0]->end + s->window_ns <= now)
		drop_oldest(s, false);
	while (s->nsl > 1 && held_bytes(s) > s->o.max_bytes)
		drop_oldest(s, true);
	prune_side(s);
}

static int keep_record(struct tacho_sampler *s, struct kept ***v, size_t *n, size_t *cap,
		       const unsigned char *raw, uint32_t size, uint32_t pid)
{
	struct kept *k;

	if (grow((void **)v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	k = malloc(sizeof(*k) + size);
	if (!k)
		return -ENOMEM;
	k->serial = s->serial++;
	k->pid = pid;
	k->size = size;
	memcpy(k->raw, raw, size);
	(*v)[(*n)++] = k;
	s->side_bytes += sizeof(*k) + size;
	return 0;
}

static uint64_t sample_hash(const struct tc_rec *r)
{
	uint64_t h = tc_hash_u64(((uint64_t)r->u.sample.pid << 32) | r->u.sample.tid);

	h = tc_hash_u64(h ^ ((uint64_t)r->u.sample.event << 16 | r->u.sample.misc));
	h = tc_hash_u64(h ^ r->u.sample.ip);
	if (r->u.sample.nr)
		h ^= tc_hash_bytes(r->u.sample.chain, r->u.sample.nr * sizeof(uint64_t));
	return h;
}

static bool same(const struct entry *e, const struct tc_rec *r)
{
	return e->pid == r->u.sample.pid && e->tid == r->u.sample.tid &&
	       e->event == r->u.sample.event && e->misc == r->u.sample.misc &&
	       e->ip == r->u.sample.ip && e->nr == r->u.sample.nr &&
	       !memcmp(e->chain, r->u.sample.chain, e->nr * sizeof(uint64_t));
}

static void add_sample(struct tacho_sampler *s, const struct tc_rec *r)
{
	struct slice *sl = s->nsl ? s->sl[s->nsl - 1] : NULL;
	uint64_t h = sample_hash(r);
	struct entry *e = NULL;
	size_t pos = 0;
	uint32_t i;

	s->st.samples++;
	if (!sl) {
		s->st.dropped_memory++;
		return;
	}
	while (tc_hmap_next(&sl->index, h, &pos, &i))
		if (same(sl->e[i], r)) {
			e = sl->e[i];
			break;
		}
	if (!e) {
		/* a new stack: only while the memory held leaves room for it */
		if (held_bytes(s) + entry_size(r->u.sample.nr) > s->o.max_bytes ||
		    grow((void **)&sl->e, &sl->cap, sl->n + 1, sizeof(*sl->e)) ||
		    !(e = malloc(entry_size(r->u.sample.nr)))) {
			s->st.dropped_memory++;
			return;
		}
		*e = (struct entry){ .hash = h, .ip = r->u.sample.ip, .pid = r->u.sample.pid,
				     .tid = r->u.sample.tid, .nr = r->u.sample.nr,
				     .event = r->u.sample.event, .misc = r->u.sample.misc };
		if (e->nr)
			memcpy(e->chain, r->u.sample.chain, e->nr * sizeof(uint64_t));
		if (tc_hmap_add(&sl->index, h, (uint32_t)sl->n)) {
			free(e);
			s->st.dropped_memory++;
			return;
		}
		sl->e[sl->n++] = e;
		sl->bytes += entry_size(e->nr);
	}
	e->count++;
	e->period += r->u.sample.period;
	if (r->u.sample.time > e->time)
		e->time = r->u.sample.time;
	sl->samples++;
}

/* One record of the stream, its bytes at raw (size of them). */
static int take_record(struct tacho_sampler *s, const struct tc_rec *r, const unsigned char *raw,
		       uint32_t size)
{
	switch (r->type) {
	case TC_REC_SAMPLE:
		add_sample(s, r);
		return 0;
	case TC_REC_LOST:
		s->st.lost += r->u.lost.lost;
		return 0;
	case TC_REC_META:
	case TC_REC_EVENT:
	case TC_REC_PERIOD:
	case TC_REC_IMAGE:
	case TC_REC_TPFORMAT:
		if (r->type == TC_REC_EVENT && !s->st.event[0])
			snprintf(s->st.event, sizeof(s->st.event), "%s", r->u.event.name);
		return keep_record(s, &s->head, &s->nhead, &s->headcap, raw, size, 0);
	case TC_REC_MMAP:
		return keep_record(s, &s->side, &s->nside, &s->sidecap, raw, size,
				   r->u.mmap.pid);
	case TC_REC_COMM:
		return keep_record(s, &s->side, &s->nside, &s->sidecap, raw, size,
				   r->u.comm.pid);
	case TC_REC_CGROUP:
		return keep_record(s, &s->side, &s->nside, &s->sidecap, raw, size,
				   r->u.cgroup.pid);
	case TC_REC_TASK:
		if (r->u.task.kind == TC_TASK_FORK)
			return keep_record(s, &s->side, &s->nside, &s->sidecap, raw, size,
					   r->u.task.pid);
		if (r->u.task.kind == TC_TASK_EXIT && r->u.task.pid == r->u.task.tid && s->nsl) {
			if (grow((void **)&s->deaths, &s->deathcap, s->ndeaths + 1,
				 sizeof(*s->deaths)))
				return -ENOMEM;
			s->deaths[s->ndeaths++] = (struct death){ .pid = r->u.task.pid,
				.serial = s->serial, .seq = s->sl[s->nsl - 1]->seq };
		}
		return 0;
	default:
		return 0;   /* THROTTLE, FINISH: nothing a profile needs */
	}
}

static void thread_cpu(struct tacho_sampler *s)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		s->st.cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* tc_record_hooks.sink: the file header first, then each flush's whole records. */
static int sink(void *arg, const void *data, size_t len)
{
	struct tacho_sampler *s = arg;
	struct tc_record_reader rd;
	struct tc_rec r;
	int err, n;

	pthread_mutex_lock(&s->mu);
	if (!s->have_header) {
		tc_sb_reset(&s->in);
		tc_sb_add(&s->in, data, len);
		s->have_header = true;
		err = s->in.oom ? -ENOMEM : 0;
		goto out;
	}
	s->in.len = TC_REC_FILE_HDR;   /* the header stays, the records follow it */
	tc_sb_add(&s->in, data, len);
	if (s->in.oom) {
		err = -ENOMEM;
		goto out;
	}
	rotate(s, mono_ns());
	err = tc_record_reader_init(&rd, s->in.buf, s->in.len, "sampler", NULL);
	while (!err && (n = tc_record_reader_next(&rd, &r, "sampler", NULL)) > 0) {
		/* a SAMPLE from a block has no bytes of its own: it is never kept whole */
		uint32_t size = r.type == TC_REC_SAMPLE ? 0 : (uint32_t)(rd.off - r.offset);
		err = take_record(s, &r, (const unsigned char *)s->in.buf + r.offset, size);
	}
	if (!err && n < 0)
		err = n;
	tc_record_reader_exit(&rd);   /* take_record copied what it keeps */
	thread_cpu(s);
	s->st.bytes = held_bytes(s);
out:
	pthread_mutex_unlock(&s->mu);
	return err;
}

int tacho_sampler_new(const struct tacho_sampler_opts *opts, struct tacho_sampler **out)
{
	struct tacho_sampler *s;
	int err = TC_OPTS_VALID(opts, tacho_sampler_opts);

	if (err)
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	TC_OPTS_COPY(&s->o, opts);
	if (!s->o.freq)
		s->o.freq = DEFAULT_FREQ;
	if (!s->o.window_s)
		s->o.window_s = DEFAULT_WINDOW_S;
	if (!s->o.slice_s) {
		s->o.slice_s = s->o.window_s / 6;
		s->o.slice_s = s->o.slice_s < 1 ? 1 : s->o.slice_s > 10 ? 10 : s->o.slice_s;
	}
	if (!s->o.max_bytes)
		s->o.max_bytes = DEFAULT_MAX_BYTES;
	if (s->o.window_s > MAX_SPAN_S || s->o.slice_s > s->o.window_s || s->o.freq > 100000) {
		free(s);
		return -EINVAL;
	}
	s->slice_ns = (uint64_t)s->o.slice_s * 1000000000u;
	s->window_ns = (uint64_t)s->o.window_s * 1000000000u;
	pthread_mutex_init(&s->mu, NULL);
	tc_sb_init(&s->in);
	s->st.sz = sizeof(s->st);
	*out = s;
	return 0;
}

int tacho_sampler_run(struct tacho_sampler *s, volatile int *stop, struct tacho_diag *diag)
{
	struct tacho_record_opts o = { .sz = sizeof(o) };
	struct tacho_record_result res = { .sz = sizeof(res) };
	struct tc_record_hooks hooks = { .arg = s, .sink = sink };
	int err;

	pthread_mutex_lock(&s->mu);
	if (s->ran) {
		pthread_mutex_unlock(&s->mu);
		return -EINVAL;
	}
	s->ran = s->st.running = true;
	pthread_mutex_unlock(&s->mu);
	o.events = s->o.events;
	o.freq = s->o.freq;
	o.callchain = true;
	o.system_wide = true;
	o.flush_ms = FLUSH_MS;
	o.stop = stop;
	err = tc_record_run(&o, &res, &hooks, diag);
	pthread_mutex_lock(&s->mu);
	s->st.running = false;
	thread_cpu(s);
	pthread_mutex_unlock(&s->mu);
	return err;
}

/* Writes, under the lock, the held records of the last `seconds` into w. */
static void write_held(struct tacho_sampler *s, unsigned seconds, pid_t pid,
		       struct tc_record_writer *w, uint64_t *nsamples)
{
	uint64_t now = mono_ns(), from = now - (uint64_t)seconds * 1000000000u, n = 0;

	for (size_t i = 0; i < s->nhead; i++)
		tc_record_writer_add(w, (enum tc_rec_type)s->head[i]->raw[8],
				     s->head[i]->raw + TC_REC_HDR, s->head[i]->size - TC_REC_HDR);
	/* every mapping first: the samples then find the latest mapping of their address
	 * (a process that exec'd within the window is named by its latest image) */
	for (size_t i = 0; i < s->nside; i++)
		tc_record_writer_add(w, (enum tc_rec_type)s->side[i]->raw[8],
				     s->side[i]->raw + TC_REC_HDR, s->side[i]->size - TC_REC_HDR);
	for (size_t i = 0; i < s->nsl; i++) {
		struct slice *sl = s->sl[i];
		if (sl->end && sl->end <= from)
			continue;
		for (size_t j = 0; j < sl->n; j++) {
			struct entry *e = sl->e[j];
			if (pid && e->pid != (uint32_t)pid)
				continue;
			/* count samples again, the period shared out: pprof's sample count
			 * and CPU time both come out as they were taken */
			uint64_t each = e->period / e->count, rest = e->period % e->count;
			for (uint64_t k = 0; k < e->count; k++)
				tc_record_writer_sample(w, e->time, e->ip, 0,
							each + (k < rest), e->pid, e->tid,
							TC_CPU_UNKNOWN, e->event, e->misc, e->nr,
							e->chain);
			n += e->count;
		}
	}
	tc_record_writer_finish(w, n, 0, 0, 0);
	*nsamples = n;
}

int tc_sampler_write_file(struct tacho_sampler *s, unsigned seconds, pid_t pid, int fd,
			  struct tacho_diag *diag)
{
	struct tc_record_writer w;
	uint64_t n = 0;
	int err;

	err = tc_record_writer_open_fd(&w, fd);
	pthread_mutex_lock(&s->mu);
	if (!err && s->nsl == 0)
		err = tc_diag_set(diag, "sampler", 0, 0, -TACHO_EEMPTY,
				  "the sampler holds nothing yet");
	if (!err) {
		rotate(s, mono_ns());
		write_held(s, seconds, pid, &w, &n);
	}
	pthread_mutex_unlock(&s->mu);
	if (err) {
		tc_record_writer_discard(&w);
		return err;
	}
	err = tc_record_writer_close(&w);
	if (err)
		return tc_diag_set(diag, "sampler", 0, 0, err, "cannot write the held samples: %s",
				   tacho_strerror(err));
	return 0;
}

int tacho_sampler_stats(struct tacho_sampler *s, struct tacho_sampler_stats *out)
{
	uint64_t now = mono_ns();

	if (!s || !out || out->sz < STATS_SZ_V1)
		return -EINVAL;
	pthread_mutex_lock(&s->mu);
	s->st.bytes = held_bytes(s);
	s->st.held_s = s->nsl ? (double)(now - s->sl[0]->start) / 1e9 : 0;
	s->st.stacks = 0;
	for (size_t i = 0; i < s->nsl; i++)
		s->st.stacks += s->sl[i]->n;
	tc_sized_put_sz(out, &s->st, sizeof(s->st));
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* The always-on sampler's cost (its thread's CPU time) and what it holds. */
int tacho_sampler_write_metrics(struct tacho_sampler *s, FILE *out, bool om)
{
	struct tacho_sampler_stats stats = { .sz = sizeof(stats) }, *st = &stats;

	if (!s || !out || tacho_sampler_stats(s, st))
		return -EINVAL;
	tc_metric_head(out, om, "tacho_serve_profile_cpu_seconds", "counter", "seconds",
		       "CPU time of tacho's always-on sampler thread (reading the rings and "
		       "aggregating), not counting the answers to profile requests.");
	fputs("tacho_serve_profile_cpu_seconds_total", out);
	tc_metric_value(out, st->cpu_s);
	tc_metric_head(out, om, "tacho_serve_profile_samples", "counter", NULL,
		       "Samples the always-on sampler took in.");
	fputs("tacho_serve_profile_samples_total", out);
	tc_metric_value(out, (double)st->samples);
	tc_metric_head(out, om, "tacho_serve_profile_dropped_samples", "counter", NULL,
		       "Samples no longer held: their slice left the window, or left (or they "
		       "were refused) to keep the memory under --profile-max-mb.");
	fputs("tacho_serve_profile_dropped_samples_total{reason=\"window\"}", out);
	tc_metric_value(out, (double)st->dropped_window);
	fputs("tacho_serve_profile_dropped_samples_total{reason=\"memory\"}", out);
	tc_metric_value(out, (double)st->dropped_memory);
	tc_metric_head(out, om, "tacho_serve_profile_dropped_slices", "counter", NULL,
		       "Slices that left before their time to keep the memory under the cap.");
	fputs("tacho_serve_profile_dropped_slices_total", out);
	tc_metric_value(out, (double)st->dropped_slices);
	tc_metric_head(out, om, "tacho_serve_profile_lost_samples", "counter", NULL,
		       "Samples the kernel dropped before the sampler read them (full ring).");
	fputs("tacho_serve_profile_lost_samples_total", out);
	tc_metric_value(out, (double)st->lost);
	tc_metric_gauge(out, om, "tacho_serve_profile_bytes", "bytes",
			"Memory the always-on sampler holds: slices, mappings and names.",
			(double)st->bytes);
	tc_metric_gauge(out, om, "tacho_serve_profile_stacks", NULL,
			"Distinct (process, thread, stack) entries held, over the slices.",
			(double)st->stacks);
	tc_metric_gauge(out, om, "tacho_serve_profile_window_seconds", "seconds",
			"Seconds the held slices cover, up to now.", st->held_s);
	tc_metric_gauge(out, om, "tacho_serve_profile_running", NULL,
			"1 while the always-on sampler samples, 0 once it stopped.",
			st->running ? 1 : 0);
	return tc_write_status(out);
}

void tacho_sampler_free(struct tacho_sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nsl; i++)
		slice_free(s->sl[i]);
	for (size_t i = 0; i < s->nhead; i++)
		free(s->head[i]);
	for (size_t i = 0; i < s->nside; i++)
		free(s->side[i]);
	free(s->sl);
	free(s->head);
	free(s->side);
	free(s->deaths);
	tc_sb_exit(&s->in);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
