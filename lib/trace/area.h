/* area.h - the shared-memory area through which a traced program's marks reach tacho:
 * its layout (one header, a channel table, one ring per thread) and the consumer's
 * calls. docs/trace.md says why marks travel this way. */
#ifndef TACHO_TRACE_AREA_H
#define TACHO_TRACE_AREA_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#define TC_TRACE_MAGIC 0x3130454341525443ull   /* "CTRACE01" little-endian */
#define TC_TRACE_VERSION 1
#define TC_TRACE_NAME_MAX 256                  /* bytes of a channel name, with its NUL */
#define TC_TRACE_DEFAULT_SLOTS 256             /* threads that can mark */
#define TC_TRACE_DEFAULT_ENTRIES 65536         /* entries of each thread's ring */
#define TC_TRACE_DEFAULT_CHANNELS 4096

/* What an entry is. */
enum tc_trace_kind {
	TC_TRACE_MARK = 1,      /* tacho_mark: an instant with a value */
	TC_TRACE_BEGIN = 2,     /* a region's begin (channel: its name) */
	TC_TRACE_END = 3,       /* a region's end */
	TC_TRACE_COUNTER = 4,   /* tacho_mark_counter: a level that holds until the next */
	TC_TRACE_KIND_MAX = 4,
	/* or'd into a kind given to tc_trace_emit: a dry emit, which does all of an emit's
	 * work but publishes nothing and counts no drop (the regions' calibration, which
	 * runs traced so that it measures what a traced region costs, must leave no
	 * entry behind: 1,264 of them had filled small rings before the program marked) */
	TC_TRACE_DRY = 0x100,
};

/* One event in a ring: 24 bytes. */
struct tc_trace_entry {
	uint64_t tsc;
	uint64_t value;
	uint32_t channel;       /* index into the channel table */
	uint32_t kind;          /* enum tc_trace_kind */
};

/* A channel's name. The producer takes an index with an atomic add, writes the name,
 * then sets ready with a release store; the consumer reads it after an acquire load
 * of ready, so it never sees a half-written name. */
struct tc_trace_channel {
	uint32_t ready;
	uint32_t pad;
	char name[TC_TRACE_NAME_MAX];
};

/* One thread's ring: single producer (the thread), single consumer (tacho). head is
 * the producer's count of entries written, tail the consumer's count of entries read;
 * each on its own cache line so that the two sides do not share one. Each side keeps
 * its own count in private memory and only stores it here; what it reads of the
 * other's is bounded before use (the area is the traced program's to scribble on).
 * When the ring is full a new entry is dropped (the newest) and counted in dropped: the
 * entries already there are what the consumer has not read yet, and keeping them keeps
 * every span's begin with its end as far as possible. */
struct tc_trace_ring {
	uint32_t claimed;       /* 1 once a thread owns the ring (set before pid/tid) */
	uint32_t pid, tid;
	uint32_t pad;
	char pad1[48];
	uint64_t head;
	char pad2[56];
	uint64_t tail;
	/* 1 while the producer waits for room (an area made with TC_TRACE_WAIT_FULL): a
	 * futex on the tail's low 32 bits (x86-64 is little-endian), which the consumer
	 * wakes after it has moved the tail. Added in the padding of version 1: an older
	 * consumer never looks at it, and the producer's wait times out */
	uint32_t waiting;
	char pad3[52];
	uint64_t dropped;
	/* the producer's waits for room and the nanoseconds they took (its own counts,
	 * stored for the consumer as dropped is); in version 1's padding too */
	uint64_t waits, waited_ns;
	char pad4[40];
	struct tc_trace_entry e[];
};

