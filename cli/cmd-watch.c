/* cmd-watch.c - `tacho watch`: rules over the event rates of a program, a process or a
 * cgroup, and what to do when one fires: run a command, send a signal, cap the CPU
 * bandwidth (cgroup v2 cpu.max or v1 cpu.cfs_quota_us) or stop and continue the target
 * in a duty cycle; lifted again past the rule's hysteresis. 996.sys's throttling (seed
 * 996), done with the kernel's own controls. The sampler, the rules and the throttles
 * are the library's (tacho/live.h); this file parses, runs the loop, runs commands and
 * logs every firing and lifting. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "live/live-int.h"

#define GO_ON (-1)
#define MAX_RULES 8
#define MAX_EXECS 64

enum {
	OPT_ABOVE = 256, OPT_BELOW, OPT_FOR, OPT_HYST, OPT_EXEC, OPT_EXEC_LIFT, OPT_SIGNAL,
	OPT_CAP, OPT_DUTY,
};

static const char watch_usage[] =
	"usage: tacho watch -e <event>[/<event>] (--above | --below) <rate> [--for <seconds>]\n"
	"                   [--hysteresis <percent>] [--exec <command>] [--exec-lift <command>]\n"
	"                   [--signal <signal>] [--cap <percent> | --duty <percent>]\n"
	"                   [-e ... another rule] [-d <seconds>] [-o <file>]\n"
	"                   (-p <pid> | -G <cgroup> | [--] <program> [<args>])\n"
	"\n"
	"Counts the events of the rules on a program it starts, a process or a cgroup, every\n"
	"-d seconds, and acts when a rule fires: its rate (or the ratio of two events' rates)\n"
	"stayed above (or below) the threshold for --for seconds. It lifts once the rate has\n"
	"stayed past the hysteresis band (10% of the threshold by default) as long. Every\n"
	"firing and lifting is logged with its time and rate. The options after an -e belong\n"
	"to its rule.\n"
	"\n";

static const struct cli_option watch_options[] = {
	{ 'e', 'e', "event", "<event>",
	  "starts a rule on this event's rate, or on the ratio of two\n"
	  "(cache-misses/instructions); docs/events.md" },
	{ OPT_ABOVE, 0, "above", "<rate>",
	  "fires above this rate per second (1000, 2.5k, 10M/s; a\n"
	  "ratio: a plain number)" },
	{ OPT_BELOW, 0, "below", "<rate>", "fires below this rate" },
	{ OPT_FOR, 0, "for", "<seconds>",
	  "only once it has held this long (default: one interval)" },
	{ OPT_HYST, 0, "hysteresis", "<percent>",
	  "lifts only past the threshold less (or plus) this share\n"
	  "of it (default 10)" },
	{ OPT_EXEC, 0, "exec", "<command>",
	  "runs this shell command when the rule fires (TACHO_*\n"
	  "variables say which rule, the rate, the target)" },
	{ OPT_EXEC_LIFT, 0, "exec-lift", "<command>", "runs this one when it lifts" },
	{ OPT_SIGNAL, 0, "signal", "<signal>",
	  "sends this signal (TERM, SIGUSR1, 10) to the target when\n"
	  "the rule fires" },
	{ OPT_CAP, 0, "cap", "<percent>",
	  "while the rule holds, caps the target's CPU bandwidth\n"
	  "(cgroup cpu controller), steered so that the rule's rate\n"
	  "comes to this share of its rate before" },
	{ OPT_DUTY, 0, "duty", "<percent>",
	  "while the rule holds, lets the target run this share of\n"
	  "each 100 ms and stops it (SIGSTOP) for the rest" },
	{ 'd', 'd', "delay", "<seconds>", "the counting interval (default 1, at least 0.05)" },
	{ 'p', 'p', "pid", "<pid>", "watch this process (all its threads and children)" },
	{ 'G', 'G', "cgroup", "<cgroup>", "watch this cgroup (a path under its hierarchy)" },
	{ 'o', 'o', "output", "<file>", "the log there instead of standard output" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char watch_footer[] =
	"Ctrl-C or SIGTERM lifts every cap and continues a stopped target before tacho\n"
	"ends (a program it started gets the signal too). The environment of --exec:\n"
	"TACHO_STATE (fired, lifted), TACHO_RULE, TACHO_INPUT, TACHO_RATE, TACHO_THRESHOLD,\n"
	"TACHO_TARGET, TACHO_PID (a process target), TACHO_TIME (seconds since counting\n"
	"began).\n"
	"\n"
	"exit status: the program's when one ran, else 0; 1 when it cannot count or act,\n"
	"2 for bad usage. docs/watch.md tells more.\n";

struct wrule {
	const char *input;
	bool dir_set;
	struct tacho_rule_opts o;
	const char *exec, *exec_lift;
	int sig;
	double cap, duty;           /* percent, 0: none */
	struct tacho_rule *rule;
	double share;               /* the throttle share it asked for while it holds */
	double goal;                /* --cap of one event: the rate to bring it to */
	char desc[256];
};

