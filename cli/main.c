/* main.c - the tacho command: global options, the table of subcommands, help. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/util.h"

int cli_verbose;

/* The subcommands, in the order `tacho help` lists them (and the manual, doc.c). */
const struct cli_cmd *const cli_commands[] = {
	&cmd_stat,
	&cmd_diff,
	&cmd_record,
	&cmd_report,
	&cmd_buildid_cache,
	&cmd_trace,
	&cmd_top,
	&cmd_serve,
	&cmd_watch,
	&cmd_list,
	&cmd_cpu,
	&cmd_cache,
	&cmd_doctor,
	&cmd_msr,
	NULL,   /* end */
};

static const char main_usage[] =
	"usage: tacho [--version] [-v | --verbose] [--help] <command> [<args>]\n"
	"\n"
	"tacho measures what the CPU does: it detects the processor, counts and samples\n"
	"its events, times code with the time-stamp counter and says plainly what this\n"
	"machine cannot measure.\n"
	"\n";

/* The global options, before the command's name. The loop in main matches them here,
 * so that the table is what is accepted, and the manual (doc.c) lists it. */
enum { OPT_VERSION = 256 };
static const struct cli_option main_options[] = {
	{ OPT_VERSION, 0, "version", NULL, "print tacho MAJOR.MINOR.PATCH and exit" },
	{ 'v', 'v', "verbose", NULL,
	  "more diagnostics from the library on stderr: -v adds\n"
	  "informational messages, -vv debugging ones; warnings are\n"
	  "always shown" },
	CLI_OPTION_HELP,
	{ 0 },
};

static const char main_footer[] =
	"'tacho help <command>' or 'tacho <command> --help' tells more about one.\n";

const struct cli_cmd cli_main = {
	.name = "tacho",
	.summary = "CPU performance monitoring: count, sample and time what the CPU does",
	.usage = main_usage,
	.options = main_options,
	.help_col = 20,
	.stop_at_operand = true,
	.footer = main_footer,
};

static void print_main_help(FILE *f)
{
	fputs(main_usage, f);
	fputs("commands:\n", f);
	for (size_t i = 0; cli_commands[i]; i++)
		fprintf(f, "   %-10s %s\n", cli_commands[i]->name, cli_commands[i]->summary);
	fputc('\n', f);
	fputs(main_footer, f);
}

static const struct cli_cmd *find_command(const char *name)
{
	for (size_t i = 0; cli_commands[i]; i++)
		if (strcmp(cli_commands[i]->name, name) == 0)
			return cli_commands[i];
	return NULL;
}

/* The command nearest to a word that names none (static storage), or NULL. */
static const char *nearest_command(const char *word)
{
	static char buf[32];
	struct tc_nearest n;
	const char *found;

	tc_nearest_init(&n, word, strlen(word));
	for (size_t i = 0; cli_commands[i]; i++)
		tc_nearest_add(&n, cli_commands[i]->name, strlen(cli_commands[i]->name));
	found = tc_nearest_get(&n);
	if (found)
		snprintf(buf, sizeof(buf), "%s", found);
	tc_nearest_exit(&n);
	return found ? buf : NULL;
}

/* A message names what the user gave (a program, an event spec, a file): its control
 * bytes are shown as \xHH, so that no escape sequence reaches the terminal. */
static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	struct tc_sb sb = TC_SB_INIT;

	tc_sb_init(&sb);
	tc_sb_vaddf(&sb, fmt, ap);
	fputs("tacho: ", stderr);
	if (kind)
		fputs(kind, stderr);
	tc_fputs_printable(sb.oom ? "out of memory" : sb.buf, stderr);
	fputc('\n', stderr);
	tc_sb_exit(&sb);
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
	struct tc_sb sb = TC_SB_INIT;

	tc_sb_init(&sb);
	va_start(ap, fmt);
	tc_sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	fprintf(stderr, "tacho %s: ", cmd->name);
	tc_fputs_printable(sb.oom ? "bad usage" : sb.buf, stderr);   /* as vmsg */
	fputc('\n', stderr);
	tc_sb_exit(&sb);
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
	char near[64];

	if (optopt && optopt != '?' && strchr(word, '=') == NULL && word[0] == '-' && word[1] != '-')
		return cli_usage_error(cmd, "unknown option or missing value: '-%c'", optopt);
	/* --no-X of an option with a value: nothing to undo, say so rather than offer X */
	if (!strncmp(word, "--no-", 5) && !strchr(word, '='))
		for (const struct cli_option *o = cmd->options; o && o->id; o++)
			if (o->long_name && o->arg && !strcmp(o->long_name, word + 5))
				return cli_usage_error(cmd, "unknown option '%s': --%s takes a "
						       "value and has no negation", word,
						       o->long_name);
	if (cli_option_suggest(cmd, word, near, sizeof(near)))
		return cli_usage_error(cmd, "unknown option '%s': did you mean '%s'?", word, near);
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

