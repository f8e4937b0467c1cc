/* verify.c - sources that prove they count: for each kind of event tacho calls exact, a
 * proof that counts a known number of known events in this process; the verdicts, kept
 * for the process and for the boot (a small file in the user's cache folder); the test
 * switch that makes a source "not firing"; and the engine's question, asked before it
 * shows a value: does this event's source count here?
 *
 * Why: a source can open and never count. In a bhyve guest of this project's machines
 * hardware breakpoints open, take a debug register, and read 0 for 12,345 stores: the
 * hypervisor never delivers their debug exceptions. perf prints that 0 as a count. A
 * proof costs from tens of microseconds (a breakpoint) to tens of milliseconds (the
 * close of a tracepoint or a uprobe waits for an RCU grace period), once per boot
 * where the cache can be written, once per process where it cannot. */
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "perf/perf.h"
#include "perf/syscall.h"
#include "util/util.h"
#include "tacho/counters.h"

/* --- names --- */

static const char *const source_names[TACHO_SOURCE_COUNT] = {
	[TACHO_SOURCE_NONE] = "none",
	[TACHO_SOURCE_BREAKPOINT_DATA] = "breakpoint-data",
	[TACHO_SOURCE_BREAKPOINT_EXEC] = "breakpoint-exec",
	[TACHO_SOURCE_PAGE_FAULTS] = "page-faults",
	[TACHO_SOURCE_TRACEPOINT] = "tracepoint",
	[TACHO_SOURCE_UPROBE] = "uprobe",
	[TACHO_SOURCE_KPROBE] = "kprobe",
	[TACHO_SOURCE_INSTRUCTIONS] = "instructions",
	[TACHO_SOURCE_BRANCHES] = "branches",
};

const char *tacho_source_name(enum tacho_source s)
{
	return (unsigned)s < TACHO_SOURCE_COUNT ? source_names[s] : "none";
}

const char *tacho_verdict_name(enum tacho_verdict v)
{
	switch (v) {
	case TACHO_VERDICT_EXACT:
		return "exact";
	case TACHO_VERDICT_SILENT:
		return "silent";
	case TACHO_VERDICT_WRONG:
		return "wrong";
	case TACHO_VERDICT_NOT_OPEN:
		return "not open";
	default:
		return "unknown";
	}
}

enum tacho_source tacho_source_parse(const char *s, size_t n)
{
	if (!s)
		return TACHO_SOURCE_NONE;
	if (!n)
		n = strlen(s);
	for (int i = 1; i < TACHO_SOURCE_COUNT; i++)
		if (strlen(source_names[i]) == n && !strncmp(source_names[i], s, n))
			return (enum tacho_source)i;
	return TACHO_SOURCE_NONE;
}

/* The types of the kprobe and uprobe PMUs, read once from sysfs (a dynamic PMU keeps
 * its type while the kernel runs): every event's open asks, and a scan of the PMUs'
 * folders costs tens of microseconds. -1: not read yet; 0: none here. */
static int64_t uprobe_type = -1, kprobe_type = -1;

static uint32_t probe_type(int64_t *cache, const char *pmu)
{
	int64_t t = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (t < 0) {
		char path[96];
		long long v;

		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", pmu);
		t = tc_read_int_file(path, &v) == 0 && v > PERF_TYPE_MAX && v <= UINT32_MAX ? v : 0;
		__atomic_store_n(cache, t, __ATOMIC_RELAXED);
	}
	return (uint32_t)t;
}

enum tacho_source tacho_source_of(const struct perf_event_attr *attr)
{
	struct perf_event_attr a;

