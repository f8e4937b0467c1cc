/* cli.h - what every subcommand shares: the command table, messages, exit codes. */
#ifndef TACHO_CLI_H
#define TACHO_CLI_H

#include <getopt.h>
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

/* One option of a command. A command's array of them makes both getopt_long's
 * arguments and the "options:" block of its help (options.c), so the help cannot
 * drift from the parser. */
struct cli_option {
	int id;                 /* what cli_args_next returns for it: the short letter, or
				   a value from 256 up for a long-only option; 0 ends the
				   array */
	char short_name;        /* -x, or 0 */
	const char *long_name;  /* --name without the dashes, or NULL */
	const char *arg;        /* its value as the help names it ("<events>"), or NULL when
				   it takes none */
	const char *help;       /* what it does; each '\n' goes on in the help column */
};
#define CLI_OPT_HELP 'h'
#define CLI_OPTION_HELP { CLI_OPT_HELP, 'h', "help", NULL, "this text" }
#define CLI_MAX_OPTIONS 64

struct cli_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;   /* one line for `tacho help` */
	/* `tacho CMD --help` and `tacho help CMD`: usage (its lines up to the first blank
	 * one are what a usage error repeats), "options:" and a line per option, a blank
	 * line and the footer */
	const char *usage;
	const struct cli_option *options;
	unsigned help_col;     /* the column where an option's help starts */
	bool indent_long;      /* a long-only option lines up with the long names after
				  "-x, " (else it starts where the short ones do) */
	bool stop_at_operand;  /* options end at the first operand (the program to run,
				  whose own options are its) */
	const char *footer;
	/* commands of their own under this one's name ("tacho trace report"), each with
	 * its table, NULL-terminated; NULL: none. The manual and the completions (doc.c)
	 * describe them with their parent. */
	const struct cli_cmd *const *subcommands;
};

/* The tacho command itself: its usage and description, the global options (which
 * main matches against this table) and the help's last line. */
extern const struct cli_cmd cli_main;
/* Every subcommand, in the order `tacho help` lists them; NULL ends it. */
extern const struct cli_cmd *const cli_commands[];

/* `tacho --dump-cli WHAT ...`: the manual pages, the bash and zsh completions and the
 * list of options, written from the tables above to stdout (doc.c; the build runs it,
 * docs/packaging.md says how). argv[0] is "--dump-cli". Returns the exit code. */
int cli_doc(int argc, char **argv);

/* Writes the command's whole help text. */
void cli_help_write(const struct cli_cmd *cmd, FILE *f);

/* The parser of one command's options (getopt_long over its table).
 *
 * Every long option without a value (but --help) has a negation: --no-NAME, or NAME
 * for an option called no-NAME (--no-demangle: --demangle), unless the table names
 * that spelling itself. The negation undoes the option: an occurrence of it before
 * its last negation is not returned, so the last of the two wins (--children
 * --no-children: no --children; -v --no-verbose -v: one -v). Commands see only the
 * options that stand; they need no code for negations. */
#define CLI_NEG_NAME_MAX 40
struct cli_args {
	const struct cli_cmd *cmd;
	int argc;
	char **argv;
	struct option longopts[2 * CLI_MAX_OPTIONS + 1];
	char shortopts[2 * CLI_MAX_OPTIONS + 3];
	char neg_names[CLI_MAX_OPTIONS][CLI_NEG_NAME_MAX];
	/* per entry of the table: the ordinal (among all options of argv) of the last
	 * negation of its id, 0 for none */
	unsigned neg_last[CLI_MAX_OPTIONS];
	unsigned seen;         /* options read so far */
	int exit;              /* after -1 from cli_args_next: the command's exit code */
};
void cli_args_init(struct cli_args *a, const struct cli_cmd *cmd, int argc, char **argv);
/* The next option's id (optarg holds its value); 0 when the options end (optind is
 * then the first operand); -1 when the command must end now with a->exit: --help was
 * printed (EXIT_OK) or a bad option was told with the usage (EXIT_USAGE). */
int cli_args_next(struct cli_args *a);
/* The negation of option o of cmd ("no-children", "demangle") into buf; NULL when it
 * has none (it takes a value, has no long name, is --help, or the table names that
 * spelling as an option of its own). For the parser, the help and the manual. */
const char *cli_option_negation(const struct cli_cmd *cmd, const struct cli_option *o,
				char *buf, size_t size);

/* One line per command: `extern const struct cli_cmd cmd_NAME;` defined in cmd-NAME.c,
 * and a row in main.c's table. */
