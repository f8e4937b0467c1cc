/* test-trace-area.c - marks through the shared trace area: what a thread writes is what
 * the consumer reads (channel, value, kind, order), a full ring drops the newest and
 * counts exactly, threads get rings of their own, regions become spans, and an untraced
 * process marks for nothing. The area is hostile ground for both sides (issue 27): a
 * secure process ignores TACHO_TRACE, a header is checked once with every sum bounded,
 * a descriptor must be a sealed memfd, the producer writes where its own copy of the
 * shape says whatever the header says later, and the consumer refuses and counts what
 * no producer writes (garbage heads, entries, names, a header written over). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"
#include "trace/area.h"
#include "util/util.h"
#include "tacho/regions.h"
#include "tacho/trace.h"

#define MAXCH 16

struct seen {
	char names[MAXCH][TC_TRACE_NAME_MAX];
	uint32_t nnames;
	struct tc_trace_entry e[4096];
	uint32_t tid[4096];
	size_t n;
	int stop_at;       /* return 1 at this entry (-1: never) */
};

static int on_channel(void *arg, uint32_t index, const char *name)
{
	struct seen *s = arg;

	assert_int_equal(index, s->nnames);
	assert_true(index < MAXCH);
	snprintf(s->names[index], sizeof(s->names[index]), "%s", name);
	s->nnames++;
	return 0;
}

static int on_entry(void *arg, uint32_t slot, uint32_t pid, uint32_t tid,
		    const struct tc_trace_entry *e)
{
	struct seen *s = arg;

	if (s->stop_at >= 0 && (size_t)s->stop_at == s->n)
		return 1;
	assert_true(s->n < ARRAY_SIZE(s->e));
	assert_int_equal(pid, (uint32_t)getpid());
	s->tid[s->n] = tid;
	s->e[s->n++] = *e;
	return 0;
}

static void drain(struct tc_trace_area *a, uint32_t *known, struct seen *s)
{
	struct tc_trace_visit v = { .arg = s, .channel = on_channel, .entry = on_entry };

	assert_int_equal(tc_trace_area_drain(a, known, &v, false), 0);
}

/* TACHO_TRACE's value for area a: the descriptor, as tacho gives it to a program. */
static const char *spec_of(const struct tc_trace_area *a)
{
	static char spec[64];

	snprintf(spec, sizeof(spec), "/proc/self/fd/%d", a->fd);
	return spec;
}

static void area_attach(struct tc_trace_area *a, uint32_t slots, uint32_t entries)
{
	assert_int_equal(tc_trace_area_create(a, slots, entries, 0), 0);
	assert_int_equal(tc_trace_attach(spec_of(a)), 0);
	assert_true(tacho_trace_active());
}

static void area_detach(struct tc_trace_area *a)
{
	tc_trace_detach();
	tc_trace_area_free(a);
}

/* First of all (the environment is read once, at the first mark): a process that looks
 * secure (setuid, setgid, capabilities: forced through the seam, as the e2e test
 * test-faults test_setuid_trace does with a real setuid program) does not map the area
 * TACHO_TRACE names, though it is a good one. */
static void test_secure_ignores_trace(void **state)
{
	struct tc_trace_area a;
	char env[64];

	assert_int_equal(tc_trace_area_create(&a, 2, 8, 0), 0);
	assert_int_equal(tc_trace_area_env(&a, env, sizeof(env)), 0);
	assert_int_equal(strncmp(env, "TACHO_TRACE=", 12), 0);
	assert_int_equal(setenv("TACHO_TRACE", env + 12, 1), 0);
	tc_env_force_secure(1);
	assert_false(tacho_trace_active());
	assert_int_equal(tacho_mark("a", 1), 0);
	tc_env_force_secure(-1);
	assert_int_equal(unsetenv("TACHO_TRACE"), 0);
	assert_int_equal(((struct tc_trace_header *)a.base)->slots_used, 0);
	assert_int_equal(((struct tc_trace_header *)a.base)->channels_used, 0);
	tc_trace_area_free(&a);
}

