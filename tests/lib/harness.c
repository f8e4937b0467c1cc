/* harness.c - helpers for the cmocka tests: skip reasons, running programs, paths. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

void th_skip_reason(const char *test, const char *fmt, ...)
{
	va_list ap;

	printf("SKIP: %s: ", test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The cases left out, in their order: cmocka runs them one after another, and a left-out
 * case runs nothing but says why (its state may be the group's, so its name is kept
 * here). */
static const char **left_out_names;
static size_t left_out_next;

static void left_out(void **state)
{
	const char *why = getenv("TACHO_TEST_LEAVE_OUT_WHY");
	(void)state;

	th_skip_reason(left_out_names[left_out_next++], "left out of this tree: %s",
		       why && *why ? why : "(no reason given)");
	skip();
}

/* Whether name is one of the space-separated words of list. */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	return false;
}

int th_run_group(const char *group, const struct CMUnitTest *tests, size_t n,
		 CMFixtureFunction setup, CMFixtureFunction teardown)
{
	const char *out = getenv("TACHO_TEST_LEAVE_OUT");
	struct CMUnitTest *run;
	size_t k = 0;
	int rc, missing = 0;

	if (!out || !*out)
		return _cmocka_run_group_tests(group, tests, n, setup, teardown);
	/* every name given is a case here */
	for (const char *p = out; *p;) {
		size_t len = strcspn(p, " ");
		bool found = false;

		for (size_t i = 0; i < n && len && !found; i++)
			found = strlen(tests[i].name) == len && !strncmp(tests[i].name, p, len);
		if (len && !found) {
			fprintf(stderr, "TACHO_TEST_LEAVE_OUT names %.*s, which is no case of this "
				"binary\n", (int)len, p);
			missing++;
		}
		p += len;
		p += strspn(p, " ");
	}
	if (missing)
		return 1;
	run = calloc(n, sizeof(*run));
	left_out_names = calloc(n, sizeof(*left_out_names));
	if (!run || !left_out_names) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		run[i] = tests[i];
		if (in_list(out, tests[i].name)) {
			run[i] = (struct CMUnitTest){ .name = tests[i].name, .test_func = left_out };
			left_out_names[k++] = tests[i].name;
		}
	}
	rc = _cmocka_run_group_tests(group, run, n, setup, teardown);
	free(run);
	free(left_out_names);
	return rc;
}

