/* test-msr-save.c - saving the writable registers and restoring them on a fake tree: the
 * file (exact), a register a CPU lacks kept as "absent", an experiment undone byte for
 * byte (every device file equal to before), the same file when saved again and when
 * parsed and written; restore refused without the flag and on another processor; every
 * malformed save file named by its line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "msr-fake.h"
#include "msr/msr.h"

static const struct tacho_msr_cpu skylake = { TACHO_VENDOR_INTEL, 6, 0x55, false };
static const struct tacho_msr_cpu zen3 = { TACHO_VENDOR_AMD, 0x19, 1, false };

static struct tacho_msr_dev *dev_on(const struct th_msr_fake *f, const struct tacho_msr_cpu *cpu)
{
	struct tacho_msr_opts o = { .sz = sizeof(o), .device_dir = f->dir, .cpu = cpu };
	struct tacho_msr_dev *dev;

	assert_int_equal(tacho_msr_dev_new(&o, &dev), 0);
	return dev;
}

static char *save_text(const struct tacho_msr_set *set)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(tacho_msr_save_write(set, f), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

/* Intel's writable set, in table order: PMC0-7, PERFEVTSEL0-7, FIXED_CTR0-3,
 * FIXED_CTR_CTRL, PERF_GLOBAL_CTRL (OVF_CTRL clears bits: not saved). */
static const uint32_t intel_saved[] = {
	0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8,
	0x186, 0x187, 0x188, 0x189, 0x18a, 0x18b, 0x18c, 0x18d,
	0x309, 0x30a, 0x30b, 0x30c, 0x38d, 0x38f,
};

