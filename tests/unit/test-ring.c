/* test-ring.c - the perf ring buffer reader on synthetic rings: order, wrap-around, a
 * record straddling the end, the released tail, broken sizes; sample record parsing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "perf/ring.h"

#define META 4096
#define DATA 256

struct ringmem {
	unsigned char mem[META + DATA] __attribute__((aligned(64)));
	struct tc_ring r;
	uint64_t head;
};

static struct perf_event_mmap_page *meta(struct ringmem *m)
{
	return (struct perf_event_mmap_page *)(void *)m->mem;
}

/* What the kernel does: write a record at head (wrapping byte by byte), advance head. */
static void put_record(struct ringmem *m, uint32_t type, uint16_t size, uint64_t fill)
{
	unsigned char rec[512];
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };

	memcpy(rec, &h, sizeof(h));
	for (size_t i = sizeof(h); i < size; i += 8)
		memcpy(rec + i, &fill, 8);
	for (size_t i = 0; i < size; i++)
		m->mem[META + ((m->head + i) & (DATA - 1))] = rec[i];
	m->head += size;
	meta(m)->data_head = m->head;
}

struct seen {
	int n;
	uint32_t type[64];
	uint16_t size[64];
	uint64_t fill[64];
};

static int collect(void *arg, const struct perf_event_header *h)
{
	struct seen *s = arg;

	s->type[s->n] = h->type;
	s->size[s->n] = h->size;
	memcpy(&s->fill[s->n], (const unsigned char *)(h + 1), 8);
	/* every payload word must read the same: the record arrives contiguous */
	for (size_t i = sizeof(*h); i < h->size; i += 8) {
		uint64_t v;
		memcpy(&v, (const unsigned char *)h + i, 8);
		assert_int_equal(v, s->fill[s->n]);
	}
	s->n++;
	return 0;
}

static void test_drain_in_order(void **state)
{
	struct ringmem *m = calloc(1, sizeof(*m));
	struct seen s = { 0 };
	(void)state;

	assert_int_equal(tc_ring_init_mem(&m->r, m->mem, META, DATA), 0);
	assert_false(tc_ring_pending(&m->r));
	put_record(m, PERF_RECORD_SAMPLE, 48, 0x1111);
	put_record(m, PERF_RECORD_MMAP2, 64, 0x2222);
	put_record(m, PERF_RECORD_LOST, 24, 0x3333);
	assert_true(tc_ring_pending(&m->r));
	assert_int_equal(tc_ring_drain(&m->r, collect, &s), 3);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.type[0], PERF_RECORD_SAMPLE);
	assert_int_equal(s.fill[1], 0x2222);
	assert_int_equal(s.size[2], 24);
	assert_int_equal(meta(m)->data_tail, 136);
	assert_false(tc_ring_pending(&m->r));
	assert_int_equal(tc_ring_drain(&m->r, collect, &s), 0);
	tc_ring_exit(&m->r);
	free(m);
}

static void test_drain_straddling(void **state)
{
	struct ringmem *m = calloc(1, sizeof(*m));
	struct seen s = { 0 };
	(void)state;

	assert_int_equal(tc_ring_init_mem(&m->r, m->mem, META, DATA), 0);
	/* fill to 200 of 256 bytes, consume, then a 96-byte record wraps at 256 */
	put_record(m, PERF_RECORD_SAMPLE, 200, 0xaa);
	assert_int_equal(tc_ring_drain(&m->r, collect, &s), 1);
	put_record(m, PERF_RECORD_SAMPLE, 96, 0xbbbbccccddddeeee);
	put_record(m, PERF_RECORD_COMM, 32, 0x77);
	assert_int_equal(tc_ring_drain(&m->r, collect, &s), 2);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.size[1], 96);
	assert_int_equal(s.fill[1], 0xbbbbccccddddeeee);
	assert_int_equal(s.fill[2], 0x77);
	assert_int_equal(m->r.wraps, 1);
	assert_int_equal(meta(m)->data_tail, 328);
	/* many laps: head and tail run past the size many times */
	for (int lap = 0; lap < 40; lap++)
		put_record(m, PERF_RECORD_SAMPLE, 120, (uint64_t)lap), s.n = 0,
		assert_int_equal(tc_ring_drain(&m->r, collect, &s), 1),
		assert_int_equal(s.fill[0], (uint64_t)lap);
	tc_ring_exit(&m->r);
	free(m);
}

