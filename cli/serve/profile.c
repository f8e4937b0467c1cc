/* profile.c - tacho serve's /debug/pprof/profile: a CPU profile of the machine (or of
 * one process) over the next N seconds, as go tool pprof and Parca's scrapers fetch it.
 * The library records it (tacho_record, system-wide or -p, into a temporary file) and
 * writes it as pprof (tacho_profile_write_pprof): this file only runs that on a thread
 * of its own, one profile at a time, so that the HTTP thread and /metrics never wait
 * on it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tacho.h"
#include "serve.h"

struct serve_prof {
	pthread_mutex_t mu;
	pthread_cond_t cv;                  /* the stopper's timed wait, and a stop */
	bool busy;                          /* a profile is being taken or not yet taken away */
	bool running;                       /* its thread has not been joined */
	bool done;                          /* its result is there */
	bool quit;                          /* end the recording now */
	bool closing;                       /* the server stops: no profile to write */
	pthread_t thread;
	unsigned seconds;
	pid_t pid;
	volatile int stop;                  /* tacho_record's stop flag */
	void (*ready)(void *arg, void *conn);
	void *arg, *conn;
	/* the result */
	char *body;
	size_t len;
	unsigned status;                    /* HTTP status: 200, or why not */
	char why[512];
};

/* s (at most 40 bytes of it) for a one-line message: bytes other than printable ASCII
 * as \xNN, so that a reason never spans lines. */
static const char *quoted(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; s[i] && i < 40 && n + 5 < size; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[n++] = (char)c;
		else
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
	}
	buf[n] = 0;
	return buf;
}

int prof_parse(const char *seconds, const char *pid, unsigned *secs, pid_t *out_pid,
	       char *why, size_t whysz)
{
	char q[200];
	unsigned long v;
	char *end;

	*secs = PROF_DEFAULT_S;
	*out_pid = 0;
	/* digits alone: strtoul would take blanks, a sign and wrap a minus around */
	if (seconds) {
		errno = 0;
		v = strtoul(seconds, &end, 10);
		if (!*seconds || seconds[strspn(seconds, "0123456789")] || errno || v < 1 ||
		    v > PROF_MAX_S) {
			snprintf(why, whysz, "bad seconds '%s': a whole number from 1 to %u",
				 quoted(seconds, q, sizeof(q)), PROF_MAX_S);
			return -1;
		}
		*secs = (unsigned)v;
	}
	if (pid) {
		errno = 0;
		v = strtoul(pid, &end, 10);
		if (!*pid || pid[strspn(pid, "0123456789")] || errno || v < 1 ||
		    v > (unsigned long)INT32_MAX) {
			snprintf(why, whysz, "bad pid '%s': a process number",
				 quoted(pid, q, sizeof(q)));
			return -1;
		}
		if (kill((pid_t)v, 0) && errno == ESRCH) {
			snprintf(why, whysz, "no process %lu", v);
			return -1;
		}
		*out_pid = (pid_t)v;
	}
	return 0;
}

struct serve_prof *prof_new(void)
{
	struct serve_prof *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	return p;
}