struct watch_cli {
	struct live_cli lc;
	struct wrule r[MAX_RULES];
	size_t nr;
	const char *outpath;
	FILE *out;
	struct tacho_throttle *cap, *duty;
	pid_t execs[MAX_EXECS];
	size_t nexecs;
	char target[160];
	char cgdir[PATH_MAX];       /* a cgroup target's directory, for signals */
};

/* --- parsing --- */

static int signal_number(const char *s)
{
	static const struct { const char *name; int sig; } sigs[] = {
		{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "KILL", SIGKILL },
		{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "TERM", SIGTERM }, { "STOP", SIGSTOP },
		{ "CONT", SIGCONT }, { "TSTP", SIGTSTP }, { "ALRM", SIGALRM },
	};
	uint64_t n;

	if (!tc_parse_u64(s, &n))
		return n > 0 && n < 65 ? (int)n : -1;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		if (!strcasecmp(s, sigs[i].name))
			return sigs[i].sig;
	return -1;
}

static int percent(const char *opt, const char *arg, double max, double *out)
{
	double v;

	if (tc_parse_double(arg, &v) || !(v > 0) || v > max)
		return cli_usage_error(&cmd_watch, "bad value for %s: '%s' (a percentage above 0, "
				       "at most %g)", opt, arg, max);
	*out = v;
	return GO_ON;
}

static int rule_option(struct watch_cli *w, int opt, const char *arg)
{
	struct wrule *r = w->nr ? &w->r[w->nr - 1] : NULL;
	struct tacho_diag diag;
	double v;

	if (opt == 'e') {
		if (w->nr == MAX_RULES)
			return cli_usage_error(&cmd_watch, "at most %d rules", MAX_RULES);
		if (!*arg)
			return cli_usage_error(&cmd_watch, "-e needs an event");
		r = &w->r[w->nr++];
		r->input = arg;
		r->o.sz = sizeof(r->o);
		r->o.input = arg;
		return GO_ON;
	}
	if (!r)
		return cli_usage_error(&cmd_watch, "a rule starts with -e <event>");
	switch (opt) {
	case OPT_ABOVE:
	case OPT_BELOW:
		if (r->dir_set)
			return cli_usage_error(&cmd_watch, "one of --above and --below per rule");
		memset(&diag, 0, sizeof(diag));
		diag.sz = sizeof(diag);
		if (tacho_rate_parse(arg, &v, &diag)) {
			char caret[600];
			cli_error("bad rate for %s: %s", opt == OPT_ABOVE ? "--above" : "--below",
				  diag.message);
			if (tacho_diag_caret(&diag, caret, sizeof(caret)) > 0)
				fputs(caret, stderr);
			return EXIT_USAGE;
		}
		r->dir_set = true;
		r->o.dir = opt == OPT_ABOVE ? TACHO_RULE_ABOVE : TACHO_RULE_BELOW;
		r->o.threshold = v;
		return GO_ON;
	case OPT_FOR:
		return live_cli_seconds(&cmd_watch, "--for", arg, 0, &r->o.for_s) ? EXIT_USAGE
										   : GO_ON;
	case OPT_HYST:
		if (tc_parse_double(arg, &v) || !(v >= 0) || v > 100)
			return cli_usage_error(&cmd_watch, "bad value for --hysteresis: '%s' (0 to "
					       "100 percent)", arg);
		r->o.hysteresis = v == 0 ? -1 : v / 100;
		return GO_ON;
	case OPT_EXEC:
		r->exec = arg;
		return GO_ON;
	case OPT_EXEC_LIFT:
		r->exec_lift = arg;
		return GO_ON;
	case OPT_SIGNAL:
		r->sig = signal_number(arg);
		if (r->sig <= 0)
			return cli_usage_error(&cmd_watch, "bad signal '%s' (TERM, SIGUSR1, 10, ...)",
					       arg);
		return GO_ON;
	case OPT_CAP:
		if (r->duty)
			return cli_usage_error(&cmd_watch, "one of --cap and --duty per rule");
		return percent("--cap", arg, 100000, &r->cap);
	case OPT_DUTY:
		if (r->cap)
			return cli_usage_error(&cmd_watch, "one of --cap and --duty per rule");
		if (percent("--duty", arg, 100, &r->duty) != GO_ON)
			return EXIT_USAGE;
		if (r->duty >= 100)
			return cli_usage_error(&cmd_watch, "--duty must be below 100");
		return GO_ON;
	}
	return GO_ON;
}

