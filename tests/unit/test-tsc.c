/* test-tsc.c - the TSC module: frequency sources decoded from CPUID data, the kernel's
 * conversion, the live reads and the clock survey. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "cpu/cpuid.h"
#include "tsc/tsc.h"

struct leaf {
	uint32_t leaf, eax, ebx, ecx, edx;
};

#define MAXL 6
static const struct {
	int line;
	struct leaf leaves[MAXL];
	int err;
	double hz;
	enum tacho_tsc_source src;
} freq_cases[] = {
	/* Skylake-SP style: crystal 25 MHz enumerated, ratio 168/2 -> 2.1 GHz */
	{ __LINE__, { { 0, 0x16 }, { 0x15, 2, 168, 25000000 }, { 0x16, 2100 } }, 0, 2.1e9,
	  TACHO_TSC_FREQ_CPUID_15 },
	/* client part: 15h without the crystal, 16h base 3400 MHz, ratio 284/2; the
	 * crystal is a whole number of Hz (3400 MHz x 2 / 284 = 23943661), as in Linux */
	{ __LINE__, { { 0, 0x16 }, { 0x15, 2, 284, 0 }, { 0x16, 3400 } }, 0, 3399999862.0,
	  TACHO_TSC_FREQ_CPUID_15_16 },
	/* 15h ratio not enumerated (EBX 0): 16h alone */
	{ __LINE__, { { 0, 0x16 }, { 0x15, 2, 0, 24000000 }, { 0x16, 2600 } }, 0, 2.6e9,
	  TACHO_TSC_FREQ_CPUID_16 },
	/* Skylake client (Intel family 6 model 4Eh): 15h without the crystal, no 16h;
	 * the SDM's table says 24 MHz -> 24 MHz x 216 / 2 */
	{ __LINE__, { { 0, 0x15, 0x756e6547, 0x6c65746e, 0x49656e69 }, { 1, 0x000406e3 },
		      { 0x15, 2, 216, 0 } }, 0, 2.592e9, TACHO_TSC_FREQ_CPUID_15_TABLE },
	/* the hypervisor leaf beats 16h (VMware's signature "VMwareVMware") */
	{ __LINE__, { { 0, 0x16 }, { 0x16, 2600 },
		      { 0x40000000, 0x40000010, 0x61774d56, 0x4d566572, 0x65726177 },
		      { 0x40000010, 2596134 } }, 0, 2596134e3, TACHO_TSC_FREQ_HYPERVISOR },
	/* no signature in 4000_0000h: bare metal echoes a basic leaf there, so the range
	 * is not believed (the decoder's rule) and 16h stands */
	{ __LINE__, { { 0, 0x16 }, { 0x16, 2600 }, { 0x40000000, 0x40000010 },
		      { 0x40000010, 2596134 } }, 0, 2.6e9, TACHO_TSC_FREQ_CPUID_16 },
	/* hypervisor range too short to reach 4000_0010h: the stale value is ignored */
	{ __LINE__, { { 0, 0xd }, { 0x40000000, 0x40000001 }, { 0x40000010, 2596134 } },
	  -TACHO_ENOVALUE, 0, 0 },
	/* 15h present in the dump but above the maximum basic leaf: ignored */
	{ __LINE__, { { 0, 0x14 }, { 0x15, 2, 168, 25000000 } }, -TACHO_ENOVALUE, 0, 0 },
	/* AMD here: nothing */
	{ __LINE__, { { 0, 0x1c }, { 0x40000000, 0x40000001 } }, -TACHO_ENOVALUE, 0, 0 },
	/* 16h with only the upper bits of EAX set (reserved): no base frequency */
	{ __LINE__, { { 0, 0x16 }, { 0x16, 0xffff0000 } }, -TACHO_ENOVALUE, 0, 0 },
};

