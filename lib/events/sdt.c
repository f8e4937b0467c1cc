/* sdt.c - statically defined tracing probes (USDT: systemtap's sys/sdt.h, in Python,
 * PostgreSQL, glibc, ...): the .note.stapsdt notes of an ELF file read with libelf, each
 * probe's address made into the file offset a uprobe goes to and its semaphore's into
 * the uprobe's ref_ctr_offset (the kernel raises the semaphore while the probe is
 * placed, so that code guarded by it runs), and the writers of `tacho list sdt`. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/elfutils.h"
#include "events/events.h"
#include "output/output.h"
#include "util/util.h"
#include "tacho/errors.h"
#include "tacho/events.h"
#include "tacho/output.h"

#define NT_STAPSDT 3

struct sdt_probe {
	struct tacho_sdt_probe pub;
	char *provider, *name, *args;
};

struct tacho_sdt_list {
	char *path;
	struct sdt_probe *p;
	size_t n, cap;
};

void tacho_sdt_list_free(struct tacho_sdt_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->p[i].provider);
		free(l->p[i].name);
		free(l->p[i].args);
	}
	free(l->p);
	free(l->path);
	free(l);
}

/* The file offset of vaddr in the PT_LOAD segment that maps it from the file (want_x:
 * an executable one), or -1. */
static int64_t file_offset(Elf *elf, uint64_t vaddr, bool want_x)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr h;

		if (!gelf_getphdr(elf, (int)i, &h) || h.p_type != PT_LOAD)
			continue;
		if (want_x && !(h.p_flags & PF_X))
			continue;
		if (vaddr >= h.p_vaddr && vaddr - h.p_vaddr < h.p_filesz)
			return (int64_t)(vaddr - h.p_vaddr + h.p_offset);
	}
	return -1;
}

/* A NUL-terminated string at desc[*pos], within len; NULL when there is none. */
static const char *note_string(const char *desc, size_t len, size_t *pos)
{
	const char *s = desc + *pos, *nul;

	if (*pos >= len)
		return NULL;
	nul = memchr(s, '\0', len - *pos);
	if (!nul)
		return NULL;
	*pos = (size_t)(nul - desc) + 1;
	return s;
}

static int add_probe(struct tacho_sdt_list *l, const char *prov, const char *name,
		     const char *args, uint64_t pc, uint64_t sem, Elf *elf)
{
	struct sdt_probe *p;
	int64_t off = file_offset(elf, pc, true), soff = sem ? file_offset(elf, sem, false) : 0;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 8;
		p = realloc(l->p, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->p = p;
		l->cap = cap;
	}
	p = &l->p[l->n];
	memset(p, 0, sizeof(*p));
	p->provider = tc_strdup(prov);
	p->name = tc_strdup(name);
	p->args = tc_strdup(args ? args : "");
	l->n++;
	if (!p->provider || !p->name || !p->args)
		return -ENOMEM;
	p->pub.address = pc;
	/* a probe outside every executable segment, or a semaphore outside the file's
	 * data, cannot be placed: -1 says so to whoever places it */
	p->pub.offset = off >= 0 ? (uint64_t)off : UINT64_MAX;
	p->pub.semaphore = sem;
	p->pub.semaphore_offset = soff >= 0 ? (uint64_t)soff : UINT64_MAX;
	return 0;
}

