/* perfdata.c - reading perf's perf.data (tools/perf/Documentation/perf.data-file-format.txt,
 * file and pipe mode) as the records of tacho's own recording: the report then gives
 * every view of a perf recording with the code that reads its own. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "report/perfdata.h"
#include "tacho/errors.h"

#define PD_MAGIC "PERFILE2"
#define PD_MAGIC_SWAPPED "2ELIFREP"
#define PD_FILE_HDR 104           /* struct perf_file_header */
#define PD_PIPE_HDR 16            /* struct perf_pipe_file_header */
#define PD_ATTR_MIN 64            /* PERF_ATTR_SIZE_VER0 */
#define PD_ATTR_MAX 4096
#define PD_NAME_MAX 4096          /* no event name or command line part is longer */

/* perf's own record types (tools/lib/perf/include/perf/event.h): stable numbers */
enum {
	PD_HEADER_ATTR = 64,
	PD_HEADER_EVENT_TYPE = 65,
	PD_HEADER_TRACING_DATA = 66,  /* followed by its data, outside header.size */
	PD_HEADER_BUILD_ID = 67,
	PD_FINISHED_ROUND = 68,
	PD_AUXTRACE = 71,             /* followed by its data, outside header.size */
	PD_EVENT_UPDATE = 78,
	PD_HEADER_FEATURE = 80,
	PD_COMPRESSED = 81,
};

/* feature bits of the file header and of PERF_RECORD_HEADER_FEATURE */
enum {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_BITS = 256,
};

#define PD_EVENT_UPDATE_NAME 2
#define PD_MISC_BUILD_ID_SIZE (1u << 15)
#define PD_MISC_MMAP_BUILD_ID (1u << 14)
#define PD_BRANCH_HW_INDEX (1ull << 17)
#define PD_BRANCH_COUNTERS (1ull << 19)

struct tc_pd_attr {
	uint32_t type, bp_type;
	uint64_t config, period, sample_type, read_format, branch_type, regs_user, regs_intr;
	bool freq, id_all;
	char *name;                   /* from EVENT_DESC or EVENT_UPDATE, or NULL */
	int64_t ev;                   /* tacho's event index; -1 when not reported */
	bool raw;                     /* its samples' raw data go to the report (RAW) */
};

/* A tracepoint's format from the tracing data: the text tracefs gave perf, into the
 * file. */
struct tc_pd_tp {
	uint64_t id;                  /* its "ID:", the attribute's config */
	const char *text;
	size_t len;
	char name[96];                /* "system:name", for an attribute without a name */
};

struct tc_pd_bid {
	const char *name;             /* into the file, NUL-terminated there */
	uint8_t id[TC_BUILD_ID_MAX];
	uint8_t len;
	bool kernel;
};

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static int corrupt(struct tacho_diag *diag, const char *name, uint64_t off, const char *what)
{
	return tc_diag_set(diag, name, 0, 0, -TACHO_ECORRUPT,
			   "corrupt perf.data at byte %" PRIu64 ": %s", off, what);
}

bool tc_perfdata_is(const void *data, size_t len)
{
	return len >= 8 && (!memcmp(data, PD_MAGIC, 8) || !memcmp(data, PD_MAGIC_SWAPPED, 8));
}

/* --- tracing data: the tracepoints' formats --- */

/* The format of tracepoint id, or NULL. */
static const struct tc_pd_tp *find_tp(const struct tc_perfdata_reader *r, uint64_t id)
{
	for (size_t i = 0; i < r->ntps; i++)
		if (r->tps[i].id == id)
			return &r->tps[i];
	return NULL;
}

/* The value after "key: " on a line of a format text of len bytes; false when no line
 * starts so. */
static bool format_line(const char *t, size_t len, const char *key, const char **val,
			size_t *vlen)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < len;) {
		const char *nl = memchr(t + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - t) : len;
		if (end - i > klen && !memcmp(t + i, key, klen)) {
			*val = t + i + klen;
			*vlen = end - i - klen;
			return true;
		}
		i = end + 1;
	}
	return false;
}

static int add_tp(struct tc_perfdata_reader *r, const char *sys, const unsigned char *text,
		  size_t len)
{
	const char *v, *n;
	size_t vl, nl;
	char num[24];
	char *e;
	uint64_t id;
	struct tc_pd_tp *t;

	/* a format without its "ID:" names no event: nothing to tie it to */
	if (!format_line((const char *)text, len, "ID: ", &v, &vl) || !vl || vl >= sizeof(num))
		return 0;
	memcpy(num, v, vl);
	num[vl] = 0;
	errno = 0;
	id = strtoull(num, &e, 10);
	if (errno || *e)
		return 0;
	if (r->ntps == r->tps_cap) {
		size_t nc = r->tps_cap ? r->tps_cap * 2 : 8;
		t = realloc(r->tps, nc * sizeof(*t));
		if (!t)
			return -ENOMEM;
		r->tps = t;
		r->tps_cap = nc;
	}
	t = &r->tps[r->ntps++];
	t->id = id;
	t->text = (const char *)text;
	t->len = len;
	t->name[0] = 0;
	if (format_line((const char *)text, len, "name: ", &n, &nl))
		snprintf(t->name, sizeof(t->name), "%s:%.*s", sys, (int)(nl < 64 ? nl : 64), n);
	return 0;
}

/* perf's tracing data (trace-cmd's layout, tools/perf/util/trace-event-read.c): magic,
 * version, byte order, long and page size, the ring buffer's header_page and
 * header_event, the ftrace formats, then per system its name and its events' formats;
 * kallsyms, printk formats and saved command lines follow, which the report does not
 * use. s is len bytes at byte off of the file. */
static int tracing_data(struct tc_perfdata_reader *r, const unsigned char *s, size_t len,
			uint64_t off, const char *name, struct tacho_diag *diag)
{
	static const unsigned char magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i',
						 'n', 'g' };
	size_t p = 0;
	uint32_t n;
	const unsigned char *nul;
	int err;

