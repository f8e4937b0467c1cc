/* test-cpuid-dump.c - CPUID dumps: every format tacho reads (checked against values read
 * off the files), write_raw round trips, maximum leaves, malformed and truncated input,
 * the whole libcpuid corpus, and the live reading of this machine. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "cpu/cpuid.h"
#include "util/util.h"

#define CORPUS "shared/data/libcpuid"

/* Loads a corpus file as a user would have it: the part before the first line of
 * 80 dashes (the expected results libcpuid's tests append). */
static int load_cut(const char *path, struct tacho_cpuid_dump **d, struct tacho_diag *diag)
{
	char *buf;
	size_t len;
	int err;

	err = th_read_data(path, &buf, &len);
	if (err)
		return err;
	len = th_corpus_dump_len(buf, len);
	err = tacho_cpuid_dump_parse(buf, len, path, d, diag);
	free(buf);
	return err;
}

static struct tacho_cpuid_dump *corpus_file(const char *rel)
{
	char full[512];
	struct tacho_cpuid_dump *d = NULL;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	snprintf(full, sizeof(full), "%s/%s", CORPUS, rel);
	err = load_cut(th_path(full), &d, &diag);
	if (err)
		fail_msg("%s: %s: %s:%u: %s", rel, tacho_err_name(err), diag.source, diag.line,
			 diag.message);
	return d;
}

static bool corpus_present(void)
{
	struct stat st;
	return stat(th_path(CORPUS), &st) == 0 && S_ISDIR(st.st_mode);
}

/* Asserts the registers of (cpu, leaf, subleaf) as stored, ignoring maximum leaves. */
static void check_raw(const struct tacho_cpuid_dump *d, unsigned cpu, uint32_t leaf,
		      uint32_t sub, uint32_t a, uint32_t b, uint32_t c, uint32_t e, int line)
{
	const struct tacho_cpuid_regs *r = tc_cpuid_raw(d, cpu, leaf, sub);

	if (!r)
		fail_msg("line %d: cpu %u leaf %#x.%u missing", line, cpu, leaf, sub);
	if (r->eax != a || r->ebx != b || r->ecx != c || r->edx != e)
		fail_msg("line %d: cpu %u leaf %#x.%u: got %08x %08x %08x %08x, want %08x %08x %08x "
			 "%08x", line, cpu, leaf, sub, r->eax, r->ebx, r->ecx, r->edx, a, b, c, e);
}
#define CHECK(d, cpu, leaf, sub, a, b, c, e) check_raw(d, cpu, leaf, sub, a, b, c, e, __LINE__)

/* --- each format, values read off the files --- */

static void test_libcpuid_single(void **state)
{
	struct tacho_cpuid_dump *d;
	struct tacho_cpuid_regs r;
	(void)state;

	if (!corpus_present())
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	d = corpus_file("amd/zen2/amd-ryzen-7-5700u-with-radeon-graphics.test");
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 1);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 0), -1);
	CHECK(d, 0, 0, 0, 0x00000010, 0x68747541, 0x444d4163, 0x69746e65);   /* basic_cpuid[0] */
	CHECK(d, 0, 0xd, 0, 0x00000207, 0x00000340, 0x00000380, 0x00000000); /* basic_cpuid[13] */
	CHECK(d, 0, 0x80000002, 0, 0x20444d41, 0x657a7952, 0x2037206e, 0x30303735); /* ext[2] */
	CHECK(d, 0, 0xb, 1, 0x00000007, 0x00000010, 0x00000201, 0x0000000f); /* intel_fn11[1] */
	CHECK(d, 0, 0x8000001d, 3, 0x0001c163, 0x03c0003f, 0x00000fff, 0x00000001);
	CHECK(d, 0, 4, 7, 0, 0, 0, 0);                                        /* intel_fn4[7] */
	/* libcpuid writes basic_cpuid[] up to 31 whatever the maximum (0x10 here): the dump
	 * keeps them, the query refuses them. */
	CHECK(d, 0, 0x11, 0, 0, 0, 0, 0);
	assert_int_equal(tacho_cpuid_query(d, 0, 0x11, 0, &r), -TACHO_ENOVALUE);
	assert_int_equal(tacho_cpuid_query(d, 0, 0x10, 0, &r), 0);
	assert_int_equal(r.ebx, 0x00000002);
	/* ext_cpuid[0] says 0x8000_0020: 0x8000_001F is in, 0x8000_0021 is not stored */
	assert_int_equal(tacho_cpuid_query(d, 0, 0x8000001f, 0, &r), 0);
	assert_int_equal(tacho_cpuid_query(d, 0, 0x80000021, 0, &r), -TACHO_ENOVALUE);
	tacho_cpuid_dump_free(d);
}

/* Every array of libcpuid's format maps to its leaf, whatever the order of the lines;
 * the leaf-specific array wins over basic_cpuid[] for the same leaf and subleaf. */
static void test_libcpuid_keys(void **state)
{
	static const char text[] =
		"version=0.8.1\n"
		"intel_fn4[0]=1c004121 01c0003f 0000003f 00000000\n"
		"basic_cpuid[0]=00000014 756e6547 6c65746e 49656e69\n"
		"basic_cpuid[4]=11111111 11111111 11111111 11111111\n"
		"basic_cpuid[11]=22222222 22222222 22222222 22222222\n"
		"intel_fn11[0]=00000001 00000002 00000100 00000000\n"
		"intel_fn11[1]=00000004 00000008 00000201 00000000\n"
		"intel_fn12h[2]=40000001 00000000 00c00001 00000000\n"
		"intel_fn14h[1]=02490002 003f3fff 00000000 00000000\n"
		"ext_cpuid[0]=8000001d 00000000 00000000 00000000\n"
		"amd_fn8000001dh[1]=00004122 01c0003f 0000003f 00000000\n"
		"future_fn99h[0]=00000001 00000002 00000003 00000004\n";
	struct tacho_cpuid_dump *d;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	(void)state;

	assert_int_equal(tacho_cpuid_dump_parse(text, strlen(text), "keys", &d, &diag), 0);
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 1);
	CHECK(d, 0, 4, 0, 0x1c004121, 0x01c0003f, 0x0000003f, 0);
	CHECK(d, 0, 0xb, 0, 0x00000001, 0x00000002, 0x00000100, 0);
	CHECK(d, 0, 0xb, 1, 0x00000004, 0x00000008, 0x00000201, 0);
	CHECK(d, 0, 0x12, 2, 0x40000001, 0, 0x00c00001, 0);
	CHECK(d, 0, 0x14, 1, 0x02490002, 0x003f3fff, 0, 0);
	CHECK(d, 0, 0x80000000, 0, 0x8000001d, 0, 0, 0);
	CHECK(d, 0, 0x8000001d, 1, 0x00004122, 0x01c0003f, 0x0000003f, 0);
	assert_int_equal(d->cpus[0].n, 8); /* the unknown array is skipped */
	tacho_cpuid_dump_free(d);
}

static void test_libcpuid_multi(void **state)
{
	struct tacho_cpuid_dump *d;
	(void)state;

	if (!corpus_present())
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	d = corpus_file("amd/zen2/amd-ryzen-5-3600x-6-core-processor.test");
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 12);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 5), 5);
	CHECK(d, 0, 1, 0, 0x00870f10, 0x000c0800, 0x7ef8320b, 0x178bfbff);
	CHECK(d, 5, 1, 0, 0x00870f10, 0x0c0c0800, 0x7ef8320b, 0x178bfbff);
	tacho_cpuid_dump_free(d);
}

