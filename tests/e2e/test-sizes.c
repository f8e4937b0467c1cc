/* test-sizes.c - the sizes of docs/architecture.md, "Sizes", hold in the source tree
 * (scripts/check-sizes.sh: no part of lib/ over 6,000 lines of C, no file of lib/ or
 * cli/ over 1,200 lines, no function over 150 but the page's known exceptions), and the
 * check is real: in a fake tree, an oversized function, file and part are each named
 * with their size; a listed one passes when the page says why; and a listed exception
 * that is no longer over, names nothing or has no why fails, so that the list cannot
 * go stale. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

/* src: the source tree; doc: the page with the ```sizes block, NULL for src's own. */
static void run_check(struct th_run *r, const char *src, const char *doc)
{
	char *argv[] = { (char *)"sh", NULL, (char *)src, (char *)doc, NULL };
	char script[4096];

	snprintf(script, sizeof(script), "%s", th_path("scripts/check-sizes.sh"));
	argv[1] = script;
	th_runv(r, NULL, argv);
}

static void test_this_tree(void **state)
{
	char src[4096];
	struct th_run r;
	int status;
	bool said;
	(void)state;

	snprintf(src, sizeof(src), "%s", th_path("."));
	run_check(&r, src, NULL);
	status = r.status;
	said = strstr(r.out, "within their limits or known exceptions") != NULL;
	if (status != 0)
		print_error("%s%s", r.out, r.err);
	th_run_free(&r);   /* before asserting: a failed assert does not return */
	assert_int_equal(status, 0);
	assert_true(said);
}

/* Writes tmp/rel, its folders made: head, then n lines of filler (one statement each
 * inside a function when in_fn, comments otherwise), then tail. */
static void plant(const char *rel, const char *head, int n, bool in_fn, const char *tail)
{
	char path[4096], dir[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", th_tmpdir(), rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(th_tmpdir()) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(dir, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(head, f);
	for (int i = 0; i < n; i++)
		fputs(in_fn ? "\tx += 1; /* } { \"}\" */\n" : "/* { a comment line } */\n", f);
	fputs(tail, f);
	assert_int_equal(fclose(f), 0);
}

static const char *doc_path(void)
{
	return th_tmp("architecture.md");
}

/* The page: a ```sizes block of the lines sizes, then why, then the next heading (whose
 * text is not the why's). */
static void doc_why(const char *sizes, const char *why)
{
	FILE *f = fopen(doc_path(), "w");

	assert_non_null(f);
	fprintf(f, "# the house\n\n### Sizes\n\n```sizes\n# kind  what\n%s```\n\n%s\n"
		"## Next\n\n`long_one`, `cli/cmd-a.c` and `lib/b` are named here too late.\n",
		sizes, why);
	assert_int_equal(fclose(f), 0);
}

static void doc(const char *sizes)
{
	doc_why(sizes, "- `long_one`: why.\n- `cli/cmd-a.c`: why.\n- `lib/b`: why.\n"
		"- `fine` and `lib/a/gone.c`: why.");
}

static void test_oversized_are_named(void **state)
{
	struct th_run r;
	(void)state;

	/* within the limits: a 150-line function (brace to brace) among strings, comments
	 * and a preprocessor line with braces, a struct and an initializer */
	plant("lib/a/fine.c",
	      "#define BLOCK { {\n"
	      "struct s { int a; };\n"
	      "static const int t[] = { 1, 2 };\n"
	      "static int fine(int x)\n{\n",
	      147, true, "\treturn x;\n}\n");
	plant("cli/cmd-a.c", "", 1200, false, "");
	doc("");
	run_check(&r, th_tmpdir(), doc_path());
	if (r.status)
		print_error("%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "sizes: 1 parts, 2 files and 1 functions within their limits");
	th_run_free(&r);

	/* a function of 151 lines, its name after an attribute; a file of 1,201 lines; a
	 * part of 6,001 lines of C in six files within their limit */
	plant("lib/a/long.c",
	      "static void __attribute__((noinline))\nlong_one(int *p, int (*f)(int))\n{\n",
	      148, true, "\tf(x);\n}\n");
	plant("cli/cmd-a.c", "", 1201, false, "");
	for (int i = 0; i < 6; i++) {
		char name[32];

		snprintf(name, sizeof(name), "lib/b/b%d.c", i);
		plant(name, "", i ? 1000 : 1001, false, "");
	}
	run_check(&r, th_tmpdir(), doc_path());
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "sizes: over: function lib/a/long.c:long_one: 151 lines (limit 150)");
	assert_contains(r.out, "sizes: over: file cli/cmd-a.c: 1201 lines (limit 1200)");
	assert_contains(r.out, "sizes: over: part lib/b: 6001 lines (limit 6000)");
	assert_int_equal(th_count_lines(r.out), 3);
	th_run_free(&r);

	/* each listed: the check passes, counting them */
	doc("function lib/a/long.c:long_one\nfile cli/cmd-a.c\npart lib/b\n");
	run_check(&r, th_tmpdir(), doc_path());
	if (r.status)
		print_error("%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "or known exceptions (3)");
	th_run_free(&r);

	/* a listed exception no longer over, and one that names nothing, fail */
	doc("function lib/a/long.c:long_one\nfile cli/cmd-a.c\npart lib/b\n"
	    "function lib/a/fine.c:fine\nfile lib/a/gone.c\n");
	run_check(&r, th_tmpdir(), doc_path());
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "sizes: not over any more, or not there: function lib/a/fine.c:fine");
	assert_contains(r.out, "sizes: not over any more, or not there: file lib/a/gone.c");
	th_run_free(&r);

	/* each listed exception is explained after the block, before the next heading */
	doc_why("function lib/a/long.c:long_one\nfile cli/cmd-a.c\npart lib/b\n",
		"- `long_one`: why.\n- `lib/b/` and cli/cmd-a.c: no backticks, no why.");
	run_check(&r, th_tmpdir(), doc_path());
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "sizes: listed but not explained: file cli/cmd-a.c");
	assert_contains(r.out, "sizes: listed but not explained: part lib/b");
	assert_not_contains(r.out, "long_one");
	th_run_free(&r);

	/* a line the block does not know is bad input */
	doc("fn lib/a/long.c:long_one\n");
	run_check(&r, th_tmpdir(), doc_path());
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad line in the sizes block: fn lib/a/long.c:long_one");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_tree),
		cmocka_unit_test_setup_teardown(test_oversized_are_named, th_tmpdir_setup,
						th_tmpdir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
