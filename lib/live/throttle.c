/* throttle.c - limiting a target's CPU for tacho watch: a CPU bandwidth cap through the
 * cgroup CPU controller (v2's cpu.max, or v1's cpu.cfs_quota_us where v2 lacks the
 * controller), or a SIGSTOP/SIGCONT duty cycle on a thread of its own where no cgroup
 * is writable. Whatever it changed, it undoes when lifted or freed, and its keeper
 * (throttle-keeper.c) when its owner dies first. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "live/live-int.h"

#define DEFAULT_PERIOD_US 100000u
#define MIN_QUOTA_US 1000u        /* the kernel refuses a quota below 1 ms */

struct tacho_throttle {
	enum tacho_throttle_kind kind;
	pid_t pid;
	char *proc_root;
	unsigned period_us;
	bool active;
	double target;                 /* the share asked by the last apply */
	double quota;                  /* CAP: the share written to the kernel (feedback) */
	char where[PATH_MAX + 96];
	/* CAP */
	int version;                   /* 1 or 2 */
	char dir[PATH_MAX];            /* the cgroup whose limit is set */
	char orig[PATH_MAX];           /* a moved process's own cgroup, to go back to */
	bool made, moved;
	char saved[128];               /* a given cgroup's own limit, restored at the end */
	/* DUTY */
	char procs[PATH_MAX];          /* a cgroup's cgroup.procs, or "" for pid */
	pthread_t thread;
	bool thread_up;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	double share;
	int keeper;                    /* the keeper's socket, or -1 */
};

/* --- small files --- */

