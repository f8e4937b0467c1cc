/* elfutils.h - libelf and libdw (elfutils), loaded with dlopen at their first use.
 *
 * Symbols, source lines, unwinding (lib/symbols, lib/report) and the ELF notes and symbol tables of
 * probes (lib/events) use them; most commands (stat, cpu, list, a program's regions)
 * never do. Linked, libdw with libelf, liblzma and libbz2 cost every exec of tacho and
 * of every program linked with libtacho about 0.3 ms of CPU (some 400 symbol
 * relocations; bench/libcost.sh). Include this header instead of elfutils' and
 * <gelf.h>: each function named below then goes through a table that
 * tc_elfutils() fills from libdw.so.1 (which brings libelf.so.1) the first time one is
 * called, under pthread_once. A process that links libdw itself shares its one copy.
 *
 * libdw is a dependency of tacho (scripts/deps.sh installs libdw1 with it); a machine
 * without it fails where tacho used to fail to start at all, but later and only in the
 * commands that need it: with one line saying what is missing, and exit status 127. */
#ifndef TACHO_UTIL_ELFUTILS_H
#define TACHO_UTIL_ELFUTILS_H

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

struct tc_elfutils_fns {
	__typeof__(dwelf_elf_gnu_build_id) *dwelf_elf_gnu_build_id;
	__typeof__(dwarf_attr) *dwarf_attr;
	__typeof__(dwarf_attr_integrate) *dwarf_attr_integrate;
	__typeof__(dwarf_decl_line) *dwarf_decl_line;
	__typeof__(dwarf_filesrc) *dwarf_filesrc;
	__typeof__(dwarf_formstring) *dwarf_formstring;
	__typeof__(dwarf_formudata) *dwarf_formudata;
	__typeof__(dwarf_getsrcfiles) *dwarf_getsrcfiles;
	__typeof__(dwarf_getscopes) *dwarf_getscopes;
	__typeof__(dwarf_getarangeinfo) *dwarf_getarangeinfo;
	__typeof__(dwarf_getaranges) *dwarf_getaranges;
	__typeof__(dwarf_getsrclines) *dwarf_getsrclines;
	__typeof__(dwarf_lineaddr) *dwarf_lineaddr;
	__typeof__(dwarf_onearange) *dwarf_onearange;
	__typeof__(dwarf_onesrcline) *dwarf_onesrcline;
	__typeof__(dwarf_child) *dwarf_child;
	__typeof__(dwarf_dieoffset) *dwarf_dieoffset;
	__typeof__(dwarf_formref_die) *dwarf_formref_die;
	__typeof__(dwarf_ranges) *dwarf_ranges;
	__typeof__(dwarf_siblingof) *dwarf_siblingof;
	__typeof__(dwarf_tag) *dwarf_tag;
	__typeof__(dwfl_addrmodule) *dwfl_addrmodule;
	__typeof__(dwfl_attach_state) *dwfl_attach_state;
	__typeof__(dwfl_begin) *dwfl_begin;
	__typeof__(dwfl_build_id_find_debuginfo) *dwfl_build_id_find_debuginfo;
	__typeof__(dwfl_build_id_find_elf) *dwfl_build_id_find_elf;
	__typeof__(dwfl_end) *dwfl_end;
	__typeof__(dwfl_frame_pc) *dwfl_frame_pc;
	__typeof__(dwfl_getthread_frames) *dwfl_getthread_frames;
	__typeof__(dwfl_line_comp_dir) *dwfl_line_comp_dir;
	__typeof__(dwfl_lineinfo) *dwfl_lineinfo;
	__typeof__(dwfl_module_addrdie) *dwfl_module_addrdie;
	__typeof__(dwfl_module_build_id) *dwfl_module_build_id;
	__typeof__(dwfl_module_getdwarf) *dwfl_module_getdwarf;
	__typeof__(dwfl_module_nextcu) *dwfl_module_nextcu;
	__typeof__(dwfl_module_getelf) *dwfl_module_getelf;
	__typeof__(dwfl_module_getsrc) *dwfl_module_getsrc;
	__typeof__(dwfl_module_getsym_info) *dwfl_module_getsym_info;
	__typeof__(dwfl_module_getsymtab) *dwfl_module_getsymtab;
	__typeof__(dwfl_offline_section_address) *dwfl_offline_section_address;
	__typeof__(dwfl_report_begin_add) *dwfl_report_begin_add;
	__typeof__(dwfl_report_elf) *dwfl_report_elf;
	__typeof__(dwfl_report_end) *dwfl_report_end;
	__typeof__(dwfl_standard_find_debuginfo) *dwfl_standard_find_debuginfo;
	__typeof__(dwfl_thread_state_register_pc) *dwfl_thread_state_register_pc;
	__typeof__(dwfl_thread_state_registers) *dwfl_thread_state_registers;
	__typeof__(elf_begin) *elf_begin;
	__typeof__(elf_end) *elf_end;
	__typeof__(elf_getdata) *elf_getdata;
	__typeof__(elf_getdata_rawchunk) *elf_getdata_rawchunk;
	__typeof__(elf_getphdrnum) *elf_getphdrnum;
	__typeof__(elf_getshdrstrndx) *elf_getshdrstrndx;
	__typeof__(elf_kind) *elf_kind;
	__typeof__(elf_memory) *elf_memory;
	__typeof__(elf_getscn) *elf_getscn;
	__typeof__(elf_nextscn) *elf_nextscn;
	__typeof__(elf_rawdata) *elf_rawdata;
	__typeof__(elf_rawfile) *elf_rawfile;
	__typeof__(elf_strptr) *elf_strptr;
	__typeof__(elf_version) *elf_version;
	__typeof__(gelf_getehdr) *gelf_getehdr;
	__typeof__(gelf_getnote) *gelf_getnote;
	__typeof__(gelf_getphdr) *gelf_getphdr;
	__typeof__(gelf_getshdr) *gelf_getshdr;
	__typeof__(gelf_getsym) *gelf_getsym;
};

