/* mark.c - the producer's side of tracing: tacho_mark and the regions' spans, written
 * by each thread into its own ring of the shared area that TACHO_TRACE names, without a
 * lock or a system call after the thread's first mark. The area's shape is checked once
 * and kept here: nothing read from the area afterwards decides where a write goes. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace/area.h"
#include "util/util.h"
#include "tacho/errors.h"
#include "tacho/trace.h"
#include "tacho/tsc.h"

#define PC_SLOTS 64

int tc_trace_state;

/* The process's attachment: the area and its channel index (name -> index, so that
 * two threads marking the same new channel get one index). */
static struct {
	pthread_mutex_t lock;
	struct tc_trace_header *h;     /* the mapping (its header first) */
	struct tc_trace_geom g;        /* its shape, checked once at attach */
	bool wait_full;             /* its TC_TRACE_WAIT_FULL flag, read once at attach */
	uint64_t generation;        /* bumped at detach and fork: threads' rings go stale */
	struct tc_strpool names;    /* id i: the channel index chan[i] */
	uint32_t *chan;
	size_t nchan, achan;
} area = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The pointer cache of one thread: channel pointer -> index. */
struct pc_slot {
	const char *name;
	uint32_t index;
};

struct tc_trace_thread {
	struct tc_trace_ring *ring;   /* NULL: no ring was left (marks are counted as lost) */
	uint64_t generation;
	uint64_t mask;
	uint64_t watermark;           /* tc_trace_watermark of the ring */
	uint64_t head;                /* entries written: the ring's head is only stored */
	uint64_t dropped;             /* the same of its drop count */
	uint64_t waits, waited_ns;    /* the same of its waits for room */
	bool stalled;                 /* a wait gave up: drop, not wait, until the consumer
					 moves the tail from stall_tail again */
	uint64_t stall_tail;
	struct pc_slot pc[PC_SLOTS];
};

static __thread struct tc_trace_thread *tls __attribute__((tls_model("initial-exec")));
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT, setup_once = PTHREAD_ONCE_INIT;

/* The thread ends: its ring stays (tacho drains it; rings are not reused), its state
 * goes. A mark from a later TLS destructor of this thread claims a new ring. */
static void thread_gone(void *p)
{
	if (tls == p)
		tls = NULL;
	free(p);
}

/* After fork() the child has the parent's area mapped (shared) but none of its threads'
 * rings may be written from here: the child starts over, as a new process of the
 * trace. */
static void atfork_child(void)
{
	pthread_mutex_init(&area.lock, NULL);
	area.generation++;
	free(tls);
	tls = NULL;
	if (area.h)
		pthread_setspecific(thread_key, NULL);
}

/* The descriptor N of "/proc/self/fd/N" (what tacho puts in TACHO_TRACE), or -1 when
 * spec is a path. */
static int spec_fd(const char *spec)
{
	static const char pre[] = "/proc/self/fd/";
	long n = 0;
	const char *p;

	if (strncmp(spec, pre, sizeof(pre) - 1))
		return -1;
	p = spec + sizeof(pre) - 1;
	if (!*p)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || n > INT_MAX / 10)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return n <= INT_MAX ? (int)n : -1;
}

static int map_area(const char *spec)
{
	struct tc_trace_header *h, hc;
	struct tc_trace_geom g;
	struct stat st;
	int fd = spec_fd(spec), err = 0;
	bool own = fd < 0;

	if (own) {
		/* a path: what an older tacho names (/dev/shm/tacho-trace-PID). Never
		 * created here, no link followed, and a FIFO does not hang the open */
		fd = open(spec, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0)
			return -errno;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(*h)) {
		err = -TACHO_ECORRUPT;
		goto out_close;
	}
	if (!own) {
		/* the descriptor tacho made: a memfd sealed against shrinking and
		 * growing, so that no one can cut the area under this mapping (SIGBUS).
		 * Only a memfd takes seals: a descriptor the program reused for a file of
		 * its own is refused before anything is written */
		int seals = fcntl(fd, F_GET_SEALS);
		if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) !=
				 (F_SEAL_SHRINK | F_SEAL_GROW)) {
			err = -EINVAL;
			goto out_close;
		}
	}
	h = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		err = -errno;
		goto out_close;
	}
	/* the header copied out once and checked there; from here on the shape is the
	 * copy's, whatever the area says */
	memcpy(&hc, h, sizeof(hc));
	err = tc_trace_geom_check(&hc, (uint64_t)st.st_size, &g);
	if (err) {
		munmap(h, (size_t)st.st_size);
		goto out_close;
	}
	area.h = h;
	area.g = g;
	area.wait_full = hc.flags & TC_TRACE_WAIT_FULL;
