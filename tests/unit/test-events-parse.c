/* test-events-parse.c - the event grammar on hundreds of valid and invalid strings.
 *
 * Every case names its line: a failure says "line N: ..." so the table row is found at
 * once (libpfm4's validate_x86.c style). The expected encodings are the kernel's ABI
 * (include/uapi/linux/perf_event.h, linux/hw_breakpoint.h) written out as numbers here,
 * not taken from the library's tables. PMU and tracepoint cases use the fake trees in
 * tests/data/sysfs-pmu/ (an Intel core PMU's format files, msr, RAPL power, and a PMU
 * with split bit ranges), so they are exact on any machine. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "events/events.h"

static char *sysfs_root, *tracefs_root;
static struct tacho_event_opts fake_opts;

static int setup(void **state)
{
	(void)state;
	sysfs_root = strdup(th_path("tests/data/sysfs-pmu/devices"));
	tracefs_root = strdup(th_path("tests/data/sysfs-pmu/tracing"));
	fake_opts.sz = sizeof(fake_opts);
	fake_opts.sysfs_pmu_root = sysfs_root;
	fake_opts.tracefs_root = tracefs_root;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(sysfs_root);
	free(tracefs_root);
	return 0;
}

/* exclude bits, as one number for the tables */
#define EU 0x01   /* exclude_user */
#define EK 0x02   /* exclude_kernel */
#define EH 0x04   /* exclude_hv */
#define EG 0x08   /* exclude_guest */
#define EHO 0x10  /* exclude_host */
#define EI 0x20   /* exclude_idle */
#define PIN 0x40  /* pinned */
#define EXC 0x80  /* exclusive */

static unsigned excl_of(const struct perf_event_attr *a)
{
	return (a->exclude_user ? EU : 0) | (a->exclude_kernel ? EK : 0) |
	       (a->exclude_hv ? EH : 0) | (a->exclude_guest ? EG : 0) |
	       (a->exclude_host ? EHO : 0) | (a->exclude_idle ? EI : 0) | (a->pinned ? PIN : 0) |
	       (a->exclusive ? EXC : 0);
}

struct valid {
	int line;
	const char *spec;
	enum tacho_event_source src;
	uint32_t type;
	uint64_t config, config1, config2;
	unsigned bp_type;
	unsigned excl;
	unsigned precise;
};

#define HWT PERF_TYPE_HARDWARE
#define SWT PERF_TYPE_SOFTWARE
#define CT PERF_TYPE_HW_CACHE
#define TPT PERF_TYPE_TRACEPOINT
#define BPT PERF_TYPE_BREAKPOINT
#define RAWT PERF_TYPE_RAW
#define S(x) TACHO_EVENT_SRC_##x

/* V(spec, source, type, config, excl, precise); B(...) for breakpoints; P(...) with
 * config1/config2 for PMU terms */
#define V(spec, src, type, config, excl, precise) \
	{ __LINE__, spec, S(src), type, config, 0, 0, 0, excl, precise }
#define P(spec, type, config, c1, c2, excl) \
	{ __LINE__, spec, S(PMU), type, config, c1, c2, 0, excl, 0 }
#define B(spec, addr, len, bptype, excl) \
	{ __LINE__, spec, S(BREAKPOINT), BPT, 0, addr, len, bptype, excl, 0 }

