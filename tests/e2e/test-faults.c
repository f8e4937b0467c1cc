/* test-faults.c - real faults and hostile files around tacho's outputs: planted links,
 * a full disk (a small tmpfs), a read-only directory, a report written over its own
 * input, a failed and two concurrent recordings to one name, SIGKILL at several
 * moments, a report that cannot be written (/dev/full), a setuid tacho, links and files
 * another user planted where tacho trace's area once went, and a setuid program given
 * TACHO_TRACE. Each test says what must survive. */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	FILE *m = open_memstream(&buf, &len);
	int c;
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(m);
	fclose(f);
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int temps_of(const char *out)
{
	char pattern[1024];
	glob_t g;
	int n;

	snprintf(pattern, sizeof(pattern), "%s.tmp-??????", out);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	n = (int)g.gl_pathc;
	globfree(&g);
	return n;
}

static void record_ok(const char *out, const char *loops)
{
	struct th_run r;

	th_tacho(&r, "record", "-q", "-o", out, "--", th_prog("sample-cpu"), loops, NULL);
	if (r.status != 0)
		fail_msg("record -o %s: exit %d: %s", out, r.status, r.err);
	th_run_free(&r);
}

/* A link planted where an output goes is never followed: record, report -o and stat -o
 * refuse it with one line, and the file it points to is untouched. What tacho creates
 * is mode 0600 (a recording holds addresses, command lines, paths). */
