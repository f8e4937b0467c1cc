/* test-cmd-sim.c - `tacho stat --sim` end to end on the kernels of
 * tests/progs/sim-kernels.c, whose simulated counts are known: instructions and
 * branches exact by the difference of two runs, identical run to run; cache misses of
 * a stream equal to the lines it touches; a predictable branch against a random one;
 * the simulated machine stated; nested regions exact by the difference method; bad input (no valgrind in PATH, a CPUID dump that
 * cannot be read, programs valgrind cannot run, usage errors).
 *
 * The cache tests simulate the caches of tests/data/cpuid/sim-1m-llc.cpuid-r1 (the KVM
 * EPYC guest's dump with a last level of 1 MiB, 16-way, 64-byte lines: 16384 lines),
 * so that a buffer 8 times the last level stays small. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

#define SMALL_LLC "tests/data/cpuid/sim-1m-llc.cpuid-r1"

static bool have_valgrind(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	for (const char *p = path ? path : ""; *p; ) {
		size_t n = strcspn(p, ":");
		snprintf(buf, sizeof(buf), "%.*s/valgrind", (int)n, p);
		if (access(buf, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

#define NEED_VALGRIND()                                                                 \
	do {                                                                            \
		if (!have_valgrind())                                                   \
			TEST_SKIP("valgrind is not installed (Debian package valgrind)"); \
	} while (0)

/* `tacho stat --sim --json ARGS... -- sim-kernels KARGS...`: the first NULL ends ARGS,
 * the second KARGS. Returns the JSON (the test fails unless tacho exited 0). */
static struct th_json *sim_json(const char *first, ...)
{
	const char *argv[64];
	size_t n = 0;
	struct th_run r;
	struct th_json *j;
	va_list ap;
	const char *a;

	argv[n++] = th_tacho_bin();
	argv[n++] = "stat";
	argv[n++] = "--sim";
	argv[n++] = "--json";
	va_start(ap, first);
	for (a = first; a && n < 60; a = va_arg(ap, const char *))
		argv[n++] = a;
	argv[n++] = "--";
	argv[n++] = th_prog("sim-kernels");
	while ((a = va_arg(ap, const char *)) != NULL && n < 63)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	th_runv(&r, NULL, (char *const *)argv);
	if (r.status != 0)
		fail_msg("tacho stat --sim exited %d:\n%s", r.status, r.err);
	j = assert_json(r.err);
	th_run_free(&r);
	return j;
}

/* The value of the named event, asserting it is simulated. */
static double sim_value(const struct th_json *j, const char *event)
{
	const struct th_json *e = th_json_find(j, "events", "name", event);

	if (!e)
		fail_msg("no event '%s' in the output", event);
	assert_string_equal(json_str(e, "status"), "simulated");
	return json_num(e, "value");
}

/* N and 2N iterations of a loop of exactly 6 instructions and 1 conditional branch
 * differ by exactly 6N instructions and N branches. */
static void test_loop_exact(void **state)
{
	struct th_json *a, *b;
	(void)state;

	NEED_VALGRIND();
	a = sim_json("-e", "instructions,branches", NULL, "loop", "10000", NULL);
	b = sim_json("-e", "instructions,branches", NULL, "loop", "20000", NULL);
	assert_true(sim_value(b, "instructions") - sim_value(a, "instructions") == 60000.0);
	assert_true(sim_value(b, "branches") - sim_value(a, "branches") == 10000.0);
	th_json_free(a);
	th_json_free(b);
}

/* A program whose path holds a newline (callgrind writes it raw into its files, where
 * it was read as a line of no form: "cannot simulate"): counted as from any other path,
 * N and 2N iterations of the loop 6N instructions apart. */
static void test_newline_in_path(void **state)
{
	char path[4200], *bin;
	double ins[2];
	size_t len;
	FILE *f;
	(void)state;

	NEED_VALGRIND();
	snprintf(path, sizeof(path), "%s", th_tmp("sim\nkernels"));
	assert_int_equal(th_read_data(th_prog("sim-kernels"), &bin, &len), 0);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bin, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(bin);
	assert_int_equal(chmod(path, 0755), 0);
	for (int i = 0; i < 2; i++) {
		char *argv[] = { (char *)th_tacho_bin(), (char *)"stat", (char *)"--sim",
				 (char *)"--json", (char *)"-e", (char *)"instructions", (char *)"--",
				 path, (char *)"loop", (char *)(i ? "20000" : "10000"), NULL };
		struct th_run r;
		struct th_json *j;

		th_runv(&r, NULL, argv);
		if (r.status != 0)
			fail_msg("tacho stat --sim of a path with a newline exited %d:\n%s", r.status,
				 r.err);
		j = assert_json(r.err);
		ins[i] = sim_value(j, "instructions");
		th_json_free(j);
		th_run_free(&r);
	}
	assert_true(ins[1] - ins[0] == 60000.0);
	unlink(path);
}

/* The loop whose counts prove the PMU's instructions and branches exact (lib/perf/
 * verify.c expects 2 instructions and 1 branch an iteration from the difference of two
 * runs): valgrind counts the same code and agrees exactly. */
static void test_proof_loop_agrees_with_valgrind(void **state)
{
	const char *argv[2][12];
	struct th_json *j[2];
	(void)state;

	NEED_VALGRIND();
#if defined(__SANITIZE_ADDRESS__)
	TEST_SKIP("the program links this tree's sanitized libtacho, which valgrind cannot "
		  "run");
#endif
	for (int k = 0; k < 2; k++) {
		struct th_run r;
		const char *const a[] = { th_tacho_bin(), "stat", "--sim", "--json", "-e",
					  "instructions,branches", "--", th_prog("lib-proof-loop"),
					  k ? "200000" : "100000", NULL };

		memcpy(argv[k], a, sizeof(a));
		th_runv(&r, NULL, (char *const *)argv[k]);
		if (r.status != 0)
			fail_msg("tacho stat --sim exited %d:\n%s", r.status, r.err);
		j[k] = assert_json(r.err);
		th_run_free(&r);
	}
	assert_true(sim_value(j[1], "instructions") - sim_value(j[0], "instructions") ==
		    2 * 100000.0);
	assert_true(sim_value(j[1], "branches") - sim_value(j[0], "branches") == 100000.0);
	th_json_free(j[0]);
	th_json_free(j[1]);
}

/* Children and exec are followed: a child process that runs the loop N or 2N times
 * (the parent waits for it) differs by exactly 6N instructions, and so does a program
 * that execs the loop (its own start-up before the exec is counted too: the same in
 * both runs, and more than the loop's run alone). */
