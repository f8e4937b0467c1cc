/* cmd-serve.c - `tacho serve`: the live sampler's counters over HTTP (libmicrohttpd):
 * /metrics for Prometheus (its text format, or OpenMetrics when the scraper asks for
 * it), /api/frame and /api/history as JSON, and at / a page that plots the rates.
 *
 * Counting runs on a thread of its own and publishes each frame as a snapshot; the HTTP
 * side (one thread running libmicrohttpd's loop, its connections held to deadlines and
 * limits by guard.c) answers from the latest snapshot and never waits on
 * counting. A snapshot renders each document once, on its first request, and every
 * answer is a copy of that text: a scraper costs a memcpy, whatever their number, and a
 * slow or dead client holds nothing but its own copy. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../live.h"
#include "serve.h"

#define GO_ON (-1)
#define DEFAULT_PORT "9475"
/* libmicrohttpd's own timeout, after this much silence: the guard's deadlines come
 * first, this is the backstop */
#define CONNECTION_TIMEOUT_S 10

enum { OPT_LISTEN = 256, OPT_ONCE, OPT_PROFILE, OPT_PROFILE_FREQ, OPT_PROFILE_WINDOW,
       OPT_PROFILE_MAX_MB };

static const char serve_usage[] =
	"usage: tacho serve [--listen <addr>:<port>] [-e <events>] [-d <seconds>] [--view <view>]\n"
	"                   [--profile [--profile-freq <hz>] [--profile-window <seconds>]\n"
	"                   [--profile-max-mb <MiB>]]\n"
	"                   [-k <n>] [-p <pid> | -G <cgroup>... | [--] <program> [<args>]]\n"
	"\n"
	"Counts events live, as tacho top does, and serves them over HTTP: /metrics for\n"
	"Prometheus (a counter per event with labels for the cpu, process or cgroup, and\n"
	"tacho's own health; OpenMetrics when the scraper asks for it), /api/frame and\n"
	"/api/history as JSON, at / a page that plots the rates, and at\n"
	"/debug/pprof/profile?seconds=N a CPU profile of the machine for go tool pprof:\n"
	"of the next N seconds, or with --profile at once, of the last N seconds, from a\n"
	"sampler that runs all the time at a low rate over a rolling window.\n"
	"It listens on the loopback address unless --listen names another one.\n"
	"\n";

static const struct cli_option serve_options[] = {
	{ OPT_LISTEN, 0, "listen", "<addr>:<port>",
	  "where to listen (default 127.0.0.1:" DEFAULT_PORT "); [::1]:9475,\n"
	  ":9475 (every address: only when you mean it)" },
	{ 'e', 'e', "event", "<events>",
	  "events to count (default: the software set of tacho top)" },
	{ 'd', 'd', "delay", "<seconds>", "the counting interval (default 1, at least 0.05)" },
	{ LIVE_OPT_VIEW, 0, "view", "<view>",
	  "machine, cpu, process (the default), thread or cgroup" },
	{ 'p', 'p', "pid", "<pid>", "this process alone" },
	{ 'G', 'G', "cgroup", "<cgroup>", "this cgroup (may be repeated): --view cgroup" },
	{ 'k', 'k', "max", "<n>", "follow at most n targets (default 32)" },
	{ OPT_PROFILE, 0, "profile", NULL,
	  "sample the machine all the time; /debug/pprof/profile answers\n"
	  "at once from the last seconds held" },
	{ OPT_PROFILE_FREQ, 0, "profile-freq", "<hz>",
	  "--profile's samples a second on each CPU (default 19)" },
	{ OPT_PROFILE_WINDOW, 0, "profile-window", "<seconds>",
	  "--profile's seconds held (default 60, 1 to 3600)" },
	{ OPT_PROFILE_MAX_MB, 0, "profile-max-mb", "<MiB>",
	  "--profile's memory cap (default 64, 1 to 65536)" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char serve_footer[] =
	"Stop it with Ctrl-C or SIGTERM. With -p or a program it ends when that ends.\n"
	"\n"
	"exit status: 0 (the program's status when one ran), 1 when it cannot count or\n"
	"listen, 2 for bad usage. docs/serve.md tells more, with a Prometheus scrape config.\n";

/* --- snapshots: a frame and the documents rendered from it --- */

enum { DOC_PROM, DOC_OPENMETRICS, DOC_FRAME, DOC_HISTORY, NDOCS };

struct snapshot {
	atomic_int refs;
	struct tacho_live_frame *frame;
	pthread_mutex_t mu;                 /* guards the renderings */
	char *doc[NDOCS];
	size_t len[NDOCS];
};

struct server {
	struct live_cli lc;
	const char *listen;
	pthread_mutex_t mu;                 /* guards cur and the scrape figures */
	struct snapshot *cur;
	double scrape_s;
	unsigned long long scrapes;
	pthread_t counter;
	bool counter_up;
	atomic_bool stop;
	int wake;                           /* eventfd: wakes the counting thread to stop */
	struct MHD_Daemon *d;
	struct serve_guard *guard;          /* the HTTP thread's */
	pthread_t http;
	int http_wake;                      /* eventfd: wakes the HTTP thread to stop */
	int count_err;
	char where[300];
	struct serve_prof *prof;            /* /debug/pprof/profile */
	bool always;                        /* --profile */
	struct prof_always pa;              /* its options */
	int prof_wake;                      /* eventfd: a profile is ready, run the loop (a
					       resumed connection wakes no epoll set of ours) */
};

static void snap_put(struct snapshot *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	for (int i = 0; i < NDOCS; i++)
		free(s->doc[i]);
	pthread_mutex_destroy(&s->mu);
	tacho_live_frame_put(s->frame);
	free(s);
}

static struct snapshot *snap_new(struct tacho_live_frame *f)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	atomic_init(&s->refs, 1);
	pthread_mutex_init(&s->mu, NULL);
	s->frame = f;
	return s;
}

/* The latest snapshot, with a reference for the caller. */
static struct snapshot *snap_current(struct server *sv)
{
	struct snapshot *s;

	pthread_mutex_lock(&sv->mu);
	s = sv->cur;
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&sv->mu);
	return s;
}

