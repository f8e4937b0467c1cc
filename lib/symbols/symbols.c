/* symbols.c - ELF symbols, source lines and build-ids through elfutils' libdwfl; kernel
 * symbols from kallsyms. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dwarf.h>

#include "util/elfutils.h"
#include "symbols/buildid-cache.h"
#include "symbols/inlcache.h"
#include "symbols/linecache.h"
#include "symbols/inlwalk.h"
#include "symbols/symbols.h"
#include "tacho/errors.h"

struct fsym {
	uint64_t start, size;
	const char *name;      /* in the ELF's string table (lives as long as the Dwfl) */
	int rank;              /* tie-break for aliases: global > weak > local */
	bool label;            /* untyped (STT_NOTYPE): a label of hand-written assembly */
};

struct tc_symdso {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Elf *elf;              /* the main file (owned by dwfl) */
	GElf_Addr bias;        /* module address = ELF address + bias */
	uint8_t build_id[64];
	size_t build_id_len;
	struct fsym *syms;
	size_t nsyms;
	bool syms_loaded;
	char **shown;          /* names without their version (strip_versions), owned */
	size_t nshown;
	struct tc_linecache *lines;   /* the line cache, when there is one (or was built) */
	void *lines_image;     /* its bytes, when built by this run (owned) */
	bool lines_tried;
	struct tc_inlcache *inls;     /* the inline cache, when there is one (or was built) */
	void *inls_image;      /* its bytes, when built by this run (owned) */
	bool inls_tried;
};

static char *debuginfo_path;

/* Whether DEBUGINFOD_URLS names a server (anything but blanks). */
static bool debuginfod_named(void)
{
	const char *u = tc_env_trusted("DEBUGINFOD_URLS", NULL);

	return u && u[strspn(u, " \t\n")] != '\0';
}

/* Whether name is a readable file in one of the places libdwfl's standard search (its
 * default debuginfo path ":.debug:/usr/lib/debug") looks for the debug file of the
 * binary in folder dir (dirlen bytes): dir itself (not the binary), dir/.debug, and
 * /usr/lib/debug followed by dir and by each shorter tail of it (/usr/bin, /bin, /). */
static bool debug_file_in(const char *dir, int dirlen, const char *binary, const char *name)
{
	char path[2 * PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%.*s/%s", dirlen, dir, name);
	if (n > 0 && (size_t)n < sizeof(path) && strcmp(path, binary) && access(path, R_OK) == 0)
		return true;
	n = snprintf(path, sizeof(path), "%.*s/.debug/%s", dirlen, dir, name);
	if (n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0)
		return true;
	for (int at = 0; at <= dirlen; at++) {
		if (at < dirlen && dir[at] != '/')
			continue;
		n = snprintf(path, sizeof(path), "/usr/lib/debug%.*s/%s", dirlen - at, dir + at,
			     name);
		if (n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0)
			return true;
	}
	return false;
}

/* Whether the standard search could find a debug file on this disk for the binary at
 * file_name (or where its symbolic links lead): one named by its .gnu_debuglink, or,
 * without one, NAME.debug or NAME (the binary's own name), in the places above. A
 * debuglink with a '/' (the dwz file's own lookup, or an absolute path) is left to the
 * standard search whole: true. A superset of where libdwfl looks, so that skipping
 * the search when this is false loses only what debuginfod would have been asked. */
static bool debug_file_present(const char *file_name, const char *debuglink)
{
	char real[PATH_MAX], own[NAME_MAX + 8];
	const char *binaries[2] = { file_name, NULL }, *names[2] = { debuglink, NULL };

	if (debuglink && strchr(debuglink, '/'))
		return true;
	if (!file_name || file_name[0] != '/')
		return debuglink != NULL;
	if (realpath(file_name, real) && strcmp(real, file_name))
		binaries[1] = real;
	for (size_t b = 0; b < 2 && binaries[b]; b++) {
		const char *slash = strrchr(binaries[b], '/');
		int dirlen = (int)(slash - binaries[b]);

		if (!debuglink) {
			snprintf(own, sizeof(own), "%s.debug", slash + 1);
			names[0] = own;
			names[1] = slash + 1;
		}
		for (size_t i = 0; i < 2 && names[i]; i++)
			if (debug_file_in(binaries[b], dirlen, binaries[b], names[i]))
				return true;
	}
	return false;
}

/* libdwfl's standard search for a module's separate debug file, without its last
 * step, the debuginfod client, when DEBUGINFOD_URLS names no server: that client would
 * answer nothing, yet libdwfl loads it (libdebuginfod, libcurl and some thirty
 * libraries behind them: 4.7 ms of CPU here) at the first binary whose debug file is
 * not on this disk. So: the build-id directories first, then, when a file the
 * standard search could take is where it looks, that search (which finds it, and
 * checks a debuglink's CRC, before it would ask debuginfod). With a server named, the
 * standard search whole. (A libdebuginfod built with a default server, which Debian's
 * is not, is not asked either: name it in DEBUGINFOD_URLS.) */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int fd;

	if (debuginfod_named())
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					  debuglink_file, debuglink_crc, debuginfo_file_name);
	if (fd >= 0 || !debug_file_present(file_name, debuglink_file))
		return fd;
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = tc_elfutils_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = tc_elfutils_section_address,
	.debuginfo_path = &debuginfo_path,
};

