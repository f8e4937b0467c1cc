/* test-events-kprobe.c - kprobe:SYMBOL[+OFF] and kretprobe:SYMBOL: the attr they make
 * over a fake kprobe PMU (tests/data/sysfs-kprobe: type 8, retprobe config:0), the name
 * checked against this machine's /proc/kallsyms (with the nearest function when it is
 * misspelt), the refusals with their columns, and no kprobe PMU explained. The live
 * count (exact, like uprobes) is in test-stat-kprobe. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tacho.h"

#define FAKE "tests/data/sysfs-kprobe/devices"

static char fake_root[4096];
static bool have_kallsyms;   /* /proc/kallsyms lists ksys_write as a function */
static char data_sym[256];   /* a symbol of the kernel's data there, or "" */

static int parse(const char *spec, const char *root, struct tacho_evlist **l,
		 struct tacho_diag *d)
{
	struct tacho_event_opts o = { .sz = sizeof(o), .sysfs_pmu_root = root };

	return tacho_evlist_parse_opts(spec, &o, l, d);
}

static void test_valid(void **state)
{
	static const struct {
		const char *spec;
		uint64_t config, offset;
	} cases[] = {
		{ "kprobe:ksys_write", 0, 0 },
		{ "kprobe:ksys_write+4", 0, 4 },
		{ "kprobe:ksys_write+0x10:k", 0, 16 },
		{ "kretprobe:ksys_write", 1, 0 },
		{ "KPROBE:ksys_write", 0, 0 },
	};
	(void)state;

	if (!have_kallsyms)
		TEST_SKIP("/proc/kallsyms does not list ksys_write as a function here");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		struct tacho_evlist *l = NULL;
		struct perf_event_attr a;
		int r = parse(cases[i].spec, fake_root, &l, &d);

		if (r)
			fail_msg("%s: %s", cases[i].spec, d.message);
		assert_int_equal(tacho_evlist_count(l), 1);
		assert_int_equal(tacho_evlist_attr(l, 0, &a), 0);
		assert_int_equal(a.type, 8);
		assert_int_equal(a.config, cases[i].config);
		assert_string_equal((const char *)(uintptr_t)a.kprobe_func, "ksys_write");
		assert_int_equal(a.probe_offset, cases[i].offset);
		assert_string_equal(tacho_evlist_pmu(l, 0), "kprobe");
		assert_string_equal(tacho_evlist_name(l, 0), cases[i].spec);
		tacho_evlist_free(l);
	}
}

static void test_invalid(void **state)
{
	static const struct {
		const char *spec;
		unsigned column;
		const char *msg;
	} cases[] = {
		{ "kprobe:", 8, "expected a kernel function's name after 'kprobe:'" },
		{ "kprobe:+4", 8, "expected a kernel function's name after 'kprobe:'" },
		{ "kprobe:ksys/write", 12, "unexpected '/' in a kernel function's name" },
		{ "kprobe:ksys_write+x", 19, "expected a byte offset into the function after '+'" },
		{ "kretprobe:ksys_write+4", 21, "a return probe fires when the function returns: "
						"it takes no '+OFF'" },
		{ "kprobe:ksys_write:u", 19, "a kprobe fires in the kernel: counting user space "
					     "only it would count nothing (drop 'u')" },
		{ "kprobe:ksys_write:q", 19, "unknown modifier 'q'" },
		{ "kprobe:ksys_wirte", 8, "no kernel function 'ksys_wirte' in /proc/kallsyms "
					  "(did you mean 'ksys_write'?)" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		struct tacho_evlist *l = NULL;

		if (!have_kallsyms && strstr(cases[i].msg, "kallsyms"))
			continue;
		if (parse(cases[i].spec, fake_root, &l, &d) == 0)
			fail_msg("%s: accepted", cases[i].spec);
		if (d.column != cases[i].column || !strstr(d.message, cases[i].msg))
			fail_msg("%s: column %u '%s', expected column %u '%s'", cases[i].spec,
				 d.column, d.message, cases[i].column, cases[i].msg);
	}
	/* a symbol of data is no place for a kprobe */
	if (*data_sym) {
		struct tacho_diag d = { .sz = sizeof(d) };
		struct tacho_evlist *l = NULL;
		char spec[300], msg[400];

		snprintf(spec, sizeof(spec), "kprobe:%s", data_sym);
		snprintf(msg, sizeof(msg), "'%s' in /proc/kallsyms is no function (kprobes go on "
			 "code)", data_sym);
		assert_int_not_equal(parse(spec, fake_root, &l, &d), 0);
		assert_string_equal(d.message, msg);
	}
}

static void test_no_pmu(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_evlist *l = NULL;
	(void)state;

	/* the uprobe tree has no kprobe PMU */
	assert_int_not_equal(parse("kprobe:ksys_write", "tests/data/sysfs-pmu/devices", &l, &d), 0);
	assert_int_equal(d.column, 1);
	assert_non_null(strstr(d.message, "no kprobe PMU in tests/data/sysfs-pmu/devices: this "
					   "kernel cannot count kprobes"));
}

static int setup(void **state)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	(void)state;

	snprintf(fake_root, sizeof(fake_root), "%s", th_path(FAKE));
	while (f && fgets(line, sizeof(line), f)) {
		char *d = strstr(line, " D ");

		if (strstr(line, " T ksys_write\n") || strstr(line, " t ksys_write\n"))
			have_kallsyms = true;
		/* the first of the kernel's own data (no [module]) */
		if (!*data_sym && d && !strchr(line, '[') && strlen(d + 3) < sizeof(data_sym)) {
			snprintf(data_sym, sizeof(data_sym), "%s", d + 3);
			data_sym[strcspn(data_sym, "\n")] = '\0';
		}
	}
	if (f)
		fclose(f);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_no_pmu),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
