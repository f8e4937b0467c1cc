/* test-payload.c - tracepoint payloads: the record file's TPFORMAT and RAW records
 * written and read back, the decoders on real formats (sys_enter_openat,
 * sched_process_exec's __data_loc string, sched_switch) exactly as the kernel's print
 * formats say, and every damaged payload refused before a field is read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "record/payload.h"
#include "record/recfile.h"
#include "tacho/errors.h"

#define COMMON \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

/* Linux 6.18's tracefs, verbatim */
static const char openat_fmt[] =
	"name: sys_enter_openat\nID: 782\n" COMMON
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n\n"
	"print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", "
	"((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), "
	"((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))\n";

static const char exec_fmt[] =
	"name: sched_process_exec\nID: 365\n" COMMON
	"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
	"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
	"REC->old_pid\n";

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* sys_enter_openat(AT_FDCWD, 0x55c06a540008, O_RDONLY|O_CLOEXEC, 0) as the kernel
 * writes it */
static void openat_payload(uint8_t *b)
{
	memset(b, 0, 48);
	b[0] = 782 & 0xff;
	b[1] = 782 >> 8;
	put32(b + 4, 4242);
	put32(b + 8, 257);
	put64(b + 16, 0xffffff9cu);
	put64(b + 24, 0x55c06a540008ull);
	put64(b + 32, 0x80000);
}

/* sched_process_exec of "/usr/bin/true" by pid 77 */
static void exec_payload(uint8_t *b)
{
	memset(b, 0, 40);
	b[0] = 365 & 0xff;
	b[1] = 365 >> 8;
	put32(b + 8, 20u | 14u << 16);
	put32(b + 12, 77);
	put32(b + 16, 77);
	memcpy(b + 20, "/usr/bin/true", 14);
}

struct seen {
	char text[512];
};

static int collect(void *arg, const struct tc_payload_field *f)
{
	struct seen *s = arg;
	size_t len = strlen(s->text);

	if (f->is_string)
		snprintf(s->text + len, sizeof(s->text) - len, "%s='%.*s' ", f->name, (int)f->len,
			 f->str);
	else if (f->is_pointer)
		snprintf(s->text + len, sizeof(s->text) - len, "%s=*%llx ", f->name,
			 (unsigned long long)f->num);
	else if (f->is_signed)
		snprintf(s->text + len, sizeof(s->text) - len, "%s=%lld ", f->name,
			 (long long)f->num);
	else
		snprintf(s->text + len, sizeof(s->text) - len, "%s=%llu ", f->name,
			 (unsigned long long)f->num);
	return 0;
}

static void test_decode(void **state)
{
	struct tc_payload *p;
	struct tc_sb sb = TC_SB_INIT;
	struct seen seen = { "" };
	uint8_t b[64];
	uint64_t v;

	(void)state;
	assert_int_equal(tc_payload_new(&p), 0);
	/* exec's filename is the string itself, openat's a "const char *": an address */
	assert_int_equal(tc_payload_add(p, 2, exec_fmt, strlen(exec_fmt)), 0);
	assert_false(tc_payload_has_str_args(p));
	assert_int_equal(tc_payload_add(p, 0, openat_fmt, strlen(openat_fmt)), 0);
	assert_true(tc_payload_has_str_args(p));
	assert_false(tc_payload_has_str_args(NULL));
	assert_true(tc_payload_has(p, 0));
	assert_false(tc_payload_has(p, 1));
	assert_true(tc_payload_has(p, 2));
	tc_sb_init(&sb);

	openat_payload(b);
	assert_int_equal(tc_payload_print(p, 0, b, 48, &sb), 0);
	assert_string_equal(sb.buf, "dfd: 0xffffff9c, filename: 0x55c06a540008, flags: "
			    "0x00080000, mode: 0x00000000");
	assert_int_equal(tc_payload_fields(p, 0, b, 48, collect, &seen), 0);
	assert_string_equal(seen.text, "__syscall_nr=257 dfd=4294967196 filename=*55c06a540008 "
			    "flags=524288 mode=0 ");
	assert_int_equal(tc_payload_num(p, 0, b, 48, "filename", &v), 0);
	assert_int_equal(v, 0x55c06a540008ull);
	assert_int_equal(tc_payload_num(p, 0, b, 48, "nothing", &v), -ENOENT);

	exec_payload(b);
	tc_sb_reset(&sb);
	assert_int_equal(tc_payload_print(p, 2, b, 40, &sb), 0);
	assert_string_equal(sb.buf, "filename=/usr/bin/true pid=77 old_pid=77");
	seen.text[0] = '\0';
	assert_int_equal(tc_payload_fields(p, 2, b, 40, collect, &seen), 0);
	assert_string_equal(seen.text, "filename='/usr/bin/true' pid=77 old_pid=77 ");
	assert_int_equal(tc_payload_num(p, 2, b, 40, "filename", &v), -ENOENT);

	/* no format for event 1, none past the end */
	assert_int_equal(tc_payload_print(p, 1, b, 40, &sb), -ENOENT);
	assert_int_equal(tc_payload_print(p, 9, b, 40, &sb), -ENOENT);
	tc_sb_exit(&sb);
	tc_payload_free(p);
	tc_payload_free(NULL);
}