static void test_links_refused_modes_0600(void **state)
{
	const char *victim = th_tmp("victim"), *link = th_tmp("link"), *rec = th_tmp("a.rec");
	struct th_run r;
	struct stat st;
	char *text;
	(void)state;

	put(victim, "precious\n");
	assert_int_equal(symlink(victim, link), 0);
	record_ok(rec, "20");
	assert_int_equal(stat(rec, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	th_tacho(&r, "record", "-q", "-o", link, "--", th_prog("sample-cpu"), "20", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "symbolic link");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);

	th_tacho(&r, "report", "-i", rec, "-o", link, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "symbolic link");
	th_run_free(&r);

	th_tacho(&r, "stat", "-e", "page-faults", "-o", link, "--", "true", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "symbolic link");
	th_run_free(&r);

	text = slurp(victim);
	assert_string_equal(text, "precious\n");
	free(text);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));

	/* report -o and stat -o create 0600 files too */
	th_tacho(&r, "report", "-i", rec, "-o", th_tmp("report.txt"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	assert_int_equal(stat(th_tmp("report.txt"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	th_tacho(&r, "stat", "-e", "page-faults", "-o", th_tmp("stat.txt"), "--", "true", NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	assert_int_equal(stat(th_tmp("stat.txt"), &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
}

/* report -i F -o F: refused in one line, the recording left as it was (it truncated its
 * own mapped input once: SIGBUS, the recording lost; then the report replaced it); by
 * another name of the same file (a hard link) and from standard input too. */
static void test_report_over_its_input(void **state)
{
	const char *rec = th_tmp("self.rec"), *hard = th_tmp("self-link.rec");
	struct th_run r;
	char *before, *after, cmd[2048];
	size_t blen, alen;
	(void)state;

	record_ok(rec, "50");
	assert_int_equal(th_read_data(rec, &before, &blen), 0);
	th_tacho(&r, "report", "-i", rec, "-o", rec, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: cannot write the report to '");
	assert_contains(r.err, "it is the recording being reported");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
	unlink(hard);
	assert_int_equal(link(rec, hard), 0);
	th_tacho(&r, "report", "-i", rec, "-o", hard, NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "it is the recording being reported");
	th_run_free(&r);
	snprintf(cmd, sizeof(cmd), "exec %s report -i - -o %s < %s", th_tacho_bin(), rec, rec);
	{
		char *argv[] = { (char *)"sh", (char *)"-c", cmd, NULL };
		th_runv(&r, NULL, argv);
	}
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "it is the recording being reported (-i -)");
	th_run_free(&r);
	assert_int_equal(th_read_data(rec, &after, &alen), 0);
	assert_int_equal(alen, blen);
	assert_memory_equal(after, before, blen);
	free(before);
	free(after);
	assert_int_equal(temps_of(rec), 0);
	unlink(rec);
	unlink(hard);
	/* a report of it elsewhere is fine */
	record_ok(rec, "20");
	th_tacho(&r, "report", "-i", rec, "-o", th_tmp("self.txt"), NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
}

/* A recording that fails (a mistyped program) keeps the previous one under the name; a
 * recording that succeeds moves the previous one to NAME.old, as perf does. */
static void test_failed_record_keeps_previous(void **state)
{
	const char *rec = th_tmp("keep.rec");
	char old[600];
	struct stat a, b;
	struct th_run r;
	(void)state;

	record_ok(rec, "20");
	assert_int_equal(stat(rec, &a), 0);
	th_tacho(&r, "record", "-q", "-o", rec, "--", "/nonexistent/program", NULL);
	assert_int_not_equal(r.status, 0);
	th_run_free(&r);
	assert_int_equal(stat(rec, &b), 0);
	assert_true(a.st_ino == b.st_ino && a.st_size == b.st_size);
	assert_int_equal(temps_of(rec), 0);

	record_ok(rec, "20");
	snprintf(old, sizeof(old), "%s.old", rec);
	assert_int_equal(stat(old, &b), 0);
	assert_true(a.st_ino == b.st_ino);
	th_tacho(&r, "report", "-i", old, NULL);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
}

/* Two recordings to one name at once: each writes its own temporary file, the last
 * rename wins, and what is left is one whole recording (no "ends early"), no temp. */
static void test_concurrent_records(void **state)
{
	const char *rec = th_tmp("both.rec");
	pid_t pid[2];
	int status;
	struct th_run r;
	(void)state;

	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			int fd = open("/dev/null", O_WRONLY);
			dup2(fd, 2);
			execl(th_tacho_bin(), "tacho", "record", "-q", "-o", rec, "--",
			      th_prog("sample-cpu"), "200", (char *)NULL);
			_exit(126);
		}
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	th_tacho(&r, "report", "-i", rec, NULL);
	assert_int_equal(r.status, 0);
	assert_not_contains(r.err, "ends early");
	assert_not_contains(r.err, "no final record");
	th_run_free(&r);
	assert_int_equal(temps_of(rec), 0);
}

/* SIGKILL to tacho record at several moments (at once, early, later): the name keeps
 * the previous recording, the very same file; a temporary file left behind, if any,
 * reads back up to its last record or is refused with one line, never a crash. */
static void test_sigkill_moments(void **state)
{
	static const long ms[] = { 0, 30, 300 };
	const char *rec = th_tmp("kill.rec");
	struct stat a, b;
	(void)state;

	record_ok(rec, "20");
	assert_int_equal(stat(rec, &a), 0);
	for (size_t i = 0; i < ARRAY_SIZE(ms); i++) {
		struct timespec ts = { 0, ms[i] * 1000000L };
		struct th_run r;
		char pattern[1024];
		glob_t g;
		int status;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0) {
			setpgid(0, 0);
			execl(th_tacho_bin(), "tacho", "record", "-q", "-o", rec, "--",
			      th_prog("sample-cpu"), "5000", (char *)NULL);
			_exit(126);
		}
		setpgid(pid, pid);
		nanosleep(&ts, NULL);
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
		assert_int_equal(stat(rec, &b), 0);
		assert_true(a.st_ino == b.st_ino && a.st_size == b.st_size);
		snprintf(pattern, sizeof(pattern), "%s.tmp-??????", rec);
		if (glob(pattern, 0, NULL, &g) == 0) {
			for (size_t k = 0; k < g.gl_pathc; k++) {
				th_tacho(&r, "report", "-i", g.gl_pathv[k], NULL);
				/* whole records read back, or one line saying why not */
				if (r.status != 0)
					assert_int_equal(th_count_lines(r.err), 1);
				assert_true(r.status == 0 || r.status == 1);
				th_run_free(&r);
				unlink(g.gl_pathv[k]);
			}
			globfree(&g);
		}
	}
}

/* A small tmpfs of our own (as root), else a skip with the reason. */
static bool mount_tmpfs(const char *dir, const char *opts, char *why, size_t whysz)
{
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(why, whysz, "mkdir %s: %s", dir, strerror(errno));
		return false;
	}
	if (mount("tacho-test", dir, "tmpfs", 0, opts) != 0) {
		snprintf(why, whysz, "cannot mount a tmpfs (%s; needs root)", strerror(errno));
		return false;
	}
	return true;
}

/* Disk full while recording: one line saying so, exit 1, the previous recording
 * intact under the name, and no temporary file left to fill the disk further. */
static void test_disk_full(void **state)
{
	char dir[600], rec[700], why[200];
	struct stat a, b;
	struct th_run r;
	(void)state;

	snprintf(dir, sizeof(dir), "%s", th_tmp("small"));
	if (!mount_tmpfs(dir, "size=96k", why, sizeof(why)))
		TEST_SKIP("%s", why);
	snprintf(rec, sizeof(rec), "%s/x.rec", dir);
	th_tacho(&r, "record", "-q", "-o", rec, "--", th_prog("sample-cpu"), "5", NULL);
	if (r.status != 0) {
		umount(dir);
		fail_msg("a small recording did not fit 96 KiB: %s", r.err);
	}
	th_run_free(&r);
	assert_int_equal(stat(rec, &a), 0);
	/* 8,000 samples with a copy of the user stack each (--call-graph dwarf): far more
	 * than 96 KiB (chains alone no longer are: a repeated chain is a reference to its
	 * first copy, and sample-cpu's repeat) */
	th_tacho(&r, "record", "-q", "--call-graph", "dwarf", "-F", "4000", "-o", rec, "--",
		 th_prog("sample-cpu"), "2000", NULL);
	int status = r.status;
	char *err = strdup(r.err);
	th_run_free(&r);
	int left = temps_of(rec);
	int st = stat(rec, &b);
	umount(dir);
	assert_int_equal(status, 1);
	assert_non_null(strstr(err, "No space left on device"));
	assert_int_equal(th_count_lines(err), 1);
	free(err);
	assert_int_equal(st, 0);
	assert_true(a.st_ino == b.st_ino && a.st_size == b.st_size);
	assert_int_equal(left, 0);
}

/* A read-only directory (a read-only tmpfs: root writes through mode bits): record,
 * report -o and stat -o say so in one line and exit 1. */
static void test_read_only_dir(void **state)
{
	char dir[600], path[700], why[200];
	struct th_run r[3];
	(void)state;

	snprintf(dir, sizeof(dir), "%s", th_tmp("ro"));
	if (!mount_tmpfs(dir, "size=64k", why, sizeof(why)))
		TEST_SKIP("%s", why);
	if (mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY, NULL) != 0) {
		umount(dir);
		TEST_SKIP("cannot remount read-only: %s", strerror(errno));
	}
	snprintf(path, sizeof(path), "%s/x", dir);
	th_tacho(&r[0], "record", "-q", "-o", path, "--", th_prog("sample-cpu"), "5", NULL);
	th_tacho(&r[1], "stat", "-e", "page-faults", "-o", path, "--", "true", NULL);
	th_tacho(&r[2], "cpu", NULL);
	umount(dir);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r[i].status, 1);
		assert_contains(r[i].err, "Read-only file system");
		assert_int_equal(th_count_lines(r[i].err), 1);
	}
	for (int i = 0; i < 3; i++)
		th_run_free(&r[i]);
}

/* The regions report when its file cannot be written after the open (/dev/full: every
 * write fails, as on a full disk): it falls back to stderr, saying so, instead of an
 * exit 0 with nothing anywhere. */
static void test_regions_report_full(void **state)
{
	char prog[600];
	struct th_run r;
	(void)state;

	snprintf(prog, sizeof(prog), "%s/examples/array-walk", th_build_dir());
	char *argv[] = { (char *)"env", (char *)"TACHO_OUTPUT=/dev/full", prog, NULL };
	th_runv(&r, NULL, argv);
	assert_contains(r.err, "cannot write the report to /dev/full");
	assert_contains(r.err, "No space left on device");
	assert_contains(r.err, "tacho regions (TSC");   /* the table, on stderr */
	th_run_free(&r);
}

/* stat's counts go to stderr: when it cannot be written, the exit status says so. */
static void test_stat_stderr_full(void **state)
{
	char cmd[600];
	struct th_run r;
	(void)state;

	snprintf(cmd, sizeof(cmd), "'%s' stat -e page-faults -- true 2>/dev/full",
		 th_tacho_bin());
	char *argv[] = { (char *)"sh", (char *)"-c", cmd, NULL };
	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 1);
	th_run_free(&r);
}

/* A copy of path in dir, owned by nobody with the setuid bit, or false with the reason
 * (a file system mounted nosuid, not root). */
static bool setuid_copy(const char *src, const char *dst, char *why, size_t whysz)
{
	char cmd[1400];
	struct statvfs vfs;

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chown nobody '%s' && chmod 4755 '%s'",
		 src, dst, dst, dst);
	if (geteuid() != 0) {
		snprintf(why, whysz, "needs root to make a setuid copy");
		return false;
	}
	if (system(cmd) != 0) {
		snprintf(why, whysz, "cannot make a setuid copy of %s", src);
		return false;
	}
	if (statvfs(dst, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)) {
		snprintf(why, whysz, "%s is on a file system mounted nosuid", dst);
		return false;
	}
	return true;
}

