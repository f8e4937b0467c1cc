/* cmd-stat.c - `tacho stat`: count events over a program's runs (or a process, a thread,
 * CPUs) and print each value with its status, the statistics of the repetitions and
 * the derived metrics. The counting (tacho_stat_run) and the writing (tacho_stat_write)
 * are the library's, the options stat-options.c's; this file picks the events, runs the
 * count, writes the result and words messages. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stat.h"

/* Releases all that c holds, on every path. */
static void stat_cli_exit(struct stat_cli *c)
{
	if (c->log_held)
		cli_log_release(false);
	if (c->out && c->outpath)
		cli_close_output(c->out, c->outpath);
	else if (c->out && c->log_fd >= 0)
		fclose(c->out);
	tacho_stat_free(c->s);
	tacho_sim_mca_free(c->mca_result);
	tacho_sim_free(c->simulator);
	tacho_evlist_free(c->list);
	tc_sb_exit(&c->events);
	free(c->cpus);
	free(c->cgroup_arg);
	free(c->cgroups);
	free(c->pids);
	for (int i = 0; i < 2; i++)
		if (c->ctl_fds[i] >= 0)
			close(c->ctl_fds[i]);
}

/* --- the events: -e, --all or perf stat's default set --- */

static int build_all(struct tacho_evlist *list, const struct tacho_pmu_counters *pmu)
{
	size_t skipped = 0;
	int err = tacho_evlist_add_all(list, pmu->known && !pmu->none, &skipped);

	if (skipped && cli_verbose && (!err || err == -TACHO_EEMPTY))
		cli_warn("--all: %zu listed events could not be parsed and were left out",
			 skipped);
	return err;
}

static void default_events(struct stat_cli *c)
{
	bool hw = c->pmu.known && !c->pmu.none;

	tc_sb_adds(&c->events, tacho_events_default(hw ? TACHO_EVENTS_HARDWARE : 0));
	if (hw)
		return;
	if (c->pmu.none)
		snprintf(c->note, sizeof(c->note), "no hardware PMU on this machine (%s): "
			 "counting software events; see 'tacho doctor'", c->pmu.note);
	/* on stderr, unless CSV or JSON goes there (it must stay parseable): JSON carries
	 * it as "note" */
	if (c->note[0] && (c->fmt == TACHO_FORMAT_TABLE || c->outpath) && !c->quiet)
		cli_error("%s", c->note);
}

/* Adds to sb each of names (","-separated) that it does not hold yet, sep between
 * them. */
static void add_names(struct tc_sb *sb, const char *names, const char *sep)
{
	for (const char *p = names; *p;) {
		size_t n = strcspn(p, ","), lsep = strlen(sep);
		bool have = false;

		for (const char *q = sb->buf; q && *q;) {
			const char *end = strstr(q, sep);
			size_t m = end ? (size_t)(end - q) : strlen(q);

			have |= m == n && !strncmp(p, q, n);
			q += m + (end ? lsep : 0);
		}
		if (!have)
			tc_sb_addf(sb, "%s%.*s", sb->len ? sep : "", (int)n, p);
		p += n + (p[n] == ',');
	}
}

/* -M and -d where this machine cannot count them: every group that needs counters it
 * lacks, refused in one sentence that names the events. GO_ON when none is. */
static int groups_refused(struct stat_cli *c)
{
	struct tc_sb asked = TC_SB_INIT, metrics = TC_SB_INIT, missing = TC_SB_INIT;
	int ret = GO_ON;

	for (size_t i = 0; c->pmu.known && c->pmu.none && i < c->ngroups; i++) {
		const struct tacho_metric_group *g = c->groups[i];

		if (!g->counters)
			continue;
		add_names(&asked, g->name, ",");
		tc_sb_addf(&metrics, "%s%s", metrics.len ? ", " : "", g->metrics);
		add_names(&missing, g->counters, ", ");
	}
	if (asked.oom || metrics.oom || missing.oom) {
		cli_error("out of memory");
		ret = EXIT_FAIL;
	} else if (asked.len) {
		cli_error("cannot count %s%s: %s need%s %s from the CPU's counters, and this "
			  "machine has no hardware PMU (%s); where one exists tacho counts them "
			  "and prints %s (see 'tacho doctor')",
			  c->detailed ? "-d" : "-M ", c->detailed ? "" : asked.buf, metrics.buf,
			  strchr(metrics.buf, ',') ? "" : "s", missing.buf,
			  c->pmu.note[0] ? c->pmu.note : c->pmu.source, metrics.buf);
		ret = EXIT_FAIL;
	}
	tc_sb_exit(&asked);
	tc_sb_exit(&metrics);
	tc_sb_exit(&missing);
	return ret;
}