static int stop_after_one(void *arg, const struct perf_event_header *h)
{
	(void)h;
	(*(int *)arg)++;
	return 7;
}

static void test_drain_stop_and_broken(void **state)
{
	struct ringmem *m = calloc(1, sizeof(*m));
	int calls = 0;
	struct seen s = { 0 };
	(void)state;

	assert_int_equal(tc_ring_init_mem(&m->r, m->mem, META, DATA), 0);
	put_record(m, PERF_RECORD_SAMPLE, 40, 1);
	put_record(m, PERF_RECORD_SAMPLE, 40, 2);
	/* the callback's value comes back, and only the consumed record is released */
	assert_int_equal(tc_ring_drain(&m->r, stop_after_one, &calls), 7);
	assert_int_equal(calls, 1);
	assert_int_equal(meta(m)->data_tail, 40);
	assert_int_equal(tc_ring_drain(&m->r, collect, &s), 1);
	/* a record claiming 4 bytes (smaller than its header) breaks the ring */
	put_record(m, PERF_RECORD_SAMPLE, 4, 0);
	assert_int_equal(tc_ring_drain(&m->r, collect, &s), -TACHO_ECORRUPT);
	assert_int_equal(meta(m)->data_tail, m->head);
	tc_ring_exit(&m->r);
	/* bad geometry is refused */
	assert_int_equal(tc_ring_init_mem(&m->r, m->mem, META, 100), -EINVAL);
	tc_ring_exit(&m->r);
	free(m);
}

