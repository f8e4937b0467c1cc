/* test-cmd-push.c - pushes for what ends before a scrape, against real peers where
 * Debian has them: tacho stat --push to a real Prometheus Pushgateway (loopback, a
 * temporary persistence file), whose /metrics then holds a program's exactly N writes
 * under the group's labels, and which a real Prometheus scrapes (honor_labels) and
 * answers for; the failures (nothing listening, a non-2xx answer) are one line naming
 * the answer, exit 1, with the local output kept; bad URLs and labels are usage errors.
 * tacho record --push to a stand-in for Pyroscope's ingest API (Pyroscope is not in
 * Debian): tests/e2e/pyroscope-receiver.py checks every field against the documented
 * API and decodes the body (gzip + protobuf for pprof, the folded lines), and the
 * profile's events add up to the program's exactly N writes. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "spawn.h"

#define WRITES "1234"

static bool have(const char *prog)
{
	char *argv[] = { (char *)"sh", (char *)"-c", NULL, NULL };
	char cmd[256];
	struct th_run r;
	bool ok;

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null", prog);
	argv[2] = cmd;
	th_runv(&r, NULL, argv);
	ok = r.status == 0;
	th_run_free(&r);
	return ok;
}

/* A real Pushgateway on a free loopback port, answering; its port. */
static int start_pushgateway(struct th_proc *pg)
{
	char listen[64], persist[4200];
	char *argv[] = { (char *)"prometheus-pushgateway", listen, persist, NULL };
	int port = th_free_port();

	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", port);
	snprintf(persist, sizeof(persist), "--persistence.file=%s", th_tmp("pushgateway.db"));
	th_spawn_ready(pg, "pushgateway", argv, port, "/-/ready", "the Pushgateway");
	return port;
}

/* A real Prometheus scraping the Pushgateway with honor_labels (the pushed job and
 * labels stay the series'), finding the pushed count. */
static void prometheus_finds(int pgport, const char *query, double want)
{
	char cfg[4096], cfgarg[4200], data[4200], listen[64];
	char *argv[] = { (char *)"prometheus", cfgarg, data, listen, NULL };
	struct th_proc prom;
	int pport = th_free_port();
	double v = NAN, end;
	FILE *f;

	snprintf(cfg, sizeof(cfg), "%s", th_tmp("prometheus.yml"));
	f = fopen(cfg, "w");
	assert_non_null(f);
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		   "scrape_configs:\n  - job_name: pushgateway\n    honor_labels: true\n"
		   "    static_configs:\n      - targets: ['127.0.0.1:%d']\n", pgport);
	fclose(f);
	snprintf(data, sizeof(data), "--storage.tsdb.path=%s", th_tmp("prometheus-tsdb"));
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", pport);
	snprintf(cfgarg, sizeof(cfgarg), "--config.file=%s", cfg);
	th_spawn(&prom, "prometheus", argv);
	end = th_now() + 30;
	while (isnan(v) && th_now() < end) {
		v = th_prom_query(pport, query);
		if (isnan(v))
			usleep(100000);
	}
	if (isnan(v)) {
		char *log = th_slurp(prom.err);
		fail_msg("Prometheus never had %s; its log:\n%s", query, log);
	}
	if (v != want)
		fail_msg("Prometheus has %s = %g, not %g", query, v, want);
	th_proc_kill(&prom, SIGTERM);
	assert_true(th_proc_wait(&prom, 20));
}

static void test_pushgateway(void **state)
{
	struct th_proc pg;
	struct th_run r;
	char url[64], *metrics = NULL, *local;
	int port;
	bool cycles_counted, cycles_missing;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!have("prometheus-pushgateway"))
		TEST_SKIP("prometheus-pushgateway is not installed");
	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	port = start_pushgateway(&pg);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	/* cycles too: counted where there is a PMU, else never a 0 but a not_counted */
	th_tacho(&r, "stat", "-e", "syscalls:sys_enter_write,cycles", "-o", th_tmp("local.txt"),
		 "--push", url, "--push-job", "batch", "--push-label", "run=nightly/42",
		 "--push-label", "host=a b", "--", th_prog("stat-helper"), "writes", WRITES, NULL);
	if (r.status != 0)
		fail_msg("tacho stat --push exited %d: %s", r.status, r.err);
	th_run_free(&r);
	assert_int_equal(th_http_get(port, "/metrics", NULL, &metrics), 200);
	/* the exact count, under the group's labels (the '/' value went as base64, the
	 * space percent-encoded) */
	assert_contains(metrics, "# TYPE tacho_syscalls_sys_enter_write_total counter\n");
	assert_contains(metrics, "tacho_syscalls_sys_enter_write_total{event=\"syscalls:"
			"sys_enter_write\",host=\"a b\",instance=\"\",job=\"batch\","
			"run=\"nightly/42\"} " WRITES "\n");
	assert_contains(metrics, "tacho_stat_repetitions{host=\"a b\",instance=\"\","
			"job=\"batch\",run=\"nightly/42\"} 1\n");
	cycles_counted = strstr(metrics, "tacho_cycles_total{") != NULL;
	cycles_missing = strstr(metrics, "tacho_not_counted{event=\"cycles\"") != NULL;
	if (cycles_counted == cycles_missing)
		fail_msg("cycles is %s:\n%s", cycles_counted ? "both counted and not counted" :
			 "neither counted nor said to be missing", metrics);
	free(metrics);
	/* the local output is the command's as ever */
	local = th_slurp(th_tmp("local.txt"));
	assert_contains(local, "1,234");
	free(local);
	/* a second push replaces the group (PUT) */
	th_tacho(&r, "stat", "-q", "-e", "syscalls:sys_enter_write", "--push", url,
		 "--push-job", "batch", "--push-label", "run=nightly/42", "--push-label",
		 "host=a b", "--", th_prog("stat-helper"), "writes", "7", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	assert_int_equal(th_http_get(port, "/metrics", NULL, &metrics), 200);
	assert_contains(metrics, "job=\"batch\",run=\"nightly/42\"} 7\n");
	assert_not_contains(metrics, "tacho_cycles_total{");
	assert_not_contains(metrics, "tacho_not_counted{event=\"cycles\"");
	free(metrics);
	if (have("prometheus"))
		prometheus_finds(port, "tacho_syscalls_sys_enter_write_total%7Bjob%3D%22batch%22"
				 "%7D", 7);
	th_proc_kill(&pg, SIGTERM);
	assert_true(th_proc_wait(&pg, 10));
}