	if (!attr || tc_perf_attr_copy(&a, attr))
		return TACHO_SOURCE_NONE;
	switch (a.type) {
	case PERF_TYPE_BREAKPOINT:
		if (a.bp_type & HW_BREAKPOINT_X)
			return TACHO_SOURCE_BREAKPOINT_EXEC;
		return a.bp_type & HW_BREAKPOINT_RW ? TACHO_SOURCE_BREAKPOINT_DATA
						    : TACHO_SOURCE_NONE;
	case PERF_TYPE_SOFTWARE:
		return a.config == PERF_COUNT_SW_PAGE_FAULTS ||
		       a.config == PERF_COUNT_SW_PAGE_FAULTS_MIN ? TACHO_SOURCE_PAGE_FAULTS
								 : TACHO_SOURCE_NONE;
	case PERF_TYPE_TRACEPOINT:
		return TACHO_SOURCE_TRACEPOINT;
	case PERF_TYPE_HARDWARE:
		/* the low 32 bits: a hybrid CPU's generic events carry the core PMU's type
		 * in the high ones (PERF_HW_EVENT_MASK) */
		switch (a.config & 0xffffffffu) {
		case PERF_COUNT_HW_INSTRUCTIONS:
			return TACHO_SOURCE_INSTRUCTIONS;
		case PERF_COUNT_HW_BRANCH_INSTRUCTIONS:
			return TACHO_SOURCE_BRANCHES;
		default:
			return TACHO_SOURCE_NONE;
		}
	default:
		if (a.type <= PERF_TYPE_MAX)
			return TACHO_SOURCE_NONE;
		if (a.type == probe_type(&uprobe_type, "uprobe"))
			return TACHO_SOURCE_UPROBE;
		if (a.type == probe_type(&kprobe_type, "kprobe"))
			return TACHO_SOURCE_KPROBE;
		return TACHO_SOURCE_NONE;
	}
}

/* --- the proofs --- */

/* How many events each proof makes. Small enough to cost microseconds (a breakpoint
 * trap or a probe hit is about a microsecond here), large enough that no accident
 * gives the exact number. */
#define N_STORES 1000
#define N_CALLS 100
#define N_PAGES 64
#define N_SYSCALLS 100
/* the instruction loop: two runs whose difference is N_LOOP iterations */
#define N_LOOP 100000

/* What each proof makes (the instruction loop's: the iterations of the difference,
 * two instructions and one branch each). */
static const uint64_t expected_of[TACHO_SOURCE_COUNT] = {
	[TACHO_SOURCE_BREAKPOINT_DATA] = N_STORES, [TACHO_SOURCE_BREAKPOINT_EXEC] = N_CALLS,
	[TACHO_SOURCE_PAGE_FAULTS] = N_PAGES,      [TACHO_SOURCE_TRACEPOINT] = N_SYSCALLS,
	[TACHO_SOURCE_UPROBE] = N_CALLS,           [TACHO_SOURCE_KPROBE] = N_SYSCALLS,
	[TACHO_SOURCE_INSTRUCTIONS] = 2 * N_LOOP,  [TACHO_SOURCE_BRANCHES] = N_LOOP,
};

/* What the proofs count: a variable a data breakpoint watches, a function an execute
 * breakpoint and a uprobe stop at, called through a pointer the compiler cannot see
 * through. */
static volatile long proof_var;

__attribute__((noinline, used)) void tc_source_proof_target(void);
__attribute__((noinline, used)) void tc_source_proof_target(void)
{
	__asm__ volatile("" : : : "memory");
}

static void (*volatile proof_fn)(void) = tc_source_proof_target;

/* The instruction loop: two instructions (dec, jnz) and one branch an iteration.
 * Not static: a test runs it under valgrind to hold those numbers to valgrind's count
 * of the same code. */
#if defined(__x86_64__)
__attribute__((noinline)) void tc_source_proof_loop(unsigned long n)
{
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(n) : : "cc");
}
#define HAVE_PROOF_LOOP 1
#define proof_loop tc_source_proof_loop
#endif

struct body {
	enum tacho_source source;
	char *pages;             /* PAGE_FAULTS: N_PAGES fresh ones */
	long psz;
	unsigned long loops;     /* INSTRUCTIONS, BRANCHES */
};

/* The pages are written without the sanitizers' instrumentation: a check of a fresh
 * page's shadow would fault in shadow pages, and count. */
__attribute__((noinline, no_sanitize_address, no_sanitize_thread))
static void touch(char *p, size_t n, long psz)
{
	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i * (size_t)psz] = 1;
}

