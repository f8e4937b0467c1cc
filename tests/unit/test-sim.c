/* test-sim.c - lib/sim without running valgrind where it can: the reader of callgrind's
 * files on fixed texts (costs after "calls=" left out, totals checked, positions of
 * both kinds, bad lines named), the files of one run adding up, the mapping of events
 * onto valgrind's totals, the fitting of a CPU's caches to valgrind's rules, and the
 * simulator's errors (no valgrind, a dump that cannot be read); then one real run of
 * `true` when valgrind is installed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "sim/sim.h"
#include "tacho/sim.h"

static const char small[] =
	"# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\ncmd: ./x\n"
	"positions: line\nevents: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n\n"
	"fl=(1) x.c\nfn=(1) main\n3 10 2 1 1 1 0 1 1 0 2 1\n+2 4 0 0 0 0 0 0 0 0 1 1 1 1\n"
	"cfn=(2) f\ncalls=3 -4\n* 300 30 3\n"
	"fn=(2)\n-4 300 30 3 0 0 0 0 0 0 0 0 0 0\n\n"
	"totals: 314 32 4 1 1 0 1 1 0 3 2 1 1\n";

static struct tacho_sim_result *parse_ok(const char *text)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_sim_result *r = NULL;
	int err = tacho_sim_result_parse(text, strlen(text), "t", &r, &d);

	if (err)
		fail_msg("parse: %s: line %u: %s", tacho_strerror(err), d.line, d.message);
	return r;
}

static uint64_t total(const struct tacho_sim_result *r, const char *ev)
{
	uint64_t v = 0;

	assert_int_equal(tacho_sim_result_total(r, ev, &v), 0);
	return v;
}

/* Self costs add up to the totals; the inclusive cost of a call is not counted again. */
static void test_parse_totals(void **state)
{
	struct tacho_sim_result *r = parse_ok(small);
	uint64_t v;
	(void)state;

	assert_int_equal(total(r, "Ir"), 314);
	assert_int_equal(total(r, "Dr"), 32);
	assert_int_equal(total(r, "Bc"), 3);
	assert_int_equal(total(r, "Bim"), 1);
	assert_int_equal(tacho_sim_result_total(r, "Cycles", &v), -TACHO_ENOVALUE);
	assert_null(tacho_sim_result_exit(r));
	/* a second file of the same run adds */
	{
		struct tacho_diag d = { .sz = sizeof(d) };
		assert_int_equal(tacho_sim_result_parse(small, strlen(small), "u", &r, &d), 0);
	}
	assert_int_equal(total(r, "Ir"), 628);
	tacho_sim_result_free(r);

	/* positions "instr line": an address, relative steps and "*" */
	r = parse_ok("events: Ir\npositions: instr line\n0x401000 12 5\n+3 * 2\n-1 +1 1\n"
		     "totals: 8\n");
	assert_int_equal(total(r, "Ir"), 8);
	tacho_sim_result_free(r);
	/* missing costs are 0; no totals line is fine */
	r = parse_ok("events: A B\n1 5\n2\n");
	assert_int_equal(total(r, "A"), 5);
	assert_int_equal(total(r, "B"), 0);
	tacho_sim_result_free(r);
}

static const struct {
	int line;
	const char *text;
	int err;
	unsigned at;          /* the line the diagnostic names (0: none) */
	const char *msg;
} bad_cases[] = {
	{ __LINE__, "", -TACHO_EEMPTY, 0, "no \"events:\" line" },
	{ __LINE__, "fn=(1) main\n", -TACHO_EEMPTY, 0, "no \"events:\"" },
	{ __LINE__, "1 2\nevents: Ir\n", -TACHO_EPARSE, 1, "before \"events:\"" },
	{ __LINE__, "events: Ir Dr\n1 2 3 4\n", -TACHO_EPARSE, 2, "more costs than events" },
	{ __LINE__, "events: Ir\n1 x\n", -TACHO_EPARSE, 2, "not a whole number" },
	{ __LINE__, "events: Ir\n1 -3\n", -TACHO_EPARSE, 2, "not a whole number" },
	{ __LINE__, "events: Ir\n0xg 3\n", -TACHO_EPARSE, 2, "position is not a number" },
	{ __LINE__, "events: Ir\nevents: Dr\n", -TACHO_EPARSE, 2, "a second" },
	{ __LINE__, "events: Ir Ir\n", -TACHO_EPARSE, 1, "named twice" },
	{ __LINE__, "events:\n", -TACHO_EPARSE, 1, "names no event" },
	{ __LINE__, "events: I-r\n", -TACHO_EPARSE, 1, "not a word" },
	{ __LINE__, "events: Ir\npositions: col\n", -TACHO_EPARSE, 2, "position other" },
	{ __LINE__, "events: Ir\n1 5\ntotals: 6\n", -TACHO_EPARSE, 0, "not the sum" },
	{ __LINE__, "events: Ir\n1 18446744073709551615\n2 1\n", -TACHO_EPARSE, 3,
	  "beyond 64 bits" },
	{ __LINE__, "events: Ir\n1 99999999999999999999\n", -TACHO_EPARSE, 2, "whole number" },
	{ __LINE__, "events: Ir\n!!\n", -TACHO_EPARSE, 2, "neither a header" },
	{ __LINE__, "totals: 1\n", -TACHO_EPARSE, 1, "before \"events:\"" },
};

