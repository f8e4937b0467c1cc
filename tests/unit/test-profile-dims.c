/* test-profile-dims.c - the report's dimensions, filters and trees on a synthetic
 * recording written here with the record writer, where every answer is exact: rows by
 * any tuple of comm, pid, tid, cpu, event, dso and symbol; unnamed addresses one row
 * each and one per binary under the dso key; each filter alone (comm, pid, tid, cpu,
 * dso, time in seconds, relative and in percent); the percent limit; caller and callee
 * trees, in rows and nested in the JSON; the parser of sort keys and filters, with
 * did-you-mean and one-line errors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "tacho.h"
#include "harness.h"
#include "json-check.h"
#include "record/recfile.h"
#include "report/report-int.h"

#define USER ((uint64_t)PERF_CONTEXT_USER)

/* Two processes: alpha (pid 10, threads 10 and 11) and beta (pid 20), each with its own
 * unreadable binary (a name that is no path: never symbolized, so every address is
 * "[unknown] 0x..." at its offset in the binary). Event 0, page-faults period 1:
 *   t 100-102  alpha 10/10 cpu 0  0x401000               3 samples
 *   t 103-104  alpha 10/11 cpu 1  0x401000               2
 *   t 105      alpha 10/11 cpu 1  0x402000               1
 *   t 106-107  beta 20/20 cpu 0   0x401000 <- 0x405000 <- 0x406000   2
 *   t 108-109  beta 20/20 cpu 0   0x401000 <- 0x407000               2
 * and one sample of event 1 (period 5) at t 110, beta on cpu 1 at 0x403000. */
static struct tacho_profile *load(void)
{
	static const uint64_t deep[] = { USER, 0x401000, 0x405000, 0x406000 };
	static const uint64_t flat[] = { USER, 0x401000, 0x407000 };
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_diag d = { .sz = sizeof(d) };
	uint64_t t = 100;

	assert_int_equal(tc_record_writer_open(&w, th_tmp("dims.rec")), 0);
	tc_record_writer_meta(&w, "command", "./dims");
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			       PERF_SAMPLE_IP, 1, 0, "page-faults");
	tc_record_writer_event(&w, 1, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
			       PERF_SAMPLE_IP, 5, 0, "cpu-clock");
	tc_record_writer_comm(&w, 10, 10, true, 1, "alpha");
	tc_record_writer_comm(&w, 20, 20, true, 1, "beta");
	tc_record_writer_mmap(&w, 10, 10, 0x400000, 0x100000, 0, 5, 2, NULL, 0, "[a-bin]");
	tc_record_writer_mmap(&w, 20, 20, 0x400000, 0x100000, 0, 5, 2, NULL, 0, "[b-bin]");
	for (int i = 0; i < 3; i++)
		tc_record_writer_sample(&w, t++, 0x401000, 0, 1, 10, 10, 0, 0, 2, 0, NULL);
	for (int i = 0; i < 2; i++)
		tc_record_writer_sample(&w, t++, 0x401000, 0, 1, 10, 11, 1, 0, 2, 0, NULL);
	tc_record_writer_sample(&w, t++, 0x402000, 0, 1, 10, 11, 1, 0, 2, 0, NULL);
	for (int i = 0; i < 2; i++)
		tc_record_writer_sample(&w, t++, 0x401000, 0, 1, 20, 20, 0, 0, 2, 4, deep);
	for (int i = 0; i < 2; i++)
		tc_record_writer_sample(&w, t++, 0x401000, 0, 1, 20, 20, 0, 0, 2, 3, flat);
	tc_record_writer_sample(&w, t++, 0x403000, 0, 5, 20, 20, 1, 1, 2, 0, NULL);
	tc_record_writer_finish(&w, 11, 0, t, 0);
	assert_int_equal(tc_record_writer_close(&w), 0);
	assert_int_equal(tacho_profile_load(th_tmp("dims.rec"), &p, &d), 0);
	return p;
}

