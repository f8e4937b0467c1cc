/* test-perf-explain.c - every failure of perf_event_open becomes its own sentence: each
 * errno for each event type, on machines described by hand (a VM without a PMU, a
 * bare-metal box with one, paranoid levels, capabilities), and the same sentences
 * reaching callers through the counters when the open hook injects the errors. */
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "perf/perf.h"
#include "perf/syscall.h"

enum { VM_USER, VM_ROOT, METAL_USER, METAL_ROOT, P3_USER, P1_USER, PERFMON_ONLY, NENV };

static const struct tc_perf_env envs[NENV] = {
	[VM_USER] = { .paranoid = 2, .caps_known = true, .euid = 1000, .core_pmu = "",
		      .hypervisor = true, .tracefs = true, .nofile = 1024 },
	[VM_ROOT] = { .paranoid = 2, .caps_known = true, .cap_sys_admin = true,
		      .cap_perfmon = true, .core_pmu = "", .hypervisor = true,
		      .tracefs = true, .nofile = 1024 },
	[METAL_USER] = { .paranoid = 2, .caps_known = true, .euid = 1000, .core_pmu = "cpu",
			 .tracefs = false, .nofile = 4096 },
	[METAL_ROOT] = { .paranoid = 2, .caps_known = true, .cap_sys_admin = true,
			 .cap_perfmon = true, .core_pmu = "cpu_core", .tracefs = true,
			 .nofile = 1048576 },
	[P3_USER] = { .paranoid = 3, .caps_known = true, .euid = 1000, .core_pmu = "cpu",
		      .nofile = 1024 },
	[P1_USER] = { .paranoid = 1, .caps_known = true, .euid = 1000, .core_pmu = "cpu",
		      .nofile = 1024 },
	[PERFMON_ONLY] = { .paranoid = 2, .caps_known = true, .cap_perfmon = true,
			   .euid = 1000, .core_pmu = "cpu", .nofile = 1024 },
};

enum { HW, CACHE, RAW, SW, TP, BP, BP_READ, MSR, CORE_DYN, UPROBE, ANY, NTYPE };

/* attr for each kind; MSR and CORE_DYN are dynamic PMU types, named explicitly */
static struct perf_event_attr attr_of(int kind)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);   /* what the public entry points read it by */
	switch (kind) {
	case HW: a.type = PERF_TYPE_HARDWARE; a.config = PERF_COUNT_HW_CPU_CYCLES; break;
	case CACHE: a.type = PERF_TYPE_HW_CACHE; a.config = 0x10000; break;
	case RAW: a.type = PERF_TYPE_RAW; a.config = 0x1c2; break;
	case SW: a.type = PERF_TYPE_SOFTWARE; a.config = PERF_COUNT_SW_PAGE_FAULTS; break;
	case TP: a.type = PERF_TYPE_TRACEPOINT; a.config = 840; break;
	case BP: a.type = PERF_TYPE_BREAKPOINT; a.bp_type = HW_BREAKPOINT_W;
		a.bp_len = HW_BREAKPOINT_LEN_8; a.bp_addr = 0x1000; break;
	case BP_READ: a.type = PERF_TYPE_BREAKPOINT; a.bp_type = HW_BREAKPOINT_R;
		a.bp_len = HW_BREAKPOINT_LEN_8; a.bp_addr = 0x1000; break;
	case MSR: a.type = 9; break;
	case CORE_DYN: a.type = 4; a.config = 0x3c; break;
	case UPROBE: a.type = 8; a.config = 0; break;
	case ANY: a.type = PERF_TYPE_RAW; a.config = 0x20003c; break;
	}
	return a;
}

static const char *pmu_of(int kind)
{
	return kind == MSR ? "msr" : kind == CORE_DYN ? "cpu" : kind == UPROBE ? "uprobe" : NULL;
}

#define EK 0x100u      /* the case's attr has exclude_kernel */
#define SP 0x200u      /* the case's attr samples */
#define PIP 0x400u     /* precise_ip = 2 */

