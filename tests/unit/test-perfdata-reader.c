/* test-perfdata-reader.c - the perf.data reader on files built here byte by byte: a sample with
 * every field perf_event_open can write decodes its IP, ids, time, CPU, period, call
 * chain, user registers and stack after the fields it steps over, and a sample 8 bytes
 * short of its fields is corrupt (the steps are exact); pipe mode's attribute and name records, the side-band
 * records, unknown types, a cut file, the other byte order; a sample without CPU or
 * mapping; samples in anonymous code, unnamed without a warning; throttles counted;
 * perf's tracing data: a tracepoint's format and its samples' payloads, decoded;
 * perf record -z's compressed records (a recording committed in tests/data/perfdata). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "harness.h"
#include "report/perfdata.h"
#include "tacho/errors.h"
#include "tacho/report.h"

struct buf {
	unsigned char d[8192];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->d));
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

/* Starts a record: its header's size is set by end(). */
static size_t begin(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->n;
	uint16_t zero = 0;

	put32(b, type);
	put(b, &misc, 2);
	put(b, &zero, 2);
	return at;
}

static void end(struct buf *b, size_t at)
{
	uint16_t size = (uint16_t)(b->n - at);

	while (b->n % 8)
		b->d[b->n++] = 0;
	size = (uint16_t)(b->n - at);
	memcpy(b->d + at + 6, &size, 2);
}

#define ALL_FIELDS                                                                           \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |       \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |         \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |      \
	 PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |           \
	 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |                 \
	 PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |                  \
	 PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)

/* A pipe-mode file: the attribute (id 42) with every sample field, its name, a COMM,
 * an executable MMAP2, a sample (cut short by `short_by` bytes of its fields), a LOST
 * record, a record of an unknown type, a FORK. */
static void build(struct buf *b, size_t short_by)
{
	struct perf_event_attr a;
	size_t at;

	memset(b, 0, sizeof(*b));
	put(b, "PERFILE2", 8);
	put64(b, 16);

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000;
	a.sample_type = ALL_FIELDS;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED;
	a.sample_id_all = 1;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX;
	a.sample_regs_user = 0x7;      /* three registers */
	a.sample_regs_intr = 0x3;      /* two */
	at = begin(b, 64 /* PERF_RECORD_HEADER_ATTR */, 0);
	put(b, &a, sizeof(a));
	put64(b, 42);
	end(b, at);

	at = begin(b, 78 /* PERF_RECORD_EVENT_UPDATE */, 0);
	put64(b, 2 /* NAME */);
	put64(b, 42);
	put(b, "my-clock", 9);
	end(b, at);

	at = begin(b, PERF_RECORD_COMM, 0);
	put32(b, 7);
	put32(b, 7);
	put(b, "prog", 5);
	end(b, at);

	at = begin(b, PERF_RECORD_MMAP2, 0);
	put32(b, 7);
	put32(b, 7);
	put64(b, 0x400000);
	put64(b, 0x1000);
	put64(b, 0);
	put32(b, 0);   /* maj, min */
	put32(b, 0);
	put64(b, 0);   /* ino, ino_generation */
	put64(b, 0);
	put32(b, 5);   /* PROT_READ | PROT_EXEC */
	put32(b, 2);
	put(b, "/nonexistent/prog", 18);
	end(b, at);

	at = begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(b, 42);                  /* identifier */
	put64(b, 0x401234);            /* ip */
	put32(b, 7);                   /* pid, tid */
	put32(b, 8);
	put64(b, 123456789);           /* time */
	put64(b, 0xdead000);           /* addr */
	put64(b, 42);                  /* id */
	put64(b, 42);                  /* stream id */
	put32(b, 3);                   /* cpu, reserved */
	put32(b, 0);
	put64(b, 977);                 /* period */
	put64(b, 2);                   /* read: nr, time enabled, nr x (value, id) */
	put64(b, 1000);
	for (int i = 0; i < 4; i++)
		put64(b, 1 + i);
	put64(b, 3);                   /* call chain of 3 */
	put64(b, (uint64_t)PERF_CONTEXT_USER);
	put64(b, 0x401234);
	put64(b, 0x401100);
	put32(b, 12);                  /* raw: 12 bytes, the u32 and them 8-aligned */
	put(b, "raw-payload!", 12);
	put64(b, 2);                   /* branch stack: nr, hw_idx, 2 x 24 bytes */
	put64(b, 0);
	for (int i = 0; i < 6; i++)
		put64(b, 0x500 + i);
	put64(b, 2);                   /* user regs: abi, 3 registers */
	for (int i = 0; i < 3; i++)
		put64(b, 0x600 + i);
	put64(b, 16);                  /* user stack: 16 bytes, dyn_size */
	put64(b, 0);
	put64(b, 0);
	put64(b, 16);
	put64(b, 5);                   /* weight, data source, transaction */
	put64(b, 6);
	put64(b, 7);
	put64(b, 2);                   /* interrupt regs: abi, 2 registers */
	put64(b, 0x700);
	put64(b, 0x701);
	put64(b, 0x1234000);           /* physical address, cgroup, page sizes */
	put64(b, 9);
	put64(b, 4096);
	put64(b, 4096);
	put64(b, 8);                   /* AUX data, last: 8 bytes */
	put64(b, 0xa0a0);
	b->n -= short_by;
	end(b, at);

	at = begin(b, PERF_RECORD_LOST, 0);
	put64(b, 42);
	put64(b, 17);
	end(b, at);

	at = begin(b, 200 /* a type no perf writes yet */, 0);
	put64(b, 1);
	end(b, at);

	at = begin(b, PERF_RECORD_FORK, 0);
	put32(b, 9);
	put32(b, 7);
	put32(b, 9);
	put32(b, 7);
	put64(b, 2000);
	end(b, at);
}