static void test_aida64(void **state)
{
	struct tacho_cpuid_dump *d;
	(void)state;

	if (!corpus_present())
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	/* "------[ Logical CPU #n ]------" */
	d = corpus_file("amd/zen2/amd-ryzen-7-3700x-8-core-processor.test");
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 16);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 15), 15);
	CHECK(d, 15, 1, 0, 0x00870F10, 0x0F100800, 0x7ED8320B, 0x178BFBFF);
	CHECK(d, 0, 0x8000001d, 2, 0x00004143, 0x01C0003F, 0x000003FF, 0x00000002);
	CHECK(d, 0, 0x8000001d, 3, 0x0001C163, 0x03C0003F, 0x00003FFF, 0x00000001);
	tacho_cpuid_dump_free(d);

	/* "------[ CPUID Registers / Logical CPU #n ]------", "[SL 09] [PKRU]" */
	d = corpus_file("amd/zen2/amd-custom-apu-0932.test");
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 0), 0);
	CHECK(d, 0, 1, 0, 0x00890F10, 0x00080800, 0x7ED8320B, 0x178BFBFF);
	CHECK(d, 0, 0xd, 1, 0x0000000F, 0x00000340, 0x00000000, 0x00000000);
	CHECK(d, 0, 0xd, 9, 0x00000040, 0x00000340, 0x00000000, 0x00000000);
	assert_null(tc_cpuid_raw(d, 0, 0xd, 3));
	tacho_cpuid_dump_free(d);

	/* an AIDA64 report with its summary first: "CPUID Revision    : 000B0671h" is text */
	d = corpus_file("intel/x86-64/raptor-cove/13th-gen-intel-core-i9-13900k.test.xz");
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 32);
	CHECK(d, 0, 0, 0, 0x00000020, 0x756E6547, 0x6C65746E, 0x49656E69);
	CHECK(d, 0, 0x1a, 0, 0x40000001, 0, 0, 0);
	tacho_cpuid_dump_free(d);
}

static void test_instlatx64(void **state)
{
	struct tacho_cpuid_dump *d;
	(void)state;

	if (!corpus_present())
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	d = corpus_file("amd/zen2/amd-ryzen-7-3800xt-8-core-processor.test");
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 16);
	CHECK(d, 0, 0, 0, 0x00000010, 0x68747541, 0x444D4163, 0x69746E65);
	CHECK(d, 0, 0xd, 2, 0x00000100, 0x00000240, 0x00000000, 0x00000000);
	CHECK(d, 0, 0x80000006, 0, 0x48006400, 0x68006400, 0x02006140, 0x01009140);
	tacho_cpuid_dump_free(d);

	/* "CPU#000" twice: the OS number is the affinity mask's bit, not the counter */
	d = corpus_file("intel/x86-64/sandy-bridge/intel-celeron-cpu-g1610.test");
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 2);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 0), 0);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 1), 1);
	CHECK(d, 1, 1, 0, 0x000306A9, 0x02100800, 0x0D9AE3BF, 0xBFEBFBFF);
	tacho_cpuid_dump_free(d);

	/* 112 CPUs in two Windows processor groups: "AffMask: 0xGROUP1:GROUP0"; the bit is
	 * relative to its group, so the counter numbers the CPU */
	d = corpus_file("intel/x86-64/sunny-cove/intel-xeon-gold-6330-cpu.test.xz");
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 112);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 56), 56);
	CHECK(d, 56, 1, 0, 0x000606A6, 0x80800800, 0x7FFEFBFF, 0xBFEBFBFF);
	tacho_cpuid_dump_free(d);
}

static void test_old_aida(void **state)
{
	struct tacho_cpuid_dump *d;
	(void)state;

	if (!corpus_present())
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	/* "CPUID Registers (CPU #1):", tab-separated, leaf 4 repeated once per cache */
	d = corpus_file("intel/x86-64/nehalem/intel-core-i7-cpu-q-720.test");
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 8);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 0), 0); /* AIDA counts from 1 */
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 1), 1); /* "CPU #2 Virtual" */
	CHECK(d, 0, 0, 0, 0x0000000B, 0x756E6547, 0x6C65746E, 0x49656E69);
	CHECK(d, 0, 4, 0, 0x1C004121, 0x01C0003F, 0x0000003F, 0x00000000);
	CHECK(d, 0, 4, 3, 0x1C03C163, 0x02C0003F, 0x00001FFF, 0x00000002);
	CHECK(d, 0, 0xb, 1, 0x00000004, 0x00000008, 0x00000201, 0x00000000);
	CHECK(d, 1, 1, 0, 0x000106E5, 0x01100800, 0x0098E3FD, 0xBFEBFBFF);
	tacho_cpuid_dump_free(d);

	/* the same with a colon after the leaf */
	d = corpus_file("amd/k10/amd-e2-3000m-apu-with-radeon-hd-graphics.test");
	CHECK(d, 0, 1, 0, 0x00300F10, 0x00020800, 0x00802009, 0x178BFBFF);
	tacho_cpuid_dump_free(d);
}

static void test_cpuid_r(void **state)
{
	struct tacho_cpuid_dump *d = NULL;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	(void)state;

	/* `cpuid -r` on this project's KVM guest (AMD EPYC, 2 CPUs) */
	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid/kvm-epyc-2cpu.cpuid-r"),
					       &d, &diag), 0);
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 2);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 1), 1);
	CHECK(d, 0, 0, 0, 0x0000001c, 0x68747541, 0x444d4163, 0x69746e65);
	CHECK(d, 1, 1, 0, 0x00a10f11, 0x01020800, 0xfffa3203, 0x178bfbff);
	CHECK(d, 0, 0xd, 0xc, 0x00000018, 0x00000000, 0x00000001, 0x00000000);
	CHECK(d, 0, 0x40000000, 0, 0x40000001, 0x4b4d564b, 0x564b4d56, 0x0000004d);
	tacho_cpuid_dump_free(d);

	/* `cpuid -r -1`: "CPU:" without a number */
	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid/kvm-epyc-1cpu.cpuid-r1"),
					       &d, &diag), 0);
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 1);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 0), -1);
	tacho_cpuid_dump_free(d);
}

/* tacho_cpuid_dump_select: one CPU by its OS number (its index where the dump has
 * none), every leaf of it and of no other, byte for byte as the raw text writes it. */
static void test_select(void **state)
{
	struct tacho_cpuid_dump *d = NULL, *one = NULL;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char *all = NULL, *sel = NULL;
	size_t nall = 0, nsel = 0;
	FILE *f;
	(void)state;

	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid/kvm-epyc-2cpu.cpuid-r"),
					       &d, &diag), 0);
	assert_int_equal(tacho_cpuid_dump_select(d, 1, &one), 0);
	assert_int_equal(tacho_cpuid_dump_ncpus(one), 1);
	assert_int_equal(tacho_cpuid_dump_os_cpu(one, 0), 1);
	CHECK(one, 0, 1, 0, 0x00a10f11, 0x01020800, 0xfffa3203, 0x178bfbff);
	/* its raw text is the "CPU 1:" section of the whole dump's */
	f = open_memstream(&all, &nall);
	assert_int_equal(tacho_cpuid_dump_write_raw(d, f), 0);
	fclose(f);
	f = open_memstream(&sel, &nsel);
	assert_int_equal(tacho_cpuid_dump_write_raw(one, f), 0);
	fclose(f);
	assert_non_null(strstr(all, sel));
	assert_true(nsel > 0 && nsel < nall);
	tacho_cpuid_dump_free(one);

	assert_int_equal(tacho_cpuid_dump_select(d, 2, &one), -ENOENT);
	assert_null(one);
	assert_int_equal(tacho_cpuid_dump_select(d, -1, &one), -EINVAL);
	assert_int_equal(tacho_cpuid_dump_select(NULL, 0, &one), -EINVAL);
	tacho_cpuid_dump_free(d);
	free(all);
	free(sel);

	/* no OS numbers: the index */
	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid/kvm-epyc-1cpu.cpuid-r1"),
					       &d, &diag), 0);
	assert_int_equal(tacho_cpuid_dump_select(d, 0, &one), 0);
	assert_int_equal(tacho_cpuid_dump_os_cpu(one, 0), -1);
	tacho_cpuid_dump_free(one);
	tacho_cpuid_dump_free(d);
}