static const struct {
	int line;
	int env, err, kind;
	unsigned flags;      /* TC_EXPLAIN_* | EK | SP | PIP */
	const char *want[3];
	const char *deny;    /* a hint the sentence must not give */
	enum tacho_hint hint; /* where it sends its reader (the CLI words it) */
} cases[] = {
	/* EACCES: what the paranoid level allows this user */
	{ __LINE__, VM_USER, EACCES, HW, 0, { "perf_event_paranoid is 2", "user space only",
					      "':u'" } },
	/* msr, power, uncore refuse exclude_* with EINVAL (PERF_PMU_CAP_NO_EXCLUDE): no
	 * ':u' hint for them */
	{ __LINE__, VM_USER, EACCES, MSR, 0, { "perf_event_paranoid is 2",
					       "the PMU 'msr' counts the kernel too", "to 1" },
	  "':u'" },
	/* the uprobe PMU wants perfmon_capable() whatever the rings or the paranoid
	 * level: ':u' (which it was told) cannot help */
	{ __LINE__, VM_USER, EACCES, UPROBE, 0, { "uprobe PMU needs CAP_PERFMON",
						  "whatever the modifiers" }, "':u'" },
	{ __LINE__, VM_USER, EACCES, UPROBE, EK, { "uprobe PMU needs CAP_PERFMON" }, "':u'" },
	{ __LINE__, P1_USER, EACCES, UPROBE, EK, { "uprobe PMU needs CAP_PERFMON" },
	  "perf_event_paranoid is" },
	{ __LINE__, VM_USER, EACCES, TP, 0, { "tracepoints fire in the kernel",
					      "perf_event_paranoid is 2", "CAP_PERFMON" } },
	{ __LINE__, VM_USER, EACCES, SW, TC_EXPLAIN_CPU_WIDE | EK,
	  { "counting whole CPUs needs perf_event_paranoid 0 or less", "it is 2 here",
	    "count a program or a PID instead" } },
	{ __LINE__, P1_USER, EACCES, SW, TC_EXPLAIN_CPU_WIDE, { "whole CPUs", "it is 1 here" } },
	{ __LINE__, P3_USER, EACCES, HW, EK, { "perf_event_paranoid is 3",
					       "no unprivileged user count anything",
					       "to 2 or less" } },
	{ __LINE__, P1_USER, EACCES, SW, EK, { "perf_event_paranoid is 1",
					       "users may count their own processes in user and "
					       "kernel mode", "another user" } },
	{ __LINE__, VM_ROOT, EACCES, HW, 0, { "even though this user has CAP_PERFMON",
					      "security module", "lockdown" } },
	{ __LINE__, PERFMON_ONLY, EACCES, BP, 0, { "has CAP_PERFMON" } },
	/* EPERM */
	{ __LINE__, VM_USER, EPERM, BP, 0, { "does not permit", "lockdown", "try as root" } },
	{ __LINE__, VM_ROOT, EPERM, SW, 0, { "does not permit", "audit log" } },
	/* ENOENT: no PMU in a VM, none on bare metal, an event the CPU lacks */
	{ __LINE__, VM_USER, ENOENT, HW, 0, { "this virtual machine has no hardware PMU",
					      "pmu=on')" }, NULL, TACHO_HINT_SIMULATE },
	{ __LINE__, VM_USER, ENOENT, CACHE, 0, { "this virtual machine has no hardware PMU" },
	  NULL, TACHO_HINT_SIMULATE },
	{ __LINE__, VM_USER, ENOENT, RAW, 0, { "this virtual machine has no hardware PMU" }, NULL,
	  TACHO_HINT_SIMULATE },
	{ __LINE__, METAL_USER, ENOENT, CORE_DYN, 0, { "this CPU does not have this event",
						       "('cpu')", "name an event of this CPU" },
	  NULL, TACHO_HINT_EVENTS },
	{ __LINE__, METAL_USER, ENOENT, RAW, 0, { "this CPU does not have this event" }, NULL,
	  TACHO_HINT_EVENTS },
	{ __LINE__, METAL_ROOT, ENOENT, HW, 0, { "PMU ('cpu_core') has no counter for this "
						 "generic event" }, NULL, TACHO_HINT_EVENTS },
	{ __LINE__, METAL_ROOT, ENOENT, CACHE, 0, { "no counter for this generic event" }, NULL,
	  TACHO_HINT_EVENTS },
	{ __LINE__, VM_ROOT, ENOENT, SW, 0, { "does not know software event 2" }, NULL,
	  TACHO_HINT_EVENTS },
	{ __LINE__, VM_ROOT, ENOENT, TP, 0, { "no tracepoint with id 840" }, NULL,
	  TACHO_HINT_EVENTS },
	{ __LINE__, METAL_USER, ENOENT, TP, 0, { "tracefs is not mounted",
						 "mount -t tracefs" } },
	{ __LINE__, VM_ROOT, ENOENT, BP, 0, { "CONFIG_HAVE_HW_BREAKPOINT" } },
	{ __LINE__, VM_ROOT, ENOENT, MSR, 0, { "the PMU 'msr' does not have this event",
					       "/sys/bus/event_source/devices/msr/events" } },
	/* EOPNOTSUPP */
	{ __LINE__, VM_USER, EOPNOTSUPP, HW, 0, { "this virtual machine has no hardware PMU" },
	  NULL, TACHO_HINT_SIMULATE },
	{ __LINE__, METAL_ROOT, EOPNOTSUPP, HW, PIP | SP, { "this precise level (':p')" } },
	{ __LINE__, METAL_ROOT, EOPNOTSUPP, RAW, SP, { "sampling on this event" } },
	{ __LINE__, METAL_ROOT, EOPNOTSUPP, HW, EK, { "filtering by privilege level" } },
	{ __LINE__, METAL_ROOT, EOPNOTSUPP, MSR, EK, { "the PMU 'msr' does not support this mode",
						       "use -a" } },
	{ __LINE__, METAL_ROOT, EOPNOTSUPP, MSR, SP, { "it cannot sample" } },
	{ __LINE__, VM_ROOT, EOPNOTSUPP, SW, SP, { "this software event does not support "
						   "sampling" } },
	{ __LINE__, VM_ROOT, EOPNOTSUPP, BP, 0, { "this breakpoint event does not support" } },
	{ __LINE__, VM_ROOT, EOPNOTSUPP, TP, 0, { "this tracepoint event does not support" } },
	/* EINVAL */
	{ __LINE__, METAL_ROOT, EINVAL, HW, TC_EXPLAIN_GROUP_MEMBER, { "the group does not fit",
								     "(split the group)" },
	  NULL, TACHO_HINT_SCHEDULE },
	/* AnyThread: EINVAL where deprecated (Ice Lake on), EACCES above paranoid 0 */
	{ __LINE__, METAL_ROOT, EINVAL, ANY, 0, { "refused the 'any' bit", "CPUID leaf 0xA" } },
	{ __LINE__, METAL_USER, EACCES, ANY, EK, { "the 'any' bit", "perf_event_paranoid 0",
						   "it is 2 here" } },
	{ __LINE__, METAL_ROOT, EINVAL, HW, PIP, { "a precise level (':p') is for sampling only",
						   "drop the 'p'" } },
	{ __LINE__, METAL_ROOT, EINVAL, HW, PIP | SP, { "the PMU rejected this encoding" }, NULL,
	  TACHO_HINT_EVENTS },
	{ __LINE__, METAL_ROOT, EINVAL, RAW, 0, { "the PMU rejected this encoding",
						  "counter mask" }, NULL, TACHO_HINT_EVENTS },
	{ __LINE__, VM_ROOT, EINVAL, BP, 0, { "the breakpoint is malformed", "1, 2, 4 or 8" } },
	/* x86 refuses a read-only breakpoint, however well formed */
	{ __LINE__, VM_ROOT, EINVAL, BP_READ, 0, { "no read-only data breakpoints", "':rw'" },
	  "malformed" },
	{ __LINE__, VM_ROOT, EINVAL, TP, 0, { "rejected this tracepoint (id 840)" } },
	{ __LINE__, VM_ROOT, EINVAL, SW, 0, { "rejected an option of this software event",
					      "perf_event_max_sample_rate" } },
	{ __LINE__, METAL_ROOT, EINVAL, MSR, EK, { "the PMU 'msr' cannot filter by privilege "
						   "level", "drop the ':u'" } },
	{ __LINE__, METAL_ROOT, EINVAL, UPROBE, EK, { "the PMU 'uprobe' rejected this "
						      "configuration" } },
	{ __LINE__, VM_ROOT, EINVAL, MSR, 0, { "the PMU 'msr' rejected this configuration",
					       "devices/msr/format" } },
	/* ENOSPC */
	{ __LINE__, VM_ROOT, ENOSPC, BP, 0, { "all hardware breakpoint registers are taken",
					      "four (DR0-DR3)", "at most four" } },
	{ __LINE__, METAL_ROOT, ENOSPC, HW, 0, { "no counter is free", "nmi_watchdog=0" } },
	{ __LINE__, METAL_ROOT, ENOSPC, MSR, 0, { "the msr has no room" } },
	/* EBUSY */
	{ __LINE__, METAL_ROOT, EBUSY, HW, 0, { "the CPU's PMU is busy", "exclusively",
						"stop the other tool" } },
	{ __LINE__, METAL_ROOT, EBUSY, MSR, 0, { "the msr is busy" } },
	/* the rest */
	{ __LINE__, VM_ROOT, E2BIG, SW, 0, { "older, smaller perf_event_attr", "newer kernel" } },
	{ __LINE__, VM_USER, EMFILE, SW, 0, { "too many open files", "the limit is 1024",
					      "ulimit -n" } },
	{ __LINE__, VM_USER, ENFILE, SW, 0, { "fs.file-max" } },
	{ __LINE__, VM_USER, ESRCH, SW, 0, { "does not exist" } },
	{ __LINE__, METAL_ROOT, ENODEV, HW, 0, { "lacks a feature" } },
	{ __LINE__, VM_USER, ENOSYS, SW, 0, { "no perf_event_open", "seccomp" } },
	{ __LINE__, VM_USER, EOVERFLOW, SW, 0, { "perf_event_max_stack" } },
	{ __LINE__, VM_USER, EFAULT, SW, 0, { "a bug in tacho" } },
	{ __LINE__, VM_USER, ENOMEM, SW, 0, { "perf_event_open failed: Cannot allocate memory" } },
	{ __LINE__, VM_USER, TACHO_ENOPMU, HW, 0, { "no hardware performance-monitoring unit" } },
};

