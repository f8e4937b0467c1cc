/* file.c - reading whole files and the one-value files of sysfs and procfs. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"

/* Reads fd to its end (at most max bytes) and closes it. */
static int read_fd(int fd, char **out, size_t *len, size_t max)
{
	size_t alloc = 4096, n = 0;
	char *buf, *p;
	ssize_t r;
	int err;

	if (!max)
		max = (size_t)256 << 20;
	buf = malloc(alloc);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (n + 1 >= alloc) {
			if (alloc >= max + 1) {
				err = -EFBIG;
				goto out_err;
			}
			alloc = alloc * 2 > max + 1 ? max + 1 : alloc * 2;
			p = realloc(buf, alloc);
			if (!p) {
				err = -ENOMEM;
				goto out_err;
			}
			buf = p;
		}
		r = read(fd, buf + n, alloc - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out_err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;

out_err:
	free(buf);
	close(fd);
	return err;
}

int tc_read_file(const char *path, char **out, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return read_fd(fd, out, len, max);
}

int tc_open_regular(const char *path, struct stat *st)
{
	struct stat s, *t = st ? st : &s, o;
	char self[64];
	int pfd, fd = -1, err = 0;

	/* O_PATH: the type is learnt without opening the file. Opening has effects of its
	 * own for a device or a FIFO (a FIFO waits for a writer, a terminal may become
	 * ours, a tape rewinds, a watchdog starts), and a recording may name any path */
	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, t) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(t->st_mode)) {
		err = S_ISDIR(t->st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	/* the very file whose type was read, opened through its descriptor, whatever the
	 * path names by now; O_NONBLOCK and O_NOCTTY change nothing for a regular file */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) {
		/* no /proc: the path again, and the file it names must be the same one */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd >= 0 && (fstat(fd, &o) || o.st_dev != t->st_dev || o.st_ino != t->st_ino)) {
			close(fd);
			fd = -1;
			errno = EINVAL;
		}
	}
	if (fd < 0)
		err = -errno;
out:
	close(pfd);
	return err ? err : fd;
}

int tc_read_regular_file(const char *path, char **out, size_t *len, size_t max)
{
	struct stat st;
	int fd = tc_open_regular(path, &st);

	if (fd < 0)
		return fd;
	if (max && (uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	return read_fd(fd, out, len, max);
}

int tc_read_line_file(const char *path, char *buf, size_t size)
{
	return tc_read_line_at(AT_FDCWD, path, buf, size);
}

int tc_read_line_at(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t r;
	int fd;

	if (size == 0)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do
		r = read(fd, buf, size - 1);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	close(fd);
	buf[r] = '\0';
	while (r > 0 && (buf[r - 1] == '\n' || buf[r - 1] == ' '))
		buf[--r] = '\0';
	return 0;
}

int tc_read_int_file(const char *path, long long *out)
{
	return tc_read_int_at(AT_FDCWD, path, out);
}

int tc_read_int_at(int dirfd, const char *path, long long *out)
{
	char buf[64];
	int64_t v;
	int err;

	err = tc_read_line_at(dirfd, path, buf, sizeof(buf));
	if (err)
		return err;
	err = tc_parse_i64(tc_trim(buf), &v);
	if (err)
		return err;
	*out = v;
	return 0;
}

int tc_path_lookup(const char *name, char **out)
{
	/* a secure process searches the default path, not its caller's */
	const char *path = tc_env_trusted("PATH", NULL);
	struct tc_sb sb;
	struct stat st;
	int found_err = -ENOENT;

	if (strchr(name, '/')) {
		if (stat(name, &st) < 0)
			return errno == ENOTDIR ? -ENOTDIR : -ENOENT;
		if (!S_ISREG(st.st_mode) || access(name, X_OK) < 0)
			return -EACCES;
		*out = tc_strdup(name);
		return *out ? 0 : -ENOMEM;
	}
	if (!path)
		path = "/usr/bin:/bin";
	tc_sb_init(&sb);
	for (const char *p = path; ; ) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		tc_sb_reset(&sb);
		tc_sb_add(&sb, n ? p : ".", n ? n : 1);
		tc_sb_addf(&sb, "/%s", name);
		if (sb.oom)
			break;
		if (stat(sb.buf, &st) == 0) {
			if (S_ISREG(st.st_mode) && access(sb.buf, X_OK) == 0) {
				*out = tc_sb_detach(&sb);
				return *out ? 0 : -ENOMEM;
			}
			found_err = -EACCES;   /* execvp's answer when only such files exist */
		}
		if (!e)
			break;
		p = e + 1;
	}
	if (sb.oom)
		found_err = -ENOMEM;
	tc_sb_exit(&sb);
	return found_err;
}

void tc_unescape_octal(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;

	if (!size)
		return;
	for (size_t i = 0; i < n && o + 1 < size; i++) {
		if (s[i] == '\\' && i + 3 < n &&
		    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			out[o++] = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
}

int tc_user_cache_dir(char *buf, size_t size)
{
	const char *x, *home;
	int n;

	if (!buf || !size)
		return -EINVAL;
	if (tc_env_secure())
		return -EPERM;
	x = tc_env_trusted("XDG_CACHE_HOME", NULL);
	home = tc_env_trusted("HOME", NULL);
	if (x && x[0] == '/')
		n = snprintf(buf, size, "%s/tacho", x);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/tacho", home);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int tc_mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) && errno != EEXIST) {
			int err = -errno;
			*p = '/';
			return err;
		}
		*p = '/';
	}
	return mkdir(path, 0700) && errno != EEXIST ? -errno : 0;
}
