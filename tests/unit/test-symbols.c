/* test-symbols.c - symbolization: the x86-64 length decoder on known encodings, finding
 * the instruction before a trap's IP, ELF symbols, lines and build-ids of a helper
 * program built with -g, the vDSO from memory, kallsyms parsing, C++ names demangled
 * through libstdc++ loaded at run time; symbol versions (fopen@@GLIBC_2.2.5) matched
 * without them, and shown only where two differ, on glibc's own debug symbols. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/symbols.h"

static const struct {
	int line;
	const char *hex;      /* the bytes of one instruction (then padding bytes) */
	unsigned len;         /* 0: cannot be decoded */
} insns[] = {
	{ __LINE__, "90", 1 },                                 /* nop */
	{ __LINE__, "c3", 1 },                                 /* ret */
	{ __LINE__, "55", 1 },                                 /* push %rbp */
	{ __LINE__, "4889e5", 3 },                             /* mov %rsp,%rbp */
	{ __LINE__, "48890500000000", 7 },                     /* mov %rax,0(%rip) */
	{ __LINE__, "c744240400000000", 8 },                   /* movl $0,4(%rsp) */
	{ __LINE__, "48b80102030405060708", 10 },              /* movabs $imm64,%rax */
	{ __LINE__, "b801000000", 5 },                         /* mov $1,%eax */
	{ __LINE__, "66b80100", 4 },                           /* mov $1,%ax */
	{ __LINE__, "4883c001", 4 },                           /* add $1,%rax */
	{ __LINE__, "4881c400010000", 7 },                     /* add $0x100,%rsp */
	{ __LINE__, "e800000000", 5 },                         /* call rel32 */
	{ __LINE__, "666648e800000000", 8 },                   /* data16 data16 call rel32 */
	{ __LINE__, "eb05", 2 },                               /* jmp rel8 */
	{ __LINE__, "0f8400010000", 6 },                       /* je rel32 */
	{ __LINE__, "41ff24c4", 4 },                           /* jmp *(%r12,%rax,8) */
	{ __LINE__, "ff2500000000", 6 },                       /* jmp *0(%rip) */
	{ __LINE__, "0f1f440000", 5 },                         /* nopl 0(%rax,%rax,1) */
	{ __LINE__, "660f1f840000000000", 9 },                 /* nopw 0(%rax,%rax,1) */
	{ __LINE__, "f30f1efa", 4 },                           /* endbr64 */
	{ __LINE__, "f6c101", 3 },                             /* test $1,%cl */
	{ __LINE__, "f7c100010000", 6 },                       /* test $0x100,%ecx */
	{ __LINE__, "66f7c10001", 5 },                         /* test $0x100,%cx */
	{ __LINE__, "f7d8", 2 },                               /* neg %eax */
	{ __LINE__, "c20800", 3 },                             /* ret $8 */
	{ __LINE__, "c8100000", 4 },                           /* enter $0x10,$0 */
	{ __LINE__, "a10807060504030201", 9 },                 /* mov moffs64,%eax */
	{ __LINE__, "0f0b", 2 },                               /* ud2 */
	{ __LINE__, "0f05", 2 },                               /* syscall */
	{ __LINE__, "0fa2", 2 },                               /* cpuid */
	{ __LINE__, "0fb6c0", 3 },                             /* movzbl %al,%eax */
	{ __LINE__, "f3480fb8c0", 5 },                         /* popcnt %rax,%rax */
	{ __LINE__, "660f3a0fc108", 6 },                       /* palignr $8,%xmm1,%xmm0 */
	{ __LINE__, "660f3800c1", 5 },                         /* pshufb %xmm1,%xmm0 */
	{ __LINE__, "c5f877", 3 },                             /* vzeroupper */
	{ __LINE__, "c5fd6f0424", 5 },                         /* vmovdqa (%rsp),%ymm0 */
	{ __LINE__, "c4e37d18c101", 6 },                       /* vinsertf128 $1,%xmm1,%ymm0,%ymm0 */
	{ __LINE__, "62f17d487f442401", 8 },                   /* vmovdqa32 %zmm0,0x40(%rsp) */
	{ __LINE__, "f0480fb10a", 5 },                         /* lock cmpxchg %rcx,(%rdx) */
	{ __LINE__, "8b04250000000000", 7 },                   /* mov 0,%eax (SIB, no base) */
	/* AMD XOP: 8F with map 8 (imm8), 9 (none), 0Ah (imm32); 8F with map < 8 is pop */
	{ __LINE__, "8fe878c2ec0e", 6 },                       /* vprotd $0xe,%xmm4,%xmm5 */
	{ __LINE__, "8fe97880c1", 5 },                         /* vfrczps %xmm1,%xmm0 */
	{ __LINE__, "8fea7810c001000000", 9 },                 /* bextr $1,%eax,%eax */
	{ __LINE__, "8fc0", 2 },                               /* pop %rax */
	{ __LINE__, "8feb7810c0", 0 },                         /* XOP map 0Bh: undefined */
	/* REX.W wins over 66: the immediate stays 32 bits */
	{ __LINE__, "664881c001000000", 8 },                   /* data16 add $1,%rax */
	{ __LINE__, "6648c7c001000000", 8 },                   /* data16 mov $1,%rax */
	{ __LINE__, "6648f7c001000000", 8 },                   /* data16 test $1,%rax */
	{ __LINE__, "664869c001000000", 8 },                   /* data16 imul $1,%rax,%rax */
	{ __LINE__, "66480501000000", 7 },                     /* data16 add $1,%rax */
	{ __LINE__, "6648b80100000000000000", 11 },            /* data16 movabs $1,%rax */
	/* a REX that a legacy prefix follows is ignored but belongs to the instruction */
	{ __LINE__, "486689c0", 4 },                           /* rex.W; mov %ax,%ax */
	{ __LINE__, "48664881c001000000", 9 },                 /* the last REX counts */
	{ __LINE__, "4866c7c00100", 6 },                       /* ... and here none does */
	{ __LINE__, "06", 0 },                                 /* push %es: invalid in 64-bit */
	{ __LINE__, "48", 0 },                                 /* a REX prefix and nothing */
	{ __LINE__, "e8000000", 0 },                           /* cut short */
};

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;

	for (; s[0] && s[1]; s += 2) {
		unsigned v;
		sscanf(s, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static void test_insn_len(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(insns) / sizeof(insns[0]); i++) {
		uint8_t code[32];
		size_t n = unhex(insns[i].hex, code);
		unsigned got = tc_x86_insn_len(code, n);
		if (got != insns[i].len)
			fail_msg("line %d (%s): length %u, want %u", insns[i].line, insns[i].hex, got,
				 insns[i].len);
	}
}

static void test_prev_insn(void **state)
{
	/* mov $0,%eax; mov %rax,0(%rip); add $1,%rax; ret */
	uint8_t code[32];
	size_t n = unhex("b800000000" "48890500000000" "4883c001" "c3", code);
	uint64_t out = 0;
	(void)state;

	assert_int_equal(n, 17);
	/* the store ends at 0x100c: the trap reports 0x100c, the store starts at 0x1005 */
	assert_int_equal(tc_x86_prev_insn(code, n, 0x1000, 0x100c, &out), 0);
	assert_int_equal(out, 0x1005);
	assert_int_equal(tc_x86_prev_insn(code, n, 0x1000, 0x1005, &out), 0);
	assert_int_equal(out, 0x1000);
	/* not an instruction boundary, before the function, beyond the bytes */
	assert_int_equal(tc_x86_prev_insn(code, n, 0x1000, 0x1007, &out), -TACHO_EPARSE);
	assert_int_equal(tc_x86_prev_insn(code, n, 0x1000, 0x1000, &out), -TACHO_EPARSE);
	assert_int_equal(tc_x86_prev_insn(code, n, 0x1000, 0x1100, &out), -TACHO_EPARSE);
}

static void test_elf_symbols_lines(void **state)
{
	char path[1024];
	struct tc_symdso *d;
	struct tc_symloc sl;
	uint64_t start, size, addr;
	uint8_t bid[20], code[4096];
	const uint8_t *b;
	size_t blen, got, off = 0;
	int store_line = th_source_line("tests/progs/sample-bp.c", "STORE-LINE"), n;
	bool found = false;
	(void)state;

	snprintf(path, sizeof(path), "%s", th_prog("sample-bp"));
	if (access(path, R_OK))
		TEST_SKIP("%s is not built", path);
	assert_int_equal(tc_symdso_open(path, NULL, 0, &d), 0);
	/* build-id: the same through libdwfl and through libelf at record time */
	b = tc_symdso_build_id(d, &blen);
	assert_non_null(b);
	n = tc_build_id_of_file(path, bid, sizeof(bid));
	assert_int_equal(n, (int)blen);
	assert_memory_equal(b, bid, blen);

	assert_int_equal(tc_symdso_find(d, "store_loop", &start, &size), 0);
	assert_true(size > 0 && size < 200);
	assert_int_equal(tc_symdso_find(d, "no_such_function_here", &start, &size), -ENOENT);
	assert_int_equal(tc_symdso_find(d, "store_loop", &start, &size), 0);
	assert_int_equal(tc_symdso_lookup(d, start, &sl), 0);
	assert_string_equal(sl.symbol, "store_loop");
	assert_int_equal(sl.sym_start, start);
	assert_non_null(sl.file);
	assert_non_null(strstr(sl.file, "sample-bp.c"));
	assert_int_equal(tc_symdso_lookup(d, start + size - 1, &sl), 0);
	assert_string_equal(sl.symbol, "store_loop");

	/* decode the function: every instruction is in it, one of them on the store line */
	got = tc_symdso_read(d, start, code, (size_t)size);
	assert_int_equal(got, size);
	while (off < got) {
		unsigned len = tc_x86_insn_len(code + off, got - off);
		if (!len)
			fail_msg("undecodable byte at store_loop+%zu", off);
		tc_symdso_lookup(d, start + off, &sl);
		assert_string_equal(sl.symbol, "store_loop");
		found |= sl.line == store_line;
		off += len;
	}
	assert_int_equal(off, got);
	assert_true(found);

	/* a static, non-PIE file is mapped at 0x400000 from offset 0, so file offset and
	 * address differ by that base */
	assert_int_equal(tc_symdso_file_to_addr(d, start - 0x400000, &addr), 0);
	assert_int_equal(addr, start);
	assert_int_equal(tc_symdso_file_to_addr(d, 1ull << 40, &addr), -ENOENT);
	tc_symdso_free(d);

	assert_int_equal(tc_symdso_open("/nonexistent/binary", NULL, 0, &d), -ENOENT);
	assert_null(d);
	assert_int_equal(tc_symdso_open("/etc/hostname", NULL, 0, &d) < 0, 1);
}

/* The decoder against objdump (binutils), on the instruction boundaries of real code.
 * Where the two disagree by convention, not by error, the boundary is left out:
 * objdump prints a prefix that does not apply (a REX a legacy prefix follows, a prefix
 * before data) on a line of its own, where the CPU takes it as part of the next
 * instruction; it folds FWAIT (9B) into the x87 instruction after it ("fstcw"), which
 * the decoder reads as two (the boundary between them is then checked); it reads
 * "66 E9" as jmp rel16 as AMD does, where Intel's 64-bit mode ignores the 66; and "..."
 * (a run of zeros), "(bad)" and ".byte" are not instructions. */
static bool objdump_lone_prefix(const char *text)
{
	static const char *const prefixes[] = {
		"lock", "cs", "ds", "es", "ss", "fs", "gs", "addr32", "data16", "repz", "repnz",
		"rep", "bnd", "notrack", "xacquire", "xrelease",
	};
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		bool prefix = strncmp(t, "rex", 3) == 0;
		for (size_t i = 0; !prefix && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			prefix = strcmp(t, prefixes[i]) == 0;
		if (!prefix)
			return false;
	}
	return true;
}

struct od_count {
	size_t checked, wrong;
};

/* Compares the lengths in [start, stop) of .text, from the first function label on
 * (a window may begin inside an instruction). */
static void objdump_window(const char *path, struct tc_symdso *d, uint64_t start,
			   uint64_t stop, struct od_count *c)
{
	char cmd[1400], line[600];
	uint64_t *addrs = NULL;
	char (*text)[64] = NULL;
	bool *skip = NULL, labelled = false;
	size_t n = 0, cap = 0, got;
	uint8_t *code;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -d -w --no-show-raw-insn -j .text "
		 "--start-address=%#llx --stop-address=%#llx '%s' 2>/dev/null",
		 (unsigned long long)start, (unsigned long long)stop, path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *end, *tab;
		uint64_t a = strtoull(line, &end, 16);

		if (end != line && strstr(line, ">:"))
			labelled = true;
		if (strcmp(line, "\t...\n") == 0 && n)
			skip[n - 1] = true;   /* zeros objdump does not show */
		if (!labelled || end == line || *end != ':' || line[0] != ' ')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			text = realloc(text, cap * sizeof(*text));
			skip = realloc(skip, cap * sizeof(*skip));
			assert_true(addrs && text && skip);
		}
		tab = strchr(end, '\t');
		snprintf(text[n], sizeof(text[n]), "%s", tab ? tab + 1 : "");
		addrs[n] = a;
		skip[n] = strstr(line, "(bad)") || strstr(line, ".byte") ||
			  objdump_lone_prefix(text[n]) || !strncmp(text[n], "jmpw", 4) ||
			  !strncmp(text[n], "callw", 5);
		n++;
	}
	pclose(f);
	if (n < 2)
		goto out_free;
	code = malloc(addrs[n - 1] - addrs[0] + 16);
	assert_non_null(code);
	got = tc_symdso_read(d, addrs[0], code, addrs[n - 1] - addrs[0] + 16);
	assert_true(got >= addrs[n - 1] - addrs[0]);
	for (size_t i = 0; i + 1 < n; i++) {
		uint64_t want = addrs[i + 1] - addrs[i], off = addrs[i] - addrs[0];
		unsigned len;

		if (skip[i] || want > 15)
			continue;
		len = tc_x86_insn_len(code + off, got - off);
		if (len == 1 && code[off] == 0x9b && want > 1) {
			/* fwait, then the x87 instruction objdump joined to it */
			off++;
			want--;
			len = tc_x86_insn_len(code + off, got - off);
		}
		c->checked++;
		if (len != want && c->wrong++ < 10)
			print_message("%s at %#llx: decoded %u bytes, objdump %llu (%s)\n", path,
				      (unsigned long long)addrs[i], len, (unsigned long long)want,
				      text[i]);
	}
	free(code);