static void test_sentences(void **state)
{
	char buf[1024];
	enum tacho_hint hint;
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct perf_event_attr a = attr_of(cases[i].kind);
		unsigned fl = cases[i].flags;

		a.exclude_kernel = (fl & EK) != 0;
		if (fl & SP)
			a.sample_period = 1000;
		if (fl & PIP)
			a.precise_ip = 2;
		tc_perf_explain(&envs[cases[i].env], -cases[i].err, &a, pmu_of(cases[i].kind),
				fl & (TC_EXPLAIN_CPU_WIDE | TC_EXPLAIN_GROUP_MEMBER), buf,
				sizeof(buf), &hint);
		/* where to look next is data: the sentence names no command */
		if (hint != cases[i].hint)
			fail_msg("case at line %d: hint %d, want %d (\"%s\")", cases[i].line,
				 (int)hint, (int)cases[i].hint, buf);
		if (strstr(buf, "tacho "))
			fail_msg("case at line %d: names a command: \"%s\"", cases[i].line, buf);
		for (size_t k = 0; k < ARRAY_SIZE(cases[i].want) && cases[i].want[k]; k++)
			if (!strstr(buf, cases[i].want[k]))
				fail_msg("case at line %d: \"%s\" lacks \"%s\"", cases[i].line, buf,
					 cases[i].want[k]);
		if (cases[i].deny && strstr(buf, cases[i].deny))
			fail_msg("case at line %d: \"%s\" gives \"%s\"", cases[i].line, buf,
				 cases[i].deny);
		/* the message style: lowercase start, no full stop at the end */
		if (buf[0] < 'a' || buf[0] > 'z' || buf[strlen(buf) - 1] == '.')
			fail_msg("case at line %d: style: \"%s\"", cases[i].line, buf);
		/* a positive errno means the same */
		char buf2[1024];
		tc_perf_explain(&envs[cases[i].env], cases[i].err, &a, pmu_of(cases[i].kind),
				fl & (TC_EXPLAIN_CPU_WIDE | TC_EXPLAIN_GROUP_MEMBER), buf2,
				sizeof(buf2), NULL);
		assert_string_equal(buf, buf2);
	}
}

