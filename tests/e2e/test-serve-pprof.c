/* test-serve-pprof.c - tacho serve's /debug/pprof/profile as go tool pprof fetches it:
 * while pie-spin spins in spin_hot, go tool pprof -top on the URL loads a profile of the
 * whole machine in which pie-spin's samples lead with spin_hot, and one of ?pid= that
 * spin_hot leads outright, in CPU milliseconds; two profiles at once get one 200 and
 * one 429 with its reason while /metrics answers; bad seconds and pids get 400 with a
 * one-line reason; a profile under way when serve is stopped gets 503 and serve ends
 * cleanly. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"

/* tacho serve on a free loopback port; waits until it answers. */
static int start_serve(struct th_proc *p)
{
	int port = th_free_port();
	char listen[32];
	char *argv[] = { (char *)th_tacho_bin(), (char *)"serve", (char *)"--listen", listen, NULL };

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

/* The status of the answer on s, with the start of its body in body (text answers). */
static int raw_status(int s, char *body, size_t size)
{
	static char buf[1 << 20];
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
	b = strstr(buf, "\r\n\r\n");
	snprintf(body, size, "%s", b ? b + 4 : "");
	return code;
}

/* go tool pprof -top on url (more options before it): its output; fails when it
 * cannot load the profile. */
static char *pprof_top(const char *opt, const char *url)
{
	/* pprof waits the profile's seconds and 60 more for the answer: too few when the
	 * machine is loaded (writing a profile of it symbolizes every binary sampled) */
	char *argv[] = { (char *)"go", (char *)"tool", (char *)"pprof", (char *)"-top",
			 (char *)"-timeout=600", (char *)opt, (char *)url, NULL };
	struct th_run r;
	char *out;

	if (!opt) {
		argv[5] = (char *)url;
		argv[6] = NULL;
	}
	th_runv(&r, NULL, argv);
	if (r.status)
		fail_msg("go tool pprof -top %s failed (%d): %s%s", url, r.status, r.out, r.err);
	out = strdup(r.out);
	th_run_free(&r);
	return out;
}

/* The name on the first row of -top, and its flat value's unit; false when it has no
 * row. */
static bool first_row(const char *top, char *name, size_t nsize, char *unit)
{
	const char *h = strstr(top, "flat%");
	double v;
	char n[256] = "";

	if (h)
		h = strchr(h, '\n');
	unit[0] = 0;
	if (!h || sscanf(h + 1, " %lf%7[a-z] %*s %*s %*s %*s %255s", &v, unit, n) != 3)
		return false;
	snprintf(name, nsize, "%s", n);
	return true;
}

/* go tool pprof -top of url, with its first row. A profile of a few seconds at the
 * server's low rate can hold no sample of the spinning program when the machine is
 * loaded (it got a few percent of a CPU): such a profile is taken again, up to 5 times,
 * and the last one's output is what a failure shows. */
static char *top_with_row(const char *opt, const char *url, char *name, size_t nsize,
			  char *unit)
{
	char *top = NULL;

	for (int i = 0; i < 5; i++) {
		free(top);
		top = pprof_top(opt, url);
		if (first_row(top, name, nsize, unit))
			return top;
	}
	fail_msg("no row in go tool pprof -top %s in 5 profiles:\n%s", url, top);
	return top;
}

/* A unit of time as go tool pprof prints a cpu/nanoseconds value: it picks the unit by
 * the size (1.11s where the machine's 2 s held more than a second of spin_hot), and a
 * count would have none. */
static bool time_unit(const char *unit)
{
	return !strcmp(unit, "ns") || !strcmp(unit, "us") || !strcmp(unit, "ms") ||
	       !strcmp(unit, "s");
}

/* Waits until process pid has run 100 ms in user mode: past its start-up (the loader,
 * whose samples would stand beside spin_hot's in a short profile), in its spin. */
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
		/* after "(comm)": state is field 3, utime field 14 */
		c = strrchr(buf, ')');
		if (c && sscanf(c + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lu", &utime) == 1 &&
		    utime * 1000 / (unsigned long)sysconf(_SC_CLK_TCK) >= 100)
			return;
		usleep(20000);
	}
	fail_msg("process %d never ran 100 ms", (int)pid);
}

