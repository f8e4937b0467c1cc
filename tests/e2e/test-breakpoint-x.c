/* test-breakpoint-x.c - execute breakpoints at addresses that are not 8-byte aligned,
 * live: the kernel opens mem:ADDR:x at any byte of this program's code with bp_len
 * sizeof(long) (the encoding is checked on data in tests/unit/test-events-parse.c).
 * Where the debug registers never fire (this machine's hypervisor) the open still
 * succeeds and the library says the source does not count (-TACHO_ESILENT); the
 * count itself is then tested where breakpoints fire (test-cmd-stat). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/hw_breakpoint.h>

#include "harness.h"
#include "tacho.h"

__attribute__((noinline)) static int target(int x)
{
	return x * 3 + 1;
}

static void test_unaligned_x_opens(void **state)
{
	char spec[64];
	struct tacho_evlist *list = NULL;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	struct perf_event_attr attr;
	uintptr_t at = (uintptr_t)&target;
	int err;
	(void)state;

	/* an address 1 to 7 bytes past an 8-byte boundary, inside target's code */
	if (at % 8 == 0)
		at += 1;
	snprintf(spec, sizeof(spec), "mem:%#lx:x:u", (unsigned long)at);
	if (tacho_evlist_parse(spec, &list, &diag))
		fail_msg("%s does not parse: %s", spec, diag.message);
	assert_int_equal(tacho_evlist_attr(list, 0, &attr), 0);
	assert_int_equal(attr.type, PERF_TYPE_BREAKPOINT);
	assert_int_equal(attr.bp_type, HW_BREAKPOINT_X);
	assert_int_equal(attr.bp_len, sizeof(long));
	assert_true(attr.bp_addr == at && attr.bp_addr % 8 != 0);
	err = tacho_evlist_probe(list, 0);
	tacho_evlist_free(list);
	if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP || err == -EACCES ||
	    err == -EPERM || err == -ENOSPC)
		TEST_SKIP("no execute breakpoint can be opened here: %s", tacho_strerror(err));
	/* the kernel's refusal of a bad length or alignment would be -EINVAL */
	if (err != 0 && err != -TACHO_ESILENT)
		fail_msg("%s: perf_event_open refused it: %s", spec, tacho_strerror(err));
	assert_int_equal(target(2), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unaligned_x_opens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
