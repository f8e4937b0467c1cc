/* test-events-uprobe.c - uprobe:PATH:WHERE and uretprobe: in the event grammar.
 *
 * The expected file offsets are computed here by a small ELF64 reader of its own
 * (section headers, .symtab, program headers, <elf.h> only: not libelf, which the
 * library uses) and cross-checked with nm's address; the live cases count calls of
 * functions whose call counts are known exactly: tests/progs/uprobe-calls (work() N
 * times, leaf() 2N times) and tu_target() of this file. Every table row names its
 * line. The uprobe PMU is needed for all but the fake-tree and no-files cases: without
 * it they skip, saying so. */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "events/events.h"
#include "util/util.h"

static char prog[PATH_MAX];       /* absolute path of tests/progs/uprobe-calls */
static char self[PATH_MAX];       /* this test binary, resolved */
static uint32_t up_type;
static unsigned up_retbit;
static bool have_pmu;
static char why_no_pmu[200];

/* Called a known number of times by the live self test; global and noinline, so the
 * calls enter its first instruction. */
__attribute__((noinline, noclone, used)) long tu_target(long x);
long tu_target(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* ------------------------------------------------------------- a small ELF reader */

/* The file offset of function sym's entry in ELF64 file path, computed from the
 * section and program headers without libelf; *value gets st_value. 0 or -1. */
static int elf_offset(const char *path, const char *sym, uint64_t *value, uint64_t *off)
{
	char *text = NULL;
	const unsigned char *buf;
	size_t size;
	int r = -1;

	if (tc_read_file(path, &text, &size, 0) != 0)
		return -1;
	buf = (const unsigned char *)text;
	if (size < sizeof(Elf64_Ehdr))
		goto out;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		goto out;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum && r != 0; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		const Elf64_Sym *st = (const Elf64_Sym *)(buf + sh[i].sh_offset);
		const char *names = (const char *)buf + sh[sh[i].sh_link].sh_offset;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*st); k++) {
			if (ELF64_ST_TYPE(st[k].st_info) != STT_FUNC || strcmp(names + st[k].st_name, sym))
				continue;
			const Elf64_Phdr *ph = (const Elf64_Phdr *)(buf + eh->e_phoff);
			for (unsigned j = 0; j < eh->e_phnum; j++) {
				if (ph[j].p_type == PT_LOAD && st[k].st_value >= ph[j].p_vaddr &&
				    st[k].st_value < ph[j].p_vaddr + ph[j].p_filesz) {
					*value = st[k].st_value;
					*off = st[k].st_value - ph[j].p_vaddr + ph[j].p_offset;
					r = 0;
				}
			}
			break;
		}
	}
out:
	free(text);
	return r;
}

/* nm's address of sym in path, or -1 when nm is not there. */
static int64_t nm_address(const char *path, const char *sym)
{
	char *argv[] = { (char *)"nm", (char *)path, NULL };
	struct th_run r;
	char pat[128];
	int64_t v = -1;

	if (access("/usr/bin/nm", X_OK) != 0)
		return -1;
	th_runv(&r, NULL, argv);
	snprintf(pat, sizeof(pat), " T %s\n", sym);
	for (char *hit = strstr(r.out, pat); hit; hit = NULL) {
		char *line = hit;
		while (line > r.out && line[-1] != '\n')
			line--;
		v = (int64_t)strtoull(line, NULL, 16);
	}
	th_run_free(&r);
	return v;
}

/* ------------------------------------------------------------- setup */

static int setup(void **state)
{
	struct tc_events_ctx ctx = { .sysfs_root = TC_SYSFS_PMU_ROOT };
	int r;

	(void)state;
	if (!realpath(th_prog("uprobe-calls"), prog))
		snprintf(prog, sizeof(prog), "%s", th_prog("uprobe-calls"));
	if (!realpath("/proc/self/exe", self))
		self[0] = '\0';
	r = tc_uprobe_pmu(&ctx, &up_type, &up_retbit);
	have_pmu = r == 0;
	snprintf(why_no_pmu, sizeof(why_no_pmu), "no uprobe PMU in %s here (%s): the kernel "
		 "lacks CONFIG_UPROBE_EVENTS", TC_SYSFS_PMU_ROOT, tacho_strerror(r));
	return 0;
}