static void test_round_trip(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	struct tacho_msr_set *saved, *report, *parsed;
	struct tacho_msr_entry e = { .sz = sizeof(e) };
	struct tacho_msr_cpu was;
	const int cpus[] = { 0, 1 };
	char *text, *again, *snap[2], *now, want[128];
	size_t len[2], nlen;
	(void)state;

	/* CPU 1's file ends before FIXED_CTR_CTRL: its last two are absent */
	th_msr_fake_new(&f, 2, 0x400);
	{
		FILE *fp = fopen(th_msr_fake_path(&f, 1), "r+");
		assert_non_null(fp);
		assert_int_equal(ftruncate(fileno(fp), 0x38d * 8), 0);
		fclose(fp);
	}
	for (size_t i = 0; i < ARRAY_SIZE(intel_saved); i++) {
		uint32_t a = intel_saved[i];
		/* selectors get legal values (no reserved bit), counters anything */
		uint64_t v = a >= 0x186 && a <= 0x18d ? 0x4300c0 + a : 0x0000123400000000ull + a;
		th_msr_poke(&f, 0, a, v);
		if (a + 8 <= 0x38d)
			th_msr_poke(&f, 1, a, v ^ 0xff);
	}
	th_msr_poke(&f, 0, 0x38d, 0x0333);
	th_msr_poke(&f, 0, 0x38f, 0x70000000f);
	th_msr_poke(&f, 0, 0x398, 0x5);      /* past GLOBAL_CTRL: nothing writes it */
	dev = dev_on(&f, &skylake);

	assert_int_equal(tacho_msr_save_read(dev, cpus, 2, &saved), 0);
	assert_int_equal(tacho_msr_set_count(saved), 2 * ARRAY_SIZE(intel_saved));
	assert_int_equal(tacho_msr_set_processor(saved, &was), 0);
	assert_int_equal(was.model, 0x55);
	text = save_text(saved);
	/* the file, line by line, each value as the device holds it */
	{
		char *expect = NULL;
		size_t elen = 0;
		FILE *m = open_memstream(&expect, &elen);
		assert_non_null(m);
		fputs("tacho-msr-save 1\nprocessor Intel 0x6 0x55\n# cpu register address value\n",
		      m);
		for (int c = 0; c < 2; c++)
			for (size_t i = 0; i < ARRAY_SIZE(intel_saved); i++) {
				const struct tacho_msr *r = NULL;
				uint32_t a;
				char spec[16];

				snprintf(spec, sizeof(spec), "0x%x", intel_saved[i]);
				assert_int_equal(tacho_msr_lookup(spec, &skylake, &r, &a, NULL), 0);
				if (c == 1 && intel_saved[i] + 8 > 0x38d)
					fprintf(m, "%d %s 0x%x absent\n", c, r->name, a);
				else
					fprintf(m, "%d %s 0x%x 0x%016llx\n", c, r->name, a,
						(unsigned long long)th_msr_peek(&f, c, a));
			}
		assert_int_equal(fclose(m), 0);
		assert_string_equal(text, expect);
		free(expect);
	}
	assert_contains(text, "\n0 IA32_PMC0 0xc1 0x00001234000000c1\n");
	assert_contains(text, "\n0 IA32_PERFEVTSEL0 0x186 0x0000000000430246\n");
	assert_contains(text, "\n1 IA32_PERFEVTSEL0 0x186 0x00000000004302b9\n");
	assert_contains(text, "\n0 IA32_PMC7 0xc8 0x00001234000000c8\n");
	assert_contains(text, "\n0 IA32_PERFEVTSEL7 0x18d 0x000000000043024d\n");
	assert_contains(text, "\n0 IA32_PERF_GLOBAL_CTRL 0x38f 0x000000070000000f\n");
	assert_contains(text, "\n1 IA32_FIXED_CTR_CTRL 0x38d absent\n"
			"1 IA32_PERF_GLOBAL_CTRL 0x38f absent\n");
	assert_not_contains(text, "OVF_CTRL");

	snap[0] = th_msr_fake_snapshot(&f, 0, &len[0]);
	snap[1] = th_msr_fake_snapshot(&f, 1, &len[1]);

	/* the experiment: counters programmed and running */
	assert_int_equal(tacho_msr_wrmsr(dev, 0, tc_msr_by_name("IA32_PERFEVTSEL0"), 0x53003c,
					 TACHO_MSR_FORCE), 0);
	assert_int_equal(tacho_msr_wrmsr(dev, 1, tc_msr_by_name("IA32_PMC3"), 99, TACHO_MSR_FORCE), 0);
	assert_int_equal(tacho_msr_wrmsr(dev, 0, tc_msr_by_name("IA32_PERF_GLOBAL_CTRL"), 0,
					 TACHO_MSR_FORCE), 0);

	/* restore refused: not forced, or another processor's devices */
	assert_int_equal(tacho_msr_set_new(0, &report), 0);
	assert_int_equal(tacho_msr_restore(dev, saved, 0, report), -TACHO_ENOFORCE);
	assert_int_equal(tacho_msr_set_count(report), 0);
	{
		struct tacho_msr_dev *amd = dev_on(&f, &zen3);
		assert_int_equal(tacho_msr_restore(amd, saved, TACHO_MSR_FORCE, report),
				 -TACHO_EMSRCPU);
		tacho_msr_dev_free(amd);
	}
	assert_int_equal(th_msr_peek(&f, 0, 0x186), 0x53003c);

	/* undone, byte for byte; the global switch of CPU 0 last among its registers */
	assert_int_equal(tacho_msr_restore(dev, saved, TACHO_MSR_FORCE, report), 0);
	assert_int_equal(tacho_msr_set_count(report), 2 * ARRAY_SIZE(intel_saved) - 2);
	assert_int_equal(tacho_msr_set_entry(report, ARRAY_SIZE(intel_saved) - 1, &e), 0);
	assert_int_equal(e.address, 0x38f);
	assert_int_equal(e.before, 0);
	assert_int_equal(e.written_value, 0x70000000f);
	assert_int_equal(e.value, 0x70000000f);
	assert_int_equal(tacho_msr_set_entry(report, 8, &e), 0);
	assert_int_equal(e.address, 0x186);
	assert_int_equal(e.before & 0xffffff, 0x53003c);
	assert_true(e.written);
	for (int c = 0; c < 2; c++) {
		now = th_msr_fake_snapshot(&f, c, &nlen);
		assert_int_equal(nlen, len[c]);
		if (memcmp(now, snap[c], nlen))
			fail_msg("CPU %d's registers are not as they were saved", c);
		free(now);
	}
	assert_int_equal(th_msr_peek(&f, 0, 0x398), 0x5);

	/* saved again: the same bytes */
	tacho_msr_set_free(saved);
	assert_int_equal(tacho_msr_save_read(dev, cpus, 2, &saved), 0);
	again = save_text(saved);
	assert_string_equal(again, text);
	free(again);
	/* parsed and written: the same bytes */
	assert_int_equal(tacho_msr_save_parse(text, strlen(text), "saved", &parsed, NULL), 0);
	again = save_text(parsed);
	assert_string_equal(again, text);
	free(again);
	/* the parsed set restores too */
	assert_int_equal(tacho_msr_restore(dev, parsed, TACHO_MSR_FORCE, report), 0);
	tacho_msr_set_free(parsed);

	/* a device that fails otherwise than EIO stops the save, the failure last */
	tacho_msr_set_free(saved);
	{
		const int three[] = { 0, 1, 2 };
		assert_int_equal(tacho_msr_save_read(dev, three, 3, &saved), -ENOENT);
		assert_non_null(saved);
		assert_int_equal(tacho_msr_set_count(saved), 2 * ARRAY_SIZE(intel_saved) + 1);
		assert_int_equal(tacho_msr_set_entry(saved, tacho_msr_set_count(saved) - 1, &e), 0);
		assert_int_equal(e.cpu, 2);
		snprintf(want, sizeof(want), "no %s/2/msr", f.dir);
		assert_non_null(strstr(e.why, want));
		tacho_msr_set_free(saved);
	}
	/* a processor tacho cannot name has nothing to save */
	{
		const struct tacho_msr_cpu nobody = { TACHO_VENDOR_UNKNOWN, 0, 0, false };
		struct tacho_msr_dev *d2 = dev_on(&f, &nobody);
		assert_int_equal(tacho_msr_save_read(d2, cpus, 2, &saved), -TACHO_EMSRCPU);
		assert_null(saved);
		tacho_msr_dev_free(d2);
	}
	tacho_msr_set_free(report);
	free(text);
	free(snap[0]);
	free(snap[1]);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
}