int tc_symdso_open(const char *path, const void *image, size_t len, struct tc_symdso **out)
{
	struct tc_symdso *d;
	int fd;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n;

	*out = NULL;
	if (image) {
		/* libdwfl wants a file: hand it a memory file with the image's bytes */
		fd = memfd_create("tacho-image", MFD_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (write(fd, image, len) != (ssize_t)len) {
			int err = errno ? -errno : -EIO;
			close(fd);
			return err;
		}
	} else {
		/* a path a recording names: a regular file only (a FIFO there would
		 * hang the report, a device would be read) */
		fd = tc_open_regular(path, NULL);
		if (fd < 0)
			return fd;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	d->dwfl = dwfl_begin(&offline_callbacks);
	if (!d->dwfl) {
		close(fd);
		free(d);
		return -ENOMEM;
	}
	/* base 0: for a position-independent file, module addresses are ELF addresses
	 * plus the bias dwfl reports (0 unless prelinked) */
	d->mod = dwfl_report_elf(d->dwfl, path, image ? "/proc/self/fd/x" : path, fd, 0, false);
	if (!d->mod) {
		close(fd);
		dwfl_end(d->dwfl);
		free(d);
		return -TACHO_EPARSE;
	}
	dwfl_report_end(d->dwfl, NULL, NULL);
	d->elf = dwfl_module_getelf(d->mod, &d->bias);
	if (!d->elf) {
		tc_symdso_free(d);
		return -TACHO_EPARSE;
	}
	n = dwfl_module_build_id(d->mod, &bits, &vaddr);
	if (n > 0 && (size_t)n <= sizeof(d->build_id)) {
		memcpy(d->build_id, bits, (size_t)n);
		d->build_id_len = (size_t)n;
	}
	*out = d;
	return 0;
}

void tc_symdso_free(struct tc_symdso *d)
{
	if (!d)
		return;
	free(d->syms);
	for (size_t i = 0; i < d->nshown; i++)
		free(d->shown[i]);
	free(d->shown);
	tc_linecache_free(d->lines);
	free(d->lines_image);
	tc_inlcache_free(d->inls);
	free(d->inls_image);
	dwfl_end(d->dwfl);
	free(d);
}

const uint8_t *tc_symdso_build_id(const struct tc_symdso *d, size_t *len)
{
	*len = d->build_id_len;
	return d->build_id_len ? d->build_id : NULL;
}

int tc_symdso_file_to_addr(const struct tc_symdso *d, uint64_t off, uint64_t *addr)
{
	size_t n;

	if (elf_getphdrnum(d->elf, &n) != 0)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(d->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* the mapping covers whole pages, so an offset slightly past p_filesz (in
		 * .bss, in the same page) still belongs to this segment */
		if (off >= ph.p_offset && off < ph.p_offset + ph.p_memsz) {
			*addr = off - ph.p_offset + ph.p_vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* By address; among aliases of one address the name a report shows first: a sized
 * symbol over a size-0 one, then by binding (rank), then the fewest leading
 * underscores (printf, not _IO_printf; malloc, not __libc_malloc: the name the
 * program's author wrote, and the one perf shows), then the longer name, then the
 * bytes, so that the choice never depends on the symbol table's order. */
static int sym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;      /* best first */
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x->name);
	ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Whether an untyped symbol at value lies inside section shndx of elf and the section
 * holds code: a label of hand-written assembly. One elsewhere marks data, and one at
 * the section's end (the linker's etext, _etext) marks no code at all. */
static bool notype_in_code(Elf *elf, GElf_Word shndx, GElf_Addr value)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (!elf || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return false;
	scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
	       value >= sh.sh_addr && value < sh.sh_addr + sh.sh_size;
}

size_t tc_sym_base_len(const char *name)
{
	return strcspn(name, "@");
}

bool tc_sym_name_match(const char *name, const char *query)
{
	size_t n = tc_sym_base_len(name), q = tc_sym_base_len(query);

	if (!strcmp(name, query))
		return true;
	/* both versioned and different: two versions, told apart */
	if (name[n] && query[q])
		return false;
	return n == q && !strncmp(name, query, n);
}

static int by_base(const void *a, const void *b)
{
	const struct fsym *x = *(const struct fsym *const *)a, *y = *(const struct fsym *const *)b;
	size_t lx = tc_sym_base_len(x->name), ly = tc_sym_base_len(y->name);
	int c = strncmp(x->name, y->name, lx < ly ? lx : ly);

	if (c)
		return c;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Symbol versions (memcpy@GLIBC_2.2.5, fopen@@GLIBC_2.2.5: glibc's .symtab names
 * them so) are shown only where the binary has two functions of one name that differ
 * by them (memcpy@@GLIBC_2.14 beside memcpy@GLIBC_2.2.5, realpath's two); a name
 * with one version alone is shown without it (fopen), as perf shows it. Matching
 * ignores versions either way (tc_sym_name_match). */
static void strip_versions(struct tc_symdso *d)
{
	const struct fsym **v;
	size_t nv = 0;

	for (size_t i = 0; i < d->nsyms; i++)
		nv += d->syms[i].name[tc_sym_base_len(d->syms[i].name)] != '\0';
	if (!nv)
		return;
	v = malloc(d->nsyms * sizeof(*v));
	d->shown = calloc(nv, sizeof(*d->shown));
	if (!v || !d->shown) {
		free(v);       /* out of memory: the names keep their versions */
		return;
	}
	for (size_t i = 0; i < d->nsyms; i++)
		v[i] = &d->syms[i];
	qsort(v, d->nsyms, sizeof(*v), by_base);
	for (size_t i = 0, j; i < d->nsyms; i = j) {
		size_t len = tc_sym_base_len(v[i]->name);
		bool differ = false;

		for (j = i + 1; j < d->nsyms && tc_sym_base_len(v[j]->name) == len &&
				!strncmp(v[j]->name, v[i]->name, len); j++)
			differ |= strcmp(v[j]->name, v[i]->name) != 0;
		for (size_t k = i; k < j && !differ; k++) {
			char *base;

			if (!v[k]->name[len] || !(base = strndup(v[k]->name, len)))
				continue;
			d->shown[d->nshown++] = base;
			((struct fsym *)v[k])->name = base;
		}
	}
	free(v);
}

/* A sorted table of the functions of the best symbol table dwfl finds (.symtab of the
 * file or of its debug file, else .dynsym, plus MiniDebugInfo), so that every lookup
 * is a binary search instead of libdwfl's scan over all symbols. */
static void load_syms(struct tc_symdso *d)
{
	int n = dwfl_module_getsymtab(d->mod);
	size_t k = 0;

	d->syms_loaded = true;
	if (n <= 0)
		return;
	d->syms = calloc((size_t)n, sizeof(*d->syms));
	if (!d->syms)
		return;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx, &elf, NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !*name || sym.st_shndx == SHN_UNDEF)
			continue;
		/* functions, and the untyped labels of hand-written assembly in code
		 * (ld.so's _start and _dl_start_user: size 0, running to the next symbol);
		 * not local labels (.L...) nor the $x/$d mapping symbols */
		if (type == STT_NOTYPE) {
			if (name[0] == '.' || name[0] == '$' || !notype_in_code(elf, shndx, sym.st_value))
				continue;
		} else if (type != STT_FUNC && type != STT_GNU_IFUNC) {
			continue;
		}
		d->syms[k].start = addr - d->bias;
		d->syms[k].size = sym.st_size;
		d->syms[k].name = name;
		d->syms[k].rank = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
		d->syms[k].label = type == STT_NOTYPE;
		k++;
	}
	qsort(d->syms, k, sizeof(*d->syms), sym_cmp);
	/* keep one name per address (the best-ranked alias), and no label inside a sized
	 * function (it would take the rest of the function's addresses from it) */
	size_t w = 0;
	uint64_t end = 0;
	for (size_t i = 0; i < k; i++) {
		if (d->syms[i].label && !d->syms[i].size && d->syms[i].start < end &&
		    (w == 0 || d->syms[w - 1].start != d->syms[i].start))
			continue;
		if (w == 0 || d->syms[w - 1].start != d->syms[i].start)
			d->syms[w++] = d->syms[i];
		else if (d->syms[w - 1].size < d->syms[i].size)
			d->syms[w - 1].size = d->syms[i].size;
		if (d->syms[i].size && d->syms[i].start + d->syms[i].size > end)
			end = d->syms[i].start + d->syms[i].size;
	}
	d->nsyms = w;
	strip_versions(d);
}

static const struct fsym *find_sym(struct tc_symdso *d, uint64_t addr)
{
	size_t lo = 0, hi;
	const struct fsym *s;

	if (!d->syms_loaded)
		load_syms(d);
	hi = d->nsyms;
	while (lo < hi) {              /* first symbol starting after addr */
		size_t mid = (lo + hi) / 2;
		if (d->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &d->syms[lo - 1];
	/* a sized symbol ends where it says; a size-0 one (hand-written assembly) runs to
	 * the next symbol */
	if (s->size && addr >= s->start + s->size)
		return NULL;
	return s;
}

int tc_symdso_symbol(struct tc_symdso *d, uint64_t addr, struct tc_symloc *out)
{
	const struct fsym *s = find_sym(d, addr);

	memset(out, 0, sizeof(*out));
	if (s) {
		out->symbol = s->name;
		out->sym_start = s->start;
		out->sym_size = s->size;
	}
	return 0;
}

/* What libdw answers for addr: the line table row of the unit that holds it. */
static void line_libdw(struct tc_symdso *d, uint64_t addr, struct tc_symloc *out)
{
	Dwfl_Line *line = dwfl_module_getsrc(d->mod, addr + d->bias);

	out->file = NULL;
	out->line = 0;
	out->comp_dir = NULL;
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (file && lineno > 0) {
			out->file = file;
			out->line = lineno;
			out->comp_dir = dwfl_line_comp_dir(line);
		}
	}
}

/* Every module address where libdw's answer may change: each row of each unit's line
 * table (dwfl_module_getsrc takes the last row at or below an address, in the unit
 * that the address ranges give), and where each address range starts and ends (which
 * unit is asked). Between two of them the answer is the same. Sorted, each once. */
static int change_points(struct tc_symdso *d, Dwarf *dw, Dwarf_Addr dwbias, uint64_t **out,
			 size_t *nout)
{
	uint64_t *v = NULL;
	size_t n = 0, cap = 0, w = 0;
	Dwarf_Die *cu = NULL;
	Dwarf_Addr cubias;
	Dwarf_Aranges *ar;
	size_t nar;
	int err = 0;

	while (!err && (cu = dwfl_module_nextcu(d->mod, cu, &cubias))) {
		Dwarf_Lines *lines;
		size_t nl;

		if (dwarf_getsrclines(cu, &lines, &nl) != 0)
			continue;
		for (size_t i = 0; i < nl && !err; i++) {
			Dwarf_Addr a;
			if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) == 0)
				err = tc_u64_push(&v, &n, &cap, a + cubias);
		}
	}
	if (!err && dwarf_getaranges(dw, &ar, &nar) == 0)
		for (size_t i = 0; i < nar && !err; i++) {
			Dwarf_Addr a;
			Dwarf_Word len;
			Dwarf_Off off;
			if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &a, &len, &off) != 0)
				continue;
			err = tc_u64_push(&v, &n, &cap, a + dwbias);
			if (!err)
				err = tc_u64_push(&v, &n, &cap, a + dwbias + len);
			if (!err)
				err = tc_u64_push(&v, &n, &cap, a + dwbias + len + 1);
		}
	if (err) {
		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), tc_u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (!w || v[i] != v[w - 1])
			v[w++] = v[i];
	*out = v;
	*nout = w;
	return 0;
}

/* The line cache's bytes from libdw's answers at every change point: by construction
 * the same answers as libdw's for every address. 0, -ENOENT (no DWARF, or an answer
 * at the last point, past which the cache could not say what libdw says), -errno. */
static int build_lines(struct tc_symdso *d, void **image, size_t *len)
{
	Dwarf_Addr dwbias;
	Dwarf *dw = dwfl_module_getdwarf(d->mod, &dwbias);
	struct tc_linebuild *b;
	uint64_t *pts = NULL;
	size_t n = 0;
	int err;

	if (!dw)
		return -ENOENT;
	err = change_points(d, dw, dwbias, &pts, &n);
	if (err)
		return err;
	err = tc_linebuild_new(&b);
	for (size_t i = 0; i < n && !err; i++) {
		struct tc_symloc loc;

		if (pts[i] < d->bias)
			continue;
		line_libdw(d, pts[i] - d->bias, &loc);
		if (i == n - 1 && loc.file)
			err = -ENOENT;
		else
			err = tc_linebuild_add(b, pts[i] - d->bias, loc.file, loc.line,
					       loc.comp_dir);
	}
	if (!err && !n)
		err = -ENOENT;   /* no line tables: a debug file installed later is read */
	if (!err)
		err = tc_linebuild_image(b, d->build_id, d->build_id_len, image, len);
	tc_linebuild_free(b);
	free(pts);
	return err;
}

/* A cache file of the binary's build-id (the line cache, the inline cache): how to
 * map one, build one, and read back the one built. */
struct cache_kind {
	const char *file, *what;   /* its name in the build-id's folder; in the log */
	int (*map)(struct tc_symdso *d, int fd, const char **why);
	int (*build)(struct tc_symdso *d, void **image, size_t *len);
	int (*parse)(struct tc_symdso *d, void *image, size_t len, const char **why);
	size_t (*count)(const struct tc_symdso *d);
};

static int lines_map(struct tc_symdso *d, int fd, const char **why)
{
	return tc_linecache_map(fd, d->build_id, d->build_id_len, &d->lines, why);
}

static int lines_parse(struct tc_symdso *d, void *image, size_t len, const char **why)
{
	d->lines_image = image;
	return tc_linecache_parse(image, len, d->build_id, d->build_id_len, &d->lines, why);
}

static size_t lines_count(const struct tc_symdso *d)
{
	return tc_linecache_count(d->lines);
}

static const struct cache_kind line_cache = {
	"lines", "line cache", lines_map, build_lines, lines_parse, lines_count,
};

/* The cache of kind k of the binary's build-id: mapped when there is a sound one;
 * else built from libdw and written (a new file renamed into place), when the folder
 * can be written; else none, and libdw answers. */
static void open_cache(struct tc_symdso *d, const struct cache_kind *k)
{
	char dir[4096], path[4200];
	struct tc_outfile o;
	const char *why;
	struct stat st;
	void *image = NULL;
	size_t len;
	int fd, err;

	if (tc_bidcache_entry_dir(d->build_id, d->build_id_len, dir, sizeof(dir)) != 0 ||
	    snprintf(path, sizeof(path), "%s/%s", dir, k->file) >= (int)sizeof(path))
		return;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0) {
		/* a file of the user's own, written by no one else */
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    (st.st_mode & 022)) {
			tc_log(TACHO_LOG_DEBUG, "%s %s: not the user's own file, not used",
			       k->what, path);
			close(fd);
			return;
		}
		err = k->map(d, fd, &why);
		close(fd);
		if (!err) {
			tc_log(TACHO_LOG_DEBUG, "%s %s: %zu ranges", k->what, path, k->count(d));
			return;
		}
		tc_log(TACHO_LOG_DEBUG, "%s %s: %s, built again", k->what, path,
		       why ? why : tacho_strerror(err));
	}
	/* a folder that cannot be made or written: no cache, and no build */
	if (tc_mkdirs(dir) != 0 || tc_outfile_open(&o, path, 0) != 0)
		return;
	err = k->build(d, &image, &len);
	if (!err)
		err = k->parse(d, image, len, &why);   /* the image is the dso's from here */
	else
		free(image);
	/* built: it answers this run whether or not it can be kept */
	for (size_t done = 0; !err && done < len; ) {
		ssize_t w = write(o.fd, (const char *)image + done, len - done);
		if (w < 0 && errno != EINTR)
			err = -errno;
		else if (w > 0)
			done += (size_t)w;
	}
	if (err) {
		tc_outfile_abort(&o);
		tc_log(TACHO_LOG_DEBUG, "%s %s: not written (%s)", k->what, path,
		       tacho_strerror(err));
		return;
	}
	err = tc_outfile_commit(&o);
	tc_log(TACHO_LOG_DEBUG, "%s %s: %zu ranges, %s", k->what, path, k->count(d),
	       err ? tacho_strerror(err) : "written");
}

