/* harness.h - what tacho's cmocka tests share: skips with a reason, running the tacho
 * binary and capturing what it prints, paths to the test data. */
#ifndef TACHO_TEST_HARNESS_H
#define TACHO_TEST_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <stdbool.h>
#include <cmocka.h>

#include "tacho/counters.h"

#ifndef ARRAY_SIZE   /* the same as lib/util/util.h's, for tests that do not include it */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* Skips the current test and says why (libuv's RETURN_SKIP): the reason is printed as
 * "SKIP: <test>: <reason>", which scripts/run-tests.sh collects into its summary. */
#define TEST_SKIP(...)                                                                  \
	do {                                                                            \
		th_skip_reason(__func__, __VA_ARGS__);                                  \
		skip();                                                                 \
		return;                                                                 \
	} while (0)
void th_skip_reason(const char *test, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs a test binary's cases as cmocka_run_group_tests does (every main calls it through
 * this macro), except the cases named in TACHO_TEST_LEAVE_OUT (names separated by
 * spaces), which scripts/run-tests.sh sets where a tree leaves some out (build/so: its
 * rule says which and why): each of those is skipped without running, and says
 * "SKIP: <case>: " and TACHO_TEST_LEAVE_OUT_WHY. A name there that is no case of the
 * binary fails the run (exit 1, saying so), so that the list follows the cases when
 * they are renamed. */
int th_run_group(const char *group, const struct CMUnitTest *tests, size_t n,
		 CMFixtureFunction setup, CMFixtureFunction teardown);
