/* procscan.c - the tasks of the running system as the live sampler needs them: a pure
 * parser of /proc/PID/stat, and the scan of every process (or thread) with its owner,
 * CPU time and identity. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live/live-int.h"

/* The next blank-separated field of [*p, end) as an unsigned number. */
static int next_u64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	while (s < end && *s == ' ')
		s++;
	if (s == end)
		return -TACHO_EPARSE;
	if (*s == '-') {
		/* a few fields are signed (priority, nice); none the sampler reads can
		 * be negative, but they must be skipped */
		s++;
	}
	if (s == end || *s < '0' || *s > '9')
		return -TACHO_EPARSE;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -TACHO_EPARSE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (s < end && *s != ' ' && *s != '\n')
		return -TACHO_EPARSE;
	*p = s;
	*out = v;
	return 0;
}

int tc_proc_cpu_busy_parse(const char *text, size_t len, uint64_t *busy, size_t n)
{
	const char *p = text, *end = text + len;
	int found = 0;

	for (size_t i = 0; i < n; i++)
		busy[i] = UINT64_MAX;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
		uint64_t cpu = 0, v[8];
		bool digits = false;

		if (!eol)
			eol = end;
		/* "cpuN user nice system idle iowait irq softirq steal ..." (proc(5)); the
		 * first line, "cpu " without a number, is every CPU's sum */
		if (eol - p > 3 && !memcmp(p, "cpu", 3)) {
			for (q = p + 3; q < eol && *q >= '0' && *q <= '9'; q++) {
				if (cpu > 100000)
					return -TACHO_EPARSE;
				cpu = cpu * 10 + (uint64_t)(*q - '0');
				digits = true;
			}
			if (digits) {
				if (q == eol || *q != ' ')
					return -TACHO_EPARSE;
				for (size_t i = 0; i < 8; i++)
					if (next_u64(&q, eol, &v[i]))
						return -TACHO_EPARSE;
				/* busy: user (guest included), nice, system, irq, softirq;
				 * not idle, iowait (idle waiting for a disk) nor steal (the
				 * hypervisor ran someone else) */
				if (cpu < n) {
					uint64_t b = v[0] + v[1] + v[2] + v[5] + v[6];
					if (b < v[0])
						return -TACHO_EPARSE;
					busy[cpu] = b;
				}
				found++;
			}
		}
		p = eol + 1;
	}
	return found ? found : -TACHO_EPARSE;
}

int tc_proc_stat_parse(const char *text, size_t len, struct tc_proc_stat *out)
{
	const char *end = text + len, *open, *close = NULL, *p;
	uint64_t v[20];
	size_t n;

	memset(out, 0, sizeof(*out));
	/* "PID (COMM) STATE PPID ..." (proc(5)); COMM may hold ") (" itself, so the
	 * last ')' ends it */
	open = memchr(text, '(', len);
	if (!open)
		return -TACHO_EPARSE;
	for (p = open; p < end; p++)
		if (*p == ')')
			close = p;
	if (!close)
		return -TACHO_EPARSE;
	p = text;
	if (next_u64(&p, open, &v[0]) || v[0] == 0 || v[0] > INT32_MAX)
		return -TACHO_EPARSE;
	out->pid = (pid_t)v[0];
	n = (size_t)(close - open - 1);
	if (n >= sizeof(out->comm))
		n = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, n);
	out->comm[n] = '\0';
	for (char *c = out->comm; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';    /* a name is data: no control character goes further */
	p = close + 1;
	if (end - p < 3 || p[0] != ' ' || p[2] != ' ')
		return -TACHO_EPARSE;
	out->state = p[1];
	p += 2;
	/* fields 4 (ppid) to 22 (starttime): ppid pgrp session tty_nr tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime priority nice num_threads
	 * itrealvalue starttime */
	for (size_t i = 0; i < 19; i++)
		if (next_u64(&p, end, &v[i]))
			return -TACHO_EPARSE;
	if (v[0] > INT32_MAX)
		return -TACHO_EPARSE;
	out->ppid = (pid_t)v[0];
	out->ticks = v[10] + v[11];
	out->threads = (long)(v[16] > LONG_MAX ? LONG_MAX : v[16]);
	out->starttime = v[18];
	return 0;
}

void tc_scan_exit(struct tc_scan *s)
{
	free(s->t);
	memset(s, 0, sizeof(*s));
}

int tc_task_stat(const char *proc_root, pid_t pid, pid_t tid, struct tc_proc_stat *out)
{
	char path[PATH_MAX], buf[1024];
	ssize_t n;
	int fd, err;

	if (tid && tid != pid)
		snprintf(path, sizeof(path), "%s/%d/task/%d/stat", proc_root, (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "%s/%d/stat", proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (n <= 0)
		return n == 0 ? -ESRCH : err;   /* a task that died reads ESRCH */
	buf[n] = '\0';
	return tc_proc_stat_parse(buf, (size_t)n, out);
}

static int add_task(struct tc_scan *s, const char *proc_root, pid_t pid, pid_t tid)
{
	struct tc_task *t;
	struct stat sb;
	char path[PATH_MAX];

	if (s->n == s->alloc) {
		size_t na = s->alloc ? 2 * s->alloc : 256;
		t = realloc(s->t, na * sizeof(*t));
		if (!t)
			return -ENOMEM;
		s->t = t;
		s->alloc = na;
	}
	t = &s->t[s->n];
	/* a task that ended between the listing and this read is simply not there */
	if (tc_task_stat(proc_root, pid, tid, &t->st))
		return 0;
	snprintf(path, sizeof(path), "%s/%d", proc_root, (int)pid);
	if (stat(path, &sb))
		return 0;
	t->uid = sb.st_uid;
	t->tgid = pid;
	s->n++;
	return 0;
}

static bool numeric(const char *name, pid_t *out)
{
	uint64_t v;

	if (tc_parse_u64(name, &v) || v == 0 || v > INT32_MAX)
		return false;
	*out = (pid_t)v;
	return true;
}

static int add_threads(struct tc_scan *s, const char *proc_root, pid_t pid)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%d/task", proc_root, (int)pid);
	d = opendir(path);
	if (!d)
		return 0;      /* gone */
	while (!err && (de = readdir(d))) {
		pid_t tid;
		if (numeric(de->d_name, &tid))
			err = add_task(s, proc_root, pid, tid);
	}
	closedir(d);
	return err;
}

int tc_scan_tasks(const char *proc_root, bool threads, pid_t pid, struct tc_scan *out)
{
	struct dirent *de;
	DIR *d;
	int err = 0;

	out->n = 0;
	if (pid > 0)
		return threads ? add_threads(out, proc_root, pid) : add_task(out, proc_root, pid, pid);
	d = opendir(proc_root);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		pid_t p;
		if (!numeric(de->d_name, &p))
			continue;
		err = threads ? add_threads(out, proc_root, p) : add_task(out, proc_root, p, p);
	}
	closedir(d);
	return err;
}
