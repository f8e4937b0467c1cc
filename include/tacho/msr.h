/* tacho/msr.h - libtacho's public interface: model-specific registers: the MSRs tacho
 * knows (names, fields, where they exist, the manual each comes from), reading and
 * decoding them through the kernel's msr driver or a fake tree of files, writes only to
 * the registers the table allows and only when forced, read back; save and restore;
 * readings derived over an interval; the event-select value perf programs for an event.
 * Part of <tacho.h>, which includes every area; include that one. */
#ifndef TACHO_MSR_H
#define TACHO_MSR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include "tacho/errors.h"
#include "tacho/output.h"
#include "tacho/cpu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==================================================================================
 * 8. Model-specific registers (lib/msr)
 * ================================================================================== */
/* Linux gives user space the MSRs through the msr driver: /dev/cpu/N/msr, where a read
 * or write of 8 bytes at offset A is RDMSR or WRMSR of register A on CPU N. Opening it
 * needs CAP_SYS_RAWIO; writes are also subject to kernel lockdown and to the module's
 * allow_writes parameter. An MSR the CPU (or the hypervisor) does not implement answers
 * EIO. tacho knows the registers a performance engineer reads as data (docs/msr.md lists
 * them): each with its address, names, scope, where it exists, whether the manual lets
 * software write it, whether tacho will, and its fields. */

/* --- The table --- */

/* What one copy of a register belongs to. */
enum tacho_msr_scope {
	TACHO_MSR_SCOPE_THREAD = 0,  /* each logical CPU has its own */
	TACHO_MSR_SCOPE_CORE,        /* the hardware threads of a core share it */
	TACHO_MSR_SCOPE_PACKAGE,     /* every CPU of a package (socket) shares it */
	TACHO_MSR_SCOPE_COUNT
};

/* What the manual lets software do with a register. */
enum tacho_msr_access {
	TACHO_MSR_RO = 0,            /* read-only: WRMSR faults */
	TACHO_MSR_RW,                /* read and write */
	TACHO_MSR_ACCESS_COUNT
};

/* "thread", "core", "package"; "read-only", "read-write"; "unknown" out of range.
 * Thread-safe. */
TACHO_API const char *tacho_msr_scope_name(enum tacho_msr_scope s);
TACHO_API const char *tacho_msr_access_name(enum tacho_msr_access a);

/* The processor whose registers are meant: the table says where each register exists
 * by vendor, family and model (CPUID's display values). Fixed (docs/architecture.md,
 * "An API that can grow"): a small value callers embed and point to (from the options
 * below, from a device handle); a new fact about the processor goes into a new struct. */
struct tacho_msr_cpu {
	enum tacho_cpu_vendor vendor;  /* TACHO_VENDOR_UNKNOWN: not known (nothing applies) */
	unsigned family, model;
	bool guest;                    /* CPUID.1:ECX[31]: a virtual machine, whose
					  hypervisor decides which MSRs exist */
};

/* The processor this thread runs on, from the CPUID instruction (leaves 0 and 1).
 * 0, -TACHO_ENOTX86 off x86 (then *out is zero: vendor unknown), -ENOMEM. Thread-safe. */
TACHO_API int tacho_msr_cpu_live(struct tacho_msr_cpu *out);

/* The processor of the first CPU of a CPUID dump (tacho_cpuid_dump_load: the CPU behind
 * a fake device tree). 0, -EINVAL, -TACHO_ENOVALUE (no leaf 0), -ENOMEM. Thread-safe. */
TACHO_API int tacho_msr_cpu_of_dump(const struct tacho_cpuid_dump *dump,
				    struct tacho_msr_cpu *out);

/* Writes "AMD family 0x19 model 0x1 (a virtual machine)", "an unknown CPU" for people.
 * Returns what snprintf returns. Thread-safe. */
TACHO_API int tacho_msr_cpu_format(const struct tacho_msr_cpu *cpu, char *buf, size_t size);

/* One register of the table: static, never freed, compared by pointer. Opaque: read it
 * with tacho_msr_describe. */
struct tacho_msr;

/* How many registers the table holds, and the i-th of them in the table's order (NULL
 * past the end). Thread-safe. */
