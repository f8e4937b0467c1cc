/* kallsyms-cache.c - the kernel's own text symbols of this boot, kept in the user's cache
 * folder (kallsyms-BOOT_ID in tacho's cache directory, beside the build-id cache).
 *
 * Reading /proc/kallsyms makes the kernel format its 122k lines: half of a small
 * report's time. The kernel's own symbols do not change during a boot; its modules',
 * BPF programs' and trampolines' do, so they are not kept, and a report that samples an
 * address outside the kernel's own text reads /proc/kallsyms as before. The copy is
 * made from a read that showed the addresses, is the user's alone (mode 0600 in a 0700
 * folder) and is refused when it is not the user's own or others may write it.
 *
 * The file is kallsyms' own format, so that its reader (fuzzed) reads it, after three
 * header lines:
 *   # tacho kallsyms cache 1
 *   # boot BOOT_ID
 *   # text FIRST END        (hex: the kernel's own text, FIRST up to END excluded)
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sample/symbols.h"
#include "tacho/sample.h"
#include "util/util.h"

#define CACHE_MAGIC "# tacho kallsyms cache 1"

/* A boot id as the kernel writes it: 36 characters of hex digits and dashes. */
static bool boot_id_ok(const char *id)
{
	size_t n = strlen(id);

	return n == 36 && strspn(id, "0123456789abcdef-") == n;
}

static int cache_path(const char *boot_id, char *buf, size_t size, char *dir, size_t dsize)
{
	int n, err;

	if (!boot_id_ok(boot_id))
		return -EINVAL;
	err = tacho_buildid_cache_dir(dir, dsize);
	if (err)
		return err;
	n = snprintf(buf, size, "%s/kallsyms-%s", dir, boot_id);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The header's boot and text range; -EINVAL when it is not one. */
static int read_header(int fd, char *boot, size_t bsize, uint64_t *first, uint64_t *end)
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
	char path[4096], dir[4096], boot[64], fdpath[64];
	uint64_t first, end;
	struct stat st;
	int fd, err;

	*out = NULL;
	err = cache_path(boot_id, path, sizeof(path), dir, sizeof(dir));
	if (err)
		return err;
	fd = tc_open_regular(path, &st);
	if (fd < 0)
		return fd;
	/* the user's own, written by no one else */
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		err = -EPERM;
		goto out;
	}
	err = read_header(fd, boot, sizeof(boot), &first, &end);
	if (err)
		goto out;
	if (strcmp(boot, boot_id) || lo < first || hi >= end) {
		err = -ENOENT;
		goto out;
	}
	/* the file opened and checked, read through its descriptor: no second open */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	err = tc_kallsyms_load(fdpath, out);
	if (!err && (tc_kallsyms_hidden(*out) || !tc_kallsyms_lookup(*out, lo, NULL))) {
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

void tc_kallsyms_cache_forget(const char *dir, const char *keep_boot_id)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char keep[64] = "";

	if (!d)
		return;
	if (keep_boot_id)
		snprintf(keep, sizeof(keep), "kallsyms-%s", keep_boot_id);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "kallsyms-", 9) && strcmp(e->d_name, keep))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

int tc_kallsyms_cache_save(const struct tc_kallsyms *k, const char *boot_id)
{
	char path[4096], dir[4096];
	uint64_t first = 0, end = 0, addr;
	struct tc_outfile o;
	FILE *f;
	size_t n = tc_kallsyms_count(k);
	int err;

	if (tc_kallsyms_hidden(k) || !n)
		return -EINVAL;
	/* the kernel's own text: from its first symbol to _etext, past its last code */
	for (size_t i = 0; i < n; i++) {
		const char *name = tc_kallsyms_at(k, i, &addr);

		if (!own(name))
			continue;
		if (!first)
			first = addr;
		if (!strcmp(name, "_etext"))
			end = addr;
	}
	if (!first || end <= first)
		return -ENOENT;
	err = cache_path(boot_id, path, sizeof(path), dir, sizeof(dir));
	if (!err)
		err = tc_mkdirs(dir);
	if (!err)
		err = tc_outfile_open(&o, path, 0);
	if (err)
		return err;
	f = tc_outfile_stream(&o);
	if (!f) {
		tc_outfile_abort(&o);
		return -ENOMEM;
	}
	fprintf(f, CACHE_MAGIC "\n# boot %s\n# text %" PRIx64 " %" PRIx64 "\n", boot_id, first, end);
	for (size_t i = 0; i < n; i++) {
		const char *name = tc_kallsyms_at(k, i, &addr);

		if (own(name) && addr >= first && addr <= end)
			fprintf(f, "%016" PRIx64 " t %s\n", addr, name);
	}
	if (fflush(f) || ferror(f)) {
		tc_outfile_abort(&o);
		return -EIO;
	}
	err = tc_outfile_commit(&o);
	if (!err)
		tc_kallsyms_cache_forget(dir, boot_id);
	return err;
}
