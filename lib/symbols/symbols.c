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

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		uint64_t *p = realloc(*v, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
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
				err = push(&v, &n, &cap, a + cubias);
		}
	}
	if (!err && dwarf_getaranges(dw, &ar, &nar) == 0)
		for (size_t i = 0; i < nar && !err; i++) {
			Dwarf_Addr a;
			Dwarf_Word len;
			Dwarf_Off off;
			if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &a, &len, &off) != 0)
				continue;
			err = push(&v, &n, &cap, a + dwbias);
			if (!err)
				err = push(&v, &n, &cap, a + dwbias + len);
			if (!err)
				err = push(&v, &n, &cap, a + dwbias + len + 1);
		}
	if (err) {
		free(v);
		return err;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_u64);
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
	uint64_t *pts;
	size_t n;
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

/* The name of an inlined subroutine: that of the function it is a copy of (its
 * DW_AT_abstract_origin, which dwarf_attr_integrate follows), the linkage name first
 * (a C++ function's mangled one, which the report demangles), else DW_AT_name. */
static const char *inline_name(Dwarf_Die *die)
{
	static const unsigned at[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute a;

	for (size_t i = 0; i < ARRAY_SIZE(at); i++) {
		const char *s = dwarf_formstring(dwarf_attr_integrate(die, at[i], &a));
		if (s && *s)
			return s;
	}
	return NULL;
}

/* The frame of inlined subroutine die of unit cu: its function's name, the file and
 * line of its call. */
static void inl_fill(Dwarf_Die *die, Dwarf_Die *cu, struct tc_syminl *out)
{
	Dwarf_Files *files;
	Dwarf_Attribute a;
	Dwarf_Word w;
	size_t nfiles;

	out->name = inline_name(die);
	out->call_file = NULL;
	out->call_line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0 && w <= INT32_MAX)
		out->call_line = (int)w;
	/* DW_AT_call_file indexes the unit's file table (0 is a file in DWARF 5) */
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nfiles) == 0 && w < nfiles)
		out->call_file = dwarf_filesrc(files, w, NULL, NULL);
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
		inl_fill(&scopes[i], cu, &out[k++]);
	}
	free(scopes);
	return (int)k;
}

/* --- the inline cache, built in one walk of the DWARF ---
 *
 * dwarf_getscopes (which inlines_libdw asks) walks a unit from its root: of a DIE's
 * children, in order, the first whose address ranges hold the address is taken (any
 * tag: each child is asked), and the walk goes into it when its tag is one that holds
 * scopes; the innermost DIE so reached ends it. The answer is the innermost inlined
 * subroutine on that path, unless a subprogram is below it (then none). The walk below
 * gives each DIE the addresses it would be taken for, its ranges less those its
 * earlier siblings took, inside its parent's own (the unit's: the address ranges that
 * name it), and paints the inlined subroutines' (and the subprograms' under them)
 * over their parents': the painted answer at an address is libdw's. */

/* A set of [lo, hi) address ranges, sorted and apart, two u64 each. */
struct ivs {
	uint64_t *v;
	size_t n, cap;   /* in ranges */
};

static int ivs_add(struct ivs *s, uint64_t lo, uint64_t hi)
{
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 8;
		uint64_t *p = realloc(s->v, c * 2 * sizeof(*p));
		if (!p)
			return -ENOMEM;
		s->v = p;
		s->cap = c;
	}
	s->v[2 * s->n] = lo;
	s->v[2 * s->n + 1] = hi;
	s->n++;
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* Sorts s and merges the ranges that touch; empty ones go. */
static void ivs_norm(struct ivs *s)
{
	size_t w = 0;

	if (s->n > 1)
		qsort(s->v, s->n, 2 * sizeof(*s->v), cmp_range);
	for (size_t i = 0; i < s->n; i++) {
		uint64_t lo = s->v[2 * i], hi = s->v[2 * i + 1];
		if (lo >= hi)
			continue;
		if (w && lo <= s->v[2 * w - 1]) {
			if (hi > s->v[2 * w - 1])
				s->v[2 * w - 1] = hi;
			continue;
		}
		s->v[2 * w] = lo;
		s->v[2 * w + 1] = hi;
		w++;
	}
	s->n = w;
}

/* out = a & b. */
static int ivs_and(const struct ivs *a, const struct ivs *b, struct ivs *out)
{
	size_t i = 0, j = 0;
	int err = 0;

	out->n = 0;
	while (!err && i < a->n && j < b->n) {
		uint64_t lo = a->v[2 * i] > b->v[2 * j] ? a->v[2 * i] : b->v[2 * j];
		uint64_t hi = a->v[2 * i + 1] < b->v[2 * j + 1] ? a->v[2 * i + 1] : b->v[2 * j + 1];
		if (lo < hi)
			err = ivs_add(out, lo, hi);
		if (a->v[2 * i + 1] < b->v[2 * j + 1])
			i++;
		else
			j++;
	}
	return err;
}

