/* test-record-file.c - the record file: every record type written and read back, every
 * truncation point of a small recording, corruption, bad headers and versions; and
 * tacho_record's options from a newer tacho.h, refused before any file is made. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "tacho.h"
#include "harness.h"
#include "rec-copy.h"
#include "record/recfile.h"
#include "record/reczstd.h"

static const uint8_t bid[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
				 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* A small recording in memory: every record type once, 3 samples, a FINISH. */
static unsigned char *make_recording(size_t *len, bool finish)
{
	struct tc_record_writer w;
	int fd = memfd_create("rec", 0);
	const uint64_t chain[3] = { 0x401010, 0x401200, 0x401300 };
	static const unsigned char vdso[13] = "\x7f" "ELFfakeimage";
	unsigned char *buf;
	off_t size;

	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_meta(&w, "command", "./prog arg");
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			       PERF_SAMPLE_IP | PERF_SAMPLE_ADDR, 4, TC_EVF_ADDR,
			       "page-faults");
	tc_record_writer_period(&w, 0, 8, 1000);
	tc_record_writer_mmap(&w, 100, 100, 0x400000, 0x2000, 0, 5, 10, bid, 20,
			      "/usr/bin/prog");
	tc_record_writer_comm(&w, 100, 100, true, 11, "prog");
	tc_record_writer_task(&w, TC_TASK_FORK, 101, 100, 101, 100, 12);
	tc_record_writer_sample(&w, 20, 0x401010, 0x7f0000001000, 4, 100, 100, 1, 0, 2, 0,
				NULL);
	tc_record_writer_sample(&w, 21, 0x401010, 0x7f0000002000, 4, 100, 101, 0, 0, 2, 3,
				chain);
	/* two flushes: the file is one stream whatever the flushes */
	tc_record_writer_flush(&w);
	tc_record_writer_lost(&w, 17, 22, 1);
	tc_record_writer_throttle(&w, 23, 0, true);
	tc_record_writer_image(&w, bid, 20, "[vdso]", vdso, sizeof(vdso));
	tc_record_writer_sample(&w, 24, 0x401020, 0, 4, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_task(&w, TC_TASK_EXIT, 101, 100, 101, 100, 25);
	if (finish)
		tc_record_writer_finish(&w, 3, 17, 26, 0);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	size = lseek(fd, 0, SEEK_END);
	assert_true(size > 0);
	assert_int_equal((uint64_t)size, w.written);
	buf = malloc((size_t)size);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	tc_record_writer_close(&w);   /* closes fd */
	*len = (size_t)size;
	return buf;
}

struct summary {
	int records, samples, per_type[TC_REC_TYPE_MAX + 1];
	uint64_t lost;
	bool finished, truncated;
};

/* Reads everything; returns 0 or the reader's error. */
static int read_all(const unsigned char *buf, size_t len, struct summary *s, struct tacho_diag *d)
{
	struct tc_record_reader r;
	struct tc_rec rec;
	int ret;

	memset(s, 0, sizeof(*s));
	ret = tc_record_reader_init(&r, buf, len, "test.rec", d);
	if (ret)
		return ret;
	while ((ret = tc_record_reader_next(&r, &rec, "test.rec", d)) == 1) {
		s->records++;
		s->per_type[rec.type]++;
		if (rec.type == TC_REC_SAMPLE)
			s->samples++;
		if (rec.type == TC_REC_LOST)
			s->lost += rec.u.lost.lost;
	}
	s->finished = r.finished;
	s->truncated = r.truncated;
	tc_record_reader_exit(&r);
	return ret;
}

static void test_roundtrip(void **state)
{
	size_t len, pos = 0;
	unsigned char *buf = make_recording(&len, true);
	struct tc_record_reader r;
	struct tc_rec rec;
	const char *k, *v;
	int n = 0;
	(void)state;

	assert_int_equal(tc_record_reader_init(&r, buf, len, "t", NULL), 0);
	while (tc_record_reader_next(&r, &rec, "t", NULL) == 1) {
		switch (n++) {
		case 0:
			assert_int_equal(rec.type, TC_REC_META);
			assert_true(tc_rec_meta_next(&rec, &pos, &k, &v));
			assert_string_equal(k, "command");
			assert_string_equal(v, "./prog arg");
			assert_false(tc_rec_meta_next(&rec, &pos, &k, &v));
			break;
		case 1:
			assert_int_equal(rec.type, TC_REC_EVENT);
			assert_string_equal(rec.u.event.name, "page-faults");
			assert_int_equal(rec.u.event.period, 4);
			assert_int_equal(rec.u.event.flags, TC_EVF_ADDR);
			break;
		case 2:
			assert_int_equal(rec.u.period.period, 8);
			break;
		case 3:
			assert_int_equal(rec.type, TC_REC_MMAP);
			assert_string_equal(rec.u.mmap.filename, "/usr/bin/prog");
			assert_int_equal(rec.u.mmap.start, 0x400000);
			assert_int_equal(rec.u.mmap.build_id_size, 20);
			assert_memory_equal(rec.u.mmap.build_id, bid, 20);
			break;
		case 4:
			assert_string_equal(rec.u.comm.comm, "prog");
			assert_int_equal(rec.u.comm.exec, 1);
			break;
		case 5:
			assert_int_equal(rec.u.task.kind, TC_TASK_FORK);
			assert_int_equal(rec.u.task.ppid, 100);
			break;
		case 7:
			assert_int_equal(rec.type, TC_REC_SAMPLE);
			assert_int_equal(rec.u.sample.tid, 101);
			assert_int_equal(rec.u.sample.addr, 0x7f0000002000);
			assert_int_equal(rec.u.sample.nr, 3);
			assert_int_equal(rec.u.sample.chain[2], 0x401300);
			break;
		case 8:
			assert_int_equal(rec.u.lost.lost, 17);
			break;
		case 10:
			assert_int_equal(rec.type, TC_REC_IMAGE);
			assert_string_equal(rec.u.image.name, "[vdso]");
			assert_int_equal(rec.u.image.len, 13);
			assert_memory_equal(rec.u.image.data, "\x7f" "ELF", 4);
			break;
		case 13:
			assert_int_equal(rec.type, TC_REC_FINISH);
			assert_int_equal(rec.u.finish.samples, 3);
			break;
		}
	}
	assert_int_equal(n, 14);
	assert_true(r.finished);
	assert_false(r.truncated);
	assert_int_equal(r.good_end, len);
	free(buf);
	tc_record_reader_exit(&r);
}

/* Every prefix of the file reads cleanly: an error only inside the header, otherwise
 * the records before the cut, flagged as truncated. */
static void test_every_truncation(void **state)
{
	size_t len;
	unsigned char *buf = make_recording(&len, true);
	struct summary full, s;
	struct tacho_diag d = { .sz = sizeof(d) };
	int prev = 0;
	(void)state;

	assert_int_equal(read_all(buf, len, &full, NULL), 0);
	assert_int_equal(full.records, 14);
	assert_int_equal(full.samples, 3);
	assert_int_equal(full.lost, 17);
	assert_true(full.finished);
	assert_false(full.truncated);
	for (size_t cut = 0; cut < len; cut++) {
		unsigned char *p = malloc(cut ? cut : 1);
		int ret;

		memcpy(p, buf, cut);
		ret = read_all(p, cut, &s, &d);
		if (cut < TC_REC_FILE_HDR) {
			if (ret != -TACHO_ETRUNC && ret != -TACHO_ECORRUPT && ret != -TACHO_EEMPTY)
				fail_msg("cut at %zu: %d", cut, ret);
		} else {
			if (ret != 0)
				fail_msg("cut at %zu: error %d %s", cut, ret, d.message);
			if (!s.truncated || s.finished)
				fail_msg("cut at %zu: not flagged as truncated", cut);
			/* records only ever grow with the cut, one at a time, or by the two
			 * samples of the first sample block when it is whole */
			if (s.records < prev || s.records > prev + 2)
				fail_msg("cut at %zu: %d records after %d", cut, s.records, prev);
			prev = s.records;
		}
		free(p);
	}
	assert_int_equal(prev, 13);  /* all but FINISH */
	free(buf);
}

static void test_no_finish_is_truncated(void **state)
{
	size_t len;
	unsigned char *buf = make_recording(&len, false);
	struct summary s;
	(void)state;

	assert_int_equal(read_all(buf, len, &s, NULL), 0);
	assert_int_equal(s.records, 13);
	assert_true(s.truncated);
	assert_false(s.finished);
	free(buf);
}

/* A record type from a later writer is stepped over, counted, and what follows is read. */
static void test_unknown_type_skipped(void **state)
{
	struct tc_record_writer w;
	int fd = memfd_create("rec", 0);
	const uint64_t payload[2] = { 1, 2 };
	unsigned char *buf;
	struct tc_record_reader r;
	struct tc_rec rec;
	size_t len;
	int n = 0;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_meta(&w, "command", "x");
	tc_record_writer_add(&w, (enum tc_rec_type)200, payload, sizeof(payload));
	tc_record_writer_add(&w, (enum tc_rec_type)201, payload, 8);
	tc_record_writer_finish(&w, 0, 0, 1, 0);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	len = (size_t)w.written;
	buf = malloc(len);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
	tc_record_writer_close(&w);   /* closes fd */
	assert_int_equal(tc_record_reader_init(&r, buf, len, "t", NULL), 0);
	while (tc_record_reader_next(&r, &rec, "t", NULL) == 1)
		assert_int_equal(rec.type, n++ == 0 ? TC_REC_META : TC_REC_FINISH);
	assert_int_equal(n, 2);
	assert_int_equal(r.skipped, 2);
	assert_true(r.finished);
	assert_false(r.truncated);
	free(buf);
	tc_record_reader_exit(&r);
}