static int write_str(const char *path, const char *s)
{
	size_t n = strlen(s);
	ssize_t w;
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	w = write(fd, s, n);
	if (w < 0)
		err = -errno;
	else if ((size_t)w != n)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static int write_at(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return write_str(path, s);
}

static int read_at(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return tc_read_line_file(path, buf, size);
}

/* Whether the space-separated list in file holds word. */
static bool file_has_word(const char *dir, const char *file, const char *word)
{
	char buf[1024];
	size_t wl = strlen(word);

	if (read_at(dir, file, buf, sizeof(buf)))
		return false;
	for (char *p = buf; (p = strstr(p, word)); p += wl)
		if ((p == buf || p[-1] == ' ') && (p[wl] == ' ' || p[wl] == '\0'))
			return true;
	return false;
}

/* --- CAP --- */

/* Where the cpu controller can be written: 2 (cgroup v2 with cpu), 1 (v1's cpu
 * hierarchy), or 0, with root set to its root. */
static int cpu_controller(const struct tc_cgroup_mounts *m, const char **root)
{
	if (m->v2[0] && !m->v2_ro && file_has_word(m->v2, "cgroup.controllers", "cpu") &&
	    access(m->v2, W_OK) == 0) {
		*root = m->v2;
		return 2;
	}
	if (m->v1_cpu[0] && !m->v1_cpu_ro && access(m->v1_cpu, W_OK) == 0) {
		*root = m->v1_cpu;
		return 1;
	}
	return 0;
}

static int cap_setup(struct tacho_throttle *t, const struct tacho_throttle_opts *o,
		     struct tacho_diag *diag)
{
	struct tc_cgroup_mounts m;
	const char *root = NULL;
	char path[PATH_MAX], *text;
	size_t len;
	int err;

	err = tc_cgroup_mounts_read(o->mounts, &m);
	if (err)
		return tc_diag_set(diag, "", 0, 0, err, "cannot read the mount table: %s",
				   tacho_strerror(err));
	t->version = cpu_controller(&m, &root);
	if (!t->version)
		return tc_diag_set(diag, "", 0, 0, -ENOENT, "no cgroup CPU controller this user "
				   "can write (%s)", !m.v2[0] && !m.v1_cpu[0] ?
				   "neither cgroup v2 with cpu nor a v1 cpu hierarchy is mounted" :
				   "mounted read-only, without the cpu controller, or not this "
				   "user's");
	if (o->cgroup) {
		err = tc_cgroup_resolve(root, o->cgroup, t->dir, sizeof(t->dir));
		if (err)
			return tc_diag_set(diag, o->cgroup, 0, 0, -ENOENT, "no cgroup '%s' under %s "
					   "(%s)", o->cgroup, root, tacho_strerror(err));
		if (t->version == 2 && !file_has_word(t->dir, "cgroup.controllers", "cpu"))
			return tc_diag_set(diag, o->cgroup, 0, 0, -ENOENT, "cgroup '%s' has no cpu "
					   "controller (enable it in its parent's "
					   "cgroup.subtree_control)", o->cgroup);
		err = read_at(t->dir, t->version == 2 ? "cpu.max" : "cpu.cfs_quota_us", t->saved,
			      sizeof(t->saved));
		if (err)
			return tc_diag_set(diag, o->cgroup, 0, 0, -ENOENT, "cannot read the CPU "
					   "limit of cgroup '%s': %s", o->cgroup, tacho_strerror(err));
		snprintf(t->where, sizeof(t->where), "cgroup v%d %s (%s)", t->version, t->dir,
			 t->version == 2 ? "cpu.max" : "cpu.cfs_quota_us");
		return 0;
	}
	/* a process: its own cgroup now, to return to at the end */
	snprintf(path, sizeof(path), "%s/%d/cgroup", t->proc_root, (int)t->pid);
	err = tc_read_file(path, &text, &len, 1u << 20);
	if (err)
		return tc_diag_set(diag, "", 0, 0, err == -ENOENT ? -ESRCH : err,
				   "cannot read the cgroups of process %d: %s", (int)t->pid,
				   tacho_strerror(err));
	err = tc_proc_cgroup_path(text, len, t->version == 2 ? NULL : "cpu", path, sizeof(path));
	free(text);
	if (err)
		return tc_diag_set(diag, "", 0, 0, -ENOENT, "process %d is in no cgroup of the "
				   "CPU controller's hierarchy", (int)t->pid);
	if (snprintf(t->orig, sizeof(t->orig), "%s%s", root, strcmp(path, "/") ? path : "") >=
	    (int)sizeof(t->orig) ||
	    snprintf(t->dir, sizeof(t->dir), "%s/tacho-%d", root, (int)t->pid) >= (int)sizeof(t->dir))
		return tc_diag_set(diag, "", 0, 0, -ERANGE, "cgroup path too long");
	snprintf(t->where, sizeof(t->where), "cgroup v%d %s (%s)", t->version, t->dir,
		 t->version == 2 ? "cpu.max" : "cpu.cfs_quota_us");
	return 0;
}

/* Makes the process's cgroup and moves it in (at the first apply: until then nothing
 * changes). */
static int cap_enter(struct tacho_throttle *t)
{
	char root[PATH_MAX], pid[32];
	int err;

	if (t->moved)
		return 0;
	snprintf(root, sizeof(root), "%s", t->dir);
	*strrchr(root, '/') = '\0';
	/* v2: the controller must be on for the root's children (the root holds
	 * processes, which v2 allows for the root alone) */
	if (t->version == 2 && !file_has_word(root, "cgroup.subtree_control", "cpu")) {
		err = write_at(root, "cgroup.subtree_control", "+cpu");
		if (err)
			return err;
	}
	tc_keeper_tell(t->keeper, 'M');
	if (mkdir(t->dir, 0755)) {
		err = -errno;
		tc_keeper_tell(t->keeper, 'm');
		if (err != -EEXIST)
			return err;
	} else {
		t->made = true;
	}
	snprintf(pid, sizeof(pid), "%d", (int)t->pid);
	err = write_at(t->dir, "cgroup.procs", pid);
	if (err)
		return err;
	t->moved = true;
	return 0;
}

static int cap_set(struct tacho_throttle *t, double share)
{
	char buf[64];
	double q = share * t->period_us;
	unsigned long quota = q < MIN_QUOTA_US ? MIN_QUOTA_US : (unsigned long)llround(q);
	int err;

	if (t->version == 2) {
		snprintf(buf, sizeof(buf), "%lu %u", quota, t->period_us);
		return write_at(t->dir, "cpu.max", buf);
	}
	snprintf(buf, sizeof(buf), "%u", t->period_us);
	err = write_at(t->dir, "cpu.cfs_period_us", buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf), "%lu", quota);
	return write_at(t->dir, "cpu.cfs_quota_us", buf);
}

