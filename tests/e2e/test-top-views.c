/* test-top-views.c - tacho top's screen in tmux (send-keys, capture-pane), for what
 * test-cmd-top.c does not cover: the '/' filter cleared by Esc and by an empty '/',
 * the CPU view's busy time (CPU% filled in, the clock not 1000 msec/s on every CPU
 * by construction), the cgroup view saying why it is empty (a private mount namespace
 * where the hierarchy's root is an empty cgroup), the symbols view of one process
 * entered from its row with its hot function first and left with a key, and the
 * writes view choosing its rows by writes: a program writing a little, with next to
 * no CPU, on the first refresh after it starts. Every wait is a bounded poll on what
 * the pane shows. */
#include <math.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "spawn.h"
#include "live/live-int.h"

static char sock[256];

static bool have_tmux(void)
{
	struct th_run r;
	char *argv[] = { (char *)"tmux", (char *)"-V", NULL };
	bool ok;

	th_runv(&r, NULL, argv);
	ok = r.status == 0;
	th_run_free(&r);
	return ok;
}

static void keys(const char *session, const char *k)
{
	struct th_run r;
	char *argv[] = { (char *)"tmux", (char *)"-S", sock, (char *)"send-keys", (char *)"-t",
			 (char *)session, (char *)k, NULL };

	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
}

static char *capture(const char *session)
{
	struct th_run r;
	char *argv[] = { (char *)"tmux", (char *)"-S", sock, (char *)"capture-pane", (char *)"-p",
			 (char *)"-t", (char *)session, NULL };
	char *s;

	th_runv(&r, NULL, argv);
	s = strdup(r.out ? r.out : "");
	th_run_free(&r);
	return s;
}

/* Polls the pane until it shows needle (want) or stops showing it (!want), at most
 * timeout_s; *last gets the last capture (free it). */
static bool pane_until(const char *session, const char *needle, bool want, double timeout_s,
		       char **last)
{
	double end = th_now() + timeout_s;

	for (;;) {
		char *s = capture(session);
		bool ok = (strstr(s, needle) != NULL) == want;
		if (ok || th_now() > end) {
			*last = s;
			return ok;
		}
		free(s);
		usleep(100000);
	}
}

