/* sample-dims.c - page faults in known amounts per thread and per phase, so that the
 * report's dimensions and filters have exact answers (tests/e2e/test-report-dims.c).
 * Every fault of the measured work is in touch_pages, one per page.
 *
 *   sample-dims threads T N   T threads; thread i (from 1) touches i * N pages and
 *                             prints "tid TID pages PAGES" (after they all joined)
 *   sample-dims phases A B    touches A pages, sleeps 300 ms, touches B pages
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Writes one byte in each of n fresh pages: exactly n page faults. */
__attribute__((noinline)) static void touch_pages(volatile char *p, long n, long page)
{
	for (long i = 0; i < n; i++)
		p[i * page] = 1; /* TOUCH-LINE */
}

static long page;

/* n fresh pages without huge pages, so that no fault maps more than one */
static char *fresh(long n)
{
	char *p = mmap(NULL, (size_t)n * (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || madvise(p, (size_t)n * (size_t)page, MADV_NOHUGEPAGE) != 0) {
		perror("sample-dims: mmap/madvise");
		exit(1);
	}
	return p;
}

struct worker {
	pthread_t th;
	long pages;
	char *mem;
	pid_t tid;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
	touch_pages(w->mem, w->pages, page);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long a = argc > 2 ? atol(argv[2]) : 0, b = argc > 3 ? atol(argv[3]) : 0;

	page = sysconf(_SC_PAGESIZE);
	/* once without touching anything, so that a fault on its code page, if any, comes
	 * before the measured ones */
	touch_pages(NULL, 0, page);
	if (!strcmp(mode, "threads") && a > 0 && a <= 64 && b > 0) {
		struct worker w[64];
		for (long i = 0; i < a; i++) {
			w[i].pages = (i + 1) * b;
			w[i].mem = fresh(w[i].pages);
		}
		for (long i = 0; i < a; i++)
			if (pthread_create(&w[i].th, NULL, work, &w[i])) {
				fputs("sample-dims: pthread_create failed\n", stderr);
				return 1;
			}
		for (long i = 0; i < a; i++)
			pthread_join(w[i].th, NULL);
		for (long i = 0; i < a; i++)
			printf("tid %d pages %ld\n", (int)w[i].tid, w[i].pages);
		return 0;
	}
	if (!strcmp(mode, "phases") && a > 0 && b > 0) {
		char *p1 = fresh(a), *p2 = fresh(b);
		struct timespec ts = { 0, 300 * 1000 * 1000 };
		touch_pages(p1, a, page);
		nanosleep(&ts, NULL);
		touch_pages(p2, b, page);
		return 0;
	}
	fputs("usage: sample-dims threads T N | phases A B\n", stderr);
	return 2;
}
