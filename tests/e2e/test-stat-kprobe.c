/* test-stat-kprobe.c - kprobes count exactly, like uprobes: `tacho stat -e
 * kprobe:FUNC` on the kernel function behind write(2) counts exactly the K writes of
 * a helper (tests/progs/stat-helper.c), and kretprobe: its K returns. Needs the kprobe
 * PMU (CONFIG_KPROBE_EVENTS) and the function in /proc/kallsyms; skips saying which is
 * missing. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"

static char func[64];       /* the kernel function write(2) enters, or "" */
static char skip_why[200];

static double count(const char *spec, const char *k)
{
	struct th_run r;
	struct th_json *j;
	double v;

	th_tacho(&r, "stat", "--json", "-e", spec, "--", th_prog("stat-helper"), "writes", k,
		 NULL);
	if (r.status != 0)
		fail_msg("tacho stat -e %s exited %d: %s", spec, r.status, r.err);
	j = assert_json(r.err);
	assert_string_equal(json_str(j, "events[0].status"), "counted");
	v = json_num(j, "events[0].value");
	th_json_free(j);
	th_run_free(&r);
	return v;
}

static void test_exact_calls(void **state)
{
	char spec[128];
	(void)state;

	if (*skip_why)
		TEST_SKIP("%s", skip_why);
	snprintf(spec, sizeof(spec), "kprobe:%s", func);
	assert_true(count(spec, "77") == 77);
	assert_true(count(spec, "0") == 0);
	snprintf(spec, sizeof(spec), "kretprobe:%s", func);
	assert_true(count(spec, "123") == 123);
}

static int setup(void **state)
{
	/* the syscall's own entry where the architecture has one, else the common part */
	static const char *const names[] = { "__x64_sys_write", "__arm64_sys_write",
					      "ksys_write" };
	FILE *f;
	char line[512];
	(void)state;

	if (access("/sys/bus/event_source/devices/kprobe/type", F_OK) != 0) {
		snprintf(skip_why, sizeof(skip_why), "no kprobe PMU in /sys/bus/event_source/"
			 "devices (the kernel lacks CONFIG_KPROBE_EVENTS)");
		return 0;
	}
	f = fopen("/proc/kallsyms", "r");
	for (size_t i = 0; f && i < ARRAY_SIZE(names) && !*func; i++) {
		char want[80];

		snprintf(want, sizeof(want), " T %s\n", names[i]);
		rewind(f);
		while (fgets(line, sizeof(line), f))
			if (strstr(line, want)) {
				snprintf(func, sizeof(func), "%s", names[i]);
				break;
			}
	}
	if (f)
		fclose(f);
	if (!*func)
		snprintf(skip_why, sizeof(skip_why), "/proc/kallsyms names none of the kernel "
			 "functions of write(2) this test knows");
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_calls),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