static void test_corrupt(void **state)
{
	size_t len;
	unsigned char *buf = make_recording(&len, true);
	struct summary s;
	struct tacho_diag d = { .sz = sizeof(d) };
	unsigned char *p = malloc(len);
	(void)state;

	/* every single flipped byte after the header is an error or a cut-short read,
	 * never a crash and never a silent success with altered data */
	for (size_t i = TC_REC_FILE_HDR; i < len; i++) {
		int ret;
		memcpy(p, buf, len);
		p[i] ^= 0x40;
		ret = read_all(p, len, &s, &d);
		if (ret == 0 && !s.truncated)
			fail_msg("flip at %zu read as a complete file", i);
		if (ret != 0 && ret != -TACHO_ECORRUPT)
			fail_msg("flip at %zu: error %d", i, ret);
	}
	/* a flipped payload byte is a checksum error naming the record's offset */
	memcpy(p, buf, len);
	p[TC_REC_FILE_HDR + TC_REC_HDR + 2] ^= 1;
	assert_int_equal(read_all(p, len, &s, &d), -TACHO_ECORRUPT);
	assert_string_equal(d.message, "corrupt record at byte 32: checksum mismatch");
	/* bad magic */
	memcpy(p, buf, len);
	p[0] = 'X';
	assert_int_equal(read_all(p, len, &s, &d), -TACHO_ECORRUPT);
	assert_contains(d.message, "not a tacho recording");
	/* a later version (with a matching header checksum) */
	{
		struct tc_record_reader r;
		uint32_t v = TC_REC_VERSION + 1, crc;
		memcpy(p, buf, len);
		memcpy(p + 8, &v, 4);
		crc = tc_crc32(0, p, 24);
		memcpy(p + 24, &crc, 4);
		assert_int_equal(tc_record_reader_init(&r, p, len, "t", &d), -TACHO_EVERSION);
		assert_contains(d.message, "format version 6, this tacho reads versions 1 to 5");
	}
	/* empty file */
	assert_int_equal(read_all(p, 0, &s, &d), -TACHO_EEMPTY);
	assert_string_equal(d.message, "the file is empty (the recording wrote nothing)");
	free(p);
	free(buf);
}

/* Two decoded records hold the same content (offsets and pointers aside). */
static void assert_same_rec(const struct tc_rec *a, const struct tc_rec *b)
{
	assert_int_equal(a->type, b->type);
	switch (a->type) {
	case TC_REC_META:
		assert_int_equal(a->u.meta.len, b->u.meta.len);
		assert_memory_equal(a->u.meta.data, b->u.meta.data, a->u.meta.len);
		break;
	case TC_REC_EVENT:
		assert_string_equal(a->u.event.name, b->u.event.name);
		assert_int_equal(a->u.event.index, b->u.event.index);
		assert_int_equal(a->u.event.type, b->u.event.type);
		assert_int_equal(a->u.event.flags, b->u.event.flags);
		assert_int_equal(a->u.event.config, b->u.event.config);
		assert_int_equal(a->u.event.sample_type, b->u.event.sample_type);
		assert_int_equal(a->u.event.period, b->u.event.period);
		break;
	case TC_REC_MMAP:
		assert_string_equal(a->u.mmap.filename, b->u.mmap.filename);
		assert_int_equal(a->u.mmap.start, b->u.mmap.start);
		assert_int_equal(a->u.mmap.len, b->u.mmap.len);
		assert_int_equal(a->u.mmap.build_id_size, b->u.mmap.build_id_size);
		assert_memory_equal(a->u.mmap.build_id, b->u.mmap.build_id, TC_BUILD_ID_MAX);
		break;
	case TC_REC_SAMPLE:
		assert_int_equal(a->u.sample.time, b->u.sample.time);
		assert_int_equal(a->u.sample.ip, b->u.sample.ip);
		assert_int_equal(a->u.sample.addr, b->u.sample.addr);
		assert_int_equal(a->u.sample.period, b->u.sample.period);
		assert_int_equal(a->u.sample.pid, b->u.sample.pid);
		assert_int_equal(a->u.sample.tid, b->u.sample.tid);
		assert_int_equal(a->u.sample.cpu, b->u.sample.cpu);
		assert_int_equal(a->u.sample.event, b->u.sample.event);
		assert_int_equal(a->u.sample.misc, b->u.sample.misc);
		assert_int_equal(a->u.sample.nr, b->u.sample.nr);
		if (a->u.sample.nr)
			assert_memory_equal(a->u.sample.chain, b->u.sample.chain,
					    a->u.sample.nr * 8);
		break;
	case TC_REC_CGROUP:
		assert_string_equal(a->u.cgroup.path, b->u.cgroup.path);
		assert_int_equal(a->u.cgroup.pid, b->u.cgroup.pid);
		assert_int_equal(a->u.cgroup.time, b->u.cgroup.time);
		break;
	case TC_REC_COMM:
		assert_string_equal(a->u.comm.comm, b->u.comm.comm);
		assert_int_equal(a->u.comm.pid, b->u.comm.pid);
		assert_int_equal(a->u.comm.tid, b->u.comm.tid);
		assert_int_equal(a->u.comm.exec, b->u.comm.exec);
		assert_int_equal(a->u.comm.time, b->u.comm.time);
		break;
	case TC_REC_IMAGE:
		assert_string_equal(a->u.image.name, b->u.image.name);
		assert_int_equal(a->u.image.len, b->u.image.len);
		assert_memory_equal(a->u.image.data, b->u.image.data, a->u.image.len);
		assert_memory_equal(a->u.image.build_id, b->u.image.build_id, TC_BUILD_ID_MAX);
		break;
	default:
		/* the fixed-size records: their decoded fields, byte for byte */
		assert_memory_equal(&a->u, &b->u, sizeof(a->u.task));
		break;
	}
}

/* A recording of format version 1 (written by tacho before version 2 packed samples
 * into blocks, kept in tests/data/recfile/v1.rec: make_recording's records) reads as
 * the same records as today's file of the same calls; the new file is smaller. */
static void test_reads_version_1(void **state)
{
	size_t len, v1len, n = 0;
	unsigned char *buf = make_recording(&len, true);
	char *v1data = NULL;
	unsigned char *v1;
	struct tc_record_reader a, b;
	struct tc_rec ra, rb;
	uint32_t version;
	(void)state;

	assert_int_equal(tc_read_file(th_path("tests/data/recfile/v1.rec"), &v1data, &v1len,
				      1 << 20), 0);
	v1 = (unsigned char *)v1data;
	memcpy(&version, v1 + 8, 4);
	assert_int_equal(version, 1);
	assert_int_equal(tc_record_reader_init(&a, buf, len, "new", NULL), 0);
	assert_int_equal(a.version, TC_REC_VERSION);
	assert_int_equal(tc_record_reader_init(&b, v1, v1len, "v1", NULL), 0);
	assert_int_equal(b.version, 1);
	for (;;) {
		int x = tc_record_reader_next(&a, &ra, "new", NULL);
		int y = tc_record_reader_next(&b, &rb, "v1", NULL);

		assert_int_equal(x, y);
		if (x != 1)
			break;
		assert_same_rec(&ra, &rb);
		n++;
	}
	assert_int_equal(n, 14);
	assert_true(a.finished && b.finished);
	assert_false(a.truncated || b.truncated);
	assert_true(len < v1len);
	free(v1);
	free(buf);
	tc_record_reader_exit(&a);
	tc_record_reader_exit(&b);
}

/* Marks packed into MARKS blocks (version 3): 20,000 of every shape (times and TSCs
 * that go back, values that jump, threads, channels and kinds that change), mixed with
 * samples so that blocks of both kinds alternate, read back exactly and in order; a
 * steady burst takes 5 bytes a mark (version 2: 56); a flag no writer sets is corrupt. */
