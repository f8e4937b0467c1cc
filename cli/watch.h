/* watch.h - tacho watch (cmd-watch.c parses, watch-run.c runs and logs): the rules as
 * parsed, and the command's state while it runs. */
#ifndef TACHO_CLI_WATCH_H
#define TACHO_CLI_WATCH_H

#include <stdbool.h>
#include <stdio.h>

#include "live.h"

#define GO_ON (-1)
#define MAX_RULES 8
#define MAX_EXECS 64

struct wrule {
	struct tacho_rule_opts o;
	struct tacho_watch_rule_opts a;   /* its actions: signal, cap, duty */
	bool dir_set;
	const char *exec, *exec_lift;
	char desc[256];
};

struct watch_cli {
	struct live_cli lc;
	struct wrule r[MAX_RULES];
	size_t nr;
	const char *outpath;
	FILE *out;
	struct tacho_watch *w;
	pid_t execs[MAX_EXECS];
	size_t nexecs;
	char target[160];
};

/* After the options and the session's rules: the program started (or the process or
 * cgroup found), the session started on it, frame after frame fed to it, every change
 * logged and its command run, until the program ends or a stop signal comes; then every
 * throttle lifted (logged). Returns GO_ON, or the exit code (the message said). */
int watch_run(struct watch_cli *w, int argc, char **argv);
/* Waits for the commands still running, frees the session. */
void watch_done(struct watch_cli *w);

#endif