static void test_children_followed(void **state)
{
	static const char *const kinds[] = { "fork", "exec" };
	struct th_json *a, *b, *plain;
	(void)state;

	NEED_VALGRIND();
	plain = sim_json("-e", "instructions", NULL, "loop", "10000", NULL);
	for (size_t k = 0; k < 2; k++) {
		a = sim_json("-e", "instructions", NULL, kinds[k], "10000", NULL);
		b = sim_json("-e", "instructions", NULL, kinds[k], "20000", NULL);
		assert_true(sim_value(b, "instructions") - sim_value(a, "instructions") == 60000);
		assert_true(sim_value(a, "instructions") > sim_value(plain, "instructions") + 10000);
		th_json_free(a);
		th_json_free(b);
	}
	th_json_free(plain);
}

/* Two repetitions give identical numbers for every event (stddev 0), and the default
 * events are the simulated set. */
static void test_deterministic(void **state)
{
	struct th_json *j;
	const struct th_json *ev;
	(void)state;

	NEED_VALGRIND();
	j = sim_json("-r", "2", NULL, "loop", "1000", NULL);
	ev = th_json_get(j, "events");
	assert_non_null(ev);
	assert_int_equal(ev->n, 10);
	for (size_t i = 0; i < ev->n; i++) {
		const struct th_json *e = ev->items[i];
		assert_string_equal(json_str(e, "status"), "simulated");
		assert_true(json_num(e, "values[0]") == json_num(e, "values[1]"));
		assert_true(json_num(e, "stddev") == 0.0);
	}
	assert_non_null(th_json_find(j, "events", "name", "LLC-load-misses"));
	/* no rate per second of valgrind's wall time */
	for (size_t i = 0; i < th_json_get(j, "metrics")->n; i++)
		assert_string_not_equal(json_str(th_json_get(j, "metrics")->items[i], "unit"),
					"/sec");
	th_json_free(j);
}

/* A 64-byte stride over 8 MiB, 8 times the simulated last level: each pass misses D1
 * and the last level on every line (LRU evicts a line long before it comes back), so a
 * second pass adds exactly 131072 loads, D1 misses and LL misses. */
static void test_stream_misses(void **state)
{
	const char *ev = "L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses";
	struct th_json *a, *b;
	(void)state;

	NEED_VALGRIND();
	a = sim_json("--sim-cpu", th_path(SMALL_LLC), "-e", ev, NULL, "stream", "8388608", "1",
		     NULL);
	b = sim_json("--sim-cpu", th_path(SMALL_LLC), "-e", ev, NULL, "stream", "8388608", "2",
		     NULL);
	assert_int_equal(json_num(a, "simulation.LL.size"), 1048576);
	assert_true(sim_value(b, "L1-dcache-loads") - sim_value(a, "L1-dcache-loads") == 131072);
	assert_true(sim_value(b, "L1-dcache-load-misses") -
		    sim_value(a, "L1-dcache-load-misses") == 131072);
	assert_true(sim_value(b, "LLC-loads") - sim_value(a, "LLC-loads") == 131072);
	assert_true(sim_value(b, "LLC-load-misses") - sim_value(a, "LLC-load-misses") == 131072);
	th_json_free(a);
	th_json_free(b);
}

/* 16 KiB fit in the 32 KiB D1: after the first pass nothing misses, so a second pass
 * adds its 256 loads and not one miss. */
static void test_fits_in_d1(void **state)
{
	const char *ev = "L1-dcache-loads,L1-dcache-load-misses";
	struct th_json *a, *b;
	(void)state;

	NEED_VALGRIND();
	a = sim_json("--sim-cpu", th_path(SMALL_LLC), "-e", ev, NULL, "stream", "16384", "1",
		     NULL);
	b = sim_json("--sim-cpu", th_path(SMALL_LLC), "-e", ev, NULL, "stream", "16384", "2",
		     NULL);
	assert_true(sim_value(b, "L1-dcache-loads") - sim_value(a, "L1-dcache-loads") == 256);
	assert_true(sim_value(b, "L1-dcache-load-misses") ==
		    sim_value(a, "L1-dcache-load-misses"));
	th_json_free(a);
	th_json_free(b);
}

/* N more branches that alternate cost (nearly) no miss in valgrind's predictor, which
 * keeps the last outcomes in its index; N more random ones miss about half the time. */
static void test_branch_prediction(void **state)
{
	static const char *const kinds[] = { "alt", "rand" };
	double d[2];
	(void)state;

	NEED_VALGRIND();
	for (size_t k = 0; k < 2; k++) {
		struct th_json *a = sim_json("-e", "branches,branch-misses", NULL, "branch",
					     kinds[k], "20000", NULL);
		struct th_json *b = sim_json("-e", "branches,branch-misses", NULL, "branch",
					     kinds[k], "40000", NULL);
		/* the kernel's branch, its loop's, and the setting up of its bits:
		 * exactly 3 per element */
		assert_true(sim_value(b, "branches") - sim_value(a, "branches") == 60000);
		d[k] = sim_value(b, "branch-misses") - sim_value(a, "branch-misses");
		th_json_free(a);
		th_json_free(b);
	}
	assert_true(d[0] < 200);                       /* near 0 of 20000 */
	assert_true(d[1] > 8000 && d[1] < 12000);      /* near half of 20000 */
}

/* The table and the CSV say the values are simulated and state the machine; events
 * with no simulated meaning are not supported, with the reason. */
static void test_outputs(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	NEED_VALGRIND();
	th_tacho(&r, "stat", "--sim", "--sim-cpu", th_path(SMALL_LLC), "-e",
		 "instructions,cycles,task-clock,dTLB-load-misses", "--", th_prog("sim-kernels"),
		 "loop", "10", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "Simulated event stats for");
	assert_contains(r.err, "simulated by valgrind's callgrind, caches from the CPUID dump");
	assert_contains(r.err, "LL 1 MiB, 16-way, 64 B lines");
	assert_contains(r.err, "branch predictor: valgrind's");
	assert_contains(r.err, "instructions      (simulated)");
	assert_contains(r.err, "cycles: not supported: no simulated value: valgrind's model "
			       "has no time");
	assert_contains(r.err, "task-clock: not supported: no simulated value: a software "
			       "event");
	assert_contains(r.err, "dTLB-load-misses: not supported: no simulated value:");
	th_run_free(&r);

	th_tacho(&r, "stat", "--sim", "--csv", "-e", "instructions,cycles", "--",
		 th_prog("sim-kernels"), "loop", "10", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "\nevent,instructions,simulated,");
	assert_contains(r.err, "\nevent,cycles,not supported,,");
	assert_contains(r.err, "\nsim-cache,LL,simulated,");
	th_run_free(&r);

	j = sim_json("-e", "instructions,cycles", NULL, "loop", "10", NULL);
	assert_string_equal(json_str(j, "events[1].status"), "not supported");
	assert_json_type(j, "events[1].value", TH_JSON_NULL);
	assert_string_equal(json_str(j, "simulation.tool"), "callgrind");
	assert_contains(json_str(j, "simulation.source"), "CPUID of this CPU");
	th_json_free(j);
}