static void snap_publish(struct server *sv, struct snapshot *s)
{
	struct snapshot *old;

	pthread_mutex_lock(&sv->mu);
	old = sv->cur;
	sv->cur = s;
	pthread_mutex_unlock(&sv->mu);
	snap_put(old);
}

/* Document d of s, rendered at its first request. 0 or -errno. */
static int snap_doc(struct snapshot *s, int d)
{
	struct tacho_metrics_opts mo = { .sz = sizeof(mo), .parts = TACHO_METRICS_FRAME };
	struct tacho_write_opts wo;
	FILE *f;
	int err = 0;

	pthread_mutex_lock(&s->mu);
	if (s->doc[d])
		goto out;
	f = open_memstream(&s->doc[d], &s->len[d]);
	if (!f) {
		err = -errno;
		goto out;
	}
	cli_write_opts_init(&wo);
	wo.json_compact = true;
	switch (d) {
	case DOC_PROM:
	case DOC_OPENMETRICS:
		mo.format = d == DOC_OPENMETRICS ? TACHO_METRICS_OPENMETRICS : TACHO_METRICS_PROMETHEUS;
		err = tacho_live_frame_write_metrics(s->frame, f, &mo);
		break;
	case DOC_FRAME:
		err = tacho_live_frame_write(s->frame, f, TACHO_FORMAT_JSON, &wo);
		break;
	default:
		err = tacho_live_frame_write_history(s->frame, f, &wo);
		break;
	}
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		free(s->doc[d]);
		s->doc[d] = NULL;
	}
out:
	pthread_mutex_unlock(&s->mu);
	return err;
}

/* --- counting, on its own thread --- */

static void *count_main(void *arg)
{
	struct server *sv = arg;
	struct live_cli *lc = &sv->lc;
	double next = live_now() + lc->interval;

	while (!atomic_load(&sv->stop) && !cli_stop_sig) {
		struct tacho_live_frame *f;
		struct snapshot *s;
		int err;

		live_cli_wait(lc, next, sv->wake);
		if (atomic_load(&sv->stop) || cli_stop_sig)
			break;
		if (live_now() < next && !lc->child_done)
			continue;
		err = tacho_live_sample(lc->live, &f);
		if (err) {
			sv->count_err = err;
			break;
		}
		s = snap_new(f);
		if (!s) {
			tacho_live_frame_put(f);
			sv->count_err = -ENOMEM;
			break;
		}
		snap_publish(sv, s);
		if (lc->child_done)
			break;    /* the target ended: its last frame is published */
		next += lc->interval;
		if (next < live_now())
			next = live_now() + lc->interval;
	}
	/* tell the main thread (which waits for a signal) that counting is over */
	atomic_store(&sv->stop, true);
	kill(getpid(), SIGUSR1);
	return NULL;
}

/* --- HTTP --- */

/* libmicrohttpd, loaded when serve starts rather than linked: linked, it and the TLS
 * stack it brings (gnutls, nettle, gmp, p11-kit, ...) cost every tacho command about
 * 1.6 ms of start-up (bench/libcost.sh). libmicrohttpd.so.12 has been its soname since
 * 0.9.x, the ABI microhttpd.h describes. */
#define MHD_SONAME "libmicrohttpd.so.12"

