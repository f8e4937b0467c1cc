/* record.c - a sampling session: open sampling events on a program, a process or the
 * CPUs, read their rings as they fill, and write the record file as it goes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "events/events.h"
#include "perf/perf.h"
#include "perf/ring.h"
#include "sample/recfile.h"
#include "sample/symbols.h"

#define DEFAULT_PAGES 128        /* 512 KiB of data per ring */
#define DEFAULT_FLUSH_MS 200
#define DEFAULT_CALIBRATE_MS 100
#define DEFAULT_RATE 1000

struct rec_event {
	char *name;
	struct perf_event_attr attr;
	enum tacho_event_source source;
	uint32_t flags;                 /* TC_EVF_* */
	bool calibrate;                 /* period to be chosen from the first window */
	uint64_t period;                /* fixed period, or frequency with TC_EVF_FREQ */
	uint64_t samples;               /* samples of this event written */
};

struct rec_fd {
	int fd;
	unsigned ev;                    /* index into events */
	uint64_t id;                    /* the kernel's PERF_EVENT_IOC_ID */
	int ring;                       /* the ring it writes to */
};

/* Build-ids read from files at record time, by path: one read per binary. */
struct bid_cache {
	char *path;
	uint8_t bid[TC_BUILD_ID_MAX];
	int len;                        /* < 0: none */
};

struct session {
	const struct tacho_record_opts *o;
	struct tacho_record_result *res;
	struct rec_event *ev;
	size_t nev;
	struct rec_fd *fds;
	size_t nfds, fds_alloc;
	struct tc_ring *rings;
	size_t nrings;
	uint64_t sample_type;
	struct tc_recw w;
	struct bid_cache *bids;
	size_t nbids;
	bool have_vdso;
	uint64_t unparsed;              /* sample records too short for their fields */
	char msg[256];
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void notify(struct session *s, const char *fmt, ...) TC_PRINTF(2, 3);
static void notify(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	if (s->o->notify)
		s->o->notify(s->o->notify_arg, s->msg);
	else
		tc_log(TACHO_LOG_INFO, "%s", s->msg);
}

/* Software events whose sample has a data address (the faulting address), and
 * breakpoints (the watched address). */
static bool event_has_addr(const struct perf_event_attr *a)
{
	if (a->type == PERF_TYPE_BREAKPOINT)
		return true;
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_PAGE_FAULTS || a->config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
		a->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ || a->config == PERF_COUNT_SW_ALIGNMENT_FAULTS ||
		a->config == PERF_COUNT_SW_EMULATION_FAULTS);
}

static bool event_is_time(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* A data breakpoint (bp_type with R or W) is a trap: the IP is the next instruction.
 * An execute breakpoint is a fault: the IP is the instruction itself. */
static bool event_is_trap(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_BREAKPOINT && (a->bp_type & (HW_BREAKPOINT_R | HW_BREAKPOINT_W));
}

/* The period tacho starts with while it measures the rate (calibration). Events that
 * occur at most a few hundred thousand times a second (software, tracepoints,
 * breakpoints) start at 1; hardware events at a prime near 100 000 (a cycles event at
 * 3 GHz then interrupts 30 000 times a second for the window, well under the kernel's
 * throttling limit). */
static uint64_t provisional_period(const struct rec_event *e)
{
	switch (e->source) {
	case TACHO_EVENT_SRC_SOFTWARE:
	case TACHO_EVENT_SRC_TRACEPOINT:
	case TACHO_EVENT_SRC_BREAKPOINT:
		return 1;
	default:
		return 100003;
	}
}

static int setup_events(struct session *s, struct tacho_diag *diag)
{
	const struct tacho_record_opts *o = s->o;
	struct tacho_evlist *list = NULL;
	const char *spec = o->events;
	struct tc_perf_env env;
	bool priv;
	int err;

	tc_perf_env_probe(&env);
	priv = tc_perf_env_privileged(&env) || (env.paranoid != TC_PARANOID_UNKNOWN && env.paranoid <= 1);
	if (!spec || !*spec)
		spec = env.core_pmu[0] ? "cycles" : "cpu-clock";
	err = tacho_evlist_parse(spec, &list, diag);
	if (err)
		return err;
	s->nev = tacho_evlist_count(list);
	if (s->nev == 0 || s->nev > 64) {
		tacho_evlist_free(list);
		return tc_diag_set(diag, spec, 0, 0, -TACHO_ERANGE, "record takes 1 to 64 events");
	}
	s->ev = calloc(s->nev, sizeof(*s->ev));
	if (!s->ev) {
		tacho_evlist_free(list);
		return -ENOMEM;
	}
	/* PERF_SAMPLE_PERIOD only in frequency mode, where the kernel varies the period:
	 * with a fixed period a software event that is asked for the period samples EVERY
	 * event, each with period 1, whatever sample_period says (perf_swevent_event()
	 * in kernel/events/core.c). With a fixed period the file takes it from the event
	 * (and from the PERIOD record after calibration). */
	s->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	if (o->freq)
		s->sample_type |= PERF_SAMPLE_PERIOD;
	if (o->callchain)
		s->sample_type |= PERF_SAMPLE_CALLCHAIN;
	for (size_t i = 0; i < s->nev; i++) {
		struct rec_event *e = &s->ev[i];
		struct perf_event_attr *a = &e->attr;

		e->name = tc_strdup(tacho_evlist_name(list, i));
		tacho_evlist_attr(list, i, a);
		e->source = tacho_evlist_source(list, i);
		if (event_has_addr(a))
			s->sample_type |= PERF_SAMPLE_ADDR, e->flags |= TC_EVF_ADDR;
		if (event_is_trap(a))
			e->flags |= TC_EVF_TRAP;
		if (o->callchain)
			e->flags |= TC_EVF_CALLCHAIN;
		if (o->period) {
			e->period = o->period;
		} else if (o->freq) {
			e->period = o->freq;
			e->flags |= TC_EVF_FREQ;
		} else if (event_is_time(a)) {
			/* the clocks count nanoseconds: 1 ms of CPU time is exactly 1000
			 * samples per CPU-second, with no calibration needed */
			e->period = 1000000000ull / (o->rate ? o->rate : DEFAULT_RATE);
		} else {
			e->calibrate = true;
			e->period = provisional_period(e);
		}
		if (e->flags & TC_EVF_FREQ) {
			a->freq = 1;
			a->sample_freq = e->period;
		} else {
			a->sample_period = e->period;
		}
		/* without privilege at paranoid 2 only user space may be sampled */
		if (!priv && a->type != PERF_TYPE_TRACEPOINT) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
		}
	}
	tacho_evlist_free(list);
	for (size_t i = 0; i < s->nev; i++)
		if (!s->ev[i].name)
			return -ENOMEM;
	return 0;
}