int cli_session_error(int err, const struct tacho_diag *diag, int exec_err)
{
	if (err == -TACHO_ENOSTART) {
		cli_error("%s", diag->message);
		return exec_err == ENOENT ? 127 : 126;
	}
	if (err == -TACHO_EPARSE || err == -TACHO_ENOEVENT)
		return cli_event_error("event", diag);
	cli_error("%s", diag->message[0] ? cli_hinted(diag->message, diag->hint) :
		  tacho_strerror(err));
	return EXIT_FAIL;
}

/* The one file a command writes with -o: made by lib/util's tc_outfile (mode 0600, a
 * temporary file renamed into place when closed, a link refused). */
static struct tc_outfile cli_out = { .fd = -1 };

static const char *outfile_why(int err)
{
	switch (err) {
	case -ELOOP:
		return "it is a symbolic link, which tacho does not follow (name the file "
		       "itself, or write to standard output with -o -)";
	case -ENXIO:
		return "it is a FIFO that nobody reads";
	case -EPERM:
		return "it is neither a regular file, a device nor a FIFO";
	default:
		return strerror(-err);
	}
}

FILE *cli_open_output(const char *path)
{
	int err;

	if (!path || strcmp(path, "-") == 0)
		return stdout;
	if (cli_out.path) {
		cli_error("cannot write '%s': another output is open", path);
		return NULL;
	}
	err = tc_outfile_open(&cli_out, path, 0);
	if (!err && !tc_outfile_stream(&cli_out)) {
		tc_outfile_abort(&cli_out);
		err = -ENOMEM;
	}
	if (err) {
		cli_error("cannot write '%s': %s", path, outfile_why(err));
		return NULL;
	}
	return cli_out.f;
}

void cli_abandon_output(FILE *f)
{
	if (f && f == cli_out.f)
		tc_outfile_abort(&cli_out);
}