/* The rows for a sort spec, with children and graph as given. */
static size_t rows_of(struct tacho_profile *p, const char *spec, bool children,
		      enum tacho_callgraph graph, struct tacho_profile_row **rows)
{
	enum tacho_sort keys[16];
	struct tacho_report_opts o = { .sz = sizeof(o), .sort = keys, .children = children,
				       .graph = graph };
	size_t n;

	assert_int_equal(tacho_profile_parse_sort(spec, keys, 16, &o.nsort, NULL), 0);
	assert_int_equal(tacho_profile_report_rows(p, &o, rows, &n, sizeof(**rows)), 0);
	return n;
}

static void filter(struct tacho_profile *p, struct tacho_profile_filter *f)
{
	struct tacho_diag d = { .sz = sizeof(d) };

	f->sz = sizeof(*f);
	if (tacho_profile_set_filter(p, f, &d))
		fail_msg("filter refused: %s", d.message);
}

/* A process's name is its main thread's latest by time, whatever the order of the
 * records: perf's pipe mode writes each CPU's buffer in turn, so an exec's COMM (t 50)
 * may come before the shell's own (t 40). */
static void test_comm_by_time(void **state)
{
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_profile_row *r;
	struct tacho_diag d = { .sz = sizeof(d) };
	size_t n;
	(void)state;

	assert_int_equal(tc_record_writer_open(&w, th_tmp("comm.rec")), 0);
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			       PERF_SAMPLE_IP, 1, 0, "page-faults");
	tc_record_writer_comm(&w, 30, 31, false, 45, "worker");
	tc_record_writer_comm(&w, 30, 30, true, 50, "trace-marks");
	tc_record_writer_comm(&w, 30, 30, true, 40, "sh");
	tc_record_writer_mmap(&w, 30, 30, 0x400000, 0x100000, 0, 5, 2, NULL, 0, "[c-bin]");
	tc_record_writer_sample(&w, 60, 0x401000, 0, 1, 30, 30, 0, 0, 2, 0, NULL);
	tc_record_writer_finish(&w, 1, 0, 61, 0);
	assert_int_equal(tc_record_writer_close(&w), 0);
	assert_int_equal(tacho_profile_load(th_tmp("comm.rec"), &p, &d), 0);
	n = rows_of(p, "comm", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 1);
	assert_string_equal(r[0].comm, "trace-marks");
	free(r);
	tacho_profile_free(p);
}

