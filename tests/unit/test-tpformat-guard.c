/* test-tpformat-guard.c - the check a tracepoint format text passes before libtraceevent
 * reads it (record/tpformat-check.h): every format this machine's tracefs writes passes,
 * and each construct that crashed libtraceevent 1.7, or that the kernel never writes, is
 * refused with its reason, while tc_payload_add goes on to decode the good ones. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "record/payload.h"
#include "record/recfile.h"
#include "record/tpformat-check.h"
#include "tacho/errors.h"
#include "tacho/timeline.h"
#include "timeline/timeline.h"

#define HEAD \
	"name: e\nID: 7\nformat:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n" \
	"\tfield:long a;\toffset:8;\tsize:8;\tsigned:1;\n" \
	"\tfield:long b[4];\toffset:16;\tsize:32;\tsigned:1;\n\n"

/* sys_enter's, as Linux 6.18 writes it */
static const char sys_enter[] =
	"name: sys_enter\nID: 443\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n\n"
	"print fmt: \"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, REC->args[0], "
	"REC->args[1], REC->args[2], REC->args[3], REC->args[4], REC->args[5]\n";

static int check(const char *text, char *why, size_t n)
{
	why[0] = 0;
	return tc_tpformat_check(text, strlen(text), why, n);
}

static void test_accepted(void **state)
{
	static const char *const ok[] = {
		HEAD "print fmt: \"%ld\", REC->a\n",
		/* a newline inside the string, as ext4_fc_stats's */
		HEAD "print fmt: \"a:\n%ld\", REC->a\n\n",
		HEAD "print fmt: \"%ld\", REC->b[1] + 1\n",
		HEAD "print fmt: \"%ld\", REC->b[1] ? 1 : 2\n",
		HEAD "print fmt: \"%ld\", REC->a ? REC->b[0] : REC->a\n",
		HEAD "print fmt: \"%ld\", REC->a ? 1 : (REC->b[0]) + 2\n",
		HEAD "print fmt: \"%s\", __print_symbolic(REC->a, { 0, \"x\" }, { 1, \"y\" })\n",
		HEAD "print fmt: \"%s %c\", \"a\\\"b\", '\\''\n",
		HEAD "print fmt: \"%ld\", ((unsigned long)(REC->a))\n",
		/* an empty subscript fails in libtraceevent before what follows it */
		HEAD "print fmt: \"%s\", ({ static const char *s[] = { \"a\" }; 0; })\n",
		/* signed: is optional (before 2.6.33), NULs after the text are ignored */
		"name: e\nID: 7\nformat:\n\tfield:long a;\toffset:8;\tsize:8;\n\n"
		"print fmt: \"%ld\", REC->a\n\0\0",
		sys_enter,
	};
	char why[128];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		int err = check(ok[i], why, sizeof(why));
		if (err)
			fail_msg("case %zu refused: %s", i, why);
	}
}

