/* test-cmd-cpu.c - `tacho cpu` end to end: the JSON contract, --raw/--load round trips,
 * real dumps from the libcpuid corpus (hybrid ones too), the live report on this
 * machine, and every error path. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "tacho.h"

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f)
		fail_msg("cannot create %s: %s", path, strerror(errno));
	if (len && fwrite(data, 1, len, f) != len)
		fail_msg("cannot write %s", path);
	fclose(f);
}

/* The dump part of a corpus file (before the first line of 80 dashes), as a user has it. */
static const char *corpus_dump(const char *rel, const char *name)
{
	const char *dst = th_tmp(name);
	char *buf;
	size_t len;

	if (th_read_data(th_path(rel), &buf, &len) != 0)
		return NULL;
	write_file(dst, buf, th_corpus_dump_len(buf, len));
	free(buf);
	return dst;
}

/* A cache of a core type by level and type, or NULL. */
static const struct th_json *find_cache(const struct th_json *ct, unsigned level, const char *type)
{
	const struct th_json *caches = th_json_get(ct, "caches");

	for (size_t i = 0; caches && i < caches->n; i++) {
		const struct th_json *l = th_json_get(caches->items[i], "level");
		const struct th_json *t = th_json_get(caches->items[i], "type");
		if (l && t && l->type == TH_JSON_NUMBER && t->type == TH_JSON_STRING &&
		    l->number == level && !strcmp(t->string, type))
			return caches->items[i];
	}
	return NULL;
}

/* --- the JSON checker itself: it must reject what is not JSON --- */

/* What tacho cpu does not use it does not load: libpfm4, capstone and libmicrohttpd
 * are opened when an event name, an annotation or serve needs them (docs/performance.md:
 * their start-up cost every command 3.5 ms). The dynamic loader's own account says so;
 * an event that needs libpfm4 loads it. */
static void test_loads_only_what_it_uses(void **state)
{
	static const char *const lazy[] = { "libpfm.so", "libcapstone.so", "libmicrohttpd.so",
					    "libncursesw.so",
#if !defined(__SANITIZE_ADDRESS__)
					    /* the ASan tree links elfutils (Makefile: LSan and
					     * a dlopen'd library's TLS) */
					    "libdw.so", "libelf.so",
#endif
	};
	char cmd[4096];
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };
	struct th_run r;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	snprintf(cmd, sizeof(cmd), "LD_DEBUG=files '%s' cpu >/dev/null", th_tacho_bin());
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	/* the loader spoke: a libc that ignores LD_DEBUG would pass this vacuously */
	assert_contains(r.err, "file=libc.so.6");
	for (size_t i = 0; i < ARRAY_SIZE(lazy); i++)
		if (strstr(r.err, lazy[i]))
			fail_msg("tacho cpu loaded %s", lazy[i]);
	th_run_free(&r);

	/* tacho list's CPU-specific names come from libpfm4: loaded then */
	snprintf(cmd, sizeof(cmd), "LD_DEBUG=files '%s' list >/dev/null", th_tacho_bin());
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "file=libpfm.so.4");
	th_run_free(&r);

	/* elfutils comes with the first ELF file read: a report of a program's samples */
	snprintf(cmd, sizeof(cmd),
		 "f=$(mktemp) && '%s' record -q -e page-faults -c 1 -o \"$f\" -- true && "
		 "LD_DEBUG=files '%s' report -i \"$f\" >/dev/null; rc=$?; rm -f \"$f\"*; "
		 "exit $rc", th_tacho_bin(), th_tacho_bin());
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "file=libdw.so.1");
	th_run_free(&r);
}

