/* test-symbols-inline.c - the functions inlined at an address (tc_symdso_inlines), on
 * tests/progs/inline-hot.c built with -O2 -g: at every instruction of work that the
 * line table puts on spin_sum's INLINE-LOOP line, the symbol table names work and
 * DWARF's inline chain is exactly [spin_sum], called from work's INLINE-CALL line of
 * the same file; at work's first instruction (its prologue, its own code) the chain is
 * empty. The addresses come from the binary's own line table, not from a guess, and
 * binutils' addr2line -f -i (what perf report --inline asks) gives the same chain at
 * each of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/symbols.h"

/* addr2line -f -i's answer at addr: the innermost function, then its caller and the
 * line of the call, checked against the chain found. */
static void check_addr2line(const char *path, uint64_t addr, const struct tc_syminl *inl)
{
	char hex[32], *argv[] = { (char *)"addr2line", (char *)"-f", (char *)"-i", (char *)"-e",
				  (char *)path, hex, NULL };
	char fn0[256], where0[1024], fn1[256], where1[1024];
	struct th_run r;
	const char *colon;

	snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)addr);
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	if (sscanf(r.out, "%255s %1023s %255s %1023s", fn0, where0, fn1, where1) != 4)
		fail_msg("addr2line at %s: %s", hex, r.out);
	assert_string_equal(fn0, inl[0].name);
	assert_string_equal(fn1, "work");
	colon = strrchr(where1, ':');
	assert_non_null(colon);
	assert_int_equal(atoi(colon + 1), inl[0].call_line);
	th_run_free(&r);
}

static void test_inline_chain(void **state)
{
	const char *path = th_prog("inline-hot");
	int loop_line = th_source_line("tests/progs/inline-hot.c", "INLINE-LOOP");
	int call_line = th_source_line("tests/progs/inline-hot.c", "INLINE-CALL");
	struct tc_symdso *d;
	struct tc_syminl inl[8];
	struct tc_symloc sl;
	bool binutils = access("/usr/bin/addr2line", X_OK) == 0;
	uint64_t start, size;
	uint8_t code[4096];
	size_t got, off = 0, hits = 0;
	(void)state;

	if (access(path, R_OK))
		TEST_SKIP("%s is not built", path);
	assert_int_equal(tc_symdso_open(path, NULL, 0, &d), 0);
	assert_int_equal(tc_symdso_find(d, "work", &start, &size), 0);
	assert_true(size > 0 && size <= sizeof(code));
	got = tc_symdso_read(d, start, code, (size_t)size);
	assert_int_equal(got, size);

	/* the prologue is work's own: nothing inlined there */
	assert_int_equal(tc_symdso_inlines(d, start, inl, 8), 0);

	while (off < got) {
		unsigned len = tc_x86_insn_len(code + off, got - off);
		int n;

		if (!len)
			fail_msg("undecodable byte at work+%zu", off);
		tc_symdso_lookup(d, start + off, &sl);
		assert_string_equal(sl.symbol, "work");
		if (sl.line == loop_line) {
			n = tc_symdso_inlines(d, start + off, inl, 8);
			if (n != 1)
				fail_msg("work+%zu (line %d): %d inlined frames, want 1", off,
					 sl.line, n);
			assert_string_equal(inl[0].name, "spin_sum");
			assert_int_equal(inl[0].call_line, call_line);
			assert_non_null(inl[0].call_file);
			assert_non_null(strstr(inl[0].call_file, "inline-hot.c"));
			/* room for none: nothing written, nothing counted */
			assert_int_equal(tc_symdso_inlines(d, start + off, inl, 0), 0);
			if (binutils)
				check_addr2line(path, start + off, inl);
			hits++;
		}
		off += len;
	}
	assert_int_equal(off, got);
	/* the loop's body is at least its load, add and store */
	assert_true(hits >= 3);

	/* an address outside any function's DWARF: no chain, no error */
	assert_int_equal(tc_symdso_inlines(d, 16, inl, 8), 0);
	tc_symdso_free(d);
	if (!binutils)
		TEST_SKIP("binutils' addr2line is not installed: the chains were not compared "
			  "with its");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
