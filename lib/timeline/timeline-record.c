/* timeline-record.c - tacho trace's recording: a record session of sampling (the events
 * of -e at period 1, the side-band) with a hook that drains the program's mark rings
 * into the same file, the TSC converted to perf's clock with the kernel's conversion. */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"
#include "timeline/timeline.h"
#include "trace/area.h"
#include "util/util.h"
#include "tacho/errors.h"
#include "tacho/events.h"
#include "tacho/record.h"
#include "tacho/timeline.h"
#include "tacho/tsc.h"

#define DEFAULT_FLUSH_MS 100

struct trace_session {
	struct tc_trace_area area;
	struct tc_trace_waker waker;  /* wakes the loop when a ring passes its watermark */
	bool has_area;                /* a program was started with the area */
	uint32_t known;               /* channels of the area already written */
	bool *hidden;                 /* [channel] internal (regions' calibration) */
	size_t nhidden;
	struct tc_trace_clock clock;
	struct tc_record_writer *w;
	uint64_t marks;
	struct tc_trace_drops last;
	struct tc_trace_damage last_damage;
	char env[64];
	char *envv[2];
};

/* A drain writes at most this much before it flushes the file: one drain of every ring
 * full is nslots x entries marks (256 x 65536 by default, 800 MB of records), which
 * tacho's memory need not hold. */
#define DRAIN_FLUSH_BYTES (1u << 20)

uint64_t tc_trace_clock_ns(const struct tc_trace_clock *c, uint64_t tsc)
{
	uint64_t quot, rem;

	if (!c->exact) {
		double d = ((double)tsc - (double)c->tsc0) * c->ns_per_tick, t = (double)c->ns0 + d;
		/* a TSC from a damaged area may be anything: a time past 2^64 ns is
		 * clamped, as converting it would be undefined */
		return t <= 0 ? 0 : t >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)t;
	}
	/* the kernel's own arithmetic (perf_event_mmap_page, cap_user_time_zero):
	 * split so that the product cannot overflow */
	quot = tsc >> c->shift;
	rem = tsc & (((uint64_t)1 << c->shift) - 1);
	return c->zero + quot * c->mult + ((rem * c->mult) >> c->shift);
}

uint64_t tc_trace_clock_anchor(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 7; i++) {
		struct timespec ts;
		uint64_t a = tacho_tsc_read_begin();
		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		uint64_t b = tacho_tsc_read_end();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
	}
	return (uint64_t)tacho_tsc_to_ns(best);
}

static int on_channel(void *arg, uint32_t index, const char *name)
{
	struct trace_session *s = arg;

	if (index >= s->nhidden) {
		size_t n = s->nhidden ? s->nhidden * 2 : 64;
		while (n <= index)
			n *= 2;
		bool *h = realloc(s->hidden, n * sizeof(*h));
		if (!h)
			return -ENOMEM;
		memset(h + s->nhidden, 0, (n - s->nhidden) * sizeof(*h));
		s->hidden = h;
		s->nhidden = n;
	}
	/* regions calibrate themselves with pairs of regions whose names start with
	 * \001: they are the library's, not the program's */
	s->hidden[index] = name[0] == '\001';
	if (!s->hidden[index])
		tc_record_writer_channel(s->w, index, name);
	return 0;
}

static int on_entry(void *arg, uint32_t slot, uint32_t pid, uint32_t tid,
		    const struct tc_trace_entry *e)
{
	struct trace_session *s = arg;

	if (e->channel < s->nhidden && s->hidden[e->channel])
		return 0;
	tc_record_writer_mark(s->w, tc_trace_clock_ns(&s->clock, e->tsc), e->tsc, e->value, pid,
			      tid, e->channel, e->kind);
	s->marks++;
	if (s->w->buf.len >= DRAIN_FLUSH_BYTES)
		return tc_record_writer_flush(s->w);
	return 0;
}

static int hook_start(void *arg, struct tc_record_writer *w)
{
	struct trace_session *s = arg;
	char buf[128];

	tc_record_writer_meta(w, "trace-clock", s->clock.exact ? "perf" : "monotonic-raw");
	if (s->has_area)
		tc_record_writer_meta(w, "trace-ring-full", s->area.flags & TC_TRACE_WAIT_FULL ?
				      "wait" : "drop");
	if (s->clock.exact)
		snprintf(buf, sizeof(buf), "kernel: mult %u shift %u zero %" PRIu64, s->clock.mult,
			 s->clock.shift, s->clock.zero);
	else
		snprintf(buf, sizeof(buf), "anchors: tsc %" PRIu64 " at %" PRIu64 " ns, within %"
			 PRIu64 " ns", s->clock.tsc0, s->clock.ns0, s->clock.bracket_ns);
	tc_record_writer_meta(w, "trace-tsc-conversion", buf);
	return 0;
}

