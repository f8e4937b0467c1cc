/* tacho/sim.h - libtacho's public interface: simulated events: a program run under
 * valgrind's callgrind or cachegrind (the cache and branch simulations asked), its
 * counts mapped onto tacho's event names, the simulated machine taken from the CPU's
 * description.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_SIM_H
#define TACHO_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "tacho/errors.h"
#include "tacho/cpu.h"
#include "tacho/run.h"
#include "tacho/output.h"
#include "tacho/record.h"
#include "tacho/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Simulation (lib/sim) ---
 * VTune's Dynamic Analyzer simulated code and its events instead of reading counters.
 * valgrind does that today: callgrind runs the program on a synthetic CPU, counts every
 * instruction, data read and write and conditional or indirect branch exactly, and
 * feeds them through a model of two levels of cache (I1 and D1, then the last level)
 * and of a branch predictor. The counts of one program and input are the same on every
 * run, on any machine, with or without a PMU. docs/sim.md says what is exact and what
 * is a model. */

/* One simulated cache, as valgrind's --I1/--D1/--LL options take it. Fixed (a part of
 * struct tacho_sim_machine). */
struct tacho_sim_cache {
	uint64_t size;               /* bytes */
	unsigned ways;               /* associativity */
	unsigned line_size;          /* bytes */
};

/* The machine a simulator simulates. Handed out by tacho_sim_machine (read through the
 * pointer: fields are only ever added at the end). */
struct tacho_sim_machine {
	const char *tool;            /* "callgrind" */
	struct tacho_sim_cache i1, d1, ll; /* the caches handed to valgrind */
	const char *source;          /* where the geometry came from ("CPUID of this CPU
					(Intel Xeon ...)", "the CPUID dump FILE (...)") */
	const char *note;            /* what was taken or changed for valgrind (ways the
					CPU's description lacks, from the kernel or
					tacho's default; a set count that is not a power
					of two), "" when nothing */
	const char *branch_model;    /* valgrind's predictor, in one sentence */
	const char *mcpu;            /* llvm-mca's -mcpu for this CPU ("znver3", "skylake",
					"x86-64" when the table has no entry) */
	const char *mcpu_source;     /* how it was chosen ("AMD family 0x19 model 0x01:
					Zen 3"; the fallback says so) */
};

/* Options (docs/architecture.md, "An API that can grow"): sz first; fields the caller's
 * sz does not cover take their defaults. */
struct tacho_sim_opts {
	size_t sz;                   /* sizeof(struct tacho_sim_opts) */
	const char *valgrind;        /* the valgrind program, a path or a name searched in
					PATH; NULL: "valgrind" */
	const char *cpu_dump;        /* a CPUID dump (`tacho cpu --raw`, `cpuid -r`, ...)
					whose caches are simulated; NULL: this CPU's */
	bool no_children;            /* do not follow children (valgrind
					--trace-children=no); by default every process the
					program starts is simulated and counted too */
	bool dump_instr;             /* keep per-instruction costs in the output files
					(--dump-instr=yes), for per-instruction views */
	enum tacho_sim_engine {
		/* callgrind with only the simulations the asked events need
		 * (tacho_sim_run_events): cache and branch simulation off for
		 * instructions alone: 0.32 of the CPU time on gzip (docs/sim.md) */
		TACHO_SIM_ENGINE_AUTO = 0,
		/* callgrind with the cache and branch simulations always on */
		TACHO_SIM_ENGINE_CALLGRIND,
		/* cachegrind with only the simulations asked: faster still, but it
		 * counts no regions and loses what a process ran before it execs
		 * (cachegrind 3.19 writes nothing at an exec); no dump_instr */
		TACHO_SIM_ENGINE_CACHEGRIND,
	} engine;
};

/* A simulator: valgrind found, the simulated machine decided. */
struct tacho_sim;

