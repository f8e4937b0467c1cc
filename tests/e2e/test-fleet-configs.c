/* test-fleet-configs.c - the configuration files of docs/fleet/ checked by the programs
 * that read them, where this machine has them: `promtool check config` on the
 * Prometheus file (which loads its rules) and `promtool check rules`; VictoriaMetrics'
 * `-promscrape.config.dryRun` on its scrape file; each against a broken copy too, so
 * that a check that passes everything would fail here. The metric names the files use
 * are those a real `tacho serve` writes, and the profile path is one it serves. Parca
 * and Grafana Alloy are not in Debian: their files are checked for form only (the Parca
 * file as YAML with python3-yaml, its pprof_config keys and a timeout beyond the
 * interval; the Alloy file's blocks, brackets and strings balanced, its components and
 * path named), and docs/fleet.md says so. docs/img/fleet.svg must be well-formed XML
 * (xmllint). */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"

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

/* A copy of the repository file rel in the test's folder, as name, with the first
 * from replaced by to (which must be there). Returns its path. */
static const char *broken_copy(const char *rel, const char *name, const char *from,
			       const char *to)
{
	char *text = th_slurp(th_path(rel)), *at = strstr(text, from);
	const char *path = th_tmp(name);
	FILE *f;

	if (!at)
		fail_msg("%s has no '%s' to break", rel, from);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	assert_int_equal(fclose(f), 0);
	free(text);
	return path;
}

static void test_prometheus_config(void **state)
{
	struct th_run r;
	(void)state;

	if (!have("promtool"))
		TEST_SKIP("promtool (Debian's prometheus) is not installed");
	{
		char *argv[] = { (char *)"promtool", (char *)"check", (char *)"config",
				 (char *)th_path("docs/fleet/prometheus.yml"), NULL };
		th_runv(&r, NULL, argv);
		if (r.status != 0)
			fail_msg("promtool check config: %d\n%s%s", r.status, r.out, r.err);
		/* it found and checked the rules file next to it */
		assert_contains(r.out, "SUCCESS: 1 rule files found");
		th_run_free(&r);
	}
	{
		char *argv[] = { (char *)"promtool", (char *)"check", (char *)"rules",
				 (char *)th_path("docs/fleet/tacho-rules.yml"), NULL };
		th_runv(&r, NULL, argv);
		if (r.status != 0)
			fail_msg("promtool check rules: %d\n%s%s", r.status, r.out, r.err);
		assert_contains(r.out, "SUCCESS: 3 rules found");
		th_run_free(&r);
	}
	{
		/* a misspelt key: promtool must refuse it */
		char *argv[] = { (char *)"promtool", (char *)"check", (char *)"config",
				 (char *)broken_copy("docs/fleet/prometheus.yml", "broken.yml",
						     "metric_relabel_configs:",
						     "metric_relabel_config:"), NULL };
		th_runv(&r, NULL, argv);
		assert_int_not_equal(r.status, 0);
		assert_contains(r.err, "metric_relabel_config");
		th_run_free(&r);
	}
}

static void test_victoria_metrics_config(void **state)
{
	char arg[4200];
	char *argv[] = { (char *)"victoria-metrics", arg, (char *)"-promscrape.config.dryRun",
			 (char *)"-loggerLevel=ERROR", NULL };
	struct th_run r;
	(void)state;

	if (!have("victoria-metrics"))
		TEST_SKIP("victoria-metrics is not installed");
	snprintf(arg, sizeof(arg), "-promscrape.config=%s",
		 th_path("docs/fleet/victoria-metrics-scrape.yml"));
	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("victoria-metrics dry run: %d\n%s%s", r.status, r.out, r.err);
	th_run_free(&r);
	snprintf(arg, sizeof(arg), "-promscrape.config=%s",
		 broken_copy("docs/fleet/victoria-metrics-scrape.yml", "broken-vm.yml",
			     "file_sd_configs:", "file_sd_config:"));
	th_runv(&r, NULL, argv);
	assert_int_not_equal(r.status, 0);
	assert_contains(r.err, "file_sd_config");
	th_run_free(&r);
}

