/* unwind.c - DWARF call graphs at report time: the user registers and the stack window
 * each sample copied (USTACK records) unwound with elfutils' libdwfl through the CFI of
 * the binaries the recording mapped (.eh_frame, .debug_frame, separate debug files by
 * build-id), and LBR call stacks (BRANCH records) turned into chains; both joined to the
 * kernel part of the sample's PERF_SAMPLE_CALLCHAIN. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/elfutils.h"
#include "report/report-int.h"
#include "tacho/errors.h"

#define MAX_USER_FRAMES 127   /* as the kernel's sample_max_stack for fp chains */

/* The registers of asm/perf_regs.h (x86-64) in the order of their mask bits, and the
 * DWARF numbers of the x86-64 psABI that CFI uses: DWARF register d is perf register
 * dwarf_to_perf[d] (16 is the return address column: the IP). */
enum { PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP, PR_R8 = 16 };
static const unsigned dwarf_to_perf[17] = {
	PR_AX, PR_DX, PR_CX, PR_BX, PR_SI, PR_DI, PR_BP, PR_SP,
	PR_R8, PR_R8 + 1, PR_R8 + 2, PR_R8 + 3, PR_R8 + 4, PR_R8 + 5, PR_R8 + 6, PR_R8 + 7,
	PR_IP,
};

/* One process's unwinder (shared by the children it forked that map nothing of their
 * own): its modules reported as its samples reach them, the CFI libdwfl parses cached
 * with them for every later sample of those processes. */
struct uw_proc {
	uint32_t pid;
	Dwfl *dwfl;
	bool attached, failed;
	size_t last;                 /* the index of its last sample's USTACK record */
};

/* Every process's unwinder, found by pid. */
struct uw_procs {
	struct uw_proc *v;
	size_t n, cap;
	struct tc_hmap idx;          /* pid -> index into v */
};

/* What the callbacks see: the profile, the process and the sample being unwound. */
struct uw {
	struct tacho_profile *p;
	struct uw_proc *proc;
	const struct smp *s;
	const struct xtra *x;
	uint64_t sp;
	uint64_t pcs[MAX_USER_FRAMES];
	size_t n;
};

static bool perf_reg(const struct xtra *x, unsigned bit, uint64_t *v)
{
	uint64_t mask = x->r.u.ustack.mask;

	if (bit >= 64 || !(mask & (1ull << bit)))
		return false;
	memcpy(v, &x->r.u.ustack.regs[__builtin_popcountll(mask & ((1ull << bit) - 1))], 8);
	return true;
}

/* The load bias of the mapping m at pc (pc's address minus its ELF address). */
static bool map_bias(const struct map *m, struct tc_symdso *sd, uint64_t pc, uint64_t *bias)
{
	uint64_t vaddr;

	if (tc_symdso_file_to_addr(sd, pc - m->start + m->pgoff, &vaddr))
		return false;
	*bias = pc - vaddr;
	return true;
}

