/* fuzz-stat-cgroup.c - libFuzzer target for stat's reading of the mount table (where
 * the hierarchy that holds perf_event is, for -G and --for-each-cgroup): any text gives
 * a root or -ENOENT, never a crash or a read past the end; a root found always fits its
 * buffer, terminated. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stat/stat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	char root[16];
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(root, 'Z', sizeof(root));
	r = tc_stat_cgroup_root_parse(text, root, sizeof(root));
	if ((r == 0 && !memchr(root, '\0', sizeof(root))) || (r != 0 && r != -ENOENT))
		abort();
	free(text);
	return 0;
}
