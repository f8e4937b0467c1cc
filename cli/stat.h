/* stat.h - what tacho stat's two files share: the option table and its parsing
 * (stat-options.c) fill one struct stat_cli, which the running and the writing
 * (cmd-stat.c) take from there. */
#ifndef TACHO_CLI_STAT_H
#define TACHO_CLI_STAT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "push.h"
#include "util/util.h"

#define MAX_GROUPS 16

/* What the command was asked, what it made of it, and what it holds until the end:
 * cmd_stat_fn parses, prepares, counts and prints in phases that share this, and
 * stat_cli_exit releases it all on every path. */
struct stat_cli {
	/* from the options */
	enum tacho_format fmt;
	char sep;
	bool fmt_set;
	const char *outpath;
	const char *cpus_arg;
	bool repeat_given;
	unsigned repeat;
	bool all;
	bool explain;                   /* -v: the event-select value of each event */
	unsigned interval;
	unsigned ntargets;
	char target[64];                /* what is counted, for people ("process 42") */
	pid_t *pids;                    /* -p/-t's ids */
	struct tc_sb events;            /* every -e, comma-joined */
	struct tacho_stat_opts o;
	/* what it made of them */
	struct tacho_pmu_counters pmu;
	struct tacho_evlist *list;
	int *cpus;
	char note[320];                 /* why the default events are what they are */
	FILE *out;                      /* stderr or the -o file */
	bool progress;                  /* a progress line on the terminal */
	struct tacho_write_opts wo;
	bool interval_header_done;
	int exec_err;
	struct tacho_stat *s;
	bool sim;                       /* --sim */
	const char *sim_cpu;            /* --sim-cpu */
	enum tacho_sim_engine engine;   /* --sim-engine */
	bool engine_set;
	unsigned hot;                   /* --sim-hot: places to show, 0 none */
	enum tacho_sim_view hot_view;
	bool mca;                       /* --mca */
	struct tacho_sim_mca *mca_result;
	struct tacho_sim *simulator;
	bool aggr_set;                  /* a breakdown was asked */
	char *cgroup_arg;               /* -G / --for-each-cgroup, split into cgroups */
	char **cgroups;
	int ctl_fds[2];                 /* --control fifo: the fifos tacho opened, or -1 */
	int log_fd;                     /* --log-fd, or -1 */
	bool quiet;                     /* -q */
	bool perf_layout;               /* --perf-layout, -j */
	unsigned timeout_ms;            /* --timeout */
	unsigned interval_count;        /* --interval-count */
	unsigned intervals;             /* intervals printed */
	double progress_t0;             /* when the first run began (progress after 1 s) */
	bool append;                    /* --append */
	const char *pre, *post;         /* --pre, --post */
	bool pre_failed;
	bool progress_shown;
	struct cli_push push;           /* --push, --push-job, --push-label */
	const struct tacho_metric_group *groups[MAX_GROUPS]; /* -M and -d's, each once */
	size_t ngroups;
	bool detailed;                  /* -d */
	bool metric_only;               /* --metric-only */
	bool log_held;                  /* the library's warnings wait for the document */
};

/* A phase that does not end the command returns GO_ON; any other value is the exit
 * code. */
#define GO_ON (-1)

/* The command's usage, option table and help footer (cmd_stat's). */
extern const char stat_usage[];
extern const struct cli_option stat_options[];
extern const char stat_footer[];

/* c with every option at its default and nothing held. */
void stat_cli_init(struct stat_cli *c);
/* Parses the command line into c and checks the options against each other: GO_ON, or
 * the exit code (the message said). */
int stat_parse(struct stat_cli *c, int argc, char **argv);

#endif