static void test_tuples(void **state)
{
	struct tacho_profile *p = load();
	struct tacho_profile_row *r;
	size_t n;
	(void)state;

	/* comm, pid, tid: the two threads of alpha apart, equal counts in key order */
	n = rows_of(p, "comm,pid,tid", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 3);
	assert_string_equal(r[0].comm, "beta");
	assert_int_equal(r[0].pid, 20);
	assert_int_equal(r[0].tid, 20);
	assert_int_equal(r[0].samples, 4);
	assert_true(r[0].percent == 40.0);
	assert_string_equal(r[1].comm, "alpha");
	assert_int_equal(r[1].tid, 10);
	assert_int_equal(r[1].samples, 3);
	assert_int_equal(r[2].tid, 11);
	assert_int_equal(r[2].samples, 3);
	assert_int_equal(r[2].cpu, -1);       /* not a key: -1 */
	assert_null(r[2].event);
	free(r);

	/* comm,dso,symbol: each unnamed address a row of its own, at its offset */
	n = rows_of(p, "comm,dso,symbol", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 3);
	assert_string_equal(r[0].comm, "alpha");
	assert_string_equal(r[0].dso, "[a-bin]");
	assert_string_equal(r[0].symbol, "[unknown] 0x1000");
	assert_int_equal(r[0].samples, 5);
	assert_string_equal(r[1].comm, "beta");
	assert_string_equal(r[1].symbol, "[unknown] 0x1000");
	assert_int_equal(r[1].samples, 4);
	assert_string_equal(r[2].symbol, "[unknown] 0x2000");
	assert_int_equal(r[2].samples, 1);
	free(r);

	/* dso alone: the unnamed addresses folded into one row per binary */
	n = rows_of(p, "dso", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 2);
	assert_string_equal(r[0].dso, "[a-bin]");
	assert_int_equal(r[0].samples, 6);
	assert_string_equal(r[1].dso, "[b-bin]");
	assert_int_equal(r[1].samples, 4);
	free(r);

	/* cpu */
	n = rows_of(p, "cpu", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].cpu, 0);
	assert_int_equal(r[0].samples, 7);
	assert_int_equal(r[1].cpu, 1);
	assert_int_equal(r[1].samples, 3);
	free(r);

	/* event: every event of the file, each a share of its own */
	n = rows_of(p, "event,comm", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 3);
	assert_string_equal(r[0].event, "page-faults");
	assert_string_equal(r[0].comm, "alpha");
	assert_true(r[0].percent == 60.0);
	assert_string_equal(r[1].event, "cpu-clock");
	assert_int_equal(r[1].events, 5);
	assert_true(r[1].percent == 100.0);
	assert_string_equal(r[2].comm, "beta");
	assert_int_equal(r[2].events, 4);
	free(r);

	/* the key order changes the columns, not the rows */
	n = rows_of(p, "tid,comm", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 3);
	assert_int_equal(r[0].samples, 4);
	free(r);

	/* percent limit: rows under it are left out */
	{
		enum tacho_sort key = TACHO_SORT_SYMBOL;
		struct tacho_report_opts o = { .sz = sizeof(o), .sort = &key, .nsort = 1,
					       .percent_limit = 20 };
		assert_int_equal(tacho_profile_report_rows(p, &o, &r, &n, sizeof(*r)), 0);
		assert_int_equal(n, 2);      /* 0x1000 in each binary: 50 % and 40 %; 0x2000: 10 % */
		assert_int_equal(r[0].samples, 5);
		assert_int_equal(r[1].samples, 4);
		free(r);
		o.percent_limit = 101;
		assert_int_equal(tacho_profile_report_rows(p, &o, &r, &n, sizeof(*r)), -EINVAL);
	}
	tacho_profile_free(p);
}

static void test_filters(void **state)
{
	struct tacho_profile *p = load();
	struct tacho_profile_row *r;
	struct tacho_profile_filter f;
	size_t n;
	(void)state;

	memset(&f, 0, sizeof(f));
	f.comms = "beta";
	filter(p, &f);
	n = rows_of(p, "comm", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 1);
	assert_string_equal(r[0].comm, "beta");
	assert_int_equal(r[0].samples, 4);
	assert_true(r[0].percent == 100.0);   /* a share of what the filter kept */
	free(r);

	memset(&f, 0, sizeof(f));
	f.tids = "11,20";
	f.cpus = "1";
	filter(p, &f);
	n = rows_of(p, "tid", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].tid, 11);
	assert_int_equal(r[0].samples, 3);
	free(r);

	memset(&f, 0, sizeof(f));
	f.pids = "10";
	f.dsos = "[b-bin]";
	filter(p, &f);
	n = rows_of(p, "pid", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 0);
	free(r);

	/* time in seconds as the export shows them, both ends included */
	memset(&f, 0, sizeof(f));
	f.time = "0.000000101,0.000000104";
	filter(p, &f);
	n = rows_of(p, "tid", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].samples + r[1].samples, 4);
	free(r);
	/* relative to the first sample (t 100), open at the end */
	f.time = "+0.000000008,";
	filter(p, &f);
	n = rows_of(p, "comm", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 1);
	assert_string_equal(r[0].comm, "beta");
	assert_int_equal(r[0].samples, 2);     /* t 108, 109 */
	free(r);
	/* percent of the span 100..110: the first half, t 100-105, is alpha's */
	f.time = "0%-50%";
	filter(p, &f);
	n = rows_of(p, "comm", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].samples, 6);
	free(r);
	f.time = "50%/2";
	filter(p, &f);
	n = rows_of(p, "comm", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].samples, 4);      /* beta: 106-109 */
	assert_int_equal(r[1].samples, 1);      /* alpha: 105, the edge */
	free(r);

	/* the exports see the same samples */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		memset(&f, 0, sizeof(f));
		f.comms = "alpha";
		filter(p, &f);
		assert_int_equal(tacho_profile_write_folded(p, m), 0);
		fclose(m);
		/* folded names frames without their address: alpha's two are one stack */
		assert_string_equal(buf, "alpha;[unknown] 6\n");
		free(buf);
	}
	/* NULL: no filter */
	assert_int_equal(tacho_profile_set_filter(p, NULL, NULL), 0);
	n = rows_of(p, "comm", false, TACHO_GRAPH_NONE, &r);
	assert_int_equal(n, 2);
	free(r);
	tacho_profile_free(p);
}

