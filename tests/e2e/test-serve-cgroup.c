/* test-serve-cgroup.c - /debug/pprof/profile?cgroup=PATH: two pie-spins spin, one moved
 * into a cgroup v2 directory of its own, the other left where the test runs; the
 * profile of that cgroup holds samples of the first alone (go tool pprof -raw: every
 * sample's cgroup label is the cgroup's, its pid the first's, and there are some),
 * recorded for the request (tacho serve) and taken from the window (tacho serve
 * --profile). A cgroup that does not exist, one with "..", an empty one: 400 with one
 * line saying why. Needs root (to make a cgroup) and go. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "spawn.h"

/* tacho serve (with --profile when always) on a free port. */
static int start_serve(struct th_proc *p, bool always)
{
	int port = th_free_port();
	char listen[32];
	char *argv[] = { (char *)th_tacho_bin(), (char *)"serve", (char *)"--listen", listen,
			 always ? (char *)"--profile" : NULL, NULL };

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	th_spawn_ready(p, always ? "serve-always" : "serve", argv, port, "/api/frame",
		       "tacho serve");
	return port;
}

/* The profile at url, fetched by go tool pprof itself, as -raw prints it: every sample
 * says cgroup want and pid inpid, and there is one at least. */
static void check_only(const char *url, const char *want, pid_t inpid, pid_t outpid)
{
	char *argv[] = { (char *)"go", (char *)"tool", (char *)"pprof", (char *)"-raw",
			 (char *)"-symbolize=none", (char *)"-timeout=120", (char *)url, NULL };
	char lab[300], in[64], out[64];
	struct th_run r;
	unsigned cg, mine, theirs, total;

	th_runv(&r, NULL, argv);
	if (r.status)
		fail_msg("go tool pprof -raw %s failed (%d): %s%s", url, r.status, r.out, r.err);
	snprintf(lab, sizeof(lab), "cgroup:[%s]", want);
	snprintf(in, sizeof(in), "pid:[%d]", (int)inpid);
	snprintf(out, sizeof(out), "pid:[%d]", (int)outpid);
	total = th_count(r.out, "cgroup:[");
	cg = th_count(r.out, lab);
	mine = th_count(r.out, in);
	theirs = th_count(r.out, out);
	if (!cg || cg != total || mine != total || theirs)
		fail_msg("%s: %u samples, %u say %s, %u say %s, %u say %s:\n%s", url, total, cg,
			 lab, mine, in, theirs, out, r.out);
	th_run_free(&r);
}

static void bad_queries(int port, const char *cg)
{
	static const struct {
		const char *query, *says;
	} bad[] = {
		{ "cgroup=/tacho-no-such-cgroup-at-all", "no cgroup '/tacho-no-such-cgroup-at-all'" },
		{ "cgroup=/..", "without '.' or '..' parts" },
		{ "cgroup=/%s/../..", "without '.' or '..' parts" },
		{ "cgroup=", "bad cgroup ''" },
	};
	char path[512], q[300];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *body = NULL;
		int code;
		snprintf(q, sizeof(q), bad[i].query, cg + 1);
		snprintf(path, sizeof(path), "/debug/pprof/profile?seconds=1&%s", q);
		code = th_http_get(port, path, NULL, &body);
		if (code != 400 || !body || !strstr(body, bad[i].says) ||
		    strchr(body, '\n') != body + strlen(body) - 1)
			fail_msg("%s: %d '%s', not 400 with one line saying \"%s\"", path, code,
				 body ? body : "", bad[i].says);
		free(body);
	}
}

static void test_cgroup_profile(void **state)
{
	struct th_proc a, b, serve;
	char root[512], dir[640], procs[700], cg[128], url[512], pid[32];
	char *spin[] = { (char *)th_prog("pie-spin"), (char *)"600000", NULL };
	FILE *f;
	int port;
	(void)state;

	if (geteuid() != 0)
		TEST_SKIP("needs root to make a cgroup");
	if (!th_go_env())
		TEST_SKIP("go is not installed (scripts/deps.sh test: golang-go)");
	if (!th_cgroup2_root(root, sizeof(root)))
		TEST_SKIP("no cgroup v2 hierarchy is mounted");
	snprintf(cg, sizeof(cg), "/tacho-serve-cg-%d", (int)getpid());
	snprintf(dir, sizeof(dir), "%s%s", root, cg);
	if (mkdir(dir, 0755) != 0)
		TEST_SKIP("cannot make a cgroup in %s: %s", root, strerror(errno));
	th_spawn(&a, "spin-in", spin);
	th_spawn(&b, "spin-out", spin);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d\n", (int)a.pid);
	f = fopen(procs, "w");
	if (!f || fputs(pid, f) < 0 || fclose(f)) {
		th_proc_end(&a);
		th_proc_end(&b);
		rmdir(dir);
		TEST_SKIP("cannot move a process into %s", dir);
	}

	/* recorded for the request: the machine, the cgroup's processes kept */
	port = start_serve(&serve, false);
	bad_queries(port, cg);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile?seconds=2&cgroup=%s",
		 port, cg);
	check_only(url, cg, a.pid, b.pid);
	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 30));
	if (serve.status)
		fail_msg("tacho serve exited %d: %s", serve.status, th_slurp(serve.err));

	/* from the window: both spun while it sampled, the cgroup's kept (the subtree: its
	 * path with a trailing '/' names the same) */
	port = start_serve(&serve, true);
	bad_queries(port, cg);
	sleep(3);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/debug/pprof/profile?seconds=10&cgroup=%s/",
		 port, cg);
	check_only(url, cg, a.pid, b.pid);
	th_proc_kill(&serve, SIGINT);
	assert_true(th_proc_wait(&serve, 30));
	if (serve.status)
		fail_msg("tacho serve exited %d: %s", serve.status, th_slurp(serve.err));

	th_proc_end(&a);
	th_proc_end(&b);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_cgroup_profile, th_procs_teardown),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
