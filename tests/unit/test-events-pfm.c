/* test-events-pfm.c - CPU-specific names through libpfm4: tacho's encodings equal what
 * libpfm4 itself returns, and, where the vendor manual gives it, the expected hex.
 *
 * LIBPFM_ENCODE_INACTIVE=1 (set before libpfm4 starts) lets libpfm4 encode events of
 * PMUs this machine does not have, named "pmu::EVENT", so the table is exact here
 * without any PMU. Every case names its line. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "events/events.h"
/* after <linux/perf_event.h>: libpfm4's header then skips its own copy */
#include <perfmon/pfmlib_perf_event.h>

struct pfm_case {
	int line;
	const char *name;
	uint64_t sdm;       /* the manual's encoding (event | umask << 8 | ...), or NONE */
	uint64_t config1;   /* expected config1 (offcore response, ...) */
};
#define NONE (~0ull)
#define C(name, sdm) { __LINE__, name, sdm, 0 }
#define C1(name, sdm, c1) { __LINE__, name, sdm, c1 }

/* Intel encodings: Intel SDM vol. 3B ch. 19 (event select | umask << 8 | edge << 18 |
 * inv << 23 | cmask << 24); AMD: the PPR's PMCx event numbers. */
static const struct pfm_case cases[] = {
	/* Skylake */
	C("skl::INST_RETIRED:ANY_P", 0xc0),
	C("skl::CPU_CLK_UNHALTED:THREAD_P", 0x3c),
	C("skl::BR_INST_RETIRED:ALL_BRANCHES", 0xc4),
	C("skl::BR_MISP_RETIRED:ALL_BRANCHES", 0xc5),
	C("skl::BR_MISP_RETIRED", 0xc5),
	C("skl::MEM_LOAD_RETIRED:L1_HIT", 0x01d1),
	C("skl::MEM_LOAD_RETIRED:L1_MISS", 0x08d1),
	C("skl::MEM_LOAD_RETIRED.L1_MISS", 0x08d1),
	C("skl::MEM_LOAD_RETIRED:L2_MISS", 0x10d1),
	C("skl::MEM_LOAD_RETIRED:L3_MISS", 0x20d1),
	C("skl::LONGEST_LAT_CACHE:MISS", 0x412e),
	C("skl::LONGEST_LAT_CACHE:REFERENCE", 0x4f2e),
	C("skl::UOPS_ISSUED:ANY", 0x010e),
	C("skl::DTLB_LOAD_MISSES:MISS_CAUSES_A_WALK", 0x0108),
	C("skl::L2_RQSTS:ALL_DEMAND_DATA_RD", 0xe124),
	C("skl::ICACHE_64B:IFTAG_MISS", 0x0283),
	/* cmask: count cycles in which the event happened at least N times */
	C("skl::UOPS_ISSUED:ANY:c=1", 0x0100010e),
	C("skl::UOPS_ISSUED:ANY:c=1:i=1", 0x0180010e),
	C("skl::UOPS_ISSUED:ANY:e=1:c=1:i=1", 0x0184010e),
	C("skl::CYCLE_ACTIVITY:STALLS_TOTAL", 0x040004a3),
	C("skl::ARITH:DIVIDER_ACTIVE", 0x01000114),
	/* docs/events.md: libpfm4's own cycle-counting umasks are the cmask forms */
	C("skl::L1D_PEND_MISS:PENDING", 0x0148),
	C("skl::L1D_PEND_MISS:PENDING_CYCLES", 0x01000148),
	C("skl::L1D_PEND_MISS:PENDING:c=1:e=1", 0x01040148),
	C("skl::UOPS_ISSUED:STALL_CYCLES", 0x0180010e),
	C1("skl::OFFCORE_RESPONSE_0:DMND_DATA_RD:L3_MISS", 0x01b7, 0x3f84000001ull),
	/* Haswell, Ice Lake, Core 2 */
	C("hsw::INST_RETIRED:ANY_P", 0xc0),
	C("icl::INST_RETIRED:ANY_P", 0xc0),
	C("core::INSTRUCTIONS_RETIRED", 0xc0),
	C("core::UNHALTED_CORE_CYCLES", 0x3c),
	C("core::L2_LINES_IN:SELF", NONE),
	/* AMD */
	C("amd64_k8_revg::RETIRED_INSTRUCTIONS", 0xc0),
	C("amd64_fam17h_zen2::RETIRED_UOPS", 0xc1),
	C("amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", 0xc0),
	C("amd64_fam19h_zen3::CYCLES_NOT_IN_HALT", 0x76),
	C("amd64_fam19h_zen3::RETIRED_BRANCH_INSTRUCTIONS", 0xc2),
	C("amd64_fam19h_zen3::RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", 0xc3),
	C("amd64_fam19h_zen3::RETIRED_SSE_AVX_FLOPS:ANY", 0x0f03),
	C("amd64_fam19h_zen4::RETIRED_INSTRUCTIONS", 0xc0),
	C("amd64_fam19h_zen4::RETIRED_SSE_AVX_FLOPS:ANY", 0x1f03),
};

