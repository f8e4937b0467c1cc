/* test-cmd-callgraph.c - record --call-graph end to end: the option's forms, DWARF
 * unwinding of a program built -O2 -fomit-frame-pointer (main -> a -> b -> c -> leaf,
 * in the executable and through a shared library: >= 95 % of leaf's samples unwind to
 * main with every frame in order), those chains in the callee tree and the perf-script
 * export, CFI read from a separate debug file's .debug_frame, three processes under one
 * shell each unwound on its own, the same program under fp (the chain breaks: the test
 * is real), kernel frames joined under the unwound user ones, and LBR (live where the
 * CPU has it; skipped with the reason here). The programs are compiled by the test (cc
 * and objcopy from the build set) from tests/data/callgraph. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "tacho.h"

#define ITERS "300000000"   /* about 0.3 s of leaf: some 300 samples of cpu-clock */

static bool compiled;

/* Builds the test's programs into the temporary folder once: chain (the executable),
 * libchain.so and main-lib (the chain in a library); all -O2 -fomit-frame-pointer. */
static void build_programs(void)
{
	char src[4096], lsrc[4096], exe[4096], lib[4096], mexe[4096], rpath[4200];
	struct th_run r;

	if (compiled)
		return;
	snprintf(src, sizeof(src), "%s", th_path("tests/data/callgraph/chain.c"));
	snprintf(lsrc, sizeof(lsrc), "%s", th_path("tests/data/callgraph/main-lib.c"));
	snprintf(exe, sizeof(exe), "%s", th_tmp("chain"));
	snprintf(lib, sizeof(lib), "%s", th_tmp("libchain.so"));
	snprintf(mexe, sizeof(mexe), "%s", th_tmp("main-lib"));
	snprintf(rpath, sizeof(rpath), "-Wl,-rpath,%s", th_tmpdir());
	{
		char *argv[] = { (char *)"cc", (char *)"-O2", (char *)"-g", (char *)"-fomit-frame-pointer", (char *)"-o", exe, src, NULL };
		th_runv(&r, NULL, argv);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
	}
	{
		char *argv[] = { (char *)"cc", (char *)"-O2", (char *)"-g", (char *)"-fomit-frame-pointer", (char *)"-fPIC", (char *)"-shared",
				 (char *)"-DLIB", (char *)"-o", lib, src, NULL };
		th_runv(&r, NULL, argv);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
	}
	{
		char *argv[] = { (char *)"cc", (char *)"-O2", (char *)"-fomit-frame-pointer", (char *)"-o", mexe, lsrc, lib, rpath,
				 NULL };
		th_runv(&r, NULL, argv);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
	}
	compiled = true;
}

/* Records prog with the call graph mode on cpu-clock into file; false (and the reason
 * in *why) when the machine refuses. */
static bool record(const char *mode, const char *event, const char *file, const char *prog,
		   const char *every, char *why, size_t why_len)
{
	char *argv[] = { (char *)th_tacho_bin(), (char *)"record", (char *)"-q", (char *)"--call-graph", (char *)mode,
			 (char *)"-e", (char *)event, (char *)"-o", (char *)file, (char *)"--", (char *)prog, (char *)ITERS,
			 (char *)every, NULL };
	struct th_run r;
	bool ok;

	th_runv(&r, NULL, argv);
	ok = r.status == 0;
	snprintf(why, why_len, "%s", r.err);
	if (!ok && !strstr(r.err, "cannot sample"))
		fail_msg("record --call-graph %s failed (%d): %s", mode, r.status, r.err);
	th_run_free(&r);
	return ok;
}

/* From the folded export: the events of stacks that reach leaf, and of those the ones
 * whose frames go main;a;b;c;leaf in order. */
static void leaf_chains(const char *file, unsigned long long *leaf, unsigned long long *full,
			const char *below)
{
	char *argv[] = { (char *)th_tacho_bin(), (char *)"report", (char *)"-i", (char *)file, (char *)"--format",
			 (char *)"folded", NULL };
	struct th_run r;
	char *line, *save = NULL;

	*leaf = *full = 0;
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		unsigned long long w;
		assert_non_null(sp);
		*sp = '\0';
		w = strtoull(sp + 1, NULL, 10);
		if (!strstr(line, ";leaf"))
			continue;
		*leaf += w;
		if (strstr(line, ";main;a;b;c;leaf") && (!below || strstr(line, below)))
			*full += w;
	}
	th_run_free(&r);
}

