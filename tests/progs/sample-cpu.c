/* sample-cpu.c - spends CPU time 3:1 in two functions with the same loop, for
 * time-based sampling (tests/e2e/test-cmd-record.c). Frame pointers are kept so that
 * call chains (-g) unwind. At the end it prints the CPU time each function took.
 * usage: sample-cpu [MS [fork|crash]]   MS: CPU milliseconds to burn (default 1000);
 *        fork: a child process does the same; crash: dies of SIGSEGV at the end */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FP __attribute__((noinline, optimize("no-omit-frame-pointer")))

static volatile unsigned long sink;

/* Both loops start at the same offset in a 64-byte line: identical code, identically
 * placed, so they run at the same speed per iteration (unaligned, a loop whose
 * compare-and-branch crosses a 32-byte boundary can run slower on Skylake-derived
 * cores, the "JCC erratum", and the split is then not 3:1). */
#define ALIGNED __attribute__((aligned(64)))

FP ALIGNED static void hot3(unsigned long n)
{
	for (unsigned long i = 0; i < 3 * n; i++)
		sink += i;
}

FP ALIGNED static void hot1(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The CPU time really spent in each function, as the same clock that cpu-clock
 * sampling runs on sees it: the split the samples must show. */
static double ns3, ns1;

FP static void burn(double ms)
{
	double end = cpu_ms() + ms;
	unsigned long r = 12345;

	while (cpu_ms() < end) {
		for (int k = 0; k < 10; k++) {
			double t0 = thread_ns(), t1, t2;
			/* a random length for each round (an LCG), so that the rounds never
			 * keep step with the sampling timer: with a fixed length near the
			 * period, the samples fall in the same phase again and again. Long
			 * enough that the clock reads around them weigh little (they count
			 * in both intervals alike, pulling the measured split towards 1:1) */
			unsigned long n;
			r = r * 6364136223846793005ul + 1442695040888963407ul;
			n = 20000 + (r >> 33) % 200000;
			hot3(n);
			t1 = thread_ns();
			hot1(n);
			t2 = thread_ns();
			ns3 += t1 - t0;
			ns1 += t2 - t1;
		}
	}
}

FP int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 1000;
	const char *mode = argc > 2 ? argv[2] : "";
	pid_t child = -1;

	if (!strcmp(mode, "fork"))
		child = fork();
	burn(ms);
	if (child > 0)
		waitpid(child, NULL, 0);
	if (child != 0)
		printf("hot3 %.0f ns, hot1 %.0f ns\n", ns3, ns1);
	if (!strcmp(mode, "crash")) {
		volatile int *bad = NULL;
		*bad = 1;
	}
	return 0;
}