TACHO_API size_t tacho_msr_count(void);
TACHO_API const struct tacho_msr *tacho_msr_at(size_t i);

/* A register described, for the caller to read. The strings are static. Sized
 * (docs/architecture.md, "An API that can grow"): the caller sets sz; the library
 * writes no further than it and refuses an sz below this first version. */
struct tacho_msr_info {
	size_t sz;                   /* the caller sets sizeof(struct tacho_msr_info) */
	const char *name;            /* "IA32_PERFEVTSEL0": unique in the table */
	const char *aliases;         /* other names, comma-separated ("TSC"); "" when none.
					An alias may name registers of several vendors */
	uint32_t address;
	enum tacho_msr_scope scope;
	enum tacho_msr_access access; /* as the manual says */
	bool writable;               /* tacho writes it (when forced) */
	const char *not_writable;    /* why tacho does not, when the manual would let it;
					"" otherwise */
	const char *cpus;            /* where it exists, for people ("Intel P6 family") */
	const char *desc;            /* what it is, one sentence */
	const char *source;          /* the manual and the section it comes from */
	unsigned nfields;
	uint64_t reserved;           /* bits the manual reserves: a write must leave them 0 */
	uint64_t undecoded;          /* bits no field describes and the manual does not
					reserve (model-specific): shown, never refused */
};

/* Fills *out (as much as out->sz covers). 0, or -EINVAL (m or out NULL, an sz below
 * the first version: nothing written). Thread-safe. */
TACHO_API int tacho_msr_describe(const struct tacho_msr *m, struct tacho_msr_info *out);

/* One field of a register. Sized, as struct tacho_msr_info. */
struct tacho_msr_field_info {
	size_t sz;                   /* the caller sets sizeof(struct tacho_msr_field_info) */
	const char *name;            /* "umask": lower case, unique in its register */
	unsigned lo, hi;             /* bit range, inclusive: hi >= lo */
	const char *desc;            /* what it is */
};

/* Fills *out with field i (0 .. nfields - 1) of m. 0 or -EINVAL (also for an sz below
 * the first version: nothing written). Thread-safe. */
TACHO_API int tacho_msr_field_describe(const struct tacho_msr *m, unsigned i,
				       struct tacho_msr_field_info *out);

/* True when the table says m exists on cpu (vendor, family, model); false for an
 * unknown CPU. Thread-safe. */
TACHO_API bool tacho_msr_applies(const struct tacho_msr *m, const struct tacho_msr_cpu *cpu);

/* Finds a register by name or alias (any case), or by address: "0x186", "186h",
 * "C001_0200h" (hex, with 0x or a trailing h; '_' may group digits; a bare number is
 * refused as ambiguous). Where a name or an address fits several registers (the P6's
 * and the architectural PERFEVTSEL0 share 186h; PerfEvtSel0 names registers of Intel
 * and AMD), the one that applies to cpu wins, else the first in the table's order; cpu
 * may be NULL. *msr is the register, NULL for an address the table does not know;
 * *address its address. 0, or -TACHO_ENOMSR (no such name: *diag says which names are
 * nearest, hint TACHO_HINT_MSRS), -TACHO_EPARSE (a malformed address), -TACHO_EOUTOFRANGE (an
 * address above 0xffffffff), -EINVAL; *msr and *address are untouched on error.
 * Thread-safe. */
TACHO_API int tacho_msr_lookup(const char *spec, const struct tacho_msr_cpu *cpu,
			       const struct tacho_msr **msr, uint32_t *address,
			       struct tacho_diag *diag);

/* One field of a value, decoded. Sized, as struct tacho_msr_info. */
struct tacho_msr_field_value {
	size_t sz;                   /* the caller sets sizeof(struct tacho_msr_field_value) */
	const char *name;            /* static */
	unsigned lo, hi;
	uint64_t value;              /* the field's bits, shifted down */
	char meaning[160];           /* what the value means, in words: "0xc0: instructions
					retired (architectural event)", "1: counts at ring 3
					(user)", "24 x 100 MHz = 2400 MHz" */
};

/* Decodes field i of the register value regval (some meanings read other fields: an
 * event select with its unit mask). 0 or -EINVAL (also for an sz below the first
 * version: nothing written). Pure; thread-safe. */
