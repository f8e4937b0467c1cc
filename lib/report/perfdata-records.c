/* perfdata-records.c - the data section of perf's perf.data (file and pipe mode) read
 * as tacho's records: each record type perf writes has its own decoder, found through a
 * table indexed by the type; what the header says (the attributes as EVENT records, the
 * META) is perfdata.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/perf_event.h>

#include "report/perfdata-int.h"

/* The sample_id fields at the end of a non-sample record: the time, when there. */
static uint64_t id_all_time(struct tc_perfdata_reader *r, const unsigned char *rec, size_t size,
			    size_t body)
{
	const struct tc_pd_attr *a;
	uint64_t st;
	size_t n = 0, t;

	if (!r->nattrs)
		return 0;
	a = &r->attrs[0];
	st = a->sample_type;
	if (!a->id_all || !(st & PERF_SAMPLE_TIME))
		return 0;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		if (size < body + 8)
			return 0;
		a = tc_pd_attr_of(r, true, get64(rec + size - 8));
		if (!a)
			return 0;
		st = a->sample_type;
		if (!(st & PERF_SAMPLE_TIME))
			return 0;
	}
	n = !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
	    !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
	    !!(st & PERF_SAMPLE_IDENTIFIER);
	if (size < body + 8 * n)
		return 0;
	t = size - 8 * n + (st & PERF_SAMPLE_TID ? 8 : 0);
	return get64(rec + t);
}

/* One record of the data section, handed to its type's decoder: where it is, and what
 * a decoder needs to say that it is corrupt. */
struct pd_in {
	const unsigned char *rec;
	size_t size;                  /* bytes of the record (its header's size) */
	uint32_t type;
	uint16_t misc;
	uint64_t off;                 /* its byte offset in the file */
	const char *name;
	struct tacho_diag *diag;
};

/* The decoders, one per record type: 1 with *out, 0 for a record that gives the report
 * nothing (it may have told the reader something: an attribute, a feature), or a
 * negative code with *diag. */
typedef int (*pd_decoder)(struct tc_perfdata_reader *r, const struct pd_in *in,
			  struct tc_rec *out);

/* --- samples --- */

/* A SAMPLE as it is read, field by field in the order of its attribute's sample_type:
 * the next field, and what the records after the sample take from it. */
struct pd_sample {
	const struct pd_in *in;
	const struct tc_pd_attr *a;   /* the sample's event */
	size_t p;                     /* the next field */
	const unsigned char *raw;     /* PERF_SAMPLE_RAW: raw_len bytes into the file */
	uint32_t raw_len;
	struct tc_rec us;             /* the user registers and stack (a USTACK record) */
};

#define NEED(n, what)                                                                      \
	do {                                                                               \
		if ((uint64_t)(n) > s->in->size - s->p)                                    \
			return corrupt(s->in->diag, s->in->name, s->in->off + s->p,        \
				       "a sample ends inside its " what);                  \
	} while (0)

/* Which event the sample is of: by its id, found where the first attribute's layout
 * puts it. */
static int sample_attr(struct tc_perfdata_reader *r, struct pd_sample *s)
{
	const struct pd_in *in = s->in;
	uint64_t st, id = 0;
	bool has_id = false;

	if (!r->nattrs)
		return corrupt(in->diag, in->name, in->off, "a sample before any event attribute");
	st = r->attrs[0].sample_type;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(8, "identifier");
		id = get64(in->rec + 8);
		has_id = true;
	} else if (st & PERF_SAMPLE_ID) {
		size_t ip = 8 + 8 * (!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
				     !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR));
		if (in->size >= ip + 8) {
			id = get64(in->rec + ip);
			has_id = true;
		}
	}
	s->a = tc_pd_attr_of(r, has_id, id);
	if (!s->a)
		return corrupt(in->diag, in->name, in->off, "a sample of an id no event attribute "
			       "has");
	if (s->a->ev < 0)
		return corrupt(in->diag, in->name, in->off, "a sample of perf's dummy event");
	return 0;
}

