/* procfs.c - the few lines of procfs text the engine and the doctor need: effective
 * capabilities, where a file system is mounted (a CPU flag of /proc/cpuinfo is util's
 * tc_cpuinfo_has_flag). Pure functions of the text, so that they can be tested and
 * fuzzed on any input. */
#include <errno.h>
#include <string.h>

#include "perf/perf.h"
#include "tacho/errors.h"

/* Finds the line that starts with key at the start of a line; returns what follows it,
 * or NULL. */
static const char *line_value(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n))
			return p + n;
	return NULL;
}

int tc_parse_capeff(const char *status, uint64_t *caps)
{
	const char *p = status ? line_value(status, "CapEff:") : NULL;
	const char *end;

	if (!p)
		return -TACHO_ENOVALUE;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p;
	while (tc_is_hex_digit(*end))
		end++;
	if (end == p || end - p > 16 || (*end && *end != '\n'))
		return -TACHO_EPARSE;
	return tc_parse_hex_u64(p, (size_t)(end - p), caps);
}

int tc_mounts_find(const char *mounts, const char *fstype, char *dir, size_t size)
{
	size_t tl = strlen(fstype);
	const char *line = mounts;

	while (line && *line) {
		const char *eol = strchr(line, '\n');
		const char *f[3];
		size_t fl[3];
		const char *p = line;
		int k;

		if (!eol)
			eol = line + strlen(line);
		/* device, mount point, type: space-separated (spaces inside are \040) */
		for (k = 0; k < 3; k++) {
			while (p < eol && *p == ' ')
				p++;
			f[k] = p;
			while (p < eol && *p != ' ')
				p++;
			fl[k] = (size_t)(p - f[k]);
			if (!fl[k])
				break;
		}
		if (k == 3 && fl[2] == tl && !strncmp(f[2], fstype, tl)) {
			tc_unescape_octal(f[1], fl[1], dir, size);
			return 0;
		}
		line = *eol ? eol + 1 : NULL;
	}
	return -ENOENT;
}
