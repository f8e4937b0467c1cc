/* procsys.c - facts of the running system that several parts need, read in one place:
 * the threads of a process (/proc/PID/task), the online CPUs
 * (/sys/devices/system/cpu/online), and where this process maps a piece of its code
 * from (/proc/self/maps: what a uprobe on it takes). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int tc_proc_threads(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];
	struct dirent *de;
	pid_t *t = NULL, *p;
	size_t cnt = 0, alloc = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	if (pid < 0)
		return -EINVAL;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/task");
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		uint64_t tid;

		if (tc_parse_u64(de->d_name, &tid) != 0 || tid == 0 || tid > INT32_MAX)
			continue;        /* "." and ".." */
		if (cnt == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			p = realloc(t, alloc * sizeof(*t));
			if (!p) {
				free(t);
				closedir(d);
				return -ENOMEM;
			}
			t = p;
		}
		t[cnt++] = (pid_t)tid;
	}
	closedir(d);
	if (!cnt) {
		/* a zombie: its task directory is there, its threads are gone */
		free(t);
		return -ESRCH;
	}
	qsort(t, cnt, sizeof(*t), cmp_pid);
	*out = t;
	*n = cnt;
	return 0;
}

int tc_online_cpus(int **out, size_t *n)
{
	char line[4096];
	int err;

	*out = NULL;
	*n = 0;
	err = tc_read_line_file("/sys/devices/system/cpu/online", line, sizeof(line));
	if (err)
		return err;
	return tc_parse_cpu_list(tc_trim(line), out, n, NULL);
}

int tc_self_file_offset(uintptr_t addr, char *path, size_t size, uint64_t *off)
{
	char *maps, *line;
	size_t len;
	int err = -ENOENT;

	if (tc_read_file("/proc/self/maps", &maps, &len, 0))
		return -ENOENT;
	for (line = maps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned long long start, end, pgoff;
		char perms[8] = "";
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perms, &pgoff,
			   &at) != 4 || addr < start || addr >= end || strlen(perms) < 3 ||
		    perms[2] != 'x')
			continue;
		while (line[at] == ' ')
			at++;
		if (line[at] != '/')
			break;           /* anonymous: nothing to probe */
		len = strcspn(line + at, "\n");
		if (len >= size || (len > 10 && !strncmp(line + at + len - 10, " (deleted)", 10)))
			break;
		memcpy(path, line + at, len);
		path[len] = '\0';
		*off = addr - start + pgoff;
		err = 0;
		break;
	}
	free(maps);
	return err;
}
