/* test-cmd-top.c - `tacho top` end to end: -b --json over a program doing exactly 2500
 * writes (each frame's rate its total's growth over its interval, the total exact when
 * it ends), CSV and the
 * table, then the screen in tmux (send-keys, capture-pane): the busy helper by name
 * with a sparkline, the thread view on its key, the ASCII fallback without UTF-8, q,
 * the terminal given back after Ctrl-C; and bad input. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "json-check.h"
#include "spawn.h"

/* Three refreshes of a program writing 1000 times a second for 2.5 s: each frame's rate
 * is its total's growth over the frame's interval, totals never go back, and the last
 * (at its end) says 2500 in all, exactly. How many writes fall in one interval depends
 * on how the machine schedules the program: no figure of time is asserted. */
static void test_batch_json_exact(void **state)
{
	struct th_run r;
	char *line, *save = NULL;
	int frames = 0;
	bool ended = false;
	double prev_total = NAN;
	(void)state;
	NEED_SOURCE(TACHO_SOURCE_TRACEPOINT);

	if (!th_have_write_tracepoint())
		TEST_SKIP("tracefs with syscalls:sys_enter_write is not there");
	/* -n 20: more frames than the program needs; top ends with the program */
	th_tacho(&r, "top", "-b", "-n", "20", "-d", "1", "--json", "-e",
		 "syscalls:sys_enter_write,task-clock", "--", th_prog("live-helper"), "paced",
		 "1000", "2500", NULL);
	assert_int_equal(r.status, 0);
	for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct th_json *j = assert_json(line);
		const char *w = "rows[0].values.syscalls:sys_enter_write";
		char p[128];

		frames++;
		assert_json_int(j, "version", 1);
		assert_json_str(j, "view", "process");
		assert_int_equal(th_json_get(j, "rows")->n, 1);
		assert_json_str(j, "rows[0].name", "live-helper");
		snprintf(p, sizeof(p), "%s.status", w);
		assert_json_str(j, p, "counted");
		snprintf(p, sizeof(p), "%s.total", w);
		{
			double total = json_num(j, p), rate, interval = json_num(j, "interval");

			if (total != floor(total) || total < 0 || total > 2500 ||
			    (!isnan(prev_total) && total < prev_total))
				fail_msg("frame %d: total %g after %g", frames, total, prev_total);
			snprintf(p, sizeof(p), "%s.rate", w);
			if (!isnan(prev_total) && interval > 0) {
				rate = json_num(j, p);
				if (fabs(rate * interval - (total - prev_total)) >
				    1e-6 * (total - prev_total) + 1e-3)
					fail_msg("frame %d: rate %g over %g s is not the total's "
						 "growth %g", frames, rate, interval, total - prev_total);
			}
			if (ended)
				fail_msg("frame %d comes after the row's last", frames);
			ended = th_json_get(j, "rows[0].ended")->boolean;
			if (ended && total != 2500)
				fail_msg("the total at the end is %g, not 2500", total);
			prev_total = total;
		}
		th_json_free(j);
	}
	/* 2.5 s of writes: at least two full intervals, then the row's last frame */
	assert_true(frames >= 3);
	if (!ended)
		fail_msg("no frame says the program ended (%d frames)", frames);
	th_run_free(&r);
}

static void test_batch_csv_table(void **state)
{
	struct th_proc spin;
	char pid[32];
	struct th_run r;
	char *argv[] = { (char *)th_prog("live-helper"), (char *)"spin", (char *)"20000", NULL };
	(void)state;

	th_spawn(&spin, "spin", argv);
	snprintf(pid, sizeof(pid), "%d", (int)spin.pid);
	usleep(100000);
	th_tacho(&r, "top", "-b", "-n", "2", "-d", "0.2", "--csv", "-p", pid, NULL);
	assert_int_equal(r.status, 0);
	{
		static const char head[] = "time,view,id,pid,name,cpus,event,status,rate,total,"
					   "unit,coverage,explanation\n";
		if (strncmp(r.out, head, strlen(head)))
			fail_msg("not the CSV header:\n%s", r.out);
	}
	/* one header, then 2 frames x 1 row x 4 events */
	assert_int_equal(th_count_lines(r.out), 9);
	assert_contains(r.out, ",process,");
	assert_contains(r.out, ",live-helper,");
	assert_contains(r.out, ",task-clock,counted,");
	th_run_free(&r);
	th_tacho(&r, "top", "-b", "-n", "1", "-d", "0.2", "-p", pid, NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "process view, 1 row");
	assert_contains(r.out, "live-helper");
	assert_contains(r.out, "msec/s");
	th_run_free(&r);
	th_proc_end(&spin);
}

/* --- the screen, in tmux --- */

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

static char sock[64];