/* Replaces each '@' of tmpl with path. */
static void expand(char *buf, size_t size, const char *tmpl, const char *path)
{
	size_t n = 0;

	for (const char *t = tmpl; *t && n + 1 < size; t++) {
		if (*t == '@')
			n += (size_t)snprintf(buf + n, size - n, "%s", path);
		else
			buf[n++] = *t;
		if (n >= size)
			n = size - 1;
	}
	buf[n] = '\0';
}

/* ------------------------------------------------------------- encodings */

static void test_offsets_match_elf(void **state)
{
	static const char *const syms[] = { "work", "leaf", "main" };
	(void)state;

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	for (size_t i = 0; i < ARRAY_SIZE(syms); i++) {
		char spec[PATH_MAX + 64];
		struct tacho_evlist *l;
		struct perf_event_attr a;
		struct tacho_diag d = { .sz = sizeof(d) };
		uint64_t value = 0, off = 0;
		int64_t nm;

		assert_int_equal(elf_offset(prog, syms[i], &value, &off), 0);
		nm = nm_address(prog, syms[i]);
		if (nm >= 0 && (uint64_t)nm != value)
			fail_msg("%s: nm says 0x%llx, the ELF reader 0x%llx", syms[i],
				 (unsigned long long)nm, (unsigned long long)value);
		/* a static non-PIE x86-64 binary loads at 0x400000 with its file mapped from
		 * offset 0: the offset is the address less 0x400000 */
		assert_int_equal(off, value - 0x400000);
		snprintf(spec, sizeof(spec), "uprobe:%s:%s", prog, syms[i]);
		if (tacho_evlist_parse(spec, &l, &d) != 0)
			fail_msg("'%s': %s", spec, d.message);
		assert_int_equal(tacho_evlist_attr(l, 0, &a), 0);
		assert_int_equal(a.type, up_type);
		assert_int_equal(a.config, 0);
		assert_int_equal(a.probe_offset, off);
		assert_string_equal((const char *)(uintptr_t)a.uprobe_path, prog);
		assert_int_equal(tacho_evlist_source(l, 0), TACHO_EVENT_SRC_BREAKPOINT);
		assert_string_equal(tacho_evlist_pmu(l, 0), "uprobe");
		assert_string_equal(tacho_evlist_name(l, 0), spec);
		tacho_evlist_free(l);
	}
}

/* This binary (PIE or not, sanitized or not): the offset agrees with the reader's. */
static void test_self_offset(void **state)
{
	char spec[PATH_MAX + 64];
	struct tacho_evlist *l;
	struct perf_event_attr a;
	struct tacho_diag d = { .sz = sizeof(d) };
	uint64_t value = 0, off = 0;
	(void)state;

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	assert_int_equal(elf_offset(self, "tu_target", &value, &off), 0);
	snprintf(spec, sizeof(spec), "uprobe:/proc/self/exe:tu_target");
	if (tacho_evlist_parse(spec, &l, &d) != 0)
		fail_msg("'%s': %s", spec, d.message);
	assert_int_equal(tacho_evlist_attr(l, 0, &a), 0);
	assert_int_equal(a.probe_offset, off);
	/* the path is resolved at parse time: the kernel would resolve /proc/self in the
	 * process that opens the event, which need not be this one */
	assert_string_equal((const char *)(uintptr_t)a.uprobe_path, self);
	tacho_evlist_free(l);
}

struct valid {
	int line;
	const char *tmpl;     /* '@' stands for the helper's absolute path */
	bool ret;
	const char *sym;      /* the function whose entry is the base, NULL: none */
	uint64_t add;         /* added to it (or the whole offset when sym is NULL) */
	bool ex_kernel, ex_user;
};