/* Prepares a simulator: finds valgrind (opts->valgrind or "valgrind" in PATH), takes
 * the L1 instruction, L1 data and last-level caches of the CPU's description (this
 * CPU's CPUID, or opts->cpu_dump), fitting each to what valgrind accepts (a power of two
 * of sets; the change is said in the machine's note). opts may be NULL. Returns 0 and
 * *out (tacho_sim_free), or: -TACHO_ENOSIM when valgrind cannot be found or run (*diag
 * says so and names the Debian package to install); -errno, -TACHO_EPARSE and the like
 * for a dump that cannot be read (*diag names the file); -TACHO_ENOVALUE when the
 * description has no L1 data, L1 instruction or second-or-higher-level cache; -EINVAL
 * (opts->sz below the first version, an engine this library does not know, dump_instr
 * with TACHO_SIM_ENGINE_CACHEGRIND: *diag says which); -TACHO_EVERSION (opts set a
 * field past the struct this library knows: a program built against a newer tacho.h;
 * *diag says so); -ENOMEM. diag may be NULL. Thread-safe; reads CPUID on the calling CPU. */
TACHO_API int tacho_sim_new(const struct tacho_sim_opts *opts, struct tacho_sim **out,
			    struct tacho_diag *diag);
TACHO_API void tacho_sim_free(struct tacho_sim *sim);

/* The simulated machine (lives as long as sim). NULL for NULL. */
TACHO_API const struct tacho_sim_machine *tacho_sim_machine(const struct tacho_sim *sim);

/* The counts of one simulated run: the totals of valgrind's events ("Ir", "Dr", "Dw",
 * "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim") over every
 * process simulated. */
struct tacho_sim_result;

/* Runs argv under the simulator (valgrind --tool=callgrind, or cachegrind for
 * TACHO_SIM_ENGINE_CACHEGRIND, --cache-sim=yes --branch-sim=yes with the machine's
 * caches: every event; valgrind's own messages go to a file, so the program's standard
 * streams are its own) and reads the counts it wrote. Returns 0
 * and *out (tacho_sim_result_free), with the program's ending in
 * tacho_sim_result_exit; -TACHO_ENOSTART when the program cannot be started (no such
 * program, not executable, or valgrind cannot run it: *diag says why, in valgrind's
 * words where they are the reason; *exec_err, if non-NULL, gets ENOENT or EACCES when
 * the program was not found or not executable, else 0); -TACHO_ENOSIM when valgrind
 * itself fails; -TACHO_EPARSE when its output cannot be read; -errno; -ENOMEM.
 * Not thread-safe with other code of the process that forks or handles SIGCHLD. */
TACHO_API int tacho_sim_run(const struct tacho_sim *sim, char *const argv[],
			    struct tacho_sim_result **out, int *exec_err,
			    struct tacho_diag *diag);

/* As tacho_sim_run, for the n events of events only (NULL / 0: every simulated event):
 * valgrind simulates the caches only when one of them is a cache event (a miss, a data
 * read or write, a last-level access), the branch predictor only when one is a branch
 * event, and neither for instructions alone (engine TACHO_SIM_ENGINE_AUTO or
 * _CACHEGRIND; _CALLGRIND simulates both always). What one tool counts in every mode
 * (instructions) is the same either way, exactly; cachegrind and callgrind differ in
 * glibc's start-up (docs/sim.md). An event outside the simulations that ran then has
 * no value in the result (tacho_sim_result_value: -TACHO_ENOVALUE). Under cachegrind,
 * a program whose file names tacho_region_begin is refused before it runs:
 * -TACHO_ENOVALUE, *diag says why (cachegrind cannot count regions). Errors as tacho_sim_run's, and -EINVAL for n events without the
 * array or with a NULL among them. */
TACHO_API int tacho_sim_run_events(const struct tacho_sim *sim, char *const argv[],
				   const struct perf_event_attr *const events[], size_t n,
				   struct tacho_sim_result **out, int *exec_err,
				   struct tacho_diag *diag);