static void fill_attr(struct session *s, size_t i, struct perf_event_attr *a, bool first,
		      bool child, bool inherit)
{
	const struct tacho_record_opts *o = s->o;
	unsigned pages = o->mmap_pages ? o->mmap_pages : DEFAULT_PAGES;

	*a = s->ev[i].attr;
	a->sample_type = s->sample_type;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a->disabled = 1;
	a->enable_on_exec = child;
	a->inherit = inherit;
	a->sample_id_all = 1;
	/* the side-band records come once, from the first event on each ring */
	a->mmap = first;
	a->mmap2 = first;
	a->comm = first;
	a->comm_exec = first;
	a->task = first;
	a->build_id = first;
	/* wake the reader when a quarter of the ring is full; the poll timeout flushes
	 * the rest so that the file keeps up with the recording */
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((size_t)pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	if (o->callchain) {
		a->exclude_callchain_kernel = 0;
		a->sample_max_stack = 127;
	}
}

static int add_fd(struct session *s, int fd, unsigned ev, int ring)
{
	struct rec_fd *f;

	if (s->nfds == s->fds_alloc) {
		size_t n = s->fds_alloc ? s->fds_alloc * 2 : 16;
		struct rec_fd *nf = realloc(s->fds, n * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		s->fds = nf;
		s->fds_alloc = n;
	}
	f = &s->fds[s->nfds++];
	f->fd = fd;
	f->ev = ev;
	f->ring = ring;
	f->id = 0;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &f->id) < 0)
		f->id = 0;
	return 0;
}

/* Opens every event for one (pid, cpu) pair. The first event of the first pair on a
 * CPU owns that CPU's ring; the others are redirected into it (PERF_EVENT_IOC_SET_OUTPUT),
 * so there is one ring per CPU whatever the number of events and threads. */