static void test_every_sample_field(void **state)
{
	struct tc_perfdata_reader r;
	struct tc_rec rec;
	struct buf b;
	uint64_t c;
	(void)state;

	build(&b, 0);
	assert_int_equal(tc_perfdata_reader_init(&r, b.d, b.n, "t", NULL), 0);
	assert_true(r.pipe);

	/* the event before the kernel's first record, named by its update */
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_EVENT);
	assert_int_equal(rec.u.event.index, 0);
	assert_string_equal(rec.u.event.name, "my-clock");
	assert_int_equal(rec.u.event.period, 1000);
	assert_int_equal(rec.u.event.flags, TC_EVF_ADDR | TC_EVF_CALLCHAIN);

	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_COMM);
	assert_int_equal(rec.u.comm.pid, 7);
	assert_string_equal(rec.u.comm.comm, "prog");

	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_MMAP);
	assert_int_equal(rec.u.mmap.start, 0x400000);
	assert_int_equal(rec.u.mmap.len, 0x1000);
	assert_string_equal(rec.u.mmap.filename, "/nonexistent/prog");

	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_SAMPLE);
	assert_int_equal(rec.u.sample.ip, 0x401234);
	assert_int_equal(rec.u.sample.pid, 7);
	assert_int_equal(rec.u.sample.tid, 8);
	assert_int_equal(rec.u.sample.time, 123456789);
	assert_int_equal(rec.u.sample.addr, 0xdead000);
	assert_int_equal(rec.u.sample.cpu, 3);
	assert_int_equal(rec.u.sample.period, 977);
	assert_int_equal(rec.u.sample.misc, PERF_RECORD_MISC_USER);
	assert_int_equal(rec.u.sample.event, 0);
	assert_int_equal(rec.u.sample.nr, 3);
	memcpy(&c, &rec.u.sample.chain[2], 8);
	assert_int_equal(c, 0x401100);

	/* its user registers and stack, for the report to unwind */
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_USTACK);
	assert_int_equal(rec.u.ustack.abi, 2);
	assert_int_equal(rec.u.ustack.mask, 0x7);
	assert_int_equal(rec.u.ustack.nregs, 3);
	memcpy(&c, &rec.u.ustack.regs[2], 8);
	assert_int_equal(c, 0x602);
	assert_int_equal(rec.u.ustack.stack_len, 16);

	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_LOST);
	assert_int_equal(rec.u.lost.lost, 17);

	/* the unknown type is stepped over */
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_TASK);
	assert_int_equal(rec.u.task.kind, TC_TASK_FORK);
	assert_int_equal(rec.u.task.pid, 9);
	assert_int_equal(rec.u.task.ppid, 7);
	assert_int_equal(rec.u.task.time, 2000);
	assert_int_equal(r.skipped, 1);

	/* the words last; then the end, whole */
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_META);
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 0);
	assert_true(r.finished);
	assert_false(r.truncated);
	assert_int_equal(r.good_end, b.n);
	tc_perfdata_reader_exit(&r);
}