#define OK(t, ret, sym, add, ek, eu) { __LINE__, t, ret, sym, add, ek, eu }
static const struct valid valid_cases[] = {
	OK("uprobe:@:work", false, "work", 0, false, false),
	OK("uprobe:@:work+0", false, "work", 0, false, false),
	OK("uprobe:@:work+4", false, "work", 4, false, false),
	OK("uprobe:@:work+0x1", false, "work", 1, false, false),
	OK("uprobe:@:leaf", false, "leaf", 0, false, false),
	OK("uprobe:@:work:u", false, "work", 0, true, false),
	OK("UPROBE:@:work", false, "work", 0, false, false),
	OK("uretprobe:@:work", true, "work", 0, false, false),
	OK("uretprobe:@:work:u", true, "work", 0, true, false),
	OK("uprobe:@:0x1000", false, NULL, 0x1000, false, false),
	OK("uprobe:@:4096", false, NULL, 4096, false, false),
	OK("uretprobe:@:0x1010", true, NULL, 0x1010, false, false),
};

static void test_valid(void **state)
{
	unsigned bad = 0;
	(void)state;

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	for (size_t i = 0; i < ARRAY_SIZE(valid_cases); i++) {
		const struct valid *c = &valid_cases[i];
		char spec[PATH_MAX + 64];
		struct tacho_evlist *l;
		struct perf_event_attr a;
		struct tacho_diag d = { .sz = sizeof(d) };
		uint64_t value, off = 0;

		expand(spec, sizeof(spec), c->tmpl, prog);
		if (c->sym)
			assert_int_equal(elf_offset(prog, c->sym, &value, &off), 0);
		off += c->add;
		if (tacho_evlist_parse(spec, &l, &d) != 0) {
			print_error("line %d: '%s' rejected: %s\n", c->line, spec, d.message);
			bad++;
			continue;
		}
		tacho_evlist_attr(l, 0, &a);
		if (a.type != up_type || a.config != (c->ret ? 1ull << up_retbit : 0) ||
		    a.probe_offset != off || strcmp((const char *)(uintptr_t)a.uprobe_path, prog) ||
		    a.exclude_kernel != c->ex_kernel || a.exclude_user != c->ex_user ||
		    tacho_evlist_count(l) != 1) {
			print_error("line %d: '%s': type %u config 0x%llx offset 0x%llx path %s "
				    "excl k%d u%d; want offset 0x%llx\n", c->line, spec, a.type,
				    (unsigned long long)a.config, (unsigned long long)a.probe_offset,
				    (const char *)(uintptr_t)a.uprobe_path, a.exclude_kernel,
				    a.exclude_user, (unsigned long long)off);
			bad++;
		}
		tacho_evlist_free(l);
	}
	if (bad)
		fail_msg("%u of %zu valid cases wrong", bad, ARRAY_SIZE(valid_cases));
}

/* A relative path becomes absolute; the list may hold several uprobes, each with its
 * own path string, and they survive the list growing. */
static void test_relative_and_many(void **state)
{
	char cwd[PATH_MAX], dir[PATH_MAX], spec[256];
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct perf_event_attr a;
	(void)state;

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(dir, sizeof(dir), "%s", prog);
	*strrchr(dir, '/') = '\0';
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(tacho_evlist_new(NULL, &l), 0);
	for (int i = 0; i < 20; i++) {
		snprintf(spec, sizeof(spec), "uprobe:./uprobe-calls:work,uretprobe:uprobe-calls:leaf");
		if (tacho_evlist_add(l, spec, &d) != 0)
			fail_msg("'%s': %s", spec, d.message);
	}
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(tacho_evlist_count(l), 40);
	for (size_t i = 0; i < 40; i++) {
		assert_int_equal(tacho_evlist_attr(l, i, &a), 0);
		assert_string_equal((const char *)(uintptr_t)a.uprobe_path, prog);
		assert_int_equal(a.config, i % 2 ? 1ull << up_retbit : 0);
	}
	assert_string_equal(tacho_evlist_name(l, 0), "uprobe:./uprobe-calls:work");
	tacho_evlist_free(l);
}

/* ------------------------------------------------------------- errors */

