/* sample-cpu.c - spends CPU time 3:1 in two functions with the same loop, for
 * time-based sampling (tests/e2e/test-cmd-record.c). Frame pointers are kept so that
 * call chains (-g) unwind.
 * usage: sample-cpu [MS [fork|crash]]   MS: CPU milliseconds to burn (default 1000);
 *        fork: a child process does the same; crash: dies of SIGSEGV at the end */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FP __attribute__((noinline, optimize("no-omit-frame-pointer")))

static volatile unsigned long sink;

FP static void hot3(void)
{
	for (unsigned long i = 0; i < 300000; i++)
		sink += i;
}

FP static void hot1(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

FP static void burn(double ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end) {
		for (int k = 0; k < 10; k++) {
			hot3();
			hot1();
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
	if (!strcmp(mode, "crash")) {
		volatile int *bad = NULL;
		*bad = 1;
	}
	return 0;
}