static struct {
	struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t, MHD_AcceptPolicyCallback,
					   void *, MHD_AccessHandlerCallback, void *, ...);
	void (*stop_daemon)(struct MHD_Daemon *);
	struct MHD_Response *(*create_response_from_buffer)(size_t, void *,
							    enum MHD_ResponseMemoryMode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
	enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int,
					  struct MHD_Response *);
	void (*destroy_response)(struct MHD_Response *);
	const char *(*lookup_connection_value)(struct MHD_Connection *, enum MHD_ValueKind,
					       const char *);
	enum MHD_Result (*run)(struct MHD_Daemon *);
	enum MHD_Result (*get_timeout)(struct MHD_Daemon *, MHD_UNSIGNED_LONG_LONG *);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *,
							enum MHD_DaemonInfoType, ...);
	const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *,
								enum MHD_ConnectionInfoType, ...);
	void (*suspend_connection)(struct MHD_Connection *);
	void (*resume_connection)(struct MHD_Connection *);
} mhd;

/* 0, or -1 with the reason said (once, at start: no thread runs yet). */
static int mhd_load(void)
{
	void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		cli_error("cannot serve: %s cannot be loaded (%s); Debian: apt-get install "
			  "libmicrohttpd12", MHD_SONAME, dlerror());
		return -1;
	}
	/* the POSIX way of turning dlsym's object pointer into a function pointer */
	*(void **)&mhd.start_daemon = dlsym(h, "MHD_start_daemon");
	*(void **)&mhd.stop_daemon = dlsym(h, "MHD_stop_daemon");
	*(void **)&mhd.create_response_from_buffer = dlsym(h, "MHD_create_response_from_buffer");
	*(void **)&mhd.add_response_header = dlsym(h, "MHD_add_response_header");
	*(void **)&mhd.queue_response = dlsym(h, "MHD_queue_response");
	*(void **)&mhd.destroy_response = dlsym(h, "MHD_destroy_response");
	*(void **)&mhd.lookup_connection_value = dlsym(h, "MHD_lookup_connection_value");
	*(void **)&mhd.run = dlsym(h, "MHD_run");
	*(void **)&mhd.get_timeout = dlsym(h, "MHD_get_timeout");
	*(void **)&mhd.get_daemon_info = dlsym(h, "MHD_get_daemon_info");
	*(void **)&mhd.get_connection_info = dlsym(h, "MHD_get_connection_info");
	*(void **)&mhd.suspend_connection = dlsym(h, "MHD_suspend_connection");
	*(void **)&mhd.resume_connection = dlsym(h, "MHD_resume_connection");
	if (!mhd.start_daemon || !mhd.stop_daemon || !mhd.create_response_from_buffer ||
	    !mhd.add_response_header || !mhd.queue_response || !mhd.destroy_response ||
	    !mhd.lookup_connection_value || !mhd.run || !mhd.get_timeout ||
	    !mhd.get_daemon_info || !mhd.get_connection_info || !mhd.suspend_connection ||
	    !mhd.resume_connection) {
		cli_error("cannot serve: %s lacks libmicrohttpd's functions", MHD_SONAME);
		return -1;
	}
	return 0;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, const char *type,
			       char *body, size_t len, bool must_free)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(len, body, must_free ?
		MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r) {
		if (must_free)
			free(body);
		return MHD_NO;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	ret = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *msg)
{
	return respond(c, code, "text/plain; charset=utf-8", (char *)msg, strlen(msg), false);
}

/* A copy of document d of the current snapshot, with tail (may be NULL) after it. */
static enum MHD_Result send_doc(struct server *sv, struct MHD_Connection *c, int d,
				const char *type, const char *tail, size_t tail_len)
{
	struct snapshot *s = snap_current(sv);
	char *body;
	size_t len;

	if (!s)
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no frame yet\n");
	if (snap_doc(s, d)) {
		snap_put(s);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot write the document\n");
	}
	len = s->len[d] + tail_len;
	body = malloc(len ? len : 1);
	if (!body) {
		snap_put(s);
		return MHD_NO;
	}
	memcpy(body, s->doc[d], s->len[d]);
	if (tail_len)
		memcpy(body + s->len[d], tail, tail_len);
	snap_put(s);
	return respond(c, MHD_HTTP_OK, type, body, len, true);
}

static enum MHD_Result send_metrics(struct server *sv, struct MHD_Connection *c)
{
	const char *accept = mhd.lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	bool om = accept && strstr(accept, "application/openmetrics-text");
	struct tacho_metrics_opts mo = { .sz = sizeof(mo), .parts = TACHO_METRICS_SCRAPE };
	double t0 = live_now();
	enum MHD_Result ret;
	char *tail = NULL;
	size_t tail_len = 0;
	FILE *f;