TACHO_API int tacho_msr_decode_field(const struct tacho_msr *m, unsigned i, uint64_t regval,
				     struct tacho_msr_field_value *out);

/* Makes a value for m from text: a whole value ("0x4300c0", "4391104"), or field
 * assignments "FIELD=VAL[,FIELD=VAL...]" (VAL decimal or 0x hex) applied to base (the
 * register's current value, or 0), fields not named keeping base's bits. A field may be
 * named once. 0 and *out, or -TACHO_EPARSE (malformed, or no such field: *diag has the
 * column and the nearest field names), -TACHO_EOUTOFRANGE (a value wider than its field,
 * or a whole value that sets reserved bits: *diag says which), -EINVAL. Pure;
 * thread-safe. */
TACHO_API int tacho_msr_assign(const struct tacho_msr *m, uint64_t base, const char *text,
			       uint64_t *out, struct tacho_diag *diag);

/* Writes the table, or the part of it that matches:
 *  - cpu: only the registers that apply to it; NULL: every register;
 *  - pattern: names or aliases matching it (a glob when it has * ? or [, else a
 *    case-insensitive substring); NULL or "": all;
 *  - TACHO_MSR_LIST_FIELDS in flags: the table format shows each register's fields.
 * TACHO_FORMAT_TABLE: a line per register (name, address, scope, access, whether tacho
 * writes it, description); CSV: a header row (name, aliases, address, scope, access,
 * writable, cpus, applies, description, source, field, lo, hi, field_description) and a
 * row per register, then per field when asked; JSON: the document of docs/schemas.md.
 * Returns how many registers matched (>= 0), or -EINVAL, -ENOMEM, -EIO. Thread-safe. */
#define TACHO_MSR_LIST_FIELDS 0x1u
TACHO_API int tacho_msr_list_write(const struct tacho_msr_cpu *cpu, const char *pattern,
				   unsigned flags, FILE *f, enum tacho_format fmt,
				   const struct tacho_write_opts *opts);

/* --- The devices --- */

/* Waits ms milliseconds between the two reads of a derived reading and returns how many
 * nanoseconds passed; tests change their fake files here and return ms * 1e6. */
typedef uint64_t tacho_msr_wait_fn(void *arg, unsigned ms);

/* Where the registers are read. Every field may be 0/NULL for the default. Options
 * (docs/architecture.md, "An API that can grow"): sz first; fields the caller's sz does
 * not cover take their defaults. */
struct tacho_msr_opts {
	size_t sz;                   /* sizeof(struct tacho_msr_opts) */
	const char *device_dir;      /* DIR/N/msr is CPU N's device; default "/dev/cpu". A
					regular file stands for a device: it holds register A
					in its 8 bytes at offset 8 A (registers have
					consecutive numbers: at offset A they would share
					bytes); a register past its end answers EIO, and when
					nobody may write the file (no w bit) writes answer
					EPERM, nobody may read it reads EACCES, as the driver
					answers for an MSR the CPU lacks, a write the kernel
					filters and a user who is not root, whoever runs */
	const char *sys_root;        /* prefix of /sys/kernel/security/lockdown and
					/sys/module/msr, which the explanations read; default
					"" (this machine) */
	const struct tacho_msr_cpu *cpu; /* the processor behind device_dir, a fake tree
					(tests, a copy of another machine's registers);
					NULL: this machine's (CPUID). The real devices
					are this machine's: with the default
					device_dir, a cpu given is refused (-EINVAL),
					and a character or block device in the tree (a
					link to a real one) is not opened: -EXDEV */
	tacho_msr_wait_fn *wait;     /* NULL: sleep, timed by CLOCK_MONOTONIC */
	void *wait_arg;
};

/* The devices of one machine (or a fake tree). Opaque; not thread-safe (it keeps the
 * descriptors it opened). */
struct tacho_msr_dev;

/* Makes a handle; opens nothing yet. The strings of opts are copied. 0 and *out (free
 * with tacho_msr_dev_free), -EINVAL (an sz too small, a cpu given with /dev/cpu),
 * -TACHO_EVERSION (opts set a field past the struct this library knows: a program
 * built against a newer tacho.h), -ENOMEM. */