/* The loaded functions (loads them at the first call). Thread-safe. Never returns
 * NULL: when libdw.so.1 cannot be loaded or lacks a function, it prints why on
 * standard error and ends the process (_exit(127), as the dynamic loader would have
 * at start-up). */
const struct tc_elfutils_fns *tc_elfutils(void);

/* libdwfl's standard callbacks, for a static Dwfl_Callbacks (whose initializer needs
 * constant addresses, which the table's are not): each calls the loaded one. */
int tc_elfutils_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			 Dwarf_Addr base, char **file_name, Elf **elfp);
int tc_elfutils_section_address(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *secname, GElf_Word shndx,
				const GElf_Shdr *shdr, Dwarf_Addr *addr);

#ifndef TC_ELFUTILS_IMPL
#define dwelf_elf_gnu_build_id (tc_elfutils()->dwelf_elf_gnu_build_id)
#define dwarf_attr (tc_elfutils()->dwarf_attr)
#define dwarf_attr_integrate (tc_elfutils()->dwarf_attr_integrate)
#define dwarf_decl_line (tc_elfutils()->dwarf_decl_line)
#define dwarf_filesrc (tc_elfutils()->dwarf_filesrc)
#define dwarf_formstring (tc_elfutils()->dwarf_formstring)
#define dwarf_formudata (tc_elfutils()->dwarf_formudata)
#define dwarf_getsrcfiles (tc_elfutils()->dwarf_getsrcfiles)
#define dwarf_getscopes (tc_elfutils()->dwarf_getscopes)
#define dwarf_getarangeinfo (tc_elfutils()->dwarf_getarangeinfo)
#define dwarf_getaranges (tc_elfutils()->dwarf_getaranges)
#define dwarf_getsrclines (tc_elfutils()->dwarf_getsrclines)
#define dwarf_lineaddr (tc_elfutils()->dwarf_lineaddr)
#define dwarf_onearange (tc_elfutils()->dwarf_onearange)
#define dwarf_onesrcline (tc_elfutils()->dwarf_onesrcline)
#define dwarf_child (tc_elfutils()->dwarf_child)
#define dwarf_dieoffset (tc_elfutils()->dwarf_dieoffset)
#define dwarf_formref_die (tc_elfutils()->dwarf_formref_die)
#define dwarf_ranges (tc_elfutils()->dwarf_ranges)
#define dwarf_siblingof (tc_elfutils()->dwarf_siblingof)
#define dwarf_tag (tc_elfutils()->dwarf_tag)
#define dwfl_addrmodule (tc_elfutils()->dwfl_addrmodule)
#define dwfl_attach_state (tc_elfutils()->dwfl_attach_state)
#define dwfl_begin (tc_elfutils()->dwfl_begin)
#define dwfl_build_id_find_debuginfo (tc_elfutils()->dwfl_build_id_find_debuginfo)
#define dwfl_build_id_find_elf (tc_elfutils()->dwfl_build_id_find_elf)
#define dwfl_end (tc_elfutils()->dwfl_end)
#define dwfl_frame_pc (tc_elfutils()->dwfl_frame_pc)
#define dwfl_getthread_frames (tc_elfutils()->dwfl_getthread_frames)
#define dwfl_line_comp_dir (tc_elfutils()->dwfl_line_comp_dir)
#define dwfl_lineinfo (tc_elfutils()->dwfl_lineinfo)
#define dwfl_module_addrdie (tc_elfutils()->dwfl_module_addrdie)
#define dwfl_module_build_id (tc_elfutils()->dwfl_module_build_id)
#define dwfl_module_getdwarf (tc_elfutils()->dwfl_module_getdwarf)
#define dwfl_module_nextcu (tc_elfutils()->dwfl_module_nextcu)
#define dwfl_module_getelf (tc_elfutils()->dwfl_module_getelf)
#define dwfl_module_getsrc (tc_elfutils()->dwfl_module_getsrc)
#define dwfl_module_getsym_info (tc_elfutils()->dwfl_module_getsym_info)
#define dwfl_module_getsymtab (tc_elfutils()->dwfl_module_getsymtab)
#define dwfl_offline_section_address (tc_elfutils()->dwfl_offline_section_address)
#define dwfl_report_begin_add (tc_elfutils()->dwfl_report_begin_add)
#define dwfl_report_elf (tc_elfutils()->dwfl_report_elf)
#define dwfl_report_end (tc_elfutils()->dwfl_report_end)
#define dwfl_standard_find_debuginfo (tc_elfutils()->dwfl_standard_find_debuginfo)
#define dwfl_thread_state_register_pc (tc_elfutils()->dwfl_thread_state_register_pc)
#define dwfl_thread_state_registers (tc_elfutils()->dwfl_thread_state_registers)
#define elf_begin (tc_elfutils()->elf_begin)
#define elf_end (tc_elfutils()->elf_end)
#define elf_getdata (tc_elfutils()->elf_getdata)
#define elf_getdata_rawchunk (tc_elfutils()->elf_getdata_rawchunk)
#define elf_getphdrnum (tc_elfutils()->elf_getphdrnum)
#define elf_getshdrstrndx (tc_elfutils()->elf_getshdrstrndx)
#define elf_kind (tc_elfutils()->elf_kind)
#define elf_memory (tc_elfutils()->elf_memory)
#define elf_getscn (tc_elfutils()->elf_getscn)
#define elf_nextscn (tc_elfutils()->elf_nextscn)
#define elf_rawdata (tc_elfutils()->elf_rawdata)
#define elf_rawfile (tc_elfutils()->elf_rawfile)
#define elf_strptr (tc_elfutils()->elf_strptr)
#define elf_version (tc_elfutils()->elf_version)
#define gelf_getehdr (tc_elfutils()->gelf_getehdr)
#define gelf_getnote (tc_elfutils()->gelf_getnote)
#define gelf_getphdr (tc_elfutils()->gelf_getphdr)
#define gelf_getshdr (tc_elfutils()->gelf_getshdr)
#define gelf_getsym (tc_elfutils()->gelf_getsym)
#endif

#endif