static void test_parse_bad(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		struct tacho_sim_result *r = NULL;
		int err = tacho_sim_result_parse(bad_cases[i].text, strlen(bad_cases[i].text),
						 "f", &r, &d);
		if (err != bad_cases[i].err || r || d.line != bad_cases[i].at ||
		    !strstr(d.message, bad_cases[i].msg))
			fail_msg("case of line %d: %d (%s), line %u: %s", bad_cases[i].line, err,
				 tacho_strerror(err), d.line, d.message);
	}
}

/* Places: compressed names, relative and "*" positions, the call's line left out but
 * moving the positions, fi=/fe= and fn= switching files. */
static const char places[] =
	"events: Ir Bc Bi\npositions: instr line\nob=(1) /bin/x\nfl=(1) x.c\nfn=(1) main\n"
	"0x10 3 5 1\n+2 * 5 0\n+1 +1 2\ncfl=(2) y.c\ncfn=(2) f\ncalls=2 0x40 10\n"
	"+1 * 100 4\nfn=(2)\nfi=(2)\n0x40 10 100 4\nfe=(1)\n+1 5 1 0\nfn=(1)\n0x20 7 9 0\n"
	"totals: 122 5\n";

static void test_places(void **state)
{
	static const struct {
		int line;
		enum tacho_sim_view view;
		uint64_t config;
		const char *want;     /* "function file:line@addr=value;" per row */
	} cases[] = {
		{ __LINE__, TACHO_SIM_VIEW_FUNCTION, PERF_COUNT_HW_INSTRUCTIONS,
		  "f -:0@0=101;main -:0@0=21;" },
		{ __LINE__, TACHO_SIM_VIEW_LINE, PERF_COUNT_HW_INSTRUCTIONS,
		  "f y.c:10@0=100;main x.c:3@0=10;main x.c:7@0=9;main x.c:4@0=2;f x.c:5@0=1;" },
		{ __LINE__, TACHO_SIM_VIEW_INSTRUCTION, PERF_COUNT_HW_INSTRUCTIONS,
		  "f y.c:10@64=100;main x.c:7@32=9;main x.c:3@16=5;main x.c:3@18=5;"
		  "main x.c:4@19=2;f x.c:5@65=1;" },
		{ __LINE__, TACHO_SIM_VIEW_LINE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		  "f y.c:10@0=4;main x.c:3@0=1;" },
	};
	struct tacho_sim_result *r = parse_ok(places);
	struct {
		struct tacho_sim_row row;
		uint64_t later;       /* a newer header's field: written as 0 */
	} *big;
	struct tacho_sim_row *rows;
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_HARDWARE };
	const char *why;
	size_t n;
	(void)state;

	assert_int_equal(total(r, "Ir"), 122);
	/* the one call site (record --sim's chains): main at 0x14 called f twice */
	{
		const char *ob, *fn, *cfn;
		uint64_t addr, count;
		assert_int_equal(tc_sim_result_ncalls(r), 1);
		tc_sim_result_call(r, 0, &ob, &fn, &cfn, &addr, &count);
		assert_string_equal(ob, "/bin/x");
		assert_string_equal(fn, "main");
		assert_string_equal(cfn, "f");
		assert_int_equal(addr, 0x14);
		assert_int_equal(count, 2);
	}
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char got[512] = "";
		a.config = cases[i].config;
		assert_int_equal(tacho_sim_result_rows(r, cases[i].view, &a, &rows, &n,
						       sizeof(*rows), NULL), 0);
		for (size_t k = 0; k < n; k++) {
			size_t len = strlen(got);
			assert_string_equal(rows[k].object, "/bin/x");
			snprintf(got + len, sizeof(got) - len, "%s %s:%u@%llu=%llu;",
				 rows[k].function, rows[k].file ? rows[k].file : "-", rows[k].line,
				 (unsigned long long)rows[k].address,
				 (unsigned long long)rows[k].value);
		}
		if (strcmp(got, cases[i].want))
			fail_msg("case of line %d: %s", cases[i].line, got);
		free(rows);
	}
	/* a newer caller's larger rows, at its stride */
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	assert_int_equal(tacho_sim_result_rows(r, TACHO_SIM_VIEW_FUNCTION, &a,
					       (struct tacho_sim_row **)&big, &n, sizeof(*big),
					       NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(big[1].row.function, "main");
	assert_int_equal(big[1].row.value, 21);
	assert_int_equal(big[1].later, 0);
	free(big);
	/* no simulated meaning, a bad view, a short row */
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	assert_int_equal(tacho_sim_result_rows(r, TACHO_SIM_VIEW_LINE, &a, &rows, &n,
					       sizeof(*rows), &why), -TACHO_ENOVALUE);
	assert_non_null(strstr(why, "no time"));
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	assert_int_equal(tacho_sim_result_rows(r, (enum tacho_sim_view)7, &a, &rows, &n,
					       sizeof(*rows), NULL), -EINVAL);
	assert_int_equal(tacho_sim_result_rows(r, TACHO_SIM_VIEW_LINE, &a, &rows, &n, 8, NULL),
			 -EINVAL);
	tacho_sim_result_free(r);
	/* a name id never defined */
	{
		struct tacho_diag d = { .sz = sizeof(d) };
		static const char undefined[] = "events: Ir\nfn=(3)\n1 1\n";
		assert_int_equal(tacho_sim_result_parse(undefined, strlen(undefined), "u", &r, &d),
				 -TACHO_EPARSE);
		assert_int_equal(d.line, 2);
	}
}

/* A program whose path holds a newline: callgrind writes it as it is into "cmd:" and
 * "ob=" (its arguments' newlines escaped): the lines after are the rest of the name,
 * never "a line that is neither a header, a name nor a cost line" (stat --sim failed
 * on such a program). The name keeps its newline. */
static void test_parse_newline_names(void **state)
{
	static const char text[] =
		"# callgrind format\nversion: 1\ncmd:  /tmp/a\nb\n c arg\\ntwo\npart: 1\n"
		"positions: line\nevents: Ir\n\n"
		"ob=(1) /tmp/a\nb\n c\nfl=(1) x.c\nfn=(1) main\n3 10\n"
		"ob=(2) /lib/libc.so\nfn=(2) f\n4 5\n"
		"ob=(1)\nfn=(1)\n5 1\n"
		"totals: 16\n";
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_HARDWARE,
				     .config = PERF_COUNT_HW_INSTRUCTIONS };
	struct tacho_sim_result *r = parse_ok(text);
	struct tacho_sim_row *rows;
	size_t n;
	(void)state;

	assert_int_equal(total(r, "Ir"), 16);
	assert_int_equal(tacho_sim_result_rows(r, TACHO_SIM_VIEW_FUNCTION, &a, &rows, &n,
					       sizeof(*rows), NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].function, "main");
	assert_string_equal(rows[0].object, "/tmp/a\nb\n c");
	assert_int_equal(rows[0].value, 11);
	assert_string_equal(rows[1].object, "/lib/libc.so");
	free(rows);
	tacho_sim_result_free(r);
}

