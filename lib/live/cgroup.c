/* cgroup.c - the cgroup hierarchies as the live part needs them: where the mount table
 * puts cgroup v2, v1's cpu controller and v1's perf_event controller (a pure parser),
 * and a user's cgroup path made into a directory of one of them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "live/live-int.h"

/* Whether the comma-separated list [s, s+n) holds word. */
static bool has_word(const char *s, size_t n, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = s, *end = s + n; p < end;) {
		const char *c = memchr(p, ',', (size_t)(end - p));
		if (!c)
			c = end;
		if ((size_t)(c - p) == wl && !memcmp(p, word, wl))
			return true;
		p = c + 1;
	}
	return false;
}

int tc_cgroup_mounts_parse(const char *text, size_t len, struct tc_cgroup_mounts *out)
{
	const char *end = text + len, *line = text;

	memset(out, 0, sizeof(*out));
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end, *p = line;
		const char *f[4];
		size_t fl[4];
		int k;

		/* device, mount point, type, options (fstab(5)) */
		for (k = 0; k < 4; k++) {
			while (p < le && *p == ' ')
				p++;
			f[k] = p;
			while (p < le && *p != ' ')
				p++;
			fl[k] = (size_t)(p - f[k]);
			if (!fl[k])
				break;
		}
		if (k == 0) {
			line = le + 1;      /* an empty line */
			continue;
		}
		if (k < 4)
			return -TACHO_EPARSE;
		if (fl[2] == 7 && !memcmp(f[2], "cgroup2", 7)) {
			if (!out->v2[0]) {
				tc_unescape_octal(f[1], fl[1], out->v2, sizeof(out->v2));
				out->v2_ro = has_word(f[3], fl[3], "ro");
			}
		} else if (fl[2] == 6 && !memcmp(f[2], "cgroup", 6)) {
			if (!out->v1_cpu[0] && has_word(f[3], fl[3], "cpu")) {
				tc_unescape_octal(f[1], fl[1], out->v1_cpu, sizeof(out->v1_cpu));
				out->v1_cpu_ro = has_word(f[3], fl[3], "ro");
			}
			if (!out->v1_perf[0] && has_word(f[3], fl[3], "perf_event"))
				tc_unescape_octal(f[1], fl[1], out->v1_perf, sizeof(out->v1_perf));
		}
		line = le + 1;
	}
	return 0;
}

int tc_cgroup_mounts_read(const char *path, struct tc_cgroup_mounts *out)
{
	char *text;
	size_t len;
	int err;

	err = tc_read_file(path ? path : "/proc/self/mounts", &text, &len, 16u << 20);
	if (err)
		return err;
	err = tc_cgroup_mounts_parse(text, len, out);
	free(text);
	return err;
}

const char *tc_cgroup_perf_root(const struct tc_cgroup_mounts *m)
{
	/* the kernel binds perf_event to one hierarchy: a v1 mount of it, else v2,
	 * where it is always there (implicitly enabled) */
	if (m->v1_perf[0])
		return m->v1_perf;
	if (m->v2[0])
		return m->v2;
	return NULL;
}

int tc_cgroup_resolve(const char *root, const char *cg, char *buf, size_t size)
{
	size_t rl = strlen(root);
	struct stat sb;
	int n;

	if (!cg || !*cg)
		return -EINVAL;
	/* no ".." anywhere: a path must stay inside the hierarchy */
	for (const char *p = cg; (p = strstr(p, "..")); p += 2)
		if ((p == cg || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return -EINVAL;
	while (rl > 0 && root[rl - 1] == '/')
		rl--;       /* "/" itself becomes "": the paths below start with '/' */
	if (rl && !strncmp(cg, root, rl) && (cg[rl] == '/' || cg[rl] == '\0'))
		n = snprintf(buf, size, "%s", cg);
	else
		n = snprintf(buf, size, "%.*s/%s", (int)rl, root, cg[0] == '/' ? cg + 1 : cg);
	if (n < 0 || (size_t)n >= size)
		return -ERANGE;
	/* "a/b/" and "a/b" are one cgroup */
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	if (stat(buf, &sb))
		return -errno;
	return S_ISDIR(sb.st_mode) ? 0 : -ENOTDIR;
}

int tacho_cgroup_resolve(const char *cgroup, const char *mounts, char *buf, size_t size)
{
	struct tc_cgroup_mounts m;
	const char *root;
	int err;

	if (!cgroup || !buf || !size)
		return -EINVAL;
	err = tc_cgroup_mounts_read(mounts, &m);
	if (err)
		return err;
	root = tc_cgroup_perf_root(&m);
	if (!root)
		return -ENOENT;
	return tc_cgroup_resolve(root, cgroup, buf, size);
}
