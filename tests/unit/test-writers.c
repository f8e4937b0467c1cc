/* test-writers.c - every writer of the library called without the command line, on fixed
 * inputs (a CPUID dump, a record file written here, a stat session of a tiny program and
 * a hand-filled interval, the event walk over the fake sysfs tree, a hand-filled doctor
 * list, regions and a benchmark of this process, a memory-hierarchy result built from a
 * synthetic curve, live frames of this process and of the machine, MSR values and rates on a fake device tree and the MSR table, a
 * trace): each JSON document is checked against its schema in docs/schemas.md (every
 * key listed with its type, every listed key present, "version" 1), each CSV against
 * its header there, the SVG by xmllint; then the write options. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "msr-fake.h"
#include "tacho.h"
#include "record/recfile.h"
#include "symbols/symbols.h"
#include "cache/cache.h"
#include "regions/bench.h"
#include "util/util.h"

/* --- the schemas of docs/schemas.md --- */

#define T_STRING (1u << TH_JSON_STRING)
#define T_NUMBER (1u << TH_JSON_NUMBER)
#define T_BOOL (1u << TH_JSON_BOOL)
#define T_NULL (1u << TH_JSON_NULL)
#define T_OBJECT (1u << TH_JSON_OBJECT)
#define T_ARRAY (1u << TH_JSON_ARRAY)
#define T_INT (1u << 16)             /* a number written without fraction or exponent */

struct key {
	char path[160];              /* "events[].name", "regions[].events.*" */
	unsigned types;
	bool optional;
};

struct schema {
	struct key keys[160];
	size_t n;
};

static char *schemas_page;

static const char *page(void)
{
	size_t len;

	if (!schemas_page)
		assert_int_equal(th_read_data(th_path("docs/schemas.md"), &schemas_page, &len), 0);
	return schemas_page;
}

static unsigned parse_types(const char *s, size_t n)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "string", T_STRING }, { "int", T_INT }, { "number", T_NUMBER },
		{ "bool", T_BOOL }, { "null", T_NULL }, { "object", T_OBJECT },
		{ "array", T_ARRAY },
	};
	unsigned mask = 0;

	while (n) {
		size_t w = 0, i;
		while (w < n && s[w] != '|')
			w++;
		for (i = 0; i < ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == w && !strncmp(names[i].name, s, w))
				break;
		if (i == ARRAY_SIZE(names))
			fail_msg("docs/schemas.md: unknown type '%.*s'", (int)w, s);
		mask |= names[i].bit;
		s += w + (w < n);
		n -= w + (w < n);
	}
	return mask;
}

/* The ```schema NAME block: "PATH TYPES what it is" per line. */
static void load_schema(const char *name, struct schema *sc)
{
	char head[64];
	const char *p, *end;

	snprintf(head, sizeof(head), "```schema %s\n", name);
	p = strstr(page(), head);
	if (!p)
		fail_msg("docs/schemas.md has no schema '%s'", name);
	p += strlen(head);
	end = strstr(p, "```");
	assert_non_null(end);
	sc->n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *q = p, *t;
		struct key *k;
		size_t len;

		if (!nl)
			nl = end;
		while (q < nl && *q != ' ')
			q++;
		assert_true(sc->n < ARRAY_SIZE(sc->keys));
		k = &sc->keys[sc->n++];
		len = (size_t)(q - p);
		k->optional = len && p[len - 1] == '?';
		if (k->optional)
			len--;
		assert_true(len > 0 && len < sizeof(k->path));
		memcpy(k->path, p, len);
		k->path[len] = '\0';
		while (q < nl && *q == ' ')
			q++;
		t = q;
		while (q < nl && *q != ' ')
			q++;
		k->types = parse_types(t, (size_t)(q - t));
		p = nl + 1;
	}
	assert_true(sc->n > 1);
}

static const struct key *find_key(const struct schema *sc, const char *path)
{
	for (size_t i = 0; i < sc->n; i++)
		if (!strcmp(sc->keys[i].path, path))
			return &sc->keys[i];
	return NULL;
}

/* The key of path; an element "a[]" not listed itself is an object when keys
 * "a[].x" are (the tables list the members, not the element). */
static const struct key *element_key(const struct schema *sc, const char *path, struct key *tmp)
{
	const struct key *k = find_key(sc, path);
	size_t n = strlen(path);

	if (k)
		return k;
	for (size_t i = 0; i < sc->n; i++)
		if (!strncmp(sc->keys[i].path, path, n) && sc->keys[i].path[n] == '.') {
			snprintf(tmp->path, sizeof(tmp->path), "%s", path);
			tmp->types = T_OBJECT;
			tmp->optional = false;
			return tmp;
		}
	return NULL;
}

static const char *type_name(const struct th_json *v)
{
	static const char *const names[] = {
		[TH_JSON_NULL] = "null", [TH_JSON_BOOL] = "bool", [TH_JSON_NUMBER] = "number",
		[TH_JSON_STRING] = "string", [TH_JSON_ARRAY] = "array", [TH_JSON_OBJECT] = "object",
	};

	if (v->type == TH_JSON_NUMBER && v->integer)
		return "int";
	return names[v->type];
}

static bool type_ok(const struct th_json *v, unsigned types)
{
	if (v->type == TH_JSON_NUMBER && v->integer && (types & T_INT))
		return true;
	return types & (1u << v->type);
}

/* Checks node (at schema path, "" for the root) and everything under it. */
static void check_node(const struct schema *sc, const char *name, const struct th_json *node,
		       const char *path)
{
	char child[160], wild[160];
	struct key tmp;

	if (node->type == TH_JSON_ARRAY) {
		snprintf(child, sizeof(child), "%s[]", path);
		for (size_t i = 0; i < node->n; i++) {
			const struct key *k = element_key(sc, child, &tmp);
			if (!k) {
				fail_msg("schema %s: %s is not in docs/schemas.md", name, child);
				return;
			}
			if (!type_ok(node->items[i], k->types))
				fail_msg("schema %s: %s is %s, not a type docs/schemas.md gives it",
					 name, child, type_name(node->items[i]));
			check_node(sc, name, node->items[i], child);
		}
		return;
	}
	if (node->type != TH_JSON_OBJECT)
		return;
	snprintf(wild, sizeof(wild), "%s%s*", path, *path ? "." : "");
	for (size_t i = 0; i < node->n; i++) {
		const struct th_json *m = node->items[i];
		const struct key *k;

		if (find_key(sc, wild))
			snprintf(child, sizeof(child), "%s", wild);
		else
			snprintf(child, sizeof(child), "%s%s%s", path, *path ? "." : "", m->key);
		k = find_key(sc, child);
		if (!k) {
			fail_msg("schema %s: key %s is not in docs/schemas.md", name, child);
			return;
		}
		if (!type_ok(m, k->types))
			fail_msg("schema %s: %s is %s, not a type docs/schemas.md gives it", name,
				 child, type_name(m));
		check_node(sc, name, m, child);
	}
	if (find_key(sc, wild))
		return;
	/* every key listed under this object without '?' is in it */
	for (size_t i = 0; i < sc->n; i++) {
		const struct key *k = &sc->keys[i];
		size_t pl = strlen(path);
		const char *last;
		bool found = false;

		if (k->optional || strncmp(k->path, path, pl) || (pl && k->path[pl] != '.'))
			continue;
		last = k->path + pl + (pl ? 1 : 0);
		if (strchr(last, '.') || strchr(last, '[') || !strcmp(last, "*"))
			continue;
		for (size_t j = 0; j < node->n; j++)
			found |= !strcmp(node->items[j]->key, last);
		if (!found)
			fail_msg("schema %s: %s is missing, docs/schemas.md says it is always there",
				 name, k->path);
	}
}

/* Parses text, checks it against schema name and "version": 1; the caller frees. */
static struct th_json *check_json(const char *text, const char *name)
{
	struct schema *sc = calloc(1, sizeof(*sc));
	struct th_json *doc;

	assert_non_null(sc);
	load_schema(name, sc);
	doc = assert_json(text);
	if (find_key(sc, "version"))
		assert_json_int(doc, "version", 1);
	check_node(sc, name, doc, "");
	free(sc);
	return doc;
}

/* The documented CSV header of name, with sep for ','. */
static void csv_header(const char *name, char sep, char *buf, size_t size)
{
	const char *p = strstr(page(), "```csv-headers\n");
	size_t n = strlen(name);

	assert_non_null(p);
	for (p = strchr(p, '\n') + 1; strncmp(p, "```", 3); p = strchr(p, '\n') + 1) {
		if (strncmp(p, name, n) || p[n] != ' ')
			continue;
		p += n;
		while (*p == ' ')
			p++;
		snprintf(buf, size, "%.*s\n", (int)strcspn(p, "\n"), p);
		for (char *c = buf; *c; c++)
			if (*c == ',')
				*c = sep;
		return;
	}
	fail_msg("docs/schemas.md has no CSV header for '%s'", name);
}

static void assert_csv_header(const char *text, const char *name, char sep)
{
	char want[512];

	csv_header(name, sep, want, sizeof(want));
	if (strncmp(text, want, strlen(want)))
		fail_msg("CSV of %s: the first line is not the header of docs/schemas.md:\n%s"
			 "want:\n%s", name, text, want);
}

/* --- capturing what a writer writes --- */

struct buf {
	char *s;
	size_t len;
	FILE *f;
};

static FILE *buf_open(struct buf *b)
{
	b->s = NULL;
	b->len = 0;
	b->f = open_memstream(&b->s, &b->len);
	assert_non_null(b->f);
	return b->f;
}

static char *buf_close(struct buf *b)
{
	assert_int_equal(fclose(b->f), 0);
	return b->s;
}

/* The tacho command's words, so that the library's table can be held against the
 * golden output of the command. */
static const char *cli_words(void *arg, enum tacho_hint hint)
{
	(void)arg;
	if (hint == TACHO_HINT_CACHE)
		return "'tacho cache' measures it";
	if (hint == TACHO_HINT_MACHINE)
		return "see 'tacho doctor'";
	return NULL;
}

static const struct tacho_write_opts cli_opts = { .sz = sizeof(cli_opts), .hint_words = cli_words };

/* The stdout part of a golden file of tests/golden/expected. */
static char *golden_stdout(const char *name)
{
	char rel[128], *text, *cut;
	size_t len;

	snprintf(rel, sizeof(rel), "tests/golden/expected/%s", name);
	assert_int_equal(th_read_data(th_path(rel), &text, &len), 0);
	cut = strstr(text, "--- stderr\n");
	assert_non_null(cut);
	*cut = '\0';
	return text;
}

/* --- cpu: a decoded dump --- */

