/* test-abi-shared.c - the shared library as a program outside the project meets it: linked
 * against build/libtacho.so (the Makefile's test-abi rule), seeing only include/tacho.h.
 * Errors, event lists, a CPUID dump, exact page-fault counts through counters and
 * regions; and the exported dynamic symbols are exactly the header's TACHO_API functions. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"

/* Faults on n fresh pages: a new anonymous mapping, no huge pages, one write each.
 * Not instrumented by ASan: its shadow checks would fault on shadow pages too. */
__attribute__((no_sanitize("address"))) static void fault_n(unsigned n)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)psz * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	assert_true(p != MAP_FAILED);
	madvise(p, (size_t)psz * n, MADV_NOHUGEPAGE);
	for (unsigned i = 0; i < n; i++)
		((volatile char *)p)[(size_t)i * psz] = 1;
	munmap(p, (size_t)psz * n);
}

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

static void test_evlist(void **state)
{
	struct tacho_evlist *l = NULL;
	struct tacho_diag d;
	(void)state;

	memset(&d, 0, sizeof(d));
	assert_int_equal(tacho_evlist_parse("page-faults,task-clock", &l, &d), 0);
	assert_int_equal(tacho_evlist_count(l), 2);
	assert_string_equal(tacho_evlist_name(l, 0), "page-faults");
	assert_string_equal(tacho_evlist_name(l, 1), "task-clock");
	assert_string_equal(tacho_evlist_unit(l, 1), "msec");
	tacho_evlist_free(l);

	/* bad input: an error code, a column and a message, no list */
	l = NULL;
	memset(&d, 0, sizeof(d));
	assert_int_equal(tacho_evlist_parse("page-faults,,", &l, &d), -TACHO_EPARSE);
	assert_null(l);
	assert_int_equal(d.column, 13);
	assert_true(d.message[0] != '\0');
}

static void test_cpuid_dump(void **state)
{
	struct tacho_cpuid_dump *dump = NULL;
	struct tacho_cpu_info ci;
	struct tacho_diag d;
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
	memset(&d, 0, sizeof(d));
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

	assert_int_equal(tacho_evlist_parse("page-faults", &l, NULL), 0);
	assert_int_equal(tacho_counters_open_evlist(&o, l, NULL, &c), 0);
	assert_int_equal(tacho_counters_read(c, &cnt, 1), 0);
	if (cnt.status == TACHO_COUNT_NOT_SUPPORTED)
		TEST_SKIP("page-faults: %s", cnt.why ? cnt.why : tacho_strerror(cnt.err));
	/* one round first, so that lazy binding and first touches are behind us */
	for (int round = 0; round < 2; round++) {
		assert_int_equal(tacho_counters_reset(c), 0);
		assert_int_equal(tacho_counters_enable(c), 0);
		fault_n(N);
		assert_int_equal(tacho_counters_disable(c), 0);
		assert_int_equal(tacho_counters_read(c, &cnt, 1), 0);
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
	struct tacho_region_report *r = NULL;
	const struct tacho_region_stat *st;
	const char *why = NULL;
	struct tacho_diag d;
	(void)state;

	memset(&d, 0, sizeof(d));
	assert_int_equal(tacho_regions_init(&o, &d), 0);
	/* the first region of the thread opens its counters */
	assert_int_equal(tacho_region_begin("warm"), 0);
	fault_n(1);
	assert_int_equal(tacho_region_end("warm"), 0);
	tacho_regions_reset();

	assert_int_equal(tacho_region_begin("abi"), 0);
	fault_n(N);
	assert_int_equal(tacho_region_end("abi"), 0);
	assert_int_equal(tacho_regions_report(&r), 0);
	assert_int_equal(tacho_region_report_nevents(r), 1);
	if (tacho_region_report_status(r, 0, &why) != TACHO_COUNT_COUNTED)
		TEST_SKIP("page-faults in regions: %s", why ? why : "not counted");
	st = tacho_region_report_find(r, "abi");
	assert_non_null(st);
	assert_int_equal(st->calls, 1);
	assert_int_equal(st->events[0].total, N);
	tacho_region_report_free(r);
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

/* Every function the public headers (the areas under include/tacho/, which tacho.h includes) declare
 * TACHO_API at the start of a line: the name is the identifier right before the first
 * '(' after the macro. */
static void header_functions(struct names *out)
{
	static const char *const areas[] = {
		"errors", "cpu", "events", "run", "counters", "machine", "stat", "tsc",
		"regions", "bench", "sample", "cache",
	};

	for (size_t a = 0; a < sizeof(areas) / sizeof(areas[0]); a++) {
		char rel[64];
		size_t len;
		char *h;

		snprintf(rel, sizeof(rel), "include/tacho/%s.h", areas[a]);
		h = slurp(th_path(rel), &len);
		for (char *p = strstr(h, "\nTACHO_API "); p; p = strstr(p + 1, "\nTACHO_API ")) {
			char *paren = strchr(p, '('), *end = paren, *start;

			assert_non_null(paren);
			while (end > p && end[-1] == ' ')
				end--;
			start = end;
			while (start > p && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
					     (start[-1] >= 'A' && start[-1] <= 'Z') ||
					     (start[-1] >= '0' && start[-1] <= '9')))
				start--;
			assert_true(end > start);
			names_add(out, start, (size_t)(end - start));
		}
		free(h);
	}
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

static void test_exports_are_the_header(void **state)
{
	struct names decl = { 0 }, exp = { 0 }, other = { 0 };
	char so[4096];
	unsigned bad = 0;
	(void)state;

	snprintf(so, sizeof(so), "%s/libtacho.so", th_build_dir());
	header_functions(&decl);
	dynamic_symbols(so, &exp, &other);
	/* the parse itself is checked: the header has well over a hundred functions */
	assert_true(decl.n > 100);
	assert_true(names_has(&decl, "tacho_version"));
	assert_true(names_has(&decl, "tacho_region_report_status"));

	for (size_t i = 0; i < other.n; i++, bad++)
		print_error("exported but not a function: %s\n", other.v[i]);
	for (size_t i = 0; i < exp.n; i++)
		if (!names_has(&decl, exp.v[i])) {
			print_error("exported but not declared TACHO_API in tacho.h: %s\n", exp.v[i]);
			bad++;
		}
	for (size_t i = 0; i < decl.n; i++)
		if (!names_has(&exp, decl.v[i])) {
			print_error("declared TACHO_API in tacho.h but not exported by %s: %s\n", so,
				    decl.v[i]);
			bad++;
		}
	names_free(&decl);
	names_free(&exp);
	names_free(&other);
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linked_shared),
		cmocka_unit_test(test_version_errors),
		cmocka_unit_test(test_evlist),
		cmocka_unit_test(test_cpuid_dump),
		cmocka_unit_test(test_counters_page_faults),
		cmocka_unit_test(test_region_page_faults),
		cmocka_unit_test(test_exports_are_the_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
