/* code.h - one function of a loaded recording as code: its bytes, read from its binary
 * at its ELF addresses, and the selected event's samples per instruction. For views
 * that decode the function (pipeline analysis in lib/sim/mca.c, disassembly). */
#ifndef TACHO_REPORT_CODE_H
#define TACHO_REPORT_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "tacho/errors.h"
#include "tacho/report.h"

struct tc_profile_code {
	char *symbol;                  /* the name as shown */
	char *dso;                     /* the binary's path (or label) */
	uint64_t start;                /* ELF address of its first byte */
	uint8_t *bytes;                /* len bytes from start (the file's contents) */
	size_t len;
	struct tacho_profile_row *rows;  /* the sampled instructions, in address order:
					    samples and events (tacho_profile_annotate's
					    rows, without the unsampled ones) */
	size_t nrows;
	uint64_t samples, events;      /* the function's, of the selected event */
};

/* Function symbol (exact, as shown or as mangled) of p's selected event, of the samples
 * its filter keeps (tacho_profile_set_filter). 0 and *out (tc_profile_code_exit frees
 * it); -ENOENT when no such sample falls in a function of that name; -TACHO_ENOVALUE
 * when its binary or its bytes cannot be read (*diag says why); -ENOMEM. Not
 * thread-safe on one profile. */
int tc_profile_code(struct tacho_profile *p, const char *symbol, struct tc_profile_code *out,
		    struct tacho_diag *diag);
void tc_profile_code_exit(struct tc_profile_code *c);

#endif
