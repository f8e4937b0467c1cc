/* fault-helper.c - a program that misbehaves on purpose, for the fault tests of
 * `tacho stat` (tests/e2e/test-stat-faults.c). Every mode that waits gives up by itself
 * after 60 s of wall time (exit 3), so that a broken tacho cannot hang the suite.
 *
 *   fault-helper survive READY     note SIGINT/SIGTERM, then end normally (exit 0);
 *                                  READY is created once the handlers are in place
 *   fault-helper pid FILE          write its pid into FILE, then sleep
 *   fault-helper stop              stop itself (SIGSTOP), then exit 0 once continued
 *   fault-helper forks N           fork N children that each write(2) one byte to
 *                                  /dev/null and exit; wait for them all
 *   fault-helper threads N         start N threads that each write(2) one byte to
 *                                  /dev/null; join them all
 *   fault-helper exec PROG ARGS... exec PROG with ARGS
 *   fault-helper crash             die of SIGSEGV
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got;
static int devnull = -1;

static void on_signal(int sig)
{
	(void)sig;
	got = 1;
}

static void nap(void)
{
	struct timespec ts = { 0, 1000 * 1000 };

	nanosleep(&ts, NULL);
}

static int give_up_in_60s(time_t t0)
{
	return time(NULL) - t0 > 60;
}

static void *one_write(void *arg)
{
	(void)arg;
	if (write(devnull, "x", 1) != 1)
		return (void *)1;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	time_t t0 = time(NULL);

	devnull = open("/dev/null", O_WRONLY);
	if (!strcmp(cmd, "survive") && argc > 2) {
		struct sigaction sa;
		int fd;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0)
			close(fd);
		while (!got)
			if (nap(), give_up_in_60s(t0))
				return 3;
		return 0;
	}
	if (!strcmp(cmd, "pid") && argc > 2) {
		FILE *f = fopen(argv[2], "w");

		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			return 2;
		while (!give_up_in_60s(t0))
			nap();
		return 3;
	}
	if (!strcmp(cmd, "stop")) {
		raise(SIGSTOP);
		return 0;
	}
	if (!strcmp(cmd, "forks")) {
		for (long i = 0; i < n; i++) {
			pid_t pid = fork();
			if (pid < 0)
				return 2;
			if (pid == 0)
				_exit(one_write(NULL) ? 2 : 0);
		}
		for (long i = 0; i < n; i++) {
			int st;
			if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
				return 2;
		}
		return 0;
	}
	if (!strcmp(cmd, "threads")) {
		pthread_t *t = calloc((size_t)(n > 0 ? n : 1), sizeof(*t));

		for (long i = 0; i < n; i++)
			if (pthread_create(&t[i], NULL, one_write, NULL))
				return 2;
		for (long i = 0; i < n; i++) {
			void *ret;
			if (pthread_join(t[i], &ret) || ret)
				return 2;
		}
		free(t);
		return 0;
	}
	if (!strcmp(cmd, "exec") && argc > 2) {
		execv(argv[2], argv + 2);
		return 127;
	}
	if (!strcmp(cmd, "crash")) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		return 2;
	}
	fprintf(stderr, "usage: fault-helper survive READY | pid FILE | stop | forks N | "
		"threads N | exec PROG ARGS... | crash\n");
	return 2;
}
