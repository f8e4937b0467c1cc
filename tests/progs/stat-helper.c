/* stat-helper.c - a program with exactly known event counts, for the tests of
 * `tacho stat` (tests/e2e/test-cmd-stat.c). Built static and not position-independent
 * (Makefile: tests/progs), so that its few start-up page faults are the same on every
 * run and the address of `target` is fixed and printable.
 *
 *   stat-helper pages N     touch N fresh pages (N page faults beyond start-up)
 *   stat-helper writes K    K write(2) calls of one byte to /dev/null
 *   stat-helper stores N    N stores to `target` (a breakpoint on it counts N)
 *   stat-helper addr        print the address of `target`
 *   stat-helper sleep N     N sleeps of 1 ms (at least N context switches)
 *   stat-helper exit C      exit with status C
 *   stat-helper segv        die of SIGSEGV
 *   stat-helper spin MS     burn CPU for MS milliseconds
 *   stat-helper out TEXT    print TEXT on stdout (the program's output is untouched)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

volatile long target;

static long arg(int argc, char **argv)
{
	return argc > 2 ? strtol(argv[2], NULL, 10) : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	long n = arg(argc, argv);

	if (!strcmp(cmd, "pages")) {
		long pg = sysconf(_SC_PAGESIZE);
		char *p = mmap(NULL, (size_t)(n > 0 ? n : 1) * (size_t)pg, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return 1;
		/* one fault per page: no transparent huge page may cover several */
		madvise(p, (size_t)(n > 0 ? n : 1) * (size_t)pg, MADV_NOHUGEPAGE);
		for (long i = 0; i < n; i++)
			((volatile char *)p)[i * pg] = 1;
		return 0;
	}
	if (!strcmp(cmd, "writes")) {
		int fd = open("/dev/null", O_WRONLY);
		for (long i = 0; i < n; i++)
			if (write(fd, "x", 1) != 1)
				return 1;
		return 0;
	}
	if (!strcmp(cmd, "stores")) {
		for (long i = 0; i < n; i++)
			target = i;
		return 0;
	}
	if (!strcmp(cmd, "addr")) {
		printf("%p\n", (void *)&target);
		return 0;
	}
	if (!strcmp(cmd, "sleep")) {
		struct timespec ts = { 0, 1000000 };
		for (long i = 0; i < n; i++)
			nanosleep(&ts, NULL);
		return 0;
	}
	if (!strcmp(cmd, "exit"))
		return (int)n;
	if (!strcmp(cmd, "segv")) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		return 1;
	}
	if (!strcmp(cmd, "spin")) {
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		/* in whole nanoseconds: milliseconds of the seconds plus a truncated
		 * quotient of the nanoseconds (negative across a second's boundary) overstate
		 * the time spun by up to a millisecond */
		do
			clock_gettime(CLOCK_MONOTONIC, &b);
		while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) <
		       (long long)n * 1000000);
		return 0;
	}
	if (!strcmp(cmd, "out")) {
		fputs(argc > 2 ? argv[2] : "", stdout);
		return 0;
	}
	fprintf(stderr, "usage: stat-helper pages|writes|stores|addr|sleep|exit|segv|spin|out [N]\n");
	return 2;
}