static const struct valid valid_cases[] = {
	/* generic hardware: PERF_COUNT_HW_* */
	V("cycles", HARDWARE, HWT, 0, 0, 0),
	V("cpu-cycles", HARDWARE, HWT, 0, 0, 0),
	V("CYCLES", HARDWARE, HWT, 0, 0, 0),
	V("instructions", HARDWARE, HWT, 1, 0, 0),
	V("cache-references", HARDWARE, HWT, 2, 0, 0),
	V("cache-misses", HARDWARE, HWT, 3, 0, 0),
	V("branches", HARDWARE, HWT, 4, 0, 0),
	V("branch-instructions", HARDWARE, HWT, 4, 0, 0),
	V("branch-misses", HARDWARE, HWT, 5, 0, 0),
	V("bus-cycles", HARDWARE, HWT, 6, 0, 0),
	V("stalled-cycles-frontend", HARDWARE, HWT, 7, 0, 0),
	V("idle-cycles-frontend", HARDWARE, HWT, 7, 0, 0),
	V("stalled-cycles-backend", HARDWARE, HWT, 8, 0, 0),
	V("idle-cycles-backend", HARDWARE, HWT, 8, 0, 0),
	V("ref-cycles", HARDWARE, HWT, 9, 0, 0),
	/* modifiers, perf's semantics: the first of u/k/h excludes all three, each letter
	 * then re-includes its own level */
	V("cycles:u", HARDWARE, HWT, 0, EK | EH, 0),
	V("cycles:k", HARDWARE, HWT, 0, EU | EH, 0),
	V("cycles:h", HARDWARE, HWT, 0, EU | EK, 0),
	V("cycles:uk", HARDWARE, HWT, 0, EH, 0),
	V("cycles:ku", HARDWARE, HWT, 0, EH, 0),
	V("cycles:kh", HARDWARE, HWT, 0, EU, 0),
	V("cycles:uh", HARDWARE, HWT, 0, EK, 0),
	V("cycles:ukh", HARDWARE, HWT, 0, 0, 0),
	V("cycles:uu", HARDWARE, HWT, 0, EK | EH, 0),
	V("cycles:G", HARDWARE, HWT, 0, EHO, 0),
	V("cycles:H", HARDWARE, HWT, 0, EG, 0),
	V("cycles:GH", HARDWARE, HWT, 0, 0, 0),
	V("cycles:I", HARDWARE, HWT, 0, EI, 0),
	V("cycles:D", HARDWARE, HWT, 0, PIN, 0),
	V("cycles:e", HARDWARE, HWT, 0, EXC, 0),
	V("page-faults:ue", SOFTWARE, SWT, 2, EK | EH | EXC, 0),
	V("cgroup-switches", SOFTWARE, SWT, 11, 0, 0),
	V("cycles:p", HARDWARE, HWT, 0, 0, 1),
	V("cycles:pp", HARDWARE, HWT, 0, 0, 2),
	V("cycles:ppp", HARDWARE, HWT, 0, 0, 3),
	V("cycles:upp", HARDWARE, HWT, 0, EK | EH, 2),
	V("cycles:pup", HARDWARE, HWT, 0, EK | EH, 2),
	V("instructions:uG", HARDWARE, HWT, 1, EK | EH | EHO, 0),
	V("instructions:kHD", HARDWARE, HWT, 1, EU | EH | EG | PIN, 0),
	V("instructions:uIp", HARDWARE, HWT, 1, EK | EH | EI, 1),
	V("ref-cycles:k", HARDWARE, HWT, 9, EU | EH, 0),
	V("branch-misses:u", HARDWARE, HWT, 5, EK | EH, 0),
	V("cache-misses:pp", HARDWARE, HWT, 3, 0, 2),
	/* software: PERF_COUNT_SW_* */
	V("cpu-clock", SOFTWARE, SWT, 0, 0, 0),
	V("task-clock", SOFTWARE, SWT, 1, 0, 0),
	V("page-faults", SOFTWARE, SWT, 2, 0, 0),
	V("faults", SOFTWARE, SWT, 2, 0, 0),
	V("context-switches", SOFTWARE, SWT, 3, 0, 0),
	V("cs", SOFTWARE, SWT, 3, 0, 0),
	V("cpu-migrations", SOFTWARE, SWT, 4, 0, 0),
	V("migrations", SOFTWARE, SWT, 4, 0, 0),
	V("minor-faults", SOFTWARE, SWT, 5, 0, 0),
	V("major-faults", SOFTWARE, SWT, 6, 0, 0),
	V("alignment-faults", SOFTWARE, SWT, 7, 0, 0),
	V("emulation-faults", SOFTWARE, SWT, 8, 0, 0),
	V("dummy", SOFTWARE, SWT, 9, 0, 0),
	V("bpf-output", SOFTWARE, SWT, 10, 0, 0),
	V("Task-Clock", SOFTWARE, SWT, 1, 0, 0),
	V("page-faults:u", SOFTWARE, SWT, 2, EK | EH, 0),
	V("task-clock:k", SOFTWARE, SWT, 1, EU | EH, 0),
	V("cs:uk", SOFTWARE, SWT, 3, EH, 0),
	V("task-clock:G", SOFTWARE, SWT, 1, EHO, 0),
	V("minor-faults:D", SOFTWARE, SWT, 5, PIN, 0),
	/* generic cache: cache | op << 8 | result << 16
	 * caches L1D 0, L1I 1, LL 2, DTLB 3, ITLB 4, BPU 5, NODE 6;
	 * ops read 0, write 1, prefetch 2; results access 0, miss 1 */
	V("L1-dcache-loads", CACHE, CT, 0x00000, 0, 0),
	V("L1-dcache-load-misses", CACHE, CT, 0x10000, 0, 0),
	V("L1-dcache-stores", CACHE, CT, 0x00100, 0, 0),
	V("L1-dcache-store-misses", CACHE, CT, 0x10100, 0, 0),
	V("L1-dcache-prefetches", CACHE, CT, 0x00200, 0, 0),
	V("L1-dcache-prefetch-misses", CACHE, CT, 0x10200, 0, 0),
	V("L1-icache-loads", CACHE, CT, 0x00001, 0, 0),
	V("L1-icache-load-misses", CACHE, CT, 0x10001, 0, 0),
	V("L1-icache-prefetches", CACHE, CT, 0x00201, 0, 0),
	V("L1-icache-prefetch-misses", CACHE, CT, 0x10201, 0, 0),
	V("LLC-loads", CACHE, CT, 0x00002, 0, 0),
	V("LLC-load-misses", CACHE, CT, 0x10002, 0, 0),
	V("LLC-stores", CACHE, CT, 0x00102, 0, 0),
	V("LLC-store-misses", CACHE, CT, 0x10102, 0, 0),
	V("LLC-prefetches", CACHE, CT, 0x00202, 0, 0),
	V("LLC-prefetch-misses", CACHE, CT, 0x10202, 0, 0),
	V("dTLB-loads", CACHE, CT, 0x00003, 0, 0),
	V("dTLB-load-misses", CACHE, CT, 0x10003, 0, 0),
	V("dTLB-stores", CACHE, CT, 0x00103, 0, 0),
	V("dTLB-store-misses", CACHE, CT, 0x10103, 0, 0),
	V("dTLB-prefetches", CACHE, CT, 0x00203, 0, 0),
	V("dTLB-prefetch-misses", CACHE, CT, 0x10203, 0, 0),
	V("iTLB-loads", CACHE, CT, 0x00004, 0, 0),
	V("iTLB-load-misses", CACHE, CT, 0x10004, 0, 0),
	V("branch-loads", CACHE, CT, 0x00005, 0, 0),
	V("branch-load-misses", CACHE, CT, 0x10005, 0, 0),
	V("node-loads", CACHE, CT, 0x00006, 0, 0),
	V("node-load-misses", CACHE, CT, 0x10006, 0, 0),
	V("node-stores", CACHE, CT, 0x00106, 0, 0),
	V("node-store-misses", CACHE, CT, 0x10106, 0, 0),
	V("node-prefetches", CACHE, CT, 0x00206, 0, 0),
	V("node-prefetch-misses", CACHE, CT, 0x10206, 0, 0),
	/* perf's other spellings */
	V("l1d-loads", CACHE, CT, 0x00000, 0, 0),
	V("l1-d-load-misses", CACHE, CT, 0x10000, 0, 0),
	V("L1-data-stores", CACHE, CT, 0x00100, 0, 0),
	V("l1i-load-misses", CACHE, CT, 0x10001, 0, 0),
	V("L1-instruction-loads", CACHE, CT, 0x00001, 0, 0),
	V("l1-i-prefetches", CACHE, CT, 0x00201, 0, 0),
	V("L2-loads", CACHE, CT, 0x00002, 0, 0),
	V("llc-load-misses", CACHE, CT, 0x10002, 0, 0),
	V("d-tlb-load-misses", CACHE, CT, 0x10003, 0, 0),
	V("Data-TLB-load-misses", CACHE, CT, 0x10003, 0, 0),
	V("i-tlb-loads", CACHE, CT, 0x00004, 0, 0),
	V("Instruction-TLB-load-misses", CACHE, CT, 0x10004, 0, 0),
	V("bpu-loads", CACHE, CT, 0x00005, 0, 0),
	V("btb-load-misses", CACHE, CT, 0x10005, 0, 0),
	V("bpc-loads", CACHE, CT, 0x00005, 0, 0),
	V("branches-loads", CACHE, CT, 0x00005, 0, 0),
	V("L1-dcache-load", CACHE, CT, 0x00000, 0, 0),
	V("L1-dcache-read", CACHE, CT, 0x00000, 0, 0),
	V("L1-dcache-write", CACHE, CT, 0x00100, 0, 0),
	V("L1-dcache-load-miss", CACHE, CT, 0x10000, 0, 0),
	V("L1-dcache-load-refs", CACHE, CT, 0x00000, 0, 0),
	V("L1-dcache-load-accesses", CACHE, CT, 0x00000, 0, 0),
	V("L1-dcache-load-access", CACHE, CT, 0x00000, 0, 0),
	V("L1-dcache-load-ops", CACHE, CT, 0x00000, 0, 0),
	V("L1-dcache-store-reference", CACHE, CT, 0x00100, 0, 0),
	V("L1-dcache-misses", CACHE, CT, 0x10000, 0, 0),
	V("LLC-misses", CACHE, CT, 0x10002, 0, 0),
	V("L1-DCACHE-LOAD-MISSES", CACHE, CT, 0x10000, 0, 0),
	V("LLC-load-misses:u", CACHE, CT, 0x10002, EK | EH, 0),
	V("dTLB-load-misses:k", CACHE, CT, 0x10003, EU | EH, 0),
	V("L1-dcache-loads:pp", CACHE, CT, 0x00000, 0, 2),
	V("iTLB-load-misses:uk", CACHE, CT, 0x10004, EH, 0),
	/* raw: PERF_TYPE_RAW, config in hex */
	V("r0", RAW, RAWT, 0x0, 0, 0),
	V("r1a8", RAW, RAWT, 0x1a8, 0, 0),
	V("r01a8", RAW, RAWT, 0x1a8, 0, 0),
	V("r4003c", RAW, RAWT, 0x4003c, 0, 0),
	V("rC0", RAW, RAWT, 0xc0, 0, 0),
	V("rffffffffffffffff", RAW, RAWT, 0xffffffffffffffffull, 0, 0),
	V("r1a8:u", RAW, RAWT, 0x1a8, EK | EH, 0),
	V("r1a8:ppp", RAW, RAWT, 0x1a8, 0, 3),
	V("r1a8:Hp", RAW, RAWT, 0x1a8, EG, 1),
	V("r01c4:k", RAW, RAWT, 0x1c4, EU | EH, 0),
	/* tracepoints: ids from the fake tracefs */
	V("sched:sched_switch", TRACEPOINT, TPT, 316, 0, 0),
	V("sched:sched_wakeup", TRACEPOINT, TPT, 317, 0, 0),
	V("syscalls:sys_enter_write", TRACEPOINT, TPT, 1234, 0, 0),
	V("syscalls:sys_exit_write", TRACEPOINT, TPT, 1233, 0, 0),
	V("raw_syscalls:sys_enter", TRACEPOINT, TPT, 21, 0, 0),
	V("sched:sched_switch:u", TRACEPOINT, TPT, 316, EK | EH, 0),
	V("syscalls:sys_enter_write:k", TRACEPOINT, TPT, 1234, EU | EH, 0),
	/* breakpoints: bp_addr is config1, bp_len config2; R 1, W 2, RW 3, X 4 */
	B("mem:0x1000", 0x1000, 4, 3, 0),
	B("mem:0x1000/8", 0x1000, 8, 3, 0),
	B("mem:0x1000/1", 0x1000, 1, 3, 0),
	B("mem:0x1001/1", 0x1001, 1, 3, 0),
	B("mem:0x1002/2", 0x1002, 2, 3, 0),
	B("mem:0x1004/4", 0x1004, 4, 3, 0),
	B("mem:4096", 0x1000, 4, 3, 0),
	B("mem:0x1000:r", 0x1000, 4, 1, 0),
	B("mem:0x1000:w", 0x1000, 4, 2, 0),
	B("mem:0x1000:rw", 0x1000, 4, 3, 0),
	B("mem:0x1000:wr", 0x1000, 4, 3, 0),
	B("mem:0x1000:x", 0x1000, 8, 4, 0),
	B("mem:0x1000/8:x", 0x1000, 8, 4, 0),
	B("mem:0x1000/8:w", 0x1000, 8, 2, 0),
	B("mem:0x1000/2:r", 0x1000, 2, 1, 0),
	B("mem:0x1000:w:u", 0x1000, 4, 2, EK | EH),
	B("mem:0x1000/8:rw:k", 0x1000, 8, 3, EU | EH),
	B("mem:0x1000:u", 0x1000, 4, 3, EK | EH),
	B("mem:0x1000/4:u", 0x1000, 4, 3, EK | EH),
	B("MEM:0x1000", 0x1000, 4, 3, 0),
	B("mem:0x7fffffffe000/8:w", 0x7fffffffe000ull, 8, 2, 0),
	B("mem:0xffffffff81000000:x", 0xffffffff81000000ull, 8, 4, 0),
	/* an execute breakpoint at any byte: sizeof(long) long, no alignment (x86's
	 * LEN_X is LEN_1) */
	B("mem:0x401001:x", 0x401001, 8, 4, 0),
	B("mem:0x401003/8:x", 0x401003, 8, 4, 0),
	B("mem:0x40100f:x:u", 0x40100f, 8, 4, EK | EH),
	/* PMU format terms (Intel core PMU, fake tree): event 0-7, umask 8-15, edge 18,
	 * pc 19, any 21, inv 23, cmask 24-31, in_tx 32, in_tx_cp 33; ldlat config1:0-15,
	 * offcore_rsp config1:0-63 */
	P("cpu/event=0x3c/", 4, 0x3c, 0, 0, 0),
	P("cpu/event=0x3c,umask=0x1/", 4, 0x13c, 0, 0, 0),
	P("cpu/event=0x3c,umask=0x1,cmask=1,edge,inv/", 4, 0x0184013c, 0, 0, 0),
	P("cpu/event=0xa3,umask=0x4,cmask=4/", 4, 0x040004a3, 0, 0, 0),
	P("cpu/event=0xc0,umask=0x00,cmask=1,inv/", 4, 0x018000c0, 0, 0, 0),
	P("cpu/event=60,umask=1/", 4, 0x13c, 0, 0, 0),
	P("cpu/umask=0x1,event=0x3c/", 4, 0x13c, 0, 0, 0),
	P("cpu/event=0xff,umask=0xff,cmask=0xff/", 4, 0xff00ffff, 0, 0, 0),
	P("cpu/event=0x3c,any/", 4, 0x20003c, 0, 0, 0),
	P("cpu/event=0x3c,pc=1/", 4, 0x8003c, 0, 0, 0),
	P("cpu/event=0x3c,in_tx,in_tx_cp/", 4, 0x30000003cull, 0, 0, 0),
	P("cpu/event=0xcd,umask=0x1,ldlat=3/", 4, 0x1cd, 3, 0, 0),
	P("cpu/event=0xb7,umask=0x1,offcore_rsp=0x10001/", 4, 0x1b7, 0x10001, 0, 0),
	P("cpu/event=0xb7,offcore_rsp=0xffffffffffffffff/", 4, 0xb7, 0xffffffffffffffffull, 0, 0),
	P("cpu/config=0x1234/", 4, 0x1234, 0, 0, 0),
	P("cpu/config=0x3c,config1=5,config2=7/", 4, 0x3c, 5, 7, 0),
	P("cpu/config=0x3c,umask=2/", 4, 0x23c, 0, 0, 0),
	P("cpu/event=0x3c/u", 4, 0x3c, 0, 0, EK | EH),
	P("cpu/event=0x3c/:u", 4, 0x3c, 0, 0, EK | EH),
	P("cpu/event=0x3c/k", 4, 0x3c, 0, 0, EU | EH),
	P("cpu/event=0x3c/ukG", 4, 0x3c, 0, 0, EH | EHO),
	/* docs/events.md's "count cycles, not events" examples (Skylake L1D_PEND_MISS
	 * 0x48/0x01, UOPS_ISSUED 0x0e/0x01) */
	P("cpu/event=0x48,umask=0x01/", 4, 0x0148, 0, 0, 0),
	P("cpu/event=0x48,umask=0x01,cmask=1/", 4, 0x01000148, 0, 0, 0),
	P("cpu/event=0x48,umask=0x01,cmask=1,edge/", 4, 0x01040148, 0, 0, 0),
	P("cpu/event=0x0e,umask=0x01,cmask=1,inv/", 4, 0x0180010e, 0, 0, 0),
	/* PMU aliases (events/ files) */
	P("cpu/cpu-cycles/", 4, 0x3c, 0, 0, 0),
	P("cpu/instructions/", 4, 0xc0, 0, 0, 0),
	P("cpu/ref-cycles/", 4, 0x300, 0, 0, 0),
	P("cpu/mem-loads/", 4, 0x1cd, 3, 0, 0),
	P("cpu/mem-loads,ldlat=30/", 4, 0x1cd, 30, 0, 0),
	P("cpu/cycles-t/", 4, 0x10000003cull, 0, 0, 0),
	P("cpu/cycles-ct/", 4, 0x30000003cull, 0, 0, 0),
	P("cpu/cpu-cycles,cmask=1/", 4, 0x0100003c, 0, 0, 0),
	P("cpu/cpu-cycles/u", 4, 0x3c, 0, 0, EK | EH),
	P("msr/tsc/", 9, 0, 0, 0, 0),
	P("msr/aperf/", 9, 1, 0, 0, 0),
	P("msr/mperf/", 9, 2, 0, 0, 0),
	P("msr/smi/", 9, 4, 0, 0, 0),
	P("msr/event=0x2/", 9, 2, 0, 0, 0),
	P("msr/event=0xffffffffffffffff/", 9, 0xffffffffffffffffull, 0, 0, 0),
	P("power/energy-pkg/", 10, 2, 0, 0, 0),
	P("power/energy-cores/", 10, 1, 0, 0, 0),
	/* split bit ranges: lo config:0-3,8-11; one config1:5; wide config2:0-63;
	 * odd config:60-63,12-15,40 (value bits 0-3, 4-7, 8) */
	P("split/lo=0xab/", 42, 0xa0b, 0, 0, 0),
	P("split/lo=0xff/", 42, 0xf0f, 0, 0, 0),
	P("split/lo=0x10/", 42, 0x100, 0, 0, 0),
	P("split/one/", 42, 0, 0x20, 0, 0),
	P("split/one=1/", 42, 0, 0x20, 0, 0),
	P("split/one=0/", 42, 0, 0, 0, 0),
	P("split/wide=0x123456789abcdef0/", 42, 0, 0, 0x123456789abcdef0ull, 0),
	P("split/odd=0x1ff/", 42, 0xf00001000000f000ull, 0, 0, 0),
	P("split/odd=0x100/", 42, 0x10000000000ull, 0, 0, 0),
	P("split/odd=0x0f/", 42, 0xf000000000000000ull, 0, 0, 0),
	P("split/combo/", 42, 0xa0b, 0x20, 0, 0),
	P("split/lo=1,one,wide=2/", 42, 0x1, 0x20, 2, 0),
};