static void test_bad_input(void **state)
{
	struct tacho_profile *p = load();
	struct tacho_profile_filter f;
	struct tacho_diag d = { .sz = sizeof(d) };
	enum tacho_sort keys[4];
	size_t n;
	static const struct {
		const char *pids, *cpus, *time, *comms, *want;
	} bad[] = {
		{ "ten", NULL, NULL, NULL, "'ten' in the pid list is not a pid" },
		{ NULL, "0-", NULL, NULL, "" },
		{ NULL, NULL, "5,4", NULL, "ends before it starts" },
		{ NULL, NULL, "1,2,3", NULL, "--time takes START,END" },
		{ NULL, NULL, "x,", NULL, "'x' is not a time in seconds" },
		{ NULL, NULL, "10%/0", NULL, "--time takes A%-B% or P%/N" },
		{ NULL, NULL, "60%-20%", NULL, "--time takes A%-B% or P%/N" },
		{ NULL, NULL, "1.0000000001,", NULL, "is not a time in seconds" },
		{ NULL, NULL, NULL, "a,,b", "an empty name in the comm list" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&f, 0, sizeof(f));
		f.sz = sizeof(f);
		f.pids = bad[i].pids;
		f.cpus = bad[i].cpus;
		f.time = bad[i].time;
		f.comms = bad[i].comms;
		d = (struct tacho_diag){ .sz = sizeof(d) };
		if (tacho_profile_set_filter(p, &f, &d) != -TACHO_EPARSE)
			fail_msg("case %zu accepted", i);
		assert_contains(d.message, bad[i].want);
		assert_null(strchr(d.message, '\n'));
		assert_null(p->filter);   /* nothing set */
	}
	f.sz = 4;
	assert_int_equal(tacho_profile_set_filter(p, &f, NULL), -EINVAL);

	assert_int_equal(tacho_profile_parse_sort("comm,dso,symbol", keys, 4, &n, &d), 0);
	assert_int_equal(n, 3);
	assert_int_equal(keys[0], TACHO_SORT_COMM);
	assert_int_equal(keys[2], TACHO_SORT_SYMBOL);
	assert_int_equal(tacho_profile_parse_sort("sym,srcline,addr,sym", keys, 4, &n, &d), 0);
	assert_int_equal(n, 3);
	assert_int_equal(keys[1], TACHO_SORT_LINE);
	assert_int_equal(tacho_profile_parse_sort("comm,comn", keys, 4, &n, &d), -TACHO_EPARSE);
	assert_string_equal(d.message, "unknown sort key 'comn': did you mean 'comm'?");
	assert_int_equal(d.column, 6);
	assert_int_equal(tacho_profile_parse_sort("colour", keys, 4, &n, &d), -TACHO_EPARSE);
	assert_contains(d.message, "unknown sort key 'colour' (comm, pid");
	assert_int_equal(tacho_profile_parse_sort("comm,,pid", keys, 4, &n, &d), -TACHO_EEMPTY);
	assert_int_equal(tacho_profile_parse_sort("comm,pid,tid", keys, 2, &n, &d), -E2BIG);
	tacho_profile_free(p);
}

/* A filter or report options from a program built against a newer tacho.h (a field
 * past the struct this library knows, set): refused with -TACHO_EVERSION, *diag naming
 * the struct, nothing set; the same struct with that field zero is this library's; an
 * sz of 0 is below the first version. */