#define TD_NEED(k, what)                                                                  \
	do {                                                                              \
		if ((uint64_t)(k) > len - p)                                              \
			return corrupt(diag, name, off + p, "tracing data ends inside " what); \
	} while (0)
/* a u64 size, then that many bytes */
#define TD_SKIP_BLOCK(what)                                                                \
	do {                                                                               \
		uint64_t sz_;                                                              \
		TD_NEED(8, what);                                                          \
		sz_ = get64(s + p);                                                        \
		p += 8;                                                                    \
		TD_NEED(sz_, what);                                                        \
		p += (size_t)sz_;                                                          \
	} while (0)

	if (len < sizeof(magic) || memcmp(s, magic, sizeof(magic)))
		return corrupt(diag, name, off, "tracing data without its magic");
	p = sizeof(magic);
	if (!(nul = memchr(s + p, 0, len - p)) || nul - (s + p) > 16)
		return corrupt(diag, name, off + p, "tracing data without its version");
	p = (size_t)(nul - s) + 1;
	TD_NEED(6, "its header");
	if (s[p])
		return corrupt(diag, name, off + p, "big-endian tracing data");
	if (s[p + 1] != 8)
		return corrupt(diag, name, off + p + 1, "tracing data of a long size other than 8");
	p += 6;
	TD_NEED(12, "its header_page");
	if (memcmp(s + p, "header_page", 12))
		return corrupt(diag, name, off + p, "tracing data without its header_page");
	p += 12;
	TD_SKIP_BLOCK("its header_page");
	TD_NEED(13, "its header_event");
	if (memcmp(s + p, "header_event", 13))
		return corrupt(diag, name, off + p, "tracing data without its header_event");
	p += 13;
	TD_SKIP_BLOCK("its header_event");
	TD_NEED(4, "its ftrace formats");
	n = get32(s + p);
	p += 4;
	for (uint32_t i = 0; i < n; i++)
		TD_SKIP_BLOCK("an ftrace format");
	TD_NEED(4, "its systems");
	n = get32(s + p);
	p += 4;
	for (uint32_t i = 0; i < n; i++) {
		const char *sys = (const char *)s + p;
		uint32_t nev;
		if (!(nul = memchr(s + p, 0, len - p)))
			return corrupt(diag, name, off + p, "tracing data ends inside a system's "
				       "name");
		p = (size_t)(nul - s) + 1;
		TD_NEED(4, "a system's events");
		nev = get32(s + p);
		p += 4;
		for (uint32_t k = 0; k < nev; k++) {
			uint64_t sz;
			TD_NEED(8, "an event's format");
			sz = get64(s + p);
			p += 8;
			TD_NEED(sz, "an event's format");
			err = add_tp(r, sys, s + p, (size_t)sz);
			if (err)
				return err;
			p += (size_t)sz;
		}
	}
#undef TD_SKIP_BLOCK
#undef TD_NEED
	return 0;
}

/* --- attributes --- */

static int add_attr(struct tc_perfdata_reader *r, const unsigned char *a, size_t len)
{
	unsigned char buf[128];
	struct tc_pd_attr *na;
	uint64_t flags;

	if (r->nattrs == r->attrs_cap) {
		size_t nc = r->attrs_cap ? r->attrs_cap * 2 : 4;
		na = realloc(r->attrs, nc * sizeof(*na));
		if (!na)
			return -ENOMEM;
		r->attrs = na;
		r->attrs_cap = nc;
	}
	/* fields past the writer's attr size are zero, as the kernel reads them */
	memset(buf, 0, sizeof(buf));
	memcpy(buf, a, len < sizeof(buf) ? len : sizeof(buf));
	na = &r->attrs[r->nattrs++];
	memset(na, 0, sizeof(*na));
	na->type = get32(buf);
	na->config = get64(buf + 8);
	na->period = get64(buf + 16);
	na->sample_type = get64(buf + 24);
	na->read_format = get64(buf + 32);
	flags = get64(buf + 40);
	na->freq = flags & (1ull << 10);
	na->id_all = flags & (1ull << 18);
	na->bp_type = get32(buf + 52);
	na->branch_type = get64(buf + 72);
	na->regs_user = get64(buf + 80);
	na->regs_intr = get64(buf + 96);
	na->ev = -1;
	return 0;
}

/* Gives the sample ids of n u64 at ids (into the file) to attribute a. */
static int add_ids(struct tc_perfdata_reader *r, size_t a, const unsigned char *ids, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int err = tc_hmap_put(&r->ids, get64(ids + 8 * i), (uint32_t)a);
		if (err)
			return err;
	}
	return 0;
}

/* The attribute that sample id names; with a single attribute, that one. */
static struct tc_pd_attr *attr_of(struct tc_perfdata_reader *r, bool has_id, uint64_t id)
{
	uint32_t i;

	if (r->nattrs == 1)
		return &r->attrs[0];
	if (has_id && tc_hmap_get(&r->ids, id, &i) && i < r->nattrs)
		return &r->attrs[i];
	return NULL;
}

/* A name for an attribute no name came with (pipe mode without EVENT_UPDATE): perf's
 * for the generic events, else its type and config. */
static const char *attr_name(struct tc_perfdata_reader *r, const struct tc_pd_attr *a)
{
	const struct tc_pd_tp *tp;
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
		"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
		"bpf-output", "cgroup-switches",
	};
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references", "cache-misses", "branches",
		"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
		"ref-cycles",
	};

	if (a->name)
		return a->name;
	if (a->type == PERF_TYPE_SOFTWARE && a->config < sizeof(sw) / sizeof(sw[0]))
		return sw[a->config];
	if (a->type == PERF_TYPE_HARDWARE && a->config < sizeof(hw) / sizeof(hw[0]))
		return hw[a->config];
	tp = a->type == PERF_TYPE_TRACEPOINT ? find_tp(r, a->config) : NULL;
	if (tp && tp->name[0])
		return tp->name;   /* pipe mode without EVENT_UPDATE: the format's */
	if (a->type == PERF_TYPE_TRACEPOINT)
		snprintf(r->evname, sizeof(r->evname), "tracepoint:%" PRIu64, a->config);
	else
		snprintf(r->evname, sizeof(r->evname), "raw:%" PRIu32 ":0x%" PRIx64, a->type,
			 a->config);
	return r->evname;
}