static void check_valid(const struct valid *c, const struct tacho_evlist *l)
{
	const struct tc_event *ev = tc_evlist_get(l, 0);
	struct perf_event_attr a;

	if (tacho_evlist_count(l) != 1)
		fail_msg("line %d: '%s' gave %zu events", c->line, c->spec, tacho_evlist_count(l));
	assert_int_equal(tacho_evlist_attr(l, 0, &a), 0);
	if (a.size != sizeof(a) || (unsigned)tacho_evlist_source(l, 0) != (unsigned)c->src ||
	    a.type != c->type || a.config != c->config || a.config1 != c->config1 ||
	    a.config2 != c->config2 || a.bp_type != c->bp_type || excl_of(&a) != c->excl ||
	    a.precise_ip != c->precise)
		fail_msg("line %d: '%s': got source %s type %u config %#llx config1 %#llx "
			 "config2 %#llx bp_type %u excl %#x precise %u; want source %s type %u "
			 "config %#llx config1 %#llx config2 %#llx bp_type %u excl %#x precise %u",
			 c->line, c->spec, tacho_event_source_name(tacho_evlist_source(l, 0)), a.type,
			 (unsigned long long)a.config, (unsigned long long)a.config1,
			 (unsigned long long)a.config2, a.bp_type, excl_of(&a), (unsigned)a.precise_ip,
			 tacho_event_source_name(c->src), c->type, (unsigned long long)c->config,
			 (unsigned long long)c->config1, (unsigned long long)c->config2, c->bp_type,
			 c->excl, c->precise);
	if (strcmp(tacho_evlist_name(l, 0), c->spec) != 0)
		fail_msg("line %d: name '%s', want '%s'", c->line, tacho_evlist_name(l, 0), c->spec);
	/* nothing the engine owns is set by the parser */
	if (a.disabled || a.inherit || a.read_format || a.sample_type || a.sample_period)
		fail_msg("line %d: '%s' set an engine field", c->line, c->spec);
	assert_non_null(ev);
	if (ev->group_leader != -1)
		fail_msg("line %d: '%s' is in a group", c->line, c->spec);
}