/* A refused second file leaves the first one's result as it was. */
static void test_parse_keeps_on_error(void **state)
{
	struct tacho_sim_result *r = parse_ok(small), *before;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	before = r;
	assert_int_equal(tacho_sim_result_parse("events: Ir\nx y\n", 15, "bad", &r, &d),
			 -TACHO_EPARSE);
	assert_ptr_equal(r, before);
	assert_int_equal(total(r, "Ir"), 314);
	tacho_sim_result_free(r);
	assert_int_equal(tacho_sim_result_parse("events: Ir\n", 11, "x", NULL, NULL), -EINVAL);
}

static int value(const struct tacho_sim_result *r, uint32_t type, uint64_t config,
		 uint64_t *v, const char **why)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = type, .config = config };

	return tacho_sim_result_value(r, &a, v, why);
}

#define CACHE(id, op, res)                                                              \
	((uint64_t)PERF_COUNT_HW_CACHE_##id | (uint64_t)PERF_COUNT_HW_CACHE_OP_##op << 8 |   \
	 (uint64_t)PERF_COUNT_HW_CACHE_RESULT_##res << 16)

/* Each event is the sum of its totals (small: Ir 314 Dr 32 Dw 4 I1mr 1 D1mr 1 D1mw 0
 * ILmr 1 DLmr 1 DLmw 0 Bc 3 Bcm 2 Bi 1 Bim 1). */
static void test_mapping(void **state)
{
	static const struct {
		int line;
		uint32_t type;
		uint64_t config;
		uint64_t want;
	} cases[] = {
		{ __LINE__, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 314 },
		{ __LINE__, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 4 },
		{ __LINE__, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 3 },
		{ __LINE__, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 2 },
		{ __LINE__, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 2 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(L1D, READ, ACCESS), 32 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(L1D, READ, MISS), 1 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(L1D, WRITE, ACCESS), 4 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(L1D, WRITE, MISS), 0 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(L1I, READ, ACCESS), 314 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(L1I, READ, MISS), 1 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(LL, READ, ACCESS), 1 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(LL, READ, MISS), 1 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(LL, WRITE, ACCESS), 0 },
		{ __LINE__, PERF_TYPE_HW_CACHE, CACHE(LL, WRITE, MISS), 0 },
	};
	struct tacho_sim_result *r = parse_ok(small);
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_HARDWARE,
				     .config = PERF_COUNT_HW_INSTRUCTIONS, .exclude_user = 1 };
	const char *why;
	uint64_t v;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		v = 12345;
		if (value(r, cases[i].type, cases[i].config, &v, &why) != 0 || v != cases[i].want)
			fail_msg("case of line %d: %llu", cases[i].line, (unsigned long long)v);
	}
	assert_int_equal(value(r, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, &v, &why),
			 -TACHO_ENOVALUE);
	assert_non_null(strstr(why, "no time"));
	assert_int_equal(value(r, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, &v, &why),
			 -TACHO_ENOVALUE);
	assert_non_null(strstr(why, "software event"));
	assert_int_equal(value(r, PERF_TYPE_HW_CACHE, CACHE(DTLB, READ, MISS), &v, &why),
			 -TACHO_ENOVALUE);
	assert_int_equal(value(r, PERF_TYPE_RAW, 0xc0, &v, &why), -TACHO_ENOVALUE);
	assert_int_equal(tacho_sim_result_value(r, &a, &v, &why), -TACHO_ENOVALUE);
	assert_non_null(strstr(why, "user space only"));
	/* a result without the cache events (callgrind without --cache-sim) */
	tacho_sim_result_free(r);
	r = parse_ok("events: Ir\n1 7\n");
	assert_int_equal(value(r, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, &v, NULL), 0);
	assert_int_equal(v, 7);
	assert_int_equal(value(r, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, &v, &why),
			 -TACHO_ENOVALUE);
	assert_non_null(strstr(why, "did not produce"));
	tacho_sim_result_free(r);
	assert_non_null(strstr(tacho_sim_default_events(), "LLC-load-misses"));
}