struct tc_trace_header {
	uint64_t magic;
	uint32_t version;
	uint32_t nslots;        /* rings */
	uint32_t entries;       /* entries of a ring (a power of two) */
	uint32_t nchannels;     /* size of the channel table */
	uint64_t channels_off;  /* byte offsets from the start of the area */
	uint64_t rings_off;
	uint64_t ring_bytes;    /* one ring with its entries */
	uint64_t size;          /* of the whole area */
	uint32_t slots_used;    /* atomic: rings handed out (may pass nslots: then full) */
	uint32_t channels_used; /* atomic: channel indexes handed out (may pass nchannels) */
	uint64_t unslotted;     /* atomic: marks dropped because no ring was left */
	uint64_t unnamed;       /* atomic: marks dropped because the channel table was full */
	/* atomic: bumped by a producer each time one of its rings fills past the
	 * watermark (a futex word: the producer wakes whoever waits on it). Added after
	 * version 1's fields without a new version: a consumer that never looks at it
	 * drains on its timer as before, and an area made before it reads as 0 */
	uint32_t wake;
	/* TC_TRACE_WAIT_FULL or 0, set by tacho before the program starts and read by the
	 * producer once, at its attachment (kept in its private memory with the shape).
	 * Version 1's padding: an area of an older tacho reads as 0, and an older library
	 * ignores it (it drops marks on a full ring, as it always did) */
	uint32_t flags;
};

/* A producer whose ring is full waits for the consumer to make room instead of dropping
 * the mark (tacho trace --ring-full wait): no mark is lost, and the program is slowed by
 * the waits, which are counted. A wait gives up after TC_TRACE_STALL_MS without room (a
 * consumer that stopped draining: the mark is dropped, counted, and that thread drops
 * rather than waits until tacho is seen moving its ring's tail again), so a dead tacho
 * never stops the program for longer than that. */
#define TC_TRACE_WAIT_FULL 1u
#define TC_TRACE_STALL_MS 1000

/* The area's shape as its header gives it, checked once (tc_trace_geom_check) and then
 * kept in each side's private memory. Neither side reads it from the area again: the
 * traced program, or a stray pointer in it, may write anything there at any time, and
 * an offset re-read after the check is an offset never checked. */
struct tc_trace_geom {
	uint32_t nslots, entries, nchannels;
	uint64_t channels_off, rings_off, ring_bytes, size;
};

/* The limits of a geometry (tacho trace's --ring says the entries' to its users). */
#define TC_TRACE_MAX_SLOTS 65536u
#define TC_TRACE_MAX_ENTRIES (1u << 24)
#define TC_TRACE_MAX_CHANNELS (1u << 20)

/* The geometry of an area of nslots rings of entries entries (a power of two from 2 to
 * TC_TRACE_MAX_ENTRIES) and nchannels names; 0 for a default. 0 or -EINVAL. */
int tc_trace_geom_make(uint32_t nslots, uint32_t entries, uint32_t nchannels,
		       struct tc_trace_geom *g);
/* Checks a header copied out of an area of size bytes, with overflow-checked arithmetic:
 * the magic and version, the sizes within tc_trace_geom_make's limits, each ring large
 * enough for its entries, the header, the channel table and the rings one after the
 * other inside the area, each aligned for its atomics. 0 and *g, or -TACHO_ECORRUPT. */
int tc_trace_geom_check(const struct tc_trace_header *h, uint64_t size, struct tc_trace_geom *g);

/* Channel i and ring i of the area at base, from a checked geometry (i below its
 * nchannels, nslots). */
static inline struct tc_trace_channel *tc_trace_channel_at(void *base,
							   const struct tc_trace_geom *g,
							   uint32_t i)
{
	return (struct tc_trace_channel *)((char *)base + g->channels_off) + i;
}

static inline struct tc_trace_ring *tc_trace_ring_at(void *base, const struct tc_trace_geom *g,
						     uint32_t i)
{
	return (struct tc_trace_ring *)((char *)base + g->rings_off + (uint64_t)i * g->ring_bytes);
}

/* --- the consumer's side (tacho, or a test) --- */

/* What the consumer keeps of a ring, privately: where it has read to, whose ring it is
 * (pid and tid as they were when the ring was claimed), and whether it gave up on it. */
struct tc_trace_slot {
	uint64_t tail;
	uint32_t pid, tid;
	bool claimed;
	bool dead;              /* its indexes could not be: not read again */
};

/* Damage found in the area: things no producer writes, so the traced program (a stray
 * pointer) wrote over its area. Each is refused and counted, never followed. */
struct tc_trace_damage {
	uint64_t entries;       /* entries and channel names refused: a kind or channel
				   that cannot be, a channel never published, a name
				   without its end */
	uint64_t rings;         /* rings given up: a head more than a ring ahead of what
				   was read, or behind it */
	uint64_t header;        /* 1 once the header's shape or counts were overwritten */
};