#undef cmocka_run_group_tests
#define cmocka_run_group_tests(tests, setup, teardown)                                  \
	th_run_group(#tests, (tests), sizeof(tests) / sizeof((tests)[0]), (setup), (teardown))

/* The result of running a command: its exit status (128 + signal number when it was
 * killed, as a shell reports it) and everything it wrote, NUL-terminated. */
struct th_run {
	int status;
	char *out;
	char *err;
	size_t out_len, err_len;
};
void th_run_free(struct th_run *r);

/* Runs argv (NULL-terminated), with `input` on its stdin (NULL: /dev/null), and waits.
 * Fails the test if the command cannot be started. */
void th_runv(struct th_run *r, const char *input, char *const argv[]);
/* fork(), retried on EAGAIN for up to 5 s; fails the test with the reason otherwise. */
pid_t th_fork(void);
/* Whether go is installed; if so, points go tool pprof's cache, settings and
 * temporary files (HOME, GOCACHE, PPROF_TMPDIR) at the test's folder for the rest of
 * the test binary. */
bool th_go_env(void);
/* Runs go (argv[0] "go") with HOME, GOCACHE and PPROF_TMPDIR in the test's folder for
 * that run only, the caller's environment again after it. */
void th_go_runv(struct th_run *r, char *const argv[]);
/* Runs argv (NULL-terminated) and fails the test, with its stderr, unless it exits 0. */
void th_run_ok(char *const argv[]);
/* Whether source s counts exactly on this machine, as the library proves it
 * (tacho_source_prove: the verdict this process holds, made once). False with *why a
 * sentence (static storage) when it does not, or could not be proven: a test that
 * checks an exact count of s skips with it (NEED_SOURCE), so that a machine whose
 * breakpoints never fire, or a run with TACHO_TEST_NOT_FIRING, skips and says why. */
bool th_source_exact(enum tacho_source s, const char **why);
#define NEED_SOURCE(s)                                                                  \
	do {                                                                            \
		const char *need_why_;                                                  \
		if (!th_source_exact((s), &need_why_))                                  \
			TEST_SKIP("%s cannot be counted exactly here: %s",              \
				  tacho_source_name(s), need_why_);                      \
	} while (0)
/* Sets TACHO_TEST_NOT_FIRING to sources for the commands a test runs next (the switch
 * that makes sources not fire), and th_not_firing_end puts back what the suite was
 * run with (TACHO_TEST_NOT_FIRING=all make test stays so for the tests after). */
void th_not_firing(const char *sources);
void th_not_firing_end(void);
/* Whether tracefs offers syscalls:sys_enter_write (at /sys/kernel/tracing or under
 * debugfs): the exact count of writes many tests check. */
bool th_have_write_tracepoint(void);
/* How many tracepoints syscalls:sys_enter_* names in tracefs (0 where there are none):
 * the event list of more than 64 events the tests of record and trace give. */
size_t th_syscall_enter_tracepoints(void);
/* The system call process pid is blocked in now (/proc/PID/syscall's first field:
 * x86-64's numbers, 7 poll, 35 nanosleep, 230 clock_nanosleep, 271 ppoll), or -1 when it
 * runs or cannot be read: how a test waits for a process to reach its wait. */
long th_proc_syscall(pid_t pid);
/* Runs the tacho binary under test with the given arguments, NULL-terminated. */
void th_tacho(struct th_run *r, ...);

/* The tacho binary under test ($TACHO_BIN, else build/tacho). */
const char *th_tacho_bin(void);
/* The build folder the tests belong to ($TACHO_BUILD, else build). */
const char *th_build_dir(void);
/* An absolute path to a file under the repository ($TACHO_SRC, else the current
 * folder) or, for paths starting "shared/", under the shared folder beside it
 * ($TACHO_SHARED, else ../shared). The string is static storage, overwritten by the
 * next call. */
const char *th_path(const char *rel);

/* The absolute path of the helper program tests/progs/NAME of the build under test
 * (th_build_dir(), made absolute with the current folder when it is relative: a program
 * run with -p, or probed by the kernel, needs no folder to be resolved against). Static
 * storage, one of four buffers in turn: the fourth call after overwrites it. */
const char *th_prog(const char *name);

/* The number of the first line of the repository file rel (as th_path) that contains
 * marker: where a helper program's source marks the line a sample must land on. Fails
 * the test when the file cannot be read or has no such line. */
int th_source_line(const char *rel, const char *marker);

/* A fresh folder for the files of a test (mkdtemp: /tmp/tacho-PROGRAM-XXXXXX), as a
 * cmocka setup and teardown pair: the setup makes it, the teardown removes it with all
 * it holds. The setup also points XDG_CACHE_HOME into it, so that the build-id cache
 * of the recordings a test makes is the test's own. th_tmpdir() is the folder;
 * th_tmp(name) the path of name inside it, in static storage, one of four buffers in
 * turn. */
/* The cgroup v2 hierarchy's mount point (from /proc/self/mounts) in buf, or NULL where
 * none is mounted. */
const char *th_cgroup2_root(char *buf, size_t size);

int th_tmpdir_setup(void **state);
int th_tmpdir_teardown(void **state);
const char *th_tmpdir(void);
const char *th_tmp(const char *name);

/* True if s contains needle; on false the test fails printing both. */
#define assert_contains(s, needle) th_assert_contains((s), (needle), __FILE__, __LINE__)
void th_assert_contains(const char *s, const char *needle, const char *file, int line);
#define assert_not_contains(s, needle) th_assert_not_contains((s), (needle), __FILE__, __LINE__)
void th_assert_not_contains(const char *s, const char *needle, const char *file, int line);
/* Number of lines in s (a final line without newline counts). */
size_t th_count_lines(const char *s);

/* Reads a test data file into a NUL-terminated buffer the caller frees; a name ending
 * ".xz" is decompressed (the test, not the library, runs xz -dc). 0 or -errno (-EIO when
 * xz fails, with its message printed). */
int th_read_data(const char *path, char **out, size_t *len);
/* libcpuid's corpus files append their expected results after a line of 80 dashes (LF
 * or CRLF): the offset of that line, i.e. the length of the dump a user has, or len
 * when there is no such line. */
size_t th_corpus_dump_len(const char *buf, size_t len);

#endif
