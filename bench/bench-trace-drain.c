/* bench-trace-drain.c - what each side of a traced mark costs in CPU, apart from the
 * scheduling that decides whether they keep up (issue 32): the producer (tacho_mark
 * into a ring of 65,536, three quarters filled a round, so that each round crosses the
 * watermark once and pays its wake-up) and the consumer (tacho trace's drain: every
 * entry read, its TSC put on the perf clock, written as a packed mark, flushed to
 * /dev/null each MiB, as lib/timeline/timeline-record.c does). One thread, the sides
 * taking turns; the median of 41 rounds each.
 *
 *   bench-trace-drain     prints "SIDE<TAB>NS_PER_MARK" lines and the rate each allows
 *
 * Each side's rate is what one CPU of its own would sustain: the lower of the two is the
 * ceiling of one marking thread where both sides have a CPU. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tacho.h"
#include "record/recfile.h"
#include "timeline/timeline.h"
#include "trace/area.h"
#include "util/util.h"

#define ROUNDS 41
#define ENTRIES (1u << 16)
#define MARKS (ENTRIES / 4 * 3)
#define FLUSH_BYTES (1u << 20)

struct sink {
	struct tc_record_writer w;
	struct tc_trace_clock clock;
	uint64_t marks;
};

static int on_entry(void *arg, uint32_t slot, uint32_t pid, uint32_t tid,
		    const struct tc_trace_entry *e)
{
	struct sink *s = arg;

	tc_record_writer_mark(&s->w, tc_trace_clock_ns(&s->clock, e->tsc), e->tsc, e->value, pid,
			      tid, e->channel, e->kind);
	s->marks++;
	if (s->w.buf.len >= FLUSH_BYTES)
		return tc_record_writer_flush(&s->w);
	return 0;
}

int main(void)
{
	struct tacho_tsc_info ti = { .sz = sizeof(ti) };
	struct tc_trace_area area;
	struct sink s = { 0 };
	struct tc_trace_visit v = { .arg = &s, .entry = on_entry };
	double prod[ROUNDS], cons[ROUNDS], p, c;
	uint32_t known = 0;
	uint64_t value = 0;
	char spec[64];
	int fd;

	unsetenv("TACHO_TRACE");
	tacho_tsc_info(&ti);
	s.clock.exact = ti.kernel_time && ti.kernel_time_zero && ti.time_shift < 64;
	s.clock.mult = ti.time_mult;
	s.clock.shift = ti.time_shift;
	s.clock.zero = ti.time_zero;
	s.clock.ns_per_tick = ti.hz > 0 ? 1e9 / ti.hz : 1.0;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || tc_record_writer_open_fd(&s.w, fd) ||
	    tc_trace_area_create(&area, 4, ENTRIES, 0)) {
		fprintf(stderr, "bench-trace-drain: cannot make the area or the writer\n");
		return 1;
	}
	snprintf(spec, sizeof(spec), "/proc/self/fd/%d", area.fd);
	if (tc_trace_attach(spec)) {
		fprintf(stderr, "bench-trace-drain: cannot attach to %s\n", spec);
		return 1;
	}
	for (int r = -1; r < ROUNDS; r++) {   /* round -1 warms both sides up */
		uint64_t a = tacho_tsc_begin();
		for (unsigned i = 0; i < MARKS; i++)
			if (tacho_mark("burst", value++)) {
				fprintf(stderr, "bench-trace-drain: a mark was refused\n");
				return 1;
			}
		uint64_t b = tacho_tsc_end();
		if (tc_trace_area_drain(&area, &known, &v, false) || s.w.err) {
			fprintf(stderr, "bench-trace-drain: the drain failed\n");
			return 1;
		}
		uint64_t d = tacho_tsc_end();
		if (r >= 0) {
			prod[r] = tacho_tsc_to_ns(b - a) / MARKS;
			cons[r] = tacho_tsc_to_ns(d - b) / MARKS;
		}
	}
	if (s.marks != (uint64_t)(ROUNDS + 1) * MARKS) {
		fprintf(stderr, "bench-trace-drain: %llu marks drained, not %llu\n",
			(unsigned long long)s.marks, (unsigned long long)(ROUNDS + 1) * MARKS);
		return 1;
	}
	p = tc_stats_percentile(prod, ROUNDS, 50);
	c = tc_stats_percentile(cons, ROUNDS, 50);
	printf("producer (tacho_mark, traced)\t%.2f\n", p);
	printf("consumer (drain, pack, write)\t%.2f\n", c);
	printf("bytes per mark in the file\t%.2f\n",
	       (double)(s.w.written + s.w.buf.len - TC_REC_FILE_HDR) / (double)s.marks);
	printf("producer's rate, M marks/s\t%.1f\n", 1e3 / p);
	printf("consumer's rate, M marks/s\t%.1f\n", 1e3 / c);
	tc_trace_detach();
	tc_trace_area_free(&area);
	tc_record_writer_close(&s.w);
	return 0;
}