/* Leaves of ranges that do not exist are refused, the probe leaves included. */
static void test_max_leaf(void **state)
{
	static const char text[] =
		"CPU 0:\n"
		"   0x00000000 0x00: eax=0x00000001 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
		"   0x00000001 0x00: eax=0x000306a9 ebx=0x00100800 ecx=0x7fbae3ff edx=0xbfebfbff\n"
		"   0x00000002 0x00: eax=0x76035a01 ebx=0x00f0b0ff ecx=0x00000000 edx=0x00ca0000\n"
		"   0x80000000 0x00: eax=0x00000001 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n"
		"   0x80000001 0x00: eax=0x00000000 ebx=0x00000000 ecx=0x00000001 edx=0x28100800\n"
		"   0xc0000000 0x00: eax=0x00000001 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n";
	struct tacho_cpuid_dump *d;
	struct tacho_cpuid_regs r;
	(void)state;

	assert_int_equal(tacho_cpuid_dump_parse(text, strlen(text), "max", &d, NULL), 0);
	assert_int_equal(tacho_cpuid_query(d, 0, 1, 0, &r), 0);
	assert_int_equal(tacho_cpuid_query(d, 0, 2, 0, &r), -TACHO_ENOVALUE);
	assert_int_equal(tacho_cpuid_query(d, 0, 0x80000000, 0, &r), -TACHO_ENOVALUE);
	assert_int_equal(tacho_cpuid_query(d, 0, 0x80000001, 0, &r), -TACHO_ENOVALUE);
	assert_int_equal(tacho_cpuid_query(d, 0, 0xc0000000, 0, &r), -TACHO_ENOVALUE);
	assert_int_equal(tacho_cpuid_query(d, 0, 0x40000000, 0, &r), -TACHO_ENOVALUE);
	assert_non_null(tc_cpuid_raw(d, 0, 2, 0));
	tacho_cpuid_dump_free(d);
}

/* --- round trips --- */