struct invalid {
	int line;
	const char *tmpl;       /* '@' stands for the helper's path */
	int err;
	unsigned column;        /* in the template ('@' is one column) */
	const char *fragment;
};
#define X(t, err, col, frag) { __LINE__, t, err, col, frag }
#define EP (-TACHO_EPARSE)
#define EN (-TACHO_ENOEVENT)
#define ER (-TACHO_EOUTOFRANGE)

static const struct invalid invalid_cases[] = {
	X("uprobe:", EP, 8, "expected the path of an executable"),
	X("uretprobe:", EP, 11, "expected the path of an executable"),
	X("uprobe::work", EP, 8, "expected the path of an executable"),
	X("uprobe:@", EP, 9, "expected ':' and a function name"),
	X("uprobe:@:", EP, 10, "expected a function name or a file offset"),
	X("uprobe:@::u", EP, 10, "expected a function name or a file offset"),
	X("uprobe:@:wo-rk", EP, 12, "unexpected '-' in a function name"),
	X("uprobe:@:+4", EP, 10, "expected a function name before '+'"),
	X("uprobe:@:work+", EP, 15, "expected a byte offset into the function"),
	X("uprobe:@:work+zz", EP, 15, "expected a byte offset into the function"),
	X("uprobe:@:work:q", EP, 15, "unknown modifier 'q'"),
	X("uprobe:@:0xg", EP, 10, "expected a file offset"),
	X("uprobe:@:0x10000000000000000", ER, 10, "does not fit in 64 bits"),
	X("uretprobe:@:work+4", EP, 17, "a return probe fires when the function returns"),
	X("uprobe:@:nosuchfunction", EN, 10, "no function 'nosuchfunction'"),
	X("uprobe:@:wrk", EN, 10, "(did you mean 'work'?)"),
	X("uprobe:@:lief", EN, 10, "(did you mean 'leaf'?)"),
	X("uprobe:@:sink", EN, 10, "no function 'sink'"),   /* a variable, not a function */
	X("uprobe:@:work+0x100000", ER, 15, "past the end of 'work'"),
	X("uprobe:@:0x10", ER, 10, "is not in an executable segment"),
	X("uprobe:@:0x7fffffff", ER, 10, "is past the end of"),
	X("uprobe:/nonexistent/file:work", EN, 8, "cannot find '/nonexistent/file'"),
	X("uprobe:/proc/self:work", EN, 8, "is not a regular file"),
	X("uprobe:/dev/null:work", EN, 8, "is not a regular file"),
	X("uprobe:/proc/self/cmdline:0x0", EN, 8, "is not an ELF file"),
	X("cycles,uprobe:@:nosuch", EN, 17, "no function 'nosuch'"),
	X("{uprobe:@:work,uprobe:@:wrok}", EN, 25, "did you mean 'work'"),
};

static void test_invalid(void **state)
{
	unsigned bad = 0;
	(void)state;

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	for (size_t i = 0; i < ARRAY_SIZE(invalid_cases); i++) {
		const struct invalid *c = &invalid_cases[i];
		char spec[PATH_MAX + 64];
		struct tacho_evlist *l = (struct tacho_evlist *)&l;
		struct tacho_diag d = { .sz = sizeof(d) };
		unsigned col = c->column;
		const char *at = strchr(c->tmpl, '@');
		int r;

		/* each '@' before the column widens it by the path's length less one */
		for (; at && (unsigned)(at - c->tmpl) + 1 < c->column; at = strchr(at + 1, '@'))
			col += (unsigned)strlen(prog) - 1;
		expand(spec, sizeof(spec), c->tmpl, prog);
		r = tacho_evlist_parse(spec, &l, &d);
		if (r == 0) {
			tacho_evlist_free(l);
			print_error("line %d: '%s' was accepted\n", c->line, spec);
			bad++;
			continue;
		}
		if (l != NULL || r != c->err || d.column != col || !strstr(d.message, c->fragment)) {
			print_error("line %d: '%s': got %s column %u '%s'; want %s column %u "
				    "'...%s...'\n", c->line, spec, tacho_err_name(r), d.column,
				    d.message, tacho_err_name(c->err), col, c->fragment);
			bad++;
		}
	}
	if (bad)
		fail_msg("%u of %zu invalid cases wrong", bad, ARRAY_SIZE(invalid_cases));
}