out_free:
	free(addrs);
	free(text);
	free(skip);
}

/* .text's address and size, from objdump's section headers. */
static bool objdump_text(const char *path, uint64_t *vma, uint64_t *size)
{
	char cmd[1200], line[512];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "objdump -h -w '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long sz, a;
		char name[64];
		if (sscanf(line, " %*d %63s %llx %llx", name, &sz, &a) == 3 &&
		    strcmp(name, ".text") == 0) {
			*vma = a;
			*size = sz;
			found = true;
		}
	}
	pclose(f);
	return found;
}

/* The path of the loaded object that holds fn. */
static const char *object_of(void *fn)
{
	Dl_info info;

	return dladdr(fn, &info) && info.dli_fname ? info.dli_fname : NULL;
}

static void test_insn_len_vs_objdump(void **state)
{
	/* Windows of .text keep the test to a few seconds: a file of more than 1 MiB of
	 * code is sampled in 4 windows of 256 KiB spread over it. */
	const uint64_t whole_max = 1 << 20, window = 256 << 10;
	double (*volatile libm_fn)(double) = cos;
	const char *files[] = {
		th_prog("sample-cpu"),
		object_of((void *)printf),
		object_of((void *)libm_fn),
		"/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
		"/usr/bin/perf",
	};
	struct od_count total = { 0 };
	size_t libs = 0;
	(void)state;

	if (system("objdump --version >/dev/null 2>&1") != 0)
		TEST_SKIP("objdump (binutils) is not installed");
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct od_count c = { 0 };
		struct tc_symdso *d;
		uint64_t vma, size;
		const char *path = files[i];

		if (!path || access(path, R_OK) != 0) {
			print_message("not checked: %s (%s)\n", path ? path : "libm",
				      path ? "not present" : "not found by dladdr");
			continue;
		}
		if (tc_symdso_open(path, NULL, 0, &d) != 0 || !objdump_text(path, &vma, &size)) {
			print_message("not checked: %s (not an ELF file with .text)\n", path);
			if (d)
				tc_symdso_free(d);
			continue;
		}
		if (size <= whole_max)
			objdump_window(path, d, vma, vma + size, &c);
		else
			for (uint64_t w = 0; w < 4; w++)
				objdump_window(path, d, vma + w * (size / 4),
					       vma + w * (size / 4) + window, &c);
		tc_symdso_free(d);
		print_message("%s: %zu instruction boundaries, %zu differ\n", path, c.checked,
			      c.wrong);
		libs += c.checked > 0;
		total.checked += c.checked;
		total.wrong += c.wrong;
	}
	if (total.wrong)
		fail_msg("%zu of %zu instruction lengths differ from objdump's", total.wrong,
			 total.checked);
	/* the helper program and libc at least: both are always there */
	assert_true(libs >= 2);
	assert_true(total.checked > 100000);
	print_message("%zu instruction lengths agree with objdump\n", total.checked);
}

