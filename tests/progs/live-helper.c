/* live-helper.c - a program with known behaviour for the tests of tacho top, serve and
 * watch (tests/e2e/test-cmd-top.c, test-cmd-serve.c, test-cmd-watch.c). Static, like
 * every helper: no write(2) but its own.
 *
 *   live-helper paced N MS        exactly N writes of one byte to /dev/null per second,
 *                                 one every 1/N s on an absolute clock, for MS ms: N * MS
 *                                 / 1000 writes in all, then exit
 *   live-helper writes K          K writes at once, then exit
 *   live-helper spin MS           burn CPU for MS ms
 *   live-helper threads N MS      N threads that burn CPU for MS ms
 *   live-helper progress FILE CPU pinned to CPU, count units of work in FILE (a u64 at
 *                                 offset 0, mapped shared) for ever; one write per unit
 *                                 until SIGUSR1, none after
 *   live-helper toggle N          N writes per second, paced as above, for ever; each
 *                                 SIGUSR1 pauses or resumes them (it starts writing)
 *   live-helper wave HI LO MS     HI writes per second for MS ms, then LO for MS ms, and
 *                                 so on for ever
 *   live-helper burst N           each SIGUSR1: N writes at once; nothing else, for ever
 *   live-helper wait              sleep until a signal ends it
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t quiet, bursts;
static volatile unsigned long sink;

static void on_usr1(int sig)
{
	(void)sig;
	quiet = !quiet;
	bursts++;
}

/* Writes at rate(i) per second, one every 1/rate s on an absolute clock, for ever (or
 * total writes when total > 0); none while quiet. */
static int paced(int fd, long (*rate)(double t, void *arg), void *arg, long total)
{
	struct timespec t;
	double t0 = 0;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t0 = (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
	for (long i = 0; !total || i < total; i++) {
		long r = rate((double)t.tv_sec + (double)t.tv_nsec * 1e-9 - t0, arg);
		long long ns = 1000000000LL / (r > 0 ? r : 1);
		/* the next write's time on an absolute clock: a late wake-up catches up
		 * instead of drifting */
		t.tv_nsec += ns;
		while (t.tv_nsec >= 1000000000) {
			t.tv_nsec -= 1000000000;
			t.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL))
			;
		if (!quiet && write(fd, "x", 1) != 1)
			return 1;
	}
	return 0;
}

struct wave {
	long hi, lo, ms;
};

static long steady(double t, void *arg)
{
	(void)t;
	return *(long *)arg;
}

static long wave(double t, void *arg)
{
	const struct wave *w = arg;

	return (long)(t * 1000 / (double)w->ms) % 2 ? w->lo : w->hi;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void spin(double s)
{
	double end = now() + s;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 7;
}

static void *spin_thread(void *arg)
{
	spin(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	long a = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	long b = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	if (!strcmp(cmd, "paced") && a > 0 && b > 0)
		return paced(fd, steady, &a, a * b / 1000);
	if (!strcmp(cmd, "toggle") && a > 0) {
		signal(SIGUSR1, on_usr1);
		return paced(fd, steady, &a, 0);
	}
	if (!strcmp(cmd, "wave") && argc > 4) {
		struct wave w = { a, b, strtol(argv[4], NULL, 10) };
		if (w.hi <= 0 || w.lo <= 0 || w.ms <= 0)
			return 2;
		return paced(fd, wave, &w, 0);
	}
	if (!strcmp(cmd, "burst") && a > 0) {
		sig_atomic_t done = 0;
		sigset_t block, old;

		/* blocked but while waiting: no signal lost between the test and the wait */
		sigemptyset(&block);
		sigaddset(&block, SIGUSR1);
		sigprocmask(SIG_BLOCK, &block, &old);
		signal(SIGUSR1, on_usr1);
		for (;;) {
			while (done == bursts)
				sigsuspend(&old);
			done++;
			for (long i = 0; i < a; i++)
				if (write(fd, "x", 1) != 1)
					return 1;
		}
	}
	if (!strcmp(cmd, "writes")) {
		for (long i = 0; i < a; i++)
			if (write(fd, "x", 1) != 1)
				return 1;
		return 0;
	}
	if (!strcmp(cmd, "spin")) {
		spin((double)a / 1000);
		return 0;
	}
	if (!strcmp(cmd, "threads") && a > 0 && a < 64) {
		pthread_t th[64];
		double s = (double)b / 1000;
		for (long i = 0; i < a; i++)
			pthread_create(&th[i], NULL, spin_thread, &s);
		for (long i = 0; i < a; i++)
			pthread_join(th[i], NULL);
		return 0;
	}
	if (!strcmp(cmd, "progress") && argc > 3) {
		int pf = open(argv[2], O_RDWR | O_CREAT, 0644);
		volatile uint64_t *count;
		cpu_set_t set;

		if (pf < 0 || ftruncate(pf, 4096))
			return 1;
		count = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, pf, 0);
		if (count == MAP_FAILED)
			return 1;
		CPU_ZERO(&set);
		CPU_SET((int)b, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			return 1;
		signal(SIGUSR1, on_usr1);
		for (;;) {
			for (int i = 0; i < 20000; i++)
				sink += (unsigned long)i * 7;
			if (!quiet && write(fd, "x", 1) != 1)
				return 1;
			(*count)++;
		}
	}
	if (!strcmp(cmd, "wait")) {
		for (;;)
			pause();
	}
	fprintf(stderr, "live-helper: unknown command '%s'\n", cmd);
	return 2;
}
