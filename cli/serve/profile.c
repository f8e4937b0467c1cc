/* profile.c - tacho serve's /debug/pprof/profile: a CPU profile of the machine (or of
 * one process), as go tool pprof and Parca's scrapers fetch it. Without --profile, over
 * the next N seconds: the library records it (tacho_record, system-wide or -p, into a
 * temporary file) and writes it as pprof (tacho_profile_write_pprof), one profile at a
 * time. With --profile, over the last N seconds, at once: one always-on sampler
 * (tacho_sampler_run, on a thread of its own) holds a rolling window, and each request
 * is written from it (tacho_sampler_write_pprof), several at once. Either way the
 * work runs on threads of this file, so that the HTTP thread and /metrics never wait
 * on it. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tacho.h"
#include "serve.h"

/* One answer being made: its thread, its request and its result. */
struct prof_job {
	struct serve_prof *p;
	bool busy;                          /* taken, its result not yet taken away */
	bool running;                       /* its thread has not been joined */
	bool done;                          /* its result is there */
	pthread_t thread;
	unsigned seconds;
	pid_t pid;
	char cgroup[PROF_CGROUP_MAX];       /* ?cgroup=, checked; empty: any */
	char event[PROF_EVENT_MAX];         /* ?event=; empty: the default */
	void (*ready)(void *arg, void *conn);
	void *arg, *conn;
	/* the result */
	char *body;
	size_t len;
	unsigned status;                    /* HTTP status: 200, or why not */
	char why[512];
};

struct serve_prof {
	pthread_mutex_t mu;
	pthread_cond_t cv;                  /* the stopper's timed wait, and a stop */
	bool quit;                          /* end the recording now */
	bool closing;                       /* the server stops: no profile to write */
	volatile int stop;                  /* tacho_record's stop flag */
	struct prof_job job[PROF_JOBS];     /* without a sampler: job[0] alone */
	/* --profile */
	struct tacho_sampler *sampler;
	pthread_t sthread;
	bool sampler_up;                    /* its thread has not been joined */
	bool sampler_ended;
	volatile int sstop;
	int serr;                           /* tacho_sampler_run's error */
	char serr_msg[400];
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

/* The mount point of the cgroup2 file system in the mount table at path, its octal
 * escapes (\040) undone, into buf: true, or false when none is mounted or the table
 * cannot be read. */
static bool cgroup2_mount(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	char line[8192];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char dev[4096], dir[4096], type[256];
		size_t n = 0;
		if (sscanf(line, "%4095s %4095s %255s", dev, dir, type) != 3 ||
		    strcmp(type, "cgroup2"))
			continue;
		for (const char *c = dir; *c && n + 1 < size; c++) {
			if (c[0] == '\\' && c[1] >= '0' && c[1] <= '3' && c[2] >= '0' && c[2] <= '7' &&
			    c[3] >= '0' && c[3] <= '7') {
				buf[n++] = (char)((c[1] - '0') << 6 | (c[2] - '0') << 3 | (c[3] - '0'));
				c += 3;
			} else {
				buf[n++] = *c;
			}
		}
		buf[n] = 0;
		found = true;
	}
	fclose(f);
	return found;
}

int prof_parse_cgroup(const char *cgroup, const char *mounts, char *out, size_t outsz,
		      char *why, size_t whysz)
{
	char q[200], mnt[4096], dir[8300];
	struct stat st;
	size_t n = 0;

	out[0] = 0;
	if (!cgroup)
		return 0;
	if (!*cgroup || strlen(cgroup) >= outsz - 1) {
		snprintf(why, whysz, "bad cgroup '%s': a cgroup v2 path such as "
			 "/system.slice/cron.service, at most %zu bytes",
			 quoted(cgroup, q, sizeof(q)), outsz - 2);
		return -1;
	}
	/* its parts, each once '/': no "." or "..", which would name another cgroup or
	 * leave the hierarchy */
	for (const char *c = cgroup; *c;) {
		size_t len = strcspn(c, "/");
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.')) {
			snprintf(why, whysz, "bad cgroup '%s': a path inside the cgroup v2 "
				 "hierarchy, without '.' or '..' parts",
				 quoted(cgroup, q, sizeof(q)));
			return -1;
		}
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f) {
				snprintf(why, whysz, "bad cgroup '%s': a control byte in the path",
					 quoted(cgroup, q, sizeof(q)));
				return -1;
			}
		if (len) {
			out[n++] = '/';
			memcpy(out + n, c, len);
			n += len;
		}
		c += len;
		while (*c == '/')
			c++;
	}
	if (!n)
		out[n++] = '/';
	out[n] = 0;
	if (!mounts)
		mounts = "/proc/self/mounts";
	if (!cgroup2_mount(mounts, mnt, sizeof(mnt))) {
		snprintf(why, whysz, "no cgroup v2 hierarchy is mounted (%s names no cgroup2): "
			 "?cgroup= takes a cgroup v2 path", mounts);
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s%s", mnt, out);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, whysz, "no cgroup '%s' in the cgroup v2 hierarchy at %s",
			 quoted(out, q, sizeof(q)), mnt);
		return -1;
	}
	return 0;
}