/* The instructions of nested regions, exact by the difference method: N more iterations
 * in "outer" alone add 6N to its inclusive and exclusive counts and nothing to
 * "inner"; M more in "inner" add 6M to both of its counts and to outer's inclusive one,
 * nothing to outer's exclusive one. */
static void test_regions_exact(void **state)
{
	struct th_json *j[3];
	static const char *const args[3][2] = { { "10000", "5000" }, { "20000", "5000" },
						{ "10000", "10000" } };
	double v[3][4];   /* outer incl, outer excl, inner incl, inner excl */
	(void)state;

	NEED_VALGRIND();
#if defined(__SANITIZE_ADDRESS__)
	TEST_SKIP("the regions' program links this tree's sanitized libtacho, which valgrind "
		  "cannot run");
#endif
	for (int k = 0; k < 3; k++) {
		struct th_run r;
		th_tacho(&r, "stat", "--sim", "--json", "-e", "instructions", "--",
			 th_prog("lib-sim-regions"), args[k][0], args[k][1], NULL);
		if (r.status != 0)
			fail_msg("exit %d:\n%s", r.status, r.err);
		j[k] = assert_json(r.err);
		th_run_free(&r);
		const struct th_json *o = th_json_find(j[k], "regions", "name", "outer");
		const struct th_json *i = th_json_find(j[k], "regions", "name", "inner");
		assert_non_null(o);
		assert_non_null(i);
		assert_int_equal(json_num(o, "calls"), 1);
		assert_int_equal(json_num(o, "unbalanced"), 0);
		v[k][0] = json_num(o, "events[0].inclusive");
		v[k][1] = json_num(o, "events[0].exclusive");
		v[k][2] = json_num(i, "events[0].inclusive");
		v[k][3] = json_num(i, "events[0].exclusive");
		/* nested: outer holds inner */
		assert_true(v[k][0] == v[k][1] + v[k][2]);
		th_json_free(j[k]);
	}
	assert_true(v[1][0] - v[0][0] == 60000);
	assert_true(v[1][1] - v[0][1] == 60000);
	assert_true(v[1][2] == v[0][2]);
	assert_true(v[2][0] - v[0][0] == 30000);
	assert_true(v[2][1] == v[0][1]);
	assert_true(v[2][2] - v[0][2] == 30000);
	assert_true(v[2][3] - v[0][3] == 30000);
}

/* --sim-hot: the loop's source line holds exactly its 6 instructions per iteration; by
 * instruction, each of the 6 holds exactly one per iteration; by function, "loop" holds
 * them. */
static void test_hot_places(void **state)
{
	int line = th_source_line("tests/progs/sim-kernels.c", "sim-kernels: the loop line");
	struct th_json *j;
	const struct th_json *rows;
	(void)state;

	NEED_VALGRIND();
	for (int k = 1; k <= 2; k++) {
		j = sim_json("-e", "instructions", "--sim-hot", "line:3", NULL, "loop",
			     k == 1 ? "10000" : "20000", NULL);
		assert_string_equal(json_str(j, "hot.view"), "line");
		assert_string_equal(json_str(j, "hot.event"), "instructions");
		assert_string_equal(json_str(j, "hot.rows[0].function"), "loop");
		assert_contains(json_str(j, "hot.rows[0].file"), "tests/progs/sim-kernels.c");
		assert_int_equal(json_num(j, "hot.rows[0].line"), line);
		assert_true(json_num(j, "hot.rows[0].value") == 60000.0 * k);
		assert_int_equal(th_json_get(j, "hot.rows")->n, 3);
		th_json_free(j);
	}
	j = sim_json("-e", "instructions", "--sim-hot", "instruction:6", NULL, "loop", "10000",
		     NULL);
	rows = th_json_get(j, "hot.rows");
	assert_int_equal(rows->n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_true(json_num(rows->items[i], "value") == 10000);
		assert_int_equal(json_num(rows->items[i], "line"), line);
		assert_true(json_num(rows->items[i], "address") > 0);
		if (i)
			assert_true(json_num(rows->items[i], "address") >
				    json_num(rows->items[i - 1], "address"));
	}
	th_json_free(j);
	j = sim_json("-e", "branches", "--sim-hot", "function:1", NULL, "loop", "10000", NULL);
	assert_string_equal(json_str(j, "hot.rows[0].function"), "loop");
	assert_true(json_num(j, "hot.rows[0].value") >= 10000);
	assert_null(th_json_get(j, "hot.rows[0].line"));
	th_json_free(j);
}

/* A loop whose back-jump lands on its function's first instruction, which callgrind
 * takes for a call of the function itself: one function "entry_loop" with every one
 * of its instructions (6 an iteration and the ret), not "entry_loop'2" with all but
 * one iteration's; its hottest block runs exactly N times. */