/* 8 bytes fewer than the fields take: the last step (the AUX data) runs past the
 * record */
static void test_short_sample(void **state)
{
	struct tc_perfdata_reader r;
	struct tc_rec rec;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct buf b;
	int ret;
	(void)state;

	build(&b, 8);
	assert_int_equal(tc_perfdata_reader_init(&r, b.d, b.n, "t", &d), 0);
	while ((ret = tc_perfdata_reader_next(&r, &rec, "t", &d)) == 1)
		assert_int_not_equal(rec.type, TC_REC_SAMPLE);
	assert_int_equal(ret, -TACHO_ECORRUPT);
	assert_contains(d.message, "corrupt perf.data at byte ");
	assert_contains(d.message, "a sample ends inside its AUX data");
	tc_perfdata_reader_exit(&r);
}

/* Cut anywhere: whole records up to the cut, then the end, marked truncated. */
static void test_cut(void **state)
{
	struct buf b;
	(void)state;

	build(&b, 0);
	for (size_t cut = 16; cut < b.n; cut++) {
		struct tc_perfdata_reader r;
		struct tc_rec rec;
		int ret;

		assert_int_equal(tc_perfdata_reader_init(&r, b.d, cut, "t", NULL), 0);
		while ((ret = tc_perfdata_reader_next(&r, &rec, "t", NULL)) == 1)
			;
		assert_int_equal(ret, 0);
		assert_true(r.good_end <= cut);
		assert_true(r.truncated == (r.good_end != cut));
		tc_perfdata_reader_exit(&r);
	}
}

static void test_bad_headers(void **state)
{
	struct tc_perfdata_reader r;
	struct tacho_diag d = { .sz = sizeof(d) };
	unsigned char h[104];
	(void)state;

	memset(h, 0, sizeof(h));
	memcpy(h, "2ELIFREP", 8);
	assert_int_equal(tc_perfdata_reader_init(&r, h, sizeof(h), "t", &d), -TACHO_EVERSION);
	assert_contains(d.message, "other byte order");
	tc_perfdata_reader_exit(&r);

	memcpy(h, "PERFILE2", 8);
	h[8] = 50;   /* neither 16 nor 104 */
	assert_int_equal(tc_perfdata_reader_init(&r, h, sizeof(h), "t", &d), -TACHO_ECORRUPT);
	assert_contains(d.message, "corrupt perf.data at byte 8");
	tc_perfdata_reader_exit(&r);

	h[8] = 104;
	assert_int_equal(tc_perfdata_reader_init(&r, h, 60, "t", &d), -TACHO_ETRUNC);
	tc_perfdata_reader_exit(&r);
}

/* A pipe-mode file of one sample without CPU, in no mapping: its CPU is unknown (not
 * 0), and the views that group by mapping (pprof) take a profile that has none. */
static void test_no_cpu_no_mapping(void **state)
{
	struct tc_perfdata_reader r;
	struct tc_rec rec;
	struct perf_event_attr a;
	struct tacho_profile *p;
	struct buf b;
	size_t at;
	FILE *f;
	(void)state;

	memset(&b, 0, sizeof(b));
	put(&b, "PERFILE2", 8);
	put64(&b, 16);
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	at = begin(&b, 64 /* PERF_RECORD_HEADER_ATTR */, 0);
	put(&b, &a, sizeof(a));
	put64(&b, 5);
	end(&b, at);
	at = begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(&b, 0x401000);
	put32(&b, 7);
	put32(&b, 7);
	put64(&b, 1000);
	put64(&b, 1);
	end(&b, at);

	assert_int_equal(tc_perfdata_reader_init(&r, b.d, b.n, "t", NULL), 0);
	do
		assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	while (rec.type != TC_REC_SAMPLE);
	assert_int_equal(rec.u.sample.ip, 0x401000);
	assert_int_equal(rec.u.sample.cpu, TC_CPU_UNKNOWN);
	tc_perfdata_reader_exit(&r);

	f = fopen(th_tmp("nomap.data"), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.d, 1, b.n, f), b.n);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(tacho_profile_load(th_tmp("nomap.data"), &p, NULL), 0);
	f = fopen("/dev/null", "w");
	assert_non_null(f);
	assert_int_equal(tacho_profile_write_pprof(p, f), 0);
	assert_int_equal(tacho_profile_write_script(p, f), 0);
	fclose(f);
	tacho_profile_free(p);
}