/* What fails says what the server said, exits 1 and keeps the local output. */
static void test_push_failures(void **state)
{
	struct th_proc pg;
	struct th_run r;
	char url[64];
	char *local;
	int port;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	/* nothing listens */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", th_free_port());
	th_tacho(&r, "stat", "-e", "syscalls:sys_enter_write", "-o", th_tmp("refused.txt"),
		 "--push", url, "--", th_prog("stat-helper"), "writes", "5", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot push the counts to http://127.0.0.1:");
	assert_contains(r.err, ": Connection refused\n");
	assert_int_equal(th_count(r.err, "\n"), 1);
	th_run_free(&r);
	local = th_slurp(th_tmp("refused.txt"));
	assert_contains(local, "syscalls:sys_enter_write");
	free(local);
	if (!have("prometheus-pushgateway"))
		TEST_SKIP("prometheus-pushgateway is not installed (the non-2xx answer)");
	port = start_pushgateway(&pg);
	/* a path the Pushgateway does not serve: its 404, status line and body */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/nothing/here", port);
	th_tacho(&r, "stat", "-q", "-e", "syscalls:sys_enter_write", "--push", url, "--",
		 th_prog("stat-helper"), "writes", "5", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "/nothing/here: the server answered PUT 404 Not Found: "
			"404 page not found\n");
	th_run_free(&r);
	th_proc_kill(&pg, SIGTERM);
	assert_true(th_proc_wait(&pg, 10));
}

/* Refused before anything runs: one line and the usage, exit 2. */
static void test_push_usage(void **state)
{
	static const struct {
		const char *a[6];
		const char *says;
	} cases[] = {
		{ { "stat", "--push", "https://127.0.0.1:9091" },
		  "https:// is not supported (tacho speaks plain HTTP only, no TLS" },
		{ { "stat", "--push", "127.0.0.1:9091" }, "not an http:// URL" },
		{ { "stat", "--push", "http://127.0.0.1:99999" }, "a bad port" },
		{ { "stat", "--push", "http://h:1/?x" }, "a query or fragment" },
		{ { "stat", "--push-job", "x" }, "--push-job goes with --push <url>" },
		{ { "stat", "--push", "http://h:1", "--push-label", "event=x" },
		  "the label 'event' is one that tacho's metrics carry" },
		{ { "stat", "--push", "http://h:1", "--push-label", "job=x" },
		  "the label 'job' is the group's job (--push-job)" },
		{ { "stat", "--push", "http://h:1", "--push-label", "1a=x" },
		  "--push-label takes NAME=VALUE" },
		{ { "stat", "--push", "http://h:1", "--sim" }, "not the simulated ones" },
		{ { "record", "--push", "http://h:1", "--push-format", "jfr" },
		  "--push-format takes pprof or folded, not 'jfr'" },
		{ { "record", "--push-name", "x" }, "--push-name goes with --push <url>" },
		{ { "record", "--push", "http://h:1", "--push-name", "a{b" },
		  "bad --push-name 'a{b': Pyroscope's application name cannot" },
		{ { "record", "--push", "http://h:1", "--push-label", "k=a,b" },
		  "bad --push-label 'k=a,b': a Pyroscope label value cannot hold" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct th_run r;
		char *argv[12] = { (char *)th_tacho_bin() };
		size_t n = 1;

		for (size_t k = 0; k < 6 && cases[i].a[k]; k++)
			argv[n++] = (char *)cases[i].a[k];
		argv[n++] = (char *)"--";
		argv[n++] = (char *)"true";
		th_runv(&r, NULL, argv);
		if (r.status != 2 || !strstr(r.err, cases[i].says))
			fail_msg("case %zu (%s %s): exit %d, %s", i, cases[i].a[0], cases[i].a[1],
				 r.status, r.err);
		th_run_free(&r);
	}
}

/* The receiver's port (it writes it once listening). */
static int start_receiver(struct th_proc *p, const char *report)
{
	char portfile[4200], *s;
	char *argv[] = { (char *)"python3", NULL, portfile, (char *)report, NULL };
	int port;

	argv[1] = (char *)th_path("tests/e2e/pyroscope-receiver.py");
	snprintf(portfile, sizeof(portfile), "%s", th_tmp("receiver.port"));
	th_spawn(p, "pyroscope", argv);
	if (!th_wait_for(portfile, "\n", 1, 15)) {
		char *err = th_slurp(p->err);
		fail_msg("the Pyroscope stand-in did not start: %s", err);
	}
	s = th_slurp(portfile);
	port = atoi(s);
	free(s);
	return port;
}

/* The receiver's report of request i (a JSON line). */
static struct th_json *report_line(const char *path, unsigned i)
{
	char *all = th_slurp(path), *line = all;
	struct th_json *j;

	for (unsigned k = 0; k < i && line; k++) {
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	if (!line || !*line)
		fail_msg("the receiver reported no request %u: %s", i, all);
	*strchr(line, '\n') = '\0';
	j = assert_json(line);
	free(all);
	return j;
}

static double num(const struct th_json *j, const char *path)
{
	const struct th_json *v = th_json_get(j, path);

	if (!v || v->type != TH_JSON_NUMBER)
		fail_msg("no number at %s", path);
	return v->number;
}

static const char *str(const struct th_json *j, const char *path)
{
	const struct th_json *v = th_json_get(j, path);

	if (!v || v->type != TH_JSON_STRING)
		fail_msg("no string at %s", path);
	return v->string;
}

static void test_pyroscope(void **state)
{
	struct th_proc recv;
	struct th_run r;
	struct th_json *j;
	char url[64], report[4200], *rec;
	int port;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!have("python3"))
		TEST_SKIP("python3 is not installed (the Pyroscope stand-in)");
	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	snprintf(report, sizeof(report), "%s", th_tmp("receiver.jsonl"));
	port = start_receiver(&recv, report);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	rec = strdup(th_tmp("push.rec"));
	/* pprof: a sample every write, the profile's events add up to them exactly */
	th_tacho(&r, "record", "-q", "-e", "syscalls:sys_enter_write", "-c", "1", "-o", rec,
		 "--push", url, "--push-name", "batch.writes", "--push-label", "env=test",
		 "--", th_prog("stat-helper"), "writes", WRITES, NULL);
	if (r.status != 0)
		fail_msg("tacho record --push exited %d: %s", r.status, r.err);
	th_run_free(&r);
	j = report_line(report, 0);
	if (th_json_get(j, "why"))
		fail_msg("the receiver refused the pprof push: %s", str(j, "why"));
	assert_string_equal(str(j, "format"), "pprof");
	assert_string_equal(str(j, "app"), "batch.writes");
	assert_string_equal(str(j, "labels.env"), "test");
	assert_true(num(j, "until") > num(j, "from"));
	assert_string_equal(str(j, "sample_types[1][0]"), "syscalls:sys_enter_write");
	assert_true(num(j, "totals[0]") == atoi(WRITES));    /* samples */
	assert_true(num(j, "totals[1]") == atoi(WRITES));    /* events */
	th_json_free(j);
	/* folded: "a;b;c N" lines whose counts add up to the writes */
	th_tacho(&r, "record", "-q", "-e", "syscalls:sys_enter_write", "-c", "1", "-o", rec,
		 "--push", url, "--push-format", "folded", "--", th_prog("stat-helper"),
		 "writes", WRITES, NULL);
	if (r.status != 0)
		fail_msg("tacho record --push-format folded exited %d: %s", r.status, r.err);
	th_run_free(&r);
	j = report_line(report, 1);
	if (th_json_get(j, "why"))
		fail_msg("the receiver refused the folded push: %s", str(j, "why"));
	assert_string_equal(str(j, "format"), "folded");
	assert_string_equal(str(j, "app"), "tacho");
	assert_string_equal(str(j, "query.units"), "samples");
	assert_true(num(j, "totals[0]") == atoi(WRITES));
	th_json_free(j);
	/* a 503: the status line and the body's first line, exit 1, the recording kept */
	unlink(rec);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/fail", port);
	th_tacho(&r, "record", "-q", "-e", "syscalls:sys_enter_write", "-c", "1", "-o", rec,
		 "--push", url, "--", th_prog("stat-helper"), "writes", "3", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "/fail: the server answered POST 503 Service Unavailable: "
			"ingester is down\n");
	assert_int_equal(th_count(r.err, "\n"), 1);
	th_run_free(&r);
	assert_int_equal(access(rec, R_OK), 0);
	free(rec);
	th_proc_kill(&recv, SIGTERM);
	assert_true(th_proc_wait(&recv, 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_pushgateway, th_procs_teardown),
		cmocka_unit_test_teardown(test_push_failures, th_procs_teardown),
		cmocka_unit_test(test_push_usage),
		cmocka_unit_test_teardown(test_pyroscope, th_procs_teardown),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