struct tc_trace_area {
	void *base;             /* the mapping */
	struct tc_trace_geom g; /* as created: never read back from the area */
	int fd;                 /* the memfd (close-on-exec here), -1 when none */
	struct tc_trace_slot *slot;     /* [g.nslots] */
	uint32_t slots_seen;    /* the most slots_used has said, up to nslots */
	uint32_t channels_seen; /* the same of channels_used, up to nchannels */
	uint64_t unslotted, unnamed;    /* the header's drop counts while it was whole */
	struct tc_trace_damage damage;
	bool behind;            /* the last drain left a ring past its watermark (it
				   filled while it was read): drain again at once */
	uint32_t flags;         /* the header's flags as tacho set them */
};

/* Creates an area of nslots rings of entries entries each (a power of two, at least 2)
 * and nchannels names, 0 for the defaults: an anonymous file (memfd_create), so no name
 * exists that anyone could plant, predict or open, and nothing is left behind when tacho
 * ends however it ends; mode 0600, sealed against shrinking and growing, so that
 * nobody holding it can cut it under a mapping (SIGBUS). The program to trace gets it
 * by descriptor (tc_trace_area_env). 0, -EINVAL, -ENOMEM, or -errno of memfd_create,
 * ftruncate, fcntl or mmap. */
int tc_trace_area_create(struct tc_trace_area *a, uint32_t nslots, uint32_t entries,
			 uint32_t nchannels);
/* Sets the area's flags (TC_TRACE_WAIT_FULL) for the producers to read when they attach:
 * call before the program starts. */
void tc_trace_area_set_flags(struct tc_trace_area *a, uint32_t flags);
/* Unmaps and closes. Safe after tc_trace_area_create, whether it failed or not, and
 * twice (a zeroed area is not: its descriptor would read as 0, stdin). */
void tc_trace_area_free(struct tc_trace_area *a);

/* What the traced program's environment gets: "TACHO_TRACE=/proc/self/fd/N", N the
 * area's descriptor, which the program inherits (it is made inheritable in the child
 * only, between fork and exec). This library takes the descriptor itself; a program
 * built with an older libtacho, which opens TACHO_TRACE as a path, opens the same file
 * through /proc. 0, or -ENAMETOOLONG. */
int tc_trace_area_env(const struct tc_trace_area *a, char *buf, size_t size);

/* What tc_trace_area_drain hands out. */
struct tc_trace_visit {
	void *arg;
	/* a channel seen ready for the first time: index and name */
	int (*channel)(void *arg, uint32_t index, const char *name);
	/* each entry of ring `slot` of thread pid/tid, oldest first; its kind and channel
	 * are checked (a kind of enum tc_trace_kind, a channel the visit has seen) */
	int (*entry)(void *arg, uint32_t slot, uint32_t pid, uint32_t tid,
		     const struct tc_trace_entry *e);
};

/* Reads every entry the producers have published since the last call, ring by ring,
 * and frees their room. New channels come first (a ring's entry never names a channel
 * the visit has not seen). known is the consumer's count of channels already visited
 * (kept by the caller, starting at 0). Every index and entry read from the area is
 * bounded and checked: at most one ring's worth of entries a ring per call, a ring
 * whose head cannot be is given up, an impossible entry is skipped, each counted in
 * the area's damage; an entry whose channel is not published yet waits for the next
 * call, or is refused when final is set (the producers are done). 0, or the first
 * non-zero a callback returned (the drain stops there; the entries of that ring from
 * there on stay unread). */
int tc_trace_area_drain(struct tc_trace_area *a, uint32_t *known,
			const struct tc_trace_visit *v, bool final);

/* Waking the consumer when a ring passes its watermark. The producers bump the
 * header's wake word and FUTEX_WAKE it (a system call once per crossing); poll(2)
 * cannot wait on a futex, so a thread of the waker's waits on it and makes an eventfd
 * readable, which the consumer polls beside its other descriptors. The thread touches
 * nothing but the wake word and the eventfd. */
struct tc_trace_waker {
	uint32_t *word;         /* the area's wake word */
	uint32_t seen;          /* its value when the waker started */
	int fd;                 /* the eventfd: readable after a crossing, -1 when none */
	int stop;               /* atomic: the thread ends */
	bool running;
	pthread_t thread;
};

