/* rec-copy.h - a record file written again, record by record, through today's writer
 * (tests of the chain references of format version 4: the same samples with their chains
 * written in full and as references). */
#ifndef TESTS_REC_COPY_H
#define TESTS_REC_COPY_H

#include <stdbool.h>
#include <stddef.h>

/* Reads the len bytes of a record file at data and writes its records to path: samples
 * through tc_record_writer_sample (chains in full when inline_chains, else references
 * to chains written before), every other record as it was; a flush every flush_every
 * records (0: once at the end). Returns the number of records copied; fails the test
 * on a read or write error. */
size_t th_rec_copy(const void *data, size_t len, const char *path, bool inline_chains,
		   unsigned flush_every);

#endif
