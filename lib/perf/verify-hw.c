/* verify-hw.c - the hardware counters' own checks, for a user who wants to know before
 * trusting a new machine, a cloud VM or a CI runner (tacho doctor --verify): a
 * user-space RDPMC against read(2), multiplexed estimates against an exact count,
 * sample skid without and with precise_ip, and the depth of the last-branch records.
 * Each runs on the calling thread where a PMU exists, and says why it did not run
 * where none does. The skid statistics are pure, tested on synthetic samples (this
 * project's machines have no PMU); samples are parsed by the ring's parser. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf/engine.h"
#include "perf/perf.h"
#include "perf/rdpmc.h"
#include "perf/ring.h"
#include "perf/syscall.h"
#include "util/util.h"

/* --- the loops whose instructions are known --- */

#if defined(__x86_64__)
/* tc_skid_loop(n): n iterations of 32 one-byte NOPs, a DEC and a JNZ back to the top:
 * one branch an iteration, at tc_skid_branch, and every instruction one address apart
 * up to the DEC (so that a distance in bytes is a distance in instructions). Written
 * at file scope so that its labels exist once. */
__asm__(".text\n"
	".globl tc_skid_loop\n"
	".type tc_skid_loop, @function\n"
	"tc_skid_loop:\n"
	".globl tc_skid_top\n"
	"tc_skid_top:\n"
	".rept 32\n"
	"nop\n"
	".endr\n"
	"dec %rdi\n"
	".globl tc_skid_branch\n"
	"tc_skid_branch:\n"
	"jnz tc_skid_top\n"
	"ret\n"
	".size tc_skid_loop, .-tc_skid_loop\n");
void tc_skid_loop(unsigned long n);
extern const char tc_skid_top[], tc_skid_branch[];
#define HAVE_LOOPS 1
#endif

/* --- the pure parts --- */

void tc_skid_add(struct tc_skid *s, uint64_t ip)
{
	uint64_t d;

	/* the branch itself: no skid; the top of the loop, where a taken branch goes, one
	 * instruction after it; every NOP and the DEC one more each */
	if (ip == s->branch)
		d = 0;
	else if (ip >= s->top && ip < s->branch)
		d = 1 + (ip - s->top);
	else {
		s->outside++;
		return;
	}
	if (d < TC_SKID_MAX)
		s->hist[d]++;
	s->n++;
}

double tc_skid_median(const struct tc_skid *s)
{
	uint64_t half = (s->n + 1) / 2, seen = 0;

	if (!s->n)
		return NAN;
	for (size_t d = 0; d < TC_SKID_MAX; d++) {
		seen += s->hist[d];
		if (seen >= half)
			return (double)d;
	}
	return NAN;
}

double tc_skid_within(const struct tc_skid *s, unsigned d)
{
	uint64_t k = 0;

	if (!s->n)
		return NAN;
	for (size_t i = 0; i <= d && i < TC_SKID_MAX; i++)
		k += s->hist[i];
	return (double)k / (double)s->n;
}

/* --- the live checks --- */

static void hw_attr(struct perf_event_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_HARDWARE;
	a->config = config;
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

#ifdef HAVE_LOOPS
/* Why a check cannot run: the open's refusal in the explainer's words. */
static void refused(struct tc_hw_check *o, int err, const struct perf_event_attr *a)
{
	struct tc_perf_env env;

	o->err = err;
	tc_perf_env_probe(&env);
	tc_perf_explain(&env, err, a, NULL, 0, o->text, sizeof(o->text), NULL);
}
#endif

void tc_verify_rdpmc(struct tc_hw_check *o)
{
	memset(o, 0, sizeof(*o));
#ifdef HAVE_LOOPS
	struct perf_event_attr a;
	const struct tc_pmc_ops *ops = tc_perf_pmc_ops(false);
	struct tc_pmc_value v1, v2;
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t val = 0;
	void *pg;
	int fd, e1, e2;

	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS);
	fd = tc_perf_event_open_real(&a, 0, -1, -1, 0);
	if (fd < 0) {
		refused(o, fd, &a);
		return;
	}
	pg = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED || !ops) {
		o->err = pg == MAP_FAILED ? -errno : -EOPNOTSUPP;
		snprintf(o->text, sizeof(o->text), "cannot map the event's page: %s",
			 tacho_strerror(o->err));
		close(fd);
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	tc_skid_loop(100000);
	/* the kernel's value, read between two user-space reads: it must lie between them */
	e1 = tc_pmc_read_page(pg, ops, &v1);
	if (read(fd, &val, sizeof(val)) != (ssize_t)sizeof(val))
		e1 = e1 ? e1 : -EIO;
	e2 = tc_pmc_read_page(pg, ops, &v2);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	munmap(pg, (size_t)psz);
	close(fd);
	if (e1 || e2) {
		o->err = e1 ? e1 : e2;
		snprintf(o->text, sizeof(o->text), "%s", o->err == -EAGAIN ?
			 "the event's page allows no RDPMC now: cap_user_rdpmc is clear (see "
			 "/sys/bus/event_source/devices/cpu/rdpmc) or the event was off its "
			 "counter at that moment; tacho reads with read(2) then" :
			 tacho_strerror(o->err));
		return;
	}
	o->ran = true;
	o->figure[0] = (double)v1.count;
	o->figure[1] = (double)val;
	o->figure[2] = (double)v2.count;
	o->ok = v1.count <= val && val <= v2.count;
	snprintf(o->text, sizeof(o->text), "RDPMC %llu <= read(2) %llu <= RDPMC %llu%s",
		 (unsigned long long)v1.count, (unsigned long long)val,
		 (unsigned long long)v2.count, o->ok ? "" : ": they disagree");
#else
	o->err = -EOPNOTSUPP;
	snprintf(o->text, sizeof(o->text), "tacho reads counters with RDPMC on x86-64 only");
#endif
}

