/* watch-run.c - tacho watch running: the loop that feeds the sampler's frames to the
 * library's watch session, the log of every change it reports, and the commands of
 * --exec and --exec-lift (a library runs none), with their TACHO_* environment. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "watch.h"

static void logf_(struct watch_cli *w, const char *fmt, ...) TC_PRINTF(2, 3);
static void logf_(struct watch_cli *w, const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	char when[64];
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(w->out, "%s.%03ldZ ", when, ts.tv_nsec / 1000000);
	va_start(ap, fmt);
	vfprintf(w->out, fmt, ap);
	va_end(ap);
	fputc('\n', w->out);
	fflush(w->out);
}

static void reap_execs(struct watch_cli *w, bool block)
{
	for (size_t i = 0; i < w->nexecs;) {
		int st;
		pid_t p = waitpid(w->execs[i], &st, block ? 0 : WNOHANG);
		if (p == 0) {
			i++;
			continue;
		}
		w->execs[i] = w->execs[--w->nexecs];
	}
}

static void run_exec(struct watch_cli *w, const struct wrule *r, const char *cmd,
		     const struct tacho_watch_change *c)
{
	char rate[64], th[64], tm[64], pid[32];
	pid_t p;

	reap_execs(w, false);
	if (w->nexecs == MAX_EXECS) {
		cli_warn("not running '%s': %d commands still run", cmd, MAX_EXECS);
		return;
	}
	snprintf(rate, sizeof(rate), "%.17g", c->value);
	snprintf(th, sizeof(th), "%.17g", r->o.threshold);
	snprintf(tm, sizeof(tm), "%.3f", c->time);
	snprintf(pid, sizeof(pid), "%d", (int)w->lc.pid);
	fflush(NULL);
	p = fork();
	if (p < 0) {
		cli_warn("cannot run '%s': %s", cmd, strerror(errno));
		return;
	}
	if (p == 0) {
		setenv("TACHO_STATE", c->change == TACHO_RULE_FIRED ? "fired" : "lifted", 1);
		setenv("TACHO_RULE", r->desc, 1);
		setenv("TACHO_INPUT", r->o.input, 1);
		setenv("TACHO_RATE", rate, 1);
		setenv("TACHO_THRESHOLD", th, 1);
		setenv("TACHO_TARGET", w->target, 1);
		setenv("TACHO_TIME", tm, 1);
		if (w->lc.pid)
			setenv("TACHO_PID", pid, 1);
		/* the command's signals are its own, not tacho's handlers' */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	w->execs[w->nexecs++] = p;
}

/* What a crossing did to a throttle, in words. */
static void say_throttle(struct tc_sb *sb, const struct watch_cli *w,
			 enum tacho_throttle_kind kind, const struct tacho_watch_throttled *t)
{
	bool cap = kind == TACHO_THROTTLE_CAP;
	const char *where = tacho_throttle_where(tacho_watch_throttle(w->w, kind));

	if (t->did == TACHO_WATCH_APPLIED && t->err)
		tc_sb_addf(sb, "; cannot %s: %s", cap ? "cap" : "duty-cycle", tacho_strerror(t->err));
	else if (t->did == TACHO_WATCH_APPLIED && cap)
		tc_sb_addf(sb, "; capped to %.3g CPU by %s", t->share, where);
	else if (t->did == TACHO_WATCH_APPLIED)
		tc_sb_addf(sb, "; runs %.0f%% of each 100 ms by %s", 100 * t->share, where);
	else if (t->did == TACHO_WATCH_LIFTED && t->err)
		tc_sb_addf(sb, "; cannot lift the %s: %s", cap ? "cap" : "duty cycle",
			   tacho_strerror(t->err));
	else if (t->did == TACHO_WATCH_LIFTED)
		tc_sb_addf(sb, "; %s lifted", cap ? "cap" : "duty cycle");
}