static void test_untraced(void **state)
{
	/* TACHO_TRACE is unset (main clears it): a mark is a no-op that succeeds */
	assert_false(tacho_trace_active());
	assert_int_equal(tacho_mark("a", 1), 0);
	assert_int_equal(tacho_mark_counter("level", 3), 0);
	assert_int_equal(tacho_mark(NULL, 1), 0);   /* not traced: nothing is looked at */
}

static void test_marks_read_back(void **state)
{
	struct tc_trace_area a;
	struct seen *s = calloc(1, sizeof(*s));
	uint32_t known = 0;
	char buf[32];

	s->stop_at = -1;
	area_attach(&a, 4, 64);
	assert_int_equal(tacho_mark("a", 10), 0);
	assert_int_equal(tacho_mark("b", 20), 0);
	assert_int_equal(tacho_mark("a", 11), 0);
	assert_int_equal(tacho_mark_counter("level", 5), 0);
	/* a reused buffer with new contents is a new channel, the same contents the old */
	snprintf(buf, sizeof(buf), "x");
	assert_int_equal(tacho_mark(buf, 1), 0);
	snprintf(buf, sizeof(buf), "b");
	assert_int_equal(tacho_mark(buf, 21), 0);
	assert_int_equal(tacho_mark(NULL, 1), -EINVAL);
	drain(&a, &known, s);
	assert_int_equal(s->nnames, 4);
	assert_string_equal(s->names[0], "a");
	assert_string_equal(s->names[1], "b");
	assert_string_equal(s->names[2], "level");
	assert_string_equal(s->names[3], "x");
	assert_int_equal(s->n, 6);
	uint32_t ch[] = { 0, 1, 0, 2, 3, 1 };
	uint64_t val[] = { 10, 20, 11, 5, 1, 21 };
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(s->e[i].channel, ch[i]);
		assert_int_equal(s->e[i].value, val[i]);
		assert_int_equal(s->e[i].kind, i == 3 ? TC_TRACE_COUNTER : TC_TRACE_MARK);
		assert_int_equal(s->tid[i], (uint32_t)syscall(SYS_gettid));
		if (i)
			assert_true(s->e[i].tsc >= s->e[i - 1].tsc);
	}
	/* a second drain reads only what is new */
	s->n = 0;
	drain(&a, &known, s);
	assert_int_equal(s->n, 0);
	assert_int_equal(tacho_mark("a", 12), 0);
	drain(&a, &known, s);
	assert_int_equal(s->n, 1);
	assert_int_equal(s->e[0].value, 12);
	area_detach(&a);
	free(s);
}

/* A full ring drops the newest entries and counts each; reading makes room again. */
static void test_full_ring_counts_drops(void **state)
{
	struct tc_trace_area a;
	struct tc_trace_drops d;
	struct seen *s = calloc(1, sizeof(*s));
	uint32_t known = 0;
	int dropped = 0;

	s->stop_at = -1;
	area_attach(&a, 2, 8);
	for (int i = 0; i < 20; i++)
		if (tacho_mark("c", (uint64_t)i) == -ENOBUFS)
			dropped++;
	assert_int_equal(dropped, 12);
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.ring_full, 12);
	assert_int_equal(d.no_ring, 0);
	assert_int_equal(d.no_channel, 0);
	drain(&a, &known, s);
	assert_int_equal(s->n, 8);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(s->e[i].value, i);   /* the oldest kept, the newest dropped */
	assert_int_equal(tacho_mark("c", 100), 0);
	s->n = 0;
	/* a consumer that stops keeps the rest for the next drain */
	assert_int_equal(tacho_mark("c", 101), 0);
	s->stop_at = 1;
	struct tc_trace_visit v = { .arg = s, .channel = on_channel, .entry = on_entry };
	assert_int_equal(tc_trace_area_drain(&a, &known, &v, false), 1);
	assert_int_equal(s->n, 1);
	s->stop_at = -1;
	drain(&a, &known, s);
	assert_int_equal(s->n, 2);
	assert_int_equal(s->e[1].value, 101);
	area_detach(&a);
	free(s);
}