/* The flags tacho's recorder gives the same event (lib/record/record.c). */
static uint32_t attr_flags(const struct tc_pd_attr *a)
{
	uint32_t f = 0;

	if (a->freq)
		f |= TC_EVF_FREQ;
	if (a->type == PERF_TYPE_BREAKPOINT && (a->bp_type & (HW_BREAKPOINT_R | HW_BREAKPOINT_W)))
		f |= TC_EVF_TRAP;
	if (a->sample_type & PERF_SAMPLE_ADDR)
		f |= TC_EVF_ADDR;
	if (a->sample_type & PERF_SAMPLE_CALLCHAIN)
		f |= TC_EVF_CALLCHAIN;
	return f;
}

/* perf's dummy event carries side-band records, never samples: not an event of the
 * report (it would be the first, and be reported, with no samples) */
static bool attr_is_dummy(const struct tc_pd_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY;
}

/* --- feature sections --- */

/* A perf_header_string at *pos of a section of len bytes: NUL-terminated within its
 * length. NULL when it is not. */
static const char *header_string(const unsigned char *s, size_t len, size_t *pos)
{
	uint32_t n;
	const char *str;

	if (len - *pos < 4)
		return NULL;
	n = get32(s + *pos);
	if (n == 0 || n > len - *pos - 4 || n > PD_NAME_MAX)
		return NULL;
	str = (const char *)s + *pos + 4;
	if (!memchr(str, 0, n))
		return NULL;
	*pos += 4 + (size_t)n;
	return str;
}

static int add_bid(struct tc_perfdata_reader *r, const unsigned char *rec, size_t size,
		   uint16_t misc, uint64_t off, const char *name, struct tacho_diag *diag)
{
	struct tc_pd_bid *b;
	const char *fn = (const char *)rec + 36;
	int32_t pid;

	if (size < 37 || !memchr(fn, 0, size - 36))
		return corrupt(diag, name, off, "a build-id record without its file name");
	if (r->nbids == r->bids_cap) {
		size_t nc = r->bids_cap ? r->bids_cap * 2 : 16;
		b = realloc(r->bids, nc * sizeof(*b));
		if (!b)
			return -ENOMEM;
		r->bids = b;
		r->bids_cap = nc;
	}
	b = &r->bids[r->nbids];
	memcpy(&pid, rec + 8, 4);
	b->name = fn;
	b->len = TC_BUILD_ID_MAX;
	if ((misc & PD_MISC_BUILD_ID_SIZE) && rec[12 + 20] <= TC_BUILD_ID_MAX)
		b->len = rec[12 + 20];
	memcpy(b->id, rec + 12, TC_BUILD_ID_MAX);
	/* the kernel's own ([kernel.kallsyms]) is written for pid -1 */
	b->kernel = pid == -1 && !strcmp(fn, "[kernel.kallsyms]");
	if (tc_hmap_add(&r->bid_idx, tc_hash_str(fn), (uint32_t)r->nbids))
		return -ENOMEM;
	r->nbids++;
	return 0;
}

static const struct tc_pd_bid *find_bid(const struct tc_perfdata_reader *r, const char *fn)
{
	size_t pos = 0;
	uint32_t i;

	while (tc_hmap_next(&r->bid_idx, tc_hash_str(fn), &pos, &i))
		if (i < r->nbids && !strcmp(r->bids[i].name, fn))
			return &r->bids[i];
	return NULL;
}

static int feat_build_id(struct tc_perfdata_reader *r, const unsigned char *s, size_t len,
			 uint64_t off, const char *name, struct tacho_diag *diag)
{
	size_t pos = 0;

	while (len - pos >= 8) {
		uint16_t misc, size;
		int err;

		memcpy(&misc, s + pos + 4, 2);
		memcpy(&size, s + pos + 6, 2);
		if (size < 8 || size > len - pos)
			return corrupt(diag, name, off + pos, "a build-id entry overruns its section");
		err = add_bid(r, s + pos, size, misc, off + pos, name, diag);
		if (err)
			return err;
		pos += size;
	}
	return 0;
}

static int feat_cmdline(struct tc_perfdata_reader *r, const unsigned char *s, size_t len,
			uint64_t off, const char *name, struct tacho_diag *diag)
{
	struct tc_sb sb;
	size_t pos = 4;
	uint32_t n;

	if (len < 4)
		return corrupt(diag, name, off, "a command line section of less than 4 bytes");
	n = get32(s);
	tc_sb_init(&sb);
	for (uint32_t i = 0; i < n; i++) {
		const char *arg = header_string(s, len, &pos);
		if (!arg) {
			tc_sb_exit(&sb);
			return corrupt(diag, name, off + pos, "a command line argument overruns "
				       "its section");
		}
		if (i)
			tc_sb_addc(&sb, ' ');
		tc_sb_adds(&sb, arg);
	}
	free(r->command);
	r->command = tc_sb_detach(&sb);
	return r->command ? 0 : -ENOMEM;
}

