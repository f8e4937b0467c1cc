/* test-sources.c - sources that prove they count (lib/perf/verify.c): which source an
 * event belongs to, the proofs and their verdicts, this boot's cache (written, read
 * back, and refused when it belongs to another boot or its numbers do not bear its
 * verdict out), the test switch TACHO_TEST_NOT_FIRING, and what the engine makes of a
 * silent source: an event that opened and whose kernel count is there reads "not
 * counted" with the proof's sentence, never a number, in counting and in regions. Then
 * the hardware counters' own checks (verify-hw.c): their skid statistics on synthetic
 * samples, and what each says where it cannot run.
 *
 * A process keeps the verdicts it made, so every case that changes the environment
 * runs in a child of its own (in_child). */
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "pages.h"
#include "tacho.h"
#include "perf/perf.h"
#include "util/util.h"

/* Runs fn in a child with the environment variable name set to value (NULL: unset),
 * and fails the test with the child's step when it returns non-zero. */
static void in_child(int (*fn)(void), const char *name, const char *value)
{
	int st;
	pid_t p;

	fflush(NULL);
	p = fork();
	assert_true(p >= 0);
	if (p == 0) {
		if (value)
			setenv(name, value, 1);
		else
			unsetenv(name);
		_exit(fn());
	}
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st))
		fail_msg("the child failed at step %d", WEXITSTATUS(st));
}

/* --- which source --- */

static void test_source_of(void **state)
{
	static const struct {
		struct perf_event_attr a;
		enum tacho_source want;
	} cases[] = {
		{ { .type = PERF_TYPE_BREAKPOINT, .bp_type = HW_BREAKPOINT_W },
		  TACHO_SOURCE_BREAKPOINT_DATA },
		{ { .type = PERF_TYPE_BREAKPOINT, .bp_type = HW_BREAKPOINT_RW },
		  TACHO_SOURCE_BREAKPOINT_DATA },
		{ { .type = PERF_TYPE_BREAKPOINT, .bp_type = HW_BREAKPOINT_X },
		  TACHO_SOURCE_BREAKPOINT_EXEC },
		{ { .type = PERF_TYPE_BREAKPOINT, .bp_type = HW_BREAKPOINT_EMPTY },
		  TACHO_SOURCE_NONE },
		{ { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS },
		  TACHO_SOURCE_PAGE_FAULTS },
		{ { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS_MIN },
		  TACHO_SOURCE_PAGE_FAULTS },
		/* drifts, or no cheap proof: not checked */
		{ { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		  TACHO_SOURCE_NONE },
		{ { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK },
		  TACHO_SOURCE_NONE },
		{ { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CONTEXT_SWITCHES },
		  TACHO_SOURCE_NONE },
		{ { .type = PERF_TYPE_TRACEPOINT, .config = 42 }, TACHO_SOURCE_TRACEPOINT },
		{ { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_INSTRUCTIONS },
		  TACHO_SOURCE_INSTRUCTIONS },
		/* a hybrid CPU's generic event: the core PMU's type in the high bits */
		{ { .type = PERF_TYPE_HARDWARE,
		    .config = (8ull << 32) | PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		  TACHO_SOURCE_BRANCHES },
		{ { .type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_CPU_CYCLES },
		  TACHO_SOURCE_NONE },
		{ { .type = PERF_TYPE_RAW, .config = 0xc0 }, TACHO_SOURCE_NONE },
		{ { .type = PERF_TYPE_HW_CACHE }, TACHO_SOURCE_NONE },
	};
	long long type;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct perf_event_attr a = cases[i].a;

		a.size = sizeof(a);
		if (tacho_source_of(&a) != cases[i].want)
			fail_msg("case %zu: %s, want %s", i, tacho_source_name(tacho_source_of(&a)),
				 tacho_source_name(cases[i].want));
	}
	assert_int_equal(tacho_source_of(NULL), TACHO_SOURCE_NONE);
	/* an attr whose size the library cannot read is nobody's */
	assert_int_equal(tacho_source_of(&(struct perf_event_attr){ .type = PERF_TYPE_TRACEPOINT }),
			 TACHO_SOURCE_NONE);
	/* the dynamic PMUs by their sysfs names */
	if (tc_read_int_file("/sys/bus/event_source/devices/uprobe/type", &type) == 0)
		assert_int_equal(tacho_source_of(&(struct perf_event_attr){
					 .size = sizeof(struct perf_event_attr),
					 .type = (uint32_t)type }),
				 TACHO_SOURCE_UPROBE);
	if (tc_read_int_file("/sys/bus/event_source/devices/kprobe/type", &type) == 0)
		assert_int_equal(tacho_source_of(&(struct perf_event_attr){
					 .size = sizeof(struct perf_event_attr),
					 .type = (uint32_t)type }),
				 TACHO_SOURCE_KPROBE);
	/* the names parse back; a prefix or another spelling is none */
	for (int k = 1; k < TACHO_SOURCE_COUNT; k++)
		assert_int_equal(tacho_source_parse(tacho_source_name(k), 0), k);
	assert_int_equal(tacho_source_parse("uprobe,kprobe", 6), TACHO_SOURCE_UPROBE);
	assert_int_equal(tacho_source_parse("page", 0), TACHO_SOURCE_NONE);
	assert_int_equal(tacho_source_parse("Page-Faults", 0), TACHO_SOURCE_NONE);
	assert_int_equal(tacho_source_parse("none", 0), TACHO_SOURCE_NONE);
	assert_int_equal(tacho_source_parse(NULL, 0), TACHO_SOURCE_NONE);
	/* the names are stable: scripts read them in doctor's JSON */
	assert_string_equal(tacho_source_name(TACHO_SOURCE_BREAKPOINT_DATA), "breakpoint-data");
	assert_string_equal(tacho_source_name(TACHO_SOURCE_COUNT), "none");
	assert_string_equal(tacho_verdict_name(TACHO_VERDICT_SILENT), "silent");
	assert_string_equal(tacho_verdict_name(TACHO_VERDICT_NOT_OPEN), "not open");
}

static void test_prove_arguments(void **state)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };
	struct tacho_source_proof small = { .sz = 8 };
	(void)state;

	assert_int_equal(tacho_source_prove(TACHO_SOURCE_NONE, 0, &p), -EINVAL);
	assert_int_equal(tacho_source_prove(TACHO_SOURCE_COUNT, 0, &p), -EINVAL);
	assert_int_equal(tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, NULL), -EINVAL);
	assert_int_equal(tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &small), -EINVAL);
}

