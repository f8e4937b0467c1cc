/* sideband.c - the side-band synthesis of a recording: the vDSO image, the mappings of
 * processes already running (/proc/PID/maps) and the build-ids of the files mapped. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/buildid-cache.h"
#include "record/sideband.h"
#include "symbols/symbols.h"

/* Build-ids read from files at record time, by path: one read per binary. */
struct tc_build_id_cache {
	char *path;
	uint8_t bid[TC_BUILD_ID_MAX];
	int len;                        /* < 0: none */
};

void tc_sideband_init(struct tc_sideband *sb, struct tc_record_writer *w)
{
	memset(sb, 0, sizeof(*sb));
	sb->w = w;
	tc_hmap_init(&sb->cgroups);
}

void tc_sideband_exit(struct tc_sideband *sb)
{
	if (!sb)
		return;
	for (size_t i = 0; i < sb->nbids; i++)
		free(sb->bids[i].path);
	free(sb->bids);
	sb->bids = NULL;
	sb->nbids = 0;
	tc_hmap_exit(&sb->cgroups);
}

void tc_sideband_cgroup(struct tc_sideband *sb, uint32_t pid, uint64_t time)
{
	char path[4096];
	uint32_t crc, old;

	if (tc_proc_cgroup((pid_t)pid, path, sizeof(path)) != 0)
		return;
	crc = tc_crc32(0, path, strlen(path));
	if (tc_hmap_get(&sb->cgroups, pid, &old) && old == crc)
		return;
	/* out of memory: the record is written again next time */
	(void)tc_hmap_put(&sb->cgroups, pid, crc);
	tc_record_writer_cgroup(sb->w, pid, time, path);
}

static int build_id_cached(struct tc_sideband *sb, const char *path, uint8_t *bid)
{
	struct tc_build_id_cache *nb;

	for (size_t i = 0; i < sb->nbids; i++)
		if (!strcmp(sb->bids[i].path, path)) {
			if (sb->bids[i].len > 0)
				memcpy(bid, sb->bids[i].bid, (size_t)sb->bids[i].len);
			return sb->bids[i].len;
		}
	nb = realloc(sb->bids, (sb->nbids + 1) * sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	sb->bids = nb;
	nb[sb->nbids].path = tc_strdup(path);
	nb[sb->nbids].len = path[0] == '/' ? tc_build_id_of_file(path, nb[sb->nbids].bid,
								   TC_BUILD_ID_MAX) : -ENOENT;
	if (!nb[sb->nbids].path)
		return -ENOMEM;
	if (nb[sb->nbids].len > 0)
		memcpy(bid, nb[sb->nbids].bid, (size_t)nb[sb->nbids].len);
	return nb[sb->nbids++].len;
}

void tc_sideband_mmap(struct tc_sideband *sb, uint32_t pid, uint32_t tid, uint64_t start,
		      uint64_t len, uint64_t pgoff, uint32_t prot, uint64_t time,
		      const uint8_t *kbid, unsigned kbid_len, const char *filename)
{
	uint8_t bid[TC_BUILD_ID_MAX];
	int n = 0;

	if (kbid && kbid_len) {
		memcpy(bid, kbid, kbid_len);
		n = (int)kbid_len;
	} else {
		n = build_id_cached(sb, filename, bid);
	}
	tc_record_writer_mmap(sb->w, pid, tid, start, len, pgoff, prot, time, bid,
			      n > 0 ? (unsigned)n : 0, filename);
	if (sb->seen && n > 0)
		tc_bidcache_note(sb->seen, filename, bid, (unsigned)n);
}

bool tc_own_vdso(const void **image, size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi > lo &&
		    hi - lo <= (1u << 20)) {
			*image = (const void *)lo;
			*len = hi - lo;
			found = true;
		}
	}
	fclose(f);
	return found;
}

void tc_sideband_vdso(struct tc_sideband *sb)
{
	const void *img;
	size_t len;

	if (tc_own_vdso(&img, &len)) {
		uint8_t bid[TC_BUILD_ID_MAX];
		int n = tc_build_id_of_image(img, len, bid, sizeof(bid));
		tc_record_writer_image(sb->w, bid, n > 0 ? (unsigned)n : 0, "[vdso]", img, len);
	}
}

void tc_sideband_process(struct tc_sideband *sb, pid_t pid)
{
	char path[64], line[4600], comm[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (tc_read_line_file(path, comm, sizeof(comm)) == 0)
		tc_record_writer_comm(sb->w, (uint32_t)pid, (uint32_t)pid, false, 0, comm);
	tc_sideband_cgroup(sb, (uint32_t)pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char perms[8], file[4096] = "";
		int n = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &off, &n) < 4)
			continue;
		if (perms[2] != 'x')
			continue;
		snprintf(file, sizeof(file), "%s", line + n);
		file[strcspn(file, "\n")] = 0;
		if (!file[0])
			continue;
		tc_sideband_mmap(sb, (uint32_t)pid, (uint32_t)pid, lo, hi - lo, off, 5, 0, NULL, 0,
				 file);
	}
	fclose(f);
}

void tc_sideband_all(struct tc_sideband *sb)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		tc_sideband_process(sb, (pid_t)pid);
		if (sb->w->buf.len > (1u << 20))
			tc_record_writer_flush(sb->w);
	}
	closedir(d);
}