TACHO_API int tacho_msr_dev_new(const struct tacho_msr_opts *opts, struct tacho_msr_dev **out);
TACHO_API void tacho_msr_dev_free(struct tacho_msr_dev *dev);

/* The processor behind the devices (opts->cpu, or this machine's). Never NULL for a
 * handle. */
TACHO_API const struct tacho_msr_cpu *tacho_msr_dev_cpu(const struct tacho_msr_dev *dev);

/* The CPUs that have a device (DIR/N/msr), ascending, in an array the caller frees.
 * 0; -ENOENT when none has (the directory may not even exist: tacho_msr_explain of
 * -ENOENT on CPU 0 says why), -ENOMEM. */
TACHO_API int tacho_msr_dev_cpus(struct tacho_msr_dev *dev, int **cpus, size_t *n);

/* Reads register address on CPU cpu. 0 and *value, or the -errno of the device: -ENOENT
 * (no device for that CPU), -EACCES/-EPERM (not allowed to open it), -EIO (the CPU does
 * not implement it), -EINVAL (cpu < 0). */
TACHO_API int tacho_msr_rdmsr(struct tacho_msr_dev *dev, int cpu, uint32_t address,
			      uint64_t *value);

/* Writes value to register m on CPU cpu, if tacho writes it: -TACHO_ENOWRITE (the table
 * does not allow it), -TACHO_EMSRCPU (m does not exist on the device's processor: the
 * address may mean another register there), -TACHO_EOUTOFRANGE (value sets reserved bits),
 * -TACHO_ENOFORCE (flags lacks TACHO_MSR_FORCE), checked in this order; then the -errno
 * of the device (-EPERM: the kernel filtered the write; -EIO: the CPU refused it). It
 * does not read back (tacho_msr_set_wrmsr does). */
#define TACHO_MSR_FORCE 0x1u
TACHO_API int tacho_msr_wrmsr(struct tacho_msr_dev *dev, int cpu, const struct tacho_msr *m,
			      uint64_t value, unsigned flags);

/* Says why an operation on register address (m, when the table knows it) of CPU cpu
 * failed with err, for people: what failed, why, and what to do, in one sentence
 * ("no /dev/cpu/0/msr: the msr driver is not loaded (modprobe msr ...)"); it reads the
 * machine's state (whether the module is loaded, the lockdown mode, allow_writes) under
 * opts->sys_root. *hint (if non-NULL) is where to look next (TACHO_HINT_MACHINE,
 * TACHO_HINT_MSRS or none). write: the operation was a write. Returns what snprintf
 * returns, or -EINVAL (dev or buf NULL). */
TACHO_API int tacho_msr_explain(struct tacho_msr_dev *dev, int err, int cpu,
				const struct tacho_msr *m, uint32_t address, bool write,
				char *buf, size_t size, enum tacho_hint *hint);

/* --- Sets of values: what was read, written, given or derived from an event --- */

/* An ordered set of register values, each of a CPU or of none (a value given by hand, an
 * event's encoding), with the error and its explanation where an operation failed.
 * Opaque; not thread-safe. */
struct tacho_msr_set;

/* Makes an empty set. flags: TACHO_MSR_SET_FIELDS: the table and CSV writers show each
 * value's fields (JSON always has them). 0, -ENOMEM. */
#define TACHO_MSR_SET_FIELDS 0x1u
TACHO_API int tacho_msr_set_new(unsigned flags, struct tacho_msr_set **out);
TACHO_API void tacho_msr_set_free(struct tacho_msr_set *set);

/* Appends a value the caller has (from a dump, a seed, a log): cpu -1 for none, m NULL
 * for a register the table does not know; label (copied; NULL: none) is shown before
 * it. 0, -EINVAL, -ENOMEM. */
TACHO_API int tacho_msr_set_add(struct tacho_msr_set *set, int cpu, const struct tacho_msr *m,
				uint32_t address, uint64_t value, const char *label);

/* Reads register address (m: its entry, or NULL) on each of the n CPUs and appends an
 * entry per CPU. Returns 0 when every read succeeded, else the first error (the entries
 * are appended all the same, each with its error and its explanation), -ENOMEM. */
