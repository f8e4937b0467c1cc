/* trace-sys.c - a program whose system calls and wake-ups are known, for the summary
 * of tacho trace (-s, --sched-latency) in tests/e2e/test-cmd-trace.c.
 *
 *   trace-sys calls        a thread of its own makes exactly 1,000 writes to /dev/null
 *                          and 10 opens of a missing file (ENOENT), then 1 open of
 *                          /dev/null and its close; it prints the thread's id
 *   trace-sys pingpong N   two threads wake each other N times each through two pipes;
 *                          each prints its id and its voluntary context switches
 *                          (getrusage RUSAGE_THREAD: the kernel's own count of the
 *                          times it blocked, each ended by a wake-up) */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int calls_tid;

static void *calls(void *arg)
{
	int fd = open("/dev/null", O_WRONLY);
	char c = 'x';

	(void)arg;
	calls_tid = gettid();
	if (fd < 0)
		return (void *)1;
	for (int i = 0; i < 1000; i++)
		if (write(fd, &c, 1) != 1)
			return (void *)1;
	for (int i = 0; i < 10; i++)
		if (open("/nonexistent/tacho-trace-sys", O_RDONLY) >= 0)
			return (void *)1;
	close(fd);
	return NULL;
}

static int pipes[2][2];
static long rounds;

struct player {
	int me;
	int tid;
	long nvcsw;
};

static void *play(void *arg)
{
	struct player *p = arg;
	struct rusage ru;
	char c = 'x';

	p->tid = gettid();
	for (long i = 0; i < rounds; i++) {
		/* player 0 serves: writes, then waits for the reply; player 1 replies */
		if (p->me == 0 && write(pipes[0][1], &c, 1) != 1)
			return (void *)1;
		if (read(pipes[1 - p->me][0], &c, 1) != 1)
			return (void *)1;
		if (p->me == 1 && write(pipes[1][1], &c, 1) != 1)
			return (void *)1;
	}
	getrusage(RUSAGE_THREAD, &ru);
	p->nvcsw = ru.ru_nvcsw;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	void *ret;

	if (argc == 2 && !strcmp(argv[1], "calls")) {
		if (pthread_create(&th[0], NULL, calls, NULL) || pthread_join(th[0], &ret) || ret)
			return 1;
		printf("calls %d\n", calls_tid);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "pingpong")) {
		struct player pl[2] = { { .me = 0 }, { .me = 1 } };
		rounds = atol(argv[2]);
		if (rounds <= 0 || pipe(pipes[0]) || pipe(pipes[1]))
			return 2;
		for (int i = 0; i < 2; i++)
			if (pthread_create(&th[i], NULL, play, &pl[i]))
				return 1;
		for (int i = 0; i < 2; i++)
			if (pthread_join(th[i], &ret) || ret)
				return 1;
		for (int i = 0; i < 2; i++)
			printf("player %d nvcsw %ld\n", pl[i].tid, pl[i].nvcsw);
		return 0;
	}
	fprintf(stderr, "usage: trace-sys calls | pingpong N\n");
	return 2;
}