static char logged[2048];

static void log_to_buf(void *arg, enum tacho_log_level level, const char *msg)
{
	size_t n = strlen(logged);
	(void)arg;
	(void)level;

	snprintf(logged + n, sizeof(logged) - n, "%s\n", msg);
}

static void put_mmap2(struct buf *b, uint64_t start, const char *name)
{
	size_t at = begin(b, PERF_RECORD_MMAP2, 0);

	put32(b, 7);
	put32(b, 7);
	put64(b, start);
	put64(b, 0x1000);
	put64(b, 0);
	put32(b, 0);   /* maj, min */
	put32(b, 0);
	put64(b, 0);   /* ino, ino_generation */
	put64(b, 0);
	put32(b, 5);   /* PROT_READ | PROT_EXEC */
	put32(b, 2);
	put(b, name, strlen(name) + 1);
	end(b, at);
}

/* Samples in anonymous code ("//anon", what the kernel names a JIT's mapping) are
 * unnamed without a word, as memfds are; a binary that is gone is still said. perf's
 * THROTTLE records are the report's throttles (UNTHROTTLE ones are not). */
static void test_anon_code_quiet(void **state)
{
	struct perf_event_attr a;
	struct tacho_profile *p;
	struct tacho_profile_row *rows;
	struct buf b;
	size_t at, n;
	FILE *f;
	(void)state;

	memset(&b, 0, sizeof(b));
	put(&b, "PERFILE2", 8);
	put64(&b, 16);
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	at = begin(&b, 64 /* PERF_RECORD_HEADER_ATTR */, 0);
	put(&b, &a, sizeof(a));
	put64(&b, 5);
	end(&b, at);
	put_mmap2(&b, 0x7f0000000000, "//anon");
	put_mmap2(&b, 0x400000, "/nonexistent/tacho-test-prog");
	for (int i = 0; i < 2; i++) {
		at = begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		put64(&b, i ? 0x400010 : 0x7f0000000010);
		put32(&b, 7);
		put32(&b, 7);
		end(&b, at);
	}
	/* throttled twice, unthrottled once: the report counts the throttles */
	for (int i = 0; i < 3; i++) {
		at = begin(&b, i == 1 ? PERF_RECORD_UNTHROTTLE : PERF_RECORD_THROTTLE, 0);
		put64(&b, 1000 + (uint64_t)i);   /* time, id, stream id */
		put64(&b, 5);
		put64(&b, 5);
		end(&b, at);
	}
	f = fopen(th_tmp("anon.data"), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.d, 1, b.n, f), b.n);
	assert_int_equal(fclose(f), 0);

	logged[0] = 0;
	tacho_set_log(log_to_buf, NULL, TACHO_LOG_WARN);
	assert_int_equal(tacho_profile_load(th_tmp("anon.data"), &p, NULL), 0);
	{
		struct tacho_profile_info info = { .sz = sizeof(info) };
		assert_int_equal(tacho_profile_info(p, &info), 0);
		assert_int_equal(info.samples, 2);
		assert_int_equal(info.throttles, 2);
	}
	assert_int_equal(tacho_profile_rows(p, TACHO_SORT_SYMBOL, false, &rows, &n,
					    sizeof(*rows)), 0);
	tacho_set_log(NULL, NULL, TACHO_LOG_WARN);
	assert_int_equal(n, 2);
	free(rows);
	tacho_profile_free(p);
	assert_contains(logged, "cannot read /nonexistent/tacho-test-prog");
	if (strstr(logged, "anon"))
		fail_msg("a word about anonymous code: %s", logged);
}

static const char tp_format[] =
	"name: ev\nID: 7\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:int val;\toffset:8;\tsize:4;\tsigned:1;\n\n"
	"print fmt: \"val=%d\", REC->val\n";

/* Pipe mode: a tracepoint's attribute (config 7), perf's tracing data (trace-cmd's
 * layout: one system "tst" of one event, ID 7) after its record, a sample with a raw
 * payload of val -5. *td: where the tracing data starts; *fmt: where the format's size
 * is. */
