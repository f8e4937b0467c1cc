/* test-abi-shared.c - the shared library as a program outside the project meets it: linked
 * against build/libtacho.so (the Makefile's test-abi rule), seeing only include/tacho.h.
 * Errors, the run-time version check, event lists, a CPUID dump, exact page-fault counts
 * through counters and regions; and the headers' TACHO_API functions, the names of the
 * version script lib/tacho.map and the exported dynamic symbols are the same three sets. */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "pages.h"

/* The functions really come from libtacho.so, not from objects linked in. */
static void test_linked_shared(void **state)
{
	Dl_info info;
	(void)state;

	assert_true(dladdr((void *)tacho_version, &info) != 0);
	assert_non_null(info.dli_fname);
	assert_contains(info.dli_fname, "libtacho.so");
}

static void test_version_errors(void **state)
{
	char want[32];
	(void)state;

	snprintf(want, sizeof(want), "%d.%d.%d", TACHO_VERSION_MAJOR, TACHO_VERSION_MINOR,
		 TACHO_VERSION_PATCH);
	assert_string_equal(tacho_version(), want);
	assert_string_equal(tacho_err_name(-TACHO_EPARSE), "TACHO_EPARSE");
	assert_string_equal(tacho_strerror(-TACHO_EPARSE), "malformed input");
	assert_string_equal(tacho_err_name(-ENOENT), "ENOENT");
	assert_string_equal(tacho_strerror(-ENOENT), strerror(ENOENT));
	assert_null(tacho_err_name(-99999));
}

/* The run-time version check: this program's header and the library it runs with
 * agree; a program built against a newer header (faked here by compiling a call with
 * a greater minor version, or another major one) is told, with both versions. */
enum { BUILT_MAJOR = TACHO_VERSION_MAJOR, BUILT_MINOR = TACHO_VERSION_MINOR };

static int check_as_built_with(int major, int minor, struct tacho_diag *d)
{
	int r;

#pragma push_macro("TACHO_VERSION_MAJOR")
#pragma push_macro("TACHO_VERSION_MINOR")
#undef TACHO_VERSION_MAJOR
#undef TACHO_VERSION_MINOR
#define TACHO_VERSION_MAJOR major
#define TACHO_VERSION_MINOR minor
	r = TACHO_CHECK_VERSION(d);
#pragma pop_macro("TACHO_VERSION_MINOR")
#pragma pop_macro("TACHO_VERSION_MAJOR")
	return r;
}

static void test_version_check(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	char want[128];
	(void)state;

	assert_int_equal(tacho_version_number(), TACHO_VERSION_NUMBER);
	assert_int_equal(TACHO_VERSION_NUMBER, TACHO_VERSION_MAJOR * 1000000 +
			 TACHO_VERSION_MINOR * 1000 + TACHO_VERSION_PATCH);
	assert_int_equal(TACHO_CHECK_VERSION(&d), 0);
	assert_int_equal(TACHO_CHECK_VERSION(NULL), 0);
	assert_int_equal(d.message[0], '\0');       /* nothing said on success */

	/* a newer minor header: the library lacks what it declares */
	assert_int_equal(check_as_built_with(BUILT_MAJOR, BUILT_MINOR + 1, &d), -TACHO_EVERSION);
	assert_string_equal(d.source, "libtacho");
	snprintf(want, sizeof(want), "built for libtacho %d.%d and runs with the older %s",
		 BUILT_MAJOR, BUILT_MINOR + 1, tacho_version());
	assert_contains(d.message, want);
	assert_string_equal(tacho_err_name(-TACHO_EVERSION), "TACHO_EVERSION");

	/* another major version, older or newer */
	d = (struct tacho_diag){ .sz = sizeof(d) };
	assert_int_equal(check_as_built_with(BUILT_MAJOR + 1, 0, &d), -TACHO_EVERSION);
	assert_contains(d.message, "another major version");
	if (BUILT_MAJOR > 0)
		assert_int_equal(check_as_built_with(BUILT_MAJOR - 1, 0, NULL), -TACHO_EVERSION);

	/* an older minor header is served: a minor version only adds */
	if (BUILT_MINOR > 0)
		assert_int_equal(check_as_built_with(BUILT_MAJOR, BUILT_MINOR - 1, NULL), 0);
	assert_int_equal(check_as_built_with(-1, 0, NULL), -EINVAL);
}

