/* report-int.h - what the pieces of the report share: the loaded profile (its
 * processes, mappings, binaries, events, samples and resolved locations, strings as
 * pool ids) and the calls between loading (report-load.c), resolving addresses
 * (report-resolve.c), aggregating (report-aggregate.c) and exporting
 * (report-export.c). The public contract is include/tacho/report.h. */
#ifndef TACHO_REPORT_REPORT_INT_H
#define TACHO_REPORT_REPORT_INT_H

#include "record/recfile.h"
#include "symbols/symbols.h"
#include "tacho/report.h"

struct dso {
	uint32_t name;                 /* pool id of the path / label */
	uint8_t bid[TC_BUILD_ID_MAX];
	uint8_t bidlen;
	const unsigned char *image;    /* in-file copy (vDSO), or NULL */
	size_t image_len;
	struct tc_symdso *sd;
	uint32_t path;                 /* pool id of the file sd was read from, or NONE */
	bool tried, stale;
};

struct map {
	uint64_t start, end, pgoff, time;
	uint32_t dso;
};

struct proc {
	uint32_t pid, parent;          /* parent: pid it was forked from (0: none) */
	uint64_t fork_time;
	uint32_t comm;                 /* pool id */
	uint64_t comm_time;            /* the time of the main thread's COMM that named it (0:
					* none, or a record without a time) */
	uint32_t cgroup;               /* pool id of its cgroup v2 path, NONE: unknown */
	uint64_t cgroup_time;          /* the time of the CGROUP record that gave it */
	struct map *maps;
	size_t nmaps, cap;
	/* built once the file is read (tc_profile_index_maps): the maps' indices by start
	 * address, and the largest end among by_start[0..i], so that a lookup is a binary
	 * search and a short walk back over the mappings that may still cover the address */
	uint32_t *by_start;
	uint64_t *max_end;
};

/* A sample as the report keeps it: 32 bytes, since a report holds every one (600k of
 * them were 38 MB at 64 bytes, 29 MB at 48, most of a report's peak RSS). What few
 * samples differ in lives in tables beside them: the thread, CPU and event in ctxs
 * (one entry per combination), the chain's pointer in chains (only for samples with
 * one), a period of 2^32 - 1 or more in bigp, the data address in
 * tacho_profile.addrs (only when a sample has one). Read them with tc_smp_*. */
struct smp {
	uint64_t time, ip;
	uint32_t period32;             /* SMP_PERIOD_BIG: in tacho_profile.bigp */
	uint32_t ctx;                  /* index into tacho_profile.ctxs */
	uint32_t chain;                /* index into tacho_profile.chains; nr 0: none */
	uint16_t nr;                   /* chains longer than 65535 are cut (chains_cut) */
	uint16_t misc;
};
_Static_assert(sizeof(struct smp) == 32, "struct smp is 32 bytes");

/* What the samples of one thread on one CPU for one event share. */
struct smp_ctx {
	uint32_t pid, tid;
	uint16_t cpu;                  /* SMP_CPU_NONE: the recording has none */
	uint16_t event;
};

/* A period that does not fit the sample's 32 bits: sample i's. */
struct smp_bigp {
	size_t i;
	uint64_t period;
};

#define SMP_PERIOD_BIG UINT32_MAX
#define SMP_CPU_NONE UINT16_MAX   /* TC_CPU_UNKNOWN, and any CPU no machine has */
#define SMP_NR_MAX UINT16_MAX

/* The USTACK or BRANCH record that followed sample smp (report-load.c), which
 * unwind.c turns into the user part of its chain (nr: the joined chain's length). */
struct xtra {
	size_t smp;
	enum tc_rec_type type;
	uint32_t nr;
	struct tc_rec r;
};

/* How an address of a chain is looked up (struct loc.kind): as it is (the sampled
 * IP), one byte back (a return address: inside its call), or at the instruction
 * before it (a trap's IP is the instruction after the cause). */
enum { K_EXACT = 0, K_RETURN = 1, K_TRAP = 2 };

/* Where one address is: all ids into the string pool (UINT32_MAX: unknown). */
struct loc {
	uint64_t ip;                   /* the key: pid, ip, kind, kernel */
	uint32_t pid;
	uint8_t kind, kernel;
	uint32_t sym, dso;             /* sym: the name shown (demangled unless turned off) */
	uint32_t raw;                  /* the name as the symbol table spells it */
	/* source file and line: NONE and 0 until tc_profile_want_lines (libdw decompresses
	 * a binary's DWARF to find them, most of a report by symbol's time when they were
	 * looked up with the symbol), then looked up for every location */
	uint32_t src_file;
	int src_line;
	uint32_t dsoi;                 /* index into dsos of the binary, or NONE */
	uint64_t addr;                 /* ELF address of the instruction (trap-corrected) */
	uint64_t sym_start;
	uint64_t rel;                  /* the address looked up, relative to the ELF */
	struct map map;                /* the mapping that covers ip (a user address whose
					  mapping the recording has: mapped set) */
	bool mapped;
	/* inlined functions as frames (tc_profile_inlines): the chain of this location,
	 * looked up once (inl_done), is locs[inl_first..inl_first + ninl]: ninl inlined
	 * functions innermost first (role LOC_INLINED), then the function they were
	 * inlined into at the outermost call's line (LOC_INLINER). The chain's locations
	 * are in no index, and have no chain. */
	uint8_t role;
	bool inl_done;
	uint16_t ninl;
	uint32_t inl_first;
};

