/* fuzz-trace-header.c - libFuzzer target for the trace area's header as a traced
 * program's library maps it (tc_trace_geom_check, then tc_trace_attach and marks): the
 * bytes are the header, and the size of the memfd they are written into (up to 4 MiB:
 * a header that claims more is refused for it). A header accepted has its channels and
 * its rings one after the other inside the area, each ring large enough for its
 * entries and aligned (checked here in 128-bit arithmetic, against the check's own
 * 64-bit sums); then the library attaches to the sealed memfd as to tacho's and marks on
 * three channels from its ring: every write lands inside the mapping (one outside it is
 * a SEGV the fuzzer reports). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/area.h"
#include "tacho/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILE (4u << 20)

static void check_geom(const struct tc_trace_geom *g, uint64_t file)
{
	unsigned __int128 chan_end = (unsigned __int128)g->channels_off +
				     (unsigned __int128)g->nchannels * sizeof(struct tc_trace_channel);
	unsigned __int128 rings_end = (unsigned __int128)g->rings_off +
				      (unsigned __int128)g->nslots * g->ring_bytes;

	if (g->size != file || g->channels_off < sizeof(struct tc_trace_header) ||
	    chan_end > g->rings_off || rings_end > file || !g->nslots || !g->nchannels ||
	    g->entries < 2 || (g->entries & (g->entries - 1)) ||
	    g->ring_bytes < sizeof(struct tc_trace_ring) +
			    (uint64_t)g->entries * sizeof(struct tc_trace_entry) ||
	    g->ring_bytes % 64 || g->rings_off % 64 || g->channels_off % 8)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tc_trace_header h;
	struct tc_trace_geom g;
	uint64_t file;
	char spec[64];
	int fd;

	if (size < sizeof(h) + 4)
		return 0;
	memcpy(&h, data, sizeof(h));
	/* the file's size: the header's own when the next byte is even (most headers
	 * then fail on their shape, not on a size that differs), else any up to 4 MiB */
	if (data[sizeof(h)] & 1) {
		uint32_t s;
		memcpy(&s, data + sizeof(h), 4);
		file = s % MAX_FILE;
	} else {
		file = h.size;
	}
	if (tc_trace_geom_check(&h, file, &g) == 0)
		check_geom(&g, file);
	if (file < sizeof(h) || file > MAX_FILE)
		return 0;

	fd = memfd_create("fuzz-trace-header", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return 0;
	if (ftruncate(fd, (off_t)file) < 0 || pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
		close(fd);
		return 0;
	}
	snprintf(spec, sizeof(spec), "/proc/self/fd/%d", fd);
	if (tc_trace_attach(spec) == 0) {
		/* more marks than a small ring holds, on more channels than a small table:
		 * full rings and tables too */
		for (int i = 0; i < 20; i++) {
			tacho_mark("a", (uint64_t)i);
			tacho_mark_counter("b", (uint64_t)i);
			tacho_mark("c", (uint64_t)i);
		}
		tc_trace_detach();
	}
	close(fd);
	return 0;
}
