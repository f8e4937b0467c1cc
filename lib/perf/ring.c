/* ring.c - reading the mmap ring buffer of a sampling event and parsing its records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "perf/perf.h"
#include "perf/ring.h"
#include "perf/syscall.h"
#include "tacho/errors.h"

/* header.size is a u16, so no record is larger than this. */
#define RING_MAX_RECORD 65536

static int ring_setup(struct tc_ring *r, void *base, size_t meta_len, size_t data_size)
{
	r->base = base;
	r->meta = base;
	r->data = (unsigned char *)base + meta_len;
	r->size = data_size;
	r->tmp = malloc(RING_MAX_RECORD);
	return r->tmp ? 0 : -ENOMEM;
}

int tc_ring_mmap(struct tc_ring *r, int fd, unsigned data_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	void *base;
	int err;

	memset(r, 0, sizeof(*r));
	if (data_pages == 0 || (data_pages & (data_pages - 1)))
		return -EINVAL;
	len = (size_t)(data_pages + 1) * (size_t)page;
	/* PROT_WRITE makes this a "writable" ring: the kernel then honours data_tail and
	 * never overwrites unread records (it counts them in PERF_RECORD_LOST instead). */
	err = tc_perf_mmap(fd, len, PROT_READ | PROT_WRITE, &base);
	if (err)
		return err;
	r->map_len = len;
	err = ring_setup(r, base, (size_t)page, (size_t)data_pages * (size_t)page);
	if (err) {
		tc_ring_exit(r);
		return err;
	}
	/* Since Linux 4.1 the page says where the data lives; trust it when set. */
	if (r->meta->data_offset && r->meta->data_size &&
	    r->meta->data_offset + r->meta->data_size <= len) {
		r->data = (unsigned char *)base + r->meta->data_offset;
		r->size = r->meta->data_size;
	}
	return 0;
}

int tc_ring_init_mem(struct tc_ring *r, void *mem, size_t meta_len, size_t data_size)
{
	memset(r, 0, sizeof(*r));
	if (!mem || meta_len < sizeof(struct perf_event_mmap_page) || data_size < 8 ||
	    (data_size & (data_size - 1)))
		return -EINVAL;
	return ring_setup(r, mem, meta_len, data_size);
}

void tc_ring_exit(struct tc_ring *r)
{
	if (!r)
		return;
	if (r->map_len && r->base)
		tc_perf_munmap(r->base, r->map_len);
	free(r->tmp);
	r->tmp = NULL;
	r->base = NULL;
	r->meta = NULL;
	r->data = NULL;
	r->map_len = 0;
}

bool tc_ring_pending(const struct tc_ring *r)
{
	return r->meta &&
	       __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE) != r->meta->data_tail;
}

