/* main.c - the tacho command: global options, the table of subcommands, help. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/util.h"

int cli_verbose;

/* The subcommands, in the order `tacho help` lists them. */
static const struct cli_cmd *const commands[] = {
	&cmd_stat,
	&cmd_record,
	&cmd_report,
	&cmd_top,
	&cmd_serve,
	&cmd_watch,
	&cmd_list,
	&cmd_cpu,
	&cmd_doctor,
	NULL,   /* end */
};

static const char main_usage[] =
	"usage: tacho [--version] [-v | --verbose] [--help] <command> [<args>]\n";

static void print_main_help(FILE *f)
{
	fputs(main_usage, f);
	fputs("\ntacho measures what the CPU does: it detects the processor, counts and samples\n"
	      "its events, times code with the time-stamp counter and says plainly what this\n"
	      "machine cannot measure.\n\ncommands:\n", f);
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "   %-10s %s\n", commands[i]->name, commands[i]->summary);
	fputs("\n'tacho help <command>' or 'tacho <command> --help' tells more about one.\n", f);
}

static const struct cli_cmd *find_command(const char *name)
{
	for (size_t i = 0; commands[i]; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	fputs("tacho: ", stderr);
	if (kind)
		fputs(kind, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(NULL, fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

/* The usage lines are the help text up to its first blank line. */
static void print_usage_lines(const struct cli_cmd *cmd, FILE *f)
{
	const char *end = strstr(cmd->usage, "\n\n");
	int n = end ? (int)(end - cmd->usage) + 1 : (int)strlen(cmd->usage);

	fprintf(f, "%.*s", n, cmd->usage);
}

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tacho %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_usage_lines(cmd, stderr);
	return EXIT_USAGE;
}

int cli_help(const struct cli_cmd *cmd)
{
	cli_help_write(cmd, stdout);
	return EXIT_OK;
}

int cli_bad_option(const struct cli_cmd *cmd, int argc, char **argv)
{
	const char *word = (optind > 0 && optind <= argc) ? argv[optind - 1] : "?";

	if (optopt && optopt != '?' && strchr(word, '=') == NULL && word[0] == '-' && word[1] != '-')
		return cli_usage_error(cmd, "unknown option or missing value: '-%c'", optopt);
	return cli_usage_error(cmd, "unknown option or missing value: '%s'", word);
}

static const char *hint_words(void *arg, enum tacho_hint hint)
{
	(void)arg;
	return cli_hint_text(hint);
}

void cli_write_opts_init(struct tacho_write_opts *wo)
{
	memset(wo, 0, sizeof(*wo));
	wo->sz = sizeof(*wo);
	wo->hint_words = hint_words;
}

volatile sig_atomic_t cli_stop_sig;

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_stop_signal(int sig)
{
	cli_stop_sig = sig;
}

void cli_stop_signals_catch(struct cli_signals *saved)
{
	struct sigaction sa;

	_Static_assert(ARRAY_SIZE(stop_signals) == ARRAY_SIZE(saved->old), "one slot a signal");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	cli_stop_sig = 0;
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, &saved->old[i]);
}

void cli_stop_signals_restore(const struct cli_signals *saved)
{
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &saved->old[i], NULL);
}

int cli_event_error(const char *what, const struct tacho_diag *diag)
{
	char caret[600];

	cli_error("bad %s: %s", what, cli_hinted(diag->message, diag->hint));
	if (tacho_diag_caret(diag, caret, sizeof(caret)) > 0)
		fputs(caret, stderr);
	return EXIT_USAGE;
}

FILE *cli_open_output(const char *path)
{
	FILE *f;

	if (!path || strcmp(path, "-") == 0)
		return stdout;
	f = fopen(path, "w");
	if (!f)
		cli_error("cannot write '%s': %s", path, strerror(errno));
	return f;
}

int cli_close_output(FILE *f, const char *path)
{
	bool bad;

	if (!f)
		return EXIT_OK;
	if (f == stdout)
		return fflush(f) || ferror(f) ? (cli_error("write error on standard output: %s",
						     strerror(errno)), EXIT_FAIL) : EXIT_OK;
	bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad) {
		cli_error("write error on '%s': %s", path, strerror(errno));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static void log_to_stderr(void *arg, enum tacho_log_level level, const char *msg)
{
	static const char *const names[] = { "error: ", "warning: ", "", "debug: " };

	(void)arg;
	fprintf(stderr, "tacho: %s%s\n", names[level <= TACHO_LOG_DEBUG ? level : 3], msg);
}

int main(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int i, ret;

	/* the libtacho.so that runs serves the header tacho was built with */
	if (TACHO_CHECK_VERSION(&diag)) {
		cli_error("%s", diag.message);
		return EXIT_FAIL;
	}
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--version")) {
			printf("tacho %s\n", tacho_version());
			return cli_close_output(stdout, NULL);
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			print_main_help(stdout);
			return cli_close_output(stdout, NULL);
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			cli_verbose++;
		} else {
			fprintf(stderr, "tacho: unknown option '%s'\n", a);
			fputs(main_usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		print_main_help(stderr);
		return EXIT_USAGE;
	}
	tacho_set_log(log_to_stderr, NULL, cli_verbose >= 2 ? TACHO_LOG_DEBUG :
		      cli_verbose ? TACHO_LOG_INFO : TACHO_LOG_WARN);

	if (!strcmp(argv[i], "help")) {
		if (i + 1 >= argc) {
			print_main_help(stdout);
			return cli_close_output(stdout, NULL);
		}
		cmd = find_command(argv[i + 1]);
		if (!cmd) {
			fprintf(stderr, "tacho: no such command '%s'\n", argv[i + 1]);
			fputs(main_usage, stderr);
			return EXIT_USAGE;
		}
		cli_help(cmd);
		return cli_close_output(stdout, NULL);
	}
	cmd = find_command(argv[i]);
	if (!cmd) {
		fprintf(stderr, "tacho: '%s' is not a tacho command (see 'tacho help')\n", argv[i]);
		fputs(main_usage, stderr);
		return EXIT_USAGE;
	}
	ret = cmd->fn(argc - i, argv + i);
	if (cli_close_output(stdout, NULL) != EXIT_OK && ret == EXIT_OK)
		ret = EXIT_FAIL;
	return ret;
}