static int sdt_parse(Elf *elf, struct tacho_sdt_list *l)
{
	Elf_Scn *scn = NULL;
	uint64_t base_addr = 0;
	bool have_base = false;
	size_t shstrndx;
	GElf_Ehdr eh;

	if (!gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -TACHO_EPARSE;
	/* .stapsdt.base: where the notes' base was at link time; a prelinked file moved it,
	 * and every address moves by as much (sys/sdt.h's own rule) */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *nm;

		if (!gelf_getshdr(scn, &sh))
			continue;
		nm = elf_strptr(elf, shstrndx, sh.sh_name);
		if (nm && !strcmp(nm, ".stapsdt.base")) {
			base_addr = sh.sh_addr;
			have_base = true;
		}
	}
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t pos = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		while ((pos = gelf_getnote(data, pos, &nh, &name_off, &desc_off)) > 0) {
			const char *name = (const char *)data->d_buf + name_off;
			const char *desc = (const char *)data->d_buf + desc_off;
			size_t dpos = 24;
			const char *prov, *pname, *args;
			uint64_t pc, base, sem;
			int err;

			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 || memcmp(name, "stapsdt", 8) ||
			    nh.n_descsz < 24 + 2)
				continue;
			/* pc, base, semaphore: 8 bytes each on 64-bit files (4 on 32-bit ones,
			 * which tacho does not read: x86-64 and other 64-bit hosts only) */
			if (eh.e_ident[EI_CLASS] != ELFCLASS64)
				return -TACHO_EPARSE;
			memcpy(&pc, desc, 8);
			memcpy(&base, desc + 8, 8);
			memcpy(&sem, desc + 16, 8);
			prov = note_string(desc, nh.n_descsz, &dpos);
			pname = note_string(desc, nh.n_descsz, &dpos);
			args = note_string(desc, nh.n_descsz, &dpos);
			if (!prov || !pname)
				continue;
			if (have_base && base) {
				pc += base_addr - base;
				if (sem)
					sem += base_addr - base;
			}
			err = add_probe(l, prov, pname, args, pc, sem, elf);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Points each probe's strings into place once the array has stopped moving. */
static void finish(struct tacho_sdt_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		l->p[i].pub.provider = l->p[i].provider;
		l->p[i].pub.name = l->p[i].name;
		l->p[i].pub.args = l->p[i].args;
	}
}

int tc_sdt_list_mem(const void *buf, size_t len, struct tacho_sdt_list **out)
{
	struct tacho_sdt_list *l = calloc(1, sizeof(*l));
	Elf *elf;
	int err;

	if (!l)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	elf = elf_memory((char *)buf, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		tacho_sdt_list_free(l);
		return -TACHO_EPARSE;
	}
	err = sdt_parse(elf, l);
	elf_end(elf);
	if (err) {
		tacho_sdt_list_free(l);
		return err;
	}
	finish(l);
	*out = l;
	return 0;
}

int tacho_sdt_list_new(const char *path, struct tacho_sdt_list **out, struct tacho_diag *diag)
{
	struct tacho_sdt_list *l;
	Elf *elf = NULL;
	int fd, err;

	if (tc_diag_check(diag))
		return -EINVAL;
	if (!path || !out)
		return -EINVAL;
	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		return tc_diag_set(diag, path, 0, 0, err, "cannot open '%s': %s", path,
				   strerror(-err));
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->path = tc_strdup(path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!l->path) {
		err = -ENOMEM;
	} else if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = tc_diag_set(diag, path, 0, 0, -TACHO_EPARSE, "'%s' is not an ELF file",
				  path);
	} else {
		err = sdt_parse(elf, l);
		if (err == -TACHO_EPARSE)
			tc_diag_set(diag, path, 0, 0, err, "cannot read the SDT notes of '%s' "
				    "(a 64-bit ELF file is needed)", path);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (err) {
		tacho_sdt_list_free(l);
		return err;
	}
	finish(l);
	*out = l;
	return 0;
}

size_t tacho_sdt_list_count(const struct tacho_sdt_list *l)
{
	return l ? l->n : 0;
}

const struct tacho_sdt_probe *tacho_sdt_list_probe(const struct tacho_sdt_list *l, size_t i)
{
	return l && i < l->n ? &l->p[i].pub : NULL;
}

/* --- writers --- */

static const char *hex_or_empty(uint64_t v, bool none, char *buf, size_t size)
{
	if (none)
		buf[0] = '\0';
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)v);
	return buf;
}