static void test_valid(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(valid_cases); i++) {
		const struct valid *c = &valid_cases[i];
		struct tacho_evlist *l = NULL;
		struct tacho_diag d = { .sz = sizeof(d) };
		int r;

		r = tacho_evlist_parse_opts(c->spec, &fake_opts, &l, &d);
		if (r)
			fail_msg("line %d: '%s' rejected: %s (column %u: %s)", c->line, c->spec,
				 tacho_err_name(r), d.column, d.message);
		check_valid(c, l);
		tacho_evlist_free(l);
	}
}

/* The cross product of every generic name with every modifier group: names and
 * expected configs written here, modifiers' expected bits computed from the rule. */
static void test_generic_times_modifiers(void **state)
{
	static const struct { const char *name; uint32_t type; uint64_t config; } names[] = {
		{ "cycles", 0, 0 }, { "cpu-cycles", 0, 0 }, { "instructions", 0, 1 },
		{ "cache-references", 0, 2 }, { "cache-misses", 0, 3 }, { "branches", 0, 4 },
		{ "branch-instructions", 0, 4 }, { "branch-misses", 0, 5 }, { "bus-cycles", 0, 6 },
		{ "stalled-cycles-frontend", 0, 7 }, { "stalled-cycles-backend", 0, 8 },
		{ "ref-cycles", 0, 9 }, { "cpu-clock", 1, 0 }, { "task-clock", 1, 1 },
		{ "page-faults", 1, 2 }, { "context-switches", 1, 3 }, { "cpu-migrations", 1, 4 },
		{ "minor-faults", 1, 5 }, { "major-faults", 1, 6 }, { "alignment-faults", 1, 7 },
		{ "emulation-faults", 1, 8 }, { "dummy", 1, 9 }, { "bpf-output", 1, 10 },
		{ "cgroup-switches", 1, 11 },
		{ "LLC-load-misses", 3, 0x10002 }, { "r1a8", 4, 0x1a8 },
	};
	static const struct { const char *mods; unsigned excl, precise; } mods[] = {
		{ "", 0, 0 }, { ":u", EK | EH, 0 }, { ":k", EU | EH, 0 }, { ":h", EU | EK, 0 },
		{ ":uk", EH, 0 }, { ":kh", EU, 0 }, { ":uh", EK, 0 }, { ":ukh", 0, 0 },
		{ ":p", 0, 1 }, { ":pp", 0, 2 }, { ":ppp", 0, 3 }, { ":upp", EK | EH, 2 },
		{ ":G", EHO, 0 }, { ":H", EG, 0 }, { ":uH", EK | EH | EG, 0 }, { ":D", PIN, 0 },
		{ ":I", EI, 0 }, { ":kIp", EU | EH | EI, 1 }, { ":e", EXC, 0 }, { ":De", PIN | EXC, 0 },
	};
	size_t n = 0;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(mods); j++) {
			char spec[128];
			struct tacho_evlist *l;
			struct tacho_diag d = { .sz = sizeof(d) };
			struct perf_event_attr a;
			int r;

			snprintf(spec, sizeof(spec), "%s%s", names[i].name, mods[j].mods);
			r = tacho_evlist_parse_opts(spec, &fake_opts, &l, &d);
			if (r)
				fail_msg("'%s' rejected: %s", spec, d.message);
			tacho_evlist_attr(l, 0, &a);
			if (a.type != names[i].type || a.config != names[i].config ||
			    excl_of(&a) != mods[j].excl || a.precise_ip != mods[j].precise)
				fail_msg("'%s': type %u config %#llx excl %#x precise %u", spec, a.type,
					 (unsigned long long)a.config, excl_of(&a),
					 (unsigned)a.precise_ip);
			tacho_evlist_free(l);
			n++;
		}
	}
	assert_int_equal(n, ARRAY_SIZE(names) * ARRAY_SIZE(mods));
}

struct invalid {
	int line;
	const char *spec;
	int err;
	unsigned column;
	const char *fragment;   /* must appear in the message */
};

#define X(spec, err, col, frag) { __LINE__, spec, err, col, frag }
#define EP (-TACHO_EPARSE)
#define EN (-TACHO_ENOEVENT)
#define ER (-TACHO_EOUTOFRANGE)

