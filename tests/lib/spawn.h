/* spawn.h - what the tests of the live commands (top, serve, watch) need beyond
 * th_runv: a program running in the background with its output in files, waiting for
 * a line to appear, and a small HTTP client for loopback servers. */
#ifndef TACHO_TEST_SPAWN_H
#define TACHO_TEST_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

struct th_proc {
	pid_t pid;
	char out[4096], err[4096];   /* the files its stdout and stderr go to */
	int status;                  /* after th_proc_wait: as a shell says it */
	bool done;
};

/* Starts argv in the background, its stdin /dev/null, its stdout and stderr into
 * files of th_tmpdir() named after tag. Fails the test when it cannot. */
void th_spawn(struct th_proc *p, const char *tag, char *const argv[]);
/* Waits up to timeout_s for it to end: true (and p->status) when it did. */
bool th_proc_wait(struct th_proc *p, double timeout_s);
/* A cmocka teardown for each test that spawns: what it started and did not reap (a
 * failed assertion leaves the test on the spot) gets SIGTERM, then SIGKILL after 5 s,
 * and is reaped, so that no helper outlives its test and loads the next ones. */
int th_procs_teardown(void **state);
/* Sends sig (when still running). */
void th_proc_kill(struct th_proc *p, int sig);
/* Kills it (SIGKILL) if it still runs and reaps it: for teardown. */
void th_proc_end(struct th_proc *p);
/* The whole of a file, NUL-terminated ("" when it cannot be read); free() it. */
char *th_slurp(const char *path);
/* Waits up to timeout_s until the file holds needle at least count times. */
bool th_wait_for(const char *path, const char *needle, unsigned count, double timeout_s);
/* How many times needle occurs in s. */
unsigned th_count(const char *s, const char *needle);

/* GET path from 127.0.0.1:port (HTTP/1.0; accept may be NULL): the status code, and
 * the body in *body (free() it; may be NULL), or -1 when nothing answered. */
int th_http_get(int port, const char *path, const char *accept, char **body);

/* Spawns argv as p (named tag) and waits up to 15 s until GET path on 127.0.0.1:port
 * answers 200 (a server starting: tacho serve, Prometheus, a Pushgateway); fails the
 * test, naming what and with its standard error, when it ends first or never answers. */
void th_spawn_ready(struct th_proc *p, const char *tag, char *const argv[], int port,
		    const char *path, const char *what);
/* The value of a PromQL query's one sample as a Prometheus-compatible server on port
 * answers /api/v1/query (query URL-encoded), NAN when there is none. */
double th_prom_query(int port, const char *query);

double th_now(void);
/* A TCP port of the loopback address that nothing listens on now. */
int th_free_port(void);

#endif