static void test_loop_at_entry(void **state)
{
	struct th_json *j;
	(void)state;

	NEED_VALGRIND();
	j = sim_json("-e", "instructions", "--sim-hot", "function:3", NULL, "entryloop", "10000",
		     NULL);
	assert_string_equal(json_str(j, "hot.rows[0].function"), "entry_loop");
	assert_true(json_num(j, "hot.rows[0].value") == 60001);
	for (size_t i = 0; i < th_json_get(j, "hot.rows")->n; i++)
		assert_null(strchr(json_str(th_json_get(j, "hot.rows")->items[i], "function"),
				   '\''));
	th_json_free(j);

	/* record --sim (no call chains) runs callgrind the same way */
	struct th_run r;
	th_tacho(&r, "record", "--sim", "-q", "-o", th_tmp("entry.rec"), "--",
		 th_prog("sim-kernels"), "entryloop", "10000", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "report", "-i", th_tmp("entry.rec"), "--json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	const struct th_json *row = th_json_find(j, "rows", "symbol", "entry_loop");
	assert_non_null(row);
	assert_true(json_num(row, "events") == 60001);
	th_json_free(j);
	th_run_free(&r);
}

/* A value after "Key:" in llvm-mca's report. */
static double report_value(const char *report, const char *key)
{
	const char *p = strstr(report, key);
	double v;

	if (!p || sscanf(p + strlen(key), " %lf", &v) != 1)
		fail_msg("no '%s' in llvm-mca's report:\n%s", key, report);
	return v;
}

/* The block's bytes ("90 90 ..."), given to llvm-mc and llvm-mca directly with -mcpu,
 * disassemble to insns (strings, or objects whose "text" is one) and predict the same
 * block throughput and IPC. */
static void same_as_llvm(const char *bytes, const char *cpu, const struct th_json *insns,
			 double rthroughput, double ipc)
{
	char in[4096], dis[4096], rep[4096], mcpu[64], *text = NULL, *report = NULL;
	struct th_run r;
	size_t len, k = 0;
	FILE *f;

	snprintf(in, sizeof(in), "%s", th_tmp("block.txt"));
	snprintf(dis, sizeof(dis), "%s", th_tmp("block.s"));
	snprintf(rep, sizeof(rep), "%s", th_tmp("mca.txt"));
	snprintf(mcpu, sizeof(mcpu), "-mcpu=%s", cpu);
	f = fopen(in, "w");
	assert_non_null(f);
	for (const char *b = bytes; *b; b += b[2] ? 3 : 2)
		fprintf(f, "0x%.2s ", b);
	assert_int_equal(fclose(f), 0);
	{
		const char *mc[] = { "llvm-mc", "--disassemble", "-triple=x86_64-unknown-linux-gnu",
				     in, "-o", dis, NULL };
		const char *mca[] = { "llvm-mca", "-mtriple=x86_64-unknown-linux-gnu", mcpu, "-o",
				      rep, dis, NULL };
		th_runv(&r, NULL, (char *const *)mc);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
		th_runv(&r, NULL, (char *const *)mca);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
	}
	assert_int_equal(th_read_data(dis, &text, &len), 0);
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		const struct th_json *it;
		while (*l == ' ' || *l == '\t')
			l++;
		if (*l == '.' || !*l)
			continue;
		for (char *c = l; *c; c++)
			if (*c == '\t')
				*c = ' ';
		assert_true(k < insns->n);
		it = insns->items[k];
		assert_string_equal(l, it->type == TH_JSON_STRING ? it->string : json_str(it, "text"));
		k++;
	}
	assert_int_equal(k, insns->n);
	assert_int_equal(th_read_data(rep, &report, &len), 0);
	assert_true(report_value(report, "Block RThroughput:") == rthroughput);
	assert_true(report_value(report, "IPC:") == ipc);
	free(text);
	free(report);
}

/* --mca: the hottest block of the loop is its 6 instructions, run exactly N times; its
 * bytes, given to llvm-mc and llvm-mca directly with the same -mcpu, give the same
 * instructions, block throughput and IPC as tacho shows. */
static void test_mca(void **state)
{
	const struct th_json *insns;
	const char *bytes;
	struct th_json *j;
	(void)state;

	NEED_VALGRIND();
	if (system("command -v llvm-mca >/dev/null && command -v llvm-mc >/dev/null") != 0)
		TEST_SKIP("llvm-mca is not installed (Debian package llvm)");
	j = sim_json("-e", "instructions", "--mca", NULL, "loop", "100000", NULL);
	assert_int_equal(json_num(j, "mca.executions"), 100000);
	assert_string_equal(json_str(j, "mca.function"), "loop");
	assert_string_equal(json_str(j, "mca.mcpu"), json_str(j, "simulation.mcpu"));
	insns = th_json_get(j, "mca.instructions");
	assert_int_equal(insns->n, 6);
	for (int i = 0; i < 4; i++)
		assert_string_equal(insns->items[i]->string, "nop");
	assert_true(strncmp(insns->items[4]->string, "dec", 3) == 0);
	assert_true(strncmp(insns->items[5]->string, "jne", 3) == 0);
	bytes = json_str(j, "mca.bytes");
	assert_true(strncmp(bytes, "90 90 90 90 ", 12) == 0);

	same_as_llvm(bytes, json_str(j, "mca.mcpu"), insns, json_num(j, "mca.block_rthroughput"),
		     json_num(j, "mca.ipc"));
	th_json_free(j);
}

static void assert_one_line(const struct th_run *r, int status, const char *needle);

/* --- record --sim: a recording that report's views read --- */

/* `tacho record --sim -q -e EVENTS -o th_tmp(NAME) -- PROG A1 A2` (A2 may be NULL);
 * fails unless tacho exits 0. Returns the file's path (static). */
static const char *sim_record(const char *name, const char *events, const char *prog,
			      const char *a1, const char *a2)
{
	static char path[4096];
	struct th_run r;

	snprintf(path, sizeof(path), "%s", th_tmp(name));
	th_tacho(&r, "record", "--sim", "-q", "-e", events, "-o", path, "--", th_prog(prog), a1,
		 a2, NULL);
	if (r.status != 0)
		fail_msg("tacho record --sim exited %d:\n%s", r.status, r.err);
	th_run_free(&r);
	return path;
}

/* `tacho report -i FILE ARGS...` (at most 4, the first NULL ends them): its standard
 * output, which the caller frees. */
static char *sim_report(const char *file, const char *a1, const char *a2, const char *a3,
			const char *a4)
{
	struct th_run r;
	char *out;

	th_tacho(&r, "report", "-i", file, a1, a2, a3, a4, NULL);
	if (r.status != 0)
		fail_msg("tacho report exited %d:\n%s", r.status, r.err);
	out = strdup(r.out);
	th_run_free(&r);
	return out;
}

/* The row of a report's JSON whose key is value (a string), or whose line is line. */
static const struct th_json *report_row(const struct th_json *j, const char *key,
					const char *value, int line)
{
	const struct th_json *rows = th_json_get(j, "rows");

	assert_non_null(rows);
	for (size_t i = 0; i < rows->n; i++) {
		const struct th_json *row = rows->items[i];
		if (value ? !strcmp(json_str(row, key), value) : json_num(row, "line") == line)
			return row;
	}
	fail_msg("no row with %s %s in the report", key, value ? value : "of the line");
	return NULL;
}

/* record --sim: the loop's line holds exactly N x 6 instructions and N branches (N and
 * 2N), every output says simulated, the symbol's count equals stat --sim's for the
 * same function, and two recordings give byte-identical views. */