static char *write_raw(const struct tacho_cpuid_dump *d, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(tacho_cpuid_dump_write_raw(d, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void assert_same_dump(const struct tacho_cpuid_dump *a, const struct tacho_cpuid_dump *b,
			     const char *what)
{
	if (a->ncpus != b->ncpus)
		fail_msg("%s: %u CPUs, then %u", what, a->ncpus, b->ncpus);
	for (unsigned i = 0; i < a->ncpus; i++) {
		const struct tc_cpuid_cpu *x = &a->cpus[i], *y = &b->cpus[i];
		if (x->os_cpu != y->os_cpu || x->n != y->n)
			fail_msg("%s: cpu %u: os %d/%d, %zu/%zu leaves", what, i, x->os_cpu,
				 y->os_cpu, x->n, y->n);
		for (size_t k = 0; k < x->n; k++)
			if (memcmp(&x->leaves[k], &y->leaves[k], sizeof(x->leaves[k])) != 0)
				fail_msg("%s: cpu %u: leaf %#x.%#x differs", what, i,
					 x->leaves[k].leaf, x->leaves[k].subleaf);
	}
}

/* dump -> write_raw -> parse gives the same dump, and writing it again the same text */
static void round_trip(const struct tacho_cpuid_dump *d, const char *what)
{
	struct tacho_cpuid_dump *back;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	size_t len1, len2;
	char *t1 = write_raw(d, &len1), *t2;
	int err = tacho_cpuid_dump_parse(t1, len1, what, &back, &diag);

	if (err)
		fail_msg("%s: re-parse: %s at line %u: %s", what, tacho_err_name(err), diag.line,
			 diag.message);
	assert_same_dump(d, back, what);
	t2 = write_raw(back, &len2);
	assert_int_equal(len1, len2);
	assert_memory_equal(t1, t2, len1);
	free(t1);
	free(t2);
	tacho_cpuid_dump_free(back);
}

static void test_round_trip(void **state)
{
	static const char *const files[] = {
		"amd/zen2/amd-ryzen-7-5700u-with-radeon-graphics.test",
		"amd/zen2/amd-ryzen-5-3600x-6-core-processor.test",
		"amd/zen2/amd-ryzen-7-3700x-8-core-processor.test",
		"amd/zen2/amd-ryzen-7-3800xt-8-core-processor.test",
		"intel/x86-64/nehalem/intel-core-i7-cpu-q-720.test",
	};
	struct tacho_cpuid_dump *d;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char *buf, *text;
	size_t len, tlen;
	(void)state;

	/* `cpuid -r` output writes back byte for byte, numbered and unnumbered */
	static const char *const raw[] = { "tests/data/cpuid/kvm-epyc-2cpu.cpuid-r",
					   "tests/data/cpuid/kvm-epyc-1cpu.cpuid-r1" };
	for (size_t i = 0; i < ARRAY_SIZE(raw); i++) {
		assert_int_equal(tc_read_file(th_path(raw[i]), &buf, &len, 0), 0);
		assert_int_equal(tacho_cpuid_dump_parse(buf, len, raw[i], &d, &diag), 0);
		text = write_raw(d, &tlen);
		if (tlen != len || memcmp(text, buf, len) != 0)
			fail_msg("%s: write_raw does not reproduce the file", raw[i]);
		round_trip(d, raw[i]);
		free(text);
		free(buf);
		tacho_cpuid_dump_free(d);
	}
	if (!corpus_present())
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		d = corpus_file(files[i]);
		round_trip(d, files[i]);
		tacho_cpuid_dump_free(d);
	}
}

/* --- bad input: code and line --- */

#define R0 "   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69"
#define L0 "basic_cpuid[0]=0000000d 756e6547 6c65746e 49656e69"
#define BIN(s) s, sizeof(s) - 1 /* text with NUL bytes, and its length */
#define A0 "CPUID 00000000: 0000000D-756E6547-6C65746E-49656E69"

static const struct bad_case {
	const char *name;
	const char *text;
	size_t len;       /* 0: strlen(text) */
	int err;
	unsigned line;
	const char *msg;  /* a part of the message */
} bad_cases[] = {
	{ "empty", "", 0, -TACHO_EEMPTY, 0, "no CPUID leaves found" },
	{ "only text", "hello\nworld\n", 0, -TACHO_EEMPTY, 0, "no CPUID leaves found" },
	{ "only a header", "CPU 0:\n", 0, -TACHO_EEMPTY, 0, "no CPUID leaves found" },
	{ "binary", BIN("\x7f" "ELF\x02\x01\x01\0\0\0\xff\xfe\n\x01"), -TACHO_EEMPTY, 0, "no CPUID" },
	{ "nul in a line", BIN("CPU 0:\n   0x00000000 0x00: eax=0x0000\0d"), -TACHO_EPARSE, 2, "eax" },
	/* cpuid -r */
	{ "r: bad hex in leaf", "CPU 0:\n   0x0000000g 0x00: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0\n", 0,
	  -TACHO_EPARSE, 2, "bad hex digit 'g'" },
	{ "r: bad hex in register", "CPU 0:\n" R0 "\n   0x00000001 0x00: eax=0x000306a9 "
	  "ebx=0x0010080z ecx=0x7fbae3ff edx=0xbfebfbff\n", 0, -TACHO_EPARSE, 3,
	  "ebx: bad hex digit 'z'" },
	{ "r: register missing", "CPU 0:\n   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 "
	  "ecx=0x6c65746e\n", 0, -TACHO_EPARSE, 2, "edx=0x" },
	{ "r: register missing at the end", "CPU 0:\n   0x00000000 0x00: eax=0x0000000d "
	  "ebx=0x756e6547 ecx=0x6c65746e", 0, -TACHO_ETRUNC, 2, "ends in the middle of a line" },
	{ "r: value cut at the end", "CPU 0:\n   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 "
	  "ecx=0x6c65746e edx=0x4965", 0, -TACHO_ETRUNC, 2, "edx" },
	{ "r: short value mid-file", "CPU 0:\n   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 "
	  "ecx=0x6c65746e edx=0x4965\n" R0 "\n", 0, -TACHO_EPARSE, 2, "8 are expected" },
	{ "r: cut after the leaf", "CPU 0:\n" R0 "\n   0x00000001", 0, -TACHO_ETRUNC, 3, "" },
	{ "r: no colon", "   0x00000000 0x00 eax=0x0000000d ebx=0x756e6547 ecx=0x6c65746e "
	  "edx=0x49656e69\n", 0, -TACHO_EPARSE, 1, "':'" },
	{ "r: junk after edx", R0 " extra\n", 0, -TACHO_EPARSE, 1, "after the registers" },
	{ "r: leaf too wide", "   0x000000000 0x00: eax=0x0000000d ebx=0x756e6547 ecx=0x6c65746e "
	  "edx=0x49656e69\n", 0, -TACHO_EPARSE, 1, "leaf" },
	{ "r: header at the end", "CPU 0:\n" R0 "\nCPU 1:\n", 0, -TACHO_ETRUNC, 3, "CPU header" },
	/* libcpuid */
	{ "lc: register missing", L0 "\nbasic_cpuid[1]=000306a9 00100800 7fbae3ff\n", 0,
	  -TACHO_EPARSE, 2, "edx" },
	{ "lc: cut at the end", L0 "\nbasic_cpuid[1]=000306a9 00100800 7fbae3ff bfeb", 0,
	  -TACHO_ETRUNC, 2, "edx" },
	{ "lc: bad index", L0 "\nbasic_cpuid[x]=000306a9 00100800 7fbae3ff bfebfbff\n", 0,
	  -TACHO_EPARSE, 2, "index" },
	{ "lc: huge index", L0 "\next_cpuid[4294967296]=0 0 0 0\n", 0, -TACHO_EPARSE, 2, "index" },
	{ "lc: bad hex", L0 "\nintel_fn4[0]=1c004121 01c0003f 0000003f 0000000q\n", 0,
	  -TACHO_EPARSE, 2, "edx: bad hex digit 'q'" },
	{ "lc: separator at the end", L0 "\n\n_________________ Logical CPU #1 _________________\n",
	  0, -TACHO_ETRUNC, 3, "CPU header" },
	{ "lc: arm", "_________________ Logical CPU #0 _________________\n"
	  "arm_midr=00000000410fd030\n", 0, -TACHO_ENOTX86, 2, "ARM" },
	/* AIDA64 / InstLatx64 */
	{ "aida: bad hex in leaf", "------[ Logical CPU #0 ]------\n" A0 "\nCPUID 0000000G: "
	  "00000001-00000002-00000003-00000004\n", 0, -TACHO_EPARSE, 3, "leaf" },
	{ "aida: register missing", "------[ Logical CPU #0 ]------\nCPUID 00000000: "
	  "0000000D-756E6547-6C65746E\n", 0, -TACHO_EPARSE, 2, "'-'" },
	{ "aida: cut at the end", "CPU#000 AffMask: 0x0000000000000001\n" A0 "\nCPUID 00000001: "
	  "000306A9-02100800-0D9A", 0, -TACHO_ETRUNC, 3, "ecx" },
	{ "aida: bad subleaf", "------[ Logical CPU #0 ]------\n" A0 "\nCPUID 00000004: "
	  "1C004121-01C0003F-0000003F-00000000 [SL zz]\n", 0, -TACHO_EPARSE, 3, "subleaf" },
	{ "aida: old header", "CPUID Registers (CPU #x):\n" A0 "\n", 0, -TACHO_EPARSE, 1,
	  "CPU header" },
};

static void test_bad_input(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct tacho_cpuid_dump *d = (struct tacho_cpuid_dump *)&d; /* must become NULL */
		struct tacho_diag diag = { .sz = sizeof(diag), .line = 9999 };
		size_t len = c->len ? c->len : strlen(c->text);
		int err = tacho_cpuid_dump_parse(c->text, len, "bad.txt", &d, &diag);

		if (err != c->err || diag.line != c->line || !strstr(diag.message, c->msg) ||
		    strcmp(diag.source, "bad.txt") != 0 || d != NULL)
			fail_msg("case \"%s\": got %s at line %u: \"%s\"; want %s at line %u "
				 "mentioning \"%s\"", c->name, tacho_err_name(err), diag.line,
				 diag.message, tacho_err_name(c->err), c->line, c->msg);
	}
}

/* Out-of-order and repeated lines: the last value of a (leaf, subleaf) wins; a CPU with
 * thousands of leaves is not a dump. */
static void test_order_and_limits(void **state)
{
	static const char text[] =
		"CPU 0:\n"
		"   0x00000002 0x00: eax=0x00000002 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n"
		"   0x00000000 0x00: eax=0x00000002 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
		"   0x00000001 0x00: eax=0x00000001 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n"
		"   0x00000002 0x00: eax=0x00000022 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n"
		"   0x00000001 0x05: eax=0x00000011 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n";
	struct tacho_cpuid_dump *d;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tc_sb sb = TC_SB_INIT;
	int err;
	(void)state;

	assert_int_equal(tacho_cpuid_dump_parse(text, strlen(text), "order", &d, &diag), 0);
	assert_int_equal(d->cpus[0].n, 3);
	/* leaf 1 has no subleaves: "0x05" lands on subleaf 0 and replaces it */
	CHECK(d, 0, 1, 0, 0x11, 0, 0, 0);
	CHECK(d, 0, 2, 0, 0x22, 0, 0, 0);
	tacho_cpuid_dump_free(d);

	tc_sb_adds(&sb, "CPU 0:\n");
	for (unsigned i = 0; i <= 4096; i++)
		tc_sb_addf(&sb, "   0x%08x 0x00: eax=0x00000000 ebx=0x00000000 ecx=0x00000000 "
			   "edx=0x00000000\n", 0x80000000u + i);
	assert_false(sb.oom);
	err = tacho_cpuid_dump_parse(sb.buf, sb.len, "many", &d, &diag);
	assert_int_equal(err, -TACHO_EPARSE);
	assert_int_equal(diag.line, 4098);
	assert_contains(diag.message, "more than 4096 leaves");
	tc_sb_exit(&sb);
}

/* Free text that the formats carry (titles, notes, blank lines, CRLF) is skipped. */
static void test_free_text(void **state)
{
	static const char aida[] =
		"AIDA64 CPUID dump\r\n"
		"------[ Versions ]------\r\n"
		"Program Version : AIDA64 Extreme\r\n"
		"CPUID Manufacturer: GenuineIntel\r\n"
		"CPUID Revision    : 000B0671h\r\n"
		"CPUID Features    : 12345678\r\n"
		"\r\n"
		"------[ CPUID Registers / Logical CPU #2 Virtual ]------\r\n"
		"CPUID 00000000: 0000000D-756E6547-6C65746E-49656E69 [GenuineIntel]\r\n"
		"CPUID 00000004: 1C004121-01C0003F-0000003F-00000000 [SL 00] [L1D: 32 KB]\r\n"
		"CPUID 00000004: 1C004143-01C0003F-000001FF-00000000 [SL 02] [L2: 256 KB] / L3: 0 KB]\r\n"
		"------[ MSR Registers ]------\r\n"
		"MSR 0000001B: 00000000-FEE00900\r\n";
	static const char raw[] = "# taken on host x\n\nCPU 3:\n" R0 "\n";
	/* old versions of cpuid -r: no subleaf, repeated lines are the next subleaves */
	static const char old_raw[] =
		"CPU 0:\n"
		"   0x00000000: eax=0x00000004 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
		"   0x00000002: eax=0x00000001 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n"
		"   0x00000002: eax=0x00000099 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n"
		"   0x00000004: eax=0x04000121 ebx=0x01c0003f ecx=0x0000003f edx=0x00000000\n"
		"   0x00000004: eax=0x04000143 ebx=0x01c0003f ecx=0x00000fff edx=0x00000001\n";
	struct tacho_cpuid_dump *d;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	(void)state;

	assert_int_equal(tacho_cpuid_dump_parse(aida, strlen(aida), "a", &d, &diag), 0);
	assert_int_equal(tacho_cpuid_dump_ncpus(d), 1);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 0), 2);
	CHECK(d, 0, 4, 2, 0x1C004143, 0x01C0003F, 0x000001FF, 0x00000000);
	tacho_cpuid_dump_free(d);
	assert_int_equal(tacho_cpuid_dump_parse(raw, strlen(raw), "r", &d, &diag), 0);
	assert_int_equal(tacho_cpuid_dump_os_cpu(d, 0), 3);
	tacho_cpuid_dump_free(d);
	assert_int_equal(tacho_cpuid_dump_parse(old_raw, strlen(old_raw), "o", &d, &diag), 0);
	CHECK(d, 0, 2, 0, 1, 0, 0, 0); /* leaf 2 has no subleaves: the first line is kept */
	CHECK(d, 0, 4, 1, 0x04000143, 0x01c0003f, 0x00000fff, 0x00000001);
	assert_int_equal(d->cpus[0].n, 4);
	tacho_cpuid_dump_free(d);
}