static void test_parse_sample(void **state)
{
	uint64_t rec[16];
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0 };
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
		      PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	struct tc_perf_sample s;
	struct tc_perf_sample_id id;
	int i = 1;
	(void)state;

	rec[i++] = 0x401000;                         /* ip */
	rec[i++] = (uint64_t)101 | (uint64_t)102 << 32; /* pid, tid */
	rec[i++] = 123456789;                        /* time */
	rec[i++] = 0x7ffd0000;                       /* addr */
	rec[i++] = 3;                                /* cpu, res */
	rec[i++] = 1000;                             /* period */
	rec[i++] = 2;                                /* nr */
	rec[i++] = 0x401000;
	rec[i++] = 0x402000;
	h.size = (uint16_t)(i * 8);
	memcpy(rec, &h, 8);
	assert_int_equal(tc_perf_parse_sample(st, (void *)rec, &s), 0);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.pid, 101);
	assert_int_equal(s.tid, 102);
	assert_int_equal(s.time, 123456789);
	assert_int_equal(s.addr, 0x7ffd0000);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.period, 1000);
	assert_int_equal(s.nr, 2);
	assert_int_equal(s.chain[1], 0x402000);
	assert_int_equal(s.misc, PERF_RECORD_MISC_USER);
	/* a call chain longer than the record is caught */
	rec[7] = 3;
	assert_int_equal(tc_perf_parse_sample(st, (void *)rec, &s), -TACHO_ECORRUPT);
	rec[7] = 2;
	/* cut short: every shorter size fails cleanly */
	for (int n = 1; n < i; n++) {
		h.size = (uint16_t)(n * 8);
		memcpy(rec, &h, 8);
		assert_int_equal(tc_perf_parse_sample(st, (void *)rec, &s), -TACHO_ECORRUPT);
	}
	assert_int_equal(tc_perf_parse_sample(PERF_SAMPLE_TRANSACTION, (void *)rec, &s), -EINVAL);
	/* a tracepoint's raw data: u32 size, the bytes, padding to a u64 */
	h.type = PERF_RECORD_SAMPLE;
	h.size = 4 * 8;
	memcpy(rec, &h, 8);
	rec[1] = 0x401000;
	rec[2] = (uint64_t)10 << 0 | (uint64_t)0x44434241 << 32;   /* size 10, "ABCD" */
	rec[3] = 0x0000494847464545ull;                              /* "EEFGHI", pad */
	assert_int_equal(tc_perf_parse_sample(PERF_SAMPLE_IP | PERF_SAMPLE_RAW, (void *)rec, &s), 0);
	assert_int_equal(s.raw_size, 10);
	assert_memory_equal(s.raw, "ABCDEEFGHI", 10);
	/* a size past the record */
	rec[2] = (uint64_t)13 | (uint64_t)0x44434241 << 32;
	assert_int_equal(tc_perf_parse_sample(PERF_SAMPLE_IP | PERF_SAMPLE_RAW, (void *)rec, &s),
			 -TACHO_ECORRUPT);
	/* PERF_SAMPLE_READ between the period and the call chain: value, enabled,
	 * running, id (the engine's read_format) */
	i = 1;
	rec[i++] = 0x401000;                         /* ip */
	rec[i++] = 1000;                             /* period */
	rec[i++] = 4242;                             /* value */
	rec[i++] = 9000;                             /* time_enabled */
	rec[i++] = 8000;                             /* time_running */
	rec[i++] = 77;                               /* id */
	rec[i++] = 1;                                /* nr */
	rec[i++] = 0x403000;
	h.size = (uint16_t)(i * 8);
	memcpy(rec, &h, 8);
	st = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN;
	assert_int_equal(tc_perf_parse_sample(st, (void *)rec, &s), 0);
	assert_int_equal(s.period, 1000);
	assert_int_equal(s.value, 4242);
	assert_int_equal(s.nr, 1);
	assert_int_equal(s.chain[0], 0x403000);
	h.size = (uint16_t)(5 * 8);                  /* cut inside the read values */
	memcpy(rec, &h, 8);
	assert_int_equal(tc_perf_parse_sample(st, (void *)rec, &s), -TACHO_ECORRUPT);
	/* a calibrated tracepoint: the read values, then the raw data after them */
	i = 1;
	rec[i++] = 0x401000;                         /* ip */
	rec[i++] = 1;                                /* period */
	rec[i++] = 5;                                /* value */
	rec[i++] = 9000;                             /* time_enabled */
	rec[i++] = 8000;                             /* time_running */
	rec[i++] = 77;                               /* id */
	rec[i++] = (uint64_t)4 | (uint64_t)0x44434241 << 32;   /* size 4, "ABCD" */
	h.size = (uint16_t)(i * 8);
	memcpy(rec, &h, 8);
	st = PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_RAW;
	assert_int_equal(tc_perf_parse_sample(st, (void *)rec, &s), 0);
	assert_int_equal(s.value, 5);
	assert_int_equal(s.raw_size, 4);
	assert_memory_equal(s.raw, "ABCD", 4);
	/* sample_id_all trailer of a non-sample record: TID, TIME, CPU at the end */
	h.type = PERF_RECORD_COMM;
	h.size = 6 * 8;
	memcpy(rec, &h, 8);
	rec[3] = (uint64_t)7 | (uint64_t)8 << 32;
	rec[4] = 55;
	rec[5] = 1;
	assert_int_equal(tc_perf_parse_sample_id(PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						 PERF_SAMPLE_CPU | PERF_SAMPLE_IP, (void *)rec, &id), 0);
	assert_int_equal(id.pid, 7);
	assert_int_equal(id.tid, 8);
	assert_int_equal(id.time, 55);
	assert_int_equal(id.cpu, 1);
}

