/* test-cmd-cache.c - `tacho cache` on this machine: the L1d and L2 it finds are the sizes
 * sysfs gives within one step of the sweep (never above; the largest of up to three runs
 * not below, since a busy neighbour makes a cache look smaller), latencies rise level by
 * level, memory is slower than the last cache; --thorough; the JSON, the CSV and -o; the SVG parses as XML and marks
 * every level and every claim; bad CPUs, sizes, units and counts are one-line errors. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

static char tmpdir[64];

/* The size of cpuN's cache of this level and type from sysfs ("32K"), in bytes; 0 when
 * sysfs does not say. */
static uint64_t sysfs_cache(int cpu, unsigned level, const char *type)
{
	for (unsigned i = 0; i < 8; i++) {
		char path[128], buf[64];
		FILE *f;
		unsigned lv = 0;
		unsigned long long size = 0;
		char unit = 0;
		bool match = false;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%u/level", cpu, i);
		if (!(f = fopen(path, "r")))
			return 0;
		if (fscanf(f, "%u", &lv) != 1)
			lv = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%u/type", cpu, i);
		if ((f = fopen(path, "r"))) {
			match = fgets(buf, sizeof(buf), f) && !strncasecmp(buf, type, strlen(type));
			fclose(f);
		}
		if (lv != level || !match)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%u/size", cpu, i);
		if (!(f = fopen(path, "r")))
			return 0;
		if (fscanf(f, "%llu%c", &size, &unit) < 1)
			size = 0;
		fclose(f);
		return unit == 'K' ? size << 10 : unit == 'M' ? size << 20 : unit == 'G' ? size << 30 : size;
	}
	return 0;
}

static double num(const struct th_json *doc, const char *path)
{
	const struct th_json *v = th_json_get(doc, path);

	if (!v || v->type != TH_JSON_NUMBER)
		fail_msg("%s is not a number", path);
	return v->number;
}

/* The measured level of this number and type, or NULL. */
static const struct th_json *level_of(const struct th_json *doc, unsigned level, const char *type)
{
	const struct th_json *levels = th_json_get(doc, "levels");

	for (size_t i = 0; levels && i < levels->n; i++) {
		const struct th_json *l = levels->items[i];
		const struct th_json *n = th_json_get(l, "level"), *t = th_json_get(l, "type");

		if (n && n->number == level && t && !strcmp(t->string, type))
			return l;
	}
	return NULL;
}

/* The measured size of a level over sysfs's, or NAN when the run shows no such level. */
static double size_ratio(const struct th_json *doc, unsigned level, const char *type, uint64_t want)
{
	const struct th_json *l = level_of(doc, level, type);
	const struct th_json *m = l ? th_json_get(l, "measured_bytes") : NULL;

	return m && m->type == TH_JSON_NUMBER ? m->number / (double)want : NAN;
}

/* The table of levels, for a failure's message: the JSON of the run is long. */
static void levels_text(const struct th_json *doc, char *buf, size_t size)
{
	const struct th_json *levels = th_json_get(doc, "levels");
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; levels && i < levels->n && o + 120 < size; i++) {
		const struct th_json *b = th_json_get(levels->items[i], "measured_bytes");
		const struct th_json *ns = th_json_get(levels->items[i], "latency_ns");

		o += (size_t)snprintf(buf + o, size - o, "level %g: %g bytes, %g ns\n",
				      th_json_get(levels->items[i], "level")->number,
				      b && b->type == TH_JSON_NUMBER ? b->number : -1,
				      ns && ns->type == TH_JSON_NUMBER ? ns->number : -1);
	}
}

/* Up to three runs: a cache shared with a busy neighbour (the host may run another
 * vCPU on this core's other hardware thread, and the test runner keeps this guest's
 * other vCPU busy) keeps fewer of our lines, so it can look smaller, never larger; for
 * seconds at a time, longer than a run's sweeps. So every run must find L1d and L2 no
 * more than one step above sysfs's sizes, and the largest found in the runs within one
 * step of them; each run's latencies must rise level by level to memory. */