out_close:
	/* the inherited descriptor stays open: a program this one execs finds the area
	 * through it too */
	if (own)
		close(fd);
	return err;
}

static void key_once_fn(void)
{
	pthread_key_create(&thread_key, thread_gone);
	pthread_atfork(NULL, NULL, atfork_child);
}

int tc_trace_attach(const char *path)
{
	int err;

	pthread_once(&key_once, key_once_fn);
	pthread_mutex_lock(&area.lock);
	if (area.h) {
		err = -EBUSY;
		goto out_unlock;
	}
	err = map_area(path);
	if (err)
		goto out_unlock;
	tc_strpool_init(&area.names);
	area.generation++;
	__atomic_store_n(&tc_trace_state, 2, __ATOMIC_RELEASE);
out_unlock:
	pthread_mutex_unlock(&area.lock);
	return err;
}

void tc_trace_detach(void)
{
	pthread_mutex_lock(&area.lock);
	__atomic_store_n(&tc_trace_state, 1, __ATOMIC_RELEASE);
	if (area.h) {
		munmap(area.h, (size_t)area.g.size);
		area.h = NULL;
		tc_strpool_exit(&area.names);
		free(area.chan);
		area.chan = NULL;
		area.nchan = area.achan = 0;
	}
	area.generation++;
	pthread_mutex_unlock(&area.lock);
	free(tls);
	tls = NULL;
}

static void setup_once_fn(void)
{
	bool ignored;
	/* a setuid, setgid or capable program maps nothing its caller names: the area
	 * would be any file the program may write, and the marks its contents */
	const char *path = tc_env_trusted("TACHO_TRACE", &ignored);
	int err;

	pthread_once(&key_once, key_once_fn);
	if (ignored)
		tc_log(TACHO_LOG_WARN, "TACHO_TRACE ignored: this process runs with privileges "
		       "(setuid, setgid or file capabilities); not tracing");
	if (!path || !*path) {
		__atomic_store_n(&tc_trace_state, 1, __ATOMIC_RELEASE);
		return;
	}
	err = tc_trace_attach(path);
	if (err) {
		/* a program is never stopped by its tracing: it runs untraced */
		tc_log(TACHO_LOG_WARN, "trace: cannot map the trace area '%s': %s; not tracing",
		       path, tacho_strerror(err));
		__atomic_store_n(&tc_trace_state, 1, __ATOMIC_RELEASE);
	}
}

void tc_trace_setup(void)
{
	pthread_once(&setup_once, setup_once_fn);
}

/* The thread's first entry (or its first after a fork or a new attachment): a ring of
 * its own, claimed with one atomic add. */
static struct tc_trace_thread *thread_attach(void)
{
	struct tc_trace_header *h = area.h;
	struct tc_trace_thread *t = tls;
	uint32_t slot;

	if (!h)
		return NULL;
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		tls = t;
		pthread_setspecific(thread_key, t);
	}
	memset(t, 0, sizeof(*t));
	t->generation = area.generation;
	t->mask = area.g.entries - 1;
	t->watermark = tc_trace_watermark(area.g.entries);
	slot = __atomic_fetch_add(&h->slots_used, 1, __ATOMIC_RELAXED);
	if (slot < area.g.nslots) {
		struct tc_trace_ring *r = tc_trace_ring_at(h, &area.g, slot);
		r->pid = (uint32_t)getpid();
		r->tid = (uint32_t)syscall(SYS_gettid);
		/* the consumer reads pid and tid once it sees claimed */
		__atomic_store_n(&r->claimed, 1, __ATOMIC_RELEASE);
		t->ring = r;
	}
	return t;
}

