/* uprobe.c - what the uprobe/uretprobe events need from outside the grammar: the
 * kernel's uprobe PMU (its type and retprobe bit, from sysfs) and the file offset of an
 * instruction in an ELF file (a symbol's entry through libelf, or an offset checked
 * against the executable segments). The grammar itself is in parse.c. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/elfutils.h"
#include "events/events.h"
#include "tacho/errors.h"

/* The paths uprobe attrs point to. An attr is a plain struct that callers copy and
 * keep after the list is gone (record, regions and bench open their copies later), so
 * the string config1 points to must outlive any list: each distinct resolved path is
 * kept once, for the life of the process. They are paths of existing files a program
 * named, so there are few. */
static struct {
	pthread_mutex_t lock;
	struct tc_strpool paths;
} interned = { .lock = PTHREAD_MUTEX_INITIALIZER, .paths = TC_STRPOOL_INIT };

const char *tc_uprobe_intern(const char *path)
{
	const char *out;

	pthread_mutex_lock(&interned.lock);
	out = tc_strpool_add(&interned.paths, path);
	pthread_mutex_unlock(&interned.lock);
	return out;
}

int tc_uprobe_pmu(const struct tc_events_ctx *ctx, uint32_t *type, unsigned *retbit)
{
	return tc_probe_pmu(ctx, "uprobe", type, retbit);
}

int tc_probe_pmu(const struct tc_events_ctx *ctx, const char *name, uint32_t *type,
		 unsigned *retbit)
{
	char path[1024], line[64];
	long long t;
	int r;

	snprintf(path, sizeof(path), "%s/%s/type", ctx->sysfs_root, name);
	r = tc_read_int_file(path, &t);
	if (r)
		return r == -ENOENT ? -ENODEV : r;
	if (t < 0 || t > UINT32_MAX)
		return -ERANGE;
	*type = (uint32_t)t;
	/* The kernel publishes "config:0" (kernel/events/core.c, PMU_FORMAT_ATTR(retprobe,
	 * "config:0")); read it rather than assume it, but only a single bit of config
	 * makes sense for a flag. */
	snprintf(path, sizeof(path), "%s/%s/format/retprobe", ctx->sysfs_root, name);
	r = tc_read_line_file(path, line, sizeof(line));
	if (r)
		return r == -ENOENT ? -ENODEV : r;
	{
		const char *fmt = tc_trim(line);
		uint64_t bit;
		if (!tc_starts_with(fmt, "config:") || tc_parse_u64(fmt + 7, &bit) != 0 || bit > 63)
			return -EPROTO;
		*retbit = (unsigned)bit;
	}
	return 0;
}

/* The open ELF file of a lookup. */
struct elf_file {
	int fd;
	Elf *elf;
	uint64_t size;
};

static void elf_file_close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
}

static int elf_file_open(const char *path, struct elf_file *f, char *why, size_t whysz)
{
	struct stat st;

	f->fd = -1;
	f->elf = NULL;
	/* O_NONBLOCK: a FIFO named by mistake must not hang the parser; it is refused
	 * below anyway, as the kernel only probes regular files */
	f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (f->fd < 0) {
		int e = errno;
		snprintf(why, whysz, "cannot open '%s': %s", path, strerror(e));
		return -e;
	}
	if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whysz, "'%s' is not a regular file (uprobes live in executables "
			 "and libraries)", path);
		return -TACHO_EPARSE;
	}
	f->size = (uint64_t)st.st_size;
	elf_version(EV_CURRENT);
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF) {
		snprintf(why, whysz, "'%s' is not an ELF file", path);
		return -TACHO_EPARSE;
	}
	return 0;
}

/* The executable PT_LOAD segment whose file bytes hold file offset off (by_vaddr
 * false) or whose memory holds virtual address off (true). 0 and *ph, or -ENOENT. */
static int find_load(Elf *elf, uint64_t off, bool by_vaddr, GElf_Phdr *ph)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr h;
		uint64_t base;
		if (!gelf_getphdr(elf, (int)i, &h) || h.p_type != PT_LOAD || !(h.p_flags & PF_X))
			continue;
		base = by_vaddr ? h.p_vaddr : h.p_offset;
		/* p_filesz, not p_memsz: an address in .bss has no bytes in the file */
		if (off >= base && off - base < h.p_filesz) {
			*ph = h;
			return 0;
		}
	}
	return -ENOENT;
}

int tc_uprobe_check_offset(const char *path, uint64_t off, char *why, size_t whysz)
{
	struct elf_file f;
	GElf_Phdr ph;
	int r;

	r = elf_file_open(path, &f, why, whysz);
	if (r == 0 && off >= f.size) {
		snprintf(why, whysz, "offset 0x%llx is past the end of '%s' (%llu bytes)",
			 (unsigned long long)off, path, (unsigned long long)f.size);
		r = -TACHO_EOUTOFRANGE;
	} else if (r == 0 && find_load(f.elf, off, false, &ph) != 0) {
		snprintf(why, whysz, "offset 0x%llx of '%s' is not in an executable segment "
			 "(readelf -l shows them)", (unsigned long long)off, path);
		r = -TACHO_EOUTOFRANGE;
	}
	elf_file_close(&f);
	return r;
}