/* --- the proofs on this machine ---
 * Every source gets a verdict with the numbers behind it: exact means counted ==
 * expected, silent 0 of them, wrong another number, and a source that cannot be proven
 * says why. What the verdict is depends on the machine; that it is consistent does
 * not. */
static void test_every_source_has_a_consistent_verdict(void **state)
{
	(void)state;

	for (int s = 1; s < TACHO_SOURCE_COUNT; s++) {
		struct tacho_source_proof p = { .sz = sizeof(p) };

		assert_int_equal(tacho_source_prove((enum tacho_source)s, TACHO_PROVE_FRESH, &p), 0);
		assert_int_equal(p.source, s);
		assert_true(p.expected > 0);
		assert_true(p.what[0] != '\0');
		print_message("%-16s %-9s %llu of %llu (%s) %.0f us%s%s\n",
			      tacho_source_name(p.source), tacho_verdict_name(p.verdict),
			      (unsigned long long)p.counted, (unsigned long long)p.expected,
			      p.what, p.cost_us, p.why[0] ? ": " : "", p.why);
		switch (p.verdict) {
		case TACHO_VERDICT_EXACT:
			assert_true(p.counted == p.expected);
			assert_int_equal(p.err, 0);
			assert_string_equal(p.why, "");
			break;
		case TACHO_VERDICT_SILENT:
			assert_true(p.counted == 0);
			assert_int_equal(p.err, -TACHO_ESILENT);
			assert_contains(p.why, p.forced ? "TACHO_TEST_NOT_FIRING" : "0 of ");
			assert_int_equal(p.hint, TACHO_HINT_MACHINE);
			break;
		case TACHO_VERDICT_WRONG:
			assert_true(p.counted != 0 && p.counted != p.expected);
			assert_int_equal(p.err, -TACHO_ESILENT);
			assert_contains(p.why, "not count exactly");
			break;
		case TACHO_VERDICT_NOT_OPEN:
		case TACHO_VERDICT_UNKNOWN:
			assert_true(p.why[0] != '\0');
			break;
		}
		/* tacho's own sentences follow "cannot sample 'EVENT': " in a diagnostic of
		 * 256 bytes (a refusal to open is the explainer's, as for any event) */
		if (p.verdict == TACHO_VERDICT_SILENT || p.verdict == TACHO_VERDICT_WRONG)
			assert_true(strlen(p.why) < 200);
	}
}