/* A setuid tacho (owned by nobody here) serves root, whose real uid is 0, and refuses
 * anyone else with one line recommending a capability instead. */
static void test_setuid_tacho(void **state)
{
	char dir[600], bin[700], why[200];
	struct th_run r;
	(void)state;

	snprintf(dir, sizeof(dir), "%s", th_tmp("suid"));
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(th_tmpdir(), 0755), 0);
	snprintf(bin, sizeof(bin), "%s/tacho", dir);
	if (!setuid_copy(th_tacho_bin(), bin, why, sizeof(why)))
		TEST_SKIP("%s", why);
	char *as_root[] = { bin, (char *)"--version", NULL };
	th_runv(&r, NULL, as_root);
	/* the shared-library variant finds libtacho.so through $ORIGIN, which the loader
	 * ignores in a setuid program (and the copy is elsewhere anyway) */
	if (strstr(r.err, "cannot open shared object"))
		TEST_SKIP("the setuid copy cannot load its libraries: %s", r.err);
	/* LeakSanitizer cannot run in a setuid process (it would ptrace it) and says so
	 * at exit, with status 1, whatever ASAN_OPTIONS say: in the ASan tree the
	 * status is the sanitizer's, and what tacho printed is the test */
	bool lsan = strstr(r.err, "LeakSanitizer has encountered a fatal error");
	assert_contains(r.out, "tacho ");
	if (!lsan)
		assert_int_equal(r.status, 0);
	assert_not_contains(r.err, "refusing");
	th_run_free(&r);

	char *as_daemon[] = { (char *)"setpriv", (char *)"--reuid=1", (char *)"--regid=1",
			      (char *)"--clear-groups", bin, (char *)"--version", NULL };
	th_runv(&r, NULL, as_daemon);
	if (r.status == 127 || strstr(r.err, "setpriv:"))
		TEST_SKIP("cannot run as another user: %s", r.err);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "tacho: refusing to run setuid");
	assert_contains(r.err, "cap_perfmon");
	assert_string_equal(r.out, "");
	if (!lsan)
		assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
}