/* s = s - t, with tmp for the work. */
static int ivs_sub(struct ivs *s, const struct ivs *t, struct ivs *tmp)
{
	size_t j = 0;
	int err = 0;

	tmp->n = 0;
	for (size_t i = 0; i < s->n && !err; i++) {
		uint64_t lo = s->v[2 * i], hi = s->v[2 * i + 1];
		while (j < t->n && t->v[2 * j + 1] <= lo)
			j++;
		for (size_t k = j; k < t->n && t->v[2 * k] < hi && !err; k++) {
			if (t->v[2 * k] > lo)
				err = ivs_add(tmp, lo, t->v[2 * k]);
			if (t->v[2 * k + 1] > lo)
				lo = t->v[2 * k + 1];
		}
		if (!err && lo < hi)
			err = ivs_add(tmp, lo, hi);
	}
	if (!err) {
		struct ivs x = *s;
		*s = *tmp;
		*tmp = x;
	}
	return err;
}

/* One painted range: [lo, hi) answers frame (NONE: nothing inlined); seq orders
 * those with the same start, outer first. */
struct paint {
	uint64_t lo, hi;
	uint32_t frame, seq;
};

#define FRAME_NONE UINT32_MAX
/* The deepest nesting walked: DWARF a fuzzer made may nest without end. */
#define SCOPE_DEPTH_MAX 256

struct inl_walk {
	struct tc_symdso *d;
	Dwarf_Die *cu;
	Dwarf_Addr bias;               /* module address = DWARF address + bias */
	struct ivs lv[SCOPE_DEPTH_MAX + 1][2];   /* each depth's left-over and child's */
	struct ivs tmp, own;
	struct paint *p;
	size_t np, cp;
	struct tc_syminl *fr;          /* the painted frames */
	size_t nfr, cfr;
};

static int paint(struct inl_walk *w, const struct ivs *at, uint32_t frame)
{
	for (size_t i = 0; i < at->n; i++) {
		if (w->np == w->cp) {
			size_t c = w->cp ? w->cp * 2 : 4096;
			struct paint *p = realloc(w->p, c * sizeof(*p));
			if (!p)
				return -ENOMEM;
			w->p = p;
			w->cp = c;
		}
		if (w->np >= UINT32_MAX)
			return -TACHO_EOUTOFRANGE;
		w->p[w->np] = (struct paint){ at->v[2 * i], at->v[2 * i + 1], frame,
					      (uint32_t)w->np };
		w->np++;
	}
	return 0;
}

/* The frame of inlined subroutine die (as inlines_libdw makes it) into w->fr: its
 * index, or FRAME_NONE when libdw gives none (no abstract origin to follow). */
static int inl_frame(struct inl_walk *w, Dwarf_Die *die, uint32_t *out)
{
	Dwarf_Attribute a;
	Dwarf_Die origin;

	*out = FRAME_NONE;
	if (!dwarf_formref_die(dwarf_attr(die, DW_AT_abstract_origin, &a), &origin))
		return 0;
	if (w->nfr == w->cfr) {
		size_t c = w->cfr ? w->cfr * 2 : 1024;
		struct tc_syminl *p = realloc(w->fr, c * sizeof(*p));
		if (!p)
			return -ENOMEM;
		w->fr = p;
		w->cfr = c;
	}
	if (w->nfr >= FRAME_NONE)
		return -TACHO_EOUTOFRANGE;
	inl_fill(die, w->cu, &w->fr[w->nfr]);
	*out = (uint32_t)w->nfr++;
	return 0;
}

/* The children of parent, which is taken for the addresses in w->lv[depth][0] (they
 * are used up), its answer ctx (the frame painted there). */