/* --sim: the simulator and its default events. */
static int sim_prepare(struct stat_cli *c)
{
	struct tacho_sim_opts so = { .sz = sizeof(so), .cpu_dump = c->sim_cpu,
				     .engine = c->engine,
				     .dump_instr = c->mca || (c->hot && c->hot_view ==
								      TACHO_SIM_VIEW_INSTRUCTION) };
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err = tacho_sim_new(&so, &c->simulator, &diag);

	if (err) {
		cli_error("cannot simulate: %s", diag.message[0] ? diag.message
								   : tacho_strerror(err));
		return EXIT_FAIL;
	}
	c->o.sim = c->simulator;
	if (!c->events.len)
		tc_sb_adds(&c->events, tacho_sim_default_events());
	if (c->events.oom) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	err = tacho_evlist_parse(c->events.buf, &c->list, &diag);
	if (err)
		return cli_event_error("event list", &diag);
	return GO_ON;
}

static int stat_prepare(struct stat_cli *c)
{
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	if (c->sim)
		return sim_prepare(c);

	c->pmu.sz = sizeof(c->pmu);
	err = tacho_pmu_counters_detect(&c->pmu);
	if (err) {
		cli_error("cannot read this CPU's counters: %s", tacho_strerror(err));
		return EXIT_FAIL;
	}
	if (c->o.null_run) {
		err = tacho_evlist_new(NULL, &c->list);
		if (err) {
			cli_error("cannot make an empty event list: %s", tacho_strerror(err));
			return EXIT_FAIL;
		}
		return GO_ON;
	}
	if (c->all) {
		err = tacho_evlist_new(NULL, &c->list);
		if (!err)
			err = build_all(c->list, &c->pmu);
		if (err) {
			cli_error("cannot list this machine's events: %s", tacho_strerror(err));
			return EXIT_FAIL;
		}
		return GO_ON;
	}
	if (groups_refused(c) != GO_ON)
		return EXIT_FAIL;
	if (!c->events.len && (!c->ngroups || c->detailed))
		default_events(c);
	/* -M and -d: each group's events, those the list names already once */
	for (size_t i = 0; i < c->ngroups; i++)
		add_names(&c->events, c->groups[i]->events, ",");
	if (c->events.oom) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	err = tacho_evlist_parse(c->events.buf, &c->list, &diag);
	if (err == -ENOMEM) {
		/* no fault of the list's: no caret, and no usage error */
		cli_error("cannot read the event list: out of memory");
		return EXIT_FAIL;
	}
	if (err)
		return cli_event_error("event list", &diag);
	if (c->o.cgroup_pairs && c->o.ncgroups > 1 && c->o.ncgroups > tacho_evlist_count(c->list))
		return cli_usage_error(&cmd_stat, "-G names %zu cgroups for %zu events (each goes "
				       "with the event in its place)", c->o.ncgroups,
				       tacho_evlist_count(c->list));
	if (c->explain && cli_msr_explain_events(c->list, stderr))
		return EXIT_FAIL;
	return GO_ON;
}

/* --- counting --- */

/* --timeout and --interval-count end the session as a SIGTERM to tacho does: the
 * library passes it on to the program (perf stops its workload so too) or, for -p,
 * -t, -a and -C, stops counting. To the process, not a thread: the interval helper
 * thread blocks every signal. */
static void stop_now(void)
{
	kill(getpid(), SIGTERM);
}

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	stop_now();
}

