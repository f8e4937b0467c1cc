/* diff-int.h - what the comparison's files share (diff.c computes, diff-write.c
 * writes). */
#ifndef TC_DIFF_INT_H
#define TC_DIFF_INT_H

#include "tacho/diff.h"

struct diff_row {
	struct tacho_diff_row r;   /* sz unused; the strings below */
	char *name, *unit, *note;
	bool has_limit;            /* a limit of its own (else the default's, if any) */
};

struct tacho_diff {
	char *before_name, *after_name;
	long long before_runs, after_runs;   /* the documents' "runs" */
	double confidence;
	double default_limit;                /* NaN: none */
	size_t n;
	struct diff_row *rows;
};

/* The verdict in words: "no change", "changed", "unknown". */
const char *tc_diff_verdict_name(enum tacho_diff_verdict v);

#endif