/* AMD's set lives above 3 GiB: the sparse files hold it all the same. */
static void test_round_trip_amd(void **state)
{
	struct th_msr_fake f;
	struct tacho_msr_dev *dev;
	struct tacho_msr_set *saved, *report;
	const int cpus[] = { 0 };
	char *text, *again;
	(void)state;

	th_msr_fake_new(&f, 1, 0xc0010300);
	th_msr_poke(&f, 0, 0xc0010200, 0x530076);
	th_msr_poke(&f, 0, 0xc0010201, 0x0000ffffffffffffull);
	th_msr_poke(&f, 0, 0xc001020b, 5);
	th_msr_poke(&f, 0, 0xc0010003, 0x5300c0);
	dev = dev_on(&f, &zen3);
	assert_int_equal(tacho_msr_save_read(dev, cpus, 1, &saved), 0);
	/* PerfEvtSel0-3, PerfCtr0-3, PERF_CTL/CTR0-5 */
	assert_int_equal(tacho_msr_set_count(saved), 4 + 4 + 12);
	text = save_text(saved);
	assert_contains(text, "processor AMD 0x19 0x1\n");
	assert_contains(text, "\n0 AMD_PERFEVTSEL3 0xc0010003 0x00000000005300c0\n");
	assert_contains(text, "\n0 PERF_CTL0 0xc0010200 0x0000000000530076\n"
			"0 PERF_CTR0 0xc0010201 0x0000ffffffffffff\n"
			"0 PERF_CTL1 0xc0010202 0x0000000000000000\n");
	assert_contains(text, "\n0 PERF_CTR5 0xc001020b 0x0000000000000005\n");
	th_msr_poke(&f, 0, 0xc0010200, 0);
	th_msr_poke(&f, 0, 0xc0010201, 12);
	assert_int_equal(tacho_msr_set_new(0, &report), 0);
	assert_int_equal(tacho_msr_restore(dev, saved, TACHO_MSR_FORCE, report), 0);
	assert_int_equal(th_msr_peek(&f, 0, 0xc0010200), 0x530076);
	assert_int_equal(th_msr_peek(&f, 0, 0xc0010201), 0x0000ffffffffffffull);
	tacho_msr_set_free(saved);
	assert_int_equal(tacho_msr_save_read(dev, cpus, 1, &saved), 0);
	again = save_text(saved);
	assert_string_equal(again, text);
	free(again);
	free(text);
	tacho_msr_set_free(saved);
	tacho_msr_set_free(report);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
}

