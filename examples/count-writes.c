/* count-writes.c - counts this program's own write() calls and page faults with libtacho,
 * exactly: the example of docs/lib-counters.md.
 *
 *   build/examples/count-writes [WRITES [PAGES]]
 *
 * It opens syscalls:sys_enter_write and page-faults as one group on the calling thread,
 * does WRITES writes to /dev/null and touches PAGES fresh pages, and prints what was
 * counted, with each value's status. Without tracefs the write count says why it is
 * missing instead of printing 0. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tacho.h"

int main(int argc, char **argv)
{
	long writes = argc > 1 ? atol(argv[1]) : 100;
	long pages = argc > 2 ? atol(argv[2]) : 64;
	long psz = sysconf(_SC_PAGESIZE);
	struct tacho_counters_opts opts = { .sz = sizeof(opts), .target = TACHO_TARGET_THREAD };
	struct tacho_evlist *list;
	struct tacho_counters *c;
	struct tacho_count v[2];
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char *mem;
	int fd, err;

	if (writes < 0 || pages < 1) {
		fprintf(stderr, "usage: count-writes [WRITES [PAGES]]\n");
		return 2;
	}
	/* one {group}: both are read with a single read(2) */
	err = tacho_evlist_parse("{syscalls:sys_enter_write,page-faults}", &list, &diag);
	if (err) {
		/* no tracefs: say so, and count the page faults alone */
		char msg[600];
		tacho_diag_format(&diag, msg, sizeof(msg));
		fprintf(stderr, "count-writes: write() calls not counted: %s\n", msg);
		err = tacho_evlist_parse("page-faults", &list, &diag);
		if (err) {
			tacho_diag_format(&diag, msg, sizeof(msg));
			fprintf(stderr, "count-writes: %s\n", msg);
			return 1;
		}
	}
	err = tacho_counters_open_evlist(&opts, list, NULL, &c);
	if (err) {
		fprintf(stderr, "count-writes: cannot count: %s\n", tacho_strerror(err));
		tacho_evlist_free(list);
		return 1;
	}

	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	mem = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || mem == MAP_FAILED) {
		perror("count-writes");
		return 1;
	}
	madvise(mem, (size_t)(pages * psz), MADV_NOHUGEPAGE);   /* one fault per page */

	err = tacho_counters_enable(c);
	if (err) {
		fprintf(stderr, "count-writes: cannot start counting: %s\n", tacho_strerror(err));
		return 1;
	}
	for (long i = 0; i < writes; i++)
		if (write(fd, "x", 1) != 1)
			break;
	for (long i = 0; i < pages; i++)
		((volatile char *)mem)[i * psz] = 1;
	tacho_counters_disable(c);

	size_t n = tacho_counters_count(c);
	err = tacho_counters_read(c, v, n, sizeof(*v));
	if (err) {
		fprintf(stderr, "count-writes: cannot read the counts: %s\n", tacho_strerror(err));
		return 1;
	}
	printf("did %ld writes and touched %ld pages\n", writes, pages);
	for (size_t i = 0; i < n; i++) {
		if (v[i].status == TACHO_COUNT_COUNTED || v[i].status == TACHO_COUNT_MULTIPLEXED)
			printf("%-26s %12.0f  (%s, %.0f%% of the time)\n", v[i].name, v[i].value,
			       tacho_count_status_name(v[i].status), 100 * v[i].coverage);
		else
			printf("%-26s %12s  (%s: %s)\n", v[i].name, "-",
			       tacho_count_status_name(v[i].status), v[i].why);
	}
	tacho_counters_free(c);
	tacho_evlist_free(list);
	munmap(mem, (size_t)(pages * psz));
	close(fd);
	return 0;
}