void tc_symdso_line(struct tc_symdso *d, uint64_t addr, struct tc_symloc *out)
{
	if (!d->lines_tried) {
		d->lines_tried = true;
		open_cache(d, &line_cache);
	}
	if (d->lines) {
		tc_linecache_find(d->lines, addr, &out->file, &out->line, &out->comp_dir);
		return;
	}
	line_libdw(d, addr, out);
}

int tc_symdso_decl_line(struct tc_symdso *d, uint64_t addr)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, addr + d->bias, &bias);
	Dwarf_Die *scopes = NULL;
	int n, line = 0;

	if (!cu)
		return 0;
	/* innermost first: the last subprogram is the one that was not inlined */
	n = dwarf_getscopes(cu, addr + d->bias - bias, &scopes);
	for (int i = n - 1; i >= 0; i--)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			if (dwarf_decl_line(&scopes[i], &line) != 0)
				line = 0;
			break;
		}
	free(scopes);
	return line > 0 ? line : 0;
}

/* libdw's answer to tc_symdso_inlines. */
static int inlines_libdw(struct tc_symdso *d, uint64_t addr, struct tc_syminl *out,
			 size_t max)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(d->mod, addr + d->bias, &bias);
	Dwarf_Die *scopes = NULL;
	size_t k = 0;
	int n;

	if (!cu)
		return 0;
	/* innermost first: the inlined subroutines that hold addr, then the subprogram
	 * they were inlined into, which ends the chain */
	n = dwarf_getscopes(cu, addr + d->bias - bias, &scopes);
	for (int i = 0; i < n && k < max; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;   /* a lexical block */
		tc_inl_fill(&scopes[i], cu, &out[k++]);
	}
	free(scopes);
	return (int)k;
}