static void test_newer_opts(void **state)
{
	struct tacho_profile *p = load();
	struct tacho_diag d = { .sz = sizeof(d) };
	struct { struct tacho_profile_filter f; long future; } n;
	enum tacho_sort key = TACHO_SORT_COMM;
	struct { struct tacho_report_opts o; long future; } rn;
	struct tacho_profile_row *r;
	size_t nr;
	(void)state;

	memset(&n, 0, sizeof(n));
	n.f.sz = sizeof(n);
	n.f.comms = "beta";
	n.future = 1;
	assert_int_equal(tacho_profile_set_filter(p, &n.f, &d), -TACHO_EVERSION);
	assert_contains(d.message, "struct tacho_profile_filter");
	assert_contains(d.message, "newer tacho.h");
	assert_null(p->filter);
	n.f.sz = 0;
	assert_int_equal(tacho_profile_set_filter(p, &n.f, NULL), -EINVAL);
	assert_null(p->filter);
	n.f.sz = sizeof(n);
	n.future = 0;
	assert_int_equal(tacho_profile_set_filter(p, &n.f, &d), 0);
	assert_non_null(p->filter);

	memset(&rn, 0, sizeof(rn));
	rn.o.sz = sizeof(rn);
	rn.o.sort = &key;
	rn.o.nsort = 1;
	rn.future = 1;
	assert_int_equal(tacho_profile_report_rows(p, &rn.o, &r, &nr, sizeof(*r)),
			 -TACHO_EVERSION);
	assert_null(r);
	rn.o.sz = 0;
	assert_int_equal(tacho_profile_report_rows(p, &rn.o, &r, &nr, sizeof(*r)), -EINVAL);
	rn.o.sz = sizeof(rn);
	rn.future = 0;
	assert_int_equal(tacho_profile_report_rows(p, &rn.o, &r, &nr, sizeof(*r)), 0);
	assert_int_equal(nr, 1);                /* the filter set above: beta's */
	assert_string_equal(r[0].comm, "beta");
	assert_int_equal(r[0].samples, 4);
	free(r);
	tacho_profile_free(p);
}