/* What ran for a result of tacho_sim_run or tacho_sim_run_events: the valgrind tool
 * ("callgrind", "cachegrind") and which simulations were on (TACHO_SIM_CACHES,
 * TACHO_SIM_BRANCHES, or'ed). NULL / 0 for a parsed result or NULL. Thread-safe. */
#define TACHO_SIM_CACHES 1u
#define TACHO_SIM_BRANCHES 2u
TACHO_API const char *tacho_sim_result_tool(const struct tacho_sim_result *res);
TACHO_API unsigned tacho_sim_result_sims(const struct tacho_sim_result *res);

/* Parses one callgrind output file (docs/sim.md, "The file"), or one of cachegrind
 * (the same format, with "summary:" for "totals:"): its header (events,
 * pid, part, the trigger of a dump, totals) and every cost line, checking that each
 * has no more numbers than events; the dumps of regions (above) are matched up again
 * after each file. text need not be NUL-terminated; name names it in *diag. Adds the file's
 * totals to *res when *res is non-NULL (the files of several processes of one run add
 * up), else makes a new result. Returns 0; -TACHO_EPARSE with *diag naming the line
 * (a malformed line, a cost line before "events:", totals that do not equal the sum of
 * the cost lines), -TACHO_EEMPTY (no events), -ENOMEM, -EINVAL. *res is untouched on
 * error. Thread-safe. */
TACHO_API int tacho_sim_result_parse(const char *text, size_t len, const char *name,
				     struct tacho_sim_result **res, struct tacho_diag *diag);
TACHO_API void tacho_sim_result_free(struct tacho_sim_result *res);

/* The total of valgrind's event ev ("Ir", ...) in *out. 0, -TACHO_ENOVALUE when the
 * simulation did not produce that event, -EINVAL. Thread-safe. */
TACHO_API int tacho_sim_result_total(const struct tacho_sim_result *res, const char *ev,
				     uint64_t *out);

/* How the program ended (NULL for a parsed result, which ran nothing). */
TACHO_API const struct tacho_exit *tacho_sim_result_exit(const struct tacho_sim_result *res);

/* The simulated value of the event that attr describes (read by its size field), as
 * tacho names it: instructions (Ir), branches (Bc + Bi: conditional and indirect; direct
 * jumps and calls are not counted by valgrind), branch-misses (Bcm + Bim),
 * L1-dcache-loads (Dr), L1-dcache-load-misses (D1mr), L1-dcache-stores (Dw),
 * L1-dcache-store-misses (D1mw), L1-icache-loads (Ir), L1-icache-load-misses (I1mr),
 * LLC-loads (D1mr), LLC-load-misses (DLmr), LLC-stores (D1mw), LLC-store-misses (DLmw),
 * cache-references (I1mr + D1mr + D1mw: the last level's accesses), cache-misses (ILmr +
 * DLmr + DLmw). Returns 0 and *out; -TACHO_ENOVALUE when the event has no simulated
 * meaning (cycles, software events, ...), *why (if non-NULL) a static sentence saying
 * why; -EINVAL. Only user-space events simulate (exclude_kernel or not: valgrind sees
 * no kernel code, said in docs/sim.md). Thread-safe. */
TACHO_API int tacho_sim_result_value(const struct tacho_sim_result *res,
				     const struct perf_event_attr *attr, uint64_t *out,
				     const char **why);

/* Regions under simulation. A program's tacho_region_begin/end, run by tacho_sim_run
 * (which sets TACHO_SIM=1 in its environment; or by hand: TACHO_SIM=1 valgrind
 * --tool=callgrind ./prog) on valgrind, do not measure: each asks callgrind to write
 * its counts so far and start again from zero, naming the dump "tacho:b:TID:NAME" or
 * "tacho:e:TID:NAME". Adding up the dumps of a process in their order gives its counts
 * at every boundary, so a region's inclusive count is the difference between its end
 * and its begin, exactly, and its exclusive count that minus its nested regions'
 * (the instructions of the boundary calls themselves are in it: a fixed number per
 * call, which the difference of two runs cancels). One region as the simulation saw
 * it, merged over calls, threads and processes. Handed out by tacho_sim_result_region
 * (read through the pointer: fields are only ever added at the end). */