static void test_cpu(void **state)
{
	struct tacho_cpuid_dump *dump;
	struct tacho_cpu_info info = { .sz = sizeof(info) };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_cpu_disagreement item = { .what = "L3", .text = "L3: CPUID says one thing" };
	struct tacho_cpu_crosscheck x = { .sz = sizeof(x), .checked = 7, .n = 1, .items = &item };
	struct tacho_cpu_view v = { .sz = sizeof(v), .info = &info };
	struct th_json *doc;
	struct buf b;
	char *golden;
	(void)state;

	assert_int_equal(tacho_cpuid_dump_load(th_path("tests/data/cpuid/kvm-epyc-2cpu.cpuid-r"),
					       &dump, &diag), 0);
	assert_int_equal(tacho_cpu_decode(dump, &info), 0);

	/* the table is the command's, byte for byte, once the hints get its words */
	assert_int_equal(tacho_cpu_write(&v, buf_open(&b), TACHO_FORMAT_TABLE, &cli_opts), 0);
	golden = golden_stdout("cpu-epyc.txt");
	assert_string_equal(buf_close(&b), golden);
	free(golden);
	free(b.s);
	/* without words for the hint the library names no command */
	assert_int_equal(tacho_cpu_write(&v, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_not_contains(buf_close(&b), "'tacho");
	assert_contains(b.s, "latency curve\n");
	free(b.s);

	assert_int_equal(tacho_cpu_write(&v, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "cpu");
	golden = golden_stdout("cpu-epyc.json");
	assert_string_equal(b.s, golden);
	free(golden);
	assert_json_str(doc, "dump", "file");
	assert_json_type(doc, "crosscheck", TH_JSON_NULL);
	th_json_free(doc);
	free(b.s);

	/* a live view with the kernel's word: the crosscheck object */
	v.live = true;
	v.crosscheck = &x;
	v.tsc_hz = 2.5e9;
	v.tsc_source = TACHO_TSC_FREQ_CALIBRATED;
	assert_int_equal(tacho_cpu_write(&v, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "cpu");
	assert_json_str(doc, "dump", "live");
	assert_json_int(doc, "crosscheck.checked", 7);
	assert_json_str(doc, "crosscheck.disagreements[0].what", "L3");
	assert_json_int(doc, "tsc.hz", 2500000000);
	assert_json_str(doc, "tsc.source", "calibrated");
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_cpu_write(&v, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "cross-check with the kernel: L3: CPUID says one thing");
	assert_contains(b.s, "was asked about 7\n");
	free(b.s);

	/* a description is not a table; bad arguments are refused */
	assert_int_equal(tacho_cpu_write(&v, stdout, TACHO_FORMAT_CSV, NULL), -EOPNOTSUPP);
	assert_int_equal(tacho_cpu_write(&v, stdout, TACHO_FORMAT_COUNT, NULL), -EINVAL);
	assert_int_equal(tacho_cpu_write(NULL, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	v.sz = 1;
	assert_int_equal(tacho_cpu_write(&v, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	tacho_cpu_info_exit(&info);
	tacho_cpuid_dump_free(dump);
}

/* --- report: a record file written here, of samples in a function of this program --- */

__attribute__((noinline)) void writers_hot(void);
__attribute__((noinline)) void writers_hot(void)
{
	__asm__ volatile("" ::: "memory");
}

/* The executable mapping of this program: start, length, file offset, path. */
static bool self_text(uint64_t *start, uint64_t *len, uint64_t *pgoff, char *path, size_t size)
{
	char exe[PATH_MAX], *maps, *line;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t mlen;
	uintptr_t ip = (uintptr_t)writers_hot;

	if (n <= 0 || tc_read_file("/proc/self/maps", &maps, &mlen, 1 << 24))
		return false;
	exe[n] = '\0';
	for (line = strtok(maps, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long lo, hi, off;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s %lx", &lo, &hi, perms, &off) == 4 && perms[2] == 'x' &&
		    strstr(line, exe) && ip >= lo && ip < hi) {
			*start = lo;
			*len = hi - lo;
			*pgoff = off;
			snprintf(path, size, "%s", exe);
			free(maps);
			return true;
		}
	}
	free(maps);
	return false;
}

static char tmpdir[64];

/* A recording of 3 samples in writers_hot: of period 1 each, or simulated (the event's
 * flags say so: periods 1000, 2000 and 3000, as record --sim writes them). */
static int make_recording(const char *file, bool simulated)
{
	static const uint8_t no_bid[1];
	uint64_t start, len, pgoff;
	char exe[PATH_MAX];
	struct tc_record_writer w;
	int fd;

	if (!self_text(&start, &len, &pgoff, exe, sizeof(exe)))
		return -ENOENT;
	fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_meta(&w, "command", "./test-writers");
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			       PERF_SAMPLE_IP, 1, simulated ? TC_EVF_SIM : 0, "page-faults");
	tc_record_writer_mmap(&w, 100, 100, start, len, pgoff, 5, 10, no_bid, 0, exe);
	tc_record_writer_comm(&w, 100, 100, true, 11, "test-writers");
	for (unsigned i = 0; i < 3; i++)
		tc_record_writer_sample(&w, 20 + i, (uintptr_t)writers_hot, 0,
					simulated ? 1000 * (i + 1) : 1, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_finish(&w, 3, 0, 30, 0);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	tc_record_writer_close(&w);
	return 0;
}

static void test_report(void **state)
{
	static const enum tacho_sort sorts[] = { TACHO_SORT_SYMBOL, TACHO_SORT_DSO,
						 TACHO_SORT_LINE, TACHO_SORT_ADDRESS };
	struct tacho_profile *p;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct th_json *doc;
	char file[128];
	struct buf b;
	(void)state;

	snprintf(file, sizeof(file), "%s/w.rec", tmpdir);
	if (make_recording(file, false))
		TEST_SKIP("the executable mapping of this program is not in /proc/self/maps");
	assert_int_equal(tacho_profile_load(file, &p, &diag), 0);

	for (size_t i = 0; i < ARRAY_SIZE(sorts); i++) {
		assert_int_equal(tacho_profile_write_rows(p, sorts[i], false, buf_open(&b),
							  TACHO_FORMAT_JSON, NULL), 0);
		doc = check_json(buf_close(&b), "report");
		assert_json_int(doc, "samples", 3);
		assert_json_int(doc, "rows[0].samples", 3);
		if (sorts[i] != TACHO_SORT_DSO)
			assert_json_str(doc, "rows[0].symbol", "writers_hot");
		if (sorts[i] == TACHO_SORT_ADDRESS)
			assert_json_type(doc, "rows[0].address", TH_JSON_NUMBER);
		th_json_free(doc);
		free(b.s);
	}
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_SYMBOL, true, buf_open(&b),
						  TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "report");
	assert_json_int(doc, "rows[0].self", 3);
	th_json_free(doc);
	free(b.s);

	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_SYMBOL, false, buf_open(&b),
						  TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "# 3 samples of page-faults (period 1), 0 lost: ./test-writers\n");
	assert_contains(b.s, "writers_hot");
	free(b.s);
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_LINE, false, buf_open(&b),
						  TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "report", ',');
	assert_int_equal(th_count_lines(b.s), 2);
	assert_contains(b.s, "\n3,3,3,100,writers_hot,");
	free(b.s);

	/* by any dimensions, with a tree: one member per dimension, "children" below */
	{
		static const enum tacho_sort keys[] = { TACHO_SORT_COMM, TACHO_SORT_TID,
							TACHO_SORT_SYMBOL };
		struct tacho_report_opts ro = { .sz = sizeof(ro), .sort = keys, .nsort = 3,
						.graph = TACHO_GRAPH_CALLEE };
		assert_int_equal(tacho_profile_write_report(p, &ro, buf_open(&b), TACHO_FORMAT_JSON,
							    NULL), 0);
		doc = check_json(buf_close(&b), "report");
		assert_json_str(doc, "rows[0].comm", "test-writers");
		assert_json_int(doc, "rows[0].tid", 100);
		assert_json_type(doc, "rows[0].children", TH_JSON_ARRAY);
		th_json_free(doc);
		free(b.s);
		assert_int_equal(tacho_profile_write_report(p, &ro, buf_open(&b), TACHO_FORMAT_CSV,
							    NULL), 0);
		assert_csv_header(buf_close(&b), "report", ',');
		assert_contains(b.s, ",test-writers,,100,,,0\n");
		free(b.s);
	}

	/* annotate: one function instruction by instruction */
	assert_int_equal(tacho_profile_write_annotate(p, "writers_hot", buf_open(&b),
						      TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "annotate");
	assert_json_type(doc, "rows[0].address", TH_JSON_NUMBER);
	assert_json_type(doc, "rows[0].line", TH_JSON_NUMBER);
	assert_json_int(doc, "function_samples", 3);
	/* this program's own code: read and disassembled */
	assert_non_null(th_json_get(doc, "decoded"));
	assert_true(th_json_get(doc, "decoded")->boolean);
	assert_json_type(doc, "rows[0].mnemonic", TH_JSON_STRING);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_profile_write_annotate(p, "writers_hot", buf_open(&b),
						      TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), ": 3 samples\n");
	free(b.s);
	assert_int_equal(tacho_profile_write_annotate(p, "writers_hot", buf_open(&b),
						      TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "annotate", ',');
	free(b.s);
	/* no sample there: an error and nothing written */
	assert_int_equal(tacho_profile_write_annotate(p, "nosuch", buf_open(&b),
						      TACHO_FORMAT_JSON, NULL), -ENOENT);
	assert_int_equal(strlen(buf_close(&b)), 0);
	free(b.s);
	assert_int_equal(tacho_profile_write_rows(p, (enum tacho_sort)9, false, stdout,
						  TACHO_FORMAT_JSON, NULL), -EINVAL);
	tacho_profile_free(p);
	unlink(file);
}

/* A simulated recording: the JSON's status and exact counts, the table's header and
 * column say simulated. */
static void test_report_simulated(void **state)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_profile_info in = { .sz = sizeof(in) };
	struct tacho_profile *p;
	struct th_json *doc;
	char file[128];
	struct buf b;
	(void)state;

	snprintf(file, sizeof(file), "%s/sim.rec", tmpdir);
	if (make_recording(file, true))
		TEST_SKIP("the executable mapping of this program is not in /proc/self/maps");
	assert_int_equal(tacho_profile_load(file, &p, &diag), 0);
	assert_int_equal(tacho_profile_info(p, &in), 0);
	assert_true(in.simulated);
	assert_int_equal(in.events, 6000);
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_LINE, false, buf_open(&b),
						  TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "report");
	assert_json_str(doc, "status", "simulated");
	assert_json_int(doc, "rows[0].events", 6000);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_profile_write_annotate(p, "writers_hot", buf_open(&b),
						      TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "annotate");
	assert_json_str(doc, "status", "simulated");
	assert_json_int(doc, "function_samples", 3);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_profile_write_rows(p, TACHO_SORT_SYMBOL, false, buf_open(&b),
						  TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "# 6,000 page-faults, simulated: every instruction "
				       "counted by valgrind, no sampling: ./test-writers\n");
	assert_contains(b.s, "\nsimulated  percent  dso           symbol\n");
	assert_contains(b.s, "\n     6000  100.00%  test-writers  writers_hot\n");
	free(b.s);
	tacho_profile_free(p);
	unlink(file);
}

/* annotate reads the vDSO from the copy in the recording (as record stores it): this
 * process's own vDSO, two samples on the first instruction of clock_gettime */
static void test_annotate_vdso(void **state)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512], file[128];
	unsigned long lo = 0, hi = 0;
	uint8_t bid[TC_BUILD_ID_MAX];
	struct tc_symdso *d;
	struct tc_record_writer w;
	struct tacho_profile *p;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	const struct th_json *rows, *first = NULL;
	struct th_json *doc;
	uint64_t start, size;
	const char *name = "__vdso_clock_gettime";
	struct buf b;
	int nbid, fd;
	(void)state;

	assert_non_null(maps);
	while (fgets(line, sizeof(line), maps))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	fclose(maps);
	if (!lo)
		TEST_SKIP("this process has no vDSO");
	assert_int_equal(tc_symdso_open("[vdso]", (const void *)lo, hi - lo, &d), 0);
	if (tc_symdso_find(d, name, &start, &size)) {
		name = "clock_gettime";
		assert_int_equal(tc_symdso_find(d, name, &start, &size), 0);
	}
	tc_symdso_free(d);
	nbid = tc_build_id_of_image((const void *)lo, hi - lo, bid, sizeof(bid));

	snprintf(file, sizeof(file), "%s/vdso.rec", tmpdir);
	fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_event(&w, 0, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
			       PERF_SAMPLE_IP, 1, 0, "page-faults");
	/* the vDSO's ELF addresses are its offsets: the mapping starts at offset 0 */
	tc_record_writer_mmap(&w, 100, 100, lo, hi - lo, 0, 5, 10, bid,
			      nbid > 0 ? (unsigned)nbid : 0, "[vdso]");
	tc_record_writer_image(&w, bid, nbid > 0 ? (unsigned)nbid : 0, "[vdso]", (const void *)lo,
			       hi - lo);
	tc_record_writer_comm(&w, 100, 100, true, 11, "test-writers");
	for (unsigned i = 0; i < 2; i++)
		tc_record_writer_sample(&w, 20 + i, lo + start, 0, 1, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_finish(&w, 2, 0, 30, 0);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	tc_record_writer_close(&w);

	assert_int_equal(tacho_profile_load(file, &p, &diag), 0);
	assert_int_equal(tacho_profile_write_annotate(p, name, buf_open(&b), TACHO_FORMAT_JSON,
						      NULL), 0);
	doc = check_json(buf_close(&b), "annotate");
	assert_json_str(doc, "dso", "[vdso]");
	assert_json_int(doc, "function_samples", 2);
	assert_true(th_json_get(doc, "decoded")->boolean);
	rows = th_json_get(doc, "rows");
	assert_non_null(rows);
	assert_true(rows->n >= 2);
	for (size_t i = 0; i < rows->n; i++)
		if ((uint64_t)th_json_get(rows->items[i], "address")->number == start)
			first = rows->items[i];
	assert_non_null(first);
	assert_int_equal((int)th_json_get(first, "samples")->number, 2);
	assert_true(th_json_get(first, "hottest")->boolean);
	assert_int_equal(th_json_get(first, "mnemonic")->type, TH_JSON_STRING);
	th_json_free(doc);
	free(b.s);
	tacho_profile_free(p);
	unlink(file);
}

/* The pipeline analysis of a recording's function (writers_hot: its block is its only
 * one), written as its schema says. */
static void test_mca_write(void **state)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_profile *p;
	struct tacho_sim_mca *m;
	struct th_json *doc;
	char file[128];
	struct buf b;
	int err;
	(void)state;

	if (system("command -v llvm-mca >/dev/null && command -v llvm-mc >/dev/null") != 0)
		TEST_SKIP("llvm-mca is not installed (Debian package llvm)");
	snprintf(file, sizeof(file), "%s/mca.rec", tmpdir);
	if (make_recording(file, true))
		TEST_SKIP("the executable mapping of this program is not in /proc/self/maps");
	assert_int_equal(tacho_profile_load(file, &p, &diag), 0);
	err = tacho_sim_mca_profile(p, "writers_hot", NULL, &m, &diag);
	if (err)
		fail_msg("tacho_sim_mca_profile: %d %s", err, diag.message);
	assert_int_equal(tacho_sim_mca_write(m, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "mca");
	assert_json_str(doc, "symbol", "writers_hot");
	assert_json_str(doc, "status", "simulated");
	assert_json_int(doc, "events", 6000);
	assert_json_int(doc, "function_events", 6000);
	assert_json_int(doc, "instructions[0].events", 6000);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_sim_mca_write(m, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "# the hottest basic block of writers_hot in ");
	assert_contains(b.s, ", 6000 of its 6000 simulated (100.00%)\n");
	assert_contains(b.s, "\nllvm-mca -mcpu=");
	free(b.s);
	assert_int_equal(tacho_sim_mca_write(m, buf_open(&b), TACHO_FORMAT_CSV, NULL), -EINVAL);
	free(buf_close(&b));
	tacho_sim_mca_free(m);
	assert_int_equal(tacho_sim_mca_profile(p, "nosuch", NULL, &m, &diag), -ENOENT);
	assert_null(m);
	tacho_profile_free(p);
	unlink(file);
}

/* speedscope's document in its schema: the three samples of writers_hot, one profile */
static void test_speedscope(void **state)
{
	struct tacho_profile *p;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct th_json *doc;
	char file[128];
	struct buf b;
	(void)state;

	snprintf(file, sizeof(file), "%s/ss.rec", tmpdir);
	if (make_recording(file, false))
		TEST_SKIP("the executable mapping of this program is not in /proc/self/maps");
	assert_int_equal(tacho_profile_load(file, &p, &diag), 0);
	assert_int_equal(tacho_profile_write_speedscope(p, buf_open(&b)), 0);
	doc = check_json(buf_close(&b), "speedscope");
	assert_json_int(doc, "profiles[0].endValue", 3);
	assert_json_str(doc, "profiles[0].name", "test-writers (pid 100)");
	assert_json_int(doc, "profiles[0].weights[2]", 1);
	assert_json_str(doc, "shared.frames[0].name", "writers_hot");
	th_json_free(doc);
	free(b.s);
	tacho_profile_free(p);
	unlink(file);
}

/* The perf-script export as JSON in its schema: a recording of sys_enter_openat (Linux
 * 6.18's format, verbatim) with a whole payload, a cut one and none; the fields exactly
 * as the format's types say, the cut one's error, and a --pid filter that keeps none. */
static void test_script_json(void **state)
{
	static const char fmt[] =
		"name: sys_enter_openat\nID: 782\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
		"\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
		"\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
		"\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n\n"
		"print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", "
		"((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), "
		"((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))\n";
	struct tacho_profile_filter flt = { .sz = sizeof(flt), .pids = "101" };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	uint64_t start, len, pgoff, v;
	uint8_t raw[48] = { 782 & 0xff, 782 >> 8 };
	struct tc_record_writer w;
	struct tacho_profile *p;
	char exe[PATH_MAX], file[128];
	struct th_json *doc;
	struct buf b;
	int fd;
	(void)state;

	if (!self_text(&start, &len, &pgoff, exe, sizeof(exe)))
		TEST_SKIP("the executable mapping of this program is not in /proc/self/maps");
	/* openat(AT_FDCWD, 0x55c06a540008, O_RDONLY|O_CLOEXEC, 0) by pid 100 */
	v = 100;
	memcpy(raw + 4, &v, 4);
	v = 257;
	memcpy(raw + 8, &v, 4);
	v = 0xffffff9cu;
	memcpy(raw + 16, &v, 8);
	v = 0x55c06a540008ull;
	memcpy(raw + 24, &v, 8);
	v = 0x80000;
	memcpy(raw + 32, &v, 8);
	snprintf(file, sizeof(file), "%s/sj.rec", tmpdir);
	fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(tc_record_writer_open_fd(&w, fd), 0);
	tc_record_writer_event(&w, 0, PERF_TYPE_TRACEPOINT, 782, PERF_SAMPLE_IP | PERF_SAMPLE_RAW,
			       1, TC_EVF_RAW, "syscalls:sys_enter_openat");
	tc_record_writer_tpformat(&w, 0, fmt, strlen(fmt));
	tc_record_writer_mmap(&w, 100, 100, start, len, pgoff, 5, 10, (const uint8_t *)"", 0, exe);
	tc_record_writer_comm(&w, 100, 100, true, 11, "test-writers");
	tc_record_writer_sample(&w, 20, (uintptr_t)writers_hot, 0, 1, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_raw(&w, 0, raw, sizeof(raw));
	tc_record_writer_sample(&w, 21, (uintptr_t)writers_hot, 0, 1, 100, 100, 1, 0, 2, 0, NULL);
	tc_record_writer_raw(&w, 0, raw, 20);   /* cut inside dfd */
	tc_record_writer_sample(&w, 22, (uintptr_t)writers_hot, 0, 1, 100, 100, 0, 0, 2, 0, NULL);
	tc_record_writer_finish(&w, 3, 0, 30, 0);
	assert_int_equal(tc_record_writer_flush(&w), 0);
	tc_record_writer_close(&w);

	assert_int_equal(tacho_profile_load(file, &p, &diag), 0);
	assert_int_equal(tacho_profile_write_script_json(p, buf_open(&b)), 0);
	doc = check_json(buf_close(&b), "script-json");
	assert_json_str(doc, "event", "syscalls:sys_enter_openat");
	assert_int_equal(th_json_get(doc, "samples")->n, 3);
	assert_json_int(doc, "samples[0].time_ns", 20);
	assert_json_int(doc, "samples[0].pid", 100);
	assert_json_str(doc, "samples[0].comm", "test-writers");
	assert_json_type(doc, "samples[0].addr", TH_JSON_NULL);
	assert_json_str(doc, "samples[0].payload", "dfd: 0xffffff9c, filename: 0x55c06a540008, "
			"flags: 0x00080000, mode: 0x00000000");
	assert_json_type(doc, "samples[0].payload_error", TH_JSON_NULL);
	assert_json_int(doc, "samples[0].fields.__syscall_nr", 257);
	assert_json_int(doc, "samples[0].fields.dfd", 0xffffff9cll);   /* unsigned, 8 bytes */
	assert_json_str(doc, "samples[0].fields.filename", "0x55c06a540008");
	assert_json_int(doc, "samples[0].fields.flags", 0x80000);
	assert_json_int(doc, "samples[0].fields.mode", 0);
	assert_int_equal(th_json_get(doc, "samples[0].fields")->n, 5);
	/* no binary holds that address: no string shown */
	assert_int_equal(th_json_get(doc, "samples[0].strings")->n, 0);
	assert_json_str(doc, "samples[0].frames[0].symbol", "writers_hot");
	assert_json_int(doc, "samples[0].frames[0].offset", 0);
	assert_json_int(doc, "samples[1].cpu", 1);
	assert_json_type(doc, "samples[1].payload", TH_JSON_NULL);
	assert_json_type(doc, "samples[1].payload_error", TH_JSON_STRING);
	assert_int_equal(th_json_get(doc, "samples[1].fields")->n, 0);
	assert_json_type(doc, "samples[2].payload", TH_JSON_NULL);
	assert_json_type(doc, "samples[2].payload_error", TH_JSON_NULL);
	th_json_free(doc);
	free(b.s);

	assert_int_equal(tacho_profile_set_filter(p, &flt, &diag), 0);
	assert_int_equal(tacho_profile_write_script_json(p, buf_open(&b)), 0);
	doc = check_json(buf_close(&b), "script-json");
	assert_int_equal(th_json_get(doc, "samples")->n, 0);
	th_json_free(doc);
	free(b.s);
	tacho_profile_free(p);
	unlink(file);
}

/* --- stat: a tiny run, and a hand-filled interval --- */

static void test_stat(void **state)
{
	char *argv[] = { (char *)"/bin/true", NULL };
	const char *const warnings[] = { "one \"warning\"", "another" };
	const char *const holes[] = { "one", NULL };
	struct tacho_stat_about about = { .sz = sizeof(about), .argv = argv, .repeat = 2,
					  .note = "a note", .warnings = warnings,
					  .nwarnings = 2 };
	struct tacho_write_opts semi = { .sz = sizeof(semi), .csv_sep = ';' };
	struct tacho_evlist *ev;
	struct tacho_stat *s;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct th_json *doc;
	struct buf b;
	int err;
	(void)state;

	assert_int_equal(tacho_evlist_parse("page-faults,task-clock", &ev, &diag), 0);
	struct tacho_stat_opts o = { .sz = sizeof(o), .events = ev, .target = TACHO_TARGET_CHILD,
				     .argv = argv, .repeat = 2 };
	err = tacho_stat_run(&o, &s, &diag);
	if (err) {
		tacho_evlist_free(ev);
		TEST_SKIP("cannot run a stat session here: %s", tacho_strerror(err));
	}
	assert_int_equal(tacho_stat_write(s, &about, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "stat");
	assert_json_int(doc, "runs", 2);
	assert_json_str(doc, "command[0]", "/bin/true");
	assert_json_str(doc, "events[0].name", "page-faults");
	assert_json_str(doc, "events[1].unit", "msec");
	assert_json_type(doc, "events[0].values", TH_JSON_ARRAY);
	assert_json_str(doc, "note", "a note");
	assert_json_str(doc, "warnings[0]", "one \"warning\"");
	assert_json_str(doc, "warnings[1]", "another");
	assert_json_int(doc, "exit_status", 0);
	th_json_free(doc);
	free(b.s);
	/* no repetitions asked: no statistics keys, and no about at all works */
	assert_int_equal(tacho_stat_write(s, NULL, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "stat");
	assert_null(th_json_get(doc, "events[0].values"));
	assert_null(th_json_get(doc, "command"));
	assert_null(th_json_get(doc, "warnings"));
	th_json_free(doc);
	free(b.s);

	assert_int_equal(tacho_stat_write(s, &about, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "stat", ',');
	assert_contains(b.s, "\nevent,page-faults,");
	free(b.s);
	assert_int_equal(tacho_stat_write(s, &about, buf_open(&b), TACHO_FORMAT_CSV, &semi), 0);
	assert_csv_header(buf_close(&b), "stat", ';');
	free(b.s);
	assert_int_equal(tacho_stat_write(s, &about, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "Counter stats for '/bin/true' (2 repetitions):");
	assert_contains(b.s, "page-faults");
	free(b.s);
	assert_int_equal(tacho_stat_write(s, &about, stdout, (enum tacho_format)-1, NULL), -EINVAL);
	assert_int_equal(tacho_stat_write(NULL, &about, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	/* a NULL among the warnings, or none where some are counted */
	about.warnings = holes;
	assert_int_equal(tacho_stat_write(s, &about, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	about.warnings = NULL;
	assert_int_equal(tacho_stat_write(s, &about, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	tacho_stat_free(s);
	tacho_evlist_free(ev);
}

/* A breakdown per thread of a one-thread program: an entry per unit and event with the
 * thread's keys, the totals beside, the CSV's unit columns. */
static void test_stat_breakdown(void **state)
{
	char *argv[] = { (char *)"/bin/true", NULL };
	struct tacho_stat_about about = { .sz = sizeof(about), .argv = argv };
	struct tacho_evlist *ev;
	struct tacho_stat *s;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct th_json *doc;
	struct buf b;
	int err;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_PAGE_FAULTS);

	assert_int_equal(tacho_evlist_parse("page-faults", &ev, &diag), 0);
	struct tacho_stat_opts o = { .sz = sizeof(o), .events = ev, .target = TACHO_TARGET_CHILD,
				     .argv = argv, .aggr = TACHO_STAT_AGGR_THREAD };
	err = tacho_stat_run(&o, &s, &diag);
	if (err) {
		tacho_evlist_free(ev);
		TEST_SKIP("cannot run a stat session here: %s", tacho_strerror(err));
	}
	assert_int_equal(tacho_stat_aggr(s), TACHO_STAT_AGGR_THREAD);
	assert_int_equal(tacho_stat_nunits(s), 1);
	assert_non_null(tacho_stat_unit_event(s, 0, 0));
	assert_null(tacho_stat_unit_event(s, 1, 0));
	assert_null(tacho_stat_unit_event(s, 0, 1));
	assert_int_equal(tacho_stat_write(s, &about, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "stat");
	assert_json_str(doc, "aggregation", "thread");
	assert_json_str(doc, "events[0].comm", "true");
	assert_json_type(doc, "events[0].tid", TH_JSON_NUMBER);
	assert_json_str(doc, "totals[0].name", "page-faults");
	/* one thread: its count is the total */
	assert_true(json_num(doc, "events[0].value") == json_num(doc, "totals[0].value"));
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_stat_write(s, &about, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "stat-thread", ',');
	assert_contains(b.s, "\ntotal,page-faults,counted,");
	assert_contains(b.s, ",true\n");
	free(b.s);
	assert_int_equal(tacho_stat_write(s, &about, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "  true-");
	free(b.s);
	tacho_stat_free(s);

	/* refused: per CPU without CPUs, per thread of CPUs, a mode out of range */
	o.aggr = TACHO_STAT_AGGR_CPU;
	assert_int_equal(tacho_stat_run(&o, &s, &diag), -EINVAL);
	assert_contains(diag.message, "need CPUs");
	o.aggr = TACHO_STAT_AGGR_COUNT;
	assert_int_equal(tacho_stat_run(&o, &s, &diag), -EINVAL);
	o.aggr = TACHO_STAT_AGGR_THREAD;
	o.repeat = 2;
	assert_int_equal(tacho_stat_run(&o, &s, &diag), -EINVAL);
	assert_contains(diag.message, "no repetitions");
	/* a program's threads report when they end: no intervals per thread */
	o.repeat = 1;
	o.interval_ms = 100;
	assert_int_equal(tacho_stat_run(&o, &s, &diag), -EINVAL);
	assert_contains(diag.message, "not with intervals");
	assert_string_equal(tacho_stat_aggr_name(TACHO_STAT_AGGR_SOCKET), "socket");
	assert_string_equal(tacho_stat_aggr_name(TACHO_STAT_AGGR_COUNT), "unknown");
	tacho_evlist_free(ev);
}

/* The SDT sites of tests/progs/sdt-probes (two, with semaphores) in the three formats. */
static void test_sdt(void **state)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_sdt_list *l;
	struct th_json *doc;
	struct buf b;
	(void)state;

	assert_int_equal(tacho_sdt_list_new(th_prog("sdt-probes"), &l, &diag), 0);
	assert_int_equal(tacho_sdt_list_count(l), 2);
	assert_string_equal(tacho_sdt_list_probe(l, 1)->name, "guarded");
	assert_null(tacho_sdt_list_probe(l, 2));
	assert_int_equal(tacho_sdt_list_write(l, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "sdt");
	assert_json_str(doc, "probes[0].name", "tick");
	assert_json_type(doc, "probes[0].semaphore", TH_JSON_NUMBER);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_sdt_list_write(l, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "sdt", ',');
	assert_contains(b.s, "\ntacho_test,tick,0x");
	free(b.s);
	assert_int_equal(tacho_sdt_list_write(l, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "tacho_test:guarded");
	free(b.s);
	assert_int_equal(tacho_sdt_list_write(NULL, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	tacho_sdt_list_free(l);

	/* no notes: an empty list, and an empty array */
	assert_int_equal(tacho_sdt_list_new(th_prog("stat-helper"), &l, &diag), 0);
	assert_int_equal(tacho_sdt_list_count(l), 0);
	assert_int_equal(tacho_sdt_list_write(l, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "sdt");
	assert_int_equal(th_json_get(doc, "probes")->n, 0);
	th_json_free(doc);
	free(b.s);
	tacho_sdt_list_free(l);
	assert_int_equal(tacho_sdt_list_new("/nonexistent", &l, &diag), -ENOENT);
	assert_contains(diag.message, "cannot open '/nonexistent'");
}

static void test_stat_interval(void **state)
{
	struct tacho_count counts[] = {
		{ .name = "page-faults", .status = TACHO_COUNT_COUNTED, .raw = 12, .value = 12,
		  .coverage = 1.0 },
		{ .name = "cycles", .status = TACHO_COUNT_NOT_SUPPORTED, .value = NAN,
		  .why = "no hardware PMU" },
	};
	const struct tacho_count *each[] = { &counts[0], &counts[1] };
	struct tacho_stat_interval iv = { .t_s = 0.25, .len_s = 0.25, .n = 2, .counts = each };
	struct tacho_write_opts later = { .sz = sizeof(later), .csv_no_header = true };
	struct buf b;
	char *line;
	(void)state;

	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_JSON_LINES,
						   NULL), 0);
	buf_close(&b);
	assert_int_equal(th_count_lines(b.s), 2);
	line = strtok(b.s, "\n");
	for (int i = 0; line; i++, line = strtok(NULL, "\n")) {
		struct th_json *doc = check_json(line, "stat-interval");
		assert_json_str(doc, "name", counts[i].name);
		if (i == 0)
			assert_json_int(doc, "value", 12);
		else
			assert_json_type(doc, "value", TH_JSON_NULL);
		th_json_free(doc);
	}
	free(b.s);

	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "stat-interval", ',');
	/* the repetition last: 0 for an interval that names none */
	assert_contains(b.s, "\n0.250000,page-faults,counted,12,,1,,0\n");
	assert_contains(b.s, "\n0.250000,cycles,not supported,,,,no hardware PMU,0\n");
	free(b.s);
	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_CSV, &later), 0);
	assert_true(tc_starts_with(buf_close(&b), "0.250000,page-faults,"));
	free(b.s);
	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_string_equal(buf_close(&b),
			    "      0.250000                   12       page-faults \n"
			    "      0.250000      <not supported>       cycles \n");
	free(b.s);
}

/* An interval with a breakdown: a record per unit and event, the unit's keys in JSON
 * (checked against the schema), its columns after the interval's in CSV, its label in
 * the table; an event a unit does not count (NULL) has no record. */
static void test_stat_interval_units(void **state)
{
	struct tacho_count counts[] = {
		{ .name = "page-faults", .status = TACHO_COUNT_COUNTED, .value = 7, .coverage = 1.0 },
		{ .name = "page-faults", .status = TACHO_COUNT_COUNTED, .value = 3, .coverage = 1.0 },
		{ .name = "page-faults", .status = TACHO_COUNT_COUNTED, .value = 4, .coverage = 1.0 },
	};
	const struct tacho_count *total[] = { &counts[0] };
	const struct tacho_count *per[] = { &counts[1], &counts[2] };
	struct tacho_stat_unit u[] = {
		{ .aggr = TACHO_STAT_AGGR_CPU, .label = "CPU0", .cpu = 0, .socket = 0, .die = 0,
		  .core = 0, .node = -1, .tid = -1, .pid = -1 },
		{ .aggr = TACHO_STAT_AGGR_CPU, .label = "CPU2", .cpu = 2, .socket = 0, .die = 0,
		  .core = 1, .node = -1, .tid = -1, .pid = -1 },
	};
	const struct tacho_stat_unit *up[] = { &u[0], &u[1] };
	struct tacho_stat_interval iv = { .t_s = 0.5, .len_s = 0.5, .n = 1, .counts = total,
					  .nunits = 2, .units = up, .unit_counts = per };
	struct tacho_stat_unit t = { .aggr = TACHO_STAT_AGGR_THREAD, .label = "w-12", .cpu = -1,
				     .socket = -1, .die = -1, .core = -1, .node = -1,
				     .tid = 12, .pid = 10, .comm = "w" };
	const struct tacho_stat_unit *tp[] = { &t };
	struct buf b;
	char *line;
	int i = 0;
	(void)state;

	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_JSON_LINES,
						   NULL), 0);
	buf_close(&b);
	assert_int_equal(th_count_lines(b.s), 2);
	for (line = strtok(b.s, "\n"); line; line = strtok(NULL, "\n"), i++) {
		struct th_json *doc = check_json(line, "stat-interval");
		assert_json_int(doc, "cpu", i ? 2 : 0);
		assert_json_int(doc, "core", i);
		assert_json_type(doc, "node", TH_JSON_NULL);
		assert_json_int(doc, "value", i ? 4 : 3);
		th_json_free(doc);
	}
	free(b.s);
	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "stat-interval-cpu", ',');
	assert_contains(b.s, "\n0.500000,page-faults,counted,3,,1,,0,0,0,0,0,\n"
			"0.500000,page-faults,counted,4,,1,,0,2,0,0,1,\n");
	free(b.s);
	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_string_equal(buf_close(&b),
			    "      0.500000 CPU0                                    3       page-faults \n"
			    "      0.500000 CPU2                                    4       page-faults \n");
	free(b.s);

	/* perf's -I -x columns: time, CPU, value, unit, event, run time, %, two empty */
	counts[1].enabled_ns = 500000000;
	assert_int_equal(tacho_stat_interval_write_perf(&iv, NULL, buf_open(&b), NULL), 0);
	assert_string_equal(buf_close(&b),
			    "     0.500000000,CPU0,3,,page-faults,500000000,100.00,,\n"
			    "     0.500000000,CPU2,4,,page-faults,0,100.00,,\n");
	free(b.s);

	/* a thread's keys; an event the unit does not count: no record */
	iv.nunits = 1;
	iv.units = tp;
	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "stat-interval-thread", ',');
	assert_contains(b.s, "\n0.500000,page-faults,counted,3,,1,,0,10,12,w\n");
	free(b.s);
	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_JSON_LINES,
						   NULL), 0);
	{
		struct th_json *doc = check_json(buf_close(&b), "stat-interval");
		assert_json_int(doc, "tid", 12);
		assert_json_str(doc, "comm", "w");
		th_json_free(doc);
	}
	free(b.s);
	per[0] = NULL;
	assert_int_equal(tacho_stat_interval_write(&iv, NULL, buf_open(&b), TACHO_FORMAT_JSON_LINES,
						   NULL), 0);
	assert_string_equal(buf_close(&b), "");
	free(b.s);
	/* a cgroup after the event, in perf's place; a core with its CPUs after it */
	per[0] = &counts[1];
	t.aggr = TACHO_STAT_AGGR_CGROUP;
	t.cgroup = "box";
	assert_int_equal(tacho_stat_interval_write_perf(&iv, NULL, buf_open(&b), NULL), 0);
	assert_string_equal(buf_close(&b),
			    "     0.500000000,3,,page-faults,box,500000000,100.00,,\n");
	free(b.s);
	t.aggr = TACHO_STAT_AGGR_CORE;
	t.label = "S0-D0-C1";
	t.ncpus = 2;
	assert_int_equal(tacho_stat_interval_write_perf(&iv, NULL, buf_open(&b), NULL), 0);
	assert_string_equal(buf_close(&b),
			    "     0.500000000,S0-D0-C1,2,3,,page-faults,500000000,100.00,,\n");
	free(b.s);
	/* units without their arrays */
	iv.units = NULL;
	assert_int_equal(tacho_stat_interval_write_perf(&iv, NULL, stdout, NULL), -EINVAL);
	assert_int_equal(tacho_stat_interval_write(&iv, NULL, stdout, TACHO_FORMAT_CSV, NULL),
			 -EINVAL);
}

/* perf stat -I -j's lines, on data: each line one JSON object with perf's keys in
 * perf's order and spacing; a multiplexed count's percentage in whole per cent (perf
 * divides integers), one that never ran "<not counted>" with no run time (0.00 % of
 * its time enabled), one never opened "<not supported>" (100.00: no time at all); a
 * unit's key before the value, a cgroup's after the event; a thread's name escaped. */
static void test_stat_interval_perf_json(void **state)
{
	struct tacho_count counts[] = {
		{ .name = "page-faults", .status = TACHO_COUNT_COUNTED, .value = 3,
		  .enabled_ns = 1000000, .running_ns = 1000000, .coverage = 1.0 },
		{ .name = "task-clock", .status = TACHO_COUNT_MULTIPLEXED, .value = 2.5,
		  .enabled_ns = 1000, .running_ns = 333, .coverage = 0.333 },
		{ .name = "sched:sched_switch", .status = TACHO_COUNT_NOT_COUNTED, .value = NAN,
		  .enabled_ns = 500, .running_ns = 0 },
		{ .name = "cycles", .status = TACHO_COUNT_NOT_SUPPORTED, .value = NAN },
	};
	const struct tacho_count *cp[] = { &counts[0], &counts[1], &counts[2], &counts[3] };
	struct tacho_stat_interval iv = { .t_s = 1.25, .len_s = 0.25, .n = 4, .counts = cp };
	struct tacho_stat_unit t = { .aggr = TACHO_STAT_AGGR_THREAD, .label = "a\"b-12",
				     .cpu = -1, .socket = -1, .die = -1, .core = -1,
				     .node = -1, .tid = 12, .pid = 10, .comm = "a\"b" };
	const struct tacho_stat_unit *tp[] = { &t };
	struct buf b;
	char *line;
	int i = 0;
	(void)state;

	assert_int_equal(tacho_stat_interval_write_perf_json(&iv, NULL, buf_open(&b), NULL), 0);
	buf_close(&b);
	assert_int_equal(th_count_lines(b.s), 4);
	assert_true(strncmp(b.s, "{\"interval\" : 1.250000000, \"counter-value\" : \"3.000000\", "
			    "\"unit\" : \"\", \"event\" : \"page-faults\", \"event-runtime\" : "
			    "1000000, \"pcnt-running\" : 100.00, \"metric-value\" : 0.000000, "
			    "\"metric-unit\" : \"\"}\n", 0) == 0);
	assert_contains(b.s, "\"counter-value\" : \"2.500000\", \"unit\" : \"\", \"event\" : "
			"\"task-clock\", \"event-runtime\" : 333, \"pcnt-running\" : 33.00, ");
	assert_contains(b.s, "\"counter-value\" : \"<not counted>\", \"unit\" : \"\", "
			"\"event\" : \"sched:sched_switch\", \"event-runtime\" : 0, "
			"\"pcnt-running\" : 0.00, ");
	assert_contains(b.s, "\"counter-value\" : \"<not supported>\", \"unit\" : \"\", "
			"\"event\" : \"cycles\", \"event-runtime\" : 0, \"pcnt-running\" : "
			"100.00, ");
	for (line = strtok(b.s, "\n"); line; line = strtok(NULL, "\n"), i++) {
		struct th_json *doc = assert_json(line);
		assert_string_equal(doc->items[0]->key, "interval");
		assert_string_equal(doc->items[doc->n - 1]->key, "metric-unit");
		th_json_free(doc);
	}
	assert_int_equal(i, 4);
	free(b.s);

	/* a thread: its key first after the interval, its name escaped */
	iv.n = 1;
	iv.nunits = 1;
	iv.units = tp;
	iv.unit_counts = cp;
	assert_int_equal(tacho_stat_interval_write_perf_json(&iv, NULL, buf_open(&b), NULL), 0);
	assert_true(strncmp(buf_close(&b), "{\"interval\" : 1.250000000, \"thread\" : "
			    "\"a\\\"b-12\", \"counter-value\" : \"3.000000\", ", 0) == 0);
	th_json_free(assert_json(b.s));
	free(b.s);
	/* a cgroup: after the event; a socket: with its CPUs */
	t.aggr = TACHO_STAT_AGGR_CGROUP;
	t.cgroup = "/box";
	assert_int_equal(tacho_stat_interval_write_perf_json(&iv, NULL, buf_open(&b), NULL), 0);
	assert_contains(buf_close(&b), "\"event\" : \"page-faults\", \"cgroup\" : \"/box\", "
			"\"event-runtime\"");
	free(b.s);
	t.aggr = TACHO_STAT_AGGR_SOCKET;
	t.label = "S1";
	t.ncpus = 8;
	assert_int_equal(tacho_stat_interval_write_perf_json(&iv, NULL, buf_open(&b), NULL), 0);
	assert_true(strncmp(buf_close(&b), "{\"interval\" : 1.250000000, \"socket\" : \"S1\", "
			    "\"aggregate-number\" : 8, \"counter-value\"", 0) == 0);
	free(b.s);
	iv.units = NULL;
	assert_int_equal(tacho_stat_interval_write_perf_json(&iv, NULL, stdout, NULL), -EINVAL);
}

/* --- list: the walk over the fake sysfs tree --- */

static void test_list(void **state)
{
	char devices[PATH_MAX], tracing[PATH_MAX];
	struct tacho_event_opts eo = { .sz = sizeof(eo) };
	struct tacho_event_listing_opts lo = {
		.sz = sizeof(lo), .events = &eo, .no_probe = true,
		.sources = 1u << TACHO_EVENT_SRC_PMU | 1u << TACHO_EVENT_SRC_TRACEPOINT,
	};
	struct tacho_event_listing *l;
	struct th_json *doc;
	struct buf b;
	(void)state;

	snprintf(devices, sizeof(devices), "%s", th_path("tests/data/sysfs-pmu/devices"));
	snprintf(tracing, sizeof(tracing), "%s", th_path("tests/data/sysfs-pmu/tracing"));
	eo.sysfs_pmu_root = devices;
	eo.tracefs_root = tracing;
	assert_int_equal(tacho_event_listing_new(&lo, &l), 0);
	assert_true(tacho_event_listing_count(l) > 3);
	assert_int_equal(tacho_event_listing_write(l, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "list");
	assert_json_str(doc, "events[0].source", "pmu");
	assert_json_type(doc, "events[0].opens", TH_JSON_NULL);
	assert_json_type(doc, "tracepoint_probed_for_all", TH_JSON_NULL);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_event_listing_write(l, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "list", ',');
	assert_int_equal(th_count_lines(b.s), tacho_event_listing_count(l) + 1);
	free(b.s);
	assert_int_equal(tacho_event_listing_write(l, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "other PMUs (/sys/bus/event_source/devices):\n");
	assert_contains(b.s, "tracepoints (tracefs):\n    raw_syscalls:*");
	assert_contains(b.s, "\n    sched:*");
	free(b.s);
	tacho_event_listing_free(l);

	/* a pattern: those events alone, tracepoints one by one */
	lo.pattern = "sched_switch";
	assert_int_equal(tacho_event_listing_new(&lo, &l), 0);
	assert_int_equal(tacho_event_listing_count(l), 1);
	tacho_event_listing_free(l);

	/* no tracefs: a note, whose hint is worded by the caller or left out */
	lo.pattern = NULL;
	lo.sources = 1u << TACHO_EVENT_SRC_TRACEPOINT;
	eo.tracefs_root = "/nonexistent";
	assert_int_equal(tacho_event_listing_new(&lo, &l), 0);
	assert_int_equal(tacho_event_listing_count(l), 0);
	assert_int_equal(tacho_event_listing_write(l, buf_open(&b), TACHO_FORMAT_TABLE, &cli_opts), 0);
	assert_string_equal(buf_close(&b), "tracepoints (tracefs):\n    none: no tracefs this user "
			    "can read (see 'tacho doctor')\n");
	free(b.s);
	assert_int_equal(tacho_event_listing_write(l, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_string_equal(buf_close(&b), "tracepoints (tracefs):\n    none: no tracefs this user "
			    "can read\n");
	free(b.s);
	tacho_event_listing_free(l);
	lo.sources = 1u << 30;
	assert_int_equal(tacho_event_listing_new(&lo, &l), -EINVAL);
}

/* --- doctor: a hand-filled list --- */

static void test_doctor(void **state)
{
	struct tacho_check c[2] = {
		{ .key = "pmu", .title = "hardware PMU", .state = TACHO_CHECK_LIMIT,
		  .value = "none", .text = "no hardware PMU (count software events)" },
		{ .key = "vm", .title = "virtual machine", .state = TACHO_CHECK_INFO,
		  .value = "yes", .text = "a guest, \"quoted\", with, commas" },
	};
	struct tacho_clock_info k[2] = {
		{ .name = "CLOCK_MONOTONIC", .clock_id = 1, .resolution_ns = 1, .read_ns = 24.5 },
		{ .name = "tsc", .clock_id = -1, .err = -ENODEV },
	};
	struct tacho_machine_view v = {
		.sz = sizeof(v), .checks = c, .nchecks = 2, .check_sz = sizeof(c[0]),
		.clocks = k, .nclocks = 2, .clock_sz = sizeof(k[0]),
	};
	struct tacho_machine_view no_clocks = {
		.sz = sizeof(no_clocks), .checks = c, .nchecks = 2, .check_sz = sizeof(c[0]),
	};
	/* a newer header's larger checks, at their element size: the same document */
	struct {
		struct tacho_check c;
		int future;
	} newer[2] = { { c[0], -1 }, { c[1], -1 } };
	struct tacho_machine_view nv = {
		.sz = sizeof(nv), .checks = &newer[0].c, .nchecks = 2, .check_sz = sizeof(newer[0]),
		.clocks = k, .nclocks = 2, .clock_sz = sizeof(k[0]),
	};
	struct th_json *doc;
	struct buf b, b2;
	(void)state;

	assert_int_equal(tacho_machine_write(&v, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	assert_int_equal(tacho_machine_write(&nv, buf_open(&b2), TACHO_FORMAT_JSON, NULL), 0);
	assert_string_equal(buf_close(&b2), buf_close(&b));
	free(b2.s);
	doc = check_json(b.s, "doctor");
	assert_json_str(doc, "checks[0].state", "limited");
	assert_json_str(doc, "checks[1].text", "a guest, \"quoted\", with, commas");
	assert_json_type(doc, "clocks[1].read_ns", TH_JSON_NULL);
	assert_json_type(doc, "clocks[1].error", TH_JSON_STRING);
	th_json_free(doc);
	free(b.s);
	/* no survey: an empty array, still the schema */
	assert_int_equal(tacho_machine_write(&no_clocks, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "doctor");
	assert_json_type(doc, "clocks", TH_JSON_ARRAY);
	assert_null(th_json_get(doc, "clocks[0]"));
	th_json_free(doc);
	free(b.s);

	assert_int_equal(tacho_machine_write(&v, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "doctor", ',');
	assert_contains(b.s, "\ncheck,vm,virtual machine,info,yes,\"a guest, \"\"quoted\"\", with, commas\",,,\n");
	assert_contains(b.s, "\nclock,CLOCK_MONOTONIC,,,,,1,24.5,\n");
	free(b.s);
	assert_int_equal(tacho_machine_write(&v, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "what this machine lets tacho measure:\n\n  limited  hardware PMU");
	assert_contains(b.s, "CLOCK_MONOTONIC");
	assert_contains(b.s, "cannot read: ");
	free(b.s);
	/* the sources' proofs and the hardware's checks, each element by its own size */
	{
		struct tacho_source_proof s[2] = {
			{ .sz = sizeof(s[0]), .source = TACHO_SOURCE_BREAKPOINT_DATA,
			  .verdict = TACHO_VERDICT_SILENT, .expected = 1000, .counted = 0,
			  .what = "1,000 stores to a watched variable",
			  .why = "this machine's debug registers never fire",
			  .hint = TACHO_HINT_MACHINE, .cached = true },
			{ .sz = sizeof(s[0]), .source = TACHO_SOURCE_KPROBE,
			  .verdict = TACHO_VERDICT_NOT_OPEN, .expected = 100,
			  .what = "100 getppid(2) calls", .why = "no kprobe PMU in this kernel" },
		};
		struct tacho_check hw[1] = {
			{ .key = "rdpmc", .title = "RDPMC against read(2)",
			  .state = TACHO_CHECK_INFO, .value = "skipped", .text = "no PMU" },
		};
		struct tacho_machine_view sv = v;

		sv.sources = s;
		sv.nsources = 2;
		sv.source_sz = sizeof(s[0]);
		sv.verify = hw;
		sv.nverify = 1;
		assert_int_equal(tacho_machine_write(&sv, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
		doc = check_json(buf_close(&b), "doctor");
		assert_json_str(doc, "sources[0].source", "breakpoint-data");
		assert_json_str(doc, "sources[0].verdict", "silent");
		assert_json_int(doc, "sources[0].counted", 0);
		assert_json_type(doc, "sources[1].counted", TH_JSON_NULL);
		assert_json_str(doc, "sources[1].verdict", "not open");
		assert_json_str(doc, "verify[0].value", "skipped");
		th_json_free(doc);
		free(b.s);
		assert_int_equal(tacho_machine_write(&sv, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
		assert_contains(buf_close(&b), "  breakpoint-data  silent    0 of 1,000  this "
					       "machine's debug registers never fire (this boot's "
					       "proof)\n");
		assert_contains(b.s, "  kprobe           not open  -           no kprobe PMU");
		assert_contains(b.s, "the hardware counters, checked:\n\n  info  RDPMC against");
		free(b.s);
		assert_int_equal(tacho_machine_write(&sv, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
		assert_contains(buf_close(&b), "\nsource,breakpoint-data,\"1,000 stores to a "
					       "watched variable\",silent,\"0 of 1,000\",");
		assert_contains(b.s, "\nverify,rdpmc,RDPMC against read(2),info,skipped,no PMU,,,\n");
		free(b.s);
		/* an element size below the first version is refused */
		sv.source_sz = 8;
		assert_int_equal(tacho_machine_write(&sv, buf_open(&b), TACHO_FORMAT_JSON, NULL),
				 -EINVAL);
		free(buf_close(&b));
	}
	assert_int_equal(tacho_machine_write(NULL, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	v.check_sz = offsetof(struct tacho_check, hint);
	assert_int_equal(tacho_machine_write(&v, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	v.check_sz = sizeof(c[0]);
	v.sz = offsetof(struct tacho_machine_view, clock_sz);
	assert_int_equal(tacho_machine_write(&v, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
}

/* --- regions and the harness, in this process --- */

static void empty(void *arg)
{
	(void)arg;
}

static void test_regions_bench(void **state)
{
	struct tacho_regions_opts ro = { .sz = sizeof(ro), .events = "page-faults",
					 .no_report_at_exit = true };
	struct tacho_bench_opts bo = { .sz = sizeof(bo), .trials = 11, .events = "page-faults" };
	struct tacho_regions_report *r;
	struct tacho_bench_result *res;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct th_json *doc;
	struct buf b;
	(void)state;

	assert_int_equal(tacho_regions_init(&ro, &diag), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(tacho_region_begin("outer"), 0);
		assert_int_equal(tacho_region_begin("inner"), 0);
		assert_int_equal(tacho_region_end("inner"), 0);
		assert_int_equal(tacho_region_end("outer"), 0);
	}
	assert_int_equal(tacho_regions_report_new(&r), 0);
	assert_int_equal(tacho_regions_report_write(r, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "regions");
	assert_json_str(doc, "regions[0].name", "inner");
	assert_json_int(doc, "regions[1].calls", 2);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_regions_report_write(r, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "regions", ',');
	free(b.s);
	tacho_regions_report_free(r);

	assert_int_equal(tacho_bench_run(empty, NULL, &bo, &res, &diag), 0);
	assert_int_equal(tacho_bench_result_write(res, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "bench");
	assert_json_int(doc, "trials", 11);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_bench_result_write(res, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "bench", ',');
	assert_int_equal(th_count_lines(b.s), 4);   /* header, ticks, ns, page-faults */
	assert_contains(b.s, "\nticks,");
	free(b.s);
	tacho_bench_result_free(res);

	/* a result on data, so that both sides of the noise are in the documents: the time
	 * below it (0 or -1 ticks per call), an event above (1), one below (-1 or 1) */
	double tv[5] = { 0, -1, 0, 0, -1 }, e0[5] = { 1, 1, 1, 1, 1 }, e1[5] = { 1, -1, 1, -1, 1 };
	double *evv[2] = { e0, e1 };
	res = tc_bench_result_new(2);
	assert_non_null(res);
	res->event_names[0] = strdup("one");
	res->event_names[1] = strdup("noisy");
	res->reps = 1;
	res->difference = true;
	res->tsc_hz = 1e9;
	assert_int_equal(tc_bench_result_finish(res, tv, evv, 5, 10, 0), 0);
	assert_true(res->below_noise);
	assert_int_equal(tacho_bench_result_write(res, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "bench");
	assert_true(th_json_get(doc, "below_noise")->boolean);
	assert_json_type(doc, "ticks.noise", TH_JSON_STRING);
	assert_json_type(doc, "ticks.median", TH_JSON_NULL);
	assert_json_type(doc, "events.one.noise", TH_JSON_NULL);
	assert_json_type(doc, "events.noisy.noise", TH_JSON_STRING);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_bench_result_write(res, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "bench", ',');
	assert_contains(b.s, "\nticks,below noise,5,,");
	assert_contains(b.s, "\none,counted,5,1,");
	assert_contains(b.s, "\nnoisy,below noise,5,,");
	free(b.s);
	tacho_bench_result_free(res);
}

/* --- MSRs: values read, written and given; the table; rates, on a fake tree --- */

static uint64_t no_wait(void *arg, unsigned ms)
{
	(void)arg;
	return (uint64_t)ms * 1000000;
}

static void test_msr(void **state)
{
	static const struct tacho_msr_cpu skylake = { TACHO_VENDOR_INTEL, 6, 0x55, false };
	struct th_msr_fake f;
	struct tacho_msr_opts o = { .sz = sizeof(o), .cpu = &skylake, .wait = no_wait };
	struct tacho_msr_dev *dev;
	struct tacho_msr_set *set;
	struct tacho_msr_rates *r;
	const struct tacho_msr *sel, *tsc;
	const int cpus[] = { 0, 1 };
	struct th_json *doc;
	uint32_t a;
	struct buf b;
	(void)state;

	th_msr_fake_new(&f, 1, 0x641);
	th_msr_poke(&f, 0, 0x186, 0x4300c0);
	th_msr_poke(&f, 0, 0x606, 0xa0e03);
	o.device_dir = f.dir;
	assert_int_equal(tacho_msr_dev_new(&o, &dev), 0);
	assert_int_equal(tacho_msr_lookup("IA32_PERFEVTSEL0", &skylake, &sel, &a, NULL), 0);
	assert_int_equal(tacho_msr_lookup("TSC", &skylake, &tsc, &a, NULL), 0);
	assert_int_equal(tacho_msr_set_new(TACHO_MSR_SET_FIELDS, &set), 0);
	/* CPU 0 reads, CPU 1 has no device; a write; a value given; an unknown address */
	assert_int_equal(tacho_msr_set_rdmsr(set, dev, sel, 0x186, cpus, 2), -ENOENT);
	assert_int_equal(tacho_msr_set_wrmsr(set, dev, sel, cpus, 1, "cmask=1", TACHO_MSR_FORCE,
					     NULL), 0);
	assert_int_equal(tacho_msr_set_add(set, -1, tsc, 0x10, 42, "given"), 0);
	assert_int_equal(tacho_msr_set_add(set, -1, NULL, 0x1234, 7, NULL), 0);

	assert_int_equal(tacho_msr_set_write(set, buf_open(&b), TACHO_FORMAT_JSON, &cli_opts), 0);
	doc = check_json(buf_close(&b), "msr");
	/* the example, key by key */
	assert_json_int(doc, "msrs[0].cpu", 0);
	assert_json_str(doc, "msrs[0].name", "IA32_PERFEVTSEL0");
	assert_json_int(doc, "msrs[0].address", 390);
	assert_json_int(doc, "msrs[0].value", 4391104);
	assert_json_str(doc, "msrs[0].fields[0].name", "event");
	assert_json_int(doc, "msrs[0].fields[0].value", 192);
	assert_json_str(doc, "msrs[0].fields[0].meaning", "instructions retired (architectural "
			"event, umask 0x00)");
	assert_json_type(doc, "msrs[1].value", TH_JSON_NULL);
	assert_json_type(doc, "msrs[1].error", TH_JSON_STRING);
	assert_null(th_json_get(doc, "msrs[1].fields[0]"));
	assert_json_int(doc, "msrs[2].before", 0x4300c0);
	assert_json_int(doc, "msrs[2].written", 0x14300c0);
	assert_json_int(doc, "msrs[2].value", 0x14300c0);
	assert_json_type(doc, "msrs[3].cpu", TH_JSON_NULL);
	assert_json_str(doc, "msrs[3].label", "given");
	assert_json_type(doc, "msrs[4].name", TH_JSON_NULL);
	assert_json_int(doc, "msrs[4].address", 0x1234);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_msr_set_write(set, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "msr", ',');
	assert_contains(b.s, "\nmsr,,0,IA32_PERFEVTSEL0,0x186,0x00000000004300c0,,,,,,,\n"
			"field,,0,IA32_PERFEVTSEL0,0x186,0x00000000004300c0,,,event,7:0,192,"
			"\"instructions retired (architectural event, umask 0x00)\",\n");
	free(b.s);
	assert_int_equal(tacho_msr_set_write(set, buf_open(&b), TACHO_FORMAT_TABLE, &cli_opts), 0);
	assert_contains(buf_close(&b), "CPU 0 IA32_PERFEVTSEL0 (0x186) = 0x00000000004300c0\n"
			"    event      7:0  0xc0  instructions retired (architectural event, "
			"umask 0x00)\n");
	assert_contains(b.s, "CPU 1 IA32_PERFEVTSEL0 (0x186): no ");
	free(b.s);
	tacho_msr_set_free(set);

	/* the table: every register, or one processor's (then "applies" is a bool) */
	assert_int_equal(tacho_msr_list_write(NULL, "PERFEVTSEL0", 0, buf_open(&b),
					      TACHO_FORMAT_JSON, NULL), 3);
	doc = check_json(buf_close(&b), "msr-list");
	assert_json_str(doc, "msrs[0].name", "IA32_PERFEVTSEL0");
	assert_json_str(doc, "msrs[0].aliases[0]", "PerfEvtSel0");
	assert_json_type(doc, "msrs[0].applies", TH_JSON_NULL);
	assert_json_str(doc, "msrs[1].name", "AMD_PERFEVTSEL0");
	assert_json_str(doc, "msrs[2].name", "P6_PERFEVTSEL0");
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_msr_list_write(&skylake, "TSC", 0, buf_open(&b), TACHO_FORMAT_JSON,
					      NULL), 2);
	doc = check_json(buf_close(&b), "msr-list");
	assert_json_type(doc, "msrs[0].applies", TH_JSON_BOOL);
	assert_true(th_json_get(doc, "msrs[0].applies")->boolean);
	assert_json_str(doc, "msrs[0].not_writable", "the kernel keeps time with it (clocksource "
			"tsc): a write breaks clock_gettime and the scheduler's clock");
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_msr_list_write(&skylake, "CESR", TACHO_MSR_LIST_FIELDS, buf_open(&b),
					      TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "msr-list", ',');
	assert_int_equal(th_count_lines(b.s), 1);
	free(b.s);
	assert_int_equal(tacho_msr_list_write(NULL, "CESR", TACHO_MSR_LIST_FIELDS, buf_open(&b),
					      TACHO_FORMAT_CSV, NULL), 1);
	/* the register's row, then one per field */
	assert_int_equal(th_count_lines(buf_close(&b)), 1 + 1 + 10);
	free(b.s);

	/* the rates: a fake that does not move, so the frequency is not there, and why */
	assert_int_equal(tacho_msr_rates_measure(dev, cpus, 1, 10, TACHO_MSR_RATE_FREQ |
						 TACHO_MSR_RATE_POWER, &r), 0);
	assert_int_equal(tacho_msr_rates_write(r, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "msr-rates");
	assert_json_int(doc, "interval_ms", 10);
	assert_json_str(doc, "measured[1]", "power");
	assert_json_type(doc, "cpus[0].tsc_mhz", TH_JSON_NULL);
	assert_json_type(doc, "cpus[0].freq_error", TH_JSON_STRING);
	assert_json_type(doc, "cpus[0].pp1_w", TH_JSON_NULL);
	assert_json_type(doc, "cpus[0].power_error", TH_JSON_NULL);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_msr_rates_write(r, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "msr-rates", ',');
	/* empty where there is no value; the energy counters stood still: 0 W, measured */
	assert_contains(b.s, "\n0,0.01,,,,,0,0,,0,,\"the TSC did not advance over the interval "
			"(a fake device, or a stopped clock)\"\n");
	free(b.s);
	tacho_msr_rates_free(r);
	tacho_msr_dev_free(dev);
	th_msr_fake_free(&f);
	assert_int_equal(tacho_msr_set_write(NULL, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
}

/* --- cache: a result built from a synthetic curve, analysed as a measurement is --- */

static double step_curve(double ws)
{
	return ws <= 32768 ? 1.0 : ws <= 1048576 ? 4.0 : ws <= 8 * 1048576.0 ? 14.0 : 100.0;
}

static struct tacho_cache_result *synthetic_cache(void)
{
	struct tacho_cache_result *r = tc_cache_result_new();
	struct tacho_cache_point pts[80];
	size_t n = 0;

	assert_non_null(r);
	for (unsigned k = 0; n < 80; k++) {
		uint64_t ws = (uint64_t)(4096 * exp2(k / 4.0) + 0.5) & ~(uint64_t)63;
		double y = step_curve((double)ws);

		if (ws > 64ull << 20)
			break;
		pts[n++] = (struct tacho_cache_point){ .bytes = ws, .ns = y, .ns_p25 = y * 0.99,
						       .ns_p75 = y * 1.02, .ns_min = y * 0.98,
						       .ns_max = y * 1.1, .samples = 9, .discarded = k % 3 };
	}
	assert_int_equal(tc_cache_curve_set(r, TACHO_CACHE_CURVE_LATENCY, pts, n), 0);
	/* the page chase: 64 pages in the L1 TLB, 2048 in the L2 one, and the caches' share
	 * of its lines on top */
	n = 0;
	for (unsigned k = 0; n < 80; k++) {
		uint64_t pages = (uint64_t)(8 * exp2(k / 4.0) + 0.5);
		double y = (pages <= 64 ? 1.0 : pages <= 2048 ? 3.0 : 30.0) +
			   step_curve((double)pages * 64) - 1.0;

		if (pages > 16384)
			break;
		pts[n++] = (struct tacho_cache_point){ .bytes = pages * 4096, .pages = pages, .ns = y,
						       .ns_p25 = y, .ns_p75 = y, .ns_min = y,
						       .ns_max = y, .samples = 9 };
	}
	assert_int_equal(tc_cache_curve_set(r, TACHO_CACHE_CURVE_PAGES, pts, n), 0);
	r->claims[0] = (struct tc_cache_claim){ 1, TACHO_CACHE_DATA, 32768, 32768, 1 };
	r->claims[1] = (struct tc_cache_claim){ 2, TACHO_CACHE_UNIFIED, 1 << 20, 1 << 20, 1 };
	r->claims[2] = (struct tc_cache_claim){ 3, TACHO_CACHE_UNIFIED, 32 << 20, 32 << 20, 2 };
	r->nclaims = 3;
	r->cpuid_tlb[1] = 72;
	r->cpuid_tlb[2] = 3072;
	r->about = (struct tacho_cache_about){
		.cpu = 1, .brand = "Test CPU \"Q\" <&>", .hypervisor = true, .tsc_hz = 2e9,
		.tsc_source = "calibrated", .core_hz = 3e9, .core_hz_min = 2.9e9,
		.core_hz_max = 3.1e9, .points_per_octave = 4, .step = exp2(0.25), .samples = 9,
		.rounds = 3, .min_bytes = 4096, .max_bytes = 64 << 20, .huge_pages = true,
		.huge_fraction = 1, .kernel = "avx2", .threads = 2, .seconds = 2.5,
		.steal_pct = NAN, .discarded = 3, .busy = 1,
	};
	assert_int_equal(tc_cache_analyze(r), 0);
	for (size_t i = 0; i < r->nlevels; i++) {
		struct tacho_cache_bandwidth *bw = &r->levels[i].bw;

		if (!r->levels[i].bytes)
			continue;
		*bw = (struct tacho_cache_bandwidth){ r->levels[i].bytes / 2, r->levels[i].bytes / 2,
						      2, 100.0 / (double)(i + 1), 50, 90, 200, 100,
						      NAN };
	}
	tc_cache_warn(r, "a warning, \"quoted\", with, commas");
	return r;
}

/* Runs xmllint on the file at path with args; the exit status, or -1 when there is no
 * xmllint. out gets what it printed. */
static int xmllint(const char *path, const char *xpath, char *out, size_t size)
{
	const char *argv[] = { "xmllint", "--noout", path, NULL, NULL, NULL };
	struct th_run r;
	int status;

	if (system("command -v xmllint >/dev/null 2>&1") != 0)
		return -1;
	if (xpath) {
		argv[1] = "--xpath";
		argv[2] = xpath;
		argv[3] = path;
	}
	th_runv(&r, NULL, (char *const *)argv);
	status = r.status;
	snprintf(out, size, "%s%s", r.out, r.err);
	th_run_free(&r);
	tc_trim(out);
	return status;
}

static void test_cache(void **state)
{
	struct tacho_cache_result *r = synthetic_cache();
	struct th_json *doc;
	struct buf b;
	char path[PATH_MAX], out[4096];
	FILE *f;
	int st;
	(void)state;

	/* the analysis, through the accessors */
	assert_int_equal(tacho_cache_result_nlevels(r), 3);
	assert_int_equal(tacho_cache_result_level(r, 0)->bytes, 32768);
	assert_int_equal(tacho_cache_result_level(r, 0)->agrees, 1);
	assert_int_equal(tacho_cache_result_level(r, 1)->bytes, 1 << 20);
	assert_int_equal(tacho_cache_result_level(r, 1)->agrees, 1);
	assert_int_equal(tacho_cache_result_level(r, 2)->bytes, 8 << 20);
	assert_int_equal(tacho_cache_result_level(r, 2)->agrees, 0);
	assert_null(tacho_cache_result_level(r, 3));
	assert_true(tacho_cache_result_memory(r)->flat);
	assert_int_equal(tacho_cache_result_ntlbs(r), 2);
	assert_int_equal(tacho_cache_result_tlb(r, 0)->entries, 64);
	assert_int_equal(tacho_cache_result_tlb(r, 1)->entries, 2048);
	assert_int_equal(tacho_cache_result_tlb(r, 1)->agrees, 0);

	assert_int_equal(tacho_cache_write(r, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "cache");
	assert_json_int(doc, "levels[0].level", 1);
	assert_json_str(doc, "levels[0].type", "data");
	assert_json_int(doc, "levels[0].measured_bytes", 32768);
	assert_json_type(doc, "levels[2].agrees", TH_JSON_BOOL);
	assert_json_str(doc, "brand", "Test CPU \"Q\" <&>");
	assert_json_type(doc, "levels[0].bandwidth.copy_all_gbs", TH_JSON_NULL);
	assert_json_type(doc, "dram_latency_ns", TH_JSON_NUMBER);
	assert_json_type(doc, "measurement.steal_pct", TH_JSON_NULL);
	assert_json_type(doc, "curves.random", TH_JSON_ARRAY);
	assert_null(th_json_get(doc, "curves.random[0]"));
	assert_json_int(doc, "tlbs[1].cpuid_entries", 3072);
	th_json_free(doc);
	free(b.s);

	assert_int_equal(tacho_cache_write(r, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "cache", ',');
	assert_contains(b.s, "\nlevel,,1,data,32768,,1,");
	assert_contains(b.s, "\nwarning,");
	assert_contains(b.s, "\"a warning, \"\"quoted\"\", with, commas\"\n");
	free(b.s);

	assert_int_equal(tacho_cache_write(r, buf_open(&b), TACHO_FORMAT_TABLE, &cli_opts), 0);
	assert_contains(buf_close(&b), "memory hierarchy of CPU 1 (Test CPU \"Q\" <&>)");
	assert_contains(b.s, "NO: CPUID and sysfs claim 32 MiB; the latency leaves this level's plateau past 8 MiB (4x less than claimed)");
	assert_contains(b.s, "\nwarnings:\n  - a warning");
	free(b.s);
	assert_int_equal(tacho_cache_write(NULL, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	assert_int_equal(tacho_cache_write(r, stdout, TACHO_FORMAT_COUNT, NULL), -EINVAL);

	/* the picture: well-formed XML, a line per level found and a claim per level */
	snprintf(path, sizeof(path), "%s/cache.svg", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(tacho_cache_write_svg(r, f, NULL), 0);
	assert_int_equal(fclose(f), 0);
	st = xmllint(path, NULL, out, sizeof(out));
	if (st >= 0) {
		if (st)
			fail_msg("the SVG is not well-formed XML: %s", out);
		assert_int_equal(xmllint(path, "count(//*[local-name()='line'][@class='level'])",
					 out, sizeof(out)), 0);
		assert_string_equal(out, "3");
		assert_int_equal(xmllint(path, "count(//*[local-name()='line'][@class='claim-cpuid'])",
					 out, sizeof(out)), 0);
		assert_string_equal(out, "3");
		assert_int_equal(xmllint(path, "string(//*[local-name()='title'])", out,
					 sizeof(out)), 0);
		assert_string_equal(out, "Load latency against working set, CPU 1, Test CPU \"Q\" <&>");
	}
	unlink(path);
	assert_int_equal(tacho_cache_write_svg(NULL, stdout, NULL), -EINVAL);
	tacho_cache_result_free(r);
	/* no curve, no picture */
	r = tc_cache_result_new();
	assert_int_equal(tacho_cache_write_svg(r, stdout, NULL), -EINVAL);
	tacho_cache_result_free(r);
	if (st < 0)
		TEST_SKIP("xmllint (Debian libxml2-utils) is missing: the SVG was not parsed");
}

/* --- live: frames of this process and of the machine --- */

static struct tacho_live_frame *live_frame(enum tacho_live_view view, pid_t pid)
{
	struct tacho_live_opts o = { .sz = sizeof(o), .view = view, .pid = pid, .history = 8 };
	struct tacho_live_frame *f = NULL;
	struct tacho_evlist *l;
	struct tacho_live *lv;

	/* cycles: not supported without a PMU, else counted; both paths are schema */
	assert_int_equal(tacho_evlist_parse("task-clock,page-faults,cycles", &l, NULL), 0);
	o.events = l;
	assert_int_equal(tacho_live_new(&o, &lv, NULL), 0);
	for (int i = 0; i < 3; i++) {
		tacho_live_frame_put(f);
		assert_int_equal(tacho_live_sample(lv, &f), 0);
		usleep(2000);
	}
	tacho_live_free(lv);
	tacho_evlist_free(l);
	return f;
}

static void test_live(void **state)
{
	struct tacho_live_frame *f = live_frame(TACHO_LIVE_PROCESS, getpid());
	struct tacho_write_opts later = { .sz = sizeof(later), .csv_no_header = true };
	struct th_json *doc;
	struct buf b;
	(void)state;

	assert_int_equal(tacho_live_frame_nrows(f), 1);
	assert_int_equal(tacho_live_frame_write(f, buf_open(&b), TACHO_FORMAT_JSON_LINES, NULL), 0);
	buf_close(&b);
	assert_int_equal(th_count_lines(b.s), 1);
	doc = check_json(b.s, "live");
	assert_json_str(doc, "view", "process");
	assert_json_int(doc, "rows[0].pid", getpid());
	assert_json_str(doc, "rows[0].values.task-clock.status", "counted");
	assert_json_str(doc, "events[0].unit", "msec");
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_live_frame_write_history(f, buf_open(&b), NULL), 0);
	doc = check_json(buf_close(&b), "live");
	assert_int_equal(th_json_get(doc, "rows[0].history.page-faults")->n, 3);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_live_frame_write(f, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "live", ',');
	assert_int_equal(th_count_lines(b.s), 4);
	free(b.s);
	assert_int_equal(tacho_live_frame_write(f, buf_open(&b), TACHO_FORMAT_CSV, &later), 0);
	assert_int_equal(th_count_lines(buf_close(&b)), 3);
	free(b.s);
	assert_int_equal(tacho_live_frame_write(f, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "process view, 1 row");
	free(b.s);
	tacho_live_frame_put(f);

	/* a row without a process: pid null */
	f = live_frame(TACHO_LIVE_MACHINE, 0);
	assert_int_equal(tacho_live_frame_write(f, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "live");
	assert_json_type(doc, "rows[0].pid", TH_JSON_NULL);
	assert_json_int(doc, "rows[0].id", -1);
	th_json_free(doc);
	free(b.s);
	tacho_live_frame_put(f);
}

/* --- the options every writer shares --- */

/* --- trace: the small trace of the fuzz corpus, written by hand with every record --- */

static void test_trace(void **state)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_timeline *t;
	struct th_json *doc;
	struct buf b;
	(void)state;

	assert_int_equal(tacho_timeline_load(th_path("fuzz/corpus/trace-file/small.trace"), &t,
					     &diag), 0);
	assert_int_equal(tacho_timeline_write(t, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "trace");
	assert_json_int(doc, "items", 7);
	assert_json_int(doc, "span_ns", 400);
	assert_json_int(doc, "dropped.ring_full", 2);
	assert_json_str(doc, "channels[2].name", "work");
	assert_json_str(doc, "channels[2].kind", "span");
	assert_json_str(doc, "channels[3].name", "a");
	assert_json_int(doc, "channels[3].count", 2);
	assert_json_str(doc, "channels[4].kind", "counter");
	assert_json_str(doc, "deltas[0].from", "a");
	assert_json_int(doc, "deltas[0].count", 1);
	assert_json_int(doc, "deltas[0].min_ns", 200);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_timeline_write(t, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "trace", ',');
	assert_contains(b.s, "\na,a,next,1,200,200.0,200.0,200.0,200\n");
	assert_contains(b.s, "\na,syscalls:sys_enter_write,next,1,50,");
	free(b.s);
	assert_int_equal(tacho_timeline_write(t, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "marks dropped: 2 (full ring)");
	free(b.s);
	assert_int_equal(tacho_timeline_write(t, stdout, (enum tacho_format)9, NULL), -EINVAL);
	tacho_timeline_free(t);
}

/* a trace of `tacho trace -s -- /bin/true` (fuzz corpus): the summary's members, with
 * rows, against the schema; its calls pair (raw_syscalls) */
static void test_trace_summary(void **state)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_timeline *t;
	struct th_json *doc;
	struct buf b;
	(void)state;

	assert_int_equal(tacho_timeline_load(th_path("fuzz/corpus/trace-file/syscalls.trace"),
					     &t, &diag), 0);
	assert_int_equal(tacho_timeline_write(t, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "trace");
	assert_true(th_json_get(doc, "syscalls")->n > 0);
	assert_json_type(doc, "syscalls[0].errnos", TH_JSON_ARRAY);
	/* the loader's access("/etc/ld.so.preload"), missing */
	const struct th_json *acc = th_json_find(doc, "syscalls", "syscall", "access");
	assert_non_null(acc);
	assert_json_int(acc, "calls", 1);
	assert_json_int(acc, "errors", 1);
	assert_json_str(acc, "errnos[0].name", "ENOENT");
	assert_json_int(acc, "errnos[0].count", 1);
	assert_int_equal(th_json_get(doc, "sched_latency")->n, 0);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_timeline_write_summary(t, buf_open(&b)), 0);
	assert_contains(buf_close(&b), "system calls (from sys_enter/sys_exit pairs");
	free(b.s);
	tacho_timeline_free(t);
}

static void test_options(void **state)
{
	struct tacho_check c = { .key = "k", .title = "t", .value = "v", .text = "x" };
	struct tacho_machine_view v = {
		.sz = sizeof(v), .checks = &c, .nchecks = 1, .check_sz = sizeof(c),
	};
	struct tacho_write_opts o = { .sz = sizeof(o), .json_compact = true };
	struct tacho_write_opts quote = { .sz = sizeof(quote), .csv_sep = '"' };
	struct tacho_write_opts old = { .sz = offsetof(struct tacho_write_opts, json_compact),
					.json_compact = true };
	struct th_json *doc;
	struct buf b;
	(void)state;

	/* one line, ending with a newline: JSON lines */
	assert_int_equal(tacho_machine_write(&v, buf_open(&b), TACHO_FORMAT_JSON, &o), 0);
	assert_int_equal(th_count_lines(buf_close(&b)), 1);
	assert_int_equal(b.s[strlen(b.s) - 1], '\n');
	doc = check_json(b.s, "doctor");
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_machine_write(&v, buf_open(&b), TACHO_FORMAT_JSON_LINES,
					     NULL), 0);
	assert_int_equal(th_count_lines(buf_close(&b)), 1);
	free(b.s);
	/* a caller that does not know json_compact gets the indented document */
	assert_int_equal(tacho_machine_write(&v, buf_open(&b), TACHO_FORMAT_JSON, &old), 0);
	assert_true(th_count_lines(buf_close(&b)) > 5);
	free(b.s);
	/* no separator CSV cannot quote; no sz */
	assert_int_equal(tacho_machine_write(&v, stdout, TACHO_FORMAT_CSV, &quote), -EINVAL);
	o.sz = 0;
	assert_int_equal(tacho_machine_write(&v, stdout, TACHO_FORMAT_CSV, &o), -EINVAL);
}

/* Writes text into the file at path (made with its folders, as the cache lays out). */
static void put_file(const char *path, const char *text)
{
	char dir[PATH_MAX];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0700);
			*p = '/';
		}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* A comparison of two stat documents: an exact change with its limit exceeded, a noisy
 * event without change, one without a value (unknown), in JSON (the schema), CSV and
 * Markdown. */
static void test_diff(void **state)
{
	static const char a[] = "{\"version\": 1, \"runs\": 3, \"events\": ["
		"{\"name\": \"w\", \"unit\": \"\", \"status\": \"counted\", \"values\": [10, 10, 10]},"
		"{\"name\": \"t|x\", \"unit\": \"msec\", \"status\": \"counted\", \"values\": [1, 2, 3]},"
		"{\"name\": \"n\", \"unit\": \"\", \"status\": \"not counted\", \"values\": [null, null, null]}]}";
	static const char b[] = "{\"version\": 1, \"runs\": 3, \"events\": ["
		"{\"name\": \"n\", \"unit\": \"\", \"status\": \"counted\", \"values\": [1, 1, 1]},"
		"{\"name\": \"w\", \"unit\": \"\", \"status\": \"counted\", \"values\": [12, 12, 12]},"
		"{\"name\": \"t|x\", \"unit\": \"msec\", \"status\": \"counted\", \"values\": [2, 2, 3]}]}";
	struct tacho_diag d = { .sz = sizeof(d) };
	struct tacho_diff *diff;
	struct th_json *doc;
	struct buf bf;
	(void)state;

	assert_int_equal(tacho_diff_stat(a, strlen(a), "a.json", b, strlen(b), "b.json", NULL,
					 &diff, &d), 0);
	assert_int_equal(tacho_diff_set_limit(diff, "w", 10), 0);
	assert_int_equal(tacho_diff_write(diff, buf_open(&bf), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&bf), "diff");
	assert_json_str(doc, "events[0].name", "w");
	assert_json_str(doc, "events[0].verdict", "changed");
	assert_true(json_num(doc, "events[0].change") == 2);
	assert_true(json_num(doc, "events[0].change_pct") == 20);
	assert_true(json_num(doc, "events[0].lo") == 2 && json_num(doc, "events[0].hi") == 2);
	assert_json_type(doc, "events[0].df", TH_JSON_NULL);
	assert_json_type(doc, "events[0].exceeds", TH_JSON_BOOL);
	assert_json_str(doc, "events[1].verdict", "no change");
	assert_json_str(doc, "events[2].verdict", "unknown");
	assert_json_str(doc, "events[2].note", "no value before");
	assert_json_type(doc, "events[2].before", TH_JSON_NULL);
	assert_json_int(doc, "exceeded", 1);
	th_json_free(doc);
	free(bf.s);
	assert_int_equal(tacho_diff_write(diff, buf_open(&bf), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&bf), "diff", ',');
	assert_contains(bf.s, "\nw,,changed,true,3,3,10,12,2,20,2,2,20,20,,10,true,\n");
	free(bf.s);
	assert_int_equal(tacho_diff_write_markdown(diff, buf_open(&bf)), 0);
	assert_contains(buf_close(&bf), "| t\\|x (msec) | 2 | 2.33333 |");
	assert_contains(bf.s, "**1 over the limit**");
	free(bf.s);
	assert_int_equal(tacho_diff_write(diff, buf_open(&bf), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&bf), "changed, over +10.00%");
	free(bf.s);
	tacho_diff_free(diff);
}

/* Two recordings compared: their one row in both, in the schema and the CSV header. */
static void test_profile_diff(void **state)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct tacho_profile_diff *d;
	struct th_json *doc;
	char a[128], b[128];
	struct buf bf;
	(void)state;

	snprintf(a, sizeof(a), "%s/pa.rec", tmpdir);
	snprintf(b, sizeof(b), "%s/pb.rec", tmpdir);
	if (make_recording(a, false) || make_recording(b, true))
		TEST_SKIP("the executable mapping of this program is not in /proc/self/maps");
	assert_int_equal(tacho_profile_diff_new(a, b, TACHO_SORT_SYMBOL, &d, &diag), 0);
	assert_int_equal(tacho_profile_diff_write(d, buf_open(&bf), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&bf), "diff-profile");
	assert_json_str(doc, "rows[0].symbol", "writers_hot");
	assert_json_str(doc, "rows[0].status", "both");
	assert_json_int(doc, "rows[0].before_samples", 3);
	assert_true(json_num(doc, "rows[0].change_pct") == 0);
	th_json_free(doc);
	free(bf.s);
	assert_int_equal(tacho_profile_diff_write(d, buf_open(&bf), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&bf), "diff-profile", ',');
	assert_contains(bf.s, "\nwriters_hot,");
	free(bf.s);
	tacho_profile_diff_free(d);
}

/* The build-id cache's list: two entries, one without its path file. */
static void test_buildid_cache(void **state)
{
	char dir[PATH_MAX], p[PATH_MAX + 128];
	struct tacho_diag d = { .sz = sizeof(d) };
	struct th_json *doc;
	struct buf b;
	unsigned removed;
	uint64_t freed;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/bc", tmpdir);
	snprintf(p, sizeof(p), "%s/.build-id/ab/cdef0123456789/elf", dir);
	put_file(p, "0123456789");
	snprintf(p, sizeof(p), "%s/.build-id/ab/cdef0123456789/path", dir);
	put_file(p, "/usr/bin/a \"quoted\", name\n");
	snprintf(p, sizeof(p), "%s/.build-id/12/3456789abc/elf", dir);
	put_file(p, "01234");
	assert_int_equal(tacho_buildid_cache_write(dir, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "buildid-cache");
	assert_json_int(doc, "bytes", 15);
	assert_json_str(doc, "entries[0].build_id", "123456789abc");
	assert_json_type(doc, "entries[0].path", TH_JSON_NULL);
	assert_json_str(doc, "entries[1].path", "/usr/bin/a \"quoted\", name");
	assert_json_int(doc, "entries[1].bytes", 10);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_buildid_cache_write(dir, buf_open(&b), TACHO_FORMAT_CSV, NULL), 0);
	assert_csv_header(buf_close(&b), "buildid-cache", ',');
	assert_contains(b.s, "\nabcdef0123456789,\"/usr/bin/a \"\"quoted\"\", name\",10,");
	free(b.s);
	assert_int_equal(tacho_buildid_cache_write(dir, buf_open(&b), TACHO_FORMAT_TABLE, NULL), 0);
	assert_contains(buf_close(&b), "# 2 binaries, 15 B in ");
	free(b.s);
	/* a folder that is not there is an empty cache */
	snprintf(p, sizeof(p), "%s/none", tmpdir);
	assert_int_equal(tacho_buildid_cache_write(p, buf_open(&b), TACHO_FORMAT_JSON, NULL), 0);
	doc = check_json(buf_close(&b), "buildid-cache");
	assert_json_int(doc, "bytes", 0);
	th_json_free(doc);
	free(b.s);
	assert_int_equal(tacho_buildid_cache_write(NULL, stdout, TACHO_FORMAT_JSON, NULL), -EINVAL);
	/* remove: bad forms, no match, by build-id prefix; prune to nothing */
	assert_int_equal(tacho_buildid_cache_remove(dir, "xyz", &removed, &d), -EINVAL);
	assert_int_equal(tacho_buildid_cache_remove(dir, "abcd", &removed, &d), -EINVAL);
	assert_int_equal(tacho_buildid_cache_remove(dir, "/usr/bin/b", &removed, &d), -ENOENT);
	assert_int_equal(tacho_buildid_cache_remove(dir, "ABCDEF01", &removed, &d), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(tacho_buildid_cache_prune(dir, 0, &removed, &freed, &d), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(freed, 5);
	snprintf(p, sizeof(p), "%s/.build-id", dir);
	assert_int_equal(rmdir(p), 0);   /* empty: every entry and its xx folder went */
	assert_int_equal(rmdir(dir), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-writers-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	rmdir(tmpdir);
	free(schemas_page);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu),
		cmocka_unit_test(test_report),
		cmocka_unit_test(test_report_simulated),
		cmocka_unit_test(test_mca_write),
		cmocka_unit_test(test_annotate_vdso),
		cmocka_unit_test(test_speedscope),
		cmocka_unit_test(test_script_json),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_stat_breakdown),
		cmocka_unit_test(test_sdt),
		cmocka_unit_test(test_stat_interval),
		cmocka_unit_test(test_stat_interval_units),
		cmocka_unit_test(test_stat_interval_perf_json),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_doctor),
		cmocka_unit_test(test_regions_bench),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_msr),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_trace_summary),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_buildid_cache),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_profile_diff),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