static const int all_errnos[] = { EACCES, EPERM, ENOENT, EOPNOTSUPP, EINVAL, ENOSPC,
				  EBUSY, E2BIG, EMFILE };

/* Different errnos of one event type never collapse into one sentence. The only
 * sentences shared are the same cause under two codes: no PMU at all (a kernel answers
 * ENOENT or EOPNOTSUPP for a hardware event then). */
static void test_never_merged(void **state)
{
	char s[ARRAY_SIZE(all_errnos)][1024];
	(void)state;

	for (int env = 0; env < NENV; env++) {
		for (int kind = 0; kind < NTYPE; kind++) {
			struct perf_event_attr a = attr_of(kind);
			for (size_t e = 0; e < ARRAY_SIZE(all_errnos); e++)
				tc_perf_explain(&envs[env], -all_errnos[e], &a, pmu_of(kind), 0,
						s[e], sizeof(s[e]), NULL);
			for (size_t x = 0; x < ARRAY_SIZE(all_errnos); x++) {
				assert_true(strlen(s[x]) > 20);
				assert_null(strstr(s[x], "not supported"));
				for (size_t y = x + 1; y < ARRAY_SIZE(all_errnos); y++) {
					bool nopmu = !envs[env].core_pmu[0] &&
						     (kind == HW || kind == CACHE || kind == RAW ||
						      kind == CORE_DYN || kind == ANY) &&
						     all_errnos[x] == ENOENT &&
						     all_errnos[y] == EOPNOTSUPP;
					if (!nopmu && !strcmp(s[x], s[y]))
						fail_msg("env %d kind %d: %s and %s both say \"%s\"",
							 env, kind, tacho_err_name(-all_errnos[x]),
							 tacho_err_name(-all_errnos[y]), s[x]);
				}
			}
		}
	}
}