int tc_ring_drain(struct tc_ring *r, tc_ring_fn *fn, void *arg)
{
	uint64_t head, tail, mask = r->size - 1;
	int n = 0, ret = 0;

	if (!r->meta)
		return -EINVAL;
	/* Pairs with the kernel's smp_wmb before it publishes data_head: every byte up to
	 * head is written once we see head. */
	head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	tail = r->meta->data_tail;
	while (tail != head) {
		uint64_t avail = head - tail, off = tail & mask;
		struct perf_event_header hdr;
		const struct perf_event_header *rec;

		if (avail < sizeof(hdr) || avail > r->size) {
			ret = -TACHO_ECORRUPT;
			tail = head;
			break;
		}
		/* The header itself never straddles: records are multiples of 8 bytes and
		 * the data area is a power of two, so a u64-aligned header fits. Copy
		 * anyway, byte-wise safe, in case a kernel ever breaks that. */
		if (off + sizeof(hdr) <= r->size) {
			memcpy(&hdr, r->data + off, sizeof(hdr));
		} else {
			size_t first = (size_t)(r->size - off);
			memcpy(&hdr, r->data + off, first);
			memcpy((unsigned char *)&hdr + first, r->data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size > avail) {
			ret = -TACHO_ECORRUPT;
			tail = head;
			break;
		}
		if (off + hdr.size <= r->size) {
			rec = (const void *)(r->data + off);
		} else {
			/* The record straddles the end of the buffer: copy both parts out so
			 * the consumer sees it contiguous. */
			size_t first = (size_t)(r->size - off);
			memcpy(r->tmp, r->data + off, first);
			memcpy(r->tmp + first, r->data, hdr.size - first);
			rec = (const void *)r->tmp;
			r->wraps++;
		}
		tail += hdr.size;
		r->records++;
		n++;
		ret = fn(arg, rec);
		if (ret)
			break;
	}
	/* Everything before tail is consumed: let the kernel have it. */
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return ret ? ret : n;
}

/* A bounded reader over one record's payload. */
struct rd {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t rd_u64(struct rd *d)
{
	uint64_t v = 0;

	if (d->end - d->p < 8) {
		d->bad = true;
		return 0;
	}
	memcpy(&v, d->p, 8);
	d->p += 8;
	return v;
}

static void rd_u32x2(struct rd *d, uint32_t *a, uint32_t *b)
{
	uint64_t v = rd_u64(d);

	/* two u32 in one u64 slot, first one at the lower address (little endian) */
	*a = (uint32_t)v;
	*b = (uint32_t)(v >> 32);
}

int tc_perf_parse_sample(uint64_t st, const struct perf_event_header *rec,
			 struct tc_perf_sample *out)
{
	return tc_perf_parse_sample_regs(st, 0, rec, out);
}

int tc_perf_parse_sample_regs(uint64_t st, uint64_t regs_mask,
			      const struct perf_event_header *rec, struct tc_perf_sample *out)
{
	const uint64_t known = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
			       PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	struct rd d = { (const unsigned char *)(rec + 1), (const unsigned char *)rec + rec->size,
			false };
	uint32_t res;

	memset(out, 0, sizeof(*out));
	if (st & ~known)
		return -EINVAL;
	if (rec->size < sizeof(*rec))
		return -TACHO_ECORRUPT;
	out->misc = rec->misc;
	/* the order is the one of perf_event_open(2), "PERF_RECORD_SAMPLE" */
	if (st & PERF_SAMPLE_IDENTIFIER)
		out->id = rd_u64(&d);
	if (st & PERF_SAMPLE_IP)
		out->ip = rd_u64(&d);
	if (st & PERF_SAMPLE_TID)
		rd_u32x2(&d, &out->pid, &out->tid);
	if (st & PERF_SAMPLE_TIME)
		out->time = rd_u64(&d);
	if (st & PERF_SAMPLE_ADDR)
		out->addr = rd_u64(&d);
	if (st & PERF_SAMPLE_ID)
		out->id = rd_u64(&d);
	if (st & PERF_SAMPLE_STREAM_ID)
		(void)rd_u64(&d);
	if (st & PERF_SAMPLE_CPU)
		rd_u32x2(&d, &out->cpu, &res);
	if (st & PERF_SAMPLE_PERIOD)
		out->period = rd_u64(&d);
	if (st & PERF_SAMPLE_READ) {
		/* value, time_enabled, time_running, id */
		out->value = rd_u64(&d);
		(void)rd_u64(&d);
		(void)rd_u64(&d);
		(void)rd_u64(&d);
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		out->nr = rd_u64(&d);
		if (d.bad || out->nr > (uint64_t)(d.end - d.p) / 8)
			return -TACHO_ECORRUPT;
		out->chain = (const uint64_t *)(const void *)d.p;
		d.p += out->nr * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size, then the bytes; with the size they fill whole u64s (events
		 * without a payload give size 4 and four zero bytes) */
		uint32_t size = d.bad || d.end - d.p < 4 ? 0 : (uint32_t)d.p[0] |
				(uint32_t)d.p[1] << 8 | (uint32_t)d.p[2] << 16 | (uint32_t)d.p[3] << 24;
		if (d.bad || d.end - d.p < 4 || size > (size_t)(d.end - d.p) - 4)
			return -TACHO_ECORRUPT;
		out->raw_size = size;
		out->raw = d.p + 4;
		size_t step = (4 + (size_t)size + 7) & ~(size_t)7;
		d.p = step < (size_t)(d.end - d.p) ? d.p + step : d.end;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		out->bnr = rd_u64(&d);
		if (d.bad || out->bnr > (uint64_t)(d.end - d.p) / 24)
			return -TACHO_ECORRUPT;
		out->branches = (const uint64_t *)(const void *)d.p;
		d.p += out->bnr * 24;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		/* the registers follow only when the sample interrupted a user context
		 * (abi not NONE): a kernel thread has none */
		out->regs_abi = rd_u64(&d);
		if (out->regs_abi) {
			out->nregs = (uint32_t)__builtin_popcountll(regs_mask);
			if (d.bad || out->nregs > (uint64_t)(d.end - d.p) / 8)
				return -TACHO_ECORRUPT;
			out->regs = (const uint64_t *)(const void *)d.p;
			d.p += (size_t)out->nregs * 8;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		/* size, size bytes, then (only when size is not 0) how many of them the
		 * kernel filled */
		out->stack_size = rd_u64(&d);
		if (out->stack_size) {
			if (d.bad || out->stack_size > (uint64_t)(d.end - d.p) ||
			    (uint64_t)(d.end - d.p) - out->stack_size < 8)
				return -TACHO_ECORRUPT;
			out->stack = d.p;
			d.p += out->stack_size;
			out->stack_dyn = rd_u64(&d);
			if (out->stack_dyn > out->stack_size)
				out->stack_dyn = out->stack_size;
		}
	}
	return d.bad ? -TACHO_ECORRUPT : 0;
}

int tc_perf_parse_sample_id(uint64_t st, const struct perf_event_header *rec,
			    struct tc_perf_sample_id *out)
{
	size_t n = 0;
	struct rd d;
	uint32_t res;

	memset(out, 0, sizeof(*out));
	/* the fields sit at the end of the record: count them to find where they begin */
	n += !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
	     !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
	     !!(st & PERF_SAMPLE_IDENTIFIER);
	if (rec->size < sizeof(*rec) + n * 8)
		return -TACHO_ECORRUPT;
	d.p = (const unsigned char *)rec + rec->size - n * 8;
	d.end = (const unsigned char *)rec + rec->size;
	d.bad = false;
	if (st & PERF_SAMPLE_TID)
		rd_u32x2(&d, &out->pid, &out->tid);
	if (st & PERF_SAMPLE_TIME)
		out->time = rd_u64(&d);
	if (st & PERF_SAMPLE_ID)
		out->id = rd_u64(&d);
	if (st & PERF_SAMPLE_STREAM_ID)
		(void)rd_u64(&d);
	if (st & PERF_SAMPLE_CPU)
		rd_u32x2(&d, &out->cpu, &res);
	if (st & PERF_SAMPLE_IDENTIFIER)
		out->id = rd_u64(&d);
	return d.bad ? -TACHO_ECORRUPT : 0;
}