static void test_load_errors(void **state)
{
	struct tacho_cpuid_dump *d;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	(void)state;

	assert_int_equal(tacho_cpuid_dump_load("/nonexistent/dump.txt", &d, &diag), -ENOENT);
	assert_null(d);
	assert_string_equal(diag.source, "/nonexistent/dump.txt");
	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid"), &d, &diag), -EISDIR);
	/* a device or a FIFO is refused before any read (a FIFO would wait forever) */
	assert_int_equal(tacho_cpuid_dump_load("/dev/null", &d, &diag), -EINVAL);
	assert_string_equal(diag.source, "/dev/null");
	assert_non_null(strstr(diag.message, "not a regular file"));
	const char *fifo = th_tmp("dump.fifo");
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(tacho_cpuid_dump_load(fifo, &d, &diag), -EINVAL);
	assert_null(d);
	/* an empty file is an empty dump */
	const char *empty = th_tmp("empty.txt");
	FILE *f = fopen(empty, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(tacho_cpuid_dump_load(empty, &d, &diag), -TACHO_EEMPTY);
	/* the size is checked before any read: a sparse file of 1 GiB is refused at once
	 * (it was read, 256 MB of it, before) */
	const char *big = th_tmp("big.txt");
	int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
	close(fd);
	assert_int_equal(tacho_cpuid_dump_load(big, &d, &diag), -EFBIG);
	assert_non_null(strstr(diag.message, "too large"));
	unlink(big);
}

/* A CPU number that is not a CPU's is an error at its line and column, not CPU 0 (a
 * number that wrapped) nor free text. */
static void test_bad_cpu_numbers(void **state)
{
	static const char *const bad[] = { "CPU 4294967296:\n", "CPU -5:\n", "CPU 2147483648:\n" };
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct tacho_cpuid_dump *d = NULL;
		struct tacho_diag diag = { .sz = sizeof(diag) };
		char text[256];

		snprintf(text, sizeof(text), "%s   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 "
			 "ecx=0x6c65746e edx=0x49656e69\n", bad[i]);
		assert_int_equal(tacho_cpuid_dump_parse(text, strlen(text), "t", &d, &diag),
				 -TACHO_EPARSE);
		assert_null(d);
		assert_int_equal(diag.line, 1);
		assert_int_equal(diag.column, 5);
		assert_non_null(strstr(diag.message, "CPU number"));
	}
}

/* --- the whole corpus --- */

struct walk {
	unsigned files, xz, cpus, arm, enumerated;
};

static void check_enumeration(const char *path, const struct tacho_cpuid_dump *src,
			      unsigned *checked);