/* valgrind wants a power of two of sets and of bytes per line (at least 16), and a size
 * that fits an int; an associativity nobody states is 8 ways at level 1, 16 beyond,
 * never one set of every line. Each case: the cache as decoded, the kernel's ways
 * (0: none), what valgrind is given, and the note exactly. */
static void test_cache_fit(void **state)
{
#define KiB * 1024ull
#define MiB * 1048576ull
	static const struct {
		int line;
		unsigned level;
		uint64_t size;
		unsigned ways, line_size;
		bool full;
		unsigned kernel_ways;
		uint64_t want_size;
		unsigned want_ways, want_line;
		const char *note;
	} cases[] = {
		/* the Zen 5 guest of bhyve: 8000_0006h's L3 code 9 ("see 8000_001Dh"), that
		 * leaf empty; the default, or the kernel's 16 where sysfs has it */
		{ __LINE__, 3, 32 MiB, 0, 64, false, 0, 32 MiB, 16, 64,
		  "LL: CPUID gives no associativity: simulated as 16-way, tacho's default "
		  "for a level-3 cache" },
		{ __LINE__, 3, 32 MiB, 0, 64, false, 16, 32 MiB, 16, 64,
		  "LL: CPUID gives no associativity: 16-way as the kernel says (sysfs)" },
		/* the same guest on another host: 508 MiB, 16 ways are 520,192 sets; 262,144
		 * sets of 32 ways keep the size as nearly as whole ways can (512 MiB) */
		{ __LINE__, 3, 508 MiB, 0, 64, false, 0, 512 MiB, 32, 64,
		  "LL: CPUID gives no associativity: simulated as 16-way, tacho's default "
		  "for a level-3 cache; LL: 508 MiB, 16-way has 520192 sets, not a power of "
		  "two as valgrind needs: simulated as 512 MiB, 32-way (262144 sets)" },
		/* the CPU's ways win over the kernel's */
		{ __LINE__, 1, 48 KiB, 12, 64, false, 8, 48 KiB, 12, 64, "" },
		{ __LINE__, 1, 32 KiB, 0, 64, false, 0, 32 KiB, 8, 64,
		  "D1: CPUID gives no associativity: simulated as 8-way, tacho's default "
		  "for a level-1 cache" },
		/* sizes that are not a power of two, with ways that make one of sets */
		{ __LINE__, 3, 12 MiB, 12, 64, false, 0, 12 MiB, 12, 64, "" },
		{ __LINE__, 3, 24 MiB, 12, 64, false, 0, 24 MiB, 12, 64, "" },
		{ __LINE__, 2, 1280 KiB, 10, 64, false, 0, 1280 KiB, 10, 64, "" },
		/* and with ways that do not: more ways, the same size (valgrind's rule,
		 * cg_arch.c: a Core i7's 12 MiB 16-way simulated as 24-way) */
		{ __LINE__, 3, 12 MiB, 16, 64, false, 0, 12 MiB, 24, 64,
		  "LL: 12 MiB, 16-way has 12288 sets, not a power of two as valgrind needs: "
		  "simulated as 12 MiB, 24-way (8192 sets)" },
		{ __LINE__, 3, 24 MiB, 0, 64, false, 0, 24 MiB, 24, 64,
		  "LL: CPUID gives no associativity: simulated as 16-way, tacho's default "
		  "for a level-3 cache; LL: 24 MiB, 16-way has 24576 sets, not a power of "
		  "two as valgrind needs: simulated as 24 MiB, 24-way (16384 sets)" },
		{ __LINE__, 2, 1536 KiB, 16, 64, false, 0, 1536 KiB, 24, 64,
		  "LL: 1.5 MiB, 16-way has 1536 sets, not a power of two as valgrind needs: "
		  "simulated as 1.5 MiB, 24-way (1024 sets)" },
		/* a size the ways do not divide (valgrind's comment: "Some AMD cpus have
		 * T = 5MB, A = 48, L = 64, which gives 1706.667 sets") */
		{ __LINE__, 3, 5 MiB, 48, 64, false, 0, 5 MiB, 80, 64,
		  "LL: 5 MiB, 48-way has 1706.67 sets, not a power of two as valgrind needs: "
		  "simulated as 5 MiB, 80-way (1024 sets)" },
		/* beyond valgrind's int: fewer sets */
		{ __LINE__, 3, 3072 MiB, 16, 64, false, 0, 1536 MiB, 24, 64,
		  "LL: 3 GiB, 16-way has 3145728 sets, not a power of two as valgrind "
		  "needs: simulated as 3 GiB, 24-way (2097152 sets); LL: 3 GiB is more than "
		  "valgrind takes (2 GiB less a byte): simulated as 1.5 GiB" },
		/* lines: a power of two, at least 16 bytes */
		{ __LINE__, 1, 32 KiB, 8, 24, false, 0, 32 KiB, 8, 16,
		  "D1: 24-byte lines simulated as 16" },
		{ __LINE__, 1, 48 KiB, 12, 24, false, 0, 48 KiB, 12, 16,
		  "D1: 24-byte lines simulated as 16" },
		/* fully associative where CPUID says so: one set of every line */
		{ __LINE__, 1, 32 KiB, 0, 64, true, 0, 32 KiB, 512, 64, "" },
	};
	struct tacho_cpu_cache c = { .type = TACHO_CACHE_UNIFIED };
	struct tacho_sim_cache out;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *name = cases[i].level == 1 ? "D1" : "LL";
		char note[512] = "";
		c.level = cases[i].level;
		c.size = cases[i].size;
		c.ways = cases[i].ways;
		c.line_size = cases[i].line_size;
		c.fully_assoc = cases[i].full;
		memset(&out, 0, sizeof(out));
		int err = tc_sim_cache_fit(name, &c, cases[i].kernel_ways, &out, note,
					   sizeof(note));
		if (err || out.size != cases[i].want_size || out.ways != cases[i].want_ways ||
		    out.line_size != cases[i].want_line || strcmp(note, cases[i].note))
			fail_msg("case of line %d: %d: %llu B, %u-way, %u B lines; note \"%s\"",
				 cases[i].line, err, (unsigned long long)out.size, out.ways,
				 out.line_size, note);
		/* what valgrind accepts (cg_arch.c, check_cache) */
		uint64_t sets = out.size / ((uint64_t)out.ways * out.line_size);
		assert_true(sets && !(sets & (sets - 1)));
		assert_int_equal(sets * out.ways * out.line_size, out.size);
		assert_true(out.size <= 0x7fffffff && out.size > out.line_size);
	}
	c.size = 0;
	assert_int_equal(tc_sim_cache_fit("I1", &c, 0, &out, NULL, 0), -TACHO_ENOVALUE);