/* The stored name equals s as far as a channel keeps it (255 bytes). */
static bool name_eq(const char *stored, const char *s)
{
	return strncmp(stored, s, TC_TRACE_NAME_MAX - 1) == 0;
}

/* A channel's index in the area, published on its first use in the process. Off the
 * fast path: a mutex, the process's name index, maybe an atomic add. */
static int channel_slow(const char *name, uint32_t *out)
{
	struct tc_trace_header *h = area.h;
	char key[TC_TRACE_NAME_MAX];
	uint32_t id, idx;
	int err = 0;

	snprintf(key, sizeof(key), "%s", name);
	pthread_mutex_lock(&area.lock);
	if (tc_strpool_find(&area.names, key, &id)) {
		*out = area.chan[id];
		goto out_unlock;
	}
	idx = __atomic_fetch_add(&h->channels_used, 1, __ATOMIC_RELAXED);
	if (idx >= area.g.nchannels) {
		err = -ENOBUFS;
		goto out_unlock;
	}
	if (area.nchan == area.achan) {
		size_t a = area.achan ? area.achan * 2 : 32;
		uint32_t *c = realloc(area.chan, a * sizeof(*c));
		if (!c) {
			err = -ENOMEM;
			goto out_unlock;
		}
		area.chan = c;
		area.achan = a;
	}
	err = tc_strpool_intern(&area.names, key, &id);
	if (err)
		goto out_unlock;
	area.chan[area.nchan++] = idx;
	struct tc_trace_channel *c = tc_trace_channel_at(h, &area.g, idx);
	memcpy(c->name, key, strlen(key) + 1);
	__atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
	*out = idx;
out_unlock:
	pthread_mutex_unlock(&area.lock);
	return err;
}

/* The ring has filled past its watermark: wake the consumer (tacho waits on the
 * header's wake word, a futex in the shared file, with a thread of its own) so that it
 * drains before the ring is full, instead of at its next timer. Once per crossing, not
 * per mark (tc_trace_crosses): at a million marks a second and 65,536 entries, 61
 * system calls a second. A futex and not a descriptor: the program may close or reuse
 * any descriptor it has, and a write to one it reused would land in its own file. */
