/* trace-marks.c - a program that marks, for tacho trace's tests: "threads" (3 threads,
 * each in a region "work": 1,000 marks on a, 500 on b, 200 write(2)s), "periodic" (200
 * marks on tick, 1 ms apart by absolute sleeps), "flood N" (N marks on c, as fast as it
 * can), "slow" (a mark every ms for 10 s, ending with its parent: for a trace killed
 * half-way), "none" (never marks). */
#include <fcntl.h>
#include <pthread.h>
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
	if (!strcmp(mode, "flood")) {
		long n = argc > 2 ? atol(argv[2]) : 100000;
		for (long i = 0; i < n; i++)
			tacho_mark("c", (uint64_t)i);
		return 0;
	}
	return 0;
}