static void test_live(void **state)
{
	struct th_run r;
	struct th_json *doc;
	const struct th_json *levels;
	char cpu[16], text[3][2048];
	int c = sched_getcpu();
	uint64_t l1 = sysfs_cache(c, 1, "data"), l2 = sysfs_cache(c, 2, "unified");
	double best1 = 0, best2 = 0, step = 0;
	int run, runs = 0;
	(void)state;

#if !defined(__x86_64__) && !defined(__i386__)
	TEST_SKIP("the chase is timed with the TSC: x86 only");
#endif
	if (!l1 || !l2)
		TEST_SKIP("sysfs gives no L1d or L2 size for CPU %d: nothing to hold the levels against", c);
	snprintf(cpu, sizeof(cpu), "%d", c);
	for (run = 0; run < 3; run++) {
		double last = 0, r1, r2;

		th_tacho(&r, "cache", "-C", cpu, "--json", "--no-bandwidth", "--no-tlb", NULL);
		if (r.status)
			fail_msg("tacho cache failed (%d): %s", r.status, r.err);
		doc = assert_json(r.out);
		runs++;
		assert_json_int(doc, "cpu", c);
		levels_text(doc, text[run], sizeof(text[run]));
		step = num(doc, "measurement.step");
		r1 = size_ratio(doc, 1, "data", l1);
		r2 = size_ratio(doc, 2, "unified", l2);
		if (!(r1 > 0) || !(r2 > 0))
			fail_msg("no measured L1d or L2 in:\n%s", text[run]);
		/* one step of the sweep (with the slack of whole lines), never above */
		if (r1 > pow(step, 1.02) || r2 > pow(step, 1.02))
			fail_msg("L1d or L2 measured more than one step (%.3f) above sysfs's %llu and "
				 "%llu bytes:\n%s", step, (unsigned long long)l1,
				 (unsigned long long)l2, text[run]);
		best1 = fmax(best1, r1);
		best2 = fmax(best2, r2);
		/* level by level, each slower than the one before, on the medians of its points */
		levels = th_json_get(doc, "levels");
		for (size_t i = 0; i < levels->n; i++) {
			const struct th_json *ns = th_json_get(levels->items[i], "latency_ns");

			if (!ns || ns->type != TH_JSON_NUMBER)
				continue;   /* a claimed level the curve does not show */
			if (!(ns->number > last))
				fail_msg("level %zu is not slower than the one before:\n%s", i + 1,
					 text[run]);
			last = ns->number;
		}
		assert_true(last > 0);
		if (!(num(doc, "dram_latency_ns") > last))
			fail_msg("memory (%g ns) is not slower than the last cache:\n%s",
				 num(doc, "dram_latency_ns"), text[run]);
		assert_true(th_json_get(doc, "memory.seen")->boolean);
		/* the chase's curve: every point has samples, ascending sizes */
		levels = th_json_get(doc, "curves.latency");
		assert_true(levels->n > 20);
		for (size_t i = 0; i < levels->n; i++) {
			assert_true(th_json_get(levels->items[i], "samples")->number >= 1);
			if (i)
				assert_true(th_json_get(levels->items[i], "bytes")->number >
					    th_json_get(levels->items[i - 1], "bytes")->number);
		}
		assert_int_equal((int)th_json_get(doc, "curves.latency[0].bytes")->number, 4096);
		th_json_free(doc);
		th_run_free(&r);
		if (best1 >= pow(step, -1.02) && best2 >= pow(step, -1.02))
			break;
	}
	if (best1 < pow(step, -1.02) || best2 < pow(step, -1.02))
		fail_msg("in %d runs the largest L1d was %.3f and the largest L2 %.3f of sysfs's "
			 "size (%llu and %llu bytes): more than one step (%.3f) below\n%s\n%s\n%s",
			 runs, best1, best2, (unsigned long long)l1, (unsigned long long)l2, step,
			 text[0], runs > 1 ? text[1] : "", runs > 2 ? text[2] : "");
	if (runs > 1)
		printf("note: %d runs to find L1d and L2 within a step of sysfs (the first found "
		       "them smaller: a busy neighbour)\n", runs);
}

/* A small, quick run for the formats: a few points, one sweep. */
#define QUICK "--points", "2", "--samples", "3", "--rounds", "1", "--max", "8M", "--no-bandwidth"

static int run_xmllint(const char *xpath, const char *path, char *out, size_t size)
{
	const char *argv[] = { "xmllint", xpath ? "--xpath" : "--noout", xpath ? xpath : path,
			       xpath ? path : NULL, NULL };
	struct th_run r;
	int st;

	th_runv(&r, NULL, (char *const *)argv);
	st = r.status;
	snprintf(out, size, "%s%s", r.out, r.err);
	out[strcspn(out, "\n")] = '\0';
	th_run_free(&r);
	return st;
}