static void test_trees(void **state)
{
	struct tacho_profile *p = load();
	struct tacho_profile_row *r;
	size_t n;
	(void)state;

	/* callee: below beta's leaf, its callers (0x5000 above 0x6000; 0x7000) */
	n = rows_of(p, "comm", false, TACHO_GRAPH_CALLEE, &r);
	/* alpha: 6 samples without chains (their leaf only); beta: the tree */
	assert_int_equal(n, 2 + 2 + 4);
	assert_string_equal(r[0].comm, "alpha");
	assert_int_equal(r[1].depth, 1);            /* the leaf itself: comm is no function */
	assert_string_equal(r[1].symbol, "[unknown] 0x1000");
	assert_int_equal(r[1].samples, 5);
	assert_int_equal(r[2].depth, 1);
	assert_string_equal(r[2].symbol, "[unknown] 0x2000");
	assert_int_equal(r[3].depth, 0);
	assert_string_equal(r[3].comm, "beta");
	assert_int_equal(r[4].depth, 1);
	assert_string_equal(r[4].symbol, "[unknown] 0x1000");
	assert_int_equal(r[5].depth, 2);
	assert_string_equal(r[5].symbol, "[unknown] 0x5000");
	assert_int_equal(r[5].samples, 2);
	assert_true(r[5].percent == 20.0);
	assert_int_equal(r[6].depth, 3);
	assert_string_equal(r[6].symbol, "[unknown] 0x6000");
	assert_int_equal(r[7].depth, 2);
	assert_string_equal(r[7].symbol, "[unknown] 0x7000");
	free(r);

	/* caller, by symbol: from the roots down to the entry's caller */
	n = rows_of(p, "dso,symbol", false, TACHO_GRAPH_CALLER, &r);
	assert_int_equal(n, 2 + 3 + 1);
	assert_string_equal(r[0].dso, "[a-bin]");
	assert_int_equal(r[0].samples, 5);
	assert_string_equal(r[1].dso, "[b-bin]");
	assert_int_equal(r[2].depth, 1);
	assert_string_equal(r[2].symbol, "[unknown] 0x6000");
	assert_int_equal(r[3].depth, 2);
	assert_string_equal(r[3].symbol, "[unknown] 0x5000");
	assert_int_equal(r[4].depth, 1);
	assert_string_equal(r[4].symbol, "[unknown] 0x7000");
	assert_int_equal(r[5].depth, 0);
	assert_string_equal(r[5].symbol, "[unknown] 0x2000");
	free(r);

	/* caller with children: each function, then its callees down to the leaf */
	n = rows_of(p, "symbol", true, TACHO_GRAPH_CALLER, &r);
	for (size_t i = 0; i < n; i++)
		if (r[i].depth == 0 && !strcmp(r[i].symbol, "[unknown] 0x6000")) {
			assert_int_equal(r[i].samples, 2);
			assert_int_equal(r[i].self, 0);
			assert_int_equal(r[i + 1].depth, 1);
			assert_string_equal(r[i + 1].symbol, "[unknown] 0x5000");
			assert_int_equal(r[i + 2].depth, 2);
			assert_string_equal(r[i + 2].symbol, "[unknown] 0x1000");
			free(r);
			r = NULL;
			break;
		}
	if (r)
		fail_msg("no row for 0x6000 with children");

	/* the JSON nests the nodes */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		enum tacho_sort key = TACHO_SORT_COMM;
		struct tacho_report_opts o = { .sz = sizeof(o), .sort = &key, .nsort = 1,
					       .graph = TACHO_GRAPH_CALLEE };
		struct th_json *j;
		assert_int_equal(tacho_profile_write_report(p, &o, m, TACHO_FORMAT_JSON, NULL), 0);
		fclose(m);
		j = assert_json(buf);
		assert_json_str(j, "rows[1].comm", "beta");
		assert_null(th_json_get(j, "rows[1].symbol"));   /* no key of the sort */
		assert_json_str(j, "rows[1].children[0].symbol", "[unknown] 0x1000");
		assert_json_str(j, "rows[1].children[0].children[0].symbol", "[unknown] 0x5000");
		assert_json_str(j, "rows[1].children[0].children[0].children[0].symbol",
				"[unknown] 0x6000");
		assert_json_int(j, "rows[1].children[0].children[1].samples", 2);
		th_json_free(j);
		free(buf);
	}
	tacho_profile_free(p);
}

/* The header's period is the samples' own when they all have one: a recording whose
 * calibration had not ended when the program did holds samples of the provisional
 * period 1, not of the 313 its event was last given. */
static void test_header_period(void **state)
{
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_profile_info in = { .sz = sizeof(in) };
	struct tacho_diag d = { .sz = sizeof(d) };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	assert_int_equal(tc_record_writer_open(&w, th_tmp("per.rec")), 0);
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			       PERF_SAMPLE_IP, 313, 0, "page-faults");
	tc_record_writer_comm(&w, 50, 50, true, 1, "per");
	tc_record_writer_mmap(&w, 50, 50, 0x400000, 0x100000, 0, 5, 2, NULL, 0, "[p-bin]");
	for (int i = 0; i < 3; i++)
		tc_record_writer_sample(&w, 10 + (uint64_t)i, 0x401000, 0, 1, 50, 50, 0, 0, 2, 0,
					NULL);
	tc_record_writer_finish(&w, 3, 0, 20, 0);
	assert_int_equal(tc_record_writer_close(&w), 0);
	assert_int_equal(tacho_profile_load(th_tmp("per.rec"), &p, &d), 0);
	assert_int_equal(tacho_profile_info(p, &in), 0);
	assert_int_equal(in.period, 313);
	assert_int_equal(in.period_min, 1);
	assert_int_equal(in.period_max, 1);
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	enum tacho_sort keys[] = { TACHO_SORT_SYMBOL };
	struct tacho_report_opts o = { .sz = sizeof(o), .sort = keys, .nsort = 1 };
	assert_int_equal(tacho_profile_write_report(p, &o, f, TACHO_FORMAT_TABLE, NULL), 0);
	fclose(f);
	assert_non_null(strstr(buf, "# 3 samples of page-faults (period 1), 0 lost"));
	free(buf);
	tacho_profile_free(p);
}