/* Without the PMU (the fake sysfs tree has none) the error says so, at the event. */
static void test_no_pmu(void **state)
{
	struct tacho_event_opts o = { .sz = sizeof(o) };
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	char root[PATH_MAX];
	(void)state;

	snprintf(root, sizeof(root), "%s", th_path("tests/data/sysfs-pmu/devices"));
	o.sysfs_pmu_root = root;
	assert_int_equal(tacho_evlist_parse_opts("cycles,uprobe:/bin/true:main", &o, &l, &d),
			 -TACHO_ENOEVENT);
	assert_int_equal(d.column, 8);
	assert_contains(d.message, "no uprobe PMU in");
	assert_contains(d.message, "CONFIG_UPROBE_EVENTS");
}

/* TACHO_EVENT_NO_FILES: offsets are taken as written, nothing is opened. */
static void test_no_files(void **state)
{
	struct tacho_event_opts o = { .sz = sizeof(o), .flags = TACHO_EVENT_NO_FILES };
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct perf_event_attr a;
	(void)state;

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	assert_int_equal(tacho_evlist_parse_opts("uprobe:/nonexistent:0x1234", &o, &l, &d), 0);
	assert_int_equal(tacho_evlist_attr(l, 0, &a), 0);
	assert_int_equal(a.probe_offset, 0x1234);
	assert_string_equal((const char *)(uintptr_t)a.uprobe_path, "/nonexistent");
	tacho_evlist_free(l);
	assert_int_equal(tacho_evlist_parse_opts("uprobe:rel:0x10", &o, &l, &d), -TACHO_EPARSE);
	assert_int_equal(d.column, 8);
	assert_int_equal(tacho_evlist_parse_opts("uprobe:/bin/true:main", &o, &l, &d),
			 -TACHO_EPARSE);
	assert_int_equal(d.column, 18);
	assert_contains(d.message, "give the file offset");
}

/* ------------------------------------------------------------- live */

/* Counts the helper's calls through the engine: child, parsed list, exact counts. */
static void count_helper(const char *spec, const char *n, uint64_t *out, size_t nout)
{
	char *argv[] = { prog, (char *)n, NULL };
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_child *ch;
	struct tacho_counters *c;
	struct tacho_count cnt[8];
	struct tacho_exit ex;
	int exec_err;

	if (tacho_evlist_parse(spec, &l, &d) != 0)
		fail_msg("'%s': %s", spec, d.message);
	assert_int_equal(tacho_evlist_count(l), nout);
	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_CHILD,
					 .pid = tacho_child_pid(ch) };
	assert_int_equal(tacho_counters_open_evlist(&o, l, NULL, &c), 0);
	/* the kernel copied the path at open: the list may go now */
	tacho_evlist_free(l);
	assert_int_equal(tacho_child_exec(ch, &exec_err), 0);
	assert_int_equal(tacho_child_wait(ch, &ex), 0);
	assert_int_equal(ex.status, 0);
	assert_int_equal(tacho_counters_read(c, cnt, nout, sizeof(*cnt)), 0);
	for (size_t i = 0; i < nout; i++) {
		if (cnt[i].status != TACHO_COUNT_COUNTED)
			fail_msg("'%s' event %zu: %s (%s)", spec, i,
				 tacho_count_status_name(cnt[i].status), cnt[i].why ? cnt[i].why : "");
		out[i] = cnt[i].raw;
	}
	tacho_counters_free(c);
	tacho_child_free(ch);
}