static void test_formats(void **state)
{
	char svg[PATH_MAX], csv[PATH_MAX], out[1024], xp[160];
	struct th_run r;
	struct th_json *doc;
	const struct th_json *levels;
	size_t measured = 0, claimed = 0;
	char *text;
	size_t len;
	(void)state;

#if !defined(__x86_64__) && !defined(__i386__)
	TEST_SKIP("the chase is timed with the TSC: x86 only");
#endif
	snprintf(svg, sizeof(svg), "%s/curve.svg", tmpdir);
	snprintf(csv, sizeof(csv), "%s/cache.csv", tmpdir);
	th_tacho(&r, "cache", QUICK, "--json", "--svg", svg, NULL);
	assert_int_equal(r.status, 0);
	doc = assert_json(r.out);
	assert_json_int(doc, "version", 1);
	assert_json_int(doc, "measurement.points_per_octave", 2);
	assert_json_int(doc, "measurement.rounds", 1);
	assert_json_int(doc, "measurement.max_bytes", 8 << 20);
	assert_json_type(doc, "tlbs", TH_JSON_ARRAY);
	levels = th_json_get(doc, "levels");
	for (size_t i = 0; i < levels->n; i++) {
		const struct th_json *m = th_json_get(levels->items[i], "measured_bytes");
		const struct th_json *c = th_json_get(levels->items[i], "cpuid_kib");

		measured += m && m->type == TH_JSON_NUMBER;
		claimed += c && c->type == TH_JSON_NUMBER;
	}
	assert_true(measured >= 1);
	th_json_free(doc);
	th_run_free(&r);

	if (system("command -v xmllint >/dev/null 2>&1") != 0) {
		unlink(svg);
		TEST_SKIP("xmllint (Debian libxml2-utils) is missing: the SVG was not parsed");
	}
	if (run_xmllint(NULL, svg, out, sizeof(out)))
		fail_msg("the SVG is not well-formed XML: %s", out);
	assert_int_equal(run_xmllint("count(//*[local-name()='line'][@class='level'])", svg, out,
				     sizeof(out)), 0);
	assert_int_equal(strtoul(out, NULL, 10), measured);
	/* every claim inside the sweep is marked; claims beyond it widen the axis */
	assert_int_equal(run_xmllint("count(//*[local-name()='line'][@class='claim-cpuid'])", svg,
				     out, sizeof(out)), 0);
	assert_int_equal(strtoul(out, NULL, 10), claimed);
	snprintf(xp, sizeof(xp), "count(//*[local-name()='text'][@class='level-label'])");
	assert_int_equal(run_xmllint(xp, svg, out, sizeof(out)), 0);
	assert_int_equal(strtoul(out, NULL, 10), measured);
	unlink(svg);

	/* CSV to a file with -o: nothing on stdout, the header first */
	th_tacho(&r, "cache", QUICK, "--no-tlb", "--csv", "-o", csv, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.out_len, 0);
	th_run_free(&r);
	assert_int_equal(th_read_data(csv, &text, &len), 0);
	assert_true(!strncmp(text, "kind,curve,level,type,bytes,pages,ns,", 37));
	assert_contains(text, "\npoint,latency,,,4096,,");
	assert_contains(text, "\nlevel,");
	assert_not_contains(text, "\npoint,pages,");
	free(text);
	unlink(csv);

	/* the table */
	th_tacho(&r, "cache", QUICK, "--no-tlb", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "memory hierarchy of CPU ");
	assert_contains(r.out, "  level   type");
	assert_contains(r.out, "\nhow it went: ");
	th_run_free(&r);
}

/* --thorough's defaults (8 points per octave, 21 samples) and its second curve, the
 * chase with the TLB's misses in it; --min and --max bound the sweep exactly; one
 * round, so that it stays short. */
static void test_thorough(void **state)
{
	struct th_run r;
	struct th_json *doc;
	const struct th_json *pts;
	(void)state;

#if !defined(__x86_64__) && !defined(__i386__)
	TEST_SKIP("the chase is timed with the TSC: x86 only");
#endif
	th_tacho(&r, "cache", "--thorough", "--rounds", "1", "--min", "64K", "--max", "512K",
		 "--no-bandwidth", "--no-tlb", "--json", NULL);
	if (r.status)
		fail_msg("tacho cache --thorough failed (%d): %s", r.status, r.err);
	doc = assert_json(r.out);
	assert_true(th_json_get(doc, "measurement.thorough")->boolean);
	assert_json_int(doc, "measurement.points_per_octave", 8);
	assert_json_int(doc, "measurement.samples", 21);
	assert_json_int(doc, "measurement.rounds", 1);
	assert_json_int(doc, "measurement.min_bytes", 64 << 10);
	pts = th_json_get(doc, "curves.latency");
	assert_int_equal(pts->n, 25);   /* 64K to 512K: three octaves of 8, both ends */
	assert_int_equal((int)th_json_get(pts->items[0], "bytes")->number, 64 << 10);
	assert_int_equal((int)th_json_get(pts->items[24], "bytes")->number, 512 << 10);
	assert_int_equal(th_json_get(doc, "curves.random")->n, 25);
	th_json_free(doc);
	th_run_free(&r);

	/* a default run draws no such curve */
	th_tacho(&r, "cache", QUICK, "--no-tlb", "--min", "64K", "--json", NULL);
	assert_int_equal(r.status, 0);
	doc = assert_json(r.out);
	assert_int_equal(th_json_get(doc, "curves.random")->n, 0);
	assert_json_int(doc, "measurement.min_bytes", 64 << 10);
	th_json_free(doc);
	th_run_free(&r);
}