/* A privileged program linked with libtacho (here: the array-walk example, setuid
 * nobody, run by root: AT_SECURE) ignores TACHO_OUTPUT, saying so on stderr, where the
 * report then goes; the file named is not written, though nobody could write there. */
static void test_secure_env_ignored(void **state)
{
	char dir[600], bin[700], src[700], out[700], env_out[800], why[200];
	struct th_run r;
	struct stat st;
	(void)state;

	snprintf(dir, sizeof(dir), "%s", th_tmp("secure"));
	assert_int_equal(mkdir(dir, 0777), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(chmod(th_tmpdir(), 0755), 0);
	snprintf(bin, sizeof(bin), "%s/array-walk", dir);
	snprintf(src, sizeof(src), "%s/examples/array-walk", th_build_dir());
	if (!setuid_copy(src, bin, why, sizeof(why)))
		TEST_SKIP("%s", why);
	snprintf(out, sizeof(out), "%s/report.json", dir);
	snprintf(env_out, sizeof(env_out), "TACHO_OUTPUT=%s", out);
	char *argv[] = { (char *)"env", env_out, bin, NULL };
	th_runv(&r, NULL, argv);
	/* (the example reads TACHO_EVENTS itself and passes it as its events: the
	 * library's own reading of it, the same function, is not reached here) */
	assert_contains(r.err, "TACHO_OUTPUT ignored");
	assert_contains(r.err, "tacho regions (TSC");   /* the report, on stderr */
	assert_int_not_equal(stat(out, &st), 0);
	th_run_free(&r);
}

/* The names planted in /dev/shm, removed at the end whatever happened. */
static char planted[64][64];
static size_t nplanted;

static void unplant(void)
{
	for (size_t i = 0; i < nplanted; i++)
		unlink(planted[i]);
	nplanted = 0;
}

static int teardown(void **state)
{
	unplant();
	return th_tmpdir_teardown(state);
}

/* What a planted name must still be afterwards. */
static void check_planted(const char *name, bool link, const char *victim)
{
	char buf[4096];
	struct stat st;
	ssize_t n;

	assert_int_equal(lstat(name, &st), 0);
	if (link) {
		assert_true(S_ISLNK(st.st_mode));
		n = readlink(name, buf, sizeof(buf) - 1);
		assert_true(n > 0);
		buf[n] = '\0';
		assert_string_equal(buf, victim);
		return;
	}
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0666);
	assert_int_equal(st.st_size, 8);
	char *text = slurp(name);
	assert_non_null(text);
	assert_string_equal(text, "planted\n");
	free(text);
}

