/* test-live.c - the live part (lib/live): the parsers of /proc and of the mount table,
 * rates as people write them, rules with their hysteresis on frames made by hand, the
 * metrics exposition byte for byte; then live: a program's exact write count through
 * the sampler (a task and a cgroup), the views, the descriptor budget, the throttles
 * (a cgroup cap written and undone, a duty cycle that stops and continues, no
 * controller said as such) and bad options; then the watch session on frames made by
 * hand: rules that fire and lift, their signals, caps and duty cycles, and the cap's
 * share and its steering exactly. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"
#include "live/live-int.h"
#include "tacho/run.h"

/* --- parsers --- */

/* Writes s into a new file at path. */
static void write_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(s, f);
	assert_int_equal(fclose(f), 0);
}

static void test_proc_stat(void **state)
{
	static const char line[] =
		"4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 3 0 "
		"987654 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
	static const char *const bad[] = {
		"", "4242", "4242 (x", "x (y) S 1", "4242 (y) S", "4242 (y) S 1 2 3",
		"4242 (y)S 1 4242 4242 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5",
		"4242 (y) S 1 4242 4242 0 -1 0 0 0 0 0 1x 1 0 0 20 0 1 0 5",
	};
	struct tc_proc_stat st;
	(void)state;

	assert_int_equal(tc_proc_stat_parse(line, strlen(line), &st), 0);
	assert_int_equal(st.pid, 4242);
	assert_string_equal(st.comm, "a (b) c");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.ticks, 325);
	assert_int_equal(st.threads, 3);
	assert_int_equal(st.starttime, 987654);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (tc_proc_stat_parse(bad[i], strlen(bad[i]), &st) != -TACHO_EPARSE)
			fail_msg("bad[%zu] '%s' parsed", i, bad[i]);
	/* a control character in a name is not passed on */
	{
		static const char ctl[] = "7 (a\tb) R 1 1 1 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 9";
		assert_int_equal(tc_proc_stat_parse(ctl, strlen(ctl), &st), 0);
	}
	assert_string_equal(st.comm, "a?b");
	/* this process, live */
	assert_int_equal(tc_task_stat("/proc", getpid(), getpid(), &st), 0);
	assert_int_equal(st.pid, getpid());
	assert_int_equal(tc_task_stat("/proc", 0x7ffffff0, 0, &st), -ESRCH);
}

/* /proc/stat's CPU lines: busy is user + nice + system + irq + softirq, never idle,
 * iowait or steal; the sum line and other lines are skipped. */
static void test_cpu_busy_parse(void **state)
{
	static const char text[] =
		"cpu  9 9 9 9 9 9 9 9 9 9\n"
		"cpu0 100 2 30 5000 7 4 1 800 0 0\n"
		"cpu1 1 0 0 9 0 0 0 0\n"
		"intr 12345 0 1\n"
		"cpu3 10 20 30 40 50 60 70 80 90 100\n";
	static const char *const bad[] = {
		"", "intr 1 2\n", "cpu0 1 2 3\n", "cpu0x 1 2 3 4 5 6 7 8\n",
		"cpu0 1 2 3 4 5 6 7 z\n", "cpu99999999999 1 2 3 4 5 6 7 8\n",
	};
	uint64_t busy[4];
	(void)state;

	assert_int_equal(tc_proc_cpu_busy_parse(text, strlen(text), busy, 4), 3);
	assert_int_equal(busy[0], 100 + 2 + 30 + 4 + 1);
	assert_int_equal(busy[1], 1);
	assert_true(busy[2] == UINT64_MAX);
	assert_int_equal(busy[3], 10 + 20 + 30 + 60 + 70);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (tc_proc_cpu_busy_parse(bad[i], strlen(bad[i]), busy, 4) != -TACHO_EPARSE)
			fail_msg("bad[%zu] '%s' parsed", i, bad[i]);
}