/* Page faults count exactly on any Linux that tacho runs on (a software event in the
 * fault handler): the proof says so unless the switch says otherwise. */
static void test_page_faults_proven(void **state)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };
	const char *sw = getenv("TACHO_TEST_NOT_FIRING");
	(void)state;

	if (sw && *sw)
		TEST_SKIP("TACHO_TEST_NOT_FIRING is set (%s)", sw);
	assert_int_equal(tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, TACHO_PROVE_FRESH, &p), 0);
	assert_int_equal(p.verdict, TACHO_VERDICT_EXACT);
	assert_int_equal(p.counted, 64);
	assert_false(p.forced);
}

/* --- the test switch --- */

static int forced_child(void)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };

	/* named in the list: silent, without a proof, and said to be forced */
	if (tacho_source_prove(TACHO_SOURCE_UPROBE, 0, &p) || p.verdict != TACHO_VERDICT_SILENT ||
	    !p.forced || p.counted != 0 || p.cost_us != 0 || p.err != -TACHO_ESILENT ||
	    !strstr(p.why, "TACHO_TEST_NOT_FIRING"))
		return 1;
	memset(&p, 0, sizeof(p));
	p.sz = sizeof(p);
	if (tacho_source_prove(TACHO_SOURCE_BREAKPOINT_EXEC, 0, &p) ||
	    p.verdict != TACHO_VERDICT_SILENT || !p.forced)
		return 2;
	/* not named: proven as ever (page faults count wherever tacho runs) */
	memset(&p, 0, sizeof(p));
	p.sz = sizeof(p);
	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &p) || p.forced ||
	    p.verdict != TACHO_VERDICT_EXACT)
		return 3;
	return 0;
}

static int all_child(void)
{
	for (int s = 1; s < TACHO_SOURCE_COUNT; s++) {
		struct tacho_source_proof p = { .sz = sizeof(p) };
		if (tacho_source_prove((enum tacho_source)s, 0, &p) ||
		    p.verdict != TACHO_VERDICT_SILENT || !p.forced)
			return s;
	}
	return 0;
}

static int bogus_child(void)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };

	/* names it does not know, and a prefix of one, name nothing */
	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &p) || p.forced)
		return 1;
	return 0;
}

static void test_switch(void **state)
{
	(void)state;

	in_child(forced_child, "TACHO_TEST_NOT_FIRING", "uprobe,breakpoint-exec");
	in_child(all_child, "TACHO_TEST_NOT_FIRING", "all");
	in_child(bogus_child, "TACHO_TEST_NOT_FIRING", "page,fault,,page-faultss,ALL");
}

/* --- this boot's cache --- */

static char cache_file[4200];

static int cache_write_child(void)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };
	char *text = NULL;
	size_t len;

	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &p) || p.cached ||
	    p.verdict != TACHO_VERDICT_EXACT)
		return 1;
	if (tc_read_file(cache_file, &text, &len, 0))
		return 2;
	if (strncmp(text, "tacho-sources 1\nboot ", 21) || !strstr(text, "\npage-faults exact 64 64\n"))
		return 3;
	free(text);
	return 0;
}

static int cache_read_child(void)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };

	/* from the cache: no proof run, the same verdict and sentence */
	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &p) || !p.cached ||
	    p.verdict != TACHO_VERDICT_EXACT || p.counted != 64 || p.cost_us != 0)
		return 1;
	/* FRESH proves again */
	memset(&p, 0, sizeof(p));
	p.sz = sizeof(p);
	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, TACHO_PROVE_FRESH, &p) || p.cached)
		return 2;
	return 0;
}

static int cache_refused_child(void)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };

	/* the planted file is not believed: the proof runs */
	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &p) || p.cached ||
	    p.verdict != TACHO_VERDICT_EXACT)
		return 1;
	return 0;
}

