/* elfutils.c - loads libdw.so.1 (and through it libelf.so.1) at the first use of an
 * elfutils function (elfutils.h says why they are not linked). */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#define TC_ELFUTILS_IMPL
#include "util/elfutils.h"
#include "util/util.h"

/* the soname of elfutils' libdw (Debian's libdw1): libelf.so.1 is its dependency, and
 * dlsym on its handle finds libelf's functions too */
#define DW_SONAME "libdw.so.1"

static struct tc_elfutils_fns fns;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	static const struct { const char *name; size_t off; } fn[] = {
#define F(x) { #x, offsetof(struct tc_elfutils_fns, x) }
		F(dwelf_elf_gnu_build_id),
		F(dwarf_attr),
		F(dwarf_attr_integrate),
		F(dwarf_decl_line),
		F(dwarf_filesrc),
		F(dwarf_formstring),
		F(dwarf_formudata),
		F(dwarf_getsrcfiles),
		F(dwarf_getscopes),
		F(dwarf_getarangeinfo),
		F(dwarf_getaranges),
		F(dwarf_getsrclines),
		F(dwarf_lineaddr),
		F(dwarf_onearange),
		F(dwarf_onesrcline),
		F(dwarf_child),
		F(dwarf_dieoffset),
		F(dwarf_formref_die),
		F(dwarf_ranges),
		F(dwarf_siblingof),
		F(dwarf_tag),
		F(dwfl_addrmodule),
		F(dwfl_attach_state),
		F(dwfl_begin),
		F(dwfl_build_id_find_debuginfo),
		F(dwfl_build_id_find_elf),
		F(dwfl_end),
		F(dwfl_frame_pc),
		F(dwfl_getthread_frames),
		F(dwfl_line_comp_dir),
		F(dwfl_lineinfo),
		F(dwfl_module_addrdie),
		F(dwfl_module_build_id),
		F(dwfl_module_getdwarf),
		F(dwfl_module_nextcu),
		F(dwfl_module_getelf),
		F(dwfl_module_getsrc),
		F(dwfl_module_getsym_info),
		F(dwfl_module_getsymtab),
		F(dwfl_offline_section_address),
		F(dwfl_report_begin_add),
		F(dwfl_report_elf),
		F(dwfl_report_end),
		F(dwfl_standard_find_debuginfo),
		F(dwfl_thread_state_register_pc),
		F(dwfl_thread_state_registers),
		F(elf_begin),
		F(elf_end),
		F(elf_getdata),
		F(elf_getdata_rawchunk),
		F(elf_getphdrnum),
		F(elf_getscn),
		F(elf_getshdrstrndx),
		F(elf_kind),
		F(elf_memory),
		F(elf_nextscn),
		F(elf_rawdata),
		F(elf_rawfile),
		F(elf_strptr),
		F(elf_version),
		F(gelf_getehdr),
		F(gelf_getnote),
		F(gelf_getphdr),
		F(gelf_getshdr),
		F(gelf_getsym),
#undef F
	};
	void *h = dlopen(DW_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "tacho: %s cannot be loaded (%s): ELF symbols, source lines and "
			"probes need elfutils (Debian: apt-get install libdw1)\n", DW_SONAME,
			dlerror());
		_exit(127);
	}
	for (size_t i = 0; i < ARRAY_SIZE(fn); i++) {
		void *p = dlsym(h, fn[i].name);

		if (!p) {
			fprintf(stderr, "tacho: %s lacks %s: elfutils is older than tacho needs "
				"(0.159 or later)\n", DW_SONAME, fn[i].name);
			_exit(127);
		}
		/* the POSIX way of turning dlsym's pointer into a function pointer */
		*(void **)((char *)&fns + fn[i].off) = p;
	}
	/* kept loaded for the life of the process: the handle is never closed */
}

const struct tc_elfutils_fns *tc_elfutils(void)
{
	pthread_once(&once, load);
	return &fns;
}

int tc_elfutils_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			 Dwarf_Addr base, char **file_name, Elf **elfp)
{
	return tc_elfutils()->dwfl_build_id_find_elf(mod, userdata, modname, base, file_name,
						     elfp);
}

int tc_elfutils_section_address(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *secname, GElf_Word shndx,
				const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	return tc_elfutils()->dwfl_offline_section_address(mod, userdata, modname, base,
							   secname, shndx, shdr, addr);
}
