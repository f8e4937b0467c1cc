/* kallsyms-cache.c - the kernel's own text symbols of this boot, kept in the user's cache
 * folder (kallsyms-BOOT_ID in tacho's cache directory, beside the build-id cache).
 *
 * Reading /proc/kallsyms makes the kernel format its 122k lines: half of a small
 * report's time. The kernel's own symbols do not change during a boot; its modules',
 * BPF programs' and trampolines' do, so they are not kept, and a report that samples an
 * address outside the kernel's own text reads /proc/kallsyms as before. The copy is
 * made from a read that showed the addresses and is the user's alone: written and read
 * only in a folder that is the user's own and that no one else may write (opened once,
 * every file then reached through it, no link followed), created anew (mode 0600) and
 * renamed into place, refused when it is not the user's own or others may write it.
 *
 * The file is kallsyms' own format, so that its reader (fuzzed) reads it, after three
 * header lines:
 *   # tacho kallsyms cache 1
 *   # boot BOOT_ID
 *   # text FIRST END        (hex: the kernel's own text, FIRST up to END excluded)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/symbols.h"
#include "util/util.h"

#define CACHE_MAGIC "# tacho kallsyms cache 1"

/* A boot id as the kernel writes it: 36 characters of hex digits and dashes. */
static bool boot_id_ok(const char *id)
{
	size_t n = strlen(id);

	return n == 36 && strspn(id, "0123456789abcdef-") == n;
}

/* The cache folder, opened: the user's own, a real folder (not a link), written by no
 * one else; with create, made (mode 0700) when missing, under an existing folder of the
 * user's own. The descriptor, or -errno (-EPERM: not safe). */
static int open_dir(char *dir, bool create)
{
	struct stat st;
	int dfd;

	if (create && lstat(dir, &st) != 0 && errno == ENOENT) {
		/* the nearest existing folder above must be the user's: a report run with
		 * sudo and the user's HOME makes no root-owned folder in that home */
		char up[4096];
		char *slash;
		int err;

		snprintf(up, sizeof(up), "%s", dir);
		while ((slash = strrchr(up, '/')) && slash != up) {
			*slash = '\0';
			if (lstat(up, &st) == 0)
				break;
		}
		if (lstat(up, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			return -EPERM;
		err = tc_mkdirs(dir);
		if (err)
			return err;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fstat(dfd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(dfd);
		return -EPERM;
	}
	return dfd;
}

/* The cache's folder and the copy's name in it. */
static int cache_name(const char *boot_id, char *dir, size_t dsize, char *name, size_t nsize)
{
	int err;

	if (!boot_id_ok(boot_id))
		return -EINVAL;
	/* the build-id cache's folder, found as tacho_buildid_cache_dir finds it (none
	 * under AT_SECURE, as without a HOME), from util: the build-id cache calls this
	 * file (its prune removes the copies), never the other way round */
	err = tc_user_cache_dir(dir, dsize);
	if (err)
		return err == -EPERM ? -ENOENT : err;
	snprintf(name, nsize, "kallsyms-%s", boot_id);
	return 0;
}

/* The header's boot and text range, and where the lines after it start; -EINVAL when
 * it is not one. */
static int read_header(int fd, char *boot, size_t bsize, uint64_t *first, uint64_t *end,
		       size_t *body)
{
	char head[256], *nl, *l2, *l3;
	ssize_t got = pread(fd, head, sizeof(head) - 1, 0);
	int n1 = 0;

	if (got <= 0)
		return got < 0 ? -errno : -EINVAL;
	head[got] = '\0';
	nl = strchr(head, '\n');
	if (!nl || (size_t)(nl - head) != strlen(CACHE_MAGIC) || strncmp(head, CACHE_MAGIC, nl - head))
		return -EINVAL;
	l2 = nl + 1;
	if (!(nl = strchr(l2, '\n')))
		return -EINVAL;
	*nl = '\0';
	l3 = nl + 1;
	if (!(nl = strchr(l3, '\n')))
		return -EINVAL;
	*nl = '\0';
	*body = (size_t)(nl + 1 - head);
	if (strncmp(l2, "# boot ", 7) || strlen(l2 + 7) >= bsize)
		return -EINVAL;
	strcpy(boot, l2 + 7);
	if (sscanf(l3, "# text %" SCNx64 " %" SCNx64 "%n", first, end, &n1) != 2 ||
	    (size_t)n1 != strlen(l3) || *first >= *end)
		return -EINVAL;
	return 0;
}

int tc_kallsyms_cache_load(const char *boot_id, uint64_t lo, uint64_t hi,
			   struct tc_kallsyms **out)
{
	char dir[4096], name[64], boot[64];
	uint64_t first, end;
	size_t body = 0;
	struct stat st;
	int dfd, fd, err;

	*out = NULL;
	err = cache_name(boot_id, dir, sizeof(dir), name, sizeof(name));
	if (err)
		return err;
	dfd = open_dir(dir, false);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : 0;
	close(dfd);
	if (err)
		return err == -ELOOP ? -EPERM : err;
	/* a file of the user's own, written by no one else */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		err = -EPERM;
		goto out;
	}
	err = read_header(fd, boot, sizeof(boot), &first, &end, &body);
	if (!err && strcmp(boot, boot_id))
		err = -EINVAL;
	if (err)
		goto out;
	if (lo < first || hi >= end) {
		err = -ERANGE;
		goto out;
	}
	/* the file opened and checked, mapped through its descriptor: no second open,
	 * and only the pages of the symbols looked up are read (5 MB here, some
	 * hundreds of kB read by a report) */
	err = tc_kallsyms_map(fd, body, out);
	if (!err && !tc_kallsyms_lookup(*out, lo, NULL)) {
		tc_kallsyms_free(*out);
		*out = NULL;
		err = -EINVAL;
	}
out:
	close(fd);
	return err;
}

/* Whether a symbol is the kernel's own: a module's is "name [module]" (kallsyms' tab
 * made a space by the reader). */
static bool own(const char *name)
{
	return !strchr(name, ' ');
}

/* Removes the copies in the folder open at dfd but that of keep (a file name, or ""). */
static void forget_at(int dfd, const char *keep)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* "kallsyms-" and a boot id, exactly: not another run's temporary file */
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "kallsyms-", 9) && boot_id_ok(e->d_name + 9) &&
		    strcmp(e->d_name, keep))
			unlinkat(dfd, e->d_name, 0);
	closedir(d);
}