static int cache_silent_child(void)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };

	/* a cached silent verdict is one the engine acts on, with the numbers' sentence */
	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &p) || !p.cached ||
	    p.verdict != TACHO_VERDICT_SILENT || !strstr(p.why, "0 of 64 first writes"))
		return 1;
	return 0;
}

static void plant(const char *text)
{
	int fd = open(cache_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_cache(void **state)
{
	char boot[64], dir[4100], text[512];
	struct utsname u;
	(void)state;

	if (getenv("TACHO_TEST_NOT_FIRING") && *getenv("TACHO_TEST_NOT_FIRING"))
		unsetenv("TACHO_TEST_NOT_FIRING");   /* the children prove for real */
	snprintf(dir, sizeof(dir), "%s", th_tmpdir());
	snprintf(cache_file, sizeof(cache_file), "%s/tacho/sources", dir);
	unlink(cache_file);
	in_child(cache_write_child, "XDG_CACHE_HOME", dir);
	in_child(cache_read_child, "XDG_CACHE_HOME", dir);

	assert_int_equal(tc_read_line_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)), 0);
	assert_int_equal(uname(&u), 0);
	/* another boot's file */
	plant("tacho-sources 1\nboot 00000000-0000-0000-0000-000000000000 6.0\n"
	      "page-faults silent 64 0\n");
	in_child(cache_refused_child, "XDG_CACHE_HOME", dir);
	/* this boot, but a verdict its numbers do not bear out */
	snprintf(text, sizeof(text), "tacho-sources 1\nboot %s %s\npage-faults silent 64 64\n",
		 boot, u.release);
	plant(text);
	in_child(cache_refused_child, "XDG_CACHE_HOME", dir);
	/* garbage */
	plant("tacho-sources 1\nboot \n\n\npage-faults\n");
	in_child(cache_refused_child, "XDG_CACHE_HOME", dir);
	/* this boot, numbers that agree with a verdict, but not the proof's numbers */
	snprintf(text, sizeof(text), "tacho-sources 1\nboot %s %s\npage-faults exact 3 3\n",
		 boot, u.release);
	plant(text);
	in_child(cache_refused_child, "XDG_CACHE_HOME", dir);
	/* this boot's silent verdict: believed (a real machine's cache says what its proof
	 * found) */
	snprintf(text, sizeof(text), "tacho-sources 1\nboot %s %s\npage-faults silent 64 0\n",
		 boot, u.release);
	plant(text);
	in_child(cache_silent_child, "XDG_CACHE_HOME", dir);
}

/* --- the engine: a silent source is never a number --- */

static int counting_child(void)
{
	struct perf_event_attr pf = { .size = sizeof(pf), .type = PERF_TYPE_SOFTWARE,
				      .config = PERF_COUNT_SW_PAGE_FAULTS, .exclude_kernel = 1 };
	struct tacho_counter_spec s = { "page-faults", &pf, TACHO_GROUP_NONE };
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
	struct tacho_counters *c;
	struct tacho_count v;
	char *p = th_pages_map(16);

	if (!p || tacho_counters_open(&o, &s, 1, sizeof(s), &c) || tacho_counters_opened(c) != 1)
		return 1;
	/* before any enable too (a task that has not run since the open): not a 0 */
	if (tacho_counters_read(c, &v, 1, sizeof(v)) || v.status != TACHO_COUNT_NOT_COUNTED ||
	    v.err != -TACHO_ESILENT)
		return 5;
	tacho_counters_enable(c);
	th_pages_touch(p, 16);
	tacho_counters_disable(c);
	if (tacho_counters_read(c, &v, 1, sizeof(v)))
		return 2;
	/* the kernel counted (raw, kept for who wants it); tacho shows no number */
	if (v.status != TACHO_COUNT_NOT_COUNTED || !isnan(v.value) || v.raw < 16)
		return 3;
	if (v.err != -TACHO_ESILENT || !v.why || !strstr(v.why, "TACHO_TEST_NOT_FIRING") ||
	    v.hint != TACHO_HINT_MACHINE || v.coverage != 0)
		return 4;
	tacho_counters_free(c);
	th_pages_unmap(p, 16);
	return 0;
}

