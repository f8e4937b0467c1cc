/* annotate.h - one function of a recording instruction by instruction: its code
 * disassembled (capstone), its source lines (libdw's line table, the text read from the
 * source file), and the samples of the selected event on each. What `report --annotate`
 * writes, and what other views of one function (--mca) can start from. */
#ifndef TACHO_REPORT_ANNOTATE_H
#define TACHO_REPORT_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tacho_profile;

struct tc_insn {
	uint64_t addr;                 /* ELF address */
	unsigned size;                 /* bytes; 0 when the code could not be decoded there */
	char mnemonic[32];             /* AT&T, as objdump and perf annotate show it; "" when
					  not decoded */
	char operands[160];
	uint32_t file;                 /* pool id of the source file, UINT32_MAX: unknown */
	int line;                      /* 0 when unknown */
	uint32_t src;                  /* index into lines[], UINT32_MAX without a line */
	uint64_t samples, events;      /* self samples on it, and the sum of their periods */
};

struct tc_srcline {
	uint32_t file;                 /* pool id */
	int line;
	char *text;                    /* the line as written (tabs expanded), or NULL when
					  the source file cannot be read */
	uint64_t samples, events;      /* of every instruction of the function on this line */
};

struct tc_annotation {
	uint32_t sym, raw, dso;        /* pool ids: the name shown, as spelled, the binary */
	uint64_t start, size;          /* ELF address and size of the function (size 0:
					  unknown) */
	bool decoded;                  /* its bytes were read and disassembled */
	struct tc_insn *insns;         /* in address order */
	size_t n;
	struct tc_srcline *lines;      /* in order of file and line */
	size_t nlines;
	uint64_t samples, events;      /* in the function */
	uint64_t all_events;           /* of every sample the report takes (the event's,
					  after the filter): what percentages are of */
	size_t hot_insn, hot_line;     /* the most events (then samples); SIZE_MAX: none */
};

/* The function named symbol (as shown or as mangled) of the selected event's samples:
 * every instruction of it when the binary can be read (from the recorded mapping,
 * build-id checked, or the vDSO's copy in the file), with the samples on each; the
 * sampled addresses alone, undecoded, when it cannot. Strings are the profile's.
 * 0 and *out (tc_annotate_free), -ENOENT when no sample falls in a function of that
 * name, -ENOMEM. Not thread-safe on one profile. */
int tc_annotate_new(struct tacho_profile *p, const char *symbol, struct tc_annotation **out);
void tc_annotate_free(struct tc_annotation *a);

#endif