static void test_profile(void **state)
{
	struct th_proc serve, spin;
	char *spin_argv[] = { (char *)th_prog("pie-spin"), (char *)"60000", NULL };
	char url[256], name[256], unit[8], body[512], path[128], *top, *text = NULL;
	int port, s, c1, c2;
	(void)state;

	if (!th_go_env())
		TEST_SKIP("go is not installed (scripts/deps.sh test: golang-go)");
	port = start_serve(&serve);
	th_spawn(&spin, "spin", spin_argv);
	wait_spinning(spin.pid);

	/* the whole machine: pie-spin's samples (its comm label) lead with spin_hot */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile?seconds=2", port);
	top = top_with_row("-tagfocus=comm=pie-spin", url, name, sizeof(name), unit);
	assert_contains(top, "\nType: cpu\n");
	if (strcmp(name, "spin_hot") || !time_unit(unit))
		fail_msg("pie-spin's samples do not lead with spin_hot in units of time:\n%s", top);
	free(top);

	/* one process: spin_hot leads outright */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile?seconds=1&pid=%d",
		 port, (int)spin.pid);
	top = top_with_row(NULL, url, name, sizeof(name), unit);
	if (strcmp(name, "spin_hot") || !time_unit(unit))
		fail_msg("the profile of pid %d does not lead with spin_hot in units of time:\n%s",
			 (int)spin.pid, top);
	free(top);

	/* two at once: the first is still being taken when the second comes (it takes
	 * 2 s at least), so one of them is refused, whichever the server saw first */
	snprintf(path, sizeof(path), "/debug/pprof/profile?seconds=2&pid=%d", (int)spin.pid);
	s = raw_send(port, path);
	snprintf(path, sizeof(path), "/debug/pprof/profile?seconds=1&pid=%d", (int)spin.pid);
	c2 = th_http_get(port, path, NULL, &text);
	/* /metrics answers while a profile is under way */
	{
		char *m = NULL;
		assert_int_equal(th_http_get(port, "/metrics", NULL, &m), 200);
		assert_contains(m, "tacho_scrapes_total ");
		free(m);
	}
	c1 = raw_status(s, body, sizeof(body));
	if (!((c1 == 200 && c2 == 429) || (c1 == 429 && c2 == 200)))
		fail_msg("two profiles at once: %d and %d, not one 200 and one 429", c1, c2);
	assert_string_equal(c1 == 429 ? body : text,
			    "busy: another profile is being taken (one at a time); try again "
			    "when it ends\n");
	free(text);

	/* the index */
	assert_int_equal(th_http_get(port, "/debug/pprof/", NULL, &text), 200);
	assert_contains(text, "<a href=\"profile?seconds=30\">profile</a>");
	free(text);

	th_proc_kill(&spin, SIGKILL);
	assert_true(th_proc_wait(&spin, 10));
	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 20));
	assert_int_equal(serve.status, 0);
}

/* Bad queries: 400, one line saying what was wrong. */
static void test_bad_queries(void **state)
{
	static const struct {
		const char *query, *want;
	} cases[] = {
		{ "seconds=0", "bad seconds '0': a whole number from 1 to 300\n" },
		{ "seconds=301", "bad seconds '301': a whole number from 1 to 300\n" },
		{ "seconds=abc", "bad seconds 'abc': a whole number from 1 to 300\n" },
		{ "seconds=-1", "bad seconds '-1': a whole number from 1 to 300\n" },
		{ "seconds=", "bad seconds '': a whole number from 1 to 300\n" },
		{ "seconds=%205", "bad seconds ' 5': a whole number from 1 to 300\n" },
		{ "seconds=1%0A2", "bad seconds '1\\x0a2': a whole number from 1 to 300\n" },
		{ "seconds=99999999999999999999", "bad seconds '99999999999999999999': a whole "
						  "number from 1 to 300\n" },
		{ "pid=0", "bad pid '0': a process number\n" },
		{ "pid=x1", "bad pid 'x1': a process number\n" },
		{ "pid=2147483647", "no process 2147483647\n" },
		{ "event=", "bad event '': an event of tacho's grammar, at most 255 bytes\n" },
		{ "event=cpu-clock,task-clock", "bad event 'cpu-clock,task-clock': one event, "
						"not 2\n" },
	};
	struct th_proc serve;
	char path[256], *body = NULL;
	int port;
	(void)state;

	port = start_serve(&serve);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code;
		snprintf(path, sizeof(path), "/debug/pprof/profile?%s", cases[i].query);
		code = th_http_get(port, path, NULL, &body);
		if (code != 400 || !body || strcmp(body, cases[i].want))
			fail_msg("case %zu (%s): %d '%s', not 400 '%s'", i, cases[i].query, code,
				 body ? body : "", cases[i].want);
		free(body);
	}
	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 20));
	assert_int_equal(serve.status, 0);
}

/* Stopped while a profile is being taken: the client hears why, serve ends with 0
 * (libmicrohttpd aborts the process when stopped with a connection suspended). */
static void test_stop_during_profile(void **state)
{
	struct th_proc serve;
	char body[512];
	int port, s;
	(void)state;

	port = start_serve(&serve);
	/* the long one is being taken when a second one, sent after it, is refused; when
	 * the second came first, the long one was refused: send it again */
	for (int i = 0;; i++) {
		char *b = NULL;
		int code;
		assert_true(i < 10);
		s = raw_send(port, "/debug/pprof/profile?seconds=60");
		code = th_http_get(port, "/debug/pprof/profile?seconds=1", NULL, &b);
		free(b);
		if (code == 429)
			break;
		assert_int_equal(code, 200);
		assert_int_equal(raw_status(s, body, sizeof(body)), 429);
	}
	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 20));
	assert_int_equal(serve.status, 0);
	assert_int_equal(raw_status(s, body, sizeof(body)), 503);
	assert_string_equal(body, "tacho serve is stopping\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_profile, th_procs_teardown),
		cmocka_unit_test_teardown(test_bad_queries, th_procs_teardown),
		cmocka_unit_test_teardown(test_stop_during_profile, th_procs_teardown),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