static int open_pair(struct session *s, pid_t pid, int cpu, int *ring_of_cpu, bool child,
		     bool inherit, struct tacho_diag *diag)
{
	unsigned pages = s->o->mmap_pages ? s->o->mmap_pages : DEFAULT_PAGES;

	for (size_t i = 0; i < s->nev; i++) {
		struct perf_event_attr a;
		bool owner = *ring_of_cpu < 0;
		int fd, err;

		fill_attr(s, i, &a, owner, child, inherit);
		fd = tc_perf_event_open(&a, pid, cpu, -1, 0);
		if (fd == -EINVAL && a.build_id) {
			/* before Linux 5.12: no build-ids in MMAP2; tacho reads them itself */
			a.build_id = 0;
			fd = tc_perf_event_open(&a, pid, cpu, -1, 0);
		}
		if (fd < 0) {
			char why[512];
			enum tacho_hint hint;
			if (fd == -ESRCH && !child)
				return fd;   /* a thread that ended meanwhile: the caller skips it */
			tacho_perf_strerror(fd, &a, why, sizeof(why), &hint);
			err = tc_diag_set(diag, s->ev[i].name, 0, 0, fd, "cannot sample '%s': %s",
					  s->ev[i].name, why);
			if (diag)
				diag->hint = hint;
			return err;
		}
		if (owner) {
			struct tc_ring *r = &s->rings[s->nrings];
			err = tc_ring_mmap(r, fd, pages);
			if (err) {
				close(fd);
				return tc_diag_set(diag, s->ev[i].name, 0, 0, err,
						   "cannot map the sample buffer of '%s' (%u pages): %s",
						   s->ev[i].name, pages, tacho_strerror(err));
			}
			*ring_of_cpu = (int)s->nrings++;
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[*ring_of_cpu].fd) < 0) {
			err = -errno;
			close(fd);
			return tc_diag_set(diag, s->ev[i].name, 0, 0, err,
					   "cannot share the sample buffer for '%s': %s",
					   s->ev[i].name, tacho_strerror(err));
		}
		err = add_fd(s, fd, (unsigned)i, *ring_of_cpu);
		if (err) {
			close(fd);
			return err;
		}
	}
	return 0;
}

static int build_id_cached(struct session *s, const char *path, uint8_t *bid)
{
	struct bid_cache *nb;

	for (size_t i = 0; i < s->nbids; i++)
		if (!strcmp(s->bids[i].path, path)) {
			if (s->bids[i].len > 0)
				memcpy(bid, s->bids[i].bid, (size_t)s->bids[i].len);
			return s->bids[i].len;
		}
	nb = realloc(s->bids, (s->nbids + 1) * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	s->bids = nb;
	nb[s->nbids].path = tc_strdup(path);
	nb[s->nbids].len = path[0] == '/' ? tc_build_id_of_file(path, nb[s->nbids].bid,
								  TC_BUILD_ID_MAX) : -ENOENT;
	if (!nb[s->nbids].path)
		return -ENOMEM;
	if (nb[s->nbids].len > 0)
		memcpy(bid, nb[s->nbids].bid, (size_t)nb[s->nbids].len);
	return nb[s->nbids++].len;
}

static void write_mmap(struct session *s, uint32_t pid, uint32_t tid, uint64_t start,
		       uint64_t len, uint64_t pgoff, uint32_t prot, uint64_t time,
		       const uint8_t *kbid, unsigned kbid_len, const char *filename)
{
	uint8_t bid[TC_BUILD_ID_MAX];
	int n = 0;

	if (kbid && kbid_len) {
		memcpy(bid, kbid, kbid_len);
		n = (int)kbid_len;
	} else {
		n = build_id_cached(s, filename, bid);
	}
	tc_recw_mmap(&s->w, pid, tid, start, len, pgoff, prot, time, bid, n > 0 ? (unsigned)n : 0,
		     filename);
}

/* The layout of PERF_RECORD_MMAP2 (perf_event_open(2)): pid, tid, addr, len, pgoff, then
 * maj/min/ino/ino_generation or (with PERF_RECORD_MISC_MMAP_BUILD_ID) the build-id,
 * then prot, flags, filename. */
struct k_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct { uint32_t maj, min; uint64_t ino, ino_generation; } dev;
		struct { uint8_t size, res1; uint16_t res2; uint8_t id[20]; } bid;
	} u;
	uint32_t prot, flags;
	char filename[];
};

struct k_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