/* The inline cache's bytes, from one walk of every unit (lib/symbols/inlwalk.c). */
static int build_inls(struct tc_symdso *d, void **image, size_t *len)
{
	return tc_inlwalk_build(d->mod, d->bias, d->build_id, d->build_id_len, image, len);
}

static int inls_map(struct tc_symdso *d, int fd, const char **why)
{
	return tc_inlcache_map(fd, d->build_id, d->build_id_len, &d->inls, why);
}

static int inls_parse(struct tc_symdso *d, void *image, size_t len, const char **why)
{
	d->inls_image = image;
	return tc_inlcache_parse(image, len, d->build_id, d->build_id_len, &d->inls, why);
}

static size_t inls_count(const struct tc_symdso *d)
{
	return tc_inlcache_count(d->inls);
}

static const struct cache_kind inline_cache = {
	"inlines", "inline cache", inls_map, build_inls, inls_parse, inls_count,
};

int tc_symdso_inlines(struct tc_symdso *d, uint64_t addr, struct tc_syminl *out, size_t max)
{
	if (!d->inls_tried) {
		d->inls_tried = true;
		open_cache(d, &inline_cache);
	}
	if (d->inls)
		return tc_inlcache_find(d->inls, addr, out, max);
	return inlines_libdw(d, addr, out, max);
}

