/* tables.c - the kernel's generic events as data: hardware, cache and software.
 *
 * The encodings are the kernel's ABI (include/uapi/linux/perf_event.h): a generic
 * hardware event is PERF_TYPE_HARDWARE with config = PERF_COUNT_HW_*, a software one
 * PERF_TYPE_SOFTWARE with PERF_COUNT_SW_*, a cache event PERF_TYPE_HW_CACHE with
 * config = cache | operation << 8 | result << 16. The kernel maps each to the CPU's own
 * event (or reports ENOENT/EOPNOTSUPP where the CPU has none). */
#include <string.h>
#include <strings.h>

#include "events/events.h"

#define HW(n, a, c, f, d) \
	{ .name = n, .alias = a, .type = PERF_TYPE_HARDWARE, .config = c, .unit = "", \
	  .scale = 1.0, .fixed = f, .desc = d }

const struct tc_generic_event tc_hw_events[] = {
	HW("cycles", "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES, true,
	   "core clock cycles while the CPU is not halted (the P5's CESR 'count cycles')"),
	HW("instructions", NULL, PERF_COUNT_HW_INSTRUCTIONS, true, "instructions retired"),
	HW("ref-cycles", NULL, PERF_COUNT_HW_REF_CPU_CYCLES, true,
	   "reference cycles at a constant rate, unaffected by frequency scaling"),
	HW("branches", "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false,
	   "branch instructions retired"),
	HW("branch-misses", NULL, PERF_COUNT_HW_BRANCH_MISSES, false,
	   "branch instructions whose direction or target was mispredicted"),
	HW("cache-references", NULL, PERF_COUNT_HW_CACHE_REFERENCES, false,
	   "accesses to the last-level cache (as the kernel maps it for this CPU)"),
	HW("cache-misses", NULL, PERF_COUNT_HW_CACHE_MISSES, false,
	   "last-level cache accesses that missed"),
	HW("bus-cycles", NULL, PERF_COUNT_HW_BUS_CYCLES, false, "bus clock cycles"),
	HW("stalled-cycles-frontend", "idle-cycles-frontend",
	   PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, false,
	   "cycles the front end delivered no instructions"),
	HW("stalled-cycles-backend", "idle-cycles-backend",
	   PERF_COUNT_HW_STALLED_CYCLES_BACKEND, false,
	   "cycles the back end could not accept instructions"),
};
const size_t tc_hw_events_count = ARRAY_SIZE(tc_hw_events);

#define SW(n, a, c, u, s, d) \
	{ .name = n, .alias = a, .type = PERF_TYPE_SOFTWARE, .config = c, .unit = u, \
	  .scale = s, .desc = d }

/* The clocks count nanoseconds; like perf, tacho shows them in milliseconds. */
const struct tc_generic_event tc_sw_events[] = {
	SW("task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK, "msec", 1e-6,
	   "time the task was running on a CPU"),
	SW("cpu-clock", NULL, PERF_COUNT_SW_CPU_CLOCK, "msec", 1e-6,
	   "time on the CPU clock (a high-resolution timer per CPU)"),
	SW("page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS, "", 1.0,
	   "page faults, minor and major"),
	SW("minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN, "", 1.0,
	   "page faults served without I/O"),
	SW("major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "", 1.0,
	   "page faults that needed I/O"),
	SW("context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES, "", 1.0,
	   "times the task was switched out"),
	SW("cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS, "", 1.0,
	   "times the task moved to another CPU"),
	SW("alignment-faults", NULL, PERF_COUNT_SW_ALIGNMENT_FAULTS, "", 1.0,
	   "unaligned accesses the kernel fixed up (none on x86)"),
	SW("emulation-faults", NULL, PERF_COUNT_SW_EMULATION_FAULTS, "", 1.0,
	   "instructions the kernel emulated"),
	SW("dummy", NULL, PERF_COUNT_SW_DUMMY, "", 1.0,
	   "counts nothing; a placeholder for side-band records"),
	SW("bpf-output", NULL, PERF_COUNT_SW_BPF_OUTPUT, "", 1.0,
	   "data written by BPF programs through bpf_perf_event_output"),
	SW("cgroup-switches", NULL, PERF_COUNT_SW_CGROUP_SWITCHES, "", 1.0,
	   "context switches to a task of another cgroup (Linux 5.13)"),
};
const size_t tc_sw_events_count = ARRAY_SIZE(tc_sw_events);

#define OP(x) (1u << PERF_COUNT_HW_CACHE_OP_##x)

/* Which operations each generic cache has in the kernel's tables (the kernel answers
 * ENOENT for the rest on every CPU, so tacho refuses them while parsing). */
