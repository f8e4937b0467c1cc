/* test-msr-evtsel.c - the event-select value perf programs for an event, from the event's
 * perf_event_attr, without a PMU: encodings libpfm4 gives without one
 * (LIBPFM_ENCODE_INACTIVE), raw events, and cpu/.../ terms through the fake sysfs tree of
 * tests/data/sysfs-pmu; on an Intel architectural PMU, a P6 and AMD parts before and
 * after family 15h; with the fields decoded; and what it says of events no event-select
 * register holds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "events/events.h"
#include "msr/msr.h"

static const struct tacho_msr_cpu skylake = { TACHO_VENDOR_INTEL, 6, 0x55, false };
static const struct tacho_msr_cpu pentium2 = { TACHO_VENDOR_INTEL, 6, 5, false };
static const struct tacho_msr_cpu zen3 = { TACHO_VENDOR_AMD, 0x19, 1, false };
static const struct tacho_msr_cpu k10 = { TACHO_VENDOR_AMD, 0x10, 4, false };
static const struct tacho_msr_cpu via = { TACHO_VENDOR_VIA, 6, 0xf, false };

static char *sysfs_root;

static int setup(void **state)
{
	(void)state;
	/* before libpfm4 starts, which the library does on the first libpfm4 name */
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
	sysfs_root = strdup(th_path("tests/data/sysfs-pmu/devices"));
	return tc_pfm_init() == 0 && sysfs_root ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(sysfs_root);
	return 0;
}

/* INT, EN, USR and OS: what perf adds to every counting event that excludes nothing */
#define BASE 0x530000ull

static const struct {
	int line;
	const char *spec;
	const struct tacho_msr_cpu *cpu;
	int err;
	const char *reg;
	uint64_t value;
} cases[] = {
	/* libpfm4, Intel (Skylake's tables): the SDM's encodings with perf's bits */
	{ __LINE__, "skl::INST_RETIRED:ANY_P", &skylake, 0, "IA32_PERFEVTSEL0", BASE | 0xc0 },
	{ __LINE__, "skl::INST_RETIRED:ANY_P:u", &skylake, 0, "IA32_PERFEVTSEL0", 0x5100c0 },
	{ __LINE__, "skl::INST_RETIRED:ANY_P:k", &skylake, 0, "IA32_PERFEVTSEL0", 0x5200c0 },
	{ __LINE__, "skl::UOPS_ISSUED:ANY:c=1:i=1", &skylake, 0, "IA32_PERFEVTSEL0",
	  BASE | 0x0180010e },
	{ __LINE__, "skl::CYCLE_ACTIVITY:STALLS_TOTAL", &skylake, 0, "IA32_PERFEVTSEL0",
	  BASE | 0x040004a3 },
	{ __LINE__, "skl::LONGEST_LAT_CACHE:MISS", &skylake, 0, "IA32_PERFEVTSEL0", BASE | 0x412e },
	/* raw and the cpu PMU's terms (the fake sysfs tree's Intel formats) */
	{ __LINE__, "r1a8", &skylake, 0, "IA32_PERFEVTSEL0", BASE | 0x1a8 },
	{ __LINE__, "cpu/event=0x3c,umask=1/", &skylake, 0, "IA32_PERFEVTSEL0", BASE | 0x13c },
	{ __LINE__, "cpu/event=0x3c,umask=1,any=1,cmask=2,inv=1,edge=1/", &skylake, 0,
	  "IA32_PERFEVTSEL0", 0x02f7013c },
	/* pin control is not a bit perf passes on; bits 32-35 only as TSX's */
	{ __LINE__, "cpu/event=0xc0,pc=1/", &skylake, 0, "IA32_PERFEVTSEL0", BASE | 0xc0 },
	{ __LINE__, "r7000000c0", &skylake, 0, "IA32_PERFEVTSEL0", 0x3005300c0ull },
	/* the P6: its own PerfEvtSel0, no AnyThread, no TSX */
	{ __LINE__, "r0048", &pentium2, 0, "P6_PERFEVTSEL0", BASE | 0x48 },
	{ __LINE__, "r3002000c0", &pentium2, 0, "P6_PERFEVTSEL0", BASE | 0xc0 },
	/* AMD: PERF_CTL0 from family 15h, bits 35:32 of the event, HostOnly for
	 * exclude_guest (which libpfm4 sets) and GuestOnly for exclude_host */
	{ __LINE__, "amd64_fam19h_zen3::RETIRED_SSE_AVX_FLOPS:ANY", &zen3, 0, "PERF_CTL0",
	  (1ull << 41) | BASE | 0x0f03 },
	{ __LINE__, "amd64_fam17h_zen2::RETIRED_UOPS", &zen3, 0, "PERF_CTL0",
	  (1ull << 41) | BASE | 0xc1 },
	{ __LINE__, "r4000000c0", &zen3, 0, "PERF_CTL0", 0x4005300c0ull },
	{ __LINE__, "r1a8:G", &zen3, 0, "PERF_CTL0", (1ull << 40) | BASE | 0x1a8 },
	{ __LINE__, "r1a8:H", &zen3, 0, "PERF_CTL0", (1ull << 41) | BASE | 0x1a8 },
	{ __LINE__, "r1a8", &k10, 0, "AMD_PERFEVTSEL0", BASE | 0x1a8 },
	/* no event-select register holds these */
	{ __LINE__, "cycles", &skylake, -TACHO_ENOVALUE, NULL, 0 },
	{ __LINE__, "L1-dcache-load-misses", &skylake, -TACHO_ENOVALUE, NULL, 0 },
	{ __LINE__, "page-faults", &skylake, -TACHO_ENOVALUE, NULL, 0 },
	{ __LINE__, "msr/tsc/", &skylake, -TACHO_ENOVALUE, NULL, 0 },
	{ __LINE__, "r1a8", &via, -TACHO_EMSRCPU, NULL, 0 },
};