int prof_parse_event(struct serve_prof *p, const char *event, char *out, size_t outsz,
		     char *why, size_t whysz)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_sampler_stats st = { .sz = sizeof(st) };
	struct tacho_evlist *list = NULL;
	char q[200];
	int err;

	out[0] = 0;
	if (!event)
		return 0;
	if (!*event || strlen(event) >= outsz) {
		snprintf(why, whysz, "bad event '%s': an event of tacho's grammar, at most %zu "
			 "bytes", quoted(event, q, sizeof(q)), outsz - 1);
		return -1;
	}
	err = tacho_evlist_parse(event, &list, &diag);
	if (err) {
		snprintf(why, whysz, "bad event '%s': %s", quoted(event, q, sizeof(q)),
			 diag.message[0] ? diag.message : tacho_strerror(err));
		return -1;
	}
	if (tacho_evlist_count(list) != 1) {
		snprintf(why, whysz, "bad event '%s': one event, not %zu",
			 quoted(event, q, sizeof(q)), tacho_evlist_count(list));
		tacho_evlist_free(list);
		return -1;
	}
	snprintf(out, outsz, "%s", event);
	/* the always-on sampler samples one event: a request names it or none */
	if (p->sampler && tacho_sampler_stats(p->sampler, &st) == 0 &&
	    strcmp(tacho_evlist_name(list, 0), st.event)) {
		snprintf(why, whysz, "the always-on sampler (--profile) samples %s, not '%s': "
			 "leave event out, or name %s", st.event, quoted(event, q, sizeof(q)),
			 st.event);
		tacho_evlist_free(list);
		return -1;
	}
	tacho_evlist_free(list);
	return 0;
}

/* The always-on sampler's thread. */
static void *sampler_main(void *arg)
{
	struct serve_prof *p = arg;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err = tacho_sampler_run(p->sampler, &p->sstop, &diag);

	pthread_mutex_lock(&p->mu);
	p->serr = err;
	if (err)
		snprintf(p->serr_msg, sizeof(p->serr_msg), "%s",
			 diag.message[0] ? diag.message : tacho_strerror(err));
	p->sampler_ended = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Starts the sampler and waits until it samples (its event is known) or failed. */
static int start_sampler(struct serve_prof *p, const struct prof_always *a, char *why,
			 size_t whysz)
{
	struct tacho_sampler_opts so = { .sz = sizeof(so), .freq = a->freq,
					 .window_s = a->window_s, .max_bytes = a->max_bytes };
	struct tacho_sampler_stats st = { .sz = sizeof(st) };
	int err = tacho_sampler_new(&so, &p->sampler);

	if (err) {
		snprintf(why, whysz, "cannot make the sampler: %s", tacho_strerror(err));
		return err;
	}
	err = pthread_create(&p->sthread, NULL, sampler_main, p);
	if (err) {
		snprintf(why, whysz, "cannot start the sampler's thread: %s", strerror(err));
		return -err;
	}
	p->sampler_up = true;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct timespec until;
		tacho_sampler_stats(p->sampler, &st);
		if (st.event[0] || p->sampler_ended)
			break;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 20000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&p->cv, &p->mu, &until);
	}
	if (p->sampler_ended) {
		err = p->serr ? p->serr : -EIO;
		snprintf(why, whysz, "cannot sample: %s", p->serr ? p->serr_msg :
			 "the sampler ended at once");
	}
	pthread_mutex_unlock(&p->mu);
	return err;
}

