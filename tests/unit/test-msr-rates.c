/* test-msr-rates.c - frequency and power derived from two reads of a fake tree: the wait
 * hook between the reads moves the fake counters by known amounts and says how long it
 * "waited", so the results are exact without real time: busy and average MHz, C0, watts
 * per RAPL domain (Intel and AMD units), a 32-bit energy counter that wraps, a halted CPU,
 * a domain the part lacks, no time at all, and a CPU without a device. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "msr-fake.h"
#include "msr/msr.h"

static const struct tacho_msr_cpu skylake = { TACHO_VENDOR_INTEL, 6, 0x55, false };
static const struct tacho_msr_cpu zen3 = { TACHO_VENDOR_AMD, 0x19, 1, false };
static const struct tacho_msr_cpu via = { TACHO_VENDOR_VIA, 6, 0xf, false };

/* What the hook adds to each register of each CPU, and the time it reports. */
struct move {
	const struct th_msr_fake *f;
	int ncpus;
	struct {
		uint32_t address;
		uint64_t delta[2];
	} regs[8];
	unsigned nregs;
	uint64_t ns;
	unsigned calls, ms;
};

static uint64_t wait_hook(void *arg, unsigned ms)
{
	struct move *mv = arg;

	mv->calls++;
	mv->ms = ms;
	for (int c = 0; c < mv->ncpus; c++)
		for (unsigned r = 0; r < mv->nregs; r++) {
			uint32_t a = mv->regs[r].address;
			uint64_t v = th_msr_peek(mv->f, c, a) + mv->regs[r].delta[c];
			/* the energy counters are 32 bits wide: they wrap there */
			if (a == 0x611 || a == 0x639 || a == 0x641 || a == 0x619 || a == 0xc001029a ||
			    a == 0xc001029b)
				v &= 0xffffffffull;
			th_msr_poke(mv->f, c, a, v);
		}
	return mv->ns;
}

static struct tacho_msr_dev *dev_on(const struct th_msr_fake *f, const struct tacho_msr_cpu *cpu,
				    struct move *mv)
{
	struct tacho_msr_opts o = { .sz = sizeof(o), .device_dir = f->dir, .cpu = cpu,
				    .wait = wait_hook, .wait_arg = mv };
	struct tacho_msr_dev *dev;

	assert_int_equal(tacho_msr_dev_new(&o, &dev), 0);
	return dev;
}