static void test_option_forms(void **state)
{
	struct th_run r;
	struct stat st;

	/* --call-graph MODE takes its value (issue 12: it ran a program named dwarf) */
	th_tacho(&r, "record", "-q", "--call-graph", "dwarf", "-e", "cpu-clock", "-o",
		 th_tmp("forms.rec"), "--", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(stat(th_tmp("forms.rec"), &st), 0);
	th_run_free(&r);
	th_tacho(&r, "record", "-q", "--call-graph=fp", "-e", "cpu-clock", "-o",
		 th_tmp("forms.rec"), "--", "true", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "record", "-q", "--call-graph=dwarf,16384", "-e", "cpu-clock", "-o",
		 th_tmp("forms.rec"), "--", "true", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "record", "-q", "-g", "-e", "cpu-clock", "-o", th_tmp("forms.rec"), "--",
		 "true", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	/* bad values: one line, the usage, exit 2 */
	th_tacho(&r, "record", "--call-graph", "dwarf,12", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "multiple of 8 from 8 to 65528 bytes, not '12'");
	th_run_free(&r);
	th_tacho(&r, "record", "--call-graph", "dwarf,65536", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	th_tacho(&r, "record", "--call-graph=stack", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--call-graph takes fp, dwarf[,<size>] or lbr, not 'stack'");
	assert_contains(r.err, "usage: tacho record");
	th_run_free(&r);
	th_tacho(&r, "record", "--call-graph", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
}

static void test_dwarf_executable(void **state)
{
	unsigned long long leaf, full;
	char why[4096];

	build_programs();
	assert_true(record("dwarf", "cpu-clock", th_tmp("dw.rec"), th_tmp("chain"), "0", why,
			   sizeof(why)));
	leaf_chains(th_tmp("dw.rec"), &leaf, &full, NULL);
	/* 1 ms of CPU time per sample: at least 100 samples in leaf */
	assert_true(leaf >= 100 * 1000000ull);
	if (full * 100 < leaf * 95)
		fail_msg("%llu of %llu ns of leaf unwound to main", full, leaf);
}

static void test_dwarf_shared_library(void **state)
{
	unsigned long long leaf, full;
	char why[4096];

	build_programs();
	assert_true(record("dwarf", "cpu-clock", th_tmp("so.rec"), th_tmp("main-lib"), "0", why,
			   sizeof(why)));
	leaf_chains(th_tmp("so.rec"), &leaf, &full, NULL);
	assert_true(leaf >= 100 * 1000000ull);
	if (full * 100 < leaf * 95)
		fail_msg("%llu of %llu ns of leaf unwound to main", full, leaf);
}

/* The unwound chains are the report's chains for every view, not only the folded
 * export: the callee tree (-g callee) nests c, b, a and main under leaf with its
 * samples, and the perf-script export lists the frames leaf, c, b, a, main in order. */
static void test_dwarf_views(void **state)
{
	static const char *const callers[] = { "c", "b", "a", "main" };
	char *jargv[] = { (char *)th_tacho_bin(), (char *)"report", (char *)"-i", (char *)th_tmp("views.rec"),
			  (char *)"--json", (char *)"-g", (char *)"callee", NULL };
	char *sargv[] = { (char *)th_tacho_bin(), (char *)"report", (char *)"-i", (char *)th_tmp("views.rec"),
			  (char *)"--format", (char *)"perf-script", NULL };
	const struct th_json *node;
	struct th_json *j;
	struct th_run r;
	char why[4096];
	double leaf;
	unsigned long stacks = 0, full = 0;
	char *rec, *save = NULL;

	build_programs();
	assert_true(record("dwarf", "cpu-clock", th_tmp("views.rec"), th_tmp("chain"), "0", why,
			   sizeof(why)));
	th_runv(&r, NULL, jargv);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	th_run_free(&r);
	node = th_json_find(j, "rows", "symbol", "leaf");
	assert_non_null(node);
	leaf = json_num(node, "samples");
	assert_true(leaf >= 100);
	for (size_t i = 0; i < sizeof(callers) / sizeof(callers[0]); i++) {
		node = th_json_find(node, "children", "symbol", callers[i]);
		if (!node)
			fail_msg("no %s under leaf's callee tree of a dwarf recording", callers[i]);
		if (json_num(node, "samples") < 0.95 * leaf)
			fail_msg("%s holds %g of leaf's %g samples", callers[i],
				 json_num(node, "samples"), leaf);
	}
	th_json_free(j);

	/* perf-script: one blank-line-separated record per sample, leaf first */
	th_runv(&r, NULL, sargv);
	assert_int_equal(r.status, 0);
	for (rec = strtok_r(r.out, "\n", &save); rec; rec = strtok_r(NULL, "\n", &save)) {
		const char *want[] = { " leaf+", " c+", " b+", " a+", " main+" };
		size_t k = 0;
		if (!strstr(rec, " leaf+"))
			continue;
		stacks++;
		/* the next lines of this sample, in order */
		while (k < 5 && rec && strstr(rec, want[k])) {
			k++;
			if (k < 5)
				rec = strtok_r(NULL, "\n", &save);
		}
		if (k == 5)
			full++;
	}
	th_run_free(&r);
	assert_true(stacks >= 100);
	if (full * 100 < stacks * 95)
		fail_msg("%lu of %lu perf-script stacks of leaf go leaf, c, b, a, main", full,
			 stacks);
}

/* Three runs of the chain under one shell: each process has its own unwinder, ended
 * after its last sample, and each unwinds to main (as in the test above, >= 95 % of
 * leaf's time), the three as separate processes in the report. */
static void test_dwarf_processes(void **state)
{
	char cmd[16384], pids[4096];
	unsigned long long leaf, full;
	struct th_run r;
	unsigned rows = 0;

	build_programs();
	snprintf(cmd, sizeof(cmd), "%s 100000000 0; %s 100000000 0; %s 100000000 0",
		 th_tmp("chain"), th_tmp("chain"), th_tmp("chain"));
	th_tacho(&r, "record", "-q", "--call-graph", "dwarf", "-e", "cpu-clock", "-o",
		 th_tmp("procs.rec"), "--", "sh", "-c", cmd, NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	leaf_chains(th_tmp("procs.rec"), &leaf, &full, NULL);
	assert_true(leaf >= 100 * 1000000ull);
	if (full * 100 < leaf * 95)
		fail_msg("%llu of %llu ns of leaf in three processes unwound to main", full, leaf);
	/* one row per process that ran leaf */
	th_tacho(&r, "report", "-i", th_tmp("procs.rec"), "--sort", "pid", "--symbols", "leaf",
		 "--csv", NULL);
	assert_int_equal(r.status, 0);
	snprintf(pids, sizeof(pids), "%s", r.out);
	th_run_free(&r);
	for (char *line = strtok(pids, "\n"); line; line = strtok(NULL, "\n"))
		rows += line[0] >= '0' && line[0] <= '9';
	assert_int_equal(rows, 3);
}

/* CFI only in a separate debug file: the chain built without unwind tables (GCC then
 * writes .debug_frame, not .eh_frame, for its functions), the debug part moved into
 * dfchain.debug by objcopy and linked by .gnu_debuglink. The report finds the file
 * next to the binary and unwinds through its .debug_frame; with the file moved away
 * the chain stops at leaf (the test is real). */
static void test_dwarf_debug_frame_file(void **state)
{
	char src[4096], exe[4096], dbg[4096], away[4096], link[4200];
	unsigned long long leaf, full;
	char why[4096];

	snprintf(src, sizeof(src), "%s", th_path("tests/data/callgraph/chain.c"));
	snprintf(exe, sizeof(exe), "%s", th_tmp("dfchain"));
	snprintf(dbg, sizeof(dbg), "%s", th_tmp("dfchain.debug"));
	snprintf(away, sizeof(away), "%s", th_tmp("dfchain.away"));
	snprintf(link, sizeof(link), "--add-gnu-debuglink=%s", dbg);
	{
		char *argv[] = { (char *)"cc", (char *)"-O2", (char *)"-g", (char *)"-fomit-frame-pointer",
				 (char *)"-fno-asynchronous-unwind-tables", (char *)"-fno-unwind-tables",
				 (char *)"-o", exe, src, NULL };
		th_run_ok(argv);
	}
	{
		char *argv[] = { (char *)"objcopy", (char *)"--only-keep-debug", exe, dbg, NULL };
		th_run_ok(argv);
	}
	{
		char *argv[] = { (char *)"objcopy", (char *)"--strip-debug", link, exe, NULL };
		th_run_ok(argv);
	}
	assert_true(record("dwarf", "cpu-clock", th_tmp("df.rec"), exe, "0", why, sizeof(why)));
	leaf_chains(th_tmp("df.rec"), &leaf, &full, NULL);
	assert_true(leaf >= 100 * 1000000ull);
	if (full * 100 < leaf * 95)
		fail_msg("%llu of %llu ns of leaf unwound to main through dfchain.debug", full,
			 leaf);
	assert_int_equal(rename(dbg, away), 0);
	leaf_chains(th_tmp("df.rec"), &leaf, &full, NULL);
	assert_true(leaf >= 100 * 1000000ull);
	if (full * 100 >= leaf * 5)
		fail_msg("without dfchain.debug %llu of %llu ns of leaf still reached main: its "
			 "functions have CFI in the binary, the test above proves nothing", full,
			 leaf);
}

/* The same program under frame pointers: leaf's caller is lost, so the test above
 * shows unwinding, not a chain the kernel would have given anyway. */
static void test_fp_breaks(void **state)
{
	unsigned long long leaf, full;
	char why[4096];

	build_programs();
	assert_true(record("fp", "cpu-clock", th_tmp("fp.rec"), th_tmp("chain"), "0", why,
			   sizeof(why)));
	leaf_chains(th_tmp("fp.rec"), &leaf, &full, NULL);
	assert_true(leaf >= 100 * 1000000ull);
	if (full * 100 >= leaf * 5)
		fail_msg("fp chains reached main in %llu of %llu ns: the program keeps frame "
			 "pointers, the dwarf tests prove nothing", full, leaf);
}

/* A system call in leaf: kernel frames (from the recorded chain) stay joined under the
 * unwound user ones. */
static void test_dwarf_mixed(void **state)
{
	unsigned long long leaf, full;
	char why[4096];
	long paranoid = 2;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");

	if (f) {
		if (fscanf(f, "%ld", &paranoid) != 1)
			paranoid = 2;
		fclose(f);
	}
	if (geteuid() != 0 && paranoid > 1)
		TEST_SKIP("kernel.perf_event_paranoid is %ld: only user space is sampled", paranoid);
	build_programs();
	assert_true(record("dwarf", "cpu-clock", th_tmp("mix.rec"), th_tmp("chain"), "100", why,
			   sizeof(why)));
	leaf_chains(th_tmp("mix.rec"), &leaf, &full, ";leaf;getppid;entry_SYSCALL");
	if (full == 0) {
		char *argv[] = { (char *)th_tacho_bin(), (char *)"report", (char *)"-i", (char *)th_tmp("mix.rec"), NULL };
		struct th_run r;
		th_runv(&r, NULL, argv);
		if (strstr(r.out, "kernel addresses are not symbolized") ||
		    strstr(r.err, "kernel addresses are not symbolized")) {
			th_run_free(&r);
			TEST_SKIP("kernel addresses are not symbolized here");
		}
		th_run_free(&r);
		fail_msg("no sample of leaf's system call reached main through the kernel's "
			 "frames");
	}
}

/* LBR needs the CPU's last-branch records in call-stack mode (Intel, Haswell on) and a
 * hardware event: where they are, the chains reach main too; where not (a VM), the
 * refusal says so. */
static void test_lbr_live(void **state)
{
	unsigned long long leaf, full;
	char why[4096];

	build_programs();
	if (!record("lbr", "cycles:u", th_tmp("lbr.rec"), th_tmp("chain"), "0", why,
		    sizeof(why))) {
		char *nl = strchr(why, '\n');
		if (nl)
			*nl = '\0';
		TEST_SKIP("no LBR call stacks here: %s", why);
	}
	leaf_chains(th_tmp("lbr.rec"), &leaf, &full, NULL);
	assert_true(leaf > 0);
	if (full * 100 < leaf * 95)
		fail_msg("%llu of %llu events of leaf reached main by LBR", full, leaf);
}

/* The library's own checks of the options, before anything runs. */
static void test_library_checks(void **state)
{
	char *argv[] = { (char *)"true", NULL };
	struct tacho_record_opts o = { .sz = sizeof(o), .events = "cpu-clock", .argv = argv,
				       .output = th_tmp("lib.rec") };
	struct tacho_record_result res = { .sz = sizeof(res) };
	struct tacho_diag d = { .sz = sizeof(d) };

	o.call_graph = (enum tacho_call_graph)99;
	assert_int_equal(tacho_record(&o, &res, &d), -EINVAL);
	assert_contains(d.message, "unknown call graph mode 99");
	o.call_graph = TACHO_CALL_GRAPH_DWARF;
	o.stack_size = 12;
	assert_int_equal(tacho_record(&o, &res, &d), -EINVAL);
	assert_contains(d.message, "a multiple of 8 from 8 to 65528 bytes, not 12");
	o.stack_size = 65536;
	assert_int_equal(tacho_record(&o, &res, &d), -EINVAL);
	o.call_graph = TACHO_CALL_GRAPH_FP;
	o.stack_size = 4096;
	assert_int_equal(tacho_record(&o, &res, &d), -EINVAL);
	assert_contains(d.message, "the stack size is for dwarf call graphs");
	assert_false(res.ran);
	assert_int_equal(access(th_tmp("lib.rec"), F_OK), -1);
	/* a valid one records, and says nothing of a cache it was not given */
	o.call_graph = TACHO_CALL_GRAPH_DWARF;
	o.stack_size = 4096;
	assert_int_equal(tacho_record(&o, &res, &d), 0);
	assert_true(res.ran);
	assert_int_equal(res.cached_files, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_option_forms),
		cmocka_unit_test(test_library_checks),
		cmocka_unit_test(test_dwarf_executable),
		cmocka_unit_test(test_dwarf_shared_library),
		cmocka_unit_test(test_dwarf_views),
		cmocka_unit_test(test_dwarf_debug_frame_file),
		cmocka_unit_test(test_dwarf_processes),
		cmocka_unit_test(test_fp_breaks),
		cmocka_unit_test(test_dwarf_mixed),
		cmocka_unit_test(test_lbr_live),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
