/* tacho/machine.h - libtacho's public interface: what this machine and user allow (the
 * facts behind tacho doctor).
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_MACHINE_H
#define TACHO_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/counters.h"
#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/tsc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- What this machine allows (the facts behind `tacho doctor`) --- */

enum tacho_check_state {
	TACHO_CHECK_OK = 0,     /* works */
	TACHO_CHECK_LIMIT,      /* a limitation: text ends with what to do, in parentheses */
	TACHO_CHECK_INFO,       /* a fact worth knowing, neither good nor bad */
};

/* "ok", "limited", "info". */
TACHO_API const char *tacho_check_state_name(enum tacho_check_state s);

/* One check. Element size (docs/architecture.md, "An API that can grow"):
 * tacho_machine_check fills an array of them at the caller's sizeof(struct
 * tacho_check), and tacho_machine_write reads one so. */
struct tacho_check {
	const char *key;        /* stable identifier: "pmu", "vm", "paranoid", "caps",
				   "software", "breakpoints", "tracefs", "rdpmc", "msr",
				   "nmi_watchdog", "mlock", "sample_rate", "tsc",
				   "clocksource", "counters" (static storage) */
	const char *title;      /* for people: "hardware PMU", ... (static storage) */
	enum tacho_check_state state;
	char value[96];         /* the short answer: "none", "2", "yes (KVM)", ... */
	char text[768];         /* one sentence: what it means for measuring, and for
				   TACHO_CHECK_LIMIT what to do; it names no command */
	enum tacho_hint hint;   /* where else to look (TACHO_HINT_NONE: nowhere), for the
				   program to put in its own words */
};

/* Looks at this machine and this user: the hardware PMU (sysfs, CPUID leaf 0xA, and
 * whether a hardware event opens), the counters a task gets, virtualization (CPUID,
 * /sys/hypervisor, DMI), perf_event_paranoid and the capabilities, whether software
 * events, breakpoints and tracepoints open, tracefs, user-space RDPMC (from the mmap
 * page of an event), /dev/cpu/N/msr, the NMI watchdog, perf_event_mlock_kb,
 * perf_event_max_sample_rate, the TSC and the clocksource. Fills at most max checks
 * of check_sz bytes each (sizeof(out[0])) into out and returns how many there are
 * (more than max: call again with room), or -EINVAL (a check_sz below the first
 * version). Takes some tens of ms (it calibrates the TSC once per process, and reads
 * CPUID on every CPU). Not thread-safe with respect to the calling thread's CPU
 * affinity, which it restores. */
TACHO_API int tacho_machine_check(struct tacho_check *out, size_t max, size_t check_sz);
/* The same checks, once, into an array the library allocates at the caller's
 * check_sz (sizeof(out[0][0])): returns how many there are, *out holding them (free
 * it with free(); NULL when there are none), or -EINVAL (NULL out, a check_sz below
 * the first version), -ENOMEM. */
TACHO_API int tacho_machine_check_alloc(struct tacho_check **out, size_t check_sz);

/* What tacho_machine_write writes: checks (tacho_machine_check) and clocks
 * (tacho_clock_survey), each array with its element size. Sized: sz first; every field
 * but sz may be 0/NULL (no clocks: the survey is left out). */
struct tacho_machine_view {
	size_t sz;                              /* sizeof(struct tacho_machine_view) */
	const struct tacho_check *checks;       /* nchecks entries of check_sz bytes */
	size_t nchecks, check_sz;               /* check_sz: sizeof(checks[0]) */
	const struct tacho_clock_info *clocks;  /* nclocks entries of clock_sz bytes */
	size_t nclocks, clock_sz;               /* clock_sz: sizeof(clocks[0]) */
	/* added with the sources' proofs: every source and its verdict
	 * (tacho_source_prove, tacho/counters.h), each element read by its own sz */
	const struct tacho_source_proof *sources;
	size_t nsources, source_sz;             /* source_sz: sizeof(sources[0]) */
	/* the hardware counters' own checks (tacho_machine_verify), check_sz each */
	const struct tacho_check *verify;
	size_t nverify;
};

/* Every source tacho proves (tacho_source_prove, TACHO_SOURCE_NONE excluded), in the
 * order of enum tacho_source, into out (max elements of proof_sz bytes, sizeof(out[0])),
 * with flags as tacho_source_prove takes them (TACHO_PROVE_FRESH: proven now). Returns
 * the number of sources (more than max: call again with room), -EINVAL (a proof_sz
 * below the first version). Some milliseconds when the proofs run; nothing when this
 * boot's cache has them. Thread-safe. */
TACHO_API int tacho_machine_sources(unsigned flags, struct tacho_source_proof *out, size_t max,
				    size_t proof_sz);

/* The hardware counters' own checks, where a PMU exists (tacho doctor --verify): "rdpmc"
 * (a user-space RDPMC read and read(2) of one counter agree: the kernel's value lies
 * between two RDPMCs around it), "multiplexing" (instructions:u opened more times than
 * the PMU has counters, each scaled estimate against the exact count of the loop:
 * the worst error), "precise" (the highest precise_ip a branch-instructions event opens with,
 * and the skid of its samples around the one branch of a loop, without and with it),
 * "lbr" (the depth of the last-branch records a sample carries). Where there is no PMU
 * each says why it was skipped (state TACHO_CHECK_INFO, value "skipped"). Fills at most
 * max checks of check_sz bytes each and returns how many there are, or -EINVAL. Tens
 * of milliseconds where a PMU exists. Not thread-safe with respect to the calling
 * thread's counters (it opens its own on it). */
TACHO_API int tacho_machine_verify(struct tacho_check *out, size_t max, size_t check_sz);

/* Writes the view's checks and clocks to f:
 *  - TACHO_FORMAT_TABLE: "what this machine lets tacho measure:", a line per check
 *    (state, title, value, text), then the clocks with their resolution and the cost
 *    of one read;
 *  - TACHO_FORMAT_CSV: a header row (kind, key, title, state, value, text,
 *    resolution_ns, read_ns, error), a row per check (kind "check") and per clock
 *    (kind "clock", key its name);
 *  - TACHO_FORMAT_JSON (or on one line): {"version": 1, "checks": [{"key", "title",
 *    "state", "value", "text"}], "clocks": [{"name", "resolution_ns", "read_ns",
 *    "error"}]} (docs/schemas.md), and where the view has them "sources":
 *    [{"source", "verdict", "expected", "counted", "what", "why", "cached", "forced",
 *    "cost_us"}] and "verify": [checks as above].
 * In the table and CSV the sources follow the checks (a row each: the source, its
 * verdict, counted of expected, what the proof did and why it failed), and the
 * hardware checks follow them (CSV kinds "source" and "verify").
 * Only the public fields are read: any list of checks may be written. 0, -EINVAL (NULL
 * view or f, an sz or element size below the first version, a bad format or opts),
 * -TACHO_EVERSION (the view or opts set a field past the struct this library knows: a
 * program built against a newer tacho.h), -ENOMEM, -EIO. Thread-safe. */
TACHO_API int tacho_machine_write(const struct tacho_machine_view *view, FILE *f,
				  enum tacho_format fmt, const struct tacho_write_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_MACHINE_H */