/* Reports to libdwfl the binary mapped at pc in the sample's process (once). */
static void report_module(struct uw *u, uint64_t pc)
{
	Dwfl *dwfl = u->proc->dwfl;
	const struct map *m;
	struct dso *d;
	struct tc_symdso *sd;
	const char *path;
	uint64_t bias;
	int fd = -1;

	if (dwfl_addrmodule(dwfl, pc))
		return;
	m = tc_profile_find_map(u->p, tc_smp_pid(u->p, u->s), pc, u->s->time);
	if (!m)
		return;
	d = &u->p->dsos[m->dso];
	sd = tc_profile_dso_open(u->p, d);   /* checks the build-id */
	if (!sd || !map_bias(m, sd, pc, &bias))
		return;
	path = tc_profile_dso_path(u->p, d);
	if (d->image) {
		/* the vDSO: libdwfl reads files, so give it the copy in a memory file */
		fd = memfd_create("tacho-vdso", MFD_CLOEXEC);
		if (fd < 0)
			return;
		if (write(fd, d->image, d->image_len) != (ssize_t)d->image_len ||
		    lseek(fd, 0, SEEK_SET) != 0) {
			close(fd);
			return;
		}
	} else if (!path) {
		return;
	}
	dwfl_report_begin_add(dwfl);
	/* add_p_vaddr: bias is what is added to the ELF's addresses */
	if (!dwfl_report_elf(dwfl, pool_str(u->p, d->name), path ? path : "[vdso]", fd, bias,
			     true) && fd >= 0)
		close(fd);   /* consumed on success only */
	dwfl_report_end(dwfl, NULL, NULL);
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct uw *u = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return (pid_t)tc_smp_tid(u->p, u->s);
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Memory as the sample saw it: the stack window it copied, else the bytes of the
 * mapped binary (read-only data a CFI expression may read). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct uw *u = arg;
	uint32_t len = u->x->r.u.ustack.stack_len;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Elf *elf;
	size_t nph, fsize;
	const char *raw;

	if (addr >= u->sp && addr - u->sp <= len && len - (addr - u->sp) >= 8) {
		memcpy(result, u->x->r.u.ustack.stack + (addr - u->sp), 8);
		return true;
	}
	mod = dwfl_addrmodule(dwfl, addr);
	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)) || elf_getphdrnum(elf, &nph) ||
	    !(raw = elf_rawfile(elf, &fsize)))
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		uint64_t va = addr - bias;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (va < ph.p_vaddr || va - ph.p_vaddr + 8 > ph.p_filesz)
			continue;
		if (ph.p_offset + (va - ph.p_vaddr) + 8 > fsize)
			return false;
		memcpy(result, raw + ph.p_offset + (va - ph.p_vaddr), 8);
		return true;
	}
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct uw *u = arg;
	Dwarf_Word regs[17];

	for (unsigned d = 0; d < 17; d++) {
		uint64_t v = 0;
		if (!perf_reg(u->x, dwarf_to_perf[d], &v))
			return false;
		regs[d] = v;
	}
	if (!dwfl_thread_state_registers(thread, 0, 17, regs))
		return false;
	dwfl_thread_state_register_pc(thread, regs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct uw *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	/* the unwinder steps from this frame next: it needs this pc's module and CFI */
	report_module(u, pc);
	u->pcs[u->n++] = pc;
	return u->n < MAX_USER_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* True when the ELF file fd has a .debug_frame section (read from the section headers:
 * nothing is decompressed) and, when bid_len > 0, the build-id bid. */
static bool has_debug_frame(int fd, const unsigned char *bid, int bid_len)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	const void *fbid;
	size_t shstrndx;
	bool found = false;

	if (!e)
		return false;
	if (bid_len > 0 && (dwelf_elf_gnu_build_id(e, &fbid) != bid_len ||
			    memcmp(fbid, bid, (size_t)bid_len)))
		goto out_end;
	if (elf_getshdrstrndx(e, &shstrndx))
		goto out_end;
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		found = name && (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame"));
	}
out_end:
	elf_end(e);
	return found;
}

/* Opens path for libdwfl when it is a debug file with a .debug_frame (of build-id bid
 * when there is one): the descriptor, its name in *name; else -1. */