static int hook_drain(void *arg, struct tc_record_writer *w, bool final)
{
	struct trace_session *s = arg;
	struct tc_trace_visit v = { .arg = s, .channel = on_channel, .entry = on_entry };
	struct tc_trace_drops d;
	int err;

	s->w = w;
	if (!s->clock.exact) {
		/* the line's second point: now, after every mark this drain reads was
		 * written */
		uint64_t tsc1, ns1, br = tc_trace_clock_anchor(&tsc1, &ns1);
		if (tsc1 > s->clock.tsc0 + 1000000 && ns1 > s->clock.ns0)
			s->clock.ns_per_tick = (double)(ns1 - s->clock.ns0) /
					       (double)(tsc1 - s->clock.tsc0);
		if (br > s->clock.bracket_ns)
			s->clock.bracket_ns = br;
	}
	if (!s->has_area)
		return 0;
	/* emptied before the drain: a crossing while it reads makes it readable again */
	tc_trace_waker_clear(&s->waker);
	err = tc_trace_area_drain(&s->area, &s->known, &v, final);
	if (err)
		return err;
	if (s->area.behind && !final)
		tc_trace_waker_poke(&s->waker);
	tc_trace_area_drops(&s->area, &d);
	if (final || memcmp(&d, &s->last, sizeof(d)) ||
	    memcmp(&s->area.damage, &s->last_damage, sizeof(s->last_damage))) {
		struct tc_mark_drops md = {
			.ring_full = d.ring_full, .no_ring = d.no_ring, .no_channel = d.no_channel,
			.damaged_entries = s->area.damage.entries,
			.damaged_rings = s->area.damage.rings,
			.damaged_header = s->area.damage.header,
		};
		tc_record_writer_mark_drops(w, &md);
		if (s->area.flags & TC_TRACE_WAIT_FULL) {
			/* a META the loader takes the last of: "WAITS NS" */
			char buf[64];
			snprintf(buf, sizeof(buf), "%" PRIu64 " %" PRIu64, d.waits, d.waited_ns);
			tc_record_writer_meta(w, "trace-waits", buf);
		}
		s->last = d;
		s->last_damage = s->area.damage;
	}
	return 0;
}

/* The clock: marks carry the TSC, perf's samples its clock (local_clock). The kernel
 * gives the conversion it uses itself in every perf mmap page when the TSC is its clock
 * source (cap_user_time_zero); tacho_tsc_info reads it. Without it, the TSC's measured
 * rate stands in and the file says so (marks and events are then not on one exact
 * clock). */
static void clock_init(struct tc_trace_clock *c)
{
	struct tacho_tsc_info ti = { .sz = sizeof(ti) };

	memset(c, 0, sizeof(*c));
	tacho_tsc_info(&ti);
	if (ti.kernel_time && ti.kernel_time_zero && ti.time_shift < 64) {
		c->exact = true;
		c->mult = ti.time_mult;
		c->shift = ti.time_shift;
		c->zero = ti.time_zero;
	} else {
		/* until the first drain gives the line its second point */
		c->ns_per_tick = ti.hz > 0 ? 1e9 / ti.hz : 1.0;
		c->bracket_ns = tc_trace_clock_anchor(&c->tsc0, &c->ns0);
	}
}

/* Events of -e are recorded at every occurrence (period 1): the clocks have none (their
 * count is time, in ns), so they are refused with a sentence instead of sampling every
 * nanosecond. 0, or the grammar's error (with its caret in *diag), or -EINVAL. */
static int check_events(const char *events, struct tacho_diag *diag)
{
	struct tacho_evlist *l;
	struct perf_event_attr a;
	int err;

	err = tacho_evlist_parse(events, &l, diag);
	if (err)
		return err;
	for (size_t i = 0; i < tacho_evlist_count(l) && !err; i++) {
		if (tacho_evlist_attr(l, i, &a) || a.type != PERF_TYPE_SOFTWARE ||
		    (a.config != PERF_COUNT_SW_CPU_CLOCK && a.config != PERF_COUNT_SW_TASK_CLOCK))
			continue;
		err = tc_diag_set(diag, events, 0, 0, -EINVAL, "'%s' counts time, not occurrences: "
				  "a trace records every occurrence of its events (sample a clock "
				  "with a recording instead)", tacho_evlist_name(l, i));
	}
	tacho_evlist_free(l);
	return err;
}

#define TC_OPTS_V1_tacho_timeline_opts tc_offsetofend(struct tacho_timeline_opts, stop)
#define RESULT_SZ_V1 tc_offsetofend(struct tacho_timeline_result, exec_err)