#define THREADS 3
#define PER_THREAD 1000

static void *marker(void *arg)
{
	for (int i = 0; i < PER_THREAD; i++) {
		if (tacho_mark("a", (uint64_t)i))
			return (void *)1;
		if (i % 2 == 0 && tacho_mark("b", (uint64_t)i))
			return (void *)1;
	}
	return NULL;
}

struct per_tid {
	uint32_t tid;
	uint64_t a, b, last_tsc;
	bool backwards;
};

struct many {
	struct per_tid t[THREADS + 1];
	size_t nt;
	char names[MAXCH][TC_TRACE_NAME_MAX];
};

static int many_channel(void *arg, uint32_t index, const char *name)
{
	struct many *m = arg;

	snprintf(m->names[index], sizeof(m->names[index]), "%s", name);
	return 0;
}

static int many_entry(void *arg, uint32_t slot, uint32_t pid, uint32_t tid,
		      const struct tc_trace_entry *e)
{
	struct many *m = arg;
	struct per_tid *p = NULL;

	for (size_t i = 0; i < m->nt; i++)
		if (m->t[i].tid == tid)
			p = &m->t[i];
	if (!p) {
		if (m->nt == ARRAY_SIZE(m->t))
			return -1;
		p = &m->t[m->nt++];
		p->tid = tid;
	}
	if (e->tsc < p->last_tsc)
		p->backwards = true;
	p->last_tsc = e->tsc;
	if (!strcmp(m->names[e->channel], "a"))
		p->a++;
	else if (!strcmp(m->names[e->channel], "b"))
		p->b++;
	return 0;
}

/* Three threads mark while the consumer drains: every mark arrives, on its thread's
 * ring, in order (rings of 256 entries: the drain keeps up, or the drops say so). */