static void test_truncation(void **state)
{
	struct perf_event_attr a = attr_of(BP);
	char small[16];
	(void)state;

	memset(small, 'Z', sizeof(small));
	tc_perf_explain(&envs[VM_ROOT], -ENOSPC, &a, NULL, 0, small, sizeof(small), NULL);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_true(tc_starts_with("all hardware breakpoint", small));
	/* size 0 writes nothing */
	small[0] = 'Q';
	enum tacho_hint hint = TACHO_HINT_EVENTS;
	tc_perf_explain(&envs[VM_ROOT], -ENOSPC, &a, NULL, 0, small, 0, &hint);
	assert_int_equal(small[0], 'Q');
	assert_int_equal(hint, TACHO_HINT_NONE);
}

static const char *const paranoid_want[] = {
	"no restriction", "but not read raw tracepoint data", "but not whole CPUs",
	"only in user space", "not use perf_event_open at all",
};

static void test_paranoid_meanings(void **state)
{
	(void)state;
	for (int level = -1; level <= 3; level++)
		assert_contains(tc_paranoid_meaning(level), paranoid_want[level + 1]);
	assert_contains(tc_paranoid_meaning(4), "at all");
	assert_contains(tc_paranoid_meaning(TC_PARANOID_UNKNOWN), "unknown");
}

static void test_live_env(void **state)
{
	struct tc_perf_env env;
	long long p;
	char name[64];
	(void)state;

	assert_int_equal(tc_perf_env_probe(&env), 0);
	if (tc_read_int_file("/proc/sys/kernel/perf_event_paranoid", &p) == 0)
		assert_int_equal(env.paranoid, (int)p);
	assert_true(env.caps_known);
	/* the fixed types have fixed PMU names; an absurd type has none */
	assert_int_equal(tc_pmu_name_of_type(PERF_TYPE_BREAKPOINT, name, sizeof(name)), 0);
	assert_string_equal(name, "breakpoint");
	assert_int_equal(tc_pmu_name_of_type(PERF_TYPE_SOFTWARE, name, sizeof(name)), 0);
	assert_string_equal(name, "software");
	assert_int_equal(tc_pmu_name_of_type(0x7ffffff0, name, sizeof(name)), -ENOENT);
}

/* --- the same through the counters, with the open hook injecting failures --- */

struct inject {
	int err;
	int calls;
};

static int inject_open(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu,
		       int group_fd, unsigned long flags)
{
	struct inject *in = arg;

	in->calls++;
	return -in->err;
}