static void test_live_child(void **state)
{
	static const char *const ns[] = { "0", "1", "7", "1234", "100000" };
	char spec[4 * PATH_MAX];
	uint64_t v[3];
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	if (geteuid() != 0 && access("/sys/bus/event_source/devices/uprobe/type", R_OK) != 0)
		TEST_SKIP("cannot read the uprobe PMU as this user");
	snprintf(spec, sizeof(spec), "uprobe:%s:work,uretprobe:%s:work,uprobe:%s:leaf", prog,
		 prog, prog);
	for (size_t k = 0; k < ARRAY_SIZE(ns); k++) {
		uint64_t n = strtoull(ns[k], NULL, 10);
		count_helper(spec, ns[k], v, 3);
		if (v[0] != n || v[1] != n || v[2] != 2 * n)
			fail_msg("N=%s: work %llu, returns %llu, leaf %llu; want %llu, %llu, %llu",
				 ns[k], (unsigned long long)v[0], (unsigned long long)v[1],
				 (unsigned long long)v[2], (unsigned long long)n,
				 (unsigned long long)n, (unsigned long long)(2 * n));
	}
}

/* A copy of the attr outlives the list (record, regions and bench copy attrs and free
 * the list before they open): opened afterwards, it still counts exactly. */
static void test_attr_copy_outlives_list(void **state)
{
	char spec[PATH_MAX + 32];
	struct perf_event_attr attr;
	struct tacho_counter_spec s = { .name = "work", .attr = &attr, .group = TACHO_GROUP_NONE };
	char *argv[] = { prog, (char *)"4321", NULL };
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_child *ch;
	struct tacho_counters *c;
	struct tacho_count cnt;
	struct tacho_exit ex;
	int exec_err;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	snprintf(spec, sizeof(spec), "uprobe:%s:work", prog);
	if (tacho_evlist_parse(spec, &l, &d) != 0)
		fail_msg("'%s': %s", spec, d.message);
	assert_int_equal(tacho_evlist_attr(l, 0, &attr), 0);
	tacho_evlist_free(l);
	/* parsing other lists in between reuses nothing the copy points to */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(tacho_evlist_parse("uprobe:/proc/self/exe:tu_target", &l, &d), 0);
		tacho_evlist_free(l);
	}
	assert_string_equal((const char *)(uintptr_t)attr.uprobe_path, prog);
	assert_int_equal(tacho_child_start(argv, NULL, &ch), 0);
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_CHILD,
					 .pid = tacho_child_pid(ch) };
	assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), 0);
	assert_int_equal(tacho_child_exec(ch, &exec_err), 0);
	assert_int_equal(tacho_child_wait(ch, &ex), 0);
	assert_int_equal(tacho_counters_read(c, &cnt, 1, sizeof(cnt)), 0);
	assert_int_equal(cnt.status, TACHO_COUNT_COUNTED);
	assert_int_equal(cnt.raw, 4321);
	tacho_counters_free(c);
	tacho_child_free(ch);
}

/* This process: a uprobe on tu_target of /proc/self/exe counts the calls made between
 * enable and disable, exactly. */
static void test_live_self(void **state)
{
	static const long ns[] = { 0, 1, 1000 };
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);

	if (!have_pmu)
		TEST_SKIP("%s", why_no_pmu);
	if (tacho_evlist_parse("uprobe:/proc/self/exe:tu_target,uretprobe:/proc/self/exe:tu_target",
			       &l, &d) != 0)
		fail_msg("%s", d.message);
	for (size_t k = 0; k < ARRAY_SIZE(ns); k++) {
		struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
		struct tacho_counters *c;
		struct tacho_count cnt[2];
		volatile long acc = 0;

		assert_int_equal(tacho_counters_open_evlist(&o, l, NULL, &c), 0);
		assert_int_equal(tacho_counters_opened(c), 2);
		assert_int_equal(tacho_counters_enable(c), 0);
		for (long i = 0; i < ns[k]; i++)
			acc = tu_target(acc);
		assert_int_equal(tacho_counters_disable(c), 0);
		assert_int_equal(tacho_counters_read(c, cnt, 2, sizeof(*cnt)), 0);
		assert_int_equal(acc, ns[k]);
		assert_int_equal(cnt[0].status, TACHO_COUNT_COUNTED);
		assert_int_equal(cnt[0].raw, (uint64_t)ns[k]);
		assert_int_equal(cnt[1].raw, (uint64_t)ns[k]);
		tacho_counters_free(c);
	}
	tacho_evlist_free(l);
}