#undef KiB
#undef MiB
}

/* The kernel's ways of a cache, from its view of the first CPU of the core type, or of
 * the first CPU that lists caches. */
static void test_kernel_ways(void **state)
{
	struct tacho_sysfs_cpu cpus[2] = {
		{ .cpu = 0, .ncaches = 0 },
		{ .cpu = 1, .ncaches = 3,
		  .caches = { { .level = 1, .type = "data", .ways = 12 },
			      { .level = 1, .type = "instruction", .ways = 8 },
			      { .level = 3, .type = "unified", .ways = 16 } } },
	};
	struct tacho_cpu_sysfs sys = { .ncpus = 2, .cpus = cpus };
	struct tacho_cpu_cache l3 = { .level = 3, .type = TACHO_CACHE_UNIFIED },
			       l1i = { .level = 1, .type = TACHO_CACHE_INSTRUCTION },
			       l2 = { .level = 2, .type = TACHO_CACHE_UNIFIED };
	(void)state;

	assert_int_equal(tc_sim_kernel_ways(&sys, 1, &l3), 16);
	assert_int_equal(tc_sim_kernel_ways(&sys, -1, &l3), 16);
	assert_int_equal(tc_sim_kernel_ways(&sys, 7, &l1i), 8);   /* not online: the first */
	assert_int_equal(tc_sim_kernel_ways(&sys, 1, &l2), 0);    /* the kernel has none */
	assert_int_equal(tc_sim_kernel_ways(&sys, 0, &l3), 0);    /* its CPU lists none */
	assert_int_equal(tc_sim_kernel_ways(NULL, 0, &l3), 0);
}