static void test_evlist(void **state)
{
	struct tacho_evlist *l = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	assert_int_equal(tacho_evlist_parse("page-faults,task-clock", &l, &d), 0);
	assert_int_equal(tacho_evlist_count(l), 2);
	assert_string_equal(tacho_evlist_name(l, 0), "page-faults");
	assert_string_equal(tacho_evlist_name(l, 1), "task-clock");
	assert_string_equal(tacho_evlist_unit(l, 1), "msec");
	tacho_evlist_free(l);

	/* bad input: an error code, a column and a message, no list */
	l = NULL;
	d = (struct tacho_diag){ .sz = sizeof(d) };
	assert_int_equal(tacho_evlist_parse("page-faults,,", &l, &d), -TACHO_EPARSE);
	assert_null(l);
	assert_int_equal(d.column, 13);
	assert_true(d.message[0] != '\0');
}

static void test_cpuid_dump(void **state)
{
	struct tacho_cpuid_dump *dump = NULL;
	struct tacho_cpu_info ci = { .sz = sizeof(ci) };
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	/* `cpuid -r` of this project's KVM guest: AMD EPYC, family 0x19 model 0x11 */
	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid/kvm-epyc-2cpu.cpuid-r"),
					       &dump, &d), 0);
	assert_int_equal(tacho_cpuid_dump_ncpus(dump), 2);
	assert_int_equal(tacho_cpu_decode(dump, &ci), 0);
	assert_int_equal(ci.vendor, TACHO_VENDOR_AMD);
	assert_string_equal(ci.brand, "AMD EPYC");
	assert_int_equal(ci.family, 0x19);
	assert_int_equal(ci.model, 0x11);
	assert_int_equal(ci.ncpus, 2);
	assert_int_equal(ci.hypervisor, TACHO_HV_KVM);
	tacho_cpu_info_exit(&ci);
	tacho_cpuid_dump_free(dump);

	/* a missing file: -ENOENT and the file named */
	d = (struct tacho_diag){ .sz = sizeof(d) };
	dump = NULL;
	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid/no-such-dump"), &dump, &d),
			 -ENOENT);
	assert_null(dump);
}

/* Opens page-faults on this thread, counts exactly N fresh pages. */
static void test_counters_page_faults(void **state)
{
	enum { N = 37 };
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
	struct tacho_evlist *l = NULL;
	struct tacho_counters *c = NULL;
	struct tacho_count cnt;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	assert_int_equal(tacho_evlist_parse("page-faults", &l, NULL), 0);
	assert_int_equal(tacho_counters_open_evlist(&o, l, NULL, &c), 0);
	assert_int_equal(tacho_counters_read(c, &cnt, 1, sizeof(cnt)), 0);
	if (cnt.status == TACHO_COUNT_NOT_SUPPORTED)
		TEST_SKIP("page-faults: %s", cnt.why ? cnt.why : tacho_strerror(cnt.err));
	/* one round first, so that lazy binding and first touches are behind us */
	for (int round = 0; round < 2; round++) {
		assert_int_equal(tacho_counters_reset(c), 0);
		assert_int_equal(tacho_counters_enable(c), 0);
		assert_int_equal(th_fault_pages(N), 0);
		assert_int_equal(tacho_counters_disable(c), 0);
		assert_int_equal(tacho_counters_read(c, &cnt, 1, sizeof(cnt)), 0);
	}
	assert_int_equal(cnt.status, TACHO_COUNT_COUNTED);
	assert_int_equal(cnt.raw, N);
	tacho_counters_free(c);
	tacho_evlist_free(l);
}

/* A region around N faults on fresh pages reads exactly N. */
static void test_region_page_faults(void **state)
{
	enum { N = 23 };
	struct tacho_regions_opts o = { .sz = sizeof(o), .events = "page-faults",
					.no_report_at_exit = true };
	struct tacho_regions_report *r = NULL;
	const struct tacho_region_stat *st;
	const char *why = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	assert_int_equal(tacho_regions_init(&o, &d), 0);
	/* the first region of the thread opens its counters */
	assert_int_equal(tacho_region_begin("warm"), 0);
	assert_int_equal(th_fault_pages(1), 0);
	assert_int_equal(tacho_region_end("warm"), 0);
	tacho_regions_reset();

	assert_int_equal(tacho_region_begin("abi"), 0);
	assert_int_equal(th_fault_pages(N), 0);
	assert_int_equal(tacho_region_end("abi"), 0);
	assert_int_equal(tacho_regions_report_new(&r), 0);
	assert_int_equal(tacho_regions_report_nevents(r), 1);
	if (tacho_regions_report_status(r, 0, &why) != TACHO_COUNT_COUNTED) {
		char reason[512];

		snprintf(reason, sizeof(reason), "%s", why ? why : "not counted");
		tacho_regions_report_free(r);
		TEST_SKIP("page-faults in regions: %s", reason);
	}
	st = tacho_regions_report_find(r, "abi");
	assert_non_null(st);
	assert_int_equal(st->calls, 1);
	assert_int_equal(st->events[0]->total, N);
	tacho_regions_report_free(r);
}

