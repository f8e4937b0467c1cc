/* live.h - what tacho top, serve and watch share: the target and event options, the
 * program they may start, the sampler on it, and waiting for the next interval. */
#ifndef TACHO_CLI_LIVE_H
#define TACHO_CLI_LIVE_H

#include <stdbool.h>

#include "cli.h"
#include "util/util.h"

#define LIVE_MAX_CGROUPS 16

struct live_cli {
	const struct cli_cmd *cmd;
	/* from the options */
	struct tc_sb events;            /* every -e, comma-joined */
	enum tacho_live_view view;
	bool view_set;
	pid_t pid;
	const char *cgroups[LIVE_MAX_CGROUPS];
	size_t ncgroups;
	unsigned max_rows;
	double interval;                /* seconds */
	char **argv;                    /* the program to start, or NULL */
	char note[320];                 /* why the default events are what they are */
	/* what it made of them */
	struct tacho_evlist *list;
	struct tacho_child *child;
	int pidfd;                      /* the program's, to wait on; -1 */
	bool child_done;
	struct tacho_exit exit;
	struct tacho_live *live;
};

void live_cli_init(struct live_cli *lc, const struct cli_cmd *cmd);
void live_cli_exit(struct live_cli *lc);

/* The options every live command takes: -e, -d, -p, -G, --view, -k. Returns 1 when opt
 * was one of them (GO_ON), EXIT_USAGE for a bad value, 0 when it was not. */
int live_cli_option(struct live_cli *lc, int opt, const char *arg);
#define LIVE_OPT_VIEW 300
/* A number of seconds, at least min: 0 and *out, or EXIT_USAGE (said). */
int live_cli_seconds(const struct cli_cmd *cmd, const char *opt, const char *arg, double min,
		     double *out);

/* After the options: the operands (a program), checks of what goes together, the events
 * (-e, or the default software set with the note why), a program started and held
 * before its exec, the sampler, then the program's exec. Returns -1 to go on, or the
 * exit code (the message said). */
int live_cli_start(struct live_cli *lc, int argc, char **argv);

/* Waits until the monotonic time deadline (seconds), the program's end, or fd (-1:
 * none) readable, whichever comes first; a signal ends the wait too. Returns 1 when
 * fd is readable, 0 otherwise. */
int live_cli_wait(struct live_cli *lc, double deadline, int fd);
/* Reaps the program once it has ended (its frame with the final counts was taken):
 * true when it has. */
bool live_cli_reap(struct live_cli *lc);
/* The exit code after the program: its status, or EXIT_OK without one. */
int live_cli_status(const struct live_cli *lc);

double live_now(void);
/* What is counted, for messages: "process 42", "program 'foo'", "cgroup /x". */
const char *live_cli_target(const struct live_cli *lc, char *buf, size_t size);

#endif
