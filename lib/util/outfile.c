/* outfile.c - the one way tacho creates an output file: a new file of mode 0600 beside
 * the name asked for, renamed over it once complete, so that a planted symbolic link is
 * replaced rather than followed, a failed or concurrent run never leaves a torn file
 * under the name, and the input a report still reads is never truncated under it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/util.h"

/* path + suffix, allocated; NULL without memory */
static char *with_suffix(const char *path, const char *suffix)
{
	size_t n = strlen(path), m = strlen(suffix);
	char *s = malloc(n + m + 1);

	if (s) {
		memcpy(s, path, n);
		memcpy(s + n, suffix, m + 1);
	}
	return s;
}

/* What a link may lead an output to (/dev/stdout and /dev/stderr are links): a pipe, a
 * terminal (the tty, console and pseudo-terminal majors of the kernel's devices.txt:
 * 4, 5, 136-143) or /dev/null (1:3). Not any device: a link planted in a shared folder
 * must not lead a report run by root to /dev/mem or /dev/kmsg. */
static bool harmless_target(const struct stat *st)
{
	unsigned ma = major(st->st_rdev), mi = minor(st->st_rdev);

	if (S_ISFIFO(st->st_mode))
		return true;
	if (!S_ISCHR(st->st_mode))
		return false;
	return ma == 4 || ma == 5 || (ma >= 136 && ma <= 143) || (ma == 1 && mi == 3);
}

/* A device or a pipe the caller named (/dev/null, a FIFO, through a link when
 * follow): written in place, never created, truncated or replaced. A FIFO without a
 * reader is refused (ENXIO) instead of waited on; what was opened is checked again, so
 * that a link moved to a regular file meanwhile is refused before any write. */
static int open_in_place(struct tc_outfile *o, const char *path, bool follow)
{
	struct stat st;
	int err;

	o->fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
		     (follow ? 0 : O_NOFOLLOW));
	if (o->fd < 0) {
		err = -errno;
		goto out_fail;
	}
	if (fstat(o->fd, &st) != 0) {
		err = -errno;
		goto out_fail;
	}
	if (follow ? !harmless_target(&st) : !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		err = -ELOOP;
		goto out_fail;
	}
	if (fcntl(o->fd, F_SETFL, 0) < 0) {
		err = -errno;
		goto out_fail;
	}
	return 0;
out_fail:
	tc_outfile_abort(o);
	return err;
}

int tc_outfile_open(struct tc_outfile *o, const char *path, unsigned flags)
{
	struct stat st;
	int err;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || !*path)
		return -EINVAL;
	o->flags = flags;
	o->path = tc_strdup(path);
	if (!o->path)
		return -ENOMEM;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			/* A link is not followed to a file: where it points is someone
			 * else's choice, and renaming over it would replace the link
			 * itself; refusing says why (-o - or a shell redirection still
			 * writes anywhere). A link to a pipe, a terminal or /dev/null
			 * (/dev/stdout, /dev/stderr) truncates nothing: it is written in
			 * place. */
			if (stat(path, &st) != 0 || !harmless_target(&st)) {
				err = -ELOOP;
				goto out_fail;
			}
			return open_in_place(o, path, true);
		}
		if (S_ISDIR(st.st_mode)) {
			err = -EISDIR;
			goto out_fail;
		}
		if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
			return open_in_place(o, path, false);
		if (!S_ISREG(st.st_mode)) {
			err = -EPERM;
			goto out_fail;
		}
	} else if (errno != ENOENT) {
		err = -errno;
		goto out_fail;
	}
	/* NAME.tmp-XXXXXX in the same directory (rename(2) stays on one file system),
	 * created with O_EXCL and mode 0600 by mkostemp */
	o->tmp = with_suffix(path, ".tmp-XXXXXX");
	if (!o->tmp) {
		err = -ENOMEM;
		goto out_fail;
	}
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		err = -errno;
		free(o->tmp);
		o->tmp = NULL;
		goto out_fail;
	}
	return 0;
out_fail:
	tc_outfile_abort(o);
	return err;
}

FILE *tc_outfile_stream(struct tc_outfile *o)
{
	if (!o->f && o->fd >= 0)
		o->f = fdopen(o->fd, "w");
	return o->f;
}

int tc_outfile_commit(struct tc_outfile *o)
{
	int err = 0;

	if (o->f) {
		errno = 0;
		if (fflush(o->f) != 0 || ferror(o->f))
			err = errno ? -errno : -EIO;
		if (fclose(o->f) != 0 && !err)
			err = -errno;
		o->f = NULL;
		o->fd = -1;
	} else if (o->fd >= 0) {
		if (close(o->fd) != 0)
			err = -errno;
		o->fd = -1;
	}
	if (!err && o->tmp) {
		if (o->flags & TC_OUTFILE_KEEP_OLD) {
			/* the previous file becomes NAME.old (as perf's perf.data.old);
			 * a link or a directory there is not touched */
			char *old = with_suffix(o->path, ".old");
			struct stat st;
			if (!old) {
				err = -ENOMEM;
			} else if (lstat(o->path, &st) == 0 && S_ISREG(st.st_mode) &&
				   rename(o->path, old) != 0) {
				err = -errno;
			}
			free(old);
		}
		if (!err && rename(o->tmp, o->path) != 0)
			err = -errno;
	}
	if (err && o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return err;
}

void tc_outfile_abort(struct tc_outfile *o)
{
	if (o->f)
		fclose(o->f);
	else if (o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	o->f = NULL;
	o->fd = -1;
	o->tmp = o->path = NULL;
}
