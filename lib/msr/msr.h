/* msr.h - what the files of the MSR part share: the shape of the tables (a register,
 * its fields, where it exists, the names of field values), the lookups over them, and
 * the internals of the device handle and of sets. The public contract is tacho/msr.h. */
#ifndef TACHO_MSR_MSR_H
#define TACHO_MSR_MSR_H

#include "tacho/msr.h"
#include "util/util.h"

/* --- the tables (table-*.c) --- */

/* How a field's value is put into words (decode.c). */
enum tc_msr_show {
	TC_SHOW_COUNT = 0,      /* a count: decimal, grouped */
	TC_SHOW_HEX,            /* a code or a raw quantity: hex */
	TC_SHOW_SIGNED,         /* a two's-complement number as wide as the field */
	TC_SHOW_FLAG,           /* one bit: .on or .off */
	TC_SHOW_NAMES,          /* .names, keyed by the field's value */
	TC_SHOW_EVENT_INTEL,    /* an architectural event select: .names keyed by
				   event | umask << 8 (the umask of bits 15:8) */
	TC_SHOW_EVENT_AMD,      /* AMD's event select bits 7:0 with 11:8 from bits 35:32:
				   .names keyed by the 12-bit event */
	TC_SHOW_BITS,           /* a mask: bit i set names ".unit i" ("PMC0, PMC3") */
	TC_SHOW_RATIO,          /* a bus-clock ratio: x 100 MHz */
	TC_SHOW_POW2,           /* a unit of 1/2^value .unit ("J", "W", "s") */
	TC_SHOW_BELOW_TJMAX,    /* degrees Celsius below the thermal-control activation
				   temperature */
	TC_SHOW_CELSIUS,        /* degrees Celsius */
	TC_SHOW_AMD_PSTATE_MHZ, /* AMD family 17h P-state: CpuFid of bits 7:0 and CpuDfsId
				   of bits 13:8 give 200 x fid / did MHz */
};

/* One named value of a field; a table of them is sorted by key. */
struct tc_msr_name {
	uint32_t key;
	const char *text;
};

struct tc_msr_names {
	const struct tc_msr_name *v;
	size_t n;
	const char *what;       /* what the names are, for meanings ("architectural event") */
};

struct tc_msr_field {
	const char *name;       /* lower case, unique in its register */
	uint8_t lo, hi;         /* bit range, inclusive */
	enum tc_msr_show show;
	const char *desc;       /* what the field is */
	const char *on, *off;   /* TC_SHOW_FLAG: what 1 and 0 mean */
	const char *unit;       /* TC_SHOW_POW2: "J"; TC_SHOW_BITS: the name of bit 0's
				   thing without its number ("PMC") */
	const struct tc_msr_names *names;
};

/* Where a register exists: up to four ranges, each of vendors (bits 1u << enum
 * tacho_cpu_vendor) and of family and model packed as TC_FM(family, model), inclusive. */
#define TC_FM(family, model) ((uint32_t)(family) << 8 | (uint32_t)(model))
#define TC_FM_MAX TC_FM(0x10e, 0xff)    /* display family 0xf + 0xff */
#define TC_VENDOR(v) (1u << (v))
struct tc_msr_range {
	unsigned vendors;
	uint32_t lo, hi;
};
struct tc_msr_where {
	unsigned n;
	struct tc_msr_range r[4];
};

/* One register. The public struct tacho_msr is this: opaque outside lib/msr. */
struct tacho_msr {
	const char *file;       /* the table file and line that define it (tests name it) */
	int line;
	const char *name;
	const char *aliases;    /* comma-separated, or NULL */
	uint32_t address;
	enum tacho_msr_scope scope;
	enum tacho_msr_access access;
	bool writable;          /* tacho writes it */
	const char *not_writable; /* why not, when access is RW but writable is false */
	bool no_save;           /* a write acts rather than stores (write 1 to clear):
				   writable, but a saved value means nothing */
	struct tc_msr_where where;
	const char *cpus;       /* where, for people */
	const char *desc;
	const char *source;     /* the manual and its section */
	const struct tc_msr_field *fields;
	unsigned nfields;
	bool rest_reserved;     /* the bits no field covers are reserved (else: undecoded,
				   model-specific) */
};