int tacho_timeline_record(const struct tacho_timeline_opts *caller_opts,
			  struct tacho_timeline_result *res, struct tacho_diag *diag)
{
	struct tacho_timeline_opts o;
	struct tacho_timeline_result result = { .sz = sizeof(result) };
	struct tacho_record_opts ro = { .sz = sizeof(ro) };
	struct tacho_record_result rr = { .sz = sizeof(rr) };
	struct trace_session *s;
	struct tc_record_hooks hooks = { 0 };
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	if (!caller_opts || !res || res->sz < RESULT_SZ_V1)
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(caller_opts, tacho_timeline_opts, diag);
	if (err)
		goto out_result;
	TC_OPTS_COPY(&o, caller_opts);
	if ((!o.argv || !o.argv[0]) && !o.npids && !o.system_wide) {
		err = tc_diag_set(diag, "trace", 0, 0, -EINVAL, "nothing to trace: give a program, "
				  "processes or all CPUs");
		goto out_result;
	}
	if ((o.argv && o.argv[0] && o.npids) || (o.npids && !o.pids)) {
		err = tc_diag_set(diag, "trace", 0, 0, -EINVAL, "trace a program or running "
				  "processes, not both");
		goto out_result;
	}
	if (o.wait_full && (!o.argv || !o.argv[0])) {
		err = tc_diag_set(diag, "trace", 0, 0, -EINVAL, "waiting on full mark rings needs "
				  "a program to trace: running processes have no rings");
		goto out_result;
	}
	for (size_t i = 0; i < o.npids; i++) {
		if (o.pids[i] <= 0) {
			err = tc_diag_set(diag, "trace", 0, 0, -EINVAL, "no process has the id %d",
					  (int)o.pids[i]);
			goto out_result;
		}
	}
	if (o.events && *o.events) {
		err = check_events(o.events, diag);
		if (err)
			goto out_result;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		err = -ENOMEM;
		goto out_result;
	}
	/* the area is an anonymous file in memory, handed to the program by descriptor:
	 * it has no name another user could plant first, and it goes when tacho and the
	 * program end, however they end. Only a program tacho starts gets it: a running
	 * process cannot be given it (its environment was read at its start) */
	s->area.fd = -1;
	s->waker.fd = -1;
	if (o.argv && o.argv[0]) {
		err = tc_trace_area_create(&s->area, 0, o.ring_entries, 0);
		if (!err)
			err = tc_trace_area_env(&s->area, s->env, sizeof(s->env));
		if (err) {
			tc_diag_set(diag, "trace", 0, 0, err, "cannot make the trace area: %s",
				    err == -EINVAL ? "the ring size must be a power of two from 2 "
				    "to 16777216" : tacho_strerror(err));
			goto out_free;
		}
		s->has_area = true;
		if (o.wait_full)
			tc_trace_area_set_flags(&s->area, TC_TRACE_WAIT_FULL);
		/* without the waker the rings are drained on the timer alone: marks
		 * faster than a ring per flush_ms are dropped (and counted) */
		err = tc_trace_waker_start(&s->waker, &s->area);
		if (err)
			tc_log(TACHO_LOG_WARN, "trace: cannot wait for full rings (%s): draining "
			       "every %u ms only", tacho_strerror(err),
			       o.flush_ms ? o.flush_ms : DEFAULT_FLUSH_MS);
		else
			hooks.wake_fd = &s->waker.fd;
		s->envv[0] = s->env;
		hooks.env = s->envv;
		hooks.inherit_fds = &s->area.fd;
		hooks.ninherit_fds = 1;
	}
	clock_init(&s->clock);
	hooks.arg = s;
	hooks.pids = o.pids;
	hooks.npids = o.npids;
	hooks.start = hook_start;
	hooks.drain = hook_drain;
	hooks.use_clockid = !s->clock.exact;
	hooks.clockid = CLOCK_MONOTONIC_RAW;

	ro.events = o.events && *o.events ? o.events : "dummy";
	ro.period = 1;
	ro.output = o.output ? o.output : "tacho.trace";
	ro.argv = o.argv && o.argv[0] ? o.argv : NULL;
	ro.pid = o.npids ? o.pids[0] : 0;
	ro.system_wide = o.system_wide;
	ro.mmap_pages = o.mmap_pages;
	ro.flush_ms = o.flush_ms ? o.flush_ms : DEFAULT_FLUSH_MS;
	ro.stop = o.stop;
	err = tc_record_run(&ro, &rr, &hooks, diag);
	result.marks = s->marks;
	result.events = rr.samples;
	result.dropped = s->last.ring_full + s->last.no_ring + s->last.no_channel;
	result.waits = s->last.waits;
	result.waited_ns = s->last.waited_ns;
	result.events_lost = rr.lost;
	/* the same channels as the recording's: one ring per CPU */
	_Static_assert(TACHO_TIMELINE_LOST_CPUS == TACHO_RECORD_LOST_CPUS, "lost by CPU");
	memcpy(result.events_lost_cpu, rr.lost_cpu, sizeof(result.events_lost_cpu));
	result.events_lost_cpu_more = rr.lost_cpu_more;
	result.events_lost_unattributed = rr.lost_unattributed;
	result.bytes = rr.bytes;
	result.ran = rr.ran;
	result.exit = rr.exit;
	result.exec_err = rr.exec_err;
	result.damaged_entries = s->area.damage.entries;
	result.damaged_rings = s->area.damage.rings;
	result.damaged_header = s->area.damage.header;
out_free:
	tc_trace_waker_stop(&s->waker);   /* before the area: it waits on a word of it */
	tc_trace_area_free(&s->area);
	free(s->hidden);
	free(s);
out_result:
	tc_sized_put_sz(res, &result, sizeof(result));
	return err;
}
