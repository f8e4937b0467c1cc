/* test-cpuinfo.c - util's one /proc/cpuinfo reader: fields and flags of the first
 * processor's block on fixed texts (good, odd and cut), the file under a fake root, and
 * this machine's file against what a plain read gives; util's CPUID instruction and
 * hypervisor bit against the kernel's flags. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "util/util.h"

static const char amd[] = "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
			  "model name\t: AMD EPYC 9654 96-Core Processor  \n"
			  "flags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc\n"
			  "bugs\t\t: sysret_ss_attrs\n\n"
			  "processor\t: 1\nflags\t\t: fpu avx512f\nextra\t: 1\n";

static const struct {
	int line;
	const char *text;
	const char *key;
	const char *want;   /* NULL: not found */
} field_cases[] = {
	{ __LINE__, amd, "model name", "AMD EPYC 9654 96-Core Processor" },
	{ __LINE__, amd, "vendor_id", "AuthenticAMD" },
	{ __LINE__, amd, "processor", "0" },
	{ __LINE__, amd, "flags", "fpu tsc constant_tsc rep_good nonstop_tsc" },
	/* only the first processor's block counts */
	{ __LINE__, amd, "extra", NULL },
	/* a key is the whole name before the colon, not a prefix of it */
	{ __LINE__, amd, "model", NULL },
	{ __LINE__, amd, "vendor", NULL },
	{ __LINE__, "", "flags", NULL },
	{ __LINE__, "flags", "flags", NULL },
	{ __LINE__, "flags no colon", "flags", NULL },
	/* blanks of either kind around the colon; CRLF text; an empty value */
	{ __LINE__, "flags:a b", "flags", "a b" },
	{ __LINE__, "flags \t :\t a b \t\r\n", "flags", "a b" },
	{ __LINE__, "flags\t:\n", "flags", "" },
	/* a blank first line does not end a block that has not started */
	{ __LINE__, "\nflags\t: x\n", "flags", "x" },
	{ __LINE__, "processor\t: 0\n\nflags\t: x\n", "flags", NULL },
	/* the last line without its newline */
	{ __LINE__, "processor\t: 0\nmodel name\t: Xeon", "model name", "Xeon" },
};

static void test_field(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(field_cases); i++) {
		const char *t = field_cases[i].text;
		char *v = tc_cpuinfo_field(t, strlen(t), field_cases[i].key);
		const char *want = field_cases[i].want;

		if (want ? !v || strcmp(v, want) : v != NULL)
			fail_msg("case at line %d: got \"%s\", want \"%s\"", field_cases[i].line,
				 v ? v : "(none)", want ? want : "(none)");
		free(v);
	}
	assert_null(tc_cpuinfo_field(NULL, 0, "flags"));
}

/* The length bounds the search: a text cut inside a line, with no NUL after it. */
static void test_field_bounded(void **state)
{
	char buf[64];
	const char *t = "model name\t: Xeon Gold\nflags\t: fpu\n";
	size_t cut = strlen("model name\t: Xeon");
	char *v;
	(void)state;

	memset(buf, 'Z', sizeof(buf));
	memcpy(buf, t, strlen(t));
	v = tc_cpuinfo_field(buf, cut, "model name");
	assert_non_null(v);
	assert_string_equal(v, "Xeon");
	free(v);
	assert_null(tc_cpuinfo_field(buf, cut, "flags"));
	assert_false(tc_cpuinfo_has_flag(buf, cut, "fpu"));
	assert_true(tc_cpuinfo_has_flag(buf, strlen(t), "fpu"));
	/* a flag cut in the middle is not the flag */
	assert_false(tc_cpuinfo_has_flag("flags\t: fpu constant_tsc", 22, "constant_tsc"));
	assert_true(tc_cpuinfo_has_flag("flags\t: fpu constant_tsc", 22, "constant_t"));
}

