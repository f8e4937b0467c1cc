/* record.h - the recording session as parts above sampling use it: tacho_record with
 * hooks that add their own records to the file as it goes (tacho trace's marks). */
#ifndef TACHO_RECORD_RECORD_H
#define TACHO_RECORD_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

#include "record/recfile.h"
#include "tacho/record.h"

struct tc_record_hooks {
	void *arg;
	char *const *env;   /* NAME=VALUE put into the program's environment before exec */
	const int *inherit_fds;   /* descriptors the program inherits (tacho_child_opts) */
	size_t ninherit_fds;
	bool use_clockid;   /* stamp samples with clockid instead of perf's own clock */
	const pid_t *pids;  /* with opts.pid set and no program: these processes (pid among
			       them), recorded until all have ended */
	size_t npids;
	int clockid;
	/* readable when the hooks want a drain now (tacho trace: a program's ring passed
	 * its watermark); NULL: none. The loop polls it beside the rings, drains when it
	 * is readable, and leaves emptying it to the drain hook. */
	const int *wake_fd;
	/* After the meta records, before the program starts. 0 or -errno (the recording
	 * stops with that error). */
	int (*start)(void *arg, struct tc_record_writer *w);
	/* At every drain of the rings (at least every flush_ms, and once more at the
	 * end with final set), before the buffered records go to the file. 0 or -errno
	 * (then the recording stops, as after a write error). */
	int (*drain)(void *arg, struct tc_record_writer *w, bool final);
	/* Set: no file (opts.output is not used); the records go to sink(arg, data, len)
	 * as they are flushed (tc_record_writer_open_sink). */
	int (*sink)(void *arg, const void *data, size_t len);
};

/* What a ring per CPU must hold, for its default size (tc_record_ring_pages). */
struct tc_ring_need {
	double rate;           /* samples per second into one ring: every event on that
				  CPU together */
	bool callchain;        /* with call chains */
	unsigned stack_size;   /* DWARF: user stack bytes copied per sample; 0: none */
	unsigned ncpus;        /* rings the recording maps */
	unsigned page_size;
	unsigned mlock_kb;     /* /proc/sys/kernel/perf_event_mlock_kb; 0: the kernel's
				  default, 512 KiB + one page */
	bool unlimited;        /* CAP_IPC_LOCK, or perf_event_paranoid -1: the kernel's
				  perf mlock limit does not apply */
};
/* The data pages of each ring when the user gave no -m, a power of two: enough for
 * TC_RING_HOLD_MS of samples at the rate, each sized by what it carries (its fixed
 * fields, a call chain of TC_RING_CHAIN_GUESS entries, a DWARF stack and registers).
 * Never below perf's default, the perf mlock allowance of a user per CPU less the
 * control page (perf_event_mlock_kb: 128 pages of 4 KiB by default), which is also
 * the most without the limit lifted (the kernel refuses more); with it lifted, at most
 * TC_RING_MAX_BYTES per ring and TC_RING_ALL_BYTES over all rings. Pure. */
#define TC_RING_HOLD_MS 500
#define TC_RING_CHAIN_GUESS 48
#define TC_RING_MAX_BYTES (16u << 20)
#define TC_RING_ALL_BYTES (512ull << 20)
unsigned tc_record_ring_pages(const struct tc_ring_need *n);

/* The always-on sampler's held samples of the last `seconds` (of pid alone when not 0)
 * as a record file written to fd (which the call closes): its head records, every
 * mapping and name held, then each held stack's samples, count times, the period
 * shared out. 0; -TACHO_EEMPTY (with *diag) when nothing is held yet; -errno.
 * Thread-safe (record/sampler.c; tacho_sampler_write_pprof reads it back). */
struct tacho_sampler;
int tc_sampler_write_file(struct tacho_sampler *s, unsigned seconds, pid_t pid, int fd,
			  struct tacho_diag *diag);

/* tacho_record, with hooks (NULL: none). */
int tc_record_run(const struct tacho_record_opts *opts, struct tacho_record_result *res,
		  const struct tc_record_hooks *hooks, struct tacho_diag *diag);

#endif