static struct tacho_evlist *parse(const char *spec, int line)
{
	struct tacho_event_opts o = { .sz = sizeof(o), .sysfs_pmu_root = sysfs_root };
	struct tacho_evlist *l;
	struct tacho_diag d = { .sz = sizeof(d) };

	if (tacho_evlist_parse_opts(spec, &o, &l, &d))
		fail_msg("line %d: '%s' does not parse: %s", line, spec, d.message);
	return l;
}

static void test_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_evlist *l = parse(cases[i].spec, cases[i].line);
		struct perf_event_attr a;
		const struct tacho_msr *m = NULL;
		uint64_t v = 0;
		int err;

		assert_int_equal(tacho_evlist_attr(l, 0, &a), 0);
		err = tacho_msr_evtsel(&a, tacho_evlist_pmu(l, 0), cases[i].cpu, &m, &v);
		if (err != cases[i].err)
			fail_msg("line %d: '%s' gives %d, want %d", cases[i].line, cases[i].spec, err,
				 cases[i].err);
		if (!err && (strcmp(m->name, cases[i].reg) || v != cases[i].value))
			fail_msg("line %d: '%s' gives %s = 0x%llx, want %s = 0x%llx", cases[i].line,
				 cases[i].spec, m->name, (unsigned long long)v, cases[i].reg,
				 (unsigned long long)cases[i].value);
		tacho_evlist_free(l);
	}
}

/* The set of a list's events, decoded: the CESR view of today's events. */
static void test_set(void **state)
{
	struct tacho_evlist *l = parse("cpu/event=0x3c,umask=1/,r1a8:u,page-faults,cycles", __LINE__);
	struct tacho_msr_set *set;
	struct tacho_msr_entry e = { .sz = sizeof(e) };
	struct tacho_msr_field_value fv = { .sz = sizeof(fv) };
	(void)state;

	assert_int_equal(tacho_msr_set_new(TACHO_MSR_SET_FIELDS, &set), 0);
	for (size_t i = 0; i < tacho_evlist_count(l); i++) {
		struct perf_event_attr a;
		assert_int_equal(tacho_evlist_attr(l, i, &a), 0);
		assert_int_equal(tacho_msr_set_add_event(set, tacho_evlist_name(l, i), &a,
							 tacho_evlist_pmu(l, i), &skylake), 0);
	}
	assert_int_equal(tacho_msr_set_count(set), 4);
	assert_int_equal(tacho_msr_set_entry(set, 0, &e), 0);
	assert_string_equal(e.label, "cpu/event=0x3c,umask=1/");
	assert_int_equal(e.cpu, -1);
	assert_int_equal(e.address, 0x186);
	assert_int_equal(e.value, 0x53013c);
	assert_int_equal(tacho_msr_decode_field(e.msr, 0, e.value, &fv), 0);
	assert_string_equal(fv.meaning, "unhalted reference cycles (architectural event, umask 0x01)");
	assert_int_equal(tacho_msr_set_entry(set, 1, &e), 0);
	assert_int_equal(e.value, 0x5101a8);
	assert_int_equal(tacho_msr_decode_field(e.msr, 3, e.value, &fv), 0);
	assert_string_equal(fv.name, "os");
	assert_string_equal(fv.meaning, "not in the kernel");
	assert_int_equal(tacho_msr_set_entry(set, 2, &e), 0);
	assert_int_equal(e.err, -TACHO_ENOVALUE);
	assert_false(e.has_value);
	assert_null(e.msr);
	assert_string_equal(e.why, "an event of the PMU 'software' (type 1), not of the core "
			    "counters: no event-select register holds it");
	assert_int_equal(tacho_msr_set_entry(set, 3, &e), 0);
	assert_string_equal(e.why, "a generic hardware event: the kernel picks its encoding for "
			    "this CPU from its own table (on Intel, the architectural event of "
			    "that name)");
	{
		struct perf_event_attr a;
		assert_int_equal(tacho_evlist_attr(l, 1, &a), 0);
		assert_int_equal(tacho_msr_set_add_event(set, NULL, &a, "cpu", &via), 0);
		assert_int_equal(tacho_msr_set_entry(set, 4, &e), 0);
		assert_string_equal(e.why, "tacho knows the event-select layout of Intel and AMD, "
				    "and this is VIA/Centaur family 0x6 model 0xf");
		assert_int_equal(tacho_msr_set_add_event(set, NULL, NULL, NULL, &via), -EINVAL);
		assert_int_equal(tacho_msr_evtsel(&a, "cpu", &skylake, NULL, NULL), -EINVAL);
	}
	tacho_msr_set_free(set);
	tacho_evlist_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_set),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