static void walk_dir(const char *dir, bool arm, struct walk *w)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);

	if (n < 0)
		fail_msg("cannot list %s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		char path[1024];
		const char *name = ents[i]->d_name;
		struct stat st;
		size_t len = strlen(name);

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (name[0] == '.' || stat(path, &st) != 0) {
			free(ents[i]);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			walk_dir(path, arm || strcmp(name, "arm") == 0, w);
		} else if ((len > 5 && strcmp(name + len - 5, ".test") == 0) ||
			   (len > 8 && strcmp(name + len - 8, ".test.xz") == 0)) {
			struct tacho_cpuid_dump *d = NULL;
			struct tacho_diag diag = { .sz = sizeof(diag) };
			int err = load_cut(path, &d, &diag);

			if (arm) {
				if (err != -TACHO_ENOTX86 || !strstr(diag.message, "ARM"))
					fail_msg("%s: want TACHO_ENOTX86 about ARM, got %s: %s",
						 path, tacho_err_name(err), diag.message);
				w->arm++;
			} else {
				struct tacho_cpuid_regs r;
				if (err)
					fail_msg("%s: %s at line %u: %s", path, tacho_err_name(err),
						 diag.line, diag.message);
				assert_true(tacho_cpuid_dump_ncpus(d) >= 1);
				for (unsigned c = 0; c < tacho_cpuid_dump_ncpus(d); c++)
					if (tacho_cpuid_query(d, c, 0, 0, &r) != 0)
						fail_msg("%s: CPU %u has no leaf 0", path, c);
				check_enumeration(path, d, &w->enumerated);
				w->files++;
				w->xz += name[len - 1] == 'z';
				w->cpus += tacho_cpuid_dump_ncpus(d);
				tacho_cpuid_dump_free(d);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

static void test_corpus(void **state)
{
	struct walk w = { 0 };
	(void)state;

	if (!corpus_present())
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	walk_dir(th_path(CORPUS), false, &w);
	print_message("corpus: %u x86 dumps parsed (%u of them .xz), %u CPUs; %u ARM dumps "
		      "refused; enumeration rules checked on %u\n", w.files, w.xz, w.cpus, w.arm,
		      w.enumerated);
	assert_true(w.files >= 480);
	assert_true(w.arm >= 1);
}

/* --- the enumeration of live.c, on CPUs simulated from dumps --- */

/* Answers CPUID as the CPU of a dump would: a stored leaf as stored; a leaf above its
 * range's maximum (or of a range that does not exist) with the highest basic leaf, as
 * Intel documents; any other leaf with zeros (a subleaf past the end of a list). */
static int sim_read(void *arg, uint32_t leaf, uint32_t sub, struct tacho_cpuid_regs *out)
{
	const struct tacho_cpuid_dump *s = arg;
	const struct tacho_cpuid_regs *l0 = tc_cpuid_raw(s, 0, 0, 0), *hi;

	if (tacho_cpuid_query(s, 0, leaf, sub, out) == 0)
		return 0;
	memset(out, 0, sizeof(*out));
	if (!l0)
		return 0;
	if ((leaf < 0x40000000u && leaf <= l0->eax) ||
	    tacho_cpuid_query(s, 0, leaf & (leaf >> 16 == 0x4000 ? 0xffffff00u : 0xffff0000u),
			      0, out) == 0) {
		memset(out, 0, sizeof(*out)); /* in range, not stored: zeros */
		return 0;
	}
	hi = tc_cpuid_raw(s, 0, l0->eax, 0);
	if (hi)
		*out = *hi;
	return 0;
}

static struct tacho_cpuid_dump *enumerate_sim(const struct tacho_cpuid_dump *src)
{
	struct tacho_cpuid_dump *d = tc_cpuid_dump_new();

	assert_non_null(d);
	assert_int_equal(tc_cpuid_dump_add_cpu(d, 0), 0);
	assert_int_equal(tc_cpuid_enumerate(sim_read, (void *)src, d, 0), 0);
	assert_int_equal(tc_cpuid_dump_finish(d), 0);
	return d;
}

#define SIM(leaf, sub, a, b, c, e) \
	"   0x" #leaf " 0x" #sub ": eax=0x" #a " ebx=0x" #b " ecx=0x" #c " edx=0x" #e "\n"

/* Each leaf's subleaf rule (SDM vol. 2A CPUID; APM vol. 3 E.4), on a made-up CPU. */
static void test_enumeration_rules(void **state)
{
	static const char cpu[] = "CPU 0:\n"
		SIM(00000000, 00, 00000023, 756e6547, 6c65746e, 49656e69)
		SIM(00000001, 00, 000b0671, 00800800, 7ffafbff, bfebfbff)
		SIM(00000004, 00, 00000121, 01c0003f, 0000003f, 00000000)
		SIM(00000004, 01, 00000122, 01c0003f, 0000003f, 00000000)
		SIM(00000004, 02, 00000143, 03c0003f, 000007ff, 00000000)
		SIM(00000007, 00, 00000002, 00000001, 00000000, 00000000)
		SIM(00000007, 01, 00000010, 00000000, 00000000, 00000000)
		SIM(00000007, 02, 00000000, 00000000, 00000000, 00000010)
		SIM(0000000b, 00, 00000001, 00000002, 00000100, 00000000)
		SIM(0000000b, 01, 00000004, 00000008, 00000201, 00000000)
		SIM(0000000d, 00, 00000207, 00000a88, 00000a88, 00000000)
		SIM(0000000d, 01, 0000000f, 00000a88, 00001800, 00000000)
		SIM(0000000d, 02, 00000100, 00000240, 00000000, 00000000)
		SIM(0000000d, 09, 00000008, 00000a80, 00000000, 00000000)
		SIM(0000000d, 0b, 00000010, 00000000, 00000001, 00000000)
		SIM(0000000d, 0c, 00000018, 00000000, 00000001, 00000000)
		SIM(00000010, 00, 00000000, 00000002, 00000000, 00000000)
		SIM(00000010, 01, 0000000a, 00000000, 00000004, 0000000f)
		SIM(00000012, 02, 40000001, 00000000, 00c00001, 00000000)
		SIM(00000023, 00, 0000000b, 00000000, 00000000, 00000000)
		SIM(00000023, 01, 000000ff, 00000003, 00000000, 00000000)
		SIM(00000023, 03, 00000003, 00000000, 00000000, 00000000)
		SIM(40000000, 00, 40000001, 7263694d, 666f736f, 76482074)
		SIM(40000001, 00, 31237648, 00000000, 00000000, 00000000)
		SIM(80000000, 00, 8000001d, 00000000, 00000000, 00000000)
		SIM(8000001d, 00, 00000121, 01c0003f, 0000003f, 00000000)
		SIM(c0000000, 00, c0000001, 00000000, 00000000, 00000000)
		SIM(c0000001, 00, 00000000, 00000000, 00000000, 1ec33dfc);
	static const struct {
		uint32_t leaf, sub;
		bool present;
	} want[] = {
		{ 4, 2, true }, { 4, 3, true },   /* the cache list's end (type 0) is kept */
		{ 4, 4, false },
		{ 7, 2, true }, { 7, 3, false },  /* 0 to sub 0's EAX */
		{ 0xb, 2, true }, { 0xb, 3, false }, /* the level list's end is kept */
		{ 0xd, 2, true }, { 0xd, 3, false }, { 0xd, 9, true }, { 0xd, 10, false },
		{ 0xd, 11, true }, { 0xd, 12, true }, { 0xd, 13, false }, /* XCR0 | XSS bits */
		{ 0xf, 1, false },                /* sub 0 EDX[1] clear */
		{ 0x10, 1, true }, { 0x10, 2, false }, /* sub 0 EBX bit 1 only */
		{ 0x12, 1, true }, { 0x12, 2, true }, { 0x12, 3, true }, { 0x12, 4, false },
		{ 0x1b, 1, true }, { 0x1b, 2, false },
		{ 0x1f, 0, true }, { 0x1f, 1, false },
		{ 0x23, 1, true }, { 0x23, 2, false }, { 0x23, 3, true }, /* EAX is a bit map */
		{ 0x20000000, 0, true },          /* probes are recorded */
		{ 0x40000001, 0, true }, { 0x40000100, 0, true }, { 0x40000101, 0, false },
		{ 0x8000001d, 0, true }, { 0x8000001d, 1, false }, /* its end is not kept */
		{ 0x8000001e, 0, false },
		{ 0x80860000, 0, true }, { 0x80860001, 0, false },
		{ 0xc0000001, 0, true }, { 0xc0000002, 0, false },
	};
	struct tacho_cpuid_dump *src, *d;
	struct tacho_cpuid_regs r;
	(void)state;

	assert_int_equal(tacho_cpuid_dump_parse(cpu, strlen(cpu), "sim", &src, NULL), 0);
	d = enumerate_sim(src);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		if ((tc_cpuid_raw(d, 0, want[i].leaf, want[i].sub) != NULL) != want[i].present)
			fail_msg("leaf %#x.%u: %s, want %s", want[i].leaf, want[i].sub,
				 want[i].present ? "missing" : "read", want[i].present ? "read" : "not");
	CHECK(d, 0, 0xd, 12, 0x18, 0, 1, 0);
	CHECK(d, 0, 0xc0000001, 0, 0, 0, 0, 0x1ec33dfc);
	/* the 0x8086_0000 probe got leaf 0x23's answer: recorded, refused by the query */
	assert_int_equal(tacho_cpuid_query(d, 0, 0x80860000, 0, &r), -TACHO_ENOVALUE);
	round_trip(d, "simulated");
	tacho_cpuid_dump_free(d);
	tacho_cpuid_dump_free(src);
}

/* A leaf the dump lists but whose values say nothing: zeros, or an invalid level of
 * 0xB/0x1F (EAX = EBX = 0, level type 0: only the echoed index and the x2APIC ID), as
 * libcpuid's fixed-size arrays pad them. */
static bool says_nothing(const struct tc_cpuid_leaf *l)
{
	if (!(l->r.eax | l->r.ebx | l->r.ecx | l->r.edx))
		return true;
	return (l->leaf == 0xb || l->leaf == 0x1f) && !l->r.eax && !l->r.ebx &&
	       !(l->r.ecx >> 8 & 0xff);
}

/* The enumeration run on CPU 0 of every corpus dump finds every leaf the dump's tool
 * listed with something in it (within the maximum leaves), with the same value, and
 * reads no leaf with something in it that the tool did not list: the subleaf rules
 * agree with AIDA64's, InstLatx64's and libcpuid's on hundreds of real CPUs. */
static void check_enumeration(const char *path, const struct tacho_cpuid_dump *src,
			      unsigned *checked)
{
	struct tacho_cpuid_dump *d = enumerate_sim(src);
	const struct tc_cpuid_cpu *c = &src->cpus[0], *e = &d->cpus[0];
	struct tacho_cpuid_regs r;

	for (size_t k = 0; k < c->n; k++) {
		const struct tc_cpuid_leaf *l = &c->leaves[k];
		const struct tacho_cpuid_regs *got;
		if (tacho_cpuid_query(src, 0, l->leaf, l->subleaf, &r) != 0 || says_nothing(l))
			continue;
		got = tc_cpuid_raw(d, 0, l->leaf, l->subleaf);
		if (!got || memcmp(got, &l->r, sizeof(r)) != 0)
			fail_msg("%s: leaf %#x.%u listed by the dump, %s by the enumeration", path,
				 l->leaf, l->subleaf, got ? "different" : "not read");
	}
	for (size_t k = 0; k < e->n; k++) {
		const struct tc_cpuid_leaf *l = &e->leaves[k];
		if (tacho_cpuid_query(d, 0, l->leaf, l->subleaf, &r) != 0 || says_nothing(l))
			continue;
		if (!tc_cpuid_raw(src, 0, l->leaf, l->subleaf))
			fail_msg("%s: the enumeration reads leaf %#x.%u that the dump does not list",
				 path, l->leaf, l->subleaf);
	}
	++*checked;
	tacho_cpuid_dump_free(d);
}

/* --- this machine --- */

/* The online CPUs the live reader can reach: those this thread may be pinned to (a
 * cpuset can forbid some), and the others when /dev/cpu/N/cpuid is readable. */
static unsigned count_reachable(const char *s, const cpu_set_t *orig, unsigned *online)
{
	unsigned n = 0;

	*online = 0;
	while (*s) {
		char *e;
		unsigned long a = strtoul(s, &e, 10), b = a;
		if (*e == '-')
			b = strtoul(e + 1, &e, 10);
		for (unsigned long c = a; c <= b; c++) {
			char dev[64];
			cpu_set_t one;
			bool pin = false;

			if (c < CPU_SETSIZE) {
				CPU_ZERO(&one);
				CPU_SET(c, &one);
				pin = sched_setaffinity(0, sizeof(one), &one) == 0;
			}
			snprintf(dev, sizeof(dev), "/dev/cpu/%lu/cpuid", c);
			++*online;
			n += pin || access(dev, R_OK) == 0;
		}
		s = *e == ',' ? e + 1 : e + strlen(e);
	}
	assert_int_equal(sched_setaffinity(0, sizeof(*orig), orig), 0);
	return n;
}

static void test_live(void **state)
{
	struct tacho_cpuid_dump *d;
	char online[4096], vendor[13], *cpuinfo, *p;
	cpu_set_t before, after;
	unsigned reachable, nonline;
	int err;
	(void)state;

	CPU_ZERO(&before);
	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	err = tacho_cpuid_dump_live(&d);
	if (err == -TACHO_ENOTX86)
		TEST_SKIP("not an x86 machine");
	assert_int_equal(err, 0);
	CPU_ZERO(&after);
	assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&before, &after));

	assert_int_equal(tc_read_line_file("/sys/devices/system/cpu/online", online,
					   sizeof(online)), 0);
	reachable = count_reachable(online, &before, &nonline);
	if (reachable != nonline)
		print_message("%u of %u online CPUs are outside this thread's affinity and "
			      "/dev/cpu/N/cpuid is not readable: expecting %u\n",
			      nonline - reachable, nonline, reachable);
	assert_int_equal(tacho_cpuid_dump_ncpus(d), reachable);
	for (unsigned c = 0; c < tacho_cpuid_dump_ncpus(d); c++)
		assert_true(tacho_cpuid_dump_os_cpu(d, c) >= 0);

	assert_int_equal(tc_read_file("/proc/cpuinfo", &cpuinfo, NULL, 0), 0);
	p = strstr(cpuinfo, "vendor_id");
	assert_non_null(p);
	p = strchr(p, ':');
	assert_non_null(p);
	for (unsigned c = 0; c < tacho_cpuid_dump_ncpus(d); c++) {
		struct tacho_cpuid_regs r0, r1;
		assert_int_equal(tacho_cpuid_query(d, c, 0, 0, &r0), 0);
		memcpy(vendor, &r0.ebx, 4);
		memcpy(vendor + 4, &r0.edx, 4);
		memcpy(vendor + 8, &r0.ecx, 4);
		vendor[12] = '\0';
		if (strncmp(p + 2, vendor, 12) != 0)
			fail_msg("cpu %u: CPUID vendor %s, /proc/cpuinfo %.12s", c, vendor, p + 2);
		assert_int_equal(tacho_cpuid_query(d, c, 1, 0, &r1), 0);
		for (unsigned k = 0; k < c; k++) {
			struct tacho_cpuid_regs o;
			assert_int_equal(tacho_cpuid_query(d, k, 1, 0, &o), 0);
			if (o.ebx >> 24 == r1.ebx >> 24)
				fail_msg("cpus %u and %u share initial APIC ID %u", k, c, r1.ebx >> 24);
		}
	}
	free(cpuinfo);
	tacho_cpuid_dump_free(d);
}

/* What the kernel read from CPUID for one CPU, as /proc/cpuinfo prints it. */
struct kernel_cpuid {
	char vendor[16], model[64];
	long level;           /* "cpuid level": leaf 0 EAX */
	long initial_apicid;  /* leaf 1 EBX[31:24], or the wider ID of 0xB/0x8000_001E */
};

/* The value of "name" in the block of processor os_cpu of text; false when absent. */
static bool cpuinfo_value(const char *text, int os_cpu, const char *name, char *out, size_t size)
{
	char head[32];
	const char *p = text, *end, *v;
	size_t n = strlen(name);

	snprintf(head, sizeof(head), "processor\t: %d\n", os_cpu);
	while ((p = strstr(p, head)) != NULL && p != text && p[-1] != '\n')
		p++;
	if (!p)
		return false;
	end = strstr(p, "\n\n");
	for (const char *l = p; l && (!end || l < end); l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, name, n) != 0 || (l[n] != '\t' && l[n] != ' '))
			continue;
		v = strchr(l, ':');
		if (!v)
			return false;
		v += v[1] == ' ' ? 2 : 1;
		snprintf(out, size, "%.*s", (int)strcspn(v, "\n"), v);
		return true;
	}
	return false;
}