/* --- the exported symbols --- */

struct names {
	char **v;
	size_t n, cap;
};

static void names_add(struct names *s, const char *p, size_t len)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		assert_non_null(s->v);
	}
	s->v[s->n] = strndup(p, len);
	assert_non_null(s->v[s->n]);
	s->n++;
}

static bool names_has(const struct names *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return true;
	return false;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static char *slurp(const char *path, size_t *len)
{
	char *buf;
	int err = th_read_data(path, &buf, len);

	if (err)
		fail_msg("cannot read '%s': %s", path, strerror(-err));
	assert_true(*len > 0);
	return buf;
}

static bool is_ident(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Every function the public headers declare TACHO_API at the start of a line: every
 * area under include/tacho/ (tacho.h includes them all; an area added later is read
 * too), the name being the identifier right before the first '(' after the macro. */
static void header_functions(struct names *out)
{
	char dirpath[4096];
	struct dirent **ents;
	int n;

	snprintf(dirpath, sizeof(dirpath), "%s", th_path("include/tacho"));
	n = scandir(dirpath, &ents, NULL, alphasort);
	if (n < 0)
		fail_msg("cannot list '%s': %s", dirpath, strerror(errno));
	for (int e = 0; e < n; e++) {
		char path[8192];
		size_t len, nlen = strlen(ents[e]->d_name);
		char *h;

		if (nlen < 3 || strcmp(ents[e]->d_name + nlen - 2, ".h")) {
			free(ents[e]);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dirpath, ents[e]->d_name);
		free(ents[e]);
		h = slurp(path, &len);
		for (char *p = strstr(h, "\nTACHO_API "); p; p = strstr(p + 1, "\nTACHO_API ")) {
			char *paren = strchr(p, '('), *end = paren, *start;

			assert_non_null(paren);
			while (end > p && (end[-1] == ' ' || end[-1] == '\n'))
				end--;
			start = end;
			while (start > p && is_ident(start[-1]))
				start--;
			assert_true(end > start);
			names_add(out, start, (size_t)(end - start));
		}
		free(h);
	}
	free(ents);
}

/* The names the version script lib/tacho.map exports: the global: entries of every
 * version node, which must be names, not patterns (the script lists what it exports);
 * nodes gets each node's name. */
static void map_names(struct names *out, struct names *nodes)
{
	size_t len;
	char *m = slurp(th_path("lib/tacho.map"), &len);
	enum { NODE, OPEN, BODY, GLOBAL, LOCAL, AFTER } st = NODE;
	char *p = m;

	/* comments out, as ld's script lexer takes them */
	for (char *c = strstr(p, "/*"); c; c = strstr(c, "/*")) {
		char *e = strstr(c + 2, "*/");
		assert_non_null(e);
		memset(c, ' ', (size_t)(e + 2 - c));
	}
	while (*p) {
		char tok[256];
		size_t n = 0;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		if (strchr("{}:;", *p)) {
			tok[n++] = *p++;
		} else {
			while (*p && !strchr(" \t\n{}:;", *p) && n < sizeof(tok) - 1)
				tok[n++] = *p++;
		}
		tok[n] = '\0';
		switch (st) {
		case NODE:                      /* NAME { */
			names_add(nodes, tok, n);
			st = OPEN;
			break;
		case OPEN:
			assert_string_equal(tok, "{");
			st = BODY;
			break;
		case BODY:                      /* global: / local: / } */
			if (!strcmp(tok, "global"))
				st = GLOBAL;
			else if (!strcmp(tok, "local"))
				st = LOCAL;
			else if (!strcmp(tok, "}"))
				st = AFTER;
			else if (strcmp(tok, ":"))
				fail_msg("lib/tacho.map: unexpected '%s' in a node", tok);
			break;
		case GLOBAL:                    /* NAME; ... until local: or } */
			if (!strcmp(tok, "local")) {
				st = LOCAL;
			} else if (!strcmp(tok, "}")) {
				st = AFTER;
			} else if (strcmp(tok, ":") && strcmp(tok, ";")) {
				if (strpbrk(tok, "*?["))
					fail_msg("lib/tacho.map exports a pattern, not a name: %s", tok);
				names_add(out, tok, n);
			}
			break;
		case LOCAL:
			if (!strcmp(tok, "}"))
				st = AFTER;
			break;
		case AFTER:                     /* [PARENT] ; */
			if (!strcmp(tok, ";"))
				st = NODE;
			break;
		}
	}
	assert_int_equal(st, NODE);
	free(m);
}

/* The defined symbols of the .dynsym of an ELF64 shared object, read from the file
 * (no binutils needed). Version-node symbols (absolute "TACHO_0") are skipped. */
static void dynamic_symbols(const char *path, struct names *funcs, struct names *other)
{
	size_t len;
	char *img = slurp(path, &len);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh;
	bool found = false;

	assert_true(len >= sizeof(*eh) && !memcmp(eh->e_ident, ELFMAG, SELFMAG));
	assert_int_equal(eh->e_ident[EI_CLASS], ELFCLASS64);
	assert_true(eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) <= len);
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *strs;
		const Elf64_Sym *sym;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		found = true;
		assert_true(sh[i].sh_link < eh->e_shnum);
		strs = &sh[sh[i].sh_link];
		assert_true(sh[i].sh_offset + sh[i].sh_size <= len);
		assert_true(strs->sh_offset + strs->sh_size <= len);
		sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++) {
			const char *name;
			unsigned bind = ELF64_ST_BIND(sym[k].st_info);

			if (sym[k].st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK))
				continue;
			assert_true(sym[k].st_name < strs->sh_size);
			name = img + strs->sh_offset + sym[k].st_name;
			if (sym[k].st_shndx == SHN_ABS && !strncmp(name, "TACHO_", 6))
				continue;
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC)
				names_add(funcs, name, strlen(name));
			else
				names_add(other, name, strlen(name));
		}
	}
	assert_true(found);
	free(img);
}

