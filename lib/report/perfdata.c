/* perfdata.c - reading perf's perf.data (tools/perf/Documentation/perf.data-file-format.txt,
 * file and pipe mode) as the records of tacho's own recording: the report then gives
 * every view of a perf recording with the code that reads its own. This file reads the
 * header (the attributes and their ids, the feature sections, the tracing data) and
 * yields what it says as records (an EVENT per attribute, the META); the records of the
 * data section are perfdata-records.c's. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>

#include "report/perfdata-int.h"

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
int tc_pd_tracing_data(struct tc_perfdata_reader *r, const unsigned char *s, size_t len,
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

int tc_pd_add_attr(struct tc_perfdata_reader *r, const unsigned char *a, size_t len)
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
int tc_pd_add_ids(struct tc_perfdata_reader *r, size_t a, const unsigned char *ids, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int err = tc_hmap_put(&r->ids, get64(ids + 8 * i), (uint32_t)a);
		if (err)
			return err;
	}
	return 0;
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

/* The flags tacho's recorder gives the same event (lib/record/record-open.c). */
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

int tc_pd_add_bid(struct tc_perfdata_reader *r, const unsigned char *rec, size_t size,
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

const struct tc_pd_bid *tc_pd_find_bid(const struct tc_perfdata_reader *r, const char *fn)
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
		err = tc_pd_add_bid(r, s + pos, size, misc, off + pos, name, diag);
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

int tc_pd_feature(struct tc_perfdata_reader *r, unsigned feat, const unsigned char *s,
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
		return tc_pd_tracing_data(r, s, len, off, name, diag);
	case PD_FEAT_COMPRESSED:
		/* version, type, level, ratio, mmap_len: u32 each */
		if (len < 20)
			return corrupt(diag, name, off, "a compression section shorter than its "
				       "20 bytes");
		r->ztype = get32(s + 4);
		r->zmmap_len = get32(s + 16);
		return 0;
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
		err = tc_pd_add_attr(r, d + o, asz - 16);
		if (!err)
			err = tc_pd_add_ids(r, r->nattrs - 1, d + ioff, ilen / 8);
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
		err = tc_pd_feature(r, b, d + so, (size_t)sl, so, name, diag);
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
	tc_pd_zstd_exit(r);
	memset(r, 0, sizeof(*r));
}

/* --- the header's records: an EVENT per attribute, the META --- */

/* The EVENT record of the next attribute; false when every one was. */
bool tc_pd_next_event(struct tc_perfdata_reader *r, struct tc_rec *out)
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

void tc_pd_meta(struct tc_perfdata_reader *r, struct tc_rec *out)
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
