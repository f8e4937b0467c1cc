/* perf.h - what lib/perf offers besides the engine's objects (engine.h): the one rule
 * for a value, reading a caller's attr, what this machine and user allow and the
 * explainer, and the procfs parsers. Nothing here hands out a descriptor: the system
 * calls and their seams are lib/perf's own (syscall.h). */
#ifndef TACHO_PERF_PERF_H
#define TACHO_PERF_PERF_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/util.h"
#include "tacho/counters.h"

/* --- the one rule for a value (engine-event.c) ---
 * A count whose time running is 0 was never on a counter: NOT_COUNTED, and no number,
 * whatever the count field says. Running >= enabled: COUNTED, the count as is. Else
 * MULTIPLEXED, scaled by enabled / running. Every reader of the engine applies this. */
enum tacho_count_status tc_count_status(uint64_t enabled, uint64_t running);
/* raw * enabled / running without overflow (128-bit product); NAN when running is 0;
 * raw itself when running >= enabled. Pure. */
double tc_count_scale(uint64_t raw, uint64_t enabled, uint64_t running);

/* A caller's perf_event_attr copied by its own size field, as the kernel reads one:
 * a size this library's header knows (PERF_ATTR_SIZE_VER0 up to its sizeof) is copied
 * and the rest zero-filled; 0 or a size it does not know is -EINVAL. out->size is set
 * to sizeof(*out). Pure. */
int tc_perf_attr_copy(struct perf_event_attr *out, const struct perf_event_attr *in);

/* --- sources that prove they count (verify.c) ---
 * Whether the source of attr is proven not to count on this machine (tacho_source_prove
 * with the process's verdict): NULL where it counts, has no proof, could not be proven,
 * or the tests' fake kernel stands in (tc_perf_open_hooked); else the sentence saying
 * so (static storage, for the process's life). The first question about a source may
 * run its proof (from microseconds to tens of milliseconds; once per boot with the
 * cache).
 * Thread-safe. */
const char *tc_source_silent(const struct perf_event_attr *attr);
/* The tests' seam: forgets the process's verdicts (not this boot's cache), as a new
 * process would start. Tests only: a sentence handed out before may be rewritten. */
void tc_source_forget(void);
/* The loop the instructions' and branches' proofs count (x86-64 only): n iterations of
 * two instructions and one branch (n >= 1). Exposed for the test that holds it to
 * valgrind's count. */
void tc_source_proof_loop(unsigned long n);

/* --- the hardware counters' own checks (verify-hw.c) ---
 * Each runs on the calling thread where a PMU exists: ran says it did, ok whether what
 * it saw is right, figure[] its numbers (each check says which), text the sentence;
 * where it could not run, err and text say why. */
struct tc_hw_check {
	bool ran, ok;
	int err;
	double figure[4];
	char text[320];
};
/* figure: RDPMC before, read(2), RDPMC after */
void tc_verify_rdpmc(struct tc_hw_check *out);
/* figure: the worst error of the scaled estimates in percent, the events opened */
void tc_verify_multiplex(struct tc_hw_check *out);
/* figure: the highest precise_ip, the median skid without, with */
void tc_verify_precise(struct tc_hw_check *out);
/* figure: the deepest branch stack of a sample, the samples */
void tc_verify_lbr(struct tc_hw_check *out);

/* Skid over a loop whose one branch at `branch` goes back to `top`, every instruction
 * between one byte apart: a sample's distance in instructions after the branch (0 the
 * branch itself, 1 the top, ...), a histogram of them; IPs outside the loop counted
 * apart. Pure. */
#define TC_SKID_MAX 64
struct tc_skid {
	uint64_t top, branch;
	uint64_t hist[TC_SKID_MAX];
	uint64_t n, outside;
};
void tc_skid_add(struct tc_skid *s, uint64_t ip);
double tc_skid_median(const struct tc_skid *s);                 /* NAN without samples */
double tc_skid_within(const struct tc_skid *s, unsigned d);     /* share at <= d */

/* --- what this machine and user allow (explain.c) ---
 * Probed live by tc_perf_env_probe; tests fill one in by hand to reach every path of
 * the explainer. */
#define TC_PARANOID_UNKNOWN (-1000)
struct tc_perf_env {
	int paranoid;            /* /proc/sys/kernel/perf_event_paranoid, or TC_PARANOID_UNKNOWN */
	bool caps_known;         /* CapEff was read */
	bool cap_perfmon;        /* CAP_PERFMON (bit 38) effective */
	bool cap_sys_admin;      /* CAP_SYS_ADMIN (bit 21) effective */
	unsigned euid;
	char core_pmu[32];       /* "cpu", "cpu_core", ... or "" when there is none */
	bool hypervisor;         /* CPUID.1:ECX[31] (x86), /sys/hypervisor elsewhere */
	bool tracefs;            /* tracefs events are visible */
	long nofile;             /* RLIMIT_NOFILE soft limit, -1 unknown */
};
int tc_perf_env_probe(struct tc_perf_env *env);
bool tc_perf_env_privileged(const struct tc_perf_env *env);
/* What a perf_event_paranoid level allows an unprivileged user, as a clause. */
const char *tc_paranoid_meaning(int level);
/* The sysfs name of the PMU behind attr.type. 0 or -ENOENT. */
int tc_pmu_name_of_type(uint32_t type, char *buf, size_t size);

/* Flags of the context a failure happened in. */
#define TC_EXPLAIN_CPU_WIDE     0x1u   /* opened with pid -1 on a CPU */
#define TC_EXPLAIN_GROUP_MEMBER 0x2u   /* opened into an existing group */
/* One sentence (lowercase, no full stop) saying why perf_event_open(a) failed with err
 * (negative errno) and what to do; it names no command: where the reader should look
 * next is *hint (TACHO_HINT_NONE when nowhere; hint may be NULL). pmu: the PMU's name,
 * or NULL to look it up from a->type. Returns buf. */
char *tc_perf_explain(const struct tc_perf_env *env, int err, const struct perf_event_attr *a,
		      const char *pmu, unsigned flags, char *buf, size_t size,
		      enum tacho_hint *hint);

/* --- procfs.c: pure parsers of procfs text (tested and fuzzed on any input) --- */
/* CapEff of /proc/self/status. 0, -TACHO_ENOVALUE (no such line), -TACHO_EPARSE. */
int tc_parse_capeff(const char *status, uint64_t *caps);
/* The mount point of the first file system of type fstype in /proc/mounts text, octal
 * escapes undone, cut to size. 0 or -ENOENT. */
int tc_mounts_find(const char *mounts, const char *fstype, char *dir, size_t size);

#endif