/* Says which of the three sets a name is missing from; returns how many it is missing
 * from. */
static unsigned missing_from(const char *name, const struct names *decl, const struct names *map,
			     const struct names *exp, const char *so)
{
	unsigned bad = 0;

	if (!names_has(decl, name)) {
		print_error("%s: not declared TACHO_API in include/tacho/*.h\n", name);
		bad++;
	}
	if (!names_has(map, name)) {
		print_error("%s: not named in lib/tacho.map\n", name);
		bad++;
	}
	if (!names_has(exp, name)) {
		print_error("%s: not exported by %s\n", name, so);
		bad++;
	}
	return bad;
}

/* The headers' TACHO_API functions, the names of the version script and the .so's
 * exported functions are one set: a name missing from any of the three fails, named. */
static void test_exports_are_the_header(void **state)
{
	struct names decl = { 0 }, map = { 0 }, nodes = { 0 }, exp = { 0 }, other = { 0 };
	char so[4096], node[32];
	unsigned bad = 0;
	(void)state;

	snprintf(so, sizeof(so), "%s/libtacho.so", th_build_dir());
	header_functions(&decl);
	map_names(&map, &nodes);
	dynamic_symbols(so, &exp, &other);
	/* the parses themselves are checked: well over a hundred functions, the first
	 * version's node (TACHO_MAJOR.MINOR of the first release) */
	assert_true(decl.n > 100);
	assert_true(names_has(&decl, "tacho_version"));
	assert_true(names_has(&decl, "tacho_regions_report_status"));
	assert_true(names_has(&map, "tacho_version_check"));
	snprintf(node, sizeof(node), "TACHO_%d.%d", 0, 1);
	assert_true(names_has(&nodes, node));

	for (size_t i = 0; i < other.n; i++, bad++)
		print_error("exported but not a function: %s\n", other.v[i]);
	for (size_t i = 0; i < decl.n; i++)
		bad += missing_from(decl.v[i], &decl, &map, &exp, so);
	for (size_t i = 0; i < map.n; i++)
		if (!names_has(&decl, map.v[i]))
			bad += missing_from(map.v[i], &decl, &map, &exp, so);
	for (size_t i = 0; i < exp.n; i++)
		if (!names_has(&decl, exp.v[i]) && !names_has(&map, exp.v[i]))
			bad += missing_from(exp.v[i], &decl, &map, &exp, so);
	/* and no name twice: a duplicate in the map or the headers hides a mistake */
	for (size_t i = 0; i < map.n; i++)
		for (size_t k = i + 1; k < map.n; k++)
			if (!strcmp(map.v[i], map.v[k])) {
				print_error("%s: named twice in lib/tacho.map\n", map.v[i]);
				bad++;
			}
	names_free(&decl);
	names_free(&map);
	names_free(&nodes);
	names_free(&exp);
	names_free(&other);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linked_shared),
		cmocka_unit_test(test_version_errors),
		cmocka_unit_test(test_version_check),
		cmocka_unit_test(test_evlist),
		cmocka_unit_test(test_cpuid_dump),
		cmocka_unit_test(test_counters_page_faults),
		cmocka_unit_test(test_region_page_faults),
		cmocka_unit_test(test_exports_are_the_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
