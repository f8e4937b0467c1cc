/* symbols.h - symbolization for reports: ELF binaries through elfutils' libdwfl
 * (.symtab/.dynsym, separate debug info, source lines), in-memory images (the vDSO),
 * kernel symbols from /proc/kallsyms, build-ids, and an x86-64 instruction length
 * decoder for attributing trap-type samples to the instruction before the IP. */
#ifndef TACHO_SYMBOLS_SYMBOLS_H
#define TACHO_SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* One binary (executable, shared library, vDSO image). Opaque. */
struct tc_symdso;

/* Opens the ELF file at path, or, when image is non-NULL, the len bytes of a binary
 * kept in memory (copied; name is only its label). Separate debug information is found
 * by build-id (/usr/lib/debug/.build-id) and .gnu_debuglink as gdb does. 0 and *out,
 * -errno when the file cannot be opened, -TACHO_EPARSE when it is not ELF. */
int tc_symdso_open(const char *path, const void *image, size_t len, struct tc_symdso **out);
void tc_symdso_free(struct tc_symdso *d);

/* The longest build-id kept (a SHA-1, GNU ld's default), in the record file and the
 * build-id cache alike. */
#define TC_BUILD_ID_MAX 20

/* The binary's GNU build-id, or NULL (*len 0) when it has none. */
const uint8_t *tc_symdso_build_id(const struct tc_symdso *d, size_t *len);

/* Translates an offset in the file (a mapping's pgoff + ip - start) to the ELF virtual
 * address of the same byte, through the PT_LOAD program header that holds it. 0 or
 * -ENOENT when no loadable segment covers the offset. */
int tc_symdso_file_to_addr(const struct tc_symdso *d, uint64_t off, uint64_t *addr);

struct tc_symloc {
	const char *symbol;   /* function name or NULL; owned by the dso */
	uint64_t sym_start;   /* ELF address of the function's first byte */
	uint64_t sym_size;
	const char *file;     /* source file or NULL; owned by the dso */
	int line;             /* 0 when unknown */
	const char *comp_dir; /* the directory a relative file is relative to, or NULL */
};

/* What is at ELF address addr: function, and source file and line when the binary (or
 * its separate debug file) has DWARF line tables. 0 (fields NULL/0 when unknown).
 * Not thread-safe per dso. */
int tc_symdso_lookup(struct tc_symdso *d, uint64_t addr, struct tc_symloc *out);
/* The function alone (out's file, line and comp_dir NULL/0): no DWARF is read. 0. */
int tc_symdso_symbol(struct tc_symdso *d, uint64_t addr, struct tc_symloc *out);
/* The source file, line and comp_dir of addr into out (NULL/0 when unknown), the rest
 * of out untouched. The first call for a binary reads its line tables (libdw
 * decompresses them: for libc's debug file, tens of milliseconds). */
void tc_symdso_line(struct tc_symdso *d, uint64_t addr, struct tc_symloc *out);

/* The line the function around ELF address addr is declared on (DWARF's
 * DW_AT_decl_line of the outermost subprogram that holds addr: the function the
 * symbol table names, not one inlined into it), 0 when the binary has no DWARF for it.
 * Not thread-safe per dso. */
int tc_symdso_decl_line(struct tc_symdso *d, uint64_t addr);

/* One function inlined at an address: the name of the function whose copy holds it
 * (owned by the dso; NULL when DWARF names none) and the source file and line of the
 * call that was inlined, in its caller (NULL/0 when unknown). */
struct tc_syminl {
	const char *name;
	const char *call_file;
	int call_line;
};

/* The functions inlined at ELF address addr, innermost first, into out (at most
 * max): DWARF's DW_TAG_inlined_subroutine scopes around addr up to the subprogram
 * that holds them (the function the symbol table names, which is not among them).
 * Entry i's call is in entry i + 1's function (the last's in that subprogram). The
 * number of entries (0: none inlined there, or no DWARF for addr). The first call for
 * a binary maps its inline cache (lib/symbols/inlcache.h) from the build-id cache, or
 * makes it in one walk of the DWARF and writes it there; where the folder cannot be
 * written, libdw answers each call (dwarf_getscopes). Either way the same answer. Not
 * thread-safe per dso. */
int tc_symdso_inlines(struct tc_symdso *d, uint64_t addr, struct tc_syminl *out, size_t max);

/* Symbol versions. glibc's .symtab names functions with their version
 * ("fopen@@GLIBC_2.2.5", the default; "memcpy@GLIBC_2.2.5", an older one). The
 * length of name without its version (up to the '@'). */
size_t tc_sym_base_len(const char *name);
/* Whether a function's name answers a name a user gave (--symbols, --annotate):
 * equal, or equal without the version where either lacks one ("fopen" and
 * "fopen@@GLIBC_2.2.5"); two different versions do not match each other. A binary's
 * names keep their versions only where two of its functions differ by them
 * (memcpy@@GLIBC_2.14, memcpy@GLIBC_2.2.5); elsewhere they are shown without. */
bool tc_sym_name_match(const char *name, const char *query);

/* Finds a function by name (tc_sym_name_match): 0 and its ELF start address and size,
 * or -ENOENT. */
int tc_symdso_find(struct tc_symdso *d, const char *name, uint64_t *start, uint64_t *size);

/* Reads up to len bytes of the file's contents at ELF address addr (for decoding
 * instructions). Returns the number of bytes copied (0 when addr is not in a loaded
 * segment with file contents). */
size_t tc_symdso_read(struct tc_symdso *d, uint64_t addr, void *buf, size_t len);