/* A line of /proc/PID/maps: range, offset, exec, the path with its blanks. */
static void test_maps_line(void **state)
{
	static const char ok[] = "7f10a000-7f10b000 r-xp 0002c000 08:01 1234    /usr/lib/a b.so";
	static const char anon[] = "7ffd0000-7ffd1000 rw-p 00000000 00:00 0";
	static const char *const bad[] = {
		"", "7f10a000", "7f10a000-7f10b000", "7f10a000-7f10b000 r-xp",
		"7f10b000-7f10a000 r-xp 0 08:01 1 /x", "zz-7f10b000 r-xp 0 08:01 1 /x",
		"11111111111111111-2 r-xp 0 08:01 1 /x", "1-2 r-x 0 08:01 1 /x",
	};
	uint64_t lo, hi, off;
	const char *path;
	size_t pl;
	bool exec;
	(void)state;

	assert_int_equal(tc_maps_line_parse(ok, strlen(ok), &lo, &hi, &off, &exec, &path, &pl), 0);
	assert_true(lo == 0x7f10a000 && hi == 0x7f10b000 && off == 0x2c000 && exec);
	assert_int_equal(pl, strlen("/usr/lib/a b.so"));
	assert_memory_equal(path, "/usr/lib/a b.so", pl);
	assert_int_equal(tc_maps_line_parse(anon, strlen(anon), &lo, &hi, &off, &exec, &path,
					    &pl), 0);
	assert_false(exec);
	assert_int_equal(pl, 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (tc_maps_line_parse(bad[i], strlen(bad[i]), &lo, &hi, &off, &exec, &path,
				       &pl) != -TACHO_EPARSE)
			fail_msg("bad[%zu] '%s' parsed", i, bad[i]);
}

static struct tacho_evlist *events(const char *spec);

/* The CPU and machine views' clocks are the CPUs' busy time: a /proc/stat made by hand
 * (proc_root) gives exact totals, whatever the clock on the wall did. */
static void test_cpu_busy_exact(void **state)
{
	struct tacho_live_opts o = { .sz = sizeof(o) };
	struct tacho_evlist *l = events("task-clock,context-switches");
	char root[PATH_MAX], stat[PATH_MAX + 8], line[256];
	struct tacho_live_frame *f;
	struct tacho_live *lv;
	struct tc_sb before, after;
	int *cpus;
	size_t ncpus;
	(void)state;

	assert_int_equal(tc_online_cpus(&cpus, &ncpus), 0);
	snprintf(root, sizeof(root), "%s/fakeproc", th_tmpdir());
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(stat, sizeof(stat), "%s/stat", root);
	tc_sb_init(&before);
	tc_sb_init(&after);
	/* CPU k: 1000 + k ticks busy at the start, then 7 x (k + 1) more */
	for (size_t i = 0; i < ncpus; i++) {
		int k = cpus[i];
		snprintf(line, sizeof(line), "cpu%d %d 0 0 99999 0 0 0 0\n", k, 1000 + k);
		tc_sb_adds(&before, line);
		snprintf(line, sizeof(line), "cpu%d %d 0 %d 99999 0 0 0 555\n", k, 1000 + k,
			 7 * (k + 1));
		tc_sb_adds(&after, line);
	}
	write_text(stat, before.buf);
	o.events = l;
	o.proc_root = root;
	o.view = TACHO_LIVE_CPU;
	if (tacho_live_new(&o, &lv, NULL)) {
		free(cpus);
		tc_sb_exit(&before);
		tc_sb_exit(&after);
		tacho_evlist_free(l);
		TEST_SKIP("CPU-wide counting is not allowed here");
	}
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	tacho_live_frame_put(f);
	write_text(stat, after.buf);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	assert_int_equal(tacho_live_frame_nrows(f), ncpus);
	for (size_t i = 0; i < ncpus; i++) {
		const struct tacho_live_row *r = tacho_live_frame_row(f, i);
		double ms = 7.0 * (double)(r->id + 1) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
		assert_int_equal(r->values[0].status, TACHO_COUNT_COUNTED);
		assert_true(r->values[0].total == ms);
		assert_true(isfinite(r->cpus) && r->cpus > 0);
		/* the busy fraction and the clock's rate say the same */
		assert_true(fabs(r->cpus * 1000 - r->values[0].rate) < 1e-6 * r->values[0].rate);
	}
	tacho_live_frame_put(f);
	tacho_live_free(lv);
	/* the machine: every CPU's busy time summed */
	write_text(stat, before.buf);
	o.view = TACHO_LIVE_MACHINE;
	assert_int_equal(tacho_live_new(&o, &lv, NULL), 0);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	tacho_live_frame_put(f);
	write_text(stat, after.buf);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	{
		double ms = 0;
		for (size_t i = 0; i < ncpus; i++)
			ms += 7.0 * (cpus[i] + 1) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
		assert_true(tacho_live_frame_row(f, 0)->values[0].total == ms);
	}
	tacho_live_frame_put(f);
	/* a /proc/stat without the CPUs: no value, said why, never 1000 msec/s */
	write_text(stat, "intr 1\n");
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	assert_int_equal(tacho_live_frame_row(f, 0)->values[0].status, TACHO_COUNT_NOT_COUNTED);
	assert_non_null(strstr(tacho_live_frame_row(f, 0)->values[0].why, "/proc/stat"));
	tacho_live_frame_put(f);
	tacho_live_free(lv);
	free(cpus);
	tc_sb_exit(&before);
	tc_sb_exit(&after);
	tacho_evlist_free(l);
}

static void test_proc_cgroup(void **state)
{
	static const char text[] = "9:name=systemd:/\n4:memory:/m/x\n1:cpu,cpuacct:/a/b\n0::/u\n";
	char p[64];
	(void)state;

	assert_int_equal(tc_proc_cgroup_path(text, strlen(text), NULL, p, sizeof(p)), 0);
	assert_string_equal(p, "/u");
	assert_int_equal(tc_proc_cgroup_path(text, strlen(text), "cpu", p, sizeof(p)), 0);
	assert_string_equal(p, "/a/b");
	assert_int_equal(tc_proc_cgroup_path(text, strlen(text), "cpuacct", p, sizeof(p)), 0);
	assert_string_equal(p, "/a/b");
	assert_int_equal(tc_proc_cgroup_path(text, strlen(text), "cp", p, sizeof(p)), -ENOENT);
	assert_int_equal(tc_proc_cgroup_path(text, strlen(text), "cpu", p, 3), -ERANGE);
	assert_int_equal(tc_proc_cgroup_path("garbage\n", 8, NULL, p, sizeof(p)), -TACHO_EPARSE);
}

static void test_cgroup_mounts(void **state)
{
	static const char table[] =
		"proc /proc proc rw 0 0\n"
		"\n"
		"cgroup /sys/fs/cgroup/cpu,cpuacct cgroup ro,nosuid,cpu,cpuacct 0 0\n"
		"cgroup /sys/fs/cgroup/perf\\040events cgroup rw,perf_event 0 0\n"
		"cgroup2 /sys/fs/cgroup/unified cgroup2 rw,nsdelegate 0 0\n"
		"cgroup2 /second cgroup2 ro 0 0\n";
	struct tc_cgroup_mounts m;
	(void)state;

	assert_int_equal(tc_cgroup_mounts_parse(table, strlen(table), &m), 0);
	assert_string_equal(m.v2, "/sys/fs/cgroup/unified");
	assert_false(m.v2_ro);
	assert_string_equal(m.v1_cpu, "/sys/fs/cgroup/cpu,cpuacct");
	assert_true(m.v1_cpu_ro);
	assert_string_equal(m.v1_perf, "/sys/fs/cgroup/perf events");
	assert_string_equal(tc_cgroup_perf_root(&m), "/sys/fs/cgroup/perf events");
	/* cpuacct alone is not cpu */
	assert_int_equal(tc_cgroup_mounts_parse("c /x cgroup rw,cpuacct 0 0\n", 27, &m), 0);
	assert_string_equal(m.v1_cpu, "");
	assert_null(tc_cgroup_perf_root(&m));
	assert_int_equal(tc_cgroup_mounts_parse("only three fields\n", 18, &m), -TACHO_EPARSE);
}

static void test_cgroup_resolve(void **state)
{
	char buf[PATH_MAX];
	(void)state;

	assert_int_equal(tc_cgroup_resolve("/", "proc", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/proc");
	assert_int_equal(tc_cgroup_resolve("/proc/", "/self/", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/proc/self");
	assert_int_equal(tc_cgroup_resolve("/proc", "/proc/self", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/proc/self");
	assert_int_equal(tc_cgroup_resolve("/proc", "../etc", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tc_cgroup_resolve("/proc", "a/../../etc", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(tc_cgroup_resolve("/proc", "no-such-thing", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(tc_cgroup_resolve("/proc", "self/stat", buf, sizeof(buf)), -ENOTDIR);
	assert_int_equal(tc_cgroup_resolve("/proc", "", buf, sizeof(buf)), -EINVAL);

	/* the public one finds the hierarchy in a mount table: v1's perf_event first */
	write_text(th_tmp("mounts"), "cgroup2 /proc cgroup2 rw 0 0\n");
	assert_int_equal(tacho_cgroup_resolve("self/", th_tmp("mounts"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/proc/self");
	write_text(th_tmp("mounts"), "cgroup2 /proc cgroup2 rw 0 0\n"
		   "cgroup /proc/self cgroup rw,perf_event 0 0\n");
	assert_int_equal(tacho_cgroup_resolve("/task", th_tmp("mounts"), buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/proc/self/task");
	assert_int_equal(tacho_cgroup_resolve("task", th_tmp("mounts"), buf, 8), -ERANGE);
	assert_int_equal(tacho_cgroup_resolve("../etc", th_tmp("mounts"), buf, sizeof(buf)),
			 -EINVAL);
	write_text(th_tmp("mounts"), "cgroup /x cgroup rw,cpu 0 0\n");
	assert_int_equal(tacho_cgroup_resolve("a", th_tmp("mounts"), buf, sizeof(buf)), -ENOENT);
	assert_int_equal(tacho_cgroup_resolve("a", th_tmp("no-such-mounts"), buf, sizeof(buf)),
			 -ENOENT);
	assert_int_equal(tacho_cgroup_resolve(NULL, NULL, buf, sizeof(buf)), -EINVAL);
}

static void test_rate_parse(void **state)
{
	static const struct { const char *s; double v; } good[] = {
		{ "1000", 1000 }, { "2.5k", 2500 }, { "10M/s", 1e7 }, { "0.02", 0.02 },
		{ "5m", 0.005 }, { "1e3", 1000 }, { "3G", 3e9 }, { "7/s", 7 }, { "1.5e-1u", 1.5e-7 },
		{ "2T", 2e12 }, { "4K", 4000 },
	};
	static const struct { const char *s; unsigned col; } bad[] = {
		{ "", 1 }, { "k", 1 }, { "10x", 3 }, { "10/m", 3 }, { "-5", 1 }, { "inf", 1 },
		{ "1.2.3", 1 }, { "5kk", 3 }, { "5/s/s", 2 },
	};
	struct tacho_diag d;
	double v;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		if (tacho_rate_parse(good[i].s, &v, NULL))
			fail_msg("'%s' refused", good[i].s);
		if (fabs(v - good[i].v) > 1e-9 * fabs(good[i].v))
			fail_msg("'%s': %g, not %g", good[i].s, v, good[i].v);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&d, 0, sizeof(d));
		d.sz = sizeof(d);
		if (tacho_rate_parse(bad[i].s, &v, &d) != -TACHO_EPARSE)
			fail_msg("'%s' accepted", bad[i].s);
		if (d.column != bad[i].col)
			fail_msg("'%s': column %u, not %u (%s)", bad[i].s, d.column, bad[i].col,
				 d.message);
	}
	assert_int_equal(tacho_rate_parse("1e999", &v, NULL), -TACHO_EOUTOFRANGE);
	/* a diag below the first version is refused, untouched */
	memset(&d, 0, sizeof(d));
	d.sz = 8;
	assert_int_equal(tacho_rate_parse("10x", &v, &d), -EINVAL);
	assert_int_equal(d.column, 0);
	assert_string_equal(d.message, "");
}

/* --- rules, on frames made by hand --- */

/* A frame at time t (interval iv) with one process row: events a and b at these rates
 * (NAN: not counted). */
static struct tacho_live_frame *frame2(double t, double iv, double ra, double rb)
{
	static const char *const ev[] = { "page-faults", "context-switches" };
	static const char *const un[] = { "", "" };
	struct tacho_live_frame *f = tc_frame_new(2, ev, un, 1, 0);
	double r[2] = { ra, rb };

	assert_non_null(f);
	f->view = TACHO_LIVE_PROCESS;
	f->time = t;
	f->interval = iv;
	f->rows[0].kind = TACHO_LIVE_PROCESS;
	f->rows[0].id = 42;
	f->rows[0].name = tc_frame_str(f, "prog");
	f->rows[0].values = f->vals;
	for (int e = 0; e < 2; e++) {
		f->vals[e].status = isnan(r[e]) ? TACHO_COUNT_NOT_COUNTED : TACHO_COUNT_COUNTED;
		f->vals[e].rate = r[e];
		f->vals[e].total = isnan(r[e]) ? NAN : r[e] * t;
	}
	return f;
}

static int feed(struct tacho_rule *r, double t, double ra, double rb, double *value)
{
	struct tacho_live_frame *f = frame2(t, 1, ra, rb);
	int k = tacho_rule_eval(r, f, 0, value);

	tacho_live_frame_put(f);
	return k;
}

static void test_rules(void **state)
{
	struct tacho_rule_opts o = { .sz = sizeof(o), .input = "page-faults",
				     .dir = TACHO_RULE_ABOVE, .threshold = 100, .for_s = 2 };
	/* a rate, second by second, and what the rule says */
	static const struct { double rate; int change; } seq[] = {
		{ 50, TACHO_RULE_SAME }, { 150, TACHO_RULE_SAME }, { 150, TACHO_RULE_FIRED },
		{ 150, TACHO_RULE_SAME }, { 95, TACHO_RULE_SAME },  /* within the band */
		{ 80, TACHO_RULE_SAME }, { 95, TACHO_RULE_SAME },   /* the clock restarts */
		{ 80, TACHO_RULE_SAME }, { 80, TACHO_RULE_LIFTED }, { 101, TACHO_RULE_SAME },
		{ NAN, TACHO_RULE_SAME }, { 101, TACHO_RULE_SAME }, { 101, TACHO_RULE_FIRED },
	};
	struct tacho_rule *r;
	char desc[200];
	double v;
	(void)state;

	assert_int_equal(tacho_rule_new(&o, &r, NULL), 0);
	assert_string_equal(tacho_rule_events(r), "page-faults");
	tacho_rule_describe(r, desc, sizeof(desc));
	assert_string_equal(desc, "page-faults above 100/s for 2 s (lifts below 90/s)");
	for (size_t i = 0; i < ARRAY_SIZE(seq); i++) {
		int k = feed(r, (double)(i + 1), seq[i].rate, 1, &v);
		if (k != seq[i].change)
			fail_msg("second %zu, rate %g: %d, not %d", i + 1, seq[i].rate, k,
				 seq[i].change);
		if (isnan(seq[i].rate) ? !isnan(v) : v != seq[i].rate)
			fail_msg("second %zu: value %g", i + 1, v);
	}
	assert_true(tacho_rule_active(r));
	tacho_rule_free(r);

	/* a ratio, below, no duration, no hysteresis */
	o.input = "page-faults/context-switches";
	o.dir = TACHO_RULE_BELOW;
	o.threshold = 0.5;
	o.for_s = 0;
	o.hysteresis = -1;
	assert_int_equal(tacho_rule_new(&o, &r, NULL), 0);
	assert_string_equal(tacho_rule_events(r), "page-faults,context-switches");
	tacho_rule_describe(r, desc, sizeof(desc));
	assert_string_equal(desc, "page-faults/context-switches below 0.5 (lifts above 0.5)");
	assert_int_equal(feed(r, 1, 10, 10, &v), TACHO_RULE_SAME);
	assert_true(v == 1);
	assert_int_equal(feed(r, 2, 1, 10, &v), TACHO_RULE_FIRED);
	assert_int_equal(feed(r, 3, 5, 10, &v), TACHO_RULE_SAME);   /* 0.5 is not above */
	assert_int_equal(feed(r, 4, 6, 10, &v), TACHO_RULE_LIFTED);
	assert_int_equal(feed(r, 5, 1, 0, &v), TACHO_RULE_SAME);    /* no ratio of 0 */
	assert_true(isnan(v));
	tacho_rule_free(r);
}

static void test_rule_errors(void **state)
{
	struct tacho_rule_opts o = { .sz = sizeof(o), .dir = TACHO_RULE_ABOVE, .threshold = 1 };
	struct tacho_rule *r = NULL;
	struct tacho_diag d;
	(void)state;

	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	o.input = "page-faultz";
	assert_int_equal(tacho_rule_new(&o, &r, &d), -TACHO_ENOEVENT);
	assert_true(d.column > 0);
	assert_null(r);
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	o.input = "page-faults,task-clock";
	assert_int_equal(tacho_rule_new(&o, &r, &d), -TACHO_EPARSE);
	assert_contains(d.message, "one event or the ratio of two");
	o.input = "page-faults/nothing-here";
	assert_true(tacho_rule_new(&o, &r, &d) < 0);
	o.input = "page-faults";
	o.threshold = NAN;
	assert_int_equal(tacho_rule_new(&o, &r, NULL), -EINVAL);
	o.threshold = 1;
	o.for_s = -1;
	assert_int_equal(tacho_rule_new(&o, &r, NULL), -EINVAL);
	o.for_s = 0;
	o.hysteresis = 1.5;
	assert_int_equal(tacho_rule_new(&o, &r, NULL), -EINVAL);
	/* a frame without the rule's events */
	o.hysteresis = 0;
	o.input = "cpu-migrations";
	assert_int_equal(tacho_rule_new(&o, &r, NULL), 0);
	{
		struct tacho_live_frame *f = frame2(1, 1, 1, 1);
		assert_int_equal(tacho_rule_eval(r, f, 0, NULL), -EINVAL);
		assert_int_equal(tacho_rule_eval(r, f, 5, NULL), -EINVAL);
		tacho_live_frame_put(f);
	}
	tacho_rule_free(r);
}

/* --- the exposition, byte for byte --- */

static struct tacho_live_frame *metrics_frame(void)
{
	static const char *const ev[] = { "task-clock", "syscalls:sys_enter_write", "cycles" };
	static const char *const un[] = { "msec", "", "" };
	struct tacho_live_frame *f = tc_frame_new(3, ev, un, 2, 0);
	struct tacho_live_value *v;

	assert_non_null(f);
	f->view = TACHO_LIVE_PROCESS;
	f->time = 3;
	f->interval = 1;
	f->wall = 1700000000.5;
	f->health = (struct tacho_live_health){ .sample_s = 0.001, .rows = 2, .not_followed = 7,
						.no_permission = 1, .fds = 6, .fd_limit = 1000 };
	for (int i = 0; i < 2; i++) {
		f->rows[i].kind = TACHO_LIVE_PROCESS;
		f->rows[i].id = 100 + i;
		f->rows[i].pid = 100 + i;
		f->rows[i].name = tc_frame_str(f, i ? "b\"q" : "a");
		f->rows[i].cpus = NAN;
		f->rows[i].values = v = &f->vals[3 * i];
		v[0] = (struct tacho_live_value){ .status = TACHO_COUNT_COUNTED, .total = 1500,
						  .rate = 500, .coverage = 1 };
		v[1] = (struct tacho_live_value){ .status = TACHO_COUNT_COUNTED, .total = 12345,
						  .rate = 10, .coverage = 1 };
		v[2] = (struct tacho_live_value){ .status = TACHO_COUNT_NOT_SUPPORTED, .total = NAN,
						  .rate = NAN, .why = tc_frame_str(f, "no PMU") };
	}
	return f;
}

static char *metrics(const struct tacho_live_frame *f, enum tacho_metrics_format fmt,
		     unsigned parts)
{
	struct tacho_metrics_opts mo = { .sz = sizeof(mo), .format = fmt, .scrape_s = 0.25,
					 .scrapes = 4, .parts = parts };
	char *s = NULL;
	size_t n;
	FILE *m = open_memstream(&s, &n);

	assert_non_null(m);
	assert_int_equal(tacho_live_frame_write_metrics(f, m, &mo), 0);
	fclose(m);
	return s;
}

static void test_metrics(void **state)
{
	static const char prom[] =
		"# HELP tacho_task_clock_seconds_total Count of the perf event task-clock, in "
		"seconds since tacho began counting the target.\n"
		"# TYPE tacho_task_clock_seconds_total counter\n"
		"tacho_task_clock_seconds_total{event=\"task-clock\",pid=\"100\",comm=\"a\"} 1.5\n"
		"tacho_task_clock_seconds_total{event=\"task-clock\",pid=\"101\",comm=\"b\\\"q\"} 1.5\n"
		"# HELP tacho_syscalls_sys_enter_write_total Count of the perf event "
		"syscalls:sys_enter_write since tacho began counting the target.\n"
		"# TYPE tacho_syscalls_sys_enter_write_total counter\n"
		"tacho_syscalls_sys_enter_write_total{event=\"syscalls:sys_enter_write\",pid=\"100\","
		"comm=\"a\"} 12345\n"
		"tacho_syscalls_sys_enter_write_total{event=\"syscalls:sys_enter_write\",pid=\"101\","
		"comm=\"b\\\"q\"} 12345\n"
		"# HELP tacho_cycles_total Count of the perf event cycles since tacho began "
		"counting the target.\n"
		"# TYPE tacho_cycles_total counter\n"
		"# HELP tacho_not_counted Rows of the frame whose value of an event has no number, "
		"by event, status and reason.\n"
		"# TYPE tacho_not_counted gauge\n"
		"tacho_not_counted{event=\"cycles\",status=\"not supported\",reason=\"no PMU\"} 2\n"
		"# HELP tacho_rows Rows (targets) counted in the frame.\n"
		"# TYPE tacho_rows gauge\n"
		"tacho_rows{view=\"process\"} 2\n"
		"# HELP tacho_targets_left_out Targets not counted in the frame, by reason: beyond "
		"the row cap, other users' processes, the file descriptor limit.\n"
		"# TYPE tacho_targets_left_out gauge\n"
		"tacho_targets_left_out{reason=\"max_rows\"} 7\n"
		"tacho_targets_left_out{reason=\"permission\"} 1\n"
		"tacho_targets_left_out{reason=\"descriptors\"} 0\n"
		"# HELP tacho_sample_duration_seconds How long the sampling pass that made the "
		"frame took.\n"
		"# TYPE tacho_sample_duration_seconds gauge\n"
		"tacho_sample_duration_seconds 0.001\n"
		"# HELP tacho_frame_timestamp_seconds When the frame was taken, in seconds since "
		"the Epoch.\n"
		"# TYPE tacho_frame_timestamp_seconds gauge\n"
		"tacho_frame_timestamp_seconds 1700000000.5\n"
		"# HELP tacho_perf_descriptors perf_event descriptors held.\n"
		"# TYPE tacho_perf_descriptors gauge\n"
		"tacho_perf_descriptors 6\n"
		"# HELP tacho_perf_descriptor_limit perf_event descriptors tacho allows itself.\n"
		"# TYPE tacho_perf_descriptor_limit gauge\n"
		"tacho_perf_descriptor_limit 1000\n";
	static const char scrape_om[] =
		"# HELP tacho_scrape_duration_seconds How long tacho took to answer the previous "
		"scrape.\n"
		"# TYPE tacho_scrape_duration_seconds gauge\n"
		"# UNIT tacho_scrape_duration_seconds seconds\n"
		"tacho_scrape_duration_seconds 0.25\n"
		"# HELP tacho_scrapes Scrapes answered before this one.\n"
		"# TYPE tacho_scrapes counter\n"
		"tacho_scrapes_total 4\n"
		"# EOF\n";
	struct tacho_live_frame *f = metrics_frame();
	char *s;
	(void)state;

	s = metrics(f, TACHO_METRICS_PROMETHEUS, TACHO_METRICS_FRAME);
	assert_string_equal(s, prom);
	free(s);
	s = metrics(NULL, TACHO_METRICS_OPENMETRICS, TACHO_METRICS_SCRAPE);
	assert_string_equal(s, scrape_om);
	free(s);
	/* OpenMetrics names families without _total and gives the unit */
	s = metrics(f, TACHO_METRICS_OPENMETRICS, 0);
	assert_contains(s, "# TYPE tacho_task_clock_seconds counter\n"
			   "# UNIT tacho_task_clock_seconds seconds\n"
			   "tacho_task_clock_seconds_total{");
	assert_true(strlen(s) > 6 && !strcmp(s + strlen(s) - 6, "# EOF\n"));
	free(s);
	/* the Prometheus format has no # UNIT and no # EOF */
	s = metrics(f, TACHO_METRICS_PROMETHEUS, 0);
	assert_not_contains(s, "# UNIT");
	assert_not_contains(s, "# EOF");
	assert_contains(s, "# TYPE tacho_scrapes_total counter\ntacho_scrapes_total 4\n");
	free(s);
	{
		char *b = NULL;
		size_t n;
		FILE *m = open_memstream(&b, &n);
		assert_int_equal(tacho_live_frame_write_metrics(NULL, m, NULL), -EINVAL);
		fclose(m);
		free(b);
	}
	tacho_live_frame_put(f);
}

/* --- live --- */

static bool have_write_tracepoint(void)
{
	return access("/sys/kernel/tracing/events/syscalls/sys_enter_write", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/events/syscalls/sys_enter_write", F_OK) == 0;
}

static struct tacho_evlist *events(const char *spec)
{
	struct tacho_evlist *l;

	assert_int_equal(tacho_evlist_parse(spec, &l, NULL), 0);
	return l;
}

/* live-helper writes N, counted from its exec by a process row: exactly N, in the frame
 * that sees it end. */
static void test_child_exact(void **state)
{
	char *argv[] = { (char *)th_prog("live-helper"), (char *)"writes", (char *)"7777", NULL };
	struct tacho_live_opts o = { .sz = sizeof(o), .view = TACHO_LIVE_PROCESS, .child = true };
	struct tacho_evlist *l;
	struct tacho_child *ch;
	struct tacho_live *lv;
	struct tacho_live_frame *f = NULL;
	const struct tacho_live_row *r;
	int e;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	l = events("syscalls:sys_enter_write,task-clock");
	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	o.events = l;
	o.pid = tacho_child_pid(ch);
	assert_int_equal(tacho_live_new(&o, &lv, NULL), 0);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	r = tacho_live_frame_row(f, 0);
	assert_non_null(r);
	assert_true(isnan(r->values[0].rate));   /* the first frame has no rate */
	tacho_live_frame_put(f);
	assert_int_equal(tacho_child_exec(ch, NULL), 0);
	assert_int_equal(tacho_child_wait(ch, NULL), 0);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	assert_int_equal(tacho_live_frame_nrows(f), 1);
	r = tacho_live_frame_row(f, 0);
	e = tacho_live_frame_event_index(f, "syscalls:sys_enter_write");
	assert_int_equal(e, 0);
	assert_true(r->ended);
	assert_int_equal(r->values[e].status, TACHO_COUNT_COUNTED);
	assert_true(r->values[e].total == 7777);
	assert_true(r->values[e].rate > 0);
	assert_int_equal(r->nhistory, 2);
	assert_string_equal(tacho_live_frame_unit(f, 1), "msec");
	assert_int_equal(tacho_live_frame_health(f)->ended, 1);
	tacho_live_frame_put(f);
	/* the ended row is gone from the next frame */
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	assert_int_equal(tacho_live_frame_nrows(f), 0);
	tacho_live_frame_put(f);
	tacho_live_free(lv);
	tacho_child_free(ch);
	tacho_evlist_free(l);
}

/* The machine, every CPU, the threads of a process. */
static void test_views(void **state)
{
	char *argv[] = { (char *)th_prog("live-helper"), (char *)"threads", (char *)"3",
			 (char *)"3000", NULL };
	struct tacho_live_opts o = { .sz = sizeof(o) };
	struct tacho_evlist *l = events("task-clock,context-switches");
	struct tacho_live_frame *f;
	struct tacho_child *ch;
	struct tacho_live *lv;
	int *cpus;
	size_t ncpus, nt = 0;
	pid_t *tids;
	double end;
	(void)state;

	o.events = l;
	assert_int_equal(tc_online_cpus(&cpus, &ncpus), 0);
	free(cpus);
	o.view = TACHO_LIVE_CPU;
	if (tacho_live_new(&o, &lv, NULL) == 0) {
		assert_int_equal(tacho_live_sample(lv, &f), 0);
		assert_int_equal(tacho_live_frame_nrows(f), ncpus);
		assert_string_equal(tacho_live_frame_row(f, 0)->name, "cpu0");
		tacho_live_frame_put(f);
		tacho_live_free(lv);
	}
	o.view = TACHO_LIVE_MACHINE;
	assert_int_equal(tacho_live_new(&o, &lv, NULL), 0);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	assert_int_equal(tacho_live_frame_nrows(f), 1);
	assert_string_equal(tacho_live_frame_row(f, 0)->name, "all");
	tacho_live_frame_put(f);
	tacho_live_free(lv);

	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	assert_int_equal(tacho_child_exec(ch, NULL), 0);
	end = th_now() + 10;
	while (nt != 4 && th_now() < end) {
		if (!tc_proc_threads(tacho_child_pid(ch), &tids, &nt))
			free(tids);
		usleep(10000);
	}
	assert_int_equal(nt, 4);
	o.view = TACHO_LIVE_THREAD;
	o.pid = tacho_child_pid(ch);
	assert_int_equal(tacho_live_new(&o, &lv, NULL), 0);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	assert_int_equal(tacho_live_frame_nrows(f), 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(tacho_live_frame_row(f, i)->pid, tacho_child_pid(ch));
		assert_int_equal(tacho_live_frame_row(f, i)->kind, TACHO_LIVE_THREAD);
	}
	tacho_live_frame_put(f);
	tacho_live_free(lv);
	tacho_child_kill(ch, SIGKILL);
	tacho_child_free(ch);
	tacho_evlist_free(l);
}

/* Every process with a budget of 9 descriptors and 4 events: two processes at most,
 * the rest said to be left out for want of descriptors. */
static void test_fd_budget(void **state)
{
	struct tacho_live_opts o = { .sz = sizeof(o), .view = TACHO_LIVE_PROCESS, .fd_limit = 9,
				     .max_rows = 1000 };
	struct tacho_evlist *l = events("task-clock,context-switches,page-faults,cpu-migrations");
	const struct tacho_live_health *h;
	struct tacho_live_frame *f;
	struct tacho_live *lv;
	(void)state;

	o.events = l;
	assert_int_equal(tacho_live_new(&o, &lv, NULL), 0);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	h = tacho_live_frame_health(f);
	assert_true(h->fds <= 9);
	assert_true(h->no_descriptors > 0);
	assert_true(tacho_live_frame_nrows(f) <= 2);
	assert_int_equal(h->fd_limit, 9);
	tacho_live_frame_put(f);
	tacho_live_free(lv);
	tacho_evlist_free(l);
}

static void test_bad_options(void **state)
{
	static const char *const cg[] = { "tacho-no-such-cgroup" };
	struct tacho_live_opts o = { .sz = sizeof(o), .view = TACHO_LIVE_PROCESS };
	struct tacho_evlist *l = events("task-clock");
	struct tacho_live *lv = NULL;
	struct tacho_diag d;
	(void)state;

	assert_int_equal(tacho_live_new(&o, &lv, NULL), -EINVAL);   /* no events */
	o.events = l;
	o.view = TACHO_LIVE_VIEW_COUNT;
	assert_int_equal(tacho_live_new(&o, &lv, NULL), -EINVAL);
	o.view = TACHO_LIVE_PROCESS;
	o.child = true;
	assert_int_equal(tacho_live_new(&o, &lv, NULL), -EINVAL);   /* a child needs a pid */
	o.child = false;
	o.pid = 0x7ffffff0;
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	assert_int_equal(tacho_live_new(&o, &lv, &d), -ESRCH);
	assert_contains(d.message, "no process");
	o.pid = 0;
	o.view = TACHO_LIVE_CGROUP;
	o.cgroups = cg;
	o.ncgroups = 1;
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	assert_int_equal(tacho_live_new(&o, &lv, &d), -ENOENT);
	assert_contains(d.message, "tacho-no-such-cgroup");
	assert_null(lv);
	tacho_evlist_free(l);
	assert_int_equal(tacho_live_view_parse("thread", &o.view), 0);
	assert_int_equal(o.view, TACHO_LIVE_THREAD);
	assert_int_equal(tacho_live_view_parse("threads", &o.view), -EINVAL);
	assert_string_equal(tacho_live_view_name(TACHO_LIVE_CGROUP), "cgroup");
}

/* Options from a program built against a newer tacho.h (a field past the struct this
 * library knows, set): refused with -TACHO_EVERSION before anything is made, *diag
 * naming the struct; the same struct with that field zero is this library's, and an
 * sz of 0 is below every first version. Each entry of the live part: the rule, the
 * sampler, the throttle, the metrics, the watch session and its rules. */
static void test_newer_opts(void **state)
{
	struct tacho_evlist *l = events("task-clock");
	struct tacho_diag d;
	(void)state;

	{       /* tacho_rule_new */
		struct { struct tacho_rule_opts o; long future; } n;
		struct tacho_rule *r = NULL;

		memset(&n, 0, sizeof(n));
		n.o.sz = sizeof(n);
		n.o.input = "page-faults";
		n.o.dir = TACHO_RULE_ABOVE;
		n.o.threshold = 1;
		n.future = 1;
		memset(&d, 0, sizeof(d));
		d.sz = sizeof(d);
		assert_int_equal(tacho_rule_new(&n.o, &r, &d), -TACHO_EVERSION);
		assert_contains(d.message, "struct tacho_rule_opts");
		assert_contains(d.message, "newer tacho.h");
		assert_null(r);
		n.future = 0;
		assert_int_equal(tacho_rule_new(&n.o, &r, NULL), 0);
		tacho_rule_free(r);
		r = NULL;
		/* the first version has no hysteresis: what lies there is not read */
		n.o.sz = offsetof(struct tacho_rule_opts, hysteresis);
		n.o.hysteresis = 1.5;
		assert_int_equal(tacho_rule_new(&n.o, &r, NULL), 0);
		tacho_rule_free(r);
		r = NULL;
		n.o.sz = 0;
		memset(&d, 0, sizeof(d));
		d.sz = sizeof(d);
		assert_int_equal(tacho_rule_new(&n.o, &r, &d), -EINVAL);
		assert_contains(d.message, "bad rule options");
		assert_null(r);
	}
	{       /* tacho_live_new: with the field zero, the missing process answers */
		struct { struct tacho_live_opts o; long future; } n;
		struct tacho_live *lv = NULL;

		memset(&n, 0, sizeof(n));
		n.o.sz = sizeof(n);
		n.o.events = l;
		n.o.view = TACHO_LIVE_PROCESS;
		n.o.pid = 0x7ffffff0;
		n.future = 1;
		memset(&d, 0, sizeof(d));
		d.sz = sizeof(d);
		assert_int_equal(tacho_live_new(&n.o, &lv, &d), -TACHO_EVERSION);
		assert_contains(d.message, "struct tacho_live_opts");
		assert_null(lv);
		n.future = 0;
		assert_int_equal(tacho_live_new(&n.o, &lv, NULL), -ESRCH);
		assert_null(lv);
		n.o.sz = 0;
		assert_int_equal(tacho_live_new(&n.o, &lv, NULL), -EINVAL);
		assert_null(lv);
	}
	{       /* tacho_throttle_new: likewise */
		struct { struct tacho_throttle_opts o; long future; } n;
		struct tacho_throttle *t = NULL;

		memset(&n, 0, sizeof(n));
		n.o.sz = sizeof(n);
		n.o.kind = TACHO_THROTTLE_CAP;
		n.o.pid = 0x7ffffff0;
		n.future = 1;
		memset(&d, 0, sizeof(d));
		d.sz = sizeof(d);
		assert_int_equal(tacho_throttle_new(&n.o, &t, &d), -TACHO_EVERSION);
		assert_contains(d.message, "struct tacho_throttle_opts");
		n.future = 0;
		assert_int_equal(tacho_throttle_new(&n.o, &t, NULL), -ESRCH);
		n.o.sz = 0;
		assert_int_equal(tacho_throttle_new(&n.o, &t, NULL), -EINVAL);
		assert_null(t);
	}
	{       /* tacho_live_frame_write_metrics: the scrape part alone, no frame */
		struct { struct tacho_metrics_opts o; long future; } n;
		char *b = NULL;
		size_t len;
		FILE *m = open_memstream(&b, &len);

		assert_non_null(m);
		memset(&n, 0, sizeof(n));
		n.o.sz = sizeof(n);
		n.o.scrape_s = NAN;
		n.o.scrapes = 3;
		n.o.parts = TACHO_METRICS_SCRAPE;
		n.future = 1;
		assert_int_equal(tacho_live_frame_write_metrics(NULL, m, &n.o), -TACHO_EVERSION);
		n.o.sz = 0;
		assert_int_equal(tacho_live_frame_write_metrics(NULL, m, &n.o), -EINVAL);
		fflush(m);
		assert_int_equal(len, 0);      /* nothing written */
		n.o.sz = sizeof(n);
		n.future = 0;
		assert_int_equal(tacho_live_frame_write_metrics(NULL, m, &n.o), 0);
		fclose(m);
		assert_contains(b, "tacho_scrapes_total 3\n");
		free(b);
	}
	{       /* tacho_watch_new, tacho_watch_add */
		struct { struct tacho_watch_opts o; long future; } n;
		struct tacho_rule_opts ro = { .sz = sizeof(ro), .input = "page-faults",
					      .dir = TACHO_RULE_ABOVE, .threshold = 1 };
		struct { struct tacho_watch_rule_opts o; long future; } rn;
		struct tacho_watch *w = NULL;

		memset(&n, 0, sizeof(n));
		n.o.sz = sizeof(n);
		n.future = 1;
		assert_int_equal(tacho_watch_new(&n.o, &w), -TACHO_EVERSION);
		assert_null(w);
		n.o.sz = 0;
		assert_int_equal(tacho_watch_new(&n.o, &w), -EINVAL);
		assert_null(w);
		n.o.sz = sizeof(n);
		n.future = 0;
		assert_int_equal(tacho_watch_new(&n.o, &w), 0);
		assert_non_null(w);
		memset(&rn, 0, sizeof(rn));
		rn.o.sz = sizeof(rn);
		rn.o.rule = &ro;
		rn.future = 1;
		memset(&d, 0, sizeof(d));
		d.sz = sizeof(d);
		assert_int_equal(tacho_watch_add(w, &rn.o, &d), -TACHO_EVERSION);
		assert_contains(d.message, "struct tacho_watch_rule_opts");
		assert_int_equal(tacho_watch_nrules(w), 0);
		rn.o.sz = 0;
		assert_int_equal(tacho_watch_add(w, &rn.o, NULL), -EINVAL);
		rn.o.sz = sizeof(rn);
		rn.future = 0;
		assert_int_equal(tacho_watch_add(w, &rn.o, NULL), 0);
		assert_int_equal(tacho_watch_nrules(w), 1);
		tacho_watch_free(w);
	}
	tacho_evlist_free(l);
}

/* --- cgroups, live (root with a writable hierarchy) --- */

static bool perf_cgroup_root(char *buf, size_t size)
{
	struct tc_cgroup_mounts m;
	const char *r;

	if (tc_cgroup_mounts_read(NULL, &m) || !(r = tc_cgroup_perf_root(&m)))
		return false;
	snprintf(buf, size, "%s", r);
	return access(r, W_OK) == 0;
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* A program held before its exec is moved into a fresh cgroup; the cgroup's row counts
 * its writes exactly (perf's cgroup mode, on every CPU). */
static void test_cgroup_exact(void **state)
{
	char *argv[] = { (char *)th_prog("live-helper"), (char *)"writes", (char *)"4321", NULL };
	char root[PATH_MAX], dir[PATH_MAX + 96], procs[PATH_MAX + 128], pid[32], name[64];
	const char *cgs[1] = { name };
	struct tacho_live_opts o = { .sz = sizeof(o), .view = TACHO_LIVE_CGROUP, .cgroups = cgs,
				     .ncgroups = 1 };
	struct tacho_evlist *l;
	struct tacho_live_frame *f;
	struct tacho_child *ch;
	struct tacho_live *lv;
	const struct tacho_live_row *r;
	int err;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	if (!perf_cgroup_root(root, sizeof(root)))
		TEST_SKIP("no perf_event cgroup hierarchy this user can write");
	snprintf(name, sizeof(name), "tacho-test-live-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "%s/%s", root, name);
	assert_int_equal(mkdir(dir, 0755), 0);
	l = events("syscalls:sys_enter_write");
	o.events = l;
	err = tacho_live_new(&o, &lv, NULL);
	if (err) {
		rmdir(dir);
		tacho_evlist_free(l);
		if (err == -EACCES || err == -EPERM)
			TEST_SKIP("CPU-wide counting is not allowed here");
		fail_msg("tacho_live_new: %s", tacho_strerror(err));
	}
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	assert_string_equal(tacho_live_frame_row(f, 0)->name + 1, name);
	tacho_live_frame_put(f);
	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", (int)tacho_child_pid(ch));
	write_file(procs, pid);
	assert_int_equal(tacho_child_exec(ch, NULL), 0);
	assert_int_equal(tacho_child_wait(ch, NULL), 0);
	tacho_child_free(ch);
	assert_int_equal(tacho_live_sample(lv, &f), 0);
	r = tacho_live_frame_row(f, 0);
	assert_int_equal(r->kind, TACHO_LIVE_CGROUP);
	if (r->values[0].status == TACHO_COUNT_NOT_SUPPORTED)
		fail_msg("cgroup event not opened: %s", r->values[0].why);
	assert_true(r->values[0].total == 4321);
	tacho_live_frame_put(f);
	tacho_live_free(lv);
	tacho_evlist_free(l);
	assert_int_equal(rmdir(dir), 0);
}

/* --- throttles --- */

static struct tacho_child *waiting_child(void)
{
	char *argv[] = { (char *)th_prog("live-helper"), (char *)"wait", NULL };
	struct tacho_child *ch;

	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	assert_int_equal(tacho_child_exec(ch, NULL), 0);
	return ch;
}

static char proc_state(pid_t pid)
{
	struct tc_proc_stat st;

	return tc_task_stat("/proc", pid, pid, &st) ? '?' : st.state;
}

/* The cgroup made, the process in it, the limit written; lifted; the process back home
 * and the cgroup gone. */
static void test_throttle_cap(void **state)
{
	struct tacho_throttle_opts o = { .sz = sizeof(o), .kind = TACHO_THROTTLE_CAP };
	struct tacho_throttle *t;
	struct tacho_child *ch = waiting_child();
	char dir[PATH_MAX], path[PATH_MAX + 64], buf[256], before[512], *procs;
	struct tacho_diag d;
	int err, version;
	(void)state;

	o.pid = tacho_child_pid(ch);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)o.pid);
	procs = th_slurp(path);
	snprintf(before, sizeof(before), "%s", procs);
	free(procs);
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	err = tacho_throttle_new(&o, &t, &d);
	if (err == -ENOENT) {
		tacho_child_free(ch);
		TEST_SKIP("%s", d.message);
	}
	assert_int_equal(err, 0);
	/* "cgroup vN DIR (FILE)" */
	assert_int_equal(sscanf(tacho_throttle_where(t), "cgroup v%d %4095s", &version, dir), 2);
	assert_true(access(dir, F_OK) != 0);          /* nothing made before the first apply */
	assert_int_equal(tacho_throttle_apply(t, 0.25), 0);
	assert_true(tacho_throttle_active(t));
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	procs = th_slurp(path);
	snprintf(buf, sizeof(buf), "%d\n", (int)o.pid);
	assert_contains(procs, buf);
	free(procs);
	if (version == 2) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		assert_int_equal(tc_read_line_file(path, buf, sizeof(buf)), 0);
		assert_string_equal(buf, "25000 100000");
	} else {
		snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
		assert_int_equal(tc_read_line_file(path, buf, sizeof(buf)), 0);
		assert_string_equal(buf, "25000");
	}
	/* the feedback: measured twice the target, the quota goes down by sqrt(1/2);
	 * then 4x again: clamped at a quarter of the applied share; then far below: at
	 * most twice; a step under 2 % or a measure that is not positive changes nothing */
	assert_int_equal(tacho_throttle_feedback(t, 0.5, 0.25), 0);
	assert_int_equal(tc_read_line_file(path, buf, sizeof(buf)), 0);
	assert_int_equal(atoi(buf), 17678);                   /* 25000 / sqrt(2) */
	for (int i = 0; i < 8; i++)
		assert_int_equal(tacho_throttle_feedback(t, 1.0, 0.25), 0);
	assert_int_equal(tc_read_line_file(path, buf, sizeof(buf)), 0);
	assert_int_equal(atoi(buf), 6250);
	for (int i = 0; i < 8; i++)
		assert_int_equal(tacho_throttle_feedback(t, 0.01, 0.25), 0);
	assert_int_equal(tc_read_line_file(path, buf, sizeof(buf)), 0);
	assert_int_equal(atoi(buf), 50000);
	assert_int_equal(tacho_throttle_feedback(t, 0.25, 0.2525), 0);
	assert_int_equal(tacho_throttle_feedback(t, 0, 0.25), 0);
	assert_int_equal(tacho_throttle_feedback(t, NAN, 0.25), 0);
	assert_int_equal(tc_read_line_file(path, buf, sizeof(buf)), 0);
	assert_int_equal(atoi(buf), 50000);
	assert_int_equal(tacho_throttle_feedback(NULL, 1, 1), -EINVAL);
	/* at least 1 ms a period */
	assert_int_equal(tacho_throttle_apply(t, 0.0001), 0);
	assert_int_equal(tc_read_line_file(path, buf, sizeof(buf)), 0);
	assert_true(!strcmp(buf, "1000") || !strcmp(buf, "1000 100000"));
	assert_int_equal(tacho_throttle_lift(t), 0);
	assert_false(tacho_throttle_active(t));
	assert_int_equal(tc_read_line_file(path, buf, sizeof(buf)), 0);
	assert_true(!strcmp(buf, "-1") || !strcmp(buf, "max 100000"));
	assert_int_equal(tacho_throttle_apply(t, 0.5), 0);
	tacho_throttle_free(t);                        /* lifts, moves back, removes */
	assert_true(access(dir, F_OK) != 0);
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)o.pid);
	procs = th_slurp(path);
	assert_string_equal(procs, before);
	free(procs);
	tacho_child_free(ch);
}

static void test_throttle_duty(void **state)
{
	struct tacho_throttle_opts o = { .sz = sizeof(o), .kind = TACHO_THROTTLE_DUTY,
					 .period_us = 20000 };
	struct tacho_child *ch = waiting_child();
	struct tacho_throttle *t;
	bool stopped = false, running = false;
	double end;
	(void)state;

	o.pid = tacho_child_pid(ch);
	assert_int_equal(tacho_throttle_new(&o, &t, NULL), 0);
	assert_contains(tacho_throttle_where(t), "SIGSTOP/SIGCONT of process");
	assert_int_equal(tacho_throttle_apply(t, 1.0), -EINVAL);
	assert_int_equal(tacho_throttle_apply(t, 0.5), 0);
	/* stopped and continued in turn, 10 ms each */
	end = th_now() + 10;
	while (!(stopped && running) && th_now() < end) {
		char s = proc_state(o.pid);
		stopped |= s == 'T';
		running |= s == 'S';
		usleep(1000);
	}
	assert_true(stopped && running);
	assert_int_equal(tacho_throttle_lift(t), 0);
	usleep(50000);
	for (int i = 0; i < 20; i++, usleep(5000))
		assert_int_not_equal(proc_state(o.pid), 'T');
	assert_int_equal(tacho_throttle_apply(t, 0.01), 0);
	usleep(30000);
	tacho_throttle_free(t);                        /* continues it */
	for (int i = 0; i < 20; i++, usleep(5000))
		assert_int_not_equal(proc_state(o.pid), 'T');
	tacho_child_free(ch);
}

static void test_throttle_no_controller(void **state)
{
	struct tacho_throttle_opts o = { .sz = sizeof(o), .kind = TACHO_THROTTLE_CAP };
	struct tacho_throttle *t = NULL;
	struct tacho_diag d;
	FILE *f;
	(void)state;

	f = fopen(th_tmp("mounts"), "w");
	assert_non_null(f);
	fputs("proc /proc proc rw 0 0\ncgroup2 /nonexistent-cgroup2 cgroup2 ro 0 0\n", f);
	fclose(f);
	o.mounts = th_tmp("mounts");
	o.pid = getpid();
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	assert_int_equal(tacho_throttle_new(&o, &t, &d), -ENOENT);
	assert_contains(d.message, "no cgroup CPU controller this user can write");
	assert_null(t);
	o.pid = 0x7ffffff0;
	assert_int_equal(tacho_throttle_new(&o, &t, NULL), -ESRCH);
	o.pid = 0;
	assert_int_equal(tacho_throttle_new(&o, &t, NULL), -EINVAL);
}

/* --- the watch session, on frames made by hand --- */

/* A frame at time t (interval 1) with one process row: page-faults, context-switches and
 * task-clock (msec per second) at these rates, each with a history of three seconds at
 * the same rate. */
static struct tacho_live_frame *wframe(double t, double pf, double cs, double tc)
{
	static const char *const ev[] = { "page-faults", "context-switches", "task-clock" };
	static const char *const un[] = { "", "", "msec" };
	struct tacho_live_frame *f = tc_frame_new(3, ev, un, 1, 3);
	double r[3] = { pf, cs, tc };

	assert_non_null(f);
	f->view = TACHO_LIVE_PROCESS;
	f->time = t;
	f->interval = 1;
	f->rows[0].kind = TACHO_LIVE_PROCESS;
	f->rows[0].id = 42;
	f->rows[0].name = tc_frame_str(f, "prog");
	f->rows[0].values = f->vals;
	f->rows[0].history = f->hist;
	f->rows[0].nhistory = 3;
	for (int e = 0; e < 3; e++) {
		f->vals[e].status = TACHO_COUNT_COUNTED;
		f->vals[e].rate = r[e];
		f->vals[e].total = r[e] * t;
		for (int k = 0; k < 3; k++)
			f->hist[e * 3 + k] = r[e];
	}
	return f;
}

/* One step of w on a frame of wframe's: the number of changes. */
static size_t wstep(struct tacho_watch *w, double t, double pf, double cs, double tc)
{
	struct tacho_live_frame *f = wframe(t, pf, cs, tc);
	struct tacho_watch_result res = { .sz = sizeof(res) };

	assert_int_equal(tacho_watch_step(w, f, &res), 0);
	tacho_live_frame_put(f);
	assert_int_equal(res.feedback, 0);
	return res.nchanges;
}

static int add_rule(struct tacho_watch *w, const char *input, enum tacho_rule_dir dir,
		    double threshold, double for_s, int sig, double cap, double duty)
{
	struct tacho_rule_opts ro = { .sz = sizeof(ro), .input = input, .dir = dir,
				      .threshold = threshold, .for_s = for_s };
	struct tacho_watch_rule_opts o = { .sz = sizeof(o), .rule = &ro, .signal = sig,
					   .cap = cap, .duty = duty };

	return tacho_watch_add(w, &o, NULL);
}

static void test_watch_session(void **state)
{
	struct tacho_child *ch = waiting_child();
	pid_t pid = tacho_child_pid(ch);
	struct tacho_watch_result res = { .sz = sizeof(res) };
	struct tacho_live_frame *f;
	const struct tacho_watch_change *c;
	struct tacho_watch *w;
	struct tacho_diag d;
	char desc[128];
	double end;
	(void)state;

	assert_int_equal(tacho_watch_new(NULL, &w), 0);
	assert_string_equal(tacho_watch_events(w), "");
	/* the rules: a rate held two seconds that stops the target; a ratio below */
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 100, 2, SIGSTOP, 0, 0), 0);
	assert_int_equal(add_rule(w, "context-switches/page-faults", TACHO_RULE_BELOW, 0.5, 0, 0,
				  0, 0), 1);
	assert_int_equal(tacho_watch_nrules(w), 2);
	assert_string_equal(tacho_watch_events(w), "page-faults,context-switches,task-clock");
	tacho_rule_describe(tacho_watch_rule(w, 1), desc, sizeof(desc));
	assert_string_equal(desc, "context-switches/page-faults below 0.5 (lifts above 0.55)");
	assert_null(tacho_watch_rule(w, 2));
	/* bad rules and actions, refused before anything runs */
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	{
		struct tacho_rule_opts ro = { .sz = sizeof(ro), .input = "page-faultz",
					      .threshold = 1 };
		struct tacho_watch_rule_opts o = { .sz = sizeof(o), .rule = &ro };
		assert_int_equal(tacho_watch_add(w, &o, &d), -TACHO_ENOEVENT);
		assert_true(d.column > 0);
		o.sz = 8;
		assert_int_equal(tacho_watch_add(w, &o, NULL), -EINVAL);
	}
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 1, 0, 0, 25, 25), -EINVAL);
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 1, 0, 0, 0, 100), -EINVAL);
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 1, 0, 65, 0, 0), -EINVAL);
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 1, 0, 0, -1, 0), -EINVAL);
	assert_int_equal(tacho_watch_nrules(w), 2);
	/* nothing runs before the target is known; a target is one process or one cgroup */
	f = wframe(1, 1, 1, 1);
	assert_int_equal(tacho_watch_step(w, f, NULL), -EINVAL);
	tacho_live_frame_put(f);
	assert_int_equal(tacho_watch_start(w, 0, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(tacho_watch_start(w, pid, "/x", NULL, NULL), -EINVAL);
	assert_int_equal(tacho_watch_start(w, pid, NULL, NULL, NULL), 0);
	assert_int_equal(tacho_watch_start(w, pid, NULL, NULL, NULL), -EINVAL);
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 1, 0, 0, 0, 0), -EINVAL);
	assert_null(tacho_watch_throttle(w, TACHO_THROTTLE_CAP));
	assert_null(tacho_watch_throttle(w, TACHO_THROTTLE_DUTY));
	res.sz = 8;
	f = wframe(1, 1, 1, 1);
	assert_int_equal(tacho_watch_step(w, f, &res), -EINVAL);
	tacho_live_frame_put(f);

	/* second by second: the first rule fires after two seconds above, and stops the
	 * process; the ratio fires and lifts in the same seconds */
	assert_int_equal(wstep(w, 1, 150, 100, 10), 0);
	assert_int_equal(wstep(w, 2, 150, 50, 10), 2);
	c = tacho_watch_step_change(w, 0);
	assert_non_null(c);
	assert_int_equal(c->rule, 0);
	assert_int_equal(c->change, TACHO_RULE_FIRED);
	assert_true(c->value == 150 && c->time == 2);
	assert_int_equal(c->signal, SIGSTOP);
	assert_int_equal(c->signalled, 1);
	assert_int_equal(c->cap.did, TACHO_WATCH_UNTOUCHED);
	assert_int_equal(c->duty.did, TACHO_WATCH_UNTOUCHED);
	c = tacho_watch_step_change(w, 1);
	assert_int_equal(c->rule, 1);
	assert_int_equal(c->change, TACHO_RULE_FIRED);
	assert_true(c->value == 50.0 / 150);
	assert_int_equal(c->signal, 0);
	assert_null(tacho_watch_step_change(w, 2));
	assert_true(tacho_rule_active(tacho_watch_rule(w, 0)));
	end = th_now() + 5;
	while (proc_state(pid) != 'T' && th_now() < end)
		usleep(1000);
	assert_int_equal(proc_state(pid), 'T');
	assert_int_equal(kill(pid, SIGCONT), 0);
	/* both within their bands, then back; a frame without rows changes nothing */
	assert_int_equal(wstep(w, 3, 95, 50, 10), 0);
	f = tc_frame_new(0, NULL, NULL, 0, 0);
	res.sz = sizeof(res);
	assert_int_equal(tacho_watch_step(w, f, &res), 0);
	assert_int_equal(res.nchanges, 0);
	tacho_live_frame_put(f);
	assert_int_equal(wstep(w, 4, 80, 90, 10), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->rule, 1);
	assert_int_equal(c->change, TACHO_RULE_LIFTED);
	assert_int_equal(wstep(w, 5, 80, 90, 10), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->rule, 0);
	assert_int_equal(c->change, TACHO_RULE_LIFTED);
	assert_true(c->value == 80 && c->time == 5);
	assert_int_equal(c->signal, 0);        /* a signal goes at the firing alone */
	tacho_watch_free(w);
	tacho_watch_free(NULL);
	tacho_child_free(ch);
}

/* A signal to a cgroup goes to each process its cgroup.procs lists, in the hierarchy a
 * mount table names (here a folder of the test's: no cgroup is touched). */
static void test_watch_signal_cgroup(void **state)
{
	struct tacho_child *ch = waiting_child();
	struct tacho_watch_opts o = { .sz = sizeof(o) };
	const struct tacho_watch_change *c;
	struct tacho_watch *w;
	char text[256];
	double end;
	(void)state;

	assert_int_equal(mkdir(th_tmp("cg"), 0755), 0);
	assert_int_equal(mkdir(th_tmp("cg/grp"), 0755), 0);
	snprintf(text, sizeof(text), "cgroup2 %s cgroup2 rw 0 0\n", th_tmp("cg"));
	write_text(th_tmp("cg-mounts"), text);
	snprintf(text, sizeof(text), "%d\n2147483000\nnot a pid\n", (int)tacho_child_pid(ch));
	write_text(th_tmp("cg/grp/cgroup.procs"), text);
	o.mounts = th_tmp("cg-mounts");
	assert_int_equal(tacho_watch_new(&o, &w), 0);
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 100, 0, SIGSTOP, 0, 0), 0);
	assert_int_equal(tacho_watch_start(w, 0, "grp", NULL, NULL), 0);
	assert_int_equal(wstep(w, 1, 150, 1, 1), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->signal, SIGSTOP);
	assert_int_equal(c->signalled, 1);     /* the one process that exists */
	end = th_now() + 5;
	while (proc_state(tacho_child_pid(ch)) != 'T' && th_now() < end)
		usleep(1000);
	assert_int_equal(proc_state(tacho_child_pid(ch)), 'T');
	kill(tacho_child_pid(ch), SIGCONT);
	tacho_watch_free(w);

	/* a cgroup without cgroup.procs: the signal's error */
	assert_int_equal(tacho_watch_new(&o, &w), 0);
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 100, 0, SIGSTOP, 0, 0), 0);
	assert_int_equal(tacho_watch_start(w, 0, "gone", NULL, NULL), 0);
	assert_int_equal(wstep(w, 1, 150, 1, 1), 1);
	assert_int_equal(tacho_watch_step_change(w, 0)->signalled, -ENOENT);
	tacho_watch_free(w);
	tacho_child_free(ch);
}