enum { LOC_SAMPLED = 0, LOC_INLINED = 1, LOC_INLINER = 2 };

/* The deepest chain of inlined functions at one address that is made frames. */
#define MAX_INLINE 64

struct ev {
	uint32_t name;                 /* pool id */
	uint32_t flags;
	uint64_t period;
	uint64_t events;               /* sum of its samples' periods (checked not to wrap) */
};

/* A tracepoint sample's payload: the sample's index and its raw bytes in the file. */
struct raw_ref {
	size_t smp;
	const unsigned char *data;
	uint32_t size;
};

/* Test seam of tacho_profile_load: when set, called once after the first chunk (1 MiB)
 * of a regular file has been copied and before the rest is, so that a test can cut the
 * file short at that moment, deterministically (tests/unit/test-report-load-shrink.c).
 * Not thread-safe; NULL outside tests. */
extern void (*tc_profile_load_copy_hook)(void *arg);
extern void *tc_profile_load_copy_hook_arg;

struct tacho_profile {
	const unsigned char *data;
	size_t len;
	bool data_mapped;              /* data is a mapping of a sealed memfd, not heap */
	struct tc_strpool pool;
	struct ev *evs;
	size_t nev, evs_cap;
	struct dso *dsos;
	size_t ndsos, dsos_cap;
	struct tc_hmap dso_idx;        /* pool id of a name -> dsos (one per build-id) */
	struct proc *procs;
	size_t nprocs, procs_cap;
	struct tc_hmap proc_idx;       /* pid -> proc */
	struct tc_hmap map_idx;        /* hash of (pid, start, end, pgoff, dso) -> maps */
	struct smp *smps;
	size_t nsmps;
	struct smp_ctx *ctxs;          /* the samples' threads, CPUs and events */
	size_t nctxs, ctxs_cap;
	struct tc_hmap ctx_idx;        /* hash of a smp_ctx -> ctxs */
	uint32_t ctx_last;             /* the one the sample loaded last found */
	const uint64_t **chains;       /* the samples' chains (struct smp.chain) */
	size_t nchains, chains_cap;
	struct smp_bigp *bigp;         /* periods of 2^32 - 1 and more, by sample index */
	size_t nbigp, bigp_cap;
	uint64_t *addrs;               /* [nsmps] the samples' data addresses, or NULL when
					  none has one */
	struct tc_rec_mem *rec_mem;    /* what the file's reader built, that samples point
					* into (a tree's chains, unpacked stacks): freed last */
	uint64_t chains_cut;           /* samples whose chain was cut at SMP_NR_MAX */
	struct xtra *xtras;            /* samples with a stack or branches to unwind */
	size_t nxtras, xtras_cap;
	uint64_t *uchains;             /* their joined chains (unwind.c) */
	size_t nuchains, uchains_cap;
	bool unwound;                  /* tc_profile_unwind ran */
	uint64_t lost;
	uint64_t *lost_cpu;            /* [nlost_cpu] lost by the CPU of its ring */
	size_t nlost_cpu;
	uint64_t lost_nocpu;           /* lost with no CPU known (TC_LOST_NO_CPU) */
	char *lost_where;              /* tacho_profile_info's lost_where, or NULL */
	uint64_t throttles;            /* THROTTLE records (not the UNTHROTTLE ones) */
	bool truncated, finished;
	uint64_t good_end;
	int exit_status;
	const char *command, *boot_id, *kptr;
	struct loc *locs;
	size_t nlocs, locs_cap;
	struct tc_hmap loc_idx;        /* hash of (pid, ip, kind, kernel) -> locs */
	struct tc_hmap unk_idx;        /* a location without a symbol -> its "[unknown]
					  0x..." name in the pool (report-aggregate.c) */
	bool no_demangle;              /* show C++ names as the binary spells them */
	bool no_inline;                /* no inlined functions as frames */
	bool want_lines;               /* tc_profile_want_lines ran: locations have lines */
	struct tc_hmap dem_idx;        /* pool id of a raw name -> pool id of its display */
	struct tc_kallsyms *ksyms;
	bool ksyms_tried;
	const char *kernel_note;
	uint32_t unknown_id, kernel_id;
	size_t sel;                    /* the event reports are about (index into evs) */
	uint64_t sel_samples, sel_events;
	uint64_t sel_chained;          /* of them, with a chain or a stack to unwind */
	uint64_t sel_pmin, sel_pmax;   /* and their periods' extremes */
	/* the keys compared by the lookups of binaries and mappings, and the arrays grown:
	 * what a test counts to prove loading and resolving are not quadratic */
	uint64_t compares, grows;
	struct tc_filter *filter;      /* tacho_profile_set_filter's, or NULL: every sample */
	uint64_t kept_samples;         /* samples the last tc_profile_report_rows took */
	uint64_t kept_events;          /* and the sum of their periods */
	/* tracepoint payloads: the decoders (NULL without TPFORMAT records) and the
	 * payloads by sample index, ascending */
	struct tc_payload *payload;
	struct raw_ref *raws;
	size_t nraws, raws_cap;
};

