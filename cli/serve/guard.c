/* guard.c - who may hold a connection to tacho serve, and for how long: a request
 * must arrive whole within a deadline and its answer be taken within another, a client
 * (an IPv4 address, an IPv6 /64) holds at most GUARD_PER_CLIENT connections and all of
 * them GUARD_MAX, and GUARD_RESERVE more places answer /metrics alone. At a limit, the
 * connection that has waited longest for its request gives its place to the new one:
 * slow or idle clients delay nobody but themselves, and a scrape gets in.
 *
 * libmicrohttpd times a connection out after a stretch of silence only, which a client
 * sending a header line every few seconds never gives, and at its connection limit it
 * stops accepting: 64 such clients held every place (issue 27). So serve runs
 * libmicrohttpd's loop on a thread of its own and the guard, on that thread, decides at
 * each accept and cuts (shutdown(2)) what is past its deadline; libmicrohttpd then
 * reads the end of the connection and closes it. Nothing here is shared with another
 * thread. */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "serve.h"

enum slot_state {
	SLOT_FREE,
	SLOT_WAITING,    /* for a request: since the connection, or since the last answer */
	SLOT_ANSWERING,  /* a request came: until its answer is taken */
	SLOT_CUT,        /* shut down by the guard; libmicrohttpd closes it soon */
};

struct slot {
	enum slot_state state;
	int fd;
	unsigned char client[16];
	bool reserve;        /* over the limits: /metrics only, a short deadline */
	double since;        /* when it began to wait (for its request) */
	double deadline;
};

struct serve_guard {
	struct slot slot[GUARD_SLOTS];
};

/* A client: an IPv4 address (as ::ffff:a.b.c.d, which is also how a dual-stack socket
 * sees it) or an IPv6 /64, which one host of IPv6 usually has to itself. */
static void client_key(const struct sockaddr *a, socklen_t len, unsigned char key[16])
{
	memset(key, 0, 16);
	if (a && a->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *v4 = (const void *)a;
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &v4->sin_addr, 4);
	} else if (a && a->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *v6 = (const void *)a;
		memcpy(key, &v6->sin6_addr, 16);
		if (!IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr))
			memset(key + 8, 0, 8);
	}
}

static void cut(struct slot *s)
{
	/* the descriptor stays libmicrohttpd's: it sees the end and closes it; the slot
	 * stays taken until then, so that the number is not reused under us */
	shutdown(s->fd, SHUT_RDWR);
	s->state = SLOT_CUT;
}

static bool live(const struct slot *s)
{
	return s->state == SLOT_WAITING || s->state == SLOT_ANSWERING;
}

/* Connections of client key (or of all, key NULL) not in the reserve, and in it. */
static void count(const struct serve_guard *g, const unsigned char *key, unsigned *normal,
		  unsigned *reserve)
{
	*normal = *reserve = 0;
	for (size_t i = 0; i < GUARD_SLOTS; i++) {
		const struct slot *s = &g->slot[i];
		if (!live(s) || (key && memcmp(s->client, key, 16)))
			continue;
		if (s->reserve)
			(*reserve)++;
		else
			(*normal)++;
	}
}

/* The connection of client key (NULL: of anyone) that has waited longest for its
 * request, or NULL. */
static struct slot *longest_waiting(struct serve_guard *g, const unsigned char *key)
{
	struct slot *best = NULL;

	for (size_t i = 0; i < GUARD_SLOTS; i++) {
		struct slot *s = &g->slot[i];
		if (s->state != SLOT_WAITING || (key && memcmp(s->client, key, 16)))
			continue;
		if (!best || s->since < best->since)
			best = s;
	}
	return best;
}

struct serve_guard *guard_new(void)
{
	return calloc(1, sizeof(struct serve_guard));
}

void guard_free(struct serve_guard *g)
{
	free(g);
}

/* Room for the client at both limits: a place given up by a connection still waiting
 * for its request, its own first. */
static bool make_room(struct serve_guard *g, const unsigned char *key)
{
	unsigned mine, mine_r, all, all_r;
	struct slot *s;

	count(g, key, &mine, &mine_r);
	if (mine + mine_r >= GUARD_PER_CLIENT) {
		s = longest_waiting(g, key);
		if (!s)
			return false;
		cut(s);
	}
	count(g, NULL, &all, &all_r);
	if (all >= GUARD_MAX) {
		s = longest_waiting(g, NULL);
		if (!s)
			return false;
		cut(s);
	}
	return true;
}

bool guard_admit(struct serve_guard *g, const struct sockaddr *a, socklen_t len)
{
	unsigned char key[16];
	unsigned all, all_r;

	client_key(a, len, key);
	if (make_room(g, key))
		return true;
	/* the client's places, or all of them, are answering: the reserve, for /metrics
	 * alone */
	count(g, NULL, &all, &all_r);
	return all_r < GUARD_RESERVE;
}

void *guard_started(struct serve_guard *g, int fd, const struct sockaddr *a, socklen_t len,
		    double now)
{
	unsigned char key[16];
	unsigned mine, mine_r, all, all_r;
	struct slot *s = NULL;

	for (size_t i = 0; i < GUARD_SLOTS && !s; i++)
		if (g->slot[i].state == SLOT_FREE)
			s = &g->slot[i];
	if (!s) {
		/* libmicrohttpd holds at most GUARD_SLOTS connections: not reached */
		shutdown(fd, SHUT_RDWR);
		return NULL;
	}
	client_key(a, len, key);
	/* guard_admit made room if it could: still at a limit, it is the reserve's */
	count(g, key, &mine, &mine_r);
	count(g, NULL, &all, &all_r);
	memset(s, 0, sizeof(*s));
	s->state = SLOT_WAITING;
	s->fd = fd;
	memcpy(s->client, key, 16);
	s->reserve = mine + mine_r >= GUARD_PER_CLIENT || all >= GUARD_MAX;
	s->since = now;
	s->deadline = now + (s->reserve ? GUARD_RESERVE_REQUEST_S : GUARD_REQUEST_S);
	return s;
}

void guard_closed(void *ctx)
{
	struct slot *s = ctx;

	if (s)
		s->state = SLOT_FREE;
}

bool guard_request(void *ctx, const char *url, double now)
{
	struct slot *s = ctx;

	if (!s)
		return true;
	if (s->state == SLOT_WAITING) {
		s->state = SLOT_ANSWERING;
		s->deadline = now + GUARD_ANSWER_S;
	}
	return !s->reserve || !strcmp(url, "/metrics");
}

void guard_answered(void *ctx, double now)
{
	struct slot *s = ctx;

	if (!s || s->state != SLOT_ANSWERING)
		return;
	/* kept alive: it waits for its next request as a new connection would */
	s->state = SLOT_WAITING;
	s->since = now;
	s->deadline = now + (s->reserve ? GUARD_RESERVE_REQUEST_S : GUARD_REQUEST_S);
}

double guard_sweep(struct serve_guard *g, double now)
{
	double next = INFINITY;

	for (size_t i = 0; i < GUARD_SLOTS; i++) {
		struct slot *s = &g->slot[i];
		if (!live(s))
			continue;
		if (s->deadline <= now)
			cut(s);
		else if (s->deadline < next)
			next = s->deadline;
	}
	return next;
}

void guard_extend(void *ctx, double until)
{
	struct slot *s = ctx;

	if (s && s->state == SLOT_ANSWERING && until > s->deadline)
		s->deadline = until;
}