TACHO_API int tacho_msr_set_rdmsr(struct tacho_msr_set *set, struct tacho_msr_dev *dev,
				  const struct tacho_msr *m, uint32_t address, const int *cpus,
				  size_t n);

/* Writes register m on each of the n CPUs: reads its value, applies text to it
 * (tacho_msr_assign: a whole value or FIELD=VAL assignments), writes, reads back, and
 * appends an entry per CPU holding the value before, the value written and the value
 * read back. Every CPU's new value is computed before anything is written, so a bad
 * text or a refused register writes nothing: then -TACHO_EPARSE/-TACHO_EOUTOFRANGE (with
 * *diag), -TACHO_ENOWRITE, -TACHO_EMSRCPU, or -TACHO_ENOFORCE (without TACHO_MSR_FORCE:
 * the entries say what would have been written, nothing was). A device error stops at
 * that CPU (its entry has the error and its explanation) and is returned. Neither the
 * set nor the device handle may be used by another thread meanwhile. */
TACHO_API int tacho_msr_set_wrmsr(struct tacho_msr_set *set, struct tacho_msr_dev *dev,
				  const struct tacho_msr *m, const int *cpus, size_t n,
				  const char *text, unsigned flags, struct tacho_diag *diag);

/* How many entries the set holds (0 for NULL). */
TACHO_API size_t tacho_msr_set_count(const struct tacho_msr_set *set);

/* One entry, for the caller to read. Strings live as long as the set. Sized, as struct
 * tacho_msr_info. */
struct tacho_msr_entry {
	size_t sz;                   /* the caller sets sizeof(struct tacho_msr_entry) */
	int cpu;                     /* -1: of no CPU */
	const char *label;           /* NULL: none (an event's name for its encoding) */
	const struct tacho_msr *msr; /* NULL: not in the table */
	uint32_t address;
	int err;                     /* 0, or what failed */
	const char *why;             /* err explained; NULL when err is 0 */
	enum tacho_hint hint;        /* where to look next, with why */
	bool has_value;              /* value is known (read, given, or before a write that
					was refused) */
	uint64_t value;              /* the value (after a write: as read back) */
	bool wrote;                  /* a write: before and written are meaningful */
	bool written;                /* the write was made (false: refused, or not forced) */
	uint64_t before, written_value;
};

/* Fills *out with entry i. 0 or -EINVAL (also for an sz below the first version:
 * nothing written). */
TACHO_API int tacho_msr_set_entry(const struct tacho_msr_set *set, size_t i,
				  struct tacho_msr_entry *out);

/* Writes the set to f:
 *  - TACHO_FORMAT_TABLE: a line per entry (cpu, register, address, value; for writes
 *    the value before, the value written and the value read back), an entry in error
 *    with its explanation; with TACHO_MSR_SET_FIELDS each value's fields (bits, value,
 *    meaning) under it;
 *  - TACHO_FORMAT_CSV: a header row (kind, label, cpu, name, address, value, before,
 *    written, field, bits, field_value, meaning, error), a row per entry (kind "msr")
 *    and with TACHO_MSR_SET_FIELDS a row per field (kind "field");
 *  - TACHO_FORMAT_JSON (or on one line): {"version": 1, "msrs": [{"cpu", "label",
 *    "name", "address", "value", "hex", "reserved", "fields": [{"name", "lo", "hi",
 *    "value", "meaning"}], "error", ...}]} (docs/schemas.md).
 * Explanations word their hints through opts->hint_words. 0, -EINVAL, -ENOMEM, -EIO.
 * Thread-safe on a set nobody changes meanwhile. */
TACHO_API int tacho_msr_set_write(const struct tacho_msr_set *set, FILE *f,
				  enum tacho_format fmt, const struct tacho_write_opts *opts);

/* --- Save and restore ---
 * The writable registers that exist on the device's processor, saved on a set of CPUs
 * to a text file, so that an experiment can be undone: restoring writes every saved
 * value back and reads it back. Saving again after a restore gives the same file, byte
 * for byte. docs/msr.md gives the file format. */