int tc_symdso_lookup(struct tc_symdso *d, uint64_t addr, struct tc_symloc *out)
{
	tc_symdso_symbol(d, addr, out);
	tc_symdso_line(d, addr, out);
	return 0;
}

int tc_symdso_find(struct tc_symdso *d, const char *name, uint64_t *start, uint64_t *size)
{
	if (!d->syms_loaded)
		load_syms(d);
	for (size_t i = 0; i < d->nsyms; i++)
		if (tc_sym_name_match(d->syms[i].name, name)) {
			*start = d->syms[i].start;
			*size = d->syms[i].size;
			return 0;
		}
	return -ENOENT;
}

size_t tc_symdso_read(struct tc_symdso *d, uint64_t addr, void *buf, size_t len)
{
	size_t n;
	Elf_Data *data;

	if (elf_getphdrnum(d->elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		size_t got;
		if (!gelf_getphdr(d->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr < ph.p_vaddr || addr >= ph.p_vaddr + ph.p_filesz)
			continue;
		got = (size_t)(ph.p_vaddr + ph.p_filesz - addr);
		if (got > len)
			got = len;
		data = elf_getdata_rawchunk(d->elf, (int64_t)(ph.p_offset + (addr - ph.p_vaddr)),
					    got, ELF_T_BYTE);
		if (!data || !data->d_buf)
			return 0;
		memcpy(buf, data->d_buf, got);
		return got;
	}
	return 0;
}

int tc_symdso_read_const_str(struct tc_symdso *d, uint64_t addr, char *buf, size_t max)
{
	Elf_Scn *scn = NULL;

	while (max && (scn = elf_nextscn(d->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *s;
		size_t off, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & (SHF_WRITE | SHF_EXECINSTR)))
			continue;
		if (addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size)
			continue;
		data = elf_rawdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size != sh.sh_size)
			return -ENOENT;
		off = (size_t)(addr - sh.sh_addr);
		s = (const char *)data->d_buf + off;
		n = strnlen(s, data->d_size - off);
		if (n == data->d_size - off || n >= max)
			return -ENOENT;
		memcpy(buf, s, n + 1);
		return (int)n;
	}
	return -ENOENT;
}

static int build_id_of_elf(Elf *elf, uint8_t *bid, size_t max)
{
	const void *p;
	ssize_t n;

	if (!elf)
		return -TACHO_EPARSE;
	n = dwelf_elf_gnu_build_id(elf, &p);
	if (n <= 0)
		return -TACHO_ENOVALUE;
	if ((size_t)n > max)
		n = (ssize_t)max;
	memcpy(bid, p, (size_t)n);
	return (int)n;
}

int tc_build_id_of_file(const char *path, uint8_t *bid, size_t max)
{
	int fd = tc_open_regular(path, NULL), ret;   /* as tc_symdso_open */
	Elf *elf;

	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ret = build_id_of_elf(elf, bid, max);
	elf_end(elf);
	close(fd);
	return ret;
}

int tc_build_id_of_image(const void *image, size_t len, uint8_t *bid, size_t max)
{
	Elf *elf;
	int ret;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)(uintptr_t)image, len);
	ret = build_id_of_elf(elf, bid, max);
	elf_end(elf);
	return ret;
}