/* The fixed words, the identifier to the period. */
static int sample_words(struct pd_sample *s, struct tc_rec *out)
{
	const unsigned char *rec = s->in->rec;
	uint64_t st = s->a->sample_type;

	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(8, "identifier");
		s->p += 8;
	}
	if (st & PERF_SAMPLE_IP) {
		NEED(8, "IP");
		out->u.sample.ip = get64(rec + s->p);
		s->p += 8;
	}
	if (st & PERF_SAMPLE_TID) {
		NEED(8, "pid and tid");
		out->u.sample.pid = get32(rec + s->p);
		out->u.sample.tid = get32(rec + s->p + 4);
		s->p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		NEED(8, "time");
		out->u.sample.time = get64(rec + s->p);
		s->p += 8;
	}
	if (st & PERF_SAMPLE_ADDR) {
		NEED(8, "address");
		out->u.sample.addr = get64(rec + s->p);
		s->p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		NEED(8, "id");
		s->p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		NEED(8, "stream id");
		s->p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		NEED(8, "CPU");
		out->u.sample.cpu = get32(rec + s->p);
		s->p += 8;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		NEED(8, "period");
		out->u.sample.period = get64(rec + s->p);
		s->p += 8;
	}
	return 0;
}

/* PERF_SAMPLE_READ: the counts, stepped over by their size */
static int sample_read(struct pd_sample *s)
{
	const struct pd_in *in = s->in;
	uint64_t rf = s->a->read_format, per, n;
	unsigned t = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
		     !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (!(s->a->sample_type & PERF_SAMPLE_READ))
		return 0;
	per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & (1u << 4) /* PERF_FORMAT_LOST */);
	if (rf & PERF_FORMAT_GROUP) {
		NEED(8, "read values");
		n = get64(in->rec + s->p);
		s->p += 8;
		NEED(8 * t, "read values");
		s->p += 8 * t;
		if (n > (in->size - s->p) / 8 / per)
			return corrupt(in->diag, in->name, in->off + s->p, "a sample ends inside "
				       "its read values");
		s->p += 8 * per * n;
	} else {
		NEED(8 * (per + t), "read value");
		s->p += 8 * (per + t);
	}
	return 0;
}

/* The call chain, the raw data and the branch stack. */
static int sample_chains(struct pd_sample *s, struct tc_rec *out)
{
	const struct pd_in *in = s->in;
	const unsigned char *rec = in->rec;
	uint64_t st = s->a->sample_type;

	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;
		NEED(8, "call chain");
		nr = get64(rec + s->p);
		s->p += 8;
		if (nr > (in->size - s->p) / 8 || nr > UINT32_MAX)
			return corrupt(in->diag, in->name, in->off + s->p, "a sample ends inside "
				       "its call chain");
		out->u.sample.nr = (uint32_t)nr;
		/* points into the file, as tacho's own chains do (read with memcpy) */
		out->u.sample.chain = nr ? (const uint64_t *)(const void *)(rec + s->p) : NULL;
		s->p += 8 * nr;
	}
	if (st & PERF_SAMPLE_RAW) {
		NEED(4, "raw data");
		s->raw_len = get32(rec + s->p);
		s->p += 4;
		NEED(s->raw_len, "raw data");
		s->raw = rec + s->p;
		s->p += s->raw_len;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr, per = 24 + (s->a->branch_type & PD_BRANCH_COUNTERS ? 8 : 0);
		NEED(8, "branch stack");
		nr = get64(rec + s->p);
		s->p += 8;
		if (s->a->branch_type & PD_BRANCH_HW_INDEX) {
			NEED(8, "branch stack");
			s->p += 8;
		}
		if (nr > (in->size - s->p) / per)
			return corrupt(in->diag, in->name, in->off + s->p, "a sample ends inside "
				       "its branch stack");
		s->p += per * nr;
	}
	return 0;
}

/* perf record --call-graph dwarf: the user registers and a copy of the stack, which
 * the report unwinds as it does tacho's own (a USTACK record after the sample,
 * pointing into the file) */