static void test_freq_cpuid(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(freq_cases); i++) {
		struct tacho_cpuid_dump *d = tc_cpuid_dump_new();
		double hz = -1;
		enum tacho_tsc_source src = TACHO_TSC_FREQ_UNKNOWN;

		assert_non_null(d);
		assert_int_equal(tc_cpuid_dump_add_cpu(d, 0), 0);
		for (int j = 0; j < MAXL; j++) {
			const struct leaf *l = &freq_cases[i].leaves[j];
			struct tacho_cpuid_regs r = { l->eax, l->ebx, l->ecx, l->edx };
			if (j > 0 && l->leaf == 0)
				break;
			assert_int_equal(tc_cpuid_dump_set(d, 0, l->leaf, 0, &r), 0);
		}
		assert_int_equal(tc_cpuid_dump_finish(d), 0);
		int err = tacho_tsc_freq_cpuid(d, 0, &hz, &src);
		if (err != freq_cases[i].err)
			fail_msg("case at line %d: err %d, want %d", freq_cases[i].line, err,
				 freq_cases[i].err);
		if (!err && (hz != freq_cases[i].hz || src != freq_cases[i].src))
			fail_msg("case at line %d: %.0f Hz from %s, want %.0f from %s",
				 freq_cases[i].line, hz, tacho_tsc_source_name(src),
				 freq_cases[i].hz, tacho_tsc_source_name(freq_cases[i].src));
		tacho_cpuid_dump_free(d);
	}
}

static void test_kernel_hz(void **state)
{
	(void)state;
	/* 2 GHz: ns = ticks / 2 = (ticks * 2^31) >> 32 */
	assert_true(tc_tsc_kernel_hz(1u << 31, 32) == 2e9);
	/* 1 GHz: mult 1, shift 0 */
	assert_true(tc_tsc_kernel_hz(1, 0) == 1e9);
	/* what Linux gives for a 2596.134 MHz TSC with shift 31: mult = 2^31 * 1e9 / hz */
	double hz = tc_tsc_kernel_hz(827185210u, 31);
	assert_true(hz > 2596.133e6 && hz < 2596.135e6);
	assert_true(tc_tsc_kernel_hz(0, 10) == 0);
	assert_true(tc_tsc_kernel_hz(5, 64) == 0);
}

static void test_source_names(void **state)
{
	(void)state;
	assert_string_equal(tacho_tsc_source_name(TACHO_TSC_FREQ_CPUID_15), "cpuid-15h");
	assert_string_equal(tacho_tsc_source_name(TACHO_TSC_FREQ_KERNEL), "kernel");
	assert_string_equal(tacho_tsc_source_name(TACHO_TSC_FREQ_CALIBRATED), "calibrated");
	assert_string_equal(tacho_tsc_source_name(TACHO_TSC_FREQ_CPUINFO), "cpuinfo");
	assert_string_equal(tacho_tsc_source_name((enum tacho_tsc_source)99), "unknown");
}

/* A guest's /proc/cpuinfo: "cpu MHz" is the kernel's tsc_khz only where the flags say
 * the kernel took it from the hypervisor (hypervisor, tsc_known_freq) and show no
 * measured rate (aperfmperf); only the first CPU's block counts. */
#define CPU0(flags, mhz) "processor\t: 0\nmodel name\t: AMD EPYC\ncpu MHz\t\t: " mhz \
	"\nflags\t\t: fpu tsc " flags " sse\n"