/* --- malformed save files, each named by its line --- */

#define HEAD "tacho-msr-save 1\nprocessor Intel 0x6 0x55\n"

static const struct {
	int line;
	const char *text;
	int err;
	unsigned at;                /* the line of the file the diagnostic names */
	const char *message;
	size_t n;                   /* entries when it parses */
} files[] = {
	{ __LINE__, HEAD, 0, 0, NULL, 0 },
	{ __LINE__, "# a comment first\n\n" HEAD "0 IA32_PMC0 0xc1 0x0000000000000001\n", 0, 0,
	  NULL, 1 },
	{ __LINE__, HEAD "0 IA32_PMC0 0xc1 0x0000000000000001\r\n1 IA32_PMC0 0xc1 absent", 0, 0,
	  NULL, 2 },
	{ __LINE__, "", -TACHO_EEMPTY, 0, "empty: no 'tacho-msr-save' line", 0 },
	{ __LINE__, "# only a comment\n", -TACHO_EEMPTY, 0, "empty", 0 },
	{ __LINE__, "hello\n", -TACHO_EPARSE, 1, "not a tacho msr save file", 0 },
	{ __LINE__, "tacho-msr-save 2\n", -TACHO_EVERSION, 1, "version 2 of the save format", 0 },
	{ __LINE__, "tacho-msr-save 1\n", -TACHO_ETRUNC, 1, "no 'processor' line", 0 },
	{ __LINE__, "tacho-msr-save 1\nprocessor Acme 0x6 0x55\n", -TACHO_EPARSE, 2,
	  "unknown vendor 'Acme'", 0 },
	{ __LINE__, "tacho-msr-save 1\nprocessor Intel 6 0x55\n", -TACHO_EPARSE, 2,
	  "bad family or model '6 0x55' (hex, with 0x)", 0 },
	{ __LINE__, "tacho-msr-save 1\ncpu Intel 0x6 0x55\n", -TACHO_EPARSE, 2,
	  "expected 'processor VENDOR 0xFAMILY 0xMODEL'", 0 },
	{ __LINE__, HEAD "0 IA32_PMC9 0xca 0x0000000000000000\n", -TACHO_EPARSE, 3,
	  "tacho knows no register 'IA32_PMC9'", 0 },
	{ __LINE__, HEAD "0 ia32_pmc0 0xc1 0x0000000000000000\n", -TACHO_EPARSE, 3,
	  "tacho knows no register 'ia32_pmc0'", 0 },
	{ __LINE__, HEAD "0 IA32_PMC0 0xc2 0x0000000000000000\n", -TACHO_EPARSE, 3,
	  "IA32_PMC0 is at 0xc1, not '0xc2'", 0 },
	{ __LINE__, HEAD "0 IA32_TIME_STAMP_COUNTER 0x10 0x0000000000000000\n", -TACHO_EPARSE, 3,
	  "IA32_TIME_STAMP_COUNTER is not one tacho saves for this processor", 0 },
	{ __LINE__, HEAD "0 IA32_PERF_GLOBAL_OVF_CTRL 0x390 0x0000000000000000\n", -TACHO_EPARSE,
	  3, "is not one tacho saves", 0 },
	{ __LINE__, HEAD "0 PERF_CTL0 0xc0010200 0x0000000000000000\n", -TACHO_EPARSE, 3,
	  "PERF_CTL0 is not one tacho saves for this processor", 0 },
	{ __LINE__, HEAD "0 IA32_PMC0 0xc1 0x000000000000000A\n", -TACHO_EPARSE, 3,
	  "bad value '0x000000000000000A'", 0 },
	{ __LINE__, HEAD "0 IA32_PMC0 0xc1 0x1\n", -TACHO_EPARSE, 3, "16 lower-case hex digits",
	  0 },
	{ __LINE__, HEAD "0 IA32_PERFEVTSEL0 0x186 0x8000000000000000\n", -TACHO_EPARSE, 3,
	  "0x8000000000000000 sets bits IA32_PERFEVTSEL0 reserves", 0 },
	{ __LINE__, HEAD "0 IA32_PMC0 0xc1 0x0000000000000000\n0 IA32_PMC0 0xc1 absent\n",
	  -TACHO_EPARSE, 4, "IA32_PMC0 of CPU 0 is saved twice", 0 },
	{ __LINE__, HEAD "x IA32_PMC0 0xc1 0x0000000000000000\n", -TACHO_EPARSE, 3,
	  "bad CPU number 'x'", 0 },
	{ __LINE__, HEAD "65536 IA32_PMC0 0xc1 0x0000000000000000\n", -TACHO_EPARSE, 3,
	  "bad CPU number", 0 },
	{ __LINE__, HEAD "0 IA32_PMC0 0xc1\n", -TACHO_EPARSE, 3,
	  "expected 'CPU REGISTER 0xADDRESS 0xVALUE'", 0 },
	{ __LINE__, HEAD "0 IA32_PMC0 0xc1 0x0000000000000000 extra\n", -TACHO_EPARSE, 3,
	  "expected 'CPU REGISTER", 0 },
};