/* tacho list shows the syntax with a probe that opens a real uprobe here. */
static int find_uprobe_row(void *arg, const struct tacho_event_info *ev)
{
	if (strncmp(ev->name, "uprobe:", 7) != 0)
		return 0;
	assert_int_equal(ev->source, TACHO_EVENT_SRC_BREAKPOINT);
	assert_string_equal(ev->pmu, "uprobe");
	*(char **)arg = ev->probe ? strdup(ev->probe) : strdup("");
	return 1;
}

static void test_list_row(void **state)
{
	char *probe = NULL;
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_UPROBE);
	NEED_SOURCE(TACHO_SOURCE_BREAKPOINT_DATA);

	assert_int_equal(tacho_events_foreach(NULL, 1u << TACHO_EVENT_SRC_BREAKPOINT,
					      find_uprobe_row, &probe), 1);
	assert_non_null(probe);
	if (!have_pmu) {
		assert_string_equal(probe, "");
		free(probe);
		TEST_SKIP("%s", why_no_pmu);
	}
	if (tacho_evlist_parse(probe, &l, &d) != 0)
		fail_msg("probe '%s': %s", probe, d.message);
	assert_int_equal(tacho_evlist_probe(l, 0), 0);
	tacho_evlist_free(l);
	free(probe);
}

/* The paths attrs point to: one copy per distinct path, for the life of the process. */
static void test_intern(void **state)
{
	char buf[32];
	const char *a, *b;
	(void)state;

	a = tc_uprobe_intern("/usr/bin/tacho-intern-test");
	assert_non_null(a);
	snprintf(buf, sizeof(buf), "%s", a);
	b = tc_uprobe_intern(buf);
	assert_ptr_equal(a, b);
	assert_ptr_not_equal(tc_uprobe_intern("/usr/bin/tacho-intern-tes"), a);
	assert_string_equal(a, "/usr/bin/tacho-intern-test");
}

/* A program header whose file offset lies past the end of the file (found by
 * fuzz-elf): the symbol's offset is refused with a sentence, not handed to the kernel.
 * The helper program is copied with its executable segment's p_offset moved far out. */
static void test_segment_past_end(void **state)
{
	char path[PATH_MAX], why[512] = "";
	uint64_t off = 0;
	unsigned char *img;
	size_t len;
	Elf64_Ehdr eh;
	FILE *f;
	bool moved = false;
	(void)state;

	assert_int_equal(tc_read_file(prog, (char **)&img, &len, 0), 0);
	assert_true(len > sizeof(eh));
	memcpy(&eh, img, sizeof(eh));
	for (unsigned i = 0; i < eh.e_phnum && !moved; i++) {
		Elf64_Phdr ph;
		size_t at = eh.e_phoff + (size_t)i * eh.e_phentsize;
		assert_true(at + sizeof(ph) <= len);
		memcpy(&ph, img + at, sizeof(ph));
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		ph.p_offset = 1ull << 44;
		memcpy(img + at, &ph, sizeof(ph));
		moved = true;
	}
	assert_true(moved);
	snprintf(path, sizeof(path), "/tmp/tacho-test-uprobe-%d", (int)getpid());
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(img);
	assert_int_equal(tc_uprobe_symbol_offset(path, "work", 4, 0, &off, why, sizeof(why)),
			 -TACHO_EPARSE);
	assert_non_null(strstr(why, "past the end"));
	assert_int_equal(off, 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_match_elf),
		cmocka_unit_test(test_self_offset),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_relative_and_many),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_no_pmu),
		cmocka_unit_test(test_no_files),
		cmocka_unit_test(test_live_child),
		cmocka_unit_test(test_attr_copy_outlives_list),
		cmocka_unit_test(test_live_self),
		cmocka_unit_test(test_list_row),
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_segment_past_end),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
