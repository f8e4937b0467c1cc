/* cli.h - what every subcommand shares: the command table, messages, exit codes. */
#ifndef TACHO_CLI_H
#define TACHO_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "tacho.h"

/* Exit codes of the tacho binary (docs/tacho.md lists them). Commands that run a
 * program (stat, record) exit with the program's status instead when it ran. */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,   /* the command could not do its job; a one-line message says why */
	EXIT_USAGE = 2,  /* unknown command or option, bad argument */
};

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;   /* one line for `tacho help` */
	const char *help;      /* the whole text of `tacho CMD --help` and `tacho help CMD` */
};

/* One line per command: `extern const struct cli_cmd cmd_NAME;` defined in cmd-NAME.c,
 * and a row in main.c's table. */
extern const struct cli_cmd cmd_cpu;
extern const struct cli_cmd cmd_doctor;
extern const struct cli_cmd cmd_list;
extern const struct cli_cmd cmd_stat;
extern const struct cli_cmd cmd_record;
extern const struct cli_cmd cmd_report;

/* "tacho: MESSAGE" on stderr. Lowercase, no full stop: say what failed, then a hint. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "tacho CMD: MESSAGE" and the command's usage lines to stderr; returns EXIT_USAGE. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints the command's help text to stdout; returns EXIT_OK. */
int cli_help(const struct cli_cmd *cmd);
/* The message for an option getopt rejected (optopt / the argv word): a one-line
 * error and the usage, EXIT_USAGE. Call it from the '?' and ':' cases. */
int cli_bad_option(const struct cli_cmd *cmd, int argc, char **argv);

/* A bad event list (-e): "tacho: bad WHAT: MESSAGE", then the list with a caret under
 * the bad character (tacho_diag_caret). Returns EXIT_USAGE. */
int cli_event_error(const char *what, const struct tacho_diag *diag);

/* The command's words for a library hint ("see 'tacho doctor'"), NULL for none
 * (hint.c: the one place that names a command for the library). */
const char *cli_hint_text(enum tacho_hint hint);
/* sentence with its hint in those words: inside its closing parenthesis when it ends
 * with one ("(count software events instead; see 'tacho doctor')"), else in
 * parentheses of its own. NULL stays NULL, a sentence without a hint is returned as
 * is; otherwise the result lives in a buffer of the calling thread until its next
 * call. */
const char *cli_hinted(const char *sentence, enum tacho_hint hint);

/* Global flags set by main before the command runs. */
extern int cli_verbose;

/* SIGINT, SIGTERM and SIGHUP while the library runs a program or counts (stat, record):
 * the handler stores the signal's number in cli_stop_sig, at which the library's
 * opts.stop points, so tacho lives to report what was counted. A handler and not
 * SIG_IGN: exec resets handled signals to their default, so the program still dies of
 * Ctrl-C. catch installs it and saves the old actions; restore puts them back. */
extern volatile sig_atomic_t cli_stop_sig;
struct cli_signals {
	struct sigaction old[3];
};
void cli_stop_signals_catch(struct cli_signals *saved);
void cli_stop_signals_restore(const struct cli_signals *saved);

/* Opens the file of -o (or returns stdout when path is NULL or "-"). Prints the error. */
FILE *cli_open_output(const char *path);
/* Closes what cli_open_output gave, checking for write errors; EXIT_OK or EXIT_FAIL. */
int cli_close_output(FILE *f, const char *path);

#endif
