/* spawn.c - background programs, files to wait on and a loopback HTTP client for the
 * tests of tacho top, serve and watch (spawn.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"
#include "json-check.h"

/* What th_spawn started and nobody reaped yet, for th_procs_teardown. */
static pid_t live_pids[64];

static void forget(pid_t pid)
{
	for (size_t i = 0; i < ARRAY_SIZE(live_pids); i++)
		if (live_pids[i] == pid)
			live_pids[i] = 0;
}

int th_procs_teardown(void **state)
{
	double end = th_now() + 5;
	bool left = false;
	(void)state;

	/* SIGTERM first: a tacho command lifts its caps and continues what it stopped */
	for (size_t i = 0; i < ARRAY_SIZE(live_pids); i++)
		if (live_pids[i] > 0 && !kill(live_pids[i], SIGTERM))
			left = true;
	while (left && th_now() < end) {
		left = false;
		for (size_t i = 0; i < ARRAY_SIZE(live_pids); i++) {
			if (live_pids[i] <= 0)
				continue;
			if (waitpid(live_pids[i], NULL, WNOHANG) == live_pids[i])
				live_pids[i] = 0;
			else
				left = true;
		}
		if (left)
			usleep(20000);
	}
	for (size_t i = 0; i < ARRAY_SIZE(live_pids); i++) {
		if (live_pids[i] > 0) {
			kill(live_pids[i], SIGKILL);
			waitpid(live_pids[i], NULL, 0);
		}
		live_pids[i] = 0;
	}
	return 0;
}

double th_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void th_spawn(struct th_proc *p, const char *tag, char *const argv[])
{
	int sync[2];
	char c;

	memset(p, 0, sizeof(*p));
	snprintf(p->out, sizeof(p->out), "%s", th_tmp(tag));
	strncat(p->out, ".out", sizeof(p->out) - strlen(p->out) - 1);
	snprintf(p->err, sizeof(p->err), "%s", th_tmp(tag));
	strncat(p->err, ".err", sizeof(p->err) - strlen(p->err) - 1);
	/* a close-on-exec pipe: its end of file says the exec is done, so that a test
	 * never hands a command the pid of a fork that is still the test */
	assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
	fflush(NULL);
	p->pid = th_fork();
	if (p->pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(p->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(p->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in < 0 || o < 0 || e < 0)
			_exit(126);
		dup2(in, 0);
		dup2(o, 1);
		dup2(e, 2);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(sync[1]);
	while (read(sync[0], &c, 1) < 0 && errno == EINTR)
		;
	close(sync[0]);
	for (size_t i = 0; i < ARRAY_SIZE(live_pids); i++)
		if (!live_pids[i]) {
			live_pids[i] = p->pid;
			break;
		}
}

bool th_proc_wait(struct th_proc *p, double timeout_s)
{
	double end = th_now() + timeout_s;
	int st;

	if (p->done)
		return true;
	for (;;) {
		pid_t r = waitpid(p->pid, &st, WNOHANG);
		if (r == p->pid) {
			forget(p->pid);
			p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			p->done = true;
			return true;
		}
		if (r < 0 || th_now() > end)
			return false;
		usleep(10000);
	}
}

void th_proc_kill(struct th_proc *p, int sig)
{
	if (p->pid > 0 && !p->done)
		kill(p->pid, sig);
}

void th_proc_end(struct th_proc *p)
{
	if (p->pid <= 0 || p->done)
		return;
	kill(p->pid, SIGKILL);
	th_proc_wait(p, 10);
}

char *th_slurp(const char *path)
{
	char *s = NULL;
	size_t n;

	if (th_read_data(path, &s, &n))
		return strdup("");
	return s;
}

unsigned th_count(const char *s, const char *needle)
{
	unsigned n = 0;
	size_t l = strlen(needle);

	for (const char *p = s; l && (p = strstr(p, needle)); p += l)
		n++;
	return n;
}

bool th_wait_for(const char *path, const char *needle, unsigned count, double timeout_s)
{
	double end = th_now() + timeout_s;

	for (;;) {
		char *s = th_slurp(path);
		bool ok = th_count(s, needle) >= count;
		free(s);
		if (ok)
			return true;
		if (th_now() > end)
			return false;
		usleep(20000);
	}
}

int th_http_get(int port, const char *path, const char *accept, char **body)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[1024], *buf = NULL, *b;
	size_t len = 0, alloc = 0;
	int s, code = -1;

	if (body)
		*body = NULL;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	if (connect(s, (struct sockaddr *)&a, sizeof(a))) {
		close(s);
		return -1;
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n%s%s%s\r\n", path,
		 port, accept ? "Accept: " : "", accept ? accept : "", accept ? "\r\n" : "");
	if (write(s, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(s);
		return -1;
	}
	for (;;) {
		ssize_t n;
		if (len + 4096 + 1 > alloc) {
			alloc = alloc ? 2 * alloc : 65536;
			buf = realloc(buf, alloc);
			assert_non_null(buf);
		}
		n = read(s, buf + len, alloc - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(s);
	if (!buf)
		return -1;
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/%*s %d", &code) != 1)
		code = -1;
	b = strstr(buf, "\r\n\r\n");
	if (body)
		*body = strdup(b ? b + 4 : "");
	free(buf);
	return code;
}

int th_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port;

	assert_true(s >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &l), 0);
	port = ntohs(a.sin_port);
	close(s);
	return port;
}

void th_spawn_ready(struct th_proc *p, const char *tag, char *const argv[], int port,
		    const char *path, const char *what)
{
	double end = th_now() + 15;

	th_spawn(p, tag, argv);
	while (th_now() < end) {
		if (th_http_get(port, path, NULL, NULL) == 200)
			return;
		if (th_proc_wait(p, 0.05)) {
			char *err = th_slurp(p->err);
			fail_msg("%s ended (%d): %s", what, p->status, err);
		}
	}
	fail_msg("%s does not answer on %d", what, port);
}

double th_prom_query(int port, const char *query)
{
	char path[512], *body = NULL;
	struct th_json *j;
	const struct th_json *v;
	double x = NAN;

	snprintf(path, sizeof(path), "/api/v1/query?query=%s", query);
	if (th_http_get(port, path, NULL, &body) != 200) {
		free(body);
		return NAN;
	}
	j = th_json_parse(body, NULL, 0);
	free(body);
	if (!j)
		return NAN;
	v = th_json_get(j, "data.result[0].value[1]");
	if (v && v->type == TH_JSON_STRING)
		x = strtod(v->string, NULL);
	th_json_free(j);
	return x;
}