static void test_mark_blocks(void **state)
{
	enum { N = 20000 };
	struct tc_record_writer w;
	struct tc_record_reader r;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_rec rec;
	unsigned char *buf;
	size_t len, n = 0, samples = 0;
	uint64_t x = 0x243f6a8885a308d3ull;
	uint32_t size, crc;
	int fd;
	(void)state;

	fd = memfd_create("rec", 0);
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	for (size_t i = 0; i < N; i++) {
		uint64_t h = x = x * 6364136223846793005ull + 1442695040888963407ull;

		tc_record_writer_mark(&w, i % 7 == 0 ? UINT64_MAX - i : h >> (i % 64), h ^ i,
				      i % 3 ? i : h, (uint32_t)(i % 4), (uint32_t)(i % 9),
				      i % 5 ? 2 : (uint32_t)h, (uint32_t)(i % 4) + 1);
		if (i % 300 == 299)
			tc_record_writer_sample(&w, i, i, 0, 1, 1, 1, 0, 0, 0, 0, NULL);
		if (i % 2000 == 1999)
			assert_int_equal(tc_record_writer_flush(&w), 0);
	}
	assert_int_equal(tc_record_writer_flush(&w), 0);
	len = (size_t)w.written;
	buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(buf != MAP_FAILED);
	assert_int_equal(tc_record_reader_init(&r, buf, len, "t", NULL), 0);
	x = 0x243f6a8885a308d3ull;
	while (tc_record_reader_next(&r, &rec, "t", NULL) == 1) {
		if (rec.type == TC_REC_SAMPLE) {
			assert_int_equal(rec.u.sample.time, n - 1);
			samples++;
			continue;
		}
		uint64_t h = x = x * 6364136223846793005ull + 1442695040888963407ull;
		size_t i = n++;

		assert_int_equal(rec.type, TC_REC_MARK);
		assert_int_equal(rec.u.mark.time, i % 7 == 0 ? UINT64_MAX - i : h >> (i % 64));
		assert_int_equal(rec.u.mark.tsc, h ^ i);
		assert_int_equal(rec.u.mark.value, i % 3 ? i : h);
		assert_int_equal(rec.u.mark.pid, i % 4);
		assert_int_equal(rec.u.mark.tid, i % 9);
		assert_int_equal(rec.u.mark.channel, i % 5 ? 2 : (uint32_t)h);
		assert_int_equal(rec.u.mark.kind, i % 4 + 1);
	}
	assert_int_equal(n, N);
	assert_int_equal(samples, N / 300);
	munmap(buf, len);
	tc_record_writer_close(&w);

	/* a burst: 30 ns apart (zigzag 60: 1 byte), 75 TSC ticks (zigzag 150: 2 bytes),
	 * values counting up (1 byte), the same thread, channel and kind */
	fd = memfd_create("rec", 0);
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	for (size_t i = 0; i < 1000; i++)
		tc_record_writer_mark(&w, 1000000 + i * 30, 5000000 + i * 75, i, 7, 7, 3, 1);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	/* the first says everything: 1 (flags) + 3 (time: zigzag 2000000) + 4 (TSC: zigzag
	 * 10000000) + 1 (value) + 1 + 1 (task) + 1 (channel) + 1 (kind) = 13; 999 of 5 */
	assert_int_equal(w.written, TC_REC_FILE_HDR + TC_REC_HDR + 8 + ((13 + 999 * 5 + 7) & ~7u));
	len = (size_t)w.written;
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	assert_true(buf != MAP_FAILED);
	/* the first mark's flags with a bit no writer sets, the block's CRC made good */
	buf[TC_REC_FILE_HDR + TC_REC_HDR + 8] |= 0x80;
	memcpy(&size, buf + TC_REC_FILE_HDR + 4, 4);
	crc = tc_crc32(0, buf + TC_REC_FILE_HDR + 4, size - 4);
	memcpy(buf + TC_REC_FILE_HDR, &crc, 4);
	assert_int_equal(tc_record_reader_init(&r, buf, len, "t", NULL), 0);
	assert_int_equal(tc_record_reader_next(&r, &rec, "t", &d), -TACHO_ECORRUPT);
	assert_contains(d.message, "unknown mark flags");
	munmap(buf, len);
	tc_record_writer_close(&w);
	tc_record_reader_exit(&r);
}

/* The sample block: every field through its extremes and back (deltas that wrap, an
 * unknown CPU, every event and misc bit, chains of 1 to 200 entries after fields of
 * every length, so that the chain's alignment padding takes every size), enough
 * samples to fill several blocks; then the size of a steady stream, exact: a sample of
 * the same thread whose time moves by 250 us and IP by a few bytes takes 5 bytes. */
/* Opens a writer on fd that writes format version format: 3 (version 4's header, every
 * chain in full), 4 or 5 (the writer's switches, read when it opens) */
static void open_fd_as(struct tc_record_writer *w, int fd, unsigned format)
{
	if (format == 3)
		setenv("TACHO_REC_INLINE_CHAINS", "1", 1);
	if (format == 4)
		setenv("TACHO_REC_FORMAT", "4", 1);
	assert_int_equal(tc_record_writer_open_fd(w, fd), 0);
	unsetenv("TACHO_REC_INLINE_CHAINS");
	unsetenv("TACHO_REC_FORMAT");
	assert_int_equal(w->format, format < 5 ? 4 : 5);
}

static void test_sample_blocks(void **state)
{
	enum { N = 30000 };
	static uint64_t chain[200];
	struct tc_record_writer w;
	struct tc_record_reader r;
	struct tc_rec rec;
	unsigned char *buf;
	size_t len, n, blocks, inline_len = 0;
	uint64_t x, last_offset;
	int fd;
	(void)state;

	for (size_t i = 0; i < 200; i++)
		chain[i] = 0xffffffff81000000ull + i * 0x10001ull;
	/* chains in full (as version 3 wrote them), then as references to the first of
	 * each length (version 4), then as paths in a tree (version 5): all read back the
	 * same */
	for (int refs = 0; refs < 3; refs++) {
	n = blocks = 0;
	x = 0x9e3779b97f4a7c15ull;
	last_offset = 0;
	fd = memfd_create("rec", 0);
	assert_true(fd >= 0);
	open_fd_as(&w, fd, 3 + (unsigned)refs);
	for (size_t i = 0; i < N; i++) {
		uint64_t h = x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t time = i % 7 == 0 ? UINT64_MAX - i : h >> (i % 64);
		uint32_t nr = i % 5 == 0 ? (uint32_t)(h % 200) + 1 : 0;

		tc_record_writer_sample(&w, time, h ^ (i << 40), i % 3 ? h >> 3 : 0,
					i % 11 ? 4000 : h, (uint32_t)(i % 4), (uint32_t)(i % 9),
					i % 13 ? (uint32_t)(i % 2) : TC_CPU_UNKNOWN,
					(uint16_t)(i % 17 ? 0 : h), (uint16_t)(h >> 48), nr, chain);
		if (i % 2000 == 1999)
			assert_int_equal(tc_record_writer_flush(&w), 0);
	}
	assert_int_equal(tc_record_writer_flush(&w), 0);
	len = (size_t)w.written;
	buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(buf != MAP_FAILED);
	assert_int_equal(tc_record_reader_init(&r, buf, len, "t", NULL), 0);
	x = 0x9e3779b97f4a7c15ull;
	while (tc_record_reader_next(&r, &rec, "t", NULL) == 1) {
		uint64_t h = x = x * 6364136223846793005ull + 1442695040888963407ull;
		size_t i = n++;

		assert_int_equal(rec.type, TC_REC_SAMPLE);
		assert_int_equal(rec.u.sample.time, i % 7 == 0 ? UINT64_MAX - i : h >> (i % 64));
		assert_int_equal(rec.u.sample.ip, h ^ (i << 40));
		assert_int_equal(rec.u.sample.addr, i % 3 ? h >> 3 : 0);
		assert_int_equal(rec.u.sample.period, i % 11 ? 4000 : h);
		assert_int_equal(rec.u.sample.pid, i % 4);
		assert_int_equal(rec.u.sample.tid, i % 9);
		assert_int_equal(rec.u.sample.cpu, i % 13 ? (uint32_t)(i % 2) : TC_CPU_UNKNOWN);
		assert_int_equal(rec.u.sample.event, (uint16_t)(i % 17 ? 0 : h));
		assert_int_equal(rec.u.sample.misc, (uint16_t)(h >> 48));
		assert_int_equal(rec.u.sample.nr, i % 5 == 0 ? h % 200 + 1 : 0);
		if (rec.u.sample.nr) {
			assert_int_equal((uintptr_t)rec.u.sample.chain % 8, 0);
			assert_memory_equal(rec.u.sample.chain, chain, rec.u.sample.nr * 8);
		}
		assert_true(rec.offset > last_offset);
		last_offset = rec.offset;
		blocks += rec.offset - TC_REC_HDR - 8 == r.block_offset;
	}
	assert_int_equal(n, N);
	/* a block at each flush, more where they filled (the chains in full fill them) */
	assert_true(refs ? blocks >= N / 2000 : blocks > N / 2000);
	assert_false(r.finished);
	tc_record_reader_exit(&r);
	munmap(buf, len);
	tc_record_writer_close(&w);
	if (!refs)
		inline_len = len;
	else   /* 6000 chains of 100 entries on average, of which 200 written in full
		* (version 4), or 200 frames in the tree (version 5) */
		assert_true(len < inline_len / 4);
	}

	/* a steady stream: flags, time delta 250000 (zigzag 500000: 3 bytes), IP delta
	 * of +-16 (1 byte); the block's header and count once */
	fd = memfd_create("rec", 0);
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	for (size_t i = 0; i < 1000; i++)
		tc_record_writer_sample(&w, 1000000 + i * 250000, 0x401000 + (i & 1) * 16, 0,
					4000, 7, 7, 1, 0, 2, 0, NULL);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	/* the first sample says everything: 1 (flags) + 3 (time: zigzag 2000000) + 4 (ip:
	 * zigzag 0x802000) + 1 + 1 (task) + 1 (cpu) + 2 (period) + 1 (misc) = 14; 999 more
	 * of 5 */
	assert_int_equal(w.written, TC_REC_FILE_HDR + TC_REC_HDR + 8 + ((14 + 999 * 5 + 7) & ~7u));
	tc_record_writer_close(&w);
}

/* The format version read_block's file says (0: today's) */
static uint32_t block_version;