extern const struct cli_cmd cmd_cpu;
extern const struct cli_cmd cmd_cache;
extern const struct cli_cmd cmd_doctor;
extern const struct cli_cmd cmd_list;
extern const struct cli_cmd cmd_stat;
extern const struct cli_cmd cmd_diff;
extern const struct cli_cmd cmd_record;
extern const struct cli_cmd cmd_report;
extern const struct cli_cmd cmd_buildid_cache;
extern const struct cli_cmd cmd_msr;

/* The event-select value perf programs for each event of list on this machine's
 * processor, decoded (cmd-msr.c; for list -v and stat -v). 0 or the error, told. */
int cli_msr_explain_events(const struct tacho_evlist *list, FILE *f);
extern const struct cli_cmd cmd_trace;
extern const struct cli_cmd cmd_top;
extern const struct cli_cmd cmd_serve;
extern const struct cli_cmd cmd_watch;

/* "tacho: MESSAGE" on stderr. Lowercase, no full stop: say what failed, then a hint. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "tacho CMD: MESSAGE" and the command's usage lines to stderr; returns EXIT_USAGE. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints the command's help text to stdout; returns EXIT_OK. */
int cli_help(const struct cli_cmd *cmd);
/* The message for an option getopt rejected (optopt / the argv word): a one-line
 * error and the usage, EXIT_USAGE. cli_args_next calls it. */
int cli_bad_option(const struct cli_cmd *cmd, int argc, char **argv);
/* The long option of cmd nearest to word ("--repat", "--repat=3": "--repeat") into
 * buf, for "did you mean"; NULL when word is no long option or none is near. */
const char *cli_option_suggest(const struct cli_cmd *cmd, const char *word, char *buf,
			       size_t size);

/* A bad event list (-e): "tacho: bad WHAT: MESSAGE", then the list with a caret under
 * the bad character (tacho_diag_caret). Returns EXIT_USAGE. */
int cli_event_error(const char *what, const struct tacho_diag *diag);

/* A recording session (record, trace) that failed with err: the program that could not
 * start (its message; 127 when it was not found, else 126), a bad event (as
 * cli_event_error), or the diagnostic's sentence with its hint (else tacho_strerror):
 * told on stderr; returns the exit status. */
int cli_session_error(int err, const struct tacho_diag *diag, int exec_err);

/* The command's words for a library hint ("see 'tacho doctor'"), NULL for none
 * (hint.c: the one place that names a command for the library). */
const char *cli_hint_text(enum tacho_hint hint);
/* sentence with its hint in those words: inside its closing parenthesis when it ends
 * with one ("(count software events instead; see 'tacho doctor')"), else in
 * parentheses of its own. NULL stays NULL, a sentence without a hint is returned as
 * is; otherwise the result lives in a buffer of the calling thread until its next
 * call. */
const char *cli_hinted(const char *sentence, enum tacho_hint hint);
/* Write options for the library's writers: the defaults, and hints worded by
 * cli_hint_text. */
void cli_write_opts_init(struct tacho_write_opts *wo);

/* Global flags set by main before the command runs. */
extern int cli_verbose;

/* The library's warnings, held back while a command writes a document to
 * standard error that a line there would break (stat --json): cli_log_hold starts
 * keeping them, cli_log_held gives what was kept (valid until the release; messages
 * with their level's word dropped), cli_log_release prints those not taken (taken:
 * the document carried them) and goes back to printing each as it comes. Info and
 * debug lines (-v) are printed as they come meanwhile. Thread-safe. */
void cli_log_hold(void);
const char *const *cli_log_held(size_t *n);
void cli_log_release(bool taken);

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

/* Opens the file of -o (or returns stdout when path is NULL or "-"): a temporary file of
 * mode 0600 beside it, renamed into place by cli_close_output; a symbolic link is
 * refused (docs/security.md). Prints the error. */
FILE *cli_open_output(const char *path);
/* Closes what cli_open_output gave (stdout and stderr are flushed), checking for write
 * errors, and puts the file in place; EXIT_OK or EXIT_FAIL (printed; the file named
 * stays as it was). */
int cli_close_output(FILE *f, const char *path);
/* Drops what cli_open_output gave after a failure: the file named stays as it was. */
void cli_abandon_output(FILE *f);
/* A writer into f failed with err: a write error of the stream (a full disk,
 * /dev/full) is told as cli_close_output tells it, naming the file; anything else as
 * "cannot WHAT: reason". The output is dropped either way; EXIT_FAIL. */
int cli_output_failed(FILE *f, const char *path, int err, const char *what);

#endif