/* --- C++ names --- */

/* __cxa_demangle of the Itanium C++ ABI (section 5.1.5): (mangled, buffer, length,
 * status); with a NULL buffer it returns a malloc'd string. */
typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn cxa_demangle;

static void demangle_load(void)
{
	/* the handle is kept for the life of the process (never dlclose'd: the function
	 * must stay mapped); RTLD_LOCAL keeps libstdc++'s symbols out of the global
	 * namespace of a C program */
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	void *f;

	if (!h)
		return;
	f = dlsym(h, "__cxa_demangle");
	/* ISO C has no cast from void * to a function pointer; POSIX guarantees the
	 * representations agree */
	memcpy(&cxa_demangle, &f, sizeof(cxa_demangle));
}

bool tc_demangle_available(void)
{
	pthread_once(&demangle_once, demangle_load);
	return cxa_demangle != NULL;
}

char *tc_demangle(const char *name)
{
	int status = 0;
	char *out;

	/* only names of the Itanium ABI: a C name passed to __cxa_demangle may read as a
	 * type ("i" is int) */
	if (!name || strncmp(name, "_Z", 2) != 0 || !tc_demangle_available())
		return NULL;
	/* reentrant: its output goes to a fresh malloc'd buffer, freed by the caller
	 * with free() (libstdc++ allocates it with malloc) */
	out = cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