static void test_json_checker(void **state)
{
	static const struct { int line; const char *text; bool ok; } cases[] = {
		{ __LINE__, "{}", true },
		{ __LINE__, " [1, -2.5e3, \"a\\u00e9\\n\", true, false, null, {\"k\": []}] ", true },
		{ __LINE__, "", false },
		{ __LINE__, "{", false },
		{ __LINE__, "{\"a\": 1,}", false },
		{ __LINE__, "[1 2]", false },
		{ __LINE__, "{\"a\" 1}", false },
		{ __LINE__, "{\"a\": 1, \"a\": 2}", false },
		{ __LINE__, "[01]", false },
		{ __LINE__, "[1.]", false },
		{ __LINE__, "[nan]", false },
		{ __LINE__, "[\"tab\there\"]", false },
		{ __LINE__, "[\"\\x\"]", false },
		{ __LINE__, "{} {}", false },
		{ __LINE__, "'single'", false },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256];
		struct th_json *j = th_json_parse(cases[i].text, err, sizeof(err));
		if (!!j != cases[i].ok)
			fail_msg("line %d: '%s' %s (%s)", cases[i].line, cases[i].text,
				 j ? "accepted" : "rejected", err);
		th_json_free(j);
	}
	struct th_json *j = assert_json("{\"a\": [10, {\"b\": \"x\"}]}");
	assert_json_int(j, "a[0]", 10);
	assert_json_str(j, "a[1].b", "x");
	assert_null(th_json_get(j, "a[2]"));
	assert_null(th_json_get(j, "c"));
	th_json_free(j);
}

/* --- help and usage --- */

static void test_help(void **state)
{
	struct th_run a, b;
	(void)state;

	th_tacho(&a, "cpu", "--help", NULL);
	th_tacho(&b, "help", "cpu", NULL);
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_true(strncmp(a.out, "usage: tacho cpu ", 17) == 0);
	assert_string_equal(a.out, b.out);
	assert_string_equal(a.err, "");
	th_run_free(&a);
	th_run_free(&b);

	th_tacho(&a, "help", NULL);
	assert_contains(a.out, "   cpu ");
	th_run_free(&a);
}

static void test_usage_errors(void **state)
{
	static const char *const bad[][3] = {
		{ "--frob", NULL, NULL },
		{ "-x", NULL, NULL },
		{ "extra", NULL, NULL },
		{ "--json", "--raw", NULL },
		{ "--cpu", "abc", NULL },
		{ "--cpu", "-1", NULL },
		{ "--load", NULL, NULL },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct th_run r;
		th_tacho(&r, "cpu", bad[i][0], bad[i][1], bad[i][2], NULL);
		if (r.status != 2)
			fail_msg("tacho cpu %s %s: exit %d, want 2\n%s", bad[i][0],
				 bad[i][1] ? bad[i][1] : "", r.status, r.err);
		assert_true(strncmp(r.err, "tacho cpu: ", 11) == 0);
		assert_contains(r.err, "\nusage: tacho cpu ");
		assert_string_equal(r.out, "");
		th_run_free(&r);
	}
}

/* --- this machine --- */

static bool live_info(struct tacho_cpu_info *info)
{
	struct tacho_cpuid_dump *d;

	if (tacho_cpuid_dump_live(&d) != 0)
		return false;
	assert_int_equal(tacho_cpu_decode(d, info), 0);
	tacho_cpuid_dump_free(d);
	return true;
}

