/* run.c - launching and following a program: fork, hold it before exec until the
 * counters are attached, exec with its errors reported exactly, wait with the exit
 * status, forward signals (a second one kills), continue a program that stops itself,
 * and never leave it running when the caller dies. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/util.h"
#include "tacho/run.h"

enum child_state { CH_HELD, CH_RUNNING, CH_REAPED };

#define NFWD 4   /* the signals passed on */
static const int fwd_signals[NFWD] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

struct tacho_child {
	pid_t pid;
	int go_fd;          /* our end of the socket pair the child waits on */
	int err_fd;         /* read end of the close-on-exec pipe exec's errno comes back on */
	enum child_state state;
	bool forward;
	volatile int *stop; /* the caller's stop flag (opts->stop), or NULL */
	bool forwarding;    /* our handlers are installed; old holds the caller's */
	unsigned signals;   /* forwarded signals that arrived while it was followed */
	struct sigaction old[NFWD];
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Only async-signal-safe calls between fork and exec: the parent may have threads. */
static void __attribute__((noreturn))
child_main(char *const argv[], const char *path, char *const envp[], const char *cwd,
	   const int *keep, size_t nkeep, int go_rd, int err_wr, pid_t parent,
	   const sigset_t *mask)
{
	char c;
	ssize_t r;
	int e;

	/* a caller killed with SIGKILL leaves no program running behind it; the parent may
	 * have died before the prctl, which then arms nothing: compare with the pid read
	 * before the fork (getppid is the reaper's by then) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	/* held, it takes a stop signal as the program would: the caller's handlers (a
	 * flag set in this copy of its memory, then the program released all the same)
	 * lost a Ctrl-C that came before the exec. What the caller ignores stays ignored,
	 * as across exec. The signals were blocked over the fork: one sent meanwhile is
	 * delivered now, to the default action. */
	for (size_t i = 0; i < ARRAY_SIZE(fwd_signals); i++) {
		struct sigaction old, dfl = { .sa_handler = SIG_DFL };

		if (!sigaction(fwd_signals[i], NULL, &old) && old.sa_handler != SIG_IGN)
			sigaction(fwd_signals[i], &dfl, NULL);
	}
	sigprocmask(SIG_SETMASK, mask, NULL);
	do
		r = read(go_rd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		_exit(127);     /* the parent gave up on us before releasing */
	close(go_rd);
	if (cwd && chdir(cwd) < 0) {
		e = errno;
		goto out_tell_parent;
	}
	/* inherited by the program, and by nothing else the caller starts */
	for (size_t i = 0; i < nkeep; i++)
		if (fcntl(keep[i], F_SETFD, 0) < 0) {
			e = errno;
			goto out_tell_parent;
		}
	/* the path found before the fork: one execve, not one per directory of PATH
	 * before it; any failure (a script without "#!", which execvp gives to /bin/sh,
	 * a file gone since) leaves the answer to execvp's own search */
	if (path)
		execve(path, argv, envp ? envp : environ);
	if (envp)
		execvpe(argv[0], argv, envp);
	else
		execvp(argv[0], argv);
	e = errno;
out_tell_parent:
	while (write(err_wr, &e, sizeof(e)) < 0 && errno == EINTR)
		;
	_exit(127);
}

/* The environment the program gets: this process's, with each NAME=VALUE of add put in
 * (replacing a variable of the same name). Made before fork: between fork and exec only
 * async-signal-safe calls may run. The strings are not copied; free the array only. */
static char **env_with(char *const *add)
{
	size_t n = 0, na = 0, k = 0;
	char **env;

	while (environ && environ[n])
		n++;
	while (add[na])
		na++;
	env = calloc(n + na + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;
		for (size_t j = 0; j < na && !replaced; j++) {
			const char *eq = strchr(add[j], '=');
			size_t len = eq ? (size_t)(eq - add[j]) + 1 : strlen(add[j]);
			replaced = !strncmp(environ[i], add[j], len);
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < na; j++)
		env[k++] = add[j];
	return env;
}

/* Every field of the options is optional: the first version is sz alone. */
#define TC_OPTS_V1_tacho_child_opts tc_offsetofend(struct tacho_child_opts, sz)

int tacho_child_start(char *const argv[], const struct tacho_child_opts *opts,
		      struct tacho_child **out)
{
	char **envp = NULL, *path = NULL;
	struct tacho_child *c;
	int go[2], er[2];
	const char *cwd = NULL;
	const int *keep = NULL;
	size_t nkeep = 0;
	pid_t parent = getpid();
	sigset_t block, mask;
	int err;

	if (!argv || !argv[0] || !argv[0][0] || !out)
		return -EINVAL;
	err = TC_OPTS_VALID(opts, tacho_child_opts);
	if (err)
		return err;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	cwd = TC_OPTS_GET(opts, tacho_child_opts, cwd, NULL);
	c->forward = TC_OPTS_GET(opts, tacho_child_opts, forward_signals, false);
	if (TC_OPTS_HAS(opts, tacho_child_opts, ninherit_fds) && opts->inherit_fds) {
		keep = opts->inherit_fds;
		nkeep = opts->ninherit_fds;
	}
	c->stop = TC_OPTS_GET(opts, tacho_child_opts, stop, NULL);
	if (TC_OPTS_GET(opts, tacho_child_opts, env, NULL)) {
		envp = env_with(opts->env);
		if (!envp) {
			free(c);
			return -ENOMEM;
		}
	}
	/* PATH searched here, as execvp would (tc_path_lookup): only a path from the
	 * root is kept, since a relative one would be taken from the program's cwd */
	if (!strchr(argv[0], '/') && tc_path_lookup(argv[0], &path) == 0 && path[0] != '/') {
		free(path);
		path = NULL;
	}
	/* a socket rather than a pipe: releasing a child that died held must not raise
	 * SIGPIPE in the caller (send with MSG_NOSIGNAL) */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) < 0) {
		err = -errno;
		goto out_free;
	}
	if (pipe2(er, O_CLOEXEC) < 0) {
		err = -errno;
		goto out_close_go;
	}
	/* the stop signals blocked over the fork, so that none is taken by the caller's
	 * handlers in the child before child_main sets their default */
	sigemptyset(&block);
	for (size_t i = 0; i < ARRAY_SIZE(fwd_signals); i++)
		sigaddset(&block, fwd_signals[i]);
	pthread_sigmask(SIG_BLOCK, &block, &mask);
	c->pid = fork();
	if (c->pid == 0) {
		close(go[1]);
		close(er[0]);
		child_main(argv, path, envp, cwd, keep, nkeep, go[0], er[1], parent, &mask);
	}
	err = c->pid < 0 ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	if (err)
		goto out_close_er;
	free(envp);
	free(path);
	close(go[0]);
	close(er[1]);
	c->go_fd = go[1];
	c->err_fd = er[0];
	c->state = CH_HELD;
	*out = c;
	return 0;
out_close_er:
	close(er[0]);
	close(er[1]);
out_close_go:
	close(go[0]);
	close(go[1]);
out_free:
	free(envp);
	free(path);
	free(c);
	return err;
}

pid_t tacho_child_pid(const struct tacho_child *c)
{
	return c ? c->pid : -1;
}

/* Signal forwarding: one child at a time (the handler cannot carry a pointer). */
static volatile sig_atomic_t fwd_pid;
static volatile sig_atomic_t fwd_count;   /* signals taken while forwarding */

static void fwd_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	(void)uc;