static void test_cpuinfo_hz(void **state)
{
	static const struct {
		int line;
		const char *text;
		double hz;
	} cases[] = {
		{ __LINE__, CPU0("hypervisor tsc_known_freq", "2096.021") "\n", 2096021000.0 },
		{ __LINE__, CPU0("tsc_known_freq hypervisor", "2096.021"), 2096021000.0 },
		{ __LINE__, CPU0("hypervisor tsc_known_freq", "3000.000"), 3000000000.0 },
		{ __LINE__, CPU0("tsc_known_freq", "2096.021"), 0 },        /* bare metal */
		{ __LINE__, CPU0("hypervisor", "2096.021"), 0 },            /* calibrated */
		{ __LINE__, CPU0("hypervisor tsc_known_freq aperfmperf", "2096.021"), 0 },
		{ __LINE__, CPU0("hypervisor tsc_known_freqx", "2096.021"), 0 },
		{ __LINE__, CPU0("xhypervisor tsc_known_freq", "2096.021"), 0 },
		{ __LINE__, CPU0("hypervisor tsc_known_freq", "2096.02"), 0 },
		{ __LINE__, CPU0("hypervisor tsc_known_freq", "2096.0211"), 0 },
		{ __LINE__, CPU0("hypervisor tsc_known_freq", "2096"), 0 },
		{ __LINE__, CPU0("hypervisor tsc_known_freq", "-1.000"), 0 },
		{ __LINE__, CPU0("hypervisor tsc_known_freq", ""), 0 },
		{ __LINE__, CPU0("hypervisor tsc_known_freq", "99999999999999999999.000"), 0 },
		/* the flags of the second CPU's block do not vouch for the first's */
		{ __LINE__, "processor\t: 0\ncpu MHz\t\t: 2096.021\n\nprocessor\t: 1\n"
			    "flags\t\t: hypervisor tsc_known_freq\n", 0 },
		{ __LINE__, "", 0 },
		/* util's reader takes the first block whatever its first line */
		{ __LINE__, "flags : hypervisor tsc_known_freq\ncpu MHz : 1.000\n", 1e6 },
		{ __LINE__, "flags : hypervisor tsc_known_freq\ncpu MHz : 1.000 x\n", 0 },
		{ __LINE__, "flags : hypervisor tsc_known_freq\ncpu MHz : .500\n", 0 },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		double hz = tc_tsc_cpuinfo_hz(cases[i].text, strlen(cases[i].text));
		if (hz != cases[i].hz)
			fail_msg("line %d: %.17g, want %.17g", cases[i].line, hz, cases[i].hz);
	}
}

static void test_live_info(void **state)
{
	struct tacho_tsc_info ti = { .sz = sizeof(ti) };
	(void)state;

#if !defined(__x86_64__) && !defined(__i386__)
	TEST_SKIP("not x86: no TSC");
#endif
	assert_int_equal(tacho_tsc_info(&ti), 0);
	assert_true(ti.present);
	assert_true(ti.hz > 0);
	assert_int_not_equal(ti.source, TACHO_TSC_FREQ_UNKNOWN);
	/* the calibration runs only as the last source */
	assert_int_equal(ti.calibrated_hz > 0, ti.source == TACHO_TSC_FREQ_CALIBRATED);
	/* the kernel's figure is there exactly when the page offered cap_user_time */
	assert_int_equal(ti.kernel_time, ti.kernel_hz > 0);
	if (ti.source == TACHO_TSC_FREQ_KERNEL)
		assert_true(ti.hz == ti.kernel_hz);
	if (ti.source == TACHO_TSC_FREQ_CALIBRATED)
		assert_true(ti.hz == ti.calibrated_hz && ti.cpuid_hz == 0 && !ti.kernel_time);
	/* this machine (a KVM guest, kvm-clock: no cap_user_time) gives it through
	 * /proc/cpuinfo: the figure is the file's, to the kHz */
	if (ti.source == TACHO_TSC_FREQ_CPUINFO) {
		char *text = NULL;
		size_t len = 0;

		assert_false(ti.kernel_time);
		assert_int_equal(tc_read_file("/proc/cpuinfo", &text, &len, 0), 0);
		assert_true(ti.hz == tc_tsc_cpuinfo_hz(text, len));
		assert_true(ti.hz == (double)(uint64_t)(ti.hz / 1000) * 1000);
		free(text);
	}
	/* the pair cost is a median of positive differences */
	assert_true(ti.pair_ticks > 0);
	assert_true(ti.pair_ns > 0);
	/* conversion: hz ticks are one second */
	double ns = tacho_tsc_to_ns((uint64_t)ti.hz);
	assert_true(ns > 1e9 - 1 && ns < 1e9 + 1);
	assert_true(tacho_tsc_to_ns(0) == 0);
	/* a second call gives the cached figures */
	struct tacho_tsc_info again = { .sz = sizeof(again) };
	tacho_tsc_info(&again);
	assert_memory_equal(&ti, &again, sizeof(ti));

	/* sized: a newer caller's larger struct gets this version's fields, the rest
	 * untouched; one below the first version is refused, untouched */
	struct {
		struct tacho_tsc_info ti;
		uint64_t future;
	} newer = { .ti.sz = sizeof(newer), .future = 0x5eed };
	assert_int_equal(tacho_tsc_info(&newer.ti), 0);
	assert_int_equal(newer.ti.sz, sizeof(newer));
	assert_true(newer.ti.hz == ti.hz && newer.ti.pair_ns == ti.pair_ns);
	assert_int_equal(newer.future, 0x5eed);
	struct tacho_tsc_info small = { .sz = offsetof(struct tacho_tsc_info, pair_ns) };
	assert_int_equal(tacho_tsc_info(&small), -EINVAL);
	assert_true(small.hz == 0);
	assert_int_equal(tacho_tsc_info(NULL), -EINVAL);

	/* once measured, the quick form copies the same figures */
	struct tacho_tsc_info quick = { .sz = sizeof(quick) };
	assert_int_equal(tacho_tsc_info_quick(&quick), 0);
	assert_memory_equal(&ti, &quick, sizeof(ti));
	assert_int_equal(tacho_tsc_info_quick(&small), -EINVAL);
	assert_int_equal(tacho_tsc_info_quick(NULL), -EINVAL);
}

