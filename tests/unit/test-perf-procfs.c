/* test-perf-procfs.c - the procfs parsers of the engine on known texts, good and bad. */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "perf/perf.h"

static const struct {
	int line;
	const char *text;
	int err;
	uint64_t caps;
} capeff_cases[] = {
	{ __LINE__, "Name:\tx\nCapEff:\t000001ffffffffff\n", 0, 0x1ffffffffffull },
	{ __LINE__, "CapEff:\t0000000000000000\n", 0, 0 },
	{ __LINE__, "CapPrm:\t1\nCapEff:\t0000004000200000\nCapBnd:\t0\n", 0,
	  (1ull << 38) | (1ull << 21) },
	{ __LINE__, "CapEff: ffffffffffffffff", 0, ~0ull },
	{ __LINE__, "CapEff:\t", -TACHO_EPARSE, 0 },
	{ __LINE__, "CapEff:\t12345678901234567\n", -TACHO_EPARSE, 0 },
	{ __LINE__, "CapEff:\t00g0\n", -TACHO_EPARSE, 0 },
	{ __LINE__, "XCapEff:\t0\n", -TACHO_ENOVALUE, 0 },
	{ __LINE__, "Name: CapEff:\t0\n", -TACHO_ENOVALUE, 0 },
	{ __LINE__, "", -TACHO_ENOVALUE, 0 },
};

static void test_capeff(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(capeff_cases); i++) {
		uint64_t caps = 0;
		int err = tc_parse_capeff(capeff_cases[i].text, &caps);
		if (err != capeff_cases[i].err || (!err && caps != capeff_cases[i].caps))
			fail_msg("case at line %d: err %d caps %#llx", capeff_cases[i].line, err,
				 (unsigned long long)caps);
	}
	assert_int_equal(tc_parse_capeff(NULL, NULL), -TACHO_ENOVALUE);
}

static void test_mounts(void **state)
{
	const char *m = "sysfs /sys sysfs rw 0 0\n"
			"debugfs /sys/kernel/debug debugfs rw 0 0\n"
			"none /mnt/my\\040trace tracefs rw 0 0\n"
			"nodev /sys/kernel/tracing tracefs rw 0 0\n";
	char dir[64], small[6];
	(void)state;

	assert_int_equal(tc_mounts_find(m, "tracefs", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/mnt/my trace");
	assert_int_equal(tc_mounts_find(m, "debugfs", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/sys/kernel/debug");
	assert_int_equal(tc_mounts_find(m, "trace", dir, sizeof(dir)), -ENOENT);
	assert_int_equal(tc_mounts_find(m, "proc", dir, sizeof(dir)), -ENOENT);
	assert_int_equal(tc_mounts_find("", "tracefs", dir, sizeof(dir)), -ENOENT);
	assert_int_equal(tc_mounts_find("a b\n", "b", dir, sizeof(dir)), -ENOENT);
	assert_int_equal(tc_mounts_find("x /y\\05 tracefs", "tracefs", dir, sizeof(dir)), 0);
	assert_string_equal(dir, "/y\\05");    /* a cut escape stays as it is */
	assert_int_equal(tc_mounts_find(m, "sysfs", small, sizeof(small)), 0);
	assert_string_equal(small, "/sys");
	assert_int_equal(tc_mounts_find(m, "tracefs", small, sizeof(small)), 0);
	assert_string_equal(small, "/mnt/");   /* cut to the buffer */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capeff),
		cmocka_unit_test(test_mounts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
