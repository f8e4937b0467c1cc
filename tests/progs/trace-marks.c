/* trace-marks.c - a program that marks, for tacho trace's tests: "threads" (3 threads,
 * each in a region "work": 1,000 marks on a, 500 on b, 200 write(2)s), "periodic" (200
 * marks on tick, 1 ms apart by absolute sleeps), "regionmarks N" (N marks inside a region,
 * the program's first), "flood N" (N marks on c, as fast as it
 * can), "slow" (a mark every ms for 10 s, ending with its parent: for a trace killed
 * half-way), "none" (never marks); for the payloads: "opens" (openat of four names,
 * each name's address printed first), "execs N" (execs itself N times, by its path and
 * by /proc/self/exe in turn), "sleeps N" (says its pid, then N sleeps of 1 ms), "waitwrites N" (says
 * "ready", waits for SIGUSR1, then N write(2)s: for trace -p), "active" (marks 10 times,
 * then says "traced" or "untraced": for a setuid copy given TACHO_TRACE), "evilname"
 * (3 marks on a channel whose name would end an HTML page's script). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "tacho.h"

static int devnull;

static void *worker(void *arg)
{
	tacho_region_begin("work");
	for (int i = 0; i < 1000; i++) {
		tacho_mark("a", (uint64_t)i);
		if (i % 2 == 0)
			tacho_mark("b", (uint64_t)i);
		if (i % 5 == 0 && write(devnull, "x", 1) != 1)
			return (void *)1;
	}
	tacho_region_end("work");
	return NULL;
}

int main(int argc, char **argv)
{
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = "", .no_report_at_exit = true };
	struct tacho_diag d = { .sz = sizeof(d) };
	const char *mode = argc > 1 ? argv[1] : "none";

	if (!strcmp(mode, "threads")) {
		pthread_t t[3];
		void *r;
		int bad = 0;
		devnull = open("/dev/null", O_WRONLY);
		if (devnull < 0 || tacho_regions_init(&o, &d))
			return 1;
		for (int i = 0; i < 3; i++)
			if (pthread_create(&t[i], NULL, worker, NULL))
				return 1;
		for (int i = 0; i < 3; i++) {
			pthread_join(t[i], &r);
			bad |= r != NULL;
		}
		return bad;
	}
	if (!strcmp(mode, "regionmarks") && argc > 2) {
		/* the regions set up (their calibration runs traced) inside the first
		 * begin, then N marks inside the region */
		int n = atoi(argv[2]);
		if (tacho_regions_init(&o, &d) || tacho_region_begin("r"))
			return 1;
		for (int i = 0; i < n; i++)
			tacho_mark("m", (uint64_t)i);
		return tacho_region_end("r") != 0;
	}
	if (!strcmp(mode, "periodic")) {
		struct timespec next;
		clock_gettime(CLOCK_MONOTONIC, &next);
		for (int i = 0; i < 200; i++) {
			next.tv_nsec += 1000000;
			if (next.tv_nsec >= 1000000000) {
				next.tv_nsec -= 1000000000;
				next.tv_sec++;
			}
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
			tacho_mark("tick", (uint64_t)i);
		}
		return 0;
	}
	if (!strcmp(mode, "slow")) {
		struct timespec ms = { 0, 1000000 };
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (int i = 0; i < 10000; i++) {
			tacho_mark("slow", (uint64_t)i);
			nanosleep(&ms, NULL);
		}
		return 0;
	}
	if (!strcmp(mode, "opens")) {
		/* each name in its own array: the payload holds the address, which the
		 * test compares with the one printed here */
		static const char n1[] = "/dev/null", n2[] = "/nonexistent/tacho-payload",
				  n3[] = "/proc/self/stat", n4[] = "/dev/zero";
		const char *names[] = { n1, n2, n3, n4 };
		for (int i = 0; i < 4; i++) {
			printf("%p %s\n", (const void *)names[i], names[i]);
			fflush(stdout);
			int fd = openat(AT_FDCWD, names[i], O_RDONLY);
			if (fd >= 0)
				close(fd);
		}
		return 0;
	}
	if (!strcmp(mode, "execs")) {
		long n = argc > 2 ? atol(argv[2]) : 0;
		char next[24];
		if (n <= 0)
			return 0;
		snprintf(next, sizeof(next), "%ld", n - 1);
		char *args[] = { argv[0], (char *)"execs", next, NULL };
		execv(n % 2 ? argv[0] : "/proc/self/exe", args);
		return 1;
	}
	if (!strcmp(mode, "sleeps")) {
		long n = argc > 2 ? atol(argv[2]) : 10;
		struct timespec ms = { 0, 1000000 };
		printf("%d\n", (int)getpid());   /* which of the machine's threads it is */
		fflush(stdout);
		for (long i = 0; i < n; i++)
			nanosleep(&ms, NULL);
		return 0;
	}
	if (!strcmp(mode, "waitwrites")) {
		long n = argc > 2 ? atol(argv[2]) : 100;
		sigset_t set;
		int sig;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		devnull = open("/dev/null", O_WRONLY);
		printf("ready\n");
		fflush(stdout);
		if (devnull < 0 || sigwait(&set, &sig))
			return 1;
		for (long i = 0; i < n; i++)
			if (write(devnull, "x", 1) != 1)
				return 1;
		return 0;
	}
	if (!strcmp(mode, "active")) {
		for (int i = 0; i < 10; i++)
			tacho_mark("m", (uint64_t)i);
		printf("%s\n", tacho_trace_active() ? "traced" : "untraced");
		return 0;
	}
	if (!strcmp(mode, "evilname")) {
		for (int i = 0; i < 3; i++)
			tacho_mark("</script><b>&\"'", (uint64_t)i);
		return 0;
	}
	if (!strcmp(mode, "flood")) {
		long n = argc > 2 ? atol(argv[2]) : 100000;
		for (long i = 0; i < n; i++)
			tacho_mark("c", (uint64_t)i);
		return 0;
	}
	return 0;
}
