/* test-cpulist.c - CPU lists as -C and the kernel write them: good lists, bad ones with
 * the column of the fault. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/util.h"

static const struct {
	int line;
	const char *in;
	int err;
	unsigned column;        /* for errors */
	size_t n;
	int cpus[8];
} cases[] = {
	{ __LINE__, "0", 0, 0, 1, { 0 } },
	{ __LINE__, "0-3", 0, 0, 4, { 0, 1, 2, 3 } },
	{ __LINE__, "8,0-1,3", 0, 0, 4, { 0, 1, 3, 8 } },
	{ __LINE__, "2,2,1-2", 0, 0, 2, { 1, 2 } },
	{ __LINE__, "5-5", 0, 0, 1, { 5 } },
	{ __LINE__, "65535", 0, 0, 1, { 65535 } },
	{ __LINE__, "", -TACHO_EEMPTY, 1, 0, { 0 } },
	{ __LINE__, "3-1", -TACHO_EPARSE, 3, 0, { 0 } },
	{ __LINE__, "1,", -TACHO_EPARSE, 3, 0, { 0 } },
	{ __LINE__, ",1", -TACHO_EPARSE, 1, 0, { 0 } },
	{ __LINE__, "1-", -TACHO_EPARSE, 3, 0, { 0 } },
	{ __LINE__, "a", -TACHO_EPARSE, 1, 0, { 0 } },
	{ __LINE__, "0 ,1", -TACHO_EPARSE, 2, 0, { 0 } },
	{ __LINE__, "-1", -TACHO_EPARSE, 1, 0, { 0 } },
	{ __LINE__, "65536", -TACHO_EOUTOFRANGE, 1, 0, { 0 } },
	{ __LINE__, "0-99999999999", -TACHO_EOUTOFRANGE, 3, 0, { 0 } },
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct tacho_diag d = { .sz = sizeof(d) };
		int *cpus = NULL;
		size_t n = 99;
		int err = tc_parse_cpu_list(cases[i].in, &cpus, &n, &d);

		if (err != cases[i].err)
			fail_msg("case at line %d (\"%s\"): err %d, want %d", cases[i].line,
				 cases[i].in, err, cases[i].err);
		if (err) {
			if (d.column != cases[i].column)
				fail_msg("case at line %d: column %u, want %u (%s)", cases[i].line,
					 d.column, cases[i].column, d.message);
			assert_null(cpus);
			assert_int_equal(n, 0);
			continue;
		}
		if (n != cases[i].n || memcmp(cpus, cases[i].cpus, n * sizeof(int)) != 0)
			fail_msg("case at line %d (\"%s\"): %zu CPUs, first %d", cases[i].line,
				 cases[i].in, n, n ? cpus[0] : -1);
		free(cpus);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
