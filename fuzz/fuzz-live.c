/* fuzz-live.c - libFuzzer target for the live part's parsers of text from outside:
 * /proc/PID/stat (a command name may hold anything), /proc/stat's CPU lines, a line of
 * /proc/PID/maps, /proc/PID/cgroup, the mount table's cgroup hierarchies, and rates as
 * people type them. The input goes to every parser,
 * not NUL-terminated where the parser takes a length (a read past the end is what
 * ASan catches); answers are checked for what the callers rely on. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "live/live-int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *exact = malloc(size ? size : 1), *text = malloc(size + 1);
	struct tc_cgroup_mounts m;
	struct tc_proc_stat st;
	struct tacho_diag d;
	char path[8];
	double v;

	if (!exact || !text)
		goto out;
	memcpy(exact, data, size);
	memcpy(text, data, size);
	text[size] = '\0';
	if (tc_proc_stat_parse(exact, size, &st) == 0 &&
	    (st.pid <= 0 || !memchr(st.comm, '\0', sizeof(st.comm))))
		abort();
	memset(path, 'Z', sizeof(path));
	if (tc_proc_cgroup_path(exact, size, NULL, path, sizeof(path)) == 0 &&
	    !memchr(path, '\0', sizeof(path)))
		abort();
	(void)tc_proc_cgroup_path(exact, size, "cpu", path, sizeof(path));
	{
		uint64_t lo, hi, off;
		const char *fp;
		size_t fl;
		bool exec;
		if (tc_maps_line_parse(exact, size, &lo, &hi, &off, &exec, &fp, &fl) == 0 &&
		    (hi < lo || fp < exact || fp + fl != exact + size))
			abort();
	}
	{
		uint64_t busy[4];
		int n = tc_proc_cpu_busy_parse(exact, size, busy, 4);
		if (n == 0 || n < -TACHO_EPARSE || (n < 0 && n != -TACHO_EPARSE))
			abort();
	}
	if (tc_cgroup_mounts_parse(exact, size, &m) == 0 &&
	    (!memchr(m.v2, '\0', sizeof(m.v2)) || !memchr(m.v1_cpu, '\0', sizeof(m.v1_cpu)) ||
	     !memchr(m.v1_perf, '\0', sizeof(m.v1_perf))))
		abort();
	memset(&d, 0, sizeof(d));
	d.sz = sizeof(d);
	if (tacho_rate_parse(text, &v, &d) == 0 && (!isfinite(v) || v < 0))
		abort();
out:
	free(exact);
	free(text);
	return 0;
}