	pthread_mutex_lock(&sv->mu);
	mo.scrape_s = sv->scrape_s;
	mo.scrapes = sv->scrapes;
	pthread_mutex_unlock(&sv->mu);
	mo.format = om ? TACHO_METRICS_OPENMETRICS : TACHO_METRICS_PROMETHEUS;
	if (prof_always(sv->prof)) {
		mo.extra = prof_write_metrics;
		mo.extra_arg = sv->prof;
	}
	f = open_memstream(&tail, &tail_len);
	if (!f)
		return MHD_NO;
	tacho_live_frame_write_metrics(NULL, f, &mo);
	if (fclose(f)) {
		free(tail);
		return MHD_NO;
	}
	ret = send_doc(sv, c, om ? DOC_OPENMETRICS : DOC_PROM,
		       om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
			  : "text/plain; version=0.0.4; charset=utf-8", tail, tail_len);
	free(tail);
	pthread_mutex_lock(&sv->mu);
	sv->scrape_s = live_now() - t0;
	sv->scrapes++;
	pthread_mutex_unlock(&sv->mu);
	return ret;
}

static const char pprof_index[] =
	"<!DOCTYPE html>\n<html><head><title>tacho serve: /debug/pprof/</title></head><body>\n"
	"<p><a href=\"profile?seconds=30\">profile</a>: a CPU profile of the whole machine "
	"(or of one process: <code>?pid=N</code>) over the next <code>?seconds=N</code> "
	"(default 30, 1 to 300), gzipped pprof, sampled 19 times a second on each CPU with "
	"user and kernel stacks, labels pid, tid and comm. One at a time. "
	"<code>go tool pprof http://HOST:PORT/debug/pprof/profile?seconds=10</code></p>\n"
	"</body></html>\n";

/* On the profile's thread: its result is there, the connection may go on. */
static void profile_ready(void *arg, void *conn)
{
	struct server *sv = arg;

	mhd.resume_connection(conn);
	if (eventfd_write(sv->prof_wake, 1))
		cli_warn("cannot wake the HTTP thread: %s", strerror(errno));
}

/* /debug/pprof/profile: the first call starts the profile and suspends the connection
 * (the HTTP thread goes on serving /metrics); the call after profile_ready resumed it
 * answers. */
static enum MHD_Result send_profile(struct server *sv, struct MHD_Connection *c, void *guard_ctx,
				    void **con_cls)
{
	char why[512], *body = NULL, event[PROF_EVENT_MAX];
	char cgroup[PROF_CGROUP_MAX];
	unsigned secs, status;
	void *job = NULL;
	size_t len;
	pid_t pid;
	int err;

	if (prof_is_job(sv->prof, *con_cls)) {
		struct MHD_Response *r;
		enum MHD_Result ret;
		if (!prof_take(sv->prof, *con_cls, &body, &len, &status, why, sizeof(why))) {
			mhd.suspend_connection(c);   /* not ready: wait on */
			return MHD_YES;
		}
		if (status != MHD_HTTP_OK) {
			char *msg = NULL;
			if (asprintf(&msg, "%s\n", why) < 0)
				return MHD_NO;
			return respond(c, status, "text/plain; charset=utf-8", msg, strlen(msg), true);
		}
		r = mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
		if (!r) {
			free(body);
			return MHD_NO;
		}
		mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
		mhd.add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
		mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
		ret = mhd.queue_response(c, MHD_HTTP_OK, r);
		mhd.destroy_response(r);
		return ret;
	}
	if (prof_parse(mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds"),
		       mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid"), &secs, &pid,
		       why, sizeof(why))) {
		char *msg = NULL;
		if (asprintf(&msg, "%s\n", why) < 0)
			return MHD_NO;
		return respond(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", msg,
			       strlen(msg), true);
	}
	if (prof_parse_event(sv->prof, mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND,
								  "event"),
			     event, sizeof(event), why, sizeof(why))) {
		char *msg = NULL;
		if (asprintf(&msg, "%s\n", why) < 0)
			return MHD_NO;
		return respond(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", msg,
			       strlen(msg), true);
	}
	if (prof_parse_cgroup(mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cgroup"),
			      NULL, cgroup, sizeof(cgroup), why, sizeof(why))) {
		char *msg = NULL;
		if (asprintf(&msg, "%s\n", why) < 0)
			return MHD_NO;
		return respond(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", msg,
			       strlen(msg), true);
	}
	err = prof_start(sv->prof, secs, pid, cgroup, event, profile_ready, sv, c, &job);
	if (err == -EBUSY && prof_always(sv->prof))
		return text(c, MHD_HTTP_TOO_MANY_REQUESTS,
			    "busy: " TC_STR(PROF_JOBS) " profiles are being written from the "
			    "window; try again when one ends\n");
	if (err == -EBUSY)
		return text(c, MHD_HTTP_TOO_MANY_REQUESTS,
			    "busy: another profile is being taken (one at a time); try again "
			    "when it ends\n");
	if (err)
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "cannot start a profile now\n");
	/* from the window: no seconds to wait, only the writing */
	guard_extend(guard_ctx, live_now() + (prof_always(sv->prof) ? 0 : secs) +
		     GUARD_ANSWER_S);
	*con_cls = job;
	mhd.suspend_connection(c);
	return MHD_YES;
}