/* The names the files use are what tacho serve writes; the path is one it serves. */
static void test_names_are_served(void **state)
{
	static const char *const names[] = {
		"tacho_task_clock_seconds_total", "tacho_context_switches_total",
		"tacho_targets_left_out", "tacho_not_counted", "tacho_scrape_duration_seconds",
		"tacho_scrapes_total",
	};
	static const char *const files[] = {
		"docs/fleet/prometheus.yml", "docs/fleet/tacho-rules.yml",
		"docs/fleet/victoria-metrics-scrape.yml",
	};
	struct th_proc serve;
	char listen[32], *body = NULL;
	int port = th_free_port();
	char *argv[] = { (char *)th_tacho_bin(), (char *)"serve", (char *)"--listen", listen,
			 (char *)"--view", (char *)"machine", (char *)"-e",
			 (char *)"task-clock,context-switches", NULL };
	(void)state;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	th_spawn_ready(&serve, "serve", argv, port, "/api/frame", "tacho serve");
	assert_int_equal(th_http_get(port, "/metrics", NULL, &body), 200);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char type[128];

		snprintf(type, sizeof(type), "# TYPE %s ", names[i]);
		assert_contains(body, type);
	}
	free(body);
	body = NULL;
	assert_int_equal(th_http_get(port, "/debug/pprof/", NULL, &body), 200);
	assert_contains(body, "profile");
	free(body);
	th_proc_kill(&serve, SIGTERM);
	assert_true(th_proc_wait(&serve, 10));
	assert_int_equal(serve.status, 0);

	/* every tacho_ name the files use is one of those */
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *text = th_slurp(th_path(files[i]));

		for (char *p = strstr(text, "tacho_"); p; p = strstr(p + 1, "tacho_")) {
			size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
			bool known = false;

			if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_' ||
					 p[-1] == ':'))
				continue;   /* a recorded name (instance:tacho_...) */
			for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++)
				known |= strlen(names[j]) == n && !strncmp(p, names[j], n);
			if (!known)
				fail_msg("%s names %.*s, which serve does not write", files[i],
					 (int)n, p);
		}
		free(text);
	}
}

static void test_parca_yaml(void **state)
{
	/* python3-yaml: the keys Parca reads, the timeout beyond the profile's seconds */
	static const char script[] =
		"import sys, yaml\n"
		"c = yaml.safe_load(open(sys.argv[1]))\n"
		"def secs(s): return int(s[:-1]) * {'s': 1, 'm': 60}[s[-1]]\n"
		"j = c['scrape_configs'][0]\n"
		"cpu = j['profiling_config']['pprof_config']['process_cpu']\n"
		"assert cpu == {'enabled': True, 'path': '/debug/pprof/profile', 'delta': True}, cpu\n"
		"assert secs(j['scrape_timeout']) > secs(j['scrape_interval']), j\n"
		"assert secs(j['scrape_interval']) <= 300, j\n"
		"assert all(t.endswith(':9475') for t in j['static_configs'][0]['targets'])\n"
		"assert c['object_storage']['bucket']['type'] == 'FILESYSTEM'\n"
		"print('ok', j['job_name'])\n";
	char *argv[] = { (char *)"/usr/bin/python3", (char *)"-c", (char *)script,
			 (char *)th_path("docs/fleet/parca.yaml"), NULL };
	struct th_run r;
	(void)state;

	if (access("/usr/bin/python3", X_OK))
		TEST_SKIP("Debian's python3 is not installed");
	{
		char *probe[] = { (char *)"/usr/bin/python3", (char *)"-c",
				  (char *)"import yaml", NULL };
		th_runv(&r, NULL, probe);
		if (r.status != 0) {
			th_run_free(&r);
			TEST_SKIP("python3-yaml is not installed");
		}
		th_run_free(&r);
	}
	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("docs/fleet/parca.yaml: %s%s", r.out, r.err);
	assert_string_equal(r.out, "ok tacho\n");
	th_run_free(&r);
	/* and the check fails a file that is not YAML */
	argv[3] = (char *)broken_copy("docs/fleet/parca.yaml", "broken-parca.yaml",
				      "    scrape_interval: 30s", "  scrape_interval: [30s");
	th_runv(&r, NULL, argv);
	assert_int_not_equal(r.status, 0);
	th_run_free(&r);
}

