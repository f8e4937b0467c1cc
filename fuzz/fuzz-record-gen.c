/* fuzz-record-gen.c - a structure-aware libFuzzer target for the report: the bytes do not
 * form a record file, they choose one, which the library's own writer then writes with
 * valid sizes and checksums, so that every input reaches the report rather than the
 * checksum test. Events (frequency, trap, data address, call chains), processes that
 * fork, exec, exit and name themselves, mappings of real binaries (/bin/true, tacho's
 * own binary when run from the repository, the vDSO copied in, a path that does not
 * exist) with their real build-ids or wrong ones, samples in and around them, in the
 * kernel, with call chains mixing context markers, DWARF stacks and LBR call stacks
 * after them, period changes, lost and throttle
 * records, with or without the final record. The file then goes through every view:
 * rows by each sort key with and without children, written as table, CSV and JSON,
 * annotate, folded stacks, perf script, each event selected in turn. Checks: a file the
 * writer wrote loads; the self rows of each sort add up to the selected event's
 * samples, and with children no row counts more samples than there are, nor more self
 * than samples; nothing crashes, leaks or reads out of bounds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "record/recfile.h"
#include "symbols/symbols.h"
#include "tacho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input, consumed from the front; zeros once it runs out. */
struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

static unsigned pick(struct in *in, unsigned n)
{
	return (unsigned)(take(in, 1) % n);
}

/* The binaries a mapping may name, with their real build-ids where they have one. */
struct bin {
	const char *path;
	uint64_t base;              /* where the mapping starts */
	uint8_t bid[TC_BUILD_ID_MAX];
	int bidlen;
};

static struct bin bins[] = {
	{ "/bin/true", 0x555555554000ull },
	{ "build/tacho", 0x400000ull },
	{ "[vdso]", 0x7ffff7fc1000ull },
	{ "/nonexistent/fuzz/binary", 0x7f0000000000ull },
	{ "//anon", 0x7f1000000000ull },
};

static const void *vdso;
static size_t vdso_len = 8192;
static char boot_id[64];
static char path[64];

/* A folder in memory when there is one: files are rewritten on every run. */
static const char *fuzz_tmp(void)
{
	return access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}


static void remove_file(void)
{
	unlink(path);
}

static void init(void)
{
	snprintf(path, sizeof(path), "%s/fuzz-record-gen-%d.rec", fuzz_tmp(), (int)getpid());
	atexit(remove_file);
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++) {
		bins[i].bidlen = tc_build_id_of_file(bins[i].path, bins[i].bid, TC_BUILD_ID_MAX);
		if (bins[i].bidlen < 0)
			bins[i].bidlen = 0;
	}
	vdso = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (vdso)
		bins[2].bidlen = tc_build_id_of_image(vdso, vdso_len, bins[2].bid,
						      TC_BUILD_ID_MAX);
	if (bins[2].bidlen < 0)
		bins[2].bidlen = 0;
	tc_read_line_file("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id));
}

static const char *const event_names[] = {
	"cycles", "task-clock", "page-faults", "mem:0x1000:w", "cycles:u", "",
};

/* A string of up to 15 bytes of the input (any bytes but NUL). */
static void take_string(struct in *in, char *buf, size_t max)
{
	size_t len = take(in, 1) % 16;

	if (len >= max)
		len = max - 1;
	for (size_t i = 0; i < len; i++) {
		buf[i] = (char)take(in, 1);
		if (!buf[i])
			buf[i] = '?';
	}
	buf[len] = '\0';
}

static uint64_t take_ip(struct in *in, unsigned *misc)
{
	const struct bin *b = &bins[pick(in, sizeof(bins) / sizeof(bins[0]))];

	switch (pick(in, 8)) {
	case 0:           /* the kernel */
		*misc = PERF_RECORD_MISC_KERNEL;
		return 0xffffffff81000000ull + take(in, 3);
	case 1:           /* anywhere */
		*misc = PERF_RECORD_MISC_USER;
		return take(in, 8);
	default:          /* in or near a mapping */
		*misc = PERF_RECORD_MISC_USER;
		return b->base + take(in, 2) * 2;
	}
}