static void run_body(const struct body *b)
{
	switch (b->source) {
	case TACHO_SOURCE_BREAKPOINT_DATA:
		for (long i = 0; i < N_STORES; i++)
			proof_var = i;
		break;
	case TACHO_SOURCE_BREAKPOINT_EXEC:
	case TACHO_SOURCE_UPROBE:
		for (int i = 0; i < N_CALLS; i++)
			proof_fn();
		break;
	case TACHO_SOURCE_PAGE_FAULTS:
		touch(b->pages, N_PAGES, b->psz);
		break;
	case TACHO_SOURCE_TRACEPOINT:
	case TACHO_SOURCE_KPROBE:
		/* the system call itself: getpid may be answered without one */
		for (int i = 0; i < N_SYSCALLS; i++)
			syscall(SYS_getppid);
		break;
#ifdef HAVE_PROOF_LOOP
	case TACHO_SOURCE_INSTRUCTIONS:
	case TACHO_SOURCE_BRANCHES:
		proof_loop(b->loops);
		break;
#endif
	default:
		break;
	}
}

/* Opens a (on this thread, any CPU), runs the body between enable and disable, and
 * reads the count and the time running. 0 or -errno of the open or of the read. */
static int count_once(struct perf_event_attr *a, const struct body *b, uint64_t *count,
		      uint64_t *running)
{
	uint64_t v[3];
	ssize_t n;
	int fd;

	a->disabled = 1;
	a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = tc_perf_event_open_real(a, 0, -1, -1, 0);
	if (fd < 0)
		return fd;
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);   /* the real kernel's, as the open */
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	run_body(b);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	do
		n = read(fd, v, sizeof(v));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n != (ssize_t)sizeof(v))
		return n < 0 ? -errno : -EIO;
	*count = v[0];
	/* a count of part of the body (the event shared its counter: other events or a
	 * system-wide session hold them) proves nothing: as if it never ran */
	*running = v[2] && v[2] >= v[1] ? v[2] : 0;
	return 0;
}

/* The id of a tracepoint from tracefs (its usual mount points), or -errno. */
static long long tracepoint_id(const char *sys, const char *name)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	int err = -ENOENT;

	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		char path[256];
		long long id;

		snprintf(path, sizeof(path), "%s/events/%s/%s/id", roots[i], sys, name);
		err = tc_read_int_file(path, &id);
		if (!err)
			return id;
	}
	return err;
}

