/* test-symbols-inline.c - the functions inlined at an address (tc_symdso_inlines), on
 * tests/progs/inline-hot.c built with -O2 -g: at every instruction of work that the
 * line table puts on spin_sum's INLINE-LOOP line, the symbol table names work and
 * DWARF's inline chain is exactly [spin_sum], called from work's INLINE-CALL line of
 * the same file; at work's first instruction (its prologue, its own code) the chain is
 * empty. The addresses come from the binary's own line table, not from a guess. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "symbols/symbols.h"

static void test_inline_chain(void **state)
{
	const char *path = th_prog("inline-hot");
	int loop_line = th_source_line("tests/progs/inline-hot.c", "INLINE-LOOP");
	int call_line = th_source_line("tests/progs/inline-hot.c", "INLINE-CALL");
	struct tc_symdso *d;
	struct tc_syminl inl[8];
	struct tc_symloc sl;
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
