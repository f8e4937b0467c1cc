/* rates.c - readings derived from two reads of counting registers an interval apart:
 * the effective frequency (APERF and MPERF against the TSC) and the power of the RAPL
 * domains (energy counters times the unit of the unit register, over the time). The
 * wait between the reads is the device's hook, so tests change their fake registers
 * there and need no real time. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "msr/msr.h"

/* The registers a reading needs, by address, with their table entries for the
 * explanations. */
#define A_TSC   0x10u
#define A_MPERF 0xe7u
#define A_APERF 0xe8u

enum { D_PACKAGE, D_PP0, D_PP1, D_DRAM, D_CORE, D_COUNT };

struct rapl {
	uint32_t unit;                /* the unit register */
	uint32_t addr[D_COUNT];       /* 0: this vendor has no such domain */
};

static const struct rapl rapl_intel = {
	0x606, { [D_PACKAGE] = 0x611, [D_PP0] = 0x639, [D_PP1] = 0x641, [D_DRAM] = 0x619 },
};
static const struct rapl rapl_amd = {
	0xc0010299, { [D_PACKAGE] = 0xc001029b, [D_CORE] = 0xc001029a },
};

struct one {
	struct tacho_msr_rate r;
	char *freq_why, *power_why;
	/* the first reads */
	int ferr, perr;
	uint64_t tsc, mperf, aperf, unit;
	uint64_t energy[D_COUNT];
	bool have[D_COUNT];
};

struct tacho_msr_rates {
	unsigned interval_ms, what;
	size_t n;
	struct one *v;
};

static const struct tacho_msr *entry_at(struct tacho_msr_dev *dev, uint32_t addr)
{
	const struct tacho_msr *m = NULL;
	uint32_t a;
	char spec[16];

	snprintf(spec, sizeof(spec), "0x%x", addr);
	tacho_msr_lookup(spec, &dev->cpu, &m, &a, NULL);
	return m;
}

/* Records why a reading failed: err explained for the register at addr. */
static int why(struct tacho_msr_dev *dev, int cpu, int err, uint32_t addr, char **out)
{
	char buf[768];

	tacho_msr_explain(dev, err, cpu, entry_at(dev, addr), addr, false, buf, sizeof(buf), NULL);
	free(*out);
	*out = tc_strdup(buf);
	return *out ? 0 : -ENOMEM;
}

static int whyf(char **out, const char *text)
{
	free(*out);
	*out = tc_strdup(text);
	return *out ? 0 : -ENOMEM;
}

static const struct rapl *rapl_of(const struct tacho_msr_dev *dev)
{
	switch (dev->cpu.vendor) {
	case TACHO_VENDOR_INTEL:
		return &rapl_intel;
	case TACHO_VENDOR_AMD:
	case TACHO_VENDOR_HYGON:
		return &rapl_amd;
	default:
		return NULL;
	}
}

/* The frequency registers of one CPU: 0 or the first error, with the address that
 * failed. */
static int read_freq(struct tacho_msr_dev *dev, int cpu, uint64_t v[3], uint32_t *failed)
{
	static const uint32_t addr[3] = { A_TSC, A_MPERF, A_APERF };

	for (int i = 0; i < 3; i++) {
		int err = tacho_msr_rdmsr(dev, cpu, addr[i], &v[i]);
		if (err) {
			*failed = addr[i];
			return err;
		}
	}
	return 0;
}

static int first_reads(struct tacho_msr_dev *dev, struct one *o, unsigned what)
{
	const struct rapl *rp = rapl_of(dev);
	int cpu = o->r.cpu;
	uint32_t failed = 0;

	if (what & TACHO_MSR_RATE_FREQ) {
		uint64_t v[3];
		o->ferr = read_freq(dev, cpu, v, &failed);
		if (o->ferr && why(dev, cpu, o->ferr, failed, &o->freq_why))
			return -ENOMEM;
		o->tsc = v[0];
		o->mperf = v[1];
		o->aperf = v[2];
	}
	if (!(what & TACHO_MSR_RATE_POWER))
		return 0;
	if (!rp) {
		o->perr = -TACHO_EMSRCPU;
		return whyf(&o->power_why, "tacho knows the RAPL registers of Intel and AMD only");
	}
	o->perr = tacho_msr_rdmsr(dev, cpu, rp->unit, &o->unit);
	if (o->perr)
		return why(dev, cpu, o->perr, rp->unit, &o->power_why);
	for (int d = 0; d < D_COUNT; d++) {
		int err;
		if (!rp->addr[d])
			continue;
		err = tacho_msr_rdmsr(dev, cpu, rp->addr[d], &o->energy[d]);
		o->have[d] = !err;
		/* the package is the reading; the other domains exist on some parts only */
		if (err && d == D_PACKAGE) {
			o->perr = err;
			return why(dev, cpu, err, rp->addr[d], &o->power_why);
		}
	}
	return 0;
}