/* The type of a dynamic PMU, or -errno. */
static long long pmu_type(const char *name)
{
	char path[128];
	long long t;
	int err;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type", name);
	err = tc_read_int_file(path, &t);
	return err ? err : t;
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* The proof in words, for the report and for the sentences. */
static void describe(struct tacho_source_proof *p)
{
	static const char *const what[TACHO_SOURCE_COUNT] = {
		[TACHO_SOURCE_BREAKPOINT_DATA] = "%s stores to a watched variable",
		[TACHO_SOURCE_BREAKPOINT_EXEC] = "%s calls of a function with a breakpoint",
		[TACHO_SOURCE_PAGE_FAULTS] = "%s first writes to fresh pages",
		[TACHO_SOURCE_TRACEPOINT] = "%s getppid(2) calls on syscalls:sys_enter_getppid",
		[TACHO_SOURCE_UPROBE] = "%s calls of a function with a uprobe",
		[TACHO_SOURCE_KPROBE] = "%s getppid(2) calls with a kprobe on their handler",
		[TACHO_SOURCE_INSTRUCTIONS] = "%s user instructions of a loop (the difference "
					      "of two runs)",
		[TACHO_SOURCE_BRANCHES] = "%s user branches of a loop (the difference of two "
					  "runs)",
	};
	char n[32];

	tc_fmt_grouped(p->expected, n, sizeof(n));
	if (what[p->source])
		snprintf(p->what, sizeof(p->what), what[p->source], n);
}

/* The sentence of a proof that found the source wanting, from its numbers alone (so
 * that a verdict read from the cache says the same). */
static void explain(struct tacho_source_proof *p)
{
	char c[32];
	const char *who;

	p->why[0] = '\0';
	p->hint = TACHO_HINT_NONE;
	if (p->verdict != TACHO_VERDICT_SILENT && p->verdict != TACHO_VERDICT_WRONG)
		return;
	p->err = -TACHO_ESILENT;
	p->hint = TACHO_HINT_MACHINE;
	tc_fmt_grouped(p->counted, c, sizeof(c));
	if (p->forced) {
		snprintf(p->why, sizeof(p->why), "made not to fire by TACHO_TEST_NOT_FIRING, a "
			 "switch for tests: %s events are shown as not counted (unset it to "
			 "count them)", tacho_source_name(p->source));
		return;
	}
	who = tc_hypervisor_guest() ? "the hypervisor does not deliver them"
				    : "the kernel or the CPU does not deliver them";
	/* short enough to follow "cannot sample 'EVENT': " in a diagnostic's 256 bytes */
	switch (p->source) {
	case TACHO_SOURCE_BREAKPOINT_DATA:
	case TACHO_SOURCE_BREAKPOINT_EXEC:
		if (p->verdict == TACHO_VERDICT_SILENT)
			snprintf(p->why, sizeof(p->why), "this machine's debug registers never "
				 "fire: 0 of %s counted (%s; count with a uprobe or a "
				 "tracepoint instead)", p->what, who);
		else
			snprintf(p->why, sizeof(p->why), "this machine's debug registers do not "
				 "count exactly: %s of %s counted", c, p->what);
		return;
	default:
		if (p->verdict == TACHO_VERDICT_SILENT)
			snprintf(p->why, sizeof(p->why), "%s events never fire on this machine: "
				 "0 of %s counted", tacho_source_name(p->source), p->what);
		else
			snprintf(p->why, sizeof(p->why), "%s events do not count exactly on this "
				 "machine: %s of %s counted", tacho_source_name(p->source), c,
				 p->what);
		return;
	}
}

/* The verdict of what was counted against what was made. */
static enum tacho_verdict judge(uint64_t counted, uint64_t expected)
{
	if (counted == expected)
		return TACHO_VERDICT_EXACT;
	return counted ? TACHO_VERDICT_WRONG : TACHO_VERDICT_SILENT;
}

/* The attributes of a source's proof (path: room for a uprobe's file). 0; or -1 with
 * the verdict (UNKNOWN or NOT_OPEN), err and why of a proof that cannot run here. */
static int proof_attr(struct tacho_source_proof *p, struct perf_event_attr *a, char *path,
		      size_t psize)
{
	long long t;
	uint64_t off;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	switch (p->source) {
	case TACHO_SOURCE_BREAKPOINT_DATA:
		a->type = PERF_TYPE_BREAKPOINT;
		a->bp_type = HW_BREAKPOINT_W;
		a->bp_addr = (uintptr_t)&proof_var;
		a->bp_len = HW_BREAKPOINT_LEN_8;
		return 0;
	case TACHO_SOURCE_BREAKPOINT_EXEC:
		a->type = PERF_TYPE_BREAKPOINT;
		a->bp_type = HW_BREAKPOINT_X;
		a->bp_addr = (uintptr_t)tc_source_proof_target;
		a->bp_len = sizeof(long);   /* x86 takes execute breakpoints of that length */
		return 0;
	case TACHO_SOURCE_PAGE_FAULTS:
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_PAGE_FAULTS;
		return 0;
	case TACHO_SOURCE_TRACEPOINT:
		t = tracepoint_id("syscalls", "sys_enter_getppid");
		if (t < 0) {
			p->err = (int)t;
			snprintf(p->why, sizeof(p->why), "not proven: tracefs has no "
				 "syscalls:sys_enter_getppid here (not mounted, or not readable "
				 "by this user)");
			return -1;
		}
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = (uint64_t)t;
		return 0;
	case TACHO_SOURCE_UPROBE:
	case TACHO_SOURCE_KPROBE:
		t = pmu_type(tacho_source_name(p->source));
		if (t < 0) {
			p->verdict = TACHO_VERDICT_NOT_OPEN;
			p->err = -ENOENT;
			snprintf(p->why, sizeof(p->why), "no %s PMU in this kernel",
				 tacho_source_name(p->source));
			return -1;
		}
		a->type = (uint32_t)t;
		if (p->source == TACHO_SOURCE_KPROBE) {
			a->exclude_kernel = 0;      /* a kprobe fires in the kernel */
			return 0;
		}
		if (tc_self_file_offset((uintptr_t)tc_source_proof_target, path, psize, &off)) {
			p->err = -ENOENT;
			snprintf(p->why, sizeof(p->why), "not proven: the code tacho would probe "
				 "is not in a file");
			return -1;
		}
		a->uprobe_path = (uintptr_t)path;
		a->probe_offset = off;
		return 0;
	case TACHO_SOURCE_INSTRUCTIONS:
	case TACHO_SOURCE_BRANCHES:
#ifdef HAVE_PROOF_LOOP
		a->type = PERF_TYPE_HARDWARE;
		a->config = p->source == TACHO_SOURCE_INSTRUCTIONS ? PERF_COUNT_HW_INSTRUCTIONS
								   : PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
		return 0;
#endif
	default:
		p->err = -EOPNOTSUPP;
		snprintf(p->why, sizeof(p->why), "not proven: tacho has no proof for it on this "
			 "architecture");
		return -1;
	}
}

/* The kprobe's symbol: the system call's handler under the names architectures give it
 * (the wrappers of Linux 4.17 and later, then the older plain name). */
static const char *const kprobe_syms[] = {
#if defined(__x86_64__)
	"__x64_sys_getppid",
#elif defined(__aarch64__)
	"__arm64_sys_getppid",
#endif
	"__se_sys_getppid", "__do_sys_getppid", "sys_getppid",
};

static int count_proof(struct tacho_source_proof *p, struct perf_event_attr *a, struct body *b,
		       uint64_t *count, uint64_t *running)
{
	int err;

	switch (p->source) {
	case TACHO_SOURCE_PAGE_FAULTS:
		b->psz = sysconf(_SC_PAGESIZE);
		b->pages = mmap(NULL, (size_t)b->psz * N_PAGES, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (b->pages == MAP_FAILED)
			return -errno;
		/* one fault a page: no huge page may serve them all at once */
		madvise(b->pages, (size_t)b->psz * N_PAGES, MADV_NOHUGEPAGE);
		err = count_once(a, b, count, running);
		munmap(b->pages, (size_t)b->psz * N_PAGES);
		return err;
	case TACHO_SOURCE_KPROBE:
		err = -ENOENT;
		for (size_t i = 0; i < ARRAY_SIZE(kprobe_syms) && err; i++) {
			a->kprobe_func = (uintptr_t)kprobe_syms[i];
			a->probe_offset = 0;
			err = count_once(a, b, count, running);
			/* a name this kernel does not have: the next spelling */
			if (err != -ENOENT && err != -EINVAL)
				break;
		}
		return err;
	case TACHO_SOURCE_INSTRUCTIONS:
	case TACHO_SOURCE_BRANCHES: {
		/* the loop run for N and for 2N iterations: the difference is N iterations
		 * whatever the enable and disable around them cost; the closest of three
		 * tries (an interrupt may add an instruction on some CPUs) */
		uint64_t best = 0, c1, c2, r1, r2;
		bool have = false;

		for (int k = 0; k < 3; k++) {
			b->loops = N_LOOP;
			err = count_once(a, b, &c1, &r1);
			if (!err) {
				b->loops = 2 * N_LOOP;
				err = count_once(a, b, &c2, &r2);
			}
			if (err)
				return err;
			if (!r1 || !r2) {
				*running = 0;
				return 0;
			}
			/* a second run that counted less than the first proves nothing of
			 * the loop: no try of that kind is a verdict */
			if (c2 >= c1) {
				uint64_t d = c2 - c1;
				if (!have || (d > p->expected ? d - p->expected : p->expected - d) <
					     (best > p->expected ? best - p->expected
								 : p->expected - best))
					best = d;
				have = true;
			}
		}
		*count = best;
		*running = have;
		return 0;
	}
	default:
		return count_once(a, b, count, running);
	}
}

static void prove_now(struct tacho_source_proof *p)
{
	char path[4096];
	struct perf_event_attr a;
	struct body b = { .source = p->source };
	uint64_t count = 0, running = 0;
	double t0 = now_us();
	int err;

	if (proof_attr(p, &a, path, sizeof(path)))
		return;
	err = count_proof(p, &a, &b, &count, &running);
	p->cost_us = now_us() - t0;
	if (err) {
		struct tc_perf_env env;

		p->verdict = TACHO_VERDICT_NOT_OPEN;
		p->err = err;
		tc_perf_env_probe(&env);
		tc_perf_explain(&env, err, &a, NULL, 0, p->why, sizeof(p->why), &p->hint);
		return;
	}
	if (!running) {
		p->err = -TACHO_ENOTCOUNTED;
		snprintf(p->why, sizeof(p->why), "not proven: the proof's event did not count "
			 "the whole time (other events hold the counters); proven again at the "
			 "next question");
		return;
	}
	p->verdict = judge(count, p->expected);
	if (p->verdict == TACHO_VERDICT_WRONG) {
		/* one accident (a fault on a page the body had not touched, an interrupt
		 * the PMU counts) is not the machine: the verdict is the second try's */
		uint64_t again = 0;

		err = count_proof(p, &a, &b, &again, &running);
		if (!err && running) {
			count = again;
			p->verdict = judge(count, p->expected);
		}
	}
	p->counted = count;
	p->err = 0;
	p->cost_us = now_us() - t0;
	explain(p);
}

/* --- the test switch --- */

/* Whether TACHO_TEST_NOT_FIRING names s ("all", or names separated by commas). Read
 * through tc_env_trusted: a setuid program never takes it. */
static bool forced_silent(enum tacho_source s)
{
	const char *v = tc_env_trusted("TACHO_TEST_NOT_FIRING", NULL);

	if (!v || !*v)
		return false;
	while (*v) {
		size_t n = strcspn(v, ",");

		if ((n == 3 && !strncmp(v, "all", 3)) || (n && tacho_source_parse(v, n) == s))
			return true;
		v += n + (v[n] == ',');
	}
	return false;
}

/* --- this boot's cache ---
 * $CACHE/sources: "tacho-sources 1", "boot BOOT_ID", then "NAME VERDICT EXPECTED
 * COUNTED" a line. A file of another boot, kernel or format is ignored and replaced.
 * Only what a proof counted is kept: the reasons a proof could not run (a permission,
 * a PMU missing) are cheap to find again and may change within a boot. */

static int cache_path(char *buf, size_t size)
{
	char dir[4096];
	int err = tc_user_cache_dir(dir, sizeof(dir));
	int n;

	if (err)
		return err;
	n = snprintf(buf, size, "%s/sources", dir);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int boot_key(char *buf, size_t size)
{
	char boot[64];
	struct utsname u;

	if (tc_read_line_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) || uname(&u))
		return -ENOENT;
	snprintf(buf, size, "%s %s", boot, u.release);
	return 0;
}

/* This boot's verdicts from the cache file into v[] (have[] says which), each checked:
 * a verdict its numbers do not bear out is not believed. False when there is no file
 * of this boot and kernel. */
static bool cache_load(struct tacho_source_proof *v, bool *have)
{
	char path[4200], key[160], *text, *line;
	size_t len;
	bool ours = false;

	memset(have, 0, TACHO_SOURCE_COUNT * sizeof(*have));
	if (cache_path(path, sizeof(path)) || boot_key(key, sizeof(key)) ||
	    tc_read_regular_file(path, &text, &len, 1 << 16))
		return false;
	line = text;
	if (strncmp(line, "tacho-sources 1\nboot ", 21))
		goto out;
	line += 21;
	if (strncmp(line, key, strlen(key)) || line[strlen(key)] != '\n')
		goto out;
	ours = true;
	for (line = strchr(line, '\n'); line; line = strchr(line + 1, '\n')) {
		char name[32], verdict[16];
		unsigned long long e, c;
		enum tacho_source s;
		enum tacho_verdict vd;

		if (sscanf(line + 1, "%31s %15s %llu %llu", name, verdict, &e, &c) != 4)
			continue;
		s = tacho_source_parse(name, strlen(name));
		vd = !strcmp(verdict, "exact")	? TACHO_VERDICT_EXACT :
		     !strcmp(verdict, "silent") ? TACHO_VERDICT_SILENT :
		     !strcmp(verdict, "wrong")	? TACHO_VERDICT_WRONG :
						  TACHO_VERDICT_UNKNOWN;
		/* a verdict its numbers, or another proof's numbers, do not bear out is
		 * not believed */
		if (s == TACHO_SOURCE_NONE || vd == TACHO_VERDICT_UNKNOWN || judge(c, e) != vd ||
		    e != expected_of[s])
			continue;
		v[s].expected = e;
		v[s].counted = c;
		v[s].verdict = vd;
		have[s] = true;
	}
out:
	free(text);
	return ours;
}

static bool cache_read(enum tacho_source s, struct tacho_source_proof *p)
{
	struct tacho_source_proof v[TACHO_SOURCE_COUNT];
	bool have[TACHO_SOURCE_COUNT];

	if (!cache_load(v, have) || !have[s])
		return false;
	p->expected = v[s].expected;
	p->counted = v[s].counted;
	p->verdict = v[s].verdict;
	return true;
}

static bool keepable(enum tacho_verdict v)
{
	return v == TACHO_VERDICT_EXACT || v == TACHO_VERDICT_SILENT || v == TACHO_VERDICT_WRONG;
}

/* Adds p's verdict to this boot's file, keeping the other sources' (a file of another
 * boot is replaced). Best effort: a cache that cannot be written costs the next
 * process its proofs, nothing else. */
static void cache_write(const struct tacho_source_proof *p)
{
	struct tacho_source_proof v[TACHO_SOURCE_COUNT];
	bool have[TACHO_SOURCE_COUNT];
	char path[4200], key[160], dir[4096];
	struct tc_outfile o;
	struct tc_sb sb;

	if (!keepable(p->verdict) || p->forced || cache_path(path, sizeof(path)) ||
	    boot_key(key, sizeof(key)) || tc_user_cache_dir(dir, sizeof(dir)) || tc_mkdirs(dir))
		return;
	cache_load(v, have);
	v[p->source] = *p;
	have[p->source] = true;
	tc_sb_init(&sb);
	tc_sb_addf(&sb, "tacho-sources 1\nboot %s\n", key);
	for (int i = 1; i < TACHO_SOURCE_COUNT; i++)
		if (have[i])
			tc_sb_addf(&sb, "%s %s %llu %llu\n", source_names[i],
				   tacho_verdict_name(v[i].verdict),
				   (unsigned long long)v[i].expected,
				   (unsigned long long)v[i].counted);
	if (sb.buf && tc_outfile_open(&o, path, 0) == 0) {
		if (write(o.fd, sb.buf, sb.len) == (ssize_t)sb.len)
			tc_outfile_commit(&o);
		else
			tc_outfile_abort(&o);
	}
	tc_sb_exit(&sb);
}

/* --- the process's verdicts --- */

static struct {
	pthread_mutex_t lock;
	bool have[TACHO_SOURCE_COUNT];
	struct tacho_source_proof proof[TACHO_SOURCE_COUNT];
	bool have_forced[TACHO_SOURCE_COUNT];
	struct tacho_source_proof forced[TACHO_SOURCE_COUNT];
} proofs = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Fills *p with the proof of s: forced, or not proven on valgrind's CPU, or from the
 * cache (unless fresh), or proven now (and the cache then updated with it; the caller
 * holds the lock). */
static void prove(enum tacho_source s, bool fresh, struct tacho_source_proof *p)
{
	memset(p, 0, sizeof(*p));
	p->sz = sizeof(*p);
	p->source = s;
	p->expected = expected_of[s];
	describe(p);
	if (forced_silent(s)) {
		p->verdict = TACHO_VERDICT_SILENT;
		p->forced = true;
		explain(p);
	} else if (tc_valgrind_running()) {
		/* on valgrind's synthetic CPU the code that runs is a translation: an
		 * execute breakpoint or a uprobe on the original never fires, and nothing
		 * found here is true of the machine */
		snprintf(p->why, sizeof(p->why), "not proven: this process runs on "
			 "valgrind's synthetic CPU");
	} else if (!fresh && cache_read(s, p)) {
		p->cached = true;
		explain(p);
	} else {
		prove_now(p);
		cache_write(p);
	}
}

/* Whether a verdict stands for the process: every one but those whose reason passes
 * (descriptors or debug registers taken, a busy PMU, counters held by others), which
 * the next question proves again. A silent or wrong verdict is final, so the sentence
 * handed out with it never changes. */
static bool final(const struct tacho_source_proof *p)
{
	switch (p->err) {
	case -EMFILE:
	case -ENFILE:
	case -ENOSPC:
	case -EBUSY:
	case -EAGAIN:
	case -ENOMEM:
	case -EINTR:
	case -TACHO_ENOTCOUNTED:
		return p->verdict == TACHO_VERDICT_SILENT || p->verdict == TACHO_VERDICT_WRONG;
	default:
		return true;
	}
}

/* The process's proof of s, made at the first question, and again at a later one while
 * it is not final (the caller holds the lock). */
static const struct tacho_source_proof *proof_of(enum tacho_source s)
{
	/* the switch is asked every time (a child forked after a proof, or a test that
	 * sets it, sees it at once); the proof it stands for is kept apart */
	if (forced_silent(s)) {
		if (!proofs.have_forced[s]) {
			prove(s, false, &proofs.forced[s]);
			proofs.have_forced[s] = true;
		}
		return &proofs.forced[s];
	}
	if (!proofs.have[s] || !final(&proofs.proof[s])) {
		prove(s, false, &proofs.proof[s]);
		proofs.have[s] = true;
	}
	return &proofs.proof[s];
}

void tc_source_forget(void)
{
	pthread_mutex_lock(&proofs.lock);
	memset(proofs.have, 0, sizeof(proofs.have));
	memset(proofs.have_forced, 0, sizeof(proofs.have_forced));
	pthread_mutex_unlock(&proofs.lock);
}

int tacho_source_prove(enum tacho_source s, unsigned flags, struct tacho_source_proof *out)
{
	struct tacho_source_proof p;

	if (s <= TACHO_SOURCE_NONE || s >= TACHO_SOURCE_COUNT || !out ||
	    out->sz < tc_offsetofend(struct tacho_source_proof, cost_us))
		return -EINVAL;
	pthread_mutex_lock(&proofs.lock);
	if (flags & TACHO_PROVE_FRESH)
		prove(s, true, &p);     /* the process keeps the verdict it had */
	else
		p = *proof_of(s);
	pthread_mutex_unlock(&proofs.lock);
	tc_sized_put_sz(out, &p, sizeof(p));
	return 0;
}

const char *tc_source_silent(const struct perf_event_attr *a)
{
	enum tacho_source s;
	const struct tacho_source_proof *p;

	/* the tests' fake kernel: nothing the real one would say applies */
	if (tc_perf_open_hooked())
		return NULL;
	s = tacho_source_of(a);
	if (s == TACHO_SOURCE_NONE)
		return NULL;
	pthread_mutex_lock(&proofs.lock);
	p = proof_of(s);
	pthread_mutex_unlock(&proofs.lock);
	return p->verdict == TACHO_VERDICT_SILENT || p->verdict == TACHO_VERDICT_WRONG ? p->why
										       : NULL;
}