/* The line of the pane holding name, copied ("" without one). */
static char *line_of(const char *screen, const char *name)
{
	const char *p = strstr(screen, name), *b, *e;

	if (!p)
		return strdup("");
	for (b = p; b > screen && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	return strndup(b, e ? (size_t)(e - b) : strlen(b));
}

/* cmd in a new detached tmux session of 200 x 50. */
static void start(const char *session, const char *cmd)
{
	struct th_run r;
	char *argv[] = { (char *)"tmux", (char *)"-S", sock, (char *)"new-session", (char *)"-d",
			 (char *)"-s", (char *)session, (char *)"-x", (char *)"200", (char *)"-y",
			 (char *)"50", (char *)cmd, NULL };

	th_runv(&r, NULL, argv);
	assert_int_equal(r.status, 0);
	th_run_free(&r);
}

static void kill_server(void)
{
	struct th_run r;
	char *argv[] = { (char *)"tmux", (char *)"-S", sock, (char *)"kill-server", NULL };

	if (access(sock, F_OK))
		return;
	th_runv(&r, NULL, argv);
	th_run_free(&r);
}

static void setup_sock(const char *name)
{
	snprintf(sock, sizeof(sock), "%s", th_tmp(name));
}

/* '/' filters; Esc clears; so does '/' then Enter; the bottom line says how. */
static void test_top_filter_clears(void **state)
{
	char *argv[] = { (char *)th_prog("live-helper"), (char *)"spin", (char *)"60000", NULL };
	char cmd[4096], *screen;
	struct th_proc spin;
	(void)state;

	if (!have_tmux())
		TEST_SKIP("tmux is not installed");
	setup_sock("tmux-filter");
	th_spawn(&spin, "spin", argv);
	snprintf(cmd, sizeof(cmd), "env LANG=C.UTF-8 TERM=xterm-256color %s top -d 0.3 -p %d",
		 th_tacho_bin(), (int)spin.pid);
	start("f", cmd);
	if (!pane_until("f", "live-helper", true, 15, &screen))
		fail_msg("the helper is not on the screen:\n%s", screen);
	assert_contains(screen, "/ filter (Esc clears)");
	free(screen);

	keys("f", "/");
	keys("f", "zzq");
	keys("f", "Enter");
	if (!pane_until("f", "live-helper", false, 10, &screen))
		fail_msg("the filter 'zzq' left the helper on the screen:\n%s", screen);
	assert_contains(screen, "filter: zzq (Esc clears)");
	free(screen);
	keys("f", "Escape");
	if (!pane_until("f", "live-helper", true, 10, &screen))
		fail_msg("Esc did not clear the filter:\n%s", screen);
	assert_not_contains(screen, "filter: zzq");
	free(screen);

	keys("f", "/");
	keys("f", "zzq");
	keys("f", "Enter");
	if (!pane_until("f", "live-helper", false, 10, &screen))
		fail_msg("the filter 'zzq' left the helper on the screen:\n%s", screen);
	free(screen);
	keys("f", "/");
	if (!pane_until("f", "Esc or an empty one clears it", true, 10, &screen))
		fail_msg("typing a filter does not say how to clear it:\n%s", screen);
	free(screen);
	keys("f", "Enter");
	if (!pane_until("f", "live-helper", true, 10, &screen))
		fail_msg("an empty '/' did not clear the filter:\n%s", screen);
	assert_not_contains(screen, "filter:");
	free(screen);
	keys("f", "q");
	kill_server();
	th_proc_end(&spin);
}

/* The CPU view: each CPU's busy time, the CPU% column filled in and equal to the clock's
 * msec/s over 10 (both from /proc/stat); test-live's test_cpu_busy_exact checks the
 * figures exactly on a /proc/stat made by hand. */
static void test_top_cpu_busy(void **state)
{
	char cmd[4096], *screen = NULL;
	bool ok = false;
	double end;
	(void)state;

	if (!have_tmux())
		TEST_SKIP("tmux is not installed");
	setup_sock("tmux-cpu");
	snprintf(cmd, sizeof(cmd), "env LANG=C.UTF-8 TERM=xterm-256color %s top -d 0.3 "
		 "--view cpu -e task-clock", th_tacho_bin());
	start("c", cmd);
	end = th_now() + 15;
	while (!ok && th_now() < end) {
		char *row;
		double pct, ms;

		free(screen);
		screen = capture("c");
		row = line_of(screen, "cpu0 ");
		/* "      0 cpu0              12.0     120  ▁▂" */
		if (sscanf(row, " 0 cpu0 %lf %lf", &pct, &ms) == 2)
			ok = fabs(pct * 10 - ms) <= 0.5 + 0.001 * ms && pct <= 101;
		free(row);
		if (!ok)
			usleep(200000);
	}
	if (!ok)
		fail_msg("no CPU%% on cpu0's row equal to its busy msec/s over 10:\n%s", screen);
	assert_contains(screen, "cpu view");
	free(screen);
	kill_server();
}

/* The cgroup view without a cgroup: in a private mount namespace the hierarchy's root
 * is an empty cgroup of ours, bound over it; the screen says why there is no row. */
static void test_top_cgroup_empty(void **state)
{
	struct tc_cgroup_mounts m;
	char dir[PATH_MAX + 64], cmd[8192], *screen;
	const char *root;
	(void)state;

	if (!have_tmux())
		TEST_SKIP("tmux is not installed");
	if (geteuid())
		TEST_SKIP("mounting in a private namespace needs root");
	if (tc_cgroup_mounts_read(NULL, &m) || !(root = tc_cgroup_perf_root(&m)))
		TEST_SKIP("no perf_event cgroup hierarchy is mounted");
	if (access("/usr/bin/unshare", X_OK))
		TEST_SKIP("unshare (util-linux) is not installed");
	snprintf(dir, sizeof(dir), "%s/tacho-test-topview-%d", root, (int)getpid());
	if (mkdir(dir, 0755))
		TEST_SKIP("cannot make a cgroup under %s", root);
	setup_sock("tmux-cg");
	snprintf(cmd, sizeof(cmd), "unshare -m sh -c 'mount --bind %s %s && exec env "
		 "LANG=C.UTF-8 TERM=xterm-256color %s top -d 0.3 --view cgroup'", dir, root,
		 th_tacho_bin());
	start("g", cmd);
	if (!pane_until("g", "nothing to show", true, 15, &screen)) {
		kill_server();
		rmdir(dir);
		fail_msg("the empty cgroup view does not say why:\n%s", screen);
	}
	assert_contains(screen, "cgroup view");
	assert_contains(screen, "no cgroup below");
	assert_contains(screen, "0 rows");
	free(screen);
	kill_server();
	rmdir(dir);
}

/* The line after the pane's line holding heading, copied ("" without one). */
static char *line_after(const char *screen, const char *heading)
{
	const char *p = strstr(screen, heading), *e;

	if (!p || !(p = strchr(p, '\n')))
		return strdup("");
	p++;
	e = strchr(p, '\n');
	return strndup(p, e ? (size_t)(e - p) : strlen(p));
}

/* The symbols view of one process, entered from its row: a program that spends its
 * time in new_hot shows it first, in its own binary; s goes back to the rows. */
static void test_top_symbols_of_row(void **state)
{
	char *argv[] = { (char *)th_prog("diff-hot"), (char *)"new", (char *)"600000", NULL };
	char cmd[4096], *screen = NULL, *first = NULL;
	struct th_proc hot;
	bool ok = false;
	double end;
	(void)state;

	if (!have_tmux())
		TEST_SKIP("tmux is not installed");
	setup_sock("tmux-sym");
	th_spawn(&hot, "hot", argv);
	snprintf(cmd, sizeof(cmd), "env LANG=C.UTF-8 TERM=xterm-256color %s top -d 0.3 -p %d",
		 th_tacho_bin(), (int)hot.pid);
	start("s", cmd);
	if (!pane_until("s", "diff-hot", true, 15, &screen))
		fail_msg("the program is not on the screen:\n%s", screen);
	free(screen);
	keys("s", "Down");
	keys("s", "s");
	if (!pane_until("s", "symbols view", true, 10, &screen))
		fail_msg("no symbols view after 's' on the row:\n%s", screen);
	free(screen);
	screen = NULL;
	/* a table with samples in it: the first symbol under the heading */
	end = th_now() + 15;
	while (!ok && th_now() < end) {
		free(screen);
		free(first);
		screen = capture("s");
		first = line_after(screen, "SYMBOL");
		ok = strstr(first, "new_hot") != NULL;
		if (!ok)
			usleep(200000);
	}
	if (!ok)
		fail_msg("new_hot is not the first symbol:\n%s", screen);
	{
		char expect[64];
		snprintf(expect, sizeof(expect), "process %d", (int)hot.pid);
		assert_contains(screen, expect);
	}
	assert_contains(first, "diff-hot");
	assert_contains(first, "%");
	free(first);
	free(screen);
	keys("s", "s");
	if (!pane_until("s", "process view", true, 10, &screen))
		fail_msg("'s' did not go back to the process view:\n%s", screen);
	free(screen);
	keys("s", "q");
	kill_server();
	th_proc_end(&hot);
}

/* The write(2) calls pid has made (/proc/PID/io's syscw), -1 when unreadable. */
static long long syscw(pid_t pid)
{
	char path[64], line[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "syscw: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The rows of a writes view are the busiest writers: a program writing 200 times a
 * second, with next to no CPU, is a row of the first frame whose interval began after
 * its first write (-k 3: three rows, which CPU time would give to the busiest), unless
 * three busier writers hold them. */
#define WRITER_RATE 200
#define TH_STR_(x) #x
#define TH_STR(x) TH_STR_(x)
static void test_top_writes_first_refresh(void **state)
{
	char *top_argv[] = { (char *)th_tacho_bin(), (char *)"top", (char *)"-b", (char *)"-n",
			     (char *)"200", (char *)"-d", (char *)"0.3", (char *)"-k", (char *)"3",
			     (char *)"--json", (char *)"-e",
			     (char *)"syscalls:sys_enter_write,task-clock", NULL };
	char *w_argv[] = { (char *)th_prog("live-helper"), (char *)"paced",
			   (char *)TH_STR(WRITER_RATE), (char *)"600000", NULL };
	struct th_proc top, wr;
	double t_write = NAN, prev_wall = NAN, end;
	size_t used = 0;
	bool found = false, judged = false;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	th_spawn(&top, "top", top_argv);
	end = th_now() + 30;
	while (!judged && th_now() < end) {
		char *text = NULL, *line, *nl;
		size_t len;

		if (tc_read_file(top.out, &text, &len, 0)) {
			usleep(50000);
			continue;
		}
		/* the frames written since the last look, a whole line each */
		for (line = text + used; (nl = strchr(line, '\n')); line = nl + 1) {
			struct th_json *j;
			const struct th_json *rows;
			double wall;

			*nl = '\0';
			used = (size_t)(nl + 1 - text);
			j = assert_json(line);
			wall = json_num(j, "wall");
			if (isnan(t_write)) {
				/* the first frame: now the writer starts, and the test knows
				 * when its first write is done */
				th_spawn(&wr, "writer", w_argv);
				while (syscw(wr.pid) < 1 && th_now() < end)
					usleep(1000);
				assert_true(syscw(wr.pid) >= 1);
				t_write = wall_now();
			} else if (prev_wall > t_write) {
				/* this frame's interval began after the first write */
				bool busier = true;

				rows = th_json_get(j, "rows");
				assert_non_null(rows);
				for (size_t i = 0; i < rows->n; i++) {
					const struct th_json *v = th_json_get(
						rows->items[i], "values.syscalls:sys_enter_write.rate");
					found |= json_num(rows->items[i], "id") == (double)wr.pid;
					busier &= v && v->type == TH_JSON_NUMBER &&
						  v->number > WRITER_RATE;
				}
				/* while the suite runs beside it, three other processes may write
				 * faster than the writer: the rows are then rightly theirs, which
				 * each row's own rate says; a slower row in its place is the
				 * failure */
				if (!found && !(busier && rows->n == 3))
					fail_msg("the writer %d is not a row of the first frame after "
						 "its first write:\n%s", (int)wr.pid, line);
				if (!found)
					print_message("the writer's %d writes/s were outdone by three "
						      "busier writers: %s\n", WRITER_RATE, line);
				judged = true;
			}
			prev_wall = wall;
			th_json_free(j);
			if (judged)
				break;
		}
		free(text);
		if (!judged)
			usleep(50000);
	}
	assert_true(judged);
	assert_true(found);
	kill(top.pid, SIGTERM);
	th_proc_wait(&top, 10);
	th_proc_end(&wr);
}

/* The same on the screen: the writes view (its first column) shows the writer's row. */
static void test_top_writes_view(void **state)
{
	char *w_argv[] = { (char *)th_prog("live-helper"), (char *)"paced", (char *)"200",
			   (char *)"600000", NULL };
	char cmd[4096], pid[32], *screen;
	struct th_proc wr;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	if (!have_tmux())
		TEST_SKIP("tmux is not installed");
	setup_sock("tmux-writes");
	snprintf(cmd, sizeof(cmd), "env LANG=C.UTF-8 TERM=xterm-256color %s top -d 0.3 -k 5 -e "
		 "syscalls:sys_enter_write,task-clock", th_tacho_bin());
	start("w", cmd);
	if (!pane_until("w", "process view", true, 15, &screen))
		fail_msg("no process view:\n%s", screen);
	free(screen);
	th_spawn(&wr, "writer", w_argv);
	snprintf(pid, sizeof(pid), " %d live-helper", (int)wr.pid);
	if (!pane_until("w", pid, true, 15, &screen))
		fail_msg("the writer %d is not in the writes view:\n%s", (int)wr.pid, screen);
	free(screen);
	keys("w", "q");
	kill_server();
	th_proc_end(&wr);
}

static int views_teardown(void **state)
{
	static const char *const socks[] = { "tmux-filter", "tmux-cpu", "tmux-cg", "tmux-sym",
					     "tmux-writes" };

	for (size_t i = 0; i < ARRAY_SIZE(socks); i++) {
		setup_sock(socks[i]);
		kill_server();
	}
	return th_procs_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_top_filter_clears, views_teardown),
		cmocka_unit_test_teardown(test_top_cpu_busy, views_teardown),
		cmocka_unit_test_teardown(test_top_cgroup_empty, views_teardown),
		cmocka_unit_test_teardown(test_top_symbols_of_row, views_teardown),
		cmocka_unit_test_teardown(test_top_writes_first_refresh, views_teardown),
		cmocka_unit_test_teardown(test_top_writes_view, views_teardown),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