/* Reads every writable register that applies to the device's processor on each of the
 * n CPUs into a new set (*out, which remembers the processor). A register the CPU
 * answers EIO for (PMC7 on a CPU with four counters) is kept as absent. 0; any other
 * device error (ENOENT, EACCES...) stops the reads and is returned, with *out holding
 * what was read and the failed read last, explained (free it; do not save it);
 * -TACHO_EMSRCPU for a processor tacho does not know (nothing to save); -ENOMEM (*out
 * NULL). */
TACHO_API int tacho_msr_save_read(struct tacho_msr_dev *dev, const int *cpus, size_t n,
				  struct tacho_msr_set **out);

/* Writes a set read by tacho_msr_save_read (or parsed) in the save format. 0, -EINVAL
 * (a set without a processor), -EIO. Thread-safe on a set nobody changes meanwhile. */
TACHO_API int tacho_msr_save_write(const struct tacho_msr_set *set, FILE *f);

/* Parses a save file (text of len bytes, not necessarily NUL-terminated; name names it
 * in diagnostics). Every line must name a writable register of the table at its own
 * address. 0 and a new set, or -TACHO_EPARSE / -TACHO_EVERSION / -TACHO_EEMPTY / -ENOMEM
 * with *diag naming the line. Pure; thread-safe. */
TACHO_API int tacho_msr_save_parse(const char *text, size_t len, const char *name,
				   struct tacho_msr_set **out, struct tacho_diag *diag);

/* The processor a saved set was read on (tacho_msr_save_read) or its file names. 0, or
 * -TACHO_ENOVALUE for a set that is not a save, -EINVAL. */
TACHO_API int tacho_msr_set_processor(const struct tacho_msr_set *set,
				      struct tacho_msr_cpu *out);

/* Writes every value of saved back (tacho_msr_wrmsr, read back), in the file's order,
 * appending an entry per write to report. The saved processor must be the device's
 * (else -TACHO_EMSRCPU, nothing written); flags must hold TACHO_MSR_FORCE (else
 * -TACHO_ENOFORCE, nothing written). Returns 0, or the first device error (the writes
 * before it stay made: the report says which). */
TACHO_API int tacho_msr_restore(struct tacho_msr_dev *dev, const struct tacho_msr_set *saved,
				unsigned flags, struct tacho_msr_set *report);

/* --- Readings derived over an interval --- */

/* What tacho_msr_rates_measure reads. */
#define TACHO_MSR_RATE_FREQ  0x1u  /* IA32_APERF, IA32_MPERF and the TSC: the effective
				      frequency */
#define TACHO_MSR_RATE_POWER 0x2u  /* the RAPL energy counters and their unit: watts */

/* The readings of one CPU over the interval. A value that could not be had is NaN,
 * with the reason in the matching _err / _why. Sized, as struct tacho_msr_info. */
struct tacho_msr_rate {
	size_t sz;                   /* the caller sets sizeof(struct tacho_msr_rate) */
	int cpu;
	double seconds;              /* the interval, as measured (or as the wait hook says) */
	/* frequency: MPERF counts at the TSC's rate while the CPU is not halted, APERF at
	 * the actual clock */
	double tsc_mhz;              /* delta TSC / seconds */
	double busy_mhz;             /* the clock while running: delta APERF / delta MPERF
					x tsc_mhz */
	double avg_mhz;              /* delta APERF / seconds: halted time counts as 0 */
	double c0_pct;               /* 100 delta MPERF / delta TSC: the time not halted */
	int freq_err;
	const char *freq_why;        /* NULL when freq_err is 0; lives as long as the rates */
	/* power, in watts: energy counter deltas (32 bits, wrapping) x the energy unit of
	 * the unit register (RAPL_POWER_UNIT bits 12:8, 1/2^ESU joules) / seconds */
	double package_w;            /* Intel MSR_PKG_ENERGY_STATUS, AMD PKG_ENERGY_STAT */
	double pp0_w;                /* Intel: the cores of the package (PP0) */
	double pp1_w;                /* Intel client parts: the graphics (PP1) */
	double dram_w;               /* Intel: memory (DRAM; some servers use another unit,
					docs/msr.md) */
	double core_w;               /* AMD: this CPU's core (CORE_ENERGY_STAT) */
	double energy_unit_j;        /* joules per count */
	int power_err;               /* the package's error (the other domains are NaN when
					their register is absent, which is no error) */
	const char *power_why;
};

