/* live-common.c - what tacho top, serve and watch share: target and event options, the
 * default events, the program they may start, the sampler on it, and the wait for the
 * next interval (or the program's end). */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "live.h"

#define GO_ON (-1)

double live_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void live_cli_init(struct live_cli *lc, const struct cli_cmd *cmd)
{
	memset(lc, 0, sizeof(*lc));
	lc->cmd = cmd;
	tc_sb_init(&lc->events);
	lc->view = TACHO_LIVE_PROCESS;
	lc->interval = 1.0;
	lc->pidfd = -1;
}

void live_cli_exit(struct live_cli *lc)
{
	tacho_live_free(lc->live);
	lc->live = NULL;
	if (lc->pidfd >= 0)
		close(lc->pidfd);
	lc->pidfd = -1;
	/* a program still running when the command ends (an error, a signal) is not left
	 * behind: tacho_child_free kills and reaps it */
	tacho_child_free(lc->child);
	lc->child = NULL;
	tacho_evlist_free(lc->list);
	lc->list = NULL;
	tc_sb_exit(&lc->events);
}

int live_cli_seconds(const struct cli_cmd *cmd, const char *opt, const char *arg, double min,
		     double *out)
{
	double v;

	if (tc_parse_double(arg, &v) || !(v >= min) || v > 86400)
		return cli_usage_error(cmd, "bad value for %s: '%s' (seconds, at least %g)", opt,
				       arg, min);
	*out = v;
	return 0;
}

int live_cli_option(struct live_cli *lc, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'e':
		if (!*arg)
			return cli_usage_error(lc->cmd, "-e needs an event list");
		tc_sb_addf(&lc->events, "%s%s", lc->events.len ? "," : "", arg);
		return 1;
	case 'd':
		return live_cli_seconds(lc->cmd, "-d", arg, 0.05, &lc->interval) ? EXIT_USAGE : 1;
	case 'p':
		if (tc_parse_u64(arg, &v) || v == 0 || v > 0x7fffffff)
			return cli_usage_error(lc->cmd, "bad pid '%s' (a process id)", arg);
		lc->pid = (pid_t)v;
		return 1;
	case 'G':
		if (lc->ncgroups == LIVE_MAX_CGROUPS)
			return cli_usage_error(lc->cmd, "at most %d cgroups (-G)", LIVE_MAX_CGROUPS);
		if (!*arg)
			return cli_usage_error(lc->cmd, "-G needs a cgroup");
		lc->cgroups[lc->ncgroups++] = arg;
		if (!lc->view_set)
			lc->view = TACHO_LIVE_CGROUP;
		return 1;
	case 'k':
		if (tc_parse_u64(arg, &v) || v == 0 || v > 100000)
			return cli_usage_error(lc->cmd, "bad value for -k: '%s' (1 to 100000 rows)",
					       arg);
		lc->max_rows = (unsigned)v;
		return 1;
	case LIVE_OPT_VIEW:
		if (tacho_live_view_parse(arg, &lc->view))
			return cli_usage_error(lc->cmd, "bad view '%s' (machine, cpu, process, "
					       "thread or cgroup)", arg);
		lc->view_set = true;
		return 1;
	}
	return 0;
}

/* The live default set (tacho_events_default), the note why where it is software only. */
static void default_events(struct live_cli *lc)
{
	struct tacho_pmu_counters pmu = { .sz = sizeof(pmu) };
	bool hw = !tacho_pmu_counters_detect(&pmu) && pmu.known && !pmu.none;

	tc_sb_adds(&lc->events, tacho_events_default(TACHO_EVENTS_LIVE |
						     (hw ? TACHO_EVENTS_HARDWARE : 0)));
	if (hw)
		return;
	snprintf(lc->note, sizeof(lc->note), "no hardware PMU on this machine%s%s%s: counting "
		 "software events", pmu.note[0] ? " (" : "", pmu.note, pmu.note[0] ? ")" : "");
}