/* "cpu family", "model", "stepping" of /proc/cpuinfo: the kernel's own decoding. */
static long cpuinfo_num(const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(key);
		if (!strncmp(line, key, n) && (line[n] == '\t' || line[n] == ' ')) {
			char *colon = strchr(line, ':');
			if (colon)
				v = strtol(colon + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static void check_contract(const struct th_json *j)
{
	static const char *const kinds[] = { "general", "performance", "efficiency",
					     "low-power efficiency" };
	static const char *const types[] = { "data", "instruction", "unified" };
	const struct th_json *cts;

	assert_json_int(j, "version", 1);
	assert_json_type(j, "vendor", TH_JSON_STRING);
	assert_json_type(j, "brand", TH_JSON_STRING);
	assert_json_type(j, "family", TH_JSON_NUMBER);
	assert_json_type(j, "model", TH_JSON_NUMBER);
	assert_json_type(j, "stepping", TH_JSON_NUMBER);
	assert_json_type(j, "packages", TH_JSON_NUMBER);
	assert_json_type(j, "core_types", TH_JSON_ARRAY);
	assert_json_type(j, "features", TH_JSON_ARRAY);
	assert_json_type(j, "notes", TH_JSON_ARRAY);
	assert_json_type(j, "tsc", TH_JSON_OBJECT);
	assert_json_type(j, "pmu", TH_JSON_OBJECT);
	assert_true(th_json_get(j, "family")->integer);
	assert_true(th_json_get(j, "packages")->number >= 1);
	cts = th_json_get(j, "core_types");
	assert_true(cts->n >= 1 && cts->n <= 4);
	for (size_t k = 0; k < cts->n; k++) {
		const struct th_json *ct = cts->items[k], *caches;
		bool known = false;
		assert_json_type(ct, "kind", TH_JSON_STRING);
		for (size_t i = 0; i < 4; i++)
			known |= !strcmp(th_json_get(ct, "kind")->string, kinds[i]);
		assert_true(known);
		assert_json_type(ct, "cores", TH_JSON_NUMBER);
		assert_json_type(ct, "threads", TH_JSON_NUMBER);
		assert_json_type(ct, "caches", TH_JSON_ARRAY);
		caches = th_json_get(ct, "caches");
		for (size_t i = 0; i < caches->n; i++) {
			const struct th_json *c = caches->items[i], *v;
			known = false;
			assert_json_type(c, "level", TH_JSON_NUMBER);
			assert_json_type(c, "type", TH_JSON_STRING);
			for (size_t t = 0; t < 3; t++)
				known |= !strcmp(th_json_get(c, "type")->string, types[t]);
			assert_true(known);
			static const char *const nums[] = { "size_kib", "ways", "line_bytes", "instances" };
			for (size_t f = 0; f < 4; f++) {
				v = th_json_get(c, nums[f]);
				if (!v || (v->type != TH_JSON_NULL &&
					   (v->type != TH_JSON_NUMBER || !v->integer)))
					fail_msg("core_types[%zu].caches[%zu].%s: want an integer or null",
						 k, i, nums[f]);
			}
		}
	}
}

static void test_live_json(void **state)
{
	struct th_run r;
	struct th_json *j;
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	(void)state;

	if (!live_info(&info))
		TEST_SKIP("CPUID cannot be read on this machine");
	th_tacho(&r, "cpu", "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	j = assert_json(r.out);
	check_contract(j);
	assert_json_str(j, "dump", "live");
	/* the kernel decodes the signature itself: both must agree exactly */
	if (cpuinfo_num("cpu family") >= 0) {
		assert_json_int(j, "family", cpuinfo_num("cpu family"));
		assert_json_int(j, "model", cpuinfo_num("model"));
		assert_json_int(j, "stepping", cpuinfo_num("stepping"));
	}
	assert_json_int(j, "family", info.family);
	assert_json_str(j, "brand", info.brand);
	assert_json_int(j, "topology.cpus_in_dump", sysconf(_SC_NPROCESSORS_ONLN));
	assert_json_type(j, "crosscheck", TH_JSON_OBJECT);
	assert_json_type(j, "crosscheck.disagreements", TH_JSON_ARRAY);
	assert_true(th_json_get(j, "crosscheck.checked")->number > 0);
	assert_int_equal(th_json_get(j, "features")->n > 0, 1);
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "cpu", "--json", "--no-crosscheck", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_json_type(j, "crosscheck", TH_JSON_NULL);
	th_json_free(j);
	th_run_free(&r);
	tacho_cpu_info_exit(&info);
}

/* The report with its wrapped lines joined: a newline and the indentation that follows
 * become one space, so that a test can look for a sentence wherever it was wrapped. */
static char *unwrap(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	assert_non_null(out);
	while (*s) {
		if (*s == '\n' || *s == ' ') {
			while (*s == '\n' || *s == ' ')
				s++;
			*o++ = ' ';
			continue;
		}
		*o++ = *s++;
	}
	*o = '\0';
	return out;
}

static void test_live_report(void **state)
{
	struct th_run r;
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	char *flat;
	(void)state;

	if (!live_info(&info))
		TEST_SKIP("CPUID cannot be read on this machine");
	th_tacho(&r, "cpu", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, "brand ");
	assert_contains(r.out, "\ncaches");
	assert_contains(r.out, "\nperformance monitoring\n");
	assert_contains(r.out, "\ntime-stamp counter\n");
	assert_contains(r.out, "\nfeatures\n");
	assert_contains(r.out, "\nnotes\n");
	flat = unwrap(r.out);
	assert_contains(flat, "('tacho cache' measures it)");
	if (info.brand[0])
		assert_contains(r.out, info.brand);
	/* the cross-check either agrees or says where it does not */
	if (!strstr(flat, "cross-check with the kernel: "))
		assert_contains(flat, "agrees on all");
	else
		assert_contains(flat, "those not named above agree");
	if (info.hypervisor_bit && info.pmu.version == 0 && !info.pmu.amd_perfmon_v2) {
		assert_contains(r.out, "no architectural performance monitoring: CPUID leaf 0xA "
				       "is zero; this is a VM without a virtual PMU");
		assert_contains(r.out, "this is a virtual machine");
	}
	if (info.tsc.invariant)
		assert_contains(r.out, "invariant (constant rate");
	free(flat);
	th_run_free(&r);
	tacho_cpu_info_exit(&info);
}

/* Without --tsc, tacho cpu opens no perf event and never sleeps (strace counts the
 * calls); with it, the frequency is measured where CPUID does not give it. */
static void test_tsc_option(void **state)
{
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	const char *log = th_tmp("strace.log");
	struct th_run r;
	char *text = NULL;
	size_t len;
	(void)state;

	if (!live_info(&info))
		TEST_SKIP("CPUID cannot be read on this machine");
	{
		/* LeakSanitizer stops the process with ptrace at exit, which a traced
		 * process cannot: no leak check in this run of a sanitized tree */
		const char *asan = getenv("ASAN_OPTIONS");
		char env[512];
		snprintf(env, sizeof(env), "ASAN_OPTIONS=%s%sdetect_leaks=0", asan ? asan : "",
			 asan && *asan ? ":" : "");
		const char *argv[] = { "strace", "-f", "-qq", "-E", env, "-o", log, "-e",
				       "trace=perf_event_open,nanosleep,clock_nanosleep",
				       th_tacho_bin(), "cpu", NULL };
		if (access("/usr/bin/strace", X_OK) != 0) {
			tacho_cpu_info_exit(&info);
			TEST_SKIP("strace is not installed (scripts/deps.sh test)");
		}
		th_runv(&r, NULL, (char *const *)argv);
	}
	if (r.status != 0 && strstr(r.err, "ptrace")) {
		th_run_free(&r);
		tacho_cpu_info_exit(&info);
		TEST_SKIP("strace cannot trace here (ptrace refused)");
	}
	assert_int_equal(r.status, 0);
	assert_int_equal(th_read_data(log, &text, &len), 0);
	assert_not_contains(text, "perf_event_open(");
	assert_not_contains(text, "nanosleep(");
	free(text);
	if (!info.tsc.hz)
		assert_contains(r.out, "    frequency not measured: no free source gives it "
				       "(--tsc measures it)\n");
	else
		assert_contains(r.out, "    frequency ");
	th_run_free(&r);

	th_tacho(&r, "cpu", "--tsc", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	assert_contains(r.out, " Hz (");
	assert_contains(r.out, "), source: ");
	assert_not_contains(r.out, "frequency not measured");
	th_run_free(&r);
	tacho_cpu_info_exit(&info);
}

static void test_live_roundtrip(void **state)
{
	struct th_run live, raw, a, b;
	const char *f1 = th_tmp("live.raw"), *f2 = th_tmp("again.raw");
	struct th_json *jl, *ja;
	static const char *const same[] = {
		"vendor", "brand", "family", "model", "stepping", "packages", "signature",
		"microarchitecture", "core_types", "features", "virtual_machine", "topology",
	};
	(void)state;

	th_tacho(&raw, "cpu", "--raw", NULL);
	if (raw.status == 1 && strstr(raw.err, "cannot read CPUID"))
		TEST_SKIP("CPUID cannot be read on this machine");
	assert_int_equal(raw.status, 0);
	assert_true(strncmp(raw.out, "CPU 0:\n", 7) == 0);
	write_file(f1, raw.out, raw.out_len);

	/* the dump written back is the same text */
	th_tacho(&a, "cpu", "--load", f1, "--raw", NULL);
	assert_int_equal(a.status, 0);
	assert_string_equal(a.out, raw.out);
	write_file(f2, a.out, a.out_len);
	th_run_free(&a);

	/* and decodes to the same JSON, twice */
	th_tacho(&a, "cpu", "--load", f1, "--json", NULL);
	th_tacho(&b, "cpu", "--load", f2, "--json", NULL);
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_string_equal(a.out, b.out);

	/* which says what the live decoding says, except what only the live run knows
	 * (the kernel's TSC frequency, the cross-check) */
	th_tacho(&live, "cpu", "--json", "--no-crosscheck", NULL);
	assert_int_equal(live.status, 0);
	jl = assert_json(live.out);
	ja = assert_json(a.out);
	assert_json_str(ja, "dump", "file");
	assert_json_type(ja, "crosscheck", TH_JSON_NULL);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		/* compare by re-serializing neither: the writer is deterministic, so the
		 * member's text in both outputs must be equal; compare via the tree */
		const struct th_json *x = th_json_get(jl, same[i]), *y = th_json_get(ja, same[i]);
		assert_non_null(x);
		assert_non_null(y);
		assert_int_equal(x->type, y->type);
		assert_int_equal(x->n, y->n);
		if (x->type == TH_JSON_STRING)
			assert_string_equal(x->string, y->string);
		if (x->type == TH_JSON_NUMBER)
			assert_true(x->number == y->number);
	}
	/* every cache of every core type, value by value */
	const struct th_json *cl = th_json_get(jl, "core_types"), *ca = th_json_get(ja, "core_types");
	for (size_t k = 0; k < cl->n; k++) {
		const struct th_json *xs = th_json_get(cl->items[k], "caches");
		const struct th_json *ys = th_json_get(ca->items[k], "caches");
		assert_int_equal(xs->n, ys->n);
		for (size_t i = 0; i < xs->n; i++)
			for (size_t m = 0; m < xs->items[i]->n; m++) {
				const struct th_json *x = xs->items[i]->items[m];
				const struct th_json *y = th_json_get(ys->items[i], x->key);
				assert_non_null(y);
				assert_int_equal(x->type, y->type);
				if (x->type == TH_JSON_NUMBER)
					assert_true(x->number == y->number);
			}
	}
	th_json_free(jl);
	th_json_free(ja);
	th_run_free(&live);
	th_run_free(&a);
	th_run_free(&b);
	th_run_free(&raw);
}

static void test_cpu_option(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	th_tacho(&r, "cpu", "--cpu", "0", "--json", NULL);
	if (r.status == 1 && strstr(r.err, "cannot read CPUID"))
		TEST_SKIP("CPUID cannot be read on this machine");
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_json_int(j, "topology.cpus_in_dump", 1);
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "cpu", "--cpu", "0", "--raw", NULL);
	assert_int_equal(r.status, 0);
	assert_true(strncmp(r.out, "CPU 0:\n", 7) == 0);
	assert_null(strstr(r.out + 1, "\nCPU "));
	th_run_free(&r);

	th_tacho(&r, "cpu", "--cpu", "4095", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_contains(r.err, "tacho: cannot select CPU 4095: the dump holds ");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
}

/* --- real dumps from other machines --- */

struct want_cache {
	unsigned level;
	const char *type;
	long kib, ways, line, instances;
};

struct want_kind {
	const char *kind;
	long cores, threads;
	struct want_cache caches[4];
};

/* Read off the expected blocks of the files (libcpuid's values; display family/model). */
static const struct {
	int line;
	const char *file;
	long family, model, stepping;
	unsigned nkinds;
	struct want_kind kinds[2];
} corpus[] = {
	{ __LINE__, "shared/data/libcpuid/intel/x86-64/skylake/intel-core-i3-6100-cpu.test",
	  6, 94, 3, 1, { { "general", 2, 4, {
		{ 1, "data", 32, 8, 64, 2 }, { 1, "instruction", 32, 8, 64, 2 },
		{ 2, "unified", 256, 4, 64, 2 }, { 3, "unified", 3072, 12, 64, 1 } } } } },
	{ __LINE__, "shared/data/libcpuid/intel/x86-64/skylake/intel-core-i3-10110u-cpu.test",
	  6, 142, 12, 1, { { "general", 2, 4, {
		{ 1, "data", 32, 8, 64, 2 }, { 1, "instruction", 32, 8, 64, 2 },
		{ 2, "unified", 256, 4, 64, 2 }, { 3, "unified", 4096, 16, 64, 1 } } } } },
	{ __LINE__, "shared/data/libcpuid/intel/x86-64/golden-cove/12th-gen-intel-core-i9-12900k.test",
	  6, 151, 2, 2, {
		{ "performance", 8, 16, {
		  { 1, "data", 48, 12, 64, 8 }, { 1, "instruction", 32, 8, 64, 8 },
		  { 2, "unified", 1280, 10, 64, 8 }, { 3, "unified", 30720, 12, 64, 1 } } },
		{ "efficiency", 8, 8, {
		  { 1, "data", 32, 8, 64, 8 }, { 1, "instruction", 64, 8, 64, 8 },
		  { 2, "unified", 2048, 16, 64, 2 }, { 3, "unified", 30720, 12, 64, 1 } } } } },
	{ __LINE__, "shared/data/libcpuid/intel/x86-64/raptor-cove/intel-core-i7-14700k.test",
	  6, 183, 1, 2, {
		{ "performance", 8, 16, {
		  { 1, "data", 48, 12, 64, 8 }, { 1, "instruction", 32, 8, 64, 8 },
		  { 2, "unified", 2048, 16, 64, 8 }, { 3, "unified", 33792, 11, 64, 1 } } },
		{ "efficiency", 12, 12, {
		  { 1, "data", 32, 8, 64, 12 }, { 1, "instruction", 64, 8, 64, 12 },
		  { 2, "unified", 4096, 16, 64, 3 }, { 3, "unified", 33792, 11, 64, 1 } } } } },
	{ __LINE__, "shared/data/libcpuid/amd/zen4/amd-ryzen-9-7900x-12-core-processor.test",
	  25, 97, 2, 1, { { "general", 12, 24, {
		{ 1, "data", 32, 8, 64, 12 }, { 1, "instruction", 32, 8, 64, 12 },
		{ 2, "unified", 1024, 8, 64, 12 }, { 3, "unified", 32768, 16, 64, 2 } } } } },
};

static void expect_num(const struct th_json *c, const char *key, long want, int line,
		       const char *what)
{
	const struct th_json *v = th_json_get(c, key);

	if (!v || v->type != TH_JSON_NUMBER || v->number != (double)want)
		fail_msg("line %d: %s: %s is %g, want %ld", line, what, key,
			 v && v->type == TH_JSON_NUMBER ? v->number : -1.0, want);
}

static void test_corpus(void **state)
{
	(void)state;

	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		const char *path = corpus_dump(corpus[i].file, "corpus.dump");
		struct th_run r;
		struct th_json *j;
		const struct th_json *cts;

		if (!path)
			TEST_SKIP("the libcpuid corpus is not at %s", th_path(corpus[i].file));
		th_tacho(&r, "cpu", "--load", path, "--json", NULL);
		if (r.status != 0)
			fail_msg("line %d: %s: exit %d: %s", corpus[i].line, corpus[i].file, r.status, r.err);
		j = assert_json(r.out);
		check_contract(j);
		assert_json_str(j, "dump", "file");
		expect_num(j, "family", corpus[i].family, corpus[i].line, "signature");
		expect_num(j, "model", corpus[i].model, corpus[i].line, "signature");
		expect_num(j, "stepping", corpus[i].stepping, corpus[i].line, "signature");
		expect_num(j, "packages", 1, corpus[i].line, "topology");
		cts = th_json_get(j, "core_types");
		/* issue 2 §5: a part that is not hybrid has one entry, of kind "general" */
		if (corpus[i].nkinds == 1 && cts->n == 1 &&
		    strcmp(th_json_get(cts->items[0], "kind")->string, "general") != 0)
			fail_msg("line %d: %s is not hybrid, but its one core type is '%s', not 'general'",
				 corpus[i].line, corpus[i].file, th_json_get(cts->items[0], "kind")->string);
		if (cts->n != corpus[i].nkinds)
			fail_msg("line %d: %zu core types, want %u", corpus[i].line, cts->n,
				 corpus[i].nkinds);
		for (unsigned k = 0; k < corpus[i].nkinds; k++) {
			const struct want_kind *w = &corpus[i].kinds[k];
			const struct th_json *ct = NULL;
			char what[64];
			for (size_t m = 0; m < cts->n && !ct; m++)
				if (!strcmp(th_json_get(cts->items[m], "kind")->string, w->kind))
					ct = cts->items[m];
			if (!ct)
				fail_msg("line %d: no core type '%s'", corpus[i].line, w->kind);
			expect_num(ct, "cores", w->cores, corpus[i].line, w->kind);
			expect_num(ct, "threads", w->threads, corpus[i].line, w->kind);
			for (unsigned c = 0; c < 4; c++) {
				const struct want_cache *wc = &w->caches[c];
				const struct th_json *jc = find_cache(ct, wc->level, wc->type);
				snprintf(what, sizeof(what), "%s L%u %s", w->kind, wc->level, wc->type);
				if (!jc)
					fail_msg("line %d: no %s cache", corpus[i].line, what);
				expect_num(jc, "size_kib", wc->kib, corpus[i].line, what);
				expect_num(jc, "ways", wc->ways, corpus[i].line, what);
				expect_num(jc, "line_bytes", wc->line, corpus[i].line, what);
				expect_num(jc, "instances", wc->instances, corpus[i].line, what);
			}
		}
		th_json_free(j);
		th_run_free(&r);
	}
}

static void test_corpus_report_and_roundtrip(void **state)
{
	const char *path = corpus_dump(corpus[2].file, "hybrid.dump");
	const char *raw = th_tmp("hybrid.raw");
	struct th_run r, a, b;
	(void)state;

	if (!path)
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(corpus[2].file));
	th_tacho(&r, "cpu", "--load", path, NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "12th Gen Intel(R) Core(TM) i9-12900K");
	assert_contains(r.out, "family 0x6 (6), model 0x97 (151), stepping 0x2 (2)");
	assert_contains(r.out, "caches of the performance cores");
	assert_contains(r.out, "caches of the efficiency cores");
	assert_contains(r.out, "decoded from a dump: not cross-checked");
	assert_contains(r.out, "48 KiB");
	assert_contains(r.out, "30 MiB");
	assert_not_contains(r.out, "cross-check with the kernel");
	th_run_free(&r);

	/* one CPU of it: CPU 20 is one of the eight E-cores (the dump's 17th to 24th) */
	th_tacho(&r, "cpu", "--load", path, "--cpu", "20", "--json", NULL);
	assert_int_equal(r.status, 0);
	{
		struct th_json *j = assert_json(r.out);
		assert_json_int(j, "topology.cpus_in_dump", 1);
		assert_json_str(j, "core_types[0].kind", "efficiency");
		assert_null(th_json_get(j, "core_types[1]"));
		th_json_free(j);
	}
	th_run_free(&r);

	/* AIDA64 text in, `cpuid -r` text out, the same description back */
	th_tacho(&r, "cpu", "--load", path, "--raw", NULL);
	assert_int_equal(r.status, 0);
	write_file(raw, r.out, r.out_len);
	th_tacho(&a, "cpu", "--load", path, "--json", NULL);
	th_tacho(&b, "cpu", "--load", raw, "--json", NULL);
	assert_int_equal(a.status, 0);
	assert_int_equal(b.status, 0);
	assert_string_equal(a.out, b.out);
	th_run_free(&r);
	th_run_free(&a);
	th_run_free(&b);
}

/* --- bad dumps --- */

static void expect_load_error(const char *path, bool want_line)
{
	struct th_run r;
	char head[1100];

	th_tacho(&r, "cpu", "--load", path, NULL);
	if (r.status != 1)
		fail_msg("%s: exit %d, want 1\n%s%s", path, r.status, r.out, r.err);
	assert_string_equal(r.out, "");
	assert_int_equal(th_count_lines(r.err), 1);
	snprintf(head, sizeof(head), "tacho: cannot load %s:", path);   /* the file named once */
	if (strncmp(r.err, head, strlen(head)) != 0)
		fail_msg("%s: the error does not start with \"%s\":\n%s", path, head, r.err);
	if (want_line) {
		/* FILE:LINE: */
		const char *p = r.err + strlen(head);
		if (!(*p >= '1' && *p <= '9'))
			fail_msg("%s: the error names no line:\n%s", path, r.err);
	}
	th_run_free(&r);

	/* the same for --json and --raw: no partial output */
	th_tacho(&r, "cpu", "--load", path, "--json", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	th_run_free(&r);
	th_tacho(&r, "cpu", "--load", path, "--raw", NULL);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	th_run_free(&r);
}

static void test_load_errors(void **state)
{
	static const char truncated[] =
		"CPU 0:\n"
		"   0x00000000 0x00: eax=0x00000010 ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65\n"
		"   0x00000001 0x00: eax=0x00a10f11 ebx=0x00020800 ecx=0xf6fa3203 ed";
	static const char junk[] = "hello, this is not a CPUID dump\nat all\n";
	static const char garbled[] =
		"CPU 0:\n"
		"   0x00000000 0x00: eax=0x00000010 ebx=0x68747541 ecx=0x444d4163 edx=0x69746e65\n"
		"   0x00000001 0x00: eax=0x00a10f11 ebx=0xZZ020800 ecx=0xf6fa3203 edx=0x178bfbff\n";
	(void)state;

	expect_load_error(th_tmp("does-not-exist"), false);
	write_file(th_tmp("empty"), "", 0);
	expect_load_error(th_tmp("empty"), false);
	write_file(th_tmp("truncated"), truncated, sizeof(truncated) - 1);
	expect_load_error(th_tmp("truncated"), true);
	write_file(th_tmp("garbled"), garbled, sizeof(garbled) - 1);
	expect_load_error(th_tmp("garbled"), true);
	/* text in no known format has no line to blame: the file is named */
	write_file(th_tmp("junk"), junk, sizeof(junk) - 1);
	expect_load_error(th_tmp("junk"), false);
	/* a folder is not a dump */
	expect_load_error(th_tmpdir(), false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_checker),
		cmocka_unit_test(test_loads_only_what_it_uses),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_live_json),
		cmocka_unit_test(test_live_report),
		cmocka_unit_test_setup_teardown(test_tsc_option, th_tmpdir_setup, th_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_live_roundtrip, th_tmpdir_setup,
						th_tmpdir_teardown),
		cmocka_unit_test(test_cpu_option),
		cmocka_unit_test_setup_teardown(test_corpus, th_tmpdir_setup, th_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_corpus_report_and_roundtrip, th_tmpdir_setup,
						th_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_load_errors, th_tmpdir_setup,
						th_tmpdir_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