static void generate(struct in *in)
{
	struct tc_record_writer w;
	uint32_t nev = 1 + pick(in, 3), pids[4] = { 100, 101, 102, 103 };
	char s[16];

	if (tc_record_writer_open(&w, path) != 0)
		return;
	take_string(in, s, sizeof(s));
	tc_record_writer_meta(&w, "command", s);
	/* this boot: kernel samples are then symbolized, but loading /proc/kallsyms takes
	 * most of a run (fuzz-kallsyms fuzzes its reader): rarely */
	if (boot_id[0] && take(in, 1) == 0xb0 && pick(in, 4) == 0)
		tc_record_writer_meta(&w, "boot_id", boot_id);
	for (uint32_t e = 0; e < nev; e++) {
		uint32_t flags = (uint32_t)take(in, 1) & 0x1f;
		/* the fifth bit: simulated (record --sim), whose views say so */
		if (flags & 0x10)
			flags = (flags & 0xf) | TC_EVF_SIM;
		tc_record_writer_event(&w, e, pick(in, 6), take(in, 1),
				       PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
				       take(in, 2) + (pick(in, 4) ? 1 : 0), flags,
				       event_names[pick(in, sizeof(event_names) /
							    sizeof(event_names[0]))]);
	}
	if (vdso && pick(in, 2))
		tc_record_writer_image(&w, bins[2].bid, (unsigned)bins[2].bidlen, "[vdso]", vdso,
				       vdso_len);
	while (in->n) {
		uint32_t pid = pids[pick(in, 4)], tid = pick(in, 4) ? pid : pid + 1000;
		uint64_t time = take(in, 2);
		unsigned misc;

		switch (pick(in, 12)) {
		case 0: {
			const struct bin *b = &bins[pick(in, sizeof(bins) / sizeof(bins[0]))];
			uint8_t bid[TC_BUILD_ID_MAX];
			unsigned bidlen = (unsigned)b->bidlen;
			memcpy(bid, b->bid, sizeof(bid));
			if (pick(in, 8) == 0)
				bid[0] ^= 1;       /* a binary rebuilt since */
			tc_record_writer_mmap(&w, pid, tid, b->base, 0x1000 + take(in, 3),
					      pick(in, 4) ? 0 : take(in, 2) << 12, 5, time, bid,
					      bidlen, b->path);
			break;
		}
		case 1:
			take_string(in, s, sizeof(s));
			tc_record_writer_comm(&w, pid, tid, pick(in, 2), time, s);
			break;
		case 2:
			tc_record_writer_task(&w, pick(in, 2) ? TC_TASK_FORK : TC_TASK_EXIT, pid,
					      pids[pick(in, 4)], tid, pid, time);
			break;
		case 3:
			tc_record_writer_period(&w, pick(in, nev + 1), 1 + take(in, 3), time);
			break;
		case 4:
			tc_record_writer_lost(&w, take(in, 2), time, pick(in, 4));
			break;
		case 5:
			tc_record_writer_throttle(&w, time, pick(in, 4), pick(in, 2));
			break;
		default: {
			uint64_t chain[16], ip = take_ip(in, &misc);
			uint32_t nr = pick(in, 3) ? 0 : 1 + pick(in, 16);
			for (uint32_t i = 0; i < nr; i++) {
				unsigned m;
				switch (pick(in, 6)) {
				case 0:
					chain[i] = (uint64_t)PERF_CONTEXT_USER;
					break;
				case 1:
					chain[i] = (uint64_t)PERF_CONTEXT_KERNEL;
					break;
				case 2:
					chain[i] = (uint64_t)(PERF_CONTEXT_MAX - pick(in, 8));
					break;
				default:
					chain[i] = take_ip(in, &m);
					break;
				}
			}
			tc_record_writer_sample(&w, time, ip, take(in, 8), 1 + take(in, 2), pid,
						tid, pick(in, 4), (uint16_t)pick(in, nev), (uint16_t)misc,
						nr, chain);
			switch (pick(in, 4)) {
			case 0: {
				/* a DWARF sample: the x86-64 registers (IP and SP among them)
				 * and a stack of addresses in and around the binaries, which
				 * the report unwinds through their real CFI */
				uint64_t regs[20], stack[64];
				unsigned nst = pick(in, 65), m, nregs = pick(in, 8) ? 20 : 0;
				for (unsigned i = 0; i < 20; i++)
					regs[i] = pick(in, 2) ? take_ip(in, &m) : take(in, 2);
				regs[7] = 0x7ffd00000000ull + take(in, 1) * 8;   /* SP */
				regs[8] = ip;                                    /* IP */
				for (unsigned i = 0; i < nst; i++)
					stack[i] = pick(in, 2) ? take_ip(in, &m) :
						   0x7ffd00000000ull + take(in, 1) * 8;
				/* no registers: a mask of none, as the writer's records
				 * must be */
				tc_record_writer_ustack(&w, PERF_SAMPLE_REGS_ABI_64,
							nregs ? 0xff0fffull : 0, nregs, regs, stack,
							nst * 8 - (nst ? pick(in, 8) : 0));
				break;
			}
			case 1: {
				/* an LBR call stack */
				uint64_t br[3 * 8];
				uint32_t nb = pick(in, 9);
				unsigned m;
				for (uint32_t i = 0; i < nb; i++) {
					br[3 * i] = take_ip(in, &m);
					br[3 * i + 1] = take_ip(in, &m);
					br[3 * i + 2] = take(in, 1);
				}
				tc_record_writer_branch(&w, nb, br);
				break;
			}
			default:
				break;
			}
			break;
		}
		}
	}
	if (pick(in, 4))
		tc_record_writer_finish(&w, 0, 0, 0, 0);
	tc_record_writer_close(&w);
}