/* /debug/pprof/symbol, which go tool pprof asks (a POST of addresses) for the
 * mappings of a fetched profile that have no function names: the profile holds every
 * name tacho could find, so there are none to add ("num_symbols: 0", and no address
 * answered). The addresses are read and dropped. */
static enum MHD_Result send_symbols(struct MHD_Connection *c, const char *method,
				    size_t *upload_size, void **con_cls)
{
	static char reading;   /* *con_cls while the POST's body comes */

	if (!strcmp(method, "POST") && *con_cls != &reading) {
		*con_cls = &reading;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "POST") && strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and POST\n");
	return text(c, MHD_HTTP_OK, "num_symbols: 0\n");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct server *sv = cls;
	const union MHD_ConnectionInfo *ci =
		mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const struct serve_file *file;

	(void)version;
	(void)upload;
	if (!guard_request(ci ? ci->socket_context : NULL, url, live_now()))
		return text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy: only /metrics now\n");
	if (!strcmp(url, "/debug/pprof/symbol"))
		return send_symbols(c, method, upload_size, con_cls);
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	/* no request body is read: a GET with one is refused at the first call */
	if (*upload_size)
		return MHD_NO;
	if (!strcmp(url, "/debug/pprof/profile"))
		return send_profile(sv, c, ci ? ci->socket_context : NULL, con_cls);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof"))
		return respond(c, MHD_HTTP_OK, "text/html; charset=utf-8", (char *)pprof_index,
			       strlen(pprof_index), false);
	if (!strcmp(url, "/metrics"))
		return send_metrics(sv, c);
	if (!strcmp(url, "/api/frame"))
		return send_doc(sv, c, DOC_FRAME, "application/json", NULL, 0);
	if (!strcmp(url, "/api/history"))
		return send_doc(sv, c, DOC_HISTORY, "application/json", NULL, 0);
	if ((file = serve_file_find(url)))
		return respond(c, MHD_HTTP_OK, file->type, (char *)file->data,
			       (size_t)(file->end - file->data), false);
	return text(c, MHD_HTTP_NOT_FOUND, "not found: /, /metrics, /api/frame, /api/history, "
		    "/debug/pprof/\n");
}

/* The guard's hooks, on the HTTP thread (libmicrohttpd calls them from MHD_run). */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *a, socklen_t len)
{
	struct server *sv = cls;

	return guard_admit(sv->guard, a, len) ? MHD_YES : MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct server *sv = cls;
	const union MHD_ConnectionInfo *fd, *addr;
	socklen_t len = 0;

	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		guard_closed(*ctx);
		*ctx = NULL;
		return;
	}
	fd = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = mhd.get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!fd)
		return;
	if (addr && addr->client_addr)
		len = addr->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		      sizeof(struct sockaddr_in);
	*ctx = guard_started(sv->guard, fd->connect_fd, addr ? addr->client_addr : NULL, len,
			     live_now());
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode why)
{
	const union MHD_ConnectionInfo *ci =
		mhd.get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	(void)cls;
	(void)req;
	(void)why;
	guard_answered(ci ? ci->socket_context : NULL, live_now());
}

/* libmicrohttpd's loop, with the guard's deadlines: waits for its epoll set, the next
 * deadline or the stop, runs it, then cuts what is overdue. */
static void *http_main(void *arg)
{
	struct server *sv = arg;
	const union MHD_DaemonInfo *di = mhd.get_daemon_info(sv->d, MHD_DAEMON_INFO_EPOLL_FD);
	struct pollfd p[3] = { { .fd = di ? di->epoll_fd : -1, .events = POLLIN },
			       { .fd = sv->http_wake, .events = POLLIN },
			       { .fd = sv->prof_wake, .events = POLLIN } };
	double next = INFINITY;

	for (;;) {
		MHD_UNSIGNED_LONG_LONG mt;
		int timeout = -1;

		if (mhd.get_timeout(sv->d, &mt) == MHD_YES)
			timeout = mt > INT_MAX ? INT_MAX : (int)mt;
		if (isfinite(next)) {
			double ms = ceil((next - live_now()) * 1e3);
			int t = ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : (int)ms;
			if (timeout < 0 || t < timeout)
				timeout = t;
		}
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[2].revents) {
			eventfd_t v;
			eventfd_read(sv->prof_wake, &v);
		}
		mhd.run(sv->d);
		next = guard_sweep(sv->guard, live_now());
	}
	return NULL;
}

/* --- the listening socket --- */

/* Whether a bound address is this machine's loopback: 127.0.0.0/8, ::1, or
 * ::ffff:127.x.x.x. */