static int watch_parse(struct watch_cli *w, int argc, char **argv)
{
	struct cli_args args;
	int opt, ret = GO_ON;

	cli_args_init(&args, &cmd_watch, argc, argv);
	while (ret == GO_ON && (opt = cli_args_next(&args)) > 0) {
		int k;
		if (opt == 'e' || opt >= OPT_ABOVE) {
			ret = rule_option(w, opt, optarg);
			continue;
		}
		if (opt == 'o') {
			w->outpath = optarg;
			continue;
		}
		k = live_cli_option(&w->lc, opt, optarg);
		if (k != 1)
			ret = k ? k : GO_ON;
	}
	if (ret != GO_ON)
		return ret;
	if (opt < 0)
		return args.exit;
	if (!w->nr)
		return cli_usage_error(&cmd_watch, "no rule (-e <event> --above <rate>)");
	for (size_t i = 0; i < w->nr; i++)
		if (!w->r[i].dir_set)
			return cli_usage_error(&cmd_watch, "rule '%s' needs --above or --below",
					       w->r[i].input);
	if (w->lc.ncgroups > 1)
		return cli_usage_error(&cmd_watch, "one cgroup at a time (-G)");
	if (!w->lc.pid && !w->lc.ncgroups && optind >= argc)
		return cli_usage_error(&cmd_watch, "nothing to watch (-p <pid>, -G <cgroup> or a "
				       "program)");
	w->lc.view = w->lc.ncgroups ? TACHO_LIVE_CGROUP : TACHO_LIVE_PROCESS;
	w->lc.view_set = true;
	return GO_ON;
}

/* The rules parsed, their events the sampler's list. */
static int make_rules(struct watch_cli *w)
{
	for (size_t i = 0; i < w->nr; i++) {
		struct wrule *r = &w->r[i];
		struct tacho_diag diag;
		const char *ev;
		int err;

		memset(&diag, 0, sizeof(diag));
		diag.sz = sizeof(diag);
		err = tacho_rule_new(&r->o, &r->rule, &diag);
		if (err) {
			if (err == -ENOMEM) {
				cli_error("out of memory");
				return EXIT_FAIL;
			}
			return cli_event_error("rule", &diag);
		}
		tacho_rule_describe(r->rule, r->desc, sizeof(r->desc));
		/* each event once */
		ev = tacho_rule_events(r->rule);
		for (const char *p = ev; p && *p;) {
			const char *c = strchr(p, ',');
			size_t n = c ? (size_t)(c - p) : strlen(p);
			char one[512];
			bool dup = false;

			snprintf(one, sizeof(one), "%.*s", (int)n, p);
			for (const char *q = w->lc.events.buf; q && *q && !dup;) {
				const char *qc = strchr(q, ',');
				size_t qn = qc ? (size_t)(qc - q) : strlen(q);
				dup = qn == n && !strncmp(q, one, n);
				q = qc ? qc + 1 : NULL;
			}
			if (!dup)
				tc_sb_addf(&w->lc.events, "%s%s", w->lc.events.len ? "," : "", one);
			p = c ? c + 1 : NULL;
		}
	}
	return GO_ON;
}