static void test_vdso_image(void **state)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo = 0, hi = 0;
	struct tc_symdso *d;
	uint64_t start, size;
	struct tc_symloc sl;
	(void)state;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	fclose(f);
	if (!lo)
		TEST_SKIP("this process has no vDSO");
	assert_int_equal(tc_symdso_open("[vdso]", (const void *)lo, hi - lo, &d), 0);
	if (tc_symdso_find(d, "__vdso_clock_gettime", &start, &size) &&
	    tc_symdso_find(d, "clock_gettime", &start, &size))
		fail_msg("no clock_gettime in the vDSO");
	assert_int_equal(tc_symdso_lookup(d, start, &sl), 0);
	assert_non_null(sl.symbol);
	assert_non_null(strstr(sl.symbol, "clock_gettime"));
	tc_symdso_free(d);
}

/* An untyped label of hand-written assembly in code is a symbol: ld.so's _start (size
 * 0, STT_NOTYPE in libc6-dbg's debug file) names the addresses up to the next symbol,
 * as perf names them; a label inside a sized function takes nothing from it. */
static void test_asm_labels(void **state)
{
	const char *ld = "/lib64/ld-linux-x86-64.so.2";
	struct tc_symdso *d;
	struct tc_symloc sl;
	uint64_t start, size, next, nsize;
	(void)state;

	if (tc_symdso_open(ld, NULL, 0, &d))
		TEST_SKIP("%s cannot be opened", ld);
	if (tc_symdso_find(d, "_start", &start, &size) ||
	    tc_symdso_find(d, "_dl_start_user", &next, &nsize)) {
		tc_symdso_free(d);
		TEST_SKIP("%s has no symbol table with its labels (Debian: libc6-dbg)", ld);
	}
	assert_int_equal(size, 0);
	assert_true(next > start + 1);
	assert_int_equal(tc_symdso_lookup(d, next - 1, &sl), 0);
	assert_non_null(sl.symbol);
	assert_string_equal(sl.symbol, "_start");
	assert_int_equal(sl.sym_start, start);
	/* _dl_start, a sized function: every byte of it is its own */
	assert_int_equal(tc_symdso_find(d, "_dl_start", &start, &size), 0);
	assert_true(size > 0);
	for (uint64_t a = start; a < start + size; a += 7) {
		assert_int_equal(tc_symdso_lookup(d, a, &sl), 0);
		assert_string_equal(sl.symbol, "_dl_start");
	}
	tc_symdso_free(d);
}