/* The quota in the cap's cgroup file, as a number (v1: -1 lifted; v2: max lifted). */
static long cap_quota(const char *file)
{
	char buf[128];

	assert_int_equal(tc_read_line_file(file, buf, sizeof(buf)), 0);
	return strncmp(buf, "max", 3) ? atol(buf) : -1;
}

/* Two capping rules on a real cgroup: the share of the CPU the target used, the
 * smallest share of the holding rules applied, the cap steered toward the rule's event
 * rate at the percentage, re-applied when the smaller rule lifts, lifted with the last;
 * the cgroup gone and the process back home with the session. */
static void test_watch_cap(void **state)
{
	struct tacho_child *ch = waiting_child();
	pid_t pid = tacho_child_pid(ch);
	enum tacho_throttle_kind failed = TACHO_THROTTLE_DUTY;
	const struct tacho_watch_change *c;
	struct tacho_watch *w;
	struct tacho_diag d;
	char dir[PATH_MAX], file[PATH_MAX + 64], before[512], *text;
	int err, version;
	(void)state;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	text = th_slurp(file);
	snprintf(before, sizeof(before), "%s", text);
	free(text);
	assert_int_equal(tacho_watch_new(NULL, &w), 0);
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 40, 0, 0, 25, 0), 0);
	assert_int_equal(add_rule(w, "context-switches", TACHO_RULE_ABOVE, 10, 0, 0, 10, 0), 1);
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	err = tacho_watch_start(w, pid, NULL, &failed, &d);
	if (err == -ENOENT) {
		assert_int_equal(failed, TACHO_THROTTLE_CAP);
		tacho_watch_free(w);
		tacho_child_free(ch);
		TEST_SKIP("%s", d.message);
	}
	assert_int_equal(err, 0);
	assert_null(tacho_watch_throttle(w, TACHO_THROTTLE_DUTY));
	assert_int_equal(sscanf(tacho_throttle_where(tacho_watch_throttle(w, TACHO_THROTTLE_CAP)),
				"cgroup v%d %4095s", &version, dir), 2);
	snprintf(file, sizeof(file), "%s/%s", dir, version == 2 ? "cpu.max" : "cpu.cfs_quota_us");

	assert_int_equal(wstep(w, 1, 20, 5, 500), 0);
	assert_true(access(dir, F_OK) != 0);          /* nothing changed yet */
	/* fires at half a CPU used: a cap of 0.125 CPU, then steered at once: the rate is
	 * 4x its goal (50/s), a step of at most sqrt(2) down */
	assert_int_equal(wstep(w, 2, 200, 5, 500), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->rule, 0);
	assert_int_equal(c->cap.did, TACHO_WATCH_APPLIED);
	assert_true(c->cap.share == 0.125);
	assert_int_equal(c->cap.err, 0);
	assert_int_equal(c->duty.did, TACHO_WATCH_UNTOUCHED);
	assert_int_equal(cap_quota(file), 8839);      /* 12500 / sqrt(2) */
	/* the second rule fires at a quarter of a CPU: 0.025, the smaller, applies */
	assert_int_equal(wstep(w, 3, 200, 20, 250), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->rule, 1);
	assert_int_equal(c->cap.did, TACHO_WATCH_APPLIED);
	assert_true(fabs(c->cap.share - 0.025) < 1e-12);
	assert_int_equal(cap_quota(file), 1768);      /* 2500 / sqrt(2), toward 2/s */
	/* it lifts: the first rule's share again */
	assert_int_equal(wstep(w, 4, 200, 2, 100), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->rule, 1);
	assert_int_equal(c->change, TACHO_RULE_LIFTED);
	assert_int_equal(c->cap.did, TACHO_WATCH_APPLIED);
	assert_true(c->cap.share == 0.125);
	assert_int_equal(cap_quota(file), 8839);
	/* on its goal: no correction */
	assert_int_equal(wstep(w, 5, 50, 2, 100), 0);
	assert_int_equal(cap_quota(file), 8839);
	/* the last lifts: the cap with it */
	assert_int_equal(wstep(w, 6, 30, 2, 100), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->cap.did, TACHO_WATCH_LIFTED);
	assert_int_equal(c->cap.err, 0);
	assert_int_equal(cap_quota(file), -1);
	assert_false(tacho_throttle_active(tacho_watch_throttle(w, TACHO_THROTTLE_CAP)));
	tacho_watch_free(w);                          /* moves back, removes */
	assert_true(access(dir, F_OK) != 0);
	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	text = th_slurp(file);
	assert_string_equal(text, before);
	free(text);
	tacho_child_free(ch);
}