static void build_tp(struct buf *b, size_t *td, size_t *fmt)
{
	struct perf_event_attr a;
	size_t at, start;
	uint32_t tdlen;
	unsigned char raw[12] = { 7, 0, 0, 0, 9, 0, 0, 0 };
	int32_t val = -5;

	memset(b, 0, sizeof(*b));
	put(b, "PERFILE2", 8);
	put64(b, 16);
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = 7;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_RAW;
	at = begin(b, 64 /* PERF_RECORD_HEADER_ATTR */, 0);
	put(b, &a, sizeof(a));
	put64(b, 5);
	end(b, at);
	at = begin(b, 66 /* PERF_RECORD_HEADER_TRACING_DATA */, 0);
	put32(b, 0);   /* the size, set below */
	put32(b, 0);
	end(b, at);
	start = *td = b->n;
	put(b, "\027\010\104tracing0.6", 14);
	put(b, "\0\010", 2);          /* little-endian, 8-byte longs */
	put32(b, 4096);               /* page size */
	put(b, "header_page", 12);
	put64(b, 3);
	put(b, "abc", 3);
	put(b, "header_event", 13);
	put64(b, 0);
	put32(b, 0);                  /* no ftrace formats */
	put32(b, 1);                  /* one system */
	put(b, "tst", 4);
	put32(b, 1);
	*fmt = b->n;
	put64(b, sizeof(tp_format) - 1);
	put(b, tp_format, sizeof(tp_format) - 1);
	put32(b, 0);                  /* kallsyms, printk formats: empty */
	put32(b, 0);
	tdlen = (uint32_t)(b->n - start);
	memcpy(b->d + at + 8, &tdlen, 4);
	while (b->n % 8)
		b->d[b->n++] = 0;
	at = begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(b, 0x401000);
	put32(b, 9);
	put32(b, 9);
	memcpy(raw + 8, &val, 4);
	put32(b, sizeof(raw));
	put(b, raw, sizeof(raw));
	end(b, at);
}

/* perf's tracing data gives the tracepoint its name and a TPFORMAT record, and the
 * sample its RAW payload right after it, which the report decodes as perf script does;
 * damaged tracing data fails with the byte where it is. */
