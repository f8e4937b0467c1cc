/* engine-int.h - the inside of the engine's objects, shared by engine-event.c and
 * engine-list.c only. Nothing outside lib/perf includes it: the descriptors stay here. */
#ifndef TACHO_PERF_ENGINE_INT_H
#define TACHO_PERF_ENGINE_INT_H

#include "perf/engine.h"
#include "perf/rdpmc.h"
#include "perf/syscall.h"

/* The counting bits of read_format the engine always asks for. The id lets a group read
 * be mapped back to its members whatever order the kernel lists them in, and a sample
 * back to its event. */
#define TC_PERF_READ_FORMAT                                                             \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

/* An event's readings summed over its cells (tc_perf_ev_read, tc_perf_list_read). */
struct tc_perf_sum {
	uint64_t raw, enabled, running;
	double scaled;                    /* each cell scaled by its own times, summed */
	bool eof;
};

struct tc_perf_ev {
	struct perf_event_attr attr;      /* as given; the engine's fields are set per open */
	char *name;
	struct tc_perf_ev *leader;        /* NULL: it leads its group (or is alone) */
	struct tc_perf_ev **members;      /* a leader's group in order, itself first */
	size_t nmembers;
	unsigned flags;                   /* TC_PERF_* it was opened with */
	struct tc_perf_grid grid;         /* where it was opened (cpus, threads copied) */
	size_t ncells;                    /* 0 while closed */
	int *fds;                         /* [ncells], -1 where not open */
	uint64_t *ids;                    /* [ncells], the kernel's ids (0: unknown) */
	struct perf_event_mmap_page **pages; /* [ncells] first pages, or NULL */
	size_t nopen;
	int err;                          /* first refusal of the open, or 0 */
	unsigned err_flags;               /* its TC_EXPLAIN_* context */
	struct perf_event_attr err_attr;  /* the attributes that were refused */
	uint64_t *buf;                    /* a read's buffer: a whole group fits */
	size_t words;
	size_t idx;                       /* its index in the list that holds it */
	const char *silent;               /* its source is proven not to count here
					     (tc_source_silent, asked at the open): why */
};

/* tc_perf_ev_open in two steps, for a list that opens cell by cell: begin checks the
 * arguments and makes e's cells (all closed), as the open's first part (0, -EINVAL,
 * -ENOMEM); open_cell then opens e on cell c after the members before it there, and
 * returns 0 (a refusal is kept in e->err), or 1 when the kernel refuses group reads of
 * inherited events (e is closed again). */
int tc_perf_ev_open_begin(struct tc_perf_ev *e, const struct tc_perf_grid *g, unsigned flags);
int tc_perf_ev_open_cell(struct tc_perf_ev *e, size_t c);

/* The descriptor that leads e's group on cell c (the first member open there), or -1. */
int tc_perf_ev_group_fd(const struct tc_perf_ev *e, size_t c);

/* One cell of e read under the one rule's inputs: 0 and raw/enabled/running (*eof: the
 * read gave end-of-file), 1 when e is not open there, or -errno. */
int tc_perf_ev_read_cell(struct tc_perf_ev *e, size_t c, uint64_t *raw, uint64_t *enabled,
			 uint64_t *running, bool *eof);

/* Adds one cell's reading to a sum; turns e's sum into its status and value under the
 * one rule (e NULL or open nowhere: NOT_SUPPORTED; a source proven silent: NOT_COUNTED
 * with -TACHO_ESILENT and why). */
void tc_perf_sum_add(struct tc_perf_sum *s, uint64_t raw, uint64_t enabled, uint64_t running);
void tc_perf_sum_finish(const struct tc_perf_sum *s, const struct tc_perf_ev *e,
			struct tc_perf_count *out);

struct tc_perf_id {
	uint64_t id;
	uint32_t ev;
};

struct tc_perf_hot {
	bool ready;
	enum tc_perf_hot_path path;
	const struct tc_pmc_ops *ops;     /* RDPMC (count only), or the test's */
	int group_fd;                     /* the group's read, or -1 */
	int *fds;                         /* [nev] on the one cell */
	struct perf_event_mmap_page **pages; /* [nev] */
	size_t *pos;                      /* [nev] word of the value in the group read */
	uint64_t *buf;
	size_t words;
	bool multiplexed, ran;
	unsigned long reads_rdpmc, reads_syscall;
};

struct tc_perf_list {
	struct tc_perf_ev **ev;
	int *group;                       /* [nev] the group numbers given to add */
	size_t nev, aev;
	struct tc_perf_grid grid;
	unsigned flags;
	bool opened;
	struct tc_perf_id *ids;           /* sorted by id */
	size_t nids;
	struct tc_perf_sum *sums;         /* [nev] the read's scratch, no malloc per read */
	struct tc_ring *rings;            /* [grid.ncpus] */
	int *ring_fd;                     /* [grid.ncpus] the owner's descriptor, or -1 */
	size_t nrings;
	struct pollfd *pfd;               /* [nrings + 1]: the rings, then the caller's */
	struct tc_perf_hot hot;
};

#endif
