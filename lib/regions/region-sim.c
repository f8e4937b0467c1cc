/* region-sim.c - regions under the simulator: whether they mark themselves for
 * callgrind instead of measuring (TACHO_SIM set and the program on valgrind's
 * synthetic CPU), and the mark itself, callgrind's "dump the counts now, named so" at a
 * region's boundary. The client requests are util's (lib/util/valgrind.c); the
 * simulator reads the marks back from the dumps (lib/sim/callgrind.c). Natively the
 * magic sequence is a few rotations of a register that change nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "regions/region-int.h"
#include "util/util.h"

/* 1: regions mark themselves for the simulator; 0: they measure natively; -1: not yet
 * decided. Decided once per process (a race decides it twice, the same way). */
static int sim_regions = -1;

bool tc_region_sim_on(void)
{
	int on = __atomic_load_n(&sim_regions, __ATOMIC_RELAXED);

	if (on < 0) {
		const char *e = tc_env_trusted("TACHO_SIM", NULL);
		on = e && *e && strcmp(e, "0") && tc_valgrind_running() ? 1 : 0;
		__atomic_store_n(&sim_regions, on, __ATOMIC_RELAXED);
	}
	return on == 1;
}

void tc_region_sim_mark(char kind, const char *name)
{
	/* "tacho:b:TID:NAME". The thread's part is made once, at its first mark: an end's
	 * mark is inside its region's count, so it must cost the same on every run,
	 * whatever the thread's id (formatting 99999 and 100000 takes different numbers of
	 * instructions) */
	static __thread char tid[24];
	static __thread size_t tid_len;
	char buf[512];
	size_t pre = sizeof(TC_VG_REGION_MARK) - 1, n = strlen(name);

	if (!tid_len) {
		int len = snprintf(tid, sizeof(tid), ":%d:", (int)gettid());
		tid_len = len > 0 && (size_t)len < sizeof(tid) ? (size_t)len : 0;
	}
	if (n > sizeof(buf) - pre - 1 - tid_len - 1)
		n = sizeof(buf) - pre - 1 - tid_len - 1;
	memcpy(buf, TC_VG_REGION_MARK, pre);
	buf[pre] = kind;
	memcpy(buf + pre + 1, tid, tid_len);
	memcpy(buf + pre + 1 + tid_len, name, n);
	buf[pre + 1 + tid_len + n] = '\0';
	tc_valgrind_dump_at(buf);
}