static int fd_id_cmp(const void *a, const void *b)
{
	const struct rec_fd *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Per sample: a binary search over the fds, sorted by id once they are all open (there
 * is one fd per event, CPU and, with -p, thread: a linear scan grows with all three). */
static uint64_t lookup_event(struct session *s, uint64_t id)
{
	struct rec_fd key = { .id = id };
	const struct rec_fd *f = bsearch(&key, s->fds, s->nfds, sizeof(*s->fds), fd_id_cmp);

	return f ? f->ev : 0;
}

static int on_record(void *arg, const struct perf_event_header *h)
{
	struct session *s = arg;
	struct tc_perf_sample_id sid;

	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct tc_perf_sample smp;
		uint64_t ev;
		if (tc_perf_parse_sample(s->sample_type, h, &smp) != 0) {
			s->unparsed++;   /* told after the last drain; never stop the drain */
			return 0;
		}
		ev = s->nev > 1 ? lookup_event(s, smp.id) : 0;
		if (!(s->sample_type & PERF_SAMPLE_PERIOD))
			smp.period = s->ev[ev].period;
		tc_recw_sample(&s->w, smp.time, smp.ip, smp.addr, smp.period, smp.pid, smp.tid,
			       smp.cpu, (uint16_t)ev, smp.misc, (uint32_t)smp.nr, smp.chain);
		s->res->samples++;
		if (ev < s->nev)
			s->ev[ev].samples++;
		break;
	}
	case PERF_RECORD_MMAP2: {
		const struct k_mmap2 *m = (const void *)h;
		size_t max;
		char name[4096];
		if (h->size < sizeof(*m))
			break;
		max = h->size - sizeof(*m);
		snprintf(name, sizeof(name), "%.*s", (int)strnlen(m->filename, max), m->filename);
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		if (!(m->prot & 4 /* PROT_EXEC */))
			break;
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID && m->u.bid.size <= 20)
			write_mmap(s, m->pid, m->tid, m->addr, m->len, m->pgoff, m->prot, sid.time,
				   m->u.bid.id, m->u.bid.size, name);
		else
			write_mmap(s, m->pid, m->tid, m->addr, m->len, m->pgoff, m->prot, sid.time,
				   NULL, 0, name);
		break;
	}
	case PERF_RECORD_COMM: {
		const uint32_t *p = (const void *)(h + 1);
		const char *comm = (const char *)(p + 2);
		char name[64];
		size_t max;
		if (h->size < sizeof(*h) + 8)
			break;
		max = h->size - sizeof(*h) - 8;
		snprintf(name, sizeof(name), "%.*s", (int)strnlen(comm, max), comm);
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_recw_comm(&s->w, p[0], p[1], h->misc & PERF_RECORD_MISC_COMM_EXEC, sid.time, name);
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		const struct k_task *t = (const void *)h;
		if (h->size < sizeof(*t))
			break;
		tc_recw_task(&s->w, h->type == PERF_RECORD_FORK ? TC_TASK_FORK : TC_TASK_EXIT,
			     t->pid, t->ppid, t->tid, t->ptid, t->time);
		break;
	}
	case PERF_RECORD_LOST: {
		const uint64_t *p = (const void *)(h + 1);   /* id, lost */
		if (h->size < sizeof(*h) + 16)
			break;
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_recw_lost(&s->w, p[1], sid.time, sid.cpu);
		s->res->lost += p[1];
		break;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		const uint64_t *p = (const void *)(h + 1);   /* lost */
		if (h->size < sizeof(*h) + 8)
			break;
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_recw_lost(&s->w, p[0], sid.time, sid.cpu);
		s->res->lost += p[0];
		break;
	}
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE: {
		const uint64_t *p = (const void *)(h + 1);   /* time, id, stream_id */
		if (h->size < sizeof(*h) + 24)
			break;
		tc_perf_parse_sample_id(s->sample_type, h, &sid);
		tc_recw_throttle(&s->w, p[0], sid.cpu, h->type == PERF_RECORD_THROTTLE);
		if (h->type == PERF_RECORD_THROTTLE)
			s->res->throttled++;
		break;
	}
	default:
		break;
	}
	return 0;
}

/* The kernel writes a PERF_RECORD_LOST only just before its next record on that ring:
 * when the ring was still full as the program ended, the last losses reach the file in
 * no record at all. With period 1 every event is a sample, so the count (summed over
 * CPUs and, through inherit, over exited threads and children) says exactly how many
 * were due; what arrived neither as a sample nor in a LOST record was dropped too (a
 * full ring at the end, or throttling) and is counted as lost, never hidden. Larger
 * periods are left alone: each inherited task keeps its own remainder, so the count
 * would overstate what was due. Call after the final drain, with the events disabled. */
static void account_unreported_lost(struct session *s)
{
	uint64_t due = 0, got = 0, extra;

	for (size_t e = 0; e < s->nev; e++) {
		if (s->ev[e].calibrate || (s->ev[e].flags & TC_EVF_FREQ) || s->ev[e].period != 1)
			return;
		for (size_t i = 0; i < s->nfds; i++) {
			uint64_t v[3];
			if (s->fds[i].ev == e && read(s->fds[i].fd, v, sizeof(v)) == sizeof(v))
				due += v[0];
		}
		got += s->ev[e].samples;
	}
	if (due <= got + s->res->lost)
		return;
	extra = due - got - s->res->lost;
	tc_recw_lost(&s->w, extra, 0, 0);
	s->res->lost += extra;
}

static int drain_all(struct session *s)
{
	for (size_t i = 0; i < s->nrings; i++) {
		int n = tc_ring_drain(&s->rings[i], on_record, s);
		if (n == -TACHO_ECORRUPT)
			tc_log(TACHO_LOG_WARN, "the sample buffer of CPU ring %zu was inconsistent; "
			       "its unread records were dropped", i);
	}
	return tc_recw_flush(&s->w);
}

