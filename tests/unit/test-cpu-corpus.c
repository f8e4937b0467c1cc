/* test-cpu-corpus.c - tacho_cpu_decode against libcpuid's test corpus: every x86 dump in
 * shared/data/libcpuid (.test and .test.xz), cut before the first line of 80 dashes as
 * a user would have it, decoded, and compared with libcpuid's expected blocks (one per
 * core kind or per package): display family and model, stepping, cores and logical
 * CPUs, and each cache's size, ways, line size and instances. A disagreement must be
 * in the table of known differences below, with the reason tacho is right. */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "cpu/cpuid.h"
#include "util/util.h"

#define CORPUS "shared/data/libcpuid"

/* The fields compared, in the order of the expected block's lines. */
enum field {
	F_FAMILY, F_MODEL, F_STEPPING, F_CORES, F_LOGICAL,
	F_L1D, F_L1I, F_L2, F_L3, F_L4,
	F_L1D_WAYS, F_L1I_WAYS, F_L2_WAYS, F_L3_WAYS, F_L4_WAYS,
	F_L1D_LINE, F_L1I_LINE, F_L2_LINE, F_L3_LINE, F_L4_LINE,
	F_L1D_INST, F_L1I_INST, F_L2_INST, F_L3_INST, F_L4_INST,
	F_COUNT
};

static const char *const field_names[F_COUNT] = {
	"family", "model", "stepping", "cores", "logical",
	"l1d-size", "l1i-size", "l2-size", "l3-size", "l4-size",
	"l1d-ways", "l1i-ways", "l2-ways", "l3-ways", "l4-ways",
	"l1d-line", "l1i-line", "l2-line", "l3-line", "l4-line",
	"l1d-instances", "l1i-instances", "l2-instances", "l3-instances", "l4-instances",
};

/* Line numbers (0-based) in the 34-line block: extfamily 6, extmodel 7, stepping 5,
 * cores 8, logical 9, sizes 10-14, ways 15-19, lines 20-24, instances 25-29. */
static const int field_line[F_COUNT] = {
	6, 7, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
	25, 26, 27, 28, 29,
};

/* Where tacho and libcpuid disagree and tacho is right. `block` is the 0-based expected
 * block (-1: every block of the file). */
struct known {
	const char *file;     /* path under the corpus */
	int block;
	enum field field;
	const char *reason;
};

static const struct known known[] = {
	{ NULL, 0, 0, NULL },
};

struct tally {
	unsigned agree[F_COUNT], total[F_COUNT];
	unsigned files, blocks, known_used, failures;
	double decode_s, parse_s;
	struct tc_sb report;
};

static struct tally T;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int read_any(const char *path, char **out, size_t *len)
{
	size_t n = strlen(path);

	if (n > 3 && strcmp(path + n - 3, ".xz") == 0) {
		/* The test (not the library) may run a program: xz is on every Debian. */
		char cmd[1200];
		struct tc_sb sb = TC_SB_INIT;
		FILE *p;
		char buf[65536];
		size_t got;
		int st;

		snprintf(cmd, sizeof(cmd), "xz -dc '%s'", path);
		p = popen(cmd, "r");
		if (!p)
			return -errno;
		tc_sb_init(&sb);
		while ((got = fread(buf, 1, sizeof(buf), p)) > 0)
			tc_sb_add(&sb, buf, got);
		st = pclose(p);
		if (st != 0 || sb.oom) {
			tc_sb_exit(&sb);
			return -EIO;
		}
		*len = sb.len;
		*out = tc_sb_detach(&sb);
		return 0;
	}
	return tc_read_file(path, out, len, 0);
}

static const struct known *find_known(const char *rel, int block, enum field f)
{
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (known[i].file && strcmp(known[i].file, rel) == 0 &&
		    (known[i].block == -1 || known[i].block == block) && known[i].field == f)
			return &known[i];
	return NULL;
}

