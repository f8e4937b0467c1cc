/* msr-fake.c - the fake msr device trees of the tests (msr-fake.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "msr-fake.h"

void th_msr_fake_new(struct th_msr_fake *f, unsigned ncpus, uint64_t end)
{
	char path[256];

	snprintf(f->root, sizeof(f->root), "/tmp/tacho-msr.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->dir, sizeof(f->dir), "%s/dev", f->root);
	snprintf(f->sys, sizeof(f->sys), "%s/sys-root", f->root);
	assert_int_equal(mkdir(f->dir, 0755), 0);
	assert_int_equal(mkdir(f->sys, 0755), 0);
	for (unsigned c = 0; c < ncpus; c++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%u", f->dir, c);
		assert_int_equal(mkdir(path, 0755), 0);
		fd = open(th_msr_fake_path(f, (int)c), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, (off_t)(end * 8)), 0);
		close(fd);
	}
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void th_msr_fake_free(struct th_msr_fake *f)
{
	if (f->root[0])
		nftw(f->root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	f->root[0] = '\0';
}

const char *th_msr_fake_path(const struct th_msr_fake *f, int cpu)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%d/msr", f->dir, cpu);
	return path;
}

void th_msr_poke(const struct th_msr_fake *f, int cpu, uint32_t address, uint64_t value)
{
	int fd = open(th_msr_fake_path(f, cpu), O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &value, sizeof(value), (off_t)address * 8),
			 (ssize_t)sizeof(value));
	close(fd);
}

uint64_t th_msr_peek(const struct th_msr_fake *f, int cpu, uint32_t address)
{
	uint64_t v = 0;
	int fd = open(th_msr_fake_path(f, cpu), O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, sizeof(v), (off_t)address * 8), (ssize_t)sizeof(v));
	close(fd);
	return v;
}

char *th_msr_fake_snapshot(const struct th_msr_fake *f, int cpu, size_t *len)
{
	char *buf = NULL;

	assert_int_equal(th_read_data(th_msr_fake_path(f, cpu), &buf, len), 0);
	return buf;
}

void th_msr_fake_sys(const struct th_msr_fake *f, const char *rel, const char *text)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", f->sys, rel);
	/* the folders on the way */
	for (char *p = strchr(path + strlen(f->sys) + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			fail_msg("cannot make %s: %s", path, strerror(errno));
		*p = '/';
	}
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}