static int open_debug_frame(const char *path, const unsigned char *bid, int bid_len,
			    char **name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (!has_debug_frame(fd, bid, bid_len) || !(*name = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The separate debug file of a binary, for its .debug_frame: by build-id under
 * /usr/lib/debug/.build-id, then by .gnu_debuglink next to the binary, in its .debug/
 * and under /usr/lib/debug (where gdb looks). The unwinder reads nothing else of it
 * (the report's symbols and lines come from report-resolve.c), so a debug file without
 * a .debug_frame (x86-64 code keeps its CFI in .eh_frame) is not handed to libdwfl:
 * when an unwind through .eh_frame stops (at the top of the copied stack, in every
 * process), libdwfl tries the debug file's .debug_frame next and opens all its DWARF
 * to find it, decompressing every section, once per process. (Not
 * dwfl_standard_find_debuginfo: it attaches the file it finds to the module itself,
 * so a refusal after it would not stop the load.) */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bid = NULL;
	GElf_Addr vaddr;
	int bid_len = dwfl_module_build_id(mod, &bid, &vaddr);
	char path[PATH_MAX], dir[PATH_MAX];
	const char *slash;
	int fd;

	if (bid_len > 1 && bid_len <= TC_BUILD_ID_MAX) {
		char hex[2 * TC_BUILD_ID_MAX + 1];
		tc_hex_encode(bid, (size_t)bid_len, hex, sizeof(hex));
		snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex,
			 hex + 2);
		fd = open_debug_frame(path, bid, bid_len, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	if (!debuglink_file || strchr(debuglink_file, '/') || !file_name ||
	    file_name[0] != '/' || !(slash = strrchr(file_name, '/')) ||
	    (size_t)(slash - file_name) >= sizeof(dir))
		return -1;
	memcpy(dir, file_name, (size_t)(slash - file_name));
	dir[slash - file_name] = '\0';
	{
		static const char *const forms[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
			int n = snprintf(path, sizeof(path), forms[i], dir, debuglink_file);
			if (n < 0 || (size_t)n >= sizeof(path) || !strcmp(path, file_name))
				continue;
			fd = open_debug_frame(path, bid_len > 0 ? bid : NULL,
					      bid_len > 0 ? bid_len : 0, debuginfo_file_name);
			if (fd >= 0)
				return fd;
		}
	}
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = tc_elfutils_find_elf,
	.find_debuginfo = find_debuginfo,
};

/* The user frames of the sample with a USTACK record x, into u->pcs (leaf first). */
static void unwind_sample(struct uw *u)
{
	struct uw_proc *pr = u->proc;
	uint64_t ip;

	u->n = 0;
	if (pr->failed || !perf_reg(u->x, PR_SP, &u->sp) || !perf_reg(u->x, PR_IP, &ip))
		return;
	if (!pr->dwfl) {
		pr->dwfl = dwfl_begin(&dwfl_callbacks);
		if (!pr->dwfl) {
			pr->failed = true;
			return;
		}
	}
	report_module(u, ip);
	if (!pr->attached) {
		/* the architecture comes from the first module: attach once one is there */
		if (!dwfl_addrmodule(pr->dwfl, ip))
			goto out_ip;
		if (!dwfl_attach_state(pr->dwfl, NULL, (pid_t)pr->pid, &thread_callbacks, u)) {
			pr->failed = true;
			goto out_ip;
		}
		pr->attached = true;
	}
	/* the callbacks' argument is the one given to dwfl_attach_state: the same struct,
	 * now about this sample. An error ends the walk: the frames so far stand. */
	dwfl_getthread_frames(pr->dwfl, (pid_t)tc_smp_tid(u->p, u->s), frame_cb, u);
out_ip:
	if (u->n == 0)
		u->pcs[u->n++] = ip;
}

/* The kernel part of the recorded chain (up to its PERF_CONTEXT_USER), then
 * PERF_CONTEXT_USER and the user frames: appended to p->uchains. 0 or -ENOMEM. */
static int join_chain(struct tacho_profile *p, const struct smp *s, const uint64_t *user,
		      size_t nuser, size_t *off, uint32_t *nr)
{
	size_t nk = 0, need;

	for (; nk < s->nr; nk++) {
		uint64_t v;
		memcpy(&v, &tc_smp_chain(p, s)[nk], 8);
		if (v == (uint64_t)PERF_CONTEXT_USER)
			break;
	}
	need = nk + 1 + nuser;
	if (tc_profile_grow(p, (void **)&p->uchains, &p->uchains_cap, p->nuchains + need, 8, 1024))
		return -ENOMEM;
	*off = p->nuchains;
	if (nk)
		memcpy(&p->uchains[p->nuchains], tc_smp_chain(p, s), nk * 8);
	p->uchains[p->nuchains + nk] = (uint64_t)PERF_CONTEXT_USER;
	for (size_t i = 0; i < nuser; i++)
		p->uchains[p->nuchains + nk + 1 + i] = user[i];
	p->nuchains += need;
	*nr = (uint32_t)need;
	return 0;
}

/* The process whose mappings pid uses: itself, or for a child forked without mapping
 * anything of its own (no exec), the process it was forked from, so that the children
 * of a fork server or of make share one libdwfl session and its parsed CFI. */
static uint32_t maps_owner(struct tacho_profile *p, uint32_t pid)
{
	for (int depth = 0; depth < 16; depth++) {
		const struct proc *pr = tc_profile_proc(p, pid, false);
		if (!pr || pr->nmaps || !pr->parent || pr->parent == pid)
			break;
		pid = pr->parent;
	}
	return pid;
}

/* The index of pid's unwinder in ps (made on first use), or -ENOMEM. */
static long uw_proc_index(struct uw_procs *ps, uint32_t pid)
{
	uint32_t k;

	if (tc_hmap_get(&ps->idx, pid, &k))
		return k;
	if (ps->n == ps->cap) {
		size_t nc = ps->cap ? ps->cap * 2 : 16;
		struct uw_proc *nv = realloc(ps->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		ps->v = nv;
		ps->cap = nc;
	}
	if (tc_hmap_put(&ps->idx, pid, (uint32_t)ps->n))
		return -ENOMEM;
	ps->v[ps->n] = (struct uw_proc){ .pid = pid };
	return (long)ps->n++;
}

int tc_profile_unwind(struct tacho_profile *p)
{
	struct uw_procs ps = { .idx = TC_HMAP_INIT };
	uint32_t *pidx = NULL;
	size_t *offs = NULL;
	struct uw *u;
	int err = 0;

	if (p->unwound)
		return 0;
	p->unwound = true;
	if (!p->nxtras)
		return 0;
	u = calloc(1, sizeof(*u));
	offs = calloc(p->nxtras, sizeof(*offs));
	pidx = calloc(p->nxtras, sizeof(*pidx));
	if (!u || !offs || !pidx) {
		err = -ENOMEM;
		goto out;
	}
	u->p = p;
	elf_version(EV_CURRENT);
	/* each DWARF sample's unwinder, and the last sample of each: a session ends
	 * there, so that a recording of many processes does not keep them all */
	for (size_t i = 0; i < p->nxtras; i++) {
		long k;
		if (p->xtras[i].type != TC_REC_USTACK)
			continue;
		k = uw_proc_index(&ps, maps_owner(p, tc_smp_pid(p, &p->smps[p->xtras[i].smp])));
		if (k < 0) {
			err = (int)k;
			goto out;
		}
		pidx[i] = (uint32_t)k;
		ps.v[k].last = i;
	}
	for (size_t i = 0; i < p->nxtras; i++) {
		const struct xtra *x = &p->xtras[i];
		struct smp *s = &p->smps[x->smp];
		uint32_t nr = 0;

		if (x->type == TC_REC_USTACK) {
			u->s = s;
			u->x = x;
			u->proc = &ps.v[pidx[i]];
			unwind_sample(u);
			if (u->proc->last == i && u->proc->dwfl) {
				dwfl_end(u->proc->dwfl);
				u->proc->dwfl = NULL;
				u->proc->failed = true;   /* nothing of it is left to unwind */
			}
			err = join_chain(p, s, u->pcs, u->n, &offs[i], &nr);
		} else {
			/* LBR: the sample's IP, then each call site, newest first; +1 so that
			 * the report's look-up of a return address (the byte before it) lands
			 * on the call instruction itself */
			uint64_t pcs[MAX_USER_FRAMES];
			size_t n = 0;
			if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER)
				pcs[n++] = s->ip;
			for (uint32_t k = 0; k < x->r.u.branch.nr && n < MAX_USER_FRAMES; k++) {
				memcpy(&pcs[n], &x->r.u.branch.entries[3 * k], 8);
				if (pcs[n])
					pcs[n++]++;
			}
			err = join_chain(p, s, pcs, n, &offs[i], &nr);
		}
		if (err)
			goto out;
		p->xtras[i].nr = nr;
	}
	/* the array moved as it grew: point the samples at their chains now */
	for (size_t i = 0; i < p->nxtras && !err; i++)
		err = tc_smp_set_chain(p, &p->smps[p->xtras[i].smp], &p->uchains[offs[i]],
				       p->xtras[i].nr);
out:
	for (size_t i = 0; i < ps.n; i++)
		if (ps.v[i].dwfl)
			dwfl_end(ps.v[i].dwfl);
	free(ps.v);
	tc_hmap_exit(&ps.idx);
	free(pidx);
	free(offs);
	free(u);
	return err;
}