/* Before any measurement (this test runs before test_live_info, in the same process):
 * CPUID's facts and the free sources only, nothing from a perf event or a sleep. */
static void test_quick_info(void **state)
{
	struct tacho_tsc_info ti = { .sz = sizeof(ti) };
	(void)state;

#if !defined(__x86_64__) && !defined(__i386__)
	TEST_SKIP("not x86: no TSC");
#endif
	assert_int_equal(tacho_tsc_info_quick(&ti), 0);
	assert_true(ti.present);
	assert_true(ti.pair_ticks > 0);
	/* no perf event was opened, no calibration ran */
	assert_false(ti.kernel_time);
	assert_true(ti.kernel_hz == 0 && ti.time_mult == 0 && ti.calibrated_hz == 0);
	switch (ti.source) {
	case TACHO_TSC_FREQ_CPUID_15:
	case TACHO_TSC_FREQ_CPUID_15_TABLE:
	case TACHO_TSC_FREQ_CPUID_15_16:
	case TACHO_TSC_FREQ_HYPERVISOR:
		assert_true(ti.hz > 0 && ti.hz == ti.cpuid_hz && ti.pair_ns > 0);
		break;
	case TACHO_TSC_FREQ_SYSFS:
		assert_true(ti.hz > 0 && ti.pair_ns > 0);
		break;
	case TACHO_TSC_FREQ_UNKNOWN:
		/* this machine's case: an AMD guest without leaf 4000_0010h */
		assert_true(ti.hz == 0 && ti.pair_ns == 0);
		break;
	default:
		fail_msg("the quick form gave source %s, which costs a measurement",
			 tacho_tsc_source_name(ti.source));
	}
}

/* An invariant TSC read on one thread never goes backwards, through any of the four
 * reads, taken in turns many times over (a fence missing from a read would let it run
 * ahead of the one before it, which this can catch where the CPU reorders). */
static void test_reads_ordered(void **state)
{
	uint64_t prev = 0;
	(void)state;
#if !defined(__x86_64__) && !defined(__i386__)
	TEST_SKIP("not x86: no TSC");
#endif
	for (int i = 0; i < 10000; i++) {
		uint64_t v[4] = { tacho_tsc_begin(), tacho_tsc_end(), tacho_tsc_read_begin(),
				  tacho_tsc_read_end() };
		for (int k = 0; k < 4; k++) {
			if (v[k] < prev)
				fail_msg("round %d, read %d: %llu after %llu", i, k,
					 (unsigned long long)v[k], (unsigned long long)prev);
			prev = v[k];
		}
	}
}

