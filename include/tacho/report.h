/* tacho/report.h - libtacho's public interface: sampling: reports of a recording
 * (tacho report): loading, rows, filters, annotate, exports, writers.
 * Part of <tacho.h>, which includes every area; include that one.
 *
 * ELF symbols, source lines, unwinding and build-ids go through elfutils, which
 * libtacho loads (libdw.so.1, with libelf) the first time one of these functions
 * reads an ELF file, not at the program's start. A process where it cannot be loaded
 * ends there with exit status 127 and one line on standard error that says what is
 * missing, as the dynamic loader would have ended it at start-up when libtacho linked
 * it; install elfutils' libdw (Debian: libdw1) wherever recordings are made or
 * reported. */
#ifndef TACHO_REPORT_H
#define TACHO_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>

#include "tacho/errors.h"
#include "tacho/output.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Reports --- */
/* A loaded recording, symbolized on demand (ELF symbols, separate debug info, source
 * lines through elfutils; the vDSO from the copy in the file; the kernel from
 * /proc/kallsyms when it was recorded in this boot). Opaque. */
struct tacho_profile;

/* Reads a record file, tacho's or perf's perf.data (file or pipe mode); path "-"
 * reads standard input to its end (perf record -o - | tacho report -i -). A file that
 * ends early (a recording that was killed, or cut
 * short) loads up to its last complete record and says so in tacho_profile_info; a
 * file cut short while it is loaded is read up to where it then ends, and the load keeps
 * its own sealed copy, so no later change to the file reaches the profile.
 * 0 and *out, or -errno (file), -TACHO_ECORRUPT (not a recording, a bad checksum, an
 * impossible record), -TACHO_EVERSION, -TACHO_ETRUNC (shorter than the header), with
 * *diag naming the file and the byte offset. The caller frees it with
 * tacho_profile_free. Not thread-safe on one profile. */
TACHO_API int tacho_profile_load(const char *path, struct tacho_profile **out,
				 struct tacho_diag *diag);
TACHO_API void tacho_profile_free(struct tacho_profile *p);

/* What a loaded recording holds. Sized: the caller sets sz and gets the fields it
 * covers. */
struct tacho_profile_info {
	size_t sz;                  /* sizeof(struct tacho_profile_info) */
	uint64_t samples;           /* samples of the selected event (the first by default) */
	uint64_t all_samples;       /* samples of every event in the file */
	unsigned nevents;           /* events recorded */
	uint64_t lost;              /* samples the kernel reported lost */
	bool truncated;             /* the file ends early (no final record) */
	uint64_t good_bytes;        /* bytes read up to the last complete record */
	uint64_t file_bytes;
	const char *event;          /* the selected event's name */
	uint64_t period;            /* its period (the calibrated one if it changed) */
	bool freq;                  /* period is a frequency */
	const char *command;        /* what was recorded */
	int exit_status;            /* the program's, as a shell says it; -1 unknown */
	const char *kernel_note;    /* why kernel addresses are not symbolized, or NULL */
	uint64_t throttles;         /* times the kernel throttled the sampling (too many
				       interrupts): samples are missing there, not in lost */
	uint64_t events;            /* the selected event's total: its samples' periods */
	bool simulated;             /* the selected event was simulated (tacho_sim_record):
				       each period is an exact simulated count, no sample
				       was drawn */
	uint64_t chains_cut;        /* samples whose call chain had more than 65535 entries:
				       the report keeps the first 65535 */
	uint64_t chained;           /* samples of the selected event with a call chain (a
				       recorded one, or a user stack to unwind): 0 for a
				       recording made without -g, where --children and the
				       trees have only each sample's own function */
	uint64_t period_min, period_max; /* the selected event's samples' own periods (0
				       when it has none): a calibrated recording's samples
				       carry the period each was taken with, which need not
				       be the event's final one */
	const char *lost_where;     /* where lost samples were lost, "cpu0 12, cpu3 46",
				       with "N on no known CPU" for losses no ring reported
				       (counted at period 1, or a perf.data file, whose
				       LOST records tacho does not place); NULL when none
				       were lost */
	bool offcpu;                /* the selected event is off-CPU time (record
				       --off-cpu): each sample a stack where a thread
				       blocked, its period the nanoseconds it waited;
				       events is their sum */
};
/* Fills *out. Strings live as long as the profile. 0, or -EINVAL for NULL or an sz
 * below the first version (nothing written). */
