/* throttle-keeper.c - a process that undoes a throttle if its owner dies without doing
 * so: a SIGKILL, a crash, an out-of-memory kill. A cap outlived tacho watch (the target
 * left in tacho-PID at a few percent of a CPU) and a duty cycle left the target stopped
 * for good (issue 27). The kernel undoes neither: a cgroup keeps its processes and its
 * limit, and a stopped process waits for a SIGCONT.
 *
 * The keeper is forked when the throttle is made, before anything changes, and holds
 * one end of a socket pair whose other end only the owner has (close-on-exec): when the
 * owner dies, however, the kernel closes it and the keeper reads the end. The owner
 * tells it, one byte each, what it is about to change, and 'D' once it has undone
 * everything itself; an end without 'D' makes the keeper undo what it was told of.
 * (PR_SET_PDEATHSIG would fire when the thread that forked ends, not the process; a
 * pidfd would need the keeper to be told the state anyway.)
 *
 * It is forked twice, so that it is nobody's child here (no zombie, no SIGCHLD when it
 * ends); it leaves the session (a Ctrl-C or a kill of the process group that ends
 * tacho does not end it), ignores the stop signals and keeps no descriptor but its
 * end. The owner may have threads: from the fork on, the keeper makes only system
 * calls, on the plan copied with its memory. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "live/live-int.h"

/* Writes s to path (a cgroup file: one value per write). */
static void put(const char *path, const char *s, size_t n)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while (write(fd, s, n) < 0 && errno == EINTR)
		;
	close(fd);
}

/* Calls fn on every pid listed in path (cgroup.procs: one a line), read in pieces. */
static void each_pid(const char *path, void (*fn)(const struct tc_keeper_plan *, long),
		     const struct tc_keeper_plan *p)
{
	char buf[4096];
	long pid = 0;
	bool digits = false;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= '0' && buf[i] <= '9' && pid < 100000000) {
				pid = pid * 10 + (buf[i] - '0');
				digits = true;
			} else {
				if (digits && pid > 0)
					fn(p, pid);
				pid = 0;
				digits = false;
			}
		}
	}
	if (digits && pid > 0)
		fn(p, pid);
	close(fd);
}

static void move_back(const struct tc_keeper_plan *p, long pid)
{
	char s[24];
	int i = (int)sizeof(s);

	do
		s[--i] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0);
	put(p->to, s + i, sizeof(s) - (size_t)i);
}

static void cont(const struct tc_keeper_plan *p, long pid)
{
	(void)p;
	kill((pid_t)pid, SIGCONT);
}

/* What the owner would have undone: the processes back where they were and the cgroup
 * it made removed (a fork of the target may slip in between: a few rounds), the limit
 * of a given cgroup back to its old value, a stopped target continued. */
static void undo(const struct tc_keeper_plan *p, bool held, bool made)
{
	switch (p->what) {
	case TC_KEEPER_MOVED:
		for (int round = 0; round < 10; round++) {
			each_pid(p->from, move_back, p);
			if (!made || rmdir(p->dir) == 0 || errno != EBUSY)
				break;
		}
		break;
	case TC_KEEPER_LIMIT:
		if (held)
			put(p->limit, p->saved, strlen(p->saved));
		break;
	case TC_KEEPER_STOPPED:
		if (p->from[0])
			each_pid(p->from, cont, p);
		else
			kill(p->pid, SIGCONT);
		break;
	}
}

/* Closes every descriptor but a and b (a < b). */
static void close_all_but(int a, int b)
{
	struct rlimit rl;

	if ((a == 0 || !close_range(0, (unsigned)a - 1, 0)) &&
	    (b == a + 1 || !close_range((unsigned)a + 1, (unsigned)b - 1, 0)) &&
	    !close_range((unsigned)b + 1, ~0u, 0))
		return;
	/* before Linux 5.9 */
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur > 65536)
		rl.rlim_cur = 65536;
	for (int i = 0; i < (int)rl.rlim_cur; i++)
		if (i != a && i != b)
			close(i);
}

static void __attribute__((noreturn)) keeper_main(const struct tc_keeper_plan *p, int fd,
						  int ready)
{
	static const int quiet[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP,
				     SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2, SIGALRM };
	struct sigaction sa;
	bool applied = false, held = false, made = false, done = false;
	sigset_t none;
	char b[64];
	ssize_t n;

	setsid();
	prctl(PR_SET_NAME, "tacho-keeper", 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		sigaction(quiet[i], &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* no descriptor of the owner's: its pipes and terminals would not see their end
	 * while the keeper lives, nor its perf events close */
	close_all_but(fd < ready ? fd : ready, fd < ready ? ready : fd);
	while (write(ready, "R", 1) < 0 && errno == EINTR)
		;
	close(ready);
	for (;;) {
		n = read(fd, b, sizeof(b));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			switch (b[i]) {
			case 'A':
				applied = held = true;
				break;
			case 'L':
				held = false;
				break;
			case 'M':
				made = true;
				break;
			case 'm':
				made = false;
				break;
			case 'D':
				done = true;
				break;
			}
		}
	}
	if (applied && !done)
		undo(p, held, made);
	_exit(0);
}

int tc_keeper_start(const struct tc_keeper_plan *plan, int *out)
{
	int sv[2], rd[2], err = 0, st;
	char r = 0;
	ssize_t n;
	pid_t mid;

	*out = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	if (pipe2(rd, O_CLOEXEC)) {
		err = -errno;
		goto out_close;
	}
	mid = fork();
	if (mid < 0) {
		err = -errno;
		close(rd[0]);
		close(rd[1]);
		goto out_close;
	}
	if (mid == 0) {
		/* _Fork: no atfork handler runs in this copy of a threaded process */
		pid_t k = _Fork();
		if (k == 0)
			keeper_main(plan, sv[1], rd[1]);
		_exit(k < 0 ? 1 : 0);
	}
	close(rd[1]);
	close(sv[1]);
	while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
		;
	/* 'R' once the keeper is ready; the end of the pipe without it: no keeper */
	do
		n = read(rd[0], &r, 1);
	while (n < 0 && errno == EINTR);
	close(rd[0]);
	if (n != 1 || r != 'R') {
		close(sv[0]);
		return -EAGAIN;
	}
	*out = sv[0];
	return 0;
out_close:
	close(sv[0]);
	close(sv[1]);
	return err;
}

void tc_keeper_tell(int fd, char what)
{
	if (fd < 0)
		return;
	/* a keeper gone (killed by hand) must not take its owner with it: no SIGPIPE */
	while (send(fd, &what, 1, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

void tc_keeper_done(int *fd)
{
	if (*fd < 0)
		return;
	tc_keeper_tell(*fd, 'D');
	close(*fd);
	*fd = -1;
}