static int cap_unset(struct tacho_throttle *t)
{
	char buf[64];

	if (t->saved[0])
		return write_at(t->dir, t->version == 2 ? "cpu.max" : "cpu.cfs_quota_us", t->saved);
	if (t->version == 2) {
		snprintf(buf, sizeof(buf), "max %u", t->period_us);
		return write_at(t->dir, "cpu.max", buf);
	}
	return write_at(t->dir, "cpu.cfs_quota_us", "-1");
}

/* Every process still in the cgroup it made (the process and what it forked) goes back
 * to where the process was; then the cgroup goes. */
static void cap_leave(struct tacho_throttle *t)
{
	char *text = NULL, path[PATH_MAX + 32];
	size_t len;

	if (!t->moved)
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", t->dir);
	if (!tc_read_file(path, &text, &len, 16u << 20)) {
		for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
			write_at(t->orig, "cgroup.procs", p);
		free(text);
	}
	if (t->made && rmdir(t->dir))
		tc_log(TACHO_LOG_WARN, "cannot remove cgroup %s: %s", t->dir, strerror(errno));
	t->moved = false;
}

/* --- DUTY --- */

static void duty_signal(struct tacho_throttle *t, int sig)
{
	char *text = NULL;
	size_t len;

	if (!t->procs[0]) {
		kill(t->pid, sig);
		return;
	}
	if (tc_read_file(t->procs, &text, &len, 16u << 20))
		return;
	for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) {
		uint64_t pid;
		if (!tc_parse_u64(p, &pid) && pid > 0 && pid <= INT32_MAX)
			kill((pid_t)pid, sig);
	}
	free(text);
}

