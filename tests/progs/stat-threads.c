/* stat-threads.c - threads and cgroups with exactly known write(2) counts, for the
 * breakdowns of `tacho stat` (tests/e2e/test-stat-breakdown.c). Built static and not
 * position-independent like every helper of tests/progs.
 *
 *   stat-threads threads W1 W2 ...  one thread per W, thread i named "writer-i" and
 *                                   making Wi one-byte writes to /dev/null; the first
 *                                   thread makes none and joins them
 *   stat-threads wait W1 W2 ...     the same, but the threads start writing only once
 *                                   a byte arrives on standard input (for -p)
 *   stat-threads spin MS N          N threads, each spinning MS ms by the clock
 *   stat-threads rw R1 W1 R2 W2 ... one thread per pair, thread i named "rw-i" making
 *                                   Ri one-byte reads of /dev/zero and Wi writes to
 *                                   /dev/null, yielding the CPU after each, so that
 *                                   the threads switch to one another often; the
 *                                   first thread makes none and joins them
 *   stat-threads cgroup DIR N M     a child process joins the cgroup DIR (writes its
 *                                   pid to DIR/cgroup.procs) and makes N writes; the
 *                                   parent, outside, makes M and waits for it
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

struct writer {
	pthread_t thread;
	int index;
	long writes;
	int gate;              /* a descriptor to read one byte from first, or -1 */
};

static int devnull;

static void writes(long n)
{
	for (long i = 0; i < n; i++)
		if (write(devnull, "x", 1) != 1)
			exit(3);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char name[16], c;

	snprintf(name, sizeof(name), "writer-%d", w->index);
	pthread_setname_np(pthread_self(), name);
	if (w->gate >= 0 && read(w->gate, &c, 1) != 1)
		exit(4);
	writes(w->writes);
	return NULL;
}

static int threads(int argc, char **argv, bool gate)
{
	int n = argc - 2, pipefd[2] = { -1, -1 };
	struct writer *w = calloc((size_t)(n > 0 ? n : 1), sizeof(*w));

	if (!w)
		return 2;
	/* every waiting thread gets its byte from one pipe filled from stdin */
	if (gate && pipe(pipefd))
		return 2;
	for (int i = 0; i < n; i++) {
		w[i].index = i + 1;
		w[i].writes = strtol(argv[i + 2], NULL, 10);
		w[i].gate = pipefd[0];
		if (pthread_create(&w[i].thread, NULL, writer_main, &w[i]))
			return 2;
	}
	if (gate) {
		char c;
		/* ready: the threads exist (the test reads this line) */
		printf("ready\n");
		fflush(stdout);
		if (read(0, &c, 1) != 1)
			return 4;
		for (int i = 0; i < n; i++)
			if (write(pipefd[1], "g", 1) != 1)
				return 3;
	}
	for (int i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);
	free(w);
	return 0;
}

static int cgroup(const char *dir, long n, long m)
{
	char path[4096], pid[32];
	int status, fd;
	pid_t child = fork();

	if (child < 0)
		return 2;
	if (child == 0) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
		fd = open(path, O_WRONLY);
		/* this write enters the kernel outside the cgroup: not one of the N */
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0)
			_exit(5);
		close(fd);
		writes(n);
		_exit(0);
	}
	writes(m);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 6;
	return WEXITSTATUS(status);
}

struct rw {
	pthread_t thread;
	int index;
	long reads, writes;
};

static void *rw_main(void *arg)
{
	struct rw *t = arg;
	char name[16], c;
	int zero = open("/dev/zero", O_RDONLY);

	snprintf(name, sizeof(name), "rw-%d", t->index);
	pthread_setname_np(pthread_self(), name);
	if (zero < 0)
		exit(2);
	for (long i = 0; i < t->reads || i < t->writes; i++) {
		if (i < t->reads && read(zero, &c, 1) != 1)
			exit(3);
		if (i < t->writes && write(devnull, "x", 1) != 1)
			exit(3);
		sched_yield();
	}
	close(zero);
	return NULL;
}

static int rw(int argc, char **argv)
{
	int n = (argc - 2) / 2;
	struct rw *t = calloc((size_t)(n > 0 ? n : 1), sizeof(*t));

	if (!t || argc < 4 || argc % 2)
		return 2;
	for (int i = 0; i < n; i++) {
		t[i].index = i + 1;
		t[i].reads = strtol(argv[2 + 2 * i], NULL, 10);
		t[i].writes = strtol(argv[3 + 2 * i], NULL, 10);
		if (pthread_create(&t[i].thread, NULL, rw_main, &t[i]))
			return 2;
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i].thread, NULL);
	free(t);
	return 0;
}

/* N threads, each spinning MS ms by the clock (for the time a switched session counted:
 * their CPU time adds up past the wall time) */
static void *spinner(void *arg)
{
	long ms = *(const long *)arg;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ms * 1000000L);
	return NULL;
}

static int spin(long ms, long n)
{
	pthread_t t[64];

	if (n < 1 || n > 64)
		return 2;
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, spinner, &ms))
			return 1;
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0)
		return 2;
	if (!strcmp(cmd, "threads") || !strcmp(cmd, "wait"))
		return threads(argc, argv, !strcmp(cmd, "wait"));
	if (!strcmp(cmd, "rw"))
		return rw(argc, argv);
	if (!strcmp(cmd, "spin") && argc == 4)
		return spin(strtol(argv[2], NULL, 10), strtol(argv[3], NULL, 10));
	if (!strcmp(cmd, "cgroup") && argc == 5)
		return cgroup(argv[2], strtol(argv[3], NULL, 10), strtol(argv[4], NULL, 10));
	fprintf(stderr, "usage: stat-threads threads|wait W1 W2 ... | rw R1 W1 ... | spin MS N | "
		"cgroup DIR N M\n");
	return 2;
}