/* The rates of n CPUs. Opaque; once measured, reading it is thread-safe. */
struct tacho_msr_rates;

/* Reads what `what` asks on each CPU, waits interval_ms (opts->wait), reads again and
 * derives. 0 and *out (free with tacho_msr_rates_free) even when some readings failed
 * (each carries its reason); -EINVAL (what is 0, n is 0, interval_ms is 0), -ENOMEM.
 * Not thread-safe on the same device handle. */
TACHO_API int tacho_msr_rates_measure(struct tacho_msr_dev *dev, const int *cpus, size_t n,
				      unsigned interval_ms, unsigned what,
				      struct tacho_msr_rates **out);
TACHO_API void tacho_msr_rates_free(struct tacho_msr_rates *r);
TACHO_API size_t tacho_msr_rates_count(const struct tacho_msr_rates *r);
/* Fills *out with the readings of the i-th CPU. 0 or -EINVAL (also for an sz below the
 * first version: nothing written). */
TACHO_API int tacho_msr_rates_get(const struct tacho_msr_rates *r, size_t i,
				  struct tacho_msr_rate *out);

/* Writes the readings: TACHO_FORMAT_TABLE a line per CPU (frequency: TSC, busy and
 * average MHz, C0 %; power: watts per domain), a reading that failed with its reason;
 * CSV: a header row (cpu, seconds, tsc_mhz, busy_mhz, avg_mhz, c0_pct, package_w,
 * pp0_w, pp1_w, dram_w, core_w, error) and a row per CPU, empty where there is no value;
 * JSON: the document of docs/schemas.md. 0, -EINVAL, -ENOMEM, -EIO. Thread-safe. */
TACHO_API int tacho_msr_rates_write(const struct tacho_msr_rates *r, FILE *f,
				    enum tacho_format fmt, const struct tacho_write_opts *opts);

/* --- What perf programs for an event ---
 * On x86 the kernel turns a core-PMU event into the value of an event-select register
 * (arch/x86/events: x86_pmu_hw_config, and amd's): the event's config masked to the
 * event, unit mask, edge, invert and counter-mask bits (AMD: and the event select's bits
 * 11:8 at 35:32; Intel: AnyThread and the TSX bits it checks separately), plus USR and
 * OS unless the event excludes user or kernel, INT (the overflow interrupt) and EN when
 * it is scheduled; AMD adds HostOnly or GuestOnly for exclude_guest or exclude_host.
 * This decodes that value through the table, without touching any register. */

/* The register (counter 0's event select: every counter's has the same layout) and the
 * value perf programs for attr on cpu: Intel's IA32_PERFEVTSEL0 (the P6's PerfEvtSel0
 * on that family), AMD's PERF_CTL0 (PerfEvtSel0 before family 15h). pmu is the name of
 * the event's PMU (tacho_evlist_pmu): an event of type PERF_TYPE_RAW, or of the PMU
 * "cpu", "cpu_core" or "cpu_atom", is a core-PMU event. 0, or -TACHO_ENOVALUE (a generic
 * hardware or cache event, whose encoding the kernel picks from its own tables for the
 * CPU; an event of another PMU, which no event-select register holds), -TACHO_EMSRCPU
 * (cpu is not Intel or AMD), -EINVAL. It reads only fields of the attr's first version
 * (PERF_ATTR_SIZE_VER0: type, config and the exclude bits), which an attr of every size
 * has. Pure; thread-safe. */
TACHO_API int tacho_msr_evtsel(const struct perf_event_attr *attr, const char *pmu,
			       const struct tacho_msr_cpu *cpu, const struct tacho_msr **msr,
			       uint64_t *value);

/* Appends to set the value tacho_msr_evtsel gives for attr, labelled (copied), or, when
 * there is none, an entry with the error and why in words. 0, -EINVAL, -ENOMEM. */
TACHO_API int tacho_msr_set_add_event(struct tacho_msr_set *set, const char *label,
				      const struct perf_event_attr *attr, const char *pmu,
				      const struct tacho_msr_cpu *cpu);

#ifdef __cplusplus
}
#endif

#endif /* TACHO_MSR_H */