static int setup(void **state)
{
	(void)state;
	/* must be set before libpfm4's pfm_initialize, which the library runs lazily */
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
	return tc_pfm_init() == 0 ? 0 : -1;
}

/* What libpfm4 says, asked directly. */
static int pfm_direct(const char *name, struct perf_event_attr *a)
{
	pfm_perf_encode_arg_t arg;

	memset(a, 0, sizeof(*a));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = a;
	return pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
}

static void test_table(void **state)
{
	unsigned bad = 0;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct pfm_case *c = &cases[i];
		struct tacho_evlist *l;
		struct tacho_diag d = { .sz = sizeof(d) };
		struct perf_event_attr mine, theirs;
		int r;

		r = tacho_evlist_parse(c->name, &l, &d);
		if (r) {
			print_error("line %d: '%s' rejected: %s\n", c->line, c->name, d.message);
			bad++;
			continue;
		}
		tacho_evlist_attr(l, 0, &mine);
		if (tacho_evlist_source(l, 0) != TACHO_EVENT_SRC_PFM) {
			print_error("line %d: '%s' is not a libpfm4 event\n", c->line, c->name);
			bad++;
		}
		r = pfm_direct(c->name, &theirs);
		if (r != PFM_SUCCESS) {
			print_error("line %d: libpfm4 itself rejects '%s': %s\n", c->line, c->name,
				    pfm_strerror(r));
			bad++;
		} else if (mine.type != theirs.type || mine.config != theirs.config ||
			   mine.config1 != theirs.config1 || mine.config2 != theirs.config2 ||
			   mine.exclude_user != theirs.exclude_user ||
			   mine.exclude_kernel != theirs.exclude_kernel ||
			   mine.exclude_hv != theirs.exclude_hv) {
			print_error("line %d: '%s': tacho type %u config %#llx config1 %#llx, "
				    "libpfm4 type %u config %#llx config1 %#llx\n", c->line, c->name,
				    mine.type, (unsigned long long)mine.config,
				    (unsigned long long)mine.config1, theirs.type,
				    (unsigned long long)theirs.config,
				    (unsigned long long)theirs.config1);
			bad++;
		}
		if ((c->sdm != NONE && mine.config != c->sdm) || mine.config1 != c->config1 ||
		    mine.type != PERF_TYPE_RAW) {
			print_error("line %d: '%s': config %#llx config1 %#llx type %u, the manual "
				    "says %#llx / %#llx on the raw PMU\n", c->line, c->name,
				    (unsigned long long)mine.config, (unsigned long long)mine.config1,
				    mine.type, (unsigned long long)c->sdm,
				    (unsigned long long)c->config1);
			bad++;
		}
		if (!tc_evlist_get(l, 0)->uses_counter || !tacho_evlist_pmu(l, 0) ||
		    strncmp(tacho_evlist_pmu(l, 0), c->name, strlen(tacho_evlist_pmu(l, 0)))) {
			print_error("line %d: '%s': pmu '%s'\n", c->line, c->name, tacho_evlist_pmu(l, 0));
			bad++;
		}
		tacho_evlist_free(l);
	}
	if (bad)
		fail_msg("%u wrong of %zu", bad, ARRAY_SIZE(cases));
}