static bool kernel_cpuid(const char *cpuinfo, int os_cpu, struct kernel_cpuid *k)
{
	char level[16], apic[16];

	if (!cpuinfo_value(cpuinfo, os_cpu, "vendor_id", k->vendor, sizeof(k->vendor)) ||
	    !cpuinfo_value(cpuinfo, os_cpu, "cpuid level", level, sizeof(level)) ||
	    !cpuinfo_value(cpuinfo, os_cpu, "initial apicid", apic, sizeof(apic)))
		return false;
	if (!cpuinfo_value(cpuinfo, os_cpu, "model name", k->model, sizeof(k->model)))
		k->model[0] = '\0';
	k->level = strtol(level, NULL, 10);
	k->initial_apicid = strtol(apic, NULL, 10);
	return true;
}

/* Leaf 0's vendor, its maximum and the brand string (trimmed, as the kernel's model
 * name) of CPU cpu of a dump. */
static void dump_cpuid(const struct tacho_cpuid_dump *d, unsigned cpu, struct kernel_cpuid *k)
{
	struct tacho_cpuid_regs r;
	char brand[49] = "";
	size_t b = 0, e;

	memset(k, 0, sizeof(*k));
	assert_int_equal(tacho_cpuid_query(d, cpu, 0, 0, &r), 0);
	memcpy(k->vendor, &r.ebx, 4);
	memcpy(k->vendor + 4, &r.edx, 4);
	memcpy(k->vendor + 8, &r.ecx, 4);
	k->level = r.eax;
	assert_int_equal(tacho_cpuid_query(d, cpu, 1, 0, &r), 0);
	k->initial_apicid = r.ebx >> 24;
	for (uint32_t leaf = 0x80000002u; leaf <= 0x80000004u; leaf++) {
		if (tacho_cpuid_query(d, cpu, leaf, 0, &r) != 0) {
			brand[0] = '\0';
			break;
		}
		memcpy(brand + (leaf - 0x80000002u) * 16, &r, 16);
	}
	while (brand[b] == ' ')
		b++;
	e = strlen(brand);
	while (e > b && brand[e - 1] == ' ')
		e--;
	snprintf(k->model, sizeof(k->model), "%.*s", (int)(e - b), brand + b);
}