static const struct {
	const char *args[4];
	int status;
	const char *message;      /* the first line of stderr starts with it */
} bad[] = {
	{ { "-C", "x" }, 2, "tacho cache: -C wants one CPU number, not 'x'" },
	{ { "-C", "0-1" }, 2, "tacho cache: -C wants one CPU number, not '0-1'" },
	{ { "-C", "99999" }, 2, "tacho cache: -C wants one CPU number, not '99999'" },
	{ { "--min", "12Q" }, 2, "tacho cache: bad --min '12Q': unknown unit 'Q'" },
	{ { "--max", "K" }, 2, "tacho cache: bad --max 'K': a size starts with a number" },
	{ { "--max", "2G" }, 2, "tacho cache: bad --max '2G': sizes go from 4K to 1G" },
	{ { "--min", "100" }, 2, "tacho cache: bad --min '100': sizes go from 4K to 1G" },
	{ { "--max", "99999999999999999999" }, 2, "tacho cache: bad --max '99999999999999999999': "
	  "the number is too large" },
	{ { "--min", "1M", "--max", "64K" }, 2, "tacho cache: --min is larger than --max" },
	{ { "--points", "0" }, 2, "tacho cache: --points wants a whole number from 1 to 16, not '0'" },
	{ { "--points", "17" }, 2, "tacho cache: --points wants a whole number from 1 to 16, not '17'" },
	{ { "--samples", "256" }, 2, "tacho cache: --samples wants a whole number from 1 to 255" },
	{ { "--rounds", "-1" }, 2, "tacho cache: --rounds wants a whole number from 1 to 15" },
	{ { "--bogus" }, 2, "tacho cache: unknown option or missing value: '--bogus'" },
	{ { "extra" }, 2, "tacho cache: unexpected argument 'extra'" },
	{ { "--svg", "/nonexistent/dir/x.svg", "--max", "64K" }, 1,
	  "tacho: cannot write '/nonexistent/dir/x.svg': " },
};

static void test_bad_usage(void **state)
{
	struct th_run r;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const *a = bad[i].args;

		th_tacho(&r, "cache", a[0], a[1], a[2], a[3], NULL);
		if (r.status != bad[i].status || strncmp(r.err, bad[i].message, strlen(bad[i].message)))
			fail_msg("tacho cache %s %s: exit %d, stderr:\n%s\nwanted exit %d and \"%s\"",
				 a[0], a[1] ? a[1] : "", r.status, r.err, bad[i].status,
				 bad[i].message);
		/* one line, then (for usage errors) the usage */
		if (bad[i].status == 2)
			assert_true(!strncmp(strchr(r.err, '\n') + 1, "usage: tacho cache", 18));
		else
			assert_int_equal(th_count_lines(r.err), 1);
		th_run_free(&r);
	}
}

/* A CPU this process may not run on: -C names it, and the command says which it may. */
static void test_cpu_not_allowed(void **state)
{
	cpu_set_t set, one;
	struct th_run r;
	char arg[16];
	int c = sched_getcpu(), other = -1;
	(void)state;

	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int i = 0; i < CPU_SETSIZE && other < 0; i++)
		if (CPU_ISSET(i, &set) && i != c)
			other = i;
	if (other < 0)
		TEST_SKIP("this process may run on one CPU only: no other CPU to forbid");
	/* the child inherits the affinity: allow it CPU c alone, and name the other */
	CPU_ZERO(&one);
	CPU_SET(c, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	snprintf(arg, sizeof(arg), "%d", other);
	th_tacho(&r, "cache", "-C", arg, NULL);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	assert_int_equal(r.status, 2);
	snprintf(arg, sizeof(arg), "(%d)", c);
	assert_contains(r.err, "is not one this process may run on");
	assert_contains(r.err, arg);
	th_run_free(&r);
}

static void test_help(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "cache", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho cache [-C <cpu>]");
	assert_contains(r.out, "--svg <file>");
	th_run_free(&r);
	th_tacho(&r, "help", NULL);
	assert_contains(r.out, "\n   cache      ");
	th_run_free(&r);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-cmd-cache-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_formats),
		cmocka_unit_test(test_thorough),
		cmocka_unit_test(test_bad_usage),
		cmocka_unit_test(test_cpu_not_allowed),
		cmocka_unit_test(test_help),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
