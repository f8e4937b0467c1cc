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

/* One line for the negations the parser accepts (cli_args_init), when there are any:
 * one example of them, the rule, in the help column. */
static void help_negations(const struct cli_cmd *cmd, FILE *f)
{
	for (const struct cli_option *o = cmd->options; o->id; o++) {
		char neg[CLI_NEG_NAME_MAX], label[80];
		int n;

		if (!cli_option_negation(cmd, o, neg, sizeof(neg)))
			continue;
		n = snprintf(label, sizeof(label), "%s--no-<option>",
			     cmd->indent_long ? "    " : "") + 4;
		fprintf(f, "    %s%*sundoes an option without a value (--%s);\n"
			"%*sthe last of the two wins\n", label, n + 2 <= (int)cmd->help_col ?
			(int)cmd->help_col - n : 2, "", neg, (int)cmd->help_col, "");
		return;
	}
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
		help_negations(cmd, f);
	}
	if (cmd->footer) {
		fputc('\n', f);
		fputs(cmd->footer, f);
	}
}

/* getopt_long's value for the negation of the table's entry i: above every id */
#define NEG_ID_BASE 0x10000

const char *cli_option_negation(const struct cli_cmd *cmd, const struct cli_option *o,
				char *buf, size_t size)
{
	int n;

	if (o->arg || !o->long_name || o->id == CLI_OPT_HELP)
		return NULL;
	if (!strncmp(o->long_name, "no-", 3) && o->long_name[3])
		n = snprintf(buf, size, "%s", o->long_name + 3);
	else
		n = snprintf(buf, size, "no-%s", o->long_name);
	/* a name too long for the parser's buffer is a mistake in this program */
	if (n < 0 || (size_t)n >= size) {
		fprintf(stderr, "tacho %s: option '--%s' too long to negate\n", cmd->name,
			o->long_name);
		abort();
	}
	/* the table's own option of that name is what it means (--no-bandwidth and a
	 * --bandwidth beside it would each keep their own sense) */
	for (const struct cli_option *p = cmd->options; p && p->id; p++)
		if (p->long_name && !strcmp(p->long_name, buf))
			return NULL;
	return buf;
}

/* The table's first entry with id (options that share an id are one option). */
static size_t first_entry(const struct cli_cmd *cmd, int id)
{
	size_t i = 0;

	while (cmd->options[i].id && cmd->options[i].id != id)
		i++;
	return i;
}

void cli_args_init(struct cli_args *a, const struct cli_cmd *cmd, int argc, char **argv)
{
	size_t nl = 0, ns = 0, count = 0;
	int opt;

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
		if (cli_option_negation(cmd, o, a->neg_names[count], CLI_NEG_NAME_MAX))
			a->longopts[nl++] = (struct option){ a->neg_names[count], no_argument,
				NULL, NEG_ID_BASE + (int)count };
		if (o->short_name) {
			a->shortopts[ns++] = o->short_name;
			if (o->arg)
				a->shortopts[ns++] = ':';
		}
	}
	a->shortopts[ns] = '\0';
	opterr = 0;     /* cli_bad_option says it once, with the usage */
	/* A first pass finds where each option's last negation stands, so that the
	 * second (cli_args_next) can leave out what it undoes. It stops at a bad word,
	 * which the second pass tells. Both see the same argv in the same order: GNU
	 * getopt's permutation of it is stable. optind = 0 restarts getopt wholly. */
	optind = 0;
	while ((opt = getopt_long(argc, argv, a->shortopts, a->longopts, NULL)) != -1 &&
	       opt != '?' && opt != ':') {
		a->seen++;
		if (opt >= NEG_ID_BASE)
			a->neg_last[first_entry(cmd, cmd->options[opt - NEG_ID_BASE].id)] = a->seen;
	}
	a->seen = 0;
	optind = 0;
}

int cli_args_next(struct cli_args *a)
{
	for (;;) {
		int opt = getopt_long(a->argc, a->argv, a->shortopts, a->longopts, NULL);

		if (opt == -1)
			return 0;
		if (opt == '?' || opt == ':') {
			a->exit = cli_bad_option(a->cmd, a->argc, a->argv);
			return -1;
		}
		a->seen++;
		if (opt >= NEG_ID_BASE)
			continue;
		/* undone by a negation further on */
		if (a->seen < a->neg_last[first_entry(a->cmd, opt)])
			continue;
		if (opt == CLI_OPT_HELP) {
			a->exit = cli_help(a->cmd);
			return -1;
		}
		return opt;
	}
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
	for (const struct cli_option *o = cmd->options; o && o->id; o++) {
		char neg[CLI_NEG_NAME_MAX];
		const char *nn = cli_option_negation(cmd, o, neg, sizeof(neg));

		if (o->long_name)
			tc_nearest_add(&n, o->long_name, strlen(o->long_name));
		if (nn)
			tc_nearest_add(&n, nn, strlen(nn));
	}
	found = tc_nearest_get(&n);
	if (found)
		snprintf(buf, size, "--%s", found);
	tc_nearest_exit(&n);
	return found ? buf : NULL;
}