int prof_new(const struct prof_always *a, struct serve_prof **out, char *why, size_t whysz)
{
	struct serve_prof *p = calloc(1, sizeof(*p));
	int err;

	*out = NULL;
	if (!p) {
		snprintf(why, whysz, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (size_t i = 0; i < PROF_JOBS; i++)
		p->job[i].p = p;
	if (a) {
		err = start_sampler(p, a, why, whysz);
		if (err) {
			prof_free(p);
			return err;
		}
	}
	*out = p;
	return 0;
}

bool prof_always(const struct serve_prof *p)
{
	return p && p->sampler;
}

bool prof_stats(struct serve_prof *p, struct tacho_sampler_stats *st)
{
	return p && p->sampler && tacho_sampler_stats(p->sampler, st) == 0;
}

int prof_write_metrics(void *arg, FILE *out, bool om)
{
	struct serve_prof *p = arg;

	return tacho_sampler_write_metrics(p->sampler, out, om);
}

/* Sets the recording's stop flag when the seconds are over, or at once on quit. */
static void *stopper_main(void *arg)
{
	struct prof_job *j = arg;
	struct serve_prof *p = j->p;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += j->seconds;
	pthread_mutex_lock(&p->mu);
	while (!p->quit && pthread_cond_timedwait(&p->cv, &p->mu, &until) != ETIMEDOUT)
		;
	p->stop = 1;
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void set_result(struct prof_job *j, unsigned status, const char *fmt, const char *a,
		       const char *b)
{
	j->status = status;
	snprintf(j->why, sizeof(j->why), fmt, a, b ? b : "");
}

/* --profile: the last seconds, from the sampler's window. */
static void take_held(struct prof_job *j)
{
	struct serve_prof *p = j->p;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_profile_filter filt = { .sz = sizeof(filt), .cgroups = j->cgroup };
	struct tacho_profile *prof = NULL;
	FILE *f;
	int err;

	err = tacho_sampler_profile(p->sampler, j->seconds, j->pid, &prof, &diag);
	if (!err && j->cgroup[0])
		err = tacho_profile_set_filter(prof, &filt, &diag);
	f = err ? NULL : open_memstream(&j->body, &j->len);
	if (!err)
		err = f ? tacho_profile_write_pprof(prof, f) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	tacho_profile_free(prof);
	if (!err) {
		j->status = 200;
		return;
	}
	free(j->body);
	j->body = NULL;
	pthread_mutex_lock(&p->mu);
	if (err == -TACHO_EEMPTY && p->sampler_ended && p->serr)
		set_result(j, 503, "the always-on sampler stopped: %s%s", p->serr_msg, NULL);
	else if (err == -TACHO_EEMPTY)
		set_result(j, 503, "the always-on sampler holds nothing yet%s%s", "", NULL);
	else
		set_result(j, 500, "cannot write the profile: %s%s", diag.message[0] ?
			   diag.message : tacho_strerror(err), NULL);
	pthread_mutex_unlock(&p->mu);
}

/* Records into a temporary file and turns it into pprof in memory. */
static void take(struct prof_job *j)
{
	struct serve_prof *p = j->p;
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
		set_result(j, 500, "cannot make a temporary file: %s%s", strerror(errno), NULL);
		return;
	}
	close(fd);
	/* the default event: cycles where there is a core PMU, else cpu-clock */
	o.events = j->event[0] ? j->event : NULL;
	o.freq = PROF_HZ;
	o.callchain = true;
	o.output = file;
	o.pid = j->pid;
	o.system_wide = !j->pid;   /* a cgroup: the machine, filtered below */
	o.stop = &p->stop;
	if (pthread_create(&stopper, NULL, stopper_main, j)) {
		unlink(file);
		set_result(j, 500, "cannot start a thread%s%s", "", NULL);
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
		set_result(j, 500, "cannot record: %s%s", diag.message[0] ? diag.message :
			   tacho_strerror(err), NULL);
		return;
	}
	pthread_mutex_lock(&p->mu);
	if (p->closing) {
		pthread_mutex_unlock(&p->mu);
		unlink(file);
		set_result(j, 503, "tacho serve is stopping%s%s", "", NULL);
		return;
	}
	pthread_mutex_unlock(&p->mu);
	err = tacho_profile_load(file, &prof, &diag);
	unlink(file);
	if (err) {
		set_result(j, 500, "cannot read the recording: %s%s", diag.message[0] ?
			   diag.message : tacho_strerror(err), NULL);
		return;
	}
	/* a cgroup: the machine recorded, its processes' samples kept (tacho_record has
	 * no cgroup target; each process's CGROUP record says where it is) */
	if (j->cgroup[0]) {
		struct tacho_profile_filter filt = { .sz = sizeof(filt), .cgroups = j->cgroup };
		err = tacho_profile_set_filter(prof, &filt, &diag);
		if (err) {
			tacho_profile_free(prof);
			set_result(j, 500, "cannot keep the cgroup's samples: %s%s",
				   diag.message[0] ? diag.message : tacho_strerror(err), NULL);
			return;
		}
	}
	f = open_memstream(&j->body, &j->len);
	err = f ? tacho_profile_write_pprof(prof, f) : -ENOMEM;
	if (f && fclose(f) && !err)
		err = -ENOMEM;
	tacho_profile_free(prof);
	if (err) {
		free(j->body);
		j->body = NULL;
		set_result(j, 500, "cannot write the profile: %s%s", tacho_strerror(err), NULL);
		return;
	}
	j->status = 200;
}

static void *prof_main(void *arg)
{
	struct prof_job *j = arg;
	struct serve_prof *p = j->p;

	if (p->sampler)
		take_held(j);
	else
		take(j);
	pthread_mutex_lock(&p->mu);
	j->done = true;
	pthread_mutex_unlock(&p->mu);
	j->ready(j->arg, j->conn);
	return NULL;
}

int prof_start(struct serve_prof *p, unsigned seconds, pid_t pid, const char *cgroup,
	       const char *event, void (*ready)(void *arg, void *conn), void *arg, void *conn,
	       void **job)
{
	size_t njobs = p->sampler ? PROF_JOBS : 1;
	struct prof_job *j = NULL;
	int err;

	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < njobs && !j; i++)
		if (!p->job[i].busy)
			j = &p->job[i];
	if (!j || p->closing) {
		pthread_mutex_unlock(&p->mu);
		return j ? -ESHUTDOWN : -EBUSY;
	}
	/* the thread of the previous one has ended (its result was taken away) */
	if (j->running) {
		pthread_mutex_unlock(&p->mu);
		pthread_join(j->thread, NULL);
		pthread_mutex_lock(&p->mu);
		j->running = false;
	}
	j->busy = true;
	j->done = false;
	p->quit = false;
	p->stop = 0;
	j->seconds = seconds;
	j->pid = pid;
	snprintf(j->cgroup, sizeof(j->cgroup), "%s", cgroup ? cgroup : "");
	snprintf(j->event, sizeof(j->event), "%s", event ? event : "");
	j->ready = ready;
	j->arg = arg;
	j->conn = conn;
	j->body = NULL;
	j->len = 0;
	j->status = 0;
	j->why[0] = 0;
	err = pthread_create(&j->thread, NULL, prof_main, j);
	if (err)
		j->busy = false;
	else
		j->running = true;
	pthread_mutex_unlock(&p->mu);
	if (!err)
		*job = j;
	return -err;
}

bool prof_is_job(const struct serve_prof *p, const void *job)
{
	for (size_t i = 0; p && i < PROF_JOBS; i++)
		if (job == &p->job[i])
			return true;
	return false;
}

bool prof_take(struct serve_prof *p, void *job, char **body, size_t *len, unsigned *status,
	       char *why, size_t whysz)
{
	struct prof_job *j = job;
	bool done;

	pthread_mutex_lock(&p->mu);
	done = j->busy && j->done;
	if (done) {
		*body = j->body;
		*len = j->len;
		*status = j->status;
		snprintf(why, whysz, "%s", j->why);
		j->body = NULL;
		j->busy = false;
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
	p->sstop = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

void prof_wait(struct serve_prof *p)
{
	if (!p)
		return;
	prof_quit(p);
	for (size_t i = 0; i < PROF_JOBS; i++) {
		if (p->job[i].running)
			pthread_join(p->job[i].thread, NULL);
		p->job[i].running = false;
	}
	if (p->sampler_up)
		pthread_join(p->sthread, NULL);
	p->sampler_up = false;
}

void prof_free(struct serve_prof *p)
{
	if (!p)
		return;
	prof_wait(p);
	for (size_t i = 0; i < PROF_JOBS; i++)
		free(p->job[i].body);
	tacho_sampler_free(p->sampler);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
