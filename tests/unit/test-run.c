/* test-run.c - launching a program: exec failures reported by name and errno, exit
 * statuses passed through, deaths by signal (139 for SIGSEGV, 137 for SIGKILL), signal
 * forwarding while waiting, a stop signal before the exec not lost. The test binary is
 * its own helper program ("--helper"). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "spawn.h"
#include "util/util.h"

static char self_exe[4096];

static int helper(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strcmp(argv[2], "exit"))
		return argc > 3 ? atoi(argv[3]) : 0;
	if (!strcmp(argv[2], "segv")) {
		struct rlimit rl = { 0, 0 };
		setrlimit(RLIMIT_CORE, &rl);      /* no core file: the status says so */
		signal(SIGSEGV, SIG_DFL);         /* ASan catches it otherwise */
		raise(SIGSEGV);
		return 3;
	}
	if (!strcmp(argv[2], "pause")) {
		pause();
		return 4;
	}
	if (!strcmp(argv[2], "env")) {       /* 21 when TC_A=1 and TC_B=new, TC_C unset */
		const char *a = getenv("TC_A"), *b = getenv("TC_B");
		return a && !strcmp(a, "1") && b && !strcmp(b, "new") && !getenv("TC_C") ? 21 : 22;
	}
	if (!strcmp(argv[2], "fd") && argc > 3) {   /* 23 when descriptor argv[3] is open */
		return fcntl(atoi(argv[3]), F_GETFD) >= 0 ? 23 : 24;
	}
	if (!strcmp(argv[2], "pwd")) {       /* prints its working directory */
		char buf[4096];
		if (!getcwd(buf, sizeof(buf)))
			return 5;
		return strcmp(buf, "/") == 0 ? 17 : 18;
	}
	return 2;
}

static int run(const char *what, const char *arg, const struct tacho_child_opts *opts,
	       struct tacho_exit *ex)
{
	char *argv[] = { self_exe, (char *)"--helper", (char *)what, (char *)arg, NULL };
	struct tacho_child *ch;
	int e;

	assert_int_equal(tacho_child_start(argv, opts, &ch), 0);
	assert_true(tacho_child_pid(ch) > 0);
	assert_int_equal(tacho_child_exec(ch, &e), 0);
	assert_int_equal(e, 0);
	assert_int_equal(tacho_child_wait(ch, ex), 0);
	tacho_child_free(ch);
	return ex->status;
}

static void test_exit_status(void **state)
{
	static const char *const codes[] = { "0", "1", "42", "255" };
	struct tacho_exit ex;
	char buf[128];
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(codes); i++) {
		assert_int_equal(run("exit", codes[i], NULL, &ex), atoi(codes[i]));
		assert_true(ex.exited);
		assert_int_equal(ex.code, atoi(codes[i]));
		assert_int_equal(ex.signal, 0);
		snprintf(buf, sizeof(buf), "exited with status %s", codes[i]);
		assert_string_equal(tacho_exit_describe(&ex, buf + 64, 64), buf);
	}
}

static void test_crash(void **state)
{
	struct tacho_exit ex;
	char buf[128];
	(void)state;

	assert_int_equal(run("segv", NULL, NULL, &ex), 139);
	assert_false(ex.exited);
	assert_int_equal(ex.signal, SIGSEGV);
	assert_false(ex.core_dumped);
	assert_string_equal(tacho_exit_describe(&ex, buf, sizeof(buf)),
			    "killed by signal 11 (SIGSEGV)");
	ex.core_dumped = true;
	assert_string_equal(tacho_exit_describe(&ex, buf, sizeof(buf)),
			    "killed by signal 11 (SIGSEGV), core dumped");
}

static void test_killed(void **state)
{
	char *argv[] = { self_exe, (char *)"--helper", (char *)"pause", NULL };
	struct tacho_child *ch;
	struct tacho_exit ex;
	char buf[128];
	(void)state;

	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	assert_int_equal(tacho_child_exec(ch, NULL), 0);
	assert_int_equal(tacho_child_kill(ch, SIGKILL), 0);
	assert_int_equal(tacho_child_wait(ch, &ex), 0);
	assert_int_equal(ex.status, 137);
	assert_int_equal(ex.signal, SIGKILL);
	assert_string_equal(tacho_exit_describe(&ex, buf, sizeof(buf)),
			    "killed by signal 9 (SIGKILL)");
	/* reaped: no second wait, no kill */
	assert_int_equal(tacho_child_wait(ch, &ex), -EINVAL);
	assert_int_equal(tacho_child_kill(ch, SIGTERM), -ESRCH);
	tacho_child_free(ch);
}