int tacho_sdt_list_write(const struct tacho_sdt_list *l, FILE *f, enum tacho_format fmt,
			 const struct tacho_write_opts *opts)
{
	static const char *const head[] = { "provider", "name", "address", "offset",
					    "semaphore", "semaphore_offset", "args" };
	struct tc_write_settings w;
	char b[4][32];
	int err;

	if (!l || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	if (fmt == TACHO_FORMAT_JSON || fmt == TACHO_FORMAT_JSON_LINES) {
		struct tc_json j;

		tc_json_doc_begin(&j, f, fmt, &w);
		tc_json_obj_begin(&j, NULL);
		tc_json_int(&j, "version", 1);
		tc_json_str(&j, "path", l->path ? l->path : "");
		tc_json_arr_begin(&j, "probes");
		for (size_t i = 0; i < l->n; i++) {
			const struct tacho_sdt_probe *p = &l->p[i].pub;

			tc_json_obj_begin(&j, NULL);
			tc_json_str(&j, "provider", p->provider);
			tc_json_str(&j, "name", p->name);
			tc_json_uint(&j, "address", p->address);
			if (p->offset == UINT64_MAX)
				tc_json_null(&j, "offset");
			else
				tc_json_uint(&j, "offset", p->offset);
			if (p->semaphore) {
				tc_json_uint(&j, "semaphore", p->semaphore);
				if (p->semaphore_offset == UINT64_MAX)
					tc_json_null(&j, "semaphore_offset");
				else
					tc_json_uint(&j, "semaphore_offset", p->semaphore_offset);
			} else {
				tc_json_null(&j, "semaphore");
				tc_json_null(&j, "semaphore_offset");
			}
			tc_json_str(&j, "args", p->args);
			tc_json_obj_end(&j);
		}
		tc_json_arr_end(&j);
		tc_json_obj_end(&j);
		return tc_json_doc_end(&j);
	}
	if (fmt == TACHO_FORMAT_CSV) {
		if (w.header)
			tc_csv_row(f, &w, head, ARRAY_SIZE(head));
		for (size_t i = 0; i < l->n; i++) {
			const struct tacho_sdt_probe *p = &l->p[i].pub;
			const char *row[] = {
				p->provider, p->name, hex_or_empty(p->address, false, b[0], 32),
				hex_or_empty(p->offset, p->offset == UINT64_MAX, b[1], 32),
				hex_or_empty(p->semaphore, !p->semaphore, b[2], 32),
				hex_or_empty(p->semaphore_offset, !p->semaphore ||
					     p->semaphore_offset == UINT64_MAX, b[3], 32),
				p->args,
			};
			_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
			tc_csv_row(f, &w, row, ARRAY_SIZE(row));
		}
		return tc_write_status(f);
	}
	{
		struct tc_table *t = tc_table_new(4);

		if (!t)
			return -ENOMEM;
		fprintf(f, "SDT probes of %s (count one with -e sdt:PATH:PROVIDER:NAME):\n",
			l->path ? l->path : "");
		if (l->n)
			err = tc_table_addf(t, "%s\t%s\t%s\t%s", "probe", "offset", "semaphore",
					    "args");
		for (size_t i = 0; i < l->n && !err; i++) {
			const struct tacho_sdt_probe *p = &l->p[i].pub;
			err = tc_table_addf(t, "%s:%s\t%s\t%s\t%s", p->provider, p->name,
					    p->offset == UINT64_MAX ? "(none)" :
					    hex_or_empty(p->offset, false, b[0], 32),
					    p->semaphore ? hex_or_empty(p->semaphore_offset,
									 p->semaphore_offset == UINT64_MAX,
									 b[1], 32) : "-",
					    p->args);
		}
		if (!err)
			tc_table_print(t, f, 4, 2);
		if (!l->n)
			fprintf(f, "    (none: the file has no .note.stapsdt)\n");
		tc_table_free(t);
		if (err)
			return err;
	}
	return tc_write_status(f);
}