static void test_threads(void **state)
{
	struct tc_trace_area a;
	struct tc_trace_drops d;
	struct many m;
	pthread_t th[THREADS];
	uint32_t known = 0;
	struct tc_trace_visit v = { .arg = &m, .channel = many_channel, .entry = many_entry };

	memset(&m, 0, sizeof(m));
	/* rings as large as a thread's marks: nothing can be dropped */
	area_attach(&a, 8, 2048);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, marker, NULL), 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(tc_trace_area_drain(&a, &known, &v, false), 0);
	for (int i = 0; i < THREADS; i++) {
		void *ret;
		assert_int_equal(pthread_join(th[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(tc_trace_area_drain(&a, &known, &v, false), 0);
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.ring_full, 0);
	assert_int_equal(m.nt, THREADS);
	for (size_t i = 0; i < m.nt; i++) {
		assert_int_equal(m.t[i].a, PER_THREAD);
		assert_int_equal(m.t[i].b, PER_THREAD / 2);
		assert_false(m.t[i].backwards);
	}
	area_detach(&a);
}

/* More threads than rings: the marks of a thread without one are counted. */
static void *one_mark(void *arg)
{
	*(int *)arg = tacho_mark("late", 1);
	return NULL;
}

static void test_no_ring_left(void **state)
{
	struct tc_trace_area a;
	struct tc_trace_drops d;
	pthread_t th;
	int r = 0;

	area_attach(&a, 1, 8);
	assert_int_equal(tacho_mark("first", 1), 0);   /* this thread takes the only ring */
	assert_int_equal(pthread_create(&th, NULL, one_mark, &r), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(r, -ENOBUFS);
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.no_ring, 1);
	assert_int_equal(d.ring_full, 0);
	area_detach(&a);
}

/* Regions are spans while traced: begin and end around the marks inside. */
static void test_region_spans(void **state)
{
	struct tc_trace_area a;
	struct seen *s = calloc(1, sizeof(*s));
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = "", .output = "-",
					.no_report_at_exit = true };
	struct tacho_diag d = { .sz = sizeof(d) };
	uint32_t known = 0;
	int begin = -1, end = -1, mark = -1;

	s->stop_at = -1;
	assert_int_equal(tacho_regions_init(&o, &d), 0);
	area_attach(&a, 4, 4096);
	assert_int_equal(tacho_region_begin("work"), 0);
	assert_int_equal(tacho_mark("inside", 7), 0);
	assert_int_equal(tacho_region_end("work"), 0);
	drain(&a, &known, s);
	for (size_t i = 0; i < s->n; i++) {
		const char *name = s->names[s->e[i].channel];
		if (!strcmp(name, "work") && s->e[i].kind == TC_TRACE_BEGIN)
			begin = (int)i;
		if (!strcmp(name, "work") && s->e[i].kind == TC_TRACE_END)
			end = (int)i;
		if (!strcmp(name, "inside"))
			mark = (int)i;
	}
	assert_true(begin >= 0 && mark > begin && end > mark);
	assert_true(s->e[begin].tsc <= s->e[mark].tsc && s->e[mark].tsc <= s->e[end].tsc);
	area_detach(&a);
	free(s);
}

static void assert_geom_equal(const struct tc_trace_geom *a, const struct tc_trace_geom *b)
{
	assert_int_equal(a->nslots, b->nslots);
	assert_int_equal(a->entries, b->entries);
	assert_int_equal(a->nchannels, b->nchannels);
	assert_int_equal(a->channels_off, b->channels_off);
	assert_int_equal(a->rings_off, b->rings_off);
	assert_int_equal(a->ring_bytes, b->ring_bytes);
	assert_int_equal(a->size, b->size);
}

/* A header as tacho makes it: entries 8, 2 rings, 4 channels. */
static void good_header(struct tc_trace_header *h, struct tc_trace_geom *g)
{
	assert_int_equal(tc_trace_geom_make(2, 8, 4, g), 0);
	memset(h, 0, sizeof(*h));
	h->magic = TC_TRACE_MAGIC;
	h->version = TC_TRACE_VERSION;
	h->nslots = g->nslots;
	h->entries = g->entries;
	h->nchannels = g->nchannels;
	h->channels_off = g->channels_off;
	h->rings_off = g->rings_off;
	h->ring_bytes = g->ring_bytes;
	h->size = g->size;
}

/* Each field of the header set to what a stray pointer could leave there: refused,
 * every sum and product checked (the first check, before issue 27, added 64-bit
 * offsets unchecked, so a ring_bytes near 2^63 passed it). */
static void test_header_checked(void **state)
{
	static const struct {
		int line;
		const char *field;
		uint64_t value;
	} cases[] = {
		{ __LINE__, "magic", 0 },
		{ __LINE__, "version", 2 },
		{ __LINE__, "size", 12288 },               /* not the file's */
		{ __LINE__, "nslots", 0 },
		{ __LINE__, "nslots", 65537 },
		{ __LINE__, "nslots", 3 },                 /* rings past the end */
		{ __LINE__, "entries", 0 },
		{ __LINE__, "entries", 1 },
		{ __LINE__, "entries", 6 },
		{ __LINE__, "entries", 1u << 31 },
		{ __LINE__, "entries", 512 },              /* more than a ring holds */
		{ __LINE__, "nchannels", 0 },
		{ __LINE__, "nchannels", (1u << 20) + 1 },
		{ __LINE__, "nchannels", 100 },            /* into the rings */
		{ __LINE__, "channels_off", 8 },           /* over the header */
		{ __LINE__, "channels_off", 4100 },        /* a flag not aligned */
		{ __LINE__, "channels_off", UINT64_MAX - 100 },   /* the sum wraps */
		{ __LINE__, "rings_off", 4096 + 64 },      /* over the channels */
		{ __LINE__, "rings_off", 8192 + 8 },       /* not on a cache line */
		{ __LINE__, "rings_off", UINT64_MAX - 63 },
		{ __LINE__, "ring_bytes", 64 },            /* smaller than its entries */
		{ __LINE__, "ring_bytes", 4096 + 8 },
		{ __LINE__, "ring_bytes", 1ull << 63 },    /* 2 x 2^63 wraps to 0 */
		{ __LINE__, "ring_bytes", (UINT64_MAX / 2 + 1) & ~63ull },
	};
	struct tc_trace_header h;
	struct tc_trace_geom g, out;

	good_header(&h, &g);
	assert_int_equal(tc_trace_geom_check(&h, g.size, &out), 0);
	assert_geom_equal(&out, &g);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint64_t v = cases[i].value;
		int err;

		good_header(&h, &g);
		if (!strcmp(cases[i].field, "magic"))
			h.magic = v;
		else if (!strcmp(cases[i].field, "version"))
			h.version = (uint32_t)v;
		else if (!strcmp(cases[i].field, "size"))
			h.size = v;
		else if (!strcmp(cases[i].field, "nslots"))
			h.nslots = (uint32_t)v;
		else if (!strcmp(cases[i].field, "entries"))
			h.entries = (uint32_t)v;
		else if (!strcmp(cases[i].field, "nchannels"))
			h.nchannels = (uint32_t)v;
		else if (!strcmp(cases[i].field, "channels_off"))
			h.channels_off = v;
		else if (!strcmp(cases[i].field, "rings_off"))
			h.rings_off = v;
		else if (!strcmp(cases[i].field, "ring_bytes"))
			h.ring_bytes = v;
		err = tc_trace_geom_check(&h, g.size, &out);
		if (err != -TACHO_ECORRUPT)
			fail_msg("line %d: %s = %llu accepted (%d)", cases[i].line, cases[i].field,
				 (unsigned long long)v, err);
	}
	/* a size that matches a header's own wrong size is still checked against the
	 * rings it must hold */
	good_header(&h, &g);
	h.size = 4096;
	assert_int_equal(tc_trace_geom_check(&h, 4096, &out), -TACHO_ECORRUPT);
}

