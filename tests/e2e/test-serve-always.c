/* test-serve-always.c - tacho serve --profile, the always-on sampler: while pie-spin
 * spins in spin_hot, go tool pprof -top of ?seconds=2 leads pie-spin's samples with
 * spin_hot; once pie-spin has been killed and reaped, a profile still holds its
 * samples (so it came from the window, not from a recording made after the request);
 * two requests at once are both answered (without --profile one is refused: see
 * test-serve-pprof); ?event= other than the sampler's, or unknown, is a 400 saying why; with a window of one second the dropped counter grows in
 * /metrics; the cost metrics are there, with their OpenMetrics units, and parse; bad
 * option values are usage errors with one line saying which. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"

/* tacho serve --profile (more options in extra, NULL-terminated) on a free port. */
static int start_serve(struct th_proc *p, const char *const *extra)
{
	int port = th_free_port();
	char listen[32];
	char *argv[16] = { (char *)th_tacho_bin(), (char *)"serve", (char *)"--listen", listen,
			   (char *)"--profile" };
	size_t n = 5;

	for (; extra && *extra; extra++)
		argv[n++] = (char *)*extra;
	argv[n] = NULL;
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	th_spawn_ready(p, "serve", argv, port, "/api/frame", "tacho serve");
	return port;
}

/* A GET sent on a socket of its own, its answer read later (raw_status). */
static int raw_send(int port, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[512];
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(s >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);
	assert_int_equal(write(s, req, strlen(req)), (ssize_t)strlen(req));
	return s;
}