static const struct {
	int line;
	const char *prog;
	int err;
	const char *msg;
} exec_cases[] = {
	{ __LINE__, "tacho-no-such-program-xyz", ENOENT,
	  "cannot run 'tacho-no-such-program-xyz': no such program in PATH" },
	{ __LINE__, "/nonexistent/dir/prog", ENOENT,
	  "cannot run '/nonexistent/dir/prog': no such file" },
	{ __LINE__, "/", EACCES, "cannot run '/': permission denied" },
	{ __LINE__, "/etc/passwd/x", ENOTDIR,
	  "cannot run '/etc/passwd/x': a component of the path is not a folder" },
};

static void test_exec_failures(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(exec_cases); i++) {
		char *argv[] = { (char *)exec_cases[i].prog, NULL };
		struct tacho_child *ch;
		struct tacho_exit ex;
		char buf[256];
		int e = -1;

		assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
		if (tacho_child_exec(ch, &e) != -TACHO_ENOSTART || e != exec_cases[i].err)
			fail_msg("case at line %d: exec error %d, want %d", exec_cases[i].line, e,
				 exec_cases[i].err);
		tacho_exec_strerror(exec_cases[i].prog, e, buf, sizeof(buf));
		if (!tc_starts_with(buf, exec_cases[i].msg))
			fail_msg("case at line %d: \"%s\"", exec_cases[i].line, buf);
		/* already reaped: nothing to wait for */
		assert_int_equal(tacho_child_wait(ch, &ex), -EINVAL);
		assert_int_equal(tacho_child_exec(ch, &e), -EINVAL);
		tacho_child_free(ch);
	}
}

static void test_not_executable(void **state)
{
	char path[] = "/tmp/tacho-test-run-XXXXXX";
	char *argv[] = { path, NULL };
	struct tacho_child *ch;
	char buf[256];
	int fd, e;
	(void)state;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x7f" "ELF-not-really", 15), 15);
	close(fd);
	chmod(path, 0644);
	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	assert_int_equal(tacho_child_exec(ch, &e), -TACHO_ENOSTART);
	tacho_child_free(ch);
	/* root too: execve needs an execute bit on a regular file */
	assert_int_equal(e, EACCES);
	assert_contains(tacho_exec_strerror(path, e, buf, sizeof(buf)), "permission denied");
	/* ENOEXEC never comes back from execvp (it hands such files to /bin/sh, as a shell
	 * does); its sentence still exists for callers that use execv */
	assert_contains(tacho_exec_strerror(path, ENOEXEC, buf, sizeof(buf)),
			"not an executable format");
	assert_contains(tacho_exec_strerror(path, -E2BIG, buf, sizeof(buf)), "too long");
	assert_contains(tacho_exec_strerror("x", EIO, buf, sizeof(buf)),
			"cannot run 'x': Input/output error");
	unlink(path);
}

/* A name searched in PATH before the fork, as execvp searches it: a directory whose file
 * of that name cannot be run is passed over for the next, and a script without "#!"
 * still runs (execvp gives it to /bin/sh; the path found first cannot run it). */
static void test_path_search(void **state)
{
	char dir[] = "/tmp/tacho-test-path-XXXXXX", a[64], b[64], f[128], path[512];
	char name[] = "tc-path-prog";
	char *argv[] = { name, NULL };
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	struct tacho_child *ch;
	struct tacho_exit ex;
	FILE *fp;
	int e;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	/* a/: a file of that name without an execute bit; b/: a script without "#!" */
	snprintf(f, sizeof(f), "%s/%s", a, name);
	fp = fopen(f, "w");
	assert_non_null(fp);
	fputs("exit 3\n", fp);
	fclose(fp);
	chmod(f, 0644);
	snprintf(f, sizeof(f), "%s/%s", b, name);
	fp = fopen(f, "w");
	assert_non_null(fp);
	fputs("exit 42\n", fp);
	fclose(fp);
	chmod(f, 0755);
	snprintf(path, sizeof(path), "%s:%s:/usr/bin:/bin", a, b);
	setenv("PATH", path, 1);

	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	assert_int_equal(tacho_child_exec(ch, &e), 0);
	assert_int_equal(tacho_child_wait(ch, &ex), 0);
	tacho_child_free(ch);
	assert_int_equal(ex.status, 42);

	if (saved)
		setenv("PATH", saved, 1);
	else
		unsetenv("PATH");
	free(saved);
	unlink(f);
	snprintf(f, sizeof(f), "%s/%s", a, name);
	unlink(f);
	rmdir(a);
	rmdir(b);
	rmdir(dir);
}