static void test_simulator_errors(void **state)
{
	struct tacho_sim_opts o = { .sz = sizeof(o), .valgrind = "/nonexistent/valgrind" };
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_sim *s = (struct tacho_sim *)1;
	(void)state;

	assert_int_equal(tacho_sim_new(&o, &s, &d), -TACHO_ENOSIM);
	assert_null(s);
	assert_non_null(strstr(d.message, "install the Debian package valgrind"));
	o.valgrind = "/bin/true";   /* found: the dump is what fails */
	o.cpu_dump = "/nonexistent.cpuid";
	assert_int_equal(tacho_sim_new(&o, &s, &d), -ENOENT);
	assert_null(s);
	/* a call chain deeper than a recording takes is refused before anything runs */
	o.cpu_dump = NULL;
	assert_int_equal(tacho_sim_new(&o, &s, &d), 0);
	{
		char *argv[] = { (char *)"/bin/true", NULL };
		struct tacho_sim_record_opts ro = { .sz = sizeof(ro),
						    .callers = TACHO_SIM_CALLERS_MAX + 1 };
		struct tacho_record_result res = { .sz = sizeof(res) };
		d = (struct tacho_diag){ .sz = sizeof(d) };
		assert_int_equal(tacho_sim_record(s, argv, &ro, &res, &d), -EINVAL);
		assert_non_null(strstr(d.message, "call chains of at most 256 callers"));
		assert_false(res.ran);
	}
	tacho_sim_free(s);
	o.sz = 4;
	assert_int_equal(tacho_sim_new(&o, &s, &d), -EINVAL);
	assert_null(tacho_sim_machine(NULL));
	tacho_sim_free(NULL);
	tacho_sim_result_free(NULL);
}