/* Edit distance of a and b (lengths at most 64), for suggestions. */
static unsigned edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	unsigned row[65];

	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

struct sym_search {
	const char *name;
	size_t len;
	uint64_t value, size;
	unsigned found;           /* definitions with distinct values */
	uint64_t other;           /* the second distinct value, for the message */
	char near[128];           /* the closest other function name */
	unsigned near_score;      /* lower is closer */
};

/* Looks through one symbol table section for the function name. */
static void search_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct sym_search *s)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;

	if (!data || sh->sh_entsize == 0)
		return;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *nm;
		size_t nl;
		int t;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		t = GELF_ST_TYPE(sym.st_info);
		/* not STT_GNU_IFUNC: its address is the resolver's, which runs once */
		if (t != STT_FUNC || sym.st_shndx == SHN_UNDEF)
			continue;
		nm = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!nm || !nm[0])
			continue;
		nl = strlen(nm);
		if (nl == s->len && memcmp(nm, s->name, nl) == 0) {
			if (s->found == 0) {
				s->value = sym.st_value;
				s->size = sym.st_size;
				s->found = 1;
			} else if (sym.st_value != s->value && s->found == 1) {
				s->other = sym.st_value;
				s->found = 2;
			}
			continue;
		}
		if (s->found || nl > 64 || s->len > 64)
			continue;
		/* a name that contains the wanted one is the best guess ("work" for
		 * "do_work"); else the closest spelling within a third of its length */
		unsigned dist = edit_distance(s->name, s->len, nm, nl);
		if (dist > (s->len / 3 > 2 ? s->len / 3 : 2) && !strstr(nm, s->name))
			continue;
		/* at equal distance, a name with the same first letter wins (typos
		 * rarely start a word) */
		unsigned score = strstr(nm, s->name) ? 0 : 2 + 2 * dist + (nm[0] != s->name[0]);
		if (score < s->near_score ||
		    (score == s->near_score && strcmp(nm, s->near) < 0)) {
			s->near_score = score;
			snprintf(s->near, sizeof(s->near), "%s", nm);
		}
	}
}

int tc_uprobe_symbol_offset(const char *path, const char *name, size_t len, uint64_t add,
			    uint64_t *off, char *why, size_t whysz)
{
	struct sym_search s = { .name = name, .len = len, .near_score = ~0u };
	struct elf_file f;
	GElf_Phdr ph;
	int r;

	r = elf_file_open(path, &f, why, whysz);
	if (r)
		goto out;
	/* .symtab first (it has the static functions too), .dynsym when the file is
	 * stripped */
	for (int pass = 0; pass < 2 && !s.found; pass++) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(f.elf, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) &&
			    sh.sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				search_symtab(f.elf, scn, &sh, &s);
		}
	}
	if (!s.found) {
		if (s.near[0])
			snprintf(why, whysz, "no function '%.*s' in '%s' (did you mean '%s'?)",
				 (int)len, name, path, s.near);
		else
			snprintf(why, whysz, "no function '%.*s' in the symbol tables of '%s'",
				 (int)len, name, path);
		r = -TACHO_ENOEVENT;
		goto out;
	}
	if (s.found > 1) {
		snprintf(why, whysz, "'%.*s' names two functions in '%s' (at 0x%llx and 0x%llx): "
			 "give the file offset instead", (int)len, name, path,
			 (unsigned long long)s.value, (unsigned long long)s.other);
		r = -TACHO_ENOEVENT;
		goto out;
	}
	if (add && s.size && add >= s.size) {
		snprintf(why, whysz, "+0x%llx is past the end of '%.*s' (%llu bytes)",
			 (unsigned long long)add, (int)len, name, (unsigned long long)s.size);
		r = -TACHO_EOUTOFRANGE;
		goto out;
	}
	/* The kernel wants the offset in the file, not the link-time address: the
	 * segment that maps the symbol says how one becomes the other (System V ABI,
	 * "Program Loading"): offset = value - p_vaddr + p_offset. */
	if (find_load(f.elf, s.value + add, true, &ph) != 0) {
		snprintf(why, whysz, "'%.*s' (0x%llx) is not in an executable segment of '%s'",
			 (int)len, name, (unsigned long long)s.value, path);
		r = -TACHO_ENOEVENT;
		goto out;
	}
	/* A segment whose file bytes lie past the end of the file (a corrupt or cut
	 * program header) would give an offset the kernel cannot probe: say so here, as
	 * tc_uprobe_check_offset does for an offset given by number. */
	if (ph.p_offset >= f.size || f.size - ph.p_offset <= s.value + add - ph.p_vaddr) {
		snprintf(why, whysz, "'%.*s' (0x%llx) lies past the end of '%s' (%llu bytes): "
			 "its program header is corrupt", (int)len, name,
			 (unsigned long long)s.value, path, (unsigned long long)f.size);
		r = -TACHO_EPARSE;
		goto out;
	}
	*off = s.value + add - ph.p_vaddr + ph.p_offset;
out:
	elf_file_close(&f);
	return r;
}