static void test_kallsyms(void **state)
{
	char path[] = "/tmp/tacho-kallsyms-XXXXXX";
	int fd = mkstemp(path);
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 t helper\n"
		"ffffffff81000200 D some_data\n"
		"ffffffff81000300 T mod_func\t[some_mod]\n"
		"ffffffff81000400 t helper\n"
		"garbage line\n";
	static const char hidden[] =
		"0000000000000000 T _stext\n"
		"0000000000000000 t helper\n";
	/* a module loaded below the one before it: the list is sorted before the search */
	static const char unsorted[] =
		"ffffffffc0002000 t late_func\t[mod_b]\n"
		"ffffffff81000000 T _stext\n"
		"ffffffffc0001000 t early_func\t[mod_a]\n"
		"ffffffff81000100 t helper\n";
	struct tc_kallsyms *k;
	uint64_t start = 0;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(tc_kallsyms_load(path, &k), 0);
	assert_false(tc_kallsyms_hidden(k));
	assert_null(tc_kallsyms_lookup(k, 0xffffffff80000000ull, &start));
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffff81000000ull, &start), "_stext");
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffff81000150ull, &start), "helper");
	assert_int_equal(start, 0xffffffff81000100ull);
	/* data symbols are not functions: the text symbol before them holds */
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffff81000250ull, &start), "helper");
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffff81000310ull, &start),
			    "mod_func [some_mod]");
	/* two static functions of one name (two files): each at its own address */
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffff81000410ull, &start),
			    tc_kallsyms_lookup(k, 0xffffffff81000150ull, NULL));
	assert_int_equal(start, 0xffffffff81000400ull);
	tc_kallsyms_free(k);

	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, hidden, sizeof(hidden) - 1), (ssize_t)sizeof(hidden) - 1);
	close(fd);
	assert_int_equal(tc_kallsyms_load(path, &k), 0);
	assert_true(tc_kallsyms_hidden(k));
	assert_null(tc_kallsyms_lookup(k, 0xffffffff81000150ull, &start));
	tc_kallsyms_free(k);
	/* the first lines tell the same (record's check before it reads the whole file);
	 * a visible kernel may begin with per-CPU symbols at 0 */
	assert_true(tc_kallsyms_head_hidden(hidden));
	assert_false(tc_kallsyms_head_hidden("0000000000000000 A fixed_percpu_data\n"
					     "0000000000001000 A cpu_debug_store\n"));
	assert_false(tc_kallsyms_head_hidden("ffffffff81000000 T _stext\n"));
	assert_true(tc_kallsyms_head_hidden("0000000000000000 A fixed_percpu_data\n"
					    "0000000000000000 T _stext\n0000"));

	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, unsorted, sizeof(unsorted) - 1), (ssize_t)sizeof(unsorted) - 1);
	close(fd);
	assert_int_equal(tc_kallsyms_load(path, &k), 0);
	assert_null(tc_kallsyms_lookup(k, 0xffffffff80000000ull, &start));
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffff81000010ull, &start), "_stext");
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffff81000110ull, &start), "helper");
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffffc0001010ull, &start),
			    "early_func [mod_a]");
	assert_int_equal(start, 0xffffffffc0001000ull);
	assert_string_equal(tc_kallsyms_lookup(k, 0xffffffffc0002010ull, &start),
			    "late_func [mod_b]");
	tc_kallsyms_free(k);
	unlink(path);
	assert_int_equal(tc_kallsyms_load(path, &k), -ENOENT);
}