/* Sets the recording's stop flag when the seconds are over, or at once on quit. */
static void *stopper_main(void *arg)
{
	struct serve_prof *p = arg;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += p->seconds;
	pthread_mutex_lock(&p->mu);
	while (!p->quit && pthread_cond_timedwait(&p->cv, &p->mu, &until) != ETIMEDOUT)
		;
	p->stop = 1;
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void set_result(struct serve_prof *p, unsigned status, const char *fmt, const char *a,
		       const char *b)
{
	p->status = status;
	snprintf(p->why, sizeof(p->why), fmt, a, b ? b : "");
}

/* Records into a temporary file and turns it into pprof in memory. */
static void take(struct serve_prof *p)
{
	char path[] = "/tmp/tacho-serve-profile-XXXXXX";
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_record_opts o = { .sz = sizeof(o) };
	struct tacho_record_result res = { .sz = sizeof(res) };
	struct tacho_profile *prof = NULL;
	pthread_t stopper;
	const char *tmp;
	char file[4200];
	FILE *f;
	int fd, err;

	tmp = getenv("TMPDIR");
	if (tmp && *tmp)
		snprintf(file, sizeof(file), "%s/tacho-serve-profile-XXXXXX", tmp);
	else
		snprintf(file, sizeof(file), "%s", path);
	fd = mkstemp(file);
	if (fd < 0) {
		set_result(p, 500, "cannot make a temporary file: %s%s", strerror(errno), NULL);
		return;
	}
	close(fd);
	/* the default event: cycles where there is a core PMU, else cpu-clock */
	o.freq = PROF_HZ;
	o.callchain = true;
	o.output = file;
	o.pid = p->pid;
	o.system_wide = !p->pid;
	o.stop = &p->stop;
	if (pthread_create(&stopper, NULL, stopper_main, p)) {
		unlink(file);
		set_result(p, 500, "cannot start a thread%s%s", "", NULL);
		return;
	}
	err = tacho_record(&o, &res, &diag);
	pthread_mutex_lock(&p->mu);
	p->quit = true;   /* the stopper ends now, if the recording ended first */
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(stopper, NULL);
	if (err) {
		unlink(file);
		set_result(p, 500, "cannot record: %s%s", diag.message[0] ? diag.message :
			   tacho_strerror(err), NULL);
		return;
	}
	pthread_mutex_lock(&p->mu);
	if (p->closing) {
		pthread_mutex_unlock(&p->mu);
		unlink(file);
		set_result(p, 503, "tacho serve is stopping%s%s", "", NULL);
		return;
	}
	pthread_mutex_unlock(&p->mu);
	err = tacho_profile_load(file, &prof, &diag);
	unlink(file);
	if (err) {
		set_result(p, 500, "cannot read the recording: %s%s", diag.message[0] ?
			   diag.message : tacho_strerror(err), NULL);
		return;
	}
	f = open_memstream(&p->body, &p->len);
	err = f ? tacho_profile_write_pprof(prof, f) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	tacho_profile_free(prof);
	if (err) {
		free(p->body);
		p->body = NULL;
		set_result(p, 500, "cannot write the profile: %s%s", tacho_strerror(err), NULL);
		return;
	}
	p->status = 200;
}

static void *prof_main(void *arg)
{
	struct serve_prof *p = arg;

	take(p);
	pthread_mutex_lock(&p->mu);
	p->done = true;
	pthread_mutex_unlock(&p->mu);
	p->ready(p->arg, p->conn);
	return NULL;
}

int prof_start(struct serve_prof *p, unsigned seconds, pid_t pid,
	       void (*ready)(void *arg, void *conn), void *arg, void *conn)
{
	int err;

	pthread_mutex_lock(&p->mu);
	if (p->busy) {
		pthread_mutex_unlock(&p->mu);
		return -EBUSY;
	}
	/* the thread of the previous one has ended (its result was taken away) */
	if (p->running) {
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
		pthread_mutex_lock(&p->mu);
		p->running = false;
	}
	p->busy = true;
	p->done = p->quit = false;
	p->stop = 0;
	p->seconds = seconds;
	p->pid = pid;
	p->ready = ready;
	p->arg = arg;
	p->conn = conn;
	p->body = NULL;
	p->len = 0;
	p->status = 0;
	p->why[0] = 0;
	err = pthread_create(&p->thread, NULL, prof_main, p);
	if (err)
		p->busy = false;
	else
		p->running = true;
	pthread_mutex_unlock(&p->mu);
	return -err;
}

bool prof_take(struct serve_prof *p, char **body, size_t *len, unsigned *status, char *why,
	       size_t whysz)
{
	bool done;

	pthread_mutex_lock(&p->mu);
	done = p->busy && p->done;
	if (done) {
		*body = p->body;
		*len = p->len;
		*status = p->status;
		snprintf(why, whysz, "%s", p->why);
		p->body = NULL;
		p->busy = false;
	}
	pthread_mutex_unlock(&p->mu);
	return done;
}

void prof_quit(struct serve_prof *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->quit = p->closing = true;
	p->stop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void prof_wait(struct serve_prof *p)
{
	if (!p)
		return;
	prof_quit(p);
	if (p->running)
		pthread_join(p->thread, NULL);
	p->running = false;
}

void prof_free(struct serve_prof *p)
{
	if (!p)
		return;
	prof_wait(p);
	free(p->body);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