static int regions_child(void)
{
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = "page-faults,context-switches",
					.no_report_at_exit = true };
	struct tacho_regions_report *r = NULL;
	const struct tacho_region_stat *st;
	const char *why = NULL;
	char *p = th_pages_map(8);

	if (!p || tacho_regions_init(&o, NULL))
		return 1;
	tacho_region_begin("work");
	th_pages_touch(p, 8);
	tacho_region_end("work");
	if (tacho_regions_report_new(&r) || !(st = tacho_regions_report_find(r, "work")))
		return 2;
	/* page-faults: not counted, with the proof's sentence; the other event counts */
	if (tacho_regions_report_status(r, 0, &why) != TACHO_COUNT_NOT_COUNTED || !why ||
	    !strstr(why, "TACHO_TEST_NOT_FIRING"))
		return 3;
	if (tacho_regions_report_status(r, 1, NULL) != TACHO_COUNT_COUNTED)
		return 4;
	if (st->calls != 1)
		return 5;
	tacho_regions_report_free(r);
	th_pages_unmap(p, 8);
	return 0;
}

/* A verdict whose reason passes is asked again: with no descriptor to spare the proof
 * cannot open its event; once there are, the next question proves the source. */
static int passing_reason_child(void)
{
	struct tacho_source_proof p = { .sz = sizeof(p) };
	struct rlimit rl, low;
	int fd = open("/dev/null", O_RDONLY);

	if (fd < 0 || getrlimit(RLIMIT_NOFILE, &rl))
		return 1;
	close(fd);
	tc_source_forget();     /* what the test process proved before the fork */
	low = rl;
	low.rlim_cur = (rlim_t)fd;      /* no descriptor left */
	if (setrlimit(RLIMIT_NOFILE, &low))
		return 2;
	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &p) ||
	    p.verdict != TACHO_VERDICT_NOT_OPEN || p.err != -EMFILE)
		return 3;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 4;
	memset(&p, 0, sizeof(p));
	p.sz = sizeof(p);
	if (tacho_source_prove(TACHO_SOURCE_PAGE_FAULTS, 0, &p) || p.verdict != TACHO_VERDICT_EXACT)
		return 5;
	return 0;
}

static void test_passing_reasons_are_asked_again(void **state)
{
	char dir[4100];
	(void)state;

	if (!th_source_exact(TACHO_SOURCE_PAGE_FAULTS, &(const char *){ NULL }))
		TEST_SKIP("page-faults do not count exactly here");
	/* an empty cache, so that the child proves */
	snprintf(dir, sizeof(dir), "%s", th_tmpdir());
	in_child(passing_reason_child, "XDG_CACHE_HOME", dir);
}

static void test_engine_never_shows_a_silent_count(void **state)
{
	(void)state;

	in_child(counting_child, "TACHO_TEST_NOT_FIRING", "page-faults");
	in_child(regions_child, "TACHO_TEST_NOT_FIRING", "page-faults");
}

/* Where this machine's breakpoints never fire, the real thing: a breakpoint opens, the
 * kernel reads 0 for its stores, and tacho says not counted. */
static volatile long watched;

static void test_real_silent_breakpoint(void **state)
{
	struct perf_event_attr bp = { .size = sizeof(bp), .type = PERF_TYPE_BREAKPOINT,
				      .bp_type = HW_BREAKPOINT_W, .bp_len = HW_BREAKPOINT_LEN_8,
				      .exclude_kernel = 1 };
	struct tacho_counter_spec s = { "mem:watched:w", &bp, TACHO_GROUP_NONE };
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
	struct tacho_source_proof p = { .sz = sizeof(p) };
	struct tacho_counters *c;
	struct tacho_count v;
	(void)state;

	assert_int_equal(tacho_source_prove(TACHO_SOURCE_BREAKPOINT_DATA, 0, &p), 0);
	if (p.verdict != TACHO_VERDICT_SILENT || p.forced)
		TEST_SKIP("this machine's data breakpoints are %s, not silent",
			  tacho_verdict_name(p.verdict));
	bp.bp_addr = (uintptr_t)&watched;
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), 0);
	assert_int_equal(tacho_counters_opened(c), 1);
	assert_int_equal(tacho_counters_enable(c), 0);
	for (long i = 0; i < 12345; i++)
		watched = i;
	assert_int_equal(tacho_counters_disable(c), 0);
	assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
	assert_int_equal(v.status, TACHO_COUNT_NOT_COUNTED);
	assert_int_equal(v.raw, 0);
	assert_true(isnan(v.value));
	assert_int_equal(v.err, -TACHO_ESILENT);
	assert_string_equal(v.why, p.why);
	assert_contains(v.why, "debug registers never fire");
	tacho_counters_free(c);
}

