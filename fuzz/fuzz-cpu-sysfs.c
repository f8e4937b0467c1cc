/* fuzz-cpu-sysfs.c - libFuzzer target for the reader of the kernel's CPU tree
 * (tacho_cpu_sysfs_read): the input is NUL-separated parts, each the contents of one
 * file of a fake tree in a temporary directory (the online list, CPUs 0 and 1's
 * topology and two caches, the hybrid PMUs' CPU lists, /proc/cpuinfo); a part that is
 * not there removes its file. Checks: the tree reads or fails with an error code; a
 * description has the online CPUs, ascending, each found by tacho_cpu_sysfs_cpu, at most
 * TACHO_SYSFS_MAX_CACHES caches each, a sharing set's first CPU within it, and counts of
 * packages, dies and cores no larger than the CPUs. */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tacho/cpu.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CPU "sys/devices/system/cpu/"
static const char *const files[] = {
	CPU "online",
	CPU "cpu0/topology/physical_package_id", CPU "cpu0/topology/die_id",
	CPU "cpu0/topology/core_id", CPU "cpu0/topology/core_cpus_list",
	CPU "cpu0/cache/index0/level", CPU "cpu0/cache/index0/type",
	CPU "cpu0/cache/index0/size", CPU "cpu0/cache/index0/ways_of_associativity",
	CPU "cpu0/cache/index0/shared_cpu_list",
	CPU "cpu0/cache/index1/level", CPU "cpu0/cache/index1/size",
	CPU "cpu0/cache/index1/shared_cpu_list",
	CPU "cpu1/topology/physical_package_id", CPU "cpu1/topology/core_id",
	CPU "cpu1/topology/thread_siblings_list",
	"sys/devices/cpu_core/cpus", "sys/devices/cpu_atom/cpus",
	"proc/cpuinfo",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char root[64];

/* A folder in memory when there is one: files are rewritten on every run. */
static const char *fuzz_tmp(void)
{
	return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}


static void file_path(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", root, name);
}

/* Every folder on the way to path (relative to root). */
static void make_dirs(const char *name)
{
	char p[256];
	size_t n = (size_t)snprintf(p, sizeof(p), "%s/", root);

	for (const char *s = name; *s; s++) {
		if (*s == '/' && n < sizeof(p)) {
			p[n] = '\0';
			mkdir(p, 0700);
		}
		if (n + 1 < sizeof(p))
			p[n++] = *s;
	}
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void remove_tree(void)
{
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *part = data, *end = data + size;
	struct tacho_cpu_sysfs *s;
	char p[256];
	int *cpus;
	size_t n = 0;

	if (size > 8192)
		return 0;
	if (!root[0]) {
		snprintf(root, sizeof(root), "%s/fuzz-cpu-sysfs-XXXXXX", fuzz_tmp());
		if (!mkdtemp(root))
			abort();
		atexit(remove_tree);
		for (size_t i = 0; i < NFILES; i++)
			make_dirs(files[i]);
	}
	for (size_t i = 0; i < NFILES; i++) {
		const uint8_t *nul = part ? memchr(part, '\0', (size_t)(end - part)) : NULL;
		size_t len = part ? (size_t)((nul ? nul : end) - part) : 0;

		file_path(p, sizeof(p), files[i]);
		if (part) {
			int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd < 0 || write(fd, part, len) != (ssize_t)len)
				abort();
			close(fd);
			if (i == 0) {
				/* each online CPU costs some twenty file opens: keep runs fast */
				char *list = tc_strndup((const char *)part, len);
				int err = list ? tc_parse_cpu_list(tc_trim(list), &cpus, &n, NULL) : -1;
				free(list);
				if (err == 0)
					free(cpus);
				if (n > 64)
					return 0;
			}
		} else {
			unlink(p);
		}
		part = nul ? nul + 1 : NULL;
	}
	if (tacho_cpu_sysfs_read(root, &s) != 0)
		return 0;
	if (s->ncpus == 0 || s->ncpus != n || s->packages > s->ncpus || s->dies > s->ncpus ||
	    s->cores > s->ncpus)
		abort();
	for (unsigned i = 0; i < s->ncpus; i++) {
		const struct tacho_sysfs_cpu *c = &s->cpus[i];
		if ((i && c->cpu <= s->cpus[i - 1].cpu) || tacho_cpu_sysfs_cpu(s, c->cpu) != c ||
		    c->ncaches > TACHO_SYSFS_MAX_CACHES)
			abort();
		for (unsigned k = 0; k < c->ncaches; k++)
			if ((c->caches[k].shared_first < 0) != (c->caches[k].shared_cpus == 0))
				abort();
	}
	tacho_cpu_sysfs_free(s);
	return 0;
}