static void add_ns(struct timespec *ts, long long ns)
{
	ts->tv_sec += ns / 1000000000;
	ts->tv_nsec += ns % 1000000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* Waits until `until` unless told to stop or lift first; true when it must stop the
 * cycle. Called with mu held. */
static bool duty_wait(struct tacho_throttle *t, const struct timespec *until)
{
	while (!t->stop && t->active)
		if (pthread_cond_timedwait(&t->cv, &t->mu, until) == ETIMEDOUT)
			return false;
	return true;
}

static void *duty_main(void *arg)
{
	struct tacho_throttle *t = arg;
	struct timespec next;

	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		long long period = (long long)t->period_us * 1000, run;

		if (!t->active) {
			pthread_cond_wait(&t->cv, &t->mu);
			continue;
		}
		run = (long long)llround(t->share * (double)period);
		clock_gettime(CLOCK_MONOTONIC, &next);
		/* runs share of the cycle, is stopped for the rest */
		duty_signal(t, SIGCONT);
		add_ns(&next, run);
		if (duty_wait(t, &next))
			continue;      /* lifted, or stopping */
		duty_signal(t, SIGSTOP);
		add_ns(&next, period - run);
		if (duty_wait(t, &next))
			duty_signal(t, SIGCONT);   /* lifted in the stopped part */
	}
	/* stopping: the target runs again */
	duty_signal(t, SIGCONT);
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

static int duty_setup(struct tacho_throttle *t, const struct tacho_throttle_opts *o,
		      struct tacho_diag *diag)
{
	pthread_condattr_t ca;
	int err;

	if (o->cgroup) {
		struct tc_cgroup_mounts m;
		const char *root;
		char dir[PATH_MAX];

		err = tc_cgroup_mounts_read(o->mounts, &m);
		root = err ? NULL : tc_cgroup_perf_root(&m);
		if (o->cgroup[0] == '/' && access(o->cgroup, F_OK) == 0)
			snprintf(dir, sizeof(dir), "%s", o->cgroup);
		else if (!root || tc_cgroup_resolve(root, o->cgroup, dir, sizeof(dir)))
			return tc_diag_set(diag, o->cgroup, 0, 0, -ENOENT, "no cgroup '%s'",
					   o->cgroup);
		snprintf(t->procs, sizeof(t->procs), "%.*s/cgroup.procs", PATH_MAX - 16, dir);
		snprintf(t->where, sizeof(t->where), "SIGSTOP/SIGCONT of the processes of %s", dir);
	} else {
		snprintf(t->where, sizeof(t->where), "SIGSTOP/SIGCONT of process %d", (int)t->pid);
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = -pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return err;
	err = -pthread_mutex_init(&t->mu, NULL);
	if (err) {
		pthread_cond_destroy(&t->cv);
		return err;
	}
	err = -pthread_create(&t->thread, NULL, duty_main, t);
	if (err) {
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		return err;
	}
	t->thread_up = true;
	return 0;
}

/* --- the keeper --- */

/* What its keeper undoes if the owner dies first: the same as tacho_throttle_free. */
static int keeper_start(struct tacho_throttle *t)
{
	struct tc_keeper_plan *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->pid = t->pid;
	if (t->kind == TACHO_THROTTLE_DUTY) {
		p->what = TC_KEEPER_STOPPED;
		snprintf(p->from, sizeof(p->from), "%s", t->procs);
	} else if (t->saved[0]) {
		p->what = TC_KEEPER_LIMIT;
		snprintf(p->limit, sizeof(p->limit), "%s/%s", t->dir,
			 t->version == 2 ? "cpu.max" : "cpu.cfs_quota_us");
		snprintf(p->saved, sizeof(p->saved), "%s", t->saved);
	} else {
		p->what = TC_KEEPER_MOVED;
		snprintf(p->from, sizeof(p->from), "%s/cgroup.procs", t->dir);
		snprintf(p->to, sizeof(p->to), "%s/cgroup.procs", t->orig);
		snprintf(p->dir, sizeof(p->dir), "%s", t->dir);
	}
	err = tc_keeper_start(p, &t->keeper);
	free(p);
	return err;
}

/* --- the throttle --- */

/* The options' first version (TC_OPTS_VALID): through period_us, to where mounts
 * starts. */
#define TC_OPTS_V1_tacho_throttle_opts offsetof(struct tacho_throttle_opts, mounts)

int tacho_throttle_new(const struct tacho_throttle_opts *o, struct tacho_throttle **out,
		       struct tacho_diag *diag)
{
	struct tacho_throttle *t;
	int err;

	if (tc_diag_check(diag))
		return -EINVAL;
	err = TC_OPTS_VALID_DIAG(o, tacho_throttle_opts, diag);
	if (err == -TACHO_EVERSION)
		return err;
	if (err || !o || !out ||
	    (o->kind != TACHO_THROTTLE_CAP && o->kind != TACHO_THROTTLE_DUTY) ||
	    (o->pid <= 0) == !o->cgroup || o->pid < 0)
		return tc_diag_set(diag, "", 0, 0, -EINVAL, "bad throttle options (a pid or a "
				   "cgroup)");
	*out = NULL;
	if (o->pid > 0 && kill(o->pid, 0) && errno == ESRCH)
		return tc_diag_set(diag, "", 0, 0, -ESRCH, "no process %d", (int)o->pid);
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->kind = o->kind;
	t->pid = o->pid;
	t->keeper = -1;
	t->period_us = o->period_us ? o->period_us : DEFAULT_PERIOD_US;
	t->proc_root = tc_strdup(TC_OPTS_GET(o, tacho_throttle_opts, proc_root, NULL) ?
				 o->proc_root : "/proc");
	if (!t->proc_root) {
		free(t);
		return -ENOMEM;
	}
	{
		struct tacho_throttle_opts c;

		TC_OPTS_COPY(&c, o);
		err = t->kind == TACHO_THROTTLE_CAP ? cap_setup(t, &c, diag) : duty_setup(t, &c, diag);
	}
	if (err) {
		free(t->proc_root);
		free(t);
		return err;
	}
	/* before anything changes: nothing may outlive its owner */
	err = keeper_start(t);
	if (err) {
		tacho_throttle_free(t);
		return tc_diag_set(diag, "", 0, 0, err, "cannot start the process that undoes "
				   "the throttle if this one dies: %s", tacho_strerror(err));
	}
	*out = t;
	return 0;
}

int tacho_throttle_apply(struct tacho_throttle *t, double share)
{
	int err;

	if (!t || !isfinite(share) || share <= 0 ||
	    (t->kind == TACHO_THROTTLE_DUTY && share >= 1))
		return -EINVAL;
	tc_keeper_tell(t->keeper, 'A');
	if (t->kind == TACHO_THROTTLE_DUTY) {
		pthread_mutex_lock(&t->mu);
		t->share = share;
		t->active = true;
		pthread_cond_broadcast(&t->cv);
		pthread_mutex_unlock(&t->mu);
		return 0;
	}
	if (!t->saved[0]) {
		err = cap_enter(t);
		if (err)
			return err;
	}
	err = cap_set(t, share);
	if (!err) {
		t->active = true;
		t->target = t->quota = share;
	}
	return err;
}

int tacho_throttle_feedback(struct tacho_throttle *t, double measured, double target)
{
	double f, q;

	if (!t)
		return -EINVAL;
	if (t->kind != TACHO_THROTTLE_CAP || !t->active || !isfinite(measured) || measured <= 0 ||
	    !isfinite(target) || target <= 0)
		return 0;
	/* a damped proportional correction: the square root of the error, steps of at
	 * most 2x, the bandwidth kept between a quarter and twice the share of the apply */
	f = target / measured;
	if (f < 0.5)
		f = 0.5;
	if (f > 2)
		f = 2;
	q = t->quota * sqrt(f);
	if (q < t->target / 4)
		q = t->target / 4;
	if (q > t->target * 2)
		q = t->target * 2;
	if (fabs(q / t->quota - 1) < 0.02)
		return 0;
	t->quota = q;
	return cap_set(t, q);
}

int tacho_throttle_lift(struct tacho_throttle *t)
{
	int err = 0;

	if (!t)
		return -EINVAL;
	if (t->kind == TACHO_THROTTLE_DUTY) {
		pthread_mutex_lock(&t->mu);
		t->active = false;
		pthread_cond_broadcast(&t->cv);
		pthread_mutex_unlock(&t->mu);
		/* the thread continues the target as it leaves its cycle; so do we, now,
		 * in case it is between two signals */
		duty_signal(t, SIGCONT);
		return 0;
	}
	if (t->active && (t->moved || t->saved[0]))
		err = cap_unset(t);
	if (!err) {
		t->active = false;
		tc_keeper_tell(t->keeper, 'L');
	}
	return err;
}

bool tacho_throttle_active(const struct tacho_throttle *t)
{
	return t && t->active;
}

const char *tacho_throttle_where(const struct tacho_throttle *t)
{
	return t ? t->where : "";
}

void tacho_throttle_free(struct tacho_throttle *t)
{
	if (!t)
		return;
	if (t->kind == TACHO_THROTTLE_DUTY) {
		if (t->thread_up) {
			pthread_mutex_lock(&t->mu);
			t->stop = true;
			t->active = false;
			pthread_cond_broadcast(&t->cv);
			pthread_mutex_unlock(&t->mu);
			pthread_join(t->thread, NULL);
			duty_signal(t, SIGCONT);
			pthread_cond_destroy(&t->cv);
			pthread_mutex_destroy(&t->mu);
		}
	} else {
		if (t->active)
			tacho_throttle_lift(t);
		cap_leave(t);
	}
	tc_keeper_done(&t->keeper);
	free(t->proc_root);
	free(t);
}