static const struct invalid invalid_cases[] = {
	/* the list */
	X("", -TACHO_EEMPTY, 1, "expected at least one event"),
	X("   ", -TACHO_EEMPTY, 4, "expected at least one event"),
	X(",", EP, 1, "expected an event before ','"),
	X("cycles,", EP, 8, "expected an event after ','"),
	X("cycles,,instructions", EP, 8, "expected an event before ','"),
	X("cycles instructions", EP, 8, "expected ',' between events"),
	X("cycles, ", EP, 9, "expected an event after ','"),
	/* groups */
	X("{", EP, 2, "expected an event"),
	X("{}", EP, 2, "expected an event in the group"),
	X("{cycles", EP, 8, "expected '}' to close the group opened at column 1"),
	X("{cycles,instructions", EP, 21, "expected '}'"),
	X("{cycles,{instructions}}", EP, 9, "groups do not nest"),
	X("{cycles}x", EP, 9, "expected ',' between events"),
	X("{cycles}:q", EP, 10, "unknown modifier 'q'"),
	X("{cycles}:", EP, 10, "expected modifiers"),
	X("cycles}", EP, 7, "expected ',' between events, not '}'"),
	X("{cycles,}", EP, 9, "expected an event before '}'"),
	X("{cycles,bogus}", EN, 9, "unknown event 'bogus'"),
	/* names */
	X("bogus", EN, 1, "unknown event 'bogus'"),
	X("cyclesx", EN, 1, "unknown event 'cyclesx'"),
	X("cyc!es", EP, 4, "unexpected character '!'"),
	X("cycles;instructions", EP, 7, "unexpected character ';'"),
	X("cycles#", EP, 7, "unexpected character '#'"),
	X(":u", EP, 1, "expected an event name"),
	X("cycl\xc3\xa9s", EP, 5, "unexpected character"),
	/* modifiers */
	X("cycles:", EP, 8, "expected modifiers"),
	X("cycles:q", EP, 8, "unknown modifier 'q'"),
	X("cycles:uq", EP, 9, "unknown modifier 'q'"),
	X("cycles:U", EP, 8, "unknown modifier 'U'"),
	X("cycles:pppp", EP, 11, "precise level above 3"),
	X("cycles:u:k", EP, 9, "modifiers come as one group"),
	X("cycles:x", EP, 8, "unknown modifier 'x'"),
	/* perf 6.1's letters tacho refuses, each with why */
	X("task-clock:S", EP, 12, "'S' (perf record's sample read of a group"),
	X("instructions:P", EP, 14, "'P' (the highest precise level"),
	X("cycles:W", EP, 8, "'W' (perf's weak group"),
	X("{cycles,instructions}:W", EP, 23, "'W' (perf's weak group"),
	X("cycles:ub", EP, 9, "'b' (perf's BPF counters)"),
	X("r1a8:z", EP, 6, "unknown modifier 'z'"),
	X("cycles,instructions:kz", EP, 22, "unknown modifier 'z'"),
	/* cache */
	X("L1-icache-stores", EN, 11, "L1-icache has no store events"),
	X("L1-icache-store-misses", EN, 11, "L1-icache has no store events"),
	X("iTLB-stores", EN, 6, "iTLB has no store events"),
	X("iTLB-prefetches", EN, 6, "only loads"),
	X("branch-stores", EN, 8, "branch has no store events"),
	X("L1-dcache-lods", EN, 11, "expected an operation of L1-dcache"),
	X("L1-dcache-load-hits", EN, 16, "expected 'misses'"),
	X("L1-dcache-loads-misses", EN, 17, "nothing may follow a plural operation"),
	X("LLC-load-", EN, 10, "expected 'misses'"),
	X("dTLB-x", EN, 6, "expected an operation of dTLB"),
	X("L1-dcache-load-misses:q", EP, 23, "unknown modifier 'q'"),
	/* raw */
	X("r12345678901234567", ER, 18, "at most 16 hex digits"),
	X("r1a8:", EP, 6, "expected modifiers"),
	X("rxyz", EN, 1, "unknown event 'rxyz'"),
	/* tracepoints */
	X("sched:nosuch", EN, 7, "no tracepoint 'nosuch'"),
	X("nosuch:event", EN, 1, "no tracepoint subsystem 'nosuch'"),
	X("sched:sched_switch:q", EN, 1, "unknown event 'sched'"),
	X("sched:nomatch*", EN, 1, "no tracepoint matches 'sched:nomatch*'"),
	X("nosuch*:x", EN, 1, "no tracepoint matches"),
	X("cyc*", EP, 1, "wildcards select tracepoints"),
	X("sched:*:q", EP, 9, "unknown modifier 'q'"),
	X("sched:*!", EP, 8, "unexpected character '!' in a tracepoint pattern"),
	X("sched::*", EP, 7, "expected a tracepoint name pattern"),
	/* breakpoints */
	X("mem:", EP, 5, "expected an address after 'mem:'"),
	X("mem:/8", EP, 5, "expected an address"),
	X("mem:zz", EP, 5, "expected a hex (0x...) or decimal address"),
	X("mem:0x12g4", EP, 9, "expected a hex"),
	X("mem:12a", EP, 7, "expected a hex"),
	X("mem:0x", EP, 7, "expected a hex"),
	X("mem:0x10000000000000000", ER, 5, "does not fit in 64 bits"),
	X("mem:0x1000/", EP, 12, "expected a length"),
	X("mem:0x1000/3", EP, 12, "1, 2, 4 or 8"),
	X("mem:0x1000/16", EP, 12, "1, 2, 4 or 8"),
	X("mem:0x1000/0", EP, 12, "1, 2, 4 or 8"),
	X("mem:0x1000/x", EP, 12, "1, 2, 4 or 8"),
	X("mem:0x1001", EP, 5, "not aligned to the length 4"),
	X("mem:0x1002/4", EP, 5, "not aligned to the length 4"),
	X("mem:0x1004/8:w", EP, 5, "not aligned to the length 8"),
	X("mem:0x1000:rx", EP, 13, "an execute breakpoint cannot also"),
	X("mem:0x1000:xw", EP, 13, "an execute breakpoint cannot also"),
	X("mem:0x1000/4:x", EP, 12, "an execute breakpoint covers 8 bytes"),
	X("mem:0x1001/1:x", EP, 12, "an execute breakpoint covers 8 bytes, the kernel's length "
				    "for one at any address (write /8 or no length)"),
	X("mem:0x1000:q", EP, 12, "unknown modifier 'q'"),
	X("mem:0x1000:w:q", EP, 14, "unknown modifier 'q'"),
	X("mem:0x1000:w:", EP, 14, "expected modifiers"),
	X("mem:0x1000:", EP, 12, "expected modifiers"),
	/* PMU terms */
	X("cpu/", EP, 5, "expected '/' to close the terms opened at column 4"),
	X("cpu/event=0x3c", EP, 15, "expected '/' to close"),
	X("/event=1/", EP, 1, "expected a PMU name"),
	X("cpu//", EP, 5, "expected a term or event name of PMU 'cpu'"),
	X("nopmu/event=1/", EN, 1, "no PMU 'nopmu'"),
	X("nopmu/x/", EN, 1, "(there are: cpu, msr, noformat, power, split)"),
	X("../cpu/event=1/", EP, 1, "expected a PMU name"),
	X("c.u/event=1/", EN, 1, "no PMU 'c.u'"),
	X("cpu/event=0x3c,bogus=1/", EN, 16, "PMU 'cpu' has no term 'bogus'"),
	X("cpu/bogus/", EN, 5, "no term or event 'bogus'"),
	X("cpu/event=0x100/", ER, 11, "0x100 does not fit in 'event' (8 bits"),
	X("cpu/event=256/", ER, 11, "does not fit in 'event'"),
	X("cpu/cmask=0x1ff/", ER, 11, "does not fit in 'cmask'"),
	X("cpu/edge=2/", ER, 10, "does not fit in 'edge' (1 bits"),
	X("cpu/event=/", EP, 11, "expected a number"),
	X("cpu/event=0xzz/", EP, 11, "expected a number"),
	X("cpu/event=-1/", EP, 11, "expected a number"),
	X("cpu/event=99999999999999999999/", ER, 11, "does not fit in 64 bits"),
	X("cpu/event=1,/", EP, 13, "expected a term after ','"),
	X("cpu/,event=1/", EP, 5, "expected a term name"),
	X("cpu/event=1,,umask=1/", EP, 13, "expected a term name"),
	X("cpu/event=1, umask=1/", EP, 13, "expected a term name"),
	X("cpu/config/", EP, 5, "expected '=' and a value after 'config'"),
	X("cpu/event=0x3c/q", EP, 16, "unknown modifier 'q'"),
	X("cpu/event=0x3c/:", EP, 17, "expected modifiers"),
	X("cpu/event=0x3c/x/", EP, 16, "unknown modifier 'x'"),
	X("cpu/name=/", EP, 10, "expected a name after 'name='"),
	X("msr/nosuch/", EN, 5, "no term or event 'nosuch'"),
	X("noformat/event=1/", EN, 10, "PMU 'noformat' has no term 'event'"),
	X("split/lo=0x1ff/", ER, 10, "does not fit in 'lo' (8 bits: config:0-3,8-11)"),
	X("split/odd=0x200/", ER, 11, "does not fit in 'odd' (9 bits"),
	X("split/weird/", EP, 7, "the alias 'weird' of PMU 'split' has a value tacho cannot read"),
	X("split/toowide/", ER, 7, "the alias 'toowide' sets 'lo' to a value wider"),
	X("split/broken=1/", EP, 7, "cannot read the format of 'broken'"),
	X("cycles,cpu/event=0x3c/,nosuch", EN, 24, "unknown event 'nosuch'"),
	/* uprobes: the form is checked before the PMU; the fake tree has no uprobe PMU
	 * (tests/unit/test-events-uprobe.c has the cases that need one) */
	X("uprobe:", EP, 8, "expected the path of an executable"),
	X("uprobe:/bin/true", EP, 17, "expected ':' and a function name"),
	X("uretprobe:/bin/true:main+4", EP, 25, "a return probe fires when the function returns"),
	X("cycles,uprobe:/bin/true:ma-in", EP, 27, "unexpected '-' in a function name"),
	X("uprobe:/bin/true:main:x", EP, 23, "unknown modifier 'x'"),
	X("cycles,uprobe:/bin/true:main", EN, 8, "no uprobe PMU in"),
};

static void test_invalid(void **state)
{
	unsigned bad = 0;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(invalid_cases); i++) {
		const struct invalid *c = &invalid_cases[i];
		struct tacho_evlist *l = (struct tacho_evlist *)&l;
		struct tacho_diag d = { .sz = sizeof(d) };
		int r;

		r = tacho_evlist_parse_opts(c->spec, &fake_opts, &l, &d);
		if (r == 0) {
			tacho_evlist_free(l);
			print_error("line %d: '%s' was accepted\n", c->line, c->spec);
			bad++;
			continue;
		}
		if (l != NULL) {
			print_error("line %d: '%s': *out not NULL on error\n", c->line, c->spec);
			bad++;
		}
		if (r != c->err || d.column != c->column || !strstr(d.message, c->fragment) ||
		    strcmp(d.source, c->spec) != 0) {
			print_error("line %d: '%s': got %s column %u '%s'; want %s column %u "
				    "'...%s...'\n", c->line, c->spec, tacho_err_name(r), d.column,
				    d.message, tacho_err_name(c->err), c->column, c->fragment);
			bad++;
		}
	}
	if (bad)
		fail_msg("%u of %zu invalid cases wrong", bad, ARRAY_SIZE(invalid_cases));
}