static bool loopback(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr) >> 24) ==
		       127;
	if (a->sa_family == AF_INET6) {
		const struct in6_addr *v6 = &((const struct sockaddr_in6 *)(const void *)a)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(v6) || (IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127);
	}
	return false;
}

/* A socket bound to a, listening: 0 and *fd, or -errno. An IPv6 wildcard takes IPv4
 * too (IPV6_V6ONLY off, whatever net.ipv6.bindv6only says). */
static int listen_on(const struct sockaddr *a, socklen_t len, int *fd)
{
	int s = socket(a->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, zero = 0, err;

	if (s < 0)
		return -errno;
	if (setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (a->sa_family == AF_INET6 &&
	     IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr) &&
	     setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero))) ||
	    bind(s, a, len) || listen(s, 64)) {
		err = -errno;
		close(s);
		return err;
	}
	*fd = s;
	return 0;
}

/* "ADDR:PORT", "[V6]:PORT", ":PORT" (every address, IPv6 and IPv4) or "PORT"
 * (loopback). 0 and a bound, listening socket in *fd; EXIT_USAGE for a bad address
 * (said); EXIT_FAIL when it cannot listen (said). A bind beyond loopback is told once:
 * the counters say what runs on the machine. */
static int open_listener(struct server *sv, int *fd)
{
	const char *spec = sv->listen ? sv->listen : "127.0.0.1:" DEFAULT_PORT;
	char host[256], port[16];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST };
	struct addrinfo *ai = NULL;
	struct sockaddr_storage any;
	const struct sockaddr *a;
	const char *colon = strrchr(spec, ':'), *h = spec;
	size_t hl;
	uint64_t pn;
	int err;

	if (!colon) {
		h = "127.0.0.1";
		hl = strlen(h);
		colon = spec - 1;
	} else {
		hl = (size_t)(colon - spec);
	}
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port) ||
	    tc_parse_u64(colon + 1, &pn) || pn == 0 || pn > 65535)
		return cli_usage_error(&cmd_serve, "bad --listen '%s' (ADDR:PORT, [V6]:PORT, "
				       ":PORT or PORT)", spec);
	memcpy(host, h, hl);
	host[hl] = '\0';
	snprintf(port, sizeof(port), "%s", colon + 1);
	memset(&any, 0, sizeof(any));
	if (!hl) {
		/* every address: IPv6's wildcard takes IPv4 as well (getaddrinfo's first
		 * answer for no host was 0.0.0.0, IPv4 only) */
		struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&any;
		v6->sin6_family = AF_INET6;
		v6->sin6_addr = in6addr_any;
		v6->sin6_port = htons((uint16_t)pn);
		err = listen_on((struct sockaddr *)v6, sizeof(*v6), fd);
		if (err == -EAFNOSUPPORT) {
			/* a kernel without IPv6: IPv4's every address */
			struct sockaddr_in *v4 = (struct sockaddr_in *)&any;
			memset(&any, 0, sizeof(any));
			v4->sin_family = AF_INET;
			v4->sin_addr.s_addr = htonl(INADDR_ANY);
			v4->sin_port = htons((uint16_t)pn);
			err = listen_on((struct sockaddr *)v4, sizeof(*v4), fd);
		}
		a = (const struct sockaddr *)&any;
	} else {
		err = getaddrinfo(host, port, &hints, &ai);
		if (err)
			return cli_usage_error(&cmd_serve, "bad --listen address '%s': %s", spec,
					       gai_strerror(err));
		a = ai->ai_addr;
		err = listen_on(a, ai->ai_addrlen, fd);
	}
	if (err) {
		cli_error("cannot listen on %s: %s", spec, strerror(-err));
		freeaddrinfo(ai);
		return EXIT_FAIL;
	}
	snprintf(sv->where, sizeof(sv->where), "%s%s%s:%s", a->sa_family == AF_INET6 ? "[" : "",
		 hl ? host : (a->sa_family == AF_INET6 ? "::" : "0.0.0.0"),
		 a->sa_family == AF_INET6 ? "]" : "", port);
	if (!loopback(a))
		cli_warn("serving on %s, beyond this machine: whoever can reach it reads the "
			 "counters (which processes run, their names and what they do); "
			 "--listen 127.0.0.1:%s keeps them here", sv->where, port);
	freeaddrinfo(ai);
	return 0;
}