/* Writes an area of geometry g with a good header into the file path, as an older
 * tacho made it (a path in /dev/shm). */
static void old_style_area(const char *path, const struct tc_trace_geom *g)
{
	struct tc_trace_header h;
	struct tc_trace_geom gg;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);

	assert_true(fd >= 0);
	good_header(&h, &gg);
	assert_geom_equal(&gg, g);
	assert_int_equal(ftruncate(fd, (off_t)g->size), 0);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);
}

static void test_bad_area(void **state)
{
	FILE *f = fopen(th_tmp("notarea"), "w");
	struct tc_trace_geom g;
	char spec[64];
	int fd;

	assert_non_null(f);
	for (int i = 0; i < 1000; i++)
		fputs("not an area\n", f);
	fclose(f);
	assert_int_equal(tc_trace_attach(th_tmp("notarea")), -TACHO_ECORRUPT);
	assert_int_equal(tc_trace_attach(th_tmp("missing")), -ENOENT);
	struct tc_trace_area a;
	assert_int_equal(tc_trace_area_create(&a, 1, 3, 0), -EINVAL);
	tc_trace_area_free(&a);

	/* a descriptor that is no sealed memfd (here a file of the program's own, which
	 * took the number tacho's descriptor had) is refused before anything is
	 * written, though it holds a good header */
	assert_int_equal(tc_trace_geom_make(2, 8, 4, &g), 0);
	old_style_area(th_tmp("plain"), &g);
	fd = open(th_tmp("plain"), O_RDWR);
	assert_true(fd >= 0);
	snprintf(spec, sizeof(spec), "/proc/self/fd/%d", fd);
	assert_int_equal(tc_trace_attach(spec), -EINVAL);
	close(fd);
	assert_int_equal(tc_trace_attach("/proc/self/fd/999999"), -EBADF);
	/* a path is never created, no link followed, and a FIFO does not hang */
	assert_int_equal(symlink(th_tmp("plain"), th_tmp("link")), 0);
	assert_int_equal(tc_trace_attach(th_tmp("link")), -ELOOP);
	assert_int_equal(mkfifo(th_tmp("fifo"), 0600), 0);
	assert_int_equal(tc_trace_attach(th_tmp("fifo")), -TACHO_ECORRUPT);
	assert_int_equal(access(th_tmp("missing"), F_OK), -1);
	assert_false(tacho_trace_active());
}