/* nobody, as root plants for them: a link to root's file, or a file anyone may read and
 * write, under the name an older tacho gave its area (/dev/shm/tacho-trace-PID), for
 * tacho's own PID and the next ones. Then root's tacho trace runs. tacho made its area
 * there with O_CREAT|O_TRUNC and no O_EXCL or O_NOFOLLOW, and stretched it to ~400 MB:
 * through the link it truncated root's file, through the file it let nobody read and
 * write root's area (issue 27). Now the area has no name: the victim, the links and the
 * files are as they were, and the trace is whole. The PID is known before tacho runs:
 * the child that execs tacho waits until the names are planted (exec keeps the PID). */
static void test_planted_area_names(void **state)
{
	struct passwd *pw = getpwnam("nobody");
	char victim[600];
	(void)state;

	snprintf(victim, sizeof(victim), "%s", th_tmp("victim"));   /* th_tmp's buffers turn */

	if (geteuid() != 0)
		TEST_SKIP("needs root, to run tacho as root with names planted as nobody");
	if (!pw)
		TEST_SKIP("no user nobody to plant as");
	put(victim, "root's own file\n");
	assert_int_equal(chmod(victim, 0600), 0);
	for (int round = 0; round < 2; round++) {
		bool links = round == 0;
		char out[600], errf[600], trace[600], tag[32];
		int go[2], st;
		pid_t pid;

		snprintf(tag, sizeof(tag), "planted%d", round);
		snprintf(trace, sizeof(trace), "%s.trace", th_tmp(tag));
		snprintf(out, sizeof(out), "%s.out", th_tmp(tag));
		snprintf(errf, sizeof(errf), "%s.err", th_tmp(tag));
		assert_int_equal(pipe2(go, O_CLOEXEC), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			char c;
			int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			int e = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (o < 0 || e < 0 || read(go[0], &c, 1) != 1)
				_exit(126);
			dup2(o, 1);
			dup2(e, 2);
			execl(th_tacho_bin(), "tacho", "trace", "-o", trace, "--",
			      th_prog("trace-marks"), "flood", "100", (char *)NULL);
			_exit(127);
		}
		close(go[0]);
		for (int k = 0; k < 32 && nplanted < ARRAY_SIZE(planted); k++) {
			char *name = planted[nplanted];
			snprintf(name, sizeof(planted[0]), "/dev/shm/tacho-trace-%d", (int)pid + k);
			if (links) {
				if (symlink(victim, name) < 0)
					continue;   /* another user's name: not ours to judge */
				assert_int_equal(lchown(name, pw->pw_uid, pw->pw_gid), 0);
			} else {
				int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
				if (fd < 0)
					continue;
				assert_int_equal(write(fd, "planted\n", 8), 8);
				assert_int_equal(fchmod(fd, 0666), 0);
				assert_int_equal(fchown(fd, pw->pw_uid, pw->pw_gid), 0);
				close(fd);
			}
			nplanted++;
		}
		/* tacho's own PID is planted, or the test proves nothing */
		char first[64];
		snprintf(first, sizeof(first), "/dev/shm/tacho-trace-%d", (int)pid);
		assert_true(nplanted > 0);
		assert_string_equal(planted[0], first);
		assert_int_equal(write(go[1], "x", 1), 1);
		close(go[1]);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		/* root's file, every link and every file as they were (checked first: the
		 * trace of a tacho that used a planted name is no trace either) */
		char *text = slurp(victim);
		struct stat vs;
		assert_non_null(text);
		assert_string_equal(text, "root's own file\n");
		free(text);
		assert_int_equal(stat(victim, &vs), 0);
		assert_int_equal(vs.st_uid, 0);
		assert_int_equal(vs.st_mode & 07777, 0600);
		for (size_t i = 0; i < nplanted; i++)
			check_planted(planted[i], links, victim);
		unplant();
		char *err = slurp(errf);
		assert_non_null(err);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			fail_msg("tacho trace: status %d: %s", st, err);
		assert_contains(err, "tacho: 100 marks, 0 events");
		free(err);
	}
}