TACHO_API int tacho_profile_info(const struct tacho_profile *p, struct tacho_profile_info *out);
/* Reports (rows, annotate, exports) are about one event of the file at a time: the
 * first one unless this selects another by name. 0 or -ENOENT. */
TACHO_API int tacho_profile_select_event(struct tacho_profile *p, const char *name);

/* C++ names (Itanium ABI, "_ZN3foo3barEv") are shown demangled ("foo::bar()") in rows,
 * annotate and the exports, unless this turns it off (on: true, the default). The
 * demangler is libstdc++'s __cxa_demangle, loaded with dlopen at first use: libtacho
 * does not link the C++ runtime, and without libstdc++.so.6 names stay as they are.
 * Row strings handed out before a change stay valid. Not thread-safe on one profile. */
TACHO_API void tacho_profile_set_demangle(struct tacho_profile *p, bool on);

/* Inlined functions as frames (perf report's --inline; on: true, the default, as
 * perf's): where the views of whole stacks (rows with call graphs or children, folded,
 * the flame graph, speedscope, pprof) meet an address inside code the compiler inlined,
 * the DWARF of its binary gives the chain of inlined functions there, and each becomes
 * a frame of its own, innermost first, named "NAME (inlined)" (pprof: a line of the
 * location, its native form), above the function it was inlined into. Views of the
 * sampled function alone (rows without a call graph, annotate, filters, the by-line
 * and by-address keys) keep the function the symbol table names. Off, no frame is
 * added and no DWARF read for it. Row strings handed out before a change stay valid.
 * Not thread-safe on one profile. */
TACHO_API void tacho_profile_set_inline(struct tacho_profile *p, bool on);

enum tacho_sort {
	TACHO_SORT_SYMBOL = 0,      /* function and binary */
	TACHO_SORT_DSO,             /* binary (executable, library, [kernel], [vdso]) */
	TACHO_SORT_LINE,            /* source file and line */
	TACHO_SORT_ADDRESS,         /* instruction */
	TACHO_SORT_COMM,            /* process name (the main thread's, perf's comm) */
	TACHO_SORT_PID,             /* process id */
	TACHO_SORT_TID,             /* thread id */
	TACHO_SORT_CPU,             /* the CPU the sample was taken on */
	TACHO_SORT_EVENT,           /* the event's name */
};

/* One row of a report. Element size: tacho_profile_rows and tacho_profile_annotate lay
 * their arrays out at the caller's sizeof(struct tacho_profile_row). */
struct tacho_profile_row {
	const char *symbol;         /* "[unknown] 0x..." (its address within the binary) where
				       no function covers the address; "[unknown]" when the
				       sort has no symbol */
	const char *dso;            /* path of the binary, "[kernel]", "[vdso]", "[unknown]" */
	const char *file;           /* source file (TACHO_SORT_LINE, ADDRESS), or NULL */
	int line;                   /* its line, 0 when unknown */
	uint64_t address;           /* ELF address (TACHO_SORT_ADDRESS), else 0 */
	uint64_t samples;           /* self samples; with children: samples whose stack holds
				       this function anywhere */
	uint64_t self;              /* samples in the function itself */
	uint64_t events;            /* the events its samples stand for: the sum of their
				       periods */
	double percent;             /* events / all events * 100 (perf's "Overhead"); with
				       a fixed period the same as the share of samples */
	/* since tacho_profile_report_rows: the other dimensions (set when the sort has
	 * them, else NULL or -1; cpu -1 also where the recording has no CPU, a perf.data
	 * recorded per thread) and the place of the row in a call-graph tree */
	const char *comm;           /* process name, "[unknown]" when none was recorded */
	int pid, tid, cpu;
	const char *event;
	unsigned depth;             /* 0: an entry of the sort; 1...: a node of its call
				       graph (tacho_report_opts.graph), below the row
				       before it of depth - 1 */
	uint64_t self_events;       /* the events of its self samples (with children: of
				       those in the function itself) */
};