void th_run_free(struct th_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

static void append(char **buf, size_t *len, size_t *alloc, const char *data, size_t n)
{
	if (*len + n + 1 > *alloc) {
		size_t a = *alloc ? *alloc : 4096;
		while (a < *len + n + 1)
			a *= 2;
		*buf = realloc(*buf, a);
		assert_non_null(*buf);
		*alloc = a;
	}
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
}

pid_t th_fork(void)
{
	for (int tries = 0;; tries++) {
		pid_t pid = fork();

		if (pid >= 0)
			return pid;
		/* the kernel's "try again" (a moment's shortage of tasks or memory): a
		 * test waits for it rather than failing on what the machine lacked */
		if (errno != EAGAIN || tries == 50)
			fail_msg("fork failed: %s (after %d tries)", strerror(errno), tries + 1);
		usleep(100000);
	}
}

void th_runv(struct th_run *r, const char *input, char *const argv[])
{
	int po[2], pe[2], pi[2];
	size_t oa = 0, ea = 0;
	pid_t pid;
	int st;

	memset(r, 0, sizeof(*r));
	assert_int_equal(pipe2(po, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pe, O_CLOEXEC), 0);
	assert_int_equal(pipe2(pi, O_CLOEXEC), 0);
	fflush(NULL);
	pid = th_fork();
	if (pid == 0) {
		dup2(pi[0], 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	close(pi[0]);
	if (input) {
		/* inputs are small: a pipe holds 64 KiB; larger ones would need polling */
		signal(SIGPIPE, SIG_IGN);
		ssize_t n = write(pi[1], input, strlen(input));
		(void)n;
	}
	close(pi[1]);
	append(&r->out, &r->out_len, &oa, "", 0);
	append(&r->err, &r->err_len, &ea, "", 0);
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	int open_fds = 2;
	while (open_fds > 0) {
		char buf[8192];
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail_msg("poll: %s", strerror(errno));
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			ssize_t n = read(fds[i].fd, buf, sizeof(buf));
			if (n <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			} else if (i == 0) {
				append(&r->out, &r->out_len, &oa, buf, (size_t)n);
			} else {
				append(&r->err, &r->err_len, &ea, buf, (size_t)n);
			}
		}
	}
	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void th_tacho(struct th_run *r, ...)
{
	char *argv[64];
	int n = 0;
	va_list ap;

	argv[n++] = (char *)th_tacho_bin();
	va_start(ap, r);
	for (char *a; (a = va_arg(ap, char *)) != NULL && n < 63;)
		argv[n++] = a;
	va_end(ap);
	argv[n] = NULL;
	th_runv(r, NULL, argv);
}

const char *th_tacho_bin(void)
{
	static char path[PATH_MAX];
	const char *b = getenv("TACHO_BIN");

	if (b)
		return b;
	snprintf(path, sizeof(path), "%s/tacho", th_build_dir());
	return path;
}

const char *th_build_dir(void)
{
	const char *b = getenv("TACHO_BUILD");
	return b ? b : "build";
}

const char *th_path(const char *rel)
{
	static char path[PATH_MAX * 2];
	const char *src = getenv("TACHO_SRC");
	const char *shared = getenv("TACHO_SHARED");
	char cwd[PATH_MAX];

	if (!src) {
		if (!getcwd(cwd, sizeof(cwd)))
			strcpy(cwd, ".");
		src = cwd;
	}
	if (strncmp(rel, "shared/", 7) == 0) {
		if (shared)
			snprintf(path, sizeof(path), "%s/%s", shared, rel + 7);
		else
			snprintf(path, sizeof(path), "%s/../shared/%s", src, rel + 7);
	} else {
		snprintf(path, sizeof(path), "%s/%s", src, rel);
	}
	return path;
}

void th_assert_contains(const char *s, const char *needle, const char *file, int line)
{
	if (s && strstr(s, needle))
		return;
	print_error("%s:%d: expected to find \"%s\" in:\n%s\n", file, line, needle, s ? s : "(null)");
	fail();
}

void th_assert_not_contains(const char *s, const char *needle, const char *file, int line)
{
	if (!s || !strstr(s, needle))
		return;
	print_error("%s:%d: did not expect \"%s\" in:\n%s\n", file, line, needle, s);
	fail();
}

size_t th_count_lines(const char *s)
{
	size_t n = 0;

	for (const char *p = s; *p; p++)
		if (*p == '\n')
			n++;
	if (*s && s[strlen(s) - 1] != '\n')
		n++;
	return n;
}

int th_read_data(const char *path, char **out, size_t *len)
{
	size_t n = strlen(path), alloc = 0;
	char *buf = NULL;
	FILE *f;

	if (n > 3 && strcmp(path + n - 3, ".xz") == 0) {
		char *argv[] = { (char *)"xz", (char *)"-dc", (char *)path, NULL };
		struct th_run run;

		th_runv(&run, NULL, argv);
		if (run.status != 0) {
			print_error("xz -dc %s: exit %d: %s\n", path, run.status, run.err);
			th_run_free(&run);
			return -EIO;
		}
		*out = run.out;
		*len = run.out_len;
		run.out = NULL;
		th_run_free(&run);
		return 0;
	}
	f = fopen(path, "rb");
	if (!f)
		return -errno;
	*len = 0;
	append(&buf, len, &alloc, "", 0);
	for (;;) {
		char chunk[65536];
		size_t got = fread(chunk, 1, sizeof(chunk), f);

		if (got == 0)
			break;
		append(&buf, len, &alloc, chunk, got);
	}
	if (ferror(f)) {
		int err = errno ? -errno : -EIO;

		fclose(f);
		free(buf);
		return err;
	}
	fclose(f);
	*out = buf;
	return 0;
}

size_t th_corpus_dump_len(const char *buf, size_t len)
{
	for (const char *p = buf; p < buf + len;) {
		const char *nl = memchr(p, '\n', (size_t)(buf + len - p));
		size_t n = (size_t)((nl ? nl : buf + len) - p);

		if (n && p[n - 1] == '\r')
			n--;
		if (n == 80 && strspn(p, "-") >= 80)
			return (size_t)(p - buf);
		p = nl ? nl + 1 : buf + len;
	}
	return len;
}

const char *th_prog(const char *name)
{
	static char path[4][PATH_MAX + 64];
	static unsigned k;
	char *p = path[k++ % 4], cwd[PATH_MAX] = "";
	const char *build = th_build_dir();

	if (build[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		fail_msg("getcwd: %s", strerror(errno));
	snprintf(p, sizeof(path[0]), "%s%s%s/tests/progs/%s", cwd, cwd[0] ? "/" : "", build,
		 name);
	return p;
}

int th_source_line(const char *rel, const char *marker)
{
	FILE *f = fopen(th_path(rel), "r");
	char line[512];
	int n = 0;

	if (!f)
		print_error("cannot read %s: %s\n", th_path(rel), strerror(errno));
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, marker)) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	fail_msg("no %s in %s", marker, rel);
	return 0;
}

static char tmpdir[PATH_MAX];

int th_tmpdir_setup(void **state)
{
	char cache[PATH_MAX + 8];
	(void)state;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tacho-%s-XXXXXX", program_invocation_short_name);
	if (!mkdtemp(tmpdir))
		return -1;
	/* tacho record copies the binaries it saw into $XDG_CACHE_HOME/tacho: into this
	 * folder, not the cache of the user who runs the tests */
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	return setenv("XDG_CACHE_HOME", cache, 1);
}

int th_tmpdir_teardown(void **state)
{
	char cmd[PATH_MAX + 16];
	int st;
	(void)state;

	if (!tmpdir[0])
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	st = system(cmd);
	tmpdir[0] = '\0';
	return st == 0 ? 0 : -1;
}

const char *th_tmpdir(void)
{
	return tmpdir;
}

const char *th_tmp(const char *name)
{
	static char path[4][PATH_MAX + 256];
	static unsigned k;
	char *p = path[k++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

void th_run_ok(char *const argv[])
{
	struct th_run r;

	th_runv(&r, NULL, argv);
	if (r.status != 0)
		fail_msg("%s exited %d: %s", argv[0], r.status, r.err);
	th_run_free(&r);
}

long th_proc_syscall(pid_t pid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	/* "running", or the number and its arguments */
	return buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
}

bool th_source_exact(enum tacho_source s, const char **why)
{
	static struct tacho_source_proof p[TACHO_SOURCE_COUNT];

	if ((unsigned)s >= TACHO_SOURCE_COUNT) {
		*why = "no such source";
		return false;
	}
	if (!p[s].sz) {
		p[s].sz = sizeof(p[s]);
		if (tacho_source_prove(s, 0, &p[s])) {
			p[s].verdict = TACHO_VERDICT_UNKNOWN;
			snprintf(p[s].why, sizeof(p[s].why), "tacho_source_prove failed");
		}
	}
	*why = p[s].why;
	return p[s].verdict == TACHO_VERDICT_EXACT;
}

static char *not_firing_saved;
static bool not_firing_set;

void th_not_firing(const char *sources)
{
	const char *old = getenv("TACHO_TEST_NOT_FIRING");

	if (!not_firing_set) {
		free(not_firing_saved);
		not_firing_saved = old ? strdup(old) : NULL;
		not_firing_set = true;
	}
	setenv("TACHO_TEST_NOT_FIRING", sources, 1);
}

void th_not_firing_end(void)
{
	if (!not_firing_set)
		return;
	if (not_firing_saved)
		setenv("TACHO_TEST_NOT_FIRING", not_firing_saved, 1);
	else
		unsetenv("TACHO_TEST_NOT_FIRING");
	free(not_firing_saved);
	not_firing_saved = NULL;
	not_firing_set = false;
}

bool th_have_write_tracepoint(void)
{
	return access("/sys/kernel/tracing/events/syscalls/sys_enter_write", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/events/syscalls/sys_enter_write", F_OK) == 0;
}

size_t th_syscall_enter_tracepoints(void)
{
	static const char *const pat[] = { "/sys/kernel/tracing/events/syscalls/sys_enter_*/id",
					   "/sys/kernel/debug/tracing/events/syscalls/sys_enter_*/id" };
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(pat) && !n; i++) {
		glob_t g;
		if (glob(pat[i], 0, NULL, &g) == 0)
			n = g.gl_pathc;
		globfree(&g);
	}
	return n;
}

bool th_go_env(void)
{
	if (access("/usr/bin/go", X_OK) && access("/usr/lib/go/bin/go", X_OK))
		return false;
	setenv("HOME", th_tmpdir(), 1);
	setenv("GOCACHE", th_tmp("gocache"), 1);
	setenv("PPROF_TMPDIR", th_tmpdir(), 1);
	return true;
}

void th_go_runv(struct th_run *r, char *const argv[])
{
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	setenv("HOME", th_tmpdir(), 1);
	setenv("GOCACHE", th_tmp("gocache"), 1);
	setenv("PPROF_TMPDIR", th_tmpdir(), 1);
	th_runv(r, NULL, argv);
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	unsetenv("GOCACHE");
	unsetenv("PPROF_TMPDIR");
	free(home);
}

const char *th_cgroup2_root(char *buf, size_t size)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char line[1024], dir[512], type[64];
	const char *found = NULL;

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %511s %63s", dir, type) == 2 && !strcmp(type, "cgroup2")) {
			snprintf(buf, size, "%s", dir);
			found = buf;
		}
	if (f)
		fclose(f);
	return found;
}