/* The attributes again, with their names and ids: the names are what it is read for */
static int feat_event_desc(struct tc_perfdata_reader *r, const unsigned char *s, size_t len,
			   uint64_t off, const char *name, struct tacho_diag *diag)
{
	size_t pos = 8;
	uint32_t n, asz;

	if (len < 8)
		return corrupt(diag, name, off, "an event description of less than 8 bytes");
	n = get32(s);
	asz = get32(s + 4);
	if (asz < PD_ATTR_MIN || asz > PD_ATTR_MAX)
		return corrupt(diag, name, off + 4, "an event description of a bad attribute size");
	for (uint32_t i = 0; i < n; i++) {
		const char *ev;
		uint32_t nids, k;
		struct tc_pd_attr *a = NULL;
		uint64_t id;

		if (len - pos < (size_t)asz + 4)
			return corrupt(diag, name, off + pos, "an event description overruns its "
				       "section");
		pos += asz;
		nids = get32(s + pos);
		pos += 4;
		ev = header_string(s, len, &pos);
		if (!ev || nids > (len - pos) / 8)
			return corrupt(diag, name, off + pos, "an event description overruns its "
				       "section");
		/* the attribute of the same ids (or the same place, without ids) */
		if (nids) {
			id = get64(s + pos);
			if (tc_hmap_get(&r->ids, id, &k) && k < r->nattrs)
				a = &r->attrs[k];
		} else if (i < r->nattrs && n == r->nattrs) {
			a = &r->attrs[i];
		}
		pos += 8 * (size_t)nids;
		if (a && !a->name && !(a->name = tc_strdup(ev)))
			return -ENOMEM;
	}
	return 0;
}

static int feature(struct tc_perfdata_reader *r, unsigned feat, const unsigned char *s,
		   size_t len, uint64_t off, const char *name, struct tacho_diag *diag)
{
	switch (feat) {
	case PD_FEAT_BUILD_ID:
		return feat_build_id(r, s, len, off, name, diag);
	case PD_FEAT_CMDLINE:
		return feat_cmdline(r, s, len, off, name, diag);
	case PD_FEAT_OSRELEASE: {
		size_t pos = 0;
		const char *rel = header_string(s, len, &pos);
		if (!rel)
			return corrupt(diag, name, off, "an OS release that overruns its section");
		free(r->osrelease);
		r->osrelease = tc_strdup(rel);
		return r->osrelease ? 0 : -ENOMEM;
	}
	case PD_FEAT_EVENT_DESC:
		return feat_event_desc(r, s, len, off, name, diag);
	case PD_FEAT_TRACING_DATA:
		return tracing_data(r, s, len, off, name, diag);
	default:
		/* hostname, CPU and memory descriptions and the rest: the report shows
		 * none of them */
		return 0;
	}
}

/* --- the header --- */

static int read_file_header(struct tc_perfdata_reader *r, const char *name,
			    struct tacho_diag *diag)
{
	const unsigned char *d = r->data;
	uint64_t asz, aoff, alen, doff, dlen, foff;
	unsigned nfeat = 0;
	int err;

	if (r->len < PD_FILE_HDR)
		return tc_diag_set(diag, name, 0, 0, -TACHO_ETRUNC, "perf.data of %zu bytes ends "
				   "inside its %d-byte header", r->len, PD_FILE_HDR);
	asz = get64(d + 16);
	aoff = get64(d + 24);
	alen = get64(d + 32);
	doff = get64(d + 40);
	dlen = get64(d + 48);
	if (asz < PD_ATTR_MIN + 16 || asz > PD_ATTR_MAX)
		return corrupt(diag, name, 16, "an attribute size out of range");
	if (aoff > r->len || alen > r->len - aoff || alen % asz)
		return corrupt(diag, name, 24, "the attribute section lies outside the file");
	for (uint64_t o = aoff; o < aoff + alen; o += asz) {
		uint64_t ioff = get64(d + o + asz - 16), ilen = get64(d + o + asz - 8);
		if (ioff > r->len || ilen > r->len - ioff || ilen % 8)
			return corrupt(diag, name, o + asz - 16, "an attribute's ids lie outside "
				       "the file");
		err = add_attr(r, d + o, asz - 16);
		if (!err)
			err = add_ids(r, r->nattrs - 1, d + ioff, ilen / 8);
		if (err)
			return err;
	}
	if (doff < PD_FILE_HDR || doff > r->len)
		return corrupt(diag, name, 40, "the data section lies outside the file");
	r->off = r->good_end = doff;
	if (dlen == 0 || dlen > r->len - doff) {
		/* perf writes the data size when it ends: a recording killed before has
		 * none (its records run to the end of the file), one cut short a size
		 * past the end */
		r->end = r->len;
		r->truncated = true;
		return 0;
	}
	r->end = doff + dlen;
	/* the feature sections' table follows the data; one entry per bit set */
	foff = r->end;
	for (unsigned b = 0; b < PD_FEAT_BITS; b++) {
		uint64_t so, sl;
		if (!(d[72 + b / 8] & (1u << (b % 8))))
			continue;
		if (r->len - foff < 16 * ((uint64_t)nfeat + 1))
			return corrupt(diag, name, foff + 16 * nfeat, "the feature table runs past "
				       "the end of the file");
		so = get64(d + foff + 16 * nfeat);
		sl = get64(d + foff + 16 * nfeat + 8);
		nfeat++;
		if (so > r->len || sl > r->len - so)
			return corrupt(diag, name, foff + 16 * (nfeat - 1), "a feature section lies "
				       "outside the file");
		err = feature(r, b, d + so, (size_t)sl, so, name, diag);
		if (err)
			return err;
	}
	return 0;
}

/* Whether the kernel that made the recording is the one running, at the same place:
 * its build-id (from the file; its release where perf wrote no build-id, as in pipe
 * mode) is the running kernel's, and its text starts where /proc/kallsyms says _text
 * is (the place changes with each boot under KASLR). Only then are this machine's
 * kernel symbols the recording's. */