/* A file of one SAMPLES block made by hand with a good checksum: count, then payload
 * (padded with zeros to 8). Returns what reading it all gives; *n the samples read. */
static int read_block(uint32_t count, const unsigned char *payload, size_t len,
		      struct tacho_diag *d, int *n)
{
	struct tc_record_writer w;
	struct tc_record_reader r;
	struct tc_rec rec;
	unsigned char buf[256] = { 0 };
	size_t size = TC_REC_HDR + 8 + ((len + 7) & ~(size_t)7);
	uint32_t v;
	int fd = memfd_create("rec", 0), ret;

	assert_true(fd >= 0 && size <= sizeof(buf) - TC_REC_FILE_HDR);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);   /* the file header */
	assert_int_equal(pread(fd, buf, TC_REC_FILE_HDR, 0), TC_REC_FILE_HDR);
	tc_record_writer_close(&w);
	/* version 4 unless a case says otherwise */
	v = block_version ? block_version : 4;
	memcpy(buf + 8, &v, 4);
	v = tc_crc32(0, buf, 24);
	memcpy(buf + 24, &v, 4);
	unsigned char *rp = buf + TC_REC_FILE_HDR;
	v = (uint32_t)size;
	memcpy(rp + 4, &v, 4);
	v = TC_REC_SAMPLES;
	memcpy(rp + 8, &v, 4);
	memcpy(rp + TC_REC_HDR, &count, 4);
	memcpy(rp + TC_REC_HDR + 8, payload, len);
	v = tc_crc32(0, rp + 4, size - 4);
	memcpy(rp, &v, 4);
	*n = 0;
	ret = tc_record_reader_init(&r, buf, TC_REC_FILE_HDR + size, "t", d);
	if (ret)
		return ret;
	while ((ret = tc_record_reader_next(&r, &rec, "t", d)) == 1)
		(*n)++;
	tc_record_reader_exit(&r);
	return ret;
}

/* Blocks whose checksum is right but whose contents are not (what only a crafted file
 * has): each is corrupt, with what is wrong and where, after the samples before it. */
