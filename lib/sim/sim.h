/* sim/sim.h - lib/sim's internal interface: what its files share. */
#ifndef TC_SIM_SIM_H
#define TC_SIM_SIM_H

#include "tacho/sim.h"

/* A new, empty result (no events); -ENOMEM. */
int tc_sim_result_new(struct tacho_sim_result **out);
/* The event names and the values of the whole result (region < 0) or of region's
 * inclusive or exclusive counts: n of each, owned by res. 0, -EINVAL. */
int tc_sim_result_values(const struct tacho_sim_result *res, long region, bool exclusive,
			 const char *const **names, const uint64_t **vals, size_t *n);
/* The places of res: how many, and the i-th one (i < that): the names (NULL: none),
 * line, address, and its costs in the result's order of events (tc_sim_result_values'
 * names). */
size_t tc_sim_result_nplaces(const struct tacho_sim_result *res);
void tc_sim_result_place(const struct tacho_sim_result *res, size_t i, const char **ob,
			   const char **fn, const char **file, unsigned *line, uint64_t *addr,
			   const uint64_t **cost);
/* The call sites of res (with "instr" positions): how many, and the i-th one: the
 * function fn of binary ob called cfn from the instruction at addr, count times.
 * Names are the result's (equal names, equal pointers). */
size_t tc_sim_result_ncalls(const struct tacho_sim_result *res);
void tc_sim_result_call(const struct tacho_sim_result *res, size_t i, const char **ob,
			const char **fn, const char **cfn, uint64_t *addr, uint64_t *count);
/* NULL when the event attr describes has a simulated meaning (map.c's table), else a
 * static sentence saying why it has none. */
const char *tc_sim_event_why(const struct perf_event_attr *attr);
/* Records how the simulated program ended. */
void tc_sim_result_set_exit(struct tacho_sim_result *res, const struct tacho_exit *ex);
/* Records what ran: the tool (a static string) and its simulations (TACHO_SIM_CACHES,
 * TACHO_SIM_BRANCHES). */
void tc_sim_result_set_run(struct tacho_sim_result *res, const char *tool, unsigned sims);
/* The simulations valgrind must run for the event attr describes to have a value
 * (TACHO_SIM_CACHES, TACHO_SIM_BRANCHES; 0 for instructions, and for an event without
 * a simulated meaning). */
unsigned tc_sim_event_sims(const struct perf_event_attr *attr);

/* Fits one cache of a CPU description to valgrind's rules (a power-of-two line size of
 * at least 16 bytes, a power of two of sets, a size that fits an int): fills *out and,
 * when something had to change, appends a sentence about it (name: "I1", "D1", "LL")
 * to note. A cache whose ways are unknown (c->ways 0, not fully associative) takes
 * kernel_ways, the kernel's figure for it (0: none), else 8 ways at level 1 and 16
 * beyond; a set count that is not a power of two becomes the power of two below it,
 * with the ways that keep the size (valgrind's own rule). 0, or -TACHO_ENOVALUE for a
 * cache without a size or a line size. */
int tc_sim_cache_fit(const char *name, const struct tacho_cpu_cache *c, unsigned kernel_ways,
		     struct tacho_sim_cache *out, char *note, size_t note_size);
/* The ways sysfs states for the cache of c's level and type on logical CPU cpu (the
 * first CPU with caches in sys when cpu is negative or not in sys); 0 when sys is NULL
 * or has no such cache. */
unsigned tc_sim_kernel_ways(const struct tacho_cpu_sysfs *sys, int cpu,
			    const struct tacho_cpu_cache *c);

/* What tacho_sim_new decided: the valgrind to run, the engine, whether to follow
 * children, whether to keep per-instruction costs. */
const char *tc_sim_valgrind(const struct tacho_sim *sim);
enum tacho_sim_engine tc_sim_engine(const struct tacho_sim *sim);
bool tc_sim_children(const struct tacho_sim *sim);
bool tc_sim_dump_instr(const struct tacho_sim *sim);

/* Called with each output file of a run (sim.out.PID, in the order of their
 * names): its text, its length and its name. A non-zero return stops the run's reading
 * and is its result. */
typedef int tc_sim_file_fn(void *arg, const char *text, size_t len, const char *name,
			   struct tacho_diag *diag);

/* How one run simulates: the tool (TACHO_SIM_ENGINE_CALLGRIND or _CACHEGRIND) and the
 * simulations on (TACHO_SIM_CACHES, TACHO_SIM_BRANCHES). */
struct tc_sim_how {
	enum tacho_sim_engine tool;
	unsigned sims;
};

/* Runs argv under sim's valgrind as how says (NULL: callgrind with both simulations),
 * with extra options of the tool (NULL-terminated, may be NULL) before the program, fills *ex with how it ended, then gives fn each output file
 * and, when log_fn is not NULL, log_fn each of valgrind's logs (valgrind.log.PID, after
 * the output files). Errors as tacho_sim_run's. */
int tc_sim_run_files(const struct tacho_sim *sim, const struct tc_sim_how *how,
		     char *const argv[], char *const extra[], tc_sim_file_fn *fn,
		     tc_sim_file_fn *log_fn, void *arg, struct tacho_exit *ex, int *exec_err,
		     struct tacho_diag *diag);
/* Where valgrind loaded one binary in one process: its text's bias (actual minus
 * stated address), which callgrind's instruction addresses are relative to. */
struct tc_sim_load {
	long pid;
	char *path;
	uint64_t bias;
};
/* Appends the loads that a valgrind log written at -v -v states ("Reading syms from
 * PATH", then "svma S, avma A") to *loads (*n of them, realloc'd; a line longer than
 * 4 KiB or holding a NUL byte is skipped). 0 or -ENOMEM (*loads then holds those read
 * so far). */
int tc_sim_log_loads(const char *text, size_t len, struct tc_sim_load **loads, size_t *n);
void tc_sim_loads_free(struct tc_sim_load *loads, size_t n);
/* The pid of the process that wrote a parsed file (its first "pid:"), 0 when none. */
long tc_sim_result_pid(const struct tacho_sim_result *res);

/* llvm-mca's -mcpu for a CPU (mca.c's table) and a sentence saying how it was chosen
 * (written into why). */
const char *tc_sim_mcpu(enum tacho_cpu_vendor vendor, unsigned family, unsigned model,
			char *why, size_t size);

/* --- pipeline analysis (mca.c, mca-profile.c) --- */

struct tacho_sim_mca {
	struct tacho_sim_mca_info pub;
	char *object, *function, *bytes, *report, *bottleneck, *mcpu, *mcpu_source;
	char **insns;
	char **res_names;
	double *res_pressure;
	uint64_t *addrs, *samples, *events;   /* per instruction (of a recording) */
};

/* Runs llvm-mc over the block's len bytes at code (ninsns instructions) and llvm-mca
 * with -mcpu=mcpu over what it wrote, filling m's bytes, mcpu, instructions and
 * prediction. Errors as tacho_sim_mca_new's. */
int tc_sim_mca_analyse(struct tacho_sim_mca *m, const uint8_t *code, size_t len,
		       size_t ninsns, const char *mcpu, struct tacho_diag *diag);

#endif /* TC_SIM_SIM_H */