static void test_tracing_data(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_perfdata_reader r;
	struct tacho_profile *p;
	struct tc_rec rec;
	struct buf b;
	size_t td, fmt, len = 0;
	char *out = NULL, want[64];
	uint64_t huge = 1ull << 40;
	FILE *f;
	(void)state;

	build_tp(&b, &td, &fmt);
	assert_int_equal(tc_perfdata_reader_init(&r, b.d, b.n, "t", NULL), 0);
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_EVENT);
	assert_string_equal(rec.u.event.name, "tst:ev");
	assert_true(rec.u.event.flags & TC_EVF_RAW);
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_TPFORMAT);
	assert_int_equal(rec.u.tpformat.event, 0);
	assert_int_equal(rec.u.tpformat.len, sizeof(tp_format) - 1);
	assert_memory_equal(rec.u.tpformat.text, tp_format, sizeof(tp_format) - 1);
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_SAMPLE);
	assert_int_equal(tc_perfdata_reader_next(&r, &rec, "t", NULL), 1);
	assert_int_equal(rec.type, TC_REC_RAW);
	assert_int_equal(rec.u.raw.event, 0);
	assert_int_equal(rec.u.raw.size, 12);
	assert_ptr_equal(rec.u.raw.data, b.d + b.n - 12);
	tc_perfdata_reader_exit(&r);

	f = fopen(th_tmp("tp.data"), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b.d, 1, b.n, f), b.n);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(tacho_profile_load(th_tmp("tp.data"), &p, NULL), 0);
	f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(tacho_profile_write_script(p, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_contains(out, " tst:ev: val=-5\n");
	free(out);
	tacho_profile_free(p);

	/* no magic: the byte where the tracing data starts */
	b.d[td] = 0;
	assert_int_equal(tc_perfdata_reader_init(&r, b.d, b.n, "t", &d), 0);
	while (tc_perfdata_reader_next(&r, &rec, "t", &d) == 1)
		;
	snprintf(want, sizeof(want), "at byte %zu: tracing data without its magic", td);
	assert_contains(d.message, want);
	tc_perfdata_reader_exit(&r);
	/* a format's size past the end: the byte after that size */
	build_tp(&b, &td, &fmt);
	memcpy(b.d + fmt, &huge, 8);
	assert_int_equal(tc_perfdata_reader_init(&r, b.d, b.n, "t", &d), 0);
	while (tc_perfdata_reader_next(&r, &rec, "t", &d) == 1)
		;
	snprintf(want, sizeof(want), "at byte %zu: tracing data ends inside an event's format",
		 fmt + 8);
	assert_contains(d.message, want);
	tc_perfdata_reader_exit(&r);
}

/* perf record -z -m 1 -o - of 1000 fresh pages (tests/data/perfdata/faults-z-pipe.data,
 * perf 6.1): 1024 page faults, as perf script counts them, in 32 COMPRESSED records of
 * one zstd stream whose records straddle them. Read whole, rewritten as COMPRESSED2
 * (newer perf's, with data_size and padding), cut anywhere (whole records up to the cut,
 * never an error), and with a damaged stream (corrupt, at the record's byte). */
static unsigned char *z_file(size_t *len)
{
	FILE *f = fopen(th_path("tests/data/perfdata/faults-z-pipe.data"), "rb");
	unsigned char *d = malloc(1 << 16);

	assert_non_null(f);
	assert_non_null(d);
	*len = fread(d, 1, 1 << 16, f);
	fclose(f);
	assert_true(*len > 16 && *len < 1 << 16);
	return d;
}

/* SAMPLE records read to the end: their count, or the error */
static long z_samples(const unsigned char *d, size_t len, struct tacho_diag *diag,
		      bool *truncated)
{
	struct tc_perfdata_reader r;
	struct tc_rec rec;
	long n = 0;
	int ret;

	ret = tc_perfdata_reader_init(&r, d, len, "z", diag);
	if (ret == 0)
		while ((ret = tc_perfdata_reader_next(&r, &rec, "z", diag)) == 1)
			n += rec.type == TC_REC_SAMPLE;
	if (truncated)
		*truncated = r.truncated;
	tc_perfdata_reader_exit(&r);
	return ret < 0 ? ret : n;
}

static void test_compressed(void **state)
{
	struct tacho_diag d = { .sz = sizeof(d) };
	size_t len, n2 = 16, first = 0;
	unsigned char *z = z_file(&len), *z2 = calloc(1, 1 << 17);
	bool cut;
	long n;
	(void)state;

	n = z_samples(z, len, &d, &cut);
	if (n == -TACHO_EVERSION && strstr(d.message, "libzstd"))
		TEST_SKIP("%s", d.message);
	assert_int_equal(n, 1024);
	assert_false(cut);

	/* COMPRESSED2: data_size, then the payload padded to 8 bytes */
	assert_non_null(z2);
	memcpy(z2, z, 16);
	for (size_t off = 16; off + 8 <= len;) {
		uint32_t type;
		uint16_t size, size2;
		memcpy(&type, z + off, 4);
		memcpy(&size, z + off + 6, 2);
		assert_true(size >= 8 && off + size <= len);
		if (type != 81) {
			memcpy(z2 + n2, z + off, size);
			n2 += size;
		} else {
			uint64_t ds = size - 8u;
			if (!first)
				first = off;
			size2 = (uint16_t)((16 + ds + 7) & ~7ull);
			type = 83;
			memcpy(z2 + n2, &type, 4);
			memcpy(z2 + n2 + 4, z + off + 4, 2);
			memcpy(z2 + n2 + 6, &size2, 2);
			memcpy(z2 + n2 + 8, &ds, 8);
			memcpy(z2 + n2 + 16, z + off + 8, ds);
			n2 += size2;
		}
		off += size;
	}
	assert_int_equal(z_samples(z2, n2, &d, &cut), 1024);
	assert_false(cut);

	/* cut anywhere: no error, and the later the cut, the more samples */
	for (size_t at = 16, was = 0; at < len; at += 13) {
		n = z_samples(z, at, &d, &cut);
		assert_true(n >= (long)was && n <= 1024);
		was = (size_t)n;
	}

	/* the first COMPRESSED record's zstd frame damaged: corrupt, at its byte */
	assert_true(first > 0);
	z[first + 8] ^= 0xff;
	assert_int_equal(z_samples(z, len, &d, NULL), -TACHO_ECORRUPT);
	{
		char want[64];
		snprintf(want, sizeof(want), "corrupt perf.data at byte %zu: ", first);
		assert_contains(d.message, want);
	}
	assert_contains(d.message, "zstd");
	free(z);
	free(z2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_sample_field),
		cmocka_unit_test(test_short_sample),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_bad_headers),
		cmocka_unit_test(test_no_cpu_no_mapping),
		cmocka_unit_test(test_anon_code_quiet),
		cmocka_unit_test(test_tracing_data),
		cmocka_unit_test(test_compressed),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