static void test_record_sim(void **state)
{
	int line = th_source_line("tests/progs/sim-kernels.c", "sim-kernels: the loop line");
	const struct th_json *row;
	struct th_json *j, *hot;
	char *out, *again;
	const char *rec;
	(void)state;

	NEED_VALGRIND();
	for (int k = 1; k <= 2; k++) {
		rec = sim_record("loop.rec", "instructions,branches", "sim-kernels", "loop",
				 k == 1 ? "10000" : "20000");
		out = sim_report(rec, "--sort", "line", "--json", NULL);
		j = assert_json(out);
		assert_string_equal(json_str(j, "status"), "simulated");
		row = report_row(j, "line", NULL, line);
		assert_string_equal(json_str(row, "symbol"), "loop");
		assert_true(json_num(row, "events") == 60000.0 * k);
		th_json_free(j);
		free(out);
	}
	/* the second event: the loop's one branch per iteration */
	{
		struct th_run r;
		th_tacho(&r, "report", "-i", rec, "--event", "branches", "--sort", "line", "--json",
			 NULL);
		assert_int_equal(r.status, 0);
		j = assert_json(r.out);
		assert_true(json_num(report_row(j, "line", NULL, line), "events") == 20000);
		th_json_free(j);
		th_run_free(&r);
	}
	/* by symbol: what stat --sim says the function ran */
	rec = sim_record("loop.rec", "instructions", "sim-kernels", "loop", "10000");
	out = sim_report(rec, "--json", NULL, NULL, NULL);
	j = assert_json(out);
	hot = sim_json("-e", "instructions", "--sim-hot", "function:1", NULL, "loop", "10000",
		       NULL);
	assert_string_equal(json_str(hot, "hot.rows[0].function"), "loop");
	row = report_row(j, "symbol", "loop", 0);
	assert_true(json_num(row, "events") == json_num(hot, "hot.rows[0].value"));
	assert_string_equal(json_str(row, "dso"), th_prog("sim-kernels"));
	th_json_free(hot);
	th_json_free(j);
	free(out);
	/* the table says so; annotate: each of the 6 instructions exactly N times */
	out = sim_report(rec, NULL, NULL, NULL, NULL);
	assert_contains(out, "instructions, simulated: every instruction counted by valgrind");
	assert_contains(out, "simulated  percent  dso          symbol\n");
	assert_contains(out, "\n    60003  ");     /* the loop's row leads with its count */
	free(out);
	/* a filter: the header counts what it kept, exactly */
	out = sim_report(rec, "--symbols", "loop", NULL, NULL);
	assert_true(strncmp(out, "# 60,003 of ", 12) == 0);
	assert_contains(out, " instructions kept by the filter, simulated: every instruction "
			     "counted by valgrind");
	assert_contains(out, "\n    60003  100.00%  sim-kernels  loop\n");
	free(out);
	out = sim_report(rec, "--annotate", "loop", NULL, NULL);
	assert_contains(out, "instructions, simulated: every instruction counted by valgrind");
	assert_contains(out, ": 60003 simulated\n");
	assert_contains(out, "  simulated  percent  address");
	free(out);
	out = sim_report(rec, "--annotate", "loop", "--json", NULL);
	j = assert_json(out);
	{
		const struct th_json *rows = th_json_get(j, "rows");
		size_t n = 0;
		for (size_t i = 0; i < rows->n; i++)
			if (json_num(rows->items[i], "line") == line) {
				assert_true(json_num(rows->items[i], "events") == 10000);
				n++;
			}
		assert_int_equal(n, 6);
	}
	th_json_free(j);
	free(out);
	/* folded: the loop's stack weighs its count */
	out = sim_report(rec, "--format", "folded", NULL, NULL);
	assert_contains(out, "sim-kernels;loop 60003\n");
	free(out);
	/* deterministic: a second recording, the same views byte for byte */
	out = sim_report(rec, "--sort", "address", "--json", NULL);
	rec = sim_record("again.rec", "instructions", "sim-kernels", "loop", "10000");
	again = sim_report(rec, "--sort", "address", "--json", NULL);
	assert_string_equal(out, again);
	free(out);
	free(again);
}

/* The exports other tools read say simulated and weigh the exact counts: speedscope's
 * profile name and weights (the loop's one-frame stacks sum to its 60003), the flame
 * graph's title and the loop's frame, pprof's comment and go tool pprof's flat count. */