/* Aggregates the samples of the selected event by sort key, most events first (then
 * samples, then name). children:
 * count a function for every sample with it anywhere on the call chain (needs -g).
 * Trap-type samples (data breakpoints) are attributed to the instruction before the
 * reported IP. 0 and *rows: *n rows of row_sz bytes each (sizeof(**rows)), malloc'd,
 * the caller frees; strings owned by the profile. -EINVAL (a row_sz below the first
 * version), -ENOMEM. */
TACHO_API int tacho_profile_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
				 struct tacho_profile_row **rows, size_t *n, size_t row_sz);
/* The per-instruction view of one function (name exact, as shown or as mangled): one
 * row per sampled address of it, in address order, with file and line, laid out as
 * tacho_profile_rows lays its rows. 0, -ENOENT when no sample falls in a function of
 * that name, -EINVAL, -ENOMEM. */
TACHO_API int tacho_profile_annotate(struct tacho_profile *p, const char *symbol,
				     struct tacho_profile_row **rows, size_t *n, size_t row_sz);
/* Exports: folded stacks, one line per distinct stack, "comm;outer;...;inner COUNT"
 * (FlameGraph, speedscope, inferno); and perf script's text (one block per sample: a
 * header line "comm pid/tid [cpu] secs: period event:" ([cpu] left out where the
 * recording has no CPU, as perf script does; then the data address in hex for page
 * faults and breakpoints), one line per frame
 * "\tADDR SYMBOL+0xOFF (DSO)", a blank line), which the Firefox Profiler and speedscope
 * import. 0 or -EIO. */
TACHO_API int tacho_profile_write_folded(struct tacho_profile *p, FILE *f);
TACHO_API int tacho_profile_write_script(struct tacho_profile *p, FILE *f);
/* perf script -F's habit: one line per sample (the selected event's, that the filter
 * keeps, in time order) with the fields listed in fields, in that order, separated by
 * a space: comm, pid, tid, time (secs.usecs), cpu ("-" where the file has none),
 * event, period, ip (hex), sym, symoff (sym+0xOFF), dso (of the leaf; "[unknown]"
 * where none is known), addr (hex; "-" for an event without one). 0; -TACHO_EPARSE
 * for a word that is no field (diag says which, by column); -EINVAL, -ENOMEM, -EIO.
 * Not thread-safe on one profile. */
TACHO_API int tacho_profile_write_fields(struct tacho_profile *p, const char *fields,
					 FILE *f, struct tacho_diag *diag);
/* The perf-script export's samples as one JSON document (docs/schemas.md,
 * "script-json"): the selected event's samples that the filter keeps, in time order,
 * each with its time, process, thread, CPU, command, event, period, IP, data address
 * (null for events without one), the tracepoint payload as its print format shows it
 * (null without one; "payload_error" says why one does not decode), its fields by name
 * (numbers, addresses as hex strings, strings), the string arguments that constants of
 * the process's binaries hold, and the frames leaf first. 0, -EINVAL, -ENOMEM, -EIO.
 * Not thread-safe on one profile. */
TACHO_API int tacho_profile_write_script_json(struct tacho_profile *p, FILE *f);
/* pprof's profile.proto, gzipped (go tool pprof, Pyroscope, Parca, Grafana;
 * docs/report.md): a sample per distinct stack and thread with two values, the number
 * of samples ("samples"/"count") and the sum of their periods ("cpu"/"nanoseconds" for
 * cpu-clock and task-clock, as Go's CPU profiles, else the event's name and "count";
 * the default sample type), labels "pid", "tid" and "comm"; locations leaf first (one
 * per resolved address, at the address the process ran, with function and line);
 * functions (the name shown, the name as spelled, the source file, the line declared
 * on); a mapping per segment the processes mapped (start, limit and file offset as
 * recorded, build-id), one for the kernel; the period (with a frequency: a clock's
 * 1e9/Hz, else the mean), the duration from the first sample to the last, the
 * recorded command and the event as comments. Callers no mapping covers are left out.
 * Binary: the caller opens f for it. 0, -EINVAL, -ENOMEM, -EIO. Not thread-safe on one
 * profile. */