static void test_hook_every_errno_every_type(void **state)
{
	struct tc_perf_env env;
	(void)state;

	tc_perf_env_probe(&env);
	for (int kind = 0; kind < NTYPE; kind++) {
		if (kind == MSR || kind == CORE_DYN || kind == UPROBE)
			continue;  /* dynamic type numbers differ per machine */
		for (size_t e = 0; e < ARRAY_SIZE(all_errnos); e++) {
			struct inject in = { all_errnos[e], 0 };
			struct perf_event_attr a = attr_of(kind);
			struct tacho_counter_spec s = { .name = "ev", .attr = &a,
							.group = TACHO_GROUP_NONE };
			enum tacho_hint hint;
			struct tacho_counters_opts o = { .sz = sizeof(o),
							 .target = TACHO_TARGET_THREAD };
			struct tacho_counters *c;
			struct tacho_count v;
			char want[1024];

			tc_perf_set_open_hook(inject_open, &in);
			assert_int_equal(tacho_counters_open(&o, &s, 1, sizeof(s), &c), 0);
			tc_perf_set_open_hook(NULL, NULL);
			assert_true(in.calls >= 1);
			assert_int_equal(tacho_counters_opened(c), 0);
			assert_int_equal(tacho_counters_read(c, &v, 1, sizeof(v)), 0);
			/* out of descriptors: supported, not counted this time */
			assert_int_equal(v.status, all_errnos[e] == EMFILE || all_errnos[e] == ENFILE
					 ? TACHO_COUNT_NOT_COUNTED : TACHO_COUNT_NOT_SUPPORTED);
			assert_int_equal(v.err, -all_errnos[e]);
			assert_true(isnan(v.value));
			assert_non_null(v.why);
			/* the engine explains with the attr it really passed (read_format,
			 * disabled, inherit set): those fields do not change the sentence */
			tc_perf_explain(&env, -all_errnos[e], &a, NULL, 0, want, sizeof(want), &hint);
			if (strcmp(v.why, want))
				fail_msg("kind %d %s: engine says \"%s\", explainer \"%s\"", kind,
					 tacho_err_name(-all_errnos[e]), v.why, want);
			assert_int_equal(v.hint, hint);
			/* and the public perf strerror says the same */
			hint = TACHO_HINT_COUNT;
			tacho_perf_strerror(-all_errnos[e], &a, want, sizeof(want), &hint);
			assert_string_equal(v.why, want);
			assert_int_equal(v.hint, hint);
			tacho_counters_free(c);
		}
	}
}

/* A member that fails inside a group is explained as a member; the leader stays. */
struct member_fail {
	int n;
};

static int member_fail_open(void *arg, struct perf_event_attr *attr, pid_t pid, int cpu,
			    int group_fd, unsigned long flags)
{
	struct member_fail *m = arg;

	if (m->n++ == 0) {
		assert_int_equal(group_fd, -1);
		assert_true(attr->disabled);
		return open("/dev/null", O_RDONLY | O_CLOEXEC); /* stands for the leader */
	}
	assert_true(group_fd >= 0);
	assert_false(attr->disabled);
	return -EINVAL;
}

static void test_hook_group_member(void **state)
{
	struct member_fail m = { 0 };
	struct perf_event_attr a = attr_of(RAW);
	struct tacho_counter_spec s[2] = {
		{ .name = "lead", .attr = &a, .group = 0 },
		{ .name = "member", .attr = &a, .group = 0 },
	};
	struct tacho_counters_opts o = { .sz = sizeof(o), .target = TACHO_TARGET_THREAD };
	struct tacho_counters *c;
	struct tacho_count v[2];
	(void)state;

	tc_perf_set_open_hook(member_fail_open, &m);
	assert_int_equal(tacho_counters_open(&o, s, 2, sizeof(*s), &c), 0);
	tc_perf_set_open_hook(NULL, NULL);
	assert_int_equal(tacho_counters_opened(c), 1);
	/* the fake leader reads end-of-file, as a pinned group in error state does: no
	 * value for it; the member is explained as a member, with its hint */
	assert_int_equal(tacho_counters_read(c, v, 2, sizeof(*v)), 0);
	assert_int_equal(v[0].status, TACHO_COUNT_NOT_COUNTED);
	assert_int_equal(v[1].status, TACHO_COUNT_NOT_SUPPORTED);
	assert_int_equal(v[1].err, -EINVAL);
	assert_contains(v[1].why, "the group does not fit");
	assert_int_equal(v[1].hint, TACHO_HINT_SCHEDULE);
	tacho_counters_free(c);
	/* the public strerror knows no group: the same errno reads another way */
	{
		char buf[512];
		enum tacho_hint hint;
		tacho_perf_strerror(-EINVAL, &a, buf, sizeof(buf), &hint);
		assert_null(strstr(buf, "the group does not fit"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sentences),
		cmocka_unit_test(test_never_merged),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_paranoid_meanings),
		cmocka_unit_test(test_live_env),
		cmocka_unit_test(test_hook_every_errno_every_type),
		cmocka_unit_test(test_hook_group_member),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
