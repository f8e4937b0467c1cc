/* tacho/diff.h - libtacho's public interface: two measurements compared.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_DIFF_H
#define TACHO_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Two stat documents compared ---
 * The JSON of two stat sessions (tacho_stat_write's, `tacho stat -r N --json`; with
 * --sim too), before and after a change, compared event by event: each side's mean,
 * the change of the means and an interval of that change at a confidence (Welch's t
 * interval: the change +- t * sqrt(s_a^2/n_a + s_b^2/n_b), t Student's quantile at
 * Welch-Satterthwaite's degrees of freedom, no equal variances assumed). An event is
 * compared exactly, its interval the change itself, when the document says its value
 * is exact (simulated: valgrind counts the same on every run) or when every run of
 * both sides gave the same value (tracepoints, fresh pages' faults): the runs then
 * show no noise to estimate. The verdict is "changed" when the interval leaves 0 out
 * and "no change" when it holds 0.
 *
 * A document with a breakdown (-A, --per-thread...) is compared by its totals. The two
 * documents must count the same events (by name, with the same unit). */

struct tacho_diff;   /* handed out: opaque */

/* Options (the options rule): sz first; fields the caller's sz does not cover take
 * their defaults. */
struct tacho_diff_opts {
	size_t sz;
	double confidence;   /* of the intervals, in (0, 1); 0: 0.95 */
};

enum tacho_diff_verdict {
	TACHO_DIFF_NO_CHANGE = 0,   /* the interval holds 0 (exact: the same value) */
	TACHO_DIFF_CHANGED,         /* the interval leaves 0 out */
	TACHO_DIFF_UNKNOWN,         /* no interval: a side has no value, or a single run
				       that is not exact (note says which) */
};

/* One event compared (the sized rule: the caller sets sz). The strings belong to the
 * diff. */
struct tacho_diff_row {
	size_t sz;                  /* sizeof(struct tacho_diff_row), set by the caller */
	const char *name;           /* the event as the documents spell it */
	const char *unit;           /* "" for counts, "msec" for the clocks */
	enum tacho_diff_verdict verdict;
	bool exact;                 /* compared exactly (see above) */
	size_t n_before, n_after;   /* the runs each side's mean is of */
	double before, after;       /* the means; NaN without a value */
	double change;              /* after - before */
	double change_pct;          /* 100 change / |before|; +-INFINITY when before is 0
				       and after is not, 0 when both are */
	double lo, hi;              /* the interval of the change (lo = hi = change when
				       exact); NaN when unknown */
	double lo_pct, hi_pct;      /* the same relative to |before| */
	double df;                  /* the Welch-Satterthwaite degrees of freedom; NaN when
				       exact or unknown */
	double limit_pct;           /* tacho_diff_set_limit's limit; NaN without one */
	bool exceeds;               /* changed and change_pct > limit_pct */
	const char *note;           /* why the verdict is unknown; NULL otherwise */
};

/* Compares the stat JSON before[0..before_len) with after[0..after_len); the names
 * (file names, say) are what messages and the writers call them. On success *out is
 * the comparison (tacho_diff_free) and 0 is returned. Errors, with diag saying what
 * and where (source the name, line and column in the document): -TACHO_EPARSE for
 * text that is not JSON or not a stat document, -TACHO_EVERSION for a version other
 * than 1, -TACHO_ENOEVENT when the documents do not count the same events,
 * -EINVAL for bad options, -ENOMEM. Thread-safe (nothing shared). */
TACHO_API int tacho_diff_stat(const char *before, size_t before_len, const char *before_name,
			      const char *after, size_t after_len, const char *after_name,
			      const struct tacho_diff_opts *opts, struct tacho_diff **out,
			      struct tacho_diag *diag);
/* The same with the two documents read from files (regular files of at most 64 MiB;
 * -errno when one cannot be read, diag naming it). */
TACHO_API int tacho_diff_stat_files(const char *before_path, const char *after_path,
				    const struct tacho_diff_opts *opts, struct tacho_diff **out,
				    struct tacho_diag *diag);
TACHO_API void tacho_diff_free(struct tacho_diff *d);   /* NULL is fine */

/* The number of events compared, and event i of them (in the order of the first
 * document) into *row, whose sz the caller sets: 0, or -EINVAL for an i out of range
 * or a row whose sz is too small. */
TACHO_API size_t tacho_diff_count(const struct tacho_diff *d);
TACHO_API int tacho_diff_row(const struct tacho_diff *d, size_t i, struct tacho_diff_row *row);

/* A limit on the growth of an event, in percent of its value before: a row exceeds it
 * when its verdict is "changed" and change_pct is above pct (a negative pct asks for a
 * shrink of at least that much). event NULL sets the limit of every event without one
 * of its own. 0; -TACHO_ENOEVENT when no event of the diff has that name; -EINVAL for
 * a pct that is NaN. */
TACHO_API int tacho_diff_set_limit(struct tacho_diff *d, const char *event, double pct);
/* How many events exceed their limits. */
TACHO_API size_t tacho_diff_exceeded(const struct tacho_diff *d);

/* Writes the comparison: a table (TACHO_FORMAT_TABLE), CSV, or JSON
 * (docs/schemas.md#diff). 0, -EINVAL for a bad format, -EIO on a write error. */
TACHO_API int tacho_diff_write(const struct tacho_diff *d, FILE *f, enum tacho_format fmt,
			       const struct tacho_write_opts *opts);
/* The comparison as a GitHub-flavoured Markdown table with a line above it, for a CI
 * system to post as a comment. 0 or -EIO. */
TACHO_API int tacho_diff_write_markdown(const struct tacho_diff *d, FILE *f);