static void __attribute__((noinline)) wake_consumer(void)
{
	struct tc_trace_header *h = area.h;

	__atomic_fetch_add(&h->wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &h->wake, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The ring is full and the area asks producers to wait (TC_TRACE_WAIT_FULL): wake the
 * consumer, then sleep on the ring's tail (a futex on its low half, which the consumer
 * wakes after moving it) until there is room, for at most TC_TRACE_STALL_MS in all. The
 * flag and the tail are each written by one side and read by the other in the opposite
 * order, both sequentially consistent: either the producer sees the new tail, or the
 * consumer sees the flag and wakes it. The futex waits 10 ms at most each time, so a
 * consumer that never wakes costs latency, not the program's progress. The new tail,
 * or the old one when the wait gave up (then the thread is stalled: it drops, not
 * waits, until tacho is seen moving its ring's tail again). Counted in the ring for
 * the consumer. */
static uint64_t __attribute__((noinline)) wait_room(struct tc_trace_thread *t,
						    struct tc_trace_ring *r, uint64_t head,
						    uint64_t tail)
{
	const struct timespec slice = { 0, 10 * 1000000 };
	uint64_t t0 = mono_ns(), now = t0;

	wake_consumer();
	while (head - tail > t->mask) {
		if (now - t0 >= (uint64_t)TC_TRACE_STALL_MS * 1000000u) {
			t->stalled = true;
			t->stall_tail = tail;
			break;
		}
		__atomic_store_n(&r->waiting, 1, __ATOMIC_SEQ_CST);
		tail = __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST);
		if (head - tail <= t->mask)
			break;
		syscall(SYS_futex, (uint32_t *)&r->tail, FUTEX_WAIT, (uint32_t)tail, &slice,
			NULL, 0);
		tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		now = mono_ns();
	}
	__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
	t->waits++;
	t->waited_ns += mono_ns() - t0;
	__atomic_store_n(&r->waits, t->waits, __ATOMIC_RELAXED);
	__atomic_store_n(&r->waited_ns, t->waited_ns, __ATOMIC_RELAXED);
	return tail;
}

/* The pointer cache's slot: Fibonacci hashing of the address (as regions do: string
 * literals lie a few bytes apart, and the top bits of the product spread them). */
static inline size_t pc_slot(const char *name)
{
	return (size_t)(((uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull) >> 58);
}

int tc_trace_emit(unsigned kind, const char *channel, uint64_t value)
{
	bool dry = kind & TC_TRACE_DRY;
	struct tc_trace_thread *t = tls;
	struct tc_trace_ring *r;
	struct pc_slot *pc;
	uint64_t head, tail, fill;
	uint32_t index;
	int err;

	if (tc_unlikely(!channel))
		return -EINVAL;
	if (tc_unlikely(!t || t->generation != area.generation)) {
		t = thread_attach();
		if (!t)
			return -ENOMEM;
	}
	r = t->ring;
	if (tc_unlikely(!r)) {
		if (!dry)
			__atomic_fetch_add(&area.h->unslotted, 1, __ATOMIC_RELAXED);
		return -ENOBUFS;
	}
	pc = &t->pc[pc_slot(channel)];
	/* the same pointer usually means the same literal; the compare keeps a reused
	 * buffer with new contents from being taken for the old name */
	if (tc_likely(pc->name == channel) &&
	    name_eq(tc_trace_channel_at(area.h, &area.g, pc->index)->name, channel)) {
		index = pc->index;
	} else {
		err = channel_slow(channel, &index);
		if (err) {
			if (err == -ENOBUFS && !dry)
				__atomic_fetch_add(&area.h->unnamed, 1, __ATOMIC_RELAXED);
			return err;
		}
		pc->name = channel;
		pc->index = index;
	}
	/* the head is this thread's own count, never read back from the area; the tail
	 * is the consumer's and may hold anything: a tail ahead of the head wraps to a
	 * huge distance and reads as full, so nothing past the ring is written either way
	 * (the mask keeps the index inside the ring the checked shape holds) */
	head = t->head;
	tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	fill = head - tail;
	if (tc_unlikely(fill > t->mask) && area.wait_full && !dry) {
		/* a consumer seen moving the tail since a wait gave up is draining again:
		 * wait for it again (checked here, off the fast path, not at every mark) */
		if (t->stalled && tail != t->stall_tail)
			t->stalled = false;
		if (!t->stalled) {
			tail = wait_room(t, r, head, tail);
			fill = head - tail;
		}
	}
	if (tc_unlikely(fill > t->mask)) {
		/* full: drop the newest, counted (this thread's count, stored for the
		 * consumer, which reads it with an atomic load) */
		if (!dry)
			__atomic_store_n(&r->dropped, ++t->dropped, __ATOMIC_RELAXED);
		return -ENOBUFS;
	}
	struct tc_trace_entry *e = &r->e[head & t->mask];
	e->tsc = tacho_tsc_begin();
	e->value = value;
	e->channel = index;
	e->kind = kind & ~(unsigned)TC_TRACE_DRY;
	/* publish: the consumer reads the entry after an acquire load of head; a dry
	 * emit's entry is overwritten by the next */
	if (tc_likely(!dry)) {
		t->head = head + 1;
		__atomic_store_n(&r->head, t->head, __ATOMIC_RELEASE);
		if (tc_unlikely(tc_trace_crosses(fill, t->watermark)))
			wake_consumer();
	}
	return 0;
}

int tacho_mark(const char *channel, uint64_t value)
{
	if (tc_likely(!tc_trace_on()))
		return 0;
	return tc_trace_emit(TC_TRACE_MARK, channel, value);
}

int tacho_mark_counter(const char *channel, uint64_t value)
{
	if (tc_likely(!tc_trace_on()))
		return 0;
	return tc_trace_emit(TC_TRACE_COUNTER, channel, value);
}

bool tacho_trace_active(void)
{
	return tc_trace_on();
}