#define NONE UINT32_MAX   /* no pool id: unknown */
#define MAX_FRAMES 512     /* frames of one sample that are resolved */

/* The string of a pool id; NULL for NONE. */
static inline const char *pool_str(const struct tacho_profile *p, uint32_t id)
{
	return tc_strpool_str(&p->pool, id);
}

/* Whether the selected event was simulated (record --sim): its periods are exact
 * counts, one sample per instruction and process, none drawn. Every view says so. */
static inline bool tc_profile_simulated(const struct tacho_profile *p)
{
	return p->sel < p->nev && (p->evs[p->sel].flags & TC_EVF_SIM);
}

/* Whether the selected event is off-CPU time (record --off-cpu): its periods are the
 * nanoseconds each stack waited. */
static inline bool tc_profile_offcpu(const struct tacho_profile *p)
{
	return p->sel < p->nev && (p->evs[p->sel].flags & TC_EVF_OFFCPU);
}

/* report-load.c: the process pid (created when create is set; NULL when it is not
 * there, or out of memory). The pointer lives until the next creation. */
struct proc *tc_profile_proc(struct tacho_profile *p, uint32_t pid, bool create);

/* report-load.c: grows the array *v of *cap elements of size sz to hold n (doubling,
 * from min). 0 or -ENOMEM (then *v is untouched). */
int tc_profile_grow(struct tacho_profile *p, void **v, size_t *cap, size_t n, size_t sz,
		    size_t min);

/* A sample's thread, CPU and event. */
static inline const struct smp_ctx *tc_smp_ctx(const struct tacho_profile *p,
					      const struct smp *s)
{
	return &p->ctxs[s->ctx];
}

static inline uint32_t tc_smp_pid(const struct tacho_profile *p, const struct smp *s)
{
	return p->ctxs[s->ctx].pid;
}

static inline uint32_t tc_smp_tid(const struct tacho_profile *p, const struct smp *s)
{
	return p->ctxs[s->ctx].tid;
}

static inline uint32_t tc_smp_event(const struct tacho_profile *p, const struct smp *s)
{
	return p->ctxs[s->ctx].event;
}

/* A sample's CPU, TC_CPU_UNKNOWN when it has none. */
static inline uint32_t tc_smp_cpu(const struct tacho_profile *p, const struct smp *s)
{
	uint16_t cpu = p->ctxs[s->ctx].cpu;
	return cpu == SMP_CPU_NONE ? TC_CPU_UNKNOWN : cpu;
}

/* report-load.c: a period kept in bigp. */
uint64_t tc_smp_bigp(const struct tacho_profile *p, const struct smp *s);

static inline uint64_t tc_smp_period(const struct tacho_profile *p, const struct smp *s)
{
	return s->period32 != SMP_PERIOD_BIG ? s->period32 : tc_smp_bigp(p, s);
}

/* A sample's call chain (s->nr addresses, unaligned: read with memcpy), NULL when it
 * has none. */
static inline const uint64_t *tc_smp_chain(const struct tacho_profile *p, const struct smp *s)
{
	return s->nr ? p->chains[s->chain] : NULL;
}

/* report-load.c: points sample s at chain (nr addresses; none for nr 0), giving it a
 * slot in p->chains when it has none; a chain longer than SMP_NR_MAX is cut there and
 * counted in chains_cut. 0 or -ENOMEM. */
int tc_smp_set_chain(struct tacho_profile *p, struct smp *s, const uint64_t *chain,
		     uint32_t nr);

/* A sample's data address (0: none). */
static inline uint64_t tc_smp_addr(const struct tacho_profile *p, const struct smp *s)
{
	return p->addrs ? p->addrs[s - p->smps] : 0;
}

/* report-load.c: the payload of sample s (a pointer into p->smps): 0 and its bytes,
 * or -ENOENT when it has none. */
int tc_profile_raw(const struct tacho_profile *p, const struct smp *s,
		   const unsigned char **data, uint32_t *size);

