/* table-p6.c - the P6 family's performance-monitoring registers as data (Pentium Pro,
 * Pentium II and III, Pentium M: family 6 up to model 0Dh): PerfEvtSel0 and 1 (186h,
 * 187h), the 40-bit counters PerfCtr0 and 1 (C1h, C2h), and the events the selectors
 * take. This is the layout the seeds program: ia32lib's p6counter (002) and the driver
 * of the Russian article that writes PerfEvtSel0 (003). The architectural registers at
 * the same addresses are in table-intel.c. */
#include "msr/msr.h"

#define P6 { 1, { { TC_VENDOR(TACHO_VENDOR_INTEL), TC_FM(6, 0x01), TC_FM(6, 0x0d) } } }
#define P6_CPUS "Intel P6 family: Pentium Pro, II, III and M (family 6, models 1-0Dh)"
#define P6_SOURCE "Intel SDM Vol. 3B, 'Performance Monitoring (P6 Family Processor)'; "   \
	"the P6 events of 'Performance-Monitoring Events'; seeds 002, 003"

/* The P6 events, with the SDM's mnemonics, as ia32lib's table (seed 002) lists them.
 * The seed gives C6h and C7h to both the interrupt and the taken-branch events; the
 * manual has the taken branches at C9h and CAh, and so does this table. */