static bool same_kernel(const struct tc_perfdata_reader *r)
{
	const struct tc_pd_bid *kb = NULL;
	unsigned char notes[4096];
	char line[256];
	size_t n, pos = 0;
	FILE *f;
	bool bid_ok = false, text_ok = false;

	for (size_t i = 0; i < r->nbids && !kb; i++)
		if (r->bids[i].kernel)
			kb = &r->bids[i];
	if (!r->ktext)
		return false;
	if (!kb) {
		struct utsname u;
		if (!r->osrelease || uname(&u) || strcmp(u.release, r->osrelease))
			return false;
		bid_ok = true;
		goto text;
	}
	f = fopen("/sys/kernel/notes", "rb");
	if (!f)
		return false;
	n = fread(notes, 1, sizeof(notes), f);
	fclose(f);
	/* ELF notes: namesz, descsz, type, then the name and the descriptor, 4-aligned */
	while (n - pos >= 12 && !bid_ok) {
		uint32_t nsz = get32(notes + pos), dsz = get32(notes + pos + 4);
		uint32_t type = get32(notes + pos + 8);
		size_t an = (nsz + 3u) & ~3u, ad = (dsz + 3u) & ~3u;
		if (nsz > 64 || dsz > 1024 || 12 + an + ad > n - pos)
			break;
		if (type == 3 && nsz == 4 && !memcmp(notes + pos + 12, "GNU", 4))
			bid_ok = dsz >= kb->len && !memcmp(notes + pos + 12 + an, kb->id, kb->len);
		pos += 12 + an + ad;
	}
	if (!bid_ok)
		return false;
text:
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	/* _text is among the first lines (after the per-CPU symbols at 0) */
	for (unsigned i = 0; i < 100000 && fgets(line, sizeof(line), f); i++) {
		unsigned long long a;
		char t, sym[200];
		if (sscanf(line, "%llx %c %199s", &a, &t, sym) == 3 && !strcmp(sym, "_text")) {
			text_ok = a == r->ktext;
			break;
		}
	}
	fclose(f);
	return text_ok;
}

int tc_perfdata_reader_init(struct tc_perfdata_reader *r, const void *data, size_t len,
			    const char *name, struct tacho_diag *diag)
{
	memset(r, 0, sizeof(*r));
	r->data = data;
	r->len = len;
	tc_sb_init(&r->meta);
	if (len >= 8 && !memcmp(data, PD_MAGIC_SWAPPED, 8))
		return tc_diag_set(diag, name, 0, 0, -TACHO_EVERSION, "perf.data of the other "
				   "byte order (recorded on another architecture): not read");
	if (len < 8 || memcmp(data, PD_MAGIC, 8))
		return corrupt(diag, name, 0, "no PERFILE2 magic");
	if (len < PD_PIPE_HDR)
		return tc_diag_set(diag, name, 0, 0, -TACHO_ETRUNC, "perf.data of %zu bytes ends "
				   "inside its header", len);
	if (get64(r->data + 8) == PD_PIPE_HDR) {
		/* pipe mode: everything, attributes and features too, comes as records */
		r->pipe = true;
		r->off = r->good_end = PD_PIPE_HDR;
		r->end = len;
		return 0;
	}
	if (get64(r->data + 8) != PD_FILE_HDR)
		return corrupt(diag, name, 8, "a header size that is neither perf's file nor "
			       "pipe header");
	return read_file_header(r, name, diag);
}

void tc_perfdata_reader_exit(struct tc_perfdata_reader *r)
{
	for (size_t i = 0; i < r->nattrs; i++)
		free(r->attrs[i].name);
	free(r->attrs);
	free(r->bids);
	free(r->command);
	free(r->osrelease);
	free(r->tps);
	tc_hmap_exit(&r->ids);
	tc_hmap_exit(&r->bid_idx);
	tc_sb_exit(&r->meta);
	memset(r, 0, sizeof(*r));
}

/* --- records --- */

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
		a = attr_of(r, true, get64(rec + size - 8));
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

/* Decodes a SAMPLE of size bytes at rec by its attribute's sample_type, stepping over
 * what the report does not use by its exact size. */