/* Lists: counts, names, groups, and all-or-nothing on error. */
static void test_lists(void **state)
{
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct perf_event_attr a;
	(void)state;

	assert_int_equal(tacho_evlist_parse_opts("cycles,instructions,cpu/event=0x3c,umask=1/,"
						 "task-clock , cs", &fake_opts, &l, &d), 0);
	assert_int_equal(tacho_evlist_count(l), 5);
	assert_string_equal(tacho_evlist_name(l, 0), "cycles");
	assert_string_equal(tacho_evlist_name(l, 2), "cpu/event=0x3c,umask=1/");
	assert_string_equal(tacho_evlist_name(l, 3), "task-clock");
	assert_string_equal(tacho_evlist_name(l, 4), "cs");
	assert_string_equal(tacho_evlist_pmu(l, 2), "cpu");
	assert_string_equal(tacho_evlist_unit(l, 3), "msec");
	assert_true(tc_evlist_scale(l, 3) == 1e-6);
	assert_string_equal(tacho_evlist_unit(l, 0), "");
	assert_true(tc_evlist_scale(l, 0) == 1.0);
	assert_true(tc_evlist_get(l, 0)->uses_counter);
	assert_true(tc_evlist_get(l, 0)->fixed_counter);
	assert_false(tc_evlist_get(l, 4)->uses_counter);
	assert_true(tc_evlist_get(l, 2)->uses_counter);
	assert_null(tacho_evlist_name(l, 5));
	assert_int_equal(tacho_evlist_attr(l, 5, &a), -EINVAL);
	assert_int_equal(tc_evlist_group_leader(l, 1), -1);

	/* groups, with group modifiers applied to each member on top of its own */
	assert_int_equal(tacho_evlist_add(l, "{cycles,instructions:k}:u,page-faults,"
					  "{msr/tsc/,cs}", &d), 0);
	assert_int_equal(tacho_evlist_count(l), 10);
	assert_int_equal(tc_evlist_group_leader(l, 5), 5);
	assert_int_equal(tc_evlist_group_leader(l, 6), 5);
	assert_int_equal(tc_evlist_group_leader(l, 7), -1);
	assert_int_equal(tc_evlist_group_leader(l, 8), 8);
	assert_int_equal(tc_evlist_group_leader(l, 9), 8);
	tacho_evlist_attr(l, 5, &a);
	assert_int_equal(excl_of(&a), EK | EH);
	tacho_evlist_attr(l, 6, &a);
	assert_int_equal(excl_of(&a), EK | EH);   /* the group's :u wins, as in perf */
	assert_string_equal(tacho_evlist_name(l, 6), "instructions:k");

	/* a failed add leaves the list as it was */
	assert_int_equal(tacho_evlist_add(l, "cycles,instructions,bogus", &d), -TACHO_ENOEVENT);
	assert_int_equal(d.column, 21);
	assert_int_equal(tacho_evlist_count(l), 10);
	assert_int_equal(tacho_evlist_add(l, "{cycles,instructions", &d), -TACHO_EPARSE);
	assert_int_equal(tacho_evlist_count(l), 10);
	tacho_evlist_free(l);

	/* period= is the one sampling field a spec may set */
	assert_int_equal(tacho_evlist_parse_opts("cpu/event=0x3c,period=100003/", &fake_opts, &l, &d), 0);
	tacho_evlist_attr(l, 0, &a);
	assert_int_equal(a.sample_period, 100003);
	assert_int_equal(a.config, 0x3c);
	tacho_evlist_free(l);

	/* name= renames; the unit and scale of an alias come from its files */
	assert_int_equal(tacho_evlist_parse_opts("cpu/event=0x3c,name=my-cycles/,power/energy-pkg/,"
						 "cpu/topdown-total-slots/", &fake_opts, &l, &d), 0);
	assert_string_equal(tacho_evlist_name(l, 0), "my-cycles");
	assert_string_equal(tacho_evlist_unit(l, 1), "Joules");
	assert_true(tc_evlist_scale(l, 1) == 2.3283064365386962890625e-10);
	assert_false(tc_evlist_get(l, 1)->uses_counter);
	assert_true(tc_evlist_scale(l, 2) == 2.0);
	assert_int_equal(tacho_evlist_source(l, 1), TACHO_EVENT_SRC_PMU);
	tacho_evlist_free(l);

	/* NULL-safety and bad options */
	tacho_evlist_free(NULL);
	assert_int_equal(tacho_evlist_count(NULL), 0);
	{
		struct tacho_event_opts small = { .sz = 1 };
		assert_int_equal(tacho_evlist_new(&small, &l), -EINVAL);
		assert_null(l);
	}
}

static void test_caret(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	char buf[600];
	struct tacho_evlist *l;
	(void)state;

	assert_int_equal(tacho_evlist_parse_opts("cycles:q", &fake_opts, &l, &d), -TACHO_EPARSE);
	tacho_diag_caret(&d, buf, sizeof(buf));
	assert_string_equal(buf, "cycles:q\n       ^\n");
	assert_int_equal(tacho_evlist_parse_opts("\tcycles:q", &fake_opts, &l, &d), -TACHO_EPARSE);
	tacho_diag_caret(&d, buf, sizeof(buf));
	assert_string_equal(buf, "\tcycles:q\n\t       ^\n");
	/* past the end: the caret stands after the text */
	assert_int_equal(tacho_evlist_parse_opts("cycles,", &fake_opts, &l, &d), -TACHO_EPARSE);
	tacho_diag_caret(&d, buf, sizeof(buf));
	assert_string_equal(buf, "cycles,\n       ^\n");
	/* no column: nothing */
	d.column = 0;
	assert_int_equal(tacho_diag_caret(&d, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* cut short by the buffer, as snprintf */
	d.column = 3;
	assert_int_equal(tacho_diag_caret(&d, buf, 4), (int)strlen("cycles,\n  ^\n"));
	assert_string_equal(buf, "cyc");
}

static void test_source_names(void **state)
{
	(void)state;
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_HARDWARE), "hardware");
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_CACHE), "cache");
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_SOFTWARE), "software");
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_PFM), "pfm");
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_RAW), "raw");
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_PMU), "pmu");
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_TRACEPOINT), "tracepoint");
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_BREAKPOINT), "breakpoint");
	assert_string_equal(tacho_event_source_name(TACHO_EVENT_SRC_COUNT), "unknown");
}

/* No tracefs where the options point: the error says where tacho looked. */
static void test_no_tracefs(void **state)
{
	struct tacho_event_opts o = fake_opts;
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	o.tracefs_root = "/nonexistent/tracing";
	assert_int_equal(tacho_evlist_parse_opts("sched:sched_switch", &o, &l, &d), -TACHO_ENOEVENT);
	assert_int_equal(d.column, 1);
	assert_contains(d.message, "no tracefs");
	assert_contains(d.message, "/nonexistent/tracing");
}

/* Breakpoints and software events open here (DESIGN.md section 4): the probe says so,
 * or, for a source proven not to count on this machine (a breakpoint that never
 * fires, or the test switch), -TACHO_ESILENT; a hardware event's probe gives the
 * kernel's errno, never success, on a machine without a PMU. */
static int probe_target;

static void test_probe_live(void **state)
{
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	char spec[64];
	const char *why;
	(void)state;

	snprintf(spec, sizeof(spec), "task-clock,page-faults:u,mem:%p/4:w", (void *)&probe_target);
	assert_int_equal(tacho_evlist_parse(spec, &l, &d), 0);
	assert_int_equal(tacho_evlist_probe(l, 0), 0);
	assert_int_equal(tacho_evlist_probe(l, 1),
			 th_source_exact(TACHO_SOURCE_PAGE_FAULTS, &why) ? 0 : -TACHO_ESILENT);
	assert_int_equal(tacho_evlist_probe(l, 2),
			 th_source_exact(TACHO_SOURCE_BREAKPOINT_DATA, &why) ? 0 : -TACHO_ESILENT);
	assert_int_equal(tacho_evlist_probe(l, 3), -EINVAL);
	tacho_evlist_free(l);
}