static int inl_children(struct inl_walk *w, Dwarf_Die *parent, int depth, uint32_t ctx)
{
	struct ivs *left = &w->lv[depth][0], *mine = &w->lv[depth][1];
	Dwarf_Die child;
	int err = 0;

	if (depth >= SCOPE_DEPTH_MAX || !left->n || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		uint32_t frame = ctx;

		w->own.n = 0;
		while (!err && (off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0)
			err = ivs_add(&w->own, lo + w->bias, hi + w->bias);
		if (err || !w->own.n)
			continue;
		ivs_norm(&w->own);
		/* what it is taken for: its ranges that no earlier sibling took */
		err = ivs_and(&w->own, left, mine);
		if (!err && mine->n)
			err = ivs_sub(left, mine, &w->tmp);
		if (err || !mine->n)
			continue;
		if (tag == DW_TAG_inlined_subroutine)
			err = inl_frame(w, &child, &frame);
		else if (tag == DW_TAG_subprogram)
			frame = FRAME_NONE;   /* libdw's chain stops at a subprogram */
		if (!err && frame != ctx)
			err = paint(w, mine, frame);
		if (err)
			break;
		switch (tag) {
		case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block:
		case DW_TAG_with_stmt: case DW_TAG_catch_block: case DW_TAG_try_block:
		case DW_TAG_entry_point: case DW_TAG_inlined_subroutine: case DW_TAG_subprogram:
		case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type: {
			/* the child's addresses become the next depth's to hand out */
			struct ivs x = w->lv[depth + 1][0];
			w->lv[depth + 1][0] = *mine;
			*mine = x;
			err = inl_children(w, &child, depth + 1, frame);
			break;
		}
		default:
			break;   /* the innermost DIE at its addresses: the walk ends there */
		}
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

static int cmp_paint(const void *a, const void *b)
{
	const struct paint *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Each unit's address ranges (module addresses), from the address range table that
 * dwfl_module_addrdie asks: those that name the unit at offset cuoff, into out. */
struct cu_range {
	uint64_t cuoff, lo, hi;
};

static int cmp_cu_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->cuoff != y->cuoff)
		return x->cuoff < y->cuoff ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The paint's answers as ranges of the cache (laminar: two painted ranges are apart or
 * one holds the other, so the innermost open one answers). */
static int paint_ranges(struct inl_walk *w, struct tc_inlbuild *b)
{
	uint64_t *pts = NULL;
	size_t npts = 0, cpts = 0, top = 0, next = 0, w2 = 0;
	uint32_t *stack = NULL;
	int err = 0;

	if (w->np)
		qsort(w->p, w->np, sizeof(*w->p), cmp_paint);
	stack = malloc((w->np + 1) * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i < w->np && !err; i++) {
		err = push(&pts, &npts, &cpts, w->p[i].lo);
		if (!err)
			err = push(&pts, &npts, &cpts, w->p[i].hi);
	}
	if (!err && npts)
		qsort(pts, npts, sizeof(*pts), cmp_u64);
	for (size_t i = 0; i < npts; i++)
		if (!w2 || pts[i] != pts[w2 - 1])
			pts[w2++] = pts[i];
	for (size_t i = 0; i < w2 && !err; i++) {
		uint64_t pt = pts[i];
		uint32_t f = FRAME_NONE;

		while (top && w->p[stack[top - 1]].hi <= pt)
			top--;
		while (next < w->np && w->p[next].lo <= pt) {
			if (w->p[next].hi > pt)
				stack[top++] = (uint32_t)next;
			next++;
		}
		if (top)
			f = w->p[stack[top - 1]].frame;
		if (pt < w->d->bias)
			continue;
		err = tc_inlbuild_add(b, pt - w->d->bias, f == FRAME_NONE ? NULL : &w->fr[f],
				      f == FRAME_NONE ? 0 : 1);
	}
	free(stack);
	free(pts);
	return err;
}

/* The inline cache's bytes, from one walk of every unit. 0, -ENOENT (no DWARF, or no
 * address range table: a debug file installed later is read), -errno. */
static int build_inls(struct tc_symdso *d, void **image, size_t *len)
{
	struct inl_walk *w = calloc(1, sizeof(*w));
	struct tc_inlbuild *b = NULL;
	struct cu_range *cr = NULL;
	Dwarf_Addr dwbias, cubias;
	Dwarf *dw = dwfl_module_getdwarf(d->mod, &dwbias);
	Dwarf_Die *cu = NULL;
	Dwarf_Aranges *ar;
	size_t nar = 0, ncr = 0;
	int err = 0;

	if (!w)
		return -ENOMEM;
	w->d = d;
	if (!dw || dwarf_getaranges(dw, &ar, &nar) != 0 || !nar)
		err = -ENOENT;
	if (!err && !(cr = calloc(nar, sizeof(*cr))))
		err = -ENOMEM;
	for (size_t i = 0; !err && i < nar; i++) {
		Dwarf_Addr a;
		Dwarf_Word l;
		Dwarf_Off off;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &a, &l, &off) != 0 || !l)
			continue;
		cr[ncr++] = (struct cu_range){ off, a + dwbias, a + dwbias + l };
	}
	if (!err && ncr)
		qsort(cr, ncr, sizeof(*cr), cmp_cu_range);
	while (!err && (cu = dwfl_module_nextcu(d->mod, cu, &cubias))) {
		Dwarf_Off off = dwarf_dieoffset(cu);
		size_t lo = 0, hi = ncr;
		struct ivs *root = &w->lv[0][0];

		/* the unit's ranges in the table: the first with its offset, on */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (cr[mid].cuoff < off)
				lo = mid + 1;
			else
				hi = mid;
		}
		root->n = 0;
		for (size_t i = lo; i < ncr && cr[i].cuoff == off && !err; i++)
			err = ivs_add(root, cr[i].lo, cr[i].hi);
		if (err || !root->n)
			continue;
		ivs_norm(root);
		w->cu = cu;
		w->bias = cubias;
		err = inl_children(w, cu, 0, FRAME_NONE);
	}
	/* nothing inlined anywhere: kept all the same (no range), not walked again */
	if (!err)
		err = tc_inlbuild_new(&b);
	if (!err)
		err = paint_ranges(w, b);
	if (!err)
		err = tc_inlbuild_image(b, d->build_id, d->build_id_len, image, len);
	tc_inlbuild_free(b);
	for (size_t i = 0; i <= SCOPE_DEPTH_MAX; i++) {
		free(w->lv[i][0].v);
		free(w->lv[i][1].v);
	}
	free(w->tmp.v);
	free(w->own.v);
	free(w->p);
	free(w->fr);
	free(w);
	free(cr);
	return err;
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