/* As many copies as no PMU has counters for (x86 cores have 4 to 8 general ones, and
 * the fixed counter takes instructions too): the kernel must rotate them. */
#define MUX_EVENTS 16
#define MUX_LOOPS 20000000ul

void tc_verify_multiplex(struct tc_hw_check *o)
{
	memset(o, 0, sizeof(*o));
#ifdef HAVE_LOOPS
	struct perf_event_attr a;
	int fd[MUX_EVENTS];
	double worst = 0, lo = 1, hi = 0;
	/* the loop's instructions: 34 an iteration (32 NOPs, DEC, JNZ); the few hundred
	 * of the enable and disable around it are in the margin */
	double exact = 34.0 * MUX_LOOPS;
	bool rotated = false;
	size_t n = 0, read_ok = 0;

	hw_attr(&a, PERF_COUNT_HW_INSTRUCTIONS);
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	for (; n < MUX_EVENTS; n++) {
		fd[n] = tc_perf_event_open_real(&a, 0, -1, -1, 0);
		if (fd[n] < 0)
			break;
	}
	if (n < 2) {
		refused(o, n ? -ENOSPC : fd[0], &a);
		for (size_t i = 0; i < n; i++)
			close(fd[i]);
		return;
	}
	for (size_t i = 0; i < n; i++)
		ioctl(fd[i], PERF_EVENT_IOC_ENABLE, 0);
	tc_skid_loop(MUX_LOOPS);
	for (size_t i = 0; i < n; i++)
		ioctl(fd[i], PERF_EVENT_IOC_DISABLE, 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t v[3];

		if (read(fd[i], v, sizeof(v)) == (ssize_t)sizeof(v) && v[2]) {
			double est = tc_count_scale(v[0], v[1], v[2]);
			double share = (double)v[2] / (double)v[1];
			double e = fabs(est - exact) / exact;

			read_ok++;
			rotated |= v[2] < v[1];
			worst = e > worst ? e : worst;
			lo = share < lo ? share : lo;
			hi = share > hi ? share : hi;
		}
		close(fd[i]);
	}
	o->ran = true;
	o->figure[0] = 100 * worst;
	o->figure[1] = (double)n;
	o->ok = read_ok == n && worst <= 0.02;
	if (read_ok < n)
		snprintf(o->text, sizeof(o->text), "%zu instructions:u events opened, %zu of them "
			 "ran at all: the others never got a counter", n, read_ok);
	else if (!rotated)
		snprintf(o->text, sizeof(o->text), "%zu instructions:u events were all counted "
			 "at once (no multiplexing to check); worst error %.3g %% of the loop's "
			 "%.0f", n, 100 * worst, exact);
	else
		snprintf(o->text, sizeof(o->text), "%zu instructions:u events shared the counters "
			 "(each ran %.0f-%.0f %% of the time): scaled estimates within %.3g %% "
			 "of the loop's exact %.0f%s", n, 100 * lo, 100 * hi, 100 * worst, exact,
			 o->ok ? "" : " (more than 2 %: count fewer events at once, or over "
			 "several runs)");
#else
	o->err = -EOPNOTSUPP;
	snprintf(o->text, sizeof(o->text), "the check's loop is written for x86-64");
#endif
}

#ifdef HAVE_LOOPS
struct sample_walk {
	uint64_t sample_type;
	struct tc_skid *skid;
	uint64_t max_nr, samples;
};

static int on_sample(void *arg, const struct perf_event_header *h)
{
	struct sample_walk *w = arg;
	struct tc_perf_sample smp;

	if (h->type != PERF_RECORD_SAMPLE || tc_perf_parse_sample(w->sample_type, h, &smp))
		return 0;
	w->samples++;
	if (w->skid)
		tc_skid_add(w->skid, smp.ip);
	if (smp.bnr > w->max_nr)
		w->max_nr = smp.bnr;
	return 0;
}

/* Samples attr on the calling thread over n iterations of the loop into w. 0, or the
 * open's (or the mapping's) -errno. */