struct tacho_sim_region {
	const char *name;
	uint64_t calls;              /* begin/end pairs */
	unsigned unbalanced;         /* ends that did not match the innermost begin, and
					begins never ended (not counted in calls) */
};

/* The regions of a result, in the order of their first begin (0 / NULL when none or
 * out of range). Thread-safe. */
TACHO_API size_t tacho_sim_result_nregions(const struct tacho_sim_result *res);
TACHO_API const struct tacho_sim_region *tacho_sim_result_region(const struct tacho_sim_result *res,
								 size_t i);

/* The simulated value of attr's event in region i, inclusive or exclusive of its nested
 * regions, summed over its calls: as tacho_sim_result_value, errors and why included,
 * and -EINVAL for i out of range. Thread-safe. */
TACHO_API int tacho_sim_region_value(const struct tacho_sim_result *res, size_t i,
				     const struct perf_event_attr *attr, bool exclusive,
				     uint64_t *out, const char **why);

/* Where a simulation's counts were spent: callgrind's self costs per function, per
 * source line or per instruction (valgrind reads the binaries' symbols and debug
 * information: no sampling, every instruction counted). */
enum tacho_sim_view {
	TACHO_SIM_VIEW_FUNCTION = 0, /* object and function */
	TACHO_SIM_VIEW_LINE,         /* and the source file and line */
	TACHO_SIM_VIEW_INSTRUCTION,  /* and the instruction's address (a run with
					tacho_sim_opts.dump_instr; else every address
					is 0) */
};

/* One place and its count. Element size: tacho_sim_result_rows lays its array out at
 * the caller's sizeof(struct tacho_sim_row). */
struct tacho_sim_row {
	const char *object;          /* the binary, as valgrind names it ("???": unknown) */
	const char *function;        /* "???" when valgrind knows none */
	const char *file;            /* source file ("???" unknown); NULL in the function
					view */
	unsigned line;               /* 0 in the function view, or unknown */
	uint64_t address;            /* the instruction (as the process saw it, under
					valgrind) in the instruction view, else 0 */
	uint64_t value;              /* the event's simulated count there, self only */
};

/* The places of res in view, with the simulated value of attr's event (mapped as
 * tacho_sim_result_value maps it), largest first (ties in the order of object,
 * function, file, line, address); places where it is 0 are left out. Returns 0 and
 * *out: *n rows of row_sz bytes each (sizeof(**out)), malloc'd, the caller free()s it
 * (NULL when *n is 0); its strings live as long as res. -TACHO_ENOVALUE (*why, if
 * non-NULL, says why) for an event with no simulated meaning; -EINVAL (a bad view, a
 * row_sz below the first version); -ENOMEM. Thread-safe. */
TACHO_API int tacho_sim_result_rows(const struct tacho_sim_result *res, enum tacho_sim_view view,
				    const struct perf_event_attr *attr, struct tacho_sim_row **out,
				    size_t *n, size_t row_sz, const char **why);

/* --- A simulated recording (tacho record --sim) --- */

/* Options (sz first; fields the caller's sz does not cover take their defaults). */
struct tacho_sim_record_opts {
	size_t sz;                   /* sizeof(struct tacho_sim_record_opts) */
	const char *events;          /* events of the grammar with a simulated meaning
					(tacho_sim_result_value); NULL: "instructions" */
	const char *output;          /* the record file; NULL: "tacho.rec" */
	unsigned callers;            /* call chains of up to this many callers (at most
					TACHO_SIM_CALLERS_MAX): callgrind names each function
					with them (--separate-callers), each caller's frame is
					its call site most often taken; 0: none */
};
#define TACHO_SIM_CALLERS_MAX 256

