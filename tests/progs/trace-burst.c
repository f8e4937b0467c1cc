/* trace-burst.c - marks from one thread as fast as it can, for the burst test and
 * bench/marks-throughput.sh: "trace-burst N [RATE]" writes N marks on channel "burst"
 * (values 0 to N-1), at most RATE a second when RATE is given (a busy wait on the
 * monotonic clock, no sleep), then prints one line on stdout:
 *
 *	sent N refused R seconds S
 *
 * R the marks tacho_mark refused (-ENOBUFS: dropped, and counted in the trace), S the
 * seconds the N marks took. Exit 1 on any other error from tacho_mark. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tacho.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long long n = argc > 1 ? atoll(argv[1]) : 0;
	double rate = argc > 2 ? atof(argv[2]) : 0, t0, t1;
	long long refused = 0;

	if (argc < 2 || n < 0 || rate < 0) {
		fprintf(stderr, "usage: trace-burst N [RATE]\n");
		return 2;
	}
	t0 = now_s();
	for (long long i = 0; i < n; i++) {
		/* paced: every 1,024 marks, wait until the schedule catches up */
		if (rate > 0 && (i & 1023) == 0)
			while (now_s() - t0 < (double)i / rate)
				;
		int err = tacho_mark("burst", (uint64_t)i);
		if (err == -ENOBUFS)
			refused++;
		else if (err) {
			fprintf(stderr, "trace-burst: mark %lld: %s\n", i, tacho_strerror(err));
			return 1;
		}
	}
	t1 = now_s();
	printf("sent %lld refused %lld seconds %.6f\n", n, refused, t1 - t0);
	return 0;
}
