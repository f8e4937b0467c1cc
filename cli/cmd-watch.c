/* cmd-watch.c - `tacho watch`: rules over the event rates of a program, a process or a
 * cgroup, and what to do when one fires: run a command, send a signal, cap the CPU
 * bandwidth or stop and continue the target in a duty cycle; lifted again past the
 * rule's hysteresis. 996.sys's throttling (seed 996), done with the kernel's own
 * controls. The controller is the library's watch session (tacho/live.h): this file
 * parses the rules into it; watch-run.c feeds it the sampler's frames, logs every
 * change it reports and runs the commands of --exec and --exec-lift. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <strings.h>

#include "watch.h"

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

static int rate_option(struct wrule *r, int opt, const char *arg)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	char caret[600];

	if (r->dir_set)
		return cli_usage_error(&cmd_watch, "one of --above and --below per rule");
	if (tacho_rate_parse(arg, &r->o.threshold, &diag)) {
		cli_error("bad rate for %s: %s", opt == OPT_ABOVE ? "--above" : "--below",
			  diag.message);
		if (tacho_diag_caret(&diag, caret, sizeof(caret)) > 0)
			fputs(caret, stderr);
		return EXIT_USAGE;
	}
	r->dir_set = true;
	r->o.dir = opt == OPT_ABOVE ? TACHO_RULE_ABOVE : TACHO_RULE_BELOW;
	return GO_ON;
}

static int rule_option(struct watch_cli *w, int opt, const char *arg)
{
	struct wrule *r = w->nr ? &w->r[w->nr - 1] : NULL;
	double v;

	if (opt == 'e') {
		if (w->nr == MAX_RULES)
			return cli_usage_error(&cmd_watch, "at most %d rules", MAX_RULES);
		if (!*arg)
			return cli_usage_error(&cmd_watch, "-e needs an event");
		r = &w->r[w->nr++];
		r->o = (struct tacho_rule_opts){ .sz = sizeof(r->o), .input = arg };
		r->a = (struct tacho_watch_rule_opts){ .sz = sizeof(r->a), .rule = &r->o };
		return GO_ON;
	}
	if (!r)
		return cli_usage_error(&cmd_watch, "a rule starts with -e <event>");
	switch (opt) {
	case OPT_ABOVE:
	case OPT_BELOW:
		return rate_option(r, opt, arg);
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
	case OPT_EXEC_LIFT:
		*(opt == OPT_EXEC ? &r->exec : &r->exec_lift) = arg;
		return GO_ON;
	case OPT_SIGNAL:
		r->a.signal = signal_number(arg);
		if (r->a.signal <= 0)
			return cli_usage_error(&cmd_watch, "bad signal '%s' (TERM, SIGUSR1, 10, ...)",
					       arg);
		return GO_ON;
	case OPT_CAP:
	case OPT_DUTY:
		if (opt == OPT_CAP ? r->a.duty : r->a.cap)
			return cli_usage_error(&cmd_watch, "one of --cap and --duty per rule");
		if (opt == OPT_CAP)
			return percent("--cap", arg, 100000, &r->a.cap);
		if (percent("--duty", arg, 100, &r->a.duty) != GO_ON)
			return EXIT_USAGE;
		if (r->a.duty >= 100)
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
					       w->r[i].o.input);
	if (w->lc.ncgroups > 1)
		return cli_usage_error(&cmd_watch, "one cgroup at a time (-G)");
	if (!w->lc.pid && !w->lc.ncgroups && optind >= argc)
		return cli_usage_error(&cmd_watch, "nothing to watch (-p <pid>, -G <cgroup> or a "
				       "program)");
	w->lc.view = w->lc.ncgroups ? TACHO_LIVE_CGROUP : TACHO_LIVE_PROCESS;
	w->lc.view_set = true;
	return GO_ON;
}

/* The session and its rules; a rule over an event this machine cannot count would
 * never fire: refused before anything runs, naming the event and why. */
static int make_rules(struct watch_cli *w)
{
	int err = tacho_watch_new(NULL, &w->w);

	for (size_t i = 0; !err && i < w->nr; i++) {
		struct tacho_diag diag = { .sz = sizeof(diag) };

		err = tacho_watch_add(w->w, &w->r[i].a, &diag);
		if (err < 0 && err != -ENOMEM)
			return cli_event_error("rule", &diag);
		if (err >= 0)
			err = tacho_rule_describe(tacho_watch_rule(w->w, i), w->r[i].desc,
						  sizeof(w->r[i].desc)) < 0;
	}
	for (size_t i = 0; !err && i < w->nr; i++) {
		char why[768];

		err = tacho_rule_check(tacho_watch_rule(w->w, i), why, sizeof(why));
		if (err && err != -ENOMEM) {
			cli_error("cannot watch %s: %s", w->r[i].desc, why);
			return EXIT_FAIL;
		}
	}
	if (!err)
		tc_sb_adds(&w->lc.events, tacho_watch_events(w->w));
	if (err || w->lc.events.oom) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	return GO_ON;
}

static int cmd_watch_fn(int argc, char **argv)
{
	struct watch_cli w;
	int ret;

	memset(&w, 0, sizeof(w));
	live_cli_init(&w.lc, &cmd_watch);
	ret = watch_parse(&w, argc, argv);
	if (ret == GO_ON)
		ret = make_rules(&w);
	if (ret == GO_ON && !(w.out = cli_open_output(w.outpath)))
		ret = EXIT_FAIL;
	if (ret == GO_ON)
		ret = watch_run(&w, argc, argv);
	if (ret == GO_ON) {
		live_cli_reap(&w.lc);
		ret = live_cli_status(&w.lc);
	}
	watch_done(&w);
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