static void test_has_flag(void **state)
{
	size_t n = strlen(amd);
	(void)state;

	assert_true(tc_cpuinfo_has_flag(amd, n, "constant_tsc"));
	assert_true(tc_cpuinfo_has_flag(amd, n, "nonstop_tsc"));   /* the last word */
	assert_true(tc_cpuinfo_has_flag(amd, n, "fpu"));           /* the first word */
	assert_false(tc_cpuinfo_has_flag(amd, n, "constant"));     /* whole words only */
	assert_false(tc_cpuinfo_has_flag(amd, n, "tsc_known_freq"));
	assert_false(tc_cpuinfo_has_flag(amd, n, "sysret_ss_attrs")); /* a bugs word */
	assert_false(tc_cpuinfo_has_flag(amd, n, "avx512f"));      /* CPU 1's */
	assert_false(tc_cpuinfo_has_flag(amd, n, ""));
	assert_false(tc_cpuinfo_has_flag(NULL, 0, "fpu"));
	assert_false(tc_cpuinfo_has_flag("flags no colon constant_tsc", 27, "constant_tsc"));
	/* the colon of the next line does not make a flags line of this one */
	assert_false(tc_cpuinfo_has_flag("flags x\nbugs: y", 15, "y"));
	assert_true(tc_cpuinfo_has_flag("flags\t:\tsse\tsse2\n", 17, "sse2"));

	assert_true(tc_cpuinfo_flags_has("fpu tsc constant_tsc", "tsc"));
	assert_true(tc_cpuinfo_flags_has("fpu\ttsc", "tsc"));
	assert_false(tc_cpuinfo_flags_has("fpu tsc constant_tsc", "constant"));
	assert_false(tc_cpuinfo_flags_has("fpu tsc_x", "tsc"));
	assert_false(tc_cpuinfo_flags_has("", "tsc"));
	assert_false(tc_cpuinfo_flags_has("tsc", ""));
	assert_false(tc_cpuinfo_flags_has(NULL, "tsc"));
}

static char root[128];

static void test_read_root(void **state)
{
	char path[256], *text = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	snprintf(root, sizeof(root), "/tmp/tacho-cpuinfo-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/proc", root);
	assert_int_equal(mkdir(root, 0700), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(tc_cpuinfo_read(root, &text, &len), -ENOENT);
	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(amd, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(tc_cpuinfo_read(root, &text, &len), 0);
	assert_int_equal(len, strlen(amd));
	assert_string_equal(text, amd);
	assert_true(tc_cpuinfo_has_flag(text, len, "rep_good"));
	free(text);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", root);
	rmdir(path);
	rmdir(root);
}

/* NULL, "" and "/" all name this machine, and give what reading the file gives. */
static void test_read_this_machine(void **state)
{
	const char *roots[] = { NULL, "", "/" };
	char *want = NULL;
	size_t want_len;
	(void)state;

	if (tc_read_file("/proc/cpuinfo", &want, &want_len, 0) != 0)
		TEST_SKIP("/proc/cpuinfo cannot be read here");
	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		char *text = NULL;
		size_t len = 0;
		assert_int_equal(tc_cpuinfo_read(roots[i], &text, &len), 0);
		/* the file is generated per read; its first block's identity is stable */
		char *a = tc_cpuinfo_field(text, len, "processor");
		char *b = tc_cpuinfo_field(want, want_len, "processor");
		assert_true((a == NULL) == (b == NULL));
		if (a)
			assert_string_equal(a, b);
		free(a);
		free(b);
		free(text);
	}
	free(want);
}

/* util's CPUID against the kernel's account of the same CPU: the vendor string of leaf
 * 0, and the hypervisor bit (CPUID.1:ECX[31], which Linux lists as the "hypervisor"
 * flag; the kernel never clears it). */
static void test_cpuid_against_cpuinfo(void **state)
{
	char *text = NULL, *vendor;
	size_t len;
	uint32_t r[4];
	char sig[13];
	(void)state;

#if !defined(__x86_64__) && !defined(__i386__)
	assert_false(tc_cpuid_insn(0, 0, r));
	assert_true(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 0);
	TEST_SKIP("not x86: no CPUID to compare with /proc/cpuinfo");
#endif
	if (tc_cpuinfo_read(NULL, &text, &len) != 0)
		TEST_SKIP("/proc/cpuinfo cannot be read here");
	assert_true(tc_cpuid_insn(0, 0, r));
	memcpy(sig, &r[1], 4);        /* EBX, EDX, ECX: "Genu" "ineI" "ntel" */
	memcpy(sig + 4, &r[3], 4);
	memcpy(sig + 8, &r[2], 4);
	sig[12] = '\0';
	vendor = tc_cpuinfo_field(text, len, "vendor_id");
	assert_non_null(vendor);
	assert_string_equal(sig, vendor);
	assert_int_equal(tc_hypervisor_guest(), tc_cpuinfo_has_flag(text, len, "hypervisor"));
	free(vendor);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field),
		cmocka_unit_test(test_field_bounded),
		cmocka_unit_test(test_has_flag),
		cmocka_unit_test(test_read_root),
		cmocka_unit_test(test_read_this_machine),
		cmocka_unit_test(test_cpuid_against_cpuinfo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