/* The vDSO is the same image in every process of this kernel and ABI: copy tacho's
 * own, so that reports can symbolize it anywhere. */
static void write_vdso(struct session *s)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi > lo &&
		    hi - lo <= (1u << 20)) {
			uint8_t bid[TC_BUILD_ID_MAX];
			int n = tc_build_id_of_image((const void *)lo, hi - lo, bid, sizeof(bid));
			tc_recw_image(&s->w, bid, n > 0 ? (unsigned)n : 0, "[vdso]", (const void *)lo,
				      hi - lo);
			s->have_vdso = true;
			break;
		}
	}
	fclose(f);
}

/* Executable mappings of a process that already runs (-p, -a): the kernel only
 * reports mappings made after the events are enabled. */
static void synthesize_process(struct session *s, pid_t pid)
{
	char path[64], line[4600], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (tc_read_line_file(path, comm, sizeof(comm)) == 0)
		tc_recw_comm(&s->w, (uint32_t)pid, (uint32_t)pid, false, 0, comm);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perms[8], file[4096] = "";
		int n = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &off, &n) < 4)
			continue;
		if (perms[2] != 'x')
			continue;
		snprintf(file, sizeof(file), "%s", line + n);
		file[strcspn(file, "\n")] = 0;
		if (!file[0])
			continue;
		write_mmap(s, (uint32_t)pid, (uint32_t)pid, lo, hi - lo, off, 5, 0, NULL, 0, file);
	}
	fclose(f);
}

static void synthesize_all(struct session *s)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		synthesize_process(s, (pid_t)pid);
		if (s->w.buf.len > (1u << 20))
			tc_recw_flush(&s->w);
	}
	closedir(d);
}

static void write_meta(struct session *s)
{
	const struct tacho_record_opts *o = s->o;
	struct tc_sb sb = TC_SB_INIT;
	struct utsname u;
	char buf[256];
	long long kr = -1;

	tc_sb_init(&sb);
	if (o->argv)
		for (size_t i = 0; o->argv[i]; i++)
			tc_sb_addf(&sb, "%s%s", i ? " " : "", o->argv[i]);
	else if (o->pid)
		tc_sb_addf(&sb, "-p %d", (int)o->pid);
	else
		tc_sb_adds(&sb, "-a");
	if (!sb.oom)
		tc_recw_meta(&s->w, "command", sb.buf);
	tc_sb_exit(&sb);
	tc_recw_meta(&s->w, "tacho", tacho_version());
	if (uname(&u) == 0) {
		tc_recw_meta(&s->w, "kernel", u.release);
		tc_recw_meta(&s->w, "hostname", u.nodename);
		tc_recw_meta(&s->w, "machine", u.machine);
	}
	if (tc_read_line_file("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) == 0)
		tc_recw_meta(&s->w, "boot_id", buf);
	if (tc_read_int_file("/proc/sys/kernel/kptr_restrict", &kr) == 0) {
		snprintf(buf, sizeof(buf), "%lld", kr);
		tc_recw_meta(&s->w, "kptr_restrict", buf);
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, now_ns(CLOCK_REALTIME));
	tc_recw_meta(&s->w, "start_realtime_ns", buf);
	/* perf's timestamps are the kernel's local clock; CLOCK_MONOTONIC is close */
	snprintf(buf, sizeof(buf), "%" PRIu64, now_ns(CLOCK_MONOTONIC));
	tc_recw_meta(&s->w, "start_monotonic_ns", buf);
	for (size_t i = 0; i < s->nev; i++)
		tc_recw_event(&s->w, (uint32_t)i, s->ev[i].attr.type, s->ev[i].attr.config,
			      s->sample_type, s->ev[i].period, s->ev[i].flags, s->ev[i].name);
}

static void describe_choice(struct session *s)
{
	for (size_t i = 0; i < s->nev; i++) {
		const struct rec_event *e = &s->ev[i];
		char g[32];
		if (e->flags & TC_EVF_FREQ)
			notify(s, "sampling %s at %" PRIu64 " samples per second (frequency mode: the "
			       "kernel adjusts the period)", e->name, e->period);
		else if (e->calibrate)
			notify(s, "sampling %s: measuring its rate for %u ms to choose a period for "
			       "about %u samples per second", e->name,
			       s->o->calibrate_ms ? s->o->calibrate_ms : DEFAULT_CALIBRATE_MS,
			       s->o->rate ? s->o->rate : DEFAULT_RATE);
		else if (!s->o->period && event_is_time(&e->attr))
			notify(s, "sampling %s every %s ns of CPU time (period %" PRIu64 ", %u samples "
			       "per CPU-second)", e->name, tc_fmt_grouped(e->period, g, sizeof(g)),
			       e->period, s->o->rate ? s->o->rate : DEFAULT_RATE);
		else
			notify(s, "sampling %s every %" PRIu64 " events", e->name, e->period);
	}
	snprintf(s->res->choice, sizeof(s->res->choice), "%s", s->msg);
}

/* VTune's "Sample After" calibration (seed 004): from the count of the first window,
 * the period that gives about `rate` samples per second of the program's CPU time,
 * applied to every open event with PERF_EVENT_IOC_PERIOD. */
static void calibrate(struct session *s, bool final)
{
	unsigned rate = s->o->rate ? s->o->rate : DEFAULT_RATE;

	for (size_t e = 0; e < s->nev; e++) {
		uint64_t count = 0, enabled = 0, period;
		char g[32];
		if (!s->ev[e].calibrate)
			continue;
		for (size_t i = 0; i < s->nfds; i++) {
			uint64_t v[3];
			if (s->fds[i].ev != e || read(s->fds[i].fd, v, sizeof(v)) != sizeof(v))
				continue;
			/* running time summed over CPUs (and, through inherit, threads): the
			 * program's CPU time, the base of "samples per second" that cpu-clock's
			 * 1 ms period also has */
			count += v[0];
			enabled += v[2];
		}
		if (!enabled || !count) {
			if (!final)
				continue;
			notify(s, "%s: no events in the first %u ms; keeping the period of %" PRIu64,
			       s->ev[e].name, s->o->calibrate_ms ? s->o->calibrate_ms : DEFAULT_CALIBRATE_MS,
			       s->ev[e].period);
			continue;
		}
		period = (uint64_t)((double)count * 1e9 / (double)enabled / rate + 0.5);
		if (period < 1)
			period = 1;
		for (size_t i = 0; i < s->nfds; i++)
			if (s->fds[i].ev == e)
				ioctl(s->fds[i].fd, PERF_EVENT_IOC_PERIOD, &period);
		s->ev[e].period = period;
		tc_recw_period(&s->w, (uint32_t)e, period, 0);
		if (!final)
			continue;
		notify(s, "%s: %s events per CPU-second in the program's first %.0f ms of CPU time: "
		       "sampling every %" PRIu64 " events (about %u samples per CPU-second)", s->ev[e].name,
		       tc_fmt_grouped((uint64_t)((double)count * 1e9 / (double)enabled), g, sizeof(g)),
		       enabled / 1e6, period, rate);
		snprintf(s->res->choice, sizeof(s->res->choice), "%s", s->msg);
	}
}

static void session_free(struct session *s)
{
	for (size_t i = 0; i < s->nrings; i++)
		tc_ring_exit(&s->rings[i]);
	free(s->rings);
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i].fd);
	free(s->fds);
	for (size_t i = 0; i < s->nev; i++)
		free(s->ev[i].name);
	free(s->ev);
	for (size_t i = 0; i < s->nbids; i++)
		free(s->bids[i].path);
	free(s->bids);
}