static void test_crafted_blocks(void **state)
{
	/* a sample: flags 0x01 (task), time 2 (zigzag 4), ip 0x10 (zigzag 0x20), pid 7,
	 * tid 7; the block's first sample starts at byte 56 (32 + 16 + 8) */
	static const struct {
		int line;
		uint32_t count;
		unsigned char p[40];
		size_t len;
		int samples;       /* read before the error */
		const char *msg;   /* NULL: reads cleanly */
	} cases[] = {
		{ __LINE__, 1, { 0x01, 4, 0x20, 7, 7 }, 5, 1, NULL },
		{ __LINE__, 2, { 0x01, 4, 0x20, 7, 7, 0x00, 2, 2 }, 8, 2, NULL },
		{ __LINE__, 0, { 0 }, 0, 0, "at byte 32: bad sample block header" },
		/* a chain both in full and as a reference */
		{ __LINE__, 1, { 0xc0, 4, 0x20 }, 3, 0, "at byte 56: unknown sample flags" },
		/* chain references (version 4): the sample starts at byte 56; a reference
		 * to 3 words back (byte 32, the block's own header: any bytes before the
		 * sample may be pointed to, as a crafted chain may hold anything); 8 words
		 * back is before the records; 0 words back is the sample itself; 2 entries
		 * from byte 48 run into it; a reference without its distance */
		{ __LINE__, 1, { 0x80, 0, 0, 1, 3 }, 5, 1, NULL },
		{ __LINE__, 1, { 0x80, 0, 0, 3, 3 }, 5, 1, NULL },
		{ __LINE__, 1, { 0x80, 0, 0, 1, 4 }, 5, 0,
		  "at byte 56: call chain reference outside the bytes before it" },
		{ __LINE__, 1, { 0x80, 0, 0, 1, 0 }, 5, 0,
		  "at byte 56: call chain reference outside the bytes before it" },
		{ __LINE__, 1, { 0x80, 0, 0, 2, 1 }, 5, 0,
		  "at byte 56: call chain reference outside the bytes before it" },
		{ __LINE__, 1, { 0x80, 0, 0, 0, 1 }, 5, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
		{ __LINE__, 1, { 0x80, 0, 0, 1, 0x80, 0x80, 0x80, 0x80 }, 8, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
		/* a time of 11 bytes, and one whose tenth byte holds more than one bit */
		{ __LINE__, 1, { 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
				 0x80, 0x01, 0x00 }, 13, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
		{ __LINE__, 1, { 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				 0x02, 0x00 }, 12, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
		/* a pid of 2^32 */
		{ __LINE__, 1, { 0x01, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x10, 1 }, 9, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
		/* an event of 2^16 */
		{ __LINE__, 1, { 0x04, 0, 0, 0x80, 0x80, 0x04 }, 6, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
		/* the block says three samples and holds one and the padding (three zero
		 * bytes are a sample: no flags, both deltas 0) */
		{ __LINE__, 3, { 0x01, 4, 0x20, 7, 7 }, 5, 2,
		  "at byte 64: sample block ends before its last sample" },
		/* a chain of 2 with room for 1; a chain of 0; padding that is not zero */
		{ __LINE__, 1, { 0x40, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 16, 0,
		  "at byte 56: call chain longer than its block" },
		{ __LINE__, 1, { 0x40, 0, 0, 0 }, 4, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
		{ __LINE__, 1, { 0x40, 0, 0, 1, 0, 9, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 16, 0,
		  "at byte 56: bad padding before a call chain" },
		/* 8 bytes after the last sample: the block is wrong, its last sample is
		 * not given */
		{ __LINE__, 1, { 0x01, 4, 0x20, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0 }, 13, 0,
		  "at byte 61: bytes after a sample block's last sample" },
		/* a field that runs past the block's end */
		{ __LINE__, 1, { 0x01, 4, 0x20, 0x80, 0x80, 0x80, 0x80, 0x80 }, 8, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		int n, ret = read_block(cases[i].count, cases[i].p, cases[i].len, &d, &n);

		if (n != cases[i].samples)
			fail_msg("line %d: %d samples read", cases[i].line, n);
		if (!cases[i].msg) {
			if (ret != 0)
				fail_msg("line %d: error %d %s", cases[i].line, ret, d.message);
			continue;
		}
		if (ret != -TACHO_ECORRUPT || !strstr(d.message, cases[i].msg))
			fail_msg("line %d: %d '%s'", cases[i].line, ret, d.message);
	}
}

/* Samples whose chains repeat (format version 4): a chain the file holds already is a
 * reference back to it, exactly 5 bytes here, and reads as a pointer to the first copy;
 * a file of version 3 with the reference flag is corrupt. */
static void test_chain_ref_bytes(void **state)
{
	static const uint64_t chain[3] = { 0xfffffffffffffe00ull, 0x401010, 0x401200 };
	static const unsigned char ref[5] = { 0x80, 0, 0, 3, 3 };
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_record_writer w;
	struct tc_record_reader r;
	struct tc_rec rec;
	unsigned char buf[96];
	int fd = memfd_create("rec", 0), n;
	(void)state;

	assert_true(fd >= 0);
	open_fd_as(&w, fd, 4);
	for (int i = 0; i < 2; i++)
		tc_record_writer_sample(&w, 0, 0, 0, 0, 0, 0, TC_CPU_UNKNOWN, 0, 0, 3, chain);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	/* the block's first sample at byte 56: flags 0x40, time, ip, nr 3, 4 zeros, the
	 * chain at 64..87; the second at 88: flags 0x80, time, ip, nr 3, and 3 words back
	 * from 88 is 64; 3 zeros to the block's end */
	assert_int_equal(w.written, 96);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), sizeof(buf));
	assert_memory_equal(buf + 88, ref, sizeof(ref));
	assert_memory_equal(buf + 64, chain, sizeof(chain));
	tc_record_writer_close(&w);
	assert_int_equal(tc_record_reader_init(&r, buf, sizeof(buf), "t", NULL), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tc_record_reader_next(&r, &rec, "t", NULL), 1);
		assert_int_equal(rec.type, TC_REC_SAMPLE);
		assert_int_equal(rec.u.sample.nr, 3);
		assert_ptr_equal(rec.u.sample.chain, buf + 64);
	}
	assert_int_equal(tc_record_reader_next(&r, &rec, "t", NULL), 0);

	/* version 3 knew no reference */
	block_version = 3;
	assert_int_equal(read_block(1, ref, sizeof(ref), &d, &n), -TACHO_ECORRUPT);
	block_version = 0;
	assert_int_equal(n, 0);
	assert_contains(d.message, "at byte 56: unknown sample flags");
}

/* Samples whose chains share their part from the root (format version 5), each IP its
 * chain's first frame (written as 0 against it): the first chain is three new nodes,
 * exactly 15 bytes; the same chain again is its node, 5 bytes;
 * a chain one frame longer under it is that node and one frame, 6 bytes. Each reads as
 * its chain, built in the reader's memory once for each node. */
static void test_chain_tree_bytes(void **state)
{
	static const uint64_t chain[4] = { 0xffffffff81000010ull, 0xfffffffffffffe00ull,
					   0x401010, 0x401200 };
	/* from the root: 0x401200 (zigzag 0x802400, 4 bytes), 0x401010 (-0x1f0: zigzag
	 * 0x3df, 2 bytes), PERF_CONTEXT_USER (-0x401210: zigzag 0x80241f, 4 bytes) */
	static const unsigned char first[15] = { 0x40, 0, 0, 0, 3, 0x80, 0xc8, 0x80, 0x04,
						 0xdf, 0x07, 0x9f, 0xc8, 0x80, 0x04 };
	static const unsigned char again[5] = { 0x40, 0, 0, 0, 0 };
	struct tc_record_writer w;
	struct tc_record_reader r;
	struct tc_rec rec;
	unsigned char buf[128];
	const uint64_t *seen;
	int fd = memfd_create("rec", 0);
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	assert_int_equal(w.format, 5);
	/* the IP is the chain's first frame (after PERF_CONTEXT_USER): 0 bytes more */
	tc_record_writer_sample(&w, 0, 0x401010, 0, 0, 0, 0, TC_CPU_UNKNOWN, 0, 0, 3, chain + 1);
	tc_record_writer_sample(&w, 0, 0x401010, 0, 0, 0, 0, TC_CPU_UNKNOWN, 0, 0, 3, chain + 1);
	tc_record_writer_sample(&w, 0, chain[0], 0, 0, 0, 0, TC_CPU_UNKNOWN, 0, 0, 4, chain);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	/* 56 + 15 + 5 + 6 = 82, padded to 88 */
	assert_int_equal(w.written, 88);
	assert_int_equal(pread(fd, buf, 88, 0), 88);
	assert_memory_equal(buf + 56, first, sizeof(first));
	assert_memory_equal(buf + 71, again, sizeof(again));
	/* node 3 (zigzag 0), one new frame: 0xffffffff81000010 - PERF_CONTEXT_USER */
	assert_int_equal(buf[76], 0x40);
	assert_int_equal(buf[79], 0);
	assert_int_equal(buf[80], 1);
	tc_record_writer_close(&w);
	assert_int_equal(tc_record_reader_init(&r, buf, 88, "t", NULL), 0);
	for (int i = 0; i < 3; i++) {
		uint32_t nr = i < 2 ? 3 : 4;

		assert_int_equal(tc_record_reader_next(&r, &rec, "t", NULL), 1);
		assert_int_equal(rec.type, TC_REC_SAMPLE);
		assert_int_equal(rec.u.sample.nr, nr);
		assert_int_equal(rec.u.sample.ip, i < 2 ? 0x401010 : chain[0]);
		assert_memory_equal(rec.u.sample.chain, chain + 4 - nr, nr * 8);
		if (i == 0)
			seen = rec.u.sample.chain;
		if (i == 1)   /* one node, one chain */
			assert_ptr_equal(rec.u.sample.chain, seen);
	}
	assert_int_equal(tc_record_reader_next(&r, &rec, "t", NULL), 0);
	/* the memory outlives the reader once taken */
	{
		struct tc_rec_mem *m = tc_record_reader_take_mem(&r);

		assert_non_null(m);
		tc_record_reader_exit(&r);
		assert_memory_equal(seen, chain + 1, 24);
		tc_rec_mem_free(m);
	}
}

/* Crafted trees (version 5): a base node the tree does not hold (ahead of it, or a
 * tree just reset), no chain at all, more new nodes than bytes: each corrupt, with
 * what and where. A parent is always an earlier node, so no path can loop. */
static void test_crafted_tree(void **state)
{
	static const struct {
		int line;
		uint32_t count;
		unsigned char p[16];
		size_t len;
		int samples;
		const char *msg;
	} cases[] = {
		{ __LINE__, 1, { 0x40, 0, 0, 0, 1, 2 }, 6, 1, NULL },
		{ __LINE__, 2, { 0x40, 0, 0, 0, 1, 2, 0x40, 0, 0, 0, 0 }, 11, 2, NULL },
		/* both flags: the tree is reset, then the chain starts it again */
		{ __LINE__, 2, { 0x40, 0, 0, 0, 1, 2, 0xc0, 0, 0, 1, 1, 2 }, 12, 2, NULL },
		{ __LINE__, 1, { 0x40, 0, 0, 2, 0 }, 5, 0,
		  "at byte 56: call chain under a node the tree does not hold" },
		{ __LINE__, 1, { 0x40, 0, 0, 1, 1, 2 }, 6, 0,
		  "at byte 56: call chain under a node the tree does not hold" },
		{ __LINE__, 2, { 0x40, 0, 0, 0, 1, 2, 0xc0, 0, 0, 0, 0 }, 11, 1,
		  "at byte 62: call chain under a node the tree does not hold" },
		{ __LINE__, 1, { 0x40, 0, 0, 0, 0 }, 5, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
		{ __LINE__, 1, { 0x40, 0, 0, 0, 5, 2 }, 6, 0,
		  "at byte 56: a sample's field runs past its block or out of range" },
	};
	(void)state;

	block_version = 5;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		int n, ret = read_block(cases[i].count, cases[i].p, cases[i].len, &d, &n);

		if (n != cases[i].samples)
			fail_msg("line %d: %d samples read", cases[i].line, n);
		if (!cases[i].msg) {
			if (ret != 0)
				fail_msg("line %d: error %d %s", cases[i].line, ret, d.message);
			continue;
		}
		if (ret != -TACHO_ECORRUPT || !strstr(d.message, cases[i].msg))
			fail_msg("line %d: %d '%s'", cases[i].line, ret, d.message);
	}
	block_version = 0;
}

/* Reads the file of len bytes at buf to its end: the return of the last read, *d its
 * words, *n the records read */
static int read_through(const void *buf, size_t len, struct tacho_diag *d, int *n)
{
	struct tc_record_reader r;
	struct tc_rec rec;
	int ret;

	*n = 0;
	ret = tc_record_reader_init(&r, buf, len, "t", d);
	while (!ret && (ret = tc_record_reader_next(&r, &rec, "t", d)) == 1)
		(*n)++;
	tc_record_reader_exit(&r);
	return ret;
}

/* A ZSTACK record of the given fields and compressed bytes, alone in a version 5 file
 * in memory (*len bytes, freed by the caller) */
static unsigned char *zstack_file(uint32_t nregs, uint64_t mask, uint32_t stack_len,
				  uint32_t first, const void *z, size_t zlen, size_t *len)
{
	struct p_zs { uint64_t abi, mask; uint32_t nregs, stack_len, zlen, first; } f =
		{ 2, mask, nregs, stack_len, (uint32_t)zlen, first };
	unsigned char *payload = malloc(sizeof(f) + zlen), *buf;
	struct tc_record_writer w;
	int fd = memfd_create("rec", 0);

	assert_true(fd >= 0 && payload);
	memcpy(payload, &f, sizeof(f));
	memcpy(payload + sizeof(f), z, zlen);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_add(&w, TC_REC_ZSTACK, payload, sizeof(f) + zlen);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	*len = (size_t)w.written;
	buf = malloc(*len);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, *len, 0), (ssize_t)*len);
	tc_record_writer_close(&w);
	free(payload);
	return buf;
}

/* User stacks of version 5 (ZSTACK): two stacks in one zstd stream read back as the
 * USTACK records written, the second referring to the first; a record that lies about
 * its size either way, a zstd bomb (16 MiB of zeros said to be 64 bytes: the reader
 * stops at 65), bytes zstd cannot read, and a piece without the start of its stream
 * are each corrupt in one line. */
static void test_zstack(void **state)
{
	static const uint64_t regs[2] = { 0x7ffc0000, 0x401000 };
	unsigned char stack[300], *buf, *bomb;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tc_zbuf z = { 0 };
	struct tc_record_writer w;
	struct tc_record_reader r;
	struct tc_rec rec;
	size_t len;
	void *cs;
	int fd = memfd_create("rec", 0), n;
	(void)state;

	if (!tc_zs_available(NULL))
		skip();
	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (unsigned char)(i * 7);
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_ustack(&w, 2, 0x3, 2, regs, stack, sizeof(stack));
	stack[5] ^= 0xff;
	tc_record_writer_ustack(&w, 2, 0x3, 2, regs, stack, sizeof(stack));
	assert_int_equal(tc_record_writer_flush(&w), 0);
	len = (size_t)w.written;
	buf = malloc(len);
	assert_int_equal(pread(fd, buf, len, 0), (ssize_t)len);
	tc_record_writer_close(&w);
	/* the second stack is a few bytes: it refers back to the first */
	assert_true(len < TC_REC_FILE_HDR + sizeof(stack) + 2 * 64);
	assert_int_equal(tc_record_reader_init(&r, buf, len, "t", NULL), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tc_record_reader_next(&r, &rec, "t", NULL), 1);
		assert_int_equal(rec.type, TC_REC_USTACK);
		assert_int_equal(rec.u.ustack.nregs, 2);
		assert_int_equal(rec.u.ustack.stack_len, sizeof(stack));
		assert_memory_equal(rec.u.ustack.regs, regs, sizeof(regs));
		assert_int_equal(rec.u.ustack.stack[5], (unsigned char)(5 * 7) ^ (i ? 0xff : 0));
	}
	assert_int_equal(tc_record_reader_next(&r, &rec, "t", NULL), 0);
	tc_record_reader_exit(&r);
	free(buf);

	/* one stack of 300 bytes, compressed alone, said to be 299 and 301 */
	cs = tc_zs_cstream_new(3);
	assert_non_null(cs);
	assert_int_equal(tc_zs_compress(cs, stack, sizeof(stack), true, &z), 0);
	tc_zs_cstream_free(cs);
	for (int k = -1; k <= 1; k += 2) {
		buf = zstack_file(0, 0, (uint32_t)(sizeof(stack) + k), 1, z.buf, z.len, &len);
		assert_int_equal(read_through(buf, len, &d, &n), -TACHO_ECORRUPT);
		assert_contains(d.message, k < 0 ? "unpacks to more bytes than it says" :
					   "unpacks to fewer bytes than it says");
		free(buf);
	}
	/* the same bytes as the middle of a stream that never began */
	buf = zstack_file(0, 0, sizeof(stack), 0, z.buf, z.len, &len);
	assert_int_equal(read_through(buf, len, &d, &n), -TACHO_ECORRUPT);
	assert_contains(d.message, "corrupt record at byte 32: a compressed user stack "
			"without the start of its stream");
	free(buf);
	/* not zstd at all */
	buf = zstack_file(0, 0, sizeof(stack), 1, stack, 40, &len);
	assert_int_equal(read_through(buf, len, &d, &n), -TACHO_ECORRUPT);
	assert_contains(d.message, "a compressed user stack that zstd cannot read");
	free(buf);
	/* a bomb */
	bomb = calloc(16, 1 << 20);
	assert_non_null(bomb);
	z.len = 0;
	cs = tc_zs_cstream_new(3);
	assert_int_equal(tc_zs_compress(cs, bomb, 16 << 20, true, &z), 0);
	tc_zs_cstream_free(cs);
	free(bomb);
	assert_true(z.len < 4096);
	buf = zstack_file(0, 0, 64, 1, z.buf, z.len, &len);
	assert_int_equal(read_through(buf, len, &d, &n), -TACHO_ECORRUPT);
	assert_contains(d.message, "unpacks to more bytes than it says");
	free(buf);
	/* sizes out of range: a mask of 3 registers said to be 2; a stack past the
	 * kernel's most */
	buf = zstack_file(2, 0x7, 8, 1, z.buf, z.len, &len);
	assert_int_equal(read_through(buf, len, &d, &n), -TACHO_ECORRUPT);
	assert_contains(d.message, "bad compressed user stack sizes");
	free(buf);
	buf = zstack_file(0, 0, TC_USTACK_MAX + 8, 1, z.buf, z.len, &len);
	assert_int_equal(read_through(buf, len, &d, &n), -TACHO_ECORRUPT);
	assert_contains(d.message, "bad compressed user stack sizes");
	free(buf);
	free(z.buf);
}

/* What a sink receives: the flushes, each whole records after the file header */
struct chunks {
	unsigned char *buf[64];
	size_t len[64], n;
};

static int keep_chunk(void *arg, const void *data, size_t len)
{
	struct chunks *c = arg;

	assert_true(c->n < 64);
	c->buf[c->n] = malloc(len + TC_REC_FILE_HDR);
	assert_non_null(c->buf[c->n]);
	if (c->n)   /* each later one after a copy of the header, as the sampler reads */
		memcpy(c->buf[c->n], c->buf[0], TC_REC_FILE_HDR);
	memcpy(c->buf[c->n] + (c->n ? TC_REC_FILE_HDR : 0), data, len);
	c->len[c->n] = len + (c->n ? TC_REC_FILE_HDR : 0);
	c->n++;
	return 0;
}

/* Chains from a pool (the same lengths with other entries, prefixes of each other) in
 * samples of several blocks and flushes, read back exactly: from a file (references
 * reach back across blocks and flushes) and from a sink, whose reader (the sampler's)
 * sees one flush at a time (no reference reaches back past the flush). */
static void test_chain_refs(void **state)
{
	enum { N = 20000, POOL = 300 };
	static uint64_t pool[POOL][40];
	static uint32_t pool_nr[POOL];
	struct tc_record_writer w;
	struct tc_record_reader r, sr = { 0 };
	struct tacho_diag d = { .sz = sizeof(d) };
	struct chunks ch = { .n = 0 };
	struct tc_rec rec;
	unsigned char *buf;
	uint64_t x = 1;
	size_t len, n = 0;
	int fd = memfd_create("rec", 0);
	(void)state;

	for (size_t i = 0; i < POOL; i++) {
		pool_nr[i] = (uint32_t)(i % 40) + 1;
		for (size_t k = 0; k < 40; k++)
			pool[i][k] = k == 0 ? 0x401000 + i / 40 : 0x402000 + k * 16 + (i % 3);
	}
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	{
		struct tc_record_writer s;

		assert_int_equal(tc_record_writer_open_sink(&s, keep_chunk, &ch), 0);
		for (size_t i = 0; i < N; i++) {
			size_t k;

			x = x * 6364136223846793005ull + 1442695040888963407ull;
			k = (size_t)(x >> 33) % POOL;
			/* an empty chain now and then */
			tc_record_writer_sample(&w, i, x, 0, 1, 7, 7, 0, 0, 2,
						i % 97 ? pool_nr[k] : 0, pool[k]);
			tc_record_writer_sample(&s, i, x, 0, 1, 7, 7, 0, 0, 2,
						i % 97 ? pool_nr[k] : 0, pool[k]);
			if (i % 777 == 0)   /* another record ends the block */
				tc_record_writer_lost(&w, 1, i, 0);
			if (i % 2000 == 1999) {
				assert_int_equal(tc_record_writer_flush(&w), 0);
				assert_int_equal(tc_record_writer_flush(&s), 0);
			}
		}
		assert_int_equal(tc_record_writer_close(&s), 0);
	}
	assert_int_equal(tc_record_writer_flush(&w), 0);
	len = (size_t)w.written;
	buf = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(buf != MAP_FAILED);
	/* each chain in full once: at most POOL * 40 * 8 bytes of chains, and some 16
	 * bytes a sample (its IP a random 64-bit number: 10 bytes; in full, the chains
	 * would take 3.3 MB) */
	assert_true(len < POOL * 40 * 8 + N * 18);
	assert_int_equal(tc_record_reader_init(&r, buf, len, "t", &d), 0);
	x = 1;
	for (size_t c = 0, left = 0;; ) {
		struct tc_rec srec;
		size_t k;
		int ret = tc_record_reader_next(&r, &rec, "t", &d);

		if (ret == 0)
			break;
		if (ret != 1)
			fail_msg("%s", d.message);
		if (rec.type != TC_REC_SAMPLE)
			continue;
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		k = (size_t)(x >> 33) % POOL;
		assert_int_equal(rec.u.sample.ip, x);
		assert_int_equal(rec.u.sample.nr, n % 97 ? pool_nr[k] : 0);
		if (rec.u.sample.nr) {
			assert_int_equal((uintptr_t)rec.u.sample.chain % 8, 0);
			assert_memory_equal(rec.u.sample.chain, pool[k], rec.u.sample.nr * 8);
		}
		/* the same sample from the sink's flush, read alone */
		if (!left) {
			c++;   /* chunk 0 is the file header */
			assert_true(c < ch.n);
			tc_record_reader_exit(&sr);   /* the flush before, read */
			assert_int_equal(tc_record_reader_init(&sr, ch.buf[c], ch.len[c], "s",
							       &d), 0);
			left = 2000;
		}
		if (tc_record_reader_next(&sr, &srec, "s", &d) != 1)
			fail_msg("sample %zu: %s", n, d.message);
		assert_int_equal(srec.u.sample.ip, x);
		assert_int_equal(srec.u.sample.nr, rec.u.sample.nr);
		if (srec.u.sample.nr)
			assert_memory_equal(srec.u.sample.chain, pool[k], srec.u.sample.nr * 8);
		left--;
		n++;
	}
	assert_int_equal(n, N);
	for (size_t i = 0; i < ch.n; i++)
		free(ch.buf[i]);
	munmap(buf, len);
	tc_record_writer_close(&w);
	tc_record_reader_exit(&r);
	tc_record_reader_exit(&sr);
}

/* A real recording of format version 3 (tests/data/recfile/v3-chains.rec: tacho record
 * -g -F 4000 of gzip, by the tacho before version 4, 753 samples with their kernel and
 * user chains) still reads; written again by today's writer, its chains as references,
 * it reads as the same records, in a smaller file, and so does the copy with every
 * chain in full. */
static void test_v3_chains_copy(void **state)
{
	const char *refs = th_tmp("refs.rec"), *full = th_tmp("full.rec"),
		   *tree = th_tmp("tree.rec");
	char *v3, *a, *b, *c;
	size_t v3len, alen, blen, clen, samples = 0, n;
	struct tc_record_reader r0, r1, r2, r3;
	struct tc_rec x0, x1, x2, x3;
	uint32_t version;
	(void)state;

	assert_int_equal(tc_read_file(th_path("tests/data/recfile/v3-chains.rec"), &v3, &v3len,
				      1 << 20), 0);
	memcpy(&version, v3 + 8, 4);
	assert_int_equal(version, 3);
	n = th_rec_copy(v3, v3len, refs, 4, 50);
	assert_int_equal(th_rec_copy(v3, v3len, full, 3, 50), n);
	assert_int_equal(th_rec_copy(v3, v3len, tree, 5, 50), n);
	assert_int_equal(tc_read_file(refs, &a, &alen, 1 << 20), 0);
	assert_int_equal(tc_read_file(full, &b, &blen, 1 << 20), 0);
	assert_int_equal(tc_read_file(tree, &c, &clen, 1 << 20), 0);
	assert_int_equal(tc_record_reader_init(&r0, v3, v3len, "v3", NULL), 0);
	assert_int_equal(tc_record_reader_init(&r1, a, alen, "refs", NULL), 0);
	assert_int_equal(tc_record_reader_init(&r2, b, blen, "full", NULL), 0);
	assert_int_equal(tc_record_reader_init(&r3, c, clen, "tree", NULL), 0);
	assert_int_equal(r1.version, 4);
	assert_int_equal(r3.version, 5);
	for (;;) {
		int y0 = tc_record_reader_next(&r0, &x0, "v3", NULL);

		assert_int_equal(tc_record_reader_next(&r1, &x1, "refs", NULL), y0);
		assert_int_equal(tc_record_reader_next(&r2, &x2, "full", NULL), y0);
		assert_int_equal(tc_record_reader_next(&r3, &x3, "tree", NULL), y0);
		if (y0 != 1)
			break;
		assert_same_rec(&x0, &x1);
		assert_same_rec(&x0, &x2);
		assert_same_rec(&x0, &x3);
		samples += x0.type == TC_REC_SAMPLE;
	}
	assert_int_equal(samples, 753);
	assert_true(r0.finished && r1.finished && r2.finished && r3.finished);
	/* the same records and flushes: only the chains written again are references
	 * (28264 bytes against 34312 in full), and fewer bytes still as a tree */
	assert_true(alen < blen);
	assert_true(clen < alen);
	tc_record_reader_exit(&r3);
	free(v3);
	free(a);
	free(b);
	free(c);
	tc_record_reader_exit(&r0);
	tc_record_reader_exit(&r1);
	tc_record_reader_exit(&r2);
}

static void test_crc32(void **state)
{
	(void)state;
	/* the standard check value of CRC-32/ISO-HDLC */
	assert_int_equal(tc_crc32(0, "123456789", 9), 0xcbf43926);
	assert_int_equal(tc_crc32(tc_crc32(0, "1234", 4), "56789", 5), 0xcbf43926);
}

/* A recording that names a FIFO and devices as the files of its mappings: the report
 * neither opens the FIFO (it waited there forever) nor reads a device; their samples
 * stay unresolved. The watchdog turns a hang into a failure. Nor does it open a device
 * at all (opening one runs its driver: /dev/kmsg was opened, if no longer read): a
 * character device of its own (a second /dev/null, made with mknod where this user
 * may) is watched with inotify, and no IN_OPEN may come. */
static void test_named_paths_not_opened(void **state)
{
	struct tc_record_writer w;
	const char *rec = th_tmp("fifo.rec"), *fifo = th_tmp("map.fifo"), *dev = th_tmp("map.dev");
	struct tacho_profile *p = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	char *text = NULL, ev[4096];
	size_t len = 0;
	bool have_dev;
	int in = -1;
	FILE *f;
	(void)state;

	unlink(fifo);
	unlink(dev);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	have_dev = mknod(dev, S_IFCHR | 0600, makedev(1, 3)) == 0;
	if (have_dev) {
		in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		assert_true(in >= 0);
		assert_true(inotify_add_watch(in, dev, IN_OPEN) >= 0);
	}
	assert_int_equal(tc_record_writer_open(&w, rec), 0);
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
			       PERF_SAMPLE_IP, 1, 0, "cpu-clock");
	tc_record_writer_mmap(&w, 100, 100, 0x400000, 0x2000, 0, 5, 10, NULL, 0, fifo);
	tc_record_writer_mmap(&w, 100, 100, 0x500000, 0x2000, 0, 5, 10, NULL, 0, "/dev/zero");
	tc_record_writer_mmap(&w, 100, 100, 0x600000, 0x2000, 0, 5, 10, NULL, 0, dev);
	tc_record_writer_sample(&w, 20, 0x401010, 0, 1, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_sample(&w, 21, 0x501010, 0, 1, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_sample(&w, 22, 0x601010, 0, 1, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_finish(&w, 3, 0, 26, 0);
	assert_int_equal(tc_record_writer_close(&w), 0);

	alarm(20);
	assert_int_equal(tacho_profile_load(rec, &p, &d), 0);
	f = open_memstream(&text, &len);
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_SYMBOL, false, f,
						  TACHO_FORMAT_TABLE, NULL), 0);
	fclose(f);
	alarm(0);
	assert_non_null(strstr(text, "map.fifo"));
	free(text);
	tacho_profile_free(p);
	if (have_dev) {
		ssize_t n = read(in, ev, sizeof(ev));
		if (n > 0)
			fail_msg("the report opened %s, a device a recording named", dev);
		close(in);
		unlink(dev);
	}

	/* and a FIFO as the recording itself: refused at once, not waited on */
	alarm(20);
	assert_int_equal(tacho_profile_load(fifo, &p, &d), -EINVAL);
	alarm(0);
	assert_null(p);
	assert_non_null(strstr(d.message, "not a regular file"));
	unlink(fifo);
	if (!have_dev)
		TEST_SKIP("mknod is not allowed here: that a device is never opened was not "
			  "checked (the rest was)");
}

/* USTACK and BRANCH records read back as written, the stacks raw (version 4) and
 * compressed (version 5: ZSTACK records, where libzstd is there); impossible sizes of a
 * raw one are corrupt (test_zstack has the compressed ones). */
static void test_ustack_branch_records(void **state)
{
	struct tc_record_writer w;
	struct tc_record_reader r;
	struct tc_rec rec;
	struct tacho_diag d = { .sz = sizeof(d) };
	int fd;
	const uint64_t regs[3] = { 1, 0x7ffd0000, 0x401000 };
	const uint64_t br[6] = { 0x401100, 0x401000, 0, 0x401200, 0x401100, 0 };
	unsigned char stack[24] = "stack bytes, 24 of them";
	unsigned char *buf;
	off_t size;
	int got = 0;
	(void)state;

	for (unsigned format = 4; format <= 5; format++) {
	fd = memfd_create("rec", 0);
	got = 0;
	assert_true(fd >= 0);
	open_fd_as(&w, fd, format);
	tc_record_writer_sample(&w, 20, 0x401010, 0, 1, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_ustack(&w, PERF_SAMPLE_REGS_ABI_64, 0x1c0, 3, regs, stack, 21);
	tc_record_writer_branch(&w, 2, br);
	tc_record_writer_ustack(&w, PERF_SAMPLE_REGS_ABI_64, 0, 0, NULL, NULL, 0);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	size = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)size);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	tc_record_writer_close(&w);
	assert_int_equal(tc_record_reader_init(&r, buf, (size_t)size, "t.rec", &d), 0);
	while (tc_record_reader_next(&r, &rec, "t.rec", &d) == 1) {
		if (rec.type == TC_REC_USTACK && got == 0) {
			assert_int_equal(rec.u.ustack.abi, PERF_SAMPLE_REGS_ABI_64);
			assert_int_equal(rec.u.ustack.mask, 0x1c0);
			assert_int_equal(rec.u.ustack.nregs, 3);
			assert_int_equal(rec.u.ustack.regs[1], 0x7ffd0000);
			assert_int_equal(rec.u.ustack.stack_len, 21);
			assert_memory_equal(rec.u.ustack.stack, stack, 21);
			got++;
		} else if (rec.type == TC_REC_BRANCH) {
			assert_int_equal(rec.u.branch.nr, 2);
			assert_int_equal(rec.u.branch.entries[3], 0x401200);
			got++;
		} else if (rec.type == TC_REC_USTACK) {
			assert_int_equal(rec.u.ustack.nregs, 0);
			assert_int_equal(rec.u.ustack.stack_len, 0);
			got++;
		}
	}
	assert_int_equal(got, 3);
	tc_record_reader_exit(&r);
	free(buf);
	}

	/* a register count that is not the mask's, and a stack past its record */
	for (int bad = 0; bad < 3; bad++) {
		fd = memfd_create("rec", 0);
		open_fd_as(&w, fd, 4);
		if (bad == 0)
			tc_record_writer_ustack(&w, 2, 0x3, 3, regs, stack, 8);
		else if (bad == 1)
			tc_record_writer_ustack(&w, 2, 0x7, 3, regs, stack, 8);
		else
			tc_record_writer_branch(&w, 2, br);
		assert_int_equal(tc_record_writer_flush(&w), 0);
		size = lseek(fd, 0, SEEK_END);
		buf = malloc((size_t)size);
		assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
		tc_record_writer_close(&w);
		if (bad == 1) {
			/* claim more stack than the record holds, and fix the checksum */
			uint32_t len = 4096, crc;
			memcpy(buf + TC_REC_FILE_HDR + TC_REC_HDR + 20, &len, 4);
			crc = tc_crc32(0, buf + TC_REC_FILE_HDR + 4, (size_t)size - TC_REC_FILE_HDR - 4);
			memcpy(buf + TC_REC_FILE_HDR, &crc, 4);
		} else if (bad == 2) {
			uint32_t nr = 3, crc;
			memcpy(buf + TC_REC_FILE_HDR + TC_REC_HDR, &nr, 4);
			crc = tc_crc32(0, buf + TC_REC_FILE_HDR + 4, (size_t)size - TC_REC_FILE_HDR - 4);
			memcpy(buf + TC_REC_FILE_HDR, &crc, 4);
		}
		assert_int_equal(tc_record_reader_init(&r, buf, (size_t)size, "t.rec", &d), 0);
		assert_int_equal(tc_record_reader_next(&r, &rec, "t.rec", &d), -TACHO_ECORRUPT);
		tc_record_reader_exit(&r);
		free(buf);
	}
	tc_record_reader_exit(&r);
}

/* The address of a symbol of a binary (nm), or 0. */
static uint64_t sym_addr(const char *bin, const char *sym)
{
	char *argv[] = { (char *)"nm", (char *)bin, NULL };
	struct th_run r;
	char pat[128], *at;
	uint64_t a = 0;

	th_runv(&r, NULL, argv);
	snprintf(pat, sizeof(pat), " t %s\n", sym);
	at = strstr(r.out, pat);
	if (!at) {
		snprintf(pat, sizeof(pat), " T %s\n", sym);
		at = strstr(r.out, pat);
	}
	if (at) {
		while (at > r.out && at[-1] != '\n')
			at--;
		a = strtoull(at, NULL, 16);
	}
	th_run_free(&r);
	return a;
}

/* An LBR recording on data: the sample's IP, then the call sites of the branch stack
 * (newest first), under the kernel part of the recorded chain; the call sites name the
 * calling functions exactly (the look-up of a return address lands on the call). */
static void test_lbr_chain_on_data(void **state)
{
	struct tc_record_writer w;
	const char *rec = th_tmp("lbr.rec"), *bin = th_prog("sample-cpu");
	uint64_t hot1 = sym_addr(bin, "hot1"), burn = sym_addr(bin, "burn"),
		 mainf = sym_addr(bin, "main");
	struct tacho_profile *p = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	uint64_t br[6], chain[3];
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	assert_true(hot1 && burn && mainf);
	br[0] = burn + 8, br[1] = hot1, br[2] = 0;
	br[3] = mainf + 8, br[4] = burn, br[5] = 0;
	chain[0] = (uint64_t)PERF_CONTEXT_KERNEL;
	chain[1] = 0xffffffff81000010ull;
	chain[2] = (uint64_t)PERF_CONTEXT_USER;
	assert_int_equal(tc_record_writer_open(&w, rec), 0);
	tc_record_writer_event(&w, 0, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
			       PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK,
			       1000, TC_EVF_CALLCHAIN | TC_EVF_BRANCH, "cycles");
	/* static, not PIE: file offsets are addresses less 0x400000 */
	tc_record_writer_mmap(&w, 100, 100, 0x401000, 0x80000, 0x1000, 5, 10, NULL, 0, bin);
	tc_record_writer_comm(&w, 100, 100, true, 11, "prog");
	tc_record_writer_sample(&w, 20, hot1 + 4, 0, 1000, 100, 100, 0, 0,
				PERF_RECORD_MISC_USER, 0, NULL);
	tc_record_writer_branch(&w, 2, br);
	tc_record_writer_sample(&w, 21, 0xffffffff81000010ull, 0, 1000, 100, 100, 0, 0,
				PERF_RECORD_MISC_KERNEL, 3, chain);
	tc_record_writer_branch(&w, 2, br);
	tc_record_writer_finish(&w, 2, 0, 26, 0);
	assert_int_equal(tc_record_writer_close(&w), 0);

	assert_int_equal(tacho_profile_load(rec, &p, &d), 0);
	f = open_memstream(&text, &len);
	assert_int_equal(tacho_profile_write_folded(p, f), 0);
	fclose(f);
	/* the user-mode sample: main -> burn -> hot1 */
	assert_contains(text, "prog;main;burn;hot1 1000\n");
	/* the kernel-mode one: the same user chain (no user IP: the branches start at the
	 * call into hot1) with the kernel's frame under it */
	assert_contains(text, "prog;main;burn;");
	assert_int_equal(th_count_lines(text), 2);
	free(text);
	tacho_profile_free(p);
}

/* A recording cut short while it is reported (another program, or a report written
 * over its own input) must not kill the report: the file is read in, not mapped (a
 * mapping faulted with SIGBUS past the new end). */
static void test_truncated_while_reported(void **state)
{
	const char *rec = th_tmp("cut.rec");
	struct tacho_profile *p = NULL;
	struct tacho_diag d = { .sz = sizeof(d) };
	unsigned char *buf;
	char *text = NULL;
	size_t len, tlen = 0;
	FILE *f;
	(void)state;

	buf = make_recording(&len, true);
	f = fopen(rec, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	assert_int_equal(tacho_profile_load(rec, &p, &d), 0);
	assert_int_equal(truncate(rec, 0), 0);
	f = open_memstream(&text, &tlen);
	assert_int_equal(tacho_profile_write_script(p, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "prog"));
	free(text);
	tacho_profile_free(p);
}

/* Options from a program built against a newer tacho.h (a field past the struct this
 * library knows, set): tacho_record refuses them with -TACHO_EVERSION and *diag naming
 * the struct, recording nothing, *res untouched and no file made; the same struct with
 * that field zero is this library's (its next check answers: nothing to record); an sz
 * of 0 is below the first version. */
static void test_record_newer_opts(void **state)
{
	struct { struct tacho_record_opts o; long future; } n;
	struct tacho_record_result res;
	struct tacho_diag d = { .sz = sizeof(d) };
	(void)state;

	memset(&res, 0xa5, sizeof(res));
	res.sz = sizeof(res);
	memset(&n, 0, sizeof(n));
	n.o.sz = sizeof(n);
	n.o.output = th_tmp("newer.rec");
	n.future = 1;
	assert_int_equal(tacho_record(&n.o, &res, &d), -TACHO_EVERSION);
	assert_contains(d.message, "struct tacho_record_opts");
	assert_contains(d.message, "newer tacho.h");
	assert_true(res.samples == 0xa5a5a5a5a5a5a5a5ull);   /* untouched */
	assert_int_equal(access(th_tmp("newer.rec"), F_OK), -1);
	n.o.sz = 0;
	assert_int_equal(tacho_record(&n.o, &res, NULL), -EINVAL);
	assert_true(res.samples == 0xa5a5a5a5a5a5a5a5ull);
	n.o.sz = sizeof(n);
	n.future = 0;
	d = (struct tacho_diag){ .sz = sizeof(d) };
	assert_int_equal(tacho_record(&n.o, &res, &d), -EINVAL);
	assert_contains(d.message, "nothing to record");
	assert_int_equal(res.samples, 0);
	assert_int_equal(access(th_tmp("newer.rec"), F_OK), -1);
}

/* A CGROUP record reads back as written; one whose path lacks its NUL is corrupt. */
static void test_cgroup_record(void **state)
{
	struct tc_record_writer w;
	struct tc_record_reader rd;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tc_rec rec;
	int fd = memfd_create("rec", 0), n;
	off_t size;
	unsigned char *buf;
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_cgroup(&w, 4242, 77, "/system.slice/cron.service");
	assert_int_equal(tc_record_writer_flush(&w), 0);
	size = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)size);
	assert_int_equal(pread(fd, buf, (size_t)size, 0), size);
	tc_record_writer_close(&w);
	assert_int_equal(tc_record_reader_init(&rd, buf, (size_t)size, "t", &diag), 0);
	n = tc_record_reader_next(&rd, &rec, "t", &diag);
	assert_int_equal(n, 1);
	assert_int_equal(rec.type, TC_REC_CGROUP);
	assert_int_equal(rec.u.cgroup.pid, 4242);
	assert_int_equal(rec.u.cgroup.time, 77);
	assert_string_equal(rec.u.cgroup.path, "/system.slice/cron.service");
	assert_int_equal(tc_record_reader_next(&rd, &rec, "t", &diag), 0);

	/* the path's bytes without a NUL before the record's end (checksum made right) */
	{
		unsigned char *r = buf + TC_REC_FILE_HDR;
		uint32_t sz, crc;

		memcpy(&sz, r + 4, 4);
		memset(r + TC_REC_HDR + 16, 'x', sz - TC_REC_HDR - 16);
		crc = tc_crc32(0, r + 4, sz - 4);
		memcpy(r, &crc, 4);
	}
	assert_int_equal(tc_record_reader_init(&rd, buf, (size_t)size, "t", &diag), 0);
	assert_true(tc_record_reader_next(&rd, &rec, "t", &diag) < 0);
	assert_non_null(strstr(diag.message, "unterminated cgroup path"));
	free(buf);
	tc_record_reader_exit(&rd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_cgroup_record),
		cmocka_unit_test(test_reads_version_1),
		cmocka_unit_test(test_sample_blocks),
		cmocka_unit_test(test_chain_ref_bytes),
		cmocka_unit_test(test_chain_tree_bytes),
		cmocka_unit_test(test_crafted_tree),
		cmocka_unit_test(test_zstack),
		cmocka_unit_test(test_chain_refs),
		cmocka_unit_test(test_v3_chains_copy),
		cmocka_unit_test(test_mark_blocks),
		cmocka_unit_test(test_crafted_blocks),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_no_finish_is_truncated),
		cmocka_unit_test(test_unknown_type_skipped),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_named_paths_not_opened),
		cmocka_unit_test(test_truncated_while_reported),
		cmocka_unit_test(test_ustack_branch_records),
		cmocka_unit_test(test_lbr_chain_on_data),
		cmocka_unit_test(test_record_newer_opts),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