const struct tc_cache_kind tc_cache_kinds[] = {
	{ "L1-dcache", PERF_COUNT_HW_CACHE_L1D, OP(READ) | OP(WRITE) | OP(PREFETCH),
	  "level-1 data cache" },
	{ "L1-icache", PERF_COUNT_HW_CACHE_L1I, OP(READ) | OP(PREFETCH),
	  "level-1 instruction cache" },
	{ "LLC", PERF_COUNT_HW_CACHE_LL, OP(READ) | OP(WRITE) | OP(PREFETCH),
	  "last-level cache" },
	{ "dTLB", PERF_COUNT_HW_CACHE_DTLB, OP(READ) | OP(WRITE) | OP(PREFETCH),
	  "data TLB" },
	{ "iTLB", PERF_COUNT_HW_CACHE_ITLB, OP(READ), "instruction TLB" },
	{ "branch", PERF_COUNT_HW_CACHE_BPU, OP(READ), "branch prediction unit" },
	{ "node", PERF_COUNT_HW_CACHE_NODE, OP(READ) | OP(WRITE) | OP(PREFETCH),
	  "local memory (NUMA node) accesses" },
};
const size_t tc_cache_kinds_count = ARRAY_SIZE(tc_cache_kinds);

/* Spellings perf accepts, so that a command line moves between the tools. */
const struct tc_cache_name tc_cache_aliases[] = {
	{ "L1-dcache", PERF_COUNT_HW_CACHE_L1D }, { "l1-d", PERF_COUNT_HW_CACHE_L1D },
	{ "l1d", PERF_COUNT_HW_CACHE_L1D }, { "L1-data", PERF_COUNT_HW_CACHE_L1D },
	{ "L1-icache", PERF_COUNT_HW_CACHE_L1I }, { "l1-i", PERF_COUNT_HW_CACHE_L1I },
	{ "l1i", PERF_COUNT_HW_CACHE_L1I }, { "L1-instruction", PERF_COUNT_HW_CACHE_L1I },
	{ "LLC", PERF_COUNT_HW_CACHE_LL }, { "L2", PERF_COUNT_HW_CACHE_LL },
	{ "dTLB", PERF_COUNT_HW_CACHE_DTLB }, { "d-tlb", PERF_COUNT_HW_CACHE_DTLB },
	{ "Data-TLB", PERF_COUNT_HW_CACHE_DTLB },
	{ "iTLB", PERF_COUNT_HW_CACHE_ITLB }, { "i-tlb", PERF_COUNT_HW_CACHE_ITLB },
	{ "Instruction-TLB", PERF_COUNT_HW_CACHE_ITLB },
	{ "branch", PERF_COUNT_HW_CACHE_BPU }, { "branches", PERF_COUNT_HW_CACHE_BPU },
	{ "bpu", PERF_COUNT_HW_CACHE_BPU }, { "btb", PERF_COUNT_HW_CACHE_BPU },
	{ "bpc", PERF_COUNT_HW_CACHE_BPU },
	{ "node", PERF_COUNT_HW_CACHE_NODE },
};
const size_t tc_cache_aliases_count = ARRAY_SIZE(tc_cache_aliases);

const struct tc_cache_name tc_cache_ops[] = {
	{ "load", PERF_COUNT_HW_CACHE_OP_READ }, { "loads", PERF_COUNT_HW_CACHE_OP_READ },
	{ "read", PERF_COUNT_HW_CACHE_OP_READ },
	{ "store", PERF_COUNT_HW_CACHE_OP_WRITE }, { "stores", PERF_COUNT_HW_CACHE_OP_WRITE },
	{ "write", PERF_COUNT_HW_CACHE_OP_WRITE },
	{ "prefetch", PERF_COUNT_HW_CACHE_OP_PREFETCH },
	{ "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH },
};
const size_t tc_cache_ops_count = ARRAY_SIZE(tc_cache_ops);

const char *tc_cache_op_word(unsigned op)
{
	static const char *const words[] = {
		[PERF_COUNT_HW_CACHE_OP_READ] = "load",
		[PERF_COUNT_HW_CACHE_OP_WRITE] = "store",
		[PERF_COUNT_HW_CACHE_OP_PREFETCH] = "prefetch",
	};
	return op < ARRAY_SIZE(words) ? words[op] : "?";
}

static bool name_is(const char *want, const char *name, size_t len)
{
	return want && strlen(want) == len && strncasecmp(want, name, len) == 0;
}

const struct tc_generic_event *tc_generic_find(const char *name, size_t len)
{
	for (size_t i = 0; i < tc_hw_events_count; i++)
		if (name_is(tc_hw_events[i].name, name, len) || name_is(tc_hw_events[i].alias, name, len))
			return &tc_hw_events[i];
	for (size_t i = 0; i < tc_sw_events_count; i++)
		if (name_is(tc_sw_events[i].name, name, len) || name_is(tc_sw_events[i].alias, name, len))
			return &tc_sw_events[i];
	return NULL;
}