/* The copy of the kernel's own text symbols in the cache folder: what it keeps (not
 * the modules'), what it covers ([first symbol, _etext)), and what it refuses (another
 * boot, an address outside, a file others may write or that is not one, a bad boot id);
 * a copy of a new boot replaces the old one. */
static void test_kallsyms_cache(void **state)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000100 t helper\n"
		"ffffffff81000200 D some_data\n"
		"ffffffff81000300 T last_func\n"
		"ffffffff81000400 T _etext\n"
		"ffffffffc0000000 t mod_func\t[some_mod]\n";
	static const char boot[] = "0f0f7a8a-276c-49bd-ad67-b153ef2b3935";
	static const char boot2[] = "11111111-2222-3333-4444-555555555555";
	char dir[] = "/tmp/tacho-kcache-XXXXXX", path[256], file[512];
	struct tc_kallsyms *k, *c;
	uint64_t start = 0;
	FILE *f;
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	setenv("XDG_CACHE_HOME", dir, 1);
	snprintf(path, sizeof(path), "%s/kallsyms.txt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(tc_kallsyms_load(path, &k), 0);

	/* nothing yet */
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffff81000310ull,
						&c), -ENOENT);
	assert_int_equal(tc_kallsyms_cache_save(k, "not-a-boot-id"), -EINVAL);
	assert_int_equal(tc_kallsyms_cache_save(k, boot), 0);
	snprintf(file, sizeof(file), "%s/tacho/kallsyms-%s", dir, boot);
	{
		struct stat st;
		assert_int_equal(stat(file, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
	}
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffff81000310ull,
						&c), 0);
	/* the kernel's own functions as the whole read has them */
	assert_string_equal(tc_kallsyms_lookup(c, 0xffffffff81000150ull, &start), "helper");
	assert_int_equal(start, 0xffffffff81000100ull);
	assert_string_equal(tc_kallsyms_lookup(c, 0xffffffff81000310ull, &start), "last_func");
	assert_string_equal(tc_kallsyms_lookup(c, 0xffffffff81000000ull, &start), "_stext");
	tc_kallsyms_free(c);
	/* no module's: the copy (mapped, looked up, not walked) holds no "[module]" */
	{
		char *copy = NULL;
		size_t len;
		assert_int_equal(tc_read_file(file, &copy, &len, 1 << 20), 0);
		assert_null(strchr(copy, '['));
		assert_non_null(strstr(copy, " t helper\n"));
		free(copy);
	}
	/* outside the kernel's own text: at _etext, in a module, below the first */
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffff81000400ull,
						&c), -ERANGE);
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffffc0000010ull,
						&c), -ERANGE);
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff80ffffffull, 0xffffffff81000100ull,
						&c), -ERANGE);
	/* another boot */
	assert_int_equal(tc_kallsyms_cache_load(boot2, 0xffffffff81000100ull,
						0xffffffff81000310ull, &c), -ENOENT);
	/* writable by others: refused */
	assert_int_equal(chmod(file, 0622), 0);
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffff81000310ull,
						&c), -EPERM);
	assert_int_equal(chmod(file, 0600), 0);
	/* a header that is not the cache's */
	f = fopen(file, "r+");
	assert_non_null(f);
	fputs("# tacho kallsyms cache 9", f);
	fclose(f);
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffff81000310ull,
						&c), -EINVAL);
	/* a folder others may write: neither read nor written */
	{
		char tdir[512];
		snprintf(tdir, sizeof(tdir), "%s/tacho", dir);
		assert_int_equal(chmod(file, 0600), 0);
		assert_int_equal(tc_kallsyms_cache_save(k, boot), 0);
		assert_int_equal(chmod(tdir, 0777), 0);
		assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull,
							0xffffffff81000310ull, &c), -EPERM);
		assert_int_equal(tc_kallsyms_cache_save(k, boot), -EPERM);
		assert_int_equal(chmod(tdir, 0700), 0);
	}
	/* a link planted at the name is not followed; a FIFO there is replaced, not
	 * written to (nothing would read it: the save would hang) */
	assert_int_equal(unlink(file), 0);
	assert_int_equal(symlink(path, file), 0);
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffff81000310ull,
						&c), -EPERM);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(mkfifo(file, 0600), 0);
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffff81000310ull,
						&c), -EPERM);
	assert_int_equal(tc_kallsyms_cache_save(k, boot), 0);
	assert_int_equal(tc_kallsyms_cache_load(boot, 0xffffffff81000100ull, 0xffffffff81000310ull,
						&c), 0);
	tc_kallsyms_free(c);
	/* a new boot's copy replaces the old one (and leaves what is not a copy) */
	{
		char other[600];
		snprintf(other, sizeof(other), "%s/tacho/kallsyms-notes.txt", dir);
		f = fopen(other, "w");
		assert_non_null(f);
		fclose(f);
		assert_int_equal(tc_kallsyms_cache_save(k, boot2), 0);
		assert_int_equal(access(other, F_OK), 0);
	}
	assert_int_equal(access(file, F_OK), -1);
	assert_int_equal(tc_kallsyms_cache_load(boot2, 0xffffffff81000100ull,
						0xffffffff81000310ull, &c), 0);
	tc_kallsyms_free(c);
	tc_kallsyms_free(k);

	/* a table whose addresses are hidden, or without _etext, is not kept */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "0000000000000000 T _stext\n", 26), 26);
	close(fd);
	assert_int_equal(tc_kallsyms_load(path, &k), 0);
	assert_int_equal(tc_kallsyms_cache_save(k, boot), -EINVAL);
	tc_kallsyms_free(k);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "ffffffff81000000 T _stext\n", 26), 26);
	close(fd);
	assert_int_equal(tc_kallsyms_load(path, &k), 0);
	assert_int_equal(tc_kallsyms_cache_save(k, boot), -ENOENT);
	tc_kallsyms_free(k);

	snprintf(file, sizeof(file), "rm -rf '%s'", dir);
	assert_int_equal(system(file), 0);
	unsetenv("XDG_CACHE_HOME");
}

