/* rec-copy.h - a record file written again, record by record, through today's writer
 * (tests of the chain references of format version 4: the same samples with their chains
 * written in full and as references). Defined here, not in a .c of tests/lib: every
 * test links those, the ones against libtacho.so alone too, which does not export the
 * writer. */
#ifndef TESTS_REC_COPY_H
#define TESTS_REC_COPY_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "record/recfile.h"
#include "tacho/errors.h"

/* Reads the len bytes of a record file at data and writes its records to path: samples
 * through tc_record_writer_sample (chains in full when inline_chains, else references
 * to chains written before), every other record as it was; a flush every flush_every
 * records (0: once at the end). Returns the number of records copied; fails the test
 * on a read or write error. */
static inline size_t th_rec_copy(const void *data, size_t len, const char *path, bool inline_chains,
		   unsigned flush_every)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_record_reader rd;
	struct tc_record_writer w;
	struct tc_rec r;
	size_t n = 0;
	int err;

	if (tc_record_reader_init(&rd, data, len, path, &d))
		fail_msg("cannot read the recording to copy: %s", d.message);
	assert_int_equal(tc_record_writer_open(&w, path), 0);
	w.inline_chains = inline_chains;
	while ((err = tc_record_reader_next(&rd, &r, path, &d)) == 1) {
		if (r.type == TC_REC_SAMPLE) {
			tc_record_writer_sample(&w, r.u.sample.time, r.u.sample.ip,
						r.u.sample.addr, r.u.sample.period,
						r.u.sample.pid, r.u.sample.tid, r.u.sample.cpu,
						r.u.sample.event, r.u.sample.misc, r.u.sample.nr,
						r.u.sample.chain);
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
	assert_int_equal(tc_record_writer_close(&w), 0);
	return n;
}


#endif