TACHO_API int tacho_profile_write_pprof(struct tacho_profile *p, FILE *f);
/* A flame graph of the selected event as one self-contained SVG document with its own
 * script (no network, no other file): a frame per function on a stack path, as wide as
 * the events (periods) of the samples under it, root at the bottom, coloured by binary
 * (the kernel, the vDSO and unknown code each their own); click to zoom into a frame,
 * "Reset zoom", "Search" (a regular expression: matching frames highlighted, their
 * share shown). Frames narrower than 0.1 pixel of the whole are left out. 0, -EINVAL,
 * -ENOMEM, -EIO. Not thread-safe on one profile. */
TACHO_API int tacho_profile_write_flamegraph(struct tacho_profile *p, FILE *f);
/* speedscope's JSON file format (docs/schemas.md, "speedscope"): shared frames (one per
 * function and binary: name, and the source file or else the binary), and a sampled
 * profile per process with every sample of the selected event in time order, root
 * first, weighted by its period (unit "nanoseconds" for cpu-clock and task-clock, else
 * "none"). On one line. 0, -EINVAL, -ENOMEM, -EIO. Not thread-safe on one profile. */
TACHO_API int tacho_profile_write_speedscope(struct tacho_profile *p, FILE *f);

/* --- 7b'. Dimensions, filters and call-graph trees --- */

/* Parses perf's sort syntax, a comma list of keys ("comm,dso,symbol"; also "sym",
 * "srcline", "addr"), into keys (at most max, each key once). 0 and *n; -TACHO_EPARSE
 * with *diag saying which key and the nearest known one ("did you mean"), -TACHO_EEMPTY
 * for an empty list or key, -E2BIG past max. Thread-safe. */
TACHO_API int tacho_profile_parse_sort(const char *spec, enum tacho_sort *keys, size_t max,
				       size_t *n, struct tacho_diag *diag);

/* How call chains are shown below each entry (recorded with -g). */
enum tacho_callgraph {
	TACHO_GRAPH_NONE = 0,
	TACHO_GRAPH_CALLER,         /* from the outermost caller down: without children, the
				       paths from the root to the entry; with children, the
				       entry's callees down to the sampled leaf */
	TACHO_GRAPH_CALLEE,         /* from the entry up: its callers, their callers, ... */
};

/* What tacho_profile_report_rows aggregates by and shows. Sized: fields past the
 * caller's sz take their defaults. */
struct tacho_report_opts {
	size_t sz;                  /* sizeof(struct tacho_report_opts) */
	const enum tacho_sort *sort; /* the keys, the rows are aggregated by their tuple
				       (location keys nest: a symbol is named with its
				       binary, a line with its function, an address with
				       its line); NULL or nsort 0: TACHO_SORT_SYMBOL */
	size_t nsort;
	bool children;              /* as tacho_profile_rows' children */
	enum tacho_callgraph graph; /* a tree of functions below each entry */
	double percent_limit;       /* entries and tree nodes under this percentage are
				       left out (perf's --percent-limit); 0: none */
};

/* The rows of a report by any combination of keys: as tacho_profile_rows, with the
 * dimensions of opts (comm, pid, tid, cpu and event set in every row that has them) and,
 * with a graph, each entry followed by its tree in depth-first order (depth 1, 2, ...;
 * siblings most events first). Unnamed addresses are one row each, "[unknown] 0x..."
 * with the address within the binary, unless the sort has no symbol (then one row per
 * binary). 0 and *rows (malloc'd, of row_sz bytes each, the caller frees; strings owned
 * by the profile), -EINVAL (NULL, an sz or row_sz below the first version, a bad key or
 * graph), -TACHO_EVERSION (opts set a field past the struct this library knows: a
 * program built against a newer tacho.h), -ENOMEM. Not thread-safe on one profile. */
TACHO_API int tacho_profile_report_rows(struct tacho_profile *p,
					const struct tacho_report_opts *opts,
					struct tacho_profile_row **rows, size_t *n, size_t row_sz);

/* Which samples every view takes (rows, annotate, the exports, the writers), perf
 * report's filters. Each list is a comma list, NULL or "" for all; a sample is kept
 * when it matches every list given. Sized: fields past sz are not set. */