/* --- the hardware counters' checks: their statistics on synthetic samples, and what
 * they say where they cannot run --- */

static void test_skid_statistics(void **state)
{
	/* a loop of 32 one-byte NOPs at 0x1000, its DEC at 0x1020, its branch at 0x1023 */
	struct tc_skid s = { .top = 0x1000, .branch = 0x1023 };
	(void)state;

	assert_true(isnan(tc_skid_median(&s)));
	assert_true(isnan(tc_skid_within(&s, 1)));
	/* precise: on the branch, or on the top it goes to (one after) */
	for (int i = 0; i < 30; i++)
		tc_skid_add(&s, 0x1023);
	for (int i = 0; i < 50; i++)
		tc_skid_add(&s, 0x1000);
	/* skidded: some NOPs later, and the DEC (33 after the branch) */
	for (int i = 0; i < 15; i++)
		tc_skid_add(&s, 0x1005);
	for (int i = 0; i < 5; i++)
		tc_skid_add(&s, 0x1020);
	tc_skid_add(&s, 0x2000);     /* outside the loop: counted apart */
	assert_int_equal(s.n, 100);
	assert_int_equal(s.outside, 1);
	assert_int_equal(s.hist[0], 30);
	assert_int_equal(s.hist[1], 50);
	assert_int_equal(s.hist[6], 15);
	assert_int_equal(s.hist[33], 5);
	assert_true(tc_skid_median(&s) == 1);
	assert_true(tc_skid_within(&s, 1) == 0.8);
	assert_true(tc_skid_within(&s, 0) == 0.3);
	assert_true(tc_skid_within(&s, 63) == 1.0);
}

/* Where the PMU cannot be opened every check says it was skipped and why; where it
 * can, each ran and says what it saw, with the figures its row names. */
static void test_hardware_checks(void **state)
{
	struct tacho_check c[8];
	struct tacho_source_proof p = { .sz = sizeof(p) };
	int n;
	(void)state;

	n = tacho_machine_verify(c, 8, sizeof(c[0]));
	assert_int_equal(n, 4);
	assert_string_equal(c[0].key, "rdpmc");
	assert_string_equal(c[1].key, "multiplexing");
	assert_string_equal(c[2].key, "precise");
	assert_string_equal(c[3].key, "lbr");
	tacho_source_prove(TACHO_SOURCE_INSTRUCTIONS, 0, &p);
	for (int i = 0; i < n; i++) {
		print_message("%-12s %-8s %-14s %s\n", c[i].key, tacho_check_state_name(c[i].state),
			      c[i].value, c[i].text);
		assert_true(strlen(c[i].text) > 10);
		if (p.verdict == TACHO_VERDICT_NOT_OPEN && !p.forced) {
			/* no PMU: nothing ran, each says why (the open's explanation) */
			assert_int_equal(c[i].state, TACHO_CHECK_INFO);
			assert_string_equal(c[i].value, "skipped");
		}
	}
	assert_int_equal(tacho_machine_verify(c, 2, sizeof(c[0])), 4);   /* counts past max */
	assert_int_equal(tacho_machine_verify(c, 1, 8), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_source_of),
		cmocka_unit_test(test_prove_arguments),
		cmocka_unit_test(test_every_source_has_a_consistent_verdict),
		cmocka_unit_test(test_page_faults_proven),
		cmocka_unit_test(test_switch),
		cmocka_unit_test_setup_teardown(test_cache, th_tmpdir_setup, th_tmpdir_teardown),
		cmocka_unit_test(test_engine_never_shows_a_silent_count),
		cmocka_unit_test_setup_teardown(test_passing_reasons_are_asked_again,
						th_tmpdir_setup, th_tmpdir_teardown),
		cmocka_unit_test(test_real_silent_breakpoint),
		cmocka_unit_test(test_skid_statistics),
		cmocka_unit_test(test_hardware_checks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