static void enable_all(struct session *s, unsigned long req)
{
	for (size_t i = 0; i < s->nfds; i++)
		ioctl(s->fds[i].fd, req, 0);
}

int tacho_record(const struct tacho_record_opts *o, struct tacho_record_result *res,
		 struct tacho_diag *diag)
{
	struct session s;
	struct tacho_child *child = NULL;
	int *cpus = NULL, *ring_of_cpu = NULL;
	size_t ncpus = 0;
	pid_t *tids = NULL;
	size_t ntids = 0;
	int pidfd = -1, err;
	bool child_mode, done = false, forwarded = false, killed = false;
	uint64_t t0, calib_at = 0, calib_ms = 0, last_flush;
	unsigned calib_step = 0;
	unsigned flush_ms;
	struct pollfd *pfd = NULL;
	const char *out_path;

	if (!o || !res || o->sz < sizeof(*o))
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.res = res;
	s.w.fd = -1;
	child_mode = o->argv && o->argv[0];
	if (!child_mode && !o->pid && !o->system_wide)
		return tc_diag_set(diag, "record", 0, 0, -EINVAL, "nothing to record: give a program, "
				   "a process or all CPUs");
	if (o->period && o->freq)
		return tc_diag_set(diag, "record", 0, 0, -EINVAL, "a period and a frequency exclude "
				   "each other");
	if (o->mmap_pages && (o->mmap_pages & (o->mmap_pages - 1)))
		return tc_diag_set(diag, "record", 0, 0, -EINVAL, "the ring size must be a power of "
				   "two pages, not %u", o->mmap_pages);
	flush_ms = o->flush_ms ? o->flush_ms : DEFAULT_FLUSH_MS;
	out_path = o->output ? o->output : "tacho.rec";