static void test_parse_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		struct tacho_msr_set *set = (struct tacho_msr_set *)&set;
		struct tacho_diag d = { .sz = sizeof(d) };
		int err;

		err = tacho_msr_save_parse(files[i].text, strlen(files[i].text), "f", &set, &d);
		if (err != files[i].err)
			fail_msg("line %d: gives %d, want %d (%s)", files[i].line, err, files[i].err,
				 d.message);
		if (err) {
			assert_null(set);
			if (!strstr(d.message, files[i].message) || d.line != files[i].at)
				fail_msg("line %d: \"%s\" at line %u, want \"%s\" at %u", files[i].line,
					 d.message, d.line, files[i].message, files[i].at);
			assert_string_equal(d.source, "f");
			continue;
		}
		assert_int_equal(tacho_msr_set_count(set), files[i].n);
		tacho_msr_set_free(set);
	}
	/* a NUL inside, and text that is not terminated where len ends */
	{
		static const char nul[] = HEAD "0 IA32_PMC0 0xc1 0x00000000\0" "00000000\n";
		struct tacho_msr_set *set;
		struct tacho_diag d = { .sz = sizeof(d) };
		assert_int_equal(tacho_msr_save_parse(nul, sizeof(nul) - 1, NULL, &set, &d),
				 -TACHO_EPARSE);
		assert_int_equal(d.line, 3);
		assert_string_equal(d.source, "the save file");
		assert_int_equal(tacho_msr_save_parse(HEAD "0 IA32_PMC0 0xc1 0x00000000000000011",
						      strlen(HEAD) + 35, "f", &set, NULL), 0);
		tacho_msr_set_free(set);
	}
	assert_int_equal(tacho_msr_save_parse(NULL, 3, NULL, NULL, NULL), -EINVAL);
	{
		struct tacho_msr_set *plain;
		struct tacho_msr_cpu cpu;
		assert_int_equal(tacho_msr_set_new(0, &plain), 0);
		assert_int_equal(tacho_msr_set_processor(plain, &cpu), -TACHO_ENOVALUE);
		assert_int_equal(tacho_msr_save_write(plain, stdout), -EINVAL);
		tacho_msr_set_free(plain);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_amd),
		cmocka_unit_test(test_parse_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