static void tmux(struct th_run *r, const char *a, const char *b, const char *c, const char *d,
		 const char *e)
{
	char *argv[] = { (char *)"tmux", (char *)"-S", sock, (char *)a, (char *)b, (char *)c,
			 (char *)d, (char *)e, NULL };

	th_runv(r, NULL, argv);
}

static char *capture(const char *session)
{
	struct th_run r;
	char *s;

	tmux(&r, "capture-pane", "-p", "-t", session, NULL);
	s = strdup(r.out);
	th_run_free(&r);
	return s;
}

/* Waits until the pane shows needle (true) or timeout_s passes. */
static bool pane_shows(const char *session, const char *needle, double timeout_s, char **last)
{
	double end = th_now() + timeout_s;

	for (;;) {
		char *s = capture(session);
		bool ok = strstr(s, needle) != NULL;
		if (ok || th_now() > end) {
			if (last)
				*last = s;
			else
				free(s);
			return ok;
		}
		free(s);
		usleep(100000);
	}
}

/* The line of the pane holding name, copied. */
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

/* tacho top in a tmux session; with pid > 0, on that process alone (-p), so that a
 * busier machine (the suite's other jobs) cannot push it off the screen. */
static void start_top(const char *session, const char *env, pid_t pid)
{
	char cmd[8192], target[32] = "";
	struct th_run r;

	if (pid > 0)
		snprintf(target, sizeof(target), " -p %d", (int)pid);
	snprintf(cmd, sizeof(cmd), "env %s TERM=xterm-256color %s top -d 0.3%s", env,
		 th_tacho_bin(), target);
	{
		char *argv[] = { (char *)"tmux", (char *)"-S", sock, (char *)"new-session",
				 (char *)"-d", (char *)"-s", (char *)session, (char *)"-x",
				 (char *)"200", (char *)"-y", (char *)"50", cmd, NULL };
		th_runv(&r, NULL, argv);
	}
	assert_int_equal(r.status, 0);
	th_run_free(&r);
}

static bool session_alive(const char *session)
{
	struct th_run r;
	bool alive;

	tmux(&r, "has-session", "-t", session, NULL, NULL);
	alive = r.status == 0;
	th_run_free(&r);
	return alive;
}

static void test_screen(void **state)
{
	char *argv[] = { (char *)th_prog("live-helper"), (char *)"spin", (char *)"60000", NULL };
	struct th_proc spin;
	struct th_run r;
	char *screen = NULL, *row;
	bool spark = false;
	double end;
	(void)state;

	if (!have_tmux())
		TEST_SKIP("tmux is not installed");
	snprintf(sock, sizeof(sock), "%s", th_tmp("tmux"));
	th_spawn(&spin, "spin", argv);
	start_top("top", "LANG=C.UTF-8 LC_ALL=C.UTF-8", spin.pid);
	if (!pane_shows("top", "live-helper", 15, &screen))
		fail_msg("the busy helper is not on the screen:\n%s", screen);
	/* its sparkline fills in as intervals pass: a block other than the lowest */
	end = th_now() + 10;
	while (!spark && th_now() < end) {
		free(screen);
		screen = capture("top");
		row = line_of(screen, "live-helper");
		for (const char *b = "\u2583\u2584\u2585\u2586\u2587\u2588"; *b && !spark; b += 3)
			spark = strstr(row, (char[4]){ b[0], b[1], b[2], 0 }) != NULL;
		free(row);
		if (!spark)
			usleep(200000);
	}
	if (!spark)
		fail_msg("no sparkline on the helper's row:\n%s", screen);
	assert_contains(screen, "process view");
	free(screen);
	tmux(&r, "send-keys", "-t", "top", "t", NULL);
	th_run_free(&r);
	if (!pane_shows("top", "thread view", 10, &screen))
		fail_msg("no thread view after 't':\n%s", screen);
	assert_contains(screen, "TID");
	free(screen);
	tmux(&r, "send-keys", "-t", "top", "q", NULL);
	th_run_free(&r);
	end = th_now() + 10;
	while (session_alive("top") && th_now() < end)
		usleep(100000);
	assert_false(session_alive("top"));

	/* no UTF-8: ASCII levels */
	start_top("ascii", "LANG=C LC_ALL=C", spin.pid);
	screen = NULL;
	if (!pane_shows("ascii", "live-helper", 15, &screen))
		fail_msg("the busy helper is not on the ASCII screen:\n%s", screen);
	spark = false;
	end = th_now() + 10;
	while (!spark && th_now() < end) {
		free(screen);
		screen = capture("ascii");
		row = line_of(screen, "live-helper");
		spark = strpbrk(row, "=+*#") != NULL && !strstr(row, "\xe2\x96");
		free(row);
		if (!spark)
			usleep(200000);
	}
	if (!spark)
		fail_msg("no ASCII sparkline on the helper's row:\n%s", screen);
	free(screen);
	tmux(&r, "kill-server", NULL, NULL, NULL, NULL);
	th_run_free(&r);
	th_proc_end(&spin);
}