/* The real tracefs, when this machine has one mounted: ids agree with its files. */
static void test_live_tracepoint(void **state)
{
	long long id;
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct perf_event_attr a;
	(void)state;

	if (tc_read_int_file("/sys/kernel/tracing/events/syscalls/sys_enter_write/id", &id) != 0 &&
	    tc_read_int_file("/sys/kernel/debug/tracing/events/syscalls/sys_enter_write/id", &id) != 0)
		TEST_SKIP("no tracefs mounted with syscalls:sys_enter_write");
	assert_int_equal(tacho_evlist_parse("syscalls:sys_enter_write:u", &l, &d), 0);
	tacho_evlist_attr(l, 0, &a);
	assert_int_equal(a.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(a.config, (uint64_t)id);
	tacho_evlist_free(l);
}

/* Wildcards select tracepoints (sorted), each one event; modifiers apply to each. */
static void test_tracepoint_globs(void **state)
{
	static const struct { int line; const char *spec; const char *names; } g[] = {
		{ __LINE__, "sched:*", "sched:sched_switch sched:sched_wakeup" },
		{ __LINE__, "sched:sched_[sw]*", "sched:sched_switch sched:sched_wakeup" },
		{ __LINE__, "sched:sched_s?itch", "sched:sched_switch" },
		{ __LINE__, "syscalls:sys_*_write:u", "syscalls:sys_enter_write:u syscalls:sys_exit_write:u" },
		{ __LINE__, "*:sys_enter*", "raw_syscalls:sys_enter syscalls:sys_enter_write" },
		{ __LINE__, "cycles,sched:*,cs", "cycles sched:sched_switch sched:sched_wakeup cs" },
		{ __LINE__, "{sched:*,task-clock}", "sched:sched_switch sched:sched_wakeup task-clock" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(g); i++) {
		struct tacho_evlist *l;
		struct tacho_diag d = { .sz = sizeof(d) };
		struct tc_sb names = TC_SB_INIT;

		if (tacho_evlist_parse_opts(g[i].spec, &fake_opts, &l, &d) != 0)
			fail_msg("line %d: '%s' rejected: %s", g[i].line, g[i].spec, d.message);
		tc_sb_init(&names);
		for (size_t k = 0; k < tacho_evlist_count(l); k++) {
			struct perf_event_attr a;
			tc_sb_addf(&names, "%s%s", k ? " " : "", tacho_evlist_name(l, k));
			tacho_evlist_attr(l, k, &a);
			if (tacho_evlist_source(l, k) == TACHO_EVENT_SRC_TRACEPOINT) {
				assert_int_equal(a.type, PERF_TYPE_TRACEPOINT);
				if (strstr(g[i].spec, ":u"))
					assert_int_equal(excl_of(&a), EK | EH);
			}
		}
		if (strcmp(names.buf, g[i].names) != 0)
			fail_msg("line %d: '%s' gave '%s', want '%s'", g[i].line, g[i].spec, names.buf,
				 g[i].names);
		if (g[i].spec[0] == '{')
			for (size_t k = 0; k < tacho_evlist_count(l); k++)
				assert_int_equal(tc_evlist_group_leader(l, k), 0);
		tc_sb_exit(&names);
		tacho_evlist_free(l);
	}
	/* ids, not only names */
	{
		struct tacho_evlist *l;
		struct tacho_diag d = { .sz = sizeof(d) };
		struct perf_event_attr a;
		assert_int_equal(tacho_evlist_parse_opts("sched:*", &fake_opts, &l, &d), 0);
		tacho_evlist_attr(l, 0, &a);
		assert_int_equal(a.config, 316);
		tacho_evlist_attr(l, 1, &a);
		assert_int_equal(a.config, 317);
		tacho_evlist_free(l);
	}
}

/* The walk behind `tacho list`, on the fake trees: every group in order, the counts
 * of the generic tables, the PMUs' terms and aliases, the tracepoints sorted, and
 * every probe spec parsing back to an event of the same source. */
struct seen {
	size_t n[TACHO_EVENT_SRC_COUNT];
	int last_src;
	char names[64][80];
	size_t nnames;
	unsigned bad;
};

static int walk_check(void *arg, const struct tacho_event_info *ev)
{
	struct seen *w = arg;
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };

	if ((int)ev->source < w->last_src) {
		print_error("'%s' (%s) comes after a later source\n", ev->name,
			    tacho_event_source_name(ev->source));
		w->bad++;
	}
	w->last_src = ev->source;
	w->n[ev->source]++;
	if (ev->source != TACHO_EVENT_SRC_PFM && w->nnames < 64 &&
	    (ev->source == TACHO_EVENT_SRC_PMU || ev->source == TACHO_EVENT_SRC_TRACEPOINT))
		snprintf(w->names[w->nnames++], sizeof(w->names[0]), "%s", ev->name);
	if (!ev->name || !ev->aliases || !ev->desc || !ev->pmu) {
		w->bad++;
		return 0;
	}
	if (ev->probe) {
		if (tacho_evlist_parse_opts(ev->probe, &fake_opts, &l, &d) != 0) {
			print_error("probe '%s' of '%s' does not parse: %s\n", ev->probe, ev->name,
				    d.message);
			w->bad++;
			return 0;
		}
		if (tacho_evlist_source(l, 0) != ev->source) {
			print_error("probe '%s' parses as %s\n", ev->probe,
				    tacho_event_source_name(tacho_evlist_source(l, 0)));
			w->bad++;
		}
		tacho_evlist_free(l);
	}
	return 0;
}

static int stop_at_third(void *arg, const struct tacho_event_info *ev)
{
	(void)ev;
	return ++*(int *)arg == 3 ? 42 : 0;
}

/* perf's terms on a named event: period, freq and name, then modifiers; a name that is
 * a PMU still goes the PMU's way. */
static void test_named_terms(void **state)
{
	static const struct {
		int line;
		const char *spec, *name;
		uint32_t type;
		uint64_t config, period;
		bool freq;
		unsigned excl;
	} ok[] = {
		{ __LINE__, "page-faults/period=10/", "page-faults/period=10/", SWT, 2, 10, false, 0 },
		{ __LINE__, "page-faults/name=pf/", "pf", SWT, 2, 0, false, 0 },
		{ __LINE__, "page-faults/name=pf,period=0x20/u", "pf", SWT, 2, 32, false, EK | EH },
		{ __LINE__, "page-faults/period=5/:k", "page-faults/period=5/:k", SWT, 2, 5, false,
		  EU | EH },
		{ __LINE__, "cycles/freq=1000/", "cycles/freq=1000/", HWT, 0, 1000, true, 0 },
		{ __LINE__, "cycles/freq=1000,period=7/", "cycles/freq=1000,period=7/", HWT, 0, 7,
		  false, 0 },
		{ __LINE__, "L1-dcache-load-misses/period=3/", "L1-dcache-load-misses/period=3/", CT,
		  0x10000, 3, false, 0 },
		{ __LINE__, "cgroup-switches/name=cgs/", "cgs", SWT, 11, 0, false, 0 },
	};
	static const struct invalid bad[] = {
		X("page-faults/bogus=1/", EN, 13, "'bogus' is no term of a named event"),
		X("page-faults/period=0/", EP, 20, "expected a number above 0 for 'period'"),
		X("page-faults/period=x/", EP, 20, "expected a number above 0"),
		X("page-faults/period/", EP, 13, "expected TERM=VALUE"),
		X("page-faults//", EP, 13, "expected a term"),
		X("page-faults/name=/", EP, 18, "expected a name after 'name='"),
		X("page-faults/period=1/q", EP, 22, "unknown modifier 'q'"),
		X("page-faults/period=1", EP, 21, "expected '/' to close"),
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		struct tacho_evlist *l;
		struct tacho_diag d = { .sz = sizeof(d) };
		struct perf_event_attr a;

		if (tacho_evlist_parse_opts(ok[i].spec, &fake_opts, &l, &d))
			fail_msg("line %d: '%s' rejected: %s", ok[i].line, ok[i].spec, d.message);
		tacho_evlist_attr(l, 0, &a);
		if (a.type != ok[i].type || a.config != ok[i].config ||
		    a.sample_period != ok[i].period || a.freq != ok[i].freq ||
		    excl_of(&a) != ok[i].excl || strcmp(tacho_evlist_name(l, 0), ok[i].name))
			fail_msg("line %d: '%s': type %u config %#llx period %llu freq %u excl %#x "
				 "name '%s'", ok[i].line, ok[i].spec, a.type,
				 (unsigned long long)a.config, (unsigned long long)a.sample_period,
				 (unsigned)a.freq, excl_of(&a), tacho_evlist_name(l, 0));
		tacho_evlist_free(l);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct tacho_evlist *l = NULL;
		struct tacho_diag d = { .sz = sizeof(d) };
		int r = tacho_evlist_parse_opts(bad[i].spec, &fake_opts, &l, &d);

		if (r != bad[i].err || d.column != bad[i].column ||
		    !strstr(d.message, bad[i].fragment))
			fail_msg("line %d: '%s': %d at column %u: %s", bad[i].line, bad[i].spec, r,
				 d.column, d.message);
		assert_null(l);
	}
}

static void test_foreach(void **state)
{
	struct seen w = { .last_src = -1 };
	static const char *const want[] = {
		"cpu/TERM=VALUE,.../", "cpu/branch-instructions/", "cpu/branch-misses/",
		"cpu/bus-cycles/", "cpu/cache-misses/", "cpu/cache-references/",
		"cpu/cpu-cycles/", "cpu/cycles-ct/", "cpu/cycles-t/", "cpu/instructions/",
		"cpu/mem-loads/", "cpu/mem-stores/", "cpu/ref-cycles/", "cpu/topdown-total-slots/",
		"msr/TERM=VALUE,.../", "msr/aperf/", "msr/mperf/", "msr/smi/", "msr/tsc/",
		"power/TERM=VALUE,.../", "power/energy-cores/", "power/energy-pkg/",
		"split/TERM=VALUE,.../", "split/combo/", "split/toowide/", "split/weird/",
		"raw_syscalls:sys_enter", "sched:sched_switch", "sched:sched_wakeup",
		"syscalls:sys_enter_write", "syscalls:sys_exit_write",
	};
	int count = 0;
	(void)state;

	/* everything but libpfm4, whose tables depend on this machine's CPU */
	assert_int_equal(tacho_events_foreach(&fake_opts, ~(1u << TACHO_EVENT_SRC_PFM), walk_check,
					      &w), 0);
	assert_int_equal(w.bad, 0);
	assert_int_equal(w.n[TACHO_EVENT_SRC_HARDWARE], 10);
	assert_int_equal(w.n[TACHO_EVENT_SRC_CACHE], 32);
	assert_int_equal(w.n[TACHO_EVENT_SRC_SOFTWARE], 12);
	assert_int_equal(w.n[TACHO_EVENT_SRC_PFM], 0);
	assert_int_equal(w.n[TACHO_EVENT_SRC_RAW], 1);
	assert_int_equal(w.n[TACHO_EVENT_SRC_BREAKPOINT], 2);   /* mem: and uprobe: */
	assert_int_equal(w.nnames, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		if (strcmp(w.names[i], want[i]) != 0)
			fail_msg("walk item %zu is '%s', want '%s'", i, w.names[i], want[i]);

	/* a mask of one source, and a visitor that stops the walk */
	memset(&w, 0, sizeof(w));
	w.last_src = -1;
	assert_int_equal(tacho_events_foreach(&fake_opts, 1u << TACHO_EVENT_SRC_SOFTWARE,
					      walk_check, &w), 0);
	assert_int_equal(w.n[TACHO_EVENT_SRC_SOFTWARE], 12);
	assert_int_equal(w.n[TACHO_EVENT_SRC_HARDWARE], 0);
	assert_int_equal(tacho_events_foreach(&fake_opts, 0, stop_at_third, &count), 42);
	assert_int_equal(count, 3);
}

static void put_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* An alias whose .scale file is not a positive number is refused, with the file named:
 * reading it as 1 would report the value wrong by the kernel's factor. */
static void test_bad_alias_scale(void **state)
{
	static const struct {
		const char *scale;       /* NULL: no .scale file */
		int err;
		double want;
	} cases[] = {
		{ NULL, 0, 1.0 },
		{ "0.5\n", 0, 0.5 },
		{ "abc\n", -TACHO_EPARSE, 0 },
		{ "0\n", -TACHO_EPARSE, 0 },
		{ "-2\n", -TACHO_EPARSE, 0 },
		{ "\n", -TACHO_EPARSE, 0 },
	};
	char root[] = "/tmp/tacho-scale-XXXXXX", dir[128];
	struct tacho_event_opts o;
	(void)state;

	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/pw", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/pw/format", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/pw/events", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/pw", root);
	put_file(dir, "type", "10\n");
	put_file(dir, "format/event", "config:0-7\n");
	put_file(dir, "events/e", "event=0x02\n");
	o = fake_opts;
	o.sysfs_pmu_root = root;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_evlist *l = NULL;
		struct tacho_diag d = { .sz = sizeof(d) };
		char scale[600];
		int r;

		snprintf(scale, sizeof(scale), "%s/events/e.scale", dir);
		unlink(scale);
		if (cases[i].scale)
			put_file(dir, "events/e.scale", cases[i].scale);
		r = tacho_evlist_parse_opts("pw/e/", &o, &l, &d);
		if (r != cases[i].err)
			fail_msg("case %zu (scale '%s'): %d, want %d (%s)", i,
				 cases[i].scale ? cases[i].scale : "none", r, cases[i].err,
				 r ? d.message : "");
		if (r) {
			assert_contains(d.message, "is not a positive number");
			assert_contains(d.message, "e.scale");
		} else {
			assert_true(tc_evlist_scale(l, 0) == cases[i].want);
		}
		tacho_evlist_free(l);
		unlink(scale);
	}
	/* a unit that exists but cannot be read is an error too, not a missing label */
	{
		struct tacho_evlist *l = NULL;
		struct tacho_diag d = { .sz = sizeof(d) };
		char unit[200];

		snprintf(unit, sizeof(unit), "%s/events/e.unit", dir);
		assert_int_equal(mkdir(unit, 0755), 0);     /* read(2): EISDIR */
		assert_int_equal(tacho_evlist_parse_opts("pw/e/", &o, &l, &d), -EISDIR);
		assert_contains(d.message, "cannot read the unit of 'e'");
		tacho_evlist_free(l);
		assert_int_equal(rmdir(unit), 0);
	}
	{
		static const char *const rel[] = { "pw/events/e", "pw/format/event", "pw/type",
						   "pw/events", "pw/format", "pw", "" };
		for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
			snprintf(dir, sizeof(dir), "%s/%s", root, rel[i]);
			assert_int_equal(remove(dir), 0);
		}
	}
}

