/* test-cmd-trace.c - tacho trace end to end: exact counts of marks, spans and write(2)s
 * on the right threads, in order, marks inside their region; a periodic mark's exact
 * count; an empty trace; counted drops; the Chrome JSON checked against the Trace Event
 * format and the text report's counts; the SVG parsed; bad events with the caret and
 * bad -p lists. Payloads, thread states, -p and -a are test-trace-kernel.c's. */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "record/recfile.h"
#include "timeline/timeline.h"
#include "tacho/timeline.h"

static struct tacho_timeline *load(const char *path)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_timeline *t = NULL;

	if (tacho_timeline_load(path, &t, &d))
		fail_msg("cannot load %s: %s", path, d.message);
	return t;
}

/* Marks per thread in the file's order (the order each thread wrote them in): time
 * never goes backwards. */
static void check_file_order(const char *path)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_record_reader rd;
	struct tc_rec r;
	char *data;
	size_t len;
	uint32_t tids[8] = { 0 };
	uint64_t last[8] = { 0 };
	int err;

	assert_int_equal(tc_read_file(path, &data, &len, 0), 0);
	assert_int_equal(tc_record_reader_init(&rd, data, len, path, &d), 0);
	while ((err = tc_record_reader_next(&rd, &r, path, &d)) == 1) {
		size_t k;
		if (r.type != TC_REC_MARK)
			continue;
		for (k = 0; k < 8 && tids[k] && tids[k] != r.u.mark.tid; k++)
			;
		assert_true(k < 8);
		tids[k] = r.u.mark.tid;
		assert_true(r.u.mark.time >= last[k]);
		last[k] = r.u.mark.time;
	}
	assert_int_equal(err, 0);
	assert_true(rd.finished);
	free(data);
}

