/* sample-faults.c - touches N fresh pages in one function, one fault per page, so that
 * page-fault sampling has an exact answer (tests/e2e/test-cmd-record.c).
 * usage: sample-faults PAGES */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes one byte in each of n pages: exactly n page faults, all on the marked line
 * (transparent huge pages are off for the range, so no fault maps more than a page). */
__attribute__((noinline)) static void touch_pages(volatile char *p, long n, long page)
{
	for (long i = 0; i < n; i++)
		p[i * page] = 1; /* FAULT-LINE */
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, page = sysconf(_SC_PAGESIZE);
	char *p;

	p = mmap(NULL, (size_t)n * (size_t)page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || madvise(p, (size_t)n * (size_t)page, MADV_NOHUGEPAGE) != 0) {
		perror("sample-faults: mmap/madvise");
		return 1;
	}
	/* run the function once without touching anything, so that a fault on its code
	 * page, if any, comes before and apart from the measured ones */
	touch_pages(p, 0, page);
	touch_pages(p, n, page);
	printf("touched %ld pages\n", n);
	return 0;
}