static void test_refused(void **state)
{
	static const struct { const char *text, *why; } bad[] = {
		/* the fuzzer's input: ',' become '$' after a subscript (libtraceevent 1.7
		 * follows a NULL there) */
		{ HEAD "print fmt: \"%ld\", REC->b[2]$ REC->a\n",
		  "the print format has \"$\" after a subscript" },
		{ HEAD "print fmt: \"%ld\", REC->b[1][2]\n",
		  "the print format has \"[\" after a subscript" },
		{ HEAD "print fmt: \"%ld\", REC->b[1].x\n",
		  "the print format has \".\" after a subscript" },
		{ HEAD "print fmt: \"%ld\", REC->b[1]->x\n",
		  "the print format has \"->\" after a subscript" },
		{ HEAD "print fmt: \"%ld\", REC->b[1] += 1\n",
		  "the print format has \"+=\" after a subscript" },
		{ HEAD "print fmt: \"%ld\", REC->a ? 1 : REC->b[1]\n",
		  "the print format has \"[\" after a conditional" },
		{ HEAD "print fmt: \"%ld\", REC->a ? 1 : (REC->a) . 1\n",
		  "the print format has \".\" after a conditional" },
		{ HEAD "print fmt: \"%ld\", REC->a ? 1 : 2 = 1\n",
		  "the print format has \"=\" after a conditional" },
		{ HEAD "print fmt: \"%ld\", REC->a : 1\n",
		  "the print format has a ':' without its '?'" },
		{ HEAD "print fmt: \"%ld\", (REC->a\n", "the print format leaves a ')' unclosed" },
		{ HEAD "print fmt: \"%ld\", REC->a)\n",
		  "the print format's ')' at its byte 13 closes nothing open" },
		{ HEAD "print fmt: \"%ld\", REC->b[1)\n",
		  "the print format's ')' at its byte 15 closes nothing open" },
		{ HEAD "print fmt: \"%ld, REC->a\n",
		  "the print format has a quote at its byte 0 that does not close" },
		{ HEAD "print fmt: \"\xe3\"\n", "the print format has byte 0xe3 at its byte 1" },
		{ HEAD "print fmt: REC->a\n", "the print format does not start with a string" },
		{ HEAD "print fmt: \"x\",\x7f" "1\n", "the print format has byte 0x7f at its byte 4" },
		{ HEAD "print fmt: \"x\", ((((((((((((((((((((((((((((((((((1))))))))))))))))))))"
		  "))))))))))))))\n", "the print format nests more than 32 deep at its byte 37" },
		{ "ID: 7\n", "no \"name: NAME\" line first" },
		{ "name: e\nID: x\n", "no \"ID: NUMBER\" line after the name" },
		{ "name: e\nID: 7\nfields:\n", "no \"format:\" line after the ID" },
		{ "name: e\nID: 7\nformat:\n\tfield:long a\n",
		  "field line 1 is not \"\\tfield:TYPE NAME;\"" },
		{ "name: e\nID: 7\nformat:\n\tfield:long a;\toffset:x;\n",
		  "field line 1 has no \"offset:N;\" and \"size:N;\"" },
		{ "name: e\nID: 7\nformat:\n\tfield:long a;\toffset:0;\tsize:8;\tsigned:;\n",
		  "field line 1 has a bad \"signed:N;\"" },
		{ "name: e\nID: 7\nformat:\n\n\tfield:long a;\toffset:0;\tsize:8; x\n",
		  "field line 2 does not end after its size and sign" },
		{ "name: e\nID: 7\nformat:\n\tfield:long \x01;\toffset:0;\tsize:8;\n",
		  "field line 1 is not \"\\tfield:TYPE NAME;\"" },
		{ "name: e\0\nID: 7\n", "a NUL byte inside the text" },
	};
	char why[128];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		/* the NUL case's length: up to "ID: 7\n" */
		size_t len = strlen(bad[i].text);
		if (!strcmp(bad[i].text, "name: e"))
			len = 15;
		why[0] = 0;
		if (tc_tpformat_check(bad[i].text, len, why, sizeof(why)) != -TACHO_EPARSE)
			fail_msg("case %zu passed", i);
		if (strcmp(why, bad[i].why))
			fail_msg("case %zu: \"%s\", not \"%s\"", i, why, bad[i].why);
	}
	/* a text past the bound, and a NULL why */
	char *big = malloc(TC_TPFORMAT_MAX + 2);
	assert_non_null(big);
	memset(big, 'x', TC_TPFORMAT_MAX + 1);
	assert_int_equal(tc_tpformat_check(big, TC_TPFORMAT_MAX + 1, why, sizeof(why)),
			 -TACHO_EPARSE);
	assert_string_equal(why, "262145 bytes, more than 262144");
	assert_int_equal(tc_tpformat_check(big, 10, NULL, 0), -TACHO_EPARSE);
	free(big);
}

/* tc_payload_add refuses before libtraceevent sees the text, says why, and takes the
 * next good one */