static const struct tc_msr_name p6_events[] = {
	{ 0x03, "LD_BLOCKS: loads blocked by an earlier store" },
	{ 0x04, "SB_DRAINS: store buffer drain cycles" },
	{ 0x05, "MISALIGN_MEM_REF: misaligned data memory references" },
	{ 0x06, "SEGMENT_REG_LOADS: segment register loads" },
	{ 0x07, "EMON_KNI_PREF_DISPATCHED: SSE prefetches dispatched" },
	{ 0x10, "FP_COMP_OPS_EXE: floating-point operations executed (counter 0 only)" },
	{ 0x11, "FP_ASSIST: floating-point microcode assists (counter 1 only)" },
	{ 0x12, "MUL: multiplies (counter 1 only)" },
	{ 0x13, "DIV: divides (counter 1 only)" },
	{ 0x14, "CYCLES_DIV_BUSY: cycles the divider is busy (counter 0 only)" },
	{ 0x21, "L2_ADS: L2 address strobes" },
	{ 0x22, "L2_DBUS_BUSY: cycles the L2 data bus is busy" },
	{ 0x23, "L2_DBUS_BUSY_RD: cycles the L2 data bus carries data to the core" },
	{ 0x24, "L2_LINES_IN: lines allocated in the L2" },
	{ 0x25, "L2_M_LINES_INM: modified lines allocated in the L2" },
	{ 0x26, "L2_LINES_OUT: lines evicted from the L2" },
	{ 0x27, "L2_M_LINES_OUTM: modified lines evicted from the L2" },
	{ 0x28, "L2_IFETCH: L2 instruction fetches" },
	{ 0x29, "L2_LD: L2 data loads" },
	{ 0x2a, "L2_ST: L2 data stores" },
	{ 0x2e, "L2_RQSTS: L2 requests" },
	{ 0x43, "DATA_MEM_REFS: memory references of loads and stores" },
	{ 0x45, "DCU_LINES_IN: lines allocated in the L1 data cache" },
	{ 0x46, "DCU_M_LINES_IN: modified lines allocated in the L1 data cache" },
	{ 0x47, "DCU_M_LINES_OUT: modified lines evicted from the L1 data cache" },
	{ 0x48, "DCU_MISS_OUTSTANDING: cycles weighted by L1 data misses outstanding" },
	{ 0x4b, "EMON_KNI_PREF_MISS: SSE prefetches that missed the caches" },
	{ 0x60, "BUS_REQ_OUTSTANDING: bus requests outstanding" },
	{ 0x61, "BUS_BNR_DRV: cycles this processor drives BNR#" },
	{ 0x62, "BUS_DRDY_CLOCKS: cycles DRDY# is asserted" },
	{ 0x63, "BUS_LOCK_CLOCKS: cycles LOCK# is asserted" },
	{ 0x64, "BUS_DATA_RCV: bus cycles this processor receives data" },
	{ 0x65, "BUS_TRAN_BRD: burst read transactions" },
	{ 0x66, "BUS_TRAN_RFO: read-for-ownership transactions" },
	{ 0x67, "BUS_TRANS_WB: write-back transactions" },
	{ 0x68, "BUS_TRAN_IFETCH: instruction fetch transactions" },
	{ 0x69, "BUS_TRAN_INVAL: invalidate transactions" },
	{ 0x6a, "BUS_TRAN_PWR: partial write transactions" },
	{ 0x6b, "BUS_TRANS_P: partial transactions" },
	{ 0x6c, "BUS_TRANS_IO: I/O transactions" },
	{ 0x6d, "BUS_TRAN_DEF: deferred transactions" },
	{ 0x6e, "BUS_TRAN_BURST: burst transactions" },
	{ 0x6f, "BUS_TRAN_MEM: memory transactions" },
	{ 0x70, "BUS_TRAN_ANY: all transactions" },
	{ 0x79, "CPU_CLK_UNHALTED: cycles the processor is not halted" },
	{ 0x7a, "BUS_HIT_DRV: cycles this processor drives HIT#" },
	{ 0x7b, "BUS_HITM_DRV: cycles this processor drives HITM#" },
	{ 0x7e, "BUS_SNOOP_STALL: cycles the bus is snoop-stalled" },
	{ 0x80, "IFU_IFETCH: instruction fetches" },
	{ 0x81, "IFU_IFETCH_MISS: instruction fetch misses" },
	{ 0x85, "ITLB_MISS: instruction TLB misses" },
	{ 0x86, "IFU_MEM_STALL: cycles the instruction fetch stalls" },
	{ 0x87, "ILD_STALL: cycles the instruction length decoder stalls" },
	{ 0xa2, "RESOURCE_STALLS: cycles of resource-related stalls" },
	{ 0xb0, "MMX_INSTR_EXEC: MMX instructions executed" },
	{ 0xb1, "MMX_SAT_INSTR_EXEC: MMX saturating instructions executed" },
	{ 0xb2, "MMX_UOPS_EXEC: MMX uops executed" },
	{ 0xb3, "MMX_INSTR_TYPE_EXEC: MMX instructions executed, by type (unit mask)" },
	{ 0xc0, "INST_RETIRED: instructions retired" },
	{ 0xc1, "FLOPS: floating-point operations retired (counter 0 only)" },
	{ 0xc2, "UOPS_RETIRED: uops retired" },
	{ 0xc4, "BR_INST_RETIRED: branch instructions retired" },
	{ 0xc5, "BR_MISS_PRED_RETIRED: mispredicted branches retired" },
	{ 0xc6, "CYCLES_INT_MASKED: cycles with interrupts masked" },
	{ 0xc7, "CYCLES_INT_PENDING_AND_MASKED: cycles with an interrupt pending and masked" },
	{ 0xc8, "HW_INT_RX: hardware interrupts received" },
	{ 0xc9, "BR_TAKEN_RETIRED: taken branches retired" },
	{ 0xca, "BR_MISS_PRED_TAKEN_RET: taken mispredicted branches retired" },
	{ 0xcc, "FP_MMX_TRANS: transitions between floating-point and MMX (unit mask)" },
	{ 0xcd, "MMX_ASSIST: MMX assists (EMMS executed)" },
	{ 0xce, "MMX_INSTR_RET: MMX instructions retired" },
	{ 0xd0, "INST_DECODED: instructions decoded" },
	{ 0xd2, "PARTIAL_RAT_STALLS: cycles stalled on partial register writes" },
	{ 0xd4, "SEG_RENAME_STALLS: segment register renaming stalls" },
	{ 0xd5, "SEG_REG_RENAMES: segment registers renamed" },
	{ 0xd6, "RET_SEG_RENAMES: segment register renames retired" },
	{ 0xd8, "EMON_KNI_INST_RETIRED: SSE instructions retired" },
	{ 0xd9, "EMON_KNI_COMP_INST_RET: SSE computational instructions retired" },
	{ 0xe0, "BR_INST_DECODED: branch instructions decoded" },
	{ 0xe2, "BTB_MISSES: branches the BTB did not predict" },
	{ 0xe4, "BR_BOGUS: bogus branches" },
	{ 0xe6, "BACLEARS: static branch prediction overrides (BACLEAR)" },
};
static const struct tc_msr_names p6_event_names = TC_NAMES(p6_events, "P6 event");

/* The layout of seed 002's p6counter: event 8, mask 8, USR, OS, E, PC, INT, reserved,
 * EN, INV, CMASK 8. EN exists in PerfEvtSel0 only, and starts or stops both counters. */
