/* test-http.c - the push client (lib/util/http.c): answers as servers send them (status
 * lines, header fields, chunked bodies, bytes that are not text) and what it refuses,
 * --push URLs good and bad, each case naming its line; then whole exchanges with a
 * loopback server thread of this test: the request's bytes as sent, an answer read to
 * the end, a server that never answers (-ETIMEDOUT), a port where nothing listens. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "util/util.h"

static const struct {
	int line;
	const char *in;
	int err, status;
	const char *status_line, *body_line;
} answers[] = {
	{ __LINE__, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, 200, "200 OK", "" },
	{ __LINE__, "HTTP/1.0 202 Accepted\r\n\r\n", 0, 202, "202 Accepted", "" },
	{ __LINE__, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n\r\n"
	  "text format parsing error in line 3: bad\nsecond\n", 0, 400, "400 Bad Request",
	  "text format parsing error in line 3: bad" },
	{ __LINE__, "HTTP/1.1 204\r\n\r\n", 0, 204, "204", "" },
	{ __LINE__, "HTTP/1.1 500 Oops\n\n\n\r\n  first\r\n", 0, 500, "500 Oops", "first" },
	{ __LINE__, "HTTP/1.1 503 Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "4;ext=1\r\ninge\r\na\r\nster down\n\r\n0\r\n\r\n", 0, 503, "503 Unavailable",
	  "ingester down" },
	{ __LINE__, "HTTP/1.1 503 X\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	  0, 503, "503 X", "abc" },
	{ __LINE__, "HTTP/1.1 404 Not\x01" "Found\r\n\r\nbody\x7f\xff\n", 0, 404, "404 Not?Found",
	  "body??" },
	{ __LINE__, "HTTP/1.1 503 X\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", -EBADMSG, 503,
	  NULL, NULL },
	{ __LINE__, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", -EBADMSG, 200, NULL, NULL },
	{ __LINE__, "HTTP/1.1 200 OK", -EBADMSG, 200, NULL, NULL },
	{ __LINE__, "HTTP/2 200 OK\r\n\r\n", -EBADMSG, -1, NULL, NULL },
	{ __LINE__, "HTTP/1.1 99 Low\r\n\r\n", -EBADMSG, -1, NULL, NULL },
	{ __LINE__, "HTTP/1.1 600 High\r\n\r\n", -EBADMSG, -1, NULL, NULL },
	{ __LINE__, "HTTP/1.1 2000 OK\r\n\r\n", -EBADMSG, -1, NULL, NULL },
	{ __LINE__, "SSH-2.0-OpenSSH_9.2\r\n", -EBADMSG, -1, NULL, NULL },
	{ __LINE__, "", -EBADMSG, -1, NULL, NULL },
};

static void test_answers(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		struct tc_http_response r;
		size_t n = strlen(answers[i].in);
		char *exact = malloc(n ? n : 1);     /* not NUL-terminated: ASan sees past it */
		int err;

		memcpy(exact, answers[i].in, n);
		err = tc_http_response_parse(exact, n, &r);
		free(exact);
		if (err != answers[i].err || r.status != answers[i].status ||
		    (answers[i].status_line && strcmp(r.status_line, answers[i].status_line)) ||
		    (answers[i].body_line && strcmp(r.body_line, answers[i].body_line)))
			fail_msg("line %d: %d %d '%s' '%s'", answers[i].line, err, r.status,
				 r.status_line, r.body_line);
	}
}

static const struct {
	int line;
	const char *in;
	int err;
	const char *host, *port, *path, *why;
} urls[] = {
	{ __LINE__, "http://127.0.0.1:9091", 0, "127.0.0.1", "9091", "", NULL },
	{ __LINE__, "http://127.0.0.1:9091/", 0, "127.0.0.1", "9091", "", NULL },
	{ __LINE__, "HTTP://gw.example/prefix/pg//", 0, "gw.example", "80", "/prefix/pg", NULL },
	{ __LINE__, "http://[::1]:4040/", 0, "::1", "4040", "", NULL },
	{ __LINE__, "https://gw:443", -EPROTONOSUPPORT, NULL, NULL, NULL, "https:// is not" },
	{ __LINE__, "ftp://gw", -EINVAL, NULL, NULL, NULL, "not an http:// URL" },
	{ __LINE__, "http://", -EINVAL, NULL, NULL, NULL, "no host" },
	{ __LINE__, "http://:80", -EINVAL, NULL, NULL, NULL, "no host" },
	{ __LINE__, "http://h:0", -EINVAL, NULL, NULL, NULL, "a bad port" },
	{ __LINE__, "http://h:65536", -EINVAL, NULL, NULL, NULL, "a bad port" },
	{ __LINE__, "http://h:80x", -EINVAL, NULL, NULL, NULL, "a bad port" },
	{ __LINE__, "http://h:", -EINVAL, NULL, NULL, NULL, "a bad port" },
	{ __LINE__, "http://[::1", -EINVAL, NULL, NULL, NULL, "closing ']'" },
	{ __LINE__, "http://[::1]x:80/", -EINVAL, NULL, NULL, NULL, "no port or path" },
	{ __LINE__, "http://user@h", -EINVAL, NULL, NULL, NULL, "cannot hold" },
	{ __LINE__, "http://h/a b", -EINVAL, NULL, NULL, NULL, "cannot hold" },
	{ __LINE__, "http://h/x?y=1", -EINVAL, NULL, NULL, NULL, "a query or fragment" },
	{ __LINE__, "http://h#f", -EINVAL, NULL, NULL, NULL, "a query or fragment" },
};