static int decode_sample(struct tc_perfdata_reader *r, const unsigned char *rec, size_t size,
			 uint64_t off, struct tc_rec *out, const char *name, struct tacho_diag *diag)
{
	const struct tc_pd_attr *a;
	const unsigned char *raw = NULL;
	struct tc_rec us;
	uint64_t st, id = 0;
	bool has_id = false;
	size_t p = 8;
	uint32_t raw_len = 0;
	uint16_t misc;

#define NEED(n, what)                                                                      \
	do {                                                                               \
		if ((uint64_t)(n) > size - p)                                              \
			return corrupt(diag, name, off + p, "a sample ends inside its " what); \
	} while (0)

	if (!r->nattrs)
		return corrupt(diag, name, off, "a sample before any event attribute");
	/* which event: by its id, found where the first attribute's layout puts it */
	st = r->attrs[0].sample_type;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(8, "identifier");
		id = get64(rec + 8);
		has_id = true;
	} else if (st & PERF_SAMPLE_ID) {
		size_t ip = 8 + 8 * (!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) +
				     !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR));
		if (size >= ip + 8) {
			id = get64(rec + ip);
			has_id = true;
		}
	}
	a = attr_of(r, has_id, id);
	if (!a)
		return corrupt(diag, name, off, "a sample of an id no event attribute has");
	if (a->ev < 0)
		return corrupt(diag, name, off, "a sample of perf's dummy event");
	st = a->sample_type;
	memcpy(&misc, rec + 4, 2);
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_SAMPLE;
	out->offset = off;
	out->u.sample.event = (uint16_t)a->ev;
	out->u.sample.misc = misc;
	out->u.sample.period = a->freq ? 1 : a->period;
	/* a CPU the file does not have is unknown, not CPU 0: perf record samples it only
	 * with -a, -C or --sample-cpu (perf report shows -1 then, as the report does) */
	out->u.sample.cpu = TC_CPU_UNKNOWN;
	if (st & PERF_SAMPLE_IDENTIFIER) {
		NEED(8, "identifier");
		p += 8;
	}
	if (st & PERF_SAMPLE_IP) {
		NEED(8, "IP");
		out->u.sample.ip = get64(rec + p);
		p += 8;
	}
	if (st & PERF_SAMPLE_TID) {
		NEED(8, "pid and tid");
		out->u.sample.pid = get32(rec + p);
		out->u.sample.tid = get32(rec + p + 4);
		p += 8;
	}
	if (st & PERF_SAMPLE_TIME) {
		NEED(8, "time");
		out->u.sample.time = get64(rec + p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ADDR) {
		NEED(8, "address");
		out->u.sample.addr = get64(rec + p);
		p += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		NEED(8, "id");
		p += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		NEED(8, "stream id");
		p += 8;
	}
	if (st & PERF_SAMPLE_CPU) {
		NEED(8, "CPU");
		out->u.sample.cpu = get32(rec + p);
		p += 8;
	}
	if (st & PERF_SAMPLE_PERIOD) {
		NEED(8, "period");
		out->u.sample.period = get64(rec + p);
		p += 8;
	}
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = a->read_format, per, n;
		unsigned t = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			     !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
		per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & (1u << 4) /* PERF_FORMAT_LOST */);
		if (rf & PERF_FORMAT_GROUP) {
			NEED(8, "read values");
			n = get64(rec + p);
			p += 8;
			NEED(8 * t, "read values");
			p += 8 * t;
			if (n > (size - p) / 8 / per)
				return corrupt(diag, name, off + p, "a sample ends inside its "
					       "read values");
			p += 8 * per * n;
		} else {
			NEED(8 * (per + t), "read value");
			p += 8 * (per + t);
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr;
		NEED(8, "call chain");
		nr = get64(rec + p);
		p += 8;
		if (nr > (size - p) / 8 || nr > UINT32_MAX)
			return corrupt(diag, name, off + p, "a sample ends inside its call chain");
		out->u.sample.nr = (uint32_t)nr;
		/* points into the file, as tacho's own chains do (read with memcpy) */
		out->u.sample.chain = nr ? (const uint64_t *)(const void *)(rec + p) : NULL;
		p += 8 * nr;
	}
	if (st & PERF_SAMPLE_RAW) {
		NEED(4, "raw data");
		raw_len = get32(rec + p);
		p += 4;
		NEED(raw_len, "raw data");
		raw = rec + p;
		p += raw_len;
	}
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t nr, per = 24 + (a->branch_type & PD_BRANCH_COUNTERS ? 8 : 0);
		NEED(8, "branch stack");
		nr = get64(rec + p);
		p += 8;
		if (a->branch_type & PD_BRANCH_HW_INDEX) {
			NEED(8, "branch stack");
			p += 8;
		}
		if (nr > (size - p) / per)
			return corrupt(diag, name, off + p, "a sample ends inside its branch stack");
		p += per * nr;
	}
	/* perf record --call-graph dwarf: the user registers and a copy of the stack,
	 * which the report unwinds as it does tacho's own (a USTACK record after the
	 * sample, pointing into the file) */
	memset(&us, 0, sizeof(us));
	if (st & PERF_SAMPLE_REGS_USER) {
		NEED(8, "user registers");
		us.u.ustack.abi = get64(rec + p);
		p += 8;
		if (us.u.ustack.abi) {
			size_t n = (size_t)__builtin_popcountll(a->regs_user);
			NEED(8 * n, "user registers");
			us.u.ustack.mask = a->regs_user;
			us.u.ustack.nregs = (uint32_t)n;
			us.u.ustack.regs = (const uint64_t *)(const void *)(rec + p);
			p += 8 * n;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t n, dyn;
		NEED(8, "user stack");
		n = get64(rec + p);
		p += 8;
		NEED(n, "user stack");
		us.u.ustack.stack = rec + p;
		p += n;
		if (n) {
			NEED(8, "user stack");
			/* the bytes the kernel could copy, of the n it reserved */
			dyn = get64(rec + p);
			us.u.ustack.stack_len = (uint32_t)(dyn < n ? dyn : n);
			p += 8;
		}
	}
	/* weight, data source, transaction, then the interrupt registers, then more
	 * single words: only their sizes matter here */
	p += 8 * (size_t)(!!(st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) +
			  !!(st & PERF_SAMPLE_DATA_SRC) + !!(st & PERF_SAMPLE_TRANSACTION));
	if (p > size)
		return corrupt(diag, name, off + size, "a sample ends inside its weight");
	if (st & PERF_SAMPLE_REGS_INTR) {
		NEED(8, "interrupt registers");
		if (get64(rec + p)) {
			p += 8;
			NEED(8 * __builtin_popcountll(a->regs_intr), "interrupt registers");
			p += 8 * (size_t)__builtin_popcountll(a->regs_intr);
		} else {
			p += 8;
		}
	}
	if (st & PERF_SAMPLE_PHYS_ADDR) {
		NEED(8, "physical address");
		p += 8;
	}
	p += 8 * (size_t)(!!(st & PERF_SAMPLE_CGROUP) + !!(st & PERF_SAMPLE_DATA_PAGE_SIZE) +
			  !!(st & PERF_SAMPLE_CODE_PAGE_SIZE));
	if (p > size)
		return corrupt(diag, name, off + size, "a sample is shorter than its fields");
	/* the kernel writes the AUX data last (perf_output_sample) */
	if (st & PERF_SAMPLE_AUX) {
		uint64_t n;
		NEED(8, "AUX data");
		n = get64(rec + p);
		p += 8;
		NEED(n, "AUX data");
		p += n;
	}
#undef NEED
	/* the payload right after its sample, as tacho's recorder writes it (the
	 * report ties a RAW record to the sample just before) */
	r->nqueued = r->iqueued = 0;
	if (a->raw && raw_len) {
		struct tc_rec *q = &r->queue[r->nqueued++];
		memset(q, 0, sizeof(*q));
		q->type = TC_REC_RAW;
		q->offset = off;
		q->u.raw.event = (uint32_t)a->ev;
		q->u.raw.data = raw;
		q->u.raw.size = raw_len;
	}
	if (us.u.ustack.nregs && us.u.ustack.stack_len) {
		us.type = TC_REC_USTACK;
		us.offset = off;
		r->queue[r->nqueued++] = us;
	}
	return 1;
}

/* An MMAP or MMAP2 record as tacho's (executable mappings only, as tacho records);
 * 0 for one the report does not use. */
