/* serve.h - what tacho serve's files (cli/serve/) share. */
#ifndef TACHO_CLI_SERVE_H
#define TACHO_CLI_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

/* The page's files (page.c): the page at / and the uPlot it loads. */
struct serve_file {
	const char *path;      /* as requested: "/", "/uplot.min.css" */
	const char *type;      /* Content-Type */
	const char *data;      /* embedded in tacho, read-only, never freed */
	const char *end;       /* just past its last byte */
};
/* The file served at url, or NULL. Thread-safe (a constant table). */
const struct serve_file *serve_file_find(const char *url);

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

/* Gives the answering connection ctx until the time until (a profile's seconds and
 * the time to send it) instead of GUARD_ANSWER_S. */
void guard_extend(void *ctx, double until);

/* --- /debug/pprof/profile (profile.c) --- */

#define PROF_DEFAULT_S 30   /* go tool pprof's and net/http/pprof's default */
#define PROF_MAX_S 300
#define PROF_HZ 19          /* samples a second on each CPU, as Parca's agent: a prime,
			       so that they never keep step with a periodic timer */

/* The query's seconds and pid (either NULL: absent) checked: 0 and *secs (default
 * PROF_DEFAULT_S), *pid (0: the whole machine), or -1 with a one-line reason in why. */
int prof_parse(const char *seconds, const char *pid, unsigned *secs, pid_t *out_pid,
	       char *why, size_t whysz);

#define PROF_CGROUP_MAX 4096
/* The query's cgroup (NULL: absent, out ""): a cgroup v2 path under the hierarchy
 * ("/system.slice/cron.service", the leading '/' optional), checked against the
 * cgroup2 mount of mounts (NULL: /proc/self/mounts): 0 and the path in out (leading
 * '/', no trailing one, "/" for the root), or -1 with a one-line reason in why (no
 * cgroup v2, a ".." or "." part, no such cgroup). */
int prof_parse_cgroup(const char *cgroup, const char *mounts, char *out, size_t outsz,
		      char *why, size_t whysz);

#define PROF_EVENT_MAX 256
struct serve_prof;
/* The query's event (NULL: absent) checked against tacho's grammar: 0 and a copy in
 * out ("" when absent), or -1 with a one-line reason in why: the parser's, one event
 * only, and with the always-on sampler, none but the one it samples. */
int prof_parse_event(struct serve_prof *p, const char *event, char *out, size_t outsz,
		     char *why, size_t whysz);

/* --profile: the always-on sampler's options (0: the library's defaults) */
#define PROF_JOBS 4         /* answers made at once from the sampler's window */
#define PROF_WINDOW_S 60
#define PROF_MAX_MB 64
struct prof_always {
	unsigned freq;              /* samples a second on each CPU */
	unsigned window_s;
	uint64_t max_bytes;
};

/* Without a sampler, one profile at a time, each recorded over its seconds on a
 * thread of its own; with one (a, --profile), up to PROF_JOBS at once, each written
 * at once from the sampler's window on a thread of its own. */
struct serve_prof;
/* 0 and *out; with a, the sampler runs (its first sample taken) when it returns.
 * -errno with a one-line reason in why. */
int prof_new(const struct prof_always *a, struct serve_prof **out, char *why, size_t whysz);
/* Ends a recording under way and the sampler, waits for their threads, frees. NULL is
 * fine. */
void prof_free(struct serve_prof *p);
/* Whether the always-on sampler runs (--profile); its totals now (false: none). */
bool prof_always(const struct serve_prof *p);
struct tacho_sampler_stats;
bool prof_stats(struct serve_prof *p, struct tacho_sampler_stats *st);
/* The sampler's families for /metrics (tacho_metrics_opts.extra; arg: p). */
int prof_write_metrics(void *arg, FILE *out, bool om);
/* Starts a profile of seconds of samples of event ("": the default: cycles with a
 * core PMU, else cpu-clock; with the sampler, its event) of the machine, or pid, or
 * the processes of cgroup (prof_parse_cgroup's; "" or NULL: any): 0 and *job
 * (the handle for prof_take), -EBUSY while every place is taken (one without a
 * sampler: a profile under way or its result not taken), -ESHUTDOWN when the server
 * stops, or -errno. ready(arg, conn) is called on the profile's thread when the result
 * is there (conn: the connection that asked, kept for it: a refused one never reaches
 * ready). */
int prof_start(struct serve_prof *p, unsigned seconds, pid_t pid, const char *cgroup,
	       const char *event, void (*ready)(void *arg, void *conn), void *arg, void *conn, void **job);
/* Whether job is one of p's handles. */
bool prof_is_job(const struct serve_prof *p, const void *job);
/* The result of job, once ready: true, the body (gzipped pprof, the caller frees it;
 * NULL when status is not 200), the HTTP status and, when not 200, why; false before. */
bool prof_take(struct serve_prof *p, void *job, char **body, size_t *len, unsigned *status,
	       char *why, size_t whysz);
/* The server stops: ends a recording under way and the sampler now (a recording's
 * result, status 503, still comes). prof_wait then waits for the threads (ready has
 * been called for every profile started). */
void prof_quit(struct serve_prof *p);
void prof_wait(struct serve_prof *p);

#endif