/* Ctrl-C ends top and gives the terminal back as it was (canonical mode, echo). */
static void test_ctrl_c_restores(void **state)
{
	char cmd[8192], *stty;
	struct th_run r;
	(void)state;

	if (!have_tmux())
		TEST_SKIP("tmux is not installed");
	snprintf(sock, sizeof(sock), "%s", th_tmp("tmux2"));
	snprintf(cmd, sizeof(cmd), "trap '' INT; env TERM=xterm %s top -d 0.3; echo status $? "
		 ">%s; stty -a >>%s; sleep 30", th_tacho_bin(), th_tmp("after"), th_tmp("after"));
	{
		char *argv[] = { (char *)"tmux", (char *)"-S", sock, (char *)"new-session",
				 (char *)"-d", (char *)"-s", (char *)"cc", (char *)"-x", (char *)"120",
				 (char *)"-y", (char *)"40", (char *)"sh", (char *)"-c", cmd, NULL };
		th_runv(&r, NULL, argv);
	}
	assert_int_equal(r.status, 0);
	th_run_free(&r);
	assert_true(pane_shows("cc", "process view", 15, NULL));
	tmux(&r, "send-keys", "-t", "cc", "C-c", NULL);
	th_run_free(&r);
	assert_true(th_wait_for(th_tmp("after"), "speed", 1, 10));
	stty = th_slurp(th_tmp("after"));
	assert_contains(stty, "status 0");
	assert_contains(stty, " icanon");
	assert_not_contains(stty, "-icanon");
	assert_contains(stty, " echo ");
	free(stty);
	tmux(&r, "kill-server", NULL, NULL, NULL, NULL);
	th_run_free(&r);
}

static void test_bad_input(void **state)
{
	struct th_run r;
	(void)state;

	th_tacho(&r, "top", "-b", "-e", "page-faults,bogus-event", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "tacho: bad event list");
	assert_contains(r.err, "^");
	th_run_free(&r);
	th_tacho(&r, "top", "-b", "-d", "0", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad value for -d: '0'");
	th_run_free(&r);
	th_tacho(&r, "top", "-b", "-d", "1x", NULL);
	assert_int_equal(r.status, 2);
	th_run_free(&r);
	th_tacho(&r, "top", "-b", "-p", "2147483600", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "no process 2147483600");
	assert_int_equal(th_count_lines(r.err), 1);
	th_run_free(&r);
	th_tacho(&r, "top", "-b", "-G", "tacho-no-such-cgroup", NULL);
	assert_int_equal(r.status, 1);
	assert_contains(r.err, "no cgroup 'tacho-no-such-cgroup'");
	th_run_free(&r);
	th_tacho(&r, "top", "-n", "3", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "go with -b");
	th_run_free(&r);
	th_tacho(&r, "top", NULL);   /* no terminal here */
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "needs a terminal");
	th_run_free(&r);
	th_tacho(&r, "top", "-b", "--view", "galaxy", NULL);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad view 'galaxy'");
	th_run_free(&r);
	th_tacho(&r, "top", "-b", "-n", "1", "--", "/no/such/program", NULL);
	assert_int_equal(r.status, 127);
	th_run_free(&r);
	th_tacho(&r, "top", "--help", NULL);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "usage: tacho top");
	assert_contains(r.out, "--view <view>");
	th_run_free(&r);
}

/* What a failed screen test leaves: its tmux servers (daemons, not our children),
 * then what th_spawn started. */
static int screen_teardown(void **state)
{
	const char *socks[] = { "tmux", "tmux2" };

	for (size_t i = 0; i < ARRAY_SIZE(socks); i++) {
		char path[4096];
		struct th_run r;
		char *argv[] = { (char *)"tmux", (char *)"-S", path, (char *)"kill-server", NULL };

		snprintf(path, sizeof(path), "%s", th_tmp(socks[i]));
		if (access(path, F_OK))
			continue;
		th_runv(&r, NULL, argv);
		th_run_free(&r);
	}
	return th_procs_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_batch_json_exact, th_procs_teardown),
		cmocka_unit_test_teardown(test_batch_csv_table, th_procs_teardown),
		cmocka_unit_test_teardown(test_screen, screen_teardown),
		cmocka_unit_test_teardown(test_ctrl_c_restores, screen_teardown),
		cmocka_unit_test_teardown(test_bad_input, th_procs_teardown),
	};

	return cmocka_run_group_tests(tests, th_tmpdir_setup, th_tmpdir_teardown);
}