static int decode_mmap(struct tc_perfdata_reader *r, const unsigned char *rec, size_t size,
		       uint32_t type, uint64_t off, struct tc_rec *out, const char *name,
		       struct tacho_diag *diag)
{
	size_t fo = type == PERF_RECORD_MMAP ? 40 : 72;
	const char *fn = (const char *)rec + fo;
	const char *nul;
	uint16_t misc;
	uint32_t prot = PROT_EXEC | PROT_READ;

	if (size <= fo || !(nul = memchr(fn, 0, size - fo)))
		return corrupt(diag, name, off, "a mapping record without its file name");
	memcpy(&misc, rec + 4, 2);
	if (type == PERF_RECORD_MMAP2)
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
	out->offset = off;
	out->u.mmap.pid = get32(rec + 8);
	out->u.mmap.tid = get32(rec + 12);
	out->u.mmap.start = get64(rec + 16);
	out->u.mmap.len = get64(rec + 24);
	out->u.mmap.pgoff = get64(rec + 32);
	out->u.mmap.prot = prot;
	out->u.mmap.filename = fn;
	out->u.mmap.time = id_all_time(r, rec, size, ((size_t)(nul - (const char *)rec) + 8) & ~7u);
	if (type == PERF_RECORD_MMAP2) {
		out->u.mmap.flags = get32(rec + 68);
		if ((misc & PD_MISC_MMAP_BUILD_ID) && rec[40] <= TC_BUILD_ID_MAX) {
			out->u.mmap.build_id_size = rec[40];
			memcpy(out->u.mmap.build_id, rec + 44, rec[40]);
			return 1;
		}
	}
	/* the build-id perf wrote for the file when it ended (the files it sampled) */
	{
		const struct tc_pd_bid *b = find_bid(r, fn);
		if (b) {
			out->u.mmap.build_id_size = b->len;
			memcpy(out->u.mmap.build_id, b->id, b->len);
		}
	}
	return 1;
}

/* Pipe mode's header records: the attributes, names, features and build-ids. */
static int header_record(struct tc_perfdata_reader *r, const unsigned char *rec, size_t size,
			 uint32_t type, uint16_t misc, uint64_t off, const char *name,
			 struct tacho_diag *diag)
{
	switch (type) {
	case PD_HEADER_ATTR: {
		uint32_t asz;
		int err;
		if (size < 8 + PD_ATTR_MIN)
			return corrupt(diag, name, off, "an attribute record shorter than an "
				       "attribute");
		asz = get32(rec + 8 + 4);
		if (asz < PD_ATTR_MIN || asz > size - 8 || (size - 8 - asz) % 8)
			return corrupt(diag, name, off, "an attribute record of a bad size");
		err = add_attr(r, rec + 8, asz);
		if (!err)
			err = add_ids(r, r->nattrs - 1, rec + 8 + asz, (size - 8 - asz) / 8);
		return err;
	}
	case PD_EVENT_UPDATE: {
		uint32_t i;
		if (size < 24)
			return corrupt(diag, name, off, "an event update shorter than its header");
		if (get64(rec + 8) != PD_EVENT_UPDATE_NAME)
			return 0;
		if (size < 25 || !memchr(rec + 24, 0, size - 24))
			return corrupt(diag, name, off, "an event name without its end");
		if (tc_hmap_get(&r->ids, get64(rec + 16), &i) && i < r->nattrs) {
			free(r->attrs[i].name);
			r->attrs[i].name = tc_strdup((const char *)rec + 24);
			if (!r->attrs[i].name)
				return -ENOMEM;
		}
		return 0;
	}
	case PD_HEADER_FEATURE:
		if (size < 16)
			return corrupt(diag, name, off, "a feature record shorter than its header");
		if (get64(rec + 8) >= PD_FEAT_BITS)
			return 0;
		return feature(r, (unsigned)get64(rec + 8), rec + 16, size - 16, off + 16, name,
			       diag);
	case PD_HEADER_BUILD_ID:
		return add_bid(r, rec, size, misc, off, name, diag);
	default:
		return 0;
	}
}

/* The EVENT record of the next attribute; false when every one was. */
static bool next_event(struct tc_perfdata_reader *r, struct tc_rec *out)
{
	const struct tc_pd_tp *tp;

	while (r->announced < r->nattrs) {
		struct tc_pd_attr *a = &r->attrs[r->announced++];
		if (attr_is_dummy(a))
			continue;
		a->ev = r->nev++;
		memset(out, 0, sizeof(*out));
		out->type = TC_REC_EVENT;
		out->offset = 0;
		out->u.event.index = (uint32_t)a->ev;
		out->u.event.type = a->type;
		out->u.event.flags = attr_flags(a);
		out->u.event.config = a->config;
		out->u.event.sample_type = a->sample_type;
		out->u.event.period = a->period;
		out->u.event.name = attr_name(r, a);
		/* a tracepoint's format, for its samples' payloads */
		tp = a->type == PERF_TYPE_TRACEPOINT && (a->sample_type & PERF_SAMPLE_RAW) ?
			     find_tp(r, a->config) : NULL;
		r->nqueued = r->iqueued = 0;
		if (tp) {
			struct tc_rec *q = &r->queue[r->nqueued++];
			a->raw = true;
			out->u.event.flags |= TC_EVF_RAW;
			memset(q, 0, sizeof(*q));
			q->type = TC_REC_TPFORMAT;
			q->u.tpformat.event = (uint32_t)a->ev;
			q->u.tpformat.text = tp->text;
			q->u.tpformat.len = tp->len;
		}
		return true;
	}
	return false;
}

static void meta(struct tc_perfdata_reader *r, struct tc_rec *out)
{
	char bid[64] = "";

	r->meta_done = true;
	tc_sb_reset(&r->meta);
	if (r->command) {
		tc_sb_add(&r->meta, "command", 8);
		tc_sb_add(&r->meta, r->command, strlen(r->command) + 1);
	}
	/* kernel symbols are this machine's: a report trusts them for the boot that
	 * made the recording, which here means the same kernel at the same place */
	if (same_kernel(r) &&
	    tc_read_line_file("/proc/sys/kernel/random/boot_id", bid, sizeof(bid)) == 0) {
		tc_sb_add(&r->meta, "boot_id", 8);
		tc_sb_add(&r->meta, bid, strlen(bid) + 1);
	}
	memset(out, 0, sizeof(*out));
	out->type = TC_REC_META;
	out->u.meta.data = r->meta.buf;
	out->u.meta.len = r->meta.len;
}

