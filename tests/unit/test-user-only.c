/* test-user-only.c - the pieces of the ':u' fallback that need no unprivileged user:
 * who needs it (from a hand-filled environment), how a name gains the 'u', and the
 * events it never touches. test-stat-user runs the whole as nobody. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "events/user-only.h"

static void test_needed(void **state)
{
	struct tc_perf_env env = { .paranoid = 2, .caps_known = true };
	(void)state;

	assert_true(tc_user_only_needed(&env));
	env.paranoid = 3;
	assert_true(tc_user_only_needed(&env));
	env.paranoid = 1;
	assert_false(tc_user_only_needed(&env));
	env.paranoid = TC_PARANOID_UNKNOWN;
	assert_false(tc_user_only_needed(&env));
	env.paranoid = 2;
	env.cap_perfmon = true;
	assert_false(tc_user_only_needed(&env));
	env.cap_perfmon = false;
	env.cap_sys_admin = true;
	assert_false(tc_user_only_needed(&env));
}

static void test_names(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "page-faults", "page-faults:u" },
		{ "cycles:p", "cycles:pu" },
		{ "cycles:ppp", "cycles:pppu" },
		{ "context-switches:D", "context-switches:Du" },
		{ "instructions:GI", "instructions:GIu" },
		{ "cpu/event=0x3c/", "cpu/event=0x3c/:u" },
		{ "cpu/name=a:p/", "cpu/name=a:p/:u" },
		{ "uprobe:/bin/x:main", "uprobe:/bin/x:main:u" },
		{ "r003c", "r003c:u" },
		{ "x:", "x::u" },
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *s = tc_user_only_name(cases[i].in);

		assert_non_null(s);
		assert_string_equal(s, cases[i].out);
		free(s);
	}
}

/* Events that exclude user space or the kernel already, and tracepoints (which fire in
 * the kernel), are left alone without a probe. */
static void test_untouched(void **state)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_PAGE_FAULTS, .exclude_user = 1 };
	struct perf_event_attr before;
	(void)state;

	before = a;
	assert_int_equal(tc_user_only_fallback(&a), 0);
	assert_memory_equal(&a, &before, sizeof(a));
	a.exclude_user = 0;
	a.exclude_kernel = 1;
	before = a;
	assert_int_equal(tc_user_only_fallback(&a), 0);
	assert_memory_equal(&a, &before, sizeof(a));
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = 1;
	before = a;
	assert_int_equal(tc_user_only_fallback(&a), 0);
	assert_memory_equal(&a, &before, sizeof(a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_needed),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_untouched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
