/* tsc.c - the time-stamp counter: fenced reads, invariance, the frequency and where it
 * came from, and the cost of a begin/end pair. Never executes CPUID in a loop: in a VM
 * each CPUID is an exit to the hypervisor (~7 us here). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu/cpuid.h"
#include "perf/engine.h"
#include "tsc/tsc.h"
#include "tacho/cpu.h"
#include "tacho/errors.h"
#include "tacho/tsc.h"

#if defined(__x86_64__) || defined(__i386__)
#define TC_X86 1
#else
#define TC_X86 0
#endif

uint64_t tc_mono_raw_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tacho_tsc_read_begin(void)
{
#if TC_X86
	return tacho_tsc_begin();
#else
	return tc_mono_raw_ns();
#endif
}

uint64_t tacho_tsc_read_end(void)
{
#if TC_X86
	return tacho_tsc_end();
#else
	return tc_mono_raw_ns();
#endif
}

double tc_tsc_kernel_hz(uint32_t time_mult, uint16_t time_shift)
{
	if (time_mult == 0 || time_shift >= 64)
		return 0;
	/* ns = (ticks * mult) >> shift, so one second is 1e9 * 2^shift / mult ticks */
	return 1e9 * (double)((uint64_t)1 << time_shift) / (double)time_mult;
}

int tacho_tsc_freq_cpuid(const struct tacho_cpuid_dump *dump, unsigned idx, double *hz,
			 enum tacho_tsc_source *src)
{
	struct tacho_cpu_info ci = { .sz = sizeof(ci) };
	int err;

	/* The decoder (lib/cpu/tsc.c) is the one reader of leaves 15h, 16h and 4000_0010h
	 * and of the SDM's table of crystal frequencies, in the order of trust documented
	 * at enum tacho_tsc_source; it reads the first CPU of a dump. */
	if (idx != 0)
		return -EINVAL;
	err = tacho_cpu_decode(dump, &ci);
	if (err)
		return err;
	*hz = (double)ci.tsc.hz;
	*src = ci.tsc.hz ? ci.tsc.source : TACHO_TSC_FREQ_UNKNOWN;
	tacho_cpu_info_exit(&ci);
	return *hz > 0 ? 0 : -TACHO_ENOVALUE;
}

/* Copies the few leaves the TSC needs into a small dump, so that the live path and
 * the dump path share tacho_tsc_freq_cpuid. One CPUID per leaf, once. */
static struct tacho_cpuid_dump *live_leaves(void)
{
	static const uint32_t leaves[] = { 0x0, 0x1, 0x15, 0x16, 0x40000000, 0x40000010,
					   0x80000000, 0x80000001, 0x80000007 };
	struct tacho_cpuid_dump *d = tc_cpuid_dump_new();
	struct tacho_cpuid_regs r;

	if (!d || tc_cpuid_dump_add_cpu(d, -1) < 0)
		goto out_free;
	for (size_t i = 0; i < ARRAY_SIZE(leaves); i++) {
		if (!tc_cpuid_exec(leaves[i], 0, &r))
			goto out_free;
		if (tc_cpuid_dump_set(d, 0, leaves[i], 0, &r))
			goto out_free;
	}
	if (tc_cpuid_dump_finish(d))
		goto out_free;
	return d;
out_free:
	tacho_cpuid_dump_free(d);
	return NULL;
}

/* The kernel's TSC->ns conversion, from the mmap page of a dummy software event on
 * this task (perf_event_paranoid 2 allows it: user-only, own task), through the
 * engine's probe. */
static void kernel_conversion(struct tacho_tsc_info *ti)
{
	struct perf_event_attr attr;
	struct tc_perf_page_info pg;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	err = tc_perf_probe(&attr, &pg);
	if (err) {
		tc_log(TACHO_LOG_DEBUG, "tsc: no perf event page for the kernel's TSC rate: %s",
		       tacho_strerror(err));
		return;
	}
	ti->kernel_time = pg.cap_user_time;
	ti->time_mult = pg.time_mult;
	ti->time_shift = pg.time_shift;
	ti->kernel_time_zero = pg.cap_user_time_zero;
	ti->time_zero = pg.time_zero;
	if (ti->kernel_time)
		ti->kernel_hz = tc_tsc_kernel_hz(ti->time_mult, ti->time_shift);
}

/* One end of a calibration against CLOCK_MONOTONIC_RAW (not NTP-slewed). Each end is
 * bracketed by two TSC reads and the tightest bracket of a few kept, so a preemption
 * between the two reads does not skew the result. */
static uint64_t bracketed_clock_ns(uint64_t *tsc)
{
	uint64_t best = UINT64_MAX, ns = 0;

	for (int i = 0; i < 5; i++) {
		uint64_t a = tacho_tsc_begin(), n = tc_mono_raw_ns(), b = tacho_tsc_begin();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			ns = n;
		}
	}
	return ns;
}

/* 5 ms: the last resort's sleep, where a process ran less than that since its first
 * look at the TSC. Each end is known to half the tightest bracket of two TSC reads
 * around clock_gettime (tens of ns here), so 5 ms leaves an error of 1e-5 or less. */