/* tacho's modifiers follow perf on top of libpfm4's encoding: the config is
 * libpfm4's, the privilege bits are perf's (":u" also excludes the hypervisor). */
static void test_modifiers(void **state)
{
	static const struct { int line; const char *name; uint64_t config; int eu, ek, eh, p; } m[] = {
		{ __LINE__, "skl::INST_RETIRED:ANY_P:u", 0xc0, 0, 1, 1, 0 },
		{ __LINE__, "skl::INST_RETIRED:ANY_P:k", 0xc0, 1, 0, 1, 0 },
		{ __LINE__, "skl::INST_RETIRED:ANY_P:uk", 0xc0, 0, 0, 1, 0 },
		{ __LINE__, "skl::MEM_LOAD_RETIRED.L1_MISS:pp", 0x08d1, 0, 0, 0, 2 },
		{ __LINE__, "skl::UOPS_ISSUED:ANY:c=1:u", 0x0100010e, 0, 1, 1, 0 },
		{ __LINE__, "amd64_fam19h_zen3::RETIRED_INSTRUCTIONS:k", 0xc0, 1, 0, 1, 0 },
	};
	unsigned bad = 0;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(m); i++) {
		struct tacho_evlist *l;
		struct tacho_diag d = { .sz = sizeof(d) };
		struct perf_event_attr a;

		if (tacho_evlist_parse(m[i].name, &l, &d)) {
			print_error("line %d: '%s' rejected: %s\n", m[i].line, m[i].name, d.message);
			bad++;
			continue;
		}
		tacho_evlist_attr(l, 0, &a);
		if (a.config != m[i].config || a.exclude_user != m[i].eu ||
		    a.exclude_kernel != m[i].ek || a.exclude_hv != m[i].eh || a.precise_ip != m[i].p) {
			print_error("line %d: '%s': config %#llx eu %d ek %d eh %d p %d\n", m[i].line,
				    m[i].name, (unsigned long long)a.config, a.exclude_user,
				    a.exclude_kernel, a.exclude_hv, a.precise_ip);
			bad++;
		}
		tacho_evlist_free(l);
	}
	if (bad)
		fail_msg("%u wrong", bad);
}

/* Errors point at the part libpfm4 rejects. */
static void test_errors(void **state)
{
	static const struct { int line; const char *name; int err; unsigned col; const char *frag; } e[] = {
		{ __LINE__, "skl::INST_RETIRED:BOGUS", -TACHO_ENOEVENT, 19, "libpfm4 rejects 'BOGUS'" },
		{ __LINE__, "skl::UOPS_ISSUED:ANY:c=999", -TACHO_ENOEVENT, 22, "libpfm4 rejects 'c=999'" },
		{ __LINE__, "skl::UOPS_ISSUED:ANY:zz=1", -TACHO_ENOEVENT, 22, "libpfm4 rejects 'zz=1'" },
		{ __LINE__, "skl::NO_SUCH_EVENT", -TACHO_ENOEVENT, 1, "unknown event" },
		{ __LINE__, "nosuchpmu::INST_RETIRED", -TACHO_ENOEVENT, 1, "unknown event" },
		{ __LINE__, "skl::INST_RETIRED:ANY_P:q", -TACHO_ENOEVENT, 25, "libpfm4 rejects 'q'" },
		/* libpfm4's generic "perf" PMU is not a second way to name generic events */
		{ __LINE__, "PERF_COUNT_HW_CPU_CYCLES", -TACHO_ENOEVENT, 1, "unknown event" },
		{ __LINE__, "perf::cycles", -TACHO_ENOEVENT, 1, "unknown event" },
	};
	unsigned bad = 0;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(e); i++) {
		struct tacho_evlist *l;
		struct tacho_diag d = { .sz = sizeof(d) };
		int r = tacho_evlist_parse(e[i].name, &l, &d);

		if (r == 0) {
			tacho_evlist_free(l);
			print_error("line %d: '%s' accepted\n", e[i].line, e[i].name);
			bad++;
		} else if (r != e[i].err || d.column != e[i].col || !strstr(d.message, e[i].frag)) {
			print_error("line %d: '%s': %s column %u '%s'\n", e[i].line, e[i].name,
				    tacho_err_name(r), d.column, d.message);
			bad++;
		}
	}
	if (bad)
		fail_msg("%u wrong", bad);
}

