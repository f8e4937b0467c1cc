/* annotate.c - `report --annotate`: one function of a recording instruction by
 * instruction, disassembled with capstone, its source lines interleaved (libdw's line
 * table, the text from the source file), the samples and share on each instruction and
 * line, the hottest marked; written as a table, CSV or JSON (docs/schemas.md). */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"
#include "report/annotate.h"
#include "report/report-int.h"
#include "util/util.h"
#include "tacho/report.h"
#include "tacho/output.h"

#define CODE_MAX (4u << 20)    /* the largest function decoded (sqlite3VdbeExec: 100 KiB) */
#define SOURCE_MAX (64u << 20) /* the largest source file read for its lines' text */
#define TEXT_MAX 300           /* the most bytes of one source line kept */

struct hit {
	uint64_t addr, samples, events;
	uint32_t file;
	int line;
};

struct hits {
	struct hit *v;
	size_t n, cap;
	struct tc_hmap idx;            /* hash of the address -> v */
};

static int hit_add(struct hits *h, const struct loc *l, uint64_t period)
{
	uint64_t key = tc_hash_u64(l->addr);
	size_t pos = 0;
	uint32_t i;

	while (tc_hmap_next(&h->idx, key, &pos, &i))
		if (h->v[i].addr == l->addr) {
			h->v[i].samples++;
			h->v[i].events += period;
			return 0;
		}
	if (h->n == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 64;
		struct hit *nv = realloc(h->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		h->v = nv;
		h->cap = nc;
	}
	h->v[h->n] = (struct hit){ .addr = l->addr, .samples = 1, .events = period,
				   .file = l->src_file, .line = l->src_line };
	if (tc_hmap_add(&h->idx, key, (uint32_t)h->n))
		return -ENOMEM;
	h->n++;
	return 0;
}

/* The self samples of the function named symbol: the first sample in it fixes which
 * function (binary and start) that is, as tacho_profile_annotate does. */
static int collect(struct tacho_profile *p, const char *symbol, struct tc_annotation *a,
		   struct hits *h)
{
	bool found = false;
	int err = tc_profile_want_lines(p);

	for (size_t i = 0; i < p->nsmps && !err; i++) {
		const struct loc *l;
		uint32_t frame;
		size_t nf;
		int keep = tc_profile_keep(p, &p->smps[i]);   /* the event and the filter */

		if (keep < 0) {
			err = keep;
			break;
		}
		if (!keep)
			continue;
		a->all_events += tc_smp_period(p, &p->smps[i]);
		err = tc_profile_frames(p, &p->smps[i], &frame, 1, &nf);
		if (err || !nf)
			break;
		l = &p->locs[frame];
		if (l->sym == NONE ||
		    (!tc_sym_name_match(pool_str(p, l->sym), symbol) &&
		     !tc_sym_name_match(pool_str(p, l->raw), symbol)))
			continue;
		if (!found) {
			found = true;
			a->sym = l->sym;
			a->raw = l->raw;
			a->dso = l->dso;
			a->start = l->sym_start;
		} else if (l->dso != a->dso || l->sym_start != a->start) {
			continue;   /* a function of the same name in another binary */
		}
		err = hit_add(h, l, tc_smp_period(p, &p->smps[i]));
		a->samples++;
		a->events += tc_smp_period(p, &p->smps[i]);
	}
	return err ? err : found ? 0 : -ENOENT;
}

/* The binary that holds the function, opened (one of several with the name: the one
 * whose symbol table puts the function at the sampled start). */
static struct tc_symdso *binary_of(struct tacho_profile *p, struct tc_annotation *a)
{
	for (size_t i = 0; i < p->ndsos; i++) {
		struct dso *d = &p->dsos[i];
		struct tc_symdso *sd;
		uint64_t start, size;

		if (d->name != a->dso || !(sd = tc_profile_dso_open(p, d)))
			continue;
		if (tc_symdso_find(sd, pool_str(p, a->raw), &start, &size) || start != a->start)
			continue;
		a->size = size;
		return sd;
	}
	return NULL;
}

static int insn_grow(struct tc_annotation *a, size_t *cap)
{
	if (a->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct tc_insn *nv = realloc(a->insns, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		a->insns = nv;
		*cap = nc;
	}
	memset(&a->insns[a->n], 0, sizeof(a->insns[a->n]));
	a->insns[a->n].file = NONE;
	a->insns[a->n].src = NONE;
	return 0;
}

/* A direct jump or call names its target as objdump does: "jle 0x401636
 * <store_loop+0x21>". */
static void branch_target(struct tacho_profile *p, struct tc_symdso *sd,
			  const struct tc_annotation *a, struct tc_insn *in)
{
	const char *name = NULL;
	uint64_t target, start = 0;
	struct tc_symloc sl;
	size_t len = strlen(in->operands);
	char *end;

	if ((in->mnemonic[0] != 'j' && strncmp(in->mnemonic, "call", 4)) ||
	    strncmp(in->operands, "0x", 2))
		return;
	target = strtoull(in->operands, &end, 16);
	if (*end)
		return;   /* through a register or memory */
	if (target >= a->start && target < a->start + a->size) {
		name = pool_str(p, a->sym);
		start = a->start;
	} else if (tc_symdso_lookup(sd, target, &sl) == 0 && sl.symbol) {
		name = sl.symbol;
		start = sl.sym_start;
	}
	if (!name)
		return;
	if (target == start)
		snprintf(in->operands + len, sizeof(in->operands) - len, " <%s>", name);
	else
		snprintf(in->operands + len, sizeof(in->operands) - len, " <%s+%#" PRIx64 ">",
			 name, target - start);
}

/* capstone, loaded at the first annotate rather than linked: linked, its relocations
 * cost every tacho command and every program linked with libtacho about 1 ms of
 * start-up (bench/libcost.sh), for the one view that uses it. The soname is the one of
 * the headers built against (CS_API_MAJOR: libcapstone.so.4 on Debian 12), so that the
 * layout of cs_insn is the one compiled here. */
#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
#define CS_SONAME "libcapstone.so." CS_STR(CS_API_MAJOR)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_insn *(*malloc)(csh);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
	bool ok;
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void cs_load(void)
{
	void *h = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		tc_log(TACHO_LOG_WARN, "annotate: %s cannot be loaded (%s): the instructions are "
		       "not decoded (Debian: apt-get install libcapstone4)", CS_SONAME, dlerror());
		return;
	}
	/* the POSIX way of turning dlsym's object pointer into a function pointer */
	*(void **)&cs.open = dlsym(h, "cs_open");
	*(void **)&cs.option = dlsym(h, "cs_option");
	*(void **)&cs.malloc = dlsym(h, "cs_malloc");
	*(void **)&cs.disasm_iter = dlsym(h, "cs_disasm_iter");
	*(void **)&cs.free = dlsym(h, "cs_free");
	*(void **)&cs.close = dlsym(h, "cs_close");
	cs.ok = cs.open && cs.option && cs.malloc && cs.disasm_iter && cs.free && cs.close;
	if (!cs.ok)
		tc_log(TACHO_LOG_WARN, "annotate: %s lacks capstone's functions: the "
		       "instructions are not decoded", CS_SONAME);
	/* kept loaded for the life of the process: the handle is never closed */
}

/* Every instruction of the function, with its source line. Bytes capstone cannot
 * decode become one-byte "(bad)" entries, as objdump shows them, and decoding goes on
 * after them. The paths to read each line's text from (absolute, through the
 * compilation directory) go to paths[], one per instruction. */
static int disassemble(struct tacho_profile *p, struct tc_symdso *sd, struct tc_annotation *a,
		       size_t *cap, uint32_t **paths)
{
	uint8_t *code = NULL;
	const uint8_t *at;
	size_t got, left, pcap = 0;
	uint64_t addr = a->start;
	csh h;
	cs_insn *ci = NULL;
	int err = 0;

	if (!a->size || a->size > CODE_MAX)
		return 0;
	code = malloc((size_t)a->size);
	if (!code)
		return -ENOMEM;
	got = tc_symdso_read(sd, a->start, code, (size_t)a->size);
	if (got != a->size) {
		free(code);
		return 0;   /* no file contents there (.bss, a stripped-out section) */
	}
	pthread_once(&cs_once, cs_load);
	if (!cs.ok || cs.open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		free(code);
		return 0;
	}
	/* AT&T syntax, as objdump and perf annotate print it */
	cs.option(h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	ci = cs.malloc(h);
	if (!ci) {
		err = -ENOMEM;
		goto out;
	}
	at = code;
	left = got;
	while (left && !err) {
		struct tc_insn *in;
		struct tc_symloc sl;
		uint64_t here = addr;

		err = insn_grow(a, cap);
		if (err)
			break;
		in = &a->insns[a->n];
		in->addr = here;
		if (cs.disasm_iter(h, &at, &left, &addr, ci)) {
			in->size = ci->size;
			snprintf(in->mnemonic, sizeof(in->mnemonic), "%s", ci->mnemonic);
			snprintf(in->operands, sizeof(in->operands), "%s", ci->op_str);
			branch_target(p, sd, a, in);
		} else {
			in->size = 1;
			snprintf(in->mnemonic, sizeof(in->mnemonic), "(bad)");
			at++;
			left--;
			addr++;
		}
		tc_symdso_lookup(sd, here, &sl);
		in->line = sl.line;
		if (sl.file && tc_strpool_intern(&p->pool, sl.file, &in->file))
			err = -ENOMEM;
		if (!err && a->n >= pcap) {
			size_t nc = pcap ? pcap * 2 : 256;
			uint32_t *np = realloc(*paths, nc * sizeof(*np));
			if (!np)
				err = -ENOMEM;
			else
				*paths = np;
			pcap = nc;
		}
		if (!err) {
			char path[4200];
			(*paths)[a->n] = NONE;
			if (sl.file && sl.file[0] != '/' && sl.comp_dir)
				snprintf(path, sizeof(path), "%s/%s", sl.comp_dir, sl.file);
			else
				snprintf(path, sizeof(path), "%s", sl.file ? sl.file : "");
			if (path[0] && tc_strpool_intern(&p->pool, path, &(*paths)[a->n]))
				err = -ENOMEM;
		}
		if (!err)
			a->n++;
	}
	a->decoded = !err;
out:
	if (ci)
		cs.free(ci, 1);
	cs.close(&h);
	free(code);
	return err;
}

static int insn_cmp(const void *x, const void *y)
{
	const struct tc_insn *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The instruction that holds addr, or NULL. */
static struct tc_insn *insn_at(struct tc_annotation *a, uint64_t addr)
{
	size_t lo = 0, hi = a->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->insns[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	struct tc_insn *in = &a->insns[lo - 1];
	return addr < in->addr + (in->size ? in->size : 1) ? in : NULL;
}

/* Puts the samples on the instructions that hold their addresses; an address no
 * decoded instruction holds (nothing decoded, or code that changed) gets an entry of
 * its own, so that no sample is dropped. */
static int attribute(struct tc_annotation *a, const struct hits *h, size_t *cap,
		     uint32_t **paths)
{
	size_t decoded = a->n;
	int err = 0;

	for (size_t i = 0; i < h->n && !err; i++) {
		struct tc_insn *in = insn_at(a, h->v[i].addr);
		if (!in) {
			err = insn_grow(a, cap);
			if (err)
				break;
			in = &a->insns[a->n++];
			in->addr = h->v[i].addr;
			in->file = h->v[i].file;
			in->line = h->v[i].line;
		}
		in->samples += h->v[i].samples;
		in->events += h->v[i].events;
	}
	if (!err && a->n > decoded) {
		/* the paths of the entries added: none (their text is not read) */
		uint32_t *np = realloc(*paths, a->n * sizeof(*np));
		if (!np)
			return -ENOMEM;
		*paths = np;
		for (size_t i = decoded; i < a->n; i++)
			np[i] = NONE;
		/* sorted with their paths: sort indices, then both arrays */
		struct tc_insn *sorted = malloc(a->n * sizeof(*sorted));
		uint32_t *spaths = malloc(a->n * sizeof(*spaths));
		if (!sorted || !spaths) {
			free(sorted);
			free(spaths);
			return -ENOMEM;
		}
		for (size_t i = 0; i < a->n; i++) {
			sorted[i] = a->insns[i];
			sorted[i].src = (uint32_t)i;   /* the old index, for the path */
		}
		qsort(sorted, a->n, sizeof(*sorted), insn_cmp);
		for (size_t i = 0; i < a->n; i++) {
			spaths[i] = np[sorted[i].src];
			sorted[i].src = NONE;
		}
		memcpy(a->insns, sorted, a->n * sizeof(*sorted));
		memcpy(np, spaths, a->n * sizeof(*spaths));
		free(sorted);
		free(spaths);
	}
	return err;
}

/* A source file read once, with the offsets of its lines. */
struct srcfile {
	uint32_t path;
	char *buf;
	size_t len;
	size_t *starts;                /* starts[k]: offset of line k + 1 */
	size_t nlines;
};

static struct srcfile *srcfile_get(struct tacho_profile *p, struct srcfile **files, size_t *n,
				   uint32_t path)
{
	struct srcfile *f, *nv;
	size_t cap = 64;

	for (size_t i = 0; i < *n; i++)
		if ((*files)[i].path == path)
			return &(*files)[i];
	nv = realloc(*files, (*n + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	*files = nv;
	f = &nv[(*n)++];
	memset(f, 0, sizeof(*f));
	f->path = path;
	/* a source file named by the recording's binary: a regular file, bounded */
	if (tc_read_regular_file(pool_str(p, path), &f->buf, &f->len, SOURCE_MAX))
		return f;
	f->starts = malloc(cap * sizeof(*f->starts));
	for (size_t off = 0; f->starts && off < f->len;) {
		char *nl = memchr(f->buf + off, '\n', f->len - off);
		if (f->nlines == cap) {
			size_t *ns = realloc(f->starts, cap * 2 * sizeof(*ns));
			if (!ns) {
				free(f->starts);
				f->starts = NULL;
				f->nlines = 0;
				break;
			}
			f->starts = ns;
			cap *= 2;
		}
		f->starts[f->nlines++] = off;
		off = nl ? (size_t)(nl - f->buf) + 1 : f->len;
	}
	return f;
}

/* Line number line of f, tabs expanded to 8 columns and trailing blanks dropped,
 * malloc'd; NULL when there is no such line (or no memory: the text is an extra). */
static char *line_text(const struct srcfile *f, int line)
{
	struct tc_sb sb = TC_SB_INIT;
	const char *s, *end;
	unsigned col = 0;

	if (line < 1 || (size_t)line > f->nlines || !f->starts)
		return NULL;
	s = f->buf + f->starts[line - 1];
	end = (size_t)line < f->nlines ? f->buf + f->starts[line] : f->buf + f->len;
	tc_sb_init(&sb);
	for (; s < end && *s != '\n' && *s != '\r' && sb.len < TEXT_MAX; s++) {
		if (*s == '\t') {
			do
				tc_sb_addc(&sb, ' ');
			while (++col % 8);
			continue;
		}
		tc_sb_addc(&sb, *s);
		col++;
	}
	while (sb.len && sb.buf[sb.len - 1] == ' ')
		sb.len--;
	if (sb.oom) {
		tc_sb_exit(&sb);
		return NULL;
	}
	tc_sb_addc(&sb, 0);
	return tc_sb_detach(&sb);
}

struct lkey {
	const struct tacho_profile *p;
	uint32_t file;
	int line;
	uint32_t path;
};

static int lkey_cmp(const void *x, const void *y)
{
	const struct lkey *a = x, *b = y;
	int c;

	if (a->file != b->file && (c = strcmp(pool_str(a->p, a->file), pool_str(b->p, b->file))))
		return c;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* The distinct source lines of the instructions, their samples and text. */
static int source_lines(struct tacho_profile *p, struct tc_annotation *a, const uint32_t *paths)
{
	struct lkey *keys = malloc((a->n ? a->n : 1) * sizeof(*keys));
	struct srcfile *files = NULL;
	size_t nk = 0, nfiles = 0;
	int err = 0;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < a->n; i++)
		if (a->insns[i].file != NONE && a->insns[i].line > 0)
			keys[nk++] = (struct lkey){ p, a->insns[i].file, a->insns[i].line,
						    paths ? paths[i] : NONE };
	qsort(keys, nk, sizeof(*keys), lkey_cmp);
	a->lines = calloc(nk ? nk : 1, sizeof(*a->lines));
	if (!a->lines) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nk; i++) {
		struct tc_srcline *l;
		if (a->nlines && !lkey_cmp(&keys[i], &keys[i - 1])) {
			l = &a->lines[a->nlines - 1];
			if (!l->text && keys[i].path != NONE) {
				struct srcfile *f = srcfile_get(p, &files, &nfiles, keys[i].path);
				l->text = f ? line_text(f, l->line) : NULL;
			}
			continue;
		}
		l = &a->lines[a->nlines++];
		l->file = keys[i].file;
		l->line = keys[i].line;
		if (keys[i].path != NONE) {
			struct srcfile *f = srcfile_get(p, &files, &nfiles, keys[i].path);
			if (!f) {
				err = -ENOMEM;
				break;
			}
			l->text = line_text(f, l->line);
		}
	}
	/* each instruction to its line, and the line's samples */
	for (size_t i = 0; i < a->n && !err; i++) {
		struct tc_insn *in = &a->insns[i];
		struct lkey k = { p, in->file, in->line, NONE };
		size_t lo = 0, hi = a->nlines;

		if (in->file == NONE || in->line <= 0)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			struct lkey m = { p, a->lines[mid].file, a->lines[mid].line, NONE };
			int c = lkey_cmp(&m, &k);
			if (!c) {
				lo = mid;
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < a->nlines) {
			in->src = (uint32_t)lo;
			a->lines[lo].samples += in->samples;
			a->lines[lo].events += in->events;
		}
	}
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].buf);
		free(files[i].starts);
	}
	free(files);
	free(keys);
	return err;
}

static bool hotter(uint64_t ev, uint64_t n, uint64_t best_ev, uint64_t best_n)
{
	return ev > best_ev || (ev == best_ev && n > best_n);
}

int tc_annotate_new(struct tacho_profile *p, const char *symbol, struct tc_annotation **out)
{
	struct tc_annotation *a = calloc(1, sizeof(*a));
	struct hits h = { 0 };
	struct tc_symdso *sd;
	uint32_t *paths = NULL;
	size_t cap = 0;
	int err;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->hot_insn = a->hot_line = SIZE_MAX;
	err = collect(p, symbol, a, &h);
	if (err)
		goto out;
	sd = binary_of(p, a);
	if (sd)
		err = disassemble(p, sd, a, &cap, &paths);
	if (!err)
		err = attribute(a, &h, &cap, &paths);
	if (!err)
		err = source_lines(p, a, paths);
	if (err)
		goto out;
	for (size_t i = 0; i < a->n; i++)
		if (a->insns[i].samples &&
		    (a->hot_insn == SIZE_MAX ||
		     hotter(a->insns[i].events, a->insns[i].samples, a->insns[a->hot_insn].events,
			    a->insns[a->hot_insn].samples)))
			a->hot_insn = i;
	for (size_t i = 0; i < a->nlines; i++)
		if (a->lines[i].samples &&
		    (a->hot_line == SIZE_MAX ||
		     hotter(a->lines[i].events, a->lines[i].samples, a->lines[a->hot_line].events,
			    a->lines[a->hot_line].samples)))
			a->hot_line = i;
	*out = a;
	a = NULL;
out:
	free(paths);
	free(h.v);
	tc_hmap_exit(&h.idx);
	tc_annotate_free(a);
	return err;
}

void tc_annotate_free(struct tc_annotation *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nlines; i++)
		free(a->lines[i].text);
	free(a->lines);
	free(a->insns);
	free(a);
}

/* --- writing it --- */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static double share(uint64_t events, uint64_t total)
{
	return total ? 100.0 * (double)events / (double)total : 0;
}

static int write_table(struct tacho_profile *p, const struct tc_annotation *a,
		       const struct tacho_profile_info *in, FILE *f)
{
	struct tc_table *t = tc_table_new(5);
	struct tc_sb sb = TC_SB_INIT;
	char n[24], pct[16], addr[24];
	uint32_t prev = NONE;
	int err;

	if (!t)
		return -ENOMEM;
	tc_sb_init(&sb);
	tc_profile_write_header(f, in);
	fputs("# ", f);
	tc_fputs_printable(pool_str(p, a->sym), f);
	fputs(" in ", f);
	tc_fputs_printable(pool_str(p, a->dso) ? pool_str(p, a->dso) : "[unknown]", f);
	/* a simulated recording's counts are exact: they, not its one sample per
	 * instruction and process, are what the first column shows */
	if (in->simulated)
		fprintf(f, ": %" PRIu64 " simulated", a->events);
	else
		fprintf(f, ": %" PRIu64 " samples", a->samples);
	if (!a->decoded)
		fputs(" (its code cannot be read: sampled addresses only)", f);
	fputc('\n', f);
	tc_table_align_right(t, 1, true);
	tc_table_align_right(t, 2, true);
	err = tc_table_addf(t, "\t%s\tpercent\taddress\tsource and instruction",
			    in->simulated ? "simulated" : "samples");
	for (size_t i = 0; i < a->n && !err; i++) {
		const struct tc_insn *ins = &a->insns[i];
		const char *cells[5];

		if (ins->src != NONE && ins->src != prev) {
			const struct tc_srcline *l = &a->lines[ins->src];
			tc_sb_reset(&sb);
			tc_sb_add_printable(&sb, base_name(pool_str(p, l->file)));
			tc_sb_addf(&sb, ":%d", l->line);
			if (l->text) {
				tc_sb_adds(&sb, "  ");
				tc_sb_add_printable(&sb, l->text);
			}
			snprintf(n, sizeof(n), "%" PRIu64, in->simulated ? l->events : l->samples);
			snprintf(pct, sizeof(pct), "%.2f%%", share(l->events, a->all_events));
			cells[0] = ins->src == a->hot_line ? ">" : "";
			cells[1] = l->samples ? n : "";
			cells[2] = l->samples ? pct : "";
			cells[3] = "";
			cells[4] = sb.oom ? "" : sb.buf;
			err = tc_table_add(t, cells);
			if (err)
				break;
		}
		prev = ins->src;
		tc_sb_reset(&sb);
		tc_sb_adds(&sb, "    ");
		if (ins->size && ins->operands[0]) {
			tc_sb_addf(&sb, "%-7s %s", ins->mnemonic, ins->operands);
		} else if (ins->size) {
			tc_sb_adds(&sb, ins->mnemonic);
		} else {
			tc_sb_adds(&sb, "(not decoded)");
		}
		snprintf(n, sizeof(n), "%" PRIu64, in->simulated ? ins->events : ins->samples);
		snprintf(pct, sizeof(pct), "%.2f%%", share(ins->events, a->all_events));
		snprintf(addr, sizeof(addr), "%#" PRIx64, ins->addr);
		cells[0] = i == a->hot_insn ? ">" : "";
		cells[1] = ins->samples ? n : "";
		cells[2] = ins->samples ? pct : "";
		cells[3] = addr;
		cells[4] = sb.oom ? "" : sb.buf;
		err = tc_table_add(t, cells);
	}
	if (!err && sb.oom)
		err = -ENOMEM;
	if (!err)
		tc_table_print(t, f, 0, 2);
	tc_sb_exit(&sb);
	tc_table_free(t);
	return err;
}

static int write_json(struct tacho_profile *p, const struct tc_annotation *a,
		      const struct tacho_profile_info *in, FILE *f, enum tacho_format fmt,
		      const struct tc_write_settings *w)
{
	const char *dso = pool_str(p, a->dso) ? pool_str(p, a->dso) : "[unknown]";
	struct tc_json j;

	tc_json_doc_begin(&j, f, fmt, w);
	tc_json_obj_begin(&j, NULL);
	tc_json_int(&j, "version", 1);
	tc_json_uint(&j, "samples", in->samples);
	tc_json_uint(&j, "lost", in->lost);
	tc_json_uint(&j, "throttles", in->throttles);
	if (in->simulated)
		tc_json_str(&j, "status", "simulated");
	tc_json_str(&j, "symbol", pool_str(p, a->sym));
	tc_json_str(&j, "dso", dso);
	tc_json_uint(&j, "start", a->start);
	tc_json_uint(&j, "size", a->size);
	tc_json_bool(&j, "decoded", a->decoded);
	tc_json_uint(&j, "function_samples", a->samples);
	tc_json_arr_begin(&j, "rows");
	for (size_t i = 0; i < a->n; i++) {
		const struct tc_insn *ins = &a->insns[i];
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "symbol", pool_str(p, a->sym));
		tc_json_str(&j, "dso", dso);
		tc_json_uint(&j, "samples", ins->samples);
		tc_json_uint(&j, "events", ins->events);
		tc_json_double(&j, "percent", share(ins->events, a->all_events));
		tc_json_str(&j, "file", pool_str(p, ins->file));
		tc_json_int(&j, "line", ins->line);
		tc_json_uint(&j, "address", ins->addr);
		tc_json_uint(&j, "size", ins->size);
		if (ins->size) {
			tc_json_str(&j, "mnemonic", ins->mnemonic);
			tc_json_str(&j, "operands", ins->operands);
		} else {
			tc_json_null(&j, "mnemonic");
			tc_json_null(&j, "operands");
		}
		tc_json_bool(&j, "hottest", i == a->hot_insn);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_arr_begin(&j, "lines");
	for (size_t i = 0; i < a->nlines; i++) {
		const struct tc_srcline *l = &a->lines[i];
		tc_json_obj_begin(&j, NULL);
		tc_json_str(&j, "file", pool_str(p, l->file));
		tc_json_int(&j, "line", l->line);
		tc_json_str(&j, "text", l->text);
		tc_json_uint(&j, "samples", l->samples);
		tc_json_uint(&j, "events", l->events);
		tc_json_double(&j, "percent", share(l->events, a->all_events));
		tc_json_bool(&j, "hottest", i == a->hot_line);
		tc_json_obj_end(&j);
	}
	tc_json_arr_end(&j);
	tc_json_obj_end(&j);
	return tc_json_doc_end(&j);
}

/* A row per instruction: the line's text with it (empty where there is none). */
static int write_csv(struct tacho_profile *p, const struct tc_annotation *a, FILE *f,
		     const struct tc_write_settings *w)
{
	static const char *const head[] = { "address", "size", "samples", "events", "percent",
					    "mnemonic", "operands", "file", "line", "text",
					    "hottest" };
	char addr[24], size[16], samples[24], events[24], pct[32], line[16];

	if (w->header)
		tc_csv_row(f, w, head, ARRAY_SIZE(head));
	for (size_t i = 0; i < a->n; i++) {
		const struct tc_insn *ins = &a->insns[i];
		const struct tc_srcline *l = ins->src != NONE ? &a->lines[ins->src] : NULL;
		const char *row[] = { addr, size, samples, events, pct, ins->mnemonic,
				      ins->operands,
				      ins->file != NONE ? pool_str(p, ins->file) : "",
				      ins->line > 0 ? line : "", l && l->text ? l->text : "",
				      i == a->hot_insn ? "1" : "0" };
		_Static_assert(ARRAY_SIZE(row) == ARRAY_SIZE(head), "a field per column");
		snprintf(addr, sizeof(addr), "%#" PRIx64, ins->addr);
		snprintf(size, sizeof(size), "%u", ins->size);
		snprintf(samples, sizeof(samples), "%" PRIu64, ins->samples);
		snprintf(events, sizeof(events), "%" PRIu64, ins->events);
		snprintf(pct, sizeof(pct), "%.17g", share(ins->events, a->all_events));
		snprintf(line, sizeof(line), "%d", ins->line);
		tc_csv_row(f, w, row, ARRAY_SIZE(row));
	}
	return 0;
}

int tacho_profile_write_annotate(struct tacho_profile *p, const char *symbol, FILE *f,
				 enum tacho_format fmt, const struct tacho_write_opts *opts)
{
	struct tacho_profile_info in = { .sz = sizeof(in) };
	struct tc_annotation *a;
	struct tc_write_settings w;
	int err;

	if (!p || !symbol || !f)
		return -EINVAL;
	err = tc_write_settings_get(opts, fmt, &w);
	if (err)
		return err;
	err = tc_annotate_new(p, symbol, &a);
	if (err)
		return err;
	tacho_profile_info(p, &in);
	switch (fmt) {
	case TACHO_FORMAT_JSON:
	case TACHO_FORMAT_JSON_LINES:
		err = write_json(p, a, &in, f, fmt, &w);
		break;
	case TACHO_FORMAT_CSV:
		err = write_csv(p, a, f, &w);
		break;
	default:
		err = write_table(p, a, &in, f);
		break;
	}
	tc_annotate_free(a);
	if (!err && fmt != TACHO_FORMAT_JSON && fmt != TACHO_FORMAT_JSON_LINES)
		err = tc_write_status(f);
	return err;
}
