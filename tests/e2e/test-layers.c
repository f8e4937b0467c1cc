/* test-layers.c - the layers of docs/architecture.md hold in the compiled library
 * (scripts/check-layers.sh over this build's objects and the sources' includes), and the
 * check is real: a deliberately forbidden call, a command-line object calling a JSON
 * primitive, a part without a row, an arrow of the table nothing uses, a part (or an
 * area header) including a public header of a part above it, the umbrella header under
 * lib/, an area without a row, and a command including a library-private header (but for
 * the script's known exceptions, which must still be needed) are each caught and named. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

/* table: the layer table's page, NULL for docs/architecture.md; src: the source tree,
 * so that objects of moved files are left out and the includes and unused arrows are
 * checked; NULL for a fake tree of objects only. */
static void run_check_table(struct th_run *r, const char *build, const char *table,
			    const char *src)
{
	char *argv[] = { (char *)"sh", NULL, (char *)build, NULL, (char *)src, NULL };
	char script[4096], doc[4096];

	snprintf(script, sizeof(script), "%s", th_path("scripts/check-layers.sh"));
	snprintf(doc, sizeof(doc), "%s", table ? table : th_path("docs/architecture.md"));
	argv[1] = script;
	argv[3] = doc;
	th_runv(r, NULL, argv);
}

static void run_check(struct th_run *r, const char *build, const char *src)
{
	run_check_table(r, build, NULL, src);
}

static void test_this_build(void **state)
{
	struct th_run r;
	(void)state;

	int status;
	bool said;

	{
		char src[4096];
		snprintf(src, sizeof(src), "%s", th_path("."));
		run_check(&r, th_build_dir(), src);
	}
	status = r.status;
	said = strstr(r.out, "every call between parts is allowed") != NULL &&
	       strstr(r.out, "every public header a part includes is allowed") != NULL &&
	       strstr(r.out, "no library-private header is included from cli/") != NULL &&
	       strstr(r.out, "every arrow of the table is used") != NULL;
	if (status != 0)
		print_error("%s%s", r.out, r.err);
	th_run_free(&r);   /* before asserting: a failed assert does not return */
	assert_int_equal(status, 0);
	assert_true(said);
}

/* docs/img/layers.svg is what scripts/layers-svg.sh draws from the table now: the
 * picture cannot drift from the layers the check enforces. */
static void test_picture_is_the_table(void **state)
{
	char *argv[] = { (char *)"sh", NULL, NULL, NULL };
	char script[4096], doc[4096];
	struct th_run r;
	char *svg = NULL;
	size_t len = 0;
	(void)state;

	snprintf(script, sizeof(script), "%s", th_path("scripts/layers-svg.sh"));
	snprintf(doc, sizeof(doc), "%s", th_path("docs/architecture.md"));
	argv[1] = script;
	argv[2] = doc;
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	assert_int_equal(th_read_data(th_path("docs/img/layers.svg"), &svg, &len), 0);
	if (strlen(r.out) != len || memcmp(r.out, svg, len))
		fail_msg("docs/img/layers.svg is not the picture of the layer table: run "
			 "scripts/layers-svg.sh > docs/img/layers.svg");
	assert_contains(r.out, ">lib/util</text>");
	assert_contains(r.out, ">cli/</text>");
	free(svg);
	th_run_free(&r);
}

/* Compiles `code` into DIR/REL (an object), failing the test if cc does. */
static void object(const char *dir, const char *rel, const char *code)
{
	char path[4096], src[4100], *slash;
	struct th_run r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	{
		char *argv[] = { (char *)"mkdir", (char *)"-p", path, NULL };
		th_runv(&r, NULL, argv);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
	}
	*slash = '/';
	snprintf(src, sizeof(src), "%s.c", path);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs(code, f);
	assert_int_equal(fclose(f), 0);
	{
		char *argv[] = { (char *)"cc", (char *)"-c", (char *)"-o", path, src, NULL };
		th_runv(&r, NULL, argv);
		if (r.status)
			print_error("%s", r.err);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
	}
}

