/* table-p5.c - the Pentium's (P5, family 5) performance-monitoring registers as data:
 * the Control and Event Select Register (CESR, 11h) that programs both counters, the
 * two 40-bit counters CTR0 and CTR1 (12h, 13h), and the events CESR selects. This is
 * what the seeds program: "Pentium Secrets" (000) found the layout, "The P5 basics"
 * (001) gives its bits and events, Intel's survey (004) writes it with PMX32
 * ("WRMSR 11 AND FFFFFC00 OR 00000083"). The TSC (10h) is shared with later parts and
 * lives in table-intel.c. */
#include "msr/msr.h"

#define P5 { 1, { { TC_VENDOR(TACHO_VENDOR_INTEL), TC_FM(5, 0), TC_FM(5, 0xff) } } }
#define P5_CPUS "Intel Pentium and Pentium MMX (family 5)"
#define P5_SOURCE "Intel SDM Vol. 3B, 'Performance Monitoring (Pentium Processors)'; "    \
	"Vol. 4, 'MSRs in the Pentium Processors'; seeds 000, 001, 004"

/* The events of the 6-bit event select, as the seeds list them (001 has them all, 000
 * the same less 10h, 11h, 20h and 21h, which 001 calls "unknown, but counts" for the
 * last two). With CC set the counter counts the clocks the event lasts instead. */
static const struct tc_msr_name p5_events[] = {
	{ 0x00, "data reads" },
	{ 0x01, "data writes" },
	{ 0x02, "data TLB misses" },
	{ 0x03, "data read misses" },
	{ 0x04, "data write misses" },
	{ 0x05, "write hits to lines in M or E state" },
	{ 0x06, "data cache lines written back" },
	{ 0x07, "external snoops of the data cache" },
	{ 0x08, "data cache snoop hits" },
	{ 0x09, "memory accesses in both pipes at once" },
	{ 0x0a, "data cache bank conflicts" },
	{ 0x0b, "misaligned data memory references" },
	{ 0x0c, "code reads" },
	{ 0x0d, "code TLB misses" },
	{ 0x0e, "code cache misses" },
	{ 0x0f, "segment register loads" },
	{ 0x10, "segment descriptor cache accesses" },
	{ 0x11, "segment descriptor cache hits" },
	{ 0x12, "branches" },
	{ 0x13, "branch target buffer hits" },
	{ 0x14, "taken branches or BTB hits" },
	{ 0x15, "pipeline flushes" },
	{ 0x16, "instructions executed (both pipes)" },
	{ 0x17, "instructions executed in the V pipe (paired)" },
	{ 0x18, "clocks with a bus cycle in progress (bus utilization)" },
	{ 0x19, "clocks stalled by full write buffers" },
	{ 0x1a, "clocks stalled waiting for data memory reads" },
	{ 0x1b, "clocks stalled by writes to M or E lines" },
	{ 0x1c, "locked bus cycles" },
	{ 0x1d, "I/O read or write cycles" },
	{ 0x1e, "non-cacheable memory references" },
	{ 0x1f, "clocks stalled by address generation interlocks (AGI)" },
	{ 0x22, "floating-point operations" },
	{ 0x23, "breakpoint matches on DR0" },
	{ 0x24, "breakpoint matches on DR1" },
	{ 0x25, "breakpoint matches on DR2" },
	{ 0x26, "breakpoint matches on DR3" },
	{ 0x27, "hardware interrupts" },
	{ 0x28, "data reads or data writes" },
	{ 0x29, "data read misses or data write misses" },
};
static const struct tc_msr_names p5_event_names = TC_NAMES(p5_events, "P5 event");

/* Each 16-bit half programs one counter. The manual calls bits 6-8 of a half one 3-bit
 * counter-control field (0: off, 1: events at CPL 0-2, 2: at CPL 3, 3: at all, +4:
 * clocks instead of events); the seeds name the bits one by one, and so does tacho. */
#define CESR_HALF(n, base)                                                              \
	{ .name = "es" #n, .lo = (base), .hi = (base) + 5, .show = TC_SHOW_NAMES,        \
	  .names = &p5_event_names,                                                       \
	  .desc = "event select of counter " #n " (CTR" #n ")" },                          \
	{ .name = "os" #n, .lo = (base) + 6, .hi = (base) + 6, .show = TC_SHOW_FLAG,      \
	  .desc = "counter " #n " counts at CPL 0, 1 and 2 (system code)",                 \
	  .on = "counts at CPL 0-2", .off = "not at CPL 0-2" },                             \
	{ .name = "usr" #n, .lo = (base) + 7, .hi = (base) + 7, .show = TC_SHOW_FLAG,     \
	  .desc = "counter " #n " counts at CPL 3 (user code)",                            \
	  .on = "counts at CPL 3", .off = "not at CPL 3" },                                 \
	{ .name = "cc" #n, .lo = (base) + 8, .hi = (base) + 8, .show = TC_SHOW_FLAG,      \
	  .desc = "counter " #n " counts clocks (the event's duration) rather than events", \
	  .on = "counts clocks", .off = "counts events" },                                  \
	{ .name = "pc" #n, .lo = (base) + 9, .hi = (base) + 9, .show = TC_SHOW_FLAG,      \
	  .desc = "pin control: the PM" #n " pin signals counter " #n "'s overflows rather " \
		  "than its increments",                                                  \
	  .on = "PM" #n " shows overflows", .off = "PM" #n " shows increments" }

static const struct tc_msr_field cesr_fields[] = {
	CESR_HALF(0, 0),
	CESR_HALF(1, 16),
};

static const struct tc_msr_field ctr_fields[] = {
	{ .name = "count", .lo = 0, .hi = 39, .show = TC_SHOW_COUNT,
	  .desc = "the count of the event (or clocks) CESR selects for this counter" },
};

static const struct tacho_msr p5[] = {
	TC_MSR(.name = "CESR", .aliases = "P5_CESR", .address = 0x11,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = P5, .cpus = P5_CPUS,
	       .desc = "the Control and Event Select Register: bits 15:0 program CTR0, bits "
		       "31:16 CTR1 (event, privilege levels, events or clocks, pin)",
	       .source = P5_SOURCE, TC_FIELDS(cesr_fields), .rest_reserved = true),
	TC_MSR(.name = "CTR0", .aliases = "P5_CTR0", .address = 0x12,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = P5, .cpus = P5_CPUS,
	       .desc = "counter 0, 40 bits; RDPMC 0 reads it on the Pentium MMX",
	       .source = P5_SOURCE, TC_FIELDS(ctr_fields), .rest_reserved = true),
	TC_MSR(.name = "CTR1", .aliases = "P5_CTR1", .address = 0x13,
	       .scope = TACHO_MSR_SCOPE_THREAD, .access = TACHO_MSR_RW, .writable = true,
	       .where = P5, .cpus = P5_CPUS,
	       .desc = "counter 1, 40 bits; RDPMC 1 reads it on the Pentium MMX",
	       .source = P5_SOURCE, TC_FIELDS(ctr_fields), .rest_reserved = true),
};

const struct tc_msr_table tc_msr_table_p5 = { p5, ARRAY_SIZE(p5) };
