/* sideband.h - what a recording writes besides the kernel's records: a copy of the
 * vDSO, the executable mappings of processes that ran before the recording (from
 * /proc), and the build-ids of mapped files (read once per path). */
#ifndef TACHO_RECORD_SIDEBAND_H
#define TACHO_RECORD_SIDEBAND_H

#include <sys/types.h>

#include "record/recfile.h"
#include "util/util.h"

struct tc_build_id_cache;

struct tc_sideband {
	struct tc_record_writer *w;              /* where the records go (not owned) */
	struct tc_build_id_cache *bids;      /* build-ids read from files, by path */
	size_t nbids;
	struct tc_bidcache *seen;            /* mapped files noted for the build-id cache,
						or NULL (not owned) */
	struct tc_hmap cgroups;              /* pid -> CRC-32 of the cgroup last written */
};

void tc_sideband_init(struct tc_sideband *sb, struct tc_record_writer *w);
void tc_sideband_exit(struct tc_sideband *sb);   /* NULL-safe */

/* An executable mapping, with the build-id the kernel gave (kbid, kbid_len; NULL, 0
 * when it gave none: the file's own is read then, once per path). */
void tc_sideband_mmap(struct tc_sideband *sb, uint32_t pid, uint32_t tid, uint64_t start,
		      uint64_t len, uint64_t pgoff, uint32_t prot, uint64_t time,
		      const uint8_t *kbid, unsigned kbid_len, const char *filename);

/* The vDSO is the same image in every process of this kernel and ABI: a copy of
 * tacho's own, so that reports can symbolize it anywhere. */
void tc_sideband_vdso(struct tc_sideband *sb);
/* This process's vDSO: true and its image (mapped for the process's life), or false. */
bool tc_own_vdso(const void **image, size_t *len);

/* The name and executable mappings of a process that already runs (-p, -a): the
 * kernel only reports mappings made after the events are enabled. */
void tc_sideband_process(struct tc_sideband *sb, pid_t pid);
/* The cgroup process pid is in now, written when it is not the one last written for
 * pid (time: the record's, 0 before the recording). Nothing when the process is gone
 * or the machine has no cgroup v2: the label is then unknown, never guessed. */
void tc_sideband_cgroup(struct tc_sideband *sb, uint32_t pid, uint64_t time);
/* The same for every process in /proc (-a). */
void tc_sideband_all(struct tc_sideband *sb);

#endif