/* An older tacho names its area by a path: a program of this library still marks into
 * it (the path protocol is read as before, without following a link). */
static void test_old_tacho_path(void **state)
{
	struct tc_trace_geom g;
	struct tc_trace_header *h;
	int fd;

	assert_int_equal(tc_trace_geom_make(2, 8, 4, &g), 0);
	old_style_area(th_tmp("old-area"), &g);
	assert_int_equal(tc_trace_attach(th_tmp("old-area")), 0);
	assert_int_equal(tacho_mark("old", 5), 0);
	tc_trace_detach();
	fd = open(th_tmp("old-area"), O_RDONLY);
	assert_true(fd >= 0);
	h = mmap(NULL, (size_t)g.size, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(h != MAP_FAILED);
	close(fd);
	assert_int_equal(h->slots_used, 1);
	assert_int_equal(h->channels_used, 1);
	assert_string_equal(tc_trace_channel_at(h, &g, 0)->name, "old");
	assert_int_equal(tc_trace_ring_at(h, &g, 0)->head, 1);
	assert_int_equal(tc_trace_ring_at(h, &g, 0)->e[0].value, 5);
	munmap(h, (size_t)g.size);
}

/* The program shares its area with tacho, and a stray pointer may write anything into
 * it. The producer writes where its own copy of the shape says: a header set to huge
 * sizes after the attach moves no write; a tail written over makes the ring read as
 * full (dropped and counted), never writes past it. */
static void test_producer_keeps_its_shape(void **state)
{
	struct tc_trace_area a;
	struct tc_trace_header *h;
	struct tc_trace_drops d;
	struct seen *s = calloc(1, sizeof(*s));
	uint32_t known = 0;

	s->stop_at = -1;
	area_attach(&a, 2, 8);
	assert_int_equal(tacho_mark("a", 1), 0);
	h = a.base;
	h->nslots = 0xffffffff;
	h->entries = 1u << 31;
	h->nchannels = 0xffffffff;
	h->rings_off = 1ull << 62;
	h->ring_bytes = 1ull << 62;
	h->channels_off = 1ull << 62;
	h->size = UINT64_MAX;
	assert_int_equal(tacho_mark("b", 2), 0);
	assert_int_equal(tacho_mark("a", 3), 0);
	drain(&a, &known, s);
	assert_int_equal(s->n, 3);
	assert_int_equal(s->e[2].value, 3);
	assert_int_equal(a.damage.header, 1);   /* and the consumer saw it */
	/* a tail far ahead of the head: the ring reads as full */
	tc_trace_ring_at(a.base, &a.g, 0)->tail = 1ull << 40;
	assert_int_equal(tacho_mark("a", 4), -ENOBUFS);
	tc_trace_area_drops(&a, &d);
	assert_int_equal(d.ring_full, 1);
	/* the consumer's own tail puts it right at its next drain */
	s->n = 0;
	drain(&a, &known, s);
	assert_int_equal(s->n, 0);
	assert_int_equal(tacho_mark("a", 5), 0);
	drain(&a, &known, s);
	assert_int_equal(s->n, 1);
	assert_int_equal(s->e[0].value, 5);
	area_detach(&a);
	free(s);
}

/* The consumer believes nothing the area says: each kind of damage is refused, counted
 * exactly, and the good entries around it still arrive. */
static void test_consumer_refuses_damage(void **state)
{
	struct tc_trace_area a;
	struct tc_trace_ring *r;
	struct tc_trace_header *h;
	struct seen *s = calloc(1, sizeof(*s));
	uint32_t known = 0;

	s->stop_at = -1;
	area_attach(&a, 4, 8);
	h = a.base;
	assert_int_equal(tacho_mark("a", 1), 0);
	assert_int_equal(tacho_mark("a", 2), 0);
	assert_int_equal(tacho_mark("a", 3), 0);
	r = tc_trace_ring_at(a.base, &a.g, 0);
	/* torn entries: a kind that is none, a channel past the table, a channel that was
	 * never published (the final drain refuses it; before, it waits) */
	r->e[0].kind = 0;
	r->e[1].channel = 4096;
	r->e[2].channel = 7;
	drain(&a, &known, s);
	assert_int_equal(s->n, 0);
	assert_int_equal(a.damage.entries, 2);
	struct tc_trace_visit v = { .arg = s, .channel = on_channel, .entry = on_entry };
	assert_int_equal(tc_trace_area_drain(&a, &known, &v, true), 0);
	assert_int_equal(a.damage.entries, 3);
	assert_int_equal(s->n, 0);
	assert_int_equal(tacho_mark("a", 4), 0);
	drain(&a, &known, s);
	assert_int_equal(s->n, 1);
	assert_int_equal(s->e[0].value, 4);

	/* a head far ahead (2^40 entries: following it read without end) and a head
	 * behind the tail: each ring given up, once, and the drain returns */
	r->head = 1ull << 40;
	drain(&a, &known, s);
	drain(&a, &known, s);
	assert_int_equal(a.damage.rings, 1);
	assert_int_equal(a.slot[0].dead, true);
	pthread_t th;
	int ret = 0;
	s->n = 0;
	assert_int_equal(pthread_create(&th, NULL, one_mark, &ret), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(ret, 0);
	drain(&a, &known, s);
	assert_int_equal(s->n, 1);
	r = tc_trace_ring_at(a.base, &a.g, 1);
	r->head = 0;   /* behind the consumer's tail of 1 */
	drain(&a, &known, s);
	assert_int_equal(a.damage.rings, 2);

	/* a channel name without its end */
	assert_int_equal(a.damage.header, 0);
	h->channels_used = 3;
	memset(tc_trace_channel_at(a.base, &a.g, 2)->name, 'x', TC_TRACE_NAME_MAX);
	tc_trace_channel_at(a.base, &a.g, 2)->ready = 1;
	drain(&a, &known, s);
	assert_int_equal(known, 3);
	assert_int_equal(strlen(s->names[2]), TC_TRACE_NAME_MAX - 1);
	assert_int_equal(a.damage.entries, 4);

	/* the header zeroed: counts gone back and the shape changed; the rings still
	 * drain with the consumer's own shape and counts */
	assert_int_equal(a.damage.header, 0);
	memset(h, 0, sizeof(*h));
	drain(&a, &known, s);
	assert_int_equal(a.damage.header, 1);
	assert_int_equal(a.slots_seen, 2);
	area_detach(&a);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secure_ignores_trace),
		cmocka_unit_test(test_untraced),
		cmocka_unit_test(test_marks_read_back),
		cmocka_unit_test(test_full_ring_counts_drops),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_no_ring_left),
		cmocka_unit_test(test_region_spans),
		cmocka_unit_test(test_bad_area),
		cmocka_unit_test(test_header_checked),
		cmocka_unit_test(test_old_tacho_path),
		cmocka_unit_test(test_producer_keeps_its_shape),
		cmocka_unit_test(test_consumer_refuses_damage),
	};

	unsetenv("TACHO_TRACE");
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