static int second_reads(struct tacho_msr_dev *dev, struct one *o, unsigned what, double s)
{
	const struct rapl *rp = rapl_of(dev);
	int cpu = o->r.cpu;

	if ((what & TACHO_MSR_RATE_FREQ) && !o->ferr) {
		uint64_t v[3], dtsc, dm, da;
		uint32_t failed = 0;
		int err = read_freq(dev, cpu, v, &failed);

		if (err) {
			o->ferr = err;
			if (why(dev, cpu, err, failed, &o->freq_why))
				return -ENOMEM;
		} else {
			/* unsigned differences: a counter that wrapped still subtracts right */
			dtsc = v[0] - o->tsc;
			dm = v[1] - o->mperf;
			da = v[2] - o->aperf;
			if (!dtsc) {
				o->ferr = -TACHO_ENOVALUE;
				if (whyf(&o->freq_why, "the TSC did not advance over the interval (a "
					 "fake device, or a stopped clock)"))
					return -ENOMEM;
			} else {
				o->r.tsc_mhz = (double)dtsc / s / 1e6;
				o->r.avg_mhz = (double)da / s / 1e6;
				o->r.c0_pct = 100.0 * (double)dm / (double)dtsc;
				if (dm)
					o->r.busy_mhz = (double)da / (double)dm * o->r.tsc_mhz;
				else {
					o->ferr = -TACHO_ENOVALUE;
					if (whyf(&o->freq_why, "MPERF did not advance: the CPU was "
						 "halted the whole interval, so it had no running "
						 "frequency"))
						return -ENOMEM;
				}
			}
		}
	}
	if ((what & TACHO_MSR_RATE_POWER) && !o->perr) {
		double *w[D_COUNT] = { &o->r.package_w, &o->r.pp0_w, &o->r.pp1_w, &o->r.dram_w,
				       &o->r.core_w };
		/* RAPL_POWER_UNIT bits 12:8: the energy unit is 1/2^ESU joules */
		o->r.energy_unit_j = ldexp(1.0, -(int)(o->unit >> 8 & 0x1f));
		for (int d = 0; d < D_COUNT; d++) {
			uint64_t e;
			int err;

			if (!o->have[d])
				continue;
			err = tacho_msr_rdmsr(dev, cpu, rp->addr[d], &e);
			if (err && d == D_PACKAGE) {
				o->perr = err;
				return why(dev, cpu, err, rp->addr[d], &o->power_why);
			}
			if (err)
				continue;
			/* 32-bit counters: the difference modulo 2^32 survives one wrap */
			*w[d] = (double)((e - o->energy[d]) & 0xffffffffull) *
				o->r.energy_unit_j / s;
		}
	}
	return 0;
}

int tacho_msr_rates_measure(struct tacho_msr_dev *dev, const int *cpus, size_t n,
			    unsigned interval_ms, unsigned what, struct tacho_msr_rates **out)
{
	struct tacho_msr_rates *r;
	uint64_t ns;
	double s;
	int err = 0;

	if (!dev || !cpus || !n || !interval_ms || !out ||
	    !(what & (TACHO_MSR_RATE_FREQ | TACHO_MSR_RATE_POWER)))
		return -EINVAL;
	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->v = calloc(n, sizeof(*r->v));
	if (!r->v) {
		free(r);
		return -ENOMEM;
	}
	r->n = n;
	r->interval_ms = interval_ms;
	r->what = what;
	for (size_t i = 0; i < n && !err; i++) {
		struct tacho_msr_rate *x = &r->v[i].r;
		x->cpu = cpus[i];
		x->tsc_mhz = x->busy_mhz = x->avg_mhz = x->c0_pct = NAN;
		x->package_w = x->pp0_w = x->pp1_w = x->dram_w = x->core_w = NAN;
		x->energy_unit_j = NAN;
		err = first_reads(dev, &r->v[i], what);
	}
	if (err)
		goto out_err;
	ns = dev->wait(dev->wait_arg, interval_ms);
	s = (double)ns / 1e9;
	for (size_t i = 0; i < n && !err; i++) {
		r->v[i].r.seconds = s;
		if (!ns) {
			/* nothing can be divided by no time */
			if (!r->v[i].ferr && (what & TACHO_MSR_RATE_FREQ)) {
				r->v[i].ferr = -TACHO_ENOVALUE;
				err = whyf(&r->v[i].freq_why, "no time passed between the reads");
			}
			if (!err && !r->v[i].perr && (what & TACHO_MSR_RATE_POWER)) {
				r->v[i].perr = -TACHO_ENOVALUE;
				err = whyf(&r->v[i].power_why, "no time passed between the reads");
			}
			continue;
		}
		err = second_reads(dev, &r->v[i], what, s);
	}
	if (err)
		goto out_err;
	*out = r;
	return 0;

out_err:
	tacho_msr_rates_free(r);
	return err;
}

void tacho_msr_rates_free(struct tacho_msr_rates *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].freq_why);
		free(r->v[i].power_why);
	}
	free(r->v);
	free(r);
}

size_t tacho_msr_rates_count(const struct tacho_msr_rates *r)
{
	return r ? r->n : 0;
}

/* The first version of struct tacho_msr_rate ends at power_why: a caller's sz below it
 * is refused. */
#define RATE_SZ_V1 tc_offsetofend(struct tacho_msr_rate, power_why)

int tacho_msr_rates_get(const struct tacho_msr_rates *r, size_t i, struct tacho_msr_rate *out)
{
	struct tacho_msr_rate x;
	size_t sz;

	if (!r || i >= r->n || !out || out->sz < RATE_SZ_V1)
		return -EINVAL;
	x = r->v[i].r;
	x.sz = out->sz;
	x.freq_err = r->v[i].ferr;
	x.freq_why = r->v[i].ferr ? r->v[i].freq_why : NULL;
	x.power_err = r->v[i].perr;
	x.power_why = r->v[i].perr ? r->v[i].power_why : NULL;
	sz = out->sz < sizeof(x) ? out->sz : sizeof(x);
	memcpy(out, &x, sz);
	return 0;
}

unsigned tc_msr_rates_what(const struct tacho_msr_rates *r)
{
	return r->what;
}

unsigned tc_msr_rates_interval(const struct tacho_msr_rates *r)
{
	return r->interval_ms;
}