#define P6_FIELDS_LOW                                                                   \
	{ .name = "event", .lo = 0, .hi = 7, .show = TC_SHOW_NAMES, .names = &p6_event_names, \
	  .desc = "event select: which event the counter counts" },                       \
	{ .name = "umask", .lo = 8, .hi = 15, .show = TC_SHOW_HEX,                        \
	  .desc = "unit mask: which conditions of the event count (cache states, agents)" }, \
	{ .name = "usr", .lo = 16, .hi = 16, .show = TC_SHOW_FLAG,                        \
	  .desc = "count at privilege levels 1 to 3", .on = "counts in user mode",         \
	  .off = "not in user mode" },                                                      \
	{ .name = "os", .lo = 17, .hi = 17, .show = TC_SHOW_FLAG,                         \
	  .desc = "count at privilege level 0", .on = "counts in the kernel (ring 0)",     \
	  .off = "not in the kernel" },                                                     \
	{ .name = "edge", .lo = 18, .hi = 18, .show = TC_SHOW_FLAG,                       \
	  .desc = "count 0-to-1 transitions of the condition", .on = "counts edges",       \
	  .off = "counts every occurrence" },                                               \
	{ .name = "pc", .lo = 19, .hi = 19, .show = TC_SHOW_FLAG,                         \
	  .desc = "pin control: the PMi pin toggles on overflow instead of on increments", \
	  .on = "the pin shows overflows", .off = "the pin shows increments" },             \
	{ .name = "int", .lo = 20, .hi = 20, .show = TC_SHOW_FLAG,                        \
	  .desc = "interrupt through the local APIC on overflow", .on = "interrupts on overflow", \
	  .off = "no interrupt" }
#define P6_FIELDS_HIGH                                                                  \
	{ .name = "inv", .lo = 23, .hi = 23, .show = TC_SHOW_FLAG,                        \
	  .desc = "invert the counter-mask test", .on = "cycles below cmask",              \
	  .off = "cycles at or above cmask" },                                              \
	{ .name = "cmask", .lo = 24, .hi = 31, .show = TC_SHOW_COUNT,                     \
	  .desc = "counter mask: when not 0, count the cycles with at least cmask events" }

static const struct tc_msr_field sel0_fields[] = {
	P6_FIELDS_LOW,
	{ .name = "en", .lo = 22, .hi = 22, .show = TC_SHOW_FLAG,
	  .desc = "enable both counters (PerfEvtSel0 only)", .on = "both counters count",
	  .off = "both counters stopped" },
	P6_FIELDS_HIGH,
};

static const struct tc_msr_field sel1_fields[] = {
	P6_FIELDS_LOW,
	P6_FIELDS_HIGH,
};

static const struct tc_msr_field ctr_fields[] = {
	{ .name = "count", .lo = 0, .hi = 39, .show = TC_SHOW_COUNT,
	  .desc = "the count; a write sets bits 31:0 and copies bit 31 into bits 39:32" },
};

static const struct tacho_msr p6[] = {
	TC_MSR(.name = "P6_PERFCTR0", .aliases = "PerfCtr0", .address = 0xc1,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = P6, .cpus = P6_CPUS,
	       .desc = "counter 0, 40 bits (RDPMC 0)",
	       .source = P6_SOURCE, TC_FIELDS(ctr_fields), .rest_reserved = true),
	TC_MSR(.name = "P6_PERFCTR1", .aliases = "PerfCtr1", .address = 0xc2,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = P6, .cpus = P6_CPUS,
	       .desc = "counter 1, 40 bits (RDPMC 1)",
	       .source = P6_SOURCE, TC_FIELDS(ctr_fields), .rest_reserved = true),
	TC_MSR(.name = "P6_PERFEVTSEL0", .aliases = "PerfEvtSel0,P6_EVNTSEL0", .address = 0x186,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = P6, .cpus = P6_CPUS,
	       .desc = "selects what PerfCtr0 counts; its EN bit runs both counters",
	       .source = P6_SOURCE, TC_FIELDS(sel0_fields), .rest_reserved = true),
	TC_MSR(.name = "P6_PERFEVTSEL1", .aliases = "PerfEvtSel1,P6_EVNTSEL1", .address = 0x187,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = P6, .cpus = P6_CPUS,
	       .desc = "selects what PerfCtr1 counts (PerfEvtSel0's EN runs it)",
	       .source = P6_SOURCE, TC_FIELDS(sel1_fields), .rest_reserved = true),
};

const struct tc_msr_table tc_msr_table_p6 = { p6, ARRAY_SIZE(p6) };