int tc_perfdata_reader_next(struct tc_perfdata_reader *r, struct tc_rec *out, const char *name,
			    struct tacho_diag *diag)
{
	if (r->iqueued < r->nqueued) {
		*out = r->queue[r->iqueued++];
		return 1;
	}
	for (;;) {
		const unsigned char *rec;
		uint32_t type;
		uint16_t misc, size;
		uint64_t off = r->off, extra = 0;
		int ret;

		if (off >= r->end || r->end - off < 8) {
			/* the file's words come last: whether the kernel is this one is
			 * known once its mapping was read */
			if (next_event(r, out))
				return 1;
			if (!r->meta_done) {
				meta(r, out);
				return 1;
			}
			if (off < r->end)
				r->truncated = true;
			r->finished = !r->truncated;
			return 0;
		}
		rec = r->data + off;
		type = get32(rec);
		memcpy(&misc, rec + 4, 2);
		memcpy(&size, rec + 6, 2);
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
		if (type < PD_HEADER_ATTR && next_event(r, out))
			return 1;
		if (type == PD_HEADER_TRACING_DATA || type == PD_AUXTRACE) {
			/* their data follows the record, outside its size, 8-aligned */
			uint64_t n = type == PD_AUXTRACE ? (size >= 16 ? get64(rec + 8) : 0)
							 : (size >= 12 ? get32(rec + 8) : 0);
			extra = (n + 7) & ~7ull;
			if (extra > r->end - off - size) {
				r->truncated = true;
				r->end = off;
				continue;
			}
		}
		if (type == PD_COMPRESSED)
			return tc_diag_set(diag, name, 0, 0, -TACHO_EVERSION, "perf.data at byte "
					   "%" PRIu64 ": compressed records (perf record -z) are not "
					   "read; record without -z", off);
		r->off = off + size + extra;
		r->good_end = r->off;
		ret = 0;
		switch (type) {
		case PERF_RECORD_SAMPLE:
			ret = decode_sample(r, rec, size, off, out, name, diag);
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			ret = decode_mmap(r, rec, size, type, off, out, name, diag);
			break;
		case PERF_RECORD_COMM: {
			const char *nul;
			if (size <= 16 || !(nul = memchr(rec + 16, 0, size - 16)))
				return corrupt(diag, name, off, "a COMM record without its name");
			memset(out, 0, sizeof(*out));
			out->type = TC_REC_COMM;
			out->offset = off;
			out->u.comm.pid = get32(rec + 8);
			out->u.comm.tid = get32(rec + 12);
			out->u.comm.exec = !!(misc & PERF_RECORD_MISC_COMM_EXEC);
			out->u.comm.comm = (const char *)rec + 16;
			out->u.comm.time = id_all_time(r, rec, size,
						       ((size_t)(nul - (const char *)rec) + 8) & ~7u);
			ret = 1;
			break;
		}
		case PERF_RECORD_FORK:
		case PERF_RECORD_EXIT:
			if (size < 32)
				return corrupt(diag, name, off, "a FORK or EXIT record of less than "
					       "32 bytes");
			memset(out, 0, sizeof(*out));
			out->type = TC_REC_TASK;
			out->offset = off;
			out->u.task.kind = type == PERF_RECORD_FORK ? TC_TASK_FORK : TC_TASK_EXIT;
			out->u.task.pid = get32(rec + 8);
			out->u.task.ppid = get32(rec + 12);
			out->u.task.tid = get32(rec + 16);
			out->u.task.ptid = get32(rec + 20);
			out->u.task.time = get64(rec + 24);
			ret = 1;
			break;
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES: {
			size_t at = type == PERF_RECORD_LOST ? 16 : 8;
			if (size < at + 8)
				return corrupt(diag, name, off, "a LOST record without its count");
			memset(out, 0, sizeof(*out));
			out->type = TC_REC_LOST;
			out->offset = off;
			out->u.lost.lost = get64(rec + at);
			ret = 1;
			break;
		}
		case PERF_RECORD_THROTTLE:
		case PERF_RECORD_UNTHROTTLE:
			if (size < 32)
				return corrupt(diag, name, off, "a THROTTLE record of less than 32 "
					       "bytes");
			memset(out, 0, sizeof(*out));
			out->type = TC_REC_THROTTLE;
			out->offset = off;
			out->u.throttle.time = get64(rec + 8);
			out->u.throttle.throttled = type == PERF_RECORD_THROTTLE;
			ret = 1;
			break;
		case PD_HEADER_TRACING_DATA:
			/* pipe mode: the tracing data follows the record (n bytes, checked
			 * above) */
			if (size < 12)
				return corrupt(diag, name, off, "a tracing data record shorter than "
					       "its header");
			ret = tracing_data(r, rec + size, get32(rec + 8), off + size, name, diag);
			if (ret < 0)
				return ret;
			ret = 0;
			break;
		case PD_HEADER_ATTR:
		case PD_EVENT_UPDATE:
		case PD_HEADER_FEATURE:
		case PD_HEADER_BUILD_ID:
			ret = header_record(r, rec, size, type, misc, off, name, diag);
			if (ret < 0)
				return ret;
			ret = 0;
			break;
		default:
			/* KSYMBOL, BPF_EVENT, switches, namespaces, cgroups, FINISHED_ROUND,
			 * the maps of CPUs and threads, and types newer than this reader:
			 * nothing a report view shows (the kernel's symbols come from
			 * /proc/kallsyms) */
			r->skipped++;
			break;
		}
		if (ret)
			return ret;
	}
}
