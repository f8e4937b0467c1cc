/* pages.h - fresh pages whose first write is exactly one page fault each: the exact
 * ground truth of page-fault counts (../shared/DESIGN.md, section 4).
 *
 * These functions are static and live in this header on purpose: every test gets its
 * own copy beside its own code, as when each test had its own. A measured region that
 * calls into another object (the harness) could run code from a text page this process
 * has not executed yet, and that page's fault would make the count one more. */
#ifndef TACHO_TEST_PAGES_H
#define TACHO_TEST_PAGES_H

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

/* A new private anonymous mapping of n pages (n >= 1) with transparent huge pages
 * turned off (MADV_NOHUGEPAGE), so that the first write to each page is one minor
 * fault and the mapping itself faults nothing. A kernel without transparent huge pages
 * refuses the advice with EINVAL: it has none to turn off, and that is no error.
 * Returns the mapping, to be given back with th_pages_unmap, or NULL with errno set. */
static __attribute__((unused)) char *th_pages_map(size_t n)
{
	size_t len = n * (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, len, MADV_NOHUGEPAGE) != 0 && errno != EINVAL) {
		int err = errno;

		munmap(p, len);
		errno = err;
		return NULL;
	}
	return p;
}

/* Writes one byte to each of the n pages at p: on pages from th_pages_map that nothing
 * has written yet, exactly n page faults, all in the calling thread. Not inlined, and
 * not instrumented by ASan: its shadow checks of fresh pages would fault on fresh
 * shadow pages too. */
static __attribute__((unused, noinline, no_sanitize("address"))) void
th_pages_touch(char *p, size_t n)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++)
		((volatile char *)p)[i * psz] = 1;
}

/* Gives back the n pages th_pages_map returned; NULL is ignored. */
static __attribute__((unused)) void th_pages_unmap(char *p, size_t n)
{
	if (p)
		munmap(p, n * (size_t)sysconf(_SC_PAGESIZE));
}

/* The three at once: exactly n page faults (n >= 1) in the calling thread. Returns 0,
 * or -errno when the pages cannot be had (then nothing faulted). */
static __attribute__((unused, no_sanitize("address"))) int th_fault_pages(size_t n)
{
	char *p = th_pages_map(n);

	if (!p)
		return -errno;
	th_pages_touch(p, n);
	th_pages_unmap(p, n);
	return 0;
}

#endif
