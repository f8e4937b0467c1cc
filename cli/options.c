/* options.c - each command's option table made into getopt_long's arguments and into
 * the "options:" block of its help, so that the help cannot drift from the parser (git's
 * parse-options). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/util.h"

/* The left cell of an option's help line: "-e, --event <events>", "    --all". */
static int option_label(const struct cli_cmd *cmd, const struct cli_option *o, char *buf,
			size_t size)
{
	char letter[3] = { '-', o->short_name, '\0' };

	return snprintf(buf, size, "%s%s%s%s%s%s%s", o->short_name ? letter : "",
			o->short_name && o->long_name ? ", " : "",
			!o->short_name && cmd->indent_long ? "    " : "",
			o->long_name ? "--" : "", o->long_name ? o->long_name : "",
			o->arg ? " " : "", o->arg ? o->arg : "");
}

void cli_help_write(const struct cli_cmd *cmd, FILE *f)
{
	fputs(cmd->usage, f);
	if (cmd->options && cmd->options[0].id) {
		fputs("options:\n", f);
		for (const struct cli_option *o = cmd->options; o->id; o++) {
			char label[128];
			int n = option_label(cmd, o, label, sizeof(label)) + 4;
			const char *p = o->help;

			/* the text starts in the help column, or two spaces after a label
			 * too long for it */
			fprintf(f, "    %s%*s", label, n + 2 <= (int)cmd->help_col ?
				(int)cmd->help_col - n : 2, "");
			for (;;) {
				size_t len = strcspn(p, "\n");
				fprintf(f, "%.*s\n", (int)len, p);
				if (!p[len])
					break;
				p += len + 1;
				fprintf(f, "%*s", (int)cmd->help_col, "");
			}
		}
	}
	if (cmd->footer) {
		fputc('\n', f);
		fputs(cmd->footer, f);
	}
}

void cli_args_init(struct cli_args *a, const struct cli_cmd *cmd, int argc, char **argv)
{
	size_t nl = 0, ns = 0, count = 0;

	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	a->argc = argc;
	a->argv = argv;
	/* '+': stop at the first operand (the program to run keeps its own options);
	 * ':': a missing value is told like an unknown option, by cli_bad_option */
	if (cmd->stop_at_operand)
		a->shortopts[ns++] = '+';
	a->shortopts[ns++] = ':';
	for (const struct cli_option *o = cmd->options; o && o->id; o++, count++) {
		/* a table larger than the parser's arrays is a mistake in this program:
		 * say so rather than parse a part of it */
		if (count == CLI_MAX_OPTIONS) {
			fprintf(stderr, "tacho %s: more than %d options in its table\n", cmd->name,
				CLI_MAX_OPTIONS);
			abort();
		}
		if (o->long_name)
			a->longopts[nl++] = (struct option){ o->long_name,
				o->arg ? required_argument : no_argument, NULL, o->id };
		if (o->short_name) {
			a->shortopts[ns++] = o->short_name;
			if (o->arg)
				a->shortopts[ns++] = ':';
		}
	}
	a->shortopts[ns] = '\0';
	optind = 1;
	opterr = 0;     /* cli_bad_option says it once, with the usage */
}

int cli_args_next(struct cli_args *a)
{
	int opt = getopt_long(a->argc, a->argv, a->shortopts, a->longopts, NULL);

	if (opt == -1)
		return 0;
	if (opt == '?' || opt == ':') {
		a->exit = cli_bad_option(a->cmd, a->argc, a->argv);
		return -1;
	}
	if (opt == CLI_OPT_HELP) {
		a->exit = cli_help(a->cmd);
		return -1;
	}
	return opt;
}

const char *cli_option_suggest(const struct cli_cmd *cmd, const char *word, char *buf,
			       size_t size)
{
	struct tc_nearest n;
	const char *found;
	size_t len;

	if (strncmp(word, "--", 2) != 0 || !word[2])
		return NULL;
	word += 2;
	len = strcspn(word, "=");
	tc_nearest_init(&n, word, len);
	for (const struct cli_option *o = cmd->options; o && o->id; o++)
		if (o->long_name)
			tc_nearest_add(&n, o->long_name, strlen(o->long_name));
	found = tc_nearest_get(&n);
	if (found)
		snprintf(buf, size, "--%s", found);
	tc_nearest_exit(&n);
	return found ? buf : NULL;
}