/* report-resolve.c: the symbols of binary d, opened on first use (NULL when they
 * cannot be read, or the file changed since the recording: a warning says which). */
struct tc_symdso *tc_profile_dso_open(struct tacho_profile *p, struct dso *d);
/* Looks up the source file and line of every location resolved so far, and of every
 * one resolved from now on: the views that show lines (by line or address, annotate,
 * pprof, speedscope) call it first; a report by symbol never reads DWARF. 0 or
 * -ENOMEM. */
int tc_profile_want_lines(struct tacho_profile *p);
/* The newest mapping of pid (or the processes it was forked from) that covers ip at
 * time, or NULL. */
const struct map *tc_profile_find_map(struct tacho_profile *p, uint32_t pid, uint64_t ip,
				      uint64_t time);
/* The path of the file that tc_profile_dso_open read for d (the path recorded, or a
 * copy with the same build-id), or NULL. */
const char *tc_profile_dso_path(struct tacho_profile *p, struct dso *d);
/* The frames of a sample, leaf first: loc ids into frames (at most max), each
 * address resolved once per profile. 0 or -ENOMEM. */
int tc_profile_frames(struct tacho_profile *p, const struct smp *s, uint32_t *frames, size_t max,
		      size_t *n);
/* The chain of inlined functions at location idx (tacho_profile_set_inline): *n loc
 * ids from *first on (the inlined functions innermost first, then the function they
 * are in), or *n 0 when none is inlined there, inline frames are off, or the location
 * is no binary's. Reads the binary's DWARF at the first call. May grow p->locs (a
 * pointer into it is stale after). 0 or -ENOMEM. */
int tc_profile_inlines(struct tacho_profile *p, uint32_t idx, uint32_t *first, size_t *n);
/* tc_profile_frames with each location that has inlined functions replaced by its
 * chain (tc_profile_inlines): the frames of the views of whole stacks. 0 or -ENOMEM. */
int tc_profile_chain(struct tacho_profile *p, const struct smp *s, uint32_t *frames, size_t max,
		     size_t *n);

/* unwind.c: the user part of every sample with a USTACK record (unwound with
 * libdwfl) or a BRANCH record (LBR call stack), joined to the kernel part of its
 * recorded chain; once per profile (tc_profile_frames calls it first). A sample that
 * cannot be unwound keeps its IP alone. 0 or -ENOMEM. */
int tc_profile_unwind(struct tacho_profile *p);

/* report-aggregate.c: tacho_profile_rows and tacho_profile_annotate in the library's
 * own struct tacho_profile_row (the writers' and the public calls' common part). */
int tc_profile_rows(struct tacho_profile *p, enum tacho_sort sort, bool children,
		    struct tacho_profile_row **rows, size_t *n);
int tc_profile_annotate(struct tacho_profile *p, const char *symbol,
			struct tacho_profile_row **rows, size_t *n);
/* report-aggregate.c: tacho_profile_report_rows in the library's own rows (opts
 * checked and complete). */
int tc_profile_report_rows(struct tacho_profile *p, const struct tacho_report_opts *opts,
			   struct tacho_profile_row **rows, size_t *n);
/* The caller's opts (of its sz) completed with defaults and checked: 0, -EINVAL or
 * -TACHO_EVERSION (TC_OPTS_VALID). */
int tc_report_opts_get(const struct tacho_report_opts *in, struct tacho_report_opts *o);

/* report-filter.c: the parsed filter (tacho_profile_set_filter), freed with the
 * profile. */
struct tc_filter;
void tc_profile_filter_free(struct tc_filter *f);
/* Whether a report takes sample s: of the selected event and kept by the filter (the
 * dso and symbol lists look at its leaf, resolved for that). 1, 0, or -ENOMEM. Every
 * view (rows, annotate, exports) asks this of each sample. */
int tc_profile_keep(struct tacho_profile *p, const struct smp *s);
/* The same for a sample of any event (the event sort key reports them all). */
int tc_profile_keep_any(struct tacho_profile *p, const struct smp *s);

/* report-write.c: the report's first line, "# N samples of EVENT (period P), L lost:
 * COMMAND", which annotate.c's table starts with too. */
void tc_profile_write_header(FILE *f, const struct tacho_profile_info *in);

/* The field list of tacho_profile_write_fields ("comm,tid,time") into out (room for
 * TC_PROFILE_MAX_FIELDS): each field's index in the list of report-export.c (comm 0,
 * pid 1, ... addr 11). Their number, or -TACHO_EPARSE with diag naming the word (for
 * the fuzz target, fuzz/fuzz-report-fields.c). */
#define TC_PROFILE_MAX_FIELDS 32
int tc_profile_parse_fields(const char *list, unsigned char *out, struct tacho_diag *diag);

#endif
