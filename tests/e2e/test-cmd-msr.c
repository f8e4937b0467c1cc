/* test-cmd-msr.c - `tacho msr` end to end: on this machine (no /dev/cpu/N/msr: exit 1
 * with the reason and the fix; the live reads skip with that reason), usage errors, and
 * every subcommand on fake device trees (read over CPUs, the JSON contract, a dry run
 * that writes nothing, a forced write read back, refusals, save and restore undoing an
 * experiment byte for byte, frequency and power); `tacho list -v` and `stat -v`; and
 * every example of docs/msr.md, run in one shell and compared with the page. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"
#include "json-check.h"
#include "msr-fake.h"
#include "tacho.h"
#include "util/util.h"

static const char *skylake(void)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s", th_path("tests/data/msr/skylake-x.cpuid"));
	return path;
}

/* --- this machine --- */

static void test_live(void **state)
{
	struct th_run r;
	uint64_t v1, v2;
	int fd;
	(void)state;

	th_tacho(&r, "msr", "read", "TSC", NULL);
	fd = open("/dev/cpu/0/msr", O_RDONLY);
	if (fd < 0) {
		int err = errno;
		/* the reason and the fix, in one line, and nothing on stdout */
		assert_int_equal(r.status, 1);
		assert_string_equal(r.out, "");
		assert_int_equal(th_count_lines(r.err), 1);
		assert_contains(r.err, "tacho: cannot read IA32_TIME_STAMP_COUNTER on CPU 0: ");
		if (err == ENOENT) {
			assert_contains(r.err, "no /dev/cpu/0/msr: ");
			assert_contains(r.err, access("/sys/module/msr", F_OK) ? "modprobe msr" :
					"although the msr driver is loaded");
			assert_contains(r.err, "(see 'tacho doctor')");
		}
		th_run_free(&r);
		TEST_SKIP("/dev/cpu/0/msr cannot be opened (%s): the msr driver is not loaded, or "
			  "this machine has none; the live reads are not tried", strerror(err));
	}
	close(fd);
	/* a live TSC: it moves forward between two reads */
	assert_int_equal(r.status, 0);
	assert_int_equal(sscanf(strstr(r.out, "0x"), "%" SCNx64, &v1), 1);
	th_run_free(&r);
	th_tacho(&r, "msr", "read", "TSC", "--csv", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(sscanf(strstr(strstr(r.out, "\nmsr"), "0x10,") + 5, "%" SCNx64, &v2), 1);
	assert_true(v2 > v1);
	th_run_free(&r);
}

/* --- usage --- */

static const struct {
	int line;
	const char *argv[8];
	int status;
	const char *err;
} usages[] = {
	{ __LINE__, { "msr" }, 2, "which subcommand?" },
	{ __LINE__, { "msr", "frob" }, 2, "unknown subcommand 'frob'" },
	{ __LINE__, { "msr", "read" }, 2, "read needs a register" },
	{ __LINE__, { "msr", "decode", "TSC" }, 2, "decode needs a register and a value" },
	{ __LINE__, { "msr", "save" }, 2, "save needs a file" },
	{ __LINE__, { "msr", "read", "TSC", "extra" }, 2, "unexpected argument 'extra'" },
	{ __LINE__, { "msr", "list", "a", "b" }, 2, "unexpected argument 'b'" },
	{ __LINE__, { "msr", "list", "-C", "0" }, 2, "-C and -a do not go with list" },
	{ __LINE__, { "msr", "read", "TSC", "-C", "0", "-a" }, 2, "-C and -a do not go together" },
	{ __LINE__, { "msr", "read", "TSC", "--force" }, 2, "--force goes with write and restore" },
	{ __LINE__, { "msr", "read", "TSC", "--all" }, 2, "--all goes with list" },
	{ __LINE__, { "msr", "read", "TSC", "-i", "5" }, 2, "-i goes with freq and power" },
	{ __LINE__, { "msr", "freq", "-i", "0" }, 2, "bad interval '0'" },
	{ __LINE__, { "msr", "save", "f", "--decode" }, 2, "--decode does not go with save" },
	{ __LINE__, { "msr", "save", "f", "--json" }, 2, "save writes its own format" },
	{ __LINE__, { "msr", "decode", "TSC", "0", "--device-dir", "x" }, 2,
	  "--device-dir and --sys-root do not go with decode" },
	{ __LINE__, { "msr", "read", "TSC", "--json", "--csv" }, 2, "choose one output format" },
	{ __LINE__, { "msr", "read", "TSC", "-C", "1-" }, 2, "bad CPU list '1-' at column 3" },
	{ __LINE__, { "msr", "read", "TSC", "--bogus" }, 2, "unknown option or missing value" },
	{ __LINE__, { "msr", "read", "186" }, 2, "'186' could be decimal or hex" },
	{ __LINE__, { "msr", "read", "APREF" }, 2, "(did you mean APERF?) (see 'tacho msr list')" },
	{ __LINE__, { "msr", "decode", "CESR", "es0=99" }, 2, "es0=99 does not fit in 6 bits" },
	{ __LINE__, { "msr", "decode", "TSC", "0", "--cpuid", "/nonexistent" }, 1,
	  "cannot load the CPUID dump '/nonexistent'" },
	/* with the real devices, the processor is this machine's */
	{ __LINE__, { "msr", "write", "CESR", "0", "--force", "--cpuid", "p5.cpuid" }, 2,
	  "--cpuid names the processor of a fake tree: it goes with --device-dir" },
	{ __LINE__, { "msr", "restore", "f", "--force", "--cpuid", "p5.cpuid" }, 2,
	  "--cpuid names the processor of a fake tree: it goes with --device-dir" },
	{ __LINE__, { "msr", "read", "CESR", "--cpuid", "p5.cpuid" }, 2,
	  "--cpuid names the processor of a fake tree: it goes with --device-dir" },
	{ __LINE__, { "msr", "save", "f", "--cpuid", "p5.cpuid" }, 2,
	  "--cpuid names the processor of a fake tree: it goes with --device-dir" },
	{ __LINE__, { "msr", "freq", "--cpuid", "p5.cpuid" }, 2,
	  "--cpuid names the processor of a fake tree: it goes with --device-dir" },
};

static void test_usage(void **state)
{
	struct th_run r;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(usages); i++) {
		char *argv[12];
		size_t n = 0;

		argv[n++] = (char *)th_tacho_bin();
		for (size_t k = 0; usages[i].argv[k] && n < 10; k++)
			argv[n++] = (char *)usages[i].argv[k];
		argv[n] = NULL;
		th_runv(&r, NULL, argv);
		if (r.status != usages[i].status || !strstr(r.err, usages[i].err))
			fail_msg("line %d: exit %d, stderr:\n%s", usages[i].line, r.status, r.err);
		/* usage errors repeat the usage; the others are one line */
		if (r.status == 2 && strstr(usages[i].err, "tacho msr list") == NULL &&
		    !strstr(r.err, "usage: tacho msr") && !strstr(r.err, "tacho: "))
			fail_msg("line %d: neither a usage nor a one-line error:\n%s", usages[i].line,
				 r.err);
		th_run_free(&r);
	}
	th_tacho(&r, "msr", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho msr list");
	assert_contains(r.out, "--device-dir <dir>");
	th_run_free(&r);
	th_tacho(&r, "help", "msr", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "exit status: 0 done");
	th_run_free(&r);
}

/* --- fake trees --- */

static void test_fake_tree(void **state)
{
	struct th_msr_fake f;
	struct th_run r;
	struct th_json *j;
	char *before, *after, dir[160];
	size_t len, len2;
	(void)state;

	th_msr_fake_new(&f, 3, 0x1000);
	snprintf(dir, sizeof(dir), "%s", f.dir);
	th_msr_poke(&f, 0, 0x186, 0x4300c0);
	th_msr_poke(&f, 2, 0x186, 0x41412e);
	th_msr_poke(&f, 1, 0x10, 123456789);

	/* -C over CPUs, JSON: the per-CPU object */
	th_tacho(&r, "msr", "read", "IA32_PERFEVTSEL0", "-C", "0,2", "--json", "--device-dir", dir,
		 "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_json_int(j, "msrs[0].cpu", 0);
	assert_json_str(j, "msrs[0].name", "IA32_PERFEVTSEL0");
	assert_json_int(j, "msrs[0].address", 390);
	assert_json_int(j, "msrs[0].value", 4391104);
	assert_json_str(j, "msrs[0].fields[0].name", "event");
	assert_json_int(j, "msrs[0].fields[0].value", 192);
	assert_json_int(j, "msrs[1].cpu", 2);
	assert_json_str(j, "msrs[1].fields[0].meaning",
			"last-level cache misses (architectural event, umask 0x41)");
	assert_null(th_json_get(j, "msrs[2]"));
	th_json_free(j);
	th_run_free(&r);
	/* -a: every CPU with a device, by address; a raw address the table does not know */
	th_tacho(&r, "msr", "read", "10h", "-a", "--device-dir", dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "cpu  register                 address  value\n"
			    "0    IA32_TIME_STAMP_COUNTER  0x10     0x0000000000000000\n"
			    "1    IA32_TIME_STAMP_COUNTER  0x10     0x00000000075bcd15\n"
			    "2    IA32_TIME_STAMP_COUNTER  0x10     0x0000000000000000\n");
	th_run_free(&r);
	th_tacho(&r, "msr", "read", "0x123", "--decode", "--device-dir", dir, "--cpuid", skylake(),
		 NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "CPU 0 MSR 0x123 = 0x0000000000000000\n");
	th_run_free(&r);

	/* a dry run writes nothing and says what it would have written */
	before = th_msr_fake_snapshot(&f, 1, &len);
	th_tacho(&r, "msr", "write", "PerfEvtSel0", "en=1,usr=1,event=0x3c", "-C", "1",
		 "--device-dir", dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "0x000000000041003c  0x0000000000000000  not written: ");
	assert_contains(r.err, "tacho: not writing IA32_PERFEVTSEL0: a write changes what the CPU "
			"does for every program on it (add --force)\n");
	th_run_free(&r);
	after = th_msr_fake_snapshot(&f, 1, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(before, after, len);
	free(before);
	free(after);
	/* forced: written on each CPU, read back */
	th_tacho(&r, "msr", "write", "PerfEvtSel0", "en=1,usr=1,event=0x3c", "-C", "1-2", "--force",
		 "--device-dir", dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "cpu  register          address  before              written"
			    "             now\n"
			    "1    IA32_PERFEVTSEL0  0x186    0x0000000000000000  0x000000000041003c"
			    "  0x000000000041003c\n"
			    "2    IA32_PERFEVTSEL0  0x186    0x000000000041412e  0x000000000041413c"
			    "  0x000000000041413c\n");
	assert_string_equal(r.err, "");
	th_run_free(&r);
	assert_int_equal(th_msr_peek(&f, 1, 0x186), 0x41003c);
	assert_int_equal(th_msr_peek(&f, 2, 0x186), 0x41413c);
	/* refused: a register tacho does not write, an address the table does not know */
	th_tacho(&r, "msr", "write", "IA32_MPERF", "0", "--force", "--device-dir", dir,
		 "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot write IA32_MPERF: tacho does not write this register: "
			"the kernel reads APERF and MPERF");
	th_run_free(&r);
	th_tacho(&r, "msr", "write", "0x123", "0", "--force", "--device-dir", dir, "--cpuid",
		 skylake(), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot write MSR 0x123: tacho writes only registers its table");
	th_run_free(&r);
	/* a device the kernel filters: EPERM, explained */
	assert_int_equal(chmod(th_msr_fake_path(&f, 2), 0444), 0);
	th_tacho(&r, "msr", "write", "IA32_PMC1", "5", "-a", "--force", "--device-dir", dir,
		 "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot write IA32_PMC1 on CPU 2: ");
	assert_contains(r.err, "is read-only: this device filters writes");
	/* CPUs 0 and 1 were written before CPU 2 refused: the table says so */
	assert_contains(r.out, "0    IA32_PMC1  0xc2     0x0000000000000000  0x0000000000000005"
			"  0x0000000000000005\n");
	th_run_free(&r);
	assert_int_equal(chmod(th_msr_fake_path(&f, 2), 0644), 0);
	th_msr_fake_free(&f);
}

/* --cpuid is a fake tree's processor: never the one of the real devices. /dev/cpu with
 * --cpuid is refused; a device of a fake tree that is a link to a real one (here
 * /dev/null) is not opened for it; a save of a Pentium's registers is refused by the
 * real devices, whose processor is this machine's. */
static void test_cpuid_real_devices(void **state)
{
	const char *p5 = th_path("tests/data/msr/pentium.cpuid");
	struct th_msr_fake f;
	struct th_run r;
	char dir[160], a[256], p5copy[4096];
	(void)state;

	snprintf(p5copy, sizeof(p5copy), "%s", p5);
	th_tacho(&r, "msr", "write", "CESR", "0", "--force", "--device-dir", "/dev/cpu", "--cpuid",
		 p5copy, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot use the msr devices of /dev/cpu with --cpuid: they "
			"are this machine's");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);

	th_msr_fake_new(&f, 1, 0x400);
	snprintf(dir, sizeof(dir), "%s", f.dir);
	snprintf(a, sizeof(a), "%s/p5.txt", f.root);
	th_tacho(&r, "msr", "save", a, "--device-dir", dir, "--cpuid", p5copy, NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	/* the save is a Pentium's: this machine is not one, and says so before any device */
	th_tacho(&r, "msr", "restore", a, "--force", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "it was saved on Intel family 0x5 model 0x2, and this is ");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
	/* CPU 0's device a link to a real one */
	assert_int_equal(unlink(th_msr_fake_path(&f, 0)), 0);
	assert_int_equal(symlink("/dev/null", th_msr_fake_path(&f, 0)), 0);
	th_tacho(&r, "msr", "write", "CESR", "0", "--force", "--device-dir", dir, "--cpuid", p5copy,
		 NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "/0/msr is not a file of the fake tree but a device");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
	th_tacho(&r, "msr", "restore", a, "--force", "--device-dir", dir, "--cpuid", p5copy, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "/0/msr is not a file of the fake tree but a device");
	th_run_free(&r);
	th_msr_fake_free(&f);
}

/* restore reads a regular file only: a FIFO nobody writes is refused at once (it was
 * waited on for ever), and so are a directory and a device. */
static void test_restore_not_regular(void **state)
{
	const char *fifo = th_tmp("save.fifo");
	struct th_msr_fake f;
	struct th_proc p;
	char dir[160], *err;
	(void)state;

	th_msr_fake_new(&f, 1, 0x400);
	snprintf(dir, sizeof(dir), "%s", f.dir);
	unlink(fifo);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	{
		char *argv[] = { (char *)th_tacho_bin(), (char *)"msr", (char *)"restore",
				 (char *)fifo, (char *)"--force", (char *)"--device-dir", dir,
				 (char *)"--cpuid", (char *)skylake(), NULL };
		th_spawn(&p, "restore-fifo", argv);
	}
	/* a deadline for answering at all */
	if (!th_proc_wait(&p, 20)) {
		th_proc_end(&p);
		fail_msg("msr restore of a FIFO still waits after 20 s");
	}
	assert_int_equal(p.status, 1);
	err = th_slurp(p.err);
	assert_contains(err, "tacho: cannot read '");
	assert_contains(err, "it is not a regular file (a FIFO, a device)");
	assert_int_equal(th_count_lines(err), 1);
	free(err);
	{
		struct th_run r;
		th_tacho(&r, "msr", "restore", "/dev/null", "--force", "--device-dir", dir, "--cpuid",
			 skylake(), NULL);
		assert_int_equal(r.status, 1);
		assert_contains(r.err, "it is not a regular file");
		th_run_free(&r);
		th_tacho(&r, "msr", "restore", dir, "--force", "--device-dir", dir, "--cpuid",
			 skylake(), NULL);
		assert_int_equal(r.status, 1);
		assert_contains(r.err, "Is a directory");
		th_run_free(&r);
	}
	unlink(fifo);
	th_msr_fake_free(&f);
}

static void test_save_restore(void **state)
{
	struct th_msr_fake f;
	struct th_run r;
	char dir[160], a[256], b[256], *snap[2], *now, *ta, *tb;
	size_t len[2], nlen, la, lb;
	(void)state;

	th_msr_fake_new(&f, 2, 0x400);
	snprintf(dir, sizeof(dir), "%s", f.dir);
	snprintf(a, sizeof(a), "%s/a.txt", f.root);
	snprintf(b, sizeof(b), "%s/b.txt", f.root);
	th_msr_poke(&f, 0, 0x186, 0x4300c0);
	th_msr_poke(&f, 1, 0x38f, 0x70000000f);
	th_msr_poke(&f, 1, 0xc1, 0xdeadbeef);
	th_tacho(&r, "msr", "save", a, "--device-dir", dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "saved 44 values of 2 CPUs to ");
	th_run_free(&r);
	snap[0] = th_msr_fake_snapshot(&f, 0, &len[0]);
	snap[1] = th_msr_fake_snapshot(&f, 1, &len[1]);
	/* the experiment */
	th_tacho(&r, "msr", "write", "IA32_PERF_GLOBAL_CTRL", "0", "-a", "--force", "--device-dir",
		 dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	th_tacho(&r, "msr", "write", "IA32_PERFEVTSEL0", "en=0", "-a", "--force", "--device-dir",
		 dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	/* not forced; another processor: refused, nothing written */
	th_tacho(&r, "msr", "restore", a, "--device-dir", dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "not restoring 44 values from");
	th_run_free(&r);
	th_tacho(&r, "msr", "restore", a, "--force", "--device-dir", dir, "--cpuid",
		 th_path("tests/data/msr/zen3.cpuid"), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "it was saved on Intel family 0x6 model 0x55, and this is AMD "
			"family 0x19 model 0x1");
	th_run_free(&r);
	assert_int_equal(th_msr_peek(&f, 1, 0x38f), 0);
	/* restored: every byte of both devices as it was */
	th_tacho(&r, "msr", "restore", a, "--force", "--json", "--device-dir", dir, "--cpuid",
		 skylake(), NULL);
	assert_int_equal(r.status, 0);
	{
		struct th_json *j = assert_json(r.out);
		assert_json_int(j, "msrs[0].cpu", 0);
		assert_json_str(j, "msrs[0].name", "IA32_PMC0");
		assert_json_type(j, "msrs[43].write_made", TH_JSON_BOOL);
		assert_json_int(j, "msrs[43].before", 0);
		assert_json_int(j, "msrs[43].written", 0x70000000f);
		assert_json_int(j, "msrs[43].value", 0x70000000f);
		assert_null(th_json_get(j, "msrs[44]"));
		th_json_free(j);
	}
	th_run_free(&r);
	for (int c = 0; c < 2; c++) {
		now = th_msr_fake_snapshot(&f, c, &nlen);
		assert_int_equal(nlen, len[c]);
		if (memcmp(now, snap[c], nlen))
			fail_msg("CPU %d's device differs from before the experiment", c);
		free(now);
		free(snap[c]);
	}
	/* saved again: the same file */
	th_tacho(&r, "msr", "save", b, "--device-dir", dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	assert_int_equal(th_read_data(a, &ta, &la), 0);
	assert_int_equal(th_read_data(b, &tb, &lb), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(ta, tb, la);
	free(ta);
	free(tb);
	/* a broken file is named by its line */
	{
		FILE *fp = fopen(b, "w");
		assert_non_null(fp);
		fputs("tacho-msr-save 1\nprocessor Intel 0x6 0x55\n0 IA32_PMC0 0xc1 0x1\n", fp);
		fclose(fp);
	}
	th_tacho(&r, "msr", "restore", b, "--force", "--device-dir", dir, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "b.txt:3: bad value '0x1'");
	th_run_free(&r);
	/* no device at all: save says why */
	th_tacho(&r, "msr", "save", b, "--device-dir", "/nonexistent/tree", "--cpuid", skylake(),
		 NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "cannot find the CPUs' msr devices: no /nonexistent/tree/0/msr");
	th_run_free(&r);
	th_msr_fake_free(&f);
}

static void test_rates(void **state)
{
	struct th_msr_fake f;
	struct th_run r;
	struct th_json *j;
	char dir[160];
	(void)state;

	th_msr_fake_new(&f, 2, 0x1000);
	snprintf(dir, sizeof(dir), "%s", f.dir);
	th_msr_poke(&f, 0, 0x606, 0xa0e03);
	/* the fake's counters stand still: no frequency (said why), 0 W (measured) */
	th_tacho(&r, "msr", "freq", "-i", "1", "--json", "--device-dir", dir, "--cpuid", skylake(),
		 NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_json_int(j, "interval_ms", 1);
	assert_json_str(j, "measured[0]", "freq");
	assert_json_int(j, "cpus[1].cpu", 1);
	assert_json_type(j, "cpus[0].busy_mhz", TH_JSON_NULL);
	assert_json_str(j, "cpus[0].freq_error", "the TSC did not advance over the interval (a "
			"fake device, or a stopped clock)");
	th_json_free(j);
	th_run_free(&r);
	th_tacho(&r, "msr", "power", "-i", "1", "--device-dir", dir, "--cpuid", skylake(), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "power over 1 ms (RAPL energy counters):\n\n  cpu  seconds  package W"
			"  pp0 W  pp1 W  dram W  core W\n  0   ");
	assert_contains(r.out, "      0.000  0.000  0.000   0.000       -\n");
	th_run_free(&r);
	/* a CPU without a device: one line why, exit 1, the others still shown */
	th_tacho(&r, "msr", "freq", "-C", "0,4", "-i", "1", "--device-dir", dir, "--cpuid",
		 skylake(), NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot read the frequency registers on CPU 4: no ");
	assert_contains(r.out, "\n  0   ");
	th_run_free(&r);
	th_msr_fake_free(&f);
}

static void test_list(void **state)
{
	struct th_run r;
	struct th_json *j;
	(void)state;

	th_tacho(&r, "msr", "list", "--all", "--json", NULL);
	assert_int_equal(r.status, 0);
	j = assert_json(r.out);
	assert_json_str(j, "msrs[0].name", "IA32_TIME_STAMP_COUNTER");
	assert_int_equal(th_json_get(j, "msrs")->n, tacho_msr_count());
	th_json_free(j);
	th_run_free(&r);
	th_tacho(&r, "msr", "list", "--cpuid", th_path("tests/data/msr/zen3.cpuid"), NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "\nPERF_CTL5 ");
	assert_contains(r.out, "\nAMD_PSTATE_DEF7 ");
	assert_not_contains(r.out, "IA32_PERFEVTSEL0");
	assert_not_contains(r.out, "CESR");
	th_run_free(&r);
	th_tacho(&r, "msr", "list", "--cpuid", th_path("tests/data/msr/pentium-ii.cpuid"), "*SEL*",
		 NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(th_count_lines(r.out), 3);
	assert_contains(r.out, "\nP6_PERFEVTSEL0 ");
	th_run_free(&r);
	th_tacho(&r, "msr", "list", "nothing_is_named_so", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "");
	assert_contains(r.err, "no register");
	assert_contains(r.err, "matches 'nothing_is_named_so'");
	th_run_free(&r);
}

/* list -v and stat -v: the event-select view, on whatever processor this is */
static void test_verbose_events(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "list", "-v", "r1a8,page-faults", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "what perf programs for these events on ");
	assert_contains(r.out, "nothing is written):\n\n");
	assert_contains(r.out, "page-faults (type 1, config 0x2): an event of the PMU 'software' "
			"(type 1), not of the core counters: no event-select register holds it\n");
	if (strstr(r.out, "r1a8 (type 4, config 0x1a8): ")) {
		/* Intel's IA32_PERFEVTSEL0 and AMD's PERF_CTL0 agree on these fields */
		assert_contains(r.out, "    event ");
		assert_contains(r.out, "0xa8");
		assert_contains(r.out, "    umask ");
		assert_contains(r.out, "    usr            16     1  counts in user mode\n");
	}
	th_run_free(&r);
	th_tacho(&r, "list", "-v", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "-v needs events");
	th_run_free(&r);
	th_tacho(&r, "list", "-v", "no::such::event", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho: bad event list: ");
	th_run_free(&r);
	th_tacho(&r, "stat", "-v", "-e", "page-faults", "--", "true", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.err, "what perf programs for this event on ");
	assert_contains(r.err, "page-faults (type 1, config 0x2): an event of the PMU 'software'");
	assert_contains(r.err, "page-faults");
	th_run_free(&r);
}

/* --- docs/msr.md: its usage and options are the help's; its examples run as shown --- */

static char *block_after(const char *text, const char *heading)
{
	const char *p = strstr(text, heading), *end;

	if (!p)
		fail_msg("docs/msr.md has no %s", heading);
	p = strstr(p, "```\n");
	assert_non_null(p);
	p += 4;
	end = strstr(p, "```");
	assert_non_null(end);
	return strndup(p, (size_t)(end - p));
}

static void test_docs(void **state)
{
	char *page, *help_usage, *doc_usage, *doc_opts, *script, *cmds[128];
	char *expect[128], tmp[] = "/tmp/tacho-msr-docs.XXXXXX", link[4200], path[8192];
	size_t len, ncmds = 0;
	struct tc_sb sb = TC_SB_INIT;
	const char *p, *bin = th_tacho_bin();
	struct th_run r;
	(void)state;

	assert_int_equal(th_read_data(th_path("docs/msr.md"), &page, &len), 0);
	th_tacho(&r, "msr", "--help", NULL);
	help_usage = strndup(r.out, (size_t)(strstr(r.out, "\n\n") - r.out + 1));
	doc_usage = block_after(page, "# tacho msr");
	assert_string_equal(doc_usage, help_usage);
	doc_opts = block_after(page, "## Options");
	assert_non_null(strstr(r.out, doc_opts));
	th_run_free(&r);
	free(help_usage);
	free(doc_usage);
	free(doc_opts);

	/* the ```console blocks: "$ command" lines, each followed by what it prints */
	for (p = strstr(page, "\n```console\n"); p; p = strstr(p, "\n```console\n")) {
		const char *end = strstr(p + 12, "\n```\n");
		const char *l = p + 12;

		assert_non_null(end);
		while (l <= end) {
			const char *nl = strchr(l, '\n');
			if (!strncmp(l, "$ ", 2)) {
				assert_true(ncmds < ARRAY_SIZE(cmds));
				cmds[ncmds] = strndup(l + 2, (size_t)(nl - l - 2));
				expect[ncmds++] = strdup("");
			} else if (ncmds) {
				size_t el = strlen(expect[ncmds - 1]), ll = (size_t)(nl - l) + 1;
				expect[ncmds - 1] = realloc(expect[ncmds - 1], el + ll + 1);
				memcpy(expect[ncmds - 1] + el, l, ll);
				expect[ncmds - 1][el + ll] = '\0';
			}
			l = nl + 1;
		}
		p = end;
	}
	assert_true(ncmds > 20);
	/* one shell, in order, in an empty folder with tests/ beside it, tacho on the PATH */
	assert_non_null(mkdtemp(tmp));
	snprintf(link, sizeof(link), "%s/tests", tmp);
	assert_int_equal(symlink(th_path("tests"), link), 0);
	for (size_t i = 0; i < ncmds; i++)
		tc_sb_addf(&sb, "echo '@@@ %zu'\n{ %s\n} 2>&1\n", i, cmds[i]);
	script = tc_sb_detach(&sb);
	assert_non_null(script);
	{
		char dirbin[4096], *slash;
		snprintf(dirbin, sizeof(dirbin), "%s", bin);
		slash = strrchr(dirbin, '/');
		if (slash)
			*slash = '\0';
		if (dirbin[0] != '/') {
			char cwd[2048];
			assert_non_null(getcwd(cwd, sizeof(cwd)));
			snprintf(path, sizeof(path), "cd %s && PATH=%s/%s:$PATH sh -c \"$0\"", tmp, cwd,
				 slash ? dirbin : ".");
		} else {
			snprintf(path, sizeof(path), "cd %s && PATH=%s:$PATH sh -c \"$0\"", tmp, dirbin);
		}
	}
	{
		char *argv[] = { (char *)"sh", (char *)"-c", path, script, NULL };
		th_runv(&r, NULL, argv);
	}
	for (size_t i = 0; i < ncmds; i++) {
		char mark[32], next[32];
		const char *a, *b;

		snprintf(mark, sizeof(mark), "@@@ %zu\n", i);
		snprintf(next, sizeof(next), "@@@ %zu\n", i + 1);
		a = strstr(r.out, mark);
		if (!a)
			fail_msg("docs/msr.md: '%s' did not run:\n%s", cmds[i], r.out);
		a += strlen(mark);
		b = strstr(a, next);
		if (!b)
			b = a + strlen(a);
		if (strlen(expect[i]) != (size_t)(b - a) || strncmp(a, expect[i], (size_t)(b - a)))
			fail_msg("docs/msr.md: '%s' prints\n%.*s\nthe page says\n%s", cmds[i],
				 (int)(b - a), a, expect[i]);
	}
	th_run_free(&r);
	for (size_t i = 0; i < ncmds; i++) {
		free(cmds[i]);
		free(expect[i]);
	}
	free(script);
	free(page);
	{
		char *argv[] = { (char *)"rm", (char *)"-rf", tmp, NULL };
		th_runv(&r, NULL, argv);
		th_run_free(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_usage),
		cmocka_unit_test(test_fake_tree),
		cmocka_unit_test(test_save_restore),
		cmocka_unit_test(test_cpuid_real_devices),
		cmocka_unit_test_teardown(test_restore_not_regular, th_procs_teardown),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_verbose_events),
		cmocka_unit_test(test_docs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