static void test_cwd(void **state)
{
	struct tacho_child_opts o = { .sz = sizeof(o), .cwd = "/" };
	struct tacho_child_opts bad = { .sz = sizeof(bad), .cwd = "/nonexistent-dir-xyz" };
	char *argv[] = { self_exe, (char *)"--helper", (char *)"pwd", NULL };
	struct tacho_child *ch;
	struct tacho_exit ex;
	int e;
	(void)state;

	assert_int_equal(run("pwd", NULL, &o, &ex), 17);
	assert_int_equal(tacho_child_start(argv, &bad, &ch), 0);
	assert_int_equal(tacho_child_exec(ch, &e), -TACHO_ENOSTART);
	assert_int_equal(e, ENOENT);
	tacho_child_free(ch);
}

/* env: variables added, one replaced, the caller's own environment untouched. */
static void test_env(void **state)
{
	char a[] = "TC_A=1", b[] = "TC_B=new";
	char *add[] = { a, b, NULL };
	struct tacho_child_opts o = { .sz = sizeof(o), .env = add };
	struct tacho_child_opts old = { .sz = offsetof(struct tacho_child_opts, env) };
	struct tacho_exit ex;
	(void)state;

	setenv("TC_B", "old", 1);
	unsetenv("TC_A");
	unsetenv("TC_C");
	assert_int_equal(run("env", NULL, &o, &ex), 21);
	assert_string_equal(getenv("TC_B"), "old");
	assert_null(getenv("TC_A"));
	/* a caller of the first version has no env field: the caller's environment */
	assert_int_equal(run("env", NULL, &old, &ex), 22);
	unsetenv("TC_B");
}

/* inherit_fds: a close-on-exec descriptor reaches the program, and stays close-on-exec
 * here (tacho trace's area: no other program tacho starts may get it). */
