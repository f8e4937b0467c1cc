/* record.h - the recording session as parts above sampling use it: tacho_record with
 * hooks that add their own records to the file as it goes (tacho trace's marks). */
#ifndef TACHO_RECORD_RECORD_H
#define TACHO_RECORD_RECORD_H

#include <stdbool.h>
#include <sys/types.h>

#include "record/recfile.h"
#include "tacho/record.h"

struct tc_record_hooks {
	void *arg;
	char *const *env;   /* NAME=VALUE put into the program's environment before exec */
	const int *inherit_fds;   /* descriptors the program inherits (tacho_child_opts) */
	size_t ninherit_fds;
	bool use_clockid;   /* stamp samples with clockid instead of perf's own clock */
	const pid_t *pids;  /* with opts.pid set and no program: these processes (pid among
			       them), recorded until all have ended */
	size_t npids;
	int clockid;
	/* After the meta records, before the program starts. 0 or -errno (the recording
	 * stops with that error). */
	int (*start)(void *arg, struct tc_record_writer *w);
	/* At every drain of the rings (at least every flush_ms, and once more at the
	 * end with final set), before the buffered records go to the file. 0 or -errno
	 * (then the recording stops, as after a write error). */
	int (*drain)(void *arg, struct tc_record_writer *w, bool final);
};

/* tacho_record, with hooks (NULL: none). */
int tc_record_run(const struct tacho_record_opts *opts, struct tacho_record_result *res,
		  const struct tc_record_hooks *hooks, struct tacho_diag *diag);

#endif