struct tacho_profile_filter {
	size_t sz;                  /* sizeof(struct tacho_profile_filter) */
	const char *comms;          /* process names */
	const char *pids;           /* process ids */
	const char *tids;           /* thread ids */
	const char *cpus;           /* CPUs, a cpulist ("0-3,8") */
	const char *dsos;           /* binaries of the sampled instruction: full path or
				       file name ("libc.so.6", "[kernel]") */
	const char *symbols;        /* functions of the sampled instruction, as shown or as
				       the binary spells them */
	const char *time;           /* perf's --time: "START,END" in seconds as the
				       perf-script export shows them (either side may be
				       empty: from the first / to the last sample); "+S,+E"
				       in seconds after the first sample; percent slices of
				       the recording's span, "A%-B%" or "P%/N" (the Nth
				       slice of P %), several joined by commas */
	const char *cgroups;        /* cgroup v2 paths ("/system.slice/cron.service"), each
				       with the cgroups below it: the samples of processes
				       whose CGROUP record (the cgroup the process was in
				       when seen) names one; a process never seen in a
				       cgroup is not kept. "/" keeps every process of a
				       known cgroup */
};

/* Sets the filter of every later report on p (replacing the one before; NULL: none).
 * Percentages of rows are of the samples kept. 0, or -TACHO_EPARSE (a bad number, cpu
 * list or time: *diag says which), -EINVAL (NULL p, an sz below the first version),
 * -TACHO_EVERSION (f sets a field past the struct this library knows: a program built
 * against a newer tacho.h; *diag says so), -ENOMEM (then no filter is set). Not
 * thread-safe on one profile. */
TACHO_API int tacho_profile_set_filter(struct tacho_profile *p,
				       const struct tacho_profile_filter *f,
				       struct tacho_diag *diag);

/* --- Writing reports (what `tacho report` prints; docs/schemas.md) --- */

/* Aggregates the selected event's samples as tacho_profile_rows does and writes them:
 *  - TACHO_FORMAT_TABLE: a header line ("# N samples of EVENT (period P), L lost:
 *    COMMAND", with ", sampling throttled T times" after the lost count when the
 *    kernel throttled it), then the columns of the sort: samples, percent and address / file:line /
 *    dso, the function last (children: children, self, percent, then the same);
 *  - TACHO_FORMAT_CSV: a header row (samples, self, events, percent, symbol, dso, file,
 *    line, address, comm, pid, tid, cpu, event, depth) and a row per entry, empty where
 *    the sort has no such key;
 *  - TACHO_FORMAT_JSON (or on one line): {"version": 1, "samples", "lost", "throttles",
 *    "rows": [...]}.
 * 0, -EINVAL (NULL p or f, a bad sort, format or opts), -ENOMEM, -EIO. Nothing is
 * written when the rows cannot be made. Not thread-safe on one profile. */
TACHO_API int tacho_profile_write_rows(struct tacho_profile *p, enum tacho_sort sort,
				       bool children, FILE *f, enum tacho_format fmt,
				       const struct tacho_write_opts *opts);

/* The per-instruction view of one function (tacho_profile_annotate) written the same
 * ways: the header line, "# SYMBOL in DSO: N samples", then address, samples, percent
 * and source line per instruction; the CSV and JSON rows carry file, line and address.
 * 0, -ENOENT (no sample in a function of that name: nothing written), -EINVAL,
 * -ENOMEM, -EIO. Not thread-safe on one profile. */
TACHO_API int tacho_profile_write_annotate(struct tacho_profile *p, const char *symbol,
					   FILE *f, enum tacho_format fmt,
					   const struct tacho_write_opts *opts);

/* The rows of tacho_profile_report_rows written as tacho_profile_write_rows writes its
 * own: the table's columns are samples and percent (children: children, self,
 * percent), then a column per dimension in the order of the keys, the function last
 * (so that a long name pads nothing), a tree's nodes indented in it; the CSV has a
 * column per dimension (and "depth" with a graph); the JSON rows carry one member per
 * dimension and, with a graph, "children": the nodes below, nested. The header says
 * how many samples the filter kept. 0, -EINVAL, -TACHO_EVERSION (ropts as
 * tacho_profile_report_rows says), -ENOMEM, -EIO; nothing is written when the rows
 * cannot be made. Not thread-safe on one profile. */
TACHO_API int tacho_profile_write_report(struct tacho_profile *p,
					 const struct tacho_report_opts *ropts, FILE *f,
					 enum tacho_format fmt,
					 const struct tacho_write_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_REPORT_H */