static int sample_ustack(struct pd_sample *s)
{
	const unsigned char *rec = s->in->rec;
	uint64_t st = s->a->sample_type;

	if (st & PERF_SAMPLE_REGS_USER) {
		NEED(8, "user registers");
		s->us.u.ustack.abi = get64(rec + s->p);
		s->p += 8;
		if (s->us.u.ustack.abi) {
			size_t n = (size_t)__builtin_popcountll(s->a->regs_user);
			NEED(8 * n, "user registers");
			s->us.u.ustack.mask = s->a->regs_user;
			s->us.u.ustack.nregs = (uint32_t)n;
			s->us.u.ustack.regs = (const uint64_t *)(const void *)(rec + s->p);
			s->p += 8 * n;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t n, dyn;
		NEED(8, "user stack");
		n = get64(rec + s->p);
		s->p += 8;
		NEED(n, "user stack");
		s->us.u.ustack.stack = rec + s->p;
		s->p += n;
		if (n) {
			NEED(8, "user stack");
			/* the bytes the kernel could copy, of the n it reserved */
			dyn = get64(rec + s->p);
			s->us.u.ustack.stack_len = (uint32_t)(dyn < n ? dyn : n);
			s->p += 8;
		}
	}
	return 0;
}

/* What follows the user stack, none of which the report uses: stepped over by its
 * exact size, so that a sample shorter than its fields is told. */
static int sample_tail(struct pd_sample *s)
{
	const struct pd_in *in = s->in;
	uint64_t st = s->a->sample_type;

	/* weight, data source, transaction, then the interrupt registers, then more
	 * single words: only their sizes matter here */
	s->p += 8 * (size_t)(!!(st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) +
			     !!(st & PERF_SAMPLE_DATA_SRC) + !!(st & PERF_SAMPLE_TRANSACTION));
	if (s->p > in->size)
		return corrupt(in->diag, in->name, in->off + in->size, "a sample ends inside its "
			       "weight");
	if (st & PERF_SAMPLE_REGS_INTR) {
		NEED(8, "interrupt registers");
		if (get64(in->rec + s->p)) {
			s->p += 8;
			NEED(8 * __builtin_popcountll(s->a->regs_intr), "interrupt registers");
			s->p += 8 * (size_t)__builtin_popcountll(s->a->regs_intr);
		} else {
			s->p += 8;
		}
	}
	if (st & PERF_SAMPLE_PHYS_ADDR) {
		NEED(8, "physical address");
		s->p += 8;
	}
	s->p += 8 * (size_t)(!!(st & PERF_SAMPLE_CGROUP) + !!(st & PERF_SAMPLE_DATA_PAGE_SIZE) +
			     !!(st & PERF_SAMPLE_CODE_PAGE_SIZE));
	if (s->p > in->size)
		return corrupt(in->diag, in->name, in->off + in->size, "a sample is shorter than "
			       "its fields");
	/* the kernel writes the AUX data last (perf_output_sample) */
	if (st & PERF_SAMPLE_AUX) {
		uint64_t n;
		NEED(8, "AUX data");
		n = get64(in->rec + s->p);
		s->p += 8;
		NEED(n, "AUX data");
		s->p += n;
	}
	return 0;
}
#undef NEED

/* The payload and the user stack right after their sample, as tacho's recorder writes
 * them (the report ties a RAW record to the sample just before). */
static void sample_queue(struct tc_perfdata_reader *r, struct pd_sample *s)
{
	r->nqueued = r->iqueued = 0;
	if (s->a->raw && s->raw_len) {
		struct tc_rec *q = &r->queue[r->nqueued++];
		memset(q, 0, sizeof(*q));
		q->type = TC_REC_RAW;
		q->offset = s->in->off;
		q->u.raw.event = (uint32_t)s->a->ev;
		q->u.raw.data = s->raw;
		q->u.raw.size = s->raw_len;
	}
	if (s->us.u.ustack.nregs && s->us.u.ustack.stack_len) {
		s->us.type = TC_REC_USTACK;
		s->us.offset = s->in->off;
		r->queue[r->nqueued++] = s->us;
	}
}

/* A SAMPLE, decoded by its attribute's sample_type, stepping over what the report does
 * not use by its exact size. */
static int dec_sample(struct tc_perfdata_reader *r, const struct pd_in *in, struct tc_rec *out)
{
	struct pd_sample s;
	int err;

	memset(&s, 0, sizeof(s));
	s.in = in;
	s.p = 8;
	err = sample_attr(r, &s);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_SAMPLE;
	out->offset = in->off;
	out->u.sample.event = (uint16_t)s.a->ev;
	out->u.sample.misc = in->misc;
	out->u.sample.period = s.a->freq ? 1 : s.a->period;
	/* a CPU the file does not have is unknown, not CPU 0: perf record samples it only
	 * with -a, -C or --sample-cpu (perf report shows -1 then, as the report does) */
	out->u.sample.cpu = TC_CPU_UNKNOWN;
	if ((err = sample_words(&s, out)) || (err = sample_read(&s)) ||
	    (err = sample_chains(&s, out)) || (err = sample_ustack(&s)) ||
	    (err = sample_tail(&s)))
		return err;
	sample_queue(r, &s);
	return 1;
}

/* --- the kernel's side-band records --- */

/* An MMAP or MMAP2 record as tacho's (executable mappings only, as tacho records);
 * 0 for one the report does not use. */
static int dec_mmap(struct tc_perfdata_reader *r, const struct pd_in *in, struct tc_rec *out)
{
	const unsigned char *rec = in->rec;
	size_t size = in->size;
	size_t fo = in->type == PERF_RECORD_MMAP ? 40 : 72;
	const char *fn = (const char *)rec + fo;
	const char *nul;
	uint16_t misc = in->misc;
	uint32_t prot = PROT_EXEC | PROT_READ;

	if (size <= fo || !(nul = memchr(fn, 0, size - fo)))
		return corrupt(in->diag, in->name, in->off, "a mapping record without its file "
			       "name");
	if (in->type == PERF_RECORD_MMAP2)
		prot = get32(rec + 64);
	else if (misc & PERF_RECORD_MISC_MMAP_DATA)
		prot = PROT_READ;
	/* perf's record of the kernel's text says where it starts (KASLR); kernel
	 * addresses are symbolized from /proc/kallsyms, never through a mapping */
	if (get32(rec + 8) == UINT32_MAX) {
		if (tc_starts_with(fn, "[kernel.kallsyms]"))
			r->ktext = get64(rec + 32);
		return 0;
	}
	if (!(prot & PROT_EXEC))
		return 0;
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_MMAP;
	out->offset = in->off;
	out->u.mmap.pid = get32(rec + 8);
	out->u.mmap.tid = get32(rec + 12);
	out->u.mmap.start = get64(rec + 16);
	out->u.mmap.len = get64(rec + 24);
	out->u.mmap.pgoff = get64(rec + 32);
	out->u.mmap.prot = prot;
	out->u.mmap.filename = fn;
	out->u.mmap.time = id_all_time(r, rec, size, ((size_t)(nul - (const char *)rec) + 8) & ~7u);
	if (in->type == PERF_RECORD_MMAP2) {
		out->u.mmap.flags = get32(rec + 68);
		if ((misc & PD_MISC_MMAP_BUILD_ID) && rec[40] <= TC_BUILD_ID_MAX) {
			out->u.mmap.build_id_size = rec[40];
			memcpy(out->u.mmap.build_id, rec + 44, rec[40]);
			return 1;
		}
	}
	/* the build-id perf wrote for the file when it ended (the files it sampled) */
	{
		const struct tc_pd_bid *b = tc_pd_find_bid(r, fn);
		if (b) {
			out->u.mmap.build_id_size = b->len;
			memcpy(out->u.mmap.build_id, b->id, b->len);
		}
	}
	return 1;
}

static int dec_comm(struct tc_perfdata_reader *r, const struct pd_in *in, struct tc_rec *out)
{
	const unsigned char *rec = in->rec;
	const char *nul;

	if (in->size <= 16 || !(nul = memchr(rec + 16, 0, in->size - 16)))
		return corrupt(in->diag, in->name, in->off, "a COMM record without its name");
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_COMM;
	out->offset = in->off;
	out->u.comm.pid = get32(rec + 8);
	out->u.comm.tid = get32(rec + 12);
	out->u.comm.exec = !!(in->misc & PERF_RECORD_MISC_COMM_EXEC);
	out->u.comm.comm = (const char *)rec + 16;
	out->u.comm.time = id_all_time(r, rec, in->size,
				       ((size_t)(nul - (const char *)rec) + 8) & ~7u);
	return 1;
}

/* FORK and EXIT */
static int dec_task(struct tc_perfdata_reader *r, const struct pd_in *in, struct tc_rec *out)
{
	const unsigned char *rec = in->rec;

	if (in->size < 32)
		return corrupt(in->diag, in->name, in->off, "a FORK or EXIT record of less than "
			       "32 bytes");
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_TASK;
	out->offset = in->off;
	out->u.task.kind = in->type == PERF_RECORD_FORK ? TC_TASK_FORK : TC_TASK_EXIT;
	out->u.task.pid = get32(rec + 8);
	out->u.task.ppid = get32(rec + 12);
	out->u.task.tid = get32(rec + 16);
	out->u.task.ptid = get32(rec + 20);
	out->u.task.time = get64(rec + 24);
	return 1;
}

/* LOST (the ring was full) and LOST_SAMPLES (the kernel dropped them) */
static int dec_lost(struct tc_perfdata_reader *r, const struct pd_in *in, struct tc_rec *out)
{
	size_t at = in->type == PERF_RECORD_LOST ? 16 : 8;

	if (in->size < at + 8)
		return corrupt(in->diag, in->name, in->off, "a LOST record without its count");
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_LOST;
	out->offset = in->off;
	out->u.lost.lost = get64(in->rec + at);
	/* the CPU is in the record's sample_id, which is not read here: said as
	 * unknown, never as CPU 0 */
	out->u.lost.cpu = TC_LOST_NO_CPU;
	return 1;
}

/* THROTTLE and UNTHROTTLE */
static int dec_throttle(struct tc_perfdata_reader *r, const struct pd_in *in,
			struct tc_rec *out)
{
	if (in->size < 32)
		return corrupt(in->diag, in->name, in->off, "a THROTTLE record of less than 32 "
			       "bytes");
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_THROTTLE;
	out->offset = in->off;
	out->u.throttle.time = get64(in->rec + 8);
	out->u.throttle.throttled = in->type == PERF_RECORD_THROTTLE;
	return 1;
}

/* --- pipe mode's header records: the attributes, names, features and build-ids --- */

/* What they told the reader yields no record; an error stays one. */
static int told(int err)
{
	return err < 0 ? err : 0;
}

/* the tracing data follows the record (n bytes, checked by the reader) */
static int dec_tracing_data(struct tc_perfdata_reader *r, const struct pd_in *in,
			    struct tc_rec *out)
{
	if (in->size < 12)
		return corrupt(in->diag, in->name, in->off, "a tracing data record shorter than "
			       "its header");
	return told(tc_pd_tracing_data(r, in->rec + in->size, get32(in->rec + 8),
				       in->off + in->size, in->name, in->diag));
}

static int dec_attr(struct tc_perfdata_reader *r, const struct pd_in *in, struct tc_rec *out)
{
	size_t size = in->size;
	uint32_t asz;
	int err;

	if (size < 8 + PD_ATTR_MIN)
		return corrupt(in->diag, in->name, in->off, "an attribute record shorter than an "
			       "attribute");
	asz = get32(in->rec + 8 + 4);
	if (asz < PD_ATTR_MIN || asz > size - 8 || (size - 8 - asz) % 8)
		return corrupt(in->diag, in->name, in->off, "an attribute record of a bad size");
	err = tc_pd_add_attr(r, in->rec + 8, asz);
	if (!err)
		err = tc_pd_add_ids(r, r->nattrs - 1, in->rec + 8 + asz, (size - 8 - asz) / 8);
	return told(err);
}

/* an event's name (the other updates are not read) */
static int dec_event_update(struct tc_perfdata_reader *r, const struct pd_in *in,
			    struct tc_rec *out)
{
	const unsigned char *rec = in->rec;
	uint32_t i;

	if (in->size < 24)
		return corrupt(in->diag, in->name, in->off, "an event update shorter than its "
			       "header");
	if (get64(rec + 8) != PD_EVENT_UPDATE_NAME)
		return 0;
	if (in->size < 25 || !memchr(rec + 24, 0, in->size - 24))
		return corrupt(in->diag, in->name, in->off, "an event name without its end");
	if (tc_hmap_get(&r->ids, get64(rec + 16), &i) && i < r->nattrs) {
		free(r->attrs[i].name);
		r->attrs[i].name = tc_strdup((const char *)rec + 24);
		if (!r->attrs[i].name)
			return -ENOMEM;
	}
	return 0;
}

static int dec_feature(struct tc_perfdata_reader *r, const struct pd_in *in,
		       struct tc_rec *out)
{
	if (in->size < 16)
		return corrupt(in->diag, in->name, in->off, "a feature record shorter than its "
			       "header");
	if (get64(in->rec + 8) >= PD_FEAT_BITS)
		return 0;
	return told(tc_pd_feature(r, (unsigned)get64(in->rec + 8), in->rec + 16, in->size - 16,
				  in->off + 16, in->name, in->diag));
}

static int dec_build_id(struct tc_perfdata_reader *r, const struct pd_in *in,
			struct tc_rec *out)
{
	return told(tc_pd_add_bid(r, in->rec, in->size, in->misc, in->off, in->name, in->diag));
}

/* KSYMBOL, BPF_EVENT, switches, namespaces, cgroups, FINISHED_ROUND, the maps of CPUs
 * and threads, and types newer than this reader have none: nothing a report view
 * shows (the kernel's symbols come from /proc/kallsyms); the reader counts them as
 * stepped over. */
static const pd_decoder decoders[PD_HEADER_FEATURE + 1] = {
	[PERF_RECORD_SAMPLE] = dec_sample,
	[PERF_RECORD_MMAP] = dec_mmap,
	[PERF_RECORD_MMAP2] = dec_mmap,
	[PERF_RECORD_COMM] = dec_comm,
	[PERF_RECORD_FORK] = dec_task,
	[PERF_RECORD_EXIT] = dec_task,
	[PERF_RECORD_LOST] = dec_lost,
	[PERF_RECORD_LOST_SAMPLES] = dec_lost,
	[PERF_RECORD_THROTTLE] = dec_throttle,
	[PERF_RECORD_UNTHROTTLE] = dec_throttle,
	[PD_HEADER_TRACING_DATA] = dec_tracing_data,
	[PD_HEADER_ATTR] = dec_attr,
	[PD_EVENT_UPDATE] = dec_event_update,
	[PD_HEADER_FEATURE] = dec_feature,
	[PD_HEADER_BUILD_ID] = dec_build_id,
};

/* --- the reader --- */

/* The end of the data section: the EVENTs not yet yielded, then the META; 0 after. */
static int data_end(struct tc_perfdata_reader *r, struct tc_rec *out)
{
	/* the file's words come last: whether the kernel is this one is known once its
	 * mapping was read */
	if (tc_pd_next_event(r, out))
		return 1;
	if (!r->meta_done) {
		tc_pd_meta(r, out);
		return 1;
	}
	/* a record begun in the last COMPRESSED record that none finished is cut too */
	if (r->off < r->end || r->zpos < r->zlen)
		r->truncated = true;
	r->finished = !r->truncated;
	return 0;
}

/* The bytes of TRACING_DATA's and AUXTRACE's data, which follow the record outside its
 * size, 8-aligned; 0 for the other types. */
static uint64_t data_after(const struct pd_in *in)
{
	uint64_t n;

	if (in->type != PD_HEADER_TRACING_DATA && in->type != PD_AUXTRACE)
		return 0;
	n = in->type == PD_AUXTRACE ? (in->size >= 16 ? get64(in->rec + 8) : 0)
				    : (in->size >= 12 ? get32(in->rec + 8) : 0);
	return (n + 7) & ~7ull;
}

/* The next record of the last inflated COMPRESSED record, left where it is: 1 with
 * *in, 0 when no whole one is left (a partial one is carried over to the next
 * COMPRESSED record), or -TACHO_ECORRUPT. Its offset is the COMPRESSED record's. */
static int peek_inflated(struct tc_perfdata_reader *r, struct pd_in *in)
{
	size_t left = r->zlen - r->zpos;
	uint16_t size;

	if (left < 8)
		return 0;
	in->rec = r->zdata + r->zpos;
	in->off = r->zoff;
	in->type = get32(in->rec);
	memcpy(&in->misc, in->rec + 4, 2);
	memcpy(&size, in->rec + 6, 2);
	in->size = size;
	if (size < 8)
		return corrupt(in->diag, in->name, r->zoff, "a compressed record holds a record "
			       "shorter than its header");
	if (size > left)
		return 0;
	/* perf compresses what the kernel's ring buffers hold: no tracing or AUX data,
	 * nothing compressed again */
	if (in->type == PD_COMPRESSED || in->type == PD_COMPRESSED2 || data_after(in))
		return corrupt(in->diag, in->name, r->zoff, "a compressed record holds a record "
			       "perf never compresses");
	return 1;
}

/* COMPRESSED: the zstd payload after the header; COMPRESSED2: after a data_size word,
 * which says how much of the record (padded to 8 bytes) it is. */
static int inflate_record(struct tc_perfdata_reader *r, const struct pd_in *in)
{
	const unsigned char *src = in->rec + 8;
	size_t n = in->size - 8;

	if (in->type == PD_COMPRESSED2) {
		uint64_t ds;
		if (in->size < 16)
			return corrupt(in->diag, in->name, in->off, "a COMPRESSED2 record shorter "
				       "than its header");
		ds = get64(in->rec + 8);
		if (ds > in->size - 16)
			return corrupt(in->diag, in->name, in->off, "a COMPRESSED2 record's data "
				       "size past its end");
		src = in->rec + 16;
		n = (size_t)ds;
	}
	return tc_pd_inflate(r, src, n, in->off, in->name, in->diag);
}

int tc_perfdata_reader_next(struct tc_perfdata_reader *r, struct tc_rec *out, const char *name,
			    struct tacho_diag *diag)
{
	if (r->iqueued < r->nqueued) {
		*out = r->queue[r->iqueued++];
		return 1;
	}
	for (;;) {
		struct pd_in in = { .name = name, .diag = diag };
		uint64_t off = r->off, extra;
		uint16_t size;
		pd_decoder dec;
		int ret;

		/* the records inflated from a COMPRESSED record come before the file's next */
		ret = peek_inflated(r, &in);
		if (ret < 0)
			return ret;
		if (ret) {
			if (in.type < PD_HEADER_ATTR && tc_pd_next_event(r, out))
				return 1;
			r->zpos += in.size;
			goto decode;
		}
		if (off >= r->end || r->end - off < 8)
			return data_end(r, out);
		in.rec = r->data + off;
		in.off = off;
		in.type = get32(in.rec);
		memcpy(&in.misc, in.rec + 4, 2);
		memcpy(&size, in.rec + 6, 2);
		in.size = size;
		if (size < 8)
			return corrupt(diag, name, off, "a record shorter than its header");
		if (size > r->end - off) {
			/* the data ends inside this record: a recording cut short */
			r->truncated = true;
			r->end = off;
			continue;
		}
		/* the kernel's records come after the events they need (in pipe mode,
		 * the attributes come as records first) */
		if (in.type < PD_HEADER_ATTR && tc_pd_next_event(r, out))
			return 1;
		extra = data_after(&in);
		if (extra > r->end - off - size) {
			r->truncated = true;
			r->end = off;
			continue;
		}
		r->off = off + size + extra;
		if (in.type == PD_COMPRESSED || in.type == PD_COMPRESSED2) {
			ret = inflate_record(r, &in);
			if (ret)
				return ret;
			r->good_end = r->off;
			continue;
		}
		r->good_end = r->off;
decode:
		dec = in.type < sizeof(decoders) / sizeof(decoders[0]) ? decoders[in.type] : NULL;
		if (!dec) {
			r->skipped++;
			continue;
		}
		ret = dec(r, &in, out);
		if (ret)
			return ret;
	}
}