/* The NUL-terminated string at ELF address addr when it lies in a section the program
 * cannot write and whose bytes the file holds (SHT_PROGBITS, allocated, neither
 * writable nor code: .rodata's string constants, which stay at run time as the file has
 * them; a separate debug file holds none). Copies it into buf, NUL included: its
 * length, or -ENOENT (no such section there, or no NUL before max bytes or the
 * section's end). */
int tc_symdso_read_const_str(struct tc_symdso *d, uint64_t addr, char *buf, size_t max);

/* The GNU build-id of the ELF file at path (at record time): its length (<= max) copied
 * into bid, or a negative code (-ENOENT, -TACHO_ENOVALUE when the file has none). */
int tc_build_id_of_file(const char *path, uint8_t *bid, size_t max);
/* Same for an ELF image in memory. */
int tc_build_id_of_image(const void *image, size_t len, uint8_t *bid, size_t max);

/* --- C++ names --- */
/* The readable form of an Itanium-ABI mangled name ("_ZN3foo3barEv" -> "foo::bar()"),
 * malloc'd (the caller frees), or NULL when name is not mangled, cannot be demangled,
 * or libstdc++.so.6 cannot be loaded: __cxa_demangle is looked up at the first call
 * with dlopen, so libtacho needs no C++ runtime to link or to run. Thread-safe. */
char *tc_demangle(const char *name);
/* Whether __cxa_demangle could be loaded (loads it on the first call). Thread-safe. */
bool tc_demangle_available(void);

/* --- kernel symbols --- */
struct tc_kallsyms;
/* Loads text symbols of a kallsyms-format file (path NULL: /proc/kallsyms). When
 * kptr_restrict hides addresses every address reads 0: the table is then empty and
 * tc_kallsyms_hidden() says so. 0 or -errno. */
int tc_kallsyms_load(const char *path, struct tc_kallsyms **out);
void tc_kallsyms_free(struct tc_kallsyms *k);
bool tc_kallsyms_hidden(const struct tc_kallsyms *k);
/* A copy that tc_kallsyms_cache_save wrote ("%016x t NAME" lines in address order
 * from byte body of fd on), mapped rather than read: each look-up bisects its lines,
 * so that only the pages of the symbols looked up are read. The copy is only ever
 * replaced (renamed over), never rewritten, so that the mapping stays whole. 0,
 * -EINVAL (no lines), -errno. It is looked up, not walked: its count is 0. */
int tc_kallsyms_map(int fd, size_t body, struct tc_kallsyms **out);
/* The kernel symbol at or before addr (NULL when below the first one): name, start.
 * Not thread-safe on a mapped copy (it keeps the names it found). */
const char *tc_kallsyms_lookup(struct tc_kallsyms *k, uint64_t addr, uint64_t *start);
/* The number of text symbols, and the i-th in address order: its name and address. */
size_t tc_kallsyms_count(const struct tc_kallsyms *k);
const char *tc_kallsyms_at(const struct tc_kallsyms *k, size_t i, uint64_t *addr);

/* The kernel's own text symbols of one boot in the user's cache folder
 * (kallsyms-cache.c): reading /proc/kallsyms makes the kernel format every line, half of
 * a small report's time, and they do not change during a boot (those of modules, BPF
 * and trampolines do, and are not kept). _load gives the copy of boot boot_id when it
 * covers [lo, hi]: 0 and *out; -ENOENT (none), -ERANGE (it does not cover them: it is
 * right, /proc/kallsyms is needed), -EPERM (the folder or the file not the user's own,
 * or writable by others, or a link), -EINVAL (not such a copy), -errno. _save writes
 * one from k, a whole read of /proc/kallsyms in boot boot_id that showed its addresses
 * (a new file of mode 0600 renamed into place, in a folder of the user's own), and
 * removes the copies of other boots: 0 or -errno. */
int tc_kallsyms_cache_load(const char *boot_id, uint64_t lo, uint64_t hi,
			   struct tc_kallsyms **out);
int tc_kallsyms_cache_save(const struct tc_kallsyms *k, const char *boot_id);
/* The copy of this boot made now from /proc/kallsyms when there is none (a broken one
 * is replaced; one there is left as it is): tacho record's, after a recording with
 * kernel samples, so that the first report reads no /proc/kallsyms (perf record keeps
 * kallsyms in its build-id cache for the same reason). 0 (made, or there already), or
 * -errno: the folder refused (-EPERM), the addresses hidden (-EACCES), a read or write
 * that failed. */
int tc_kallsyms_cache_prime(void);
/* Whether the first lines of /proc/kallsyms (text, NUL-terminated) show every address as
 * 0, as they do to a user kernel.kptr_restrict hides them from (a visible kernel may
 * begin with per-CPU symbols at 0, never a page of them). */
bool tc_kallsyms_head_hidden(const char *text);
/* Removes the copies in the cache folder dir, but that of keep_boot_id (NULL: all). */
void tc_kallsyms_cache_forget(const char *dir, const char *keep_boot_id);

/* --- x86-64 instruction lengths --- */
/* The length in bytes of the instruction at code[0..avail), decoded as 64-bit code, or
 * 0 when it cannot be decoded (unknown opcode, not enough bytes). Only lengths: prefixes,
 * REX, VEX/EVEX, the opcode maps 0F, 0F38, 0F3A, ModRM/SIB/displacements, immediates. */
unsigned tc_x86_insn_len(const uint8_t *code, size_t avail);

/* The start address of the instruction that ends at ip (the one a trap-type event
 * reports the address after), found by decoding forward from func_start, whose code is
 * code[0..len). 0 and *out, or -TACHO_EPARSE when decoding does not land on ip. */
int tc_x86_prev_insn(const uint8_t *code, size_t len, uint64_t func_start, uint64_t ip,
		     uint64_t *out);

#endif
