/* procsys.c - facts of the running system that several parts need, read in one place:
 * the threads of a process (/proc/PID/task), the online CPUs
 * (/sys/devices/system/cpu/online), and where this process maps a piece of its code
 * from (/proc/self/maps: what a uprobe on it takes). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tacho/errors.h"
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

int tc_proc_cgroup_path(const char *text, size_t len, const char *controller, char *path,
			size_t size)
{
	const char *end = text + len, *line = text;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end, *c1, *c2;
		bool match;

		c1 = memchr(line, ':', (size_t)(le - line));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
		if (!c1 || !c2)
			return -TACHO_EPARSE;
		if (!controller) {
			match = c2 == c1 + 1 && c1 - line == 1 && line[0] == '0';
		} else {
			/* a whole word of the comma-separated list */
			size_t cl = strlen(controller);
			match = false;
			for (const char *w = c1 + 1; w < c2;) {
				const char *we = memchr(w, ',', (size_t)(c2 - w));
				if (!we)
					we = c2;
				if ((size_t)(we - w) == cl && !memcmp(w, controller, cl))
					match = true;
				w = we + 1;
			}
		}
		if (match) {
			size_t n = (size_t)(le - c2 - 1);
			if (n + 1 > size)
				return -ERANGE;
			memcpy(path, c2 + 1, n);
			path[n] = '\0';
			return 0;
		}
		line = le + 1;
	}
	return -ENOENT;
}

int tc_proc_cgroup(pid_t pid, char *path, size_t size)
{
	char file[64], *text = NULL;
	size_t len = 0;
	int err;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	err = tc_read_file(file, &text, &len, 1 << 16);
	if (err == -ENOENT)
		return -ESRCH;
	if (!err)
		err = tc_proc_cgroup_path(text, len, NULL, path, size);
	free(text);
	return err;
}

static bool hex64(const char *s, size_t n)
{
	if (n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool tc_cgroup_container_id(const char *path, char id[65])
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",
						"libpod-", "" };
	const char *end = path + strlen(path);

	/* from the last component back: a runtime's cgroup may hold others (a
	 * container's own systemd puts its services under it) */
	while (end > path) {
		const char *start = end;
		size_t n;

		while (start > path && start[-1] != '/')
			start--;
		n = (size_t)(end - start);
		if (n > 6 && !memcmp(end - 6, ".scope", 6))
			n -= 6;
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
			size_t pl = strlen(prefixes[i]);
			if (n >= pl && !strncmp(start, prefixes[i], pl) && hex64(start + pl, n - pl)) {
				memcpy(id, start + pl, 64);
				id[64] = '\0';
				return true;
			}
		}
		end = start > path ? start - 1 : path;
	}
	return false;
}