static const struct tacho_cpu_cache *find_cache(const struct tacho_cpu_core_type *ct,
						unsigned level, int type)
{
	for (unsigned i = 0; i < ct->ncaches; i++) {
		const struct tacho_cpu_cache *c = &ct->caches[i];
		if (c->level != level)
			continue;
		if (type == 0 ? c->type != TACHO_CACHE_INSTRUCTION : (int)c->type == type)
			return c;
	}
	return NULL;
}

/* tacho's value of field f for core type ct; -2 when tacho does not know. */
static long ours(const struct tacho_cpu_info *info, const struct tacho_cpu_core_type *ct,
		 enum field f)
{
	static const struct { unsigned level; int type; } which[5] = {
		{ 1, TACHO_CACHE_DATA }, { 1, TACHO_CACHE_INSTRUCTION }, { 2, 0 }, { 3, 0 }, { 4, 0 },
	};
	const struct tacho_cpu_cache *c;
	int k;

	switch (f) {
	case F_FAMILY: return info->family;
	case F_MODEL: return info->model;
	case F_STEPPING: return info->stepping;
	case F_CORES: return ct->cores ? (long)ct->cores : -2;
	case F_LOGICAL: return ct->threads ? (long)ct->threads : -2;
	default: break;
	}
	k = (f - F_L1D) % 5;
	c = find_cache(ct, which[k].level, which[k].type);
	if (f >= F_L1D_INST)
		return c ? c->instances : 0;
	if (!c)
		return -1;
	if (f < F_L1D_WAYS)
		return (long)(c->size / 1024);
	if (f < F_L1D_LINE)
		return c->fully_assoc ? 0xff : (long)c->ways;
	return c->line_size;
}

