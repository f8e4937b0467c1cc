/* perfdata.h - a reader of perf's perf.data (file and pipe mode) that yields the records
 * of tacho's own recording (struct tc_rec), so that every report view reads it
 * unchanged (docs/report.md, "Reading perf.data"). */
#ifndef TACHO_REPORT_PERFDATA_H
#define TACHO_REPORT_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/recfile.h"
#include "util/util.h"

struct tc_pd_attr;
struct tc_pd_bid;
struct tc_pd_tp;
struct tc_pd_zchunk;

struct tc_perfdata_reader {
	const unsigned char *data;
	size_t len;
	uint64_t off, end;            /* the next record, the end of the data section */
	bool pipe;                    /* pipe mode: the attributes come as records */
	struct tc_pd_attr *attrs;
	size_t nattrs, attrs_cap;
	size_t announced;             /* attrs whose EVENT record was yielded */
	uint32_t nev;                 /* events yielded (dummy events are not) */
	struct tc_hmap ids;           /* sample id -> attrs index */
	struct tc_pd_bid *bids;       /* build-ids by file name (the BUILD_ID feature) */
	size_t nbids, bids_cap;
	struct tc_hmap bid_idx;       /* tc_hash_str(name) -> bids */
	char *command;                /* perf's command line (CMDLINE), or NULL */
	char *osrelease;              /* the kernel's release (OSRELEASE), or NULL */
	uint64_t ktext;               /* where the file's kernel text starts (0: unknown) */
	struct tc_sb meta;            /* the META record's payload, while it is read */
	bool meta_done;
	char evname[96];              /* a name made from an attribute, while it is read */
	bool finished;                /* the data section ends with a whole record */
	bool truncated;               /* it ends inside a record, or the file before it */
	uint64_t good_end;            /* offset just past the last whole record */
	uint64_t skipped;             /* records stepped over (types a report does not use) */
	struct tc_pd_tp *tps;         /* tracepoint formats (the tracing data), or NULL */
	size_t ntps, tps_cap;
	struct tc_rec queue[2];       /* records to yield before the next of the file: */
	unsigned nqueued, iqueued;    /* a sample's RAW and USTACK, an event's TPFORMAT */
	/* perf record -z: the records inflated from the last COMPRESSED record */
	const unsigned char *zdata;   /* zlen bytes, the next record at zpos */
	size_t zlen, zpos;
	uint64_t zoff;                /* the COMPRESSED record's byte offset in the file */
	struct tc_pd_zchunk *zchunks; /* every chunk inflated, kept until the reader ends */
	void *zstream;                /* zstd's decoder, one stream for the session */
	uint32_t ztype;               /* HEADER_COMPRESSED's method (1: zstd), 0: not said */
	uint32_t zmmap_len;           /* and its mmap_len: the most one record inflates to */
};

/* Whether len bytes at data begin with perf.data's magic "PERFILE2", in either byte
 * order (the other one is refused by tc_perfdata_reader_init, with its reason). */
bool tc_perfdata_is(const void *data, size_t len);
/* Reads the header of a perf.data of len bytes at data (not copied; keep it alive):
 * the attributes and their ids, and the feature sections (build-ids, command line,
 * event names, the tracepoints' formats) in file mode. 0, -ENOMEM, or -TACHO_ECORRUPT /
 * -TACHO_ETRUNC with *diag naming the byte offset (source = name). Free with
 * tc_perfdata_reader_exit whatever it returns. */
int tc_perfdata_reader_init(struct tc_perfdata_reader *r, const void *data, size_t len,
			    const char *name, struct tacho_diag *diag);
/* Decodes the next record as tacho's: 1 and *out, 0 at the end (r->truncated says
 * whether the data ended inside a record), or -TACHO_ECORRUPT / -ENOMEM with *diag
 * naming the byte offset. One EVENT per reported attribute comes before any record
 * of the kernel, each followed by a TPFORMAT when it is a tracepoint whose format the
 * file holds (perf's tracing data); a sample of such an event is followed by its RAW
 * payload. The META record (command, and boot_id when the kernel is this one) comes
 * last. Pointers in *out point into data or into the reader (names made here: until
 * the next call; the META payload: until tc_perfdata_reader_exit). */
int tc_perfdata_reader_next(struct tc_perfdata_reader *r, struct tc_rec *out, const char *name,
			    struct tacho_diag *diag);
void tc_perfdata_reader_exit(struct tc_perfdata_reader *r);

#endif