	if (fwd_pid <= 0 || (si && si->si_pid == fwd_pid && si->si_code <= 0)) {
		errno = saved;
		return;   /* the program signalling its parent is not the user asking */
	}
	/* A second signal: the program ignored the first or is stuck in it, and the user
	 * means it (as record does, and perf). From the terminal (si_code SI_KERNEL) the
	 * child, in the same foreground process group, got a first signal itself; from
	 * kill(2) (si_code <= 0: SI_USER, SI_QUEUE, SI_TKILL) only tacho did, so pass it
	 * on. Either way tacho keeps going, waits for the program and prints what it
	 * counted; the caller sees the count (tacho_child_signals) and stops there. */
	if (++fwd_count >= 2)
		kill((pid_t)fwd_pid, SIGKILL);
	else if (si && si->si_code <= 0)
		kill((pid_t)fwd_pid, sig);
	errno = saved;
}

static void forward_start(struct tacho_child *c)
{
	struct sigaction sa;

	if (!c->forward || c->forwarding)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fwd_handler;
	sa.sa_flags = SA_SIGINFO;   /* no SA_RESTART: wait4 sees EINTR and loops */
	sigemptyset(&sa.sa_mask);
	fwd_count = 0;
	fwd_pid = c->pid;
	for (size_t i = 0; i < ARRAY_SIZE(fwd_signals); i++)
		sigaction(fwd_signals[i], &sa, &c->old[i]);
	c->forwarding = true;
}

static void forward_stop(struct tacho_child *c)
{
	if (!c->forwarding)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(fwd_signals); i++)
		sigaction(fwd_signals[i], &c->old[i], NULL);
	fwd_pid = 0;
	c->signals = (unsigned)fwd_count;
	c->forwarding = false;
}