static void test_intel(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	struct tacho_msr_rates *r;
	struct tacho_msr_rate x = { .sz = sizeof(x) };
	const int cpus[] = { 0, 1 };
	struct move mv = {
		.f = &f, .ncpus = 2, .ns = 500000000,   /* half a second */
		.regs = {
			/* CPU 0: 2.4 GHz TSC, half the time running, at 3.6 GHz then;
			 * CPU 1 halted throughout (MPERF and APERF stand still) */
			{ 0x10, { 1200000000, 1200000000 } },
			{ 0xe7, { 600000000, 0 } },
			{ 0xe8, { 900000000, 0 } },
			/* 65 J and 40 J in 1/2^14 J units */
			{ 0x611, { 65ull << 14, 65ull << 14 } },
			{ 0x639, { 40ull << 14, 40ull << 14 } },
			{ 0x619, { 3ull << 14, 3ull << 14 } },
		},
		.nregs = 6,
	};
	(void)state;

	/* PP1 (0x641) lies past the files: this part has no graphics domain */
	th_msr_fake_new(&f, 2, 0x641);
	for (int c = 0; c < 2; c++) {
		th_msr_poke(&f, c, 0x10, 1000);
		th_msr_poke(&f, c, 0xe7, 77);
		th_msr_poke(&f, c, 0xe8, 88);
		th_msr_poke(&f, c, 0x606, 0xa0e03);
		/* the package counter wraps during the interval */
		th_msr_poke(&f, c, 0x611, 0xfffff000);
	}
	dev = dev_on(&f, &skylake, &mv);
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 2, 500,
						 TACHO_MSR_RATE_FREQ | TACHO_MSR_RATE_POWER, &r), 0);
	assert_int_equal(mv.calls, 1);
	assert_int_equal(mv.ms, 500);
	assert_int_equal(tacho_msr_rates_count(r), 2);

	assert_int_equal(tacho_msr_rates_get(r, 0, &x), 0);
	assert_int_equal(x.cpu, 0);
	assert_true(x.seconds == 0.5);
	assert_true(x.tsc_mhz == 2400.0);
	assert_true(x.busy_mhz == 3600.0);
	assert_true(x.avg_mhz == 1800.0);
	assert_true(x.c0_pct == 50.0);
	assert_int_equal(x.freq_err, 0);
	assert_null(x.freq_why);
	assert_true(x.energy_unit_j == 1.0 / 16384);
	assert_true(x.package_w == 130.0);
	assert_true(x.pp0_w == 80.0);
	assert_true(x.dram_w == 6.0);
	assert_true(isnan(x.pp1_w));
	assert_true(isnan(x.core_w));
	assert_int_equal(x.power_err, 0);

	/* the halted CPU: no running frequency, 0 % in C0, an average of 0 MHz */
	assert_int_equal(tacho_msr_rates_get(r, 1, &x), 0);
	assert_true(x.tsc_mhz == 2400.0);
	assert_true(isnan(x.busy_mhz));
	assert_true(x.avg_mhz == 0.0);
	assert_true(x.c0_pct == 0.0);
	assert_int_equal(x.freq_err, -TACHO_ENOVALUE);
	assert_string_equal(x.freq_why, "MPERF did not advance: the CPU was halted the whole "
			    "interval, so it had no running frequency");
	assert_true(x.package_w == 130.0);
	assert_int_equal(tacho_msr_rates_get(r, 2, &x), -EINVAL);
	/* a struct shorter than the first version is refused and left as it was */
	x.sz = offsetof(struct tacho_msr_rate, power_why);
	x.cpu = 77;
	assert_int_equal(tacho_msr_rates_get(r, 0, &x), -EINVAL);
	assert_int_equal(x.cpu, 77);
	x.sz = sizeof(x);
	tacho_msr_rates_free(r);

	/* nothing moves and no time passes */
	mv.nregs = 0;
	mv.ns = 0;
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 1, 1,
						 TACHO_MSR_RATE_FREQ | TACHO_MSR_RATE_POWER, &r), 0);
	assert_int_equal(tacho_msr_rates_get(r, 0, &x), 0);
	assert_int_equal(x.freq_err, -TACHO_ENOVALUE);
	assert_string_equal(x.freq_why, "no time passed between the reads");
	assert_int_equal(x.power_err, -TACHO_ENOVALUE);
	assert_true(isnan(x.package_w));
	tacho_msr_rates_free(r);
	/* time passes, the TSC stands: a fake, or a stopped clock */
	mv.ns = 1000000;
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 1, 1, TACHO_MSR_RATE_FREQ, &r), 0);
	assert_int_equal(tacho_msr_rates_get(r, 0, &x), 0);
	assert_int_equal(x.freq_err, -TACHO_ENOVALUE);
	assert_string_equal(x.freq_why, "the TSC did not advance over the interval (a fake device, "
			    "or a stopped clock)");
	assert_true(isnan(x.tsc_mhz));
	/* power was not asked: no value, no error */
	assert_int_equal(x.power_err, 0);
	assert_true(isnan(x.package_w));
	tacho_msr_rates_free(r);

	/* a CPU without a device: the reason, and the others still measured */
	{
		const int three[] = { 0, 5 };
		char want[256];
		mv.ncpus = 1;
		mv.nregs = 1;
		mv.regs[0].address = 0x10;
		mv.regs[0].delta[0] = 1000;
		assert_int_equal(tacho_msr_rates_measure(dev, three, 2, 1, TACHO_MSR_RATE_FREQ |
							 TACHO_MSR_RATE_POWER, &r), 0);
		assert_int_equal(tacho_msr_rates_get(r, 1, &x), 0);
		assert_int_equal(x.freq_err, -ENOENT);
		snprintf(want, sizeof(want), "no %s/5/msr: the device tree %s has no device for CPU 5",
			 f.dir, f.dir);
		assert_string_equal(x.freq_why, want);
		assert_int_equal(x.power_err, -ENOENT);
		assert_int_equal(tacho_msr_rates_get(r, 0, &x), 0);
		assert_true(x.tsc_mhz == 1.0);
		tacho_msr_rates_free(r);
	}
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 2, 0, TACHO_MSR_RATE_FREQ, &r), -EINVAL);
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 0, 1, TACHO_MSR_RATE_FREQ, &r), -EINVAL);
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 2, 1, 0, &r), -EINVAL);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
}

static void test_amd(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	struct tacho_msr_rates *r;
	struct tacho_msr_rate x = { .sz = sizeof(x) };
	const int cpus[] = { 0 };
	struct move mv = {
		.f = &f, .ncpus = 1, .ns = 2000000000,
		.regs = {
			{ 0xc001029b, { 100ull << 16 } },      /* 100 J in 1/2^16 J */
			{ 0xc001029a, { 9ull << 16 } },
		},
		.nregs = 2,
	};
	(void)state;

	th_msr_fake_new(&f, 1, 0xc00102a0);
	th_msr_poke(&f, 0, 0xc0010299, 0xa1003);
	dev = dev_on(&f, &zen3, &mv);
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 1, 2000, TACHO_MSR_RATE_POWER, &r), 0);
	assert_int_equal(tacho_msr_rates_get(r, 0, &x), 0);
	assert_true(x.energy_unit_j == 1.0 / 65536);
	assert_true(x.package_w == 50.0);
	assert_true(x.core_w == 4.5);
	assert_true(isnan(x.pp0_w));
	assert_true(isnan(x.dram_w));
	/* frequency was not asked */
	assert_int_equal(x.freq_err, 0);
	assert_true(isnan(x.tsc_mhz));
	tacho_msr_rates_free(r);
	tacho_msr_dev_free(dev);

	/* a vendor without RAPL in the table */
	dev = dev_on(&f, &via, &mv);
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 1, 1, TACHO_MSR_RATE_POWER, &r), 0);
	assert_int_equal(tacho_msr_rates_get(r, 0, &x), 0);
	assert_int_equal(x.power_err, -TACHO_EMSRCPU);
	assert_string_equal(x.power_why, "tacho knows the RAPL registers of Intel and AMD only");
	tacho_msr_rates_free(r);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intel),
		cmocka_unit_test(test_amd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