/* The status of the answer on s; *gzip: its body starts with gzip's magic. */
static int raw_status(int s, bool *gzip)
{
	static char buf[4 << 20];
	size_t len = 0;
	ssize_t n;
	int code = -1;
	const char *b;

	while (len < sizeof(buf) - 1 && (n = read(s, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(s);
	buf[len] = 0;
	if (sscanf(buf, "HTTP/%*s %d", &code) != 1)
		code = -1;
	b = memmem(buf, len, "\r\n\r\n", 4);
	*gzip = b && (size_t)(b + 6 - buf) <= len && (unsigned char)b[4] == 0x1f &&
		(unsigned char)b[5] == 0x8b;
	return code;
}

/* go tool pprof -top of process pid's samples on url (by its pid label, not its comm:
 * another test's pie-spin may run beside it): its output; fails when it cannot load the
 * profile. */
static char *pprof_top(const char *url, pid_t pid)
{
	char focus[64];
	char *argv[] = { (char *)"go", (char *)"tool", (char *)"pprof", (char *)"-top",
			 (char *)"-timeout=600", focus, (char *)url, NULL };
	struct th_run r;
	char *out;

	snprintf(focus, sizeof(focus), "-tagfocus=pid=%d", (int)pid);
	th_runv(&r, NULL, argv);
	if (r.status)
		fail_msg("go tool pprof -top %s failed (%d): %s%s", url, r.status, r.out, r.err);
	out = strdup(r.out);
	th_run_free(&r);
	return out;
}

/* The name on the first row of -top. */
static void first_row(const char *top, char *name, size_t nsize)
{
	const char *h = strstr(top, "flat%");
	char n[256] = "";

	if (h)
		h = strchr(h, '\n');
	if (!h || sscanf(h + 1, " %*s %*s %*s %*s %*s %255s", n) != 1)
		fail_msg("no row in go tool pprof -top:\n%s", top);
	snprintf(name, nsize, "%s", n);
}

/* Waits until process pid has run 100 ms in user mode: in its spin. */
static void wait_spinning(pid_t pid)
{
	char path[64], buf[1024];
	double end = th_now() + 60;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	while (th_now() < end) {
		FILE *f = fopen(path, "r");
		unsigned long utime = 0;
		const char *c;
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = 0;
		c = strrchr(buf, ')');
		if (c && sscanf(c + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lu", &utime) == 1 &&
		    utime * 1000 / (unsigned long)sysconf(_SC_CLK_TCK) >= 100)
			return;
		usleep(20000);
	}
	fail_msg("process %d never ran 100 ms", (int)pid);
}

/* The value of the sample `name` (with its labels, as written) in a /metrics text:
 * NAN when it is not there; fails when its value does not parse. */
static double metric(const char *text, const char *name)
{
	size_t nl = strlen(name);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		char *end;
		double v;
		if (strncmp(l, name, nl) || l[nl] != ' ')
			continue;
		v = strtod(l + nl + 1, &end);
		if (end == l + nl + 1 || (*end != '\n' && *end))
			fail_msg("%s: a value that does not parse: %.60s", name, l);
		return v;
	}
	return NAN;
}

static char *get_metrics(int port, const char *accept)
{
	char *m = NULL;

	assert_int_equal(th_http_get(port, "/metrics", accept, &m), 200);
	return m;
}

/* Waits until the sampler holds 2 s (the request's seconds): a wait for a state, the
 * deadline only ends a hung run. */
static void wait_held(int port, double s)
{
	double end = th_now() + 120;

	while (th_now() < end) {
		char *m = get_metrics(port, NULL);
		double held = metric(m, "tacho_serve_profile_window_seconds");
		free(m);
		if (held >= s)
			return;
		usleep(100000);
	}
	fail_msg("the sampler never held %g s", s);
}

static void test_held(void **state)
{
	struct th_proc serve, spin;
	char *spin_argv[] = { (char *)th_prog("pie-spin"), (char *)"60000", NULL };
	char url[256], name[256], *top, *m;
	int port;
	(void)state;

	if (!th_go_env())
		TEST_SKIP("go is not installed (scripts/deps.sh test: golang-go)");
	port = start_serve(&serve, NULL);
	th_spawn(&spin, "spin", spin_argv);
	wait_spinning(spin.pid);
	wait_held(port, 2);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile?seconds=2", port);
	top = pprof_top(url, spin.pid);
	assert_contains(top, "\nType: cpu\n");
	first_row(top, name, sizeof(name));
	if (strcmp(name, "spin_hot"))
		fail_msg("pie-spin's samples do not lead with spin_hot:\n%s", top);
	free(top);

	/* pie-spin is gone: a profile recorded from now could hold none of its samples,
	 * the window (60 s) still holds them */
	th_proc_kill(&spin, SIGKILL);
	assert_true(th_proc_wait(&spin, 10));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile?seconds=60", port);
	top = pprof_top(url, spin.pid);
	first_row(top, name, sizeof(name));
	if (strcmp(name, "spin_hot"))
		fail_msg("after pie-spin ended, its samples do not lead with spin_hot:\n%s", top);
	free(top);

	/* its cost and hold, in the Prometheus text format */
	m = get_metrics(port, NULL);
	assert_true(metric(m, "tacho_serve_profile_samples_total") > 0);
	/* the sampler's thread ran: its CPU time is positive */
	assert_true(metric(m, "tacho_serve_profile_cpu_seconds_total") > 0);
	assert_true(metric(m, "tacho_serve_profile_bytes") > 0);
	assert_true(metric(m, "tacho_serve_profile_bytes") <= 64.0 * 1024 * 1024);
	assert_true(metric(m, "tacho_serve_profile_stacks") > 0);
	assert_true(metric(m, "tacho_serve_profile_window_seconds") >= 2);
	assert_true(metric(m, "tacho_serve_profile_running") == 1);
	assert_true(metric(m, "tacho_serve_profile_dropped_samples_total{reason=\"window\"}") >= 0);
	assert_true(metric(m, "tacho_serve_profile_dropped_samples_total{reason=\"memory\"}") >= 0);
	assert_true(metric(m, "tacho_serve_profile_lost_samples_total") >= 0);
	assert_contains(m, "# TYPE tacho_serve_profile_cpu_seconds_total counter\n");
	free(m);
	/* and in OpenMetrics: families with their units, before # EOF */
	m = get_metrics(port, "application/openmetrics-text; version=1.0.0");
	assert_contains(m, "# TYPE tacho_serve_profile_cpu_seconds counter\n"
			   "# UNIT tacho_serve_profile_cpu_seconds seconds\n");
	assert_contains(m, "# UNIT tacho_serve_profile_bytes bytes\n");
	assert_true(metric(m, "tacho_serve_profile_cpu_seconds_total") > 0);
	assert_true(strstr(m, "tacho_serve_profile_running") < strstr(m, "# EOF\n"));
	free(m);

	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 20));
	assert_int_equal(serve.status, 0);
}

/* Two at once: both answered from the one sampler. */
static void test_two_at_once(void **state)
{
	struct th_proc serve;
	bool gz1, gz2;
	int port, s1, s2, c1, c2;
	(void)state;

	port = start_serve(&serve, NULL);
	wait_held(port, 0.5);
	s1 = raw_send(port, "/debug/pprof/profile?seconds=30");
	s2 = raw_send(port, "/debug/pprof/profile?seconds=1");
	c1 = raw_status(s1, &gz1);
	c2 = raw_status(s2, &gz2);
	if (c1 != 200 || c2 != 200 || !gz1 || !gz2)
		fail_msg("two profiles at once: %d%s and %d%s, not two gzipped 200s", c1,
			 gz1 ? "" : " (not gzip)", c2, gz2 ? "" : " (not gzip)");

	/* ?event=: the sampler samples one event (cpu-clock here, cycles with a PMU: never
	 * task-clock); a name the grammar does not know is the parser's reason */
	{
		char *body = NULL;
		assert_int_equal(th_http_get(port, "/debug/pprof/profile?event=task-clock", NULL,
					     &body), 400);
		assert_true(!strncmp(body, "the always-on sampler (--profile) samples ", 42));
		assert_contains(body, ", not 'task-clock': leave event out, or name ");
		assert_int_equal(strchr(body, '\n') - body, (long)strlen(body) - 1);
		free(body);
		assert_int_equal(th_http_get(port, "/debug/pprof/profile?event=no-such-event",
					     NULL, &body), 400);
		assert_true(!strncmp(body, "bad event 'no-such-event': unknown event ", 41));
		free(body);
	}
	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 20));
	assert_int_equal(serve.status, 0);
}

