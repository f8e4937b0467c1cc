/* rec-copy.h - a record file written again, record by record, through today's writer
 * (tests of how chains and stacks are written: the same samples with their chains in
 * full (version 3's way), as references (version 4), in a tree with compressed user
 * stacks (version 5)). Defined here, not in a .c of tests/lib: every
 * test links those, the ones against libtacho.so alone too, which does not export the
 * writer. */
#ifndef TESTS_REC_COPY_H
#define TESTS_REC_COPY_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "record/recfile.h"
#include "tacho/errors.h"

/* Reads the len bytes of a record file at data and writes its records to path in
 * format version `format`: 3 (a version 4 file with every chain in full, as version 3
 * wrote them), 4 (chains referred to) or 5 (the tree, stacks compressed): samples
 * through tc_record_writer_sample, marks and user stacks through theirs, every other
 * record as it was; a flush every flush_every records (0: once at the end). Returns the
 * number of records copied; fails the test on a read or write error. */
static inline size_t th_rec_copy(const void *data, size_t len, const char *path,
				 unsigned format, unsigned flush_every)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_record_reader rd;
	struct tc_record_writer w;
	struct tc_rec r;
	size_t n = 0;
	int err;

	if (tc_record_reader_init(&rd, data, len, path, &d))
		fail_msg("cannot read the recording to copy: %s", d.message);
	/* the writer's switches, read when it opens */
	if (format == 3)
		setenv("TACHO_REC_INLINE_CHAINS", "1", 1);
	if (format == 4)
		setenv("TACHO_REC_FORMAT", "4", 1);
	assert_int_equal(tc_record_writer_open(&w, path), 0);
	unsetenv("TACHO_REC_INLINE_CHAINS");
	unsetenv("TACHO_REC_FORMAT");
	assert_int_equal(w.format, format == 5 ? 5 : 4);
	while ((err = tc_record_reader_next(&rd, &r, path, &d)) == 1) {
		if (r.type == TC_REC_SAMPLE) {
			tc_record_writer_sample(&w, r.u.sample.time, r.u.sample.ip,
						r.u.sample.addr, r.u.sample.period,
						r.u.sample.pid, r.u.sample.tid, r.u.sample.cpu,
						r.u.sample.event, r.u.sample.misc, r.u.sample.nr,
						r.u.sample.chain);
		} else if (r.type == TC_REC_USTACK) {
			tc_record_writer_ustack(&w, r.u.ustack.abi, r.u.ustack.mask,
						r.u.ustack.nregs, r.u.ustack.regs,
						r.u.ustack.stack, r.u.ustack.stack_len);
		} else if (r.type == TC_REC_MARK) {
			tc_record_writer_mark(&w, r.u.mark.time, r.u.mark.tsc, r.u.mark.value,
					      r.u.mark.pid, r.u.mark.tid, r.u.mark.channel,
					      r.u.mark.kind);
		} else {
			/* a record read whole: rd.off is just past it */
			const unsigned char *p = (const unsigned char *)data + r.offset;

			tc_record_writer_add(&w, r.type, p + TC_REC_HDR,
					     rd.off - r.offset - TC_REC_HDR);
		}
		if (++n % (flush_every ? flush_every : SIZE_MAX) == 0)
			assert_int_equal(tc_record_writer_flush(&w), 0);
	}
	if (err)
		fail_msg("cannot read the recording to copy: %s", d.message);
	tc_record_reader_exit(&rd);
	assert_int_equal(tc_record_writer_close(&w), 0);
	return n;
}


#endif