/* Damaged payloads are refused before any field is read: every cut, another event's
 * id, a string outside the payload. */
static void test_damaged(void **state)
{
	struct tc_payload *p;
	struct tc_sb sb = TC_SB_INIT;
	uint8_t b[64];
	uint64_t v;

	(void)state;
	assert_int_equal(tc_payload_new(&p), 0);
	assert_int_equal(tc_payload_add(p, 0, openat_fmt, strlen(openat_fmt)), 0);
	assert_int_equal(tc_payload_add(p, 1, exec_fmt, strlen(exec_fmt)), 0);
	tc_sb_init(&sb);
	openat_payload(b);
	for (size_t n = 0; n < 48; n++) {
		uint8_t *cut = malloc(n ? n : 1);   /* ASan sees any read past n */
		memcpy(cut, b, n);
		assert_int_equal(tc_payload_print(p, 0, cut, n, &sb), -TACHO_ECORRUPT);
		assert_int_equal(tc_payload_num(p, 0, cut, n, "mode", &v), -TACHO_ECORRUPT);
		free(cut);
	}
	/* an exec payload given as an openat */
	exec_payload(b);
	assert_int_equal(tc_payload_print(p, 0, b, 48, &sb), -TACHO_ECORRUPT);
	/* the string's location past the end, its length past the end */
	put32(b + 8, 60u | 4u << 16);
	assert_int_equal(tc_payload_print(p, 1, b, 40, &sb), -TACHO_ECORRUPT);
	put32(b + 8, 20u | 30u << 16);
	assert_int_equal(tc_payload_print(p, 1, b, 40, &sb), -TACHO_ECORRUPT);
	put32(b + 8, 20u | 20u << 16);
	assert_int_equal(tc_payload_print(p, 1, b, 40, &sb), 0);
	/* a format that is not one; an index past 16 bits */
	assert_int_equal(tc_payload_add(p, 3, "not a format", 12), -TACHO_EPARSE);
	assert_false(tc_payload_has(p, 3));
	assert_int_equal(tc_payload_add(p, 70000, openat_fmt, strlen(openat_fmt)),
			 -TACHO_EOUTOFRANGE);
	tc_sb_exit(&sb);
	tc_payload_free(p);
}

/* TPFORMAT and RAW records read back as written; a RAW longer than its record is
 * corrupt. */
static void test_records(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_record_writer w;
	struct tc_record_reader r;
	struct tc_rec rec;
	uint8_t b[48], *buf;
	int fd = memfd_create("rec", 0);
	off_t size;

	(void)state;
	assert_true(fd >= 0);
	openat_payload(b);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_tpformat(&w, 3, openat_fmt, strlen(openat_fmt));
	tc_record_writer_raw(&w, 3, b, 45);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	size = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)size);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	assert_int_equal(tc_record_reader_init(&r, buf, (size_t)size, "mem", &d), 0);
	assert_int_equal(tc_record_reader_next(&r, &rec, "mem", &d), 1);
	assert_int_equal(rec.type, TC_REC_TPFORMAT);
	assert_int_equal(rec.u.tpformat.event, 3);
	assert_int_equal(rec.u.tpformat.len, strlen(openat_fmt));
	assert_memory_equal(rec.u.tpformat.text, openat_fmt, strlen(openat_fmt));
	assert_int_equal(tc_record_reader_next(&r, &rec, "mem", &d), 1);
	assert_int_equal(rec.type, TC_REC_RAW);
	assert_int_equal(rec.u.raw.event, 3);
	assert_int_equal(rec.u.raw.size, 45);
	assert_memory_equal(rec.u.raw.data, b, 45);
	assert_int_equal(tc_record_reader_next(&r, &rec, "mem", &d), 0);
	tc_record_writer_close(&w);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