/* No RDTSCP (nor RDPID) anywhere in the library: a CPU whose CPUID does not announce it,
 * and valgrind on such a host, stop there with SIGILL (docs/lib-tsc.md). Every read is
 * `lfence; rdtsc` or `lfence; rdtsc; lfence`: the disassembly of libtacho.a, beside which
 * this test was built, holds the fenced end read and no RDTSCP. */
static void test_no_rdtscp(void **state)
{
	char lib[4096];
	struct th_run r;
	(void)state;
#if !defined(__x86_64__) && !defined(__i386__)
	TEST_SKIP("not x86: no TSC");
#endif
	snprintf(lib, sizeof(lib), "%s/libtacho.a", th_build_dir());
	if (access(lib, R_OK))
		TEST_SKIP("no %s to disassemble", lib);
	char *argv[] = { (char *)"objdump", (char *)"-d", (char *)"--no-show-raw-insn", lib,
			 NULL };
	th_runv(&r, NULL, argv);
	if (r.status == 127) {
		th_run_free(&r);
		TEST_SKIP("objdump is not installed (Debian package binutils)");
	}
	assert_int_equal(r.status, 0);
	/* (the disassembly is megabytes: name the function, not the whole text) */
	assert_non_null(strstr(r.out, "lfence\n"));
	assert_non_null(strstr(r.out, "rdtsc\n"));
	for (const char *const *m = (const char *const[]){ "rdtscp", "rdpid", NULL }; *m; m++) {
		const char *at = strstr(r.out, *m), *fn = at;
		while (fn && fn > r.out && !(fn[0] == '<' && fn[-1] == ' ' && fn[-2] != '\t'))
			fn--;
		if (at)
			fail_msg("%s in libtacho.a, in %.*s", *m, (int)strcspn(fn, "\n"), fn);
	}
	th_run_free(&r);
}

static void test_clock_survey(void **state)
{
	static const char *const names[] = {
		"tsc", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW", "CLOCK_MONOTONIC_COARSE",
		"CLOCK_REALTIME", "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID",
	};
	struct tacho_clock_info c[TACHO_CLOCK_SURVEY_MAX];
	struct timespec res;
	(void)state;

	assert_int_equal(tacho_clock_survey(c, TACHO_CLOCK_SURVEY_MAX, sizeof(*c)), 7);
	for (size_t i = 0; i < 7; i++) {
		assert_string_equal(c[i].name, names[i]);
		if (c[i].err)
			fail_msg("%s: %s", c[i].name, tacho_strerror(c[i].err));
		assert_true(c[i].resolution_ns > 0);
		assert_true(c[i].read_ns >= 0);
		if (c[i].clock_id >= 0) {
			assert_int_equal(clock_getres(c[i].clock_id, &res), 0);
			assert_true(c[i].resolution_ns == res.tv_sec * 1e9 + res.tv_nsec);
		}
	}
	assert_int_equal(c[0].clock_id, -1);
	/* a short array is filled as far as it goes */
	assert_int_equal(tacho_clock_survey(c, 2, sizeof(*c)), 2);
	assert_string_equal(c[1].name, "CLOCK_MONOTONIC");
	assert_int_equal(tacho_clock_survey(c, 0, sizeof(*c)), 0);

	/* the caller's element size: a newer header's larger entries at their stride */
	struct {
		struct tacho_clock_info c;
		int future;
	} newer[3] = { [0].future = 11, [1].future = 12, [2].future = 13 };
	assert_int_equal(tacho_clock_survey(&newer[0].c, 3, sizeof(newer[0])), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(newer[i].c.name, names[i]);
		assert_int_equal(newer[i].future, 11 + (int)i);
	}
	assert_int_equal(tacho_clock_survey(c, 2, offsetof(struct tacho_clock_info, read_ns)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freq_cpuid),  cmocka_unit_test(test_kernel_hz),
		cmocka_unit_test(test_source_names), cmocka_unit_test(test_quick_info),
		cmocka_unit_test(test_live_info), cmocka_unit_test(test_cpuinfo_hz),
		cmocka_unit_test(test_reads_ordered), cmocka_unit_test(test_no_rdtscp),
		cmocka_unit_test(test_clock_survey),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
