/* msr-fake.h - a fake tree of msr devices for the tests: DIR/N/msr as sparse regular files
 * (the library reads register A at byte 8 A of a file, EIO past the end), values poked and
 * peeked there, whole files compared, and a fake /sys beside it for the explanations
 * (lockdown, allow_writes, the module). */
#ifndef TACHO_TEST_MSR_FAKE_H
#define TACHO_TEST_MSR_FAKE_H

#include <stdint.h>
#include <sys/types.h>

struct th_msr_fake {
	char root[64];          /* the temporary folder */
	char dir[96];           /* root/dev: the device tree (DIR/N/msr) */
	char sys[96];           /* root/sys-root: what --sys-root names */
};

/* Makes root/dev/0/msr .. root/dev/(ncpus-1)/msr, each holding the registers below
 * `end` (the file is 8 end bytes long, sparse). */
void th_msr_fake_new(struct th_msr_fake *f, unsigned ncpus, uint64_t end);
/* Removes the whole temporary folder. */
void th_msr_fake_free(struct th_msr_fake *f);
/* CPU cpu's device file. The string is static, overwritten by the next call. */
const char *th_msr_fake_path(const struct th_msr_fake *f, int cpu);
/* Writes / reads register address of CPU cpu's file (fails the test on error). */
void th_msr_poke(const struct th_msr_fake *f, int cpu, uint32_t address, uint64_t value);
uint64_t th_msr_peek(const struct th_msr_fake *f, int cpu, uint32_t address);
/* The whole file of CPU cpu, malloc'd (for small files: byte-for-byte comparisons). */
char *th_msr_fake_snapshot(const struct th_msr_fake *f, int cpu, size_t *len);
/* Writes text to root/sys-root/REL (folders made as needed). */
void th_msr_fake_sys(const struct th_msr_fake *f, const char *rel, const char *text);

#endif