/* The default sets, each a spec that parses; --all's list: the software events at least,
 * no placeholder, and refused without a list. */
static void test_default_and_all_sets(void **state)
{
	static const unsigned flags[] = { 0, TACHO_EVENTS_HARDWARE, TACHO_EVENTS_LIVE,
					  TACHO_EVENTS_LIVE | TACHO_EVENTS_HARDWARE };
	struct tacho_evlist *l;
	size_t skipped = 99;
	bool clock = false;
	(void)state;

	assert_string_equal(tacho_events_default(0), "task-clock,context-switches,"
			    "cpu-migrations,page-faults,minor-faults,major-faults");
	assert_string_equal(tacho_events_default(TACHO_EVENTS_HARDWARE), "task-clock,"
			    "context-switches,cpu-migrations,page-faults,cycles,instructions,"
			    "branches,branch-misses");
	assert_string_equal(tacho_events_default(TACHO_EVENTS_LIVE), "task-clock,"
			    "context-switches,cpu-migrations,page-faults");
	assert_string_equal(tacho_events_default(TACHO_EVENTS_LIVE | TACHO_EVENTS_HARDWARE),
			    "task-clock,context-switches,cpu-migrations,page-faults,cycles,"
			    "instructions");
	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		assert_int_equal(tacho_evlist_parse(tacho_events_default(flags[i]), &l, NULL), 0);
		tacho_evlist_free(l);
	}

	assert_int_equal(tacho_evlist_add_all(NULL, false, NULL), -EINVAL);
	assert_int_equal(tacho_evlist_new(NULL, &l), 0);
	assert_int_equal(tacho_evlist_add_all(l, false, &skipped), 0);
	assert_true(skipped < 99);
	for (size_t i = 0; i < tacho_evlist_count(l); i++) {
		clock |= !strcmp(tacho_evlist_name(l, i), "task-clock");
		assert_string_not_equal(tacho_evlist_name(l, i), "dummy");
		assert_string_not_equal(tacho_evlist_name(l, i), "bpf-output");
	}
	assert_true(clock);
	tacho_evlist_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_generic_times_modifiers),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_caret),
		cmocka_unit_test(test_source_names),
		cmocka_unit_test(test_no_tracefs),
		cmocka_unit_test(test_probe_live),
		cmocka_unit_test(test_live_tracepoint),
		cmocka_unit_test(test_named_terms),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_tracepoint_globs),
		cmocka_unit_test(test_bad_alias_scale),
		cmocka_unit_test(test_default_and_all_sets),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