/* --profile-freq, --profile-window, --profile-max-mb: 0, or EXIT_USAGE (said). */
static int profile_option(struct server *sv, int opt, const char *arg)
{
	static const struct { int opt; const char *name; uint64_t max; } lim[] = {
		{ OPT_PROFILE_FREQ, "--profile-freq", 10000 },
		{ OPT_PROFILE_WINDOW, "--profile-window", 3600 },
		{ OPT_PROFILE_MAX_MB, "--profile-max-mb", 65536 },
	};
	uint64_t v;

	for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		if (lim[i].opt != opt)
			continue;
		if (tc_parse_u64(arg, &v) || v < 1 || v > lim[i].max)
			return cli_usage_error(&cmd_serve, "bad %s '%s': a whole number from 1 "
					       "to %" PRIu64, lim[i].name, arg, lim[i].max);
		if (opt == OPT_PROFILE_FREQ)
			sv->pa.freq = (unsigned)v;
		else if (opt == OPT_PROFILE_WINDOW)
			sv->pa.window_s = (unsigned)v;
		else
			sv->pa.max_bytes = v << 20;
	}
	return 0;
}

static int serve_parse(struct server *sv, int argc, char **argv)
{
	struct cli_args args;
	int opt, k;

	cli_args_init(&args, &cmd_serve, argc, argv);
	while ((opt = cli_args_next(&args)) > 0) {
		k = live_cli_option(&sv->lc, opt, optarg);
		if (k == 1)
			continue;
		if (k)
			return k;
		if (opt == OPT_LISTEN)
			sv->listen = optarg;
		else if (opt == OPT_PROFILE)
			sv->always = true;
		else if (opt == OPT_PROFILE_FREQ || opt == OPT_PROFILE_WINDOW ||
			 opt == OPT_PROFILE_MAX_MB) {
			k = profile_option(sv, opt, optarg);
			if (k)
				return k;
		}
	}
	if (opt >= 0 && !sv->always && (sv->pa.freq || sv->pa.window_s || sv->pa.max_bytes))
		return cli_usage_error(&cmd_serve, "--profile-freq, --profile-window and "
				       "--profile-max-mb go with --profile");
	if (opt < 0)
		return args.exit;
	return GO_ON;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* libmicrohttpd on the listening socket, with epoll run by our thread (http_main)
 * rather than its own, so that the guard's deadlines are kept; no error log: under a
 * flood it would write a line per connection refused. The daemon, or NULL (said). */
static struct MHD_Daemon *http_start(struct server *sv, int lfd)
{
	int err;

	sv->guard = guard_new();
	sv->http_wake = eventfd(0, EFD_CLOEXEC);
	sv->prof_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!sv->guard || sv->http_wake < 0 || sv->prof_wake < 0) {
		cli_error("cannot serve: %s", strerror(sv->guard ? errno : ENOMEM));
		return NULL;
	}
	{
		char why[512];
		if (prof_new(sv->always ? &sv->pa : NULL, &sv->prof, why, sizeof(why))) {
			cli_error("cannot serve: %s", why);
			return NULL;
		}
	}
	/* suspend and resume: a profile's connection waits while the loop goes on */
	sv->d = mhd.start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, on_accept, sv,
				 on_request, sv,
				 MHD_OPTION_LISTEN_SOCKET, lfd,
				 MHD_OPTION_CONNECTION_LIMIT, (unsigned)GUARD_SLOTS,
				 MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_S,
				 MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
				 MHD_OPTION_NOTIFY_CONNECTION, on_connection, sv,
				 MHD_OPTION_NOTIFY_COMPLETED, on_completed, sv,
				 MHD_OPTION_END);
	if (!sv->d) {
		cli_error("cannot serve on %s: libmicrohttpd would not start", sv->where);
		return NULL;
	}
	err = pthread_create(&sv->http, NULL, http_main, sv);
	if (err) {
		mhd.stop_daemon(sv->d);
		sv->d = NULL;
		cli_error("cannot serve: %s", strerror(err));
	}
	return sv->d;
}

/* Ends the HTTP thread (libmicrohttpd then stops from this one). */
static void http_stop(struct server *sv)
{
	if (eventfd_write(sv->http_wake, 1))
		cli_warn("cannot wake the HTTP thread: %s", strerror(errno));
	pthread_join(sv->http, NULL);
}