/* Regions from the dumps of two processes: a file per dump, read in any order. */
static void test_regions_matched(void **state)
{
	/* pid 7: 10 before, outer begins; 5; inner begins; 20; inner ends; 3; outer ends
	 * (and, on thread 9, an end that matches nothing); 4 at exit. pid 8: "outer"
	 * begins and never ends. */
	static const char *const files[] = {
		"pid: 7\npart: 2\ndesc: Trigger: Client Request: tacho:b:7:inner\n"
		"events: Ir\n1 5\n",
		"pid: 7\npart: 5\ndesc: Trigger: Program termination\nevents: Ir\n1 4\n",
		"pid: 7\npart: 1\ndesc: Trigger: Client Request: tacho:b:7:outer\n"
		"events: Ir\n1 10\n",
		"pid: 7\npart: 3\ndesc: Trigger: Client Request: tacho:e:7:inner\n"
		"events: Ir\n1 20\n",
		"pid: 7\npart: 4\ndesc: Trigger: Client Request: tacho:e:7:outer\n"
		"events: Ir\n1 3\n",
		"pid: 7\npart: 6\ndesc: Trigger: Client Request: tacho:e:9:outer\n"
		"events: Ir\n",
		"pid: 8\npart: 1\ndesc: Trigger: Client Request: tacho:b:8:outer\n"
		"events: Ir\n1 100\n",
	};
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_HARDWARE,
				     .config = PERF_COUNT_HW_INSTRUCTIONS };
	struct tacho_sim_result *r = NULL;
	const struct tacho_sim_region *g;
	uint64_t v;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		assert_int_equal(tacho_sim_result_parse(files[i], strlen(files[i]), "f", &r, &d),
				 0);
	}
	assert_int_equal(total(r, "Ir"), 142);
	assert_int_equal(tacho_sim_result_nregions(r), 2);
	g = tacho_sim_result_region(r, 0);
	assert_string_equal(g->name, "outer");
	assert_int_equal(g->calls, 1);
	assert_int_equal(g->unbalanced, 2);   /* thread 9's end, pid 8's begin */
	assert_int_equal(tacho_sim_region_value(r, 0, &a, false, &v, NULL), 0);
	assert_int_equal(v, 5 + 20 + 3);
	assert_int_equal(tacho_sim_region_value(r, 0, &a, true, &v, NULL), 0);
	assert_int_equal(v, 5 + 3);
	g = tacho_sim_result_region(r, 1);
	assert_string_equal(g->name, "inner");
	assert_int_equal(g->calls, 1);
	assert_int_equal(tacho_sim_region_value(r, 1, &a, false, &v, NULL), 0);
	assert_int_equal(v, 20);
	assert_int_equal(tacho_sim_region_value(r, 1, &a, true, &v, NULL), 0);
	assert_int_equal(v, 20);
	assert_int_equal(tacho_sim_region_value(r, 2, &a, true, &v, NULL), -EINVAL);
	assert_null(tacho_sim_result_region(r, 2));
	tacho_sim_result_free(r);
}

/* llvm-mca's -mcpu from CPUID, and the fallback. */
static void test_mcpu(void **state)
{
	static const struct {
		int line;
		enum tacho_cpu_vendor vendor;
		unsigned family, model;
		const char *want;
	} cases[] = {
		{ __LINE__, TACHO_VENDOR_AMD, 0x17, 0x01, "znver1" },
		{ __LINE__, TACHO_VENDOR_AMD, 0x17, 0x31, "znver2" },
		{ __LINE__, TACHO_VENDOR_AMD, 0x19, 0x01, "znver3" },
		{ __LINE__, TACHO_VENDOR_AMD, 0x19, 0x11, "znver3" },
		{ __LINE__, TACHO_VENDOR_INTEL, 6, 0x55, "skylake-avx512" },
		{ __LINE__, TACHO_VENDOR_INTEL, 6, 0x9e, "skylake" },
		{ __LINE__, TACHO_VENDOR_INTEL, 6, 0x97, "alderlake" },
		{ __LINE__, TACHO_VENDOR_INTEL, 6, 0x3c, "haswell" },
		{ __LINE__, TACHO_VENDOR_INTEL, 6, 0x01, "x86-64" },
		{ __LINE__, TACHO_VENDOR_AMD, 0x15, 0x02, "x86-64" },
	};
	char why[160];
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const char *m = tc_sim_mcpu(cases[i].vendor, cases[i].family, cases[i].model, why,
					    sizeof(why));
		if (strcmp(m, cases[i].want))
			fail_msg("case of line %d: %s (%s)", cases[i].line, m, why);
	}
	tc_sim_mcpu(TACHO_VENDOR_INTEL, 6, 1, why, sizeof(why));
	assert_string_equal(why, "Intel family 0x6 model 0x1 is not in tacho's table: llvm's "
				 "generic x86-64");
	tc_sim_mcpu(TACHO_VENDOR_AMD, 0x19, 0x11, why, sizeof(why));
	assert_string_equal(why, "AMD family 0x19 model 0x11: Zen 4 (llvm 14 has no znver4)");
}