/* --- C++ names --- */

static const struct {
	int line;
	const char *mangled;
	const char *want;     /* NULL: left alone */
} cxx_names[] = {
	{ __LINE__, "_ZN3foo3barEv", "foo::bar()" },
	{ __LINE__, "_ZN5tacho6detail4spinEv", "tacho::detail::spin()" },
	{ __LINE__, "_ZSt4cout", "std::cout" },
	{ __LINE__, "_ZNSt6vectorIiSaIiEE9push_backERKi",
	  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
	{ __LINE__, "_ZN3foo3barEv.cold", "foo::bar() [clone .cold]" },
	{ __LINE__, "main", NULL },            /* a C name */
	{ __LINE__, "i", NULL },               /* would read as the type int */
	{ __LINE__, "_Zxyz", NULL },           /* not a valid mangling */
	{ __LINE__, "_Z", NULL },
	{ __LINE__, "", NULL },
};

/* Skips unless libstdc++.so.6 loads here: without it names stay mangled by design. */
static void need_libstdcxx(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		TEST_SKIP("libstdc++.so.6 cannot be loaded (%s): names stay mangled", dlerror());
	dlclose(h);
	assert_true(tc_demangle_available());
}

static void test_demangle_table(void **state)
{
	(void)state;
	need_libstdcxx();
	for (size_t i = 0; i < sizeof(cxx_names) / sizeof(cxx_names[0]); i++) {
		char *got = tc_demangle(cxx_names[i].mangled);
		if (!cxx_names[i].want && got)
			fail_msg("line %d: '%s' demangled to '%s'", cxx_names[i].line,
				 cxx_names[i].mangled, got);
		if (cxx_names[i].want && (!got || strcmp(got, cxx_names[i].want)))
			fail_msg("line %d: '%s' -> '%s', want '%s'", cxx_names[i].line,
				 cxx_names[i].mangled, got ? got : "(null)", cxx_names[i].want);
		free(got);
	}
	assert_null(tc_demangle(NULL));
}

/* The name in a binary's symbol table: the helper's asm label is a mangled name. */
static void test_demangle_symtab(void **state)
{
	char path[1024];
	struct tc_symdso *d;
	struct tc_symloc sl;
	uint64_t start, size;
	char *got;
	(void)state;

	need_libstdcxx();
	snprintf(path, sizeof(path), "%s", th_prog("sample-cxxname"));
	assert_int_equal(tc_symdso_open(path, NULL, 0, &d), 0);
	assert_int_equal(tc_symdso_find(d, "_ZN5tacho6detail4spinEv", &start, &size), 0);
	assert_int_equal(tc_symdso_lookup(d, start, &sl), 0);
	assert_non_null(sl.symbol);
	got = tc_demangle(sl.symbol);
	assert_non_null(got);
	assert_string_equal(got, "tacho::detail::spin()");
	free(got);
	tc_symdso_free(d);
}

static void *demangle_many(void *arg)
{
	for (int i = 0; i < 200; i++) {
		char *got = tc_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi");
		if (!got || strcmp(got, "std::vector<int, std::allocator<int> >::push_back(int const&)")) {
			free(got);
			return arg;
		}
		free(got);
	}
	return NULL;
}

/* Four threads at once: each result is its own malloc'd string, nothing shared. */
static void test_demangle_threads(void **state)
{
	pthread_t t[4];
	void *bad = NULL;
	(void)state;

	need_libstdcxx();
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, demangle_many, (void *)(intptr_t)(i + 1)), 0);
	for (int i = 0; i < 4; i++) {
		void *r;
		pthread_join(t[i], &r);
		if (r)
			bad = r;
	}
	assert_null(bad);
}