int cli_close_output(FILE *f, const char *path)
{
	static bool told[2];   /* a standard stream's write error, told once */
	int err;

	if (!f)
		return EXIT_OK;
	if (f == stdout || f == stderr) {
		bool *t = &told[f == stderr];

		if (!fflush(f) && !ferror(f))
			return EXIT_OK;
		if (!*t)
			cli_error("write error on standard %s: %s", f == stdout ? "output" : "error",
				  strerror(errno));
		*t = true;
		return EXIT_FAIL;
	}
	if (f != cli_out.f)
		return EXIT_FAIL;
	err = tc_outfile_commit(&cli_out);
	if (err) {
		cli_error("write error on '%s': %s (the file is left as it was)", path,
			  strerror(-err));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int cli_output_failed(FILE *f, const char *path, int err, const char *what)
{
	if (f && ferror(f) && (err == -EIO || err == -ENOSPC || err == -EFBIG || err == -EPIPE)) {
		/* the stream's own error says what failed, the close tells it */
		if (cli_close_output(f, path) == EXIT_OK)
			cli_error("write error on '%s': %s", path ? path : "standard output",
				  tacho_strerror(err));
		return EXIT_FAIL;
	}
	cli_error("cannot %s: %s", what, tacho_strerror(err));
	cli_abandon_output(f);
	return EXIT_FAIL;
}

static const char *const log_level_word[] = { "error: ", "warning: ", "", "debug: " };

static void log_print(enum tacho_log_level level, const char *msg)
{
	fprintf(stderr, "tacho: %s", log_level_word[level <= TACHO_LOG_DEBUG ? level : 3]);
	tc_fputs_printable(msg, stderr);   /* as vmsg: shown, never acted upon */
	fputc('\n', stderr);
}

/* cli_log_hold's messages: their text and level, in the order they came */
static struct {
	pthread_mutex_t lock;
	bool on;
	char **msg;
	enum tacho_log_level *level;
	size_t n;
} held = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void log_to_stderr(void *arg, enum tacho_log_level level, const char *msg)
{
	bool kept = false;

	(void)arg;
	pthread_mutex_lock(&held.lock);
	if (held.on && level == TACHO_LOG_WARN) {
		char **m = realloc(held.msg, (held.n + 1) * sizeof(*m));
		enum tacho_log_level *l = m ? realloc(held.level, (held.n + 1) * sizeof(*l)) : NULL;

		if (m)
			held.msg = m;
		if (l)
			held.level = l;
		/* out of memory: the line is printed, as without a hold */
		if (m && l && (held.msg[held.n] = strdup(msg)) != NULL) {
			held.level[held.n++] = level;
			kept = true;
		}
	}
	pthread_mutex_unlock(&held.lock);
	if (!kept)
		log_print(level, msg);
}

void cli_log_hold(void)
{
	pthread_mutex_lock(&held.lock);
	held.on = true;
	pthread_mutex_unlock(&held.lock);
}

const char *const *cli_log_held(size_t *n)
{
	pthread_mutex_lock(&held.lock);
	*n = held.n;
	pthread_mutex_unlock(&held.lock);
	return (const char *const *)held.msg;
}

void cli_log_release(bool taken)
{
	pthread_mutex_lock(&held.lock);
	for (size_t i = 0; i < held.n; i++) {
		if (!taken)
			log_print(held.level[i], held.msg[i]);
		free(held.msg[i]);
	}
	free(held.msg);
	free(held.level);
	held.msg = NULL;
	held.level = NULL;
	held.n = 0;
	held.on = false;
	pthread_mutex_unlock(&held.lock);
}

/* The global options one word names, into ids: a long option of the table ("--verbose")
 * or a cluster of its short ones ("-vv"). Their number, or 0 when the word names
 * something else. */
static int global_options(const char *word, int *ids, size_t max)
{
	size_t n = 0;

	for (const struct cli_option *o = main_options; o->id; o++) {
		char neg[CLI_NEG_NAME_MAX];

		if (o->long_name && word[1] == '-' && !strcmp(word + 2, o->long_name)) {
			ids[0] = o->id;
			return 1;
		}
		/* --no-verbose: its negation, as every command's options have */
		if (word[1] == '-' && cli_option_negation(&cli_main, o, neg, sizeof(neg)) &&
		    !strcmp(word + 2, neg)) {
			ids[0] = -o->id;
			return 1;
		}
	}
	if (word[1] == '-' || !word[1])
		return 0;
	for (const char *c = word + 1; *c; c++) {
		const struct cli_option *o = main_options;

		while (o->id && o->short_name != *c)
			o++;
		if (!o->id || n == max)
			return 0;
		ids[n++] = o->id;
	}
	return (int)n;
}

int main(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	struct tacho_diag diag = { .sz = sizeof(diag) };
	int i, ret;

	/* Installed setuid or setgid, tacho would run any program and write any file
	 * as its owner for whoever calls it. It serves only a caller who is root anyway;
	 * the way to let others measure is a capability (docs/security.md). */
	if ((geteuid() != getuid() || getegid() != getgid()) && getuid() != 0) {
		cli_error("refusing to run setuid or setgid for user %u: it would run programs "
			  "and write files with privileges that user does not have (give tacho "
			  "the capability instead: setcap cap_perfmon+ep on a copy only trusted "
			  "users can run, or lower kernel.perf_event_paranoid)",
			  (unsigned)getuid());
		return EXIT_FAIL;
	}
	/* the libtacho.so that runs serves the header tacho was built with */
	if (TACHO_CHECK_VERSION(&diag)) {
		cli_error("%s", diag.message);
		return EXIT_FAIL;
	}
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		int ids[8], n;

		/* the build's generator of the manual and the completions (doc.c); not in
		 * the help: nobody types it */
		if (!strcmp(a, "--dump-cli"))
			return cli_doc(argc - i, argv + i);
		n = global_options(a, ids, ARRAY_SIZE(ids));
		if (n <= 0) {
			fprintf(stderr, "tacho: unknown option '%s'\n", a);
			print_usage_lines(&cli_main, stderr);
			return EXIT_USAGE;
		}
		for (int k = 0; k < n; k++) {
			switch (ids[k]) {
			case OPT_VERSION:
				printf("tacho %s\n", tacho_version());
				return cli_close_output(stdout, NULL);
			case CLI_OPT_HELP:
				print_main_help(stdout);
				return cli_close_output(stdout, NULL);
			case 'v':
				cli_verbose++;
				break;
			case -'v':
				cli_verbose = 0;
				break;
			/* --no-version: --version acts where it stands (it prints and
			 * ends), so nothing after it is read and nothing is left to undo */
			case -OPT_VERSION:
				break;
			}
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
			print_usage_lines(&cli_main, stderr);
			return EXIT_USAGE;
		}
		cli_help(cmd);
		return cli_close_output(stdout, NULL);
	}
	cmd = find_command(argv[i]);
	if (!cmd) {
		const char *near = nearest_command(argv[i]);

		if (near)
			fprintf(stderr, "tacho: '%s' is not a tacho command: did you mean '%s'? "
				"(see 'tacho help')\n", argv[i], near);
		else
			fprintf(stderr, "tacho: '%s' is not a tacho command (see 'tacho help')\n",
				argv[i]);
		print_usage_lines(&cli_main, stderr);
		return EXIT_USAGE;
	}
	ret = cmd->fn(argc - i, argv + i);
	if (cli_close_output(stdout, NULL) != EXIT_OK && ret == EXIT_OK)
		ret = EXIT_FAIL;
	return ret;
}