static void test_forbidden_calls_are_named(void **state)
{
	char dir[] = "/tmp/tacho-layers-XXXXXX";
	char cmd[4200];
	struct th_run r;
	(void)state;

	assert_non_null(mkdtemp(dir));
	/* allowed: events uses perf; util uses nothing */
	object(dir, "lib/perf/engine.o", "int tc_engine_open(void) { return 1; }\n");
	object(dir, "lib/util/str.o", "int tc_str_len(void) { return 2; }\n");
	object(dir, "lib/events/parse.o",
	       "int tc_engine_open(void); int tc_str_len(void);\n"
	       "int tc_evlist_parse(void) { return tc_engine_open() + tc_str_len(); }\n");
	run_check(&r, dir, NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);

	/* the engine calling up into the grammar: forbidden, and named */
	object(dir, "lib/perf/counters.o",
	       "int tc_evlist_parse(void);\nint tc_counters_open(void) { return tc_evlist_parse(); }\n");
	run_check(&r, dir, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "layers: forbidden: perf/counters.o -> events/parse.o: tc_evlist_parse");
	th_run_free(&r);

	/* a command writing JSON itself instead of through a library writer */
	object(dir, "lib/output/json.o", "void tc_json_str(void) {}\n");
	object(dir, "cli/cmd-x.o", "void tc_json_str(void);\nvoid cmd_x(void) { tc_json_str(); }\n");
	run_check(&r, dir, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "cli/cmd-x.o -> output/json.o: tc_json_str (denied to cli)");
	th_run_free(&r);

	/* a new part must get its row */
	object(dir, "lib/newpart/x.o", "int tc_new(void) { return 3; }\n");
	run_check(&r, dir, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "part \"newpart\" has no row in the table");
	th_run_free(&r);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Writes text to DIR/REL, making its folders. */
static void source(const char *dir, const char *rel, const char *text)
{
	char path[4096], *slash;
	struct th_run r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	{
		char *argv[] = { (char *)"mkdir", (char *)"-p", path, NULL };
		th_runv(&r, NULL, argv);
		assert_int_equal(r.status, 0);
		th_run_free(&r);
	}
	*slash = '/';
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* This build with a copy of the table that allows one arrow more (msr, which decodes
 * what perf would program but opens nothing, may use the engine): the check names the
 * arrow nothing uses and fails, so that a call along it could not pass unseen. */
static void test_unused_arrows_are_named(void **state)
{
	char dir[] = "/tmp/tacho-layers-XXXXXX";
	char table[4200], cmd[4200], *doc, *row;
	struct th_run r;
	size_t len;
	FILE *f;
	(void)state;

	f = fopen(th_path("docs/architecture.md"), "r");
	assert_non_null(f);
	doc = calloc(1, 1 << 20);
	assert_non_null(doc);
	len = fread(doc, 1, (1 << 20) - 1, f);
	fclose(f);
	assert_true(len > 0);
	row = strstr(doc, "\nmsr        util output cpu\n");
	assert_non_null(row);   /* the row the copy plants its arrow on */
	row += strlen("\nmsr        util output cpu");

	assert_non_null(mkdtemp(dir));
	snprintf(table, sizeof(table), "%s/architecture.md", dir);
	f = fopen(table, "w");
	assert_non_null(f);
	fwrite(doc, 1, (size_t)(row - doc), f);
	fputs(" perf", f);
	fputs(row, f);
	assert_int_equal(fclose(f), 0);
	free(doc);

	{
		char src[4096];
		snprintf(src, sizeof(src), "%s", th_path("."));
		run_check_table(&r, th_build_dir(), table, src);
	}
	if (r.status != 1)
		print_error("%s%s", r.out, r.err);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "layers: unused: msr -> perf (nothing uses it: remove it from the table)");
	/* that arrow and no other: the calls, the includes and the command line pass */
	assert_int_equal(th_count_lines(r.out), 4);
	assert_contains(r.out, "every call between parts is allowed");
	th_run_free(&r);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The tables of the fake source trees: small, and each arrow used by the trees' first,
 * passing state (a fake tree is the whole tree to the check, which reports unused
 * arrows). */
static const char fake_table[] =
	"```layers\n"
	"util       -\n"
	"perf       util\n"
	"events     perf\n"
	"measure    -\n"
	"cli        * !tc_json_* !tc_csv_*\n"
	"```\n"
	"```areas\n"
	"util       errors\n"
	"perf       counters\n"
	"events     events\n"
	"measure    stat\n"
	"```\n";

/* The includes of a fake source tree (no objects: the symbol check has nothing to say):
 * a part's own area and an area below it pass; an area above it, the umbrella header
 * and an area the table does not know each fail, named by file, line and header. */
static void test_forbidden_includes_are_named(void **state)
{
	char dir[] = "/tmp/tacho-layers-XXXXXX";
	char cmd[4200], table[4200];
	struct th_run r;
	(void)state;

	assert_non_null(mkdtemp(dir));
	source(dir, "architecture.md", fake_table);
	snprintf(table, sizeof(table), "%s/architecture.md", dir);
	source(dir, "lib/perf/counters.c",
	       "#include <errno.h>\n\n#include \"tacho/errors.h\"\n"
	       "#include \"tacho/counters.h\"\n");
	source(dir, "lib/events/events.h",
	       "#include \"tacho/counters.h\"\n#include \"tacho/events.h\"\n");
	run_check_table(&r, dir, table, dir);
	if (r.status)
		print_error("%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "every public header a part includes is allowed (4 includes)");
	th_run_free(&r);

	/* the engine seeing the grammar's declarations: forbidden, named by line */
	source(dir, "lib/perf/counters.c",
	       "#include \"tacho/errors.h\"\n#include \"tacho/counters.h\"\n"
	       "#include \"tacho/events.h\"\n");
	run_check_table(&r, dir, table, dir);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "layers: forbidden include: lib/perf/counters.c:3: "
			"\"tacho/events.h\": perf may not use events");
	th_run_free(&r);

	/* the umbrella under lib/, a header no part defines, and an area header that builds
	 * on an area above its part */
	source(dir, "lib/perf/counters.c", "#include \"tacho.h\"\n");
	source(dir, "lib/util/x.c", "\n#  include \"tacho/nosuch.h\"\n");
	source(dir, "include/tacho/counters.h",
	       "#include \"tacho/errors.h\"\n#include \"tacho/stat.h\"\n");
	run_check_table(&r, dir, table, dir);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "layers: forbidden include: include/tacho/counters.h:2: "
			"\"tacho/stat.h\": perf may not use measure");
	assert_contains(r.out, "layers: forbidden include: lib/perf/counters.c:1: \"tacho.h\" "
			"(the umbrella");
	assert_contains(r.out,
			"lib/util/x.c:2: \"tacho/nosuch.h\": area \"nosuch\" has no row");
	th_run_free(&r);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* The command line's includes in a fake source tree: public and shared headers pass;
 * any library-private header fails, named by file, line and header, watch's included
 * (its controller is lib/live's watch session now: no exception is left). */
static void test_private_includes_in_cli_are_named(void **state)
{
	char dir[] = "/tmp/tacho-layers-XXXXXX";
	char cmd[4200], table[4200];
	struct th_run r;
	(void)state;

	assert_non_null(mkdtemp(dir));
	source(dir, "architecture.md", fake_table);
	snprintf(table, sizeof(table), "%s/architecture.md", dir);
	source(dir, "lib/perf/counters.c", "#include \"tacho/errors.h\"\n");
	source(dir, "lib/events/events.c", "#include \"tacho/counters.h\"\n");
	source(dir, "cli/cmd-watch.c", "#include \"tacho.h\"\n#include \"util/util.h\"\n");
	source(dir, "cli/cli.h", "#include \"output/output.h\"\n");
	run_check_table(&r, dir, table, dir);
	if (r.status)
		print_error("%s%s", r.out, r.err);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "no library-private header is included from cli/ (0 known "
			"exceptions)");
	th_run_free(&r);

	/* a command seeing the engine's insides, and watch its old controller's header */
	source(dir, "cli/cmd-x.c", "#include \"cli.h\"\n#  include <perf/engine-int.h>\n");
	source(dir, "cli/cmd-watch.c",
	       "#include \"tacho.h\"\n#include \"util/util.h\"\n#include \"live/live-int.h\"\n");
	run_check_table(&r, dir, table, dir);
	assert_int_equal(r.status, 1);
	assert_contains(r.out, "layers: forbidden include: cli/cmd-x.c:2: \"perf/engine-int.h\": "
			"private to the library");
	assert_contains(r.out, "layers: forbidden include: cli/cmd-watch.c:3: \"live/live-int.h\"");
	assert_not_contains(r.out, "known exception");
	th_run_free(&r);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_this_build),
		cmocka_unit_test(test_picture_is_the_table),
		cmocka_unit_test(test_forbidden_calls_are_named),
		cmocka_unit_test(test_unused_arrows_are_named),
		cmocka_unit_test(test_forbidden_includes_are_named),
		cmocka_unit_test(test_private_includes_in_cli_are_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