/* --- kallsyms --- */

struct ksym {
	uint64_t addr;
	const char *name;      /* in text */
};

struct tc_kallsyms {
	struct ksym *v;
	size_t n;
	bool hidden;
	/* the file as read, its lines cut in place: the names point into it. (Interning
	 * them in a string pool saved a few MB but hashed 100k names on every report
	 * with a kernel sample, a tenth of a small report's time.) */
	char *text;
	/* a copy mapped (tc_kallsyms_map): its lines, bisected at each look-up, from
	 * body on; the names looked up so far, by their line's offset */
	const char *map;
	size_t map_len, body;
	struct tc_hmap named;          /* line offset -> index into names */
	char **names;
	size_t nnames;
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The value of hex digit c, or -1 (inline: the reader parses 122k addresses). */
static inline int hexval(unsigned char c)
{
	if ((unsigned)(c - '0') < 10)
		return c - '0';
	c |= 0x20;   /* 'A'-'F' to 'a'-'f' */
	return (unsigned)(c - 'a') < 6 ? c - 'a' + 10 : -1;
}

int tc_kallsyms_load(const char *path, struct tc_kallsyms **out)
{
	char *text, *line, *eol;
	size_t len, cap = 0;
	struct tc_kallsyms *k;
	bool any = false, nonzero = false, sorted = true;
	int err;

	*out = NULL;
	err = tc_read_file(path ? path : "/proc/kallsyms", &text, &len, 0);
	if (err)
		return err;
	k = calloc(1, sizeof(*k));
	if (!k) {
		free(text);
		return -ENOMEM;
	}
	for (line = text; line < text + len; line = eol + 1) {
		char *end = line, type, *name, *tab;
		uint64_t addr = 0;
		int d, digits = 0;

		eol = memchr(line, '\n', (size_t)(text + len - line));
		if (!eol)
			eol = text + len;   /* the NUL tc_read_file put there */
		*eol = '\0';
		/* "ADDRESS TYPE NAME": the address in hex, 16 digits on x86-64 */
		while ((d = hexval((unsigned char)*end)) >= 0 && digits++ < 16) {
			addr = addr << 4 | (uint64_t)d;
			end++;
		}
		if (!digits || digits > 16 || *end != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		name = end + 3;
		any = true;
		if (addr)
			nonzero = true;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (!addr)
			continue;
		if (k->n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct ksym *nv = realloc(k->v, ncap * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			k->v = nv;
			cap = ncap;
		}
		/* "name\t[module]": keep the name and the module */
		for (tab = strchr(name, '\t'); tab; tab = strchr(tab + 1, '\t'))
			*tab = ' ';
		if (k->n && addr < k->v[k->n - 1].addr)
			sorted = false;
		k->v[k->n].addr = addr;
		k->v[k->n].name = name;
		k->n++;
	}
	k->text = text;
	if (err) {
		tc_kallsyms_free(k);
		return err;
	}
	k->hidden = any && !nonzero;
	/* the kernel lists its own text in address order and usually its modules too
	 * (122k lines here, none out of order): sort only when one is */
	if (!sorted)
		qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
	*out = k;
	return 0;
}

/* --- a mapped copy: "%016x t NAME\n" lines in address order --- */

#define MAPPED_NAME 19   /* the name's column: 16 digits, " t " */

int tc_kallsyms_map(int fd, size_t body, struct tc_kallsyms **out)
{
	struct tc_kallsyms *k;
	struct stat st;
	void *m;

	*out = NULL;
	if (fstat(fd, &st) != 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size <= body)
		return -EINVAL;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	k = calloc(1, sizeof(*k));
	if (!k) {
		munmap(m, (size_t)st.st_size);
		return -ENOMEM;
	}
	k->map = m;
	k->map_len = (size_t)st.st_size;
	k->body = body;
	tc_hmap_init(&k->named);
	*out = k;
	return 0;
}

/* The address of the line that starts at at (0 and false when it is not one of the
 * copy's) and where the next one starts. */
static bool mapped_line(const struct tc_kallsyms *k, size_t at, uint64_t *addr, size_t *next)
{
	const char *m = k->map, *nl;
	uint64_t a = 0;

	if (at + MAPPED_NAME >= k->map_len)
		return false;
	for (size_t i = 0; i < 16; i++) {
		int d = hexval((unsigned char)m[at + i]);
		if (d < 0)
			return false;
		a = a << 4 | (uint64_t)d;
	}
	if (m[at + 16] != ' ' || m[at + 18] != ' ')
		return false;
	nl = memchr(m + at + MAPPED_NAME, '\n', k->map_len - at - MAPPED_NAME);
	*addr = a;
	*next = nl ? (size_t)(nl - m) + 1 : k->map_len;
	return true;
}

/* Bisects the lines for the last one at or before addr: reads some 17 lines of 122k,
 * so that a report touches the pages of the symbols it names, not a 5 MB table. */
static const char *mapped_lookup(struct tc_kallsyms *k, uint64_t addr, uint64_t *start)
{
	size_t lo = k->body, hi = k->map_len, best = SIZE_MAX, next;
	uint64_t a, best_addr = 0, hi_addr = UINT64_MAX;
	uint32_t idx;
	const char *nl;
	char *name, **nn;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		while (mid > lo && k->map[mid - 1] != '\n')
			mid--;   /* the start of the line mid is in */
		/* a line not in the format, or out of order with those read before: not
		 * the copy tacho wrote, no name rather than a wrong one */
		if (!mapped_line(k, mid, &a, &next) || a < best_addr || a > hi_addr)
			return NULL;
		if (a <= addr) {
			best = mid;
			best_addr = a;
			lo = next;
		} else {
			hi = mid;
			hi_addr = a;
		}
	}
	if (best == SIZE_MAX)
		return NULL;
	if (start)
		*start = best_addr;
	if (tc_hmap_get(&k->named, best, &idx))
		return k->names[idx];
	nl = memchr(k->map + best + MAPPED_NAME, '\n', k->map_len - best - MAPPED_NAME);
	name = strndup(k->map + best + MAPPED_NAME,
		       nl ? (size_t)(nl - k->map) - best - MAPPED_NAME
			  : k->map_len - best - MAPPED_NAME);
	nn = name ? realloc(k->names, (k->nnames + 1) * sizeof(*nn)) : NULL;
	if (!nn || tc_hmap_put(&k->named, best, (uint32_t)k->nnames)) {
		free(name);
		if (nn)
			k->names = nn;
		return NULL;
	}
	k->names = nn;
	k->names[k->nnames++] = name;
	return name;
}

void tc_kallsyms_free(struct tc_kallsyms *k)
{
	if (!k)
		return;
	free(k->text);
	free(k->v);
	if (k->map)
		munmap((void *)k->map, k->map_len);
	for (size_t i = 0; i < k->nnames; i++)
		free(k->names[i]);
	free(k->names);
	tc_hmap_exit(&k->named);
	free(k);
}

size_t tc_kallsyms_count(const struct tc_kallsyms *k)
{
	return k->n;
}

const char *tc_kallsyms_at(const struct tc_kallsyms *k, size_t i, uint64_t *addr)
{
	*addr = k->v[i].addr;
	return k->v[i].name;
}

bool tc_kallsyms_hidden(const struct tc_kallsyms *k)
{
	return k->hidden;
}

const char *tc_kallsyms_lookup(struct tc_kallsyms *k, uint64_t addr, uint64_t *start)
{
	size_t lo = 0, hi = k->n;

	if (k->map)
		return mapped_lookup(k, addr, start);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (start)
		*start = k->v[lo - 1].addr;
	return k->v[lo - 1].name;
}