static void test_urls(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
		struct tc_http_url u;
		const char *why;
		int err = tc_http_url_parse(urls[i].in, &u, &why);

		if (err != urls[i].err ||
		    (!err && (strcmp(u.host, urls[i].host) || strcmp(u.port, urls[i].port) ||
			      strcmp(u.path, urls[i].path))) ||
		    (err && (!why || !strstr(why, urls[i].why))))
			fail_msg("line %d: %d host '%s' port '%s' path '%s' why '%s'", urls[i].line,
				 err, err ? "" : u.host, err ? "" : u.port, err ? "" : u.path,
				 why ? why : "(none)");
	}
}

/* --- exchanges with a loopback server thread --- */

struct server {
	int fd, port;
	const char *answer;     /* NULL: read the request, never answer */
	char request[4096];
	size_t got;
};

static void *serve_one(void *arg)
{
	struct server *s = arg;
	int c = accept(s->fd, NULL, NULL);
	char *end = NULL;

	if (c < 0)
		return NULL;
	/* the whole request: headers, then Content-Length bytes */
	while (s->got < sizeof(s->request) - 1) {
		ssize_t n = read(c, s->request + s->got, sizeof(s->request) - 1 - s->got);
		char *cl;

		if (n <= 0)
			break;
		s->got += (size_t)n;
		s->request[s->got] = '\0';
		end = strstr(s->request, "\r\n\r\n");
		cl = strstr(s->request, "Content-Length: ");
		if (end && cl && s->got >= (size_t)(end + 4 - s->request) + strtoul(cl + 16, NULL, 10))
			break;
	}
	if (s->answer) {
		if (write(c, s->answer, strlen(s->answer)) < 0)
			s->got = 0;
	} else {
		char b[16];
		while (read(c, b, sizeof(b)) > 0)   /* until the client gives up */
			;
	}
	close(c);
	return NULL;
}

static void server_start(struct server *s, pthread_t *t, const char *answer)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	memset(s, 0, sizeof(*s));
	s->answer = answer;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(s->fd >= 0);
	assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(s->fd, 1), 0);
	assert_int_equal(getsockname(s->fd, (struct sockaddr *)&a, &al), 0);
	s->port = ntohs(a.sin_port);
	assert_int_equal(pthread_create(t, NULL, serve_one, s), 0);
}

static void exchange(struct server *s, const char *method, const char *target,
		     const char *body, unsigned timeout_ms, struct tc_http_response *r,
		     int *err, char *why, size_t wsz)
{
	char url[64];
	struct tc_http_url u;
	const char *uwhy;
	struct tc_http_request q = { .method = method, .url = &u, .target = target,
				     .content_type = "text/plain; version=0.0.4", .body = body,
				     .body_len = strlen(body), .timeout_ms = timeout_ms };

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/base/", s->port);
	assert_int_equal(tc_http_url_parse(url, &u, &uwhy), 0);
	*err = tc_http_request(&q, r, why, wsz);
}

static void test_exchange(void **state)
{
	struct server s;
	struct tc_http_response r;
	pthread_t t;
	char why[256], want[256];
	int err;
	(void)state;

	server_start(&s, &t, "HTTP/1.1 400 Bad Request\r\nContent-Length: 30\r\n\r\n"
		     "pushed metrics are invalid\nx\n");
	exchange(&s, "PUT", "/metrics/job/j", "a_total 1\n", 0, &r, &err, why, sizeof(why));
	pthread_join(t, NULL);
	close(s.fd);
	assert_int_equal(err, 0);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.status_line, "400 Bad Request");
	assert_string_equal(r.body_line, "pushed metrics are invalid");
	snprintf(want, sizeof(want), "PUT /base/metrics/job/j HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "User-Agent: tacho\r\nConnection: close\r\nContent-Length: 10\r\n"
		 "Content-Type: text/plain; version=0.0.4\r\n\r\na_total 1\n", s.port);
	assert_string_equal(s.request, want);

	/* a server that takes the request and never answers: the deadline ends it */
	server_start(&s, &t, NULL);
	exchange(&s, "POST", "/ingest", "x", 300, &r, &err, why, sizeof(why));
	assert_int_equal(err, -ETIMEDOUT);
	assert_string_equal(why, "no answer within the timeout");
	pthread_join(t, NULL);
	close(s.fd);
}

static void test_refused(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	struct tc_http_url u;
	struct tc_http_response r;
	struct tc_http_request q = { .method = "PUT", .url = &u, .target = "/", .body = "",
				     .body_len = 0 };
	char url[64], why[256];
	const char *uwhy;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	(void)state;

	/* a port that was just free: bound, never listened on */
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(a.sin_port));
	assert_int_equal(tc_http_url_parse(url, &u, &uwhy), 0);
	assert_int_equal(tc_http_request(&q, &r, why, sizeof(why)), -ECONNREFUSED);
	assert_string_equal(why, "Connection refused");
	assert_int_equal(r.status, -1);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers),
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_exchange),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
