/* serve.h - what tacho serve's files (cli/serve/) share. */
#ifndef TACHO_CLI_SERVE_H
#define TACHO_CLI_SERVE_H

#include <stdbool.h>
#include <sys/socket.h>

/* The page at / (page.c). */
extern const char serve_page[];

/* --- who may hold a connection (guard.c) --- */

#define GUARD_MAX 64                /* connections in all, the reserve aside */
#define GUARD_PER_CLIENT 32         /* of one client: an IPv4 address, an IPv6 /64 */
#define GUARD_RESERVE 8             /* more places, when no connection waiting for its
				       request can make room: /metrics only */
#define GUARD_REQUEST_S 10.0        /* a request must arrive whole within this, from the
				       connection or from the previous answer */
#define GUARD_RESERVE_REQUEST_S 2.0 /* in a place of the reserve */
#define GUARD_ANSWER_S 30.0         /* its answer must be taken within this */
/* what libmicrohttpd may hold: the places, and the connections cut to make room
 * that it has not closed yet */
#define GUARD_SLOTS (GUARD_MAX + GUARD_RESERVE + 24)

/* The table of connections. Used by one thread, libmicrohttpd's loop. */
struct serve_guard;
struct serve_guard *guard_new(void);
void guard_free(struct serve_guard *g);

/* At an accept, before libmicrohttpd takes the connection: true when it may, having
 * cut (shut down) a connection still waiting for its request where a limit is
 * reached; false when every place and the reserve are answering. */
bool guard_admit(struct serve_guard *g, const struct sockaddr *a, socklen_t len);
/* The connection on socket fd was taken: its context for the calls below (NULL when
 * the table is full, which libmicrohttpd's own limit prevents: the socket is then shut
 * down). */
void *guard_started(struct serve_guard *g, int fd, const struct sockaddr *a, socklen_t len,
		    double now);
void guard_closed(void *ctx);
/* A request for url came whole: its answer is timed from now. False when a place of
 * the reserve asks for anything but /metrics. */
bool guard_request(void *ctx, const char *url, double now);
/* Its answer was taken: a kept-alive connection waits for its next request. */
void guard_answered(void *ctx, double now);
/* Cuts every connection past its deadline; the next deadline (INFINITY: none). */
double guard_sweep(struct serve_guard *g, double now);

#endif