/* A copy of the kernel's symbols in the cache's format, mapped rather than read: every
 * look-up bisects its lines and gives what the table read whole gives, for addresses
 * below, on and between the symbols, past the last, on a name two symbols share and
 * on two symbols at one address; a line that is not the format gives no name rather
 * than a wrong one. */
static void test_kallsyms_mapped(void **state)
{
	enum { N = 997 };
	const char *path = th_tmp("kallsyms-map");
	static const char head[] = "# header 1\n# header 2\n# header 3\n";
	struct tc_kallsyms *read_whole, *mapped;
	FILE *f = fopen(path, "w");
	uint64_t a, b, addr = 0xffffffff81000000ull;
	int fd;
	(void)state;

	assert_non_null(f);
	fputs(head, f);
	for (int i = 0; i < N; i++) {
		fprintf(f, "%016llx t %s%d\n", (unsigned long long)addr,
			i % 7 == 3 ? "shared" : "func", i % 7 == 3 ? 0 : i);
		if (i % 11 != 5)   /* now and then two symbols at one address */
			addr += 16 + (uint64_t)(i % 5) * 48;
	}
	fclose(f);
	assert_int_equal(tc_kallsyms_load(path, &read_whole), 0);   /* the headers: skipped */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(tc_kallsyms_map(fd, sizeof(head) - 1, &mapped), 0);
	close(fd);   /* the mapping stays */
	assert_int_equal(tc_kallsyms_count(mapped), 0);
	for (uint64_t x = 0xffffffff80fffff0ull; x < addr + 64; x += 5) {
		const char *w = tc_kallsyms_lookup(read_whole, x, &a);
		const char *m = tc_kallsyms_lookup(mapped, x, &b);

		if (!w || !m) {
			if (w != m)
				fail_msg("%#llx: %s vs %s", (unsigned long long)x, w ? w : "NULL",
					 m ? m : "NULL");
			continue;
		}
		if (strcmp(w, m) || a != b)
			fail_msg("%#llx: %s at %#llx vs %s at %#llx", (unsigned long long)x, w,
				 (unsigned long long)a, m, (unsigned long long)b);
	}
	/* one name per line looked up, kept once */
	assert_ptr_equal(tc_kallsyms_lookup(mapped, 0xffffffff81000000ull, NULL),
			 tc_kallsyms_lookup(mapped, 0xffffffff81000001ull, NULL));
	tc_kallsyms_free(mapped);
	tc_kallsyms_free(read_whole);

	/* a line not in the format on the way: no name */
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%sffffffff81000000 t first\ngarbage\nffffffff81000100 t last\n", head);
	fclose(f);
	fd = open(path, O_RDONLY);
	assert_int_equal(tc_kallsyms_map(fd, sizeof(head) - 1, &mapped), 0);
	close(fd);
	assert_null(tc_kallsyms_lookup(mapped, 0xffffffff81000050ull, NULL));
	tc_kallsyms_free(mapped);
	/* a file with no lines after its header */
	f = fopen(path, "w");
	fputs(head, f);
	fclose(f);
	fd = open(path, O_RDONLY);
	assert_int_equal(tc_kallsyms_map(fd, sizeof(head) - 1, &mapped), -EINVAL);
	close(fd);
}