void tc_kallsyms_cache_forget(const char *dir, const char *keep_boot_id)
{
	char d[4096], keep[64] = "";
	int dfd;

	snprintf(d, sizeof(d), "%s", dir);
	dfd = open_dir(d, false);
	if (dfd < 0)
		return;
	if (keep_boot_id)
		snprintf(keep, sizeof(keep), "kallsyms-%s", keep_boot_id);
	forget_at(dfd, keep);
	close(dfd);
}

int tc_kallsyms_cache_save(const struct tc_kallsyms *k, const char *boot_id)
{
	char dir[4096], name[64], tmp[96];
	uint64_t first = 0, end = 0, addr;
	size_t n = tc_kallsyms_count(k);
	int dfd, fd = -1, err;
	FILE *f;

	if (tc_kallsyms_hidden(k) || !n)
		return -EINVAL;
	/* the kernel's own text: from its first symbol to _etext, past its last code */
	for (size_t i = 0; i < n; i++) {
		const char *sym = tc_kallsyms_at(k, i, &addr);

		if (!own(sym))
			continue;
		if (!first)
			first = addr;
		if (!strcmp(sym, "_etext"))
			end = addr;
	}
	if (!first || end <= first)
		return -ENOENT;
	err = cache_name(boot_id, dir, sizeof(dir), name, sizeof(name));
	if (err)
		return err;
	dfd = open_dir(dir, true);
	if (dfd < 0)
		return dfd;
	/* a new file of a name no one else uses, then renamed over the copy's name:
	 * whatever was planted there (a FIFO, a link) is replaced, never written to */
	for (unsigned tries = 0; fd < 0 && tries < 16; tries++) {
		snprintf(tmp, sizeof(tmp), "%s.tmp-%ld-%u", name, (long)getpid(), tries);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = -errno;
		close(dfd);
		return err;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	fprintf(f, CACHE_MAGIC "\n# boot %s\n# text %" PRIx64 " %" PRIx64 "\n", boot_id, first,
		end);
	for (size_t i = 0; i < n; i++) {
		const char *sym = tc_kallsyms_at(k, i, &addr);

		if (own(sym) && addr >= first && addr <= end)
			fprintf(f, "%016" PRIx64 " t %s\n", addr, sym);
	}
	err = fflush(f) || ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -EIO;
	if (!err && renameat(dfd, tmp, dfd, name) != 0)
		err = -errno;
	if (err)
		goto fail;
	forget_at(dfd, name);
	close(dfd);
	return 0;
fail:
	unlinkat(dfd, tmp, 0);
	close(dfd);
	return err;
}

bool tc_kallsyms_head_hidden(const char *text)
{
	for (const char *l = text; l && *l; ) {
		if (strspn(l, "0") < strspn(l, "0123456789abcdef"))
			return false;   /* an address with a digit other than 0 */
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	return true;
}

int tc_kallsyms_cache_prime(void)
{
	struct tc_kallsyms *k;
	char now[64] = "";
	int err;

	if (tc_read_line_file("/proc/sys/kernel/random/boot_id", now, sizeof(now)) || !now[0])
		return -ENOENT;
	/* an address below any kernel's: -ERANGE says a copy of this boot is there */
	err = tc_kallsyms_cache_load(now, 0, 0, &k);
	if (err == 0)
		tc_kallsyms_free(k);
	if (err == 0 || err == -ERANGE)
		return 0;
	if (err != -ENOENT && err != -EINVAL)
		return err;
	/* addresses hidden from this user (kernel.kptr_restrict) are all 0, which the
	 * first lines show (a visible kernel's first symbols may be per-CPU ones at 0,
	 * but not a page of them): no whole read, after every recording, to learn it */
	{
		char head[4096];
		int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, head, sizeof(head) - 1) : -1;
		int e = n < 0 ? errno : ENOENT;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			return -e;
		head[n] = '\0';
		if (tc_kallsyms_head_hidden(head))
			return -EACCES;
	}
	err = tc_kallsyms_load(NULL, &k);
	if (err)
		return err;
	err = tc_kallsyms_hidden(k) ? -EACCES : tc_kallsyms_cache_save(k, now);
	tc_kallsyms_free(k);
	return err;
}