/* Starts waiting on area a's wake word. 0, or -errno of eventfd or pthread_create
 * (then w->fd is -1 and nothing runs: the consumer drains on its timer alone). */
int tc_trace_waker_start(struct tc_trace_waker *w, struct tc_trace_area *a);
/* Empties the eventfd once it was readable (the drain that follows reads every ring). */
void tc_trace_waker_clear(struct tc_trace_waker *w);
/* Makes the eventfd readable from the consumer's side (a drain left a ring behind). */
void tc_trace_waker_poke(struct tc_trace_waker *w);
/* Ends the thread and closes the eventfd. Safe after a failed start, and twice. The
 * thread looks at its stop flag at least every TC_TRACE_WAKER_POLL_MS, so a program
 * that writes over the wake word cannot keep it waiting. */
#define TC_TRACE_WAKER_POLL_MS 100
void tc_trace_waker_stop(struct tc_trace_waker *w);

/* Totals of what the producers dropped: full rings, no ring left, no channel left (as
 * the producers counted them, saturating). A ring given up counts nothing, and once the
 * header was written over its counts are the last ones read before: neither holds a
 * count any more. */
struct tc_trace_drops {
	uint64_t ring_full, no_ring, no_channel;
	uint64_t waits, waited_ns;      /* the producers' waits for room (TC_TRACE_WAIT_FULL) */
};
void tc_trace_area_drops(struct tc_trace_area *a, struct tc_trace_drops *out);

/* --- the producer's side --- */

/* The fill of a ring (entries written and not yet read) at which its producer wakes
 * the consumer: a quarter of the ring, as perf's own rings wake their reader, so that
 * the consumer has three quarters of a ring's time to come. */
static inline uint64_t tc_trace_watermark(uint32_t entries)
{
	return entries >= 4 ? entries / 4 : 1;
}

/* Whether a producer that finds fill entries in its ring before writing one more
 * crosses the watermark with it: exactly once per rise from below, never per mark. The
 * fill seen before each write grows by at most one from one write to the next (the
 * producer adds one entry; the consumer only takes entries away), so a rise from below
 * the watermark to above it passes through fill == watermark exactly once. */
static inline bool tc_trace_crosses(uint64_t fill, uint64_t watermark)
{
	return fill == watermark;
}

/* Tracing state of this process: 0 not looked at yet, 1 off, 2 on. */
extern int tc_trace_state;

/* Looks at TACHO_TRACE once (thread-safe; through tc_env_trusted: ignored, with a
 * warning on the log, in a setuid, setgid or capable process) and maps the area it
 * names. */
void tc_trace_setup(void);

/* Attaches this process to the area that spec names, as TACHO_TRACE does at the first
 * mark: "/proc/self/fd/N" is the inherited descriptor N (which must be a sealed memfd,
 * as tacho makes), anything else a path (an older tacho's /dev/shm file), opened
 * without following a link. The header is copied out and checked once
 * (tc_trace_geom_check). 0, -EBUSY when already attached, -TACHO_ECORRUPT for a file
 * that is not an area, -EINVAL for a descriptor that is not a sealed memfd, -errno. */
int tc_trace_attach(const char *spec);
/* Detaches (the test's other end); the calling thread's ring is forgotten. */
void tc_trace_detach(void);

/* Whether marks are being recorded, deciding on first use. */
static inline bool tc_trace_on(void)
{
	int s = __atomic_load_n(&tc_trace_state, __ATOMIC_RELAXED);

	if (__builtin_expect(s == 0, 0)) {
		tc_trace_setup();
		s = __atomic_load_n(&tc_trace_state, __ATOMIC_ACQUIRE);
	}
	return s == 2;
}

/* Puts one entry of kind (with TC_TRACE_DRY: writes it and does not publish it) on the
 * calling thread's ring, stamped with the TSC now. Call only when tc_trace_on(). In an
 * area made with TC_TRACE_WAIT_FULL, a full ring makes it wait for room (not a dry
 * emit: that never waits), up to TC_TRACE_STALL_MS. 0, -EINVAL (NULL channel), -ENOBUFS
 * (dropped and counted unless dry: ring full, no ring or no channel left), -ENOMEM. */
int tc_trace_emit(unsigned kind, const char *channel, uint64_t value);

#endif
