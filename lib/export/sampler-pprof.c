/* sampler-pprof.c - tacho_sampler_profile and tacho_sampler_write_pprof (tacho/record.h):
 * what the always-on sampler holds, read back through the report's loader and written as pprof. The
 * sampler is sampling's (record/sampler.c), the reading is the report's: the samples
 * pass between them as a record file in $TMPDIR, the one format both speak. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/record.h"
#include "util/util.h"
#include "tacho/record.h"
#include "tacho/report.h"

int tacho_sampler_profile(struct tacho_sampler *s, unsigned seconds, pid_t pid,
			  struct tacho_profile **out, struct tacho_diag *diag)
{
	const char *tmp = getenv("TMPDIR");
	char path[4200];
	int fd, err;

	if (!s || !out || !seconds)
		return -EINVAL;
	*out = NULL;
	snprintf(path, sizeof(path), "%s/tacho-sampler-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		err = -errno;
		return tc_diag_set(diag, path, 0, 0, err, "cannot make a temporary file: %s",
				   tacho_strerror(err));
	}
	/* the held samples are copied under the sampler's lock; loading and naming them,
	 * the slow part, runs without it */
	err = tc_sampler_write_file(s, seconds, pid, fd, diag);
	if (!err)
		err = tacho_profile_load(path, out, diag);
	unlink(path);
	return err;
}

int tacho_sampler_write_pprof(struct tacho_sampler *s, unsigned seconds, pid_t pid, FILE *f,
			      struct tacho_diag *diag)
{
	struct tacho_profile *prof = NULL;
	int err;

	if (!s || !f || !seconds)
		return -EINVAL;
	err = tacho_sampler_profile(s, seconds, pid, &prof, diag);
	if (err)
		return err;
	err = tacho_profile_write_pprof(prof, f);
	tacho_profile_free(prof);
	return err;
}