#define CALIBRATION_NS (5 * 1000 * 1000ull)

/* The rate between the first end, taken at the first use (n0, t0), and now: at least
 * CALIBRATION_NS apart, slept for only when the process has not run that long since. So a
 * program that uses regions pays the calibration at its first report, seldom at all,
 * and never in its first tacho_region_begin. */
static double calibrate_since(uint64_t t0, uint64_t n0)
{
	uint64_t t1 = 0, n1;

	if (!n0)
		return 0;
	n1 = bracketed_clock_ns(&t1);
	if (n1 > n0 && n1 - n0 < CALIBRATION_NS) {
		uint64_t left = CALIBRATION_NS - (n1 - n0);
		struct timespec ts = { (time_t)(left / 1000000000ull),
				       (long)(left % 1000000000ull) };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		n1 = bracketed_clock_ns(&t1);
	}
	if (n1 <= n0 || t1 <= t0)
		return 0;
	return (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
}

/* The kernel's own tsc_khz, where the kernel publishes it in sysfs (not in upstream
 * Linux: some distributions' kernels carry the file). Free to read, no perf event. */
static double sysfs_tsc_hz(void)
{
	char line[64];
	uint64_t khz;

	if (tc_read_line_file("/sys/devices/system/cpu/cpu0/tsc_freq_khz", line,
			      sizeof(line)) < 0 || tc_parse_u64(line, &khz) || !khz)
		return 0;
	return (double)khz * 1000;
}

double tc_tsc_cpuinfo_hz(const char *text, size_t len)
{
	char *mhz;
	const char *p;
	uint64_t whole = 0, frac = 0;
	int digits = 0;

	/* x86's show_cpuinfo prints cpu_khz where no APERF/MPERF gives a measured rate
	 * (and no cpufreq driver, which a guest lacks); a guest's kernel that took its
	 * TSC rate from the hypervisor (kvmclock, VMware, Hyper-V: tsc_known_freq) set
	 * cpu_khz from the same call as tsc_khz */
	if (!tc_cpuinfo_has_flag(text, len, "hypervisor") ||
	    !tc_cpuinfo_has_flag(text, len, "tsc_known_freq") ||
	    tc_cpuinfo_has_flag(text, len, "aperfmperf"))
		return 0;
	mhz = tc_cpuinfo_field(text, len, "cpu MHz");
	if (!mhz)
		return 0;
	for (p = mhz; *p >= '0' && *p <= '9' && whole < 1000000; p++)
		whole = whole * 10 + (uint64_t)(*p - '0');
	if (p > mhz && *p == '.')
		for (p++; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
			frac = frac * 10 + (uint64_t)(*p - '0');
	/* "%u.%03u" of kHz: digits, a point, three digits, and nothing after */
	if (digits != 3 || *p || whole >= 1000000) {
		free(mhz);
		return 0;
	}
	free(mhz);
	return (double)(whole * 1000 + frac) * 1000;
}

/* The guest kernel's tsc_khz through /proc/cpuinfo (tc_tsc_cpuinfo_hz, through util's
 * one reader of the file): a file read, no perf event, no sleep. */
static double cpuinfo_tsc_hz(void)
{
	char *text = NULL;
	size_t len = 0;
	double hz;

	if (tc_cpuinfo_read(NULL, &text, &len))
		return 0;
	hz = tc_tsc_cpuinfo_hz(text, len);
	free(text);
	return hz;
}

#define PAIR_SAMPLES 2001

static double pair_cost(void)
{
	static uint64_t d[PAIR_SAMPLES];   /* only called under pthread_once */

	for (int i = 0; i < PAIR_SAMPLES; i++) {
		uint64_t a = tacho_tsc_begin();
		uint64_t b = tacho_tsc_end();
		d[i] = b - a;
	}
	/* the median of an odd count: rank n / 2 (a selection, not a sort: a sort of
	 * the 2001 took a third of tacho cpu's instructions) */
	return (double)tc_stats_select_u64(d, PAIR_SAMPLES, PAIR_SAMPLES / 2);
}

static struct tacho_tsc_info info;
static int info_err;
static pthread_once_t early_once = PTHREAD_ONCE_INIT;
static pthread_once_t info_once = PTHREAD_ONCE_INIT;
/* set by early_init when no free source gave the frequency: the calibration's start */
static bool early_hz;
static uint64_t cal_tsc0, cal_ns0;

/* What costs no perf event and no sleep (well under a millisecond): CPUID's facts, the
 * frequency where CPUID 15h, the hypervisor's leaf or the kernel's sysfs file gives it,
 * the pair cost, and the first end of a calibration otherwise. */
static void early_init(void)
{
	struct tacho_tsc_info *ti = &info;
	struct tacho_cpuid_dump *d;
	struct tacho_cpuid_regs r;
	enum tacho_tsc_source src = TACHO_TSC_FREQ_UNKNOWN;
	double hz = 0, sys_hz;

	ti->sz = sizeof(*ti);
	if (!TC_X86) {
		info_err = -TACHO_ENOTX86;
		return;
	}
	d = live_leaves();
	if (!d) {
		info_err = -TACHO_ENOTX86;
		return;
	}
	if (tacho_cpuid_query(d, 0, 1, 0, &r) == 0) {
		ti->present = r.edx >> 4 & 1;
		ti->hypervisor = r.ecx >> 31 & 1;
	}
	if (tacho_cpuid_query(d, 0, 0x80000001, 0, &r) == 0)
		ti->rdtscp = r.edx >> 27 & 1;
	if (tacho_cpuid_query(d, 0, 0x80000007, 0, &r) == 0)
		ti->invariant = r.edx >> 8 & 1;
	if (tacho_tsc_freq_cpuid(d, 0, &hz, &src) == 0)
		ti->cpuid_hz = hz;
	tacho_cpuid_dump_free(d);
	if (!ti->present) {
		info_err = -ENODEV;
		return;
	}
	if (!ti->invariant)
		tc_log(TACHO_LOG_WARN, "tsc: not invariant (CPUID.8000_0007h:EDX[8] clear): "
		       "its rate may follow the core clock");
	ti->pair_ticks = pair_cost();

	/* Order of trust, the free sources first: CPUID 15h (exact by definition), the
	 * hypervisor's word (the host's own figure), the kernel's tsc_khz in sysfs where
	 * published (calibrated at boot against a reference clock, or taken from 15h).
	 * The rest (the perf page, 16h, our calibration) wait for the first use of the
	 * frequency: info_init. */
	if (src == TACHO_TSC_FREQ_CPUID_15 || src == TACHO_TSC_FREQ_CPUID_15_TABLE ||
	    src == TACHO_TSC_FREQ_CPUID_15_16 || src == TACHO_TSC_FREQ_HYPERVISOR) {
		ti->hz = hz;
		ti->source = src;
	} else if ((sys_hz = sysfs_tsc_hz()) > 0) {
		ti->hz = sys_hz;
		ti->source = TACHO_TSC_FREQ_SYSFS;
	} else {
		/* (CPUID 16h's figure, in cpuid_hz, waits: the kernel comes before it) */
		cal_ns0 = bracketed_clock_ns(&cal_tsc0);
	}
	early_hz = ti->hz > 0;
	if (early_hz)
		ti->pair_ns = ti->pair_ticks * 1e9 / ti->hz;
}

static void info_init(void)
{
	struct tacho_tsc_info *ti = &info;
	double hz = ti->cpuid_hz, sys_hz;

	pthread_once(&early_once, early_init);
	if (info_err)
		return;
	/* the kernel's conversion (the exact clock of trace's marks) whatever gave the
	 * frequency: one perf event, no sleep */
	kernel_conversion(ti);
	if (early_hz)
		return;
	/* then the kernel's perf page, a guest kernel's tsc_khz from /proc/cpuinfo,
	 * 16h alone (a nominal base frequency, which the TSC matches on Intel parts but
	 * is not defined to), and last our own calibration, over CALIBRATION_NS since
	 * early_init at least */
	if (ti->kernel_hz > 0) {
		ti->hz = ti->kernel_hz;
		ti->source = TACHO_TSC_FREQ_KERNEL;
	} else if ((sys_hz = cpuinfo_tsc_hz()) > 0) {
		ti->hz = sys_hz;
		ti->source = TACHO_TSC_FREQ_CPUINFO;
	} else if (hz > 0) {
		ti->hz = hz;
		ti->source = TACHO_TSC_FREQ_CPUID_16;
	} else {
		ti->calibrated_hz = calibrate_since(cal_tsc0, cal_ns0);
		if (ti->calibrated_hz > 0) {
			ti->hz = ti->calibrated_hz;
			ti->source = TACHO_TSC_FREQ_CALIBRATED;
		}
	}
	ti->pair_ns = ti->hz > 0 ? ti->pair_ticks * 1e9 / ti->hz : 0;
}

const struct tacho_tsc_info *tc_tsc_early(void)
{
	pthread_once(&early_once, early_init);
	return &info;
}

const struct tacho_tsc_info *tc_tsc_info(void)
{
	pthread_once(&info_once, info_init);
	return &info;
}

/* The first version of struct tacho_tsc_info ends at pair_ns. */
#define TSC_INFO_SZ_V1 tc_offsetofend(struct tacho_tsc_info, pair_ns)

int tacho_tsc_info(struct tacho_tsc_info *out)
{
	if (!out || out->sz < TSC_INFO_SZ_V1)
		return -EINVAL;
	tc_sized_put_sz(out, tc_tsc_info(), sizeof(struct tacho_tsc_info));
	return info_err;
}

int tacho_tsc_info_quick(struct tacho_tsc_info *out)
{
	if (!out || out->sz < TSC_INFO_SZ_V1)
		return -EINVAL;
	tc_sized_put_sz(out, tc_tsc_early(), sizeof(struct tacho_tsc_info));
	return info_err;
}

double tacho_tsc_to_ns(uint64_t ticks)
{
	const struct tacho_tsc_info *ti = tc_tsc_info();

	return ti->hz > 0 ? (double)ticks * 1e9 / ti->hz : 0;
}