static void raise_nofile(void)
{
	struct rlimit rl;

	/* a process costs events x threads descriptors: take what the hard limit allows
	 * (perf does the same) */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int live_cli_start(struct live_cli *lc, int argc, char **argv)
{
	struct tacho_live_opts o = { .sz = sizeof(o) };
	struct tacho_diag diag;
	char tmsg[128];
	int err;

	if (optind < argc)
		lc->argv = argv + optind;
	if (lc->pid && lc->argv)
		return cli_usage_error(lc->cmd, "-p watches a running process: no program to run "
				       "('%s')", lc->argv[0]);
	if (lc->ncgroups && (lc->pid || lc->argv))
		return cli_usage_error(lc->cmd, "-G counts cgroups: not with -p or a program");
	if (lc->view == TACHO_LIVE_CGROUP && (lc->pid || lc->argv))
		return cli_usage_error(lc->cmd, "the cgroup view does not go with -p or a program");
	if ((lc->pid || lc->argv) && lc->view != TACHO_LIVE_PROCESS &&
	    lc->view != TACHO_LIVE_THREAD)
		return cli_usage_error(lc->cmd, "-p and a program go with the process or thread "
				       "view");
	if (lc->ncgroups && lc->view != TACHO_LIVE_CGROUP)
		return cli_usage_error(lc->cmd, "-G goes with the cgroup view");
	if (!lc->events.len)
		default_events(lc);
	if (lc->events.oom) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	memset(&diag, 0, sizeof(diag));
	diag.sz = sizeof(diag);
	if (tacho_evlist_parse(lc->events.buf, &lc->list, &diag))
		return cli_event_error("event list", &diag);
	raise_nofile();

	if (lc->argv) {
		err = tacho_child_start(lc->argv, NULL, &lc->child);
		if (err) {
			cli_error("cannot start '%s': %s", lc->argv[0], tacho_strerror(err));
			return EXIT_FAIL;
		}
		lc->pid = tacho_child_pid(lc->child);
		lc->pidfd = (int)syscall(SYS_pidfd_open, lc->pid, 0);
		o.child = lc->view == TACHO_LIVE_PROCESS;
	} else if (lc->pid) {
		lc->pidfd = (int)syscall(SYS_pidfd_open, lc->pid, 0);
	}
	o.events = lc->list;
	o.view = lc->view;
	o.pid = lc->pid;
	o.cgroups = lc->ncgroups ? lc->cgroups : NULL;
	o.ncgroups = lc->ncgroups;
	o.max_rows = lc->max_rows;
	memset(&diag, 0, sizeof(diag));
	diag.sz = sizeof(diag);
	err = tacho_live_new(&o, &lc->live, &diag);
	if (err) {
		cli_error("cannot count %s: %s", live_cli_target(lc, tmsg, sizeof(tmsg)),
			  diag.message[0] ? diag.message : tacho_strerror(err));
		return EXIT_FAIL;
	}
	if (lc->child) {
		int exec_err = 0;
		err = tacho_child_exec(lc->child, &exec_err);
		if (err) {
			char buf[512];
			cli_error("%s", tacho_exec_strerror(lc->argv[0], exec_err, buf, sizeof(buf)));
			/* the child is already reaped */
			tacho_child_free(lc->child);
			lc->child = NULL;
			return exec_err == ENOENT || exec_err == ENOTDIR ? 127 : 126;
		}
	}
	return GO_ON;
}

int live_cli_wait(struct live_cli *lc, double deadline, int fd)
{
	for (;;) {
		struct pollfd p[2];
		nfds_t n = 0;
		double left = deadline - live_now();
		int k, fdi = -1;

		if (left <= 0 || cli_stop_sig)
			return 0;
		if (lc->pidfd >= 0 && !lc->child_done)
			p[n++] = (struct pollfd){ .fd = lc->pidfd, .events = POLLIN };
		if (fd >= 0) {
			fdi = (int)n;
			p[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
		k = poll(p, n, (int)ceil(left * 1000));
		if (k < 0)
			return 0;     /* a signal (SIGWINCH, a stop): the caller looks */
		if (k == 0)
			continue;
		if (fdi >= 0 && p[fdi].revents)
			return 1;
		if (lc->pidfd >= 0 && !lc->child_done && p[0].revents) {
			lc->child_done = true;    /* ended: one more frame has its final counts */
			return 0;
		}
	}
}

bool live_cli_reap(struct live_cli *lc)
{
	if (!lc->child_done)
		return false;
	if (lc->child) {
		tacho_child_wait(lc->child, &lc->exit);
		tacho_child_free(lc->child);
		lc->child = NULL;
	}
	return true;
}

int live_cli_status(const struct live_cli *lc)
{
	return lc->argv && lc->child_done ? lc->exit.status : EXIT_OK;
}

const char *live_cli_target(const struct live_cli *lc, char *buf, size_t size)
{
	if (lc->argv)
		snprintf(buf, size, "program '%s'", lc->argv[0]);
	else if (lc->pid)
		snprintf(buf, size, "process %d", (int)lc->pid);
	else if (lc->ncgroups == 1)
		snprintf(buf, size, "cgroup %s", lc->cgroups[0]);
	else if (lc->ncgroups)
		snprintf(buf, size, "%zu cgroups", lc->ncgroups);
	else
		snprintf(buf, size, "%s", lc->view == TACHO_LIVE_MACHINE ? "the whole machine" :
			 lc->view == TACHO_LIVE_CPU ? "every CPU" :
			 lc->view == TACHO_LIVE_PROCESS ? "the busiest processes" :
			 lc->view == TACHO_LIVE_THREAD ? "the busiest threads" : "every cgroup");
	return buf;
}