static void test_record_sim_exports(void **state)
{
	const struct th_json *frames, *samples, *weights;
	const char *rec;
	struct th_json *j;
	double loop = 0;
	struct th_run r;
	char *out;
	(void)state;

	NEED_VALGRIND();
	rec = sim_record("exports.rec", "instructions", "sim-kernels", "loop", "10000");
	out = sim_report(rec, "--format", "speedscope", NULL, NULL);
	j = assert_json(out);
	assert_true(strncmp(json_str(j, "name"), "instructions, simulated: ", 25) == 0);
	frames = th_json_get(j, "shared.frames");
	samples = th_json_get(j, "profiles[0].samples");
	weights = th_json_get(j, "profiles[0].weights");
	assert_non_null(frames);
	assert_non_null(samples);
	assert_non_null(weights);
	assert_int_equal(samples->n, weights->n);
	for (size_t i = 0; i < samples->n; i++) {
		const struct th_json *stack = samples->items[i];
		const struct th_json *leaf;
		assert_true(stack->n >= 1);
		leaf = frames->items[(size_t)stack->items[stack->n - 1]->number];
		if (!strcmp(json_str(leaf, "name"), "loop"))
			loop += weights->items[i]->number;
	}
	assert_true(loop == 60003);
	th_json_free(j);
	free(out);

	out = sim_report(rec, "--format", "svg", NULL, NULL);
	assert_contains(out, "Flame graph: instructions, ");
	assert_contains(out, " simulated (exact counts, no sampling) of ");
	assert_contains(out, "<title>loop (");
	assert_contains(strstr(out, "<title>loop ("), "): 60003 events, ");
	free(out);

	th_tacho(&r, "report", "-i", rec, "--format", "pprof", "-o", th_tmp("exports.pb.gz"),
		 NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	if (access("/usr/bin/go", X_OK) && access("/usr/lib/go/bin/go", X_OK))
		TEST_SKIP("go is not installed (scripts/deps.sh test: golang-go): the pprof "
			  "file is written, not read back");
	{
		char *argv[] = { (char *)"go", (char *)"tool", (char *)"pprof",
				 (char *)"-symbolize=none", (char *)"-sample_index=instructions",
				 (char *)"-nodecount=100000", (char *)"-nodefraction=0", (char *)"-top",
				 (char *)th_tmp("exports.pb.gz"), NULL };
		th_go_runv(&r, argv);
		if (r.status)
			fail_msg("go tool pprof -top failed (%d): %s", r.status, r.err);
		assert_contains(r.out, "simulated by valgrind: every instruction counted, no "
				       "sampling");
		assert_contains(r.out, "\n     60003 ");
		assert_contains(strstr(r.out, "\n     60003 "), "  loop\n");
		th_run_free(&r);
	}
}

/* record --sim -g: callgrind tells each function apart by its callers, so the loop
 * called through via_a N times and through via_b M times is two stacks of exactly
 * 6 N + 3 and 6 M + 3 instructions; the callee tree splits the loop's line the same,
 * and --children gives each caller those counts on top of its own. */
static void test_record_sim_calls(void **state)
{
	const struct th_json *kids, *node;
	struct th_json *j;
	struct th_run r;
	char *out;
	(void)state;

	NEED_VALGRIND();
	th_tacho(&r, "record", "--sim", "-q", "-g", "-o", th_tmp("calls.rec"), "--",
		 th_prog("sim-kernels"), "calls", "1000", "300", NULL);
	if (r.status != 0)
		fail_msg("tacho record --sim -g exited %d:\n%s", r.status, r.err);
	th_run_free(&r);
	out = sim_report(th_tmp("calls.rec"), "--format", "folded", NULL, NULL);
	assert_contains(out, ";main;via_a;loop 6003\n");
	assert_contains(out, ";main;via_b;loop 1803\n");
	free(out);
	/* the loop's line, its callers below it: 6000 and 1800 of its 7800 */
	th_tacho(&r, "report", "-i", th_tmp("calls.rec"), "--sort", "line", "-g", "callee",
		 "--json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	kids = th_json_get(report_row(j, "line", NULL,
				      th_source_line("tests/progs/sim-kernels.c",
						     "sim-kernels: the loop line")), "children");
	assert_non_null(kids);
	assert_int_equal(kids->n, 2);
	for (size_t i = 0; i < kids->n; i++) {
		node = kids->items[i];
		assert_int_equal(json_num(node, "samples"), 6);    /* its 6 instructions */
		assert_string_equal(json_str(node, "symbol"), i ? "via_b" : "via_a");
	}
	th_json_free(j);
	th_run_free(&r);
	/* the table: each caller's node with its exact count, of the loop's 7806 */
	th_tacho(&r, "report", "-i", th_tmp("calls.rec"), "--sort", "line", "-g", "callee",
		 "--symbols", "loop", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "# 7,806 of ");
	assert_contains(r.out, "\n     6000   76.86%  ");
	assert_contains(r.out, "\n     1800   23.06%  ");
	th_run_free(&r);
	/* --children: each caller holds the loop's count it called, on top of its own */
	th_tacho(&r, "report", "-i", th_tmp("calls.rec"), "--children", "--json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	node = report_row(j, "symbol", "loop", 0);
	assert_true(json_num(node, "events") == 7806);
	assert_true(json_num(node, "self_events") == 7806);
	node = report_row(j, "symbol", "via_a", 0);
	assert_true(json_num(node, "events") - json_num(node, "self_events") == 6003);
	node = report_row(j, "symbol", "via_b", 0);
	assert_true(json_num(node, "events") - json_num(node, "self_events") == 1803);
	th_json_free(j);
	th_run_free(&r);
	/* without -g, no chains: one frame under the program */
	th_tacho(&r, "record", "--sim", "-q", "-o", th_tmp("nocalls.rec"), "--",
		 th_prog("sim-kernels"), "calls", "10", "10", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	out = sim_report(th_tmp("nocalls.rec"), "--format", "folded", NULL, NULL);
	assert_contains(out, "sim-kernels;loop 126\n");   /* (6 x 10 + 3) twice */
	free(out);
}

/* record --sim --sim-cpu: the simulated caches of the dump, and a miss event per line:
 * two passes of a 64-byte stride over 8 times the last level miss it on every line,
 * all on the line of the one load. */
static void test_record_sim_cpu(void **state)
{
	int line = th_source_line("tests/progs/sim-kernels.c", "movb (%1), %0");
	struct th_json *j;
	struct th_run r;
	char *out;
	(void)state;

	NEED_VALGRIND();
	th_tacho(&r, "record", "--sim", "-q", "--sim-cpu", th_path(SMALL_LLC), "-e",
		 "LLC-load-misses", "-o", th_tmp("stream.rec"), "--", th_prog("sim-kernels"),
		 "stream", "8388608", "2", NULL);
	if (r.status != 0)
		fail_msg("exit %d:\n%s", r.status, r.err);
	th_run_free(&r);
	out = sim_report(th_tmp("stream.rec"), "--sort", "line", "--json", NULL);
	j = assert_json(out);
	assert_string_equal(json_str(j, "status"), "simulated");
	assert_true(json_num(report_row(j, "line", NULL, line), "events") == 2 * 131072.0);
	assert_int_equal(json_num(j, "rows[0].line"), line);
	th_json_free(j);
	free(out);
	th_tacho(&r, "record", "--sim", "--sim-cpu", "/nonexistent.cpuid", "--", "true", NULL);
	assert_one_line(&r, 1, "tacho: cannot simulate:");
	th_run_free(&r);
	/* an output that is a link is refused as record refuses it, before valgrind runs */
	assert_int_equal(symlink(th_tmp("victim"), th_tmp("link.rec")), 0);
	th_tacho(&r, "record", "--sim", "-o", th_tmp("link.rec"), "--", "true", NULL);
	assert_one_line(&r, 1, "tacho: cannot write '");
	assert_contains(r.err, "it is a symbolic link, which tacho does not follow");
	assert_int_equal(access(th_tmp("victim"), F_OK), -1);
	th_run_free(&r);
}

/* record --sim of a position-independent program with shared libraries: its loop's
 * line is found in its binary (valgrind's load bias from its log), exactly (N + M) x 6
 * instructions, and libc's functions resolve in libc. */
static void test_record_sim_pie(void **state)
{
	const struct th_json *rows;
	struct th_json *j;
	const char *rec;
	char *out;
	bool libc = false;
	double v[2];
	(void)state;

	NEED_VALGRIND();
#if defined(__SANITIZE_ADDRESS__)
	TEST_SKIP("the program links this tree's sanitized libtacho, which valgrind cannot "
		  "run");
#endif
	for (int k = 0; k < 2; k++) {
		rec = sim_record("pie.rec", "instructions", "lib-sim-regions",
				 k ? "20000" : "10000", "5000");
		out = sim_report(rec, "--sort", "line", "--json", NULL);
		j = assert_json(out);
		/* the program's hottest line is the loop's */
		rows = th_json_get(j, "rows");
		v[k] = -1;
		for (size_t i = 0; i < rows->n && v[k] < 0; i++)
			if (!strcmp(json_str(rows->items[i], "dso"), th_prog("lib-sim-regions"))) {
				assert_contains(json_str(rows->items[i], "file"), "lib-sim-regions.c");
				v[k] = json_num(rows->items[i], "events");
			}
		th_json_free(j);
		free(out);
	}
	assert_true(v[0] == (10000 + 5000) * 6.0);
	assert_true(v[1] == (20000 + 5000) * 6.0);
	out = sim_report(rec, "--sort", "symbol", "--json", NULL);
	j = assert_json(out);
	rows = th_json_get(j, "rows");
	for (size_t i = 0; i < rows->n; i++)
		if (strstr(json_str(rows->items[i], "dso"), "libc.so"))
			libc = libc || strcmp(json_str(rows->items[i], "symbol"), "[unknown]");
	assert_true(libc);
	th_json_free(j);
	free(out);
	/* --mca reads the block of a position-independent binary at its ELF addresses:
	 * the loop ran N + M times */
	if (system("command -v llvm-mca >/dev/null && command -v llvm-mc >/dev/null") != 0)
		return;
	out = sim_report(rec, "--annotate", "loop", "--mca", "--json");
	j = assert_json(out);
	assert_string_equal(json_str(j, "dso"), th_prog("lib-sim-regions"));
	assert_int_equal(json_num(j, "executions"), 25000);
	assert_int_equal(json_num(j, "events"), 25000 * 6);
	assert_int_equal(th_json_get(j, "instructions")->n, 6);
	th_json_free(j);
	free(out);
}

/* report --annotate loop --mca on a simulated recording: the block is the loop's 6
 * instructions, each run exactly N times, and llvm-mc and llvm-mca run directly on its
 * bytes agree; on a sampled recording (cpu-clock) the same block, its samples beside. */
static void test_report_mca(void **state)
{
	const struct th_json *insns;
	struct th_json *j;
	struct th_run r;
	const char *rec;
	char *out;
	(void)state;

	NEED_VALGRIND();
	if (system("command -v llvm-mca >/dev/null && command -v llvm-mc >/dev/null") != 0)
		TEST_SKIP("llvm-mca is not installed (Debian package llvm)");
	rec = sim_record("mca.rec", "instructions", "sim-kernels", "loop", "100000");
	out = sim_report(rec, "--annotate", "loop", "--mca", "--json");
	j = assert_json(out);
	assert_string_equal(json_str(j, "status"), "simulated");
	assert_string_equal(json_str(j, "symbol"), "loop");
	assert_int_equal(json_num(j, "executions"), 100000);
	assert_int_equal(json_num(j, "events"), 600000);
	insns = th_json_get(j, "instructions");
	assert_int_equal(insns->n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(json_num(insns->items[i], "events"), 100000);
		if (i < 4)
			assert_string_equal(json_str(insns->items[i], "text"), "nop");
	}
	assert_true(strncmp(json_str(insns->items[4], "text"), "dec", 3) == 0);
	assert_true(strncmp(json_str(insns->items[5], "text"), "jne", 3) == 0);
	same_as_llvm(json_str(j, "bytes"), json_str(j, "mcpu"), insns,
		     json_num(j, "block_rthroughput"), json_num(j, "ipc"));
	th_json_free(j);
	free(out);
	/* the table: the listing, then the block beside its counts */
	out = sim_report(rec, "--annotate", "loop", "--mca", NULL);
	assert_contains(out, "# loop in ");
	assert_contains(out, "# the hottest basic block of loop in ");
	assert_contains(out, "6 instructions at 0x");
	assert_contains(out, "run 100000 times\n");
	assert_contains(out, "llvm-mca -mcpu=");
	free(out);

	/* a sampled recording: time-based samples of the same loop */
	th_tacho(&r, "record", "-q", "-e", "cpu-clock", "-o", th_tmp("cpu.rec"), "--",
		 th_prog("sim-kernels"), "loop", "200000000", NULL);
	if (r.status != 0) {
		th_run_free(&r);
		TEST_SKIP("cpu-clock cannot be sampled here");
	}
	th_run_free(&r);
	out = sim_report(th_tmp("cpu.rec"), "--annotate", "loop", "--mca", "--json");
	j = assert_json(out);
	assert_null(th_json_get(j, "status"));
	assert_true(json_num(j, "samples") > 0);
	assert_true(json_num(j, "samples") <= json_num(j, "function_samples"));
	assert_int_equal(th_json_get(j, "executions")->type, TH_JSON_NULL);
	insns = th_json_get(j, "instructions");
	assert_int_equal(insns->n, 6);
	assert_true(strncmp(json_str(insns->items[5], "text"), "jne", 3) == 0);
	th_json_free(j);
	free(out);

	/* usage and a function without samples */
	th_tacho(&r, "report", "-i", rec, "--mca", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--mca analyses a function");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", rec, "--annotate", "nosuch", "--mca", NULL);
	assert_one_line(&r, 1, "tacho: cannot analyse the hottest block: no samples in a "
			       "function named 'nosuch'");
	th_run_free(&r);
	/* report's filters hold for the block too: none of the loop's samples is kept */
	th_tacho(&r, "report", "-i", rec, "--annotate", "loop", "--mca", "--comm", "nosuch",
		 NULL);
	assert_one_line(&r, 1, "tacho: cannot analyse the hottest block: no samples in a "
			       "function named 'loop'");
	th_run_free(&r);
	th_tacho(&r, "report", "-i", rec, "--annotate", "loop", "--mca", "--csv", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--mca writes a table or JSON: no --csv");
	th_run_free(&r);
}

/* record --sim's bad input: an event with no simulated meaning, options that do not go
 * with it, no valgrind. */
static void test_record_sim_bad(void **state)
{
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	struct th_run r;
	(void)state;

	th_tacho(&r, "record", "--sim", "-c", "1000", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--sim runs a program under valgrind");
	th_run_free(&r);
	th_tacho(&r, "record", "--sim", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	th_tacho(&r, "record", "--sim-cpu", "x", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--sim-cpu goes with --sim");
	th_run_free(&r);
	setenv("PATH", "/nonexistent", 1);
	th_tacho(&r, "record", "--sim", "--", th_prog("sim-kernels"), "loop", "1", NULL);
	if (path)
		setenv("PATH", path, 1);
	assert_one_line(&r, 1, "tacho: cannot simulate: valgrind is not installed");
	th_run_free(&r);
	free(path);
	NEED_VALGRIND();
	th_tacho(&r, "record", "--sim", "-e", "cycles", "-o", th_tmp("no.rec"), "--",
		 th_prog("sim-kernels"), "loop", "1", NULL);
	assert_one_line(&r, 1, "tacho: cannot record 'cycles' under --sim: no simulated value");
	th_run_free(&r);
	assert_int_equal(access(th_tmp("no.rec"), F_OK), -1);
	th_tacho(&r, "record", "--sim", "--", "no-such-program-tacho", NULL);
	assert_one_line(&r, 127, "tacho: cannot run 'no-such-program-tacho'");
	th_run_free(&r);
}

/* The program's exit status is tacho's, as without --sim. */
static void test_exit_status(void **state)
{
	struct th_run r;
	(void)state;

	NEED_VALGRIND();
	th_tacho(&r, "stat", "--sim", "-e", "instructions", "--", th_prog("sim-kernels"),
		 "nonsense", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "instructions  (simulated)");
	assert_contains(r.err, "the program: exited with status 2");
	th_run_free(&r);
}

static void assert_one_line(const struct th_run *r, int status, const char *needle)
{
	if (r->status != status)
		fail_msg("exit %d, not %d:\n%s", r->status, status, r->err);
	assert_contains(r->err, needle);
	assert_true(r->err[0] == 't' && th_count_lines(r->err) == 1);
}

static void test_bad_input(void **state)
{
	char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	char junk[4096];
	unsigned char bytes[64];
	struct th_run r;
	FILE *f;
	(void)state;

	/* no valgrind: a PATH without it */
	setenv("PATH", "/nonexistent", 1);
	th_tacho(&r, "stat", "--sim", "--", th_prog("sim-kernels"), "loop", "1", NULL);
	if (path)
		setenv("PATH", path, 1);
	assert_one_line(&r, 1, "tacho: cannot simulate: valgrind is not installed: no "
			       "'valgrind' in PATH (install the Debian package valgrind)");
	th_run_free(&r);

	/* --mca without llvm: a PATH that holds valgrind alone */
	if (have_valgrind()) {
		char link[4096], vg[4096];
		const char *p = path ? path : "";
		vg[0] = '\0';
		while (*p && !vg[0]) {
			size_t n = strcspn(p, ":");
			snprintf(vg, sizeof(vg), "%.*s/valgrind", (int)n, p);
			if (access(vg, X_OK) != 0)
				vg[0] = '\0';
			p += n + (p[n] == ':');
		}
		snprintf(link, sizeof(link), "%s", th_tmp("bin"));
		assert_int_equal(mkdir(link, 0755), 0);
		snprintf(link, sizeof(link), "%s/valgrind", th_tmp("bin"));
		assert_int_equal(symlink(vg, link), 0);
		/* Debian's valgrind is a script that runs valgrind.bin beside itself */
		snprintf(link, sizeof(link), "%s/valgrind.bin", th_tmp("bin"));
		strncat(vg, ".bin", sizeof(vg) - strlen(vg) - 1);
		if (access(vg, X_OK) == 0)
			assert_int_equal(symlink(vg, link), 0);
		setenv("PATH", th_tmp("bin"), 1);
		th_tacho(&r, "stat", "--sim", "--mca", "--", th_prog("sim-kernels"), "loop", "1",
			 NULL);
		setenv("PATH", path, 1);
		assert_one_line(&r, 1, "tacho: cannot analyse the hottest block: llvm-mc is not "
				       "installed (install the Debian package llvm)");
		th_run_free(&r);
	}

	/* a CPUID dump that does not exist, and one that is no dump */
	th_tacho(&r, "stat", "--sim", "--sim-cpu", "/nonexistent.cpuid", "--", "true", NULL);
	assert_one_line(&r, 1, "tacho: cannot simulate:");
	/* naming the file, and why */
	assert_contains(r.err, "the CPU dump /nonexistent.cpuid: cannot read the file: No such "
			       "file");
	th_run_free(&r);
	NEED_VALGRIND();
	th_tacho(&r, "stat", "--sim", "--sim-cpu", th_path("README.md"), "--", "true", NULL);
	assert_one_line(&r, 1, "tacho: cannot simulate:");
	th_run_free(&r);

	/* programs valgrind cannot run: none, and a file of bytes that is no program */
	th_tacho(&r, "stat", "--sim", "--", "no-such-program-tacho", NULL);
	assert_one_line(&r, 127, "tacho: cannot run 'no-such-program-tacho': no such program "
				 "in PATH");
	th_run_free(&r);
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 37);
	snprintf(junk, sizeof(junk), "%s", th_tmp("junk"));
	f = fopen(junk, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, sizeof(bytes), f), sizeof(bytes));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(junk, 0755), 0);
	th_tacho(&r, "stat", "--sim", "--", junk, NULL);
	assert_one_line(&r, 126, "valgrind cannot run");
	assert_contains(r.err, "neither an ELF executable nor a script");
	th_run_free(&r);

	/* usage */
	th_tacho(&r, "stat", "--sim-cpu", "x", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--sim-cpu, --sim-hot and --mca go with --sim");
	th_run_free(&r);
	th_tacho(&r, "stat", "--sim", "--sim-hot", "lines", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad value for --sim-hot: 'lines'");
	th_run_free(&r);
	th_tacho(&r, "stat", "--sim", "--sim-hot", "line:0", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--sim-hot line:0: how many places to show must be at least 1");
	th_run_free(&r);
	th_tacho(&r, "stat", "--sim", "-p", "1", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--sim runs a program under valgrind");
	th_run_free(&r);
	free(path);
}

/* Without a PMU, stat's explanation of a hardware event names --sim. */
static void test_no_pmu_hint(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "stat", "-e", "instructions", "--", "true", NULL);
	assert_int_equal(r.status, 0);
	if (!strstr(r.err, "no hardware PMU")) {
		th_run_free(&r);
		TEST_SKIP("this machine has a PMU: instructions are counted");
	}
	assert_contains(r.err, "'tacho stat --sim' simulates it under valgrind");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_exact),
		cmocka_unit_test(test_newline_in_path),
		cmocka_unit_test(test_proof_loop_agrees_with_valgrind),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_children_followed),
		cmocka_unit_test(test_stream_misses),
		cmocka_unit_test(test_fits_in_d1),
		cmocka_unit_test(test_branch_prediction),
		cmocka_unit_test(test_outputs),
		cmocka_unit_test(test_regions_exact),
		cmocka_unit_test(test_hot_places),
		cmocka_unit_test(test_loop_at_entry),
		cmocka_unit_test(test_mca),
		cmocka_unit_test(test_record_sim),
		cmocka_unit_test(test_record_sim_exports),
		cmocka_unit_test(test_record_sim_calls),
		cmocka_unit_test(test_record_sim_cpu),
		cmocka_unit_test(test_record_sim_pie),
		cmocka_unit_test(test_record_sim_bad),
		cmocka_unit_test(test_report_mca),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_no_pmu_hint),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