/* A duty rule stops and continues the target while it holds, and no more once it
 * lifts. */
static void test_watch_duty(void **state)
{
	struct tacho_child *ch = waiting_child();
	pid_t pid = tacho_child_pid(ch);
	struct tacho_watch_opts o = { .sz = sizeof(o), .period_us = 20000 };
	const struct tacho_watch_change *c;
	struct tacho_watch *w;
	bool stopped = false, running = false;
	double end;
	(void)state;

	assert_int_equal(tacho_watch_new(&o, &w), 0);
	assert_int_equal(add_rule(w, "page-faults", TACHO_RULE_ABOVE, 100, 0, 0, 0, 50), 0);
	assert_int_equal(tacho_watch_start(w, pid, NULL, NULL, NULL), 0);
	assert_null(tacho_watch_throttle(w, TACHO_THROTTLE_CAP));
	assert_contains(tacho_throttle_where(tacho_watch_throttle(w, TACHO_THROTTLE_DUTY)),
			"SIGSTOP/SIGCONT of process");
	assert_int_equal(wstep(w, 1, 200, 0, 0), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->duty.did, TACHO_WATCH_APPLIED);
	assert_true(c->duty.share == 0.5);
	assert_int_equal(c->cap.did, TACHO_WATCH_UNTOUCHED);
	end = th_now() + 10;
	while (!(stopped && running) && th_now() < end) {
		char st = proc_state(pid);
		stopped |= st == 'T';
		running |= st == 'S';
		usleep(1000);
	}
	assert_true(stopped && running);
	assert_int_equal(wstep(w, 2, 10, 0, 0), 1);
	c = tacho_watch_step_change(w, 0);
	assert_int_equal(c->duty.did, TACHO_WATCH_LIFTED);
	assert_int_equal(c->duty.err, 0);
	usleep(50000);
	for (int i = 0; i < 20; i++, usleep(5000))
		assert_int_not_equal(proc_state(pid), 'T');
	tacho_watch_free(w);
	tacho_child_free(ch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test(test_cpu_busy_parse),
		cmocka_unit_test(test_maps_line),
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_cgroup_mounts),
		cmocka_unit_test(test_cgroup_resolve),
		cmocka_unit_test(test_rate_parse),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_rule_errors),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_child_exact),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_cpu_busy_exact),
		cmocka_unit_test(test_fd_budget),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_newer_opts),
		cmocka_unit_test(test_cgroup_exact),
		cmocka_unit_test(test_throttle_cap),
		cmocka_unit_test(test_throttle_duty),
		cmocka_unit_test(test_throttle_no_controller),
		cmocka_unit_test(test_watch_session),
		cmocka_unit_test(test_watch_signal_cgroup),
		cmocka_unit_test(test_watch_cap),
		cmocka_unit_test(test_watch_duty),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