/* A window of one second: slices leave, and the dropped counter says so. */
static void test_window_drops(void **state)
{
	static const char *const extra[] = { "--profile-window", "1", NULL };
	struct th_proc serve;
	double end, dropped = 0;
	int port;
	(void)state;

	port = start_serve(&serve, extra);
	end = th_now() + 120;
	while (th_now() < end && !(dropped > 0)) {
		char *m = get_metrics(port, NULL);
		dropped = metric(m, "tacho_serve_profile_dropped_samples_total{reason=\"window\"}");
		/* never more held than the window and the slice being filled */
		assert_true(metric(m, "tacho_serve_profile_window_seconds") >= 0);
		free(m);
		if (!(dropped > 0))
			usleep(200000);
	}
	if (!(dropped > 0))
		fail_msg("no sample dropped with a window of 1 s");
	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 20));
	assert_int_equal(serve.status, 0);
}

/* Bad values: exit 2, the first line says which. */
static void test_bad_options(void **state)
{
	static const struct {
		const char *a[4];
		const char *want;
	} cases[] = {
		{ { "--profile", "--profile-freq", "0" },
		  "tacho serve: bad --profile-freq '0': a whole number from 1 to 10000\n" },
		{ { "--profile", "--profile-freq", "19x" },
		  "tacho serve: bad --profile-freq '19x': a whole number from 1 to 10000\n" },
		{ { "--profile", "--profile-window", "3601" },
		  "tacho serve: bad --profile-window '3601': a whole number from 1 to 3600\n" },
		{ { "--profile", "--profile-max-mb", "-1" },
		  "tacho serve: bad --profile-max-mb '-1': a whole number from 1 to 65536\n" },
		{ { "--profile-window", "10" },
		  "tacho serve: --profile-freq, --profile-window and --profile-max-mb go with "
		  "--profile\n" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct th_run r;
		const char *nl;
		th_tacho(&r, "serve", "--listen", "127.0.0.1:1", cases[i].a[0], cases[i].a[1],
			 cases[i].a[2], NULL);
		nl = strchr(r.err, '\n');
		if (r.status != 2 || !nl || strncmp(r.err, cases[i].want, (size_t)(nl + 1 - r.err)) ||
		    strlen(cases[i].want) != (size_t)(nl + 1 - r.err))
			fail_msg("case %zu: exit %d, '%s', not 2 with '%s'", i, r.status, r.err,
				 cases[i].want);
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_held, th_procs_teardown),
		cmocka_unit_test_teardown(test_two_at_once, th_procs_teardown),
		cmocka_unit_test_teardown(test_window_drops, th_procs_teardown),
		cmocka_unit_test(test_bad_options),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