static void check_block(const char *rel, int bi, char **lines, const struct tacho_cpu_info *info)
{
	const struct tacho_cpu_core_type *ct = &info->core_types[0];
	const char *purpose = lines[2];

	/* one block per kind of core: match the kind; otherwise (several packages, or
	 * a part libcpuid calls "performance" that is not hybrid) the only kind */
	for (unsigned k = 0; k < info->ncore_types; k++)
		if (strcmp(tacho_core_kind_name(info->core_types[k].kind), purpose) == 0)
			ct = &info->core_types[k];
	for (int f = 0; f < F_COUNT; f++) {
		long want = strtol(lines[field_line[f]], NULL, 10);
		long got = ours(info, ct, (enum field)f);
		const struct known *kn;

		if (want == -1 && f != F_L1D && f < F_L1D_INST)
			continue;
		if (want == -1)
			continue;
		T.total[f]++;
		/* libcpuid writes 0 for the size of a cache that does not exist */
		if (f >= F_L1D && f <= F_L4 && want == 0 && got == -1)
			got = 0;
		if (got == want) {
			T.agree[f]++;
			continue;
		}
		kn = find_known(rel, bi, (enum field)f);
		if (kn) {
			T.known_used++;
			continue;
		}
		T.failures++;
		tc_sb_addf(&T.report, "%s [block %d, %s]: %s: tacho %ld, libcpuid %ld\n", rel, bi,
			   purpose, field_names[f], got, want);
	}
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	const char *root = th_path(CORPUS);
	const char *rel = path + strlen(root) + 1;
	char *buf = NULL, *p, *cut = NULL;
	size_t len;
	struct tacho_cpuid_dump *d = NULL;
	struct tacho_diag diag = { 0 };
	struct tacho_cpu_info info;
	double t0;
	int err, bi = 0;
	(void)st;

	if (flag == FTW_D && strcmp(base, "arm") == 0)
		return FTW_SKIP_SUBTREE;
	if (flag != FTW_F)
		return FTW_CONTINUE;
	if (!strstr(base, ".test"))
		return FTW_CONTINUE;   /* README.md, SOURCE.md, COPYING */
	err = read_any(path, &buf, &len);
	if (err) {
		tc_sb_addf(&T.report, "%s: cannot read: %s\n", rel, tacho_strerror(err));
		T.failures++;
		return FTW_CONTINUE;
	}
	for (p = buf; p < buf + len;) {
		char *nl = memchr(p, '\n', (size_t)(buf + len - p));
		size_t n = (size_t)((nl ? nl : buf + len) - p);
		if (n && p[n - 1] == '\r')
			n--;
		if (n == 80 && strspn(p, "-") >= 80) {
			cut = p;
			break;
		}
		p = nl ? nl + 1 : buf + len;
	}
	if (!cut) {
		tc_sb_addf(&T.report, "%s: no expected block\n", rel);
		T.failures++;
		free(buf);
		return FTW_CONTINUE;
	}
	t0 = now();
	err = tacho_cpuid_dump_parse(buf, (size_t)(cut - buf), rel, &d, &diag);
	T.parse_s += now() - t0;
	if (err) {
		tc_sb_addf(&T.report, "%s: parse: %s (%s:%u: %s)\n", rel, tacho_strerror(err),
			   diag.source, diag.line, diag.message);
		T.failures++;
		free(buf);
		return FTW_CONTINUE;
	}
	t0 = now();
	err = tacho_cpu_decode(d, &info);
	T.decode_s += now() - t0;
	if (err) {
		tc_sb_addf(&T.report, "%s: decode: %s\n", rel, tacho_strerror(err));
		T.failures++;
		tacho_cpuid_dump_free(d);
		free(buf);
		return FTW_CONTINUE;
	}
	T.files++;
	/* the blocks: a dash line, then 34 lines */
	for (p = cut; p && p < buf + len; bi++) {
		char *lines[34];
		int n = 0;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
		while (n < 34 && p && p < buf + len) {
			char *nl = strchr(p, '\n');
			lines[n++] = p;
			if (nl)
				*nl = '\0';
			p = nl ? nl + 1 : NULL;
		}
		if (n < 34) {
			tc_sb_addf(&T.report, "%s: block %d has %d lines\n", rel, bi, n);
			T.failures++;
			break;
		}
		if (strcmp(lines[0], "x86") != 0)
			continue;
		T.blocks++;
		check_block(rel, bi, lines, &info);
	}
	tacho_cpu_info_exit(&info);
	tacho_cpuid_dump_free(d);
	free(buf);
	return FTW_CONTINUE;
}

static void test_corpus(void **state)
{
	unsigned agree = 0, total = 0;
	struct stat st;
	(void)state;

	if (stat(th_path(CORPUS), &st) != 0)
		TEST_SKIP("the libcpuid corpus is not at %s", th_path(CORPUS));
	memset(&T, 0, sizeof(T));
	tc_sb_init(&T.report);
	{
		char root[4096];
		snprintf(root, sizeof(root), "%s", th_path(CORPUS));
		assert_int_equal(nftw(root, visit, 16, FTW_PHYS | FTW_ACTIONRETVAL), 0);
	}
	printf("corpus: %u files, %u expected blocks\n", T.files, T.blocks);
	for (int f = 0; f < F_COUNT; f++) {
		printf("  %-14s %4u of %4u\n", field_names[f], T.agree[f], T.total[f]);
		agree += T.agree[f];
		total += T.total[f];
	}
	printf("agreement: %u of %u fields (%.2f%%); %u more explained by known differences\n",
	       agree, total, total ? 100.0 * agree / total : 0.0, T.known_used);
	printf("time: parse %.1f ms, decode %.1f ms for the whole corpus\n", T.parse_s * 1e3,
	       T.decode_s * 1e3);
	if (T.failures) {
		fputs(T.report.buf, stdout);
		fflush(stdout);
		fail_msg("%u disagreements with libcpuid that the known-differences table does "
			 "not explain", T.failures);
	}
	tc_sb_exit(&T.report);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