/* tc_sym_name_match: a table of names, queries and answers, each naming its line. */
static void test_sym_version_match(void **state)
{
	static const struct {
		int line;
		const char *name, *query;
		bool match;
	} cases[] = {
		{ __LINE__, "fopen", "fopen", true },
		{ __LINE__, "fopen@@GLIBC_2.2.5", "fopen", true },
		{ __LINE__, "fopen", "fopen@@GLIBC_2.2.5", true },
		{ __LINE__, "memcpy@GLIBC_2.14", "memcpy", true },
		{ __LINE__, "memcpy@GLIBC_2.14", "memcpy@GLIBC_2.14", true },
		{ __LINE__, "memcpy@@GLIBC_2.14", "memcpy@GLIBC_2.2.5", false },
		{ __LINE__, "memcpy@GLIBC_2.2.5", "memcpy@@GLIBC_2.14", false },
		{ __LINE__, "memcpy@GLIBC_2.14", "memcpy@@GLIBC_2.14", false },
		{ __LINE__, "memcpy", "memcp", false },
		{ __LINE__, "memcpy@GLIBC_2.14", "memcpy_chk", false },
		{ __LINE__, "fopen64", "fopen", false },
		{ __LINE__, "fopen", "fopen64@@GLIBC_2.2.5", false },
		{ __LINE__, "", "", true },
		{ __LINE__, "@V", "", true },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		if (tc_sym_name_match(cases[i].name, cases[i].query) != cases[i].match)
			fail_msg("line %d: '%s' against '%s': want %s", cases[i].line,
				 cases[i].name, cases[i].query, cases[i].match ? "a match" : "none");
	assert_int_equal(tc_sym_base_len("fopen@@GLIBC_2.2.5"), 5);
	assert_int_equal(tc_sym_base_len("fopen"), 5);
}

/* glibc's debug symbols (libc6-dbg) name fopen with one version and realpath and
 * memcpy with two each: fopen is shown as "fopen", found by either spelling; the two
 * realpaths keep their versions, each found by its own. */
static void test_sym_versions_libc(void **state)
{
	struct tc_symdso *d;
	struct tc_symloc loc;
	Dl_info info;
	uint64_t a, b, size;
	(void)state;

	if (!dladdr((void *)fopen, &info) || !info.dli_fname)
		TEST_SKIP("cannot find the C library's file");
	assert_int_equal(tc_symdso_open(info.dli_fname, NULL, 0, &d), 0);
	if (tc_symdso_find(d, "realpath@GLIBC_2.2.5", &a, &size)) {
		tc_symdso_free(d);
		TEST_SKIP("%s has no versioned symbol table here (glibc's debug symbols, "
			  "libc6-dbg, are not installed)", info.dli_fname);
	}
	assert_int_equal(tc_symdso_find(d, "realpath@@GLIBC_2.3", &b, &size), 0);
	assert_true(a != b);
	assert_int_equal(tc_symdso_symbol(d, a, &loc), 0);
	assert_string_equal(loc.symbol, "realpath@GLIBC_2.2.5");
	assert_int_equal(tc_symdso_symbol(d, b, &loc), 0);
	assert_string_equal(loc.symbol, "realpath@@GLIBC_2.3");
	/* one version: shown without it, found by either spelling, at one place */
	assert_int_equal(tc_symdso_find(d, "fopen", &a, &size), 0);
	assert_int_equal(tc_symdso_find(d, "fopen@@GLIBC_2.2.5", &b, &size), 0);
	assert_true(a == b);
	assert_int_equal(tc_symdso_symbol(d, a, &loc), 0);
	assert_string_equal(loc.symbol, "fopen");
	assert_int_equal(tc_symdso_find(d, "memcpy@GLIBC_2.2.5", &a, &size), 0);
	assert_int_equal(tc_symdso_symbol(d, a, &loc), 0);
	assert_string_equal(loc.symbol, "memcpy@GLIBC_2.2.5");
	tc_symdso_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insn_len),
		cmocka_unit_test(test_sym_version_match),
		cmocka_unit_test(test_sym_versions_libc),
		cmocka_unit_test_setup_teardown(test_kallsyms_mapped, th_tmpdir_setup,
						th_tmpdir_teardown),
		cmocka_unit_test(test_prev_insn),
		cmocka_unit_test(test_elf_symbols_lines),
		cmocka_unit_test(test_insn_len_vs_objdump),
		cmocka_unit_test(test_vdso_image),
		cmocka_unit_test(test_asm_labels),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_kallsyms_cache),
		cmocka_unit_test(test_demangle_table),
		cmocka_unit_test(test_demangle_symtab),
		cmocka_unit_test(test_demangle_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