/* An entry of a table: its line of the file is recorded, so tests can name it. */
#define TC_MSR(...) { .file = __FILE__, .line = __LINE__, __VA_ARGS__ }
#define TC_FIELDS(array) .fields = (array), .nfields = ARRAY_SIZE(array)
#define TC_NAMES(array, what_) { .v = (array), .n = ARRAY_SIZE(array), .what = (what_) }

struct tc_msr_table {
	const struct tacho_msr *v;
	size_t n;
};
/* One table per file: architectural and Intel model-specific registers, AMD's, the P5's
 * and the P6's. */
extern const struct tc_msr_table tc_msr_table_intel, tc_msr_table_amd, tc_msr_table_p5,
	tc_msr_table_p6;

/* Where the P6's and the architectural event-select registers find their event names,
 * and AMD's (for tacho_msr_evtsel). */
extern const struct tc_msr_names tc_msr_intel_arch_events;

/* --- lookups (table.c) --- */

/* The bits a register's fields cover. */
uint64_t tc_msr_fields_mask(const struct tacho_msr *m);
/* A register by exact name (not alias), or NULL. */
const struct tacho_msr *tc_msr_by_name(const char *name);
/* The text of a names table for key, or NULL. */
const char *tc_msr_name_of(const struct tc_msr_names *names, uint32_t key);
/* Levenshtein distance between a and b, ignoring case, capped at cap + 1. */
unsigned tc_msr_distance(const char *a, const char *b, unsigned cap);

/* --- decoding (decode.c) --- */

static inline uint64_t tc_msr_field_mask(const struct tc_msr_field *f)
{
	unsigned w = (unsigned)f->hi - f->lo + 1;

	return w >= 64 ? ~0ull : ((1ull << w) - 1) << f->lo;
}

static inline uint64_t tc_msr_field_get(const struct tc_msr_field *f, uint64_t v)
{
	return (v & tc_msr_field_mask(f)) >> f->lo;
}

/* The meaning of field f of register value v, in words. */
void tc_msr_meaning(const struct tc_msr_field *f, uint64_t v, char *buf, size_t size);
/* "7:0", or "16" for one bit. */
void tc_msr_bits(unsigned lo, unsigned hi, char *buf, size_t size);

/* --- the device (device.c) --- */

struct tacho_msr_dev {
	char *dir;              /* "/dev/cpu" */
	char *sys_root;         /* "" */
	bool dir_default;       /* dir is this machine's /dev/cpu */
	struct tacho_msr_cpu cpu;
	bool cpu_given;         /* cpu is the caller's, for a fake tree: no real device */
	tacho_msr_wait_fn *wait;
	void *wait_arg;
	struct tc_msr_fd {
		int cpu;
		int rd, wr;     /* -1 until opened */
		bool regular;   /* a regular file standing for the device (device.c) */
	} *fds;
	size_t nfds, allocfds;
};

/* The path of CPU cpu's device. */
void tc_msr_dev_path(const struct tacho_msr_dev *dev, int cpu, char *buf, size_t size);

/* --- sets (set.c) --- */

struct tc_msr_entry {
	int cpu;
	char *label;
	const struct tacho_msr *msr;
	uint32_t address;
	uint64_t value;
	bool has_value;         /* value holds what was read, given or computed */
	int err;
	char *why;
	enum tacho_hint hint;
	bool wrote, written;
	uint64_t before, written_value;
};

struct tacho_msr_set {
	unsigned flags;
	struct tc_msr_entry *v;
	size_t n, alloc;
	bool has_cpu;           /* saves: the processor they were read on */
	struct tacho_msr_cpu cpu;
};

/* Appends an entry (zeroed but for cpu, msr, address); NULL on -ENOMEM. */
struct tc_msr_entry *tc_msr_set_push(struct tacho_msr_set *set, int cpu,
				     const struct tacho_msr *m, uint32_t address);
/* Records err with its explanation in e. -ENOMEM or 0. */
int tc_msr_entry_fail(struct tacho_msr_dev *dev, struct tc_msr_entry *e, int err, bool write);
/* Records err with a sentence of the caller's. -ENOMEM or 0. */
int tc_msr_entry_failf(struct tc_msr_entry *e, int err, enum tacho_hint hint, const char *fmt,
		       ...) TC_PRINTF(4, 5);

/* --- derived readings (rates.c) --- */

/* What tacho_msr_rates_measure was asked (TACHO_MSR_RATE_*) and its interval. */
unsigned tc_msr_rates_what(const struct tacho_msr_rates *r);
unsigned tc_msr_rates_interval(const struct tacho_msr_rates *r);

#endif