static uint64_t self_samples(struct tacho_profile *p, enum tacho_sort sort)
{
	struct tacho_profile_row *rows;
	uint64_t sum = 0;
	size_t n;

	if (tacho_profile_rows(p, sort, false, &rows, &n, sizeof(*rows)) != 0)
		abort();
	for (size_t i = 0; i < n; i++)
		sum += rows[i].samples;
	free(rows);
	return sum;
}

static void views(struct tacho_profile *p, FILE *null)
{
	struct tacho_profile_info info = { .sz = sizeof(info) };
	struct tacho_profile_row *rows;
	size_t n;

	if (tacho_profile_info(p, &info) != 0)
		abort();
	for (int sort = TACHO_SORT_SYMBOL; sort <= TACHO_SORT_ADDRESS; sort++) {
		if (self_samples(p, (enum tacho_sort)sort) != info.samples)
			abort();
		for (int fmt = 0; fmt < TACHO_FORMAT_COUNT; fmt++)
			tacho_profile_write_rows(p, (enum tacho_sort)sort, sort == 0, null,
						 (enum tacho_format)fmt, NULL);
	}
	if (tacho_profile_rows(p, TACHO_SORT_SYMBOL, true, &rows, &n, sizeof(*rows)) == 0) {
		/* with children a function counts once per sample at most */
		for (size_t i = 0; i < n; i++)
			if (rows[i].samples > info.samples || rows[i].self > rows[i].samples)
				abort();
		if (n) {
			char sym[256];
			snprintf(sym, sizeof(sym), "%s", rows[0].symbol);
			for (int fmt = 0; fmt < TACHO_FORMAT_COUNT; fmt++)
				tacho_profile_write_annotate(p, sym, null, (enum tacho_format)fmt,
							     NULL);
		}
		free(rows);
	}
	tacho_profile_write_folded(p, null);
	tacho_profile_write_script(p, null);
	tacho_profile_write_script_json(p, null);
	tacho_profile_write_pprof(p, null);
	tacho_profile_write_flamegraph(p, null);
	tacho_profile_write_speedscope(p, null);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	struct tacho_profile *p;
	struct tacho_diag d = { .sz = sizeof(d) };
	FILE *null;

	if (!path[0])
		init();
	generate(&in);
	if (tacho_profile_load(path, &p, &d) != 0) {
		fprintf(stderr, "a file the writer wrote does not load: %s\n", d.message);
		abort();
	}
	null = fopen("/dev/null", "w");
	if (null) {
		views(p, null);
		for (int e = 0; e < 3; e++)
			if (tacho_profile_select_event(p, event_names[e]) == 0)
				views(p, null);
		fclose(null);
	}
	tacho_profile_free(p);
	return 0;
}