int tacho_child_exec(struct tacho_child *c, int *exec_err)
{
	char go = 'g';
	int e = 0;
	ssize_t r;

	if (exec_err)
		*exec_err = 0;
	if (!c || c->state != CH_HELD)
		return -EINVAL;
	/* from the moment the program may run, a Ctrl-C must stop it, not the caller */
	forward_start(c);
	if (c->forwarding && c->stop && *c->stop) {
		/* the caller's handler took a stop signal before ours were in place: not
		 * forwarded, it would be lost, and the program run to its end. It ends the
		 * held child instead, as it would have a moment later; a child that ignores
		 * it reads the end of the socket and leaves */
		int sig = *c->stop > 0 && *c->stop < NSIG ? *c->stop : SIGTERM;

		kill(c->pid, sig);
		close_fd(&c->go_fd);
		close_fd(&c->err_fd);
		c->state = CH_RUNNING;
		return 0;
	}
	do
		r = send(c->go_fd, &go, 1, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	close_fd(&c->go_fd);
	if (r != 1) {
		/* the child is gone before it was released: a stop signal forwarded to it
		 * ended it as it would have ended the program (its status says so), anything
		 * else is a start that failed */
		siginfo_t si = { 0 };

		if (!waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOWAIT) &&
		    (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)) {
			close_fd(&c->err_fd);
			c->state = CH_RUNNING;
			return 0;
		}
		e = ESRCH;
		goto out_reap;
	}
	/* EOF: exec succeeded and closed the pipe; an int: exec's errno */
	do
		r = read(c->err_fd, &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close_fd(&c->err_fd);
	if (r == 0) {
		c->state = CH_RUNNING;
		return 0;
	}
	if (r != (ssize_t)sizeof(e))
		e = EIO;
out_reap:
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	forward_stop(c);
	c->state = CH_REAPED;
	if (exec_err)
		*exec_err = e;
	return -TACHO_ENOSTART;
}

int tacho_child_wait(struct tacho_child *c, struct tacho_exit *st)
{
	struct rusage ru;
	int status = 0;
	pid_t r;

	if (!c || c->state != CH_RUNNING)
		return -EINVAL;
	forward_start(c);
	memset(&ru, 0, sizeof(ru));
	for (;;) {
		r = wait4(c->pid, &status, WUNTRACED, &ru);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;     /* still forwarding: the child is still ours */
		if (!WIFSTOPPED(status))
			break;
		/* A program that stops itself (raise(SIGSTOP), a terminal stop signal with
		 * nobody to continue it) would be waited for forever: say it and continue
		 * it, as a debugger or a shell's fg would, so that the measurement ends
		 * (docs/stat.md). Its stopped time counts in the wall time only. */
		tc_log(TACHO_LOG_WARN, "the program (pid %d) stopped itself (SIG%s): continuing "
		       "it (SIGCONT)", (int)c->pid,
		       sigabbrev_np(WSTOPSIG(status)) ? sigabbrev_np(WSTOPSIG(status)) : "?");
		kill(c->pid, SIGCONT);
	}
	forward_stop(c);
	c->state = CH_REAPED;
	if (st) {
		memset(st, 0, sizeof(*st));
		if (WIFEXITED(status)) {
			st->exited = true;
			st->code = WEXITSTATUS(status);
			st->status = st->code;
		} else if (WIFSIGNALED(status)) {
			st->signal = WTERMSIG(status);
			st->status = 128 + st->signal;
			st->core_dumped = WCOREDUMP(status);
		}
		st->user_ns = (uint64_t)ru.ru_utime.tv_sec * 1000000000u +
			      (uint64_t)ru.ru_utime.tv_usec * 1000u;
		st->sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u +
			     (uint64_t)ru.ru_stime.tv_usec * 1000u;
		st->max_rss_kb = ru.ru_maxrss;
	}
	return 0;
}

unsigned tacho_child_signals(const struct tacho_child *c)
{
	if (!c)
		return 0;
	return c->forwarding ? (unsigned)fwd_count : c->signals;
}

int tacho_child_kill(struct tacho_child *c, int sig)
{
	if (!c)
		return -EINVAL;
	if (c->state == CH_REAPED)
		return -ESRCH;
	return kill(c->pid, sig) < 0 ? -errno : 0;
}

void tacho_child_free(struct tacho_child *c)
{
	if (!c)
		return;
	if (c->state != CH_REAPED) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	forward_stop(c);
	close_fd(&c->go_fd);
	close_fd(&c->err_fd);
	free(c);
}

char *tacho_exit_describe(const struct tacho_exit *st, char *buf, size_t size)
{
	if (!size)
		return buf;
	if (st->signal) {
		const char *abbr = sigabbrev_np(st->signal);
		snprintf(buf, size, "killed by signal %d (%s%s)%s", st->signal,
			 abbr ? "SIG" : "", abbr ? abbr : "unknown",
			 st->core_dumped ? ", core dumped" : "");
	} else {
		snprintf(buf, size, "exited with status %d", st->code);
	}
	return buf;
}

char *tacho_exec_strerror(const char *program, int exec_err, char *buf, size_t size)
{
	const char *why;
	bool has_slash = program && strchr(program, '/');

	if (exec_err < 0)
		exec_err = -exec_err;
	switch (exec_err) {
	case ENOENT:
		why = has_slash ? "no such file" : "no such program in PATH";
		break;
	case EACCES:
		why = "permission denied (not executable, or a folder on the way is not "
		      "searchable)";
		break;
	case ENOEXEC:
		why = "not an executable format this kernel runs (a script without '#!'?)";
		break;
	case ENOTDIR:
		why = "a component of the path is not a folder";
		break;
	case ELOOP:
		why = "too many symbolic links in the path";
		break;
	case E2BIG:
		why = "the argument list and environment are too long";
		break;
	case ETXTBSY:
		why = "the file is open for writing by another process";
		break;
	case EISDIR:
		why = "it is a folder";
		break;
	default:
		why = tacho_strerror(-exec_err);
		break;
	}
	snprintf(buf, size, "cannot run '%s': %s", program ? program : "", why);
	return buf;
}
