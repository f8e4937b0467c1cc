/* http.c - a minimal HTTP/1.1 client for the pushes of tacho stat and tacho record
 * (docs/serve.md, "Pushes"): one request per connection (Connection: close), plain
 * http:// only (no TLS), a deadline over the whole exchange, and a parser of the answer
 * that keeps what an error message needs: the status line and the body's first line.
 * RFC 9112 gives the message syntax. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

#define HTTP_MAX_ANSWER (64 * 1024)   /* what is read of an answer; the rest is dropped */

int tc_http_url_parse(const char *url, struct tc_http_url *u, const char **why)
{
	const char *p, *host, *end, *port = NULL;
	size_t n;

	memset(u, 0, sizeof(*u));
	*why = NULL;
	if (!strncasecmp(url, "https://", 8)) {
		*why = "https:// is not supported (tacho speaks plain HTTP only, no TLS: "
		       "push through a local proxy that adds TLS)";
		return -EPROTONOSUPPORT;
	}
	if (strncasecmp(url, "http://", 7)) {
		*why = "not an http:// URL";
		return -EINVAL;
	}
	host = url + 7;
	if (*host == '[') {
		end = strchr(host, ']');
		if (!end) {
			*why = "an IPv6 address without its closing ']'";
			return -EINVAL;
		}
		n = (size_t)(end - host - 1);
		host++;
		p = end + 1;
		if (*p && *p != ':' && *p != '/' && *p != '?' && *p != '#') {
			*why = "something after the IPv6 address's ']' that is no port or path";
			return -EINVAL;
		}
	} else {
		p = host + strcspn(host, ":/?#");
		n = (size_t)(p - host);
	}
	if (!n || n >= sizeof(u->host)) {
		*why = n ? "a host name too long" : "no host";
		return -EINVAL;
	}
	memcpy(u->host, host, n);
	u->host[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)u->host[i];
		if (c <= ' ' || c >= 0x7f || c == '@') {
			*why = "a host name with a character that a host name cannot hold";
			return -EINVAL;
		}
	}
	if (*p == ':') {
		uint64_t v;
		port = ++p;
		p += strcspn(p, "/?#");
		n = (size_t)(p - port);
		if (!n || n > 5) {
			*why = "a bad port";
			return -EINVAL;
		}
		memcpy(u->port, port, n);
		u->port[n] = '\0';
		if (tc_parse_u64(u->port, &v) || v == 0 || v > 65535) {
			*why = "a bad port";
			return -EINVAL;
		}
	} else {
		strcpy(u->port, "80");
	}
	if (strpbrk(p, "?#")) {
		*why = "a query or fragment in the URL (give the server's base URL)";
		return -EINVAL;
	}
	n = strlen(p);
	while (n && p[n - 1] == '/')
		n--;           /* the base path, without its trailing slashes */
	if (n >= sizeof(u->path)) {
		*why = "a path too long";
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c <= ' ' || c >= 0x7f || c == '?' || c == '#') {
			*why = "a path with a character that a URL cannot hold as it is";
			return -EINVAL;
		}
	}
	memcpy(u->path, p, n);
	u->path[n] = '\0';
	return 0;
}

/* The end of the line at s (its '\n', or s + n), and the line's length without "\r". */
static const char *line_end(const char *s, size_t n, size_t *len)
{
	const char *nl = memchr(s, '\n', n);
	const char *e = nl ? nl : s + n;

	*len = (size_t)(e - s);
	if (*len && s[*len - 1] == '\r')
		(*len)--;
	return e;
}

/* Copies s[0..n) into buf, each byte outside printable ASCII as '?'. */
static void copy_printable(char *buf, size_t size, const char *s, size_t n)
{
	if (n >= size)
		n = size - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[i] = c >= ' ' && c < 0x7f ? (char)c : '?';
	}
	buf[n] = '\0';
}

/* The first line of a chunked body (RFC 9112 section 7.1): the chunks' data from
 * body[0..n) put back together, up to size - 1 bytes, into buf; *got its length. 0, or
 * -EBADMSG for a malformed chunk size. */
static int dechunk(const char *body, size_t n, char *buf, size_t size, size_t *got)
{
	size_t o = 0, i = 0;

	while (i < n && o + 1 < size) {
		uint64_t len = 0;
		size_t digits = 0;
		int h;

		while (i < n && (h = tc_hex_value((unsigned char)body[i])) >= 0) {
			if (len > (UINT64_MAX >> 4))
				return -EBADMSG;
			len = len << 4 | (uint64_t)h;
			i++;
			digits++;
		}
		if (!digits)
			return -EBADMSG;
		while (i < n && body[i] != '\n')      /* chunk extensions, "\r" */
			i++;
		if (i >= n)
			return -EBADMSG;
		i++;
		if (!len)
			break;
		if (len > n - i)
			len = n - i;                  /* a truncated last chunk: what came */
		for (uint64_t k = 0; k < len && o + 1 < size; k++)
			buf[o++] = body[i + k];
		i += (size_t)len;
		if (i < n && body[i] == '\r')
			i++;
		if (i < n && body[i] == '\n')
			i++;
	}
	*got = o;
	return 0;
}