static void on_interval(void *arg, const struct tacho_stat_interval *iv)
{
	struct stat_cli *c = arg;

	/* the partial interval after the last one asked for is not one of them */
	if (c->interval_count && c->intervals >= c->interval_count)
		return;
	c->wo.csv_no_header = c->interval_header_done;
	if (c->perf_layout && c->fmt == TACHO_FORMAT_JSON)
		tacho_stat_interval_write_perf_json(iv, c->list, c->out, &c->wo);
	else if (c->perf_layout)
		tacho_stat_interval_write_perf(iv, c->list, c->out, &c->wo);
	else
		tacho_stat_interval_write(iv, c->list, c->out, c->fmt, &c->wo);
	c->interval_header_done = true;
	fflush(c->out);
	if (c->interval_count && ++c->intervals == c->interval_count)
		stop_now();
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs a --pre or --post command with the shell; nonzero when it failed (said once). */
static int run_hook(struct stat_cli *c, const char *cmd, const char *what)
{
	int st;

	fflush(NULL);
	st = system(cmd);
	if (st == 0)
		return 0;
	cli_error("%s '%s' failed (%s %d)", what, cmd,
		  st == -1 ? "cannot run the shell:" : WIFEXITED(st) ? "exit status" : "signal",
		  st == -1 ? errno : WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	(void)c;
	return 1;
}

/* A line on the terminal once the runs have taken a second (shorter work needs none),
 * cleared at the end; nothing when standard error is no terminal. */
static void on_progress(void *arg, unsigned done, unsigned total)
{
	struct stat_cli *c = arg;

	/* perf's --pre and --post, through the shell as perf runs them: after the run
	 * before this call, before the run that follows it */
	if (c->post && done > 0 && !c->pre_failed)
		run_hook(c, c->post, "--post");
	if (c->pre && done < total && !c->pre_failed && run_hook(c, c->pre, "--pre")) {
		c->pre_failed = true;
		stop_now();
	}
	if (!c->progress)
		return;
	if (!c->progress_t0)
		c->progress_t0 = mono_s();
	if (done >= total) {
		if (c->progress_shown)
			fprintf(stderr, "\r\033[K");
	} else if (mono_s() - c->progress_t0 >= 1.0) {
		fprintf(stderr, "\rtacho stat: run %u of %u", done + 1, total);
		c->progress_shown = true;
	}
	fflush(stderr);
}

static int stat_count(struct stat_cli *c)
{
	struct cli_signals saved;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int err;

	if (c->log_fd >= 0) {
		/* perf's --log-fd: a descriptor the caller opened; a copy, so that closing
		 * ours leaves theirs */
		int fd = fcntl(c->log_fd, F_DUPFD_CLOEXEC, 3);
		c->out = fd >= 0 ? fdopen(fd, "a") : NULL;
		if (!c->out) {
			cli_error("cannot write to descriptor %d: %s", c->log_fd, strerror(errno));
			if (fd >= 0)
				close(fd);
			return EXIT_FAIL;
		}
	} else {
		c->out = c->outpath ? cli_open_output(c->outpath) : stderr;
	}
	if (!c->out)
		return EXIT_FAIL;
	/* the JSON document on standard error: a warning line there would break it, so
	 * the warnings go into it ("warnings") */
	if (c->out == stderr && c->fmt == TACHO_FORMAT_JSON && !c->perf_layout && !c->interval &&
	    !c->quiet) {
		cli_log_hold();
		c->log_held = true;
	}
	if (c->append && c->outpath) {
		/* the new file starts with the old one's contents: appended, and still
		 * written whole and renamed into place */
		char *old = NULL;
		size_t len = 0;
		int r = tc_read_file(c->outpath, &old, &len, 1u << 30);

		if (r == 0 && len && fwrite(old, 1, len, c->out) != len)
			r = -EIO;
		free(old);
		if (r && r != -ENOENT) {
			cli_error("cannot append to '%s': %s", c->outpath, tacho_strerror(r));
			return EXIT_FAIL;
		}
	}
	c->wo.csv_sep = c->sep;
	c->progress = !c->interval && isatty(STDERR_FILENO);
	c->o.events = c->list;
	c->o.pmu = &c->pmu;
	c->o.stop = &cli_stop_sig;
	c->o.exec_err = &c->exec_err;
	c->o.on_progress = on_progress;
	c->o.progress_arg = c;
	if (c->interval) {
		c->o.interval_ms = c->interval;
		c->o.on_interval = on_interval;
		c->o.interval_arg = c;
	}

	/* Ctrl-C stops counting and still prints; while a program runs, the library
	 * forwards or leaves the signal to it */
	cli_stop_signals_catch(&saved);
	if (c->timeout_ms) {
		struct sigaction sa = { .sa_handler = on_alarm };
		struct itimerval it = { .it_value = { .tv_sec = c->timeout_ms / 1000,
						      .tv_usec = (c->timeout_ms % 1000) * 1000 } };
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	diag = (struct tacho_diag){ .sz = sizeof(diag) };
	err = tacho_stat_run(&c->o, &c->s, &diag);
	if (c->timeout_ms) {
		struct itimerval off = { 0 };
		setitimer(ITIMER_REAL, &off, NULL);
		signal(SIGALRM, SIG_DFL);
	}
	cli_stop_signals_restore(&saved);
	if (!err && c->mca) {
		err = tacho_sim_mca_new(c->simulator, tacho_stat_sim_result(c->s), &c->mca_result,
					&diag);
		if (err) {
			cli_error("cannot analyse the hottest block: %s", diag.message[0] ?
				  diag.message : tacho_strerror(err));
			return EXIT_FAIL;
		}
	}
	if (!err)
		return GO_ON;
	if (c->progress)
		on_progress(c, 1, 1);
	if (err == -TACHO_ENOSTART) {
		cli_error("%s", diag.message);
		if (c->sim && !c->exec_err)
			return 126;   /* found, but valgrind cannot run it */
		/* as a shell says it: 127 not found, 126 found but not runnable */
		return c->exec_err == ENOENT || c->exec_err == ENOTDIR ? 127 : 126;
	}
	if (diag.message[0])
		cli_error("cannot %s: %s", c->sim ? "simulate" : "count", diag.message);
	else
		cli_error("cannot %s: %s", c->sim ? "simulate" : "count", tacho_strerror(err));
	return EXIT_FAIL;
}

/* --- printing --- */

/* Events left uncounted for want of file descriptors make the whole count fail (1),
 * said in one line after the counts that were made, unless the program's own failure
 * is the status to report. */
static int out_of_files(const struct tacho_stat *s, const struct tacho_exit *ex)
{
	size_t n = 0;

	for (size_t i = 0; i < tacho_stat_nevents(s); i++) {
		const struct tacho_stat_event *e = tacho_stat_event(s, i);
		n += e->status == TACHO_COUNT_NOT_COUNTED && (e->err == -EMFILE || e->err == -ENFILE);
	}
	if (!n && !ex) {
		/* no program ran (-p, -a, -C): a session that counted nothing at all has
		 * failed, whatever it printed of why */
		size_t failed = 0, nev = tacho_stat_nevents(s);
		for (size_t i = 0; i < nev; i++) {
			const struct tacho_stat_event *e = tacho_stat_event(s, i);
			/* an event that opened and whose target never ran is no failure */
			failed += e->status == TACHO_COUNT_NOT_SUPPORTED ||
				  (e->status == TACHO_COUNT_NOT_COUNTED && e->err);
		}
		if (nev && failed == nev) {
			cli_error("counted nothing: none of the %zu event%s could be counted here "
				  "(the reasons are above)", nev, nev == 1 ? "" : "s");
			return EXIT_FAIL;
		}
	}
	if (!n)
		return ex ? ex->status : EXIT_OK;
	cli_error("cannot count %zu of %zu events: out of file descriptors (every event takes "
		  "one per CPU or thread: raise 'ulimit -n', or count fewer events)", n,
		  tacho_stat_nevents(s));
	return ex && ex->status ? ex->status : EXIT_FAIL;
}

static int stat_print_local(struct stat_cli *c)
{
	const struct tacho_exit *ex = tacho_stat_exit_status(c->s);
	struct tacho_stat_about about = {
		.sz = sizeof(about),
		.argv = c->o.argv,
		.target = c->target,
		.repeat = c->repeat_given ? c->repeat : 0,
		.note = c->note,
		.hot = c->hot,
		.hot_view = c->hot_view,
		.mca = c->mca_result,
		.perf_layout = c->perf_layout,
		.metric_only = c->metric_only,
	};
	char stopped[64];
	FILE *out = c->out;
	int err = 0;

	if (timed_out) {
		snprintf(stopped, sizeof(stopped), "after --timeout %u ms", c->timeout_ms);
		about.stopped = stopped;
	}

	if (cli_verbose && !c->sim) {
		const struct tacho_pmu_counters *pc = tacho_stat_pmu_counters(c->s);
		unsigned runs = tacho_stat_runs(c->s);

		if (pc)
			fprintf(stderr, "tacho: %zu events in %u run%s of the program per "
				"repetition; counters: %u general, %u fixed (%s)%s%s\n",
				tacho_stat_nevents(c->s), runs, runs == 1 ? "" : "s", pc->gp,
				pc->fixed, pc->source, pc->note[0] ? "; " : "", pc->note);
	}
	if (c->log_held)
		about.warnings = cli_log_held(&about.nwarnings);
	/* with -I the intervals were the output; -q wants none */
	if (!c->interval && !c->quiet)
		err = tacho_stat_write(c->s, &about, out, c->fmt, &c->wo);
	if (c->log_held) {
		/* what the document could not carry is printed after it */
		cli_log_release(!err);
		c->log_held = false;
	}
	/* a write error is told by the close that follows */
	if (err && err != -EIO)
		cli_error("cannot write the counts: %s", tacho_strerror(err));
	if (c->outpath) {
		c->out = NULL;
		if (cli_close_output(out, c->outpath) != EXIT_OK)
			return EXIT_FAIL;
	} else if (c->log_fd >= 0) {
		c->out = NULL;
		if (ferror(out) | fclose(out)) {
			cli_error("cannot write the counts to descriptor %d", c->log_fd);
			return EXIT_FAIL;
		}
	} else if (fflush(stderr) != 0 || ferror(stderr)) {
		/* the counts were lost (2>/dev/full): the exit status is all that can
		 * still say so */
		return EXIT_FAIL;
	}
	if (err || c->pre_failed)
		return EXIT_FAIL;
	/* a stop signal before the program was ever released: it has no status of its
	 * own, and the signal's is what it would have had a moment later (exit 0 here
	 * told a script that the program had run) */
	if (!ex && c->o.argv && c->o.argv[0] && tacho_stat_interrupted(c->s) && cli_stop_sig > 0)
		return 128 + cli_stop_sig;
	return out_of_files(c->s, ex);
}

/* The local output first, whatever the push gives: a push that fails loses nothing
 * that was printed or written. A failed push makes the exit status 1 unless it already
 * says a failure of its own (the program's). */
static int stat_print(struct stat_cli *c)
{
	int ret = stat_print_local(c);

	if (c->push.url && cli_push_stat(&c->push, c->s) != EXIT_OK && ret == EXIT_OK)
		ret = EXIT_FAIL;
	return ret;
}

static int cmd_stat_fn(int argc, char **argv)
{
	struct stat_cli c;
	int ret;

	stat_cli_init(&c);
	ret = stat_parse(&c, argc, argv);
	if (ret == GO_ON)
		ret = stat_prepare(&c);
	if (ret == GO_ON)
		ret = stat_count(&c);
	if (ret == GO_ON)
		ret = stat_print(&c);
	stat_cli_exit(&c);
	return ret;
}

const struct cli_cmd cmd_stat = {
	.name = "stat",
	.fn = cmd_stat_fn,
	.summary = "count events over a program's runs, with statistics and derived metrics",
	.usage = stat_usage,
	.options = stat_options,
	.help_col = 26,
	.stop_at_operand = true,
	.footer = stat_footer,
};