/* A setuid-root copy of a program linked with libtacho, run by nobody with TACHO_TRACE
 * naming a file of root's that holds a valid area: the library would have opened it
 * with root's rights and written the marks into it (issue 27). It never opens it
 * (inotify sees no open, access or change), the file is as it was, and the program
 * runs untraced. */
static void test_setuid_trace(void **state)
{
	char dir[600], bin[700], area[700], env[800], why[200], buf[64];
	struct passwd *pw = getpwnam("nobody");
	struct th_run r;
	struct stat st;
	int in;
	(void)state;

	snprintf(dir, sizeof(dir), "%s", th_tmp("suid-trace"));
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(th_tmpdir(), 0755), 0);
	snprintf(bin, sizeof(bin), "%s/trace-marks", dir);
	if (!pw)
		TEST_SKIP("no user nobody to run it as");
	if (!setuid_copy(th_prog("trace-marks"), bin, why, sizeof(why)))
		TEST_SKIP("%s", why);
	/* owned by root, not nobody: the program runs as root for nobody */
	assert_int_equal(chown(bin, 0, 0), 0);
	assert_int_equal(chmod(bin, 04755), 0);

	/* root's file: an area as lib/trace/area.h lays it out (1 ring of 8 entries, 4
	 * channels), which a library that opened it would take and write marks into */
	uint8_t hdr[64] = { 0 };
	const uint64_t magic = 0x3130454341525443ull, chan_off = 4096, rings_off = 8192,
		       ring_bytes = 4096, size = 12288;
	const uint32_t version = 1, nslots = 1, entries = 8, nchannels = 4;
	memcpy(hdr + 0, &magic, 8);
	memcpy(hdr + 8, &version, 4);
	memcpy(hdr + 12, &nslots, 4);
	memcpy(hdr + 16, &entries, 4);
	memcpy(hdr + 20, &nchannels, 4);
	memcpy(hdr + 24, &chan_off, 8);
	memcpy(hdr + 32, &rings_off, 8);
	memcpy(hdr + 40, &ring_bytes, 8);
	memcpy(hdr + 48, &size, 8);
	snprintf(area, sizeof(area), "%s/roots-file", dir);
	int fd = open(area, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	assert_int_equal(pwrite(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	close(fd);

	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	assert_true(in >= 0);
	assert_true(inotify_add_watch(in, area, IN_OPEN | IN_ACCESS | IN_MODIFY | IN_ATTRIB) >= 0);
	snprintf(env, sizeof(env), "TACHO_TRACE=%s", area);
	char uid[16], gid[16];
	snprintf(uid, sizeof(uid), "--reuid=%u", (unsigned)pw->pw_uid);
	snprintf(gid, sizeof(gid), "--regid=%u", (unsigned)pw->pw_gid);
	char *argv[] = { (char *)"setpriv", uid, gid, (char *)"--clear-groups", (char *)"env",
			 env, bin, (char *)"active", NULL };
	th_runv(&r, NULL, argv);
	if (strstr(r.err, "setpriv:"))
		TEST_SKIP("cannot run as nobody: %s", r.err);
	/* (LeakSanitizer cannot run in a setuid process: in the ASan tree the status is
	 * its, and what the program printed and did is the test) */
	assert_contains(r.out, "untraced");
	th_run_free(&r);
	assert_int_equal(read(in, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EAGAIN);
	close(in);
	assert_int_equal(stat(area, &st), 0);
	assert_int_equal(st.st_size, (off_t)size);
	char *text = NULL;
	fd = open(area, O_RDONLY);
	assert_true(fd >= 0);
	text = calloc(1, (size_t)size);
	assert_non_null(text);
	assert_int_equal(read(fd, text, (size_t)size), (ssize_t)size);
	close(fd);
	assert_memory_equal(text, hdr, sizeof(hdr));
	for (size_t i = sizeof(hdr); i < (size_t)size; i++)
		if (text[i])
			fail_msg("byte %zu of root's file was written", i);
	free(text);

	/* the same copy, run by root (not secure), is traced through a file of its own
	 * naming: the test can tell the two apart */
	char *as_root[] = { (char *)"env", env, bin, (char *)"active", NULL };
	th_runv(&r, NULL, as_root);
	assert_contains(r.out, "traced");
	assert_not_contains(r.out, "untraced");
	th_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_links_refused_modes_0600),
		cmocka_unit_test(test_report_over_its_input),
		cmocka_unit_test(test_failed_record_keeps_previous),
		cmocka_unit_test(test_concurrent_records),
		cmocka_unit_test(test_sigkill_moments),
		cmocka_unit_test(test_disk_full),
		cmocka_unit_test(test_read_only_dir),
		cmocka_unit_test(test_regions_report_full),
		cmocka_unit_test(test_stat_stderr_full),
		cmocka_unit_test(test_setuid_tacho),
		cmocka_unit_test(test_secure_env_ignored),
		cmocka_unit_test(test_planted_area_names),
		cmocka_unit_test(test_setuid_trace),
	};
	return cmocka_run_group_tests(tests, th_tmpdir_setup, teardown);
}