int tc_http_response_parse(const char *buf, size_t n, struct tc_http_response *r)
{
	const char *p = buf, *end = buf + n, *e;
	bool chunked = false;
	size_t len, skip;
	char chunk[sizeof(r->body_line)];
	const char *body;
	size_t body_len;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	e = line_end(p, n, &len);
	/* "HTTP/1.x SSS[ reason]" */
	if (len < 12 || memcmp(p, "HTTP/1.", 7) || p[7] < '0' || p[7] > '9' || p[8] != ' ' ||
	    p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9' ||
	    (len > 12 && p[12] != ' '))
		return -EBADMSG;
	r->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
	copy_printable(r->status_line, sizeof(r->status_line), p + 9, len - 9);
	if (e == end)
		return -EBADMSG;               /* no header section's end */
	p = e + 1;
	/* the header fields, up to the empty line */
	for (;;) {
		if (p >= end)
			return -EBADMSG;
		e = line_end(p, (size_t)(end - p), &len);
		if (!len)
			break;
		if (e == end)
			return -EBADMSG;
		skip = strlen("transfer-encoding:");
		if (len > skip && !strncasecmp(p, "transfer-encoding:", skip)) {
			/* chunked is the last coding when there is one (RFC 9112 6.1) */
			size_t k = len;
			while (k > skip && (p[k - 1] == ' ' || p[k - 1] == '\t'))
				k--;
			chunked = k - skip >= 7 && !strncasecmp(p + k - 7, "chunked", 7);
		}
		p = e + 1;
	}
	body = e == end ? end : e + 1;
	body_len = (size_t)(end - body);
	if (chunked) {
		if (dechunk(body, body_len, chunk, sizeof(chunk), &body_len))
			return -EBADMSG;
		body = chunk;
	}
	/* the first line with something on it */
	while (body_len && (*body == '\n' || *body == '\r' || *body == ' ')) {
		body++;
		body_len--;
	}
	line_end(body, body_len, &len);
	copy_printable(r->body_line, sizeof(r->body_line), body, len);
	return 0;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until the deadline. 0, -ETIMEDOUT, or -errno. */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		long long left = deadline - now_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* A connected socket to u, by the first of its addresses that answers. */
static int dial(const struct tc_http_url *u, long long deadline, char *why, size_t wsz)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai, *a;
	int fd = -1, err = -ECONNREFUSED, g;

	g = getaddrinfo(u->host, u->port, &hints, &ai);
	if (g) {
		snprintf(why, wsz, "cannot resolve '%s': %s", u->host, gai_strerror(g));
		return -EHOSTUNREACH;
	}
	for (a = ai; a; a = a->ai_next) {
		socklen_t sl = sizeof(int);
		int soerr = 0;

		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    a->ai_protocol);
		if (fd < 0) {
			err = -errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno != EINPROGRESS) {
			err = -errno;
		} else if ((err = wait_fd(fd, POLLOUT, deadline)) == 0) {
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
				soerr = errno;
			if (!soerr)
				break;
			err = -soerr;
		}
		close(fd);
		fd = -1;
		if (err == -ETIMEDOUT)
			break;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(why, wsz, "%s", err == -ETIMEDOUT ? "no connection within the timeout" :
			 strerror(-err));
	return fd >= 0 ? fd : err;
}

static int send_all(int fd, const char *p, size_t n, long long deadline)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int err = wait_fd(fd, POLLOUT, deadline);
			if (err)
				return err;
			continue;
		}
		return w < 0 ? -errno : -EIO;
	}
	return 0;
}

int tc_http_request(const struct tc_http_request *q, struct tc_http_response *r,
		    char *why, size_t wsz)
{
	long long deadline = now_ms() + (q->timeout_ms ? q->timeout_ms : 10000);
	struct tc_sb head = TC_SB_INIT;
	char *answer = NULL;
	size_t got = 0;
	int fd, err;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	why[0] = '\0';
	fd = dial(q->url, deadline, why, wsz);
	if (fd < 0)
		return fd;
	tc_sb_init(&head);
	/* a literal IPv6 address goes back into brackets in Host */
	tc_sb_addf(&head, "%s %s%s HTTP/1.1\r\nHost: %s%s%s:%s\r\nUser-Agent: tacho\r\n"
		   "Connection: close\r\nContent-Length: %zu\r\n", q->method, q->url->path,
		   q->target, strchr(q->url->host, ':') ? "[" : "", q->url->host,
		   strchr(q->url->host, ':') ? "]" : "", q->url->port, q->body_len);
	if (q->content_type)
		tc_sb_addf(&head, "Content-Type: %s\r\n", q->content_type);
	tc_sb_adds(&head, "\r\n");
	if (head.oom) {
		err = -ENOMEM;
		goto out;
	}
	err = send_all(fd, head.buf, head.len, deadline);
	if (!err && q->body_len)
		err = send_all(fd, q->body, q->body_len, deadline);
	if (err && err != -EPIPE && err != -ECONNRESET)
		goto out_said;
	/* a server that refuses the request may answer and close before taking the whole
	 * body: its answer says more than the broken pipe */
	answer = malloc(HTTP_MAX_ANSWER);
	if (!answer) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (got == HTTP_MAX_ANSWER)
			break;
		n = recv(fd, answer + got, HTTP_MAX_ANSWER - got, 0);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = wait_fd(fd, POLLIN, deadline);
			if (w) {
				if (!got) {
					err = w;
					goto out_said;
				}
				break;  /* a partial answer: parse what came */
			}
			continue;
		}
		if (!got) {
			err = err ? err : -errno;
			goto out_said;
		}
		break;
	}
	if (!got) {
		err = err ? err : -ECONNRESET;
		snprintf(why, wsz, "the server closed the connection without an answer");
		goto out;
	}
	err = tc_http_response_parse(answer, got, r);
	if (err)
		snprintf(why, wsz, "the server's answer is not HTTP/1.x");
	goto out;
out_said:
	snprintf(why, wsz, "%s", err == -ETIMEDOUT ? "no answer within the timeout" :
		 strerror(-err));
out:
	free(answer);
	tc_sb_exit(&head);
	close(fd);
	return err;
}