static void test_payload(void **state)
{
	static const char crash[] = HEAD "print fmt: \"%ld\", REC->b[2]$ REC->a\n";
	struct tc_payload *p;

	(void)state;
	assert_int_equal(tc_payload_new(&p), 0);
	assert_int_equal(tc_payload_add(p, 0, crash, strlen(crash)), -TACHO_EPARSE);
	assert_string_equal(tc_payload_refusal(p), "is not one the kernel writes: the print "
			    "format has \"$\" after a subscript");
	assert_false(tc_payload_has(p, 0));
	assert_int_equal(tc_payload_add(p, 1, sys_enter, strlen(sys_enter)), 0);
	assert_string_equal(tc_payload_refusal(p), "");
	assert_true(tc_payload_has(p, 1));
	tc_payload_free(p);
}

/* a trace whose first format is refused: one note names it, its byte and the reason,
 * and the next format still decodes */
static void test_trace_note(void **state)
{
	static const char crash[] = HEAD "print fmt: \"%ld\", REC->b[2]$ REC->a\n";
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_record_writer w;
	struct tacho_timeline *t;
	struct tc_record_reader r;
	struct tc_rec rec;
	int fd = memfd_create("rec", 0);
	uint64_t at = 0;
	uint8_t *buf;
	off_t size;
	char want[256];

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_tpformat(&w, 0, crash, strlen(crash));
	tc_record_writer_tpformat(&w, 1, sys_enter, strlen(sys_enter));
	assert_int_equal(tc_record_writer_flush(&w), 0);
	size = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)size);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	/* where the refused record starts, as the reader says */
	assert_int_equal(tc_record_reader_init(&r, buf, (size_t)size, "mem", &d), 0);
	while (tc_record_reader_next(&r, &rec, "mem", &d) == 1)
		if (rec.type == TC_REC_TPFORMAT && rec.u.tpformat.event == 0)
			at = rec.offset;
	assert_true(at > 0);
	assert_int_equal(tc_timeline_load_mem(buf, (size_t)size, "crafted.trace", &t, &d), 0);
	snprintf(want, sizeof(want), "tracepoint format 0 of crafted.trace (the record at byte "
		 "%llu) is not one the kernel writes: the print format has \"$\" after a "
		 "subscript; its payloads are not decoded\n", (unsigned long long)at);
	assert_non_null(t->notes.buf);
	assert_non_null(strstr(t->notes.buf, want));
	assert_false(tc_payload_has(t->payload, 0));
	assert_true(tc_payload_has(t->payload, 1));
	tacho_timeline_free(t);
	tc_record_writer_close(&w);
	free(buf);
}

/* every format file under events/: the shape the kernel writes, and one libtraceevent
 * reads whole */
static void test_machine(void **state)
{
	static const char *const roots[] = { "/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events" };
	DIR *top = NULL;
	const char *root = NULL;
	struct dirent *s, *e;
	size_t n = 0;
	char why[128];

	(void)state;
	for (size_t i = 0; i < 2 && !top; i++)
		if ((top = opendir(roots[i])))
			root = roots[i];
	if (!top)
		TEST_SKIP("tracefs's events/ is not readable here");
	while ((s = readdir(top))) {
		char dir[512];
		DIR *d;
		if (s->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, s->d_name);
		if (!(d = opendir(dir)))
			continue;
		while ((e = readdir(d))) {
			char path[1024], *text;
			size_t len, cap = 1 << 20;
			FILE *f;
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/format", dir, e->d_name);
			if (!(f = fopen(path, "r")))
				continue;
			text = malloc(cap);
			assert_non_null(text);
			len = fread(text, 1, cap, f);
			fclose(f);
			if (len && tc_tpformat_check(text, len, why, sizeof(why)))
				fail_msg("%s refused: %s", path, why);
			n += len != 0;
			free(text);
		}
		closedir(d);
	}
	closedir(top);
	if (!n)
		TEST_SKIP("no format under %s is readable here", root);
	printf("# %zu formats under %s pass\n", n, root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_payload),
		cmocka_unit_test(test_trace_note),
		cmocka_unit_test(test_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