static int serve_run(struct server *sv, int lfd)
{
	struct live_cli *lc = &sv->lc;
	struct MHD_Daemon *d;
	struct tacho_live_frame *f;
	struct sigaction sa = { .sa_handler = on_usr1 }, old_usr1;
	sigset_t block, wait_mask;
	int err;

	if (mhd_load()) {
		close(lfd);
		return EXIT_FAIL;
	}
	/* the first frame is there before the first request: the baseline */
	err = tacho_live_sample(lc->live, &f);
	if (err) {
		cli_error("cannot count: %s", tacho_strerror(err));
		close(lfd);
		return EXIT_FAIL;
	}
	sv->cur = snap_new(f);
	if (!sv->cur) {
		tacho_live_frame_put(f);
		close(lfd);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	/* SIGUSR1 from the counting thread ends the wait below; every thread but this
	 * one blocks the stop signals, so that they wake this one */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGUSR1);
	sigaction(SIGUSR1, &sa, &old_usr1);
	pthread_sigmask(SIG_BLOCK, &block, &wait_mask);
	d = http_start(sv, lfd);
	if (!d) {
		pthread_sigmask(SIG_SETMASK, &wait_mask, NULL);
		sigaction(SIGUSR1, &old_usr1, NULL);
		close(lfd);
		return EXIT_FAIL;
	}
	err = -pthread_create(&sv->counter, NULL, count_main, sv);
	if (err) {
		http_stop(sv);
		mhd.stop_daemon(d);
		prof_free(sv->prof);
		sv->prof = NULL;
		close(lfd);
		pthread_sigmask(SIG_SETMASK, &wait_mask, NULL);
		sigaction(SIGUSR1, &old_usr1, NULL);
		cli_error("cannot start counting: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}
	sv->counter_up = true;
	fprintf(stderr, "tacho serve: http://%s/ (metrics at /metrics), counting %s every %g s\n",
		sv->where, live_cli_target(lc, (char[128]){ 0 }, 128), lc->interval);
	if (lc->note[0])
		cli_warn("%s", lc->note);
	if (sv->always) {
		struct tacho_sampler_stats st = { .sz = sizeof(st) };
		prof_stats(sv->prof, &st);
		fprintf(stderr, "tacho serve: profiling every CPU all the time: %s, %u Hz, the "
			"last %u s held in at most %" PRIu64 " MiB\n", st.event,
			sv->pa.freq ? sv->pa.freq : PROF_HZ,
			sv->pa.window_s ? sv->pa.window_s : PROF_WINDOW_S,
			(sv->pa.max_bytes ? sv->pa.max_bytes : (uint64_t)PROF_MAX_MB << 20) >> 20);
	}
	/* this thread waits for a stop signal, or for counting to end */
	while (!cli_stop_sig && !atomic_load(&sv->stop))
		sigsuspend(&wait_mask);
	atomic_store(&sv->stop, true);
	if (eventfd_write(sv->wake, 1))
		cli_warn("cannot wake the counting thread: %s", strerror(errno));
	pthread_join(sv->counter, NULL);
	sv->counter_up = false;
	/* a profile under way ends now and resumes its connection, which a last run of
	 * the loop answers, before the daemon stops (libmicrohttpd aborts when it is
	 * stopped with a connection still suspended) */
	prof_wait(sv->prof);
	http_stop(sv);
	mhd.run(d);
	mhd.stop_daemon(d);
	prof_free(sv->prof);
	sv->prof = NULL;
	close(lfd);
	pthread_sigmask(SIG_SETMASK, &wait_mask, NULL);
	sigaction(SIGUSR1, &old_usr1, NULL);
	if (sv->count_err) {
		cli_error("cannot count: %s", tacho_strerror(sv->count_err));
		return EXIT_FAIL;
	}
	live_cli_reap(lc);
	return GO_ON;
}

static int cmd_serve_fn(int argc, char **argv)
{
	struct server sv;
	struct cli_signals saved;
	int ret, lfd = -1;

	memset(&sv, 0, sizeof(sv));
	sv.http_wake = sv.prof_wake = -1;
	live_cli_init(&sv.lc, &cmd_serve);
	pthread_mutex_init(&sv.mu, NULL);
	sv.wake = eventfd(0, EFD_CLOEXEC);
	if (sv.wake < 0) {
		cli_error("cannot make an eventfd: %s", strerror(errno));
		live_cli_exit(&sv.lc);
		return EXIT_FAIL;
	}
	ret = serve_parse(&sv, argc, argv);
	/* the address before anything is started: a port in use is told at once */
	if (ret == GO_ON) {
		int k = open_listener(&sv, &lfd);
		if (k)
			ret = k;
	}
	if (ret == GO_ON)
		ret = live_cli_start(&sv.lc, argc, argv);
	if (ret == GO_ON) {
		cli_stop_signals_catch(&saved);
		ret = serve_run(&sv, lfd);
		lfd = -1;
		cli_stop_signals_restore(&saved);
	}
	if (lfd >= 0)
		close(lfd);
	if (ret == GO_ON)
		ret = live_cli_status(&sv.lc);
	snap_put(sv.cur);
	close(sv.wake);
	if (sv.http_wake >= 0)
		close(sv.http_wake);
	if (sv.prof_wake >= 0)
		close(sv.prof_wake);
	guard_free(sv.guard);
	prof_free(sv.prof);
	pthread_mutex_destroy(&sv.mu);
	live_cli_exit(&sv.lc);
	return ret;
}

const struct cli_cmd cmd_serve = {
	.name = "serve",
	.fn = cmd_serve_fn,
	.summary = "the live counters over HTTP: Prometheus metrics and a page that plots them",
	.usage = serve_usage,
	.options = serve_options,
	.help_col = 30,
	.stop_at_operand = true,
	.footer = serve_footer,
};
