/* tacho/run.h - libtacho's public interface: launching and following a program to
 * measure.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_RUN_H
#define TACHO_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Launching a program (lib/run) ---
 * tacho_child_start forks; the child waits on a pipe until tacho_child_exec releases it,
 * so that counters can be attached to its pid before it runs a single instruction of
 * the program. Its stdin, stdout and stderr are those of the caller, untouched. */

struct tacho_child;

/* Options (docs/architecture.md, "An API that can grow"): sz first; fields the caller's
 * sz does not cover take their defaults. */
struct tacho_child_opts {
	size_t sz;                  /* sizeof(struct tacho_child_opts) */
	bool forward_signals;       /* from tacho_child_exec until tacho_child_wait returns:
				       SIGINT, SIGTERM, SIGHUP, SIGQUIT sent to this process
				       by another process are passed on to the child; from
				       the terminal (Ctrl-C) the child gets them itself and
				       this process ignores them, so that the caller lives
				       to print its counts. A second such signal kills the
				       child (SIGKILL). tacho_child_signals counts them. The
				       caller's handlers are restored afterwards. One child
				       at a time. */
	const char *cwd;            /* NULL: the caller's */
	char *const *env;           /* NULL-terminated NAME=VALUE strings put into the
				       program's environment (replacing the caller's
				       variable of that name); NULL: the caller's as it is */
	const int *inherit_fds;     /* descriptors the program inherits though they are
				       close-on-exec here (as every descriptor of the
				       caller's should be): the flag is cleared in the
				       child only, between fork and exec, so that no other
				       program the caller starts gets them; NULL: none */
	size_t ninherit_fds;
	volatile int *stop;         /* with forward_signals: the caller's stop flag, set by
				       its handler of a stop signal to the signal's number
				       (any other non-zero value stands for SIGTERM). A
				       signal the caller's handler took before forwarding
				       began is not lost: tacho_child_exec then ends the
				       held child with it instead of releasing the program,
				       and tacho_child_wait reports it killed by it. NULL:
				       none */
};

/* How a program ended. Fixed (docs/architecture.md, "An API that can grow"): it is
 * filled into the caller's storage by tacho_child_wait and held by value in struct
 * tacho_record_result, so its layout never changes; another fact about an ending would
 * be a new struct. */
struct tacho_exit {
	int status;        /* as a shell says it: the exit code, or 128 + the signal */
	bool exited;       /* it called exit(): code is valid */
	int code;          /* exit code */
	int signal;        /* the signal that killed it, else 0 */
	bool core_dumped;
	uint64_t user_ns, sys_ns;   /* CPU time of the program and its waited-for children */
	long max_rss_kb;
};

/* Forks a child that will run argv[0] (searched in PATH as execvp does) with argv.
 * Returns 0 and *out; -EINVAL (no program, opts->sz 0), -TACHO_EVERSION (opts set a
 * field past the struct this library knows: a program built against a newer tacho.h),
 * or -errno (fork, pipe). The child has not run the program yet.
 * The child is killed (SIGKILL, PR_SET_PDEATHSIG) when the thread that started it
 * ends, so that a caller killed outright leaves nothing running: start it from a
 * thread that outlives it (a set-user-ID program it execs drops that tie).
 * The caller owns *out: tacho_child_free. Not thread-safe with respect to other
 * threads that fork. */
TACHO_API int tacho_child_start(char *const argv[], const struct tacho_child_opts *opts,
				struct tacho_child **out);

/* The child's process id (valid until tacho_child_free). */
TACHO_API pid_t tacho_child_pid(const struct tacho_child *c);

/* Lets the child run the program and waits until the exec has happened or failed.
 * Returns 0 once the program runs, or once the child has ended by a signal before its
 * exec (a stop signal forwarded to it, or the caller's opts->stop: the held child takes
 * stop signals as the program would, by their default action; tacho_child_wait reports
 * it); -TACHO_ENOSTART when it could not be started, with the reason as *exec_err (e.g.
 * ENOENT: no such program, EACCES: not executable), the child then already reaped;
 * -EINVAL when called twice. exec_err may be NULL. */
TACHO_API int tacho_child_exec(struct tacho_child *c, int *exec_err);

/* Waits for the program to end and fills *st (may be NULL). Forwards signals as the
 * options said. A program that stops (SIGSTOP, SIGTSTP...) is continued (SIGCONT)
 * with a warning through the log callback, so that the wait ends. Returns 0, or
 * -errno of wait4, -EINVAL if the child was never released or already waited for. */
TACHO_API int tacho_child_wait(struct tacho_child *c, struct tacho_exit *st);

/* How many of the forwarded signals (forward_signals) this process took while it
 * followed the child: 0 when none, nor when forwarding was off. A caller that repeats
 * the program stops after this run when it is not 0. */
TACHO_API unsigned tacho_child_signals(const struct tacho_child *c);

/* Sends sig to the child. 0 or -errno (-ESRCH once it is reaped). */
TACHO_API int tacho_child_kill(struct tacho_child *c, int sig);

/* Kills (SIGKILL) and reaps a child that was never waited for, then frees. NULL-safe. */
TACHO_API void tacho_child_free(struct tacho_child *c);

/* Describes an ending in words: "exited with status 3", "killed by signal 11
 * (SIGSEGV), core dumped". Returns buf. Thread-safe. */
TACHO_API char *tacho_exit_describe(const struct tacho_exit *st, char *buf, size_t size);

/* Describes why a program could not be started: "cannot run 'frob': no such program
 * in PATH" (exec_err ENOENT), "... permission denied (not executable?)" and so on. */
TACHO_API char *tacho_exec_strerror(const char *program, int exec_err, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_RUN_H */