/* The DWARF and LBR fields: branch entries, the user registers of the mask, the stack
 * window and its filled size; short records and impossible sizes fail cleanly. */
static void test_parse_regs_stack_branch(void **state)
{
	uint64_t rec[32];
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0 };
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK |
		      PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	uint64_t mask = (1u << 6) | (1u << 7) | (1u << 8);   /* BP, SP, IP */
	struct tc_perf_sample s;
	int i = 1, n;
	(void)state;

	rec[i++] = 0x401000;                         /* ip */
	rec[i++] = 0;                                /* callchain nr */
	rec[i++] = 1;                                /* branch nr */
	rec[i++] = 0x401100;                         /* from */
	rec[i++] = 0x401000;                         /* to */
	rec[i++] = 0;                                /* flags */
	rec[i++] = PERF_SAMPLE_REGS_ABI_64;
	rec[i++] = 0x7ffd0010;                       /* bp */
	rec[i++] = 0x7ffd0000;                       /* sp */
	rec[i++] = 0x401000;                         /* ip */
	rec[i++] = 16;                               /* stack size */
	rec[i++] = 0x1111;
	rec[i++] = 0x2222;
	rec[i++] = 8;                                /* dyn_size */
	n = i;
	h.size = (uint16_t)(n * 8);
	memcpy(rec, &h, 8);
	assert_int_equal(tc_perf_parse_sample_regs(st, mask, (void *)rec, &s), 0);
	assert_int_equal(s.bnr, 1);
	assert_int_equal(s.branches[0], 0x401100);
	assert_int_equal(s.branches[1], 0x401000);
	assert_int_equal(s.regs_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s.nregs, 3);
	assert_int_equal(s.regs[1], 0x7ffd0000);
	assert_int_equal(s.stack_size, 16);
	assert_int_equal(s.stack_dyn, 8);
	assert_memory_equal(s.stack, &rec[12], 16);
	/* every shorter record fails cleanly */
	for (int k = 1; k < n; k++) {
		h.size = (uint16_t)(k * 8);
		memcpy(rec, &h, 8);
		assert_int_equal(tc_perf_parse_sample_regs(st, mask, (void *)rec, &s),
				 -TACHO_ECORRUPT);
	}
	/* a stack larger than the record, and branches past it */
	h.size = (uint16_t)(n * 8);
	memcpy(rec, &h, 8);
	rec[11] = 4096;
	assert_int_equal(tc_perf_parse_sample_regs(st, mask, (void *)rec, &s), -TACHO_ECORRUPT);
	rec[11] = 16;
	rec[3] = 100;
	assert_int_equal(tc_perf_parse_sample_regs(st, mask, (void *)rec, &s), -TACHO_ECORRUPT);
	rec[3] = 1;
	/* a dyn_size above the size is held to it */
	rec[14] = 64;
	assert_int_equal(tc_perf_parse_sample_regs(st, mask, (void *)rec, &s), 0);
	assert_int_equal(s.stack_dyn, 16);
	/* no user context (a kernel thread): ABI NONE and no registers; no stack */
	i = 7;
	rec[i++] = PERF_SAMPLE_REGS_ABI_NONE;
	rec[i++] = 0;                                /* stack size 0: no dyn_size */
	h.size = (uint16_t)(i * 8);
	memcpy(rec, &h, 8);
	assert_int_equal(tc_perf_parse_sample_regs(st, mask, (void *)rec, &s), 0);
	assert_int_equal(s.nregs, 0);
	assert_null(s.regs);
	assert_int_equal(s.stack_size, 0);
	assert_null(s.stack);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_in_order),
		cmocka_unit_test(test_drain_straddling),
		cmocka_unit_test(test_drain_stop_and_broken),
		cmocka_unit_test(test_parse_sample),
		cmocka_unit_test(test_parse_regs_stack_branch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