/* Runs argv under the simulator with per-instruction costs (callgrind's
 * --dump-instr=yes) and writes a recording that tacho_profile_load reads like a
 * sampled one (docs/record-format.md): one EVENT per event, flagged simulated; an
 * MMAP with its build-id for each executable segment of every binary that ran, at
 * the address valgrind loaded it (valgrind's own log says where, so position-
 * independent programs and libraries resolve too); and, per process and per
 * instruction that ran (and calling context, with opts->callers), one SAMPLE whose
 * period is the event's exact simulated count there, with opts->callers the chain of
 * that context (its functions exact up to that depth; a caller's frame is its most
 * frequent call site of the callee, so a caller's line is exact only where it calls
 * from one place).
 * Fills *res as tacho_record does (samples, bytes, ran, exit, exec_err; lost and
 * throttled 0). Returns 0 (also when the program failed: res->exit); -TACHO_ENOVALUE
 * for an event with no simulated meaning (*diag says why); the grammar's errors for a
 * bad spec; tacho_sim_run's errors; -errno of writing the file (the file at
 * opts->output is then left as it was); -EINVAL (an sz below the first version,
 * callers above TACHO_SIM_CALLERS_MAX); -TACHO_EVERSION (opts set a field past the
 * struct this library knows: a program built against a newer tacho.h). Not
 * thread-safe with other code of the process that forks or handles SIGCHLD. */
TACHO_API int tacho_sim_record(const struct tacho_sim *sim, char *const argv[],
			       const struct tacho_sim_record_opts *opts,
			       struct tacho_record_result *res, struct tacho_diag *diag);

/* --- Pipeline analysis of the hottest block (llvm-mca) --- */

/* What llvm-mca predicts for the hottest basic block of a simulated run. */
struct tacho_sim_mca;

/* Finds the hottest basic block of res (a run with tacho_sim_opts.dump_instr): the
 * instruction executed most often, extended over its neighbours in the same function
 * executed exactly as often and contiguous in memory (a basic block runs all its
 * instructions equally often), reads its bytes from the binary (a fixed-address
 * executable: a position-independent one is loaded under valgrind at an address tacho
 * does not know), disassembles them with llvm-mc and gives them to llvm-mca with the
 * machine's -mcpu. Returns 0 and *out (tacho_sim_mca_free); -TACHO_ENOSIM when llvm-mc
 * or llvm-mca is missing (*diag names the Debian package llvm); -TACHO_ENOVALUE when
 * the run kept no instructions, or the block's binary is position-independent or
 * cannot be read (*diag says which); -TACHO_EPARSE when llvm-mca's report cannot be
 * read; -errno; -ENOMEM. Runs programs: not thread-safe with other code of the process
 * that forks or handles SIGCHLD. */
TACHO_API int tacho_sim_mca_new(const struct tacho_sim *sim, const struct tacho_sim_result *res,
				struct tacho_sim_mca **out, struct tacho_diag *diag);
TACHO_API void tacho_sim_mca_free(struct tacho_sim_mca *m);

/* The block and llvm-mca's prediction. Handed out by tacho_sim_mca_info (read through
 * the pointer: fields are only ever added at the end); lives as long as m. */