/* The signature of leaf 0x4000_0000 EBX, ECX, EDX of CPU 0 ("" when none). */
static void hypervisor_signature(const struct tacho_cpuid_dump *d, char sig[13])
{
	struct tacho_cpuid_regs r;

	memset(sig, 0, 13);
	if (tacho_cpuid_query(d, 0, 0x40000000u, 0, &r) != 0)
		return;
	memcpy(sig, &r.ebx, 4);
	memcpy(sig + 4, &r.ecx, 4);
	memcpy(sig + 8, &r.edx, 4);
	for (int i = 0; i < 12; i++)
		if (sig[i] && (sig[i] < ' ' || sig[i] > '~'))
			sig[i] = '?';
}

/* /dev/cpu/N/cpuid runs CPUID in the kernel on CPU N, and a pinned thread runs it in
 * user mode there. Both reach one answer where every CPUID traps to one hypervisor or
 * none, and then they must agree leaf for leaf. Not in a guest whose kernel asks for
 * CPUID by hypercall while its user code reaches the hypervisor below (a PVM guest in
 * a bhyve VM: user mode sees bhyve's "Oxide Virtual Turin-like Processor" with the APIC
 * ID of whichever bhyve vCPU runs it at the moment, the kernel "AMD EPYC" with APIC IDs
 * 0 and 1). So /dev/cpu/N/cpuid is held against what the kernel says it read
 * (/proc/cpuinfo), exactly, and pinning against /dev/cpu/N/cpuid where user mode
 * reads what the kernel reads; where it does not, that comparison is skipped, naming
 * both answers. */
static void test_live_methods_agree(void **state)
{
	struct tacho_cpuid_dump *pin, *dev;
	struct kernel_cpuid kernel, user;
	char *cpuinfo;
	int err;
	(void)state;

	err = tc_cpuid_dump_live_method(TC_LIVE_PIN, &pin);
	if (err == -TACHO_ENOTX86)
		TEST_SKIP("not an x86 machine");
	assert_int_equal(err, 0);
	if (access("/dev/cpu/0/cpuid", R_OK) != 0) {
		tacho_cpuid_dump_free(pin);
		TEST_SKIP("/dev/cpu/0/cpuid is not readable (needs root and the cpuid module)");
	}
	assert_int_equal(tc_cpuid_dump_live_method(TC_LIVE_DEV, &dev), 0);
	assert_int_equal(tc_read_file("/proc/cpuinfo", &cpuinfo, NULL, 0), 0);
	for (unsigned c = 0; c < tacho_cpuid_dump_ncpus(dev); c++) {
		int os = tacho_cpuid_dump_os_cpu(dev, c);
		struct kernel_cpuid got;

		if (!kernel_cpuid(cpuinfo, os, &kernel))
			fail_msg("/proc/cpuinfo has no vendor_id, cpuid level and initial apicid "
				 "for CPU %d", os);
		dump_cpuid(dev, c, &got);
		if (strcmp(got.vendor, kernel.vendor) != 0 || got.level != kernel.level ||
		    got.initial_apicid != (kernel.initial_apicid & 0xff) ||
		    (got.model[0] && kernel.model[0] && strcmp(got.model, kernel.model) != 0))
			fail_msg("/dev/cpu/%d/cpuid: %s, max leaf %ld, APIC ID %ld, \"%s\"; the "
				 "kernel read %s, %ld, %ld, \"%s\"", os, got.vendor, got.level,
				 got.initial_apicid, got.model, kernel.vendor, kernel.level,
				 kernel.initial_apicid & 0xff, kernel.model);
	}
	round_trip(pin, "live dump");
	dump_cpuid(pin, 0, &user);
	assert_true(kernel_cpuid(cpuinfo, tacho_cpuid_dump_os_cpu(pin, 0), &kernel));
	free(cpuinfo);
	if (strcmp(user.vendor, kernel.vendor) != 0 || user.level != kernel.level ||
	    (user.model[0] && kernel.model[0] && strcmp(user.model, kernel.model) != 0)) {
		char hv_user[13], hv_kernel[13];

		hypervisor_signature(pin, hv_user);
		hypervisor_signature(dev, hv_kernel);
		tacho_cpuid_dump_free(pin);
		tacho_cpuid_dump_free(dev);
		TEST_SKIP("CPUID in user mode is not the kernel's here: a pinned thread reads "
			  "%s, max leaf %ld, \"%s\", hypervisor \"%s\"; the kernel "
			  "(/proc/cpuinfo, and /dev/cpu/N/cpuid with it) %s, %ld, \"%s\", "
			  "hypervisor \"%s\": the kernel asks another hypervisor than user "
			  "code reaches (as in a PVM guest), so the two methods read two "
			  "processors", user.vendor, user.level, user.model, hv_user,
			  kernel.vendor, kernel.level, kernel.model, hv_kernel);
	}
	assert_same_dump(pin, dev, "pinned vs /dev/cpu/N/cpuid");
	tacho_cpuid_dump_free(pin);
	tacho_cpuid_dump_free(dev);
}

/* The live dump holds the same leaves and values as `cpuid -r`, when that tool is here. */
static void test_live_vs_cpuid_tool(void **state)
{
	char *argv[] = { (char *)"cpuid", (char *)"-r", NULL };
	struct tacho_cpuid_dump *live, *tool;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct th_run run;
	int err;
	(void)state;

	if (access("/usr/bin/cpuid", X_OK) != 0)
		TEST_SKIP("the cpuid tool (Debian package cpuid) is not installed");
	err = tacho_cpuid_dump_live(&live);
	if (err == -TACHO_ENOTX86)
		TEST_SKIP("not an x86 machine");
	assert_int_equal(err, 0);
	th_runv(&run, NULL, argv);
	assert_int_equal(run.status, 0);
	err = tacho_cpuid_dump_parse(run.out, run.out_len, "cpuid -r", &tool, &diag);
	if (err)
		fail_msg("cpuid -r output: %s at line %u: %s", tacho_err_name(err), diag.line,
			 diag.message);
	assert_same_dump(tool, live, "cpuid -r vs tacho");
	th_run_free(&run);
	tacho_cpuid_dump_free(live);
	tacho_cpuid_dump_free(tool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libcpuid_single), cmocka_unit_test(test_libcpuid_keys),
		cmocka_unit_test(test_libcpuid_multi), cmocka_unit_test(test_select),
		cmocka_unit_test(test_aida64),          cmocka_unit_test(test_instlatx64),
		cmocka_unit_test(test_old_aida),        cmocka_unit_test(test_cpuid_r),
		cmocka_unit_test(test_max_leaf),        cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_input),       cmocka_unit_test(test_order_and_limits),
		cmocka_unit_test(test_free_text),
		cmocka_unit_test_setup_teardown(test_load_errors, th_tmpdir_setup,
						th_tmpdir_teardown),
		cmocka_unit_test(test_bad_cpu_numbers), cmocka_unit_test(test_enumeration_rules),
		cmocka_unit_test(test_corpus),
		cmocka_unit_test(test_live),            cmocka_unit_test(test_live_methods_agree),
		cmocka_unit_test(test_live_vs_cpuid_tool),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
