/* offcpu.h - the pairing of record --off-cpu: a thread's switch out where it blocked
 * with its switch back in, on data (record-offcpu.c holds the session's side). */
#ifndef TACHO_RECORD_OFFCPU_H
#define TACHO_RECORD_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One switch of a thread: out (it blocked; idx names it to the caller) or in. */
struct tc_offcpu_switch {
	uint64_t time;
	uint32_t tid;
	bool out;
	size_t idx;
};

/* Sorts sw (by thread, then time; an out before an in of the same time) and, for each
 * out: each(arg, idx, true, in - out) when the thread's next switch is an in;
 * each(arg, idx, false, 0) when it is another out (the in between was lost), or when
 * nothing follows and final is set (the wait had not ended). An out with nothing after
 * it and final clear is not named: it waits for the next call. Ins that follow no out
 * (a preempted thread's) pair with nothing. Pure. */
void tc_offcpu_pair(struct tc_offcpu_switch *sw, size_t n, bool final,
		    void (*each)(void *arg, size_t out, bool paired, uint64_t waited), void *arg);

#endif