/* --- Two recordings compared ---
 * The report rows of two recordings (tacho record's files or perf.data, as
 * tacho_profile_load reads them) by function and binary (TACHO_SORT_SYMBOL), by binary
 * (TACHO_SORT_DSO; the rows' symbol is then ""), by source line (TACHO_SORT_LINE), by
 * process name (TACHO_SORT_COMM), or a tuple of them, matched by the row's names and
 * the binary's file name (not its path: a program rebuilt elsewhere lines up), each
 * with its share of the selected (first) event's total before and after, largest
 * change first. A row of one recording only appeared or vanished. A binary whose
 * build-id both recordings hold, and which differs, was rebuilt: its rows still match
 * by name, and say so (rebuilt). Shares of samples are statistical: each row's change
 * has an interval (tc_two_prop_interval's, the samples as binomial draws) that says
 * whether it exceeds sampling noise at the stated confidence. */

struct tacho_profile_diff;   /* handed out: opaque */

enum tacho_profile_diff_status {
	TACHO_PROFILE_DIFF_BOTH = 0,   /* in both recordings */
	TACHO_PROFILE_DIFF_APPEARED,   /* only after */
	TACHO_PROFILE_DIFF_VANISHED,   /* only before */
};

/* One row compared (the sized rule). The strings belong to the diff. */
struct tacho_profile_diff_row {
	size_t sz;
	const char *symbol;          /* the function ("" by binary) */
	const char *dso;             /* the binary's file name ("" where the sort has none) */
	double before_pct, after_pct;   /* shares of the events; 0 where absent */
	double change_pct;           /* after - before, percentage points */
	enum tacho_profile_diff_status status;
	uint64_t before_samples, after_samples;
	/* since tacho_profile_diff_open */
	const char *comm;            /* the process name (TACHO_SORT_COMM), else NULL */
	const char *file;            /* the source file (TACHO_SORT_LINE), else NULL */
	int line;                    /* its line, 0 when unknown */
	double lo_pct, hi_pct;       /* the interval of the change of the row's share of
					samples, percentage points (Newcombe's hybrid score
					interval at the diff's confidence) */
	bool beyond_noise;           /* the interval leaves 0 out: more than sampling noise */
	bool rebuilt;                /* the binary's build-ids differ between the two */
};

/* How tacho_profile_diff_open compares (the sized rule). */
struct tacho_profile_diff_opts {
	size_t sz;
	const enum tacho_sort *sort; /* the keys: symbol, dso, line and comm, in any tuple;
					NULL or nsort 0: symbol */
	size_t nsort;
	double confidence;           /* of the rows' intervals, in (0, 1); 0: 0.95 */
};

/* Loads both recordings and compares their rows by opts' keys. 0 and *out
 * (tacho_profile_diff_free); what tacho_profile_load returns for a file that is not a
 * recording, with diag naming it; -EINVAL for another key or a confidence outside
 * (0, 1) (diag says which), -TACHO_EVERSION (opts), -ENOMEM. */
TACHO_API int tacho_profile_diff_open(const char *before_path, const char *after_path,
				      const struct tacho_profile_diff_opts *opts,
				      struct tacho_profile_diff **out, struct tacho_diag *diag);

/* tacho_profile_diff_open by one key, symbol or dso. 0 and *out
 * (tacho_profile_diff_free); what tacho_profile_load returns for a file that is not a
 * recording, with diag naming it; -EINVAL for a sort other than the two above (diag
 * says so), -ENOMEM. */
TACHO_API int tacho_profile_diff_new(const char *before_path, const char *after_path,
				     enum tacho_sort sort, struct tacho_profile_diff **out,
				     struct tacho_diag *diag);
TACHO_API void tacho_profile_diff_free(struct tacho_profile_diff *d);   /* NULL is fine */
TACHO_API size_t tacho_profile_diff_count(const struct tacho_profile_diff *d);
/* Row i, largest change first, into *row (sz set by the caller). 0 or -EINVAL. */
TACHO_API int tacho_profile_diff_row(const struct tacho_profile_diff *d, size_t i,
				     struct tacho_profile_diff_row *row);
/* A table, CSV or JSON (docs/schemas.md#diff-profile). 0, -EINVAL, -EIO. */
TACHO_API int tacho_profile_diff_write(const struct tacho_profile_diff *d, FILE *f,
				       enum tacho_format fmt, const struct tacho_write_opts *opts);

/* --- the differential flame graph ---
 *
 * Both recordings' stacks (the selected, first, event's samples) merged into one tree:
 * a frame is one path of functions from the process down, matched by the functions'
 * names and their binaries' file names. Each frame is as wide as its share of the
 * events after (or before: width_before), with its callees; red where its share grew,
 * blue where it shrank, the deeper the larger the change against the largest change of
 * any frame; its <title> gives the share before, after and the change (percentage
 * points). A frame of one recording only has no width in the other: drawn by its
 * share after, a function that vanished is not there (draw it by width_before). */
struct tacho_flame_diff_opts {
	size_t sz;
	bool width_before;           /* widths by the shares before (default: after) */
};

/* Loads both recordings and writes the SVG (one self-contained document with its own
 * script to zoom and search, as tacho_profile_write_flamegraph's) to f. 0; what
 * tacho_profile_load returns for a file that is not a recording, with diag naming it;
 * -EINVAL, -TACHO_EVERSION (opts), -ENOMEM, -EIO (f failed). */
TACHO_API int tacho_profile_diff_write_flamegraph(const char *before_path,
						  const char *after_path,
						  const struct tacho_flame_diff_opts *opts,
						  FILE *f, struct tacho_diag *diag);

#ifdef __cplusplus
}
#endif

#endif