/* Alloy's syntax, for form only: // comments, "strings" with \ escapes, brackets
 * balanced and never closed before opened. NULL when well formed, else what is wrong. */
static const char *alloy_form(const char *s, int *line)
{
	char stack[64];
	int depth = 0;

	*line = 1;
	for (; *s; s++) {
		if (*s == '\n')
			++*line;
		else if (s[0] == '/' && s[1] == '/')
			s += strcspn(s, "\n") - 1;
		else if (*s == '"') {
			for (s++; *s && *s != '"' && *s != '\n'; s++)
				if (*s == '\\' && s[1])
					s++;
			if (*s != '"')
				return "a string not closed on its line";
		} else if (strchr("{[(", *s)) {
			if (depth == (int)sizeof(stack))
				return "brackets nested too deep";
			stack[depth++] = *s;
		} else if (strchr("}])", *s)) {
			char open = *s == '}' ? '{' : *s == ']' ? '[' : '(';

			if (!depth || stack[--depth] != open)
				return "a bracket closed that was not open";
		}
	}
	return depth ? "a bracket not closed" : NULL;
}

static void test_alloy_form(void **state)
{
	char *text = th_slurp(th_path("docs/fleet/alloy-pyroscope.alloy"));
	const char *why;
	int line;
	(void)state;

	why = alloy_form(text, &line);
	if (why)
		fail_msg("docs/fleet/alloy-pyroscope.alloy: %s (line %d)", why, line);
	assert_contains(text, "pyroscope.scrape \"tacho\" {");
	assert_contains(text, "pyroscope.write \"backend\" {");
	assert_contains(text, "forward_to = [pyroscope.write.backend.receiver]");
	assert_contains(text, "profile.process_cpu {");
	assert_contains(text, "\"/debug/pprof/profile\"");
	free(text);
	/* the form check can fail */
	assert_non_null(alloy_form("a {\n  b = \"c\n}\n", &line));
	assert_non_null(alloy_form("a {\n  b = [1, 2}\n", &line));
	assert_non_null(alloy_form("a {\n", &line));
	assert_null(alloy_form("a { // }\n  b = \"}\\\"\"\n}\n", &line));
}

static void test_svg(void **state)
{
	struct th_run r;
	char *argv[] = { (char *)"xmllint", (char *)"--noout",
			 (char *)th_path("docs/img/fleet.svg"), NULL };
	(void)state;

	if (!have("xmllint"))
		TEST_SKIP("xmllint (libxml2-utils) is not installed");
	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("xmllint docs/img/fleet.svg: %s", r.err);
	th_run_free(&r);
	{
		char *svg = th_slurp(th_path("docs/img/fleet.svg"));

		assert_contains(svg, "xmlns=\"http://www.w3.org/2000/svg\"");
		assert_contains(svg, "/debug/pprof/profile");
		assert_contains(svg, "/metrics");
		free(svg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prometheus_config),
		cmocka_unit_test(test_victoria_metrics_config),
		cmocka_unit_test_teardown(test_names_are_served, th_procs_teardown),
		cmocka_unit_test(test_parca_yaml),
		cmocka_unit_test(test_alloy_form),
		cmocka_unit_test(test_svg),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