static int sample_loop(struct perf_event_attr *a, unsigned long n, struct sample_walk *w)
{
	static const pid_t self = 0;
	struct tc_perf_grid g;
	struct tc_perf_list *l = NULL;
	int err;

	a->sample_type = w->sample_type;
	err = tc_perf_grid_init(&g, NULL, 0, &self, 1);
	if (!err)
		err = tc_perf_list_new(&l);
	if (!err && tc_perf_list_add(l, a, "check", TACHO_GROUP_NONE) < 0)
		err = -ENOMEM;
	if (!err)
		err = tc_perf_list_open(l, &g, 0);
	tc_perf_grid_exit(&g);
	if (!err)
		err = tc_perf_ev_error(tc_perf_list_event(l, 0), NULL, NULL);
	if (!err)
		err = tc_perf_list_mmap(l, 64, NULL, NULL);
	if (!err) {
		tc_perf_list_enable(l);
		tc_skid_loop(n);
		tc_perf_list_disable(l);
		err = tc_perf_list_drain(l, on_sample, w);
	}
	tc_perf_list_free(l);
	return err;
}
#endif

void tc_verify_precise(struct tc_hw_check *o)
{
	memset(o, 0, sizeof(*o));
#ifdef HAVE_LOOPS
	struct perf_event_attr a;
	struct tc_skid loose = { .top = (uintptr_t)tc_skid_top, .branch = (uintptr_t)tc_skid_branch };
	struct tc_skid tight = loose;
	struct sample_walk w = { .sample_type = PERF_SAMPLE_IP };
	int level, err;

	/* the highest precise_ip a branch event opens with */
	for (level = 3; level > 0; level--) {
		int fd;

		hw_attr(&a, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
		a.sample_period = 997;
		a.precise_ip = (unsigned)level;
		fd = tc_perf_event_open_real(&a, 0, -1, -1, 0);
		if (fd >= 0) {
			close(fd);
			break;
		}
	}
	/* a prime period, so that samples fall on every iteration alike */
	hw_attr(&a, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	a.sample_period = 997;
	w.skid = &loose;
	err = sample_loop(&a, 2000000, &w);
	if (err) {
		refused(o, err, &a);
		return;
	}
	if (level > 0) {
		hw_attr(&a, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
		a.sample_period = 997;
		a.precise_ip = (unsigned)level;
		w.skid = &tight;
		w.samples = 0;
		err = sample_loop(&a, 2000000, &w);
		if (err) {
			/* it opened alone, and sampling with it failed: say that, not "no
			 * precise sampling" */
			o->ran = true;
			o->figure[0] = level;
			o->figure[1] = tc_skid_median(&loose);
			snprintf(o->text, sizeof(o->text), "precise_ip %d opens, but sampling with it "
				 "failed (%s); skid of branch samples without it: median %.0f "
				 "instructions", level, tacho_strerror(err), o->figure[1]);
			return;
		}
	}
	o->ran = true;
	o->figure[0] = level;
	o->figure[1] = tc_skid_median(&loose);
	o->figure[2] = level ? tc_skid_median(&tight) : NAN;
	o->ok = level > 0;
	if (level)
		snprintf(o->text, sizeof(o->text), "precise_ip up to %d; skid of branch samples "
			 "(instructions after the branch): median %.0f without (%.0f %% within "
			 "one), %.0f with precise_ip %d (%.0f %% within one)", level,
			 o->figure[1], 100 * tc_skid_within(&loose, 1), o->figure[2], level,
			 100 * tc_skid_within(&tight, 1));
	else
		snprintf(o->text, sizeof(o->text), "no precise sampling (precise_ip 0 only); "
			 "skid of branch samples: median %.0f instructions (%.0f %% within one)",
			 o->figure[1], 100 * tc_skid_within(&loose, 1));
#else
	o->err = -EOPNOTSUPP;
	snprintf(o->text, sizeof(o->text), "the check's loop is written for x86-64");
#endif
}

void tc_verify_lbr(struct tc_hw_check *o)
{
	memset(o, 0, sizeof(*o));
#ifdef HAVE_LOOPS
	struct perf_event_attr a;
	struct sample_walk w = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK };
	int err;

	hw_attr(&a, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	a.sample_period = 10007;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY;
	err = sample_loop(&a, 2000000, &w);
	if (err) {
		refused(o, err, &a);
		if (err == -EOPNOTSUPP)
			snprintf(o->text, sizeof(o->text), "no last-branch records here (the PMU "
				 "or the hypervisor gives none)");
		return;
	}
	o->ran = true;
	o->figure[0] = (double)w.max_nr;
	o->figure[1] = (double)w.samples;
	o->ok = w.max_nr > 0;
	snprintf(o->text, sizeof(o->text), "%llu branches a sample (the deepest of %llu "
		 "samples)", (unsigned long long)w.max_nr, (unsigned long long)w.samples);
#else
	o->err = -EOPNOTSUPP;
	snprintf(o->text, sizeof(o->text), "the check's loop is written for x86-64");
#endif
}