static void test_three_threads(void **state)
{
	struct th_run r;
	struct tacho_timeline *t;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("no syscalls tracepoints in tracefs on this machine");
	th_tacho(&r, "trace", "-q", "-e", "syscalls:sys_enter_write", "-o", th_tmp("t.trace"),
		 "--", th_prog("trace-marks"), "threads", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	t = load(th_tmp("t.trace"));
	assert_int_equal(tacho_timeline_count(t, "a", 0), 3000);
	assert_int_equal(tacho_timeline_count(t, "b", 0), 1500);
	assert_int_equal(tacho_timeline_count(t, "syscalls:sys_enter_write", 0), 600);
	assert_int_equal(tacho_timeline_count(t, "work", 0), 3);
	/* each marking thread: its own 1,000 a, 500 b, 200 writes, one region around them */
	int marking = 0;
	for (size_t i = 0; i < t->nthreads; i++) {
		int tid = (int)t->threads[i].tid;
		if (!tacho_timeline_count(t, "a", tid))
			continue;
		marking++;
		assert_int_equal(tacho_timeline_count(t, "a", tid), 1000);
		assert_int_equal(tacho_timeline_count(t, "b", tid), 500);
		assert_int_equal(tacho_timeline_count(t, "syscalls:sys_enter_write", tid), 200);
		assert_int_equal(tacho_timeline_count(t, "work", tid), 1);
		uint64_t begin = 0, end = 0;
		for (size_t k = 0; k < t->n; k++) {
			const struct tc_tl_item *it = &t->items[k];
			if (it->tid != (uint32_t)tid || strcmp(t->ch[it->chan].name, "work"))
				continue;
			if (it->kind == TC_TL_BEGIN)
				begin = it->time;
			else if (it->kind == TC_TL_END)
				end = it->time;
		}
		assert_true(begin && end >= begin);
		for (size_t k = 0; k < t->n; k++) {
			const struct tc_tl_item *it = &t->items[k];
			if (it->tid == (uint32_t)tid && it->kind == TC_TL_MARK)
				assert_true(it->time >= begin && it->time <= end);
		}
	}
	assert_int_equal(marking, 3);
	assert_int_equal(t->ring_full + t->no_ring + t->no_channel, 0);
	tacho_timeline_free(t);
	check_file_order(th_tmp("t.trace"));

	/* the text report says the same counts */
	th_tacho(&r, "trace", "report", "-i", th_tmp("t.trace"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\n  a                         mark    3000\n");
	assert_contains(r.out, "\n  b                         mark    1500\n");
	assert_contains(r.out, "\n  syscalls:sys_enter_write  event    600\n");
	th_run_free(&r);
}

/* Every system call's tracepoint (about 360 here, more than the 64 events record once
 * took, which crashed trace with exit 139): the marks and the writes are exact among
 * them, and each tracepoint is a channel of the trace. */
static void test_many_events(void **state)
{
	size_t n = th_syscall_enter_tracepoints();
	struct tacho_timeline *t;
	struct th_run r;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (n <= 64)
		TEST_SKIP("tracefs has %zu syscalls:sys_enter_* tracepoints, not more than 64", n);
	th_tacho(&r, "trace", "-q", "-e", "syscalls:sys_enter_*", "-o", th_tmp("many.trace"),
		 "--", th_prog("trace-marks"), "threads", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	th_run_free(&r);
	t = load(th_tmp("many.trace"));
	assert_int_equal(tacho_timeline_count(t, "a", 0), 3000);
	assert_int_equal(tacho_timeline_count(t, "b", 0), 1500);
	assert_int_equal(tacho_timeline_count(t, "syscalls:sys_enter_write", 0), 600);
	assert_int_equal(t->nch, n + 3);   /* the events, a, b and the region work */
	assert_int_equal(t->lost, 0);
	tacho_timeline_free(t);
}

/* Chrome's Trace Event format, checked structurally: phases, pid/tid, ts in us, B/E
 * matched per thread, X with dur >= 0, and as many instants of a as the report's count. */
static void test_chrome_and_svg(void **state)
{
	struct th_run r;
	char err[256];

	th_tacho(&r, "trace", "-q", "-o", th_tmp("c.trace"), "--", th_prog("trace-marks"),
		 "threads", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("c.trace"), "--format", "chrome", NULL);
	assert_int_equal(r.status, 0);
	struct th_json *j = th_json_parse(r.out, err, sizeof(err));
	if (!j)
		fail_msg("chrome JSON: %s", err);
	const struct th_json *ev = th_json_get(j, "traceEvents");
	assert_non_null(ev);
	assert_int_equal(ev->type, TH_JSON_ARRAY);
	size_t a = 0, begins = 0, ends = 0;
	for (size_t i = 0; i < ev->n; i++) {
		const struct th_json *e = ev->items[i];
		const struct th_json *ph = th_json_get(e, "ph"), *name = th_json_get(e, "name");
		assert_non_null(ph);
		assert_non_null(name);
		assert_non_null(th_json_get(e, "pid"));
		assert_non_null(th_json_get(e, "tid"));
		assert_true(strchr("BEiXCM", ph->string[0]) && !ph->string[1]);
		if (ph->string[0] != 'M')
			assert_true(th_json_get(e, "ts")->number >= 0);
		if (ph->string[0] == 'X')
			assert_true(th_json_get(e, "dur")->number >= 0);
		if (ph->string[0] == 'B')
			begins++;
		if (ph->string[0] == 'E')
			ends++;
		if (ph->string[0] == 'i' && !strcmp(name->string, "a"))
			a++;
	}
	assert_int_equal(a, 3000);
	assert_int_equal(begins, 3);
	assert_int_equal(ends, 3);
	th_json_free(j);
	th_run_free(&r);

	th_tacho(&r, "trace", "report", "-i", th_tmp("c.trace"), "--format", "svg", "-o",
		 th_tmp("c.svg"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	if (access("/usr/bin/xmllint", X_OK))
		TEST_SKIP("xmllint is not installed (scripts/deps.sh test)");
	char xmllint[] = "/usr/bin/xmllint", noout[] = "--noout", svg[4096];
	snprintf(svg, sizeof(svg), "%s", th_tmp("c.svg"));
	char *argv[] = { xmllint, noout, svg, NULL };
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
}

/* write(2) traced at its enter and exit: 600 complete spans named write in the Chrome
 * JSON, each on a marking thread, none open. */
static void test_syscall_spans(void **state)
{
	struct th_run r;
	char err[256];
	size_t x = 0, writes_i = 0;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("no syscalls tracepoints in tracefs on this machine");
	th_tacho(&r, "trace", "-q", "-e", "syscalls:sys_enter_write,syscalls:sys_exit_write", "-o",
		 th_tmp("w.trace"), "--", th_prog("trace-marks"), "threads", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("w.trace"), "--format", "chrome", NULL);
	assert_int_equal(r.status, 0);
	struct th_json *j = th_json_parse(r.out, err, sizeof(err));
	if (!j)
		fail_msg("chrome JSON: %s", err);
	const struct th_json *ev = th_json_get(j, "traceEvents");
	for (size_t i = 0; i < ev->n; i++) {
		const struct th_json *ph = th_json_get(ev->items[i], "ph");
		const struct th_json *name = th_json_get(ev->items[i], "name");
		if (!strcmp(ph->string, "X") && !strcmp(name->string, "write")) {
			x++;
			assert_true(th_json_get(ev->items[i], "dur")->number >= 0);
		}
		if (!strcmp(ph->string, "i") && strstr(name->string, "_write"))
			writes_i++;
	}
	assert_int_equal(x, 600);
	assert_int_equal(writes_i, 0);
	th_json_free(j);
	th_run_free(&r);
}

/* 200 marks 1 ms apart: the exact count, 199 deltas. (The median, about 1 ms, is a
 * timing figure: docs/trace.md shows it; no test holds a threshold on it.) */
static void test_periodic(void **state)
{
	struct th_run r;
	struct tacho_timeline *t;

	th_tacho(&r, "trace", "-q", "-o", th_tmp("p.trace"), "--", th_prog("trace-marks"),
		 "periodic", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	t = load(th_tmp("p.trace"));
	assert_int_equal(tacho_timeline_count(t, "tick", 0), 200);
	tacho_timeline_free(t);
	th_tacho(&r, "trace", "report", "-i", th_tmp("p.trace"), "--format", "csv", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "from,to,by,count,min_ns,median_ns,mean_ns,p99_ns,max_ns\n"
				"tick,tick,next,199,");
	th_run_free(&r);
}

static void test_never_marks(void **state)
{
	struct th_run r;
	char err[256];

	th_tacho(&r, "trace", "-q", "-o", th_tmp("n.trace"), "--", th_prog("trace-marks"), "none",
		 NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("n.trace"), "--format", "json", NULL);
	assert_int_equal(r.status, 0);
	struct th_json *j = th_json_parse(r.out, err, sizeof(err));
	if (!j)
		fail_msg("json: %s", err);
	assert_int_equal(th_json_get(j, "items")->number, 0);
	assert_int_equal(th_json_get(j, "channels")->n, 0);
	assert_true(th_json_get(j, "complete")->boolean);
	th_json_free(j);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("n.trace"), "--format", "chrome", NULL);
	assert_int_equal(r.status, 0);
	j = th_json_parse(r.out, err, sizeof(err));
	if (!j)
		fail_msg("chrome: %s", err);
	th_json_free(j);
	th_run_free(&r);
}

/* Rings of 4 entries against 100,000 marks: what reached the file and what was dropped
 * add up to exactly what was marked. */
static void test_drops_counted(void **state)
{
	struct th_run r;
	struct tacho_timeline *t;

	th_tacho(&r, "trace", "-q", "--ring", "4", "-o", th_tmp("d.trace"), "--",
		 th_prog("trace-marks"), "flood", "100000", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	t = load(th_tmp("d.trace"));
	assert_int_equal(tacho_timeline_count(t, "c", 0) + t->ring_full, 100000);
	assert_true(t->ring_full > 0);   /* 4 entries cannot hold a 100,000-mark burst */
	assert_int_equal(t->no_ring + t->no_channel, 0);
	tacho_timeline_free(t);
}

/* The regions' calibration (run traced, so that it measures a traced region's cost)
 * leaves nothing in the ring: a ring of 1,024 holds a region and 500 marks whole, and
 * drops none (it held the calibration's 1,264 entries before, and lost every mark). */
static void test_calibration_leaves_no_entries(void **state)
{
	struct th_run r;
	struct tacho_timeline *t;

	th_tacho(&r, "trace", "-q", "--ring", "1024", "-o", th_tmp("cal.trace"), "--",
		 th_prog("trace-marks"), "regionmarks", "500", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	t = load(th_tmp("cal.trace"));
	assert_int_equal(tacho_timeline_count(t, "m", 0), 500);
	assert_int_equal(t->ring_full + t->no_ring + t->no_channel, 0);
	tacho_timeline_free(t);
}

/* The worked example of docs/trace.md: every item enqueued is dequeued, and the delta
 * table follows each item by its value. */
static void test_queue_example(void **state)
{
	struct th_run r;
	struct tacho_timeline *t;
	char ex[4096];

	snprintf(ex, sizeof(ex), "%s/examples/trace-queue", th_build_dir());
	th_tacho(&r, "trace", "-q", "-o", th_tmp("q.trace"), "--", ex, "200", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "200 items through a queue of 8\n");
	th_run_free(&r);
	t = load(th_tmp("q.trace"));
	assert_int_equal(tacho_timeline_count(t, "enqueue", 0), 200);
	assert_int_equal(tacho_timeline_count(t, "dequeue", 0), 200);
	assert_int_equal(tacho_timeline_count(t, "consume", 0), 200);
	assert_int_equal(tacho_timeline_count(t, "queue length", 0), 400);
	tacho_timeline_free(t);
	th_tacho(&r, "trace", "report", "-i", th_tmp("q.trace"), "--format", "csv", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\nenqueue,dequeue,value,200,");
	th_run_free(&r);
}

/* The SVG in headless Chromium: it loads as an SVG document, with no XML error page and
 * no console message. */
static void test_svg_in_chromium(void **state)
{
	struct th_run r;
	char bin[] = "/usr/bin/chromium", a1[] = "--headless", a2[] = "--no-sandbox",
	     a3[] = "--disable-gpu", a4[] = "--enable-logging=stderr", a5[] = "--dump-dom",
	     url[4200];

	if (access(bin, X_OK))
		TEST_SKIP("chromium is not installed (scripts/deps.sh test)");
	th_tacho(&r, "trace", "-q", "-o", th_tmp("s.trace"), "--", th_prog("trace-marks"),
		 "threads", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("s.trace"), "--format", "svg", "-o",
		 th_tmp("s.svg"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	snprintf(url, sizeof(url), "file://%s", th_tmp("s.svg"));
	char *argv[] = { bin, a1, a2, a3, a4, a5, url, NULL };
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "<svg");
	assert_not_contains(r.out, "parsererror");
	assert_not_contains(r.err, "CONSOLE");
	th_run_free(&r);
}

/* tacho killed with SIGKILL half-way: the file reads up to its last flush (100 ms), and
 * says it ends early. */
/* The temporary file of a trace to k.trace, once it holds at least min bytes. */
static bool killed_file(char *path, size_t size, off_t min)
{
	bool found = false;
	struct dirent *d;
	DIR *dir = opendir(th_tmpdir());

	if (!dir)
		return false;
	while (!found && (d = readdir(dir))) {
		struct stat sb;

		if (strncmp(d->d_name, "k.trace.tmp-", 12))
			continue;
		snprintf(path, size, "%s", th_tmp(d->d_name));
		found = stat(path, &sb) == 0 && sb.st_size >= min;
	}
	closedir(dir);
	return found;
}

static void test_killed_trace(void **state)
{
	struct tacho_timeline *t;
	char area[64], tmp[4096];
	pid_t pid;
	int st;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(th_tacho_bin(), "tacho", "trace", "-q", "-o", th_tmp("k.trace"), "--",
		      th_prog("trace-marks"), "slow", (char *)NULL);
		_exit(127);
	}
	/* wait until the file holds marks: some flushes have happened. Until the trace is
	 * complete it is FILE.tmp-XXXXXX (docs/record.md), and a killed one stays that. */
	for (int i = 0; i < 200 && !killed_file(tmp, sizeof(tmp), 8192); i++)
		usleep(50000);
	usleep(300000);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	/* a killed tacho leaves no area behind (an anonymous memfd: it went with tacho
	 * and its program); before issue 27, /dev/shm/tacho-trace-PID stayed */
	snprintf(area, sizeof(area), "/dev/shm/tacho-trace-%d", (int)pid);
	assert_int_equal(access(area, F_OK), -1);
	assert_true(killed_file(tmp, sizeof(tmp), 1));
	assert_int_equal(access(th_tmp("k.trace"), F_OK), -1);
	t = load(tmp);
	assert_true(t->truncated);
	assert_false(t->finished);
	assert_true(tacho_timeline_count(t, "slow", 0) > 0);
	assert_contains(t->notes.buf, "the trace ends early");
	unlink(tmp);
	tacho_timeline_free(t);
}

/* A program with a stray pointer into its trace area (issue 27: tacho crashed in 5 of 8
 * such modes, and in one read a ring round and round while its memory grew to 13.9 GB).
 * Each way of writing over the area: tacho ends in time, with the program's status,
 * in bounded memory (tests/progs/run-rss measures it, and kills tacho after 30 s), writes
 * a trace that loads, and says the trace is damaged (the file says it too) wherever the
 * damage is something no producer writes. */
static void test_scribbled_area(void **state)
{
	static const struct {
		const char *mode;
		bool damaged;       /* tacho must find damage */
		bool after;         /* the marks after it arrive, every one (else the
				       program's own library found no ring or channel: a
				       zeroed or random header, rings and channels taken) */
	} modes[] = {
		{ "head-ahead", true, true }, { "head-behind", true, true },
		{ "head-race", true, true }, { "sizes", true, true },
		{ "zero-header", true, false }, { "torn", true, true },
		{ "all-rings", true, false }, { "channels", true, false },
		{ "random", true, false },
		{ "truncate", false, true },   /* refused by the seals: nothing to find */
	};
	char out[4096];

	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		char *argv[] = { (char *)th_prog("run-rss"), (char *)"30",
				 (char *)th_tacho_bin(), (char *)"trace", (char *)"-o", out,
				 (char *)"--", (char *)th_prog("trace-scribble"),
				 (char *)modes[i].mode, NULL };
		struct tacho_timeline *t;
		struct th_run r;

		snprintf(out, sizeof(out), "%s", th_tmp("scribble.trace"));
		const char *rss;
		long kib;

		th_runv(&r, NULL, argv);
		if (r.status != 0 || strstr(r.out, "truncated"))
			fail_msg("%s: exit %d (137: killed after 30 s), out %s, err %s",
				 modes[i].mode, r.status, r.out, r.err);
		/* tacho with the program: some 4 MiB, 30 under AddressSanitizer; the
		 * garbage head made it 13.9 GB */
		rss = strstr(r.err, "run-rss: maxrss ");
		assert_non_null(rss);
		kib = strtol(rss + 16, NULL, 10);
		if (kib <= 0 || kib > 200 * 1024)
			fail_msg("%s: tacho's memory grew to %ld KiB", modes[i].mode, kib);
		assert_not_contains(r.err, "Sanitizer");
		if (modes[i].damaged)
			assert_contains(r.err, "tacho: warning: the trace is damaged: the program "
					"wrote over its trace area (");
		else
			assert_not_contains(r.err, "damaged");
		th_run_free(&r);
		t = load(out);
		assert_true(t->finished);
		assert_int_equal(t->damaged_entries + t->damaged_rings + t->damaged_header > 0,
				 modes[i].damaged);
		if (modes[i].damaged)
			assert_contains(t->notes.buf, "the trace is damaged");
		/* the marks before the damage are there (the program waits until tacho has
		 * read them), and after it, on their own ring, every one */
		if (tacho_timeline_count(t, "before", 0) != 3 ||
		    (modes[i].after && tacho_timeline_count(t, "after", 0) != 150))
			fail_msg("%s: %llu marks before, %llu after", modes[i].mode,
				 (unsigned long long)tacho_timeline_count(t, "before", 0),
				 (unsigned long long)tacho_timeline_count(t, "after", 0));
		tacho_timeline_free(t);
		/* the report reads it whole */
		th_tacho(&r, "trace", "report", "-i", out, "--format", "json", NULL);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
	}
}

static void test_bad_input(void **state)
{
	struct th_run r;

	th_tacho(&r, "trace", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho trace [-e <events>]");
	assert_contains(r.out, "--ring <entries>");
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho trace report [-i <file>]");
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("x"), "extra", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "unexpected argument 'extra'");
	th_run_free(&r);

	th_tacho(&r, "trace", "-e", "syscalls:sys_enter_write,,x", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "^");
	th_run_free(&r);
	th_tacho(&r, "trace", "-o", th_tmp("x.trace"), "-e", "cpu-clock", "--", "true", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: 'cpu-clock' counts time, not occurrences");
	th_run_free(&r);
	th_tacho(&r, "trace", "--ring", "3", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "--ring needs a power of two");
	th_run_free(&r);
	th_tacho(&r, "trace", "-m", "3", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "-m needs a power of two from 1 to 1048576, not '3'");
	th_run_free(&r);
	th_tacho(&r, "trace", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "--format", "pdf", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("missing"), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot read the trace");
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", "/etc/hostname", NULL);
	assert_int_equal(r.status, 1);
	th_run_free(&r);
	/* a FIFO would hang the open and a device be read without end: refused, naming
	 * the file, as report refuses them */
	assert_int_equal(mkfifo(th_tmp("fifo"), 0600), 0);
	th_tacho(&r, "trace", "report", "-i", th_tmp("fifo"), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "fifo: not a regular file (a FIFO or a device): refused");
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", "/dev/zero", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "/dev/zero: not a regular file");
	th_run_free(&r);
	/* a recording of tacho record is read, and said to be no trace */
	th_tacho(&r, "record", "-q", "-e", "cpu-clock", "-o", th_tmp("plain.rec"), "--", "true",
		 NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "trace", "report", "-i", th_tmp("plain.rec"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "not a trace of tacho trace");
	th_run_free(&r);
	th_tacho(&r, "trace", "-o", th_tmp("x.trace"), "--", "/nonexistent/prog", NULL);
	assert_int_equal(r.status, 127);
	th_run_free(&r);

	/* -p and -a */
	static const char *const bad_pids[] = { "0", "x", "12,", ",12", "1,1", "99999999999" };
	for (size_t i = 0; i < sizeof(bad_pids) / sizeof(bad_pids[0]); i++) {
		th_tacho(&r, "trace", "-p", bad_pids[i], NULL);
		assert_int_equal(r.status, 2);
		assert_contains(r.err, "tacho trace: -p ");
		th_run_free(&r);
	}
	th_tacho(&r, "trace", "-p", "1", "--", "true", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "-p traces running processes: give no program");
	th_run_free(&r);
	th_tacho(&r, "trace", "-p", "1", "-a", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "-p and -a exclude each other");
	th_run_free(&r);
	/* a process that is not there (pid_max is at most 2^22) */
	th_tacho(&r, "trace", "-o", th_tmp("x.trace"), "-p", "2147483646", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot record process 2147483646: no such process");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_threads),
		cmocka_unit_test(test_many_events),
		cmocka_unit_test(test_chrome_and_svg),
		cmocka_unit_test(test_syscall_spans),
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_never_marks),
		cmocka_unit_test(test_drops_counted),
		cmocka_unit_test(test_queue_example),
		cmocka_unit_test(test_svg_in_chromium),
		cmocka_unit_test(test_calibration_leaves_no_entries),
		cmocka_unit_test(test_killed_trace),
		cmocka_unit_test(test_scribbled_area),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