	err = setup_events(&s, diag);
	if (err)
		goto out;
	err = tc_online_cpus(&cpus, &ncpus);
	if (err) {
		tc_diag_set(diag, "/sys/devices/system/cpu/online", 0, 0, err,
			    "cannot list the online CPUs: %s", tacho_strerror(err));
		goto out;
	}
	s.rings = calloc(ncpus, sizeof(*s.rings));
	ring_of_cpu = malloc(ncpus * sizeof(*ring_of_cpu));
	if (!s.rings || !ring_of_cpu) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t c = 0; c < ncpus; c++)
		ring_of_cpu[c] = -1;

	if (child_mode) {
		struct tacho_child_opts co = { .sz = sizeof(co), .forward_signals = false };
		err = tacho_child_start(o->argv, &co, &child);
		if (err) {
			tc_diag_set(diag, o->argv[0], 0, 0, err, "cannot start '%s': %s", o->argv[0],
				    tacho_strerror(err));
			goto out;
		}
	}

	/* open: one fd per event and CPU for a program or all CPUs (inherited into the
	 * program's threads and children); per thread and CPU for a running process */
	for (size_t c = 0; c < ncpus && !err; c++) {
		if (child_mode && !o->system_wide)
			err = open_pair(&s, tacho_child_pid(child), cpus[c], &ring_of_cpu[c], true,
					true, diag);
		else if (o->system_wide)
			err = open_pair(&s, -1, cpus[c], &ring_of_cpu[c], child_mode, false, diag);
	}
	if (!err && !child_mode && !o->system_wide) {
		size_t opened = 0;
		err = tc_proc_threads(o->pid, &tids, &ntids);
		if (err)
			tc_diag_set(diag, "record", 0, 0, err, "cannot record process %d: %s",
				    (int)o->pid, err == -ESRCH ? "no such process" :
				    tacho_strerror(err));
		for (size_t t = 0; t < ntids && !err; t++)
			for (size_t c = 0; c < ncpus && !err; c++) {
				err = open_pair(&s, tids[t], cpus[c], &ring_of_cpu[c], false, true, diag);
				if (err == -ESRCH)
					err = 0;
				else if (!err)
					opened++;
			}
		if (!err && !opened) {
			err = tc_diag_set(diag, "record", 0, 0, -ESRCH, "cannot record process %d: "
					  "no such process", (int)o->pid);
		}
	}
	if (err)
		goto out;
	if (s.nfds > 1)
		qsort(s.fds, s.nfds, sizeof(*s.fds), fd_id_cmp);   /* for lookup_event */

	err = tc_recw_open(&s.w, out_path);
	if (err) {
		tc_diag_set(diag, out_path, 0, 0, err, "cannot write '%s': %s", out_path,
			    tacho_strerror(err));
		goto out;
	}
	write_meta(&s);
	write_vdso(&s);
	if (!child_mode && !o->system_wide)
		synthesize_process(&s, o->pid);
	else if (o->system_wide)
		synthesize_all(&s);
	err = tc_recw_flush(&s.w);
	if (err)
		goto write_failed;
	describe_choice(&s);

	if (child_mode) {
		int exec_err = 0;
		if (o->system_wide)
			enable_all(&s, PERF_EVENT_IOC_ENABLE);
		err = tacho_child_exec(child, &exec_err);
		if (err) {
			res->exec_err = exec_err;
			tacho_exec_strerror(o->argv[0], exec_err, s.msg, sizeof(s.msg));
			tc_diag_set(diag, o->argv[0], 0, 0, err, "%s", s.msg);
			goto out_close;
		}
		res->ran = true;
		pidfd = (int)syscall(SYS_pidfd_open, tacho_child_pid(child), 0);
	} else {
		enable_all(&s, PERF_EVENT_IOC_ENABLE);
		if (!o->system_wide)
			pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	/* calibrate in three steps, at 1/20, 1/4 and all of the window: the provisional
	 * period (1 for software events) then lasts only a few milliseconds, and the
	 * final period comes from the whole window */
	calib_ms = o->calibrate_ms ? o->calibrate_ms : DEFAULT_CALIBRATE_MS;
	for (size_t e = 0; e < s.nev; e++)
		if (s.ev[e].calibrate)
			calib_at = t0 + calib_ms * 1000000u / 20;
	last_flush = t0;

	pfd = calloc(s.nrings + 1, sizeof(*pfd));
	if (!pfd) {
		err = -ENOMEM;
		goto out_close;
	}
	for (size_t i = 0; i < s.nrings; i++) {
		pfd[i].fd = s.rings[i].fd;
		pfd[i].events = POLLIN;
	}
	pfd[s.nrings].fd = pidfd;
	pfd[s.nrings].events = POLLIN;

	while (!done) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		int timeout = (int)flush_ms, n;

		if (calib_at && now >= calib_at) {
			calib_step++;
			calibrate(&s, calib_step == 3);
			calib_at = calib_step == 1 ? t0 + calib_ms * 1000000u / 4 :
				   calib_step == 2 ? t0 + calib_ms * 1000000u : 0;
			now = now_ns(CLOCK_MONOTONIC);
		}
		/* wake for the next calibration step, not only at the flush interval */
		if (calib_at && calib_at > now && (calib_at - now) / 1000000u < (uint64_t)timeout)
			timeout = (int)((calib_at - now) / 1000000u) + 1;
		else if (calib_at && calib_at <= now)
			timeout = 0;
		if (pidfd < 0 && (child_mode || !o->system_wide))
			timeout = timeout > 20 ? 20 : timeout;   /* no pidfd: look for the exit often */
		n = poll(pfd, s.nrings + 1, timeout);
		if (n < 0 && errno != EINTR) {
			err = -errno;
			tc_diag_set(diag, "record", 0, 0, err, "cannot wait for samples (poll): %s",
				    tacho_strerror(err));
			break;
		}
		for (size_t i = 0; n > 0 && i < s.nrings; i++)
			if (pfd[i].revents & (POLLHUP | POLLERR))
				pfd[i].fd = -1;   /* the target is gone: drained below, never again polled */
		if (o->stop && *o->stop) {
			if (child_mode) {
				/* take the signal and clear the flag in one step (an atomic
				 * exchange cannot lose a signal that lands in between), so
				 * that a second one shows as the flag set again */
				int sig = __atomic_exchange_n(o->stop, 0, __ATOMIC_SEQ_CST);
				if (!forwarded) {
					/* pass the signal on and record until the program ends */
					tacho_child_kill(child, sig);
					forwarded = true;
				} else if (!killed) {
					/* a second signal: the program ignored or is stuck in the
					 * first; SIGKILL cannot be caught, and the file is still
					 * finished below */
					tacho_child_kill(child, SIGKILL);
					killed = true;
					notify(&s, "a second signal: killing the program (SIGKILL); "
					       "the recording is kept");
				}
			} else {
				done = true;
			}
		}
		if (child_mode) {
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			/* WNOWAIT: look without reaping; tacho_child_wait reaps and reports */
			if (waitid(P_PID, (id_t)tacho_child_pid(child), &si,
				   WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
				done = true;
		} else if (!o->system_wide) {
			if (kill(o->pid, 0) < 0 && errno == ESRCH)
				done = true;
			else if (pidfd >= 0 && n > 0 && (pfd[s.nrings].revents & POLLIN))
				done = true;
		}
		now = now_ns(CLOCK_MONOTONIC);
		/* drain at every wake-up or timeout: the file lags the program by at most
		 * flush_ms, and on exit there is no wait at all */
		if (done || n > 0 || now - last_flush >= (uint64_t)flush_ms * 1000000u) {
			err = drain_all(&s);
			last_flush = now;
			if (err)
				goto write_failed;
		}
	}
	if (child_mode) {
		int werr = tacho_child_wait(child, &res->exit);
		if (werr && !err)
			err = tc_diag_set(diag, o->argv[0], 0, 0, werr,
					  "cannot learn how '%s' ended: %s", o->argv[0],
					  tacho_strerror(werr));
	}
	enable_all(&s, PERF_EVENT_IOC_DISABLE);
	{
		/* its own variable: err may hold the wait's error, which is not a write error */
		int derr = drain_all(&s);
		if (derr) {
			err = derr;
			goto write_failed;
		}
	}
	account_unreported_lost(&s);
	if (s.unparsed)
		tc_log(TACHO_LOG_WARN, "%" PRIu64 " sample records from the kernel were shorter "
		       "than their fields and were dropped", s.unparsed);
	tc_recw_finish(&s.w, res->samples, res->lost, now_ns(CLOCK_MONOTONIC),
		       child_mode ? res->exit.status : 0);

out_close:
	{
		int cerr = tc_recw_close(&s.w);
		if (cerr && !err) {
			err = cerr;
			goto write_failed_closed;
		}
	}
	res->bytes = s.w.written;
	goto out;
write_failed:
	tc_recw_close(&s.w);
write_failed_closed:
	tc_diag_set(diag, out_path, 0, 0, err ? err : s.w.err, "cannot write '%s': %s", out_path,
		    tacho_strerror(err ? err : s.w.err));
	err = err ? err : s.w.err;
out:
	free(pfd);
	if (pidfd >= 0)
		close(pidfd);
	tacho_child_free(child);
	free(cpus);
	free(ring_of_cpu);
	free(tids);
	session_free(&s);
	return err;
}