/* A crossing the session reports: its commands run, then its line in the log. */
static void on_change(struct watch_cli *w, const struct tacho_watch_change *c)
{
	const struct wrule *r = &w->r[c->rule];
	bool fired = c->change == TACHO_RULE_FIRED;
	struct tc_sb act = TC_SB_INIT;

	tc_sb_init(&act);
	if (c->signal && c->signalled < 0)
		tc_sb_addf(&act, "; cannot send signal %d: %s", c->signal,
			   tacho_strerror(c->signalled));
	else if (c->signal)
		tc_sb_addf(&act, "; signal %d sent", c->signal);
	say_throttle(&act, w, TACHO_THROTTLE_CAP, &c->cap);
	say_throttle(&act, w, TACHO_THROTTLE_DUTY, &c->duty);
	if (fired ? r->exec : r->exec_lift)
		run_exec(w, r, fired ? r->exec : r->exec_lift, c);
	logf_(w, "+%.3fs %s %s at %.6g on %s%s", c->time, fired ? "fired" : "lifted", r->desc,
	      c->value, w->target, act.buf);
	tc_sb_exit(&act);
}

/* --- the loop --- */

static int watch_setup(struct watch_cli *w)
{
	enum tacho_throttle_kind failed = TACHO_THROTTLE_CAP;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err = tacho_watch_start(w->w, w->lc.pid, w->lc.ncgroups ? w->lc.cgroups[0] : NULL,
				    &failed, &diag);
	const char *why = diag.message[0] ? diag.message : tacho_strerror(err);

	if (!err)
		return GO_ON;
	if (failed == TACHO_THROTTLE_CAP)
		cli_error("cannot cap %s: %s (--duty stops and continues it instead)", w->target,
			  why);
	else
		cli_error("cannot duty-cycle %s: %s", w->target, why);
	return EXIT_FAIL;
}

static int watch_loop(struct watch_cli *w)
{
	struct live_cli *lc = &w->lc;
	struct tacho_live_frame *f = NULL;
	double next = 0;
	int err = tacho_live_sample(lc->live, &f);

	tacho_live_frame_put(f);
	for (size_t i = 0; !err && i < w->nr; i++)
		fprintf(stderr, "tacho watch: %s: %s\n", w->target, w->r[i].desc);
	if (!err)
		next = live_now() + lc->interval;
	while (!err && !cli_stop_sig) {
		struct tacho_watch_result res = { .sz = sizeof(res) };

		live_cli_wait(lc, next, -1);
		if (cli_stop_sig)
			break;
		if (live_now() < next && !lc->child_done)
			continue;
		err = tacho_live_sample(lc->live, &f);
		if (err)
			break;
		tacho_watch_step(w->w, f, &res);
		for (size_t i = 0; i < res.nchanges; i++)
			on_change(w, tacho_watch_step_change(w->w, i));
		if (res.feedback)
			cli_warn("cannot adjust the cap of %s", w->target);
		tacho_live_frame_put(f);
		reap_execs(w, false);
		if (lc->child_done)
			break;
		next += lc->interval;
		if (next < live_now())
			next = live_now() + lc->interval;
	}
	if (!err)
		return GO_ON;
	cli_error("cannot count: %s", tacho_strerror(err));
	return EXIT_FAIL;
}

/* Everything the rules changed is undone: caps lifted, a stopped target continued. */
static void watch_undo(struct watch_cli *w)
{
	if (tacho_throttle_active(tacho_watch_throttle(w->w, TACHO_THROTTLE_CAP)))
		logf_(w, "lifting the cap of %s (tacho ends)", w->target);
	if (tacho_throttle_active(tacho_watch_throttle(w->w, TACHO_THROTTLE_DUTY)))
		logf_(w, "continuing %s (tacho ends)", w->target);
	tacho_watch_free(w->w);
	w->w = NULL;
}

int watch_run(struct watch_cli *w, int argc, char **argv)
{
	struct cli_signals saved;
	int ret;

	cli_stop_signals_catch(&saved);
	ret = live_cli_start(&w->lc, argc, argv);
	if (ret == GO_ON) {
		live_cli_target(&w->lc, w->target, sizeof(w->target));
		ret = watch_setup(w);
	}
	if (ret == GO_ON)
		ret = watch_loop(w);
	watch_undo(w);
	if (cli_stop_sig && w->lc.child && !w->lc.child_done) {
		/* the program goes with tacho: it gets the signal, and its status is tacho's */
		tacho_child_kill(w->lc.child, cli_stop_sig);
		w->lc.child_done = true;
	}
	cli_stop_signals_restore(&saved);
	return ret;
}

void watch_done(struct watch_cli *w)
{
	reap_execs(w, true);
	tacho_watch_free(w->w);
	w->w = NULL;
}
