/* perfdata-int.h - what the two halves of the perf.data reader share: perfdata.c reads
 * the header (the attributes, their ids, the feature sections, the tracing data) and
 * yields what it says as tacho's records (an EVENT per attribute, the META);
 * perfdata-records.c decodes the data section, one decoder per record type. Private
 * to lib/report; the contract is perfdata.h. */
#ifndef TACHO_REPORT_PERFDATA_INT_H
#define TACHO_REPORT_PERFDATA_INT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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
	PD_COMPRESSED2 = 83,          /* perf 6.x: with data_size, padded to 8 bytes */
};

/* feature bits of the file header and of PERF_RECORD_HEADER_FEATURE */
enum {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_COMPRESSED = 27,
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

static inline uint64_t get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline int corrupt(struct tacho_diag *diag, const char *name, uint64_t off,
			  const char *what)
{
	return tc_diag_set(diag, name, 0, 0, -TACHO_ECORRUPT,
			   "corrupt perf.data at byte %" PRIu64 ": %s", off, what);
}

/* The attribute that sample id names; with a single attribute, that one. */
static inline struct tc_pd_attr *tc_pd_attr_of(struct tc_perfdata_reader *r, bool has_id,
					       uint64_t id)
{
	uint32_t i;

	if (r->nattrs == 1)
		return &r->attrs[0];
	if (has_id && tc_hmap_get(&r->ids, id, &i) && i < r->nattrs)
		return &r->attrs[i];
	return NULL;
}

/* An inflated COMPRESSED record: its bytes follow, 8-aligned as records need. */
struct tc_pd_zchunk {
	struct tc_pd_zchunk *next;
	_Alignas(8) unsigned char data[];
};

/* --- perfdata-zstd.c --- */
/* Inflates a COMPRESSED record's payload, n bytes at src (the record at byte off),
 * into a new chunk after the partial record r's last chunk ended with; r->zdata then
 * holds the records. 0, -ENOMEM, -TACHO_EVERSION (libzstd missing, not zstd) or
 * -TACHO_ECORRUPT with *diag. */
int tc_pd_inflate(struct tc_perfdata_reader *r, const unsigned char *src, size_t n,
		  uint64_t off, const char *name, struct tacho_diag *diag);
void tc_pd_zstd_exit(struct tc_perfdata_reader *r);

/* --- perfdata.c --- */
/* perf's tracing data (trace-cmd's layout): the tracepoints' formats are kept. s is
 * len bytes at byte off of the file. 0, -ENOMEM or -TACHO_ECORRUPT with *diag. */
int tc_pd_tracing_data(struct tc_perfdata_reader *r, const unsigned char *s, size_t len,
		       uint64_t off, const char *name, struct tacho_diag *diag);
/* An attribute of len bytes at a (a file's, or pipe mode's HEADER_ATTR's): 0 or -ENOMEM. */
int tc_pd_add_attr(struct tc_perfdata_reader *r, const unsigned char *a, size_t len);
/* Gives the sample ids of n u64 at ids (into the file) to attribute a. */
int tc_pd_add_ids(struct tc_perfdata_reader *r, size_t a, const unsigned char *ids, uint64_t n);
/* Feature section feat (a PD_FEAT_* bit), len bytes at s, byte off of the file: those
 * the report uses are read, the others stepped over. 0, -ENOMEM, or -TACHO_ECORRUPT
 * with *diag. */
int tc_pd_feature(struct tc_perfdata_reader *r, unsigned feat, const unsigned char *s,
		  size_t len, uint64_t off, const char *name, struct tacho_diag *diag);
/* A build-id record of size bytes at rec (the BUILD_ID feature's, or pipe mode's
 * HEADER_BUILD_ID). 0, -ENOMEM, or -TACHO_ECORRUPT with *diag. */
int tc_pd_add_bid(struct tc_perfdata_reader *r, const unsigned char *rec, size_t size,
		  uint16_t misc, uint64_t off, const char *name, struct tacho_diag *diag);
/* The build-id perf wrote for file fn, or NULL. */
const struct tc_pd_bid *tc_pd_find_bid(const struct tc_perfdata_reader *r, const char *fn);
/* The EVENT record of the next attribute (a TPFORMAT queued after it for a tracepoint
 * whose format the file holds); false when every one was. */
bool tc_pd_next_event(struct tc_perfdata_reader *r, struct tc_rec *out);
/* The META record: perf's command line, and the boot_id when the kernel is this one. */
void tc_pd_meta(struct tc_perfdata_reader *r, struct tc_rec *out);

#endif