/* The dump of a Zen 5 guest of bhyve (tests/data/cpuid/bhyve-zen5-2cpu.cpuid-r, `cpuid
 * -r` there): 8000_0006h's L3 associativity is code 9 ("see 8000_001Dh"), 32 MiB. It
 * reached valgrind as one set of 524,288 ways, and a gzip of 1 MB ran 30 times as long
 * as bare callgrind's; it is 16 ways now, as the kernel of that machine says, whether
 * the decoder reads them from 8000_001Dh or tacho takes its default. A dump has no
 * kernel to ask: no sysfs is read. */
static void test_simulator_zen5_dump(void **state)
{
	struct tacho_sim_opts o = { .sz = sizeof(o), .valgrind = "/bin/true",
				    .cpu_dump = th_path("tests/data/cpuid/bhyve-zen5-2cpu.cpuid-r") };
	struct tacho_diag d = { .sz = sizeof(d) };
	const struct tacho_sim_machine *m;
	struct tacho_sim *s;
	(void)state;

	if (tacho_sim_new(&o, &s, &d))
		fail_msg("%s", d.message);
	m = tacho_sim_machine(s);
	assert_int_equal(m->ll.size, 32 * 1024 * 1024);
	assert_int_equal(m->ll.ways, 16);
	assert_int_equal(m->ll.line_size, 64);
	assert_int_equal(m->d1.size, 48 * 1024);
	assert_int_equal(m->d1.ways, 12);
	assert_int_equal(m->i1.size, 32 * 1024);
	assert_int_equal(m->i1.ways, 8);
	assert_non_null(strstr(m->source, "bhyve-zen5-2cpu.cpuid-r"));
	tacho_sim_free(s);
}

/* The machine of a dump, and one real run of a program under valgrind. */
static void test_simulator_run(void **state)
{
	struct tacho_sim_opts o = { .sz = sizeof(o),
				    .cpu_dump = th_path("tests/data/cpuid/sim-1m-llc.cpuid-r1") };
	struct tacho_diag d = { .sz = sizeof(d) };
	const struct tacho_sim_machine *m;
	struct tacho_sim_result *r = NULL;
	char *argv[] = { (char *)"true", NULL };
	struct tacho_sim *s;
	int err;
	(void)state;

	err = tacho_sim_new(&o, &s, &d);
	if (err == -TACHO_ENOSIM)
		TEST_SKIP("valgrind is not installed (Debian package valgrind)");
	assert_int_equal(err, 0);
	m = tacho_sim_machine(s);
	assert_string_equal(m->tool, "callgrind");
	assert_int_equal(m->ll.size, 1024 * 1024);
	assert_int_equal(m->ll.ways, 16);
	assert_int_equal(m->d1.size, 32768);
	assert_non_null(strstr(m->source, "sim-1m-llc.cpuid-r1"));
	assert_int_equal(tacho_sim_run(s, argv, &r, NULL, &d), 0);
	assert_int_equal(tacho_sim_result_exit(r)->status, 0);
	assert_true(total(r, "Ir") > 1000);
	assert_true(total(r, "Bc") > 0);
	tacho_sim_result_free(r);
	tacho_sim_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_totals),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_parse_keeps_on_error),
		cmocka_unit_test(test_places),
		cmocka_unit_test(test_parse_newline_names),
		cmocka_unit_test(test_mapping),
		cmocka_unit_test(test_cache_fit),
		cmocka_unit_test(test_kernel_ways),
		cmocka_unit_test(test_regions_matched),
		cmocka_unit_test(test_mcpu),
		cmocka_unit_test(test_simulator_errors),
		cmocka_unit_test(test_simulator_zen5_dump),
		cmocka_unit_test(test_simulator_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