static const char *frame_sym(const struct tacho_profile *p, uint32_t loc)
{
	const char *s = pool_str(p, p->locs[loc].sym);

	return s ? s : "[unknown]";
}

/* The first address of each context of a chain is where that context was interrupted,
 * looked up as it is; the others are return addresses, looked up one byte back. The
 * user registers' IP at a page fault on a function's first instruction (perf's pipe
 * recordings under load have them) is that function, not the one before it. On the
 * static helper program (non-PIE, mapped at 0x400000 from offset 0), whose libc
 * gives the functions and aliases to look up. */
static void test_context_first_frames(void **state)
{
	const char *prog = th_prog("sample-cpu");
	struct tc_symdso *sd;
	uint64_t ctype, mainf, printf_at, size;
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_diag d = { .sz = sizeof(d) };
	uint32_t frames[8];
	size_t n;
	(void)state;

	if (access(prog, R_OK))
		TEST_SKIP("%s is not built", prog);
	assert_int_equal(tc_symdso_open(prog, NULL, 0, &sd), 0);
	assert_int_equal(tc_symdso_find(sd, "__ctype_init", &ctype, &size), 0);
	assert_int_equal(tc_symdso_find(sd, "main", &mainf, &size), 0);
	/* whichever alias the table keeps for printf's address */
	if (tc_symdso_find(sd, "printf", &printf_at, &size))
		assert_int_equal(tc_symdso_find(sd, "_IO_printf", &printf_at, &size), 0);
	tc_symdso_free(sd);

	const uint64_t kernel_then_user[] = {
		(uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81001000ull,
		USER, ctype, mainf + 8,
	};
	/* a user-only chain: the IP exact, then a return address one byte into
	 * __ctype_init, looked up one byte back: at its first byte, still inside it */
	const uint64_t user_only[] = { USER, printf_at, ctype + 1 };

	assert_int_equal(tc_record_writer_open(&w, th_tmp("ctx.rec")), 0);
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
			       PERF_SAMPLE_IP, 1000, 0, "cpu-clock");
	tc_record_writer_comm(&w, 40, 40, true, 1, "ctx");
	tc_record_writer_mmap(&w, 40, 40, 0x400000, 0x200000, 0, 5, 2, NULL, 0, prog);
	tc_record_writer_sample(&w, 10, 0xffffffff81001000ull, 0, 1000, 40, 40, 0, 0,
				PERF_RECORD_MISC_KERNEL, 5, kernel_then_user);
	tc_record_writer_sample(&w, 11, printf_at, 0, 1000, 40, 40, 0, 0, PERF_RECORD_MISC_USER,
				3, user_only);
	tc_record_writer_finish(&w, 2, 0, 12, 0);
	assert_int_equal(tc_record_writer_close(&w), 0);
	if (tacho_profile_load(th_tmp("ctx.rec"), &p, &d))
		fail_msg("ctx.rec: %s", d.message);

	assert_int_equal(tc_profile_frames(p, &p->smps[0], frames, 8, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(frame_sym(p, frames[1]), "__ctype_init");
	assert_string_equal(frame_sym(p, frames[2]), "main");
	assert_int_equal(tc_profile_frames(p, &p->smps[1], frames, 8, &n), 0);
	assert_int_equal(n, 2);
	/* printf, not its alias _IO_printf: the fewest leading underscores */
	assert_string_equal(frame_sym(p, frames[0]), "printf");
	assert_string_equal(frame_sym(p, frames[1]), "__ctype_init");
	tacho_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tuples),
		cmocka_unit_test(test_comm_by_time),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_newer_opts),
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_context_first_frames),
		cmocka_unit_test(test_header_period),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