static void test_inherit_fds(void **state)
{
	int p[2];
	char num[16];
	struct tacho_exit ex;
	(void)state;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	snprintf(num, sizeof(num), "%d", p[0]);
	struct tacho_child_opts o = { .sz = sizeof(o), .inherit_fds = &p[0], .ninherit_fds = 1 };
	struct tacho_child_opts none = { .sz = sizeof(none) };
	struct tacho_child_opts old = { .sz = offsetof(struct tacho_child_opts, inherit_fds),
					.inherit_fds = &p[0], .ninherit_fds = 1 };
	assert_int_equal(run("fd", num, &o, &ex), 23);
	assert_int_equal(fcntl(p[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	assert_int_equal(run("fd", num, &none, &ex), 24);
	/* a caller whose sz ends before the field asked for nothing */
	assert_int_equal(run("fd", num, &old, &ex), 24);
	close(p[0]);
	close(p[1]);
}

static void test_free_unreleased(void **state)
{
	char *argv[] = { self_exe, (char *)"--helper", (char *)"exit", (char *)"0", NULL };
	struct tacho_child *ch;
	struct tacho_exit ex;
	(void)state;

	/* never released: free kills and reaps it, no zombie is left */
	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	pid_t pid = tacho_child_pid(ch);
	assert_int_equal(tacho_child_wait(ch, &ex), -EINVAL);
	tacho_child_free(ch);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
	tacho_child_free(NULL);
	assert_int_equal(tacho_child_start(NULL, NULL, &ch), -EINVAL);
	char *empty[] = { (char *)"", NULL };
	assert_int_equal(tacho_child_start(empty, NULL, &ch), -EINVAL);
}

/* --- forwarding: a SIGTERM sent to this process reaches the child --- */

static volatile sig_atomic_t stop_sender;

static void noop_handler(int sig)
{
	(void)sig;
}

static void *sender(void *arg)
{
	(void)arg;
	/* keep sending until the wait is over: whenever the first one lands inside
	 * tacho_child_wait, the child gets it; earlier ones hit the no-op handler */
	while (!stop_sender) {
		kill(getpid(), SIGTERM);
		usleep(5000);
	}
	return NULL;
}

static void test_forward_sigterm(void **state)
{
	struct tacho_child_opts o = { .sz = sizeof(o), .forward_signals = true };
	char *argv[] = { self_exe, (char *)"--helper", (char *)"pause", NULL };
	struct sigaction sa = { 0 }, old, after;
	struct tacho_child *ch;
	struct tacho_exit ex;
	pthread_t t;
	(void)state;

	sa.sa_handler = noop_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &old);
	assert_int_equal(tacho_child_start(argv, &o, &ch), 0);
	assert_int_equal(tacho_child_exec(ch, NULL), 0);
	stop_sender = 0;
	assert_int_equal(pthread_create(&t, NULL, sender, NULL), 0);
	assert_int_equal(tacho_child_wait(ch, &ex), 0);
	stop_sender = 1;
	pthread_join(t, NULL);
	assert_int_equal(ex.status, 128 + SIGTERM);
	assert_int_equal(ex.signal, SIGTERM);
	/* the caller's handler is back */
	sigaction(SIGTERM, NULL, &after);
	assert_true(after.sa_handler == noop_handler);
	sigaction(SIGTERM, &old, NULL);
	tacho_child_free(ch);
}

/* --- a stop before the program runs: not lost --- */

/* The caller's handler took a SIGINT before the forwarding began (the flag set): the
 * program is not released, the held child ends by the signal, and the wait says so.
 * And a SIGINT sent to the held child itself ends it by its default action (not by the
 * caller's handler, copied into it by the fork, which let the program run after). */
static void test_stop_before_exec(void **state)
{
	char *argv[] = { self_exe, (char *)"--helper", (char *)"pause", NULL };
	volatile int stop = SIGINT;
	struct tacho_child_opts o = { .sz = sizeof(o), .forward_signals = true, .stop = &stop };
	struct sigaction sa = { 0 }, old;
	struct tacho_child *ch;
	struct tacho_exit ex;
	double end;
	(void)state;

	assert_int_equal(tacho_child_start(argv, &o, &ch), 0);
	assert_int_equal(tacho_child_exec(ch, NULL), 0);
	assert_int_equal(tacho_child_wait(ch, &ex), 0);
	assert_int_equal(ex.signal, SIGINT);
	assert_int_equal(ex.status, 130);
	tacho_child_free(ch);

	/* the caller catches SIGINT, as tacho does; the held child does not */
	sa.sa_handler = noop_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	stop = 0;
	assert_int_equal(tacho_child_start(argv, &o, &ch), 0);
	assert_int_equal(kill(tacho_child_pid(ch), SIGINT), 0);
	/* until it is gone (a zombie), then the release finds it ended */
	for (end = th_now() + 30; th_now() < end; usleep(1000)) {
		siginfo_t si = { 0 };
		if (!waitid(P_PID, (id_t)tacho_child_pid(ch), &si, WEXITED | WNOHANG | WNOWAIT) &&
		    si.si_pid)
			break;
	}
	assert_int_equal(tacho_child_exec(ch, NULL), 0);
	assert_int_equal(tacho_child_wait(ch, &ex), 0);
	assert_int_equal(ex.signal, SIGINT);
	tacho_child_free(ch);
	sigaction(SIGINT, &old, NULL);
}

/* --- Ctrl-C on a terminal: the program stops, the caller lives on --- */

static void test_ctrl_c_on_terminal(void **state)
{
	int master, ready[2], st = 0;
	const char *slave;
	pid_t d;
	char c;
	(void)state;

	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0 || grantpt(master) || unlockpt(master) || !(slave = ptsname(master)))
		TEST_SKIP("no pseudo-terminal to type Ctrl-C on (%s)", strerror(errno));
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	fflush(NULL);
	d = fork();
	assert_true(d >= 0);
	if (d == 0) {
		/* the driver: a session of its own with the pty as its terminal, in the
		 * foreground, as tacho is in a shell */
		struct tacho_child_opts o = { .sz = sizeof(o), .forward_signals = true };
		char *argv[] = { self_exe, (char *)"--helper", (char *)"pause", NULL };
		struct tacho_child *ch;
		struct tacho_exit ex;
		int s;

		close(ready[0]);
		if (setsid() < 0 || (s = open(slave, O_RDWR)) < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
			_exit(20);
		if (tacho_child_start(argv, &o, &ch) || tacho_child_exec(ch, NULL))
			_exit(21);
		if (write(ready[1], "r", 1) != 1)
			_exit(22);
		if (tacho_child_wait(ch, &ex))
			_exit(23);
		/* the program died of the SIGINT the terminal sent its process group; the
		 * driver got one too, ignored it and is still here to say so */
		_exit(ex.signal == SIGINT && ex.status == 130 ? 0 : 24);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	/* type ^C until the driver is done: the first one may come before the program
	 * has set anything up, and the driver ignores every one of them */
	for (;;) {
		pid_t w = waitpid(d, &st, WNOHANG);
		if (w == d)
			break;
		assert_int_equal(write(master, "\x03", 1), 1);
		usleep(10000);
	}
	close(master);
	if (!WIFEXITED(st))
		fail_msg("the driver was killed by signal %d: Ctrl-C reached it", WTERMSIG(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status),    cmocka_unit_test(test_crash),
		cmocka_unit_test(test_killed),         cmocka_unit_test(test_exec_failures),
		cmocka_unit_test(test_not_executable), cmocka_unit_test(test_cwd),
		cmocka_unit_test(test_free_unreleased), cmocka_unit_test(test_forward_sigterm),
		cmocka_unit_test(test_ctrl_c_on_terminal), cmocka_unit_test(test_env),
		cmocka_unit_test(test_inherit_fds), cmocka_unit_test(test_path_search),
		cmocka_unit_test(test_stop_before_exec),
	};
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--helper"))
		return helper(argc, argv);
	n = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	if (n <= 0)
		return 1;
	self_exe[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