/* Every event `tacho list` shows for this CPU's active PMUs parses, and encodes as
 * libpfm4 encodes it. */
struct walk_state {
	size_t events, checked, needs_umask;
	unsigned bad;
};

static int check_listed(void *arg, const struct tacho_event_info *ev)
{
	struct walk_state *w = arg;
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };
	struct perf_event_attr mine, theirs;

	assert_int_equal(ev->source, TACHO_EVENT_SRC_PFM);
	w->events++;
	if (!ev->probe) {
		w->needs_umask++;
		return 0;
	}
	if (tacho_evlist_parse(ev->probe, &l, &d) != 0) {
		print_error("listed '%s' does not parse: %s\n", ev->probe, d.message);
		w->bad++;
		return 0;
	}
	tacho_evlist_attr(l, 0, &mine);
	tacho_evlist_free(l);
	if (pfm_direct(ev->probe, &theirs) != PFM_SUCCESS || mine.config != theirs.config ||
	    mine.config1 != theirs.config1 || mine.type != theirs.type) {
		print_error("listed '%s' encodes differently\n", ev->probe);
		w->bad++;
	}
	w->checked++;
	return 0;
}

static void test_listed_events_parse(void **state)
{
	struct walk_state w = { 0 };
	(void)state;

	assert_int_equal(tacho_events_foreach(NULL, 1u << TACHO_EVENT_SRC_PFM, check_listed, &w), 0);
	if (w.events == 0)
		TEST_SKIP("libpfm4 finds no active CPU PMU on this machine");
	print_message("%zu libpfm4 events listed, %zu encoded and checked, %zu need a umask\n",
		      w.events, w.checked, w.needs_umask);
	assert_int_equal(w.bad, 0);
	assert_true(w.checked > 0);
}

/* tacho.h promises that different lists may be parsed in different threads at once:
 * four threads parse the whole table 20 times and must all agree with it. */
static void *parse_table(void *arg)
{
	uintptr_t bad = 0;
	(void)arg;

	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
			struct tacho_evlist *l;
			struct tacho_diag d = { .sz = sizeof(d) };
			struct perf_event_attr a;

			if (tacho_evlist_parse(cases[i].name, &l, &d) != 0) {
				bad++;
				continue;
			}
			tacho_evlist_attr(l, 0, &a);
			if ((cases[i].sdm != NONE && a.config != cases[i].sdm) ||
			    a.config1 != cases[i].config1)
				bad++;
			tacho_evlist_free(l);
		}
	}
	return (void *)bad;
}

static void test_threads(void **state)
{
	pthread_t t[4];
	(void)state;

	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, parse_table, NULL), 0);
	for (int i = 0; i < 4; i++) {
		void *bad;
		assert_int_equal(pthread_join(t[i], &bad), 0);
		assert_int_equal((uintptr_t)bad, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_modifiers),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_listed_events_parse),
		cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