struct tacho_sim_mca_info {
	const char *object, *function; /* where the block is */
	uint64_t address;            /* its first instruction */
	uint64_t executions;         /* how often it ran (simulated, exact) */
	const char *bytes;           /* its bytes in hex, "90 90 48 ff c8 ..." */
	size_t ninsns;
	const char *const *insns;    /* [ninsns] as llvm-mc disassembles them */
	const char *mcpu;            /* the -mcpu given to llvm-mca */
	double ipc;                  /* predicted instructions per cycle */
	double block_rthroughput;    /* predicted cycles per iteration of the block */
	unsigned dispatch_width;
	size_t nresources;
	const char *const *resource_names;   /* [nresources] llvm-mca's names */
	const double *resource_pressure;     /* [nresources] cycles per iteration */
	const char *bottleneck;      /* llvm-mca's bottleneck analysis, its words */
	const char *report;          /* llvm-mca's whole report */
	const char *mcpu_source;     /* how mcpu was chosen (tacho_sim_machine's words) */
	/* of a recording's block (tacho_sim_mca_profile; NULL otherwise): each
	 * instruction's ELF address, and the selected event's samples and events there
	 * (the sum of their periods; exact counts in a simulated recording) */
	const uint64_t *insn_addresses, *insn_samples, *insn_events;
	uint64_t block_samples, block_events;       /* the block's */
	uint64_t function_samples, function_events; /* the whole function's */
	bool simulated;              /* the recording's event was simulated */
};
TACHO_API const struct tacho_sim_mca_info *tacho_sim_mca_info(const struct tacho_sim_mca *m);

/* Options of tacho_sim_mca_profile (sz first; fields the caller's sz does not cover take
 * their defaults). */
struct tacho_sim_mca_opts {
	size_t sz;                   /* sizeof(struct tacho_sim_mca_opts) */
	const char *cpu_dump;        /* the CPU whose -mcpu llvm-mca models, as a CPUID dump;
					NULL: this CPU */
};

/* Pipeline analysis of a recording from any source (sampled, simulated): takes
 * function symbol (exact, as shown or as mangled) of p's selected event, decodes its
 * bytes from its binary (ELF addresses: position-independent binaries too) into basic
 * blocks (split after every jump, call and return and at every direct jump's target
 * inside the function), picks the block whose instructions hold the most events (the
 * sum of their samples' periods; the lower address on a tie), and gives it to llvm-mc
 * and llvm-mca with the -mcpu of this CPU (or opts->cpu_dump's; the table of
 * tacho_sim_machine). The info's insn_* arrays put the measured samples beside each
 * instruction. executions is how often the block ran when the recording simulated
 * instructions (the count at its first instruction), else 0. Returns 0 and *out
 * (tacho_sim_mca_free); -ENOENT when no sample falls in a function of that name;
 * -TACHO_ENOVALUE when its code cannot be read or decoded (*diag says why);
 * -TACHO_ENOSIM when llvm-mc or llvm-mca is missing; -TACHO_EPARSE; -errno; -EINVAL;
 * -TACHO_EVERSION (opts set a field past the struct this library knows); -ENOMEM.
 * Runs programs: not thread-safe with other code of the process that forks or handles
 * SIGCHLD, nor with other calls on p. */
TACHO_API int tacho_sim_mca_profile(struct tacho_profile *p, const char *symbol,
				    const struct tacho_sim_mca_opts *opts,
				    struct tacho_sim_mca **out, struct tacho_diag *diag);

/* Writes a recording's block and its prediction (docs/schemas.md, "mca"):
 *  - TACHO_FORMAT_TABLE: a header line ("# the hottest basic block of SYMBOL in DSO:
 *    ..."), each instruction with its address and measured samples (a simulated
 *    recording: its exact count), then llvm-mca's prediction and bottleneck;
 *  - TACHO_FORMAT_JSON (or on one line): the document {"version": 1, ...}.
 * m must come from tacho_sim_mca_profile. 0, -EINVAL (NULL, a result of
 * tacho_sim_mca_new, CSV or a bad format), -EIO. Thread-safe on distinct files. */
TACHO_API int tacho_sim_mca_write(const struct tacho_sim_mca *m, FILE *f,
				  enum tacho_format fmt, const struct tacho_write_opts *opts);

/* The events tacho_sim_result_value can give, comma-separated, in the order `tacho stat
 * --sim` shows them by default (a static string). */
TACHO_API const char *tacho_sim_default_events(void);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_SIM_H */