/* --- acting --- */

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
		     const char *state, double value, double t)
{
	char rate[64], th[64], tm[64], pid[32];
	pid_t p;

	reap_execs(w, false);
	if (w->nexecs == MAX_EXECS) {
		cli_warn("not running '%s': %d commands still run", cmd, MAX_EXECS);
		return;
	}
	snprintf(rate, sizeof(rate), "%.17g", value);
	snprintf(th, sizeof(th), "%.17g", r->o.threshold);
	snprintf(tm, sizeof(tm), "%.3f", t);
	snprintf(pid, sizeof(pid), "%d", (int)w->lc.pid);
	fflush(NULL);
	p = fork();
	if (p < 0) {
		cli_warn("cannot run '%s': %s", cmd, strerror(errno));
		return;
	}
	if (p == 0) {
		setenv("TACHO_STATE", state, 1);
		setenv("TACHO_RULE", r->desc, 1);
		setenv("TACHO_INPUT", r->input, 1);
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

static int send_signal(struct watch_cli *w, int sig)
{
	char path[PATH_MAX + 16], *text;
	size_t len;
	int n = 0;

	if (w->lc.pid)
		return kill(w->lc.pid, sig) ? -errno : 1;
	snprintf(path, sizeof(path), "%s/cgroup.procs", w->cgdir);
	if (tc_read_file(path, &text, &len, 16u << 20))
		return -errno;
	for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n")) {
		uint64_t pid;
		if (!tc_parse_u64(p, &pid) && pid > 0 && pid <= INT32_MAX &&
		    !kill((pid_t)pid, sig))
			n++;
	}
	free(text);
	return n;
}

/* Event name's rate on the target averaged over the rule's window (its last
 * intervals). */
static double window_rate(const struct tacho_live_frame *f, const struct wrule *r,
			  const char *name)
{
	const struct tacho_live_row *row = tacho_live_frame_row(f, 0);
	int e = tacho_live_frame_event_index(f, name);
	double iv = tacho_live_frame_interval(f), sum = 0;
	size_t k, n = 0, want;

	if (!row || e < 0)
		return NAN;
	want = iv > 0 ? (size_t)ceil(r->o.for_s / iv) : 1;
	if (want < 1)
		want = 1;
	for (k = row->nhistory; k-- > 0 && n < want;) {
		double v = row->history[(size_t)e * row->nhistory + k];
		if (isfinite(v)) {
			sum += v;
			n++;
		}
	}
	return n ? sum / (double)n : NAN;
}

/* The CPUs the target used over the rule's window: task-clock in msec per second. */
static double cpus_used(const struct tacho_live_frame *f, const struct wrule *r)
{
	return window_rate(f, r, "task-clock") / 1000.0;
}

/* The smallest share asked by the rules of that kind that hold, or 0. */
static double held_share(const struct watch_cli *w, bool cap)
{
	double s = 0;

	for (size_t i = 0; i < w->nr; i++) {
		const struct wrule *r = &w->r[i];
		if (!tacho_rule_active(r->rule) || !(cap ? r->cap : r->duty))
			continue;
		if (!s || r->share < s)
			s = r->share;
	}
	return s;
}

static void throttle_update(struct watch_cli *w, struct tacho_throttle *t, bool cap, char *said,
			    size_t size)
{
	double s = held_share(w, cap);
	int err;

	if (!t)
		return;
	if (s > 0) {
		err = tacho_throttle_apply(t, s);
		if (err)
			snprintf(said, size, "; cannot %s: %s", cap ? "cap" : "duty-cycle",
				 tacho_strerror(err));
		else if (cap)
			snprintf(said, size, "; capped to %.3g CPU by %s", s, tacho_throttle_where(t));
		else
			snprintf(said, size, "; runs %.0f%% of each 100 ms by %s", 100 * s,
				 tacho_throttle_where(t));
	} else if (tacho_throttle_active(t)) {
		err = tacho_throttle_lift(t);
		snprintf(said, size, err ? "; cannot lift the %s: %s" : "; %s lifted%s",
			 cap ? "cap" : "duty cycle", err ? tacho_strerror(err) : "");
	}
}

static void on_change(struct watch_cli *w, struct wrule *r, int change, double value,
		      const struct tacho_live_frame *f)
{
	bool fired = change == TACHO_RULE_FIRED;
	double t = tacho_live_frame_time(f);
	char act[600] = "", more[300] = "", v[48];

	snprintf(v, sizeof(v), "%.6g", value);
	if (fired && r->sig) {
		int k = send_signal(w, r->sig);
		snprintf(more, sizeof(more), k < 0 ? "; cannot send signal %d: %s" :
			 "; signal %d sent%s", r->sig, k < 0 ? tacho_strerror(k) : "");
		strncat(act, more, sizeof(act) - strlen(act) - 1);
	}
	if (fired && r->cap) {
		double used = cpus_used(f, r);
		/* the share of what it used: under load it had less than a CPU */
		r->share = (isfinite(used) && used > 0 ? used : 1.0) * r->cap / 100;
		/* one event: then its rate is what the cap brings to the percentage (a
		 * ratio stays the same whatever the bandwidth: the CPU share it is) */
		r->goal = strchr(tacho_rule_events(r->rule), ',') ? NAN :
			  window_rate(f, r, tacho_rule_events(r->rule)) * r->cap / 100;
	} else if (fired && r->duty) {
		r->share = r->duty / 100;
	}
	if (r->cap) {
		throttle_update(w, w->cap, true, more, sizeof(more));
		strncat(act, more, sizeof(act) - strlen(act) - 1);
	}
	if (r->duty) {
		throttle_update(w, w->duty, false, more, sizeof(more));
		strncat(act, more, sizeof(act) - strlen(act) - 1);
	}
	if (fired && r->exec)
		run_exec(w, r, r->exec, "fired", value, t);
	if (!fired && r->exec_lift)
		run_exec(w, r, r->exec_lift, "lifted", value, t);
	logf_(w, "+%.3fs %s %s at %s on %s%s", t, fired ? "fired" : "lifted", r->desc, v,
	      w->target, act);
}

/* The cap as measured, not as written: the capping rule that holds with the smallest
 * share steers it, by its event's rate (one event) or by the CPU it uses (a ratio). */
static void cap_feedback(struct watch_cli *w, const struct tacho_live_frame *f)
{
	const struct tacho_live_row *row = tacho_live_frame_row(f, 0);
	const struct wrule *lead = NULL;
	double measured, target;
	int e;

	for (size_t i = 0; i < w->nr; i++) {
		const struct wrule *r = &w->r[i];
		if (tacho_rule_active(r->rule) && r->cap && (!lead || r->share < lead->share))
			lead = r;
	}
	if (!lead || !row)
		return;
	if (isfinite(lead->goal)) {
		e = tacho_live_frame_event_index(f, tacho_rule_events(lead->rule));
		measured = e >= 0 ? row->values[e].rate : NAN;
		target = lead->goal;
	} else {
		e = tacho_live_frame_event_index(f, "task-clock");
		measured = e >= 0 ? row->values[e].rate / 1e3 : NAN;
		target = lead->share;
	}
	if (tacho_throttle_feedback(w->cap, measured, target))
		cli_warn("cannot adjust the cap of %s", w->target);
}

/* A rule over an event this machine cannot count would never fire: refused before
 * anything runs, naming the event and why. */
static int check_rules(struct watch_cli *w)
{
	for (size_t i = 0; i < w->nr; i++) {
		char why[768];
		int err = tacho_rule_check(w->r[i].rule, why, sizeof(why));

		if (err == -ENOMEM) {
			cli_error("out of memory");
			return EXIT_FAIL;
		}
		if (err) {
			cli_error("cannot watch %s: %s", w->r[i].desc, why);
			return EXIT_FAIL;
		}
	}
	return GO_ON;
}

/* --- the loop --- */

static int watch_setup(struct watch_cli *w)
{
	struct tacho_throttle_opts to = { .sz = sizeof(to) };
	struct tacho_diag diag;
	bool want_cap = false, want_duty = false;
	int err;

	for (size_t i = 0; i < w->nr; i++) {
		want_cap |= w->r[i].cap > 0;
		want_duty |= w->r[i].duty > 0;
	}
	to.pid = w->lc.pid;
	to.cgroup = w->lc.ncgroups ? w->lc.cgroups[0] : NULL;
	if (want_cap) {
		to.kind = TACHO_THROTTLE_CAP;
		memset(&diag, 0, sizeof(diag));
		diag.sz = sizeof(diag);
		err = tacho_throttle_new(&to, &w->cap, &diag);
		if (err) {
			cli_error("cannot cap %s: %s (--duty stops and continues it instead)",
				  w->target, diag.message[0] ? diag.message : tacho_strerror(err));
			return EXIT_FAIL;
		}
	}
	if (want_duty) {
		to.kind = TACHO_THROTTLE_DUTY;
		memset(&diag, 0, sizeof(diag));
		diag.sz = sizeof(diag);
		err = tacho_throttle_new(&to, &w->duty, &diag);
		if (err) {
			cli_error("cannot duty-cycle %s: %s", w->target,
				  diag.message[0] ? diag.message : tacho_strerror(err));
			return EXIT_FAIL;
		}
	}
	if (w->lc.ncgroups) {
		/* signals go to the processes of the cgroup, as the hierarchy the sampler
		 * counts it in lists them */
		struct tc_cgroup_mounts m;
		const char *root;

		if (tc_cgroup_mounts_read(NULL, &m) || !(root = tc_cgroup_perf_root(&m)) ||
		    tc_cgroup_resolve(root, w->lc.cgroups[0], w->cgdir, sizeof(w->cgdir)))
			snprintf(w->cgdir, sizeof(w->cgdir), "%s", w->lc.cgroups[0]);
	}
	return GO_ON;
}

static int watch_loop(struct watch_cli *w)
{
	struct live_cli *lc = &w->lc;
	struct tacho_live_frame *f;
	double next;
	int err;

	err = tacho_live_sample(lc->live, &f);
	tacho_live_frame_put(f);
	if (err) {
		cli_error("cannot count: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < w->nr; i++)
		fprintf(stderr, "tacho watch: %s: %s\n", w->target, w->r[i].desc);
	next = live_now() + lc->interval;
	while (!cli_stop_sig) {
		live_cli_wait(lc, next, -1);
		if (cli_stop_sig)
			break;
		if (live_now() < next && !lc->child_done)
			continue;
		err = tacho_live_sample(lc->live, &f);
		if (err) {
			cli_error("cannot count: %s", tacho_strerror(err));
			return EXIT_FAIL;
		}
		if (tacho_live_frame_nrows(f)) {
			for (size_t i = 0; i < w->nr; i++) {
				double value;
				int k = tacho_rule_eval(w->r[i].rule, f, 0, &value);
				if (k == TACHO_RULE_FIRED || k == TACHO_RULE_LIFTED)
					on_change(w, &w->r[i], k, value, f);
			}
			if (w->cap && tacho_throttle_active(w->cap))
				cap_feedback(w, f);
		}
		tacho_live_frame_put(f);
		reap_execs(w, false);
		if (lc->child_done)
			break;
		next += lc->interval;
		if (next < live_now())
			next = live_now() + lc->interval;
	}
	return GO_ON;
}

/* Everything the rules changed is undone: caps lifted, a stopped target continued. */
static void watch_undo(struct watch_cli *w)
{
	if (w->cap && tacho_throttle_active(w->cap))
		logf_(w, "lifting the cap of %s (tacho ends)", w->target);
	if (w->duty && tacho_throttle_active(w->duty))
		logf_(w, "continuing %s (tacho ends)", w->target);
	tacho_throttle_free(w->cap);
	tacho_throttle_free(w->duty);
	w->cap = w->duty = NULL;
}

static int cmd_watch_fn(int argc, char **argv)
{
	struct watch_cli w;
	struct cli_signals saved;
	int ret;

	memset(&w, 0, sizeof(w));
	live_cli_init(&w.lc, &cmd_watch);
	ret = watch_parse(&w, argc, argv);
	if (ret == GO_ON)
		ret = make_rules(&w);
	if (ret == GO_ON)
		ret = check_rules(&w);
	if (ret == GO_ON) {
		w.out = cli_open_output(w.outpath);
		if (!w.out)
			ret = EXIT_FAIL;
	}
	if (ret == GO_ON) {
		/* task-clock too: the CPU the target used, which a cap is a share of */
		cli_stop_signals_catch(&saved);
		ret = live_cli_start(&w.lc, argc, argv, "task-clock");
		if (ret == GO_ON) {
			live_cli_target(&w.lc, w.target, sizeof(w.target));
			ret = watch_setup(&w);
		}
		if (ret == GO_ON)
			ret = watch_loop(&w);
		watch_undo(&w);
		if (cli_stop_sig && w.lc.child && !w.lc.child_done) {
			/* the program goes with tacho: it gets the signal, and its status is
			 * tacho's */
			tacho_child_kill(w.lc.child, cli_stop_sig);
			w.lc.child_done = true;
		}
		cli_stop_signals_restore(&saved);
	}
	if (ret == GO_ON) {
		live_cli_reap(&w.lc);
		ret = live_cli_status(&w.lc);
	}
	reap_execs(&w, true);
	for (size_t i = 0; i < w.nr; i++)
		tacho_rule_free(w.r[i].rule);
	if (w.out && w.outpath)
		cli_close_output(w.out, w.outpath);
	live_cli_exit(&w.lc);
	return ret;
}

const struct cli_cmd cmd_watch = {
	.name = "watch",
	.fn = cmd_watch_fn,
	.summary = "rules over event rates that run commands, signal, cap or duty-cycle a target",
	.usage = watch_usage,
	.options = watch_options,
	.help_col = 28,
	.stop_at_operand = true,
	.footer = watch_footer,
};
